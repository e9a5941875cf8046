"""Data-parallel learners: one policy's update spread over the ranks of a torch.distributed process group
(gloo on CPU, NCCL on GPUs), in one of two layouts:

- **replicated** (DDP's layout): each rank holds the full weights and optimiser state; after the backward
  passes the gradients are summed over the ranks (`all_reduce_grads`), so the replicas stay equal;
- **sharded** (FSDP2, `torch.distributed.fsdp.fully_shard`; `placement.fsdp`): each decoder block and the
  root are sharded, so each rank keeps 1/world_size of the fp32 weights, gradients and AdamW state;
  the blocks are gathered for each forward and backward and the gradients reduce-scattered. Each rank
  keeps a full replica to sample its share of the prompts from (rank 0's is saved), refreshed parameter
  by parameter after every update (`stream_full_weights`).

Every rank is handed the same update (all samples, all advantages: plain records from the one controller
loop) and runs the forward and backward passes of its own share (`shard`: every world_size-th sample of
each mini-batch). The loss keeps the whole mini-batch's denominators (tokens, sequences, the norm
constant), so the summed gradients are those of one rank doing all the work; the grad-norm clip and the
optimiser step then run alike on every rank. Metrics are summed the same way. Sharded ranks must run as
many forward/backward passes as each other (each pass gathers the blocks): a rank with fewer
micro-batches runs zero-weighted ones (`micro_batch_count`). Checkpoints hold full tensors in the
single-process format whatever the layout, so a run saved by N ranks resumes on M
(`optimizer_state_by_index` / `optimizer_state_by_name`). Tested on CPU with gloo
(tests/test_data_parallel_on_cpu.py): 2 ranks give 1 rank's loss, grad norm and weights, in both layouts.
"""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import torch


@dataclass
class DataParallel:
    """This process's place in a data-parallel group of one policy."""

    rank: int
    world_size: int
    group: torch.distributed.ProcessGroup | None = None  # None: the default group

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
        for p, g in zip(params, grads, strict=True):
            n = g.numel()
            p.grad = flat[offset : offset + n].view_as(g).to(g.dtype)
            offset += n

    def all_reduce_sum(self, values: Sequence[float]) -> list[float]:
        """Sums numbers over the ranks."""
        if self.world_size == 1:
            return [float(v) for v in values]
        t = torch.tensor([float(v) for v in values], dtype=torch.float64, device=collective_device(self.group))
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM, group=self.group)
        return t.cpu().tolist()

    def micro_batch_count(self, mine: int) -> int:
        """The most micro-batches any rank has for this mini-batch (sharded ranks all run that many)."""
        if self.world_size == 1:
            return mine
        t = torch.tensor([mine], dtype=torch.int64, device=collective_device(self.group))
        torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX, group=self.group)
        return int(t.item())


# ------------------------------------------------------------------------------------- FSDP2 (sharded)


def block_types(model: torch.nn.Module) -> set[type]:
    """The classes of a transformers model's repeated blocks (its `_no_split_modules`), the unit FSDP
    gathers at a time; none found: the model is sharded as one unit."""
    names = set(getattr(model, "_no_split_modules", None) or [])
    return {type(m) for m in model.modules() if type(m).__name__ in names}


def fully_shard_model(
    model: torch.nn.Module,
    group: torch.distributed.ProcessGroup | None = None,
    compute_dtype: str | None = None,
    device: str | None = None,
) -> torch.nn.Module:
    """Shards `model` in place with FSDP2: each block, then the root (the embeddings, the final norm and
    a tied or separate head). Parameters become DTensors holding this rank's shard; their names stay.
    compute_dtype ("bfloat16", "float16"): the gathered parameters are cast to it, so the all-gathers move
    half the bytes and the passes compute in it, while the shards, the AdamW state and the gradients'
    reduction stay in float32 (FSDP2's MixedPrecisionPolicy); None: everything in the shards' dtype.
    device ("cuda", "cpu"): the mesh's device type (default: where the parameters are)."""
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    device = device or ("cuda" if next(model.parameters()).is_cuda else "cpu")
    mesh = DeviceMesh.from_group(group, device) if group is not None else None  # None: the default group
    kinds = tuple(block_types(model))
    options: dict[str, Any] = {"mesh": mesh}
    if compute_dtype is not None:
        options["mp_policy"] = MixedPrecisionPolicy(
            param_dtype=getattr(torch, compute_dtype), reduce_dtype=torch.float32
        )
    for module in list(model.modules()):
        if kinds and isinstance(module, kinds):
            fully_shard(module, **options)
    fully_shard(model, **options)
    return model


def is_sharded(model: torch.nn.Module) -> bool:
    from torch.distributed.fsdp import FSDPModule

    return isinstance(model, FSDPModule)


def local_numel(tensors: Iterable[Any]) -> int:
    """Elements this rank holds of `tensors` (a DTensor's local shard, or the whole tensor)."""
    return sum((t.to_local() if hasattr(t, "to_local") else t).numel() for t in tensors)


def local_sum(tensors: Iterable[Any]) -> float:
    """The sum of the elements this rank holds of `tensors` (a DTensor's local shard: no collective)."""
    return float(sum(float((t.to_local() if hasattr(t, "to_local") else t).detach().double().sum()) for t in tensors))


