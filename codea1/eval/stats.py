"""Statistics of an evaluation over problems: percentile bootstrap intervals, paired differences between
two evaluations of the same problems, and the power statement of a planned comparison. Pure functions on
per-problem numbers (numpy only), used by `codea1 compare`, the demo and `codea1 eval diff`."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any


def bootstrap_interval(
    values: Sequence[float], *, samples: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-problem values and its percentile bootstrap interval, resampling
    problems with replacement."""
    import numpy as np

    x = np.asarray(list(values), dtype=np.float64)
    if x.size == 0:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(samples, x.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return float(x.mean()), float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail))


def paired_difference(
    a: dict[str, float], b: dict[str, float], *, samples: int = 10_000, seed: int = 0
) -> tuple[float, float, float]:
    """Mean of a - b over the problems both have, with its paired bootstrap interval."""
    common = sorted(set(a) & set(b))
    return bootstrap_interval([a[k] - b[k] for k in common], samples=samples, seed=seed)


def held_out_difference(
    new: dict[str, Any],
    old: dict[str, Any],
    *,
    samples: int = 10_000,
    seed: int = 0,
    problems: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """Paired differences, new - old, between two held-out evaluations (`evals/METHOD/step_N.json` of a
    comparison, possibly from two comparisons with different start checkpoints): Code LLM pass@1 and the
    Test LLM's valid ratio (and pass@k with missing tests invalid, where both recorded it) per prompt mode, over the problems both evaluated (and among `problems`, when
    given). One row per measure that both have: {"measure", "new", "old", "delta", "ci95", "problems"}."""
    pairs = [("code pass@1", (new.get("code") or {}).get("per_problem"), (old.get("code") or {}).get("per_problem"))]
    for mode in sorted(set(new.get("tests") or {}) & set(old.get("tests") or {})):
        pairs.append(
            (f"test valid ratio ({mode})", new["tests"][mode].get("per_problem"), old["tests"][mode].get("per_problem"))
        )
        pairs.append(
            (
                f"test valid ratio, repeated calls invalid ({mode})",
                new["tests"][mode].get("per_problem_distinct"),
                old["tests"][mode].get("per_problem_distinct"),
            )
        )
        for key in sorted(k for k in new["tests"][mode] if k.startswith("per_problem_pass@")):
            pairs.append(
                (
                    f"test {key.removeprefix('per_problem_')}, missing tests invalid ({mode})",
                    new["tests"][mode].get(key),
                    old["tests"][mode].get(key),
                )
            )
    rows = []
    for measure, a, b in pairs:
        if problems is not None:
            a = {k: v for k, v in (a or {}).items() if k in problems}
            b = {k: v for k, v in (b or {}).items() if k in problems}
        if not a or not b:
            continue
        common = sorted(set(a) & set(b))
        if not common:
            raise ValueError(f"{measure}: the two evaluations share no problem")
        d, lo, hi = paired_difference(a, b, samples=samples, seed=seed)
        rows.append(
            {
                "measure": measure,
                "new": sum(a[k] for k in common) / len(common),
                "old": sum(b[k] for k in common) / len(common),
                "delta": d,
                "ci95": [lo, hi],
                "problems": len(common),
            }
        )
    return rows


def problem_part(problem_id: str) -> str:
    """The part of a held-out set a problem belongs to: its id up to the last "/" ("MBPP/12" -> "MBPP",
    "bundled/0003" -> "bundled"); an id without one is its own part's name."""
    return problem_id.rsplit("/", 1)[0] if "/" in problem_id else problem_id


def held_out_difference_by_part(
    new: dict[str, Any], old: dict[str, Any], *, samples: int = 10_000, seed: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """held_out_difference over each part of the held-out set (problem_part of the ids both evaluated
    for code), part by part in name order: the rows of one part compare only that part's problems."""
    ids = set((new.get("code") or {}).get("per_problem") or {}) & set((old.get("code") or {}).get("per_problem") or {})
    parts: dict[str, set[str]] = {}
    for pid in ids:
        parts.setdefault(problem_part(pid), set()).add(pid)
    return {
        part: held_out_difference(new, old, samples=samples, seed=seed, problems=members)
        for part, members in sorted(parts.items())
    }


Z_95 = 1.959964  # two-sided 5% level
Z_80 = 0.841621  # 80% power


def power_statement(per_problem: dict[str, float], samples: int) -> dict[str, Any]:
    """What a paired pass@1 comparison on these problems can detect, from the base evaluation alone.

    Each problem's pass fraction from `samples` draws has sampling variance p(1-p)/n, estimated without
    bias by p̂(1-p̂)/(n-1); the difference of two such fractions (base, trained), with an unchanged p,
    has twice that. The paired standard error of the mean difference over P problems is the root of
    the sum over P squared; the smallest detectable difference at 80% power and a two-sided 5% level is
    (1.96 + 0.84) times it. Real per-problem effects vary, which adds variance: this is a lower bound
    on the detectable difference, not a promise."""
    n = int(samples)
    values = list(per_problem.values())
    if not values or n < 2:
        return {"problems": len(values), "samples_per_problem": n, "paired_se": None, "mde_80": None}
    var = sum(2.0 * p * (1.0 - p) / (n - 1) for p in values) / len(values) ** 2
    se = math.sqrt(var)
    return {
        "problems": len(values),
        "samples_per_problem": n,
        "base_pass@1": sum(values) / len(values),
        "paired_se": se,
        "mde_80": (Z_95 + Z_80) * se,
        "level": 0.05,
        "power": 0.8,
        "note": "sampling noise only (no problem-level variation of the effect): a lower bound",
    }


def simulated_power(
    base_rates: Sequence[float],
    problems: int,
    samples: int,
    effect: float,
    *,
    gaining: float = 1.0,
    sims: int = 2000,
    seed: int = 0,
) -> float:
    """The chance that a paired pass@1 comparison of `problems` held-out problems x `samples` samples
    finds a true gain of `effect` (a fraction: 0.015 for 1.5 points) above zero at the two-sided 5% level.

    Each simulated held-out set draws its problems' base rates from `base_rates` (with replacement: a
    larger set of problems like the measured ones). The trained rate of a problem is its base rate plus
    effect / gaining for a random share `gaining` of the problems (1.0: every problem gains alike;
    0.3: the same mean gain carried by 30% of them), clipped to [0, 1]. Both evaluations draw `samples`
    Bernoulli samples per problem; the test is the mean paired difference over its standard error across
    problems (what the paired bootstrap approximates)."""
    import numpy as np

    if problems < 2 or samples < 1 or not base_rates:
        raise ValueError("simulated_power needs >= 2 problems, >= 1 sample and some base rates")
    if not 0.0 < gaining <= 1.0:
        raise ValueError("gaining is a share of the problems in (0, 1]")
    rng = np.random.default_rng(seed)
    rates = np.asarray(base_rates, dtype=float)
    found = 0
    for _ in range(sims):
        p = rng.choice(rates, size=problems, replace=True)
        gains = (rng.random(problems) < gaining) * (effect / gaining)
        q = np.clip(p + gains, 0.0, 1.0)
        diff = rng.binomial(samples, q) / samples - rng.binomial(samples, p) / samples
        se = diff.std(ddof=1) / math.sqrt(problems)
        if se > 0 and diff.mean() / se > Z_95:
            found += 1
    return found / sims


def power_line(power: dict[str, Any]) -> str:
    """The power statement in one sentence (percentage points)."""
    if power.get("paired_se") is None:
        return "power: not computable (fewer than 2 samples per problem)"
    return (
        f"power: {power['problems']} held-out problems x {power['samples_per_problem']} samples, base "
        f"pass@1 {100 * power['base_pass@1']:.1f}%: paired standard error of a pass@1 difference "
        f">= {100 * power['paired_se']:.2f} points; the smallest difference detectable at 80% power "
        f"(two-sided 5%) is >= {100 * power['mde_80']:.2f} points"
    )
