"""A standing fuzzer of the judge: codea1's verdicts against Python's own `assert`, and verdicts that do not
depend on their sibling tests.

1. Differential: honest programs and asserts from a grammar (tests/judge_fuzz_grammar.py: every plain value
   type and its edge values, comparisons, identity, membership, ordering, `and`/`or`/`if-else`, `not`, the
   walrus, comprehensions split per iteration or lifted whole, math.isclose and abs tolerances, with and
   without an entry point) are judged by `run_assertions` and by Python's `assert` in a plain subprocess.
   A test passes in codea1 exactly when it passes in Python, except for the documented deliberate
   differences (DELIBERATE) and the known bugs (KNOWN_BUGS); any other difference fails the test, which
   shows each such program and assert, judged again alone. Each known bug's minimal reproduction is a test
   marked xfail(strict=True): once the bug is fixed it XPASSes, and its entry must go.
2. Metamorphic: a test's verdict is the same alone, before and after a hostile sibling test of its case
   (one that rebinds builtins or globals, exits, prints, recurses or loops), and first and last in a case
   crowded with them.

Bounded and seeded (hypothesis, derandomized): every case of a part goes through one `run_assertions` call.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from judge_fuzz_grammar import HEADER, TEMPLATES, Case, program_case, python_verdicts, wired

from codea1.judge.oracle import AssertCase, run_assertions

UID_BASE = 1_702_400_000  # this file's own uid range
NOT_PLAIN = "not plain data"  # in codea1's reason for failing a test that reached a value that is not plain
PROGRAMS_PER_TEMPLATE = 4
TIMEOUT = 5.0  # seconds per call: honest calls take milliseconds, a loaded machine may stretch them


@pytest.fixture(scope="module")
def executor():
    from conftest import quiet_executor

    with quiet_executor(UID_BASE) as ex:
        yield ex


# ---------------------------------------------------------------------------- the cases
def generate(per_template: int) -> list[Case]:
    """`per_template` programs of every template with their asserts; the same ones on every run."""
    cases: list[Case] = []
    for template in TEMPLATES:

        @settings(
            max_examples=per_template,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(program_case(template))
        def collect(case: Case) -> None:
            cases.append(case)

        collect()
    return cases


def codea1_verdicts(executor, cases: list[Case]) -> list[list]:
    """codea1's CallResult of each assert of each case, the program being its own oracle."""
    jobs = [
        AssertCase(
            code=c.program, tests=[a for a, _ in c.asserts], entry_point=c.entry_point, oracle=c.program, id=f"fuzz{n}"
        )
        for n, c in enumerate(cases)
    ]
    return [res.results for res in run_assertions(executor, jobs, timeout=TIMEOUT)]


# ---------------------------------------------------------------------------- explained differences
@dataclass(frozen=True)
class Known:
    """A difference between codea1 and Python that is explained: deliberate (documented) or a known bug."""

    tag: str  # the grammar's tag on an assert that does what the difference is about
    why: str  # deliberate: the documentation line it comes from; a bug: what goes wrong
    codea1_passes: bool | None  # the direction of the difference (None: either)
    repro: tuple[str, str] | None = None  # a bug's minimal (function body, assert), entry point f
    wire: bool = False  # a difference of the value's trip out of the sandbox: Python on `wired` programs agrees
    error: str | None = None  # what codea1's verdict says, where the difference is that verdict


DELIBERATE = [
    Known(
        "identity",
        "codea1/judge/equality.py, holds(): `is`/`is not` are meaningful for None, True and False only (an "
        "identity claim about any other value is judged as equality of the same type, as CPython's small-int and "
        "string interning would make it unpredictable)",
        None,
    ),
    Known(
        "not-plain",
        "codea1/judge/oracle.py: only those calls run in the candidate's sandboxed child, and only their plain "
        "values come back (a value that is not plain data fails the test where the assert reaches it)",
        False,
        error=NOT_PLAIN,
    ),
    Known(
        "exec-module-value",
        "codea1/judge/asserts.py, names_defined(): The names a program binds at its top level (functions, "
        "classes, assignments, imports, ...): without an entry point, these are the candidate's functions; "
        "_Lifter: an attribute of the function under test is the candidate's, and a call that passes one as a "
        "value (`sorted(xs, key=f)`) is lifted whole. So without an entry point `decimal.Decimal` as a value, "
        "or `type(f(collections.deque([])))`, is computed in the candidate's child, and a class is not plain "
        "data (oracle.py)",
        False,
        error=NOT_PLAIN,
    ),
    Known(
        "base-type",
        "codea1/sandbox/values.py: A subclass of list, tuple, dict, set or frozenset that does not redefine `==` "
        "(namedtuple, defaultdict, ...) compares as its base type does, so it travels as that base type (and a "
        "bytearray as the bytes it holds: `_enc`)",
        None,
        wire=True,
    ),
]

