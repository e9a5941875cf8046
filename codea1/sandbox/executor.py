"""LocalExecutor: runs untrusted (code, calls) jobs in isolated children forked from warm zygotes.

Each worker slot has warm zygotes (a lean one, and fuller ones started when a job imports more: see
codea1.sandbox.preload) and its own leased uid; one forked child per job runs the code once and then
each call in order.
The parent thread of the slot writes the job into the child's pipe and reads one frame per event with a
deadline per call; each value comes back as plain data (codea1.sandbox.values), for codea1.judge to
judge. A call that hangs or crashes ends that child: the parent records it ("timeout" / "crash") and
resumes the remaining calls in a fresh child (which runs the code again). Reading a result is total
(bounded frames, budgeted decoding), and a zygote that fails to set up a job is replaced and the job run
once more (`_execute_healing`). The layers are listed by `isolation_report()` (`codea1 exec --isolation`).
"""

from __future__ import annotations

import ast
import collections
import contextlib
import fcntl
import json
import marshal
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from codea1.errors import UserError
from codea1.sandbox import allowlist, cgroups, pch, preload, values
from codea1.sandbox.api import CallResult, Job, JobResult, OnProgress, SandboxError, Then
from codea1.sandbox.isolation import isolation_note, layers_report, missing_layers_message
from codea1.sandbox.uids import DEFAULT_UID_BASE, UidLease
from codea1.sandbox.wire import MAX_JOB_BYTES, FrameReader

FULL_LEVEL = "allowlist+netns+utsns+mntns+pidns+ipcns+jobtmp+uid+cgroup+seccomp+rlimits"
# exit statuses of a child that failed before running any candidate code (see zygote._child)
SETUP_FAILED = {70, 71, 72}
ZYGOTE_REPLY_TIMEOUT = 60.0  # seconds for the zygote to fork or clean up; past that it is restarted
GRACE = 0.25
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # seconds added to each wall deadline for the frame to travel
NOBODY_GID = 65534

_warned = False
_warn_lock = threading.Lock()


class _SetupFailed(Exception):
    """A zygote could not set up a job (its child failed before any candidate code ran)."""


def _warn_once(message: str) -> None:
    global _warned
    with _warn_lock:
        if not _warned:
            _warned = True
            warnings.warn(message, RuntimeWarning, stacklevel=3)


def _default_hide_paths() -> list[str]:
    """Directories hidden from children (under an empty tmpfs) where a mount namespace is available.

    The caller's working directory (runs, checkpoints, Mistake Book, data usually live below it), the
    home directory, the source checkout this package runs from and the directory holding it (data sets
    often sit next to the checkout; skipped when the Python installation lives there), /var/tmp,
    /dev/shm, plus any in $CODEA1_SANDBOX_HIDE (os.pathsep-separated). Python's own files need not be
    visible: the zygote imports what children use before hiding anything.
    """
    paths = [os.getcwd(), str(Path.home()), "/var/tmp", "/dev/shm"]
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        paths.append(str(checkout))
        prefix = Path(sys.base_prefix).resolve()
        if checkout.parent != Path("/") and checkout.parent not in (prefix, *prefix.parents):
            paths.append(str(checkout.parent))
    extra = os.environ.get("CODEA1_SANDBOX_HIDE", "")
    paths += [p for p in extra.split(os.pathsep) if p]
    return paths


class _Slot:
    """One parallel slot: its leased uid and its zygotes, one per flavour, each started on first use.

    Forking a process costs time in proportion to its memory, so a job forks from the leanest zygote
    that holds the modules it imports (see codea1.sandbox.preload).
    """

    def __init__(self, index: int, cfg: dict, cgroup: cgroups.SlotCgroup | None = None) -> None:
        self.index, self.cfg, self.cgroup = index, cfg, cgroup
        self.zygotes: dict[str, _Zygote] = {"lean": _Zygote(index, {**cfg, "flavour": "lean"}, cgroup)}
        self.last: _Zygote | None = None  # the zygote of the previous job

    def zygote(self, flavour: str) -> _Zygote:
        z = self.zygotes.get(flavour)
        if z is None:
            z = self.zygotes[flavour] = _Zygote(self.index, {**self.cfg, "flavour": flavour}, self.cgroup)
        elif not z.alive():
            z.close()
            z.start()
        if self.last is not None and self.last is not z:
            # The zygotes of a slot share its uid, and cleaning up after a child may sweep that uid:
            # the previous zygote's clean-up must be over before this one forks.
            self.last.finish()
        self.last = z
        return z

    def replace(self, flavour: str) -> None:
        """Stops the `flavour` zygote (and all its children) and starts a fresh one in its place."""
        z = self.zygotes[flavour]
        z.close()
        z.start()

    def close(self) -> None:
        for z in self.zygotes.values():
            z.close()
        if self.cgroup is not None:
            self.cgroup.close()


