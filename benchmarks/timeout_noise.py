"""False timeouts under load: a candidate identical to GT, judged by the game while the machine is loaded.

GT's time, which sets a candidate's per-call limit (max(game.test_timeout, game.timeout_factor x GT's
slowest call)), is measured by the oracle stage; this script loads the machine only once the candidates run
(a second sandbox pool running --spinners spinning jobs at a time, started when the first candidate batch
is sent), as happens when other work starts between the two stages. Every failed call of the GT-identical
candidate is a false failure that would pay the Test LLM. Rounds alternate three ways of judging, so all
see the same machine:
- "cpu": the game as it is: the limit on the call's CPU time where the slot's cgroup counts it
  (codea1.sandbox.executor._read_call), then GT's repeat of each timed-out call decides whether the
  timeout stands (codea1.game.matrix._recheck_timeouts);
- "wall": the same with the wall clock deciding (the sandbox's CPU clock switched off), as before;
- "wall, no recheck": the wall clock and no recheck, as before that.
Prints each one's false-failure rate.

    python benchmarks/timeout_noise.py [--rounds 4] [--calls 8] [--spinners 7]
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import warnings


class _LoadWhenCandidatesRun:
    """Wraps an Executor: once the first candidate batch is sent, a second sandbox pool (its slots weigh as
    much as the game's in the CPU scheduler, as another trainer's or evaluation's would) runs spinning jobs
    until the game is over."""

    def __init__(self, inner, spinners: int) -> None:
        self.inner, self.spinners, self.thread, self.stop = inner, spinners, None, threading.Event()

    def _load(self) -> None:
        from codea1.sandbox import Job, LocalExecutor

        spin = "import time\ndef spin():\n    end = time.time() + 0.5\n    while time.time() < end:\n        pass\n"
        with LocalExecutor(self.spinners, uid_base=1_701_500_000) as load:
            while not self.stop.is_set():
                load.run([Job(f"spin{i}", spin, ["spin()"], timeout=5.0) for i in range(self.spinners)])

    def run(self, jobs, progress=None, then=None):
        if self.thread is None and any(j.id.startswith("cand:") for j in jobs):
            self.thread = threading.Thread(target=self._load, daemon=True)
            self.thread.start()
            time.sleep(1.0)  # the load's zygotes start and its first jobs spin
        return self.inner.run(jobs, progress=progress, then=then)

    def close(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        self.thread, self.stop = None, threading.Event()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=8, help="tests in the suite (one call each)")
    ap.add_argument("--spinners", type=int, default=7, help="spinning sandbox jobs at a time while the candidates run")
    ap.add_argument("--work", type=int, default=3_000_000, help="loop length of one GT call")
    args = ap.parse_args()

    from codea1.config import GameConfig
    from codea1.game import matrix as play_module
    from codea1.game import play_question
    from codea1.problem import Problem
    from codea1.sandbox import LocalExecutor

    gt = "def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    problem = Problem(
        id="noise/work",
        prompt="def work(n):",
        description="sum of squares below n",
        entry_point="work",
        gt_solution=gt,
        golden_tests=[],
    )
    suite = "```python\n" + "\n".join(f"assert work({args.work + k}) == 0" for k in range(args.calls)) + "\n```"
    code = f"```python\n{gt}```"
    config = GameConfig(test_timeout=0.01, timeout_factor=2.0)
    from codea1.sandbox import executor as executor_module

    real_recheck, real_clock = play_module._recheck_timeouts, executor_module._Zygote.cpu_clock
    modes = ("cpu", "wall", "wall, no recheck")
    rates: dict[str, list[float]] = {m: [] for m in modes}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(2) as ex:
            for r in range(args.rounds):
                for mode in modes[r % 3 :] + modes[: r % 3]:
                    if mode.startswith("wall"):
                        executor_module._Zygote.cpu_clock = lambda self: None
                    if mode == "wall, no recheck":
                        play_module._recheck_timeouts = lambda problems, jobs, plan, results, executor, judge=None: [
                            (res, set()) for res in results
                        ]
                    loaded = _LoadWhenCandidatesRun(ex, args.spinners)
                    try:
                        result = play_question(problem, [code], [[suite]], loaded, [], config)
                    finally:
                        loaded.close()
                        play_module._recheck_timeouts, executor_module._Zygote.cpu_clock = real_recheck, real_clock
                    share = 1.0 - result.codes[0].code_reward  # R_C: the share of its tests it passed
                    failed = share * args.calls
                    rates[mode].append(share)
                    print(
                        f"round {r + 1} {mode:16s}: {failed:.0f} of {args.calls} calls failed "
                        f"(excused {result.timeouts_excused})"
                    )
    print(
        "false-failure rate: "
        + ", ".join(
            f"{m} {100 * statistics.mean(rates[m]):.1f}% ({round(sum(rates[m]) * args.calls)} of {len(rates[m]) * args.calls})"
            for m in modes
        )
        + f" ({args.rounds} rounds x {args.calls} calls, {args.spinners} spinners)"
    )


if __name__ == "__main__":
    main()
