"""The Mistake Book (docs/algorithm.md section 6): per question, failing tests and how often they failed.

Stored in SQLite (WAL). Each training step's update is ONE transaction tagged with the step, and every
row it changes is logged with its value before the step, so `rollback_to(k)` puts the book back exactly
as it was after step k (a resumed run sees the book of its checkpoint, never half a step).
Tests are stored normalised: the CALL source plus GT's value encoded with codea1.sandbox.values.to_json
(canonical JSON text), so two spellings of the same expected value are one test.

A question's tests are kept under its id AND the digest of the GT that gave their values (`gt_digest`): a
question whose GT changed finds none of the old GT's tests (their values may be wrong for the new one), and
its first update under the new GT removes them (logged like any change, so a rollback brings them back).
Books written before digests were kept hold their tests under the digest "" (GT unknown): they are never
replayed for a question whose GT is known, and are removed by its first update.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codea1.errors import UserError
from codea1.judge.literals import decode_expected, encode_expected
from codea1.problem import Problem, gt_program

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tests (
    question_id TEXT NOT NULL,
    stored_test_key TEXT NOT NULL,
    call TEXT NOT NULL,
    expected_json TEXT NOT NULL,
    frequency INTEGER NOT NULL,
    first_step INTEGER NOT NULL,
    gt_digest TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (question_id, stored_test_key)
);
CREATE TABLE IF NOT EXISTS changes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    step INTEGER NOT NULL,
    question_id TEXT NOT NULL,
    stored_test_key TEXT NOT NULL,
    call TEXT NOT NULL,
    expected_json TEXT NOT NULL,
    old_frequency INTEGER,
    old_first_step INTEGER,
    old_gt_digest TEXT
);
CREATE INDEX IF NOT EXISTS changes_step ON changes(step);
CREATE TABLE IF NOT EXISTS steps (
    step INTEGER PRIMARY KEY,
    added INTEGER NOT NULL,
    removed INTEGER NOT NULL,
    size INTEGER NOT NULL,
    questions INTEGER NOT NULL
);
"""


# columns added since the first books were written: (table, column, declaration)
_ADDED_COLUMNS = [("tests", "gt_digest", "TEXT NOT NULL DEFAULT ''"), ("changes", "old_gt_digest", "TEXT")]


def gt_digest(problem: Problem) -> str:
    """The digest a question's book tests are kept under: sha256 of the GT program the judge runs
    (codea1.problem.gt_program: the problem's imports, then its GT), with line ends written as \\n and the
    whitespace at its end dropped, the only rewrites that cannot change what the program computes."""
    program = gt_program(problem).replace("\r\n", "\n").replace("\r", "\n").rstrip()
    return hashlib.sha256(program.encode("utf-8", "surrogatepass")).hexdigest()


def stored_test_key(call: str, expected_json: str) -> str:
    return hashlib.sha1(f"{call}\x00{expected_json}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class StoredTest:
    """One normalised test: `assert CALL == value`, with value GT's output."""

    call: str
    expected_json: str
    frequency: int = 1
    first_step: int = -1

    @classmethod
    def from_value(cls, call: str, value: object, frequency: int = 1) -> StoredTest:
        return cls(call=call, expected_json=encode_expected(value), frequency=frequency)

    @property
    def expected(self) -> Any:  # noqa: ANN401  (a value of any type)
        """GT's value, decoded."""
        return decode_expected(self.expected_json)

    @property
    def key(self) -> str:
        return stored_test_key(self.call, self.expected_json)

    @property
    def statement(self) -> str:
        """Readable form (display only: repr of a value need not be valid source)."""
        return f"assert {self.call} == {self.expected!r}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call,
            "expected": json.loads(self.expected_json),
            "frequency": self.frequency,
            "first_step": self.first_step,
            "test": self.statement,
        }


@dataclass
class BookUpdate:
    """What one step does to one question's book, from VALID candidates only.

    passed: the book tests a candidate passed, one entry per (candidate, test): frequency -1 each.
    failed: the kept generated tests a candidate failed, one entry per occurrence: frequency +1 each
        (inserted with 1 when new).
    """

    passed: list[StoredTest] = field(default_factory=list)
    failed: list[StoredTest] = field(default_factory=list)
    gt_digest: str = ""  # the GT the tests were judged with (gt_digest); "" when not known

    def extend(self, other: BookUpdate) -> None:
        if other.gt_digest != self.gt_digest:
            raise ValueError("Mistake Book updates of one question judged with two different GTs")
        self.passed.extend(other.passed)
        self.failed.extend(other.failed)


