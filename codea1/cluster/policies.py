"""The two policies as Ray actors, driven by the trainer's single controller loop (`placement.backend: ray`).

Each policy group (its model, optimiser, reference and rollout engine: a `Policy` built exactly as in one
process, vLLM included where `rollout.backend` says so) lives in a Ray actor of its own, which Ray places on
any node with the resources asked for (`placement.gpus_per_policy`, `placement.cpus_per_policy`). The
trainer keeps its one loop: it hands each step's prompts to the actor of the role that samples them, runs
the sandbox and the game in the driver, and sends each policy its own samples and advantages. What crosses
the wire is plain data (chat prompts, token ids, log-probs, advantages, metrics); weights never leave their
actor, except into checkpoints, which each actor writes itself into the directory the trainer names (on a
cluster, a directory every node can reach).

Where both roles are separate actors, the two learner updates of an a1 step (which depend on nothing but
their own samples) run at the same time (`submit_train_step`); generation stays in the game's order, since
the white-box Test LLM reads the codes of the same step. `model.mode: dual-lora` keeps both adapters on one
base, so both roles share one actor; golden and selfplay have one policy and one actor.

Each actor seeds its own random number generators from the run's seed, as the trainer does in one process;
sampling is seeded per call (the seed travels with the call), so a run with `placement.backend: ray` samples
and trains as the same run in one process does (tests/test_ray_policy_on_cpu.py compares their metrics).

Recovery: an actor holds state (weights and optimiser) that exists nowhere else between checkpoints, so a
lost actor ends the run with an error naming it; resuming (`codea1 train --resume`) restarts the actors from
the last checkpoint and replays the step exactly, as after any crash.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.cluster import connect
from codea1.errors import UserError

if TYPE_CHECKING:
    from types import ModuleType

    from ray import ObjectRef
    from ray.actor import ActorHandle
    from ray.util.placement_group import PlacementGroup

    from codea1.config import Config
    from codea1.inference.rollout import GenerationConfig


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise UserError("placement.backend 'ray' needs Ray: pip install 'codea1[ray]'") from None
    return ray


class _PolicyHost:
    """What runs inside a policy actor: the policies of its roles, built from the run's config."""

    def __init__(self, cfg_dict: dict[str, Any], roles: tuple[str, ...]) -> None:
        self.cfg_dict, self.roles = cfg_dict, roles
        self.policies: dict[str, Any] = {}
        self.rows_sampled = 0  # prompts x samples this rank has drawn

    def setup(self, init_method: str | None = None, rank: int = 0, world_size: int = 1) -> int:
        """Builds this actor's policies, after joining its data-parallel group where there is one: the
        learners' process group must exist before any engine is built (an in-process vLLM engine sets up
        torch.distributed for itself otherwise, and the ranks would train separate models), and each
        policy is then sharded with FSDP2 (placement.fsdp) or replicated over the group."""

        import numpy as np
        import torch

        from codea1.config import config_from_dict, torch_threads
        from codea1.inference.engines import load_engine
        from codea1.rl.build import build_policies, learner_device, load_policies
        from codea1.rl.distributed import join

        cfg = config_from_dict(self.cfg_dict)
        torch.set_num_threads(torch_threads(cfg, policy_actor=True))
        group = None
        if world_size > 1:
            group = join(init_method, rank, world_size, backend="nccl" if torch.cuda.is_available() else "gloo")
        random.seed(cfg.seed)  # as the trainer seeds its own process (codea1.train.loop)
        np.random.seed(cfg.seed % (2**32))
        torch.manual_seed(cfg.seed)
        roles = {"code": "code" in self.roles, "test": "test" in self.roles}
        if group is not None and cfg.placement.fsdp:
            # rank 0 alone loads the weights (on the CPU); the other ranks build the model on the meta device
            # and take their shards from rank 0's broadcast, then the engine is attached to the sharded policies
            engine = load_engine(cfg.rollout.backend)
            engine.check(cfg)
            code, test = load_policies(cfg, **roles, device="cpu", skeleton=rank != 0)
            for policy in {id(p): p for p in (code, test) if p is not None}.values():
                # an engine with weights of its own (vLLM) is fed from the shards: no full replica is built
                policy.shard(
                    group,
                    half_gathers=cfg.placement.fsdp_half_gathers,
                    from_rank0=True,
                    device=learner_device(cfg),
                    replica=not engine.own_weights,
                )
            engine.attach(cfg, [code, test])
        else:
            code, test = build_policies(cfg, **roles)
            if group is not None:
                for policy in {id(p): p for p in (code, test) if p is not None}.values():
                    policy.data_parallel = group
        self.policies = {"code": code, "test": test}
        return rank

    def info(self) -> dict[str, Any]:

        import torch

        from codea1.rl.distributed import local_numel, local_sum

        live = {k: p for k, p in self.policies.items() if p is not None}
        return {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "roles": sorted(live),
            "cuda_devices": torch.cuda.device_count() if torch.cuda.is_available() else 0,
            "sharded": {k: bool(getattr(p, "sharded", False)) for k, p in live.items()},
            "rows_sampled": self.rows_sampled,
            "torch_threads": torch.get_num_threads(),
            # the weights this rank holds (a shard's elements where sharded)
            "weights_held": {k: local_numel(p.model.parameters()) for k, p in live.items()},
            # the sum of the weights this rank holds (its shards where sharded, asked of this rank alone: no
            # collective): replicated ranks agree on it after every update
            "weights_sum": {k: local_sum(p.model.parameters()) for k, p in live.items()},
        }

    def address(self) -> tuple[str, int]:
        """Where rank 0 of a data-parallel group listens: this node's address and a free port."""

        ray = _ray()
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        return ray.util.get_node_ip_address(), port

    def generate(
        self, role: str, prompts: list, gen: GenerationConfig | None, prompt_index: list | None = None
    ) -> list:
        import torch

        if gen is not None and gen.seed is not None:
            torch.manual_seed(gen.seed)  # as codea1.train.methods.sample does before a local generate
        out = self.policies[role].generate(prompts, gen, prompt_index)
        self.rows_sampled += sum(len(group) for group in out)
        return out

    def train_step(self, role: str, samples: list, advantages: list) -> dict[str, Any]:
        """One update; then the policy's engine takes the new weights at once where it is the policy's alone
        (VLLMRollout.presync): the two roles' actors update, and so sync, at the same time, where a lazy sync
        before sampling would run them one after the other on the step's path."""
        policy = self.policies[role]
        metrics = policy.train_step(samples, advantages)
        presync = getattr(policy.rollout, "presync", None)
        if callable(presync):
            t0 = time.perf_counter()
            if presync():
                metrics["engine_sync_s"] = time.perf_counter() - t0
        return metrics

    def save(self, role: str, directory: str) -> None:
        self.policies[role].save(directory)

    def load(self, role: str, directory: str) -> None:
        self.policies[role].load(directory)


