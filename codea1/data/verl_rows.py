"""Code problems in the row format of verl's RL datasets (PRIME / Eurus style), from .jsonl or .parquet.

    problems = load_verl_rows("train.parquet")

A row: `prompt` (a list of chat messages {"role", "content"}, or a string), `data_source`, `reward_model`
{"ground_truth": a JSON string or an object with "inputs", "outputs" and optionally "fn_name"}, and
`extra_info` (its "index", where present, names the row; its "split", where a string, is the problem's
split). Ids are "DATA_SOURCE/INDEX" (the row number, from 0, without an index); `source` is the data_source.

verl scores these rows with verl/utils/reward_score/prime_code (compute_score, then run_test in its
testing_util.py, the APPS checker):
- without "fn_name", a stdin/stdout program: each input (a string, or a list of lines joined by "\\n")
  is fed to the program and its output compared with the expected one (a string, or lines joined). The
  comparison there is APPS' cascade: the stripped texts equal (lines stripped or not); else the lines,
  blank ones dropped, equal the expected's stripped non-blank lines; else, for one number a line, numpy's
  allclose on the floats. codea1 has no rule of that name, so these problems get checker "" (the default
  rule, LiveCodeBench's, codea1.judge.kinds.outputs): it differs where the cascade is looser (blank lines
  inside the output, floats with relative tolerance) or stricter (several numbers on a line, "1.0" against
  "1" within a line of several tokens).
- with "fn_name", a function call: each input is the arguments, one JSON value per line in a string (as
  prime_code and verl's sandbox_fusion read them) or a list of the argument values (APPS' raw form); the
  output is one JSON value in a string (prime_code decodes it) or the value itself. prime_code passes a
  result equal to the expected value, or, when that is a non-empty list, equal to its first item (APPS
  stores a return value wrapped in a list); so each test becomes `assert NAME(ARGS) == EXPECTED`, or
  `assert NAME(ARGS) in (EXPECTED, EXPECTED[0])` for a non-empty list. prime_code takes the method of a
  `Solution` class when the candidate's code defines one, else the bare function; here meta "method_of" is
  "Solution" with "method_optional" (codea1.problem.method_entry), whatever the prompt shows. Not reproduced: its tuple-to-list turn of the result (a tuple
  never equals a list here) and its int conversion of dict keys.
The rows ship no reference solution: gt_solution is "" (they evaluate code; they cannot train on GT).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

from codea1.errors import UserError
from codea1.problem import Problem, jsonl_rows, require_unique_ids

DEFAULT_SOURCE = "verl"


def prompt_text(prompt: object, where: str) -> str:
    """The text of a row's prompt: a string, or its chat messages' contents joined by blank lines."""
    if isinstance(prompt, str):
        text = prompt
    elif isinstance(prompt, list) and all(isinstance(m, dict) and isinstance(m.get("content"), str) for m in prompt):
        text = "\n\n".join(m["content"] for m in prompt)
    else:
        raise UserError(f"{where}: field 'prompt' must be a string or a list of chat messages with 'content'")
    if not text.strip():
        raise UserError(f"{where}: field 'prompt' is empty")
    return text


def ground_truth(row: dict, where: str) -> dict:
    """The row's reward_model ground truth, decoded: {"inputs": [...], "outputs": [...], "fn_name"?}."""
    model = row.get("reward_model")
    if isinstance(model, str):
        model = _json(model, where, "reward_model")
    truth = model.get("ground_truth") if isinstance(model, dict) else None
    if isinstance(truth, str):
        truth = _json(truth, where, "reward_model.ground_truth")
    if not isinstance(truth, dict):
        raise UserError(f"{where}: reward_model.ground_truth must be an object (or its JSON text)")
    inputs, outputs = truth.get("inputs"), truth.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs) or not inputs:
        raise UserError(f"{where}: ground_truth needs 'inputs' and 'outputs', two non-empty lists of one length")
    return truth


