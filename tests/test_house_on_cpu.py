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


def test_the_floor_check_sees_an_upward_import_and_a_cycle(tmp_path):
    house = _house()
    assert (
        house.floor("codea1.sandbox.executor") < house.floor("codea1.judge.oracle") < house.floor("codea1.train.loop")
    )
    assert house.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    tree = __import__("ast").parse(
        "from codea1.train.loop import Trainer\ndef f():\n    from codea1.judge import holds\n"
    )
    found = house.imports(tree, "codea1.sandbox.executor", False)
    assert [(names[0], local) for names, local, _ in found] == [("codea1.train.loop", False), ("codea1.judge", True)]
