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
    """pass@1 of `policy` (in memory, as trained) on `problems`: eval.n_samples seeded samples each, scored
    by codea1.eval's code evaluation in the sandbox (problems whose GT fails its own tests are excluded
    and listed). Returns {"pass_rate", "tasks": {id: {"n", "correct"}}, "excluded", "n_samples", "problems"}."""
    from codea1.eval.code_eval import evaluate_samples
    from codea1.game.parsing import extract_code
    from codea1.game.prompts import code_messages, with_prefix
    from codea1.rl.rollout import GenerationConfig

    gen = GenerationConfig.of(cfg.eval, n=cfg.eval.n_samples, seed=seed)
    samples = policy.generate([with_prefix(code_messages(p), cfg.eval.response_prefix, p) for p in problems], gen)
    solutions = [(p.id, extract_code(s.text)) for p, row in zip(problems, samples) for s in row]
    summary, _results, _tasks = evaluate_samples(problems, solutions, executor)
    return {"pass_rate": float(summary["pass@1"]), "tasks": summary["tasks"], "excluded": summary["excluded"],
            "n_samples": cfg.eval.n_samples, "problems": len(problems)}


def run_demo(run_dir: Path | None = None, steps: int | None = None, config: Path | None = None,
             overrides: list[str] | None = None) -> dict[str, Any]:
    """Runs the demo and returns its summary (also written to RUN_DIR/eval.json)."""
    from rich.console import Console

    from codea1.data import load_problems
    from codea1.train.loop import build_policies, make_executor, train
    from codea1.train.report import write_report
    from codea1.train.run_dir import RunDir

    console = Console(stderr=True)
    start = time.perf_counter()
    cfg = load_config(config or PRESETS / "smollm2-cpu.yaml", overrides)
    run_dir = Path(run_dir or Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}")
    total_steps = steps or cfg.train.max_steps
    duration = (f"This takes about {EXPECTED_MINUTES} minutes on 2 CPU cores (the first run also converts "
                f"the bundled model once)." if config is None and not overrides and steps is None
                else "The duration depends on the preset and overrides given.")
    console.print(f"[bold]codea1 demo[/bold]: a Code LLM and a Test LLM, both {cfg.model.code_policy}, play "
                  f"Code-A1 for {total_steps} steps (B={cfg.train.batch_size}, M={cfg.game.M}, N={cfg.game.N}) on the "
                  f"bundled train split, with a before/after evaluation on {cfg.eval.limit} held-out "
                  f"problems. {duration}")
    console.print(f"run directory: {run_dir}")

    eval_problems = load_problems(cfg.eval.problems)[: cfg.eval.limit]
    policies: dict[str, Any] = {}

    def factory(c: Config) -> tuple[Any, Any]:
        if "pair" not in policies:
            policies["pair"] = build_policies(c)
        return policies["pair"]

    RunDir.check_new(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)  # must exist for the sandbox to hide it
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
