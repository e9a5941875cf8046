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
# set's items in a sorted order, equal numbers one token (0, 0.0 and False; 2 and 2.0), NaN one token.
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


def __codea1_canon(x, out):
    if isinstance(x, complex) and x.imag == 0:
        x = x.real
    if isinstance(x, (bool, int)) or (isinstance(x, float) and x == x and abs(x) != float("inf") and x == int(x)):
        out.append("n" + hex(int(x)))
    elif isinstance(x, float):
        out.append("f" + ("nan" if x != x else repr(x)))
    elif isinstance(x, (str, bytes, complex)) or x is None:
        out.append(type(x).__name__[0] + repr(x))
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


def __codea1_plain(value, depth=0):
    t = type(value)
    if t.__module__ == "numpy" and hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    if depth == 0 and __codea1_too_big(value):
        import hashlib
        out = []
        try:
            __codea1_canon(value, out)
            text = "".join(out)
        except RecursionError:  # nested deeper than the interpreter recurses: its repr, as before
            text = repr(value)
        kinds = ((int, "number"), (float, "number"), (complex, "number"), (dict, "dict"), (list, "list"),
                 (tuple, "tuple"), (set, "set"), (frozenset, "set"), (str, "str"), (bytes, "bytes"))
        kind = next((name for cls, name in kinds if isinstance(value, cls)), type(value).__name__)
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


def __codea1_typed(value):
    t = type(value)
    return (t.__module__ + "." + t.__qualname__, __codea1_plain(value))
"""


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