class _Zygote:
    """One warm zygote process and the socket that drives it."""

    def __init__(self, index: int, cfg: dict, cgroup: cgroups.SlotCgroup | None = None) -> None:
        self.index = index
        self.cfg = {**cfg, "oom_victim": cgroup is not None}
        self.cgroup = cgroup
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.layers: list[str] = []
        self.vm = 0
        self.start()

    def start(self) -> None:
        self.unanswered = 0
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pkg_root = str(Path(__file__).resolve().parents[2])
        # a minimal environment: the children's memory starts as a copy of the zygote's, so no secrets
        env = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT") if k in os.environ}
        extra = os.environ.get("PYTHONPATH")
        env.update(
            PYTHONPATH=pkg_root + (os.pathsep + extra if extra else ""),
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONHASHSEED="0",
            PYTHONNOUSERSITE="1",
        )
        # -S: no site initialisation (it imports modules, and a bigger zygote forks slower); the site
        # directories come in the config instead
        python = [sys.executable, "-S", "-m", "codea1.sandbox.zygote", str(child.fileno())]
        site_dirs = [p for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")]
        cfg = {**self.cfg, "sys_path": site_dirs}
        bwrap = _allowlist_bwrap(self.cfg)
        if bwrap is not None:  # the allow-list root; the zygote checks that host paths are not there
            python = allowlist.command(bwrap, python, pkg_root, site_dirs, pch.bound_dirs())
            # paths under /tmp appear elsewhere in the root (allowlist.inside): the zygote imports from there
            env["PYTHONPATH"] = allowlist.inside(pkg_root) + (os.pathsep + extra if extra else "")
            cfg.update(
                allowlist=True,
                probe_paths=[p for p in ("/etc/passwd", "/var", "/home") if os.path.exists(p)],
                sys_path=[allowlist.inside(p) for p in site_dirs],
            )
        self.proc = subprocess.Popen(
            python, pass_fds=(child.fileno(),), env=env, stdin=subprocess.DEVNULL, start_new_session=True
        )
        child.close()
        self.sock = parent
        parent.settimeout(120)
        try:
            parent.send(json.dumps(cfg).encode())
            hello = json.loads(parent.recv(1 << 16))
        except (OSError, ValueError) as exc:
            self.close()
            if bwrap is not None:  # bubblewrap could not build the root here: start without it, say so
                _ALLOWLIST_BROKEN.add(bwrap)
                return self.start()
            raise SandboxError(f"sandbox zygote did not start: {exc}") from exc
        parent.settimeout(ZYGOTE_REPLY_TIMEOUT)
        self.layers = hello["layers"]
        if self.cgroup is not None and self._join_cgroup():
            self.layers.insert(self.layers.index("seccomp") if "seccomp" in self.layers else -1, "cgroup")
        self.vm = hello["vm"]
        self.autofinish = bool(hello.get("autofinish"))  # the zygote cleans up after exited children itself

    def cpu_clock(self) -> Callable[[], float | None] | None:
        """The CPU clock of this zygote's children (its slot's cgroup), or None where there is none."""
        if self.cgroup is None or "cgroup" not in self.layers or self.cgroup.cpu_seconds() is None:
            return None
        return self.cgroup.cpu_seconds

    def stall_clock(self) -> Callable[[], Callable[[], float | None] | None] | None:
        """What starts a clock of the run-queue wait of this zygote's children (SlotCgroup.stall_seconds), or
        None where there is no slot cgroup."""
        if self.cgroup is None or "cgroup" not in self.layers:
            return None
        return self.cgroup.stall_seconds

    def _join_cgroup(self) -> bool:
        """Moves the zygote (and bubblewrap's processes around it) into the slot's cgroup, where its
        children are born; none of them is ever the out-of-memory victim (each child offers itself)."""
        assert self.proc is not None and self.cgroup is not None
        pids = cgroups.descendants(self.proc.pid)
        for pid in pids:
            with contextlib.suppress(OSError):
                Path(f"/proc/{pid}/oom_score_adj").write_text("-1000")
        return self.cgroup.join(pids)

    def request(self, msg: dict, fds: list[int] | None = None, *, wait: bool = True) -> dict:
        """Sends one request; returns its reply (earlier unanswered replies are read and dropped first).

        wait=False leaves the reply unread, so the caller need not wait for the zygote's clean-up: the
        zygote handles requests in order, so the next request's reply comes after it. A request with
        "reply": False gets no reply at all.
        """
        assert self.sock is not None
        while self.unanswered:  # replies nobody waited for: drop those already there
            try:
                if not self.sock.recv(1 << 16, socket.MSG_DONTWAIT):
                    raise SandboxError("sandbox zygote exited")
            except BlockingIOError:
                break
            self.unanswered -= 1
        data = json.dumps(msg).encode()
        if fds:
            socket.send_fds(self.sock, [data], fds)
        else:
            self.sock.send(data)
        if msg.get("reply", True) is False:
            return {}
        if not wait:
            self.unanswered += 1
            return {}
        reply = b""
        for _ in range(self.unanswered + 1):
            try:
                reply = self.sock.recv(1 << 16)
            except TimeoutError as exc:
                raise SandboxError("sandbox zygote did not answer") from exc
            if not reply:
                raise SandboxError("sandbox zygote exited")
        self.unanswered = 0
        return json.loads(reply)

    def finish(self, wait: bool = True) -> dict:
        """Asks the zygote to end its current child (and all it left); restarts a zygote that fails.

        With wait=False the clean-up overlaps the caller's next steps; its reply ({} here) is not needed,
        and a zygote that finishes exited children by itself is not asked at all.
        """
        if not wait and self.autofinish:
            return {}
        try:
            return self.request({"op": "finish"}, wait=wait)
        except (OSError, SandboxError, ValueError):
            self.close()  # killing the zygote kills its children (parent-death signal)
            self.start()
            return {}

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        """Stops the zygote: asks it to exit (it ends what its children left), killing it if it does not."""
        if self.sock is not None:
            try:
                self.sock.send(json.dumps({"op": "exit"}).encode())
            except OSError:
                pass
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


_ALLOWLIST_BROKEN: set[str] = set()  # bwrap executables that failed to start a zygote in this process


def _allowlist_bwrap(cfg: dict) -> str | None:
    """The bwrap to start a zygote with, or None (not asked for, not root, none found, failed before)."""
    if not cfg.get("isolate") or not cfg.get("allowlist", True) or not cfg.get("hide", True) or os.geteuid() != 0:
        return None
    path = allowlist.bwrap_path()
    return None if path is None or path in _ALLOWLIST_BROKEN else path


def _signal_name(info: dict) -> str:
    if "signal" in info:
        try:
            return f"killed by {signal.Signals(info['signal']).name}"
        except ValueError:
            return f"killed by signal {info['signal']}"
    if "exit" in info:
        return f"exited with status {info['exit']}"
    return "ended"


MAX_PARENT_COMPILE = 1 << 16  # characters; longer sources are compiled by the child
_compile_lock = threading.Lock()


def _shipped(source: str, mode: str) -> bytes | str | None:
    """What a child gets for `source` ("exec": the job's code, "eval": a call); see _ship."""
    return (_ship_code if mode == "exec" else _ship_call)(source)


def _ship(source: str, mode: str) -> bytes | str | None:
    """Marshalled code compiled here, or the source for the child to compile, or None (not an expression).

    A child that only loads its code object skips the parser and compiler, whose allocations cost it
    dozens of copied pages. Compiled exactly as the child would (a module of its own: dont_inherit,
    asserts kept). Only a clean compile is shipped compiled: on an error or a warning (whose report
    belongs in the child's captured output, and which a `-W error` in this process would turn into an
    error) the child compiles the source as before, so the outcome never depends on where compilation
    happened. A call that does not even parse as an expression is None ("invalid"). The warnings filters
    are process-wide, hence the lock.
    """
    filename = "<solution>" if mode == "exec" else "<call>"
    code = None
    with _compile_lock, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if len(source) <= MAX_PARENT_COMPILE:
            try:
                code = compile(source, filename, mode, dont_inherit=True, optimize=0)
            except Exception:  # noqa: BLE001, S110  (SyntaxError, ValueError, RecursionError, MemoryError...)
                pass
        if code is None and mode == "eval":
            try:
                ast.parse(source, mode="eval")  # compiles in the child, or fails there ("error")
            except Exception:  # noqa: BLE001
                return None
    return source if code is None or caught else marshal.dumps(code)


# the same code runs against many test suites, the same tests against many codes
class _ByteBoundedCache:
    """`_ship` results by source, least recently used first out, bounded by the bytes it holds (sources
    and shipped forms together), not by entries: a long call costs what it weighs."""

    def __init__(self, mode: str, max_bytes: int) -> None:
        self.mode, self.max_bytes, self.bytes = mode, max_bytes, 0
        self.items: collections.OrderedDict[str, bytes | str | None] = collections.OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, source: str) -> bytes | str | None:
        with self.lock:
            if source in self.items:
                self.items.move_to_end(source)
                return self.items[source]
        shipped = _ship(source, self.mode)
        size = _weight(source, shipped)
        if size > self.max_bytes // 8:
            return shipped  # one entry never takes more than an eighth of the cache
        with self.lock:
            if source not in self.items:
                self.items[source] = shipped
                self.bytes += size
                while self.bytes > self.max_bytes:
                    old, gone = self.items.popitem(last=False)
                    self.bytes -= _weight(old, gone)
        return shipped

    def cache_clear(self) -> None:
        with self.lock:
            self.items.clear()
            self.bytes = 0


