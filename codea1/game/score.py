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
from codea1.game.rewards import CodeScore, SuiteVerdicts, cure_suite_reward, cure_test_rewards, score_candidate
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
        if run.valid:  # an excused timeout is not held against the code, but does not clear a book test
            update.passed.extend(
                t
                for t, ok in zip(history, book_passed, strict=True)
                if ok and (t.call, t.expected_json) not in run.excused
            )
            for suite, verdict in zip(checked_suites, suites, strict=True):
                update.failed.extend(k.stored() for k, ok in zip(suite.kept, verdict.passed, strict=True) if not ok)
    return scores, update


def cure_rewards(
    scores: list[CodeScore],
    parsed: Sequence[Sequence[ParsedSuite]],
    answers: GTAnswers,
    runs: Sequence[CandidateRun],
    config: GameConfig,
    resolved: ResolvedCalls,
) -> None:
    """Replaces each suite's test_reward by CURE's: the mean reward of its tests (unparseable statements
    count -1), judged on the question's valid codes with the test's OWN predicted value.

    Correct codes: valid candidates that agree with GT on every call GT answered (i.e. pass every
    GT-validated test of the question); the others are wrong codes.
    """
    codes = [m for m, run in enumerate(runs) if run.valid]
    correct = [
        all(
            values_equal(runs[m].values.get(c, UNSERIALIZABLE), v, config.float_tol)
            for c, v in answers.gt.items()
            if c in runs[m].values
        )
        for m in codes
    ]
    for score, per_code in zip(scores, parsed, strict=True):
        for n, suite in enumerate(per_code):
            firsts: dict[str, Any] = {}
            unresolved = 0
            for t in suite.tests:
                call = resolved.calls.get(t.call)
                if call is None:
                    unresolved += 1
                    continue
                firsts.setdefault(call, t)  # the first test of each (resolved) CALL
            calls, tests = list(firsts), list(firsts.values())
            matrix = [
                [
                    prediction_right(
                        t.op,
                        answers.predicted.get(t.expected, UNSERIALIZABLE),
                        runs[c].values.get(call, UNSERIALIZABLE),
                        config.test_validity,
                        config.float_tol,
                    )
                    for call, t in zip(calls, tests, strict=True)
                ]
                for c in codes
            ]
            per_test = cure_test_rewards(matrix, correct) if codes else [0.0] * len(tests)
            per_test += [-1.0] * (suite.unparseable + unresolved)
            penalty = suite.nonprintable if config.nonprintable_penalty else 0.0
            score.suites[n].test_reward = cure_suite_reward(per_test, penalty)
