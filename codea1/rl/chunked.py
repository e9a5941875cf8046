"""Token log-probs and entropies without the whole ``[tokens, vocab]`` logits.

A learner pass of 16,384 tokens over Qwen's 151,936-word vocabulary holds 8.4 GiB per float32 copy of
its logits, and the plain path keeps about four such copies alive (the float copy, the log-softmax's
saved tensors, the entropy's softmax, the gradient). Here the model's output layer is asked, for the
length of one forward, to score instead of to emit logits: it runs over ``chunk`` positions at a time,
turns each chunk's logits into the log-prob of its target token and the entropy at once, and keeps only
those two numbers a position. Under autograd each chunk is checkpointed, so the backward recomputes one
chunk's logits at a time (verl's ``FusedLinearForPPOFunction`` and TRL's ``selective_log_softmax`` bound
the same tensor; this does it with the model's own output layer, so LoRA on it, autocast and FSDP2's
gathers of the root's weights stay as they are).

The output layer answers inside the model's own forward (``logits = self.lm_head(hidden)`` in
transformers' causal LMs): what the model does to logits after that (Gemma's soft-capping, a logit scale)
would be done to the scores instead, so each output layer is probed once, on four tokens, against the
plain path; where the two disagree the plain path is used for that model (`is_exact`)."""

from __future__ import annotations

import threading
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.modules import module as torch_module
from torch.utils.checkpoint import checkpoint

from codea1.rl.grpo import entropy_from_logits, token_logprobs

# positions a chunk (policy.logprob_chunk): one chunk's float32 logits at Qwen's vocabulary are 0.58 GiB
DEFAULT_CHUNK = 1024

_active = threading.local()  # id(output layer) -> the _Scoring this thread asked of it


@dataclass
class _Scoring:
    """What one forward asks of the output layer: the target token of each kept position ``[B, L]``,
    the temperature of each row (a float, or ``[B, 1, 1]``), and whether to return entropies."""

    targets: torch.Tensor
    temperature: float | torch.Tensor
    with_entropy: bool
    entropy_grad: bool
    chunk: int


def output_layer(model: torch.nn.Module) -> torch.nn.Module | None:
    """The module that turns a causal LM's hidden states into logits (peft models pass it through)."""
    get = getattr(model, "get_output_embeddings", None)
    head = get() if callable(get) else None
    return head if isinstance(head, torch.nn.Module) else None


