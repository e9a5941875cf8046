"""Sandbox throughput: this Executor vs. a process per (code, test) pair vs. a fresh interpreter per script.

Workload: the HumanEval+/MBPP+ GT programs of the shared validation parquet, each with up to --tests
single-call tests taken from its EvalPlus `check` (the literal `inputs`/`results` arrays), plus one wrong
variant per program (the GT wrapped so that most results are perturbed). The same (program, test) pairs
are judged by
  (a) codea1.sandbox.Executor: warm zygotes, one forked, isolated child per program, verdicts in the parent;
  (b) one multiprocessing.Process per (program, test) pair, the approach of CURE's reward code, forked
      from this benchmark's process (which holds what reading the parquet left: see its printed size);
  (b0) the same, from a fresh interpreter holding only the workload: a fork costs more the more memory
      the forking process holds, so (b0) is (b) at its cheapest, while a trainer that forks (holding the
      model and its libraries) pays more than (b);
  (c) one fresh `python` subprocess per program script with all its asserts, as the Code-A1 reference's
      sandbox does;
  (a0) with --baseline REF: the Executor of git revision REF of this repository (e.g. the commit before a
      sandbox change), in a helper process started once and kept across rounds, so that a change's cost
      is measured in paired rounds of one run;
each with the same number of parallel workers. Each method first runs an untimed warm-up pass on 10
programs (plus one per zygote flavour the workload needs, so that (a)'s start-up stays out of the
rounds); then --rounds timed rounds each run the methods one after the other (so a change in the
machine's speed affects all alike). Prints verdicts/second per round, the medians, the median of the
rounds' speed-ups, and whether all agree on every verdict. The Executor is started once and kept across
rounds, as a trainer keeps it (its start-up time is printed apart), and its compile caches are emptied
before every round. Skips (exit 0) when the parquet is absent.

    python benchmarks/sandbox_throughput.py --limit 100 [--baseline 96e08d2]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import math
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path

DEFAULT_PARQUET = Path(__file__).resolve().parents[2] / "shared" / "data" / "codea1-val" / "validation_data_mix.parquet"


@dataclass
class Program:
    name: str
    code: str
    calls: list[str]
    expected: list
    float_tol: float | None


# ---------------------------------------------------------------------------------------------------
# workload


def _is_floats(x: object) -> bool:
    """EvalPlus's rule for using a float tolerance."""
    if isinstance(x, float):
        return True
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(i, float) for i in x)


def _finite(x: object) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    if isinstance(x, (list, tuple, set, frozenset)):
        return all(_finite(i) for i in x)
    if isinstance(x, dict):
        return all(_finite(k) and _finite(v) for k, v in x.items())
    return True


def _check_arrays(test: str) -> tuple[list, list] | None:
    """The literal `inputs` and `results` lists assigned inside an EvalPlus `check` function."""
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return None
    found: dict[str, list] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in ("inputs", "results"):
                try:
                    found[name] = ast.literal_eval(node.value)
                except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                    return None
    if "inputs" not in found or "results" not in found:
        return None
    return found["inputs"], found["results"]


WRONG = """
_codea1_gt = {fn}
def _codea1_wrong(r):
    if isinstance(r, bool): return not r
    if isinstance(r, (int, float)): return r + 1
    if isinstance(r, str): return r + "x"
    if isinstance(r, list): return r + [None]
    if isinstance(r, tuple): return r + (None,)
    return 0 if r is None else None
def {fn}(*a, **k):
    r = _codea1_gt(*a, **k)
    return r if len(repr(a)) % 4 == 0 else _codea1_wrong(r)
"""


def load_workload(path: Path, limit: int | None, tests_per_program: int) -> list[Program]:
    import pyarrow.parquet as pq

    rows = pq.read_table(path).to_pylist()
    programs: list[Program] = []
    for row in rows:
        info = row["extra_info"]
        fn = info["function_name"]
        gt = row["GT_code"]
        code = (info.get("imports") or "") + "\n" + gt if f"def {fn}" in gt else row["problem"] + gt
        arrays = _check_arrays(row["test"])
        if arrays is None:
            continue
        calls, expected = [], []
        for inp, exp in zip(*arrays, strict=False):
            call = f"{fn}(*{inp!r})"
            if len(call) > 2000 or not _finite(inp) or not _finite(exp) or len(repr(exp)) > 2000:
                continue
            calls.append(call)
            expected.append(exp)
            if len(calls) >= tests_per_program:
                break
        if not calls:
            continue
        tol = 1e-6 if any(_is_floats(e) for e in expected) else None
        qid = info["question_id"]
        programs.append(Program(f"{qid}", code, calls, expected, tol))
        programs.append(Program(f"{qid}:wrong", code + "\n" + WRONG.format(fn=fn), calls, expected, tol))
        if limit and len(programs) >= 2 * limit:
            break
    return programs


