"""DualPolicy: two LoRA adapters on one frozen base; switching adapters must keep them independent."""

from __future__ import annotations

import pytest
import torch

from codea1.models import load_model_and_tokenizer
from codea1.rl.dual import DualPolicy
from codea1.rl.policy import GenerationConfig, PolicyConfig

PROMPTS = [[{"role": "user", "content": "Write a function."}], [{"role": "user", "content": "Test it."}]]


@pytest.fixture
def dual() -> DualPolicy:
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    cfg = PolicyConfig(
        lora=True,
        lr=1e-2,
        weight_decay=0.0,
        warmup_steps=0,
        lora_r=4,
        lora_alpha=8,
        lora_targets=["q_proj", "v_proj", "up_proj", "down_proj"],
    )
    return DualPolicy(model, tok, cfg)


def _scores(policy, rows, reference=False):
    return torch.tensor(
        [
            x
            for lp in policy.logprobs([s.prompt_ids for s in rows], [s.response_ids for s in rows], reference=reference)
            for x in lp
        ]
    )


def _params(dual, tag):
    return {n: p.detach().clone() for n, p in dual.model.named_parameters() if tag in n}


def test_updating_one_adapter_leaves_the_other_and_the_base_unchanged(dual):
    samples = dual.code.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=8, seed=0))
    rows = [s for row in samples for s in row]
    adv = [1.0, -1.0, 0.5, -0.5, 1.0, -1.0]
    test_before, ref_before = _scores(dual.test, rows), _scores(dual.test, rows, reference=True)
    base_before = {n: p.detach().clone() for n, p in dual.model.named_parameters() if "lora_" not in n}
    test_params = _params(dual, ".test.")
    code_before = _scores(dual.code, rows)

    for _ in range(3):
        dual.code.train_step(rows, adv)
    code_after = _scores(dual.code, rows)
    assert not torch.allclose(code_after, code_before, atol=1e-4)  # the code adapter learned
    assert torch.equal(_scores(dual.test, rows), test_before)  # the test adapter's outputs did not move
    assert torch.equal(_scores(dual.code, rows, reference=True), ref_before)  # nor did the base
    assert all(torch.equal(p, test_params[n]) for n, p in _params(dual, ".test.").items())
    for n, p in dual.model.named_parameters():
        if "lora_" not in n:
            assert torch.equal(p, base_before[n]), n

    code_params = _params(dual, ".code.")
    tests = dual.test.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=8, seed=1))
    trows = [s for row in tests for s in row]
    for _ in range(3):
        dual.test.train_step(trows, adv)
    assert not torch.allclose(_scores(dual.test, rows), test_before, atol=1e-4)
    assert torch.equal(_scores(dual.code, rows), code_after)
    assert all(torch.equal(p, code_params[n]) for n, p in _params(dual, ".code.").items())


def test_each_half_owns_its_optimizer_and_generates_with_its_adapter(dual):
    code_ids = {id(p) for p in dual.code.params}
    test_ids = {id(p) for p in dual.test.params}
    assert code_ids and test_ids and not code_ids & test_ids
    assert dual.code.reference is None and dual.test.reference is None
    samples = dual.code.generate(PROMPTS[:1], GenerationConfig(n=4, max_new_tokens=6, seed=0))[0]
    for _ in range(5):
        dual.code.train_step(samples, [2.0, -2.0, 2.0, -2.0])
    # the sampling log-probs returned by each half are its own adapter's
    s_code = dual.code.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=6, seed=5))[0][0]
    s_test = dual.test.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=6, seed=5))[0][0]
    assert torch.allclose(torch.tensor(s_code.logprobs), _scores(dual.code, [s_code]), atol=1e-5)
    assert torch.allclose(torch.tensor(s_test.logprobs), _scores(dual.test, [s_test]), atol=1e-5)
    assert not torch.allclose(_scores(dual.code, [s_test]), _scores(dual.test, [s_test]), atol=1e-4)


def test_dual_save_load_restores_each_adapter(dual, tmp_path):
    samples = dual.code.generate(PROMPTS, GenerationConfig(n=2, max_new_tokens=6, seed=0))
    rows = [s for row in samples for s in row]
    dual.code.train_step(rows, [1.0, -1.0, 1.0, -1.0])
    dual.test.train_step(rows, [-1.0, 1.0, 1.0, -1.0])
    dual.code.save(tmp_path / "code_policy")
    dual.test.save(tmp_path / "test_policy")
    expect_code, expect_test = _scores(dual.code, rows), _scores(dual.test, rows)
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    fresh = DualPolicy(model, tok, dual.code.config)
    fresh.code.load(tmp_path / "code_policy")
    fresh.test.load(tmp_path / "test_policy")
    assert torch.allclose(_scores(fresh.code, rows), expect_code, atol=1e-6)
    assert torch.allclose(_scores(fresh.test, rows), expect_test, atol=1e-6)
    assert fresh.code.step == fresh.test.step == 1
