"""A policy: model + tokenizer + optimiser, able to sample, score and take GRPO steps.

``Policy`` wraps a causal LM for one role of the game (code_policy or test_policy):
- ``generate(prompts, GenerationConfig)``: n samples per chat prompt with their sampling log-probs;
- ``logprobs(prompt_ids, response_ids)``: per-token log-probs, micro-batched by a token budget;
- ``train_step(samples, advantages)``: one GRPO update (clipped PPO loss + KL to a reference) over
  ``mini_batches`` optimiser steps, with gradient accumulation over token-budget micro-batches;
- ``save(dir)`` / ``load(dir)``: weights (full model or LoRA adapter), optimiser, scheduler, RNG.

Full fine-tuning keeps a frozen copy of the initial model as the KL reference (two full policies may
share one copy: ``reference=``). With LoRA the reference is the same model with its adapter disabled,
so no second copy exists. ``dtype="bfloat16"`` computes in bf16 (autocast) while trainable weights and
AdamW state stay float32, so small learning rates are not rounded away.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from codea1.config import PolicyConfig
from codea1.errors import UserError
from codea1.inference.rollout import GenerationConfig, RolloutBackend, Sample, TransformersRollout
from codea1.models import unsharded_copy
from codea1.rl.distributed import (
    DataParallel,
    broadcast_from_rank0,
    full_value,
    fully_shard_model,
    is_sharded,
    optimizer_state_by_index,
    optimizer_state_by_name,
    rank0_first,
    stream_full_weights,
)
from codea1.rl.grpo import agg_loss, kl_penalty, masked_mean, mismatch_stats, policy_loss, tis_stats, tis_weights
from codea1.rl.logprobs import (
    forward_logprobs,
    forward_shared_prompt_logprobs,
    pack,
    pack_lone_rows,
    prompt_groups,
    token_budget_chunks,
)
from codea1.rl.rng import rng_state, set_rng_state

if TYPE_CHECKING:
    from peft import LoraConfig
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = ["GenerationConfig", "Policy", "PolicyConfig", "Sample", "lr_factor"]


def lr_factor(step: int, warmup: int, total: int, schedule: str = "cosine", min_ratio: float = 0.0) -> float:
    """Learning-rate multiplier at optimiser-schedule step ``step`` (0-based).

    Warm-up is linear, ``(step + 1) / warmup`` (the first step already moves); afterwards ``cosine``
    or ``linear`` decay from 1 to ``min_ratio`` at ``total``, or ``constant``.
    """
    if step < warmup:
        return (step + 1) / warmup
    if schedule == "constant":
        return 1.0
    progress = min(max((step - warmup) / max(1, total - warmup), 0.0), 1.0)
    if schedule == "linear":
        return min_ratio + (1.0 - min_ratio) * (1.0 - progress)
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _is_peft(model: torch.nn.Module) -> bool:
    return hasattr(model, "peft_config") and hasattr(model, "disable_adapter")


def lora_config(cfg: PolicyConfig) -> LoraConfig:
    """The peft ``LoraConfig`` described by a PolicyConfig."""
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        target_modules=list(cfg.lora_targets),
        task_type="CAUSAL_LM",
        bias="none",
    )


class Policy:
    """One trainable policy. See the module docstring for what it does; ``adapter_name`` selects one
    LoRA adapter of a shared peft model (the dual mode), which is made active before every use."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        config: PolicyConfig | None = None,
        *,
        adapter_name: str | None = None,
        reference: PreTrainedModel | None = None,
        rollout: RolloutBackend | None = None,
    ):
        self.config = cfg = config or PolicyConfig()
        self.tokenizer = tokenizer
        if cfg.lora and not _is_peft(model):
            from peft import get_peft_model

            model = get_peft_model(model, lora_config(cfg), adapter_name=adapter_name or "default")
        self.model = model
        self.adapter = (adapter_name or model.active_adapter) if _is_peft(model) else None
        self.device = next(model.parameters()).device
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.step = 0
        self.data_parallel: DataParallel | None = None  # set to spread train_step over ranks (rl.distributed)
        self.sharded = False  # FSDP2 (`shard`): this rank holds a shard of the weights and optimiser state
        self.replica: Any = None  # sharded: the full weights (to sample from), refreshed after every update

        self._activate()
        self.params = self._select_trainable()
        for p in self.params:
            p.requires_grad_(True)
            if p.dtype != torch.float32:
                p.data = p.data.float()  # fp32 master weights; compute dtype comes from autocast
        if cfg.gradient_checkpointing:
            if hasattr(self.model, "activation_checkpointing_enable"):  # the transformers 5 name
                self.model.activation_checkpointing_enable({"use_reentrant": False})
            else:
                self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            self.model.config.use_cache = False

        self.reference = None
        if cfg.kl_coef > 0 and self.adapter is None:
            self.reference = reference if reference is not None else make_reference(model, cfg.dtype)

        self._new_optimizer()
        # the sampling forward's log-probs equal ``logprobs`` only when that runs without autocast; else
        # train_step scores the rows it trains
        self.rollout: RolloutBackend = rollout or TransformersRollout(
            self.model, tokenizer, reuse_logprobs=cfg.dtype == "float32", autocast=cfg.dtype
        )

    # ------------------------------------------------------------------------------------- plumbing

    def _select_trainable(self) -> list[torch.nn.Parameter]:
        if self.adapter is None:
            return [p for p in self.model.parameters()]
        tag = f".{self.adapter}."
        params = [p for n, p in self.model.named_parameters() if "lora_" in n and tag in n]
        if not params:
            raise UserError(
                f"LoRA adapter {self.adapter!r} has no parameters; check lora_targets "
                f"{self.config.lora_targets} against the model's module names."
            )
        return params

    def _activate(self) -> None:
        """Make this policy's adapter the active one (no-op for full models)."""
        if self.adapter is not None and self.model.active_adapter != self.adapter:
            self.model.set_adapter(self.adapter)

    def _autocast(self) -> AbstractContextManager:
        if self.config.dtype == "float32":
            return nullcontext()
        dtype = torch.bfloat16 if self.config.dtype == "bfloat16" else torch.float16
        return torch.autocast(device_type=self.device.type, dtype=dtype)

    def _reference_context(self) -> AbstractContextManager:
        """Context in which ``self._reference_model()`` computes reference log-probs."""
        if self.adapter is not None:
            return self.model.disable_adapter()
        return nullcontext()

    def _reference_model(self) -> torch.nn.Module:
        return self.model if self.adapter is not None else self.reference

    @property
    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def num_trainable(self) -> int:
        return sum(p.numel() for p in self.params)

    # ----------------------------------------------------------------------------------- sharding

    def shard(
        self,
        dp: DataParallel,
        half_gathers: bool = False,
        *,
        from_rank0: bool = False,
        device: str | None = None,
        replica: bool = True,
    ) -> None:
        """Spreads the weights, gradients and AdamW state over the ranks of `dp` with FSDP2 (see
        codea1.rl.distributed). Every rank calls it, before the first update or load. Each rank also keeps
        a full replica of the weights, refreshed after every update, which samples its share of the
        prompts (the transformers loop; on the learner's device) or feeds its engine (vLLM; on the CPU);
        rank 0's is what checkpoints are written from.

        from_rank0: only rank 0 holds the weights (built on the CPU); the other ranks built the model on the
        meta device (codea1.models.load_model_skeleton) and take their shards, the reference's and every
        buffer from rank 0's broadcast, then fill their replicas from the shards: no rank but 0 reads or
        holds a full copy to start. device: where the shards (and the loop's replica) go (default: where
        the model is). replica: False for a policy an engine with weights of its own will sample
        (Engine.own_weights: vLLM), which feeds it from the shards (feed_engine_from_shards): no full copy is
        built at all."""

        if self.adapter is not None:
            raise UserError(
                "placement.fsdp shards full fine-tuning (model.mode: full); a LoRA learner's trained weights "
                "are small enough to replicate (placement.fsdp: false)"
            )
        if self.step or self.optimizer.state:
            raise ValueError("shard a policy before its first update or load")
        target = torch.device(device) if device is not None else self.device
        if target.type == "meta":
            raise ValueError("a policy built on the meta device is sharded with from_rank0 and a device")
        # the modules sharded here: the model, and the reference unless a policy sharing it did so already
        mine = [self.model] + (
            [self.reference] if self.reference is not None and not is_sharded(self.reference) else []
        )
        full = None  # rank 0's weights of those to broadcast: copies on the CPU, since sharding frees the
        # storage the modules' own tensors had
        if from_rank0 and dp.rank == 0:
            full = [{k: v.detach().to("cpu", copy=True) for k, v in m.state_dict().items()} for m in mine]
        own_loop = replica and isinstance(self.rollout, TransformersRollout) and self.rollout.model is self.model
        copied = None
        if replica:
            copied = _placed(copy.deepcopy(self.model), target if own_loop else torch.device("cpu"))
            copied.eval()
            for p in copied.parameters():
                p.requires_grad_(False)
        self.replica = copied
        if own_loop:
            rollout = copy.copy(self.rollout)
            rollout.model = copied
            self.rollout = rollout
        # half_gathers (placement.fsdp_half_gathers): a half-precision policy gathers its shards in that dtype,
        # half the all-gather bytes; the shards and AdamW stay float32
        half = self.config.dtype if half_gathers and self.config.dtype in ("bfloat16", "float16") else None
        for k, module in enumerate(mine):
            _placed(
                fully_shard_model(module, dp.group, compute_dtype=half if k == 0 else None, device=target.type), target
            )
        if from_rank0:
            for k, module in enumerate(mine):
                broadcast_from_rank0(module, full[k] if full is not None else {}, dp)
            if copied is not None:
                stream_full_weights(self.model, copied)
                with torch.no_grad():
                    theirs = dict(self.model.named_buffers())
                    for name, b in copied.named_buffers():
                        b.copy_(theirs[name].to(b.device, b.dtype))
        self.device = target
        self.data_parallel, self.sharded = dp, True
        self.params = list(self.model.parameters())
        self._new_optimizer()

    def _new_optimizer(self) -> None:
        """AdamW over `self.params` with the configured learning-rate schedule (built again when sharding
        replaces the parameters)."""
        cfg = self.config
        fused = cfg.adamw_fused
        if fused is None:  # CUDA: fused (torch's default there is foreach, with a state-sized temporary)
            fused = bool(self.params) and all(p.device.type == "cuda" for p in self.params)
        self.optimizer = torch.optim.AdamW(
            self.params, lr=cfg.lr, betas=tuple(cfg.betas), weight_decay=cfg.weight_decay, fused=fused or None
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: lr_factor(s, cfg.warmup_steps, cfg.total_steps, cfg.schedule, cfg.min_lr_ratio)
        )

    def feed_engine_from_shards(self) -> None:
        """Sharded, sampled by an engine with its own copy of the weights (vLLM): the full fp32 replica goes
        (4 bytes per parameter on the learner's GPU), and the engine takes each parameter gathered from the
        shards and cast to its dtype on the learner's device, as verl's sharded actors hand theirs over:
        the transfer stays the in-process or CUDA IPC one. A gather is a collective, so the engine is
        synced only where every rank is at once: after an update (VLLMRollout.presync) and a load; between
        them it stays awake (VLLMRollout.generate does not put it to sleep) and sleeps as the update
        starts (`train_step`), so no rank ever needs the weights again on its own."""
        if self.sharded:
            self.replica = None

    @property
    def gathers_for_engine(self) -> bool:
        """Sharded without a replica: its engine is fed from the shards (feed_engine_from_shards)."""
        return self.sharded and self.replica is None

    def engine_weights(self, dtype: str | None = None) -> Mapping[str, torch.Tensor]:
        """The full weights an engine loads (names as in the model's state_dict): the model's own, or,
        sharded, this rank's replica, or (feed_engine_from_shards) each one gathered from the shards and
        cast to ``dtype`` one at a time (a collective: every rank of the group calls it together)."""
        if not self.sharded:
            return self.model.state_dict()
        if self.replica is not None:
            return self.replica.state_dict()
        cast = getattr(torch, dtype) if dtype else None
        out = {}
        with torch.no_grad():
            for name, value in self.model.state_dict().items():
                full = full_value(value.detach())
                out[name] = full.to(cast) if cast is not None and full.is_floating_point() else full
        return out

    def _publish(self) -> None:
        """Sharded: refreshes every rank's replica from the shards, one parameter at a time (each gather
        gives every rank the whole parameter); without replicas (feed_engine_from_shards) the engine is
        synced by its backend instead."""

        if self.sharded and self.replica is not None:
            stream_full_weights(self.model, self.replica)

    # ----------------------------------------------------------------------------------- sampling

    def generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        gen: GenerationConfig | None = None,
        prompt_index: Sequence[int] | None = None,
        *,
        backend: RolloutBackend | None = None,
    ) -> list[list[Sample]]:
        """``gen.n`` samples per chat prompt (list of ``{"role", "content"}`` dicts), in prompt order;
        ``prompt_index``: their positions in a call shared over ranks (RolloutBackend.generate); ``backend``:
        another engine than the policy's own (a copy of its weights: codea1.train.one_step_off)."""
        self._activate()
        return (backend or self.rollout).generate(prompts, gen or GenerationConfig(), prompt_index)

    @torch.no_grad()
    def logprobs(
        self,
        prompt_ids: Sequence[Sequence[int]],
        response_ids: Sequence[Sequence[int]],
        *,
        reference: bool = False,
        temperature: float | Sequence[float] = 1.0,
    ) -> list[list[float]]:
        """Per-token log-probs of each response given its prompt (of the reference if ``reference``), under
        ``softmax(logits / temperature)``: one temperature for all rows, or one per row."""
        self._activate()
        model = self._reference_model() if reference else self.model
        if model is None:
            raise ValueError("this policy keeps no reference model (kl_coef is 0)")
        return self._logprobs_of(model, prompt_ids, response_ids, reference=reference, temperature=temperature)

    @torch.no_grad()
    def _logprobs_of(
        self,
        model: PreTrainedModel,
        prompt_ids: Sequence[Sequence[int]],
        response_ids: Sequence[Sequence[int]],
        *,
        reference: bool = False,
        temperature: float | Sequence[float] = 1.0,
    ) -> list[list[float]]:
        was_training = self.model.training
        self.model.eval()
        out: list[list[float]] = [[] for _ in prompt_ids]
        try:
            lengths = [len(p) + len(r) for p, r in zip(prompt_ids, response_ids, strict=True)]
            chunks: list[list[int] | None] = list(token_budget_chunks(lengths, self.config.micro_batch_tokens))
            if self.sharded and self.data_parallel is not None and model is not self.replica:
                # each pass of a sharded model gathers its blocks on every rank: all ranks run as many
                # passes (a rank scoring fewer rows, or none, runs one-token passes it throws away)
                chunks += [None] * (self.data_parallel.micro_batch_count(len(chunks)) - len(chunks))
            for idx in chunks:
                if idx is None:
                    with self._reference_context() if reference else nullcontext(), self._autocast():
                        forward_logprobs(
                            model,
                            pack([[self.pad_id]], [[self.pad_id]], self.pad_id).to(next(model.parameters()).device),
                            chunk=self.config.logprob_chunk,
                        )
                    continue
                batch = pack([prompt_ids[i] for i in idx], [response_ids[i] for i in idx], self.pad_id)
                # a fresh context per micro-batch: peft's disable_adapter() can be entered only once
                temps = temperature if isinstance(temperature, (int, float)) else [temperature[i] for i in idx]
                with self._reference_context() if reference else nullcontext(), self._autocast():
                    lp, _ = forward_logprobs(
                        model,
                        batch.to(next(model.parameters()).device),
                        temperature=temps,
                        chunk=self.config.logprob_chunk,
                    )
                for row, i in enumerate(idx):
                    out[i] = lp[row, : len(response_ids[i])].float().cpu().tolist()
        finally:
            self.model.train(was_training)
        return out

    # ----------------------------------------------------------------------------------- training

    def train_step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> dict[str, float]:
        """One GRPO update on ``samples`` with one advantage per sample; returns averaged metrics."""
        if len(samples) != len(advantages):
            raise ValueError(f"{len(samples)} samples but {len(advantages)} advantages")
        cfg = self.config
        lr = self.lr
        if not samples:
            return {"lr": lr, "num_samples": 0.0}
        self._activate()
        self._release_engine()
        samples = list(samples)
        advantages = [float(a) for a in advantages]
        n_mini = min(cfg.mini_batches, len(samples))
        bounds = [round(k * len(samples) / n_mini) for k in range(n_mini + 1)]
        # this rank's micro-batches of each mini-batch (they depend on the rows' tokens only), for every epoch
        plans = [self._plan(samples[bounds[k] : bounds[k + 1]]) for k in range(n_mini)]
        # samples from a backend without the learner's log-probs: scored now, before any update, and only
        # the rows this rank trains
        mine = [bounds[k] + i for k, plan in enumerate(plans) for chunk in plan for i in chunk]
        missing = [i for i in mine if len(samples[i].logprobs) != len(samples[i].response_ids)]
        if missing or self.sharded:  # (sharded: every rank takes part in every pass, even with none to score)
            scored = self.logprobs(
                [samples[i].prompt_ids for i in missing],
                [samples[i].response_ids for i in missing],
                temperature=[samples[i].temperature for i in missing],
            )
            for i, lp in zip(missing, scored, strict=True):
                samples[i] = dataclasses.replace(samples[i], logprobs=lp)

        totals: dict[str, float] = {}
        weights: dict[str, float] = {}

        def add(name: str, value: float, weight: float = 1.0) -> None:
            totals[name] = totals.get(name, 0.0) + value * weight
            weights[name] = weights.get(name, 0.0) + weight

        self.model.train()
        skipped = 0
        for _ in range(cfg.ppo_epochs):
            for k in range(n_mini):
                idx = list(range(bounds[k], bounds[k + 1]))
                stats = self._update([samples[i] for i in idx], [advantages[i] for i in idx], plans[k])
                if stats.pop("skipped", 0.0):
                    skipped += 1
                tokens = stats.pop("num_tokens")
                for name, value in stats.items():
                    add(name, value, tokens if name not in ("grad_norm",) else 1.0)
        self.scheduler.step()
        self.step += 1
        self.model.eval()
        self._publish()
        metrics = {name: totals[name] / max(weights[name], 1e-12) for name in totals}
        metrics.update(
            lr=lr,
            skipped_steps=float(skipped),
            num_samples=float(len(samples)),
            response_length=sum(len(s.response_ids) for s in samples) / len(samples),
            advantage_mean=sum(advantages) / len(advantages),
        )
        return metrics

    def _release_engine(self) -> None:
        """Fed from the shards (feed_engine_from_shards): the engine's GPU memory back to the learner as the
        update starts, where every rank is at once."""
        release = getattr(self.rollout, "release", None)
        if self.gathers_for_engine and callable(release):
            release()

    @property
    def shares_prompts(self) -> bool:
        """Whether the learner runs each group's shared prompt once (policy.shared_prompt; not with
        gradient checkpointing, which turns off the key/value cache it needs)."""
        return self.config.shared_prompt and not self.config.gradient_checkpointing

    def _rows_logprobs(
        self, model: torch.nn.Module, rows: list[Sample], **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per-token log-probs ``[rows, R]`` (and entropies) of the rows' responses under ``model``: with
        the prompt run once when the rows share it (shares_prompts), else packed."""
        prompt = rows[0].prompt_ids
        kwargs["chunk"] = self.config.logprob_chunk
        if self.shares_prompts and prompt and all(r.prompt_ids == prompt for r in rows):
            return forward_shared_prompt_logprobs(model, prompt, [r.response_ids for r in rows], self.pad_id, **kwargs)
        batch = pack([r.prompt_ids for r in rows], [r.response_ids for r in rows], self.pad_id).to(self.device)
        return forward_logprobs(model, batch, **kwargs)

    def _plan(self, samples: Sequence[Sample]) -> list[list[int]]:
        """This rank's micro-batches of one mini-batch (indices into ``samples``): whole groups when the
        learner shares their prompt, else token-budget chunks of its share."""
        cfg, dp = self.config, self.data_parallel
        if self.shares_prompts:  # whole groups per rank: each computes a group's prompt once
            groups = prompt_groups(
                [s.prompt_ids for s in samples], [len(s.response_ids) for s in samples], cfg.micro_batch_tokens
            )
            lengths = [len(s.prompt_ids) + len(s.response_ids) for s in samples]
            groups = pack_lone_rows(groups, lengths, cfg.micro_batch_tokens)
            return [groups[g] for g in (dp.shard(range(len(groups))) if dp is not None else range(len(groups)))]
        mine = dp.shard(range(len(samples))) if dp is not None else list(range(len(samples)))
        lengths = [len(samples[i].prompt_ids) + len(samples[i].response_ids) for i in mine]
        return [[mine[j] for j in local] for local in token_budget_chunks(lengths, cfg.micro_batch_tokens)]

    def _update(self, samples: list[Sample], advantages: list[float], plan: list[list[int]]) -> dict[str, float]:
        """Forward/backward over this rank's micro-batches (`plan`, from _plan), then one clipped optimiser step."""
        num_tokens = sum(len(s.response_ids) for s in samples)
        agg = {
            "num_tokens": num_tokens,
            "num_seqs": len(samples),
            "norm_constant": self.config.norm_constant or max(len(s.response_ids) for s in samples),
        }
        self.optimizer.zero_grad(set_to_none=True)
        sums = {"loss": 0.0, "pg_loss": 0.0, "kl": 0.0}
        token_stats = {"entropy": 0.0, "clipfrac": 0.0, "clipfrac_lower": 0.0, "ppo_kl": 0.0}
        # the engine's own log-probs, where the backend reports them (the same on every rank: one backend)
        engine_reported = any(s.engine_logprobs for s in samples)
        if engine_reported:
            token_stats.update(mismatch_abs=0.0, mismatch_kl=0.0)
            if self.config.tis_cap is not None:
                token_stats.update(tis_weight_mean=0.0, tis_capped_frac=0.0)
        dp = self.data_parallel
        # FSDP averages the reduced gradients over the ranks; the loss wants their sum
        scale = dp.world_size if self.sharded else 1
        for idx, weight in self._passes(samples, plan):
            mb = [samples[i] for i in idx]
            if max(len(s.response_ids) for s in mb) == 0:
                continue
            loss, stats, tokens = self._micro_batch_loss(mb, [advantages[i] for i in idx], engine_reported, agg)
            (loss * (weight * scale) if self.sharded else loss).backward()
            if weight == 0.0:
                continue
            share = tokens / max(num_tokens, 1)
            sums["loss"] += float(loss.detach())
            sums["pg_loss"] += stats["pg_loss"]
            sums["kl"] += stats["kl"]
            for name in token_stats:
                token_stats[name] += stats[name] * share
        if dp is not None:  # the whole mini-batch's gradient and statistics, on every rank
            if not self.sharded:  # (sharded: reduce-scattered by FSDP in each backward)
                dp.all_reduce_grads(self.params)
            names = [*sums, *token_stats]
            summed = dp.all_reduce_sum([{**sums, **token_stats}[k] for k in names])
            for k, v in zip(names, summed, strict=True):
                (sums if k in sums else token_stats)[k] = v
        cfg = self.config
        grad_norm = full_value(torch.nn.utils.clip_grad_norm_(self.params, cfg.grad_clip))
        skipped = not torch.isfinite(grad_norm)
        if skipped:
            self.optimizer.zero_grad(set_to_none=True)
        else:
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return {
            **sums,
            **token_stats,
            "grad_norm": float(grad_norm),
            "num_tokens": float(num_tokens),
            "skipped": float(skipped),
        }

    def _passes(self, samples: list[Sample], plan: list[list[int]]) -> list[tuple[list[int], float]]:
        """This rank's forward/backward passes: each micro-batch's sample indices and its weight. Sharded,
        each pass gathers the blocks on every rank, so all ranks run as many passes: a rank with fewer
        micro-batches adds zero-weighted passes over one of its samples."""
        if not self.sharded:
            return [(idx, 1.0) for idx in plan]
        chunks = [idx for idx in plan if any(samples[i].response_ids for i in idx)]
        extra = self.data_parallel.micro_batch_count(len(chunks)) - len(chunks)  # a collective: every rank
        filler = next((i for i, s in enumerate(samples) if s.response_ids), None)
        return [(idx, 1.0) for idx in chunks] + ([([filler], 0.0)] * extra if filler is not None else [])

    def _micro_batch_loss(
        self, mb: list[Sample], advantages: list[float], engine_reported: bool, agg: dict[str, int]
    ) -> tuple[torch.Tensor, dict[str, float], float]:
        """One micro-batch's loss (clipped policy gradient, corrected for the engine's log-probs where
        asked; KL to the reference and the entropy bonus where their coefficients are set), its statistics
        and its token count."""
        cfg = self.config
        r_len = max(len(s.response_ids) for s in mb)
        mask = torch.tensor(
            [[1.0] * len(s.response_ids) + [0.0] * (r_len - len(s.response_ids)) for s in mb], device=self.device
        )
        old = torch.tensor(
            [s.logprobs + [0.0] * (r_len - len(s.logprobs)) for s in mb], dtype=torch.float32, device=self.device
        )
        adv = torch.tensor(advantages, dtype=torch.float32, device=self.device)
        temps = [s.temperature for s in mb]  # each sample's own distribution (logits / T)
        with self._autocast():
            logp, entropy = self._rows_logprobs(
                self.model, mb, with_entropy=True, entropy_grad=cfg.entropy_coef > 0, temperature=temps
            )
        pg_mat, pg_stats = policy_loss(
            logp, old, adv, mask, clip_low=cfg.clip_low, clip_high=cfg.clip_high, dual_clip=cfg.dual_clip
        )
        if engine_reported:
            engine = torch.tensor([_engine_row(s, r_len) for s in mb], dtype=torch.float32, device=self.device)
            pg_stats.update(mismatch_stats(old, engine, mask))
            if cfg.tis_cap is not None:
                pg_mat = pg_mat * tis_weights(old, engine, cfg.tis_cap)
                pg_stats.update(tis_stats(old, engine, mask, cfg.tis_cap))
        pg = agg_loss(pg_mat, mask, cfg.loss_agg, **agg)
        loss = pg
        kl_value = 0.0
        if cfg.kl_coef > 0:
            with torch.no_grad(), self._reference_context(), self._autocast():
                ref_logp, _ = self._rows_logprobs(self._reference_model(), mb, temperature=temps)
            kl = agg_loss(kl_penalty(logp, ref_logp, cfg.kl_type), mask, cfg.loss_agg, **agg)
            loss = loss + cfg.kl_coef * kl
            kl_value = float(kl.detach())
        if cfg.entropy_coef > 0:
            loss = loss - cfg.entropy_coef * agg_loss(entropy, mask, cfg.loss_agg, **agg)
        stats = {k: float(v) for k, v in pg_stats.items()}
        stats.update(pg_loss=float(pg.detach()), kl=kl_value, entropy=float(masked_mean(entropy.detach(), mask)))
        return loss, stats, float(mask.sum())

    # ---------------------------------------------------------------------------------- save/load

    def save(self, directory: str | Path) -> None:
        """Write weights (model or adapter), optimiser, scheduler and RNG states into ``directory``. With
        data-parallel ranks every rank calls it and rank 0 writes (sharded: the full tensors, gathered; the
        files are those of one process, whatever the layout)."""
        d = Path(directory)
        dp = self.data_parallel
        optimizer = self._full_optimizer_state() if self.sharded else None
        full = self._full_model_state() if self.sharded and self.replica is None else None
        if dp is not None and dp.rank != 0:
            return
        self.save_weights(d, full)
        torch.save(optimizer if optimizer is not None else self.optimizer.state_dict(), d / "optimizer.pt")
        torch.save(self.scheduler.state_dict(), d / "scheduler.pt")
        torch.save(rng_state(), d / "rng.pt")
        info = {"step": self.step, "adapter": self.adapter, "config": asdict(self.config)}
        (d / "policy_state.json").write_text(json.dumps(info, indent=1, default=str))

    def save_weights(self, directory: str | Path, full: Mapping[str, torch.Tensor] | None = None) -> None:
        """Write the weights alone into ``directory``, as ``load_model_and_tokenizer`` loads them: the full
        HF model and tokenizer, or the LoRA adapter (its config names the base model). ``full``: a sharded
        policy without a replica, its full weights (`_full_model_state`, on rank 0)."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        if self.adapter is not None:
            from peft import get_peft_model_state_dict
            from safetensors.torch import save_file

            # save_embedding_layers=False: LoRA here never touches embeddings, and the "auto" check
            # would try to fetch the base config from the hub
            state = get_peft_model_state_dict(self.model, adapter_name=self.adapter, save_embedding_layers=False)
            save_file(
                {k: v.detach().contiguous().cpu() for k, v in state.items()}, str(d / "adapter_model.safetensors")
            )
            config = self.model.peft_config[self.adapter]
            if not config.base_model_name_or_path:  # an adapter added to a peft model (dual-lora) names none
                config.base_model_name_or_path = getattr(self.model.get_base_model(), "name_or_path", None)
            config.save_pretrained(str(d))
        elif full is not None:
            unsharded_copy(self.model, full).save_pretrained(str(d))
            self.tokenizer.save_pretrained(str(d))
        else:
            (self.replica if self.sharded else self.model).save_pretrained(str(d))
            self.tokenizer.save_pretrained(str(d))

    def load(self, directory: str | Path) -> None:
        """Restore what ``save`` wrote (into this already-built policy)."""
        d = Path(directory)
        if not (d / "policy_state.json").is_file():
            raise UserError(
                f"Policy checkpoint {d} is incomplete (no policy_state.json); point to a "
                "directory written by Policy.save."
            )
        if self.adapter is not None:
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            state = load_file(str(d / "adapter_model.safetensors"), device=str(self.device))
            result = set_peft_model_state_dict(self.model, state, adapter_name=self.adapter)
            if getattr(result, "unexpected_keys", None):
                raise UserError(f"Adapter checkpoint {d} does not match this model's LoRA layout.")
        else:
            # sharded: rank 0 alone reads the weights and the AdamW state, and broadcasts them tensor by
            # tensor as each rank takes its shards (no rank holds another full copy while loading); the
            # others wait for its reads off any collective (rank0_first), however slow the storage
            if self.sharded:
                read = rank0_first(self.data_parallel, lambda: self._read_full_weights(d), key=f"weights:{d}")
                state, problem = read or ({}, "")
            else:
                state, problem = self._read_full_weights(d)
            if self.sharded and self.data_parallel.all_reduce_sum([1.0 if problem else 0.0])[0]:
                problem = problem or f"Model checkpoint {d} does not match this model (as rank 0 read it)."
            if problem:  # on every rank: none waits in a broadcast that never comes
                raise UserError(problem)
            self._load_full_weights(state)
        if self.sharded:
            optimizer = rank0_first(
                self.data_parallel, lambda: torch.load(d / "optimizer.pt", map_location="cpu"), key=f"optimizer:{d}"
            )
            self._load_full_optimizer_state(optimizer)
        else:
            self.optimizer.load_state_dict(torch.load(d / "optimizer.pt", map_location=self.device))
        self.scheduler.load_state_dict(torch.load(d / "scheduler.pt"))
        set_rng_state(torch.load(d / "rng.pt", weights_only=False))
        self.step = int(json.loads((d / "policy_state.json").read_text())["step"])
        self._publish()
        if self.gathers_for_engine:  # every rank loads: the engine takes the loaded weights now, together
            sync = getattr(self.rollout, "sync_from", None)
            if callable(sync):
                sync(self)

    def _read_full_weights(self, d: Path) -> tuple[dict[str, torch.Tensor], str]:
        """A checkpoint's full weights (sharded: on the CPU) and what is wrong with them for this model
        ("" if nothing)."""
        from safetensors.torch import load_file

        device = "cpu" if self.sharded else str(self.device)
        state: dict[str, torch.Tensor] = {}
        for f in sorted(d.glob("*.safetensors")):
            state.update(load_file(str(f), device=device))
        names = {n for n, _ in self.model.named_parameters()} | {n for n, _ in self.model.named_buffers()}
        tied = _tied_names(self.model)
        unexpected = [k for k in state if k not in names and k not in tied]
        missing = [k for k, _ in self.model.named_parameters() if k not in state and k not in tied]
        if unexpected or missing:
            return state, (
                f"Model checkpoint {d} does not match this model ({len(missing)} missing, "
                f"{len(unexpected)} unexpected weights)."
            )
        return state, ""

    def _load_full_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Full tensors (a checkpoint's) into the model: as they are, or, sharded, rank 0's broadcast while
        each rank takes its shards (the other ranks pass nothing)."""
        if not self.sharded:
            self.model.load_state_dict(dict(state), strict=False)
            return
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        own = {n for n, _ in self.model.named_parameters()} | {n for n, _ in self.model.named_buffers()}
        set_model_state_dict(
            self.model,
            {k: v for k, v in state.items() if k in own},
            options=StateDictOptions(full_state_dict=True, strict=False, broadcast_from_rank0=True),
        )

    def _full_model_state(self) -> dict[str, torch.Tensor]:
        """Sharded: the full weights on rank 0's CPU (a collective; {} on the other ranks)."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        return get_model_state_dict(self.model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))

    def _param_names(self) -> list[str]:
        """The names of `self.params` in order (numbering the optimiser's state in its saved form)."""
        by_id = {id(p): n for n, p in self.model.named_parameters()}
        return [by_id[id(p)] for p in self.params]

    def _full_optimizer_state(self) -> dict[str, Any] | None:
        """Sharded: the whole AdamW state in `Optimizer.state_dict()`'s form, on rank 0 (a collective);
        None on the other ranks."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

        full = get_optimizer_state_dict(
            self.model, self.optimizer, options=StateDictOptions(full_state_dict=True, cpu_offload=True)
        )
        if self.data_parallel.rank != 0:
            return None
        return optimizer_state_by_index(full, self._param_names())

    def _load_full_optimizer_state(self, state: Mapping[str, Any] | None) -> None:
        """Sharded: the whole AdamW state (`Optimizer.state_dict()`'s form) on rank 0, None on the others;
        rank 0 broadcasts it as each rank takes its shards."""
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_optimizer_state_dict

        set_optimizer_state_dict(
            self.model,
            self.optimizer,
            optimizer_state_by_name(state, self._param_names()) if state is not None else {},
            options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True),
        )


# -------------------------------------------------------------------------------------------- helpers


def _placed(module: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    """`module` on `device`: moved there, or, built on the meta device, given (uninitialised) storage there
    (its tied weights tied again: `to_empty` gives each module's reference storage of its own)."""
    if any(t.is_meta for t in (*module.parameters(), *module.buffers())):
        module = module.to_empty(device=device)
        if hasattr(module, "tie_weights"):
            module.tie_weights()
        return module
    return module.to(device)


def _engine_row(sample: Sample, width: int) -> list[float]:
    """The engine's log-probs of a sample's tokens, padded to ``width``; a row whose engine reported none
    takes the learner's own (no gap, weight 1)."""
    row = sample.engine_logprobs if len(sample.engine_logprobs) == len(sample.response_ids) else sample.logprobs
    return row + [0.0] * (width - len(row))


def make_reference(model: torch.nn.Module, dtype: str = "float32") -> torch.nn.Module:
    """A frozen copy of ``model`` for the KL term (in the compute dtype, to halve it under bf16)."""
    ref = copy.deepcopy(model)
    if dtype in ("bfloat16", "float16"):
        ref = ref.to(getattr(torch, dtype))
    ref.eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def _tied_names(model: torch.nn.Module) -> set[str]:
    seen: dict[int, str] = {}
    tied = set()
    for name, p in model.named_parameters(remove_duplicate=False):
        if id(p) in seen:
            tied.add(name)
            tied.add(seen[id(p)])
        seen[id(p)] = name
    return tied
