"""Sampling from a model for evaluation: chat prompts in, response texts out, seeded and recorded.

The sampling settings are a `codea1.config.Sampling` (the `eval` section of a config, or the options of
`codea1 eval`, which read the same keys), and the engine is the `rollout` section's, as in training
(codea1.engines: loop, hf-generate or vllm; `codea1 eval --engine` sets rollout.backend). Each engine
renders the same prompts with the same tokenizer and samples from exactly the same settings, without an
optimizer or the extra scoring pass that training needs.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import Any

from codea1.config import RolloutSection, Sampling
from codea1.models import load_model_and_tokenizer


def sampling_record(model: str, sampling: Sampling, *, dtype: str, seed: int) -> dict[str, Any]:
    """Everything that decides the samples, written into the results for reproducibility."""
    fields = {f.name: getattr(sampling, f.name) for f in dataclasses.fields(Sampling)}
    return {"model": model, "dtype": dtype, "seed": seed, **fields}


class Generator:
    """A loaded model that samples n responses per chat prompt."""

    def __init__(
        self,
        model: str,
        sampling: Sampling,
        *,
        dtype: str = "float32",
        seed: int = 0,
        rollout: RolloutSection | None = None,
        **hooks: Any,
    ):
        """`rollout`: the engine and its settings (default: the section's defaults, the loop); `hooks`: passed
        to the engine's sampler (vLLM's llm_class and workdir, for tests)."""
        import torch

        from codea1.inference.engines import load_engine

        rollout = rollout if rollout is not None else RolloutSection()
        engine = load_engine(rollout.backend)
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
        self.sampling, self.seed, self.batches_itself = sampling, seed, engine.batches_itself
        self.record = sampling_record(model, sampling, dtype=dtype, seed=seed) | {"engine": engine.name}
        self.model, self.tokenizer = load_model_and_tokenizer(model, dtype=dtype)
        self.model.eval()
        self.rollout = engine.sampler(model, self.model, self.tokenizer, rollout, seed=seed, dtype=dtype, **hooks)
        if engine.batches_itself:
            self.model = None  # an engine of its own holds its own copy of the weights

    def sample(
        self,
        prompts: list[list[dict[str, str]]],
        n: int,
        *,
        seed_offset: int = 0,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[list[str]]:
        """n response texts per prompt; prompts are processed in batches, each batch seeded from the seed."""
        from codea1.inference.rollout import GenerationConfig

        # an engine that schedules on its own (vLLM) gets every prompt in one call (its seeds are per prompt)
        per_batch = (len(prompts) or 1) if self.batches_itself else max(1, self.sampling.rows_per_call // max(1, n))
        out: list[list[str]] = []
        for b in range(0, len(prompts), per_batch):
            gen = GenerationConfig.of(self.sampling, n=n, seed=self.seed + seed_offset + b)
            batch = self.rollout.generate(prompts[b : b + per_batch], gen)
            out.extend([smp.text for smp in group] for group in batch)
            if progress is not None:
                progress(min(len(prompts), b + per_batch), len(prompts))
        return out
