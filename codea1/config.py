"""One typed configuration: YAML files plus dotted `key=value` overrides.

Every knob lives once, in one of the section dataclasses below, with a help string and, for numbers, a
range in its field metadata. The sections are the types the code takes: `GameConfig` is what
`codea1.game.play` scores with and the `game` section, `PolicyConfig` is what `codea1.rl.policy.Policy`
trains with and the `policy` section, `Sampling` is how a role samples (`generation.code`,
`generation.test`, the sampling keys of `eval`, and the base of `codea1.inference.rollout.GenerationConfig`).
`codea1 train`, `codea1 score` and `codea1 eval` therefore read the same keys.

`load_config(path, overrides)` reads a YAML file (or a preset of codea1/configs/ by name: `tiny-cpu`),
applies overrides such as `game.M=4` or `policy.lr=1e-5`, coerces types and validates everything; any
mistake is a UserError naming the key, the bad value and what is allowed (a key of an earlier version
names its replacement). `codea1 train --list-keys` prints the whole tree with its help text.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import string
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from codea1.engines import describe_engines, engine_entry, engine_names
from codea1.errors import UserError
from codea1.method_traits import DEFAULT_METHOD, TRAITS, MethodTraits, method_traits

LOSS_AGG_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm")
KL_TYPES = ("low_var_kl", "k1", "k2")
FAIL_DENOMINATORS = ("fixed", "actual")
SELFPLAY_REWARDS = ("a1", "cure", "cure-suite")
A1_TEST_REWARD = SELFPLAY_REWARDS[0]  # the game's own R_T
CURE_REWARDS = ("cure", "cure-suite")  # the test rewards judged across codes (codea1.game.score.cure_rewards)
TEST_VALIDITY = ("reference", "strict")
METHODS = tuple(TRAITS)  # codea1.method_traits: what each method is
DYNAMIC_SAMPLING = ("off", "refill", "dapo")


def meta(
    help: str,
    *,
    choices: tuple | None = None,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    length: int | None = None,
    derived: str | None = None,
    follows: str | None = None,
    placeholders: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """The metadata of a config field: help string, optional choices and numeric range (low/high
    inclusive unless *_open; for lists, each item), a fixed list length; `derived`: the key it is always
    set from in a training config (it is neither read from YAML nor written back); `follows`: the key
    whose value a null (or left out) value takes; `placeholders`: the value is a str.format template
    that may use only these {names} (literal braces doubled)."""
    return {
        "help": help,
        "choices": choices,
        "low": low,
        "high": high,
        "low_open": low_open,
        "high_open": high_open,
        "length": length,
        "derived": derived,
        "follows": follows,
        "placeholders": placeholders,
    }


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask; the CPU count where there is none)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def torch_threads(cfg: Config, *, policy_actor: bool = False) -> int:
    """The torch threads of a process of this run: train.torch_threads where set; else, in a policy actor
    (codea1.cluster.policies), its CPU reservation placement.cpus_per_policy (at least 1, at most the cores
    it may use), since a node's ranks share its cores; else every core this process may use."""
    if cfg.train.torch_threads is not None:
        return int(cfg.train.torch_threads)
    cores = usable_cores()
    if policy_actor:
        return max(1, min(cores, int(cfg.placement.cpus_per_policy)))
    return cores


def knob(default: Any, help: str, **checks: Any) -> Any:
    """A config field with an immutable default (lists: `field(default_factory=..., metadata=meta(...))`)."""
    return field(default=default, metadata=meta(help, **checks))


