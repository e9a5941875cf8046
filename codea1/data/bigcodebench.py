"""BigCodeBench tasks read from a local file in the benchmark's published format.

A task row holds `task_id, complete_prompt, instruct_prompt, canonical_solution, code_prompt, test,
entry_point, libs` (JSONL, optionally gzipped, or parquet). `test` is a unittest module defining
`class TestCases(unittest.TestCase)`. Scoring: codea1.eval.bigcodebench; the harness and the verdict:
codea1.judge.formats.bigcodebench.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

from codea1.errors import UserError
from codea1.problem import Problem

FIELDS = ("task_id", "complete_prompt", "instruct_prompt", "canonical_solution", "code_prompt", "test", "entry_point")
SPLITS = ("instruct", "complete")


def _rows(path: Path) -> list[dict[str, Any]]:
    name = path.name
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    if name.endswith((".jsonl", ".jsonl.gz")):
        opener = gzip.open if name.endswith(".gz") else open
        rows = []
        with opener(path, "rt", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        return rows
    raise UserError(f"{path}: a BigCodeBench file is .jsonl, .jsonl.gz or .parquet")


def _libs(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    if isinstance(value, str) and value.strip():
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            return [value]
        return [str(v) for v in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]
    return []


def bigcodebench_problem(row: dict[str, Any], where: str, split: str = "instruct") -> Problem:
    """A Problem from one BigCodeBench row; the prompt is the instruct (default) or the complete prompt."""
    for name in FIELDS:
        if not isinstance(row.get(name), str):
            raise UserError(f"{where}: BigCodeBench row lacks field '{name}' (a string)")
    code_prompt = row["code_prompt"]
    solution = row["canonical_solution"]
    entry = row["entry_point"]
    gt = solution if f"def {entry}" in solution else code_prompt + solution
    prompt = row["instruct_prompt"] if split == "instruct" else row["complete_prompt"]
    return Problem(
        id=row["task_id"],
        prompt=prompt,
        description=row["instruct_prompt"],
        entry_point=entry,
        gt_solution=gt,
        source="bigcodebench",
        test_code=row["test"],
        split="eval",
        meta={
            "test_format": "bigcodebench",
            "libs": _libs(row.get("libs")),
            "code_prompt": code_prompt,
            "complete_prompt": row["complete_prompt"],
            "bcb_split": split,
        },
    )


def load_bigcodebench(path: str | Path, split: str = "instruct") -> list[Problem]:
    """Every task of a BigCodeBench file (see the module docstring for the format)."""
    p = Path(path)
    if not p.is_file():
        raise UserError(f"{p}: no such BigCodeBench file (pass --data FILE)")
    if split not in SPLITS:
        raise UserError(f"BigCodeBench split must be one of {', '.join(SPLITS)}; got {split!r}")
    return [bigcodebench_problem(r, f"{p}:{i + 1}", split) for i, r in enumerate(_rows(p))]
