"""`codea1 exec`: run (code, tests) or (code, calls) jobs from a JSONL file in the sandbox.

Input lines:  {"id": str, "code": str, "tests": [str, ...], "entry_point": str (optional)}
                  (assert statements, meaning what Python's assert means; with entry_point only the calls
                  of that function run in the sandboxed child, see codea1.judge.oracle)
          or  {"id": str, "code": str, "calls": [str, ...]}   (expressions to evaluate)
`codea1 exec --isolation` prints every isolation layer, on or missing on this machine, and what it needs.
Output lines, in input order: {"id", "defined", "error", "results": [{"status", "value", "error",
"seconds"}, ...]} with values in the tagged form of codea1.sandbox.values. A bad input line gives an
output line with its error and no results; the batch goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from codea1.errors import UserError

if TYPE_CHECKING:
    from codea1.judge.oracle import AssertCase
    from codea1.sandbox import Job, JobResult


def register(sub: argparse._SubParsersAction) -> None:
    """Adds the `exec` command."""
    p = sub.add_parser(
        "exec",
        help="run code against tests or calls in the sandbox (JSONL in, JSONL out)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--input", help="JSONL file of jobs ('-' for stdin)")
    p.add_argument("--output", help="JSONL file for results ('-' for stdout)")
    p.add_argument(
        "--isolation",
        action="store_true",
        help="print every isolation layer of the sandbox, on or missing on this machine, and exit",
    )
    p.add_argument("--timeout", type=float, default=2.0, help="per-call time limit in seconds (default 2)")
    p.add_argument(
        "--define-timeout",
        type=float,
        default=5.0,
        help="time limit for running each program's code itself, seconds (default 5)",
    )
    p.add_argument("--workers", type=int, default=None, help="parallel workers (default: all CPUs)")
    p.add_argument("--memory-mb", type=int, default=1024, help="memory a program may allocate (default 1024)")
    p.add_argument("--no-progress", action="store_true", help="do not show a progress bar")
    p.set_defaults(func=run_exec)


def parse_line(line: str, lineno: int) -> tuple[dict | None, str | None]:
    """Validates one input line; returns (record, None) or (None, error sentence)."""
    try:
        rec = json.loads(line)
    except ValueError as exc:
        return None, f"line {lineno}: not valid JSON ({exc.msg})"
    if type(rec) is not dict:
        return None, f"line {lineno}: expected a JSON object with id, code and tests or calls"
    if type(rec.get("code")) is not str:
        return None, f"line {lineno}: field 'code' must be a string"
    has_tests, has_calls = "tests" in rec, "calls" in rec
    if has_tests == has_calls:
        return None, f"line {lineno}: give exactly one of 'tests' or 'calls'"
    items = rec["tests" if has_tests else "calls"]
    if type(items) is not list or not all(type(x) is str for x in items):
        return None, f"line {lineno}: field '{'tests' if has_tests else 'calls'}' must be a list of strings"
    return rec, None


def _result_row(res: JobResult) -> dict:
    from codea1.sandbox.values import to_json

    return {
        "id": res.id,
        "defined": res.defined,
        "error": res.error,
        "results": [
            {"status": r.status, "value": to_json(r.value), "error": r.error, "seconds": round(r.seconds, 6)}
            for r in res.results
        ],
    }


def _read_lines(source: str) -> list[str]:
    """The input's lines: stdin for '-', else the file (a missing file is a user error)."""
    if source == "-":
        return sys.stdin.read().split("\n")  # JSONL: "\n" only, never splitlines()
    path = Path(source)
    if not path.is_file():
        raise UserError(f"--input {source}: no such file; pass a JSONL file of jobs")
    return path.read_text(encoding="utf-8", errors="replace").split("\n")


def _bad_line_row(line: str, err: str | None) -> dict:
    """The output row of an input line that is not a job: its id where one can be read, and the error."""
    raw_id = None
    try:
        obj = json.loads(line)
        raw_id = obj.get("id") if type(obj) is dict else None
    except ValueError:
        pass
    return {"id": raw_id if type(raw_id) is str else None, "defined": False, "error": err, "results": []}


