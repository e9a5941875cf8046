"""Stages 1b and 2 of a round: GT's answers. Every CALL of a question's suites is turned into plain values
once (codea1.judge.resolve), GT answers each resolved CALL and evaluates each non-literal EXPECTED in a job
of its own, and each suite is checked against those answers: the tests GT answered are kept with GT's value,
the others counted invalid by reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codea1.config import GameConfig
from codea1.game.jobs import run_jobs, unique
from codea1.game.mistake_book import StoredTest
from codea1.game.parsing import ParsedSuite
from codea1.judge import encode_expected, literal, prediction_right
from codea1.judge.jobs import gt_job
from codea1.judge.resolve import CallSet, ResolvedCalls
from codea1.judge.resolve import resolve_calls as judge_resolve_calls
from codea1.problem import Problem, values_program
from codea1.sandbox import OnProgress
from codea1.sandbox.api import Executor
from codea1.sandbox.values import contains_unserializable


@dataclass
class KeptTest:
    """A test GT answered: CALL with GT's value. predicted_ok: the model's own EXPECTED
    agreed with GT (False: counted invalid but still used to attack the code)."""

    call: str
    expected: Any
    expected_json: str
    predicted_ok: bool

    def stored(self) -> StoredTest:
        return StoredTest(call=self.call, expected_json=self.expected_json)


@dataclass
class CheckedSuite:
    """Oracle outcome of one suite: kept tests and the invalid counts by reason."""

    kept: list[KeptTest] = field(default_factory=list)
    unparseable: int = 0
    duplicate: int = 0
    gt_error: int = 0
    wrong_expected: int = 0
    nonprintable: float = 0.0
    unresolved: int = 0  # CALLs whose arguments need the function under test, or are not plain values

    @property
    def valid_tests(self) -> int:
        return len(self.kept)

    @property
    def invalid_tests(self) -> int:
        return self.unparseable + self.duplicate + self.gt_error + self.wrong_expected + self.unresolved


def resolve_calls(
    problems: Sequence[Problem],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
) -> list[ResolvedCalls]:
    """Values in (codea1.judge.resolve): every CALL of each question's suites becomes the function under
    test applied to plain values, once, and the same values go to GT and to every candidate."""
    sets = [
        CallSet(
            problem.id,
            problem.entry_point,
            values_program(problem),
            [t.call for per_code in suites[q] for suite in per_code for t in suite.tests],
        )
        for q, problem in enumerate(problems)
    ]
    return judge_resolve_calls(sets, executor, config.test_timeout, progress)


@dataclass
class GTAnswers:
    """GT's answers for one question, by source text.

    gt: CALL -> GT's value (only calls GT answered with plain data); predicted: EXPECTED -> its value
    (literals read here, other expressions evaluated in GT's program, as the reference code does);
    gt_seconds: CALL -> GT's time for it; gt_error: why GT's program did not run, if it did not.
    """

    gt: dict[str, Any] = field(default_factory=dict)
    predicted: dict[str, Any] = field(default_factory=dict)
    gt_seconds: dict[str, float] = field(default_factory=dict)
    gt_error: str | None = None


def ask_gt(
    problems: Sequence[Problem],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    executor: Executor,
    config: GameConfig,
    resolved: Sequence[ResolvedCalls],
    histories: Sequence[Sequence[StoredTest]] | None = None,
    progress: OnProgress = None,
) -> list[GTAnswers]:
    """Runs every distinct resolved CALL of each question in GT's program (answers are keyed by the
    resolved CALL) and every non-literal EXPECTED, each in a job of its own: every GT call starts from
    GT's clean module state, so no test (a sibling sample's stateful call, an EXPECTED with side effects)
    can change another test's GT answer, and a slow GT is spread over the workers. The Mistake Book's
    calls (`histories`) are timed the same way (gt_seconds only), so a replayed test's time limit is set
    by GT's own time, as a new test's is."""

    answers = [GTAnswers() for _ in problems]
    # a book test's GT answered within test_timeout when it was kept; timed now, under this step's load, it
    # gets the limit a candidate would, and a GT that misses even that counts as taking all of it
    book_limit = config.timeout_factor * config.test_timeout
    jobs, plan = [], []  # plan: (question, "gt" | "book" | "expected", sources)
    for q, problem in enumerate(problems):
        tests = [t for per_code in suites[q] for suite in per_code for t in suite.tests]
        calls = unique([c for c in (resolved[q].calls.get(t.call) for t in tests) if c])
        in_suites = set(calls)
        book = unique([t.call for t in (histories[q] if histories is not None else ()) if t.call not in in_suites])
        pending = []
        for source in unique([t.expected for t in tests]):
            ok, value = literal(source)
            if ok:
                answers[q].predicted[source] = value
            else:
                pending.append(source)
        for kind, sources, limit in (("gt", calls, config.test_timeout), ("book", book, book_limit)):
            for k, call in enumerate(sources):
                jobs.append(gt_job(f"{kind}:{problem.id}#{k}", problem, [call], limit))
                plan.append((q, kind, [call]))
        for source in pending:  # one job each: an EXPECTED with side effects reaches no other test
            jobs.append(gt_job(f"expected:{problem.id}", problem, [source], config.test_timeout))
            plan.append((q, "expected", [source]))
    for (q, kind, sources), result in zip(plan, run_jobs(executor, jobs, progress), strict=True):
        answer = answers[q]
        if kind == "gt" and not result.defined and answer.gt_error is None:
            answer.gt_error = result.error or "GT did not run"
        for source, res in zip(sources, result.results, strict=False):
            if kind == "book":
                answer.gt_seconds[source] = book_limit if res.status == "timeout" else float(res.seconds or 0.0)
            if res.status != "ok" or contains_unserializable(res.value):
                continue
            if kind == "gt":
                answer.gt[source] = res.value
                answer.gt_seconds[source] = float(res.seconds or 0.0)
            elif kind == "expected":
                answer.predicted[source] = res.value
    return answers


def validate_suite(
    parsed: ParsedSuite, answers: GTAnswers, config: GameConfig, resolved: ResolvedCalls
) -> CheckedSuite:
    """Oracle validation of one suite: a CALL that cannot be turned into values is dropped (invalid), a
    repeated CALL (the same resolved call) is dropped (invalid), a CALL GT could not answer is dropped
    (invalid), and every other test is kept with its resolved CALL and GT's value; a wrong prediction of
    that value is counted invalid but kept (config.test_validity says what a right prediction is)."""
    out = CheckedSuite(unparseable=parsed.unparseable, nonprintable=parsed.nonprintable)
    seen: set[str] = set()
    for test in parsed.tests:
        call = resolved.calls.get(test.call)
        if call is None:
            out.unresolved += 1
            continue
        if call in seen:
            out.duplicate += 1
            continue
        seen.add(call)
        if call not in answers.gt:
            out.gt_error += 1
            continue
        value = answers.gt[call]
        ok = test.expected in answers.predicted and prediction_right(
            test.op, answers.predicted[test.expected], value, config.test_validity, config.float_tol
        )
        if not ok:
            out.wrong_expected += 1
        out.kept.append(KeptTest(call, value, encode_expected(value), ok))
    return out
