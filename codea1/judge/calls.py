"""Calls with the values they must return: the sandbox runs the calls, the judge compares in this process.

    [res] = run_expecting(executor, [Job("a", "def f(x): return x * 2", ["f(2)"])], [[4]])
    res.results[0].status  # "pass"

A call's "ok" becomes "pass" when its plain value equals the expected one (codea1.judge.equality.
values_equal, with an optional float tolerance), else "fail"; every other status stays as the sandbox gave
it. The expected values never enter the candidate's child.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from codea1.judge.equality import values_equal
from codea1.sandbox.api import Executor, Job, JobResult, OnProgress
from codea1.sandbox.values import from_json, to_json


def tolerance(tol: object) -> float | None:
    """A float tolerance as values_equal needs it: None, or a non-negative finite float (else exact ==)."""
    if tol is None:
        return None
    try:
        tol = float(tol)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return tol if math.isfinite(tol) and tol >= 0 else None


def decide(result: JobResult, expected: Sequence[Any] | None, float_tol: float | None = None) -> JobResult:
    """Turns each "ok" of `result` into "pass"/"fail" against `expected` (one plain value per call; None:
    leave the result as it is). Total: a comparison that fails is that call's verdict."""
    if expected is None or not result.defined:
        return result
    try:
        expected = list(expected)
    except Exception as exc:  # noqa: BLE001  (a verdict step that fails is that call's verdict)
        expected, why = [], f"expected values unusable: {type(exc).__name__}"
    else:
        why = "no expected value for this call"
    tol = tolerance(float_tol)
    for i, r in enumerate(result.results):
        if r.status != "ok":
            continue
        if i >= len(expected):
            r.status, r.error = "invalid", why
            continue
        try:
            # the expected value as plain data too (e.g. a numpy scalar becomes its Python value)
            ok = values_equal(r.value, from_json(to_json(expected[i])), tol)
            r.status = "pass" if ok else "fail"
        except Exception as exc:  # noqa: BLE001
            r.status, r.error = "fail", f"could not compare: {type(exc).__name__}"[:300]
    return result


def run_expecting(
    executor: Executor,
    jobs: Sequence[Job],
    expected: Sequence[Sequence[Any] | None],
    float_tol: float | None = None,
    progress: OnProgress = None,
) -> list[JobResult]:
    """Runs the jobs and decides each call against its expected value (expected[n] for jobs[n]), each job
    as it ends."""
    if len(expected) != len(jobs):
        raise ValueError(f"run_expecting: {len(jobs)} jobs but {len(expected)} lists of expected values")
    expected = list(expected)
    return executor.run(list(jobs), progress=progress, then=lambda n, res: decide(res, expected[n], float_tol))
