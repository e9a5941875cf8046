"""What the sandbox takes and gives: a Job (a program and expressions), its JobResult, and the Executor
Protocol every backend implements (codea1.sandbox.executor.LocalExecutor, its processes on this machine;
codea1.cluster.sandbox_pools.RayExecutor, on a Ray cluster). The sandbox runs code and returns plain values;
what a value means for a test is codea1.judge's to say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

OnProgress = Callable[[int, int], None] | None  # a callback, on_progress(done, total), or None (not a progress bar)


class ProgressParts:
    """One progress callback over parts that run one after the other, each reporting its own (done, total):
    shown as (the earlier parts' totals + done, the earlier parts' totals + total), so a last part with
    nothing to do leaves the bar at what was done, not at 0/0. `next()` is the callback of the part about
    to run (None where there is no progress to report)."""

    def __init__(self, progress: OnProgress) -> None:
        self.progress, self.before, self.current = progress, 0, 0

    def next(self) -> OnProgress:
        self.before, self.current = self.before + self.current, 0
        if self.progress is None:
            return None

        def report(done: int, total: int) -> None:
            self.current = total
            self.progress(self.before + done, self.before + total)

        return report

    def finish(self) -> None:
        """The bar at its end: every part done (0/0 where no part had anything to do, not 0/?)."""
        if self.progress is not None:
            end = self.before + self.current
            self.progress(end, end)


@dataclass
class Job:
    """A program (`code`) and expressions (`calls`) to evaluate, in order, in the namespace it made."""

    id: str
    code: str
    calls: list[str]
    timeout: float = 2.0  # per-call wall/CPU limit, seconds
    timeouts: list[float] | None = None  # a limit per call where they differ (a compile, then runs); None: timeout
    flavour: str | None = None  # the zygote to fork from (codea1.sandbox.preload); None: read off the code
    # the first `setup_calls` calls prepare the child for the others (a compile): a child started again after
    # a call ended the last one (a timeout, a crash) runs them again first, their new results not recorded
    setup_calls: int = 0
    # stop(i, result of call i), decided by the trusted parent as each call ends: True ends the job there,
    # and the calls after i come back "skipped" without running (an evaluation that needs only the first
    # failure stops at it, as LiveCodeBench's evaluator does); None: every call runs
    stop: Callable[[int, CallResult], bool] | None = None

    def limits(self) -> list[float]:
        """Each call's limit, in seconds: `timeouts` where given for it, else `timeout`."""
        default = max(0.001, float(self.timeout))
        given = list(self.timeouts or ())
        return [max(0.001, float(given[i])) if i < len(given) else default for i in range(len(self.calls))]


@dataclass
class CallResult:
    """Outcome of one call. The sandbox gives "ok" (with the plain value) | "error" | "timeout" | "crash" |
    "invalid" | "skipped" (not run: the job's `stop` ended it at an earlier call); the judge turns an "ok"
    into "pass" or "fail" where it holds an expected value."""

    status: str
    value: Any = None
    error: str | None = None
    seconds: float = 0.0


@dataclass
class JobResult:
    """Outcome of one job: whether `code` ran (defined) and one CallResult per call, in input order."""

    id: str
    defined: bool
    error: str | None
    results: list[CallResult] = field(default_factory=list)
    stdout: str = ""  # captured (capped) stdout+stderr of the child's last run

    def without_values(self) -> JobResult:
        """This result with every call's value dropped once its verdict is decided: the statuses, errors
        and times stay."""
        for r in self.results:
            r.value = None
        return self


Then = Callable[[int, JobResult], JobResult] | None  # then(n, result of job n), or None


class SandboxError(RuntimeError):
    """The sandbox itself failed (a zygote could not start); never raised for anything a job does."""


@runtime_checkable
class Executor(Protocol):
    """Runs jobs in isolation: results in input order, one CallResult per call, never raising for what a
    job does. A context manager; `close()` frees its processes.

    then(n, result), where given, runs as soon as job n has ended and what it returns is kept in place of
    the result: a caller that needs only verdicts reduces each job to them at once, so the values of a
    large batch are never all held together (`JobResult.without_values`)."""

    def run(self, jobs: Sequence[Job], progress: OnProgress = None, *, then: Then = None) -> list[JobResult]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Executor: ...  # noqa: PYI034

    def __exit__(self, *exc: object) -> None: ...
