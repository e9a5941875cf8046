"""What one response costs the trusted parent to parse, counted (never timed): the work grows at most
linearly with the response, on the inputs that made the old fence and string regexes quadratic.

Work is counted as (1) every Python line executed during the call, in any module but this one (the
parser, `ast.unparse`, the judge's helpers), plus (2) the steps of a backtracking regex matcher run on
every pattern of codea1.game.parsing, on the same text and positions as the real engine (the matcher is
checked against the real match on every call, so a count is of the search the real engine makes).
C string methods that make one pass over their argument (split, strip, count, join) are not counted.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Callable
from re import _constants as C
from re import _parser as sre_parse

import pytest

from codea1.game import parsing
from codea1.game.parsing import extract_code, parse_test_suite
from codea1.judge.literals import literal

HERE = __file__
GROWTH = 2.2  # most work allowed per doubling of the response (linear: 2)
SIZES = (2000, 4000, 8000)


class TooMuchWork(BaseException):
    """Raised once the count passes its limit (the old code's quadratic searches would take minutes)."""


# -- a backtracking matcher over re's own parse of a pattern, counting its steps --------------------------


class Steps:
    def __init__(self, limit: int) -> None:
        self.n, self.limit = 0, limit

    def add(self, k: int = 1) -> None:
        self.n += k
        if self.n > self.limit:
            raise TooMuchWork


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _char_ok(item: tuple, ch: str, flags: int) -> bool:
    op, av = item
    fold = (lambda c: c.lower()) if flags & re.IGNORECASE else (lambda c: c)
    if op is C.ANY:
        return bool(flags & re.DOTALL) or ch != "\n"
    if op is C.LITERAL:
        return fold(ch) == fold(chr(av))
    if op is C.NOT_LITERAL:
        return fold(ch) != fold(chr(av))
    assert op is C.IN, op
    negate, hit = False, False
    for sub_op, sub_av in av:
        if sub_op is C.NEGATE:
            negate = True
        elif sub_op is C.LITERAL:
            hit = hit or fold(ch) == fold(chr(sub_av))
        elif sub_op is C.RANGE:
            hit = hit or sub_av[0] <= ord(ch) <= sub_av[1]
        else:
            raise AssertionError(f"class item {sub_op} not modelled")
    return hit != negate


def _single(sub: list) -> bool:
    return len(sub) == 1 and sub[0][0] in (C.ANY, C.LITERAL, C.NOT_LITERAL, C.IN)


def _match(items: list, k: int, text: str, pos: int, end: int, flags: int, cont: Callable, steps: Steps):
    """Matches items[k:] at pos, then cont(position); the final end position or None. One step per node
    tried, per character a repeat looks at, and per way back a repeat gives up."""
    steps.add()
    if k == len(items):
        return cont(pos)
    op, av = items[k]

    def nxt(p: int):
        return _match(items, k + 1, text, p, end, flags, cont, steps)

    if op in (C.ANY, C.LITERAL, C.NOT_LITERAL, C.IN):
        return nxt(pos + 1) if pos < end and _char_ok(items[k], text[pos], flags) else None
    if op is C.AT:
        assert av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY), av
        left = pos > 0 and _is_word(text[pos - 1])
        right = pos < len(text) and _is_word(text[pos])
        return nxt(pos) if (left != right) == (av is C.AT_BOUNDARY) else None
    if op is C.SUBPATTERN:
        return _match(av[3], 0, text, pos, end, flags, nxt, steps)
    if op in (C.ASSERT, C.ASSERT_NOT):
        assert av[0] == 1, "lookbehind not modelled"
        seen = _match(av[1], 0, text, pos, len(text), flags, lambda p: p, steps) is not None
        return nxt(pos) if seen == (op is C.ASSERT) else None
    if op is C.BRANCH:
        for alt in av[1]:
            res = _match(alt, 0, text, pos, end, flags, nxt, steps)
            if res is not None:
                return res
        return None
    assert op in (C.MAX_REPEAT, C.MIN_REPEAT), f"{op} not modelled"
    lo, hi, sub = av
    if _single(sub):
        return _repeat_one(op is C.MAX_REPEAT, lo, hi, sub[0], text, pos, end, flags, nxt, steps)
    return _repeat(op is C.MAX_REPEAT, lo, hi, sub, text, pos, end, flags, nxt, steps, 0)


def _repeat_one(greedy, lo, hi, item, text, pos, end, flags, nxt, steps):
    if greedy:
        n = 0
        while (hi is C.MAXREPEAT or n < hi) and pos + n < end and _char_ok(item, text[pos + n], flags):
            n += 1
        steps.add(n)
        for c in range(n, lo - 1, -1):
            steps.add()
            res = nxt(pos + c)
            if res is not None:
                return res
        return None
    c = 0
    while True:
        if c >= lo:
            res = nxt(pos + c)
            if res is not None:
                return res
        if (hi is not C.MAXREPEAT and c >= hi) or pos + c >= end or not _char_ok(item, text[pos + c], flags):
            return None
        steps.add()
        c += 1


