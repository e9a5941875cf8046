"""The run directory: one folder holds everything a training run writes.

RUN_DIR/
  config.yaml            the resolved config (every key, after overrides)
  run.json               the config as the run started (a resume refuses an edited config.yaml, but for
                         health.* and placement.* keys), the code commit it started at, the stop target
                         given with --max-steps, and config_changes: each resume that changed one of
                         those keys, {"step": K, "changed": {"health.mode": ["stop", "warn"]}}
  metrics.jsonl          one JSON line per step (always has `step` and `mistake_book_size`)
  rollouts/step_K.jsonl  the step's rollouts in the `codea1 score` input format, plus their scores
  checkpoints/step_K/    complete checkpoints (see checkpoint.py); `.tmp-*` folders are never used
  mistake_book.sqlite    the Mistake Book (SQLite, one transaction per step)
  tensorboard/           optional TensorBoard events
  report.html, plots/    written by `codea1 report RUN_DIR`
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codea1.config import Config, apply_overrides, config_from_dict, migrate, read_yaml, save_config
from codea1.errors import UserError


def _with_defaults(started: dict[str, Any]) -> dict[str, Any]:
    """The config a run started with, as this version reads it: renamed keys under their new names, and keys
    added since at their defaults (which keep an earlier run's behaviour), so that a run of an earlier
    version resumes; as recorded where this version cannot read it (the comparison then names the keys)."""
    migrated, _ = migrate(started)
    try:
        return json.loads(json.dumps(config_from_dict(migrated).to_dict()))
    except UserError:
        return migrated


@dataclass(frozen=True)
class RunDir:
    root: Path

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def state_path(self) -> Path:
        return self.root / "run.json"

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
            raise UserError(
                f"{root} already holds a run; continue it with "
                f"`codea1 train --resume {root}` or choose another --run-dir"
            )

    def read_state(self) -> dict[str, Any]:
        """run.json ({} for runs made before it existed)."""
        try:
            return json.loads(self.state_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"{self.state_path} is unreadable ({exc}); restore it from a copy of the run") from None

    def write_state(self, **changes: Any) -> None:
        state = {**self.read_state(), **changes}
        tmp = self.state_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(state, indent=1), encoding="utf-8")
        os.replace(tmp, self.state_path)

    def check_config(self, cfg: Config) -> None:
        """Refuses to resume with a config other than the one the run started with (an edited config.yaml
        would be applied only in part: the optimiser and schedule come back from the checkpoint)."""
        started = self.read_state().get("config")
        if started is None:
            return
        started = _with_defaults(started)
        changed = changed_keys(started, json.loads(json.dumps(cfg.to_dict())))
        changed = [c for c in changed if not c[0].startswith(RESUMABLE)]
        if changed:
            shown = "; ".join(f"{k}: {a!r} -> {b!r}" for k, a, b in changed[:5])
            raise UserError(
                f"{self.config_path} differs from the config this run started with ({shown}"
                f"{'; ...' if len(changed) > 5 else ''}); a run resumes only with its own config (a resume "
                f"may change health.* and placement.* keys): undo the edit, or start a new run with "
                f"`codea1 train --config {self.config_path} --run-dir NEW_DIR`"
            )

    def record_changes(self, cfg: Config, step: int) -> list[tuple[str, Any, Any]]:
        """The health.* and placement.* keys `cfg` changes against the settings the run had in force (the
        config it started with and the changes recorded since), as (key, old, new). A resume that changes
        any appends {"step", "changed": {key: [old, new]}} to run.json's config_changes; config.yaml is
        rewritten to `cfg`, so a later plain resume keeps the change."""
        state = self.read_state()
        new = json.loads(json.dumps(cfg.to_dict()))
        changed: list[tuple[str, Any, Any]] = []
        if state.get("config") is not None:
            in_force = _with_defaults(state["config"])
            for entry in state.get("config_changes", []):
                for key, (_, value) in entry["changed"].items():
                    *head, leaf = key.split(".")
                    node = in_force
                    for part in head:
                        node = node.setdefault(part, {})
                    node[leaf] = value
            changed = [c for c in changed_keys(in_force, new) if c[0].startswith(RESUMABLE)]
        if changed:
            record = {"step": step, "changed": {k: [a, b] for k, a, b in changed}}
            self.write_state(config_changes=[*state.get("config_changes", []), record])
        if json.loads(json.dumps(self.load_config().to_dict())) != new:
            tmp = self.config_path.with_suffix(".yaml.tmp")
            save_config(cfg, tmp)
            os.replace(tmp, self.config_path)
        return changed

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
            run.write_state(config=json.loads(json.dumps(cfg.to_dict())), code_commit=code_commit().get("commit"))
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

    def load_config(self, overrides: list[str] | None = None) -> Config:
        """The run's config; keys an earlier version wrote under older names are read under the new ones.
        `overrides` (`codea1 train --resume RUN_DIR health.mode=warn`) may set the keys a resume may change
        (RESUMABLE: health.*, how run health judges the run, and placement.*, where it computes), never what
        it computes."""
        data, _ = migrate(read_yaml(self.config_path))
        try:
            cfg = config_from_dict(data)
        except UserError as exc:
            raise UserError(f"{self.config_path}: {exc}") from None
        if not overrides:
            return cfg
        other = [o for o in overrides if not o.strip().startswith(RESUMABLE)]
        if other:
            raise UserError(
                f"--resume may change only health.* and placement.* keys (how run health judges the run, "
                f"where it computes), not '{other[0]}'; "
                f"to change that, start a new run from this one's config: `codea1 train --config "
                f"{self.config_path} --run-dir NEW_DIR {other[0]}`"
            )
        try:
            return config_from_dict(apply_overrides(data, list(overrides)))
        except UserError as exc:
            raise UserError(f"command-line override: {exc}") from None


def code_commit() -> dict[str, Any]:
    """The git commit the running codea1 package comes from (and whether its tree had changes), or
    {"commit": None} outside a git checkout."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {"commit": None}
    return {"commit": commit, "dirty": bool(dirty)}


# keys that say where a run computes, not what: a resume may change them (more data-parallel ranks, another
# cluster); each rank computes the same update, so the run continues as it would have
WHERE_NOT_WHAT = ("placement.",)
# the keys a resume may change: those, and how run health judges the run (codea1.train.health), which
# changes no update either: the way on after a health stop is a resume with health.mode=warn
RESUMABLE = (*WHERE_NOT_WHAT, "health.")


def changed_keys(old: object, new: object, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted key, old value, new value) for every leaf that differs between two nested dicts."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[tuple[str, Any, Any]] = []
        for key in sorted(set(old) | set(new), key=str):
            out += changed_keys(old.get(key), new.get(key), f"{prefix}{key}.")
        return out
    return [] if old == new else [(prefix.rstrip("."), old, new)]
