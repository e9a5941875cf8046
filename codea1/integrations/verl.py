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

`reward_kwargs` (verl's `reward.custom_reward_function.reward_kwargs`, passed to every call) may set the
limits, by the names verl's own code scorers take (REWARD_KWARGS): `timeout`, seconds each test of a
problem without GT may run (verl's rows ship none; a problem with GT keeps the limit its GT's runtime
sets), `memory_limit_mb`, the memory each program may allocate, and `sandbox_workers`, the parallel slots
of this process's sandbox (default: every CPU; with verl's `reward.num_workers` processes each making one,
give each its share, CPUs / num_workers). Any other is refused with a UserError naming it.

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
from codea1.errors import UserError
from codea1.game.parsing import fence_language
from codea1.integrations.judge import CodeJudge, Score, sized_judge
from codea1.problem import Problem

# the reward_kwargs codea1 understands: verl's names for a code scorer's limits, and the sandbox's size
REWARD_KWARGS = {
    "timeout": "seconds each test of a problem without GT may run",
    "memory_limit_mb": "MiB of memory each program may allocate",
    "sandbox_workers": "parallel sandbox slots of this process (CPUs / verl's reward.num_workers)",
}


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


def _positive(name: str, value: object, kind: type) -> float | int | None:
    """A reward_kwargs value: None, or a positive number (a whole one where kind is int)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or kind is int and value % 1:
        raise UserError(f"reward_kwargs {name}={value!r}: give {REWARD_KWARGS[name]} as a positive number")
    return kind(value)


def judge_for(reward_kwargs: dict[str, Any]) -> tuple[CodeJudge, float | None]:
    """The judge reward_kwargs ask for (its sandbox's memory and slots) and the per-test time limit; a
    UserError in one sentence for a keyword codea1 does not understand."""
    unknown = sorted(set(reward_kwargs) - set(REWARD_KWARGS))
    if unknown:
        raise UserError(
            f"codea1's verl reward does not understand reward_kwargs {', '.join(unknown)}; "
            f"it takes {', '.join(REWARD_KWARGS)}"
        )
    memory = _positive("memory_limit_mb", reward_kwargs.get("memory_limit_mb"), int)
    workers = _positive("sandbox_workers", reward_kwargs.get("sandbox_workers"), int)
    return sized_judge(memory, workers), _positive("timeout", reward_kwargs.get("timeout"), float)


def with_time_limit(problem: Problem, timeout: float | None) -> Problem:
    """The problem with `timeout` as its per-test limit (meta "time_limit") where it has no GT to time."""
    if timeout is None or problem.gt_solution.strip():
        return problem
    return dataclasses.replace(problem, meta={**problem.meta, "time_limit": timeout})


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
    **reward_kwargs: Any,
) -> list[dict[str, float]]:
    """The batch form: a {"score", "acc", "judged"} dict per response, scored in one sandbox batch;
    reward_kwargs as the module doc says."""
    judge, timeout = judge_for(reward_kwargs)
    problems = [
        with_time_limit(judge.problem(in_fence_language(problem_ref(g, d), s)), timeout)
        for g, d, s in zip(ground_truths, data_sources, solution_strs, strict=True)
    ]
    return [_extra(s) for s in judge.score(list(zip(problems, solution_strs, strict=True)))]


def compute_score(
    data_source: str, solution_str: str, ground_truth: object, extra_info: object = None, **reward_kwargs: Any
) -> dict[str, float]:
    """verl's per-response form (its naive, dapo and gdpo reward managers): {"score", "acc", "judged"}."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **reward_kwargs)[0]


def compute_score_value(
    data_source: str, solution_str: str, ground_truth: object, extra_info: object = None, **reward_kwargs: Any
) -> float:
    """The score alone, a float, for verl's `main_eval` (it averages what the function returns)."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)["score"]
