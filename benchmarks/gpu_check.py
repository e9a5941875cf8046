"""GPU check: rollout throughput of both engines and bf16 training steps, for a model built from a config.

For a machine with a CUDA device but no model weights at hand: the model is built from a Hugging Face
config with random weights (``--model-dir`` holds config.json and the tokenizer; SmolLM2-135M's by
default layout), which is enough for tokens/s and for the cost of a training step (both depend on the
architecture, not on the weights). Every row is forced to run ``--new-tokens`` tokens (EOS masked).

Prints, side by side in one run: ``hf-generate`` (``model.generate`` + the log-prob scoring pass) and
``loop`` (codea1's sampling loop) tokens/s at each batch size, under ``policy.dtype=bfloat16`` (autocast,
fp32 master weights, as the trainer runs); then the time, loss and peak memory of two GRPO training steps
on a batch of sampled rows with random advantages.
Then (docs/multi-node.md's layouts, issue of the data-parallel learners): a process group of one rank on
the device's backend (NCCL on a GPU) with codea1's collectives on tensors where that backend wants them
(`codea1.rl.distributed.collective_device`); FSDP2 on that one rank against the unsharded policy (same
loss and gradients); the learner at Qwen2.5-Coder-1.5B's shape with random weights, as measured before
(no checkpointing, no KL, the whole logits, foreach AdamW) and with the preset's own policy block
(checkpointing, the KL reference pass, chunked log-probs, fused AdamW) (tokens/s, model FLOPs utilisation
against --peak-tflops, peak memory allocated and reserved beside benchmarks/learner_memory.py's prediction
at the same shape, whether that fits an 80 GB card); and the weight-sync cost (the full state dict to the host, in
fp32 and in bf16, as a sync through host memory moves it). Then (benchmarks/gpu_sync_check.py) FSDP2 in
bf16: whether half gathers gather in bf16, and a sharded save and load against no round trip; and the
1.5B learner's full-weight sync into an engine's worker by each transfer (direct, CUDA IPC, file; two
roles one after the other and at once), every tensor checked. `--device cpu` runs every section on the CPU
(gloo, a 2-layer version of the 1.5B shape) to check the script itself (the sync by transfer needs CUDA).

Usage:  python benchmarks/gpu_check.py --model-dir DIR [--batches 1,16,64,256] [--new-tokens 128]
        [--skip-rollout] [--qwen-layers 28] [--peak-tflops 989]
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_sync_check import qwen_shape, shard_checks, sync_checks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True, help="a dir with config.json and tokenizer files")
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--train-rows", type=int, default=64)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="bfloat16", choices=("float32", "bfloat16"))
    ap.add_argument("--skip-rollout", action="store_true", help="only the distributed and learner sections")
    ap.add_argument(
        "--dist-layers", type=int, default=None, help="layers of --model-dir in the FSDP2 check (default: all)"
    )
    ap.add_argument("--qwen-layers", type=int, default=None, help="layers of the 1.5B shape (default 28; 2 on CPU)")
    ap.add_argument("--qwen-rows", type=int, default=16, help="rows of the 1.5B learner step")
    ap.add_argument("--qwen-tokens", type=int, default=1024, help="tokens per row of the 1.5B learner step")
    ap.add_argument("--qwen-group", type=int, default=8, help="rows per prompt in the 1.5B learner step (GRPO's n)")
    ap.add_argument(
        "--qwen-vocab", type=int, default=151936, help="vocabulary of the 1.5B shape (its own; smaller for a smoke run)"
    )
    ap.add_argument(
        "--peak-tflops", type=float, default=989.0, help="the device's dense bf16 peak (H100/H200 SXM: 989)"
    )
    ap.add_argument(
        "--weights-dir", default=None, help="the file transfer's folder (default: as rollout.vllm_weights_dir)"
    )
    args = ap.parse_args()
    vllm = importlib.util.find_spec("vllm")
    print(f"vLLM here: {'installed' if vllm else 'not installed (its sleep, wake and sync on a GPU are not checked)'}")
    if not args.skip_rollout:
        rollout_checks(args)
    distributed_checks(args)
    learner_checks(args)


def rollout_checks(args: argparse.Namespace) -> None:

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from codea1.inference.rollout import TransformersRollout
    from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

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
    # both engines sample as the trainer's do: under the policy's autocast on CUDA, in float32 on a CPU
    old = TransformersRollout(model, tok, policy.logprobs, engine="hf-generate", autocast=args.dtype)
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


def _tiny_batch(n_rows: int, tokens: int, vocab: int, seed: int = 0, group: int = 1) -> tuple[list, list]:
    """Training samples of random token ids: half prompt, half response, and random advantages; `group`
    rows share each prompt (GRPO samples several responses per prompt)."""
    import torch

    from codea1.inference.rollout import Sample

    g = torch.Generator().manual_seed(seed)
    half = max(1, tokens // 2)
    rows = []
    for k in range(n_rows):
        if k % group == 0:
            prompt = torch.randint(0, vocab, (half,), generator=g).tolist()
        response = torch.randint(0, vocab, (half,), generator=g).tolist()
        rows.append(Sample(prompt, response, "", [-1.0] * half, finished=True))
    rng = random.Random(seed)
    return rows, [rng.choice((-1.0, 1.0)) * rng.random() for _ in rows]


def distributed_checks(args: argparse.Namespace) -> None:
    """A process group of one rank on the device's backend, codea1's collectives on it, and FSDP2 on that
    rank against the unsharded policy."""
    import copy
    import tempfile

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from codea1.rl.distributed import DataParallel, collective_device, join
    from codea1.rl.policy import Policy, PolicyConfig

    cuda = args.device.startswith("cuda")
    backend = "nccl" if cuda else "gloo"
    with tempfile.TemporaryDirectory() as tmp:
        join(f"file://{tmp}/rendezvous", 0, 1, backend=backend)
        device = collective_device()
        t = torch.tensor([1.0, 2.0], dtype=torch.float64, device=device)
        torch.distributed.all_reduce(t)
        dp = DataParallel(0, 1)
        print(f"process group: {backend}, 1 rank; collectives on {device}: all_reduce {t.tolist()}", flush=True)
        config = AutoConfig.from_pretrained(args.model_dir)
        if args.dist_layers:
            config.num_hidden_layers = args.dist_layers
        tok = AutoTokenizer.from_pretrained(args.model_dir)
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        torch.manual_seed(0)
        base = AutoModelForCausalLM.from_config(config).to(args.device)
        cfg = PolicyConfig(kl_coef=0.0, lr=1e-4, warmup_steps=0, dtype="float32", shared_prompt=False)
        plain = Policy(base, tok, cfg)
        sharded = Policy(copy.deepcopy(base), tok, cfg)
        sharded.shard(dp)
        rows, advantages = _tiny_batch(min(8, args.train_rows), 64, config.vocab_size)
        m_plain = plain.train_step(rows, advantages)
        m_sharded = sharded.train_step(rows, advantages)
        diff = max(
            (p.detach().float() - q.full_tensor().detach().float()).abs().max().item()
            for p, q in zip(plain.model.parameters(), sharded.model.parameters(), strict=True)
        )
        print(
            f"FSDP2 on 1 rank vs unsharded: loss {m_sharded['loss']:.6f} vs {m_plain['loss']:.6f}, "
            f"grad norm {m_sharded['grad_norm']:.6f} vs {m_plain['grad_norm']:.6f}, weights after the "
            f"update differ by at most {diff:.2e}",
            flush=True,
        )
        shard_checks(base, tok, rows, advantages, dp, tmp)
        torch.distributed.destroy_process_group()


def learner_checks(args: argparse.Namespace) -> None:
    """The learner at Qwen2.5-Coder-1.5B's shape (random weights), two ways: the step measured before (no
    checkpointing, no KL, the whole logits, foreach AdamW) and the preset's own policy block
    (configs/qwen2.5-coder-1.5b.yaml: checkpointing, the KL reference pass, chunked log-probs, the AdamW
    it takes on CUDA), each peak beside benchmarks/learner_memory.py's prediction at the same shape; then
    the cost of a full-weight sync."""
    import torch
    from learner_memory import Batch, qwen_builder, run_step
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    from codea1.config import load_section
    from codea1.rl.policy import Policy, PolicyConfig

    cuda = args.device.startswith("cuda")
    layers = args.qwen_layers or (28 if cuda else 2)
    config = qwen_shape(layers, args.qwen_vocab)  # Qwen2.5-Coder-1.5B's config.json, random weights
    tok = AutoTokenizer.from_pretrained(args.model_dir)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    blocks = {
        "the step measured before (no checkpointing, no KL, whole logits, foreach AdamW)": PolicyConfig(
            kl_coef=0.0, lr=1e-6, warmup_steps=0, dtype=args.dtype, logprob_chunk=0, adamw_fused=False
        ),
        "the preset's policy block (qwen2.5-coder-1.5b)": load_section(
            "policy", "qwen2.5-coder-1.5b", [f"policy.dtype={args.dtype}"]
        ),
    }
    vocab = min(config.vocab_size, len(tok))
    policy = model = None
    for label, cfg in blocks.items():
        policy = model = None  # the step before's model and optimiser go before the next one is built
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        torch.manual_seed(0)
        model = Qwen2ForCausalLM(config).to(args.device)
        params = sum(p.numel() for p in model.parameters())
        policy = Policy(model, tok, cfg)
        rows, advantages = _tiny_batch(args.qwen_rows, args.qwen_tokens, vocab, group=args.qwen_group)
        tokens = sum(len(r.prompt_ids) + len(r.response_ids) for r in rows)
        for step in (1, 2):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            policy.train_step(rows, advantages)
            if cuda:
                torch.cuda.synchronize()
            dt = time.perf_counter() - t0
        mfu = 6 * params * tokens / dt / (args.peak_tflops * 1e12)
        line = (
            f"learner at Qwen2.5-Coder-1.5B's shape, {label} ({layers} layers, vocabulary {config.vocab_size}, "
            f"{params / 1e9:.2f}B params, {cfg.dtype}): {args.qwen_rows} rows ({args.qwen_group} per prompt) x "
            f"{args.qwen_tokens} tokens in {dt:.2f}s ({tokens / dt:.0f} tokens/s, MFU {100 * mfu:.1f}% of "
            f"{args.peak_tflops:g} TFLOPS)"
        )
        half = args.qwen_tokens // 2
        batch = Batch(args.qwen_rows, half, half, group=args.qwen_group)
        predicted = run_step(qwen_builder(layers, config.vocab_size), cfg, batch, fake=True, cuda_optimizer=cuda)
        line += f"; predicted peak {predicted['counter']:.1f} GiB ({predicted['phase']})"
        if cuda:
            peak, reserved = torch.cuda.max_memory_allocated() / 2**30, torch.cuda.max_memory_reserved() / 2**30
            line += (
                f", measured {peak:.1f} GiB allocated ({peak / predicted['counter']:.3f}x the prediction), "
                f"{reserved:.1f} GiB reserved (fits 80 GB: {'yes' if reserved < 74.5 else 'no'})"
            )
        print(line, flush=True)
    for dtype in (torch.float32, torch.bfloat16):
        if cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        host = {k: v.detach().to("cpu", dtype=dtype) for k, v in policy.model.state_dict().items()}
        dt = time.perf_counter() - t0
        size = sum(v.numel() * v.element_size() for v in host.values()) / 2**30
        print(f"weight sync through host memory, {str(dtype)[6:]}: {size:.2f} GiB in {dt:.2f}s", flush=True)
    sync_checks(dict(policy.model.state_dict()), args.device, weights_dir=args.weights_dir)


if __name__ == "__main__":
    main()
