"""The weight-sync sections of benchmarks/gpu_check.py: a learner's full weights into an engine's worker by
each transfer of codea1.inference.weight_transfer, timed, and checked tensor by tensor.

The engine's end is codea1's own worker extension (codea1.inference.vllm_worker.WeightSync) in a worker
stand-in that holds the engine's weights as plain tensors; the learner's end is codea1's EngineHandle, whose
`collective_rpc` here crosses a pipe to that worker's process (plain values, pickled, as vLLM's message
encoder carries them), or calls it in this process. What is not vLLM's is only the model the worker loads
into: vLLM's GPU build cannot be installed on a machine without a package registry.

- direct: the worker in the learner's process (vLLM's in-process engine);
- ipc: the worker in a process of its own on the same GPU (CUDA IPC handles);
- file: the same worker, through a safetensors file (the fallback, and codea1's only transfer before);
- two roles at once: two workers, each fed a different policy's weights by ipc, one after the other and
  then concurrently (two threads), as the two roles' syncs now run.

benchmarks/gpu_check.py runs these on its 1.5B learner; alone, on a model of Qwen2.5-Coder-1.5B's shape with
random weights (on a CPU: direct and file only):

    python benchmarks/gpu_sync_check.py [--device cuda] [--layers 28] [--vocab 151936]
"""

from __future__ import annotations

import argparse
import glob
import multiprocessing
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def stand_in_worker(shapes: dict[str, tuple[list[int], str]], device: str) -> tuple[Any, dict]:
    """codea1's worker extension on a stand-in for vLLM's worker: its model is a dict of the engine's weights
    (zeros of the given shapes and dtypes on `device`), which `reload_weights` fills from an iterator of
    pairs or a folder of safetensors files, as vLLM's does. Returns the worker and that dict."""
    import torch
    from safetensors.torch import load_file

    from codea1.inference.vllm_worker import WeightSync

    held = {
        name: torch.zeros(shape, dtype=getattr(torch, dtype), device=device) for name, (shape, dtype) in shapes.items()
    }

    class Runner:
        @staticmethod
        def reload_weights(weights_iterator: Any = None, weights_path: str | None = None) -> None:
            if weights_iterator is None:  # the file transfer: the folder's safetensors files
                files = sorted(glob.glob(f"{weights_path}/*.safetensors"))
                weights_iterator = (p for f in files for p in load_file(f, device=device).items())
            with torch.no_grad():
                for name, tensor in weights_iterator:
                    held[name].copy_(tensor)

    worker = WeightSync()
    worker.device = torch.device(device)
    worker.model_runner = Runner()
    return worker, held


def _engine_worker(conn: Any, shapes: dict[str, tuple[list[int], str]], device: str) -> None:
    """A process holding a stand-in worker (`stand_in_worker`); answers (method, args) requests from the pipe
    with (result, seconds, checksums)."""
    worker, held = stand_in_worker(shapes, device)
    conn.send("ready")
    while (request := conn.recv()) is not None:
        method, args = request
        _synchronize(device)
        t0 = time.perf_counter()
        result = getattr(worker, method)(*args)
        _synchronize(device)
        seconds = time.perf_counter() - t0
        conn.send((result, seconds, checksums(held.items()) if method != "codea1_where" else {}))


def _synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def checksums(pairs: Any) -> dict[str, float]:
    """Each tensor's sum in float64 (the same kernels on the same values give the same bits)."""
    return {name: float(t.double().sum()) for name, t in pairs}


class PipeEngine:
    """An `LLM` stand-in for EngineHandle: `collective_rpc` sends (method, args) to the worker processes and
    returns their results; the last answers' seconds and checksums are kept."""

    def __init__(self, shapes: dict[str, tuple[list[int], str]], device: str, workers: int = 1) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipes, self.procs = [], []
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_engine_worker, args=(theirs, shapes, device), daemon=True)
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)
        for pipe in self.pipes:
            assert pipe.recv() == "ready"
        self.last: list[tuple[Any, float, dict]] = []

    def collective_rpc(self, method: str, args: tuple = ()) -> list:
        for pipe in self.pipes:
            pipe.send((method, args))
        self.last = [pipe.recv() for pipe in self.pipes]
        return [answer[0] for answer in self.last]

    def close(self) -> None:
        for pipe, proc in zip(self.pipes, self.procs, strict=True):
            pipe.send(None)
            proc.join(timeout=60)