class Section:
    """Base of every config section: checks its values on construction (so a section built in Python
    is as valid as one read from YAML), converts to and from plain dicts."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_range(f"{type(self).__name__}.{f.name}", getattr(self, f.name), f.metadata)

    def to_dict(self) -> dict[str, Any]:
        """The section as plain data, without derived fields (what a YAML file holds)."""
        out = {}
        for f in dataclasses.fields(self):
            if f.metadata.get("derived"):
                continue
            value = getattr(self, f.name)
            out[f.name] = value.to_dict() if isinstance(value, Section) else copy.deepcopy(value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, prefix: str = "") -> Any:
        """Builds the section from a plain dict (e.g. a YAML mapping), checking keys, types and ranges;
        `prefix` ('game') is how error messages name its keys."""
        return _build(cls, data, prefix)


@dataclass
class TrainSection(Section):
    """How long to train, on what batch, what a step does about groups without gradient (dynamic sampling),
    and how the run is checkpointed and logged. A null dynamic_sampling follows refill_rounds, as configs
    of earlier versions (refill_rounds only) meant it."""

    max_steps: int = knob(
        30,
        "stop after this many training steps (overridden by --max-steps; the "
        "learning-rate schedule always spans this many)",
        low=1,
    )
    batch_size: int = knob(8, "B: questions per training step", low=1)
    data_epochs: int = knob(3, "passes over the training problems (each pass in a fresh seeded order)", low=1)
    checkpoint_every: int = knob(5, "write a checkpoint every K steps (and always at the last step)", low=1)
    keep_checkpoints: int = knob(2, "keep the newest N complete checkpoints, delete older ones", low=1)
    torch_threads: int | None = knob(
        None,
        "torch intra-op threads (null: the CPU cores this process may use; in a policy actor of "
        "placement.backend ray, the actor's reservation placement.cpus_per_policy, so that the ranks of a node "
        "do not each take every core); on a shared machine use 1 or set OMP_WAIT_POLICY=PASSIVE: spinning "
        "OpenMP threads stall while another process holds a core",
        low=1,
    )
    measure_golden_pass: bool = knob(
        True,
        "a1/selfplay: also run each code on the dataset's golden tests (metric golden_pass_rate only, not a reward)",
    )
    dynamic_sampling: str | None = knob(
        None,
        "what a step does about GRPO groups whose rewards are all equal (no gradient): off: trains on them as "
        "they are; refill: samples the same questions again, up to train.refill_rounds times (Code LLM groups "
        "only); dapo: drops them and plays new questions (from a reserve order of (seed, step), never the data "
        "stream) until each role holds its batch's number of groups with unequal rewards, at most "
        "train.dapo_max_draws draws; null: refill if train.refill_rounds > 0, else off",
        choices=DYNAMIC_SAMPLING,
        follows="train.refill_rounds",
    )
    refill_rounds: int = knob(
        0,
        "dynamic_sampling refill: up to this many extra sampling rounds per step for the questions whose "
        "M codes all got the same reward (0 with any other dynamic_sampling)",
        low=0,
    )
    dapo_max_draws: int = knob(
        4,
        "dynamic_sampling dapo: the most batches of new questions (train.batch_size each) one step draws and "
        "plays before it trains on the groups it has (DAPO's max_num_gen_batches; a cap is required)",
        low=1,
    )
    separate_test_update: bool = knob(
        False,
        "a method that plays both roles with one policy (selfplay) updates it twice a step, on its code rows "
        "then on its test rows, as CURE's separate_training does (its default); false: one update on both",
    )
    one_step_off: bool = knob(
        False,
        "sample step t+1's codes and tests in the background while step t plays and learns, from a copy of "
        "the weights before update t: one update behind (the learner re-scores the rows it trains, logs the "
        "gap as mismatch_* and rollout_lag, and corrects it with policy.tis_cap where set); the Mistake Book "
        "and TopVar keep step order (codea1.train.one_step_off; rollout.sampler_device places the copy)",
    )
    log_rollouts: bool = knob(True, "write rollouts/step_K.jsonl (score input format plus scores)")
    tensorboard: bool = knob(False, "also log metrics to TensorBoard (needs the 'tensorboard' extra)")
    wandb: bool = knob(False, "also log metrics to Weights & Biases (needs the 'wandb' extra)")
    wandb_project: str = knob("codea1", "wandb project name")
    progress: bool = knob(True, "show a rich progress display with phases and ETA")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.dynamic_sampling is None:
            self.dynamic_sampling = "refill" if self.refill_rounds > 0 else "off"
        if self.dynamic_sampling == "refill" and self.refill_rounds == 0:
            raise UserError("config key 'train.dynamic_sampling' is 'refill': set train.refill_rounds >= 1")
        if self.dynamic_sampling != "refill" and self.refill_rounds > 0:
            raise UserError(
                f"config key 'train.refill_rounds' ({self.refill_rounds}) applies to train.dynamic_sampling "
                f"refill only (it is {self.dynamic_sampling!r}); set it to 0"
            )


@dataclass
class ModelSection(Section):
    """Which models play, and how their weights are shared (full models, LoRA, two LoRAs on one base)."""

    code_model: str = knob("tiny-random", "Code LLM: 'tiny-random', 'smollm2-135m', a local dir or hub id")
    test_model: str | None = knob(None, "Test LLM (default: same as code_model); ignored for selfplay and golden")
    mode: str = knob(
        "full",
        "full: two full models; lora: one LoRA adapter per model; dual-lora: two adapters on one shared frozen base",
        choices=("full", "lora", "dual-lora"),
    )
    device: str = knob("cpu", "torch device ('cpu', 'cuda', 'cuda:1', ...)")


@dataclass
class PolicyConfig(Section):
    """How each policy is optimised by GRPO (docs/algorithm.md section 8): what `codea1.rl.policy.Policy`
    takes, and the `policy` section of a training config (the same settings for both policies)."""

    lr: float = knob(1e-6, "AdamW learning rate (LoRA usually wants 1e-5..1e-4)", low=0.0, low_open=True)
    weight_decay: float = knob(0.1, "AdamW weight decay", low=0.0)
    adamw_fused: bool | None = knob(
        None,
        "AdamW's fused kernel: the whole update in one kernel, without the state-sized temporary of torch's "
        "foreach step (5.75 GiB of the 1.5B preset's peak; benchmarks/learner_memory.py); null: fused where "
        "every trainable parameter is on CUDA, torch's default (foreach) elsewhere",
    )
    betas: list[float] = field(
        default_factory=lambda: [0.9, 0.999], metadata=meta("AdamW betas", low=0.0, high=1.0, high_open=True, length=2)
    )
    warmup_steps: int = knob(10, "linear learning-rate warm-up, in training steps", low=0)
    total_steps: int = knob(100, "training steps the schedule decays over", low=1, derived="train.max_steps")
    schedule: str = knob("cosine", "learning-rate schedule after warm-up", choices=("cosine", "constant", "linear"))
    min_lr_ratio: float = knob(0.0, "floor of the decayed learning rate, as a fraction of lr", low=0.0, high=1.0)
    grad_clip: float = knob(1.0, "max global gradient norm", low=0.0, low_open=True)
    clip_low: float = knob(0.2, "PPO ratio clip below 1", low=0.0, high=1.0)
    clip_high: float = knob(0.28, "PPO ratio clip above 1 (clip-higher)", low=0.0)
    dual_clip: float | None = knob(
        10.0, "dual-clip constant c for negative advantages (> 1); null disables", low=1.0, low_open=True
    )
    tis_cap: float | None = knob(
        None,
        "truncated importance sampling: each token's policy loss times min(pi_learner / pi_engine, cap), where "
        "the sampling engine reports its own log-probs (vLLM); null: off",
        low=1.0,
    )
    loss_agg: str = knob("token-mean", "loss aggregation", choices=LOSS_AGG_MODES)
    norm_constant: float | None = knob(
        None,
        "Dr.GRPO constant of seq-mean-token-sum-norm (null: the longest response of the mini-batch)",
        low=0.0,
        low_open=True,
    )
    adv_std_norm: bool = knob(True, "divide group advantages by the group std (false: Dr.GRPO)")
    kl_coef: float = knob(0.001, "KL loss coefficient to the frozen initial model (0: no reference is kept)", low=0.0)
    kl_type: str = knob("low_var_kl", "KL estimator (low_var_kl is k3)", choices=KL_TYPES)
    entropy_coef: float = knob(0.0, "entropy bonus coefficient (0 in the paper; entropy is logged anyway)", low=0.0)
    mini_batches: int = knob(1, "optimiser steps per training step (the samples are split in order)", low=1)
    ppo_epochs: int = knob(1, "passes over each step's samples", low=1)
    micro_batch_tokens: int = knob(16384, "padded-token budget of one forward/backward micro-batch", low=1)
    dtype: str = knob(
        "float32",
        "compute dtype (bfloat16/float16 autocast; trainable weights and AdamW "
        "state stay float32; a frozen LoRA base is loaded in it)",
        choices=("float32", "bfloat16", "float16"),
    )
    gradient_checkpointing: bool = knob(False, "recompute activations in the backward pass (less memory)")
    logprob_chunk: int = knob(
        1024,
        "positions whose vocabulary-sized logits exist at once in a log-prob pass: the output layer, "
        "log-softmax and entropy run chunk by chunk, recomputed in the backward (the same values; "
        "codea1.rl.chunked); 0: the whole pass's logits at once",
        low=0,
    )
    shared_prompt: bool = knob(
        True,
        "learner: run each group's shared prompt once for all its responses (the same log-probs up to "
        "float rounding, less compute; false: every row packed with its own copy of the prompt)",
    )
    lora: bool = knob(False, "train a LoRA adapter instead of all weights", derived="model.mode")
    lora_r: int = knob(16, "LoRA rank", low=1)
    lora_alpha: int = knob(32, "LoRA scaling alpha", low=1)
    lora_dropout: float = knob(0.0, "LoRA dropout", low=0.0, high=1.0)
    lora_targets: list[str] = field(
        default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"], metadata=meta("module names LoRA attaches to")
    )


@dataclass
class Sampling(Section):
    """How one role samples: a `generation.code` / `generation.test` section, the sampling keys of
    `eval`, and the base of `codea1.inference.rollout.GenerationConfig` (which adds n and seed per call)."""

    temperature: float = knob(1.0, "sampling temperature (0: greedy)", low=0.0)
    top_p: float = knob(1.0, "nucleus sampling mass", low=0.0, high=1.0, low_open=True)
    top_k: int = knob(0, "keep only the k most likely tokens (0: off)", low=0)
    max_new_tokens: int = knob(256, "max new tokens per response", low=1)
    max_prompt_tokens: int | None = knob(None, "longer prompts keep their last tokens (null: no cut)", low=1)
    stop: list[str] = field(default_factory=list, metadata=meta("stop strings (kept in the text)"))
    rows_per_call: int = knob(64, "rows (prompts x samples) per generate call", low=1)
    response_prefix: str = knob(
        "",
        "text the response is made to start with (prefilled as the start of "
        "the assistant turn, part of the prompt, not generated or trained on; "
        "kept in the response text); {entry_point} is the problem's function; "
        "empty: none (docs/cold-start.md)",
        placeholders=("entry_point",),
    )


@dataclass
class GenerationSection(Section):
    """Sampling settings of the two roles (in selfplay one policy plays both, each with its own)."""

    code: Sampling = field(default_factory=lambda: Sampling(max_new_tokens=4096, max_prompt_tokens=4096))
    test: Sampling = field(default_factory=lambda: Sampling(max_new_tokens=4096, max_prompt_tokens=8192))


@dataclass
class GameConfig(Section):
    """How one question is played and scored (docs/algorithm.md sections 2-7; defaults follow the reference
    code): what `codea1.game.play` takes, and the `game` section of a training config."""

    M: int = knob(8, "codes sampled per question", low=1)
    N: int = knob(8, "test suites sampled per code", low=1)
    tests_per_suite: int = knob(8, "the '8' of valid_ratio = min(V/8, 1 - I/8) and of gen_fail's first-8 window", low=1)
    tests_requested: int | None = knob(
        None, "tests the test prompt asks for (null: tests_per_suite)", low=1, follows="game.tests_per_suite"
    )
    blackbox_tests: bool | None = knob(
        None,
        "the test prompt shows only the question, not the candidate "
        "(null: black-box for method selfplay, white-box otherwise)",
        follows="method",
    )
    history_size: int = knob(8, "H: Mistake Book tests (most frequent first) each question is replayed with", low=0)
    topvar_ell: int = knob(
        1, "TopVar ell: candidates per question whose suites train the Test LLM (ell = M trains on all)", low=1
    )
    alpha: float = knob(
        0.5, "weight of valid_ratio in the test reward, R_T = alpha*valid_ratio + (1-alpha)*Adv", low=0.0, high=1.0
    )
    fail_denominator: str = knob(
        "fixed",
        "gen_fail divided by tests_per_suite ('fixed', reference code) "
        "or by min(V, tests_per_suite) ('actual', the paper's figure)",
        choices=FAIL_DENOMINATORS,
    )
    nonprintable_penalty: bool = knob(
        True, "subtract the share of non-printable characters of a test response from R_T"
    )
    max_tests_per_suite: int = knob(
        0,
        "asserts after this many in one response are ignored (bounds a "
        "runaway response); 0 keeps them all, as the reference code",
        low=0,
    )
    test_timeout: float = knob(2.0, "seconds per test call, for GT and for candidates", low=0.0, low_open=True)
    timeout_factor: float = knob(
        2.0,
        "a candidate's per-call limit is raised to this many times the "
        "slowest GT call of its tests when that is above test_timeout",
        low=1.0,
    )
    float_tol: float | None = knob(
        None, "null compares values exactly; a number compares floats with that absolute/relative tolerance", low=0.0
    )
    selfplay_reward: str = knob(
        A1_TEST_REWARD,
        "test reward in selfplay: 'a1' (Code-A1's R_T); 'cure' (CURE's reward: per test, averaged over a suite, "
        "normalised per question, none trained where no code is correct); 'cure-suite' (codea1's earlier "
        "variant: trained on every question, TopVar's groups)",
        choices=SELFPLAY_REWARDS,
    )
    test_validity: str = knob(
        "reference",
        "'reference' reads and validates tests as the authors' reward "
        "code does; 'strict' also requires every test to call the "
        "function under test and counts only '==' claims that agree "
        "with GT as right predictions",
        choices=TEST_VALIDITY,
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.tests_requested is None:
            self.tests_requested = self.tests_per_suite


@dataclass
class DataSection(Section):
    """Training problems."""

    train: str = knob(
        "bundled:train",
        "problem spec: bundled[:train|:eval], bundled-stdio[:SPLIT], bundled-stdio-cpp[:SPLIT], humaneval, "
        "humaneval+[:PATH], mbpp+[:PATH], kodcode[:PATH], bigcodebench[-complete]:PATH, a .jsonl of Problem "
        "rows or a reference-schema .parquet, several joined by commas (livecodebench:PATH and verl:PATH "
        "ship no GT: they are evaluated, not trained on)",
    )
    difficulty: str | None = knob(None, "keep only problems with this difficulty label (e.g. 'hard')")
    limit: int | None = knob(None, "use at most this many problems", low=1)
    check_gt: bool = knob(True, "run each GT against its golden tests first and drop broken rows")
    require_golden_tests: bool = knob(
        True,
        "keep only problems with golden tests, whatever the method: golden "
        "needs them, and one rule for every method gives a1, golden and "
        "selfplay the same problems in the same order (false: a1 and "
        "selfplay also play problems without golden tests)",
    )


@dataclass
class ExecutorSection(Section):
    """The sandbox that runs generated code and tests (the per-call time limit is game.test_timeout)."""

    workers: int | None = knob(None, "parallel sandbox workers (default: number of CPU cores)", low=1)
    define_timeout: float = knob(5.0, "seconds to define (import) a candidate program", low=0.0, low_open=True)
    memory_mb: int = knob(1024, "address-space limit per sandboxed child, MiB", low=64)
    isolation: str | None = knob(
        None,
        "full: as root, a sandbox layer that does not come up stops the run (with what it needs); available: "
        "run with the layers this machine has, warning once; null: $CODEA1_SANDBOX_ISOLATION, else full",
        choices=("full", "available"),
    )
    uid_base: int | None = knob(
        None,
        "where the sandbox starts looking for free uids to lease (one per "
        "slot, machine-wide); null: the sandbox's default",
        low=1000,
    )
    backend: str = knob(
        "local",
        "local: one Executor in this process; ray: one Executor per Ray node "
        "(codea1.cluster.sandbox_pools; needs the 'ray' extra; the cluster: the `ray` section), "
        "workers per node",
        choices=("local", "ray"),
    )


@dataclass
class RaySection(Section):
    """The Ray cluster that `executor.backend: ray` (sandbox pools) and `placement.backend: ray` (policy
    actors) both join (codea1.cluster)."""

    address: str | None = knob(
        None,
        "the cluster to join ('auto': the one `ray start` made on this node; null: a running one, else a "
        "local one started here)",
    )
    sandbox_pools_per_node: int = knob(1, "executor.backend ray: sandbox pools per node", low=1)
    sandbox_chunks_in_flight: int = knob(
        2, "executor.backend ray: job chunks (8 jobs per slot each) handed to a pool at a time", low=1
    )


@dataclass
class PlacementSection(Section):
    """Where the two policies live while training (the controller loop always runs in this process)."""

    backend: str = knob(
        "local",
        "local: the policies in this process; ray: each policy (its learner and its "
        "rollout engine) in a Ray actor of its own, placed by Ray on any node "
        "(codea1.cluster.policies; needs the 'ray' extra; the cluster: the `ray` section)",
        choices=("local", "ray"),
    )
    gpus_per_policy: float = knob(0.0, "backend ray: GPUs each policy actor reserves (0: it runs on CPU)", low=0.0)
    cpus_per_policy: float = knob(1.0, "backend ray: CPUs each policy actor reserves", low=0.0)
    learner_ranks: int = knob(
        1,
        "backend ray: data-parallel ranks per policy, one actor each (its GPUs and CPUs as above): every "
        "rank samples its share of each seeded generate call (the samples one rank would draw) and trains "
        "on its share of each update, the gradients summed (codea1.rl.distributed)",
        low=1,
    )
    place_timeout: float = knob(
        300.0,
        "backend ray: seconds to wait for the cluster to reserve a policy's ranks (one placement group "
        "per policy, all its ranks on one node unless span_nodes); past it the run stops and says what it "
        "asked for",
        low=1.0,
    )
    span_nodes: bool = knob(
        False,
        "backend ray: a policy's ranks may span nodes (Ray's PACK strategy: as few nodes as hold them), so "
        "that a policy samples and trains on more GPUs than one node has; its torch.distributed group (the "
        "gradient sums, FSDP's gathers) then crosses the network between nodes. false: all on one node "
        "(STRICT_PACK), the node's own links only",
    )
    fsdp: bool = knob(
        False,
        "learner_ranks > 1: shard each policy's weights, gradients and AdamW state over its ranks with "
        "torch FSDP2 (model.mode full; each rank keeps a full replica of the weights only to sample from, "
        "on the CPU where vLLM samples) instead of the whole learner on every rank",
    )
    fsdp_half_gathers: bool = knob(
        True,
        "fsdp with policy.dtype bfloat16/float16: gather the shards in that dtype (FSDP2's "
        "MixedPrecisionPolicy: half the all-gather bytes, weights rounded to it in every pass, as verl); "
        "the shards, gradient reduction and AdamW stay float32. Off: fp32 gathers (twice the bytes), one "
        "rank's numbers; float32 policies always gather in float32",
    )


@dataclass
class RolloutSection(Section):
    """The engine that samples rollouts for training (the learner always scores and trains itself)."""

    backend: str = knob(
        "loop",
        "the engine that samples (codea1.engines; `codea1 eval --engine` sets this key too): "
        + describe_engines()
        + "; transformers: the older name of loop",
        choices=engine_names(),
    )
    sampler_device: str | None = knob(
        None,
        "train.one_step_off: where the sampling copy of each policy lives (e.g. cuda:1, beside a learner "
        "on cuda:0; null: the learner's device)",
    )
    vllm_gpu_memory_utilization: float | None = knob(
        None,
        "backend vllm: share of each GPU's memory the engine takes (null: 0.3 in training, where the learner "
        "shares the GPU; 0.9 in `codea1 eval`, where the engine only samples)",
        low=0.0,
        high=1.0,
        low_open=True,
    )
    vllm_sleep_level: int | None = knob(
        None,
        "backend vllm: sleep between rollouts to free GPU memory for the "
        "learner (0: never; 1: weights to CPU, KV cache dropped; 2: weights "
        "dropped too, re-sent from the learner; full models only; null: where vLLM's platform has sleep "
        "mode 2 for full models and 1 for LoRA, 0 where it has none, as on its CPU build)",
        low=0,
        high=2,
    )
    vllm_tensor_parallel_size: int = knob(1, "backend vllm: GPUs one engine spans", low=1)
    vllm_dtype: str = knob(
        "policy",
        "backend vllm: the engine's weight dtype (policy: the learner's policy.dtype, so that the engine "
        "samples what the learner scores; auto: the model's own)",
        choices=("policy", "auto", "bfloat16", "float16", "float32"),
    )
    vllm_max_model_len: int | None = knob(
        None, "backend vllm: prompt + response tokens (null: the model's own limit)", low=1
    )
    vllm_weights_dir: str | None = knob(
        None,
        "backend vllm, full models, the file transfer (vllm_weight_transfer): the folder the learner's weights "
        "are written to for the engine to reload after each update (null: /dev/shm where it has room, else "
        "the system's temporary folder); its room is checked before each write",
    )
    vllm_weight_transfer: str = knob(
        "auto",
        "backend vllm, full models: how the learner's weights reach the engine after each update (direct: "
        "the tensors themselves to an engine in the learner's process; ipc: CUDA IPC handles to an engine "
        "in its own processes on the same machine and GPU; file: a safetensors file in vllm_weights_dir; "
        "auto: the first of these that reaches the engine)",
        choices=("auto", "direct", "ipc", "file"),
    )
    vllm_enforce_eager: bool | None = knob(
        None,
        "backend vllm: no CUDA graphs (less memory, slower on a GPU); null: eager without CUDA (vLLM's CPU "
        "build otherwise compiles for minutes), graphs on GPUs",
    )


@dataclass
class EvalSection(Sampling):
    """Evaluation of a code policy: the demo's before/after check and the sampling of `codea1 eval`."""

    problems: str = knob("bundled:eval", "held-out problem spec")
    limit: int = knob(8, "problems evaluated", low=1)
    n_samples: int = knob(2, "samples per problem", low=1)


