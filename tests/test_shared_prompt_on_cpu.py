"""The learner's shared-prompt path: each group's prompt runs once, and the log-probs, entropies,
gradients and updates equal those of every row packed with its own copy of the prompt (float rounding)."""

from __future__ import annotations

import pytest
import torch

from codea1.models import load_model_and_tokenizer
from codea1.rl.chunked import is_exact
from codea1.rl.logprobs import forward_logprobs, forward_shared_prompt_logprobs, pack, pack_lone_rows, prompt_groups
from codea1.rl.policy import Policy, PolicyConfig, Sample

PROMPT = [5, 17, 99, 3, 42, 8, 61]
RESPONSES = [[7, 8, 9, 10, 11], [12, 2], [13, 14, 15, 16, 17, 18, 19], [20]]


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m, _ = load_model_and_tokenizer("tiny-random")
    return m.float()


def _packed(model, temperature=1.0, with_entropy=True):
    batch = pack([PROMPT] * len(RESPONSES), RESPONSES, 0)
    return forward_logprobs(model, batch, with_entropy=with_entropy, entropy_grad=True, temperature=temperature)


def _mask():
    r = max(map(len, RESPONSES))
    return torch.tensor([[1.0] * len(x) + [0.0] * (r - len(x)) for x in RESPONSES])


@pytest.mark.parametrize("temperature", [1.0, 0.7, [0.7, 1.0, 0.7, 1.3]])
def test_shared_prompt_logprobs_and_entropy_equal_the_packed_ones(model, temperature) -> None:
    model.eval()
    with torch.no_grad():
        lp_ref, ent_ref = _packed(model, temperature)
        lp, ent = forward_shared_prompt_logprobs(
            model, PROMPT, RESPONSES, 0, with_entropy=True, temperature=temperature
        )
    mask = _mask().bool()
    assert lp.shape == lp_ref.shape and ent.shape == ent_ref.shape
    assert torch.allclose(lp[mask], lp_ref[mask], atol=1e-5, rtol=0)
    assert torch.allclose(ent[mask], ent_ref[mask], atol=1e-5, rtol=0)


