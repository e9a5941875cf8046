"""Builds `problems.jsonl`, the problem set shipped inside codea1 (run from the repository root):

    python scripts/build_bundled.py          # writes codea1/data/bundled/problems.jsonl
    python scripts/build_bundled.py --check  # only verifies the file is up to date

Every problem here was written for this project. Each one is a task text, a ground-truth (GT) function
and at least five hand-written `CALL == EXPECTED` tests whose expected values were worked out by hand
(not produced by running the GT), so the build below really checks the GT against them. The build runs
each GT in this process (trusted code written here); the test suite checks them again in the sandbox.

Ids are "bundled/NNNN" in list order (0000, 0001, ...). Difficulty rises along the list: the first third
are one-liners ("easy"), then "medium" problems with edge cases, then "hard" algorithmic ones.
Split rule (fixed): a problem whose number NNNN is odd is in the held-out "eval" half, even numbers are
"train"; alternating keeps the difficulty mix of both halves the same.

This file is a development tool; the package ships only the JSONL it writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "codea1" / "data" / "bundled"
OUTPUT = HERE / "problems.jsonl"

# Each list holds (entry point, task text, GT program, tests as "CALL == EXPECTED"); the list names the
# difficulty.
EASY = [
    (
        "add",
        "Return the sum of the integers a and b.",
        """
def add(a: int, b: int) -> int:
    return a + b
""",
        [
            "add(1, 2) == 3",
            "add(-5, 5) == 0",
            "add(0, 0) == 0",
            "add(100, -250) == -150",
            "add(10**12, 1) == 1000000000001",
        ],
    ),
    (
        "reverse_string",
        "Return the string s reversed.",
        """
def reverse_string(s: str) -> str:
    return s[::-1]
""",
        [
            "reverse_string('abc') == 'cba'",
            "reverse_string('') == ''",
            "reverse_string('a') == 'a'",
            "reverse_string('racecar') == 'racecar'",
            "reverse_string('Hello, World') == 'dlroW ,olleH'",
        ],
    ),
    (
        "max_of_list",
        "Return the largest number in the non-empty list nums.",
        """
def max_of_list(nums: list[int]) -> int:
    return max(nums)
""",
        [
            "max_of_list([1, 5, 3]) == 5",
            "max_of_list([-3, -1, -2]) == -1",
            "max_of_list([7]) == 7",
            "max_of_list([2, 2, 2]) == 2",
            "max_of_list([0, -1, 10**9]) == 1000000000",
        ],
    ),
    (
        "is_even",
        "Return True if the integer n is even, otherwise False.",
        """
def is_even(n: int) -> bool:
    return n % 2 == 0
""",
        [
            "is_even(4) == True",
            "is_even(7) == False",
            "is_even(0) == True",
            "is_even(-2) == True",
            "is_even(-3) == False",
        ],
    ),
    (
        "square",
        "Return n multiplied by itself.",
        """
def square(n: int) -> int:
    return n * n
""",
        ["square(3) == 9", "square(-4) == 16", "square(0) == 0", "square(1) == 1", "square(12345) == 152399025"],
    ),
    (
        "count_vowels",
        "Return how many characters of s are vowels (a, e, i, o, u, in lower or upper case).",
        """
def count_vowels(s: str) -> int:
    return sum(1 for ch in s if ch.lower() in "aeiou")
""",
        [
            "count_vowels('hello') == 2",
            "count_vowels('') == 0",
            "count_vowels('AEIOU') == 5",
            "count_vowels('rhythm') == 0",
            "count_vowels('Programming Language') == 7",
        ],
    ),
    (
        "sum_list",
        "Return the sum of the numbers in the list nums (0 for an empty list).",
        """
def sum_list(nums: list[float]) -> float:
    return sum(nums)
""",
        [
            "sum_list([1, 2, 3]) == 6",
            "sum_list([]) == 0",
            "sum_list([-1, 1]) == 0",
            "sum_list([10]) == 10",
            "sum_list([1.5, 2.5]) == 4.0",
        ],
    ),
    (
        "first_or_none",
        "Return the first element of the list items, or None if the list is empty.",
        """
def first_or_none(items: list):
    return items[0] if items else None
""",
        [
            "first_or_none([3, 4]) == 3",
            "first_or_none([]) == None",
            "first_or_none(['a']) == 'a'",
            "first_or_none([0, 1]) == 0",
            "first_or_none([[1], [2]]) == [1]",
        ],
    ),
    (
        "absolute_difference",
        "Return the absolute value of the difference between a and b.",
        """
def absolute_difference(a: int, b: int) -> int:
    return abs(a - b)
""",
        [
            "absolute_difference(3, 7) == 4",
            "absolute_difference(7, 3) == 4",
            "absolute_difference(-2, 2) == 4",
            "absolute_difference(5, 5) == 0",
            "absolute_difference(-10, -4) == 6",
        ],
    ),
    (
        "to_upper",
        "Return the string s with every letter converted to upper case.",
        """
def to_upper(s: str) -> str:
    return s.upper()
""",
        [
            "to_upper('abc') == 'ABC'",
            "to_upper('') == ''",
            "to_upper('MiXeD 123') == 'MIXED 123'",
            "to_upper('already') == 'ALREADY'",
            "to_upper('a-b_c') == 'A-B_C'",
        ],
    ),
    (
        "count_words",
        "Return the number of words in s, where words are separated by any amount of whitespace.",
        """
def count_words(s: str) -> int:
    return len(s.split())
""",
        [
            "count_words('hello world') == 2",
            "count_words('') == 0",
            "count_words('   ') == 0",
            "count_words('one') == 1",
            "count_words('  a  b   c ') == 3",
        ],
    ),
    (
        "min_of_three",
        "Return the smallest of the three numbers a, b and c.",
        """
def min_of_three(a: float, b: float, c: float) -> float:
    return min(a, b, c)
""",
        [
            "min_of_three(1, 2, 3) == 1",
            "min_of_three(3, 2, 1) == 1",
            "min_of_three(-1, -5, 0) == -5",
            "min_of_three(4, 4, 4) == 4",
            "min_of_three(2.5, 2, 3) == 2",
        ],
    ),
    (
        "celsius_to_fahrenheit",
        "Convert a temperature from degrees Celsius to degrees Fahrenheit (F = C * 9 / 5 + 32).",
        """
def celsius_to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32
""",
        [
            "celsius_to_fahrenheit(0) == 32.0",
            "celsius_to_fahrenheit(100) == 212.0",
            "celsius_to_fahrenheit(-40) == -40.0",
            "celsius_to_fahrenheit(10) == 50.0",
            "celsius_to_fahrenheit(-10) == 14.0",
        ],
    ),
    (
        "is_palindrome",
        "Return True if the string s reads the same forwards and backwards (case-sensitive).",
        """
def is_palindrome(s: str) -> bool:
    return s == s[::-1]
""",
        [
            "is_palindrome('racecar') == True",
            "is_palindrome('abca') == False",
            "is_palindrome('') == True",
            "is_palindrome('a') == True",
            "is_palindrome('Aa') == False",
        ],
    ),
    (
        "repeat_string",
        "Return the string s repeated n times (an empty string when n is 0 or negative).",
        """
def repeat_string(s: str, n: int) -> str:
    return s * n
""",
        [
            "repeat_string('ab', 3) == 'ababab'",
            "repeat_string('x', 0) == ''",
            "repeat_string('', 5) == ''",
            "repeat_string('hi', 1) == 'hi'",
            "repeat_string('ab', -1) == ''",
        ],
    ),
    (
        "last_element",
        "Return the last element of the non-empty list items.",
        """
def last_element(items: list):
    return items[-1]
""",
        [
            "last_element([1, 2, 3]) == 3",
            "last_element(['a']) == 'a'",
            "last_element([[1, 2], [3]]) == [3]",
            "last_element([0, 0, None]) == None",
            "last_element([True, False]) == False",
        ],
    ),
    (
        "count_occurrences",
        "Return how many elements of the list items are equal to x.",
        """
def count_occurrences(items: list, x) -> int:
    return items.count(x)
