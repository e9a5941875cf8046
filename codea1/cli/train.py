"""`codea1 train`, `codea1 sft`, `codea1 demo`, `codea1 report`, `codea1 compare`, `codea1 export`."""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from codea1.config import preset_help
from codea1.errors import UserError
from codea1.train.health import STOP_EXIT_CODE as HEALTH_STOP_EXIT

if TYPE_CHECKING:
    from codea1.config import Config


def register(sub: argparse._SubParsersAction) -> None:
    """The training commands, in the order `codea1 --help` lists them."""
    _add_train(sub)
    _add_sft(sub)
    _add_demo(sub)
    _add_compare(sub)
    _add_export(sub)
    _add_report(sub)


def _add_train(sub: argparse._SubParsersAction) -> None:
    """`codea1 train`: a run from a config, or a resumed one."""
    p = sub.add_parser(
        "train",
        help="train the Code LLM and Test LLM (a1), or a baseline (golden, selfplay)",
        description="Train with a YAML config plus dotted key=value overrides "
        "(e.g. game.M=4 policy.lr=1e-5), or resume a run directory.",
    )
    p.add_argument("--config", help=preset_help() + "; defaults apply to missing keys")
    p.add_argument("--run-dir", type=Path, help="new run directory (default runs/<config>-<time>)")
    p.add_argument(
        "--resume",
        type=Path,
        metavar="RUN_DIR",
        help="continue this run from its last checkpoint (overrides: health.* and placement.* keys only, e.g. "
        "health.mode=warn "
        f"after a health stop, which exits {HEALTH_STOP_EXIT})",
    )
    p.add_argument(
        "--max-steps",
        type=int,
        help="stop at this step (total, not additional); the LR schedule still spans train.max_steps (capped by the data epochs)",
    )
    p.add_argument("--no-progress", action="store_true", help="no live progress display")
    p.add_argument("--list-keys", action="store_true", help="print every config key with its help and exit")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. game.M=4")
    p.set_defaults(func=_train)


def _add_sft(sub: argparse._SubParsersAction) -> None:
    """`codea1 sft`: the supervised warm-up before RL."""
    s = sub.add_parser(
        "sft",
        help="supervised warm-up of the policies before RL (GT code, golden asserts)",
        description="Trains the models of a training config on the train split: the code "
        "prompt -> the GT solution, the test prompt (GT as the candidate) -> the "
        "golden asserts, loss on the response tokens only (docs/cold-start.md). "
        "Writes one model directory per trained model and prints the overrides "
        "that make `codea1 train` start from them.",
    )
    s.add_argument("--config", help=preset_help() + " (the same as for `codea1 train`)")
    s.add_argument("--out", type=Path, required=True, help="new output directory")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides, e.g. sft.epochs=3")
    s.set_defaults(func=_sft)


def _add_demo(sub: argparse._SubParsersAction) -> None:
    """`codea1 demo`: the short CPU run with its before/after eval."""
    d = sub.add_parser(
        "demo",
        help="a short Code-A1 run of SmolLM2-135M on CPU, then a before/after eval",
        description="Runs the smollm2-cpu preset for a few steps on the bundled train split, "
        "evaluates the code policy before and after on held-out problems and "
        "writes a report. About 10-15 minutes on 2 CPU cores.",
    )
    d.add_argument("--run-dir", type=Path, help="run directory (default runs/demo-<time>)")
    d.add_argument("--steps", type=int, default=None, help="training steps (default: the preset's)")
    d.add_argument("--config", default=None, help=preset_help("the config to start from") + " (default smollm2-cpu)")
    d.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    d.set_defaults(func=_demo)


