"""Dynamic sampling on the tiny-cpu preset: how many groups with all-equal rewards a refill recovers.

Runs the same short a1 run (tiny-random policies whose texts are scripted from their sampled ids, so the
game sees real passes and failures: tests/train_scripted.py) without refill and with train.refill_rounds
= 1 and 2, and prints per run the code groups that had all-equal rewards, those recovered (sampled again
until their rewards differed), the groups left without gradient, and the step time against no refill.

    python benchmarks/refill_recovery.py [--steps 6] [--rounds 1,2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rounds", default="1,2", help="refill_rounds values to compare with 0")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "tests"))
    from train_scripted import scripted_factory

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.train.loop import train
    from codea1.train.metrics import read_metrics

    base = [
        "game.M=4",
        "game.N=2",
        "train.batch_size=8",
        "train.progress=false",
        f"train.checkpoint_every={args.steps}",
    ]
    print(f"tiny-cpu a1, M=4 N=2 B=8, {args.steps} steps, scripted texts")
    print(f"{'refill_rounds':>13s} {'equal groups':>13s} {'recovered':>10s} {'left':>6s} {'step s':>8s} {'vs off':>7s}")
    first = None
    for rounds in [0] + [int(r) for r in args.rounds.split(",")]:
        cfg = load_config(REPO / "codea1" / "configs" / "tiny-cpu.yaml", [*base, f"train.refill_rounds={rounds}"])
        with tempfile.TemporaryDirectory() as tmp:
            train(
                cfg,
                Path(tmp) / "run",
                max_steps=args.steps,
                policy_factory=scripted_factory(load_problems(cfg.data.train)),
                progress=False,
            )
            rows = read_metrics(Path(tmp) / "run" / "metrics.jsonl")
        left = sum(r["code_zero_var_groups"] * cfg.train.batch_size for r in rows)
        equal = sum(r.get("refill_equal_groups", r["code_zero_var_groups"] * cfg.train.batch_size) for r in rows)
        recovered = sum(r.get("refill_recovered", 0.0) for r in rows)
        step = sum(r["time_step"] for r in rows[1:]) / max(1, len(rows) - 1)
        first = first or step
        print(f"{rounds:13d} {equal:13.0f} {recovered:10.0f} {left:6.0f} {step:8.2f} {step / first:6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
