"""Turning raw model responses into code and tests, without running anything.

Robust to whatever a sampled model writes: empty text, missing or unterminated fences, non-UTF-8 bytes,
control characters, very long responses, `assert` inside strings. Nothing here raises on bad input.
"""

from __future__ import annotations

import ast
import re
import string
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

from codea1.judge.asserts import python_would_run
from codea1.judge.equality import COMPARISONS

_PY_FENCE = re.compile(r"```[ \t]*(?:python3?|py)\b[^\n]*\n(.*?)```", re.IGNORECASE | re.DOTALL)
_ANY_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
# string literals and comments, removed from a line before its brackets are counted
_STRINGS_AND_COMMENTS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#.*')
_OPEN, _CLOSE = ("(", "[", "{"), (")", "]", "}")
_PRINTABLE = frozenset(string.printable)


def as_text(response: str | bytes | None) -> str:
    """The response as text: bytes are decoded as UTF-8 with replacement characters, None is ""."""
    if response is None:
        return ""
    if isinstance(response, (bytes, bytearray)):
        return bytes(response).decode("utf-8", errors="replace")
    return str(response)


def nonprintable_share(response: str | bytes | None) -> float:
    """Share of characters outside `string.printable` (ASCII letters, digits, punctuation, whitespace).

    The test response's format penalty, as the reference code computes it: any non-ASCII character
    counts, prose in another language included. An empty response has share 0 (the reference code
    divides by zero there).
    """
    text = as_text(response)
    if not text:
        return 0.0
    return sum(1 for ch in text if ch not in _PRINTABLE) / len(text)


def extract_code(response: str | bytes | None) -> str:
    """The code of a Code LLM response: the first closed ```python block, else the first closed ``` block,
    else the raw text (newlines at both ends removed).

    A fence that is never closed does not count, so a response cut off inside its code block is the raw
    text (fences included) and does not compile, as in the reference code.
    """
    text = as_text(response)
    match = _PY_FENCE.search(text) or _ANY_FENCE.search(text)
    return (match.group(1) if match else text).strip("\n")


def extract_test_blocks(response: str | bytes | None) -> list[str]:
    """The closed ```python blocks of a Test LLM response, else its closed ``` blocks; [] when none."""
    text = as_text(response)
    return _PY_FENCE.findall(text) or _ANY_FENCE.findall(text)


@dataclass
class ParsedTest:
    """One test as (CALL, op, EXPECTED) source; op is the comparison the model wrote."""

    call: str
    op: str
    expected: str

    @property
    def statement(self) -> str:
        return f"assert {self.call} {self.op} {self.expected}"


@dataclass
class ParsedSuite:
    """The tests of one Test LLM response.

    tests: the tests read, in order, duplicates included (the oracle drops them).
    unparseable: assert statements that were counted invalid without running anything.
    nonprintable: share of non-printable characters of the response (format penalty).
    """

    tests: list[ParsedTest] = field(default_factory=list)
    unparseable: int = 0
    nonprintable: float = 0.0


def statement_groups(text: str) -> Iterator[str]:
    """Splits code into statements line by line, joining lines while brackets are open.

    This is how the reference code reads a test block, and it is what makes reading robust: each group
    is parsed on its own (indentation of its first line removed), so prose, a truncated statement or a
    `def test_...():` line costs only its own group, and asserts inside functions and `if` blocks are read
    like top-level ones. A group still open when a new `assert` line starts is dropped, as is an unclosed
    group at the end. Brackets inside one-line string literals and comments do not count.
    """
    buffer: list[str] = []
    depth = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if depth < 0 or (depth > 0 and stripped.startswith("assert ")):
            buffer, depth = [], 0
        buffer.append(line)
        bare = _STRINGS_AND_COMMENTS.sub("", stripped)
        depth += sum(bare.count(c) for c in _OPEN) - sum(bare.count(c) for c in _CLOSE)
        if depth == 0 and not stripped.endswith("\\"):
            yield "\n".join(buffer).strip()
            buffer = []


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _bare_name(node: ast.expr, env: dict[str, ast.expr]) -> ast.expr:
    return env[node.id] if isinstance(node, ast.Name) and node.id in env else node


