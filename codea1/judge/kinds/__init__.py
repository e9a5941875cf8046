"""What a problem's tests do, one module per task kind, behind one registry.

    kind_of(problem)      # "call" or "stdio" (codea1.problem.KINDS)
    calls_entry(problem, call)   # whether a kept test calls the function under test (None: a kind without one)

- call: a function called by its tests; the benchmark formats that read them (asserts, EvalPlus, HumanEval,
  BigCodeBench's unittest) are codea1.judge.formats.
- stdio: a whole program fed each test's input on stdin and judged by what it prints (`stdio`): the jobs
  that run a program in its language (codea1.sandbox.runners, codea1.lang), and verdicts by an official
  output-comparison rule (`outputs`: LiveCodeBench's, CodeContests').
"""

from __future__ import annotations

from codea1.errors import UserError
from codea1.problem import KINDS, Problem

__all__ = ["KINDS", "calls_entry", "kind_of"]


def kind_of(problem: Problem) -> str:
    """The problem's kind, checked against the registry (a UserError for one codea1 cannot judge)."""
    if problem.kind not in KINDS:
        raise UserError(f"problem {problem.id!r}: kind {problem.kind!r} is unknown; use one of: {', '.join(KINDS)}")
    return problem.kind


def calls_entry(problem: Problem, call: str) -> bool | None:
    """Whether a kept test's CALL calls the function under test (the run health's free-validity signal:
    `assert len([1]) == 1` is valid and tests nothing); None for a kind whose tests call no function: a
    stdio test is an input the whole program reads, and its `call` holds that input's text."""
    if kind_of(problem) == "stdio":
        return None
    return call.startswith(f"{problem.entry_point}(")
