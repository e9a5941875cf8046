"""Deciding asserts against a candidate without letting the candidate decide them (the oracle).

A test is any `assert EXPR` statement and means what Python's `assert` means. `run_assertions` cuts the
calls of the function under test out of EXPR (codea1.judge.asserts): only those calls run in the
candidate's sandboxed child, and only their plain values come back (a value that is not plain data fails
the test where the assert reaches it). The rest of EXPR is decided without the candidate's code: in this
process when it is `VALUE <op> LITERAL` (or the bare value's truth, codea1.judge.equality.holds), else in a
child that runs the oracle program (GT's program, or a clean prelude) with the candidate's values pasted in
as literals. No test can change what a later one sees there (a builtin such as `bool`, the oracle's
helpers, GT's names and objects): a test whose template could change anything is decided in a process
forked from that child for it (but the last, which no later test follows), and the others change nothing
(codea1.judge.asserts.changes_nothing). The iterations of a comprehension split per iteration run as calls of
their own (up to MAX_SPLIT calls), so `any` and `all` stop where Python stops.
Used by `codea1 data check` (golden tests), the Golden-Tests baseline, `codea1 exec`, test evaluation and
decontamination.
"""

from __future__ import annotations

import ast
import functools
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from keyword import iskeyword
from typing import Any

from codea1.judge.asserts import PRE, VALUES, Assertion, changes_nothing, names_defined, read_assertion
from codea1.judge.equality import holds
from codea1.judge.literals import plain_source
from codea1.sandbox import CallResult, Job, JobResult
from codea1.sandbox.api import Executor, OnProgress
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable

CLEAN_PRELUDE = "import math\n"  # what a test's EXPECTED may use when there is no GT program to run it in
MAX_SPLIT = 64  # calls of the function a split comprehension runs one by one; a longer loop runs as one call
NOT_PLAIN = "the function returned a value that is not plain data"
# The candidate's values as the oracle's template reads them: a call that did not return (it raised, timed
# out or crashed) or whose value is not plain data raises when the template reaches it, and only then, so
# `and`, `or`, `if-else`, `any` and `all` keep Python's short-circuits (the candidate's child computes every
# lifted call, eagerly). `failed` maps a position to the call's index in the test's calls (a loop's rows
# hold such lists too). The helper's name and its exception's text carry a nonce drawn for each
# run_assertions call, after the candidates ran: a candidate's value cannot name the helper or forge its
# message, and a test that names it reaches only itself (ALONE).
LAZY_VALUES = """
def __codea1_lazy_{nonce}(values, failed):
    class Values(list):
        def __getitem__(self, i):
            if i in failed:
                raise LookupError("{nonce}:%d" % failed[i])
            return list.__getitem__(self, i)

        def __iter__(self):
            return (self[i] for i in range(len(self)))
    return Values(values)
"""
# An expression of a test evaluated in a process forked for it (from the oracle's child, or from the child
# that runs the program under test): whatever it changes (builtins, the helpers above, GT's names and
# objects, the program's functions) goes with that process, so no later test sees it. The forked process
# keeps no descriptor but its own pipe (it cannot write the child's result frames) and sends one message:
# its value as plain data (codea1.sandbox.values), or its exception's text, which the child raises again
# under the same name.
ALONE = """
def {name}(expression, _os=__import__("os"), _json=__import__("json"),
           _values=__import__("codea1.sandbox.values", fromlist=["to_json"])):
    r, w = _os.pipe()
    pid = _os.fork()
    if pid == 0:
        try:
            _os.close(r)
            _os.closerange(3, w)
            _os.closerange(w + 1, max(w + 1, _os.sysconf("SC_OPEN_MAX")))
            try:
                out = "V" + _json.dumps(_values.to_json(expression()))
            except BaseException as exc:
                try:
                    out = ("E" + type(exc).__name__ + ": " + str(exc))[:400]
                except BaseException:
                    out = "EException: "
            data = out.encode("utf-8", "surrogatepass")
            data = len(data).to_bytes(4, "big") + data
            while data:
                data = data[_os.write(w, data):]
        finally:
            _os._exit(0)
    _os.close(w)
    data = bytearray()
    try:  # the whole message, not the end of the pipe (a process the test left may hold it open)
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = _os.read(r, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        _os.close(r)
        _os.waitpid(pid, 0)
    if len(data) < 5 or len(data) != 4 + int.from_bytes(data[:4], "big"):
        raise ChildProcessError("the test's process ended before it had a result")
    body = data[4:].decode("utf-8", "surrogatepass")
    if body[0] == "V":
        return _values.from_json(_json.loads(body[1:]))
    name, _, message = body[1:].partition(": ")
    raise type(name if name.isidentifier() else "Exception", (Exception,), {{}})(message)
"""
APART = "__codea1_apart"  # ALONE's name in the child of the program under test


