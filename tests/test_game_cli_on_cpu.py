"""`codea1 score` on the worked example (run twice with a Mistake Book) and `codea1 mistakes ...`."""

import json
from pathlib import Path

import pytest

from codea1.cli import main

EXAMPLE = Path(__file__).parent / "data" / "game_example" / "rollouts.jsonl"
UID_BASE = "64960"  # this file's sandbox slot uids (64960, 64959): concurrent sandboxes must not share uids


def score(tmp_path, name, *extra):
    out = tmp_path / f"{name}.jsonl"
    code = main(
        [
            "score",
            "--problems",
            "bundled",
            "--rollouts",
            str(EXAMPLE),
            "--output",
            str(out),
            "--workers",
            "2",
            "--uid-base",
            UID_BASE,
            *extra,
        ]
    )
    return code, [json.loads(line) for line in out.read_text().splitlines()]


def suite_numbers(code):
    return [
        (
            s["valid_tests"],
            s["invalid_tests"],
            s["valid_ratio"],
            s["gen_pass"],
            s["gen_fail"],
            s["adv"],
            s["test_reward"],
        )
        for s in code["suites"]
    ]


def test_worked_example_scored_twice_with_a_mistake_book(tmp_path):
    book = tmp_path / "run" / "mistake_book.sqlite"
    code, [first] = score(tmp_path, "run1", "--mistake-book", str(book))
    assert code == 0 and first["question_id"] == "bundled/0032"
    right, wrong = first["codes"]
    # Run 1, empty book (H = 0): Pass = gen_pass, Adv = gen_fail.
    # Suite A (both codes): 8 correct asserts -> V = 8, I = 0, valid_ratio 1.
    # Suite B0 (right code): 3 kept ([2,1]; [1,2,2] predicted 2 but GT says 1: invalid, kept; [4,4]) and
    #   one bare `assert f([1, 2])` (not a comparison: ignored, as in the reference code): V = 3, I = 1,
    #   valid_ratio = min(3/8, 7/8) = 0.375.
    # Right code passes everything: R_C = 1; R_T(A) = 0.5*1 = 0.5; R_T(B0) = 0.5*0.375 = 0.1875.
    assert right["valid"] and right["code_reward"] == 1.0 and right["hist_pass"] == 0.0
    assert suite_numbers(right) == [(8, 0, 1.0, 1.0, 0.0, 0.0, 0.5), (3, 1, 0.375, 1.0, 0.0, 0.0, 0.1875)]
    # Wrong code (sorted(nums)[-2]) fails [5,5,4] and [7,7] of A: gen_pass 6/8, gen_fail 2/8 = 0.25,
    #   R_T(A) = 0.5 + 0.5*0.25 = 0.625.
    # Suite B1: `nums` inlined, the last assert duplicates the first: V = 3, I = 1, valid_ratio 0.375;
    #   it fails [3,3,3,1] and [2,2]: gen_pass 1/3, gen_fail 2/8, R_T = 0.1875 + 0.125 = 0.3125.
    # R_C = (0.75 + 1/3) / 2 = 0.5417.
    assert suite_numbers(wrong) == [
        (8, 0, 1.0, 0.75, 0.25, 0.25, 0.625),
        (3, 1, 0.375, pytest.approx(1 / 3), 0.25, 0.25, 0.3125),
    ]
    assert wrong["code_reward"] == pytest.approx((0.75 + 1 / 3) / 2)
    # TopVar: std of R_T is 0.15625 for both codes -> tie -> the lower index
    assert [right["topvar_selected"], wrong["topvar_selected"]] == [True, False]
    # the wrong code's 4 failures enter the book
    assert first["mistake_book"] == {"added": 4, "removed": 0, "size": 4}

    # a step tag at or before the book's last step is a user error (exit 2), nothing is written
    assert (
        main(
            [
                "score",
                "--problems",
                "bundled",
                "--rollouts",
                str(EXAMPLE),
                "--output",
                str(tmp_path / "x.jsonl"),
                "--mistake-book",
                str(book),
                "--step",
                "0",
            ]
        )
        == 2
    )
    code, [second] = score(tmp_path, "run2", "--mistake-book", str(book))
    right, wrong = second["codes"]
    # Run 2 replays the 4 book tests (H = 4). Right code passes all: hist_pass 1, R_C = (1 + 1)/2 = 1,
    #   Adv = (gen_fail 0 + hist_pass 1)/2 = 0.5: R_T(A) = 0.5 + 0.25 = 0.75, R_T(B0) = 0.1875 + 0.25 = 0.4375.
    assert right["hist_pass"] == 1.0 and right["code_reward"] == 1.0
    assert [s["adv"] for s in right["suites"]] == [0.5, 0.5]
    assert [s["test_reward"] for s in right["suites"]] == [0.75, 0.4375]
    # Wrong code fails all 4: hist_pass 0, Pass(A) = 0.75/2, Pass(B1) = (1/3)/2, R_C = 0.2708;
    #   Adv = (0.25 + 0)/2 = 0.125: R_T(A) = 0.5625, R_T(B1) = 0.25.
    assert wrong["hist_pass"] == 0.0
    assert wrong["code_reward"] == pytest.approx((0.375 + 1 / 6) / 2)
    assert [s["test_reward"] for s in wrong["suites"]] == [0.5625, 0.25]
    # Book: the right code passed each book test once (1 -> 0: 4 removed), the wrong code failed the same
    # 4 generated tests again (4 added back with frequency 1)
    assert second["mistake_book"] == {"added": 4, "removed": 4, "size": 4}

    assert main(["mistakes", "stats", str(book.parent), "--json"]) == 0
    assert main(["mistakes", "show", str(book.parent), "--question", "bundled/0032"]) == 0
    export = tmp_path / "book.json"
    assert main(["mistakes", "export", str(book), "--output", str(export)]) == 0
    data = json.loads(export.read_text())
    assert data["last_step"] == 1
    assert sorted(t["call"] for t in data["questions"]["bundled/0032"]) == [
        "second_largest([2, 2])",
        "second_largest([3, 3, 3, 1])",
        "second_largest([5, 5, 4])",
        "second_largest([7, 7])",
    ]


