"""Plain values to and from Python source, and the one text of an expected value.

`literal(source)` reads a Python literal of plain data without running anything; `plain_source(value)`
writes source that rebuilds a plain value (in an oracle child, or a test shown to a user);
`encode_expected(value)` is the canonical JSON text of a value (codea1.sandbox.values' tagged form with
set elements and dict entries sorted), so two spellings of one expected value are one test in every
process (the Mistake Book's key).
"""

from __future__ import annotations

import ast
import json
import math
from collections import Counter, OrderedDict, deque
from decimal import Decimal
from fractions import Fraction
from typing import Any

from codea1.sandbox.values import contains_unserializable, floods, from_json, to_json

MAX_LITERAL_CHARS = 1 << 20  # a longer source is never read here (a test's literal is a piece of a response)


def literal(source: str) -> tuple[bool, Any]:
    """(True, value) when `source` is a Python literal of plain data (no code runs), else (False, None).

    A source over MAX_LITERAL_CHARS characters is refused before anything is done with it. The source is
    parsed first (linear), and a set or dict display whose constant keys collide in their hashes is
    refused before any set or dict is built (building it is quadratic: 20,000 colliding ints took 2.2 s);
    every later step (building the value, its plain-data round trip, bounded by codea1.sandbox.values'
    MAX_ITEMS and MAX_CHARS) is linear in the source. A refused source is not a literal, and is evaluated,
    if at all, in a sandboxed child with a time limit."""
    if len(source) > MAX_LITERAL_CHARS:
        return False, None
    try:
        tree = ast.parse(source.strip(), mode="eval")
        if _floods(tree):
            return False, None
        value = ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError):
        return False, None
    try:
        value = from_json(to_json(value))
    except Exception:  # noqa: BLE001  (a value the encoding cannot hold is simply not a literal)
        return False, None
    if contains_unserializable(value):
        return False, None
    return True, value


def _floods(tree: ast.AST) -> bool:
    """Whether a set or dict display in `tree` has constant keys built to collide (the decoder's rule,
    codea1.sandbox.values.floods)."""
    for node in ast.walk(tree):
        keys = node.elts if isinstance(node, ast.Set) else node.keys if isinstance(node, ast.Dict) else None
        if keys and floods([hash(k.value) for k in keys if isinstance(k, ast.Constant)]):
            return True
    return False


BIG_INT_BITS = 12_000  # ints longer than this are written in hex (Python's decimal limit is 4,300 digits)


def plain_source(value: Any) -> str:
    """Python source that evaluates to the plain value `value` (floats nan/inf included)."""
    t = type(value)
    if t is float:
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        return repr(value)
    if t is complex:
        return f"complex({plain_source(value.real)}, {plain_source(value.imag)})"
    if t is list:
        return "[" + ", ".join(plain_source(v) for v in value) + "]"
    if t is tuple:
        inner = ", ".join(plain_source(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if t is dict:
        return "{" + ", ".join(f"{plain_source(k)}: {plain_source(v)}" for k, v in value.items()) + "}"
    if t in (Counter, OrderedDict):  # stdlib containers the sandbox returns as themselves (values.py)
        items = ", ".join(f"({plain_source(k)}, {plain_source(v)})" for k, v in value.items())
        return (
            f"__import__('collections').{t.__name__}(dict([{items}]))"
            if t is Counter
            else f"__import__('collections').OrderedDict([{items}])"
        )
    if t is deque:
        return f"__import__('collections').deque([{', '.join(plain_source(v) for v in value)}])"
    if t is Fraction:
        return f"__import__('fractions').Fraction({plain_source(value.numerator)}, {plain_source(value.denominator)})"
    if t is Decimal:
        return f"__import__('decimal').Decimal({str(value)!r})"
    if t in (set, frozenset):
        inner = "{" + ", ".join(plain_source(v) for v in value) + "}" if value else "set()"
        return f"frozenset({inner})" if t is frozenset else inner
    if t is int and abs(value).bit_length() > BIG_INT_BITS:  # repr() refuses past 4,300 decimal digits
        return f"{'-' if value < 0 else ''}int('{abs(value):x}', 16)"
    if value is None or t in (bool, int, str, bytes):
        return repr(value)
    raise ValueError(f"not plain data: {t.__name__}")


def _dump(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def canonical(tagged: Any) -> Any:
    """A tagged form with set elements and dict entries in sorted order (of their JSON text).

    Set iteration order of strings changes with the interpreter's hash seed, so without this the same
    GT value could be stored as two different tests by two processes (e.g. before and after a resume).
    Dict equality ignores order too, so entries are sorted as well.
    """
    if isinstance(tagged, list):
        return [canonical(x) for x in tagged]
    if isinstance(tagged, dict) and {"$t", "v"} <= set(tagged) and isinstance(tagged["v"], list):
        tag, items = tagged["$t"], [canonical(x) for x in tagged["v"]]
        if tag in ("set", "frozenset"):
            items = sorted(items, key=_dump)
        elif tag == "dict":
            items = sorted(items, key=lambda pair: _dump(pair[0]) if isinstance(pair, list) and pair else "")
        return {**tagged, "v": items}  # other fields (a deque's maxlen, "m") as they are
    return tagged


def encode_expected(value: Any) -> str:
    """Canonical JSON text of a plain value (the tagged form of codea1.sandbox.values, sets and dicts
    sorted), so equal values give equal text in every process."""
    return _dump(canonical(to_json(value)))


def decode_expected(text: str) -> Any:
    """The value an encode_expected text stands for."""
    return from_json(json.loads(text))