class _PasteRows(ast.NodeTransformer):
    def __init__(self, rows: ast.expr) -> None:
        self.rows = rows

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.rows if node.id == PRE else node


Layout = list  # per template position: None (one call) or (rows, calls per row) of a loop split per iteration
_NO_ROWS = "the loop of the assert could not be evaluated as plain data"


def _paste_loop_rows(
    executor: Executor, cases: Sequence[AssertCase], read: list[list[Assertion | None]], timeout: float
) -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], Layout]]:
    """Phase 0 of a per-iteration lift: each loop's rows (the loop names its calls use) evaluated by the
    oracle program, one job each (a loop with side effects reaches no other), and put into the candidate's
    calls as plain values: one call per iteration and call of the function (_split_rows), or one call for
    the whole loop past MAX_SPLIT. Returns (case, test) -> why, for a test whose rows could not be computed
    or are not plain data (that test fails), and (case, test) -> Layout for the tests with a split loop."""
    todo = [
        (n, t, i, src)
        for n, row in enumerate(read)
        for t, a in enumerate(row)
        if a is not None
        for i, src in a.pre.items()
    ]
    if not todo:
        return {}, {}
    jobs = [
        Job(id=f"rows:{cases[n].id or n}", code=cases[n].oracle or CLEAN_PRELUDE, calls=[src], timeout=timeout)
        for n, _, _, src in todo
    ]
    refused: dict[tuple[int, int], str] = {}
    split: dict[tuple[int, int], dict[int, list[list[str]]]] = {}
    for (n, t, i, _), res in zip(todo, executor.run(jobs), strict=True):
        got = res.results[0] if res.defined and res.results else None
        if got is None or got.status != "ok" or contains_unserializable(got.value):
            refused[n, t] = _NO_ROWS
            continue
        a = read[n][t]
        try:
            rows = _split_rows(a.calls[i], got.value)
            if rows is not None:
                split.setdefault((n, t), {})[i] = rows
                continue
            pasted = ast.parse(plain_source(got.value), mode="eval").body
            a.calls[i] = ast.unparse(_PasteRows(pasted).visit(ast.parse(a.calls[i], mode="eval")))
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            refused[n, t] = _NO_ROWS
    layouts: dict[tuple[int, int], Layout] = {}
    for (n, t), by_position in split.items():
        if (n, t) in refused:
            continue
        a, calls, layout = read[n][t], [], []
        for i, call in enumerate(a.calls):
            rows = by_position.get(i)
            layout.append(None if rows is None else (len(rows), len(_element_calls(call))))
            calls.extend([call] if rows is None else [c for row in rows for c in row])
        a.calls[:] = calls
        layouts[n, t] = layout
    return refused, layouts


def _element_calls(call: str) -> list[ast.expr]:
    """The calls of one iteration in a per-iteration call `[(CALL_0, ...) for TARGET in __codea1_pre]`."""
    return ast.parse(call, mode="eval").body.elt.elts


def _split_rows(call: str, rows: object) -> list[list[str]] | None:
    """The per-iteration call `[(CALL_0, ...) for TARGET in __codea1_pre]` as one call per iteration and
    CALL_j: `[CALL_j for TARGET in [ROW]][0]`, ROW the oracle's plain row; None when that makes more than
    MAX_SPLIT calls (the loop then runs as one call)."""
    node = ast.parse(call, mode="eval").body
    elements, target = node.elt.elts, node.generators[0].target
    if type(rows) is not list or len(rows) * len(elements) > MAX_SPLIT:
        return None
    out = []
    for row in rows:
        source = ast.List([ast.parse(plain_source(row), mode="eval").body], ast.Load())
        loop = [ast.comprehension(target, source, [], 0)]
        out.append([ast.unparse(ast.Subscript(ast.ListComp(e, loop), ast.Constant(0), ast.Load())) for e in elements])
    return out