""",
        [
            "count_occurrences([1, 2, 1], 1) == 2",
            "count_occurrences([], 1) == 0",
            "count_occurrences(['a', 'b'], 'c') == 0",
            "count_occurrences([0, 0, 0], 0) == 3",
            "count_occurrences([None, 'x', None], None) == 2",
        ],
    ),
    (
        "double_all",
        "Return a new list with every number of nums multiplied by 2.",
        """
def double_all(nums: list[float]) -> list[float]:
    return [x * 2 for x in nums]
""",
        [
            "double_all([1, 2, 3]) == [2, 4, 6]",
            "double_all([]) == []",
            "double_all([-1]) == [-2]",
            "double_all([0, 5]) == [0, 10]",
            "double_all([1.5]) == [3.0]",
        ],
    ),
    (
        "filter_positive",
        "Return the numbers of nums that are strictly greater than zero, in their original order.",
        """
def filter_positive(nums: list[int]) -> list[int]:
    return [x for x in nums if x > 0]
""",
        [
            "filter_positive([1, -2, 3]) == [1, 3]",
            "filter_positive([]) == []",
            "filter_positive([0, -1]) == []",
            "filter_positive([5]) == [5]",
            "filter_positive([-1, 2, 0, 4]) == [2, 4]",
        ],
    ),
    (
        "join_with_comma",
        "Join the strings of words into one string, separated by a comma and a space.",
        """
def join_with_comma(words: list[str]) -> str:
    return ", ".join(words)
""",
        [
            "join_with_comma(['a', 'b']) == 'a, b'",
            "join_with_comma([]) == ''",
            "join_with_comma(['one']) == 'one'",
            "join_with_comma(['x', '', 'y']) == 'x, , y'",
            "join_with_comma(['a b', 'c']) == 'a b, c'",
        ],
    ),
    (
        "factorial",
        "Return n! (the product 1 * 2 * ... * n) for an integer n >= 0; 0! is 1.",
        """
def factorial(n: int) -> int:
    result = 1
    for k in range(2, n + 1):
        result *= k
    return result
""",
        [
            "factorial(0) == 1",
            "factorial(1) == 1",
            "factorial(5) == 120",
            "factorial(10) == 3628800",
            "factorial(20) == 2432902008176640000",
        ],
    ),
    (
        "is_leap_year",
        (
            "Return True if year is a leap year in the Gregorian calendar: divisible by 4, except "
            "centuries, which must be divisible by 400."
        ),
        """
def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
""",
        [
            "is_leap_year(2000) == True",
            "is_leap_year(1900) == False",
            "is_leap_year(2024) == True",
            "is_leap_year(2023) == False",
            "is_leap_year(2400) == True",
        ],
    ),
    (
        "sum_of_digits",
        "Return the sum of the decimal digits of the integer n >= 0.",
        """
def sum_of_digits(n: int) -> int:
    return sum(int(d) for d in str(n))
""",
        [
            "sum_of_digits(0) == 0",
            "sum_of_digits(7) == 7",
            "sum_of_digits(123) == 6",
            "sum_of_digits(9999) == 36",
            "sum_of_digits(10**18) == 1",
        ],
    ),
    (
        "starts_with_vowel",
        ("Return True if the string s starts with a vowel (a, e, i, o, u, any case); False for an empty string."),
        """
def starts_with_vowel(s: str) -> bool:
    return s[:1].lower() in ("a", "e", "i", "o", "u")
""",
        [
            "starts_with_vowel('apple') == True",
            "starts_with_vowel('Banana') == False",
            "starts_with_vowel('') == False",
            "starts_with_vowel('Orange') == True",
            "starts_with_vowel('yes') == False",
        ],
    ),
    (
        "average",
        "Return the arithmetic mean of the numbers in nums as a float, or 0.0 for an empty list.",
        """
def average(nums: list[float]) -> float:
    if not nums:
        return 0.0
    return sum(nums) / len(nums)
""",
        [
            "average([1, 2, 3]) == 2.0",
            "average([]) == 0.0",
            "average([5]) == 5.0",
            "average([-1, 1]) == 0.0",
            "average([1, 2]) == 1.5",
        ],
    ),
    (
        "remove_spaces",
        "Return s with every space character removed.",
        """
def remove_spaces(s: str) -> str:
    return s.replace(" ", "")
""",
        [
            "remove_spaces('a b c') == 'abc'",
            "remove_spaces('') == ''",
            "remove_spaces('   ') == ''",
            "remove_spaces('nospace') == 'nospace'",
            "remove_spaces(' lead and trail ') == 'leadandtrail'",
        ],
    ),
    (
        "max_of_two",
        "Return the larger of the two numbers a and b.",
        """
def max_of_two(a: float, b: float) -> float:
    return a if a >= b else b
""",
        [
            "max_of_two(1, 2) == 2",
            "max_of_two(2, 1) == 2",
            "max_of_two(-1, -2) == -1",
            "max_of_two(3, 3) == 3",
            "max_of_two(0, -0.5) == 0",
        ],
    ),
    (
        "count_char",
        "Return how many times the character c occurs in s (case-sensitive).",
        """
def count_char(s: str, c: str) -> int:
    return s.count(c)
""",
        [
            "count_char('banana', 'a') == 3",
            "count_char('', 'a') == 0",
            "count_char('aaa', 'b') == 0",
            "count_char('Mississippi', 's') == 4",
            "count_char('AaA', 'a') == 1",
        ],
    ),
    (
        "fizzbuzz_word",
        (
            "Return 'FizzBuzz' if n is divisible by 15, 'Fizz' if divisible by 3, 'Buzz' if divisible "
            "by 5, and otherwise n written as a string."
        ),
        """
def fizzbuzz_word(n: int) -> str:
    if n % 15 == 0:
        return "FizzBuzz"
    if n % 3 == 0:
        return "Fizz"
    if n % 5 == 0:
        return "Buzz"
    return str(n)
""",
        [
            "fizzbuzz_word(3) == 'Fizz'",
            "fizzbuzz_word(5) == 'Buzz'",
            "fizzbuzz_word(15) == 'FizzBuzz'",
            "fizzbuzz_word(7) == '7'",
            "fizzbuzz_word(0) == 'FizzBuzz'",
            "fizzbuzz_word(-9) == 'Fizz'",
        ],
    ),
    (
        "swap_pair",
        "Given a tuple of two elements, return a new tuple with the elements in the opposite order.",
        """
def swap_pair(pair: tuple) -> tuple:
    a, b = pair
    return (b, a)
""",
        [
            "swap_pair((1, 2)) == (2, 1)",
            "swap_pair(('a', 'b')) == ('b', 'a')",
            "swap_pair((0, 0)) == (0, 0)",
            "swap_pair((None, 1)) == (1, None)",
            "swap_pair(([1], [2])) == ([2], [1])",
        ],
    ),
    (
        "fibonacci",
        "Return the n-th Fibonacci number for n >= 0, where fibonacci(0) = 0 and fibonacci(1) = 1.",
        """
def fibonacci(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
        [
            "fibonacci(0) == 0",
            "fibonacci(1) == 1",
            "fibonacci(2) == 1",
            "fibonacci(10) == 55",
            "fibonacci(50) == 12586269025",
        ],
    ),
    (
        "unique_sorted",
        "Return the distinct elements of items sorted in increasing order.",
        """
def unique_sorted(items: list) -> list:
    return sorted(set(items))
""",
        [
            "unique_sorted([3, 1, 3, 2]) == [1, 2, 3]",
            "unique_sorted([]) == []",
            "unique_sorted([5, 5, 5]) == [5]",
            "unique_sorted([-1, 0, -1]) == [-1, 0]",
            "unique_sorted(['b', 'a', 'b']) == ['a', 'b']",
        ],
    ),
]

