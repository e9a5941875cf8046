"""The parent's memory for candidates' values: how much the trusted parent holds while the game judges a
batch of candidates whose calls return large values.

Each of --candidates candidates (all GT-identical) runs --calls calls that return strings of --chars
characters (the round-3 audit's case: 32 calls of ~1 M characters). The game as it is reduces each
candidate's job to its verdicts as the job ends (`Executor.run(then=...)`, codea1.game.matrix.run_matrix);
the baseline, in the same process, holds every job's values until the batch has ended and decides them
then (what the game did before). Prints the peak of Python allocations (tracemalloc) during each game and
their ratio; the verdicts of both must agree.

    python benchmarks/parent_values_memory.py [--candidates 8] [--calls 4] [--chars 999000] [--workers 2]
"""

from __future__ import annotations

import argparse
import tracemalloc
import warnings


class _HoldUntilTheEnd:
    """Wraps an Executor: runs the batch without `then` and applies it once every job has ended."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def run(self, jobs, progress=None, then=None):
        out = self.inner.run(jobs, progress=progress)
        return [then(n, res) for n, res in enumerate(out)] if then is not None else out


def _peak(fn) -> tuple[float, object]:
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidates", type=int, default=8)
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--chars", type=int, default=999_000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    from codea1.config import GameConfig
    from codea1.game import play_question
    from codea1.problem import Problem
    from codea1.sandbox import LocalExecutor

    gt = "def pad(n):\n    return 'x' * n\n"
    problem = Problem(
        id="bench/pad",
        prompt="def pad(n):",
        description="Return n times the letter x.",
        entry_point="pad",
        gt_solution=gt,
        golden_tests=["assert pad(2) == 'xx'"],
    )
    asserts = "\n".join(f"assert pad({args.chars + i}) == 'x' * {args.chars + i}" for i in range(args.calls))
    suite = f"```python\n{asserts}\n```"
    codes = [f"```python\n{gt}```"] * args.candidates
    config = GameConfig(M=args.candidates, N=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(args.workers) as executor:
            play_question(problem, codes[:1], [[suite]], executor, [], config)  # the zygotes are warm

            def game(ex):
                return lambda: play_question(problem, codes, [[suite]] * args.candidates, ex, [], config)

            base_mb, base = _peak(game(_HoldUntilTheEnd(executor)))
            now_mb, now = _peak(game(executor))
    same = [c.code_reward for c in now.codes] == [c.code_reward for c in base.codes]
    print(
        f"{args.candidates} candidates x {args.calls} calls of {args.chars:,} characters, {args.workers} slots: "
        f"parent peak {now_mb:.1f} MB with verdicts as each job ends, {base_mb:.1f} MB holding values to the "
        f"batch's end ({base_mb / max(now_mb, 1e-9):.2f}x); verdicts agree: {same}"
    )
    if not same:
        raise SystemExit("the verdicts differ between the two ways of judging")


if __name__ == "__main__":
    main()