def _resolve_calls(
    cases: Sequence[AssertCase], read: list[list[Assertion | None]], refused: dict[tuple[int, int], str]
) -> None:
    """Puts each case's resolved CALLs in place of the CALLs as written (cases with `resolved`); a test
    with a CALL that has no resolved form is refused."""
    for n, (case, row) in enumerate(zip(cases, read, strict=True)):
        if case.resolved is None:
            continue
        for t, a in enumerate(row):
            if a is None or a.pre or (n, t) in refused:  # a loop's CALLs hold the oracle's rows already
                continue
            written = [case.resolved.get(c) for c in a.calls]
            if any(w is None for w in written):
                refused[n, t] = "an argument of the call is not a plain value that two evaluations agree on"
            else:
                a.calls[:] = written


def _reached(result: CallResult, nonce: str, calls: list[CallResult]) -> CallResult | None:
    """The call that did not return and that the template reached (the oracle raised the lazy values'
    error, named by this run's nonce), or None."""
    if result.status != "error":
        return None
    found = re.search(re.escape(nonce) + r":(\d+)", result.error or "")
    if found is None or int(found.group(1)) >= len(calls):
        return None
    call = calls[int(found.group(1))]
    return call if call.status != "ok" else None


@functools.lru_cache(maxsize=256)
def _program_names(program: str) -> frozenset[str]:
    """The names a program binds (codea1.judge.asserts.names_defined), read once per program text."""
    return names_defined(program)


def _defined(case: AssertCase) -> frozenset[str]:
    """Without an entry point, the names the candidate's code binds are its functions under test."""
    return frozenset() if case.entry_point else _program_names(case.code)


# ---------------------------------------------------------------------------- running asserts
@dataclass
class AssertCase:
    """A candidate program and the assert statements to run against it.

    entry_point: the function under test (None: the left side of each comparison runs in the candidate).
    oracle: the program an assert's non-literal parts are evaluated in (GT's program; default a clean
        prelude). It never holds the candidate's code.
    resolved: CALL source -> the CALL with its arguments as plain values (codea1.judge.resolve), or None
        where they could not be; given, the candidate's child runs only resolved CALLs, and a test with a
        CALL that could not be resolved fails (a loop's CALLs take the oracle's plain rows as they are).
    """

    code: str
    tests: list[str]
    entry_point: str | None = None
    oracle: str | None = None
    id: str = ""
    float_tol: float | None = None
    resolved: Mapping[str, str | None] | None = None


def run_assertions(
    executor: Executor, cases: Sequence[AssertCase], timeout: float = 2.0, progress: OnProgress = None
) -> list[Any]:
    """Runs each case's asserts against its code; one JobResult per case, one CallResult per test.

    A test's status: "pass" | "fail" (the assert does not hold on the candidate's values, raises on them,
    or reaches a value that is not plain data) | "error" / "timeout" / "crash" (a call of the function
    under test that the assert reaches did not return) | "invalid" (not one assert statement, or the
    oracle program does not run). A case whose code does not run has defined=False and every test
    "invalid" with the reason. The candidate's child only computes the lifted calls' values; every
    verdict is decided in this process or in an oracle child that never runs the candidate's code. No
    test's verdict depends on what an earlier test of the case changed, in either child (ALONE).
    """
    names = [frozenset({case.entry_point}) if case.entry_point else _defined(case) for case in cases]
    read = [
        [read_assertion(t, case.entry_point, names[n]) if type(t) is str else None for t in case.tests]
        for n, case in enumerate(cases)
    ]
    refused, layouts = _paste_loop_rows(executor, cases, read, timeout)
    _resolve_calls(cases, read, refused)
    jobs, spans = _candidate_jobs(cases, read, refused, timeout, names)
    ran = executor.run(jobs, progress=progress) if jobs else []
    nonce = secrets.token_hex(8)  # drawn after the candidates ran (LAZY_VALUES)

    out: list[Any] = []
    # (case, test, `bool(template)` with values pasted in, calls, whether the template changes nothing)
    pending: list[tuple[int, int, str, list, bool]] = []
    for n, (case, row, span, res) in enumerate(zip(cases, read, spans, ran, strict=True)):
        results: list[Any] = []
        for t, (a, (lo, hi)) in enumerate(zip(row, span, strict=True)):
            if a is None:
                results.append(CallResult("invalid", error="not one assert statement"))
            elif (n, t) in refused:
                results.append(CallResult("fail", error=refused[n, t]))
            else:
                got = _outcomes(res.results[lo:hi] if res.defined else [])
                result, source = _judge_values(a, got, case, names[n], nonce, layouts.get((n, t)))
                results.append(result)
                if source is not None:
                    pending.append((n, t, source, got, changes_nothing(a.template)))
        if not res.defined:
            results = [CallResult("invalid", error=res.error) for _ in case.tests]
        out.append(JobResult(res.id, res.defined, res.error, results, res.stdout))
    _decide_in_oracle(executor, cases, out, pending, nonce, timeout)
    return out