# ---------------------------------------------------------------------------------------------------
# the comparison every method uses (same semantics as codea1.sandbox.values.values_equal on plain data)


def same(a: object, b: object, tol: float | None) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if (
        tol is not None
        and isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and (isinstance(a, float) or isinstance(b, float))
    ):
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], tol) for k in a)
    return type(a) in (bool, int, float, complex, str, bytes, set, frozenset, type(None)) and a == b


# ---------------------------------------------------------------------------------------------------
# (a) this executor


def run_executor(ex, programs: list[Program], timeout: float) -> list[bool]:
    """Verdicts of every call: the sandbox runs, the judge decides (codea1.judge.calls). A baseline revision
    from before the judge package decides inside its executor (Job.expected), so both are timed alike."""
    from codea1.sandbox import Job
    from codea1.sandbox.executor import clear_caches

    clear_caches()  # every round compiles its programs afresh, as a new batch of candidates would
    try:
        from codea1.judge.calls import decide
    except ImportError:  # a revision whose executor decides verdicts itself
        jobs = [
            Job(p.name, p.code, p.calls, expected=p.expected, timeout=timeout, float_tol=p.float_tol) for p in programs
        ]
        return [r.status == "pass" for res in ex.run(jobs) for r in res.results]
    jobs = [Job(p.name, p.code, p.calls, timeout=timeout) for p in programs]
    judged = [decide(res, p.expected, p.float_tol) for res, p in zip(ex.run(jobs), programs, strict=False)]
    return [r.status == "pass" for res in judged for r in res.results]


# ---------------------------------------------------------------------------------------------------
# (b) one multiprocessing.Process per (program, test) pair


def _pair_target(code: str, call: str, expected: object, tol: float | None) -> None:
    try:
        ns: dict = {"__name__": "__main__"}
        exec(code, ns)  # noqa: S102
        ok = same(eval(call, ns), expected, tol)
    except BaseException:  # noqa: BLE001
        os._exit(2)
    os._exit(0 if ok else 1)


def run_process_per_pair(programs: list[Program], workers: int, timeout: float) -> list[bool]:
    ctx = mp.get_context("fork")
    pairs = [(p.code, c, e, p.float_tol) for p in programs for c, e in zip(p.calls, p.expected, strict=False)]
    verdicts = [False] * len(pairs)
    running: dict = {}
    nxt = 0
    while nxt < len(pairs) or running:
        while nxt < len(pairs) and len(running) < workers:
            proc = ctx.Process(target=_pair_target, args=pairs[nxt], daemon=True)
            proc.start()
            running[proc.sentinel] = (proc, nxt, time.monotonic())
            nxt += 1
        ready = wait(list(running), timeout=0.05)
        now = time.monotonic()
        for sentinel, (proc, idx, started) in list(running.items()):
            if sentinel in ready:
                proc.join()
                verdicts[idx] = proc.exitcode == 0
            elif now - started > timeout:
                proc.kill()
                proc.join()
            else:
                continue
            proc.close()
            del running[sentinel]
    return verdicts


def run_process_per_pair_lean(programs: list[Program], workers: int, timeout: float) -> tuple[list[bool], float]:
    """(b) run from a fresh interpreter that holds only the workload: (verdicts, seconds of the run itself).

    A fork costs more the more memory the forking process holds; this shows (b) at its cheapest.
    """
    import pickle

    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--pairs-worker"],
        check=True,
        input=pickle.dumps((programs, workers, timeout)),
        capture_output=True,
    )
    return pickle.loads(proc.stdout)


def _pairs_worker() -> None:
    import pickle

    programs, workers, timeout = pickle.loads(sys.stdin.buffer.read())
    t0 = time.perf_counter()
    verdicts = run_process_per_pair(programs, workers, timeout)
    sys.stdout.buffer.write(pickle.dumps((verdicts, time.perf_counter() - t0)))


