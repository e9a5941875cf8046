"""Peak memory and step time of one Code-A1-sized policy update, in three ways of holding the models.

One "Code-A1 step" here = a GRPO train_step of the code_policy and one of the test_policy, each on the
same synthetic batch (B samples of P prompt + R response tokens), with the KL term to the reference.
Modes (SmolLM2-135M by default):
  full-2ref  two full models, each with its own frozen reference copy (the naive layout)
  full-1ref  two full models sharing one frozen reference copy (both start from the same model)
  dual-lora  one frozen base with two LoRA adapters; the base with adapters disabled is the reference

Each mode runs in a fresh subprocess and reports its peak resident set size (ru_maxrss: the whole
process, torch import and all, which is what a user's machine must hold) and its peak minus the RSS
measured right after importing torch and transformers (the part the models and the update add).
Usage:  python benchmarks/policy_memory.py [--model smollm2-135m] [--batch 8] [--prompt 128] [--response 128]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

MODES = ("full-2ref", "full-1ref", "dual-lora")


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(args: argparse.Namespace) -> dict:
    import torch
    import transformers  # noqa: F401  (counted in the baseline)

    torch.set_num_threads(args.threads)
    base_rss = rss_mib()
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.dual import DualPolicy
    from codea1.rl.policy import Policy, PolicyConfig, Sample

    torch.manual_seed(0)
    common = {
        "lr": 1e-5,
        "kl_coef": 0.001,
        "dtype": args.dtype,
        "micro_batch_tokens": args.micro_batch_tokens,
        "warmup_steps": 0,
        "gradient_checkpointing": args.gradient_checkpointing,
    }
    t0 = time.perf_counter()
    if args.mode == "dual-lora":
        model, tok = load_model_and_tokenizer(args.model, dtype=args.dtype)
        dual = DualPolicy(model, tok, PolicyConfig(lora=True, **common))
        code_policy, test_policy = dual.code, dual.test
    else:
        m1, tok = load_model_and_tokenizer(args.model)
        m2, _ = load_model_and_tokenizer(args.model)
        code_policy = Policy(m1, tok, PolicyConfig(**common))
        shared = code_policy.reference if args.mode == "full-1ref" else None
        test_policy = Policy(m2, tok, PolicyConfig(**common), reference=shared)
    setup_s = time.perf_counter() - t0
    after_load = rss_mib()

    g = torch.Generator().manual_seed(1)
    vocab = len(tok)

    def batch() -> list:
        prompts = torch.randint(100, vocab - 1, (args.batch, args.prompt), generator=g).tolist()
        responses = torch.randint(100, vocab - 1, (args.batch, args.response), generator=g).tolist()
        return [Sample(p, r, "", [], True) for p, r in zip(prompts, responses, strict=False)]

    code_batch, test_batch = batch(), batch()
    adv = [(-1.0) ** i for i in range(args.batch)]
    times = []
    for _ in range(args.steps):
        t = time.perf_counter()
        code_policy.train_step(code_batch, adv)
        test_policy.train_step(test_batch, adv)
        times.append(time.perf_counter() - t)
    trainable = code_policy.num_trainable() + test_policy.num_trainable()
    return {
        "mode": args.mode,
        "peak_rss_mib": peak_mib(),
        "import_rss_mib": base_rss,
        "after_load_rss_mib": after_load,
        "setup_s": setup_s,
        "step_s": times[-1],
        "first_step_s": times[0],
        "trainable_params": trainable,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--batch", type=int, default=8, help="samples per policy per step")
    ap.add_argument("--prompt", type=int, default=128, help="prompt tokens per sample")
    ap.add_argument("--response", type=int, default=128, help="response tokens per sample")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument(
        "--micro-batch-tokens",
        type=int,
        default=1024,
        help="padded tokens per forward/backward micro-batch (same for every mode)",
    )
    ap.add_argument("--gradient-checkpointing", action="store_true")
    ap.add_argument("--steps", type=int, default=1, help="steps per mode (the last one is timed)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--child", metavar="MODE", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.mode = args.child
        print("RESULT " + json.dumps(child(args)))
        return

    results = []
    passthrough = [a for a in sys.argv[1:] if not a.startswith("--modes")]
    for mode in args.modes.split(","):
        env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
        out = subprocess.run(
            [sys.executable, __file__, *passthrough, "--child", mode],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        line = next((x for x in out.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            sys.exit(f"mode {mode} failed:\n{out.stderr[-3000:]}")
        results.append(json.loads(line[7:]))
        r = results[-1]
        print(f"  {mode}: peak {r['peak_rss_mib']:.0f} MiB, step {r['step_s']:.2f} s", flush=True)

    base = results[0]
    print(
        f"\nmodel={args.model} dtype={args.dtype} batch={args.batch}x({args.prompt}+{args.response}) "
        f"per policy, micro_batch_tokens={args.micro_batch_tokens}, "
        f"gradient_checkpointing={args.gradient_checkpointing}, threads={args.threads}"
    )
    print(
        f"{'mode':<10} {'peak RSS MiB':>12} {'ratio':>6} {'peak-import':>11} {'ratio':>6} {'step s':>7} "
        f"{'ratio':>6} {'trainable':>11}"
    )
    for r in results:
        added, base_added = r["peak_rss_mib"] - r["import_rss_mib"], base["peak_rss_mib"] - base["import_rss_mib"]
        print(
            f"{r['mode']:<10} {r['peak_rss_mib']:>12.0f} {r['peak_rss_mib'] / base['peak_rss_mib']:>6.2f} "
            f"{added:>11.0f} {added / base_added:>6.2f} {r['step_s']:>7.2f} {r['step_s'] / base['step_s']:>6.2f} "
            f"{r['trainable_params']:>11,}"
        )


if __name__ == "__main__":
    main()
