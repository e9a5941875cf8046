"""Dynamic sampling as DAPO defines it (`train.dynamic_sampling: dapo`): the pure part.

DAPO (Yu et al., 2025; verl's recipe/dapo, `algorithm.filter_groups`) drops every GRPO group whose
rewards are all equal (zero variance: no gradient) and samples new prompts until the batch holds its
target number of groups with non-zero variance, at most `max_num_gen_batches` generation batches; the
groups beyond the target are dropped, in the order they came. Here a step plays its own batch (draw 0),
then draws batches of new questions (draw 1, 2, ...) and plays each in full, until every role holds its
target of groups or `train.dapo_max_draws` draws were made (verl's 0, no cap, is not offered).

The new questions never come from the data stream (that would shift every later step's batch): they
come from `reserve_order`, a seeded permutation of the training problems without the step's own batch,
so a replayed step (after a resume) draws the same questions. codea1.train.methods plays the draws;
this module only orders the reserve, selects the groups and names the metrics.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


def has_signal(rewards: Sequence[float]) -> bool:
    """Whether a GRPO group has a gradient: at least two rewards, not all equal."""
    return len(rewards) > 1 and max(rewards) != min(rewards)


def reserve_order(order_seed: int, ids: Sequence[str], own: Sequence[str]) -> list[int]:
    """Indices into the training problems (`ids`) that a step may draw, in the order it draws them: every
    problem but the step's own batch (`own`), shuffled by `order_seed` (a function of the run's seed and
    the step, so a replay draws the same)."""
    taken = set(own)
    order = [i for i, qid in enumerate(ids) if qid not in taken]
    random.Random(order_seed).shuffle(order)
    return order


def reserve_draws(order: Sequence[int], size: int, max_draws: int) -> list[list[int]]:
    """The reserve cut into at most `max_draws` draws of `size` questions (the last may be shorter); a
    question is never drawn twice in one step."""
    return [list(order[k : k + size]) for k in range(0, min(len(order), size * max_draws), size)]


@dataclass
class Picked:
    """What dynamic sampling kept for one role: `kept`, the (draw, group) pairs it trains on, in draw
    order (draw 0: the step's own batch); `dropped`, the groups with all-equal rewards it saw; `trimmed`,
    the groups with signal beyond the target."""

    target: int
    kept: list[tuple[int, int]]
    dropped: int
    trimmed: int

    @property
    def met(self) -> bool:
        return len(self.kept) >= self.target

    @property
    def recovered(self) -> int:
        """Kept groups that came from a draw (not from the step's own batch)."""
        return sum(1 for draw, _ in self.kept if draw > 0)


GroupRewards = Mapping[str, Sequence[Sequence[float]]]


def select_groups(
    targets: Mapping[str, int], max_draws: int, play: Callable[[int], GroupRewards | None]
) -> tuple[dict[str, Picked], int]:
    """DAPO's group selection for one step, pure given `play`: play(0) is the step's own batch and play(d),
    d >= 1, plays the d-th draw of new questions; each returns the reward groups of every role (or None:
    no question left to draw). Groups with all-equal rewards are dropped; draws go on while a role holds
    fewer groups with signal than its target, at most `max_draws` of them; each role's groups are then
    trimmed to its target in draw order. Returns each role's Picked and the number of draws made."""
    found: dict[str, list[tuple[int, int]]] = {role: [] for role in targets}
    dropped = dict.fromkeys(targets, 0)
    draw, made = 0, 0
    while (groups := play(draw)) is not None:
        made = draw
        for role in targets:
            for g, rewards in enumerate(groups[role]):
                if has_signal(rewards):
                    found[role].append((draw, g))
                else:
                    dropped[role] += 1
        if draw >= max_draws or all(len(found[role]) >= n for role, n in targets.items()):
            break
        draw += 1
    picked = {
        role: Picked(n, found[role][:n], dropped[role], max(0, len(found[role]) - n)) for role, n in targets.items()
    }
    return picked, made


def dapo_metrics(picked: Mapping[str, Picked], draws: int) -> dict[str, float]:
    """A step's metrics of dynamic sampling (dapo): the draws it made (each plays both roles), and per role
    the groups it dropped (all-equal rewards), recovered from draws, trimmed beyond the target and trained
    on, and whether the target was met (0: the step trained on fewer groups than a full batch)."""
    out = {"dapo_draws": float(draws)}
    for role, p in picked.items():
        out[f"dapo_{role}_dropped"] = float(p.dropped)
        out[f"dapo_{role}_recovered"] = float(p.recovered)
        out[f"dapo_{role}_trimmed"] = float(p.trimmed)
        out[f"dapo_{role}_groups"] = float(len(p.kept))
        out[f"dapo_{role}_target_met"] = float(p.met)
    return out
