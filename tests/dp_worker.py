"""One rank of the data-parallel test (tests/test_data_parallel_on_cpu.py): a tiny policy takes two GRPO
updates on fixed samples, its share of the work on this rank, and rank 0 saves the metrics, the weights and
the rows its training passes computed (OUT.RANK).

    python tests/dp_worker.py OUT RANK WORLD_SIZE INIT_FILE
"""

from __future__ import annotations

import sys

import torch

from codea1.models import load_model_and_tokenizer
from codea1.rl import policy as policy_module
from codea1.rl.distributed import join
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

PROMPTS = [
    [{"role": "user", "content": "Two plus two?"}],
    [{"role": "user", "content": "Write 7."}],
    [{"role": "user", "content": "def f(x):"}],
]


def main() -> None:
    out, rank, world, init = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    cfg = PolicyConfig(lr=1e-3, warmup_steps=0, weight_decay=0.0, mini_batches=2, micro_batch_tokens=40, kl_coef=0.0)
    policy = Policy(model, tok, cfg)
    samples = [s for row in policy.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=8, seed=1)) for s in row]
    advantages = [((i * 7) % 5 - 2) / 2 for i in range(len(samples))]
    if world > 1:
        policy.data_parallel = join(f"file://{init}", rank, world, backend="gloo")
    rows = []  # the rows this rank's training forward passes computed
    forward = policy_module.forward_logprobs

    def counting(model, batch, **kwargs):
        if kwargs.get("with_entropy"):  # the training pass (scoring passes do not ask for entropy)
            rows.append(int(batch.input_ids.shape[0]))
        return forward(model, batch, **kwargs)

    policy_module.forward_logprobs = counting
    metrics = [policy.train_step(samples, advantages) for _ in range(2)]
    torch.save({"metrics": metrics, "state": policy.model.state_dict(), "rows": sum(rows)}, f"{out}.{rank}")
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
