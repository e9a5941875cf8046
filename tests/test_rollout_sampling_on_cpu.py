"""The rollout's sampling loop: the same greedy tokens as ``model.generate``, exactly the configured
sampling distribution (and nothing from the checkpoint's generation_config), log-probs equal to the
training path's, prefill prompts, stop strings and max_new_tokens."""

from __future__ import annotations

import pytest
import torch

from codea1.inference.rollout import TransformersRollout, render_prompts, sample_next
from codea1.models import load_model_and_tokenizer
from codea1.rl.policy import GenerationConfig, Policy, PolicyConfig

PROMPTS = [
    [{"role": "system", "content": "Answer with a number."}, {"role": "user", "content": "Two plus two?"}],
    [{"role": "user", "content": "Write 7."}],
    [{"role": "user", "content": "def f(x):\n    return x * x\n# call it with three, print the result"}],
]
PREFILL = [{"role": "user", "content": "Add two numbers."}, {"role": "assistant", "content": "def add(a, b):"}]


def no_score(prompts, responses, temperature=1.0):
    raise AssertionError("the loop should not need a scoring pass here")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return load_model_and_tokenizer("tiny-random")


@pytest.fixture(scope="module")
def peaked():
    """tiny-random with its logits scaled up (a peaked next-token distribution, so that a wrong
    temperature, top-k or top-p shows in the sample frequencies)."""
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    with torch.no_grad():
        model.model.norm.weight.mul_(2.5)
    model.eval()
    return model, tok


def engines(model, tok, score=no_score):
    return {
        "loop": TransformersRollout(model, tok, score),
        "hf-generate": TransformersRollout(
            model, tok, lambda p, r, temperature=1.0: [[0.0] * len(x) for x in r], engine="hf-generate"
        ),
    }


def ids_of(rows):
    return [[s.response_ids for s in row] for row in rows]


def test_greedy_loop_equals_model_generate(tiny):
    model, tok = tiny
    e = engines(model, tok)
    gen = GenerationConfig(n=2, temperature=0.0, max_new_tokens=12, rows_per_call=6)
    lengths = {len(p) for p in render_prompts(tok, PROMPTS)}
    assert len(lengths) == 3  # left padding really happens
    loop, ref = e["loop"].generate(PROMPTS, gen), e["hf-generate"].generate(PROMPTS, gen)
    assert ids_of(loop) == ids_of(ref)
    assert [[s.text for s in row] for row in loop] == [[s.text for s in row] for row in ref]
    # stop strings that end rows at different steps (rows leave the loop's batch): still the same
    stops = [row[0].text[3:5] for row in ref if len(row[0].text) > 6][:2]
    gen_stop = GenerationConfig(n=2, temperature=0.0, max_new_tokens=12, rows_per_call=6, stop=stops)
    loop, ref = e["loop"].generate(PROMPTS, gen_stop), e["hf-generate"].generate(PROMPTS, gen_stop)
    assert ids_of(loop) == ids_of(ref)
    assert [[(s.text, s.finished) for s in row] for row in loop] == [[(s.text, s.finished) for s in row] for row in ref]
    # a different batch size (rows of one prompt split over chunks) gives the same tokens
    small = GenerationConfig(n=2, temperature=0.0, max_new_tokens=12, rows_per_call=1)
    assert ids_of(e["loop"].generate(PROMPTS, small)) == ids_of(e["hf-generate"].generate(PROMPTS, gen))


