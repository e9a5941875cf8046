"""What a test means: the one place that reads an assert, evaluates its EXPECTED side and decides a verdict.

Two questions are asked of tests in codea1, and this module owns the answer to both:

1. *Does a candidate pass a human test?* (golden tests in `codea1 data check`, the Golden-Tests baseline,
   `codea1 exec`, test evaluation). A test is any `assert EXPR` statement and it means what Python's
   `assert` means. To keep the verdict out of the candidate's hands, the calls of the function under test
   are cut out of EXPR (`lift_calls`): only those calls run in the candidate's sandboxed child, and only
   their plain values come back (a value that is not plain data fails the test). The rest of EXPR is then
   decided without the candidate's code: in this process when it is `VALUE <op> LITERAL` (or the bare
   value's truth), else in a child that runs the oracle program (GT's program, or a clean prelude) with
   the candidate's values pasted in as literals (`run_assertions`).

2. *Did the Test LLM predict GT's output?* (the Code-A1 game). There a test is kept as (CALL, GT's value)
   and a candidate passes it when its value equals GT's (`values_equal`). Whether the model's own EXPECTED
   was a right prediction is `prediction_right`, in one of two modes (docs/algorithm.md):
   "reference" reads every comparison as `==`, as the authors' reward code does; "strict" counts only an
   `==`/`is` claim that equals GT's value.

Limit: a comprehension with several `for`s, or whose iterable or condition calls the function, and a
lambda that calls it, run whole in the candidate's child (their calls depend on their own variables), so
a comparison inside them could be answered by an object with a forged `==`; one-`for` comprehensions
(`all(f(x) == y for x, y in cases)`) are split per iteration and are not exposed.

Equality on plain values is `codea1.sandbox.values.values_equal` everywhere: Python's `==` except that
NaN equals NaN and an optional float tolerance. Every function here is total on what a model or a
candidate can produce: a comparison that raises (a huge int against a complex, say) is a failed test with
a reason, never an exception out of this module.
"""

from __future__ import annotations

import ast
import math
import operator
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable, from_json, to_json, values_equal

Progress = Callable[[int, int], None] | None
CLEAN_PRELUDE = "import math\n"  # what a test's EXPECTED may use when there is no GT program to run it in
VALUES = "__codea1_v"  # the name the candidate's values go by in a lifted template
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
_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<=", "is": "is", "is not": "is not"}
_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


# ---------------------------------------------------------------------------- plain values
def literal(source: str) -> tuple[bool, Any]:
    """(True, value) when `source` is a Python literal of plain data (no code runs), else (False, None)."""
    try:
        value = ast.literal_eval(source.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError, OverflowError):
        return False, None
    try:
        value = from_json(to_json(value))
    except Exception:  # noqa: BLE001  (a value the encoding cannot hold is simply not a literal)
        return False, None
    if contains_unserializable(value):
        return False, None
    return True, value


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


def holds(op: str, value: Any, expected: Any = None, float_tol: float | None = None) -> bool:
    """Whether `value <op> expected` holds on plain values ("truth": whether `value` is truthy).

    `==`/`!=` use values_equal; `is`/`is not` are meaningful for None, True and False only (an identity
    claim about any other value is judged as equality of the same type, as CPython's small-int and
    string interning would make it unpredictable); ordering and membership are Python's. Total: an
    UNSERIALIZABLE value fails every comparison, and a comparison that raises is False.
    """
    if value is UNSERIALIZABLE or contains_unserializable(value):
        return False
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


def _contains(container: Any, item: Any) -> bool:
    """Python's `item in container` on plain values (substrings for str and bytes), with values_equal."""
    t = type(container)
    if t in (str, bytes):
        if type(item) is not t:
            raise TypeError("a str/bytes container holds only str/bytes")
        return item in container
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


# ---------------------------------------------------------------------------- reading one assert
@dataclass
class Assertion:
    """One `assert EXPR` made safe to decide: calls for the candidate and a template for the rest.

    calls: source of each call of the function under test, run in the candidate's child, in order.
    template: EXPR with those calls replaced by `__codea1_v[i]`, evaluated without the candidate.
    fast: (op, literal value, swapped) when the template is `v <op> LITERAL`, `LITERAL <op> v` or `v`
        (op "truth"), so the parent decides it alone; None otherwise.
    """

    statement: str
    calls: list[str]
    template: str
    fast: tuple[str, Any] | None = None
    pre: dict[int, str] = field(default_factory=dict)  # call index -> its loop's rows, evaluated by the oracle


ROW, ROWS = "__codea1_row", "__codea1_rows"  # one iteration's values, and the iterator over them
PRE = "__codea1_pre"  # in a per-iteration call: the loop's rows, as plain values the oracle computed


