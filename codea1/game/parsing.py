"""Turning raw model responses into code and tests, without running anything.

Robust to whatever a sampled model writes: empty text, missing or unterminated fences, non-UTF-8 bytes,
control characters, very long responses, `assert` inside strings. Nothing here raises on bad input.

Reading a response costs the trusted parent time linear in its length, and the length is capped: only its
first MAX_RESPONSE_CHARS characters are read, and the tests read from it hold at most `suite_budget` of its
length in characters (docs/sandbox.md, "Cost bound").
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
from codea1.lang import LANGUAGES
from codea1.lang import language as language_named

# Every scan of a response is one of these searches, each starting where the previous one stopped and none
# retrying a character from many starts, so reading a response is linear in its length
# (tests/test_parse_cost_on_cpu.py counts the work).
_TICKS = re.compile("```")
_NEWLINE = re.compile("\n")
_PY_TICKS = re.compile(r"```(?=[ \t]*(?:python3?|py)\b)", re.IGNORECASE)  # the ``` of a python fence
_LANG_TICKS: dict[str, re.Pattern[str]] = {"python": _PY_TICKS}  # the ``` of each language's fence
_QUOTE_OR_HASH = re.compile("[\"'#]")  # where a one-line string literal or a comment may start
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SINGLE_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'")
_OPEN, _CLOSE = ("(", "[", "{"), (")", "]", "}")
_PRINTABLE = frozenset(string.printable)

MAX_RESPONSE_CHARS = 1 << 20  # characters of a response that are read; the rest is never looked at
SUITE_FREE_CHARS = 65_536  # characters of tests any response may yield...
SUITE_CHARS_PER_CHAR = 2  # ...plus this many per character of the response


def suite_budget(length: int) -> int:
    """Characters (CALL and EXPECTED sources together) the tests read from a response of `length` characters
    may hold: a value assigned once and inlined into every test would otherwise make a suite quadratic
    in its response. Far above what an ordinary suite holds (about its own length)."""
    return SUITE_FREE_CHARS + SUITE_CHARS_PER_CHAR * length


def as_text(response: str | bytes | None) -> str:
    """The response as text, its first MAX_RESPONSE_CHARS characters: bytes are decoded as UTF-8 with
    replacement characters, None is ""."""
    if response is None:
        return ""
    if isinstance(response, (bytes, bytearray)):
        return bytes(response[: 4 * MAX_RESPONSE_CHARS]).decode("utf-8", errors="replace")[:MAX_RESPONSE_CHARS]
    return str(response)[:MAX_RESPONSE_CHARS]


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


def extract_code(response: str | bytes | None, language: str = "python") -> str:
    """The code of a Code LLM response: the first closed ```python block (```cpp, ```c++ ... for C++: the
    language's fence words, codea1.lang), else the first closed ``` block, else the raw text (newlines at
    both ends removed).

    A fence that is never closed does not count, so a response cut off inside its code block is the raw
    text (fences included) and does not compile, as in the reference code.
    """
    text = as_text(response)
    for opener in (_lang_ticks(language), _TICKS):
        for start, end in _fenced(text, opener):
            return text[start:end].strip("\n")
    return text.strip("\n")


def fence_language(response: str | bytes | None) -> str | None:
    """The language (codea1.lang) whose fence word opens the response's first closed block of a language
    codea1 has (```cpp, ```c++, ```python ...), or None where no such block is."""
    text = as_text(response)
    starts = {name: next(_fenced(text, _lang_ticks(name)), None) for name in LANGUAGES}
    found = [(span[0], name) for name, span in starts.items() if span is not None]
    return min(found)[1] if found else None


def _lang_ticks(name: str) -> re.Pattern[str]:
    """The ``` that opens a fence of the language `name`: followed by optional blanks and one of its fence
    words, not followed by another word character or "+" (any case)."""
    pattern = _LANG_TICKS.get(name)
    if pattern is None:
        words = "|".join(re.escape(w) for w in language_named(name).fence_words)
        pattern = _LANG_TICKS[name] = re.compile(rf"```(?=[ \t]*(?:{words})(?![\w+]))", re.IGNORECASE)
    return pattern


def extract_test_blocks(response: str | bytes | None) -> list[str]:
    """The closed ```python blocks of a Test LLM response, else its closed ``` blocks; [] when none."""
    text = as_text(response)
    return [text[a:b] for a, b in _fenced(text, _PY_TICKS)] or [text[a:b] for a, b in _fenced(text, _TICKS)]


def _fenced(text: str, opener_at: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    r"""(start, end) of the body of each closed fence, in order: a fence opens where `opener_at` finds its
    ``` (any ```, or one followed by a language's fence word: for Python optional blanks and python, python3
    or py, any case), its body starts after the end of that line and ends at the next ```; the next fence is
    looked for after it.

    This is what re.finditer gives for the patterns ```[ \t]*(?:python3?|py)\b[^\n]*\n(.*?)``` (IGNORECASE)
    and ```[^\n]*\n(.*?)``` (DOTALL), without their backtracking, which retried every ``` of a line to its end
    (a line of 48,000 backticks took seconds). When the first fence that opens is not closed, no later one
    is: its line's other ``` share its line end, and a ``` on a later line would have closed it.
    """
    pos = 0
    while True:
        opener = opener_at.search(text, pos)
        if opener is None:
            return
        line_end = _NEWLINE.search(text, opener.end())
        closer = _TICKS.search(text, line_end.end()) if line_end is not None else None
        if closer is None:
            return
        yield line_end.end(), closer.start()
        pos = closer.end()


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
        bare = _without_strings_and_comments(stripped)
        depth += sum(bare.count(c) for c in _OPEN) - sum(bare.count(c) for c in _CLOSE)
        if depth == 0 and not stripped.endswith("\\"):
            yield "\n".join(buffer).strip()
            buffer = []


def _without_strings_and_comments(line: str) -> str:
    r"""One line (no newline in it) without its closed one-line string literals and its comment: what
    re.sub(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#.*', "", line) gives, in one pass.

    That substitution tried every quote of the line up to the line's end, so a line of escaped quotes was
    quadratic. A quote whose string does not close stays; once one has not, no later quote of its kind can
    (each was escaped inside the one that did not close, and its string would end the same way), so none
    is tried again.
    """
    kept: list[str] = []
    closing = {'"': _DOUBLE_QUOTED, "'": _SINGLE_QUOTED}
    start = pos = 0
    while (mark := _QUOTE_OR_HASH.search(line, pos)) is not None:
        at = mark.start()
        if line[at] == "#":
            kept.append(line[start:at])
            return "".join(kept)
        pattern = closing.get(line[at])
        literal = pattern.match(line, at) if pattern is not None else None
        if literal is None:
            closing.pop(line[at], None)
            pos = at + 1
        else:
            kept.append(line[start:at])
            start = pos = literal.end()
    kept.append(line[start:])
    return "".join(kept)


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

    def __init__(self, entry_point: str | None, limit: int, strict: bool, budget: int = SUITE_FREE_CHARS):
        self.entry_point = entry_point
        self.limit = limit
        self.strict = strict
        self.suite = ParsedSuite()
        self.asserts = 0
        self.budget = budget  # characters the tests read may still hold (suite_budget)
        self.inlined: dict[ast.expr, int] = {}  # characters of each assigned value, unparsed once

    @property
    def full(self) -> bool:
        return self.limit > 0 and self.asserts >= self.limit or self.budget < 0

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
        if self._inlined_chars(left, env) > self.budget:  # known before the call is written out
            self.budget = -1
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
        self.budget -= len(parsed.call) + len(parsed.expected)
        if self.budget < 0:
            return
        self.asserts += 1
        self.suite.tests.append(parsed)

    def _inlined_chars(self, call: ast.Call, env: dict[str, ast.expr]) -> int:
        """Characters the values of the call's bare-name arguments add to it (each value unparsed once)."""
        total = 0
        for node in [*call.args, *(k.value for k in call.keywords)]:
            value = _bare_name(node, env)
            if value is not node:
                if value not in self.inlined:
                    try:
                        self.inlined[value] = len(ast.unparse(value))
                    except (ValueError, RecursionError, MemoryError):
                        self.inlined[value] = 0  # the whole call fails to unparse below
                total += self.inlined[value]
        return total


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
    call is not a call of `entry_point`. At most max_tests asserts are read (0: all), and no test past
    `suite_budget` characters of tests (a value inlined into every test of a long response reaches it).
    """
    text = as_text(response)
    strict = validity == "strict"
    reader = _Reader(entry_point, max_tests, strict, suite_budget(len(text)))
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


# -- stdin/stdout problems: the Test LLM writes inputs, GT gives their outputs ---------------------------

_INPUT_TICKS = re.compile(r"```(?=[ \t]*(?:input|stdin)(?![\w+]))", re.IGNORECASE)  # the ``` of an input fence
MAX_INPUT_CHARS = 65_536  # characters of one test input; a longer one is invalid (GT would be slow to judge it)


def parse_input_suite(response: str | bytes | None, max_tests: int = 0) -> ParsedSuite:
    """The test inputs of one Test LLM response for a stdin/stdout problem: each closed ```input (or
    ```stdin) block is one input, else each closed ``` block; a block's text is the input as the program
    reads it (a final newline added where it has none). Each input is one ParsedTest whose `call` is the
    input and whose op is "stdin" (its expected output is GT's: nothing to predict). An empty or too long
    block is counted unparseable; at most max_tests blocks are read (0: all), and none past `suite_budget`
    characters in all."""
    text = as_text(response)
    spans = list(_fenced(text, _INPUT_TICKS)) or list(_fenced(text, _TICKS))
    suite = ParsedSuite(nonprintable=nonprintable_share(text))
    budget = suite_budget(len(text))
    for a, b in spans[:max_tests] if max_tests else spans:
        block = text[a:b]
        if not block.strip() or len(block) > MAX_INPUT_CHARS or len(block) > budget:
            suite.unparseable += 1
            continue
        budget -= len(block)
        suite.tests.append(ParsedTest(block if block.endswith("\n") else block + "\n", "stdin", ""))
    return suite
