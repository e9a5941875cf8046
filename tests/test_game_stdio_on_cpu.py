"""The game on stdin/stdout problems (codea1.game.stdio_round through play_step): the Test LLM's inputs,
GT's outputs, validity, the execution matrix, R_C and R_T, TopVar and the Mistake Book, for Python and C++
programs, alone or in a batch with function problems; the Golden-Tests baseline on io_tests."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from codea1.config import GameConfig
from codea1.errors import UserError
from codea1.game import golden_step, play_step
from codea1.game.mistake_book import gt_digest
from codea1.game.parsing import parse_input_suite
from codea1.game.prompts import test_messages_blackbox, test_messages_whitebox
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor

# the larger of two numbers; a wrong candidate returns the first one
GT = "a, b = map(int, input().split())\nprint(max(a, b))"
RIGHT = "```python\nx, y = map(int, input().split())\nprint(x if x > y else y)\n```"
WRONG = "```python\nx, y = map(int, input().split())\nprint(x)\n```"


def _problem(**kw) -> Problem:
    row = {"id": "s/max", "prompt": "Print the larger of a and b.", "description": "Print the larger of a and b."}
    fields = {"kind": "stdio", "gt_solution": GT, "io_tests": [{"input": "1 2\n", "output": "2\n"}]} | kw
    return Problem(**row, **fields)


def _inputs(*texts: str) -> str:
    return "Tests:\n" + "".join(f"```input\n{t}\n```\n" for t in texts)


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2) as ex:
        yield ex


def test_inputs_are_read_one_per_block():
    suite = parse_input_suite(_inputs("1 2", "3 3", "") + "```python\nprint(1)\n```", max_tests=8)
    assert [t.call for t in suite.tests] == ["1 2\n", "3 3\n"] and suite.unparseable == 1
    assert [t.call for t in parse_input_suite("```\n5 4\n```").tests] == ["5 4\n"]  # no input fence: any fence


def test_a_round_judges_inputs_by_gt_and_pays_the_tests_that_break_the_wrong_program(executor):
    config = GameConfig(tests_per_suite=4, max_tests_per_suite=4)
    attack = _inputs("1 5", "7 2", "7 2", "x y")  # breaks WRONG; a duplicate; an input GT fails on
    mild = _inputs("9 1", "4 4")  # passes both
    [result] = play_step([_problem()], [[RIGHT, WRONG]], [[[mild], [attack]]], executor, config=config)
    right, wrong = result.codes
    assert right.valid and wrong.valid
    assert [s.valid_tests for s in right.suites] == [2] and [s.invalid_tests for s in right.suites] == [0]
    assert (wrong.suites[0].valid_tests, wrong.suites[0].invalid_tests) == (2, 2)
    checked = result.checked[1][0]
    assert (checked.duplicate, checked.gt_error) == (1, 1)
    assert [(k.call, k.expected) for k in checked.kept] == [("1 5\n", "5\n"), ("7 2\n", "7\n")]
    # each candidate's record names the valid inputs that broke it, with GT's output
    assert right.failed == [] and [t.call for t in wrong.failed] == ["1 5\n"]
    assert right.code_reward > wrong.code_reward
    assert wrong.suites[0].test_reward > right.suites[0].test_reward  # the suite that found the bug
    failed = {(t.call, t.expected) for t in result.updates.failed}
    assert failed == {("1 5\n", "5\n")} and result.updates.gt_digest == gt_digest(_problem())
    # the Mistake Book's test is replayed next round: the right program passes it, the wrong one fails
    book = [t for t in result.updates.failed]
    [again] = play_step([_problem()], [[RIGHT, WRONG]], [[[mild], [mild]]], executor, [book], config)
    assert [c.hist_pass for c in again.codes] == [1.0, 0.0]
    assert len(again.updates.passed) == 1


def test_a_program_that_does_not_run_and_a_gt_that_does_not_compile(executor):
    [result] = play_step([_problem()], [["```python\ndef (\n```"]], [[[_inputs("1 2")]]], executor)
    assert not result.codes[0].valid and result.codes[0].code_reward == 0.0
    broken = _problem(gt_solution="def (")
    [result] = play_step([broken], [[RIGHT]], [[[_inputs("1 2")]]], executor)
    assert result.gt_error and "GT does not run" in result.gt_error
    assert result.checked[0][0].valid_tests == 0


def test_stdio_and_function_problems_share_a_batch_in_order(executor):
    fn = Problem("f/inc", "def inc(x):", "d", "inc", "def inc(x):\n    return x + 1", ["assert inc(1) == 2"])
    results = play_step(
        [fn, _problem(), fn],
        [["```python\ndef inc(x):\n    return x + 1\n```"], [RIGHT], ["```python\ndef inc(x):\n    return x\n```"]],
        [[["```python\nassert inc(3) == 4\n```"]], [[_inputs("2 9")]], [["```python\nassert inc(3) == 4\n```"]]],
        executor,
    )
    assert [r.question_id for r in results] == ["f/inc", "s/max", "f/inc"]
    assert [r.codes[0].suites[0].valid_tests for r in results] == [1, 1, 1]
    assert results[0].codes[0].code_reward > results[2].codes[0].code_reward


def test_cure_s_reward_is_refused_for_inputs_without_predicted_outputs(executor):
    with pytest.raises(UserError, match="selfplay_reward=cure"):
        play_step([_problem()], [[RIGHT]], [[[_inputs("1 2")]]], executor, config=GameConfig(selfplay_reward="cure"))


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_cpp_round_and_the_golden_baseline_on_io_tests(executor):
    gt = "#include <iostream>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << (a > b ? a : b) << '\\n'; }"
    wrong = (
        "```cpp\n#include <iostream>\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a << '\\n'; }\n```"
    )
    right = f"```cpp\n{gt}\n```"
    problem = _problem(language="cpp", gt_solution=gt)
    [result] = play_step([problem], [[right, wrong]], [[[_inputs("3 8")], [_inputs("3 8")]]], executor)
    assert [c.valid for c in result.codes] == [True, True]
    assert result.codes[0].code_reward > result.codes[1].code_reward
    assert golden_step([problem, _problem()], [[right, wrong], [RIGHT, WRONG]], executor) == [[1.0, 0.0], [1.0, 0.0]]


def test_the_test_prompts_ask_for_inputs_and_show_the_program_in_its_language():
    [_, user] = test_messages_whitebox(_problem(language="cpp"), "int main(){}", 3)
    assert "```cpp\nint main(){}\n```" in user["content"] and "```input" in user["content"]
    assert "do not write them" in user["content"]
    [_, user] = test_messages_blackbox(_problem(), 5)
    assert "5 test inputs" in user["content"] and "assert" not in user["content"]


def test_an_input_the_problem_s_validator_rejects_is_an_invalid_test(executor):
    """A problem's input validator (constraints 1 <= a, b <= 100 here) makes an input outside them invalid,
    as an input GT fails on is, though GT answers it; without one, the same input is kept."""
    validator = "a, b = map(int, input().split())\nassert 1 <= a <= 100 and 1 <= b <= 100"
    config = GameConfig(tests_per_suite=4, max_tests_per_suite=4)
    suite = _inputs("1 5", "700 2", "3 -4")
    [plain] = play_step([_problem()], [[WRONG]], [[[suite]]], executor, config=config)
    assert (plain.checked[0][0].gt_error, len(plain.checked[0][0].kept)) == (0, 3)
    [checked] = play_step([_problem(validator=validator)], [[WRONG]], [[[suite]]], executor, config=config)
    got = checked.checked[0][0]
    assert got.gt_error == 2 and [k.call for k in got.kept] == ["1 5\n"]
    assert (checked.codes[0].suites[0].valid_tests, checked.codes[0].suites[0].invalid_tests) == (1, 2)


def test_a_validator_is_a_stdio_field_and_travels_with_the_problem(tmp_path):
    from codea1.problem import read_problems_jsonl, write_problems_jsonl

    with pytest.raises(UserError, match="'validator' is for kind 'stdio'"):
        Problem.from_dict(
            {
                "id": "f",
                "prompt": "p",
                "description": "d",
                "entry_point": "f",
                "gt_solution": "def f(): pass",
                "validator": "pass",
            }
        )
    problem = _problem(validator="input()")
    write_problems_jsonl([problem, dataclasses.replace(_problem(), id="s/plain")], tmp_path / "p.jsonl")
    rows = (tmp_path / "p.jsonl").read_text().splitlines()
    assert '"validator"' in rows[0] and '"validator"' not in rows[1]  # written only where there is one
    assert read_problems_jsonl(tmp_path / "p.jsonl")[0] == problem


# any divisor d of n with 1 < d < n, or -1 for a prime: GT prints the smallest, another right program the largest
DIVISOR_GT = "n = int(input())\nprint(next((d for d in range(2, n) if n % d == 0), -1))"
LARGEST = "```python\nn = int(input())\nprint(next((d for d in range(n - 1, 1, -1) if n % d == 0), -1))\n```"
ONE = "```python\nn = int(input())\nprint(1)\n```"
DIVISOR_CHECKER = (
    "import json, sys\ncase = json.load(sys.stdin)\nn, d = int(case['input']), int(case['output'])\n"
    "prime = n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1))\n"
    "sys.exit(0 if (d == -1 and prime) or (1 < d < n and n % d == 0) else 1)"
)


def test_a_round_on_a_problem_with_many_correct_outputs_is_judged_by_its_checker(executor):
    """With the problem's checker program, a candidate whose outputs differ from GT's but are right passes
    the kept tests (and the golden ones), and one whose outputs are wrong fails them; GT's output is the
    checker's reference."""
    problem = _problem(
        gt_solution=DIVISOR_GT,
        io_tests=[{"input": "12\n", "output": "2\n"}, {"input": "7\n", "output": "-1\n"}],
        checker_program=DIVISOR_CHECKER,
    )
    config = GameConfig(tests_per_suite=3, max_tests_per_suite=3)
    suite = _inputs("15", "49", "13")
    [result] = play_step([problem], [[LARGEST, ONE]], [[[suite], [suite]]], executor, config=config)
    largest, one = result.codes
    assert [s.valid_tests for s in largest.suites] == [3]
    assert largest.code_reward == 1.0 and one.code_reward == 0.0
    # print(2) is right for 12, wrong for 7
    assert golden_step([problem], [[LARGEST, ONE, "```python\nprint(2)\n```"]], executor) == [[1.0, 0.0, 0.5]]
