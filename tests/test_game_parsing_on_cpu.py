"""Parsing model responses: code extraction and test suites, robust to garbage."""

from codea1.game.parsing import (
    extract_code,
    extract_test_blocks,
    nonprintable_share,
    parse_test_suite,
    statement_groups,
)


def calls(suite):
    return [(t.call, t.op, t.expected) for t in suite.tests]


def test_extract_code_prefers_closed_python_fence_then_any_closed_fence_then_raw():
    assert extract_code("x\n```\nA\n```\n```python\nB\n```") == "B"
    assert extract_code("intro\n```\nA = 1\n```\n") == "A = 1"
    assert extract_code("def f(): return 1\n") == "def f(): return 1"
    # a fence that is never closed does not count: the raw text (which does not compile), as the
    # reference code does with a response cut off inside its code block
    assert extract_code("```python\ndef f():\n    return 1") == "```python\ndef f():\n    return 1"
    assert extract_code("") == ""
    assert extract_code(None) == ""
    assert extract_code(b"```python\nx = '\xff'\n```") == "x = '\ufffd'"  # bad UTF-8 bytes


def test_parse_suite_inlines_bare_name_arguments_across_blocks():
    response = """Tests:
```python
from mod import f
x = [3, 1, 2]
k: int = 2
assert f(x, k) == [1, 2], "sorted prefix"
assert f([], 0) == []
assert f(x, 1) is not None
y = compute()
assert f(y, 1) == [1]
assert f([x]) == [1]
assert f(n=x) == 0
```
```python
assert f(x, 0) == []
```"""
    suite = parse_test_suite(response, "f")
    assert calls(suite) == [
        ("f([3, 1, 2], k)", "==", "[1, 2]"),  # an annotated assignment is not remembered
        ("f([], 0)", "==", "[]"),
        ("f([3, 1, 2], 1)", "is not", "None"),
        ("f(compute(), 1)", "==", "[1]"),  # any value is inlined, a call too
        ("f([x])", "==", "[1]"),  # only a bare argument is replaced
        ("f(n=[3, 1, 2])", "==", "0"),  # and a bare keyword value
        ("f([3, 1, 2], 0)", "==", "[]"),  # names carry over to the next block
    ]
    assert suite.unparseable == 0


def test_reference_reading_of_comparisons_and_other_asserts():
    response = """```python
assert f(1)
assert f(1) < 3
assert f(2) in [8, 9]
assert f(2) != 5
assert 0 < f(1) < 3
assert f([3, 4])[0] == 6
assert len([1, 2, 3]) == 3
print("assert f(9) == 9")
assert f(2) == 4
```"""
    suite = parse_test_suite(response, "f")
    # every comparison whose left side is a call is a test (judged later as `==`); an assert that is not
    # a comparison, or whose left side is not a call, is ignored without counting
    assert calls(suite) == [
        ("f(1)", "<", "3"),
        ("f(2)", "in", "[8, 9]"),
        ("f(2)", "!=", "5"),
        ("len([1, 2, 3])", "==", "3"),
        ("f(2)", "==", "4"),
    ]
    assert suite.unparseable == 0


def test_strict_reading_counts_what_reference_ignores():
    response = """```python
assert f(1)
assert 0 < f(1) < 3
assert f([3, 4])[0] == 6
assert len([1, 2, 3]) == 3
assert f([1,
assert f(2) == 4
```"""
    suite = parse_test_suite(response, "f", validity="strict")
    assert calls(suite) == [("f(2)", "==", "4")]
    # not a comparison, left side not a call, a test that never calls f: 4 invalid (a cut-off group is
    # dropped by the line reader before it could be parsed)
    assert suite.unparseable == 4
    assert parse_test_suite(response, "f").unparseable == 0


def test_asserts_in_functions_and_main_blocks_are_read_line_by_line():
    response = """```python
assert f(1) == 1
```
text
```python
def test_more():
    v = 5
    assert f(v) == 25
if __name__ == "__main__":
    assert f(0) == 0
```"""
    assert calls(parse_test_suite(response, "f")) == [
        ("f(1)", "==", "1"),
        ("f(5)", "==", "25"),
        ("f(0)", "==", "0"),
    ]


