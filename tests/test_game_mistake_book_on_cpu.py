"""Mistake Book: update rule, retrieval order, one transaction per step, rollback, crash safety."""

import json
import subprocess
import sys
import textwrap

import pytest

from codea1.game.mistake_book import BookUpdate, MistakeBook, StoredTest
from codea1.judge.literals import canonical, encode_expected

A = StoredTest.from_value("f(1)", 2)
B = StoredTest.from_value("f(2)", (1, 2))
C = StoredTest.from_value("f(3)", {"k": [1.5]})
D = StoredTest.from_value("f(4)", None)


def freqs(book, qid="q"):
    return {t.call: t.frequency for t in book.tests(qid).get(qid, [])}


def test_update_rule_counts_and_deletes(tmp_path):
    book = MistakeBook(tmp_path / "mb.sqlite")
    assert book.last_step == -1 and book.retrieve("q") == []
    # step 0: A failed twice (two candidates / suites), B once -> inserted with 2 and 1
    out = book.apply_step(0, {"q": BookUpdate(failed=[A, A, B])})
    assert out == {"added": 2, "removed": 0, "size": 2, "questions": {"q": {"added": 2, "removed": 0, "size": 2}}}
    assert freqs(book) == {"f(1)": 2, "f(2)": 1}
    # step 1: A passed once (-1), B passed twice (-2 -> deleted at 0), C new failure
    out = book.apply_step(1, {"q": BookUpdate(passed=[A, B, B], failed=[C])})
    assert (out["added"], out["removed"], out["size"]) == (1, 1, 2)
    assert freqs(book) == {"f(1)": 1, "f(3)": 1}
    # a passed test that is not in the book changes nothing; a failed book test grows
    book.apply_step(2, {"q": BookUpdate(passed=[D], failed=[A])})
    assert freqs(book) == {"f(1)": 2, "f(3)": 1}
    assert [s["added"] for s in book.stats()["steps"]] == [2, 1, 0]
    # deleted at 0 and failed again in the same step: counted removed and added, restarts at 1
    out = book.apply_step(5, {"q": BookUpdate(passed=[C], failed=[C])})
    assert (out["added"], out["removed"], out["size"]) == (1, 1, 2)
    assert [(t.call, t.frequency, t.first_step) for t in book.retrieve("q")] == [("f(1)", 2, 0), ("f(3)", 1, 5)]
    book.rollback_to(2)
    assert [(t.call, t.frequency, t.first_step) for t in book.retrieve("q")] == [("f(1)", 2, 0), ("f(3)", 1, 1)]


def test_tests_are_normalised_by_value_and_per_question(tmp_path):
    book = MistakeBook(tmp_path / "mb.sqlite")
    same = StoredTest.from_value("f(2)", (1, 2))
    other_q = StoredTest.from_value("f(2)", (1, 2))
    book.apply_step(0, {"q": BookUpdate(failed=[B, same]), "r": BookUpdate(failed=[other_q])})
    assert freqs(book) == {"f(2)": 2}  # one row, frequency 2
    assert freqs(book, "r") == {"f(2)": 1}  # deduplicated per question, not across questions
    assert book.retrieve("q")[0].expected == (1, 2)  # GT's value decodes back exactly (a tuple)
    assert encode_expected([1, 2]) != encode_expected((1, 2))  # list and tuple are different tests


def test_retrieve_top_h_with_deterministic_ties(tmp_path):
    book = MistakeBook(tmp_path / "mb.sqlite")
    book.apply_step(0, {"q": BookUpdate(failed=[D, C, B])})  # all frequency 1, same step: by call text
    book.apply_step(1, {"q": BookUpdate(failed=[A, A])})  # frequency 2, newer
    assert [t.call for t in book.retrieve("q", 8)] == ["f(1)", "f(2)", "f(3)", "f(4)"]
    assert [t.call for t in book.retrieve("q", 2)] == ["f(1)", "f(2)"]
    book.apply_step(2, {"q": BookUpdate(failed=[StoredTest.from_value("f(0)", 0)])})
    # f(0) also has frequency 1 but entered at step 2: older tests come first among equals
    assert [t.call for t in book.retrieve("q", 8)] == ["f(1)", "f(2)", "f(3)", "f(4)", "f(0)"]
    assert book.retrieve("q", 0) == []


