"""Generation throughput (new tokens per second) of a policy's sampling path, at several batch sizes.

Measures ``Policy.generate`` end to end (chat template, left-padded ``model.generate`` with sampling
at temperature 1.0, stop handling and the log-prob scoring pass) and, separately, the time of that
scoring pass, on a Code-LLM-style prompt. ``batch`` is the number of rows generated together
(prompts x n). Every row is forced to run ``--new-tokens`` tokens (``min_new_tokens`` style: EOS is
suppressed) so that batch sizes are compared on equal work.
Usage:  python benchmarks/generation_throughput.py [--model smollm2-135m] [--batches 1,16] [--new-tokens 128]
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batches", default="1,16")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per batch size (best is reported)")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

    model, tok = load_model_and_tokenizer(args.model, dtype=args.dtype)
    # generation only: no optimiser state matters, no reference needed
    policy = Policy(model, tok, PolicyConfig(kl_coef=0.0, dtype=args.dtype))
    model.generation_config.min_new_tokens = args.new_tokens  # equal work per row
    prompt = [{"role": "user", "content": "Write a Python function `is_palindrome(s: str) -> bool` that ignores "
                                          "case and non-alphanumeric characters. Put the code in one ```python "
                                          "block."}]
    policy.generate([prompt], GenerationConfig(n=1, max_new_tokens=8))  # warm-up
    print(f"model={args.model} dtype={args.dtype} threads={args.threads} new_tokens={args.new_tokens}")
    print(f"{'batch':>5} {'new tokens':>10} {'seconds':>8} {'tokens/s':>9} {'scoring s':>9} {'gen-only tok/s':>14}")
    for b in [int(x) for x in args.batches.split(",")]:
        best = None
        for r in range(args.repeats):
            scored = []
            original = policy.rollout.score

            def timed_score(p, resp, _orig=original, _acc=scored):
                t = time.perf_counter()
                out = _orig(p, resp)
                _acc.append(time.perf_counter() - t)
                return out

            policy.rollout.score = timed_score
            t0 = time.perf_counter()
            rows = policy.generate([prompt], GenerationConfig(n=b, max_new_tokens=args.new_tokens, seed=r,
                                                              batch_size=b))
            dt = time.perf_counter() - t0
            policy.rollout.score = original
            tokens = sum(len(s.response_ids) for s in rows[0])
            if best is None or dt < best[1]:
                best = (tokens, dt, scored[0])
        tokens, dt, score_s = best
        print(f"{b:>5} {tokens:>10} {dt:>8.2f} {tokens / dt:>9.1f} {score_s:>9.2f} {tokens / (dt - score_s):>14.1f}")


if __name__ == "__main__":
    main()