def _eval_defaults() -> EvalSection:
    return EvalSection(temperature=0.7, top_p=0.95, max_new_tokens=512, rows_per_call=16)


HEALTH_MODES = ("off", "warn", "stop")


@dataclass
class HealthSection(Section):
    """Run health (codea1.train.health): signals of collapse and reward hacking, each averaged over the
    last `window` steps and checked after every step; a signal past its threshold is printed and kept in
    metrics.jsonl (health_warnings), and with mode=stop the run ends there, checkpointed (`codea1 train`
    exits 3); a resume may change these keys (`codea1 train --resume RUN_DIR health.mode=warn`)."""

    mode: str = knob("warn", "off: no checks; warn: print and log; stop: also end the run", choices=HEALTH_MODES)
    window: int = knob(
        5, "steps a signal is averaged over (and the first steps entropy and length are compared with)", low=1
    )
    min_entropy_ratio: float = knob(0.3, "collapse: a policy's entropy under this share of its first window's", low=0.0)
    min_length_ratio: float = knob(
        0.3, "collapse: a role's response length under this share of its first window's", low=0.0
    )
    max_zero_var_groups: float = knob(
        0.9, "no signal: share of trained groups whose rewards are all equal (no gradient)", low=0.0, high=1.0
    )
    max_tests_not_calling: float = knob(
        0.5, "hacking: share of kept tests that never call the function under test", low=0.0, high=1.0
    )
    max_tests_refused: float = knob(
        0.5, "hacking: share of written tests refused as introspective, random or not plain data", low=0.0, high=1.0
    )
    max_book_fresh_gap: float = knob(
        0.6, "hacking: fresh tests' pass rate minus the Mistake Book's (tests growing easy)", low=0.0, high=1.0
    )


