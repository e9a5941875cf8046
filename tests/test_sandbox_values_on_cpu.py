"""Plain-value encoding (to_json/from_json) and the parent's comparison (values_equal)."""

from __future__ import annotations

import json
import math

import pytest

from codea1.judge.equality import values_equal
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable, from_json, to_json

PLAIN = [
    None,
    True,
    False,
    0,
    -7,
    2**80,
    3**30000,
    1.5,
    -0.0,
    float("inf"),
    float("-inf"),
    1e308,
    "",
    "héllo\x00",
    b"\x00\xff",
    1 + 2j,
    [],
    [1, [2, [3]]],
    (),
    (1, "a", (2.5,)),
    {1: "a", "b": [1], (1, 2): None},
    {1, 2, 3},
    frozenset({"x", (1, 2)}),
    {"nested": {frozenset({1}): {(): [b"z"]}}},
]


@pytest.mark.parametrize("value", PLAIN, ids=range(len(PLAIN)))
def test_round_trip_through_json_text(value: object) -> None:
    text = json.dumps(to_json(value))
    back = from_json(json.loads(text))
    assert type(back) is type(value)
    assert back == value


def test_nan_round_trips_and_equals_nan() -> None:
    back = from_json(json.loads(json.dumps(to_json([float("nan")]))))
    assert math.isnan(back[0])
    assert values_equal(back, [float("nan")])
    assert not values_equal(float("nan"), 1.0)


@pytest.mark.parametrize(
    "value",
    [
        object(),
        type("X", (), {})(),
        type("I", (int,), {"__eq__": lambda s, o: True, "__hash__": int.__hash__})(3),
        type("S", (str,), {"__ne__": lambda s, o: False, "__hash__": str.__hash__})("a"),
        print,
        iter([1]),
        [1, object()],
        {"k": {1: object()}},
    ],
)
def test_non_plain_values_are_unserializable(value: object) -> None:
    assert contains_unserializable(from_json(to_json(value)))
    assert not values_equal(from_json(to_json(value)), from_json(to_json(value)))


def test_bounds_make_values_unserializable() -> None:
    assert from_json(to_json("x" * 2_000_000)) is UNSERIALIZABLE
    assert from_json(to_json(list(range(200_000)))) is UNSERIALIZABLE
    deep: list = []
    for _ in range(200):
        deep = [deep]
    assert from_json(to_json(deep)) is UNSERIALIZABLE
    cyclic: list = []
    cyclic.append(cyclic)
    assert from_json(to_json(cyclic)) is UNSERIALIZABLE


@pytest.mark.parametrize(
    "forged",
    [
        {"$t": "nope", "v": 1},
        {"$t": "set", "v": [[1, 2]]},
        {"$t": "dict", "v": [[[1], 2]]},
        {"$t": "float", "v": "1"},
        {"$t": "bytes", "v": "zz"},
        {"a": 1},
        {"$t": "tuple", "v": 5},
        {"$t": "complex", "v": ["a", 1]},
    ],
)
def test_forged_tagged_forms_decode_to_unserializable(forged: object) -> None:
    assert from_json(forged) is UNSERIALIZABLE


def test_unserializable_is_never_equal() -> None:
    assert UNSERIALIZABLE != UNSERIALIZABLE  # noqa: PLR0124
    assert not values_equal(UNSERIALIZABLE, UNSERIALIZABLE)
    assert not values_equal([UNSERIALIZABLE], [UNSERIALIZABLE])


def test_python_equality_semantics() -> None:
    assert values_equal(1, 1.0) and values_equal(True, 1) and values_equal(1, 1 + 0j)
    assert not values_equal([1, 2], (1, 2))
    assert values_equal({1: [1.0]}, {1: [1]})
    assert values_equal({1, 2}, frozenset({2, 1}))
    assert not values_equal("1", 1) and not values_equal(b"a", "a") and not values_equal(None, 0)
    assert not values_equal({1: 2}, {1: 3}) and not values_equal({1: 2}, {2: 2})
    assert not values_equal([1], [1, 2])


