"""TopVar selection and prompt structure."""

import math

from codea1.game import population_std, prompts, topvar_select
from codea1.problem import Problem


def test_population_std():
    assert population_std([0.0, 1.0]) == 0.5  # divides by n, not n - 1
    assert population_std([1.0]) == 0.0
    assert math.isclose(population_std([0.2, 0.8]), 0.3)


def test_topvar_select_ties_and_ell():
    rewards = [[0.5, 0.5], [0.0, 1.0], [0.2, 0.8], [1.0, 0.0]]  # stds 0, 0.5, 0.3, 0.5
    assert topvar_select(rewards, 1) == [False, True, False, False]  # tie 1 vs 3: lower index
    assert topvar_select(rewards, 2) == [False, True, False, True]
    assert topvar_select(rewards, 3) == [False, True, True, True]
    assert topvar_select(rewards, 4) == [True] * 4  # ell = M: train on all
    assert topvar_select(rewards, 10) == [True] * 4
    # equal rows in another order give exactly equal stds: the lower index still wins
    assert topvar_select([[0.1, 0.7, 0.3], [0.3, 0.1, 0.7]], 1) == [True, False]
    assert topvar_select([], 1) == []


def problem():
    return Problem(
        id="p/1",
        prompt="def add(a, b):\n    '''Sum.'''\n",
        description="Add two numbers.",
        entry_point="add",
        gt_solution="def add(a, b):\n    return a + b\n",
    )


def test_prompts_structure():
    code = prompts.code_messages(problem())
    assert [m["role"] for m in code] == ["system", "user"]
    assert "def add(a, b)" in code[1]["content"] and "```python" in code[1]["content"]
    white = prompts.test_messages_whitebox(problem(), "def add(a, b):\n    return a - b", n_tests=5)
    text = white[1]["content"]
    assert "return a - b" in text and "may contain bugs" in text and "first 5 tests" in text
    assert "assert add(" in text
    black = prompts.test_messages_blackbox(problem())
    assert "Add two numbers." in black[1]["content"] and "return a" not in black[1]["content"]
    assert "first 8 tests" in black[1]["content"]


def test_test_messages_follows_the_config():
    from codea1.config import GameConfig

    white = prompts.test_messages(problem(), "def add(a, b): return 0", GameConfig(tests_requested=3))
    assert "return 0" in white[1]["content"] and "first 3 tests" in white[1]["content"]
    black = prompts.test_messages(problem(), "def add(a, b): return 0", GameConfig(blackbox_tests=True))
    assert "return 0" not in black[1]["content"]
