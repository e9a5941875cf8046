"""codea1.judge.oracle: what a test means, for golden tests (Python's assert) and for the game's predictions."""

import math

import pytest

from codea1.judge.asserts import read_assertion
from codea1.judge.equality import holds, prediction_right
from codea1.judge.literals import literal, plain_source
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.sandbox import LocalExecutor

UID_BASE = 1_700_500_000  # this file's own uid range


@pytest.fixture(scope="module")
def ex():
    with LocalExecutor(2, uid_base=UID_BASE) as executor:
        yield executor


def test_prediction_modes():
    # reference: every comparison is read as `==` against GT's value (the authors' reward code)
    assert prediction_right("==", 3, 3) and prediction_right("!=", 3, 3)
    assert not prediction_right("!=", 5, 3)  # `f(x) != 5` with GT 3: a wrong prediction there
    assert not prediction_right("in", [8, 9], 8)  # 8 == [8, 9] is False
    # strict: only an `==`/`is` claim can be right
    assert prediction_right("==", 3, 3, "strict") and prediction_right("is", None, None, "strict")
    assert not prediction_right("!=", 3, 3, "strict") and not prediction_right("<", 3, 3, "strict")
    # NaN equals NaN, deliberately; a tolerance is optional
    assert prediction_right("==", math.nan, math.nan)
    assert not prediction_right("==", 0.3, 0.1 + 0.2) and prediction_right("==", 0.3, 0.1 + 0.2, float_tol=1e-9)


def test_holds_is_total_and_pythonic_on_plain_values():
    assert holds("==", 1, 1.0) and holds("!=", [1], (1,)) and holds("<", 1, 2) and not holds(">=", 1, 2)
    assert holds("in", "bc", "abcd") and not holds("in", 1, "abc")  # a TypeError is a failed test
    assert holds("in", 2, [1, 2]) and holds("not in", 3, {1: 2}) and holds("has", [1, 2], 2)
    assert holds("is", None, None) and not holds("is", 0, False) and holds("is not", 0, None)
    assert holds("truth", [0]) and not holds("truth", "")
    assert not holds("==", 10**400, 1j)  # raised OverflowError before
    assert not holds("<", 1, "a") and not holds("<", [1], [None])


def test_literal_and_plain_source_round_trip():
    value = {1: (1,), "s": {2.5, -0.0}, b"k": [None, True, complex(1, -2)], "f": frozenset({3})}
    assert eval(plain_source(value)) == value
    assert literal(plain_source([1, (2,), {"a": {3}}])) == (True, [1, (2,), {"a": {3}}])
    assert eval(plain_source([math.inf, -math.inf]))[0] == math.inf
    assert math.isnan(eval(plain_source(math.nan)))
    assert literal("max([1])") == (False, None) and literal("[1, 2") == (False, None)
    from collections import Counter, OrderedDict, deque

    for value in (Counter("abca"), OrderedDict([(2, "b"), (1, "a")]), deque([1, (2,)])):
        back = eval(plain_source(value))
        assert type(back) is type(value) and back == value and list(back) == list(value)


def test_read_assertion_lifts_only_calls_of_the_function_under_test():
    a = read_assertion("assert abs(f(1.0) - 3) < 1e-6", "f")
    assert a.calls == ["f(1.0)"] and a.template == "abs(__codea1_v[0] - 3) < 1e-06" and a.fast is None
    assert read_assertion("assert 3 == f(1)", "f").fast == ("==", 3)
    assert read_assertion("assert 3 < f(1)", "f").fast == (">", 3)
    assert read_assertion("assert 3 in f(1)", "f").fast == ("has", 3)
    assert read_assertion("assert f(1)", "f").fast == ("truth", None)
    assert read_assertion("assert f(3) == f(2) + 1", "f").calls == ["f(3)", "f(2)"]
    # in a one-`for` comprehension only the element's calls run in the candidate, once per iteration, on
    # the arguments the oracle computed for each iteration
    gen = read_assertion("assert all(f(x) == x for x in range(3))", "f")
    each = "[(f(*__codea1_a0, **__codea1_k0),) for (__codea1_a0, __codea1_k0), in __codea1_pre]"
    assert gen.calls == [each] and gen.pre == {0: "[(((x,), {}),) for x in range(3)]"}
    assert gen.template == (
        "all((__codea1_row[0] == x for __codea1_rows in [iter(__codea1_v[0])] "
        "for x in range(3) for __codea1_row in [next(__codea1_rows)]))"
    )
    # two `for`s: split per iteration too, the rows of both loops computed by the oracle
    two = read_assertion("assert [f(x, y) for x in [1] for y in [2]] == [3]", "f")
    assert two.calls == [each]
    assert two.pre == {0: "[(((x, y), {}),) for x in [1] for y in [2]]"}
    # an iterable that calls the function: lifted whole (see the module's limits)
    assert read_assertion("assert [y for x in [1] for y in f(x)] == [3]", "f").calls == [
        "[y for x in [1] for y in f(x)]"
    ]
    assert read_assertion("assert len([1, 2]) == 2", "f").calls == []
    assert read_assertion("x = 1", "f") is None and read_assertion("assert (", "f") is None
    # without an entry point the left side of the comparison is what the candidate computes
    assert read_assertion("assert g(2)[0] != 5").calls == ["g(2)[0]"]


