"""What a training step needs of a policy, wherever the policy lives: the Protocols that
codea1.rl.policy.Policy (this process) and codea1.cluster.policies.RemotePolicy (a Ray actor) implement."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from codea1.inference.rollout import GenerationConfig, Sample

Prompt = Sequence[Mapping[str, str]]  # a chat prompt: {"role", "content"} messages


@runtime_checkable
class PolicyHandle(Protocol):
    """Samples responses and learns from their advantages; saves and loads its state."""

    def generate(self, prompts: Sequence[Prompt], gen: GenerationConfig | None = None) -> list[list[Sample]]: ...

    def train_step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> dict[str, Any]: ...

    def save(self, directory: str | Path) -> None: ...

    def load(self, directory: str | Path) -> None: ...


@runtime_checkable
class ConcurrentLearner(Protocol):
    """A policy whose update can start before another policy's has ended (its own process or actor):
    `submit_train_step` starts one and returns a callable that waits for its metrics."""

    def submit_train_step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> Callable[[], dict]: ...