def test_rollback_and_reopen_give_the_book_of_step_k(tmp_path):
    path = tmp_path / "mb.sqlite"
    book = MistakeBook(path)
    book.apply_step(0, {"q": BookUpdate(failed=[A, B])})
    snapshot = book.export()
    book.apply_step(1, {"q": BookUpdate(passed=[A], failed=[C, C])})
    book.apply_step(2, {"q": BookUpdate(passed=[B, C]), "r": BookUpdate(failed=[D])})
    book.close()
    book = MistakeBook(path)  # persisted
    assert book.last_step == 2 and freqs(book) == {"f(3)": 1} and freqs(book, "r") == {"f(4)": 1}
    book.rollback_to(0)
    assert book.export() == snapshot
    with pytest.raises(ValueError, match="not after"):
        book.apply_step(0, {"q": BookUpdate(failed=[A])})
    book.apply_step(1, {"q": BookUpdate(failed=[D])})  # resumed run continues from step 1
    assert freqs(book) == {"f(1)": 1, "f(2)": 1, "f(4)": 1}
    book.rollback_to(-1)
    assert book.size() == 0 and book.last_step == -1


def test_exception_inside_apply_step_leaves_previous_step(tmp_path):
    book = MistakeBook(tmp_path / "mb.sqlite")
    book.apply_step(0, {"q": BookUpdate(failed=[A])})
    before = book.export()
    # question "a" is applied first (sorted), then "z" holds a broken entry: the whole step is undone
    with pytest.raises(TypeError):
        book.apply_step(1, {"a": BookUpdate(failed=[B]), "z": BookUpdate(failed=["not a test"])})
    assert book.export() == before
    assert book.last_step == 0


def test_killed_process_mid_step_leaves_previous_step(tmp_path):
    path = tmp_path / "mb.sqlite"
    book = MistakeBook(path)
    book.apply_step(0, {"q": BookUpdate(failed=[A])})
    before = book.export()
    book.close()
    script = textwrap.dedent(f"""
        import os
        from codea1.game.mistake_book import BookUpdate, MistakeBook, StoredTest
        book = MistakeBook({str(path)!r})
        original = MistakeBook._apply_question
        def dying(self, step, qid, update):
            result = original(self, step, qid, update)
            os._exit(9)  # killed after writing the first question, before COMMIT
        MistakeBook._apply_question = dying
        book.apply_step(1, {{"a": BookUpdate(failed=[StoredTest.from_value("g(1)", 1)]),
                             "q": BookUpdate(passed=[StoredTest.from_value("f(1)", 2)])}})
    """)
    proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 9, proc.stderr
    book = MistakeBook(path)
    assert book.export() == before and book.last_step == 0


def test_export_show_and_stats(tmp_path):
    book = MistakeBook(tmp_path / "mb.sqlite")
    book.apply_step(3, {"q": BookUpdate(failed=[B, B, C]), "p": BookUpdate(failed=[A])})
    data = book.export(tmp_path / "out" / "book.json")
    assert json.loads((tmp_path / "out" / "book.json").read_text()) == data
    assert data["last_step"] == 3
    assert data["questions"]["q"][0] == {
        "call": "f(2)",
        "expected": {"$t": "tuple", "v": [1, 2]},
        "frequency": 2,
        "first_step": 3,
        "test": "assert f(2) == (1, 2)",
    }
    text = book.show()
    assert text == book.show()  # deterministic
    assert text.splitlines() == [
        "Mistake Book mb.sqlite: last step 3, 3 tests",
        "p (1 tests)",
        "     1  step 3    assert f(1) == 2",
        "q (2 tests)",
        "     2  step 3    assert f(2) == (1, 2)",
        "     1  step 3    assert f(3) == {'k': [1.5]}",
    ]
    assert "no tests" in book.show("missing")
    stats = book.stats()
    assert (stats["tests"], stats["questions"], stats["total_frequency"]) == (3, 2, 4)
    assert stats["steps"] == [{"step": 3, "added": 3, "removed": 0, "size": 3, "questions": 2}]


def test_encoding_is_canonical_for_sets_and_dicts():
    # the same set / dict in another iteration order (another hash seed, another insertion order)
    a = {"$t": "set", "v": ["pear", "apple", {"$t": "tuple", "v": [2, 1]}]}
    b = {"$t": "set", "v": [{"$t": "tuple", "v": [2, 1]}, "apple", "pear"]}
    assert canonical(a) == canonical(b)
    assert canonical(a)["v"][0] == "apple"
    d1 = {"$t": "dict", "v": [["b", 1], ["a", {"$t": "frozenset", "v": ["y", "x"]}]]}
    d2 = {"$t": "dict", "v": [["a", {"$t": "frozenset", "v": ["x", "y"]}], ["b", 1]]}
    assert canonical(d1) == canonical(d2)
    assert encode_expected({"b": 1, "a": 2}) == encode_expected({"a": 2, "b": 1})
    assert StoredTest.from_value("f()", {"x", "y", "z"}).expected == {"x", "y", "z"}
    assert canonical([1, "a", None]) == [1, "a", None]
