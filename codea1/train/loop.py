"""The training run of Code-A1 and its two baselines (docs/algorithm.md section 2): data order, resume,
checkpoints and logging around the step of the method (codea1.train.methods: a1, golden, selfplay).

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

import copy
import dataclasses
import json
import os
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import Config, torch_threads
from codea1.data import check_problems, load_problems
from codea1.data.check import CheckResult
from codea1.errors import UserError, storage_failure
from codea1.game.mistake_book import MistakeBook
from codea1.sandbox import LocalExecutor
from codea1.sandbox.api import Executor
from codea1.train import health
from codea1.train.checkpoint import (
    ONE_STEP_OFF_DIR,
    TrainerState,
    debug_kill,
    latest_checkpoint,
    load_rng,
    prune,
    read_state,
    remove_stale,
    save_checkpoint,
)
from codea1.train.layout import describe_layout, gpu_count, placement_note
from codea1.train.methods import METHODS, StepEnv, derive_seed, draw_round
from codea1.train.metrics import MetricsLogger, read_metrics, truncate_metrics
from codea1.train.report import write_report
from codea1.train.run_dir import RunDir

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

    from codea1.problem import Problem
    from codea1.rl.api import PolicyHandle
    from codea1.train.one_step_off import OneStepOff

# ----------------------------------------------------------------------------------------------------
# small pure helpers


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


def with_schedule_length(cfg: Config, n_problems: int) -> Config:
    """``cfg`` with the policies' learning-rate schedule spanning the steps the run will take:
    train.max_steps capped by the data epochs available. The schedule follows the config's budget, not a
    `--max-steps` stop point (a run stopped early and resumed keeps one schedule), and never decays over
    steps the data cannot fill."""
    steps = planned_steps(cfg, n_problems, None)
    if steps == cfg.policy.total_steps:
        return cfg
    out = copy.copy(cfg)  # total_steps is derived from train.max_steps on construction: set it after
    out.policy = dataclasses.replace(cfg.policy, total_steps=steps)
    return out


# ----------------------------------------------------------------------------------------------------
# set-up: problems, policies, sandbox


CPU_TOKENS_PER_STEP = 200_000  # generated tokens per step above which a CPU run is GPU-sized


def step_tokens(cfg: Config) -> int:
    """The most tokens one training step may generate: B*M code responses and, for the game, B*M*N test
    responses, each up to its max_new_tokens."""
    codes = cfg.train.batch_size * cfg.game.M
    tokens = codes * cfg.generation.code.max_new_tokens
    if cfg.traits.writes_tests:
        tokens += codes * cfg.game.N * cfg.generation.test.max_new_tokens
    return tokens


def sizing_note(cfg: Config, has_gpu: bool) -> str | None:
    """One sentence when a config's steps are sized for GPUs and the run has none, else None."""
    tokens = step_tokens(cfg)
    if has_gpu or tokens <= CPU_TOKENS_PER_STEP:
        return None
    return (
        f"this config is sized for GPUs: a step may generate up to {tokens:,} tokens (B={cfg.train.batch_size}, "
        f"M={cfg.game.M}, N={cfg.game.N}, up to {cfg.generation.code.max_new_tokens}/"
        f"{cfg.generation.test.max_new_tokens} new tokens per code/test response), and no GPU is visible: "
        f"on a CPU a step can take hours; codea1/configs/smollm2-cpu.yaml is sized for a laptop"
    )


