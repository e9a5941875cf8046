"""Policy: generation, log-probs, GRPO train steps, reference handling, save/load, build_policies."""

from __future__ import annotations

import math

import pytest
import torch

from codea1.errors import UserError
from codea1.models import load_model_and_tokenizer
from codea1.rl.build import build_policies
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig, Sample, lr_factor

PROMPTS = [
    [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "Two plus two?"}],
    [{"role": "user", "content": "Write 7."}],
    [{"role": "user", "content": "def f(x):"}],
]


def make_policy(**overrides) -> Policy:
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    cfg = {"lr": 1e-3, "warmup_steps": 0, "weight_decay": 0.0, **overrides}
    return Policy(model, tok, PolicyConfig(**cfg))


@pytest.fixture(scope="module")
def policy() -> Policy:
    return make_policy()


@pytest.fixture(scope="module")
def samples(policy) -> list[list[Sample]]:
    return policy.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=10, seed=1))


def flat(rows):
    return [s for row in rows for s in row]


def test_generate_shapes_and_logprobs(policy, samples):
    tok = policy.tokenizer
    assert [len(row) for row in samples] == [3, 3, 3]
    for row, messages in zip(samples, PROMPTS, strict=False):
        expected_prompt = tok(
            tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False), add_special_tokens=False
        ).input_ids
        for s in row:
            assert s.prompt_ids == expected_prompt
            assert 1 <= len(s.response_ids) <= 10
            assert len(s.logprobs) == len(s.response_ids)
            assert all(lp <= 0 for lp in s.logprobs)
            assert s.finished == (s.response_ids[-1] == tok.eos_token_id)
            assert s.text == tok.decode(s.response_ids, skip_special_tokens=True)


def test_sampling_logprobs_match_training_logprobs(policy, samples):
    rows = flat(samples)
    # score in another grouping (reversed order, one by one): the same numbers
    for s in reversed(rows):
        again = policy.logprobs([s.prompt_ids], [s.response_ids])[0]
        assert torch.allclose(torch.tensor(again), torch.tensor(s.logprobs), atol=1e-5)


def test_seeded_generation_is_reproducible_and_greedy_is_deterministic(policy, samples):
    again = policy.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=10, seed=1))
    assert [s.response_ids for s in flat(again)] == [s.response_ids for s in flat(samples)]
    g1 = policy.generate(PROMPTS[:1], GenerationConfig(n=2, temperature=0.0, max_new_tokens=6))
    assert g1[0][0].response_ids == g1[0][1].response_ids


def test_stop_strings_cut_text_and_tokens(policy):
    # find a stop string the model really produces: the 3rd..4th characters of a sampled text
    base = policy.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=12, seed=3))[0][0]
    assert len(base.text) > 6
    stop = base.text[3:5]
    cut = policy.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=12, seed=3, stop=[stop]))[0][0]
    first = base.text.find(stop)
    assert cut.text == base.text[: first + len(stop)] and cut.finished
    assert cut.response_ids == base.response_ids[: len(cut.response_ids)]
    assert stop in policy.tokenizer.decode(cut.response_ids)
    assert stop not in policy.tokenizer.decode(cut.response_ids[:-1])
    assert len(cut.logprobs) == len(cut.response_ids)


def test_max_prompt_tokens_keeps_the_end(policy):
    out = policy.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=2, max_prompt_tokens=5))
    full = policy.generate(PROMPTS[:1], GenerationConfig(n=1, max_new_tokens=2))
    assert out[0][0].prompt_ids == full[0][0].prompt_ids[-5:]


def test_first_step_is_on_policy_and_updates_every_weight(samples):
    pol = make_policy(kl_coef=0.001)
    rows = flat(samples)
    before = {n: p.detach().clone() for n, p in pol.model.named_parameters()}
    ref_before = {n: p.detach().clone() for n, p in pol.reference.named_parameters()}
    adv = [1.0, -1.0, 0.5] * 3
    m1 = pol.train_step(rows, adv)
    # ratio exactly 1 and policy == reference at the first step
    assert m1["clipfrac"] == 0.0 and abs(m1["ppo_kl"]) < 1e-6 and abs(m1["kl"]) < 1e-6
    assert m1["grad_norm"] > 0 and m1["lr"] == pytest.approx(1e-3) and m1["entropy"] > 0
    pol.train_step(rows, adv)
    for n, p in pol.model.named_parameters():
        assert not torch.equal(p, before[n]), f"trainable {n} did not change"
    for n, p in pol.reference.named_parameters():
        assert torch.equal(p, ref_before[n]), f"frozen reference {n} changed"
        assert not p.requires_grad