def _weight(source: str, shipped: bytes | str | None) -> int:
    return 2 * len(source) + (len(shipped) * (2 if type(shipped) is str else 1) if shipped is not None else 0) + 64


SHIP_CACHE_BYTES = 64 << 20  # per cache (job code, calls): the parent's memory for compiled code is bounded
_ship_code = _ByteBoundedCache("exec", SHIP_CACHE_BYTES)
_ship_call = _ByteBoundedCache("eval", SHIP_CACHE_BYTES)


def clear_caches() -> None:
    """Empties the parent's caches of compiled code and calls (to measure work from cold)."""
    _ship_code.cache_clear()
    _ship_call.cache_clear()


class LocalExecutor:
    """Warm pool of sandboxed workers; thread-safe `run`. Use as a context manager or call `close()`.

    workers: parallel slots (default: the CPUs this process may use). memory_mb: address space a child may
    allocate on top of the warm interpreter. define_timeout: seconds for `code` itself. isolate=False
    forces the weakest level (rlimits, own session, temp dir) even as root, e.g. to test the fallback;
    hide=False skips the mount namespace. uid_base: each slot leases its own uid, the first free one from
    uid_base on (default 1,700,000,000; machine-wide lock files; uids of existing accounts are skipped),
    so the per-uid process limit and the end-of-job sweep of leftover processes concern that slot only;
    concurrent Executors never share a uid, whatever uid_base they pass.
    nproc/fsize_mb/nofile: per-child limits. tmp_mb/tmp_inodes: size and inodes of each job's own /tmp
    (its working directory, gone when the job ends; with the "jobtmp" layer). cgroup=False: no per-slot
    cgroup (memory_mb + tmp_mb and nproc for all of a job's processes together, an equal CPU share per
    slot; see codea1.sandbox.cgroups). hide_paths: extra directories to hide from children (added
    to the working dir, home dir, this package's dir and $CODEA1_SANDBOX_HIDE).
    isolation: "full" (default, or $CODEA1_SANDBOX_ISOLATION): as root with isolate, hide and cgroup on,
    every layer of FULL_LEVEL must come up, else the Executor refuses to start and says which layer is
    missing and what it needs; "available": the layers the machine has, with one warning. Asking for
    less (isolate, hide or cgroup False) and running without root keep the warning only.
    """

    def __init__(
        self,
        workers: int | None = None,
        *,
        memory_mb: int = 1024,
        define_timeout: float = 5.0,
        isolate: bool = True,
        hide: bool = True,
        nproc: int = 32,
        fsize_mb: int = 16,
        nofile: int = 64,
        hide_paths: list[str] | None = None,
        uid_base: int | None = None,
        tmp_mb: int = 64,
        tmp_inodes: int = 4096,
        cgroup: bool = True,
        isolation: str | None = None,
    ) -> None:
        if workers is None:
            workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self.workers = max(1, int(workers or 1))
        self.memory_mb = memory_mb
        self.define_timeout = define_timeout
        self.limits = {
            "nproc": nproc,
            "fsize": fsize_mb << 20,
            "nofile": nofile,
            "tmp_bytes": tmp_mb << 20,
            "tmp_inodes": tmp_inodes,
        }
        hidden = _default_hide_paths() + list(hide_paths or [])
        self._slots: list[_Slot] = []
        self._leases: list[UidLease] = []
        self._free: queue.Queue[_Slot] = queue.Queue()
        self._closed = False
        self._owner = os.getpid()
        self.restarts = 0  # zygotes replaced after failing to set up a job
        try:
            for k in range(self.workers):
                uid = -1
                if isolate and os.geteuid() == 0:
                    self._leases.append(UidLease(DEFAULT_UID_BASE if uid_base is None else uid_base))
                    uid = self._leases[-1].uid
                cfg = {
                    "isolate": isolate,
                    "hide": hide,
                    "uid": uid,
                    "gid": NOBODY_GID,
                    "hide_paths": hidden,
                    "memory": memory_mb << 20,
                    **self.limits,
                }
                group = None
                if uid >= 0 and cgroup:
                    group = cgroups.SlotCgroup.create(f"slot-{uid}", (memory_mb + tmp_mb) << 20, nproc)
                slot = _Slot(k, cfg, group)
                self._slots.append(slot)
                self._free.put(slot)
        except BaseException:
            self.close()
            raise
        self.isolation_level = "+".join(self._slots[0].zygotes["lean"].layers)
        self.uids = [lease.uid for lease in self._leases]  # the sandbox uids this Executor's children use
        if self.isolation_level != FULL_LEVEL:
            asked_for_all = isolate and hide and cgroup and os.geteuid() == 0
            if asked_for_all and required_isolation(isolation) == "full":
                self.close()
                raise UserError(missing_layers_message(self.isolation_level))
            _warn_once(isolation_note(self.isolation_level))
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="codea1-sandbox")
        # an Executor dropped without close() still stops its zygotes and frees its uids
        self._finalizer = weakref.finalize(self, _release, self._slots, self._leases, os.getpid())

    # -- public API ---------------------------------------------------------------------------------
    @property
    def owner_pid(self) -> int:
        """The process that built this Executor, the only one it runs jobs for: a process forked from it
        shares its zygotes' sockets but not its threads, and must build its own (`run` refuses)."""
        return self._owner

    def __enter__(self) -> LocalExecutor:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self, jobs: list[Job], progress: OnProgress = None, *, one_slot: bool = False, then: Then = None
    ) -> list[JobResult]:
        """Runs all jobs in parallel over the slots; results in input order; progress(done, total);
        then(n, result) as each job ends (its return is kept: see `Executor`).

        one_slot=True runs them one after another on a single slot (in this thread): every job then sees
        the same uid, cgroup and zygote, where jobs whose outcomes are compared with each other must not
        differ in anything but their code and calls (see codea1.eval.mutation).
        """
        if self._closed:
            raise SandboxError("Executor is closed")
        if os.getpid() != self._owner:  # its zygotes' sockets and its threads are the owner's, not a fork's
            raise SandboxError(
                f"this LocalExecutor belongs to process {self._owner}, and process {os.getpid()}, forked "
                "from it, must build its own LocalExecutor"
            )
        jobs = list(jobs)
        total = len(jobs)
        if total == 0:
            return []
        if one_slot:
            worker = self._free.get()
            try:
                out = []
                for n, job in enumerate(jobs):
                    res = self._run_on(worker, job)
                    out.append(then(n, res) if then is not None else res)
                    if progress is not None:
                        progress(len(out), total)
                return out
            finally:
                self._free.put(worker)
        futures = [self._pool.submit(self._run_one, job, n, then) for n, job in enumerate(jobs)]
        if progress is not None:
            done = 0
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                done += len(finished)
                progress(done, total)
        return [f.result() for f in futures]

    def close(self) -> None:
        """Stops the zygotes (and with them anything still running)."""
        if self._closed:
            return
        self._closed = True
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown(wait=True)
        _release(self._slots, self._leases, self._owner)

    # -- internals ----------------------------------------------------------------------------------
    def _run_one(self, job: Job, n: int = 0, then: Then = None) -> JobResult:
        worker = self._free.get()
        try:
            res = self._run_on(worker, job)
        finally:
            self._free.put(worker)
        return then(n, res) if then is not None else res

    def _run_on(self, slot: _Slot, job: Job) -> JobResult:
        try:
            calls = job.calls if type(job.calls) is list else list(job.calls)
            kind = job.flavour if job.flavour in preload.FLAVOURS else None
            kind = kind or (preload.flavour(job.code, calls) if type(job.code) is str else "lean")
            result = self._execute_healing(slot, kind, job)
            if kind == "lean" and preload.needs_full(
                result.defined, result.error, [r.error for r in result.results if r.status == "error"]
            ):
                result = self._execute_healing(slot, "full", job)  # a module the scan did not see
            return result
        except BaseException as exc:
            if not isinstance(exc, Exception) and not isinstance(exc, MemoryError):
                raise  # KeyboardInterrupt, SystemExit: the caller's, not the job's
            err = f"sandbox failure: {type(exc).__name__}: {exc}"[:300]
            try:
                n = len(job.calls)
            except Exception:  # noqa: BLE001
                n = 0
            return JobResult(str(job.id), False, err, [CallResult("invalid", error=err) for _ in range(n)])

    def _execute_healing(self, slot: _Slot, kind: str, job: Job) -> JobResult:
        """Runs the job on the slot's `kind` zygote; a zygote that fails to set the job up (its child
        exits before running any candidate code, or it cannot fork) is replaced and the job run once
        more on the fresh one, so that nothing a job leaves in a zygote can change later verdicts."""
        for attempt in range(2):
            zygote = slot.zygote(kind)
            try:
                return self._execute(zygote, job)
            except _SetupFailed as exc:
                self.restarts += 1
                slot.replace(kind)
                why = str(exc)
                if attempt:
                    err = f"sandbox could not set up the job twice: {why}"[:300]
                    return JobResult(job.id, False, err, [CallResult("invalid", error=err) for _ in job.calls])
        raise AssertionError("unreachable")

    def _execute(self, zygote: _Zygote, job: Job) -> JobResult:
        calls = list(job.calls)
        if type(job.code) is not str:
            err = "Job.code must be a string"
            return JobResult(job.id, False, err, [CallResult("invalid", error=err) for _ in calls])
        n = len(calls)
        sendable = [_shipped(c, "eval") if type(c) is str else None for c in calls]
        results: list[CallResult | None] = [
            None if c is not None else CallResult("invalid", error="not a Python expression") for c in sendable
        ]
        start, first, stdout = 0, True, ""
        limits = job.limits()
        job_t0 = time.monotonic()
        sent = 0  # bytes this job's children have sent so far, over all restarts
        while first or any(r is None for r in results[start:]):
            pending = [i for i in range(start, n) if results[i] is None]
            # a child started again after a call ended the last one sets itself up again first (a compile)
            setup = [i for i in range(min(job.setup_calls, start)) if sendable[i] is not None] if start else []
            if sent >= MAX_JOB_BYTES:
                for i in pending:
                    results[i] = CallResult("crash", error=f"the job's children sent over {MAX_JOB_BYTES >> 20} MB")
                break
            cpu = self.define_timeout + sum(limits[i] for i in (*setup, *pending)) + 1
            run = self._spawn(zygote, job.code, sendable, start, cpu, budget=MAX_JOB_BYTES - sent, setup=setup)
            if run is None:  # the zygote failed to fork: replaced, and the job run again (once)
                raise _SetupFailed("the zygote could not start a child")
            reader, res_r, sender = run
            try:
                why = self._definition_failure(zygote, reader)
                if why is not None:
                    if first:
                        return JobResult(job.id, False, why, [CallResult("invalid", error=why) for _ in calls])
                    for i in pending:
                        results[i] = CallResult("crash", error=f"could not run the code again: {why}")
                    break
                first = False
                sender.send()
                if not self._set_up_again(zygote, reader, setup, pending, results, limits):
                    break
                start, stdout = self._read_calls(zygote, reader, pending, results, limits, job_t0, job.stop)
            finally:
                sent += reader.total
                os.close(res_r)
                sender.close()
        final = [r if r is not None else CallResult("crash", error="no result") for r in results]
        return JobResult(job.id, True, None, final, stdout)

    def _definition_failure(self, zygote: _Zygote, reader: FrameReader) -> str | None:
        """Waits for the child to run the job's code: None once it has defined it, otherwise why not (the
        child is then finished). A child that ends before it set the job up raises _SetupFailed."""
        deadline = time.monotonic() + self.define_timeout + GRACE
        frame = reader.read(deadline)
        started = type(frame) is dict and frame.get("k") == "started"  # set-up done, the job's code next
        if started:
            frame = reader.read(deadline)
        if type(frame) is not dict or frame.get("k") not in ("defined", "undefined"):
            info = zygote.finish()
            if frame == "eof" and info.get("exit") in SETUP_FAILED and not started:
                raise _SetupFailed(f"a child {_signal_name(info)} before running the code")
            return {"timeout": f"timed out after {self.define_timeout:g}s while running the code"}.get(
                frame if type(frame) is str else "", f"crashed while running the code ({_signal_name(info)})"
            )
        if frame["k"] == "undefined":
            zygote.finish(wait=False)
            return str(frame.get("error"))[:300]
        return None

    def _set_up_again(
        self,
        zygote: _Zygote,
        reader: FrameReader,
        setup: list[int],
        pending: list[int],
        results: list[CallResult | None],
        limits: list[float],
    ) -> bool:
        """Reads the results of a child's repeated set-up calls (not recorded: the first child's stand).
        False, with every pending call failed, where one does not return within its limit."""
        cpu, stall = zygote.cpu_clock(), zygote.stall_clock()
        for i in setup:
            frame = _read_call(reader, time.monotonic(), limits[i], cpu, stall)
            if not (type(frame) is dict and frame.get("i") == i and frame.get("k") in ("ok", "error")):
                zygote.finish()
                for j in pending:
                    results[j] = CallResult("crash", error="the job's set-up failed when its child was started again")
                return False
        return True

    def _read_calls(
        self,
        zygote: _Zygote,
        reader: FrameReader,
        pending: list[int],
        results: list[CallResult | None],
        limits: list[float],
        job_t0: float,
        stop: Callable[[int, CallResult], bool] | None = None,
    ) -> tuple[int, str]:
        """Reads the pending calls' results, in order, into `results` (call i within limits[i] seconds). A
        call that does not return in time or in form ends the child, and so does `stop` where it ends the job
        (codea1.sandbox.api.Job.stop: the rest "skipped"). Returns the call the next child starts from (past
        the end once every call returned or was skipped) and the job's stdout (once every call returned; ""
        otherwise)."""
        cpu, stall = zygote.cpu_clock(), zygote.stall_clock()
        for i in pending:
            timeout = limits[i]
            t0 = time.monotonic()
            frame = _read_call(reader, t0, timeout, cpu, stall)
            took = _seconds(frame, time.monotonic() - t0, time.monotonic() - job_t0)
            if type(frame) is dict and frame.get("i") == i and frame.get("k") in ("ok", "error"):
                if frame["k"] == "ok":
                    results[i] = CallResult("ok", values.from_json(frame.get("v")), None, took)
                else:
                    err = frame.get("error")
                    results[i] = CallResult("error", None, err[:300] if type(err) is str else "error", took)
                if _stopped(stop, i, results):
                    zygote.finish()
                    return len(results), ""
                continue
            info = zygote.finish()
            if frame == "timeout":
                results[i] = CallResult("timeout", error=f"no result within {timeout:g}s", seconds=took)
            elif frame == WAITED:
                results[i] = CallResult(
                    "timeout",
                    error=f"waited (slept or blocked) {WALL_BACKSTOP:g}x its {timeout:g}s limit without computing",
                    seconds=took,
                )
            elif frame == "eof" or type(frame) is dict:
                results[i] = CallResult("crash", error=f"child {_signal_name(info)}", seconds=took)
            else:
                results[i] = CallResult("crash", error="malformed result frame", seconds=took)
            return (len(results) if _stopped(stop, i, results) else i + 1), ""
        frame = reader.read(time.monotonic() + 1.0)
        out = frame.get("out") if type(frame) is dict and frame.get("k") == "done" else None
        zygote.finish(wait=False)
        return len(results), out[:4096] if type(out) is str else ""

    def _spawn(
        self,
        zygote: _Zygote,
        code: str,
        calls: list[bytes | str | None],
        start: int,
        cpu: float,
        budget: int = MAX_JOB_BYTES,
        setup: Sequence[int] = (),
    ) -> tuple[FrameReader, int, _CallSender] | None:
        job_r, job_w = os.pipe()
        res_r, res_w = os.pipe()
        # the code first; the calls once the child says its code ran (_CallSender): while the code runs,
        # the candidate cannot read what it will be asked and work on it outside the calls' limits
        payload = _framed(marshal.dumps({"code": _shipped(code, "exec")}))
        # the job goes into its pipe before the fork when it fits, so the child never waits for it
        capacity = 4096  # a pipe holds at least one page: small jobs (most) need no resize
        if len(payload) > capacity:
            try:
                capacity = fcntl.fcntl(job_w, F_SETPIPE_SZ, min(max(len(payload), 1 << 16), 1 << 20))
            except OSError:
                capacity = 1 << 16
        view = memoryview(payload)
        if len(payload) <= capacity:
            view = view[os.write(job_w, view) :]
        try:
            req = {"op": "fork", "cpu_seconds": cpu, "reply": False}
            # no reply (the child's pid): the child's first frame is what matters, and the zygote knows
            # its current child when asked to finish it
            try:
                zygote.request(req, [job_r, res_w], wait=False)
            except (OSError, SandboxError, ValueError):
                zygote.close()
                zygote.start()
                zygote.request(req, [job_r, res_w], wait=False)
        except Exception:  # noqa: BLE001
            for fd in (job_w, res_r):
                os.close(fd)
            return None
        finally:
            os.close(job_r)
            os.close(res_w)
        try:
            while view:
                view = view[os.write(job_w, view) :]
        except OSError:
            pass  # the child died before reading its job: seen as a crash
        calls_message = _framed(
            marshal.dumps(
                {
                    "calls": [c if i >= start or i in setup else None for i, c in enumerate(calls)],
                    "start": start,
                    "setup": list(setup),
                }
            )
        )
        return FrameReader(res_r, budget), res_r, _CallSender(job_w, calls_message)