def _scoring_forward(self: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """The output layer's forward once `_install` put it there: its own forward, unless this thread asked
    it to score (`score_with`), then ``[B, L, 2]`` scores (log-prob, entropy) instead of logits."""
    spec = getattr(_active, "specs", {}).get(id(self))
    if spec is None:
        return type(self).forward(self, hidden)
    return _chunked_scores(lambda h: type(self).forward(self, h), hidden, spec)


def _install(head: torch.nn.Module) -> None:
    """Put `_scoring_forward` on ``head`` (once). A bound method of the module: a deep copy of the model
    (a replica, a reference) rebinds it to the copy, and other threads get the plain forward."""
    current = head.__dict__.get("forward")
    if not (isinstance(current, types.MethodType) and current.__func__ is _scoring_forward):
        head.forward = types.MethodType(_scoring_forward, head)


def _chunked_scores(head: Callable[[torch.Tensor], torch.Tensor], hidden: torch.Tensor, spec: _Scoring) -> torch.Tensor:
    rows, length = spec.targets.shape
    if hidden.shape[0] == 1 and rows > 1:  # one shared prompt's last position, for each of its rows
        hidden = hidden.expand(rows, *hidden.shape[1:])
    flat = hidden.reshape(rows * length, hidden.shape[-1])
    targets = spec.targets.reshape(rows * length)
    temp = spec.temperature
    if isinstance(temp, torch.Tensor):
        temp = temp.to(hidden.device).reshape(rows, 1).expand(rows, length).reshape(rows * length, 1)
    step = max(1, spec.chunk)
    # checkpointed only where the pass spans more than one chunk: one chunk's tensors are the whole pass's,
    # alive at the same moment with or without the recompute, which would only cost its time
    grad = torch.is_grad_enabled() and flat.requires_grad and rows * length > step
    pieces = []
    for start in range(0, rows * length, step):
        part_t = temp[start : start + step] if isinstance(temp, torch.Tensor) else temp
        args = (flat[start : start + step], targets[start : start + step], part_t)
        if grad:  # the chunk's scores draw no random numbers: the global RNG is left alone (its state saved
            # and put back around the recompute would rewind a sampling thread's draws: train.one_step_off)
            pieces.append(
                checkpoint(
                    _chunk_scores,
                    head,
                    *args,
                    spec.with_entropy,
                    spec.entropy_grad,
                    use_reentrant=False,
                    preserve_rng_state=False,
                )
            )
        else:
            pieces.append(_chunk_scores(head, *args, spec.with_entropy, spec.entropy_grad))
    # a tensor of its own, not a view: FSDP2 hooks the root's output for its backward (and warns of views)
    return torch.cat(pieces, dim=0).reshape(rows, length, 2).clone()


def score_logits(
    logits: torch.Tensor,
    targets: torch.Tensor,
    t: float | torch.Tensor,
    with_entropy: bool,
    entropy_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probs of ``targets`` under ``softmax(logits / t)`` (``t``: a float, or a tensor that broadcasts
    over the logits, `codea1.rl.logprobs.temperature_column`) and, optionally, the entropies (detached
    unless ``entropy_grad``): the plain path over the whole logits, and each chunk's here."""
    if isinstance(t, torch.Tensor):
        logits = logits.float() / t.to(logits.device)
    elif t != 1.0:
        logits = logits.float() / t
    logprobs = token_logprobs(logits, targets)
    entropy = None
    if with_entropy and entropy_grad:
        entropy = entropy_from_logits(logits)
    elif with_entropy:
        with torch.no_grad():
            entropy = entropy_from_logits(logits.detach())
    return logprobs, entropy


def _chunk_scores(
    head: Callable[[torch.Tensor], torch.Tensor],
    hidden: torch.Tensor,
    targets: torch.Tensor,
    temperature: float | torch.Tensor,
    with_entropy: bool,
    entropy_grad: bool,
) -> torch.Tensor:
    """``[n, 2]``: each position's log-prob of its target and its entropy (zeros unless asked)."""
    logprobs, entropy = score_logits(head(hidden), targets, temperature, with_entropy, entropy_grad)
    return torch.stack([logprobs, entropy if entropy is not None else torch.zeros_like(logprobs)], dim=-1)


def score_with(
    model: torch.nn.Module,
    targets: torch.Tensor,
    temperature: float | torch.Tensor,
    *,
    with_entropy: bool,
    entropy_grad: bool,
    chunk: int,
    **model_kwargs: Any,
) -> tuple[Any, torch.Tensor, torch.Tensor | None]:
    """Runs ``model(**model_kwargs)`` with its output layer scoring ``targets`` (``[B, L]``: the token each
    kept position predicts; a one-row forward is spread over the B rows) chunk by chunk. Returns the
    model's output (its ``logits`` field holds the scores) and the ``[B, L]`` log-probs and entropies."""
    head = output_layer(model)
    if head is None:
        raise ValueError("this model has no output layer to score with (get_output_embeddings)")
    _install(head)
    specs = getattr(_active, "specs", None)
    if specs is None:
        specs = _active.specs = {}
    specs[id(head)] = _Scoring(targets, temperature, with_entropy, entropy_grad, chunk)
    try:
        out = model(**model_kwargs)
    finally:
        specs.pop(id(head), None)
    scores = out.logits
    return out, scores[..., 0], (scores[..., 1] if with_entropy else None)


def _hooked(head: torch.nn.Module) -> bool:
    """Whether something else expects the output layer's logits: a forward hook on it (or on every module),
    or a forward of its own put on the instance (accelerate's device hooks) other than `_scoring_forward`."""
    own = head.__dict__.get("forward")
    foreign = own is not None and not (isinstance(own, types.MethodType) and own.__func__ is _scoring_forward)
    hooks = (head._forward_hooks, head._forward_pre_hooks)
    everywhere = (torch_module._global_forward_hooks, torch_module._global_forward_pre_hooks)
    return foreign or any(len(h) for h in (*hooks, *everywhere))


def is_exact(model: torch.nn.Module) -> bool:
    """Whether scoring in the output layer gives what the plain path computes from the model's logits,
    probed once per output layer (in eval mode, without gradients) on four tokens; False for a model whose
    forward changes its logits after the output layer, for an output layer with hooks that expect logits
    (asked at every call: a hook may come and go), or for a model without one."""
    head = output_layer(model)
    if head is None or _hooked(head):
        return False
    known = head.__dict__.get("_codea1_scores_exact")
    if known is not None:
        return bool(known)
    vocab = getattr(head, "out_features", None) or getattr(getattr(model, "config", None), "vocab_size", 4)
    device = next(model.parameters()).device
    ids = (torch.arange(4, device=device) * 7 % max(int(vocab), 1)).unsqueeze(0)
    targets = torch.roll(ids, -1, dims=1)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            plain = token_logprobs(model(input_ids=ids, use_cache=False).logits, targets)
            _, scored, _ = score_with(
                model, targets, 1.0, with_entropy=False, entropy_grad=False, chunk=2, input_ids=ids, use_cache=False
            )
        exact = scored.shape == plain.shape and bool(torch.allclose(scored.float(), plain.float(), atol=1e-3))
    finally:
        model.train(was_training)
    head.__dict__["_codea1_scores_exact"] = exact
    return exact
