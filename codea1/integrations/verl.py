"""codea1's judge as verl's custom reward (`reward.custom_reward_function.path` / `.name`).

verl's naive reward manager calls `compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=...)` once per response, its batch manager `compute_score(data_sources=..., solution_strs=...,
ground_truths=..., extra_infos=...)` once per batch (name `compute_score_batch` here, pointed at by
`custom_reward_function.name`); both take a returned dict's "score" as the reward and keep its other keys
as extra information. `ground_truth` is the problem: its dict, its JSON (`ground_truth_of`), or the id of
a problem made known with `codea1.integrations.judge.default_judge().add(problems)`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from codea1.integrations.judge import default_judge
from codea1.problem import Problem


def ground_truth_of(problem: Problem) -> str:
    """What to store as a row's `reward_model.ground_truth` in a verl dataset: the problem as JSON."""
    return json.dumps(problem.to_dict())


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **reward_kwargs: Any,
) -> list[dict[str, float]]:
    """verl's batch form: a {"score", "passed", "judged"} dict per response (score 0.0 where the problem
    cannot be judged, with judged 0.0), scored in one sandbox batch."""
    scores = default_judge().score(list(zip(ground_truths, solution_strs, strict=True)))
    return [
        {"score": s.reward or 0.0, "passed": float(s.status == "pass"), "judged": float(s.reward is not None)}
        for s in scores
    ]


def compute_score(
    data_source: str, solution_str: str, ground_truth: object, extra_info: object = None, **reward_kwargs: Any
) -> dict[str, float]:
    """verl's per-response form (its naive reward manager)."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]
