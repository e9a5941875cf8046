"""GRPO maths on hand-computed numbers (each expected value is worked out in the comment beside it)."""

from __future__ import annotations

import math

import pytest
import torch

from codea1.rl.grpo import (
    agg_loss,
    entropy_from_logits,
    group_advantages,
    kl_penalty,
    policy_loss,
    token_logprobs,
)

# group [1, 0, 0, 1]: mean 0.5; unbiased std = sqrt((4 * 0.25) / 3) = 0.57735; 0.5 / 0.57735 = 0.866025
A = 0.5 / math.sqrt(1.0 / 3.0)


def close(x, y, tol=1e-5):
    return torch.allclose(torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32), atol=tol)


def test_group_advantages_tensor_std_on_and_off():
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [2.0, 2.0, 2.0, 2.0]])
    adv = group_advantages(rewards)
    assert close(adv[0], [A, -A, -A, A])
    assert close(adv[1], [0, 0, 0, 0])  # std 0: 0 / (0 + 1e-6) = 0, no blow-up
    assert close(group_advantages(rewards, std_norm=False)[0], [0.5, -0.5, -0.5, 0.5])


def test_group_advantages_eps_is_added_to_std():
    # group [0, 1e-6]: mean 5e-7, unbiased std = 7.0711e-7; adv = 5e-7 / (7.0711e-7 + 1e-6) = 0.29289
    adv = group_advantages(torch.tensor([[0.0, 1e-6]], dtype=torch.float64))
    assert close(adv[0], [-0.292893, 0.292893])


def test_group_advantages_ragged_lists_and_singletons():
    # [0, 3]: mean 1.5, unbiased std sqrt(4.5) = 2.12132 -> +-0.707107; a group of one has no baseline -> 0
    out = group_advantages([[1, 0, 0, 1], [0, 3], [5]])
    assert isinstance(out, list) and [len(r) for r in out] == [4, 2, 1]
    assert close(out[0], [A, -A, -A, A]) and close(out[1], [-0.707107, 0.707107]) and out[2] == [0.0]


def test_group_advantages_flat_with_group_ids():
    adv = group_advantages([1, 0, 3, 0, 1, 0], group_ids=["a", "a", "b", "a", "a", "b"])
    assert close(adv, [A, -A, 0.707107, -A, A, -0.707107])
    with pytest.raises(ValueError):
        group_advantages([1, 2], group_ids=["a"])


def _ratios_case():
    # tokens: (adv, ratio) = (+1, 1.5) (+1, 0.5) (-1, 1.5) (-1, 0.5) (-1, 20) (+2, 1.0) + one padding token
    adv = torch.tensor([[1.0, 1.0, -1.0, -1.0, -1.0, 2.0, 7.0]])
    ratio = torch.tensor([[1.5, 0.5, 1.5, 0.5, 20.0, 1.0, 99.0]])
    old = torch.zeros_like(ratio)
    new = ratio.log()
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    return new, old, adv, mask


def test_policy_loss_clip_low_high_and_dual_clip():
    new, old, adv, mask = _ratios_case()
    loss, stats = policy_loss(new, old, adv, mask, clip_low=0.2, clip_high=0.28, dual_clip=10.0)
    # (+1,1.5): max(-1.5, -1.28) = -1.28 (clipped)   (+1,0.5): max(-0.5, -0.8) = -0.5
    # (-1,1.5): max(1.5, 1.28) = 1.5                  (-1,0.5): max(0.5, 0.8) = 0.8 (clipped)
    # (-1,20): max(20, 1.28) = 20, dual-clip min(20, 10) = 10   (+2,1): -2
    assert close(loss[0, :6], [-1.28, -0.5, 1.5, 0.8, 10.0, -2.0])
    assert close(agg_loss(loss, mask), 8.52 / 6)
    assert close(stats["clipfrac"], 2 / 6)
    assert close(stats["clipfrac_lower"], 1 / 6)
    # ppo_kl = mean(-log r) = -(2 ln1.5 + 2 ln0.5 + ln20 + 0) / 6
    assert close(stats["ppo_kl"], -(2 * math.log(1.5) + 2 * math.log(0.5) + math.log(20)) / 6)


def test_policy_loss_without_dual_clip_and_with_sequence_advantages():
    new, old, adv, mask = _ratios_case()
    loss, stats = policy_loss(new, old, adv, mask, dual_clip=None)
    assert close(loss[0, 4], 20.0) and close(stats["clipfrac_lower"], 0.0)
    # one advantage per sequence is broadcast over its tokens: ratio 1 everywhere -> loss = -adv
    lp = torch.zeros(2, 3)
    loss, stats = policy_loss(lp, lp, torch.tensor([0.5, -2.0]), torch.ones(2, 3))
    assert close(loss, [[-0.5] * 3, [2.0] * 3]) and close(stats["clipfrac"], 0.0)
    with pytest.raises(ValueError):
        policy_loss(lp, lp, torch.ones(2), torch.ones(2, 3), dual_clip=1.0)


