"""Unbiased pass@k (Chen et al., 2021): 1 - C(n-c, k) / C(n, k), computed as a stable product.

The binomial ratio is evaluated as prod_{i=n-c+1..n} (1 - k / i), which never forms huge binomials and
stays exact to float precision for any n. avg@n (the paper's headline) equals pass@1.
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
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


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
