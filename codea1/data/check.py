"""Checking ground truth: does each problem's GT solution pass its own tests?

`check_problems` runs, in the sandbox (`codea1.sandbox.Executor`):
1. a static check of the GT (it parses and defines the entry point), reported without running anything;
2. every golden test (`assert CALL == EXPECTED`) against the GT, CALL in the GT's child and the verdict
   decided by the parent, with a per-call limit `timeout`;
3. the source's own test program (`test_code`) when its format is known (meta["test_format"]):
   "evalplus" / "humaneval" (a `check(candidate)` function, called with the entry point) or "pytest"
   (`from solution import ...` resolved to the GT; every argument-less `test*` function is called),
   under one limit `test_code_timeout` for the whole program (codea1.judge.source_tests);
4. a stdin/stdout problem's GT on every input of its io_tests, in its language (a C++ GT compiled first),
   each output judged by the problem's rule or checker program (`run_stdio_gts`).
A problem without GT (LiveCodeBench's, verl's rows) has nothing to check: it is ok, with the note NO_GT.

Time limits: the GT is the reference, so it gets generous limits here and its measured runtime is
reported (CheckResult.gt_seconds / test_code_seconds). Limits for candidates should scale with it, as
EvalPlus does: `time_limit(gt_seconds)` = max(minimum, factor * gt_seconds).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.data.static import gt_problem
from codea1.errors import UserError
from codea1.judge.kinds.stdio import judge_outputs, program_job, program_runs, rule_of
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.judge.source_tests import test_code_job, test_code_program
from codea1.lang import language
from codea1.problem import Problem, gt_program
from codea1.sandbox import LocalExecutor
from codea1.sandbox.api import CallResult, Executor, JobResult, OnProgress, ProgressParts

MAX_REASON = 240


def time_limit(gt_seconds: float, factor: float = 4.0, minimum: float = 1.0) -> float:
    """Per-test limit for a candidate from the GT's own runtime (EvalPlus style): max(minimum, factor * gt)."""
    return max(minimum, factor * gt_seconds)


@dataclass
class CheckResult:
    """Outcome of checking one problem's GT. ok: every golden test passed and test_code (if run) passed."""

    id: str
    ok: bool
    reason: str = ""  # why not ok: the first failure, short; "" when ok
    tests_total: int = 0
    tests_passed: int = 0
    failures: list[str] = field(default_factory=list)  # one short line per failing golden test
    test_code_status: str = ""  # "pass" | "fail" | "timeout" | "crash" | "" (not run)
    gt_seconds: float = 0.0  # slowest golden-test call of the GT
    test_code_seconds: float = 0.0  # the GT's run of test_code
    note: str = ""  # e.g. "no tests" when there was nothing to run

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _short(text: object, limit: int = MAX_REASON) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _golden_failure(index: int, test: str, result: CallResult) -> str:
    if result.status == "fail":
        return _short(f"golden test {index + 1} fails: {test} (GT returned {result.value!r})")
    return _short(f"golden test {index + 1} {result.status}: {test} ({result.error or 'no detail'})")


def _static_results(problems: list[Problem]) -> tuple[list[CheckResult], list[int]]:
    """One result per problem, failed where the GT does not parse or lacks its entry point, and the indices
    of the problems whose GT can run."""
    results = [CheckResult(id=p.id, ok=True) for p in problems]
    runnable: list[int] = []
    for i, problem in enumerate(problems):
        error = gt_problem(problem.gt_solution, problem.entry_point)
        if error is not None:
            results[i] = CheckResult(
                id=problem.id,
                ok=False,
                reason=_short(problem.meta.get("gt_error") or error),
                tests_total=len(problem.golden_tests),
            )
        else:
            runnable.append(i)
    return results, runnable


def _golden_cases(problems: list[Problem], golden: list[int]) -> list[AssertCase]:
    """The GT against its own golden tests, one case per problem in `golden` (the GT is its own oracle)."""
    return [
        AssertCase(
            code=gt_program(problems[i]),
            tests=list(problems[i].golden_tests),
            entry_point=problems[i].entry_point,
            oracle=gt_program(problems[i]),
            id=problems[i].id,
        )
        for i in golden
    ]


