"""The Ray cluster both Ray-hosted rooms join: the sandbox pools (codea1.sandbox.ray_backend) and the
policies (codea1.rl.ray_policy). Ground floor: it imports nothing of codea1."""

from __future__ import annotations

from typing import Any


def connect(ray: Any, address: str | None) -> None:
    """Joins the Ray cluster at `address` ("auto": the one `ray start` made on this node), or with None
    the running one, else a local one started here; nothing if this process is already connected."""
    if ray.is_initialized():
        return
    if address is None:
        ray.init(include_dashboard=False, ignore_reinit_error=True)
    else:
        ray.init(address=address, ignore_reinit_error=True)
