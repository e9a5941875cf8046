"""The problem set shipped inside codea1 (codea1/data/bundled/problems.jsonl, 91 problems).

Written for this project: each problem has a task text, a GT function and at least five hand-written
golden asserts; difficulty rises with the id ("easy" one-liners first, then "medium" and "hard" problems
with edge cases). Split rule (fixed): ids "bundled/NNNN" with an odd NNNN form the held-out "eval" half,
even ones the "train" half. `scripts/build_bundled.py` regenerates the file from its sources.
"""

from __future__ import annotations

from importlib import resources

from codea1.errors import UserError
from codea1.problem import Problem, read_problems_jsonl

SPLITS = ("train", "eval")


def load_bundled(split: str | None = None) -> list[Problem]:
    """All bundled problems, or only the "train" or "eval" half."""
    if split not in (None, *SPLITS):
        raise UserError(f"bundled split '{split}' is unknown; use one of: {', '.join(SPLITS)}")
    with resources.as_file(resources.files("codea1.data") / "bundled" / "problems.jsonl") as path:
        problems = read_problems_jsonl(path)
    return [p for p in problems if split is None or p.split == split]
