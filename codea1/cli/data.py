"""`codea1 data check` and `codea1 data convert`.

    codea1 data check SPEC [--workers N] [--timeout S] [--test-code-timeout S] [--memory-mb M]
                           [--no-test-code] [--split train|eval] [--source NAME] [--limit N]
                           [--output report.json]
        Runs every GT against its own tests in the sandbox (a function's golden tests and the source's test
        program, a stdin/stdout program's io_tests in its language, as training checks them), shows
        progress, a table of failing rows with reasons and a summary. Exit code 0 when every GT passes,
        1 when some fail (2 for a bad SPEC or file, as for every user error).
    codea1 data convert SPEC --output OUT.jsonl [--split ...] [--source NAME] [--limit N] [--check]
        Writes the problems of any source as JSONL of Problem rows (readable again as a SPEC).
    codea1 data split SPEC --held-out N --seed S --train-output A.jsonl --held-out-output B.jsonl [...]
        A fixed-seed split of a problem set into training and held-out problems (ids sorted in each file).
    codea1 data decontaminate SPEC --against HELD_OUT [--against ...] --output KEPT.jsonl
                              [--report report.json] [--no-behaviour] [--threshold 0.5]
        Drops the problems of SPEC that are near-duplicates of any held-out problem (same entry-point
        name, overlapping description, or GTs that pass each other's golden tests: codea1.data.decontam)
        and prints every pair found with its signals.

SPEC: any source `codea1.data.load_problems` reads (SPEC_HELP): bundled[:SPLIT] | bundled-stdio[-cpp][:SPLIT] |
humaneval | humaneval+[:PATH] | mbpp+[:PATH] | kodcode[:PATH] | bigcodebench[-complete]:PATH |
livecodebench[@SINCE..UNTIL]:PATH | verl:PATH | FILE.jsonl | FILE.parquet. A set that ships no GT
(LiveCodeBench, verl rows) has nothing to check: `data check` says so and exits 0.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from codea1.data.check import CheckResult

SPEC_HELP = (
    "problem source: bundled[:SPLIT], bundled-stdio[:SPLIT], bundled-stdio-cpp[:SPLIT], humaneval, "
    "humaneval+[:PATH], mbpp+[:PATH], kodcode[:PATH], bigcodebench[-complete]:PATH, "
    "livecodebench[@SINCE..UNTIL]:PATH, verl:PATH, a .jsonl of problems or a reference-schema .parquet "
    "(several joined by commas)"
)


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options that choose which problems of SPEC a subcommand works on (see `selection`)."""
    parser.add_argument("--split", choices=["train", "eval"], default=None, help="only this split")
    parser.add_argument("--difficulty", default=None, help="only this difficulty (easy/medium/hard)")
    parser.add_argument(
        "--source",
        default=None,
        help="only problems of this source (e.g. mbppplus, humanevalplus in the reference parquet)",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems (after the filters)")


def selection(args: argparse.Namespace) -> dict:
    """`load_problems` keywords from the options of `add_selection`."""
    return {"split": args.split, "difficulty": args.difficulty, "source": args.source, "limit": args.limit}


def register(sub: argparse._SubParsersAction) -> None:
    """`codea1 data` and its subcommands, in the order its help lists them."""
    data = sub.add_parser("data", help="problem sets: check ground truth, convert formats")
    data_sub = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    data.set_defaults(func=lambda args: (data.print_help(), 2)[1])
    _add_check(data_sub)
    _add_convert(data_sub)
    _add_split(data_sub)
    _add_decontaminate(data_sub)
    _add_deduplicate(data_sub)


def _add_check(data_sub: argparse._SubParsersAction) -> None:
    """`codea1 data check`: every GT against its own tests."""
    check = data_sub.add_parser("check", help="run every GT solution against its own tests (in the sandbox)")
    check.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    check.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPUs available)")
    check.add_argument("--timeout", type=float, default=10.0, help="seconds per golden-test call (default 10)")
    check.add_argument(
        "--test-code-timeout",
        type=float,
        default=120.0,
        help="seconds for the source's whole test program per problem (default 120)",
    )
    check.add_argument(
        "--memory-mb", type=int, default=1024, help="address space each sandboxed GT run may add, MiB (default 1024)"
    )
    check.add_argument("--no-test-code", action="store_true", help="run only the golden asserts")
    add_selection(check)
    check.add_argument("--output", type=Path, default=None, help="write a JSON report here")
    check.set_defaults(func=run_check)


