"""The Mistake Book keeps a question's tests under its id and its GT: scoring against a problem whose GT
changed replays none of the old GT's tests, an old book (no GT digests) still opens, and a rollback over
the step that dropped stale tests brings them back exactly."""

from __future__ import annotations

import json
import sqlite3

import pytest

from codea1.cli import main
from codea1.game.mistake_book import BookUpdate, MistakeBook, StoredTest
from codea1.problem import Problem

UID_BASE = "64940"


def gt_digest(problem: Problem) -> str:
    from codea1.game.mistake_book import gt_digest as digest  # new with GT-keyed books

    return digest(problem)


def _inc(body: str) -> Problem:
    return Problem(
        id="gt/inc",
        prompt="def inc(x):",
        description="x plus a constant",
        entry_point="inc",
        gt_solution=f"def inc(x):\n    return {body}\n",
    )


OLD, NEW = _inc("x + 1"), _inc("x + 2")  # the same question, its GT changed


def _code(body: str) -> str:
    return f"```python\ndef inc(x):\n    return {body}\n```"


def _score(tmp_path, name: str, problem: Problem, codes: list[dict]) -> dict:
    (tmp_path / f"{name}.problems.jsonl").write_text(json.dumps(problem.to_dict()) + "\n")
    (tmp_path / f"{name}.rollouts.jsonl").write_text(json.dumps({"question_id": problem.id, "codes": codes}) + "\n")
    out = tmp_path / f"{name}.scores.jsonl"
    args = ["score", "--problems", str(tmp_path / f"{name}.problems.jsonl")]
    args += ["--rollouts", str(tmp_path / f"{name}.rollouts.jsonl"), "--output", str(out)]
    args += ["--mistake-book", str(tmp_path / "book.sqlite"), "--workers", "2", "--uid-base", UID_BASE]
    assert main(args) == 0
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    return record


def test_a_changed_gt_replays_none_of_the_old_gts_tests(tmp_path):
    tests = ["```python\nassert inc(1) == 2\nassert inc(5) == 6\n```"]
    first = _score(
        tmp_path, "old", OLD, [{"response": _code("x + 1"), "tests": tests}, {"response": _code("0"), "tests": tests}]
    )
    assert first["mistake_book"]["size"] == 2  # the wrong code failed both tests: kept, for GT x + 1

    # GT is now x + 2: its own code must not be held to x + 1's values
    tests = ["```python\nassert inc(1) == 3\nassert inc(7) == 9\n```"]
    second = _score(
        tmp_path, "new", NEW, [{"response": _code("x + 2"), "tests": tests}, {"response": _code("0"), "tests": tests}]
    )
    own = second["codes"][0]
    assert own["code_reward"] == 1.0  # replaying the stale tests made it 0.5 (hist_pass 0 on them)
    assert second["mistake_book"] == {"added": 2, "removed": 2, "size": 2}  # stale tests out, new ones in
    with MistakeBook(tmp_path / "book.sqlite") as book:
        assert book.retrieve(OLD.id, 8, gt_digest(NEW)) == book.tests()[OLD.id]
        assert {t.call for t in book.tests()[OLD.id]} == {"inc(1)", "inc(7)"}

    third = _score(
        tmp_path, "again", NEW, [{"response": _code("x + 2"), "tests": ["```python\nassert inc(2) == 4\n```"]}]
    )
    assert third["codes"][0]["hist_pass"] == 1.0  # GT's own code passes every test the book replays


def test_the_digest_is_of_the_program_gt_runs():
    assert gt_digest(OLD) != gt_digest(NEW)
    same = Problem(**{**OLD.to_dict(), "gt_solution": OLD.gt_solution.replace("\n", "\r\n") + "\n\n"})
    assert gt_digest(same) == gt_digest(OLD)  # line ends and trailing blank lines change nothing it computes
    assert gt_digest(Problem(**{**OLD.to_dict(), "imports": "import math"})) != gt_digest(OLD)


OLD_SCHEMA = """
CREATE TABLE tests (question_id TEXT NOT NULL, stored_test_key TEXT NOT NULL, call TEXT NOT NULL,
    expected_json TEXT NOT NULL, frequency INTEGER NOT NULL, first_step INTEGER NOT NULL,
    PRIMARY KEY (question_id, stored_test_key));
CREATE TABLE changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, question_id TEXT NOT NULL,
    stored_test_key TEXT NOT NULL, call TEXT NOT NULL, expected_json TEXT NOT NULL, old_frequency INTEGER,
    old_first_step INTEGER);
CREATE INDEX changes_step ON changes(step);
CREATE TABLE steps (step INTEGER PRIMARY KEY, added INTEGER NOT NULL, removed INTEGER NOT NULL,
    size INTEGER NOT NULL, questions INTEGER NOT NULL);
"""


def test_an_old_book_opens_and_its_tests_are_never_replayed_for_a_known_gt(tmp_path):
    path = tmp_path / "old.sqlite"
    stale = StoredTest.from_value("inc(1)", 2)
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)  # a book as the version before GT digests wrote it, at step 0
    conn.execute("INSERT INTO tests VALUES (?, ?, ?, ?, 3, 0)", ("gt/inc", stale.key, stale.call, stale.expected_json))
    conn.execute(
        "INSERT INTO changes(step, question_id, stored_test_key, call, expected_json) VALUES (0, ?, ?, ?, ?)",
        ("gt/inc", stale.key, stale.call, stale.expected_json),
    )
    conn.execute("INSERT INTO steps VALUES (0, 1, 0, 1, 1)")
    conn.commit()
    conn.close()

    with MistakeBook(path) as book:
        assert book.last_step == 0 and book.size() == 1
        assert book.retrieve("gt/inc", 8, gt_digest(NEW)) == []  # its GT is unknown: never replayed
        assert [t.frequency for t in book.retrieve("gt/inc", 8)] == [3]  # still there, under digest ""
        fresh = StoredTest.from_value("inc(1)", 3)
        out = book.apply_step(1, {"gt/inc": BookUpdate(failed=[fresh, stale], gt_digest=gt_digest(NEW))})
        assert (out["added"], out["removed"], out["size"]) == (2, 1, 2)
        assert [(t.call, t.expected, t.frequency) for t in book.retrieve("gt/inc", 8, gt_digest(NEW))] == [
            ("inc(1)", 2, 1),  # the same test judged again under the new GT starts over at 1
            ("inc(1)", 3, 1),
        ]
        assert book.retrieve("gt/inc", 8) == []
        book.rollback_to(0)  # a resume from step 0: exactly the old book again
        assert [(t.call, t.frequency, t.first_step) for t in book.retrieve("gt/inc", 8)] == [("inc(1)", 3, 0)]
        assert book.retrieve("gt/inc", 8, gt_digest(NEW)) == [] and book.size() == 1
        book.rollback_to(-1)
        assert book.size() == 0


def test_one_question_updated_under_two_gts_in_one_step_is_refused():
    from codea1.game.mistake_book import merge_updates

    a = BookUpdate(failed=[StoredTest.from_value("inc(1)", 2)], gt_digest=gt_digest(OLD))
    b = BookUpdate(failed=[StoredTest.from_value("inc(1)", 3)], gt_digest=gt_digest(NEW))
    assert merge_updates([("gt/inc", a), ("gt/inc", a)])["gt/inc"].gt_digest == gt_digest(OLD)
    with pytest.raises(ValueError, match="two different GTs"):
        merge_updates([("gt/inc", a), ("gt/inc", b)])
