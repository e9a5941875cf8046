"""Code-A1 rewards (docs/algorithm.md section 5) as pure functions over execution verdicts.

Everything here takes plain numbers and booleans, so each formula is unit-tested by hand. The records
SuiteScore/CodeScore are what `play_question` and `codea1 score` report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from codea1.config import GameConfig

if TYPE_CHECKING:
    from codea1.game.mistake_book import StoredTest


@dataclass
class SuiteVerdicts:
    """What one suite of tests did to one candidate.

    valid_tests: V, kept unique tests (those whose predicted value was wrong are kept too).
    invalid_tests: I, unparseable + duplicate + raised/timed out on GT + wrong predicted value.
    passed: one verdict per kept test, in suite order (a timeout or crash is a failure).
    nonprintable: share of non-printable characters in the suite's response.
    """

    valid_tests: int
    invalid_tests: int
    passed: list[bool] = field(default_factory=list)
    nonprintable: float = 0.0


@dataclass
class SuiteScore:
    valid_tests: int
    invalid_tests: int
    valid_ratio: float
    gen_pass: float
    gen_fail: float
    adv: float
    test_reward: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CodeScore:
    """One candidate's numbers; `failed`: the valid tests it failed, each once with GT's expected value (the
    Mistake Book tests it replayed, then its suites' kept tests, in order; none for invalid code, which
    fails every test), what a breaking test fed back to the coder needs. Not part of to_dict."""

    valid: bool
    code_reward: float
    hist_pass: float
    topvar_selected: bool = False
    suites: list[SuiteScore] = field(default_factory=list)
    failed: list[StoredTest] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "code_reward": self.code_reward,
            "hist_pass": self.hist_pass,
            "topvar_selected": self.topvar_selected,
            "suites": [s.to_dict() for s in self.suites],
        }


def valid_ratio(valid_tests: int, invalid_tests: int, tests_per_suite: int = 8) -> float:
    """clip(min(V/8, 1 - I/8), 0, 1): full marks need 8 kept tests and no invalid statement."""
    t = float(tests_per_suite)
    return min(max(min(valid_tests / t, 1.0 - invalid_tests / t), 0.0), 1.0)


def gen_pass(passed: Sequence[bool]) -> float:
    """Share of the suite's kept tests the candidate passed (0 when the suite kept none)."""
    return sum(1 for p in passed if p) / len(passed) if passed else 0.0


def gen_fail(passed: Sequence[bool], tests_per_suite: int = 8, denominator: str = "fixed") -> float:
    """Failures among the first `tests_per_suite` kept tests, divided by tests_per_suite ("fixed",
    reference code) or by how many of those tests exist ("actual", paper figure); 0 when none kept."""
    window = list(passed)[:tests_per_suite]
    if not window:
        return 0.0
    failures = sum(1 for p in window if not p)
    return failures / (tests_per_suite if denominator == "fixed" else len(window))


def hist_pass(book_passed: Sequence[bool]) -> float:
    """Share of the H replayed Mistake Book tests the candidate passed (0 when H = 0)."""
    return sum(1 for p in book_passed if p) / len(book_passed) if book_passed else 0.0


def pass_score(hist: float, gen_pass_value: float, h: int, v: int) -> float:
    """Pass(m,n): mean of hist_pass and gen_pass when both exist, else whichever exists, else 0."""
    if h > 0 and v > 0:
        return (hist + gen_pass_value) / 2.0
    if h > 0:
        return hist
    if v > 0:
        return gen_pass_value
    return 0.0


def adv_score(hist: float, gen_fail_value: float, h: int, v: int) -> float:
    """Adv(m,n): (gen_fail + hist_pass)/2 when both exist; gen_fail with no book; 0 with no kept test.

    hist_pass enters on purpose (reference code): a candidate that already passes its old failures
    is one that needs new attacks.
    """
    if v <= 0:
        return 0.0
    if h > 0:
        return (gen_fail_value + hist) / 2.0
    return gen_fail_value


def code_reward(valid: bool, pass_scores: Sequence[float], hist: float, h: int) -> float:
    """R_C(m) = mean over suites of Pass(m,n); 0 for invalid code. With no suite at all, hist_pass."""
    if not valid:
        return 0.0
    if not pass_scores:
        return hist if h > 0 else 0.0
    return sum(pass_scores) / len(pass_scores)


def a1_suite_reward(
    valid_code: bool, valid_ratio_value: float, adv: float, alpha: float = 0.5, penalty: float = 0.0
) -> float:
    """R_T = alpha*valid_ratio + (1-alpha)*Adv, 0 against invalid code; minus the format penalty
    (share of non-printable characters), which applies in both cases."""
    base = alpha * valid_ratio_value + (1.0 - alpha) * adv if valid_code else 0.0
    return base - penalty


