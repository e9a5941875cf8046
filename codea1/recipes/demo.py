"""`codea1 demo`: the cold-start recipe and a short Code-A1 run of SmolLM2-135M on CPU, measured.

1. evaluates the bundled SmolLM2-135M on held-out problems: the Test LLM's valid ratio (suites written
   against each problem's GT, white-box, with the preset's response prefix) and the Code LLM's pass@1;
2. cold start: a supervised warm-up (`codea1 sft`) on the bundled train split, less any problem that
   near-duplicates a held-out one (codea1.data.decontam; the dropped pairs are printed);
3. evaluates again, then trains a few a1 steps from the warmed-up model and evaluates a third time;
4. prints each measurement with its 95% bootstrap interval over the problems and the paired difference
   to the start, writes eval.json and the HTML report.
A change is called a change only where the interval of the paired difference excludes zero; with a
handful of problems most differences in pass@1 are not, and the demo says so.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import Config, apply_overrides, config_from_dict, load_config
from codea1.data import load_problems, write_problems_jsonl
from codea1.data.decontam import decontaminate
from codea1.eval.stats import paired_difference
from codea1.models import cache_dir
from codea1.sandbox.api import Executor
from codea1.train.loop import (
    KeptPolicies,
    load_training_problems,
    make_executor,
    method_policies,
    on_problem_file,
    train,
)
from codea1.train.report import write_report
from codea1.train.run_dir import RunDir
from codea1.train.sft import run_sft

if TYPE_CHECKING:
    from rich.console import Console

    from codea1.eval.policy_eval import Sampler
    from codea1.problem import Problem

PRESETS = Path(__file__).resolve().parents[1] / "configs"
EXPECTED_MINUTES = "12-16"


def measure(
    code_policy: Sampler, test_policy: Sampler, problems: list[Problem], executor: Executor, cfg: Config
) -> dict[str, Any]:
    """The demo's two measurements on the held-out problems (codea1.eval.policy_eval): the Code LLM's
    pass@1 and the Test LLM's white-box valid ratio, each per problem with a bootstrap interval."""
    from codea1.eval.policy_eval import EvalPlan, evaluate_code, evaluate_tests

    spec = EvalPlan(
        code_samples=cfg.eval.n_samples,
        test_samples=2,
        test_k=cfg.game.tests_per_suite,
        mutation=False,
        seed=cfg.seed,
        bootstrap=4000,
    )
    code = evaluate_code(code_policy, problems, executor, cfg, spec)
    code.pop("sample_rows")
    return {
        "code": code,
        "tests": evaluate_tests(test_policy, problems, executor, cfg, spec, modes=("whitebox",))["whitebox"],
    }


def with_training_problems(cfg: Config, problems: list, path: Path) -> Config:
    """The config training on exactly `problems` (written to `path`; already checked, so no GT check)."""

    write_problems_jsonl(problems, path)
    return config_from_dict(on_problem_file(cfg.to_dict(), path))


