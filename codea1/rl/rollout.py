"""Rollout backends: one small interface to sample responses with their log-probs.

A backend turns chat prompts into ``n`` samples per prompt (token ids, text, per-token log-probs of
the sampling policy) and can take new weights from the learner. The interface is deliberately small so
that another engine (e.g. vLLM on GPUs) can implement it later; only the ``transformers`` backend
exists today. It generates with the policy's own model, so it never needs a weight sync.

Prefilled responses: a prompt whose last message is an assistant message is continued, not answered
(the chat template renders it open, with ``continue_final_message``). That message (the response
prefix, codea1.game.prompts.with_prefix) is part of ``Sample.prompt_ids``, so log-probs and losses never
cover it; ``response_ids`` are the generated tokens only; ``Sample.text`` is the prefix followed by the
generated text, so parsing sees the whole response; stop strings are searched in the generated text.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol

import torch

from codea1.config import Sampling, knob


@dataclass
class Sample:
    """One sampled response: the tokens the policy saw and produced, and how likely it found them."""

    prompt_ids: list[int]  # the rendered chat prompt, response prefix included
    response_ids: list[int]  # generated tokens only; includes the end-of-sequence token when one was produced
    text: str  # response prefix + decoded generated text without special tokens; cut after the first stop string
    logprobs: list[float]  # per response token, under the sampling policy (temperature 1 distribution)
    finished: bool  # True if it ended with EOS or a stop string, False if cut by max_new_tokens


@dataclass
class GenerationConfig(Sampling):
    """How one generate call samples: a role's Sampling settings (defaults: the paper's temperature 1.0,
    top_p 1.0) plus the samples per prompt and the call's seed."""

    n: int = knob(1, "samples per prompt", low=1)
    seed: int | None = knob(None, "seed for this call (None: global RNG)")

    @classmethod
    def of(cls, sampling: Sampling, *, n: int, seed: int | None) -> GenerationConfig:
        """The call config of a Sampling section (or a section that extends it, such as eval)."""
        return cls(**{f.name: copy.deepcopy(getattr(sampling, f.name)) for f in fields(Sampling)}, n=n,
                   seed=seed)


