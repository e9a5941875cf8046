"""Data-parallel learners: one policy's update spread over the ranks of a torch.distributed process group
(gloo on CPU, NCCL on GPUs), each rank holding a full replica of the weights (DDP's layout; sharding the
weights and optimiser state, FSDP2, is not done yet).

Every rank is handed the same update (all samples, all advantages: plain records from the one controller
loop) and runs the forward and backward passes of its own share (`shard`: every world_size-th sample of
each mini-batch). The loss keeps the whole mini-batch's denominators (tokens, sequences, the norm
constant), so after the gradients are summed over the ranks (`all_reduce_grads`) they are those of one
rank doing all the work; the grad-norm clip and the optimiser step then run alike on every rank and the
replicas stay equal. Metrics are summed the same way. Tested on CPU with gloo: 2 ranks give 1 rank's
loss, grad norm and weights (tests/test_data_parallel_on_cpu.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class DataParallel:
    """This process's place in a data-parallel group of one policy."""

    rank: int
    world_size: int
    group: Any = None  # a torch.distributed process group (None: the default group)

    def __post_init__(self) -> None:
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise ValueError(f"data-parallel rank {self.rank} of {self.world_size}")

    def shard(self, indices: Sequence[int]) -> list[int]:
        """This rank's share of a mini-batch: every world_size-th index, starting at its rank."""
        return list(indices)[self.rank :: self.world_size]

    def all_reduce_grads(self, params: Sequence[torch.Tensor]) -> None:
        """Sums every parameter's gradient over the ranks, in one flat buffer (a missing gradient is 0)."""
        if self.world_size == 1:
            return
        grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
        flat = torch.cat([g.reshape(-1).float() for g in grads])
        torch.distributed.all_reduce(flat, op=torch.distributed.ReduceOp.SUM, group=self.group)
        offset = 0
        for p, g in zip(params, grads):
            n = g.numel()
            p.grad = flat[offset : offset + n].view_as(g).to(g.dtype)
            offset += n

    def all_reduce_sum(self, values: Sequence[float]) -> list[float]:
        """Sums numbers over the ranks."""
        if self.world_size == 1:
            return [float(v) for v in values]
        t = torch.tensor([float(v) for v in values], dtype=torch.float64)
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM, group=self.group)
        return t.tolist()


JOIN_TIMEOUT_S = 600  # a collective waiting longer than this for a rank that is gone raises


def join(init_method: str, rank: int, world_size: int, backend: str | None = None) -> DataParallel:
    """Joins (or starts) the process group and returns this rank's DataParallel; backend: gloo on CPU,
    nccl where CUDA is available (by default)."""
    import datetime

    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(
            backend,
            init_method=init_method,
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=JOIN_TIMEOUT_S),
        )
    return DataParallel(rank, world_size)
