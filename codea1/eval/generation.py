"""Sampling from a model for evaluation: chat prompts in, response texts out, seeded and recorded.

The sampling settings are a `codea1.config.Sampling` (the `eval` section of a config, or the options of
`codea1 eval`, which read the same keys). Uses a policy's rollout backend without an optimizer or the extra
scoring pass that training needs: the transformers sampling loop (codea1.inference.rollout.TransformersRollout),
or with engine="vllm" a vLLM engine (codea1.inference.vllm_backend.sampling_engine; GPU, the 'vllm' extra), which
renders the same prompts with the same tokenizer and samples from exactly the same settings.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from codea1.config import Sampling
from codea1.models import load_model_and_tokenizer

if TYPE_CHECKING:
    from vllm import LLM


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
        engine: str = "transformers",
        engine_options: dict[str, Any] | None = None,
        llm_class: type[LLM] | None = None,
    ):
        import torch

        from codea1.inference.rollout import TransformersRollout

        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1") or 1))
        self.sampling, self.seed, self.engine = sampling, seed, engine
        self.record = sampling_record(model, sampling, dtype=dtype, seed=seed) | {"engine": engine}
        self.model, self.tokenizer = load_model_and_tokenizer(model, dtype=dtype)
        self.model.eval()
        if engine == "vllm":
            from codea1.inference.vllm_backend import sampling_engine

            self.rollout = sampling_engine(
                model, self.model, self.tokenizer, seed=seed, dtype=dtype, llm_class=llm_class, **(engine_options or {})
            )
            self.model = None  # the engine holds its own copy of the weights
            return
        if engine != "transformers":
            raise ValueError(f"unknown sampling engine {engine!r} (transformers | vllm)")

        self.rollout = TransformersRollout(self.model, self.tokenizer)  # no learner log-probs needed

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

        # vLLM batches and schedules on its own: every prompt in one call (its seeds are per prompt)
        per_batch = (len(prompts) or 1) if self.engine == "vllm" else max(1, self.sampling.rows_per_call // max(1, n))
        out: list[list[str]] = []
        for b in range(0, len(prompts), per_batch):
            gen = GenerationConfig.of(self.sampling, n=n, seed=self.seed + seed_offset + b)
            batch = self.rollout.generate(prompts[b : b + per_batch], gen)
            out.extend([smp.text for smp in group] for group in batch)
            if progress is not None:
                progress(min(len(prompts), b + per_batch), len(prompts))
        return out