def _framed(message: bytes) -> bytes:
    """A job-pipe message: its length (4 bytes, big-endian), then the bytes (zygote._read_message)."""
    return len(message).to_bytes(4, "big") + message


class _CallSender:
    """The job pipe's write end, kept open until the calls are sent (after the "defined" frame)."""

    def __init__(self, fd: int, message: bytes) -> None:
        self.fd, self.message = fd, message

    def send(self) -> None:
        if self.fd < 0:
            return
        view = memoryview(self.message)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError:
            pass  # the child is gone: its calls come back as crashes
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


WALL_BACKSTOP = 3.0  # wall-clock limits, in call time limits, of a call that waits instead of computing
WALL_CAP = 20.0  # and of any call, however slowly the machine lets it compute
IDLE_RATE = 0.02  # CPU seconds per wall second below which a late call is waiting (no run-queue clock)
WAITED = "waited"  # _read_call's verdict on a late call that sleeps or blocks instead of computing

Clock = Callable[[], float | None]


def _stopped(stop: Callable[[int, CallResult], bool] | None, i: int, results: list[CallResult | None]) -> bool:
    """Whether the job's `stop` ends it at call i, just ended (asked once per call, and never of the last);
    if so, the calls after i are marked "skipped"."""
    if stop is None or i + 1 >= len(results) or not stop(i, results[i]):
        return False
    for j in range(i + 1, len(results)):
        if results[j] is None:  # (a call that was no expression is "invalid" already)
            results[j] = CallResult("skipped", error=f"not run: the job stopped at call {i}")
    return True


