"""The grammar of tests/test_judge_fuzz_on_cpu.py: honest programs, plain values, and asserts over them.

Every program is a small function `f` (sometimes with a helper) over its arguments; every value reaches a
program as Python source (`source`), so codea1 and Python read the same text. The values a call returns
are computed here, in this process, only to write asserts that hold (and near misses that do not): what
an assert means is decided by codea1's judge and by Python's own `assert` (`python_verdicts`), never by
this module.

Each assert carries tags: what it does that a documented deliberate difference of codea1 covers
(`identity`, `not-plain`, `base-type`, `exec-module-value`) or a known bug could reach (`value_tags`), so
that the test can tell those differences from the rest.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from itertools import pairwise
from typing import Any

from hypothesis import strategies as st

HEADER = "import collections\nimport decimal\nimport fractions\nimport math\n"


class Unwritable(Exception):
    """A value this module cannot write as source."""


# ---------------------------------------------------------------------------- values
SPECIAL_INTS = [0, 1, -1, 2, 7, 255, 2**31, 2**53 + 1, -(2**63), 2**64, 10**20, -(3**200), 3**5000, 2**13_000 + 1]
SPECIAL_FLOATS = [
    0.0,
    -0.0,
    1.0,
    -1.5,
    0.1,
    0.30000000000000004,
    1e16,
    2.0**53,
    1e308,
    -1e308,
    5e-324,
    math.inf,
    -math.inf,
    math.nan,
]
SPECIAL_STRS = ["", "a", "ab", "b", "\u00e9", "e\u0301", "\U0001d518", "\x00", "\u2028", "\ud800", "\udfff"]
SPECIAL_STRS += ["\r\n", "\x85", "'\"\\", "\U0001f642", "\u00df", "Zz", "10", "\ud800\udfff", "\udbff\udc00x"]
DECIMALS = ["0", "-0", "1.10", "1.1", "1E+3", "0.1", "NaN", "-NaN", "sNaN", "Infinity", "-Infinity", "1e-30", "2.5"]

small_ints = st.integers(-10, 10)
ints = st.one_of(small_ints, st.integers(-(2**70), 2**70), st.sampled_from(SPECIAL_INTS))
floats = st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(allow_nan=True, allow_infinity=True))
texts = st.one_of(st.sampled_from(SPECIAL_STRS), st.text(max_size=4))
binaries = st.one_of(st.sampled_from([b"", b"a", b"\x00\xff", b"ab"]), st.binary(max_size=4))
fractions_ = st.builds(Fraction, st.integers(-9, 9), st.integers(1, 9))
decimals = st.sampled_from(DECIMALS).map(Decimal)
complexes = st.builds(complex, st.sampled_from(SPECIAL_FLOATS[:8] + [math.nan, math.inf]), floats)

hashable_scalars = st.one_of(
    st.none(),
    st.booleans(),
    ints,
    floats,
    texts,
    binaries,
    fractions_,
    decimals.filter(lambda d: not d.is_snan()),  # a signalling NaN cannot be hashed
    complexes,
)
scalars = st.one_of(hashable_scalars, decimals)
hashables = st.recursive(
    hashable_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3).map(tuple), st.frozensets(inner, max_size=3)),
    max_leaves=4,
)


def _containers(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(hashables, inner, max_size=3),
        st.sets(hashables, max_size=3),
        st.frozensets(hashables, max_size=3),
        st.lists(inner, max_size=3).map(deque),
        st.dictionaries(hashables, inner, max_size=3).map(OrderedDict),
        st.dictionaries(texts, small_ints, max_size=3).map(Counter),
    )


values = st.recursive(scalars, _containers, max_leaves=6)


def source(v: Any) -> str:
    """Python source that builds `v` (under HEADER's imports); Unwritable for what it cannot write."""
    t = type(v)
    if v is None or t is bool or t is str or t is bytes:
        return repr(v)
    if t is int:
        if abs(v).bit_length() > 13_000:  # repr() refuses past 4,300 digits, and so does the parser
            return f"{'-' if v < 0 else ''}int('{abs(v):x}', 16)"
        return repr(v)
    if t is float:
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if t is complex:
        text = repr(v)
        try:
            back = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            back = None
        if type(back) is complex and all(  # the literal rebuilds both parts, their signs included
            math.isfinite(a) and a == b and math.copysign(1, a) == math.copysign(1, b)
            for a, b in ((v.real, back.real), (v.imag, back.imag))
        ):
            return text
        return f"complex({source(v.real)}, {source(v.imag)})"
    if t is list or t is deque:
        inner = "[" + ", ".join(source(x) for x in v) + "]"
        return inner if t is list else f"collections.deque({inner})"
    if t is tuple:
        inner = ", ".join(source(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if t is dict or t is defaultdict:
        return "{" + ", ".join(f"{source(k)}: {source(x)}" for k, x in v.items()) + "}"
    if t is OrderedDict:
        return "collections.OrderedDict([" + ", ".join(f"({source(k)}, {source(x)})" for k, x in v.items()) + "])"
    if t is Counter:
        return "collections.Counter({" + ", ".join(f"{source(k)}: {source(x)}" for k, x in v.items()) + "})"
    if t is set or t is frozenset:
        inner = "{" + ", ".join(source(x) for x in v) + "}" if v else ""
        return (f"frozenset({inner})" if t is frozenset else inner) or "set()"
    if t is Fraction:
        return f"fractions.Fraction({v.numerator}, {v.denominator})"
    if t is Decimal:
        return f"decimal.Decimal({str(v)!r})"
    if t is bytearray:
        return f"bytearray({bytes(v)!r})"
    if isinstance(v, tuple) and hasattr(v, "_fields"):  # a namedtuple: the tuple it equals
        return source(tuple(v))
    raise Unwritable(t.__name__)


def writable(v: Any) -> str | None:
    try:
        return source(v)
    except (Unwritable, ValueError, RecursionError):
        return None


_EXACT = (type(None), bool, int, float, complex, str, bytes, Fraction, Decimal)
_CONTAINERS = (list, tuple, dict, set, frozenset, deque, OrderedDict, Counter)
_BASE_TYPED = (bytearray, defaultdict)  # travel as bytes / dict (namedtuples are found by their _fields)


def plainness(v: Any) -> str:
    """'plain', 'base-type' (holds a value codea1 sends as its base type) or 'not-plain'."""
    found = "plain"
    todo = [v]
    while todo:
        x = todo.pop()
        t = type(x)
        if t in _EXACT:
            continue
        if t in _BASE_TYPED or (isinstance(x, tuple) and t is not tuple and hasattr(x, "_fields")):
            found = "base-type"
        elif t not in _CONTAINERS:
            return "not-plain"
        if isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif not isinstance(x, (bytes, bytearray)):
            todo.extend(x)
    return found


def parts(v: Any) -> list:
    """`v` and everything inside it (dict keys included), as Python holds them (one entry per place)."""
    out, todo = [], [v]
    while todo and len(out) < 10_000:
        x = todo.pop()
        out.append(x)
        if isinstance(x, dict):
            todo.extend(x.keys())
            todo.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset, deque)):
            todo.extend(x)
    return out


def kinds(v: Any) -> set[str]:
    """The types inside a value, with the edge values that have names of their own."""
    out = set()
    for x in parts(v):
        out.add(type(x).__name__)
        if type(x) is float and not math.isfinite(x):
            out.add("nan" if math.isnan(x) else "inf")
        elif type(x) is float and x == 0 and math.copysign(1.0, x) < 0:
            out.add("-0.0")
        elif type(x) is int and x.bit_length() > 12_000:
            out.add("huge int")
        elif type(x) is str and any(ord(ch) > 0xFFFF for ch in x):
            out.add("astral str")
    return out


def has_nan(v: Any) -> bool:
    return any(
        type(x) is float
        and math.isnan(x)
        or type(x) is complex
        and (math.isnan(x.real) or math.isnan(x.imag))
        or type(x) is Decimal
        and x.is_nan()
        for x in parts(v)
    )


def _surrogate_pair(s: str) -> bool:
    return any("\ud800" <= a <= "\udbff" and "\udc00" <= b <= "\udfff" for a, b in pairwise(s))


def value_tags(v: Any) -> set[str]:
    """Tags of the known fidelity bugs (KNOWN_BUGS of the test) that a value a call returns can run into."""
    tags: set[str] = set()
    nan_ids: list[int] = []
    for x in parts(v):
        t = type(x)
        if t is float and math.isnan(x):
            nan_ids.append(id(x))
            if math.copysign(1.0, x) < 0:
                tags.add("negative-nan")
        elif t is complex and any(math.isnan(p) and math.copysign(1.0, p) < 0 for p in (x.real, x.imag)):
            tags.add("negative-nan")
        elif t is Decimal and x.is_snan():
            tags.add("snan")
        elif t is str and _surrogate_pair(x):
            tags.add("surrogate-pair")
        elif t is deque and x.maxlen is not None:
            tags.add("deque-maxlen")
    if len(set(nan_ids)) < len(nan_ids) or id(math.nan) in nan_ids:
        tags.add("nan-identity")  # one NaN object at two places: Python's `==` on containers takes it as equal
    return tags


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def has_set(v: Any) -> bool:
    """Whether a set's iteration order could show through (str, repr, list(...) of the value)."""
    t = type(v)
    if t in (set, frozenset):
        return True
    if isinstance(v, dict):
        return any(has_set(k) or has_set(x) for k, x in v.items())
    if t in (list, tuple, deque) or (isinstance(v, tuple) and hasattr(v, "_fields")):
        return any(has_set(x) for x in v)
    return False


def mutate(v: Any, k: int) -> Any:
    """A near miss of `v` (sometimes one Python still holds equal: 1 and 1.0, True and 1)."""
    t = type(v)
    if t is bool:
        return [not v, int(v), float(v)][k % 3]
    if t is int:
        return [v + 1, float(v) if abs(v) < 2**53 else v - 1, -v - 1][k % 3]
    if t is float:
        return [v + 1.0, -v, v * 2 if v else 5e-324, int(v) if math.isfinite(v) else 0][k % 4]
    if t is complex:
        return complex(v.real, v.imag + 1)
    if t is str:
        return [v + "a", v[1:], v.upper(), v.encode("utf-8", "surrogatepass")][k % 4]
    if t is bytes or t is bytearray:
        return [v + b"\x00", v.decode("latin-1"), v[1:]][k % 3]
    if t is Fraction:
        return v + Fraction(1, 3)
    if t is Decimal:
        return [v + 1 if v.is_finite() else Decimal(1), float(v) if not v.is_snan() else 0.0][k % 2]
    if t is list:
        return [v + [0], tuple(v), v[::-1], v[1:]][k % 4]
    if t is deque:
        return [list(v), deque([*v, 1])][k % 2]
    if isinstance(v, tuple):
        return [(*v, None), list(v), v[::-1]][k % 3]
    if isinstance(v, dict):
        return [{**v, "zz": 1}, dict(list(v.items())[1:]), list(v)][k % 3]
    if t in (set, frozenset):
        return [v | {99}, frozenset(v) if t is set else set(v), sorted(v, key=repr)][k % 3]
    if v is None:
        return [0, False, ""][k % 3]
    return None


# ---------------------------------------------------------------------------- programs
@dataclass(frozen=True)
class Template:
    name: str
    body: str
    args: st.SearchStrategy  # a strategy of argument tuples


def _same_kind_pairs() -> st.SearchStrategy:
    kinds = [ints, floats, texts, binaries, st.lists(small_ints, max_size=3), fractions_, decimals, st.booleans()]
    same = st.sampled_from(kinds).flatmap(lambda s: st.tuples(s, s))
    return st.one_of(same, same, st.tuples(scalars, scalars))


TEMPLATES = [
    Template("identity", "def f(a):\n    return a\n", st.tuples(values)),
    Template("pair", "def f(a, b):\n    return [a, b]\n", st.tuples(values, values)),
    Template("alias", "def f(a, b):\n    return (a, b, a)\n", st.tuples(values, values)),
    Template("nested", "def f(a):\n    return {'k': a, 'n': [a, (a,)]}\n", st.tuples(values)),
    Template("add", "def f(a, b):\n    return a + b\n", _same_kind_pairs()),
    Template(
        "floordiv", "def f(a, b):\n    return a // b\n", st.tuples(st.one_of(ints, floats), st.one_of(ints, floats))
    ),
    Template("less", "def f(a, b):\n    return a < b\n", _same_kind_pairs()),
    Template(
        "negate", "def f(a):\n    return -a\n", st.tuples(st.one_of(ints, floats, fractions_, decimals, complexes))
    ),
    Template(
        "sorted",
        "def f(xs):\n    return sorted(xs)\n",
        st.tuples(st.one_of(st.lists(ints, max_size=4), st.lists(texts, max_size=4), st.lists(scalars, max_size=3))),
    ),
    Template("set", "def f(xs):\n    return set(xs)\n", st.tuples(st.lists(hashables, max_size=4))),
    Template("frozenset", "def f(*xs):\n    return frozenset(xs)\n", st.lists(hashables, max_size=3).map(tuple)),
    Template(
        "index",
        "def f(xs):\n    return {x: i for i, x in enumerate(xs)}\n",
        st.tuples(st.lists(hashables, max_size=4)),
    ),
    Template(
        "counter",
        "def f(xs):\n    return collections.Counter(xs)\n",
        st.tuples(st.one_of(texts, st.lists(texts, max_size=4))),
    ),
    Template(
        "deque", "def f(xs):\n    return collections.deque(xs, maxlen=3)\n", st.tuples(st.lists(scalars, max_size=4))
    ),
    Template(
        "odict",
        "def f(pairs):\n    d = collections.OrderedDict(pairs)\n    if d:\n        d.move_to_end(next(iter(d)))\n    return d\n",
        st.tuples(st.lists(st.tuples(hashables, scalars), max_size=3)),
    ),
    Template(
        "fraction",
        "def f(n, d):\n    return fractions.Fraction(n, d)\n",
        st.tuples(st.integers(-20, 20), st.integers(-3, 9)),
    ),
    Template("decimal", "def f(s):\n    return decimal.Decimal(s)\n", st.tuples(st.sampled_from(DECIMALS))),
    Template("complex", "def f(a, b):\n    return complex(a, b)\n", st.tuples(floats, floats)),
    Template(
        "power",
        "def f(n):\n    return 3 ** n\n",
        st.tuples(st.one_of(st.integers(0, 60), st.sampled_from([9100, 12_000]))),
    ),
    Template(
        "encode",
        "def f(s):\n    return s.encode('utf-8', 'surrogatepass')\n",
        st.tuples(st.one_of(texts, st.sampled_from([1, None]))),
    ),
    Template(
        "float",
        "def f(x):\n    return float(x)\n",
        st.tuples(st.one_of(st.sampled_from(["nan", "-0", "1e400", "x"]), ints)),
    ),
    Template("sqrt", "def f(x):\n    return math.sqrt(x)\n", st.tuples(st.one_of(small_ints, floats))),
    Template("truthy", "def f(a):\n    return a if a else None\n", st.tuples(values)),
    Template("typename", "def f(a):\n    return type(a).__name__\n", st.tuples(values)),
    Template(
        "reverse",
        "def f(s):\n    return s[::-1]\n",
        st.tuples(st.one_of(texts, binaries, st.lists(scalars, max_size=3))),
    ),
    Template(
        "get",
        "def f(d, k):\n    return d.get(k)\n",
        st.tuples(st.dictionaries(hashables, scalars, max_size=3), hashables),
    ),
    Template(
        "double",
        "def f(xs):\n    return [x * 2 for x in xs]\n",
        st.tuples(st.lists(st.one_of(ints, floats, texts), max_size=3)),
    ),
    Template(
        "helper",
        "def g(x):\n    return x * 3\n\ndef f(x):\n    return g(x) - x\n",
        st.tuples(st.one_of(ints, floats, fractions_)),
    ),
    # values codea1 sends as their base type (values.py) and values that are not plain data
    Template(
        "namedtuple",
        "P = collections.namedtuple('P', 'x y')\n\ndef f(a, b):\n    return P(a, b)\n",
        st.tuples(scalars, scalars),
    ),
    Template("bytearray", "def f(b):\n    return bytearray(b)\n", st.tuples(binaries)),
    Template(
        "defaultdict",
        "def f(xs):\n    d = collections.defaultdict(list)\n    for x in xs:\n        d[x].append(x)\n    return d\n",
        st.tuples(st.lists(st.one_of(small_ints, texts), max_size=3)),
    ),
    Template("nan", "def f(n):\n    return [math.nan] * n + [float('nan')]\n", st.tuples(st.integers(0, 2))),
    Template("range", "def f(n):\n    return range(n)\n", st.tuples(st.integers(-1, 5))),
]


# ---------------------------------------------------------------------------- asserts
@dataclass
class Call:
    src: str
    args: str  # the arguments' source, as a tuple display
    ok: bool
    value: Any = None
    arguments: tuple = ()  # as Python holds them (a loop's rows carry them through the sandbox's wire)


@dataclass
class Case:
    template: str
    program: str
    entry_point: str | None
    asserts: list[tuple[str, frozenset[str]]] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)  # what the calls' values hold (`kinds`)


