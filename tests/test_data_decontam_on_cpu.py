"""Decontamination (codea1.data.decontam): pairs built by hand for each signal (name, description,
behaviour, same id), unrelated problems kept, the report, and the `codea1 data split|decontaminate` CLI."""

from __future__ import annotations

import json

import pytest

from codea1.cli import main
from codea1.data import decontam
from codea1.data.problem import Problem, read_problems_jsonl, write_problems_jsonl
from tests.conftest import quiet_executor


def problem(pid, entry, description, gt, tests):
    return Problem(
        id=pid, prompt=description, description=description, entry_point=entry, gt_solution=gt, golden_tests=tests
    )


HELD = [
    problem(
        "H/even",
        "is_even",
        "Return True if the integer n is even, otherwise False.",
        "def is_even(n):\n    return n % 2 == 0\n",
        ["assert is_even(4) == True", "assert is_even(7) == False", "assert is_even(0) == True"],
    ),
    problem(
        "H/rev",
        "reverse_words",
        "Reverse the order of the words in a sentence separated by spaces.",
        "def reverse_words(s):\n    return ' '.join(s.split()[::-1])\n",
        ["assert reverse_words('a b c') == 'c b a'", "assert reverse_words('x') == 'x'"],
    ),
    problem(
        "H/sq",
        "squares",
        "Square every item of xs.",
        "def squares(xs):\n    return [x * x for x in xs]\n",
        ["assert squares([1, 2, 3]) == [1, 4, 9]", "assert squares([]) == []"],
    ),
]
TRAIN = [
    # same name up to case and underscores, other words, other behaviour
    problem(
        "T/name",
        "isEven",
        "Write a python function that tells whether a value is divisible by two.",
        "def isEven(n):\n    return n % 2 == 1\n",
        ["assert isEven(3) == True"],
    ),
    # the words of H/rev, another name, a GT that does something else
    problem(
        "T/words",
        "flip_sentence",
        "Reverse the order of the words in a sentence separated by commas.",
        "def flip_sentence(s):\n    return ','.join(s.split(',')[::-1])\n",
        ["assert flip_sentence('a,b') == 'b,a'"],
    ),
    # another name and other words, the same function as H/sq
    problem(
        "T/act",
        "power_two_each",
        "Map a sequence onto its elementwise second powers.",
        "def power_two_each(seq):\n    return [v ** 2 for v in seq]\n",
        ["assert power_two_each([4]) == [16]", "assert power_two_each([2, 5]) == [4, 25]"],
    ),
    # unrelated: kept
    problem(
        "T/keep",
        "add",
        "Add two integers.",
        "def add(a, b):\n    return a + b\n",
        ["assert add(1, 2) == 3", "assert add(0, 0) == 0"],
    ),
    # agrees on H/even's inputs but not the other way round (odd inputs of its own): kept
    problem(
        "T/one-way",
        "is_multiple_of_four",
        "Tell whether n is a multiple of four.",
        "def is_multiple_of_four(n):\n    return n % 4 == 0\n",
        ["assert is_multiple_of_four(8) == True", "assert is_multiple_of_four(6) == False"],
    ),
    # the same id as a held-out problem
    problem(
        "H/sq",
        "squares",
        "Square every item of xs.",
        "def squares(xs):\n    return [x * x for x in xs]\n",
        ["assert squares([2]) == [4]"],
    ),
]


@pytest.fixture(scope="module")
def executor():
    with quiet_executor(uid_base=1_700_900_000) as ex:  # this file's own uid range
        yield ex


def test_textual_signals_are_pure_functions():
    assert decontam.normalise_name("is_Even") == decontam.normalise_name("isEven") == "iseven"
    words = decontam.description_words("Write a python function to reverse a string.\nassert rev('ab') == 'ba'")
    assert words == ["reverse"]
    assert decontam.description_similarity("Reverse the words of s.", "Reverse the words of s!") == 1.0
    assert decontam.description_similarity("Add two integers.", "Reverse the words of s.") == 0.0
    assert decontam.renamed_test("assert f(f(1)) == 2", "f", "g") == "assert g(g(1)) == 2"


def test_each_signal_finds_its_pair_and_unrelated_problems_are_kept(executor):
    kept, pairs = decontam.decontaminate(TRAIN, HELD, executor)
    found = {(p.train_id, p.held_out_id): p.signals for p in pairs}
    assert found == {
        ("T/name", "H/even"): ["name"],
        ("T/words", "H/rev"): ["description"],
        ("T/act", "H/sq"): ["behaviour"],
        ("H/sq", "H/sq"): ["same id"],
    }
    assert [p.id for p in kept] == ["T/keep", "T/one-way"]
    rep = decontam.report(TRAIN, HELD, kept, pairs)
    assert (rep["train"], rep["kept"], rep["dropped"]) == (6, 2, 4)
    assert rep["pairs_by_signal"] == {"same id": 1, "name": 1, "description": 1, "behaviour": 1}
    json.dumps(rep)  # plain data


def test_without_a_sandbox_only_the_textual_signals_count():
    kept, pairs = decontam.decontaminate(TRAIN, HELD, None)
    assert {p.train_id for p in pairs} == {"T/name", "T/words", "H/sq"}
    assert "T/act" in [p.id for p in kept]


def test_cli_split_then_decontaminate(tmp_path, capsys):
    src = tmp_path / "all.jsonl"
    write_problems_jsonl(TRAIN[:-1] + HELD, src)
    train, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    assert (
        main(
            [
                "data",
                "split",
                str(src),
                "--held-out",
                "3",
                "--seed",
                "1",
                "--train-output",
                str(train),
                "--held-out-output",
                str(held),
            ]
        )
        == 0
    )
    t_ids, h_ids = [p.id for p in read_problems_jsonl(train)], [p.id for p in read_problems_jsonl(held)]
    assert len(h_ids) == 3 and len(t_ids) == 5 and not set(t_ids) & set(h_ids) and t_ids == sorted(t_ids)
    again = tmp_path / "again.jsonl"
    main(
        [
            "data",
            "split",
            str(src),
            "--held-out",
            "3",
            "--seed",
            "1",
            "--train-output",
            str(again),
            "--held-out-output",
            str(tmp_path / "h2.jsonl"),
        ]
    )
    assert again.read_text() == train.read_text()  # the seed alone fixes the split
    out, rep = tmp_path / "kept.jsonl", tmp_path / "report.json"
    capsys.readouterr()
    assert (
        main(
            [
                "data",
                "decontaminate",
                str(src),
                "--against",
                str(held),
                "--output",
                str(out),
                "--report",
                str(rep),
                "--no-behaviour",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    report = json.loads(rep.read_text())
    kept = [p.id for p in read_problems_jsonl(out)]
    assert report["kept"] == len(kept) and not set(kept) & set(h_ids)
    assert all(f"{p['train_id']} (" in printed for p in report["pair_list"])
    assert (
        main(
            [
                "data",
                "split",
                str(src),
                "--held-out",
                "99",
                "--train-output",
                str(train),
                "--held-out-output",
                str(held),
            ]
        )
        == 2
    )
