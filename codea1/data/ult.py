"""UnLeakedTestBench (ULT) loader: functions for test-generation evaluation.

Accepts the Lite split (a JSON array of {"task_id", "func_name", "code", "prompt", "test_list"}) and the
full benchmark's file, a JSON array (or JSON lines) of {"task_id", "code", "prompt"} rows where
`func_name` and `test_list` may be absent (the function name is then the first top-level `def`).
ULT functions are real-world code that often uses modules without importing them; like ULT's own
harness, every program runs after a fixed import prelude (imports that are unavailable are skipped);
the prelude also seeds `random` and numpy's global RNG, so that GT, mutants and test validity are the
same from run to run (ULT's own harness leaves them unseeded).
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codea1.errors import UserError
from codea1.problem import jsonl_rows

# the modules ULT's harness imports before each function (written as tolerant imports)
ULT_PRELUDE = """\
import os, re, math, random, string, warnings, datetime, traceback
from typing import (Any, Callable, Dict, FrozenSet, Generator, Iterable, List, Optional, Sequence, Set,
                    Tuple, Union)
try:
    import numpy
    import numpy as np
except ImportError:
    pass
try:
    import pandas
    import pandas as pd
except ImportError:
    pass
random.seed(0)  # reproducible runs of functions that draw random numbers (GT and mutants alike)
if "np" in globals():
    np.random.seed(0)
"""

_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(", re.MULTILINE)


@dataclass
class UltFunction:
    """One function under test: its code (without the prelude), name, description and given tests."""

    task_id: str
    func_name: str
    code: str
    description: str = ""
    tests: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def program(self) -> str:
        """The runnable program: ULT's import prelude followed by the function's code."""
        return f"{ULT_PRELUDE}\n{self.code}"


def _read_rows(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [row for _, row in jsonl_rows(text, path)]  # JSON Lines
    if isinstance(data, dict):  # {"task_id": row} or {"data": [...]}
        data = data.get("data") if isinstance(data.get("data"), list) else list(data.values())
    if not isinstance(data, list):
        raise UserError(f"{path}: expected a JSON array of ULT rows")
    return data


def ult_function_from_row(row: dict, index: int, where: str) -> UltFunction:
    """Builds an UltFunction from one ULT row; a missing `code` or an unparseable one is a UserError."""
    if not isinstance(row, dict) or not isinstance(row.get("code"), str) or not row["code"].strip():
        raise UserError(f"{where}: row {index} has no 'code' string (a ULT row needs 'code')")
    code = row["code"]
    name = row.get("func_name") or row.get("entry_point")
    if not name:
        match = _DEF.search(code)
        if not match:
            raise UserError(f"{where}: row {index} has no 'func_name' and no top-level def in its code")
        name = match.group(1)
    tests = row.get("test_list") or row.get("tests") or []
    if not isinstance(tests, list):
        tests = []
    description = row.get("prompt") or row.get("description") or ""
    known = {"task_id", "func_name", "entry_point", "code", "prompt", "description", "test_list", "tests"}
    return UltFunction(
        task_id=str(row.get("task_id", index)),
        func_name=str(name),
        code=code,
        description=str(description),
        tests=[t for t in tests if isinstance(t, str)],
        meta={k: v for k, v in row.items() if k not in known},
    )


def load_ult(path: str | Path, limit: int | None = None, parseable_only: bool = True) -> list[UltFunction]:
    """Reads a ULT file (Lite or full format). Rows whose code does not parse are skipped if asked."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such ULT file (pass the ULT_Lite.json or the full ULT file)")
    out = []
    for i, row in enumerate(_read_rows(path)):
        fn = ult_function_from_row(row, i, str(path))
        if parseable_only:
            try:
                with warnings.catch_warnings():  # invalid escapes in real-world code only warn
                    warnings.simplefilter("ignore")
                    ast.parse(fn.code)
            except (SyntaxError, ValueError):
                continue
        out.append(fn)
        if limit is not None and len(out) >= limit:
            break
    return out
