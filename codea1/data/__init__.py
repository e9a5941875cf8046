"""Problems and their loaders."""

from codea1.data.problem import Problem, read_problems_jsonl, write_problems_jsonl

__all__ = ["Problem", "read_problems_jsonl", "write_problems_jsonl"]