class RemotePolicy:
    """A policy living in a Ray actor, with the methods the trainer and `codea1 compare` call on a Policy:
    generate, train_step, save, load; plus submit_train_step, which starts an update and returns a callable
    that waits for its metrics (the trainer overlaps the two policies' updates with it).

    With data-parallel ranks (`placement.learner_ranks`), `ranks` holds one actor per rank (`handle` is
    rank 0): every rank samples its share of each seeded generate call and takes each update; rank 0
    writes checkpoints, every rank takes part in each save
    (sharded, the full tensors are gathered from all ranks) and loads each checkpoint."""

    def __init__(
        self,
        handle: ActorHandle,
        role: str,
        name: str,
        ranks: Sequence[ActorHandle] | None = None,
        *,
        reservation: _Reservation | None = None,
    ) -> None:
        self.handle, self.role, self.name = handle, role, name
        self.ranks = list(ranks) if ranks else [handle]
        self.reservation = reservation  # the ranks' placement group, held as long as this policy

    def close(self) -> None:
        """Ends this policy's actors (all its ranks; with dual-lora the other role's too, on the same actor)
        and frees the CPUs and GPUs they reserved."""
        ray = _ray()
        for handle in self.ranks:
            with contextlib.suppress(Exception):  # already gone
                ray.kill(handle)
        if self.reservation is not None:
            self.reservation.release()

    def _get(self, ref: ObjectRef) -> Any:  # noqa: ANN401  (what the actor's method returned)
        ray = _ray()
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the policy's own error, as it would be raised locally
            cause = exc.as_instanceof_cause() if hasattr(exc, "as_instanceof_cause") else exc
            raise cause from None
        except ray.exceptions.RayError as exc:  # the actor or its node is gone, and its weights with it
            why = str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else type(exc).__name__
            raise RuntimeError(
                f"the Ray actor of the {self.name} was lost ({why}); resume the run (codea1 "
                "train --resume) to restart it from the last checkpoint"
            ) from None

    def generate(self, prompts: Sequence[Sequence[Mapping[str, str]]], gen: GenerationConfig | None = None) -> list:
        """Samples on every rank at once, each its share of the prompts (blocks of whole chunks,
        codea1.inference.rollout.share_blocks, seeded by their place in the call, so the samples are those one
        rank would draw), merged back in prompt order."""
        from codea1.inference.rollout import share_blocks

        prompts = list(prompts)
        if len(self.ranks) == 1 or gen is None or gen.seed is None or len(prompts) < 2:
            return self._get(self.handle.generate.remote(self.role, prompts, gen))
        shares = share_blocks(len(prompts), gen.n, gen.rows_per_call, len(self.ranks))
        refs = [
            (share, h.generate.remote(self.role, [prompts[i] for i in share], gen, share))
            for h, share in zip(self.ranks, shares, strict=True)
            if share
        ]
        out: list = [None] * len(prompts)
        for share, ref in refs:
            for i, group in zip(share, self._get(ref), strict=True):
                out[i] = group
        return out

    def submit_train_step(self, samples: Sequence[Any], advantages: Sequence[float]) -> Callable[[], dict]:
        samples, advantages = list(samples), [float(a) for a in advantages]
        refs = [h.train_step.remote(self.role, samples, advantages) for h in self.ranks]

        def wait() -> dict:
            # every rank's update must end; a lost rank is reported at once (the others would wait for it
            # in their gradient reduction), not after rank 0's collective times out
            ray, results, pending = _ray(), {}, list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                results[done[0]] = self._get(done[0])
            return results[refs[0]]  # the ranks' metrics are equal: rank 0's

        return wait

    def train_step(self, samples: Sequence[Any], advantages: Sequence[float]) -> dict[str, Any]:
        return self.submit_train_step(samples, advantages)()

    def save(self, directory: str | Path) -> None:
        for ref in [h.save.remote(self.role, str(directory)) for h in self.ranks]:
            self._get(ref)

    def load(self, directory: str | Path) -> None:
        for ref in [h.load.remote(self.role, str(directory)) for h in self.ranks]:
            self._get(ref)

    def info(self, rank: int = 0) -> dict[str, Any]:
        return self._get(self.ranks[rank].info.remote())


