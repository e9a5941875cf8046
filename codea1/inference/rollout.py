"""Rollout backends: one small interface to sample responses with their log-probs.

A backend turns chat prompts into ``n`` samples per prompt (token ids, text, per-token log-probs) and can
take new weights from the learner. Two implement it: the ``transformers`` backend here, which generates
with the policy's own model and so never needs a weight sync, and the vLLM backend
(codea1.inference.vllm_backend), whose engine follows the learner's weights. A prompt whose last message is an
``assistant`` message is a prefill: the response continues it (see ``render_prompts``)."""

from __future__ import annotations

import contextlib
import copy
import hashlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

import torch

from codea1.config import Sampling, knob
from codea1.inference.fast_decode import LlamaDecoder
from codea1.models import cache_argument, generation_config_holder, output_cache

if TYPE_CHECKING:
    from transformers import Cache, PreTrainedTokenizerBase


@dataclass
class Sample:
    """One sampled response: the tokens the policy saw and produced, and how likely it found them."""

    prompt_ids: list[int]  # includes the tokens of a prefill (a final assistant message), if any
    response_ids: list[int]  # generated tokens only; includes the end-of-sequence token when one was produced
    text: str  # prefill content + decoded response without special tokens, cut after the first stop string
    # per response token, under softmax(logits / temperature) of the learner's own forward; empty when the
    # backend cannot give those (another engine, another dtype): the learner scores, in train_step, only
    # the rows it trains
    logprobs: list[float]
    finished: bool  # True if it ended with EOS or a stop string, False if cut by max_new_tokens
    temperature: float = 1.0  # the distribution the log-probs are of (1.0 for greedy samples)
    # per response token, the sampling engine's own log-probs where they are not the learner's (vLLM, a
    # bf16 sampling forward); empty otherwise. The learner measures its gap to them (mismatch_*) and, with
    # policy.tis_cap, corrects its loss by them.
    engine_logprobs: list[float] = field(default_factory=list)


@dataclass
class GenerationConfig(Sampling):
    """How one generate call samples: a role's Sampling settings (defaults: the paper's temperature 1.0,
    top_p 1.0) plus the samples per prompt and the call's seed."""

    n: int = knob(1, "samples per prompt", low=1)
    seed: int | None = knob(None, "seed for this call (None: global RNG)")

    @classmethod
    def of(cls, sampling: Sampling, *, n: int, seed: int | None) -> GenerationConfig:
        """The call config of a Sampling section (or a section that extends it, such as eval)."""
        return cls(**{f.name: copy.deepcopy(getattr(sampling, f.name)) for f in fields(Sampling)}, n=n, seed=seed)


class RolloutBackend(Protocol):
    """What the trainer needs from a sampling engine."""

    def generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        gen: GenerationConfig,
        prompt_index: Sequence[int] | None = None,
    ) -> list[list[Sample]]:
        """``n`` samples for each chat prompt, in prompt order. ``prompt_index``: the prompts' positions
        in the whole call when this is a share of it (data-parallel sampling, `share_blocks`); the seeds
        derive from those positions, so a share samples what the whole call samples for its prompts."""
        ...

    def load_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        """Replace the engine's weights (names as in the learner's ``state_dict``)."""
        ...

    def sync_from(self, policy: WeightSource) -> None:
        """Bring the engine up to date with a learner policy after an update."""
        ...


class WeightSource(Protocol):
    """The learner side of a policy that an engine follows: its model (a transformers module; with LoRA
    under a peft wrapper whose adapter is `adapter`) and tokenizer. A learner that keeps its weights
    sharded also has ``engine_weights()``: the full weights, gathered."""

    model: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    adapter: str | None


def engine_weights(policy: WeightSource, dtype: str | None = None) -> Mapping[str, torch.Tensor]:
    """The full weights an engine takes from `policy`: its `engine_weights(dtype)` where it keeps them
    sharded (gathered from the shards in `dtype` where it keeps no replica), else its model's state_dict."""
    return policy.engine_weights(dtype) if hasattr(policy, "engine_weights") else policy.model.state_dict()