def test_micro_batching_accumulates_the_full_batch_gradient(samples):
    rows, adv = flat(samples), [1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 1.0, -2.0, 0.3]
    for mode in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"):
        big = make_policy(micro_batch_tokens=10_000, loss_agg=mode).train_step(rows, adv)
        small = make_policy(micro_batch_tokens=40, loss_agg=mode).train_step(rows, adv)
        for key in ("loss", "pg_loss", "grad_norm", "entropy"):
            assert small[key] == pytest.approx(big[key], rel=1e-4, abs=1e-6), (mode, key)


def test_gradient_checkpointing_gives_the_same_gradient(samples):
    rows, adv = flat(samples), [1.0, -1.0, 0.5] * 3
    plain = make_policy().train_step(rows, adv)
    ckpt = make_policy(gradient_checkpointing=True).train_step(rows, adv)
    assert ckpt["grad_norm"] == pytest.approx(plain["grad_norm"], rel=1e-4)


def test_bf16_compute_keeps_fp32_master_weights(samples):
    pol = make_policy(dtype="bfloat16", kl_coef=0.001)
    m = pol.train_step(flat(samples), [1.0, -1.0, 0.5] * 3)
    assert all(p.dtype == torch.float32 for p in pol.params)
    assert next(pol.reference.parameters()).dtype == torch.bfloat16
    assert m["grad_norm"] > 0 and abs(m["ppo_kl"]) < 0.05  # bf16 rounding only


def test_mini_batches_and_missing_logprobs(samples):
    pol = make_policy(mini_batches=3)
    rows = [Sample(s.prompt_ids, s.response_ids, s.text, [], s.finished) for s in flat(samples)]
    m = pol.train_step(rows, [1.0, -1.0, 0.5] * 3)
    state = pol.optimizer.state[pol.params[0]]
    assert int(state["step"]) == 3  # three optimiser steps in one train_step
    assert m["clipfrac"] >= 0 and pol.step == 1
    assert pol.train_step([], []) == {"lr": pol.lr, "num_samples": 0.0}
    with pytest.raises(ValueError):
        pol.train_step(rows, [1.0])


def test_lora_trains_only_its_adapter_and_reference_is_the_base(samples):
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    rows = flat(samples)
    base_lp = None
    pol_probe = Policy(model, tok, PolicyConfig(kl_coef=0.0, lr=1e-2, weight_decay=0.0, warmup_steps=0))
    base_lp = pol_probe.logprobs([rows[0].prompt_ids], [rows[0].response_ids])[0]
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    pol = Policy(model, tok, PolicyConfig(lora=True, lr=1e-2, weight_decay=0.0, warmup_steps=0))
    assert pol.reference is None  # no second copy: the base with the adapter disabled
    before = {n: p.detach().clone() for n, p in pol.model.named_parameters()}
    trainable = {n for n, p in pol.model.named_parameters() if any(p is q for q in pol.params)}
    assert trainable and all("lora_" in n for n in trainable)
    for _ in range(2):  # lora_B starts at 0, so lora_A only gets a gradient from the second step on
        pol.train_step(rows, [1.0, -1.0, 0.5] * 3)
    for n, p in pol.model.named_parameters():
        assert torch.equal(p, before[n]) != (n in trainable), n
    ref = pol.logprobs([rows[0].prompt_ids], [rows[0].response_ids], reference=True)[0]
    now = pol.logprobs([rows[0].prompt_ids], [rows[0].response_ids])[0]
    assert torch.allclose(torch.tensor(ref), torch.tensor(base_lp), atol=1e-6)
    assert not torch.allclose(torch.tensor(now), torch.tensor(base_lp), atol=1e-4)


