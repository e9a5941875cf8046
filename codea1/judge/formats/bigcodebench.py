"""BigCodeBench's unittest modules as tests: run in the candidate's child by a harness, decided here.

How a verdict is reached. One job per solution runs, in one namespace and in this order:
1. a prelude that takes, before any candidate code runs, the real `unittest.TestCase` class, a copy of its
   attributes (the assert methods the tests call) and the exception types the harness catches;
2. the candidate's program (its solution; a solution that does not define the entry point continues the
   task's prompt, as a completion does);
3. the task's `test` module (so `TestCases` and everything it defines are the benchmark's own, whatever
   the candidate defined under those names);
4. the harness: `__codea1_bcb_case(name)` restores every attribute of the real TestCase that was changed
   or added, checks that `TestCases` derives from that class, then runs setUpClass (once per child),
   setUp, the test method, tearDown and cleanups itself (no unittest runner, result object or
   TestResult the candidate could have replaced) and returns the outcome as a plain string: "passed",
   "failed" (an assertion of the test failed), "errored" (anything else raised, including SystemExit),
   "skipped".
The calls are one per test method (as unittest's loader names them: `test*` methods, sorted). A call that
times out or kills its child is that test's failure (the sandbox resumes the next test in a fresh child).
The parent holds the canonical solution's outcomes, computed first in the same way: a task whose
canonical solution does not pass in this environment (a missing library, say) is excluded and reported.
A solution passes when every test's returned value is exactly "passed", or "skipped" where the canonical
solution's was skipped too (a candidate that raises unittest.SkipTest does not pass a test that the
canonical solution ran).

Residual risk (documented, not closed): the tests run in the candidate's interpreter, as in the benchmark's
own evaluator. The harness defends against the plain forgeries (redefining TestCases or the harness,
patching or replacing unittest's TestCase and its assert methods, exiting early, raising SkipTest,
printing fake output), but a candidate written to search the interpreter for the harness's saved state
(e.g. through `gc`) and alter it, to hook the interpreter (sys.settrace, builtins), or to return an object
whose `__eq__` is always true to an `assertEqual` can still make a test it should fail report "passed". The
sandbox bounds what such code can do to the machine, not to the outcome of its own tests. Only a benchmark
whose expected values are plain data compared by the parent (HumanEval+/MBPP+ here) closes that.
"""

from __future__ import annotations

import ast
import secrets
from typing import Any

from codea1.problem import Problem
from codea1.sandbox import Job

# A per-process random suffix of the harness's names: the candidate's code, written before this process
# ran, cannot name them to rebind them (finding them by searching the interpreter is the residual risk).
TOKEN = secrets.token_hex(8)
PRIVATE = f"__codea1_bcb_{TOKEN}"

# Runs before the candidate: keeps the real unittest objects and a copy of their state, and defines the
# restore step and the runner of one test method (see the module docstring).
PRELUDE = """
import sys as __codea1_bcb_sys
import unittest as __codea1_bcb_unittest
import unittest.case as __codea1_bcb_case_module
import unittest.mock as __codea1_bcb_mock


def __codea1_bcb_setup(sys=__codea1_bcb_sys, modules=(__codea1_bcb_unittest, __codea1_bcb_case_module,
                       __codea1_bcb_mock), case=__codea1_bcb_unittest.TestCase,
                       skip=__codea1_bcb_unittest.SkipTest, base=BaseException, vars=vars, type=type,
                       dict=dict, list=list, set=set, id=id, isinstance=isinstance, issubclass=issubclass,
                       getattr=getattr, object=object):
    failure = case.failureException
    assertion = AssertionError
    names = {m.__name__: m for m in modules}
    classes = {}
    for m in modules:
        for value in list(vars(m).values()):
            if isinstance(value, type) and getattr(value, "__module__", "").startswith("unittest"):
                classes[id(value)] = value
    saved_modules = [(m, dict(vars(m))) for m in modules]
    saved_classes = [(c, dict(vars(c))) for c in classes.values()]
    state = {"classes": set()}

    def same():
        for name, m in names.items():
            if sys.modules.get(name) is not m:
                return False
        for m, saved in saved_modules:
            now = vars(m)
            if len(now) != len(saved) or any(now.get(k, saved) is not v for k, v in saved.items()):
                return False
        for c, saved in saved_classes:
            now = vars(c)
            if len(now) != len(saved) or any(now.get(k, saved) is not v for k, v in saved.items()):
                return False
        return True

    def restore():
        for name, m in names.items():
            sys.modules[name] = m
        for m, saved in saved_modules:
            now = vars(m)
            for k in list(now):
                if k not in saved:
                    del now[k]
            now.update(saved)
        for c, saved in saved_classes:
            now = vars(c)
            for k in list(now):
                if k not in saved and k not in ("__weakref__", "__dict__"):
                    type.__delattr__(c, k)
            for k, v in saved.items():
                if now.get(k, saved) is not v:
                    type.__setattr__(c, k, v)

    def run(cls, name, allowed):
        if not same():
            restore()
        if not isinstance(cls, type) or not issubclass(cls, case):
            return "errored"
        own = set(id(c) for c in type.__getattribute__(case, "__mro__"))
        ok = set(id(c) for c in allowed)
        for c in type.__getattribute__(cls, "__mro__"):
            if id(c) not in own and id(c) not in ok:
                return "errored"  # a base class the test module did not define (e.g. a replaced TestCase)
        try:
            if cls not in state["classes"]:
                state["classes"].add(cls)
                cls.setUpClass()
            test = cls(name)
            method = getattr(test, name)
            test.setUp()
            try:
                method()
            finally:
                test.tearDown()
                test.doCleanups()
        except skip:
            outcome = "skipped"
        except failure:
            outcome = "failed"
        except assertion:
            outcome = "failed"
        except base:
            outcome = "errored"
        else:
            outcome = "passed"
        if not same():  # unittest was changed while the test ran: not a pass
            restore()
            return "errored"
        return outcome

    return restore, run


PRIVATE = __codea1_bcb_setup()
del __codea1_bcb_setup, __codea1_bcb_sys, __codea1_bcb_unittest, __codea1_bcb_case_module, __codea1_bcb_mock
""".replace("PRIVATE", PRIVATE)

