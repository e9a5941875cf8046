"""`codea1 eval code | tests | collab | export-tests | table | diff`: evaluation commands.

Each writes a JSON summary (--output R.json) with the exact configuration, next to R.results.jsonl
(per-sample or per-function records), R.md and R.html tables; `eval code` also writes R.evalplus.jsonl
({"task_id", "solution"} lines) for cross-checking with EvalPlus.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import Config, RolloutSection, Sampling, load_section, preset_names
from codea1.engines import describe_engines, engine_names
from codea1.errors import UserError

if TYPE_CHECKING:
    from codea1.data.ult import UltFunction
    from codea1.eval.generation import Generator
    from codea1.problem import Problem
    from codea1.sandbox import LocalExecutor


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k expects integers like 1,5,10 (got {text!r})") from None
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError("--k values must be >= 1")
    return ks


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--output", "-o", default=None, help="summary JSON path (records, tables written next to it)")
    p.add_argument("--limit", type=int, default=None, help="only the first N problems/functions")
    p.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPU count)")
    p.add_argument("--memory-mb", type=int, default=4096, help="address space per sandboxed program (MiB)")
    p.add_argument("--seed", type=int, default=0, help="sampling seed (recorded)")
    p.add_argument("--dtype", default="float32", help="model dtype: float32 | bfloat16 | float16")
    p.add_argument(
        "--config",
        default=None,
        help="take the sampling settings from this config's `eval` section (a run's config.yaml, another "
        f"file, or a preset by name: {', '.join(preset_names())}); the options below override single keys",
    )
    p.add_argument(
        "--engine",
        choices=engine_names(),
        default=None,
        help="what samples from --model: rollout.backend, as in training (default: the --config's, else "
        "loop); " + describe_engines(),
    )
    p.add_argument(
        "--rollout",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a key of the rollout section, as in training (repeatable), e.g. rollout.vllm_tensor_parallel_size=2, "
        "rollout.vllm_gpu_memory_utilization=0.45 (two engines, as in `eval collab` with two models, need "
        "less than half each), rollout.vllm_max_model_len=4096",
    )
    defaults = Config().eval
    for f in dataclasses.fields(Sampling):  # the sampling keys of the eval section, one option each
        p.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f"eval_{f.name}",
            metavar="VALUE",
            default=None,
            help=f"eval.{f.name}: {f.metadata['help']} (default {getattr(defaults, f.name)!r})",
        )


def register(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser("eval", help="evaluate code generation, test generation, collaboration; export tests")
    esub = ev.add_subparsers(dest="eval_command", metavar="WHAT")
    _register_models(esub)
    _register_summaries(esub)
    ev.set_defaults(func=lambda args: (ev.print_help(), 2)[1])


def _register_models(esub: argparse._SubParsersAction) -> None:
    """The commands that sample from a model (or score given samples): code, tests, collab, export-tests."""
    p = esub.add_parser("code", help="pass@k of a model or of given samples on a code benchmark")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="model name or path (tiny-random, smollm2-135m, a local dir, a hub id)")
    src.add_argument("--samples", help="EvalPlus-style JSONL of {task_id, solution} to score without a model")
    p.add_argument(
        "--benchmark",
        default="humaneval+",
        help="humaneval+ | mbpp+ | bigcodebench | bigcodebench-complete | humaneval | bundled | PATH",
    )
    p.add_argument(
        "--data",
        default=None,
        help="data file for humaneval+/mbpp+ (or $CODEA1_EVAL_DATA), "
        "or the BigCodeBench .jsonl/.parquet for bigcodebench",
    )
    p.add_argument("--n", type=int, default=32, help="samples per problem")
    p.add_argument("--k", type=_ks, default=[1], help="pass@k values, e.g. 1,5,10 (k <= n)")
    _common(p)
    p.set_defaults(func=cmd_code)

    p = esub.add_parser("tests", help="pass@k, mut@k, Mul and coverage of a Test LLM's tests (UnLeakedTestBench)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="test model name or path")
    src.add_argument("--tests", help="JSONL of {task_id, tests: [assert ...]} or {task_id, response} to score")
    p.add_argument("--benchmark", default="ult-lite", help="ult-lite | PATH to a ULT file (Lite or full format)")
    p.add_argument("--data", default=None, help="ULT file for 'ult-lite' (or $CODEA1_ULT_DATA)")
    p.add_argument("--k", type=int, default=5, help="tests per function")
    p.add_argument("--whitebox", action="store_true", help="show a known-buggy mutant; report the attack rate")
    p.add_argument("--no-mutation", action="store_true", help="skip mut@k")
    p.add_argument("--no-coverage", action="store_true", help="skip coverage")
    _common(p)
    p.set_defaults(func=cmd_tests)

    p = esub.add_parser("collab", help="code policy samples n, test policy's tests pick one; pass@1 vs plain")
    p.add_argument("--code-model", required=True)
    p.add_argument("--test-model", default=None, help="default: the code model")
    p.add_argument("--benchmark", default="humaneval+")
    p.add_argument("--data", default=None)
    p.add_argument("--n", type=int, default=8, help="solutions per problem")
    p.add_argument("--tests-per-problem", type=int, default=8)
    _common(p)
    p.set_defaults(func=cmd_collab)

    p = esub.add_parser("export-tests", help="the test policy's GT-validated tests as golden tests (Problem JSONL)")
    p.add_argument("--model", required=True, help="test model name or path")
    p.add_argument("--benchmark", default="bundled", help="problems: a benchmark name or a Problem/parquet file")
    p.add_argument("--data", default=None)
    p.add_argument("--problems-out", required=True, help="Problem JSONL to write (golden_tests filled)")
    p.add_argument("--tests-per-problem", type=int, default=8)
    p.add_argument("--min-valid", type=int, default=1, help="leave out problems with fewer valid tests")
    _common(p)
    p.set_defaults(func=cmd_export)


def _register_summaries(esub: argparse._SubParsersAction) -> None:
    """The commands that read evaluations already written: table, diff."""
    p = esub.add_parser(
        "table",
        help="the paper's table from `eval code` summaries: pass@1 on HumanEval+, "
        "MBPP+, BigCodeBench and their average, one row per model",
    )
    p.add_argument("summaries", nargs="+", help="summary JSONs written by `codea1 eval code -o`")
    p.add_argument("--output", "-o", default=None, help="also write the rows as JSON here")
    p.set_defaults(func=cmd_table)
    p = esub.add_parser(
        "diff",
        help="paired differences (with 95%% bootstrap intervals over problems) between "
        "two held-out evaluations of `codea1 compare` (evals/METHOD/step_N.json)",
    )
    p.add_argument("new", help="the evaluation to measure")
    p.add_argument("old", help="the evaluation it is measured against")
    p.add_argument(
        "--parts",
        action="store_true",
        help="also each part of the held-out set (the problems whose ids share a prefix: MBPP/..., bundled/...)",
    )
    p.set_defaults(func=cmd_diff)


# ------------------------------------------------------------------------------------------- helpers


@contextmanager
def progress_bar(label: str) -> Iterator[Any]:
    """A rich progress bar (stderr) whose callback takes (done, total)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _executor(args: argparse.Namespace) -> LocalExecutor:
    from codea1.sandbox import LocalExecutor

    return LocalExecutor(workers=args.workers, memory_mb=args.memory_mb)


