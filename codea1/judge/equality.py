"""What equal means, and what each comparison of a test means, on plain values (the one comparator table).

`values_equal` is Python's `==` on decoded plain values (codea1.sandbox.values) except that NaN equals NaN
and floats may compare with a tolerance; `holds(op, value, expected)` decides `value <op> expected` for
every comparison an assert can make (COMPARISONS); `prediction_right` says whether a Test LLM's
`assert CALL <op> EXPECTED` predicted GT's value, in the two modes of docs/algorithm.md. All three are
total: a comparison that raises is False, never an exception.
"""

from __future__ import annotations

import ast
import math
import operator
from collections import Counter, OrderedDict, deque
from decimal import Decimal
from fractions import Fraction
from typing import Any

from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable

COMPARISONS = {  # ast comparison operator -> its source spelling (a test's "op")
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "is": "is", "is not": "is not"}
_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_DICTS = (dict, Counter, OrderedDict)


def values_equal(a: Any, b: Any, float_tol: float | None = None) -> bool:
    """Python `==` on decoded plain values, with two deliberate differences.

    NaN equals NaN (a NaN the reference computed is matched by a NaN the candidate computed), and with
    `float_tol` set, floats (and complex parts) compare with math.isclose(rel_tol=abs_tol=float_tol).
    Numbers compare across int/float/bool as in Python (1 == 1.0 == True); list never equals tuple.
    UNSERIALIZABLE anywhere makes the values unequal.
    """
    try:
        return _eq(a, b, float_tol, 0)
    except Exception:  # noqa: BLE001  (total: 10**400 against a complex overflows; unequal, never a crash)
        return False


_NUMBER = (bool, int, float)
_EXACT = (Fraction, Decimal)


def _eq(a: Any, b: Any, tol: float | None, depth: int) -> bool:
    if a is UNSERIALIZABLE or b is UNSERIALIZABLE:
        return False
    ta, tb = type(a), type(b)
    if ta in _NUMBER and tb in _NUMBER:
        return _num_eq(a, b, tol)
    if ta in _EXACT or tb in _EXACT:  # Fraction, Decimal: the stdlib's own == against each other and numbers
        if ta not in (*_NUMBER, *_EXACT, complex) or tb not in (*_NUMBER, *_EXACT, complex):
            return False
        if ta is Decimal and tb is Decimal and (a.is_nan() or b.is_nan()):  # NaN == NaN, quiet or signalling
            return a.is_qnan() == b.is_qnan() and a.is_snan() == b.is_snan()
        if _magnitudes_differ(a, b):  # a Decimal against a huge int: == would convert seconds of digits
            return False
        if tol is not None and (ta is float or tb is float):
            return _num_eq(float(a), float(b), tol)
        return bool(a == b)
    if ta is complex or tb is complex:
        if ta not in (*_NUMBER, complex) or tb not in (*_NUMBER, complex):
            return False
        ca, cb = complex(a), complex(b)
        return _num_eq(ca.real, cb.real, tol) and _num_eq(ca.imag, cb.imag, tol)
    if ta in (list, tuple, deque) or tb in (list, tuple, deque):
        return ta is tb and len(a) == len(b) and all(_eq(x, y, tol, depth + 1) for x, y in zip(a, b, strict=True))
    if ta in _DICTS or tb in _DICTS:
        if ta not in _DICTS or tb not in _DICTS:
            return False
        if ta is Counter and tb is Counter:  # Python >= 3.10: a missing key counts as zero
            return all(_eq(dict.get(a, k, 0), dict.get(b, k, 0), tol, depth + 1) for c in (a, b) for k in c)
        if len(a) != len(b):
            return False
        if (
            ta is OrderedDict
            and tb is OrderedDict
            and not all(_eq(x, y, None, depth + 1) for x, y in zip(a, b, strict=True))
        ):
            return False  # two OrderedDicts: the same keys in the same order
        pairs = _matched_members(list(a), list(b), depth)
        return pairs is not None and all(_eq(a[k], b[j], tol, depth + 1) for k, j in pairs)
    if ta in (set, frozenset) and tb in (set, frozenset):
        if contains_unserializable(a) or contains_unserializable(b) or len(a) != len(b):
            return False
        return _matched_members(list(a), list(b), depth) is not None
    if ta in (str, bytes) or tb in (str, bytes) or a is None or b is None:
        return ta is tb and a == b
    return False


