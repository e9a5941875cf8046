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
from pathlib import Path
from typing import Any

from codea1.errors import UserError


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


def _result_row(res: Any) -> dict:
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


def run_exec(args: argparse.Namespace) -> int:
    """Handler of `codea1 exec`."""
    if args.isolation:
        from codea1.sandbox import isolation_report

        print(isolation_report())
        return 0
    if not args.input or not args.output:
        raise UserError("codea1 exec needs --input and --output (or --isolation to see the sandbox's layers)")
    from codea1.judge.oracle import AssertCase, run_assertions
    from codea1.sandbox import Job, LocalExecutor

    if args.input == "-":
        lines = sys.stdin.read().split("\n")  # JSONL: "\n" only, never splitlines()
    else:
        path = Path(args.input)
        if not path.is_file():
            raise UserError(f"--input {args.input}: no such file; pass a JSONL file of jobs")
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    if args.timeout <= 0 or args.define_timeout <= 0:
        raise UserError("--timeout and --define-timeout must be positive numbers of seconds")

    rows: list[dict | None] = []
    tests_items, tests_pos, call_jobs, call_pos = [], [], [], []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec, err = parse_line(line, lineno)
        pos = len(rows)
        if rec is None:
            raw_id = None
            try:
                obj = json.loads(line)
                raw_id = obj.get("id") if type(obj) is dict else None
            except ValueError:
                pass
            rows.append({"id": raw_id if type(raw_id) is str else None, "defined": False, "error": err, "results": []})
            continue
        rows.append(None)
        rid = rec.get("id")
        rid = rid if type(rid) is str else str(lineno)
        if "tests" in rec:
            entry = rec.get("entry_point")
            tests_items.append(
                AssertCase(
                    code=rec["code"],
                    tests=rec["tests"],
                    id=rid,
                    entry_point=entry if type(entry) is str and entry else None,
                )
            )
            tests_pos.append(pos)
        else:
            call_jobs.append(Job(id=rid, code=rec["code"], calls=rec["calls"], timeout=args.timeout))
            call_pos.append(pos)

    total = len(tests_items) + len(call_jobs)
    with (
        LocalExecutor(args.workers, memory_mb=args.memory_mb, define_timeout=args.define_timeout) as ex,
        _progress(total, not args.no_progress) as tick,
    ):
        base = [0]

        def report(done: int, _total: int) -> None:
            tick(base[0] + done)

        if tests_items:
            results = run_assertions(ex, tests_items, timeout=args.timeout, progress=report)
            for pos, res in zip(tests_pos, results, strict=True):
                rows[pos] = _result_row(res)
            base[0] = len(tests_items)
        if call_jobs:
            for pos, res in zip(call_pos, ex.run(call_jobs, progress=report), strict=True):
                rows[pos] = _result_row(res)

    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")  # noqa: SIM115
    try:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
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
