"""Reward functions for TRL's `GRPOTrainer` (`reward_funcs=[...]`), scored by codea1's judge in the sandbox.

TRL calls a reward function as `f(prompts=..., completions=..., completion_ids=..., **columns)`, where
`columns` are the dataset's other columns (one value per completion) plus `trainer_state`, `log_extra` and
`log_metric`; it wants one float (or None, ignored) per completion. Completions are text, or for a
conversational dataset a list of messages (the assistant's content is scored). A reward function may also be
a coroutine function: TRL (1.16) awaits those together on an event loop of its own (`as_async`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from codea1.config import GameConfig
from codea1.errors import UserError
from codea1.integrations.judge import CodeJudge, problem_identity
from codea1.problem import Problem
from codea1.sandbox.api import Executor

log = logging.getLogger("codea1.integrations.trl")
RewardFunc = Callable[..., list[float | None]]
AsyncRewardFunc = Callable[..., Awaitable[list[float | None]]]


def completion_text(completion: object) -> str:
    """The text of a TRL completion: a string, or the assistant messages' content of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        return "\n".join(
            str(m.get("content", ""))
            for m in completion
            if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
        )
    return str(completion)


def _column(kwargs: dict[str, Any], key: str, n: int) -> list[Any]:
    values = kwargs.get(key)
    if values is None:
        raise UserError(
            f"codea1 reward: the dataset has no {key!r} column (one problem id, or problem dict, per row); "
            f"columns seen: {sorted(k for k in kwargs if k not in ('trainer_state', 'log_extra', 'log_metric'))}"
        )
    if len(values) != n:
        raise UserError(f"codea1 reward: {len(values)} values in column {key!r} for {n} completions")
    return list(values)


def code_reward(
    problems: Iterable[Problem] | None = None,
    *,
    problem_key: str = "problem_id",
    judge: CodeJudge | None = None,
    executor: Executor | None = None,
) -> RewardFunc:
    """A GRPOTrainer reward: 1.0 for a completion whose code passes every test of its row's problem, 0.0
    otherwise (unparseable code included, its reason logged and put in the completions table as
    `codea1_reason`), None where the problem cannot be judged. The row's problem is the dataset column
    `problem_key`: an id of one of `problems`, or the problem's dict (`Problem.to_dict()`) or its JSON."""
    judge = judge or CodeJudge(problems, executor=executor)

    def codea1_code_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        refs = _column(kwargs, problem_key, len(completions))
        scores = judge.score([(ref, completion_text(c)) for ref, c in zip(refs, completions, strict=True)])
        for s in scores:
            if s.status not in ("pass", "fail"):
                log.info("codea1 reward %s: %s", s.status, s.reason)
        if callable(kwargs.get("log_extra")):  # reasons are bounded and valid UTF-8 (the table is written to Parquet)
            kwargs["log_extra"]("codea1_reason", [s.status if s.status == "pass" else s.reason for s in scores])
        if callable(kwargs.get("log_metric")):
            kwargs["log_metric"]("codea1/undefined", sum(s.status == "undefined" for s in scores) / max(1, len(scores)))
        return [s.reward for s in scores]

    codea1_code_reward.judge = judge  # type: ignore[attr-defined]  (to close it, or score by hand)
    return codea1_code_reward


def game_reward(
    tests_for: Callable[[Problem, list[str]], list[list[str]]] | None = None,
    problems: Iterable[Problem] | None = None,
    *,
    problem_key: str = "problem_id",
    tests_key: str = "tests",
    config: GameConfig | None = None,
    judge: CodeJudge | None = None,
    executor: Executor | None = None,
) -> RewardFunc:
    """A GRPOTrainer reward from Code-A1's game: each completion's R_C against tests another model wrote,
    validated against GT first. The tests of a completion come from `tests_for(problem, codes)` (called
    once per problem with that problem's completions: a Test LLM that reads each code, white-box; it
    returns one list of test responses per code), else from the dataset column `tests_key` (test
    responses written beforehand, one list per row)."""
    judge = judge or CodeJudge(problems, executor=executor)

    def codea1_game_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        refs = _column(kwargs, problem_key, len(completions))
        given = None if tests_for is not None else _column(kwargs, tests_key, len(completions))
        texts = [completion_text(c) for c in completions]
        rewards: list[float | None] = [None] * len(texts)
        groups: dict[str, list[int]] = {}  # rows by problem (content, not id: two problems may share an id)
        for i, ref in enumerate(refs):
            groups.setdefault(problem_identity(judge.problem(ref)), []).append(i)
        for rows in groups.values():
            problem = judge.problem(refs[rows[0]])
            codes = [texts[i] for i in rows]
            tests = tests_for(problem, codes) if tests_for is not None else [list(given[i]) for i in rows]
            for i, r in zip(rows, judge.game_rewards(problem, codes, tests, config), strict=True):
                rewards[i] = r
        return rewards

    codea1_game_reward.judge = judge  # type: ignore[attr-defined]
    return codea1_game_reward


def as_async(reward: RewardFunc) -> AsyncRewardFunc:
    """`reward` (a `code_reward` or `game_reward`) as a coroutine function, for GRPOTrainer's async path:
    TRL 1.16 runs the synchronous reward functions one after another, then awaits the async ones together
    (`asyncio.gather` on its own event loop), so codea1's sandbox batch, run here in a worker thread,
    overlaps with other async rewards (an LLM judge, say). Same name (the `rewards/...` column) and `judge`."""

    @functools.wraps(reward)
    async def async_reward(prompts: list[Any], completions: list[Any], **kwargs: Any) -> list[float | None]:
        return await asyncio.to_thread(reward, prompts=prompts, completions=completions, **kwargs)

    return async_reward
