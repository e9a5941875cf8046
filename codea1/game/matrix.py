"""Stage 3 of a round: the execution matrix. Each candidate runs its Mistake Book tests and each suite's kept
tests, one sandbox job per group with its own time limit (from GT's time) and byte budget; each job's
result is decided against GT's values as it ends (codea1.judge), and a timeout is checked against GT's own
repeat before it counts. Every call starts from a clean program, as each of GT's does: a candidate whose
program may keep state between calls (codea1.game.statefulness) runs each call in a job of its own; the
calls of any other run one after another in its group's job, which cannot differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codea1.config import CURE_REWARDS, GameConfig
from codea1.game.answers import CheckedSuite, GTAnswers
from codea1.game.jobs import run_jobs
from codea1.game.mistake_book import StoredTest
from codea1.game.parsing import ParsedSuite
from codea1.game.statefulness import may_keep_state
from codea1.judge import decide, encode_expected, values_equal
from codea1.judge.jobs import candidate_job, gt_job, rerun_job
from codea1.judge.resolve import ResolvedCalls
from codea1.problem import Problem, candidate_program
from codea1.sandbox import Job, JobResult, OnProgress
from codea1.sandbox.api import Executor
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable

Pair = tuple[str, str]  # (CALL, GT's value as JSON): one executable test


@dataclass
class CandidateRun:
    """What one candidate did: whether its program ran (valid), its verdict on each executable test, and
    (CURE) its plain value of each call."""

    valid: bool = False
    passed: dict[Pair, bool] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    excused: set[Pair] = field(default_factory=set)  # timed out twice while GT's own repeat timed out too

    @property
    def timeouts_excused(self) -> int:
        return len(self.excused)


Group = list[tuple[Pair, Any]]  # the executable tests of one sandbox job: (CALL, GT's value as JSON), value


def _groups(history: Sequence[StoredTest], suites: Sequence[CheckedSuite]) -> list[Group]:
    """The candidate's jobs: its Mistake Book tests, then the kept tests of each suite, each group its own
    job (its own byte budget and time, so no suite's large values or slow calls reach another's verdicts).
    A (CALL, value) pair runs once, in the first group that has it."""
    seen: set[Pair] = set()
    groups: list[Group] = []
    for items in [[(t.call, t.expected_json, t.expected) for t in history]] + [
        [(k.call, k.expected_json, k.expected) for k in s.kept] for s in suites
    ]:
        group = []
        for call, exp_json, value in items:
            if (call, exp_json) not in seen:
                seen.add((call, exp_json))
                group.append(((call, exp_json), value))
        groups.append(group)
    return [g for g in groups if g] or [[]]  # an empty candidate still runs once: valid when it runs


def _cure_groups(
    history: Sequence[StoredTest],
    checked: Sequence[Sequence[CheckedSuite]],
    parsed: Sequence[Sequence[ParsedSuite]],
    resolved: ResolvedCalls,
) -> list[Group]:
    """CURE: every candidate runs the book tests, every kept test of the question, and the resolved calls
    GT could not answer (a correct code may raise there too), so tests can be judged across codes; one
    group per suite as for Code-A1, the unanswered calls in a group of their own."""
    groups = _groups(history, [s for per_code in checked for s in per_code])
    seen = {pair[0] for group in groups for pair, _ in group}
    extra: Group = []
    for test in (t for per_code in parsed for suite in per_code for t in suite.tests):
        call = resolved.calls.get(test.call)
        if call is not None and call not in seen:
            seen.add(call)
            extra.append(((call, encode_expected(UNSERIALIZABLE)), UNSERIALIZABLE))
    return [g for g in [*groups, extra] if g] or [[]]


def run_matrix(
    problems: Sequence[Problem],
    codes: Sequence[Sequence[str]],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    histories: Sequence[Sequence[StoredTest]],
    checked: Sequence[Sequence[Sequence[CheckedSuite]]],
    answers: Sequence[GTAnswers],
    resolved: Sequence[ResolvedCalls],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
) -> dict[tuple[int, int], CandidateRun]:
    """Per candidate, one sandbox job for its Mistake Book tests and one per suite (in CURE mode, every
    test of the question, grouped the same way), or one per call for a program that may keep state between
    calls (each call then starts from a clean program, as GT's do); each job's time limit comes from GT's
    time for its own calls. Identical (CALL, value) pairs of a candidate run once. Every candidate runs, an
    empty one too: as in the reference code, code that compiles and runs is valid (in every one of its
    jobs)."""

    cure = config.selfplay_reward in CURE_REWARDS
    jobs, plan = [], []  # plan[n]: (question, candidate, pairs, values) of job n
    for q, problem in enumerate(problems):
        shared = _cure_groups(histories[q], checked[q], suites[q], resolved[q]) if cure else None
        for m, code in enumerate(codes[q]):
            groups = shared if shared is not None else _groups(histories[q], checked[q][m])
            if may_keep_state(candidate_program(problem, code), problem.entry_point):
                groups = [[pair] for group in groups for pair in group] or [[]]
            for g, group in enumerate(groups):
                pairs, values = [pair for pair, _ in group], [value for _, value in group]
                slowest = max((answers[q].gt_seconds.get(call, 0.0) for call, _ in pairs), default=0.0)
                limit = max(config.test_timeout, config.timeout_factor * slowest)
                jobs.append(candidate_job(f"cand:{problem.id}:{m}:{g}", problem, code, [c for c, _ in pairs], limit))
                plan.append((q, m, pairs, values))
    # outside CURE a candidate's values matter only for their verdicts: each job is reduced to them as it
    # ends, so a batch's values are never held together (a large batch of large values would otherwise
    # stay in the parent until the last job ends)
    judge = None if cure else _verdicts_only(config.float_tol)
    first = run_jobs(executor, jobs, progress, (lambda n, res: judge(res, plan[n][3])) if judge else None)
    results = _recheck_timeouts(problems, jobs, plan, first, executor, judge)
    runs: dict[tuple[int, int], CandidateRun] = {}
    for (q, m, pairs, values), (result, excused) in zip(plan, results, strict=True):
        run = runs.get((q, m))
        if run is None:
            run = runs[q, m] = CandidateRun(valid=True)
        run.valid = run.valid and bool(result.defined)
        for i, (pair, value, res) in enumerate(zip(pairs, values, result.results, strict=True)):
            if i in excused:
                run.excused.add(pair)
            if cure:
                ok = res.status == "ok" and not contains_unserializable(res.value)
                run.values[pair[0]] = res.value if ok else UNSERIALIZABLE
                run.passed[pair] = ok and values_equal(res.value, value, config.float_tol)
            else:
                run.passed[pair] = res.status == "pass" or i in excused
    return runs


def _verdicts_only(float_tol: float | None) -> Callable[[JobResult, Sequence[Any]], JobResult]:
    """A job's result decided against its expected values (one per call), its values then dropped."""
    return lambda result, expected: decide(result, expected, float_tol).without_values()


def _recheck_timeouts(
    problems: Sequence[Problem],
    jobs: list[Job],
    plan: list,
    results: list[JobResult],
    executor: Executor,
    judge: Callable[[JobResult, Sequence[Any]], JobResult] | None = None,
) -> list[tuple[JobResult, set[int]]]:
    """Timeouts that do not pay for noise. GT's time, which sets the limit, was measured in another stage
    under other load: in the round-3 audit a correct candidate near the limit failed 3 of 308 calls on a
    loaded machine (benchmarks/timeout_noise.py measures it here). So each call a candidate timed out on
    is run again in GT's program with the same limit, now:
    - GT's repeat times out too: the limit cannot be met on this machine now, and the call is excused
      (not held against the candidate);
    - GT's repeat took more than half the limit (the machine is slow now): the candidate's call runs once
      more and keeps that outcome;
    - else the timeout stands (a looping candidate costs one fast GT call more, no second wait).
    judge(result, expected), where given, decides the second runs as the first (plan[n][3]: job n's
    expected values). Returns (result, indices of excused calls) per job."""
    out = [(result, set()) for result in results]
    late = [
        (n, [i for i, r in enumerate(res.results) if r.status == "timeout"])
        for n, res in enumerate(results)
        if res.defined
    ]
    late = [(n, idx) for n, idx in late if idx]
    if not late:
        return out
    gt_jobs = [
        gt_job(
            f"gt-again:{problems[plan[n][0]].id}",
            problems[plan[n][0]],
            [jobs[n].calls[i] for i in idx],
            jobs[n].timeout,
        )
        for n, idx in late
    ]
    retry_plan, retry_jobs = [], []
    for (n, idx), gt in zip(late, executor.run(gt_jobs), strict=True):
        slow = []
        for k, i in enumerate(idx):
            repeat = gt.results[k] if gt.defined and k < len(gt.results) else None
            if repeat is None or repeat.status == "timeout":
                out[n][1].add(i)
            elif repeat.seconds > jobs[n].timeout / 2:
                slow.append(i)
        if slow:
            retry_plan.append((n, slow))
            retry_jobs.append(rerun_job(jobs[n], slow))

    def again_judged(j: int, res: JobResult) -> JobResult:
        n, slow = retry_plan[j]
        return judge(res, [plan[n][3][i] for i in slow])

    for (n, slow), again in zip(
        retry_plan, run_jobs(executor, retry_jobs, None, again_judged if judge else None), strict=True
    ):
        for k, i in enumerate(slow):
            if again.defined and k < len(again.results):
                out[n][0].results[i] = again.results[k]
    return out
