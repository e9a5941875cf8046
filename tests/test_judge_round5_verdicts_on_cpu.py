"""Round 5 of the verdicts that hold: a test cannot change a later test's verdict through the oracle's child,
GT and a candidate run under one statefulness rule, one digest decision covers both sides of a large value,
NaN-holding set members are paired in linear time, and generator expressions keep Python's short-circuits.
"""

from __future__ import annotations

import pytest

from codea1.config import GameConfig
from codea1.game import play_question
from codea1.judge import encode_expected
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.problem import Problem

UID_BASE = 1_701_800_000  # this file's own uid range


@pytest.fixture(scope="module")
def executor():
    from conftest import quiet_executor

    with quiet_executor(UID_BASE) as ex:
        yield ex


def _block(*lines: str) -> str:
    return "```python\n" + "\n".join(lines) + "\n```"


# ---------------------------------------------------------------- 1. each test alone in the oracle
PLUS_TWO = "def f(x):\n    return x + 2\n"
WRONG_AFTER = [
    "assert f(2) == int('5')",
    "assert f(3) == int('6')",
    "assert f(0) == abs(-1)",
    "assert f(1) == int('2')",
]
REBINDERS = {
    "import builtins": "assert f(2) == 4 and not __import__('builtins').__setattr__('bool', lambda x: True)",
    "__builtins__": "assert f(2) == 4 and not setattr(__builtins__, 'bool', lambda *a: True)",
}


def _validity(executor, tests: list[str]) -> list[bool]:
    from codea1.data.ult import UltFunction
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="plus-two", func_name="f", code=PLUS_TWO)
    _, [record] = score_tests([fn], {"plus-two": tests}, executor, k=len(tests), mutation=False, coverage=False)
    return record.valid


@pytest.mark.parametrize("how", sorted(REBINDERS))
def test_a_test_that_rebinds_bool_leaves_later_wrong_tests_invalid(executor, how: str) -> None:
    # the first test holds on GT and rebinds `bool`, through which the oracle read every later test's truth:
    # the four wrong tests after it were valid (pass@5 100 where it is 20)
    assert _validity(executor, [REBINDERS[how], *WRONG_AFTER]) == [True, False, False, False, False]


def test_a_test_that_rebinds_the_lazy_values_helper_leaves_later_wrong_tests_invalid(executor) -> None:
    # the first test finds the oracle's helper for calls that did not return through globals() and makes
    # it answer 3 for them: GT raises on f('x'), so each test after it is wrong
    rebind = (
        "assert f(2) == 4 and all(globals().__setitem__(k, lambda v, failed: [3 if i in failed else x "
        "for i, x in enumerate(v)]) is None for k in list(globals()) if k.startswith('__codea1_lazy'))"
    )
    wrong = [
        "assert f(2) == 4 and f('x') == 3",
        "assert f(1) == 3 and f('y') == 3",
        "assert f(0) == 2 and f(None) == 3",
        "assert f(5) == 7 and f([]) == 3",
    ]
    assert _validity(executor, [rebind, *wrong]) == [True, False, False, False, False]


def test_a_tests_argument_that_rebinds_the_function_leaves_later_wrong_tests_invalid(executor) -> None:
    # the first test's argument runs in the child that runs GT's program (where GT's validity is decided)
    # and puts a function that answers 9 in GT's place: the wrong tests after it were valid
    rebind = "assert f((globals().__setitem__('f', lambda x: 9), 2)[1]) == 4"
    wrong = ["assert f(1) == 9", "assert f(2) == 9", "assert f(3) == 9", "assert f(4) == 9"]
    assert _validity(executor, [rebind, *wrong]) == [True, False, False, False, False]


def test_each_test_sees_the_oracle_program_as_it_was_defined(executor) -> None:
    # a test that changes the oracle program's own names (GT's constant) changes no later test's verdict;
    # the same tests in the other order hold alike
    gt = "SCALE = 2\ndef f(x):\n    return SCALE * x\n"
    tests = [
        "assert f(3) == SCALE * 3 and not globals().__setitem__('SCALE', 5)",
        "assert f(4) == SCALE * 4",
        "assert f(4) != SCALE * 4 - 0",
    ]
    for order in (tests, tests[::-1]):
        [res] = run_assertions(executor, [AssertCase(code=gt, tests=order, entry_point="f", oracle=gt)])
        statuses = dict(zip(order, [r.status for r in res.results], strict=True))
        assert [statuses[t] for t in tests] == ["pass", "pass", "fail"]


