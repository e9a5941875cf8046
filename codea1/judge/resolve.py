"""Values in: each CALL of a test turned into the function under test applied to plain values.

A CALL's literal arguments are read here; any other argument expression is evaluated twice, each time in
a fresh child holding only the imports it may need, and must give the same plain value both times. A CALL
whose arguments mention the function under test, raise, are not plain data or differ between the two
evaluations cannot be resolved, so no test can ask GT and a candidate different questions (an
introspective or random argument), see another test's side effects, or run its own code beside the
function under test (the game, and the coverage of `codea1 eval tests`, run only resolved CALLs).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codea1.judge.literals import encode_expected, literal, plain_source
from codea1.sandbox import Job, OnProgress
from codea1.sandbox.api import Executor
from codea1.sandbox.values import contains_unserializable

MAX_RESOLVED_CALL = 100_000  # characters of a CALL with its argument values written out


@dataclass
class CallSet:
    """CALLs to resolve together: `program` is where their argument expressions are evaluated (imports
    only: no GT, no candidate)."""

    id: str
    entry_point: str
    program: str
    calls: list[str]


@dataclass
class ResolvedCalls:
    """The CALLs of one set with their arguments as plain values.

    calls: CALL source as written -> the CALL that GT and every candidate run: the function under test
    applied to argument literals (`f(3, [1, 2], key='a')`), or, for a CALL of another function
    (`len([1, 2])`), the literal of its value; None when the CALL cannot be turned into values.
    reasons: CALL -> why it could not.
    """

    calls: dict[str, str | None] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)


@dataclass
class CallShape:
    """A parsed CALL: whether it calls the function under test, its argument parts as (kind, source) with
    kind "pos", "*", "**" or a keyword name, and the literal values known already."""

    entry: bool
    parts: list[tuple[str, str]]
    values: dict[int, Any]


def call_shape(call: str, entry_point: str) -> CallShape | str:
    """How a CALL's arguments are turned into values, or why they cannot be."""
    try:
        node = ast.parse(call, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "the call does not parse"
    if not isinstance(node, ast.Call):
        return "not a call"
    mentions = any(isinstance(n, ast.Name) and n.id == entry_point for n in ast.walk(node))
    is_entry = isinstance(node.func, ast.Name) and node.func.id == entry_point
    if not is_entry:
        if mentions:
            return "the function under test is used inside another call's arguments"
        return CallShape(False, [("whole", call)], {})
    parts: list[tuple[str, ast.expr]] = []
    for arg in node.args:
        parts.append(("*", arg.value) if isinstance(arg, ast.Starred) else ("pos", arg))
    for kw in node.keywords:
        parts.append(("**" if kw.arg is None else kw.arg, kw.value))
    if any(isinstance(n, ast.Name) and n.id == entry_point for _, e in parts for n in ast.walk(e)):
        return "an argument needs the function under test"
    sources = [(kind, ast.unparse(e)) for kind, e in parts]
    values = {}
    for i, (_, source) in enumerate(sources):
        ok, value = literal(source)
        if ok:
            values[i] = value
    return CallShape(True, sources, values)


def written_out(entry_point: str, shape: CallShape, values: dict[int, Any]) -> str:
    """The CALL with every argument written as the literal of its value (raises ValueError when a value
    is not plain data, a `*` part is not a sequence or a `**` part not a dict of names)."""
    if not shape.entry:
        return plain_source(values[0])
    args: list[str] = []
    keywords: list[str] = []  # after every positional argument, as Python passes `f(k=1, *xs)` too
    for i, (kind, _) in enumerate(shape.parts):
        value = values[i]
        if kind == "pos":
            args.append(plain_source(value))
        elif kind == "*":
            if type(value) not in (list, tuple):
                raise ValueError("a *argument is not a list or tuple")
            args += [plain_source(v) for v in value]
        elif kind == "**":
            if type(value) is not dict or not all(type(k) is str and k.isidentifier() for k in value):
                raise ValueError("a **argument is not a dict of names")
            keywords += [f"{k}={plain_source(v)}" for k, v in value.items()]
        else:
            keywords.append(f"{kind}={plain_source(value)}")
    return f"{entry_point}({', '.join(args + keywords)})"


def resolve_calls(
    sets: Sequence[CallSet], executor: Executor, timeout: float, progress: OnProgress = None
) -> list[ResolvedCalls]:
    """One ResolvedCalls per set, in order; every argument expression that is not a literal is evaluated
    in two fresh children of the set's program, in one executor batch for all sets."""
    out = [ResolvedCalls() for _ in sets]
    jobs, plan = [], []  # plan: (set, CALL, shape, indices evaluated)
    for q, item in enumerate(sets):
        for call in dict.fromkeys(item.calls):
            shape = call_shape(call, item.entry_point)
            if isinstance(shape, str):
                out[q].calls[call], out[q].reasons[call] = None, shape
                continue
            pending = [i for i in range(len(shape.parts)) if i not in shape.values]
            if not pending:
                _finish(out[q], call, item.entry_point, shape, shape.values)
                continue
            for attempt in (0, 1):  # two fresh children: a value that differs between them is not a value
                jobs.append(
                    Job(
                        id=f"args:{item.id}:{attempt}",
                        code=item.program,
                        calls=[shape.parts[i][1] for i in pending],
                        timeout=timeout,
                    )
                )
            plan.append((q, call, shape, pending))
    if not jobs:
        return out
    results = executor.run(jobs, progress=progress) if progress is not None else executor.run(jobs)
    for k, (q, call, shape, pending) in enumerate(plan):
        first, second = results[2 * k], results[2 * k + 1]
        values = dict(shape.values)
        why = None
        for i, a, b in zip(pending, first.results, second.results, strict=False):
            if not (first.defined and second.defined) or a.status != "ok" or b.status != "ok":
                why = "an argument did not evaluate: " + str(a.error or b.error or a.status)[:120]
            elif contains_unserializable(a.value) or contains_unserializable(b.value):
                why = "an argument is not plain data"
            elif encode_expected(a.value) != encode_expected(b.value):
                why = "an argument changes from one evaluation to the next"
            if why:
                break
            values[i] = a.value
        if why or len(values) < len(shape.parts):
            out[q].calls[call], out[q].reasons[call] = None, why or "an argument did not evaluate"
            continue
        _finish(out[q], call, sets[q].entry_point, shape, values)
    return out


def _finish(resolved: ResolvedCalls, call: str, entry_point: str, shape: CallShape, values: dict[int, Any]) -> None:
    try:
        written = written_out(entry_point, shape, values)
    except (ValueError, RecursionError):
        resolved.calls[call], resolved.reasons[call] = None, "an argument is not plain data"
        return
    if len(written) > MAX_RESOLVED_CALL:
        resolved.calls[call], resolved.reasons[call] = None, "the arguments are too large"
        return
    resolved.calls[call] = written
