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
- per generated token: GPU-seconds per sampled token at large batch (--gen-token-cost, default 4e-5, i.e.
  25,000 tokens/s per GPU for a 1.5B model under vLLM on an H100-class GPU: an assumption to replace by a
  measurement on the target GPU, e.g. benchmarks/generation_throughput.py there);
- the tail of a generate call: its longest samples run to max_new_tokens while the batch has emptied,
  one decode step at a time (--decode-step-s, default 0.012 s per step at small batch), for
  (max_new_tokens - mean tokens) steps, once per generate call;
- per scored/trained token: a forward pass costs 2*params FLOPs per token at --mfu of --peak-tflops (0.35:
  benchmarks/gpu_check.py measured 0.32-0.35 for codea1's learner step at the 1.5B shape on one H200, 16 to
  64 rows of 1024 tokens, packed);
  training is forward + backward (3x) plus the recomputed forward of gradient checkpointing (4x in all);
  only the rows that enter the update are scored (the learner scores them in train_step);
- per weight sync: the policy's bf16 weights into its engines (--sync-gbps; default 36 GB/s, measured by
  benchmarks/gpu_check.py on one H200 at the 1.5B shape: 3.31 GiB by CUDA IPC handles, the transfer a
  colocated engine in its own process gets, in 0.099 s; the safetensors-file transfer took 4.39 s, 0.8 GB/s);
  per sleep and wake of a colocated engine: --wake-s seconds; FSDP's all-gathers: the bf16 weights
  gathered for every forward and backward micro-batch (--gather-gbps, not overlapped with compute: an
  upper bound on their share);
- the Ray backend's overhead on the sandbox (--ray-overhead, from benchmarks/ray_executor_overhead.py);
- optionally, the most verdicts per second one sandbox pool reaches (--pool-rate): each pool's parent
  decides every verdict in one interpreter, so past some number of slots a pool stops scaling (more pools
  per node: ray.sandbox_pools_per_node).

Three layouts, printed side by side for each node count:
- **colocated** (verl-style): every GPU holds both policies' learner shards and engines; each role samples
  on all GPUs in turn (the other asleep), then each role trains on all GPUs in turn;
- **codea1** (`placement.learner_ranks`, `--learner-ranks` per policy, on one node): each policy samples and
  trains on its own GPUs, the two policies' GPUs apart; a role's sampling has its own ranks only, the
  game's order makes code sampling and test sampling sequential, and the two updates run at the same time;
- **codea1 span** (`placement.span_nodes`): the same with half of all GPUs per policy, its ranks spanning
  nodes, its FSDP gathers then crossing the network (--inter-node-gbps) once a policy is larger than a node.