def _candidate_jobs(
    cases: Sequence[AssertCase],
    read: list[list],
    refused: dict[tuple[int, int], str],
    timeout: float,
    names: Sequence[frozenset[str]],
) -> tuple[list[Job], list[list[tuple[int, int]]]]:
    """One job per case: its code and the calls lifted from its readable, unrefused asserts; with each
    test's span in that job's call list. A call that runs code of the test's beside the program's (an
    argument such as `(globals().__setitem__('f', ...), 2)[1]`) runs in a process of its own (ALONE), but
    the last: what it changes reaches no later test."""
    jobs, spans = [], []
    for n, (case, row) in enumerate(zip(cases, read, strict=True)):
        calls: list[str] = []
        span: list[tuple[int, int]] = []
        for t, a in enumerate(row):
            start = len(calls)
            if a is not None and (n, t) not in refused:
                calls.extend(a.calls)
            span.append((start, len(calls)))
        spans.append(span)
        # the program's own names may be read and called (what their code does is the program's, as in a
        # test file); code of the test's that could change anything else runs apart
        apart = [
            k
            for k, c in enumerate(calls[:-1])
            if not changes_nothing(c, calling=names[n])
            and not changes_nothing(c, calling=names[n] | _program_names(case.code))
        ]
        for k in apart:
            calls[k] = f"{APART}(lambda: {calls[k]})"
        code = f"{case.code}\n{ALONE.format(name=APART)}" if apart else case.code
        jobs.append(Job(id=case.id or str(n), code=code, calls=calls, timeout=timeout))
    return jobs, spans


def _outcomes(results: list[CallResult]) -> list[CallResult]:
    """The calls' results as a test reads them: a value that is not plain data is a failed call ("fail")."""
    return [
        CallResult("fail", r.value, NOT_PLAIN, r.seconds)
        if r.status == "ok" and (r.value is UNSERIALIZABLE or contains_unserializable(r.value))
        else r
        for r in results
    ]


def _judge_values(
    a: Assertion, got: list, case: AssertCase, names: frozenset[str], nonce: str, layout: Layout | None = None
) -> tuple[CallResult, str | None]:
    """A test's verdict from its calls' results, decided here where it can be; otherwise a "pending" result
    and the `bool(template)` source, with the values pasted in, that the oracle child decides it by."""
    failed = {i for i, r in enumerate(got) if r.status != "ok"}
    seconds = sum(float(r.seconds or 0.0) for r in got)
    values = [r.value for r in got]
    shown = values[0] if len(values) == 1 else values
    if failed and (a.fast is not None or len(failed) == len(got)):  # the template needs every value
        bad = got[min(failed)]
        return CallResult(bad.status, shown if bad.error == NOT_PLAIN else None, bad.error, seconds), None
    if a.fast is not None and len(values) == 1:
        op, expected = a.fast
        ok = holds(op, values[0], expected, case.float_tol)
        return CallResult("pass" if ok else "fail", shown, None, seconds), None
    try:
        pasted = _pasted(values, failed, layout or [None] * len(values), nonce)
    except (ValueError, RecursionError):
        return CallResult("fail", shown, "a value could not be passed to the oracle", seconds), None
    # the names of the candidate's functions are not GT's in the template (a bare `f`, the one reference
    # left there, is an object of its own)
    shadow = "".join(f", {x}=object()" for x in sorted(names) if x.isidentifier() and not iskeyword(x))
    return CallResult("pending", shown, None, seconds), f"bool((lambda {VALUES}{shadow}: ({a.template}))({pasted}))"


