"""GRPO maths as small pure tensor functions (docs/algorithm.md section 8).

Shapes: ``[B, T]`` tensors hold one row per response and one column per response token; ``mask`` is 1
for real response tokens and 0 for padding. Nothing here touches a model, an optimiser or global state,
so every function is tested on hand-computed numbers (tests/test_grpo_maths_on_cpu.py).

Conventions follow verl's ``core_algos`` (the reference code is a verl fork):
- advantages ``(r - mean_group) / (std_group + eps)`` with the unbiased (Bessel) std, in float64; a
  group of one response, or of equal rewards, gets advantage 0;
- the PPO ratio's log is clamped to [-20, 20]; clip-low/clip-high bound the ratio to
  ``[1 - clip_low, 1 + clip_high]``; dual-clip caps the loss of negative-advantage tokens at
  ``-adv * c``;
- the low-variance KL (k3) is ``exp(ref - logp) - (ref - logp) - 1`` with the log-ratio clamped to
  [-20, 20] and the result to [-10, 10].

Loss aggregation takes optional *global* denominators (``num_tokens``, ``num_seqs``) so that summing
the aggregated losses of several micro-batches equals the loss of the whole mini-batch: gradient
accumulation then gives exactly the full-batch gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from codea1.config import KL_TYPES, LOSS_AGG_MODES

# ------------------------------------------------------------------------------------------- advantages


def _group_normalise(scores: torch.Tensor, std_norm: bool, eps: float) -> torch.Tensor:
    """Normalise one 1-D group of scores, in float64 (returned in the input's dtype).

    A group whose scores are all equal carries no signal and gets exactly 0: in float32 the mean of
    eight 1/3s is not exactly 1/3, and dividing that rounding by (std + eps) made a visible advantage.
    """
    if scores.numel() < 2 or bool((scores == scores[0]).all()):
        return torch.zeros_like(scores)
    wide = scores.double()
    centred = wide - wide.mean()
    if std_norm:
        centred = centred / (wide.std(unbiased=True) + eps)
    return centred.to(scores.dtype)


def group_advantages(
    rewards: torch.Tensor | Sequence[Sequence[float]] | Sequence[float],
    group_ids: Sequence | None = None,
    *,
    std_norm: bool = True,
    eps: float = 1e-6,
) -> torch.Tensor | list[list[float]]:
    """GRPO outcome advantages: each reward minus its group's mean, divided by the group's std + eps.

    ``rewards`` is either a ``[G, n]`` tensor (one row per group), a list of per-group lists (groups may
    differ in size; the result is then a list of lists), or a flat sequence with ``group_ids`` naming
    each element's group (the result is then a flat tensor in input order). ``std_norm=False`` gives the
    Dr.GRPO variant (mean-centred only). The arithmetic is float64; tensors come back as float32.
    """
    if group_ids is not None:
        flat = torch.as_tensor(rewards, dtype=torch.float64).reshape(-1)
        if len(group_ids) != flat.numel():
            raise ValueError(f"group_ids has {len(group_ids)} entries for {flat.numel()} rewards")
        out = torch.zeros_like(flat)
        members: dict = {}
        for i, gid in enumerate(group_ids):
            members.setdefault(gid, []).append(i)
        for idx in members.values():
            index = torch.tensor(idx)
            out[index] = _group_normalise(flat[index], std_norm, eps)
        return out.float()
    if isinstance(rewards, torch.Tensor):
        scores = rewards.double()
        if scores.dim() != 2:
            raise ValueError("rewards tensor must be [groups, samples] (or pass group_ids)")
        out = torch.stack([_group_normalise(row, std_norm, eps) for row in scores]) if len(scores) else scores
        return out.float()
    return [_group_normalise(torch.tensor(list(row), dtype=torch.float64), std_norm, eps).tolist() for row in rewards]


# --------------------------------------------------------------------------------------- aggregation


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` where ``mask`` is 1 (0 when the mask is empty)."""
    return (values * mask).sum() / mask.sum().clamp(min=1)


def agg_loss(
    loss_mat: torch.Tensor,
    mask: torch.Tensor,
    mode: str = "token-mean",
    *,
    num_tokens: float | None = None,
    num_seqs: float | None = None,
    norm_constant: float | None = None,
) -> torch.Tensor:
    """Reduce a ``[B, T]`` per-token loss to a scalar.

    - ``token-mean``: sum over all valid tokens / number of valid tokens (long responses weigh more);
    - ``seq-mean-token-mean``: mean over sequences of each sequence's token mean (GRPO paper);
    - ``seq-mean-token-sum``: mean over sequences of each sequence's token sum;
    - ``seq-mean-token-sum-norm``: mean over sequences of token sum / ``norm_constant`` (Dr.GRPO: a
      constant such as the max response length; default ``T``, the padded length of this batch).

    ``num_tokens``/``num_seqs`` replace the local denominators by those of the whole mini-batch, for
    gradient accumulation over micro-batches.
    """
    mask = mask.to(loss_mat.dtype)
    masked = loss_mat * mask
    if mode == "token-mean":
        denom = mask.sum().clamp(min=1) if num_tokens is None else max(float(num_tokens), 1.0)
        return masked.sum() / denom
    seqs = loss_mat.shape[0] if num_seqs is None else num_seqs
    seqs = max(float(seqs), 1.0)
    if mode == "seq-mean-token-mean":
        per_seq = masked.sum(-1) / mask.sum(-1).clamp(min=1)
        return per_seq.sum() / seqs
    if mode == "seq-mean-token-sum":
        return masked.sum() / seqs
    if mode == "seq-mean-token-sum-norm":
        constant = float(loss_mat.shape[-1] if norm_constant is None else norm_constant)
        return masked.sum() / (seqs * constant)
    raise ValueError(f"unknown loss aggregation mode {mode!r}; use one of {', '.join(LOSS_AGG_MODES)}")


# ------------------------------------------------------------------------------------------ policy loss


def policy_loss(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float = 0.28,
    dual_clip: float | None = 10.0,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per-token clipped PPO loss ``[B, T]`` and its statistics (masked means over valid tokens).

    ``advantages`` is ``[B, T]`` or ``[B]`` (one per sequence, broadcast over tokens). Returns
    ``(loss_mat, stats)`` with ``stats``: ``clipfrac`` (tokens where the clipped term was the larger
    loss), ``clipfrac_lower`` (negative-advantage tokens capped by dual-clip), ``ppo_kl`` (mean of
    old - new log-prob). Aggregate ``loss_mat`` with :func:`agg_loss`.
    """
    if advantages.dim() == 1:
        advantages = advantages[:, None]
    advantages = advantages.expand_as(logprobs)
    log_ratio = torch.clamp(logprobs - old_logprobs, -20.0, 20.0)
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + clip_high)
    loss = torch.maximum(unclipped, clipped)
    mask_f = mask.to(logprobs.dtype)
    stats = {
        "clipfrac": masked_mean(torch.gt(clipped, unclipped).to(logprobs.dtype), mask_f).detach(),
        "ppo_kl": masked_mean(-log_ratio, mask_f).detach(),
    }
    if dual_clip is not None:
        if dual_clip <= 1.0:
            raise ValueError(f"dual_clip must be > 1, got {dual_clip}")
        cap = -advantages * dual_clip
        capped = torch.minimum(loss, cap)
        negative = advantages < 0
        stats["clipfrac_lower"] = masked_mean((torch.gt(loss, cap) & negative).to(logprobs.dtype), mask_f).detach()
        loss = torch.where(negative, capped, loss)
    else:
        stats["clipfrac_lower"] = torch.zeros((), dtype=logprobs.dtype)
    return loss, stats


# --------------------------------------------------------------------------- train/inference mismatch


def tis_weights(old_logprobs: torch.Tensor, engine_logprobs: torch.Tensor, cap: float) -> torch.Tensor:
    """Truncated importance sampling weights ``min(exp(old - engine), cap)`` per token, without gradient.

    ``old_logprobs`` are the learner's log-probs of the sampled tokens before the update, ``engine_logprobs``
    the sampling engine's own. The engine sampled from pi_engine while the clipped ratio is taken against
    pi_learner; multiplying each token's policy loss by this weight corrects the gradient for the gap, and
    the cap bounds its variance (verl's and TRL's token-level TIS)."""
    return torch.clamp(torch.exp(old_logprobs - engine_logprobs), max=cap).detach()


def mismatch_stats(
    old_logprobs: torch.Tensor, engine_logprobs: torch.Tensor, mask: torch.Tensor
) -> dict[str, torch.Tensor]:
    """How far the engine's log-probs are from the learner's on the sampled tokens (masked means):
    ``mismatch_abs`` = mean |engine - learner|; ``mismatch_kl`` = the k3 estimate of KL(engine || learner)
    from the engine's samples, ``exp(learner - engine) - (learner - engine) - 1``."""
    mask_f = mask.to(old_logprobs.dtype)
    # k3 is >= 0 per token; float rounding of exp(x) - x - 1 near x = 0 can land a hair below, so it is clamped
    k3 = kl_penalty(engine_logprobs, old_logprobs, "low_var_kl").clamp(min=0.0)
    return {
        "mismatch_abs": masked_mean((engine_logprobs - old_logprobs).abs(), mask_f).detach(),
        "mismatch_kl": masked_mean(k3, mask_f).detach(),
    }


def tis_stats(
    old_logprobs: torch.Tensor, engine_logprobs: torch.Tensor, mask: torch.Tensor, cap: float
) -> dict[str, torch.Tensor]:
    """What truncated importance sampling did to this batch's tokens (masked means), as verl and TRL log it:
    ``tis_weight_mean`` = mean of the capped weights ``min(exp(old - engine), cap)`` the loss was multiplied
    by; ``tis_capped_frac`` = the share of tokens whose raw ratio exceeded the cap (their correction cut)."""
    mask_f = mask.to(old_logprobs.dtype)
    raw = torch.exp(old_logprobs - engine_logprobs)
    return {
        "tis_weight_mean": masked_mean(torch.clamp(raw, max=cap), mask_f).detach(),
        "tis_capped_frac": masked_mean((raw > cap).to(mask_f.dtype), mask_f).detach(),
    }


# ------------------------------------------------------------------------------------------------- KL


def kl_penalty(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, kind: str = "low_var_kl") -> torch.Tensor:
    """Per-token estimate of KL(pi || pi_ref) from samples of pi.

    - ``k1``: ``logp - ref`` (unbiased, high variance, can be negative);
    - ``k2``: ``0.5 * (logp - ref)^2``;
    - ``low_var_kl`` (k3, default): ``exp(ref - logp) - (ref - logp) - 1`` (unbiased, >= 0), with the
      log-ratio clamped to [-20, 20] and the result to [-10, 10] for stability.
    """
    diff = logprobs - ref_logprobs
    if kind == "k1":
        return diff
    if kind == "k2":
        return 0.5 * diff.square()
    if kind == "low_var_kl":
        log_ratio = torch.clamp(-diff, -20.0, 20.0)
        return torch.clamp(torch.exp(log_ratio) - log_ratio - 1.0, -10.0, 10.0)
    raise ValueError(f"unknown KL estimator {kind!r}; use one of {', '.join(KL_TYPES)}")


# -------------------------------------------------------------------------------------- token-level


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of the categorical distribution over the last dim: ``logsumexp(z) - sum(softmax(z) * z)``."""
    logits = logits.float()
    probs = torch.softmax(logits, dim=-1)
    return torch.logsumexp(logits, dim=-1) - (probs * logits).sum(-1)


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Log-probability of each ``tokens[b, t]`` under ``logits[b, t, :]``, computed in float32."""
    logits = logits.float()
    picked = logits.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(logits, dim=-1)
