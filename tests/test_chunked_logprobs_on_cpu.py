"""The chunked log-prob path (codea1.rl.chunked): the same log-probs, entropies and gradients as the whole
logits, never a vocabulary-sized tensor longer than a chunk, and the plain path where a model changes its
logits after the output layer."""

from __future__ import annotations

import copy
import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from codea1.models import load_model_and_tokenizer
from codea1.rl.chunked import is_exact
from codea1.rl.logprobs import forward_logprobs, forward_shared_prompt_logprobs, pack
from codea1.rl.policy import Policy, PolicyConfig, Sample

PROMPTS = [[5, 9, 3, 17, 2], [8, 1, 4, 4, 6, 7, 30, 2, 9], [11, 12, 13]]
RESPONSES = [[21, 22, 23, 24, 25, 26, 27], [31, 32, 33, 34], [41, 42, 43, 44, 45, 46]]
TEMPS = [0.7, 1.0, 1.3]


def _model(dtype: torch.dtype = torch.float32) -> torch.nn.Module:
    torch.manual_seed(0)
    model, _ = load_model_and_tokenizer("tiny-random")
    return model.to(dtype)


def _run(model: torch.nn.Module, chunk: int, shared: bool) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    if shared:
        lp, ent = forward_shared_prompt_logprobs(
            model, PROMPTS[0], RESPONSES, 0, with_entropy=True, entropy_grad=True, temperature=TEMPS, chunk=chunk
        )
    else:
        batch = pack(PROMPTS, RESPONSES, 0)
        lp, ent = forward_logprobs(model, batch, with_entropy=True, entropy_grad=True, temperature=TEMPS, chunk=chunk)
    assert ent is not None
    mask = pack(PROMPTS, RESPONSES, 0).response_mask.to(lp.dtype)
    ((lp * mask).sum() + 0.1 * (ent * mask).sum()).backward()
    return lp.detach(), ent.detach(), [p.grad.detach().double().clone() for p in model.parameters()]


