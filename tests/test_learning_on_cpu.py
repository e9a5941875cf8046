"""GRPO learns: a tiny random model on a task with a verifiable reward.

Task: "Write a Python expression equal to T" for T in {2, 7}. The reward executes the response's
leading arithmetic expression (characters 0-9 + - * ( ) and spaces, at most 30 of them, no `**`) with
`eval` and no builtins, and pays 1 / (1 + |value - T|); a response that does not start with an
expression gets 0. A random model almost never starts with one (mean reward ~0.005); GRPO must find
and reinforce the rare samples that do. The 140k-parameter model learns to answer with a number
(it does not learn to read T in this budget: it settles on one of the targets, mean reward ~0.58).
Seeds are fixed; the slow test runs three of them (see there).
"""

from __future__ import annotations

import warnings

import pytest
import torch

from codea1.models import load_model_and_tokenizer
from codea1.rl.grpo import group_advantages
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

TARGETS = [2, 7, 2, 7, 2, 7, 2, 7]
EXPR_CHARS = set("0123456789+-*() ")


def expression_reward(text: str, target: float) -> float:
    """1 / (1 + |value - target|) of the leading arithmetic expression of ``text``; 0 if there is none."""
    n = 0
    while n < len(text) and text[n] in EXPR_CHARS:
        n += 1
    expr = text[:n].strip()
    if not expr or len(expr) > 30 or "**" in expr:
        return 0.0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "'int' object is not callable" SyntaxWarnings
            value = eval(expr, {"__builtins__": {}}, {})  # digits, + - * ( ) and spaces only
    except (SyntaxError, TypeError, ValueError, ArithmeticError):
        return 0.0
    if not isinstance(value, (int, float)):
        return 0.0
    return 1.0 / (1.0 + abs(value - target))


def test_expression_reward():
    assert expression_reward("7", 7) == 1.0
    assert expression_reward(" 3 + 4abc", 7) == 1.0
    assert expression_reward("2*3)", 7) == 0.0  # unbalanced: not an expression
    assert expression_reward("5 is it", 7) == pytest.approx(1 / 3)
    assert expression_reward("def f", 7) == 0.0 and expression_reward("", 7) == 0.0
    assert expression_reward("9**99999", 7) == 0.0


def run_grpo(steps: int, *, lora: bool = False, lr: float = 2e-3, seed: int = 0) -> tuple[list[float], Policy]:
    """Train for ``steps`` GRPO steps (8 prompts x 8 samples, 4 new tokens); return the mean reward per step."""
    torch.manual_seed(seed)
    model, tok = load_model_and_tokenizer("tiny-random")
    cfg = PolicyConfig(
        lr=lr,
        warmup_steps=0,
        schedule="constant",
        lora=lora,
        lora_r=8,
        lora_alpha=16,
        lora_targets=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    )
    policy = Policy(model, tok, cfg)
    prompts = [[{"role": "user", "content": f"Write a Python expression equal to {t}."}] for t in TARGETS]
    gen = GenerationConfig(n=8, max_new_tokens=4)
    curve = []
    for _ in range(steps):
        samples = policy.generate(prompts, gen)
        rewards = [[expression_reward(s.text, t) for s in row] for row, t in zip(samples, TARGETS, strict=False)]
        advantages = group_advantages(rewards)
        policy.train_step([s for row in samples for s in row], [a for row in advantages for a in row])
        curve.append(sum(map(sum, rewards)) / sum(map(len, rewards)))
    return curve, policy


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def test_grpo_raises_reward_fast():
    curve, _ = run_grpo(30)
    print("learning curve (mean reward per step):", [round(x, 3) for x in curve])
    start, end = _mean(curve[:5]), _mean(curve[-5:])
    assert start < 0.05
    assert end - start >= 0.15, f"mean reward {start:.3f} -> {end:.3f}"


@pytest.mark.slow
@pytest.mark.parametrize("lora,lr,steps,each,best", [(False, 2e-3, 80, 0.15, 0.4), (True, 5e-3, 100, 0.0, 0.05)])
def test_grpo_raises_reward(lora, lr, steps, each, best):
    """Three seeds: every run gains at least ``each`` and the best at least ``best``. Which plateau a run
    reaches depends on its samples (full fine-tuning: about +0.22 when it settles on part of one target,
    about +0.55 when on a whole one; measured over seeds 0-3 before and after the sampling loop replaced
    model.generate, which changes the samples but not these figures), so one seed is no fair test."""
    gains = []
    for seed in range(3):
        curve, _ = run_grpo(steps, lora=lora, lr=lr, seed=seed)
        print(f"lora={lora} seed={seed} learning curve:", [round(x, 3) for x in curve])
        gains.append(_mean(curve[-10:]) - _mean(curve[:5]))
    assert min(gains) > each and max(gains) >= best, f"reward gains per seed: {[round(g, 3) for g in gains]}"
