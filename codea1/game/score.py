"""Stage 4 of a round: each candidate's scores (Code-A1's rewards, or CURE's test rewards) and the Mistake
Book update of a question, from its candidates' verdicts. The reward formulas: codea1.game.rewards.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from codea1.config import GameConfig
from codea1.game.answers import CheckedSuite, GTAnswers
from codea1.game.matrix import CandidateRun
from codea1.game.mistake_book import BookUpdate, StoredTest
from codea1.game.parsing import ParsedSuite
from codea1.game.rewards import (
    CodeScore,
    SuiteVerdicts,
    cure_suite_reward,
    cure_suite_test_rewards,
    cure_test_rewards,
    score_candidate,
)
from codea1.judge import prediction_right, values_equal
from codea1.judge.resolve import ResolvedCalls
from codea1.sandbox.values import UNSERIALIZABLE


def score_question(
    history: Sequence[StoredTest],
    checked: Sequence[Sequence[CheckedSuite]],
    runs: Sequence[CandidateRun],
    config: GameConfig,
) -> tuple[list[CodeScore], BookUpdate]:
    """Code-A1's numbers for each candidate of one question, and the Mistake Book update from its valid
    candidates (book tests they passed, kept tests they failed)."""
    scores: list[CodeScore] = []
    update = BookUpdate()
    for checked_suites, run in zip(checked, runs, strict=True):
        book_passed = [run.passed.get((t.call, t.expected_json), False) for t in history]
        suites = []
        for suite in checked_suites:
            passed = [run.passed.get((k.call, k.expected_json), False) for k in suite.kept]
            suites.append(SuiteVerdicts(suite.valid_tests, suite.invalid_tests, passed, suite.nonprintable))
        scores.append(score_candidate(run.valid, book_passed, suites, config))
        if not run.valid:
            continue
        kept_failed = [
            k.stored()
            for suite, verdict in zip(checked_suites, suites, strict=True)
            for k, ok in zip(suite.kept, verdict.passed, strict=True)
            if not ok
        ]
        scores[-1].failed = _once([t for t, ok in zip(history, book_passed, strict=True) if not ok] + kept_failed)
        # an excused timeout is not held against the code, but does not clear a book test
        update.passed.extend(
            t for t, ok in zip(history, book_passed, strict=True) if ok and (t.call, t.expected_json) not in run.excused
        )
        update.failed.extend(kept_failed)
    return scores, update


def _once(tests: Sequence[StoredTest]) -> list[StoredTest]:
    """The tests each (CALL, GT's value) once, in order: what a candidate failed (Mistake Book tests, then
    kept tests)."""
    once: dict[tuple[str, str], StoredTest] = {}
    for t in tests:
        once.setdefault((t.call, t.expected_json), t)
    return list(once.values())


def cure_rewards(
    scores: list[CodeScore],
    parsed: Sequence[Sequence[ParsedSuite]],
    answers: GTAnswers,
    runs: Sequence[CandidateRun],
    config: GameConfig,
    resolved: ResolvedCalls,
) -> bool:
    """Replaces each suite's test_reward by CURE's, judged across the question's codes with the test's OWN
    predicted value; returns whether the question's tests are trained (docs/algorithm.md section 5).

    Correct codes: valid candidates that agree with GT on every call GT answered (i.e. pass every
    GT-validated test of the question); the others are wrong codes.
    - `cure` (CURE's reward.py): every candidate is a row, an invalid one a wrong code that fails every
      test; a suite's reward is the mean of its tests' cure_test_rewards, an unparseable or unresolved
      statement (and an empty suite) counting as a test no code passes. With no correct code nothing is
      trained: the rewards are 0 and False is returned.
    - `cure-suite`: the valid candidates are the rows (cure_suite_test_rewards), unparseable statements
      count -1, a suite with no test -1; always trained.
    """
    exact = config.selfplay_reward == "cure"
    codes = [m for m, run in enumerate(runs) if run.valid or exact]
    correct = [
        runs[m].valid
        and all(
            values_equal(runs[m].values.get(c, UNSERIALIZABLE), v, config.float_tol)
            for c, v in answers.gt.items()
            if c in runs[m].values
        )
        for m in codes
    ]
    trained = any(correct) or not exact
    for score, per_code in zip(scores, parsed, strict=True):
        for n, suite in enumerate(per_code):
            matrix, n_tests, missing = _cure_matrix(suite, codes, answers, runs, config, resolved)
            penalty = suite.nonprintable if config.nonprintable_penalty else 0.0
            if not exact:
                per_test = cure_suite_test_rewards(matrix, correct) if codes else [0.0] * n_tests
                score.suites[n].test_reward = cure_suite_reward(per_test + [-1.0] * missing, penalty)
            elif trained:
                no_pass = max(missing, 0 if n_tests else 1)  # an empty suite: one test no code passes
                rows = [row + [False] * no_pass for row in matrix]
                score.suites[n].test_reward = cure_suite_reward(cure_test_rewards(rows, correct) or [], penalty)
            else:
                score.suites[n].test_reward = 0.0
    return trained


def _cure_matrix(
    suite: ParsedSuite,
    codes: Sequence[int],
    answers: GTAnswers,
    runs: Sequence[CandidateRun],
    config: GameConfig,
    resolved: ResolvedCalls,
) -> tuple[list[list[bool]], int, int]:
    """matrix[code][test]: whether each of `codes` passes the first test of each resolved CALL of the suite,
    judged with the test's own predicted value (an invalid code passes none); the count of those tests; and
    the count of the suite's statements that are no test (unparseable or unresolved)."""
    firsts: dict[str, Any] = {}
    unresolved = 0
    for t in suite.tests:
        call = resolved.calls.get(t.call)
        if call is None:
            unresolved += 1
            continue
        firsts.setdefault(call, t)  # the first test of each (resolved) CALL
    matrix = [
        [
            runs[c].valid
            and prediction_right(
                t.op,
                answers.predicted.get(t.expected, UNSERIALIZABLE),
                runs[c].values.get(call, UNSERIALIZABLE),
                config.test_validity,
                config.float_tol,
            )
            for call, t in firsts.items()
        ]
        for c in codes
    ]
    return matrix, len(firsts), suite.unparseable + unresolved
