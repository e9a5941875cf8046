"""stdin/stdout problems: a program per job, its outputs judged by the problem's output rule.

    job = program_job("c0", problem, code, inputs, timeout)        # one job: every input, in order
    runs = program_runs(problem, executor.run([job])[0], len(inputs))
    verdicts = judge_runs(runs, expected, rule_of(problem))

The child returns each run's stdout; the parent alone holds the expected outputs and compares them by the
rule (codea1.judge.kinds.outputs). A run passes when it exits with status 0 and its output matches; a
program that does not compile fails every input, with the compiler's (or Python's) first error as the
reason, as LiveCodeBench and CodeContests count a compile error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from codea1.errors import UserError
from codea1.judge.formats.spec import Verdict
from codea1.judge.kinds.outputs import RULES, outputs_match
from codea1.lang import language
from codea1.problem import Problem
from codea1.sandbox.api import CallResult, Job, JobResult
from codea1.sandbox.pch import with_precompiled_headers
from codea1.sandbox.runners import (
    RunResult,
    call_run,
    compile_call_ok,
    compiled_ok,
    process_program_job,
    python_program_job,
    run_results,
)

DEFAULT_RULE = "lcb"  # a problem whose source names no rule is compared as LiveCodeBench compares
NO_GT_TIME_LIMIT = 6.0  # seconds per input for a problem without GT to time (LiveCodeBench's own default)

__all__ = [
    "DEFAULT_RULE",
    "NO_GT_TIME_LIMIT",
    "judge_runs",
    "program_compiled",
    "program_job",
    "program_runs",
    "rule_of",
    "stop_at_first_failure",
    "time_limit_of",
]


def rule_of(problem: Problem) -> str:
    """The output rule the problem is judged by: its `checker`, else DEFAULT_RULE."""
    rule = problem.checker or DEFAULT_RULE
    if rule not in RULES:
        raise UserError(
            f"problem {problem.id!r}: checker {rule!r} is not an output rule codea1 has ({', '.join(RULES)}); "
            "problems with many correct outputs need a checker program, which codea1 does not run yet"
        )
    return rule


def time_limit_of(problem: Problem) -> float:
    """A stdio problem's own per-input time limit where it states one (meta "time_limit", seconds), else
    NO_GT_TIME_LIMIT; GT's timing sets the limit where there is GT (codea1.eval.stdio_eval)."""
    value = problem.meta.get("time_limit")
    return float(value) if isinstance(value, (int, float)) and value > 0 else NO_GT_TIME_LIMIT


def program_job(job_id: str, problem: Problem, source: str, inputs: Sequence[str], timeout: float) -> Job:
    """The job that runs `source`, a program in the problem's language, once per input (a Python program
    after the problem's `imports`, the header LiveCodeBench puts before every program it runs)."""
    lang = language(problem.language)
    if not lang.compiled:
        header = problem.imports.strip()
        return python_program_job(job_id, f"{header}\n{source}" if header else source, list(inputs), timeout)
    argv = with_precompiled_headers(lang.compile_argv) if lang.precompiled_headers else lang.compile_argv
    return process_program_job(job_id, lang.source, source, argv, lang.run_argv or ("{out}",), list(inputs), timeout)


def stop_at_first_failure(problem: Problem, expected: Sequence[str], rule: str) -> Callable[[int, CallResult], bool]:
    """A Job.stop for a `program_job` of this problem on inputs whose expected outputs are `expected`: the
    job ends at the first input that does not pass (or at a failed compile), the rest skipped, as
    LiveCodeBench's evaluator stops at a sample's first failing test. Decided in the trusted parent; the
    expected outputs never enter the job. For evaluation, where one failure decides the sample: a program
    that passed the first input and then spent its whole limit on each of the others cost the evaluation
    one limit per input (round 6)."""
    compiled = language(problem.language).compiled

    def stop(i: int, result: CallResult) -> bool:
        if compiled:
            if i == 0:
                return not compile_call_ok(result)
            i -= 1
        return not judge_runs([call_run(result)], [expected[i]], rule)[0].passed

    return stop


def validator_job(job_id: str, problem: Problem, inputs: Sequence[str], timeout: float) -> Job:
    """The job that runs the problem's input validator (a Python program, Problem.validator) once per input."""
    return python_program_job(job_id, problem.validator, list(inputs), timeout)


def validator_accepts(res: JobResult, n_inputs: int) -> list[bool]:
    """Per input of a `validator_job`: whether the validator ran to exit status 0 on it (a validator that
    does not run, fails or times out accepts nothing)."""
    return [run.status == "ok" and run.exit_code == 0 for run in run_results(res, n_inputs, compiled=False)]


def program_runs(problem: Problem, res: JobResult, n_inputs: int) -> list[RunResult]:
    """The RunResult of each input of a `program_job` of this problem (its language says whether call 0
    is a compile)."""
    return run_results(res, n_inputs, compiled=language(problem.language).compiled)


def program_compiled(problem: Problem, res: JobResult) -> bool:
    """Whether the program of a `program_job` of this problem compiled (Python: parsed), whatever its runs
    did; asked even of a job with no input."""
    return compiled_ok(res, language(problem.language).compiled)


def judge_runs(runs: Sequence[RunResult], expected: Sequence[str], rule: str) -> list[Verdict]:
    """A Verdict per run: "pass" when it exited with status 0 and its output matches the expected one by
    `rule`; else "fail" (a wrong output), "error" (a non-zero exit), "timeout", "crash", "undefined" (it did
    not compile) or "output limit"."""
    out = []
    for run, exp in zip(runs, expected, strict=True):
        if run.status == "compile":
            out.append(Verdict(False, "undefined", run.error))
        elif run.status != "ok":
            out.append(Verdict(False, run.status, run.error))
        elif run.exit_code != 0:
            out.append(Verdict(False, "error", run.error or f"exit status {run.exit_code}"))
        else:
            ok, why = outputs_match(run.stdout, exp, rule)
            out.append(Verdict(True, "pass") if ok else Verdict(False, "fail", why))
    return out
