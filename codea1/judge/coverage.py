"""Line and branch coverage traced in a sandbox child: the calls of a test suite run against one function's
code under a `sys.settrace` hook, and the child returns the lines and arcs it saw.

    job = coverage_job(fn.task_id, prelude, fn.code, calls, 5.0 * len(calls))
    lines, arcs = result.results[0].value         # sorted lists; an arc (-N, ...) / (..., -N): entry / exit

The prelude runs first, untraced; then the function's code and each call run under the hook, which records
only frames of the function's code (compiled as TRACE_FILENAME). An exception of the code or of a call ends
only that step. Generated tests are untrusted, so the trace is taken in the sandbox; the parent turns it
into coverage with coverage.py's parser (codea1.eval.suite_eval).
"""

from __future__ import annotations

from collections.abc import Sequence

from codea1.sandbox.api import Job

__all__ = ["COVERAGE_HARNESS", "TRACE_FILENAME", "coverage_job"]

TRACE_FILENAME = "<codea1-function>"

COVERAGE_HARNESS = """
import sys as __codea1_sys

def __codea1_coverage(prelude, source, calls):
    ns = {"__name__": "__codea1_cov__"}
    exec(compile(prelude, "<prelude>", "exec"), ns)
    lines, arcs, last = set(), set(), {}

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename != "__TRACE__":
            return None
        key = id(frame)
        if event == "call":
            last[key] = -code.co_firstlineno
        elif event == "line":
            lines.add(frame.f_lineno)
            arcs.add((last.get(key, -code.co_firstlineno), frame.f_lineno))
            last[key] = frame.f_lineno
        elif event == "return":
            arcs.add((last.pop(key, -code.co_firstlineno), -code.co_firstlineno))
        return tracer

    compiled = compile(source, "__TRACE__", "exec")
    __codea1_sys.settrace(tracer)
    try:
        try:
            exec(compiled, ns)
        except BaseException:
            pass
        for call in calls:
            try:
                eval(call, ns)
            except BaseException:
                pass
    finally:
        __codea1_sys.settrace(None)
    return (sorted(lines), sorted(arcs))
""".replace("__TRACE__", TRACE_FILENAME)


def coverage_job(job_id: str, prelude: str, source: str, calls: Sequence[str], timeout: float) -> Job:
    """The job that runs `prelude`, then `source` traced, then each of `calls` traced, in one namespace; its
    one call returns (lines, arcs) of `source` that ran, within `timeout` seconds for all of it."""
    return Job(
        id=job_id,
        code=COVERAGE_HARNESS,
        calls=[f"__codea1_coverage({prelude!r}, {source!r}, {list(calls)!r})"],
        timeout=timeout,
    )
