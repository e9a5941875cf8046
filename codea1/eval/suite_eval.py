"""Test generation evaluation (UnLeakedTestBench style): pass@k, mut@k, Mul, line/branch coverage.

For each function the Test LLM's first k tests are judged against GT in the sandbox:
- pass@k: share of the k tests that are valid (the assert holds on GT), in percent;
- mut@k: mean mutation score over the functions whose k tests are all valid (ULT's definition), in
  percent: a mutant (codea1.eval.mutation's operators) is killed when one of the tests' asserts does not
  hold on it, decided as every assert is (codea1.judge.oracle: the mutant's child computes the calls'
  values, the verdict is taken outside it), so a test that asserts nothing kills nothing;
- Mul = pass@k x mut@k / 100;
- line and branch coverage of the function by its valid tests, in percent (0 for a function with none).
Coverage is traced in a sandbox child (generated tests are untrusted): a sys.settrace hook
(codea1.judge.coverage) records the executed lines and arcs of the function's code, and this process turns
them into statement and branch coverage with coverage.py's own parser (statements, possible arcs, exits per
line). (The children cannot import coverage.py itself; the numbers follow its arc model.) Only the tests'
calls of the function under test run under the tracer, with their arguments resolved to plain values first
(codea1.judge.resolve), so no code of a test runs beside the records.

White-box mode: the Test LLM sees a known-buggy candidate (a mutant of GT that the benchmark's own
tests kill); attack rate = share of those candidates on which at least one valid generated test's assert
fails (decided as for mut@k).
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.data.ult import ULT_PRELUDE, UltFunction
from codea1.eval.mutation import (
    Mutant,
    MutantOutcome,
    MutationReport,
    generate_mutants,
    score_mutants,
    skipped_points,
    summarise,
)
from codea1.judge.asserts import read_assertion, split_assert
from codea1.judge.coverage import coverage_job
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.judge.resolve import CallSet, resolve_calls
from codea1.sandbox.api import Executor, JobResult, OnProgress

REFERENCE_RUNS = 2  # GT runs of the tests beside the mutants: a test counts only where GT passed it each time
MAX_MUTANT_LIMIT = 30.0  # seconds: a mutant's per-call limit, whatever GT's (test-influenced) time says


@dataclass
class Coverage:
    line: float  # percent of statements executed
    branch: float  # percent of branch exits taken (100 when the code has no branches)
    statements: int = 0
    branches: int = 0


def coverage_from_trace(source: str, lines: list[int], arcs: list[tuple[int, int]]) -> Coverage:
    """Statement and branch coverage of `source` from executed lines/arcs, with coverage.py's parser."""
    from coverage.parser import PythonParser

    parser = PythonParser(text=source)
    parser.parse_source()
    statements = set(parser.statements)
    executed = {parser.first_line(n) for n in lines}
    possible = set(parser.arcs())
    exits = parser.exit_counts()
    taken = {(parser.first_line(a) if a > 0 else a, parser.first_line(b) if b > 0 else b) for a, b in arcs}
    branch_lines = {n for n, c in exits.items() if c > 1}
    total_branches = sum(exits[n] for n in branch_lines)
    covered_branches = sum(1 for a, b in possible if a in branch_lines and (a, b) in taken)
    line = 100.0 * len(statements & executed) / len(statements) if statements else 100.0
    branch = 100.0 * covered_branches / total_branches if total_branches else 100.0
    return Coverage(line=line, branch=branch, statements=len(statements), branches=total_branches)


