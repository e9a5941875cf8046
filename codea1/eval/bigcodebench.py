"""BigCodeBench scored in the sandbox (tasks loaded by codea1.data.bigcodebench).

The benchmark's own evaluator runs a task's `TestCases` with unittest in the candidate's process and reads
unittest's result object; here each test method is one call of a sandbox job, and the parent decides.
The harness and the verdict: codea1.judge.formats.bigcodebench.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codea1.eval.code_eval import sample_records, summarize
from codea1.judge.formats.bigcodebench import candidate_program, job_for, outcomes, test_methods, verdict
from codea1.problem import Problem
from codea1.sandbox.api import Executor

DEFAULT_TEST_TIMEOUT = 20.0  # seconds per test method (BigCodeBench's tests use pandas, files, mocks)


@dataclass
class BCBTask:
    """A task ready for scoring: its test methods, the canonical solution's outcomes, or why excluded."""

    task_id: str
    problem: Problem
    methods: list[str]
    gt_outcomes: list[str]
    excluded: bool = False
    reason: str = ""


def prepare_bigcodebench(
    problems: list[Problem],
    executor: Executor,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
    progress: Callable[[int, int], None] | None = None,
) -> list[BCBTask]:
    """Runs every canonical solution; a task whose canonical solution does not pass is excluded."""
    tasks = [BCBTask(p.id, p, test_methods(p.test_code), []) for p in problems]
    jobs, owners = [], []
    for t in tasks:
        if not t.methods:
            t.excluded, t.reason = True, "no test methods in TestCases"
            continue
        jobs.append(job_for(f"gt:{t.task_id}", t.problem, t.problem.gt_solution, t.methods, timeout))
        owners.append(t)
    for t, res in zip(owners, executor.run(jobs, progress), strict=True):
        t.gt_outcomes = outcomes(res, len(t.methods))
        bad = [(m, o) for m, o in zip(t.methods, t.gt_outcomes, strict=True) if o not in ("passed", "skipped")]
        if bad or not res.defined:
            t.excluded = True
            first = f"{bad[0][0]}: {bad[0][1]}" if bad else "undefined"
            t.reason = f"canonical solution does not pass here ({first}; {res.error or ''})".strip()[:300]
    return tasks


def score_bigcodebench(
    tasks: list[BCBTask],
    samples: list[tuple[str, str]],
    executor: Executor,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
    progress: Callable[[int, int], None] | None = None,
) -> list[Any]:
    """Verdicts (code_eval.SampleResult) for (task_id, solution) pairs, in input order."""

    records = sample_records(tasks, samples)
    owners = [(task, res) for res, task in records if task is not None]
    jobs = [
        job_for(
            f"{task.task_id}#{res.index}",
            task.problem,
            candidate_program(task.problem, res.solution),
            task.methods,
            timeout,
        )
        for task, res in owners
    ]
    for (task, res), out in zip(owners, executor.run(jobs, progress), strict=True):
        got = outcomes(out, len(task.methods))
        passed, first = verdict(got, task.gt_outcomes)
        res.passed = passed
        if passed:
            res.status = "pass"
        elif not out.defined:
            res.status, res.error = "undefined", (out.error or "")[:300]
        else:
            res.failed_input = first
            res.status = {"failed": "fail", "errored": "error", "skipped": "fail"}.get(got[first], got[first])
            res.error = f"{task.methods[first]}: {got[first]}"
    return [res for res, _ in records]


def evaluate_bigcodebench(
    problems: list[Problem],
    samples: list[tuple[str, str]],
    executor: Executor,
    ks: list[int] | None = None,
    progress_prepare: Callable | None = None,
    progress_score: Callable | None = None,
    *,
    timeout: float = DEFAULT_TEST_TIMEOUT,
) -> tuple[dict[str, Any], list[Any], list[BCBTask]]:
    """prepare + score + summarize (the same summary as the other code benchmarks)."""

    t0 = time.monotonic()
    tasks = prepare_bigcodebench(problems, executor, timeout=timeout, progress=progress_prepare)
    t1 = time.monotonic()
    results = score_bigcodebench(tasks, samples, executor, timeout=timeout, progress=progress_score)
    t2 = time.monotonic()
    summary = summarize(tasks, results, ks)  # type: ignore[arg-type]
    summary["seconds"] = {"prepare": round(t1 - t0, 2), "score": round(t2 - t1, 2)}
    return summary, results, tasks