def test_lora_reference_logprobs_over_several_micro_batches(samples):
    """The adapter is switched off once per micro-batch (a context manager cannot be entered twice)."""
    rows = flat(samples)
    pol = make_policy(lora=True, lr=1e-2, micro_batch_tokens=40)
    for _ in range(2):  # move the adapter away from the base (lora_B starts at 0)
        pol.train_step(rows, [1.0, -1.0, 0.5] * 3)
    prompts, responses = [s.prompt_ids for s in rows], [s.response_ids for s in rows]
    from codea1.rl.logprobs import token_budget_chunks

    assert len(token_budget_chunks([len(p) + len(r) for p, r in zip(prompts, responses, strict=False)], 40)) > 1
    ref = pol.logprobs(prompts, responses, reference=True)
    now = pol.logprobs(prompts, responses)
    for i, s in enumerate(rows):  # the same numbers one row at a time (one micro-batch each)
        assert torch.allclose(
            torch.tensor(ref[i]),
            torch.tensor(pol.logprobs([s.prompt_ids], [s.response_ids], reference=True)[0]),
            atol=1e-5,
        )
    assert not torch.allclose(torch.tensor(ref[0]), torch.tensor(now[0]), atol=1e-4)  # adapter back on


@pytest.mark.parametrize("lora", [False, True])
def test_save_load_round_trip_continues_identically(tmp_path, samples, lora):
    rows, adv = flat(samples), [1.0, -1.0, 0.5] * 3
    a = make_policy(lora=lora, warmup_steps=3, total_steps=10)
    a.train_step(rows, adv)
    a.save(tmp_path / "ckpt")
    b = make_policy(lora=lora, warmup_steps=3, total_steps=10)
    torch.manual_seed(999)  # disturb the RNG: load must restore it
    b.load(tmp_path / "ckpt")
    assert b.step == 1 and b.lr == a.lr
    for (n, p), (_, q) in zip(a.model.named_parameters(), b.model.named_parameters(), strict=False):
        assert torch.equal(p, q), n
    x = torch.rand(3)
    b.load(tmp_path / "ckpt")
    assert torch.equal(torch.rand(3), x)  # RNG restored to the saved state
    ma, mb = a.train_step(rows, adv), b.train_step(rows, adv)
    assert ma["loss"] == pytest.approx(mb["loss"], rel=1e-6) and ma["lr"] == mb["lr"]
    for (n, p), (_, q) in zip(a.model.named_parameters(), b.model.named_parameters(), strict=False):
        assert torch.allclose(p, q, atol=1e-7), n
    if not lora:  # a full checkpoint is also a normal model directory
        _model, tok = load_model_and_tokenizer(str(tmp_path / "ckpt"))
        assert tok.chat_template


def test_load_incomplete_dir_is_user_error(tmp_path, policy):
    with pytest.raises(UserError, match="policy_state.json"):
        policy.load(tmp_path)


def test_lr_schedule():
    assert [lr_factor(s, 2, 10) for s in (0, 1)] == [0.5, 1.0]
    assert lr_factor(2, 2, 10) == pytest.approx(1.0)
    assert lr_factor(6, 2, 10) == pytest.approx(0.5)  # half-way through the cosine
    assert lr_factor(10, 2, 10) == pytest.approx(0.0) and lr_factor(50, 2, 10) == pytest.approx(0.0)
    assert lr_factor(6, 2, 10, "linear", min_ratio=0.2) == pytest.approx(0.6)
    assert lr_factor(9, 0, 10, "constant") == 1.0


