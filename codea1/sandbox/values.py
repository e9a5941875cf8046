"""Plain, bounded value encoding and the trusted comparison of decoded values.

A sandboxed child turns each result into a JSON-able *tagged form* (`to_json`); the trusted parent turns it
back (`from_json`) and compares with `values_equal`. Only plain data travels: None, bool, int, float,
complex, str, bytes, list, tuple, dict, set, frozenset, nested. Anything else (a user class, a subclass of a
plain type with a forged `__eq__`, a value too large or too deep) becomes `UNSERIALIZABLE`, which is never
equal to anything, itself included. The encoder checks exact types (`type(x) is int`), so it never runs
code of the object it encodes.

Tagged form: JSON null/bool/str/list stand for themselves; an int is a JSON number (ints beyond 2**53 stay
exact in Python's json); a finite float is a JSON number with a fraction or exponent; everything else is a
one-key-per-field object with "$t": {"$t": "float", "v": "nan"|"inf"|"-inf"}, {"$t": "tuple", "v": [...]},
{"$t": "set"|"frozenset", "v": [...]}, {"$t": "dict", "v": [[k, v], ...]}, {"$t": "bytes", "v": hex},
{"$t": "complex", "v": [re, im]}, {"$t": "int", "v": hex} for ints
beyond 12,000 bits (hex is not subject to Python's decimal digit limit), {"$t": "unserializable", "v": "type name or reason"}.

Standard-library containers keep Python's `==` (fidelity): collections.Counter ({"$t": "counter"}) and
OrderedDict ({"$t": "odict"}) have equality rules of their own (a Counter's missing keys count as zero
against another Counter; two OrderedDicts compare in order) and travel tagged, as does deque ({"$t":
"deque"}, equal only to a deque; a bounded one carries its maxlen, "m"). A subclass of list, tuple, dict, set or frozenset that does not
redefine `==` (namedtuple, defaultdict, a plain `class L(list): pass`) compares as its base type does,
so it travels as that base type; so does a subclass of int, float, str or bytes that keeps `==` (IntEnum,
StrEnum). `dict.keys()` and `dict.items()` views travel as sets (they compare as sets); fractions.Fraction
({"$t": "fraction", "v": [num, den]}) and decimal.Decimal ({"$t": "decimal", "v": text}) as themselves,
compared in the parent with the standard library's own `==`. What the encoder reads of them, it reads
with the base type's own methods (`tuple.__iter__`, `dict.items`, `int.__index__`), never with methods
the class could redefine.
"""

from __future__ import annotations

import enum
import math
import sys
from collections import Counter, OrderedDict, deque
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any

MAX_DEPTH = 64  # nesting levels
MAX_ITEMS = 100_000  # containers' elements, all levels together
MAX_CHARS = 1_000_000  # characters of str plus bytes of bytes, all together
MAX_DECIMAL_CHARS = 10_000  # characters of one Decimal's text
MAX_FRACTION_BITS = 65_536  # bits of a Fraction's numerator or denominator (the parent reduces it on decoding)


class _Unserializable:
    """A result that could not be encoded as plain data. Never equal to anything (itself included)."""

    _instance: _Unserializable | None = None

    def __new__(cls) -> _Unserializable:  # noqa: PYI034
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "UNSERIALIZABLE"

    def __reduce__(self) -> str:
        return "UNSERIALIZABLE"


UNSERIALIZABLE = _Unserializable()


class _TooLarge(Exception):
    pass


def _unserializable(reason: str) -> dict:
    return {"$t": "unserializable", "v": reason[:80]}


def to_json(value: Any, *, max_depth: int = MAX_DEPTH, max_items: int = MAX_ITEMS, max_chars: int = MAX_CHARS) -> Any:
    """Encodes a plain value into its JSON-able tagged form; anything else gives the unserializable tag.

    Limits apply to the whole value: nesting depth, total container elements, total str/bytes length.
    numpy scalars become their Python value and numpy arrays lists (what `tolist()` gives), because
    EvalPlus-style reference code often returns them.
    """
    budget = [max_items, max_chars]
    try:
        return _enc(value, max_depth, budget)
    except _TooLarge as exc:
        return _unserializable(f"too large: {exc}")
    except RecursionError:
        return _unserializable("too deep")
    except Exception as exc:  # noqa: BLE001  (total: e.g. a numpy array whose tolist() fails)
        return _unserializable(f"not encodable: {type(exc).__name__}")