def _add_convert(data_sub: argparse._SubParsersAction) -> None:
    """`codea1 data convert`: a problem source as JSONL of Problem rows."""
    convert = data_sub.add_parser("convert", help="write a problem source as JSONL of Problem rows")
    convert.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    convert.add_argument("--output", type=Path, required=True, help="the .jsonl file to write")
    add_selection(convert)
    convert.add_argument("--check", action="store_true", help="drop problems whose GT fails its tests")
    convert.set_defaults(func=run_convert)


def _add_split(data_sub: argparse._SubParsersAction) -> None:
    """`codea1 data split`: a fixed-seed split into training and held-out problems."""
    split = data_sub.add_parser("split", help="a fixed-seed split into training and held-out problems")
    split.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    split.add_argument("--held-out", type=int, required=True, help="how many problems to hold out")
    split.add_argument("--seed", type=int, default=0, help="the split's seed (default 0)")
    split.add_argument("--train-output", type=Path, required=True, help="the .jsonl of training problems")
    split.add_argument("--held-out-output", type=Path, required=True, help="the .jsonl of held-out problems")
    add_selection(split)
    split.set_defaults(func=run_split)


def _add_decontaminate(data_sub: argparse._SubParsersAction) -> None:
    """`codea1 data decontaminate`: training problems less near-duplicates of held-out ones."""
    dec = data_sub.add_parser("decontaminate", help="drop training problems that near-duplicate held-out ones")
    dec.add_argument("spec", metavar="SPEC", help=SPEC_HELP + " (the training problems)")
    dec.add_argument(
        "--against",
        action="append",
        required=True,
        metavar="HELD_OUT",
        help="a held-out problem source (repeat for several)",
    )
    dec.add_argument("--output", type=Path, required=True, help="the .jsonl of the training problems kept")
    dec.add_argument("--report", type=Path, default=None, help="write the pairs found as JSON here")
    dec.add_argument(
        "--no-behaviour",
        action="store_true",
        help="textual signals only (no sandbox run of each GT on the other's golden tests)",
    )
    dec.add_argument(
        "--threshold", type=float, default=0.5, help="description bigram Jaccard index that makes a pair (default 0.5)"
    )
    dec.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPUs available)")
    add_selection(dec)
    dec.set_defaults(func=run_decontaminate)


def _add_deduplicate(data_sub: argparse._SubParsersAction) -> None:
    """`codea1 data deduplicate`: one set less the later problem of each near-duplicate pair."""
    dedup = data_sub.add_parser(
        "deduplicate", help="drop the later problem of each near-duplicate pair inside one set (a held-out set)"
    )
    dedup.add_argument("spec", metavar="SPEC", help=SPEC_HELP)
    dedup.add_argument("--output", type=Path, required=True, help="the .jsonl of the problems kept")
    dedup.add_argument("--report", type=Path, default=None, help="write the pairs found as JSON here")
    dedup.add_argument("--no-behaviour", action="store_true", help="textual signals only (no sandbox)")
    dedup.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPUs available)")
    add_selection(dedup)
    dedup.set_defaults(func=run_deduplicate)