def measure_coverage(
    functions: list[UltFunction], calls_per_function: list[list[str]], executor: Executor, timeout: float = 5.0
) -> list[Coverage]:
    """Coverage of each function by its calls, traced in a sandbox child."""

    jobs = [
        coverage_job(fn.task_id, ULT_PRELUDE, fn.code, calls, timeout * max(1, len(calls)))
        for fn, calls in zip(functions, calls_per_function, strict=True)
    ]
    out = []
    for fn, calls, res in zip(functions, calls_per_function, executor.run(jobs) if jobs else [], strict=True):
        r = res.results[0] if res.defined and res.results else None
        if not calls or r is None or r.status != "ok" or type(r.value) is not tuple:
            out.append(Coverage(line=0.0, branch=0.0))
            continue
        lines, arcs = r.value
        try:
            out.append(coverage_from_trace(fn.code, list(lines), [tuple(a) for a in arcs]))
        except Exception:  # noqa: BLE001 - a trace that does not fit the source: no coverage
            out.append(Coverage(line=0.0, branch=0.0))
    return out


@dataclass
class FunctionTestResult:
    """One function's tests and their scores."""

    task_id: str
    tests: list[str]
    valid: list[bool]
    all_valid: bool
    mutants: int = 0
    killed: int = 0
    mutation_score: float | None = None  # percent; None when not all k tests are valid
    by_family: dict[str, dict[str, int]] = field(default_factory=dict)
    line_coverage: float = 0.0
    branch_coverage: float = 0.0
    buggy_candidate: str | None = None  # white-box: the mutant id shown to the Test LLM
    exposed: bool | None = None  # white-box: a valid test fails on that candidate

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def first_k(tests: list[str], k: int) -> list[str]:
    """The first k tests; missing ones are empty strings (they count as invalid)."""
    tests = list(tests)[:k]
    return tests + [""] * (k - len(tests))


def score_tests(
    functions: list[UltFunction],
    tests: dict[str, list[str]],
    executor: Executor,
    *,
    k: int = 5,
    mutation: bool = True,
    coverage: bool = True,
    buggy: dict[str, Mutant] | None = None,
    timeout: float = 2.0,
    progress: OnProgress = None,
) -> tuple[dict[str, Any], list[FunctionTestResult]]:
    """Scores given tests (task_id -> assert statements) of each function; returns (summary, records)."""
    chosen = [first_k(tests.get(fn.task_id, []), k) for fn in functions]
    cases = [
        AssertCase(code=fn.program, tests=t, entry_point=fn.func_name, oracle=fn.program, id=fn.task_id)
        for fn, t in zip(functions, chosen, strict=True)
    ]
    ran = run_assertions(executor, cases, timeout=timeout)
    records: list[FunctionTestResult] = []
    valid_tests: list[list[str]] = []
    limits: list[float] = []
    for fn, t, res in zip(functions, chosen, ran, strict=True):
        valid = (
            [bool(s) and r.status == "pass" for s, r in zip(t, res.results, strict=True)]
            if res.defined
            else [False] * k
        )
        records.append(FunctionTestResult(task_id=fn.task_id, tests=t, valid=valid, all_valid=all(valid)))
        valid_tests.append([s for s, v in zip(t, valid, strict=True) if v])
        gt_seconds = max((float(r.seconds or 0.0) for r in res.results), default=0.0)
        limits.append(min(max(timeout, 4.0 * gt_seconds), MAX_MUTANT_LIMIT))
    if mutation:
        _score_mutants(functions, records, valid_tests, limits, executor, progress)
    if coverage:
        calls = resolved_calls(functions, valid_tests, executor, timeout)
        for rec, cov in zip(records, measure_coverage(functions, calls, executor), strict=True):
            rec.line_coverage, rec.branch_coverage = cov.line, cov.branch
    if buggy:
        for i, (fn, tests_, limit) in enumerate(zip(functions, valid_tests, limits, strict=True)):
            m = buggy.get(fn.task_id)
            if m is None:
                continue
            records[i].buggy_candidate = m.id
            report = mutants_killed_by_asserts(fn, tests_, executor, mutants=[m], timeout=limit) if tests_ else None
            records[i].exposed = bool(report and report.killed)
    return summarize_tests(records, k), records