def test_run_assertions_decides_outside_the_candidate(ex):
    code = "def add(a, b):\n    return a + b\n"
    tests = [
        "assert add(1, 2) == 3",
        "assert add(1, 2) == 4",
        "assert add(2, 2) == int('4')",
        "assert add(0.5, 0.25) == math.sqrt(0.5625)",
        "x = 1",
        "assert add(1, 1) != 3",
        "assert add(None, 1) == 2",
        "assert add(1, 2) == add(1, 2)",
        "assert add(1, 1) == undefined",
        "assert abs(add(0.1, 0.2) - 0.3) < 1e-9",
        "assert add(2, 3) in [5, 6]",
        "assert 5 > add(1, 1) > 1",
        "assert all(add(i, 0) == i for i in range(3))",
        "assert add(1, 1)",
    ]
    [res] = run_assertions(ex, [AssertCase(code, tests, entry_point="add")], timeout=1.0)
    assert res.defined
    assert [r.status for r in res.results] == [
        "pass",
        "fail",
        "pass",
        "pass",
        "invalid",
        "pass",
        "error",
        "pass",
        "fail",
        "pass",
        "pass",
        "pass",
        "pass",
        "pass",
    ]
    assert "undefined" in res.results[8].error


def test_stdlib_containers_reach_the_oracle_child(ex):
    code = "from collections import Counter\ndef f(s):\n    return Counter(s)\n"
    tests = ["assert f('abca')['a'] == 2", "assert f('ab') == {'a': 1, 'b': 1}", "assert 'c' in f('abc')"]
    [res] = run_assertions(ex, [AssertCase(code, tests, entry_point="f")])
    assert [r.status for r in res.results] == ["pass", "pass", "pass"]


def test_run_assertions_cannot_be_forged(ex):
    forged = (
        "class Yes:\n    def __eq__(self, o): return True\n    def __ne__(self, o): return False\n"
        "    def __lt__(self, o): return True\n    def __sub__(self, o): return 0\n"
        "    def __bool__(self): return True\n"
        "def f(x):\n    return Yes()\n"
    )
    tests = [
        "assert f(1) == 2",
        "assert f(1) != 2",
        "assert abs(f(1) - 3) < 1e-6",
        "assert f(1)",
        "assert f(1) < 0",
        "assert all(f(x) == x for x in range(3))",
        "assert {x: f(x) == 0 for x in range(2)} == {0: True, 1: True}",
    ]
    [res] = run_assertions(ex, [AssertCase(forged, tests, entry_point="f")])
    assert [r.status for r in res.results] == ["fail"] * len(tests)
    assert "not plain data" in res.results[0].error


def test_run_assertions_uses_the_oracle_program_and_reports_undefined_code(ex):
    gt = "def f(x):\n    return x * 2\nSCALE = 2\n"
    case = AssertCase(
        "def f(x):\n    return x + x\n",
        ["assert f(3) == f(2) + 2", "assert f(4) == SCALE * 4"],
        entry_point="f",
        oracle=gt,
    )
    broken = AssertCase("def f(:", ["assert f() == 1"], entry_point="f", id="bad")
    plain = AssertCase("def g(): return 1", ["assert g() == 1"], id="good")
    out = run_assertions(ex, [case, broken, plain])
    assert [r.status for r in out[0].results] == ["pass", "pass"]  # SCALE comes from GT's program
    assert not out[1].defined and out[1].results[0].status == "invalid" and out[1].id == "bad"
    assert out[2].results[0].status == "pass" and out[2].id == "good"


