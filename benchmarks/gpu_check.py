"""GPU check: rollout throughput of both engines and bf16 training steps, for a model built from a config.

For a machine with a CUDA device but no model weights at hand: the model is built from a Hugging Face
config with random weights (``--model-dir`` holds config.json and the tokenizer; SmolLM2-135M's by
default layout), which is enough for tokens/s and for the cost of a training step (both depend on the
architecture, not on the weights). Every row is forced to run ``--new-tokens`` tokens (EOS masked).

Prints, side by side in one run: ``hf-generate`` (``model.generate`` + the log-prob scoring pass) and
``loop`` (codea1's sampling loop) tokens/s at each batch size, under ``policy.dtype=bfloat16`` (autocast,
fp32 master weights, as the trainer runs); then the time, loss and peak memory of two GRPO training steps
on a batch of sampled rows with random advantages.
Usage:  python benchmarks/gpu_check.py --model-dir DIR [--batches 1,16,64,256] [--new-tokens 128]
"""

from __future__ import annotations

import argparse
import random
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True, help="a dir with config.json and tokenizer files")
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--train-rows", type=int, default=64)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    args = ap.parse_args()

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig
    from codea1.rl.rollout import TransformersRollout

    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(args.model_dir)
    model = AutoModelForCausalLM.from_config(config).to(args.device)
    tok = AutoTokenizer.from_pretrained(args.model_dir)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    params = sum(p.numel() for p in model.parameters())
    print(
        f"device={name} torch={torch.__version__} params={params / 1e6:.1f}M dtype={args.dtype} "
        f"new_tokens={args.new_tokens} (random weights from {config.model_type} config)",
        flush=True,
    )
    policy = Policy(model, tok, PolicyConfig(kl_coef=0.0, dtype=args.dtype, lr=1e-6, warmup_steps=0))
    new = policy.rollout
    old = TransformersRollout(model, tok, policy.logprobs, engine="hf-generate")
    eos = sorted(new.eos_ids())

    def no_eos(_module, _inputs, output):
        output[..., eos] = float("-inf")
        return output

    hook = model.get_output_embeddings().register_forward_hook(no_eos)
    prompt = [
        {
            "role": "user",
            "content": "Write a Python function `is_palindrome(s: str) -> bool` that ignores "
            "case and non-alphanumeric characters. Put the code in one ```python "
            "block.",
        }
    ]

    def sync() -> None:
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()

    def timed(backend, b: int) -> tuple[int, float, list]:
        best = None
        for r in range(2):
            sync()
            t0 = time.perf_counter()
            with policy._autocast():
                rows = backend.generate(
                    [prompt], GenerationConfig(n=b, max_new_tokens=args.new_tokens, seed=r, rows_per_call=b)
                )
            sync()
            dt = time.perf_counter() - t0
            tokens = sum(len(s.response_ids) for s in rows[0])
            if best is None or dt < best[1]:
                best = (tokens, dt, rows[0])
        return best

    for backend in (old, new):
        backend.generate([prompt], GenerationConfig(n=2, max_new_tokens=8, rows_per_call=2))
    print(f"{'batch':>5} {'hf-generate tok/s':>18} {'loop tok/s':>11} {'loop/hf':>8}", flush=True)
    for b in [int(x) for x in args.batches.split(",")]:
        t_old, d_old, _ = timed(old, b)
        t_new, d_new, _ = timed(new, b)
        print(
            f"{b:>5} {t_old / d_old:>18.1f} {t_new / d_new:>11.1f} {(t_new / d_new) / (t_old / d_old):>7.2f}x",
            flush=True,
        )

    hook.remove()
    rows = new.generate(
        [prompt],
        GenerationConfig(n=args.train_rows, max_new_tokens=args.new_tokens, seed=7, rows_per_call=args.train_rows),
    )[0]
    rng = random.Random(0)
    advantages = [rng.choice((-1.0, 1.0)) * rng.random() for _ in rows]
    if args.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    for step in (1, 2):
        sync()
        t0 = time.perf_counter()
        metrics = policy.train_step(rows, advantages)
        sync()
        dt = time.perf_counter() - t0
        tokens = sum(len(s.prompt_ids) + len(s.response_ids) for s in rows)
        shown = {k: round(float(v), 5) for k, v in metrics.items() if k in ("loss", "pg_loss", "grad_norm", "entropy")}
        print(
            f"train step {step}: {len(rows)} rows, {tokens} tokens, {dt:.2f}s ({tokens / dt:.0f} tokens/s) {shown}",
            flush=True,
        )
    if args.device.startswith("cuda"):
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