def _matched_members(a: list, b: list, depth: int) -> list[tuple[Any, Any]] | None:
    """Pairs each member of `a` (set members or dict keys) with an equal member of `b`, one to one, or None.

    Hash lookup first, as Python does; the members it cannot find (NaN, or tuples holding one: their hash is
    their address) are paired by their `_member_key`, which two members share exactly when `_eq` holds
    them equal, so NaN equals NaN here too: each member of `a` left over takes the first member of `b` left
    over with its key (the pairs a scan with `_eq` would make), in linear time.
    """
    index = set(b)
    pairs, left_a = [], []
    for x in a:
        if x in index and not _has_nan(x):
            pairs.append((x, x))
        else:
            left_a.append(x)
    in_a = set(a)
    by_key: dict[Any, deque] = {}
    for y in b:
        if y not in in_a or _has_nan(y):
            by_key.setdefault(_member_key(y), deque()).append(y)
    for x in left_a:
        found = by_key.get(_member_key(x))
        if not found:
            return None
        pairs.append((x, found.popleft()))
    return pairs if not any(by_key.values()) else None


class _NaN:
    """The one NaN of a member's key (a float NaN and a complex NaN part alike), equal only to itself."""

    __slots__ = ()


_NAN = _NaN()


def _member_key(x: Any) -> Any:
    """A hashable key for a set member or dict key: two members have equal keys exactly when `_eq` (with no
    tolerance) holds them equal. A member without NaN is its own key (there `_eq` is Python's `==`, which
    agrees with hash); with NaN, the key spells its structure with one token per NaN: a float NaN and a
    complex with a NaN part by their (real, imaginary) parts, a Decimal NaN by its kind (quiet or
    signalling), a tuple by its items' keys, a frozenset by its members' keys counted."""
    if not _has_nan(x):
        return x
    t = type(x)
    if t is float or t is complex:
        c = complex(x)
        return ("complex", *(_NAN if math.isnan(p) else p for p in (c.real, c.imag)))
    if t is Decimal:
        return ("decimal-nan", x.is_qnan(), x.is_snan())
    if t is tuple:
        return ("tuple", tuple(_member_key(y) for y in x))
    counts = Counter(_member_key(y) for y in x)  # a frozenset: two NaN members are two members
    return ("frozenset", frozenset(counts.items()))


def _magnitudes_differ(a: Any, b: Any) -> bool:
    """Whether a finite Decimal and an int of over 10,000 bits (either way round) surely differ: their
    numbers of digits are apart by more than one."""
    if type(a) is not Decimal:
        a, b = b, a
    if type(a) is not Decimal or type(b) is not int or b.bit_length() <= 10_000 or not a.is_finite():
        return False
    return abs((a.adjusted() + 1) - int(b.bit_length() * 0.30103) - 1) > 2


def _has_nan(x: Any) -> bool:
    if type(x) is float:
        return math.isnan(x)
    if type(x) is Decimal:
        return x.is_nan()
    if type(x) is complex:
        return math.isnan(x.real) or math.isnan(x.imag)
    if type(x) in (tuple, frozenset):
        return any(_has_nan(y) for y in x)
    return False


def _num_eq(x: Any, y: Any, tol: float | None) -> bool:
    if type(x) is float and type(y) is float and math.isnan(x) and math.isnan(y):
        return True  # NaN == NaN, deliberately
    if tol is not None and (type(x) is float or type(y) is float):
        try:
            return math.isclose(float(x), float(y), rel_tol=tol, abs_tol=tol)
        except OverflowError:
            return x == y
    return x == y


