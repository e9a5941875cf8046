"""Per-job resource limits with cgroups: memory, process count and a fair CPU share per worker slot.

A slot runs one job at a time, so the slot's cgroup limits the job: every process the job starts (its
helpers included) shares one memory limit (`memory_mb` plus the job's /tmp, which tmpfs charges to it)
and one process-count limit, and the slot's CPU share is the same as every other slot's, so a job's
spinning helpers cannot starve another slot's honest calls. The zygotes of the slot are moved into the
group once they have loaded their modules: what they hold stays charged where it was, what a child
copies or allocates is charged to the group. Zygotes never become the out-of-memory victim
(oom_score_adj -1000); each child sets its own to 1000. The slots' common parent group weighs as much
as the CPUs this process may use against the machine's other tasks (see `_cpus`).

cgroup v2 is used where this process may create groups under the unified hierarchy with the memory,
pids and cpu controllers enabled for them (delegated); else v1 with the memory, pids and cpu (cpu
shares) hierarchies. Where neither is writable (not root, no cgroup file system), `SlotCgroup.create`
returns None and the isolation level lacks "cgroup".
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "codea1-sandbox"
EXTRA_PIDS = 16  # the slot's zygotes and bubblewrap's init processes, on top of the job's own limit


def _cpus() -> int:
    """The CPUs this process may use.

    The slots' groups share one parent group (GROUP), and the kernel weighs that parent against every
    other task of the machine as one task of its weight: at the default weight all slots together would
    get one task's share of a busy machine (measured: about half the sandbox's throughput on a machine
    with other load). So the parent weighs as much as this many tasks, what the slots' processes would
    weigh without cgroups; each slot keeps the default weight, so slots still share equally among
    themselves, and a job's helpers get no more than their slot's share.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