def _enc(v: Any, depth: int, budget: list[int]) -> Any:
    """`v` as JSON-ready data; `budget` is [items, chars] left for the whole value (_TooLarge past them)."""
    t = type(v)
    if v is None or t is bool:
        return v
    if t is int or t is float or t is complex or t is Fraction or t is Decimal:
        return _enc_number(v, t, depth, budget)
    if t is str or t is bytes or t is bytearray:  # a bytearray equals the bytes it holds, as in Python
        budget[1] -= len(v)
        if budget[1] < 0:
            raise _TooLarge(t.__name__)
        return v if t is str else {"$t": "bytes", "v": bytes(v).hex()}
    if t is UNSERIALIZABLE.__class__:
        return _unserializable("unserializable")
    if t in (list, tuple, set, frozenset, dict):
        return _enc_builtin_container(v, t, depth, budget)
    kind = _container_kind(t)
    if kind is not None:
        return _enc_collection(v, kind, depth, budget)
    base = _plain_base(t)
    if base is not None:  # a subclass that compares as its base type: sent as that type
        if depth <= 0:
            raise _TooLarge("depth")
        if base is dict:
            return _enc(dict(dict.items(v)), depth, budget)
        if base in _SCALAR_BASES:  # IntEnum, a str or float subclass: its value, read by the base's own method
            return _enc(_SCALAR_BASES[base](v), depth, budget)
        return _enc(base(base.__iter__(v)), depth, budget)
    if t in _KEY_VIEWS:  # dict.keys() / dict.items() compare as sets (dict.values() only with itself)
        return _enc(set(v), depth, budget)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(v, (np.generic, np.ndarray)):
        # numpy scalar or array (EvalPlus-style reference code often returns them): its plain equivalent
        return _enc(v.tolist(), depth, budget)
    name = getattr(t, "__name__", "object")
    return _unserializable(name if type(name) is str else "object")