class _Lifter(ast.NodeTransformer):
    """Replaces each outermost call of the function under test by `<name>[i]`, collecting the calls.

    In a comprehension with one `for` whose iterable and conditions do not call the function, only the
    calls of its element run in the candidate's child, once per iteration (as a list of tuples); the
    oracle runs the loop again and reads each iteration's values from that list, so a comparison inside
    the element is decided outside the candidate too. Any other comprehension or lambda that calls the
    function is lifted whole (a generator expression as the list it would produce).
    """

    def __init__(self, entry_point: str, name: str = VALUES, per_iteration: bool = True):
        self.entry_point = entry_point
        self.name = name
        self.calls: list[str] = []
        self.pre: dict[int, str] = {}
        self.per_iteration = per_iteration

    def _lift(self, node: ast.expr) -> ast.expr:
        self.calls.append(ast.unparse(node))
        ref = ast.Subscript(ast.Name(self.name, ast.Load()), ast.Constant(len(self.calls) - 1), ast.Load())
        return ast.copy_location(ref, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == self.entry_point:
            return self._lift(node)
        if _uses_as_value(node, self.entry_point):  # `list(map(f, xs))`, `sorted(xs, key=f)`: the candidate's f
            return self._lift(node)
        return self.generic_visit(node)

    def _scoped(self, node: ast.expr) -> ast.AST:
        if not _mentions(node, self.entry_point):
            return node
        per_iteration = self._per_iteration(node)
        if per_iteration is not None:
            return per_iteration
        if isinstance(node, ast.GeneratorExp):
            node = ast.ListComp(elt=node.elt, generators=node.generators)
        return self._lift(node)

    def _per_iteration(self, node: ast.expr) -> ast.expr | None:
        """`E(f(..)) for T in IT if C` -> first the oracle: `[(names,) for T in IT if C]`, the values of
        the loop names the calls use (plain values, pasted in as PRE); then the candidate:
        `[(f(..),) for (names,) in PRE]` (lifted as one value), so no other name of T (an expected value
        in `for x, y in CASES`) is ever bound in the candidate's frames; then the oracle again:
        `E(row[0]) for rows in [iter(v[i])] for T in IT if C for row in [next(rows)]`."""
        if not self.per_iteration or isinstance(node, ast.Lambda) or len(node.generators) != 1:
            return None
        gen = node.generators[0]
        if (
            gen.is_async
            or _mentions(gen.iter, self.entry_point)
            or any(_mentions(c, self.entry_point) for c in gen.ifs)
        ):
            return None
        inner = _Lifter(self.entry_point, ROW, per_iteration=False)
        if isinstance(node, ast.DictComp):
            parts = [inner.visit(_copy(node.key)), inner.visit(_copy(node.value))]
        else:
            parts = [inner.visit(_copy(node.elt))]
        calls = ast.Tuple([ast.parse(c, mode="eval").body for c in inner.calls], ast.Load())
        bound = {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
        used = {n.id for c in inner.calls for n in ast.walk(ast.parse(c, mode="eval")) if isinstance(n, ast.Name)}
        needed = sorted(bound & used)
        pre = ast.ListComp(elt=ast.Tuple([ast.Name(x, ast.Load()) for x in needed], ast.Load()), generators=[gen])
        target = ast.Tuple([ast.Name(x, ast.Store()) for x in needed], ast.Store())
        rows = self._lift(
            ast.ListComp(elt=calls, generators=[ast.comprehension(target, ast.Name(PRE, ast.Load()), [], 0)])
        )
        self.pre[len(self.calls) - 1] = ast.unparse(ast.fix_missing_locations(pre))
        loops = [
            ast.comprehension(
                ast.Name(ROWS, ast.Store()),
                ast.List([ast.Call(ast.Name("iter", ast.Load()), [rows], [])], ast.Load()),
                [],
                0,
            ),
            gen,
            ast.comprehension(
                ast.Name(ROW, ast.Store()),
                ast.List([ast.Call(ast.Name("next", ast.Load()), [ast.Name(ROWS, ast.Load())], [])], ast.Load()),
                [],
                0,
            ),
        ]
        if isinstance(node, ast.DictComp):
            return ast.DictComp(key=parts[0], value=parts[1], generators=loops)
        return type(node)(elt=parts[0], generators=loops)

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_Lambda = _scoped


def read_assertion(statement: str, entry_point: str | None = None) -> Assertion | None:
    """An Assertion for one `assert ...` statement, or None when the text is not one assert statement.

    With `entry_point`, every outermost call of that function is lifted (comprehensions and lambdas that
    call it are lifted whole). Without it, the left side of a single comparison (or the whole expression
    of a non-comparison assert) is what runs in the candidate's child, as `CALL <op> EXPECTED` tests
    are usually written.
    """
    from codea1.sandbox.asserts import parse_assert

    node = parse_assert(statement)
    if node is None:
        return None
    expr = node.test
    try:
        pre: dict[int, str] = {}
        if entry_point:
            lifter = _Lifter(entry_point)
            lifted: ast.expr = lifter.visit(_copy(expr))
            calls, pre = lifter.calls, lifter.pre
        elif isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            calls = [ast.unparse(expr.left)]
            lifted = ast.Compare(_value_ref(0), expr.ops, expr.comparators)
        else:
            calls = [ast.unparse(expr)]
            lifted = _value_ref(0)
        template = ast.unparse(ast.fix_missing_locations(lifted))
    except (ValueError, RecursionError, MemoryError):
        return None
    return Assertion(statement=statement, calls=calls, template=template, fast=_fast_form(lifted), pre=pre)


class _PasteRows(ast.NodeTransformer):
    def __init__(self, rows: ast.expr) -> None:
        self.rows = rows

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.rows if node.id == PRE else node


def _paste_loop_rows(
    executor: Any, cases: Sequence[AssertCase], read: list[list[Assertion | None]], timeout: float
) -> dict[tuple[int, int], str]:
    """Phase 0 of a per-iteration lift: each loop's rows (the loop names its calls use) evaluated by the
    oracle program, one job each (a loop with side effects reaches no other), and pasted into the
    candidate's call as plain values. Returns (case, test) -> why, for a test whose rows could not be
    computed or are not plain data (that test fails)."""
    from codea1.sandbox import Job

    todo = [
        (n, t, i, src)
        for n, row in enumerate(read)
        for t, a in enumerate(row)
        if a is not None
        for i, src in a.pre.items()
    ]
    if not todo:
        return {}
    jobs = [
        Job(id=f"rows:{cases[n].id or n}", code=cases[n].oracle or CLEAN_PRELUDE, calls=[src], timeout=timeout)
        for n, _, _, src in todo
    ]
    refused: dict[tuple[int, int], str] = {}
    for (n, t, i, _), res in zip(todo, executor.run(jobs)):
        got = res.results[0] if res.defined and res.results else None
        if got is None or got.status != "ok" or contains_unserializable(got.value):
            refused[n, t] = "the loop of the assert could not be evaluated as plain data"
            continue
        a = read[n][t]
        try:
            rows = ast.parse(plain_source(got.value), mode="eval").body
            a.calls[i] = ast.unparse(_PasteRows(rows).visit(ast.parse(a.calls[i], mode="eval")))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            refused[n, t] = "the loop of the assert could not be evaluated as plain data"
    return refused


def _copy(expr: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(expr), mode="eval").body


def _value_ref(index: int) -> ast.Subscript:
    return ast.Subscript(ast.Name(VALUES, ast.Load()), ast.Constant(index), ast.Load())


def _uses_as_value(node: ast.AST, name: str) -> bool:
    """Whether `name` appears in `node` other than as the function of a call (passed, stored, read)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return any(isinstance(n, ast.Name) and n.id == name and id(n) not in called for n in ast.walk(node))


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _is_value_ref(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and node.value.id == VALUES
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == 0
    )


def _fast_form(template: ast.expr) -> tuple[str, Any] | None:
    """(op, literal) for `v <op> LITERAL` / `LITERAL <op> v` / `v` templates over one lifted value."""
    if _is_value_ref(template):
        return "truth", None
    if not isinstance(template, ast.Compare) or len(template.ops) != 1:
        return None
    op = COMPARISONS.get(type(template.ops[0]))
    left, right = template.left, template.comparators[0]
    if op is None:
        return None
    if _is_value_ref(left) and not _mentions(right, VALUES):
        ok, value = literal(ast.unparse(right))
        return (op, value) if ok else None
    if _is_value_ref(right) and not _mentions(left, VALUES):
        ok, value = literal(ast.unparse(left))
        if not ok:
            return None
        if op in _MIRROR:
            return _MIRROR[op], value
        return ("has" if op == "in" else "has not"), value
    return None


# ---------------------------------------------------------------------------- running asserts
@dataclass
class AssertCase:
    """A candidate program and the assert statements to run against it.

    entry_point: the function under test (None: the left side of each comparison runs in the candidate).
    oracle: the program an assert's non-literal parts are evaluated in (GT's program; default a clean
        prelude). It never holds the candidate's code.
    """

    code: str
    tests: list[str]
    entry_point: str | None = None
    oracle: str | None = None
    id: str = ""
    float_tol: float | None = None


def run_assertions(
    executor: Any, cases: Sequence[AssertCase], timeout: float = 2.0, progress: Progress = None
) -> list[Any]:
    """Runs each case's asserts against its code; one JobResult per case, one CallResult per test.

    A test's status: "pass" | "fail" (the assert does not hold on the candidate's values, raises on them,
    or a value is not plain data) | "error" / "timeout" / "crash" (a call of the function under test did
    not return) | "invalid" (not one assert statement, or the oracle program does not run). A case whose code does not run has defined=False and every test
    "invalid" with the reason. The candidate's child only computes the lifted calls' values; every
    verdict is decided in this process or in an oracle child that never runs the candidate's code.
    """
    from codea1.sandbox import CallResult, Job, JobResult

    read = [[read_assertion(t, case.entry_point) if type(t) is str else None for t in case.tests] for case in cases]
    refused = _paste_loop_rows(executor, cases, read, timeout)
    jobs, spans = [], []
    for n, (case, row) in enumerate(zip(cases, read)):
        calls: list[str] = []
        span: list[tuple[int, int]] = []
        for t, a in enumerate(row):
            start = len(calls)
            if a is not None and (n, t) not in refused:
                calls.extend(a.calls)
            span.append((start, len(calls)))
        spans.append(span)
        jobs.append(Job(id=case.id or str(n), code=case.code, calls=calls, timeout=timeout))
    ran = executor.run(jobs, progress=progress) if jobs else []

    out: list[Any] = []
    pending: list[tuple[int, int, str]] = []  # (case, test, `bool(template)` with values pasted in)
    for n, (case, row, span, res) in enumerate(zip(cases, read, spans, ran)):
        results: list[Any] = []
        for t, (a, (lo, hi)) in enumerate(zip(row, span)):
            if a is None:
                results.append(CallResult("invalid", error="not one assert statement"))
                continue
            if (n, t) in refused:
                results.append(CallResult("fail", error=refused[n, t]))
                continue
            got = res.results[lo:hi] if res.defined else []
            bad = next((r for r in got if r.status != "ok"), None)
            seconds = sum(float(r.seconds or 0.0) for r in got)
            if bad is not None:
                results.append(CallResult(bad.status, None, bad.error, seconds))
                continue
            values = [r.value for r in got]
            if any(v is UNSERIALIZABLE or contains_unserializable(v) for v in values):
                results.append(
                    CallResult(
                        "fail",
                        values[0] if len(values) == 1 else values,
                        "the function returned a value that is not plain data",
                        seconds,
                    )
                )
                continue
            shown = values[0] if len(values) == 1 else values
            if a.fast is not None and len(values) == 1:
                op, expected = a.fast
                ok = holds(op, values[0], expected, case.float_tol)
                results.append(CallResult("pass" if ok else "fail", shown, None, seconds))
                continue
            try:
                source = f"bool((lambda {VALUES}: ({a.template}))([{', '.join(plain_source(v) for v in values)}]))"
            except (ValueError, RecursionError):
                results.append(CallResult("fail", shown, "a value could not be passed to the oracle", seconds))
                continue
            results.append(CallResult("pending", shown, None, seconds))
            pending.append((n, len(results) - 1, source))
        if not res.defined:
            results = [CallResult("invalid", error=res.error) for _ in case.tests]
        out.append(JobResult(res.id, res.defined, res.error, results, res.stdout))

    by_case: dict[int, list[tuple[int, str]]] = {}
    for n, t, source in pending:
        if out[n].defined:
            by_case.setdefault(n, []).append((t, source))
    if by_case:
        keys = list(by_case)
        oracle_jobs = [
            Job(
                id=f"oracle:{cases[n].id or n}",
                code=cases[n].oracle or CLEAN_PRELUDE,
                calls=[s for _, s in by_case[n]],
                timeout=timeout,
            )
            for n in keys
        ]
        for n, res in zip(keys, executor.run(oracle_jobs)):
            for (t, _), r in zip(by_case[n], res.results if res.defined else []):
                prev = out[n].results[t]
                if r.status == "ok" and type(r.value) is bool:
                    prev.status = "pass" if r.value else "fail"
                else:  # the assert raised on the candidate's values (or gave no bool): a failed test
                    prev.status, prev.error = "fail", f"the assert's expression failed: {r.error or r.status}"
            if not res.defined:
                for t, _ in by_case[n]:
                    out[n].results[t].status = "invalid"
                    out[n].results[t].error = f"the oracle program does not run: {res.error}"
    return out