def actor_groups(cfg: Config, test: bool) -> list[tuple[str, ...]]:
    """The roles each actor hosts: one actor per policy, except dual-lora (both adapters on one base)."""
    if not test:
        return [("code",)]
    if cfg.model.mode == "dual-lora":
        return [("code", "test")]
    return [("code",), ("test",)]


class _Reservation:
    """A policy's placement group, removed by `release()` (once: later calls do nothing), or once the last
    RemotePolicy that holds it is gone (as Ray ends an actor once its last handle is gone), or with the
    driver."""

    def __init__(self, ray: ModuleType, group: PlacementGroup) -> None:
        self.group = group
        self.release = weakref.finalize(self, _remove_group, ray, group)
        self.release.atexit = False  # at exit Ray removes it itself


def _remove_group(ray: ModuleType, group: PlacementGroup) -> None:
    with contextlib.suppress(Exception):  # Ray shut down already: the group went with it
        ray.util.remove_placement_group(group)


def _reserve_ranks(ray: ModuleType, cfg: Config, name: str) -> tuple[list[Any], _Reservation | None]:
    """One scheduling strategy per rank of a policy: the bundles of one placement group (a rank's CPUs and
    GPUs each), all on one node (STRICT_PACK: the ranks of one torch.distributed group talk over the node's
    links, never across nodes) or, with placement.span_nodes, on as few nodes as hold them (PACK: a policy
    larger than a node spans several), reserved before any rank starts. A cluster that cannot hold them is an
    error within `placement.place_timeout` seconds, not a rank that waits forever for a GPU. The group is this
    driver's: Ray removes it, with the actors, when the run's process ends."""
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    place = cfg.placement
    bundle = {k: v for k, v in (("CPU", place.cpus_per_policy), ("GPU", place.gpus_per_policy)) if v > 0}
    if not bundle:  # nothing reserved per rank: nothing to place
        return [None] * place.learner_ranks, None
    strategy = "PACK" if place.span_nodes else "STRICT_PACK"
    group = ray.util.placement_group([bundle] * place.learner_ranks, strategy=strategy)
    ready, _ = ray.wait([group.ready()], timeout=place.place_timeout)
    if not ready:
        _remove_group(ray, group)
        asked = " and ".join(f"{v:g} {k}" for k, v in bundle.items())
        where, more = (
            ("in the cluster", "add nodes")
            if place.span_nodes
            else ("on one node", "add a node that holds them, or let the ranks span nodes (placement.span_nodes)")
        )
        raise UserError(
            f"the Ray cluster could not reserve the {name}'s {place.learner_ranks} rank(s) of {asked} each "
            f"{where} within {place.place_timeout:g}s (placement.place_timeout); `ray status` shows what it "
            f"has: lower placement.learner_ranks or the per-policy CPUs and GPUs, or {more}"
        )
    strategies = [
        PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=r) for r in range(place.learner_ranks)
    ]
    return strategies, _Reservation(ray, group)


