"""codea1.models: builtin names, local dirs, chat templates, clear errors, atomic cache."""

from __future__ import annotations

import pytest
import torch

from codea1 import models
from codea1.errors import UserError
from codea1.models import load_model_and_tokenizer

MESSAGES = [
    {"role": "system", "content": "You write Python."},
    {"role": "user", "content": "Add two numbers."},
]


@pytest.fixture(scope="module")
def tiny():
    return load_model_and_tokenizer("tiny-random")


def test_tiny_random_has_chat_template_pad_and_eos(tiny):
    model, tok = tiny
    text = tok.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=False)
    assert text == (
        "<|im_start|>system\nYou write Python.<|im_end|>\n"
        "<|im_start|>user\nAdd two numbers.<|im_end|>\n<|im_start|>assistant\n"
    )
    no_prompt = tok.apply_chat_template(MESSAGES, add_generation_prompt=False, tokenize=False)
    assert not no_prompt.endswith("assistant\n")
    assert tok.eos_token == "<|im_end|>" and tok.pad_token == "<|endoftext|>"
    assert tok.pad_token_id != tok.eos_token_id
    ids = tok(text, add_special_tokens=False).input_ids
    assert tok.decode(ids) == text  # byte-level BPE round-trips exactly
    assert model.config.vocab_size == len(tok) and model.config.num_hidden_layers == 2
    assert model.config.pad_token_id == tok.pad_token_id


def test_tiny_random_is_deterministic_and_leaves_global_rng(tiny):
    model, _ = tiny
    torch.manual_seed(123)
    before = torch.rand(3)
    torch.manual_seed(123)
    again, _ = load_model_and_tokenizer("tiny-random")
    after = torch.rand(3)
    assert torch.equal(before, after)
    for (name, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items(), strict=False):
        assert torch.equal(a, b), name


def test_tiny_random_dtype_switch():
    model, _ = load_model_and_tokenizer("tiny-random", dtype="bfloat16")
    assert next(model.parameters()).dtype == torch.bfloat16


def test_local_dir_round_trip(tiny, tmp_path):
    model, tok = tiny
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    loaded, tok2 = load_model_and_tokenizer(str(tmp_path))
    assert tok2.apply_chat_template(MESSAGES, tokenize=False) == tok.apply_chat_template(MESSAGES, tokenize=False)
    x = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        assert torch.allclose(model(x).logits, loaded(x).logits)


@pytest.mark.parametrize("name", ["no-such-model", "./missing/dir/x", "a b c"])
def test_bad_names_raise_one_sentence_user_error(name):
    with pytest.raises(UserError) as err:
        load_model_and_tokenizer(name)
    assert "\n" not in str(err.value)


def test_dir_without_config_is_user_error(tmp_path):
    with pytest.raises(UserError, match="config.json"):
        load_model_and_tokenizer(str(tmp_path))


def test_bad_dtype_is_user_error():
    with pytest.raises(UserError, match="dtype"):
        load_model_and_tokenizer("tiny-random", dtype="float8")


def test_atomic_save_leaves_no_partial_dir_on_crash(tmp_path):
    target = tmp_path / "cache" / "thing"

    def crash(d):
        (d / "half.bin").write_bytes(b"x")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        models._atomic_save(target, crash)
    assert not target.exists() and list(target.parent.iterdir()) == []
    models._atomic_save(target, lambda d: (d / "full.bin").write_bytes(b"ok"))
    assert (target / "full.bin").read_bytes() == b"ok"
    # A second writer losing the race keeps the first copy and cleans up after itself.
    models._atomic_save(target, lambda d: (d / "full.bin").write_bytes(b"other"))
    assert (target / "full.bin").read_bytes() == b"ok" and len(list(target.parent.iterdir())) == 1


def test_cache_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CODEA1_CACHE", str(tmp_path / "c"))
    assert models.cache_dir() == tmp_path / "c"


def test_hub_id_shape():
    assert models._looks_like_hub_id("Qwen/Qwen2.5-Coder-1.5B-Instruct")
    assert not models._looks_like_hub_id("no-such-model")


@pytest.mark.slow
def test_smollm2_loads_with_chat_template_and_generates():
    model, tok = load_model_and_tokenizer("smollm2-135m")
    assert type(model).__name__ == "LlamaForCausalLM"
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    text = tok.apply_chat_template(
        [{"role": "user", "content": "Say hello."}], add_generation_prompt=True, tokenize=False
    )
    assert text.endswith("<|im_start|>assistant\n")
    enc = tok(text, return_tensors="pt", add_special_tokens=False)
    out = model.generate(**enc, max_new_tokens=8, do_sample=False)
    assert tok.decode(out[0, enc.input_ids.shape[1] :]).strip()


def test_the_gguf_readers_own_bar_is_off_while_codea1_converts(capfd):
    """transformers' GGUF reader draws a tqdm bar outside transformers' own switch; it interleaved with
    codea1's output the first time the demo converted the bundled model."""
    reader = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    before = reader.tqdm
    with models._gguf_bar_off():
        for _ in reader.tqdm(range(50), desc="Converting and de-quantizing GGUF tensors..."):
            pass
    assert "de-quantizing" not in capfd.readouterr().err
    assert reader.tqdm is before
    for _ in reader.tqdm(range(3), desc="outside", disable=False):
        pass
    assert "outside" in capfd.readouterr().err  # the bar is the reader's as before once the conversion ends


def test_an_uncached_hub_id_with_the_hub_unreachable_is_refused_at_once(monkeypatch):
    # the hub client retried for about a minute, printing each retry, before it said the same
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(models, "_hub_reachable", lambda timeout=3.0: False, raising=False)

    def never(*args, **kwargs):
        raise AssertionError("the hub client was asked")

    monkeypatch.setattr("transformers.AutoTokenizer.from_pretrained", never)
    with pytest.raises(UserError, match=r"^model 'nobody-xyz/no-such-model' is not in the local hub cache and "):
        load_model_and_tokenizer("nobody-xyz/no-such-model")
    monkeypatch.setattr(models, "_in_hub_cache", lambda name: True, raising=False)  # cached: on to the client
    with pytest.raises(AssertionError, match="the hub client was asked"):
        load_model_and_tokenizer("nobody-xyz/no-such-model")