class MistakeBook:
    """A Mistake Book in one SQLite file (created on first use)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)
            self._add_columns()
        except sqlite3.DatabaseError as exc:
            raise UserError(f"{self.path}: not a usable Mistake Book database ({exc})") from None

    def _add_columns(self) -> None:
        """Brings a book written by an earlier version up to the schema (its tests under GT digest "")."""
        for table, column, declaration in _ADDED_COLUMNS:
            have = {row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    # ------------------------------------------------------------------ reading
    @property
    def last_step(self) -> int:
        """The last step applied, -1 for an empty book."""
        row = self.conn.execute("SELECT MAX(step) FROM steps").fetchone()
        return -1 if row[0] is None else int(row[0])

    def retrieve(self, question_id: str, h: int = 8, gt_digest: str = "") -> list[StoredTest]:
        """The question's top-h tests by frequency, of those kept under `gt_digest` (the digest of the
        question's GT now: `gt_digest(problem)`); ties: older (first_step) first, then by call text and
        expected value, so every run picks the same set."""
        if h <= 0:
            return []
        rows = self.conn.execute(
            "SELECT call, expected_json, frequency, first_step FROM tests WHERE question_id = ? AND gt_digest = ? "
            "ORDER BY frequency DESC, first_step ASC, call ASC, expected_json ASC LIMIT ?",
            (question_id, gt_digest, h),
        ).fetchall()
        return [StoredTest(*row) for row in rows]

    def tests(self, question_id: str | None = None) -> dict[str, list[StoredTest]]:
        """All stored tests, per question, in retrieval order; questions sorted by id."""
        query = "SELECT question_id, call, expected_json, frequency, first_step FROM tests"
        params: tuple = ()
        if question_id is not None:
            query += " WHERE question_id = ?"
            params = (question_id,)
        query += " ORDER BY question_id, frequency DESC, first_step ASC, call ASC, expected_json ASC"
        out: dict[str, list[StoredTest]] = {}
        for qid, *rest in self.conn.execute(query, params):
            out.setdefault(qid, []).append(StoredTest(*rest))
        return out

    def size(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM tests").fetchone()[0])

    def step_log(self) -> list[dict[str, int]]:
        rows = self.conn.execute("SELECT step, added, removed, size, questions FROM steps ORDER BY step")
        return [dict(zip(("step", "added", "removed", "size", "questions"), r, strict=True)) for r in rows]

    def stats(self) -> dict[str, Any]:
        total = self.conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT question_id), COALESCE(SUM(frequency), 0) FROM tests"
        ).fetchone()
        return {
            "last_step": self.last_step,
            "tests": int(total[0]),
            "questions": int(total[1]),
            "total_frequency": int(total[2]),
            "steps": self.step_log(),
        }

    # ------------------------------------------------------------------ writing
    def apply_step(self, step: int, updates: dict[str, BookUpdate]) -> dict[str, int]:
        """Applies one training step's updates in ONE transaction and tags it with `step`.

        Per question, its tests kept under another GT digest than the update's are deleted (`gt_digest`),
        then book tests passed are decremented (deleted at 0), then failed generated tests incremented
        (inserted with 1). Returns {"added", "removed", "size"}: tests inserted,
        tests deleted (at frequency 0), and the book's size after; plus "questions":
        the same three numbers per updated question. An exception leaves the book exactly as it was.
        `step` must be larger than `last_step`.
        """
        step = int(step)
        if step <= self.last_step:
            raise ValueError(
                f"Mistake Book step {step} is not after the last applied step {self.last_step}; "
                "call rollback_to() first when resuming"
            )
        added = removed = 0
        per_question: dict[str, dict[str, int]] = {}
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            for qid in sorted(updates):
                a, r, n = self._apply_question(step, qid, updates[qid])
                per_question[qid] = {"added": a, "removed": r, "size": n}
                added += a
                removed += r
            size = self.size()
            conn.execute(
                "INSERT INTO steps(step, added, removed, size, questions) VALUES (?, ?, ?, ?, ?)",
                (step, added, removed, size, len(updates)),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return {"added": added, "removed": removed, "size": size, "questions": per_question}

    def _apply_question(self, step: int, qid: str, update: BookUpdate) -> tuple[int, int, int]:
        """Applies one question's update; returns (added, removed, size after).

        added/removed count events in the reference order: a test of another GT counts as removed, and a
        test deleted at 0 by the passes and failed again in the same step counts once as removed and once
        as added (and restarts at 1).
        """
        gt = update.gt_digest
        rows = self.conn.execute(
            "SELECT stored_test_key, call, expected_json, frequency, first_step, gt_digest FROM tests "
            "WHERE question_id = ?",
            (qid,),
        ).fetchall()
        before = {key: (call, exp, freq, first, digest) for key, call, exp, freq, first, digest in rows}
        current = {
            key: [call, exp, freq, first] for key, (call, exp, freq, first, digest) in before.items() if digest == gt
        }
        removed = len(before) - len(current)  # the tests of another GT: never replayed again
        added = 0
        for test in update.passed:
            key = _checked(test).key
            if key in current:
                current[key][2] -= 1
                if current[key][2] <= 0:
                    del current[key]
                    removed += 1
        for test in update.failed:
            test = _checked(test)
            key = test.key
            if key in current:
                current[key][2] += 1
            else:
                current[key] = [test.call, test.expected_json, 1, step]
                added += 1
        for key in sorted(set(before) | set(current)):
            self._write_change(step, qid, key, before.get(key), current.get(key), gt)
        return added, removed, len(current)

    def _write_change(self, step: int, qid: str, key: str, old: tuple | None, new: list | None, gt: str) -> None:
        """Logs one test's value before the step (for rollback_to) and writes its new one (None: deleted)."""
        if old is not None and new is not None and (old[2], old[3], old[4]) == (new[2], new[3], gt):
            return
        call, exp = (new or old)[0], (new or old)[1]
        self.conn.execute(
            "INSERT INTO changes(step, question_id, stored_test_key, call, expected_json, old_frequency, "
            "old_first_step, old_gt_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (step, qid, key, call, exp, *((old[2], old[3], old[4]) if old else (None, None, None))),
        )
        if new is None:
            self.conn.execute("DELETE FROM tests WHERE question_id = ? AND stored_test_key = ?", (qid, key))
        elif old is None:
            self.conn.execute(
                "INSERT INTO tests(question_id, stored_test_key, call, expected_json, frequency, first_step, "
                "gt_digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (qid, key, call, exp, new[2], new[3], gt),
            )
        else:
            self.conn.execute(
                "UPDATE tests SET frequency = ?, first_step = ?, gt_digest = ? "
                "WHERE question_id = ? AND stored_test_key = ?",
                (new[2], new[3], gt, qid, key),
            )

    def rollback_to(self, step: int) -> None:
        """Undoes every step after `step` (one transaction), so the book is as it was after `step`.
        rollback_to(-1) empties a book whose whole history is logged."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(
                "SELECT question_id, stored_test_key, call, expected_json, old_frequency, old_first_step, "
                "old_gt_digest FROM changes WHERE step > ? ORDER BY seq DESC",
                (step,),
            ).fetchall()
            for qid, key, call, exp, old_freq, old_first, old_gt in rows:
                conn.execute("DELETE FROM tests WHERE question_id = ? AND stored_test_key = ?", (qid, key))
                if old_freq is not None:  # a change logged before digests were kept was of a test under ""
                    conn.execute(
                        "INSERT INTO tests(question_id, stored_test_key, call, expected_json, frequency, first_step, "
                        "gt_digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (qid, key, call, exp, old_freq, old_first, old_gt or ""),
                    )
            conn.execute("DELETE FROM changes WHERE step > ?", (step,))
            conn.execute("DELETE FROM steps WHERE step > ?", (step,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ output
    def export(self, path: str | Path | None = None) -> dict[str, Any]:
        """The whole book as JSON-able data (written to `path` when given)."""
        data = {
            "last_step": self.last_step,
            "steps": self.step_log(),
            "questions": {qid: [t.to_dict() for t in tests] for qid, tests in self.tests().items()},
        }
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
        return data

    def show(self, question_id: str | None = None) -> str:
        """Deterministic text listing: per question, tests by frequency."""
        lines = [f"Mistake Book {self.path.name}: last step {self.last_step}, {self.size()} tests"]
        books = self.tests(question_id)
        if question_id is not None and not books:
            lines.append(f"{question_id}: no tests")
        for qid, tests in books.items():
            lines.append(f"{qid} ({len(tests)} tests)")
            for t in tests:
                lines.append(f"  {t.frequency:4d}  step {t.first_step:<4d} {_clip(t.statement)}")
        return "\n".join(lines)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _checked(test: StoredTest) -> StoredTest:
    if not isinstance(test, StoredTest) or not isinstance(test.call, str) or not isinstance(test.expected_json, str):
        raise TypeError(f"Mistake Book update entries must be StoredTest records, got {test!r}")
    return test


def _clip(text: str, limit: int = 160) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def merge_updates(items: Iterable[tuple[str, BookUpdate]]) -> dict[str, BookUpdate]:
    """Groups (question_id, update) pairs into one update per question."""
    out: dict[str, BookUpdate] = {}
    for qid, update in items:
        out.setdefault(qid, BookUpdate(gt_digest=update.gt_digest)).extend(update)
    return out
