"""Sampling from a model for evaluation: chat prompts in, response texts out, seeded and recorded.

Uses the policy's rollout backend (codea1.rl.rollout.TransformersRollout) without an optimizer or the
extra scoring pass that training needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class SamplingSpec:
    """Everything that decides the samples, written into the results for reproducibility."""

    model: str
    dtype: str = "float32"
    temperature: float = 0.7
    top_p: float = 0.95
    max_new_tokens: int = 512
    seed: int = 0
    batch_size: int = 16

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Generator:
    """A loaded model that samples n responses per chat prompt."""

    def __init__(self, spec: SamplingSpec):
        import torch

        from codea1.models import load_model_and_tokenizer
        from codea1.rl.rollout import TransformersRollout

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
        self.spec = spec
        self.model, self.tokenizer = load_model_and_tokenizer(spec.model, dtype=spec.dtype)
        self.model.eval()

        def no_score(prompts: list[list[int]], responses: list[list[int]]) -> list[list[float]]:
            return [[0.0] * len(r) for r in responses]  # evaluation needs no log-probs

        self.rollout = TransformersRollout(self.model, self.tokenizer, no_score)

    def sample(
        self,
        prompts: list[list[dict[str, str]]],
        n: int,
        *,
        seed_offset: int = 0,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[list[str]]:
        """n response texts per prompt; prompts are processed in batches, each batch seeded from spec.seed."""
        from codea1.rl.rollout import GenerationConfig

        s = self.spec
        per_batch = max(1, s.batch_size // max(1, n))
        out: list[list[str]] = []
        for b in range(0, len(prompts), per_batch):
            gen = GenerationConfig(
                n=n,
                temperature=s.temperature,
                top_p=s.top_p,
                max_new_tokens=s.max_new_tokens,
                batch_size=s.batch_size,
                seed=s.seed + seed_offset + b,
            )
            batch = self.rollout.generate(prompts[b : b + per_batch], gen)
            out.extend([smp.text for smp in group] for group in batch)
            if progress is not None:
                progress(min(len(prompts), b + per_batch), len(prompts))
        return out