def _check_bar(console: Console) -> Progress:
    """The transient progress bar of `codea1 data check`."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("checking GT"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def _failing_table(failing: list[CheckResult]) -> Table:
    """One row per problem whose GT fails: its golden tests passed, test_code status and reason."""
    from rich.table import Table

    table = Table(title=f"{len(failing)} problem(s) whose GT fails", show_lines=False)
    table.add_column("id", no_wrap=True)
    table.add_column("golden", justify="right")
    table.add_column("test_code")
    table.add_column("reason", overflow="fold")
    for r in failing:
        table.add_row(r.id, f"{r.tests_passed}/{r.tests_total}", r.test_code_status or "-", r.reason)
    return table


def _check_summary(spec: str, results: list[CheckResult], failing: int, elapsed: float, isolation: str) -> str:
    """The closing line of `codea1 data check`: counts, time, the sandbox and the slowest GT (or, for a set
    that ships no GT, that there is nothing to check)."""
    from codea1.data.check import NO_GT

    no_gt = sum(r.note == NO_GT for r in results)
    if no_gt == len(results):
        return f"{spec}: {len(results)} problems, {NO_GT} (the set ships no GT solutions)"
    slowest = max(results, key=lambda r: max(r.gt_seconds, r.test_code_seconds))
    no_tests = sum(r.note == "no tests" for r in results)
    notes = [f"{no_tests} with no tests to run"] * bool(no_tests) + [f"{no_gt} with {NO_GT}"] * bool(no_gt)
    return (
        f"{spec}: {len(results)} problems, {len(results) - failing} ok, {failing} failing"
        + (f" ({'; '.join(notes)})" if notes else "")
        + f"; {sum(r.tests_total for r in results)} tests; checked in {elapsed:.1f} s "
        f"(sandbox: {isolation}); slowest GT: {slowest.id} "
        f"({max(slowest.gt_seconds, slowest.test_code_seconds):.2f} s)"
    )


def _check_report(spec: str, results: list[CheckResult], failing: int, elapsed: float, isolation: str) -> dict:
    """The JSON report of `codea1 data check --output`."""
    return {
        "spec": spec,
        "problems": len(results),
        "ok": len(results) - failing,
        "failing": failing,
        "seconds": round(elapsed, 2),
        "isolation": isolation,
        "results": [r.to_dict() for r in results],
    }


def run_check(args: argparse.Namespace) -> int:
    from rich.console import Console

    from codea1.data.check import check_problems
    from codea1.data.loaders import load_problems
    from codea1.errors import UserError
    from codea1.sandbox import LocalExecutor

    console = Console(stderr=True)
    started = time.perf_counter()
    problems = load_problems(args.spec, **selection(args))
    loaded = time.perf_counter() - started
    console.print(f"loaded {len(problems)} problems from {args.spec} in {loaded:.1f} s")
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    started = time.perf_counter()
    with LocalExecutor(workers=args.workers, memory_mb=args.memory_mb) as executor, _check_bar(console) as bar:
        task = bar.add_task("check", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        results = check_problems(
            problems,
            executor,
            timeout=args.timeout,
            test_code_timeout=args.test_code_timeout,
            run_test_code=not args.no_test_code,
            progress=progress,
        )
        isolation = executor.isolation_level
    elapsed = time.perf_counter() - started
    failing = [r for r in results if not r.ok]
    out = Console()
    if failing:
        out.print(_failing_table(failing))
    print(_check_summary(args.spec, results, len(failing), elapsed, isolation))
    if args.output is not None:
        report = _check_report(args.spec, results, len(failing), elapsed, isolation)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=1), encoding="utf-8")
        print(f"report written to {args.output}")
    return 1 if failing else 0


def run_convert(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_problems
    from codea1.problem import write_problems_jsonl

    problems = load_problems(args.spec, check=args.check, **selection(args))
    write_problems_jsonl(problems, args.output)
    print(f"wrote {len(problems)} problems to {args.output}")
    return 0


def split_ids(ids: list[str], held_out: int, seed: int) -> tuple[list[str], list[str]]:
    """(training ids, held-out ids), each sorted: `held_out` ids drawn with a seeded shuffle of the sorted
    ids, so the split depends only on the ids and the seed."""
    import random

    order = sorted(ids)
    random.Random(seed).shuffle(order)
    return sorted(order[held_out:]), sorted(order[:held_out])


def run_split(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_problems
    from codea1.errors import UserError
    from codea1.problem import write_problems_jsonl

    problems = load_problems(args.spec, **selection(args))
    if not 0 < args.held_out < len(problems):
        raise UserError(
            f"--held-out must be between 1 and {len(problems) - 1} for {len(problems)} problems, got {args.held_out}"
        )
    train_ids, held_ids = split_ids([p.id for p in problems], args.held_out, args.seed)
    by_id = {p.id: p for p in problems}
    write_problems_jsonl([by_id[i] for i in train_ids], args.train_output)
    write_problems_jsonl([by_id[i] for i in held_ids], args.held_out_output)
    print(
        f"wrote {len(train_ids)} training problems to {args.train_output} and {len(held_ids)} held-out "
        f"problems to {args.held_out_output} (seed {args.seed})"
    )
    return 0


def print_pairs(pairs: list, write: Callable[[str], object] = print) -> None:
    """One line per contamination pair: the two ids, entry points and signals."""
    for p in pairs:
        write(
            f"  {p.train_id} ({p.train_entry_point}) ~ {p.held_out_id} ({p.held_out_entry_point}): "
            f"{', '.join(p.signals)}"
            + (f" (description {p.description_similarity:.2f})" if "description" in p.signals else "")
        )


def run_decontaminate(args: argparse.Namespace) -> int:
    from codea1.data import decontam
    from codea1.data.loaders import load_problems
    from codea1.problem import write_problems_jsonl
    from codea1.sandbox import LocalExecutor

    train = load_problems(args.spec, **selection(args))
    held = [p for spec in args.against for p in load_problems(spec)]
    settings = {
        "against": args.against,
        "behaviour": not args.no_behaviour,
        "ngram_threshold": args.threshold,
        **decontam.settings(),
    }
    if args.no_behaviour:
        kept, pairs = decontam.decontaminate(train, held, None, ngram_threshold=args.threshold, behaviour=False)
    else:
        print(f"running each GT on the other side's golden tests ({len(train)} x {len(held)} problems) ...")
        with LocalExecutor(workers=args.workers) as ex:
            kept, pairs = decontam.decontaminate(train, held, ex, ngram_threshold=args.threshold)
    print_pairs(pairs)
    write_problems_jsonl(kept, args.output)
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(
            json.dumps(decontam.report(train, held, kept, pairs, settings), indent=1), encoding="utf-8"
        )
    print(
        f"kept {len(kept)} of {len(train)} problems ({len(train) - len(kept)} dropped, {len(pairs)} pairs) "
        f"in {args.output}"
    )
    return 0


def run_deduplicate(args: argparse.Namespace) -> int:
    from codea1.data import decontam
    from codea1.data.loaders import load_problems
    from codea1.problem import write_problems_jsonl
    from codea1.sandbox import LocalExecutor

    problems = load_problems(args.spec, **selection(args))
    if args.no_behaviour:
        kept, pairs = decontam.deduplicate(problems, None, behaviour=False)
    else:
        print(f"running each GT on the others' golden inputs ({len(problems)} problems) ...")
        with LocalExecutor(workers=args.workers) as ex:
            kept, pairs = decontam.deduplicate(problems, ex)
    print_pairs(pairs)
    write_problems_jsonl(kept, args.output)
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        settings = {"behaviour": not args.no_behaviour, **decontam.settings()}
        args.report.write_text(
            json.dumps(decontam.report(problems, problems, kept, pairs, settings), indent=1), encoding="utf-8"
        )
    print(f"kept {len(kept)} of {len(problems)} problems ({len(problems) - len(kept)} dropped) in {args.output}")
    return 0
