"""Turning raw model responses into code and tests, without running anything.

Robust to whatever a sampled model writes: empty text, missing or unterminated fences, non-UTF-8 bytes,
control characters, very long responses, `assert` inside strings. Nothing here raises on bad input.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from dataclasses import dataclass, field

from codea1.sandbox.asserts import split_assert

_PY_FENCE = re.compile(r"```[ \t]*(?:python3?|py)\b[^\n]*\n(.*?)(?:```|\Z)", re.IGNORECASE | re.DOTALL)
_ANY_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_MAX_SPAN = 12  # lines one statement may span when a block has to be parsed piecewise
_EXTEND_BUDGET = 2000  # multi-line parse attempts per block before falling back to one line at a time
_INCOMPLETE = ("never closed", "unexpected EOF", "expected an indented block", "unterminated triple-quoted")


def as_text(response: str | bytes | None) -> str:
    """The response as text: bytes are decoded as UTF-8 with replacement characters, None is ""."""
    if response is None:
        return ""
    if isinstance(response, (bytes, bytearray)):
        return bytes(response).decode("utf-8", errors="replace")
    return str(response)


def nonprintable_share(response: str | bytes | None) -> float:
    """Share of characters that are neither printable nor ordinary whitespace (newline, tab, CR).

    Used as the test response's format penalty (REFERENCE.md section 3). Lone surrogates, NUL and other
    control characters count; the Unicode replacement character left by bad UTF-8 is printable.
    """
    text = as_text(response)
    if not text:
        return 0.0
    bad = sum(1 for ch in text if not (ch.isprintable() or ch in "\n\r\t"))
    return bad / len(text)


def extract_code(response: str | bytes | None) -> str:
    """The code of a Code LLM response: first ```python block, else first ``` block, else the raw text."""
    text = as_text(response)
    match = _PY_FENCE.search(text) or _ANY_FENCE.search(text)
    return match.group(1) if match else text


def extract_test_blocks(response: str | bytes | None) -> list[str]:
    """All ```python blocks of a Test LLM response, else all ``` blocks, else the raw text."""
    text = as_text(response)
    blocks = _PY_FENCE.findall(text)
    if not blocks:
        blocks = _ANY_FENCE.findall(text)
    return blocks or [text]


@dataclass
class ParsedTest:
    """One assert statement as (CALL, op, EXPECTED) source, simple literal names already inlined."""

    call: str
    op: str
    expected: str

    @property
    def statement(self) -> str:
        return f"assert {self.call} {self.op} {self.expected}"


@dataclass
class ParsedSuite:
    """The tests of one Test LLM response.

    tests: parseable asserts, in order, duplicates included (the oracle drops them).
    unparseable: assert statements that are not `assert CALL <cmp> EXPECTED` (or do not parse, or do
        not mention the function under test when its name is known).
    nonprintable: share of non-printable characters of the response (format penalty).
    """

    tests: list[ParsedTest] = field(default_factory=list)
    unparseable: int = 0
    nonprintable: float = 0.0


class _Inliner(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]):
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return ast.copy_location(self.env[node.id], node)
        return node


def _inline(source: str, env: dict[str, ast.expr]) -> str:
    if not env:
        return source
    try:
        tree = ast.parse(source, mode="eval")
        tree = _Inliner(env).visit(tree)
        return ast.unparse(tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return False
    return True


class _Collector:
    """Walks parsed statements in order, tracking `name = literal` bindings and collecting asserts."""

    def __init__(self, entry_point: str | None, limit: int):
        self.entry_point = entry_point
        self.limit = limit
        self.suite = ParsedSuite()
        self.seen_asserts = 0

    @property
    def full(self) -> bool:
        return self.limit > 0 and self.seen_asserts >= self.limit

    def bad_assert(self) -> None:
        if not self.full:
            self.seen_asserts += 1
            self.suite.unparseable += 1

    def walk(self, body: list[ast.stmt], source: str, env: dict[str, ast.expr]) -> None:
        for node in body:
            if self.full:
                return
            if isinstance(node, ast.Assert):
                self.seen_asserts += 1
                self._assert(node, source, env)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                simple = len(targets) == 1 and len(names) == 1 and node.value is not None
                if simple and _is_literal(node.value):
                    env[names[0]] = node.value
                else:
                    for target in targets:
                        for sub in ast.walk(target):
                            if isinstance(sub, ast.Name):
                                env.pop(sub.id, None)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test") or isinstance(node, ast.If) and _is_main_guard(node.test):
                self.walk(node.body, source, dict(env))

    def _assert(self, node: ast.Assert, source: str, env: dict[str, ast.expr]) -> None:
        try:
            segment = ast.get_source_segment(source, node) or ast.unparse(node)
        except (ValueError, RecursionError):
            segment = ""
        parts = split_assert(segment) if segment else None
        if parts is None:
            self.suite.unparseable += 1
            return
        call, op, expected = parts
        call, expected = _inline(call, env), _inline(expected, env)
        if self.entry_point and not _mentions(call, self.entry_point):
            self.suite.unparseable += 1
            return
        self.suite.tests.append(ParsedTest(call=call, op=op, expected=expected))


def _is_test_container(node: ast.stmt) -> bool:
    """`def test_...():` bodies and `if __name__ == "__main__":` blocks are searched for asserts too."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name.startswith("test")
    return isinstance(node, ast.If) and _is_main_guard(node.test)


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _mentions(call: str, name: str) -> bool:
    try:
        tree = ast.parse(call, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree))


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _parse_or_incomplete(text: str) -> tuple[ast.Module | None, bool]:
    """(tree, False) when text parses; (None, True) when it only looks cut short; else (None, False)."""
    try:
        return ast.parse(text), False
    except SyntaxError as exc:
        return None, any(marker in (exc.msg or "") for marker in _INCOMPLETE)
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None, False


