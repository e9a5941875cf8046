"""What the game's sandbox jobs cost: `play_step` as it runs, against the same round with one job per
candidate (all its suites together, as before each suite got a job and a byte budget of its own).

Workload: the first 8 bundled training problems, M=4 codes per question (GT and a partly wrong variant,
twice each: tests/train_scripted.py's), N=4 suites per code (halves of the golden tests), so the oracle and
the matrix both run real tests. Rounds alternate the two layouts; prints each one's median seconds and
their ratio.

    python benchmarks/game_jobs_cost.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "tests"))
    from train_scripted import wrong_variant

    from codea1.config import GameConfig
    from codea1.data import load_problems
    from codea1.game import matrix as play_module
    from codea1.game import play_step
    from codea1.sandbox import LocalExecutor

    problems = load_problems("bundled:train")[:8]
    codes = [[f"```python\n{p.gt_solution}\n```", f"```python\n{wrong_variant(p)}```"] * 2 for p in problems]
    suites = [
        [["```python\n" + "\n".join(p.golden_tests[i::2]) + "\n```" for i in range(2)] * 2 for _ in range(4)]
        for p in problems
    ]
    config = GameConfig(M=4, N=4)
    per_suite = play_module._groups

    def one_job(history, suites_):  # every group of a candidate in one job
        return [[pair for group in per_suite(history, suites_) for pair in group]]

    times: dict[str, list[float]] = {"a job per suite (now)": [], "one job per candidate": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(2) as ex:
            play_step(problems, codes, suites, ex, config=config)  # warm-up
            for r in range(args.rounds):
                for name in list(times)[r % 2 :] + list(times)[: r % 2]:
                    play_module._groups = per_suite if name.endswith("(now)") else one_job
                    t0 = time.perf_counter()
                    play_step(problems, codes, suites, ex, config=config)
                    times[name].append(time.perf_counter() - t0)
            play_module._groups = per_suite
    for name, ts in times.items():
        print(f"{name:24s} median {statistics.median(ts):.3f} s over {len(ts)} rounds")
    a, b = (statistics.median(t) for t in times.values())
    print(f"ratio: {a / b:.2f}x (8 questions, M=N=4, GT's calls a job each in both)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