def _calls(call: ast.Call, name: str) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == name


class _Reader:
    """Collects tests from statements, with the reference code's rules (and strict mode's extra ones)."""

    def __init__(self, entry_point: str | None, limit: int, strict: bool):
        self.entry_point = entry_point
        self.limit = limit
        self.strict = strict
        self.suite = ParsedSuite()
        self.asserts = 0

    @property
    def full(self) -> bool:
        return self.limit > 0 and self.asserts >= self.limit

    def invalid(self) -> None:
        self.asserts += 1
        self.suite.unparseable += 1

    def statements(self, body: list[ast.stmt], env: dict[str, ast.expr]) -> None:
        for node in body:
            if self.full:
                return
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                env[node.targets[0].id] = node.value
            elif isinstance(node, ast.Assert):
                self.assertion(node, env)

    def assertion(self, node: ast.Assert, env: dict[str, ast.expr], count_dropped: bool = False) -> None:
        """`assert CALL <cmp> EXPECTED, ...` with a call on the left is a test; another assert is dropped,
        or counted invalid in strict mode and on the raw-text path (count_dropped)."""
        test = node.test
        if not python_would_run(node):  # `yield`/`await`: not a test Python would run (and always true once lifted)
            self.invalid()
            return
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Call)):
            if self.strict or count_dropped:
                self.invalid()
            return
        left = test.left
        if self.strict and self.entry_point and not _calls(left, self.entry_point):
            self.invalid()
            return
        call = ast.Call(
            func=left.func,
            args=[_bare_name(a, env) for a in left.args],
            keywords=[ast.keyword(arg=k.arg, value=_bare_name(k.value, env)) for k in left.keywords],
        )
        try:
            parsed = ParsedTest(
                ast.unparse(call), COMPARISONS.get(type(test.ops[0]), "=="), ast.unparse(test.comparators[0])
            )
        except (ValueError, RecursionError, MemoryError):
            if self.strict or count_dropped:
                self.invalid()
            return
        self.asserts += 1
        self.suite.tests.append(parsed)


def parse_test_suite(
    response: str | bytes | None, entry_point: str | None = None, max_tests: int = 0, validity: str = "reference"
) -> ParsedSuite:
    """Parses one Test LLM response into a suite of (CALL, op, EXPECTED) tests, as the reference code does.

    With closed ```python (else ```) blocks: the blocks are joined and read statement by statement
    (`statement_groups`); `name = value` assignments are remembered (across blocks) and a name that is a
    bare argument of a test's call is replaced by its value; each `assert CALL <cmp> EXPECTED` whose left
    side is a call is a test (every comparison is later judged as `==`), any other statement is ignored.
    Without a closed block: each line of the raw text that starts with `assert` is one statement, and a
    line that is not such a test counts as invalid.
    validity="strict" also counts as invalid every assert in a block that is not such a test or whose
    call is not a call of `entry_point`. At most max_tests asserts are read (0: all).
    """
    text = as_text(response)
    strict = validity == "strict"
    reader = _Reader(entry_point, max_tests, strict)
    with warnings.catch_warnings():  # model text triggers SyntaxWarnings ("invalid decimal literal")
        warnings.simplefilter("ignore")
        blocks = extract_test_blocks(text)
        if blocks:
            env: dict[str, ast.expr] = {}
            for group in statement_groups("\n".join(blocks)):
                if reader.full:
                    break
                tree = _parse(group)
                if tree is not None:
                    reader.statements(tree.body, env)
                elif strict and group.startswith("assert"):
                    reader.invalid()
        else:
            for line in text.strip().split("\n"):
                if reader.full:
                    break
                line = line.strip()
                if not line.startswith("assert"):
                    continue
                tree = _parse(line)
                if tree is not None and tree.body and isinstance(tree.body[0], ast.Assert):
                    reader.assertion(tree.body[0], {}, count_dropped=True)
                else:
                    reader.invalid()
    suite = reader.suite
    suite.nonprintable = nonprintable_share(text)
    return suite
