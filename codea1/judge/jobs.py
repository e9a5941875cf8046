"""Jobs of calls in a program: GT's program or a candidate's (codea1.problem), or a program given whole, and
the expressions evaluated, in order, in the namespace it makes.

    job = gt_job("gt:p1#0", problem, ["f(2)"], 1.0)              # GT answers one call from a clean module
    job = candidate_job("cand:p1:0:0", problem, code, calls, 2.0)  # a candidate's program on the same calls
    again = rerun_job(job, [1, 3])                               # calls 1 and 3 once more, as they ran

Which program a call runs in is said here, so GT and every candidate of a problem run theirs as the rest
of the judge reads them (GT's program: the problem's imports, then GT; a candidate's: those imports and
GT's, then its code). Used by the game (GT's answers, the execution matrix), decontamination's outputs
signal and `codea1 exec`.
"""

from __future__ import annotations

from collections.abc import Sequence

from codea1.problem import Problem, candidate_program, gt_program
from codea1.sandbox.api import Job

__all__ = ["calls_job", "candidate_job", "gt_job", "rerun_job"]


def calls_job(job_id: str, program: str, calls: Sequence[str], timeout: float) -> Job:
    """The job that runs `program` as given and evaluates `calls` in its namespace, each within `timeout`
    seconds (`codea1 exec`'s call lines: the program and its calls are the user's, nothing is added)."""
    return Job(id=job_id, code=program, calls=list(calls), timeout=timeout)


def gt_job(job_id: str, problem: Problem, calls: Sequence[str], timeout: float) -> Job:
    """The job that evaluates `calls` in GT's program (codea1.problem.gt_program), each within `timeout`
    seconds: a call that must start from GT's clean module state is a job of its own."""
    return Job(id=job_id, code=gt_program(problem), calls=list(calls), timeout=timeout)


def candidate_job(job_id: str, problem: Problem, code: str, calls: Sequence[str], timeout: float) -> Job:
    """The job that evaluates `calls` in a candidate's program for the problem (codea1.problem.
    candidate_program: the problem's and GT's imports, then `code`), each within `timeout` seconds."""
    return Job(id=job_id, code=candidate_program(problem, code), calls=list(calls), timeout=timeout)


def rerun_job(job: Job, indices: Sequence[int]) -> Job:
    """Some calls of `job` run once more: those at `indices`, in that order, in the same program and under
    the same limit, as the job `ID:again`."""
    return Job(id=f"{job.id}:again", code=job.code, calls=[job.calls[i] for i in indices], timeout=job.timeout)