TYPES = ["int", "float", "bool", "str", "bytes", "list", "tuple", "dict", "set", "frozenset", "type(None)", "complex"]
MODULE_VALUES = ["collections.Counter", "collections.deque", "fractions.Fraction", "decimal.Decimal"]
TYPES += [*MODULE_VALUES, "(int, float)"]
# (expression over x, whether a set's order shows through it)
TRANSFORMS = [
    ("len({})", False),
    ("sorted({})", True),  # NaN members: the sort's result depends on the order it reads them in
    ("{}[0]", True),
    ("{}[-1]", True),
    ("{}[1:]", True),
    ("str({})", True),
    ("repr({})", True),
    ("bool({})", False),
    ("list({})", True),
    ("sum({})", True),
    ("max({})", True),
    ("abs({})", False),
    ("-{}", False),
    ("math.copysign(1.0, {})", False),
    ("{} * 2", False),
    ("{} + {}", False),
    ("{}.count(1)", True),
    ("{}.get('k')", False),
    ("{}['k']", False),
    ("{}['n'][1][0]", False),
    ("int({})", False),
    ("round({}, 3)", False),
    ("{}.real", False),
    ("{}.x", False),
    ("{}.most_common(1)", False),
    ("{}.hex()", False),
    ("{}.upper()", False),
    ("{}.as_integer_ratio()", False),
    ("{}.is_nan()", False),
    ("{}.denominator", False),
    ("{} % 7", False),
    ("{} ** 2", False),
    ("hash({}) == hash({})", False),
    ("dict({})", True),
    ("set({})", False),
    ("frozenset({}) == set({})", False),
    ("type({}).__name__", False),
    ("len(str({}))", True),
    ("[*{}]", True),
    ("{}[0] == {}[2]", False),
    ("{}['n'][0] == {}['k']", False),
]
SINGLETONS = ["None", "True", "False"]
PARENT_ONLY = {"snan", "unhashable-member", "int-in-bytes"}
FREE = [  # asserts that never call the function under test
    "assert len([1, 2]) == 2",
    "assert math.pi > 3",
    "assert 1 == 1.0 == True",
    "assert 'a' < 'b' < 'ba'",
    "assert [] != ()",
    "assert math.isnan(float('nan'))",
    "assert float('nan') != float('nan')",
    "assert {1, 2} == frozenset({2, 1})",
    "assert decimal.Decimal('1.10') == fractions.Fraction(11, 10)",
    "assert sorted({3: 'a', 1: 'b'}) == [1, 3]",
]
NUMERIC = (bool, int, float, Fraction, Decimal)