SFT_ROLES = ("code", "test")
SFT_TEST_ORDERS = ("given", "shortest")


@dataclass
class SFTSection(Section):
    """Supervised warm-up before RL (`codea1 sft`, docs/cold-start.md): the Code LLM learns to answer the
    code prompt with the GT solution and the Test LLM the white-box prompt (GT shown as the candidate)
    with the golden asserts, loss on the response tokens only. Model, mode (full/LoRA), LoRA shape,
    weight decay, betas, grad clip and dtype are those of the `model` and `policy` sections."""

    roles: list[str] = field(
        default_factory=lambda: list(SFT_ROLES),
        metadata=meta("which roles get examples (code, test)", choices=SFT_ROLES),
    )
    epochs: int = knob(2, "passes over the examples (each in a fresh seeded order)", low=1)
    lr: float = knob(2e-5, "AdamW peak learning rate (LoRA usually wants 1e-4..1e-3)", low=0.0, low_open=True)
    warmup_steps: int = knob(2, "linear learning-rate warm-up in optimiser steps, then linear decay to 0", low=0)
    batch_size: int = knob(4, "examples per optimiser step", low=1)
    max_examples: int | None = knob(None, "at most this many examples per role (null: one per training problem)", low=1)
    test_order: str = knob(
        "given",
        "order of the golden asserts in the test role's answer: given (the "
        "problem's order) or shortest (shortest first)",
        choices=SFT_TEST_ORDERS,
    )


