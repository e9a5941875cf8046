"""Generation throughput (new tokens per second) of a policy's sampling path: the old path
(``model.generate``, then a log-prob scoring pass) against the sampling loop, side by side in one run.

Measures ``Policy.generate`` end to end (chat template, sampling at temperature 1.0, stop handling and
the stored log-probs) on a Code-LLM-style prompt. ``batch`` is the number of rows generated together
(the ``n`` samples of one prompt). Rows:

- ``hf-generate``: ``TransformersRollout(engine="hf-generate")``, left-padded ``model.generate`` plus
  the scoring forward pass, at ``--baseline-threads`` torch threads (1: the old ``train.torch_threads``
  default) and, for comparison at equal threads, at ``--threads``;
- ``loop``: the default engine (a sampling loop with a KV cache, one prefill per prompt, log-probs
  taken from the generation forward; for Llama/Qwen2 models the decoding steps are the lean decoder's,
  ``codea1.inference.fast_decode``, with stacked q/k/v and gate/up weights, MKL-packed), at ``--threads``
  (default: the cores this process may use, the new ``train.torch_threads`` default) and at
  ``--baseline-threads``; at ``--threads`` also ``loop-forward``: the loop with the model's own forward
  for every step (its linear layers packed), and ``loop-unpacked``: the lean decoder without packing.

``vs old`` is each row's tokens/s over the first row's (the old path as it ran before: hf-generate at 1
thread).

Every row is forced to run ``--new-tokens`` tokens (a hook on the output layer masks the EOS logits)
so that paths and batch sizes are compared on equal work. The last column of the ``loop`` rows is the
largest difference between its stored log-probs and the training path's (``Policy.logprobs``).

Where the time goes (cProfile of one ``generate`` call, SmolLM2-135M float32, batch 16, 128 new tokens,
1 torch thread, on the 2-core development machine while other work ran on it): the old path took 59.2 s,
of which 34.3 s (58%) in the linear layers (decoding steps and scoring), 15.5 s (26%) in the scoring
pass (one batched forward over prompt + response: as many FLOPs per token as generating them), 5.0 s
in attention, 4.8 s in ``torch.multinomial`` over the 49k vocabulary (37 ms a step) and 3.8 s in
``torch.cat`` (the dynamic KV cache copies itself every layer and step); generate's own per-step Python
overhead is small at this model size. A decoding step at 16 rows streams all 540 MB of float32
weights, so it is bound by memory bandwidth more than by arithmetic, and the same weights cost the
same per step at batch 1. The loop took 35.3 s on the same machine: 21.1 s linear layers, 4.3 s
attention, 1.5 s for the float64 running sums of the draws; no scoring pass (its log-probs match the
training path's to ~1e-5), one prefill per prompt instead of per row, a cache that grows in place and
an inverse-CDF draw instead of ``multinomial``. What is left is the weights' memory traffic, which only
more cores (or a lower precision, not the default) reduce; hence ``train.torch_threads`` defaults to
the usable cores. Two threads help only while the second core is free: with another process busy on
one of the 2 cores, 2 spinning OpenMP threads ran up to 15x slower than 1 thread, and with passive
waiting (set below) about as fast as 1 thread.

A later look at the packed loop (batch 16, 2 threads, an idle machine) found a step of ~90 ms of which
the linear layers took ~50 ms; the rest was per-operation overhead, not arithmetic: the attention kernel
cost ~540 us per call for a single query against ~150 us for two batched matrix products, seven linear
calls per layer where two stacked products do, and the float64 running sum over the 49k vocabulary
took 5.8 ms per step (a two-level draw, blocks then tokens, takes 1.4 ms for the same inverse CDF). The
lean decoder (``codea1.inference.fast_decode``) and the two-level draw remove those: a step is ~70 ms, of which
~51 ms are the linear layers.

Usage:  python benchmarks/generation_throughput.py [--model smollm2-135m] [--batches 1,16] [--new-tokens 128]
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    import os

    # OpenMP threads that spin while they wait make a second thread ~15x slower whenever another
    # process holds a core (measured on the 2-core machine); passive waiting keeps it at about 1 thread's
    # speed then. Read once, when torch loads its OpenMP runtime; an explicit setting wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    from codea1.config import usable_cores

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument("--threads", type=int, default=usable_cores(), help="torch threads of the loop")
    ap.add_argument("--baseline-threads", type=int, default=1, help="torch threads of the old path")
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per row (best is reported)")
    args = ap.parse_args()

    import torch

    from codea1.inference.rollout import TransformersRollout
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

    model, tok = load_model_and_tokenizer(args.model, dtype=args.dtype)
    # generation only: no optimiser state matters, no reference needed
    policy = Policy(model, tok, PolicyConfig(kl_coef=0.0, dtype=args.dtype))
    new = policy.rollout
    old = TransformersRollout(model, tok, policy.logprobs, engine="hf-generate")
    forward = TransformersRollout(model, tok, policy.logprobs, fast_decode=False)  # steps: the model's forward
    unpacked = TransformersRollout(model, tok, policy.logprobs, pack_weights=False)  # lean steps, not packed
    eos = sorted(new.eos_ids())

    def no_eos(_module, _inputs, output):  # equal work per row: EOS is never sampled
        output[..., eos] = float("-inf")
        return output

    model.get_output_embeddings().register_forward_hook(no_eos)
    prompt = [
        {
            "role": "user",
            "content": "Write a Python function `is_palindrome(s: str) -> bool` that ignores "
            "case and non-alphanumeric characters. Put the code in one ```python "
            "block.",
        }
    ]

    def run(backend, threads: int, b: int) -> tuple[int, float, float, float]:
        torch.set_num_threads(threads)
        scored: list[float] = []
        original = backend.score

        def timed_score(p, resp, *args, **kwargs):  # the backend's own signature (temperature=... included)
            t = time.perf_counter()
            out = original(p, resp, *args, **kwargs)
            scored.append(time.perf_counter() - t)
            return out

        best = None
        for r in range(args.repeats):
            backend.score = timed_score
            scored.clear()
            t0 = time.perf_counter()
            rows = backend.generate(
                [prompt], GenerationConfig(n=b, max_new_tokens=args.new_tokens, seed=r, rows_per_call=b)
            )
            dt = time.perf_counter() - t0
            backend.score = original
            score_s = sum(scored)
            tokens = sum(len(s.response_ids) for s in rows[0])
            diff = float("nan")
            if not scored:  # log-probs came from the generation forward: compare with the training path
                ref = policy.logprobs([s.prompt_ids for s in rows[0]], [s.response_ids for s in rows[0]])
                diff = max(
                    abs(a - c)
                    for s, lp in zip(rows[0], ref, strict=False)
                    for a, c in zip(s.logprobs, lp, strict=False)
                )
            if best is None or dt < best[1]:
                best = (tokens, dt, score_s, diff)
        return best

    for backend in (old, forward, unpacked, new):  # warm-up
        backend.generate([prompt], GenerationConfig(n=2, max_new_tokens=8, rows_per_call=2))
    print(
        f"model={args.model} dtype={args.dtype} new_tokens={args.new_tokens} usable cores={usable_cores()} "
        f"OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}"
    )
    print(
        f"{'path':<14} {'threads':>7} {'batch':>5} {'tokens':>6} {'seconds':>8} {'tokens/s':>9} "
        f"{'scoring s':>9} {'vs old':>7} {'max |dlogp|':>11}"
    )
    plan = [("hf-generate", old, args.baseline_threads)]
    if args.threads != args.baseline_threads:  # both paths at both thread counts
        plan += [("hf-generate", old, args.threads), ("loop", new, args.baseline_threads)]
    plan += [
        ("loop-forward", forward, args.threads),
        ("loop-unpacked", unpacked, args.threads),
        ("loop", new, args.threads),
    ]
    for b in [int(x) for x in args.batches.split(",")]:
        base = None
        for name, backend, threads in plan:
            tokens, dt, score_s, diff = run(backend, threads, b)
            rate = tokens / dt
            base = base or rate
            print(
                f"{name:<14} {threads:>7} {b:>5} {tokens:>6} {dt:>8.2f} {rate:>9.1f} {score_s:>9.2f} "
                f"{rate / base:>6.2f}x {diff:>11.2e}",
                flush=True,
            )


if __name__ == "__main__":
    main()