def on_problem_file(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """A config dict changed to train on exactly the problems of `path` (already selected and checked:
    no limit, difficulty filter or GT check again)."""
    data["data"].update(train=str(Path(path).resolve()), limit=None, difficulty=None, check_gt=False)
    return data


def load_training_problems(
    cfg: Config, executor: Executor | None = None, console: Console | None = None
) -> list[Problem]:
    """The training problems: data.train filtered by difficulty and limit, then (data.require_golden_tests)
    only those with golden tests, then (data.check_gt) only those whose GT passes them. The filters are
    the same for every method, so runs of two methods with one seed and data read the same questions in
    the same order."""

    try:
        problems = load_problems(cfg.data.train, difficulty=cfg.data.difficulty, limit=cfg.data.limit)
    except UserError:
        raise
    except (OSError, ValueError) as exc:
        raise UserError(f"data.train: cannot read dataset {cfg.data.train!r} ({exc})") from None
    _refuse_untrainable(problems, cfg.data.train)
    if METHODS[cfg.method].needs_golden_tests and not cfg.data.require_golden_tests:
        raise UserError(f"method {cfg.method} is rewarded by golden tests: set data.require_golden_tests=true")
    if cfg.data.require_golden_tests:  # a stdin/stdout problem's golden tests are its io_tests
        problems = [p for p in problems if p.golden_tests or p.io_tests]
    if cfg.data.check_gt and problems:
        results = _check_gt(problems, executor, cfg.game.test_timeout * 5)
        broken = [r for r in results if not r.ok]
        if broken and console is not None:
            shown = ", ".join(f"{r.id} ({r.reason})" for r in broken[:3])
            console.print(
                f"[yellow]data.train: dropping {len(broken)} of {len(problems)} problem(s) whose GT "
                f"fails its own golden tests: {shown}{' ...' if len(broken) > 3 else ''}[/yellow]"
            )
        ok = {r.id for r in results if r.ok}
        problems = [p for p in problems if p.id in ok]
    if not problems:
        raise UserError(
            f"data.train: no usable problems in {cfg.data.train!r} (every GT failed its golden "
            f"tests, or none has golden tests and data.require_golden_tests is true); fix the "
            f"dataset or choose another"
        )
    return problems


def _check_gt(problems: list[Problem], executor: Executor | None, timeout: float) -> list[CheckResult]:
    """data.check_gt's verdict on each problem's GT against its own tests (codea1.data.check: golden asserts,
    a stdin/stdout problem's io_tests through the stdio evaluator), as `codea1 data check` gives it."""
    return check_problems(problems, executor, timeout=timeout)


def _refuse_untrainable(problems: list[Problem], where: str) -> None:
    """A UserError for problems without GT: the game needs GT to decide which tests are valid (such
    problems, LiveCodeBench's say, are evaluated by `codea1 eval code`)."""
    no_gt = [p.id for p in problems if not p.gt_solution.strip()]
    if no_gt:
        raise UserError(
            f"data.train: {len(no_gt)} problem(s) of {where!r} have no gt_solution ({no_gt[0]!r} first); "
            "the game needs GT to judge tests: they can be evaluated, not trained on"
        )


def make_executor(cfg: Config, hide_paths: list[str] | None = None) -> Executor:
    """The sandbox executor of a run, configured from the executor section."""
    kwargs = {
        "workers": cfg.executor.workers,
        "memory_mb": cfg.executor.memory_mb,
        "define_timeout": cfg.executor.define_timeout,
        "hide_paths": hide_paths,
        "uid_base": cfg.executor.uid_base,
        "isolation": cfg.executor.isolation,
    }
    if cfg.executor.backend == "ray":
        from codea1.cluster.sandbox_pools import RayExecutor

        return RayExecutor(
            address=cfg.ray.address,
            actors_per_node=cfg.ray.sandbox_pools_per_node,
            max_in_flight=cfg.ray.sandbox_chunks_in_flight,
            **kwargs,
        )

    return LocalExecutor(**kwargs)


def method_policies(cfg: Config) -> tuple[Any, Any]:
    """(code_policy, test_policy) as the method uses them: golden has no test policy; selfplay plays
    both roles with one policy object. With `placement.backend: ray` each policy lives in a Ray actor
    (codea1.cluster.policies) and these are its handles."""
    method = METHODS[cfg.method]
    if cfg.placement.backend == "ray":
        from codea1.cluster.policies import build_ray_policies

        return method.roles(*build_ray_policies(cfg, test=method.separate_test_policy))
    from codea1.rl.build import build_policies

    return method.roles(*build_policies(cfg, test=method.separate_test_policy))


class KeptPolicies:
    """A `policy_factory` that builds the policies once and keeps them: a run resumed in the same process
    (training to the next evaluation point) continues with the same objects, and the caller evaluates what
    the run trained once `train` returns (`.pair`)."""

    def __init__(self, build: Callable[[Config], tuple[Any, Any]] = method_policies) -> None:
        self.build = build
        self.pair: tuple[Any, Any] | None = None

    def __call__(self, cfg: Config) -> tuple[Any, Any]:
        if self.pair is None:
            self.pair = self.build(cfg)
        return self.pair


# ----------------------------------------------------------------------------------------------------
# the run


class Trainer:
    """Runs (or resumes) one training run in a run directory."""

    def __init__(
        self,
        cfg: Config,
        run: RunDir,
        *,
        max_steps: int | None = None,
        policy_factory: Callable[[Config], tuple[Any, Any]] | None = None,
        console: Console | None = None,
        progress: bool | None = None,
        executor: Executor | None = None,
        new_run: bool = False,
        stop: Callable[[list[dict[str, Any]]], bool] | None = None,
    ) -> None:
        self.cfg = cfg
        self.stop = stop  # called with the run's metrics rows after each step: True ends the run there
        self.new_run = new_run
        self.executor = executor
        self.run = run
        self.max_steps = max_steps
        self.policy_factory = policy_factory or method_policies
        self.method = METHODS[cfg.method]
        self.console = console
        self.show_progress = cfg.train.progress if progress is None else progress
        self.health_stop: list[str] = []  # the sentences run health stopped the run on (health.mode=stop)
        self.one_step_off: OneStepOff | None = None  # train.one_step_off: the rollout drawn one update behind

    # -- the whole run -------------------------------------------------------------------------------

    def train(self) -> dict[str, Any]:
        import numpy as np
        import torch
        from rich.console import Console
        from transformers.utils import logging as hf_logging

        cfg = self.cfg
        console = self.console or Console(stderr=True)
        note = sizing_note(cfg, torch.cuda.is_available())
        if note:
            console.print(f"[yellow]note: {note}[/yellow]", soft_wrap=True)
        gpus = gpu_count()
        if gpus:  # where each policy learns and samples, and what stays idle (codea1.train.layout)
            for line in describe_layout(cfg, gpus):
                console.print(f"layout: {line}", soft_wrap=True, highlight=False)
        note = placement_note(cfg, gpus)
        if note:
            console.print(f"[yellow]note: {note}[/yellow]", soft_wrap=True)
        console.print(
            f"loading the training problems ({cfg.data.train}) and the model(s) ({cfg.model.code_model}) ...",
            soft_wrap=True,
            highlight=False,
        )
        torch.set_num_threads(torch_threads(cfg))
        hf_logging.disable_progress_bar()  # checkpoints would print a progress bar per save
        random.seed(cfg.seed)
        np.random.seed(cfg.seed % (2**32))
        torch.manual_seed(cfg.seed)

        if self.executor is not None:
            return self._train_with(self.executor, console)
        # the sandbox must never read the run directory (Mistake Book, checkpoints, rollouts)
        with make_executor(cfg, hide_paths=[str(self.run.root.resolve())]) as executor:
            return self._train_with(executor, console)

    def _train_with(self, executor: Executor, console: Console | None) -> dict[str, Any]:

        cfg = self.cfg
        problems = load_training_problems(cfg, executor, console)
        total = planned_steps(cfg, len(problems), self.max_steps)
        code_policy, test_policy = self.method.roles(*self.policy_factory(with_schedule_length(cfg, len(problems))))
        if self.new_run:
            RunDir.create(self.run.root, cfg)
            if self.max_steps is not None:
                self.run.write_state(max_steps=self.max_steps)
        book = MistakeBook(self.run.mistake_book_path)
        state = self._restore(code_policy, test_policy, book, console)
        if not self.new_run:
            for key, old, new in self.run.record_changes(cfg, state.step):
                console.print(f"resumed with {key} {old!r} -> {new!r} (recorded in {self.run.state_path.name})")
        logger = MetricsLogger(
            self.run.metrics_path,
            tensorboard_dir=self.run.tensorboard_dir if cfg.train.tensorboard else None,
            wandb_project=cfg.train.wandb_project if cfg.train.wandb else None,
            wandb_config=cfg.to_dict(),
            run_name=self.run.root.name,
        )
        env = StepEnv(cfg, code_policy, test_policy, book, executor, phase=lambda name: None, problems=problems)
        if cfg.train.one_step_off:
            env.one_step_off = self.one_step_off = one_step_off_rollout(env, state, problems, total)
            ckpt = latest_checkpoint(self.run.checkpoints_dir)
            if ckpt is not None and state.step > 0:
                self.one_step_off.load(ckpt / ONE_STEP_OFF_DIR)
        try:
            last = self._loop(state, total, problems, env, logger, console)
        finally:
            if env.one_step_off is not None:
                env.one_step_off.wait()  # a rollout in flight past the last step ends with the run
            logger.close()
            book.close()
        return {"steps": last, "run_dir": str(self.run.root), "health_stop": self.health_stop}

    def _restore(
        self, code_policy: PolicyHandle, test_policy: PolicyHandle, book: MistakeBook, console: Console | None
    ) -> TrainerState:
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
        if state.step > 0 and book.last_step != state.step:
            raise UserError(
                f"{book.path} holds the Mistake Book up to step {book.last_step}, but the checkpoint "
                f"is at step {state.step}; restore the run's own mistake_book.sqlite to resume"
            )
        truncate_metrics(self.run.metrics_path, state.step)
        if self.run.rollouts_dir.is_dir():
            for path in self.run.rollouts_dir.glob("step_*.jsonl"):
                try:
                    if int(path.stem.split("_", 1)[1]) > state.step:
                        path.unlink()
                except ValueError:
                    continue
        return state

    def _loop(
        self,
        state: TrainerState,
        total: int,
        problems: list,
        env: StepEnv,
        logger: MetricsLogger,
        console: Console | None,
    ) -> int:
        cfg = self.cfg
        if state.step >= total:
            console.print(f"nothing to do: the run is at step {state.step} of {total}")
            return state.step
        progress = self._progress_bar(console)
        rows = read_metrics(self.run.metrics_path)  # the run's rows so far (truncated to the checkpoint)
        with progress:
            task = progress.add_task("training", total=total, completed=state.step)

            for step in range(state.step + 1, total + 1):
                idx = batch_indices(cfg.seed, len(problems), state.cursor, cfg.train.batch_size)
                batch = [problems[i] for i in idx]
                env.phase = lambda name, s=step: progress.update(task, description=f"step {s}/{total} {name}")
                t0 = time.perf_counter()
                out = self.method.step(env, step, batch)
                state.step = step
                state.cursor += len(batch)
                if cfg.train.log_rollouts:
                    self._write_rollouts(step, out.rollouts)
                debug_kill("rollouts", step)
                _add_step_metrics(out.metrics, time.perf_counter() - t0, (state.cursor - 1) // len(problems), batch)
                rows.append(out.metrics)
                unhealthy = health.check(rows, cfg.health)
                if unhealthy:
                    out.metrics["health_warnings"] = unhealthy
                logger.log(out.metrics)
                debug_kill("metrics", step)
                health_stop = bool(unhealthy) and cfg.health.mode == "stop"
                stop_now = health_stop or (self.stop is not None and bool(self.stop(rows)))
                if step % cfg.train.checkpoint_every == 0 or step == total or stop_now:
                    env.phase("checkpoint")
                    self._checkpoint(state, env.code_policy, env.test_policy)
                    debug_kill("after_checkpoint", step)
                    prune(self.run.checkpoints_dir, cfg.train.keep_checkpoints)
                    self._report(progress.console)
                progress.update(task, completed=step)
                progress.console.print(summary_line(out.metrics, total), soft_wrap=True, highlight=False)
                for sentence in unhealthy:
                    progress.console.print(f"[yellow]health: {sentence}[/]", soft_wrap=True, highlight=False)
                if health_stop:
                    self.health_stop = unhealthy
                    progress.console.print(f"stopping at step {step} (health.mode=stop), checkpointed")
                    break
                if stop_now:
                    progress.console.print(f"stopping at step {step}: the run's budget is spent")
                    break
        return state.step

    def _progress_bar(self, console: Console | None) -> Progress:
        """The training bar (rich), shown unless the trainer was built without progress."""
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not self.show_progress,
            transient=False,
        )

    def _report(self, console: Console | None) -> None:
        """report.html and plots/, rewritten at each checkpoint (a report that fails never stops training)."""

        try:
            write_report(self.run.root)
        except Exception as exc:  # noqa: BLE001 - the report is a view of the run, not part of it
            why = storage_failure(exc, self.run.root) or f"{type(exc).__name__}: {exc}"
            console.print(f"report not written ({why}); `codea1 report {self.run.root}` writes it later")

    def _checkpoint(self, state: TrainerState, code_policy: PolicyHandle, test_policy: PolicyHandle) -> Path:
        savers = {}
        if self.one_step_off is not None:  # first: it waits for the rollout in flight, before any RNG is saved
            savers[ONE_STEP_OFF_DIR] = self.one_step_off.save
        savers["code_policy"] = code_policy.save
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


def summary_line(m: dict[str, Any], total: int) -> str:
    """The one-line summary printed after each step."""
    parts = [f"step {m['step']}/{total}", f"R_C {m.get('code_reward', 0.0):.3f}"]
    if "test_reward" in m:
        parts += [
            f"R_T {m['test_reward']:.3f}",
            f"valid {m.get('valid_ratio', 0.0):.2f}",
            f"adv {m.get('adv', 0.0):.2f}",
            (
                f"book {m.get('mistake_book_size', 0)} (+{m.get('mistake_book_added', 0)}"
                f"/-{m.get('mistake_book_removed', 0)}, replayed {int(m.get('mistake_book_replayed', 0))}"
                f", hist_pass {m.get('hist_pass', 0.0):.2f})"
            ),
        ]
    else:
        parts.append(f"golden pass {m.get('golden_pass_rate', 0.0):.3f}")
    parts.append(
        f"{m.get('time_step', 0.0):.1f}s (gen {m.get('time_gen_code', 0.0):.1f}+"
        f"{m.get('time_gen_tests', 0.0):.1f}, exec {m.get('time_execute', 0.0):.1f}, "
        f"learn {m.get('time_learn', 0.0):.1f})"
    )
    return " | ".join(parts)


def train(
    cfg: Config,
    run_dir: str | Path,
    *,
    resume: bool = False,
    max_steps: int | None = None,
    policy_factory: Callable[[Config], tuple[Any, Any]] | None = None,
    console: Console | None = None,
    progress: bool | None = None,
    executor: Executor | None = None,
    stop: Callable[[list[dict[str, Any]]], bool] | None = None,
) -> dict[str, Any]:
    """Starts a new run in run_dir (or resumes it); returns {"steps", "run_dir", "health_stop"} (the
    sentences run health stopped the run on with health.mode=stop, else []). `stop`, called with the
    metrics rows after each step, ends the run early (with a checkpoint) when it returns True. A resume
    may change health.* (and placement.*) keys; each change is kept in run.json (RunDir.record_changes).

    A new run writes its config.yaml only once the problems and models have loaded, and a new run that
    fails before its first step is done (a missing model, a bad dataset, a logger extra not installed)
    takes back everything it wrote, so the same command can simply be run again."""
    root = Path(run_dir)
    if resume:
        run = RunDir.open(root)
        run.check_config(cfg)
        if max_steps is None:
            max_steps = run.read_state().get("max_steps")  # the target the run was started (or resumed) with
        else:
            _refuse_target_below_step(run, max_steps)
            if run.state_path.is_file():
                run.write_state(max_steps=max_steps)
        return Trainer(
            cfg,
            run,
            max_steps=max_steps,
            policy_factory=policy_factory,
            console=console,
            progress=progress,
            executor=executor,
            stop=stop,
        ).train()
    RunDir.check_new(root)
    created = not root.exists()
    before = set() if created else {p.name for p in root.iterdir()}
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create run directory {root}: {exc.strerror or exc}") from None
    try:
        return Trainer(
            cfg,
            RunDir(root),
            max_steps=max_steps,
            policy_factory=policy_factory,
            console=console,
            progress=progress,
            executor=executor,
            new_run=True,
            stop=stop,
        ).train()
    except BaseException:
        if not _has_progress(root):
            _undo_start(root, created, before)
        raise


def _refuse_target_below_step(run: RunDir, max_steps: int) -> None:
    """A UserError for a resume whose target of steps lies below the step the run's checkpoint is at."""
    ckpt = latest_checkpoint(run.checkpoints_dir)
    step = read_state(ckpt).step if ckpt is not None else 0
    if max_steps < step:
        raise UserError(
            f"--max-steps {max_steps} is below step {step}, where {run.root} stands: a resume goes on to a "
            f"later step (give --max-steps above {step}, or leave it out for the run's own target)"
        )


RUN_FILES = (
    "config.yaml",
    "run.json",
    "metrics.jsonl",
    "mistake_book.sqlite",
    "mistake_book.sqlite-wal",
    "mistake_book.sqlite-shm",
    "report.html",
)
RUN_FOLDERS = ("rollouts", "checkpoints", "tensorboard", "plots")


def _has_progress(root: Path) -> bool:
    """Whether a run directory holds a completed step (a metrics row or a checkpoint)."""

    metrics = root / "metrics.jsonl"
    return (metrics.is_file() and metrics.stat().st_size > 0) or latest_checkpoint(root / "checkpoints") is not None


def _undo_start(root: Path, created: bool, before: set[str]) -> None:
    """Removes what a failed start wrote: the whole directory if this run made it, else only the run's
    files and folders that were not there before."""
    if created:
        shutil.rmtree(root, ignore_errors=True)
        return
    for name in RUN_FILES:
        if name not in before:
            (root / name).unlink(missing_ok=True)
    for name in RUN_FOLDERS:
        if name not in before:
            shutil.rmtree(root / name, ignore_errors=True)


def one_step_off_rollout(env: StepEnv, state: TrainerState, problems: list, total: int) -> OneStepOff:
    """train.one_step_off: copies of the policies to sample from, drawing each step's round as the step
    itself would (methods.draw_round) with the copies, and the data order's next batch."""
    from codea1.train.one_step_off import OneStepOff, sampling_copies

    cfg = env.cfg
    copies = sampling_copies([env.code_policy, env.test_policy], cfg.rollout.sampler_device)
    sampling = dataclasses.replace(
        env,
        code_policy=copies[id(env.code_policy)],
        test_policy=None if env.test_policy is None else copies[id(env.test_policy)],
        phase=lambda name: None,
        one_step_off=None,
    )

    def draw(step: int, batch: list) -> tuple[list, list | None, dict[str, float]]:
        seconds: dict[str, float] = {}
        codes, suites = draw_round(sampling, step, batch, env.test_policy is not None, seconds)
        return codes, suites, seconds

    def next_batch(step: int) -> list | None:
        """The batch after `step`'s, asked while step `step` runs (state.cursor still at its batch)."""
        if step >= total:
            return None
        size = cfg.train.batch_size
        return [problems[i] for i in batch_indices(cfg.seed, len(problems), state.cursor + size, size)]

    return OneStepOff(list(copies.values()), draw, next_batch)


def _add_step_metrics(metrics: dict, seconds: float, epoch: int, batch: list) -> None:
    """The loop's own entries in a step's metrics row: the step's time and the share spent outside the
    models, its epoch, and its questions in the data order."""
    metrics["time_step"] = seconds
    model_time = sum(metrics.get(f"time_{p}", 0.0) for p in ("gen_code", "gen_tests", "learn"))
    metrics["time_outside_model"] = max(seconds - model_time, 0.0)
    metrics["outside_model_frac"] = metrics["time_outside_model"] / max(seconds, 1e-9)
    metrics["epoch"] = epoch
    metrics["question_ids"] = [p.id for p in batch]
