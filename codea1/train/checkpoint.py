"""Atomic checkpoints: a checkpoint either exists completely or not at all.

A checkpoint of step K is written into `checkpoints/.tmp-step_K-<pid>/`: each policy saves itself into
a sub-folder through its own `save(dir)`, the trainer state goes into `trainer_state.json` and the RNG
states into `rng.pt`; every file is fsynced, a `COMPLETE` marker is written and fsynced last, and only
then is the folder renamed to `checkpoints/step_K` (an atomic rename on one file system) and the parent
folder fsynced. Readers take only folders named `step_K` that hold the marker, so a crash at any moment
(or a full disk) can leave a stale `.tmp-*` folder, which is deleted on the next start, but never a
partial checkpoint that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from codea1.errors import UserError, storage_failure

MARKER = "COMPLETE"
# train.one_step_off (codea1.train.one_step_off): the next step's rollout, drawn before the checkpoint
ONE_STEP_OFF_DIR = "one_step_off"
ROLLOUT_IN_FLIGHT = "next_rollout.json"
STATE_FILE = "trainer_state.json"
RNG_FILE = "rng.pt"


@dataclass
class TrainerState:
    """What the loop needs besides the policies to continue exactly where it stopped."""

    step: int = 0  # training steps completed (the Mistake Book is at this step too)
    cursor: int = 0  # questions consumed so far in the seeded data order
    seed: int = 0


def step_dir_name(step: int) -> str:
    return f"step_{step:06d}"


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            _fsync_file(Path(dirpath) / name)
        _fsync_file(Path(dirpath))


def debug_kill(phase: str, step: int) -> None:
    """Test hook: CODEA1_DEBUG_KILL_AT=<phase>:<step> sends SIGKILL to this process at that point."""
    want = os.environ.get("CODEA1_DEBUG_KILL_AT")
    if want and want == f"{phase}:{step}":
        os.kill(os.getpid(), signal.SIGKILL)


def save_checkpoint(checkpoints_dir: Path, state: TrainerState, savers: dict[str, Callable[[Path], None]]) -> Path:
    """Writes checkpoint `step_K` atomically; `savers` map a sub-folder name to a policy's save(dir).

    Raises UserError (one sentence) if the disk is full or unwritable; nothing partial is left behind
    under a name that readers accept.
    """
    import torch

    checkpoints_dir.mkdir(parents=True, exist_ok=True)
    final = checkpoints_dir / step_dir_name(state.step)
    tmp = checkpoints_dir / f".tmp-{step_dir_name(state.step)}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        for name, save in savers.items():
            sub = tmp / name
            sub.mkdir()
            save(sub)
        debug_kill("checkpoint", state.step)
        from codea1.rl.rng import rng_state  # torch: only when a checkpoint is written or read

        torch.save(rng_state(), tmp / RNG_FILE)
        (tmp / STATE_FILE).write_text(json.dumps(asdict(state), indent=1), encoding="utf-8")
        _fsync_tree(tmp)
        (tmp / MARKER).write_text(f"{state.step}\n", encoding="utf-8")
        _fsync_file(tmp / MARKER)
        _fsync_file(tmp)
        if final.exists():  # a re-run of the same step after a resume: replace it
            shutil.rmtree(final)
        os.rename(tmp, final)
        _fsync_file(checkpoints_dir)
    except Exception as exc:  # OSError, or a library's own error for a failed write (safetensors, torch.save)
        reason = storage_failure(exc, checkpoints_dir)  # before the partial folder frees its space
        shutil.rmtree(tmp, ignore_errors=True)
        if reason is None and not isinstance(exc, OSError):
            raise
        reason = reason or exc.strerror or str(exc)
        last = latest_checkpoint(checkpoints_dir)
        after = f"; the last complete checkpoint is {last.name}" if last else "; no complete checkpoint exists"
        raise UserError(
            f"checkpoint of step {state.step} could not be written to {checkpoints_dir} "
            f"({reason}){after}; free space and resume with `codea1 train --resume {checkpoints_dir.parent}`"
        ) from None
    return final


def list_checkpoints(checkpoints_dir: Path) -> list[Path]:
    """Complete checkpoints (named step_K with the marker), oldest first."""
    if not checkpoints_dir.is_dir():
        return []
    found = []
    for path in checkpoints_dir.iterdir():
        if not path.name.startswith("step_") or not (path / MARKER).is_file():
            continue
        try:
            found.append((int(path.name[len("step_") :]), path))
        except ValueError:
            continue
    return [p for _, p in sorted(found)]


def latest_checkpoint(checkpoints_dir: Path) -> Path | None:
    found = list_checkpoints(checkpoints_dir)
    return found[-1] if found else None


def remove_stale(checkpoints_dir: Path) -> list[str]:
    """Deletes leftovers of interrupted writes (`.tmp-*` and step folders without the marker)."""
    removed = []
    if not checkpoints_dir.is_dir():
        return removed
    for path in checkpoints_dir.iterdir():
        if path.name.startswith(".tmp-") or (path.name.startswith("step_") and not (path / MARKER).is_file()):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def prune(checkpoints_dir: Path, keep: int) -> None:
    """Keeps the newest `keep` complete checkpoints."""
    for path in list_checkpoints(checkpoints_dir)[:-keep] if keep > 0 else []:
        shutil.rmtree(path, ignore_errors=True)


def read_state(path: Path) -> TrainerState:
    try:
        data = json.loads((path / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UserError(f"checkpoint {path} is unreadable ({exc}); delete it to resume from an older one") from None
    known = {f.name for f in fields(TrainerState)}  # checkpoints of earlier versions hold more fields
    return TrainerState(**{k: v for k, v in data.items() if k in known})


def load_rng(path: Path) -> None:
    import torch

    from codea1.rl.rng import set_rng_state

    set_rng_state(torch.load(path / RNG_FILE, weights_only=False))