class LocalEngine:
    """The in-process stand-in: the same worker extension, called in this process."""

    def __init__(self, shapes: dict[str, tuple[list[int], str]], device: str) -> None:
        self.worker, self.held = stand_in_worker(shapes, device)

    def collective_rpc(self, method: str, args: tuple = ()) -> list:
        return [getattr(self.worker, method)(*args)]


def _timed_sync(handle: Any, state: dict, device: str, repeats: int = 2) -> float:
    best = float("inf")
    for _ in range(repeats):
        _synchronize(device)
        t0 = time.perf_counter()
        handle.load_full_weights(state.items())
        _synchronize(device)
        best = min(best, time.perf_counter() - t0)
    return best


def sync_checks(state: dict, device: str, dtype: str = "bfloat16", weights_dir: str | None = None) -> None:
    """Every transfer of a full-weight sync of `state` (a learner's state_dict on a CUDA `device`) into an
    engine in `dtype`: seconds (best of two) and whether every tensor arrived as the learner's, cast."""
    import torch

    from codea1.inference.vllm_backend import EngineHandle
    from codea1.inference.weight_transfer import cast_pairs

    cuda = device.startswith("cuda")
    expected = checksums(cast_pairs(list(state.items()), dtype))
    shapes = {n: (list(t.shape), dtype if t.is_floating_point() else str(t.dtype)[6:]) for n, t in state.items()}
    size = sum(t.numel() for t in state.values()) * torch.empty((), dtype=getattr(torch, dtype)).element_size()
    local = LocalEngine(shapes, device)
    direct = EngineHandle(local, dtype=dtype, transfer="auto")
    seconds = _timed_sync(direct, state, device)
    ok = checksums(local.held.items()) == expected
    print(
        f"weight sync {size / 2**30:.2f} GiB in {dtype}: direct (worker in this process) {seconds:.3f}s, "
        f"chosen {direct.resolved_transfer}, every tensor the learner's: {ok}",
        flush=True,
    )
    del local, direct
    engine = PipeEngine(shapes, device)
    try:
        for transfer in ("ipc", "file") if cuda else ("file",):  # ipc: CUDA tensors only
            handle = EngineHandle(
                engine, dtype=dtype, transfer=transfer if transfer == "file" else "auto", weights_dir=weights_dir
            )
            seconds = _timed_sync(handle, state, device)
            ok = engine.last[0][2] == expected
            print(
                f"weight sync {size / 2**30:.2f} GiB in {dtype}: {transfer} (worker in its own process) "
                f"{seconds:.3f}s (the worker's part {engine.last[0][1]:.3f}s), chosen "
                f"{handle.resolved_transfer or 'file'}, every tensor the learner's: {ok}",
                flush=True,
            )
    finally:
        engine.close()
    if cuda:
        two_roles(state, shapes, device, dtype, expected)
    else:
        print("two roles' syncs by ipc: needs a CUDA device; not run", flush=True)


