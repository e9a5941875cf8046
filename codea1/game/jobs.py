"""Running a stage's sandbox jobs: one `Executor.run` call per stage for all questions of a round."""

from __future__ import annotations

from collections.abc import Sequence

from codea1.sandbox import Job, JobResult, OnProgress
from codea1.sandbox.api import Executor, Then


def unique(items: Sequence[str]) -> list[str]:
    """The items in first-seen order, each once."""
    return list(dict.fromkeys(items))


def run_jobs(executor: Executor, jobs: list[Job], progress: OnProgress, then: Then = None) -> list[JobResult]:
    """`executor.run(jobs)` with the progress callback and the per-result hook only when given (an
    executor written for tests may take neither); no call at all for no jobs."""
    if not jobs:
        return []
    kwargs = {"then": then} if then is not None else {}
    if progress is None:
        return executor.run(jobs, **kwargs)
    return executor.run(jobs, progress=progress, **kwargs)