class SlotCgroup:
    """The cgroup(s) of one worker slot; `dirs` are the groups a process joins (one in v2, three in v1)."""

    def __init__(self, version: int, dirs: list[Path], cpu_usage: Path | None = None) -> None:
        self.version, self.dirs = version, dirs
        # the file that counts the CPU time of the group's processes (v2: cpu.stat, v1: cpuacct.usage)
        self.cpu_usage = cpu_usage if cpu_usage is not None else (dirs[0] / "cpu.stat" if version == 2 else None)
        self._cpu_fd: int | None = None

    def cpu_seconds(self) -> float | None:
        """CPU time the group's processes have used, in seconds (None where the group does not count it).
        Read through a file descriptor kept open: a few microseconds per read."""
        if self.cpu_usage is None:
            return None
        try:
            if self._cpu_fd is None:
                self._cpu_fd = os.open(self.cpu_usage, os.O_RDONLY)
            text = os.pread(self._cpu_fd, 4096, 0)
        except OSError:
            return None
        if self.version == 1:
            return int(text) / 1e9
        for line in text.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
        return None

    @classmethod
    def create(cls, name: str, memory_bytes: int, pids: int) -> SlotCgroup | None:
        if os.geteuid() != 0 or not ROOT.is_dir():
            return None
        for make in (cls._create_v2, cls._create_v1):
            try:
                group = make(name, memory_bytes, pids)
            except OSError:
                group = None
            if group is not None:
                return group
        return None

    @classmethod
    def _create_v2(cls, name: str, memory_bytes: int, pids: int) -> SlotCgroup | None:
        if not (ROOT / "cgroup.controllers").is_file():
            return None
        parent = ROOT / GROUP
        parent.mkdir(exist_ok=True)
        wanted = {"memory", "pids", "cpu"}
        if not wanted <= set((ROOT / "cgroup.controllers").read_text().split()):
            return None
        with contextlib.suppress(OSError):
            _write(ROOT / "cgroup.subtree_control", "+memory +pids +cpu")
            _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
        if not wanted <= set((parent / "cgroup.subtree_control").read_text().split()):
            return None
        d = parent / name
        d.mkdir(exist_ok=True)
        with contextlib.suppress(OSError):
            _write(parent / "cpu.weight", str(min(10000, 100 * _cpus())))  # see _cpus
        _write(d / "memory.max", str(memory_bytes))
        with contextlib.suppress(OSError):
            _write(d / "memory.swap.max", "0")
        _write(d / "pids.max", str(pids + EXTRA_PIDS))
        _write(d / "cpu.weight", "100")
        return cls(2, [d])

    @classmethod
    def _create_v1(cls, name: str, memory_bytes: int, pids: int) -> SlotCgroup | None:
        dirs = []
        for controller in ("memory", "pids", "cpu"):
            base = ROOT / controller
            if not base.is_dir():
                return None
            d = base / GROUP / name
            d.mkdir(parents=True, exist_ok=True)
            dirs.append(d)
        memory, pid_dir, cpu = dirs
        _write(memory / "memory.limit_in_bytes", str(memory_bytes))
        with contextlib.suppress(OSError):  # no swap accounting on many kernels
            _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        with contextlib.suppress(OSError):  # and without it: the group's anonymous memory is never
            _write(memory / "memory.swappiness", "0")  # swapped out, so the limit is on what the job holds
        _write(pid_dir / "pids.max", str(pids + EXTRA_PIDS))
        _write(cpu / "cpu.shares", "1024")
        with contextlib.suppress(OSError):
            _write(cpu.parent / "cpu.shares", str(1024 * _cpus()))  # see _cpus
        usage = cpu / "cpuacct.usage"  # "cpu,cpuacct" mounted together; else a cpuacct hierarchy of its own
        if not usage.is_file() and (ROOT / "cpuacct").is_dir():
            with contextlib.suppress(OSError):
                acct = ROOT / "cpuacct" / GROUP / name
                acct.mkdir(parents=True, exist_ok=True)
                dirs.append(acct)
                usage = acct / "cpuacct.usage"
        return cls(1, dirs, usage if usage.is_file() else None)

    def stall_seconds(self) -> Callable[[], float | None] | None:
        """A clock of the time the group's threads have waited, runnable, for a CPU since the clock was made
        (None where the kernel reports it nowhere): v2's per-group pressure (`cpu.pressure`, "some"), else
        the sum over the group's threads of their run-queue delay (/proc/TID/schedstat), each counted from
        the clock's start or from its birth. What separates a call starved by a loaded machine (it waits
        for a core) from one that sleeps or blocks (it waits for nothing the CPU gives)."""
        pressure = self.dirs[0] / "cpu.pressure" if self.version == 2 else None
        if pressure is not None and _pressure_total(pressure) is not None:
            start = _pressure_total(pressure)
            return lambda: None if (now := _pressure_total(pressure)) is None else now - start
        threads = [d / ("cgroup.threads" if self.version == 2 else "tasks") for d in self.dirs]
        listing = next((t for t in threads if t.is_file()), None)
        if listing is None or _run_delays(listing) is None:
            return None
        first = _run_delays(listing) or {}

        def clock() -> float | None:
            now = _run_delays(listing)
            if now is None:
                return None
            return sum(max(0, ns - first.get(tid, 0)) for tid, ns in now.items()) / 1e9

        return clock

    def join(self, pids: list[int]) -> bool:
        """Moves processes into the group; False if any could not be moved."""
        ok = True
        for d in self.dirs:
            for pid in pids:
                try:
                    _write(d / "cgroup.procs", str(pid))
                except OSError:
                    ok = False
        return ok

    def close(self, wait: float = 1.0) -> None:
        """Removes the group once its processes are gone (they may still be exiting: retried for up to
        `wait` seconds; a group still in use after that is left, and reused by the next slot of its uid)."""
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        deadline = time.monotonic() + wait
        for d in self.dirs:
            while True:
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.01)


def _pressure_total(path: Path) -> float | None:
    """The "some" stall total of a cgroup v2 pressure file, in seconds."""
    try:
        for line in path.read_text().splitlines():
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None
    return None


def _run_delays(listing: Path) -> dict[int, int] | None:
    """Run-queue delay (ns) of each thread a cgroup lists: the second field of /proc/TID/schedstat. None
    where the kernel keeps no schedstat; a thread that is gone by the time it is read is left out."""
    try:
        tids = [int(t) for t in listing.read_text().split()]
    except (OSError, ValueError):
        return None
    delays: dict[int, int] = {}
    for tid in tids:
        try:
            with open(f"/proc/{tid}/schedstat", "rb") as f:
                fields = f.read().split()
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if len(fields) < 2:
            return None
        delays[tid] = int(fields[1])
    return delays


def descendants(pid: int) -> list[int]:
    """`pid` and all its descendants (from /proc/*/stat)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        try:
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(parents.get(p, []))
    return out
