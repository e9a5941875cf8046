"""codea1.sandbox: isolated, fast execution of untrusted code; each call's plain value comes back.

    from codea1.sandbox import Job, LocalExecutor
    with LocalExecutor() as ex:
        [res] = ex.run([Job(id="a", code="def f(x): return x * 2", calls=["f(2)"])])
        res.results[0].status, res.results[0].value  # ("ok", 4)

Rooms: api (Job, JobResult, the Executor Protocol), executor (LocalExecutor: the pool of slots and their
zygotes, the parent's side of a job), zygote (the warm interpreters and their children), wire (the frames
a child sends, both ends), values (the plain-value encoding both ends use), jail (namespaces, mounts,
seccomp, capabilities: what a child enters), allowlist (the bubblewrap root), cgroups, uids (leased
sandbox uids), isolation (the layers in words), preload (which zygote a job forks from). A pool per Ray node:
codea1.cluster.sandbox_pools (RayExecutor). Whether a value passes a test is codea1.judge's.

The names below are loaded on first use, so that the zygote (which imports `codea1.sandbox.values`)
does not also load the executor and what it imports: every module the zygote holds makes each fork dearer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see
    from codea1.sandbox.api import CallResult, Executor, Job, JobResult, OnProgress, SandboxError
    from codea1.sandbox.executor import LocalExecutor, isolation_level, isolation_report
    from codea1.sandbox.values import UNSERIALIZABLE, from_json, to_json

_EXPORTS = {
    "CallResult": "api",
    "Executor": "api",
    "Job": "api",
    "JobResult": "api",
    "OnProgress": "api",
    "SandboxError": "api",
    "LocalExecutor": "executor",
    "isolation_level": "executor",
    "isolation_report": "executor",
    "UNSERIALIZABLE": "values",
    "from_json": "values",
    "to_json": "values",
}

__all__ = [
    "UNSERIALIZABLE",
    "CallResult",
    "Executor",
    "Job",
    "JobResult",
    "LocalExecutor",
    "OnProgress",
    "SandboxError",
    "from_json",
    "isolation_level",
    "isolation_report",
    "to_json",
]


def __getattr__(name: str) -> Any:  # noqa: ANN401  (a lazily imported name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'codea1.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"codea1.sandbox.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
