"""LiveCodeBench loader (codea1.data.livecodebench): both test types, private tests decoded, the date window,
and data files that try to run code or fill memory refused."""

from __future__ import annotations

import ast
import base64
import io
import json
import pickle
import zlib
from pathlib import Path

import pytest

from codea1.data import livecodebench
from codea1.data.livecodebench import _NoGlobalsUnpickler, decode_private_tests, load_livecodebench
from codea1.data.loaders import load_benchmark, load_problems
from codea1.errors import UserError
from codea1.judge.formats.asserts import read_golden
from codea1.problem import Problem

TINY = Path(__file__).parent / "data" / "livecodebench_tiny.jsonl"


def packed(value: object) -> str:
    """base64 of zlib of a pickle, the form of recent releases' private_test_cases."""
    return base64.b64encode(zlib.compress(pickle.dumps(value))).decode()


def stdin_row(private: str, qid: str = "abc999_z") -> dict:
    return {
        "question_title": "t",
        "question_content": "Print 1.",
        "platform": "atcoder",
        "question_id": qid,
        "contest_id": "abc999",
        "contest_date": "2024-05-01T00:00:00",
        "starter_code": "",
        "difficulty": "easy",
        "public_test_cases": json.dumps([{"input": "", "output": "1\n", "testtype": "stdin"}]),
        "private_test_cases": private,
        "metadata": "{}",
    }


def write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_fixture_rows_of_both_kinds() -> None:
    problems = {p.id: p for p in load_livecodebench(TINY)}
    assert sorted(problems) == ["livecodebench/2090A", "livecodebench/9001", "livecodebench/abc900_a"]
    stdio = problems["livecodebench/abc900_a"]
    assert (stdio.kind, stdio.entry_point, stdio.checker, stdio.gt_solution) == ("stdio", "", "lcb", "")
    assert stdio.io_tests == [  # the public test first, then the private ones (decoded from the pickle)
        {"input": "3 4\n", "output": "7\n"},
        {"input": "0 0\n", "output": "0\n"},
        {"input": "-5 12\n", "output": "7\n"},
    ]
    assert stdio.meta["public_tests"] == 1 and stdio.meta["platform"] == "atcoder"
    assert stdio.meta["contest_date"] == "2023-08-19T00:00:00" and stdio.difficulty == "easy"
    assert stdio.description.startswith("You are given two integers") and "standard input" in stdio.prompt
    assert problems["livecodebench/2090A"].io_tests[1] == {"input": "1\nx\n", "output": "x\n"}  # plain JSON
    call = problems["livecodebench/9001"]
    assert (call.kind, call.entry_point, call.meta["method_of"], call.gt_solution) == (
        "call",
        "largestPair",
        "Solution",
        "",
    )
    assert "def largestPair(self, nums: List[int], flag: bool)" in call.prompt
    assert call.golden_tests == [
        "assert largestPair([1, 5, 3], True) == [8, [3, 5]]",
        "assert largestPair([2, 2], False) == [4, [2, 2]]",
        "assert largestPair([-1, -2, 7], None) == [6, [-1, 7]]",
    ]
    assert "from typing import *" in call.imports  # the names LiveCodeBench's runner gives solutions
    for test in call.golden_tests:  # what the golden-assert reader takes: one call, ==, a literal
        left, op, right = read_golden(test)
        assert op == "==" and left.startswith("largestPair(")
        ast.literal_eval(right)
    for p in problems.values():  # each is a valid Problem record
        assert Problem.from_dict(p.to_dict()) == p


def test_json_values_become_python_literals(tmp_path: Path) -> None:
    tests = [{"input": '{"a": [true, null]}\n"x\\ny"\n-1.5e3', "output": "false", "testtype": "functional"}]
    row = stdin_row(json.dumps([]), "1") | {
        "public_test_cases": json.dumps(tests),
        "metadata": json.dumps({"func_name": "f"}),
    }
    (problem,) = load_livecodebench(write_rows(tmp_path / "rows.jsonl", row))
    assert problem.golden_tests == ["assert f({'a': [True, None]}, 'x\\ny', -1500.0) == False"]
    for bad in ("NaN", "[1,"):
        tests[0]["output"] = bad
        row["public_test_cases"] = json.dumps(tests)
        with pytest.raises(UserError, match="test 0"):
            load_livecodebench(write_rows(tmp_path / "rows.jsonl", row))


