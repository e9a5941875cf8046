"""Predicted peak memory of the learner's step (`Policy.train_step`) at a real model's shape, on a CPU,
without the GPU and without the weights.

How: the model is built from its config under `FakeTensorMode` (tensors with shapes, dtypes and storages
but no data; Qwen2.5-Coder-1.5B's config is written in benchmarks/gpu_sync_check.py, nothing is
downloaded), and codea1's own `Policy` runs on it as the trainer runs it: fp32 master weights, AdamW, the
autocast dtype, gradient checkpointing, the KL reference (`make_reference`: one frozen bf16 copy shared
by two policies that start from the same model), `micro_batch_tokens`, `mini_batches`, the shared-prompt
path, `logprob_chunk`, the scoring pass of rows that come without the learner's log-probs, and one or
two policies on the device (trained one after the other, as a training step does). A TorchDispatchMode
counts the bytes of every live tensor storage (a storage counts from the op that made it until its last
reference goes) and keeps the peak of that sum from the built model on. That sum is what CUDA's caching
allocator reports as "allocated" (up to its 512-byte rounding).

What the fake run changes, and why: a value read back from a tensor (`.item()`, `allclose`, `.tolist()`)
has no data, so it is a stand-in (1.0; True; zeros), which only picks branches (the loss is finite, so
AdamW steps; the chunked path is exact, as it is for Qwen2; the padding mask is all ones, as it is for
rows of one length, which is all this script builds: transformers, which counts a fake tensor as traced
and so would build a mask for every pass, is told it is not). A deep copy of a fake tensor is its clone,
and the reference's cast to bf16 is done tensor by tensor (`Module.to` cannot swap fake tensors; the
same copies exist at the same time). For a CUDA target AdamW takes its CUDA default, the foreach
implementation (one state-sized temporary in its step). The fake tensors are CPU tensors (a CPU build
cannot run autograd on fake CUDA ones), so CPU autocast runs: for this model the log-prob path's float32
copies are explicit casts, the same on both devices, and the attention keeps the same tensors for its
backward (its output and log-sum-exp) on both. Each peak is also placed: in the forward/backward passes,
the scoring pass or the AdamW step. Left out: the CUDA context, cuBLAS workspaces and NCCL buffers, the
caching allocator's rounding and fragmentation ("reserved" above "allocated": 2.7 and 3.0 GiB more on
the H200), kernels' internal scratch memory, padded batches' attention masks (a [rows, 1, L, L] bool
tensor, 16 MiB at 16 x 1024), FSDP, LoRA, and anything else on the device (an inference engine).

Checked two ways (the script exits non-zero if a prediction is more than 5% off its measurement):
1. On CPU against the real allocator at small shapes (tiny-random and SmolLM2-135M, loaded with
   `codea1.models.load_model_and_tokenizer`; rows of up to 128 + 128 tokens): the same steps run for real, and
   the CPU allocator's own running total of live bytes (torch.profiler's allocation events) and the same
   live-tensor counter on the real tensors give the true peak; predicted against both. Three settings:
   gpu_check.py's step; the preset's (checkpointing, KL, chunked, 2 mini-batches, rows scored first;
   two policies sharing one reference for tiny-random, one for SmolLM2, whose two hold 4.3 GiB for real);
   fp32 with KL on the shared-prompt path.
2. Against the two peaks measured on one H200 (docs/multi-node.md; `benchmarks/gpu_check.py`'s learner
   step: Qwen2.5-Coder-1.5B's shape, bf16 autocast over fp32 weights, no gradient checkpointing, no KL
   term, 16 rows of 512 + 512 tokens each with its own prompt, two steps, the whole-logits path, which
   is `logprob_chunk: 0` now): 93.7 GiB allocated with the 16 rows packed in one pass of 16,384 tokens,
   33.4 GiB with one row per pass (the shared-prompt path before lone rows were packed together, which
   the script restores for that run).
Then it reports the preset's own policy block (configs/qwen2.5-coder-1.5b.yaml: bf16, gradient
checkpointing, kl_coef 0.001 with a bf16 reference, micro_batch_tokens 16384, mini_batches 2, rows
without the learner's log-probs, as the loop gives them under bf16) at passes that fill the 16,384-token
budget, with the whole logits (`logprob_chunk: 0`, before) and chunked (the default, 1024, after), one
policy per GPU and both policies on one GPU (trained one after the other, sharing the reference), over
two steps (from step 2 both AdamW states exist), against issue 52's goals (32 and 48 GiB).

Results (2-core CPU, torch 2.13; the H200 ran torch 2.11), `python benchmarks/learner_memory.py`, 12 min:
  CPU checks, predicted / real allocator: tiny-random 0.994 to 1.000 (7 to 18 MiB), SmolLM2-135M 1.000
  (2.5 to 3.5 GiB) in all three settings; the live-tensor counter on real tensors equals the allocator
  H200, packed in one pass: predicted 92.0 GiB, measured 93.7 (0.982), the same step chunked 74.0 (the whole logits 18.1 GiB of it); one row per pass: 32.1 GiB,
  measured 33.4 (0.962); both peaks in the forward/backward passes, both predictions below
  The preset, GiB; a pass of 16 rows of 512 + 512 (32 rows a step) / of 4 rows of 256 + 3840 (8 a step):
    one policy per GPU        logprob_chunk 0: 46.8 / 65.0   chunked: 31.6 / 31.6 (goal 32)
    both policies on one GPU  logprob_chunk 0: 64.0 / 82.3   chunked: 48.9 / 48.9 (goal 48)
  Before, the peak is in the passes (the logits); chunked, it is AdamW's foreach step (fp32 weights,
  gradients, both moments and its state-sized temporary, beside the bf16 reference and, on one GPU, the
  other policy's weights and moments), whatever the rows: the passes themselves peak at 28.3 and 45.5 GiB.

Usage:  python benchmarks/learner_memory.py [--check tiny-random,smollm2-135m] [--skip-calibration]
        [--skip-preset] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import os
import random
import sys
import time
import types
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

GIB = 2**30
TOLERANCE = 0.05  # predicted / measured must lie within 1 +- this
H200 = {"packed": 93.7, "per-row": 33.4}  # GiB allocated, docs/multi-node.md (gpu_check.py, --qwen-group 1)
TWO_POLICIES = ("tiny-random",)  # models whose CPU check also runs two policies for real (small enough)
GOALS = {"one policy per GPU": 32.0, "both policies on one GPU": 48.0}  # GiB, issue 52


# ------------------------------------------------------------------------------------------ the counter


def _live_bytes_mode(stand_ins: bool) -> Any:
    """A TorchDispatchMode (built lazily: torch is imported inside) that sums the bytes of live storages."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    aten = torch.ops.aten
    answers = {aten._local_scalar_dense.default: 1.0, aten.allclose.default: True, aten.equal.default: True}
    answers[aten.is_nonzero.default] = True

    class LiveBytes(TorchDispatchMode):
        """Bytes of every live tensor storage: each op's outputs are counted once per storage until the
        storage is freed (a weak reference's callback); ``peak`` is the largest sum seen. With
        ``stand_ins`` (fake tensors) the ops that read data back answer a stand-in instead."""

        def __init__(self) -> None:
            super().__init__()
            self.live = 0
            self.peak = 0
            self.phase = "building the policies"
            self.peak_phase = self.phase
            self.phase_peaks: dict[str, int] = {}
            self._refs: dict[int, tuple[weakref.ref, int]] = {}

        def track(self, t: Any) -> None:
            if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
                return
            storage = t.untyped_storage()
            key = id(storage)
            known = self._refs.get(key)
            if known is not None and known[0]() is storage:
                return
            size = storage.nbytes()

            def gone(_ref: weakref.ref, key: int = key) -> None:
                entry = self._refs.pop(key, None)
                if entry is not None:
                    self.live -= entry[1]

            self._refs[key] = (weakref.ref(storage, gone), size)
            self.live += size
            if self.live > self.phase_peaks.get(self.phase, 0):
                self.phase_peaks[self.phase] = self.live
            if self.live > self.peak:
                self.peak, self.peak_phase = self.live, self.phase

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if stand_ins and func in answers:
                return answers[func]
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten(out)[0]:
                self.track(t)
            return out

    return LiveBytes()