@dataclass
class Config(Section):
    """A whole training run. Derived fields are filled from the keys they follow: policy.lora from
    model.mode, policy.total_steps from train.max_steps, a null game.blackbox_tests from method."""

    method: str = knob(
        DEFAULT_METHOD,
        "; ".join(f"{t.name}: {t.summary}" for t in TRAITS.values()),
        choices=METHODS,
    )
    seed: int = knob(0, "seed of data order, sampling and initialisation", low=0)
    train: TrainSection = field(default_factory=TrainSection)
    model: ModelSection = field(default_factory=ModelSection)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    game: GameConfig = field(default_factory=GameConfig)
    generation: GenerationSection = field(default_factory=GenerationSection)
    data: DataSection = field(default_factory=DataSection)
    executor: ExecutorSection = field(default_factory=ExecutorSection)
    rollout: RolloutSection = field(default_factory=RolloutSection)
    placement: PlacementSection = field(default_factory=PlacementSection)
    ray: RaySection = field(default_factory=RaySection)
    eval: EvalSection = field(default_factory=_eval_defaults)
    sft: SFTSection = field(default_factory=SFTSection)
    health: HealthSection = field(default_factory=HealthSection)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.policy = dataclasses.replace(self.policy, lora=self.model.mode != "full", total_steps=self.train.max_steps)
        if self.game.blackbox_tests is None:
            self.game = dataclasses.replace(self.game, blackbox_tests=self.traits.blackbox_by_default)

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    @property
    def traits(self) -> MethodTraits:
        """What the run's method is (codea1.method_traits)."""
        return method_traits(self.method)

    @property
    def test_model_name(self) -> str:
        return self.model.test_model or self.model.code_model


