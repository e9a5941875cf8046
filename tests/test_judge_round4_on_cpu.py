"""Round 4 of the verdict attacks: one test per class of issue, each failing on the code before its fix.

Pure-value classes run without a sandbox; the rest share one LocalExecutor.
"""

from __future__ import annotations

import math
from decimal import Decimal

from codea1.judge.equality import holds, values_equal


def test_nan_equals_nan_inside_sets_and_dict_keys() -> None:
    # two NaN objects, as the parent decodes them from two different children
    assert values_equal({float("nan"), 1}, {float("nan"), 1})
    assert values_equal(frozenset({(float("nan"), 2)}), frozenset({(float("nan"), 2)}))
    assert values_equal({float("nan"): "a"}, {float("nan"): "a"})
    assert values_equal({(1, float("nan")): [float("nan")]}, {(1, float("nan")): [float("nan")]})
    assert holds("in", float("nan"), {float("nan")})
    # still Python's == everywhere else: sizes, members and values must match, one to one
    assert not values_equal({float("nan"), 1}, {float("nan"), 2})
    assert not values_equal({float("nan")}, {float("nan"), 3})
    assert not values_equal({float("nan"): 1}, {float("nan"): 2})
    assert not values_equal({float("nan"): 1, 2: 3}, {float("nan"): 1, float("nan"): 3})
    assert values_equal({1, 2.0}, {1.0, 2})  # 1 == 1.0 as in Python


def test_decimal_nan_equals_decimal_nan() -> None:
    assert values_equal(Decimal("NaN"), Decimal("NaN"))
    assert values_equal(Decimal("sNaN"), Decimal("sNaN"))
    assert values_equal([Decimal("NaN")], [Decimal("NaN")])
    assert values_equal({Decimal("NaN")}, {Decimal("NaN")})
    assert not values_equal(Decimal("NaN"), Decimal("sNaN"))
    assert not values_equal(Decimal("NaN"), Decimal(1))
    assert not values_equal(Decimal("sNaN"), 1)  # a signalling NaN compared with == raises: unequal, no crash
    assert math.isnan(float(Decimal("NaN")))


# ---------------------------------------------------------------- input files
def test_jsonl_is_split_on_newlines_only(tmp_path) -> None:
    import json

    from codea1.cli import main as cli_main
    from codea1.data.problem import jsonl_rows

    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in ({"a": "x\u2028y\x85z"}, {"a": 2}))
    assert [row for _, row in jsonl_rows(text, "mem")] == [{"a": "x\u2028y\x85z"}, {"a": 2}]
    src = tmp_path / "jobs.jsonl"
    jobs = [{"id": "one", "code": "s = 'a\u2028b'", "calls": ["s"]}, {"id": "two", "code": "", "calls": ["1 + 1"]}]
    src.write_text("\n".join(json.dumps(j, ensure_ascii=False) for j in jobs) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["exec", "--input", str(src), "--output", str(out), "--timeout", "2", "--workers", "1", "--no-progress"]
    assert cli_main(args) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert [r["id"] for r in rows] == ["one", "two"]
    assert [r["results"][0]["value"] for r in rows] == ["a\u2028b", 2]


def test_repeated_problem_ids_are_refused_in_one_sentence(tmp_path) -> None:
    import pytest

    from codea1.data import load_problems
    from codea1.data.problem import Problem, write_problems_jsonl
    from codea1.errors import UserError

    def problem(pid: str, body: str) -> Problem:
        return Problem(pid, "p", "d", "f", f"def f():\n    return {body}", [f"assert f() == {body}"])

    path = tmp_path / "p.jsonl"
    write_problems_jsonl([problem("q/1", "1"), problem("q/2", "2"), problem("q/1", "3")], path)
    with pytest.raises(UserError, match=r"problem ids must be unique, but 'q/1' \(2 times\) repeat"):
        load_problems(str(path))
