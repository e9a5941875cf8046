"""Per-job jail: the namespaces, the private /tmp and the seccomp filter each forked child enters.

Used by the zygote (codea1.sandbox.zygote), which runs as root:

- `new_pid_namespace_for_next_fork` / `restore_pid_namespace`: the zygote's next child becomes PID 1 of
  a PID namespace of its own, so it sees only its own job's processes, and when it ends the kernel kills
  every process of the job (nothing a job starts can outlive it).
- `enter_job_namespaces` (in the child, still root): its own mount and IPC namespaces, a fresh
  size- and inode-capped tmpfs on /tmp (its working directory, owned by the job's uid) and a fresh /proc
  of its PID namespace. All of it disappears with the job's last process: SysV IPC objects, message
  queues, files; nothing one job writes can be read by another job or by the zygote.
- `seccomp_programs` (built once in the zygote with libseccomp, through pyseccomp; the zygote loads the
  larger part on itself, each child the rest after its set-up, see there) and `load_seccomp`: deny the system calls candidate code never
  needs: namespaces (unshare, setns, clone with a namespace flag; clone3 reports ENOSYS so that the C
  library falls back to clone, whose flags a filter can see), mount and friends, ptrace and cross-process
  memory access, keyrings, bpf, perf_event_open, userfaultfd, io_uring, kexec, modules, reboot, swap,
  accounting, quotas, file handles. They fail with EPERM (an ordinary error for the candidate).
"""

from __future__ import annotations

import ctypes
import errno
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NEWTIME = 0x00000080
NAMESPACE_FLAGS = (
    CLONE_NEWNS,
    CLONE_NEWCGROUP,
    CLONE_NEWUTS,
    CLONE_NEWIPC,
    CLONE_NEWUSER,
    CLONE_NEWPID,
    CLONE_NEWNET,
    CLONE_NEWTIME,
)
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 36, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2

# system calls candidate code never needs; each fails with EPERM
DENIED = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "quotactl",
    "quotactl_fd",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    "syslog",
    "vhangup",
    "iopl",
    "ioperm",
    "fanotify_init",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    "personality",
    "landlock_create_ruleset",
    # a scheduling class of its own (SCHED_IDLE on a busy core) let a call wait for a core without its
    # clocks counting it as waiting: a 0.5 s limit took 6 s of the parent's wall time (round 6)
    "sched_setscheduler",
    "sched_setattr",
    # file locks and file-access watches: the root's read-only files are the same inodes in every job, so a
    # lock or a watch on one is a channel between jobs running at the same time (one candidate publishing
    # what it computed, another reading it); fcntl's record locks are denied by FCNTL_LOCKS
    "flock",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    # an anonymous in-memory file is a file on no mount: executing it ran a program the mounts forbid (a
    # Python job may execute nothing of its /tmp, yet ran an ELF it wrote into a memfd)
    "memfd_create",
)

# fcntl's record-lock commands (F_GETLK, F_SETLK, F_SETLKW and their open-file-description forms), denied
# for the same reason
FCNTL_LOCKS = (5, 6, 7, 36, 37, 38)

# socket families candidate code may open (the rest, AF_VSOCK, AF_PACKET, AF_BLUETOOTH, AF_ALG, ... reach
# kernel code an empty network namespace does not fence off): socket() and socketpair() fail with EPERM
SOCKET_FAMILIES = {1: "AF_UNIX", 2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK"}
AF_MAX = 64  # above Linux's AF_MAX (46 in 6.x); the kernel refuses larger families itself

_libc = ctypes.CDLL(None, use_errno=True)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


# what the zygote and each child, before it runs candidate code, still need of DENIED: a child's own
# namespaces and mounts are set up after the fork (see enter_job_namespaces)
SETUP = ("unshare", "setns", "mount")


def seccomp_programs() -> tuple[tuple[object, object], tuple[object, object]] | None:
    """(the zygote's filter, each child's filter), or None where libseccomp (pyseccomp) is unavailable.

    The filter is split in two because attaching one costs the kernel time in proportion to its size
    (it precomputes which calls it always allows): the zygote carries everything of DENIED but SETUP,
    once, and every child inherits it at no cost; a child adds the few SETUP calls after its set-up.
    """
    zygote = seccomp_program(tuple(n for n in DENIED if n not in SETUP), clone=True)
    child = seccomp_program(SETUP, clone=False)
    return None if zygote is None or child is None else (zygote, child)


def seccomp_program(denied: tuple[str, ...] = DENIED, clone: bool = True) -> tuple[object, object] | None:
    """A filter denying `denied` (and, with clone=True, clone with a namespace flag, clone3 as ENOSYS), as
    a ready `struct sock_fprog` (and the buffer it points into); None where libseccomp is unavailable.
    Built once; a process only hands it to the kernel (one prctl)."""
    try:
        import pyseccomp as sc
    except Exception:  # noqa: BLE001  (OSError: no libseccomp.so; ImportError: no pyseccomp)
        return None
    try:
        filt = sc.SyscallFilter(defaction=sc.ALLOW)
        deny = sc.ERRNO(errno.EPERM)
        for name in denied:
            try:
                filt.add_rule(deny, name)
            except (OSError, ValueError):  # a call this kernel or architecture does not have
                continue
        if clone:
            for family in range(AF_MAX):
                if family not in SOCKET_FAMILIES:
                    for call in ("socket", "socketpair"):
                        filt.add_rule(deny, call, sc.Arg(0, sc.EQ, family))
            for command in FCNTL_LOCKS:
                filt.add_rule(deny, "fcntl", sc.Arg(1, sc.EQ, command))
            for flag in NAMESPACE_FLAGS:  # clone with any namespace flag (fork/threads pass none)
                filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
            filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")  # flags behind a pointer: libc falls back to clone
        r, w = os.pipe()
        try:
            with os.fdopen(w, "wb", closefd=False) as f:
                filt.export_bpf(f)
            os.close(w)
            w = -1
            data = b""
            while True:
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
    except Exception:  # noqa: BLE001
        return None
    if not data or len(data) % 8:
        return None
    buf = ctypes.create_string_buffer(data, len(data))
    prog = _SockFprog(len(data) // 8, ctypes.addressof(buf))
    return prog, buf


def load_seccomp(program: tuple[object, object]) -> bool:
    """Puts the filter on the calling process (no_new_privs must be set); inherited by all it starts."""
    return _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program[0]), 0, 0) == 0


