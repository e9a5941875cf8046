"""Overhead of the Ray execution backend on one machine: local Executor vs RayExecutor, verdicts per second.

Both run the same batches of small (program, tests) jobs with the same number of sandbox slots: the local
Executor in this process, the RayExecutor as one pool (a Ray actor holding an Executor) on this machine,
reached through Ray's object store. Each method first runs an untimed warm-up batch; then --rounds timed
rounds run both, one after the other. A verdict is one test call judged. Prints verdicts/s per round, the
medians, the overhead ratio (local / Ray: 1.0 means no overhead) and whether all verdicts agree.

    python benchmarks/ray_executor_overhead.py --jobs 400 --rounds 3 --workers 2
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings


def workload(n_jobs: int, calls: int) -> tuple[list, list]:
    from codea1.sandbox import Job

    programs = [
        "def f(x):\n    return sorted(set(range(x % 17)))[-1:] or [0]\n",
        "def f(x):\n    s = 0\n    for i in range(x % 50):\n        s += i * i\n    return s\n",
        "def f(x):\n    return str(x)[::-1]\n",
        "def f(x):\n    return {'k': x, 'v': [x] * 3}\n",
    ]
    truth = [
        lambda x: sorted(set(range(x % 17)))[-1:] or [0],
        lambda x: sum(i * i for i in range(x % 50)),
        lambda x: str(x)[::-1],
        lambda x: {"k": x, "v": [x] * 3},
    ]
    jobs, values = [], []
    for j in range(n_jobs):
        k = j % len(programs)
        xs = [j * 7 + c for c in range(calls)]
        # every fifth job expects a wrong value on its last call: a mix of pass and fail verdicts
        expected = [truth[k](x) for x in xs]
        if j % 5 == 0:
            expected[-1] = "wrong"
        jobs.append(Job(f"job-{j}", programs[k], [f"f({x})" for x in xs]))
        values.append(expected)
    return jobs, values


def verdicts(results: list) -> list[tuple]:
    return [(r.id, tuple(c.status for c in r.results)) for r in results]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--calls", type=int, default=8, help="test calls per job")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="sandbox slots, for both methods")
    ap.add_argument("--chunk", type=int, default=None, help="jobs per Ray task (default: RayExecutor's)")
    ap.add_argument("--uid-base", type=int, default=1_700_720_000)
    args = ap.parse_args()

    import ray

    from codea1.cluster.sandbox_pools import RayExecutor
    from codea1.judge.calls import run_expecting
    from codea1.sandbox import LocalExecutor

    ray.init(num_cpus=max(2, args.workers), include_dashboard=False, log_to_driver=False)
    jobs, values = workload(args.jobs, args.calls)
    n_verdicts = sum(len(j.calls) for j in jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        local = LocalExecutor(args.workers, uid_base=args.uid_base)
        remote = RayExecutor(workers=args.workers, uid_base=args.uid_base + 100, chunk_size=args.chunk)
    try:
        local.run(jobs[:40])
        remote.run(jobs[:40])
        rates: dict[str, list[float]] = {"local": [], "ray": []}
        agree = True
        print(f"{len(jobs)} jobs, {n_verdicts} verdicts per round, {args.workers} sandbox slots each")
        print(f"{'round':>5}  {'local v/s':>10}  {'ray v/s':>10}  {'local/ray':>9}")
        for r in range(args.rounds):
            t0 = time.perf_counter()
            a = run_expecting(local, jobs, values)
            t1 = time.perf_counter()
            b = run_expecting(remote, jobs, values)
            t2 = time.perf_counter()
            agree &= verdicts(a) == verdicts(b)
            rates["local"].append(n_verdicts / (t1 - t0))
            rates["ray"].append(n_verdicts / (t2 - t1))
            print(
                f"{r + 1:>5}  {rates['local'][-1]:>10.0f}  {rates['ray'][-1]:>10.0f}  "
                f"{rates['local'][-1] / rates['ray'][-1]:>9.3f}"
            )
        ml, mr = statistics.median(rates["local"]), statistics.median(rates["ray"])
        print(f"{'median':>5}  {ml:>10.0f}  {mr:>10.0f}  {ml / mr:>9.3f}")
        print(f"overhead ratio (local v/s / ray v/s, median): {ml / mr:.3f}; verdicts agree: {agree}")
    finally:
        local.close()
        remote.close()
        ray.shutdown()


if __name__ == "__main__":
    main()
