"""The vLLM rollout backend's logic, with the engine mocked at its boundary: a fake `vllm` module whose
`LLM` records every call (CI has no vLLM and no GPU). What is checked: the engine's construction (the
checkpoint's generation config ignored, sleep mode), the SamplingParams of each prompt (exactly the
configured sampling, penalties neutral, per-prompt seeds), prompt rendering (chat template, prefill
continued), n grouping and order, weight sync after an update (full weights through load_weights, LoRA
through a new adapter id per update), sleep/wake around each rollout, and the default backend."""

from __future__ import annotations

import importlib
import pickle
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch

from codea1.config import config_from_dict
from codea1.inference.rollout import GenerationConfig, TransformersRollout

EOS_EXTRA = 7  # an end id the fake checkpoint's generation config adds


@dataclass
class FakeLogprob:
    logprob: float


@dataclass
class FakeCompletion:
    index: int
    token_ids: list[int]
    text: str
    finish_reason: str
    logprobs: list | None = None  # with SamplingParams(logprobs=0): per token, {sampled id: Logprob}


@dataclass
class FakeRequestOutput:
    prompt_token_ids: list[int]
    outputs: list[FakeCompletion]


class FakeSamplingParams:
    """What vLLM's SamplingParams does where it matters here: greedy (temperature 0) with n > 1 is refused,
    a temperature above 2 too, and a positive one below 0.01 is raised to 0.01."""

    def __init__(self, **kwargs: Any) -> None:
        t = kwargs.get("temperature", 1.0)
        if t > 2.0:
            raise ValueError(f"temperature must be in [0, 2], got {t}.")
        if 0 < t < 0.01:
            kwargs = {**kwargs, "temperature": 0.01}
        if t == 0 and kwargs.get("n", 1) > 1:
            raise ValueError(f"n must be 1 when using greedy sampling, got {kwargs['n']}.")
        self.kwargs = kwargs

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["kwargs"][name]
        except KeyError:
            raise AttributeError(name) from None


class FakeLoRARequest:
    def __init__(self, lora_name: str, lora_int_id: int, lora_path: str) -> None:
        self.lora_name, self.lora_int_id, self.lora_path = lora_name, lora_int_id, lora_path


class FakeModel:
    def __init__(self, log: list, rank: int = 0) -> None:
        self.log, self.rank = log, rank

    def load_weights(self, weights: Any) -> None:
        if self.rank == 0:  # what every rank is handed is checked by the tensor-parallel test
            self.log.append(("load_weights", {name: t.clone() for name, t in weights}))
        else:
            self.log.append(("load_weights_rank", self.rank, sorted(name for name, _ in weights)))


