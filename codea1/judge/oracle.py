"""Deciding asserts against a candidate without letting the candidate decide them (the oracle).

A test is any `assert EXPR` statement and means what Python's `assert` means. `run_assertions` cuts the
calls of the function under test out of EXPR (codea1.judge.asserts): only those calls run in the
candidate's sandboxed child, and only their plain values come back (a value that is not plain data fails
the test). The rest of EXPR is decided without the candidate's code: in this process when it is
`VALUE <op> LITERAL` (or the bare value's truth, codea1.judge.equality.holds), else in a child that runs
the oracle program (GT's program, or a clean prelude) with the candidate's values pasted in as literals.
Used by `codea1 data check` (golden tests), the Golden-Tests baseline, `codea1 exec`, test evaluation and
decontamination.
"""

from __future__ import annotations

import ast
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from keyword import iskeyword
from typing import Any

from codea1.judge.asserts import PRE, VALUES, Assertion, names_defined, read_assertion
from codea1.judge.equality import holds
from codea1.judge.literals import plain_source
from codea1.sandbox import CallResult, Job, JobResult
from codea1.sandbox.api import Executor, OnProgress
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable

CLEAN_PRELUDE = "import math\n"  # what a test's EXPECTED may use when there is no GT program to run it in
# The candidate's values as the oracle's template reads them: a call that did not return (it raised, timed
# out or crashed) raises when the template reaches it, and only then, so `and`, `or`, `if-else`, `any` and
# `all` keep Python's short-circuits (the candidate's child computes every lifted call, eagerly). The
# helper's name and its exception's text carry a nonce drawn for each run_assertions call, after the
# candidates ran: neither a candidate's value nor a test's text can name the helper or forge its message.
LAZY_VALUES = """
def __codea1_lazy_{nonce}(values, failed):
    class Values(list):
        def __getitem__(self, i):
            if i in failed:
                raise LookupError("{nonce}:%d" % i)
            return list.__getitem__(self, i)
    return Values(values)
"""


class _PasteRows(ast.NodeTransformer):
    def __init__(self, rows: ast.expr) -> None:
        self.rows = rows

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.rows if node.id == PRE else node


def _paste_loop_rows(
    executor: Executor, cases: Sequence[AssertCase], read: list[list[Assertion | None]], timeout: float
) -> dict[tuple[int, int], str]:
    """Phase 0 of a per-iteration lift: each loop's rows (the loop names its calls use) evaluated by the
    oracle program, one job each (a loop with side effects reaches no other), and pasted into the
    candidate's call as plain values. Returns (case, test) -> why, for a test whose rows could not be
    computed or are not plain data (that test fails)."""
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
    for (n, t, i, _), res in zip(todo, executor.run(jobs), strict=True):
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


