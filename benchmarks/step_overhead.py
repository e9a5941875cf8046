"""Share of a training step spent outside model compute, on the tiny-cpu preset (target <= 15%).

Runs a short a1 run with tiny-random models (M=N=4, B=8 questions per step) and reads its
metrics.jsonl. Model compute = generating codes + generating tests + the GRPO updates; everything else
(parsing, oracle validation and execution in the sandbox, rewards, Mistake Book, TopVar, rollouts,
metrics) is "outside". Step 1 is reported but left out of the mean (it warms up the sandbox pool).

    python benchmarks/step_overhead.py [--steps 6] [--scripted]

--scripted replaces the tiny model's gibberish by scripted right/wrong codes and golden-test suites
(tests/train_scripted.py), so the sandbox runs real tests every step: the harder case for overhead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--scripted", action="store_true", help="scripted code/test texts (see docstring)")
    args = parser.parse_args()

    from codea1.config import load_config, torch_threads
    from codea1.train.loop import train
    from codea1.train.metrics import read_metrics

    cfg = load_config(
        REPO / "codea1" / "configs" / "tiny-cpu.yaml",
        ["game.M=4", "game.N=4", "train.batch_size=8", "train.progress=false", f"train.checkpoint_every={args.steps}"],
    )
    factory = None
    if args.scripted:
        sys.path.insert(0, str(REPO / "tests"))
        from train_scripted import scripted_factory

        from codea1.data import load_problems

        factory = scripted_factory(load_problems(cfg.data.train))
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        train(cfg, run_dir, max_steps=args.steps, policy_factory=factory, progress=False)
        rows = read_metrics(run_dir / "metrics.jsonl")

    cols = ["time_step", "time_gen_code", "time_gen_tests", "time_execute", "time_learn", "time_outside_model"]
    print(
        f"tiny-cpu a1, M={cfg.game.M} N={cfg.game.N} B={cfg.train.batch_size}"
        f"{' (scripted texts)' if args.scripted else ''}, torch threads {torch_threads(cfg)}"
    )
    print("step " + " ".join(f"{c[5:]:>13s}" for c in cols) + "   outside%")
    for r in rows:
        print(f"{r['step']:4d} " + " ".join(f"{r[c]:13.3f}" for c in cols) + f"   {100 * r['outside_model_frac']:7.1f}")
    steady = rows[1:] or rows
    step_time = sum(r["time_step"] for r in steady)
    outside = sum(r["time_outside_model"] for r in steady)
    share = outside / step_time if step_time else 0.0
    print(
        f"mean over steps {steady[0]['step']}-{steady[-1]['step']}: step {step_time / len(steady):.3f} s, "
        f"outside model compute {outside / len(steady):.3f} s = {100 * share:.1f}% (target <= 15%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
