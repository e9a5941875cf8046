"""How a learner's full weights reach the workers of a vLLM engine, fastest first.

- ``direct``: the workers live in the learner's process (vLLM's in-process engine,
  VLLM_ENABLE_V1_MULTIPROCESSING=0, one worker). The (name, tensor) pairs wait in a process-local mailbox
  under a fresh key; only the key crosses `collective_rpc`, and the worker loads the learner's own tensors
  where they are (on the GPU: no copy to the host, no file).
- ``ipc``: CUDA tensors, and workers in other processes of the same machine that see the learner's GPU (an
  engine in a process of its own beside the learner, as in a data-parallel rank). Each tensor crosses as
  its CUDA IPC handle, spelled in plain values (names, integers, bytes) that vLLM's message encoder carries;
  each worker opens the learner's memory on the GPU the handle names (by the device's UUID, so that a
  worker with other visible devices finds it) and copies from it. The learner keeps the tensors alive
  until every worker has returned.
- ``file``: anything else (another machine, CPU tensors out of process): one safetensors file in a folder
  checked for room first (codea1.inference.vllm_backend.weights_folder).

`choose_transfer` picks one from where the workers say they are (`where_am_i`, run in each worker).
Nothing here imports vLLM; the worker's end is codea1.inference.vllm_worker.
"""

from __future__ import annotations

import contextlib
import os
import socket
import uuid
from collections.abc import Iterator, Sequence

import torch
from torch.multiprocessing.reductions import rebuild_cuda_tensor, reduce_tensor

from codea1.errors import UserError

TRANSFERS = ("auto", "direct", "ipc", "file")

# key -> (name, tensor) pairs posted by the learner for a worker in this same process
_MAILBOX: dict[str, list[tuple[str, torch.Tensor]]] = {}


def machine_id() -> str:
    """This machine, as two processes on it agree and two machines do not (the host name alone can repeat
    across containers): the host name and the kernel's boot id."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
    except OSError:
        boot = ""
    return f"{socket.gethostname()}/{boot}"


def device_uuid(device: int | str | torch.device) -> str:
    """A CUDA device's UUID: the same GPU whatever index a process's visible devices give it."""
    return str(torch.cuda.get_device_properties(device).uuid)


def visible_gpus() -> list[str]:
    """The UUIDs of the CUDA devices this process sees, in its own index order (empty without CUDA)."""
    if not torch.cuda.is_available():
        return []
    return [device_uuid(i) for i in range(torch.cuda.device_count())]


def where_am_i() -> list:
    """[machine, process id, visible GPU UUIDs]: what a worker answers so that the learner can choose."""
    return [machine_id(), os.getpid(), visible_gpus()]


def choose_transfer(configured: str, workers: Sequence[Sequence], weights_gpu: str | None) -> str:
    """The transfer for an engine whose workers answered `where_am_i` with `workers`, for weights on the
    GPU with UUID `weights_gpu` (None: on the CPU). `configured` is rollout.vllm_weight_transfer: auto picks
    the fastest that can work; a named one that cannot is refused in one sentence."""
    if configured not in TRANSFERS:
        raise UserError(f"rollout.vllm_weight_transfer {configured!r}: choose one of {', '.join(TRANSFERS)}")
    here, pid = machine_id(), os.getpid()
    direct = bool(workers) and all(w[0] == here and int(w[1]) == pid for w in workers)
    ipc = weights_gpu is not None and bool(workers) and all(w[0] == here and weights_gpu in list(w[2]) for w in workers)
    if configured == "auto":
        return "direct" if direct else "ipc" if ipc else "file"
    if configured == "direct" and not direct:
        raise UserError(
            "rollout.vllm_weight_transfer direct needs the engine's workers in the learner's process "
            "(VLLM_ENABLE_V1_MULTIPROCESSING=0, tensor parallel size 1); this engine's are not: use auto"
        )
    if configured == "ipc" and not ipc:
        raise UserError(
            "rollout.vllm_weight_transfer ipc needs the learner's weights on a GPU that every engine worker on "
            "this machine sees; here they are not: use auto"
        )
    return configured


def cast_pairs(weights: Sequence[tuple[str, torch.Tensor]], dtype: str | None) -> list[tuple[str, torch.Tensor]]:
    """The pairs as the engine takes them: detached, floating tensors cast to the engine's dtype where it
    is given (on their own device), everything contiguous."""
    cast = getattr(torch, dtype) if dtype else None
    out = []
    for name, tensor in weights:
        t = tensor.detach()
        if cast is not None and t.is_floating_point() and t.dtype != cast:
            t = t.to(cast)
        out.append((name, t.contiguous()))
    return out


@contextlib.contextmanager
def posted(pairs: list[tuple[str, torch.Tensor]]) -> Iterator[str]:
    """Leaves `pairs` in this process's mailbox for the length of the block; yields their key."""
    key = uuid.uuid4().hex
    _MAILBOX[key] = pairs
    try:
        yield key
    finally:
        _MAILBOX.pop(key, None)


