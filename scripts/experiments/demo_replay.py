"""The demo's a1 batches scored by the cold-start model itself, with no RL update.

    PYTHONPATH=. python scripts/experiments/demo_replay.py runs/demo-<time>

For each step of the demo run, the same questions (the run's seeded order) and the same sampling seeds,
with the model as the cold start left it: its golden pass rate, next to the run's own (after the
updates of the steps before). Step 1 must agree exactly (same weights, same seeds); the later steps say
how much of a change in the batch metrics is the questions and how much is learning. Writes
RUN/replay.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(run: Path) -> list[dict]:
    import torch

    from codea1.config import load_config, torch_threads
    from codea1.game import golden_step
    from codea1.train.loop import batch_indices, load_training_problems, make_executor, method_policies
    from codea1.train.methods import StepEnv, sample_codes

    cfg = load_config(run / "train" / "config.yaml")  # the warmed-up model and the demo's training problems
    torch.set_num_threads(torch_threads(cfg))
    trained = [json.loads(line) for line in (run / "train" / "metrics.jsonl").read_text().splitlines()]
    rows = []
    with make_executor(cfg) as executor:
        problems = load_training_problems(cfg, executor, None)
        code, test = method_policies(cfg)
        env = StepEnv(cfg, code, test, None, executor, lambda name: None)
        for step, logged in enumerate(trained, 1):
            idx = batch_indices(cfg.seed, len(problems), (step - 1) * cfg.train.batch_size, cfg.train.batch_size)
            batch = [problems[i] for i in idx]
            codes = sample_codes(env, step, batch)
            rewards = [
                x for r in golden_step(batch, [[s.text for s in row] for row in codes], executor, cfg.game) for x in r
            ]
            rows.append(
                {
                    "step": step,
                    "questions": [p.id for p in batch],
                    "golden_pass_rate_no_update": sum(rewards) / len(rewards),
                    "golden_pass_rate_run": logged.get("golden_pass_rate"),
                    "code_reward_run": logged.get("code_reward"),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    (run / "replay.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return rows


if __name__ == "__main__":
    main(Path(sys.argv[1]))
