"""Code evaluation over problems of every kind: each kind's problems go to its evaluator, and the results
come back as one list in the samples' order with one summary (pass@k over all scored tasks).

    summary, results, tasks = evaluate_problems(problems, samples, executor, ks=[1, 5])

Function problems: codea1.eval.code_eval; stdin/stdout programs: codea1.eval.stdio_eval.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from codea1.eval.code_eval import PreparedTask, SampleResult, prepare_tasks, score_solutions, summarize
from codea1.eval.stdio_eval import StdioTask, prepare_stdio_tasks, score_stdio
from codea1.problem import Problem
from codea1.sandbox.api import Executor, OnProgress, ProgressParts


def evaluate_problems(
    problems: list[Problem],
    samples: list[tuple[str, str]],
    executor: Executor,
    ks: list[int] | None = None,
    progress_prepare: OnProgress = None,
    progress_score: OnProgress = None,
) -> tuple[dict[str, Any], list[SampleResult], list[PreparedTask | StdioTask]]:
    """Every problem prepared and every sample scored by its problem's kind, then summarized together,
    with timings in the summary (a sample of an unknown task is marked, as code_eval marks it)."""
    stdio_ids = {p.id for p in problems if p.is_stdio}
    t0 = time.monotonic()
    prep, score = ProgressParts(progress_prepare), ProgressParts(progress_score)
    tasks: list[PreparedTask | StdioTask] = [
        *prepare_tasks([p for p in problems if not p.is_stdio], executor, progress=prep.next()),
        *prepare_stdio_tasks([p for p in problems if p.is_stdio], executor, progress=prep.next()),
    ]
    prep.finish()
    t1 = time.monotonic()
    split = _split(samples, stdio_ids)
    results: list[SampleResult | None] = [None] * len(samples)
    call_tasks = [t for t in tasks if isinstance(t, PreparedTask)]
    stdio_tasks = [t for t in tasks if isinstance(t, StdioTask)]
    for (where, part), scored in (
        (split[0], score_solutions(call_tasks, split[0][1], executor, progress=score.next())),
        (split[1], score_stdio(stdio_tasks, split[1][1], executor, progress=score.next())),
    ):
        for i, res in zip(where, scored, strict=True):
            results[i] = res
    score.finish()
    t2 = time.monotonic()
    final = [r for r in results if r is not None]
    summary = summarize(tasks, final, ks)  # type: ignore[arg-type]  (both task records have the fields it reads)
    summary["seconds"] = {"prepare": round(t1 - t0, 2), "score": round(t2 - t1, 2)}
    return summary, final, tasks


def _split(
    samples: Sequence[tuple[str, str]], stdio_ids: set[str]
) -> tuple[tuple[list[int], list[tuple[str, str]]], tuple[list[int], list[tuple[str, str]]]]:
    """(positions, samples) of the function problems' samples, then of the stdio problems'."""
    calls: tuple[list[int], list[tuple[str, str]]] = ([], [])
    stdio: tuple[list[int], list[tuple[str, str]]] = ([], [])
    for i, sample in enumerate(samples):
        part = stdio if sample[0] in stdio_ids else calls
        part[0].append(i)
        part[1].append(sample)
    return calls, stdio
