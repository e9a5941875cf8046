"""codea1.cluster: all of Ray. `connect` joins the cluster (the config's `ray` section) that both
Ray-hosted rooms share:

- ``sandbox_pools``: ``RayExecutor``, one sandbox pool per node behind the sandbox's Executor interface;
- ``policies``: ``RemotePolicy``, each policy (its learner ranks and rollout engine) in Ray actors.
This package itself imports nothing of Ray or of codea1; its modules import Ray when used (the 'ray'
extra)."""

from __future__ import annotations

from types import ModuleType


def connect(ray: ModuleType, address: str | None) -> None:
    """Joins the Ray cluster at `address` ("auto": the one `ray start` made on this node), or with None
    the running one, else a local one started here; nothing if this process is already connected."""
    if ray.is_initialized():
        return
    if address is None:
        ray.init(include_dashboard=False, ignore_reinit_error=True)
    else:
        ray.init(address=address, ignore_reinit_error=True)
