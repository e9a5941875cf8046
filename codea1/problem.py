"""The one record every stage of codea1 passes around: a programming problem with its ground truth."""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from codea1.errors import UserError

KINDS = ("call", "stdio")  # what a problem's tests do: call a function, or feed a program stdin


@dataclass
class Problem:
    """A programming problem: a function called by its tests (kind "call"), or a whole program fed each
    test's input on stdin and judged by what it prints (kind "stdio").

    id: unique id within its source ("bundled/0003", "HumanEval/0", "MBPP/82", "kodcode/...").
    prompt: the text shown to the Code LLM (question plus signature), without any chat wrapping.
    description: the clean description shown to the Test LLM (no reference solution, no hidden tests).
    entry_point: the function under test ("" for a stdio program).
    gt_solution: the ground-truth program, complete and runnable on its own (imports included); a problem
        with golden tests (golden_tests, io_tests) may come without one (LiveCodeBench ships none): it can be
        evaluated, not trained on.
    golden_tests: human-written tests, each one `assert CALL == EXPECTED` statement (may be empty).
    imports: import lines a test or solution may need (also prepended to candidates).
    source: where it came from ("bundled", "humanevalplus", "mbppplus", "kodcode", "humaneval", ...).
    test_code: an optional whole test program of the source (e.g. EvalPlus `check(candidate)` code),
        for evaluations that must run the benchmark's own checker.
    difficulty / split: free-form labels ("easy"/"medium"/"hard"; "train"/"eval").
    meta: anything else worth keeping from the source row; meta "method_of" (a class name, LeetCode's
        "Solution") makes the function under test that class's method: the candidate program ends with
        `ENTRY = CLASS().ENTRY`; with meta "method_optional" true (verl's rows, as its prime_code scores
        them) only where the candidate defines that class, a plain function ENTRY passing as well.
    kind: "call" (the default) or "stdio".
    language: the language solutions are written in ("python", "cpp"; codea1.lang has each one's rules);
        GT is in this language too.
    io_tests: a stdio problem's tests, each {"input": STDIN, "output": EXPECTED STDOUT} (all of them: the
        public examples and the hidden ones; meta "public_tests" says how many come first and are shown).
    checker: how a stdio output is compared with the expected one (codea1.judge.kinds.stdio.RULES; "" is
        the source's own rule, LiveCodeBench's where the source has none).
    checker_program: a stdio problem's special judge, where its outputs are not unique (any valid answer is
        right): a Python 3 program that reads one JSON object {"input", "expected", "output"} on stdin (the
        test's input, the reference output, the candidate's output) and exits with status 0 when the output
        is right for that input (any other ending: it is not; its first line of output says why). Where
        given, it decides instead of `checker`'s rule.
    validator: a stdio problem's input validator, where its source has one: a Python 3 program that reads
        one test input on stdin and exits with status 0 when the input keeps the problem's constraints (any
        other ending: it does not); the game counts an input it rejects as an invalid test, as one GT fails on.
    """

    id: str
    prompt: str
    description: str
    entry_point: str = ""
    gt_solution: str = ""
    golden_tests: list[str] = field(default_factory=list)
    imports: str = ""
    source: str = ""
    test_code: str = ""
    difficulty: str = ""
    split: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    kind: str = "call"
    language: str = "python"
    io_tests: list[dict[str, str]] = field(default_factory=list)
    checker: str = ""
    checker_program: str = ""
    validator: str = ""

    REQUIRED = ("id", "prompt", "description", "entry_point", "gt_solution")
    REQUIRED_STDIO = ("id", "prompt", "description")

    @property
    def is_stdio(self) -> bool:
        return self.kind == "stdio"

    def to_dict(self) -> dict[str, Any]:
        """The record as a plain dict; the task fields (kind, language, io_tests, checker, checker_program,
        validator) only where they differ from a Python function's, so a function problem's record reads as it
        did before they came."""
        row = asdict(self)
        for name, default in _TASK_DEFAULTS.items():
            if row[name] == default:
                del row[name]
        return row

    @classmethod
    def from_dict(cls, row: dict[str, Any], where: str = "row") -> Problem:
        """Builds a Problem from a plain dict; a missing or mistyped field is a UserError naming it."""
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a JSON object, got {type(row).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(row) - known)
        if unknown:
            raise UserError(f"{where}: unknown field(s) {', '.join(unknown)}")
        kind = row.get("kind", "call")
        if kind not in KINDS:
            raise UserError(f"{where}: field 'kind' is {kind!r}; use one of: {', '.join(KINDS)}")
        required = cls.REQUIRED_STDIO if kind == "stdio" else cls.REQUIRED
        if kind == "call" and row.get("golden_tests") and not row.get("gt_solution"):
            required = tuple(n for n in required if n != "gt_solution")  # judged by its asserts alone
        for name in required:
            value = row.get(name)
            if not isinstance(value, str) or not value.strip():
                raise UserError(f"{where}: field '{name}' is missing or not a non-empty string")
        for name in ("language", "checker", "checker_program", "entry_point", "gt_solution", "validator"):
            if not isinstance(row.get(name, ""), str):
                raise UserError(f"{where}: field '{name}' must be a string")
        for name in ("validator", "checker_program"):
            if row.get(name) and kind != "stdio":
                raise UserError(f"{where}: field '{name}' is for kind 'stdio' problems only")
        tests = row.get("golden_tests", []) or []
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            raise UserError(f"{where}: field 'golden_tests' must be a list of strings")
        _check_io_tests(row.get("io_tests", []) or [], kind, row.get("gt_solution", ""), where)
        return cls(**{k: v for k, v in row.items() if k in known})