def _environment(args: argparse.Namespace, extra: dict[str, Any]) -> dict[str, Any]:
    import codea1
    from codea1.sandbox import isolation_level

    config = {k: v for k, v in vars(args).items() if k != "func" and not callable(v)}
    return {
        "command": " ".join(["codea1", *sys.argv[1:]]) if sys.argv else "",
        "args": config,
        "codea1_version": codea1.__version__,
        "python": platform.python_version(),
        "isolation_level": isolation_level(),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **extra,
    }


def _paths(output: str | None, default: str) -> dict[str, Path]:
    base = Path(output or default)
    stem = base.with_suffix("") if base.suffix == ".json" else base
    base.parent.mkdir(parents=True, exist_ok=True)
    return {
        "json": base if base.suffix == ".json" else base.with_suffix(".json"),
        "records": Path(f"{stem}.results.jsonl"),
        "evalplus": Path(f"{stem}.evalplus.jsonl"),
        "md": Path(f"{stem}.md"),
        "html": Path(f"{stem}.html"),
    }


def _write_outputs(paths: dict[str, Path], summary: dict[str, Any], records: list[dict], title: str) -> None:
    from codea1.eval.report import summary_html, summary_markdown

    paths["json"].write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    with paths["records"].open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, default=str) + "\n")
    paths["md"].write_text(summary_markdown(summary, title), encoding="utf-8")
    paths["html"].write_text(summary_html(summary, title), encoding="utf-8")
    print(summary_markdown(summary, title))
    print(f"summary: {paths['json']}  records: {paths['records']}", file=sys.stderr)


