"""codea1.sandbox: isolated, fast execution of untrusted code with verdicts decided by the parent.

    from codea1.sandbox import Executor, Job
    with Executor() as ex:
        [res] = ex.run([Job(id="a", code="def f(x): return x * 2", calls=["f(2)"], expected=[4])])
        res.results[0].status  # "pass"

The names below are loaded on first use, so that the zygote (which imports `codea1.sandbox.values`)
does not also load the executor and what it imports: every module the zygote holds makes each fork dearer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and editors see
    from codea1.sandbox.executor import (
        CallResult,
        Executor,
        Job,
        JobResult,
        SandboxError,
        isolation_level,
        isolation_report,
    )
    from codea1.sandbox.values import UNSERIALIZABLE, from_json, to_json, values_equal

_EXPORTS = {
    "CallResult": "executor",
    "Executor": "executor",
    "Job": "executor",
    "JobResult": "executor",
    "SandboxError": "executor",
    "isolation_level": "executor",
    "isolation_report": "executor",
    "UNSERIALIZABLE": "values",
    "from_json": "values",
    "to_json": "values",
    "values_equal": "values",
}

__all__ = [
    "UNSERIALIZABLE",
    "CallResult",
    "Executor",
    "Job",
    "JobResult",
    "SandboxError",
    "from_json",
    "isolation_level",
    "isolation_report",
    "to_json",
    "values_equal",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'codea1.sandbox' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"codea1.sandbox.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
