"""`codea1 demo`: a short Code-A1 run of SmolLM2-135M on CPU with a before/after evaluation.

1. evaluates the code policy on a few held-out bundled problems (pass rate on their golden tests),
2. trains a few a1 steps with the smollm2-cpu preset on the bundled train split,
3. evaluates again with the trained code policy, writes eval.json and the HTML report.
SmolLM2-135M is weak at code, so the pass rates are small and a few steps barely move them: the demo
shows the whole machinery working end to end on a laptop, not a result.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from codea1.config import Config, load_config

PRESETS = Path(__file__).resolve().parents[1] / "configs"
EXPECTED_MINUTES = "10-15"


def evaluate_code_policy(policy: Any, problems: list, executor: Any, cfg: Config, seed: int) -> dict[str, Any]:
    """Pass rate of `policy` on `problems`: n samples each, a sample passes if it passes every golden
    test of its problem (executed in the sandbox). Returns {"pass_rate", "per_problem": {id: [0/1...]}}."""
    import torch

    from codea1.game.config import GameConfig
    from codea1.game.play import golden_step
    from codea1.game.prompts import code_messages
    from codea1.rl.policy import GenerationConfig

    torch.manual_seed(seed)
    gen = GenerationConfig(n=cfg.eval.n_samples, temperature=cfg.eval.temperature, top_p=cfg.eval.top_p,
                           max_new_tokens=cfg.eval.max_new_tokens)
    samples = policy.generate([code_messages(p) for p in problems], gen)
    rewards = golden_step(problems, [[s.text for s in row] for row in samples], executor,
                          GameConfig(test_timeout=cfg.executor.timeout))
    per_problem = {p.id: [1 if r >= 1.0 else 0 for r in row] for p, row in zip(problems, rewards)}
    flat = [x for row in per_problem.values() for x in row]
    return {"pass_rate": sum(flat) / len(flat) if flat else 0.0, "per_problem": per_problem,
            "n_samples": cfg.eval.n_samples, "problems": len(problems)}


def run_demo(run_dir: Path | None = None, steps: int | None = None, config: Path | None = None,
             overrides: list[str] | None = None) -> dict[str, Any]:
    """Runs the demo and returns its summary (also written to RUN_DIR/eval.json)."""
    from rich.console import Console

    from codea1.data import load_problems
    from codea1.train.loop import build_policies, make_executor, train
    from codea1.train.report import write_report

    console = Console(stderr=True)
    start = time.perf_counter()
    cfg = load_config(config or PRESETS / "smollm2-cpu.yaml", overrides)
    run_dir = Path(run_dir or Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}")
    total_steps = steps or cfg.train.max_steps
    console.print(f"[bold]codea1 demo[/bold]: {cfg.model.code_policy} plays Code-A1 against itself for "
                  f"{total_steps} steps (B={cfg.train.batch_size}, M={cfg.game.M}, N={cfg.game.N}) on the "
                  f"bundled train split, with a before/after evaluation on {cfg.eval.limit} held-out "
                  f"problems. This takes about {EXPECTED_MINUTES} minutes on 2 CPU cores (the first run also "
                  f"converts the bundled model once).")
    console.print(f"run directory: {run_dir}")

    eval_problems = load_problems(cfg.eval.problems)[: cfg.eval.limit]
    policies: dict[str, Any] = {}

    def factory(c: Config) -> tuple[Any, Any]:
        if "pair" not in policies:
            policies["pair"] = build_policies(c)
        return policies["pair"]

    with make_executor(cfg, hide_paths=[str(run_dir.resolve())]) as executor:
        console.print("loading models ...")
        code_policy, _ = factory(cfg)
        console.print(f"evaluating the code policy before training ({len(eval_problems)} problems x "
                      f"{cfg.eval.n_samples} samples) ...")
        before = evaluate_code_policy(code_policy, eval_problems, executor, cfg, seed=cfg.seed + 1)
        console.print(f"pass rate before: {before['pass_rate']:.3f}")
        train(cfg, run_dir, max_steps=total_steps, policy_factory=factory, console=console, executor=executor)
        console.print("evaluating the code policy after training ...")
        after = evaluate_code_policy(code_policy, eval_problems, executor, cfg, seed=cfg.seed + 1)
        console.print(f"pass rate after: {after['pass_rate']:.3f}")

    summary = {"before": before, "after": after, "steps": total_steps,
               "seconds": round(time.perf_counter() - start, 1), "eval_problems": cfg.eval.problems}
    (run_dir / "eval.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    report = write_report(run_dir)
    minutes = summary["seconds"] / 60
    print(f"demo finished in {minutes:.1f} min: pass rate {before['pass_rate']:.3f} -> {after['pass_rate']:.3f} "
          f"on {len(eval_problems)} held-out problems")
    print(f"run directory: {run_dir}")
    print(f"report: {report}")
    return summary
