"""Policies from a training config: the models of `model.mode` loaded, wrapped as Policy objects, and
attached to the rollout engine `rollout.backend` names (codea1.engines). Kept apart from codea1.rl.policy so that the Policy
class and the dual-LoRA pair (codea1.rl.dual, built on Policy) do not import each other."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from codea1.inference.engines import load_engine
from codea1.models import load_model_and_tokenizer, load_model_skeleton
from codea1.rl.dual import DualPolicy
from codea1.rl.policy import Policy

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

    from codea1.config import Config


def build_policies(cfg: Config, *, test: bool = True, code: bool = True) -> tuple[Policy | None, Policy | None]:
    """``(code_policy, test_policy)`` of a training config, each sampling with the engine ``rollout.backend``
    names (codea1.engines: loop, hf-generate, vllm): the engine's check runs before any model loads (a missing
    vLLM, a model its CPU build refuses: one sentence), then it is attached to the loaded policies; see
    load_policies."""
    engine = load_engine(cfg.rollout.backend)
    engine.check(cfg)
    code_policy, test_policy = load_policies(cfg, test=test, code=code)
    engine.attach(cfg, [code_policy, test_policy])
    return code_policy, test_policy


def learner_device(cfg: Config) -> str:
    """Where a learner's weights live: model.device, with a bare "cuda" made this process's current GPU."""
    device = cfg.model.device
    if device == "cuda" and torch.cuda.is_available():
        return f"cuda:{torch.cuda.current_device()}"
    return device


def load_policies(
    cfg: Config,
    *,
    test: bool = True,
    code: bool = True,
    device: str | None = None,
    skeleton: bool = False,
) -> tuple[Policy | None, Policy | None]:
    """``(code_policy, test_policy)`` of a training config (codea1.config.Config), honouring
    ``model.mode``; with ``test=False`` only the code policy is built (golden, selfplay), with
    ``code=False`` only the test policy (a process that hosts the Test LLM alone: codea1.cluster.policies):

    - ``full``: fully trained models; when both start from the same model they share one frozen
      reference copy (the KL target is the same initial model);
    - ``lora``: one LoRA adapter on each model's own base; the reference is that base (adapter off);
    - ``dual-lora``: two adapters ("code", "test") on one shared frozen base (:class:`DualPolicy`).

    ``device`` overrides model.device (a sharded learner's rank 0 loads on the CPU); ``skeleton``: the models
    on the meta device, no weights read (its other ranks: codea1.models.load_model_skeleton; full mode).
    """
    pcfg, mode, device = cfg.policy, cfg.model.mode, device or cfg.model.device
    if skeleton and mode != "full":
        raise ValueError("only full models are built on the meta device (a sharded learner's ranks)")
    torch.manual_seed(cfg.seed)
    # full fine-tuning keeps fp32 weights (bf16 is a compute dtype); a frozen LoRA base may be bf16
    load_dtype = pcfg.dtype if pcfg.lora else "float32"
    if mode == "dual-lora" and test and not code:
        raise ValueError("model.mode 'dual-lora' keeps both policies on one base: build them together")
    code_policy = None
    if code:
        model, tok = _load(cfg.model.code_model, load_dtype, device, skeleton)
        if mode == "dual-lora" and test:
            dual = DualPolicy(model, tok, pcfg)
            return dual.code, dual.test
        code_policy = Policy(model, tok, pcfg, adapter_name="code" if pcfg.lora else None)
    if not test:
        return code_policy, None
    test_model, test_tok = _load(cfg.test_model_name, load_dtype, device, skeleton)
    same_start = code_policy is not None and cfg.test_model_name == cfg.model.code_model
    test_policy = Policy(
        test_model,
        test_tok,
        pcfg,
        adapter_name="test" if pcfg.lora else None,
        reference=code_policy.reference if same_start else None,
    )
    return code_policy, test_policy


def _load(name: str, dtype: str, device: str, skeleton: bool) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    if skeleton:
        return load_model_skeleton(name, dtype=dtype)
    return load_model_and_tokenizer(name, dtype=dtype, device=device)
