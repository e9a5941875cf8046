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

from codea1.judge.kinds.stdio import (
    judge_outputs,
    judge_runs,
    program_job,
    program_runs,
)
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor
from codea1.sandbox.api import Job
from codea1.sandbox.runners import RunResult


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