def _read_call(
    reader: FrameReader, t0: float, timeout: float, cpu: Clock | None, stall: Callable[[], Clock | None] | None = None
) -> dict | str:
    """The next frame of a call that started at t0, "timeout", or WAITED.

    With the slot's CPU clock (its cgroup counts the job's CPU time), the limit is on CPU time, as trusted
    judges decide it, so an honest call slowed by a loaded machine is not a timeout. A call late on the
    wall clock times out once the job has used `timeout` seconds of CPU since it started, or at WALL_CAP
    limits of wall time in any case. One that has stopped computing (it sleeps or blocks) is cut at
    WALL_BACKSTOP limits and reported as WAITED: with the run-queue clock (`stall`, started when the call
    is late), once the time it has spent late neither computing nor waiting for a core reaches
    WALL_BACKSTOP - 1 limits, counted over the whole late span (a call that computes in short bursts
    between sleeps adds up); without it, when its CPU rate over the last look is under IDLE_RATE, which a
    starved call cannot be told from. A call that returns in time but used more than its limit (plus
    GRACE) of CPU, its work split over helper processes, times out too. Without the CPU clock, the wall
    clock decides (limit plus GRACE).
    """
    start = cpu() if cpu is not None else None
    frame = reader.read(t0 + timeout + GRACE)
    if start is None:
        return frame
    if type(frame) is dict:  # in time on the wall clock; but work split over helper processes is CPU too
        used = cpu()
        return "timeout" if used is not None and used - start > timeout + GRACE else frame
    backstop, cap = t0 + WALL_BACKSTOP * timeout + GRACE, t0 + WALL_CAP * timeout + GRACE
    late_wall, late_cpu = time.monotonic(), cpu()
    stalled = stall() if stall is not None else None
    last_cpu, last_wall = late_cpu, late_wall
    while frame == "timeout":
        used, wall = cpu(), time.monotonic()
        if used is None or used - start >= timeout or wall >= cap:
            return "timeout"
        waited = _late_wait(wall - late_wall, used - late_cpu if late_cpu is not None else 0.0, stalled)
        if waited is not None and waited >= (WALL_BACKSTOP - 1.0) * timeout:
            return WAITED
        if waited is None and wall >= backstop and used - last_cpu < IDLE_RATE * (wall - last_wall):
            return WAITED  # waiting, not starved: the wall clock decides
        last_cpu, last_wall = used, wall
        # look again when the rest of the CPU allowance could have been used (at most every quarter second)
        frame = reader.read(min(cap, wall + min(0.25, max(0.05, timeout - (used - start)))))
    return frame