def test_statement_groups_follow_brackets_and_drop_cut_off_statements():
    text = "assert f(1) == 2\nNow some prose (with a bracket\nassert f([1,\n          2]) == 3\nassert f(3) == [1,"
    assert list(statement_groups(text)) == ["assert f(1) == 2", "assert f([1,\n          2]) == 3"]
    assert list(statement_groups("s = '(' # )\nx = 1")) == ["s = '(' # )", "x = 1"]
    response = "```python\n" + text + "\n```"
    suite = parse_test_suite(response, "f")
    assert calls(suite) == [("f(1)", "==", "2"), ("f([1, 2])", "==", "3")]
    assert suite.unparseable == 0


def test_no_closed_fence_reads_assert_lines_of_the_raw_text():
    suite = parse_test_suite("assert f(2) == 3\nassert f(3) == 4\nassert f(4)\nassertion: f is fine\nx = 1", "f")
    assert calls(suite) == [("f(2)", "==", "3"), ("f(3)", "==", "4")]
    assert suite.unparseable == 2  # on this path every other line starting with "assert" is invalid
    cut = parse_test_suite("```python\nassert f(1) == 1\nassert f(2) ==", "f")  # fence never closed
    assert calls(cut) == [("f(1)", "==", "1")] and cut.unparseable == 1
    empty = parse_test_suite("", "f")
    assert empty.tests == [] and empty.unparseable == 0 and empty.nonprintable == 0.0
    assert parse_test_suite(None, "f").tests == []
    assert extract_test_blocks("no code here") == []
    assert extract_test_blocks("```\nassert f(1) == 1\n```") == ["assert f(1) == 1\n"]  # bare fences count


def test_garbage_is_cheap_and_safe():
    huge = "```python\n" + "(" * 100_000
    assert parse_test_suite(huge, "f").tests == []
    noise = "```python\n" + "blah (\n" * 15_000  # 100k characters of lines that never close
    assert parse_test_suite(noise, "f").tests == []
    deep = "assert f(" + "[" * 5000 + "]" * 5000 + ") == 1"
    parse_test_suite(deep, "f")  # must not raise (recursion limits)


def test_max_tests_limits_what_is_read():
    response = "\n".join(f"assert f({i}) == {i}" for i in range(50))
    assert len(parse_test_suite(response, "f", max_tests=32).tests) == 32
    assert len(parse_test_suite(response, "f").tests) == 50  # the reference code reads them all


def test_nonprintable_share_is_the_reference_codes():
    assert nonprintable_share("abc\x00") == 0.25
    assert nonprintable_share("a\tb\nc\r") == 0.0
    assert nonprintable_share("\ud800x") == 0.5  # a lone surrogate from broken decoding
    assert nonprintable_share("") == 0.0  # the reference code divides by zero here
    assert nonprintable_share("naïve") == 0.2  # outside string.printable, as in the reference code
    response = "```python\nassert f(1) == 1\n```\x07"
    assert parse_test_suite(response, "f").nonprintable == 1 / len(response)  # one BEL character


def test_random_garbage_never_raises():
    import random

    rng = random.Random(1234)
    pieces = [
        "```python\n",
        "```\n",
        "assert f(",
        ") == ",
        "[1, 2",
        "]",
        "\n",
        "x = 3\n",
        "'''",
        '"',
        "\x00",
        "\ud800",
        "def test_a():\n    ",
        "if __name__ == '__main__':\n    ",
        "(",
        ":",
        "is not None",
        "\t",
    ]
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        suite = parse_test_suite(text, "f")
        assert suite.unparseable >= 0 and 0.0 <= suite.nonprintable <= 1.0
        for test in suite.tests:
            assert test.call.startswith("f(")
        extract_code(text)
        parse_test_suite(text, "f", validity="strict")


def test_asserts_python_would_not_run_are_invalid():
    from codea1.game.parsing import parse_test_suite

    text = "```python\nassert f(1) == (yield)\nassert f(2) == 4\nassert f(3) == (await g())\n```"
    for validity in ("reference", "strict"):
        suite = parse_test_suite(text, "f", validity=validity)
        assert [t.statement for t in suite.tests] == ["assert f(2) == 4"] and suite.unparseable == 2