def _repeat(greedy, lo, hi, sub, text, pos, end, flags, nxt, steps, count):
    more = hi is C.MAXREPEAT or count < hi

    def again(p: int):
        return _repeat(greedy, lo, hi, sub, text, p, end, flags, nxt, steps, count + 1) if p > pos else None

    if not greedy and count >= lo:
        res = nxt(pos)
        if res is not None:
            return res
    if more:
        res = _match(sub, 0, text, pos, end, flags, again, steps)
        if res is not None:
            return res
    return nxt(pos) if greedy and count >= lo else None


class CountedPattern:
    """A compiled pattern of the parser, answering as itself, with each search's steps counted."""

    def __init__(self, real: re.Pattern, steps: Steps) -> None:
        self.real, self.steps = real, steps
        parsed = sre_parse.parse(real.pattern, real.flags)
        self.items, self.flags = list(parsed.data), parsed.state.flags

    def _search(self, text: str, pos: int, end: int, anchored: bool) -> tuple[int, int] | None:
        tracer = sys.gettrace()
        sys.settrace(None)
        try:
            for start in range(pos, end + 1):
                stop = _match(self.items, 0, text, start, end, self.flags, lambda p: p, self.steps)
                if stop is not None:
                    return start, stop
                if anchored:
                    return None
            return None
        finally:
            sys.settrace(tracer)

    def _checked(self, text: str, pos: int, end: int, anchored: bool):
        real = (self.real.match if anchored else self.real.search)(text, pos, end)
        assert self._search(text, pos, min(end, len(text)), anchored) == (real and real.span())
        return real

    def search(self, text, pos=0, endpos=sys.maxsize):
        return self._checked(text, pos, endpos, False)

    def match(self, text, pos=0, endpos=sys.maxsize):
        return self._checked(text, pos, endpos, True)

    def finditer(self, text, pos=0, endpos=sys.maxsize):
        while pos <= min(endpos, len(text)):
            found = self._checked(text, pos, endpos, False)
            if found is None:
                return
            yield found
            pos = found.end() if found.end() > found.start() else found.end() + 1

    def findall(self, text, pos=0, endpos=sys.maxsize):
        found = list(self.finditer(text, pos, endpos))
        assert [m.group(self.real.groups and 1) for m in found] == self.real.findall(text, pos, endpos)
        return self.real.findall(text, pos, endpos)

    def sub(self, repl, text, count=0):
        assert count == 0 and isinstance(repl, str)
        list(self.finditer(text))
        return self.real.sub(repl, text)


def work(monkeypatch, limit: int, fn: Callable, *args) -> int:
    """The work of fn(*args): Python lines run outside this file plus counted regex steps."""
    steps = Steps(limit)
    with monkeypatch.context() as patch:
        for name, value in vars(parsing).items():
            if isinstance(value, re.Pattern):
                patch.setattr(parsing, name, CountedPattern(value, steps))

        def local(frame, event, arg):
            if event == "line":
                steps.add()
            return local

        def calls(frame, event, arg):
            if frame.f_code.co_filename == HERE:
                return None
            steps.add()
            return local

        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 100_000))
        sys.settrace(calls)
        try:
            fn(*args)
        finally:
            sys.settrace(None)
            sys.setrecursionlimit(old_limit)
    return steps.n


# -- responses that made the old parser quadratic, and ordinary ones ------------------------------------