def test_shared_prompt_gradients_equal_the_packed_ones(model) -> None:
    """The prompt's keys and values are shared by the rows: its gradient is the sum over them, as with
    G copies."""
    model.train()
    weights = torch.tensor([0.5, -1.0, 2.0, 1.5]).unsqueeze(1) * _mask()
    grads = []
    for shared in (False, True):
        model.zero_grad(set_to_none=True)
        if shared:
            lp, _ = forward_shared_prompt_logprobs(model, PROMPT, RESPONSES, 0)
        else:
            lp, _ = _packed(model, with_entropy=False)
        (lp * weights).sum().backward()
        grads.append({n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for name in grads[0]:
        assert torch.allclose(grads[0][name], grads[1][name], atol=2e-5, rtol=1e-4), name


def test_prompt_groups_keep_prompts_together_within_the_budget() -> None:
    prompts = [[1, 2, 3]] * 4 + [[9, 9]] * 2 + [[1, 2, 3]]
    lengths = [4, 10, 1, 6, 3, 3, 2]
    groups = prompt_groups(prompts, lengths, budget=100)
    assert groups == [[1, 3, 0, 6, 2], [4, 5]]  # first-seen order, longest response first
    small = prompt_groups(prompts, lengths, budget=3 + 2 * 10)  # the prompt once, then rows x longest
    assert [sorted(g) for g in small] == [[1, 3], [0, 6], [2], [4, 5]] or all(
        3 + len(g) * max(lengths[i] for i in g) <= 23 or len(g) == 1 for g in small
    )
    assert sorted(i for g in small for i in g) == list(range(7))
    assert prompt_groups(prompts, lengths, budget=1) == [[1], [3], [0], [6], [2], [4], [5]]


def test_lone_rows_are_packed_together_and_groups_kept() -> None:
    prompts = [[1, 2, 3]] * 3 + [[7]] + [[8, 8]] + [[9, 9, 9]]
    lengths = [6, 5, 7, 4, 5, 6]  # prompt + response, by row
    groups = prompt_groups(prompts, [3, 2, 4, 3, 3, 3], budget=100)
    assert groups == [[2, 0, 1], [3], [4], [5]]
    assert pack_lone_rows(groups, lengths, budget=100) == [[2, 0, 1], [5, 4, 3]]  # one pass, longest first
    assert pack_lone_rows(groups, lengths, budget=12) == [[2, 0, 1], [5, 4], [3]]  # 2 x 6 <= 12 < 3 x 6
    assert pack_lone_rows([[0, 1]], [3, 3], budget=1) == [[0, 1]]


def test_a_step_of_rows_with_distinct_prompts_runs_packed_passes() -> None:
    """Every row its own prompt (one sample per prompt, or a test role's prompts): the shared-prompt path ran
    one pass per row (two with the prompt's own), which left a GPU waiting on kernel launches (3.6% MFU at
    the 1.5B shape on an H200, 32% packed). Now such rows are packed within the token budget, one pass for
    these six rows, and the step is the packed step."""
    rows = [([3 + k, 9, 27 + k], [11 + k, 12, 13][: 1 + k % 3]) for k in range(6)]
    policies = [_policy(False, kl_coef=0.0), _policy(True, kl_coef=0.0)]
    scored = policies[0].logprobs([p for p, _ in rows], [r for _, r in rows])
    samples = [Sample(p, r, "", lp, True) for (p, r), lp in zip(rows, scored, strict=True)]
    passes = []
    is_exact(policies[1].model)  # the chunked path's probe, two forwards once per model, before counting
    hook = policies[1].model.register_forward_hook(lambda *_: passes.append(1))
    metrics = [pol.train_step(samples, [1.0, -1.0, 0.5, -0.5, 0.2, -0.2]) for pol in policies]
    hook.remove()
    assert len(passes) == 1
    assert metrics[1]["loss"] == metrics[0]["loss"] and metrics[1]["grad_norm"] == metrics[0]["grad_norm"]


def _policy(shared: bool, **overrides) -> Policy:
    torch.manual_seed(0)
    m, tok = load_model_and_tokenizer("tiny-random")
    cfg = {"lr": 1e-3, "warmup_steps": 0, "weight_decay": 0.0, "shared_prompt": shared, **overrides}
    return Policy(m, tok, PolicyConfig(**cfg))


@pytest.mark.parametrize("overrides", [{}, {"kl_coef": 0.0, "micro_batch_tokens": 20}])
def test_a_train_step_with_shared_prompts_is_the_packed_step(overrides) -> None:
    """Two groups (two prompts), per-row temperatures, the KL to the reference: one GRPO update each
    way from the same start gives the optimiser the same gradients and the same metrics (float
    rounding). (The weights after AdamW's first step are not compared: it moves every weight by about
    lr * sign(gradient), so rounding on a near-zero gradient becomes a difference of 2 lr.)"""
    other = [4, 4, 31, 77]
    rows = [(PROMPT, r) for r in RESPONSES] + [(other, r) for r in ([3, 1, 4], [1, 5, 9, 2, 6])]
    policies = [_policy(False, **overrides), _policy(True, **overrides)]
    scored = policies[0].logprobs([p for p, _ in rows], [r for _, r in rows])
    samples = [
        Sample(p, r, "", [x - 0.01 for x in lp], True, temperature=t)
        for (p, r), lp, t in zip(rows, scored, [1.0, 0.7, 1.0, 1.0, 0.7, 0.7], strict=True)
    ]
    advantages = [1.0, -0.5, 0.3, -0.8, 1.2, -1.2]
    grads = []
    for pol in policies:
        seen = {}
        step = pol.optimizer.step

        def record(*args, _pol=pol, _seen=seen, _step=step, **kwargs):
            _seen.update({n: p.grad.clone() for n, p in _pol.model.named_parameters() if p.grad is not None})
            return _step(*args, **kwargs)

        pol.optimizer.step = record
        grads.append(seen)
    metrics = [pol.train_step(samples, advantages) for pol in policies]
    for name in ("loss", "pg_loss", "kl", "entropy", "grad_norm", "clipfrac"):
        assert metrics[1][name] == pytest.approx(metrics[0][name], rel=1e-4, abs=1e-6), name
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for name, g in grads[0].items():
        assert torch.allclose(grads[1][name], g, atol=1e-6, rtol=1e-4), name