def test_float_tolerance_is_opt_in() -> None:
    assert not values_equal(0.1 + 0.2, 0.3)
    assert values_equal(0.1 + 0.2, 0.3, float_tol=1e-9)
    assert values_equal([1.0000001, (2.0,)], [1.0, (2.0000001,)], float_tol=1e-6)
    assert not values_equal(1.1, 1.0, float_tol=1e-6)
    assert values_equal(3, 3.0000001, float_tol=1e-6)


def test_decoder_rejects_hash_flooding_and_oversized_input() -> None:
    p = 2**61 - 1  # ints equal modulo p share one hash: quadratic insertion if accepted
    assert from_json({"$t": "set", "v": [k * p + 1 for k in range(20000)]}) is UNSERIALIZABLE
    assert from_json({"$t": "dict", "v": [[k * p + 1, 0] for k in range(20000)]}) is UNSERIALIZABLE
    assert from_json([0] * 500_000) is UNSERIALIZABLE
    assert from_json(to_json(set(range(50_000)))) == set(range(50_000))  # honest large sets still decode


def test_equality_is_total() -> None:
    # complex(10**400) overflows: before, the OverflowError escaped and took a whole batch down
    assert not values_equal(10**400, 1j) and not values_equal([1j], [10**400])
    assert not values_equal(10**400, 1.5, float_tol=1e-9) and values_equal(10**400, 10**400, float_tol=1e-9)


def test_stdlib_containers_compare_as_python_does() -> None:
    """Counter, OrderedDict, defaultdict, namedtuple, deque: the parent's verdict is Python's ==."""
    from collections import Counter, OrderedDict, defaultdict, deque, namedtuple

    Point = namedtuple("Point", "x y")

    class Plain(list):
        pass

    dd = defaultdict(int, {"a": 1})
    pairs = [
        (Counter("aab"), {"a": 2, "b": 1}),
        (Counter(a=1), Counter(a=1, b=0)),
        (Counter(a=1), {"a": 1, "b": 0}),
        (Counter(a=1), OrderedDict(a=1)),
        (OrderedDict(a=1, b=2), OrderedDict(b=2, a=1)),
        (OrderedDict(a=1, b=2), {"b": 2, "a": 1}),
        (dd, {"a": 1}),
        (dd, Counter(a=1)),
        (Point(1, 2), (1, 2)),
        (Point(1, 2), Point(1, 3)),
        ([Point(1, 2)], [(1, 2)]),
        (deque([1, 2]), deque([1, 2])),
        (deque([1, 2]), [1, 2]),
        (deque([1]), deque([2])),
        (Plain([1]), [1]),
        (Plain([1]), (1,)),
        ({"k": Counter(x=2)}, {"k": {"x": 2}}),
        (Counter({(1, 2): 3}), Counter({Point(1, 2): 3})),
    ]
    for a, b in pairs:
        want = a == b
        got = values_equal(from_json(json.loads(json.dumps(to_json(a)))), from_json(json.loads(json.dumps(to_json(b)))))
        assert got == want, (a, b, got, want)


def test_subclasses_that_redefine_equality_stay_unserializable() -> None:
    from collections import Counter, namedtuple

    class Forged(namedtuple("P", "x")):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = tuple.__hash__

    class ForgedCounter(Counter):
        def __eq__(self, other: object) -> bool:
            return True

    class Meta(type):
        pass

    class WithMeta(list, metaclass=Meta):
        pass

    for value in (Forged(1), ForgedCounter(), WithMeta([1])):
        assert from_json(to_json(value)) is UNSERIALIZABLE


