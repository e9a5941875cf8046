"""codea1's judge as verl's custom reward (`reward.custom_reward_function.path=pkg://codea1.integrations.verl`).

verl (checked against 0.9.1) scores one response a call: its reward managers (`naive`, the default, `dapo`,
`gdpo`) call `compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)`, take
a returned dict's "score" as the reward and keep all its keys as the response's `reward_extra_info`
(every response must have the same keys: verl stacks each into one array). DAPO's group filter
(`algorithm.filter_groups.metric=acc`) reads `float(reward_extra_info["acc"])`; validation reports `acc`
as its core metric. verl's `main_eval` calls the function positionally and averages what it returns, so it
needs a number: `compute_score_value`. `ground_truth` is the problem: its dict, its JSON
(`ground_truth_of`), the id of a problem made known with `codea1.integrations.judge.default_judge().add`,
or verl's own code format ({"inputs", "outputs", "fn_name"?}: PRIME's and verl's code datasets, which
verl's `prime_code` scores), so codea1 scores those datasets as they are, in its sandbox (`problem_ref`).

`compute_score_batch` is the batch form (`compute_score(data_sources=..., solution_strs=..., ...)`, one
sandbox batch a call) for verl versions and custom reward managers that still call one; verl 0.8 and later
have no `batch` reward manager.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from codea1.data.verl_rows import problem_from_verl_row
from codea1.game.parsing import fence_language
from codea1.integrations.judge import Score, default_judge
from codea1.problem import Problem


def ground_truth_of(problem: Problem) -> str:
    """What to store as a row's `reward_model.ground_truth` in a verl dataset: the problem as JSON."""
    return json.dumps(problem.to_dict())


def _extra(s: Score) -> dict[str, float]:
    """verl's dict for one response: `score` (the reward), `acc` (1.0 when the code passes every test: what
    DAPO's group filter and verl's validation read) and `judged` (0.0 where the problem cannot be judged,
    its GT failing its own tests: the score is then 0.0). Numbers only, the same keys for every response."""
    return {"score": s.reward or 0.0, "acc": float(s.status == "pass"), "judged": float(s.reward is not None)}


def problem_ref(ground_truth: object, data_source: str = "") -> object:
    """What the judge is given for a row's ground truth: verl's own code format ({"inputs": [...],
    "outputs": [...], "fn_name"?}, as PRIME's and verl's code datasets store it, or its JSON) becomes the
    Problem codea1.data.verl_rows reads from such a row (stdin/stdout, or calls of fn_name); anything else
    (a Problem's dict or JSON, a known id) is passed on as it is."""
    truth = ground_truth
    if isinstance(truth, str) and truth.lstrip().startswith("{"):
        try:
            truth = json.loads(truth)
        except ValueError:
            return ground_truth  # the judge says why it cannot read it
    if isinstance(truth, dict) and "inputs" in truth and "outputs" in truth and "id" not in truth:
        row = {"prompt": "(a verl row)", "data_source": data_source or "verl", "reward_model": {"ground_truth": truth}}
        return problem_from_verl_row(row, 0, f"verl ground truth ({data_source or 'no data_source'})")
    return ground_truth


def in_fence_language(ref: object, solution_str: str) -> object:
    """A verl row's stdin/stdout problem (`problem_ref` made it: the row names no language) in the language
    the completion's fence names where codea1 has it (```cpp, ```c++: C++), as SandboxFusion runs the
    fence's language; anything else as it is (a function row stays Python, codea1's only such language)."""
    if not isinstance(ref, Problem) or not ref.is_stdio:
        return ref
    lang = fence_language(solution_str)
    return dataclasses.replace(ref, language=lang) if lang is not None and lang != ref.language else ref


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **reward_kwargs: Any,
) -> list[dict[str, float]]:
    """The batch form: a {"score", "acc", "judged"} dict per response, scored in one sandbox batch."""
    refs = [
        in_fence_language(problem_ref(g, d), s)
        for g, d, s in zip(ground_truths, data_sources, solution_strs, strict=True)
    ]
    return [_extra(s) for s in default_judge().score(list(zip(refs, solution_strs, strict=True)))]


def compute_score(
    data_source: str, solution_str: str, ground_truth: object, extra_info: object = None, **reward_kwargs: Any
) -> dict[str, float]:
    """verl's per-response form (its naive, dapo and gdpo reward managers): {"score", "acc", "judged"}."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]


def compute_score_value(
    data_source: str, solution_str: str, ground_truth: object, extra_info: object = None, **reward_kwargs: Any
) -> float:
    """The score alone, a float, for verl's `main_eval` (it averages what the function returns)."""
    return compute_score(data_source, solution_str, ground_truth, extra_info)["score"]
