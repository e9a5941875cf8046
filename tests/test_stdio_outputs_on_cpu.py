"""Output comparison rules of stdio problems (codea1.judge.kinds.outputs): each case's answer is the one the
benchmark's own evaluator gives."""

from __future__ import annotations

import math
import time

import pytest

from codea1.errors import UserError
from codea1.judge.kinds.outputs import RULES, outputs_match, simple_atod

# LiveCodeBench: lcb_runner/evaluation/testing_util.py, grade_stdio (get_stripped_lines,
# convert_line_to_decimals). (got, expected, verdict)
LCB_CASES = [
    ("5\n", "5", True),  # trailing newline
    ("5   \n", "5", True),  # trailing spaces
    ("1\r\n2\r\n", "1\n2\n", True),  # CRLF: each line is stripped
    ("1\n2\n\n\n", "1\n2", True),  # trailing blank lines: the whole text is stripped
    ("\n\n1", "1", True),  # leading blank lines too
    ("1\n\n2", "1\n2", False),  # a blank line inside counts as a line
    ("1\n \n2", "1\n\n2", True),
    ("1\n2\n3", "1\n2", False),  # an extra line
    ("1", "1\n2", False),  # a missing line
    ("1.0", "1", True),  # Decimal equality
    ("1e3", "1000", True),
    ("1E3", "1000.00", True),
    ("+5", "5", True),
    ("-0", "0", True),
    (".5", "0.5", True),
    ("5.", "5", True),
    ("1_000", "1000", True),  # Decimal reads underscores
    ("1.000000001", "1", False),  # no tolerance
    ("0.1 0.2", "0.10 0.20", True),  # every token of the line
    ("1  2", "1 2", True),  # inner spacing: the Decimal lists agree
    ("a  b", "a b", False),  # ... but words are not numbers
    ("1,2", "1 2", False),
    ("1\r2", "1 2", True),  # a lone "\r" inside a line separates tokens
    ("0x10", "16", False),  # no hex
    ("nan", "nan", True),  # equal text
    ("NaN", "nan", False),  # Decimal NaN never equals NaN
    ("sNaN", "snan", False),  # a signalling NaN raises there: the test fails
    ("inf", "Infinity", True),
    ("-inf", "-Infinity", True),
    ("123456789012345678901234567890", "123456789012345678901234567890", True),
    ("50000000000000001", "50000000000000000", False),  # big integers compare exactly
    ("1e999999999999999999999", "1E999999999999999999999", False),  # beyond Decimal's exponents: refused
    ("", "", True),  # an empty output is one empty line
    ("   \n\n", "", True),
    ("", "0", False),
    ("Yes", "YES", False),  # case matters
    ("\u00a05\u00a0", "5", True),  # str.strip removes Unicode spaces too
    ("\u0661\u0662", "12", True),  # Decimal reads Unicode digits
]

# CodeContests: execution/tester_sandboxer.cc, OutputsMatch (SplitAndLowercase, ValuesMatch), with
# absl::SimpleAtod of Abseil 20211102.0. (got, expected, verdict)
CODECONTESTS_CASES = [
    ("5\n", "5", True),
    ("5   ", "5", True),
    ("1\r\n2\r\n", "1\n2", True),
    ("1\n\n2", "1\n2", True),  # blank lines do not count
    ("1 2", "1\n2", True),  # nor does the layout
    ("1\v2\t3", "1 2 3", True),
    ("1\n2\n3", "1\n2", False),  # an extra token
    ("", "", True),
    ("\n \n", "", True),
    ("", "0", False),
    ("YES", "yes", True),  # ASCII letters compare case-insensitively
    ("\u00c4", "\u00e4", False),  # ... others do not
    ("1.0", "1", True),
    ("1e3", "1000", True),
    ("1.000001", "1", True),  # absolute difference below 1e-5
    ("1.00002", "1", False),
    ("0.333333", "0.3333333", True),
    ("10000000000000001", "10000000000000000", True),  # integers compare as doubles
    ("123456789012345678901234567890", "123456789012345678901234567891", True),
    ("-0", "0", True),
    ("+5", "5", True),
    ("+-5", "-5", False),
    ("0x10", "16", True),  # SimpleAtod reads hex floats
    ("0x1p-1", "0.5", True),
    ("1_000", "1000", False),
    ("1,5", "1.5", False),
    ("1e", "1e", True),  # not numbers: equal text
    ("1e", "1", False),
    ("nan", "NaN", True),  # equal token lists pass at once
    ("nan 1.0", "nan 1", False),  # ... else NaN matches nothing
    ("inf", "INF", True),
    ("inf 1.0", "inf 1", False),
    ("1e400", "inf", False),  # out of range is infinite, and inf - inf is NaN
    ("1\f", "1", True),  # form feed is no separator, but SimpleAtod strips it
    ("a\fb", "a b", False),
]