def test_policy_loss_gradient_is_zero_where_clipped():
    new, old, adv, mask = _ratios_case()
    new = new.clone().requires_grad_(True)
    loss, _ = policy_loss(new, old, adv, mask)
    agg_loss(loss, mask).backward()
    g = new.grad[0]
    # clipped tokens (0, 3), dual-capped token 4 and the padding token carry no gradient;
    # unclipped ones carry d(-A r)/d logp / 6 = -A r / 6
    assert close(g[[0, 3, 4, 6]], [0, 0, 0, 0])
    assert close(g[[1, 2, 5]], [-0.5 / 6, 1.5 / 6, -2.0 / 6])


def test_agg_loss_modes():
    loss = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]])
    assert close(agg_loss(loss, mask, "token-mean"), 10 / 4)  # (1+2+3+4) / 4 tokens
    assert close(agg_loss(loss, mask, "seq-mean-token-mean"), 3.0)  # (6/3 + 4/1) / 2
    assert close(agg_loss(loss, mask, "seq-mean-token-sum"), 5.0)  # (6 + 4) / 2
    assert close(agg_loss(loss, mask, "seq-mean-token-sum-norm"), 10 / 6)  # (6 + 4) / (2 seqs * T=3)
    assert close(agg_loss(loss, mask, "seq-mean-token-sum-norm", norm_constant=5), 1.0)
    with pytest.raises(ValueError):
        agg_loss(loss, mask, "mean")


@pytest.mark.parametrize("mode", ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"])
def test_agg_loss_micro_batches_sum_to_full_batch(mode):
    torch.manual_seed(0)
    loss = torch.randn(5, 4)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0]])
    full = agg_loss(loss, mask, mode, norm_constant=4)
    parts = sum(
        agg_loss(loss[i:j], mask[i:j], mode, num_tokens=mask.sum().item(), num_seqs=5, norm_constant=4)
        for i, j in [(0, 2), (2, 3), (3, 5)]
    )
    assert close(parts, full)


def test_kl_estimators():
    logp, ref = torch.tensor([-1.0, -2.0]), torch.tensor([-2.0, -1.0])
    assert close(kl_penalty(logp, ref, "k1"), [1.0, -1.0])
    assert close(kl_penalty(logp, ref, "k2"), [0.5, 0.5])
    # k3 with d = ref - logp = [-1, 1]: e^-1 + 1 - 1 = 0.367879 ; e^1 - 1 - 1 = 0.718282
    assert close(kl_penalty(logp, ref, "low_var_kl"), [math.exp(-1), math.e - 2])
    assert close(kl_penalty(logp, logp, "low_var_kl"), [0.0, 0.0])
    # clamping: log-ratio to [-20, 20], value to [-10, 10]
    assert close(kl_penalty(torch.tensor([0.0, -100.0]), torch.tensor([-100.0, 0.0])), [10.0, 10.0])
    with pytest.raises(ValueError):
        kl_penalty(logp, ref, "k9")


def test_entropy_and_token_logprobs():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [0.0, math.log(3.0), -1e9, -1e9]])
    # uniform over 4: ln 4 ; probs (0.25, 0.75): 0.25 ln 4 + 0.75 ln(4/3) = 0.562335
    assert close(entropy_from_logits(logits), [math.log(4.0), 0.562335])
    assert close(token_logprobs(logits, torch.tensor([2, 1])), [math.log(0.25), math.log(0.75)])


@pytest.mark.parametrize("n", [3, 4, 6, 7, 8, 16])
@pytest.mark.parametrize("value", [1 / 3, 0.1, 0.3, 0.9])
def test_a_group_of_equal_rewards_gets_exactly_zero_advantage(n, value):
    # in float32 the mean of 8 x (1/3) is not exactly 1/3: centred ~3e-8, std ~3e-8, and dividing by
    # (std + 1e-6) turned that rounding into an advantage of ~0.03 for a group with no signal at all
    rewards32 = torch.full((2, n), value, dtype=torch.float32)
    rewards32[1] = torch.arange(n, dtype=torch.float32)  # a normal group beside it keeps its advantages
    adv = group_advantages(rewards32)
    assert torch.equal(adv[0], torch.zeros(n))
    assert close(adv[1], group_advantages([list(range(n))])[0])
    assert group_advantages([[value] * n]) == [[0.0] * n]
    flat = group_advantages([value] * n + [1.0, 0.0], group_ids=["a"] * n + ["b", "b"])
    assert torch.equal(flat[:n], torch.zeros(n)) and close(flat[n:], [0.707107, -0.707107])


def test_tis_weights_are_the_capped_ratio_without_gradient():
    from codea1.rl.grpo import tis_weights

    old = torch.tensor([[-1.0, -2.0, -0.5]], requires_grad=True)
    engine = torch.tensor([[-1.5, -1.0, -3.0]])
    w = tis_weights(old, engine, cap=2.0)
    expected = torch.minimum(torch.exp(old.detach() - engine), torch.tensor(2.0))
    assert torch.equal(w, expected) and not w.requires_grad
    assert w.tolist()[0][2] == 2.0  # exp(2.5) capped
