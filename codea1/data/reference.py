"""Loader for the Code-A1 reference schema (a parquet file of HumanEval+ / MBPP+ style rows).

Columns: prompt (chat messages), description, GT_code, problem (signature + docstring), test (an EvalPlus
`check(candidate)` program), data_source, extra_info{function_name, imports, function_declaration,
question_id}.

How a row becomes a Problem:
- gt_solution: GT_code when it defines the entry point at module level (MBPP+ rows); otherwise `problem`
  followed by GT_code (HumanEval+ rows, whose GT_code is the body only), kept only if that joined program
  parses and defines the entry point. When neither works the row keeps GT_code as it is and
  meta["gt_error"] says why; `check_problems` reports such rows. The row's `imports` are put in front of
  the program when missing.
- entry_point: the function the check() loop actually calls. In a few MBPP+ rows extra_info.function_name
  names a helper while check() calls another function of the GT; meta["function_name_field"] keeps the
  field's value when it differs.
- golden_tests: `assert f(ARGS) == EXPECTED` built from the first `GOLDEN_LIMIT` (8) pairs of check()'s
  `inputs` / `results` lists whose values are plain literals and whose assert stays under
  `GOLDEN_MAX_CHARS` characters; only for the common loop `assertion(f(*inp), exp, atol)`. Rows whose
  check() compares against a `ref_func` (whose loop still names the entry point) or a custom predicate get
  no golden tests. The whole program stays
  in test_code (meta["test_format"] = "evalplus"). The asserts compare exactly; the program itself
  accepts floats within a tolerance (1e-6, or the loop's atol, kept in meta["atol"]), which a consumer
  can pass on as the sandbox's float_tol. When the
  program's assertion() compares sets, the asserts compare `set(f(ARGS)) == set(EXPECTED)`; when it
  compares something else (e.g. `exp == (out is not None)` in MBPP/737, 787, 794) no golden tests are made
  (meta["comparison"] says which).
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from codea1.data.static import defines, gt_problem, with_imports
from codea1.errors import UserError
from codea1.judge.asserts import split_assert
from codea1.problem import Problem

GOLDEN_LIMIT = 8
# A row's user message is an instruction, this marker, then the row's `problem` text.
QUESTION_MARKER = "\n\nQuestion:\n"
GOLDEN_MAX_CHARS = 1000
REQUIRED_COLUMNS = ("prompt", "description", "GT_code", "problem", "test", "data_source", "extra_info")


_TOKEN = re.compile(r"""'''|\"\"\"|['"\[\](){},]""")
_STRING_END = {
    "'": re.compile(r"(?:[^'\\\n]|\\.)*'"),
    '"': re.compile(r'(?:[^"\\\n]|\\.)*"'),
    "'''": re.compile(r"(?:[^'\\]|\\.|'(?!''))*'''", re.DOTALL),
    '"""': re.compile(r'(?:[^"\\]|\\.|"(?!""))*"""', re.DOTALL),
}


def _first_elements(text: str, limit: int) -> list[str]:
    """Source texts of the first `limit` top-level elements of the list literal that starts `text`.

    Scans brackets, commas and string literals with regular expressions and stops early, so a
    multi-megabyte literal costs only what its first elements cost (parsing the shared file's EvalPlus
    programs with `ast` takes tens of seconds). Elements are validated later with ast.literal_eval.
    """
    if not text.startswith("["):
        return []
    elements: list[str] = []
    depth, pos, last_sep = 1, 1, 0
    while len(elements) < limit:
        match = _TOKEN.search(text, pos)
        if match is None:
            break
        tok, pos = match.group(), match.end()
        if tok in _STRING_END:
            end = _STRING_END[tok].match(text, pos)
            if end is None:
                break
            pos = end.end()
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth -= 1
            if depth == 0:
                tail = text[last_sep + 1 : match.start()].strip()
                if tail:
                    elements.append(tail)
                break
        elif depth == 1:  # a comma between elements
            elements.append(text[last_sep + 1 : match.start()].strip())
            last_sep = match.start()
    return elements


def _is_literal(source: str) -> bool:
    try:
        with warnings.catch_warnings():  # e.g. invalid escape sequences inside the data's string literals
            warnings.simplefilter("ignore")
            ast.literal_eval(source.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _quiet_split(statement: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return split_assert(statement) is not None


def _assertion_loop(body: list[ast.stmt]) -> tuple[str, Any, bool] | None:
    """(called function name, atol, compares with `results`) of a loop whose body is
    `assertion(NAME(*inp), exp, ATOL)` or `assertion(NAME(*inp), ref_func(*inp), ATOL)`."""
    for node in body:
        if not isinstance(node, ast.For) or len(node.body) != 1 or not isinstance(node.body[0], ast.Expr):
            continue
        call = node.body[0].value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "assertion"
            and len(call.args) == 3
        ):
            continue
        inner, expected, atol = call.args
        by_ref = isinstance(expected, ast.Call) and isinstance(expected.func, ast.Name)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and len(inner.args) == 1
            and isinstance(inner.args[0], ast.Starred)
            and (isinstance(expected, ast.Name) or by_ref)
            and isinstance(atol, ast.Constant)
        ):
            return inner.func.id, atol.value, not by_ref
    return None


_ASSERTION_DEF = re.compile(r"^def assertion\(out, exp, atol\):\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.MULTILINE)


def _assertion_kind(test_code: str) -> str:
    """How the program's assertion(out, exp, atol) compares: "equal" (==, floats within a tolerance),
    "set" (compares set(out) with set(exp)), or "other" (e.g. `exp == (out is not None)`)."""
    match = _ASSERTION_DEF.search(test_code)
    if match is None:
        return "other"
    body = match.group(1)
    if "out = set(out)" in body and "exp = set(exp)" in body:
        return "set"
    if "out is not None" in body or "exact_match = out == exp" not in body and "out != exp" not in body:
        return "other"
    return "equal"


_CHECK_DEF = re.compile(r"^def check\((\w*)\)\s*:", re.MULTILINE)


def check_program_facts(test_code: str, entry_point: str) -> dict[str, Any]:
    """What an EvalPlus check() program says: the function it calls, its tolerance, golden asserts.

    Returns {"called": name or None, "atol": value or None, "comparison": "equal" | "set" | "other",
    "golden_tests": [...]}; no golden tests for an "other" comparison. Reads the program's
    text around check() (its loop is parsed with `ast`, its big literals are scanned only as far as needed).
    """
    facts: dict[str, Any] = {"called": None, "atol": None, "comparison": None, "golden_tests": []}
    match = _CHECK_DEF.search(test_code)
    if match is None:
        return facts
    param = match.group(1)
    body_start = match.end()
    body_end = len(test_code)
    next_top = re.compile(r"^\S", re.MULTILINE).search(test_code, test_code.find("\n", body_start) + 1)
    if next_top is not None:
        body_end = next_top.start()
    positions = {}
    for name in ("inputs", "results"):
        found = re.compile(rf"^[ \t]+{name} = \[", re.MULTILINE).search(test_code, body_start, body_end)
        if found is not None:
            positions[name] = found.end() - 1
    if "inputs" not in positions:
        return facts
    last_list = max(positions.values())
    loop_at = re.compile(r"^[ \t]+for ", re.MULTILINE).search(test_code, last_list, body_end)
    if loop_at is None:
        return facts
    try:
        loop_tree = ast.parse(textwrap.dedent(test_code[loop_at.start() : body_end]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return facts
    loop = _assertion_loop(loop_tree.body)
    if loop is None:
        return facts
    called, atol, with_results = loop
    if called == param:  # check(candidate) calls its argument: the entry point itself
        called = entry_point
    facts.update(called=called, atol=atol)
    comparison = _assertion_kind(test_code)
    facts["comparison"] = comparison
    if comparison == "other" or not with_results or "results" not in positions:
        return facts  # golden asserts need the expected values written out
    scan = 4 * GOLDEN_LIMIT  # elements read, to find GOLDEN_LIMIT usable pairs
    inputs = _first_elements(test_code[positions["inputs"] : body_end], scan)
    results = _first_elements(test_code[positions["results"] : body_end], scan)
    facts["golden_tests"] = _golden_asserts(called, comparison, inputs, results)
    return facts


def _golden_asserts(called: str, comparison: str, inputs: list[str], results: list[str]) -> list[str]:
    """Up to GOLDEN_LIMIT asserts `called(inputs[i]) == results[i]` (sets compared as sets), from the pairs
    whose both sides are literals and whose assert is short and splits quietly."""
    tests: list[str] = []
    for args_src, expected in zip(inputs, results, strict=False):
        if len(tests) >= GOLDEN_LIMIT:
            break
        if not (args_src.strip()[:1] in ("[", "(") and _is_literal(args_src) and _is_literal(expected)):
            continue
        args = args_src.strip()[1:-1].strip()
        call = f"{called}({args.removesuffix(',')})"
        if comparison == "set":
            stmt = f"assert set({call}) == set({expected.strip()})"
        else:
            stmt = f"assert {call} == {expected.strip()}"
        if len(stmt) <= GOLDEN_MAX_CHARS and _quiet_split(stmt):
            tests.append(stmt)
    return tests


def assemble_gt(gt_code: str, problem_text: str, imports: str, entry_point: str) -> tuple[str, str, str | None]:
    """(runnable GT program, how, error): how is "complete", "joined" (problem + body) or "unrunnable"."""
    if defines(gt_code, entry_point):
        return with_imports(gt_code, imports), "complete", None
    joined = problem_text.rstrip("\n") + "\n" + gt_code
    if defines(joined, entry_point):
        return with_imports(joined, imports), "joined", None
    alone = gt_problem(gt_code, entry_point)
    together = gt_problem(joined, entry_point)
    return gt_code, "unrunnable", f"GT_code alone: {alone}; problem + GT_code: {together}"


def evalplus_prompt(task_id: str, problem_text: str) -> str:
    """EvalPlus's own prompt for a row's `problem` text: the text itself for HumanEval+ (signature and
    docstring); for MBPP+ only its docstring, as EvalPlus's MBPP+ prompt is `\"\"\"<task, example
    assert>\"\"\"` + newline (the row puts imports and a signature above it, with the docstring unindented)."""
    if task_id.lower().startswith("mbpp/") and '"""' in problem_text:
        return problem_text[problem_text.index('"""') :].rstrip("\n") + "\n"
    return problem_text


def completion_prefix(task_id: str, prompt: str) -> str:
    """The code an EvalPlus-format `completion` continues, given a problem's prompt text.

    EvalPlus runs prompt + completion with its own prompt. A reference-schema prompt (an instruction, then
    QUESTION_MARKER, then the row's `problem`; the instruction is not code, the question defines a
    function) gives EvalPlus's prompt for that question (see evalplus_prompt); any other prompt is
    returned as it is (HumanEval's, an EvalPlus release file's).
    """
    head, marker, question = prompt.partition(QUESTION_MARKER)
    code_start = ("def ", "import ", "from ", "class ", "@")
    if (
        not marker
        or any(line.startswith(code_start) for line in head.splitlines())
        or not any(line.startswith("def ") for line in question.splitlines())
    ):
        return prompt
    return evalplus_prompt(task_id, question)


def _user_message(prompt: object) -> str | None:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Iterable):
        users = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "user"]
        if users and isinstance(users[-1], str):
            return users[-1]
    return None


def row_to_problem(row: dict[str, Any], where: str) -> Problem:
    """One reference-schema row as a Problem; a missing or mistyped field is a UserError naming it."""
    for name in REQUIRED_COLUMNS:
        if row.get(name) is None:
            raise UserError(f"{where}: field '{name}' is missing")
    extra = row["extra_info"]
    if not isinstance(extra, dict):
        raise UserError(f"{where}: field 'extra_info' must be a struct with function_name and question_id")
    for name in ("function_name", "question_id"):
        if not isinstance(extra.get(name), str) or not extra[name].strip():
            raise UserError(f"{where}: field 'extra_info.{name}' is missing or empty")
    qid = extra["question_id"]
    where = f"{where} ({qid})"
    for name in ("description", "GT_code", "problem", "test"):
        if not isinstance(row[name], str) or not row[name].strip():
            raise UserError(f"{where}: field '{name}' is missing or not a non-empty string")
    prompt = _user_message(row["prompt"])
    if not prompt:
        raise UserError(f"{where}: field 'prompt' has no user message")
    function_name = extra["function_name"]
    facts = check_program_facts(row["test"], function_name)
    entry_point = facts["called"] or function_name
    imports = extra.get("imports") or ""
    gt, how, gt_error = assemble_gt(row["GT_code"], row["problem"], imports, entry_point)
    meta: dict[str, Any] = {
        "test_format": "evalplus",
        "gt_assembly": how,
        "atol": facts["atol"],
        "comparison": facts["comparison"],
        "function_declaration": extra.get("function_declaration") or "",
        "prompt_messages": [dict(m) for m in row["prompt"]] if not isinstance(row["prompt"], str) else [],
    }
    if entry_point != function_name:
        meta["function_name_field"] = function_name
    if gt_error:
        meta["gt_error"] = gt_error
    return Problem(
        id=qid,
        prompt=prompt,
        description=row["description"].strip(),
        entry_point=entry_point,
        gt_solution=gt,
        golden_tests=facts["golden_tests"],
        imports=imports,
        source=str(row["data_source"]),
        test_code=row["test"],
        split="eval",
        meta=meta,
    )


def load_reference_parquet(path: str | Path, sources: Iterable[str] | None = None) -> list[Problem]:
    """Problems from a reference-schema parquet file, optionally only those whose data_source is in sources."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such parquet file")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - any pyarrow failure means the file is not readable parquet
        raise UserError(f"{path}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        raise UserError(
            f"{path}: column(s) {', '.join(missing)} missing; expected the reference schema "
            f"({', '.join(REQUIRED_COLUMNS)})"
        )
    wanted = set(sources) if sources is not None else None
    problems = []
    for index, row in enumerate(table.to_pylist()):
        if wanted is not None and row.get("data_source") not in wanted:
            continue
        problems.append(row_to_problem(row, f"{path} row {index}"))
    return problems