MEDIUM = [
    (
        "second_largest",
        ("Return the second largest distinct value in nums, or None if nums has fewer than two distinct values."),
        """
def second_largest(nums: list[int]) -> int | None:
    distinct = sorted(set(nums), reverse=True)
    return distinct[1] if len(distinct) >= 2 else None
""",
        [
            "second_largest([1, 3, 2]) == 2",
            "second_largest([5, 5, 4]) == 4",
            "second_largest([7, 7]) == None",
            "second_largest([]) == None",
            "second_largest([-1, -2, -3]) == -2",
            "second_largest([10**18, 1, 10**18]) == 1",
        ],
    ),
    (
        "run_length_encode",
        (
            "Compress s by replacing each run of equal characters with the character followed by "
            "the run length, e.g. 'aaabcc' becomes 'a3b1c2'."
        ),
        """
def run_length_encode(s: str) -> str:
    out = []
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        out.append(f"{s[i]}{j - i}")
        i = j
    return "".join(out)
""",
        [
            "run_length_encode('aaabcc') == 'a3b1c2'",
            "run_length_encode('') == ''",
            "run_length_encode('a') == 'a1'",
            "run_length_encode('abab') == 'a1b1a1b1'",
            "run_length_encode('zzzzzzzzzzzz') == 'z12'",
        ],
    ),
    (
        "run_length_decode",
        (
            "Expand a run-length encoded string made of letters each followed by a decimal count "
            "(possibly several digits), e.g. 'a3b1c2' becomes 'aaabcc'."
        ),
        """
def run_length_decode(encoded: str) -> str:
    out = []
    i = 0
    while i < len(encoded):
        ch = encoded[i]
        j = i + 1
        while j < len(encoded) and encoded[j].isdigit():
            j += 1
        out.append(ch * int(encoded[i + 1:j]))
        i = j
    return "".join(out)
""",
        [
            "run_length_decode('a3b1c2') == 'aaabcc'",
            "run_length_decode('') == ''",
            "run_length_decode('a1') == 'a'",
            "run_length_decode('z12') == 'zzzzzzzzzzzz'",
            "run_length_decode('x2y10') == 'xxyyyyyyyyyy'",
        ],
    ),
    (
        "merge_sorted",
        ("Merge the two lists a and b, each sorted in increasing order, into one sorted list (duplicates kept)."),
        """
def merge_sorted(a: list[int], b: list[int]) -> list[int]:
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out + a[i:] + b[j:]
""",
        [
            "merge_sorted([1, 3, 5], [2, 4]) == [1, 2, 3, 4, 5]",
            "merge_sorted([], []) == []",
            "merge_sorted([], [1]) == [1]",
            "merge_sorted([1, 1], [1]) == [1, 1, 1]",
            "merge_sorted([-3, 0], [-5, 10]) == [-5, -3, 0, 10]",
        ],
    ),
    (
        "chunk_list",
        ("Split items into consecutive chunks of length size (size >= 1); the last chunk may be shorter."),
        """
def chunk_list(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]
""",
        [
            "chunk_list([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
            "chunk_list([], 3) == []",
            "chunk_list([1, 2], 5) == [[1, 2]]",
            "chunk_list([1, 2, 3], 1) == [[1], [2], [3]]",
            "chunk_list([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]",
        ],
    ),
    (
        "flatten",
        "Flatten a list that may contain nested lists to any depth into one flat list, keeping order.",
        """
def flatten(nested: list) -> list:
    out = []
    for item in nested:
        if isinstance(item, list):
            out.extend(flatten(item))
        else:
            out.append(item)
    return out
""",
        [
            "flatten([1, [2, [3, [4]]]]) == [1, 2, 3, 4]",
            "flatten([]) == []",
            "flatten([[], [[]]]) == []",
            "flatten([1, 2]) == [1, 2]",
            "flatten([[1, 'a'], ['b', [None]]]) == [1, 'a', 'b', None]",
        ],
    ),
    (
        "word_frequencies",
        ("Count the words of text (split on whitespace, compared in lower case) and return a dict from word to count."),
        """
def word_frequencies(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts
""",
        [
            "word_frequencies('a b a') == {'a': 2, 'b': 1}",
            "word_frequencies('') == {}",
            "word_frequencies('The the THE') == {'the': 3}",
            "word_frequencies('x') == {'x': 1}",
            "word_frequencies('  hi  there hi ') == {'hi': 2, 'there': 1}",
        ],
    ),
    (
        "is_anagram",
        ("Return True if a and b contain the same letters the same number of times, ignoring case and spaces."),
        """
def is_anagram(a: str, b: str) -> bool:
    def norm(s: str) -> list[str]:
        return sorted(s.replace(" ", "").lower())
    return norm(a) == norm(b)
""",
        [
            "is_anagram('listen', 'silent') == True",
            "is_anagram('Dormitory', 'dirty room') == True",
            "is_anagram('abc', 'abd') == False",
            "is_anagram('', '') == True",
            "is_anagram('aab', 'abb') == False",
        ],
    ),
    (
        "max_subarray_sum",
        ("Return the largest sum of a non-empty contiguous sub-list of nums, or 0 if nums is empty."),
        """
def max_subarray_sum(nums: list[int]) -> int:
    if not nums:
        return 0
    best = current = nums[0]
    for x in nums[1:]:
        current = max(x, current + x)
        best = max(best, current)
    return best
""",
        [
            "max_subarray_sum([-2, 1, -3, 4, -1, 2, 1, -5, 4]) == 6",
            "max_subarray_sum([]) == 0",
            "max_subarray_sum([-3, -1, -2]) == -1",
            "max_subarray_sum([5]) == 5",
            "max_subarray_sum([1, 2, 3]) == 6",
        ],
    ),
    (
        "two_sum_indices",
        (
            "Return a tuple (i, j) with i < j and nums[i] + nums[j] == target, choosing the "
            "smallest such j and then the smallest i; return None if there is no such pair."
        ),
        """
def two_sum_indices(nums: list[int], target: int) -> tuple[int, int] | None:
    first_index: dict[int, int] = {}
    for j, x in enumerate(nums):
        if target - x in first_index:
            return (first_index[target - x], j)
        first_index.setdefault(x, j)
    return None
""",
        [
            "two_sum_indices([2, 7, 11, 15], 9) == (0, 1)",
            "two_sum_indices([3, 3], 6) == (0, 1)",
            "two_sum_indices([1, 2, 3], 7) == None",
            "two_sum_indices([], 0) == None",
            "two_sum_indices([1, 5, 1, 5], 6) == (0, 1)",
            "two_sum_indices([0, 4, 3, 0], 0) == (0, 3)",
        ],
    ),
    (
        "rotate_right",
        (
            "Rotate the list items to the right by k positions (k may be larger than the length or "
            "negative, which rotates left) and return the new list."
        ),
        """
def rotate_right(items: list, k: int) -> list:
    if not items:
        return []
    k %= len(items)
    return items[-k:] + items[:-k] if k else list(items)
""",
        [
            "rotate_right([1, 2, 3, 4, 5], 2) == [4, 5, 1, 2, 3]",
            "rotate_right([], 3) == []",
            "rotate_right([1, 2, 3], 0) == [1, 2, 3]",
            "rotate_right([1, 2, 3], 4) == [3, 1, 2]",
            "rotate_right([1, 2, 3], -1) == [2, 3, 1]",
        ],
    ),
    (
        "count_primes_below",
        "Return how many prime numbers are strictly smaller than n.",
        """
def count_primes_below(n: int) -> int:
    if n < 3:
        return 0
    sieve = [True] * n
    sieve[0] = sieve[1] = False
    for p in range(2, int(n ** 0.5) + 1):
        if sieve[p]:
            for m in range(p * p, n, p):
                sieve[m] = False
    return sum(sieve)
""",
        [
            "count_primes_below(10) == 4",
            "count_primes_below(0) == 0",
            "count_primes_below(2) == 0",
            "count_primes_below(3) == 1",
            "count_primes_below(100) == 25",
            "count_primes_below(1) == 0",
        ],
    ),
    (
        "gcd_list",
        (
            "Return the greatest common divisor of all integers in nums (signs ignored); 0 for an empty "
            "list or a list of zeros."
        ),
        """
import math


def gcd_list(nums: list[int]) -> int:
    result = 0
    for x in nums:
        result = math.gcd(result, x)
    return result
""",
        [
            "gcd_list([12, 18, 24]) == 6",
            "gcd_list([]) == 0",
            "gcd_list([7]) == 7",
            "gcd_list([-4, 6]) == 2",
            "gcd_list([0, 0]) == 0",
            "gcd_list([0, 5]) == 5",
        ],
    ),
    (
        "roman_to_int",
        "Convert a valid Roman numeral (I, V, X, L, C, D, M; values 1 to 3999) to an integer.",
        """
def roman_to_int(s: str) -> int:
    values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
    total = 0
    for i, ch in enumerate(s):
        v = values[ch]
        if i + 1 < len(s) and values[s[i + 1]] > v:
            total -= v
        else:
            total += v
    return total
""",
        [
            "roman_to_int('III') == 3",
            "roman_to_int('IV') == 4",
            "roman_to_int('MCMXCIV') == 1994",
            "roman_to_int('LVIII') == 58",
            "roman_to_int('MMMCMXCIX') == 3999",
        ],
    ),
    (
        "int_to_roman",
        "Convert an integer from 1 to 3999 to its Roman numeral (subtractive form, e.g. 4 is 'IV').",
        """
def int_to_roman(n: int) -> str:
    table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
             (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
    out = []
    for value, symbol in table:
        count, n = divmod(n, value)
        out.append(symbol * count)
    return "".join(out)
""",
        [
            "int_to_roman(1) == 'I'",
            "int_to_roman(4) == 'IV'",
            "int_to_roman(9) == 'IX'",
            "int_to_roman(58) == 'LVIII'",
            "int_to_roman(1994) == 'MCMXCIV'",
            "int_to_roman(3999) == 'MMMCMXCIX'",
        ],
    ),
    (
        "valid_brackets",
        (
            "Return True if the brackets (), [] and {} in s are balanced and properly nested; other "
            "characters are ignored."
        ),
        """
def valid_brackets(s: str) -> bool:
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in s:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack.pop() != pairs[ch]:
                return False
    return not stack
""",
        [
            "valid_brackets('()[]{}') == True",
            "valid_brackets('(]') == False",
            "valid_brackets('') == True",
            "valid_brackets('([)]') == False",
            "valid_brackets('{[]}') == True",
            "valid_brackets('((') == False",
            "valid_brackets('a(b)c') == True",
            "valid_brackets(')(') == False",
        ],
    ),
    (
        "longest_common_prefix",
        ("Return the longest string that is a prefix of every string in words ('' for an empty list)."),
        """
def longest_common_prefix(words: list[str]) -> str:
    if not words:
        return ""
    prefix = words[0]
    for w in words[1:]:
        while not w.startswith(prefix):
            prefix = prefix[:-1]
    return prefix
""",
        [
            "longest_common_prefix(['flower', 'flow', 'flight']) == 'fl'",
            "longest_common_prefix([]) == ''",
            "longest_common_prefix(['dog', 'racecar', 'car']) == ''",
            "longest_common_prefix(['same', 'same']) == 'same'",
            "longest_common_prefix(['a']) == 'a'",
            "longest_common_prefix(['ab', '']) == ''",
        ],
    ),
    (
        "binary_search",
        (
            "Return the index of target in the list nums of distinct integers sorted in increasing "
            "order, or -1 if it is absent. Use binary search."
        ),
        """
def binary_search(nums: list[int], target: int) -> int:
    lo, hi = 0, len(nums) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if nums[mid] == target:
            return mid
        if nums[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
""",
        [
            "binary_search([1, 3, 5, 7], 5) == 2",
            "binary_search([], 1) == -1",
            "binary_search([1], 1) == 0",
            "binary_search([1, 3, 5], 4) == -1",
            "binary_search([-10, -5, 0, 5], -10) == 0",
            "binary_search([1, 2, 3, 4, 5, 6], 6) == 5",
        ],
    ),
    (
        "dedupe_keep_order",
        ("Return the elements of items without repeats, keeping the first occurrence of each in its original order."),
        """
def dedupe_keep_order(items: list) -> list:
    seen = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out
""",
        [
            "dedupe_keep_order([3, 1, 3, 2, 1]) == [3, 1, 2]",
            "dedupe_keep_order([]) == []",
            "dedupe_keep_order(['a', 'A', 'a']) == ['a', 'A']",
            "dedupe_keep_order([1, 1, 1]) == [1]",
            "dedupe_keep_order([None, 0, None]) == [None, 0]",
        ],
    ),
    (
        "caesar_shift",
        (
            "Shift every ASCII letter of s forward by k places in the alphabet, wrapping around and "
            "keeping its case; other characters stay. k may be negative or larger than 26."
        ),
        """
def caesar_shift(s: str, k: int) -> str:
    out = []
    for ch in s:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + k) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + k) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)
""",
        [
            "caesar_shift('abc', 1) == 'bcd'",
            "caesar_shift('xyz', 3) == 'abc'",
            "caesar_shift('Hello, World!', 5) == 'Mjqqt, Btwqi!'",
            "caesar_shift('abc', -1) == 'zab'",
            "caesar_shift('', 10) == ''",
            "caesar_shift('Zz', 52) == 'Zz'",
        ],
    ),
    (
        "transpose",
        "Return the transpose of a rectangular matrix given as a list of rows.",
        """
def transpose(matrix: list[list[int]]) -> list[list[int]]:
    if not matrix:
        return []
    return [[row[c] for row in matrix] for c in range(len(matrix[0]))]
""",
        [
            "transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]",
            "transpose([]) == []",
            "transpose([[1]]) == [[1]]",
            "transpose([[1, 2]]) == [[1], [2]]",
            "transpose([[1], [2]]) == [[1, 2]]",
        ],
    ),
    (
        "pascal_row",
        "Return row n (counting from 0) of Pascal's triangle as a list, or [] for negative n.",
        """
def pascal_row(n: int) -> list[int]:
    if n < 0:
        return []
    row = [1]
    for _ in range(n):
        row = [1] + [row[i] + row[i + 1] for i in range(len(row) - 1)] + [1]
    return row
""",
        [
            "pascal_row(0) == [1]",
            "pascal_row(1) == [1, 1]",
            "pascal_row(4) == [1, 4, 6, 4, 1]",
            "pascal_row(5) == [1, 5, 10, 10, 5, 1]",
            "pascal_row(-1) == []",
        ],
    ),
    (
        "summary_ranges",
        (
            "Given a sorted list of distinct integers, describe it as ranges: each maximal run of "
            "consecutive numbers a..b becomes 'a->b' (or just 'a' when a == b)."
        ),
        """
def summary_ranges(nums: list[int]) -> list[str]:
    out = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        out.append(str(nums[i]) if i == j else f"{nums[i]}->{nums[j]}")
        i = j + 1
    return out
""",
        [
            "summary_ranges([0, 1, 2, 4, 5, 7]) == ['0->2', '4->5', '7']",
            "summary_ranges([]) == []",
            "summary_ranges([1]) == ['1']",
            "summary_ranges([-2, -1, 3]) == ['-2->-1', '3']",
            "summary_ranges([1, 3, 5]) == ['1', '3', '5']",
        ],
    ),
    (
        "most_frequent",
        (
            "Return the element that occurs most often in items; on a tie return the one whose first "
            "occurrence comes first; None for an empty list."
        ),
        """
def most_frequent(items: list):
    counts: dict = {}
    for x in items:
        counts[x] = counts.get(x, 0) + 1
    best = None
    best_count = 0
    for x, c in counts.items():
        if c > best_count:
            best, best_count = x, c
    return best
""",
        [
            "most_frequent([1, 2, 2, 3]) == 2",
            "most_frequent([]) == None",
            "most_frequent(['a', 'b']) == 'a'",
            "most_frequent([3, 1, 1, 3]) == 3",
            "most_frequent([5]) == 5",
        ],
    ),
    (
        "is_prime",
        "Return True if n is a prime number (negative numbers, 0 and 1 are not prime).",
        """
def is_prime(n: int) -> bool:
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True
""",
        [
            "is_prime(2) == True",
            "is_prime(1) == False",
            "is_prime(0) == False",
            "is_prime(-7) == False",
            "is_prime(97) == True",
            "is_prime(91) == False",
            "is_prime(7919) == True",
        ],
    ),
    (
        "deep_get",
        (
            "Follow the dot-separated keys of path through nested dicts, e.g. 'a.b' reads d['a']['b']; "
            "return None as soon as a key is missing or a value on the way is not a dict."
        ),
        """
def deep_get(d: dict, path: str):
    current = d
    for key in path.split("."):
        if not isinstance(current, dict) or key not in current:
            return None
        current = current[key]
    return current
""",
        [
            "deep_get({'a': {'b': 1}}, 'a.b') == 1",
            "deep_get({}, 'a') == None",
            "deep_get({'a': 1}, 'a.b') == None",
            "deep_get({'a': {'b': {'c': [1]}}}, 'a.b.c') == [1]",
            "deep_get({'x': 0}, 'x') == 0",
        ],
    ),
    (
        "snake_to_camel",
        (
            "Convert a snake_case name to camelCase: split on underscores, drop empty parts, keep the "
            "first part as it is and upper-case the first letter of each later part (other letters unchanged)."
        ),
        """
def snake_to_camel(name: str) -> str:
    parts = [p for p in name.split("_") if p]
    if not parts:
        return ""
    return parts[0] + "".join(p[0].upper() + p[1:] for p in parts[1:])
""",
        [
            "snake_to_camel('hello_world') == 'helloWorld'",
            "snake_to_camel('') == ''",
            "snake_to_camel('single') == 'single'",
            "snake_to_camel('a_b_c') == 'aBC'",
            "snake_to_camel('__leading__under') == 'leadingUnder'",
            "snake_to_camel('get_HTTP_code') == 'getHTTPCode'",
        ],
    ),
    (
        "camel_to_snake",
        (
            "Convert a camelCase name to snake_case: every upper-case letter becomes an underscore "
            "followed by its lower-case form, except at the very start, where it is only lower-cased."
        ),
        """
def camel_to_snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper():
            out.append(("_" if i else "") + ch.lower())
        else:
            out.append(ch)
    return "".join(out)
""",
        [
            "camel_to_snake('helloWorld') == 'hello_world'",
            "camel_to_snake('already') == 'already'",
            "camel_to_snake('') == ''",
            "camel_to_snake('HelloWorld') == 'hello_world'",
            "camel_to_snake('getX') == 'get_x'",
            "camel_to_snake('ABC') == 'a_b_c'",
        ],
    ),
    (
        "matmul",
        (
            "Multiply two matrices given as lists of rows (the column count of a equals the row count of b); "
            "return [] if a is empty."
        ),
        """
def matmul(a: list[list[int]], b: list[list[int]]) -> list[list[int]]:
    if not a:
        return []
    cols = len(b[0]) if b else 0
    return [[sum(row[k] * b[k][c] for k in range(len(b))) for c in range(cols)] for row in a]
""",
        [
            "matmul([[1, 2], [3, 4]], [[5, 6], [7, 8]]) == [[19, 22], [43, 50]]",
            "matmul([[1, 0], [0, 1]], [[2, 3], [4, 5]]) == [[2, 3], [4, 5]]",
            "matmul([[2]], [[3]]) == [[6]]",
            "matmul([[1, 2, 3]], [[1], [2], [3]]) == [[14]]",
            "matmul([[1], [2]], [[3, 4]]) == [[3, 4], [6, 8]]",
            "matmul([], []) == []",
        ],
    ),
    (
        "spiral_order",
        ("Return the elements of a rectangular matrix in clockwise spiral order, starting at the top-left corner."),
        """
def spiral_order(matrix: list[list[int]]) -> list[int]:
    out = []
    if not matrix:
        return out
    top, bottom, left, right = 0, len(matrix) - 1, 0, len(matrix[0]) - 1
    while top <= bottom and left <= right:
        out.extend(matrix[top][c] for c in range(left, right + 1))
        out.extend(matrix[r][right] for r in range(top + 1, bottom + 1))
        if top < bottom:
            out.extend(matrix[bottom][c] for c in range(right - 1, left - 1, -1))
        if left < right:
            out.extend(matrix[r][left] for r in range(bottom - 1, top, -1))
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return out
""",
        [
            "spiral_order([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]",
            "spiral_order([]) == []",
            "spiral_order([[1]]) == [1]",
            "spiral_order([[1, 2, 3, 4]]) == [1, 2, 3, 4]",
            "spiral_order([[1], [2], [3]]) == [1, 2, 3]",
            "spiral_order([[1, 2], [3, 4], [5, 6]]) == [1, 2, 4, 6, 5, 3]",
        ],
    ),
    (
        "group_anagrams",
        (
            "Group the words that are anagrams of each other. Each group keeps its words in input "
            "order and the groups are ordered by their first word's position."
        ),
        """
def group_anagrams(words: list[str]) -> list[list[str]]:
    groups: dict[str, list[str]] = {}
    for w in words:
        groups.setdefault("".join(sorted(w)), []).append(w)
    return list(groups.values())
""",
        [
            (
                "group_anagrams(['eat', 'tea', 'tan', 'ate', 'nat', 'bat']) == [['eat', 'tea', 'ate'], ['tan', 'nat'], "
                "['bat']]"
            ),
            "group_anagrams([]) == []",
            "group_anagrams(['']) == [['']]",
            "group_anagrams(['a']) == [['a']]",
            "group_anagrams(['ab', 'ba', 'ab']) == [['ab', 'ba', 'ab']]",
        ],
    ),
    (
        "product_except_self",
        (
            "Return a list whose i-th element is the product of all elements of nums except "
            "nums[i], without using division."
        ),
        """
def product_except_self(nums: list[int]) -> list[int]:
    n = len(nums)
    out = [1] * n
    prefix = 1
    for i in range(n):
        out[i] = prefix
        prefix *= nums[i]
    suffix = 1
    for i in range(n - 1, -1, -1):
        out[i] *= suffix
        suffix *= nums[i]
    return out
""",
        [
            "product_except_self([1, 2, 3, 4]) == [24, 12, 8, 6]",
            "product_except_self([]) == []",
            "product_except_self([5]) == [1]",
            "product_except_self([0, 1, 2]) == [2, 0, 0]",
            "product_except_self([0, 0]) == [0, 0]",
            "product_except_self([-1, 2, -3]) == [-6, 3, -2]",
        ],
    ),
    (
        "moving_average",
        (
            "Return the means of every window of k consecutive numbers of nums (k >= 1), in order; "
            "[] when k is larger than the list."
        ),
        """
def moving_average(nums: list[float], k: int) -> list[float]:
    return [sum(nums[i:i + k]) / k for i in range(len(nums) - k + 1)]
""",
        [
            "moving_average([1, 2, 3, 4], 2) == [1.5, 2.5, 3.5]",
            "moving_average([], 1) == []",
            "moving_average([5], 1) == [5.0]",
            "moving_average([1, 2], 3) == []",
            "moving_average([2, 4, 6], 3) == [4.0]",
        ],
    ),
    (
        "parse_key_values",
        (
            "Parse a string like 'a=1;b=2' into a dict of strings. Pieces are separated by ';', "
            "empty pieces are skipped, keys and values are stripped of spaces, a piece is split at its first '=', and a "
            "later key overrides an earlier one."
        ),
        """
def parse_key_values(text: str) -> dict[str, str]:
    out = {}
    for piece in text.split(";"):
        if not piece.strip():
            continue
        key, _, value = piece.partition("=")
        out[key.strip()] = value.strip()
    return out
""",
        [
            "parse_key_values('a=1;b=2') == {'a': '1', 'b': '2'}",
            "parse_key_values('') == {}",
            "parse_key_values('k=v') == {'k': 'v'}",
            "parse_key_values(' x = 1 ; ; y=2 ') == {'x': '1', 'y': '2'}",
            "parse_key_values('a=1;a=2') == {'a': '2'}",
            "parse_key_values('url=a=b') == {'url': 'a=b'}",
        ],
    ),
    (
        "valid_ipv4",
        (
            "Return True if s is a dotted IPv4 address: four decimal parts 0 to 255, digits only, and no "
            "leading zeros (except the single digit 0)."
        ),
        """
def valid_ipv4(s: str) -> bool:
    parts = s.split(".")
    if len(parts) != 4:
        return False
    for p in parts:
        if not p.isdigit() or not p.isascii():
            return False
        if len(p) > 1 and p[0] == "0":
            return False
        if int(p) > 255:
            return False
    return True
""",
        [
            "valid_ipv4('192.168.1.1') == True",
            "valid_ipv4('256.1.1.1') == False",
            "valid_ipv4('1.2.3') == False",
            "valid_ipv4('01.2.3.4') == False",
            "valid_ipv4('0.0.0.0') == True",
            "valid_ipv4('1.2.3.a') == False",
            "valid_ipv4('') == False",
            "valid_ipv4('1.2.3.4.5') == False",
        ],
    ),
    (
        "next_greater",
        (
            "For each element of nums return the first element to its right that is strictly larger, "
            "or -1 if there is none."
        ),
        """
def next_greater(nums: list[int]) -> list[int]:
    out = [-1] * len(nums)
    stack: list[int] = []
    for i, x in enumerate(nums):
        while stack and nums[stack[-1]] < x:
            out[stack.pop()] = x
        stack.append(i)
    return out
""",
        [
            "next_greater([2, 1, 3]) == [3, 3, -1]",
            "next_greater([]) == []",
            "next_greater([5, 4, 3]) == [-1, -1, -1]",
            "next_greater([1, 1, 2]) == [2, 2, -1]",
            "next_greater([4]) == [-1]",
        ],
    ),
    (
        "max_profit",
        (
            "Given daily prices, return the largest profit from buying on one day and selling on a later "
            "day, or 0 if no profit is possible."
        ),
        """
def max_profit(prices: list[int]) -> int:
    best = 0
    lowest = None
    for p in prices:
        if lowest is None or p < lowest:
            lowest = p
        best = max(best, p - lowest)
    return best
""",
        [
            "max_profit([7, 1, 5, 3, 6, 4]) == 5",
            "max_profit([7, 6, 4, 3, 1]) == 0",
            "max_profit([]) == 0",
            "max_profit([1]) == 0",
            "max_profit([2, 4, 1, 7]) == 6",
        ],
    ),
]