def _walk_piecewise(block: str, collector: _Collector, env: dict[str, ast.expr]) -> None:
    """Parses a block that does not parse as a whole (truncated, prose mixed in) statement by statement.

    From each line, the shortest run of up to _MAX_SPAN lines that parses is taken as one statement
    group (a run is only extended while the error says the input was cut short); a line that starts
    no parseable group is skipped, and counted invalid when it is an assert. A budget on multi-line
    attempts keeps a 100k-character garbage response cheap.
    """
    lines = block.split("\n")
    budget = _EXTEND_BUDGET
    i = 0
    while i < len(lines) and not collector.full:
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        end = min(i + _MAX_SPAN, len(lines)) if budget > 0 else i + 1
        consumed = 0
        for j in range(i + 1, end + 1):
            chunk = textwrap.dedent("\n".join(lines[i:j]))
            tree, incomplete = _parse_or_incomplete(chunk)
            if j > i + 1:
                budget -= 1
            if tree is not None:
                collector.walk(tree.body, chunk, env)
                consumed = j - i
                break
            if not incomplete:
                break
        if consumed:
            i += consumed
            continue
        if stripped.startswith("assert"):
            collector.bad_assert()
        i += 1


def parse_test_suite(
    response: str | bytes | None, entry_point: str | None = None, max_tests: int = 32
) -> ParsedSuite:
    """Parses one Test LLM response into a suite of (CALL, op, EXPECTED) tests.

    Only assert statements count; everything else is ignored, except simple `name = literal`
    assignments, whose literal is inlined into later asserts of the same block. An assert that is not
    a single comparison, or (when entry_point is given) whose CALL never mentions the function under
    test, is counted as unparseable: `assert 1 == 1` would otherwise earn valid_ratio for free.
    At most max_tests assert statements are looked at (0: no limit).
    """
    text = as_text(response)
    collector = _Collector(entry_point, max_tests)
    with warnings.catch_warnings():  # model text triggers SyntaxWarnings ("invalid decimal literal")
        warnings.simplefilter("ignore")
        for block in extract_test_blocks(text):
            if collector.full:
                break
            env: dict[str, ast.expr] = {}
            tree = _parse(block)
            if tree is not None:
                collector.walk(tree.body, block, env)
            else:
                _walk_piecewise(block, collector, env)
    suite = collector.suite
    suite.nonprintable = nonprintable_share(text)
    return suite
