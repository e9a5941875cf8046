"""`codea1 sft`: a supervised warm-up of the policies before RL (docs/cold-start.md).

A small model sampled at temperature 1 rarely answers the game's prompts in the expected form (a
```python block of asserts for the Test LLM), so every suite is invalid, every reward equal and GRPO has
nothing to learn from. The warm-up teaches the form on the training problems:

- code role: the code prompt (`code_messages`) -> the GT solution in one ```python block;
- test role: the test prompt (`test_messages`, the GT shown as the candidate in the white-box game) ->
  the problem's golden asserts in one ```python block, at most `game.tests_requested` of them, the asserts
  that call the function under test first (`sft.test_order: shortest` puts the shortest first).

A role's `response_prefix` is rendered into the prompt exactly as the rollout does, so the target is what
follows the prefix, and an example whose answer does not start with the prefix is skipped. The target
ends with the end-of-sequence token; an example longer than the role's `max_new_tokens` is skipped (the
policy could not write it in the game). The loss is the token-mean negative log-likelihood of the target
tokens only (prompt and prefix masked), computed with the same packing and forward pass as the GRPO loss
(codea1.rl.logprobs).

The models are built as the trainer builds them (`build_policies`: `model.mode` full or LoRA, `policy`
LoRA shape, dtype, betas, weight decay, grad clip, micro-batch budget) with the `sft` section's learning
rate and epochs. One model serves both roles when the trainer shares one (`model.test_model` null or
equal to `model.code_model`, and always in dual-lora): it is trained on both kinds of examples. The
output directory holds one loadable model directory per trained model: `shared`, or `code` and `test` (a
full HF model, or a LoRA adapter that `load_model_and_tokenizer` merges into its base), and `sft.json`
with the losses and the config overrides that make `codea1 train` start from them.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import SFT_TEST_ORDERS, Config
from codea1.errors import UserError
from codea1.game.prompts import code_messages, test_messages, with_prefix
from codea1.train.loop import load_training_problems, make_executor
from codea1.train.methods import derive_seed

if TYPE_CHECKING:
    from rich.console import Console
    from transformers import PreTrainedTokenizerBase

    from codea1.problem import Problem
    from codea1.rl.policy import Policy

SHARED = "shared"


@dataclass
class Example:
    """One supervised example: the rendered prompt (response prefix included) and the target ids."""

    role: str
    problem_id: str
    prompt_ids: list[int]
    response_ids: list[int]


# ----------------------------------------------------------------------------------------------------
# examples


def code_answer(problem: Problem) -> str:
    """What the Code LLM should answer: the GT solution in one ```python block."""
    return f"```python\n{problem.gt_solution.strip()}\n```"


def test_answer(problem: Problem, n_tests: int, order: str = "given") -> str:
    """What the Test LLM should answer: at most `n_tests` golden asserts in one ```python block, those
    that call the function under test first, "" without golden tests. Within each of those two groups
    the asserts keep the problem's order (order="given") or go shortest first (order="shortest": the
    simplest cases, whose expected values a small model can work out, lead the suite)."""
    if order not in SFT_TEST_ORDERS:
        raise ValueError(f"order must be one of {SFT_TEST_ORDERS}, not {order!r}")
    head = f"assert {problem.entry_point}("
    tests = [t.strip() for t in problem.golden_tests if t.strip()]
    if order == "shortest":
        tests = sorted(tests, key=len)  # stable: equal lengths keep the problem's order
    tests = sorted(tests, key=lambda t: not t.startswith(head))[:n_tests]
    if not tests:
        return ""
    return "```python\n" + "\n".join(tests) + "\n```"


test_answer.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def role_messages(role: str, problem: Problem, cfg: Config) -> tuple[list[dict[str, str]], str]:
    """(chat messages with the role's response prefix, full answer) of one problem."""

    if role == "code":
        messages, answer = code_messages(problem), code_answer(problem)
    else:
        messages = test_messages(problem, problem.gt_solution, cfg.game)
        answer = test_answer(problem, cfg.game.tests_requested or cfg.game.tests_per_suite, cfg.sft.test_order)
    sampling = getattr(cfg.generation, role)
    return with_prefix(messages, sampling.response_prefix, problem), answer


def build_examples(
    role: str, problems: Sequence[Any], tokenizer: PreTrainedTokenizerBase, cfg: Config
) -> tuple[list[Example], dict[str, int]]:
    """The examples of one role (at most sft.max_examples) and how many problems were skipped, by
    reason: no_answer (no golden tests), prefix (the answer does not start with the response prefix),
    too_long (the target is longer than the role's max_new_tokens)."""
    from codea1.inference.rollout import render_prompts, rendered_prefix

    sampling = getattr(cfg.generation, role)
    eos = tokenizer.eos_token_id
    eos = eos[0] if isinstance(eos, list) else eos
    examples: list[Example] = []
    skipped = {"no_answer": 0, "prefix": 0, "too_long": 0}
    for problem in problems:
        if cfg.sft.max_examples is not None and len(examples) >= cfg.sft.max_examples:
            break
        messages, answer = role_messages(role, problem, cfg)
        if not answer:
            skipped["no_answer"] += 1
            continue
        prefix = rendered_prefix(tokenizer, messages)
        if not answer.startswith(prefix):
            skipped["prefix"] += 1
            continue
        response = tokenizer(answer[len(prefix) :], add_special_tokens=False).input_ids + [eos]
        if len(response) > sampling.max_new_tokens:
            skipped["too_long"] += 1
            continue
        prompt = render_prompts(tokenizer, [messages], sampling.max_prompt_tokens)[0]
        examples.append(Example(role, problem.id, prompt, response))
    return examples, skipped


# ----------------------------------------------------------------------------------------------------
# loss and training


def _batch_loss(policy: Policy, examples: Sequence[Example], backward: bool) -> tuple[float, int]:
    """Sum of the target tokens' negative log-likelihoods over `examples` (micro-batched by the policy's
    token budget), and their token count; with `backward`, the gradient of the token mean is accumulated."""
    import torch

    from codea1.rl.logprobs import forward_logprobs, pack, token_budget_chunks

    total_tokens = sum(len(e.response_ids) for e in examples)
    lengths = [len(e.prompt_ids) + len(e.response_ids) for e in examples]
    nll = 0.0
    for idx in token_budget_chunks(lengths, policy.config.micro_batch_tokens):
        batch = pack([examples[i].prompt_ids for i in idx], [examples[i].response_ids for i in idx], policy.pad_id).to(
            policy.device
        )
        mask = batch.response_mask.float()
        with torch.set_grad_enabled(backward), policy._autocast():
            logp, _ = forward_logprobs(policy.model, batch, chunk=policy.config.logprob_chunk)
            loss = -(logp * mask).sum()
        if backward:
            (loss / max(total_tokens, 1)).backward()
        nll += float(loss.detach())
    return nll, total_tokens


def sft_loss(policy: Policy, examples: Sequence[Example]) -> float:
    """Token-mean negative log-likelihood of the examples' targets under the policy (no update)."""
    if not examples:
        return 0.0
    policy._activate()
    was_training = policy.model.training
    policy.model.eval()
    try:
        nll, tokens = _batch_loss(policy, examples, backward=False)
    finally:
        policy.model.train(was_training)
    return nll / max(tokens, 1)


def optimizer_steps(n_examples: int, cfg: Config) -> int:
    """Optimiser steps of a warm-up on n_examples (the learning-rate schedule spans them)."""
    per_epoch = -(-n_examples // cfg.sft.batch_size)
    return max(1, per_epoch * cfg.sft.epochs)


def train_sft(
    policy: Policy,
    examples: Sequence[Example],
    cfg: Config,
    *,
    progress: Callable[[int, int, float], object] | None = None,
) -> list[float]:
    """sft.epochs passes over `examples` in seeded orders, sft.batch_size examples per optimiser step
    (gradient clipped at policy.grad_clip); returns the mean training loss of each epoch. `progress`
    is called with (done, total, loss) after each step."""
    import torch

    examples = list(examples)
    if not examples:
        return []
    total = optimizer_steps(len(examples), cfg)
    size = cfg.sft.batch_size
    policy._activate()
    policy.model.train()
    done, history = 0, []
    for epoch in range(cfg.sft.epochs):
        order = list(range(len(examples)))
        random.Random(derive_seed(cfg.seed, epoch, "sft-order")).shuffle(order)
        nll_sum, token_sum = 0.0, 0
        for start in range(0, len(order), size):
            batch = [examples[i] for i in order[start : start + size]]
            policy.optimizer.zero_grad(set_to_none=True)
            nll, tokens = _batch_loss(policy, batch, backward=True)
            grad_norm = torch.nn.utils.clip_grad_norm_(policy.params, policy.config.grad_clip)
            if torch.isfinite(grad_norm):
                policy.optimizer.step()
            policy.optimizer.zero_grad(set_to_none=True)
            policy.scheduler.step()
            nll_sum, token_sum = nll_sum + nll, token_sum + tokens
            done += 1
            if progress is not None:
                progress(done, total, nll / max(tokens, 1))
        history.append(nll_sum / max(token_sum, 1))
    policy.model.eval()
    return history


# ----------------------------------------------------------------------------------------------------
# models in and out


def build_sft_policy(cfg: Config, model: str) -> Policy:
    """A Policy of `model` built as the trainer builds its code policy (model.mode, the policy
    section's LoRA shape, dtype and AdamW settings), with the sft learning rate and no KL reference."""
    from codea1.rl.build import build_policies

    policy_cfg = dataclasses.replace(cfg.policy, lr=cfg.sft.lr, kl_coef=0.0)
    model_cfg = dataclasses.replace(cfg.model, code_model=model, test_model=None)
    policy, _ = build_policies(dataclasses.replace(cfg, model=model_cfg, policy=policy_cfg), test=False)
    return policy


def set_schedule(policy: Policy, n_examples: int, cfg: Config) -> int:
    """Gives the policy the warm-up's learning-rate schedule (sft.warmup_steps of linear warm-up, then
    linear decay to 0) over the optimiser steps of n_examples; returns that number of steps."""
    import torch

    from codea1.rl.policy import lr_factor

    total, warmup = optimizer_steps(n_examples, cfg), cfg.sft.warmup_steps
    policy.scheduler = torch.optim.lr_scheduler.LambdaLR(
        policy.optimizer, lambda s: lr_factor(s, warmup, total, "linear", 0.0)
    )
    return total


def shares_one_model(cfg: Config) -> bool:
    """Whether the trainer plays both roles with one model (then SFT trains that model on both)."""
    return (
        cfg.model.mode == "dual-lora"
        or not cfg.traits.separate_test_policy
        or cfg.test_model_name == cfg.model.code_model
    )


def _sft_roles(cfg: Config, console: Console) -> list[str]:
    """The roles to warm up: sft.roles, less the test role under a method that writes no tests (golden: no
    Test LLM)."""
    roles = list(cfg.sft.roles)
    if not cfg.traits.writes_tests and "test" in roles:
        roles.remove("test")
        console.print(f"method {cfg.method} has no Test LLM: training the code role only")
        if not roles:
            raise UserError(f"config key 'sft.roles' names only the test role, but method {cfg.method} has no Test LLM")
    return roles


def _training_problems(cfg: Config, console: Console) -> list[Problem]:
    """The training problems (data.train), their GTs checked in the sandbox when data.check_gt."""
    if cfg.data.check_gt:
        with make_executor(cfg) as executor:
            return load_training_problems(cfg, executor, console)
    return load_training_problems(cfg, None, console)


def _group_examples(
    group_roles: list[str],
    problems: Sequence[Problem],
    tokenizer: PreTrainedTokenizerBase,
    cfg: Config,
    summary: dict[str, Any],
) -> list[Example]:
    """The examples of one model's roles, counted (and the skipped ones) into the summary; none is an error."""
    examples: list[Example] = []
    for role in group_roles:
        role_examples, skipped = build_examples(role, problems, tokenizer, cfg)
        examples.extend(role_examples)
        summary["examples"][role] = len(role_examples)
        summary["skipped"][role] = skipped
    if not examples:
        raise UserError(
            f"no SFT examples for {', '.join(group_roles)} (skipped: {summary['skipped']}); "
            f"check data.train, the response prefixes and generation.*.max_new_tokens"
        )
    return examples


def _train_model(
    cfg: Config,
    name: str,
    group_roles: list[str],
    problems: Sequence[Problem],
    out_dir: Path,
    summary: dict[str, Any],
    progress: bool | None,
    console: Console,
) -> None:
    """Warms up one model on its roles' examples and writes it to OUT/NAME; its losses go into the summary.
    The policy is released on return, before the next model is built."""
    base_name = cfg.model.code_model if name in (SHARED, "code") else cfg.test_model_name
    policy = build_sft_policy(cfg, base_name)
    examples = _group_examples(group_roles, problems, policy.tokenizer, cfg, summary)
    total = set_schedule(policy, len(examples), cfg)
    console.print(
        f"SFT {name}: {len(examples)} examples ({', '.join(group_roles)}), {cfg.sft.epochs} "
        f"epoch(s), {total} optimiser steps, {cfg.model.mode}, lr {cfg.sft.lr:g}"
    )
    summary["loss_before"][name] = sft_loss(policy, examples)
    show = progress if progress is not None else sys.stderr.isatty()
    history = _train_with_bar(policy, examples, cfg, f"SFT {name}", show, console)
    summary["epoch_losses"][name] = history
    summary["loss_after"][name] = sft_loss(policy, examples)
    target = out_dir / name
    policy.save_weights(target)  # a directory load_model_and_tokenizer loads
    summary["models"][name] = str(target)
    console.print(
        f"SFT {name}: loss {summary['loss_before'][name]:.3f} -> {summary['loss_after'][name]:.3f}; written to {target}"
    )


def run_sft(
    cfg: Config,
    out_dir: Path,
    *,
    console: Console | None = None,
    progress: bool | None = None,
    problems: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Builds the examples of the training problems (data.train; GTs checked in the sandbox when
    data.check_gt), trains, writes the model directories and OUT/sft.json; returns that summary."""

    from rich.console import Console

    console = console or Console(stderr=True)
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise UserError(f"{out_dir}: the SFT output directory exists and is not empty; choose a new one")
    roles = _sft_roles(cfg, console)
    if problems is None:
        problems = _training_problems(cfg, console)
    shared = shares_one_model(cfg)
    groups = {SHARED: roles} if shared else {role: [role] for role in roles}

    summary: dict[str, Any] = {
        "problems": len(problems),
        "roles": roles,
        "mode": cfg.model.mode,
        "sft": cfg.sft.to_dict(),
        "data": cfg.data.train,
        "models": {},
        "examples": {},
        "skipped": {},
        "loss_before": {},
        "loss_after": {},
        "epoch_losses": {},
        "overrides": [],
    }
    for name, group_roles in groups.items():
        _train_model(cfg, name, group_roles, problems, out_dir, summary, progress, console)
    summary["overrides"] = start_overrides(cfg, summary["models"])
    (out_dir / "sft.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def _train_with_bar(
    policy: Policy, examples: list[Example], cfg: Config, label: str, show: bool, console: Console | None
) -> list[float]:
    if not show:  # a line every fifth of the way (logs, pipes)
        every = max(1, optimizer_steps(len(examples), cfg) // 5)

        def note(done: int, total: int, loss: float) -> None:
            if done % every == 0 or done == total:
                console.print(f"{label}: step {done}/{total}, loss {loss:.3f}")

        return train_sft(policy, examples, cfg, progress=note)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=optimizer_steps(len(examples), cfg))

        def update(done: int, total: int, loss: float) -> None:
            bar.update(task, completed=done, description=f"{label} (loss {loss:.3f})")

        return train_sft(policy, examples, cfg, progress=update)


def start_overrides(cfg: Config, models: dict[str, str]) -> list[str]:
    """The `codea1 train` overrides that start from the SFT models."""
    out = []
    if SHARED in models:
        out.append(f"model.code_model={models[SHARED]}")
        if cfg.model.test_model is not None:
            out.append(f"model.test_model={models[SHARED]}")
    if "code" in models:
        out.append(f"model.code_model={models['code']}")
    if "test" in models:
        out.append(f"model.test_model={models['test']}")
    return out