def holds(op: str, value: Any, expected: Any = None, float_tol: float | None = None) -> bool:
    """Whether `value <op> expected` holds on plain values ("truth": whether `value` is truthy).

    `==`/`!=` use values_equal; `is`/`is not` are meaningful for None, True and False only (an identity
    claim about any other value is judged as equality of the same type, as CPython's small-int and
    string interning would make it unpredictable); ordering and membership are Python's. Total: an
    UNSERIALIZABLE value fails every comparison, and a comparison that raises is False.
    """
    if value is UNSERIALIZABLE or contains_unserializable(value):
        return False
    if op in _NEGATED and _snan_compared(op, value, expected):
        return False  # Python raises InvalidOperation comparing a signalling NaN with a number: the assert fails
    try:
        if op == "truth":
            return bool(value)
        if op == "==":
            return values_equal(value, expected, float_tol)
        if op == "!=":
            return not values_equal(value, expected, float_tol)
        if op in ("is", "is not"):
            same = type(value) is type(expected) and values_equal(value, expected)
            return same if op == "is" else not same
        if op in _ORDER:
            return bool(_ORDER[op](value, expected))
        if op in ("in", "not in"):
            found = _contains(expected, value)
            return found if op == "in" else not found
        if op in ("has", "has not"):  # `expected in value`: the candidate's value is the container
            found = _contains(value, expected)
            return found if op == "has" else not found
    except Exception:  # noqa: BLE001  (a total verdict: an impossible comparison is a failed test)
        return False
    return False


_NEGATED = frozenset({"!=", "not in", "has not"})  # comparisons that pass where the values are unequal


_NUMBERS = (int, float, complex, bool, Fraction, Decimal)


def _snan_meets_number(a: Any, b: Any) -> bool:
    """Whether Python's `a == b` raises InvalidOperation: somewhere a Decimal signalling NaN is compared
    with a number. Followed as Python compares: sequences of one type and of equal length pair by pair up
    to the first unequal pair, dicts of equal size key by key (a signalling NaN cannot be a key or a set
    member: it has no hash)."""
    if type(a) is Decimal and a.is_snan() and type(b) in _NUMBERS:
        return True
    if type(b) is Decimal and b.is_snan() and type(a) in _NUMBERS:
        return True
    if type(a) is not type(b) or not isinstance(a, (list, tuple, deque, dict)) or len(a) != len(b):
        return False
    pairs = ((a[k], b[k]) for k in a if k in b) if isinstance(a, dict) else zip(a, b, strict=True)
    for x, y in pairs:
        if _snan_meets_number(x, y):
            return True
        if not values_equal(x, y):
            return False
    return False


def _snan_compared(op: str, value: Any, expected: Any) -> bool:
    """Whether Python raises evaluating the negated comparison `op` (!=, not in, has not) on these values."""
    if op == "!=":
        return _snan_meets_number(value, expected)
    item, container = (value, expected) if op == "not in" else (expected, value)
    if type(container) not in (list, tuple, deque):
        return False
    for member in container:  # Python's `in` compares member by member until one is equal
        if _snan_meets_number(item, member):
            return True
        if values_equal(item, member):
            return False
    return False


def _contains(container: Any, item: Any) -> bool:
    """Python's `item in container` on plain values (substrings for str and bytes, a byte's value for an int
    in bytes), with values_equal; like Python, an unhashable item in a set or dict raises TypeError."""
    t = type(container)
    if t is bytes and type(item) in (int, bool):
        if not 0 <= item < 256:
            raise ValueError("byte must be in range(0, 256)")
        return item in container
    if t in (str, bytes):
        if type(item) is not t:
            raise TypeError("a str/bytes container holds only str/bytes")
        return item in container
    if t in (set, frozenset) or isinstance(container, dict):
        hash(item)  # TypeError for a list, dict or set, as Python's lookup raises
    if t in (list, tuple, set, frozenset, dict, Counter, OrderedDict, deque):
        return any(values_equal(item, member) for member in container)
    raise TypeError("not a container")


def prediction_right(
    op: str, predicted: Any, gt_value: Any, mode: str = "reference", float_tol: float | None = None
) -> bool:
    """Whether a Test LLM's `assert CALL <op> EXPECTED` predicted GT's value of CALL.

    "reference" (the authors' reward code): every comparison is read as `==`, so `f(x) != 3` is a right
    prediction when GT gives 3 and `f(x) in [8, 9]` is a wrong one. "strict": only `==` and `is` claims
    can be right; `!=`, `in`, `<` ... pin no value and count as wrong (the test still attacks the code
    with GT's value).
    """
    if mode == "strict" and op not in ("==", "is"):
        return False
    return values_equal(gt_value, predicted, float_tol)