def full_value(t: torch.Tensor) -> torch.Tensor:
    """A DTensor's whole value (a collective: every rank of its mesh calls it), or the tensor itself."""
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def broadcast_from_rank0(module: torch.nn.Module, state: Mapping[str, torch.Tensor], dp: DataParallel) -> None:
    """Rank 0's full weights (`state`; the other ranks pass {}) into a sharded module on every rank, each
    rank taking its shards as they arrive, then every buffer (rotary tables and the like, which no state
    dict holds and which a module built on the meta device lacks) broadcast whole."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

    own = {n for n, _ in module.named_parameters()} | {n for n, _ in module.named_buffers()}
    set_model_state_dict(
        module,
        {k: v for k, v in state.items() if k in own},
        options=StateDictOptions(full_state_dict=True, strict=False, broadcast_from_rank0=True),
    )
    src = torch.distributed.get_global_rank(dp.group, 0) if dp.group is not None else 0
    for _, buf in module.named_buffers():
        torch.distributed.broadcast(buf, src=src, group=dp.group)


def stream_full_weights(sharded: torch.nn.Module, replica: torch.nn.Module | None) -> None:
    """Copies a sharded model's weights into this rank's full replica, one parameter at a time (every rank
    takes part in each gather; a rank without a replica only helps the others)."""
    target = dict(replica.named_parameters()) if replica is not None else {}
    with torch.no_grad():
        for name, param in sharded.named_parameters():
            full = full_value(param.detach())
            if replica is not None:
                target[name].copy_(full.to(target[name].device, target[name].dtype))


def _rekeyed(state: Mapping[str, Any], key: Callable[[Any], Any]) -> dict[str, Any]:
    """An optimiser state with every parameter key (in its state and its groups) mapped through `key`."""
    groups = [{**group, "params": [key(p) for p in group["params"]]} for group in state["param_groups"]]
    return {"state": {key(p): v for p, v in state["state"].items()}, "param_groups": groups}


def optimizer_state_by_index(state: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """A full optimiser state keyed by parameter names (torch.distributed.checkpoint's form) in the
    single-process form of `Optimizer.state_dict()`: parameters numbered in `names`' order."""
    index = {name: i for i, name in enumerate(names)}
    return _rekeyed(state, index.__getitem__)


def optimizer_state_by_name(state: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The inverse of `optimizer_state_by_index`."""
    return _rekeyed(state, lambda i: names[int(i)])


T = TypeVar("T")
T = TypeVar("T")
JOIN_TIMEOUT_S = 600  # a collective waiting longer than this for a rank that is gone raises
# how long the other ranks wait for rank 0 to read a checkpoint (off any collective, so that NCCL's
# watchdog, which fires at JOIN_TIMEOUT_S, never sees the wait): 91 GB at 20 MB/s
RANK0_WORK_TIMEOUT_S = 6 * 3600
_RANK0_CALLS = itertools.count()


def rank0_first(
    dp: DataParallel, work: Callable[[], T], *, key: str, timeout_s: float = RANK0_WORK_TIMEOUT_S
) -> T | None:
    """Runs `work` on rank 0 alone while the other ranks wait for it on the process group's key-value store
    (no collective in flight), then returns its result on rank 0 and None elsewhere. A checkpoint read by
    rank 0 from slow storage (a 7B model's 91 GB at 150 MB/s is 10 minutes) otherwise holds the other ranks
    in a collective past the watchdog's timeout, which ends the run. `key` names this wait (unique per
    call); an error on rank 0 still releases the others, which then learn of it in the caller's next
    collective."""
    if dp.world_size == 1:
        return work()
    store = torch.distributed.distributed_c10d._get_default_store()
    done = f"codea1/rank0_first/{next(_RANK0_CALLS)}/{key}"  # every rank makes these calls in one order
    if dp.rank == 0:
        try:
            return work()
        finally:
            store.set(done, "1")
    store.wait([done], datetime.timedelta(seconds=timeout_s))
    return None


def join(
    init_method: str, rank: int, world_size: int, backend: str | None = None, timeout_s: float = JOIN_TIMEOUT_S
) -> DataParallel:
    """Joins (or starts) the process group and returns this rank's DataParallel; backend: gloo on CPU,
    nccl where CUDA is available (by default).

    A group that already exists must be this one: an in-process engine (vLLM) that set torch.distributed
    up for itself leaves a world of 1, and joining it would train world_size separate models without a
    word (the gradients never summed). That is refused; the learner's group must come first."""

    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if torch.distributed.is_initialized():
        have = (torch.distributed.get_rank(), torch.distributed.get_world_size())
        if have != (rank, world_size):
            raise RuntimeError(
                f"torch.distributed is already set up in this process as rank {have[0]} of {have[1]}, not as "
                f"data-parallel rank {rank} of {world_size}: something (an in-process vLLM engine, say) made "
                "its own group first; the learners' group must be made before any engine is built"
            )
    else:
        torch.distributed.init_process_group(
            backend,
            init_method=init_method,
            rank=rank,
            world_size=world_size,
            timeout=datetime.timedelta(seconds=timeout_s),
        )
    return DataParallel(rank, world_size)


def collective_device(group: torch.distributed.ProcessGroup | None = None) -> torch.device:
    """Where a collective's tensors must live: a NCCL group reduces CUDA tensors only (a CPU tensor fails
    with "No backend type associated with device type cpu"), gloo CPU tensors."""
    backend = torch.distributed.get_backend(group)
    if str(backend).lower() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