def _pasted(values: list, failed: set[int], layout: Layout, nonce: str) -> str:
    """The source of the template's values: one per position, a split loop's as its list of rows (a tuple
    per iteration); a call that failed is a lazy value that raises where the template reaches it."""
    flat = iter(range(len(values)))

    def items(count: int, tuple_: bool) -> str:
        cells, lazy = [], {}
        for j in range(count):
            k = next(flat)
            cells.append("None" if k in failed else plain_source(values[k]))
            if k in failed:
                lazy[j] = k
        if lazy:
            return f"__codea1_lazy_{nonce}([{', '.join(cells)}], {lazy!r})"
        return f"({', '.join(cells)},)" if tuple_ else f"[{', '.join(cells)}]"

    top, lazy_top = [], {}
    for position, shape in enumerate(layout):
        if shape is None:
            k = next(flat)
            top.append("None" if k in failed else plain_source(values[k]))
            if k in failed:
                lazy_top[position] = k
        else:
            top.append(f"[{', '.join(items(shape[1], True) for _ in range(shape[0]))}]")
    return f"__codea1_lazy_{nonce}([{', '.join(top)}], {lazy_top!r})" if lazy_top else f"[{', '.join(top)}]"


def _decide_in_oracle(
    executor: Executor,
    cases: Sequence[AssertCase],
    out: list[Any],
    pending: list[tuple[int, int, str, list, bool]],
    nonce: str,
    timeout: float,
) -> None:
    """Decides the pending tests of the cases whose code ran, in one oracle child per case that runs GT's
    program (or a clean prelude), never the candidate's: a test whose template could change what a later
    test sees (codea1.judge.asserts.changes_nothing) in a process of its own (ALONE), the others and the
    last in the child itself; sets each pending result's status in `out`."""
    by_case: dict[int, list[tuple[int, str]]] = {}
    calls_of: dict[tuple[int, int], list] = {}
    pending_source: dict[tuple[int, int], str] = {}
    for n, t, source, got, pure in pending:
        if out[n].defined:
            by_case.setdefault(n, []).append((t, source if pure else f"__codea1_alone_{nonce}(lambda: {source})"))
            calls_of[n, t] = got
            pending_source[n, t] = source
    if not by_case:
        return
    alone = {n for n, tests in by_case.items() if any(s != pending_source[n, t] for t, s in tests[:-1])}
    keys = list(by_case)
    oracle_jobs = [
        Job(
            id=f"oracle:{cases[n].id or n}",
            code=(cases[n].oracle or CLEAN_PRELUDE)
            + LAZY_VALUES.format(nonce=nonce)
            + (ALONE.format(name=f"__codea1_alone_{nonce}") if n in alone else ""),
            # a test whose template could change what a later test sees runs in a process of its own (ALONE);
            # the last has no later test
            calls=[s for _, s in by_case[n][:-1]] + [pending_source[n, by_case[n][-1][0]]],
            timeout=timeout,
        )
        for n in keys
    ]
    for n, res in zip(keys, executor.run(oracle_jobs), strict=True):
        for (t, _), r in zip(by_case[n], res.results if res.defined else [], strict=False):
            prev = out[n].results[t]
            call = _reached(r, nonce, calls_of[n, t])
            if r.status == "ok" and type(r.value) is bool:
                prev.status = "pass" if r.value else "fail"
            elif call is not None:  # the assert needed a call that did not return: its outcome
                prev.status, prev.error = call.status, call.error
            else:  # the assert raised on the candidate's values (or gave no bool): a failed test
                prev.status, prev.error = "fail", f"the assert's expression failed: {r.error or r.status}"
        if not res.defined:
            for t, _ in by_case[n]:
                out[n].results[t].status = "invalid"
                out[n].results[t].error = f"the oracle program does not run: {res.error}"
