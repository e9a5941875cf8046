"""One-step-off rollout (train.one_step_off): each step trains on samples drawn, in the background, by the
weights one update behind; the lag is exactly one update, it is measured and corrected by the learner, and a
run killed and resumed goes on exactly as the uninterrupted one."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from test_train_resume_on_cpu import _child, _fingerprint, killed_and_resumed_as

from codea1.config import PolicyConfig, config_from_dict
from codea1.errors import UserError
from codea1.inference.rollout import GenerationConfig
from codea1.models import load_model_and_tokenizer
from codea1.problem import Problem
from codea1.rl.policy import Policy
from codea1.train.one_step_off import OneStepOff, Rollout, sampling_copies

ASYNC = ("train.one_step_off=true",)
PROMPT = [{"role": "user", "content": "Write a function."}]


def _problems(step: int) -> list[Problem]:
    return [Problem(id=f"q{step}", prompt="p", description="d")]


def test_each_step_samples_with_the_weights_one_update_behind() -> None:
    """Update t trains on samples whose log-probs are those of the weights after update t-2 (after t-1 in a
    synchronous run): the copy's own log-probs, kept as the samples' engine_logprobs, equal a fresh scoring
    under exactly those weights, and differ from the next ones'."""
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    policy = Policy(model, tok, PolicyConfig(lr=5e-3, warmup_steps=0, kl_coef=0.0, mini_batches=1))
    weights = {0: {k: v.clone() for k, v in policy.model.state_dict().items()}}
    copies = sampling_copies([policy, policy], None)
    assert len(copies) == 1  # one policy in both roles: one copy

    def draw(step: int, batch: list) -> tuple[list, None, dict]:
        gen = GenerationConfig(n=4, max_new_tokens=6, temperature=1.0, seed=step)
        return copies[id(policy)].generate([PROMPT], gen), None, {}

    run = OneStepOff(list(copies.values()), draw, lambda step: _problems(step + 1) if step < 4 else None)
    for step in range(1, 5):
        rollout, _ = run.take(step, _problems(step))
        assert rollout.weights_step == max(0, step - 2)
        samples = rollout.codes[0]
        assert all(s.engine_logprobs and not s.logprobs for s in samples)  # the learner scores them itself
        behind = Policy(*load_model_and_tokenizer("tiny-random"), PolicyConfig(kl_coef=0.0))
        behind.model.load_state_dict(weights[rollout.weights_step])
        scored = behind.logprobs([s.prompt_ids for s in samples], [s.response_ids for s in samples])
        for s, row in zip(samples, scored, strict=True):
            assert s.engine_logprobs == pytest.approx(row, abs=1e-5)
        if step >= 2:  # not the weights the learner holds now
            behind.model.load_state_dict(weights[step - 1])
            now = behind.logprobs([s.prompt_ids for s in samples], [s.response_ids for s in samples])
            assert (
                max(
                    abs(a - b)
                    for s, row in zip(samples, now, strict=True)
                    for a, b in zip(s.engine_logprobs, row, strict=True)
                )
                > 1e-4
            )
        metrics = policy.train_step(samples, [1.0, -1.0, 0.5, -0.5])
        assert metrics["mismatch_abs"] < 1e-5 if step == 1 else metrics["mismatch_abs"] > 1e-5
        weights[step] = {k: v.clone() for k, v in policy.model.state_dict().items()}
    assert run.wait() is None  # nothing after the last step


def test_a_rollout_record_round_trips_through_json() -> None:
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    policy = Policy(model, tok, PolicyConfig(kl_coef=0.0))
    [copy] = sampling_copies([policy], None).values()
    codes = copy.generate([PROMPT], GenerationConfig(n=2, max_new_tokens=4, seed=3))
    rollout = Rollout(2, ["q2"], codes, [[codes[0]]], 0, {"gen_code": 0.5})
    assert Rollout.from_json(rollout.to_json()) == rollout


def test_the_trainer_logs_the_lag_and_the_gap(tmp_path: Path) -> None:
    from codea1.train.metrics import read_metrics

    run_dir = tmp_path / "run"
    assert _child(run_dir, resume=False, kill_at=None, extra=ASYNC) == 0
    rows = read_metrics(run_dir / "metrics.jsonl")
    assert [r["rollout_lag"] for r in rows] == [0.0, 1.0, 1.0, 1.0, 1.0]
    assert rows[0]["code_mismatch_abs"] < 1e-5 and rows[0]["test_mismatch_abs"] < 1e-5  # step 1: on-policy
    assert all("time_rollout_wait" in r for r in rows)
    assert (run_dir / "checkpoints" / "step_000004" / "one_step_off" / "next_rollout.json").is_file()
    assert not (run_dir / "checkpoints" / "step_000005" / "one_step_off" / "next_rollout.json").exists()


@pytest.mark.parametrize("kill_at", ["metrics:3", "learn_test:4"])
def test_a_run_resumes_exactly_with_its_rollout_in_flight(kill_at: str, tmp_path: Path) -> None:
    """Killed after step 3's metrics (checkpoint 2 holds step 3's rollout, drawn by the weights after update
    1, which no checkpoint keeps) or in step 4's update, the resumed run's metrics and Mistake Book equal
    the uninterrupted run's."""
    whole = tmp_path / "whole"
    assert _child(whole, resume=False, kill_at=None, extra=ASYNC) == 0
    reference = _fingerprint(whole)
    assert reference["book_steps"][-1]["size"] > 0
    killed_and_resumed_as(tmp_path / "run", kill_at, ASYNC, reference)


@pytest.mark.parametrize(
    "section",
    [
        {"rollout": {"backend": "vllm"}, "model": {"mode": "lora"}},
        {"rollout": {"backend": "vllm", "sampler_device": "cpu"}},
        {"placement": {"backend": "ray"}},
        {"model": {"mode": "dual-lora"}},
        {"train": {"dynamic_sampling": "dapo"}},
        {"train": {"refill_rounds": 1}},
    ],
)
def test_what_it_does_not_cover_is_refused_when_the_config_is_read(section: dict) -> None:
    data = {"train": {"one_step_off": True}}
    for name, values in section.items():
        data.setdefault(name, {}).update(values)
    with pytest.raises(UserError, match="train.one_step_off"):
        config_from_dict(data)
