"""Loader for KodCode-V1 style rows (the dataset the Code-A1 paper trains on), through `datasets`.

Fields used (KodCode-V1 dataset card): question_id, question, solution (the GT program), test (pytest code
that does `from solution import NAME` and defines `test_*` functions), test_info (list of {function_name,
function_declaration, parameter_list, docstring}), gpt_difficulty ("easy" | "medium" | "hard"; a plain
`difficulty` column is accepted too), subset, style.

golden_tests: the pytest `assert CALL == EXPECTED` statements found directly in the body of each top-level
`test_*` function, with simple local assignments (`x = [1, 2]`) inlined, kept when CALL calls the entry
point and both sides use nothing but literals, the entry point and a few pure builtins. The whole pytest
program stays in test_code (meta["test_format"] = "pytest"). Rows whose solution does not define the
entry point as a module-level function (e.g. class-based tasks) are skipped with one warning counting them.
"""

from __future__ import annotations

import ast
import copy
import warnings
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from codea1.data.static import defines, parse_error
from codea1.errors import UserError
from codea1.judge.asserts import split_assert
from codea1.problem import Problem

if TYPE_CHECKING:
    from datasets import Dataset, DatasetDict

HUB_ID = "KodCode/KodCode-V1"
SAFE_BUILTINS = frozenset(
    {
        "abs",
        "all",
        "any",
        "bool",
        "dict",
        "float",
        "frozenset",
        "int",
        "len",
        "list",
        "max",
        "min",
        "range",
        "reversed",
        "round",
        "set",
        "sorted",
        "str",
        "sum",
        "tuple",
        "True",
        "False",
        "None",
    }
)

PROMPT = """{question}

Use this signature:

```python
{declaration}
```

Return the complete function, with any imports it needs, in one ```python code block."""


class _Inline(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr]) -> None:
        self.env = env

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in self.env:
            return copy.deepcopy(self.env[node.id])
        return node


def _free_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name for n in ast.walk(node))


def pytest_asserts(test_code: str, entry_point: str) -> list[str]:
    """`assert CALL == EXPECTED` statements of the `test_*` functions, locals inlined (see module doc)."""
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    allowed = SAFE_BUILTINS | {entry_point}
    tests: list[str] = []
    for fn in tree.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test") and not fn.args.args):
            continue
        env: dict[str, ast.expr] = {}
        for stmt in fn.body:
            # a name passed to the entry point (or used by any other statement) may be mutated there:
            # forget it afterwards rather than inline a stale value
            touched = _free_names(stmt) - {entry_point}
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                value = _Inline(env).visit(copy.deepcopy(stmt.value))
                if _calls(value, entry_point):
                    for used in touched:
                        env.pop(used, None)
                if _free_names(value) <= allowed:
                    env[name] = value
                else:
                    env.pop(name, None)
                continue
            if not isinstance(stmt, ast.Assert):
                for used in touched:
                    env.pop(used, None)
                continue
            test = _Inline(env).visit(copy.deepcopy(stmt.test))
            for used in touched:
                env.pop(used, None)
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
                continue
            call, expected = test.left, test.comparators[0]
            if (
                not _calls(call, entry_point)
                or not _free_names(call) <= allowed
                or not _free_names(expected) <= SAFE_BUILTINS
            ):
                continue
            try:
                statement = f"assert {ast.unparse(call)} == {ast.unparse(expected)}"
            except (ValueError, RecursionError):
                continue
            if split_assert(statement) is not None and statement not in tests:
                tests.append(statement)
    return tests


def _entry_point(row: dict[str, Any]) -> str | None:
    info = row.get("test_info")
    if isinstance(info, list) and info and isinstance(info[0], dict) and info[0].get("function_name"):
        return str(info[0]["function_name"])
    try:
        tree = ast.parse(row.get("test") or "")
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "solution" and node.names[0].name != "*":
            return node.names[0].name
    return None


