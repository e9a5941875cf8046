"""Metric sinks: metrics.jsonl always; TensorBoard and wandb when asked for (imported lazily)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from codea1.errors import UserError


def _clean(value: object) -> Any:  # noqa: ANN401  (a value of any type)
    """JSON-safe scalars: NaN/inf become None so every line stays valid JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """All well-formed lines of a metrics.jsonl (a torn last line from a crash is skipped)."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").split("\n"):  # JSONL: "\n" only
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def truncate_metrics(path: str | Path, last_step: int) -> None:
    """Keeps only lines with step <= last_step (used on resume: later steps are re-run)."""
    path = Path(path)
    if not path.exists():
        return
    rows = [r for r in read_metrics(path) if int(r.get("step", 0)) <= last_step]
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class MetricsLogger:
    """Appends one JSON line per step to metrics.jsonl and mirrors scalars to optional sinks."""

    def __init__(
        self,
        path: Path,
        *,
        tensorboard_dir: Path | None = None,
        wandb_project: str | None = None,
        wandb_config: dict | None = None,
        run_name: str | None = None,
    ) -> None:
        self.path = Path(path)
        self._tb = None
        self._wandb = None
        if tensorboard_dir is not None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise UserError(
                    "train.tensorboard is true but tensorboard is not installed; "
                    "`pip install 'codea1[tensorboard]'` or set train.tensorboard=false"
                ) from None
            self._tb = SummaryWriter(str(tensorboard_dir))
        if wandb_project is not None:
            try:
                import wandb
            except ImportError:
                raise UserError(
                    "train.wandb is true but wandb is not installed; "
                    "`pip install 'codea1[wandb]'` or set train.wandb=false"
                ) from None
            self._wandb = wandb.init(project=wandb_project, config=wandb_config, name=run_name, resume="allow")

    def log(self, row: dict[str, Any]) -> None:
        """Writes a metrics row (must contain `step`); fsynced so a crash never loses a logged step."""
        row = {k: _clean(v) for k, v in row.items()}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        step = int(row["step"])
        scalars = {
            k: v for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and k != "step"
        }
        if self._tb is not None:
            for key, value in scalars.items():
                self._tb.add_scalar(key, value, step)
            self._tb.flush()
        if self._wandb is not None:
            self._wandb.log(scalars, step=step)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()
