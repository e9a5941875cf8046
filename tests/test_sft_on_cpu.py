"""`codea1 sft`: examples mask everything but the response, the warm-up lowers the loss, and it writes
models that load_model_and_tokenizer and the trainer start from (full and LoRA)."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from codea1.config import config_from_dict, load_config
from codea1.data import load_problems
from codea1.errors import UserError
from codea1.game.prompts import format_prefix
from codea1.rl.logprobs import pack
from codea1.train.sft import (
    build_examples,
    build_sft_policy,
    role_messages,
    run_sft,
    set_schedule,
    sft_loss,
    shares_one_model,
    start_overrides,
    test_answer,
    train_sft,
)

PREFIX = "```python\nassert {entry_point}("


def tiny_cfg(**sections) -> object:
    """A tiny-random config whose budgets let the bundled examples through."""
    data = {
        "model": {"code_model": "tiny-random"},
        "data": {"check_gt": False},
        "game": {"tests_per_suite": 2},
        "generation": {"code": {"max_new_tokens": 400}, "test": {"max_new_tokens": 200, "response_prefix": PREFIX}},
        "sft": {"epochs": 1, "batch_size": 2, "lr": 1e-3, "warmup_steps": 0, "max_examples": 2},
    }
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return config_from_dict(data)


@pytest.fixture(scope="module")
def problems():
    return load_problems("bundled:train")[:4]


def test_examples_mask_prompt_and_prefix(problems) -> None:
    cfg = tiny_cfg()
    policy = build_sft_policy(cfg, "tiny-random")
    tok = policy.tokenizer
    examples, skipped = build_examples("test", problems, tok, cfg)
    assert len(examples) == 2 and skipped == {"no_answer": 0, "prefix": 0, "too_long": 0}
    for ex, p in zip(examples, problems, strict=False):
        prefix = format_prefix(PREFIX, p)
        assert tok.decode(ex.prompt_ids).endswith(prefix)  # the prefix is prompt: masked
        answer = test_answer(p, 2)
        assert answer.startswith(prefix)
        assert ex.response_ids[-1] == tok.eos_token_id
        assert tok.decode(ex.response_ids[:-1]) == answer[len(prefix) :]  # the target follows the prefix
        assert answer.count("assert ") == 2  # game.tests_requested golden asserts
    batch = pack([e.prompt_ids for e in examples], [e.response_ids for e in examples], policy.pad_id)
    assert batch.response_mask.sum(1).tolist() == [len(e.response_ids) for e in examples]

    # the loss is the mean NLL of the response tokens alone: the same from a full forward pass
    lp = []
    with torch.no_grad():
        for e in examples:
            ids = torch.tensor([e.prompt_ids + e.response_ids])
            logits = policy.model(input_ids=ids).logits[0, len(e.prompt_ids) - 1 : -1]
            lp += torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(e.response_ids)[:, None])[:, 0].tolist()
    assert sft_loss(policy, examples) == pytest.approx(-sum(lp) / len(lp), rel=1e-4)

    code, _ = build_examples("code", problems, tok, cfg)
    assert tok.decode(code[0].response_ids[:-1]) == f"```python\n{problems[0].gt_solution.strip()}\n```"


def test_test_answer_orders_the_golden_asserts() -> None:
    p = dataclasses.replace(
        load_problems("bundled:train")[0],
        entry_point="f",
        golden_tests=[
            "assert f(10, 20) == 30",
            "x = 1",
            "assert f(1, 2) == 3",
            "assert g(0) == 0",
            "assert f(0, 0) == 0",
        ],
    )
    given = test_answer(p, 3).splitlines()[1:-1]
    assert given == ["assert f(10, 20) == 30", "assert f(1, 2) == 3", "assert f(0, 0) == 0"]
    shortest = test_answer(p, 3, "shortest").splitlines()[1:-1]
    # shortest first, still only asserts on the function under test before the others; ties keep their order
    assert shortest == ["assert f(1, 2) == 3", "assert f(0, 0) == 0", "assert f(10, 20) == 30"]
    assert test_answer(p, 5, "shortest").splitlines()[4:6] == ["x = 1", "assert g(0) == 0"]
    with pytest.raises(ValueError, match="order"):
        test_answer(p, 3, "longest")
    # the config knob reaches the examples
    cfg = tiny_cfg(sft={"test_order": "shortest"})
    n = cfg.game.tests_requested or cfg.game.tests_per_suite
    assert role_messages("test", p, cfg)[1] == test_answer(p, n, "shortest") != test_answer(p, n)
    with pytest.raises(UserError):
        tiny_cfg(sft={"test_order": "longest"})


def test_examples_skip_what_the_game_could_not_produce(problems) -> None:
    cfg = tiny_cfg(
        generation={"code": {"max_new_tokens": 5}, "test": {"response_prefix": "```python\nassert nope("}},
        sft={"max_examples": None},
    )
    policy = build_sft_policy(cfg, "tiny-random")
    assert build_examples("code", problems, policy.tokenizer, cfg)[1]["too_long"] == len(problems)
    assert build_examples("test", problems, policy.tokenizer, cfg)[1]["prefix"] == len(problems)


def test_sft_lowers_the_loss_on_its_examples(problems) -> None:
    cfg = tiny_cfg(sft={"epochs": 4, "max_examples": 2})
    policy = build_sft_policy(cfg, "tiny-random")
    examples = [e for role in ("code", "test") for e in build_examples(role, problems, policy.tokenizer, cfg)[0]]
    steps = set_schedule(policy, len(examples), cfg)
    assert steps == 8
    before = sft_loss(policy, examples)
    calls = []
    history = train_sft(policy, examples, cfg, progress=lambda done, total, loss: calls.append((done, total)))
    after = sft_loss(policy, examples)
    assert len(history) == 4 and calls[-1] == (8, 8)
    assert after < before - 0.5


def test_full_sft_writes_a_model_the_trainer_starts_from(problems, tmp_path) -> None:
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.build import build_policies

    cfg = tiny_cfg()
    out = tmp_path / "sft"
    summary = run_sft(cfg, out, problems=problems, progress=False)
    assert set(summary["models"]) == {"shared"} and summary["examples"] == {"code": 2, "test": 2}
    assert summary["loss_after"]["shared"] < summary["loss_before"]["shared"]
    assert summary["overrides"] == [f"model.code_model={out / 'shared'}"]
    assert json.loads((out / "sft.json").read_text())["models"] == summary["models"]

    model, tok = load_model_and_tokenizer(str(out / "shared"))
    base, _ = load_model_and_tokenizer("tiny-random")
    assert tok.chat_template and tok.eos_token_id == policy_eos()
    trained = dict(model.named_parameters())
    assert any(not torch.equal(p, trained[n]) for n, p in base.named_parameters())

    run_cfg = load_config(None, ["model.code_model=tiny-random", *summary["overrides"]])
    code_policy, test_policy = build_policies(run_cfg)
    for name, p in code_policy.model.named_parameters():
        assert torch.equal(p, trained[name])
    for name, p in test_policy.model.named_parameters():  # test_policy null: the same start
        assert torch.equal(p, trained[name])

    with pytest.raises(UserError, match="not empty"):
        run_sft(cfg, out, problems=problems, progress=False)


def policy_eos() -> int:
    from codea1.models import load_model_and_tokenizer

    return load_model_and_tokenizer("tiny-random")[1].eos_token_id


def test_lora_sft_trains_only_the_adapter(problems, tmp_path) -> None:
    from codea1.models import load_model_and_tokenizer

    cfg = tiny_cfg(model={"mode": "lora"}, policy={"lora_r": 4, "lora_alpha": 8}, sft={"epochs": 2})
    policy = build_sft_policy(cfg, "tiny-random")
    base = {n: p.detach().clone() for n, p in policy.model.named_parameters() if "lora_" not in n}
    lora = {n: p.detach().clone() for n, p in policy.model.named_parameters() if "lora_B" in n}
    examples, _ = build_examples("test", problems, policy.tokenizer, cfg)
    set_schedule(policy, len(examples), cfg)
    train_sft(policy, examples, cfg)
    now = dict(policy.model.named_parameters())
    assert all(torch.equal(v, now[n]) for n, v in base.items())  # the base is frozen
    assert any(not torch.equal(v, now[n]) for n, v in lora.items())  # the adapter moved
    assert {n for n, p in now.items() if p.requires_grad} == {n for n in now if "lora_" in n}

    out = tmp_path / "sft-lora"
    summary = run_sft(cfg, out, problems=problems, progress=False)
    assert (out / "shared" / "adapter_config.json").is_file()
    assert not (out / "shared" / "config.json").exists()  # an adapter, not a full copy
    merged, _ = load_model_and_tokenizer(str(out / "shared"))
    plain, _ = load_model_and_tokenizer("tiny-random")
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        assert not torch.allclose(merged(input_ids=ids).logits, plain(input_ids=ids).logits)
    assert summary["mode"] == "lora"


def test_sft_asks_the_method_whether_its_test_role_has_a_model_of_its_own(monkeypatch) -> None:
    """A method is one object: a new method with a Test LLM of its own (a second a1-like row) is not one
    shared model, whatever its name (before, any method but a1 was)."""
    import dataclasses

    from codea1 import method_traits

    separate = tiny_cfg(model={"test_model": "smollm2-135m"})
    assert not shares_one_model(separate)
    monkeypatch.setitem(method_traits.TRAITS, "a1", dataclasses.replace(method_traits.TRAITS["a1"], name="duel"))
    assert not shares_one_model(separate)  # the property, not the name
    shared = dataclasses.replace(method_traits.TRAITS["selfplay"], name="a1")
    monkeypatch.setitem(method_traits.TRAITS, "a1", shared)
    assert shares_one_model(separate)


def test_which_models_sft_trains() -> None:
    assert shares_one_model(tiny_cfg())
    assert shares_one_model(tiny_cfg(model={"mode": "dual-lora"}))
    assert shares_one_model(config_from_dict({"method": "selfplay", "model": {"test_model": "smollm2-135m"}}))
    separate = tiny_cfg(model={"test_model": "smollm2-135m"})
    assert not shares_one_model(separate)
    assert start_overrides(separate, {"code": "o/code", "test": "o/test"}) == [
        "model.code_model=o/code",
        "model.test_model=o/test",
    ]
    explicit = tiny_cfg(model={"test_model": "tiny-random"})
    assert shares_one_model(explicit)
    assert start_overrides(explicit, {"shared": "o/shared"}) == [
        "model.code_model=o/shared",
        "model.test_model=o/shared",
    ]


def test_sft_config_round_trips_and_refuses_bad_values(tmp_path) -> None:
    cfg = tiny_cfg(sft={"roles": ["test"], "epochs": 3})
    path = tmp_path / "c.yaml"
    path.write_text(cfg.to_yaml())
    again = load_config(path)
    assert again == cfg and again.sft.roles == ["test"] and again.sft.epochs == 3
    assert dataclasses.asdict(load_config(None).sft)["roles"] == ["code", "test"]
    for bad, fragment in [
        ("sft.roles=[coder]", "sft.roles"),
        ("sft.roles=[]", "sft.roles"),
        ("sft.roles=[test, test]", "twice"),
        ("sft.epochs=0", "sft.epochs"),
        ("sft.lr=0", "sft.lr"),
        ("sft.batch_size=0", "sft.batch_size"),
        ("sft.max_examples=0", "sft.max_examples"),
        ("sft.epoch=2", "unknown config key"),
    ]:
        with pytest.raises(UserError, match=fragment):
            load_config(None, [bad])
