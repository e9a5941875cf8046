"""Reading one assert statement, without running anything (the `ast` module only).

`parse_assert` accepts exactly one `assert` statement Python would run; `split_assert` splits
`assert CALL <op> EXPECTED` into its three parts (the game's and the data loaders' test form);
`read_assertion` cuts the calls of the function under test out of any assert (`Assertion`): only those
calls run in the candidate's child, the rest of the expression (the template) is decided without the
candidate's code, by codea1.judge.oracle.

Limits: a comprehension whose iterable or condition calls the function, and a lambda that calls it, are
lifted whole (their calls depend on their own values), so a comparison inside them runs in the
candidate's child; other comprehensions, with one `for` or several (`all(f(x) == y for x, y in cases)`,
`all(f(a, b) == a + b for a in xs for b in ys)`), are split per iteration and are not exposed: the
candidate gets each iteration's arguments and nothing else. codea1.judge.oracle runs the iterations of a
split comprehension as calls of their own, so `any(f(x) for x in xs)` stops at the first true value as in
Python, a later iteration that raises included (`and`, `or`, `if-else` keep their short-circuits too);
past 64 calls (codea1.judge.oracle.MAX_SPLIT) a loop runs as one call, and one iteration that raises then
fails the test. A comprehension lifted whole (its iterable calls the function) runs every iteration in the
candidate.
`changes_nothing` says whether a template can change nothing a later test could see.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from codea1.judge.equality import COMPARISONS, MIRROR
from codea1.judge.literals import literal

VALUES = "__codea1_v"  # the name the candidate's values go by in a lifted template
SPLIT_OPS = ("==", "!=", "is", "is not")  # the comparisons of a split `assert CALL <op> EXPECTED`


NOT_AN_EXPRESSION = (ast.Yield, ast.YieldFrom, ast.Await)  # turn the code around them into a generator/coroutine


def python_would_run(node: ast.AST) -> bool:
    """Whether an assert's expression is one Python runs as an expression: no `yield`, `yield from` or
    `await` anywhere in it. The parser accepts `assert (yield)`, Python's compiler rejects it at module
    level, and once moved into a function (a test body, a checking lambda) it makes that function a
    generator, whose result is always truthy."""
    return not any(isinstance(n, NOT_AN_EXPRESSION) for n in ast.walk(node))


def parse_assert(statement: str) -> ast.Assert | None:
    """The `ast.Assert` of a text that is exactly one assert statement Python would run, else None (several
    statements, another statement, text that does not parse, or `yield`/`await` in it)."""
    try:
        tree = ast.parse(statement.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    if not python_would_run(tree.body[0]):
        return None
    return tree.body[0]


def split_assert(statement: str) -> tuple[str, str, str] | None:
    """Returns (call, op, expected) for a single `assert CALL <op> EXPECTED` statement, else None.

    CALL is the left side (normally a call of the function under test), EXPECTED the right side, both
    as normalised source (ast.unparse). A message after the comma is dropped. Chained comparisons,
    other operators, several statements, or text that does not parse give None.
    """
    node = parse_assert(statement)
    if node is None:
        return None
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or len(test.comparators) != 1:
        return None
    op = COMPARISONS.get(type(test.ops[0]))
    if op not in SPLIT_OPS:
        return None
    try:
        return ast.unparse(test.left), op, ast.unparse(test.comparators[0])
    except (ValueError, RecursionError):
        return None


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
    """Replaces each outermost call of the functions under test by `<name>[i]`, collecting the calls.

    In a comprehension (one `for` or several) whose iterables and conditions do not call the function, only the
    calls of its element run in the candidate's child, once per iteration (as a list of tuples); the
    oracle runs the loop again and reads each iteration's values from that list, so a comparison inside
    the element is decided outside the candidate too. Any other comprehension that calls the function is
    lifted whole (a generator expression as the list it would produce), and so is a call of a lambda that
    calls it (`(lambda g=f: g(2))()`: its value, not the lambda).
    """

    def __init__(self, names: frozenset[str], name: str = VALUES, per_iteration: bool = True):
        self.names = names
        self.name = name
        self.calls: list[str] = []
        self.pre: dict[int, str] = {}
        self.per_iteration = per_iteration

    def _lift(self, node: ast.expr) -> ast.expr:
        self.calls.append(ast.unparse(node))
        ref = ast.Subscript(ast.Name(self.name, ast.Load()), ast.Constant(len(self.calls) - 1), ast.Load())
        return ast.copy_location(ref, node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            return self._lift(node)
        if _uses_as_value(node, self.names):  # `list(map(f, xs))`, `sorted(xs, key=f)`: the candidate's f
            return self._lift(node)
        if isinstance(node.func, ast.Lambda) and _mentions(node.func, self.names):
            return self._lift(node)  # the lambda's value is a function: its call's value is what comes back
        return self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """`f.__code__.co_code`, `f.__doc__`: an attribute of the function under test is the candidate's
        (left in the template, the oracle read it from GT's function)."""
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.names:
            return self._lift(node)
        return self.generic_visit(node)

    def _scoped(self, node: ast.expr) -> ast.AST:
        if not _mentions(node, self.names):
            return node
        per_iteration = self._per_iteration(node)
        if per_iteration is not None:
            return per_iteration
        if isinstance(node, ast.GeneratorExp):
            node = ast.ListComp(elt=node.elt, generators=node.generators)
        return self._lift(node)

    def _per_iteration(self, node: ast.expr) -> ast.expr | None:
        """`E(f(..)) for T1 in IT1 if C1 for T2 in IT2 ...` -> first the oracle: `[((args, {kwargs}), ...)
        for T1 in IT1 if C1 for T2 in IT2 ...]`, each iteration's arguments of each call (plain values,
        pasted in as PRE); then the candidate: `[(f(*a0, **k0), ...) for ((a0, k0), ...) in PRE]` (lifted
        as one value), so nothing but its own arguments ever reaches the candidate's frames (not a loop
        name, not `t[1]` of `for t in CASES`); then the oracle again: `E(row[0]) for rows in [iter(v[i])]
        for T1 in IT1 if C1 ... for row in [next(rows)]`. Applies when no iterable or condition of the
        loops calls the function. A call whose arguments cannot be computed without the candidate (they
        call it, or it is passed as a value: `list(map(f, xs))`) binds the loop names it uses instead."""
        if not self.per_iteration or isinstance(node, ast.Lambda):
            return None
        gens = node.generators
        if any(
            g.is_async or _mentions(g.iter, self.names) or any(_mentions(c, self.names) for c in g.ifs) for g in gens
        ):
            return None
        inner = _Lifter(self.names, ROW, per_iteration=False)
        if isinstance(node, ast.DictComp):
            parts = [inner.visit(_copy(node.key)), inner.visit(_copy(node.value))]
        else:
            parts = [inner.visit(_copy(node.elt))]
        nodes = [ast.parse(c, mode="eval").body for c in inner.calls]
        if all(_direct_call(c, self.names) for c in nodes):
            row, target, calls = _argument_rows(nodes)
        else:
            bound = {n.id for g in gens for n in ast.walk(g.target) if isinstance(n, ast.Name)}
            used = {n.id for c in nodes for n in ast.walk(c) if isinstance(n, ast.Name)}
            needed = sorted(bound & used)
            row = ast.Tuple([ast.Name(x, ast.Load()) for x in needed], ast.Load())
            target = ast.Tuple([ast.Name(x, ast.Store()) for x in needed], ast.Store())
            calls = ast.Tuple(nodes, ast.Load())
        pre = ast.ListComp(elt=row, generators=list(gens))
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
            *gens,
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


def read_assertion(
    statement: str, entry_point: str | None = None, defined: frozenset[str] = frozenset()
) -> Assertion | None:
    """An Assertion for one `assert ...` statement, or None when the text is not one assert statement.

    With `entry_point` (or, without one, with the names the candidate's code `defined`: `names_defined`),
    every outermost call of those functions is lifted (see _Lifter). With neither, the left side of a
    single comparison (or the whole expression of a non-comparison assert) is what runs in the
    candidate's child, as `CALL <op> EXPECTED` tests are usually written.
    """
    node = parse_assert(statement)
    if node is None:
        return None
    expr = node.test
    names = frozenset({entry_point}) if entry_point else frozenset(defined)
    try:
        pre: dict[int, str] = {}
        if names:
            lifter = _Lifter(names)
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


# What a template may use and still change nothing outside itself (`changes_nothing`): builtins that only
# compute (the functions they call are the template's own, checked alike), the math module's functions, and
# methods of plain values that do not mutate them. Anything else (a name of the oracle program, `__import__`,
# `globals()`, `setattr`, a dunder or an introspection attribute, a mutating method) may reach a later test.
PURE_BUILTINS = frozenset(
    [
        "abs",
        "all",
        "any",
        "ascii",
        "bin",
        "bool",
        "bytes",
        "chr",
        "complex",
        "dict",
        "divmod",
        "enumerate",
        "filter",
        "float",
        "format",
        "frozenset",
        "hash",
        "hex",
        "int",
        "isinstance",
        "iter",
        "len",
        "list",
        "map",
        "max",
        "min",
        "next",
        "oct",
        "ord",
        "pow",
        "range",
        "repr",
        "reversed",
        "round",
        "set",
        "slice",
        "sorted",
        "str",
        "sum",
        "tuple",
        "type",
        "zip",
    ]
)
PURE_METHODS = frozenset(
    [
        "upper",
        "lower",
        "strip",
        "lstrip",
        "rstrip",
        "split",
        "rsplit",
        "join",
        "replace",
        "startswith",
        "endswith",
        "find",
        "rfind",
        "index",
        "rindex",
        "count",
        "isdigit",
        "isalpha",
        "isalnum",
        "isspace",
        "isupper",
        "islower",
        "istitle",
        "isnumeric",
        "isdecimal",
        "isidentifier",
        "title",
        "capitalize",
        "casefold",
        "swapcase",
        "zfill",
        "center",
        "ljust",
        "rjust",
        "partition",
        "rpartition",
        "splitlines",
        "encode",
        "decode",
        "expandtabs",
        "removeprefix",
        "removesuffix",
        "keys",
        "values",
        "items",
        "get",
        "copy",
        "union",
        "intersection",
        "difference",
        "symmetric_difference",
        "issubset",
        "issuperset",
        "isdisjoint",
        "real",
        "imag",
        "conjugate",
        "numerator",
        "denominator",
        "as_integer_ratio",
        "is_integer",
        "bit_length",
    ]
)
_PURE_NODES = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Store,
    ast.Subscript,
    ast.Slice,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.IfExp,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.Starred,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.comprehension,
    ast.Lambda,
    ast.arguments,
    ast.arg,
    ast.NamedExpr,
    ast.Call,
    ast.keyword,
    ast.Attribute,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.boolop,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
)


