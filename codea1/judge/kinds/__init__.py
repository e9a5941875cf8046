"""What a problem's tests do, one module per task kind, behind one registry.

    kind_of(problem)      # "call" or "stdio" (codea1.problem.KINDS)

- call: a function called by its tests; the benchmark formats that read them (asserts, EvalPlus, HumanEval,
  BigCodeBench's unittest) are codea1.judge.formats.
- stdio: a whole program fed each test's input on stdin and judged by what it prints (`stdio`): the jobs
  that run a program in its language (codea1.sandbox.runners, codea1.lang), and verdicts by an official
  output-comparison rule (`outputs`: LiveCodeBench's, CodeContests').
"""

from __future__ import annotations

from codea1.errors import UserError
from codea1.problem import KINDS, Problem

__all__ = ["KINDS", "kind_of"]


def kind_of(problem: Problem) -> str:
    """The problem's kind, checked against the registry (a UserError for one codea1 cannot judge)."""
    if problem.kind not in KINDS:
        raise UserError(f"problem {problem.id!r}: kind {problem.kind!r} is unknown; use one of: {', '.join(KINDS)}")
    return problem.kind