def _evaluate(ns: dict, expr: str) -> tuple[bool, Any]:
    try:
        return True, eval(expr, ns)  # honest expressions this module wrote
    except Exception:  # noqa: BLE001
        return False, None


@st.composite
def _expected(draw: st.DrawFn, ok: bool, value: Any) -> str:
    """The source of an expected value: the true one, a near miss, or any value (with a literal's spelling or
    not: a non-literal expected is decided in the oracle's child)."""
    how = draw(st.sampled_from(["true", "true", "near", "any"]))
    choice = value if ok and how == "true" else None
    if ok and how == "near":
        choice = mutate(value, draw(st.integers(0, 11)))
    text = writable(choice) if choice is not None or (ok and how == "true") else None
    if text is None:
        text = source(draw(values))
    if draw(st.integers(0, 4)) == 0:
        text = draw(st.sampled_from(["[{}][0]", "({}, 0)[0]", "(lambda: {})()", "({} if True else None)"])).format(text)
    return text


@st.composite
def _atom(draw: st.DrawFn, calls: list[Call], ns: dict, tags: set[str], top: bool = False) -> str:
    """One comparison or check over a call of f (`top`: the whole assert, where an identity claim is kept:
    its verdict is documented as unlike Python's, and nothing else in the assert may hide behind that)."""
    c = draw(st.sampled_from(calls))
    kind = draw(
        st.sampled_from(
            ["eq", "eq", "ne", "transform", "transform", "is", "type", "order", "member", "numeric", "truth", "two"]
        )
    )
    if kind in ("eq", "ne"):
        e = draw(_expected(c.ok, c.value))
        op = "==" if kind == "eq" else "!="
        return f"{c.src} {op} {e}" if draw(st.booleans()) else f"{e} {op} {c.src}"
    if kind == "transform":
        t, shows_order = draw(st.sampled_from(TRANSFORMS))
        if shows_order and c.ok and has_set(c.value) or t.startswith("hash") and c.ok and has_nan(c.value):
            t = "len({})"  # a NaN's hash is its address: Python's answer depends on when objects are freed
        expr = t.format(*[c.src] * t.count("{}"))
        if "==" in t:
            return expr
        ok, got = _evaluate({**ns, "x": c.value}, t.format(*["x"] * t.count("{}"))) if c.ok else (False, None)
        return f"{expr} == {draw(_expected(ok, got))}"
    if kind == "is":
        other = draw(st.sampled_from([*SINGLETONS, "value", "call"] if top else SINGLETONS))
        op = draw(st.sampled_from(["is", "is not"]))
        if other in SINGLETONS:
            return f"{c.src} {op} {other}"
        tags.add("identity")
        rhs = draw(st.sampled_from(calls)).src if other == "call" else draw(_expected(c.ok, c.value))
        return f"{c.src} {op} {rhs}"
    if kind == "type":
        ty = draw(st.sampled_from(TYPES))
        form = draw(
            st.sampled_from(["isinstance({}, {})", "type({}) is {}", "type({}) == {}", "not isinstance({}, {})"])
        )
        if form != "isinstance({}, {})" and ty.startswith("("):
            form = "isinstance({}, {})"
        return form.format(c.src, ty)
    if kind == "order":
        op = draw(st.sampled_from(["<", "<=", ">", ">="]))
        e = draw(_expected(c.ok, c.value))
        if draw(st.integers(0, 3)) == 0:
            e2 = draw(_expected(c.ok, c.value))
            return f"{e} <= {c.src} <= {e2}"
        return f"{c.src} {op} {e}" if draw(st.booleans()) else f"{e} {op} {c.src}"
    if kind == "member":
        v = c.value
        item = None
        if c.ok and isinstance(v, (list, tuple, set, frozenset, dict, deque, str, bytes)) and len(v):
            members = list(v) if not isinstance(v, (str, bytes)) else [v[:1], v[-1:], v[0]]
            item = writable(members[draw(st.integers(0, len(members) - 1))])
        item = item or source(draw(values))
        ok, held = _evaluate(ns, item)
        container = (set, frozenset, dict, Counter, OrderedDict, defaultdict)
        if ok and (
            isinstance(held, int) and isinstance(v, (bytes, bytearray)) or type(held) is bytes and type(v) is int
        ):
            tags.add("int-in-bytes")
        form = draw(st.integers(0, 4))
        if form == 0:
            op = draw(st.sampled_from(["in", "not in"]))
            if op == "not in" and ok and not _hashable(held) and isinstance(c.value, container):
                tags.add("unhashable-member")
            return f"{item} {op} {c.src}"
        e1, e2 = draw(_expected(c.ok, c.value)), draw(_expected(c.ok, c.value))
        if form == 1:
            return f"{c.src} in [{e1}, {e2}]"
        if form == 2:
            return f"{c.src} not in ({e1},)"
        if form == 3:
            return f"{c.src} in {{{e1}}}"
        return f"{c.src} in {item}"
    if kind == "numeric":
        e = draw(_expected(c.ok, c.value))
        return draw(
            st.sampled_from(
                [
                    f"math.isclose({c.src}, {e})",
                    f"math.isclose({c.src}, {e}, rel_tol=1e-09, abs_tol=1e-12)",
                    f"abs({c.src} - {e}) < 1e-09",
                    f"abs({c.src} - {e}) <= 1e-06",
                    f"math.isnan({c.src})",
                    f"math.isinf({c.src})",
                    f"math.copysign(1.0, {c.src}) == -1.0",
                    f"round({c.src}, 6) == {e}",
                ]
            )
        )
    if kind == "truth":
        return draw(st.sampled_from([c.src, f"not {c.src}", f"bool({c.src})", f"bool({c.src}) is False"]))
    c2 = draw(st.sampled_from(calls))
    return draw(
        st.sampled_from(
            [f"{c.src} == {c2.src}", f"{c.src} != {c2.src}", f"{c.src} < {c2.src}", f"[{c.src}] == [{c2.src}]"]
        )
    )


