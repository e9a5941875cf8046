"""`codea1 eval code --samples` with samples written elsewhere: a source's own ids (LiveCodeBench's
question_id), fenced answers read as the rewards read them, unknown ids and too large a k refused, a wrong
answer's record saying what was expected and what came back, progress that ends where scoring ended."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codea1.cli import main
from codea1.data import load_problems
from codea1.eval.by_kind import evaluate_problems
from codea1.eval.code_eval import summarize

LCB = f"livecodebench:{Path(__file__).parent / 'data' / 'livecodebench_tiny.jsonl'}"
SUM = "a, b = map(int, input().split())\nprint(a + b)"
PAIR = (
    "class Solution:\n    def largestPair(self, nums, flag):\n        a = sorted(nums)[-2:]\n        return [sum(a), a]"
)


def _fenced(code: str, lang: str = "python") -> str:
    return f"Here is my answer.\n```{lang}\n{code}\n```\nIt reads the input and prints the sum."


def _write(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "solution": s}) + "\n" for t, s in rows), encoding="utf-8")
    return path


def _eval(tmp_path: Path, samples: Path, benchmark: str, *extra: str) -> int:
    return main(
        ["eval", "code", "--samples", str(samples), "--benchmark", benchmark, "-o", str(tmp_path / "r.json"), *extra]
    )


def test_livecodebench_samples_keyed_by_question_id_and_fenced_are_scored(tmp_path):
    # as LiveCodeBench's own output files key them, each answer fenced as a model writes it
    rows = [("abc900_a", _fenced(SUM)), ("abc900_a", _fenced("print(0)")), ("9001", _fenced(PAIR)), ("9001", PAIR)]
    assert _eval(tmp_path, _write(tmp_path / "s.jsonl", rows), LCB) == 0
    summary = json.loads((tmp_path / "r.json").read_text())
    assert summary["tasks"] == {
        "livecodebench/9001": {"n": 2, "correct": 2},
        "livecodebench/abc900_a": {"n": 2, "correct": 1},
    }
    assert summary["pass@1"] == 0.75 and summary["scored_tasks"] == 2
    records = [json.loads(x) for x in (tmp_path / "r.results.jsonl").read_text().splitlines()]
    assert records[0]["solution"] == SUM and "```" not in records[2]["solution"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_fenced_cpp_samples_are_compiled_without_their_fence(tmp_path):
    [p] = load_problems("bundled-stdio-cpp", limit=1)
    rows = [(p.id, _fenced(p.gt_solution, "cpp")), (p.id, _fenced(p.gt_solution, "c++"))]
    assert _eval(tmp_path, _write(tmp_path / "s.jsonl", rows), "bundled-stdio-cpp", "--limit", "1") == 0
    assert json.loads((tmp_path / "r.json").read_text())["pass@1"] == 1.0


def test_unknown_task_ids_are_refused_by_name(tmp_path, capsys):
    rows = [("abc900_a", SUM), ("abc999_z", SUM), ("livecodebench/nope", SUM)]
    assert _eval(tmp_path, _write(tmp_path / "s.jsonl", rows), LCB) == 2
    err = capsys.readouterr().err
    assert "2 task_id(s) name no problem of" in err and "'abc999_z'" in err and "'livecodebench/nope'" in err
    assert "Traceback" not in err and not (tmp_path / "r.json").exists()


def test_k_above_a_tasks_sample_count_is_refused(tmp_path, capsys):
    rows = [("abc900_a", SUM)] * 5 + [("9001", PAIR)]
    assert _eval(tmp_path, _write(tmp_path / "s.jsonl", rows), LCB, "--k", "5") == 2
    err = capsys.readouterr().err
    assert "--k 5 is larger than the 1 sample(s) of task 'livecodebench/9001'" in err and "Traceback" not in err


def test_pass_at_k_over_a_subset_says_how_many_tasks_it_covers():
    from codea1.eval.code_eval import SampleResult

    results = [SampleResult("a", i, i == 0, "pass" if i == 0 else "fail") for i in range(5)]
    results.append(SampleResult("b", 0, False, "fail"))
    summary = summarize([], results, [1, 5, 50])
    assert summary["scored_tasks"] == 2 and summary["pass@5"] == 1.0
    assert summary["pass@5 tasks"] == 1 and summary["pass@50 tasks"] == 0 and "pass@1 tasks" not in summary


def _wrong_add(progress=None):
    from codea1.sandbox import LocalExecutor

    problems = load_problems("bundled", limit=1)  # add(a, b)
    with LocalExecutor(workers=2) as ex:
        _, [res], _ = evaluate_problems(
            problems, [("bundled/0000", "def add(a, b):\n    return a - b\n")], ex, progress_score=progress
        )
    return res


def test_a_wrong_answer_to_a_golden_assert_says_expected_and_got():
    res = _wrong_add()
    assert (res.status, res.error) == ("fail", "at add(1, 2): expected 3, got -1")


def test_the_scoring_progress_ends_at_the_samples_scored():
    seen: list[tuple[int, int]] = []
    _wrong_add(lambda *a: seen.append(a))
    assert seen[-1] == (1, 1)  # the stdio part, empty, used to say 0/0 last


def test_the_gt_progress_ends_even_where_there_is_no_gt_to_check():
    from codea1.sandbox import LocalExecutor

    problems = load_problems(LCB)  # LiveCodeBench ships no GT: nothing runs before scoring
    seen: list[tuple[int, int]] = []
    with LocalExecutor(workers=2) as ex:
        evaluate_problems(problems, [], ex, progress_prepare=lambda *a: seen.append(a))
    assert seen == [(0, 0)]  # the bar ends at 0/0, where it stayed at 0/? before