# Between the candidate and the test module: unittest as it was before the candidate ran.
RESTORE = f"\n{PRIVATE}[0]()\n"

# After the test module: the call each test runs as, bound to the test module's own classes.
HARNESS = """

def __codea1_bcb_case(name, run=PRIVATE[1], cls=TestCases, allowed=(CLASSES)):
    return run(cls, name, allowed)
""".replace("PRIVATE", PRIVATE)


def test_methods(test_code: str) -> list[str]:
    """The test method names of `TestCases` (and of base classes defined in the same module), sorted as
    unittest's loader orders them; [] when the module does not parse or defines no TestCases."""
    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return []
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    names: set[str] = set()
    todo, seen = ["TestCases"], set()
    while todo:
        cls = classes.get(todo.pop())
        if cls is None or cls.name in seen:
            continue
        seen.add(cls.name)
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                names.add(item.name)
        todo += [b.id for b in cls.bases if isinstance(b, ast.Name)]
    return sorted(names)


def test_classes(test_code: str) -> list[str]:
    """The names of the classes the test module defines at its top level."""
    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def candidate_program(problem: Problem, solution: str) -> str:
    """The candidate's program: the solution, continuing the task's prompt when it does not define the
    entry point itself (a completion)."""
    if f"def {problem.entry_point}" in solution:
        return solution
    prefix = problem.meta.get("complete_prompt") if problem.meta.get("bcb_split") == "complete" else None
    return (prefix or problem.meta.get("code_prompt") or "") + solution


def job_for(job_id: str, problem: Problem, program: str, methods: list[str], timeout: float) -> Any:
    """The sandbox job running `program` against the task's tests, one call per test method."""
    classes = test_classes(problem.test_code)
    harness = HARNESS.replace("CLASSES", "".join(f"{c}, " for c in classes))
    # `from __future__` imports must open a module: they go before the prelude
    future = [ln for ln in program.splitlines() if ln.startswith("from __future__ import")]
    if future:
        program = "\n".join(ln for ln in program.splitlines() if not ln.startswith("from __future__ import"))
    head = "".join(f"{ln}\n" for ln in future)
    code = f"{head}{PRELUDE}\n{program}\n{RESTORE}\n{problem.test_code}\n{harness}"
    return Job(id=job_id, code=code, calls=[f"__codea1_bcb_case({m!r})" for m in methods], timeout=timeout)


def outcomes(result: Any, n: int) -> list[str]:
    """The per-test outcomes the parent reads from a job's result: the plain string a call returned, or
    what the sandbox saw ("undefined", "timeout", "crash", "error", ...)."""
    if not result.defined:
        return ["undefined"] * n
    out = []
    for r in result.results[:n]:
        if r.status == "ok" and type(r.value) is str and r.value in ("passed", "failed", "errored", "skipped"):
            out.append(r.value)
        elif r.status == "ok":
            out.append("invalid")
        else:
            out.append(r.status)
    return out + ["missing"] * (n - len(out))


def verdict(candidate: list[str], gt: list[str]) -> tuple[bool, int | None]:
    """(passed, index of the first test not passed): a test passes when it returned "passed", or
    "skipped" where the canonical solution's run skipped it too."""
    for i, (c, g) in enumerate(zip(candidate, gt, strict=True)):
        if not (c == "passed" or (c == "skipped" and g == "skipped")):
            return False, i
    return len(candidate) == len(gt), None
