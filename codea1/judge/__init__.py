"""codea1.judge: the one package that says what a test means; the sandbox only runs code and returns values.

Rooms:
- equality: what equal means on plain values (`values_equal`) and every comparison a test can make
  (`holds`, the one comparator table COMPARISONS), and whether a Test LLM predicted GT (`prediction_right`);
- literals: plain values to and from Python source (`literal`, `plain_source`) and the canonical text of an
  expected value (`encode_expected`, the Mistake Book's key);
- asserts: reading one assert without running it (`parse_assert`, `split_assert`, `read_assertion`);
- oracle: deciding asserts against a candidate without the candidate deciding them (`run_assertions`);
- resolve: a test's CALL turned into the function under test applied to plain values (`resolve_calls`),
  its arguments evaluated twice in clean children ("values in");
- calls: calls with the values they must return (`run_expecting`, `decide`), the game's executable tests;
- jobs: calls in GT's program, a candidate's, or a program given whole (`gt_job`, `candidate_job`,
  `calls_job`, `rerun_job`);
- source_tests: a problem's own test program (`test_code`) run whole against GT (`test_code_job`);
- coverage: the lines and arcs of a function that a suite's calls run, traced in a child (`coverage_job`);
- mutants: GT and its mutants run alike, one child each, the same job but for the program (`alike_jobs`);
- formats: one module per benchmark test format (evalplus, humaneval, asserts, bigcodebench) behind
  `spec_for(problem) -> CheckSpec` and `call_verdicts(spec, results, expected) -> [Verdict]`.
Sandbox jobs are built here (and in codea1.sandbox, for programs on stdin), never by the rooms that use them.
Used by the game, evaluation, `codea1 data check`, decontamination, the Mistake Book and `codea1 exec`.
"""

from __future__ import annotations

from codea1.judge.asserts import Assertion, parse_assert, read_assertion, split_assert
from codea1.judge.calls import decide, run_expecting
from codea1.judge.equality import COMPARISONS, holds, prediction_right, values_equal
from codea1.judge.literals import decode_expected, encode_expected, literal, plain_source
from codea1.judge.oracle import CLEAN_PRELUDE, AssertCase, run_assertions

__all__ = [
    "CLEAN_PRELUDE",
    "COMPARISONS",
    "AssertCase",
    "Assertion",
    "decide",
    "decode_expected",
    "encode_expected",
    "holds",
    "literal",
    "parse_assert",
    "plain_source",
    "prediction_right",
    "read_assertion",
    "run_assertions",
    "run_expecting",
    "split_assert",
    "values_equal",
]
