"""The edge cases where the authors' reward code and a natural reading of the paper differ.

Each test is one row of the table in docs/algorithm.md ("Differences from the reference code"): by
default codea1 does what the reference code does; `test_validity="strict"` is the documented
alternative; the rows where codea1 deliberately differs test codea1's behaviour and say why.
"""

import pytest

from codea1.config import GameConfig
from codea1.game import play_question
from codea1.problem import Problem, candidate_program
from codea1.sandbox import LocalExecutor

UID_BASE = 1_700_400_000  # this file's own uid range

SECOND = Problem(
    id="t/second",
    prompt="def second_largest(nums):",
    description="Return the second largest distinct value of nums, or None if there is none.",
    entry_point="second_largest",
    gt_solution="import math\n\ndef second_largest(nums):\n    d = sorted(set(nums))\n"
    "    return d[-2] if len(d) > 1 else None\n",
)
RIGHT = "```python\ndef second_largest(nums):\n    s = sorted(set(nums), reverse=True)\n    return s[1] if len(s) >= 2 else None\n```"
WRONG = "```python\ndef second_largest(nums):\n    return sorted(nums)[-2] if len(nums) > 1 else None\n```"
STRICT = GameConfig(test_validity="strict")


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2, uid_base=UID_BASE) as ex:
        yield ex


def one_suite(executor, suite, code=RIGHT, config=None):
    result = play_question(SECOND, [code], [[suite]], executor, [], config or GameConfig())
    return result.checked[0][0], result.codes[0]


def block(*lines):
    return "```python\n" + "\n".join(lines) + "\n```"


def test_any_comparison_with_a_call_on_the_left_is_read_as_equality(executor):
    suite = block(
        "assert second_largest([8, 9, 1]) in [8, 9]",  # GT 8: 8 == [8, 9] is False -> wrong
        "assert second_largest([1, 2]) < 100",  # GT 1 -> wrong
        "assert second_largest([5, 3]) != 3",  # GT 3: read as == 3 -> right
        "assert second_largest([4, 2]) != 5",
    )  # GT 2 -> wrong
    oracle, _ = one_suite(executor, suite)
    assert [k.predicted_ok for k in oracle.kept] == [False, False, True, False]
    assert (oracle.valid_tests, oracle.invalid_tests) == (4, 3)
    strict, _ = one_suite(executor, suite, config=STRICT)
    assert (strict.valid_tests, strict.invalid_tests) == (4, 4)  # no claim but `==`/`is` is a prediction


def test_left_side_not_a_call_is_ignored(executor):
    oracle, _ = one_suite(executor, block("assert second_largest([3, 4])[0] == 6"))
    assert (oracle.valid_tests, oracle.invalid_tests) == (0, 0)
    strict, _ = one_suite(executor, block("assert second_largest([3, 4])[0] == 6"), config=STRICT)
    assert (strict.valid_tests, strict.invalid_tests) == (0, 1)


def test_a_test_that_never_calls_the_function_is_valid_in_reference_mode(executor):
    oracle, code = one_suite(executor, block("assert len([1, 2, 3]) == 3"))
    assert (oracle.valid_tests, oracle.invalid_tests) == (1, 0) and code.suites[0].valid_ratio == 1 / 8
    strict, code = one_suite(executor, block("assert len([1, 2, 3]) == 3"), config=STRICT)
    assert (strict.valid_tests, strict.invalid_tests) == (0, 1)  # free valid_ratio closed


def test_names_are_inlined_as_bare_arguments_across_blocks(executor):
    suite = (
        block("x = [5, 5, 4]")
        + "\nand then\n"
        + block("assert second_largest(x) == 4", "assert second_largest(sorted(x)) == 4")
    )
    oracle, _ = one_suite(executor, suite)
    assert [k.call for k in oracle.kept] == ["second_largest([5, 5, 4])"]
    assert oracle.unresolved == 1  # `sorted(x)`: x is not a bare argument, the argument raises NameError


