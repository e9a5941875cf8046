"""Packing (prompt, response) token lists into padded batches, and per-token log-probs of a model.

One layout everywhere (generation scoring, training, the reference model): prompts left-padded to the
longest prompt ``P``, responses right-padded to the longest response ``R``; position ids count only
real tokens, as ``generate`` does with left padding. The model returns logits for the last ``R + 1``
positions only (``logits_to_keep``), so long prompts cost no vocabulary-sized activations.
Using the same function for the sampling log-probs and the training log-probs makes the first PPO
ratio exactly 1 (up to batch-composition float noise).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from codea1.models import cache_argument, output_cache
from codea1.rl.chunked import DEFAULT_CHUNK, is_exact, score_logits, score_with

if TYPE_CHECKING:
    from transformers.utils import ModelOutput


@dataclass
class PackedBatch:
    """A padded batch: ``input_ids``/``attention_mask``/``position_ids`` are ``[B, P + R]``;
    ``response_ids``/``response_mask`` are ``[B, R]``."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    response_ids: torch.Tensor
    response_mask: torch.Tensor

    @property
    def response_len(self) -> int:
        return self.response_ids.shape[1]

    def to(self, device: torch.device | str) -> PackedBatch:
        return PackedBatch(
            *(
                t.to(device)
                for t in (self.input_ids, self.attention_mask, self.position_ids, self.response_ids, self.response_mask)
            )
        )


def pack(prompts: Sequence[Sequence[int]], responses: Sequence[Sequence[int]], pad_id: int) -> PackedBatch:
    """Left-pad prompts and right-pad responses into one batch (see the module docstring)."""
    if len(prompts) != len(responses):
        raise ValueError(f"{len(prompts)} prompts for {len(responses)} responses")
    p_len = max((len(p) for p in prompts), default=0)
    r_len = max((len(r) for r in responses), default=0)
    rows, masks, resp, resp_mask = [], [], [], []
    for p, r in zip(prompts, responses, strict=True):
        lp, lr = p_len - len(p), r_len - len(r)
        rows.append([pad_id] * lp + list(p) + list(r) + [pad_id] * lr)
        masks.append([0] * lp + [1] * (len(p) + len(r)) + [0] * lr)
        resp.append(list(r) + [pad_id] * lr)
        resp_mask.append([1] * len(r) + [0] * lr)
    attention = torch.tensor(masks, dtype=torch.long)
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    return PackedBatch(
        input_ids=torch.tensor(rows, dtype=torch.long),
        attention_mask=attention,
        position_ids=positions,
        response_ids=torch.tensor(resp, dtype=torch.long).reshape(len(responses), r_len),
        response_mask=torch.tensor(resp_mask, dtype=torch.long).reshape(len(responses), r_len),
    )


def temperature_column(temperatures: float | Sequence[float], rows: int) -> torch.Tensor | float:
    """The sampling temperature of each row as a ``[rows, 1, 1]`` tensor that divides ``[rows, R, V]``
    logits (a plain float when every row has the same one)."""
    if isinstance(temperatures, (int, float)):
        return float(temperatures)
    values = [float(t) for t in temperatures]
    if len(values) != rows:
        raise ValueError(f"{len(values)} temperatures for {rows} rows")
    if len(set(values)) <= 1:
        return values[0] if values else 1.0
    return torch.tensor(values, dtype=torch.float32).view(rows, 1, 1)


