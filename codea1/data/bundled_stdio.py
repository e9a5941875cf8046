"""The stdin/stdout problem set shipped inside codea1 (codea1/data/bundled/stdio.jsonl, 48 problems).

Written for this project: each problem is a task statement with Input and Output sections and one worked
example (its first test, the one public test: meta "public_tests" is 1), a whole-program GT in Python and
at least five tests whose expected outputs are what that GT prints. 17 of them also come as a C++17 problem
("bundled-stdio-cpp/NNNN", language "cpp", a C++ GT that prints the same on every test). Difficulty rises
with the id ("easy" one-step tasks first, then "medium" loops with edge cases, then "hard" algorithmic
ones). Split rule (fixed): ids with an odd NNNN form the held-out "eval" half, even ones the "train" half,
in both languages. `scripts/build_bundled_stdio.py` regenerates the file from its sources.
"""

from __future__ import annotations

from importlib import resources

from codea1.errors import UserError
from codea1.problem import Problem, read_problems_jsonl

SPLITS = ("train", "eval")
LANGUAGES = ("python", "cpp")


def load_bundled_stdio(split: str | None = None, language: str | None = None) -> list[Problem]:
    """All bundled stdio problems, or only the "train" or "eval" half, of one language or both."""
    if split not in (None, *SPLITS):
        raise UserError(f"bundled-stdio split '{split}' is unknown; use one of: {', '.join(SPLITS)}")
    if language not in (None, *LANGUAGES):
        raise UserError(f"bundled-stdio language '{language}' is unknown; use one of: {', '.join(LANGUAGES)}")
    with resources.as_file(resources.files("codea1.data") / "bundled" / "stdio.jsonl") as path:
        problems = read_problems_jsonl(path)
    return [p for p in problems if (split is None or p.split == split) and (language is None or p.language == language)]
