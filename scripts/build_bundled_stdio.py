"""Builds `stdio.jsonl`, the stdin/stdout problem set shipped inside codea1 (run from the repository root):

    python scripts/build_bundled_stdio.py              # writes codea1/data/bundled/stdio.jsonl
    python scripts/build_bundled_stdio.py --check      # only verifies the file is up to date
    python scripts/build_bundled_stdio.py --skip-cpp   # no g++ at hand: the C++ GTs are not cross-checked

Every problem here was written for this project. Each one is a task statement (with Input, Output and one
worked example), a Python ground-truth (GT) program, some also a C++17 GT, and at least five hand-written
test inputs; the first input is the statement's example, whose output was worked out by hand and is
checked against the GT's. The expected outputs of all tests are what the Python GT prints (trusted code
written here, run with `subprocess`); where a problem has a C++ GT too, it is compiled with
`g++ -std=c++17 -O2` and must print exactly the same bytes on every input, or the build fails.

Ids are "bundled-stdio/NNNN" in list order (0000, 0001, ...); a problem with a C++ GT has a second record
"bundled-stdio-cpp/NNNN" (same NNNN, same tests, same split) whose language is "cpp". A record's prompt
is the statement alone: the code prompt adds the language and its fence (codea1.game.prompts). Difficulty rises
along the list: one-step tasks ("easy"), then loops with edge cases ("medium"), then algorithmic ones
("hard"). Split rule (fixed): an odd NNNN is in the held-out "eval" half, an even one in "train".
Inputs stay under 2 KB, except at most two larger ones (up to about 50 KB) per hard problem.

This file is a development tool; the package ships only the JSONL it writes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from codea1.problem import Problem

OUTPUT = Path(__file__).resolve().parents[1] / "codea1" / "data" / "bundled" / "stdio.jsonl"
SMALL_INPUT = 2048  # bytes: every input is smaller ...
LARGE_INPUT = 60_000  # ... except at most MAX_LARGE inputs of a hard problem, which stay under this
MAX_LARGE = 2
SLOW_RUN_S = 2.0  # a GT run slower than this fails the build (they take well under 0.5 s on a quiet machine)
WORKERS = 2


@dataclass(frozen=True)
class Task:
    """One problem's source.

    title / text: the statement's heading and its task paragraph.
    input / output: the statement's Input and Output sections.
    example: (input, output) of the worked example, the output worked out by hand; it is the first test.
    tests: the other test inputs.
    python / cpp: the GT programs (cpp "" when the problem has no C++ GT).
    """

    title: str
    text: str
    input: str
    output: str
    example: tuple[str, str]
    tests: tuple[str, ...]
    python: str
    cpp: str = ""

    @property
    def inputs(self) -> list[str]:
        return [self.example[0], *self.tests]


# deterministic inputs for the larger tests (a fixed LCG, so they never change with Python's `random`)


def _draws(seed: int) -> Iterator[int]:
    """An endless stream of pseudo-random 31-bit numbers, the same for the same seed everywhere."""
    state = seed
    while True:
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        yield state >> 33


def _ints(seed: int, count: int, lo: int, hi: int) -> list[int]:
    """`count` pseudo-random integers in [lo, hi]."""
    draws = _draws(seed)
    return [lo + next(draws) % (hi - lo + 1) for _ in range(count)]


def _line(values: list[int]) -> str:
    return " ".join(map(str, values)) + "\n"


def _range_sums_big() -> str:
    n, q = 3000, 2500
    values = _ints(1, n, -1_000_000, 1_000_000)
    ends = _ints(2, 2 * q, 1, n)
    queries = "".join(f"{min(a, b)} {max(a, b)}\n" for a, b in zip(ends[::2], ends[1::2], strict=True))
    return f"{n}\n{_line(values)}{q}\n{queries}"


def _maze_random() -> str:
    size = 200
    cells = ["#" if v % 100 < 28 else "." for v in _ints(3, size * size, 0, 99)]
    cells[0], cells[-1] = "S", "T"
    rows = ["".join(cells[r * size : (r + 1) * size]) for r in range(size)]
    return f"{size} {size}\n" + "".join(row + "\n" for row in rows)


def _maze_snake() -> str:
    rows = []
    for r in range(199):
        if r % 2 == 0:
            rows.append("." * 200)
        elif r % 4 == 1:
            rows.append("#" * 199 + ".")
        else:
            rows.append("." + "#" * 199)
    rows[0] = "S" + rows[0][1:]
    rows[-1] = rows[-1][:-1] + "T"
    return "199 200\n" + "".join(row + "\n" for row in rows)


def _leaderboard_big() -> str:
    draws = _draws(4)
    names: dict[str, None] = {}
    while len(names) < 1000:
        names["".join(chr(97 + next(draws) % 26) for _ in range(3 + next(draws) % 5))] = None
    scores = _ints(5, 1000, 0, 60)
    return "1000\n" + "".join(f"{name} {score}\n" for name, score in zip(names, scores, strict=True))


def _numbers_big(seed: int, n: int, lo: int, hi: int, head: str = "") -> str:
    """`n` on a line (after `head`, if any, on the same line), then n pseudo-random integers in [lo, hi]."""
    first = f"{n} {head}".strip()
    return f"{first}\n{_line(_ints(seed, n, lo, hi))}"


def _brackets_big(seed: int, broken: bool) -> str:
    draws = _draws(seed)
    opening, closing = "([{", ")]}"
    out: list[str] = []
    stack: list[int] = []
    while len(out) + len(stack) < 50_000:
        if stack and (next(draws) % 2 or len(stack) > 3000):
            out.append(closing[stack.pop()])
        else:
            stack.append(next(draws) % 3)
            out.append(opening[stack[-1]])
    out.extend(closing[k] for k in reversed(stack))
    if broken:
        out[-1] = "]" if out[-1] != "]" else ")"
    return "".join(out) + "\n"


def _islands_big() -> str:
    size = 200
    cells = ["#" if v % 100 < 45 else "." for v in _ints(6, size * size, 0, 99)]
    return f"{size} {size}\n" + "".join("".join(cells[r * size : (r + 1) * size]) + "\n" for r in range(size))


def _task_order_big() -> str:
    n, m = 2000, 4500
    rank = _ints(7, n, 0, 10**9)  # tasks ordered by (rank, number): every edge goes forward, so no cycle
    ends = _ints(8, 2 * m, 1, n)
    edges = []
    for a, b in zip(ends[::2], ends[1::2], strict=True):
        if a != b:
            u, v = sorted((a, b), key=lambda t: (rank[t - 1], t))
            edges.append(f"{u} {v}\n")
    return f"{n} {len(edges)}\n" + "".join(edges)


def _roads_big() -> str:
    n, m = 1000, 3000
    ends = _ints(9, 2 * m, 1, n)
    weights = _ints(10, m, 1, 1_000_000)
    roads = [f"{a} {b} {w}\n" for a, b, w in zip(ends[::2], ends[1::2], weights, strict=True) if a != b]
    return f"{n} {len(roads)}\n" + "".join(roads)


def _items_big() -> str:
    weights, values = _ints(23, 100, 1, 120), _ints(24, 100, 0, 1_000_000)
    return "100 1000\n" + "".join(f"{w} {v}\n" for w, v in zip(weights, values, strict=True))


def _intervals_big() -> str:
    n = 1000
    starts = _ints(11, n, 0, 998_000_000)
    lengths = _ints(12, n, 0, 2_000_000)
    return f"{n}\n" + "".join(f"{s} {s + k}\n" for s, k in zip(starts, lengths, strict=True))


# The problems, easiest first; each list names the difficulty of its problems.
EASY = [
    Task(
        title="Sum of two integers",
        text="Read two integers and print their sum.",
        input="One line with two integers a and b separated by a space (-10^18 <= a, b <= 10^18).",
        output="One line with the value of a + b.",
        example=("3 4\n", "7\n"),
        tests=(
            "0 0\n",
            "-5 5\n",
            "-7 2\n",
            "1000000000000000000 1000000000000000000\n",
            "-1000000000000000000 -1\n",
        ),
        python=r"""
a, b = map(int, input().split())
print(a + b)
""",
        cpp=r"""
#include <iostream>