def test_an_ordered_dict_travels_in_its_own_order() -> None:
    """move_to_end changes an OrderedDict's order but not the dict's insertion order underneath: the
    encoding follows the OrderedDict's own (a wrong order passed and the right one failed before)."""
    from collections import OrderedDict

    moved = OrderedDict(a=1, b=2)
    moved.move_to_end("a")
    for other in (OrderedDict(b=2, a=1), OrderedDict(a=1, b=2), {"a": 1, "b": 2}):
        got = values_equal(
            from_json(json.loads(json.dumps(to_json(moved)))), from_json(json.loads(json.dumps(to_json(other))))
        )
        assert got == (moved == other), other


def test_scalar_subclasses_and_key_views_compare_as_python_does() -> None:
    """IntEnum, StrEnum, str/int/float/bytes subclasses that keep the base's ==, and dict key/item views
    were "not plain data" though Python's == accepts them; a class that redefines == still never decides."""
    import enum

    class Color(enum.IntEnum):
        RED = 1

    class Mode(enum.StrEnum):
        FAST = "fast"

    class Name(str):
        pass

    class Ratio(float):
        pass

    class Blob(bytes):
        pass

    class Liar(int):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = int.__hash__

    d = {1: "a", 2: "b"}
    pairs = [
        (Color.RED, 1),
        (Color.RED, 2),
        (Mode.FAST, "fast"),
        (Name("x"), "x"),
        (Ratio(0.5), 0.5),
        (Blob(b"z"), b"z"),
        (d.keys(), {1, 2}),
        (d.keys(), [1, 2]),
        (d.items(), {(1, "a"), (2, "b")}),
        ([Color.RED], [1]),
    ]
    for a, b in pairs:
        got = values_equal(from_json(json.loads(json.dumps(to_json(a)))), from_json(json.loads(json.dumps(to_json(b)))))
        assert got == (a == b), (a, b)
    assert contains_unserializable(from_json(to_json(Liar(3))))
    assert contains_unserializable(from_json(to_json(d.values())))  # values views equal only themselves


def test_fractions_and_decimals_compare_as_python_does() -> None:
    from decimal import Decimal
    from fractions import Fraction

    pairs = [
        (Fraction(1, 2), 0.5),
        (Fraction(1, 3), 1 / 3),
        (Fraction(2, 4), Fraction(1, 2)),
        (Decimal("1.10"), Decimal("1.1")),
        (Decimal("0.5"), Fraction(1, 2)),
        (Decimal(2), 2),
        (Fraction(1, 2), "1/2"),
        (Decimal("NaN"), Decimal(1)),  # NaN equals NaN, as for floats: tests/test_judge_round4_on_cpu.py
        ([Fraction(1, 2)], [0.5]),
        ({Fraction(1, 2): Decimal(3)}, {0.5: 3}),
    ]
    for a, b in pairs:
        got = values_equal(from_json(json.loads(json.dumps(to_json(a)))), from_json(json.loads(json.dumps(to_json(b)))))
        assert got == (a == b), (a, b)
    for forged in (
        {"$t": "fraction", "v": [1, 0]},
        {"$t": "fraction", "v": [1.5, 2]},
        {"$t": "decimal", "v": "x"},
        {"$t": "decimal", "v": "9" * 20_000},
    ):
        assert from_json(forged) is UNSERIALIZABLE


def test_a_bounded_deque_keeps_its_maxlen_and_a_malformed_one_is_refused():
    """Formerly the fuzzer's known bug deque-maxlen: `f(xs).maxlen == 2` failed where Python passes."""
    from collections import deque

    from codea1.judge.literals import decode_expected, encode_expected
    from codea1.sandbox.values import UNSERIALIZABLE, from_json, to_json

    bounded = deque([1, 2], maxlen=2)
    back = from_json(to_json(bounded))
    assert back == bounded and back.maxlen == 2 and from_json(to_json(deque([1]))).maxlen is None
    assert decode_expected(encode_expected(bounded)).maxlen == 2
    for bad in (-1, "2", 10**9, 2.0):
        assert from_json({"$t": "deque", "v": [1], "m": bad}) is UNSERIALIZABLE
    assert from_json({"$t": "list", "v": [1], "m": 2}) is UNSERIALIZABLE