@st.composite
def _comprehension(draw: st.DrawFn, calls: list[Call]) -> str:
    """A loop over calls of f: split per iteration by codea1 (asserts.py) unless its condition calls f."""
    rows = draw(st.lists(st.sampled_from(calls), min_size=1, max_size=4))
    expected = []
    for c in rows:
        text = writable(c.value) if c.ok else None
        if not (c.ok and text is not None and draw(st.integers(0, 4))):
            text = draw(_expected(c.ok, c.value))
        expected.append(text)
    pairs = [f"({c.args}, {e})" for c, e in zip(rows, expected, strict=True)]
    table = "[" + ", ".join(pairs) + "]"
    args = "[" + ", ".join(c.args for c in rows) + "]"
    form = draw(st.integers(0, 8))
    if form == 0:
        return f"all(f(*a) == e for a, e in {table})"
    if form == 1:
        return f"any(f(*a) == e for a, e in {table})"
    if form == 2:
        return f"[f(*a) for a in {args}] == [e for _, e in {table}]"
    if form == 3:
        return f"{{i: f(*a) for i, a in enumerate({args})}} == {{i: e for i, (_, e) in enumerate({table})}}"
    if form == 4:
        return f"all(f(*a) is not None for a in {args} if len(a) > 0)"
    if form == 5:
        return f"all((f(*a) == e) or (f(*b) == e) for a, e in {table} for b in {args})"
    if form == 6:  # the condition calls f: lifted whole, computed in the candidate's child
        return f"sum(1 for a in {args} if f(*a) is not None) == {len(rows)}"
    if form == 7:
        return f"next(f(*a) for a in {args}) == {expected[0]}"
    return f"any([f(*a) == e for a, e in {table}])"


