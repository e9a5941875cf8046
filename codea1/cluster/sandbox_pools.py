"""A sandbox Executor spread over a Ray cluster: one sandbox pool (a Ray actor holding a local Executor) per
node, with the local Executor's batch API.

    from codea1.cluster.sandbox_pools import RayExecutor
    with RayExecutor(workers=16) as ex:          # connects to a running cluster (or starts a local one)
        results = ex.run(jobs)                   # one JobResult per job, in input order

How a batch runs: the jobs are cut into chunks (positions in the batch), and each actor is given at most
`max_in_flight` chunks at a time (back-pressure: a slow node is never handed more than it can start, and
the driver never ships the whole batch up front). An actor runs its chunks with its local Executor, so
every verdict is still decided by a trusted parent (the actor process) from plain values, exactly as
locally. Results are stored by job position, each position once.

Recovery: when an actor dies mid-batch (its process or its node is lost, or it is killed), the chunks it
had in flight are put back at the front of the queue and run by another actor; a position whose result
already arrived is never run again, and a chunk from a dead actor never delivers a result, so nothing is
lost or counted twice. Dead actors are replaced (on nodes that are still alive) at the start of the next
batch. If no actor is left during a batch, new ones are started once; if that fails, SandboxError.

Ray is imported only when a RayExecutor is built (`pip install codea1[ray]`); the default install and test
suite do not need it.
"""

from __future__ import annotations

import collections
import contextlib
import os
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from codea1.cluster import connect
from codea1.sandbox.api import Job, JobResult, SandboxError
from codea1.sandbox.executor import LocalExecutor

if TYPE_CHECKING:
    from types import ModuleType

    from ray.actor import ActorHandle

DEFAULT_IN_FLIGHT = 2  # chunks per actor: one running and one queued behind it keeps every slot busy
CHUNK_PER_SLOT = 8  # default jobs per chunk, per slot of the pool: fewer round trips (see
# benchmarks/ray_executor_overhead.py), yet a lost pool reruns little


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise SandboxError("executor.backend 'ray' needs Ray: pip install 'codea1[ray]'") from None
    return ray


class _Pool:
    """What runs inside each actor: a local Executor, built on the actor's node (its uids, its cgroups)."""

    def __init__(self, executor_kwargs: dict[str, Any]) -> None:

        self.executor = LocalExecutor(**executor_kwargs)

    def info(self) -> dict[str, Any]:

        return {
            "workers": self.executor.workers,
            "isolation": self.executor.isolation_level,
            "host": socket.gethostname(),
            "pid": os.getpid(),
        }

    def run(self, jobs: list[Job], one_slot: bool = False) -> list[JobResult]:
        return self.executor.run(jobs, one_slot=one_slot)

    def close(self) -> None:
        self.executor.close()


class _Actor:
    """One sandbox pool as seen by the driver: its handle, node and what it has in flight."""

    def __init__(self, handle: ActorHandle, node_id: str, name: str) -> None:
        self.handle = handle
        self.node_id = node_id
        self.name = name
        self.workers = 1
        self.in_flight: dict[Any, list[int]] = {}  # object ref -> positions of the chunk
        self.alive = True