def _enc_number(v: Any, t: type, depth: int, budget: list[int]) -> Any:
    """An int, float, complex, Fraction or Decimal (exact types only: their == is the stdlib's)."""
    if t is int:
        bits = v.bit_length()
        if bits <= 12_000:  # below Python's 4300-digit str() limit: a JSON number
            return v
        if bits > 1_000_000:
            raise _TooLarge("int")
        budget[1] -= bits // 4
        if budget[1] < 0:
            raise _TooLarge("int")
        return {"$t": "int", "v": hex(v)}
    if t is float:
        if math.isfinite(v):
            return v
        return {"$t": "float", "v": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if t is complex:
        return {"$t": "complex", "v": [_enc(v.real, depth, budget), _enc(v.imag, depth, budget)]}
    if t is Fraction:
        if max(v.numerator.bit_length(), v.denominator.bit_length()) > MAX_FRACTION_BITS:
            raise _TooLarge("fraction")
        return {"$t": "fraction", "v": [_enc(v.numerator, depth, budget), _enc(v.denominator, depth, budget)]}
    text = Decimal.__str__(v)
    budget[1] -= len(text)
    if budget[1] < 0 or len(text) > MAX_DECIMAL_CHARS:
        raise _TooLarge("decimal")
    return {"$t": "decimal", "v": text}


def _enc_builtin_container(v: Any, t: type, depth: int, budget: list[int]) -> Any:
    """A list, tuple, set, frozenset or dict (exact types), read with the builtins' own methods."""
    if depth <= 0:
        raise _TooLarge("depth")
    budget[0] -= len(v)
    if budget[0] < 0:
        raise _TooLarge("items")
    if t is dict:
        return {
            "$t": "dict",
            "v": [[_enc(k, depth - 1, budget), _enc(x, depth - 1, budget)] for k, x in dict.items(v)],
        }
    items = [_enc(x, depth - 1, budget) for x in (list.__iter__(v) if t is list else iter(v))]
    return items if t is list else {"$t": t.__name__, "v": items}


def _enc_collection(v: Any, kind: type, depth: int, budget: list[int]) -> Any:
    """A deque, Counter or OrderedDict (`kind`, from _container_kind), read with the C methods of the class
    itself, never ones the value's class could redefine."""
    if depth <= 0:
        raise _TooLarge("depth")
    if kind is deque:
        items = list(deque.__iter__(v))  # one C-level pass: a concurrent change cannot loop it
        budget[0] -= len(items)
        if budget[0] < 0:
            raise _TooLarge("items")
        out = {"$t": "deque", "v": [_enc(x, depth - 1, budget) for x in items]}
        maxlen = deque.maxlen.__get__(v)  # the class's own attribute, not one the value's class redefines
        if maxlen is not None:
            out["m"] = maxlen
        return out
    # an OrderedDict's own order (move_to_end changes it, not the dict's insertion order)
    pairs = list(OrderedDict.items(v)) if kind is OrderedDict else list(dict.items(v))
    budget[0] -= len(pairs)
    if budget[0] < 0:
        raise _TooLarge("items")
    return {
        "$t": "counter" if kind is Counter else "odict",
        "v": [[_enc(k, depth - 1, budget), _enc(x, depth - 1, budget)] for k, x in pairs],
    }


_PLAIN_BASES = (list, tuple, dict, set, frozenset, int, float, str, bytes)
# how a scalar subclass's plain value is read: the base class's own C method, never one the subclass defines
_SCALAR_BASES = {int: int.__index__, float: float.__float__, str: str.__str__, bytes: lambda v: bytes(memoryview(v))}
_KEY_VIEWS = (type({}.keys()), type({}.items()))


def _redefines_eq(t: type, base: type) -> bool:
    """Whether class `t` (a subclass of `base`) or a class between them defines == or != itself.

    Read from the classes' own __dict__ (no attribute lookup that a metaclass could intercept).
    """
    for klass in type.__dict__["__mro__"].__get__(t):
        if klass is base:
            return False
        d = type.__dict__["__dict__"].__get__(klass)
        if "__eq__" in d or "__ne__" in d:
            return True
    return True


def _container_kind(t: type) -> type | None:
    """Counter, OrderedDict or deque where `t` is one of them or a subclass keeping its ==; else None."""
    if type(t) is not type:
        return None
    for kind in (Counter, OrderedDict, deque):
        if t is kind or (issubclass(t, kind) and not _redefines_eq(t, kind)):
            return kind
    return None


def _plain_base(t: type) -> type | None:
    """The plain base type of a subclass of list/tuple/dict/set/frozenset/int/float/str/bytes that keeps
    the base's == (an IntEnum member compares as its int). Classes of any metaclass but `type` and the
    standard library's enum metaclass are not looked into."""
    if type(t) is not type and type(t) is not enum.EnumType:
        return None
    for base in _PLAIN_BASES:
        if issubclass(t, base):
            return None if _redefines_eq(t, base) else base
    return None


def from_json(obj: Any, *, max_depth: int = MAX_DEPTH + 2, max_items: int = 2 * MAX_ITEMS) -> Any:
    """Decodes a tagged form made by `to_json` (or forged by a hostile child) into a plain value.

    Malformed input (unknown tag, unhashable dict key or set element, too deep, too many elements, or
    sets/dicts whose keys were chosen to collide in the hash table, a denial-of-service trick) gives
    `UNSERIALIZABLE`, never an exception.
    """
    try:
        return _dec(obj, max_depth, [max_items])
    except (ValueError, TypeError, KeyError, RecursionError, OverflowError, _TooLarge):
        return UNSERIALIZABLE


def _items(v: Any, budget: list[int]) -> list:
    if type(v) is not list:
        raise ValueError("expected a list")
    budget[0] -= len(v)
    if budget[0] < 0:
        raise _TooLarge("items")
    return v


FLOOD_COLLISIONS = 64  # a set or dict of at most this many keys is never a flood
FLOOD_PAIRS_PER_KEY = 32  # colliding pairs per key past which insertion is refused as quadratic


def floods(hashes: list[int]) -> bool:
    """Whether keys with these hashes were built to collide: inserting them costs one comparison per pair of
    keys that share a hash, so the work is the number of such pairs. Refused past FLOOD_PAIRS_PER_KEY pairs
    per key: 66 keys of one hash are, while honest
    keys whose hashes repeat a little (powers of two: CPython's int hash repeats every 61 of them) are
    not. Also applied to literals before they are parsed into sets (codea1.judge.literals)."""
    if len(hashes) <= FLOOD_COLLISIONS:
        return False
    counts: dict[int, int] = {}
    for h in hashes:
        counts[h] = counts.get(h, 0) + 1
    pairs = sum(c * (c - 1) // 2 for c in counts.values())
    return pairs > FLOOD_PAIRS_PER_KEY * len(hashes)


def _no_flooding(keys: list) -> list:
    """Rejects hash keys built to collide (distinct values, one hash: quadratic set/dict insertion)."""
    if floods([hash(k) for k in keys]):
        raise _TooLarge("colliding hashes")
    return keys


def _dec(o: Any, depth: int, budget: list[int]) -> Any:
    if depth <= 0:
        raise _TooLarge("depth")
    t = type(o)
    if o is None or t in (bool, int, float, str):
        return o
    if t is list:
        return [_dec(x, depth - 1, budget) for x in _items(o, budget)]
    if t is not dict or not (set(o) == {"$t", "v"} or set(o) == {"$t", "v", "m"} and o["$t"] == "deque"):
        raise ValueError("bad tagged value")  # "m": a deque's maxlen, its one extra field
    tag, v = o["$t"], o["v"]
    if tag == "tuple":
        return tuple(_dec(x, depth - 1, budget) for x in _items(v, budget))
    if tag in ("set", "frozenset"):
        elems = _no_flooding([_dec(x, depth - 1, budget) for x in _items(v, budget)])
        return set(elems) if tag == "set" else frozenset(elems)
    if tag in ("dict", "counter", "odict"):
        pairs = []
        for pair in _items(v, budget):
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("bad dict pair")
            pairs.append((_dec(pair[0], depth - 1, budget), _dec(pair[1], depth - 1, budget)))
        _no_flooding([k for k, _ in pairs])
        out = {"dict": dict, "counter": Counter, "odict": OrderedDict}[tag]()
        for k, x in pairs:
            out[k] = x
        return out
    if tag == "deque":
        maxlen = o.get("m")
        if maxlen is not None and (type(maxlen) is not int or not 0 <= maxlen <= MAX_ITEMS):
            raise ValueError("bad deque maxlen")
        return deque((_dec(x, depth - 1, budget) for x in _items(v, budget)), maxlen)
    if tag == "int":
        if type(v) is not str or len(v) > 300_000:
            raise ValueError("bad int")
        return int(v, 16)
    if tag == "float":
        if v not in ("nan", "inf", "-inf"):
            raise ValueError("bad float")
        return float(v)
    if tag == "bytes":
        if type(v) is not str or len(v) > 2 * MAX_CHARS:
            raise ValueError("bad bytes")
        return bytes.fromhex(v)
    if tag == "fraction":
        num, den = _as_list(v)
        num, den = _dec(num, depth - 1, budget), _dec(den, depth - 1, budget)
        if type(num) is not int or type(den) is not int or den <= 0:
            raise ValueError("bad fraction")
        if max(num.bit_length(), den.bit_length()) > MAX_FRACTION_BITS:
            raise _TooLarge("fraction")  # reducing it (a gcd of two huge ints) would cost the parent seconds
        return Fraction(num, den)
    if tag == "decimal":
        if type(v) is not str or len(v) > MAX_DECIMAL_CHARS:
            raise ValueError("bad decimal")
        try:
            return Decimal(v)
        except InvalidOperation:
            raise ValueError("bad decimal") from None
    if tag == "complex":
        re, im = _as_list(v)
        re, im = _dec(re, depth - 1, budget), _dec(im, depth - 1, budget)
        if type(re) is not float or type(im) is not float:
            raise ValueError("bad complex")
        return complex(re, im)
    if tag == "unserializable":
        return UNSERIALIZABLE
    raise ValueError("unknown tag")


def _as_list(v: Any) -> list:
    if type(v) is not list:
        raise ValueError("expected a list")
    return v


_DICTS = (dict, Counter, OrderedDict)


def contains_unserializable(value: Any) -> bool:
    """True when `value` is, or contains, the UNSERIALIZABLE sentinel."""
    if value is UNSERIALIZABLE:
        return True
    t = type(value)
    if t in (list, tuple, set, frozenset, deque):
        return any(contains_unserializable(x) for x in value)
    if t in _DICTS:
        return any(contains_unserializable(k) or contains_unserializable(x) for k, x in value.items())
    return False
