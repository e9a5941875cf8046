"""Log-probs at the sampling temperature (as verl's actor and TRL's GRPO trainer take them): a sample
drawn at temperature T stores log softmax(logits / T) of its tokens, for every engine; the learner and
the reference score it at the same T, so the first PPO ratio is 1 and the first KL is 0."""

from __future__ import annotations

import pytest
import torch

from codea1.inference.rollout import TransformersRollout
from codea1.models import load_model_and_tokenizer
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

PROMPTS = [
    [{"role": "user", "content": "Two plus two?"}],
    [{"role": "user", "content": "def f(x):\n    return x * x\n# call it"}],
    [{"role": "user", "content": "Add two numbers."}, {"role": "assistant", "content": "def add(a, b):"}],
]


@pytest.fixture(scope="module")
def policy() -> Policy:
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    return Policy(model, tok, PolicyConfig(kl_coef=0.01, lr=1e-3, warmup_steps=0))


@torch.no_grad()
def reference_logprobs(model, prompt_ids, response_ids, temperature):
    """log softmax(logits / T) of each response token, one unpadded sequence at a time (no packing, no
    codea1 helper): the independent figure the engines are held to."""
    ids = torch.tensor([list(prompt_ids) + list(response_ids)])
    logits = model(input_ids=ids).logits[0, len(prompt_ids) - 1 : -1].float()
    logp = torch.log_softmax(logits / temperature, dim=-1)
    return logp.gather(-1, torch.tensor(response_ids)[:, None]).squeeze(-1).tolist()


def engines(policy):
    model, tok = policy.model, policy.tokenizer
    return {
        "loop (lean decoder)": policy.rollout,
        "loop (model forward)": TransformersRollout(model, tok, policy.logprobs, fast_decode=False),
        "loop (scoring pass)": TransformersRollout(model, tok, policy.logprobs, reuse_logprobs=False),
        "hf-generate": TransformersRollout(model, tok, policy.logprobs, engine="hf-generate"),
    }


@pytest.mark.parametrize("temperature", [0.7, 1.3])
def test_stored_logprobs_are_of_the_sampling_temperature_for_every_engine(policy, temperature):
    gen = GenerationConfig(n=2, temperature=temperature, top_p=0.95, max_new_tokens=12, seed=4)
    for name, engine in engines(policy).items():
        flat = [s for row in engine.generate(PROMPTS, gen) for s in row]
        assert all(s.temperature == temperature for s in flat), name
        got = [x for s in flat for x in s.logprobs]
        want = [x for s in flat for x in reference_logprobs(policy.model, s.prompt_ids, s.response_ids, temperature)]
        at_one = [x for s in flat for x in reference_logprobs(policy.model, s.prompt_ids, s.response_ids, 1.0)]
        assert len(got) == len(want) > 0
        assert max(abs(a - b) for a, b in zip(got, want, strict=False)) < 1e-4, name
        assert max(abs(a - b) for a, b in zip(got, at_one, strict=False)) > 1e-2, name  # really not the T=1 figures


def test_greedy_samples_keep_temperature_one(policy):
    rows = policy.generate(PROMPTS[:1], GenerationConfig(n=1, temperature=0.0, max_new_tokens=6))
    s = rows[0][0]
    assert s.temperature == 1.0
    ref = reference_logprobs(policy.model, s.prompt_ids, s.response_ids, 1.0)
    assert max(abs(a - b) for a, b in zip(s.logprobs, ref, strict=False)) < 1e-4


@pytest.mark.parametrize("temperature", [0.7, 1.3])
def test_first_ppo_ratio_is_one_and_first_kl_zero_at_any_temperature(temperature):
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    pol = Policy(model, tok, PolicyConfig(kl_coef=0.01, lr=1e-3, warmup_steps=0))
    flat = [
        s
        for row in pol.generate(PROMPTS, GenerationConfig(n=3, temperature=temperature, max_new_tokens=10, seed=1))
        for s in row
    ]
    # the learner's own scoring, per sample temperature, equals what was stored
    learner = pol.logprobs(
        [s.prompt_ids for s in flat], [s.response_ids for s in flat], temperature=[s.temperature for s in flat]
    )
    assert (
        max(abs(a - b) for s, lp in zip(flat, learner, strict=False) for a, b in zip(s.logprobs, lp, strict=False))
        < 1e-5
    )
    m = pol.train_step(flat, [1.0, -1.0, 0.5] * 3)
    assert m["clipfrac"] == 0.0 and m["clipfrac_lower"] == 0.0
    assert abs(m["ppo_kl"]) < 1e-6 and abs(m["kl"]) < 1e-6


def test_mixed_temperatures_in_one_batch_are_each_scored_at_their_own(policy):
    hot = policy.generate(PROMPTS[:2], GenerationConfig(n=1, temperature=1.3, max_new_tokens=8, seed=2))
    cold = policy.generate(PROMPTS[:2], GenerationConfig(n=1, temperature=0.7, max_new_tokens=8, seed=2))
    flat = [row[0] for row in hot + cold]
    scored = policy.logprobs(
        [s.prompt_ids for s in flat], [s.response_ids for s in flat], temperature=[s.temperature for s in flat]
    )
    for s, lp in zip(flat, scored, strict=False):
        ref = reference_logprobs(policy.model, s.prompt_ids, s.response_ids, s.temperature)
        assert max(abs(a - b) for a, b in zip(lp, ref, strict=False)) < 1e-4