def _fake_tolist(self: Any) -> Any:
    """``Tensor.tolist`` of a fake tensor: zeros of its shape (the scoring pass's Python lists)."""

    def zeros(shape: Sequence[int]) -> Any:
        return 0.0 if not shape else [zeros(shape[1:]) for _ in range(shape[0])]

    return zeros(list(self.shape))


@contextlib.contextmanager
def fake_world() -> Iterator[Any]:
    """`FakeTensorMode`, with the few changes a fake run needs (the module docstring), undone on exit."""
    import torch
    import transformers.masking_utils as masks
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    import codea1.rl.policy as policy_module

    def deepcopy(self: Any, memo: dict) -> Any:
        if id(self) not in memo:
            with self.fake_mode:
                c = self.detach().clone()
            memo[id(self)] = torch.nn.Parameter(c, self.requires_grad) if isinstance(self, torch.nn.Parameter) else c
        return memo[id(self)]

    def make_reference(model: torch.nn.Module, dtype: str = "float32") -> torch.nn.Module:
        # policy.make_reference, with its `ref.to(dtype)` done tensor by tensor (a fake tensor cannot be swapped)
        ref = copy.deepcopy(model)
        if dtype in ("bfloat16", "float16"):
            with torch.no_grad():
                for t in [*ref.parameters(), *ref.buffers()]:
                    if t.is_floating_point():
                        t.data = t.data.to(getattr(torch, dtype))
        ref.eval()
        for p in ref.parameters():
            p.requires_grad_(False)
        return ref

    real_tolist = torch.Tensor.tolist
    saved = (FakeTensor.__dict__.get("__deepcopy__"), policy_module.make_reference, masks.is_tracing)
    FakeTensor.__deepcopy__ = deepcopy
    masks.is_tracing = lambda tensor=None: False  # (it counts a fake tensor as traced: a mask in every pass)
    policy_module.make_reference = make_reference
    torch.Tensor.tolist = lambda self: _fake_tolist(self) if isinstance(self, FakeTensor) else real_tolist(self)
    try:
        with FakeTensorMode() as mode:
            yield mode
    finally:
        torch.Tensor.tolist = real_tolist
        if saved[0] is None:
            del FakeTensor.__deepcopy__
        else:
            FakeTensor.__deepcopy__ = saved[0]
        policy_module.make_reference = saved[1]
        masks.is_tracing = saved[2]


