"""Decontamination (codea1.data.decontam): pairs built by hand for each signal (name, description,
behaviour, same id), unrelated problems kept, the report, and the `codea1 data split|decontaminate` CLI."""

from __future__ import annotations

import json

import pytest

from codea1.cli import main
from codea1.data import decontam
from codea1.problem import Problem, read_problems_jsonl, write_problems_jsonl
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


# ----------------------------------------------------------------------------------------------------
# near-duplicates stated in other words and under other names, which name, bigrams and the GTs passing
# each other's asserts all miss

HELD_2 = [
    problem(
        "H2/tuple",
        "pairwise_sums",
        "Given two tuples of equal length, give back the tuple of their elementwise totals.",
        "def pairwise_sums(a, b):\n    return tuple(x + y for x, y in zip(a, b))\n",
        [
            "assert pairwise_sums((1, 2), (3, 4)) == (4, 6)",
            "assert pairwise_sums((0,), (5,)) == (5,)",
            "assert pairwise_sums((2, 2, 2), (1, 0, -1)) == (3, 2, 1)",
        ],
    ),
    problem(
        "H2/order",
        "power",
        "Raise base to the exponent exp.",
        "def power(base, exp):\n    return base ** exp\n",
        ["assert power(2, 3) == 8", "assert power(3, 2) == 9", "assert power(5, 0) == 1", "assert power(2, 5) == 32"],
    ),
    problem(
        "H2/code",
        "count_vowels",
        "How many letters of s are a, e, i, o or u?",
        "def count_vowels(s):\n    total = 0\n    for ch in s.lower():\n        if ch in 'aeiou':\n"
        "            total += 1\n    return total\n",
        ["assert count_vowels('Hello') == 2"],
    ),
    problem(
        "H2/words",
        "largest_even",
        "Return the largest even item of the given list of integers, or None when it has no even item.",
        "def largest_even(xs):\n    evens = [x for x in xs if x % 2 == 0]\n    return max(evens) if evens else None\n",
        ["assert largest_even([1, 4, 2]) == 4"],
    ),
]
TRAIN_2 = [
    # the same function returning a list where the held-out tests expect a tuple
    problem(
        "T2/list",
        "add_lists",
        "Add two sequences item by item.",
        "def add_lists(xs, ys):\n    return [x + y for x, y in zip(xs, ys)]\n",
        [
            "assert add_lists([1, 2], [3, 4]) == [4, 6]",
            "assert add_lists([10], [-10]) == [0]",
            "assert add_lists([1, 1, 1], [1, 2, 3]) == [2, 3, 4]",
        ],
    ),
    # the same function with its arguments the other way round
    problem(
        "T2/swapped",
        "raise_to",
        "Compute y to the power x.",
        "def raise_to(x, y):\n    return y ** x\n",
        [
            "assert raise_to(3, 2) == 8",
            "assert raise_to(2, 3) == 9",
            "assert raise_to(0, 7) == 1",
            "assert raise_to(1, 4) == 4",
        ],
    ),
    # the same program under other names, described in other words (its tests differ, so the GTs are
    # not run against each other's asserts in the textual-only check)
    problem(
        "T2/renamed",
        "tally",
        "Tell me the vowel count of a text.",
        'def tally(text):\n    """vowels"""\n    n = 0\n    for c in text.lower():\n        if c in \'aeiou\':\n'
        "            n += 1\n    return n\n",
        ["assert tally('AEx') == 2"],
    ),
    # the held-out statement with its words reordered: few shared bigrams
    problem(
        "T2/reworded",
        "max_even_or_none",
        "Of a list of integers given, return the even item that is largest; when no item is even, return None.",
        "def max_even_or_none(v):\n    return max((x for x in v if x % 2 == 0), default=None)\n",
        ["assert max_even_or_none([3, 8]) == 8"],
    ),
    # unrelated
    problem(
        "T2/keep",
        "first_char",
        "The first character of a non-empty string.",
        "def first_char(s):\n    return s[0]\n",
        ["assert first_char('ab') == 'a'", "assert first_char('z') == 'z'", "assert first_char('qr') == 'q'"],
    ),
]


def test_signals_of_other_words_and_other_names_are_pure():
    assert decontam.tolerant((1, (2.0, {3, 1}), True)) == [1, [2, [1, 3]], 1]
    assert decontam.golden_inputs(HELD_2[1]) == [["2", "3"], ["3", "2"], ["5", "0"], ["2", "5"]]
    a = decontam.code_tokens(HELD_2[2].gt_solution)
    assert a == decontam.code_tokens(TRAIN_2[2].gt_solution) and "v0" in a and "text" not in a and "aeiou" in a
    assert decontam.code_tokens("def f(:") == []
    weights = decontam.word_weights([HELD_2[3].description, TRAIN_2[3].description, TRAIN_2[4].description])
    assert decontam.cosine(weights[0], weights[1]) >= decontam.WORDS_THRESHOLD
    assert decontam.description_similarity(HELD_2[3].description, TRAIN_2[3].description) < 0.5


def test_near_duplicates_that_the_first_signals_miss_are_found(executor):
    """Each built pair: the old signals (name, description bigrams, GTs passing each other's asserts)
    miss it, a new one finds it, with its evidence. The renamed program and the reworded statement are
    checked without a sandbox: the textual signals alone must find them (their GTs also pass each
    other's asserts, so with a sandbox the old behaviour signal finds them too)."""
    old = {"name", "description", "behaviour"}
    ran = {(p.train_id, p.held_out_id): p for p in decontam.find_pairs(TRAIN_2, HELD_2, executor)}
    for key in [("T2/list", "H2/tuple"), ("T2/swapped", "H2/order")]:
        assert ran[key].signals == ["outputs"], key
    assert ran[("T2/swapped", "H2/order")].evidence["outputs"]["argument_order"] == [1, 0]
    textual = {(p.train_id, p.held_out_id): p for p in decontam.find_pairs(TRAIN_2, HELD_2, None)}
    assert set(textual) == {("T2/renamed", "H2/code"), ("T2/reworded", "H2/words")}
    assert textual[("T2/renamed", "H2/code")].signals == ["code"]
    assert textual[("T2/renamed", "H2/code")].evidence["code"] == 1.0
    assert textual[("T2/reworded", "H2/words")].signals == ["words"]
    assert not any(set(p.signals) & old for p in textual.values())
    assert set(ran) == set(textual) | {("T2/list", "H2/tuple"), ("T2/swapped", "H2/order")}  # T2/keep is kept
    json.dumps([p.to_dict() for p in ran.values()])


def test_near_duplicates_inside_one_set_drop_the_later_one(executor):
    held = [*HELD_2, TRAIN_2[0], TRAIN_2[4]]
    kept, pairs = decontam.deduplicate(held, executor)
    assert [(p.train_id, p.held_out_id) for p in pairs] == [("H2/tuple", "T2/list")]
    assert [p.id for p in kept] == ["H2/tuple", "H2/order", "H2/code", "H2/words", "T2/keep"]
    assert decontam.self_pairs(HELD_2, None) == []