def test_lr_schedule_after_warm_up_is_transformers_cosine_with_min_lr():
    """Past warm-up the decay is transformers' cosine-with-min-lr (and its linear schedule at min 0). Warm-up
    differs on purpose: transformers' starts at lr 0 (step / warmup), ours at 1 / warmup, so the first
    optimiser step already moves; keeping our own function keeps runs and their resume as they were."""
    import torch
    from transformers import get_cosine_with_min_lr_schedule_with_warmup, get_linear_schedule_with_warmup

    def factors(make, steps):
        opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        sched = make(opt)
        out = []
        for _ in range(steps):
            out.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        return out

    warm, total = 3, 20
    cosine = factors(lambda o: get_cosine_with_min_lr_schedule_with_warmup(o, warm, total, min_lr_rate=0.1), total)
    linear = factors(lambda o: get_linear_schedule_with_warmup(o, warm, total), total)
    for step in range(warm, total):
        assert lr_factor(step, warm, total, "cosine", min_ratio=0.1) == pytest.approx(cosine[step], abs=1e-12)
        assert lr_factor(step, warm, total, "linear") == pytest.approx(linear[step], abs=1e-12)
    assert cosine[0] == 0.0 and lr_factor(0, warm, total) == pytest.approx(1 / warm)  # the deliberate difference


def test_bad_config_is_user_error():
    with pytest.raises(UserError, match="loss_agg"):
        PolicyConfig(loss_agg="sum")


def _run_cfg(mode: str, method: str = "a1"):
    from codea1.config import load_config

    return load_config(
        None,
        [
            f"model.mode={mode}",
            f"method={method}",
            "policy.lr=1e-4",
            "policy.lora_r=4",
            "policy.lora_alpha=8",
            "policy.lora_targets=q_proj,v_proj",
            "train.max_steps=5",
            "policy.warmup_steps=1",
        ],
    )


def test_build_policies_modes():
    cfg = _run_cfg("full")
    code, test = build_policies(cfg)
    assert code.model is not test.model and code.reference is test.reference is not None
    assert code.config is test.config is cfg.policy  # the run's policy section is what a Policy takes
    assert code.config.total_steps == 5 and not code.config.lora
    code, test = build_policies(_run_cfg("lora"))
    assert code.model is not test.model and code.adapter == "code" and code.reference is None
    assert code.config.lora and code.config.lora_r == 4
    code, test = build_policies(_run_cfg("dual-lora"))
    assert code.model is test.model and (code.adapter, test.adapter) == ("code", "test")
    code, test = build_policies(_run_cfg("lora"), test=False)
    assert test is None and code.adapter == "code"


def test_the_trainer_gives_each_method_its_roles():
    from codea1.train.loop import method_policies

    code, test = method_policies(_run_cfg("full", method="selfplay"))
    assert code is test
    code, test = method_policies(_run_cfg("full", method="golden"))
    assert test is None
    code, test = method_policies(_run_cfg("full", method="a1"))
    assert test is not None and test is not code


def test_rollout_backend_sync_from_another_learner(samples):
    from codea1.inference.rollout import TransformersRollout

    learner = make_policy()
    learner.train_step(flat(samples), [1.0, -1.0, 0.5] * 3)
    engine_policy = make_policy()  # a separate engine copy, still at the initial weights
    backend = engine_policy.rollout
    assert isinstance(backend, TransformersRollout)
    s = flat(samples)[0]
    assert engine_policy.logprobs([s.prompt_ids], [s.response_ids]) != learner.logprobs(
        [s.prompt_ids], [s.response_ids]
    )
    backend.sync_from(learner)
    assert engine_policy.logprobs([s.prompt_ids], [s.response_ids]) == learner.logprobs(
        [s.prompt_ids], [s.response_ids]
    )
    backend.sync_from(engine_policy)  # its own model: nothing to copy
    with pytest.raises(ValueError):
        backend.load_weights({"no.such.weight": torch.zeros(1)})


def test_lora_checkpoint_loads_as_a_merged_model(tmp_path, samples):
    pol = make_policy(lora=True, lr=1e-2)
    rows = flat(samples)
    pol.train_step(rows, [1.0, -1.0, 0.5] * 3)
    pol.train_step(rows, [1.0, -1.0, 0.5] * 3)
    pol.save(tmp_path / "code_policy")
    merged, tok = load_model_and_tokenizer(str(tmp_path / "code_policy"))
    plain = Policy(merged, tok, PolicyConfig(kl_coef=0.0))
    s = rows[0]
    expect = torch.tensor(pol.logprobs([s.prompt_ids], [s.response_ids])[0])
    assert torch.allclose(torch.tensor(plain.logprobs([s.prompt_ids], [s.response_ids])[0]), expect, atol=1e-5)


