"""A pair of policies evaluated on held-out problems: the Code LLM's pass@1 and the Test LLM's suites,
each per problem with a bootstrap interval, and every sampled response with its verdict. One evaluator
for every caller: `codea1 compare` (codea1.recipes.compare), the demo, and the cold-start benchmark; the
prompts are the ones `codea1 eval` samples with, too.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from codea1.config import Config
from codea1.data.ult import UltFunction
from codea1.eval.by_kind import evaluate_problems
from codea1.eval.stats import bootstrap_interval
from codea1.eval.suite_eval import score_tests
from codea1.game import parse_test_suite
from codea1.game.parsing import extract_code
from codea1.game.prompts import code_messages, test_messages_blackbox, test_messages_whitebox, with_prefix
from codea1.inference.rollout import GenerationConfig, Sample
from codea1.problem import Problem
from codea1.sandbox.api import Executor

Messages = list[dict[str, str]]


class Sampler(Protocol):
    """What the evaluator needs of a policy: seeded samples for chat prompts (a Policy, a RemotePolicy)."""

    def generate(self, prompts: list[Messages], gen: GenerationConfig) -> list[list[Sample]]: ...


@dataclass(frozen=True)
class EvalPlan:
    """How much to sample and how to score it."""

    code_samples: int = 4  # code samples per problem
    test_samples: int = 1  # suites per problem for the Test LLM's scores
    test_k: int = 5  # the first k asserts of a suite count
    mutation: bool = True  # mut@k and Mul (mutants of each GT)
    bootstrap: int = 10_000  # bootstrap resamples of the per-problem figures
    seed: int = 0


def distinct_valid(calls: Sequence[str], valid: Sequence[bool]) -> int:
    """How many of a suite's tests are valid and call something no earlier test of the suite called: the
    game counts a repeated CALL invalid (`codea1.game.answers.validate_suite`), so a suite that repeats one
    easy assert four times has one valid test here, not four.

    `valid` may be longer than `calls`: it covers the suite padded to k tests (`suite_eval.first_k`), and the
    padding, tests that were never written, is invalid (fewer flags than calls is an error)."""
    seen: set[str] = set()
    count = 0
    for call, ok in zip(calls, valid[: len(calls)], strict=True):
        if call not in seen and ok:
            count += 1
        seen.add(call)
    return count


def code_prompts(problems: Sequence[Problem], prefix: str | None) -> list[Messages]:
    """The code prompt of each problem, with a response prefix (if any)."""
    return [with_prefix(code_messages(p), prefix, p) for p in problems]


def suite_prompts(
    problems: Sequence[Problem], prefix: str | None, k: int, *, shown: Sequence[str] | None = None
) -> list[Messages]:
    """The test prompt of each problem asking for k tests, with a response prefix (if any). White-box when
    `shown` gives the code each prompt shows (for a model's own tests, usually the GT), else black-box."""
    if shown is None:
        return [with_prefix(test_messages_blackbox(p, k), prefix, p) for p in problems]
    return [with_prefix(test_messages_whitebox(p, code, k), prefix, p) for p, code in zip(problems, shown, strict=True)]


def evaluate_code(
    policy: Sampler, problems: list[Problem], executor: Executor, cfg: Config, spec: EvalPlan
) -> dict[str, Any]:
    """pass@1 of the code policy: spec.code_samples seeded samples per problem at the eval section's
    sampling settings; per-problem pass fractions and the bootstrap interval over problems."""

    gen = GenerationConfig.of(cfg.eval, n=spec.code_samples, seed=spec.seed + 1)
    rows = policy.generate(code_prompts(problems, cfg.eval.response_prefix), gen)
    solutions = [(p.id, extract_code(s.text, p.language)) for p, row in zip(problems, rows, strict=True) for s in row]
    summary, results, _tasks = evaluate_problems(problems, solutions, executor)
    per_problem = {tid: t["correct"] / t["n"] for tid, t in summary["tasks"].items() if t["n"]}
    mean, low, high = bootstrap_interval(list(per_problem.values()), samples=spec.bootstrap, seed=spec.seed)
    texts = [(p.id, s.text) for p, row in zip(problems, rows, strict=True) for s in row]
    kept = [
        {"role": "code", "task_id": tid, "response": text, "passed": r.passed, "status": r.status}
        for (tid, text), r in zip(texts, results, strict=True)
    ]
    return {
        "pass@1": mean,
        "ci95": [low, high],
        "problems": len(per_problem),
        "samples": spec.code_samples,
        "per_problem": per_problem,
        "excluded": summary.get("excluded", []),
        "sample_rows": kept,
    }


def evaluate_tests(
    policy: Sampler,
    problems: list[Problem],
    executor: Executor,
    cfg: Config,
    spec: EvalPlan,
    modes: Sequence[str] = ("whitebox", "blackbox"),
) -> dict[str, Any]:
    """The Test LLM on the held-out problems, white-box and/or black-box: spec.test_samples suites per
    problem, each scored against the problem's GT (valid share of its first k asserts, pass@k, mut@k,
    Mul), averaged over the suites; the valid share also per problem, with its bootstrap interval."""
    functions = [UltFunction(p.id, p.entry_point, p.gt_solution, p.description, list(p.golden_tests)) for p in problems]
    k, n = spec.test_k, spec.test_samples
    keys = (f"pass@{k}", f"mut@{k}", "Mul", "functions_all_valid", "functions_mutation_scored")
    out: dict[str, Any] = {}
    sample_rows: list[dict[str, Any]] = []
    for mode in modes:
        whitebox = mode == "whitebox"
        gen = GenerationConfig.of(cfg.generation.test, n=n, seed=spec.seed + (2 if whitebox else 3))
        shown = [p.gt_solution for p in problems] if whitebox else None
        rows = policy.generate(suite_prompts(problems, cfg.generation.test.response_prefix, k, shown=shown), gen)
        shares: dict[str, list[float]] = {p.id: [] for p in problems}
        passed: dict[str, list[float]] = {p.id: [] for p in problems}
        distinct: dict[str, list[float]] = {p.id: [] for p in problems}
        totals = dict.fromkeys(keys, 0.0)
        parsed_counts = []
        sample_rows += [
            {"role": "test", "mode": mode, "task_id": p.id, "suite": i, "response": row[i].text}
            for p, row in zip(problems, rows, strict=True)
            for i in range(n)
        ]
        for i in range(n):
            suites = {
                p.id: parse_test_suite(row[i].text, p.entry_point).tests for p, row in zip(problems, rows, strict=True)
            }
            parsed = {tid: [t.statement for t in tests] for tid, tests in suites.items()}
            parsed_counts += [len(v) for v in parsed.values()]
            summary, records = score_tests(
                functions, parsed, executor, k=k, mutation=spec.mutation, coverage=False, timeout=cfg.game.test_timeout
            )
            for key in keys:
                totals[key] += float(summary[key]) / n
            for rec in records:
                n_parsed = min(len(parsed.get(rec.task_id, [])), k)
                shares[rec.task_id].append(sum(rec.valid) / n_parsed if n_parsed else 0.0)
                passed[rec.task_id].append(sum(rec.valid) / k)  # missing tests count invalid
                calls = [t.call for t in suites.get(rec.task_id, [])][:k]
                distinct[rec.task_id].append(distinct_valid(calls, rec.valid) / n_parsed if n_parsed else 0.0)
        out[mode] = {
            "suites_per_problem": n,
            "asserts_per_response": sum(parsed_counts) / max(len(parsed_counts), 1),
            **totals,
            **_valid_ratios(shares, "", spec),
            **_valid_ratios(distinct, "_distinct", spec),
            f"per_problem_pass@{k}": {tid: sum(v) / len(v) for tid, v in passed.items()},
        }
    out["sample_rows"] = sample_rows
    return out


def _valid_ratios(values: dict[str, list[float]], suffix: str, spec: EvalPlan) -> dict[str, Any]:
    """The valid share per problem (averaged over its suites), and its mean with a bootstrap interval."""
    per_problem = {tid: sum(v) / len(v) for tid, v in values.items()}
    mean, low, high = bootstrap_interval(list(per_problem.values()), samples=spec.bootstrap, seed=spec.seed)
    return {f"valid_ratio{suffix}": mean, f"valid_ratio{suffix}_ci95": [low, high], f"per_problem{suffix}": per_problem}


def evaluate_policies(
    code_policy: Sampler,
    test_policy: Sampler | None,
    problems: list[Problem],
    executor: Executor,
    cfg: Config,
    spec: EvalPlan,
) -> dict[str, Any]:
    """Both policies on the held-out problems; "samples" holds every response with its verdict (written
    beside the evaluation, not inside it)."""
    t0 = time.perf_counter()
    code = evaluate_code(code_policy, problems, executor, cfg, spec)
    samples = code.pop("sample_rows")
    result: dict[str, Any] = {"code": code}
    if test_policy is not None:
        result["tests"] = evaluate_tests(test_policy, problems, executor, cfg, spec)
        samples += result["tests"].pop("sample_rows")
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["samples"] = samples
    return result