def test_expected_is_evaluated_in_gts_program(executor):
    suite = block(
        "assert second_largest([1, 5, 3]) == second_largest([3, 5])", "assert second_largest([2, 9]) == math.floor(2.5)"
    )
    oracle, _ = one_suite(executor, suite)
    assert [k.predicted_ok for k in oracle.kept] == [True, True]


def test_nonprintable_penalty_counts_non_ascii(executor):
    suite = block("assert second_largest([1, 2]) == 1  # naïve")
    _, code = one_suite(executor, suite)
    share = 1 / len(suite)
    assert code.suites[0].test_reward == pytest.approx(0.5 * (1 / 8) - share)


def test_empty_code_block_is_a_valid_candidate(executor):
    _, code = one_suite(executor, block("assert second_largest([1, 2]) == 1"), code="```python\n```")
    # valid: R_T is paid (valid_ratio 1/8, gen_fail 1/8 -> 0.5/8 + 0.5/8); every test fails: R_C 0
    assert code.valid and code.code_reward == 0.0 and code.suites[0].test_reward == pytest.approx(0.125)


def test_unclosed_fence_code_is_raw_text_and_tests_are_read_line_by_line(executor):
    cut = "```python\ndef second_largest(nums):\n    return None"
    _, code = one_suite(executor, block("assert second_largest([1, 2]) == 1"), code=cut)
    assert not code.valid  # the fence line does not compile
    oracle, _ = one_suite(executor, "```python\nassert second_largest([1, 2]) == 1\nassert second_largest(")
    assert (oracle.valid_tests, oracle.invalid_tests) == (1, 1)


def test_all_asserts_are_read(executor):
    suite = block(*[f"assert second_largest([0, {i}]) == {min(0, i)}" for i in range(1, 41)])
    oracle, _ = one_suite(executor, suite)
    assert oracle.valid_tests == 40


def test_candidates_see_gts_imports(executor):
    uses_math = "```python\ndef second_largest(nums):\n    d = sorted(set(nums))\n    return d[-2] if len(d) > 1 else None if math.pi else 0\n```"
    _, code = one_suite(executor, block("assert second_largest([1, 2]) == 1"), code=uses_math)
    assert code.valid and code.code_reward == 1.0
    assert candidate_program(SECOND, "pass").startswith("import math\n")


# -- deliberate differences (codea1 keeps its own behaviour) ------------------------------------
def test_gt_values_that_are_not_plain_data_drop_the_test(executor):
    boxed = Problem(
        id="t/box",
        prompt="p",
        description="d",
        entry_point="box",
        gt_solution="class Box:\n    def __init__(self, v): self.v = v\n"
        "    def __eq__(self, o): return isinstance(o, Box) and o.v == self.v\n"
        "def box(v):\n    return Box(v)\n",
    )
    result = play_question(
        boxed,
        ["```python\ndef box(v):\n    return v\n```"],
        [[block("assert box(1) == 1")]],
        executor,
        [],
        GameConfig(),
    )
    oracle = result.checked[0][0]
    # comparing live objects would run GT's or the candidate's __eq__ next to the verdict: dropped
    assert (oracle.valid_tests, oracle.gt_error) == (0, 1)


def test_nan_equals_nan_and_forged_eq_fails(executor):
    nan = Problem(
        id="t/nan",
        prompt="p",
        description="d",
        entry_point="f",
        gt_solution="def f(x):\n    return float('nan') if x < 0 else x\n",
    )
    forged = "```python\nclass Y:\n    def __eq__(self, o): return True\ndef f(x):\n    return Y()\n```"
    honest = "```python\ndef f(x):\n    return float('nan') if x < 0 else x\n```"
    result = play_question(
        nan, [honest, forged], [[block("assert f(-1) == 0", "assert f(2) == 2")]] * 2, executor, [], GameConfig()
    )
    assert result.codes[0].code_reward == 1.0  # NaN == NaN for the candidate GT's NaN is compared with
    assert result.codes[1].code_reward == 0.0  # an object with a forged __eq__ passes nothing