@pytest.mark.parametrize(("got", "expected", "verdict"), LCB_CASES)
def test_lcb_rule(got: str, expected: str, verdict: bool) -> None:
    ok, why = outputs_match(got, expected, "lcb")
    assert ok is verdict
    assert (why == "") is verdict


@pytest.mark.parametrize(("got", "expected", "verdict"), CODECONTESTS_CASES)
def test_codecontests_rule(got: str, expected: str, verdict: bool) -> None:
    ok, why = outputs_match(got, expected, "codecontests")
    assert ok is verdict
    assert (why == "") is verdict


def test_reasons_name_the_place_and_are_short() -> None:
    assert outputs_match("1\n2\n6", "1\n2\n5", "lcb") == (False, "line 3: expected '5', got '6'")
    assert outputs_match("1\n2", "1", "lcb") == (False, "expected 1 lines, got 2")
    assert outputs_match("1 2 x", "1 2 y", "codecontests") == (False, "token 3: expected 'y', got 'x'")
    assert outputs_match("1 2", "1", "codecontests") == (False, "expected 1 tokens, got 2")
    for rule in RULES:
        ok, why = outputs_match("a" * 10_000, "b" * 10_000, rule)
        assert not ok and len(why) <= 200


def test_unknown_rule_is_a_user_error() -> None:
    with pytest.raises(UserError, match="unknown"):
        outputs_match("1", "1", "exact")


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("7", 7.0),
        ("-2.5e-1", -0.25),
        ("+.5", 0.5),
        ("5.", 5.0),
        ("0X1A", 26.0),
        ("-0x1.8p1", -3.0),
        ("0x1p99999", float("inf")),
        ("-1e400", float("-inf")),
        ("1e-400", 0.0),
        ("Infinity", float("inf")),
        ("infinit", None),
        ("nan(ab_1)", "nan"),
        ("nan(", None),
        ("0x", None),
        ("0xinf", None),
        ("00x1", None),
        (".", None),
        ("e5", None),
        ("1e+", None),
        ("1..2", None),
        ("\u0661", None),  # ASCII digits only
    ],
)
def test_simple_atod(token: str, value: float | str | None) -> None:
    got = simple_atod(token)
    if value == "nan":
        assert got is not None and math.isnan(got)
    else:
        assert got == value


@pytest.mark.parametrize("rule", RULES)
def test_megabyte_outputs_take_linear_time(rule: str) -> None:
    lines = "\n".join(f"{i} {i * 0.5} word{i}" for i in range(100_000))  # about 2.4 MB
    start = time.perf_counter()
    assert outputs_match(lines + "\n", lines, rule) == (True, "")
    assert not outputs_match(lines.replace("word99999", "word9999"), lines, rule)[0]
    digits = "9" * 1_000_000  # one huge number, and a run of spaces
    assert outputs_match(digits + " " * 1_000_000, digits, rule)[0]
    assert time.perf_counter() - start < 20


def test_a_line_with_another_token_count_fails_without_converting_its_tokens(monkeypatch) -> None:
    """Round 6: one 900,000-character line of 449,999 tokens against an expected "7" cost the parent about
    0.5 s per input, converting every token to a Decimal before the lists' lengths decided the line. Lists of
    other lengths never compare equal, so the count decides first: the same verdict and reason, no conversion."""
    from codea1.judge.kinds import outputs

    flood = " ".join(["1"] * 449_999)
    verdict = outputs.outputs_match(flood, "7", "lcb")
    calls = []
    monkeypatch.setattr(outputs, "_lcb_decimals", lambda line: calls.append(line) or None)
    assert outputs.outputs_match(flood, "7", "lcb") == verdict and verdict[0] is False
    assert calls == []
    assert outputs.outputs_match("1 2", "1 3", "lcb")[0] is False and calls  # equal counts still compare values
