"""The learner with its log-probs scored chunk by chunk in the output layer (policy.logprob_chunk, the
default) against the whole pass's logits at once (logprob_chunk 0, the path before it), in one process on
the same samples and the same weights.

The policy block is a preset's (default: smollm2-cpu, the CPU learner the SmolLM2 comparisons train) with
only logprob_chunk changed; the samples are the shapes of benchmarks/learner_shared_prompt.py (an a1 step
of the designed SmolLM2 comparison: 2 groups of 4 codes, 2 groups of 2 suites). Printed per role: the
largest log-prob and entropy difference between the two paths, the gradient's distance relative to its
norm, the median time of one GRPO update (forward, backward, AdamW) for each, and the ratio (above 1: the
chunked path is faster). `--chunk` sets the chunked side's positions per chunk.

    python benchmarks/chunked_logprobs.py [--model smollm2-135m|tiny-random] [--repeats 3] [--chunk 1024]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from learner_shared_prompt import ROLES, scored_samples, time_update


def build_policy(model_name: str, preset: str, chunk: int, threads: int):
    import torch

    from codea1.config import load_section
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import Policy

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer(model_name)
    cfg = load_section("policy", preset, [f"policy.logprob_chunk={chunk}"])
    return Policy(model, tok, cfg)


def differences(plain, chunked, samples: list) -> tuple[float, float, float]:
    """Largest |log-prob| and |entropy| difference over the response tokens, and the gradient's distance
    relative to its norm, for one loss over both on the same weights (each policy's own copy)."""

    from codea1.rl.logprobs import forward_logprobs, pack

    batch = pack([s.prompt_ids for s in samples], [s.response_ids for s in samples], plain.pad_id)
    mask = batch.response_mask.float()
    out = []
    for policy in (plain, chunked):
        policy.model.train()
        policy.model.zero_grad(set_to_none=True)
        lp, ent = forward_logprobs(
            policy.model, batch, with_entropy=True, entropy_grad=True, chunk=policy.config.logprob_chunk
        )
        ((lp * mask).sum() + 0.01 * (ent * mask).sum()).backward()
        grads = [p.grad.detach().clone() for p in policy.model.parameters()]
        policy.model.zero_grad(set_to_none=True)
        out.append((lp.detach() * mask, ent.detach() * mask, grads))
    (lp0, ent0, g0), (lp1, ent1, g1) = out
    num = sum(float(((a - b) ** 2).sum()) for a, b in zip(g0, g1, strict=True))
    den = sum(float((a**2).sum()) for a in g0)
    return float((lp0 - lp1).abs().max()), float((ent0 - ent1).abs().max()), math.sqrt(num / max(den, 1e-30))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m", help="smollm2-135m (the bundled model) or tiny-random")
    parser.add_argument("--preset", default="smollm2-cpu", help="the preset whose policy block is used")
    parser.add_argument("--chunk", type=int, default=None, help="positions per chunk (default: the key's default)")
    parser.add_argument("--repeats", type=int, default=3, help="timed updates per role and way (median shown)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    from codea1.rl.chunked import DEFAULT_CHUNK

    chunk = DEFAULT_CHUNK if args.chunk is None else args.chunk
    plain = build_policy(args.model, args.preset, 0, args.threads)
    chunked = build_policy(args.model, args.preset, chunk, args.threads)
    vocab = plain.model.config.vocab_size
    scale = 1.0 if args.model != "tiny-random" else 0.1
    rng = random.Random(0)
    print(
        f"model {args.model}, policy block of {args.preset} (dtype {plain.config.dtype}), chunk {chunk} positions, "
        f"{args.threads} threads, {args.repeats} timed updates per role and way (median)"
    )
    print(
        f"{'role':5s} {'rows':>4s} {'max |dlogp|':>11s} {'max |dH|':>9s} {'|dgrad|/|g|':>11s} "
        f"{'whole s':>8s} {'chunked s':>9s} {'ratio':>6s}"
    )
    totals = [0.0, 0.0]
    for role in ROLES:
        samples, advantages = scored_samples(plain, role, vocab, rng, scale)
        lp_diff, ent_diff, grad_diff = differences(plain, chunked, samples)
        times: dict[str, list[float]] = {"whole": [], "chunked": []}
        for _ in range(args.repeats):
            for name, policy in (("whole", plain), ("chunked", chunked)):
                times[name].append(time_update(policy, samples, advantages))
        a, b = statistics.median(times["whole"]), statistics.median(times["chunked"])
        totals[0] += a
        totals[1] += b
        print(
            f"{role:5s} {len(samples):4d} {lp_diff:11.2e} {ent_diff:9.2e} {grad_diff:11.2e} "
            f"{a:8.2f} {b:9.2f} {a / b:5.2f}x"
        )
    print(f"both roles: {totals[0]:.2f} s whole, {totals[1]:.2f} s chunked: {totals[0] / totals[1]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