def test_bad_lines_are_reported_and_the_rest_scored(tmp_path, capsys):
    rollouts = tmp_path / "r.jsonl"
    good = EXAMPLE.read_text().strip()
    rollouts.write_text(
        "\n".join(
            [
                "{not json",
                json.dumps({"question_id": "nope/1", "codes": []}),
                good,
                json.dumps({"question_id": "bundled/0032", "codes": [{"response": 3}]}),
                json.dumps([1, 2]),
            ]
        )
        + "\n"
    )
    out = tmp_path / "s.jsonl"
    code = main(
        [
            "score",
            "--problems",
            "bundled",
            "--rollouts",
            str(rollouts),
            "--output",
            str(out),
            "--workers",
            "2",
            "--uid-base",
            UID_BASE,
            "--alpha",
            "0.25",
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [("error" in r) for r in rows] == [True, True, False, True, True]
    assert "not valid JSON" in rows[0]["error"] and rows[0]["line"] == 1
    assert "unknown question_id 'nope/1'" in rows[1]["error"] and rows[1]["question_id"] == "nope/1"
    assert "codes[0]" in rows[3]["error"]
    # alpha 0.25: the right code's suite A has R_T = 0.25*1 + 0.75*0 = 0.25
    assert rows[2]["codes"][0]["suites"][0]["test_reward"] == 0.25
    # without --mistake-book the counters say what the step would do to an empty book
    assert rows[2]["mistake_book"] == {"added": 4, "removed": 0, "size": 4}
    err = capsys.readouterr().err
    assert "r.jsonl:2: unknown question_id" in err and "scored 1 of 5 lines" in err


def test_no_scorable_line_exits_non_zero(tmp_path):
    rollouts = tmp_path / "r.jsonl"
    rollouts.write_text("garbage\n")
    out = tmp_path / "s.jsonl"
    assert main(["score", "--problems", "bundled", "--rollouts", str(rollouts), "--output", str(out)]) == 1
    assert "error" in json.loads(out.read_text())


def test_user_errors(tmp_path, capsys):
    assert main(["mistakes", "show", str(tmp_path)]) == 2
    assert "no Mistake Book here" in capsys.readouterr().err
    assert (
        main(
            [
                "score",
                "--problems",
                "bundled",
                "--rollouts",
                str(tmp_path / "missing.jsonl"),
                "--output",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 2
    )
    assert (
        main(
            [
                "score",
                "--problems",
                "bundled",
                "--rollouts",
                str(EXAMPLE),
                "--output",
                str(tmp_path / "o.jsonl"),
                "--alpha",
                "2",
            ]
        )
        == 2
    )
