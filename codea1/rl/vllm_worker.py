"""The weight-sync end inside vLLM's workers: a worker extension (vLLM's `worker_extension_cls`), so that
`LLM.collective_rpc("codea1_load_weights", args=(bucket,))` runs in every worker of the engine, in this
process or in the engine's own processes, with any tensor parallelism. Only the method's name and plain
(name, tensor) pairs cross a process, never a closure (a pickled closure is what vLLM's multiprocess
executor and its message encoder refuse). Each worker hands the full tensors to its model's
`load_weights`, which keeps the shard of each tensor its rank holds, as when vLLM loads a checkpoint.
Imports nothing of vLLM: the engine resolves this class by its qualified name (WORKER_EXTENSION).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

WORKER_EXTENSION = "codea1.rl.vllm_worker.WeightSync"
LOAD_METHOD = "codea1_load_weights"


class WeightSync:
    """Mixed into vLLM's Worker class by the engine (it then has `self.model_runner`)."""

    def codea1_load_weights(self, weights: Sequence[tuple[str, Any]]) -> int:
        """Loads (name, tensor) pairs (names as in the learner's state_dict) into this worker's model;
        returns how many it was handed."""
        device = getattr(self, "device", None)
        pairs = [(name, t.to(device) if device is not None else t) for name, t in weights]
        self.model_runner.model.load_weights(weights=pairs)
        return len(pairs)
