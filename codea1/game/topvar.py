"""TopVar (docs/algorithm.md section 7): train the test policy on the candidates whose suites disagree most."""

from __future__ import annotations

import math
from collections.abc import Sequence


def population_std(values: Sequence[float]) -> float:
    """Population standard deviation (divides by n); 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def topvar_select(test_rewards: Sequence[Sequence[float]], ell: int = 1) -> list[bool]:
    """Which of a question's M candidates the test policy trains on.

    test_rewards[m][n] is R_T of suite n written for candidate m. The ell candidates with the largest
    population std of R_T over their suites are selected (a group with equal rewards has no GRPO
    signal); ties go to the lower index, so the choice is deterministic. ell >= M selects all.
    """
    stds = [population_std(list(row)) for row in test_rewards]
    order = sorted(range(len(stds)), key=lambda m: (-round(stds[m], 12), m))
    chosen = set(order[: max(ell, 0)])
    return [m in chosen for m in range(len(stds))]