class _Baseline:
    """(a0): the Executor of another git revision, in a helper process of its own (one package per process)."""

    def __init__(self, ref: str, workers: int) -> None:
        import io
        import tarfile

        repo = Path(__file__).resolve().parents[1]
        self.dir = Path(tempfile.mkdtemp(prefix="codea1-baseline-"))
        tar = subprocess.run(["git", "-C", str(repo), "archive", ref, "codea1"], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as t:
            t.extractall(self.dir)
        env = {**os.environ, "PYTHONPATH": str(self.dir)}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--baseline-worker", str(workers)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=str(self.dir),
        )
        self.level = self._call(None)

    def _call(self, msg: object) -> object:
        import pickle

        data = pickle.dumps(msg)
        self.proc.stdin.write(len(data).to_bytes(8, "big") + data)
        self.proc.stdin.flush()
        size = int.from_bytes(self.proc.stdout.read(8), "big")
        return pickle.loads(self.proc.stdout.read(size))

    def run(self, programs: list[Program], timeout: float) -> tuple[list[bool], float]:
        return self._call((programs, timeout))  # type: ignore[return-value]

    def close(self) -> None:
        import shutil

        self.proc.stdin.close()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def _baseline_worker(workers: int) -> None:
    import pickle
    import warnings

    warnings.simplefilter("ignore")
    try:
        from codea1.sandbox import LocalExecutor
    except ImportError:  # a revision from before the Executor Protocol: its class had that name
        from codea1.sandbox import Executor as LocalExecutor

    def reply(obj: object) -> None:
        data = pickle.dumps(obj)
        sys.stdout.buffer.write(len(data).to_bytes(8, "big") + data)
        sys.stdout.buffer.flush()

    with LocalExecutor(workers) as ex:
        while True:
            head = sys.stdin.buffer.read(8)
            if len(head) < 8:
                return
            msg = pickle.loads(sys.stdin.buffer.read(int.from_bytes(head, "big")))
            if msg is None:
                reply(ex.isolation_level)
                continue
            programs, timeout = msg
            t0 = time.perf_counter()
            verdicts = run_executor(ex, programs, timeout)
            reply((verdicts, time.perf_counter() - t0))


def _anon_mb() -> int:
    return int(Path("/proc/self/smaps_rollup").read_text().split("Anonymous:")[1].split()[0]) >> 10


# ---------------------------------------------------------------------------------------------------
# (c) one fresh interpreter per program script


def _script(p: Program) -> str:
    lines = [p.code, "", inspect.getsource(same), "import math", ""]
    for i, (call, exp) in enumerate(zip(p.calls, p.expected, strict=False)):
        lines += [
            "try:",
            f"    print('T{i}', 'PASS' if same({call}, {exp!r}, {p.float_tol!r}) else 'FAIL')",
            "except BaseException:",
            f"    print('T{i}', 'FAIL')",
        ]
    return "\n".join(lines) + "\n"


def run_script_per_program(programs: list[Program], workers: int, timeout: float) -> list[bool]:
    tmp = Path(tempfile.mkdtemp(prefix="codea1-bench-"))

    def one(k: int) -> list[bool]:
        p = programs[k]
        path = tmp / f"p{k}.py"
        path.write_text(_script(p))
        try:
            out = subprocess.run(
                [sys.executable, str(path)],
                check=False,
                capture_output=True,
                text=True,
                timeout=timeout * len(p.calls),
                cwd=tmp,
            ).stdout
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        passed = {line.split()[0] for line in out.splitlines() if line.endswith(" PASS")}
        return [f"T{i}" in passed for i in range(len(p.calls))]

    with ThreadPoolExecutor(workers) as pool:
        per = list(pool.map(one, range(len(programs))))
    return [v for vs in per for v in vs]


