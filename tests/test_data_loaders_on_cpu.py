"""Problem loaders: bundled set, JSONL round trip, reference parquet, KodCode rows, HumanEval, malformed rows."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path

import pytest

from codea1.data import (
    Problem,
    load_bundled,
    load_humaneval,
    load_kodcode,
    load_problems,
    load_reference_parquet,
    read_problems_jsonl,
    write_problems_jsonl,
)
from codea1.data.reference import check_program_facts
from codea1.errors import UserError
from codea1.judge.asserts import split_assert

REPO = Path(__file__).resolve().parents[1]
BUILD_SCRIPT = REPO / "scripts" / "build_bundled.py"


# -- bundled set -------------------------------------------------------------------------------------


def test_bundled_set_shape_and_split_rule():
    problems = load_bundled()
    assert len(problems) >= 80
    assert [p.id for p in problems] == [f"bundled/{i:04d}" for i in range(len(problems))]
    assert len({p.entry_point for p in problems}) == len(problems)
    levels = [p.difficulty for p in problems]
    assert set(levels) == {"easy", "medium", "hard"}
    assert levels.count("easy") >= len(problems) // 4
    for i, p in enumerate(problems):
        assert p.split == ("eval" if i % 2 else "train")
        assert len(p.golden_tests) >= 5
        assert p.entry_point in p.prompt and p.entry_point in p.description
        assert "assert" not in p.description  # hidden tests stay hidden
        for test in p.golden_tests:
            call, op, _ = split_assert(test)
            assert op == "==" and call.startswith(p.entry_point + "(")
    train, held_out = load_bundled("train"), load_bundled("eval")
    assert len(train) + len(held_out) == len(problems)
    assert {p.id for p in train}.isdisjoint(p.id for p in held_out)
    assert {p.difficulty for p in held_out} == {"easy", "medium", "hard"}
    assert [p.id for p in load_problems("bundled:eval")] == [p.id for p in held_out]
    with pytest.raises(UserError, match="split"):
        load_bundled("test")


@pytest.mark.skipif(not BUILD_SCRIPT.is_file(), reason="build script not in this checkout")
def test_bundled_jsonl_matches_its_build_script():
    spec = importlib.util.spec_from_file_location("build_bundled", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = module.build_rows()
    shipped = module.OUTPUT.read_text(encoding="utf-8")
    assert module.render(rows) == shipped
    assert module.verify(rows) == []
    rows[0]["golden_tests"][0] = rows[0]["golden_tests"][0].replace("== 3", "== 4")
    assert len(module.verify(rows)) == 1  # the build's own check catches a wrong expectation


# -- JSONL and malformed rows ------------------------------------------------------------------------


def test_jsonl_round_trip(tmp_path):
    problems = load_bundled()[:5]
    problems[0].meta = {"note": "ünïcode", "n": [1, 2]}
    path = tmp_path / "sub" / "p.jsonl"
    write_problems_jsonl(problems, path)
    again = read_problems_jsonl(path)
    assert again == problems
    assert load_problems(str(path), limit=2) == problems[:2]


@pytest.mark.parametrize(
    "line, message",
    [
        ('{"id": "x", "prompt": "p", "description": "d", "entry_point": "f"}', r"bad\.jsonl:1: field 'gt_solution'"),
        ("not json", r"bad\.jsonl:1: not valid JSON"),
        (
            (
                '{"id": "x", "prompt": "p", "description": "d", "entry_point": "f", "gt_solution": "def f(): pass",'
                ' "golden_tests": "assert f() == 1"}'
            ),
            "golden_tests",
        ),
        ('["a list"]', "expected a JSON object"),
    ],
)
def test_malformed_jsonl_row_names_line_and_field(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=message):
        read_problems_jsonl(path)


def test_unknown_source_and_empty_result_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="unknown"):
        load_problems("no-such-source")
    with pytest.raises(UserError, match="no such problem file"):
        load_problems(str(tmp_path / "missing.jsonl"))
    with pytest.raises(UserError, match="no problems left"):
        load_problems("bundled", difficulty="impossible")


# -- reference parquet -------------------------------------------------------------------------------


def test_reference_parquet_loader(validation_parquet):
    problems = load_reference_parquet(validation_parquet)
    assert len(problems) == 542
    by_id = {p.id: p for p in problems}
    assert sum(p.source == "humanevalplus" for p in problems) == 164
    # HumanEval+ GT_code is a body: joined with the signature; MBPP+ GT is complete
    assert by_id["HumanEval/0"].meta["gt_assembly"] == "joined"
    assert by_id["HumanEval/0"].gt_solution.lstrip().startswith("from typing import List")
    assert by_id["MBPP/82"].meta["gt_assembly"] == "complete"
    assert all("gt_error" not in p.meta for p in problems)
    # check() calls another function than extra_info.function_name names
    assert by_id["MBPP/6"].entry_point == "differ_At_One_Bit_Pos"
    assert by_id["MBPP/6"].meta["function_name_field"] == "is_Power_Of_Two"
    assert by_id["MBPP/6"].golden_tests[0] == "assert differ_At_One_Bit_Pos(13, 9) == True"
    assert len(by_id["HumanEval/0"].golden_tests) == 8
    assert by_id["HumanEval/32"].golden_tests == []  # custom predicate, not input/result pairs
    assert by_id["HumanEval/14"].golden_tests == []  # compares with a ref_func
    assert by_id["MBPP/82"].meta["atol"] == 0.0001
    assert "check(" in by_id["MBPP/82"].test_code
    only_mbpp = load_reference_parquet(validation_parquet, sources=["mbppplus"])
    assert len(only_mbpp) == 378


ASSERTION = "def assertion(out, exp, atol):\n    exact_match = out == exp\n    assert exact_match\n\n\n"


def test_check_program_facts_on_a_small_program():
    program = ASSERTION + (
        "def check(candidate):\n"
        "    inputs = [[1, 2], [(3, 4)], [x], [[5]]]\n"
        "    results = [3, 7, 0, (5,)]\n"
        "    for i, (inp, exp) in enumerate(zip(inputs, results)):\n"
        "        assertion(candidate(*inp), exp, 0)\n"
    )
    facts = check_program_facts(program, "f")
    assert facts["called"] == "f"
    assert facts["golden_tests"] == ["assert f(1, 2) == 3", "assert f((3, 4)) == 7", "assert f([5]) == (5,)"]
    assert check_program_facts("def check(c):\n    assert c(1) == 2\n", "f")["golden_tests"] == []
    as_sets = program.replace(
        "    exact_match = out == exp\n", "    out = set(out)\n    exp = set(exp)\n    assert out == exp\n"
    )
    assert check_program_facts(as_sets, "f")["golden_tests"][0] == "assert set(f(1, 2)) == set(3)"
    truthy = program.replace("exact_match = out == exp", "exact_match = exp == (out is not None)")
    assert check_program_facts(truthy, "f")["golden_tests"] == []


def _reference_row(**changes):
    row = {
        "prompt": [{"role": "user", "content": "Complete add."}],
        "description": "Add two numbers.",
        "GT_code": "    return a + b\n",
        "problem": 'def add(a, b):\n    """Add."""\n',
        "test": ASSERTION
        + (
            "def check(candidate):\n    inputs = [[1, 2]]\n    results = [3]\n"
            "    for i, (inp, exp) in enumerate(zip(inputs, results)):\n"
            "        assertion(candidate(*inp), exp, 0)\n"
        ),
        "data_source": "tiny",
        "extra_info": {
            "function_name": "add",
            "imports": "",
            "function_declaration": "def add(a, b):",
            "question_id": "Tiny/0",
        },
    }
    row.update(changes)
    return row


def test_reference_parquet_malformed_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = tmp_path / "good.parquet"
    pq.write_table(pa.Table.from_pylist([_reference_row()]), good)
    [problem] = load_reference_parquet(good)
    assert problem.meta["gt_assembly"] == "joined" and problem.golden_tests == ["assert add(1, 2) == 3"]

    broken = tmp_path / "broken.parquet"
    pq.write_table(pa.Table.from_pylist([_reference_row(GT_code="    return a +\n")]), broken)
    [problem] = load_reference_parquet(broken)
    assert problem.meta["gt_assembly"] == "unrunnable"
    assert "does not parse" in problem.meta["gt_error"]

    no_id = tmp_path / "no_id.parquet"
    extra = {"function_name": "add", "imports": "", "function_declaration": "", "question_id": ""}
    pq.write_table(pa.Table.from_pylist([_reference_row(extra_info=extra)]), no_id)
    with pytest.raises(UserError, match=r"row 0: field 'extra_info.question_id'"):
        load_reference_parquet(no_id)

    no_column = tmp_path / "no_column.parquet"
    row = _reference_row()
    del row["GT_code"]
    pq.write_table(pa.Table.from_pylist([row]), no_column)
    with pytest.raises(UserError, match="GT_code"):
        load_reference_parquet(no_column)

    not_parquet = tmp_path / "x.parquet"
    not_parquet.write_text("hello", encoding="utf-8")
    with pytest.raises(UserError, match="not a readable parquet"):
        load_problems(str(not_parquet))


# -- KodCode -----------------------------------------------------------------------------------------

KODCODE_TEST = """from solution import clamp_sum

