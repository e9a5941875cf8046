"""`codea1 data check` and `codea1 data convert`.

    codea1 data check SPEC [--workers N] [--timeout S] [--test-code-timeout S] [--memory-mb M]
                           [--no-test-code] [--split train|eval] [--source NAME] [--limit N]
                           [--output report.json]
        Runs every GT against its golden tests (and the source's own test program) in the sandbox, shows
        progress, a table of failing rows with reasons and a summary. Exit code 0 when every GT passes,
        1 when some fail (2 for a bad SPEC or file, as for every user error).
    codea1 data convert SPEC --output OUT.jsonl [--split ...] [--source NAME] [--limit N] [--check]
        Writes the problems of any source as JSONL of Problem rows (readable again as a SPEC).

SPEC: bundled | bundled:train | bundled:eval | humaneval | kodcode | kodcode:PATH | FILE.jsonl | FILE.parquet
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

SPEC_HELP = ("problem source: bundled, bundled:train, bundled:eval, humaneval, kodcode, kodcode:PATH, "
             "a .jsonl of problems or a reference-schema .parquet")


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options that choose which problems of SPEC a subcommand works on (see `selection`)."""
    parser.add_argument("--split", choices=["train", "eval"], default=None, help="only this split")
    parser.add_argument("--difficulty", default=None, help="only this difficulty (easy/medium/hard)")
    parser.add_argument("--source", default=None,
                        help="only problems of this source (e.g. mbppplus, humanevalplus in the reference parquet)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems (after the filters)")


def selection(args: argparse.Namespace) -> dict:
    """`load_problems` keywords from the options of `add_selection`."""
    return {"split": args.split, "difficulty": args.difficulty, "source": args.source, "limit": args.limit}


def register(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="problem sets: check ground truth, convert formats")
    data_sub = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    data.set_defaults(func=lambda args: (data.print_help(), 2)[1])

    check = data_sub.add_parser("check", help="run every GT solution against its own tests (in the sandbox)")
    check.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    check.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPUs available)")
    check.add_argument("--timeout", type=float, default=10.0, help="seconds per golden-test call (default 10)")
    check.add_argument("--test-code-timeout", type=float, default=120.0,
                       help="seconds for the source's whole test program per problem (default 120)")
    check.add_argument("--memory-mb", type=int, default=1024,
                       help="address space each sandboxed GT run may add, MiB (default 1024)")
    check.add_argument("--no-test-code", action="store_true", help="run only the golden asserts")
    add_selection(check)
    check.add_argument("--output", type=Path, default=None, help="write a JSON report here")
    check.set_defaults(func=run_check)

    convert = data_sub.add_parser("convert", help="write a problem source as JSONL of Problem rows")
    convert.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    convert.add_argument("--output", type=Path, required=True, help="the .jsonl file to write")
    add_selection(convert)
    convert.add_argument("--check", action="store_true", help="drop problems whose GT fails its tests")
    convert.set_defaults(func=run_convert)


def run_check(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.table import Table

    from codea1.data.check import check_problems
    from codea1.data.loaders import load_problems
    from codea1.errors import UserError
    from codea1.sandbox import Executor

    console = Console(stderr=True)
    started = time.perf_counter()
    problems = load_problems(args.spec, **selection(args))
    loaded = time.perf_counter() - started
    console.print(f"loaded {len(problems)} problems from {args.spec} in {loaded:.1f} s")
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    started = time.perf_counter()
    with Executor(workers=args.workers, memory_mb=args.memory_mb) as executor, Progress(
        TextColumn("checking GT"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        console=console, transient=True,
    ) as bar:
        task = bar.add_task("check", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        results = check_problems(problems, executor, timeout=args.timeout, test_code_timeout=args.test_code_timeout,
                                 run_test_code=not args.no_test_code, progress=progress)
        isolation = executor.isolation_level
    elapsed = time.perf_counter() - started
    failing = [r for r in results if not r.ok]
    out = Console()
    if failing:
        table = Table(title=f"{len(failing)} problem(s) whose GT fails", show_lines=False)
        table.add_column("id", no_wrap=True)
        table.add_column("golden", justify="right")
        table.add_column("test_code")
        table.add_column("reason", overflow="fold")
        for r in failing:
            table.add_row(r.id, f"{r.tests_passed}/{r.tests_total}", r.test_code_status or "-", r.reason)
        out.print(table)
    slowest = max(results, key=lambda r: max(r.gt_seconds, r.test_code_seconds))
    no_tests = sum(r.note == "no tests" for r in results)
    print(
        f"{args.spec}: {len(results)} problems, {len(results) - len(failing)} ok, {len(failing)} failing"
        + (f" ({no_tests} with no tests to run)" if no_tests else "")
        + f"; {sum(r.tests_total for r in results)} golden tests; checked in {elapsed:.1f} s "
        f"(sandbox: {isolation}); slowest GT: {slowest.id} "
        f"({max(slowest.gt_seconds, slowest.test_code_seconds):.2f} s)"
    )
    if args.output is not None:
        report = {
            "spec": args.spec, "problems": len(results), "ok": len(results) - len(failing),
            "failing": len(failing), "seconds": round(elapsed, 2), "isolation": isolation,
            "results": [r.to_dict() for r in results],
        }
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=1), encoding="utf-8")
        print(f"report written to {args.output}")
    return 1 if failing else 0


def run_convert(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_problems
    from codea1.data.problem import write_problems_jsonl

    problems = load_problems(args.spec, check=args.check, **selection(args))
    write_problems_jsonl(problems, args.output)
    print(f"wrote {len(problems)} problems to {args.output}")
    return 0
