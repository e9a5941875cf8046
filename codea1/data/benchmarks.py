"""Benchmark problem sets for code evaluation: HumanEval+, MBPP+, HumanEval, the bundled set, files.

HumanEval+ and MBPP+ come from either
- the Code-A1 reference-schema parquet (HumanEval+ 164 + MBPP+ 378 rows with EvalPlus check() programs),
  given by --data PATH or $CODEA1_EVAL_DATA, or
- EvalPlus's published release files (HumanEvalPlus.jsonl[.gz], MbppPlus.jsonl[.gz], rows with
  `base_input` / `plus_input` / `atol`), whose expected values are computed by running the canonical
  solution, as EvalPlus does (for MBPP+'s "not None" tasks, whether its output is not None).
Either way the verdicts follow evalplus 0.3.1's evaluator, special oracles included (codea1.judge.formats.evalplus).
BigCodeBench (`bigcodebench`: the instruct prompts; `bigcodebench-complete`: the completion prompts) comes
from a local file in its published format, given by --data; its unittest tests run in the sandbox with
the verdict decided by the parent (codea1.eval.bigcodebench).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

from codea1.errors import UserError
from codea1.problem import Problem, jsonl_rows

SOURCES = {"humaneval+": "humanevalplus", "mbpp+": "mbppplus"}
BIGCODEBENCH = {"bigcodebench": "instruct", "bigcodebench-complete": "complete"}
DATA_ENV = "CODEA1_EVAL_DATA"

# EvalPlus's check() helpers is_floats and assertion, plus the names inf and nan that input reprs may use
EVALPLUS_HELPERS = """import numpy as np
from math import inf, nan


def is_floats(x) -> bool:
    if isinstance(x, float):
        return True
    if isinstance(x, (list, tuple)):
        return all(isinstance(i, float) for i in x)
    if isinstance(x, np.ndarray):
        return x.dtype == np.float64 or x.dtype == np.float32
    return False


def assertion(out, exp, atol):
    exact_match = out == exp
    if atol == 0 and is_floats(exp):
        atol = 1e-6
    if not exact_match and atol != 0:
        assert np.allclose(out, exp, rtol=1e-07, atol=atol)
    else:
        assert exact_match
"""


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of every row of a .jsonl or .jsonl.gz file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return list(jsonl_rows(handle, path))


def evalplus_release_problem(row: dict[str, Any], where: str) -> Problem:
    """A Problem from one EvalPlus release row: its inputs (base and plus) as data, the expected values
    from GT."""
    for name in ("task_id", "prompt", "canonical_solution", "entry_point", "base_input"):
        if name not in row:
            raise UserError(f"{where}: EvalPlus row lacks field '{name}'")
    inputs = list(row["base_input"]) + list(row.get("plus_input") or [])
    atol = float(row.get("atol") or 0)
    prompt = row["prompt"]
    solution = row["canonical_solution"]
    gt = solution if f"def {row['entry_point']}" in solution else prompt + solution
    return Problem(
        id=row["task_id"],
        prompt=prompt,
        description=prompt,
        entry_point=row["entry_point"],
        gt_solution=gt,
        source="evalplus",
        split="eval",
        # the inputs as data (codea1.judge.formats.evalplus.spec_from_inputs), never a program written and
        # parsed back: an input such as inf or nan has no repr a program could read
        meta={"test_format": "evalplus", "atol": atol, "evalplus_inputs": inputs},
    )


def _data_path(data: str | None) -> Path:
    path = data or os.environ.get(DATA_ENV)
    if not path:
        raise UserError(
            f"humaneval+/mbpp+ need their data: pass --data PATH (the Code-A1 validation parquet or an EvalPlus "
            f"HumanEvalPlus/MbppPlus .jsonl[.gz] release file) or set ${DATA_ENV}"
        )
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such benchmark data file (check --data or ${DATA_ENV})")
    return p


def problems_from_file(path: Path, source: str | None = None) -> list[Problem]:
    """Problems of a file: a reference-schema .parquet (only `source`'s rows when given), an EvalPlus
    release .jsonl[.gz], or a .jsonl[.gz] of Problem rows."""
    if not path.is_file():
        raise UserError(f"{path}: no such problem file")
    name = path.name
    if name.endswith(".parquet"):
        from codea1.data.reference import load_reference_parquet

        return load_reference_parquet(path, sources=[source] if source else None)
    if name.endswith((".jsonl", ".jsonl.gz")):
        rows = _read_jsonl(path)  # read once, whichever kind of rows it holds
        if rows and "base_input" in rows[0][1]:
            return [evalplus_release_problem(r, f"{path}:{i + 1}") for i, (_, r) in enumerate(rows)]
        return [Problem.from_dict(row, f"{path}:{lineno}") for lineno, row in rows]
    raise UserError(f"{path}: unknown benchmark file type (use .parquet, .jsonl or .jsonl.gz)")


def benchmark_problems(name: str, data: str | None = None) -> list[Problem]:
    """Problems of a named benchmark (humaneval+, mbpp+, bigcodebench, bigcodebench-complete) read from
    `data` (humaneval+ and mbpp+: else $CODEA1_EVAL_DATA)."""
    if name in SOURCES:
        return problems_from_file(_data_path(data), SOURCES[name])
    if name in BIGCODEBENCH:
        from codea1.data.bigcodebench import load_bigcodebench

        if not data:
            raise UserError(
                f"{name} needs its data: pass --data FILE (BigCodeBench tasks as .jsonl[.gz] or "
                f".parquet with task_id, instruct_prompt, complete_prompt, code_prompt, "
                f"canonical_solution, test, entry_point, libs)"
            )
        return load_bigcodebench(data, BIGCODEBENCH[name])
    raise UserError(f"unknown benchmark '{name}': use {', '.join([*SOURCES, *BIGCODEBENCH])}")
