"""Test-generation evaluation: ULT loading, validity, mut@k, coverage, white-box, collab, export, CLI."""

import json

import pytest

from codea1.data.ult import UltFunction, load_ult
from codea1.eval.collab import pick_index
from codea1.eval.mutation import score_mutants
from codea1.eval.suite_eval import coverage_from_trace, score_tests
from codea1.problem import Problem

SIGN = "def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n"
CLAMP = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"


@pytest.fixture(scope="module")
def executor():
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=2) as ex:
        yield ex


def test_ult_loader_reads_lite_and_full_formats(tmp_path, ult_lite):
    lite = load_ult(ult_lite)
    assert len(lite) == 200 and lite[0].func_name and lite[0].tests
    full = tmp_path / "ULT.jsonl"
    full.write_text(json.dumps([{"task_id": 7, "code": "import re\n\ndef g(s):\n    return s\n", "prompt": "id"}]))
    [fn] = load_ult(full)
    assert (fn.task_id, fn.func_name, fn.tests, fn.description) == ("7", "g", [], "id")
    assert "import re" in fn.program


def test_coverage_from_trace_follows_coverage_arcs():
    # x = 5: lines 1 (def), 2, 3 run; branch exits of lines 2 and 4: only 2->3 taken
    cov = coverage_from_trace(SIGN, [1, 2, 3], [(-1, 1), (1, -1), (-1, 2), (2, 3), (3, -1)])
    assert cov.statements == 6 and cov.line == pytest.approx(100 * 3 / 6)
    assert cov.branches == 4 and cov.branch == pytest.approx(25.0)


def test_score_tests_validity_mutation_and_coverage(executor):
    fns = [
        UltFunction(task_id="sign", func_name="sign", code=SIGN),
        UltFunction(task_id="clamp", func_name="clamp", code=CLAMP),
    ]
    tests = {
        "sign": ["assert sign(5) == 1", "assert sign(-2) == -1", "assert sign(0) == 0"],
        "clamp": ["assert clamp(5, 0, 3) == 3", "assert clamp(1, 0, 3) == 2", "not a test"],
    }
    summary, records = score_tests(fns, tests, executor, k=3)
    sign, clamp = records
    assert sign.valid == [True, True, True] and clamp.valid == [True, False, False]
    assert summary["pass@3"] == pytest.approx(100 * 4 / 6)
    # sign's three tests kill every mutant except number/compare tweaks they cannot see
    assert sign.mutants > 20 and 0 < sign.killed <= sign.mutants
    assert clamp.mutation_score is None and summary["functions_mutation_scored"] == 1
    assert summary["mut@3"] == pytest.approx(sign.mutation_score)
    assert summary["Mul"] == pytest.approx(summary["pass@3"] * summary["mut@3"] / 100)
    assert sign.line_coverage == 100.0 and sign.branch_coverage == 100.0
    assert clamp.line_coverage == 100.0


def test_mutant_survives_without_a_discriminating_call_and_dies_with_one(executor):
    weak = score_mutants(SIGN, ["sign(5)"], executor)
    strong = score_mutants(SIGN, ["sign(5)", "sign(-5)", "sign(0)", "sign(1)", "sign(-1)"], executor)
    assert weak.total == strong.total > 0
    assert weak.killed < strong.killed
    survivors = {o.id for o in strong.outcomes if not o.killed}
    # `x > 0` -> `x >= 0` changes nothing on these inputs except sign(0): it must be killed
    assert "ReplaceComparisonOperator_Gt_GtE@2:9" not in survivors
    assert sum(c["total"] for c in strong.by_family.values()) == strong.total
    hang = score_mutants("def f(n):\n    while n > 0:\n        n -= 1\n    return n\n", ["f(3)"], executor)
    addnot = next(o for o in hang.outcomes if o.operator == "ZeroIterationForLoop" or o.operator == "AddNot")
    assert addnot.killed


def test_whitebox_attack_rate(executor):
    from codea1.eval.mutation import generate_mutants

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    buggy = next(m for m in generate_mutants(SIGN) if m.id == "ReplaceComparisonOperator_Gt_GtE@2:9")
    exposing = {"sign": ["assert sign(0) == 0"]}
    blind = {"sign": ["assert sign(3) == 1"]}
    s1, r1 = score_tests([fn], exposing, executor, k=1, mutation=False, coverage=False, buggy={"sign": buggy})
    s2, _ = score_tests([fn], blind, executor, k=1, mutation=False, coverage=False, buggy={"sign": buggy})
    assert r1[0].exposed is True and s1["attack_rate"] == 100.0
    assert s2["attack_rate"] == 0.0


def test_collab_and_export(executor):
    from codea1.eval.code_eval import prepare_tasks
    from codea1.eval.collab import collaborate
    from codea1.eval.export import validated_golden

    assert pick_index([1, 3, 3, 0]) == 1 and pick_index([0, 0]) == 0
    p = Problem(
        id="P/abs",
        prompt="abs",
        description="abs",
        entry_point="my_abs",
        gt_solution="def my_abs(x):\n    return x if x >= 0 else -x\n",
        golden_tests=["assert my_abs(-3) == 3", "assert my_abs(2) == 2"],
    )
    tasks = prepare_tasks([p], executor)
    solutions = {"P/abs": ["def my_abs(x):\n    return x\n", "def my_abs(x):\n    return abs(x)\n"]}
    tests = {"P/abs": ["assert my_abs(-1) == 1", "assert my_abs(-1) == -1", "assert my_abs(0) == 0"]}
    summary, records = collaborate(tasks, solutions, tests, executor)
    assert records[0].valid_tests == 2 and records[0].passes == [1, 2] and records[0].picked == 1
    assert summary["pass@1_picked"] == 1.0 and summary["pass@1_plain"] == 0.5
    out, stats = validated_golden([p], tests, executor)
    assert out[0].golden_tests == ["assert my_abs(-1) == 1", "assert my_abs(0) == 0"]
    assert stats["tests_valid"] == 2 and stats["tests_parsed"] == 3


def test_cli_eval_tests_from_file(tmp_path):
    from codea1.cli import main

    ult = tmp_path / "ult.json"
    ult.write_text(json.dumps([{"task_id": "s", "func_name": "sign", "code": SIGN, "prompt": "sign of x"}]))
    tests = tmp_path / "t.jsonl"
    tests.write_text(
        json.dumps({"task_id": "s", "response": "```python\nassert sign(2) == 1\nassert sign(0) == 1\n```"})
    )
    out = tmp_path / "r.json"
    assert main(["eval", "tests", "--tests", str(tests), "--benchmark", str(ult), "--k", "2", "-o", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["pass@2"] == 50.0 and summary["functions_all_valid"] == 0
    assert summary["config"]["k"] == 2 and "isolation_level" in summary["config"]