def _defined(case: AssertCase) -> frozenset[str]:
    """Without an entry point, the names the candidate's code binds are its functions under test."""
    return frozenset() if case.entry_point else names_defined(case.code)


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
    or a value is not plain data) | "error" / "timeout" / "crash" (a call of the function under test did
    not return) | "invalid" (not one assert statement, or the oracle program does not run). A case whose code does not run has defined=False and every test
    "invalid" with the reason. The candidate's child only computes the lifted calls' values; every
    verdict is decided in this process or in an oracle child that never runs the candidate's code.
    """
    names = [frozenset({case.entry_point}) if case.entry_point else _defined(case) for case in cases]
    read = [
        [read_assertion(t, case.entry_point, names[n]) if type(t) is str else None for t in case.tests]
        for n, case in enumerate(cases)
    ]
    refused = _paste_loop_rows(executor, cases, read, timeout)
    _resolve_calls(cases, read, refused)
    jobs, spans = _candidate_jobs(cases, read, refused, timeout)
    ran = executor.run(jobs, progress=progress) if jobs else []
    nonce = secrets.token_hex(8)  # drawn after the candidates ran (LAZY_VALUES)

    out: list[Any] = []
    pending: list[tuple[int, int, str, list]] = []  # (case, test, `bool(template)` with values pasted in, calls)
    for n, (case, row, span, res) in enumerate(zip(cases, read, spans, ran, strict=True)):
        results: list[Any] = []
        for t, (a, (lo, hi)) in enumerate(zip(row, span, strict=True)):
            if a is None:
                results.append(CallResult("invalid", error="not one assert statement"))
            elif (n, t) in refused:
                results.append(CallResult("fail", error=refused[n, t]))
            else:
                got = res.results[lo:hi] if res.defined else []
                result, source = _judge_values(a, got, case, names[n], nonce)
                results.append(result)
                if source is not None:
                    pending.append((n, t, source, got))
        if not res.defined:
            results = [CallResult("invalid", error=res.error) for _ in case.tests]
        out.append(JobResult(res.id, res.defined, res.error, results, res.stdout))
    _decide_in_oracle(executor, cases, out, pending, nonce, timeout)
    return out


def _candidate_jobs(
    cases: Sequence[AssertCase], read: list[list], refused: dict[tuple[int, int], str], timeout: float
) -> tuple[list[Job], list[list[tuple[int, int]]]]:
    """One job per case: its code and the calls lifted from its readable, unrefused asserts; with each
    test's span in that job's call list."""
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
        jobs.append(Job(id=case.id or str(n), code=case.code, calls=calls, timeout=timeout))
    return jobs, spans


def _judge_values(
    a: Assertion, got: list, case: AssertCase, names: frozenset[str], nonce: str
) -> tuple[CallResult, str | None]:
    """A test's verdict from its calls' results, decided here where it can be; otherwise a "pending" result
    and the `bool(template)` source, with the values pasted in, that the oracle child decides it by."""
    failed = [i for i, r in enumerate(got) if r.status != "ok"]
    seconds = sum(float(r.seconds or 0.0) for r in got)
    if failed and (a.fast is not None or len(failed) == len(got)):  # the template needs every value
        bad = got[failed[0]]
        return CallResult(bad.status, None, bad.error, seconds), None
    values = [None if i in failed else r.value for i, r in enumerate(got)]
    shown = values[0] if len(values) == 1 else values
    if any(v is UNSERIALIZABLE or contains_unserializable(v) for v in values):
        return CallResult("fail", shown, "the function returned a value that is not plain data", seconds), None
    if a.fast is not None and len(values) == 1:
        op, expected = a.fast
        ok = holds(op, values[0], expected, case.float_tol)
        return CallResult("pass" if ok else "fail", shown, None, seconds), None
    try:
        pasted = f"[{', '.join(plain_source(v) for v in values)}]"
    except (ValueError, RecursionError):
        return CallResult("fail", shown, "a value could not be passed to the oracle", seconds), None
    pasted = f"__codea1_lazy_{nonce}({pasted}, {set(failed)!r})" if failed else pasted
    # the names of the candidate's functions are not GT's in the template (a bare `f`, the one reference
    # left there, is an object of its own)
    shadow = "".join(f", {x}=object()" for x in sorted(names) if x.isidentifier() and not iskeyword(x))
    return CallResult("pending", shown, None, seconds), f"bool((lambda {VALUES}{shadow}: ({a.template}))({pasted}))"


def _decide_in_oracle(
    executor: Executor,
    cases: Sequence[AssertCase],
    out: list[Any],
    pending: list[tuple[int, int, str, list]],
    nonce: str,
    timeout: float,
) -> None:
    """Decides the pending tests of the cases whose code ran, in one oracle child per case that runs GT's
    program (or a clean prelude), never the candidate's; sets each pending result's status in `out`."""
    by_case: dict[int, list[tuple[int, str]]] = {}
    calls_of: dict[tuple[int, int], list] = {}
    for n, t, source, got in pending:
        if out[n].defined:
            by_case.setdefault(n, []).append((t, source))
            calls_of[n, t] = got
    if not by_case:
        return
    keys = list(by_case)
    oracle_jobs = [
        Job(
            id=f"oracle:{cases[n].id or n}",
            code=(cases[n].oracle or CLEAN_PRELUDE) + LAZY_VALUES.format(nonce=nonce),
            calls=[s for _, s in by_case[n]],
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