def changes_nothing(template: str, calling: frozenset[str] = frozenset()) -> bool:
    """Whether evaluating a template (codea1.judge.oracle's `bool(...)` of it) can change nothing that a later
    test could see: it reads only the values pasted in, names it binds itself (loops, lambdas, `:=`, each in
    its own scope, as Python resolves them), PURE_BUILTINS, `math.<name>`, and PURE_METHODS of values, and
    stores into no attribute or item. Anything else may (a call of one of the oracle program's functions,
    too): such a template is decided in a process of its own. `calling`: names of the program the
    expression runs beside, which it may read and call (what their code does is the program's own, as a
    call of the function under test is)."""
    try:
        tree = ast.parse(template, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    try:
        return _pure(tree.body, frozenset({VALUES}) | calling | _walrus_targets(tree.body))
    except RecursionError:
        return False


def _walrus_targets(node: ast.AST) -> frozenset[str]:
    """The names `:=` binds in the function scope of `node` (not inside a nested lambda)."""
    found, todo = set(), [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            found.add(n.target.id)
        todo.extend(c for c in ast.iter_child_nodes(n) if not isinstance(c, ast.Lambda))
    return frozenset(found)


def _pure(node: ast.AST, bound: frozenset[str]) -> bool:
    """changes_nothing's walk, with the names bound in the scope `node` is evaluated in."""
    if not isinstance(node, _PURE_NODES):
        return False
    if isinstance(node, ast.Name):
        return node.id in bound or (isinstance(node.ctx, ast.Load) and node.id in PURE_BUILTINS | {"math"})
    if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
        return False
    if isinstance(node, ast.Attribute):
        on_math = isinstance(node.value, ast.Name) and node.value.id == "math" and "math" not in bound
        if node.attr not in PURE_METHODS and not (on_math and not node.attr.startswith("_")):
            return False
    if isinstance(node, ast.Call) and not isinstance(node.func, (ast.Name, ast.Attribute, ast.Lambda)):
        return False
    if isinstance(node, ast.Lambda):
        a = node.args
        params = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None}
        defaults = [d for d in [*a.defaults, *a.kw_defaults] if d is not None]
        inner = bound | params | _walrus_targets(node.body)
        return all(_pure(d, bound) for d in defaults) and _pure(node.body, inner)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        gens = node.generators
        targets = {n.id for g in gens for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        inner = bound | targets
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        parts += [g.target for g in gens] + [g.iter for g in gens[1:]] + [c for g in gens for c in g.ifs]
        return not any(g.is_async for g in gens) and _pure(gens[0].iter, bound) and all(_pure(p, inner) for p in parts)
    return all(_pure(child, bound) for child in ast.iter_child_nodes(node))


def _copy(expr: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(expr), mode="eval").body


def _value_ref(index: int) -> ast.Subscript:
    return ast.Subscript(ast.Name(VALUES, ast.Load()), ast.Constant(index), ast.Load())


def _uses_as_value(node: ast.AST, names: frozenset[str]) -> bool:
    """Whether one of `names` appears in `node` other than as the function of a call (passed, stored, read)."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return any(isinstance(n, ast.Name) and n.id in names and id(n) not in called for n in ast.walk(node))


def _mentions(node: ast.AST, names: frozenset[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _direct_call(node: ast.expr, names: frozenset[str]) -> bool:
    """`f(args)` of a function under test whose arguments do not mention any of them."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and not any(_mentions(a, names) for a in [*node.args, *(k.value for k in node.keywords)])
    )


def _argument_rows(calls: list[ast.Call]) -> tuple[ast.expr, ast.expr, ast.expr]:
    """For direct calls f_j(args_j): the oracle's row `((args_0,), {kwargs_0}), ...`, the candidate's loop
    target `(__codea1_a0, __codea1_k0), ...` and its element `(f_0(*__codea1_a0, **__codea1_k0), ...)`."""
    row, target, element = [], [], []
    for j, call in enumerate(calls):
        args = ast.Tuple(list(call.args), ast.Load())  # a Starred argument unpacks in a tuple display too
        keys: list[ast.expr | None] = [None if k.arg is None else ast.Constant(k.arg) for k in call.keywords]
        kwargs = ast.Dict(keys=keys, values=[k.value for k in call.keywords])
        row.append(ast.Tuple([args, kwargs], ast.Load()))
        a, k = f"__codea1_a{j}", f"__codea1_k{j}"
        target.append(ast.Tuple([ast.Name(a, ast.Store()), ast.Name(k, ast.Store())], ast.Store()))
        element.append(
            ast.Call(
                ast.Name(call.func.id, ast.Load()),
                [ast.Starred(ast.Name(a, ast.Load()), ast.Load())],
                [ast.keyword(None, ast.Name(k, ast.Load()))],
            )
        )
    return ast.Tuple(row, ast.Load()), ast.Tuple(target, ast.Store()), ast.Tuple(element, ast.Load())


def names_defined(code: str) -> frozenset[str]:
    """The names a program binds at its top level (functions, classes, assignments, imports, anything
    stored outside a function body): without an entry point, these are the candidate's functions."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    names: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue  # what a body binds is its own
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, ast.Lambda):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


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
        if op in MIRROR:
            return MIRROR[op], value
        return ("has" if op == "in" else "has not"), value
    return None
