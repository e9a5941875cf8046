"""The training loop of Code-A1 and its two baselines (REFERENCE.md section 2).

One step, method a1:
  B questions -> M codes each (code_policy) -> N white-box test suites per code (test_policy)
  -> oracle validation + execution in the sandbox -> rewards -> Mistake Book update (one transaction,
  tagged with the step) -> TopVar -> GRPO: code_policy on groups of M, test_policy on the N suites of
  each selected candidate.
golden: code_policy alone, rewarded by the share of the dataset's golden tests passed.
selfplay: one policy (the same object) writes the code and black-box tests (tests see only the
  question); it is trained on both its code and its test samples.

Exact resume: the data order is a seeded permutation per epoch read through a cursor, every sampling
call is seeded from (seed, step, phase), and a checkpoint holds both policies (their own save/load:
weights, optimiser, scheduler, RNG), the cursor, the RNG states and the step. On resume the Mistake
Book is rolled back to the checkpoint's step, metrics and rollouts of later steps are dropped, and
the steps after the checkpoint are replayed identically.

`CODEA1_DEBUG_KILL_AT=<phase>:<step>` makes the process SIGKILL itself at that point (for the resume
tests); phases: gen_code, gen_tests, execute, book, learn_code, learn_test, rollouts, metrics,
checkpoint (inside the checkpoint write), after_checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codea1.config import Config
from codea1.errors import UserError
from codea1.train.checkpoint import (
    TrainerState,
    debug_kill,
    latest_checkpoint,
    load_rng,
    prune,
    read_state,
    remove_stale,
    save_checkpoint,
)
from codea1.train.metrics import MetricsLogger, truncate_metrics
from codea1.train.run_dir import RunDir

PHASES = ("gen_code", "gen_tests", "execute", "learn")


# ----------------------------------------------------------------------------------------------------
# small pure helpers


def derive_seed(seed: int, step: int, tag: str) -> int:
    """A 63-bit seed from (run seed, step, phase tag): the same step samples the same way on a replay."""
    digest = hashlib.sha256(f"{seed}/{step}/{tag}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def epoch_permutation(seed: int, epoch: int, n: int) -> list[int]:
    """The order of the n training problems in one epoch (seeded, independent of global RNG state)."""
    order = list(range(n))
    random.Random(derive_seed(seed, epoch, "data-order")).shuffle(order)
    return order


def batch_indices(seed: int, n: int, cursor: int, size: int) -> list[int]:
    """Problem indices of the `size` questions starting at `cursor` in the endless seeded order."""
    out = []
    perm_cache: dict[int, list[int]] = {}
    for i in range(cursor, cursor + size):
        epoch, pos = divmod(i, n)
        if epoch not in perm_cache:
            perm_cache[epoch] = epoch_permutation(seed, epoch, n)
        out.append(perm_cache[epoch][pos])
    return out


def planned_steps(cfg: Config, n_problems: int, max_steps: int | None) -> int:
    """Steps of this run: max_steps (CLI, else config), capped by the data epochs available."""
    available = max(1, (cfg.train.data_epochs * n_problems) // cfg.train.batch_size)
    wanted = max_steps if max_steps is not None else cfg.train.max_steps
    return min(wanted, available)


def mean(values: Sequence[float]) -> float:
    values = [float(v) for v in values]
    return sum(values) / len(values) if values else 0.0


# ----------------------------------------------------------------------------------------------------
# set-up: problems, policies, game config


def load_training_problems(cfg: Config, executor: Any = None, console: Any = None) -> list[Any]:
    """The training problems: data.train filtered by difficulty and limit, then (data.check_gt) only
    those whose GT passes its own golden tests; golden runs also need golden tests."""
    from codea1.data import check_problems, load_problems

    try:
        problems = load_problems(cfg.data.train, difficulty=cfg.data.difficulty, limit=cfg.data.limit)
    except UserError:
        raise
    except (OSError, ValueError) as exc:
        raise UserError(f"data.train: cannot read dataset {cfg.data.train!r} ({exc})") from None
    if cfg.method == "golden":
        problems = [p for p in problems if p.golden_tests]
    if cfg.data.check_gt and problems:
        results = check_problems(problems, executor, timeout=cfg.game.test_timeout * 5)
        broken = [r for r in results if not r.ok]
        if broken and console is not None:
            shown = ", ".join(f"{r.id} ({r.reason})" for r in broken[:3])
            console.print(f"[yellow]data.train: dropping {len(broken)} of {len(problems)} problem(s) whose GT "
                          f"fails its own golden tests: {shown}{' ...' if len(broken) > 3 else ''}[/yellow]")
        ok = {r.id for r in results if r.ok}
        problems = [p for p in problems if p.id in ok]
    if not problems:
        raise UserError(f"data.train: no usable problems in {cfg.data.train!r} (every GT failed its golden "
                        f"tests, or none has golden tests for method {cfg.method}); fix the dataset or "
                        f"choose another")
    return problems


def make_executor(cfg: Config, hide_paths: list[str] | None = None) -> Any:
    """The sandbox executor of a run, configured from the executor section."""
    from codea1.sandbox import Executor

    return Executor(workers=cfg.executor.workers, memory_mb=cfg.executor.memory_mb,
                    define_timeout=cfg.executor.define_timeout, hide_paths=hide_paths,
                    uid_base=cfg.executor.uid_base)


def build_policies(cfg: Config) -> tuple[Any, Any]:
    """(code_policy, test_policy) for the method: golden has no test policy; selfplay uses one object."""
    from codea1.rl.policy import build_policies as rl_build_policies

    code_policy, test_policy = rl_build_policies(cfg, test=cfg.method == "a1")
    if cfg.method == "golden":
        test_policy = None
    elif cfg.method == "selfplay":
        test_policy = code_policy
    return code_policy, test_policy


# ----------------------------------------------------------------------------------------------------
# the step


@dataclass
class StepOutput:
    """What one step produced: the metrics row and the rollout lines."""

    metrics: dict[str, Any]
    rollouts: list[dict[str, Any]] = field(default_factory=list)


class Trainer:
    """Runs (or resumes) one training run in a run directory."""

    def __init__(self, cfg: Config, run: RunDir, *, max_steps: int | None = None,
                 policy_factory: Callable[[Config], tuple[Any, Any]] | None = None,
                 console: Any = None, progress: bool | None = None, executor: Any = None,
                 new_run: bool = False) -> None:
        self.cfg = cfg
        self.new_run = new_run
        self.executor = executor
        self.run = run
        self.max_steps = max_steps
        self.policy_factory = policy_factory or build_policies
        self.console = console
        self.show_progress = cfg.train.progress if progress is None else progress

    # -- the whole run -------------------------------------------------------------------------------

    def train(self) -> dict[str, Any]:
        import numpy as np
        import torch
        from rich.console import Console

        cfg = self.cfg
        console = self.console or Console(stderr=True)
        torch.set_num_threads(cfg.train.torch_threads)
        try:  # checkpoints would print a progress bar per save
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:
            pass
        random.seed(cfg.seed)
        np.random.seed(cfg.seed % (2**32))
        torch.manual_seed(cfg.seed)

        if self.executor is not None:
            return self._train_with(self.executor, console)
        # the sandbox must never read the run directory (Mistake Book, checkpoints, rollouts)
        with make_executor(cfg, hide_paths=[str(self.run.root.resolve())]) as executor:
            return self._train_with(executor, console)

    def _train_with(self, executor: Any, console: Any) -> dict[str, Any]:
        from codea1.game.mistake_book import MistakeBook

        cfg = self.cfg
        problems = load_training_problems(cfg, executor, console)
        total = planned_steps(cfg, len(problems), self.max_steps)
        code_policy, test_policy = self.policy_factory(cfg)
        if cfg.method == "golden":
            test_policy = None
        elif cfg.method == "selfplay":
            test_policy = code_policy  # one policy writes the code and the tests
        if self.new_run:
            RunDir.create(self.run.root, cfg)
        book = MistakeBook(self.run.mistake_book_path)
        state = self._restore(code_policy, test_policy, book, console)
        logger = MetricsLogger(
            self.run.metrics_path,
            tensorboard_dir=self.run.tensorboard_dir if cfg.train.tensorboard else None,
            wandb_project=cfg.train.wandb_project if cfg.train.wandb else None,
            wandb_config=cfg.to_dict(), run_name=self.run.root.name,
        )
        game = cfg.game
        try:
            last = self._loop(state, total, problems, code_policy, test_policy, book, executor, game,
                              logger, console)
        finally:
            logger.close()
            close = getattr(book, "close", None)
            if close:
                close()
        return {"steps": last, "run_dir": str(self.run.root)}

    def _restore(self, code_policy: Any, test_policy: Any, book: Any, console: Any) -> TrainerState:
        """Loads the newest complete checkpoint (if any) and puts the book, metrics, rollouts in line."""
        removed = remove_stale(self.run.checkpoints_dir)
        if removed:
            console.print(f"removed incomplete checkpoint folder(s): {', '.join(sorted(removed))}")
        ckpt = latest_checkpoint(self.run.checkpoints_dir)
        if ckpt is None:
            state = TrainerState(seed=self.cfg.seed)
        else:
            state = read_state(ckpt)
            code_policy.load(ckpt / "code_policy")
            if test_policy is not None and test_policy is not code_policy:
                test_policy.load(ckpt / "test_policy")
            load_rng(ckpt)
            console.print(f"resuming from {ckpt.name} (step {state.step})")
        book.rollback_to(state.step)
        if self.cfg.method != "golden" and state.step > 0 and book.last_step != state.step:
            raise UserError(f"{book.path} holds the Mistake Book up to step {book.last_step}, but the checkpoint "
                            f"is at step {state.step}; restore the run's own mistake_book.sqlite to resume")
        truncate_metrics(self.run.metrics_path, state.step)
        if self.run.rollouts_dir.is_dir():
            for path in self.run.rollouts_dir.glob("step_*.jsonl"):
                try:
                    if int(path.stem.split("_", 1)[1]) > state.step:
                        path.unlink()
                except ValueError:
                    continue
        return state

    def _loop(self, state: TrainerState, total: int, problems: list, code_policy: Any, test_policy: Any,
              book: Any, executor: Any, game: Any, logger: MetricsLogger, console: Any) -> int:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        cfg = self.cfg
        if state.step >= total:
            console.print(f"nothing to do: the run is at step {state.step} of {total}")
            return state.step
        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            console=console, disable=not self.show_progress, transient=False)
        with progress:
            task = progress.add_task("training", total=total, completed=state.step)

            def phase(step: int, name: str) -> None:
                progress.update(task, description=f"step {step}/{total} {name}")

            for step in range(state.step + 1, total + 1):
                idx = batch_indices(cfg.seed, len(problems), state.cursor, cfg.train.batch_size)
                batch = [problems[i] for i in idx]
                t0 = time.perf_counter()
                out = self.step(step, batch, code_policy, test_policy, book, executor, game,
                                lambda name, s=step: phase(s, name))
                state.step = step
                state.cursor += len(batch)
                state.epoch, state.position = divmod(state.cursor, len(problems))
                state.mistake_book_step = step
                if cfg.train.log_rollouts:
                    self._write_rollouts(step, out.rollouts)
                debug_kill("rollouts", step)
                out.metrics["time_step"] = time.perf_counter() - t0
                model_time = sum(out.metrics.get(f"time_{p}", 0.0) for p in ("gen_code", "gen_tests", "learn"))
                out.metrics["time_outside_model"] = max(out.metrics["time_step"] - model_time, 0.0)
                out.metrics["outside_model_frac"] = out.metrics["time_outside_model"] / max(
                    out.metrics["time_step"], 1e-9)
                out.metrics["epoch"] = (state.cursor - 1) // len(problems)
                logger.log(out.metrics)
                debug_kill("metrics", step)
                if step % cfg.train.checkpoint_every == 0 or step == total:
                    phase(step, "checkpoint")
                    self._checkpoint(state, code_policy, test_policy)
                    debug_kill("after_checkpoint", step)
                    prune(self.run.checkpoints_dir, cfg.train.keep_checkpoints)
                progress.update(task, completed=step)
                progress.console.print(summary_line(out.metrics, total), soft_wrap=True, highlight=False)
        return state.step

    def _checkpoint(self, state: TrainerState, code_policy: Any, test_policy: Any) -> Path:
        savers = {"code_policy": code_policy.save}
        if test_policy is not None and test_policy is not code_policy:
            savers["test_policy"] = test_policy.save
        return save_checkpoint(self.run.checkpoints_dir, state, savers)

    def _write_rollouts(self, step: int, lines: list[dict[str, Any]]) -> None:
        self.run.rollouts_dir.mkdir(parents=True, exist_ok=True)
        path = self.run.rollout_path(step)
        tmp = path.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        os.replace(tmp, path)

    # -- one step ------------------------------------------------------------------------------------

    def step(self, step: int, batch: list, code_policy: Any, test_policy: Any, book: Any, executor: Any,
             game: Any, phase: Callable[[str], None]) -> StepOutput:
        if self.cfg.method == "golden":
            return self._golden_step(step, batch, code_policy, executor, game, phase)
        return self._game_step(step, batch, code_policy, test_policy, book, executor, game, phase)

    def _generate(self, policy: Any, prompts: list, sampling: Any, n: int, seed: int) -> list[list[Any]]:
        import torch

        from codea1.rl.policy import GenerationConfig

        torch.manual_seed(seed)
        return policy.generate(prompts, GenerationConfig.of(sampling, n=n, seed=seed))

    def _gen_codes(self, step: int, batch: list, code_policy: Any) -> tuple[list[list[Any]], float]:
        from codea1.game.prompts import code_messages

        cfg = self.cfg
        t = time.perf_counter()
        samples = self._generate(code_policy, [code_messages(p) for p in batch], cfg.generation.code,
                                 cfg.game.M, derive_seed(cfg.seed, step, "gen_code"))
        return samples, time.perf_counter() - t

    def _golden_step(self, step: int, batch: list, code_policy: Any, executor: Any, game: Any,
                     phase: Callable[[str], None]) -> StepOutput:
        from codea1.game.play import golden_step
        from codea1.rl.grpo import group_advantages

        cfg = self.cfg
        phase("generate code")
        samples, t_code = self._gen_codes(step, batch, code_policy)
        debug_kill("gen_code", step)
        phase("execute")
        t = time.perf_counter()
        rewards = golden_step(batch, [[s.text for s in row] for row in samples], executor, game)
        t_exec = time.perf_counter() - t
        debug_kill("execute", step)
        debug_kill("book", step)
        phase("learn")
        t = time.perf_counter()
        advs = _flat(group_advantages(rewards, std_norm=cfg.policy.adv_std_norm))
        code_metrics = code_policy.train_step(_flat(samples), advs)
        debug_kill("learn_code", step)
        debug_kill("learn_test", step)
        t_learn = time.perf_counter() - t
        flat_rewards = _flat(rewards)
        metrics = {
            "step": step,
            "mistake_book_size": 0,
            "code_reward": mean(flat_rewards),
            "golden_pass_rate": mean(flat_rewards),
            "code_all_pass_frac": mean([r >= 1.0 for r in flat_rewards]),
            **_prefixed("code_", code_metrics),
            **_length_metrics("code", samples, t_code),
            "time_gen_code": t_code, "time_gen_tests": 0.0, "time_execute": t_exec, "time_learn": t_learn,
        }
        rollouts = [
            {"question_id": p.id, "codes": [{"response": s.text, "tests": []} for s in row],
             "scores": {"golden_rewards": r}}
            for p, row, r in zip(batch, samples, rewards)
        ]
        return StepOutput(metrics, rollouts)

    def _game_step(self, step: int, batch: list, code_policy: Any, test_policy: Any, book: Any,
                   executor: Any, game: Any, phase: Callable[[str], None]) -> StepOutput:
        from codea1.game.mistake_book import merge_updates
        from codea1.game.parsing import extract_code
        from codea1.game.play import golden_step, play_step
        from codea1.game.prompts import test_messages
        from codea1.rl.grpo import group_advantages

        cfg = self.cfg
        M, N = cfg.game.M, cfg.game.N
        selfplay = cfg.method == "selfplay"

        phase("generate code")
        code_samples, t_code = self._gen_codes(step, batch, code_policy)
        debug_kill("gen_code", step)

        phase("generate tests")
        if game.blackbox_tests:  # the suites see only the question; M*N per question, N per code
            prompts = [test_messages(p, "", game) for p in batch]
            n_per_prompt = M * N
        else:
            prompts = [test_messages(p, extract_code(s.text), game) for p, row in zip(batch, code_samples)
                       for s in row]
            n_per_prompt = N
        t = time.perf_counter()
        raw_tests = self._generate(test_policy, prompts, cfg.generation.test, n_per_prompt,
                                   derive_seed(cfg.seed, step, "gen_tests"))
        t_tests = time.perf_counter() - t
        # test_samples[b][m] -> the N suites written for candidate m of question b
        if game.blackbox_tests:
            test_samples = [[raw_tests[b][m * N:(m + 1) * N] for m in range(M)] for b in range(len(batch))]
        else:
            test_samples = [[raw_tests[b * M + m] for m in range(M)] for b in range(len(batch))]
        debug_kill("gen_tests", step)

        phase("execute")
        t = time.perf_counter()
        histories = [book.retrieve(p.id, h=game.history_size) for p in batch]
        code_texts = [[s.text for s in row] for row in code_samples]
        results = play_step(batch, code_texts, [[[s.text for s in suites] for suites in row]
                                                for row in test_samples], executor, histories, game)
        golden = golden_step(batch, code_texts, executor, game) if cfg.train.golden_pass_rate else None
        debug_kill("execute", step)
        book_stats = book.apply_step(step, merge_updates((r.question_id, r.updates) for r in results))
        t_exec = time.perf_counter() - t
        debug_kill("book", step)

        phase("learn")
        t = time.perf_counter()
        code_rewards = [[c.code_reward for c in r.codes] for r in results]
        code_advs = _flat(group_advantages(code_rewards, std_norm=cfg.policy.adv_std_norm))
        test_batch, test_advs, test_rewards_sel = [], [], []
        for b, r in enumerate(results):
            for m, c in enumerate(r.codes):
                if not c.topvar_selected:
                    continue
                rewards = [s.test_reward for s in c.suites]
                test_rewards_sel.extend(rewards)
                test_advs.extend(_flat(group_advantages([rewards], std_norm=cfg.policy.adv_std_norm)))
                test_batch.extend(test_samples[b][m])
        if selfplay:
            both = code_policy.train_step(_flat(code_samples) + test_batch, code_advs + test_advs)
            code_metrics, test_metrics = both, {}
            debug_kill("learn_code", step)
            debug_kill("learn_test", step)
        else:
            code_metrics = code_policy.train_step(_flat(code_samples), code_advs)
            debug_kill("learn_code", step)
            test_metrics = test_policy.train_step(test_batch, test_advs) if test_batch else {}
            debug_kill("learn_test", step)
        t_learn = time.perf_counter() - t

        metrics = step_metrics(step, results, book_stats, code_metrics, test_metrics, test_rewards_sel)
        if golden is not None:
            metrics["golden_pass_rate"] = mean(_flat(golden))
        metrics.update(_length_metrics("code", code_samples, t_code))
        metrics.update(_length_metrics("test", [[s for suites in row for s in suites] for row in test_samples],
                                       t_tests))
        metrics.update({"time_gen_code": t_code, "time_gen_tests": t_tests, "time_execute": t_exec,
                        "time_learn": t_learn})
        per_question = book_stats.get("questions", {})
        rollouts = [rollout_line(p, code_samples[b], test_samples[b], results[b], per_question.get(p.id))
                    for b, p in enumerate(batch)]
        return StepOutput(metrics, rollouts)


# ----------------------------------------------------------------------------------------------------
# metrics and rollout records


def _flat(rows: Any) -> list:
    if hasattr(rows, "tolist"):
        rows = rows.tolist()
    return [x for row in rows for x in row]


def _prefixed(prefix: str, metrics: dict[str, Any] | None) -> dict[str, float]:
    return {f"{prefix}{k}": float(v) for k, v in (metrics or {}).items() if isinstance(v, (int, float))}


def _length_metrics(name: str, samples: list[list[Any]], seconds: float) -> dict[str, float]:
    lengths = [len(s.response_ids) for row in samples for s in row]
    return {f"{name}_response_len": mean(lengths),
            f"{name}_tokens_per_s": sum(lengths) / seconds if seconds > 0 else 0.0}


def step_metrics(step: int, results: list, book_stats: dict, code_metrics: dict, test_metrics: dict,
                 test_rewards_selected: list[float]) -> dict[str, Any]:
    """The per-step metrics row of a game step (a1 or selfplay)."""
    codes = [c for r in results for c in r.codes]
    suites = [s for c in codes for s in c.suites]
    valid_codes = [c for c in codes if c.valid]
    return {
        "step": step,
        "mistake_book_size": int(book_stats["size"]),
        "mistake_book_added": int(book_stats.get("added", 0)),
        "mistake_book_removed": int(book_stats.get("removed", 0)),
        "code_reward": mean([c.code_reward for c in codes]),
        "test_reward": mean([s.test_reward for s in suites]),
        "test_reward_selected": mean(test_rewards_selected),
        "code_valid_frac": len(valid_codes) / len(codes) if codes else 0.0,
        "hist_pass": mean([c.hist_pass for c in valid_codes]),
        "gen_pass": mean([s.gen_pass for c in valid_codes for s in c.suites]),
        "gen_fail": mean([s.gen_fail for c in valid_codes for s in c.suites]),
        "valid_ratio": mean([s.valid_ratio for s in suites]),
        "adv": mean([s.adv for s in suites]),
        "valid_tests": mean([s.valid_tests for s in suites]),
        "invalid_tests": mean([s.invalid_tests for s in suites]),
        **_prefixed("code_", code_metrics),
        **_prefixed("test_", test_metrics),
    }


def rollout_line(problem: Any, code_samples: list, test_samples: list[list], result: Any,
                 book_summary: dict | None = None) -> dict[str, Any]:
    """One `codea1 score` input line (question_id, codes[response, tests]) plus the step's scores in
    the `codea1 score` output form (codes[...], mistake_book{added, removed, size})."""
    scores = result.to_dict()
    scores.pop("question_id", None)
    if book_summary is not None:
        scores["mistake_book"] = book_summary
    if result.gt_error:
        scores["gt_error"] = result.gt_error
    return {
        "question_id": problem.id,
        "codes": [{"response": s.text, "tests": [t.text for t in suites]}
                  for s, suites in zip(code_samples, test_samples)],
        "scores": scores,
    }


def summary_line(m: dict[str, Any], total: int) -> str:
    """The one-line summary printed after each step."""
    parts = [f"step {m['step']}/{total}", f"R_C {m.get('code_reward', 0.0):.3f}"]
    if "test_reward" in m:
        parts += [f"R_T {m['test_reward']:.3f}", f"valid {m.get('valid_ratio', 0.0):.2f}",
                  f"adv {m.get('adv', 0.0):.2f}",
                  (f"book {m.get('mistake_book_size', 0)} (+{m.get('mistake_book_added', 0)}"
                   f"/-{m.get('mistake_book_removed', 0)})")]
    else:
        parts.append(f"golden pass {m.get('golden_pass_rate', 0.0):.3f}")
    parts.append(f"{m.get('time_step', 0.0):.1f}s (gen {m.get('time_gen_code', 0.0):.1f}+"
                 f"{m.get('time_gen_tests', 0.0):.1f}, exec {m.get('time_execute', 0.0):.1f}, "
                 f"learn {m.get('time_learn', 0.0):.1f})")
    return " | ".join(parts)


def train(cfg: Config, run_dir: str | Path, *, resume: bool = False, max_steps: int | None = None,
          policy_factory: Callable[[Config], tuple[Any, Any]] | None = None, console: Any = None,
          progress: bool | None = None, executor: Any = None) -> dict[str, Any]:
    """Starts a new run in run_dir (or resumes it); returns {"steps", "run_dir"}.

    A new run writes its config.yaml only once the problems and models have loaded, so a run that
    fails to start (missing model, bad dataset) leaves no run directory behind."""
    root = Path(run_dir)
    if resume:
        run = RunDir.open(root)
        return Trainer(cfg, run, max_steps=max_steps, policy_factory=policy_factory, console=console,
                       progress=progress, executor=executor).train()
    RunDir.check_new(root)
    created = not root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create run directory {root}: {exc.strerror or exc}") from None
    try:
        return Trainer(cfg, RunDir(root), max_steps=max_steps, policy_factory=policy_factory, console=console,
                       progress=progress, executor=executor, new_run=True).train()
    except BaseException:
        if created and not (root / "config.yaml").exists():
            shutil.rmtree(root, ignore_errors=True)
        raise