@contextlib.contextmanager
def plan_before_lone_rows_were_packed(on: bool) -> Iterator[None]:
    """The learner's plan as it was for the H200's "one row per pass" figure: every prompt group a pass
    of its own (the lone rows were not yet packed together: `pack_lone_rows` returns the groups as they
    are)."""
    import codea1.rl.policy as policy_module

    saved = policy_module.pack_lone_rows
    if on:
        policy_module.pack_lone_rows = lambda groups, lengths, budget: [list(g) for g in groups]
    try:
        yield
    finally:
        policy_module.pack_lone_rows = saved


# ------------------------------------------------------------------------------------------- one run


@dataclass(frozen=True)
class Batch:
    """Each policy's samples of one training step: ``rows`` rows of ``prompt`` + ``response`` random
    tokens, ``group`` rows sharing each prompt; ``logprobs``: whether they carry the learner's log-probs
    (else train_step scores them first, as it does for the loop's rows under bf16)."""

    rows: int
    prompt: int
    response: int
    group: int = 1
    logprobs: bool = True

    def samples(self, vocab: int, seed: int) -> tuple[list, list[float]]:
        from codea1.inference.rollout import Sample

        rng = random.Random(seed)
        out = []
        for k in range(self.rows):
            if k % self.group == 0:
                prompt = [rng.randrange(1, vocab) for _ in range(self.prompt)]
            response = [rng.randrange(1, vocab) for _ in range(self.response)]
            out.append(Sample(prompt, response, "", [-1.0] * self.response if self.logprobs else [], finished=True))
        return out, [rng.choice((-1.0, 1.0)) * (0.1 + rng.random()) for _ in out]

    def describe(self) -> str:
        shared = f", {self.group} a prompt" if self.group > 1 else ""
        return f"{self.rows} rows of {self.prompt} + {self.response}{shared}"


