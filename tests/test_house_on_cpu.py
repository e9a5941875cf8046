"""The house rules CI enforces: lint and formatting (ruff, the pinned version of the dev extra)."""

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
