"""Evaluating stdin/stdout programs (codea1.eval.stdio_eval) beside function problems (codea1.eval.by_kind):
GT checked and timed through the same runner, problems without GT judged by their tests alone, each
sample's first failure reported, pass@k over both kinds together."""

from __future__ import annotations

import shutil

import pytest

from codea1.eval.by_kind import evaluate_problems
from codea1.eval.stdio_eval import prepare_stdio_tasks
from codea1.game.prompts import code_messages
from codea1.judge.kinds.stdio import NO_GT_TIME_LIMIT
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

SQUARES = [{"input": f"{i}\n", "output": f"{i * i}\n"} for i in range(6)]


def _stdio(pid: str, gt: str = "print(int(input()) ** 2)", language: str = "python", **kw) -> Problem:
    return Problem(pid, "Print n squared.", "Print n squared.", kind="stdio", language=language, gt_solution=gt, **kw)


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2) as ex:
        yield ex


def test_stdio_and_function_problems_are_scored_together_in_sample_order(executor):
    problems = [
        _stdio("s/sq", io_tests=SQUARES),
        Problem("f/inc", "def inc(x):", "d", "inc", "def inc(x):\n    return x + 1", ["assert inc(1) == 2"]),
    ]
    samples = [
        ("s/sq", "n = int(input())\nprint(n * n)"),
        ("f/inc", "def inc(x):\n    return x + 1"),
        ("s/sq", "print(int(input()) * 2)"),  # right on 0 (and 2), wrong from input 1 on
        ("s/sq", "while True:\n    pass"),
        ("s/sq", "print(1 / 0)"),
    ]
    summary, results, tasks = evaluate_problems(problems, samples, executor, ks=[1])
    assert [(r.task_id, r.index, r.passed, r.status, r.failed_input) for r in results] == [
        ("s/sq", 0, True, "pass", None),
        ("f/inc", 0, True, "pass", None),
        ("s/sq", 1, False, "fail", 1),
        ("s/sq", 2, False, "timeout", 0),
        ("s/sq", 3, False, "error", 0),
    ]
    assert results[2].error == "line 1: expected '1', got '2'"
    assert "ZeroDivisionError" in results[4].error
    assert summary["tasks"] == {"f/inc": {"n": 1, "correct": 1}, "s/sq": {"n": 4, "correct": 1}}
    assert summary["pass@1"] == pytest.approx((1.0 + 0.25) / 2)
    assert not any(t.excluded for t in tasks)


def test_gt_that_fails_its_tests_excludes_the_problem_and_no_gt_uses_the_stated_limit(executor):
    wrong = [*SQUARES[:2], {"input": "3\n", "output": "10\n"}]
    tasks = prepare_stdio_tasks(
        [
            _stdio("s/bad", io_tests=wrong),
            _stdio("s/nogt", gt="", io_tests=SQUARES),
            _stdio("s/limit", gt="", io_tests=SQUARES, meta={"time_limit": 2.5}),
            _stdio("s/rule", io_tests=SQUARES, checker="special"),
        ],
        executor,
    )
    bad, nogt, limit, rule = tasks
    assert bad.excluded and bad.reason.startswith("GT fails its own test 2 (fail: line 1: expected '10', got '9')")
    assert (nogt.excluded, nogt.timeout) == (False, NO_GT_TIME_LIMIT)
    assert limit.timeout == 2.5
    assert rule.excluded and "checker_program" in rule.reason


def test_the_output_rule_decides_with_its_own_quirks(executor):
    problem = _stdio("s/float", gt="print('0.5')", io_tests=[{"input": "\n", "output": "0.5\n"}])
    lcb = problem
    cc = _stdio("s/float-cc", gt="print('0.5')", io_tests=problem.io_tests, checker="codecontests")
    samples = [(p.id, code) for p in (lcb, cc) for code in ("print('0.50')", "print(0.500001)", "print(' 0.5 ')")]
    _, results, _ = evaluate_problems([lcb, cc], samples, executor)
    # LiveCodeBench: Decimal equality ("0.50" == "0.5", 0.500001 is not); CodeContests: 1e-5 absolute
    assert [r.passed for r in results] == [True, False, True, True, True, True]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_a_cpp_problem_is_judged_through_its_compiled_program(executor):
    gt = "#include <iostream>\nint main(){ long long n; std::cin >> n; std::cout << n * n << std::endl; }"
    problem = _stdio("s/sq-cpp", gt=gt, language="cpp", io_tests=SQUARES)
    samples = [
        ("s/sq-cpp", '#include <cstdio>\nint main(){ long long n; scanf("%lld", &n); printf("%lld\\n", n*n); }'),
        ("s/sq-cpp", "int main( {"),
        ("s/sq-cpp", "print(int(input()) ** 2)"),  # Python where C++ is asked: it does not compile
    ]
    summary, results, tasks = evaluate_problems([problem], samples, executor)
    assert [(r.passed, r.status) for r in results] == [(True, "pass"), (False, "undefined"), (False, "undefined")]
    assert results[1].error.startswith("compile error: main.cpp:1:")
    assert tasks[0].gt_seconds > 0 and summary["pass@1"] == pytest.approx(1 / 3)


def test_the_code_prompt_of_a_stdio_problem_asks_for_a_whole_program_in_its_language():
    [system, user] = code_messages(_stdio("s/x", language="cpp", io_tests=SQUARES))
    assert "C++17" in system["content"] and "```cpp" in user["content"] and "standard input" in user["content"]
    [_, user] = code_messages(_stdio("s/y", io_tests=SQUARES))
    assert "Python 3" in user["content"] and "```python" in user["content"] and "`" + "`" not in user["content"][:5]


