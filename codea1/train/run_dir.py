"""The run directory: one folder holds everything a training run writes.

    RUN_DIR/
      config.yaml            the resolved config (every key, after overrides)
      metrics.jsonl          one JSON line per step (always has `step` and `mistake_book_size`)
      rollouts/step_K.jsonl  the step's rollouts in the `codea1 score` input format, plus their scores
      checkpoints/step_K/    complete checkpoints (see checkpoint.py); `.tmp-*` folders are never used
      mistake_book.sqlite    the Mistake Book (SQLite, one transaction per step)
      tensorboard/           optional TensorBoard events
      report.html, plots/    written by `codea1 report RUN_DIR`
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from codea1.config import Config, load_config, save_config
from codea1.errors import UserError


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def metrics_path(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def rollouts_dir(self) -> Path:
        return self.root / "rollouts"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def mistake_book_path(self) -> Path:
        return self.root / "mistake_book.sqlite"

    @property
    def tensorboard_dir(self) -> Path:
        return self.root / "tensorboard"

    @property
    def report_path(self) -> Path:
        return self.root / "report.html"

    @property
    def plots_dir(self) -> Path:
        return self.root / "plots"

    def rollout_path(self, step: int) -> Path:
        return self.rollouts_dir / f"step_{step}.jsonl"

    @staticmethod
    def check_new(root: str | Path) -> None:
        """Refuses a directory that already holds a run (its config.yaml)."""
        root = Path(root)
        if (root / "config.yaml").exists():
            raise UserError(f"{root} already holds a run; continue it with "
                            f"`codea1 train --resume {root}` or choose another --run-dir")

    @classmethod
    def create(cls, root: str | Path, cfg: Config) -> RunDir:
        """Makes a new run directory and writes the resolved config; refuses to overwrite a run."""
        run = cls(Path(root))
        cls.check_new(run.root)
        try:
            run.root.mkdir(parents=True, exist_ok=True)
            run.rollouts_dir.mkdir(exist_ok=True)
            run.checkpoints_dir.mkdir(exist_ok=True)
            tmp = run.config_path.with_suffix(".yaml.tmp")
            save_config(cfg, tmp)
            os.replace(tmp, run.config_path)
        except OSError as exc:
            raise UserError(f"cannot create run directory {run.root}: {exc.strerror or exc}") from None
        return run

    @classmethod
    def open(cls, root: str | Path) -> RunDir:
        """An existing run directory (for --resume, report, mistakes show)."""
        run = cls(Path(root))
        if not run.config_path.is_file():
            raise UserError(f"{run.root} is not a codea1 run directory (no config.yaml)")
        return run

    def load_config(self) -> Config:
        return load_config(self.config_path)
