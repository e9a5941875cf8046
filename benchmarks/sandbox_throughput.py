"""Sandbox throughput: this Executor vs. a process per (code, test) pair vs. a fresh interpreter per script.

Workload: the HumanEval+/MBPP+ GT programs of the shared validation parquet, each with up to --tests
single-call tests taken from its EvalPlus `check` (the literal `inputs`/`results` arrays), plus one wrong
variant per program (the GT wrapped so that most results are perturbed). The same (program, test) pairs
are judged by
  (a) codea1.sandbox.Executor: warm zygotes, one forked, isolated child per program, verdicts in the parent;
  (b) one multiprocessing.Process per (program, test) pair, the approach of CURE's reward code;
  (c) one fresh `python` subprocess per program script with all its asserts, as the Code-A1 reference's
      sandbox does;
each with the same number of parallel workers. Prints verdicts/second, the ratios, and whether all three
agree on every verdict. Skips (exit 0) when the parquet is absent.

    python benchmarks/sandbox_throughput.py --limit 100
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


WRONG = '''
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
'''


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
        for inp, exp in zip(*arrays):
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
    if tol is not None and isinstance(a, (int, float)) and isinstance(b, (int, float)) and (
            isinstance(a, float) or isinstance(b, float)):
        return math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], tol) for k in a)
    return type(a) in (bool, int, float, complex, str, bytes, set, frozenset, type(None)) and a == b


# ---------------------------------------------------------------------------------------------------
# (a) this executor


def run_executor(programs: list[Program], workers: int, timeout: float) -> list[bool]:
    from codea1.sandbox import Executor, Job

    with Executor(workers) as ex:
        jobs = [Job(p.name, p.code, p.calls, expected=p.expected, timeout=timeout, float_tol=p.float_tol)
                for p in programs]
        t0 = time.perf_counter()
        results = ex.run(jobs)
        run_executor.seconds = time.perf_counter() - t0  # type: ignore[attr-defined]
        run_executor.level = ex.isolation_level  # type: ignore[attr-defined]
    return [r.status == "pass" for res in results for r in res.results]


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
    pairs = [(p.code, c, e, p.float_tol) for p in programs for c, e in zip(p.calls, p.expected)]
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


# ---------------------------------------------------------------------------------------------------
# (c) one fresh interpreter per program script


def _script(p: Program) -> str:
    lines = [p.code, "", inspect.getsource(same), "import math", ""]
    for i, (call, exp) in enumerate(zip(p.calls, p.expected)):
        lines += ["try:", f"    print('T{i}', 'PASS' if same({call}, {exp!r}, {p.float_tol!r}) else 'FAIL')",
                  "except BaseException:", f"    print('T{i}', 'FAIL')"]
    return "\n".join(lines) + "\n"


def run_script_per_program(programs: list[Program], workers: int, timeout: float) -> list[bool]:
    tmp = Path(tempfile.mkdtemp(prefix="codea1-bench-"))

    def one(k: int) -> list[bool]:
        p = programs[k]
        path = tmp / f"p{k}.py"
        path.write_text(_script(p))
        try:
            out = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True,
                                 timeout=timeout * len(p.calls), cwd=tmp).stdout
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        passed = {line.split()[0] for line in out.splitlines() if line.endswith(" PASS")}
        return [f"T{i}" in passed for i in range(len(p.calls))]

    with ThreadPoolExecutor(workers) as pool:
        per = list(pool.map(one, range(len(programs))))
    return [v for vs in per for v in vs]


# ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parquet", type=Path, default=DEFAULT_PARQUET)
    ap.add_argument("--limit", type=int, default=100, help="GT programs to use (each adds a wrong variant)")
    ap.add_argument("--tests", type=int, default=8, help="single-call tests per program")
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--timeout", type=float, default=5.0, help="seconds per test")
    args = ap.parse_args(argv)
    if not args.parquet.is_file():
        print(f"skipped: {args.parquet} not found (pass --parquet)")
        return 0
    programs = load_workload(args.parquet, args.limit, args.tests)
    n = sum(len(p.calls) for p in programs)
    print(f"workload: {len(programs)} programs ({len(programs) // 2} GT + wrong variants), {n} verdicts, "
          f"{args.workers} workers")

    results = {}
    t0 = time.perf_counter()
    va = run_executor(programs, args.workers, args.timeout)
    ta_total = time.perf_counter() - t0
    results["a"] = (va, run_executor.seconds)  # type: ignore[attr-defined]
    print(f"(a) codea1 Executor [{run_executor.level}]: {n / run_executor.seconds:9.1f} verdicts/s "  # type: ignore[attr-defined]
          f"({run_executor.seconds:.2f}s; {ta_total:.2f}s with zygote start-up)")  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    vb = run_process_per_pair(programs, args.workers, args.timeout)
    results["b"] = (vb, time.perf_counter() - t0)
    print(f"(b) Process per pair (CURE):      {n / results['b'][1]:9.1f} verdicts/s ({results['b'][1]:.2f}s)")
    t0 = time.perf_counter()
    vc = run_script_per_program(programs, args.workers, args.timeout)
    results["c"] = (vc, time.perf_counter() - t0)
    print(f"(c) python per script (reference): {n / results['c'][1]:8.1f} verdicts/s ({results['c'][1]:.2f}s)")

    sa = results["a"][1]
    print(f"speed-up vs (b): {results['b'][1] / sa:.1f}x   vs (c): {results['c'][1] / sa:.1f}x")
    agree_b = sum(x == y for x, y in zip(va, vb))
    agree_c = sum(x == y for x, y in zip(va, vc))
    print(f"passes: a={sum(va)} b={sum(vb)} c={sum(vc)} of {n}; agreement a~b {agree_b}/{n}, a~c {agree_c}/{n}")
    if agree_b != n or agree_c != n:
        names = [p.name for p in programs for _ in p.calls]
        diff = [(names[i], va[i], vb[i], vc[i]) for i in range(n) if not va[i] == vb[i] == vc[i]]
        print("disagreements (program, a, b, c):", diff[:20])
        return 1
    print("all three agree on every verdict")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
