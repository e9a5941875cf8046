"""A lean decoding step for Llama-family models on CPU (the sampling loop's fast path).

A decoding step of a small model on a CPU spends much of its time outside the weights' matrix products:
the Python of ``transformers``' modules, the cache bookkeeping, seven separate linear calls per layer and
the attention kernel's set-up for a single query. ``LlamaDecoder`` computes the same step with the
model's own weights and a few tensor operations per layer:

- q, k and v come from one matrix product with the three weights stacked, gate and up from another
  (float32 MKL-packed copies, made once per ``generate`` call; the plain matmul's numbers);
- rotary embeddings from the model's own ``rotary_emb`` module (so rope scaling variants are the
  model's), RMS norms with ``torch.rms_norm``;
- keys (stored transposed) and values in preallocated buffers, attention as two batched matrix
  products over the filled positions with the left padding masked, grouped-query heads without copies;
- the logits from the model's output layer module (its hooks run).

The stacked weights and their packed copies exist only during one ``generate`` call (together about
twice the linear layers' size; the sampling loop uses the decoder only where the layers take at most
``rollout.PACK_MAX_BYTES``).

It is the same function as the model's forward for one new token per row (within float32 rounding:
tested against it), so the sampled distribution does not change. It applies only where that can be
checked from the model's structure: ``LlamaForCausalLM`` and ``Qwen2ForCausalLM`` without adapters,
float32 on CPU, SiLU MLPs, no tensor-parallel split, no sliding window. Every other model keeps the
plain forward (``LlamaDecoder.supports``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from transformers import Cache, PretrainedConfig, PreTrainedModel

SUPPORTED = ("LlamaForCausalLM", "Qwen2ForCausalLM")
GROW = 256  # positions the key/value buffers add when full


def _head_dim(config: PretrainedConfig) -> int:
    return getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads


def _linear(weights: list[torch.nn.Linear], rows: int, pack: bool):
    """One product for several linear layers of the same input: their weights stacked (and MKL-packed for
    ``rows`` rows where ``pack``); returns a function of the input."""
    w = torch.cat([m.weight.detach() for m in weights], dim=0).contiguous()
    biases = [m.bias for m in weights]
    bias = None
    if any(b is not None for b in biases):
        bias = torch.cat(
            [
                b.detach() if b is not None else m.weight.new_zeros(m.out_features)
                for b, m in zip(biases, weights, strict=True)
            ]
        )
    if pack:
        packed = torch.ops.mkl._mkl_reorder_linear_weight(w, rows)
        return lambda x: torch.ops.mkl._mkl_linear(x, packed, w, bias, rows)
    return lambda x: torch.nn.functional.linear(x, w, bias)


class LlamaDecoder:
    """Decoding steps for the rows of one chunk, continuing from a prefill's cache."""

    @staticmethod
    def supports(model: PreTrainedModel) -> bool:
        if type(model).__name__ not in SUPPORTED:
            return False
        config = model.config
        inner = getattr(model, "model", None)
        layers = getattr(inner, "layers", None)
        if layers is None or not hasattr(inner, "rotary_emb") or not hasattr(inner, "norm"):
            return False
        if getattr(config, "hidden_act", None) != "silu" or getattr(config, "pretraining_tp", 1) != 1:
            return False
        if getattr(config, "use_sliding_window", False) or getattr(config, "final_logit_softcapping", None):
            return False
        head_dim = _head_dim(config)
        try:
            for layer in layers:
                attn, mlp = layer.self_attn, layer.mlp
                linears = [
                    attn.q_proj,
                    attn.k_proj,
                    attn.v_proj,
                    attn.o_proj,
                    mlp.gate_proj,
                    mlp.up_proj,
                    mlp.down_proj,
                ]
                if any(type(m) is not torch.nn.Linear for m in linears):
                    return False  # adapters (peft) or quantised layers: the plain forward
                if attn.head_dim != head_dim or getattr(attn, "sliding_window", None):
                    return False
                for norm in (layer.input_layernorm, layer.post_attention_layernorm):
                    if not hasattr(norm, "variance_epsilon") or norm.weight.shape != (config.hidden_size,):
                        return False
        except AttributeError:
            return False
        weight = model.lm_head.weight
        return weight.device.type == "cpu" and weight.dtype == torch.float32

    def __init__(self, model: PreTrainedModel, rows: int, pack: bool) -> None:
        config = model.config
        self.model = model
        self.inner = model.model
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = _head_dim(config)
        self.layers = []
        for layer in self.inner.layers:
            attn, mlp = layer.self_attn, layer.mlp
            self.layers.append(
                (
                    layer.input_layernorm,
                    _linear([attn.q_proj, attn.k_proj, attn.v_proj], rows, pack),
                    _linear([attn.o_proj], rows, pack),
                    layer.post_attention_layernorm,
                    _linear([mlp.gate_proj, mlp.up_proj], rows, pack),
                    _linear([mlp.down_proj], rows, pack),
                    attn.scaling,
                )
            )
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self.length = 0
        self.mask = torch.empty(0)

    def start(self, cache: Cache, attention: torch.Tensor, room: int) -> None:
        """Takes over a prefill's cache (rows already selected) and its attention mask ``[B, L]``."""
        rows, length = attention.shape
        cap = length + max(1, min(room, GROW))
        kv, d = self.kv_heads, self.head_dim
        self.keys, self.values = [], []
        for i in range(len(self.layers)):
            k, v = cache.layers[i].keys, cache.layers[i].values  # [B, KV, L, D]
            # one matrix per (row, kv head): keys transposed (q @ k^T reads rows), values as they are
            kb = k.new_empty(rows * kv, d, cap)
            vb = v.new_empty(rows * kv, cap, d)
            kb[:, :, :length] = k.transpose(2, 3).reshape(rows * kv, d, length)
            vb[:, :length] = v.reshape(rows * kv, length, d)
            self.keys.append(kb)
            self.values.append(vb)
        self.length = length
        mask = torch.zeros(rows, cap, dtype=torch.float32)
        mask[:, :length].masked_fill_(attention == 0, float("-inf"))  # the left padding
        self.mask = mask.repeat_interleave(kv, dim=0)[:, None, :]  # [B * KV, 1, cap]
        self.room = room

    def select(self, index: torch.Tensor) -> None:
        """Keeps the rows ``index`` (in that order)."""
        kv = self.kv_heads
        index = (index[:, None] * kv + torch.arange(kv, device=index.device)).flatten()
        self.keys = [k[index] for k in self.keys]
        self.values = [v[index] for v in self.values]
        self.mask = self.mask[index]

    def _grow(self) -> None:
        add = max(1, min(self.room, GROW))
        self.keys = [torch.cat([k, k.new_empty(*k.shape[:2], add)], dim=2) for k in self.keys]
        self.values = [torch.cat([v, v.new_empty(v.shape[0], add, v.shape[2])], dim=1) for v in self.values]
        self.mask = torch.cat([self.mask, self.mask.new_zeros(*self.mask.shape[:2], add)], dim=2)

    def step(self, token: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, V]`` of the next token after ``token`` ``[B]`` at ``positions`` ``[B, 1]``."""
        if self.length >= self.values[0].shape[1]:
            self._grow()
        rows, t = token.shape[0], self.length
        n = t + 1
        heads, kv_heads, d = self.heads, self.kv_heads, self.head_dim
        half, qk_width, group = d // 2, (heads + kv_heads) * d, heads // kv_heads
        h = self.inner.embed_tokens(token)  # [B, hidden]
        cos, sin = self.inner.rotary_emb(h[:, None, :], positions)  # [B, 1, D]: broadcast over heads
        # rotate_half(x) * sin == roll(x, D/2) * sin with the first half's sign flipped
        sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
        mask = self.mask[:, :, :n]
        for i, (norm_in, qkv, out, norm_post, gate_up, down, scaling) in enumerate(self.layers):
            x = torch.rms_norm(h, norm_in.weight.shape, norm_in.weight, norm_in.variance_epsilon)
            y = qkv(x)
            qk = y[:, :qk_width].view(rows, heads + kv_heads, d)  # q and k rotated together
            qk = torch.addcmul(qk * cos, torch.roll(qk, half, dims=-1), sin)
            keys, values = self.keys[i], self.values[i]
            keys[:, :, t] = qk[:, heads:].reshape(rows * kv_heads, d)
            values[:, t] = y[:, qk_width:].reshape(rows * kv_heads, d)
            scores = torch.baddbmm(
                mask, qk[:, :heads].reshape(rows * kv_heads, group, d), keys[:, :, :n], alpha=scaling
            )
            attn = torch.bmm(torch.softmax(scores, dim=-1), values[:, :n])  # [B * KV, G, D]
            h = h + out(attn.view(rows, heads * d))
            x = torch.rms_norm(h, norm_post.weight.shape, norm_post.weight, norm_post.variance_epsilon)
            g, u = gate_up(x).chunk(2, dim=-1)
            h = h + down(torch.nn.functional.silu(g) * u)
        self.length = n
        self.room -= 1
        norm = self.inner.norm
        h = torch.rms_norm(h, norm.weight.shape, norm.weight, norm.variance_epsilon)
        return self.model.lm_head(h)