def _as_encoded(value: Any) -> Any:
    """What vLLM's msgpack encoder and decoder make of a value in an RPC's untyped arguments: tensors
    become [dtype, shape, buffer index] lists (the tensor's bytes travel aside, and nothing rebuilds it)."""
    if isinstance(value, torch.Tensor):
        return [str(value.dtype).removeprefix("torch."), list(value.shape), 0]
    if isinstance(value, (list, tuple)):
        return [_as_encoded(v) for v in value] if isinstance(value, list) else tuple(_as_encoded(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_encoded(v) for k, v in value.items()}
    return value


def _reload_from_disk(model: FakeModel) -> Any:
    """The model runner's `reload_weights(weights_path=...)`: every safetensors file of the folder into the
    model's `load_weights`, as vLLM's in-place reload does."""

    def reload_weights(
        weights_iterator: Any = None, weights_path: str | None = None, is_checkpoint_format: bool = True
    ) -> None:
        from safetensors.torch import load_file

        if weights_iterator is not None:
            model.load_weights(list(weights_iterator))
            return
        pairs = [p for path in sorted(Path(weights_path).glob("*.safetensors")) for p in load_file(path).items()]
        model.load_weights(pairs)

    return reload_weights


def engine_logprob(token: int, index: int) -> float:
    """The fake engine's log-prob of a sampled token: a made-up value, different for every token."""
    return -0.5 - 0.01 * token - 0.1 * index


@dataclass
class FakeLLM:
    """Records calls; each request's completions come back in reverse index order, so the backend must
    sort them; odd completions end by length, even ones by a stop (with the end id)."""

    kwargs: dict
    log: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    instances: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.llm_engine = types.SimpleNamespace(remove_lora=self.removed.append)
        FakeLLM.created.append(self)

    def generate(self, inputs: list, params: list, use_tqdm: bool = True, lora_request: Any = None) -> list:
        self.log.append(("generate", inputs, params, lora_request))
        outs = []
        for p, sp in zip(inputs, params, strict=False):
            comps = []
            for k in reversed(range(sp.n)):
                ids = [10 + k, 11 + len(p["prompt_token_ids"]) % 50, 12]
                ids, reason = (ids + [EOS_EXTRA], "stop") if k % 2 == 0 else (ids, "length")
                lps = None if sp.logprobs is None else [{t: FakeLogprob(engine_logprob(t, k))} for t in ids]
                comps.append(FakeCompletion(k, ids, f"text-{k}", reason, lps))
            outs.append(FakeRequestOutput(list(p["prompt_token_ids"]), comps))
        return outs

    def apply_model(self, fn: Any) -> list:
        # vLLM pickles the function for its workers (multiprocess executor, tensor parallelism, an engine
        # in its own process): a local closure is refused there
        pickle.dumps(fn)
        self.log.append(("apply_model",))
        return [fn(FakeModel(self.log))]

    def collective_rpc(self, method: Any, timeout: Any = None, args: tuple = (), kwargs: dict | None = None) -> list:
        """As vLLM's (0.32, its CPU build checked): the method (by name) runs in every worker (one per
        tensor-parallel rank), each a Worker with the engine's worker_extension_cls mixed in and a model
        runner with `reload_weights`. What crosses to a worker goes through the engine's message encoder,
        not pickle: a torch.Tensor in an RPC's arguments arrives as an encoded [dtype, shape, buffer index]
        list, as the real engine out of process delivers it ("'list' object has no attribute 'to'")."""
        if not isinstance(method, str):
            pickle.dumps(method)
        extension = self.kwargs.get("worker_extension_cls")
        bases = (importlib.import_module(extension.rsplit(".", 1)[0]).__dict__[extension.rsplit(".", 1)[1]],)
        worker_class = type("FakeWorker", bases if extension else (), {})
        out = []
        for rank in range(int(self.kwargs.get("tensor_parallel_size", 1))):
            worker = worker_class()
            model = FakeModel(self.log, rank)
            worker.model_runner = types.SimpleNamespace(model=model, reload_weights=_reload_from_disk(model))
            worker.device = torch.device("cpu")
            sent_args, sent_kwargs = pickle.loads(pickle.dumps(_as_encoded((args, kwargs or {}))))
            self.log.append(("collective_rpc", method, rank))
            answer = getattr(worker, method)(*sent_args, **sent_kwargs)
            if method == "codea1_where" and not FakeLLM.in_process:
                answer[1] = -1  # as the real engine in processes of its own (vLLM's default) answers
            out.append(answer)
        return out

    def reset_prefix_cache(self) -> None:
        self.log.append(("reset_prefix_cache",))

    def sleep(self, level: int = 1) -> None:
        self.log.append(("sleep", level))

    def wake_up(self, tags: list[str] | None = None) -> None:
        self.log.append(("wake_up", tags))

    def calls(self, name: str) -> list:
        return [c for c in self.log if c[0] == name]


FakeLLM.created = []
FakeLLM.in_process = False  # its workers answer from another process id unless a test says otherwise


@pytest.fixture
def fake_vllm(monkeypatch):
    FakeLLM.created = []
    monkeypatch.setattr(FakeLLM, "in_process", False)
    mod = types.ModuleType("vllm")
    mod.LLM = lambda **kwargs: FakeLLM(kwargs)
    mod.SamplingParams = FakeSamplingParams
    lora = types.ModuleType("vllm.lora")
    request = types.ModuleType("vllm.lora.request")
    request.LoRARequest = FakeLoRARequest
    # as in vLLM: importing `vllm` does not import its lora.request submodule (no `vllm.lora` attribute)
    monkeypatch.setitem(sys.modules, "vllm", mod)
    monkeypatch.setitem(sys.modules, "vllm.lora", lora)
    monkeypatch.setitem(sys.modules, "vllm.lora.request", request)
    return mod


def config(**sections: Any):
    data = {
        "model": {"code_model": "tiny-random", "mode": "full"},
        "policy": {"kl_coef": 0.0},
        "rollout": {"backend": "vllm", "vllm_sleep_level": 0, "vllm_dtype": "float32"},
    }
    for name, values in sections.items():
        data.setdefault(name, {}).update(values)
    return config_from_dict(data)


def build(cfg, tmp_path: Path, test: bool = True):
    from codea1.rl.build import load_policies

    code, test_policy = load_policies(cfg, test=test)
    for p in (code, test_policy):
        if p is not None:
            p.model.generation_config.eos_token_id = [p.tokenizer.eos_token_id, EOS_EXTRA]
    from codea1.inference.vllm_backend import attach_vllm

    attach_vllm(cfg, [code, test_policy], workdir=str(tmp_path))
    return code, test_policy


PROMPTS = [
    [{"role": "user", "content": "write f"}],
    [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write g, please"}],
    [{"role": "user", "content": "write h"}, {"role": "assistant", "content": "```python\ndef h("}],
]


def test_engine_ignores_the_checkpoint_generation_config_and_samples_exactly_as_configured(fake_vllm, tmp_path):
    cfg = config(rollout={"vllm_sleep_level": 1, "vllm_gpu_memory_utilization": 0.4})
    code, _ = build(cfg, tmp_path, test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["generation_config"] == "vllm"
    assert llm.kwargs["enable_sleep_mode"] is True and llm.kwargs["gpu_memory_utilization"] == 0.4
    assert llm.kwargs["seed"] == cfg.seed and "enable_lora" not in llm.kwargs
    gen = GenerationConfig(temperature=0.7, top_p=0.9, top_k=0, max_new_tokens=33, stop=["\n```"], n=4, seed=5)
    groups = code.generate(PROMPTS, gen)
    [(_, _inputs, params, lora)] = llm.calls("generate")
    assert lora is None and len(params) == len(PROMPTS)
    for sp in params:
        kw = sp.kwargs
        assert (kw["n"], kw["temperature"], kw["top_p"], kw["top_k"], kw["max_tokens"]) == (4, 0.7, 0.9, -1, 33)
        assert kw["stop"] == ["\n```"] and kw["include_stop_str_in_output"] is True
        assert (kw["repetition_penalty"], kw["presence_penalty"], kw["frequency_penalty"], kw["min_p"]) == (
            1.0,
            0.0,
            0.0,
            0.0,
        )
        assert EOS_EXTRA in kw["stop_token_ids"] and code.tokenizer.eos_token_id in kw["stop_token_ids"]
        assert kw["logprobs"] == 0  # the sampled token's own log-prob, beside the learner's
    assert llm.kwargs["logprobs_mode"] == "processed_logprobs"  # after temperature and top-p, as sampled
    seeds = [sp.seed for sp in params]
    assert len(set(seeds)) == len(seeds)  # one seed per prompt, derived from the call's seed
    assert all(abs(a - b) >= gen.n for a in seeds for b in seeds if a != b)
    again = GenerationConfig(temperature=0.7, top_p=0.9, max_new_tokens=33, n=4, seed=5)
    code.generate(PROMPTS, again)
    assert [sp.seed for sp in llm.calls("generate")[1][2]] == seeds  # same call seed, same seeds
    # top_k on, greedy
    code.generate(PROMPTS[:1], GenerationConfig(top_k=20, n=1))
    assert llm.calls("generate")[2][2][0].kwargs["top_k"] == 20
    code.generate(PROMPTS[:1], GenerationConfig(temperature=0.0, top_p=0.5, top_k=3, n=1))
    kw = llm.calls("generate")[3][2][0].kwargs
    assert (kw["temperature"], kw["top_p"], kw["top_k"]) == (0.0, 1.0, -1)
    assert len(groups) == 3


def test_prompts_render_with_the_chat_template_and_a_prefill_is_continued(fake_vllm, tmp_path):
    code, _ = build(config(), tmp_path, test=False)
    [llm] = FakeLLM.created
    groups = code.generate(PROMPTS, GenerationConfig(n=2, seed=1))
    [(_, inputs, _, _)] = llm.calls("generate")
    tok = code.tokenizer
    for messages, inp, group in zip(PROMPTS, inputs, groups, strict=False):
        if messages[-1]["role"] == "assistant":
            text = tok.apply_chat_template(messages, tokenize=False, continue_final_message=True)
            assert text.endswith(messages[-1]["content"])
        else:
            text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tok(text, add_special_tokens=False).input_ids
        assert inp == {"prompt_token_ids": ids}
        assert all(s.prompt_ids == ids for s in group)
    # max_prompt_tokens keeps the last tokens, as the transformers backend does
    code.generate(PROMPTS[1:2], GenerationConfig(n=1, max_prompt_tokens=5))
    full = tok(
        tok.apply_chat_template(PROMPTS[1], tokenize=False, add_generation_prompt=True), add_special_tokens=False
    ).input_ids
    assert llm.calls("generate")[1][1][0]["prompt_token_ids"] == full[-5:]


def test_n_samples_grouped_per_prompt_in_order_with_the_engines_logprobs(fake_vllm, tmp_path):
    code, _ = build(config(), tmp_path, test=False)
    groups = code.generate(PROMPTS, GenerationConfig(n=3, seed=2))
    assert [len(g) for g in groups] == [3, 3, 3]
    for prompt, g in zip(PROMPTS, groups, strict=False):
        # sorted by completion index; the text starts with the response prefix, as the transformers backend's
        prefix = prompt[-1]["content"] if prompt[-1]["role"] == "assistant" else ""
        assert [s.text for s in g] == [prefix + "text-0", prefix + "text-1", prefix + "text-2"]
        assert [s.finished for s in g] == [True, False, True]
        assert g[0].response_ids[-1] == EOS_EXTRA and g[1].response_ids[-1] != EOS_EXTRA
    flat = [s for g in groups for s in g]
    # the engine's own log-probs come along; the learner's are left to train_step (the rows it trains)
    assert [s.engine_logprobs for s in flat] == [
        [engine_logprob(t, int(s.text[-1])) for t in s.response_ids] for s in flat
    ]
    assert all(s.logprobs == [] for s in flat)
    warm = [s for g in code.generate(PROMPTS, GenerationConfig(n=2, seed=2, temperature=0.7)) for s in g]
    assert all(s.temperature == 0.7 for s in warm)


def test_the_learner_scores_only_the_rows_it_trains_and_measures_the_engines_gap(fake_vllm, tmp_path):
    """Item 5 of the vLLM issue: with an engine whose log-probs are not the learner's, only the rows that
    enter the update are scored, under logits / T, before any update; mismatch_abs and mismatch_kl are
    the masked means over those rows' tokens."""
    import math

    code, _ = build(config(), tmp_path, test=False)
    flat = [s for g in code.generate(PROMPTS, GenerationConfig(n=4, seed=2, temperature=0.7)) for s in g]
    trained = flat[::3]  # what TopVar or the game would pass on
    scored: list[int] = []
    real = code.logprobs

    def spy(prompts, responses, **kw):
        scored.append(len(prompts))
        return real(prompts, responses, **kw)

    expected = real([s.prompt_ids for s in trained], [s.response_ids for s in trained], temperature=0.7)
    code.logprobs = spy
    metrics = code.train_step(trained, [1.0, -1.0] * (len(trained) // 2) + [0.5] * (len(trained) % 2))
    assert scored == [len(trained)]  # once, and not the rows that are not trained
    pairs = [
        (e, lp)
        for s, row in zip(trained, expected, strict=False)
        for e, lp in zip(s.engine_logprobs, row, strict=False)
    ]
    assert metrics["mismatch_abs"] == pytest.approx(sum(abs(e - lp) for e, lp in pairs) / len(pairs), rel=1e-5)
    k3 = [math.exp(lp - e) - (lp - e) - 1 for e, lp in pairs]
    assert metrics["mismatch_kl"] == pytest.approx(sum(k3) / len(k3), rel=1e-5)


def test_greedy_with_n_samples_asks_vllm_for_one_and_repeats_it(fake_vllm, tmp_path):
    """vLLM refuses temperature 0 with n > 1 (`codea1 eval code --engine vllm --temperature 0` crashed)."""
    code, _ = build(config(), tmp_path, test=False)
    groups = code.generate(PROMPTS, GenerationConfig(n=3, seed=2, temperature=0.0))
    [llm] = FakeLLM.created
    assert all(p.n == 1 for p in llm.calls("generate")[-1][2])
    for g in groups:
        assert len(g) == 3 and len({(tuple(s.response_ids), s.text) for s in g}) == 1


def test_temperatures_vllm_would_change_or_refuse_are_refused(fake_vllm, tmp_path):
    from codea1.errors import UserError

    code, _ = build(config(), tmp_path, test=False)
    for t in (0.005, 2.5):
        with pytest.raises(UserError, match="vLLM samples only at 0"):
            code.generate(PROMPTS[:1], GenerationConfig(n=2, seed=2, temperature=t))
    assert code.generate(PROMPTS[:1], GenerationConfig(n=2, seed=2, temperature=2.0))
    with pytest.raises(UserError, match="generation.test.temperature"):  # said when the config is read
        config(generation={"test": {"temperature": 3.0}})


def test_the_response_prefix_is_in_the_text_as_with_the_transformers_backend(fake_vllm, tmp_path):
    code, _ = build(config(), tmp_path, test=False)
    prompt = [PROMPTS[2]]
    [vllm_sample, *_] = code.generate(prompt, GenerationConfig(n=1, seed=2, max_new_tokens=3))[0]
    local = TransformersRollout(code.model, code.tokenizer, lambda *a, **k: [[0.0] * len(r) for r in a[1]])
    [local_sample] = local.generate(prompt, GenerationConfig(n=1, seed=2, max_new_tokens=3))[0]
    prefix = PROMPTS[2][-1]["content"]
    assert vllm_sample.text.startswith(prefix) and local_sample.text.startswith(prefix)


def _bump(policy) -> None:
    """An update as train_step leaves it: weights changed and the step counted."""
    with torch.no_grad():
        for p in policy.params[:2]:
            p.add_(0.5)
    policy.step += 1


def test_full_weights_go_where_there_is_room_and_a_folder_without_room_is_refused(fake_vllm, tmp_path, monkeypatch):
    from codea1.errors import UserError

    """The weights were always written to /dev/shm, which a container holds to 64 MB by default: the first
    sync of any real model failed there. Now the folder is checked for room first: shared memory where it
    has room, else the temporary folder, or rollout.vllm_weights_dir, refused in one sentence without it."""
    import shutil as real_shutil

    from codea1.inference import vllm_backend

    free = {vllm_backend.SHARED_MEMORY: 0}  # a container's /dev/shm, full

    real_usage = real_shutil.disk_usage

    def disk_usage(path):
        usage = real_usage(path)
        return usage._replace(free=free.get(str(path), usage.free))

    written = []
    write = vllm_backend.write_weights
    monkeypatch.setattr(vllm_backend.shutil, "disk_usage", disk_usage)
    monkeypatch.setattr(
        vllm_backend, "write_weights", lambda w, path, dtype=None: (written.append(path), write(w, path, dtype))
    )
    gen = GenerationConfig(n=1, seed=0)
    code, _ = build(config(), tmp_path, test=False)
    _bump(code)
    code.generate(PROMPTS, gen)
    assert written and not str(written[-1]).startswith(vllm_backend.SHARED_MEMORY)
    assert str(written[-1]).startswith(vllm_backend.tempfile.gettempdir())

    mine = tmp_path / "weights"
    mine.mkdir()
    FakeLLM.created = []
    code, _ = build(config(rollout={"vllm_weights_dir": str(mine)}), tmp_path, test=False)
    _bump(code)
    code.generate(PROMPTS, gen)
    assert written[-1].parent.parent == mine
    free[str(mine)] = 1000
    _bump(code)
    with pytest.raises(UserError, match=r"rollout.vllm_weights_dir.*--shm-size"):
        code.generate(PROMPTS, gen)
    assert written[-1].parent.parent == mine and len(list(mine.iterdir())) == 0  # nothing written, nothing left


def test_full_weights_sync_after_each_update_only(fake_vllm, tmp_path):
    code, _ = build(config(), tmp_path, test=False)
    [llm] = FakeLLM.created
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    code.generate(PROMPTS, gen)
    assert llm.calls("load_weights") == []  # the engine starts from the same checkpoint
    _bump(code)
    code.generate(PROMPTS, gen)
    [(_, loaded)] = llm.calls("load_weights")
    state = dict(code.model.state_dict())  # every name, the tied lm_head too
    assert set(loaded) == set(state)
    assert all(torch.equal(loaded[k], state[k]) for k in state)
    names = [c[0] for c in llm.log]
    assert names.index("collective_rpc") < names.index("reset_prefix_cache") < len(names) - 1
    assert names[-1] == "generate"
    code.generate(PROMPTS, gen)
    assert len(llm.calls("load_weights")) == 1
    _bump(code)
    code.rollout.sync_from(code)  # an explicit sync, then nothing more to do before sampling
    code.generate(PROMPTS, gen)
    assert len(llm.calls("load_weights")) == 2


def test_a_bf16_engine_gets_bf16_weights_cast_before_the_copy(fake_vllm, tmp_path):
    """The learner trains in float32; a bfloat16 engine is sent its weights in bfloat16 (cast where they
    are, before the copy to the CPU and the file: half the bytes), each the learner's weight rounded."""
    code, _ = build(config(rollout={"vllm_dtype": "bfloat16"}), tmp_path, test=False)
    [llm] = FakeLLM.created
    _bump(code)
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    [(_, loaded)] = llm.calls("load_weights")
    state = code.model.state_dict()
    assert set(loaded) == set(state)
    for name, weight in state.items():
        assert loaded[name].dtype == torch.bfloat16, name
        assert torch.equal(loaded[name], weight.to(torch.bfloat16)), name


def test_a_sharded_learner_feeds_the_engine_from_its_full_replica(fake_vllm, tmp_path):
    """placement.fsdp: the learner's parameters are shards, so the engine must get rank 0's replica
    (Policy.engine_weights), never the model's own state_dict."""
    import copy

    code, _ = build(config(), tmp_path, test=False)
    [llm] = FakeLLM.created
    code.replica = copy.deepcopy(code.model)
    with torch.no_grad():
        for p in code.replica.parameters():
            p.add_(1.0)  # the replica holds other values than the (here unsharded) model
    code.sharded = True
    code.step += 1
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    [(_, loaded)] = llm.calls("load_weights")
    replica = dict(code.replica.state_dict())  # every name, the tied lm_head too
    assert all(torch.equal(loaded[k], replica[k]) for k in replica)


def test_full_weights_reach_every_tensor_parallel_worker_as_a_path(fake_vllm, tmp_path):
    """The sync shipped a closure (refused by vLLM's workers), then (name, tensor) buckets: vLLM's message
    encoder does not carry tensors in an RPC's arguments (the real engine out of process crashed: "'list'
    object has no attribute 'to'"), and reloading part of the weights at a time leaves the rest unset.
    Now the learner writes one safetensors file and only its folder's path crosses, one call, to every
    rank, which reloads through the model runner's `reload_weights`."""
    code, _ = build(config(rollout={"vllm_tensor_parallel_size": 2}), tmp_path, test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["worker_extension_cls"] == "codea1.inference.vllm_worker.WeightSync"
    _bump(code)
    state = dict(code.model.state_dict())  # every name, the tied lm_head too
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    [(_, loaded)] = llm.calls("load_weights")
    assert set(loaded) == set(state) and all(torch.equal(loaded[k], state[k]) for k in state)
    [(_, _, rank1)] = llm.calls("load_weights_rank")
    assert sorted(rank1) == sorted(state)
    rpcs = llm.calls("collective_rpc")
    assert [(r[1], r[2]) for r in rpcs] == [
        ("codea1_where", 0),  # once per engine: where its workers are (an engine in processes of its own)
        ("codea1_where", 1),
        ("codea1_reload_weights", 0),
        ("codea1_reload_weights", 1),
    ]
    assert llm.calls("apply_model") == []


def test_the_fake_engine_carries_tensors_as_the_real_encoder_does(fake_vllm, tmp_path):
    """Tensors in an RPC's arguments reach the fake's workers as the real engine's encoded lists, so a sync
    that hands tensor pairs to the workers fails here as it failed on vLLM's CPU engine; the legacy RPC that
    took them is gone, and its loader runs only inside a worker, from the folder RPC."""
    from codea1.inference.vllm_worker import WeightSync, load_pairs

    build(config(), tmp_path, test=False)
    [llm] = FakeLLM.created
    assert sorted(name for name in vars(WeightSync) if name.startswith("codea1_")) == [
        "codea1_collect_weights",  # a mailbox key in the worker's own process
        "codea1_open_weights",  # CUDA IPC handles as plain values
        "codea1_reload_weights",  # a folder's path
        "codea1_where",
    ]
    with pytest.raises(AttributeError, match="codea1_load_weights"):
        llm.collective_rpc("codea1_load_weights", args=([("w", torch.ones(2))],))

    class Worker:  # what load_pairs needs of a worker: a device and a model runner
        device = "cpu"

        class model_runner:
            got: ClassVar[list] = []

            @classmethod
            def reload_weights(cls, weights_iterator):
                cls.got = list(weights_iterator)

    with pytest.raises(AttributeError, match="'list' object has no attribute 'to'"):
        load_pairs(Worker(), [("w", torch.ones(2).tolist())])  # as the encoder would have delivered them
    assert load_pairs(Worker(), [("w", torch.ones(2))]) == 1 and torch.equal(
        Worker.model_runner.got[0][1], torch.ones(2)
    )


def test_weights_reach_a_worker_in_this_process_as_they_are_without_a_file(fake_vllm, tmp_path, monkeypatch):
    """rollout.vllm_weight_transfer auto, with the engine's workers in the learner's process (vLLM's
    in-process engine): the learner's tensors themselves reach the worker, through a mailbox key; no
    safetensors file is written (it cost 4-8 s per role per step at 1.5B), and the mailbox is left empty."""
    from codea1.inference import vllm_backend, weight_transfer

    monkeypatch.setattr(FakeLLM, "in_process", True)
    code, _ = build(config(rollout={"vllm_dtype": "bfloat16"}), tmp_path, test=False)
    [llm] = FakeLLM.created

    def no_file(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a file was written")

    monkeypatch.setattr(vllm_backend, "write_weights", no_file)
    _bump(code)
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    [(_, loaded)] = llm.calls("load_weights")
    state = dict(code.model.state_dict())
    assert set(loaded) == set(state)
    assert all(torch.equal(loaded[k], state[k].to(torch.bfloat16)) for k in state)  # cast to the engine's dtype
    assert [r[1] for r in llm.calls("collective_rpc")] == ["codea1_where", "codea1_collect_weights"]
    assert code.rollout.engine.transfers == {"direct": 1} and weight_transfer._MAILBOX == {}
    _bump(code)
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))  # resolved once: no second question
    assert [r[1] for r in llm.calls("collective_rpc")][2:] == ["codea1_collect_weights"]


def test_a_transfer_that_cannot_reach_the_engine_is_refused_in_one_sentence(fake_vllm, tmp_path):
    from codea1.errors import UserError

    code, _ = build(config(rollout={"vllm_weight_transfer": "direct"}), tmp_path, test=False)
    _bump(code)
    with pytest.raises(UserError, match="direct needs the engine's workers in the learner's process"):
        code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    code, _ = build(config(rollout={"vllm_weight_transfer": "ipc"}), tmp_path / "b", test=False)
    _bump(code)
    with pytest.raises(UserError, match="ipc needs the learner's weights on a GPU"):
        code.generate(PROMPTS, GenerationConfig(n=1, seed=0))


def test_the_file_transfer_when_asked_for_even_in_process(fake_vllm, tmp_path, monkeypatch):
    monkeypatch.setattr(FakeLLM, "in_process", True)
    code, _ = build(config(rollout={"vllm_weight_transfer": "file"}), tmp_path, test=False)
    [llm] = FakeLLM.created
    _bump(code)
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    assert [r[1] for r in llm.calls("collective_rpc")] == ["codea1_reload_weights"]
    assert code.rollout.engine.transfers == {"file": 1}


def test_choose_transfer_from_where_the_workers_are():
    import os

    from codea1.errors import UserError
    from codea1.inference.weight_transfer import choose_transfer, machine_id

    here, pid = machine_id(), os.getpid()
    same = [[here, pid, []]]
    beside = [[here, pid + 1, ["GPU-a", "GPU-b"]], [here, pid + 2, ["GPU-b", "GPU-a"]]]
    blind = [[here, pid + 1, ["GPU-a"]], [here, pid + 2, ["GPU-c"]]]  # a worker that does not see GPU-b
    elsewhere = [["another-host/boot", pid, ["GPU-b"]]]
    assert choose_transfer("auto", same, None) == "direct"
    assert choose_transfer("auto", same, "GPU-a") == "direct"
    assert choose_transfer("auto", beside, "GPU-b") == "ipc"
    assert choose_transfer("auto", beside, None) == "file"  # CPU tensors out of process
    assert choose_transfer("auto", blind, "GPU-b") == "file"
    assert choose_transfer("auto", elsewhere, "GPU-b") == "file"  # same pid, same GPU name: another machine
    assert choose_transfer("auto", [], "GPU-b") == "file"
    assert choose_transfer("file", same, "GPU-a") == "file"
    assert choose_transfer("ipc", beside, "GPU-a") == "ipc"
    with pytest.raises(UserError, match="choose one of"):
        choose_transfer("nccl", same, None)


def test_ipc_handles_are_plain_values_and_refuse_cpu_tensors():
    """What crosses vLLM's message encoder for the ipc transfer: names, integers, bytes (CUDA only; the GPU
    check, benchmarks/gpu_check.py, opens them in another process and compares every tensor)."""
    from codea1.inference.weight_transfer import cast_pairs, share_cuda

    pairs = cast_pairs([("w", torch.ones(2, 3).t()), ("n", torch.arange(3))], "bfloat16")
    assert pairs[0][1].dtype == torch.bfloat16 and pairs[0][1].is_contiguous() and pairs[1][1].dtype == torch.int64
    with pytest.raises(ValueError, match="only CUDA tensors cross as IPC handles"):
        share_cuda(pairs)


def test_a_policy_actor_syncs_its_own_engine_right_after_the_update(fake_vllm, tmp_path):
    """The two roles' syncs ran one after the other, each lazily before its role sampled. A policy actor
    (codea1.cluster.policies) now syncs its engine right after its update, where the engine is its policy's
    alone, so the two roles' actors, updating at the same time, sync at the same time; sampling then finds
    the engine up to date."""
    from codea1.cluster.policies import _PolicyHost

    code, _ = build(config(), tmp_path, test=False)
    [llm] = FakeLLM.created
    gen = GenerationConfig(n=2, seed=0)
    samples = [s for g in code.generate(PROMPTS, gen) for s in g]
    host = _PolicyHost({}, ("code",))
    host.policies = {"code": code, "test": None}
    metrics = host.train_step("code", samples, [1.0, -1.0] * (len(samples) // 2))
    assert code.step == 1 and "engine_sync_s" in metrics
    assert len(llm.calls("load_weights")) == 1 and code.rollout.engine.holder == (id(code), 1)
    code.generate(PROMPTS, gen)
    assert len(llm.calls("load_weights")) == 1  # nothing left to sync before sampling
    assert code.rollout.presync() is False


def test_an_engine_two_policies_share_is_synced_lazily_only(fake_vllm, tmp_path):
    code, test = build(config(), tmp_path)
    [llm] = FakeLLM.created
    assert code.rollout.engine is test.rollout.engine and code.rollout.engine.users == 2
    _bump(code)
    assert code.rollout.presync() is False and llm.calls("load_weights") == []
    code.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    assert len(llm.calls("load_weights")) == 1


def test_two_full_policies_share_one_engine_and_swap_weights(fake_vllm, tmp_path):
    code, test = build(config(), tmp_path)
    [llm] = FakeLLM.created
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    assert llm.calls("load_weights") == []
    test.generate(PROMPTS, gen)  # the engine held the code policy's weights
    code.generate(PROMPTS, gen)
    loads = llm.calls("load_weights")
    assert len(loads) == 2
    _bump(test)
    test.generate(PROMPTS, gen)
    last = llm.calls("load_weights")[-1][1]
    assert all(torch.equal(last[k], v) for k, v in test.model.state_dict().items())


def test_lora_updates_use_a_new_adapter_id_each_time(fake_vllm, tmp_path):
    code, test = build(config(model={"mode": "dual-lora"}, policy={"lora_r": 4}), tmp_path)
    [llm] = FakeLLM.created  # one engine for the shared base
    assert llm.kwargs["enable_lora"] is True and llm.kwargs["max_lora_rank"] == 8  # vLLM's smallest slot >= 4
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    assert llm.calls("generate")[-1][3] is None  # the fresh adapter is a no-op: the base samples
    ids = []
    for _ in range(3):
        _bump(code)
        code.generate(PROMPTS, gen)
        req = llm.calls("generate")[-1][3]
        ids.append(req.lora_int_id)
        path = Path(req.lora_path)
        assert (path / "adapter_model.safetensors").is_file() and (path / "adapter_config.json").is_file()
        assert req.lora_name.startswith("code-")
    assert len(set(ids)) == 3
    assert llm.removed == ids[:2]  # each superseded adapter is dropped
    assert not Path(llm.calls("generate")[-2][3].lora_path).exists()
    _bump(test)
    test.generate(PROMPTS, gen)
    req = llm.calls("generate")[-1][3]
    assert req.lora_name.startswith("test-") and req.lora_int_id not in ids
    assert llm.calls("load_weights") == []  # LoRA never sends full weights


def test_a_lora_engine_starts_from_the_base_weights_under_their_own_names(fake_vllm, tmp_path):
    """The engine loads the saved base model by the base architecture's names: peft's in-place wrapping
    (q_proj.base_layer.weight, lora_A...) must not reach it (vLLM's real engine stops on it: "QKVParallelLinear
    has no attribute `base_layer`")."""
    from safetensors.torch import load_file

    code, _ = build(config(model={"mode": "lora"}, policy={"lora_r": 4}), tmp_path, test=False)
    [llm] = FakeLLM.created
    saved = load_file(Path(llm.kwargs["model"]) / "model.safetensors")
    base = {k.replace(".base_layer.", "."): v for k, v in code.model.get_base_model().state_dict().items()}
    assert saved and not [k for k in saved if "base_layer" in k or "lora_" in k]
    assert all(torch.equal(v, base[k]) for k, v in saved.items())


def test_sleep_and_wake_around_each_rollout(fake_vllm, tmp_path):
    code, _ = build(config(rollout={"vllm_sleep_level": 1}), tmp_path, test=False)
    [llm] = FakeLLM.created
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    code.generate(PROMPTS, gen)
    assert [c[0] for c in llm.log] == ["generate", "sleep", "wake_up", "generate", "sleep"]
    assert llm.calls("sleep")[0] == ("sleep", 1)


def test_the_allocator_cache_is_emptied_after_sleep_and_before_wake(fake_vllm, monkeypatch, tmp_path):
    """On a GPU, torch keeps freed blocks cached: the engine's sleep would free memory the learner's
    allocator cannot see, and the learner's cached blocks would stand in the waking engine's way."""
    code, _ = build(config(rollout={"vllm_sleep_level": 1}), tmp_path, test=False)
    [llm] = FakeLLM.created
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: llm.log.append(("empty_cache",)))
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    code.generate(PROMPTS, gen)
    assert [c[0] for c in llm.log] == [
        "generate",
        "sleep",
        "empty_cache",
        "empty_cache",
        "wake_up",
        "generate",
        "sleep",
        "empty_cache",
    ]


def test_two_sleeping_engines_in_one_process_are_refused(fake_vllm, tmp_path):
    """vLLM keeps one sleep-mode memory pool per process (an assertion in its allocator): policies from
    two models, placed in one process, would need two sleeping engines there."""
    from codea1.errors import UserError

    other = tmp_path / "other"
    from codea1.models import load_model_and_tokenizer

    model, tok = load_model_and_tokenizer("tiny-random")
    model.save_pretrained(other)
    tok.save_pretrained(other)
    two = {"model": {"test_model": str(other)}}
    with pytest.raises(UserError, match="cannot both use sleep mode.*placement.backend=ray"):
        build(config(**two, rollout={"vllm_sleep_level": 1}), tmp_path / "a", test=True)
    code, test = build(config(**two), tmp_path / "b", test=True)  # no sleep: two engines, each its share
    assert code.rollout.engine is not test.rollout.engine
    build(config(rollout={"vllm_sleep_level": 1}), tmp_path / "c", test=True)  # one model: one engine


def test_level_two_sleep_resends_full_weights_at_every_wake(fake_vllm, tmp_path):
    code, _ = build(config(rollout={"vllm_sleep_level": 2}), tmp_path, test=False)
    [llm] = FakeLLM.created
    gen = GenerationConfig(n=1, seed=0)
    code.generate(PROMPTS, gen)
    code.generate(PROMPTS, gen)
    names = [c[0] if c[0] != "wake_up" else f"wake_up:{c[1]}" for c in llm.log]
    assert names[:2] == ["generate", "sleep"]
    assert names[2:] == [
        "wake_up:['weights']",
        "collective_rpc",  # where the workers are (the first sync only)
        "collective_rpc",
        "load_weights",
        "reset_prefix_cache",
        "wake_up:['kv_cache']",
        "generate",
        "sleep",
    ]


def test_level_two_sleep_is_refused_for_lora():
    from codea1.errors import UserError

    with pytest.raises(UserError, match="vllm_sleep_level"):
        config(model={"mode": "lora"}, rollout={"vllm_sleep_level": 2})


def test_default_backend_is_the_loop_and_build_policies_attaches_vllm(fake_vllm):
    from codea1.rl.build import build_policies

    plain = config_from_dict({"model": {"code_model": "tiny-random"}, "policy": {"kl_coef": 0.0}})
    assert plain.rollout.backend == "loop"
    code, _ = build_policies(plain, test=False)
    assert isinstance(code.rollout, TransformersRollout)
    code, test = build_policies(config(model={"code_model": "tiny-random-h32"}), test=True)
    from codea1.inference.vllm_backend import VLLMRollout

    assert isinstance(code.rollout, VLLMRollout) and isinstance(test.rollout, VLLMRollout)
    assert code.rollout.engine is test.rollout.engine


def test_eval_sends_all_prompts_to_vllm_in_one_call(fake_vllm, tmp_path):
    """`codea1 eval --engine vllm` sent one prompt per generate call (rows_per_call // n was 1 with the
    defaults): vLLM schedules a batch itself, so every prompt of a sample() call goes in one."""
    from codea1.config import RolloutSection, Sampling
    from codea1.eval.generation import Generator

    gen = Generator(
        "tiny-random",
        Sampling(temperature=0.7, max_new_tokens=4, rows_per_call=16),
        rollout=RolloutSection(backend="vllm"),
        llm_class=lambda **kwargs: FakeLLM(kwargs),
        workdir=str(tmp_path),
    )
    texts = gen.sample([PROMPTS[0], PROMPTS[1], PROMPTS[2], PROMPTS[0]], n=12)
    assert [len(t) for t in texts] == [12, 12, 12, 12]
    [llm] = FakeLLM.created
    assert [len(call[1]) for call in llm.calls("generate")] == [4]


def test_sleep_mode_where_the_platform_has_none_is_off_with_a_note(fake_vllm, monkeypatch, tmp_path):
    """vLLM's CPU build has no sleep mode: the default rollout.vllm_sleep_level=1 ended in a pydantic
    ValidationError traceback from its engine. Where vLLM's platform says it has none, the engine is built
    without it and one warning says so (checked on vLLM 0.32's CPU build)."""
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_sleep_mode_available=lambda: False)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    with pytest.warns(RuntimeWarning, match="sleep mode is not available on this platform"):
        build(config(rollout={"vllm_sleep_level": 1}), tmp_path, test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["enable_sleep_mode"] is False


def test_the_default_sleep_level_follows_the_platform_without_a_warning(fake_vllm, monkeypatch, tmp_path):
    """The default was level 1 everywhere, so every CPU user got the warning above at every start; unset, it
    is now 1 where the platform has sleep mode and 0 where it has none, without a word."""
    import warnings

    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(is_sleep_mode_available=lambda: False)
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    assert config_from_dict({}).rollout.vllm_sleep_level is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        build(config(rollout={"vllm_sleep_level": None}), tmp_path / "cpu", test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["enable_sleep_mode"] is False
    platforms.current_platform = types.SimpleNamespace(is_sleep_mode_available=lambda: True)
    FakeLLM.created = []
    code, _ = build(config(rollout={"vllm_sleep_level": None}), tmp_path / "gpu", test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["enable_sleep_mode"] is True
    # full weights are re-sent after every update: level 2 drops them (level 1 kept a pinned host copy to
    # overwrite); a LoRA engine keeps its base, level 1
    assert code.rollout.engine.sleep_level == 2
    from codea1.inference.vllm_backend import sleep_level_of

    unset = config(rollout={"vllm_sleep_level": None}).rollout
    assert (sleep_level_of(unset), sleep_level_of(unset, lora=True)) == (2, 1)


def test_a_cpu_engine_is_refused_in_one_sentence_before_any_model_loads(fake_vllm, monkeypatch):
    """Without CUDA, vLLM's CPU build takes no attention head under 32: the tiny preset's model (heads of 16)
    died at the first generate with vLLM's own traceback. Now build_policies refuses it before loading,
    naming the builtin that works; a missing vLLM names this machine's set-up."""
    import codea1.rl.build as build_module
    from codea1.errors import UserError
    from codea1.models import attention_head_dim

    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    monkeypatch.setattr(build_module, "load_policies", lambda *a, **k: pytest.fail("a model was loaded"))
    with pytest.raises(UserError, match=r"'tiny-random', whose attention heads are 16 wide.*'tiny-random-h32'"):
        build_module.build_policies(config())
    assert (attention_head_dim("tiny-random"), attention_head_dim("tiny-random-h32")) == (16, 32)
    assert attention_head_dim("smollm2-135m") == 64
    monkeypatch.delitem(sys.modules, "vllm")
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    with pytest.raises(UserError, match=r"needs vLLM, which is not installed.*scripts/install-vllm.sh"):
        build_module.build_policies(config(model={"code_model": "tiny-random-h32"}))


def test_cpu_defaults_fit_the_learner(fake_vllm, monkeypatch, tmp_path):
    """By default the engine takes the learner's dtype (float32 on the CPU presets, where a bf16 engine gave
    a log-prob gap of 2e-2 instead of 5e-6) and, without CUDA, runs eager (no minutes of graph compiling)."""
    from codea1.inference.vllm_backend import engine_dtype, engine_eager

    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    cfg = config_from_dict(
        {"model": {"code_model": "tiny-random-h32"}, "rollout": {"backend": "vllm", "vllm_sleep_level": 0}}
    )
    assert (cfg.rollout.vllm_dtype, cfg.rollout.vllm_enforce_eager) == ("policy", None)
    assert (engine_dtype(cfg), engine_eager(cfg.rollout)) == ("float32", True)
    build(cfg, tmp_path, test=False)
    [llm] = FakeLLM.created
    assert llm.kwargs["dtype"] == "float32" and llm.kwargs["enforce_eager"] is True
    assert llm.kwargs["enable_chunked_prefill"] is False  # the CPU build cannot rewind a seeded request after one
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    gpu = config_from_dict({"policy": {"dtype": "bfloat16"}, "rollout": {"backend": "vllm"}})
    assert (engine_dtype(gpu), engine_eager(gpu.rollout)) == ("bfloat16", False)
    pinned = config_from_dict({"rollout": {"backend": "vllm", "vllm_dtype": "bfloat16", "vllm_enforce_eager": False}})
    assert (engine_dtype(pinned), engine_eager(pinned.rollout)) == ("bfloat16", False)


def test_a_worker_reloads_weights_inside_its_own_vllm_config_context():
    """vLLM's Worker.reload_weights runs the model runner's inside `set_current_vllm_config` (the weight
    loaders read the current config); the extension called the runner's directly, outside it. It now calls
    the worker's own, and the runner's only where the worker has none."""
    from codea1.inference.vllm_worker import WeightSync, load_pairs

    entered = []

    class Runner:
        def reload_weights(self, weights_iterator=None, weights_path=None):
            entered.append(("runner", inside[-1] if inside else None, weights_path))

    inside: list[str] = []

    class Worker(WeightSync):  # vLLM mixes the extension into its Worker class
        device = "cpu"
        model_runner = Runner()

        def reload_weights(self, *args, **kwargs):
            inside.append("vllm config")
            try:
                self.model_runner.reload_weights(*args, **kwargs)
            finally:
                inside.pop()

    Worker().codea1_reload_weights("/weights")
    load_pairs(Worker(), [("w", torch.ones(2))])
    assert entered == [("runner", "vllm config", "/weights"), ("runner", "vllm config", None)]

    class BareWorker(WeightSync):  # a worker without the method: the runner's, as before
        device = "cpu"
        model_runner = Runner()

    BareWorker().codea1_reload_weights("/weights")
    assert entered[-1] == ("runner", None, "/weights")


def test_one_step_off_samples_each_role_from_its_snapshot_on_the_shared_engine(fake_vllm, tmp_path):
    """train.one_step_off with the vLLM engine: each role's copy is a snapshot taken between updates; the
    engine (one for both roles) loads a role's snapshot before sampling for it, never the learner's weights
    of the moment, which move on while the snapshot samples."""
    from codea1.train.one_step_off import EngineCopy, sampling_copies

    code, test = build(config(), tmp_path)
    [llm] = FakeLLM.created
    copies = sampling_copies([code, test], None)
    assert all(isinstance(c, EngineCopy) for c in copies.values())
    code_copy, test_copy = copies[id(code)], copies[id(test)]
    for c in (code_copy, test_copy):
        c.refresh()
    taken = {k: v.clone() for k, v in code.model.state_dict().items()}
    _bump(code)  # the learner's update t, while the copies sample step t+1
    _bump(test)
    gen = GenerationConfig(n=1, seed=0)
    code_copy.generate(PROMPTS, gen)
    loaded = llm.calls("load_weights")[-1][1]
    assert all(torch.equal(loaded[k], v) for k, v in taken.items())
    assert not all(torch.equal(loaded[k], v) for k, v in code.model.state_dict().items())
    n = len(llm.calls("load_weights"))
    test_copy.generate(PROMPTS, gen)  # the other role's snapshot goes in, then stays
    test_copy.generate(PROMPTS, gen)
    assert len(llm.calls("load_weights")) == n + 1
    code.generate(PROMPTS, gen)  # the policy's own engine use afterwards syncs its current weights again
    last = llm.calls("load_weights")[-1][1]
    assert all(torch.equal(last[k], v) for k, v in code.model.state_dict().items())


def test_a_sharded_learner_feeds_its_engine_from_its_shards_and_keeps_no_replica(fake_vllm, tmp_path):
    """placement.fsdp with vLLM: each rank kept a full fp32 replica of the weights on its GPU (it was built
    for the loop engine before vLLM was attached) only to copy it into the engine. Now the engine takes each
    parameter gathered from the shards in its own dtype, at the points where every rank is at once (after
    an update, after a load); it stays awake between them and sleeps as the update starts. The checkpoint
    is written from the gathered weights and reads back as the shards held them."""
    from torch.distributed.tensor import DTensor

    from codea1.inference.vllm_backend import attach_vllm
    from codea1.rl.build import load_policies
    from codea1.rl.distributed import join

    created = not torch.distributed.is_initialized()
    dp = join(f"file://{tmp_path}/rendezvous", 0, 1, backend="gloo")
    try:
        cfg = config(rollout={"vllm_dtype": "bfloat16", "vllm_sleep_level": 2})
        code, _ = load_policies(cfg, test=False)
        code.shard(dp)
        assert code.replica is not None  # built for the loop engine, which would sample from it
        attach_vllm(cfg, [code, None], workdir=str(tmp_path / "vllm"))
        [llm] = FakeLLM.created
        assert code.replica is None and code.gathers_for_engine
        assert all(isinstance(p, DTensor) for p in code.model.parameters())  # the shards are all it holds
        out = code.generate(PROMPTS, GenerationConfig(n=2, seed=0))
        assert llm.calls("load_weights") == [] and llm.calls("sleep") == []  # its own initial weights, awake
        samples = [s for group in out for s in group]
        code.train_step(samples, [1.0, -1.0] * (len(samples) // 2))
        assert llm.calls("sleep") == [("sleep", 2)]  # as the update started
        assert code.rollout.presync()
        [(_, loaded)] = llm.calls("load_weights")
        full = {k: v.full_tensor().detach() for k, v in code.model.state_dict().items()}
        assert set(loaded) == set(full)
        assert all(loaded[k].dtype == torch.bfloat16 and torch.equal(loaded[k], full[k].bfloat16()) for k in full)
        code.generate(PROMPTS, GenerationConfig(n=1, seed=1))  # no sync, no sleep until the next update
        assert len(llm.calls("load_weights")) == 1 and len(llm.calls("sleep")) == 1
        code.save(tmp_path / "ckpt")
        assert "FSDP" not in (tmp_path / "ckpt" / "config.json").read_text()
        plain, _ = load_policies(cfg, test=False)
        plain.load(tmp_path / "ckpt")
        mine = plain.model.state_dict()
        assert all(torch.equal(mine[k], full[k]) for k in full)
        code.load(tmp_path / "ckpt")  # a resume: every rank loads, and the engine takes the weights at once
        assert len(llm.calls("load_weights")) == 2
    finally:
        if created:
            torch.distributed.destroy_process_group()


def test_one_step_off_snapshots_live_in_host_memory_in_the_engines_dtype(fake_vllm, tmp_path):
    """The snapshot an engine copy samples from was a clone of the learner's fp32 weights on the learner's
    device (on one GPU: a second and, for two roles, a third full fp32 copy beside the learner). Now it is
    a host copy in the engine's dtype, and the engine takes it from there."""
    from codea1.train.one_step_off import sampling_copies

    code, _ = build(config(rollout={"vllm_dtype": "bfloat16"}), tmp_path, test=False)
    [llm] = FakeLLM.created
    [copy_] = sampling_copies([code, None], None).values()
    copy_.refresh()
    assert all(t.device.type == "cpu" and t.dtype == torch.bfloat16 for t in copy_.snapshot.values())
    expected = {k: v.to(torch.bfloat16) for k, v in code.model.state_dict().items()}
    _bump(code)
    copy_.generate(PROMPTS, GenerationConfig(n=1, seed=0))
    loaded = llm.calls("load_weights")[-1][1]
    assert all(torch.equal(loaded[k], v) for k, v in expected.items())


def test_the_cuda_cache_is_emptied_from_the_main_thread_only(monkeypatch):
    """One-step-off's sampling thread woke the engine, and emptied torch's CUDA cache in the middle of the
    learner's update in the main thread."""
    import threading

    from codea1.inference import vllm_backend

    emptied = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(threading.current_thread().name))
    vllm_backend._empty_cuda_cache()
    worker = threading.Thread(target=vllm_backend._empty_cuda_cache, name="codea1-rollout-2")
    worker.start()
    worker.join()
    assert emptied == [threading.main_thread().name]