def test_basic():
    assert clamp_sum([1, 2, 3], 10) == 6
    nums = [5, 5, 5]
    assert clamp_sum(nums, 12) == 12

def test_empty():
    assert clamp_sum([], 3) == 0
    result = clamp_sum([-1], 0)
    assert result == -1

def test_not_converted():
    assert clamp_sum([1], 1) <= 1
"""


def _kodcode_rows():
    info = [
        {
            "function_name": "clamp_sum",
            "function_declaration": "def clamp_sum(nums, limit):",
            "parameter_list": "(nums, limit)",
            "docstring": None,
        }
    ]
    base = {
        "version": "V1",
        "style": "instruct",
        "subset": "Prefill",
        "test_info": info,
        "question": "Return the sum of nums, but at most limit.",
        "gpt_pass_percentage": 0.9,
        "solution": "def clamp_sum(nums, limit):\n    return min(sum(nums), limit)\n",
        "test": KODCODE_TEST,
    }
    class_task = dict(
        base,
        question_id="Prefill_2_I",
        gpt_difficulty="easy",
        solution="class Box:\n    def clamp_sum(self):\n        return 0\n",
    )
    return [
        dict(base, question_id="Prefill_1_I", gpt_difficulty="easy"),
        dict(base, question_id="Prefill_3_I", gpt_difficulty="hard"),
        class_task,
    ]


def test_kodcode_loader_on_in_memory_dataset():
    import datasets

    dataset = datasets.Dataset.from_list(_kodcode_rows())
    with pytest.warns(RuntimeWarning, match="skipped 1 row"):
        easy = load_kodcode(dataset, difficulty="easy")
    assert [p.id for p in easy] == ["kodcode/Prefill_1_I"]
    problem = easy[0]
    assert problem.entry_point == "clamp_sum" and problem.difficulty == "easy" and problem.source == "kodcode"
    assert "def clamp_sum(nums, limit):" in problem.prompt
    assert problem.description == "Return the sum of nums, but at most limit."
    assert problem.golden_tests == [
        "assert clamp_sum([1, 2, 3], 10) == 6",
        "assert clamp_sum([5, 5, 5], 12) == 12",
        "assert clamp_sum([], 3) == 0",
        "assert clamp_sum([-1], 0) == -1",
    ]
    assert problem.test_code == KODCODE_TEST and problem.meta["test_format"] == "pytest"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [p.id for p in load_kodcode(dataset, difficulty=["hard"])] == ["kodcode/Prefill_3_I"]
        assert len(load_kodcode(datasets.DatasetDict({"train": dataset}))) == 2


def test_kodcode_loader_from_local_file_and_malformed_row(tmp_path):
    path = tmp_path / "kod.jsonl"
    rows = _kodcode_rows()[:2]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    problems = load_problems(f"kodcode:{path}", difficulty="hard")
    assert [p.id for p in problems] == ["kodcode/Prefill_3_I"]
    bad = dict(rows[0])
    bad["solution"] = ""
    with pytest.raises(UserError, match="field 'solution'"):
        load_kodcode([bad])


# -- HumanEval ---------------------------------------------------------------------------------------


def test_humaneval_loader():
    problems = load_humaneval()
    assert len(problems) == 164
    first = problems[0]
    assert first.id == "HumanEval/0" and first.entry_point == "has_close_elements"
    assert first.golden_tests[0].startswith("assert has_close_elements(")
    assert all("candidate" not in t for p in problems for t in p.golden_tests)
    assert all("gt_error" not in p.meta for p in problems)
    assert sum(len(p.golden_tests) for p in problems) > 500
    assert "Check if in given list of numbers" in first.description and "def " not in first.description


def test_problem_record_round_trips_through_dict():
    p = Problem(
        id="a",
        prompt="p",
        description="d",
        entry_point="f",
        gt_solution="def f():\n    return 1\n",
        golden_tests=["assert f() == 1"],
        meta={"k": 1},
    )
    assert Problem.from_dict(p.to_dict()) == p


def test_several_sources_joined_by_commas(tmp_path):
    from codea1.data import load_problems, write_problems_jsonl
    from codea1.errors import UserError

    train, held = load_problems("bundled:train"), load_problems("bundled:eval")
    path = tmp_path / "part.jsonl"
    write_problems_jsonl(train[:3], path)
    both = load_problems(f"{path},bundled:eval")
    assert [p.id for p in both] == [p.id for p in train[:3] + held]
    assert len(load_problems(f"{path},bundled:eval", limit=4)) == 4
    with pytest.raises(UserError, match="more than one source"):
        load_problems(f"{path},bundled:train")


def test_kodcode_from_a_file_keeps_datasets_progress_bars_off_the_terminal(tmp_path, capfd):
    import datasets

    path = tmp_path / "kod_quiet.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _kodcode_rows()), encoding="utf-8")
    assert len(load_problems(f"kodcode:{path}")) == 2
    err = capfd.readouterr().err
    assert "Generating train split" not in err and "it/s" not in err and "examples/s" not in err
    assert datasets.is_progress_bar_enabled()  # as it was before: only codea1's own reading is quiet
