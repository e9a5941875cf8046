"""stdin/stdout problems: a program per job, its outputs judged by the problem's output rule.

    job = program_job("c0", problem, code, inputs, timeout)        # one job: every input, in order
    runs = program_runs(problem, executor.run([job])[0], len(inputs))
    [verdicts] = judge_outputs([(problem, runs, inputs, expected)], executor)

The child returns each run's stdout; the parent alone holds the expected outputs and compares them by the
rule (codea1.judge.kinds.outputs), or, for a problem with many correct outputs, has the problem's checker
program judge them in a job of its own. A run passes when it exits with status 0 (a Python program: or by
raising SystemExit, as LiveCodeBench and prime_code count it; see _run_failure) and its output matches; a
program that does not compile fails every input, with the compiler's (or Python's) first error as the
reason, as LiveCodeBench and CodeContests count a compile error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from codea1.errors import UserError
from codea1.judge.formats.spec import Verdict
from codea1.judge.kinds.outputs import RULES, outputs_match
from codea1.lang import language
from codea1.problem import Problem
from codea1.sandbox.api import CallResult, Executor, Job, JobResult, OnProgress
from codea1.sandbox.pch import with_precompiled_headers
from codea1.sandbox.runners import (
    BLANKS,
    MAX_STDOUT,
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
CHECKER_PROGRAM = "program"  # rule_of's answer for a problem judged by its own checker program
CHECKER_TIMEOUT = 10.0  # seconds for a checker program to judge one output

__all__ = [
    "CHECKER_PROGRAM",
    "DEFAULT_RULE",
    "NO_GT_TIME_LIMIT",
    "OVER_THE_CAP",
    "judge_outputs",
    "judge_runs",
    "over_the_cap",
    "program_compiled",
    "program_job",
    "program_runs",
    "rule_of",
    "stop_at_first_failure",
    "time_limit_of",
]


def rule_of(problem: Problem) -> str:
    """The output rule the problem is judged by: its `checker`, else DEFAULT_RULE; CHECKER_PROGRAM where the
    problem ships a checker program (judge_outputs runs it)."""
    if problem.checker_program.strip():
        return CHECKER_PROGRAM
    rule = problem.checker or DEFAULT_RULE
    if rule not in RULES:
        raise UserError(
            f"problem {problem.id!r}: checker {rule!r} is not an output rule codea1 has ({', '.join(RULES)}); "
            "a problem with many correct outputs ships its special judge as `checker_program` (a Python program; "
            "see codea1.problem.Problem)"
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
        run = call_run(result)
        if rule == CHECKER_PROGRAM:  # its output is judged later, by the checker: only a failed run stops
            return _run_failure(run, checker=True) is not None
        return not judge_runs([run], [expected[i]], rule)[0].passed

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


def _run_failure(run: RunResult, checker: bool = False) -> Verdict | None:
    """The verdict of a run that failed whatever its output: it did not compile ("undefined"), did not end
    ("timeout", "crash", "output limit", ...) or exited with a status other than 0 ("error"); None for a
    run whose output decides.

    A Python program that ends by raising SystemExit, whatever its status (`sys.exit(1)` after the answer,
    `raise SystemExit("done")`), is judged on its output: LiveCodeBench's `call_method` swallows it
    (lcb_runner/evaluation/testing_util.py, lines 174-177: `except SystemExit as e: pass`) and so does verl's
    prime_code (verl/utils/reward_score/prime_code/testing_util.py, lines 593-596), and the output captured
    so far is compared. Any other non-zero end (an uncaught exception, `os._exit(1)`, a signal, a compiled
    program's status) stays an error: there the evaluator records a runtime error or loses its process.

    A run that wrote more than the cap, all blanks past it (RunResult.blank_tail), is judged on what it kept
    by an output rule, which strips those blanks from the end as it would from the whole output; a checker
    program (`checker`), which might read them, gets no cut output: the run is over the output limit."""
    if run.status == "compile":
        return Verdict(False, "undefined", run.error)
    if run.status != "ok":
        return Verdict(False, run.status, run.error)
    if checker and run.blank_tail:
        return Verdict(False, "output limit", f"more than {MAX_STDOUT} characters of output")
    if run.exit_code != 0 and not run.system_exit:
        return Verdict(False, "error", run.error or f"exit status {run.exit_code}")
    return None


OVER_THE_CAP = f"no program printing it can pass (a run prints at most {MAX_STDOUT:,} characters)"


def over_the_cap(expected: str) -> bool:
    """Whether an expected output is longer than a run may print (MAX_STDOUT characters, blanks at the end
    not counted: a run may print those past the cap, see RunResult.blank_tail). Such a test can never be
    passed by a program that prints it; codea1.eval.stdio_eval excludes its problem, saying so."""
    return len(expected) > MAX_STDOUT and len(expected.rstrip(BLANKS)) > MAX_STDOUT


def judge_runs(runs: Sequence[RunResult], expected: Sequence[str], rule: str) -> list[Verdict]:
    """A Verdict per run: "pass" when it exited with status 0 (or raised SystemExit) and its output matches by
    `rule`; else "fail" (a wrong output), "error" (a non-zero exit), "timeout", "crash", "undefined" (it did
    not compile) or "output limit". A problem with a checker program is judged by judge_outputs."""
    if rule == CHECKER_PROGRAM:
        raise ValueError("a problem with a checker program is judged by judge_outputs, which runs it")
    out = []
    for run, exp in zip(runs, expected, strict=True):
        failed = _run_failure(run)
        if failed is None:
            ok, why = outputs_match(run.stdout, exp, rule)
            failed = None if ok else Verdict(False, "fail", why)
        elif failed.status == "output limit" and over_the_cap(exp):
            failed = Verdict(
                False, failed.status, f"{failed.error}; the expected output itself is longer: {OVER_THE_CAP}"
            )
        out.append(failed or Verdict(True, "pass"))
    return out


Judged = tuple[Problem, Sequence[RunResult], Sequence[str], Sequence[str]]  # problem, runs, inputs, expected


def judge_outputs(groups: Sequence[Judged], executor: Executor, progress: OnProgress = None) -> list[list[Verdict]]:
    """judge_runs for each (problem, runs, inputs, expected) group, by the problem's rule, or, for a problem
    with a checker program, by that program: one sandbox job per such group, all in one batch, with the
    input, the expected output and the run's output as the program's stdin (a JSON object); status 0 from
    the checker is a pass, anything else a "fail" whose reason is the checker's first line of output (a
    checker that cannot run at all fails the output too, saying so). The candidate's program never sees
    the expected output: the checker runs in a job of its own."""
    out: list[list[Verdict]] = []
    jobs: list[Job] = []
    asked: list[tuple[int, list[int]]] = []  # (group, the runs its job judges)
    for g, (problem, runs, inputs, expected) in enumerate(groups):
        rule = rule_of(problem)
        if rule != CHECKER_PROGRAM:
            out.append(judge_runs(runs, expected, rule))
            continue
        verdicts: list[Verdict | None] = [_run_failure(run, checker=True) for run in runs]
        todo = [i for i, v in enumerate(verdicts) if v is None]
        out.append(verdicts)  # type: ignore[arg-type]  (filled below)
        if todo:
            cases = [json.dumps({"input": inputs[i], "expected": expected[i], "output": runs[i].stdout}) for i in todo]
            jobs.append(
                python_program_job(f"checker:{problem.id}:{g}", problem.checker_program, cases, CHECKER_TIMEOUT)
            )
            asked.append((g, todo))
    for (g, todo), res in zip(asked, executor.run(jobs, progress) if jobs else [], strict=True):
        for i, run in zip(todo, run_results(res, len(todo), compiled=False), strict=True):
            out[g][i] = _checker_verdict(run)
    return out


def _checker_verdict(run: RunResult) -> Verdict:
    if run.status == "ok" and run.exit_code == 0:
        return Verdict(True, "pass")
    if run.status == "ok" and run.exit_code > 0 and not run.error:  # it exited: a rejection (an uncaught
        said = run.stdout.strip().splitlines()  # exception, a timeout or a crash is the checker's own failure)
        return Verdict(False, "fail", f"checker: {said[0][:200] if said else f'exit status {run.exit_code}'}")
    return Verdict(False, "fail", f"the checker program failed ({run.status}: {run.error})"[:300])