def read_samples(
    path: str,
    prompts: dict[str, str] | None = None,
    aliases: dict[str, str] | None = None,
    languages: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    """(task_id, solution) pairs of an EvalPlus-style samples file (prompts: task_id -> problem prompt).

    A row's task_id is mapped by `aliases` (a source's own id -> codea1's, `own_ids`). Its `solution` is
    taken as it is, or, where it holds a fenced block, that block's code as the rewards read a response
    (codea1.game.extract_code, in the task's language from `languages`, else Python); a `completion` (no
    `solution`) is joined as EvalPlus does, prompt + completion, with EvalPlus's own prompt: for a
    reference-schema problem, whose prompt wraps the row's question in an instruction, that question
    (HumanEval+) or its docstring (MBPP+); see codea1.data.reference.completion_prefix.
    """
    from codea1.data.reference import completion_prefix
    from codea1.game import extract_code
    from codea1.problem import jsonl_rows

    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such samples file")
    out = []
    with p.open(encoding="utf-8") as fh:
        for lineno, row in jsonl_rows(fh, p):
            code = row.get("solution", row.get("completion")) if isinstance(row, dict) else None
            if not isinstance(row, dict) or not isinstance(row.get("task_id"), str) or not isinstance(code, str):
                raise UserError(
                    f"{p}:{lineno}: a sample needs a string 'task_id' and a string 'solution' or 'completion'"
                )
            task_id = (aliases or {}).get(row["task_id"], row["task_id"])
            if "```" in code:
                code = extract_code(code, (languages or {}).get(task_id, "python"))
            if "solution" not in row and prompts and task_id in prompts:
                code = completion_prefix(task_id, prompts[task_id]) + code
            out.append((task_id, code))
    return out


def own_ids(problems: list) -> dict[str, str]:
    """A source's own id -> codea1's id, for the problems whose id is "SOURCE/OWN" (LiveCodeBench's
    question_id: livecodebench/<question_id>), where OWN names one problem only and is no codea1 id."""
    ids = {p.id for p in problems}
    found: dict[str, list[str]] = {}
    for p in problems:
        prefix = f"{p.source}/"
        if p.source and p.id.startswith(prefix) and p.id[len(prefix) :] not in ids:
            found.setdefault(p.id[len(prefix) :], []).append(p.id)
    return {own: names[0] for own, names in found.items() if len(names) == 1}


def _refuse_unknown_ids(path: str, samples: list[tuple[str, str]], problems: list, benchmark: str) -> None:
    """A UserError naming the samples' task_ids that match no problem of the benchmark."""
    known = {p.id for p in problems}
    unknown = sorted({task_id for task_id, _ in samples if task_id not in known})
    if unknown:
        shown = ", ".join(repr(u) for u in unknown[:3]) + (f" and {len(unknown) - 3} more" if len(unknown) > 3 else "")
        raise UserError(
            f"{path}: {len(unknown)} task_id(s) name no problem of {benchmark}: {shown} "
            f"(its ids look like {next(iter(sorted(known)), '-')!r}; LiveCodeBench's question_id is read as well)"
        )


def _refuse_k_above_samples(samples: list[tuple[str, str]], ks: list[int]) -> None:
    """A UserError when a --k is above some task's number of samples (pass@k would cover a subset)."""
    counts: dict[str, int] = {}
    for task_id, _ in samples:
        counts[task_id] = counts.get(task_id, 0) + 1
    k = max(ks, default=1)
    short = sorted(t for t, n in counts.items() if n < k)
    if short:
        raise UserError(
            f"--k {k} is larger than the {counts[short[0]]} sample(s) of task {short[0]!r} ({len(short)} of "
            f"{len(counts)} tasks have fewer than {k}): pass@k needs at least k samples of every task"
        )


def _file_samples(args: argparse.Namespace, every: list, problems: list, bcb: bool) -> list[tuple[str, str]]:
    """The samples of --samples for `problems` (the benchmark's first --limit of `every`): ids read by
    `own_ids`, an unknown one refused, fenced code extracted, --k checked against each task's count."""
    prompts = None if bcb else {p.id: p.prompt for p in every if not p.is_stdio}
    samples = read_samples(args.samples, prompts, own_ids(every), {p.id: p.language for p in every})
    _refuse_unknown_ids(args.samples, samples, every, args.benchmark)
    wanted = {p.id for p in problems}
    samples = [s for s in samples if s[0] in wanted]
    _refuse_k_above_samples(samples, args.k)
    return samples


def _sampling(args: argparse.Namespace) -> Sampling:
    """The sampling settings: the eval section of --config (or the defaults), then the options, checked
    exactly as the `eval` keys of a training config."""
    overrides = [
        f"eval.{f.name}={getattr(args, 'eval_' + f.name)}"
        for f in dataclasses.fields(Sampling)
        if getattr(args, f"eval_{f.name}") is not None
    ]
    return load_section("eval", args.config, overrides)


def _rollout(args: argparse.Namespace) -> RolloutSection:
    """The engine and its settings: the `rollout` section of --config (or the defaults), then the --rollout
    keys, then --engine (rollout.backend)."""
    overrides = list(args.rollout)
    if args.engine is not None:
        overrides.append(f"rollout.backend={args.engine}")
    return load_section("rollout", args.config, overrides)


def _generator(args: argparse.Namespace, model: str) -> Generator:
    """`model` loaded for sampling with the settings of `_sampling` and the engine of `_rollout`."""
    from codea1.eval.generation import Generator

    return Generator(model, _sampling(args), dtype=args.dtype, seed=args.seed, rollout=_rollout(args))


def _solutions_from_model(problems: list, gen: Generator, n: int) -> list[tuple[str, str]]:
    from codea1.eval.policy_eval import code_prompts
    from codea1.game import extract_code

    with progress_bar(f"sampling {n} x {len(problems)} solutions") as cb:
        texts = gen.sample(code_prompts(problems, gen.sampling.response_prefix), n, progress=cb)
    return [(p.id, extract_code(t, p.language)) for p, group in zip(problems, texts, strict=True) for t in group]


# ------------------------------------------------------------------------------------------- commands


def cmd_code(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_benchmark
    from codea1.eval.by_kind import evaluate_problems

    if args.model and any(k > args.n for k in args.k):
        raise UserError(f"--k {max(args.k)} is larger than --n {args.n}: pass@k needs k <= n samples")
    every = load_benchmark(args.benchmark, args.data)
    problems = every[: args.limit] if args.limit else every
    t0 = time.monotonic()
    extra: dict[str, Any] = {"benchmark": args.benchmark, "problems": len(problems)}
    bcb = bool(problems) and all(p.meta.get("test_format") == "bigcodebench" for p in problems)
    if args.samples:
        # a BigCodeBench completion continues its task's prompt when it does not define the entry point
        # (codea1.eval.bigcodebench.candidate_program)
        # (a stdio program is whole: no prompt goes before it)
        samples = _file_samples(args, every, problems, bcb)
        extra["samples_file"] = args.samples
    else:
        gen = _generator(args, args.model)
        extra["sampling"] = gen.record | {"n": args.n}
        samples = _solutions_from_model(problems, gen, args.n)
    t_gen = time.monotonic() - t0
    evaluate = evaluate_problems
    if bcb:
        from codea1.eval.bigcodebench import evaluate_bigcodebench as evaluate
    with _executor(args) as ex, progress_bar("checking GT") as prep, progress_bar("scoring samples") as score:
        summary, results, _ = evaluate(problems, samples, ex, args.k, prep, score)
    summary["seconds"]["generate"] = round(t_gen, 2)
    summary["config"] = _environment(args, extra)
    paths = _paths(args.output, f"eval-code-{args.benchmark.replace('+', 'plus').replace('/', '_')}.json")
    _write_outputs(paths, summary, [r.to_dict() for r in results], f"eval code: {args.benchmark}")
    with paths["evalplus"].open("w", encoding="utf-8") as fh:
        for task_id, solution in samples:
            fh.write(json.dumps({"task_id": task_id, "solution": solution}) + "\n")
    return 0


def _ult_functions(args: argparse.Namespace) -> list:
    import os

    from codea1.data.ult import load_ult

    if args.benchmark == "ult-lite":
        path = args.data or os.environ.get("CODEA1_ULT_DATA")
        if not path:
            raise UserError("ult-lite needs its file: pass --data PATH/ULT_Lite.json or set $CODEA1_ULT_DATA")
    else:
        path = args.benchmark
    return load_ult(path, limit=args.limit)


def read_tests(path: str, k: int, names: dict[str, str]) -> dict[str, list[str]]:
    """task_id -> assert statements from {task_id, tests} or {task_id, response} lines."""
    from codea1.game import parse_test_suite
    from codea1.problem import jsonl_rows

    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such tests file")
    out: dict[str, list[str]] = {}
    for lineno, row in jsonl_rows(p.read_text(encoding="utf-8"), p):
        tid = str(row.get("task_id")) if isinstance(row, dict) else None
        if isinstance(row, dict) and isinstance(row.get("tests"), list):
            out.setdefault(tid, []).extend(str(t) for t in row["tests"])
        elif isinstance(row, dict) and isinstance(row.get("response"), str):
            suite = parse_test_suite(row["response"], names.get(tid))
            out.setdefault(tid, []).extend(t.statement for t in suite.tests)
        else:
            raise UserError(f"{p}:{lineno}: a line needs 'task_id' and 'tests' (list) or 'response' (text)")
    return out


def _ult_problem(fn: UltFunction) -> Problem:
    from codea1.problem import Problem

    return Problem(
        id=fn.task_id,
        prompt=fn.description or fn.func_name,
        description=fn.description or f"The function {fn.func_name}.",
        entry_point=fn.func_name,
        gt_solution=fn.code,
    )


def _tests_from_model(
    args: argparse.Namespace, functions: list[UltFunction], buggy: dict | None, extra: dict[str, Any]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """One suite per function from the test model (shown the function, or its buggy candidate with
    --whitebox): each function's response and the asserts parsed from it."""
    from codea1.eval.policy_eval import suite_prompts
    from codea1.game import parse_test_suite

    gen = _generator(args, args.model)
    extra["sampling"] = gen.record
    shown = {f.task_id: (buggy[f.task_id].code if buggy and f.task_id in buggy else f.code) for f in functions}
    prompts = suite_prompts(
        [_ult_problem(f) for f in functions],
        gen.sampling.response_prefix,
        args.k,
        shown=[shown[f.task_id] for f in functions],
    )
    with progress_bar(f"sampling tests for {len(functions)} functions") as cb:
        texts = gen.sample(prompts, 1, progress=cb)
    responses = {f.task_id: g[0] for f, g in zip(functions, texts, strict=True)}
    tests = {
        f.task_id: [t.statement for t in parse_test_suite(g[0], f.func_name).tests]
        for f, g in zip(functions, texts, strict=True)
    }
    return responses, tests


def cmd_tests(args: argparse.Namespace) -> int:
    from codea1.eval.suite_eval import pick_buggy_candidates, score_tests

    functions = _ult_functions(args)
    extra: dict[str, Any] = {"benchmark": args.benchmark, "functions": len(functions), "k": args.k}
    t0 = time.monotonic()
    with _executor(args) as ex:
        buggy = None
        if args.whitebox:
            buggy = pick_buggy_candidates(functions, ex, seed=args.seed)
            extra["buggy_candidates"] = {tid: m.id for tid, m in buggy.items()}
        t_pick = time.monotonic() - t0
        responses: dict[str, str] = {}
        if args.tests:
            tests = read_tests(args.tests, args.k, {f.task_id: f.func_name for f in functions})
            extra["tests_file"] = args.tests
            t_gen = 0.0
        else:
            t1 = time.monotonic()
            responses, tests = _tests_from_model(args, functions, buggy, extra)
            t_gen = time.monotonic() - t1
        t2 = time.monotonic()
        with progress_bar("mutation scoring") as cb:
            summary, records = score_tests(
                functions,
                tests,
                ex,
                k=args.k,
                mutation=not args.no_mutation,
                coverage=not args.no_coverage,
                buggy=buggy,
                progress=cb,
            )
    summary["seconds"] = {
        "pick_buggy": round(t_pick, 2),
        "generate": round(t_gen, 2),
        "score": round(time.monotonic() - t2, 2),
    }
    summary["config"] = _environment(args, extra)
    paths = _paths(args.output, "eval-tests.json")
    rows = [r.to_dict() | ({"response": responses[r.task_id]} if r.task_id in responses else {}) for r in records]
    _write_outputs(paths, summary, rows, f"eval tests: {args.benchmark}")
    return 0


def cmd_collab(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_benchmark
    from codea1.eval.code_eval import prepare_tasks
    from codea1.eval.collab import collaborate
    from codea1.eval.policy_eval import suite_prompts
    from codea1.game import parse_test_suite

    problems = load_benchmark(args.benchmark, args.data, args.limit)
    code_gen = _generator(args, args.code_model)
    pairs = _solutions_from_model(problems, code_gen, args.n)
    code_record = code_gen.record
    del code_gen  # one model in memory at a time
    solutions: dict[str, list[str]] = {}
    for tid, code in pairs:
        solutions.setdefault(tid, []).append(code)
    gen = _generator(args, args.test_model or args.code_model)
    with progress_bar("sampling tests") as cb:
        texts = gen.sample(
            suite_prompts(problems, gen.sampling.response_prefix, args.tests_per_problem), 1, progress=cb
        )
    tests = {
        p.id: [t.statement for t in parse_test_suite(g[0], p.entry_point).tests][: args.tests_per_problem]
        for p, g in zip(problems, texts, strict=True)
    }
    with _executor(args) as ex:
        tasks = prepare_tasks(problems, ex)
        summary, records = collaborate(tasks, solutions, tests, ex)
    summary["config"] = _environment(args, {"code_sampling": code_record | {"n": args.n}, "test_sampling": gen.record})
    paths = _paths(args.output, "eval-collab.json")
    _write_outputs(paths, summary, [r.to_dict() for r in records], f"eval collab: {args.benchmark}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from codea1.data.loaders import load_benchmark
    from codea1.eval.export import validated_golden
    from codea1.eval.policy_eval import suite_prompts
    from codea1.game import parse_test_suite
    from codea1.problem import write_problems_jsonl

    problems = load_benchmark(args.benchmark, args.data, args.limit)
    gen = _generator(args, args.model)
    with progress_bar("sampling tests") as cb:
        texts = gen.sample(
            suite_prompts(problems, gen.sampling.response_prefix, args.tests_per_problem), 1, progress=cb
        )
    tests = {
        p.id: [t.statement for t in parse_test_suite(g[0], p.entry_point).tests]
        for p, g in zip(problems, texts, strict=True)
    }
    with _executor(args) as ex:
        out, stats = validated_golden(problems, tests, ex, max_tests=args.tests_per_problem, min_valid=args.min_valid)
    write_problems_jsonl(out, args.problems_out)
    stats["problems_file"] = args.problems_out
    stats["config"] = _environment(args, {"sampling": gen.record})
    paths = _paths(args.output, str(Path(args.problems_out).with_suffix("")) + ".export.json")
    _write_outputs(paths, stats, [{"task_id": p.id, "golden_tests": p.golden_tests} for p in out], "export tests")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from codea1.eval.stats import held_out_difference, held_out_difference_by_part

    evals = []
    for path in (args.new, args.old):
        try:
            evals.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read a held-out evaluation from {path}: {exc}") from None
        if not isinstance(evals[-1], dict):
            raise UserError(f"{path} is not a held-out evaluation (a JSON object written by `codea1 compare`)")
    try:
        rows = [("all", r) for r in held_out_difference(*evals)]
        if args.parts and rows:
            rows += [(part, r) for part, part_rows in held_out_difference_by_part(*evals).items() for r in part_rows]
    except ValueError as exc:
        raise UserError(f"eval diff: {exc}") from None
    except (AttributeError, TypeError) as exc:
        raise UserError(
            f"eval diff: a per-problem score is not a number ({exc}); pass the "
            "evals/METHOD/step_N.json files a `codea1 compare` writes"
        ) from None
    if not rows:
        raise UserError(
            "eval diff: the two files have no measure in common (they should be the "
            "evals/METHOD/step_N.json files a `codea1 compare` writes)"
        )
    parts = args.parts
    print(
        ("| part " if parts else "")
        + "| measure | new | old | new - old [95% CI] | problems |\n"
        + ("|---" if parts else "")
        + "|---|---|---|---|---|"
    )
    for part, r in rows:
        lo, hi = r["ci95"]
        print(
            (f"| {part} " if parts else "") + f"| {r['measure']} | {100 * r['new']:.1f} | {100 * r['old']:.1f} | "
            f"{100 * r['delta']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] | {r['problems']} |"
        )
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from codea1.eval.report import paper_table

    summaries = []
    for path in args.summaries:
        try:
            summaries.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise UserError(f"cannot read an eval summary from {path}: {exc}") from None
    try:
        rows, text = paper_table(summaries)
    except (KeyError, ValueError) as exc:
        raise UserError(f"eval table: {exc}") from None
    print(text, end="")
    if args.output:
        Path(args.output).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0