@dataclass
class _Plan:
    """The output rows in input order (None where a job's result goes), and the jobs with their rows' places."""

    rows: list[dict | None] = field(default_factory=list)
    cases: list[AssertCase] = field(default_factory=list)  # (code, tests) lines
    case_pos: list[int] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)  # (code, calls) lines
    job_pos: list[int] = field(default_factory=list)


def _plan(lines: list[str], timeout: float) -> _Plan:
    """Parses the input lines into assert cases and call jobs; a bad line gets its error row at once."""
    from codea1.judge.jobs import calls_job
    from codea1.judge.oracle import AssertCase

    plan = _Plan()
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec, err = parse_line(line, lineno)
        pos = len(plan.rows)
        if rec is None:
            plan.rows.append(_bad_line_row(line, err))
            continue
        plan.rows.append(None)
        rid = rec.get("id")
        rid = rid if type(rid) is str else str(lineno)
        if "tests" in rec:
            entry = rec.get("entry_point")
            plan.cases.append(
                AssertCase(
                    code=rec["code"],
                    tests=rec["tests"],
                    id=rid,
                    entry_point=entry if type(entry) is str and entry else None,
                )
            )
            plan.case_pos.append(pos)
        else:
            plan.jobs.append(calls_job(rid, rec["code"], rec["calls"], timeout))
            plan.job_pos.append(pos)
    return plan


def _run_plan(plan: _Plan, args: argparse.Namespace) -> None:
    """Runs the plan's cases, then its jobs, in one sandbox, filling their rows."""
    from codea1.judge.oracle import run_assertions
    from codea1.sandbox import LocalExecutor

    rows = plan.rows
    total = len(plan.cases) + len(plan.jobs)
    with (
        LocalExecutor(args.workers, memory_mb=args.memory_mb, define_timeout=args.define_timeout) as ex,
        _progress(total, not args.no_progress) as tick,
    ):
        base = [0]

        def report(done: int, _total: int) -> None:
            tick(base[0] + done)

        if plan.cases:
            results = run_assertions(ex, plan.cases, timeout=args.timeout, progress=report)
            for pos, res in zip(plan.case_pos, results, strict=True):
                rows[pos] = _result_row(res)
            base[0] = len(plan.cases)
        if plan.jobs:
            for pos, res in zip(plan.job_pos, ex.run(plan.jobs, progress=report), strict=True):
                rows[pos] = _result_row(res)


def _write_rows(rows: list[dict | None], output: str) -> None:
    """One JSON line per row, to stdout for '-', else to the file."""
    out = sys.stdout if output == "-" else open(output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()


def run_exec(args: argparse.Namespace) -> int:
    """Handler of `codea1 exec`."""
    if args.isolation:
        from codea1.sandbox import isolation_report

        print(isolation_report())
        return 0
    if not args.input or not args.output:
        raise UserError("codea1 exec needs --input and --output (or --isolation to see the sandbox's layers)")
    lines = _read_lines(args.input)
    if args.timeout <= 0 or args.define_timeout <= 0:
        raise UserError("--timeout and --define-timeout must be positive numbers of seconds")
    plan = _plan(lines, args.timeout)
    _run_plan(plan, args)
    _write_rows(plan.rows, args.output)
    rows = plan.rows
    bad = sum(1 for r in rows if r and r["error"] and not r["results"])
    print(f"codea1 exec: {len(rows)} lines, {bad} without results -> {args.output}", file=sys.stderr)
    return 0


class _progress:
    """A rich progress bar on stderr (or nothing), used as `with _progress(total, show) as tick`."""

    def __init__(self, total: int, show: bool) -> None:
        self.total, self.show, self.bar, self.task = total, show and total > 0, None, None

    def __enter__(self) -> Callable[[int], None]:
        if self.show:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("sandbox", total=self.total)
        return self.tick

    def tick(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
