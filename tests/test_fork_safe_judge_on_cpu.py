"""A process forked after the process-wide judge (and its sandbox) exists, as verl's reward workers and
Python's multiprocessing fork are, scores with a sandbox of its own instead of hanging on its parent's."""

from __future__ import annotations

import multiprocessing
import os
import warnings

import pytest

from codea1.problem import Problem
from codea1.sandbox.api import Job, SandboxError

ADD = Problem(
    id="fork/add",
    prompt="Write add(a, b).",
    description="add two numbers",
    entry_point="add",
    gt_solution="def add(a, b):\n    return a + b\n",
    golden_tests=["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
)
RIGHT = "```python\ndef add(a, b):\n    return a + b\n```"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"
CHILD_LIMIT = 120  # seconds the forked child may take (it starts its own sandbox); it hangs without the fix


def _score_in_child(results) -> None:
    from codea1.integrations import judge as judge_module
    from codea1.integrations.verl import compute_score_batch

    try:
        out = compute_score_batch(["codea1"] * 2, [RIGHT, WRONG], ["fork/add"] * 2)  # the id: known from the parent
        results.put(("ok", [o["score"] for o in out], judge_module.default_judge().executor.owner_pid == os.getpid()))
    except BaseException as exc:  # noqa: BLE001  (the parent reports whatever the child met)
        results.put(("error", f"{type(exc).__name__}: {exc}", False))
    finally:
        judge_module.default_judge().close()  # the child's own sandbox


@pytest.fixture
def parent_judge(monkeypatch):
    from codea1.integrations import judge as judge_module

    monkeypatch.setattr(judge_module, "_DEFAULT", None)
    monkeypatch.setenv("CODEA1_SANDBOX_ISOLATION", "available")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        judge = judge_module.default_judge()
        judge.add([ADD])
        yield judge
    judge.close()


def test_compute_score_batch_in_a_child_forked_after_the_judge_was_used(parent_judge) -> None:
    from codea1.integrations.verl import compute_score_batch

    assert [o["score"] for o in compute_score_batch(["codea1"] * 2, [RIGHT, WRONG], ["fork/add"] * 2)] == [1.0, 0.0]
    parent_executor = parent_judge.executor
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    child = ctx.Process(target=_score_in_child, args=(results,))
    child.start()
    child.join(CHILD_LIMIT)
    hung = child.is_alive()
    if hung:
        child.kill()
        child.join()
    assert not hung, "compute_score_batch in a forked child never returned"
    status, scores, own = results.get(timeout=10)
    assert status == "ok", scores
    assert scores == [1.0, 0.0] and own  # right verdicts, from a sandbox the child built
    assert parent_judge.executor is parent_executor  # the parent's sandbox is untouched and still works
    assert [o["score"] for o in compute_score_batch(["codea1"], [RIGHT], ["fork/add"])] == [1.0]


def _run_foreign(executor, results) -> None:
    try:
        executor.run([Job(id="j", code="x = 1", calls=["x"])])
        results.put("ran")
    except SandboxError as exc:
        results.put(str(exc))


def test_a_forked_child_refuses_its_parents_executor_in_one_sentence() -> None:
    from conftest import quiet_executor

    with quiet_executor(1_702_300_000, workers=1) as ex:
        ctx = multiprocessing.get_context("fork")
        results = ctx.Queue()
        child = ctx.Process(target=_run_foreign, args=(ex, results))
        child.start()
        child.join(60)
        hung = child.is_alive()
        if hung:
            child.kill()
            child.join()
        assert not hung, "a forked child hung on its parent's executor"
        message = results.get(timeout=10)
        assert "forked" in message and str(os.getpid()) in message
        [res] = ex.run([Job(id="j", code="x = 1", calls=["x"])])  # and it still serves its own process
        assert res.defined and res.results[0].value == 1
