"""One-step-off rollout (`train.one_step_off`): step t+1's codes and tests are sampled while step t executes
its game and learns, from a copy of the weights taken before step t's update.

Step by step, for a run with steps 1..T:

1. step t takes its rollout: the one drawn in the background during step t-1, or, at the run's first step (or
   a resume without a saved one), one drawn now;
2. the sampling copy of each policy takes the learner's weights (after update t-1), and step t+1's rollout
   starts in a background thread from them (unless t is the last step);
3. step t plays its game on its rollout (execution, rewards, the Mistake Book, TopVar, in step order as in a
   synchronous run) and learns; update t changes the learner, never the copy the background samples from.

So update t trains on samples drawn by the weights after update t-2: exactly one update behind the
synchronous run (whose step t samples after update t-1), and on-policy at step 1. Each sample carries the
copy's own log-probs (`engine_logprobs`); the learner scores the rows it trains under its current weights,
logs the gap (mismatch_*) and, with policy.tis_cap, weights the loss by the capped ratio. The Mistake Book
and TopVar have no lag: the records of every step are applied in step order in the foreground.

A checkpoint after step t waits for step t+1's rollout and saves it with the run (`next_rollout.json`), so a
resume at t+1 trains on exactly the samples the uninterrupted run would have (the copy would have needed the
weights after update t-1, which the checkpoint does not keep). The two models share the machine's cores
(or GPU) unless `rollout.sampler_device` puts the copies elsewhere: the overlap pays where the copy samples
on a device of its own. With rollout.backend vllm the engine is the copy (EngineCopy): it samples from a
snapshot of the learner's weights taken where the copy is refreshed (step 2 above), in the engine's own
process where it has one.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from codea1.errors import UserError
from codea1.inference.rollout import GenerationConfig, Sample, TransformersRollout, engine_weights
from codea1.inference.vllm_backend import VLLMRollout
from codea1.train.checkpoint import ONE_STEP_OFF_DIR, ROLLOUT_IN_FLIGHT

if TYPE_CHECKING:
    from codea1.problem import Problem
    from codea1.rl.policy import Policy

__all__ = ["ONE_STEP_OFF_DIR", "EngineCopy", "OneStepOff", "Rollout", "SamplingCopy", "sampling_copies"]


@dataclass
class Rollout:
    """One step's samples as drawn: codes[b][m], and tests[b][m][n] where the method writes tests (None for
    golden); `weights_step`: the number of updates the sampling weights had seen; the background seconds."""

    step: int
    question_ids: list[str]
    codes: list[list[Sample]]
    tests: list[list[list[Sample]]] | None
    weights_step: int
    seconds: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rollout:
        def samples(rows: object) -> object:
            return [samples(r) for r in rows] if isinstance(rows, list) else Sample(**rows)

        tests = data["tests"]
        return cls(
            step=int(data["step"]),
            question_ids=list(data["question_ids"]),
            codes=samples(data["codes"]),
            tests=None if tests is None else samples(tests),
            weights_step=int(data["weights_step"]),
            seconds={k: float(v) for k, v in data["seconds"].items()},
        )


class SamplingCopy:
    """A frozen copy of one policy's model that samples while the learner updates its own: the policy's
    engine (loop or hf-generate) on the copy, which reports its log-probs as the engine's."""

    def __init__(self, policy: Policy, device: str | None = None) -> None:

        engine = getattr(policy.rollout, "engine", None)
        if not isinstance(policy.rollout, TransformersRollout):
            raise UserError(
                "train.one_step_off samples with a copy of the policy's own model: use rollout.backend loop"
            )
        self.policy = policy
        self.model = copy.deepcopy(policy.model)
        if device is not None:
            self.model.to(torch.device(device))
        self.model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        # not the learner's own forward: its log-probs go to engine_logprobs, and the learner scores the rows
        self.rollout = TransformersRollout(self.model, policy.tokenizer, engine=engine, reuse_logprobs=False)
        self.weights_step = int(policy.step)

    def refresh(self) -> None:
        """Takes the learner's current weights (between updates: nothing else writes them now)."""
        with torch.no_grad():
            theirs = dict(self.policy.model.named_parameters())
            for name, p in self.model.named_parameters():
                p.copy_(theirs[name].detach().to(p.device, p.dtype))
        self.weights_step = int(self.policy.step)

    def generate(
        self, prompts: Sequence, gen: GenerationConfig | None = None, prompt_index: Sequence[int] | None = None
    ) -> list[list[Sample]]:
        # through the policy, so that a policy wrapper sees the copy's samples as it sees its own
        return self.policy.generate(prompts, gen, prompt_index, backend=self.rollout)