# Keys of earlier versions: reading one is an error that names its replacement.
RENAMED = {
    "game.H": "game.history_size",
    "game.ell": "game.topvar_ell",
    "executor.timeout": "game.test_timeout",
    "optim": "policy",
    "model.dtype": "policy.dtype",
    "model.gradient_checkpointing": "policy.gradient_checkpointing",
    "model.lora_r": "policy.lora_r",
    "model.lora_alpha": "policy.lora_alpha",
    "model.lora_dropout": "policy.lora_dropout",
    "model.lora_targets": "policy.lora_targets",
    "generation.code_temperature": "generation.code.temperature",
    "generation.code_top_p": "generation.code.top_p",
    "generation.max_prompt_code": "generation.code.max_prompt_tokens",
    "generation.max_response_code": "generation.code.max_new_tokens",
    "generation.test_temperature": "generation.test.temperature",
    "generation.test_top_p": "generation.test.top_p",
    "generation.max_prompt_test": "generation.test.max_prompt_tokens",
    "generation.max_response_test": "generation.test.max_new_tokens",
    "model.code_policy": "model.code_model",
    "model.test_policy": "model.test_model",
    "generation.code.batch_size": "generation.code.rows_per_call",
    "generation.test.batch_size": "generation.test.rows_per_call",
    "eval.batch_size": "eval.rows_per_call",
    "train.golden_pass_rate": "train.measure_golden_pass",  # a switch, not the rate (the metric keeps the name)
    "executor.ray_address": "ray.address",  # one cluster, one key (two could disagree)
    "placement.ray_address": "ray.address",
    "executor.ray_actors_per_node": "ray.sandbox_pools_per_node",
    "executor.ray_max_in_flight": "ray.sandbox_chunks_in_flight",
}