def chunk_seed(seed: int, first_row: int) -> int:
    """The seed of the chunk of a seeded generate call that starts at row `first_row` of the whole call
    (rows: prompts x samples, in order): the call's seed for the first chunk, so that a call of one chunk
    samples as it always has, and one derived from (seed, row) for every later chunk, so that a chunk
    samples alike whichever chunks ran before it (on this rank or another)."""
    if first_row == 0:
        return int(seed)
    digest = hashlib.sha256(f"{int(seed)}:{int(first_row)}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % (2**63)


def prompt_positions(prompts: int, prompt_index: Sequence[int] | None) -> list[int]:
    """The positions in the whole call of a generate call's prompts (all of them, in order, unless the
    call is a share: RolloutBackend.generate)."""
    index = list(prompt_index) if prompt_index is not None else list(range(prompts))
    if len(index) != prompts:
        raise ValueError(f"{prompts} prompts but {len(index)} prompt positions")
    return index


def share_blocks(prompts: int, n: int, rows_per_call: int, world: int) -> list[list[int]]:
    """The prompts of one generate call split over `world` ranks: blocks of whole chunks (lcm(rows_per_call,
    n) rows each, so that every rank's chunks hold exactly the rows one process's chunks hold, and the
    samples are the same), dealt round-robin. Returns each rank's prompt indices, in order."""
    rows_per_block = math.lcm(max(1, rows_per_call), max(1, n))
    per_block = max(1, rows_per_block // max(1, n))
    shares: list[list[int]] = [[] for _ in range(world)]
    for b, start in enumerate(range(0, prompts, per_block)):
        shares[b % world].extend(range(start, min(prompts, start + per_block)))
    return shares


def render_prompts(
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[Sequence[Mapping[str, str]]],
    max_prompt_tokens: int | None = None,
) -> list[list[int]]:
    """Chat messages -> token ids through the tokenizer's chat template, with the generation prompt.

    A prompt whose last message has role ``assistant`` is a prefill (a response prefix): it is rendered
    with ``continue_final_message`` instead of a generation prompt, so the model continues that message.
    Its tokens belong to the prompt (no log-probs, no loss); see :func:`prefill_text`.
    """
    out = []
    for messages in prompts:
        messages = list(messages)
        if prefill_text(messages) is not None:
            text = tokenizer.apply_chat_template(
                messages, continue_final_message=True, add_generation_prompt=False, tokenize=False
            )
        else:
            text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        ids = tokenizer(text, add_special_tokens=False).input_ids
        if max_prompt_tokens is not None and len(ids) > max_prompt_tokens:
            ids = ids[-max_prompt_tokens:]
        out.append(ids)
    return out


def prefill_text(messages: Sequence[Mapping[str, str]]) -> str | None:
    """The response prefix of a prompt (the content of a final ``assistant`` message), else None."""
    if messages and messages[-1].get("role") == "assistant":
        return str(messages[-1].get("content") or "")
    return None


def rendered_prefix(tokenizer: PreTrainedTokenizerBase, messages: Sequence[Mapping[str, str]]) -> str:
    """The response prefix as the rendered prompt ends with it (a chat template may trim the final
    message's trailing whitespace): the text a response of this prompt starts with; "" without one."""
    prefix = prefill_text(list(messages))
    if not prefix:
        return ""
    text = tokenizer.apply_chat_template(
        list(messages), continue_final_message=True, add_generation_prompt=False, tokenize=False
    )
    return prefix if text.endswith(prefix) else prefix.rstrip()


def logprob_temperature(temperature: float) -> float:
    """The temperature whose distribution a sample's log-probs are taken under: the sampling temperature
    (verl's actor and TRL's GRPO trainer divide the logits by it, so the PPO ratio compares the policy
    that really sampled), or 1 for greedy decoding (temperature 0 has no distribution)."""
    return float(temperature) if temperature > 0 else 1.0


def sample_next(
    logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row of ``logits`` ``[B, V]`` and its log-prob under ``softmax(logits / T)``, with T
    the sampling temperature (``logprob_temperature``: 1 for greedy). top-k and top-p shape the draw but
    not the log-prob, as in verl and TRL.

    The token is drawn from ``softmax(logits / temperature)`` restricted to the ``top_k`` most likely
    tokens (0: all), then to the smallest most-likely set whose mass reaches ``top_p``, renormalised;
    temperature 0 takes the argmax (the first one on ties). The draw is an inverse-CDF lookup of one
    float64 uniform per row in float64 running sums (``_inverse_cdf_draw``; not ``torch.multinomial``,
    which is slow on CPUs for large vocabularies); a token of probability zero is never drawn.
    """
    logits = logits.float()
    if temperature <= 0:
        token = logits.argmax(dim=-1)
        scaled = logits
    else:
        z = logits / temperature if temperature != 1.0 else logits
        scaled = z
        vocab = z.shape[-1]
        if 0 < top_k < vocab:
            kth = torch.topk(z, top_k, dim=-1).values[:, -1:]
            z = z.masked_fill(z < kth, float("-inf"))
        if top_p < 1.0:
            sorted_z, order = torch.sort(z, dim=-1, descending=True)
            p = torch.softmax(sorted_z, dim=-1)
            before = torch.cumsum(p, dim=-1) - p  # mass of the more likely tokens
            drop = before >= top_p
            drop[:, 0] = False
            z = z.scatter(-1, order, sorted_z.masked_fill(drop, float("-inf")))
        token = _inverse_cdf_draw(torch.softmax(z, dim=-1))
    return token, scaled.gather(-1, token[:, None]).squeeze(-1) - torch.logsumexp(scaled, dim=-1)


DRAW_BLOCK = 256  # tokens per block of the two-level inverse-CDF draw


def _inverse_cdf_draw(probs: torch.Tensor) -> torch.Tensor:
    """One token per row of ``probs`` ``[B, V]``: the first whose running sum (float64) exceeds a uniform
    draw times the row's total. Two levels, so that no float64 running sum over the whole vocabulary is
    needed (it took as long as a sixth of a SmolLM2 decoding step on CPU): the uniform picks a block of
    DRAW_BLOCK tokens by the running sum of the blocks' masses, then a token inside the block by the
    running sum of its tokens. The same inverse CDF, so the same distribution; a token of probability
    zero is never drawn."""
    rows, vocab = probs.shape
    pad = -vocab % DRAW_BLOCK
    if pad:
        probs = torch.nn.functional.pad(probs, (0, pad))
    blocks = probs.view(rows, -1, DRAW_BLOCK)
    block_cdf = torch.cumsum(blocks.sum(-1, dtype=torch.float64), dim=-1)
    u = torch.rand(rows, 1, dtype=torch.float64, device=probs.device) * block_cdf[:, -1:]
    block = torch.searchsorted(block_cdf, u, right=True).clamp(max=blocks.shape[1] - 1)
    before = torch.where(block > 0, block_cdf.gather(-1, (block - 1).clamp(min=0)), 0.0)
    inside = blocks.gather(1, block[:, :, None].expand(rows, 1, DRAW_BLOCK)).squeeze(1)  # [B, DRAW_BLOCK]
    inside_cdf = torch.cumsum(inside, dim=-1, dtype=torch.float64)
    index = torch.searchsorted(inside_cdf, u - before, right=True)
    # float64 rounding can leave the draw past the block's own sum: its last token of non-zero probability
    positive = torch.arange(DRAW_BLOCK, device=probs.device).expand(rows, -1).masked_fill(inside <= 0, -1)
    index = torch.minimum(index, positive.amax(-1, keepdim=True))
    return (block * DRAW_BLOCK + index).squeeze(-1).clamp(max=vocab - 1)


def _reserve(cache: Cache, tokens: int) -> None:
    """Let the plain dynamic layers of a transformers cache grow in place: their keys and values become
    views of buffers with room for up to ``tokens`` more positions, instead of a concatenation (a copy of
    the whole cache) per layer and step. Other caches and layer types are left as they are."""
    try:
        from transformers.cache_utils import DynamicLayer
    except ImportError:
        return
    for layer in getattr(cache, "layers", []):
        if type(layer) is DynamicLayer and getattr(layer, "is_initialized", False):
            layer.__class__ = _growing_layer_class(DynamicLayer)
            layer.room = tokens


_GROWING: dict[type, type] = {}
GROW_STEP = 256  # positions a growing cache layer adds when full (one copy per GROW_STEP tokens)


def _growing_layer_class(base: type) -> type:
    if base in _GROWING:
        return _GROWING[base]

    class GrowingLayer(base):  # type: ignore[misc, valid-type]
        """A dynamic cache layer whose keys/values are the filled part of preallocated buffers."""

        room = 0
        key_buffer: torch.Tensor | None = None
        value_buffer: torch.Tensor | None = None

        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            length, add = self.keys.shape[-2], key_states.shape[-2]
            if self.key_buffer is None or length + add > self.key_buffer.shape[-2]:
                # room for the rest of the generation, at most GROW_STEP positions at a time (memory)
                cap = length + max(add, min(self.room, GROW_STEP))
                self.key_buffer = self.keys.new_empty(*self.keys.shape[:-2], cap, self.keys.shape[-1])
                self.value_buffer = self.values.new_empty(*self.values.shape[:-2], cap, self.values.shape[-1])
                self.key_buffer[..., :length, :] = self.keys
                self.value_buffer[..., :length, :] = self.values
            self.key_buffer[..., length : length + add, :] = key_states
            self.value_buffer[..., length : length + add, :] = value_states
            self.keys = self.key_buffer[..., : length + add, :]
            self.values = self.value_buffer[..., : length + add, :]
            return self.keys, self.values

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            length = self.keys.shape[-2]
            if self.key_buffer is None:
                self.keys, self.values = self.keys[indices, ...], self.values[indices, ...]
                return
            self.key_buffer, self.value_buffer = self.key_buffer[indices, ...], self.value_buffer[indices, ...]
            self.keys = self.key_buffer[..., :length, :]
            self.values = self.value_buffer[..., :length, :]

    _GROWING[base] = GrowingLayer
    return GrowingLayer


def _cut_response(
    ids: list[int], tokenizer: PreTrainedTokenizerBase, eos_ids: set[int], stop: Sequence[str]
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


# Packed weights for the sampling loop on CPU: MKL's GEMM on a weight matrix packed once per generate call
# gives the plain matmul's float32 results (bit for bit on SmolLM2's layers; within rounding where small
# products take other kernels) faster on the skinny products of decoding (a few rows against each
# weight). The packed copies exist only during the call; linear layers smaller than PACK_MIN_PARAMS gain
# nothing, and a model whose packed copy would be larger than PACK_MAX_BYTES is left as it is (the copy
# doubles its weights' memory for the call).
PACK_MIN_PARAMS = 1 << 14
PACK_MAX_BYTES = 2 << 30


def _mkl_packing_available() -> bool:
    return bool(
        torch.backends.mkl.is_available()
        and hasattr(torch.ops.mkl, "_mkl_linear")
        and hasattr(torch.ops.mkl, "_mkl_reorder_linear_weight")
    )


@contextlib.contextmanager
def packed_linears(model: torch.nn.Module, rows: int, only: Sequence[torch.nn.Module] | None = None) -> Iterator[int]:
    """Within the block, the model's float32 CPU ``nn.Linear`` layers (LoRA base layers included; or those
    of ``only``) compute with MKL-packed copies of their weights (``rows``: the batch rows to pack for);
    yields how many layers were packed (0 where MKL packing is unavailable, the model is not a float32 CPU
    model, or it is too large). Inference only: the packed product has no gradient."""
    layers = [
        m
        for m in (model.modules() if only is None else only)
        if type(m) is torch.nn.Linear
        and m.weight.device.type == "cpu"
        and m.weight.dtype == torch.float32
        and m.weight.numel() >= PACK_MIN_PARAMS
    ]
    if not layers or not _mkl_packing_available() or _linear_bytes(layers) > PACK_MAX_BYTES:
        yield 0
        return
    rows = max(1, int(rows))
    try:
        for layer in layers:
            weight = layer.weight.detach()
            packed = torch.ops.mkl._mkl_reorder_linear_weight(weight, rows)
            bias = layer.bias.detach() if layer.bias is not None else None

            def forward(
                x: torch.Tensor,
                packed: torch.Tensor = packed,
                weight: torch.Tensor = weight,
                bias: torch.Tensor | None = bias,
            ) -> torch.Tensor:
                return torch.ops.mkl._mkl_linear(x, packed, weight, bias, rows)

            layer.forward = forward  # an instance attribute: nn.Module.__call__ finds it first
        yield len(layers)
    finally:
        for layer in layers:
            layer.__dict__.pop("forward", None)


ENGINES = ("loop", "hf-generate")


def _linear_bytes(modules: Iterable[torch.nn.Module]) -> int:
    """Bytes of the weights of the linear layers among ``modules``."""
    return sum(m.weight.numel() * m.weight.element_size() for m in modules if isinstance(m, torch.nn.Linear))


def sampling_autocast(device: torch.device, dtype: str) -> contextlib.AbstractContextManager:
    """The context the loop and hf-generate sample in: on CUDA, autocast to the policy's half dtype (the fp32
    master weights sampled in fp32 ran the paper preset's rollouts several times slower); on a CPU, none
    (float32 there is the fast path, MKL-packed, and what the CPU presets' learners score with)."""
    half = {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(dtype)
    if device.type != "cuda" or half is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type="cuda", dtype=half)


class TransformersRollout:
    """The default backend: samples with the policy's own ``transformers`` model.

    Two engines share the prompt rendering, the EOS ids and the stop-string cut:

    - ``loop`` (default): a sampling loop over the model's forward with a KV cache. Rows of a chunk
      that share a prompt (the ``n`` samples of one prompt) share one prefill; rows that end (EOS or a
      stop string) leave the batch. Each step samples from ``softmax(logits / temperature)`` restricted
      by ``top_k`` then ``top_p`` (temperature 0: argmax) and nothing else. With ``reuse_logprobs`` the
      stored log-probs are the generation forward's own (under ``softmax(logits / temperature)``,
      float32): they equal the
      training path's within float tolerance when that path computes in the model's dtype without
      autocast; otherwise the loop's own become the samples' ``engine_logprobs`` and the learner's
      are got as with ``hf-generate``. On CPU in float32 the linear
      layers compute with MKL-packed weights during the call (``packed_linears``; ``pack_weights``),
      which gives the plain matmul's numbers (within float32 rounding), faster.
    - ``hf-generate``: ``model.generate`` with left padding.

    Either way nothing is read from the checkpoint's ``model.generation_config`` except its EOS ids:
    sampling settings there (repetition penalties, top-k, ...) would make the samples off-policy for
    the stored log-probs. ``score``, where given, computes the learner's per-token log-probs of (prompt,
    response) pairs at sampling time; without it (the policy's choice, and evaluation's) the samples
    leave them empty and the learner scores, in ``train_step``, only the rows it trains.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        tokenizer: PreTrainedTokenizerBase,
        score: Callable[[list[list[int]], list[list[int]]], list[list[float]]] | None = None,
        *,
        engine: str = "loop",
        reuse_logprobs: bool = True,
        pack_weights: bool = True,
        fast_decode: bool = True,
        autocast: str = "float32",
    ):
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
        self.model = model
        self.tokenizer = tokenizer
        self.score = score
        self.engine = engine
        self.reuse_logprobs = reuse_logprobs
        self.pack_weights = pack_weights
        self.fast_decode = fast_decode
        self.autocast = autocast  # the policy's compute dtype: the sampling forward's on CUDA (sampling_autocast)

    def generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        gen: GenerationConfig,
        prompt_index: Sequence[int] | None = None,
    ) -> list[list[Sample]]:
        if gen.seed is not None:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(gen.seed)
                return self._generate(prompts, gen, prompt_index)
        return self._generate(prompts, gen, prompt_index)

    def eos_ids(self) -> set[int]:
        """End-of-sequence ids: the tokenizer's plus those of the model's generation config."""
        eos = self.tokenizer.eos_token_id
        ids = set(eos if isinstance(eos, list) else [eos])
        hf_gen = getattr(self.model, "generation_config", None)
        if hf_gen is not None and hf_gen.eos_token_id is not None:
            extra = hf_gen.eos_token_id
            ids |= set(extra if isinstance(extra, list) else [extra])
        return {int(i) for i in ids if i is not None}

    def _generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        gen: GenerationConfig,
        prompt_index: Sequence[int] | None = None,
    ) -> list[list[Sample]]:
        index = prompt_positions(len(prompts), prompt_index)
        tok = self.tokenizer
        prompt_ids = render_prompts(tok, prompts, gen.max_prompt_tokens)
        prefixes = [rendered_prefix(self.tokenizer, m) for m in prompts]
        rows = [ids for ids in prompt_ids for _ in range(gen.n)]
        eos_ids = self.eos_ids()
        pad = tok.pad_token_id if tok.pad_token_id is not None else min(eos_ids)
        responses: list[tuple[list[int], str, bool]] = []
        loop_logprobs: list[list[float]] = []  # the loop's own, at the sampling forward's dtype
        was_training = self.model.training
        self.model.eval()
        stack = contextlib.ExitStack()
        decoder = None
        if (
            self.engine == "loop"
            and self.fast_decode
            and LlamaDecoder.supports(self.model)
            and _linear_bytes(self.model.modules()) <= PACK_MAX_BYTES
        ):  # a copy of the weights for the call
            decoder = LlamaDecoder(self.model, gen.rows_per_call, pack=self.pack_weights and _mkl_packing_available())
        if self.engine == "loop" and self.pack_weights:  # same float32 results, faster on CPU (packed_linears)
            # the lean decoder stacks and packs the layers' weights itself: only the output layer here
            only = [self.model.get_output_embeddings()] if decoder is not None else None
            stack.enter_context(packed_linears(self.model, gen.rows_per_call, only))
        stack.enter_context(sampling_autocast(next(self.model.parameters()).device, self.autocast))
        try:
            for start in range(0, len(rows), max(1, gen.rows_per_call)):
                chunk = rows[start : start + gen.rows_per_call]
                if gen.seed is not None:  # each chunk seeded by its place in the whole call
                    torch.manual_seed(chunk_seed(gen.seed, index[start // gen.n] * gen.n + start % gen.n))
                if self.engine == "hf-generate":
                    raw = self._hf_generate(chunk, gen, eos_ids, pad)
                    chunk_lp = None
                else:
                    raw, chunk_lp = self._sample_loop(chunk, gen, eos_ids, pad, decoder)
                for i, ids in enumerate(raw):
                    cut = _cut_response(ids, tok, eos_ids, gen.stop)
                    responses.append(cut)
                    if chunk_lp is not None:
                        loop_logprobs.append(chunk_lp[i][: len(cut[0])])
        finally:
            stack.close()
            self.model.train(was_training)
        temperature = logprob_temperature(gen.temperature)
        own = self.engine == "loop" and self.reuse_logprobs  # the loop's log-probs are the learner's
        engine_logprobs = [[] for _ in rows] if own or not loop_logprobs else loop_logprobs
        if own:
            logprobs = loop_logprobs
        elif self.score is not None:
            logprobs = self.score(rows, [r[0] for r in responses], temperature=temperature)
        else:  # left to the learner, which scores the rows it trains
            logprobs = [[] for _ in rows]
        samples = [
            Sample(
                prompt_ids=list(p),
                response_ids=r[0],
                text=prefixes[k // gen.n] + r[1],
                logprobs=lp,
                finished=r[2],
                temperature=temperature,
                engine_logprobs=elp,
            )
            for k, (p, r, lp, elp) in enumerate(zip(rows, responses, logprobs, engine_logprobs, strict=True))
        ]
        return [samples[i * gen.n : (i + 1) * gen.n] for i in range(len(prompt_ids))]

    # ------------------------------------------------------------------------------- hf-generate

    def _hf_generate(
        self, chunk: list[list[int]], gen: GenerationConfig, eos_ids: set[int], pad: int
    ) -> list[list[int]]:
        from transformers import GenerationConfig as HFGenerationConfig

        device = next(self.model.parameters()).device
        width = max(len(r) for r in chunk)
        input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in chunk], device=device)
        attention = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in chunk], device=device)
        settings: dict[str, Any] = {
            "max_new_tokens": gen.max_new_tokens,
            "pad_token_id": pad,
            "eos_token_id": sorted(eos_ids),
            "use_cache": True,
            "repetition_penalty": 1.0,
            "no_repeat_ngram_size": 0,
            "num_beams": 1,
        }
        if gen.temperature > 0:
            settings.update(do_sample=True, temperature=gen.temperature, top_p=gen.top_p, top_k=gen.top_k)
        else:
            settings.update(do_sample=False)
        kwargs: dict[str, Any] = {}
        if gen.stop:
            settings.update(stop_strings=list(gen.stop))
            kwargs.update(tokenizer=self.tokenizer)
        hf_gen = HFGenerationConfig(**settings)
        # generate() fills every setting left unset from model.generation_config (the checkpoint's
        # sampling defaults); a blank one in its place for the call keeps only what is set here
        holder = generation_config_holder(self.model)
        saved = holder.generation_config
        holder.generation_config = HFGenerationConfig()
        try:
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=input_ids, attention_mask=attention, generation_config=hf_gen, **kwargs
                )
        finally:
            holder.generation_config = saved
        return out[:, width:].tolist()

    # ------------------------------------------------------------------------------------- loop

    @torch.inference_mode()
    def _sample_loop(
        self,
        chunk: list[list[int]],
        gen: GenerationConfig,
        eos_ids: set[int],
        pad: int,
        decoder: LlamaDecoder | None = None,
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Generated ids (uncut: up to EOS, a detected stop string or ``max_new_tokens``) and their
        log-probs at the sampling temperature, for each row of ``chunk``. The prefill is the model's forward; the
        decoding steps are ``decoder``'s where given, else the model's forward too."""
        model = self.model
        device = next(model.parameters()).device
        # one prefill per distinct prompt; its cache and last logits are then copied to each of its rows
        distinct: dict[tuple[int, ...], int] = {}
        which = [distinct.setdefault(tuple(r), len(distinct)) for r in chunk]
        uniq = [list(k) for k in distinct]
        width = max(len(r) for r in uniq)
        input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in uniq], device=device)
        attention = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in uniq], device=device)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        out = model(
            input_ids=input_ids, attention_mask=attention, position_ids=positions, use_cache=True, logits_to_keep=1
        )
        cache = output_cache(out)
        cache_arg = cache_argument(model)
        _reserve(cache, gen.max_new_tokens)
        logits = out.logits[:, -1, :].float()
        if which != list(range(len(uniq))):
            index = torch.tensor(which, device=device)
            cache.batch_select_indices(index)
            logits, attention = logits[index], attention[index]
        next_pos = attention.sum(-1, keepdim=True)  # the position of each row's next token
        if decoder is not None:
            decoder.start(cache, attention, gen.max_new_tokens)
            cache = None
        stops = [s for s in gen.stop if s]
        window = 4 * max((len(s) for s in stops), default=0) + 4  # tokens that can hold a stop (UTF-8)
        ids: list[list[int]] = [[] for _ in chunk]
        lps: list[list[float]] = [[] for _ in chunk]
        active = list(range(len(chunk)))  # chunk rows still in the batch, in batch order
        for step in range(gen.max_new_tokens):
            token, logp = sample_next(logits, gen.temperature, gen.top_k, gen.top_p)
            keep = []
            for j, (t, lp) in enumerate(zip(token.tolist(), logp.tolist(), strict=True)):
                row = active[j]
                ids[row].append(t)
                lps[row].append(lp)
                if t in eos_ids or (stops and self._stopped(ids[row], stops, window)):
                    continue
                keep.append(j)
            if not keep or step == gen.max_new_tokens - 1:
                break
            if len(keep) < len(active):
                index = torch.tensor(keep, device=device)
                if decoder is not None:
                    decoder.select(index)
                else:
                    cache.batch_select_indices(index)
                attention, next_pos, token = attention[index], next_pos[index], token[index]
                active = [active[j] for j in keep]
            if decoder is not None:
                logits = decoder.step(token, next_pos).float()
                next_pos = next_pos + 1
                continue
            attention = torch.cat([attention, attention.new_ones(len(active), 1)], dim=1)
            out = model(
                input_ids=token[:, None],
                attention_mask=attention,
                position_ids=next_pos,
                use_cache=True,
                **{cache_arg: cache},
            )
            cache = output_cache(out)
            logits = out.logits[:, -1, :].float()
            next_pos = next_pos + 1
        return ids, lps

    def _stopped(self, ids: list[int], stops: list[str], window: int) -> bool:
        """Whether the generated text holds a stop string: a cheap look at the last ``window`` tokens
        (the string ends in the newest token, as earlier steps found none), confirmed on the whole."""
        tail = self.tokenizer.decode(ids[-window:], skip_special_tokens=True)
        if not any(s in tail for s in stops):
            return False
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        return any(s in text for s in stops)

    def load_weights(self, state: Mapping[str, torch.Tensor]) -> None:
        _missing, unexpected = self.model.load_state_dict(dict(state), strict=False)
        if unexpected:
            raise ValueError(f"unexpected weight names for this model: {unexpected[:3]}")

    def sync_from(self, policy: WeightSource) -> None:
        """Nothing to do when the backend samples with the learner's own model (the usual case)."""
        if getattr(policy, "model", None) is self.model:
            return
        self.load_weights(engine_weights(policy))