def build_ray_policies(cfg: Config, *, test: bool = True) -> tuple[RemotePolicy, RemotePolicy | None]:
    """``(code_policy, test_policy)`` as in codea1.rl.build.build_policies, each a RemotePolicy whose
    weights live in a Ray actor (joins the cluster at `ray.address`, or starts a local one)."""

    ray = _ray()
    place = cfg.placement
    connect(ray, cfg.ray.address)
    remote = ray.remote(_PolicyHost)
    data = cfg.to_dict()
    handles: dict[str, RemotePolicy] = {}
    for roles in actor_groups(cfg, test):
        name = " and ".join({"code": "Code LLM", "test": "Test LLM"}[r] for r in roles)
        strategies, reservation = _reserve_ranks(ray, cfg, name)
        ranks = [
            remote.options(
                num_cpus=place.cpus_per_policy,
                num_gpus=place.gpus_per_policy,
                max_restarts=0,
                max_task_retries=0,
                scheduling_strategy=strategy,
            ).remote(data, roles)
            for strategy in strategies
        ]
        init = None
        if len(ranks) > 1:  # one torch.distributed group per policy, rank 0 its address
            host, port = ray.get(ranks[0].address.remote())
            init = f"tcp://{host}:{port}"
        # every rank joins its group, then builds its policies (and engines)
        ray.get([h.setup.remote(init, r, len(ranks)) for r, h in enumerate(ranks)])
        for role in roles:
            handles[role] = RemotePolicy(ranks[0], role, name, ranks, reservation=reservation)
    code = handles["code"]
    code.info()  # waits for the actor to build its policies: a failure to load surfaces here, named
    test_policy = handles.get("test")
    if test_policy is not None and test_policy.handle is not code.handle:
        test_policy.info()
    return code, test_policy
