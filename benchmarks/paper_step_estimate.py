"""How long one Code-A1 training step at the paper's scale takes on N nodes: an estimate from measured costs.

The step's work comes from a training config (default: codea1/configs/qwen2.5-coder-1.5b.yaml): B questions,
M codes per question, N suites per code of `tests_per_suite` tests, H Mistake Book tests, TopVar ell
(docs/algorithm.md section 2). Per step:

  code responses   B*M                         (sampled, then scored by the learner)
  test responses   B*M*N                       (sampled, then scored by the learner)
  verdicts         B*M*N*tests (each test on GT: validity)  +  B*M*(H + N*tests) (each code on its tests)
  trained samples  B*M code responses + B*ell*N test responses (forward+backward, and a reference pass)

Costs:
- per verdict: sandbox core-seconds per judged test call, MEASURED here with the local Executor on a
  step-shaped workload (small functions, one job per code with H + N*tests calls, a share of failing
  calls), unless --verdict-cost is given; plus a share of calls that run into the per-call time limit
  (--timeout-share x game.test_timeout core-seconds each);
- per generated token: GPU-seconds per sampled token at large batch (--gen-token-cost, default 1e-4, i.e.
  10,000 tokens/s per GPU for a 1.5B model under vLLM: an assumption to replace by a measurement on the
  target GPU, e.g. benchmarks/generation_throughput.py there);
- per scored/trained token: a forward pass costs 2*params FLOPs per token at --mfu of --peak-tflops;
  training is forward + backward (3x) plus the recomputed forward of gradient checkpointing (4x in all);
- the Ray backend's overhead on the sandbox (--ray-overhead, from benchmarks/ray_executor_overhead.py);
- optionally, the most verdicts per second one sandbox pool reaches (--pool-rate): each pool's parent
  decides every verdict in one interpreter, so past some number of slots a pool stops scaling (more pools
  per node: executor.ray_actors_per_node).

The phases of a step run one after the other (generate codes, generate tests, execute, score, train);
generation, scoring and training split over every GPU of the cluster (one engine and one data-parallel
learner rank per GPU), the sandbox over every node's sandbox cores. Communication (weight sync, gradient
all-reduce) is left out: a lower bound on the step time for each N. `--layout codea1` gives today's
layout instead: each policy samples and trains on its own `placement.learner_ranks` GPUs
(`--learner-ranks`; a generate call's prompts split over them), the two policies' GPUs apart, so a
role's sampling has only its own ranks' GPUs; replicated or sharded
(`placement.fsdp`) alike here, since the sharded layout changes the memory per GPU (docs/multi-node.md),
not the compute, and its gathers are communication.

    python benchmarks/paper_step_estimate.py --nodes 1,2,4 [--verdict-cost 0.002] [--gen-token-cost 1e-4]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[1] / "codea1" / "configs" / "qwen2.5-coder-1.5b.yaml"


def measure_verdict_cost(workers: int, jobs: int, calls: int, uid_base: int) -> float:
    """Sandbox core-seconds per verdict on this machine (local Executor, `workers` slots)."""
    from codea1.judge.calls import run_expecting
    from codea1.sandbox import Job, LocalExecutor

    code = (
        "def solve(xs, k):\n    seen = {}\n    for i, x in enumerate(xs):\n        if k - x in seen:\n"
        "            return [seen[k - x], i]\n        seen[x] = i\n    return []\n"
    )
    batch = []
    for j in range(jobs):
        xs = list(range(j % 13, j % 13 + 20))
        expected = [[0, 1] if c % 7 else [9, 9] for c in range(calls)]  # a share of failing calls
        batch.append((Job(f"code-{j}", code, [f"solve({xs!r}, {xs[0] + xs[1]})" for _ in range(calls)]), expected))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(workers, uid_base=uid_base) as ex:
            warm = batch[: max(1, jobs // 10)]
            run_expecting(ex, [job for job, _ in warm], [exp for _, exp in warm])  # warm-up
            t0 = time.perf_counter()
            results = run_expecting(ex, [job for job, _ in batch], [exp for _, exp in batch])
            seconds = time.perf_counter() - t0
    n = sum(len(r.results) for r in results)
    return seconds * workers / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=str(CONFIG))
    ap.add_argument("--nodes", default="1,2,4", help="node counts to estimate for")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument(
        "--layout",
        choices=("ideal", "codea1"),
        default="ideal",
        help="ideal: every GPU samples and trains; codea1: each policy samples and trains on its own "
        "--learner-ranks GPUs (placement.learner_ranks)",
    )
    ap.add_argument("--learner-ranks", type=int, default=4, help="with --layout codea1: ranks per policy")
    ap.add_argument("--sandbox-cores", type=int, default=96, help="sandbox slots per node (cores left to it)")
    ap.add_argument(
        "--verdict-cost", type=float, default=None, help="core-seconds per verdict (default: measured here)"
    )
    ap.add_argument("--measure-workers", type=int, default=2)
    ap.add_argument("--measure-jobs", type=int, default=200)
    ap.add_argument(
        "--timeout-share", type=float, default=0.002, help="share of verdicts that run into the per-call time limit"
    )
    ap.add_argument(
        "--pool-rate",
        type=float,
        default=None,
        help="most verdicts/s one sandbox pool (one Executor process) reaches, whatever its "
        "slots: its parent decides every verdict in one interpreter (a 16-slot pool "
        "measured ~56,000/s on 72-call jobs, ~18,000/s on 8-call jobs); null: no cap",
    )
    ap.add_argument("--pools-per-node", type=int, default=1, help="executor.ray_actors_per_node")
    ap.add_argument(
        "--ray-overhead",
        type=float,
        default=1.02,
        help="local/Ray verdict-rate ratio (benchmarks/ray_executor_overhead.py)",
    )
    ap.add_argument(
        "--gen-token-cost",
        type=float,
        default=1e-4,
        help="GPU-seconds per sampled token at large batch (default: 10k tokens/s per GPU)",
    )
    ap.add_argument("--params", type=float, default=1.54e9, help="model parameters")
    ap.add_argument("--peak-tflops", type=float, default=989.0, help="GPU bf16 dense peak (H100 SXM: 989)")
    ap.add_argument("--mfu", type=float, default=0.35, help="model FLOPs utilisation of learner passes")
    ap.add_argument("--code-tokens", type=int, default=700, help="mean code response tokens")
    ap.add_argument("--test-tokens", type=int, default=600, help="mean test response tokens")
    ap.add_argument("--code-prompt-tokens", type=int, default=350, help="mean code prompt tokens")
    ap.add_argument("--test-prompt-tokens", type=int, default=1100, help="mean test prompt tokens (question + code)")
    ap.add_argument("--uid-base", type=int, default=1_700_730_000)
    args = ap.parse_args()

    from codea1.config import load_config

    cfg = load_config(args.config)
    g = cfg.game
    B, M, N, T, H, ell = (cfg.train.batch_size, g.M, g.N, g.tests_per_suite, g.history_size, g.topvar_ell)

    code_resp = B * M
    test_resp = B * M * N
    verdicts_gt = B * M * N * T
    verdicts_code = B * M * (H + N * T)
    verdicts = verdicts_gt + verdicts_code
    trained_code, trained_test = B * M, B * ell * N

    if args.verdict_cost is None:
        calls = H + N * T
        cost = measure_verdict_cost(args.measure_workers, args.measure_jobs, calls, args.uid_base)
        source = f"measured here: {args.measure_jobs} jobs x {calls} calls on {args.measure_workers} slots"
    else:
        cost, source = args.verdict_cost, "given"
    cost_with_timeouts = cost + args.timeout_share * g.test_timeout

    gen_tokens = code_resp * args.code_tokens + test_resp * args.test_tokens
    fwd = 2 * args.params / (args.mfu * args.peak_tflops * 1e12)  # GPU-seconds per token of a forward pass
    code_seq = args.code_prompt_tokens + args.code_tokens
    test_seq = args.test_prompt_tokens + args.test_tokens
    score_tokens = code_resp * code_seq + test_resp * test_seq  # old log-probs of every sample
    train_tokens = trained_code * code_seq + trained_test * test_seq
    ref_tokens = train_tokens if cfg.policy.kl_coef > 0 else 0
    train_factor = 4 if cfg.policy.gradient_checkpointing else 3

    print(f"config: {args.config}")
    print(
        f"per step: B={B} M={M} N={N} tests={T} H={H} ell={ell}: {code_resp} code + {test_resp} test responses, "
        f"{verdicts:,} verdicts ({verdicts_gt:,} GT validity + {verdicts_code:,} code runs)"
    )
    print(
        f"sampled tokens {gen_tokens / 1e6:.1f}M, scored {score_tokens / 1e6:.1f}M, trained {train_tokens / 1e6:.1f}M "
        f"(+ reference {ref_tokens / 1e6:.1f}M)"
    )
    print(
        f"per-verdict cost: {cost * 1e3:.3f} core-ms ({source}); with {args.timeout_share:.2%} time-outs of "
        f"{g.test_timeout:g} s: {cost_with_timeouts * 1e3:.3f} core-ms"
    )
    print(
        f"per-token costs: sample {args.gen_token_cost * 1e6:.0f} GPU-us (assumed), forward {fwd * 1e6:.2f} GPU-us "
        f"({args.params / 1e9:.2f}B params, {args.mfu:.0%} of {args.peak_tflops:g} TFLOP/s)"
    )
    print()
    header = (
        f"{'nodes':>5} {'GPUs':>5} {'cores':>6} {'gen code s':>10} {'gen test s':>10} {'sandbox s':>9} "
        f"{'score s':>8} {'train s':>8} {'step s':>8} {'step min':>8} {'run h':>7}"
    )
    print(header)
    for n_nodes in [int(x) for x in args.nodes.split(",") if x.strip()]:
        gpus = n_nodes * args.gpus_per_node
        cores = n_nodes * args.sandbox_cores
        # codea1's layout: each role samples and trains on its own ranks (a call's prompts split over
        # them), one role after the other in the game's order, so each role's sampling has its ranks only
        learn_gpus = min(args.learner_ranks, gpus // 2) if args.layout == "codea1" else gpus
        sample_gpus = learn_gpus
        gen_code = code_resp * args.code_tokens * args.gen_token_cost / sample_gpus
        gen_test = test_resp * args.test_tokens * args.gen_token_cost / sample_gpus
        overhead = args.ray_overhead if n_nodes > 1 else 1.0
        sandbox = verdicts * cost_with_timeouts * overhead / cores
        if args.pool_rate:  # the pools' parents cap the rate however many slots they have
            sandbox = max(sandbox, verdicts * overhead / (args.pool_rate * args.pools_per_node * n_nodes))
        score = score_tokens * fwd / learn_gpus
        train = (train_tokens * fwd * train_factor + ref_tokens * fwd) / learn_gpus
        step = gen_code + gen_test + sandbox + score + train
        run_h = step * cfg.train.max_steps / 3600
        print(
            f"{n_nodes:>5} {gpus:>5} {cores:>6} {gen_code:>10.1f} {gen_test:>10.1f} {sandbox:>9.1f} "
            f"{score:>8.1f} {train:>8.1f} {step:>8.1f} {step / 60:>8.1f} {run_h:>7.1f}"
        )
    print()
    print(
        f"run: {cfg.train.max_steps} steps. Lower bounds: weight sync and all-reduce are left out, and the "
        f"sampled-token cost is an assumption (--gen-token-cost)."
    )


if __name__ == "__main__":
    main()
