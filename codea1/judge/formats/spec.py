"""What a benchmark's test program asks (CheckSpec), one verdict (Verdict), and the helper every
candidate program carries so outputs come back as plain data (PLAIN_HELPER)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from codea1.judge.literals import plain_source

# Runs around every call in the child, on the candidate's output and on expected values alike, so both
# sides agree: numpy scalars become Python values and dict/list/tuple subclasses (Counter, OrderedDict,
# namedtuple) their plain base type, which Python's == treats the same way; outputs too large to send
# back (a 7 MB string, a million-digit int, over 90,000 items: near the wire's own limits, so that lists of
# floats up to that size keep EvalPlus's tolerance) become a tagged sha256 digest, compared for equality only.
# The digest is of a canonical text in which values Python's == holds equal read the same: a dict's or a
# set's items in a sorted order, equal numbers one token whatever their types (0, 0.0, False and
# Fraction(0); 2.5, Fraction(5, 2) and Decimal('2.50'): each real number as its exact ratio), NaN one token.
# Whether a value is digested is decided once, on the expected value: `digest` True or False makes the
# candidate's output take the same form (see codea1.judge.formats.digest_decisions); None (the expected
# value itself) decides by size.
# __codea1_typed(value) is (the name of value's type, its plain form), for EvalPlus's type check.
PLAIN_HELPER = """
def __codea1_too_big(value):
    stack, items, chars = [value], 0, 0
    while stack:
        x = stack.pop()
        items += 1
        if isinstance(x, (str, bytes)):
            chars += len(x)
        elif isinstance(x, int) and not isinstance(x, bool):
            chars += x.bit_length() // 3
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, (list, tuple, set, frozenset)):
            stack.extend(x)
        if items > 90000 or chars > 500000:
            return True
    return False


def __codea1_exact_kind(t, kinds={}):
    # "fraction" or "decimal" for (a subclass of) fractions.Fraction or decimal.Decimal, else ""
    if t not in kinds:
        names = {(c.__module__, c.__name__) for c in t.__mro__}
        kinds[t] = "fraction" if ("fractions", "Fraction") in names else "decimal" if ("decimal", "Decimal") in names else ""
    return kinds[t]


def __codea1_number(x):
    # the token of a real number (bool, int, float, Fraction, Decimal): its exact ratio; None for the rest
    if isinstance(x, (bool, int)):
        return "n" + hex(int(x))
    if isinstance(x, float):
        if x != x:
            return "fnan"
        if x in (float("inf"), float("-inf")):
            return "f-inf" if x < 0 else "finf"
        num, den = x.as_integer_ratio()
    elif isinstance(x, (str, bytes, complex, list, tuple, dict, set, frozenset)) or x is None:
        return None
    else:
        kind = __codea1_exact_kind(type(x))
        if kind == "fraction":
            num, den = x.numerator, x.denominator
        elif kind != "decimal":
            return None
        elif x.is_nan():
            return "dsnan" if x.is_snan() else "dnan"
        elif x.is_infinite():
            return "f-inf" if x.is_signed() else "finf"
        elif abs(x.adjusted()) > 100000:
            return "d" + str(x.normalize())  # its exact ratio would take seconds to write out
        else:
            num, den = x.as_integer_ratio()
    return "n" + hex(num) if den == 1 else "q" + hex(num) + "/" + hex(den)


def __codea1_canon(x, out):
    if isinstance(x, complex) and x.imag == 0:
        x = x.real
    number = __codea1_number(x)
    if number is not None:
        out.append(number)
    elif isinstance(x, complex):
        out.append("c" + __codea1_number(x.real) + "," + __codea1_number(x.imag))
    elif isinstance(x, str):
        out.append("s" + str.__repr__(x))
    elif isinstance(x, (bytes, bytearray)):
        out.append("b" + repr(bytes(x)))
    elif x is None:
        out.append("None")
    elif isinstance(x, (list, tuple)):
        out.append("[" if isinstance(x, list) else "(")
        for v in x:
            __codea1_canon(v, out)
            out.append(",")
        out.append("]")
    elif isinstance(x, dict):
        pairs = []
        for k, v in x.items():
            kt, vt = [], []
            __codea1_canon(k, kt)
            __codea1_canon(v, vt)
            pairs.append("".join(kt) + ":" + "".join(vt))
        out.append("{" + ",".join(sorted(pairs)) + "}")
    elif isinstance(x, (set, frozenset)):
        members = []
        for v in x:
            vt = []
            __codea1_canon(v, vt)
            members.append("".join(vt))
        out.append("<" + ",".join(sorted(members)) + ">")
    else:
        out.append(type(x).__name__ + ":" + repr(x))