@st.composite
def assert_statement(draw: st.DrawFn, calls: list[Call], ns: dict) -> tuple[str, frozenset[str]]:
    tags: set[str] = set()
    shape = draw(st.sampled_from(["atom", "comprehension", "and", "or", "atom", "not", "if", "walrus", "free"]))
    if shape == "free":
        return draw(st.sampled_from(FREE)), frozenset()
    if shape == "comprehension":
        expr = draw(_comprehension(calls))
    elif shape in ("and", "or"):
        expr = f"{draw(_atom(calls, ns, tags))} {shape} {draw(_atom(calls, ns, tags))}"
    elif shape == "not":
        expr = f"not ({draw(_atom(calls, ns, tags))})"
    elif shape == "if":
        a, b, c = (draw(_atom(calls, ns, tags)) for _ in range(3))
        expr = f"({a}) if {b} else ({c})"
    elif shape == "walrus":
        call = draw(st.sampled_from(calls))
        expr = f"(r := {call.src}) == {draw(_expected(call.ok, call.value))} or r is None"
    else:
        expr = draw(_atom(calls, ns, tags, top=True))
        tags.add("simple")
    message = draw(st.sampled_from(["", "", "", ", 'message'", ", f'{f}'"]))
    return f"assert {expr}{message}", frozenset(tags)


