"""Code-A1 rewards (docs/algorithm.md section 5), every case with numbers worked out by hand."""

import pytest

from codea1.config import GameConfig
from codea1.errors import UserError
from codea1.game import rewards as R

approx = pytest.approx


def test_valid_ratio_cases():
    assert R.valid_ratio(8, 0) == 1.0  # full suite, nothing invalid
    assert R.valid_ratio(4, 0) == 0.5  # min(4/8, 1) = 0.5
    assert R.valid_ratio(10, 3) == 0.625  # min(10/8, 1 - 3/8) = min(1.25, 0.625)
    assert R.valid_ratio(2, 1) == 0.25  # min(0.25, 0.875)
    assert R.valid_ratio(0, 12) == 0.0  # min(0, -0.5) clipped to 0
    assert R.valid_ratio(16, 0) == 1.0  # min(2, 1) = 1, clipped
    assert R.valid_ratio(4, 0, tests_per_suite=4) == 1.0


def test_gen_pass_and_gen_fail_fixed_and_actual():
    assert R.gen_pass([True, True, False]) == approx(2 / 3)
    assert R.gen_pass([]) == 0.0
    # fixed denominator 8 (reference code): 2 failures / 8
    assert R.gen_fail([True, False, False]) == 0.25
    # actual count (paper figure): 2 failures / 3 tests
    assert R.gen_fail([True, False, False], denominator="actual") == approx(2 / 3)
    # only the first 8 kept tests count: failures at positions 9 and 10 are ignored
    assert R.gen_fail([True] * 8 + [False, False]) == 0.0
    assert R.gen_fail([False] * 10) == 1.0  # 8 of the first 8 fail
    assert R.gen_fail([False] * 10, denominator="actual") == 1.0
    assert R.gen_fail([]) == 0.0
    assert R.gen_fail([], denominator="actual") == 0.0


def test_hist_pass():
    assert R.hist_pass([True, False, False, False]) == 0.25
    assert R.hist_pass([]) == 0.0


def test_pass_and_adv_four_cases():
    # H > 0 and V > 0: means
    assert R.pass_score(0.5, 0.25, h=4, v=3) == 0.375
    assert R.adv_score(0.5, 0.25, h=4, v=3) == 0.375  # (gen_fail 0.25 + hist_pass 0.5) / 2
    # V = 0: Pass = hist_pass, Adv = 0
    assert R.pass_score(0.5, 0.0, h=4, v=0) == 0.5
    assert R.adv_score(0.5, 0.0, h=4, v=0) == 0.0
    # H = 0: Pass = gen_pass, Adv = gen_fail
    assert R.pass_score(0.0, 0.75, h=0, v=4) == 0.75
    assert R.adv_score(0.0, 0.125, h=0, v=4) == 0.125
    # neither
    assert R.pass_score(0.0, 0.0, h=0, v=0) == 0.0
    assert R.adv_score(0.0, 0.0, h=0, v=0) == 0.0
    # a suite with no new failure still has Adv = hist_pass/2 in the reference code (0.25 -> 0.125)
    assert R.adv_score(0.25, 0.0, h=4, v=8) == 0.125


def test_code_reward_and_test_reward_edge_cases():
    assert R.code_reward(False, [1.0, 1.0], 1.0, 4) == 0.0  # invalid code: 0
    assert R.code_reward(True, [0.5, 1.0], 0.0, 0) == 0.75
    assert R.code_reward(True, [], 0.5, 2) == 0.5  # no suite: the book alone
    assert R.code_reward(True, [], 0.0, 0) == 0.0
    assert R.a1_suite_reward(False, 1.0, 1.0) == 0.0  # against invalid code: 0
    assert R.a1_suite_reward(False, 1.0, 1.0, penalty=0.1) == approx(-0.1)  # the format penalty still applies
    assert R.a1_suite_reward(True, 1.0, 0.5, alpha=0.25) == approx(0.25 + 0.375)
    assert R.a1_suite_reward(True, 0.5, 0.5, alpha=0.5, penalty=0.25) == approx(0.25)


def test_paper_worked_example_fixed_denominator():
    # The paper's figure: Valid 1.0, Adv 0.417 -> R_T = 0.5*1.0 + 0.5*0.417 = 0.7085 ~ 0.708.
    # With the fixed-8 gen_fail, Valid 1.0 needs V >= 8 and I = 0, and Adv = (gen_fail + hist_pass)/2 = 5/12
    # needs gen_fail + hist_pass = 5/6 with gen_fail = k/8 and hist_pass = j/H (H <= 8). k/8 + j/H = 5/6
    # has the solution k = 4, j = 1, H = 3: 4/8 + 1/3 = 5/6 (also k = 4, j = 2, H = 6).
    # So: 8 kept tests, 4 of them failed, 3 Mistake Book tests of which 1 passed.
    config = GameConfig()
    suite = R.SuiteVerdicts(valid_tests=8, invalid_tests=0, passed=[True, False] * 4)
    score = R.score_candidate(True, [True, False, False], [suite], config)
    s = score.suites[0]
    assert s.valid_ratio == 1.0
    assert s.gen_fail == 0.5
    assert score.hist_pass == approx(1 / 3)
    assert s.adv == approx(5 / 12)  # 0.41667
    assert s.test_reward == approx(0.5 + 0.5 * 5 / 12)  # 0.70833
    assert round(s.test_reward, 3) == 0.708
    # R_C = Pass = (hist_pass 1/3 + gen_pass 4/8) / 2 = 5/12
    assert score.code_reward == approx(5 / 12)


