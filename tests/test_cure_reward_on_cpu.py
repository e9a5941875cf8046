"""`game.selfplay_reward: cure` is CURE's reward (Gen-Verse/CURE, optimization/reward.py at 69fe174): checked
against a transcription of CURE's function on the audit's case (no correct code) and on random matrices;
`cure-suite` keeps codea1's earlier variant and its documented differences."""

from __future__ import annotations

import random

import numpy as np
import pytest

from codea1.config import GameConfig
from codea1.game import play_question
from codea1.game.rewards import cure_normalize, cure_suite_test_rewards, cure_test_rewards
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor
from codea1.train.methods import Round, advantages_of_tests, game_groups

# -- CURE's function, transcribed from optimization/reward.py at 69fe174 ---------------------------------
# enable_efficient = False and post_stage = False, the defaults of optimization/optimization_config.py
# (lines 119 and 125); names as in the source.


def _cure_normalize_reward(reward_arr):
    """reward.py lines 59-66 (enable_efficient False)."""
    mean = np.mean(reward_arr)
    std = np.std(reward_arr)
    if std.item() == 0:
        return None
    return (reward_arr - mean) / std


def cure_case_reward(all_case_bool_table, t, post_stage=False):
    """reward.py lines 103-105 and 126-157 for one question: (the reward before normalisation, after it);
    (None, None) where CURE trains none of the question's tests."""
    all_test_table_i = np.array(all_case_bool_table)[:, :t].copy()
    all_case_table_i = np.array(all_case_bool_table)[:, t:].copy()
    correct_code_list = np.where(all_test_table_i.all(axis=1))[0].tolist()
    if len(correct_code_list) > 0:
        correct_code_table = all_case_table_i[correct_code_list, :].copy()
        index_list = np.where(np.all(correct_code_table, axis=0))[0].tolist()
        reward_sign = -np.ones(correct_code_table.shape[1], dtype=float)
        reward_sign[index_list] = 1
        case_reward = reward_sign.copy()
        wrong_code_list = [j for j in range(all_case_table_i.shape[0]) if j not in correct_code_list]
        if len(wrong_code_list) > 0:
            reward_scale = np.ones(correct_code_table.shape[1], dtype=float)
            correct_case_list = np.where(correct_code_table.all(axis=0))[0].tolist()
            wrong_case_list = [j for j in range(all_case_table_i.shape[1]) if j not in correct_case_list]
            if len(correct_case_list):
                wrong_code_correct_case_table = all_case_table_i[wrong_code_list, :][:, correct_case_list].copy()
                if post_stage == False:
                    mean_p01 = np.mean(~wrong_code_correct_case_table, 0)
                else:
                    mean_p01 = (~np.any(wrong_code_correct_case_table, axis=0)).astype(float)
                reward_scale[correct_case_list] = reward_scale[correct_case_list] * mean_p01
            if len(wrong_case_list):
                wrong_code_wrong_case_table = all_case_table_i[wrong_code_list, :][:, wrong_case_list].copy()
                if post_stage == False:
                    mean_p00 = np.mean(wrong_code_wrong_case_table, 0)
                else:
                    mean_p00 = (np.any(wrong_code_wrong_case_table, axis=0)).astype(float)
                reward_scale[wrong_case_list] = reward_scale[wrong_case_list] * mean_p00
            case_reward = case_reward * reward_scale
        raw = case_reward.copy()
        return raw, _cure_normalize_reward(case_reward)
    return None, None


# -- codea1's, on the same table ------------------------------------------------------------------------


def codea1_case_reward(table, t, post_stage=False, fn=cure_test_rewards):
    """codea1's reward of the same table: correct codes from its first t columns, then `fn` (CURE's
    `cure_test_rewards`, or the `cure-suite` variant) and cure_normalize."""
    correct = [all(row[:t]) for row in table]
    verdicts = [row[t:] for row in table]
    raw = fn(verdicts, correct, post_stage) if fn is cure_test_rewards else fn(verdicts, correct)
    return raw, (cure_normalize(raw) if raw is not None else None)


def _same(ours, theirs) -> bool:
    if ours is None or theirs is None:
        return ours is None and theirs is None
    return len(ours) == len(theirs) and np.allclose(ours, theirs, rtol=0, atol=1e-12)


# the audit's cases: table[code] = its GT-test verdicts (first t columns), then its verdicts on the tests
AUDIT = {
    # no code passes every ground-truth test; test 0 has a wrong expected value (every code fails it),
    # test 1 is right and catches code 0
    "no correct code, a wrong expected value": ([[True, False, False, False], [False, True, False, True]], 2),
    # every code is correct: a test they all pass, and one that fails a correct code
    "no wrong code": ([[True, True, True, False], [True, True, True, True]], 2),
    # one correct code, one wrong: a test that catches the wrong code, one it lets through, a wrong test
    "one correct, one wrong": ([[True, True, True, True, False], [True, False, False, True, True]], 2),
}