FAMILIES = {
    "one line of backticks": lambda n: "`" * n,
    "python fences on one line": lambda n: "```python" * (n // 9),
    "an opened fence never closed": lambda n: "`" * (n // 2) + "\n" + "a" * (n // 2),
    "double quotes never closed": lambda n: "```python\n" + '"' + '\\"' * (n // 2) + "\n```",
    "single quotes never closed": lambda n: "```python\nx = 1\n'" + "\\'" * (n // 2) + "\n```",
    "one value inlined into every test": lambda n: (
        "```python\nx = [" + "1," * (n // 4) + "]\n" + "assert f(x) == 1\n" * (n // 34) + "```"
    ),
    "an ordinary suite": lambda n: "```python\n" + "assert f([1, 2], 'a') == 3  # ok\n" * (n // 34) + "```",
    "ordinary raw asserts": lambda n: "Tests:\n" + 'assert f(1, "(") == [2]\n' * (n // 24),
}
PARSERS = {"parse_test_suite": lambda t: parse_test_suite(t, "f"), "extract_code": extract_code}


def growth(monkeypatch, parse: Callable, build: Callable, sizes: tuple[int, ...] = SIZES) -> list[int | None]:
    """The work at each size; None where it passed GROWTH times the work at the size before."""
    counts: list[int | None] = []
    for n in sizes:
        limit = int(GROWTH * counts[-1]) if counts and counts[-1] else 50_000_000
        try:
            counts.append(work(monkeypatch, limit, parse, build(n)))
        except TooMuchWork:
            counts.append(None)
            break
    return counts


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("family", FAMILIES)
def test_parsing_work_grows_at_most_linearly(monkeypatch, parser, family):
    counts = growth(monkeypatch, PARSERS[parser], FAMILIES[family])
    print(f"{parser} / {family}: work at n={SIZES} -> {counts}")
    assert None not in counts and len(counts) == len(SIZES), f"work grew faster than linearly: {counts}"
    for before, after in itertools.pairwise(counts):
        assert after <= GROWTH * before, counts


def test_the_counter_sees_a_quadratic_search(monkeypatch):
    """The counter itself: a search that backtracks over the whole line from every start is caught."""
    monkeypatch.setattr(parsing, "_PROBE", re.compile(r"a[^\n]*\nb"), raising=False)
    counts = growth(monkeypatch, lambda t: parsing._PROBE.search(t), lambda n: "a" * n + "\n", (100, 200, 400))
    assert None in counts
    assert growth(monkeypatch, lambda t: parsing._PROBE.search(t), lambda n: "a" * n + "\nb", (100, 200, 400))[0]


# -- the caps -----------------------------------------------------------------------------------------


def test_a_response_is_read_up_to_the_cap():
    cap = 1 << 20
    tail = "```python\nassert f(1) == 2\n```"
    assert parse_test_suite("x" * (cap - len(tail)) + tail, "f").tests  # within the cap: read
    assert not parse_test_suite("x" * cap + tail, "f").tests  # past it: never seen
    assert len(extract_code("y" * (cap + 10))) == cap
    assert len(extract_code(b"\xff" * (5 * cap))) == cap  # bytes: replacement characters, cut the same

    from codea1.game.parsing import MAX_RESPONSE_CHARS

    assert MAX_RESPONSE_CHARS == cap


def test_inlined_values_stop_at_the_suite_budget():
    value = "[" + "1, " * 2000 + "1]"
    response = f"```python\nx = {value}\n" + "assert f(x) == 1\n" * 1000 + "```"
    suite = parse_test_suite(response, "f")
    assert 0 < len(suite.tests) < 1000  # each test would carry 6,000 characters: 6 million in all
    assert suite.unparseable == 0  # the tests past the budget are not read, as past max_tests
    few = f"```python\nx = {value}\n" + "assert f(x) == 1\n" * 8 + "```"
    assert len(parse_test_suite(few, "f").tests) == 8  # an ordinary suite is far from it

    from codea1.game.parsing import suite_budget

    held = sum(len(t.call) + len(t.expected) for t in suite.tests)
    assert suite_budget(len(response)) - len(suite.tests[0].call) - 5 < held <= suite_budget(len(response))


def test_a_literal_past_its_cap_is_left_to_the_sandbox():
    cap = 1 << 20
    assert literal("[" + "1, " * 100 + "1]") == (True, [1] * 101)
    at_cap = "(" + " " * (cap - 3) + "1)"
    assert len(at_cap) == cap and literal(at_cap) == (True, 1)
    assert literal(" " + at_cap) == (False, None)  # refused before parsing: evaluated, if at all, in a child

    from codea1.judge.literals import MAX_LITERAL_CHARS

    assert MAX_LITERAL_CHARS == cap


# -- the same results as the regexes they replace -------------------------------------------------------

OLD_PY_FENCE = re.compile(r"```[ \t]*(?:python3?|py)\b[^\n]*\n(.*?)```", re.IGNORECASE | re.DOTALL)
OLD_ANY_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
OLD_STRINGS_AND_COMMENTS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#.*')


def test_the_scans_read_what_the_old_regexes_read():
    import random

    rng = random.Random(5)
    pieces = ["`", "```", "```python", "```Py3", "```py", "```PYTHON3 x", "``` \tpython", "```pythonic", "\n"]
    pieces += ["a", " ", "\t", "_", "é", "3", '"', "'", "\\", "#", "(", "]"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        old_code = OLD_PY_FENCE.search(text) or OLD_ANY_FENCE.search(text)
        assert extract_code(text) == (old_code.group(1) if old_code else text).strip("\n"), text
        assert parsing.extract_test_blocks(text) == (OLD_PY_FENCE.findall(text) or OLD_ANY_FENCE.findall(text)), text
        for line in text.split("\n"):
            assert parsing._without_strings_and_comments(line) == OLD_STRINGS_AND_COMMENTS.sub("", line), line
