"""EvalPlus test programs (HumanEval+, MBPP+), read and judged as evalplus 0.3.1 does.

A test program defines helpers (`is_floats`, `assertion(out, exp, atol)`,
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
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

from codea1.judge.formats.spec import CheckSpec, Verdict, check_def, list_elements, value_source
from codea1.judge.literals import plain_source


def parse_evalplus(test_code: str, entry_point: str, gt_fallback: bool = True, task_id: str = "") -> CheckSpec | None:
    """Parses an EvalPlus check() program; None when it is not of that shape.

    task_id selects EvalPlus's special oracle of the task, if any (see evalplus_oracle)."""
    try:
        with warnings.catch_warnings():  # benchmark code has invalid escapes ("\\w") that only warn
            warnings.simplefilter("ignore")
            tree = ast.parse(test_code)
    except (SyntaxError, ValueError):
        return None
    check = check_def(tree)
    if check is None or not check.args.args:
        return None
    param = check.args.args[0].arg
    inputs = list_elements(check.body, "inputs")
    loop = next((s for s in check.body if isinstance(s, ast.For)), None)
    if inputs is None or loop is None or len(loop.body) != 1:
        return None
    results = list_elements(check.body, "results")
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
        _assertion_calls(spec, callee, atol, inputs_src)
        exp = call.args[1]
        if isinstance(exp, ast.Name) and results is not None and len(results) == len(inputs):
            spec.expected_calls = [f"__codea1_typed({ast.unparse(e)})" for e in results]
        elif isinstance(exp, ast.Call) and isinstance(exp.func, ast.Name) and exp.func.id != param:
            # e.g. ref_func
            spec.expected_calls = [f"__codea1_typed({exp.func.id}(*{src}))" for src in inputs_src]
        elif not gt_fallback:
            return None  # expected values come from GT (spec.expected_calls stays None)
        _oracle(spec, task_id, callee, inputs_src)
        return spec
    # another loop body: find the candidate call `param(*inp)` and substitute its value later
    spec.mode, spec.callee = "custom", entry_point
    spec.custom_body = ast.unparse(stmt)
    spec.calls = [f"__codea1_plain({entry_point}(*{src}))" for src in inputs_src]
    spec.custom_body = spec.custom_body.replace(f"{param}(*inp)", "__codea1_out")
    if results is not None and len(results) == len(inputs):
        spec.expected_calls = [f"__codea1_plain({ast.unparse(e)})" for e in results]
    return spec


def spec_from_inputs(inputs: list, atol: float, entry_point: str, task_id: str = "") -> CheckSpec | None:
    """The check of an EvalPlus release row, built from its inputs as data (base_input + plus_input: one
    list of arguments per test), the expected values from GT, the task's special oracle where it has one.
    No program is written and parsed back: a value a program's text cannot hold by its repr (inf, nan)
    reaches the call as itself. None when an input is not a list of plain values."""
    try:
        inputs_src = [plain_source(list(args)) for args in inputs]
    except (TypeError, ValueError, RecursionError):
        return None
    spec = CheckSpec(calls=[], inputs=inputs_src, expected_calls=None, helpers="", imports="")
    _assertion_calls(spec, entry_point, float(atol), inputs_src)
    _oracle(spec, task_id, entry_point, inputs_src)
    return spec


def _assertion_calls(spec: CheckSpec, callee: str, atol: float, inputs_src: list[str]) -> None:
    spec.callee, spec.atol = callee, atol
    spec.calls = [f"__codea1_typed({callee}(*{src}))" for src in inputs_src]


def _oracle(spec: CheckSpec, task_id: str, callee: str, inputs_src: list[str]) -> None:
    spec.oracle = evalplus_oracle(task_id, callee)
    if spec.oracle in ORACLE_FUNCTIONS:
        spec.alt_calls = [f"{ORACLE_FUNCTIONS[spec.oracle]}(*{src})" for src in inputs_src]


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
    decoded values' own types are compared. The candidate's child names out_type, so that name can only
    fail an input: where EvalPlus compares types, the types of the decoded values, which this process
    decides, must agree too (a list subclass that calls itself `builtins.tuple` is still a list). oracle:
    see evalplus_oracle; alt: the value an oracle compares with (Mbpp/558, 581).
    """
    same_decoded = type(out) is type(exp)
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
            exact = out == exp if out_type == BOOL and type(out) is bool else exp == (out is not None)
        if atol == 0 and is_floats(exp):
            atol = 1e-6
        if not exact and atol != 0:
            if out_type != exp_type or not same_decoded:
                return False
            if isinstance(exp, (list, tuple)) and len(out) != len(exp):
                return False
            return bool(_numpy().allclose(out, exp, rtol=1e-07, atol=atol))
        return bool(exact)
    except Exception:  # noqa: BLE001 - anything that raises fails the input, as in EvalPlus
        return False


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


def verdict(spec: CheckSpec, result: Any, expected: Any, alt: Any = None) -> Verdict:
    """One "ok" call of mode "assertion" judged: the candidate's and the expected (type name, value) pairs
    compared as evalplus_assertion does."""
    got, want = as_typed(result.value), as_typed(expected)
    if got is None or want is None:
        return Verdict(False, "fail", "output is not a (type, value) pair")
    ok = evalplus_assertion(got[1], want[1], spec.atol, out_type=got[0], exp_type=want[0], oracle=spec.oracle, alt=alt)
    return Verdict(ok, "pass" if ok else "fail")
