"""LiveCodeBench code generation problems from a local copy of its published JSONL ("code_generation_lite").

    problems = load_livecodebench("test6.jsonl", since="2025-01-01", until="2025-04-30")

A row (the fields `CodeGenerationProblem` reads in lcb_runner/benchmarks/code_generation.py): question_id,
question_title, question_content, platform ("leetcode" | "atcoder" | "codeforces"), contest_id,
contest_date (ISO date-time), starter_code, difficulty ("easy" | "medium" | "hard"), public_test_cases (a
JSON string of [{"input", "output", "testtype"}]), private_test_cases (the same list as a JSON string, or,
in recent releases, base64 of zlib of a pickle of that JSON string) and metadata (a JSON string; its
"func_name" makes the problem call-based).

As LiveCodeBench grades them (lcb_runner/evaluation/testing_util.py, run_test):
- with metadata "func_name", a LeetCode-style method of class `Solution`: each test's input is one JSON
  value per line (the arguments), its output one JSON value; the method's result must equal it (`==`,
  after a returned tuple is made a list). Here each test becomes the golden assert
  `assert NAME(ARGS) == EXPECTED` with the JSON values written as Python literals, and meta
  "method_of" = "Solution" (codea1.problem.candidate_program). One difference: `==` here never equals a
  tuple to a list, so a method returning a tuple where the test expects a list fails here and passes there.
- without it, a stdin/stdout program: kind "stdio" with every test in io_tests (the public ones first;
  meta "public_tests" counts them), compared by LiveCodeBench's rule (checker "lcb",
  codea1.judge.kinds.outputs).
Solutions run there after a header of imports (typing, collections, math, ... each as `from M import *`
and `import M`) and a recursion limit of 50000; `imports` holds the same lines here. LiveCodeBench ships
no reference solutions: gt_solution is "" (the problems evaluate code; they cannot train on GT).

The rows carry no mark for problems that accept any of several correct outputs (LiveCodeBench scores those
by its fixed rule too, and lists the known ones in its ERRATA.md), so none is refused here.

Private tests are decoded without trusting the file: base64, then zlib with the output capped at
MAX_DECOMPRESSED bytes, then a pickle read only after every opcode in it is checked to build plain values
(no globals, no calls, no extension codes), by an unpickler that refuses every global as well; the result
must be the JSON text or the list of tests itself, else the row is refused with a UserError.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import io
import json
import pickle
import pickletools
import zlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from codea1.data.verl_rows import json_literal
from codea1.errors import UserError
from codea1.problem import KINDS, Problem, jsonl_rows, require_unique_ids

SOURCE = "livecodebench"
PLATFORMS = ("leetcode", "atcoder", "codeforces")
TEST_TYPES = ("stdin", "functional")
MAX_DECOMPRESSED = 256 << 20  # bytes a row's private tests may inflate to
CHECKER = "lcb"

_HEADER_STAR = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
    "builtins",
    "typing",
)
RUNTIME_HEADER = "\n".join(
    [f"from {name} import *" for name in _HEADER_STAR]
    + [f"import {name}" for name in _HEADER_STAR if name not in ("builtins", "typing")]
    + ["sys.setrecursionlimit(50000)"]
)

STDIO_PROMPT = """{question}

Write a complete Python program for this problem. It reads the input from standard input and prints the \
answer to standard output; it is run on hidden inputs too, so do not hard-code the examples.

Return the program in one ```python code block."""

CALL_PROMPT = """{question}

Solve it by completing this starter code; keep the class, the method's name and its parameters:

```python
{starter}
```

Return the complete class, with any imports it needs, in one ```python code block."""

CALL_DESCRIPTION = """{question}

Function under test: `{name}`, a method of this class, called in tests without `self` as `{name}(...)`:

