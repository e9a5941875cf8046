"""The house rules CI enforces: lint and formatting (ruff, the pinned version of the dev extra), and an
import graph without cycles whose arrows never run up the floors (scripts/house_counts.py)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ["codea1", "tests", "benchmarks", "scripts"]

needs_ruff = pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *SOURCES], check=False, cwd=ROOT, capture_output=True, text=True
    )


@needs_ruff
def test_the_code_passes_ruff_check():
    res = _ruff("check", "--no-cache")
    assert res.returncode == 0, res.stdout + res.stderr


@needs_ruff
def test_the_code_is_formatted_by_ruff_format():
    res = _ruff("format", "--check", "--no-cache")
    assert res.returncode == 0, "run `ruff format codea1 tests benchmarks scripts`:\n" + res.stdout + res.stderr


def _house():
    spec = importlib.util.spec_from_file_location("house_counts", ROOT / "scripts" / "house_counts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_import_runs_from_a_lower_floor_to_a_higher_one_and_none_is_a_cycle():
    counts = _house().collect()
    assert counts["upward"] == [], counts["upward"]
    assert counts["cycles"] == [], counts["cycles"]


def test_sandbox_jobs_are_built_only_in_the_judge_and_the_sandbox():
    """What a job runs is said by codea1.judge (what a test means) and codea1.sandbox (programs on stdin):
    no other module builds a job; it asks one of them for it."""
    house = _house()
    assert house.collect()["job_builders"] == []
    parse = __import__("ast").parse
    assert house.builds_jobs(parse("from codea1.sandbox import Job\ndef f():\n    return [Job('x', '', [])]\n"))
    assert house.builds_jobs(parse("from codea1 import sandbox\nsandbox.Job(id='x', code='', calls=[])\n"))
    assert not house.builds_jobs(parse("from codea1.sandbox import JobResult\nJobResult('x', True, None)\n"))


def test_no_method_name_is_compared_outside_the_method_registry():
    """A method is one object: code asks its properties (codea1.method_traits, codea1.train.methods.METHODS),
    and no module but those two compares a method's name (`cfg.method == "golden"`)."""
    house = _house()
    assert house.method_names() == {"a1", "golden", "selfplay"}
    assert house.collect()["method_compares"] == []
    parse, names = __import__("ast").parse, house.method_names()
    source = (
        'if cfg.method != "a1":\n    pass\nx = m in ("golden", "selfplay")\nmatch m:\n    case "a1":\n        pass\n'
    )
    assert house.method_name_compares(parse(source), names) == [1, 3, 5]
    assert house.method_name_compares(parse('if role == "test" and reward == A1:\n    pass\n'), names) == []


def test_no_function_is_over_80_lines():
    """A function a reader holds in one screen: split one that grows past 80 lines (docstring included)."""
    assert _house().collect()["long80"] == []


def test_the_floor_check_sees_an_upward_import_and_a_cycle(tmp_path):
    house = _house()
    assert (
        house.floor("codea1.sandbox.executor") < house.floor("codea1.judge.oracle") < house.floor("codea1.train.loop")
    )
    assert house.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    tree = __import__("ast").parse(
        "from codea1.train.loop import Trainer\ndef f():\n    from codea1.judge import holds\n"
    )
    upward: list[str] = []
    house._edge("codea1.rl.policy", "codea1.sandbox.executor", False, 7, [], {}, upward)  # lower, but never
    assert upward == ["codea1.rl.policy:7 -> codea1.sandbox.executor (never)"]
    assert not any(prefix == "codea1.data.problem" for prefix, _ in house.FLOORS)  # no hand-made floor
    found = house.imports(tree, "codea1.sandbox.executor", False)
    assert [(names[0], local) for names, local, _ in found] == [("codea1.train.loop", False), ("codea1.judge", True)]


# -- the docs: every relative link lands on a file the repository holds ---------------------------------

_LINK = __import__("re").compile(r"\]\(([^)\s]+)\)")


def _tracked() -> set[str] | None:
    """The repository's files as git has them (an ignored file is on disk but in no clone), or None
    outside a git checkout."""
    res = subprocess.run(["git", "ls-files", "-z"], check=False, cwd=ROOT, capture_output=True, text=True)
    return set(res.stdout.split("\0")) - {""} if res.returncode == 0 else None


def broken_links(markdown: Path, root: Path, tracked: set[str] | None) -> list[str]:
    """Relative links of one markdown file whose target is neither a tracked file nor a folder of them
    (outside git: a path on disk)."""
    broken = []
    for target in _LINK.findall(markdown.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if not path or "://" in path or path.startswith("mailto:"):
            continue
        resolved = (markdown.parent / path).resolve()
        if not resolved.is_relative_to(root):
            broken.append(f"{target} (outside the repository)")
            continue
        rel = resolved.relative_to(root).as_posix()
        if tracked is None:
            ok = resolved.exists()
        else:
            ok = rel in tracked or any(name.startswith(rel + "/") for name in tracked)
        if not ok:
            broken.append(target)
    return broken


def test_every_relative_link_in_the_docs_lands_on_a_file_of_the_repository():
    tracked = _tracked()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = {str(p.relative_to(ROOT)): b for p in pages if (b := broken_links(p, ROOT, tracked))}
    assert broken == {}, broken


def test_the_link_check_sees_an_untracked_a_missing_and_an_outside_target(tmp_path):
    (tmp_path / "docs" / "results" / "x" / "runs").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "x" / "runs" / "m.jsonl").write_text("{}", encoding="utf-8")  # on disk, ignored
    (tmp_path / "docs" / "algorithm.md").write_text("", encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "[a](results/x/runs/m.jsonl) [b](algorithm.md#top) [c](https://example.org) [d](#top) [e](results) "
        "[f](gone.md) [g](../../elsewhere.md)",
        encoding="utf-8",
    )
    tracked = {"docs/algorithm.md", "docs/results/x/summary.json"}
    assert broken_links(page, tmp_path, tracked) == [
        "results/x/runs/m.jsonl",
        "gone.md",
        "../../elsewhere.md (outside the repository)",
    ]
    assert broken_links(page, tmp_path, None) == ["gone.md", "../../elsewhere.md (outside the repository)"]
