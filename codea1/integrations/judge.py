"""The trainer-agnostic core of the integrations: completions scored in codea1's sandbox by its judge."""

from __future__ import annotations

import atexit
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codea1.config import GameConfig
from codea1.errors import UserError
from codea1.eval.code_eval import PreparedTask, prepare_tasks, score_solutions
from codea1.game import play_step
from codea1.game.parsing import extract_code
from codea1.problem import Problem, require_unique_ids
from codea1.sandbox.api import Executor

ProblemRef = Problem | Mapping[str, Any] | str  # a Problem, its dict (or JSON text), or the id of a known one


@dataclass
class Score:
    """One completion's reward: 1.0 when its code passes every test of the problem, else 0.0; None when
    the problem itself cannot be judged (its GT fails its own tests, or it has no tests). status is the
    judge's ("pass", "fail", "error", "timeout", "crash", "undefined", "excluded"), reason the why."""

    reward: float | None
    status: str
    reason: str = ""


class CodeJudge:
    """Scores code completions against problems' own tests, in the sandbox.

    Problems are prepared once each (GT run for the expected values and the time limit) and kept; every
    `score` call is one executor batch. The executor is codea1's LocalExecutor unless one is given (a
    RayExecutor, say); the judge closes only the executor it made. Thread-safe.
    """

    def __init__(self, problems: Iterable[Problem] | None = None, *, executor: Executor | None = None) -> None:
        self._executor, self._own = executor, executor is None
        self._problems: dict[str, Problem] = {}
        self._tasks: dict[str, PreparedTask] = {}
        self._lock = threading.Lock()
        if problems is not None:
            self.add(problems)

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            from codea1.sandbox import LocalExecutor

            self._executor = LocalExecutor()
        return self._executor

    def add(self, problems: Iterable[Problem]) -> None:
        """Makes problems known by id (an id given twice with different content is refused)."""
        problems = list(problems)
        require_unique_ids(problems, "CodeJudge problems")
        with self._lock:
            for p in problems:
                known = self._problems.get(p.id)
                if known is not None and known != p:
                    raise UserError(f"CodeJudge: problem id {p.id!r} is already known with other content")
                self._problems[p.id] = p

    def problem(self, ref: ProblemRef) -> Problem:
        """The Problem a dataset row refers to: a Problem, its dict or JSON text, or a known id."""
        if isinstance(ref, Problem):
            return ref
        if isinstance(ref, str) and ref.lstrip().startswith("{"):
            try:
                ref = json.loads(ref)
            except ValueError as exc:
                raise UserError(f"CodeJudge: a problem given as JSON text does not parse ({exc})") from None
        if isinstance(ref, Mapping):
            return Problem.from_dict(dict(ref), "CodeJudge problem")
        if isinstance(ref, str) and ref in self._problems:
            return self._problems[ref]
        raise UserError(
            f"CodeJudge: unknown problem {ref!r}; pass the problems when making the reward, or put each "
            "problem's dict (Problem.to_dict(), or its JSON) in the dataset column"
        )

    def _prepared(self, problems: list[Problem]) -> list[PreparedTask]:
        with self._lock:
            new = {p.id: p for p in problems if p.id not in self._tasks or self._tasks[p.id].problem != p}
            if new:
                for task in prepare_tasks(list(new.values()), self.executor):
                    self._tasks[task.task_id] = task
                    self._problems.setdefault(task.task_id, task.problem)
            return [self._tasks[p.id] for p in problems]

    def score(self, items: Sequence[tuple[ProblemRef, str]]) -> list[Score]:
        """A Score per (problem, completion text); the code is the completion's first ```python block (else
        its first ``` block, else its text), read as Code-A1's game reads a Code LLM response."""
        problems = [self.problem(ref) for ref, _ in items]
        tasks = self._prepared(problems)
        samples = [(p.id, extract_code(text)) for p, (_, text) in zip(problems, items, strict=True)]
        results = score_solutions(list({t.task_id: t for t in tasks}.values()), samples, self.executor)
        out = []
        for task, res in zip(tasks, results, strict=True):
            if task.excluded:
                out.append(Score(None, "excluded", task.reason))
            else:
                reason = "" if res.passed else (res.error or res.status)
                out.append(Score(1.0 if res.passed else 0.0, res.status, reason or ""))
        return out

    def game_rewards(
        self,
        problem: ProblemRef,
        completions: Sequence[str],
        tests: Sequence[Sequence[str]],
        config: GameConfig | None = None,
    ) -> list[float]:
        """Code-A1's R_C of each completion against test responses another model wrote for it (`tests[m]`:
        the Test LLM's responses for completion m, read as the game reads them, every test validated
        against GT before it counts)."""
        p = self.problem(problem)
        [result] = play_step([p], [list(completions)], [[list(t) for t in tests]], self.executor, config=config)
        return result.code_rewards

    def close(self) -> None:
        if self._own and self._executor is not None:
            self._executor.close()
            self._executor = None


_DEFAULT: CodeJudge | None = None
_DEFAULT_LOCK = threading.Lock()


def default_judge() -> CodeJudge:
    """One CodeJudge per process for plain reward functions (verl's `compute_score`), closed at exit."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = CodeJudge()
            atexit.register(_DEFAULT.close)
        return _DEFAULT
