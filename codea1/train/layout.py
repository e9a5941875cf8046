"""Where a run's policies and engines go on the machine it starts on, said before anything loads.

`describe_layout` reads the config (which policies the method trains, `placement`, `rollout`, `model.device`)
and the number of GPUs this process sees, and says in one line per policy where its learner ranks and its
sampling engine live and how many GPUs stay idle. `placement_note` is the one sentence the trainer prints
where a run would leave GPUs idle: `placement.backend: local` keeps both policies in this process, on
`model.device` alone, whatever the machine has."""

from __future__ import annotations

from codea1.config import Config
from codea1.train.methods import METHODS

MULTI_GPU_PRESET = "qwen2.5-coder-1.5b-1x8"


def gpu_count() -> int:
    """The GPUs this process sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _roles(cfg: Config) -> list[str]:
    return ["code", "test"] if METHODS[cfg.method].separate_test_policy else ["code"]


def _engine(cfg: Config) -> str:
    backend = cfg.rollout.backend
    return "the vLLM engine" if backend == "vllm" else f"the {backend} engine over the learner's own model"


def describe_layout(cfg: Config, gpus: int) -> list[str]:
    """One line per policy, then the GPUs left idle, for a machine (or, with Ray, a node) of ``gpus`` GPUs."""
    roles, p = _roles(cfg), cfg.placement
    if p.backend == "local":
        device = cfg.model.device
        on_gpu = device.startswith("cuda") and gpus > 0
        where = (device if device != "cuda" else "cuda:0") if on_gpu else device
        lines = [f"{role} policy: learner and {_engine(cfg)} in this process, on {where}" for role in roles]
        used = 1 if on_gpu else 0
    else:
        per_rank = p.gpus_per_policy
        kind = "FSDP shards" if p.fsdp and p.learner_ranks > 1 else "a whole learner each"
        lines, first = [], 0.0
        for role in roles:
            span = per_rank * p.learner_ranks
            gpus_of = f"GPUs {first:g}-{first + span - 1:g}" if span >= 2 else f"GPU {first:g}" if span else "no GPU"
            lines.append(
                f"{role} policy: {p.learner_ranks} Ray actor(s), {per_rank:g} GPU each ({gpus_of} of the node, as "
                f"Ray places them; {kind}), each rank sampling its share with {_engine(cfg)}"
            )
            first += span
        used = first
    if gpus:
        idle = gpus - used
        lines.append(
            f"GPUs: {used:g} of {gpus} in use" + (f", {idle:g} idle" if idle > 0 else "")
            if used <= gpus
            else f"GPUs: {used:g} asked for, {gpus} here (Ray waits placement.place_timeout for a cluster that has them)"
        )
    return lines


def placement_note(cfg: Config, gpus: int) -> str | None:
    """One sentence where `placement.backend: local` runs on one GPU of several, else None."""
    if cfg.placement.backend != "local" or gpus < 2:
        return None
    device = cfg.model.device if cfg.model.device != "cuda" else "cuda:0"
    idle = gpus - 1 if device.startswith("cuda") else gpus
    return (
        f"this machine has {gpus} GPUs and placement.backend is local: every policy learns and samples on "
        f"{device} alone, {idle} GPUs stay idle; placement.backend=ray with placement.learner_ranks and "
        f"placement.gpus_per_policy spreads the policies over them (the preset {MULTI_GPU_PRESET} uses the 8 "
        "GPUs of one node, docs/multi-node.md)"
    )