def two_roles(state: dict, shapes: dict, device: str, dtype: str, expected: dict) -> None:
    """Two policies' syncs by ipc into two engines: one after the other, then at the same time."""
    import torch

    from codea1.inference.vllm_backend import EngineHandle

    other = {n: (t + 1 if t.is_floating_point() else t) for n, t in state.items()}  # the second role's weights
    engines = [PipeEngine(shapes, device), PipeEngine(shapes, device)]
    try:
        handles = [EngineHandle(e, dtype=dtype) for e in engines]
        for h, s in zip(handles, (state, other), strict=True):
            h.load_full_weights(s.items())  # resolves the transfer, warms both
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for h, s in zip(handles, (state, other), strict=True):
            h.load_full_weights(s.items())
        serial = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda hs: hs[0].load_full_weights(hs[1].items()), zip(handles, (state, other), strict=True)))
        both = time.perf_counter() - t0
        ok = engines[0].last[0][2] == expected and engines[1].last[0][2] != expected
        print(
            f"two roles' syncs by {handles[0].resolved_transfer}: one after the other {serial:.3f}s, at the same "
            f"time {both:.3f}s ({serial / both:.2f}x); each engine holds its own policy's weights: {ok}",
            flush=True,
        )
    finally:
        for e in engines:
            e.close()


def shard_checks(base: Any, tok: Any, rows: Sequence, advantages: Sequence, dp: Any, tmp: str) -> None:
    """FSDP2 on the device's backend: a bfloat16 policy gathers its shards in bfloat16 with
    placement.fsdp_half_gathers (the weight a layer computes with, seen from a forward pre-hook) and in
    float32 without; and a sharded policy saved and loaded into a fresh sharded one holds the same weights
    and takes the same next step."""
    import copy

    import torch

    from codea1.rl.policy import Policy, PolicyConfig

    cfg = PolicyConfig(kl_coef=0.0, lr=1e-4, warmup_steps=0, dtype="bfloat16", shared_prompt=False)
    seen = {}
    for half in (True, False):
        policy = Policy(copy.deepcopy(base), tok, cfg)
        policy.shard(dp, half_gathers=half)
        layer = next(m for m in policy.model.modules() if isinstance(m, torch.nn.Linear))

        def note(module: torch.nn.Module, _inputs: tuple, half: bool = half) -> None:
            seen.setdefault(half, str(module.weight.dtype))

        hook = layer.register_forward_pre_hook(note)
        metrics = policy.train_step(rows, advantages)
        hook.remove()
        if half:
            policy.save(f"{tmp}/sharded")
            after = policy.train_step(rows, advantages)
            mine = {n: p.full_tensor() for n, p in policy.model.named_parameters()}
    print(
        f"FSDP2 bfloat16 policy: its first linear layer computes with {seen[True]} weights with half gathers, "
        f"{seen[False]} without (loss {metrics['loss']:.5f})",
        flush=True,
    )
    fresh = Policy(copy.deepcopy(base), tok, cfg)
    fresh.shard(dp, half_gathers=True)
    fresh.load(f"{tmp}/sharded")
    again = fresh.train_step(rows, advantages)
    diff = max(
        (p.full_tensor().float() - mine[n].float()).abs().max().item() for n, p in fresh.model.named_parameters()
    )
    print(
        f"FSDP2 sharded save and load: the next step's loss {again['loss']:.6f} vs {after['loss']:.6f} without the "
        f"round trip; weights after it differ by at most {diff:.2e}",
        flush=True,
    )


def qwen_shape(layers: int, vocab: int) -> Any:  # a transformers Qwen2Config
    """Qwen2.5-Coder-1.5B's published config.json, with `layers` decoder layers and a vocabulary of `vocab`
    (its own: 28 and 151936); built with random weights here."""
    from transformers import Qwen2Config

    return Qwen2Config(
        vocab_size=vocab,
        hidden_size=1536,
        intermediate_size=8960,
        num_hidden_layers=layers,
        num_attention_heads=12,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        rope_theta=1000000.0,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--layers", type=int, default=28, help="decoder layers of the 1.5B shape")
    ap.add_argument("--vocab", type=int, default=151936, help="its vocabulary (smaller for a smoke run)")
    ap.add_argument(
        "--weights-dir", default=None, help="the file transfer's folder (default: as rollout.vllm_weights_dir)"
    )
    args = ap.parse_args()
    import torch
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    model = Qwen2ForCausalLM(qwen_shape(args.layers, args.vocab)).to(args.device)
    sync_checks(dict(model.state_dict()), args.device, weights_dir=args.weights_dir)


if __name__ == "__main__":
    main()
