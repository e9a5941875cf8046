"""The judge's job builders (codea1.judge.jobs, test_code, coverage, mutants, formats): the program each job
runs, its calls and limit, and what its child gives back."""

from __future__ import annotations

import pytest

from codea1.judge import source_tests
from codea1.judge.coverage import TRACE_FILENAME, coverage_job
from codea1.judge.formats import expected_job, solution_program
from codea1.judge.formats.evalplus import ORACLE_HELPERS
from codea1.judge.formats.spec import PLAIN_HELPER, CheckSpec
from codea1.judge.jobs import calls_job, candidate_job, gt_job, rerun_job
from codea1.judge.mutants import RUNNER, alike_jobs
from codea1.problem import Problem

GT = "import math\n\ndef root(x):\n    return math.isqrt(x)\n"


def _problem(**kw: object) -> Problem:
    return Problem(id="p", prompt="", description="", entry_point="root", gt_solution=GT, imports="import os", **kw)


@pytest.fixture(scope="module")
def executor():
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=1) as ex:
        yield ex


def test_call_jobs_run_in_gt_s_or_the_candidate_s_program_and_a_rerun_keeps_program_and_limit(executor):
    problem = _problem()
    gt = gt_job("gt:p#0", problem, ["root(10)"], 1.5)
    assert (gt.id, gt.code, gt.calls, gt.timeout) == ("gt:p#0", f"import os\n{GT}", ["root(10)"], 1.5)
    cand = candidate_job("cand:p:0:0", problem, "def root(x):\n    return 0\n", ["root(9)", "root(4)", "root(1)"], 2.0)
    assert cand.code.startswith("import os\nimport math\ndef root(x):")  # the problem's and GT's imports first
    again = rerun_job(cand, [2, 0])
    assert (again.id, again.code, again.calls, again.timeout) == (
        "cand:p:0:0:again",
        cand.code,
        ["root(1)", "root(9)"],
        2.0,
    )
    plain = calls_job("7", "x = 2", ["x + 1"], 0.5)
    assert (plain.id, plain.code, plain.calls, plain.timeout) == ("7", "x = 2", ["x + 1"], 0.5)
    ran = executor.run([gt, cand, plain])
    assert [[r.value for r in res.results] for res in ran] == [[3], [0, 0, 0], [3]]


def test_a_test_code_job_runs_the_source_s_check_against_gt(executor):
    check = "def check(candidate):\n    assert candidate(16) == 4\n"
    problem = _problem(test_code=check, meta={"test_format": "evalplus"})
    program = source_tests.test_code_program(problem)
    assert program is not None and program.startswith(GT)  # GT as given: its own imports, not the problem's
    assert source_tests.test_code_program(_problem(test_code=check)) is None  # no format known
    job = source_tests.test_code_job("p", program, 5.0)
    assert (job.calls, job.timeout) == ([source_tests.RUN_TEST_CODE], 5.0)
    wrong = source_tests.test_code_job(
        "q", source_tests.test_code_program(_problem(test_code=check.replace("4", "5"), meta=problem.meta)), 5.0
    )
    good, bad = executor.run([job, wrong])
    assert good.results[0].status == "ok" and bad.results[0].status == "error"


def test_a_coverage_job_traces_only_the_function_s_lines(executor):
    source = "def sign(x):\n    if x > 0:\n        return 1\n    return 0\n"
    job = coverage_job("f", "import math\n", source, ["sign(3)", "math.floor(1.5)"], 4.0)
    assert (job.id, job.timeout) == ("f", 4.0) and TRACE_FILENAME in job.code
    [res] = executor.run([job])
    lines, arcs = res.results[0].value
    assert lines == [1, 2, 3]  # the def line (module level), the test, the return taken; never line 4
    assert (2, 3) in [tuple(a) for a in arcs]


def test_alike_jobs_differ_only_in_the_program_and_a_program_that_does_not_compile_gets_none(executor):
    programs = ["def f(x):\n    return x + 1\n", "def f(:\n", "def f(x):\n    return x - 1\n"]
    jobs, where, undefined = alike_jobs(programs, ["f(1)", "f(2)"], 3.0, stop_on_error=True)
    assert [j.id for j in jobs] == ["program-0", "program-2"] and where == [0, 2]
    assert list(undefined) == [1] and undefined[1].startswith("SyntaxError")
    assert all(RUNNER in j.code and j.calls == ["__codea1_run(True)"] and j.timeout == 3.0 for j in jobs)
    assert jobs[0].code.split("__CODEA1_PROGRAM")[0] == jobs[1].code.split("__CODEA1_PROGRAM")[0]
    assert [res.results[0].value for res in executor.run(jobs)] == [
        ("ran", [("ok", 2), ("ok", 3)]),
        ("ran", [("ok", 0), ("ok", 1)]),
    ]


def test_a_solution_s_program_and_the_expected_values_job_of_a_spec():
    helpers = "def ref(x):\n    return x\n"
    spec = CheckSpec(["root(1)"], ["[1]"], ["ref(1)"], helpers, "import re", mode="asserts", alt_calls=["ref(2)"])
    problem = _problem(meta={"method_of": "Solution"})
    program = solution_program(problem, spec, "class Solution:\n    def root(self, x):\n        return x\n")
    assert program.startswith("import os\nclass Solution:") and "root = Solution().root" in program
    assert "\nimport re\n" in program and program.endswith(PLAIN_HELPER)  # the test program's imports, then the helper
    job = expected_job("p", spec, 9.0)
    assert job.calls == ["ref(1)", "__codea1_plain(ref(2))"] and job.timeout == 9.0
    assert job.code == f"{spec.helpers}\n{ORACLE_HELPERS}\n{PLAIN_HELPER}"
