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
    answered,
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
from codea1.sandbox.runners import RunResult, python_program_job, run_results


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
    # the game takes such a run of GT as its answer, as the evaluation does
    assert answered(run) and not answered(RunResult("ok", "1\n", 4))


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
