"""One rank of the data-parallel tests (tests/test_data_parallel_on_cpu.py): a tiny policy takes two GRPO
updates on fixed samples, its share of the work on this rank (replicated, or sharded with --fsdp), and
rank 0 saves the metrics, the full weights, the rows its training passes computed, what this rank holds of
the weights and optimiser state, and a sample drawn after the updates (OUT.RANK). --load starts from a
checkpoint, --save writes one after the updates.

    python tests/dp_worker.py OUT RANK WORLD_SIZE INIT_FILE [--fsdp] [--kl K] [--dtype D] [--load DIR] [--save DIR]
"""

from __future__ import annotations

import argparse

import torch

from codea1.models import load_model_and_tokenizer, load_model_skeleton
from codea1.rl import policy as policy_module
from codea1.rl.distributed import join, local_numel
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

PROMPTS = [
    [{"role": "user", "content": "Two plus two?"}],
    [{"role": "user", "content": "Write 7."}],
    [{"role": "user", "content": "def f(x):"}],
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("rank", type=int)
    ap.add_argument("world", type=int)
    ap.add_argument("init")
    ap.add_argument("--fsdp", action="store_true")
    ap.add_argument("--half-gathers", action="store_true")
    ap.add_argument("--kl", type=float, default=0.0)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--load")
    ap.add_argument("--save")
    ap.add_argument(
        "--rank0-reads", action="store_true", help="reading the checkpoint's weights or AdamW state fails off rank 0"
    )
    ap.add_argument(
        "--from-rank0", action="store_true", help="ranks but 0 build the model on the meta device and take rank 0's"
    )
    ap.add_argument("--slow-read", type=float, default=0.0, help="rank 0 takes this many seconds more to read")
    ap.add_argument("--timeout", type=float, default=None, help="the process group's collective timeout (s)")
    args = ap.parse_args()
    if args.slow_read and args.rank == 0:
        import time

        import safetensors.torch

        load_file = safetensors.torch.load_file

        def slow(*a, **k):
            time.sleep(args.slow_read)
            return load_file(*a, **k)

        safetensors.torch.load_file = slow
    if args.rank0_reads and args.rank != 0:
        import safetensors.torch

        def refused(*a, **k):
            raise AssertionError(f"rank {args.rank} read a checkpoint's weights: {a[:1]}")

        torch_load = torch.load
        safetensors.torch.load_file = refused
        torch.load = lambda f, *a, **k: refused(f) if str(f).endswith("optimizer.pt") else torch_load(f, *a, **k)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    skeleton = args.from_rank0 and args.rank != 0
    model, tok = load_model_skeleton("tiny-random") if skeleton else load_model_and_tokenizer("tiny-random")
    cfg = PolicyConfig(
        lr=1e-3,
        warmup_steps=0,
        weight_decay=0.0,
        mini_batches=2,
        micro_batch_tokens=40,
        kl_coef=args.kl,
        dtype=args.dtype,
    )
    policy = Policy(model, tok, cfg)
    assert all(p.is_meta for p in policy.model.parameters()) == skeleton
    if args.world > 1:
        timeout = {} if args.timeout is None else {"timeout_s": args.timeout}
        dp = join(f"file://{args.init}", args.rank, args.world, backend="gloo", **timeout)
        if args.fsdp:
            policy.shard(dp, half_gathers=args.half_gathers, from_rank0=args.from_rank0, device="cpu")
        else:
            policy.data_parallel = dp
    # sampled after sharding: the replica samples (on a rank built on the meta device, from rank 0's weights)
    samples = [s for row in policy.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=8, seed=1)) for s in row]
    advantages = [((i * 7) % 5 - 2) / 2 for i in range(len(samples))]
    if args.load:
        policy.load(args.load)
    rows = []  # the rows this rank's training forward passes computed
    forward = policy_module.forward_logprobs

    def counting(model, batch, **kwargs):
        if kwargs.get("with_entropy"):  # the training pass (scoring passes do not ask for entropy)
            rows.append(int(batch.input_ids.shape[0]))
        return forward(model, batch, **kwargs)

    shared_forward = policy_module.forward_shared_prompt_logprobs

    def counting_shared(model, prompt, responses, pad_id, **kwargs):
        if kwargs.get("with_entropy"):
            rows.append(len(responses))
        return shared_forward(model, prompt, responses, pad_id, **kwargs)

    policy_module.forward_logprobs = counting
    policy_module.forward_shared_prompt_logprobs = counting_shared
    gathered = set()  # the dtypes of a block's weights while it computes (gathered, for a sharded model)
    block = policy.model.model.layers[0]
    hook = block.register_forward_pre_hook(lambda m, a: gathered.add(str(m.self_attn.q_proj.weight.dtype)))
    metrics = [policy.train_step(samples, advantages) for _ in range(2)]
    hook.remove()
    policy_module.forward_logprobs = forward
    policy_module.forward_shared_prompt_logprobs = shared_forward
    if args.save:
        policy.save(args.save)
    held = {
        "weights": local_numel(policy.model.parameters()),
        "optimizer": local_numel(v for s in policy.optimizer.state.values() for v in s.values() if v.dim() > 0),
    }
    shard_dtypes = sorted({str(p.dtype) for p in policy.model.parameters()})
    record = {"metrics": metrics, "rows": sum(rows), "held": held, "gathered": sorted(gathered), "shards": shard_dtypes}
    if args.rank == 0 or not policy.sharded:  # (sharded: rank 0's replica holds the full weights)
        record["state"] = {k: v.detach().clone() for k, v in policy.engine_weights().items()}
    if args.rank == 0:
        record["sample"] = [s.response_ids for s in policy.generate(PROMPTS[:2], GenerationConfig(n=2, seed=5))[0]]
    torch.save(record, f"{args.out}.{args.rank}")
    if args.world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
