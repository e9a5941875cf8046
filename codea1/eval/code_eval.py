"""Code generation evaluation: solutions (from a model or an EvalPlus samples file) scored with pass@k.

Per problem, `prepare_tasks` parses the benchmark's tests (an EvalPlus check() program, else the golden
asserts), computes expected values in a clean child, runs GT itself and sets the time limit from GT's
runtime (max(min_time_limit, gt_time_factor x GT's slowest call), as EvalPlus does). A task whose GT
fails its own tests is excluded and reported. `score_solutions` runs every solution in the sandbox in
rounds of growing input chunks (1, 4, 16, ... inputs), so a failing solution stops early; the verdict
is computed in this process (see codea1.eval.checker).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.data.check import time_limit
from codea1.data.problem import Problem
from codea1.eval.checker import (
    CUSTOM_HELPER,
    PLAIN_HELPER,
    CheckSpec,
    custom_check_call,
    evalplus_assertion,
    parse_evalplus,
    spec_from_asserts,
    value_source,
)
from codea1.eval.passk import pass_at_ks

Progress = Callable[[int, int], None] | None


@dataclass
class PreparedTask:
    """A problem ready for scoring: calls, expected values, time limit, or why it is excluded."""

    task_id: str
    problem: Problem
    spec: CheckSpec | None
    expected: list[Any] = field(default_factory=list)
    timeout: float = 1.0
    gt_seconds: float = 0.0
    excluded: bool = False
    reason: str = ""

    def program(self, solution: str) -> str:
        """The candidate's program: the problem's imports, the solution, the test program's imports."""
        parts = [self.problem.imports, solution, self.spec.imports if self.spec else "", PLAIN_HELPER]
        return "\n".join(p for p in parts if p)


@dataclass
class SampleResult:
    """One solution's verdict."""

    task_id: str
    index: int
    passed: bool
    status: str  # "pass" | "fail" | "error" | "timeout" | "crash" | "undefined" | "excluded"
    failed_input: int | None = None
    error: str | None = None
    solution: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def spec_for(problem: Problem) -> CheckSpec | None:
    """The benchmark's own check program when it is EvalPlus-style, else the golden asserts."""
    if problem.test_code:
        spec = parse_evalplus(problem.test_code, problem.entry_point)
        if spec is not None:
            return spec
    return spec_from_asserts(problem.golden_tests)


def _verdicts(
    task: PreparedTask, start: int, results: list[Any], executor: Any
) -> list[tuple[bool, str, str | None]]:
    """(passed, status, error) per call result, decided here (custom bodies in a clean child)."""
    spec = task.spec
    out: list[tuple[bool, str, str | None]] = []
    custom_rows: list[tuple[int, str]] = []
    for j, r in enumerate(results):
        i = start + j
        if r.status != "ok":
            out.append((False, r.status, r.error))
            continue
        if spec.mode == "custom":
            call = custom_check_call(spec, i, r.value)
            out.append(
                (False, "fail", "output cannot be rebuilt for the check")
                if call is None
                else (True, "", None)
            )
            if call is not None:
                custom_rows.append((j, call))
            continue
        exp = task.expected[i]
        if spec.mode == "asserts":
            from codea1.sandbox.values import values_equal

            op = spec.ops[i]
            ok = values_equal(r.value, exp) if op == "==" else (r.value is exp and exp in (None, True, False))
        else:
            ok = evalplus_assertion(r.value, exp, spec.atol)
        out.append((ok, "pass" if ok else "fail", None))
    if custom_rows:
        from codea1.sandbox import Job

        results_src = "None"
        if task.expected and all(e is not None for e in task.expected):
            srcs = [value_source(e) for e in task.expected]
            results_src = f"[{', '.join(srcs)}]" if all(s is not None for s in srcs) else "None"
        code = f"{spec.helpers}\n__codea1_results = {results_src}\n{CUSTOM_HELPER}"
        [res] = executor.run(
            [Job(id="custom", code=code, calls=[c for _, c in custom_rows], timeout=task.timeout)]
        )
        for (j, _), r in zip(custom_rows, res.results if res.defined else []):
            ok = r.status == "ok" and r.value is True
            out[j] = (ok, "pass" if ok else "fail", r.error)
        if not res.defined:
            for j, _ in custom_rows:
                out[j] = (False, "crash", res.error)
    return out