def _distance(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    num = sum(float(((x - y) ** 2).sum()) for x, y in zip(a, b, strict=True))
    return math.sqrt(num / sum(float((x**2).sum()) for x in b))


@pytest.mark.parametrize("shared", [False, True], ids=["packed", "shared-prompt"])
@pytest.mark.parametrize("chunk", [1, 3, 1024])
def test_chunked_scores_equal_the_whole_logits_and_gradients_are_as_close_to_float64(shared: bool, chunk: int) -> None:
    model = _model()
    lp, ent, grads = _run(model, 0, shared)
    c_lp, c_ent, c_grads = _run(model, chunk, shared)
    assert c_lp.shape == lp.shape and c_ent.shape == ent.shape
    assert torch.allclose(c_lp, lp, atol=2e-6, rtol=0) and torch.allclose(c_ent, ent, atol=2e-6, rtol=0)
    truth = _run(copy.deepcopy(model).double(), 0, shared)[2]
    plain_err, chunked_err = _distance(grads, truth), _distance(c_grads, truth)
    assert chunked_err <= 2 * plain_err + 1e-7, (chunked_err, plain_err)  # float32 rounding, not a new error


class _WidestLogits(TorchDispatchMode):
    """Records the most rows of any tensor whose last dimension is the vocabulary, forward and backward
    (the output layer's weight seen transposed, ``[hidden, vocab]``, aside)."""

    def __init__(self, vocab: int, hidden: int) -> None:
        super().__init__()
        self.vocab, self.weight, self.rows = vocab, (hidden, vocab), 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor) and t.dim() and t.shape[-1] == self.vocab and tuple(t.shape) != self.weight:
                self.rows = max(self.rows, t.numel() // self.vocab)
        return out


@pytest.mark.parametrize("shared", [False, True], ids=["packed", "shared-prompt"])
def test_no_vocabulary_sized_tensor_longer_than_a_chunk_forward_or_backward(shared: bool) -> None:
    model = _model()
    vocab, hidden = model.get_output_embeddings().weight.shape
    tokens = sum(len(r) + 1 for r in RESPONSES)
    for chunk, bound in ((4, 4), (0, tokens - 3)):
        is_exact(model)  # the probe's own forwards are four tokens
        with _WidestLogits(vocab, hidden) as seen:
            _run(model, chunk, shared)
        if chunk:
            assert 0 < seen.rows <= bound, seen.rows
        else:  # the plain path holds the pass's logits whole (one row of the shared path's tail is padding)
            assert seen.rows >= bound, seen.rows


def test_a_model_that_changes_its_logits_after_the_output_layer_keeps_the_plain_path() -> None:
    from transformers import Gemma2Config, Gemma2ForCausalLM

    torch.manual_seed(0)
    config = Gemma2Config(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        final_logit_softcapping=3.0,  # tanh(logits / 3) * 3 after the output layer
    )
    model = Gemma2ForCausalLM(config).float()
    assert not is_exact(model)
    batch = pack([[1, 2, 3]], [[4, 5, 6]], 0)
    lp, _ = forward_logprobs(model, batch, chunk=2)
    with torch.no_grad():
        logits = model(**{k: getattr(batch, k) for k in ("input_ids", "attention_mask", "position_ids")}).logits
    expected = torch.log_softmax(logits[:, -4:-1].float(), -1).gather(-1, batch.response_ids.unsqueeze(-1))[..., 0]
    assert torch.allclose(lp, expected, atol=1e-6)
    assert is_exact(_model())


def test_a_deep_copy_scores_with_its_own_weights_and_plain_calls_still_give_logits() -> None:
    """The scoring forward is a bound method of the output layer: a copy (a replica, a reference) rebinds it."""
    model = _model()
    batch = pack(PROMPTS, RESPONSES, 0)
    forward_logprobs(model, batch, chunk=2)  # installs the scoring forward on this output layer
    twin = copy.deepcopy(model)
    with torch.no_grad():
        twin.get_output_embeddings().weight.mul_(2.0)
    assert not torch.allclose(forward_logprobs(twin, batch, chunk=2)[0], forward_logprobs(model, batch, chunk=2)[0])
    assert torch.allclose(
        forward_logprobs(twin, batch, chunk=2)[0], forward_logprobs(twin, batch, chunk=0)[0], atol=2e-6
    )
    out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
    assert out.logits.shape[-1] == model.config.vocab_size  # outside a scoring call: the output layer's logits


@pytest.mark.parametrize("overrides", [{}, {"kl_coef": 0.0, "lora": True}, {"dtype": "bfloat16"}])
def test_a_train_step_with_chunks_is_the_step_with_the_whole_logits(overrides: dict) -> None:
    metrics = []
    for chunk in (0, 2):
        model, tok = load_model_and_tokenizer("tiny-random")
        torch.manual_seed(0)
        cfg = PolicyConfig(lr=1e-3, warmup_steps=0, logprob_chunk=chunk, **overrides)
        policy = Policy(model, tok, cfg)
        scored = policy.logprobs(PROMPTS, RESPONSES, temperature=TEMPS)
        samples = [
            Sample(p, r, "", lp, True, temperature=t)
            for p, r, lp, t in zip(PROMPTS, RESPONSES, scored, TEMPS, strict=True)
        ]
        metrics.append(policy.train_step(samples, [1.0, -0.5, 0.25]))
    for key in ("loss", "kl", "entropy", "grad_norm"):
        assert metrics[1][key] == pytest.approx(metrics[0][key], rel=1e-4, abs=1e-6), key


def test_an_output_layer_with_a_hook_keeps_the_plain_path_while_the_hook_is_there() -> None:
    """A forward hook on the output layer expects logits (benchmarks/gpu_check.py masks EOS with one while it
    samples and scores): the scores would reach it instead. The plain path is used while it is there."""
    model = _model()
    batch = pack(PROMPTS, RESPONSES, 0)
    assert is_exact(model)
    eos = 7

    def no_eos(_module: torch.nn.Module, _inputs: tuple, output: torch.Tensor) -> torch.Tensor:
        output[..., eos] = -1e4
        return output

    hook = model.get_output_embeddings().register_forward_hook(no_eos)
    assert not is_exact(model)
    hooked, _ = forward_logprobs(model, batch, chunk=2)
    hook.remove()
    assert is_exact(model)
    plain, _ = forward_logprobs(model, batch, chunk=0)
    assert not torch.allclose(hooked, plain)  # the hook's masking counted, as in the plain path
    assert torch.allclose(forward_logprobs(model, batch, chunk=2)[0], plain, atol=2e-6)


def test_the_backward_recompute_leaves_the_global_rng_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpointing saved the global RNG's state with each chunk and put it back around the recompute: a
    sampling thread drawing meanwhile (train.one_step_off) had its draws rewound, and a run resumed from a
    checkpoint no longer matched the uninterrupted one. A draw made during the recompute stands for it."""
    from codea1.rl import chunked

    draws: list[float] = []
    real = chunked.token_logprobs

    def drawing(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        draws.append(float(torch.rand(())))  # another user of the global RNG, between save and restore
        return real(logits, targets)

    model = _model()
    assert is_exact(model)  # the probe's own forwards, before counting
    monkeypatch.setattr(chunked, "token_logprobs", drawing)
    torch.manual_seed(5)
    positions = len(PROMPTS) * (max(len(r) for r in RESPONSES) + 1)  # the packed pass: R + 1 kept a row
    chunk = positions // 2 + 1  # two chunks: a draw in each one's forward and in each one's recompute
    _run(model, chunk, shared=False)
    assert len(draws) == 4 and len(set(draws)) == 4
    torch.manual_seed(5)
    assert draws == [float(torch.rand(())) for _ in range(4)]  # four draws in a row, nothing rewound


def test_adamws_fused_step_is_its_foreach_step_and_the_default_only_on_cuda() -> None:
    """policy.adamw_fused: the fused kernel leaves out the foreach step's state-sized temporary (the 1.5B
    preset's peak, benchmarks/learner_memory.py); null picks it where the weights are on CUDA only."""
    weights = []
    for fused in (False, True):
        model, tok = load_model_and_tokenizer("tiny-random")
        torch.manual_seed(0)
        policy = Policy(model, tok, PolicyConfig(lr=1e-3, warmup_steps=0, adamw_fused=fused))
        assert bool(policy.optimizer.param_groups[0]["fused"]) is fused
        scored = policy.logprobs(PROMPTS, RESPONSES)
        samples = [Sample(p, r, "", lp, True) for p, r, lp in zip(PROMPTS, RESPONSES, scored, strict=True)]
        policy.train_step(samples, [1.0, -0.5, 0.25])
        weights.append([p.detach().clone() for p in policy.model.parameters()])
    assert all(torch.allclose(a, b, atol=1e-6, rtol=1e-5) for a, b in zip(*weights, strict=True))
    model, tok = load_model_and_tokenizer("tiny-random")
    assert not Policy(model, tok, PolicyConfig()).optimizer.param_groups[0]["fused"]  # a CPU learner: foreach
