"""verl/PRIME code rows (codea1.data.verl_rows): stdin and function rows, JSONL and parquet, ids, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from codea1.data.loaders import load_problems
from codea1.data.verl_rows import load_verl_rows
from codea1.errors import UserError
from codea1.judge.formats.asserts import read_golden
from codea1.problem import Problem

TINY = Path(__file__).parent / "data" / "verl_tiny.jsonl"


def rows() -> list[dict]:
    return [json.loads(line) for line in TINY.read_text(encoding="utf-8").splitlines()]


def check_fixture(problems: list[Problem]) -> None:
    by_id = {p.id: p for p in problems}
    assert list(by_id) == ["codecontests/17", "leetcode/3", "taco/2"]  # extra_info index, else the row number
    stdio = by_id["codecontests/17"]
    assert (stdio.kind, stdio.entry_point, stdio.checker, stdio.source) == ("stdio", "", "", "codecontests")
    assert stdio.prompt == "Answer in Python.\n\nRead two integers and print their product."
    assert stdio.io_tests == [{"input": "2 3\n", "output": "6\n"}, {"input": "4 5", "output": "20"}]  # lines joined
    lines = by_id["leetcode/3"]  # prime_code's form: arguments as JSON lines, the output as JSON text
    assert (lines.kind, lines.entry_point, lines.meta.get("method_of")) == ("call", "addUp", "Solution")
    assert lines.golden_tests == ["assert addUp([1, 2, 3], 4) == 10", "assert addUp([], 0) == 0"]
    raw = by_id["taco/2"]  # APPS' raw form: a list of arguments, the return value wrapped in a list
    assert (raw.meta["method_of"], raw.meta["method_optional"]) == ("Solution", True)  # as prime_code: either form
    assert raw.golden_tests == [
        "assert pair_up(1, 'x') in ([[1, 'x']], [1, 'x'])",
        "assert pair_up(None, True) in ([[None, True]], [None, True])",
    ]
    assert {p.split for p in problems} == {"train"}  # extra_info.split, kept through data convert verl:
    for p in problems:
        assert p.gt_solution == "" and Problem.from_dict(p.to_dict()) == p
        for test in p.golden_tests:
            assert read_golden(test) is not None


def test_jsonl_rows_of_both_kinds() -> None:
    check_fixture(load_verl_rows(TINY))
    check_fixture(load_problems(f"verl:{TINY}"))


def test_parquet_rows(tmp_path: Path) -> None:
    data = rows()
    for row in data:  # parquet columns need one type: ground truth as JSON text, as verl writes it
        truth = row["reward_model"]["ground_truth"]
        row["reward_model"]["ground_truth"] = truth if isinstance(truth, str) else json.dumps(truth)
        row["prompt"] = (
            row["prompt"] if isinstance(row["prompt"], list) else [{"role": "user", "content": row["prompt"]}]
        )
        row["extra_info"].setdefault("index", None)
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(data), path)
    problems = load_verl_rows(path)
    assert [p.id for p in problems] == ["codecontests/17", "leetcode/3", "taco/2"]
    assert problems[2].golden_tests[0] == "assert pair_up(1, 'x') in ([[1, 'x']], [1, 'x'])"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"reward_model": {"ground_truth": "{"}}, "not valid JSON"),
        ({"reward_model": {"ground_truth": {"inputs": ["1"], "outputs": []}}}, "one length"),
        ({"prompt": [{"role": "user"}]}, "chat messages"),
        ({"reward_model": {"ground_truth": {"fn_name": "f", "inputs": ["[1"], "outputs": ["1"]}}}, "not valid JSON"),
        ({"reward_model": {"ground_truth": {"fn_name": "f", "inputs": [[1]], "outputs": [float("nan")]}}}, "NaN"),
        ({"reward_model": {"ground_truth": {"fn_name": "not a name", "inputs": [[1]], "outputs": [1]}}}, "Python name"),
        ({"reward_model": {"ground_truth": {"inputs": [1], "outputs": ["1"]}}}, "string or a list"),
    ],
)
def test_malformed_rows_are_user_errors(tmp_path: Path, change: dict, reason: str) -> None:
    row = rows()[0] | change
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=reason) as caught:
        load_verl_rows(path)
    assert "rows.jsonl:1" in str(caught.value)


def test_files_and_ids(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such"):
        load_verl_rows(tmp_path / "missing.jsonl")
    other = tmp_path / "rows.csv"
    other.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match="parquet, .jsonl"):
        load_verl_rows(other)
    twice = tmp_path / "twice.jsonl"
    twice.write_text((json.dumps(rows()[0]) + "\n") * 2, encoding="utf-8")
    with pytest.raises(UserError, match="unique"):
        load_verl_rows(twice)
