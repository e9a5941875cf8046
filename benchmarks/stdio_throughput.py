"""stdin/stdout throughput: codea1's program runners vs. a process per test, on one workload in one run.

Workload: the bundled stdio problems (codea1/data/bundled/stdio.jsonl), each problem's GT and one wrong
variant of it per language, run on every one of the problem's io_tests. The same (program, input) pairs are
judged by
  (a) codea1: one sandbox job per program, every layer the machine has on (jail, allow-list root, uid,
      cgroup, seccomp, rlimits), Python run in the forked child, C++ compiled once in the job and run per
      input; verdicts in the parent by the problem's output rule;
  (b) one subprocess per test, the way SandboxFusion-style services and per-test runners execute a stdio
      test: `python3 main.py < input` (C++: one compile per program, then the binary per input), with no
      isolation at all (what isolation would add only makes (b) slower), the same rule deciding;
each with the same number of parallel workers. One untimed warm-up pass, then --rounds timed rounds, each
running both methods one after the other. Prints verdicts/second per round, the median speed-up per
language, and whether both agree on every verdict.

    python benchmarks/stdio_throughput.py [--rounds 3] [--workers 2] [--limit 20] [--cpp-first-include bits/stdc++.h]

codea1's C++ compile reads precompiled headers (codea1.sandbox.pch) where a program's first include is one
of them; the per-test subprocess compiles as such services do, without them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from codea1.data.bundled_stdio import load_bundled_stdio
from codea1.judge.kinds.outputs import outputs_match
from codea1.judge.kinds.stdio import judge_runs, program_job, rule_of
from codea1.lang import language
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor
from codea1.sandbox.runners import run_results

TIMEOUT = 2.0


def _wrong(problem: Problem) -> str:
    """GT made wrong on most inputs: its output gets one more line."""
    if problem.language == "cpp":
        return problem.gt_solution.replace("int main(", "int real_main(") + (
            '\nint main(){ int r = real_main(); std::puts("extra"); return r; }\n'
        )
    return problem.gt_solution + "\nprint('extra')\n"


def workload(limit: int | None, cpp_first: str = "") -> list[tuple[Problem, str]]:
    """Each bundled stdio problem's GT and its wrong variant; with `cpp_first`, every C++ program (GT
    included) opens with `#include <cpp_first>`, as programs models write often do."""
    problems = load_bundled_stdio()
    if cpp_first:
        problems = [
            replace(p, gt_solution=f"#include <{cpp_first}>\n{p.gt_solution}") if p.language == "cpp" else p
            for p in problems
        ]
    by_lang: dict[str, list[Problem]] = {}
    for p in problems:
        by_lang.setdefault(p.language, []).append(p)
    chosen = [p for group in by_lang.values() for p in (group[:limit] if limit else group)]
    return [(p, code) for p in chosen for code in (p.gt_solution, _wrong(p))]


def codea1_verdicts(executor: LocalExecutor, items: list[tuple[Problem, str]]) -> list[list[bool]]:
    jobs = [
        program_job(f"{i}", p, code, [t["input"] for t in p.io_tests], TIMEOUT) for i, (p, code) in enumerate(items)
    ]
    out = []
    for (p, _), res in zip(items, executor.run(jobs), strict=True):
        runs = run_results(res, len(p.io_tests), compiled=language(p.language).compiled)
        out.append([v.passed for v in judge_runs(runs, [t["output"] for t in p.io_tests], rule_of(p))])
    return out


def _subprocess_one(p: Problem, code: str, tmp: str) -> list[bool]:
    lang = language(p.language)
    src = os.path.join(tmp, lang.source)
    Path(src).write_text(code, encoding="utf-8")
    if lang.compiled:
        exe = os.path.join(tmp, "program")
        argv = [a.replace("{src}", src).replace("{out}", exe) for a in lang.compile_argv]
        if subprocess.run(argv, capture_output=True, check=False).returncode != 0:
            return [False] * len(p.io_tests)
        run = [exe]
    else:
        run = [sys.executable, src]
    verdicts = []
    for t in p.io_tests:
        try:
            proc = subprocess.run(run, input=t["input"], capture_output=True, text=True, timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            verdicts.append(False)
            continue
        verdicts.append(proc.returncode == 0 and outputs_match(proc.stdout, t["output"], rule_of(p))[0])
    return verdicts


def subprocess_verdicts(items: list[tuple[Problem, str]], workers: int) -> list[list[bool]]:
    def one(item: tuple[Problem, str]) -> list[bool]:
        with tempfile.TemporaryDirectory() as tmp:
            return _subprocess_one(item[0], item[1], tmp)

    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, items))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="problems per language (default: all)")
    ap.add_argument(
        "--cpp-first-include",
        default="",
        metavar="HEADER",
        help="open every C++ program with #include <HEADER> (e.g. bits/stdc++.h, as model-written programs often do)",
    )
    args = ap.parse_args()
    items = workload(args.limit, args.cpp_first_include)
    langs = sorted({p.language for p, _ in items})
    print(f"workload: {len(items)} programs, {sum(len(p.io_tests) for p, _ in items)} (program, input) pairs")
    with LocalExecutor(workers=args.workers) as ex:
        print(f"isolation: {ex.isolation_level}")
        codea1_verdicts(ex, items[:4] + [it for it in items if it[0].language != "python"][:2])  # warm-up
        speedups: dict[str, list[float]] = {lang: [] for lang in langs}
        agree = True
        for r in range(args.rounds):
            for lang in langs:
                part = [it for it in items if it[0].language == lang]
                pairs = sum(len(p.io_tests) for p, _ in part)
                t0 = time.perf_counter()
                a = codea1_verdicts(ex, part)
                t1 = time.perf_counter()
                b = subprocess_verdicts(part, args.workers)
                t2 = time.perf_counter()
                agree &= a == b
                speedups[lang].append((t2 - t1) / (t1 - t0))
                print(
                    f"round {r + 1} {lang}: codea1 {pairs / (t1 - t0):.0f} verdicts/s, "
                    f"subprocess per test {pairs / (t2 - t1):.0f} verdicts/s ({speedups[lang][-1]:.2f}x)"
                )
    for lang in langs:
        print(f"{lang}: median speed-up {statistics.median(speedups[lang]):.2f}x over {args.rounds} rounds")
    print(f"verdicts agree: {agree}")


if __name__ == "__main__":
    main()
