"""Code generation evaluation of stdin/stdout problems (kind "stdio"): programs scored with pass@k.

Per problem, `prepare_stdio_tasks` takes its io_tests (every test: the public examples and the hidden
ones) and its output rule (codea1.judge.kinds.stdio.rule_of). Where the problem has GT, GT runs every
input through the same runner as a candidate, timed: a problem whose GT fails one of its own tests is
excluded and reported (so is one with an expected output longer than a run may print, which no program
printing it could pass), and the time limit per input is max(min_time_limit, gt_time_factor x GT's slowest
run), as for function problems. Without GT (LiveCodeBench ships none) the limit is the problem's own
(meta "time_limit") or LiveCodeBench's default of 6 s. `score_stdio` runs each solution on the first input,
then the ones that pass it on the rest, each job stopping at its first failing input (the rest are not
run: LiveCodeBench's evaluator stops there too), so a failing solution costs at most one limit more than
the inputs it passed (a run that waits rather than computes: the sandbox's wall backstop, three limits).
A sample passes when every input passes; the records and the summary are those of function problems
(codea1.eval.code_eval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from codea1.data.check import NO_IO_TESTS, run_stdio_gts, time_limit
from codea1.errors import UserError
from codea1.eval.code_eval import SampleResult, sample_records
from codea1.judge.kinds.stdio import (
    OVER_THE_CAP,
    judge_outputs,
    over_the_cap,
    program_job,
    program_runs,
    rule_of,
    stop_at_first_failure,
    time_limit_of,
)
from codea1.lang import language
from codea1.problem import Problem
from codea1.sandbox.api import Executor, OnProgress

FIRST_ROUND = 1  # inputs a solution runs before the rest


@dataclass
class StdioTask:
    """A stdio problem ready for scoring: inputs, expected outputs, rule, time limit, or why it is excluded."""

    task_id: str
    problem: Problem
    inputs: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    rule: str = ""
    timeout: float = 1.0
    gt_seconds: float = 0.0
    gt_passed: int = 0  # how many of its own tests the GT passed (where it was run)
    excluded: bool = False
    reason: str = ""


def prepare_stdio_tasks(
    problems: Sequence[Problem],
    executor: Executor,
    *,
    gt_time_factor: float = 4.0,
    min_time_limit: float = 1.0,
    gt_timeout: float = 60.0,
    progress: OnProgress = None,
) -> list[StdioTask]:
    """A StdioTask per problem, GT checked and timed where there is GT (see the module docstring)."""
    tasks = []
    for p in problems:
        task = StdioTask(p.id, p, [t["input"] for t in p.io_tests], [t["output"] for t in p.io_tests])
        try:
            task.rule = rule_of(p)
            language(p.language)
        except UserError as exc:
            task.excluded, task.reason = True, str(exc)
        if not task.inputs and not task.excluded:
            task.excluded, task.reason = True, NO_IO_TESTS
        long = next((i for i, e in enumerate(task.expected) if over_the_cap(e)), None)
        if long is not None and not task.excluded:
            size = len(task.expected[long])
            task.excluded, task.reason = True, f"test {long}'s expected output is {size:,} characters: {OVER_THE_CAP}"
        task.timeout = time_limit_of(p)
        tasks.append(task)
    with_gt = [t for t in tasks if not t.excluded and t.problem.gt_solution.strip()]
    for t, run in zip(
        with_gt, run_stdio_gts([t.problem for t in with_gt], executor, gt_timeout, progress), strict=True
    ):
        t.gt_passed = run.passed
        if run.failure:
            t.excluded, t.reason = True, run.failure[:300]
            continue
        t.gt_seconds = run.seconds
        t.timeout = time_limit(t.gt_seconds, gt_time_factor, min_time_limit)
    return tasks


def score_stdio(
    tasks: Sequence[StdioTask], samples: Sequence[tuple[str, str]], executor: Executor, progress: OnProgress = None
) -> list[SampleResult]:
    """Verdicts for (task_id, program) pairs, in input order; unknown or excluded tasks are marked."""
    records = sample_records(list(tasks), list(samples))
    judge_programs([(res, task) for res, task in records if task is not None], executor)
    if progress is not None:
        progress(len(records), len(records))
    return [res for res, _ in records]


def judge_programs(pairs: Sequence[tuple[SampleResult, StdioTask]], executor: Executor) -> None:
    """Writes each program's verdict on its task into its record (the record's `solution` is the program):
    the first input for all, then the rest for those that passed it."""
    first = [(res, task, 0, min(FIRST_ROUND, len(task.inputs))) for res, task in pairs]
    _round(first, executor)
    rest = [(res, task, FIRST_ROUND, len(task.inputs)) for res, task in pairs if res.passed]
    _round([item for item in rest if item[2] < item[3]], executor)


def _round(items: list[tuple[SampleResult, StdioTask, int, int]], executor: Executor) -> None:
    """Runs inputs a to b of each (record, task, a, b) and writes the verdict into the record: passed when
    every one of them passes (and every earlier round passed), else the first failure."""
    jobs = []
    for res, task, a, b in items:
        job = program_job(f"{task.task_id}#{res.index}", task.problem, res.solution, task.inputs[a:b], task.timeout)
        job.stop = stop_at_first_failure(task.problem, task.expected[a:b], task.rule)
        jobs.append(job)
    results = executor.run(jobs) if jobs else []
    groups = [
        (task.problem, program_runs(task.problem, out, b - a), task.inputs[a:b], task.expected[a:b])
        for (_, task, a, b), out in zip(items, results, strict=True)
    ]
    for (res, _, a, _), verdicts in zip(items, judge_outputs(groups, executor), strict=True):
        # a job stopped at its first failure: the inputs after it were skipped, and only the first counts
        bad = next((i for i, v in enumerate(verdicts) if not v.passed), None)
        if bad is None:
            res.passed, res.status, res.error, res.failed_input = True, "pass", None, None
        else:
            res.passed, res.status = False, verdicts[bad].status
            res.error, res.failed_input = verdicts[bad].error, a + bad
