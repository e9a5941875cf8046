"""Problems and their loaders.

    from codea1.data import load_problems, check_problems
    problems = load_problems("bundled:train")            # or "humaneval", "mbpp+", "kodcode", a file path
    results = check_problems(problems)                    # GT vs its golden tests, in the sandbox

Every source is behind `load_problems` (its module doc lists them); benchmarks' files are read in
`benchmarks`, `bigcodebench` and `reference`, ULT's functions in `ult`. Heavy loaders (parquet, datasets, sandbox) import their libraries only when called.
"""

from codea1.data.bundled import load_bundled
from codea1.data.check import CheckResult, check_problems, time_limit
from codea1.data.humaneval import load_humaneval
from codea1.data.kodcode import load_kodcode
from codea1.data.loaders import load_problems
from codea1.data.reference import load_reference_parquet
from codea1.problem import Problem, read_problems_jsonl, write_problems_jsonl

__all__ = [
    "CheckResult",
    "Problem",
    "check_problems",
    "load_bundled",
    "load_humaneval",
    "load_kodcode",
    "load_problems",
    "load_reference_parquet",
    "read_problems_jsonl",
    "time_limit",
    "write_problems_jsonl",
]
