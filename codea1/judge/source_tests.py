"""A problem's own test program (`test_code`) run whole against GT, where its format is known (meta
"test_format"):

- "evalplus" / "humaneval": a `check(candidate)` function, called with the entry point;
- "pytest": `from solution import ...` resolved to GT; every argument-less `test*` function is called.

    program = test_code_program(problem)                  # None: no test_code, or a format not known here
    job = test_code_job(problem.id, program, 120.0)       # one call, under one limit for the whole program

The call returns when every test passed and raises at the first that did not (its status "error"). Used
by `codea1 data check` (codea1.data.check), which holds GT to its own tests.
"""

from __future__ import annotations

from codea1.problem import Problem
from codea1.sandbox.api import Job

TEST_CODE_FORMATS = ("evalplus", "humaneval", "pytest")
RUN_TEST_CODE = "__codea1_run_test_code()"  # the one call of a test_code job

__all__ = ["RUN_TEST_CODE", "TEST_CODE_FORMATS", "test_code_job", "test_code_program"]


# Runs a pytest-style test program against the GT module (as `solution`). The sandbox child may not be able
# to import pytest, so a minimal stand-in (raises, approx, mark) is provided when the import fails.
PYTEST_HARNESS = """
def __codea1_run_test_code():
    import math
    import re
    import sys
    import types
    try:
        import pytest  # noqa: F401
    except ImportError:
        shim = types.ModuleType("pytest")

        class _Raises:
            def __init__(self, kind, match=None):
                self.kind, self.match, self.value = kind, match, None

            def __enter__(self):
                return self

            def __exit__(self, kind, value, tb):
                if kind is None:
                    raise AssertionError(f"DID NOT RAISE {self.kind}")
                if not issubclass(kind, self.kind):
                    return False
                if self.match is not None and not re.search(self.match, str(value)):
                    raise AssertionError(f"exception message does not match {self.match!r}")
                self.value = value
                return True

        class _Approx:
            def __init__(self, expected, rel=None, abs=None):
                self.expected, self.rel, self.abs = expected, rel or 1e-6, abs or 1e-12

            def _close(self, a, b):
                if isinstance(b, (list, tuple)):
                    return isinstance(a, (list, tuple)) and len(a) == len(b) and all(
                        self._close(x, y) for x, y in zip(a, b))
                if isinstance(b, dict):
                    return isinstance(a, dict) and a.keys() == b.keys() and all(self._close(a[k], b[k]) for k in b)
                return math.isclose(a, b, rel_tol=self.rel, abs_tol=self.abs)

            def __eq__(self, other):
                try:
                    return self._close(other, self.expected)
                except TypeError:
                    return False

        class _Mark:
            def __getattr__(self, name):
                def decorator(*args, **kwargs):
                    if len(args) == 1 and callable(args[0]) and not kwargs:
                        return args[0]
                    return lambda fn: fn
                return decorator

        shim.raises = _Raises
        shim.approx = _Approx
        shim.mark = _Mark()
        sys.modules["pytest"] = shim
    module = types.ModuleType("solution")
    module.__dict__.update(globals())
    sys.modules["solution"] = module
    namespace = {"__name__": "__codea1_tests__"}
    exec(compile(__codea1_test_source, "<test_code>", "exec"), namespace)
    ran = 0
    for name, fn in list(namespace.items()):
        if name.startswith("test") and isinstance(fn, types.FunctionType) and fn.__code__.co_argcount == 0:
            fn()
            ran += 1
    return ran
"""

# Runs a `check(candidate)` program (EvalPlus / HumanEval) in its own namespace, which starts as a copy of
# the GT module: check() may call GT helpers by name, and a GT function that is itself named `check`
# (MBPP/56) is passed in before the program's own check() replaces that name.
CHECK_HARNESS = """
def __codea1_run_test_code():
    namespace = dict(globals())
    candidate = globals()[__codea1_entry_point]
    exec(compile(__codea1_test_source, "<test_code>", "exec"), namespace)
    namespace["check"](candidate)
    return True
"""


def test_code_program(problem: Problem) -> str | None:
    """The GT followed by a function `__codea1_run_test_code()` that runs test_code against it, or None."""
    fmt = problem.meta.get("test_format", "")
    if not problem.test_code.strip() or fmt not in TEST_CODE_FORMATS:
        return None
    harness = PYTEST_HARNESS if fmt == "pytest" else CHECK_HARNESS
    return (
        f"{problem.gt_solution}\n\n"
        f"__codea1_test_source = {problem.test_code!r}\n"
        f"__codea1_entry_point = {problem.entry_point!r}\n\n{harness}"
    )


def test_code_job(job_id: str, program: str, timeout: float) -> Job:
    """The job that runs a `test_code_program` whole: its one call runs every test, within `timeout` seconds
    for all of them."""
    return Job(id=job_id, code=program, calls=[RUN_TEST_CODE], timeout=timeout)