```python
{starter}
```"""

# pickle opcodes that build plain values only: no globals, calls, extension codes or out-of-band buffers
_SAFE_OPCODES = frozenset(
    {
        *("INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT"),
        *("NONE", "NEWTRUE", "NEWFALSE", "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"),
        *("STRING", "BINSTRING", "SHORT_BINSTRING", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8"),
        *("EMPTY_LIST", "APPEND", "APPENDS", "LIST", "EMPTY_TUPLE", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3"),
        *("EMPTY_DICT", "DICT", "SETITEM", "SETITEMS", "EMPTY_SET", "ADDITEMS", "FROZENSET"),
        *("POP", "DUP", "MARK", "POP_MARK", "GET", "BINGET", "LONG_BINGET", "PUT", "BINPUT", "LONG_BINPUT"),
        *("MEMOIZE", "PROTO", "STOP", "FRAME"),
    }
)


class _NoGlobalsUnpickler(pickle.Unpickler):
    """An unpickler that resolves no name at all, so no function or class of this process can be reached."""

    def find_class(self, module: str, name: str) -> type:
        """Refuses every global."""
        raise pickle.UnpicklingError(f"the pickle names {module}.{name}, and no global is allowed")

    def persistent_load(self, pid: object) -> object:
        """Refuses every persistent id."""
        raise pickle.UnpicklingError("the pickle holds a persistent id, which is not allowed")


def _inflate(blob: bytes, where: str) -> bytes:
    """zlib-decompressed `blob`, refused beyond MAX_DECOMPRESSED bytes (so a zip bomb cannot fill memory)."""
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(blob, MAX_DECOMPRESSED + 1)
    except zlib.error as exc:
        raise UserError(f"{where}: private_test_cases is neither JSON nor zlib data ({exc})") from None
    if len(raw) > MAX_DECOMPRESSED or inflater.unconsumed_tail:
        raise UserError(
            f"{where}: private_test_cases inflates to more than {MAX_DECOMPRESSED >> 20} MB, which is refused"
        )
    if not inflater.eof:
        raise UserError(f"{where}: private_test_cases holds a truncated zlib stream")
    return raw


def _unpickle_plain(raw: bytes, where: str) -> object:
    """The value of a pickle that only builds plain values; any other pickle is a UserError, and nothing in
    it runs: every opcode is checked before the unpickler (which refuses all globals too) reads it."""
    try:
        for opcode, _, _ in pickletools.genops(raw):
            if opcode.name not in _SAFE_OPCODES:
                raise UserError(
                    f"{where}: private_test_cases is a pickle that would {opcode.name} (build objects or call "
                    "code), which is refused; only plain values are accepted"
                )
        return _NoGlobalsUnpickler(io.BytesIO(raw)).load()
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001  (any failure of a malformed pickle: refuse the row)
        raise UserError(f"{where}: private_test_cases is not a readable pickle ({type(exc).__name__})") from None


def decode_private_tests(value: object, where: str) -> list[dict[str, str]]:
    """A row's private tests, as LiveCodeBench reads them: JSON text, else base64 of zlib of a pickle of the
    JSON text (the pickle's value may also be the list itself); see the module doc for the checks."""
    if isinstance(value, list):
        return _tests(value, "private_test_cases", where)
    if not isinstance(value, str):
        raise UserError(f"{where}: private_test_cases must be a string, got {type(value).__name__}")
    try:
        return _tests(json.loads(value), "private_test_cases", where)
    except (ValueError, RecursionError):
        pass  # not JSON: the compressed form
    try:
        blob = base64.b64decode(value.encode("utf-8"))
    except (binascii.Error, ValueError):
        raise UserError(f"{where}: private_test_cases is neither JSON nor base64 text") from None
    decoded = _unpickle_plain(_inflate(blob, where), where)
    if isinstance(decoded, str):
        try:
            decoded = json.loads(decoded)
        except (ValueError, RecursionError):
            raise UserError(f"{where}: the pickled private_test_cases is not JSON text") from None
    return _tests(decoded, "private_test_cases", where)


def _tests(value: object, field: str, where: str) -> list[dict[str, str]]:
    """`value` checked to be a list of {"input": str, "output": str, "testtype": "stdin" | "functional"}."""
    if not isinstance(value, list):
        raise UserError(f"{where}: {field} must be a list of tests, got {type(value).__name__}")
    for i, test in enumerate(value):
        if (
            not isinstance(test, dict)
            or not isinstance(test.get("input"), str)
            or not isinstance(test.get("output"), str)
            or test.get("testtype") not in TEST_TYPES
        ):
            raise UserError(
                f"{where}: {field}[{i}] must be an object with string 'input' and 'output' and a 'testtype' of "
                f"{' or '.join(TEST_TYPES)}"
            )
    return value


def _json_field(row: dict, name: str, where: str, kind: type) -> object:
    """A field that LiveCodeBench stores as JSON text (a decoded value is accepted as it is)."""
    value = row.get(name)
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else kind()
        except (ValueError, RecursionError):
            raise UserError(f"{where}: field '{name}' is not valid JSON") from None
    if not isinstance(value, kind):
        raise UserError(f"{where}: field '{name}' must hold a JSON {kind.__name__}")
    return value


def parse_date(text: object, what: str) -> datetime:
    """An ISO date or date-time as a naive UTC datetime (a date alone is its midnight, as LiveCodeBench's
    `datetime.strptime(date, "%Y-%m-%d")`)."""
    if not isinstance(text, str):
        raise UserError(f"{what} must be an ISO date string such as 2024-08-01, got {type(text).__name__}")
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UserError(f"{what} {text!r} is not an ISO date such as 2024-08-01") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _json_value(text: str, where: str) -> object:
    """One decoded JSON value of a functional test."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: {text[:60]!r} is not one JSON value") from None


def functional_assert(name: str, test: dict[str, str], where: str) -> str:
    """`assert NAME(ARGS) == EXPECTED` for one functional test: its input is one JSON value per line (the
    arguments, split on "\\n" as LiveCodeBench splits them), its output one JSON value."""
    args = [json_literal(_json_value(line, where), where) for line in test["input"].split("\n")]
    expected = json_literal(_json_value(test["output"], where), where)
    return f"assert {name}({', '.join(args)}) == {expected}"


def _text(row: dict, name: str, where: str, *, required: bool = True) -> str:
    """A string field of the row (a non-empty one unless not `required`)."""
    value = row.get(name, "")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or required and not value.strip():
        raise UserError(f"{where}: field '{name}' is missing or not a non-empty string")
    return value


def problem_from_row(row: dict, where: str) -> Problem:
    """One LiveCodeBench row as a Problem (see the module doc)."""
    qid = row.get("question_id")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or not str(qid).strip():
        raise UserError(f"{where}: field 'question_id' is missing")
    question = _text(row, "question_content", where)
    name = _json_field(row, "metadata", where, dict).get("func_name")
    public = _tests(_json_field(row, "public_test_cases", where, list), "public_test_cases", where)
    tests = public + decode_private_tests(row.get("private_test_cases", "[]"), where)
    if not tests:
        raise UserError(f"{where}: the problem has no tests")
    difficulty = row.get("difficulty") if isinstance(row.get("difficulty"), str) else ""
    meta = {
        "public_tests": len(public),
        "contest_date": _text(row, "contest_date", where),
        "platform": row.get("platform", ""),
        "difficulty": difficulty,
        "contest_id": row.get("contest_id", ""),
        "title": row.get("question_title", ""),
    }
    common = {"id": f"{SOURCE}/{qid}", "source": SOURCE, "split": "eval", "imports": RUNTIME_HEADER}
    if not name:
        return Problem(
            prompt=STDIO_PROMPT.format(question=question.rstrip()),
            description=question,
            kind="stdio",
            io_tests=[{"input": t["input"], "output": t["output"]} for t in tests],
            checker=CHECKER,
            difficulty=difficulty,
            meta=meta,
            **common,
        )
    if not isinstance(name, str) or not name.isidentifier():
        raise UserError(f"{where}: metadata func_name {name!r} is not a Python name")
    starter = _text(row, "starter_code", where, required=False).rstrip()
    return Problem(
        prompt=CALL_PROMPT.format(question=question.rstrip(), starter=starter),
        description=CALL_DESCRIPTION.format(question=question.rstrip(), name=name, starter=starter),
        entry_point=name,
        golden_tests=[functional_assert(name, t, f"{where}: test {i}") for i, t in enumerate(tests)],
        difficulty=difficulty,
        meta={"method_of": "Solution", **meta},
        **common,
    )


def _files(path: Path) -> list[Path]:
    """The JSONL files of `path`: itself, or a directory's *.jsonl[.gz] files in name order (a release
    folder: test.jsonl, test2.jsonl, ...)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.gz")))
        if not files:
            raise UserError(f"{path}: the folder holds no .jsonl files of LiveCodeBench rows")
        return files
    if not path.is_file():
        raise UserError(f"{path}: no such LiveCodeBench file or folder")
    if not path.name.endswith((".jsonl", ".jsonl.gz")):
        raise UserError(f"{path}: a LiveCodeBench file is .jsonl or .jsonl.gz (code_generation_lite's test*.jsonl)")
    return [path]


