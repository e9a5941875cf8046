"""Plain golden asserts (`assert CALL == EXPECTED`, `assert CALL is EXPECTED`) as a benchmark's tests:
each CALL runs in the candidate's child, each EXPECTED in a clean child, compared here."""

from __future__ import annotations

from typing import Any

from codea1.judge.asserts import split_assert
from codea1.judge.equality import holds
from codea1.judge.formats.spec import CheckSpec, Verdict


def spec_from_asserts(tests: list[str]) -> CheckSpec | None:
    """A CheckSpec for plain `assert CALL <op> EXPECTED` tests (golden tests), compared exactly."""
    calls, expected, ops = [], [], []
    for t in tests:
        parts = split_assert(t)
        if parts is None or parts[1] not in ("==", "is"):
            continue
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
    """One "ok" call judged: `==` is values_equal, `is` holds for None, True and False only (an identity
    claim about another value is never a pass here, as CPython's interning would make it unpredictable)."""
    op = spec.ops[index]
    ok = (
        holds("==", result.value, expected)
        if op == "=="
        else (result.value is expected and expected in (None, True, False))
    )
    return Verdict(ok, "pass" if ok else "fail")