# ---------------------------------------------------------------------------------------------------


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parquet", type=Path, default=DEFAULT_PARQUET)
    ap.add_argument("--limit", type=int, default=100, help="GT programs to use (each adds a wrong variant)")
    ap.add_argument("--tests", type=int, default=8, help="single-call tests per program")
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per test")
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="timed rounds; each runs (a), (b), (c) once, and the ratios are the rounds' median",
    )
    ap.add_argument(
        "--baseline",
        metavar="REF",
        default=None,
        help="also run (a0), the Executor of git revision REF, in paired rounds (cost of a change)",
    )
    args = ap.parse_args(argv)
    if not args.parquet.is_file():
        print(f"skipped: {args.parquet} not found (pass --parquet)")
        return 0
    programs = load_workload(args.parquet, args.limit, args.tests)
    n = sum(len(p.calls) for p in programs)
    print(
        f"workload: {len(programs)} programs ({len(programs) // 2} GT + wrong variants), {n} verdicts, "
        f"{args.workers} workers, {args.rounds} rounds after an untimed warm-up pass"
    )
    from codea1.sandbox import LocalExecutor

    try:  # (b) forks this process, and a fork costs more the more memory it copies
        print(
            f"(b) forks this process, {_anon_mb()} MB of anonymous memory (it read the parquet with pyarrow); "
            "(b0) is (b) from a fresh interpreter holding only the workload"
        )
    except (OSError, IndexError, ValueError):
        pass

    t0 = time.perf_counter()
    ex = LocalExecutor(args.workers)
    print(f"(a) runs at isolation level {ex.isolation_level}; zygotes started in {time.perf_counter() - t0:.2f}s")
    baseline = _Baseline(args.baseline, args.workers) if args.baseline else None
    if baseline is not None:
        print(f"(a0) is the Executor of {args.baseline}, isolation level {baseline.level}")
    methods = {
        "a": ("codea1 Executor", lambda progs: run_executor(ex, progs, args.timeout)),
        **(
            {"a0": (f"codea1 Executor at {args.baseline}", lambda progs: baseline.run(progs, args.timeout))}
            if baseline is not None
            else {}
        ),
        "b": ("Process per pair (CURE)", lambda progs: run_process_per_pair(progs, args.workers, args.timeout)),
        "b0": (
            "Process per pair, lean parent",
            lambda progs: run_process_per_pair_lean(progs, args.workers, args.timeout),
        ),
        "c": ("python per script (reference)", lambda progs: run_script_per_program(progs, args.workers, args.timeout)),
    }
    verdicts: dict[str, list[bool]] = {}
    seconds: dict[str, list[float]] = {k: [] for k in methods}
    try:
        # warm-up: caches, thread pools, first forks; it also starts each zygote flavour the workload
        # needs (an Executor starts one on first use and keeps it, so it is start-up, not throughput)
        from codea1.sandbox.preload import flavour

        warm, seen = list(programs[:10]), {flavour(p.code, p.calls) for p in programs[:10]}
        for p in programs[10:]:
            if flavour(p.code, p.calls) not in seen:
                seen.add(flavour(p.code, p.calls))
                warm.append(p)
        for _, run in methods.values():
            run(warm)
        for r in range(args.rounds):
            line = []
            for key, (_, run) in methods.items():
                t0 = time.perf_counter()
                v = run(programs)
                took = time.perf_counter() - t0
                if isinstance(v, tuple):  # (verdicts, seconds measured inside a helper process)
                    v, took = v
                seconds[key].append(took)
                if verdicts.setdefault(key, v) != v:
                    print(f"({key}) gave different verdicts in round {r + 1}")
                    return 1
                line.append(f"({key}) {n / seconds[key][-1]:7.1f}/s")
            if baseline is not None:
                line.append(f"a/a0 {seconds['a0'][-1] / seconds['a'][-1]:.2f}x")
            print(
                f"round {r + 1}: " + "  ".join(line) + f"  a/b {seconds['b'][-1] / seconds['a'][-1]:.1f}x"
                f"  a/b0 {seconds['b0'][-1] / seconds['a'][-1]:.1f}x  a/c {seconds['c'][-1] / seconds['a'][-1]:.1f}x"
            )
    finally:
        ex.close()
        if baseline is not None:
            baseline.close()
    for key, (name, _) in methods.items():
        print(
            f"({key}) {name + ':':32s} {n / _median(seconds[key]):8.1f} verdicts/s (median {_median(seconds[key]):.2f}s)"
        )
    vs_b = _median([b / a for a, b in zip(seconds["a"], seconds["b"], strict=False)])
    vs_b0 = _median([b / a for a, b in zip(seconds["a"], seconds["b0"], strict=False)])
    vs_c = _median([c / a for a, c in zip(seconds["a"], seconds["c"], strict=False)])
    print(f"speed-up (median of the rounds' ratios) vs (b): {vs_b:.1f}x   vs (b0): {vs_b0:.1f}x   vs (c): {vs_c:.1f}x")
    if baseline is not None:
        vs_a0 = _median([a0 / a for a, a0 in zip(seconds["a"], seconds["a0"], strict=False)])
        print(f"throughput vs (a0), the Executor at {args.baseline}: {vs_a0:.2f}x (median of the rounds' ratios)")
        if verdicts["a0"] != verdicts["a"]:
            print("(a0) and (a) disagree")
            return 1
    va, vb, vc = verdicts["a"], verdicts["b"], verdicts["c"]
    agree_b = sum(x == y for x, y in zip(va, vb, strict=False))
    agree_c = sum(x == y for x, y in zip(va, vc, strict=False))
    print(f"passes: a={sum(va)} b={sum(vb)} c={sum(vc)} of {n}; agreement a~b {agree_b}/{n}, a~c {agree_c}/{n}")
    if verdicts["b0"] != vb:
        print("(b0) and (b) disagree")
        return 1
    if agree_b != n or agree_c != n:
        names = [p.name for p in programs for _ in p.calls]
        diff = [(names[i], va[i], vb[i], vc[i]) for i in range(n) if not va[i] == vb[i] == vc[i]]
        print("disagreements (program, a, b, c):", diff[:20])
        return 1
    print("all three agree on every verdict")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--pairs-worker"]:
        _pairs_worker()
        raise SystemExit(0)
    if sys.argv[1:2] == ["--baseline-worker"]:
        _baseline_worker(int(sys.argv[2]))
        raise SystemExit(0)
    raise SystemExit(main())
