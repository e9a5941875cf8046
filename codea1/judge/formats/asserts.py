"""Plain golden asserts (`assert CALL <op> EXPECTED` with any one comparison, or `assert CALL`) as a
benchmark's tests: each CALL runs in the candidate's child, each EXPECTED in a clean child, compared here."""

from __future__ import annotations

import ast
from typing import Any

from codea1.judge.asserts import parse_assert
from codea1.judge.equality import COMPARISONS, holds
from codea1.judge.formats.spec import CheckSpec, Verdict


def read_golden(statement: str) -> tuple[str, str, str] | None:
    """(CALL, op, EXPECTED) of `assert CALL <op> EXPECTED` (one comparison of COMPARISONS) or (CALL,
    "truth", "None") of `assert CALL`; None for anything else (chains, `and`/`or`, several statements)."""
    node = parse_assert(statement)
    if node is None:
        return None
    test = node.test
    try:
        if not isinstance(test, ast.Compare):
            return ast.unparse(test), "truth", "None"
        if len(test.ops) != 1 or type(test.ops[0]) not in COMPARISONS:
            return None
        return ast.unparse(test.left), COMPARISONS[type(test.ops[0])], ast.unparse(test.comparators[0])
    except (ValueError, RecursionError):
        return None


def spec_from_asserts(tests: list[str]) -> CheckSpec | None:
    """A CheckSpec for plain golden asserts, compared exactly; None when there are none, or when one of them
    is not a plain assert (a solution must pass every golden test, so none may be left out)."""
    calls, expected, ops = [], [], []
    for t in tests:
        parts = read_golden(t)
        if parts is None:
            return None
        calls.append(f"__codea1_plain({parts[0]})")
        expected.append(f"__codea1_plain({parts[2]})")
        ops.append(parts[1])
    if not calls:
        return None
    return CheckSpec(
        calls=calls,
        inputs=[],
        expected_calls=expected,
        helpers="import math",
        imports="",
        mode="asserts",
        ops=ops,
    )


def verdict(spec: CheckSpec, result: Any, expected: Any, index: int) -> Verdict:
    """One "ok" call judged by the comparison table (codea1.judge.equality.holds), except that `is` and
    `is not` are identity claims about None, True and False only: any other identity claim never passes,
    as CPython's interning would make it unpredictable."""
    op = spec.ops[index]
    if op in ("is", "is not"):
        singleton = expected is None or expected is True or expected is False
        same = singleton and result.value is expected
        ok = same if op == "is" else singleton and not same
    else:
        ok = holds(op, result.value, expected)
    return Verdict(ok, "pass" if ok else "fail")