def dir_bytes(path: Path) -> int:
    """Bytes of the files under `path` (0 if it does not exist)."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file()) if Path(path).exists() else 0


def drop_optimizer_state(checkpoints: Path) -> int:
    """Deletes the optimiser and scheduler states of a finished demo's checkpoints (the demo is not resumed;
    its policies stay loadable); returns the bytes freed."""
    freed = 0
    for name in ("optimizer.pt", "scheduler.pt"):
        for path in checkpoints.glob(f"*/*/{name}") if checkpoints.is_dir() else []:
            freed += path.stat().st_size
            path.unlink()
    return freed


def disk_line(run_dir: Path, freed: int) -> str:
    """What the demo keeps on disk, and where."""

    mb = 1 << 20
    parts = ", ".join(f"{name}/ {dir_bytes(run_dir / name) / mb:.0f} MB" for name in ("sft", "train"))
    return (
        f"disk: {dir_bytes(run_dir) / mb:.0f} MB kept in {run_dir} ({parts}; {freed / mb:.0f} MB of optimiser "
        f"state deleted at the end); the converted model is cached in {cache_dir()} "
        f"({dir_bytes(cache_dir()) / mb:.0f} MB, reused by later runs)"
    )


def change_line(label: str, before: dict[str, float], after: dict[str, float], seed: int) -> str:
    """ "label: a -> b (paired difference d [lo, hi])" and whether the interval supports a change."""

    d, lo, hi = paired_difference(after, before, samples=4000, seed=seed)
    a = sum(before.values()) / max(len(before), 1)
    b = sum(after.values()) / max(len(after), 1)
    if lo > 0:
        verdict = "higher, beyond the interval"
    elif hi < 0:
        verdict = "lower, beyond the interval"
    else:
        verdict = "no change the interval supports"
    return f"{label}: {a:.3f} -> {b:.3f} (paired difference {d:+.3f}, 95% CI [{lo:+.3f}, {hi:+.3f}]: {verdict})"


def _row(name: str, m: dict[str, Any]) -> str:
    t, c = m["tests"], m["code"]
    return (
        f"{name:<22} {t['valid_ratio']:.3f} [{t['valid_ratio_ci95'][0]:.3f}, {t['valid_ratio_ci95'][1]:.3f}]"
        f"   {c['pass@1']:.3f} [{c['ci95'][0]:.3f}, {c['ci95'][1]:.3f}]"
    )


def _announce(console: Console, cfg: Config, run_dir: Path, total_steps: int, preset_as_is: bool) -> None:
    """Prints what the demo does, about how long it takes, and its run directory."""
    duration = (
        f"This takes about {EXPECTED_MINUTES} minutes on 2 CPU cores (the first run also converts "
        f"the bundled model once)."
        if preset_as_is
        else "The duration depends on the preset and overrides given."
    )
    console.print(
        f"[bold]codea1 demo[/bold]: {cfg.model.code_model} as Code LLM and Test LLM: measured, "
        f"warmed up on the bundled train split (cold start), then {total_steps} Code-A1 steps "
        f"(B={cfg.train.batch_size}, M={cfg.game.M}, N={cfg.game.N}), measured after each stage on "
        f"{cfg.eval.limit} held-out problems. {duration}"
    )
    console.print(f"run directory: {run_dir}")


def _measure_start(cfg: Config, eval_problems: list[Problem], executor: Executor) -> dict[str, Any]:
    """The start model's measurements (its policies are released on return, before the warm-up loads more)."""
    code_policy, test_policy = method_policies(cfg)
    return measure(code_policy, test_policy, eval_problems, executor, cfg)


def _training_config(
    cfg: Config, eval_problems: list[Problem], executor: Executor, run_dir: Path, console: Console
) -> tuple[Config, list[Problem]]:
    """The train split less any problem that near-duplicates a held-out one (each dropped pair printed), and the
    config training on exactly it."""
    problems = load_training_problems(cfg, executor, console)
    problems, pairs = decontaminate(problems, eval_problems, executor)
    for pair in pairs:  # a training problem that near-duplicates a held-out one would inflate the gain
        console.print(
            f"  dropped {pair.train_id} ({pair.train_entry_point}) from training: a near-duplicate "
            f"of held-out {pair.held_out_id} ({pair.held_out_entry_point}; {', '.join(pair.signals)})",
            highlight=False,
            soft_wrap=True,
        )
    return with_training_problems(cfg, problems, run_dir / "train_problems.jsonl"), problems


