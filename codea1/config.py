"""One typed configuration for training runs: YAML files plus dotted `key=value` overrides.

Every knob of the Code-A1 loop lives in one of the section dataclasses below, with a help string, and
for numbers a range, in its field metadata. `load_config(path, overrides)` reads a YAML file, applies
overrides such as `game.M=4` or `optim.lr=1e-5`, coerces types and validates everything; any mistake
is a UserError naming the key, the bad value and what is allowed. `codea1 train --list-keys` prints
the whole tree with its help text.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from codea1.errors import UserError


def knob(default: Any, help: str, *, choices: tuple | None = None, low: float | None = None,
         high: float | None = None, low_open: bool = False, factory: Any = None) -> Any:
    """A config field: default, help string, optional choices and numeric range (low/high inclusive)."""
    meta = {"help": help, "choices": choices, "low": low, "high": high, "low_open": low_open}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainSection:
    """How long to train, on what batch, and how the run is checkpointed and logged."""

    max_steps: int = knob(30, "stop after this many training steps (overridden by --max-steps)", low=1)
    batch_size: int = knob(8, "B: questions per training step", low=1)
    data_epochs: int = knob(3, "passes over the training problems (each pass in a fresh seeded order)",
                            low=1)
    checkpoint_every: int = knob(5, "write a checkpoint every K steps (and always at the last step)",
                                 low=1)
    keep_checkpoints: int = knob(2, "keep the newest N complete checkpoints, delete older ones", low=1)
    torch_threads: int = knob(1, "torch intra-op threads (1 is fastest while the sandbox is busy)", low=1)
    golden_pass_rate: bool = knob(True, "a1/selfplay: also run each code on the dataset's golden tests "
                                        "(metric golden_pass_rate only, not a reward)")
    log_rollouts: bool = knob(True, "write rollouts/step_K.jsonl (score input format plus scores)")
    tensorboard: bool = knob(False, "also log metrics to TensorBoard (needs the 'tensorboard' extra)")
    wandb: bool = knob(False, "also log metrics to Weights & Biases (needs the 'wandb' extra)")
    wandb_project: str = knob("codea1", "wandb project name")
    progress: bool = knob(True, "show a rich progress display with phases and ETA")


@dataclass
class ModelSection:
    """Which models play, and how they are trained (full fine-tuning, LoRA, or two LoRAs on one base)."""

    code_policy: str = knob("tiny-random", "Code LLM: 'tiny-random', 'smollm2-135m', a local dir or hub id")
    test_policy: str | None = knob(None, "Test LLM (default: same as code_policy); ignored for selfplay "
                                         "and golden")
    mode: str = knob("full", "full: two full models; lora: one LoRA adapter per model; dual-lora: two "
                             "adapters on one shared frozen base", choices=("full", "lora", "dual-lora"))
    dtype: str = knob("float32", "parameter dtype", choices=("float32", "bfloat16", "float16"))
    device: str = knob("cpu", "torch device ('cpu', 'cuda', 'cuda:1', ...)")
    lora_r: int = knob(16, "LoRA rank", low=1)
    lora_alpha: int = knob(32, "LoRA scaling alpha", low=1)
    lora_dropout: float = knob(0.0, "LoRA dropout", low=0.0, high=1.0)
    lora_targets: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"],
        metadata={"help": "module names LoRA attaches to"})
    gradient_checkpointing: bool = knob(False, "recompute activations in the backward pass (less memory)")


@dataclass
class GameSection:
    """The Code-A1 game (REFERENCE.md sections 2-5)."""

    M: int = knob(8, "codes sampled per question", low=1)
    N: int = knob(8, "test suites sampled per code", low=1)
    tests_per_suite: int = knob(8, "tests the Test LLM is asked for per suite", low=1)
    H: int = knob(8, "Mistake Book tests retrieved per question", low=0)
    ell: int = knob(1, "TopVar: candidates per question whose suites train the Test LLM", low=1)
    alpha: float = knob(0.5, "weight of valid_ratio vs adv in the test reward", low=0.0, high=1.0)
    fail_denominator: str = knob("fixed", "gen_fail denominator: 'fixed' (tests_per_suite, reference "
                                          "code) or 'actual' (kept tests, paper figure)",
                                 choices=("fixed", "actual"))
    selfplay_reward: str = knob("a1", "test reward in selfplay: 'a1' (Code-A1 form) or 'cure'",
                                choices=("a1", "cure"))
    nonprintable_penalty: bool = knob(True, "subtract the share of non-printable characters from R_T")


@dataclass
class GenerationSection:
    """Sampling settings of both policies."""

    code_temperature: float = knob(1.0, "Code LLM sampling temperature", low=0.0, low_open=True)
    code_top_p: float = knob(1.0, "Code LLM nucleus top_p", low=0.0, high=1.0, low_open=True)
    test_temperature: float = knob(1.0, "Test LLM sampling temperature", low=0.0, low_open=True)
    test_top_p: float = knob(1.0, "Test LLM nucleus top_p", low=0.0, high=1.0, low_open=True)
    max_prompt_code: int = knob(4096, "max prompt tokens for the Code LLM (longer prompts are cut)", low=1)
    max_prompt_test: int = knob(8192, "max prompt tokens for the Test LLM", low=1)
    max_response_code: int = knob(4096, "max new tokens per code response", low=1)
    max_response_test: int = knob(4096, "max new tokens per test-suite response", low=1)


@dataclass
class OptimSection:
    """GRPO and optimiser settings, the same for both policies (REFERENCE.md section 6)."""

    lr: float = knob(1e-6, "AdamW learning rate", low=0.0, low_open=True)
    weight_decay: float = knob(0.1, "AdamW weight decay", low=0.0)
    warmup_steps: int = knob(10, "linear warm-up steps", low=0)
    schedule: str = knob("cosine", "learning-rate schedule after warm-up",
                         choices=("cosine", "constant", "linear"))
    grad_clip: float = knob(1.0, "max gradient norm", low=0.0, low_open=True)
    clip_low: float = knob(0.2, "PPO ratio clip below 1", low=0.0, high=1.0)
    clip_high: float = knob(0.28, "PPO ratio clip above 1", low=0.0)
    dual_clip: float = knob(10.0, "dual-clip constant c for negative advantages (> 1)", low=1.0,
                            low_open=True)
    kl_coef: float = knob(0.001, "KL loss coefficient to the frozen initial model (0 disables)", low=0.0)
    kl_type: str = knob("low_var_kl", "KL estimator", choices=("low_var_kl", "k1", "k2"))
    loss_agg: str = knob("token-mean", "loss aggregation",
                         choices=("token-mean", "seq-mean-token-mean", "seq-mean-token-sum",
                                  "seq-mean-token-sum-norm"))
    adv_std_norm: bool = knob(True, "divide group advantages by the group std")
    mini_batches: int = knob(2, "optimiser steps per training step (the batch is split in this many)",
                             low=1)
    ppo_epochs: int = knob(1, "passes over each step's rollouts", low=1)
    micro_batch_tokens: int = knob(16384, "token budget of one forward/backward micro-batch", low=1)


@dataclass
class DataSection:
    """Training problems."""

    train: str = knob("bundled:train", "problem spec: bundled[:train|:eval], humaneval, kodcode[:PATH], "
                                       "a .jsonl of Problem rows or a reference-schema .parquet")
    difficulty: str | None = knob(None, "keep only problems with this difficulty label (e.g. 'hard')")
    limit: int | None = knob(None, "use at most this many problems", low=1)
    check_gt: bool = knob(True, "run each GT against its golden tests first and drop broken rows")


@dataclass
class ExecutorSection:
    """The sandbox that runs generated code and tests."""

    workers: int | None = knob(None, "parallel sandbox workers (default: number of CPU cores)", low=1)
    timeout: float = knob(2.0, "seconds per test call", low=0.0, low_open=True)
    define_timeout: float = knob(5.0, "seconds to define (import) a candidate program", low=0.0,
                                 low_open=True)
    memory_mb: int = knob(1024, "address-space limit per sandboxed child, MiB", low=64)
    uid_base: int | None = knob(None, "where the sandbox starts looking for free uids to lease (one per "
                                      "slot, machine-wide); null: the sandbox's default", low=1000)


@dataclass
class EvalSection:
    """The short before/after evaluation of the demo (and `evaluate_code_policy`)."""

    problems: str = knob("bundled:eval", "held-out problem spec")
    limit: int = knob(8, "problems evaluated", low=1)
    n_samples: int = knob(2, "samples per problem", low=1)
    temperature: float = knob(0.7, "sampling temperature", low=0.0, low_open=True)
    top_p: float = knob(0.95, "nucleus top_p", low=0.0, high=1.0, low_open=True)
    max_new_tokens: int = knob(256, "max new tokens per sample", low=1)


@dataclass
class Config:
    """A whole training run."""

    method: str = knob("a1", "a1: Code LLM vs Test LLM; golden: Code LLM on golden tests; selfplay: one "
                             "model writes code and black-box tests", choices=("a1", "golden", "selfplay"))
    seed: int = knob(0, "seed of data order, sampling and initialisation", low=0)
    train: TrainSection = field(default_factory=TrainSection)
    model: ModelSection = field(default_factory=ModelSection)
    game: GameSection = field(default_factory=GameSection)
    generation: GenerationSection = field(default_factory=GenerationSection)
    optim: OptimSection = field(default_factory=OptimSection)
    data: DataSection = field(default_factory=DataSection)
    executor: ExecutorSection = field(default_factory=ExecutorSection)
    eval: EvalSection = field(default_factory=EvalSection)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    @property
    def test_model_name(self) -> str:
        return self.model.test_policy or self.model.code_policy


# ----------------------------------------------------------------------------------------------------
# loading, overrides, validation


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_section(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _coerce(key: str, value: Any, tp: Any) -> Any:
    """Converts a YAML/CLI value to the field's declared type, or raises a UserError naming the key."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None or (isinstance(value, str) and value.strip().lower() in ("null", "none", "~")):
            return None
        return _coerce(key, value, args[0])
    if origin is list:
        (item,) = typing.get_args(tp)
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise UserError(f"config key '{key}' must be a list, got {value!r}")
        return [_coerce(f"{key}[{i}]", v, item) for i, v in enumerate(value)]
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1", "false", "no",
                                                                 "off", "0"):
            return value.strip().lower() in ("true", "yes", "on", "1")
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise UserError(f"config key '{key}' must be true or false, got {value!r}")
    if tp is int:
        if isinstance(value, bool):
            raise UserError(f"config key '{key}' must be an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise UserError(f"config key '{key}' must be an integer, got {value!r}")
    if tp is float:
        if isinstance(value, bool):
            raise UserError(f"config key '{key}' must be a number, got {value!r}")
        if isinstance(value, (int, float)):
            out = float(value)
        else:
            try:
                out = float(str(value).strip())
            except ValueError:
                raise UserError(f"config key '{key}' must be a number, got {value!r}") from None
        if not math.isfinite(out):
            raise UserError(f"config key '{key}' must be a finite number, got {value!r}")
        return out
    if tp is str:
        if isinstance(value, (dict, list)) or value is None:
            raise UserError(f"config key '{key}' must be a string, got {value!r}")
        return str(value)
    raise TypeError(f"unsupported config type {tp} for {key}")  # a bug in this module, not user input


def _check_range(key: str, value: Any, meta: dict) -> None:
    if value is None:
        return
    choices = meta.get("choices")
    if choices and value not in choices:
        raise UserError(f"config key '{key}' must be one of {', '.join(choices)}; got {value!r}")
    low, high = meta.get("low"), meta.get("high")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if low is not None and (value < low or (meta.get("low_open") and value == low)):
            sign = ">" if meta.get("low_open") else ">="
            raise UserError(f"config key '{key}' must be {sign} {low:g}; got {value!r}")
        if high is not None and value > high:
            raise UserError(f"config key '{key}' must be <= {high:g}; got {value!r}")


def _build(cls: type, data: Any, prefix: str) -> Any:
    """Builds a (section) dataclass from a nested dict, checking keys, types and ranges."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(f"config section '{prefix or 'top level'}' must be a mapping, got {data!r}")
    hints = _hints(cls)
    fields_by_name = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields_by_name))
    if unknown:
        where = f"in section '{prefix}'" if prefix else "at the top level"
        raise UserError(f"unknown config key '{prefix + '.' if prefix else ''}{unknown[0]}' {where}; "
                        f"known keys: {', '.join(sorted(fields_by_name))}")
    kwargs = {}
    for name, value in data.items():
        key = f"{prefix}.{name}" if prefix else name
        tp = hints[name]
        if _is_section(tp):
            kwargs[name] = _build(tp, value, key)
            continue
        value = _coerce(key, value, tp)
        _check_range(key, value, dict(fields_by_name[name].metadata))
        kwargs[name] = value
    return cls(**kwargs)


def _cross_check(cfg: Config) -> None:
    """Rules that involve more than one key."""
    if cfg.game.ell > cfg.game.M:
        raise UserError(f"config key 'game.ell' ({cfg.game.ell}) cannot exceed game.M ({cfg.game.M})")
    if cfg.model.mode == "dual-lora" and cfg.model.test_policy not in (None, cfg.model.code_policy):
        raise UserError("config key 'model.test_policy' must equal model.code_policy (or be null) in "
                        "mode dual-lora, where both adapters share one base model")
    if cfg.method == "selfplay" and cfg.model.mode == "dual-lora":
        raise UserError("config key 'model.mode' cannot be dual-lora with method selfplay, which trains "
                        "a single policy; use full or lora")
    if cfg.optim.mini_batches > cfg.train.batch_size:
        raise UserError(f"config key 'optim.mini_batches' ({cfg.optim.mini_batches}) cannot exceed "
                        f"train.batch_size ({cfg.train.batch_size})")


def config_from_dict(data: dict[str, Any]) -> Config:
    """Builds and validates a Config from a nested dict (missing keys take their defaults)."""
    cfg = _build(Config, data, "")
    _cross_check(cfg)
    return cfg


def parse_override(text: str) -> tuple[str, Any]:
    """'game.M=4' -> ('game.M', 4). Values are parsed as YAML scalars/lists, then coerced on build."""
    if "=" not in text:
        raise UserError(f"override '{text}' must look like key=value (e.g. game.M=4)")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key:
        raise UserError(f"override '{text}' has an empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key, value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Sets dotted keys in a nested dict (unknown keys are reported when the Config is built)."""
    for text in overrides:
        key, value = parse_override(text)
        parts = key.split(".")
        node = data
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise UserError(f"override '{text}': '{part}' is a value, not a section")
            node = child
        node[parts[-1]] = value
    return data


def read_yaml(path: str | Path) -> dict[str, Any]:
    """Reads a YAML mapping; missing/unparseable files are UserErrors naming the file."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such config file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"{path}: not valid YAML{where}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read config file ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UserError(f"{path}: a config file must be a YAML mapping of sections")
    return data


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> Config:
    """YAML file (or the defaults) + dotted overrides -> a validated Config."""
    data = read_yaml(path) if path is not None else {}
    if path is not None:
        try:
            config_from_dict(data)
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    if not overrides:
        return config_from_dict(data)
    data = apply_overrides(data, list(overrides))
    try:
        return config_from_dict(data)
    except UserError as exc:
        raise UserError(f"command-line override: {exc}") from None


def save_config(cfg: Config, path: str | Path) -> None:
    Path(path).write_text(cfg.to_yaml(), encoding="utf-8")


def describe_keys(cls: type = Config, prefix: str = "") -> list[tuple[str, str, Any, str]]:
    """(dotted key, type, default, help) for every knob, in declaration order; for `--list-keys`."""
    rows = []
    hints = _hints(cls)
    default = cls()
    for f in dataclasses.fields(cls):
        key = f"{prefix}.{f.name}" if prefix else f.name
        tp = hints[f.name]
        if _is_section(tp):
            rows.extend(describe_keys(tp, key))
            continue
        type_name = getattr(tp, "__name__", None) or str(tp).replace("typing.", "")
        help_text = f.metadata.get("help", "")
        if f.metadata.get("choices"):
            help_text += f" [{'|'.join(f.metadata['choices'])}]"
        rows.append((key, type_name, getattr(default, f.name), help_text))
    return rows