class OneStepOff:
    """Draws each step's rollout one update behind, in a background thread (see the module's text).

    `draw(sampling_policies, step, batch) -> (codes, tests, seconds)` samples a step the way the method
    does; `next_batch(step)` is the batch of the step after `step`, or None after the last."""

    def __init__(
        self,
        copies: Sequence[SamplingCopy | EngineCopy],
        draw: Callable[[int, list[Problem]], tuple[list, list | None, dict[str, float]]],
        next_batch: Callable[[int], list[Problem] | None],
    ) -> None:
        self.copies = list(copies)
        self.draw = draw
        self.next_batch = next_batch
        self._thread: threading.Thread | None = None
        self._result: Rollout | None = None
        self._error: BaseException | None = None

    # -- the loop's side ---------------------------------------------------------------------------------

    def take(self, step: int, batch: list[Problem]) -> tuple[Rollout, float]:
        """Step `step`'s rollout and the seconds the step waited for it; then the next one is started."""
        t0 = time.perf_counter()
        ready = self.wait()
        if ready is not None and ready.step != step:
            raise RuntimeError(f"the rollout in flight is step {ready.step}'s, not step {step}'s")
        if ready is None:  # the first step, or a resume without a saved rollout: drawn now, on-policy
            for c in self.copies:
                c.refresh()
            ready = self._draw(step, batch)
        if [p.id for p in batch] != ready.question_ids:
            raise RuntimeError(f"step {step}'s rollout was drawn for other questions than the step's batch")
        waited = time.perf_counter() - t0
        for c in self.copies:
            c.refresh()  # the weights after update step-1: step+1's rollout is one update behind
        following = self.next_batch(step)
        if following is not None:
            self._start(step + 1, following)
        return ready, waited

    def wait(self) -> Rollout | None:
        """The rollout in flight once it is drawn (None where there is none)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        result, self._result = self._result, None
        return result

    def save(self, directory: Path) -> None:
        """Waits for the rollout in flight and writes it into a checkpoint folder (nothing if none)."""
        result = self.wait()
        if result is None:
            return
        (directory / ROLLOUT_IN_FLIGHT).write_text(json.dumps(result.to_json()))
        self._result = result  # still the next step's

    def load(self, directory: Path) -> None:
        """Puts a checkpoint's saved rollout in flight (a resume goes on as the run would have)."""
        path = directory / ROLLOUT_IN_FLIGHT
        if path.is_file():
            self._result = Rollout.from_json(json.loads(path.read_text()))

    # -- the background ----------------------------------------------------------------------------------

    def _draw(self, step: int, batch: list[Problem]) -> Rollout:
        weights_step = min(c.weights_step for c in self.copies)
        codes, tests, seconds = self.draw(step, batch)
        return Rollout(step, [p.id for p in batch], codes, tests, weights_step, seconds)

    def _start(self, step: int, batch: list[Problem]) -> None:
        def run() -> None:
            try:
                self._result = self._draw(step, batch)
            except BaseException as exc:  # noqa: BLE001 - raised again in the loop by wait()
                self._error = exc

        self._thread = threading.Thread(target=run, name=f"codea1-rollout-{step}", daemon=True)
        self._thread.start()


class EngineCopy:
    """The sampling side of a policy whose engine is vLLM's (rollout.backend vllm): the engine is already a
    copy of the weights, apart from the learner, so the copy is a snapshot of the learner's weights taken
    between updates (`refresh`), loaded into the engine before it samples for this policy. The engine never
    reads the learner while it learns (its own lazy sync is off here), so a policy whose engine it shares
    with the other role (the CPU presets: one model, one engine) still samples each role from its snapshot."""

    def __init__(self, policy: Policy) -> None:
        rollout = policy.rollout
        if getattr(rollout, "adapter", None) is not None:
            raise UserError("train.one_step_off with rollout.backend vllm takes full weights: use model.mode full")
        self.policy = policy
        self.view = copy.copy(rollout)
        self.view.policy = None  # no lazy sync from the learner: this copy says which weights the engine holds
        self.snapshot: dict[str, torch.Tensor] | None = None
        self.weights_step = int(policy.step)
        self.rollout = _SnapshotEngine(self)

    def refresh(self) -> None:
        """Takes the learner's current weights (between updates: nothing else writes them now), into host
        memory in the engine's dtype (pinned where CUDA is), never as a second copy on the learner's GPU:
        the engine reads them from there when it samples for this policy."""
        dtype = self.view.engine.dtype
        self.snapshot = {name: host_copy(t, dtype) for name, t in engine_weights(self.policy, dtype).items()}
        self.weights_step = int(self.policy.step)

    def generate(
        self, prompts: Sequence, gen: GenerationConfig | None = None, prompt_index: Sequence[int] | None = None
    ) -> list[list[Sample]]:
        return self.policy.generate(prompts, gen, prompt_index, backend=self.rollout)


class _SnapshotEngine:
    """The backend an EngineCopy hands its policy: the engine, holding the copy's snapshot."""

    def __init__(self, owner: EngineCopy) -> None:
        self.owner = owner

    def generate(self, prompts: Sequence, gen: GenerationConfig, prompt_index: Sequence[int] | None = None) -> list:
        owner = self.owner
        view, held = owner.view, (id(owner), owner.weights_step)
        if owner.snapshot is None:
            raise RuntimeError("an engine copy samples only after refresh() took the learner's weights")
        if view.engine.holder != held:
            view.load_weights(owner.snapshot)
            view.engine.holder = held
        return view.generate(prompts, gen, prompt_index)


def host_copy(tensor: torch.Tensor, dtype: str | None) -> torch.Tensor:
    """A copy of ``tensor`` in host memory (pinned where CUDA is, for a fast copy back), floating tensors
    cast to ``dtype`` where given."""
    t = tensor.detach()
    cast = getattr(torch, dtype) if dtype and t.is_floating_point() else t.dtype
    out = torch.empty(t.shape, dtype=cast, device="cpu", pin_memory=torch.cuda.is_available())
    out.copy_(t)
    return out


def sampling_copies(policies: Sequence[Policy | None], device: str | None) -> dict[int, SamplingCopy | EngineCopy]:
    """One copy per distinct policy (selfplay's one policy plays both roles), by id of the policy: a copy of
    the model on `device` for the loop and hf-generate engines, a snapshot for the vLLM engine."""
    out: dict[int, SamplingCopy | EngineCopy] = {}
    for policy in policies:
        if policy is not None and id(policy) not in out:
            vllm = isinstance(policy.rollout, VLLMRollout)
            out[id(policy)] = EngineCopy(policy) if vllm else SamplingCopy(policy, device)
    return out