HARD = [
    (
        "count_islands",
        (
            "Count the islands in a grid of 0s and 1s: an island is a group of 1 cells joined "
            "horizontally or vertically."
        ),
        """
def count_islands(grid: list[list[int]]) -> int:
    rows = len(grid)
    cols = len(grid[0]) if rows else 0
    seen = set()
    islands = 0
    for r in range(rows):
        for c in range(cols):
            if grid[r][c] != 1 or (r, c) in seen:
                continue
            islands += 1
            stack = [(r, c)]
            seen.add((r, c))
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    if 0 <= ny < rows and 0 <= nx < cols and grid[ny][nx] == 1 and (ny, nx) not in seen:
                        seen.add((ny, nx))
                        stack.append((ny, nx))
    return islands
""",
        [
            "count_islands([[1, 1, 0], [0, 1, 0], [1, 0, 1]]) == 3",
            "count_islands([]) == 0",
            "count_islands([[0]]) == 0",
            "count_islands([[1]]) == 1",
            "count_islands([[1, 0, 1, 0, 1]]) == 3",
            "count_islands([[1, 1], [1, 1]]) == 1",
        ],
    ),
    (
        "lis_length",
        "Return the length of the longest strictly increasing subsequence of nums.",
        """
import bisect


def lis_length(nums: list[int]) -> int:
    tails: list[int] = []
    for x in nums:
        i = bisect.bisect_left(tails, x)
        if i == len(tails):
            tails.append(x)
        else:
            tails[i] = x
    return len(tails)
""",
        [
            "lis_length([10, 9, 2, 5, 3, 7, 101, 18]) == 4",
            "lis_length([]) == 0",
            "lis_length([7, 7, 7]) == 1",
            "lis_length([1, 2, 3]) == 3",
            "lis_length([3, 2, 1]) == 1",
            "lis_length([0, 1, 0, 3, 2, 3]) == 4",
        ],
    ),
    (
        "edit_distance",
        ("Return the minimum number of single-character insertions, deletions and substitutions that turn a into b."),
        """
def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]
""",
        [
            "edit_distance('kitten', 'sitting') == 3",
            "edit_distance('', '') == 0",
            "edit_distance('', 'abc') == 3",
            "edit_distance('abc', 'abc') == 0",
            "edit_distance('horse', 'ros') == 3",
            "edit_distance('intention', 'execution') == 5",
        ],
    ),
    (
        "min_coins",
        (
            "Return the fewest coins (each denomination usable any number of times) that add up to "
            "amount, or -1 if it cannot be done."
        ),
        """
def min_coins(coins: list[int], amount: int) -> int:
    best = [0] + [amount + 1] * amount
    for value in range(1, amount + 1):
        for c in coins:
            if c <= value and best[value - c] + 1 < best[value]:
                best[value] = best[value - c] + 1
    return best[amount] if best[amount] <= amount else -1
""",
        [
            "min_coins([1, 2, 5], 11) == 3",
            "min_coins([2], 3) == -1",
            "min_coins([1], 0) == 0",
            "min_coins([], 5) == -1",
            "min_coins([], 0) == 0",
            "min_coins([3, 7], 14) == 2",
            "min_coins([186, 419, 83, 408], 6249) == 20",
        ],
    ),
    (
        "longest_palindrome",
        (
            "Return the longest contiguous substring of s that is a palindrome; if several have "
            "the same length return the leftmost."
        ),
        """
def longest_palindrome(s: str) -> str:
    best = ""
    for center in range(2 * len(s) - 1):
        lo = center // 2
        hi = lo + center % 2
        while lo >= 0 and hi < len(s) and s[lo] == s[hi]:
            lo -= 1
            hi += 1
        candidate = s[lo + 1:hi]
        if len(candidate) > len(best):
            best = candidate
    return best
""",
        [
            "longest_palindrome('babad') == 'bab'",
            "longest_palindrome('cbbd') == 'bb'",
            "longest_palindrome('') == ''",
            "longest_palindrome('a') == 'a'",
            "longest_palindrome('abacdfgdcaba') == 'aba'",
            "longest_palindrome('forgeeksskeegfor') == 'geeksskeeg'",
        ],
    ),
    (
        "merge_intervals",
        (
            "Merge overlapping intervals [start, end] (touching ones count as overlapping) and return "
            "them sorted by start."
        ),
        """
def merge_intervals(intervals: list[list[int]]) -> list[list[int]]:
    merged: list[list[int]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged
""",
        [
            "merge_intervals([[1, 3], [2, 6], [8, 10], [15, 18]]) == [[1, 6], [8, 10], [15, 18]]",
            "merge_intervals([]) == []",
            "merge_intervals([[1, 4], [4, 5]]) == [[1, 5]]",
            "merge_intervals([[5, 6], [1, 2]]) == [[1, 2], [5, 6]]",
            "merge_intervals([[1, 10], [2, 3]]) == [[1, 10]]",
        ],
    ),
    (
        "top_k_words",
        ("Return the k most frequent words, ordered by frequency (highest first) and then alphabetically."),
        """
def top_k_words(words: list[str], k: int) -> list[str]:
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]
""",
        [
            "top_k_words(['i', 'love', 'leetcode', 'i', 'love', 'coding'], 2) == ['i', 'love']",
            "top_k_words([], 3) == []",
            "top_k_words(['a'], 2) == ['a']",
            "top_k_words(['b', 'a', 'b', 'a', 'c'], 2) == ['a', 'b']",
            "top_k_words(['x', 'y', 'z'], 0) == []",
        ],
    ),
    (
        "eval_rpn",
        (
            "Evaluate an expression in reverse Polish notation given as tokens: integers and the operators "
            "+, -, * and / (integer division that truncates toward zero)."
        ),
        """
def eval_rpn(tokens: list[str]) -> int:
    stack: list[int] = []
    for tok in tokens:
        if tok in ("+", "-", "*", "/"):
            b = stack.pop()
            a = stack.pop()
            if tok == "+":
                stack.append(a + b)
            elif tok == "-":
                stack.append(a - b)
            elif tok == "*":
                stack.append(a * b)
            else:
                q = abs(a) // abs(b)
                stack.append(q if (a >= 0) == (b >= 0) else -q)
        else:
            stack.append(int(tok))
    return stack[-1]
""",
        [
            "eval_rpn(['2', '1', '+', '3', '*']) == 9",
            "eval_rpn(['4', '13', '5', '/', '+']) == 6",
            "eval_rpn(['10', '6', '9', '3', '+', '-11', '*', '/', '*', '17', '+', '5', '+']) == 22",
            "eval_rpn(['7']) == 7",
            "eval_rpn(['-7', '2', '/']) == -3",
        ],
    ),
    (
        "word_break",
        (
            "Return True if s can be split into a sequence of one or more words from words (words may be "
            "reused); the empty string counts as splittable."
        ),
        """
def word_break(s: str, words: list[str]) -> bool:
    vocab = set(words)
    ok = [True] + [False] * len(s)
    for end in range(1, len(s) + 1):
        ok[end] = any(ok[start] and s[start:end] in vocab for start in range(end))
    return ok[len(s)]
""",
        [
            "word_break('leetcode', ['leet', 'code']) == True",
            "word_break('applepenapple', ['apple', 'pen']) == True",
            "word_break('catsandog', ['cats', 'dog', 'sand', 'and', 'cat']) == False",
            "word_break('', ['a']) == True",
            "word_break('a', []) == False",
        ],
    ),
    (
        "kth_smallest",
        (
            "Return the k-th smallest element of nums counting from 1 (duplicates count separately), or "
            "None when k is out of range."
        ),
        """
def kth_smallest(nums: list[int], k: int) -> int | None:
    if k < 1 or k > len(nums):
        return None
    return sorted(nums)[k - 1]
""",
        [
            "kth_smallest([3, 1, 2], 1) == 1",
            "kth_smallest([3, 1, 2], 3) == 3",
            "kth_smallest([], 1) == None",
            "kth_smallest([5, 5, 1], 2) == 5",
            "kth_smallest([1], 0) == None",
            "kth_smallest([-1, -2], 2) == -1",
        ],
    ),
    (
        "shortest_path",
        (
            "In a grid of 0 (free) and 1 (wall) cells, return the fewest horizontal or vertical moves "
            "from the top-left to the bottom-right cell, or -1 if it is unreachable (or the grid is empty)."
        ),
        """
from collections import deque


def shortest_path(grid: list[list[int]]) -> int:
    if not grid or not grid[0] or grid[0][0] == 1:
        return -1
    rows, cols = len(grid), len(grid[0])
    dist = {(0, 0): 0}
    queue = deque([(0, 0)])
    while queue:
        r, c = queue.popleft()
        if (r, c) == (rows - 1, cols - 1):
            return dist[(r, c)]
        for nr, nc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if 0 <= nr < rows and 0 <= nc < cols and grid[nr][nc] == 0 and (nr, nc) not in dist:
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    return -1
""",
        [
            "shortest_path([[0, 0, 0], [1, 1, 0], [0, 0, 0]]) == 4",
            "shortest_path([[0, 1], [1, 0]]) == -1",
            "shortest_path([[0]]) == 0",
            "shortest_path([[1]]) == -1",
            "shortest_path([]) == -1",
            "shortest_path([[0, 0], [0, 0]]) == 2",
        ],
    ),
    (
        "decode_ways",
        (
            "Letters A-Z are encoded as '1'-'26'. Return how many ways the digit string s can be decoded "
            "(0 for an empty string or one that cannot be decoded)."
        ),
        """
def decode_ways(s: str) -> int:
    if not s:
        return 0
    prev, cur = 1, 1 if s[0] != "0" else 0
    for i in range(1, len(s)):
        nxt = cur if s[i] != "0" else 0
        if 10 <= int(s[i - 1:i + 1]) <= 26:
            nxt += prev
        prev, cur = cur, nxt
    return cur
""",
        [
            "decode_ways('12') == 2",
            "decode_ways('226') == 3",
            "decode_ways('06') == 0",
            "decode_ways('') == 0",
            "decode_ways('10') == 1",
            "decode_ways('11106') == 2",
            "decode_ways('0') == 0",
        ],
    ),
    (
        "longest_unique_substring",
        "Return the length of the longest substring of s without repeated characters.",
        """
def longest_unique_substring(s: str) -> int:
    last: dict[str, int] = {}
    start = best = 0
    for i, ch in enumerate(s):
        if ch in last and last[ch] >= start:
            start = last[ch] + 1
        last[ch] = i
        best = max(best, i - start + 1)
    return best
""",
        [
            "longest_unique_substring('abcabcbb') == 3",
            "longest_unique_substring('bbbbb') == 1",
            "longest_unique_substring('') == 0",
            "longest_unique_substring('pwwkew') == 3",
            "longest_unique_substring('dvdf') == 3",
            "longest_unique_substring('abba') == 2",
        ],
    ),
    (
        "trapped_water",
        ("Given bar heights of width 1, return how many units of rain water are trapped between the bars."),
        """
def trapped_water(heights: list[int]) -> int:
    lo, hi = 0, len(heights) - 1
    left_max = right_max = water = 0
    while lo < hi:
        if heights[lo] < heights[hi]:
            left_max = max(left_max, heights[lo])
            water += left_max - heights[lo]
            lo += 1
        else:
            right_max = max(right_max, heights[hi])
            water += right_max - heights[hi]
            hi -= 1
    return water
""",
        [
            "trapped_water([0, 1, 0, 2, 1, 0, 1, 3, 2, 1, 2, 1]) == 6",
            "trapped_water([]) == 0",
            "trapped_water([4, 2, 0, 3, 2, 5]) == 9",
            "trapped_water([1, 2, 3]) == 0",
            "trapped_water([3, 0, 3]) == 3",
        ],
    ),
    (
        "topological_order",
        (
            "Nodes are 0..n-1 and each edge (u, v) means u must come before v. Return an order of "
            "all nodes that respects the edges, always taking the smallest available node next, or None if there is a "
            "cycle."
        ),
        """
import heapq


def topological_order(n: int, edges: list[tuple[int, int]]) -> list[int] | None:
    indegree = [0] * n
    children: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        children[u].append(v)
        indegree[v] += 1
    ready = [v for v in range(n) if indegree[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        u = heapq.heappop(ready)
        order.append(u)
        for v in children[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                heapq.heappush(ready, v)
    return order if len(order) == n else None
""",
        [
            "topological_order(3, [(0, 1), (1, 2)]) == [0, 1, 2]",
            "topological_order(2, [(0, 1), (1, 0)]) == None",
            "topological_order(0, []) == []",
            "topological_order(3, []) == [0, 1, 2]",
            "topological_order(4, [(3, 0), (2, 0), (1, 3)]) == [1, 2, 3, 0]",
        ],
    ),
    (
        "knapsack",
        (
            "Each item i has weights[i] and values[i] and can be taken at most once. Return the largest "
            "total value whose total weight is at most capacity."
        ),
        """
def knapsack(weights: list[int], values: list[int], capacity: int) -> int:
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]
""",
        [
            "knapsack([1, 3, 4, 5], [1, 4, 5, 7], 7) == 9",
            "knapsack([], [], 10) == 0",
            "knapsack([5], [10], 4) == 0",
            "knapsack([2, 2], [3, 3], 4) == 6",
            "knapsack([10, 20, 30], [60, 100, 120], 50) == 220",
        ],
    ),
    (
        "unique_permutations",
        "Return all distinct orderings of the characters of s, sorted alphabetically.",
        """
from itertools import permutations


def unique_permutations(s: str) -> list[str]:
    return sorted({"".join(p) for p in permutations(s)})
""",
        [
            "unique_permutations('aab') == ['aab', 'aba', 'baa']",
            "unique_permutations('') == ['']",
            "unique_permutations('a') == ['a']",
            "unique_permutations('ab') == ['ab', 'ba']",
            "unique_permutations('aaa') == ['aaa']",
        ],
    ),
    (
        "count_subsets_with_sum",
        (
            "Return how many subsets of positions of nums have elements summing to target "
            "(the empty subset sums to 0; equal values at different positions are different subsets)."
        ),
        """
def count_subsets_with_sum(nums: list[int], target: int) -> int:
    counts = {0: 1}
    for x in nums:
        nxt = dict(counts)
        for total, ways in counts.items():
            nxt[total + x] = nxt.get(total + x, 0) + ways
        counts = nxt
    return counts.get(target, 0)
""",
        [
            "count_subsets_with_sum([1, 2, 3], 3) == 2",
            "count_subsets_with_sum([], 0) == 1",
            "count_subsets_with_sum([], 1) == 0",
            "count_subsets_with_sum([1, 1, 1], 2) == 3",
            "count_subsets_with_sum([0, 0], 0) == 4",
            "count_subsets_with_sum([-1, 1], 0) == 2",
        ],
    ),
    (
        "largest_rectangle",
        ("Given bar heights of width 1, return the area of the largest rectangle that fits inside the histogram."),
        """
def largest_rectangle(heights: list[int]) -> int:
    stack: list[int] = []
    best = 0
    for i, h in enumerate(heights + [0]):
        while stack and heights[stack[-1]] >= h:
            top = stack.pop()
            width = i if not stack else i - stack[-1] - 1
            best = max(best, heights[top] * width)
        stack.append(i)
    return best
""",
        [
            "largest_rectangle([2, 1, 5, 6, 2, 3]) == 10",
            "largest_rectangle([]) == 0",
            "largest_rectangle([2, 4]) == 4",
            "largest_rectangle([1, 1, 1, 1]) == 4",
            "largest_rectangle([6, 2, 5, 4, 5, 1, 6]) == 12",
        ],
    ),
    (
        "min_meeting_rooms",
        (
            "Given meetings as [start, end) intervals, return the fewest rooms needed so that no "
            "two meetings in a room overlap (a meeting may start when another ends)."
        ),
        """
import heapq


def min_meeting_rooms(intervals: list[list[int]]) -> int:
    ends: list[int] = []
    for start, end in sorted(intervals):
        if ends and ends[0] <= start:
            heapq.heapreplace(ends, end)
        else:
            heapq.heappush(ends, end)
    return len(ends)
""",
        [
            "min_meeting_rooms([[0, 30], [5, 10], [15, 20]]) == 2",
            "min_meeting_rooms([]) == 0",
            "min_meeting_rooms([[7, 10], [2, 4]]) == 1",
            "min_meeting_rooms([[1, 5], [5, 10]]) == 1",
            "min_meeting_rooms([[1, 10], [2, 9], [3, 8]]) == 3",
        ],
    ),
    (
        "add_digit_strings",
        (
            "Add two non-negative integers given as decimal digit strings and return the sum as a "
            "string without leading zeros, without converting whole strings to int."
        ),
        """
def add_digit_strings(a: str, b: str) -> str:
    i, j, carry = len(a) - 1, len(b) - 1, 0
    digits = []
    while i >= 0 or j >= 0 or carry:
        total = carry
        if i >= 0:
            total += ord(a[i]) - 48
            i -= 1
        if j >= 0:
            total += ord(b[j]) - 48
            j -= 1
        carry, d = divmod(total, 10)
        digits.append(chr(48 + d))
    return "".join(reversed(digits)).lstrip("0") or "0"
""",
        [
            "add_digit_strings('123', '877') == '1000'",
            "add_digit_strings('0', '0') == '0'",
            "add_digit_strings('999999999999999999999', '1') == '1000000000000000000000'",
            "add_digit_strings('12', '3') == '15'",
            "add_digit_strings('00012', '8') == '20'",
        ],
    ),
    (
        "format_duration",
        (
            "Describe a number of seconds in words using days, hours, minutes and seconds: skip zero "
            "parts, use the singular for 1, join the last two parts with ' and ' and earlier ones with ', '; 0 is 'now'."
        ),
        """
def format_duration(seconds: int) -> str:
    if seconds == 0:
        return "now"
    parts = []
    for name, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {name}" + ("s" if count > 1 else ""))
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]
""",
        [
            "format_duration(0) == 'now'",
            "format_duration(1) == '1 second'",
            "format_duration(62) == '1 minute and 2 seconds'",
            "format_duration(3662) == '1 hour, 1 minute and 2 seconds'",
            "format_duration(3600) == '1 hour'",
            "format_duration(172801) == '2 days and 1 second'",
        ],
    ),
]