def prepare_tasks(
    problems: list[Problem],
    executor: Any,
    *,
    gt_time_factor: float = 4.0,
    min_time_limit: float = 1.0,
    gt_timeout: float = 60.0,
    progress: Progress = None,
) -> list[PreparedTask]:
    """Expected values and GT checks for every problem (see the module docstring)."""
    from codea1.sandbox import Job

    tasks = [PreparedTask(task_id=p.id, problem=p, spec=spec_for(p)) for p in problems]
    for t in tasks:
        if t.spec is None:
            t.excluded, t.reason = True, "no tests: neither an EvalPlus check() program nor golden asserts"
    # expected values from the benchmark's own code, in clean children
    need = [t for t in tasks if not t.excluded and t.spec.expected_calls is not None]
    jobs = [
        Job(id=t.task_id, code=f"{t.spec.helpers}\n{PLAIN_HELPER}", calls=_plain(t.spec), timeout=gt_timeout)
        for t in need
    ]
    for t, res in zip(need, executor.run(jobs) if jobs else []):
        bad = next((r for r in res.results if r.status != "ok"), None) if res.defined else None
        if not res.defined or bad is not None:
            t.excluded = True
            t.reason = f"expected values could not be computed: {res.error or bad.error}"
        else:
            t.expected = [r.value for r in res.results]
    # GT against its own tests, timed
    live = [t for t in tasks if not t.excluded]
    jobs = [
        Job(id=t.task_id, code=t.program(t.problem.gt_solution), calls=t.spec.calls, timeout=gt_timeout)
        for t in live
    ]
    for t, res in zip(live, executor.run(jobs, progress=progress) if jobs else []):
        if not res.defined:
            t.excluded, t.reason = True, f"GT does not run: {res.error}"
            continue
        if t.spec.expected_calls is None:  # expected values are GT's own outputs
            if any(r.status != "ok" for r in res.results):
                t.excluded, t.reason = True, "GT raises on its own inputs"
                continue
            t.expected = [r.value for r in res.results]
        verdicts = _verdicts(t, 0, res.results, executor)
        failed = [i for i, v in enumerate(verdicts) if not v[0]]
        if failed:
            i = failed[0]
            t.excluded = True
            t.reason = f"GT fails its own tests ({len(failed)} of {len(verdicts)} inputs; first: input {i}, {verdicts[i][1]})"
            if t.expected and all(_same_items(res.results[j].value, t.expected[j]) for j in failed):
                t.reason += "; only the order of items differs (a set's iteration order, e.g. string hashing)"
            continue
        t.gt_seconds = max((r.seconds for r in res.results), default=0.0)
        t.timeout = time_limit(t.gt_seconds, gt_time_factor, min_time_limit)
    return tasks


def _same_items(out: Any, exp: Any) -> bool:
    """True when two sequences hold the same items in another order (an order-dependent expected value)."""
    if type(out) is not type(exp) or type(out) not in (list, tuple) or out == exp:
        return False
    try:
        return sorted(map(repr, out)) == sorted(map(repr, exp))
    except Exception:  # noqa: BLE001
        return False


def _plain(spec: CheckSpec) -> list[str]:
    return [f"__codea1_plain({c})" for c in spec.expected_calls]


def _chunks(n: int) -> list[tuple[int, int]]:
    out, start, size = [], 0, 1
    while start < n:
        out.append((start, min(n, start + size)))
        start += size
        size *= 4
    return out


