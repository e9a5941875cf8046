"""`load_problems(spec)`: one entry point for every problem source.

spec: "bundled" | "bundled:train" | "bundled:eval" | "humaneval" | "kodcode" (KodCode-V1 from the hub) |
"kodcode:PATH" (a local copy: dataset dir, .parquet or .jsonl) | "humaneval+[:PATH]" | "mbpp+[:PATH]" (from
the reference parquet or an EvalPlus release file; PATH defaults to $CODEA1_EVAL_DATA) |
"bigcodebench:PATH" | "bigcodebench-complete:PATH" | a path to a .jsonl[.gz] of Problem rows or of EvalPlus
release rows | a path to a reference-schema .parquet (HumanEval+/MBPP+ as used by Code-A1) | several of
these joined by commas ("held_out.jsonl,bundled:eval"), read one after the other (an id may appear only
once). The benchmark sources and files: codea1.data.benchmarks.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from codea1.data.benchmarks import benchmark_problems
from codea1.errors import UserError
from codea1.problem import Problem, require_unique_ids

BENCHMARKS = ("humaneval+", "mbpp+", "bigcodebench", "bigcodebench-complete")

NAMED = (
    "bundled",
    "bundled:train",
    "bundled:eval",
    "humaneval",
    "kodcode",
    "kodcode:PATH",
    "humaneval+[:PATH]",
    "mbpp+[:PATH]",
    "bigcodebench:PATH",
    "bigcodebench-complete:PATH",
)


def _load(spec: str, difficulty: str | None, limit: int | None) -> list[Problem]:
    if "," in spec and not Path(spec).exists():  # several sources, one after the other
        problems = [p for part in spec.split(",") if part.strip() for p in _load(part.strip(), difficulty, None)]
        seen: set[str] = set()
        twice = sorted({p.id for p in problems if p.id in seen or seen.add(p.id)})
        if twice:
            raise UserError(f"'{spec}': problem id(s) {', '.join(twice[:3])} come from more than one source")
        return problems
    name, sep, arg = spec.partition(":")
    if name == "bundled":
        from codea1.data.bundled import load_bundled

        return load_bundled(arg or None)
    if name == "humaneval" and not sep:
        from codea1.data.humaneval import load_humaneval

        return load_humaneval()
    if name == "kodcode":
        from codea1.data.kodcode import HUB_ID, load_kodcode

        return load_kodcode(arg or HUB_ID, difficulty, limit=limit)  # stops reading after `limit` rows
    if name in BENCHMARKS:
        from codea1.data.benchmarks import benchmark_problems

        return benchmark_problems(name, arg or None)
    path = Path(spec)
    if path.name.endswith((".jsonl", ".jsonl.gz", ".parquet")):
        from codea1.data.benchmarks import problems_from_file

        return problems_from_file(path)
    raise UserError(
        f"problem source '{spec}' is unknown; use one of {', '.join(NAMED)}, "
        "a .jsonl[.gz] file of problems or a reference-schema .parquet file"
    )


def load_problems(
    spec: str,
    *,
    split: str | None = None,
    limit: int | None = None,
    check: bool = False,
    difficulty: str | None = None,
    workers: int | None = None,
    source: str | None = None,
) -> list[Problem]:
    """Problems from `spec` (see module doc), filtered by split, difficulty and source (the Problem's
    `source` field, e.g. "mbppplus" in the reference parquet), at most `limit` of them.

    check=True runs every GT against its tests in the sandbox (`check_problems`) and drops the failing
    ones with one warning that counts them; kept problems get meta["gt_seconds"] (their GT runtime).
    """
    problems = _load(spec, difficulty, limit if split is None and source is None else None)
    require_unique_ids(problems, spec)
    if split is not None:
        problems = [p for p in problems if p.split == split]
    if source is not None:
        problems = [p for p in problems if p.source == source]
    if difficulty is not None:
        problems = [p for p in problems if p.difficulty == difficulty]
    if limit is not None:
        problems = problems[: max(0, limit)]
    if check and problems:
        from codea1.data.check import check_problems, drop_failing

        kept, failed = drop_failing(problems, check_problems(problems, workers=workers))
        if failed:
            shown = ", ".join(r.id for r in failed[:5]) + (", ..." if len(failed) > 5 else "")
            warnings.warn(
                f"{spec}: dropped {len(failed)} of {len(problems)} problems whose GT fails its own "
                f"tests ({shown}); run `codea1 data check {spec}` for the reasons",
                RuntimeWarning,
                stacklevel=2,
            )
        problems = kept
    if not problems:
        raise UserError(
            f"{spec}: no problems left (split={split}, difficulty={difficulty}, source={source}, limit={limit})"
        )
    return problems


def load_benchmark(spec: str, data: str | None = None, limit: int | None = None) -> list[Problem]:
    """Problems of a benchmark for `codea1 eval code`: humaneval+ | mbpp+ | bigcodebench[-complete] (from
    `data`) | any other source `load_problems` reads (humaneval, bundled[:split], a file path)."""

    if spec in BENCHMARKS:
        problems = benchmark_problems(spec, data)
    else:
        problems = load_problems(spec)
    if not problems:
        raise UserError(f"benchmark '{spec}' has no problems")
    return problems[:limit] if limit else problems
