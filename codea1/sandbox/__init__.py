"""codea1.sandbox: isolated, fast execution of untrusted code with verdicts decided by the parent.

    from codea1.sandbox import Executor, Job
    with Executor() as ex:
        [res] = ex.run([Job(id="a", code="def f(x): return x * 2", calls=["f(2)"], expected=[4])])
        res.results[0].status  # "pass"
"""

from codea1.sandbox.executor import CallResult, Executor, Job, JobResult, SandboxError, isolation_level
from codea1.sandbox.values import UNSERIALIZABLE, from_json, to_json, values_equal

__all__ = [
           "UNSERIALIZABLE",
           "CallResult",
           "Executor",
           "Job",
           "JobResult",
           "SandboxError",
           "from_json",
           "isolation_level",
           "to_json",
           "values_equal",
]