def test_expected_that_raises_is_a_wrong_prediction_and_verdicts_stay_aligned(executor):
    # the reference code shifts its verdict list after an EXPECTED that raises, and its printed markers
    # confuse test 1 with test 10; codea1's results are structured, one per call
    lines = ["assert second_largest([1, 2]) == 1 / 0"]
    lines += [f"assert second_largest([{i}, {i}, 5]) == {min(i, 5) if i != 5 else None}" for i in range(1, 12)]
    result = play_question(SECOND, [WRONG], [[block(*lines)]], executor, [], GameConfig())
    assert [k.predicted_ok for k in result.checked[0][0].kept] == [False] + [True] * 11
    # WRONG keeps duplicates: for [i, i, 5] it answers i, wrong whenever i >= 5 (tests 5 to 11)
    assert result.codes[0].suites[0].gen_pass == pytest.approx(5 / 12)
    assert [t.call for t in result.updates.failed] == [f"second_largest([{i}, {i}, 5])" for i in range(5, 12)]


# ---------------------------------------------------------------- values in (sandbox round 3)
def test_introspective_and_random_arguments_are_invalid_not_paid(executor):
    """Arguments that read the function under test ask GT and a candidate different questions: before,
    `f(len(f.__code__.co_code))` failed every correct candidate whose text was not GT's, paying the Test
    LLM the largest reward; a random argument failed correct code at random. Both are invalid now."""
    suite = block(
        "assert second_largest([len(second_largest.__code__.co_code), 0]) == 0",
        "assert second_largest([__import__('random').randrange(10 ** 9), -1]) == -1",
        "assert second_largest([7, 3]) == 3",
    )
    oracle, code = one_suite(executor, suite)
    assert oracle.unresolved == 2 and [k.call for k in oracle.kept] == ["second_largest([7, 3])"]
    assert code.code_reward == 1.0  # the correct candidate passes every valid test


def test_arguments_become_values_sent_alike_to_gt_and_every_candidate(executor):
    """Non-literal arguments are evaluated once (twice, to check they do not change), without GT or a
    candidate; the test both run is the call on those values."""
    suite = block(
        "assert second_largest(list(range(5))) == 3",
        "assert second_largest(*[[1, 9, 9]]) == 1",
        "assert second_largest(nums=[2, 8]) == 2",
        "assert second_largest(**{'nums': [3, 6]}) == 3",
        "assert len([1, 2]) == 2",
    )  # another function's call: its value, the same for every program
    oracle, code = one_suite(executor, suite)
    assert [k.call for k in oracle.kept] == [
        "second_largest([0, 1, 2, 3, 4])",
        "second_largest([1, 9, 9])",
        "second_largest(nums=[2, 8])",
        "second_largest(nums=[3, 6])",
        "2",
    ]
    assert oracle.invalid_tests == 0 and code.code_reward == 1.0
    # the same values written another way are one test: the repeat is counted invalid
    again, _ = one_suite(
        executor, block("assert second_largest([0, 1, 2, 3, 4]) == 3", "assert second_largest(list(range(5))) == 3")
    )
    assert (again.valid_tests, again.duplicate) == (1, 1)


def test_side_effects_of_one_test_reach_no_other_test(executor):
    """A CALL's or an EXPECTED's side effects used to run in GT's shared job namespace and rewrite GT for
    the rest of the batch (a sibling's correct code went from 1.0 to 0.0). Now arguments run without GT
    and each EXPECTED starts from GT's clean module state."""
    hostile = block(
        "assert second_largest([(globals().__setitem__('second_largest', lambda *a: 0), 5)[1], 1])"
        " == (globals().__setitem__('second_largest', lambda *a: 0), 1)[1]"
    )
    honest = block(
        "assert second_largest([4, 9, 1]) == second_largest([4, 4, 9])", "assert second_largest([6, 2]) == 2"
    )
    result = play_question(SECOND, [RIGHT, RIGHT], [[hostile], [honest]], executor, [], GameConfig())
    sibling = result.checked[1][0]
    assert [k.predicted_ok for k in sibling.kept] == [True, True] and sibling.invalid_tests == 0
    assert [k.expected for k in sibling.kept] == [4, 2]
    assert result.codes[1].code_reward == 1.0