def score_candidate(
    valid: bool, book_passed: Sequence[bool], suites: Sequence[SuiteVerdicts], config: GameConfig
) -> CodeScore:
    """All Code-A1 numbers of one candidate: hist_pass, R_C, and per suite valid_ratio..R_T."""
    h = len(book_passed)
    hist = hist_pass(book_passed) if valid else 0.0
    scores: list[SuiteScore] = []
    passes: list[float] = []
    for suite in suites:
        v = suite.valid_tests
        ratio = valid_ratio(v, suite.invalid_tests, config.tests_per_suite)
        if valid:
            gp = gen_pass(suite.passed)
            gf = gen_fail(suite.passed, config.tests_per_suite, config.fail_denominator)
            adv = adv_score(hist, gf, h, v)
            passes.append(pass_score(hist, gp, h, v))
        else:
            gp = gf = adv = 0.0
        penalty = suite.nonprintable if config.nonprintable_penalty else 0.0
        reward = a1_suite_reward(valid, ratio, adv, config.alpha, penalty)
        scores.append(SuiteScore(v, suite.invalid_tests, ratio, gp, gf, adv, reward))
    return CodeScore(valid=valid, code_reward=code_reward(valid, passes, hist, h), hist_pass=hist, suites=scores)


def golden_reward(valid: bool, golden_passed: Sequence[bool]) -> float:
    """Golden-Tests baseline: share of the dataset's human tests passed; invalid code (or no golden
    test at all) gets 0."""
    if not valid or not golden_passed:
        return 0.0
    return sum(1 for p in golden_passed if p) / len(golden_passed)


def cure_test_rewards(
    verdicts: Sequence[Sequence[bool]], correct: Sequence[bool], post_stage: bool = False
) -> list[float] | None:
    """CURE's reward of each test of one question before normalisation (`game.selfplay_reward: cure`),
    from verdicts[code][test] (True = the code passed the test, judged against the test's own predicted
    value) and which codes are correct (pass every ground-truth test). CURE's optimization/reward.py at
    69fe174, lines 127-155:

    - no correct code: None, the question's tests are not trained (`if len(correct_code_list) > 0`);
    - sign: +1 for a test every correct code passes, else -1;
    - scale, only where wrong codes exist: a +1 test is scaled by the share of wrong codes it rejects, a
      -1 test by the share it lets through (post_stage: by whether any wrong code does). With no wrong
      code the sign is the reward: a test every code passes earns +1.
    """
    right = [i for i, ok in enumerate(correct) if ok]
    if not right:
        return None
    wrong = [i for i, ok in enumerate(correct) if not ok]
    n_tests = len(verdicts[0]) if verdicts else 0
    rewards = []
    for t in range(n_tests):
        if all(verdicts[i][t] for i in right):
            caught = [not verdicts[i][t] for i in wrong]
            scale = (all(caught) if post_stage else sum(caught) / len(caught)) if wrong else 1.0
            rewards.append(float(scale))
        else:
            through = [bool(verdicts[i][t]) for i in wrong]
            scale = (any(through) if post_stage else sum(through) / len(through)) if wrong else 1.0
            rewards.append(-float(scale))
    return rewards


def cure_normalize(rewards: Sequence[float]) -> list[float] | None:
    """CURE's per-question normalisation (reward.py at 69fe174, lines 59-66, enable_efficient off): each
    reward minus the mean over the question's tests, divided by their population std; None (nothing
    trained) when the std is 0."""
    if not rewards:
        return None
    mean = sum(rewards) / len(rewards)
    std = (sum((r - mean) ** 2 for r in rewards) / len(rewards)) ** 0.5
    if std == 0:
        return None
    return [(r - mean) / std for r in rewards]


def cure_suite_test_rewards(verdicts: Sequence[Sequence[bool]], correct: Sequence[bool]) -> list[float]:
    """The `cure-suite` variant of CURE's test reward (codea1's earlier `cure`), from the same verdicts.

    A test that every correct code passes earns + the share of wrong codes it rejects; a test that
    fails some correct code earns - the share of wrong codes it lets through. Where it differs from
    CURE (cure_test_rewards): with no wrong code, a test passing every code earns 0 (CURE: +1); with no
    correct code the first branch holds vacuously, so a test every code fails (a wrong expected value)
    earns +1 (CURE trains no test of such a question).
    """
    n_tests = len(verdicts[0]) if verdicts else 0
    wrong = [i for i, ok in enumerate(correct) if not ok]
    right = [i for i, ok in enumerate(correct) if ok]
    rewards = []
    for t in range(n_tests):
        if all(verdicts[i][t] for i in right):
            share = sum(1 for i in wrong if not verdicts[i][t]) / len(wrong) if wrong else 0.0
            rewards.append(share)
        else:
            share = sum(1 for i in wrong if verdicts[i][t]) / len(wrong) if wrong else 0.0
            rewards.append(-share if wrong else -1.0)
    return rewards


def cure_suite_reward(test_rewards: Sequence[float], penalty: float = 0.0) -> float:
    """A suite's CURE reward: the mean over its tests; -1 for a suite with no usable test (otherwise
    writing nothing would beat writing a wrong test). Minus the format penalty."""
    base = sum(test_rewards) / len(test_rewards) if test_rewards else -1.0
    return base - penalty