The phases of a step run one after the other (generate codes, generate tests, execute, score, train).
A third row models **one-step-off** (`train.one_step_off`, docs/algorithm.md): both policies' engines on S
GPUs of their own and both learners on the rest, step t+1 sampled while step t executes and learns; a step
takes the longer side (sampling, or sandbox + scoring + training + gathers), then the weights' sync to the
engines (no sleep or wake: the engines keep their GPUs), at the best S. codea1 runs one-step-off today in one
process with the sampling copies on one device (`rollout.sampler_device`); the row is what the layout gives
where engines and learners each have GPUs of their own.

    python benchmarks/paper_step_estimate.py --nodes 1,2,4 [--verdict-cost 0.002] [--gen-token-cost 1e-4]
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import dataclass
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
    ap.add_argument("--learner-ranks", type=int, default=4, help="codea1 layout: GPUs (learner ranks) per policy")
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
    ap.add_argument("--pools-per-node", type=int, default=1, help="ray.sandbox_pools_per_node")
    ap.add_argument(
        "--ray-overhead",
        type=float,
        default=1.02,
        help="local/Ray verdict-rate ratio (benchmarks/ray_executor_overhead.py)",
    )
    ap.add_argument(
        "--gen-token-cost",
        type=float,
        default=4e-5,
        help="GPU-seconds per sampled token at large batch (default: 25k tokens/s per GPU)",
    )
    ap.add_argument("--decode-step-s", type=float, default=0.012, help="seconds per decode step at small batch")
    ap.add_argument(
        "--sync-gbps", type=float, default=36.0, help="GB/s of a weight sync (CUDA IPC, measured; the file: 0.8)"
    )
    ap.add_argument("--wake-s", type=float, default=2.0, help="seconds per sleep + wake of a colocated engine")
    ap.add_argument("--gather-gbps", type=float, default=150.0, help="GB/s of FSDP all-gathers (NVLink, in-node)")
    ap.add_argument(
        "--inter-node-gbps",
        type=float,
        default=25.0,
        help="GB/s per GPU of an all-gather whose ring crosses nodes (the network: 25 = a 200 Gb/s NIC per GPU; "
        "an 8-GPU H100/H200 node with one 400 Gb/s NIC per GPU has 50)",
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
    train_tokens = trained_code * code_seq + trained_test * test_seq
    score_tokens = train_tokens  # old log-probs of the trained rows only
    ref_tokens = train_tokens if cfg.policy.kl_coef > 0 else 0
    train_factor = 4 if cfg.policy.gradient_checkpointing else 3
    model = StepModel(
        code_resp=code_resp,
        test_resp=test_resp,
        code_tokens=args.code_tokens,
        test_tokens=args.test_tokens,
        code_max=cfg.generation.code.max_new_tokens,
        test_max=cfg.generation.test.max_new_tokens,
        code_train=trained_code * code_seq,
        test_train=trained_test * test_seq,
        ref=cfg.policy.kl_coef > 0,
        train_factor=train_factor,
        fwd=fwd,
        gen_token_cost=args.gen_token_cost,
        decode_step_s=args.decode_step_s,
        weight_gb=2 * args.params / 1e9,
        sync_gbps=args.sync_gbps,
        wake_s=args.wake_s,
        gather_gbps=args.gather_gbps,
        micro_batch_tokens=cfg.policy.micro_batch_tokens,
        gpus_per_node=args.gpus_per_node,
        inter_node_gbps=args.inter_node_gbps,
    )
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
    print(
        f"{'nodes':>5} {'GPUs':>5} {'layout':>12} {'gen code':>8} {'gen test':>8} {'sandbox':>7} {'score':>6} "
        f"{'train':>6} {'sync+wake':>9} {'gathers':>7} {'step min':>8} {'run h':>6} {'vs colocated':>12}"
    )
    for n_nodes in [int(x) for x in args.nodes.split(",") if x.strip()]:
        gpus = n_nodes * args.gpus_per_node
        cores = n_nodes * args.sandbox_cores
        overhead = args.ray_overhead if n_nodes > 1 else 1.0
        sandbox = verdicts * cost_with_timeouts * overhead / cores
        if args.pool_rate:  # the pools' parents cap the rate however many slots they have
            sandbox = max(sandbox, verdicts * overhead / (args.pool_rate * args.pools_per_node * n_nodes))
        off, off_step, samplers = model.one_step_off(gpus, sandbox)
        steps = {
            "colocated": (model.colocated(gpus), None),
            "codea1": (model.codea1(min(args.learner_ranks, gpus // 2)), None),
            "codea1 span": (model.codea1(gpus // 2), None),
            f"1-off S={samplers}": (off, off_step),
        }
        base = sum(steps["colocated"][0].values()) + sandbox
        for layout, (phases, overlapped) in steps.items():
            step = overlapped if overlapped is not None else sum(phases.values()) + sandbox
            print(
                f"{n_nodes:>5} {gpus:>5} {layout:>12} {phases['gen_code']:>8.1f} {phases['gen_test']:>8.1f} "
                f"{sandbox:>7.1f} {phases['score']:>6.1f} {phases['train']:>6.1f} {phases['sync_wake']:>9.1f} "
                f"{phases['gathers']:>7.1f} {step / 60:>8.2f} {step * cfg.train.max_steps / 3600:>6.1f} "
                f"{step / base:>11.2f}x"
            )
    print()
    print(
        f"seconds per phase; run: {cfg.train.max_steps} steps. Estimates from assumed per-token GPU costs "
        f"(--gen-token-cost, --decode-step-s, --mfu) and a measured per-verdict sandbox cost."
    )


@dataclass
class StepModel:
    """The GPU phases of one step, in seconds, for a layout (see the module docstring)."""

    code_resp: int
    test_resp: int
    code_tokens: int
    test_tokens: int
    code_max: int
    test_max: int
    code_train: int  # tokens of the trained code rows (prompt + response)
    test_train: int
    ref: bool
    train_factor: int
    fwd: float  # GPU-seconds per token of a forward pass
    gen_token_cost: float
    decode_step_s: float
    weight_gb: float
    sync_gbps: float
    wake_s: float
    gather_gbps: float
    micro_batch_tokens: int
    gpus_per_node: int = 8
    inter_node_gbps: float = 25.0

    def _generate(self, rows: int, mean: int, longest: int, gpus: int) -> float:
        """A generate call: the batch's tokens over the GPUs, then the tail of its longest sample."""
        return rows * mean * self.gen_token_cost / gpus + max(0, longest - mean) * self.decode_step_s

    def _learn(self, tokens: int, gpus: int) -> tuple[float, float, float]:
        """(scoring, training, FSDP gathers) of one policy's update on `gpus` ranks."""
        score = tokens * self.fwd / gpus
        train = tokens * self.fwd * (self.train_factor + (1 if self.ref else 0)) / gpus
        passes = max(1, -(-tokens // (gpus * self.micro_batch_tokens)))  # micro-batches per rank
        # fwd, bwd, recompute: over NVLink within a node, over the network once the ranks span nodes
        gbps = self.gather_gbps if gpus <= self.gpus_per_node else self.inter_node_gbps
        gathers = (3 * passes + 1) * self.weight_gb / gbps if gpus > 1 else 0.0
        return score, train, gathers

    def colocated(self, gpus: int) -> dict[str, float]:
        """Every GPU holds both policies: each role samples, then trains, on all of them in turn."""
        return self._phases(gpus, together=False)

    def codea1(self, ranks: int) -> dict[str, float]:
        """Each policy on its own `ranks` GPUs: the two updates (and engine wakes) at the same time."""
        return self._phases(ranks, together=True)

    def one_step_off(self, gpus: int, sandbox: float) -> tuple[dict[str, float], float, int]:
        """(phases, step seconds, S) of one-step-off with both engines on S GPUs and both learners on the
        other gpus - S, at the S that gives the shortest step: the sampling of the next step overlaps the
        sandbox and the updates of this one; the sync to the engines follows both."""
        best: tuple[dict[str, float], float, int] | None = None
        for samplers in range(1, gpus):
            learners = gpus - samplers
            code, test = self._learn(self.code_train, learners), self._learn(self.test_train, learners)
            phases = {
                "gen_code": self._generate(self.code_resp, self.code_tokens, self.code_max, samplers),
                "gen_test": self._generate(self.test_resp, self.test_tokens, self.test_max, samplers),
                "score": code[0] + test[0],
                "train": code[1] + test[1],
                "sync_wake": 2 * self.weight_gb / self.sync_gbps,  # both policies' weights; no sleep, no wake
                "gathers": code[2] + test[2],
            }
            sampling = phases["gen_code"] + phases["gen_test"]
            learning = sandbox + phases["score"] + phases["train"] + phases["gathers"]
            step = max(sampling, learning) + phases["sync_wake"]
            if best is None or step < best[1]:
                best = (phases, step, samplers)
        if best is None:
            raise ValueError("one-step-off needs at least 2 GPUs: one to sample on, one to learn on")
        return best

    def _phases(self, gpus: int, together: bool) -> dict[str, float]:
        """The phases of a step with `gpus` GPUs per role; `together`: the two policies' updates, syncs and
        wakes overlap (their own GPUs), else they run one after the other (shared GPUs)."""
        code = self._learn(self.code_train, gpus)
        test = self._learn(self.test_train, gpus)
        both = max if together else (lambda a, b: a + b)
        engine = self.weight_gb / self.sync_gbps + self.wake_s  # one engine's sync and wake
        return {
            "gen_code": self._generate(self.code_resp, self.code_tokens, self.code_max, gpus),
            "gen_test": self._generate(self.test_resp, self.test_tokens, self.test_max, gpus),
            "score": both(code[0], test[0]),
            "train": both(code[1], test[1]),
            "sync_wake": both(engine, engine),
            "gathers": both(code[2], test[2]),
        }


if __name__ == "__main__":
    main()