def test_an_assert_python_would_not_run_is_invalid_not_always_true(ex):
    """`yield` in an assert: the parser takes it, Python's compiler refuses it at module level, and inside
    the checking lambda it made a generator function, whose result is truthy: a constant program passed."""
    tests = [
        "assert f(1) == 5 and (yield)",
        "assert f(1) == 5 or (yield from [1])",
        "assert [(yield) for _ in f(1)]",
        "assert f(1) == 5",
    ]
    [res] = run_assertions(ex, [AssertCase(code="def f(x):\n    return 0\n", tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["invalid", "invalid", "invalid", "fail"]
    assert read_assertion("assert f(1) == (await g())", "f") is None


def test_the_function_used_as_a_value_is_the_candidates(ex):
    """`list(map(f, xs))`, `sorted(xs, key=f)`: f passed as a value, not called, used to stay in the
    template and fail with NameError outside the candidate; the call that uses it runs in the candidate."""
    assert read_assertion("assert list(map(f, [1, 2])) == [2, 4]", "f").calls == ["list(map(f, [1, 2]))"]
    assert read_assertion("assert sorted([3, 1], key=f) == [3, 1]", "f").calls == ["sorted([3, 1], key=f)"]
    tests = [
        "assert list(map(f, [1, 2])) == [-1, -2]",
        "assert sorted([3, 1, 2], key=f) == [3, 2, 1]",
        "assert len(list(filter(f, [0, 1, 2]))) == 2",
        "assert list(map(f, [1])) == [1]",
    ]
    [res] = run_assertions(ex, [AssertCase(code="def f(x):\n    return -x\n", tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["pass", "pass", "pass", "fail"]


def test_big_ints_reach_the_oracle(ex):
    """An expected value beyond Python's 4,300-digit repr limit is written in hex for the oracle (it could
    not be passed before: a correct candidate failed)."""
    big = 7**9000
    assert eval(plain_source(big)) == big and eval(plain_source(-big)) == -big
    tests = ["assert f(9000) == 7 ** 9000 and f(1) == 7", "assert f(9000) - 1 == 7 ** 9000"]
    [res] = run_assertions(ex, [AssertCase(code="def f(n):\n    return 7 ** n\n", tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["pass", "fail"]


def test_the_candidate_never_sees_the_expected_value_of_a_loop(ex):
    """`all(f(x) == y for x, y in CASES)`: the loop ran in the candidate's frame, and sys._getframe(1)
    read y there (a forged pass). The oracle now computes the rows of the names the calls use (x alone)
    and the candidate loops over those plain values."""
    thief = (
        "import sys\n"
        "def f(x):\n"
        "    for depth in range(1, 6):\n"
        "        try:\n"
        "            loc = sys._getframe(depth).f_locals\n"
        "        except ValueError:\n"
        "            break\n"
        "        for name, value in loc.items():\n"
        "            if name not in ('x', 'depth', 'loc') and isinstance(value, int) and value != x:\n"
        "                return value\n"
        "    return -1\n"
    )
    tests = [
        "assert all(f(x) == y for x, y in [(1, 10), (2, 20)])",
        "assert {x: f(x) for x, y in [(1, 10)] if y > 5} == {1: 10}",
        "assert all(f(x) == y for x, y in undefined_cases)",
    ]
    [res] = run_assertions(ex, [AssertCase(code=thief, tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["fail", "fail", "fail"]
    honest = "def f(x):\n    return 10 * x\n"
    [ok] = run_assertions(ex, [AssertCase(code=honest, tests=tests[:2], entry_point="f")])
    assert [r.status for r in ok.results] == ["pass", "pass"]


def test_a_comparison_inside_a_two_for_comprehension_is_not_the_candidates(ex):
    """`all(f(a, b) == a + b for a in .. for b in ..)` ran whole in the candidate's child: an object whose
    `==` is always true made it pass. Now each iteration's value comes back as plain data, the oracle
    compares, and the candidate never sees a + b."""
    forger = "class Yes:\n    def __eq__(self, other):\n        return True\ndef f(a, b):\n    return Yes()\n"
    tests = [
        "assert all(f(a, b) == a + b for a in range(2) for b in range(3))",
        "assert [f(a, b) for a in [1, 2] for b in [a, a + 1]] == [2, 3, 4, 5]",
        "assert {(a, b): f(a, b) for a in [1] for b in [2] if a < b} == {(1, 2): 3}",
    ]
    [res] = run_assertions(ex, [AssertCase(code=forger, tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["fail", "fail", "fail"]
    honest = "def f(a, b):\n    return a + b\n"
    [ok] = run_assertions(ex, [AssertCase(code=honest, tests=tests, entry_point="f")])
    assert [r.status for r in ok.results] == ["pass", "pass", "pass"]
    wrong = "def f(a, b):\n    return a * b\n"
    [bad] = run_assertions(ex, [AssertCase(code=wrong, tests=tests, entry_point="f")])
    assert [r.status for r in bad.results] == ["fail", "fail", "fail"]


def test_a_fraction_returned_by_the_candidate_is_judged_as_python_would(ex):
    code = "from fractions import Fraction\ndef f(n):\n    return Fraction(1, n)\n"
    tests = ["assert f(2) == Fraction(1, 2)", "assert f(4) == 0.25", "assert f(3) == Fraction(1, 4)"]
    [res] = run_assertions(
        ex, [AssertCase(code=code, tests=tests, entry_point="f", oracle="from fractions import Fraction")]
    )
    assert [r.status for r in res.results] == ["pass", "pass", "fail"]


def test_a_literal_of_colliding_hashes_is_refused_before_any_set_is_built(monkeypatch):
    """`{k * (2**61 - 1) + 7 for k ...}` written out: every int has one hash, so building the set is
    quadratic (20,000 of them: 2.2 s in the parent). literal() refuses it from the parsed tree, without
    handing it to ast.literal_eval; honest displays are still literals."""
    import ast as ast_module

    from codea1.judge.literals import literal

    built = []
    real = ast_module.literal_eval
    monkeypatch.setattr(ast_module, "literal_eval", lambda node: built.append(1) or real(node))
    m = (1 << 61) - 1
    flood = "{" + ", ".join(str(k * m + 7) for k in range(1, 200)) + "}"
    assert literal(flood) == (False, None) and built == []
    assert literal("{" + ", ".join(f"{k * m + 7}: 0" for k in range(1, 200)) + "}") == (False, None)
    assert built == []
    assert literal(str(set(range(500)))) == (True, set(range(500))) and built == [1]