class RayExecutor:
    """The sandbox over a Ray cluster (see the module docstring); a drop-in for `Executor` where the trainer
    uses it: `run(jobs, progress)`, `close()`, context manager, `workers` (slots in all).

    address: Ray address ("auto" joins a running cluster; None: the running one, else a local one started
    here). actors_per_node: sandbox pools per node (1 on a real cluster; more only to test on one
    machine). chunk_size: jobs per task (default: 8 per slot of the actor). max_in_flight: chunks per actor at a
    time. actor_cpus: Ray CPUs each actor reserves (0: the sandbox's own slots do the work, Ray only places
    the actor). The other keyword arguments go to each node's `Executor` (workers: slots per node).
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        address: str | None = None,
        actors_per_node: int = 1,
        chunk_size: int | None = None,
        max_in_flight: int = DEFAULT_IN_FLIGHT,
        actor_cpus: float = 0,
        nodes: list[str] | None = None,
        **executor_kwargs: Any,
    ) -> None:
        ray = _ray()
        connect(ray, address)
        self._ray = ray
        self._executor_kwargs = {"workers": workers, **executor_kwargs}
        self.actors_per_node = max(1, int(actors_per_node))
        self.chunk_size = chunk_size
        self.max_in_flight = max(1, int(max_in_flight))
        self.actor_cpus = actor_cpus
        self._nodes = nodes
        self._actors: list[_Actor] = []
        self._serial = 0
        self._lock = threading.Lock()  # one batch at a time (the local Executor allows concurrent run calls;
        self._closed = False  # here a second caller waits for the first batch)
        self.stats = {"actors_lost": 0, "requeued_jobs": 0, "chunks": 0}
        self._remote = ray.remote(_Pool)
        self._ensure_actors()
        if not self._actors:
            raise SandboxError("RayExecutor: no alive Ray node to place a sandbox pool on")
        self.isolation_level = self._info[0]["isolation"]

    # -- public API ---------------------------------------------------------------------------------
    @property
    def workers(self) -> int:
        return sum(a.workers for a in self._actors if a.alive)

    def __enter__(self) -> RayExecutor:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def actors(self) -> list[Any]:
        """Handles of the live sandbox pools (e.g. to kill one in a test)."""
        return [a.handle for a in self._actors if a.alive]

    def busiest_actor(self) -> ActorHandle:
        """The live actor with the most chunks in flight now (tests kill it mid-batch)."""
        live = [a for a in self._actors if a.alive]
        return max(live, key=lambda a: len(a.in_flight)).handle

    def run(
        self,
        jobs: list[Job],
        progress: Callable[[int, int], None] | None = None,
        *,
        one_slot: bool = False,
        then: Callable[[int, JobResult], JobResult] | None = None,
    ) -> list[JobResult]:
        """Runs all jobs over the cluster; one result per job, in input order; progress(done, total);
        then(n, result) as each chunk's results arrive (its return is kept: see `Executor`).
        one_slot=True runs the whole batch on one slot of one actor, one job after another (as
        `Executor.run(one_slot=True)`; mutation scoring needs every program to see the same slot); if that
        actor dies, the whole batch runs again on another."""
        if self._closed:
            raise SandboxError("RayExecutor is closed")
        jobs = list(jobs)
        if not jobs:
            return []
        with self._lock:
            self._ensure_actors()
            if one_slot:
                results = self._run_one_slot(jobs, progress)
                return [then(n, res) for n, res in enumerate(results)] if then is not None else results
            return self._run(jobs, progress, then)

    def _run_one_slot(self, jobs: list[Job], progress: Callable[[int, int], None] | None) -> list[JobResult]:
        ray = self._ray
        for _ in range(len(self._actors) + 1):
            alive = [a for a in self._actors if a.alive]
            if not alive:
                self._ensure_actors()
                alive = [a for a in self._actors if a.alive]
                if not alive:
                    break
            actor = alive[0]
            try:
                results = ray.get(actor.handle.run.remote(jobs, True))
            except ray.exceptions.RayActorError:  # the actor (or its node) is gone
                actor.alive = False
                continue
            if progress is not None:
                progress(len(jobs), len(jobs))
            return results
        raise SandboxError("no Ray sandbox actor could run the batch")

    def close(self) -> None:
        """Stops every node's Executor and the actors."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        for actor in self._actors:
            if actor.alive:
                with contextlib.suppress(Exception):  # a dead or stuck actor is killed below anyway
                    ray.get(actor.handle.close.remote(), timeout=60)
                with contextlib.suppress(Exception):
                    ray.kill(actor.handle)
        self._actors = []

    # -- internals ----------------------------------------------------------------------------------
    def _alive_nodes(self) -> list[str]:
        alive = [n["NodeID"] for n in self._ray.nodes() if n.get("Alive")]
        if self._nodes is not None:
            alive = [n for n in alive if n in self._nodes]
        return alive

    def _ensure_actors(self) -> None:
        """Starts the missing sandbox pools: actors_per_node on every alive node."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._actors = [a for a in self._actors if a.alive]
        have = collections.Counter(a.node_id for a in self._actors)
        new: list[_Actor] = []
        for node in self._alive_nodes():
            for _ in range(self.actors_per_node - have[node]):
                self._serial += 1
                name = f"codea1-sandbox-{os.getpid()}-{self._serial}"
                handle = self._remote.options(
                    num_cpus=self.actor_cpus,
                    max_concurrency=self.max_in_flight + 2,
                    max_restarts=0,
                    max_task_retries=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
                ).remote(self._executor_kwargs)
                new.append(_Actor(handle, node, name))
        infos = []
        for actor in new:
            try:
                info = self._ray.get(actor.handle.info.remote())
            except self._ray.exceptions.RayTaskError as exc:  # the Executor itself failed to start
                raise SandboxError(f"RayExecutor: a sandbox pool failed to start: {exc}") from None
            except self._ray.exceptions.RayError:
                actor.alive = False
                continue
            actor.workers = int(info["workers"])
            infos.append(info)
            self._actors.append(actor)
        if infos or not hasattr(self, "_info"):
            self._info = infos or getattr(self, "_info", [])

    def _chunk(self, actor: _Actor) -> int:
        return max(1, int(self.chunk_size or CHUNK_PER_SLOT * actor.workers))

    def _run(
        self,
        jobs: list[Job],
        progress: Callable[[int, int], None] | None,
        then: Callable[[int, JobResult], JobResult] | None = None,
    ) -> list[JobResult]:
        ray = self._ray
        total = len(jobs)
        results: list[JobResult | None] = [None] * total
        pending: collections.deque[int] = collections.deque(range(total))  # positions not yet handed out
        done = 0
        restarted = False
        while done < total:
            live = [a for a in self._actors if a.alive]
            if not live:
                if restarted:
                    raise SandboxError("RayExecutor: every sandbox pool died and none could be restarted")
                restarted = True
                self._ensure_actors()
                continue
            # hand out chunks up to each actor's bound, least loaded first
            for actor in sorted(live, key=lambda a: len(a.in_flight)):
                while pending and len(actor.in_flight) < self.max_in_flight:
                    size = self._chunk(actor)
                    positions = [pending.popleft() for _ in range(min(size, len(pending)))]
                    ref = actor.handle.run.remote([jobs[i] for i in positions])
                    actor.in_flight[ref] = positions
                    self.stats["chunks"] += 1
            owner = {ref: a for a in live for ref in a.in_flight}
            if not owner:
                continue
            ready, _ = ray.wait(list(owner), num_returns=1)
            for ref in ready:
                actor = owner[ref]
                positions = actor.in_flight.pop(ref)
                try:
                    chunk = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:  # Executor.run raised: as it would locally
                    cause = exc.as_instanceof_cause() if hasattr(exc, "as_instanceof_cause") else exc
                    raise SandboxError(f"RayExecutor: a sandbox pool failed: {cause}") from None
                except ray.exceptions.RayError:  # the actor (or its node) is gone: rerun its chunks elsewhere
                    actor.in_flight[ref] = positions
                    self._lose(actor, pending)
                    continue
                if len(chunk) != len(positions):
                    raise SandboxError(f"RayExecutor: a pool returned {len(chunk)} results for {len(positions)} jobs")
                for pos, res in zip(positions, chunk, strict=True):
                    if results[pos] is not None:  # cannot happen: a position is handed out again only
                        continue  # after its chunk was lost
                    results[pos] = then(pos, res) if then is not None else res
                    done += 1
                if progress is not None:
                    progress(done, total)
        return results  # type: ignore[return-value]

    def _lose(self, actor: _Actor, pending: collections.deque[int]) -> None:
        """An actor died: every chunk it had in flight goes back to the front of the queue, in order."""
        if not actor.alive:
            return
        actor.alive = False
        self.stats["actors_lost"] += 1
        back = [pos for positions in actor.in_flight.values() for pos in positions]
        actor.in_flight.clear()
        self.stats["requeued_jobs"] += len(back)
        pending.extendleft(sorted(back, reverse=True))
        with contextlib.suppress(Exception):
            self._ray.kill(actor.handle)