def _json(text: str, where: str, field: str) -> object:
    """JSON text decoded; a UserError naming the row and field when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: field '{field}' is not valid JSON") from None


def _lines(value: object, where: str, what: str) -> str:
    """A stdio input or output: a string, a list of lines (joined by "\\n", as prime_code joins them), or
    None for an empty input (as verl's sandbox_fusion reads it)."""
    if value is None and what == "input":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise UserError(f"{where}: a test {what} must be a string or a list of strings")


def json_literal(value: object, where: str) -> str:
    """A plain JSON value (as json.loads gives it) written as a Python literal (JSON true/false/null are
    True/False/None); anything else, NaN and infinities included, is a UserError naming `where`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise UserError(f"{where}: a test value is NaN or infinite, which has no Python literal")
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                raise UserError(f"{where}: a test value has a dict key that is not a string")
            stack.extend(item.values())
        elif item is not None and not isinstance(item, (str, int, float, bool)):
            raise UserError(f"{where}: a test value of type {type(item).__name__} is not a JSON value")
    try:
        return repr(value)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: a test value is too large or too deeply nested to write") from None


def call_assert(name: str, arguments: object, output: object, where: str) -> str:
    """The golden assert of one function test (see the module doc for the two forms of each side)."""
    if isinstance(arguments, str):
        args = [_json(line, where, "inputs") for line in arguments.split("\n")]
    elif isinstance(arguments, list):
        args = arguments
    else:
        raise UserError(f"{where}: a function test's input must be JSON lines (a string) or a list of arguments")
    if isinstance(arguments, str) and not isinstance(output, str):
        raise UserError(f"{where}: a function test's output must be JSON text when its input is")
    expected = _json(output, where, "outputs") if isinstance(arguments, str) else output
    call = f"{name}({', '.join(json_literal(a, where) for a in args)})"
    if isinstance(expected, list) and expected:
        return f"assert {call} in ({json_literal(expected, where)}, {json_literal(expected[0], where)})"
    return f"assert {call} == {json_literal(expected, where)}"


def problem_from_verl_row(row: object, number: int, where: str) -> Problem:
    """One verl row as a Problem (see the module doc); `number` is its row number, for an id without index."""
    if not isinstance(row, dict):
        raise UserError(f"{where}: expected an object, got {type(row).__name__}")
    text = prompt_text(row.get("prompt"), where)
    source = row.get("data_source") or DEFAULT_SOURCE
    if not isinstance(source, str):
        raise UserError(f"{where}: field 'data_source' must be a string")
    extra = row.get("extra_info") if isinstance(row.get("extra_info"), dict) else {}
    index = extra.get("index")
    index = index if isinstance(index, (str, int)) and not isinstance(index, bool) else number
    split = extra.get("split") if isinstance(extra.get("split"), str) else ""
    truth = ground_truth(row, where)
    pairs = list(zip(truth["inputs"], truth["outputs"], strict=True))
    meta: dict[str, object] = {"data_source": source}
    name = truth.get("fn_name")
    if not name:
        tests = [
            {"input": _lines(i, f"{where}: test {n}", "input"), "output": _lines(o, f"{where}: test {n}", "output")}
            for n, (i, o) in enumerate(pairs)
        ]
        return Problem(
            id=f"{source}/{index}",
            prompt=text,
            description=text,
            source=source,
            kind="stdio",
            io_tests=tests,
            split=split,
            meta=meta,
        )
    if not isinstance(name, str) or not name.isidentifier():
        raise UserError(f"{where}: fn_name {name!r} is not a Python name")
    meta.update(method_of="Solution", method_optional=True)  # a `class Solution` answer or a bare function
    return Problem(
        id=f"{source}/{index}",
        prompt=text,
        description=f"{text}\n\nFunction under test: `{name}`",
        entry_point=name,
        golden_tests=[call_assert(name, i, o, f"{where}: test {n}") for n, (i, o) in enumerate(pairs)],
        source=source,
        split=split,
        meta=meta,
    )


def _rows(path: Path) -> list[tuple[str, object]]:
    """(where, row) of every row of the file: where names the file and the JSONL line or parquet row."""
    name = path.name
    if name.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq  # noqa: PLC0415  (pyarrow is imported only when a parquet file is read)
        except ImportError:
            raise UserError(f"{path}: reading parquet needs pyarrow; install it (pip install pyarrow)") from None
        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as exc:  # noqa: BLE001  (any pyarrow failure: the file is not readable parquet)
            raise UserError(f"{path}: not a readable parquet file ({type(exc).__name__})") from None
        return [(f"{path}: row {n}", row) for n, row in enumerate(rows)]
    if name.endswith((".jsonl", ".jsonl.gz")):
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:
            return [(f"{path}:{lineno}", row) for lineno, row in jsonl_rows(handle, path)]
    raise UserError(f"{path}: a verl rows file is .parquet, .jsonl or .jsonl.gz")


def load_verl_rows(path: str | Path) -> list[Problem]:
    """Problems of a verl-style code dataset file (.parquet, .jsonl or .jsonl.gz); see the module doc."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such verl rows file")
    problems = [problem_from_verl_row(row, n, where) for n, (where, row) in enumerate(_rows(path))]
    require_unique_ids(problems, str(path))
    return problems
