"""Whole training steps on a CPU under two sets of config overrides, in one run: vLLM's CPU build as the
rollout engine against codea1's loop (the default), or one-step-off rollout against the synchronous step.

    .venv-vllm/bin/python benchmarks/step_variants.py [--config smollm2-cpu] [--steps 4]
    .venv/bin/python benchmarks/step_variants.py sync:train.one_step_off=false off:train.one_step_off=true

Each variant (NAME:KEY=VALUE[,KEY=VALUE...]; the first is the baseline) trains the same preset for `--steps`
steps with the same seed, in a `codea1 train` process of its own, one after the other. Printed per variant:
the mean of each step's time and of its parts (code and test sampling, execution, learning) over the steps
after the first (the first holds engine start-up and warm-up), and each variant's over the baseline's. With
one-step-off the sampling parts are the background thread's and overlap the rest; the step time is the
wall clock between steps either way. The run directories stay under `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PARTS = ("time_step", "time_gen_code", "time_gen_tests", "time_execute", "time_learn")


def train(name: str, overrides: list[str], args: argparse.Namespace, out: Path) -> tuple[list[dict], float]:
    """The metrics of each step of one run, and the run's wall time (loading and engine start included)."""
    run = out / name
    cmd = [sys.executable, "-m", "codea1", "train", "--config", args.config, "--run-dir", str(run)]
    cmd += ["--max-steps", str(args.steps), "--no-progress", *overrides]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    wall = time.perf_counter() - t0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    return rows, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="smollm2-cpu", help="a preset or config file (its a1 steps are timed)")
    ap.add_argument("--steps", type=int, default=4, help="steps per engine (the first is left out of the means)")
    ap.add_argument(
        "variants",
        nargs="*",
        default=["loop:rollout.backend=loop", "vllm:rollout.backend=vllm"],
        help="NAME:KEY=VALUE[,KEY=VALUE...], the baseline first (default: the loop, then vLLM)",
    )
    ap.add_argument("--out", default=None, help="where the two runs go (default: a temporary directory)")
    args = ap.parse_args()
    if args.steps < 2:
        ap.error("--steps must be at least 2: the first step is the warm-up")
    out = Path(args.out or tempfile.mkdtemp(prefix="codea1-vllm-step-"))
    means, walls = {}, {}
    variants = {}
    for text in args.variants:
        name, _, keys = text.partition(":")
        if not name or not keys:
            ap.error(f"a variant is NAME:KEY=VALUE[,KEY=VALUE...], not {text!r}")
        variants[name] = keys.split(",")
    if len(variants) < 2:
        ap.error("give two variants or more (the first is the baseline)")
    for name, overrides in variants.items():
        rows, walls[name] = train(name, overrides, args, out)
        later = rows[1:]
        means[name] = {k: sum(r[k] for r in later) / len(later) for k in PARTS}
    print(f"{args.config}: {args.steps} steps per variant, means over steps 2-{args.steps} (s); runs in {out}")
    for name, overrides in variants.items():
        print(f"  {name}: {' '.join(overrides)}")
    base = next(iter(variants))
    print(f"{'part':<16}" + "".join(f"{n:>12}{n + '/' + base:>16}" for n in variants))
    for k in [*PARTS, "whole run"]:
        values = {n: (walls[n] if k == "whole run" else means[n][k]) for n in variants}
        cells = "".join(
            f"{values[n]:>12.2f}{(values[n] / values[base] if values[base] else float('nan')):>16.2f}" for n in variants
        )
        print(f"{k:<16}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
