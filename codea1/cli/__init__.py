"""The single `codea1` entry point.

Each command group lives next to the code it drives, in a module exposing `register(subparsers)`;
that function adds its parsers and sets `func` (a callable taking the parsed args and returning an exit
code). Command modules import heavy libraries (torch, transformers) inside their handlers only, so
`codea1 exec` or `codea1 --help` start fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
import warnings

from codea1 import __version__
from codea1.errors import UserError, storage_failure

# module path -> what it provides (shown if the module is missing)
COMMAND_MODULES = [
    "codea1.cli.judge",  # exec
    "codea1.cli.data",  # data check / data convert
    "codea1.cli.game",  # score, mistakes
    "codea1.cli.train",  # train, demo, report
    "codea1.cli.eval",  # eval code / tests / collab / export-tests
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codea1",
        description="Adversarial RL of a Code LLM and a Test LLM (Code-A1).",
    )
    parser.add_argument("--version", action="version", version=f"codea1 {__version__}")
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command group not present in this build
                continue
            raise
        module.register(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """codea1's own warnings as one console line (no source line); other libraries' as usual."""
    text = str(message)
    if text.startswith("codea1"):
        print(f"codea1: note: {text.split(': ', 1)[-1]}", file=file or sys.stderr)
        return
    _DEFAULT_SHOW_WARNING(message, category, filename, lineno, file, line)


_DEFAULT_SHOW_WARNING = warnings.showwarning


def main(argv: list[str] | None = None) -> int:
    # OpenMP threads that spin while waiting run many times slower whenever another process (the
    # sandbox's children) holds a core; passive waiting costs nothing on an idle machine. Read once,
    # when torch loads (commands import it lazily, after this); an explicit setting wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # codea1 shows its own progress: the hub's and transformers' bars (weights loading, shards) would
    # interleave with it; read when those libraries load
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    warnings.showwarning = _show_warning
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse binds only the first run of key=value overrides (`train`, `demo`); later runs, between
        # or after options, come back unknown and join them, in order. Anything else is still refused.
        if isinstance(getattr(args, "overrides", None), list) and not any(u.startswith("-") for u in unknown):
            args.overrides += unknown
        else:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"codea1: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("codea1: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a full disk reaches us from many libraries: one sentence, like a UserError
        reason = storage_failure(exc)
        if reason is None:
            raise
        if args.debug:
            traceback.print_exc()
        print(
            f"codea1: error: a write failed because {reason} ({type(exc).__name__}: {str(exc)[:200]}); free "
            f"space and run the command again (a training run continues with `codea1 train --resume RUN_DIR`)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
