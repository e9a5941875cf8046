"""`codea1 score` (re-score saved rollouts, no model needed) and `codea1 mistakes show|stats|export`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import GameConfig, preset_names
from codea1.errors import UserError
from codea1.sandbox.api import Executor, OnProgress, Then

if TYPE_CHECKING:
    from codea1.game.mistake_book import MistakeBook
    from codea1.game.play import QuestionResult
    from codea1.problem import Problem

BOOK_FILE = "mistake_book.sqlite"
# every game key is an option of `codea1 score` (--history-size is game.history_size), except those that
# shape what is sampled, not how it is scored
SCORED_KEYS = [
    f for f in dataclasses.fields(GameConfig) if f.name not in ("M", "N", "tests_requested", "blackbox_tests")
]
RENAMED_OPTIONS = {"--timeout": "--test-timeout", "--test-reward": "--selfplay-reward"}


def register(sub: argparse._SubParsersAction) -> None:
    score = sub.add_parser(
        "score",
        help="re-score saved rollouts (Code-A1 rewards, optional Mistake Book) without any model",
        description=(
            "Reads rollout lines {question_id, codes: [{response, tests: [raw test responses]}]}, plays the "
            "game in the sandbox and writes one line of rewards per input line. A malformed line or an "
            "unknown question id gets an 'error' field (also printed on stderr) and the rest is still "
            "scored; the exit code is non-zero only when no line could be scored. With --mistake-book the "
            "book is read before and updated after, as one training step."
        ),
    )
    score.add_argument("--problems", required=True, help="problem set: 'bundled', a name, or a .jsonl/.parquet path")
    score.add_argument("--rollouts", required=True, help="input JSONL of rollouts")
    score.add_argument("--output", required=True, help="output JSONL of scores")
    score.add_argument("--mistake-book", default=None, help="SQLite Mistake Book to read and update (created if new)")
    score.add_argument(
        "--config",
        default=None,
        help="take the game settings from this config's `game` section (a run's config.yaml, another "
        f"file, or a preset by name: {', '.join(preset_names())}); the options below override single keys",
    )
    for f in SCORED_KEYS:
        score.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f"game_{f.name}",
            metavar="VALUE",
            default=None,
            help=f"game.{f.name}: {f.metadata['help']}",
        )
    for old in RENAMED_OPTIONS:
        score.add_argument(old, dest=f"renamed_{old}", default=None, help=argparse.SUPPRESS)
    score.add_argument("--step", type=int, default=None, help="step tag of the book update (default: last + 1)")
    score.add_argument("--workers", type=int, default=None, help="sandbox workers (default: all CPUs)")
    score.add_argument(
        "--uid-base",
        type=int,
        default=None,
        help="uid of the first sandbox slot (slot k runs as uid-base - k); give concurrent codea1 "
        "processes on one machine different ranges, as each sweeps its slots' uids",
    )
    score.set_defaults(func=cmd_score)

    mistakes = sub.add_parser("mistakes", help="inspect a Mistake Book (a run directory or its .sqlite file)")
    msub = mistakes.add_subparsers(dest="mistakes_command", metavar="ACTION")
    show = msub.add_parser("show", help="list the stored tests, most frequent first")
    show.add_argument("book", help="run directory (with mistake_book.sqlite) or a .sqlite file")
    show.add_argument("--question", default=None, help="only this question id")
    show.set_defaults(func=cmd_mistakes_show)
    stats = msub.add_parser("stats", help="size and the added/removed counters of every step")
    stats.add_argument("book", help="run directory (with mistake_book.sqlite) or a .sqlite file")
    stats.add_argument("--json", action="store_true", help="print JSON instead of a table")
    stats.set_defaults(func=cmd_mistakes_stats)
    export = msub.add_parser("export", help="write the whole book as JSON")
    export.add_argument("book", help="run directory (with mistake_book.sqlite) or a .sqlite file")
    export.add_argument("--output", required=True, help="JSON file to write")
    export.set_defaults(func=cmd_mistakes_export)
    mistakes.set_defaults(func=lambda args: (mistakes.print_help(), 2)[1])


# ---------------------------------------------------------------------------- helpers
def load_problem_set(spec: str) -> list:
    """The problems of a problem spec ('bundled', a name, a .jsonl/.parquet path)."""
    from codea1.data import load_problems

    return load_problems(spec)


def _check_rollout(row: object, problems: dict) -> str | None:
    """The reason a rollout line cannot be scored, or None."""
    if not isinstance(row, dict):
        return f"expected a JSON object, got {type(row).__name__}"
    qid = row.get("question_id")
    if not isinstance(qid, str):
        return "field 'question_id' is missing or not a string"
    if qid not in problems:
        return f"unknown question_id {qid!r} (not in the problem set)"
    codes = row.get("codes")
    if not isinstance(codes, list):
        return "field 'codes' is missing or not a list"
    for m, code in enumerate(codes):
        if not isinstance(code, dict) or not isinstance(code.get("response"), str):
            return f"codes[{m}]: expected an object with a string 'response'"
        tests = code.get("tests", [])
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            return f"codes[{m}]: field 'tests' must be a list of strings (raw test responses)"
    return None


def _progress_runner(executor: Executor):
    """Wraps executor.run with a rich progress bar on stderr."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    class _Runner:
        def run(self, jobs: list, progress: OnProgress = None, then: Then = None) -> list:
            columns = (TextColumn("sandbox"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
                task = bar.add_task("jobs", total=len(jobs))
                return executor.run(jobs, progress=lambda done, total: bar.update(task, completed=done), then=then)

    return _Runner()


def _config(args: argparse.Namespace):
    """The GameConfig of `codea1 score`: --config's game section (or the defaults), then the options,
    checked exactly as the `game` keys of a training config."""
    from codea1.config import load_section

    for old, new in RENAMED_OPTIONS.items():
        if getattr(args, f"renamed_{old}") is not None:
            raise UserError(f"option {old} is now {new}")
    overrides = [
        f"game.{f.name}={getattr(args, 'game_' + f.name)}"
        for f in SCORED_KEYS
        if getattr(args, f"game_{f.name}") is not None
    ]
    return load_section("game", args.config, overrides)


# ---------------------------------------------------------------------------- score
def _read_rollouts(rollouts: Path, problems: dict[str, Problem]) -> list[dict[str, Any]]:
    """Per non-blank input line: {"lineno", "row", "error"}; error is None for a line that can be scored."""
    lines: list[dict[str, Any]] = []
    with rollouts.open(encoding="utf-8", errors="surrogateescape") as handle:
        for lineno, text in enumerate(handle, 1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                lines.append({"lineno": lineno, "error": f"not valid JSON ({exc.msg})", "row": None})
                continue
            error = _check_rollout(row, problems)
            lines.append({"lineno": lineno, "row": row, "error": error})
    return lines


def _score_step(
    good: list[dict[str, Any]],
    problems: dict[str, Problem],
    book: MistakeBook,
    step: int,
    config: GameConfig,
    args: argparse.Namespace,
) -> tuple[list[QuestionResult], dict[str, Any]]:
    """Plays the good lines as one game step in the sandbox and applies its updates to the book; returns the
    results (one per line) and the book's summary of the step."""
    from codea1.game.mistake_book import gt_digest, merge_updates
    from codea1.game.play import play_step
    from codea1.sandbox import LocalExecutor

    chosen = [problems[item["row"]["question_id"]] for item in good]
    histories = [book.retrieve(p.id, config.history_size, gt_digest(p)) for p in chosen]
    codes = [[c["response"] for c in item["row"]["codes"]] for item in good]
    tests = [[list(c.get("tests", [])) for c in item["row"]["codes"]] for item in good]
    extra = {"uid_base": args.uid_base} if args.uid_base is not None else {}
    with LocalExecutor(workers=args.workers, **extra) as executor:
        results = play_step(chosen, codes, tests, _progress_runner(executor), histories, config)
    summary = book.apply_step(step, merge_updates((r.question_id, r.updates) for r in results))
    return results, summary


def _write_scores(
    output: Path,
    lines: list[dict[str, Any]],
    by_line: dict[int, QuestionResult],
    summary: dict[str, Any] | None,
    rollouts: Path,
) -> None:
    """One output line per input line: its rewards and Mistake Book change, or its error (also on stderr)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8") as out:
        for item in lines:
            row = item["row"]
            qid = row.get("question_id") if isinstance(row, dict) else None
            if item["error"] is not None:
                message = f"{rollouts}:{item['lineno']}: {item['error']}"
                print(f"codea1 score: {message}", file=sys.stderr)
                out.write(json.dumps({"line": item["lineno"], "question_id": qid, "error": message}) + "\n")
                continue
            result = by_line[id(item)]
            record = result.to_dict()
            record["mistake_book"] = summary["questions"].get(result.question_id, {"added": 0, "removed": 0, "size": 0})
            out.write(json.dumps(record, ensure_ascii=True) + "\n")


def cmd_score(args: argparse.Namespace) -> int:
    from codea1.game.mistake_book import MistakeBook

    config = _config(args)
    problems = {p.id: p for p in load_problem_set(args.problems)}
    rollouts = Path(args.rollouts)
    if not rollouts.is_file():
        raise UserError(f"--rollouts {rollouts}: no such file")
    lines = _read_rollouts(rollouts, problems)
    good = [item for item in lines if item["error"] is None]

    temp = None
    if args.mistake_book:
        book = MistakeBook(args.mistake_book)
    else:  # no book given: report what the step would do to an empty one
        temp = tempfile.TemporaryDirectory(prefix="codea1-score-")
        book = MistakeBook(Path(temp.name) / BOOK_FILE)
    try:
        step = args.step if args.step is not None else book.last_step + 1
        if step <= book.last_step:
            raise UserError(
                f"--step {step}: the Mistake Book {args.mistake_book} is already at step "
                f"{book.last_step}; give a later step or leave --step out"
            )
        results, summary = _score_step(good, problems, book, step, config, args) if good else ([], None)
        by_line = dict(zip((id(item) for item in good), results, strict=True))
        _write_scores(Path(args.output), lines, by_line, summary, rollouts)
    finally:
        book.close()
        if temp is not None:
            temp.cleanup()
    if not good:
        print(f"codea1 score: no line of {rollouts} could be scored", file=sys.stderr)
        return 1
    kept = (
        f", Mistake Book {args.mistake_book} at step {step}: +{summary['added']} -{summary['removed']} "
        f"= {summary['size']} tests"
        if args.mistake_book
        else ""
    )
    print(f"scored {len(good)} of {len(lines)} lines -> {args.output}{kept}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------- mistakes
def _open_book(spec: str):
    from codea1.game.mistake_book import MistakeBook

    path = Path(spec)
    if path.is_dir():
        path = path / BOOK_FILE
    if not path.is_file():
        raise UserError(f"{spec}: no Mistake Book here (expected a run directory with {BOOK_FILE} or a .sqlite file)")
    return MistakeBook(path)


def cmd_mistakes_show(args: argparse.Namespace) -> int:
    with _open_book(args.book) as book:
        print(book.show(args.question))
    return 0


def cmd_mistakes_stats(args: argparse.Namespace) -> int:
    with _open_book(args.book) as book:
        stats = book.stats()
    if args.json:
        print(json.dumps(stats, indent=1))
        return 0
    print(
        f"last step {stats['last_step']}: {stats['tests']} tests over {stats['questions']} questions, "
        f"total frequency {stats['total_frequency']}"
    )
    print(f"{'step':>6} {'added':>7} {'removed':>8} {'size':>7} {'questions':>10}")
    for row in stats["steps"]:
        print(f"{row['step']:>6} {row['added']:>7} {row['removed']:>8} {row['size']:>7} {row['questions']:>10}")
    return 0


def cmd_mistakes_export(args: argparse.Namespace) -> int:
    with _open_book(args.book) as book:
        data = book.export(args.output)
    print(f"wrote {sum(len(v) for v in data['questions'].values())} tests to {args.output}", file=sys.stderr)
    return 0