def _record_golden(res: CheckResult, tests: list[str], job: JobResult) -> None:
    """Puts one GT's golden-test run into its result: passes, slowest call, failures and the first as reason."""
    res.tests_total = len(tests)
    if not job.defined:
        res.ok = False
        res.reason = _short(f"GT does not run: {job.error}")
        return
    res.tests_passed = sum(r.status == "pass" for r in job.results)
    res.gt_seconds = max((r.seconds for r in job.results), default=0.0)
    res.failures = [
        _golden_failure(k, t, r) for k, (t, r) in enumerate(zip(tests, job.results, strict=False)) if r.status != "pass"
    ]
    if res.failures:
        res.ok = False
        res.reason = res.failures[0]


def _record_test_code(res: CheckResult, job: JobResult) -> None:
    """Puts one GT's test_code run into its result; a failure is the reason unless a golden test gave one."""
    if not job.defined:
        res.test_code_status = "crash"
        detail = f"test_code could not start: {job.error}"
    else:
        call = job.results[0]
        res.test_code_seconds = call.seconds
        res.test_code_status = {"ok": "pass", "error": "fail"}.get(call.status, call.status)
        detail = f"test_code {res.test_code_status}: {call.error or 'no detail'}"
    if res.test_code_status != "pass":
        res.ok = False
        res.reason = res.reason or _short(detail)


NO_GT = "no GT: nothing to check"
NO_IO_TESTS = "no tests: the problem has no io_tests"


def check_problems(
    problems: list[Problem],
    executor: Executor | None = None,
    *,
    timeout: float = 10.0,
    test_code_timeout: float = 120.0,
    run_test_code: bool = True,
    workers: int | None = None,
    memory_mb: int = 1024,
    progress: Callable[[int, int], None] | None = None,
) -> list[CheckResult]:
    """Runs each problem's GT against its own tests, in the sandbox; one result each, in order.

    A function problem's GT runs its golden tests (and test_code); a stdin/stdout problem's GT runs its
    io_tests (`run_stdio_gts`, which training's data.check_gt and the stdio evaluator use too: its
    language's runner, a C++ GT compiled, its output rule). A problem without GT (LiveCodeBench's, verl's)
    is ok with the note NO_GT: there is nothing to check.

    executor: a `codea1.sandbox.Executor` to use (else one is made with `workers` and `memory_mb` and
    closed after).
    timeout: per golden-test call (a stdio GT's whole run), seconds. test_code_timeout: for the whole
    test_code run. progress(done, total) is called as sandbox jobs finish.
    """
    results = [CheckResult(id=p.id, ok=True, note=NO_GT) for p in problems]
    with_gt = [i for i, p in enumerate(problems) if p.gt_solution.strip()]
    stdio = [i for i in with_gt if problems[i].is_stdio]
    calls = [i for i in with_gt if not problems[i].is_stdio]
    if not with_gt:
        return results
    own = executor is None
    ex = LocalExecutor(workers=workers, memory_mb=memory_mb) if own else executor
    parts = ProgressParts(progress)
    try:
        code_timeout = test_code_timeout if run_test_code else None
        checked = _check_calls([problems[i] for i in calls], ex, timeout, code_timeout, parts.next())
        checked += _check_stdio([problems[i] for i in stdio], ex, timeout, parts.next())
        parts.finish()
    finally:
        if own:
            ex.close()
    for i, res in zip(calls + stdio, checked, strict=True):
        results[i] = res
    return results


@dataclass
class StdioGTRun:
    """A stdin/stdout GT's run on its own io_tests: how many it passed, its slowest run, the first failure."""

    passed: int
    seconds: float
    failure: str  # "" when every test passed