def _late_wait(late: float, computed: float, stalled: Clock | None) -> float | None:
    """Seconds of a late span spent neither computing nor waiting for a core (sleeping, blocked), from the
    run-queue clock; None without one."""
    queued = stalled() if stalled is not None else None
    return None if queued is None else late - computed - queued


def _seconds(frame: dict | str, took: float, elapsed: float) -> float:
    """A call's duration: the child's own measure (a frame's wait in the pipe, while the parent read
    earlier frames, is not the call's), never more than the job has run on the parent's clock (`elapsed`:
    a test's code can run in GT's child too and claim any figure there); else the parent's."""
    s = frame.get("s") if type(frame) is dict else None
    return min(float(s), elapsed) if type(s) is float and s >= 0.0 else took


def _release(workers: list[_Slot], leases: list[UidLease], owner: int | None = None) -> None:
    if owner is not None and os.getpid() != owner:
        return  # a forked copy of the owning process must not stop the owner's zygotes
    for worker in workers:
        worker.close()
    for lease in leases:
        lease.release()


_LEVEL_CACHE: str | None = None


ISOLATION_CHOICES = ("full", "available")


def required_isolation(isolation: str | None) -> str:
    """The isolation an Executor requires: `isolation`, else $CODEA1_SANDBOX_ISOLATION, else "full"."""
    value = isolation or os.environ.get("CODEA1_SANDBOX_ISOLATION") or "full"
    if value not in ISOLATION_CHOICES:
        raise UserError(f"sandbox isolation must be one of {', '.join(ISOLATION_CHOICES)}, not {value!r}")
    return value


def isolation_report(level: str | None = None) -> str:
    """Every isolation layer, on or missing (and what it needs), on this machine (or at `level`)."""
    return layers_report(isolation_level() if level is None else level)


def isolation_level() -> str:
    """The isolation level a default Executor gets on this machine (probed once, then cached).

    "netns+mntns+uid+rlimits" when running as root with namespaces; weaker strings on fallback, e.g.
    "netns+rlimits" (unprivileged user namespace) or "rlimits".
    """
    global _LEVEL_CACHE
    if _LEVEL_CACHE is None:
        group = cgroups.SlotCgroup.create(f"probe-{os.getpid()}", 256 << 20, 32)
        try:
            slot = _Zygote(0, {"isolate": True, "uid": -1, "gid": NOBODY_GID, "hide_paths": []}, group)
            try:
                _LEVEL_CACHE = "+".join(slot.layers)
            finally:
                slot.close()
        finally:
            if group is not None:
                group.close()
    return _LEVEL_CACHE