def _score_mutants(
    functions: list[UltFunction],
    records: list[FunctionTestResult],
    valid_tests: list[list[str]],
    limits: list[float],
    executor: Executor,
    progress: OnProgress,
) -> None:
    """mut@k's inputs, into each record whose k tests are all valid: how many of the function's mutants its
    tests kill (functions in parallel, as many as the executor has workers)."""
    scored = [
        (fn, rec, tests_, limit)
        for fn, rec, tests_, limit in zip(functions, records, valid_tests, limits, strict=True)
        if rec.all_valid
    ]
    skipped = len(functions) - len(scored)
    if progress is not None and skipped:
        progress(skipped, len(functions))
    with ThreadPoolExecutor(max(1, int(getattr(executor, "workers", 1) or 1))) as pool:
        futures = {
            pool.submit(mutants_killed_by_asserts, fn, tests_, executor, timeout=limit): rec
            for fn, rec, tests_, limit in scored
        }
        for done, future in enumerate(as_completed(futures), start=skipped + 1):
            rec, report = futures[future], future.result()
            rec.mutants, rec.killed = report.total, report.killed
            rec.mutation_score = 100.0 * report.score if report.total else None
            rec.by_family = report.by_family
            if progress is not None:
                progress(done, len(functions))


def mutants_killed_by_asserts(
    fn: UltFunction,
    tests: list[str],
    executor: Executor,
    *,
    mutants: list[Mutant] | None = None,
    timeout: float = 2.0,
) -> MutationReport:
    """Each mutant of `fn` (all of codea1.eval.mutation's, or the given ones) judged by the tests' asserts.

    GT runs the tests REFERENCE_RUNS more times in the same batch; a test counts only where it passed on
    GT every time (a test whose verdict changes from run to run kills nothing). A mutant is killed when
    its program does not run or a counted test does not pass on it (its assert fails, or a call of the
    function raises, times out or crashes): what the assert decides, never whether a value differs."""
    mutants = generate_mutants(fn.code) if mutants is None else mutants
    programs = [fn.program] * REFERENCE_RUNS + [f"{ULT_PRELUDE}\n{m.code}" for m in mutants]
    # the tests' CALLs with their arguments as plain values, evaluated beside no function (judge.resolve):
    # no argument expression runs in a mutant's child, where it could tell mutants from GT
    resolved = _resolved(fn, tests, executor, timeout) if mutants and tests else {}
    cases = [
        AssertCase(
            code=program,
            tests=tests,
            entry_point=fn.func_name,
            oracle=fn.program,
            id=f"{fn.task_id}:{n}",
            resolved=resolved,
        )
        for n, program in enumerate(programs)
    ]
    ran = run_assertions(executor, cases, timeout=timeout) if mutants and tests else []
    counted = [all(_passed(res, t) for res in ran[:REFERENCE_RUNS]) for t in range(len(tests))] if ran else []
    outcomes = []
    for n, m in enumerate(mutants):
        res = ran[REFERENCE_RUNS + n] if ran else None
        how, by = "", None
        if res is not None and not res.defined:
            how = "undefined"
        elif res is not None:
            by = next((t for t, ok in enumerate(counted) if ok and not _passed(res, t)), None)
            how = "" if by is None else {"fail": "wrong"}.get(res.results[by].status, res.results[by].status)
        outcomes.append(MutantOutcome(id=m.id, operator=m.operator, family=m.family, killed=bool(how), by=by, how=how))
    return summarise(outcomes, skipped_points(fn.code))


def _resolved(fn: UltFunction, tests: list[str], executor: Executor, timeout: float) -> dict[str, str | None]:
    """CALL as written -> CALL with plain arguments (None: not resolvable), for every CALL of the tests."""
    [resolved] = resolve_calls([_call_set(fn, tests)], executor, timeout)
    return resolved.calls