class RolloutBackend(Protocol):
    """What the trainer needs from a sampling engine."""

    def generate(self, prompts: Sequence[Sequence[Mapping[str, str]]], gen: GenerationConfig
                 ) -> list[list[Sample]]:
        """``n`` samples for each chat prompt, in prompt order."""
        ...

    def load_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Replace the engine's weights (names as in the learner's ``state_dict``)."""
        ...

    def sync_from(self, policy: Any) -> None:
        """Bring the engine up to date with a learner policy after an update."""
        ...


def response_prefix(messages: Sequence[Mapping[str, str]]) -> str:
    """The text a prompt makes its response start with: the content of a final assistant message, else ""."""
    if messages and messages[-1].get("role") == "assistant":
        return str(messages[-1].get("content") or "")
    return ""


def render_prompt_text(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """One chat prompt as text: with the generation prompt, or, when it ends with an assistant message
    (a response prefix), with that message left open to be continued."""
    if response_prefix(messages):
        return tokenizer.apply_chat_template(list(messages), continue_final_message=True,
                                             add_generation_prompt=False, tokenize=False)
    return tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)


def rendered_prefix(tokenizer: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """The response prefix as the rendered prompt ends with it (a template may trim its trailing
    whitespace): the text a response of this prompt starts with."""
    prefix = response_prefix(messages)
    if not prefix:
        return ""
    text = render_prompt_text(tokenizer, messages)
    return prefix if text.endswith(prefix) else prefix.rstrip()


def render_prompts(tokenizer: Any, prompts: Sequence[Sequence[Mapping[str, str]]],
                   max_prompt_tokens: int | None = None) -> list[list[int]]:
    """Chat messages -> token ids through the tokenizer's chat template, with the generation prompt (or
    the final assistant message left open, see `render_prompt_text`); longer prompts keep their last
    `max_prompt_tokens` tokens, so a response prefix is never cut."""
    out = []
    for messages in prompts:
        text = render_prompt_text(tokenizer, messages)
        ids = tokenizer(text, add_special_tokens=False).input_ids
        if max_prompt_tokens is not None and len(ids) > max_prompt_tokens:
            ids = ids[-max_prompt_tokens:]
        out.append(ids)
    return out


def _cut_response(ids: list[int], tokenizer: Any, eos_ids: set[int], stop: Sequence[str]
                  ) -> tuple[list[int], str, bool]:
    """Cut generated ids after the first EOS, then after the token completing the first stop string."""
    finished = False
    for i, t in enumerate(ids):
        if t in eos_ids:
            ids, finished = ids[: i + 1], True
            break
    text = tokenizer.decode(ids, skip_special_tokens=True)
    hits = [(text.find(s), s) for s in stop if s and s in text]
    if hits:
        pos, s = min(hits)
        end_char = pos + len(s)
        # smallest k whose decoded prefix contains the stop string (monotone in k: binary search)
        lo, hi = 1, len(ids)
        while lo < hi:
            mid = (lo + hi) // 2
            if s in tokenizer.decode(ids[:mid], skip_special_tokens=True):
                hi = mid
            else:
                lo = mid + 1
        ids, finished = ids[:lo], True
        text = text[:end_char]
    return ids, text, finished


class TransformersRollout:
    """The default backend: ``model.generate`` with left padding, then one scoring forward pass.

    ``score`` computes per-token log-probs of (prompt, response) pairs with the *training* code path
    (the policy passes its own ``logprobs``), so the stored sampling log-probs match train-time ones.
    """

    def __init__(self, model: torch.nn.Module, tokenizer: Any,
                 score: Callable[[list[list[int]], list[list[int]]], list[list[float]]]):
        self.model = model
        self.tokenizer = tokenizer
        self.score = score

    def generate(self, prompts: Sequence[Sequence[Mapping[str, str]]], gen: GenerationConfig
                 ) -> list[list[Sample]]:
        if gen.seed is not None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(gen.seed)
                return self._generate(prompts, gen)
        return self._generate(prompts, gen)

    def _generate(self, prompts: Sequence[Sequence[Mapping[str, str]]], gen: GenerationConfig
                  ) -> list[list[Sample]]:
        tok = self.tokenizer
        prompt_ids = render_prompts(tok, prompts, gen.max_prompt_tokens)
        rows = [ids for ids in prompt_ids for _ in range(gen.n)]
        prefixes = [rendered_prefix(tok, messages) for messages in prompts for _ in range(gen.n)]
        eos = tok.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos])
        gen_eos = getattr(self.model, "generation_config", None)
        if gen_eos is not None and gen_eos.eos_token_id is not None:
            extra = gen_eos.eos_token_id
            eos_ids |= set(extra if isinstance(extra, list) else [extra])
        pad = tok.pad_token_id if tok.pad_token_id is not None else eos
        device = next(self.model.parameters()).device
        responses: list[tuple[list[int], str, bool]] = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(rows), max(1, gen.batch_size)):
                chunk = rows[start:start + gen.batch_size]
                width = max(len(r) for r in chunk)
                input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in chunk], device=device)
                attention = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in chunk], device=device)
                kwargs: dict[str, Any] = {"max_new_tokens": gen.max_new_tokens, "pad_token_id": pad,
                                          "eos_token_id": sorted(eos_ids), "use_cache": True}
                if gen.temperature > 0:
                    kwargs.update(do_sample=True, temperature=gen.temperature, top_p=gen.top_p, top_k=gen.top_k)
                else:
                    kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
                if gen.stop:
                    kwargs.update(stop_strings=list(gen.stop), tokenizer=tok)
                with torch.no_grad():
                    out = self.model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
                for row in out[:, width:].tolist():
                    responses.append(_cut_response(row, tok, eos_ids, gen.stop))
        finally:
            self.model.train(was_training)
        logprobs = self.score(rows, [r[0] for r in responses])
        samples = [Sample(prompt_ids=list(p), response_ids=r[0], text=prefix + r[1], logprobs=lp, finished=r[2])
                   for p, prefix, r, lp in zip(rows, prefixes, responses, logprobs)]
        return [samples[i * gen.n:(i + 1) * gen.n] for i in range(len(prompt_ids))]

    def load_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        _missing, unexpected = self.model.load_state_dict(dict(state), strict=False)
        if unexpected:
            raise ValueError(f"unexpected weight names for this model: {unexpected[:3]}")

    def sync_from(self, policy: Any) -> None:
        """Nothing to do when the backend samples with the learner's own model (the usual case)."""
        if getattr(policy, "model", None) is self.model:
            return
        self.load_weights(policy.model.state_dict())