# Bugs the fuzzer found. Each one's reproduction runs in test_known_fidelity_bug, marked xfail(strict): when
# the bug is fixed, that test XPASSes and fails, and its entry must go (the fuzzer then covers the case).
KNOWN_BUGS = [
    Known(
        "negative-nan",
        "a NaN's sign is lost on its way out of the candidate's child (every NaN travels as 'nan')",
        None,
        ("def f(a):\n    return -a\n", "assert math.copysign(1.0, f(float('nan'))) == -1.0"),
        wire=True,
    ),
    Known(
        "surrogate-pair",
        "a str holding two lone surrogates side by side ('\\ud800\\udfff') comes back from the candidate's "
        "child as the one astral character they encode",
        None,
        ("def f(a):\n    return a\n", "assert f('\\ud800\\udfff') == '\\ud800\\udfff'"),
        wire=True,
    ),
    Known(
        "nan-identity",
        "one NaN object at two places (math.nan, a value holding an argument twice) comes back as two NaN "
        "objects, so Python's container `==`, which takes an object as equal to itself, fails in the oracle",
        None,
        ("def f():\n    return [math.nan]\n", "assert f() == [math.nan]"),
        wire=True,
    ),
]


def _passes(status: str) -> bool:
    return status == "pass"


def explain(tags: frozenset[str], result, wire_passes: set[bool]) -> Known | None:
    """The deliberate difference or known bug that covers a test codea1 (`result`) and Python judge
    differently, if one does; `wire_passes`: Python's verdicts on the `wired` programs."""
    codea1_pass = _passes(result.status)
    for known in [*DELIBERATE, *KNOWN_BUGS]:
        if known.tag not in tags or (known.codea1_passes is not None and known.codea1_passes != codea1_pass):
            continue
        if known.wire and codea1_pass not in wire_passes:
            continue  # the value's trip alone does not make the difference
        if known.error is not None and known.error not in (result.error or ""):
            continue
        return known
    return None


def _shown(result) -> str:
    text = f"{result.status}"
    if result.error:
        text += f" ({result.error[:300]})"
    if result.value is not None:
        text += f", value {result.value!r:.300}"
    return text


# ---------------------------------------------------------------------------- 1. differential
KINDS = {  # what the values the programs return must hold, all of them together
    *("NoneType", "bool", "int", "float", "complex", "str", "bytes", "list", "tuple", "dict", "set", "frozenset"),
    *("Fraction", "Decimal", "Counter", "OrderedDict", "deque", "nan", "inf", "-0.0", "huge int", "astral str"),
}


def test_codea1_judges_generated_asserts_as_python_does(executor) -> None:
    cases = generate(PROGRAMS_PER_TEMPLATE)
    assert len(cases) == PROGRAMS_PER_TEMPLATE * len(TEMPLATES)
    assert KINDS <= set().union(*(c.kinds for c in cases))
    ours = codea1_verdicts(executor, cases)
    theirs = python_verdicts([(c.program, a) for c in cases for a, _ in c.asserts])
    verdicts: dict[str, int] = {}
    for python in theirs:
        verdicts[python.partition(":")[0]] = verdicts.get(python.partition(":")[0], 0) + 1
    flat = [
        (case, statement, tags, result)
        for case, results in zip(cases, ours, strict=True)
        for (statement, tags), result in zip(case.asserts, results, strict=True)
    ]
    differ = [
        (*row, python) for row, python in zip(flat, theirs, strict=True) if _passes(row[3].status) != _passes(python)
    ]
    wire = python_verdicts([(wired(case.program, too), s) for case, s, *_ in differ for too in (False, True)])

    explained: dict[str, int] = {}
    unexplained: list[tuple[Case, str, object, str]] = []
    for n, (case, statement, tags, result, python) in enumerate(differ):
        known = explain(tags, result, {_passes(w) for w in wire[2 * n : 2 * n + 2]})
        if known is None:
            unexplained.append((case, statement, result, python))
        else:
            explained[known.tag] = explained.get(known.tag, 0) + 1
    print(f"{sum(len(c.asserts) for c in cases)} asserts over {len(cases)} programs; Python: {verdicts}")
    print(f"differences explained: {explained}")
    assert min(verdicts.get("pass", 0), verdicts.get("fail", 0), verdicts.get("raise", 0)) > len(cases)

    report = []
    for case, statement, result, python in unexplained[:10]:  # each alone: the minimal program and assert
        alone = Case(case.template, case.program, case.entry_point, [(statement, frozenset())])
        [[ours_alone]] = codea1_verdicts(executor, [alone])
        [python_alone] = python_verdicts([(case.program, statement)])
        report.append(
            f"--- program (entry point {case.entry_point!r}):\n{case.program}--- assert:\n{statement}\n"
            f"codea1: {_shown(result)}; alone: {_shown(ours_alone)}\nPython: {python}; alone: {python_alone}\n"
        )
    assert not unexplained, f"{len(unexplained)} tests judged unlike Python:\n" + "\n".join(report)