PROMPT = """Write a Python function `{name}`.

{text}

Use this signature:

```python
{signature}
```

Return the complete function, with any imports it needs, in one ```python code block."""

DESCRIPTION = """{text}

Function under test: `{signature}`"""


def _signature(name: str, gt: str) -> str:
    """The one-line `def name(...) -> ...:` header of the GT."""
    for line in gt.splitlines():
        if line.startswith(f"def {name}("):
            return line
    raise ValueError(f"{name}: GT has no one-line `def {name}(` header")


def _imports(gt: str) -> str:
    return "\n".join(line for line in gt.splitlines() if line.startswith(("import ", "from ")))


def build_rows() -> list[dict]:
    """All bundled problems as Problem dicts, in id order."""
    rows: list[dict] = []
    for difficulty, items in (("easy", EASY), ("medium", MEDIUM), ("hard", HARD)):
        for name, text, gt, tests in items:
            index = len(rows)
            gt = gt.strip() + "\n"
            signature = _signature(name, gt)
            rows.append(
                {
                    "id": f"bundled/{index:04d}",
                    "prompt": PROMPT.format(name=name, text=text, signature=signature),
                    "description": DESCRIPTION.format(text=text, signature=signature.rstrip(":")),
                    "entry_point": name,
                    "gt_solution": gt,
                    "golden_tests": [f"assert {t}" for t in tests],
                    "imports": _imports(gt),
                    "source": "bundled",
                    "test_code": "",
                    "difficulty": difficulty,
                    "split": "eval" if index % 2 else "train",
                    "meta": {},
                }
            )
    return rows