@pytest.mark.parametrize("case", list(AUDIT))
def test_the_audit_cases_score_as_cure_scores_them(case):
    table, t = AUDIT[case]
    ours, theirs = codea1_case_reward(table, t), cure_case_reward(table, t)
    assert _same(ours[0], theirs[0]) and _same(ours[1], theirs[1]), (case, ours, theirs)


def test_a_wrong_expected_value_earns_nothing_where_no_code_is_correct():
    """The audit's case: with no correct code CURE trains no test; cure-suite paid the wrong test +1."""
    table, t = AUDIT["no correct code, a wrong expected value"]
    assert cure_case_reward(table, t) == (None, None)
    assert codea1_case_reward(table, t) == (None, None)
    assert codea1_case_reward(table, t, fn=cure_suite_test_rewards)[0] == [1.0, 0.5]  # the variant's +1
    # no wrong code: a test every code passes earns CURE's +1 (cure-suite: 0)
    table, t = AUDIT["no wrong code"]
    assert codea1_case_reward(table, t)[0] == [1.0, -1.0]
    assert codea1_case_reward(table, t, fn=cure_suite_test_rewards)[0] == [0.0, -1.0]


def _random_table(rng: random.Random) -> tuple[list[list[bool]], int]:
    codes, t, tests = rng.randint(1, 8), rng.randint(1, 4), rng.randint(1, 8)
    p = rng.choice([0.3, 0.5, 0.8, 0.95])  # some tables with correct codes, some without
    return [[rng.random() < p for _ in range(t + tests)] for _ in range(codes)], t


@pytest.mark.parametrize("post_stage", [False, True])
def test_random_matrices_score_as_cure_scores_them(post_stage):
    rng = random.Random(55 + post_stage)
    disagree_variant = 0
    for _ in range(2000):
        table, t = _random_table(rng)
        ours, theirs = codea1_case_reward(table, t, post_stage), cure_case_reward(table, t, post_stage)
        assert _same(ours[0], theirs[0]) and _same(ours[1], theirs[1]), (table, t, ours, theirs)
        variant = codea1_case_reward(table, t, fn=cure_suite_test_rewards)
        disagree_variant += not _same(variant[0], theirs[0])
    if not post_stage:
        assert disagree_variant > 0  # the cure-suite variant is not CURE's reward


# -- through a round and the step's groups ---------------------------------------------------------------

SECOND = Problem(
    id="t/second",
    prompt="def second_largest(nums):",
    description="Return the second largest distinct value of nums, or None if there is none.",
    entry_point="second_largest",
    gt_solution="def second_largest(nums):\n    s = sorted(set(nums), reverse=True)\n    return s[1] if len(s) >= 2 else None\n",
)
WRONG = (
    "```python\ndef second_largest(nums):\n    if len(nums) < 2:\n        return None\n    return sorted(nums)[-2]\n```"
)
WRONG_VALUE = "```python\nassert second_largest([1, 2, 3]) == 7\n```"  # GT says 2: every code fails it
CATCHES = "```python\nassert second_largest([5, 5, 4]) == 4\n```"  # right; WRONG returns 5


UID_BASE = 1_702_550_000  # this file's own uid range


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2, uid_base=UID_BASE) as ex:
        yield ex


def test_a_round_with_no_correct_code_trains_no_test_under_cure(executor):
    rounds = []
    for reward in ("cure", "cure-suite"):
        config = GameConfig(selfplay_reward=reward)
        result = play_question(SECOND, [WRONG, WRONG], [[WRONG_VALUE], [CATCHES]], executor, [], config)
        rounds.append(result)
    cure, variant = rounds
    assert not cure.tests_trained and [r for rs in cure.test_rewards for r in rs] == [0.0, 0.0]
    assert cure.to_dict()["tests_trained"] is False and "tests_trained" not in variant.to_dict()
    assert variant.tests_trained and variant.test_rewards[0] == [1.0]  # the wrong test's +1 (the variant)
    round_ = Round(SECOND, ["c0", "c1"], [["s00"], ["s10"]])
    assert game_groups([round_], [cure], GameConfig(selfplay_reward="cure"))["test"] == []
    assert game_groups([round_], [variant], GameConfig(selfplay_reward="cure-suite"))["test"] != []


def test_cure_groups_a_question_and_normalises_as_cure_does():
    class Cfg:
        game = GameConfig(selfplay_reward="cure")

    # one group per question, CURE's population std; a group of equal rewards is never formed
    assert advantages_of_tests([[1.0, -1.0, 1.0, -1.0]], Cfg()) == [1.0, -1.0, 1.0, -1.0]
    assert cure_normalize([0.5, 0.5]) is None
