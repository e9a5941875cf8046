"""Output comparison rules of stdin/stdout benchmarks: whether a program's stdout matches the expected one.

    ok, why = outputs_match(got, expected, "lcb")     # why: "" when ok, else a short reason

Each rule reproduces one benchmark's own evaluator, quirks included, so a verdict here is the verdict there:

- "lcb": LiveCodeBench, `grade_stdio` in lcb_runner/evaluation/testing_util.py (with its helpers
  `get_stripped_lines` and `convert_line_to_decimals`). Both texts are stripped (`str.strip`, every Unicode
  whitespace), split on "\\n" only, and each line stripped again; the numbers of lines must be equal. Line by
  line: equal text passes; else both lines are split on whitespace and every token converted by
  `decimal.Decimal` (so "1.0" = "1", "1e3" = "1000", "1_000" = "1000"), and the two lists must be equal; a
  token Decimal refuses fails the line ("nan" against "NaN": NaN is never equal, a signalling NaN raises,
  which fails the test there too). An empty output is one empty line.
- "codecontests": DeepMind's CodeContests, `OutputsMatch` in execution/tester_sandboxer.cc (with
  `SplitAndLowercase` and `ValuesMatch`). Both texts are split on " \\n\\t\\r\\v" (not form feed), empty
  tokens dropped, ASCII letters lowered; equal token lists pass; lists of different lengths fail; else every
  pair must match: when either token is not a number to `absl::SimpleAtod` (Abseil 20211102.0, the pinned
  version) the tokens must be equal; two numbers must differ by less than 1e-5 (absolute; integers too,
  as doubles, so 10**17 and 10**17 + 1 match; "nan" or "inf" match only where the whole lists are equal).
  SimpleAtod takes an optional "+" or "-", decimal digits with an optional "." and e-exponent, a "0x" hex
  float with an optional p-exponent, "inf", "infinity", "nan" and "nan(chars)"; a run of 50,000,000 or more
  digits (12,500,000 hex digits) is not a number; out-of-range values are infinite.

Both cost time linear in the sizes of the texts (str methods and one pass over the lines or tokens; no
regular expressions).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation, localcontext

from codea1.errors import UserError

RULES = ("lcb", "codecontests")
REASON_CHARS = 200  # a reason is at most this long
_SHOWN = 70  # characters of a line or token shown in a reason

__all__ = ["RULES", "outputs_match"]


def outputs_match(got: str, expected: str, rule: str) -> tuple[bool, str]:
    """Whether `got` (a program's stdout) matches `expected` by `rule` (one of RULES), and when it does not,
    a short reason ("line 3: expected '5', got '6'")."""
    if rule == "lcb":
        return _lcb(got, expected)
    if rule == "codecontests":
        return _codecontests(got, expected)
    raise UserError(f"output rule {rule!r} is unknown; use one of: {', '.join(RULES)}")


def _shown(text: str) -> str:
    """A line or token as a reason shows it: quoted, cut short."""
    return repr(text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "...")


def _reason(where: str, expected: str, got: str) -> str:
    """ "WHERE: expected X, got Y", at most REASON_CHARS long."""
    reason = f"{where}: expected {_shown(expected)}, got {_shown(got)}"
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 3] + "..."


# ------------------------------------------------------------------------------------------ LiveCodeBench


def _lcb_lines(text: str) -> list[str]:
    """get_stripped_lines: the text stripped, split on "\\n", each line stripped."""
    return [line.strip() for line in text.strip().split("\n")]


def _lcb_decimals(line: str) -> list[Decimal] | None:
    """convert_line_to_decimals: a Decimal per whitespace-separated token, or None when one is refused."""
    try:
        return [Decimal(token) for token in line.split()]
    except Exception:  # noqa: BLE001  (the evaluator's bare except: any refusal fails the line)
        return None


def _lcb(got: str, expected: str) -> tuple[bool, str]:
    """LiveCodeBench's grade_stdio comparison of one output (see the module doc)."""
    got_lines, expected_lines = _lcb_lines(got), _lcb_lines(expected)
    if len(got_lines) != len(expected_lines):
        return False, f"expected {len(expected_lines)} lines, got {len(got_lines)}"
    with localcontext() as context:  # Decimal refuses a malformed token by raising, whatever the caller set
        context.traps[InvalidOperation] = True
        for number, (mine, theirs) in enumerate(zip(got_lines, expected_lines, strict=True), 1):
            if mine == theirs:
                continue
            if len(mine.split()) != len(theirs.split()):  # lists of other lengths never compare equal: the
                return False, _reason(f"line {number}", theirs, mine)  # same verdict, without converting a token
            mine_values, their_values = _lcb_decimals(mine), _lcb_decimals(theirs)
            try:
                same = mine_values is not None and their_values is not None and mine_values == their_values
            except InvalidOperation:  # a signalling NaN compared: the evaluator raises, the test fails
                same = False
            if not same:
                return False, _reason(f"line {number}", theirs, mine)
    return True, ""


# -------------------------------------------------------------------------------------------- CodeContests

_CC_SEPARATORS = " \n\t\r\v"  # absl::ByAnyChar in SplitAndLowercase: form feed is not a separator
_CC_TABLE = str.maketrans({**{c: " " for c in _CC_SEPARATORS}, **{chr(c): chr(c + 32) for c in range(65, 91)}})
_ASCII_SPACE = " \t\n\v\f\r"  # absl::ascii_isspace, stripped by SimpleAtod
_DIGITS = frozenset("0123456789")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_NAN_CHARS = frozenset("_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DECIMAL_DIGIT_LIMIT = 50_000_000  # absl charconv_parse.cc kDecimalDigitLimit
_HEX_DIGIT_LIMIT = _DECIMAL_DIGIT_LIMIT // 4  # kHexadecimalDigitLimit
_CC_TOLERANCE = 1e-5  # ValuesMatch's kDoublePrecision


def _cc_tokens(text: str) -> list[str]:
    """SplitAndLowercase: the tokens between separators, ASCII letters lowered."""
    return [token for token in text.translate(_CC_TABLE).split(" ") if token]


def _codecontests(got: str, expected: str) -> tuple[bool, str]:
    """CodeContests' OutputsMatch (see the module doc)."""
    got_tokens, expected_tokens = _cc_tokens(got), _cc_tokens(expected)
    if got_tokens == expected_tokens:
        return True, ""
    if len(got_tokens) != len(expected_tokens):
        return False, f"expected {len(expected_tokens)} tokens, got {len(got_tokens)}"
    for number, (mine, theirs) in enumerate(zip(got_tokens, expected_tokens, strict=True), 1):
        if not _cc_values_match(mine, theirs):
            return False, _reason(f"token {number}", theirs, mine)
    return True, ""


def _cc_values_match(a: str, b: str) -> bool:
    """ValuesMatch: equal text unless both are numbers to SimpleAtod, then closer than 1e-5. (Its separate
    integer branch is never reached: every token SimpleAtoi reads, SimpleAtod reads too.)"""
    x, y = simple_atod(a), simple_atod(b)
    if x is None or y is None:
        return a == b
    return abs(x - y) < _CC_TOLERANCE


def simple_atod(token: str) -> float | None:
    """The double `absl::SimpleAtod` (Abseil 20211102.0) reads from `token`, or None where it fails."""
    text = token.strip(_ASCII_SPACE)
    if text.startswith("+"):
        text = text[1:]
        if text.startswith("-"):
            return None
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    if len(text) >= 2 and text[0] == "0" and text[1] in "xX":
        value = _hex_float(text[2:])  # a failed hex float reads as "0" followed by the rest: not a number
    else:
        value = _special_float(text)
        if value is None:
            value = _decimal_float(text)
    if value is None:
        return None
    return -value if negative else value


def _special_float(text: str) -> float | None:
    """absl's ParseInfinityOrNan, when it consumes the whole text: "inf", "infinity", "nan", "nan(chars)"
    (any case; chars: ASCII letters, digits, "_")."""
    head, rest = text[:3].lower(), text[3:]
    if head == "inf" and rest.lower() in ("", "inity"):
        return math.inf
    if head == "nan" and (not rest or rest[0] == "(" and rest[-1] == ")" and _NAN_CHARS.issuperset(rest[1:-1])):
        return math.nan
    return None


def _mantissa_ok(mantissa: str, digits: frozenset[str], limit: int) -> bool:
    """absl's ParseFloat mantissa: digits, an optional "." and digits, at least one digit in all, and no run
    of `limit` or more digits (leading zeros are skipped; while no non-zero digit came before the point,
    zeros just after it are skipped and counted on their own)."""
    whole, point, fraction = mantissa.partition(".")
    if not (whole or fraction) or not digits.issuperset(whole) or not digits.issuperset(fraction):
        return False
    significant = whole.lstrip("0")
    if len(significant) >= limit:
        return False
    if point and not significant:
        rest = fraction.lstrip("0")
        return len(fraction) - len(rest) < limit and len(rest) < limit
    return len(fraction) < limit


def _exponent_ok(exponent: str) -> bool:
    """An exponent's text after its letter: an optional sign, then at least one ASCII digit."""
    digits = exponent[1:] if exponent[:1] in ("+", "-") else exponent
    return bool(digits) and _DIGITS.issuperset(digits)


def _decimal_float(text: str) -> float | None:
    """absl's decimal from_chars, when it consumes the whole text; out of range: 0 or infinite."""
    cut = min((i for i in (text.find("e"), text.find("E")) if i >= 0), default=-1)
    mantissa, exponent = (text, None) if cut < 0 else (text[:cut], text[cut + 1 :])
    if not _mantissa_ok(mantissa, _DIGITS, _DECIMAL_DIGIT_LIMIT):
        return None
    if exponent is not None and not _exponent_ok(exponent):
        return None
    return float(text)  # validated ASCII: Python's correctly rounded conversion, as absl's


def _hex_float(text: str) -> float | None:
    """absl's hex from_chars after "0x", when it consumes the whole text; out of range: 0 or infinite."""
    cut = min((i for i in (text.find("p"), text.find("P")) if i >= 0), default=-1)
    mantissa, exponent = (text, None) if cut < 0 else (text[:cut], text[cut + 1 :])
    if not _mantissa_ok(mantissa, _HEX_DIGITS, _HEX_DIGIT_LIMIT):
        return None
    if exponent is not None and not _exponent_ok(exponent):
        return None
    try:
        return float.fromhex("0x" + text)
    except OverflowError:
        return math.inf