def run_step(
    build: Callable[[], tuple[Any, Any]],
    policy_cfg: Any,
    batch: Batch,
    *,
    policies: int = 1,
    steps: int = 2,
    fake: bool,
    cuda_optimizer: bool = False,
    per_row_plan: bool = False,
) -> dict[str, float]:
    """Builds ``policies`` policies (the second shares the first's reference, as `load_policies` does when
    both start from one model) on models from ``build()``, and runs ``steps`` training steps of each, one
    policy after the other; returns the peak of live tensor bytes from the built models on ("counter"),
    the bytes at that start ("start") and, for a real run, the CPU allocator's own peak ("allocator")."""
    import torch

    from codea1.rl.policy import Policy

    gc.collect()  # an earlier run's cycles are not freed in this one
    world = fake_world() if fake else contextlib.nullcontext()
    with world, plan_before_lone_rows_were_packed(per_row_plan):
        torch.manual_seed(0)
        built = [build() for _ in range(policies)]
        mode = _live_bytes_mode(stand_ins=fake)
        with mode:
            for model, _ in built:
                for t in [*model.parameters(), *model.buffers()]:
                    mode.track(t)
            start = mode.live
            profiler = None if fake else _allocator_profile()
            with profiler or contextlib.nullcontext():
                made: list[Policy] = []
                for model, tok in built:
                    reference = made[0].reference if made else None
                    made.append(Policy(model, tok, policy_cfg, reference=reference))
                    if cuda_optimizer:  # AdamW as a policy on CUDA takes it: fused unless policy.adamw_fused
                        # is false, then torch's CUDA default, foreach (torch.optim._default_to_fused_or_foreach)
                        fused = policy_cfg.adamw_fused is not False
                        for group in made[-1].optimizer.param_groups:
                            group["fused"], group["foreach"] = fused, not fused
                for policy in made:
                    _label_phases(policy, mode)
                mode.phase = "forward/backward passes"
                vocab = built[0][0].config.vocab_size
                for step in range(steps):
                    for k, policy in enumerate(made):
                        samples, advantages = batch.samples(vocab, seed=100 * step + k)
                        policy.train_step(samples, advantages)
        out: dict[str, Any] = {"start": start / GIB, "counter": mode.peak / GIB, "phase": mode.peak_phase}
        out["passes"] = mode.phase_peaks.get("forward/backward passes", 0) / GIB
        if profiler is not None:
            out["allocator"] = (start + _allocator_peak(profiler)) / GIB
        return out


def _label_phases(policy: Any, mode: Any) -> None:
    """Names the part of train_step each peak falls in: the AdamW step (the optimiser's step hooks), the
    scoring of rows without the learner's log-probs (`Policy.logprobs`), else the passes."""

    def adamw(*_: Any) -> None:
        mode.phase = "AdamW step"

    def passes(*_: Any) -> None:
        mode.phase = "forward/backward passes"

    policy.optimizer.register_step_pre_hook(adamw)
    policy.optimizer.register_step_post_hook(passes)
    score = policy.logprobs

    def scoring(*args: Any, **kwargs: Any) -> Any:
        mode.phase = "scoring pass"
        try:
            return score(*args, **kwargs)
        finally:
            mode.phase = "forward/backward passes"

    policy.logprobs = scoring


def _allocator_profile() -> Any:
    from torch.profiler import ProfilerActivity, profile

    return profile(activities=[ProfilerActivity.CPU], profile_memory=True)


def _allocator_peak(prof: Any) -> int:
    """The largest rise of the CPU allocator's running total of live bytes during the profile, above its
    total when profiling began (each allocation event carries that total; the tensors alive before are
    added by the caller, and none of them is freed in the step)."""
    from torch._C._profiler import _EventType

    events = []
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        event = stack.pop()
        stack.extend(event.children)
        if event.typed[0] == _EventType.Allocation and str(event.typed[1].device) == "cpu":
            events.append((event.start_time_ns, event.typed[1].total_allocated, event.typed[1].alloc_size))
    if not events:
        return 0
    events.sort()
    base = events[0][1] - events[0][2]  # the total before the first event (a total kept from an earlier profile)
    return max(total for _, total, _ in events) - base


# ------------------------------------------------------------------------------------------- sections


def _ratio_ok(predicted: float, measured: float) -> bool:
    return abs(predicted / measured - 1.0) <= TOLERANCE