@st.composite
def program_case(draw: st.DrawFn, template: Template) -> Case:
    program = HEADER + "\n" + template.body
    ns: dict = {"__name__": "__fuzz__"}
    exec(compile(program, "<program>", "exec"), ns)  # noqa: S102  (an honest program of this module)
    calls = []
    for args in draw(st.lists(template.args, min_size=1, max_size=4)):
        arg_src = ", ".join(source(a) for a in args)
        tuple_src = f"({arg_src},)" if len(args) == 1 else f"({arg_src})"
        ok, value = _evaluate(ns, f"f({arg_src})")
        calls.append(Call(f"f({arg_src})", tuple_src, ok, value, _evaluate(ns, tuple_src)[1]))
    case = Case(template.name, program, draw(st.sampled_from(["f", "f", None])))
    case.kinds = set().union(*(kinds(c.value) for c in calls if c.ok))
    for _ in range(draw(st.integers(8, 16))):
        statement, tags = draw(assert_statement(calls, ns))
        tags = set(tags)
        used = [c for c in calls if c.src in statement or "f(*" in statement]  # f(*a): a loop's rows
        tags |= {plainness(c.value) for c in used if c.ok} - {"plain"}
        for c in used:
            tags |= value_tags(c.arguments) | (value_tags(c.value) if c.ok else set())
        if case.entry_point is None and re.search(r"\b(collections|decimal|fractions|math)\.", statement):
            tags.add("exec-module-value")  # a name the program imports: without an entry point, one under test
        if "simple" not in tags:  # these bugs are in holds(), the parent's decision of `VALUE <op> LITERAL`
            tags -= PARENT_ONLY
        case.asserts.append((statement, frozenset(tags)))
    return case