def _result_lines(stages: dict[str, dict[str, Any]], cfg: Config, n: int) -> list[str]:
    """The table of stages and the paired differences: each stage against the start, and the a1 steps against
    the cold start they began from."""
    names = list(stages)
    intro = (
        f"held-out problems: {n} ({cfg.eval.problems}); Test LLM: 2 white-box suites per problem against "
        f"the GT; Code LLM: pass@1 from {cfg.eval.n_samples} samples per problem; 95% bootstrap intervals "
        f"over problems"
    )
    lines = [intro, f"{'stage':<22} {'Test LLM valid ratio':<22} Code LLM pass@1"]
    lines += [_row(name, stages[name]) for name in names]
    pairs = [("start", later) for later in names[1:]] + list(itertools.pairwise(names[1:]))
    for before, later in pairs:
        lines.append(
            change_line(
                f"valid ratio, {before} -> {later}",
                stages[before]["tests"]["per_problem"],
                stages[later]["tests"]["per_problem"],
                cfg.seed,
            )
        )
        lines.append(
            change_line(
                f"pass@1, {before} -> {later}",
                stages[before]["code"]["per_problem"],
                stages[later]["code"]["per_problem"],
                cfg.seed,
            )
        )
    return lines


def _print_finish(seconds: float, lines: list[str], run_dir: Path, freed: int, report: Path) -> None:
    """Prints the duration, the disk used, the result lines and where the run and its report are."""
    print(f"demo finished in {seconds / 60:.1f} min")
    print(disk_line(run_dir, freed))
    for line in lines:
        print(line)
    print(f"run directory: {run_dir}")
    print(f"report: {report}")


def run_demo(
    run_dir: Path | None = None,
    steps: int | None = None,
    config: Path | None = None,
    overrides: list[str] | None = None,
) -> dict[str, Any]:
    """Runs the demo and returns its summary (also written to RUN_DIR/eval.json)."""
    from rich.console import Console

    console = Console(stderr=True)
    start = time.perf_counter()
    cfg = load_config(config or PRESETS / "smollm2-cpu.yaml", overrides)
    run_dir = Path(run_dir or Path("runs") / f"demo-{time.strftime('%Y%m%d-%H%M%S')}")
    total_steps = steps or cfg.train.max_steps
    _announce(console, cfg, run_dir, total_steps, config is None and not overrides and steps is None)

    eval_problems = load_problems(cfg.eval.problems)[: cfg.eval.limit]
    RunDir.check_new(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)  # must exist for the sandbox to hide it
    stages: dict[str, dict[str, Any]] = {}
    with make_executor(cfg, hide_paths=[str(run_dir.resolve())]) as executor:
        console.print("[bold]1/4[/bold] measuring the start model ...")
        stages["start"] = _measure_start(cfg, eval_problems, executor)
        console.print(_row("start", stages["start"]))

        console.print("[bold]2/4[/bold] cold start: supervised warm-up on the train split (codea1 sft) ...")
        cfg, problems = _training_config(cfg, eval_problems, executor, run_dir, console)
        sft = run_sft(cfg, run_dir / "sft", console=console, problems=problems)
        warm = config_from_dict(apply_overrides(cfg.to_dict(), sft["overrides"]))
        policies = KeptPolicies()
        code_policy, test_policy = policies(warm)
        stages["after cold start"] = measure(code_policy, test_policy, eval_problems, executor, warm)
        console.print(_row("after cold start", stages["after cold start"]))

        console.print(f"[bold]3/4[/bold] {total_steps} Code-A1 steps from the warmed-up model ...")
        train(
            warm, run_dir / "train", max_steps=total_steps, policy_factory=policies, console=console, executor=executor
        )
        console.print("[bold]4/4[/bold] measuring after training ...")
        stages[f"after {total_steps} a1 steps"] = measure(code_policy, test_policy, eval_problems, executor, warm)

    freed = drop_optimizer_state(run_dir / "train" / "checkpoints")
    n = len(eval_problems)
    lines = _result_lines(stages, cfg, n)
    summary = {
        "stages": stages,
        "steps": total_steps,
        "problems": n,
        "eval_problems": cfg.eval.problems,
        "sft": {k: sft[k] for k in ("examples", "loss_before", "loss_after")},
        "seconds": round(time.perf_counter() - start, 1),
        "lines": lines,
    }
    (run_dir / "eval.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    report = write_report(run_dir / "train")
    _print_finish(summary["seconds"], lines, run_dir, freed, report)
    return summary