def test_paper_worked_example_actual_denominator():
    # The figure's "1 of 3 new tests failed" reading divides by the actual count: gen_fail = 1/3, and
    # Adv = 5/12 then needs hist_pass = 1/2 (e.g. 1 of 2 book tests passed). But with only V = 3 kept
    # tests our valid_ratio is min(3/8, 1) = 0.375, not the figure's 1.0, so R_T = 0.1875 + 0.2083 = 0.396:
    # the figure's Valid uses another definition, which is why the fixed-8 reading above is the default.
    config = GameConfig(fail_denominator="actual")
    suite = R.SuiteVerdicts(valid_tests=3, invalid_tests=0, passed=[True, True, False])
    s = R.score_candidate(True, [True, False], [suite], config).suites[0]
    assert s.gen_fail == approx(1 / 3)
    assert s.adv == approx(5 / 12)
    assert s.valid_ratio == 0.375
    assert s.test_reward == approx(0.5 * 0.375 + 0.5 * 5 / 12)


def test_score_candidate_two_suites_alpha_and_penalty():
    config = GameConfig(alpha=0.25)
    # book: H = 2, passed 1 -> hist_pass 0.5
    # suite A: V = 4, I = 1, passed 3 of 4 -> valid_ratio min(0.5, 0.875) = 0.5, gen_pass 0.75,
    #   gen_fail 1/8, Adv (0.125 + 0.5)/2 = 0.3125, R_T = 0.25*0.5 + 0.75*0.3125 = 0.359375 - 0.1 penalty
    # suite B: V = 0, I = 8 -> valid_ratio 0, Pass = hist_pass 0.5, Adv 0, R_T 0
    # R_C = mean(Pass_A = (0.5 + 0.75)/2 = 0.625, Pass_B = 0.5) = 0.5625
    a = R.SuiteVerdicts(4, 1, [True, True, False, True], nonprintable=0.1)
    b = R.SuiteVerdicts(0, 8, [])
    score = R.score_candidate(True, [False, True], [a, b], config)
    assert score.hist_pass == 0.5
    assert score.code_reward == approx(0.5625)
    sa, sb = score.suites
    assert (sa.valid_ratio, sa.gen_pass, sa.gen_fail, sa.adv) == approx((0.5, 0.75, 0.125, 0.3125))
    assert sa.test_reward == approx(0.359375 - 0.1)
    assert (sb.valid_ratio, sb.gen_pass, sb.adv, sb.test_reward) == (0.0, 0.0, 0.0, 0.0)
    # penalty off
    off = R.score_candidate(True, [False, True], [a, b], GameConfig(alpha=0.25, nonprintable_penalty=False))
    assert off.suites[0].test_reward == approx(0.359375)


def test_invalid_candidate_scores_zero():
    suite = R.SuiteVerdicts(8, 0, [False] * 8, nonprintable=0.0)
    score = R.score_candidate(False, [False, False], [suite], GameConfig())
    assert score.code_reward == 0.0
    assert score.hist_pass == 0.0
    assert score.suites[0].valid_ratio == 1.0  # reported, but not rewarded
    assert score.suites[0].test_reward == 0.0


def test_golden_reward():
    assert R.golden_reward(True, [True, True, False, True]) == 0.75
    assert R.golden_reward(False, [True, True]) == 0.0
    assert R.golden_reward(True, []) == 0.0


def test_cure_test_rewards_by_hand():
    # codes 0, 1 correct; 2, 3 wrong. verdicts[code][test]
    verdicts = [
        [True, True, False, False],
        [True, True, True, False],
        [False, True, True, False],
        [False, False, False, False],
    ]
    rewards = R.cure_test_rewards(verdicts, [True, True, False, False])
    assert R.cure_suite_test_rewards(verdicts, [True, True, False, False]) == rewards  # they agree here
    # t0: passes both correct codes, rejects both wrong -> +2/2
    # t1: passes both correct, rejects code 3 only -> +1/2
    # t2: fails correct code 0, lets wrong code 2 through -> -1/2
    # t3: fails correct codes, lets no wrong code through -> -0
    assert rewards == [1.0, 0.5, -0.5, 0.0]
    # no wrong code at all: CURE's sign alone, +1 for a test passing everything, -1 for one failing a
    # correct code (the cure-suite variant gives the first 0)
    assert R.cure_test_rewards([[True, False]], [True]) == [1.0, -1.0]
    assert R.cure_suite_test_rewards([[True, False]], [True]) == [0.0, -1.0]
    # no correct code: CURE trains none of the question's tests (cure-suite: vacuously "passes every
    # correct code", so a test every code fails earns +1)
    assert R.cure_test_rewards([[False], [False]], [False, False]) is None
    assert R.cure_suite_test_rewards([[False], [False]], [False, False]) == [1.0]
    assert R.cure_suite_reward([1.0, 0.5, -0.5, 0.0]) == 0.25
    assert R.cure_suite_reward([]) == -1.0
    assert R.cure_suite_reward([1.0], penalty=0.5) == 0.5


def test_config_validation():
    with pytest.raises(UserError, match="alpha"):
        GameConfig(alpha=1.5)
    with pytest.raises(UserError, match="fail_denominator"):
        GameConfig(fail_denominator="avg")
    with pytest.raises(UserError, match="unknown"):
        GameConfig.from_dict({"alfa": 0.5})
    assert GameConfig.from_dict({"alpha": 0.25}).alpha == 0.25
