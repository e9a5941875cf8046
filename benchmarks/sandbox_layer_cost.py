"""What each sandbox layer costs: the Executor with every layer on vs. the same with one layer switched off.

Workload: that of benchmarks/sandbox_throughput.py (HumanEval+/MBPP+ GT programs of the shared validation
parquet and one wrong variant each, single-call tests from their EvalPlus `check`). One Executor per
configuration, all started before the first round and kept across rounds; each round runs every
configuration once, one after the other, so that a change in the machine's speed affects all alike.
Prints each configuration's median seconds per round and its throughput relative to the full sandbox
(> 1: switching that layer off makes the sandbox faster by that factor), and checks that all agree on
every verdict.

Configurations (the layers are those of the isolation level, `codea1 exec --isolation`):
  full         every layer this machine allows
  no-jobns     no per-job PID, IPC and mount namespaces (no fresh /tmp and /proc per job)
  no-seccomp   no system-call filter
  no-allowlist the zygotes in the caller's file system (with its directories hidden) instead of the
               bubblewrap allow-list root
  no-cgroup    no per-slot cgroup
  none         all four off (what is left: network, UTS and mount namespaces of the zygote, uid, rlimits)

Switching layers off is for measuring only: the Executor has no public option for it, so this script sets
the zygote configuration keys that the sandbox reads (`jobns`, `seccomp`, `allowlist`) through a wrapper
around the slot constructor. Skips (exit 0) when the parquet is absent.

    python benchmarks/sandbox_layer_cost.py [--limit 100] [--rounds 6]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sandbox_throughput as st  # the workload and its runner

CONFIGS: dict[str, tuple[dict, bool]] = {  # name -> (zygote configuration keys, per-slot cgroup)
    "full": ({}, True),
    "no-jobns": ({"jobns": False}, True),
    "no-seccomp": ({"seccomp": False}, True),
    "no-allowlist": ({"allowlist": False}, True),
    "no-cgroup": ({}, False),
    "none": ({"jobns": False, "seccomp": False, "allowlist": False}, False),
}


def make_executor(extra: dict, cgroup: bool, workers: int):
    from codea1.sandbox import executor as ex_mod

    original = ex_mod._Zygote.__init__

    def init(self, index, cfg, group=None):
        original(self, index, {**cfg, **extra}, group)

    ex_mod._Zygote.__init__ = init
    try:
        return ex_mod.LocalExecutor(workers=workers, cgroup=cgroup)
    finally:
        ex_mod._Zygote.__init__ = original


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parquet", type=Path, default=st.DEFAULT_PARQUET)
    ap.add_argument("--limit", type=int, default=100, help="GT programs (each also gets a wrong variant)")
    ap.add_argument("--tests", type=int, default=4, help="single-call tests per program")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--only", nargs="*", choices=list(CONFIGS), help="a subset of the configurations")
    args = ap.parse_args()
    if not args.parquet.exists():
        print(f"skipped: {args.parquet} not found")
        return
    warnings.simplefilter("ignore")  # the reduced configurations warn about their isolation level
    programs = st.load_workload(args.parquet, args.limit, args.tests)
    verdicts = sum(len(p.calls) for p in programs)
    names = [n for n in CONFIGS if not args.only or n in args.only or n == "full"]
    executors = {n: make_executor(*CONFIGS[n], args.workers) for n in names}
    try:
        print(
            f"workload: {len(programs)} programs, {verdicts} verdicts, {args.workers} workers, "
            f"{args.rounds} rounds after a warm-up pass"
        )
        for n, ex in executors.items():
            print(f"  {n:11s} {ex.isolation_level}")
            st.run_executor(ex, programs[:20], args.timeout)
        seconds: dict[str, list[float]] = {n: [] for n in names}
        outcomes: dict[str, list[bool]] = {}
        for r in range(args.rounds):
            for n, ex in executors.items():
                t0 = time.perf_counter()
                outcomes[n] = st.run_executor(ex, programs, args.timeout)
                seconds[n].append(time.perf_counter() - t0)
            print(f"round {r + 1}: " + "  ".join(f"{n} {seconds[n][-1]:.3f}s" for n in names), flush=True)
    finally:
        for ex in executors.values():
            ex.close()
    print(f"\n{'configuration':13s} {'median s':>9s} {'verdicts/s':>11s} {'vs full':>8s}")
    for n in names:
        med = statistics.median(seconds[n])
        ratios = [f / s for f, s in zip(seconds["full"], seconds[n], strict=False)]
        print(f"{n:13s} {med:9.3f} {verdicts / med:11.1f} {statistics.median(ratios):7.2f}x")
    agree = all(outcomes[n] == outcomes["full"] for n in names)
    print("all configurations agree on every verdict" if agree else "VERDICTS DIFFER between configurations")
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
