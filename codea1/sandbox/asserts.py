"""Splitting one `assert CALL <cmp> EXPECTED` statement into its parts, without running anything.

Pure syntax (the `ast` module); shared by the sandbox's `tests` input form and the game's test parser.
"""

from __future__ import annotations

import ast

# comparison operators a test may use, by their source spelling
COMPARATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not"}


NOT_AN_EXPRESSION = (ast.Yield, ast.YieldFrom, ast.Await)  # turn the code around them into a generator/coroutine


def python_would_run(node: ast.AST) -> bool:
    """Whether an assert's expression is one Python runs as an expression: no `yield`, `yield from` or
    `await` anywhere in it. The parser accepts `assert (yield)`, Python's compiler rejects it at module
    level, and once moved into a function (a test body, a checking lambda) it makes that function a
    generator, whose result is always truthy."""
    return not any(isinstance(n, NOT_AN_EXPRESSION) for n in ast.walk(node))


def parse_assert(statement: str) -> ast.Assert | None:
    """The `ast.Assert` of a text that is exactly one assert statement Python would run, else None (several
    statements, another statement, text that does not parse, or `yield`/`await` in it)."""
    try:
        tree = ast.parse(statement.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    if not python_would_run(tree.body[0]):
        return None
    return tree.body[0]


def split_assert(statement: str) -> tuple[str, str, str] | None:
    """Returns (call, op, expected) for a single `assert CALL <op> EXPECTED` statement, else None.

    CALL is the left side (normally a call of the function under test), EXPECTED the right side, both
    as normalised source (ast.unparse). A message after the comma is dropped. Chained comparisons,
    other operators, several statements, or text that does not parse give None.
    """
    node = parse_assert(statement)
    if node is None:
        return None
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or len(test.comparators) != 1:
        return None
    op = COMPARATORS.get(type(test.ops[0]))
    if op is None:
        return None
    try:
        return ast.unparse(test.left), op, ast.unparse(test.comparators[0])
    except (ValueError, RecursionError):
        return None