# ---------------------------------------------------------------- 2. GT and candidates: clean per call
STATEFUL = {
    "mutable default": "def f(x, _c=[]):\n    _c.append(x)\n    return len(_c)\n",
    "global counter": "N = 0\n\ndef f(x):\n    global N\n    N += 1\n    return N\n",
    "cache of the first answer": "_seen = {}\n\ndef f(x):\n    _seen.setdefault('first', x)\n    return _seen['first'] == x\n",
}


@pytest.mark.parametrize("kind", sorted(STATEFUL))
def test_a_stateful_gt_and_its_identical_candidate_agree_on_every_test(executor, kind: str) -> None:
    from codea1.game.mistake_book import StoredTest

    gt = STATEFUL[kind]
    problem = Problem(id=f"r5/{kind}", prompt="def f(x):", description="d", entry_point="f", gt_solution=gt)
    suites = [_block("assert f(1) == 1", "assert f(2) == 1", "assert f(3) == 1"), _block("assert f(4) == 1")]
    clean = 1 if kind != "cache of the first answer" else True
    book = [StoredTest(call="f(9)", expected_json=encode_expected(clean))]
    wrong = "```python\ndef f(x):\n    return 7\n```"
    result = play_question(problem, [f"```python\n{gt}\n```", wrong], [suites, suites], executor, book, GameConfig())
    assert [s.valid_tests for s in result.checked[0]] == [3, 1]
    assert result.codes[0].code_reward == 1.0 and result.codes[0].hist_pass == 1.0
    assert result.codes[1].code_reward == 0.0  # a wrong candidate still fails them
    # no test enters the Mistake Book for the GT-identical code: only the wrong one's failures do
    assert len(result.updates.failed) == 4 and len(result.updates.passed) == 1


def test_a_program_that_may_keep_state_is_read_from_its_text() -> None:
    from codea1.game.statefulness import may_keep_state

    keeps = [
        *STATEFUL.values(),
        "from functools import lru_cache\n@lru_cache(None)\ndef f(x):\n    return x\n",
        "import random\ndef f(x):\n    return random.randint(0, x)\n",
        "import numpy as np\ndef f(x):\n    return np.random.rand()\n",
        (
            "class S:\n    seen = []\n    def add(self, x):\n        self.seen.append(x)\n        return len(self.seen)\n"
            "def f(x):\n    return S().add(x)\n"
        ),
        "def make():\n    n = [0]\n    def f(x):\n        n[0] += 1\n        return n[0]\n    return f\nf = make()\n",
        "def f(x):\n    f.calls = getattr(f, 'calls', 0) + 1\n    return f.calls\n",
        "def f(x):\n    globals()['y'] = x\n    return x\n",
    ]
    keeps_nothing = [
        PLUS_TWO,
        "import random\nMOD = 10 ** 9 + 7\nINF = float('inf')\ndef f(x, k=(1, 2)):\n    return x % MOD\n",
        (
            "def f(n):\n    memo = {}\n    def go(i):\n        if i < 2:\n            return i\n"
            "        if i not in memo:\n            memo[i] = go(i - 1) + go(i - 2)\n        return memo[i]\n    return go(n)\n"
        ),
        (
            "from functools import lru_cache\ndef f(n):\n    @lru_cache(None)\n    def go(i):\n        return i\n"
            "    return go(n)\n"
        ),
        (
            "class Solution:\n    def run(self, x):\n        self.x = x\n        return self.x\ndef f(x):\n"
            "    return Solution().run(x)\n"
        ),
        "def f(:\n",
    ]
    assert [may_keep_state(code, "f") for code in keeps] == [True] * len(keeps)
    assert [may_keep_state(code, "f") for code in keeps_nothing] == [False] * len(keeps_nothing)


# ---------------------------------------------------------------- 3. one digest decision for both sides
def _evalplus_problem(pid: str, gt_body: str, n: int, imports: str = "") -> Problem:
    from codea1.data.benchmarks import EVALPLUS_HELPERS

    gt = f"{imports}def f(n):\n    return {gt_body}\n"
    test_code = EVALPLUS_HELPERS + (
        f"\n{imports}def ref_func(n):\n    return {gt_body}\n\n"
        f"def check(candidate):\n    inputs = [[{n}]]\n"
        "    for i, inp in enumerate(inputs):\n        assertion(candidate(*inp), ref_func(*inp), 0)\n"
    )
    return Problem(pid, "p", "d", "f", gt, test_code=test_code, source="humanevalplus")


