"""Test-time collaboration: the Code LLM's n solutions, ranked by the Test LLM's valid tests.

Per task, the test policy's tests are validated against GT (an assert that holds on GT is valid); each
solution runs on the valid tests in the sandbox; the solution passing most of them is picked (ties: the
first). Reported: pass@1 of the picked solution (per the benchmark's own tests) vs plain pass@1 (the
mean over all n solutions), and how many tasks had any valid test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from codea1.eval.code_eval import PreparedTask, score_solutions
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.sandbox.api import Executor


@dataclass
class CollabRecord:
    task_id: str
    valid_tests: int
    passes: list[int]  # valid tests passed by each solution
    picked: int
    picked_correct: bool
    correct: list[bool]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pick_index(passes: list[int]) -> int:
    """Index of the solution passing most tests; ties go to the first."""
    best = 0
    for i, p in enumerate(passes):
        if p > passes[best]:
            best = i
    return best


def collaborate(
    tasks: list[PreparedTask],
    solutions: dict[str, list[str]],
    tests: dict[str, list[str]],
    executor: Executor,
    timeout: float = 2.0,
) -> tuple[dict[str, Any], list[CollabRecord]]:
    """Picks one solution per (non-excluded) task with the tests; returns (summary, records)."""
    live = [t for t in tasks if not t.excluded and solutions.get(t.task_id)]
    valid = _valid_tests(live, tests, executor, timeout)
    passes = _tests_passed(live, solutions, valid, executor, timeout)
    verdicts = score_solutions(tasks, [(t.task_id, code) for t in live for code in solutions[t.task_id]], executor)
    correct: dict[str, list[bool]] = {}
    for v in verdicts:
        correct.setdefault(v.task_id, []).append(v.passed)
    records = []
    for t in live:
        p = passes.get(t.task_id, [])
        idx = pick_index(p) if p else 0
        c = correct.get(t.task_id, [])
        records.append(
            CollabRecord(
                task_id=t.task_id,
                valid_tests=len(valid[t.task_id]),
                passes=p,
                picked=idx,
                picked_correct=bool(c and c[idx]),
                correct=c,
            )
        )
    n = len(records)
    summary = {
        "pass@1_picked": sum(r.picked_correct for r in records) / n if n else 0.0,
        "pass@1_plain": sum(sum(r.correct) / len(r.correct) for r in records if r.correct) / n if n else 0.0,
        "scored_tasks": n,
        "tasks_with_valid_tests": sum(r.valid_tests > 0 for r in records),
        "excluded": sorted(t.task_id for t in tasks if t.excluded),
    }
    return summary, records


def _case(t: PreparedTask, code: str, tests: list[str]) -> AssertCase:
    return AssertCase(
        code=t.program(code),
        tests=tests,
        entry_point=t.problem.entry_point,
        oracle=t.program(t.problem.gt_solution),
        id=t.task_id,
    )


def _valid_tests(
    live: list[PreparedTask], tests: dict[str, list[str]], executor: Executor, timeout: float
) -> dict[str, list[str]]:
    """Each task's tests that pass on its ground truth."""
    gt_runs = run_assertions(
        executor, [_case(t, t.problem.gt_solution, tests.get(t.task_id, [])) for t in live], timeout=timeout
    )
    valid: dict[str, list[str]] = {}
    for t, res in zip(live, gt_runs, strict=True):
        stmts = tests.get(t.task_id, [])
        valid[t.task_id] = (
            [s for s, r in zip(stmts, res.results, strict=False) if r.status == "pass"] if res.defined else []
        )
    return valid


def _tests_passed(
    live: list[PreparedTask],
    solutions: dict[str, list[str]],
    valid: dict[str, list[str]],
    executor: Executor,
    timeout: float,
) -> dict[str, list[int]]:
    """For each task, how many of its valid tests each of its solutions passes, in the solutions' order."""
    items = [_case(t, code, valid[t.task_id]) for t in live for code in solutions[t.task_id]]
    owners = [t.task_id for t in live for _ in solutions[t.task_id]]
    runs = run_assertions(executor, items, timeout=timeout) if items else []
    passes: dict[str, list[int]] = {}
    for owner, res in zip(owners, runs, strict=True):
        passes.setdefault(owner, []).append(sum(r.status == "pass" for r in res.results) if res.defined else 0)
    return passes