def run_stdio_gts(
    problems: Sequence[Problem], executor: Executor, timeout: float, progress: OnProgress = None
) -> list[StdioGTRun]:
    """Each stdio problem's GT on every input of its io_tests, in its language's runner (a C++ GT compiled
    first), judged by the problem's output rule or checker program: the check training's data.check_gt,
    `codea1 data check` and the stdio evaluator (codea1.eval.stdio_eval) share."""
    inputs = [[t["input"] for t in p.io_tests] for p in problems]
    expected = [[t["output"] for t in p.io_tests] for p in problems]
    jobs = [program_job(f"gt:{p.id}", p, p.gt_solution, ins, timeout) for p, ins in zip(problems, inputs, strict=True)]
    results = executor.run(jobs, progress) if jobs else []
    all_runs = [program_runs(p, res, len(ins)) for p, res, ins in zip(problems, results, inputs, strict=True)]
    groups = list(zip(problems, all_runs, inputs, expected, strict=True))
    out = []
    for runs, verdicts in zip(all_runs, judge_outputs(groups, executor) if groups else [], strict=True):
        bad = next((i for i, v in enumerate(verdicts) if not v.passed), None)
        failure = "" if bad is None else f"GT fails its own test {bad} ({verdicts[bad].status}: {verdicts[bad].error})"
        out.append(StdioGTRun(sum(v.passed for v in verdicts), max((r.seconds for r in runs), default=0.0), failure))
    return out


def _stdio_error(problem: Problem) -> str | None:
    """Why a stdio problem cannot be judged (its output rule or language unknown), or None."""
    try:
        rule_of(problem)
        language(problem.language)
    except UserError as exc:
        return str(exc)
    return None


def _check_stdio(
    problems: list[Problem], ex: Executor, timeout: float, progress: Callable[[int, int], None] | None
) -> list[CheckResult]:
    """Stdin/stdout GTs against their io_tests (`run_stdio_gts`); a problem without io_tests is ok with the
    note "no tests"."""
    results = [CheckResult(id=p.id, ok=True, tests_total=len(p.io_tests)) for p in problems]
    runnable = []
    for i, (res, p) in enumerate(zip(results, problems, strict=True)):
        error = _stdio_error(p)
        if error is not None:
            res.ok, res.reason = False, _short(error)
        elif not p.io_tests:
            res.note = "no tests"
        else:
            runnable.append(i)
    runs = run_stdio_gts([problems[i] for i in runnable], ex, timeout, progress)
    for res, run in zip([results[i] for i in runnable], runs, strict=True):
        res.tests_passed, res.gt_seconds = run.passed, run.seconds
        if run.failure:
            res.ok, res.reason, res.failures = False, _short(run.failure), [_short(run.failure)]
    return results


def _check_calls(
    problems: list[Problem],
    ex: Executor,
    timeout: float,
    test_code_timeout: float | None,
    progress: Callable[[int, int], None] | None,
) -> list[CheckResult]:
    """Function GTs against their golden tests and (test_code_timeout not None) the source's test_code."""
    results, runnable = _static_results(problems)
    golden = [i for i in runnable if problems[i].golden_tests]
    programs = {i: test_code_program(problems[i]) for i in runnable} if test_code_timeout is not None else {}
    with_code = [i for i in runnable if programs.get(i)]
    total = len(golden) + len(with_code)
    done_before = 0

    def report(done: int, _total: int) -> None:
        if progress is not None:
            progress(done_before + done, total)

    cases = _golden_cases(problems, golden)
    with warnings.catch_warnings():  # tests parsed in this process may hold odd escapes in strings
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        ran = run_assertions(ex, cases, timeout=timeout, progress=report) if cases else []
    for i, job in zip(golden, ran, strict=True):
        _record_golden(results[i], problems[i].golden_tests, job)
    done_before = len(golden)
    jobs = [test_code_job(problems[i].id, programs[i], test_code_timeout) for i in with_code]
    for i, job in zip(with_code, ex.run(jobs, progress=report) if jobs else [], strict=True):
        _record_test_code(results[i], job)
    for i in runnable:
        if not problems[i].golden_tests and not programs.get(i):
            results[i].note = "no tests"
    return results


def drop_failing(problems: list[Problem], results: list[CheckResult]) -> tuple[list[Problem], list[CheckResult]]:
    """Problems whose GT passed (with their measured GT runtimes put into meta) and the failing results."""
    kept, failed = [], []
    for problem, res in zip(problems, results, strict=True):
        if res.ok:
            problem.meta["gt_seconds"] = round(res.gt_seconds, 6)
            if res.test_code_status:
                problem.meta["gt_test_code_seconds"] = round(res.test_code_seconds, 6)
            kept.append(problem)
        else:
            failed.append(res)
    return kept, failed
