"""codea1's verl reward vs verl's own `prime_code` on the same completions: verdicts, forgeries, speed.

verl's code datasets (PRIME, Eurus, APPS/TACO-style rows) store `reward_model.ground_truth` as
{"inputs", "outputs", "fn_name"?}, and verl scores them with verl/utils/reward_score/prime_code, which runs
the completion in a multiprocessing child of the reward worker, in the same interpreter as its checker.
codea1.integrations.verl.compute_score takes the same ground truth. This script loads prime_code from a
verl checkout (`--verl DIR`, the repository root; nothing of it is copied here: it is imported from there
at run time, with a stand-in for the unmaintained `pyext` package, whose RuntimeModule.from_string only
executes a string as a new module) and scores, with both:

  (1) a table of completions: honest right and wrong programs (stdin/stdout and function calls), a syntax
      error, an endless loop, and forgeries that reach prime_code's checker from inside the program: a
      returned object that equals everything, and a stdin/stdout program that replaces numpy.allclose
      (prime_code's float comparison) before printing a wrong number;
  (2) speed: the bundled stdio problems (Python) as verl rows, GT and a wrong program each, scored one
      completion per call by prime_code (as verl's naive reward manager calls it) and in one batch by
      codea1.

    python benchmarks/prime_code_compare.py --verl PATH_TO_VERL [--limit 10]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codea1.data.bundled_stdio import load_bundled_stdio
from codea1.integrations.verl import compute_score, compute_score_batch

SUM = {"inputs": ["1 2\n", "5 5\n", "-3 3\n"], "outputs": ["3\n", "10\n", "0\n"]}
TOTAL = {"inputs": ["[1, 2]", "[3, 4, 5]"], "outputs": ["3", "12"], "fn_name": "total"}
HALF = {"inputs": ["1\n", "3\n"], "outputs": ["0.5\n", "1.5\n"]}


def _fence(code: str) -> str:
    return f"```python\n{code}\n```"


CASES = [
    ("stdio: right", SUM, _fence("a, b = map(int, input().split())\nprint(a + b)"), True),
    ("stdio: wrong", SUM, _fence("a, b = map(int, input().split())\nprint(a * b)"), False),
    ("stdio: syntax error", SUM, _fence("print(("), False),
    ("stdio: endless loop", SUM, _fence("while True:\n    pass"), False),
    ("call: right", TOTAL, _fence("def total(xs):\n    return sum(xs)"), True),
    ("call: wrong", TOTAL, _fence("def total(xs):\n    return len(xs)"), False),
    (
        "call: forged, an object equal to everything",
        TOTAL,
        _fence("class Any:\n    def __eq__(self, other):\n        return True\n\ndef total(xs):\n    return Any()"),
        False,
    ),
    (
        "stdio: forged, numpy.allclose replaced",
        HALF,
        _fence("import numpy\nnumpy.allclose = lambda *a, **k: True\nprint(7.25)"),
        False,
    ),
]


def load_prime_code(verl: Path) -> types.ModuleType:
    """verl's prime_code package, imported from the checkout (its own relative imports), with `pyext`."""
    where = verl / "verl" / "utils" / "reward_score" / "prime_code"
    if not (where / "__init__.py").is_file():
        print(f"skipped: no verl checkout at {verl} (--verl names the root of one, e.g. a clone of volcengine/verl)")
        raise SystemExit(0)
    try:
        importlib.import_module("pyext")
    except ImportError:
        pyext = types.ModuleType("pyext")

        class RuntimeModule:
            @staticmethod
            def from_string(name: str, doc: str, code: str) -> types.ModuleType:
                module = types.ModuleType(name, doc)
                exec(code, module.__dict__)  # noqa: S102  (what pyext does, in prime_code's own child)
                return module

        pyext.RuntimeModule = RuntimeModule
        sys.modules["pyext"] = pyext
    package = types.ModuleType("prime_code")
    package.__path__ = [str(where)]
    sys.modules["prime_code"] = package
    spec = importlib.util.spec_from_file_location(
        "prime_code", where / "__init__.py", submodule_search_locations=[str(where)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["prime_code"] = module
    spec.loader.exec_module(module)
    return module


def prime_verdict(prime: types.ModuleType, completion: str, truth: dict) -> bool:
    """Whether prime_code passes the completion, called as verl's default_compute_score calls it
    (continuous=True: the share of the first 10 tests passed when not all pass; its continuous=False path
    raises UnboundLocalError on any failing completion)."""
    success, _ = prime.compute_score(completion, json.dumps(truth), continuous=True)
    return success is True or success == 1


def table(prime: types.ModuleType) -> None:
    print("| completion | should pass | prime_code | codea1 |")
    print("|---|---|---|---|")
    for name, truth, completion, right in CASES:
        theirs = prime_verdict(prime, completion, truth)
        ours = compute_score("bench", completion, json.dumps(truth))["score"] == 1.0
        print(f"| {name} | {right} | {theirs} | {ours} |")


def speed(prime: types.ModuleType, limit: int) -> None:
    rows = []
    for p in load_bundled_stdio(language="python")[:limit]:
        truth = {"inputs": [t["input"] for t in p.io_tests], "outputs": [t["output"] for t in p.io_tests]}
        rows += [(truth, _fence(p.gt_solution)), (truth, _fence(p.gt_solution + "\nprint('extra')"))]
    t0 = time.perf_counter()
    theirs = [prime_verdict(prime, c, t) for t, c in rows]
    t1 = time.perf_counter()
    ours = [
        s["score"] == 1.0
        for s in compute_score_batch(["bench"] * len(rows), [c for _, c in rows], [t for t, _ in rows])
    ]
    t2 = time.perf_counter()
    tests = sum(len(t["inputs"]) for t, _ in rows)
    agree = sum(a == b for a, b in zip(theirs, ours, strict=True))
    print(
        f"speed: {len(rows)} completions, {tests} tests; prime_code {t1 - t0:.1f} s, codea1 {t2 - t1:.1f} s "
        f"({(t1 - t0) / (t2 - t1):.1f}x); verdicts agree on {agree} of {len(rows)} "
        f"(prime_code passes {sum(theirs)}, codea1 {sum(ours)})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--verl", type=Path, required=True, help="root of a verl checkout")
    ap.add_argument("--limit", type=int, default=10, help="bundled stdio problems in the speed run")
    args = ap.parse_args()
    prime = load_prime_code(args.verl)
    table(prime)
    speed(prime, args.limit)


if __name__ == "__main__":
    main()