def exact_distribution(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """The configured next-token distribution, written out step by step (float64)."""
    p = torch.softmax(logits.double() / temperature, dim=-1)
    order = torch.argsort(p, descending=True).tolist()
    kept: list[int] = []
    mass = 0.0
    for rank, i in enumerate(order):
        if top_k and rank >= top_k:
            break
        if kept and mass >= top_p * float(p[order[: top_k or None]].sum()):
            break
        kept.append(i)
        mass += float(p[i])
    out = torch.zeros_like(p)
    out[kept] = p[kept] / p[kept].sum()
    return out


def tv(a: torch.Tensor, b: torch.Tensor) -> float:
    return 0.5 * float((a - b).abs().sum())


def frequencies(tokens: list[int], vocab: int) -> torch.Tensor:
    return torch.bincount(torch.tensor(tokens), minlength=vocab).double() / len(tokens)


@torch.no_grad()
def next_logits(model, ids: list[int]) -> torch.Tensor:
    return model(input_ids=torch.tensor([ids])).logits[0, -1].float()


SETTINGS = {"temperature": 0.7, "top_k": 40, "top_p": 0.9}


@pytest.mark.parametrize("engine", ["loop", "hf-generate"])
@pytest.mark.parametrize("checkpoint_defaults", [False, True])
def test_samples_follow_exactly_the_configured_distribution(peaked, engine, checkpoint_defaults):
    model, tok = peaked
    saved = model.generation_config.to_dict()
    if checkpoint_defaults:  # a checkpoint's own sampling defaults (as Qwen2.5-Coder-Instruct ships) are ignored
        for key, value in {
            "repetition_penalty": 3.0,
            "top_k": 1,
            "temperature": 0.1,
            "top_p": 0.5,
            "no_repeat_ngram_size": 1,
            "do_sample": True,
        }.items():
            setattr(model.generation_config, key, value)
    try:
        n = 4000
        rows = engines(model, tok)[engine].generate(
            PROMPTS[1:2], GenerationConfig(n=n, max_new_tokens=2, seed=0, rows_per_call=n, **SETTINGS)
        )[0]
    finally:
        for key in ("repetition_penalty", "top_k", "temperature", "top_p", "no_repeat_ngram_size", "do_sample"):
            setattr(model.generation_config, key, saved.get(key))
    vocab = model.config.vocab_size
    prompt = rows[0].prompt_ids
    # first step
    logits = next_logits(model, prompt)
    exact = exact_distribution(logits, **SETTINGS)
    first = [s.response_ids[0] for s in rows]
    freq = frequencies(first, vocab)
    assert float(exact[freq > 0].min()) > 0  # nothing outside the top-k/top-p set
    support = int((exact > 0).sum())
    assert 3 <= support <= 40
    bound = 0.8 * (support / n) ** 0.5  # about twice the expected TV distance of n exact draws
    assert tv(freq, exact) < bound
    # the test would catch a wrong setting: each alternative is far from the configured distribution
    for wrong in (
        {"temperature": 1.0, "top_k": 40, "top_p": 0.9},
        {"temperature": 0.7, "top_k": 0, "top_p": 1.0},
        {"temperature": 0.7, "top_k": 40, "top_p": 0.5},
        {"temperature": 0.1, "top_k": 1, "top_p": 0.5},
    ):
        assert tv(exact_distribution(logits, **wrong), exact) > 2 * bound
    # a later step, given the most frequent first token
    top = max(set(first), key=first.count)
    second = [s.response_ids[1] for s in rows if s.response_ids[0] == top and len(s.response_ids) > 1]
    assert len(second) >= 500
    exact2 = exact_distribution(next_logits(model, prompt + [top]), **SETTINGS)
    freq2 = frequencies(second, vocab)
    assert float(exact2[freq2 > 0].min()) > 0
    bound2 = 0.8 * (int((exact2 > 0).sum()) / len(second)) ** 0.5
    assert tv(freq2, exact2) < bound2
    # a repetition penalty (the checkpoint's 3.0 on the tokens seen so far) would be caught here
    logits2 = next_logits(model, prompt + [top])
    seen = sorted(set(prompt + [top]))
    logits2[seen] = torch.where(logits2[seen] > 0, logits2[seen] / 3.0, logits2[seen] * 3.0)
    assert tv(exact_distribution(logits2, **SETTINGS), exact2) > 2 * bound2


def test_sample_next_greedy_and_restrictions():
    logits = torch.tensor([[0.0, 3.0, 3.0, 1.0, -2.0], [5.0, 0.0, 0.0, 0.0, 4.9]])
    token, logp = sample_next(logits, 0.0)
    assert token.tolist() == [1, 0]  # argmax, first on ties
    assert torch.allclose(logp, torch.log_softmax(logits, -1)[[0, 1], [1, 0]])
    torch.manual_seed(0)
    draws = torch.stack([sample_next(logits, 1.0, top_k=2)[0] for _ in range(300)])
    assert set(draws[:, 0].tolist()) == {1, 2} and set(draws[:, 1].tolist()) == {0, 4}
    draws = torch.stack([sample_next(logits, 1.0, top_p=0.5)[0] for _ in range(300)])
    # row 0: 1 and 2 hold 0.47 each, so both are needed to reach 0.5; row 1: token 0 alone holds 0.52
    assert set(draws[:, 0].tolist()) == {1, 2} and set(draws[:, 1].tolist()) == {0}


@pytest.fixture(scope="module")
def policy() -> Policy:
    torch.manual_seed(0)
    model, tok = load_model_and_tokenizer("tiny-random")
    return Policy(model, tok, PolicyConfig(kl_coef=0.0))


def test_stored_logprobs_equal_the_training_path(policy):
    tok = policy.tokenizer
    # rows that end at different steps (stop strings and max_new_tokens) leave the batch mid-way
    base = policy.generate(PROMPTS, GenerationConfig(n=3, max_new_tokens=14, seed=2))
    stops = list({row[0].text[4:6] for row in base if len(row[0].text) > 8})
    rows = policy.generate(
        PROMPTS + [PREFILL], GenerationConfig(n=3, max_new_tokens=14, seed=2, stop=stops, temperature=0.8, top_p=0.95)
    )
    flat = [s for row in rows for s in row]
    assert len({len(s.response_ids) for s in flat}) > 1
    train = policy.logprobs([s.prompt_ids for s in flat], [s.response_ids for s in flat], temperature=0.8)
    for s, lp in zip(flat, train, strict=False):
        assert s.temperature == 0.8
        assert len(s.logprobs) == len(s.response_ids) <= 14
        assert torch.allclose(torch.tensor(s.logprobs), torch.tensor(lp), atol=1e-5)
        assert s.finished == (
            len(s.response_ids) > 0 and (s.response_ids[-1] == tok.eos_token_id or any(x in s.text for x in stops))
        )
        if not s.finished:
            assert len(s.response_ids) == 14


def test_prefill_is_prompt_and_text_starts_with_it(policy):
    tok = policy.tokenizer
    prefix = PREFILL[-1]["content"]
    expected = tok(
        tok.apply_chat_template(PREFILL, continue_final_message=True, add_generation_prompt=False, tokenize=False),
        add_special_tokens=False,
    ).input_ids
    assert render_prompts(tok, [PREFILL]) == [expected]
    assert tok.decode(expected).endswith(prefix)
    rows = policy.generate([PREFILL], GenerationConfig(n=4, max_new_tokens=8, seed=0))[0]
    for s in rows:
        assert s.prompt_ids == expected
        assert s.text == prefix + tok.decode(s.response_ids, skip_special_tokens=True)
        assert len(s.logprobs) == len(s.response_ids)
    # stop strings are searched in the generated text only: the prefix itself does not stop anything
    again = policy.generate([PREFILL], GenerationConfig(n=4, max_new_tokens=8, seed=0, stop=[prefix]))[0]
    assert [(s.response_ids, s.text, s.finished) for s in again] == [(s.response_ids, s.text, s.finished) for s in rows]
    # the hf-generate engine follows the same contract
    hf = TransformersRollout(policy.model, tok, policy.logprobs, engine="hf-generate")
    greedy = GenerationConfig(n=1, max_new_tokens=8, temperature=0.0)
    assert ids_of(hf.generate([PREFILL], greedy)) == ids_of(policy.generate([PREFILL], greedy))
    assert hf.generate([PREFILL], greedy)[0][0].text.startswith(prefix)


def test_unknown_engine_is_refused(tiny):
    with pytest.raises(ValueError):
        TransformersRollout(*tiny, no_score, engine="vllm")


def test_scoring_pass_only_where_the_generation_forward_differs_from_training(tiny):
    model, tok = tiny
    assert Policy(model, tok, PolicyConfig(kl_coef=0.0)).rollout.reuse_logprobs
    # under bf16 autocast the training path's log-probs are not the float32 generation forward's
    assert not Policy(model, tok, PolicyConfig(kl_coef=0.0, dtype="bfloat16")).rollout.reuse_logprobs
    calls = []

    def score(prompts, responses, temperature=1.0):
        calls.append(len(prompts))
        return [[-1.0] * len(r) for r in responses]

    rows = TransformersRollout(model, tok, score, reuse_logprobs=False).generate(
        PROMPTS[:2], GenerationConfig(n=2, max_new_tokens=4, seed=0)
    )
    assert calls == [4] and all(s.logprobs == [-1.0] * len(s.response_ids) for row in rows for s in row)


def test_packed_weights_sample_exactly_what_the_plain_loop_samples(tiny, monkeypatch):
    """The loop's linear layers on MKL-packed weights (CPU, float32) give the plain matmul's numbers
    within float32 rounding (bit for bit on SmolLM2's layers; the tiny model's small products take other
    kernels): the same seeded samples, the same stored log-probs to 1e-5; after the call every layer
    computes with its own weights again (a training step must see them)."""
    from codea1.inference import rollout

    if not rollout._mkl_packing_available():
        pytest.skip("this torch build has no MKL packed GEMM")
    model, tok = tiny
    monkeypatch.setattr(rollout, "PACK_MIN_PARAMS", 0)  # the tiny model's layers are all small
    with rollout.packed_linears(model, 4) as packed:
        assert packed == sum(type(m) is torch.nn.Linear for m in model.modules()) > 0
        assert all("forward" in m.__dict__ for m in model.modules() if type(m) is torch.nn.Linear)
    assert not any("forward" in m.__dict__ for m in model.modules())
    gen = GenerationConfig(n=3, temperature=1.0, top_p=0.9, max_new_tokens=16, rows_per_call=4, seed=11)
    plain = TransformersRollout(model, tok, no_score, pack_weights=False).generate(PROMPTS + [PREFILL], gen)
    fast = TransformersRollout(model, tok, no_score).generate(PROMPTS + [PREFILL], gen)
    assert ids_of(fast) == ids_of(plain)
    diffs = [
        abs(a - b)
        for rf, rp in zip(fast, plain, strict=False)
        for sf, sp in zip(rf, rp, strict=False)
        for a, b in zip(sf.logprobs, sp.logprobs, strict=False)
    ]
    assert diffs and max(diffs) < 1e-5
    # nothing packed where the copy would be too large
    monkeypatch.setattr(rollout, "PACK_MAX_BYTES", 0)
    with rollout.packed_linears(model, 4) as packed:
        assert packed == 0


def _tiny_llama(tok, **overrides):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = {
        "vocab_size": len(tok),
        "hidden_size": 64,
        "intermediate_size": 96,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "max_position_embeddings": 512,
        "tie_word_embeddings": True,
        "initializer_range": 0.1,
        "pad_token_id": tok.pad_token_id,
        "eos_token_id": tok.eos_token_id,
        "bos_token_id": None,
    }
    cfg.update(overrides)
    torch.manual_seed(3)
    return LlamaForCausalLM(LlamaConfig(**cfg)).eval()


@pytest.mark.parametrize("arch", ["qwen2", "llama", "llama-rope-scaled"])
def test_lean_decoder_samples_what_the_model_forward_samples(tiny, arch, monkeypatch):
    """The lean decoding step (stacked q/k/v and gate/up products, its own key/value buffers) is the
    model's forward for one token per row: the same seeded samples and log-probs within float32 rounding,
    with left padding, rows leaving the batch at different steps and buffers that grow mid-call."""
    from codea1.inference import fast_decode
    from codea1.inference.fast_decode import LlamaDecoder

    base, tok = tiny
    model = {
        "qwen2": base,
        "llama": _tiny_llama(tok),
        "llama-rope-scaled": _tiny_llama(tok, rope_scaling={"rope_type": "linear", "factor": 2.0}),
    }[arch]
    assert LlamaDecoder.supports(model)
    monkeypatch.setattr(fast_decode, "GROW", 3)  # the buffers grow several times within one call
    calls = []
    monkeypatch.setattr(
        LlamaDecoder, "step", lambda self, *a, _step=LlamaDecoder.step: calls.append(1) or _step(self, *a)
    )
    plain = TransformersRollout(model, tok, no_score, fast_decode=False)
    lean = TransformersRollout(model, tok, no_score)
    greedy = GenerationConfig(n=2, temperature=0.0, max_new_tokens=10, rows_per_call=6)
    ref = plain.generate(PROMPTS, greedy)
    stops = [row[0].text[3:5] for row in ref if len(row[0].text) > 6][:2]
    for gen in (
        greedy,
        GenerationConfig(n=3, temperature=1.0, top_p=0.95, max_new_tokens=16, rows_per_call=4, seed=5, stop=stops),
    ):
        a, b = plain.generate(PROMPTS + [PREFILL], gen), lean.generate(PROMPTS + [PREFILL], gen)
        assert ids_of(a) == ids_of(b)
        assert [[(s.text, s.finished) for s in row] for row in a] == [[(s.text, s.finished) for s in row] for row in b]
        diffs = [
            abs(x - y)
            for ra, rb in zip(a, b, strict=False)
            for sa, sb in zip(ra, rb, strict=False)
            for x, y in zip(sa.logprobs, sb.logprobs, strict=False)
        ]
        assert diffs and max(diffs) < 1e-5
    assert calls  # the lean step really ran
    assert len({len(s.response_ids) for row in b for s in row}) > 1  # rows left the batch at different steps


def test_lean_decoder_only_where_its_step_is_the_models(tiny):
    """Adapters, another dtype or another architecture keep the model's own forward."""
    import copy

    from peft import LoraConfig, get_peft_model

    from codea1.inference.fast_decode import LlamaDecoder

    model, tok = tiny
    assert LlamaDecoder.supports(model)
    assert not LlamaDecoder.supports(copy.deepcopy(model).to(torch.bfloat16))
    lora = get_peft_model(copy.deepcopy(model), LoraConfig(r=2, target_modules=["q_proj", "v_proj"]))
    assert not LlamaDecoder.supports(lora)
    assert not LlamaDecoder.supports(lora.get_base_model())  # its q/v layers are LoRA layers now
    gelu = _tiny_llama(tok, hidden_act="gelu")
    assert not LlamaDecoder.supports(gelu)
    assert not LlamaDecoder.supports(torch.nn.Linear(2, 2))


def test_a_call_shared_over_ranks_samples_what_one_call_samples(tiny):
    """Data-parallel sampling: each rank draws its share of a call's prompts (blocks of whole chunks,
    seeded by their place in the call); merged, the shares are the one call's samples, token for token."""
    from codea1.inference.rollout import share_blocks

    model, tok = tiny
    prompts = [[{"role": "user", "content": f"Count to {k}."}] for k in range(7)]
    gen = GenerationConfig(n=2, seed=11, max_new_tokens=6, temperature=1.0, rows_per_call=4)
    rollout = TransformersRollout(model, tok, no_score)
    whole = rollout.generate(prompts, gen)
    for world in (2, 3):
        merged = [None] * len(prompts)
        for share in share_blocks(len(prompts), gen.n, gen.rows_per_call, world):
            part = rollout.generate([prompts[i] for i in share], gen, share) if share else []
            for i, group in zip(share, part, strict=False):
                merged[i] = group
        for a, b in zip(whole, merged, strict=False):
            assert [s.response_ids for s in a] == [s.response_ids for s in b]
            assert [s.logprobs for s in a] == [s.logprobs for s in b]
    # the chunks do not all sample alike (each chunk has a seed of its own)
    assert len({tuple(g[0].response_ids) for g in whole}) > 1


def test_share_blocks_deal_whole_chunks():
    from codea1.inference.rollout import chunk_seed, share_blocks

    assert share_blocks(5, 2, 4, 2) == [[0, 1, 4], [2, 3]]  # 4-row chunks of 2 prompts each
    assert share_blocks(9, 3, 4, 2) == [[0, 1, 2, 3, 8], [4, 5, 6, 7]]  # lcm(4, 3) = 12 rows: 4 prompts
    assert share_blocks(1, 4, 64, 4) == [[0], [], [], []]
    assert chunk_seed(7, 0) == 7 and chunk_seed(7, 4) != chunk_seed(7, 8) != 7
