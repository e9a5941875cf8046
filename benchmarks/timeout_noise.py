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

With --loads (e.g. `--loads 5,10 --calls 200`), the sandbox alone: honest calls that each use about 0.7 of
their limit of CPU (measured on this machine first) run while spinning sandbox jobs load the machine to that
many times its cores; rounds alternate the late-call rule of codea1.sandbox.executor._read_call with the
run-queue clock (a call that waits for a core is not waiting) and without it (the CPU rate over the last
look decides, as before), so both see the same machine. Prints each one's false timeouts.
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


def _calibrated_loop(ex, limit: float, share: float = 0.7) -> int:
    """A loop length whose call takes about `share` of `limit` seconds on this machine, unloaded."""
    from codea1.sandbox import Job

    code = "def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    n = 200_000
    while True:
        [res] = ex.run([Job("calibrate", code, [f"work({n})"] * 3, timeout=10.0)])
        seconds = min(r.seconds for r in res.results)
        if seconds > 0.05:
            return int(n * share * limit / seconds)
        n *= 4


def direct(loads: list[float], calls: int, limit: float) -> None:
    """Honest near-limit calls under load, both late-call rules alternating (see the module's docstring)."""
    import os

    from codea1.sandbox import Job, LocalExecutor
    from codea1.sandbox import executor as executor_module

    cores = len(os.sched_getaffinity(0))
    code = "def work(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n"
    real = executor_module._Zygote.stall_clock
    rules = ("run-queue clock", "last look")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(2) as ex:
            if ex.run([Job("probe", code, ["work(1)"])])[0].results[0].status != "ok":
                raise SystemExit("the sandbox does not run here")
            n = _calibrated_loop(ex, limit)
            for load in loads:
                counts = {rule: [0, 0] for rule in rules}
                loaded = _LoadWhenCandidatesRun(ex, max(1, round(load * cores)))
                try:
                    loaded.run([Job("cand:start", code, ["work(1)"])])  # starts the load
                    for k in range(0, calls, 2):
                        rule = rules[(k // 2) % 2]
                        if rule == "last look":
                            executor_module._Zygote.stall_clock = lambda self: None
                        try:
                            batch = [Job(f"cand:{k + j}", code, [f"work({n})"], timeout=limit) for j in range(2)]
                            for res in ex.run(batch):
                                counts[rule][0] += 1
                                counts[rule][1] += res.results[0].status != "ok"
                        finally:
                            executor_module._Zygote.stall_clock = real
                finally:
                    loaded.close()
                print(
                    f"load {load:g}x the {cores} cores ({max(1, round(load * cores))} spinning jobs), calls of about "
                    f"0.7 x {limit:g} s of CPU: "
                    + "; ".join(f"{rule}: {bad} false timeouts of {total}" for rule, (total, bad) in counts.items())
                )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=8, help="tests in the suite (one call each)")
    ap.add_argument("--spinners", type=int, default=7, help="spinning sandbox jobs at a time while the candidates run")
    ap.add_argument("--work", type=int, default=3_000_000, help="loop length of one GT call")
    ap.add_argument("--loads", default=None, help="sandbox alone: loads in multiples of the cores, e.g. 5,10")
    ap.add_argument("--limit", type=float, default=1.0, help="--loads: each call's time limit (s)")
    args = ap.parse_args()
    if args.loads:
        direct([float(x) for x in args.loads.split(",")], args.calls, args.limit)
        return

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
