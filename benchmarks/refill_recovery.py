"""Dynamic sampling on the tiny-cpu preset: groups with gradient, groups recovered and step time per mode.

Runs the same short a1 run (tiny-random policies whose texts are scripted from their sampled ids, so the
game sees real passes and failures: tests/train_scripted.py) with train.dynamic_sampling off, refill
(train.refill_rounds = each of --rounds) and dapo (train.dapo_max_draws = each of --draws), on one seed
and one data order, and prints per run: the share of each role's target groups (B questions' code
groups, B*topvar_ell suite groups) that the steps trained with a gradient (unequal rewards), the groups
recovered (refill: questions sampled again until their rewards differed; dapo: groups from new questions
drawn), the draws dapo made, the steps that fell short of a role's target, and the step time against off.

    python benchmarks/refill_recovery.py [--steps 6] [--rounds 1,2] [--draws 2,4]
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


def summary(rows: list[dict], batch: int, ell: int) -> dict[str, float]:
    """Totals of a run's metrics rows: groups trained with a gradient per role (out of its target),
    groups recovered, dapo draws, steps short of a target, and the mean step time (the first step, which
    warms up, left out)."""
    targets = {"code": batch, "test": batch * ell}
    out = {"draws": sum(r.get("dapo_draws", 0.0) for r in rows), "short": 0.0}
    for role, target in targets.items():
        if "dapo_draws" in rows[0]:  # dapo trains only on groups with a gradient
            with_grad = sum(r[f"dapo_{role}_groups"] for r in rows)
            recovered = sum(r[f"dapo_{role}_recovered"] for r in rows)
            out["short"] += sum(1 - r[f"dapo_{role}_target_met"] for r in rows)
        else:  # off and refill train on every group of the batch; zero_var is the share without gradient
            with_grad = sum((1 - r[f"{role}_zero_var_groups"]) * target for r in rows)
            recovered = sum(r.get("refill_recovered", 0.0) for r in rows) if role == "code" else 0.0
        out[f"{role}_share"] = with_grad / (target * len(rows))
        out[f"{role}_recovered"] = recovered
    out["step_s"] = sum(r["time_step"] for r in rows[1:]) / max(1, len(rows) - 1)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rounds", default="1,2", help="train.refill_rounds values of the refill runs")
    parser.add_argument("--draws", default="2,4", help="train.dapo_max_draws values of the dapo runs")
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
    modes = [("off", [])]
    modes += [
        (f"refill {r}", ["train.dynamic_sampling=refill", f"train.refill_rounds={r}"]) for r in args.rounds.split(",")
    ]
    modes += [
        (f"dapo {d}", ["train.dynamic_sampling=dapo", f"train.dapo_max_draws={d}"]) for d in args.draws.split(",")
    ]
    print(f"tiny-cpu a1, M=4 N=2 B=8, {args.steps} steps, scripted texts; groups with gradient: share of the target")
    head = ("mode", "code grad", "test grad", "code recov", "test recov", "draws", "short", "step s", "vs off")
    print(f"{head[0]:>9s} " + " ".join(f"{h:>10s}" for h in head[1:]))
    first = None
    for name, overrides in modes:
        cfg = load_config(REPO / "codea1" / "configs" / "tiny-cpu.yaml", [*base, *overrides])
        with tempfile.TemporaryDirectory() as tmp:
            problems = load_problems(cfg.data.train)
            train(
                cfg, Path(tmp) / "run", max_steps=args.steps, policy_factory=scripted_factory(problems), progress=False
            )
            rows = read_metrics(Path(tmp) / "run" / "metrics.jsonl")
        s = summary(rows, cfg.train.batch_size, min(cfg.game.topvar_ell, cfg.game.M))
        first = first or s["step_s"]
        print(
            f"{name:>9s} {s['code_share']:10.2f} {s['test_share']:10.2f} {s['code_recovered']:10.0f} "
            f"{s['test_recovered']:10.0f} {s['draws']:10.0f} {s['short']:10.0f} {s['step_s']:10.2f} "
            f"{s['step_s'] / first:9.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