# ---------------------------------------------------------------------------- Python's own verdicts
DRIVER = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
out = []
for program, statement in json.loads(sys.stdin.read()):
    try:
        code = compile(program + "\n" + statement + "\n", "<string>", "exec")
    except SyntaxError as exc:
        out.append("syntax:" + str(exc))
        continue
    try:
        exec(code, {"__name__": "__main__"})
        out.append("pass")
    except AssertionError:
        out.append("fail")
    except BaseException as exc:
        out.append("raise:" + type(exc).__name__)
sys.stdout.write(json.dumps(out))
"""


WIRE = """
def __fuzz_wire(fn, arguments_too):
    import json
    from codea1.sandbox.values import from_json, to_json

    def trip(value):  # the way a value takes out of the sandbox's child: its tagged form, as JSON text
        return from_json(json.loads(json.dumps(to_json(value))))

    def wired(*args):
        return trip(fn(*(trip(list(args)) if arguments_too else args)))

    return wired


f = __fuzz_wire(f, {arguments_too})
"""


def wired(program: str, arguments_too: bool) -> str:
    """`program` with f's value (and its arguments too, as a loop's rows travel) sent the way a value leaves
    the sandbox's child: Python on this program shows what the trip alone changes."""
    return program + WIRE.format(arguments_too=arguments_too)


def python_verdicts(pairs: list[tuple[str, str]]) -> list[str]:
    """Python's own verdict on each (program, assert): the program and the assert as one module, as
    `python -c` would run it, in one plain subprocess (a fresh namespace each): "pass", "fail"
    (AssertionError) or "raise:<exception>"."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}
    text = json.dumps(pairs)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], input=text, capture_output=True, text=True, timeout=600, env=env, check=True
    )
    return json.loads(done.stdout)
