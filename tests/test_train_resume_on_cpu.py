"""Exact resume after SIGKILL: same step count and same Mistake Book as an uninterrupted run.

Each run is a forked child of the test process (no interpreter start per run); the loop kills itself
with SIGKILL at a deterministic point set by CODEA1_DEBUG_KILL_AT=<phase>:<step>, then a fresh child
resumes the run directory. The Mistake Book is compared through its deterministic listing (every test
with its frequency and first step) and its per-step log (added/removed/size).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from pathlib import Path

import pytest
from train_scripted import scripted_factory

from codea1.config import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
STEPS = 5
OVERRIDES = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=6",
    "train.checkpoint_every=2",
    "train.keep_checkpoints=2",
    "train.progress=false",
    "game.tests_per_suite=4",
    "train.max_steps=5",
]

KILL_POINTS_ALL = [
    "gen_code:1",  # before any checkpoint: resume starts from scratch
    "gen_tests:2",
    "execute:3",  # after a checkpoint, before the book update
    "book:3",  # the book holds step 3, the checkpoint is step 2: rollback needed
    "learn_code:4",
    "learn_test:4",  # code policy updated in memory, test policy not yet
    "rollouts:5",
    "metrics:3",  # metrics of step 3 written, then dropped and re-run on resume
    "checkpoint:4",  # in the middle of writing checkpoint 4: a .tmp folder is left
    "after_checkpoint:2",  # checkpoint complete, older ones not yet pruned
]
KILL_POINTS_FAST = ["book:3", "checkpoint:4"]


def _child(run_dir: Path, resume: bool, kill_at: str | None, extra: tuple[str, ...] = ()) -> int:
    """Runs the training in a forked child; returns its wait status decoded (-signal or exit code)."""
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            if kill_at:
                os.environ["CODEA1_DEBUG_KILL_AT"] = kill_at
            else:
                os.environ.pop("CODEA1_DEBUG_KILL_AT", None)
            from codea1.data import load_problems
            from codea1.train.loop import train

            cfg = (
                load_config(run_dir / "config.yaml")
                if resume
                else load_config(CONFIGS / "tiny-cpu.yaml", [*OVERRIDES, *extra])
            )
            train(
                cfg,
                run_dir,
                resume=resume,
                policy_factory=scripted_factory(load_problems(cfg.data.train)),
                progress=False,
            )
            code = 0
        except BaseException:  # noqa: BLE001  (a forked child must never return into pytest)
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + 300
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("training child did not finish in 300 s")
        time.sleep(0.05)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _fingerprint(run_dir: Path) -> dict:
    from codea1.game.mistake_book import MistakeBook
    from codea1.train.metrics import read_metrics

    with MistakeBook(run_dir / "mistake_book.sqlite") as book:
        book_text = book.show()
        steps = book.step_log()
    rows = read_metrics(run_dir / "metrics.jsonl")
    keys = (
        "step",
        "mistake_book_size",
        "mistake_book_added",
        "mistake_book_removed",
        "code_reward",
        "test_reward",
        "code_loss",
        "code_kl",
        "test_loss",
        "test_kl",
    )
    return {"book": book_text, "book_steps": steps, "metrics": [{k: r.get(k) for k in keys} for r in rows]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    run_dir = tmp_path_factory.mktemp("reference") / "run"
    assert _child(run_dir, resume=False, kill_at=None) == 0
    fp = _fingerprint(run_dir)
    assert [m["step"] for m in fp["metrics"]] == list(range(1, STEPS + 1))
    assert fp["book_steps"][-1]["size"] > 0, "the scripted run must fill the Mistake Book"
    return fp


def _kill_and_resume(kill_at: str, tmp_path: Path, reference: dict) -> None:
    run_dir = tmp_path / "run"
    assert _child(run_dir, resume=False, kill_at=kill_at) == -signal.SIGKILL, f"no kill at {kill_at}"
    assert _child(run_dir, resume=True, kill_at=None) == 0
    got = _fingerprint(run_dir)
    assert got["metrics"] == reference["metrics"], kill_at
    assert got["book_steps"] == reference["book_steps"], kill_at
    assert got["book"] == reference["book"], kill_at
    names = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert names == ["step_000004", "step_000005"]


@pytest.mark.parametrize("kill_at", KILL_POINTS_FAST)
def test_resume_after_sigkill_matches_uninterrupted_run(kill_at: str, tmp_path: Path, reference: dict) -> None:
    _kill_and_resume(kill_at, tmp_path, reference)


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [k for k in KILL_POINTS_ALL if k not in KILL_POINTS_FAST])
def test_resume_after_sigkill_all_points(kill_at: str, tmp_path: Path, reference: dict) -> None:
    _kill_and_resume(kill_at, tmp_path, reference)


STDIO = ("data.train=bundled-stdio:train",)


def test_a_stdio_run_resumes_exactly_after_sigkill(tmp_path: Path) -> None:
    """The game on stdin/stdout problems (inputs, GT's outputs, the Mistake Book of inputs) resumes as
    function problems do: killed between the book update and the checkpoint, then resumed, the run's
    metrics and book equal an uninterrupted run's."""
    whole = tmp_path / "whole"
    assert _child(whole, resume=False, kill_at=None, extra=STDIO) == 0
    reference = _fingerprint(whole)
    assert reference["book_steps"][-1]["size"] > 0, "the scripted stdio run must fill the Mistake Book"
    assert any(m["code_reward"] for m in reference["metrics"])
    killed_and_resumed_as(tmp_path / "run", "book:3", STDIO, reference)


def killed_and_resumed_as(run_dir: Path, kill_at: str, extra: tuple[str, ...], reference: dict) -> None:
    """A run killed at `kill_at` (SIGKILL), then resumed, ends with the metrics and Mistake Book of
    `reference` (an uninterrupted run's _fingerprint)."""
    assert _child(run_dir, resume=False, kill_at=kill_at, extra=extra) == -signal.SIGKILL
    assert _child(run_dir, resume=True, kill_at=None) == 0
    got = _fingerprint(run_dir)
    assert (got["metrics"], got["book_steps"], got["book"]) == (
        reference["metrics"],
        reference["book_steps"],
        reference["book"],
    ), kill_at
