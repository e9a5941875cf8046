"""What a rollout engine is (the `Engine` protocol), the two that sample with the policy's own model, and
the loader of the registry's entries (codea1.engines).

An engine does three things, each in one call:

- `check(cfg)`: refuse, before any model loads, a set-up it cannot run (one sentence);
- `attach(cfg, policies)`: give each training policy the `RolloutBackend` it samples with;
- `sampler(...)`: a backend that only samples from a loaded checkpoint (`codea1 eval`), configured from
  the same `rollout` section.

Every engine returns `codea1.inference.rollout.Sample` records from `generate(prompts, GenerationConfig)`:
one record type for samples and one for generation settings, whichever engine drew them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from codea1.engines import engine_entry
from codea1.inference.rollout import RolloutBackend, TransformersRollout, WeightSource

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from codea1.config import Config, RolloutSection


class TrainingPolicy(WeightSource, Protocol):
    """A policy an engine attaches to: the learner side (WeightSource) and the backend it samples with."""

    rollout: RolloutBackend


class Engine(Protocol):
    name: str
    # samples every prompt of a call at once and schedules them itself (evaluation hands it all prompts);
    # otherwise evaluation cuts a call into chunks of eval.rows_per_call rows
    batches_itself: bool
    # holds a copy of the weights of its own, synced from the learner (a sharded learner then keeps no
    # replica to sample from: codea1.rl.policy.Policy.shard)
    own_weights: bool

    def check(self, cfg: Config) -> None:
        """Refuse, before any model loads, what this machine or config cannot run (a UserError)."""
        ...

    def attach(self, cfg: Config, policies: Sequence[TrainingPolicy | None]) -> None:
        """Give each policy (None entries skipped) the backend it samples with during training."""
        ...

    def sampler(
        self,
        name: str,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        rollout: RolloutSection,
        *,
        seed: int,
        dtype: str,
        **hooks: Any,
    ) -> RolloutBackend:
        """A backend that samples from the loaded checkpoint `name` (no learner, no log-probs needed)."""
        ...


@dataclass(frozen=True)
class LocalEngine:
    """Sampling with the policy's own transformers model (codea1.inference.rollout.TransformersRollout):
    `loop`, codea1's sampling loop, or `hf-generate`, the model's own generate. Nothing to install, no
    weight sync (the engine is the learner's model)."""

    name: str
    batches_itself: bool = False
    own_weights: bool = False  # it samples with the learner's own model (or, sharded, its replica)

    def check(self, cfg: Config) -> None:
        return None

    def attach(self, cfg: Config, policies: Sequence[TrainingPolicy | None]) -> None:
        # the learner's sampling forward gives the log-probs it trains on only without autocast (float32); a
        # sharded learner samples with its full replica (codea1.rl.policy.Policy.shard)
        for policy in policies:
            if policy is not None:
                sharded = getattr(policy, "sharded", False)
                model = policy.replica if sharded else policy.model
                policy.rollout = TransformersRollout(
                    model,
                    policy.tokenizer,
                    engine=self.name,
                    reuse_logprobs=cfg.policy.dtype == "float32",
                    autocast=cfg.policy.dtype,
                )

    def sampler(
        self,
        name: str,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        rollout: RolloutSection,
        *,
        seed: int,
        dtype: str,
        **hooks: Any,
    ) -> RolloutBackend:
        # no learner log-probs needed; on CUDA it samples in `dtype` (autocast) as a learner would
        return TransformersRollout(model, tokenizer, engine=self.name, autocast=dtype)


LOOP = LocalEngine("loop")
HF_GENERATE = LocalEngine("hf-generate")


def load_engine(name: str) -> Engine:
    """The engine a `rollout.backend` value names (its module imported now)."""
    entry = engine_entry(name)
    module, _, attribute = entry.target.partition(":")
    return getattr(importlib.import_module(module), attribute)