def test_large_values_are_digested_or_not_on_both_sides_alike(executor) -> None:
    """GT's 60,000 large ints are over the size past which a value travels as a digest; the candidate's
    equal floats were under it, so they went whole and never equalled GT's digest. A Fraction list over
    90,000 items went as digests of each item's repr, so an equal list with ints for the whole values
    failed (it passed under 90,000 items); so did Decimals written with another exponent."""
    from codea1.eval.code_eval import evaluate_samples

    n, big = 91_000, 60_000
    frac, dec = "from fractions import Fraction\n", "from decimal import Decimal\n"
    problems = [
        _evalplus_problem("r5/ints", "[2 ** 40 + i for i in range(n)]", big),
        _evalplus_problem("r5/fractions", "[Fraction(i, 2) for i in range(n)]", n, frac),
        _evalplus_problem("r5/decimals", "[Decimal(i) / 2 for i in range(n)]", n, dec),
    ]
    samples = [
        ("r5/ints", "def f(n):\n    return [float(2 ** 40 + i) for i in range(n)]\n"),
        ("r5/ints", "def f(n):\n    return [float(2 ** 40 + i + (i == 7)) for i in range(n)]\n"),
        ("r5/fractions", f"{frac}def f(n):\n    return [i // 2 if i % 2 == 0 else Fraction(i, 2) for i in range(n)]\n"),
        ("r5/fractions", f"{frac}def f(n):\n    return [Fraction(i + (i == n - 1), 2) for i in range(n)]\n"),
        ("r5/decimals", f"{dec}def f(n):\n    return [(Decimal(i) / 2).quantize(Decimal('0.01')) for i in range(n)]\n"),
        ("r5/decimals", f"{dec}def f(n):\n    return [Decimal(i + (i == 3)) / 2 for i in range(n)]\n"),
    ]
    _, results, tasks = evaluate_samples(problems, samples, executor, ks=[1])
    assert [t.excluded for t in tasks] == [False, False, False], [t.reason for t in tasks]
    assert [r.passed for r in results] == [True, False, True, False, True, False]


def test_the_digest_reads_equal_numbers_alike() -> None:
    from decimal import Decimal
    from fractions import Fraction

    from codea1.judge.equality import values_equal
    from codea1.judge.formats.spec import PLAIN_HELPER

    ns: dict = {}
    exec(PLAIN_HELPER, ns)  # noqa: S102  (the helper every candidate program carries)

    def digest(value):
        return ns["__codea1_plain"](value, digest=True)

    same = [
        ([1, 2.0, True], [1.0, Fraction(2), Decimal("1.000")]),
        ([0.5, Decimal("0.25")], [Fraction(1, 2), 0.25]),
        ({1: "a", 2.5: None}, {Fraction(5, 2): None, Decimal(1): "a"}),
        ({0.1}, {Fraction(0.1)}),
        ([complex(1, 0), complex(0.5, 2)], [1, complex(Fraction(1, 2), 2)]),
        ([float("nan"), float("inf")], [float("nan"), Decimal("Infinity")]),
    ]
    for a, b in same:
        assert values_equal(a, b) and digest(a) == digest(b), (a, b)
    differ = [([1], (1,)), ([0.1], [Decimal("0.1")]), (["1"], [1]), ([Fraction(1, 3)], [1 / 3])]
    for a, b in differ:
        assert a != b and digest(a) != digest(b), (a, b)


# ---------------------------------------------------------------- 4. NaN-holding members in linear time
def _counted_comparisons(monkeypatch, n: int) -> int:
    from codea1.judge import equality

    calls = [0]
    for name in ("_eq", "_member_key"):
        real = getattr(equality, name, None)
        if real is None:
            continue

        def counting(*args, _real=real, **kwargs):
            calls[0] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(equality, name, counting)
    nan = float("nan")
    a = {(nan, i) for i in range(n)} | {float("nan") for _ in range(3)}
    b = {(float("nan"), i) for i in reversed(range(n))} | {float("nan") for _ in range(3)}
    assert equality.values_equal(a, b)
    monkeypatch.undo()
    b.discard(next(x for x in b if type(x) is tuple and x[1] == 0))
    assert not equality.values_equal(a, b | {(nan, -1)})
    return calls[0]


def test_nan_holding_members_are_paired_in_linear_time(monkeypatch) -> None:
    """Each member that hash lookup cannot find was compared with the other side's leftovers one by one:
    quadratic (52 s per comparison at the largest value allowed). The comparisons now grow as n."""
    counts = [_counted_comparisons(monkeypatch, n) for n in (500, 1000, 2000)]
    assert counts[0] > 0
    assert counts[1] <= 2.2 * counts[0] and counts[2] <= 4.4 * counts[0], counts