_TASK_DEFAULTS: dict[str, Any] = {
    "kind": "call",
    "language": "python",
    "io_tests": [],
    "checker": "",
    "checker_program": "",
    "validator": "",
}


def _check_io_tests(tests: object, kind: str, gt: object, where: str) -> None:
    """A UserError unless `tests` is a list of {"input": str, "output": str} (only a stdio problem has any),
    and unless a stdio problem has GT or tests to be judged by."""
    shape = isinstance(tests, list) and all(
        isinstance(t, dict) and set(t) == {"input", "output"} and all(isinstance(v, str) for v in t.values())
        for t in tests
    )
    if not shape:
        raise UserError(f'{where}: field \'io_tests\' must be a list of {{"input": str, "output": str}} objects')
    if tests and kind != "stdio":
        raise UserError(f"{where}: field 'io_tests' is for kind 'stdio' problems only")
    if kind == "stdio" and not tests and not (isinstance(gt, str) and gt.strip()):
        raise UserError(f"{where}: a stdio problem needs io_tests or a gt_solution to be judged by")


def jsonl_lines(text: str) -> list[str]:
    """The lines of JSONL text, split on "\\n" only: a JSON string may hold U+2028 or other characters that
    `str.splitlines()` would also split on, which would shift every later record by a line."""
    return text.split("\n")


def jsonl_rows(lines: Iterable[str] | str, path: str | Path) -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) of each non-blank line of a JSONL file read from `path` (its lines, a
    file handle, or its whole text); a line that is not JSON is a UserError naming file and line."""
    if isinstance(lines, str):
        lines = jsonl_lines(lines)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        yield lineno, row


def require_unique_ids(problems: Iterable[Problem], where: str) -> None:
    """A UserError when two problems share an id: the Mistake Book, the run's records and every evaluation
    key problems by id, so a repeated id would replay one problem's tests against another's code."""
    seen: dict[str, int] = {}
    for problem in problems:
        seen[problem.id] = seen.get(problem.id, 0) + 1
    repeated = [f"{pid!r} ({n} times)" for pid, n in seen.items() if n > 1]
    if repeated:
        shown = ", ".join(repeated[:5]) + (f" and {len(repeated) - 5} more" if len(repeated) > 5 else "")
        raise UserError(f"{where}: problem ids must be unique, but {shown} repeat")


def read_problems_jsonl(path: str | Path) -> list[Problem]:
    """Reads a JSONL file of Problem records; a malformed line is a UserError naming file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such problem file")
    with path.open(encoding="utf-8") as handle:
        return [Problem.from_dict(row, f"{path}:{lineno}") for lineno, row in jsonl_rows(handle, path)]


def write_problems_jsonl(problems: Iterable[Problem], path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for problem in problems:
            handle.write(json.dumps(problem.to_dict(), ensure_ascii=False) + "\n")


# the programs a problem's code runs as


def candidate_program(problem: Problem, code: str) -> str:
    """The program a candidate runs as: the problem's import lines and GT's top-level imports (the
    reference code hoists GT's imports above the candidate too), then the extracted code."""
    header = values_program(problem)
    program = f"{header}\n{code}" if header else code
    entry = method_entry(problem)
    return f"{program}\n\n{entry}" if entry else program


def method_entry(problem: Problem) -> str:
    """The line that makes the function under test a method of a class the solution defines (meta
    "method_of", LeetCode's `class Solution`): `ENTRY = CLASS().ENTRY`; "" for a plain function. With meta
    "method_optional" the line applies only where the solution defines the class (a plain function ENTRY
    is called as it is), as verl's prime_code takes a `class Solution` answer or a bare function."""
    owner, entry = problem.meta.get("method_of"), problem.entry_point
    if not (isinstance(owner, str) and owner.isidentifier() and entry.isidentifier()):
        return ""
    if problem.meta.get("method_optional") is True:
        return f"if isinstance(globals().get({owner!r}), type):\n    {entry} = {owner}().{entry}\n"
    return f"{entry} = {owner}().{entry}\n"


def gt_program(problem: Problem) -> str:
    """GT's program: the problem's import lines, then GT."""
    imports = problem.imports.strip()
    return f"{imports}\n{problem.gt_solution}" if imports else problem.gt_solution


@functools.lru_cache(maxsize=4096)
def gt_imports(gt_solution: str) -> str:
    """GT's top-level `import` / `from ... import` statements, one per line ("" when it does not parse)."""
    try:
        tree = ast.parse(gt_solution)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    return "\n".join(
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and node.module != "__future__"
    )


def values_program(problem: Problem) -> str:
    """Where argument expressions are evaluated, and the header of a candidate's program: the problem's
    and GT's imports, no GT, no candidate."""
    return "\n".join(dict.fromkeys(line for line in (problem.imports.strip(), gt_imports(problem.gt_solution)) if line))