@pytest.fixture(scope="module")
def known_bug_verdicts(executor) -> dict[str, tuple[str, str]]:
    """Each known bug's reproduction: (codea1's status, Python's verdict)."""
    cases = [Case(b.tag, HEADER + "\n" + b.repro[0], "f", [(b.repro[1], frozenset())]) for b in KNOWN_BUGS]
    ours = codea1_verdicts(executor, cases)
    theirs = python_verdicts([(c.program, c.asserts[0][0]) for c in cases])
    return {b.tag: (r[0].status, p) for b, r, p in zip(KNOWN_BUGS, ours, theirs, strict=True)}


@pytest.mark.parametrize(
    "bug", [pytest.param(b, id=b.tag, marks=pytest.mark.xfail(strict=True, reason=b.why)) for b in KNOWN_BUGS]
)
def test_known_fidelity_bug(known_bug_verdicts, bug: Known) -> None:
    ours, python = known_bug_verdicts[bug.tag]
    assert _passes(ours) == _passes(python), f"{bug.repro[1]}: codea1 {ours}, Python {python}"


# ---------------------------------------------------------------------------- 2. metamorphic
SUBJECT = "import math\n\ndef f(x):\n    return x + 2\n"
TARGETS = {  # a test of SUBJECT -> its verdict alone (every path: the parent, the oracle, split loops)
    "assert f(2) == 4": "pass",
    "assert f(2) == 5": "fail",
    "assert f(2) == int('4')": "pass",
    "assert f(2) == int('5')": "fail",
    "assert isinstance(f(2), int)": "pass",
    "assert isinstance(f(2), str)": "fail",
    "assert bool(f(-2))": "fail",
    "assert all(f(x) == x + 2 for x in range(3))": "pass",
    "assert any(f(x) == 0 for x in range(3))": "fail",
    "assert math.isclose(f(0.5), 2.5)": "pass",
    "assert abs(f(0.5) - 3) < 1e-09": "fail",
    "assert len(str(f(10))) == 3": "fail",
    "assert f(1) == 3 or f('a') == 3": "pass",
    "assert f('a') == 3 or f(1) == 3": "error",
}
SIBLINGS = {
    "an honest test": "assert f(0) == 2",
    "rebinds bool": "assert f(2) == 4 and not __import__('builtins').__setattr__('bool', lambda *a: True)",
    "rebinds isinstance": "assert not __import__('builtins').__setattr__('isinstance', lambda *a: True)",
    "rebinds int, len, abs, all and any": (
        "assert not [setattr(__import__('builtins'), n, lambda *a, **k: 4) for n in ('int', 'len', 'abs')] "
        "and not [setattr(__import__('builtins'), n, lambda *a: True) for n in ('all', 'any')]"
    ),
    "patches math.isclose": "assert not setattr(__import__('math'), 'isclose', lambda *a, **k: True)",
    "rebinds names in globals()": (
        "assert not globals().update(math=__import__('types').SimpleNamespace(isclose=lambda *a, **k: True), "
        "f=lambda x: 0, range=lambda n: [])"
    ),
    "rebinds f in the candidate's child": "assert f(globals().__setitem__('f', lambda x: 0) or 1) == 3",
    "rebinds isinstance in the candidate's child": (
        "assert f(__import__('builtins').__setattr__('isinstance', lambda *a: True) or 1) == 3"
    ),
    "raises SystemExit": "assert __import__('sys').exit(0)",
    "throws SystemExit from a generator": "assert (_ for _ in ()).throw(SystemExit(1))",
    "raises KeyboardInterrupt": "assert (_ for _ in ()).throw(KeyboardInterrupt)",
    "calls os._exit": "assert __import__('os')._exit(0)",
    "prints a lot": "assert print('x' * 1000000) is None",
    "writes to descriptors 1 and 2": (
        "assert __import__('os').write(1, b'x' * 100000) and __import__('os').write(2, b'y' * 100000)"
    ),
    "recurses without end": "assert (lambda g: g(g))(lambda g: g(g))",
    "loops forever": "assert all(iter(int, 1))",
}