def collect(key: str) -> list[tuple[str, torch.Tensor]]:
    """The pairs posted under `key` (a worker's end of ``direct``); a worker in another process finds none,
    and says so."""
    pairs = _MAILBOX.get(key)
    if pairs is None:
        raise RuntimeError(
            f"no weights were posted under {key} in process {os.getpid()}: a direct transfer needs the "
            "worker in the learner's process"
        )
    return pairs


def share_cuda(pairs: Sequence[tuple[str, torch.Tensor]]) -> list[list]:
    """Each CUDA tensor's IPC handle in plain values: [name, size, stride, offset, dtype name, device UUID,
    handle, storage bytes, storage offset, ref-counter handle, ref-counter offset, event handle, event sync].
    The caller keeps the tensors alive until every receiver has copied from them."""
    uuids: dict[int, str] = {}
    out = []
    for name, tensor in pairs:
        if not tensor.is_cuda:
            raise ValueError(f"{name} is on {tensor.device}: only CUDA tensors cross as IPC handles")
        _, args = reduce_tensor(tensor)
        (_, size, stride, offset, _, dtype, device, handle, nbytes, byte_offset, _, ref, ref_offset, event, sync) = args
        if device not in uuids:
            uuids[device] = device_uuid(device)
        out.append(
            [name, list(size), list(stride), int(offset), str(dtype).removeprefix("torch."), uuids[device]]
            + [handle, int(nbytes), int(byte_offset), ref, int(ref_offset), event, bool(sync)]
        )
    return out


def release_shared() -> None:
    """Frees the blocks this process shared whose receivers have let them go (torch keeps a shared block
    until then; `torch.cuda.ipc_collect`)."""
    if torch.cuda.is_available():
        torch.cuda.ipc_collect()


def open_cuda(shared: Sequence[Sequence]) -> list[tuple[str, torch.Tensor]]:
    """The tensors `share_cuda` described, opened in this process (views of the sender's memory, on the
    local index of the GPU its UUID names)."""
    local = {u: i for i, u in enumerate(visible_gpus())}
    out = []
    for name, size, stride, offset, dtype, gpu, handle, nbytes, byte_offset, ref, ref_offset, event, sync in shared:
        if gpu not in local:
            raise RuntimeError(f"{name} lives on GPU {gpu}, which this process does not see")
        tensor = rebuild_cuda_tensor(
            torch.Tensor,
            torch.Size(size),
            tuple(stride),
            offset,
            torch.storage.TypedStorage,  # as reduce_tensor names the storage of a tensor
            getattr(torch, dtype),
            local[gpu],
            handle,
            nbytes,
            byte_offset,
            False,
            ref,
            ref_offset,
            event,
            sync,
        )
        out.append((name, tensor))
    return out
