"""A whole training step on a CPU with vLLM's CPU build as the rollout engine, against codea1's loop engine:
the measurement behind whether the CPU presets and the demo should sample with vLLM.

Run it in the environment of the real-engine tests (scripts/install-vllm.sh makes it):

    .venv-vllm/bin/python benchmarks/vllm_cpu_step.py [--config smollm2-cpu] [--steps 4]

Each engine trains the same preset for `--steps` a1 steps with the same seed, in a `codea1 train` process
of its own (the engine out of process, eager, in the learner's float32, as the `rollout` defaults give it),
loop first, then vLLM. Printed per engine: the mean of each step's time and of its parts (code and test
sampling, execution, learning) over the steps after the first (the first holds the engine's warm-up), and
vLLM's over the loop's. The run directories stay under `--out` for a look at their metrics.jsonl.
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


def train(engine: str, args: argparse.Namespace, out: Path) -> tuple[list[dict], float]:
    """The metrics of each step of one run, and the run's wall time (loading and engine start included)."""
    run = out / engine
    cmd = [sys.executable, "-m", "codea1", "train", "--config", args.config, "--run-dir", str(run)]
    cmd += ["--max-steps", str(args.steps), "--no-progress", f"rollout.backend={engine}"]
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
    ap.add_argument("--engines", default="loop,vllm", help="rollout.backend values, the baseline first")
    ap.add_argument("--out", default=None, help="where the two runs go (default: a temporary directory)")
    args = ap.parse_args()
    if args.steps < 2:
        ap.error("--steps must be at least 2: the first step is the warm-up")
    out = Path(args.out or tempfile.mkdtemp(prefix="codea1-vllm-step-"))
    means, walls = {}, {}
    engines = args.engines.split(",")
    if len(engines) != 2:
        ap.error("--engines takes two rollout.backend values: the baseline, then the engine measured")
    for engine in engines:
        rows, walls[engine] = train(engine, args, out)
        later = rows[1:]
        means[engine] = {k: sum(r[k] for r in later) / len(later) for k in PARTS}
    print(f"{args.config}: {args.steps} a1 steps per engine, means over steps 2-{args.steps} (s); runs in {out}")
    base, new = engines
    print(f"{'part':<16}{base:>13}{new:>13}{new + '/' + base:>20}")
    for k in PARTS:
        old, now = means[base][k], means[new][k]
        print(f"{k:<16}{old:>13.2f}{now:>13.2f}{(now / old if old else float('nan')):>20.2f}")
    print(f"{'whole run':<16}{walls[base]:>13.1f}{walls[new]:>13.1f}{walls[new] / walls[base]:>20.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
