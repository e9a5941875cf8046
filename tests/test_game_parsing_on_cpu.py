"""Parsing model responses: code extraction and test suites, robust to garbage."""

from codea1.game.parsing import extract_code, extract_test_blocks, nonprintable_share, parse_test_suite


def calls(suite):
    return [(t.call, t.op, t.expected) for t in suite.tests]


def test_extract_code_prefers_python_fence_then_any_fence_then_raw():
    assert extract_code("x\n```\nA\n```\n```python\nB\n```") == "B\n"
    assert extract_code("intro\n```\nA = 1\n```\n") == "A = 1\n"
    assert extract_code("def f(): return 1") == "def f(): return 1"
    assert extract_code("```python\ndef f():\n    return 1") == "def f():\n    return 1"  # unterminated
    assert extract_code("") == ""
    assert extract_code(None) == ""
    assert extract_code(b"```python\nx = '\xff'\n```") == "x = '\ufffd'\n"  # bad UTF-8 bytes


def test_parse_suite_inlines_literals_and_drops_messages():
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
```"""
    suite = parse_test_suite(response, "f")
    assert calls(suite) == [
        ("f([3, 1, 2], 2)", "==", "[1, 2]"),
        ("f([], 0)", "==", "[]"),
        ("f([3, 1, 2], 1)", "is not", "None"),
        ("f(y, 1)", "==", "[1]"),  # y is not a literal: left as is (GT will raise -> invalid)
    ]
    assert suite.unparseable == 0


def test_unparseable_asserts_are_counted_and_others_ignored():
    response = """```python
assert f(1)
assert f(1) < 3
assert 0 < f(1) < 3
assert 1 == 1
print("assert f(9) == 9")
s = '''
assert f(8) == 8
'''
assert f(2) == 4
```"""
    suite = parse_test_suite(response, "f")
    assert calls(suite) == [("f(2)", "==", "4")]
    # no comparison, '<', chained, and a test that never calls f: 4 invalid; asserts in strings are text
    assert suite.unparseable == 4


def test_all_python_blocks_and_test_functions_are_read():
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


def test_truncated_block_and_prose_are_parsed_piecewise():
    response = """```python
assert f(1) == 2
Now some prose (with a bracket
assert f([1,
          2]) == 3
assert f(3) == [1,"""
    suite = parse_test_suite(response, "f")
    assert calls(suite) == [("f(1)", "==", "2"), ("f([1, 2])", "==", "3")]
    assert suite.unparseable == 1  # the cut-off last assert


def test_no_fence_uses_raw_text_and_empty_is_empty():
    assert calls(parse_test_suite("assert f(2) == 3\nassert f(3) == 4", "f")) == [
        ("f(2)", "==", "3"),
        ("f(3)", "==", "4"),
    ]
    empty = parse_test_suite("", "f")
    assert empty.tests == [] and empty.unparseable == 0 and empty.nonprintable == 0.0
    assert parse_test_suite(None, "f").tests == []
    assert extract_test_blocks("no code here") == ["no code here"]


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
    assert len(parse_test_suite(response, "f", max_tests=0).tests) == 50


def test_nonprintable_share():
    assert nonprintable_share("abc\x00") == 0.25
    assert nonprintable_share("a\tb\nc\r") == 0.0
    assert nonprintable_share("\ud800x") == 0.5  # a lone surrogate from broken decoding
    assert nonprintable_share("") == 0.0
    response = "```python\nassert f(1) == 1\n```\x07"
    assert parse_test_suite(response, "f").nonprintable == 1 / len(response)  # one BEL character


def test_random_garbage_never_raises():
    import random

    rng = random.Random(1234)
    pieces = ["```python\n", "```\n", "assert f(", ") == ", "[1, 2", "]", "\n", "x = 3\n", "'''", '"', "\x00",
              "\ud800", "def test_a():\n    ", "if __name__ == '__main__':\n    ", "(", ":", "is not None", "\t"]
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        suite = parse_test_suite(text, "f")
        assert suite.unparseable >= 0 and 0.0 <= suite.nonprintable <= 1.0
        for test in suite.tests:
            assert "f" in test.call
        extract_code(text)
