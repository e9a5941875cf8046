"""The bundled stdin/stdout problem set (codea1/data/bundled/stdio.jsonl) and its build script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from codea1.data.bundled_stdio import load_bundled_stdio
from codea1.errors import UserError
from codea1.problem import Problem, jsonl_rows

REPO = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = REPO / "scripts" / "build_bundled_stdio.py"


def _number(problem: Problem) -> int:
    return int(problem.id.rsplit("/", 1)[1])


def test_counts_ids_and_languages():
    python = load_bundled_stdio(language="python")
    cpp = load_bundled_stdio(language="cpp")
    assert len(python) >= 44
    assert len(cpp) >= 12
    assert [p.id for p in python] == [f"bundled-stdio/{i:04d}" for i in range(len(python))]
    everything = load_bundled_stdio()
    assert len(everything) == len(python) + len(cpp)
    assert len({p.id for p in everything}) == len(everything)
    by_number = {_number(p): p for p in python}
    for problem in cpp:
        assert problem.id.startswith("bundled-stdio-cpp/")
        twin = by_number[_number(problem)]
        assert problem.io_tests == twin.io_tests
        assert (problem.split, problem.difficulty, problem.description) == (
            twin.split,
            twin.difficulty,
            twin.description,
        )
        assert problem.gt_solution != twin.gt_solution and "int main" in problem.gt_solution


def test_every_record_is_valid_and_shaped_as_a_stdio_problem():
    with resources.as_file(resources.files("codea1.data") / "bundled" / "stdio.jsonl") as path:
        rows = [row for _, row in jsonl_rows(path.read_text(encoding="utf-8"), path)]
    assert rows
    for row in rows:
        problem = Problem.from_dict(row, row["id"])
        assert problem.to_dict() == row
        assert problem.is_stdio and problem.entry_point == "" and problem.checker == ""
        assert problem.language in ("python", "cpp")
        assert problem.source == "bundled-stdio"
        assert problem.meta == {"public_tests": 1}
        assert len(problem.io_tests) >= 5
        assert problem.gt_solution.strip()
        assert problem.prompt == problem.description  # the code prompt adds the language (game.prompts)
        assert "Input" in problem.description and "Output" in problem.description
        json.dumps(row, ensure_ascii=False)


def test_public_example_is_in_the_statement():
    for problem in load_bundled_stdio():
        example = problem.io_tests[0]
        assert f"Input:\n```\n{example['input']}```" in problem.description, problem.id
        assert f"Output:\n```\n{example['output']}```" in problem.description, problem.id


def test_split_rule_and_difficulty_order():
    problems = load_bundled_stdio()
    for problem in problems:
        assert problem.split == ("eval" if _number(problem) % 2 else "train"), problem.id
    python = load_bundled_stdio(language="python")
    order = {"easy": 0, "medium": 1, "hard": 2}
    levels = [order[p.difficulty] for p in python]
    assert levels == sorted(levels) and set(levels) == {0, 1, 2}
    assert {p.id for p in load_bundled_stdio("train")} | {p.id for p in load_bundled_stdio("eval")} == {
        p.id for p in problems
    }
    assert all(p.language == "cpp" and p.split == "eval" for p in load_bundled_stdio("eval", "cpp"))


def test_unknown_split_or_language_is_a_user_error():
    with pytest.raises(UserError, match="split"):
        load_bundled_stdio("test")
    with pytest.raises(UserError, match="language"):
        load_bundled_stdio(language="java")


@pytest.mark.skipif(not BUILD_SCRIPT.is_file(), reason="build script not in this checkout")
def test_jsonl_matches_its_build_script():
    """The build reruns every GT (and, where g++ is found, compiles the C++ GTs and compares their output
    with the Python GTs') and must reproduce the shipped file byte for byte."""
    has_gpp = shutil.which("g++") is not None
    argv = [sys.executable, str(BUILD_SCRIPT), "--check", *([] if has_gpp else ["--skip-cpp"])]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("up to date:")
    if not has_gpp:
        pytest.skip("g++ is not installed: the C++ GTs were not compiled and cross-checked")
