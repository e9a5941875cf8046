"""The learner with each group's prompt run once (policy.shared_prompt) against every row packed with its
own copy of the prompt (today's default before it), in one process on the same samples.

Shapes follow an a1 step of the designed SmolLM2 comparison (docs/results/smollm2-mbpp-heldout.md):
the Code LLM trains 2 groups of M=4 codes, the Test LLM 2 groups of N=2 suites (TopVar keeps one code
per question); prompt and response lengths are drawn around the sizes that run logged. Both ways score
the same tokens: the table gives the largest log-prob and gradient differences (float32 rounding is
~1e-5), the time of one GRPO update (forward, backward, AdamW) for each role, and the ratio. It also
times one checkpoint write of a policy (weights, optimiser, scheduler, RNG), which the step timer does
not see.

    python benchmarks/learner_shared_prompt.py [--model smollm2-135m|tiny-random] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# (role, groups, rows per group, prompt length, response lengths drawn from)
ROLES = {
    "code": (2, 4, 260, (12, 192)),
    "test": (2, 2, 420, (30, 120)),
}


def make_samples(role: str, vocab: int, rng: random.Random, scale: float) -> list:
    from codea1.inference.rollout import Sample

    groups, rows, p_len, (lo, hi) = ROLES[role]
    p_len = max(2, int(p_len * scale))
    lo, hi = max(1, int(lo * scale)), max(2, int(hi * scale))
    out = []
    for _ in range(groups):
        prompt = [rng.randrange(3, vocab) for _ in range(p_len)]
        for _ in range(rows):
            response = [rng.randrange(3, vocab) for _ in range(rng.randint(lo, hi))]
            out.append(Sample(prompt, response, "", [], True, temperature=0.7 if role == "code" else 1.0))
    return out


def scored_samples(policy, role: str, vocab: int, rng: random.Random, scale: float) -> tuple[list, list[float]]:
    """One role's samples (make_samples) carrying `policy`'s log-probs, and random advantages."""
    samples = make_samples(role, vocab, rng, scale)
    scored = policy.logprobs(
        [s.prompt_ids for s in samples],
        [s.response_ids for s in samples],
        temperature=[s.temperature for s in samples],
    )
    samples = [
        type(s)(s.prompt_ids, s.response_ids, "", lp, True, s.temperature)
        for s, lp in zip(samples, scored, strict=True)
    ]
    return samples, [rng.choice([-1.0, 1.0]) * rng.random() for _ in samples]


def build_policy(model_name: str, shared: bool, threads: int, dtype: str = "float32"):
    import torch

    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import Policy, PolicyConfig

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer(model_name)
    cfg = PolicyConfig(lr=3e-6, warmup_steps=0, kl_coef=0.001, shared_prompt=shared, total_steps=100, dtype=dtype)
    return Policy(model, tok, cfg)


def differences(packed, samples: list) -> tuple[float, float]:
    """Largest |log-prob| difference over the response tokens, and largest gradient difference relative
    to the largest gradient, for one policy-gradient-like loss on the same weights."""
    import torch

    from codea1.rl.logprobs import forward_logprobs, forward_shared_prompt_logprobs, pack

    model = packed.model
    model.train()
    by_prompt: dict[tuple, list] = {}
    for s in samples:
        by_prompt.setdefault(tuple(s.prompt_ids), []).append(s)
    lp_diff, grads = 0.0, []
    previous: list = []
    for shared_path in (False, True):
        model.zero_grad(set_to_none=True)
        values = []
        for rows in by_prompt.values():
            responses = [r.response_ids for r in rows]
            if shared_path:
                lp, _ = forward_shared_prompt_logprobs(model, rows[0].prompt_ids, responses, packed.pad_id)
            else:
                lp, _ = forward_logprobs(model, pack([r.prompt_ids for r in rows], responses, packed.pad_id))
            mask = torch.tensor([[1.0] * len(x) + [0.0] * (lp.shape[1] - len(x)) for x in responses])
            (lp * mask).sum().backward()
            values.append((lp.detach(), mask))
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
        if shared_path:
            lp_diff = max(float(((a - b).abs() * m).max()) for (a, m), (b, _) in zip(values, previous, strict=True))
        previous = values
    model.zero_grad(set_to_none=True)
    scale = max(float(g.abs().max()) for g in grads[0].values())
    grad_diff = max(float((grads[0][n] - grads[1][n]).abs().max()) for n in grads[0]) / scale
    return lp_diff, grad_diff


def time_update(policy, samples: list, advantages: list[float]) -> float:
    start = time.perf_counter()
    policy.train_step(samples, advantages)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m", help="smollm2-135m (the bundled model) or tiny-random")
    parser.add_argument("--repeats", type=int, default=3, help="timed updates per role and way (median shown)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-checkpoint", action="store_true", help="skip timing a checkpoint write")
    parser.add_argument(
        "--bf16",
        action="store_true",
        help="also time the shared-prompt learner under bfloat16 autocast (policy.dtype=bfloat16: not exact)",
    )
    args = parser.parse_args()

    packed = build_policy(args.model, shared=False, threads=args.threads)
    shared = build_policy(args.model, shared=True, threads=args.threads)
    bf16 = build_policy(args.model, shared=True, threads=args.threads, dtype="bfloat16") if args.bf16 else None
    vocab = packed.model.config.vocab_size
    scale = 1.0 if args.model != "tiny-random" else 0.1
    rng = random.Random(0)
    print(f"model {args.model}, {args.threads} threads, {args.repeats} timed updates per role and way (median)")
    print(
        f"{'role':5s} {'rows':>4s} {'tokens packed':>13s} {'tokens shared':>13s} {'max |dlogp|':>11s} "
        f"{'max dgrad/g':>11s} {'packed s':>9s} {'shared s':>9s} {'speed-up':>8s}"
        + (f" {'bf16 s':>7s} {'vs packed':>9s}" if bf16 is not None else "")
    )
    totals = [0.0, 0.0]
    for role in ROLES:
        samples, advantages = scored_samples(packed, role, vocab, rng, scale)
        lp_diff, grad_diff = differences(packed, samples)
        p_len = max(len(s.prompt_ids) for s in samples)
        r_len = max(len(s.response_ids) for s in samples)
        tokens_packed = len(samples) * (p_len + r_len)
        tokens_shared = sum(len(s.response_ids) for s in samples) + len({tuple(s.prompt_ids) for s in samples}) * p_len
        ways = [("packed", packed), ("shared", shared)] + ([("bf16", bf16)] if bf16 is not None else [])
        times: dict[str, list[float]] = {name: [] for name, _ in ways}
        for _ in range(args.repeats):
            for name, policy in ways:
                times[name].append(time_update(policy, samples, advantages))
        a, b = statistics.median(times["packed"]), statistics.median(times["shared"])
        extra = ""
        if bf16 is not None:
            c = statistics.median(times["bf16"])
            extra = f" {c:7.2f} {a / c:8.2f}x"
        totals[0] += a
        totals[1] += b
        print(
            f"{role:5s} {len(samples):4d} {tokens_packed:13d} {tokens_shared:13d} {lp_diff:11.2e} "
            f"{grad_diff:11.2e} {a:9.2f} {b:9.2f} {a / b:7.2f}x{extra}"
        )
    print(f"both roles: {totals[0]:.2f} s -> {totals[1]:.2f} s a step, {totals[0] / totals[1]:.2f}x on the learner")
    if not args.no_checkpoint:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            shared.save(Path(tmp) / "policy")
            seconds = time.perf_counter() - start
            size = sum(f.stat().st_size for f in (Path(tmp) / "policy").rglob("*") if f.is_file())
        print(
            f"checkpoint write of one policy: {seconds:.2f} s, {size / 1e9:.2f} GB "
            f"(a1 writes two; every train.checkpoint_every steps)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
