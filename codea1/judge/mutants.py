"""GT and its mutants run alike: one sandbox child per program, every child of one run given the same job
but for the program's compiled code, so that no call can tell GT from a mutant.

    jobs, where, undefined = alike_jobs(programs, calls, timeout, stop_on_error=True)

Each job has one call, `__codea1_run(stop_on_error)`, which returns ("undefined", message) when the program
does not define, else ("ran", [(status, value), ...]) with one ("ok", value) or ("error", message) per call
(with stop_on_error the list ends at the first "error"). The parent alone compares the values that come
back (codea1.eval.mutation). A program that does not compile gets no job: its message is the one its child
would have given.
"""

from __future__ import annotations

import marshal
import warnings
from collections.abc import Sequence

from codea1.sandbox.api import Job
from codea1.sandbox.preload import FLAVOURS, flavour

__all__ = ["RUNNER", "alike_jobs", "compiled"]

# Each program (GT and every mutant) runs in a sandbox child of its own, and every child of one scoring
# run gets the same job but for the program: the same runner text, the same calls, the same limit, the
# same zygote flavour, in a random order. The program travels compiled (marshalled code, as hex digits:
# no source text in the child); nothing in the child names its index, the other programs, or whether it
# is GT. The parent alone compares the plain values that come back.

RUNNER = """
import marshal as __codea1_marshal


def __codea1_run(stop_on_error):
    ns = {"__name__": "__codea1_mutant__"}
    try:
        code = __codea1_marshal.loads(bytes.fromhex(__CODEA1_PROGRAM))
        exec(code, ns)
    except BaseException as exc:
        return ("undefined", type(exc).__name__ + ": " + str(exc)[:200])
    out = []
    for call in __CODEA1_CALLS:
        try:
            out.append(("ok", eval(call, ns)))
        except BaseException as exc:
            out.append(("error", type(exc).__name__ + ": " + str(exc)[:200]))
            if stop_on_error:  # GT does not raise on scored calls: an exception already kills
                break
    return ("ran", out)
"""

# comment lines that make the sandbox's module scan (codea1.sandbox.preload.flavour) pick a flavour, so
# that every child of one run forks from the same kind of zygote whatever its program imports
FLAVOUR_HINT = {"lean": "", "full": "# __import__\n", "numpy": "# numpy\n", "testing": "# unittest\n"}


def compiled(program: str) -> tuple[bytes | None, str]:
    """The program's marshalled code (compiled as the child would: a module of its own, asserts kept),
    or None and the error a child would have reported for a program that does not compile."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = compile(program, "<mutant>", "exec", dont_inherit=True, optimize=0)
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError
        return None, type(exc).__name__ + ": " + str(exc)[:200]
    return marshal.dumps(code), ""


def _job_code(blob: bytes, calls: list[str], hint: str) -> str:
    """The child's whole program: the runner, the calls, one program's compiled code (nothing else)."""
    return f"{hint}{RUNNER}\n__CODEA1_CALLS = {calls!r}\n__CODEA1_PROGRAM = {blob.hex()!r}\n"


def alike_jobs(
    programs: Sequence[str], calls: Sequence[str], timeout: float, stop_on_error: bool
) -> tuple[list[Job], list[int], dict[int, str]]:
    """One job per program that compiles (the job `program-K` for programs[K]), the index K of each job's
    program, and for each program that does not compile, its message. Every job holds the same runner, the
    same calls, the same limit (`timeout` seconds for the program's whole run) and the same flavour hint,
    the richest zygote any program or call needs, so every child forks from the same kind of zygote."""
    calls = list(calls)
    rank = {name: i for i, name in enumerate(FLAVOURS)}  # each flavour holds what the ones before it hold
    kind = max((flavour(program, calls) for program in programs), key=lambda k: rank.get(k, 0), default="lean")
    hint = FLAVOUR_HINT.get(kind, f"# {kind}\n")
    jobs, where, undefined = [], [], {}
    for k, program in enumerate(programs):
        blob, error = compiled(program)
        if blob is None:
            undefined[k] = error
            continue
        jobs.append(
            Job(
                id=f"program-{k}",
                code=_job_code(blob, calls, hint),
                calls=[f"__codea1_run({bool(stop_on_error)})"],
                timeout=timeout,
            )
        )
        where.append(k)
    return jobs, where, undefined