def test_release_date_window() -> None:
    def ids(**kw: object) -> list[str]:
        return sorted(p.id.split("/")[1] for p in load_livecodebench(TINY, **kw))

    assert ids(since="2024-01-01") == ["2090A", "9001"]
    assert ids(until="2024-03-02") == ["9001", "abc900_a"]  # both ends included
    assert ids(until="2024-03-01") == ["abc900_a"]
    assert ids(since="2024-03-02", until="2024-03-02") == ["9001"]
    assert ids(since="2025-01-01") == []
    assert ids(platforms=["codeforces", "atcoder"]) == ["2090A", "abc900_a"]
    assert ids(kinds="call") == ["9001"]
    with pytest.raises(UserError, match="not an ISO date"):
        load_livecodebench(TINY, since="May 2024")
    with pytest.raises(UserError, match="unknown"):
        load_livecodebench(TINY, platforms=["topcoder"])


def test_sources_in_load_problems_and_benchmarks() -> None:
    assert len(load_problems(f"livecodebench:{TINY}")) == 3
    window = load_problems(f"livecodebench@2024-01-01..2024-06-30:{TINY}")
    assert [p.id for p in window] == ["livecodebench/9001"]
    assert len(load_problems(f"livecodebench@2024-01-01..:{TINY}")) == 2
    assert [p.id for p in load_benchmark("livecodebench@..2023-12-31", str(TINY))] == ["livecodebench/abc900_a"]
    with pytest.raises(UserError, match="SINCE..UNTIL"):
        load_problems(f"livecodebench@2024-01-01:{TINY}")
    with pytest.raises(UserError, match="name the data file"):
        load_problems("livecodebench")


def test_private_tests_may_be_the_pickled_list_itself() -> None:
    tests = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    assert decode_private_tests(packed(tests), "row") == tests
    assert decode_private_tests(packed(json.dumps(tests)), "row") == tests
    assert decode_private_tests(json.dumps(tests), "row") == tests


class _Payload:
    """Unpickling this opens (so creates) the file at `path`: a stand-in for any code a pickle can run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple:
        return (open, (str(self.path), "w"))


def test_a_pickle_that_runs_code_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    proof = tmp_path / "proof"
    pickle.loads(pickle.dumps(_Payload(proof))).close()  # the payload does run under plain pickle.loads
    assert proof.exists()
    marker = tmp_path / "marker"
    for value in (_Payload(marker), [_Payload(marker)], open):  # a call, a call inside a list, a bare global
        row = stdin_row(packed(value))
        with pytest.raises(UserError, match="refused"):
            load_livecodebench(write_rows(tmp_path / "rows.jsonl", row))
    assert not marker.exists()
    # the second wall: the unpickler alone resolves no global either
    with pytest.raises(pickle.UnpicklingError, match="no global is allowed"):
        _NoGlobalsUnpickler(io.BytesIO(pickle.dumps(_Payload(marker)))).load()
    assert not marker.exists()


@pytest.mark.parametrize(
    ("private", "reason"),
    [
        (packed({1, 2}), "must be a list"),
        (packed(3), "must be a list"),
        (packed([{"input": 1, "output": "2", "testtype": "stdin"}]), "string 'input'"),
        (packed("not json ["), "not JSON text"),
        (base64.b64encode(zlib.compress(b"\x80\x04junk")).decode(), "not a readable pickle"),
        (base64.b64encode(zlib.compress(pickle.dumps("[]"))[:-6]).decode(), "truncated"),
        (base64.b64encode(b"not zlib at all").decode(), "neither JSON nor zlib"),
    ],
)
def test_malformed_private_tests_are_user_errors(tmp_path: Path, private: str, reason: str) -> None:
    with pytest.raises(UserError, match=reason) as caught:
        load_livecodebench(write_rows(tmp_path / "rows.jsonl", stdin_row(private)))
    assert "rows.jsonl:1" in str(caught.value)  # the message names the row


def test_a_zip_bomb_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(livecodebench, "MAX_DECOMPRESSED", 1 << 20)
    fits = [{"input": "x" * 400_000, "output": "1\n", "testtype": "stdin"}]
    assert len(decode_private_tests(packed(json.dumps(fits)), "row")) == 1
    bomb = base64.b64encode(zlib.compress(pickle.dumps("[" + " " * (8 << 20) + "]"), 9)).decode()
    assert len(bomb) < 20_000  # 8 MB from a few kilobytes
    with pytest.raises(UserError, match="inflates to more than 1 MB"):
        load_livecodebench(write_rows(tmp_path / "rows.jsonl", stdin_row(bomb)))
