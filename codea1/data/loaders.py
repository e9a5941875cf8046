"""`load_problems(spec)`: one entry point for every problem source.

spec: "bundled" | "bundled:train" | "bundled:eval" | "bundled-stdio[:SPLIT]" | "bundled-stdio-cpp[:SPLIT]" (the
bundled stdin/stdout problems, Python or C++) | "humaneval" | "kodcode" (KodCode-V1 from the hub) |
"kodcode:PATH" (a local copy: dataset dir, .parquet or .jsonl) | "humaneval+[:PATH]" | "mbpp+[:PATH]" (from
the reference parquet or an EvalPlus release file; PATH defaults to $CODEA1_EVAL_DATA) |
"bigcodebench:PATH" | "bigcodebench-complete:PATH" | "livecodebench[@SINCE..UNTIL]:PATH" (LiveCodeBench's
code_generation_lite JSONL, a file or a folder of them, only problems whose contest date lies in the
window when one is given: ISO dates, either end may be left out) | "verl:PATH" (verl/PRIME code rows,
.parquet or .jsonl) | a path to a .jsonl[.gz] of Problem rows or of EvalPlus
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
    "bundled-stdio[:SPLIT]",
    "bundled-stdio-cpp[:SPLIT]",
    "humaneval",
    "kodcode",
    "kodcode:PATH",
    "humaneval+[:PATH]",
    "mbpp+[:PATH]",
    "bigcodebench:PATH",
    "bigcodebench-complete:PATH",
    "livecodebench[@SINCE..UNTIL]:PATH",
    "verl:PATH",
)
LIVECODEBENCH = "livecodebench"
VERL = "verl"


def _lcb_window(name: str, spec: str) -> tuple[str | None, str | None]:
    """(since, until) of a "livecodebench@SINCE..UNTIL" source name; (None, None) without a window."""
    _, _, window = name.partition("@")
    if not window:
        return None, None
    since, dots, until = window.partition("..")
    if not dots:
        raise UserError(
            f"'{spec}': write a LiveCodeBench date window as @SINCE..UNTIL (ISO dates, either may be left out), "
            "e.g. livecodebench@2024-08-01..2025-02-01:PATH"
        )
    return since or None, until or None


def _is_lcb(name: str) -> bool:
    """Whether a source name is LiveCodeBench's, with or without a date window."""
    return name == LIVECODEBENCH or name.startswith(LIVECODEBENCH + "@")


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
    if name in ("bundled-stdio", "bundled-stdio-cpp"):
        from codea1.data.bundled_stdio import load_bundled_stdio

        return load_bundled_stdio(arg or None, "cpp" if name.endswith("-cpp") else "python")
    if name == "humaneval" and not sep:
        from codea1.data.humaneval import load_humaneval

        return load_humaneval()
    if name == "kodcode":
        from codea1.data.kodcode import HUB_ID, load_kodcode

        return load_kodcode(arg or HUB_ID, difficulty, limit=limit)  # stops reading after `limit` rows
    if name in BENCHMARKS:
        from codea1.data.benchmarks import benchmark_problems

        return benchmark_problems(name, arg or None)
    if _is_lcb(name) or name == VERL:
        if not arg:
            raise UserError(f"'{spec}': name the data file, e.g. {name}:PATH")
        if name == VERL:
            from codea1.data.verl_rows import load_verl_rows

            return load_verl_rows(arg)
        from codea1.data.livecodebench import load_livecodebench

        since, until = _lcb_window(name, spec)
        return load_livecodebench(arg, since=since, until=until)
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
    """Problems of a benchmark for `codea1 eval code`: humaneval+ | mbpp+ | bigcodebench[-complete] |
    livecodebench[@SINCE..UNTIL] | verl (from `data`) | any other source `load_problems` reads (humaneval,
    bundled[:split], a file path)."""

    if data and ":" not in spec and (_is_lcb(spec) or spec == VERL):
        spec = f"{spec}:{data}"
    if spec in BENCHMARKS:
        problems = benchmark_problems(spec, data)
    else:
        problems = load_problems(spec)
    if not problems:
        raise UserError(f"benchmark '{spec}' has no problems")
    return problems[:limit] if limit else problems
