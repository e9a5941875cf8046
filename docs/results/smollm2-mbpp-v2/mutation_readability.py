"""Can mut@4 and Mul be read in experiment v2? Counts, per arm and prompt mode, the held-out functions that
qualify (all of a suite's first k asserts valid on GT), from the committed evaluation files only:

    python mutation_readability.py RESULTS_DIR > RESULTS_DIR/mutation_readability.json

RESULTS_DIR holds evals/ARM/step_N.json (one per arm) and the re-judged per-problem pass@k files
(test_pass4.json, selfplay/test_pass4.json). The design reads mut@4 and Mul only where at least 20
functions per suite qualify, in both arms of a comparison.

What the evaluation files hold (codea1.eval.policy_eval.evaluate_tests): per mode, `functions_all_valid`
and `functions_mutation_scored` as the mean over the suites of each suite's count, and per-problem valid
shares; not which functions qualified in which suite, and no per-problem mutation score. So:
- a suite-mean under 20 means at least one suite has fewer than 20: not readable;
- the functions that qualify in at least one suite number at most the sum over the suites;
- the functions whose per-problem pass@k (missing tests invalid, re-judged) is 1 qualify in every suite.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MIN_FUNCTIONS = 20
# golden does not train the Test LLM: its Test LLM is base's start policy, and its evaluation has no tests.
TEST_LLM_OF = {"golden": "base"}
COMPARISONS = [("a1", "base"), ("golden", "base"), ("a1", "golden"), ("selfplay", "base"), ("a1", "selfplay")]


def evaluations(results: Path) -> dict[str, dict]:
    """Arm -> its committed held-out evaluation (evals/ARM/step_N.json)."""
    out = {}
    for path in sorted(results.glob("evals/*/step_*.json")):
        arm = path.parent.name
        if arm in out:
            raise SystemExit(f"more than one evaluation of {arm}")
        out[arm] = json.loads(path.read_text(encoding="utf-8"))
    return out


def rejudged_pass_k(results: Path) -> dict[str, dict]:
    """Arm -> mode -> {task_id: pass@k}, from every test_pass*.json under RESULTS_DIR."""
    out: dict[str, dict] = {}
    for path in sorted(results.rglob("test_pass*.json")):
        for arm, modes in json.loads(path.read_text(encoding="utf-8"))["evaluations"].items():
            out[arm] = {
                mode: figures[next(k for k in figures if k.startswith("pass@"))] for mode, figures in modes.items()
            }
    return out


def counts(tests: dict, pass_k: dict[str, float] | None) -> dict:
    """The qualifying counts of one arm in one mode, and whether mut@k can be read from them."""
    suites = int(tests["suites_per_problem"])
    mean = float(tests["functions_all_valid"])
    row = {
        "suites_per_problem": suites,
        "all_valid_per_suite_mean": mean,
        "mutation_scored_per_suite_mean": float(tests["functions_mutation_scored"]),
        "all_valid_in_some_suite_at_most": round(mean * suites),
    }
    if pass_k is not None:
        row["all_valid_in_every_suite"] = sum(value == 1.0 for value in pass_k.values())
    if mean < MIN_FUNCTIONS:
        row["readable"] = False
    elif row.get("all_valid_in_every_suite", 0) >= MIN_FUNCTIONS:
        row["readable"] = True
    else:
        row["readable"] = None  # undecided: each suite's own count is not recorded
    return row


def main(results: Path) -> dict:
    evals = evaluations(results)
    rejudged = rejudged_pass_k(results)
    table: dict[str, dict] = {}
    for arm in evals:
        source = TEST_LLM_OF.get(arm, arm)
        tests = evals[source].get("tests") or {}
        table[arm] = {mode: counts(tests[mode], rejudged.get(source, {}).get(mode)) for mode in sorted(tests)}
        if source != arm:
            table[arm]["test_llm_of"] = source
    comparisons = {}
    for new, old in COMPARISONS:
        for mode in sorted(set(table[new]) & set(table[old]) - {"test_llm_of"}):
            name = f"{new} vs {old}, {mode}"
            if TEST_LLM_OF.get(new, new) == TEST_LLM_OF.get(old, old):
                comparisons[name] = "same Test LLM: nothing to compare"
            elif table[new][mode]["readable"] is False or table[old][mode]["readable"] is False:
                comparisons[name] = f"not readable: fewer than {MIN_FUNCTIONS} functions qualify; not compared"
            else:
                # Reached only with enough functions: the paired bootstrap over the problems that qualify in
                # both arms needs each function's mutation score, which the evaluation files do not record.
                comparisons[name] = (
                    "not computed: the evaluation files record neither which functions qualified in each "
                    "suite nor per-function mutation scores (only their means over suites)"
                )
    return {"min_functions_per_suite": MIN_FUNCTIONS, "counts": table, "comparisons": comparisons}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(json.dumps(main(Path(sys.argv[1])), indent=1, sort_keys=True))
