"""Atomic checkpoints: complete or absent, pruned, and a full disk is one clear error."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codea1.errors import UserError
from codea1.train.checkpoint import (
    MARKER,
    TrainerState,
    latest_checkpoint,
    list_checkpoints,
    prune,
    read_state,
    remove_stale,
    save_checkpoint,
)
from codea1.train.metrics import MetricsLogger, read_metrics, truncate_metrics


def _saver(text: str):
    def save(path: Path) -> None:
        (path / "weights.txt").write_text(text)

    return save


def test_save_list_read_and_prune(tmp_path: Path) -> None:
    for step in (2, 4, 6):
        save_checkpoint(tmp_path, TrainerState(step=step, cursor=step * 8), {"code_policy": _saver(str(step))})
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_000002", "step_000004", "step_000006"]
    last = latest_checkpoint(tmp_path)
    assert read_state(last).cursor == 48
    assert (last / "code_policy" / "weights.txt").read_text() == "6"
    prune(tmp_path, keep=2)
    assert [p.name for p in list_checkpoints(tmp_path)] == ["step_000004", "step_000006"]


def test_folder_without_marker_is_never_taken(tmp_path: Path) -> None:
    save_checkpoint(tmp_path, TrainerState(step=1), {"p": _saver("1")})
    partial = tmp_path / "step_000002"
    partial.mkdir()
    (partial / "trainer_state.json").write_text("{}")
    (tmp_path / ".tmp-step_000003-1").mkdir()
    assert latest_checkpoint(tmp_path).name == "step_000001"
    assert sorted(remove_stale(tmp_path)) == [".tmp-step_000003-1", "step_000002"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_000001"]


def test_full_disk_is_a_user_error_and_leaves_nothing_partial(tmp_path: Path) -> None:
    save_checkpoint(tmp_path, TrainerState(step=1), {"p": _saver("1")})

    def full_disk(path: Path) -> None:
        (path / "half.bin").write_bytes(b"x" * 10)
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(UserError) as info:
        save_checkpoint(tmp_path, TrainerState(step=2), {"p": full_disk})
    message = str(info.value)
    assert "step 2" in message and "disk is full" in message and "step_000001" in message
    assert [p.name for p in tmp_path.iterdir()] == ["step_000001"]


def test_sigkill_while_writing_leaves_no_complete_checkpoint(tmp_path: Path) -> None:
    script = (
        "import sys; from pathlib import Path\n"
        "from codea1.train.checkpoint import TrainerState, save_checkpoint\n"
        "save_checkpoint(Path(sys.argv[1]), TrainerState(step=3), {'p': lambda d: (d / 'w').write_text('w')})\n"
    )
    env = dict(os.environ, CODEA1_DEBUG_KILL_AT="checkpoint:3")
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=False, env=env, timeout=120)
    assert proc.returncode == -9
    assert latest_checkpoint(tmp_path) is None
    assert any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())
    assert not any((p / MARKER).exists() for p in tmp_path.iterdir())


def test_metrics_log_read_and_truncate(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    logger = MetricsLogger(path)
    for step in range(1, 6):
        logger.log({"step": step, "mistake_book_size": step * 2, "kl": float("nan")})
    logger.close()
    with path.open("a") as handle:
        handle.write('{"step": 6, "torn')  # a crash in the middle of a line
    rows = read_metrics(path)
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5] and rows[0]["kl"] is None
    truncate_metrics(path, 3)
    assert [r["step"] for r in read_metrics(path)] == [1, 2, 3]


def test_optional_sinks(tmp_path: Path) -> None:
    import importlib.util

    path = tmp_path / "metrics.jsonl"
    if importlib.util.find_spec("tensorboard") is None:
        with pytest.raises(UserError, match="train.tensorboard"):
            MetricsLogger(path, tensorboard_dir=tmp_path / "tb")
    else:
        logger = MetricsLogger(path, tensorboard_dir=tmp_path / "tb")
        logger.log({"step": 1, "code_reward": 0.5})
        logger.close()
        assert any((tmp_path / "tb").iterdir())
    if importlib.util.find_spec("wandb") is None:
        with pytest.raises(UserError, match="train.wandb"):
            MetricsLogger(path, wandb_project="codea1")


def test_a_library_error_for_a_failed_write_is_a_user_error_too(tmp_path: Path, monkeypatch) -> None:
    """safetensors and torch.save report a full disk with their own errors (SafetensorError; RuntimeError
    "iostream error" with no errno): each is one sentence, and the partial folder is removed."""
    from safetensors import SafetensorError

    from codea1 import errors

    def safetensors_full(path: Path) -> None:
        (path / "model.safetensors").write_bytes(b"x" * 10)
        raise SafetensorError(
            'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })'
        )

    with pytest.raises(UserError, match="the disk is full"):
        save_checkpoint(tmp_path, TrainerState(step=1), {"p": safetensors_full})

    def torch_full(path: Path) -> None:
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 547456 vs 547344")

    with pytest.raises(RuntimeError):  # with space left this is not a disk problem: not hidden
        save_checkpoint(tmp_path, TrainerState(step=2), {"p": torch_full})
    monkeypatch.setattr(errors, "LOW_SPACE_BYTES", 1 << 62)  # as if the file system had run full
    with pytest.raises(UserError, match="the disk is full"):
        save_checkpoint(tmp_path, TrainerState(step=3), {"p": torch_full})
    assert list(tmp_path.iterdir()) == []


def test_storage_failures_are_recognised_from_each_library() -> None:
    import sqlite3

    from codea1.errors import storage_failure

    assert storage_failure(OSError(errno.ENOSPC, "No space left on device")) == "the disk is full"
    assert storage_failure(OSError(errno.EROFS, "Read-only file system")) == "the file system is read-only"
    assert storage_failure(sqlite3.OperationalError("database or disk is full")) == "the disk is full"
    wrapped = RuntimeError("could not save")
    wrapped.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    assert storage_failure(wrapped) == "the disk is full"
    assert storage_failure(ValueError("no space left on device")) is None  # not a write error
    assert storage_failure(OSError(errno.ENOENT, "No such file")) is None


def _can_mount_tmpfs(path: Path) -> bool:
    if os.geteuid() != 0:
        return False
    return (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(path)], capture_output=True, check=False
        ).returncode
        == 0
    )


def test_training_on_a_full_disk_ends_in_one_sentence(tmp_path: Path) -> None:
    """A real 3 MB file system: the tiny run's first checkpoint cannot fit; exit 2, one sentence naming
    the resume command, no partial checkpoint folder."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _can_mount_tmpfs(disk):
        pytest.skip("cannot mount a small tmpfs here (needs root and mount rights)")
    try:
        repo = Path(__file__).resolve().parents[1]
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "codea1",
                "train",
                "--config",
                str(repo / "codea1" / "configs" / "tiny-cpu.yaml"),
                "--run-dir",
                str(disk / "run"),
                "--max-steps",
                "2",
                "train.checkpoint_every=1",
                "train.progress=false",
                "executor.uid_base=1700950000",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, "PYTHONPATH": str(repo)},
        )
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr
        last = proc.stderr.strip().splitlines()[-1]
        assert last.startswith("codea1: error:") and "disk is full" in last and "--resume" in last
        assert not any(p.name.startswith(".tmp-") for p in (disk / "run" / "checkpoints").iterdir())
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
