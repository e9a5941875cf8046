"""The Golden-Tests baseline: each candidate rewarded by the share of its problem's human tests it passes."""

from __future__ import annotations

from collections.abc import Sequence

from codea1.config import GameConfig
from codea1.game.parsing import extract_code
from codea1.game.rewards import golden_reward
from codea1.judge import AssertCase, run_assertions
from codea1.judge.kinds.stdio import judge_outputs, program_job, program_runs
from codea1.problem import Problem, candidate_program, gt_program
from codea1.sandbox import OnProgress
from codea1.sandbox.api import Executor


def golden_step(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    executor: Executor,
    config: GameConfig | None = None,
    progress: OnProgress = None,
) -> list[list[float]]:
    """Golden-Tests rewards of many questions: rewards[q][m] = share of problem q's human tests that
    candidate m passes (invalid code 0); a stdin/stdout problem's human tests are its io_tests. Each test means what Python's `assert` means; codea1.judge.oracle runs
    only the calls of the function under test in the candidate's child and decides the rest outside it,
    with GT's program as the oracle for EXPECTED expressions."""
    config = config or GameConfig()
    cases, plan = [], []
    rewards = [[0.0] * len(code_responses[q]) for q in range(len(problems))]
    _golden_stdio(problems, code_responses, executor, config, rewards)
    for q, problem in enumerate(problems):
        if not problem.golden_tests or problem.is_stdio:
            continue
        for m, response in enumerate(code_responses[q]):
            cases.append(
                AssertCase(
                    code=candidate_program(problem, extract_code(response)),
                    tests=list(problem.golden_tests),
                    entry_point=problem.entry_point,
                    oracle=gt_program(problem),
                    id=f"golden:{problem.id}:{m}",
                    float_tol=config.float_tol,
                )
            )
            plan.append((q, m))
    for (q, m), result in zip(plan, run_assertions(executor, cases, config.test_timeout, progress), strict=True):
        rewards[q][m] = golden_reward(bool(result.defined), [r.status == "pass" for r in result.results])
    return rewards


def _golden_stdio(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    executor: Executor,
    config: GameConfig,
    rewards: list[list[float]],
) -> None:
    """Golden-Tests rewards of the stdin/stdout problems, written into `rewards`: the share of the problem's
    given input/output pairs (io_tests) the candidate's program passes, by the problem's output rule, within
    game.test_timeout per input (a program that does not compile: 0)."""
    plan = [
        (
            q,
            m,
            program_job(
                f"golden:{p.id}:{m}",
                p,
                extract_code(r, p.language),
                [t["input"] for t in p.io_tests],
                config.test_timeout,
            ),
        )
        for q, p in enumerate(problems)
        if p.is_stdio and p.io_tests
        for m, r in enumerate(code_responses[q])
    ]
    results = executor.run([job for _, _, job in plan]) if plan else []
    all_runs = [
        program_runs(problems[q], res, len(problems[q].io_tests)) for (q, _, _), res in zip(plan, results, strict=True)
    ]
    groups = [
        (problems[q], runs, [t["input"] for t in problems[q].io_tests], [t["output"] for t in problems[q].io_tests])
        for (q, _, _), runs in zip(plan, all_runs, strict=True)
    ]
    for (q, m, _), runs, verdicts in zip(plan, all_runs, judge_outputs(groups, executor), strict=True):
        rewards[q][m] = golden_reward(all(r.status != "compile" for r in runs), [v.passed for v in verdicts])


def golden_rewards(
    problem: Problem, code_responses: Sequence[str], executor: Executor, config: GameConfig | None = None
) -> list[float]:
    """Golden-Tests rewards of one question's candidates (see golden_step)."""
    return golden_step([problem], [code_responses], executor, config)[0]