def own_pid_namespace() -> int:
    """A file descriptor of the caller's PID namespace (to come back to after each child), or -1."""
    try:
        return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return -1


def new_pid_namespace_for_next_fork() -> bool:
    """The next child of the caller becomes PID 1 of a new PID namespace (the caller stays where it is)."""
    return _libc.unshare(CLONE_NEWPID) == 0


def restore_pid_namespace(fd: int) -> bool:
    """Later children of the caller are born in its own PID namespace again."""
    return _libc.setns(fd, CLONE_NEWPID) == 0


def unshare(flags: int) -> bool:
    """unshare(2) of the namespaces in `flags` for the caller; False when the kernel refuses."""
    return _libc.unshare(flags) == 0


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> bool:
    """mount(2); False when the kernel refuses."""
    return (
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        )
        == 0
    )


def enter_job_namespaces(uid: int, gid: int, tmp_bytes: int, tmp_inodes: int, exec_tmp: bool = False) -> None:
    """In the child, as root: own mount and IPC namespaces, a fresh capped /tmp, a fresh /proc, and SysV
    shared memory capped at the size of that /tmp (cap_sysv_shm). The /tmp is mounted noexec unless
    `exec_tmp` (a job that compiles a program and runs it: codea1.sandbox.runners).

    (The UTS namespace is the zygote's own: children cannot change the hostname, having neither the
    capability nor, with the filter, the system call.)

    Raises OSError on any failure (the child then exits as a set-up failure, and the parent replaces
    the zygote and runs the job once more).
    """
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare")
    owner = f",uid={uid},gid={gid}" if uid >= 0 else ""
    if not mount(
        "tmpfs",
        "/tmp",
        "tmpfs",
        MS_NOSUID | MS_NODEV | (0 if exec_tmp else MS_NOEXEC),
        f"size={max(1, tmp_bytes >> 10)}k,nr_inodes={tmp_inodes},mode=0700{owner}",
    ):
        raise OSError(ctypes.get_errno(), "mount /tmp")
    if not mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None):
        raise OSError(ctypes.get_errno(), "mount /proc")
    cap_sysv_shm(tmp_bytes)


def cap_sysv_shm(limit: int) -> bool:
    """Caps the SysV shared memory of the caller's (new) IPC namespace at `limit` bytes in all, the size
    of the job's /tmp: such memory outlives the job's processes until its namespace is freed, and a job
    that filled its slot's memory with it got the next jobs of the slot killed for want of memory. The
    limits are per IPC namespace (shmmax, shmall); best effort: False when the kernel refuses."""
    page = os.sysconf("SC_PAGE_SIZE")
    ok = True
    for name, value in (("shmmax", max(limit, page)), ("shmall", max(1, limit // page))):
        try:
            fd = os.open(f"/proc/sys/kernel/{name}", os.O_WRONLY)
            try:
                os.write(fd, str(value).encode())
            finally:
                os.close(fd)
        except OSError:
            ok = False
    return ok


def enter_user_namespace() -> bool:
    """Unprivileged: a new user namespace mapping only the caller's own uid and gid onto themselves.

    The caller then holds every capability inside it (to set up namespaces and mounts for its children),
    none outside; children must drop them (`drop_capabilities`) before running candidate code.
    """
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(CLONE_NEWUSER) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    except OSError:
        return False
    return True


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> bool:
    """Empties the calling process's capability sets (effective, permitted, inheritable)."""
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    return _libc.capset(ctypes.byref(header), data) == 0