def _add_compare(sub: argparse._SubParsersAction) -> None:
    """`codea1 compare`: the methods from one start on one budget."""
    c = sub.add_parser(
        "compare",
        help="base, golden, a1 and selfplay from one start on one budget, evaluated alike",
        description="Trains each method from the config's start checkpoint with the same seed, "
        "data order and budget, then evaluates every final policy on held-out "
        "problems (Code LLM pass@1 with bootstrap intervals; Test LLM valid ratio, "
        "pass@k, mut@k, Mul, white-box and black-box). Run the same command again "
        "to resume: training resumes exactly, finished evaluations are kept.",
    )
    c.add_argument("--config", help=preset_help() + " (the start checkpoint is model.code_model)")
    c.add_argument("--out", type=Path, required=True, help="comparison directory (created, or resumed)")
    c.add_argument(
        "--methods", default="base,golden,a1,selfplay", help="comma-separated subset of base,golden,a1,selfplay"
    )
    c.add_argument("--steps", type=int, default=10, help="training steps per method (the most, with --minutes)")
    c.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="training-time budget per method (summed step times); the run stops at the first step that reaches it",
    )
    c.add_argument("--eval-every", type=int, default=0, help="also evaluate every K steps (learning curves)")
    c.add_argument(
        "--train-ids",
        type=Path,
        default=None,
        help="a committed train_ids.json: stop before training unless this comparison selects exactly that list",
    )
    c.add_argument(
        "--eval-problems",
        default="bundled:eval",
        help="held-out problem spec (several joined by commas: 'held_out.jsonl,bundled:eval')",
    )
    c.add_argument("--eval-limit", type=int, default=None, help="first N held-out problems (default: all)")
    c.add_argument("--code-samples", type=int, default=4, help="code samples per problem for pass@1")
    c.add_argument("--test-samples", type=int, default=1, help="Test LLM suites per problem (scores averaged)")
    c.add_argument("--test-k", type=int, default=5, help="asserts per suite scored (pass@k, mut@k)")
    c.add_argument("--no-mutation", action="store_true", help="skip mutation scoring (no mut@k, Mul)")
    c.add_argument(
        "--no-decontaminate",
        action="store_true",
        help="keep training problems that near-duplicate a held-out one (default: dropped, with a "
        "report in decontamination.json)",
    )
    c.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    c.set_defaults(func=_compare)


def _add_export(sub: argparse._SubParsersAction) -> None:
    """`codea1 export`: one policy of a run as a Hugging Face model directory."""
    e = sub.add_parser(
        "export",
        help="one trained policy of a run as a clean Hugging Face model directory",
        description="Writes the policy of a checkpoint as a model directory that transformers and "
        "vLLM load (weights as safetensors, tokenizer, a model card with the run's "
        "config and metrics; LoRA merged into its base; no optimiser state).",
    )
    e.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    e.add_argument("--role", choices=["code", "test"], required=True, help="the Code LLM or the Test LLM")
    e.add_argument("--step", type=int, default=None, help="checkpoint step (default: the newest)")
    e.add_argument("--out", type=Path, required=True, help="the model directory to write (new or empty)")
    e.add_argument(
        "--dtype",
        default="float32",
        choices=["float32", "bfloat16", "float16"],
        help="weights' dtype in the export (default float32)",
    )
    e.add_argument(
        "--eval",
        type=Path,
        default=None,
        metavar="EVAL_JSON",
        help="a `codea1 compare` evaluation of this step (evals/METHOD/step_K.json): its held-out figures go in the card",
    )
    e.add_argument("--push-to-hub", default=None, metavar="REPO_ID", help="also upload it as this model repo")
    e.add_argument("--private", action="store_true", help="with --push-to-hub: a private repository")
    e.set_defaults(func=_export)


def _add_report(sub: argparse._SubParsersAction) -> None:
    """`codea1 report`: report.html and plots for a run directory."""
    r = sub.add_parser("report", help="write report.html and PNG plots for a run directory")
    r.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    r.add_argument("--examples", type=int, default=3, help="example rollouts shown")
    r.set_defaults(func=_report)


def _train(args: argparse.Namespace) -> int:
    from codea1.config import config_file, describe_keys, load_config
    from codea1.train.loop import train
    from codea1.train.run_dir import RunDir

    if args.list_keys:
        for key, type_name, default, help_text in describe_keys():
            print(f"{key:35s} {type_name:12s} {default!r:>14}  {help_text}")
        return 0
    if args.max_steps is not None and args.max_steps < 1:
        raise UserError(f"--max-steps must be >= 1, got {args.max_steps}")
    if args.resume:
        if args.config or args.run_dir:
            raise UserError(
                "--resume takes the run directory, --max-steps and health.* or placement.* overrides only; the run's own "
                "config.yaml is used"
            )
        run = RunDir.open(args.resume)
        cfg = run.load_config(args.overrides)
        with _resume_hint(run.root):
            done = train(
                cfg, run.root, resume=True, max_steps=args.max_steps, progress=False if args.no_progress else None
            )
        _print_run(run.root)
        return _health_stop(done, run.root, cfg)
    cfg = load_config(args.config, args.overrides)
    name = config_file(args.config).stem if args.config else "default"
    run_dir = args.run_dir or Path("runs") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    with _resume_hint(Path(run_dir)):
        done = train(cfg, run_dir, max_steps=args.max_steps, progress=False if args.no_progress else None)
    _print_run(Path(run_dir))
    return _health_stop(done, run_dir, cfg)


