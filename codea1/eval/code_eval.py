"""Code generation evaluation: solutions (from a model or an EvalPlus samples file) scored with pass@k.

Per problem, `prepare_tasks` reads the benchmark's tests (see codea1.eval.checker):
- an EvalPlus check() program (HumanEval+, MBPP+): its inputs become calls, expected values are computed
  in a clean child, the verdict per input follows evalplus 0.3.1's evaluator;
- else the golden asserts, compared exactly.
It runs GT itself through the same path and sets the time limit from GT's runtime (max(min_time_limit,
gt_time_factor x GT's slowest call), as EvalPlus does). A task whose GT fails its own tests is excluded
and reported. `score_solutions` runs every solution in the sandbox in rounds of growing call chunks
(1, 4, 16, ... calls), so a failing solution stops early; each round's trusted verdict jobs (custom loop
bodies) run together after the round's candidate jobs. No verdict is ever computed in
a process that ran candidate code.
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
    ORACLE_HELPERS,
    PLAIN_HELPER,
    CheckSpec,
    as_typed,
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
    alt: list[Any] = field(default_factory=list)  # values a special oracle compares with, per call
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
        spec = parse_evalplus(problem.test_code, problem.entry_point, task_id=problem.id)
        if spec is not None:
            return spec
    return spec_from_asserts(problem.golden_tests)


# ----------------------------------------------------------------------------------------- verdicts


@dataclass
class _CustomCheck:
    """Custom loop bodies to evaluate in a clean child: the job and the result index of each call."""

    job: Any
    rows: list[int]


def _local_verdicts(
    task: PreparedTask, start: int, results: list[Any]
) -> tuple[list[tuple[bool, str, str | None]], _CustomCheck | None]:
    """(passed, status, error) per call result, decided here; custom bodies go to a clean-child job."""
    spec = task.spec
    out: list[tuple[bool, str, str | None]] = []
    rows: list[int] = []
    calls: list[str] = []
    for j, r in enumerate(results):
        i = start + j
        if r.status != "ok":
            out.append((False, r.status, r.error))
            continue
        if spec.mode == "custom":
            call = custom_check_call(spec, i, r.value)
            if call is None:
                out.append((False, "fail", "output cannot be rebuilt for the check"))
            else:
                out.append((True, "", None))
                rows.append(j)
                calls.append(call)
            continue
        if spec.mode == "asserts":
            from codea1.sandbox.values import values_equal

            exp = task.expected[i]
            ok = (
                values_equal(r.value, exp)
                if spec.ops[i] == "=="
                else (r.value is exp and exp in (None, True, False))
            )
            out.append((ok, "pass" if ok else "fail", None))
            continue
        got, want = as_typed(r.value), as_typed(task.expected[i])
        if got is None or want is None:
            out.append((False, "fail", "output is not a (type, value) pair"))
            continue
        ok = evalplus_assertion(
            got[1],
            want[1],
            spec.atol,
            out_type=got[0],
            exp_type=want[0],
            oracle=spec.oracle,
            alt=task.alt[i] if task.alt else None,
        )
        out.append((ok, "pass" if ok else "fail", None))
    if not calls:
        return out, None
    from codea1.sandbox import Job

    results_src = "None"
    if task.expected and all(e is not None for e in task.expected):
        srcs = [value_source(e) for e in task.expected]
        results_src = f"[{', '.join(srcs)}]" if all(s is not None for s in srcs) else "None"
    code = f"{spec.helpers}\n__codea1_results = {results_src}\n{CUSTOM_HELPER}"
    return out, _CustomCheck(Job(id="custom", code=code, calls=calls, timeout=task.timeout), rows)


def _apply_custom(verdicts: list[tuple[bool, str, str | None]], custom: _CustomCheck, res: Any) -> None:
    if not res.defined:
        for j in custom.rows:
            verdicts[j] = (False, "crash", res.error)
        return
    for j, r in zip(custom.rows, res.results):
        ok = r.status == "ok" and r.value is True
        verdicts[j] = (ok, "pass" if ok else "fail", r.error)


def _verdicts(
    task: PreparedTask, start: int, results: list[Any], executor: Any
) -> list[tuple[bool, str, str | None]]:
    """(passed, status, error) per call result (custom bodies evaluated in a clean child now)."""
    verdicts, custom = _local_verdicts(task, start, results)
    if custom is not None:
        [res] = executor.run([custom.job])
        _apply_custom(verdicts, custom, res)
    return verdicts


# ------------------------------------------------------------------------------------ sample runs


class _Run:
    """One solution being scored: a candidate job per round, then maybe a trusted verdict job."""

    def __init__(self, task: PreparedTask, solution: str, result: SampleResult, timeout: float) -> None:
        self.task, self.solution, self.result, self.timeout = task, solution, result, timeout
        self.done = False
        self.seconds = 0.0  # the slowest call seen

    def finish(self, passed: bool, status: str, error: str | None = None, failed: int | None = None) -> None:
        self.result.passed, self.result.status = passed, status
        self.result.error, self.result.failed_input = error, failed
        self.done = True

    def _job(self, calls: list[str]) -> Any:
        from codea1.sandbox import Job

        return Job(
            id=self.task.task_id, code=self.task.program(self.solution), calls=calls, timeout=self.timeout
        )

    def _timed(self, results: list[Any]) -> None:
        self.seconds = max([self.seconds, *(r.seconds for r in results)])


class _ChunkRun(_Run):
    """EvalPlus inputs or golden asserts: chunks of calls, each call judged on its own."""

    def __init__(
        self, task: PreparedTask, solution: str, result: SampleResult, timeout: float, whole: bool = False
    ) -> None:
        super().__init__(task, solution, result, timeout)
        n = len(task.spec.calls)
        self.chunks = [(0, n)] if whole else _chunks(n)
        self.verdicts: list[tuple[bool, str, str | None]] = []
        self.custom: _CustomCheck | None = None
        self.results: list[Any] = []  # the last chunk's results

    def candidate_job(self) -> Any:
        a, b = self.chunks[0]
        return self._job(self.task.spec.calls[a:b])

    def take_candidate(self, out: Any) -> None:
        if not out.defined:
            self.finish(False, "undefined", out.error)
            return
        self.results = out.results
        self._timed(out.results)
        self.verdicts, self.custom = _local_verdicts(self.task, self.chunks[0][0], out.results)
        if self.custom is None:
            self._conclude()

    def verdict_job(self) -> Any:
        return self.custom.job if self.custom is not None else None

    def take_verdict(self, res: Any) -> None:
        _apply_custom(self.verdicts, self.custom, res)
        self.custom = None
        self._conclude()

    def _conclude(self) -> None:
        a = self.chunks[0][0]
        bad = next((j for j, v in enumerate(self.verdicts) if not v[0]), None)
        if bad is not None:
            self.finish(False, self.verdicts[bad][1], self.verdicts[bad][2], a + bad)
        elif len(self.chunks) == 1:
            self.finish(True, "pass")
        else:
            self.chunks.pop(0)


def _drive(runs: list[_Run], executor: Any, progress: Progress = None) -> None:
    """Rounds until every run is done: all candidate jobs, then all verdict jobs of the round."""
    active = list(runs)
    total, done = len(active), 0
    while active:
        for run, out in zip(active, executor.run([r.candidate_job() for r in active])):
            run.take_candidate(out)
        judged = [(r, r.verdict_job()) for r in active if not r.done]
        judged = [(r, j) for r, j in judged if j is not None]
        if judged:
            for (run, _), res in zip(judged, executor.run([j for _, j in judged])):
                run.take_verdict(res)
        still = [r for r in active if not r.done]
        done += len(active) - len(still)
        active = still
        if progress is not None:
            progress(done, total)


def _new_run(task: PreparedTask, solution: str, result: SampleResult, timeout: float, whole: bool) -> _Run:
    return _ChunkRun(task, solution, result, timeout, whole=whole)


# ------------------------------------------------------------------------------------- preparation


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
    tasks = [PreparedTask(task_id=p.id, problem=p, spec=spec_for(p)) for p in problems]
    for t in tasks:
        if t.spec is None:
            t.excluded, t.reason = True, "no tests: neither a check() program nor golden asserts"
    _expected_values([t for t in tasks if not t.excluded], executor, gt_timeout)
    # GT through the same path as a candidate, timed
    live = [t for t in tasks if not t.excluded]
    runs = [
        _new_run(t, t.problem.gt_solution, SampleResult(t.task_id, 0, False, ""), gt_timeout, whole=True)
        for t in live
    ]
    _gt_expected(runs, executor, progress)
    for t, run in zip(live, runs):
        if t.excluded:
            continue
        res = run.result
        if res.status == "undefined":
            t.excluded, t.reason = True, f"GT does not run: {res.error}"
            continue
        if not res.passed:
            t.excluded = True
            t.reason = _gt_failure(t, run)
            continue
        t.gt_seconds = run.seconds
        t.timeout = time_limit(t.gt_seconds, gt_time_factor, min_time_limit)
    return tasks


def _expected_values(tasks: list[PreparedTask], executor: Any, gt_timeout: float) -> None:
    """Expected values (and a special oracle's values) from the benchmark's own code, in clean children."""
    from codea1.sandbox import Job

    need = [t for t in tasks if t.spec.expected_calls is not None or t.spec.alt_calls]
    jobs = []
    for t in need:
        calls = list(t.spec.expected_calls or []) + [f"__codea1_plain({c})" for c in t.spec.alt_calls or []]
        jobs.append(
            Job(
                id=t.task_id,
                code=f"{t.spec.helpers}\n{ORACLE_HELPERS}\n{PLAIN_HELPER}",
                calls=calls,
                timeout=gt_timeout,
            )
        )
    for t, res in zip(need, executor.run(jobs) if jobs else []):
        bad = next((r for r in res.results if r.status != "ok"), None) if res.defined else None
        if not res.defined or bad is not None:
            t.excluded = True
            t.reason = f"expected values could not be computed: {res.error or bad.error}"
            continue
        values = [r.value for r in res.results]
        n = len(t.spec.expected_calls or [])
        if t.spec.expected_calls is not None:
            t.expected = values[:n]
        t.alt = values[n:]


def _gt_expected(runs: list[_Run], executor: Any, progress: Progress) -> None:
    """Runs GT; where expected values are GT's own outputs (no `results` in the program), takes them first."""
    from_gt = [r for r in runs if r.task.spec.expected_calls is None]
    if from_gt:
        for run, out in zip(from_gt, executor.run([r.candidate_job() for r in from_gt])):
            t = run.task
            if not out.defined:
                run.finish(False, "undefined", out.error)
            elif any(r.status != "ok" for r in out.results):
                t.excluded, t.reason = True, "GT raises on its own inputs"
                run.done = True
            else:
                t.expected = [_gt_value(t.spec, r.value) for r in out.results]
                run.take_candidate(out)  # GT judged on the very outputs it gave
        judged = [(r, r.verdict_job()) for r in from_gt if not r.done]
        judged = [(r, j) for r, j in judged if j is not None]
        for (run, _), res in zip(judged, executor.run([j for _, j in judged]) if judged else []):
            run.take_verdict(res)
    _drive([r for r in runs if not r.done], executor, progress)


def _gt_value(spec: CheckSpec, value: Any) -> Any:
    """An expected value from GT's output; for the "not None" oracle, whether it is not None (as EvalPlus)."""
    if spec.oracle == "not_none":
        typed = as_typed(value)
        return ("builtins.bool", typed is not None and typed[1] is not None)
    return value


def _gt_failure(t: PreparedTask, run: _Run) -> str:
    res = run.result
    verdicts = getattr(run, "verdicts", [])
    failed = [i for i, v in enumerate(verdicts) if not v[0]]
    reason = (
        f"GT fails its own tests ({len(failed)} of {len(verdicts)} inputs; first: input "
        f"{res.failed_input}, {res.status})"
    )
    results = getattr(run, "results", [])
    if failed and t.expected and len(results) == len(t.expected):

        def plain(v: Any) -> Any:
            typed = as_typed(v) if t.spec.mode == "assertion" else None
            return typed[1] if typed is not None else v

        if all(_same_items(plain(results[j].value), plain(t.expected[j])) for j in failed):
            reason += "; only the order of items differs (a set's iteration order, e.g. string hashing)"
    return reason


def _same_items(out: Any, exp: Any) -> bool:
    """True when two sequences hold the same items in another order (an order-dependent expected value)."""
    if type(out) is not type(exp) or type(out) not in (list, tuple) or out == exp:
        return False
    try:
        return sorted(map(repr, out)) == sorted(map(repr, exp))
    except Exception:  # noqa: BLE001
        return False


def _chunks(n: int) -> list[tuple[int, int]]:
    out, start, size = [], 0, 1
    while start < n:
        out.append((start, min(n, start + size)))
        start += size
        size *= 4
    return out or [(0, 0)]


# ----------------------------------------------------------------------------------------- scoring


def score_solutions(
    tasks: list[PreparedTask],
    samples: list[tuple[str, str]],
    executor: Any,
    *,
    progress: Progress = None,
) -> list[SampleResult]:
    """Verdicts for (task_id, solution) pairs, in input order; unknown or excluded tasks are marked."""
    by_id = {t.task_id: t for t in tasks}
    counters: dict[str, int] = {}
    results: list[SampleResult] = []
    runs: list[_Run] = []
    for task_id, solution in samples:
        index = counters.get(task_id, 0)
        counters[task_id] = index + 1
        res = SampleResult(task_id=task_id, index=index, passed=False, status="excluded", solution=solution)
        results.append(res)
        task = by_id.get(task_id)
        if task is None:
            res.error = "unknown task id"
        elif not task.excluded:
            runs.append(_new_run(task, solution, res, task.timeout, whole=False))
    _drive(runs, executor, progress)
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
