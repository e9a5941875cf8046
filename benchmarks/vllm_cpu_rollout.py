"""Rollouts on vLLM's CPU build against codea1's loop engine, in one run: tokens/s, and the engine's gap to
the learner's log-probs (the train/inference mismatch), in float32 and bfloat16.

Run it in the environment of the real-engine tests (scripts/install-vllm.sh makes it):

    .venv-vllm/bin/python benchmarks/vllm_cpu_rollout.py [--rows 16,64] [--new-tokens 128]

For each dtype, a vLLM engine on the bundled SmolLM2-135M (codea1's own path: `attach_vllm`, the engine
in a process of its own as vLLM runs by default, eager mode) and codea1's loop engine (`Policy.generate`
with the model in that dtype) each sample `rows` responses of exactly `--new-tokens` tokens (the end
token is masked for the loop and ignored by vLLM) at temperature 1.0 from one code prompt: new tokens per
second of the generate call, engine start excluded. Then the gap: the learner (float32, the training path
`Policy.logprobs`) scores the vLLM samples' tokens; `mean |d|` is the mean absolute difference of the
engine's and the learner's log-probs, `KL k3` the k3 estimate of KL(engine || learner) over those tokens,
`TIS w>2` the share of tokens whose truncated-importance weight exp(learner - engine) would be capped at 2.
The loop's float32 log-probs are the learner's own (no gap to measure); a bfloat16 loop is scored the same
way as vLLM's samples.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

PROMPT = [{"role": "user", "content": "Write a Python function `merge(a, b)` that merges two sorted lists."}]


def gap(samples, learner) -> tuple[float, float, float]:
    """(mean |engine - learner|, k3 KL(engine || learner), share of TIS weights above 2) over the tokens."""
    scored = learner.logprobs([s.prompt_ids for s in samples], [s.response_ids for s in samples], temperature=1.0)
    pairs = [
        (e, lp) for s, row in zip(samples, scored, strict=False) for e, lp in zip(s.engine_logprobs, row, strict=False)
    ]
    n = len(pairs)
    return (
        sum(abs(e - lp) for e, lp in pairs) / n,
        sum(math.exp(lp - e) - (lp - e) - 1 for e, lp in pairs) / n,
        sum(math.exp(lp - e) > 2 for e, lp in pairs) / n,
    )


def timed(policy, rows: int, new_tokens: int, seed: int) -> tuple[list, float]:
    from codea1.inference.rollout import GenerationConfig

    gen = GenerationConfig(temperature=1.0, max_new_tokens=new_tokens, n=rows, seed=seed, rows_per_call=rows)
    t0 = time.perf_counter()
    samples = policy.generate([PROMPT], gen)[0]
    seconds = time.perf_counter() - t0
    return samples, sum(len(s.response_ids) for s in samples) / seconds


def main() -> int:
    import torch

    import codea1.inference.vllm_backend as backend
    from codea1.config import config_from_dict
    from codea1.inference.vllm_backend import attach_vllm
    from codea1.rl.build import load_policies

    plain = backend.sampling_kwargs
    # every row runs the full --new-tokens, as the loop's with its end token masked
    backend.sampling_kwargs = lambda *a, **k: {**plain(*a, **k), "ignore_eos": True, "stop_token_ids": None}

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="16,64")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--dtypes", default="float32,bfloat16")
    args = ap.parse_args()
    rows_list = [int(r) for r in args.rows.split(",")]
    torch.set_num_threads(len(os.sched_getaffinity(0)))

    def config(dtype: str, backend: str):
        return config_from_dict(
            {
                "model": {"code_model": "smollm2-135m", "mode": "full"},
                "policy": {"kl_coef": 0.0, "dtype": dtype},
                "rollout": {"backend": backend, "vllm_dtype": dtype, "vllm_sleep_level": 0, "vllm_enforce_eager": True},
            }
        )

    learner, _ = load_policies(config("float32", "transformers"), test=False)
    print(
        f"{'engine':>8} {'dtype':>9} {'rows':>5} {'tokens/s':>9} {'vs loop':>8} {'mean |d|':>9} {'KL k3':>9} {'TIS w>2':>8}"
    )
    for dtype in args.dtypes.split(","):
        loop, _ = load_policies(config(dtype, "transformers"), test=False)
        if dtype != "float32":
            loop.model.to(getattr(torch, dtype))

        def no_eos(module, inputs, output, eos=loop.tokenizer.eos_token_id):
            output[..., eos] = -float("inf")
            return output

        hook = loop.model.get_output_embeddings().register_forward_hook(no_eos)
        engine, _ = load_policies(config(dtype, "vllm"), test=False)
        attach_vllm(config(dtype, "vllm"), [engine, None])
        engine.rollout.stop_token_ids = []
        for rows in rows_list:
            timed(loop, 2, 8, 0)  # warm-up
            loop_samples, loop_rate = timed(loop, rows, args.new_tokens, 1)
            timed(engine, 2, 8, 0)
            vllm_samples, vllm_rate = timed(engine, rows, args.new_tokens, 1)
            d = gap(vllm_samples, learner)
            print(
                f"{'vllm':>8} {dtype:>9} {rows:>5} {vllm_rate:>9.1f} {vllm_rate / loop_rate:>7.2f}x "
                f"{d[0]:>9.2e} {d[1]:>9.2e} {d[2]:>8.2%}"
            )
            line = f"{'loop':>8} {dtype:>9} {rows:>5} {loop_rate:>9.1f} {1.0:>7.2f}x"
            if dtype != "float32":  # the loop's own bf16 log-probs (engine_logprobs) against the learner's
                d = gap(loop_samples, learner)
                line += f" {d[0]:>9.2e} {d[1]:>9.2e} {d[2]:>8.2%}"
            print(line, flush=True)
        hook.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
