"""Static (parse-only) facts about a problem's code, used by the loaders and by `check_problems`.

Nothing here runs the code: it parses it with `ast` to tell whether a GT program is syntactically valid and
whether it defines the entry point at module level, so a loader can decide how to assemble a runnable GT
(e.g. join a body-only GT with its signature) by checking instead of guessing.
"""

from __future__ import annotations

import ast
import warnings


def _parse(code: str) -> ast.Module:
    """ast.parse without warnings (invalid escapes in the data's strings would otherwise be reported, or
    become SyntaxErrors under `-W error`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(code)


def parse_error(code: str) -> str | None:
    """None if `code` parses as a Python module, else a short 'SyntaxError: message (line N)'."""
    try:
        _parse(code)
    except SyntaxError as exc:
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def top_level_names(code: str) -> set[str] | None:
    """Names bound at module level by def/class/assignment/import, or None if the code does not parse."""
    try:
        tree = _parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def defines(code: str, name: str) -> bool:
    """True if `code` parses and binds `name` at module level."""
    names = top_level_names(code)
    return names is not None and name in names


def gt_problem(code: str, entry_point: str) -> str | None:
    """Why a GT program cannot be run as is (does not parse / lacks the entry point), or None if it can."""
    error = parse_error(code)
    if error is not None:
        return f"gt_solution does not parse ({error})"
    if not defines(code, entry_point):
        return f"gt_solution does not define the entry point '{entry_point}' at module level"
    return None


def with_imports(code: str, imports: str) -> str:
    """`code` with those lines of `imports` that it does not already contain put in front."""
    present = {line.strip() for line in code.splitlines()}
    missing = [line.strip() for line in imports.splitlines() if line.strip() and line.strip() not in present]
    if not missing:
        return code
    return "\n".join(missing) + "\n\n" + code.lstrip("\n")