int main() {
    long long a, b;
    std::cin >> a >> b;
    std::cout << a + b << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Reverse a line",
        text="Print a line of text backwards, character by character.",
        input=(
            "One line of at most 1000 printable ASCII characters (letters, digits, punctuation and spaces). "
            "The line may be empty."
        ),
        output="One line: the same characters in reverse order.",
        example=("hello world\n", "dlrow olleh\n"),
        tests=(
            "\n",
            "a\n",
            "racecar\n",
            "Hello, World! 123\n",
            "ab  cd\n",
            "The quick brown fox jumps over the lazy dog. " * 22 + "\n",
        ),
        python=r"""
line = input()
print(line[::-1])
""",
        cpp=r"""
#include <algorithm>
#include <iostream>
#include <string>

int main() {
    std::string line;
    std::getline(std::cin, line);
    std::reverse(line.begin(), line.end());
    std::cout << line << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Count the vowels",
        text=(
            "Count how many characters of a line are vowels. The vowels are a, e, i, o and u, in lower or "
            "upper case; y is not a vowel."
        ),
        input="One line of at most 1000 printable ASCII characters. The line may be empty.",
        output="One line with the number of vowels.",
        example=("Programming is fun\n", "5\n"),
        tests=(
            "\n",
            "rhythm\n",
            "AEIOU aeiou\n",
            "xyz XYZ 123 !?\n",
            "Education Is Useful\n",
            "banana " * 140 + "\n",
        ),
        python=r"""
line = input()
print(sum(1 for ch in line if ch in "aeiouAEIOU"))
""",
    ),
    Task(
        title="Sum of a list",
        text="Add up a list of integers.",
        input=(
            "The first line holds n (0 <= n <= 1000). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9; it is empty when n is 0."
        ),
        output="One line with the sum of the n integers (0 when n is 0).",
        example=("4\n1 2 3 4\n", "10\n"),
        tests=(
            "0\n\n",
            "1\n-5\n",
            "3\n1000000000 1000000000 1000000000\n",
            "5\n-1 -2 -3 -4 -5\n",
            "6\n1000000000 -1000000000 7 -7 0 1\n",
            _numbers_big(13, 300, -999, 999),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
print(sum(int(x) for x in data[1 : 1 + n]))
""",
        cpp=r"""
#include <iostream>

int main() {
    int n;
    std::cin >> n;
    long long total = 0;
    for (int i = 0; i < n; ++i) {
        long long x;
        std::cin >> x;
        total += x;
    }
    std::cout << total << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Largest number",
        text="Find the largest of a list of integers.",
        input=(
            "The first line holds n (1 <= n <= 1000). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output="One line with the largest of the n integers.",
        example=("5\n3 9 -2 9 4\n", "9\n"),
        tests=(
            "1\n-7\n",
            "3\n-3 -1 -2\n",
            "4\n0 0 0 0\n",
            "3\n-1000000000 1000000000 0\n",
            "6\n5 4 3 2 1 6\n",
            _numbers_big(14, 250, -(10**6), 10**6),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
print(max(int(x) for x in data[1 : 1 + n]))
""",
    ),
    Task(
        title="Even or odd",
        text="Say whether an integer is even or odd.",
        input="One line with an integer n (-10^18 <= n <= 10^18).",
        output='One line with the word "even" if n is divisible by 2, otherwise "odd".',
        example=("7\n", "odd\n"),
        tests=(
            "0\n",
            "-3\n",
            "-4\n",
            "1000000000000000000\n",
            "-999999999999999999\n",
            "2\n",
        ),
        python=r"""
n = int(input())
print("even" if n % 2 == 0 else "odd")
""",
        cpp=r"""
#include <iostream>

int main() {
    long long n;
    std::cin >> n;
    std::cout << (n % 2 == 0 ? "even" : "odd") << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Shout it",
        text="Print a line with every lower-case letter a-z turned into its upper-case form; other characters stay.",
        input="One line of at most 1000 printable ASCII characters. The line may be empty.",
        output="One line: the converted text.",
        example=("Hello, world 42\n", "HELLO, WORLD 42\n"),
        tests=(
            "\n",
            "ALREADY LOUD\n",
            "a-b_c.d\n",
            "123 !?\n",
            "mIxEd CaSe\n",
            "quiet please " * 70 + "\n",
        ),
        python=r"""
print(input().upper())
""",
    ),
    Task(
        title="Count the words",
        text="Count the words of a line. A word is a maximal run of letters; words are separated by spaces.",
        input=(
            "One line of at most 1000 characters, made only of lower-case letters and spaces. There may be "
            "several spaces in a row and spaces at either end; the line may be empty or hold only spaces."
        ),
        output="One line with the number of words.",
        example=("the quick  brown fox\n", "4\n"),
        tests=(
            "\n",
            "     \n",
            "a\n",
            "  lead and trail  \n",
            "one two three four five six seven\n",
            "x " * 500 + "\n",
        ),
        python=r"""
print(len(input().split()))
""",
    ),
    Task(
        title="Rectangle",
        text="Given the width and height of a rectangle, print its area and its perimeter.",
        input="One line with two integers w and h (1 <= w, h <= 10^9).",
        output="One line with the area and the perimeter, separated by a space.",
        example=("3 5\n", "15 16\n"),
        tests=(
            "1 1\n",
            "7 7\n",
            "1 1000000000\n",
            "1000000000 1000000000\n",
            "12 3\n",
        ),
        python=r"""
w, h = map(int, input().split())
print(w * h, 2 * (w + h))
""",
    ),
    Task(
        title="Smallest of three",
        text="Print the smallest of three integers.",
        input="One line with three integers separated by spaces, each between -10^9 and 10^9.",
        output="One line with the smallest of them.",
        example=("4 -2 7\n", "-2\n"),
        tests=(
            "5 5 5\n",
            "3 2 1\n",
            "1 2 3\n",
            "0 0 -1\n",
            "-1000000000 0 1000000000\n",
            "8 -8 -8\n",
        ),
        python=r"""
print(min(map(int, input().split())))
""",
    ),
    Task(
        title="Count a letter",
        text="Count how many times a given letter occurs in a word.",
        input=(
            "The first line holds one lower-case letter c. The second line holds a string of at most 1000 "
            "lower-case letters; it may be empty."
        ),
        output="One line with the number of times c occurs in the string.",
        example=("a\nbanana\n", "3\n"),
        tests=(
            "z\n\n",
            "x\nx\n",
            "b\naaaa\n",
            "q\nqqqqqqqqqq\n",
            "e\nexcellence\n",
            "m\n" + "mississippi" * 80 + "\n",
        ),
        python=r"""
letter = input().strip()
word = input()
print(word.count(letter))
""",
    ),
    Task(
        title="Repeat a word",
        text="Write a word a given number of times, with nothing between the copies.",
        input="One line with a word w (1 to 10 lower-case letters) and an integer k (0 <= k <= 100).",
        output="One line holding w written k times in a row; the line is empty when k is 0.",
        example=("ab 3\n", "ababab\n"),
        tests=(
            "x 0\n",
            "hello 1\n",
            "z 100\n",
            "abcdefghij 100\n",
            "no 2\n",
        ),
        python=r"""
word, count = input().split()
print(word * int(count))
""",
    ),
    Task(
        title="Celsius to Fahrenheit",
        text=(
            "Convert a temperature from degrees Celsius to degrees Fahrenheit with F = C * 9 / 5 + 32. "
            "Print F with exactly one digit after the decimal point (the exact value never needs more)."
        ),
        input="One line with an integer C (-1000 <= C <= 1000).",
        output="One line with F, written with exactly one digit after the decimal point.",
        example=("100\n", "212.0\n"),
        tests=(
            "0\n",
            "-40\n",
            "37\n",
            "1\n",
            "-18\n",
            "-1000\n",
            "1000\n",
        ),
        python=r"""
celsius = int(input())
print(f"{celsius * 9 / 5 + 32:.1f}")
""",
    ),
    Task(
        title="Last digit",
        text="Print the last digit of a possibly very large non-negative integer.",
        input="One line with an integer n of 1 to 100 digits (0 <= n, no leading zeros unless n is 0).",
        output="One line with the last digit of n.",
        example=("1234\n", "4\n"),
        tests=(
            "0\n",
            "7\n",
            "10\n",
            "9" * 100 + "\n",
            "1" + "0" * 98 + "5\n",
        ),
        python=r"""
print(input().strip()[-1])
""",
    ),
    Task(
        title="Digit sum",
        text="Print the sum of the decimal digits of a possibly very large non-negative integer.",
        input="One line with an integer n of 1 to 100 digits (0 <= n, no leading zeros unless n is 0).",
        output="One line with the sum of the digits of n.",
        example=("9045\n", "18\n"),
        tests=(
            "0\n",
            "5\n",
            "1000\n",
            "9" * 100 + "\n",
            "1234567890" * 10 + "\n",
        ),
        python=r"""
print(sum(int(d) for d in input().strip()))
""",
    ),
    Task(
        title="Leap year",
        text=(
            "A year is a leap year if it is divisible by 4 but not by 100, or if it is divisible by 400. "
            "Say whether a year is a leap year."
        ),
        input="One line with an integer y (1 <= y <= 10^9).",
        output='One line with "yes" if y is a leap year, otherwise "no".',
        example=("2024\n", "yes\n"),
        tests=(
            "1900\n",
            "2000\n",
            "2023\n",
            "1\n",
            "4\n",
            "1000000000\n",
            "999999900\n",
        ),
        python=r"""
year = int(input())
print("yes" if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else "no")
""",
    ),
]

MEDIUM = [
    Task(
        title="Fizz and buzz",
        text=(
            "Print the numbers from 1 to n, one per line, but print Fizz instead of a number divisible by 3, "
            "Buzz instead of a number divisible by 5, and FizzBuzz instead of a number divisible by both."
        ),
        input="One line with an integer n (1 <= n <= 100).",
        output="n lines, the i-th for the number i as described.",
        example=("5\n", "1\n2\nFizz\n4\nBuzz\n"),
        tests=("1\n", "3\n", "15\n", "16\n", "100\n"),
        python=r"""
n = int(input())
for i in range(1, n + 1):
    if i % 15 == 0:
        print("FizzBuzz")
    elif i % 3 == 0:
        print("Fizz")
    elif i % 5 == 0:
        print("Buzz")
    else:
        print(i)
""",
    ),
    Task(
        title="Letter palindrome",
        text=(
            "Look only at the letters of a line, ignoring case and every other character. Say whether those "
            "letters read the same forwards and backwards. A line without letters counts as a palindrome."
        ),
        input="One line of at most 1000 printable ASCII characters. The line may be empty.",
        output='One line with "yes" if the letters form a palindrome, otherwise "no".',
        example=("Never odd or even\n", "yes\n"),
        tests=(
            "\n",
            "abc\n",
            "A man, a plan, a canal: Panama\n",
            "12321\n",
            "ab1ba2\n",
            "Ab, bz\n",
            "x\n",
        ),
        python=r"""
letters = [ch.lower() for ch in input() if ch.isalpha()]
print("yes" if letters == letters[::-1] else "no")
""",
    ),
    Task(
        title="Distinct values",
        text="Count how many different values a list of integers holds.",
        input=(
            "The first line holds n (1 <= n <= 1000). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output="One line with the number of distinct values.",
        example=("6\n1 2 2 3 3 3\n", "3\n"),
        tests=(
            "1\n42\n",
            "5\n7 7 7 7 7\n",
            "5\n1 2 3 4 5\n",
            "4\n-1 1 -1 1\n",
            "3\n1000000000 -1000000000 1000000000\n",
            _numbers_big(15, 400, 0, 99),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
print(len({int(x) for x in data[1 : 1 + n]}))
""",
    ),
    Task(
        title="Second largest",
        text=(
            "Find the second largest distinct value of a list of integers: the largest value that is smaller "
            'than the maximum. If every number is the same, print "none".'
        ),
        input=(
            "The first line holds n (1 <= n <= 1000). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output='One line with the second largest distinct value, or "none".',
        example=("5\n4 1 4 3 2\n", "3\n"),
        tests=(
            "1\n7\n",
            "3\n5 5 5\n",
            "2\n-1 -2\n",
            "2\n-2 -1\n",
            "4\n1000000000 -1000000000 1000000000 999999999\n",
            "6\n9 9 8 8 7 7\n",
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
values = sorted({int(x) for x in data[1 : 1 + n]})
print(values[-2] if len(values) >= 2 else "none")
""",
    ),
    Task(
        title="Running totals",
        text="For each position of a list of integers, print the sum of the list up to and including it.",
        input=(
            "The first line holds n (1 <= n <= 1000). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output="One line with the n running totals, separated by single spaces.",
        example=("4\n1 2 3 4\n", "1 3 6 10\n"),
        tests=(
            "1\n-5\n",
            "3\n0 0 0\n",
            "4\n5 -5 5 -5\n",
            "3\n1000000000 1000000000 1000000000\n",
            _numbers_big(16, 300, -99, 99),
        ),
        python=r"""
import sys
from itertools import accumulate

data = sys.stdin.read().split()
n = int(data[0])
print(" ".join(str(total) for total in accumulate(int(x) for x in data[1 : 1 + n])))
""",
    ),
    Task(
        title="Word frequencies",
        text=(
            "Count how often each word occurs in a line. List the distinct words from the most frequent to "
            "the least frequent; words that occur equally often are listed in alphabetical order."
        ),
        input=(
            "One line of at most 1000 characters: words of lower-case letters separated by one or more "
            "spaces. The line may be empty."
        ),
        output='A line with the number d of distinct words, then d lines "word count" in the order described.',
        example=("the cat and the hat and the bat\n", "5\nthe 3\nand 2\nbat 1\ncat 1\nhat 1\n"),
        tests=(
            "\n",
            "hello\n",
            "b a c\n",
            "  to be  or not to be  \n",
            "z z y y x x\n",
            "one two three two three three four four four four " * 18 + "\n",
        ),
        python=r"""
from collections import Counter

counts = Counter(input().split())
ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
print(len(ranked))
for word, count in ranked:
    print(word, count)
""",
    ),
    Task(
        title="Caesar shift",
        text=(
            "Shift every letter of a line k places forward in the alphabet, wrapping around from z to a, and "
            "keep its case: with k = 1, a becomes b, z becomes a and Z becomes A. Other characters stay."
        ),
        input=(
            "The first line holds an integer k (0 <= k <= 1000). The second line holds at most 1000 printable "
            "ASCII characters; it may be empty."
        ),
        output="One line: the shifted text.",
        example=("3\nHello, World!\n", "Khoor, Zruog!\n"),
        tests=(
            "0\nabc\n",
            "1\nzZ\n",
            "26\nSame Text\n",
            "1000\nabcxyz\n",
            "5\n\n",
            "13\nWhy did the chicken cross the road? 42!\n",
        ),
        python=r"""
shift = int(input()) % 26
text = input()
out = []
for ch in text:
    if "a" <= ch <= "z":
        out.append(chr((ord(ch) - ord("a") + shift) % 26 + ord("a")))
    elif "A" <= ch <= "Z":
        out.append(chr((ord(ch) - ord("A") + shift) % 26 + ord("A")))
    else:
        out.append(ch)
print("".join(out))
""",
        cpp=r"""
#include <iostream>
#include <string>

int main() {
    std::string first, text;
    std::getline(std::cin, first);
    int shift = std::stoi(first) % 26;
    std::getline(std::cin, text);
    for (char &ch : text) {
        if (ch >= 'a' && ch <= 'z') {
            ch = static_cast<char>('a' + (ch - 'a' + shift) % 26);
        } else if (ch >= 'A' && ch <= 'Z') {
            ch = static_cast<char>('A' + (ch - 'A' + shift) % 26);
        }
    }
    std::cout << text << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Binary form",
        text="Write a non-negative integer in base 2, without leading zeros (zero is written as 0).",
        input="One line with an integer n (0 <= n <= 10^18).",
        output="One line with the binary digits of n.",
        example=("10\n", "1010\n"),
        tests=("0\n", "1\n", "2\n", "1023\n", "1024\n", "1000000000000000000\n"),
        python=r"""
print(bin(int(input()))[2:])
""",
        cpp=r"""
#include <algorithm>
#include <iostream>
#include <string>

int main() {
    unsigned long long n;
    std::cin >> n;
    std::string bits;
    do {
        bits.push_back(static_cast<char>('0' + (n & 1ULL)));
        n >>= 1;
    } while (n > 0);
    std::reverse(bits.begin(), bits.end());
    std::cout << bits << "\n";
    return 0;
}
""",
    ),
    Task(
        title="GCD and LCM",
        text="Print the greatest common divisor and the least common multiple of two positive integers.",
        input="One line with two integers a and b (1 <= a, b <= 10^9).",
        output="One line with the greatest common divisor and the least common multiple, separated by a space.",
        example=("12 18\n", "6 36\n"),
        tests=(
            "1 1\n",
            "7 13\n",
            "6 6\n",
            "17 34\n",
            "1000000000 999999999\n",
            "1000000000 1000000000\n",
        ),
        python=r"""
import math

a, b = map(int, input().split())
g = math.gcd(a, b)
print(g, a // g * b)
""",
        cpp=r"""
#include <iostream>
#include <numeric>

int main() {
    long long a, b;
    std::cin >> a >> b;
    long long g = std::gcd(a, b);
    std::cout << g << " " << a / g * b << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Star mountain",
        text=(
            "Draw a mountain of stars of height n: lines with 1, 2, ..., n stars, then lines with n - 1, "
            "n - 2, ..., 1 stars. Each line holds only its stars, starting at the first column."
        ),
        input="One line with an integer n (1 <= n <= 30).",
        output="2n - 1 lines of stars as described.",
        example=("3\n", "*\n**\n***\n**\n*\n"),
        tests=("1\n", "2\n", "5\n", "10\n", "30\n"),
        python=r"""
n = int(input())
for width in [*range(1, n + 1), *range(n - 1, 0, -1)]:
    print("*" * width)
""",
    ),
    Task(
        title="Collatz steps",
        text=(
            "Start from a positive integer n and repeat: if n is even, halve it; if it is odd, replace it by "
            "3n + 1. Count the steps until n becomes 1 (zero steps when n is already 1)."
        ),
        input="One line with an integer n (1 <= n <= 10^6).",
        output="One line with the number of steps.",
        example=("6\n", "8\n"),
        tests=("1\n", "2\n", "3\n", "27\n", "837799\n", "1000000\n"),
        python=r"""
n = int(input())
steps = 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
print(steps)
""",
        cpp=r"""
#include <iostream>

int main() {
    long long n;
    std::cin >> n;
    int steps = 0;
    while (n != 1) {
        n = (n % 2 == 0) ? n / 2 : 3 * n + 1;
        ++steps;
    }
    std::cout << steps << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Run-length code",
        text=(
            "Compress a word by writing each maximal run of equal letters as the letter followed by the "
            "length of the run (a run of one letter is written with a 1)."
        ),
        input="One line with 1 to 1000 lower-case letters.",
        output="One line with the compressed word.",
        example=("aaabccdddd\n", "a3b1c2d4\n"),
        tests=("a\n", "abc\n", "aabbaa\n", "zzzzzzzzzzzz\n", "a" * 1000 + "\n", "ab" * 300 + "\n"),
        python=r"""
word = input().strip()
parts = []
start = 0
while start < len(word):
    end = start
    while end < len(word) and word[end] == word[start]:
        end += 1
    parts.append(f"{word[start]}{end - start}")
    start = end
print("".join(parts))
""",
    ),
    Task(
        title="Distance between points",
        text=(
            "Print the straight-line (Euclidean) distance between two points of the plane, rounded to exactly "
            "three digits after the decimal point."
        ),
        input="One line with four integers x1 y1 x2 y2 (each between -10^4 and 10^4).",
        output="One line with the distance, written with exactly three digits after the decimal point.",
        example=("0 0 3 4\n", "5.000\n"),
        tests=(
            "1 1 1 1\n",
            "0 0 1 1\n",
            "2 3 -1 7\n",
            "0 0 1 2\n",
            "-10000 -10000 10000 10000\n",
            "5 -3 -7 6\n",
        ),
        python=r"""
import math

x1, y1, x2, y2 = map(int, input().split())
print(f"{math.hypot(x2 - x1, y2 - y1):.3f}")
""",
    ),
    Task(
        title="Transpose a table",
        text="Turn the rows of a table of integers into its columns: row i of the result is column i of the input.",
        input=(
            "The first line holds r and c (1 <= r, c <= 20). Each of the next r lines holds c integers "
            "separated by spaces, each between -1000 and 1000."
        ),
        output="c lines, each with r integers separated by single spaces.",
        example=("2 3\n1 2 3\n4 5 6\n", "1 4\n2 5\n3 6\n"),
        tests=(
            "1 1\n7\n",
            "1 5\n1 2 3 4 5\n",
            "5 1\n1\n2\n3\n4\n5\n",
            "3 3\n-1 0 1\n-2 0 2\n-3 0 3\n",
            "20 20\n" + "".join(_line([r * 20 + c - 200 for c in range(20)]) for r in range(20)),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
rows, cols = int(data[0]), int(data[1])
cells = [int(x) for x in data[2 : 2 + rows * cols]]
for c in range(cols):
    print(" ".join(str(cells[r * cols + c]) for r in range(rows)))
""",
    ),
    Task(
        title="Count the primes",
        text="Count the prime numbers that are less than or equal to n.",
        input="One line with an integer n (0 <= n <= 10^6).",
        output="One line with the number of primes p with p <= n.",
        example=("10\n", "4\n"),
        tests=("0\n", "1\n", "2\n", "100\n", "999983\n", "1000000\n"),
        python=r"""
n = int(input())
if n < 2:
    print(0)
else:
    sieve = bytearray([1]) * (n + 1)
    sieve[0] = sieve[1] = 0
    for p in range(2, int(n**0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytes(len(range(p * p, n + 1, p)))
    print(sum(sieve))
""",
        cpp=r"""
#include <iostream>
#include <vector>

int main() {
    long long n;
    std::cin >> n;
    int count = 0;
    std::vector<bool> composite(n + 1, false);
    for (long long p = 2; p <= n; ++p) {
        if (composite[p]) continue;
        ++count;
        for (long long q = p * p; q <= n; q += p) composite[q] = true;
    }
    std::cout << count << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Climbing stairs",
        text=(
            "You climb a staircase of n steps, taking one or two steps at a time. Count the different ways to "
            "reach the top (the order of the moves matters), modulo 1000000007."
        ),
        input="One line with an integer n (1 <= n <= 10^5).",
        output="One line with the number of ways modulo 1000000007.",
        example=("4\n", "5\n"),
        tests=("1\n", "2\n", "3\n", "10\n", "90\n", "100000\n"),
        python=r"""
n = int(input())
before, current = 1, 1
for _ in range(n - 1):
    before, current = current, (before + current) % 1000000007
print(current)
""",
    ),
]

HARD = [
    Task(
        title="Range sums",
        text="Answer questions about a list of integers: each question asks for the sum of a stretch of it.",
        input=(
            "The first line holds n (1 <= n <= 10^4), the second n integers a_1 ... a_n separated by spaces "
            "(each between -10^6 and 10^6). The third line holds q (1 <= q <= 10^4), and each of the next q "
            "lines holds two integers l and r (1 <= l <= r <= n)."
        ),
        output="q lines: for each question, the sum a_l + a_(l+1) + ... + a_r.",
        example=("5\n1 2 3 4 5\n3\n1 5\n2 3\n4 4\n", "15\n5\n4\n"),
        tests=(
            "1\n-7\n1\n1 1\n",
            "3\n1000000 1000000 1000000\n2\n1 3\n2 2\n",
            "4\n5 -5 5 -5\n4\n1 4\n1 3\n2 4\n3 3\n",
            "6\n0 0 0 0 0 0\n1\n1 6\n",
            _range_sums_big(),
        ),
        python=r"""
import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    prefix = [0]
    for x in data[1 : 1 + n]:
        prefix.append(prefix[-1] + int(x))
    q = int(data[1 + n])
    out = []
    for i in range(q):
        left, right = int(data[2 + n + 2 * i]), int(data[3 + n + 2 * i])
        out.append(prefix[right] - prefix[left - 1])
    print("\n".join(map(str, out)))


main()
""",
        cpp=r"""
#include <iostream>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    int n;
    std::cin >> n;
    std::vector<long long> prefix(n + 1, 0);
    for (int i = 1; i <= n; ++i) {
        long long x;
        std::cin >> x;
        prefix[i] = prefix[i - 1] + x;
    }
    int q;
    std::cin >> q;
    for (int i = 0; i < q; ++i) {
        int left, right;
        std::cin >> left >> right;
        std::cout << prefix[right] - prefix[left - 1] << "\n";
    }
    return 0;
}
""",
    ),
    Task(
        title="Shortest path in a maze",
        text=(
            "A maze is a grid of cells: '.' is free, '#' is a wall, S is the start and T the target (both "
            "free). One move goes to a free cell that shares a side with the current one. Print the fewest "
            "moves from S to T, or -1 if T cannot be reached."
        ),
        input=(
            "The first line holds R and C (1 <= R, C <= 200). Each of the next R lines holds C characters "
            "from '.', '#', 'S' and 'T'; there is exactly one S and exactly one T."
        ),
        output="One line with the fewest moves, or -1.",
        example=("3 4\nS..#\n.#..\n...T\n", "5\n"),
        tests=(
            "1 2\nST\n",
            "1 3\nS#T\n",
            "3 3\nS#.\n##.\n..T\n",
            "2 5\nS...#\n###.T\n",
            "4 4\nS...\n###.\n....\nT###\n",
            _maze_random(),
            _maze_snake(),
        ),
        python=r"""
import sys
from collections import deque


def main():
    data = sys.stdin.read().split()
    rows, cols = int(data[0]), int(data[1])
    grid = data[2 : 2 + rows]
    dist = [[-1] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] == "S":
                start = (r, c)
            elif grid[r][c] == "T":
                target = (r, c)
    dist[start[0]][start[1]] = 0
    todo = deque([start])
    while todo:
        r, c = todo.popleft()
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] != "#" and dist[nr][nc] < 0:
                dist[nr][nc] = dist[r][c] + 1
                todo.append((nr, nc))
    print(dist[target[0]][target[1]])


main()
""",
        cpp=r"""
#include <iostream>
#include <queue>
#include <string>
#include <utility>
#include <vector>

int main() {
    int rows, cols;
    std::cin >> rows >> cols;
    std::vector<std::string> grid(rows);
    int sr = 0, sc = 0, tr = 0, tc = 0;
    for (int r = 0; r < rows; ++r) {
        std::cin >> grid[r];
        for (int c = 0; c < cols; ++c) {
            if (grid[r][c] == 'S') { sr = r; sc = c; }
            if (grid[r][c] == 'T') { tr = r; tc = c; }
        }
    }
    std::vector<std::vector<int>> dist(rows, std::vector<int>(cols, -1));
    std::queue<std::pair<int, int>> todo;
    dist[sr][sc] = 0;
    todo.push({sr, sc});
    const int dr[4] = {1, -1, 0, 0};
    const int dc[4] = {0, 0, 1, -1};
    while (!todo.empty()) {
        auto [r, c] = todo.front();
        todo.pop();
        for (int d = 0; d < 4; ++d) {
            int nr = r + dr[d], nc = c + dc[d];
            if (nr < 0 || nr >= rows || nc < 0 || nc >= cols) continue;
            if (grid[nr][nc] == '#' || dist[nr][nc] != -1) continue;
            dist[nr][nc] = dist[r][c] + 1;
            todo.push({nr, nc});
        }
    }
    std::cout << dist[tr][tc] << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Leaderboard",
        text=(
            "Rank players by score, highest first; players with equal scores are listed in alphabetical order "
            "of their names and share a rank. A player's rank is 1 plus the number of players with a strictly "
            "higher score (so ranks go 1, 1, 3, ... after a tie)."
        ),
        input=(
            "The first line holds n (1 <= n <= 1000). Each of the next n lines holds a name (1 to 10 "
            "lower-case letters, all names different) and a score (0 <= score <= 10^9), separated by a space."
        ),
        output='n lines "rank name score" in the order described.',
        example=("5\nann 90\nbob 75\ncid 90\ndan 60\neve 75\n", "1 ann 90\n1 cid 90\n3 bob 75\n3 eve 75\n5 dan 60\n"),
        tests=(
            "1\nsolo 0\n",
            "3\nc 5\nb 5\na 5\n",
            "4\nd 1\nc 2\nb 3\na 4\n",
            "3\nzed 1000000000\nabe 0\nmia 1000000000\n",
            "6\nab 2\naa 2\nb 1\nba 3\na 2\nbb 1\n",
            _leaderboard_big(),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
players = [(data[1 + 2 * i], int(data[2 + 2 * i])) for i in range(n)]
players.sort(key=lambda player: (-player[1], player[0]))
rank = 0
for i, (name, score) in enumerate(players):
    if i == 0 or score != players[i - 1][1]:
        rank = i + 1
    print(rank, name, score)
""",
        cpp=r"""
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main() {
    int n;
    std::cin >> n;
    std::vector<std::pair<long long, std::string>> players(n);
    for (auto &player : players) std::cin >> player.second >> player.first;
    std::sort(players.begin(), players.end(), [](const auto &a, const auto &b) {
        if (a.first != b.first) return a.first > b.first;
        return a.second < b.second;
    });
    int rank = 0;
    for (int i = 0; i < n; ++i) {
        if (i == 0 || players[i].first != players[i - 1].first) rank = i + 1;
        std::cout << rank << " " << players[i].second << " " << players[i].first << "\n";
    }
    return 0;
}
""",
    ),
    Task(
        title="Longest increasing subsequence",
        text=(
            "Pick as many numbers of a list as possible, keeping their order, so that each picked number is "
            "strictly larger than the one picked before it. Print how many can be picked."
        ),
        input=(
            "The first line holds n (1 <= n <= 10^4). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output="One line with the length of the longest strictly increasing subsequence.",
        example=("7\n3 1 4 1 5 9 2\n", "4\n"),
        tests=(
            "1\n5\n",
            "4\n2 2 2 2\n",
            "5\n5 4 3 2 1\n",
            "6\n1 2 3 4 5 6\n",
            "8\n-1000000000 1000000000 0 1 -5 2 3 -1\n",
            _numbers_big(17, 8000, 0, 99999),
        ),
        python=r"""
import sys
from bisect import bisect_left

data = sys.stdin.read().split()
n = int(data[0])
tails = []
for x in map(int, data[1 : 1 + n]):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
""",
        cpp=r"""
#include <algorithm>
#include <iostream>
#include <vector>

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    int n;
    std::cin >> n;
    std::vector<long long> tails;
    for (int i = 0; i < n; ++i) {
        long long x;
        std::cin >> x;
        auto it = std::lower_bound(tails.begin(), tails.end(), x);
        if (it == tails.end()) {
            tails.push_back(x);
        } else {
            *it = x;
        }
    }
    std::cout << tails.size() << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Counting change",
        text=(
            "Coins come in n different values, with as many coins of each value as you like. Count the ways "
            "to pay exactly A, where two ways differ only if they use a different number of coins of some "
            "value (the order of the coins does not matter). Print the count modulo 1000000007."
        ),
        input=(
            "The first line holds n and A (1 <= n <= 20, 0 <= A <= 5000). The second line holds the n "
            "different coin values, each between 1 and 5000."
        ),
        output="One line with the number of ways modulo 1000000007 (paying 0 has exactly one way).",
        example=("3 6\n1 2 3\n", "7\n"),
        tests=(
            "2 0\n3 4\n",
            "1 7\n2\n",
            "1 10\n1\n",
            "3 8\n10 20 30\n",
            "4 100\n1 5 10 25\n",
            "20 5000\n" + _line(list(range(1, 21))),
        ),
        python=r"""
import sys

data = list(map(int, sys.stdin.read().split()))
n, amount = data[0], data[1]
ways = [1] + [0] * amount
for coin in data[2 : 2 + n]:
    for total in range(coin, amount + 1):
        ways[total] = (ways[total] + ways[total - coin]) % 1000000007
print(ways[amount])
""",
        cpp=r"""
#include <iostream>
#include <vector>

int main() {
    const long long kMod = 1000000007LL;
    int n, amount;
    std::cin >> n >> amount;
    std::vector<long long> ways(amount + 1, 0);
    ways[0] = 1;
    for (int i = 0; i < n; ++i) {
        int coin;
        std::cin >> coin;
        for (int total = coin; total <= amount; ++total) {
            ways[total] = (ways[total] + ways[total - coin]) % kMod;
        }
    }
    std::cout << ways[amount] << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Fewest coins",
        text=(
            "Coins come in n different values, with as many coins of each value as you like. Print the "
            "smallest number of coins that pay exactly A, or -1 if A cannot be paid exactly."
        ),
        input=(
            "The first line holds n and A (1 <= n <= 20, 0 <= A <= 5000). The second line holds the n "
            "different coin values, each between 1 and 5000."
        ),
        output="One line with the smallest number of coins (0 when A is 0), or -1.",
        example=("3 13\n1 4 6\n", "3\n"),
        tests=(
            "3 8\n1 4 6\n",
            "1 0\n7\n",
            "1 7\n2\n",
            "2 9\n10 20\n",
            "3 4999\n2 5 10\n",
            "20 5000\n" + _line(list(range(101, 121))),
        ),
        python=r"""
import sys

data = list(map(int, sys.stdin.read().split()))
n, amount = data[0], data[1]
coins = data[2 : 2 + n]
unreachable = amount + 1
best = [0] + [unreachable] * amount
for total in range(1, amount + 1):
    for coin in coins:
        if coin <= total and best[total - coin] + 1 < best[total]:
            best[total] = best[total - coin] + 1
print(best[amount] if best[amount] < unreachable else -1)
""",
    ),
    Task(
        title="Balanced brackets",
        text=(
            "A line of brackets is balanced if every opening bracket is closed by a bracket of the same kind, "
            "and pairs nest properly: ([]) is balanced, ([)] and (() are not. The empty line is balanced."
        ),
        input="One line of at most 10^5 characters, each one of ( ) [ ] { }. The line may be empty.",
        output='One line with "yes" if the brackets are balanced, otherwise "no".',
        example=("([]{()})\n", "yes\n"),
        tests=(
            "\n",
            "(\n",
            ")(\n",
            "([)]\n",
            "{[]}()\n",
            "((((((((((\n",
            _brackets_big(18, broken=False),
            _brackets_big(19, broken=True),
        ),
        python=r"""
line = input()
partner = {")": "(", "]": "[", "}": "{"}
stack = []
balanced = True
for ch in line:
    if ch in "([{":
        stack.append(ch)
    elif not stack or stack.pop() != partner[ch]:
        balanced = False
        break
print("yes" if balanced and not stack else "no")
""",
        cpp=r"""
#include <iostream>
#include <string>

int main() {
    std::string line, stack;
    std::getline(std::cin, line);
    bool balanced = true;
    for (char ch : line) {
        if (ch == '(' || ch == '[' || ch == '{') {
            stack.push_back(ch);
            continue;
        }
        char partner = ch == ')' ? '(' : (ch == ']' ? '[' : '{');
        if (stack.empty() || stack.back() != partner) {
            balanced = false;
            break;
        }
        stack.pop_back();
    }
    std::cout << (balanced && stack.empty() ? "yes" : "no") << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Count the islands",
        text=(
            "A map is a grid of land '#' and water '.'. An island is a group of land cells connected through "
            "cells that share a side (touching only at a corner does not connect). Count the islands."
        ),
        input=(
            "The first line holds R and C (1 <= R, C <= 200). Each of the next R lines holds C characters, "
            "each '#' or '.'."
        ),
        output="One line with the number of islands.",
        example=("4 5\n##..#\n#...#\n..#..\n.....\n", "3\n"),
        tests=(
            "1 1\n.\n",
            "1 1\n#\n",
            "2 3\n###\n###\n",
            "5 5\n#.#.#\n.#.#.\n#.#.#\n.#.#.\n#.#.#\n",
            "3 7\n#.###.#\n#.#.#.#\n###.###\n",
            _islands_big(),
        ),
        python=r"""
import sys
from collections import deque


def main():
    data = sys.stdin.read().split()
    rows, cols = int(data[0]), int(data[1])
    grid = data[2 : 2 + rows]
    seen = [[False] * cols for _ in range(rows)]
    islands = 0
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] != "#" or seen[r][c]:
                continue
            islands += 1
            seen[r][c] = True
            todo = deque([(r, c)])
            while todo:
                y, x = todo.popleft()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    if 0 <= ny < rows and 0 <= nx < cols and grid[ny][nx] == "#" and not seen[ny][nx]:
                        seen[ny][nx] = True
                        todo.append((ny, nx))
    print(islands)


main()
""",
        cpp=r"""
#include <iostream>
#include <queue>
#include <string>
#include <utility>
#include <vector>

int main() {
    int rows, cols;
    std::cin >> rows >> cols;
    std::vector<std::string> grid(rows);
    for (auto &row : grid) std::cin >> row;
    std::vector<std::vector<bool>> seen(rows, std::vector<bool>(cols, false));
    const int dr[4] = {1, -1, 0, 0};
    const int dc[4] = {0, 0, 1, -1};
    int islands = 0;
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < cols; ++c) {
            if (grid[r][c] != '#' || seen[r][c]) continue;
            ++islands;
            seen[r][c] = true;
            std::queue<std::pair<int, int>> todo;
            todo.push({r, c});
            while (!todo.empty()) {
                auto [y, x] = todo.front();
                todo.pop();
                for (int d = 0; d < 4; ++d) {
                    int ny = y + dr[d], nx = x + dc[d];
                    if (ny < 0 || ny >= rows || nx < 0 || nx >= cols) continue;
                    if (grid[ny][nx] != '#' || seen[ny][nx]) continue;
                    seen[ny][nx] = true;
                    todo.push({ny, nx});
                }
            }
        }
    }
    std::cout << islands << "\n";
    return 0;
}
""",
    ),
    Task(
        title="Task order",
        text=(
            'There are n tasks numbered 1 to n and m rules "u v": task u must be done before task v. Print '
            "an order of all the tasks that obeys every rule; when several tasks could come next, the one "
            "with the smallest number comes first (this makes the order unique). If no order obeys all the "
            'rules, print "impossible".'
        ),
        input=(
            "The first line holds n and m (1 <= n <= 2000, 0 <= m <= 5000). Each of the next m lines holds "
            "two different integers u and v (1 <= u, v <= n); a rule may appear more than once."
        ),
        output='One line with the n task numbers in order, separated by single spaces, or "impossible".',
        example=("4 3\n2 1\n3 1\n4 3\n", "2 4 3 1\n"),
        tests=(
            "1 0\n",
            "5 0\n",
            "2 2\n1 2\n2 1\n",
            "3 3\n3 2\n3 2\n2 1\n",
            "4 4\n1 2\n2 3\n3 4\n4 2\n",
            "6 4\n6 1\n5 2\n4 3\n2 1\n",
            _task_order_big(),
        ),
        python=r"""
import heapq
import sys


def main():
    data = list(map(int, sys.stdin.read().split()))
    n, m = data[0], data[1]
    after = [[] for _ in range(n + 1)]
    needs = [0] * (n + 1)
    for i in range(m):
        u, v = data[2 + 2 * i], data[3 + 2 * i]
        after[u].append(v)
        needs[v] += 1
    ready = [v for v in range(1, n + 1) if needs[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in after[u]:
            needs[v] -= 1
            if needs[v] == 0:
                heapq.heappush(ready, v)
    print(" ".join(map(str, order)) if len(order) == n else "impossible")


main()
""",
        cpp=r"""
#include <functional>
#include <iostream>
#include <queue>
#include <vector>

int main() {
    int n, m;
    std::cin >> n >> m;
    std::vector<std::vector<int>> after(n + 1);
    std::vector<int> needs(n + 1, 0);
    for (int i = 0; i < m; ++i) {
        int u, v;
        std::cin >> u >> v;
        after[u].push_back(v);
        ++needs[v];
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (int v = 1; v <= n; ++v) {
        if (needs[v] == 0) ready.push(v);
    }
    std::vector<int> order;
    while (!ready.empty()) {
        int u = ready.top();
        ready.pop();
        order.push_back(u);
        for (int v : after[u]) {
            if (--needs[v] == 0) ready.push(v);
        }
    }
    if (static_cast<int>(order.size()) != n) {
        std::cout << "impossible\n";
        return 0;
    }
    for (int i = 0; i < n; ++i) std::cout << order[i] << (i + 1 < n ? " " : "\n");
    return 0;
}
""",
    ),
    Task(
        title="Cheapest route",
        text=(
            "Towns 1 to n are joined by two-way roads, each with a length. Print the length of the shortest "
            "route from town 1 to town n, or -1 if there is none."
        ),
        input=(
            "The first line holds n and m (1 <= n <= 1000, 0 <= m <= 5000). Each of the next m lines holds "
            "u, v and w: a road between the different towns u and v of length w (1 <= w <= 10^6). Two towns "
            "may be joined by several roads."
        ),
        output="One line with the length of the shortest route (0 when n is 1), or -1.",
        example=("4 4\n1 2 5\n2 4 5\n1 3 2\n3 4 9\n", "10\n"),
        tests=(
            "1 0\n",
            "2 0\n",
            "2 3\n1 2 9\n2 1 4\n1 2 6\n",
            "3 1\n1 2 1\n",
            "5 6\n1 2 1000000\n2 5 1000000\n1 3 1\n3 4 1\n4 2 1\n4 5 1999999\n",
            _roads_big(),
        ),
        python=r"""
import heapq
import sys


def main():
    data = list(map(int, sys.stdin.read().split()))
    n, m = data[0], data[1]
    roads = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = data[2 + 3 * i : 5 + 3 * i]
        roads[u].append((v, w))
        roads[v].append((u, w))
    dist = [-1] * (n + 1)
    todo = [(0, 1)]
    while todo:
        d, u = heapq.heappop(todo)
        if dist[u] >= 0:
            continue
        dist[u] = d
        for v, w in roads[u]:
            if dist[v] < 0:
                heapq.heappush(todo, (d + w, v))
    print(dist[n])


main()
""",
    ),
    Task(
        title="Best stretch",
        text="Find the largest sum of a non-empty block of consecutive numbers of a list.",
        input=(
            "The first line holds n (1 <= n <= 10^4). The second line holds n integers separated by spaces, "
            "each between -10^6 and 10^6."
        ),
        output="One line with the largest sum of a non-empty block of consecutive numbers.",
        example=("6\n-2 5 -1 3 -7 4\n", "7\n"),
        tests=(
            "1\n-5\n",
            "3\n-5 -2 -9\n",
            "4\n1 2 3 4\n",
            "5\n0 0 0 0 0\n",
            "7\n3 -4 2 2 -1 5 -10\n",
            _numbers_big(20, 7000, -100000, 100000),
        ),
        python=r"""
import sys

data = sys.stdin.read().split()
n = int(data[0])
best = current = None
for x in map(int, data[1 : 1 + n]):
    current = x if current is None or current < 0 else current + x
    best = current if best is None else max(best, current)
print(best)
""",
    ),
    Task(
        title="Merge intervals",
        text=(
            "Join closed intervals [l, r] of whole numbers: two intervals that overlap or share an end point "
            "join into one, and joining repeats until no two intervals can be joined. ([1, 3] and [3, 5] "
            "join; [1, 2] and [3, 4] do not.)"
        ),
        input=(
            "The first line holds n (1 <= n <= 1000). Each of the next n lines holds two integers l and r "
            "(0 <= l <= r <= 10^9)."
        ),
        output='First a line with the number k of intervals left, then k lines "l r" from left to right.',
        example=("4\n5 8\n1 3\n2 4\n8 10\n", "2\n1 4\n5 10\n"),
        tests=(
            "1\n0 0\n",
            "2\n1 2\n3 4\n",
            "2\n3 5\n1 3\n",
            "3\n1 10\n2 3\n4 5\n",
            "3\n7 7\n7 7\n7 7\n",
            "4\n0 1000000000\n5 6\n999999999 1000000000\n0 0\n",
            _intervals_big(),
        ),
        python=r"""
import sys

data = list(map(int, sys.stdin.read().split()))
n = data[0]
intervals = sorted((data[1 + 2 * i], data[2 + 2 * i]) for i in range(n))
merged = []
for left, right in intervals:
    if merged and left <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], right)
    else:
        merged.append([left, right])
print(len(merged))
for left, right in merged:
    print(left, right)
""",
    ),
    Task(
        title="Pairs with a given sum",
        text="Count the pairs of positions i < j of a list whose numbers add up to k.",
        input=(
            "The first line holds n and k (1 <= n <= 10^4, -10^9 <= k <= 10^9). The second line holds n "
            "integers separated by spaces, each between -10^9 and 10^9."
        ),
        output="One line with the number of pairs.",
        example=("5 6\n1 5 3 3 5\n", "3\n"),
        tests=(
            "1 2\n1\n",
            "4 4\n2 2 2 2\n",
            "3 0\n-5 5 0\n",
            "4 -3\n-1 -2 -3 0\n",
            "2 2000000000\n1000000000 1000000000\n",
            _numbers_big(21, 10000, -50, 50, head="0"),
        ),
        python=r"""
import sys
from collections import Counter

data = list(map(int, sys.stdin.read().split()))
n, k = data[0], data[1]
seen = Counter()
pairs = 0
for x in data[2 : 2 + n]:
    pairs += seen[k - x]
    seen[x] += 1
print(pairs)
""",
    ),
    Task(
        title="Counting inversions",
        text="Count the pairs of positions i < j of a list where the number at i is larger than the number at j.",
        input=(
            "The first line holds n (1 <= n <= 10^4). The second line holds n integers separated by spaces, "
            "each between -10^9 and 10^9."
        ),
        output="One line with the number of such pairs.",
        example=("5\n3 1 2 5 4\n", "3\n"),
        tests=(
            "1\n9\n",
            "5\n1 2 3 4 5\n",
            "5\n5 4 3 2 1\n",
            "4\n7 7 7 7\n",
            "6\n2 -1000000000 2 1000000000 1 1\n",
            _numbers_big(22, 8000, 0, 99999),
        ),
        python=r"""
import sys


def sort_count(values):
    if len(values) <= 1:
        return values, 0
    middle = len(values) // 2
    left, left_count = sort_count(values[:middle])
    right, right_count = sort_count(values[middle:])
    merged, count, i, j = [], left_count + right_count, 0, 0
    while i < len(left) and j < len(right):
        if right[j] < left[i]:
            merged.append(right[j])
            count += len(left) - i
            j += 1
        else:
            merged.append(left[i])
            i += 1
    merged.extend(left[i:])
    merged.extend(right[j:])
    return merged, count


data = sys.stdin.read().split()
n = int(data[0])
print(sort_count([int(x) for x in data[1 : 1 + n]])[1])
""",
    ),
    Task(
        title="Common subsequence",
        text=(
            "A subsequence of a word is what is left after deleting any number of its letters, keeping the "
            "order of the rest. Print the length of the longest word that is a subsequence of both given words."
        ),
        input="Two lines, each with a word of 1 to 300 lower-case letters.",
        output="One line with the length of the longest common subsequence.",
        example=("banana\natana\n", "4\n"),
        tests=(
            "a\na\n",
            "a\nb\n",
            "abc\nabc\n",
            "abcdef\nfedcba\n",
            "xaybzc\nabc\n",
            "ab" * 150 + "\n" + "ba" * 150 + "\n",
            "abcde" * 60 + "\n" + "edcba" * 60 + "\n",
        ),
        python=r"""
first = input().strip()
second = input().strip()
previous = [0] * (len(second) + 1)
for a in first:
    current = [0]
    for j, b in enumerate(second):
        current.append(previous[j] + 1 if a == b else max(previous[j + 1], current[j]))
    previous = current
print(previous[-1])
""",
    ),
    Task(
        title="Packing a bag",
        text=(
            "Each of n items has a weight and a value. Choose items, each at most once, with total weight at "
            "most W, so that their total value is as large as possible. Print that value."
        ),
        input=(
            "The first line holds n and W (1 <= n <= 100, 0 <= W <= 1000). Each of the next n lines holds an "
            "item's weight (1 to 1000) and value (0 to 10^6)."
        ),
        output="One line with the largest total value.",
        example=("3 5\n2 3\n3 4\n4 5\n", "7\n"),
        tests=(
            "1 0\n1 5\n",
            "1 10\n10 7\n",
            "2 3\n4 100\n5 200\n",
            "4 10\n5 10\n4 40\n6 30\n3 50\n",
            "3 6\n3 5\n3 5\n4 9\n",
            _items_big(),
        ),
        python=r"""
import sys

data = list(map(int, sys.stdin.read().split()))
n, capacity = data[0], data[1]
best = [0] * (capacity + 1)
for i in range(n):
    weight, value = data[2 + 2 * i], data[3 + 2 * i]
    for room in range(capacity, weight - 1, -1):
        if best[room - weight] + value > best[room]:
            best[room] = best[room - weight] + value
print(best[capacity])
""",
    ),
]

STATEMENT = """{title}

{text}

Input
{input}

Output
{output}

Example

Input:
```
{example_input}```

Output:
```
{example_output}```"""

SOURCES = {"python": "bundled-stdio", "cpp": "bundled-stdio-cpp"}


def tasks() -> list[tuple[str, Task]]:
    """(difficulty, task) of every problem, in id order."""
    return [(level, task) for level, items in (("easy", EASY), ("medium", MEDIUM), ("hard", HARD)) for task in items]


def statement(task: Task) -> str:
    """The task statement: heading, task, Input and Output sections, and the worked example."""
    example_input, example_output = task.example
    return STATEMENT.format(
        title=task.title,
        text=task.text,
        input=task.input,
        output=task.output,
        example_input=example_input,
        example_output=example_output,
    )


def build_problems(outputs: list[list[str]]) -> list[Problem]:
    """All records: the Python problems in id order, then the C++ ones; `outputs[i]` holds the expected
    outputs of problem i's inputs."""
    python: list[Problem] = []
    cpp: list[Problem] = []
    for index, ((level, task), expected) in enumerate(zip(tasks(), outputs, strict=True)):
        text = statement(task)
        io_tests = [{"input": i, "output": o} for i, o in zip(task.inputs, expected, strict=True)]
        for language, gt, into in (("python", task.python, python), ("cpp", task.cpp, cpp)):
            if not gt:
                continue
            into.append(
                Problem(
                    id=f"{SOURCES[language]}/{index:04d}",
                    prompt=text,  # the code prompt names the language and its fence (codea1.game.prompts)
                    description=text,
                    entry_point="",
                    gt_solution=gt.strip() + "\n",
                    source="bundled-stdio",
                    difficulty=level,
                    split="eval" if index % 2 else "train",
                    meta={"public_tests": 1},
                    kind="stdio",
                    language=language,
                    io_tests=io_tests,
                )
            )
    return python + cpp


def render(problems: list[Problem]) -> str:
    return "".join(json.dumps(p.to_dict(), ensure_ascii=False) + "\n" for p in problems)


# running the GTs (trusted programs written above)


@dataclass
class Run:
    """What one GT run on one input printed, how it ended, and how long it took."""

    stdout: str
    error: str
    seconds: float


def run_program(argv: list[str], stdin: str) -> Run:
    """Runs a GT program on one input; `error` is "" when it exited 0 within the time limit."""
    started = time.perf_counter()
    try:
        done = subprocess.run(  # trusted GT written in this file
            argv, input=stdin, capture_output=True, text=True, encoding="utf-8", timeout=30, check=False
        )
    except subprocess.TimeoutExpired:
        return Run("", "timed out after 30 s", time.perf_counter() - started)
    except OSError as exc:
        return Run("", f"cannot start: {exc}", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    error = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip()[-300:]}"
    return Run(done.stdout, error, seconds)


def run_all(jobs: list[tuple[list[str], str]]) -> list[Run]:
    """Runs each (argv, stdin) job, a few at a time; the results come back in job order."""
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(pool.map(lambda job: run_program(*job), jobs))


def run_grouped(programs: list[list[str] | None], inputs: list[list[str]]) -> list[list[Run] | None]:
    """Runs program i (an argv, or None for none) on each of inputs[i]."""
    jobs = [(argv, text) for argv, texts in zip(programs, inputs, strict=True) if argv for text in texts]
    flat = iter(run_all(jobs))
    return [[next(flat) for _ in texts] if argv else None for argv, texts in zip(programs, inputs, strict=True)]


def compile_cpp(sources: list[str], folder: Path) -> tuple[list[list[str] | None], list[str]]:
    """Compiles each non-empty C++ source (problem i's at index i) into `folder`: the argv that runs each
    one (None where there is no source or it did not compile) and the compile errors."""
    argvs: list[list[str] | None] = [None] * len(sources)
    built = [index for index, source in enumerate(sources) if source]
    jobs: list[tuple[list[str], str]] = []
    for index in built:
        path = folder / f"p{index:04d}.cpp"
        path.write_text(sources[index], encoding="utf-8")
        jobs.append((["g++", "-std=c++17", "-O2", "-o", str(path.with_suffix("")), str(path)], ""))
    errors = []
    for index, run in zip(built, run_all(jobs), strict=True):
        if run.error:
            errors.append(f"{SOURCES['cpp']}/{index:04d}: the C++ GT does not compile: {run.error}")
        else:
            argvs[index] = [str(folder / f"p{index:04d}")]
    return argvs, errors


# checking the sources and the GTs


def check_sources() -> list[str]:
    """The set's rules that need no GT run: test counts, input shapes and sizes, unique titles."""
    errors = []
    titles = [task.title for _, task in tasks()]
    errors += [f"title {t!r} used twice" for t in sorted({t for t in titles if titles.count(t) > 1})]
    for index, (level, task) in enumerate(tasks()):
        where = f"{SOURCES['python']}/{index:04d} ({task.title})"
        if len(task.inputs) < 5:
            errors.append(f"{where}: fewer than 5 tests")
        if len(set(task.inputs)) != len(task.inputs):
            errors.append(f"{where}: a test input is repeated")
        if not all(text.endswith("\n") for text in task.inputs):
            errors.append(f"{where}: every input must end with a newline")
        sizes = [len(text.encode()) for text in task.inputs]
        large = [size for size in sizes if size >= SMALL_INPUT]
        if large and (level != "hard" or len(large) > MAX_LARGE or max(large) > LARGE_INPUT):
            errors.append(f"{where}: inputs of {large} bytes (only a hard problem may have {MAX_LARGE} large ones)")
    return errors


def run_python_gts() -> tuple[list[list[str]], list[str], float]:
    """Each problem's expected outputs (what its Python GT prints on each input), the errors (a failing or
    slow run, an example output that is not the statement's), and the slowest run's seconds."""
    listed = [task for _, task in tasks()]
    runs = run_grouped([[sys.executable, "-c", task.python] for task in listed], [t.inputs for t in listed])
    outputs, errors, slowest = [], [], 0.0
    for index, (task, task_runs) in enumerate(zip(listed, runs, strict=True)):
        where = f"{SOURCES['python']}/{index:04d} ({task.title})"
        assert task_runs is not None
        for number, run in enumerate(task_runs):
            slowest = max(slowest, run.seconds)
            if run.error:
                errors.append(f"{where}: Python GT failed on test {number}: {run.error}")
            elif run.seconds > SLOW_RUN_S:
                errors.append(f"{where}: Python GT took {run.seconds:.2f} s on test {number}")
        if task_runs[0].stdout != task.example[1]:
            errors.append(
                f"{where}: the example says {task.example[1]!r}, the Python GT prints {task_runs[0].stdout!r}"
            )
        outputs.append([run.stdout for run in task_runs])
    return outputs, errors, slowest


def check_cpp_gts(outputs: list[list[str]]) -> list[str]:
    """Compiles every C++ GT and runs it on its problem's inputs: errors where one does not compile, fails,
    or prints anything but the Python GT's output."""
    if shutil.which("g++") is None:
        return ["g++ is not on PATH: install it, or pass --skip-cpp to leave the C++ GTs unchecked"]
    listed = [task for _, task in tasks()]
    with tempfile.TemporaryDirectory(prefix="stdio-gt-") as folder:
        argvs, errors = compile_cpp([task.cpp for task in listed], Path(folder))
        runs = run_grouped(argvs, [task.inputs for task in listed])
    for index, (task_runs, expected) in enumerate(zip(runs, outputs, strict=True)):
        if task_runs is None:
            continue
        for number, (run, want) in enumerate(zip(task_runs, expected, strict=True)):
            where = f"{SOURCES['cpp']}/{index:04d} test {number}"
            if run.error:
                errors.append(f"{where}: C++ GT failed: {run.error}")
            elif run.stdout != want:
                errors.append(f"{where}: C++ GT prints {run.stdout[:200]!r}, Python GT {want[:200]!r}")
    return errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only; do not write")
    parser.add_argument("--skip-cpp", action="store_true", help="do not compile and cross-check the C++ GTs")
    args = parser.parse_args()
    errors = check_sources()
    outputs, run_errors, slowest = run_python_gts()
    errors += run_errors
    if not args.skip_cpp and not run_errors:
        errors += check_cpp_gts(outputs)
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        return 1
    problems = build_problems(outputs)
    text = render(problems)
    python = [p for p in problems if p.language == "python"]
    levels = {d: sum(p.difficulty == d for p in python) for d in ("easy", "medium", "hard")}
    cpp_state = "not cross-checked (--skip-cpp)" if args.skip_cpp else "cross-checked"
    summary = (
        f"{len(python)} Python problems {levels}, {len(problems) - len(python)} C++ ({cpp_state}), "
        f"{sum(len(p.io_tests) for p in python)} tests; slowest Python GT run {slowest:.2f} s"
    )
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.is_file() else ""
        if current != text:
            print(f"{OUTPUT.name} is out of date: run this script without --check", file=sys.stderr)
            return 1
        print(f"up to date: {summary}")
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT.name}: {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