def cpu_checks(models: Sequence[str], tokens: int, failures: list[str]) -> None:
    """Predicted against real on CPU, at small shapes, for a few policy settings."""
    from transformers import AutoModelForCausalLM

    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import PolicyConfig

    half = max(2, tokens // 2)
    settings = [
        (
            "bf16, whole logits, packed (the H200 step)",
            PolicyConfig(kl_coef=0.0, lr=1e-6, warmup_steps=0, dtype="bfloat16", logprob_chunk=0),
            Batch(4, half, half),
            1,
        ),
        (
            "bf16, checkpointing, KL, chunked, 2 mini-batches, scoring pass, 2 policies (the preset)",
            PolicyConfig(
                kl_coef=0.001,
                lr=1e-6,
                warmup_steps=0,
                dtype="bfloat16",
                gradient_checkpointing=True,
                mini_batches=2,
                logprob_chunk=max(1, half // 2),
            ),
            Batch(8, half // 2, half, logprobs=False),
            2,  # (one for SmolLM2: two of its policies hold 4.3 GiB for real; see TWO_POLICIES)
        ),
        (
            "fp32, KL, shared prompt (groups of 4), chunked",
            PolicyConfig(kl_coef=0.001, lr=1e-6, warmup_steps=0, dtype="float32", logprob_chunk=max(1, half // 2)),
            Batch(8, half, half // 2, group=4),
            1,
        ),
    ]
    print(f"{'model':<14} {'setting':<86} {'predicted':>10} {'allocator':>10} {'counter':>10} {'ratio':>6}")
    for name in models:
        loaded: dict[str, Any] = {}

        def real(name: str = name, loaded: dict[str, Any] = loaded) -> tuple[Any, Any]:
            model, tok = load_model_and_tokenizer(name)
            loaded["config"] = model.config
            return model, tok

        def fake(loaded: dict[str, Any] = loaded) -> tuple[Any, Any]:
            config = copy.deepcopy(loaded["config"])
            model = AutoModelForCausalLM.from_config(config)
            tok = types.SimpleNamespace(pad_token_id=loaded["pad"], eos_token_id=loaded["eos"])
            return model, tok

        for label, cfg, batch, policies in settings:
            if name not in TWO_POLICIES and policies > 1:
                policies, label = 1, label.replace("2 policies", "1 policy")
            model, tok = real()
            loaded.update(pad=tok.pad_token_id, eos=tok.eos_token_id)
            del model, tok
            measured = run_step(real, cfg, batch, policies=policies, fake=False)
            predicted = run_step(fake, cfg, batch, policies=policies, fake=True)
            p, a, c = predicted["counter"], measured["allocator"], measured["counter"]
            ok = _ratio_ok(p, a) and _ratio_ok(p, c)
            print(
                f"{name:<14} {label:<86} {p * 1024:>8.1f}Mi {a * 1024:>8.1f}Mi {c * 1024:>8.1f}Mi {p / a:>6.3f}"
                f"{'' if ok else '  <- more than 5% off'}",
                flush=True,
            )
            if not ok:
                failures.append(f"CPU check {name}, {label}: predicted {p * 1024:.1f} MiB, real {a * 1024:.1f} MiB")


def qwen_builder(layers: int, vocab: int) -> Callable[[], tuple[Any, Any]]:
    def build() -> tuple[Any, Any]:
        from gpu_sync_check import qwen_shape
        from transformers import Qwen2ForCausalLM

        return Qwen2ForCausalLM(qwen_shape(layers, vocab)), types.SimpleNamespace(pad_token_id=0, eos_token_id=0)

    return build


def calibration(layers: int, vocab: int, rows: int, tokens: int, gate: bool, failures: list[str]) -> None:
    """gpu_check.py's learner step (PolicyConfig(kl_coef=0.0, lr=1e-6, warmup_steps=0, dtype="bfloat16"),
    the rest at their defaults; two steps), whole logits, against the two H200 peaks."""
    from codea1.rl.chunked import DEFAULT_CHUNK
    from codea1.rl.policy import PolicyConfig

    # as it ran there: the whole logits and torch's foreach AdamW (the defaults before logprob_chunk and
    # policy.adamw_fused)
    cfg = PolicyConfig(kl_coef=0.0, lr=1e-6, warmup_steps=0, dtype="bfloat16", logprob_chunk=0, adamw_fused=False)
    batch = Batch(rows, tokens // 2, tokens // 2)  # --qwen-group 1: each row its own prompt
    print(
        f"\nH200 calibration: gpu_check.py's learner step at Qwen2.5-Coder-1.5B's shape ({layers} layers, "
        f"vocabulary {vocab}), {batch.describe()}, bf16 autocast, no checkpointing, no KL, whole logits"
    )
    print(f"{'plan':<44} {'predicted':>10} {'measured':>9} {'ratio':>6}  peak in")
    for key, label in (("packed", "the rows packed in one pass"), ("per-row", "one row per pass (shared-prompt path)")):
        t0 = time.perf_counter()
        got = run_step(
            qwen_builder(layers, vocab), cfg, batch, fake=True, cuda_optimizer=True, per_row_plan=key == "per-row"
        )
        p, m = got["counter"], H200[key]
        ok = _ratio_ok(p, m)
        shown = f"{m:>7.1f}Gi {p / m:>6.3f}" if gate else f"{'-':>9} {'-':>6}"
        print(
            f"{label:<44} {p:>8.2f}Gi {shown}  {got['phase']}{'' if ok or not gate else '  <- more than 5% off'}"
            f" ({time.perf_counter() - t0:.0f}s)",
            flush=True,
        )
        if gate and not ok:
            failures.append(f"H200 {key}: predicted {p:.1f} GiB, measured {m:.1f} GiB")
        if key == "packed":  # the logits' part of that peak: the same step with the log-probs chunked
            chunked = run_step(
                qwen_builder(layers, vocab),
                replace(cfg, logprob_chunk=DEFAULT_CHUNK),
                batch,
                fake=True,
                cuda_optimizer=True,
            )["counter"]
            print(
                f"{'  the same, log-probs chunked (not measured)':<44} {chunked:>8.2f}Gi  the whole logits: {p - chunked:.1f} GiB"
            )


def preset(layers: int, vocab: int, batches: Sequence[Batch], chunk: int) -> None:
    """The preset's policy block at passes that fill its token budget, before and after chunking."""
    from codea1.config import load_config
    from codea1.rl.chunked import DEFAULT_CHUNK

    base = load_config("qwen2.5-coder-1.5b").policy
    print(
        f"\nThe preset (configs/qwen2.5-coder-1.5b.yaml policy block: {base.dtype}, gradient checkpointing "
        f"{base.gradient_checkpointing}, kl_coef {base.kl_coef}, micro_batch_tokens {base.micro_batch_tokens}, "
        f"mini_batches {base.mini_batches}; rows without the learner's log-probs, scored first), two steps, "
        f"Qwen2.5-Coder-1.5B's shape ({layers} layers, vocabulary {vocab}); peak GiB allocated over two steps (the "
        f"second has the AdamW states), and where it falls"
    )
    print(
        f"{'pass (x mini_batches a step)':<28} {'layout':<26} {'before: chunk 0, foreach':<30} "
        f"{'chunked, foreach AdamW':<30} {'after: chunked, fused':<30} {'goal':>5}"
    )
    for batch in batches:
        step_batch = replace(batch, rows=batch.rows * base.mini_batches, logprobs=False)
        for layout, policies in (("one policy per GPU", 1), ("both policies on one GPU", 2)):
            cells = []
            for c, fused in ((0, False), (chunk or DEFAULT_CHUNK, False), (chunk or DEFAULT_CHUNK, None)):
                cfg = replace(base, logprob_chunk=c, adamw_fused=fused)
                got = run_step(
                    qwen_builder(layers, vocab), cfg, step_batch, policies=policies, fake=True, cuda_optimizer=True
                )
                where = "passes" if got["phase"].endswith("passes") else f"{got['phase']}; passes {got['passes']:.1f}"
                cells.append(f"{got['counter']:5.1f} ({where})")
            print(
                f"{batch.describe():<28} {layout:<26} {cells[0]:<30} {cells[1]:<30} {cells[2]:<30} "
                f"{GOALS[layout]:>5.0f}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", default="tiny-random,smollm2-135m", help="models of the CPU check ('' for none)")
    ap.add_argument("--check-tokens", type=int, default=256, help="tokens a row (prompt + response) in the CPU check")
    ap.add_argument("--skip-calibration", action="store_true")
    ap.add_argument("--skip-preset", action="store_true")
    ap.add_argument("--chunk", type=int, default=0, help="logprob_chunk of the 'chunked' column (0: the default)")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="seconds: the CPU check on tiny-random, the other sections at a 1-layer, 4096-word shape (not gated)",
    )
    args = ap.parse_args()
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()

    failures: list[str] = []
    models = [m for m in ("tiny-random" if args.smoke else args.check).split(",") if m]
    layers, vocab = (1, 4096) if args.smoke else (28, 151936)
    t0 = time.perf_counter()
    print(f"torch {torch.__version__}; predicted: fake tensors on the CPU; tolerance {TOLERANCE:.0%}", flush=True)
    if models:
        print("\nCPU check: predicted (fake tensors) against the same steps run for real on the CPU")
        cpu_checks(models, 32 if args.smoke else args.check_tokens, failures)
    if not args.skip_calibration:
        rows, tokens = (2, 32) if args.smoke else (16, 1024)
        calibration(layers, vocab, rows, tokens, gate=not args.smoke, failures=failures)
    if not args.skip_preset:
        shapes = [Batch(2, 16, 16)] if args.smoke else [Batch(16, 512, 512), Batch(4, 256, 3840)]
        preset(layers, vocab, shapes, args.chunk)
    print(f"\n({time.perf_counter() - t0:.0f}s)")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)
    print("every prediction within 5% of its measurement")


if __name__ == "__main__":
    main()