def _call_set(fn: UltFunction, tests: list[str]) -> CallSet:
    """The CALLs of the function under test in the tests' asserts, to resolve in ULT's prelude."""
    calls = []
    for statement in tests:
        read = read_assertion(statement, fn.func_name) if type(statement) is str else None
        calls += read.calls if read is not None else []
    return CallSet(fn.task_id, fn.func_name, ULT_PRELUDE, calls)


def _passed(result: JobResult, test: int) -> bool:
    return bool(result.defined) and test < len(result.results) and result.results[test].status == "pass"


def resolved_calls(
    functions: list[UltFunction], tests: list[list[str]], executor: Executor, timeout: float = 2.0
) -> list[list[str]]:
    """Per function, the calls of the function under test in its tests, each with its arguments resolved
    to plain values (codea1.judge.resolve); calls that cannot be resolved are left out."""
    sets = [_call_set(fn, statements) for fn, statements in zip(functions, tests, strict=True)]
    out = []
    for item, resolved in zip(sets, resolve_calls(sets, executor, timeout), strict=True):
        written = (resolved.calls.get(c) for c in dict.fromkeys(item.calls))
        out.append([c for c in written if c is not None and c.startswith(f"{item.entry_point}(")])
    return out


def summarize_tests(records: list[FunctionTestResult], k: int) -> dict[str, Any]:
    """pass@k, mut@k, Mul, coverage (all in percent), counts, and the attack rate in white-box mode."""
    n = len(records)
    valid = sum(sum(r.valid) for r in records)
    pass_k = 100.0 * valid / (n * k) if n else 0.0
    scored = [r.mutation_score for r in records if r.mutation_score is not None]
    mut_k = sum(scored) / len(scored) if scored else 0.0
    families: dict[str, dict[str, int]] = {}
    for r in records:
        for fam, c in r.by_family.items():
            agg = families.setdefault(fam, {"total": 0, "killed": 0})
            agg["total"] += c["total"]
            agg["killed"] += c["killed"]
    summary: dict[str, Any] = {
        f"pass@{k}": pass_k,
        f"mut@{k}": mut_k,
        "Mul": pass_k * mut_k / 100.0,
        "line_coverage": sum(r.line_coverage for r in records) / n if n else 0.0,
        "branch_coverage": sum(r.branch_coverage for r in records) / n if n else 0.0,
        "functions": n,
        "functions_all_valid": sum(r.all_valid for r in records),
        "functions_mutation_scored": len(scored),
        "mutants": sum(r.mutants for r in records),
        "killed": sum(r.killed for r in records),
        "by_family": dict(sorted(families.items())),
        "k": k,
    }
    attacked = [r for r in records if r.exposed is not None]
    if attacked:
        summary["attack_rate"] = 100.0 * sum(bool(r.exposed) for r in attacked) / len(attacked)
        summary["buggy_candidates"] = len(attacked)
    return summary


def pick_buggy_candidates(
    functions: list[UltFunction], executor: Executor, seed: int = 0, max_mutants: int = 64
) -> dict[str, Mutant]:
    """One known-buggy candidate per function: a compiling mutant, chosen with `seed`, that the
    benchmark's own tests (ULT's test_list) kill; functions without given tests or such a mutant get none."""
    rng = random.Random(seed)
    out: dict[str, Mutant] = {}
    for fn in functions:
        calls = [p[0] for p in (split_assert(t) for t in fn.tests) if p]
        if not calls:
            continue
        mutants = [m for m in generate_mutants(fn.code) if m.compiles]
        rng.shuffle(mutants)
        mutants = mutants[:max_mutants]
        if not mutants:
            continue
        report = score_mutants(fn.code, calls, executor, prelude=ULT_PRELUDE, mutants=mutants)
        killed = [m for m, o in zip(mutants, report.outcomes, strict=True) if o.killed and o.how == "wrong"]
        if killed:
            out[fn.task_id] = killed[0]
    return out