def row_to_problem(row: dict[str, Any], where: str) -> Problem | None:
    """One KodCode row as a Problem; None when its solution has no module-level entry point function."""
    for name in ("question_id", "question", "solution", "test"):
        if not isinstance(row.get(name), str) or not row[name].strip():
            raise UserError(f"{where}: field '{name}' is missing or not a non-empty string")
    entry_point = _entry_point(row)
    if entry_point is None:
        raise UserError(
            f"{where} ({row['question_id']}): field 'test_info' names no function and the test "
            "has no `from solution import NAME`"
        )
    if parse_error(row["solution"]) is None and not defines(row["solution"], entry_point):
        return None
    info = row.get("test_info") or [{}]
    declaration = (info[0] or {}).get("function_declaration") or f"def {entry_point}(...):"
    difficulty = row.get("gpt_difficulty") or row.get("difficulty") or ""
    meta = {"test_format": "pytest", "subset": row.get("subset") or "", "style": row.get("style") or ""}
    if row.get("gpt_pass_percentage") is not None:
        meta["gpt_pass_percentage"] = row["gpt_pass_percentage"]
    return Problem(
        id=f"kodcode/{row['question_id']}",
        prompt=PROMPT.format(question=row["question"].strip(), declaration=declaration.strip()),
        description=row["question"].strip(),
        entry_point=entry_point,
        gt_solution=row["solution"],
        golden_tests=pytest_asserts(row["test"], entry_point),
        source="kodcode",
        test_code=row["test"],
        difficulty=str(difficulty),
        split="train",
        meta=meta,
    )


def _open_dataset(dataset_or_path: str | Path | list | Dataset | DatasetDict, split: str) -> Iterable[dict[str, Any]]:
    """A datasets.Dataset / DatasetDict / list of dicts as is; a local file/dir or hub id through `datasets`."""
    if isinstance(dataset_or_path, list):
        return dataset_or_path
    if not isinstance(dataset_or_path, (str, Path)):
        if hasattr(dataset_or_path, "keys") and split in dataset_or_path:  # DatasetDict
            return dataset_or_path[split]
        return dataset_or_path
    import datasets

    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # "Generating train split" and the like: codea1's commands show their own
    try:
        return _read_dataset(datasets, str(dataset_or_path), split)
    finally:
        if shown:
            datasets.enable_progress_bars()


def _read_dataset(datasets: ModuleType, spec: str, split: str) -> Iterable[dict[str, Any]]:
    """A local file/dir or hub id through `datasets`; a UserError where it cannot be read."""
    path = Path(spec)
    try:
        if path.is_dir():
            try:
                loaded = datasets.load_from_disk(spec)
            except FileNotFoundError:
                loaded = datasets.load_dataset(spec, split=split)
            return loaded[split] if hasattr(loaded, "keys") and split in loaded else loaded
        if path.is_file():
            kind = {".parquet": "parquet", ".jsonl": "json", ".json": "json"}.get(path.suffix)
            if kind is None:
                raise UserError(f"{path}: KodCode file must be .parquet, .jsonl or .json")
            return datasets.load_dataset(kind, data_files=spec, split="train")
        return datasets.load_dataset(spec, split=split)
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - hub/offline/format errors all mean: cannot read this dataset
        raise UserError(
            f"{spec}: cannot load the KodCode dataset ({type(exc).__name__}: {str(exc)[:200]}); "
            "pass a local path or check the network / HF_HUB_OFFLINE"
        ) from None


def load_kodcode(
    dataset_or_path: str | Path | list | Dataset | DatasetDict = HUB_ID,
    difficulty: str | Iterable[str] | None = None,
    *,
    split: str = "train",
    limit: int | None = None,
) -> list[Problem]:
    """KodCode-V1 rows as Problems, optionally only those with the given gpt_difficulty value(s)."""
    wanted = None
    if difficulty is not None:
        wanted = {difficulty} if isinstance(difficulty, str) else set(difficulty)
    rows = _open_dataset(dataset_or_path, split)
    problems: list[Problem] = []
    skipped = 0
    for index, row in enumerate(rows):
        if wanted is not None and (row.get("gpt_difficulty") or row.get("difficulty")) not in wanted:
            continue
        problem = row_to_problem(
            dict(row), f"{dataset_or_path if isinstance(dataset_or_path, str) else 'kodcode'} row {index}"
        )
        if problem is None:
            skipped += 1
            continue
        problems.append(problem)
        if limit is not None and len(problems) >= limit:
            break
    if skipped:
        warnings.warn(
            f"KodCode: skipped {skipped} row(s) whose solution has no module-level entry point "
            "function (e.g. class-based tasks)",
            RuntimeWarning,
            stacklevel=2,
        )
    return problems
