"""Generated tests as supervision: the Test LLM's tests that hold on GT become a problem's golden tests.

The result is a Problem JSONL (golden_tests filled) that `method: golden` training reads like any
other problem file. Tests are validated in the sandbox against GT; duplicates (same normalised
statement) are dropped; problems with fewer than `min_valid` valid tests are left out.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from codea1.judge.asserts import split_assert
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.problem import Problem
from codea1.sandbox.api import Executor


def normalise(statement: str) -> str | None:
    """`assert CALL op EXPECTED` in canonical source form, or None when it is not such a test."""
    parts = split_assert(statement)
    return None if parts is None else f"assert {parts[0]} {parts[1]} {parts[2]}"


def validated_golden(
    problems: list[Problem],
    tests: dict[str, list[str]],
    executor: Executor,
    *,
    max_tests: int = 8,
    min_valid: int = 1,
    timeout: float = 2.0,
) -> tuple[list[Problem], dict[str, Any]]:
    """Problems whose golden_tests are the given tests that pass on GT; plus counts for the report."""
    items, keep = [], []
    for p in problems:
        seen, stmts = set(), []
        for t in tests.get(p.id, []):
            norm = normalise(t)
            if norm is not None and norm not in seen:
                seen.add(norm)
                stmts.append(norm)
        keep.append(stmts)
        program = p.gt_solution if not p.imports else f"{p.imports}\n{p.gt_solution}"
        items.append(AssertCase(code=program, tests=stmts, entry_point=p.entry_point, oracle=program, id=p.id))
    runs = run_assertions(executor, items, timeout=timeout)
    out: list[Problem] = []
    total = valid_total = 0
    for p, stmts, res in zip(problems, keep, runs, strict=True):
        valid = [s for s, r in zip(stmts, res.results, strict=False) if r.status == "pass"] if res.defined else []
        total += len(stmts)
        valid_total += len(valid)
        if len(valid) >= min_valid:
            meta = dict(p.meta)
            meta["golden_from"] = "test_policy"
            out.append(dataclasses.replace(p, golden_tests=valid[:max_tests], meta=meta))
    stats = {
        "problems_in": len(problems),
        "problems_out": len(out),
        "tests_parsed": total,
        "tests_valid": valid_total,
        "valid_share": valid_total / total if total else 0.0,
    }
    return out, stats