SLOW_SIBLINGS = {"loops forever"}  # costs a time limit per case: left out of the crowded cases


@pytest.fixture(scope="module")
def beside_siblings(executor) -> tuple[list[str], dict[str, list[str]], list[list[str]]]:
    """Each target's status alone; with each sibling (the targets, the sibling, the targets again); and first
    and last in a case crowded with every sibling."""
    targets, siblings = list(TARGETS), list(SIBLINGS.values())
    crowd = [SIBLINGS[k] for k in SIBLINGS if k not in SLOW_SIBLINGS]

    def case(tests: list[str], name: str) -> AssertCase:
        return AssertCase(code=SUBJECT, tests=tests, entry_point="f", oracle=SUBJECT, id=name)

    alone = [case([t], f"alone{i}") for i, t in enumerate(targets)]
    beside = [case([*targets, s, *targets], f"beside{i}") for i, s in enumerate(siblings)]
    crowded = [case([t, *crowd, t], f"crowded{i}") for i, t in enumerate(targets)]
    results = run_assertions(executor, [*alone, *beside, *crowded], timeout=2.0)
    statuses = [[r.status for r in res.results] for res in results]
    n, m = len(alone), len(alone) + len(beside)
    return [s[0] for s in statuses[:n]], dict(zip(SIBLINGS, statuses[n:m], strict=True)), statuses[m:]


def test_each_target_alone_has_its_verdict(beside_siblings) -> None:
    alone, _, _ = beside_siblings
    assert dict(zip(TARGETS, alone, strict=True)) == TARGETS


def test_a_verdict_is_the_same_first_and_last_among_every_hostile_sibling(beside_siblings) -> None:
    _, _, crowded = beside_siblings
    changed = [
        f"{where} in the crowd: {target!r} is {got}, alone {want}"
        for (target, want), statuses in zip(TARGETS.items(), crowded, strict=True)
        for where, got in (("first", statuses[0]), ("last", statuses[-1]))
        if got != want
    ]
    assert not changed, "\n".join(changed)


@pytest.mark.parametrize("sibling", sorted(SIBLINGS))
def test_a_verdict_is_the_same_before_and_after_a_hostile_sibling(beside_siblings, sibling: str) -> None:
    _, beside, _ = beside_siblings
    statuses = beside[sibling]
    n = len(TARGETS)
    changed = [
        f"{where} the sibling: {target!r} is {got}, alone {want}"
        for where, part in (("before", statuses[:n]), ("after", statuses[n + 1 :]))
        for (target, want), got in zip(TARGETS.items(), part, strict=True)
        if got != want
    ]
    assert not changed, "\n".join(changed)


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("!=", "Decimal('sNaN')", "1"),  # Python raises InvalidOperation: the assert fails
        ("!=", "[Decimal('sNaN')]", "[1]"),
        ("!=", "[Decimal('sNaN')]", "['a']"),  # no number meets the NaN: unequal, passes
        ("!=", "{}", "Decimal('sNaN')"),
        ("not in", "Decimal('sNaN')", "[1]"),
        ("not in", "[1]", "{1, 2}"),  # an unhashable item in a set: TypeError
        ("not in", "[1]", "{1: 2}"),
        ("in", "97", "b'abc'"),  # an int in bytes: whether that byte is there
        ("in", "300", "b'abc'"),  # ValueError
        ("not in", "120", "b'abc'"),
    ],
)
def test_comparisons_fixed_after_the_fuzzer_found_them(op: str, value: str, expected: str) -> None:
    """Formerly known bugs snan, unhashable-member and int-in-bytes: holds() gives Python's verdict."""
    from decimal import Decimal

    from codea1.judge.equality import holds

    env = {"Decimal": Decimal}
    a, b = eval(value, env), eval(expected, env)
    try:
        python = bool(eval(f"a {op} b", {"a": a, "b": b}))
    except Exception:  # noqa: BLE001  (a comparison that raises fails its assert)
        python = False
    assert holds(op, a, b) is python