def verify(rows: list[dict]) -> list[str]:
    """Problems with the set's invariants broken or a GT failing its tests (trusted, in-process)."""
    errors = []
    names = [r["entry_point"] for r in rows]
    for name in sorted({n for n in names if names.count(n) > 1}):
        errors.append(f"entry point {name} used twice")
    for row in rows:
        where = f"{row['id']} ({row['entry_point']})"
        if len(row["golden_tests"]) < 5:
            errors.append(f"{where}: fewer than 5 tests")
        namespace: dict = {}
        try:
            exec(compile(row["gt_solution"], where, "exec"), namespace)  # noqa: S102 - trusted GT written here
        except Exception as exc:  # noqa: BLE001 - report any GT crash
            errors.append(f"{where}: GT does not run: {type(exc).__name__}: {exc}")
            continue
        if not callable(namespace.get(row["entry_point"])):
            errors.append(f"{where}: GT does not define the entry point")
            continue
        for test in row["golden_tests"]:
            try:
                exec(test, dict(namespace))  # noqa: S102 - trusted test written here
            except AssertionError:
                call = test.removeprefix("assert ").split(" == ")[0]
                errors.append(f"{where}: failed {test!r}; GT gives {eval(call, dict(namespace))!r}")
            except Exception as exc:  # noqa: BLE001 - report any GT crash
                errors.append(f"{where}: {test!r} raised {type(exc).__name__}: {exc}")
    return errors


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only; do not write")
    args = parser.parse_args()
    rows = build_rows()
    errors = verify(rows)
    for line in errors:
        print(line, file=sys.stderr)
    if errors:
        return 1
    text = render(rows)
    levels = {d: sum(r["difficulty"] == d for r in rows) for d in ("easy", "medium", "hard")}
    summary = f"{len(rows)} problems {levels}, {sum(len(r['golden_tests']) for r in rows)} tests"
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
