"""The trainers' rewards on stdin/stdout programs and on verl's own code format: CodeJudge (TRL's reward and
verl's compute_score behind it) judges a stdio problem's program by its output rule, and verl's
{"inputs", "outputs", "fn_name"?} ground truth is scored as it is; problems that ship no GT (verl's rows,
LiveCodeBench's functional problems) are judged by their tests' own expected values."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codea1.data.loaders import load_problems
from codea1.eval.by_kind import evaluate_problems
from codea1.integrations.judge import CodeJudge
from codea1.integrations.verl import compute_score, compute_score_batch, problem_ref
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor

HERE = Path(__file__).resolve().parent
SUM = {"inputs": ["1 2\n", "5 5\n", "-3 3\n"], "outputs": ["3\n", "10\n", "0\n"]}
CALL = {"inputs": ["[1, 2]", "[3]"], "outputs": ["3", "3"], "fn_name": "total"}


def _fence(code: str, lang: str = "python") -> str:
    return f"Here it is:\n```{lang}\n{code}\n```\n"


@pytest.fixture(scope="module")
def judge():
    with LocalExecutor(workers=2) as ex:
        yield CodeJudge(executor=ex)


def test_a_stdio_problem_is_scored_with_its_failing_input_and_the_rule_s_reason(judge):
    problem = Problem(
        "s/sq",
        "Print n squared.",
        "d",
        kind="stdio",
        gt_solution="print(int(input()) ** 2)",
        io_tests=[{"input": f"{i}\n", "output": f"{i * i}\n"} for i in range(4)],
    )
    scores = judge.score(
        [
            (problem, _fence("n = int(input())\nprint(n * n)")),
            (problem.to_dict(), _fence("print(int(input()) * 2)")),
            (json.dumps(problem.to_dict()), _fence("print(1 / 0)")),
        ]
    )
    assert [(s.reward, s.status) for s in scores] == [(1.0, "pass"), (0.0, "fail"), (0.0, "error")]
    assert scores[1].reason == "fail at input 1: line 1: expected '1', got '2'"
    assert scores[2].reason.startswith("error at input 0: ZeroDivisionError")


def test_verl_s_own_ground_truth_is_scored_as_it_is():
    right = _fence("a, b = map(int, input().split())\nprint(a + b)")
    assert compute_score("codecontests", right, json.dumps(SUM)) == {"score": 1.0, "acc": 1.0, "judged": 1.0}
    assert compute_score("codecontests", _fence("print(3)"), SUM)["score"] == 0.0
    calls = [_fence("def total(xs):\n    return sum(xs)"), _fence("def total(xs):\n    return 0")]
    assert [s["score"] for s in compute_score_batch(["apps", "apps"], calls, [CALL, json.dumps(CALL)])] == [1.0, 0.0]
    # a Problem's own dict is passed on unchanged
    assert problem_ref({"id": "x", "inputs": [], "outputs": []}) == {"id": "x", "inputs": [], "outputs": []}
    assert problem_ref(SUM, "taco").is_stdio and problem_ref(CALL).entry_point == "total"


def test_a_leetcode_style_verl_row_takes_a_class_solution_or_a_bare_function(judge):
    # as verl's prime_code: the method of `class Solution` where the answer defines one, else the function;
    # the row's ground truth alone (verl's reward) and the row read by `data convert verl:` alike
    method = _fence("class Solution:\n    def total(self, xs):\n        return sum(xs)")
    bare = _fence("def total(xs):\n    return sum(xs)")
    wrong = _fence("class Solution:\n    def total(self, xs):\n        return 0")
    scores = compute_score_batch(["leetcode"] * 3, [method, bare, wrong], [CALL] * 3)
    assert [s["score"] for s in scores] == [1.0, 1.0, 0.0]
    [row] = [p for p in load_problems(f"verl:{HERE / 'data' / 'verl_tiny.jsonl'}") if p.id == "leetcode/3"]
    add_up = (
        "class Solution:\n    def addUp(self, nums, k):\n        return sum(nums) + k",
        "def addUp(nums, k):\n    return sum(nums) + k",
    )
    got = judge.score([(row, _fence(code)) for code in add_up])
    assert [(s.reward, s.status) for s in got] == [(1.0, "pass"), (1.0, "pass")]


CPP_SUM = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }"


def test_the_language_of_a_completion_s_first_fence():
    from codea1.game.parsing import fence_language

    assert fence_language(_fence(CPP_SUM, "cpp")) == fence_language(_fence(CPP_SUM, "C++")) == "cpp"
    assert fence_language(_fence("print(1)") + _fence(CPP_SUM, "cpp")) == "python"
    assert fence_language(_fence("x", "")) is fence_language("no fence") is fence_language(_fence("x", "rust")) is None


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_verl_stdio_row_runs_a_cpp_completion_as_cpp():
    # verl's rows name no language: the fence's does (SandboxFusion's way), a ```python one or none stays Python
    wrong = CPP_SUM.replace("a + b", "a - b")
    texts = [_fence(CPP_SUM, "cpp"), _fence(CPP_SUM, "c++"), _fence(wrong, "cpp")]
    texts.append(_fence("a, b = map(int, input().split())\nprint(a + b)"))
    scores = compute_score_batch(["codecontests"] * 4, texts, [SUM] * 4)
    assert [s["score"] for s in scores] == [1.0, 1.0, 0.0, 1.0]


def test_a_livecodebench_functional_problem_without_gt_is_judged_by_its_tests():
    [problem] = [
        p for p in load_problems(f"livecodebench:{HERE / 'data' / 'livecodebench_tiny.jsonl'}") if not p.is_stdio
    ]
    assert not problem.gt_solution and problem.meta["method_of"] == "Solution"
    name = problem.entry_point
    good = f"class Solution:\n    def {name}(self, nums, flag):\n        a = sorted(nums)[-2:]\n        return [sum(a), a]\n"
    bad = f"class Solution:\n    def {name}(self, nums, flag):\n        return [0, []]\n"
    with LocalExecutor(workers=2) as ex:
        _, results, [task] = evaluate_problems([problem], [(problem.id, good), (problem.id, bad)], ex)
    assert not task.excluded and task.timeout == 6.0
    assert [(r.passed, r.status) for r in results] == [(True, "pass"), (False, "fail")]