def migrate(data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A config codea1 itself wrote earlier (a run's config.yaml and run.json, a comparison's
    compare.json) with its RENAMED keys moved to their new names (and `game.selfplay_reward: cure` from before
    it was CURE's own reward renamed cure-suite), and the list of keys moved. A file a user writes is not
    migrated: reading a renamed key there stays an error naming the new key."""
    out = copy.deepcopy(data)
    moved = []
    moved_to: dict[str, str] = {}
    for old, new in RENAMED.items():
        *head, leaf = old.split(".")
        node = out
        for part in head:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or leaf not in node:
            continue
        value = node.pop(leaf)
        *new_head, new_leaf = new.split(".")
        target = out
        for part in new_head:
            target = target.setdefault(part, {})
        if new_leaf in target and new in moved_to and value != target[new_leaf]:
            if target[new_leaf] is None:  # two old keys now one (the Ray address): the one that was set wins
                target[new_leaf] = value
            elif value is not None:
                raise UserError(f"keys {moved_to[new]} and {old} are now one key, '{new}', but their values differ")
        target.setdefault(new_leaf, value)
        moved_to.setdefault(new, old)
        moved.append(old)
    if _before_cure_was_cure(out):
        out["game"]["selfplay_reward"] = "cure-suite"
        moved.append("game.selfplay_reward")
    return out, moved


def _before_cure_was_cure(data: dict[str, Any]) -> bool:
    """Whether a config codea1 wrote names `game.selfplay_reward: cure` from before that value became CURE's
    own reward (its earlier meaning is now `cure-suite`): every config written since holds
    train.separate_test_update, added in the same change."""
    game, train = data.get("game"), data.get("train")
    return (
        isinstance(game, dict)
        and game.get("selfplay_reward") == "cure"
        and isinstance(train, dict)
        and "separate_test_update" not in train
    )


# ----------------------------------------------------------------------------------------------------
# loading, overrides, validation


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _is_section(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Section)


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
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1", "false", "no", "off", "0"):
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


def _check_range(name: str, value: Any, meta: Any) -> None:
    """Checks choices, range and list length of one value; `name` is how the message names it
    ("config key 'game.alpha'" or "GameConfig.alpha")."""
    if value is None:
        return
    length = meta.get("length")
    if isinstance(value, list):
        if length is not None and len(value) != length:
            raise UserError(f"{name} must be a list of {length} values; got {value!r}")
        for item in value:
            _check_range(name, item, {**meta, "length": None})
        return
    placeholders = meta.get("placeholders")
    if placeholders is not None and isinstance(value, str):
        _check_template(name, value, placeholders)
    choices = meta.get("choices")
    if choices and value not in choices:
        raise UserError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    low, high = meta.get("low"), meta.get("high")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if low is not None and (value < low or (meta.get("low_open") and value == low)):
            sign = ">" if meta.get("low_open") else ">="
            raise UserError(f"{name} must be {sign} {low:g}; got {value!r}")
        if high is not None and (value > high or (meta.get("high_open") and value == high)):
            sign = "<" if meta.get("high_open") else "<="
            raise UserError(f"{name} must be {sign} {high:g}; got {value!r}")


def _check_template(name: str, value: str, placeholders: tuple[str, ...]) -> None:
    """A str.format template may use only `placeholders`, without conversions or format specs."""
    allowed = ", ".join("{" + p + "}" for p in placeholders) or "none"
    try:
        parts = list(string.Formatter().parse(value))
    except ValueError as exc:
        raise UserError(
            f"{name} is not a valid template ({exc}; write literal braces as {{{{ and }}}}); got {value!r}"
        ) from None
    for _text, field_name, spec, conversion in parts:
        if field_name is None:
            continue
        if field_name not in placeholders or spec or conversion:
            raise UserError(
                f"{name} may use only the placeholders {allowed} (write literal braces as {{{{ and }}}}); got {value!r}"
            )


def _switch_word(value: Any, meta: Any) -> Any:
    """YAML reads a bare off/on (and no/yes) as a bool: a key whose choices hold the word 'off' (or 'on')
    takes it as that word (`health.mode: off`, `train.dynamic_sampling=off`)."""
    word = "on" if value is True else "off" if value is False else None
    return word if word is not None and word in (meta.get("choices") or ()) else value


def _build(cls: type, data: Any, prefix: str, base: Any = None) -> Any:
    """Builds a section from a nested dict, checking keys, types and ranges; keys the dict leaves out
    keep their value in `base` (default: the section's defaults)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UserError(f"config section '{prefix or 'top level'}' must be a mapping, got {data!r}")
    base = cls() if base is None else base
    hints = _hints(cls)
    fields_by_name = {f.name: f for f in dataclasses.fields(cls)}
    for name in data:
        key = f"{prefix}.{name}" if prefix else str(name)
        if key in RENAMED:
            raise UserError(f"config key '{key}' is now '{RENAMED[key]}'; rename it")
        if name not in fields_by_name:
            where = f"in section '{prefix}'" if prefix else "at the top level"
            known = sorted(n for n, f in fields_by_name.items() if not f.metadata.get("derived"))
            raise UserError(f"unknown config key '{key}' {where}; known keys: {', '.join(known)}")
        if fields_by_name[name].metadata.get("derived"):
            raise UserError(
                f"config key '{key}' is set from {fields_by_name[name].metadata['derived']}; set that key instead"
            )
    kwargs = {}
    for name, f in fields_by_name.items():
        key = f"{prefix}.{name}" if prefix else name
        tp = hints[name]
        if _is_section(tp):
            kwargs[name] = _build(tp, data.get(name), key, getattr(base, name))
        elif name in data:
            kwargs[name] = _coerce(key, _switch_word(data[name], f.metadata), tp)
            _check_range(f"config key '{key}'", kwargs[name], f.metadata)
        elif f.metadata.get("follows"):
            kwargs[name] = None  # left out: follow the other key again (base holds what it was then)
        else:
            kwargs[name] = copy.deepcopy(getattr(base, name))
    return cls(**kwargs)


# vLLM samples as asked only at 0 (greedy) or in this range: it raises a smaller positive temperature to the
# lower end (the learner's log-probs would then not match the samples) and refuses a larger one
VLLM_MIN_TEMPERATURE, VLLM_MAX_TEMPERATURE = 0.01, 2.0


def vllm_samples_at(temperature: float) -> bool:
    """Whether vLLM samples at this temperature as asked (see VLLM_MIN_TEMPERATURE)."""
    t = float(temperature)
    return t == 0 or VLLM_MIN_TEMPERATURE <= t <= VLLM_MAX_TEMPERATURE


def _engine_rules(cfg: Config) -> None:
    """Rules of the rollout engine that involve other keys."""
    r = cfg.rollout
    if engine_entry(r.backend).name != "vllm":
        return
    for role in ("code", "test"):
        t = getattr(cfg.generation, role).temperature
        if not vllm_samples_at(t):  # as codea1.inference.vllm_backend.check_temperature says at generate
            raise UserError(
                f"config key 'generation.{role}.temperature' is {t:g}, but rollout.backend vllm samples "
                f"only at 0 (greedy) or between {VLLM_MIN_TEMPERATURE:g} and {VLLM_MAX_TEMPERATURE:g}"
            )
    if r.vllm_sleep_level == 2 and cfg.model.mode != "full":
        raise UserError(
            "config key 'rollout.vllm_sleep_level' cannot be 2 with model.mode "
            f"{cfg.model.mode}: level 2 drops the engine's base weights, which LoRA policies "
            "never re-send; use 1"
        )
    if r.vllm_tensor_parallel_size > 1 and cfg.placement.backend == "ray":
        raise UserError(
            f"config key 'rollout.vllm_tensor_parallel_size' is {r.vllm_tensor_parallel_size}, but an engine "
            "that spans GPUs cannot start inside a policy actor (placement.backend ray): vLLM's Ray executor "
            "asks for GPUs the actor's placement group has already given out, and waits for ever; use 1 "
            "there (more placement.learner_ranks for more GPUs), or placement.backend local"
        )


def _one_step_off_rules(cfg: Config) -> None:
    """What one-step-off rollout (codea1.train.one_step_off) does not cover yet, one sentence each."""
    if not cfg.train.one_step_off:
        return
    vllm = engine_entry(cfg.rollout.backend).name == "vllm"
    refusals = [
        (
            vllm and cfg.model.mode != "full",
            f"rollout.backend vllm and model.mode {cfg.model.mode} (the engine samples from a snapshot of full weights)",
        ),
        (
            vllm and cfg.rollout.sampler_device is not None,
            "rollout.sampler_device and rollout.backend vllm (the engine is the sampling copy, on its own device)",
        ),
        (cfg.placement.backend != "local", "placement.backend ray"),
        (cfg.model.mode == "dual-lora", "model.mode dual-lora (two adapters on one shared model)"),
        (
            cfg.train.dynamic_sampling not in (None, "off") or cfg.train.refill_rounds > 0,
            "train.dynamic_sampling refill or dapo (their draws sample mid-step)",
        ),
    ]
    for refused, what in refusals:
        if refused:
            raise UserError(f"config key 'train.one_step_off' does not run with {what} yet; set it to false")


def _cross_check(cfg: Config) -> None:
    """Rules that involve more than one key."""
    _engine_rules(cfg)
    _one_step_off_rules(cfg)
    if cfg.game.topvar_ell > cfg.game.M:
        raise UserError(f"config key 'game.topvar_ell' ({cfg.game.topvar_ell}) cannot exceed game.M ({cfg.game.M})")
    if cfg.game.selfplay_reward != A1_TEST_REWARD and not cfg.traits.chooses_test_reward:
        choosing = " or ".join(t.name for t in TRAITS.values() if t.chooses_test_reward)
        raise UserError(
            f"config key 'game.selfplay_reward' is {cfg.game.selfplay_reward!r}, but it applies "
            f"to method {choosing} only (method is {cfg.method})"
        )
    if cfg.train.separate_test_update and not cfg.traits.plays_both_roles:
        raise UserError(
            f"config key 'train.separate_test_update' splits the update of a policy that plays both roles; "
            f"method {cfg.method} has no such policy: set it to false"
        )
    if cfg.model.mode == "dual-lora" and cfg.model.test_model not in (None, cfg.model.code_model):
        raise UserError(
            "config key 'model.test_model' must equal model.code_model (or be null) in "
            "mode dual-lora, where both adapters share one base model"
        )
    if cfg.traits.plays_both_roles and cfg.model.mode == "dual-lora":
        raise UserError(
            f"config key 'model.mode' cannot be dual-lora with method {cfg.method}, which trains "
            "a single policy; use full or lora"
        )
    if cfg.placement.fsdp and (cfg.placement.backend != "ray" or cfg.placement.learner_ranks < 2):
        raise UserError(
            "config key 'placement.fsdp' shards a policy over its data-parallel ranks: it needs "
            "placement.backend ray and placement.learner_ranks of 2 or more"
        )
    if cfg.placement.span_nodes and cfg.placement.backend != "ray":
        raise UserError(
            "config key 'placement.span_nodes' lets a policy's Ray actors span nodes: it needs "
            "placement.backend ray (placement.backend local runs every policy in this process)"
        )
    if cfg.placement.fsdp and cfg.model.mode != "full":
        raise UserError(
            f"config key 'placement.fsdp' shards full fine-tuning (model.mode full, not {cfg.model.mode}); "
            "a LoRA learner's trained weights are small enough to replicate"
        )
    if not cfg.sft.roles:
        raise UserError("config key 'sft.roles' must name at least one role (code, test)")
    if len(set(cfg.sft.roles)) != len(cfg.sft.roles):
        raise UserError(f"config key 'sft.roles' names a role twice: {cfg.sft.roles}")
    if cfg.policy.mini_batches > cfg.train.batch_size:
        raise UserError(
            f"config key 'policy.mini_batches' ({cfg.policy.mini_batches}) cannot exceed "
            f"train.batch_size ({cfg.train.batch_size})"
        )


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


PRESETS_DIR = Path(__file__).resolve().parent / "configs"  # the presets shipped with the package


def preset_names() -> list[str]:
    """The presets `--config` takes by name (codea1/configs/NAME.yaml), sorted."""
    return sorted(p.name[: -len(".yaml")] for p in PRESETS_DIR.glob("*.yaml"))


def preset_help(what: str = "YAML config") -> str:
    """The `--config` help of a command: a file, or a preset by name (all of them listed)."""
    return f"{what}: a file, or a preset by name ({', '.join(preset_names())})"


def config_file(spec: str | Path) -> Path:
    """The YAML file a `--config` value names: a file that exists, as given (it wins over a preset of the
    same name), else the preset of that name in codea1/configs/; neither is a UserError listing the
    presets."""
    path = Path(spec)
    if path.is_file():
        return path
    if str(spec) in preset_names():
        return PRESETS_DIR / f"{spec}.yaml"
    raise UserError(
        f"{spec}: no such config file or preset; the presets are {', '.join(preset_names())} "
        f"(or give the path of a YAML file)"
    )


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
    """YAML file or preset name (or the defaults) + dotted overrides -> a validated Config."""
    path = config_file(path) if path is not None else None
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


def load_section(name: str, path: str | Path | None = None, overrides: list[str] | None = None) -> Any:
    """One section of a config file (a preset, by name or path, or a run's config.yaml; without a file,
    the defaults) with dotted overrides of that section, e.g. load_section("game", run / "config.yaml",
    ["game.alpha=0.25"]): how `codea1 score` and `codea1 eval` read the same keys as a training run."""
    tp = _hints(Config)[name]
    base = getattr(Config(), name)
    path = config_file(path) if path is not None else None
    data = read_yaml(path).get(name) if path is not None else None
    if path is not None:
        try:
            _build(tp, data, name, base)
        except UserError as exc:
            raise UserError(f"{path}: {exc}") from None
    if not overrides:
        return _build(tp, data, name, base)
    bad = [o for o in overrides if not o.startswith(f"{name}.")]
    if bad:
        raise UserError(f"override '{bad[0]}' must set a key of section '{name}' (e.g. {name}.KEY=VALUE)")
    merged = apply_overrides({name: copy.deepcopy(data) if isinstance(data, dict) else {}}, list(overrides))
    try:
        return _build(tp, merged[name], name, base)
    except UserError as exc:
        raise UserError(f"command-line override: {exc}") from None


def describe_keys(section: Any = None, prefix: str = "") -> list[tuple[str, str, Any, str]]:
    """(dotted key, type, default, help) for every knob, in declaration order; for `--list-keys`."""
    section = Config() if section is None else section
    rows = []
    hints = _hints(type(section))
    for f in dataclasses.fields(section):
        if f.metadata.get("derived"):
            continue
        key = f"{prefix}.{f.name}" if prefix else f.name
        value = getattr(section, f.name)
        if isinstance(value, Section):
            rows.extend(describe_keys(value, key))
            continue
        tp = hints[f.name]
        type_name = tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")
        help_text = f.metadata.get("help", "")
        if f.metadata.get("choices"):
            help_text += f" [{'|'.join(f.metadata['choices'])}]"
        rows.append((key, type_name, None if f.metadata.get("follows") else value, help_text))
    return rows
