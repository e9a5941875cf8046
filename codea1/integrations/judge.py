"""The trainer-agnostic core of the integrations: completions scored in codea1's sandbox by its judge."""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codea1.config import GameConfig
from codea1.errors import UserError
from codea1.eval.code_eval import (
    REASON_MAX,
    REASON_PART,  # noqa: F401  (re-exported: the bound of each part of a Score's reason)
    PreparedTask,
    SampleResult,
    _drive,
    _new_run,
    expected_and_got,
    failing_call,
    prepare_tasks,
    reason_text,
)
from codea1.eval.stdio_eval import StdioTask, judge_programs, prepare_stdio_tasks
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


def problem_identity(problem: Problem) -> str:
    """What tells problems apart in a batch: their whole content, not their id (two datasets, or two versions
    of one problem, may share an id; each completion is judged against the problem its own row gives)."""
    return json.dumps(problem.to_dict(), sort_keys=True, default=repr)


def _verdict(task: PreparedTask | StdioTask, res: SampleResult, run: object) -> Score:
    """A Score from the judge's verdict; a failing one says why: the failing call, expected and got (or the
    error), each part at most REASON_PART characters, the whole at most REASON_MAX, valid UTF-8 (a stdio
    program: the failing input's number and the output rule's reason)."""
    if task.excluded:
        return Score(None, "excluded", reason_text(task.reason, REASON_MAX))
    if res.passed:
        return Score(1.0, res.status, "")
    if isinstance(task, StdioTask):
        head = f"{res.status} at input {res.failed_input}" if res.failed_input is not None else res.status
        return Score(0.0, res.status, reason_text(f"{head}: {res.error}" if res.error else head, REASON_MAX))
    call = failing_call(task, res)
    details = expected_and_got(task, res, run) if res.status == "fail" and call is not None else []
    if res.error:
        details.append(reason_text(res.error))
    head = f"{res.status} at {call}" if call else res.status
    return Score(0.0, res.status, reason_text(f"{head}: {', '.join(details)}" if details else head, REASON_MAX))


class CodeJudge:
    """Scores code completions against problems' own tests, in the sandbox.

    Problems are prepared once each (GT run for the expected values and the time limit) and kept; every
    `score` call is one executor batch. The executor is codea1's LocalExecutor unless one is given (a
    RayExecutor, say), made with `memory_mb` and `workers` where given; the judge closes only the executor it
    made. Thread-safe.
    """

    def __init__(
        self,
        problems: Iterable[Problem] | None = None,
        *,
        executor: Executor | None = None,
        memory_mb: int | None = None,
        workers: int | None = None,
    ) -> None:
        self._executor, self._own = executor, executor is None
        # the LocalExecutor's settings where the judge makes it: memory each program may add, parallel slots
        self._options = {k: v for k, v in (("memory_mb", memory_mb), ("workers", workers)) if v is not None}
        self._problems: dict[str, Problem] = {}
        self._tasks: dict[str, PreparedTask | StdioTask] = {}
        self._lock = threading.Lock()
        if problems is not None:
            self.add(problems)

    @property
    def executor(self) -> Executor:
        """The executor; one the judge made in a process this one was forked from is replaced by a new one
        of this process (the parent's zygotes and threads are not the child's; the parent keeps its own)."""
        if self._own and getattr(self._executor, "owner_pid", os.getpid()) != os.getpid():
            self._executor = None
        if self._executor is None:
            from codea1.sandbox import LocalExecutor

            self._executor = LocalExecutor(**self._options)
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

    def _prepared(self, problems: list[Problem]) -> list[PreparedTask | StdioTask]:
        """A prepared task per problem (a stdio program's by codea1.eval.stdio_eval), kept by the problem's
        content (`problem_identity`), not its id."""
        with self._lock:
            keys = [problem_identity(p) for p in problems]
            new = {k: p for k, p in zip(keys, problems, strict=True) if k not in self._tasks}
            for stdio in (False, True):
                part = {k: p for k, p in new.items() if p.is_stdio is stdio}
                if not part:
                    continue
                prepare = prepare_stdio_tasks if stdio else prepare_tasks
                for key, task in zip(part, prepare(list(part.values()), self.executor), strict=True):
                    self._tasks[key] = task
                    self._problems.setdefault(task.task_id, task.problem)
            return [self._tasks[k] for k in keys]

    def score(self, items: Sequence[tuple[ProblemRef, str]]) -> list[Score]:
        """A Score per (problem, completion text); the code is the completion's first block fenced in the
        problem's language (```python, ```cpp ...; else its first ``` block, else its text), read as
        Code-A1's game reads a Code LLM response."""
        tasks = self._prepared([self.problem(ref) for ref, _ in items])
        results = [
            SampleResult(t.task_id, i, False, "excluded", solution=extract_code(text, t.problem.language))
            for i, (t, (_, text)) in enumerate(zip(tasks, items, strict=True))
        ]
        # each completion runs against its own row's task (codea1.eval.code_eval.score_solutions, which
        # matches solutions to tasks by id), and its run is kept for the value a wrong answer gave
        runs = [
            None if t.excluded or isinstance(t, StdioTask) else _new_run(t, r.solution, r, t.timeout, whole=False)
            for t, r in zip(tasks, results, strict=True)
        ]
        programs = [(r, t) for t, r in zip(tasks, results, strict=True) if isinstance(t, StdioTask) and not t.excluded]
        if programs:
            judge_programs(programs, self.executor)
        _drive([r for r in runs if r is not None], self.executor)
        return [_verdict(*row) for row in zip(tasks, results, runs, strict=True)]

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
_SIZED: dict[tuple[int | None, int | None], CodeJudge] = {}  # sized_judge's, by (memory_mb, workers)
_DEFAULT_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child keeps the default judges' problems and prepared tasks but not their locks, which a
    thread of the parent may have held when it forked (their executors are rebuilt on first use: `executor`)."""
    global _DEFAULT_LOCK
    _DEFAULT_LOCK = threading.Lock()
    for judge in (_DEFAULT, *_SIZED.values()):
        if judge is not None:
            judge._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def default_judge() -> CodeJudge:
    """One CodeJudge per process for plain reward functions (verl's `compute_score`), closed at exit. A
    process forked from one that has it (verl's reward workers, multiprocessing's fork) scores with the
    problems made known before the fork, in a sandbox of its own."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = CodeJudge()
            atexit.register(_DEFAULT.close)
        return _DEFAULT


def sized_judge(memory_mb: int | None = None, workers: int | None = None) -> CodeJudge:
    """`default_judge()` where neither is given; else one judge per (memory_mb, workers) per process, its
    sandbox made with them, knowing the problems made known to the default judge (closed at exit)."""
    if memory_mb is None and workers is None:
        return default_judge()
    base = default_judge()
    with _DEFAULT_LOCK:
        judge = _SIZED.get((memory_mb, workers))
        if judge is None:
            judge = _SIZED[(memory_mb, workers)] = CodeJudge(memory_mb=memory_mb, workers=workers)
            atexit.register(judge.close)
    with base._lock:
        known = [p for i, p in base._problems.items() if i not in judge._problems]
    if known:
        judge.add(known)
    return judge