def _rows(path: Path) -> Iterator[tuple[str, object]]:
    """(file:line, decoded row) of every row, read one line at a time."""
    for file in _files(path):
        opener = gzip.open if file.name.endswith(".gz") else open
        with opener(file, "rt", encoding="utf-8") as handle:
            for lineno, row in jsonl_rows(handle, file):
                yield f"{file}:{lineno}", row


def _choice(values: Iterable[str] | str | None, allowed: tuple[str, ...], what: str) -> frozenset[str] | None:
    """The chosen values of a filter (None: no filter), each checked against `allowed`."""
    if values is None:
        return None
    chosen = frozenset([values] if isinstance(values, str) else values)
    unknown = sorted(chosen - set(allowed))
    if unknown:
        raise UserError(f"{what} {', '.join(unknown)} unknown; use some of: {', '.join(allowed)}")
    return chosen


def _wanted(
    row: dict,
    where: str,
    window: tuple[datetime | None, datetime | None],
    platforms: frozenset[str] | None,
    kinds: frozenset[str] | None,
) -> bool:
    """Whether a row passes the filters, read from its cheap fields before its tests are decoded."""
    if platforms is not None and row.get("platform") not in platforms:
        return False
    if kinds is not None:
        has_name = bool(_json_field(row, "metadata", where, dict).get("func_name"))
        if ("call" if has_name else "stdio") not in kinds:
            return False
    since, until = window
    if since is None and until is None:
        return True
    date = parse_date(row.get("contest_date"), f"{where}: contest_date")
    return (since is None or since <= date) and (until is None or date <= until)


def load_livecodebench(
    path: str | Path,
    *,
    since: str | None = None,
    until: str | None = None,
    platforms: Iterable[str] | str | None = None,
    kinds: Iterable[str] | str | None = None,
) -> list[Problem]:
    """Problems of a LiveCodeBench code_generation_lite file (or folder of them) whose contest_date lies in
    [since, until] (ISO dates, both ends included, as LiveCodeBench's --start_date/--end_date: a contamination
    window), of the given platforms (leetcode, atcoder, codeforces) and kinds ("call", "stdio"); ids
    "livecodebench/QUESTION_ID"."""
    window = (
        parse_date(since, "since") if since is not None else None,
        parse_date(until, "until") if until is not None else None,
    )
    chosen_platforms = _choice(platforms, PLATFORMS, "platform(s)")
    chosen_kinds = _choice(kinds, KINDS, "kind(s)")
    problems = []
    for where, row in _rows(Path(path)):
        if not isinstance(row, dict):
            raise UserError(f"{where}: expected a JSON object, got {type(row).__name__}")
        if _wanted(row, where, window, chosen_platforms, chosen_kinds):
            problems.append(problem_from_row(row, where))
    require_unique_ids(problems, str(path))
    return problems