class _Recording:
    """An executor that keeps every JobResult it returns, to count what ran."""

    def __init__(self, inner):
        self.inner, self.results = inner, []

    def run(self, jobs, progress=None, *, then=None):
        out = self.inner.run(jobs, progress, then=then)
        self.results.extend(out)
        return out


@pytest.mark.parametrize("language", ["python", pytest.param("cpp", marks=needs_gpp)])
def test_a_sample_stops_at_its_first_failing_input(executor, language):
    """Round 6: a program that passed the first input and then spun on every other one cost the evaluation
    one whole limit per input; the job now stops at the first failure, as LiveCodeBench's evaluator does,
    and the inputs after it are not run."""
    spin = {
        "python": "n = int(input())\nwhile n:\n    pass\nprint(0)",
        "cpp": '#include <cstdio>\nint main(){ volatile int n; scanf("%d", (int*)&n); while (n) {} puts("0"); }',
    }[language]
    gt = {
        "python": "print(int(input()) ** 2)",
        "cpp": '#include <cstdio>\nint main(){ int n; scanf("%d", &n); printf("%d\\n", n * n); }',
    }
    problem = _stdio("s/sq", gt=gt[language], language=language, io_tests=SQUARES)
    recording = _Recording(executor)
    _, results, _ = evaluate_problems([problem], [("s/sq", spin)], recording, ks=[1])
    assert (results[0].passed, results[0].status, results[0].failed_input) == (False, "timeout", 1)
    rest = recording.results[-1].results[1 if language == "cpp" else 0 :]
    assert [r.status for r in rest] == ["timeout"] + ["skipped"] * (len(SQUARES) - 2)
    # a wrong output stops it too (checked by the parent, which alone holds the expected outputs)
    wrong = (
        "print(int(input()) * 2)"
        if language == "python"
        else ('#include <cstdio>\nint main(){ int n; scanf("%d", &n); printf("%d\\n", 2 * n); }')
    )
    _, results, _ = evaluate_problems([problem], [("s/sq", wrong)], recording, ks=[1])
    assert (results[0].status, results[0].failed_input) == ("fail", 1)
    rest = recording.results[-1].results[1 if language == "cpp" else 0 :]
    assert [r.status for r in rest] == ["ok"] + ["skipped"] * (len(SQUARES) - 2)


# a problem with many correct outputs: any divisor d of n with 1 < d < n, or -1 for a prime
DIVISOR_CHECKER = """
import json, sys
case = json.load(sys.stdin)
n = int(case["input"])
words = case["output"].split()
if len(words) != 1 or not words[0].lstrip("-").isdigit():
    print("one integer expected")
    sys.exit(1)
d = int(words[0])
prime = n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1))
if d == -1:
    sys.exit(0 if prime else 2)
sys.exit(0 if 1 < d < n and n % d == 0 else 3)
"""
DIVISOR_GT = "n = int(input())\nprint(next((d for d in range(2, n) if n % d == 0), -1))"


def _divisor(pid: str = "s/div", checker_program: str = DIVISOR_CHECKER) -> Problem:
    tests = [
        {"input": f"{n}\n", "output": f"{next((d for d in range(2, n) if n % d == 0), -1)}\n"} for n in (12, 7, 9, 100)
    ]
    return _stdio(pid, gt=DIVISOR_GT, io_tests=tests, checker_program=checker_program)


def test_a_problem_with_many_correct_outputs_is_judged_by_its_checker_program(executor):
    """Special judges: the problem's checker program reads the input, the reference output and the run's
    output, and its exit status decides, so the largest divisor passes where GT prints the smallest, and a
    wrong divisor fails with the checker's own reason."""
    largest = "n = int(input())\nprint(next((d for d in range(n - 1, 1, -1) if n % d == 0), -1))"
    wrong = "n = int(input())\nprint(1)"
    chatty = "n = int(input())\nprint('divisor:', 2)"
    _, results, tasks = evaluate_problems(
        [_divisor()], [("s/div", DIVISOR_GT), ("s/div", largest), ("s/div", wrong), ("s/div", chatty)], executor
    )
    assert not tasks[0].excluded
    assert [(r.passed, r.status, r.failed_input) for r in results] == [
        (True, "pass", None),
        (True, "pass", None),
        (False, "fail", 0),
        (False, "fail", 0),
    ]
    assert results[3].error == "checker: one integer expected"
    assert results[2].error == "checker: exit status 3"
    # exact comparison would have failed the largest divisor: the checker is what decides
    exact = _stdio("s/exact", gt=DIVISOR_GT, io_tests=_divisor().io_tests)
    _, again, _ = evaluate_problems([exact], [("s/exact", largest)], executor)
    assert not again[0].passed


def test_a_checker_program_that_fails_fails_the_output_and_excludes_a_gt_it_rejects(executor):
    broken = evaluate_problems(
        [_divisor("s/broken", "raise SystemExit(input())")], [("s/broken", DIVISOR_GT)], executor
    )
    assert broken[2][0].excluded and "GT fails its own test 0" in broken[2][0].reason
    crashing = "import json, sys\njson.load(sys.stdin)\n1 / 0"
    _, _, tasks = evaluate_problems([_divisor("s/crash", crashing)], [("s/crash", DIVISOR_GT)], executor)
    assert tasks[0].excluded and "ZeroDivisionError" in tasks[0].reason
    with pytest.raises(Exception, match="for kind 'stdio' problems only"):
        Problem.from_dict({**Problem("f", "p", "d", "f", "def f(): pass").to_dict(), "checker_program": "pass"})
    row = _divisor().to_dict()
    assert Problem.from_dict(row) == _divisor() and "checker_program" not in _stdio("s/x", io_tests=SQUARES).to_dict()