def _with_engine(rows, shift: float):
    """The rows, their engine's log-probs set to the learner's own minus ``shift`` (the engine found every
    sampled token exp(shift) times less likely)."""
    import dataclasses

    return [dataclasses.replace(s, engine_logprobs=[lp - shift for lp in s.logprobs]) for s in rows]


def test_with_tis_off_engine_logprobs_change_nothing_but_the_mismatch_metrics(samples):
    rows, adv = flat(samples), [1.0, -1.0, 0.5] * 3
    plain, told = make_policy(kl_coef=0.001), make_policy(kl_coef=0.001)
    m_plain = plain.train_step(rows, adv)
    m_told = told.train_step(_with_engine(rows, 0.25), adv)
    for (name, a), b in zip(plain.model.named_parameters(), told.model.parameters(), strict=True):
        assert torch.equal(a, b), name  # bit for bit
    assert {k: v for k, v in m_told.items() if not k.startswith("mismatch")} == m_plain
    assert "mismatch_abs" not in m_plain
    assert m_told["mismatch_abs"] == pytest.approx(0.25, rel=1e-5)
    assert m_told["mismatch_kl"] == pytest.approx(math.exp(0.25) - 0.25 - 1, rel=1e-4)


@pytest.mark.parametrize(("shift", "cap", "factor"), [(math.log(1.5), 2.0, 1.5), (math.log(3.0), 2.0, 2.0)])
def test_tis_weights_each_tokens_policy_loss_by_the_capped_ratio(samples, shift, cap, factor):
    """At the first step the PPO ratio is 1 and each token's loss is -A; TIS multiplies it by
    min(pi_learner / pi_engine, cap) = min(exp(shift), cap)."""
    rows, adv = flat(samples), [1.0, -1.0, 0.5, 0.0, 2.0, -0.5, 1.0, -2.0, 0.3]
    plain = make_policy().train_step(rows, adv)
    tis = make_policy(tis_cap=cap).train_step(_with_engine(rows, shift), adv)
    assert tis["pg_loss"] == pytest.approx(factor * plain["pg_loss"], rel=1e-5)
    assert tis["grad_norm"] == pytest.approx(factor * plain["grad_norm"], rel=1e-4)


@pytest.mark.parametrize(
    ("shift", "cap", "weight", "capped"), [(math.log(1.5), 2.0, 1.5, 0.0), (math.log(3.0), 2.0, 2.0, 1.0)]
)
def test_tis_statistics_are_logged_as_verl_and_trl_log_them(samples, shift, cap, weight, capped):
    """With policy.tis_cap the step reports the mean capped weight the loss was multiplied by and the share of
    tokens whose ratio the cap cut; every token's ratio here is exp(shift)."""
    rows, adv = flat(samples), [1.0, -1.0, 0.5] * 3
    metrics = make_policy(tis_cap=cap).train_step(_with_engine(rows, shift), adv)
    assert metrics["tis_weight_mean"] == pytest.approx(weight, rel=1e-5)
    assert metrics["tis_capped_frac"] == pytest.approx(capped)
    assert "tis_weight_mean" not in make_policy().train_step(_with_engine(rows, shift), adv)  # TIS off: not logged


def test_mismatch_kl_is_never_negative_from_rounding() -> None:
    """k3 = exp(x) - x - 1 >= 0; in float32 a gap of a few ulps gives a hair below 0, which was logged."""
    from codea1.rl.grpo import mismatch_stats

    old = torch.tensor([[-1.0000001, -2.0, -0.5]], dtype=torch.float32)
    engine = torch.tensor([[-1.0, -2.0000002, -0.50000006]], dtype=torch.float32)
    raw = torch.exp(old - engine) - (old - engine) - 1  # what the unclamped estimate sees per token
    assert (raw < 0).any()
    assert float(mismatch_stats(old, engine, torch.ones_like(old))["mismatch_kl"]) >= 0.0
