"""Per-problem Test LLM figures of committed held-out evaluations, re-judged from their samples.

An evaluation written by `codea1 compare` keeps every test response (`evals/METHOD/step_N.samples.jsonl.gz`)
but, before per-problem pass@k was recorded, only the per-problem valid ratio. This script re-judges each
suite against its problem's GT with codea1's scorer and writes, per evaluation, prompt mode and problem:

- pass@k: valid tests among the suite's first k, missing tests counted invalid, averaged over the suites;
- the valid ratio: valid tests among the first k the suite wrote (what the evaluation recorded; the
  script checks that its re-judging gives the recorded figure for every problem and reports any that
  does not).

    python scripts/experiments/test_suite_pass.py --problems HELDOUT.jsonl --k 4 \\
        --eval base=evals/base/step_0.json --eval a1=evals/a1/step_114.json --output test_pass4.json

Then paired differences (and the power of the primary measure) come from `paired` below.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path
from typing import Any

from codea1.config import load_config
from codea1.data import load_problems
from codea1.data.ult import UltFunction
from codea1.eval.stats import Z_80, Z_95, paired_difference
from codea1.eval.suite_eval import score_tests
from codea1.game import parse_test_suite
from codea1.train.loop import make_executor


def suites_of(samples: Path) -> dict[tuple[str, str, int], str]:
    """(mode, task_id, suite) -> the test response, from an evaluation's samples file."""
    out: dict[tuple[str, str, int], str] = {}
    with gzip.open(samples, "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row.get("role") == "test":
                out[(row["mode"], row["task_id"], int(row["suite"]))] = row["response"]
    return out


def rejudge(eval_path: Path, problems: list, k: int, executor: Any, timeout: float) -> dict[str, Any]:
    """{mode: {"pass@k": {task_id: value}, "valid_ratio": {...}, "mismatches": [...]}} for one evaluation."""
    record = json.loads(eval_path.read_text(encoding="utf-8"))
    samples = eval_path.with_name(eval_path.name.replace(".json", ".samples.jsonl.gz"))
    responses = suites_of(samples)
    functions = [UltFunction(p.id, p.entry_point, p.gt_solution, p.description, list(p.golden_tests)) for p in problems]
    out: dict[str, Any] = {}
    for mode, recorded in sorted((record.get("tests") or {}).items()):
        n = int(recorded["suites_per_problem"])
        passk: dict[str, list[float]] = {p.id: [] for p in problems}
        ratio: dict[str, list[float]] = {p.id: [] for p in problems}
        short = 0
        for i in range(n):
            parsed = {
                p.id: [t.statement for t in parse_test_suite(responses[(mode, p.id, i)], p.entry_point).tests]
                for p in problems
            }
            _, records = score_tests(functions, parsed, executor, k=k, mutation=False, coverage=False, timeout=timeout)
            short += sum(len(tests) < k for tests in parsed.values())
            for rec in records:
                written = min(len(parsed[rec.task_id]), k)
                passk[rec.task_id].append(sum(rec.valid) / k)
                ratio[rec.task_id].append(sum(rec.valid) / written if written else 0.0)
        per_pass = {tid: sum(v) / len(v) for tid, v in passk.items()}
        per_ratio = {tid: sum(v) / len(v) for tid, v in ratio.items()}
        mismatches = [
            tid for tid, v in per_ratio.items() if abs(v - float(recorded["per_problem"].get(tid, math.nan))) > 1e-9
        ]
        out[mode] = {f"pass@{k}": per_pass, "valid_ratio": per_ratio, "mismatches": mismatches, "short_suites": short}
    return out


def paired(new: dict[str, float], old: dict[str, float], seed: int = 0) -> dict[str, Any]:
    """new - old over the common problems: mean, paired 95% bootstrap interval, a two-sided p-value from the
    paired t statistic (normal reference), and the smallest difference detectable at 80% power."""
    common = sorted(set(new) & set(old))
    diffs = [new[t] - old[t] for t in common]
    mean, lo, hi = paired_difference(new, old, seed=seed)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)) if len(diffs) > 1 else 0.0
    se = sd / math.sqrt(len(diffs)) if diffs else 0.0
    p = math.erfc(abs(mean / se) / math.sqrt(2.0)) if se > 0 else 1.0
    return {
        "delta": mean,
        "ci95": [lo, hi],
        "p": p,
        "paired_se": se,
        "mde_80": (Z_95 + Z_80) * se,
        "problems": len(common),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", required=True, help="the held-out problems (JSONL) the evaluations ran on")
    ap.add_argument("--eval", action="append", required=True, help="NAME=evals/METHOD/step_N.json (repeatable)")
    ap.add_argument("--k", type=int, default=4, help="tests per suite (the evaluation's --test-k)")
    ap.add_argument("--config", default="codea1/configs/smollm2-cpu.yaml", help="sandbox settings and test timeout")
    ap.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    problems = load_problems(args.problems)
    result: dict[str, Any] = {"k": args.k, "problems": len(problems), "evaluations": {}}
    with make_executor(cfg) as executor:
        for item in args.eval:
            name, _, path = item.partition("=")
            print(f"re-judging {name} ({path})", file=sys.stderr)
            result["evaluations"][name] = rejudge(Path(path), problems, args.k, executor, cfg.game.test_timeout)
    Path(args.output).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for name, modes in result["evaluations"].items():
        for mode, figures in modes.items():
            values = figures[f"pass@{args.k}"]
            print(
                f"{name} {mode}: pass@{args.k} {100 * sum(values.values()) / len(values):.2f}, "
                f"{figures['short_suites']} suites with fewer than {args.k} tests, "
                f"{len(figures['mismatches'])} problems whose valid ratio differs from the recorded one"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