def score_solutions(
    tasks: list[PreparedTask],
    samples: list[tuple[str, str]],
    executor: Any,
    *,
    progress: Progress = None,
) -> list[SampleResult]:
    """Verdicts for (task_id, solution) pairs, in input order; unknown or excluded tasks are marked."""
    from codea1.sandbox import Job

    by_id = {t.task_id: t for t in tasks}
    counters: dict[str, int] = {}
    results: list[SampleResult] = []
    pending: list[tuple[SampleResult, PreparedTask, list[tuple[int, int]]]] = []
    for task_id, solution in samples:
        index = counters.get(task_id, 0)
        counters[task_id] = index + 1
        res = SampleResult(task_id=task_id, index=index, passed=False, status="excluded", solution=solution)
        results.append(res)
        task = by_id.get(task_id)
        if task is None:
            res.error = "unknown task id"
        elif not task.excluded:
            pending.append((res, task, _chunks(len(task.spec.calls))))
    total = len(pending)
    done = 0
    while pending:
        jobs = []
        for k, (res, task, chunks) in enumerate(pending):
            a, b = chunks[0]
            jobs.append(
                Job(
                    id=str(k),
                    code=task.program(res.solution),
                    calls=task.spec.calls[a:b],
                    timeout=task.timeout,
                )
            )
        ran = executor.run(jobs)
        still = []
        for (res, task, chunks), out in zip(pending, ran):
            a, _ = chunks[0]
            if not out.defined:
                res.status, res.error, res.failed_input = "undefined", out.error, None
                done += 1
                continue
            verdicts = _verdicts(task, a, out.results, executor)
            bad = next((j for j, v in enumerate(verdicts) if not v[0]), None)
            if bad is not None:
                res.status, res.error, res.failed_input = verdicts[bad][1], verdicts[bad][2], a + bad
                done += 1
            elif len(chunks) == 1:
                res.passed, res.status = True, "pass"
                done += 1
            else:
                still.append((res, task, chunks[1:]))
        pending = still
        if progress is not None:
            progress(done, total)
    return results


def summarize(
    tasks: list[PreparedTask], results: list[SampleResult], ks: list[int] | None = None
) -> dict[str, Any]:
    """{"pass@1", "pass@k"..., "avg@n", "tasks": {id: {"n", "correct"}}, "excluded": [...], ...}."""
    per: dict[str, dict[str, int]] = {}
    excluded = {t.task_id: t.reason for t in tasks if t.excluded}
    for r in results:
        if r.task_id in excluded or r.status == "excluded":
            continue
        row = per.setdefault(r.task_id, {"n": 0, "correct": 0})
        row["n"] += 1
        row["correct"] += int(r.passed)
    counts = [(v["n"], v["correct"]) for v in per.values()]
    ks = sorted(set([1] + list(ks or [])))
    summary: dict[str, Any] = dict(pass_at_ks(counts, ks)) if counts else {"pass@1": 0.0}
    summary.setdefault("pass@1", 0.0)
    summary["avg@n"] = summary["pass@1"]
    summary["scored_tasks"] = len(per)
    summary["samples"] = sum(n for n, _ in counts)
    summary["tasks"] = dict(sorted(per.items()))
    summary["excluded"] = sorted(excluded)
    summary["excluded_reasons"] = dict(sorted(excluded.items()))
    return summary


def evaluate_samples(
    problems: list[Problem],
    samples: list[tuple[str, str]],
    executor: Any,
    ks: list[int] | None = None,
    progress_prepare: Progress = None,
    progress_score: Progress = None,
) -> tuple[dict[str, Any], list[SampleResult], list[PreparedTask]]:
    """prepare_tasks + score_solutions + summarize, with timings in the summary."""
    t0 = time.monotonic()
    tasks = prepare_tasks(problems, executor, progress=progress_prepare)
    t1 = time.monotonic()
    results = score_solutions(tasks, samples, executor, progress=progress_score)
    t2 = time.monotonic()
    summary = summarize(tasks, results, ks)
    summary["seconds"] = {"prepare": round(t1 - t0, 2), "score": round(t2 - t1, 2)}
    return summary, results, tasks