def _print_run(run_dir: Path) -> None:
    """The run directory and, where the run wrote one, its report."""
    print(f"run directory: {run_dir}")
    report = run_dir / "report.html"
    if report.is_file():
        print(f"report: {report}")


def _health_stop(done: dict | None, run_dir: Path, cfg: Config) -> int:
    """0, or the health stop's own exit code (raised with the command that continues the run) when run
    health stopped it (health.mode=stop)."""
    from codea1.train.health import stop_message

    if isinstance(done, dict) and done.get("health_stop"):
        message = stop_message(run_dir, done["steps"], done["health_stop"], cfg.health)
        raise UserError(message, exit_code=HEALTH_STOP_EXIT)
    return 0


@contextlib.contextmanager
def _resume_hint(run_dir: Path) -> Iterator[None]:
    """On Ctrl-C, says where the run stands and the command that continues it (then exits 130)."""
    from codea1.train.checkpoint import latest_checkpoint, read_state

    try:
        yield
    except KeyboardInterrupt:
        if not (run_dir / "config.yaml").is_file():
            raise UserError("interrupted before the run's first step: nothing was kept", exit_code=130) from None
        ckpt = latest_checkpoint(run_dir / "checkpoints")
        where = f"the last checkpoint is step {read_state(ckpt).step}" if ckpt else "no checkpoint was written yet"
        raise UserError(
            f"interrupted ({where}); continue with `codea1 train --resume {run_dir}` (same target of steps)",
            exit_code=130,
        ) from None


def _sft(args: argparse.Namespace) -> int:
    from codea1.config import load_config
    from codea1.train.sft import run_sft

    cfg = load_config(args.config, args.overrides)
    summary = run_sft(cfg, args.out, progress=False if args.no_progress else None)
    for name, path in summary["models"].items():
        print(f"{name}: {path} (loss {summary['loss_before'][name]:.3f} -> {summary['loss_after'][name]:.3f})")
    config = f" --config {args.config}" if args.config else ""
    print(f"start RL from it: codea1 train{config} {' '.join(summary['overrides'])}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from codea1.recipes.demo import run_demo

    run_demo(run_dir=args.run_dir, steps=args.steps, config=args.config, overrides=args.overrides)
    return 0


def _compare(args: argparse.Namespace) -> int:
    from codea1.config import load_config
    from codea1.recipes.compare import CompareSpec, compare

    cfg = load_config(args.config, args.overrides)
    spec = CompareSpec(
        methods=[m.strip() for m in args.methods.split(",") if m.strip()],
        steps=args.steps,
        minutes=args.minutes,
        eval_every=args.eval_every,
        eval_problems=args.eval_problems,
        eval_limit=args.eval_limit,
        code_samples=args.code_samples,
        test_k=args.test_k,
        test_samples=args.test_samples,
        mutation=not args.no_mutation,
        seed=cfg.seed,
        decontaminate=not args.no_decontaminate,
    )
    expected = None
    if args.train_ids is not None:
        try:
            expected = json.loads(args.train_ids.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UserError(f"--train-ids {args.train_ids}: cannot read a JSON list of ids ({exc})") from None
        if not isinstance(expected, list) or not all(isinstance(i, str) for i in expected):
            raise UserError(f"--train-ids {args.train_ids}: expected a JSON list of problem ids")
    results = compare(args.out, cfg, spec, expected_train_ids=expected)
    print((args.out / "results.md").read_text(encoding="utf-8"))
    print(f"results: {args.out / 'results.json'}; plots: {args.out / 'plots'}")
    return 0 if results["methods"] else 1


def _export(args: argparse.Namespace) -> int:
    from codea1.recipes.export import export_policy, push_to_hub

    done = export_policy(args.run_dir, args.role, args.out, step=args.step, dtype=args.dtype, evaluation=args.eval)
    merged = " (LoRA merged into its base)" if done["merged_lora"] else ""
    print(
        f"exported the {args.role} policy of step {done['step']}{merged} to {done['out']}: {', '.join(done['files'])}"
    )
    if args.push_to_hub:
        print(f"pushed to {push_to_hub(done['out'], args.push_to_hub, private=args.private)}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from codea1.train.report import write_report

    path = write_report(args.run_dir, examples=args.examples)
    print(f"report: {path}")
    return 0
