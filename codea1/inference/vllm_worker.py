"""The weight-sync end inside vLLM's workers: a worker extension (vLLM's `worker_extension_cls`), so that
`LLM.collective_rpc(method, args=...)` runs in every worker of the engine, in this process or in the
engine's own processes, with any tensor parallelism. What crosses is plain: a key, IPC handles spelled in
names, integers and bytes, or a folder's path (codea1.inference.weight_transfer says which when); never a
closure (vLLM's workers refuse a pickled one) and never a tensor (vLLM's message encoder delivers a tensor in
an RPC's arguments as an encoded list, which crashed the sync on the real engine). Each worker loads the
weights through its own `reload_weights` (the model runner's, inside the worker's vLLM config context), which
keeps the shard of each tensor its rank holds and processes the weights as a first load does.
Imports nothing of vLLM: the engine resolves this class by its qualified name (WORKER_EXTENSION).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from typing import Any

from codea1.inference import weight_transfer

WORKER_EXTENSION = "codea1.inference.vllm_worker.WeightSync"
RELOAD_METHOD = "codea1_reload_weights"  # transfer "file": a folder of safetensors files
WHERE_METHOD = "codea1_where"  # where the worker runs (weight_transfer.where_am_i)
COLLECT_METHOD = "codea1_collect_weights"  # transfer "direct": a mailbox key in this process
OPEN_METHOD = "codea1_open_weights"  # transfer "ipc": CUDA IPC handles in plain values


def load_pairs(worker: object, weights: Sequence[tuple[str, Any]]) -> int:
    """Loads (name, tensor) pairs (names as in the learner's state_dict), all of the model's weights, into one
    worker's model; returns how many it was handed. Through the model runner's `reload_weights` where it has
    one (vLLM's own path for new weights into a model whose loaded weights were already processed: calling
    the model's `load_weights` again fails there, e.g. "'Parameter' object has no attribute 'weight_loader'"
    on the CPU build); else the model's `load_weights`. A function, not a method of the extension, so that
    no RPC can hand it tensors (vLLM's message encoder delivers them as lists, which crashed out of process):
    it runs only in the worker's own process, from the extension's RPCs."""
    device = getattr(worker, "device", None)
    pairs = [(name, t.to(device) if device is not None else t) for name, t in weights]
    reload = _reloader(worker)
    if reload is not None:
        reload(weights_iterator=iter(pairs))
    else:
        getattr(worker, "model_runner").model.load_weights(weights=pairs)  # noqa: B009
    return len(pairs)


def _reloader(worker: object) -> Callable[..., object] | None:
    """The worker's own `reload_weights` (vLLM's Worker runs its model runner's inside the worker's vLLM
    config context, which the reload's weight loaders read), else the model runner's, else None."""
    own = getattr(type(worker), "reload_weights", None)
    if callable(own):
        return getattr(worker, "reload_weights")  # noqa: B009
    runner = getattr(worker, "model_runner")  # noqa: B009 (a vLLM worker's attribute, typed as object here)
    reload = getattr(runner, "reload_weights", None)
    return reload if callable(reload) else None


class WeightSync:
    """Mixed into vLLM's Worker class by the engine (it then has `self.model_runner`). Its RPCs take plain
    values: where the worker is, and the weights by one of three transfers."""

    def codea1_where(self) -> list:
        """[machine, process id, visible GPU UUIDs] of this worker (weight_transfer.choose_transfer reads it)."""
        return weight_transfer.where_am_i()

    def codea1_collect_weights(self, key: str) -> int:
        """Loads the pairs the learner posted under `key` in this process (transfer "direct")."""
        return load_pairs(self, weight_transfer.collect(key))

    def codea1_open_weights(self, shared: list) -> int:
        """Opens the learner's CUDA tensors from their IPC handles and loads them (transfer "ipc"); every copy
        out of the learner's memory is finished before this returns, so the learner may free it then."""
        import torch

        count = load_pairs(self, weight_transfer.open_cuda(shared))
        torch.cuda.synchronize()
        return count

    def codea1_reload_weights(self, folder: str) -> int:
        """Reloads this worker's weights from a folder of safetensors files the learner wrote (names as in
        its state_dict): through the model runner's `reload_weights` (vLLM's path, which processes the new
        weights as a first load does) where it has one; else the files' tensors into `load_weights`."""

        reload = _reloader(self)
        if reload is not None:
            reload(weights_path=folder)
            return len(glob.glob(os.path.join(folder, "*.safetensors")))
        from safetensors.torch import load_file

        pairs = [
            p for path in sorted(glob.glob(os.path.join(folder, "*.safetensors"))) for p in load_file(path).items()
        ]
        return load_pairs(self, pairs)