def forward_logprobs(
    model: torch.nn.Module,
    batch: PackedBatch,
    *,
    with_entropy: bool = False,
    entropy_grad: bool = False,
    temperature: float | Sequence[float] = 1.0,
    chunk: int = DEFAULT_CHUNK,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probs ``[B, R]`` of the response tokens (float32) under ``softmax(logits / T)`` and,
    optionally, the entropy of each such next-token distribution ``[B, R]`` (detached unless
    ``entropy_grad``: by default it is logged, not optimised). ``temperature`` is one T for the batch or
    one per row: the temperature each response was sampled at (verl's actor and TRL's GRPO trainer
    divide the logits the same way), so that stored, learner and reference log-probs are of the
    distribution that sampled. ``chunk``: positions whose logits exist at once (codea1.rl.chunked; 0: the
    whole pass's logits, the plain path)."""
    r_len = batch.response_len
    if r_len == 0:
        empty = torch.zeros(batch.input_ids.shape[0], 0)
        return empty, (empty if with_entropy else None)
    # position t predicts response token t; the last kept position predicts nothing (scored, then dropped)
    targets = torch.nn.functional.pad(batch.response_ids, (0, 1), value=0)
    _, logprobs, entropy = _forward_scored(
        model,
        targets,
        temperature,
        with_entropy,
        entropy_grad,
        chunk,
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        use_cache=False,
        logits_to_keep=r_len + 1,
    )
    return logprobs[:, :-1], (entropy[:, :-1] if entropy is not None else None)


def _forward_scored(
    model: torch.nn.Module,
    targets: torch.Tensor,
    temperature: float | Sequence[float],
    with_entropy: bool,
    entropy_grad: bool,
    chunk: int,
    **model_kwargs: Any,
) -> tuple[Any, torch.Tensor, torch.Tensor | None]:
    """``model(**model_kwargs)`` and the log-probs (and entropies) of ``targets`` ``[B, L]`` at its kept
    positions: scored chunk by chunk in the output layer where that is exact for this model, else from
    the whole logits (`score_logits`). A one-row forward is spread over the B rows of ``targets``."""
    rows = targets.shape[0]
    t = temperature_column(temperature, rows)
    if chunk > 0 and is_exact(model):
        return score_with(
            model, targets, t, with_entropy=with_entropy, entropy_grad=entropy_grad, chunk=chunk, **model_kwargs
        )
    out = model(**model_kwargs)
    logits = out.logits
    if logits.shape[0] == 1 and rows > 1:
        logits = logits.expand(rows, *logits.shape[1:])
    return (out, *score_logits(logits, targets, t, with_entropy, entropy_grad))


def forward_shared_prompt_logprobs(
    model: torch.nn.Module,
    prompt_ids: Sequence[int],
    responses: Sequence[Sequence[int]],
    pad_id: int,
    *,
    with_entropy: bool = False,
    entropy_grad: bool = False,
    temperature: float | Sequence[float] = 1.0,
    chunk: int = DEFAULT_CHUNK,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``forward_logprobs`` for G responses to one prompt, with the prompt computed once.

    The prompt runs as one row and its keys and values are repeated for the G responses, which then run
    right-padded after it (positions continue from the prompt's length). The result has the layout of
    ``forward_logprobs(model, pack([prompt] * G, responses, pad_id))``: ``[G, R]`` log-probs and
    entropies, equal up to float rounding, and gradients flow through the shared prompt (summed over the
    G responses, as the G copies' gradients would be). It saves the prompt's G - 1 repeats and all
    padding; a group of GRPO samples shares its prompt, so this is most of a learner step's tokens."""
    g = len(responses)
    r_len = max((len(r) for r in responses), default=0)
    if g == 0 or r_len == 0:
        empty = torch.zeros(g, 0)
        return empty, (empty if with_entropy else None)
    if not prompt_ids:
        raise ValueError("a shared prompt needs at least one token")
    device = next(model.parameters()).device
    p_len = len(prompt_ids)
    targets = torch.tensor([list(r) + [pad_id] * (r_len - len(r)) for r in responses], device=device)
    # the prompt's last position predicts each response's token 0
    head, logprobs, entropy = _forward_scored(
        model,
        targets[:, :1],
        temperature,
        with_entropy,
        entropy_grad,
        chunk,
        input_ids=torch.tensor([list(prompt_ids)], device=device),
        use_cache=True,
        logits_to_keep=1,
    )
    if r_len > 1:  # response tokens 0..R-2, after the prompt's keys and values, predict tokens 1..R-1
        tail_lp, tail_ent = _tail_scores(
            model, head, targets, temperature, p_len, responses, with_entropy, entropy_grad, chunk
        )
        logprobs = torch.cat([logprobs, tail_lp], dim=1)
        entropy = torch.cat([entropy, tail_ent], dim=1) if entropy is not None and tail_ent is not None else None
    return logprobs, entropy


def _tail_scores(
    model: torch.nn.Module,
    head: ModelOutput,
    targets: torch.Tensor,
    temperature: float | Sequence[float],
    p_len: int,
    responses: Sequence[Sequence[int]],
    with_entropy: bool,
    entropy_grad: bool,
    chunk: int,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The shared-prompt path's second pass: the G responses' tokens 0..R-2 after the prompt's keys and
    values (``head``'s cache, repeated G times), scoring tokens 1..R-1."""
    g, r_len = targets.shape
    device = targets.device
    cache = output_cache(head)
    cache.batch_repeat_interleave(g)
    lengths = torch.tensor([len(r) for r in responses], device=device).unsqueeze(1)
    body_mask = (torch.arange(r_len - 1, device=device) < lengths).long()
    _, logprobs, entropy = _forward_scored(
        model,
        targets[:, 1:],
        temperature,
        with_entropy,
        entropy_grad,
        chunk,
        input_ids=targets[:, : r_len - 1],
        attention_mask=torch.cat([torch.ones(g, p_len, dtype=torch.long, device=device), body_mask], dim=1),
        position_ids=torch.arange(p_len, p_len + r_len - 1, device=device).expand(g, r_len - 1),
        use_cache=True,
        **{cache_argument(model): cache},
    )
    return logprobs, entropy


def prompt_groups(prompts: Sequence[Sequence[int]], response_lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Row indices grouped by identical prompt (first-seen order), each group cut so that one pass over
    it, the prompt once plus its rows' longest response each, stays within ``budget`` tokens (a group
    holds at least one row)."""
    by_prompt: dict[tuple[int, ...], list[int]] = {}
    for i, p in enumerate(prompts):
        by_prompt.setdefault(tuple(p), []).append(i)
    out: list[list[int]] = []
    for key, rows in by_prompt.items():
        rows = sorted(rows, key=lambda i: -response_lengths[i])  # similar lengths together: less padding
        current: list[int] = []
        for i in rows:
            longest = response_lengths[current[0]] if current else response_lengths[i]
            if current and len(key) + longest * (len(current) + 1) > budget:
                out.append(current)
                current = []
            current.append(i)
        out.append(current)
    return out


def pack_lone_rows(groups: Sequence[list[int]], lengths: Sequence[int], budget: int) -> list[list[int]]:
    """`prompt_groups`' groups, with the groups of one row packed together into token-budget chunks of their
    whole lengths (`lengths`: prompt + response, by row index) instead: a lone row has no other row to
    share its prompt with, and one pass per lone row left a GPU waiting on kernel launches (a 16-row
    step of rows with distinct prompts at Qwen2.5-Coder-1.5B's shape ran 32 passes of one row: 3.6% MFU).
    The groups of several rows come first, as they were."""
    shared = [list(g) for g in groups if len(g) > 1]
    lone = [g[0] for g in groups if len(g) == 1]
    return shared + [[lone[j] for j in chunk] for chunk in token_budget_chunks([lengths[i] for i in lone], budget)]


def token_budget_chunks(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Group row indices into micro-batches whose padded size (rows x longest row) stays within
    ``budget`` tokens; rows are taken longest first so similar lengths share a micro-batch (less
    padding). A row longer than the budget gets a micro-batch of its own."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    chunks: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for i in order:
        new_longest = max(longest, lengths[i])
        if current and new_longest * (len(current) + 1) > budget:
            chunks.append(current)
            current, new_longest = [], lengths[i]
        current.append(i)
        longest = new_longest
    if current:
        chunks.append(current)
    return chunks