def test_nan_holding_members_pair_as_before() -> None:
    from decimal import Decimal

    from codea1.judge.equality import values_equal

    nan = float("nan")
    assert values_equal({nan, (nan, 1)}, {float("nan"), (float("nan"), 1.0)})
    assert values_equal({nan}, {complex(nan, 0)}) and not values_equal({nan}, {Decimal("NaN")})
    assert values_equal({Decimal("NaN"), 2}, {Decimal("-NaN"), 2.0}) and not values_equal({nan, 1}, {nan, 2})
    assert values_equal({frozenset({nan, 1})}, {frozenset({1, float("nan")})})
    assert not values_equal({frozenset({nan, float("nan")})}, {frozenset({float("nan"), 3})})
    assert values_equal({(nan, 1): "a", (nan, 2): "b"}, {(nan, 2): "b", (nan, 1): "a"})
    assert not values_equal({nan: 1, (nan,): 2}, {nan: 2, (nan,): 1})
    assert not values_equal({nan, (nan,)}, {(nan,), (nan, nan)})


# ---------------------------------------------------------------- 5. short-circuits in comprehensions
RAISES_BELOW_ZERO = "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return 2\n"


def test_any_and_all_over_a_generator_stop_where_python_stops(executor) -> None:
    tests = [
        "assert any(f(x) == 2 for x in [1, -1])",  # Python stops at the first true value
        "assert not all(f(x) == 3 for x in [1, -1])",  # ... and at the first false one
        "assert any(f(x) == 3 for x in [1, -1])",  # reaches f(-1): its error
        "assert all(f(x) == 2 for x in [1, -1])",
        "assert [f(x) for x in [1, -1]][0] == 2",  # a list is built whole: f(-1) raises
        "assert next(f(x) for x in [1, -1]) == 2",
        "assert all(f(x) == 2 for x in range(300))",
    ]
    [res] = run_assertions(executor, [AssertCase(code=RAISES_BELOW_ZERO, tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["pass", "pass", "error", "error", "error", "pass", "pass"]
    assert "negative" in res.results[2].error
    namespace: dict = {}
    exec(RAISES_BELOW_ZERO, namespace)  # noqa: S102  (Python's own verdicts, for the record)
    exec(tests[0] + "\n" + tests[1] + "\n" + tests[5], namespace)  # noqa: S102


def test_an_iteration_python_never_reaches_may_loop_forever(executor) -> None:
    loops = "def f(x):\n    while x == 0:\n        pass\n    return x\n"
    tests = ["assert any(f(x) == 1 for x in [1, 0])", "assert all(f(x) == 1 for x in [1, 0])"]
    [res] = run_assertions(executor, [AssertCase(code=loops, tests=tests, entry_point="f")], timeout=0.5)
    assert [r.status for r in res.results] == ["pass", "timeout"]


def test_only_a_template_that_changes_nothing_shares_the_oracles_process() -> None:
    """A template runs in the oracle's own child only when it reads nothing but its values, names it binds
    (in Python's scopes: a loop name does not reach past its loop) and computing builtins."""
    from codea1.judge.asserts import changes_nothing

    shares = [
        "list(__codea1_v[0]) == [(0, 3, 3)]",
        "math.isclose(__codea1_v[0], 2) and __codea1_v[1].upper() == 'X'",
        "sorted(__codea1_v[0], key=lambda p: -p) == [2, 1]",
        (
            "all((__codea1_row[0] == x for __codea1_rows in [iter(__codea1_v[0])] for x in range(3) "
            "for __codea1_row in [next(__codea1_rows)]))"
        ),
        "(n := len(__codea1_v[0])) > 2 and n < 9",
    ]
    alone = [
        "__codea1_v[0] == 4 and not __import__('builtins').__setattr__('bool', lambda x: True)",
        "__codea1_v[0] == SCALE * 4",  # a name of the oracle program: maybe a function with state
        "[1 for math.pi in [3]]",  # a loop target is a store
        "[0 for setattr in [1]] and setattr(math, 'pi', 3)",  # the loop name ends with its loop
        "[0 for setattr in setattr(math, 'pi', 3)]",  # the first iterable is read outside the loop
        "(lambda: (setattr := 1))() or setattr(math, 'pi', 2)",
        "__codea1_v[0].append(1) or (x for x in []).gi_frame",
        "'{0.__class__}'.format(1)",
    ]
    assert [changes_nothing(t) for t in shares] == [True] * len(shares)
    assert [changes_nothing(t) for t in alone] == [False] * len(alone)
