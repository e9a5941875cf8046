"""Sandbox uids: children run as dedicated uids, one per slot, leased machine-wide (a lock file per uid),
never as "nobody": the end-of-job sweep kills every process of the slot's uid and RLIMIT_NPROC counts per
uid, so a uid must belong to one slot only, not to system daemons or to another Executor's slots."""

from __future__ import annotations

import fcntl
import os
import pwd
import tempfile
from pathlib import Path

from codea1.sandbox.api import SandboxError

DEFAULT_UID_BASE = 1_700_000_000
UID_RANGE = 4096


def _uid_has_account(uid: int) -> bool:

    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


class UidLease:
    """An exclusive, machine-wide claim on one sandbox uid (an flock held while the slot lives)."""

    def __init__(self, first: int, count: int = UID_RANGE) -> None:

        lock_dir = Path(tempfile.gettempdir()) / "codea1-sandbox-uids"
        lock_dir.mkdir(mode=0o700, exist_ok=True)
        for uid in range(first, first + count):
            if _uid_has_account(uid):  # never a real account: the sweep would kill its processes
                continue
            fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self.fd = uid, fd
            return
        raise SandboxError(f"no free sandbox uid in [{first}, {first + count}); close other Executors")

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