def __codea1_plain(value, depth=0, digest=None):
    t = type(value)
    if t.__module__ == "numpy" and hasattr(value, "item") and getattr(value, "shape", None) == ():
        value = value.item()
    if depth == 0 and (__codea1_too_big(value) if digest is None else digest):
        import hashlib
        out = []
        try:
            __codea1_canon(value, out)
            text = "".join(out)
        except RecursionError:  # nested deeper than the interpreter recurses: its repr, as before
            text = repr(value)
        kinds = ((dict, "dict"), (list, "list"), (tuple, "tuple"), (set, "set"), (frozenset, "set"),
                 (str, "str"), (bytes, "bytes"), (complex, "number"))
        kind = "number" if __codea1_number(value) is not None else next(
            (name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)
        return ("__codea1_digest__", kind, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
    if depth > 20:
        return value
    if isinstance(value, dict):
        return {__codea1_plain(k, depth + 1): __codea1_plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [__codea1_plain(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(__codea1_plain(v, depth + 1) for v in value)
    return value


def __codea1_typed(value, digest=None):
    t = type(value)
    return (t.__module__ + "." + t.__qualname__, __codea1_plain(value, digest=digest))
"""
DIGEST_TAG = "__codea1_digest__"


def is_digest(value: Any) -> bool:
    """Whether a plain value is a digest made by PLAIN_HELPER (GT's value of a call was too large to send)."""
    return type(value) is tuple and len(value) == 3 and value[0] == DIGEST_TAG


def with_digest(call: str, digest: bool | None) -> str:
    """A `__codea1_plain(...)` / `__codea1_typed(...)` call made to give its value in the form decided
    (digested or whole); None leaves the call as it is (the helper decides by size)."""
    if digest is None:
        return call
    try:
        node = ast.parse(call, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return call
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _WRAPPERS):
        return call
    node.keywords = [k for k in node.keywords if k.arg != "digest"] + [ast.keyword("digest", ast.Constant(digest))]
    return ast.unparse(node)


_WRAPPERS = ("__codea1_plain", "__codea1_typed")


@dataclass
class CheckSpec:
    """What a benchmark's test program asks: calls to make and how to obtain and compare expected values.

    mode: "assertion" (results given or computed), "custom" (another loop body), "asserts" (plain
    `assert CALL == EXPECTED` tests compared exactly), "humaneval" (the whole check() program, replayed;
    calls and expected values are then learnt by recording, see the module docstring).
    In mode "assertion" calls and expected_calls give (type name, plain value) pairs (`__codea1_typed`).
    """

    calls: list[str]  # expressions evaluated in the candidate's child
    inputs: list[str]  # source of each input row (args list)
    expected_calls: list[str] | None  # expressions evaluated in a clean child for expected values
    helpers: str  # benchmark code for the clean child (test program without check())
    imports: str  # the test program's import statements (also given to the candidate, as EvalPlus does)
    atol: float = 0.0
    mode: str = "assertion"
    custom_body: str = ""  # the loop statement, for mode "custom"
    callee: str = ""
    ops: list[str] = field(default_factory=list)  # for mode "asserts": comparison per test
    oracle: str = ""  # EvalPlus special oracle of the task (see evalplus_oracle), "" for none
    alt_calls: list[str] | None = None  # clean-child expressions an oracle compares with (Mbpp/558, 581)


def check_def(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            return node
    return None


def list_elements(body: list[ast.stmt], name: str) -> list[ast.expr] | None:
    for stmt in body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
            and isinstance(stmt.value, (ast.List, ast.Tuple))
        ):
            return list(stmt.value.elts)
    return None


def value_source(value: Any) -> str | None:
    """Python source that rebuilds a plain value (for substituting a candidate's output); None if impossible."""
    try:
        return plain_source(value)
    except (ValueError, RecursionError):
        return None


class Verdict(NamedTuple):
    """One call's verdict: whether it passed, its status ("pass", "fail", "error", "timeout", "crash"; ""
    while a clean child still has to decide it) and why, when it did not pass."""

    passed: bool
    status: str
    error: str | None = None
