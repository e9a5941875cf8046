"""Which modules each zygote flavour imports before it forks, and which flavour a job needs.

A forked child can only import what its zygote imported beforehand (the sandbox uid may not read the
interpreter's files, and the mount namespace may hide them), but every module a zygote holds makes
each fork, copy-on-write fault and exit dearer, because the child inherits the zygote's memory. So there
are three flavours, each started on first use:

- "lean": the modules candidates import most (the HumanEval+/MBPP+ ground truths import nothing else);
- "full": lean plus the rest of the commonly useful standard library and two small pure-Python packages;
- "numpy": full plus numpy;
- "testing": numpy plus unittest and unittest.mock (unittest-style test modules, e.g. BigCodeBench's).

The parent routes a job by a conservative scan of its code and calls (`flavour`); a lean run that still
hits a missing module (an import the scan could not see) is run again on the full flavour
(`needs_full`), so the flavour never changes a verdict.
"""

from __future__ import annotations

import re

# what a lean zygote holds (submodules included), beyond what the zygote itself and the interpreter load
LEAN = (
    "math",
    "cmath",
    "collections",
    "collections.abc",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "re",
    "string",
    "typing",
    "operator",
    "random",
    "copy",
    "fractions",
    "decimal",
    "numbers",
    "statistics",
    "datetime",
    "json",
    "array",
    "struct",
    "enum",
    "abc",
    "io",
    "contextlib",
    "time",
    "sys",
    "os",
    "types",
    "keyword",
    "hashlib",
    "textwrap",
    "unicodedata",
    "encodings.utf_8",
    "encodings.latin_1",
    "encodings.ascii",
    "errno",
    "stat",
    "warnings",
    "weakref",
    "reprlib",
    "binascii",
    "zlib",
    "base64",
)

FULL = LEAN + (
    "dataclasses",
    "calendar",
    "queue",
    "pprint",
    "difflib",
    "graphlib",
    "locale",
    "traceback",
    "linecache",
    "tokenize",
    "ast",
    "threading",
    "signal",
    "secrets",
    "uuid",
    "pathlib",
    "csv",
    "shlex",
    "fnmatch",
    "glob",
    "tempfile",
    "platform",
    "_strptime",
    "subprocess",
    "select",
    "selectors",
    "socket",
    "inspect",
    "zoneinfo",
    "ctypes",
    "encodings.utf_16",
    "encodings.utf_32",
    "encodings.cp1252",
    "encodings.idna",
    "encodings.unicode_escape",
    "encodings.raw_unicode_escape",
    "encodings.hex_codec",
    "encodings.base64_codec",
    "typing_extensions",
    "sortedcontainers",
)

# numpy loads these submodules lazily, from files the child cannot read
NUMPY = FULL + ("numpy", "numpy.random", "numpy.linalg", "numpy.fft", "numpy.polynomial", "numpy.ma")

# unittest-style test modules (BigCodeBench: codea1.eval.bigcodebench): numpy plus unittest and its mock
TESTING = NUMPY + ("unittest", "unittest.mock")

# programs run as processes of their own (compiled languages; codea1.sandbox.runners): lean plus what starting
# and timing a process takes. Its children's /tmp allows executing what they write there (the compiled
# program); every other layer is the same.
PROCESS = LEAN + ("subprocess", "select", "selectors", "signal", "threading", "resource")

FLAVOURS = {"lean": LEAN, "full": FULL, "numpy": NUMPY, "testing": TESTING, "process": PROCESS}
EXEC_TMP = frozenset({"process"})  # flavours whose children may execute files of their own /tmp

# top-level names a lean child can import without touching the disk (with the interpreter's own)
_LEAN_TOP = frozenset(m.split(".")[0] for m in LEAN) | {"builtins", "gc", "marshal", "__future__", "_thread"}
_IMPORT = re.compile(
    r"\bfrom\s+([\w.]+)\s+import\b|\bimport\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"
)
_DYNAMIC = ("__import__", "importlib", "import_module")
# what a child reports when a module it needs is not there
_MISSING = ("ModuleNotFoundError", "ImportError", "LookupError: unknown encoding")


def flavour(code: str, calls: list) -> str:
    """The leanest flavour that can run `code` and `calls` ("lean", "full", "numpy" or "testing").

    Conservative: a mention of unittest anywhere picks "testing", else one of numpy picks "numpy"; any
    dynamic import, or an import statement naming a module outside the lean set, picks "full".
    """
    text = code if not calls else code + "\n" + "\n".join(c for c in calls if type(c) is str)
    if "unittest" in text:
        return "testing"
    if "numpy" in text:
        return "numpy"
    if "import" not in text:
        return "lean"
    if any(word in text for word in _DYNAMIC):
        return "full"
    for source, names in _IMPORT.findall(text):
        modules = [source] if source else [part.split()[0] for part in names.split(",") if part.strip()]
        if any(m.split(".")[0] not in _LEAN_TOP for m in modules if not m.startswith(".")):
            return "full"
    return "lean"


def needs_full(defined: bool, error: str | None, call_errors: list) -> bool:
    """Whether a lean run failed for want of a module, so that the full flavour must run the job again."""
    texts = [error] if not defined else call_errors
    return any(type(t) is str and t.startswith(_MISSING) for t in texts)
