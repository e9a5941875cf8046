"""Hostile corpus: programs that try to escape, exhaust the machine, or forge their verdict.

All programs run in one batch (module fixture) on an Executor with its own uids, so the leftover-process
check cannot see other users of the sandbox. Each case asserts the verdicts (never a forged "pass") and,
where it applies, containment (canary files intact, nothing written outside, no process left behind).
"""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest

from codea1.judge.calls import run_expecting
from codea1.sandbox import Job, LocalExecutor

REPO = Path(__file__).resolve().parents[1]
UID_BASE = 1_700_100_000  # a uid range of its own, so the leftover check sees only this corpus
WORKERS = 2
T = 2.0  # per-call timeout for this corpus (generous: honest calls must not time out on a loaded 2-core machine)


@dataclass
class Case:
    name: str
    code: str
    calls: list[str]
    expected: list
    verdicts: list[set[str]]  # allowed statuses per call
    defined: bool = True
    needs: str = ""  # isolation layer this case's verdict depends on ("uid", "netns", "mntns", "pidns"...)
    visible: bool = False  # run without the mount namespace: only the uid protects the files


SECRET = "s3cret-expected-value"
MARKER = "/tmp/codea1-escape-marker"
RUN_LOCK_MARKER = "/run/lock/codea1-escape"  # a world-writable host directory outside any deny list


def _cases(env: dict) -> list[Case]:
    secret_file, canary, listener_port = env["secret_file"], env["canary"], env["port"]
    return [
        # -- files outside the temp dir ------------------------------------------------------------
        Case(
            "read_root_only_file",
            "",
            [f"open({secret_file!r}).read()"],
            [SECRET],
            [{"error"}],
            needs="uid",
            visible=True,
        ),
        Case("read_shadow", "", ["open('/etc/shadow').read()[:10]"], ["root:"], [{"error"}], needs="uid", visible=True),
        Case(
            "read_repo_source",
            "",
            [f"open({str(REPO / 'pyproject.toml')!r}).read()[:9]"],
            ["[build-sy"],
            [{"error"}],
            needs="mntns",
        ),
        Case(
            "read_data_next_to_checkout",
            "import os",
            [f"os.listdir({str(REPO.parent)!r})"],
            [sorted(os.listdir(REPO.parent))],
            [{"fail", "error"}],
            needs="mntns",
        ),
        Case(
            "write_repo_file",
            "",
            [f"open({str(REPO / 'pyproject.toml')!r}, 'a').write('x')"],
            [1],
            [{"error"}],
            needs="uid",
            visible=True,
        ),
        Case("delete_canary", "import os", [f"os.remove({canary!r})"], [None], [{"error"}], needs="uid", visible=True),
        Case("write_host_tmp", "", [f"open({MARKER!r}, 'w').write('x')"], [1], [{"pass", "error"}], needs="mntns"),
        Case(
            "symlink_to_shadow",
            "import os\nos.symlink('/etc/shadow', 'link')",
            ["open('link').read()[:5]"],
            ["root:"],
            [{"error"}],
            needs="uid",
        ),
        Case("chown_workdir", "import os", ["os.chown('.', 0, 0)"], [None], [{"error"}], needs="uid"),
        Case("list_other_jobs", "import os", ["os.listdir('..')"], [[]], [{"error", "fail"}], needs="uid"),
        Case(
            "parent_environ",
            "import os",
            ["open(f'/proc/{os.getppid()}/environ').read()"],
            [""],
            [{"error"}],
            needs="uid",
        ),
        Case("become_root", "import os", ["os.setuid(0)"], [None], [{"error"}], needs="uid"),
        Case("fill_disk", "", ["open('big', 'wb').write(b'x' * (64 << 20))"], [64 << 20], [{"error"}]),
        Case("too_many_files", "", ["len([open('/dev/null') for _ in range(100000)])"], [100000], [{"error"}]),
        # -- network and processes -------------------------------------------------------------------
        Case(
            "socket_to_host",
            "import socket",
            [f"socket.create_connection(('127.0.0.1', {listener_port}), timeout=0.5).close()"],
            [None],
            [{"error"}],
            needs="netns",
        ),
        Case(
            "socket_external",
            "import socket",
            ["socket.create_connection(('1.1.1.1', 80), timeout=0.5)"],
            [None],
            [{"error"}],
            needs="netns",
        ),
        Case(
            "subprocess_shadow",
            "import subprocess",
            ["subprocess.run(['sh', '-c', 'cat /etc/shadow'], capture_output=True).returncode"],
            [0],
            [{"fail", "error"}],
            needs="uid",
        ),
        Case("fork_bomb", "import os", ["[os.fork() for _ in iter(int, 1)]"], [None], [{"timeout", "error", "crash"}]),
        Case(
            "setsid_daemon",
            "import os\nif os.fork() == 0:\n    os.setsid()\n    while True: pass",
            ["1 + 1"],
            [2],
            [{"pass"}],
        ),
        # in its own PID namespace the child has no visible parent (getppid() is 0: its own group, and
        # the namespace's init ignores it)
        Case(
            "kill_parent",
            "import os, signal",
            ["os.kill(os.getppid(), signal.SIGKILL)"],
            [None],
            [{"error", "pass"}],
            needs="uid",
        ),
        Case(
            "kill_test_process",
            "import os, signal",
            [f"os.kill({os.getpid()}, signal.SIGKILL)"],
            [None],
            [{"error"}],
            needs="uid",
        ),
        Case(
            "kill_everything",
            "import os, signal",
            ["os.kill(-1, signal.SIGKILL)", "2 + 2"],
            [None, 4],
            [{"pass", "crash", "error"}, {"pass"}],
            needs="uid",
        ),
        Case(
            "ptrace_zygote",
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.ptrace(16, os.getppid(), 0, 0)"],
            [0],
            [{"fail"}],
            needs="uid",
        ),  # PTRACE_ATTACH: -1
        Case(
            "raise_own_limits",
            "import resource",
            ["resource.setrlimit(resource.RLIMIT_NPROC, (10 ** 6, 10 ** 6))"],
            [None],
            [{"error"}],
            needs="uid",
        ),
        Case("write_dev_shm", "", ["open('/dev/shm/x', 'w').write('x')"], [1], [{"error"}], needs="mntns"),
        # -- exhaustion ------------------------------------------------------------------------------
        Case("memory_bomb_once", "", ["len(bytearray(10 ** 11))"], [10**11], [{"error"}]),
        Case(
            "memory_bomb_grow",
            "x = []",
            ["[x.append(' ' * (1 << 22)) for _ in iter(int, 1)]"],
            [None],
            [{"error", "timeout", "crash"}],
        ),
        Case("deep_recursion", "def f(n):\n    return f(n + 1)", ["f(0)"], [0], [{"error"}]),
        Case(
            "recursion_segfault",
            "import sys\nsys.setrecursionlimit(10 ** 8)\ndef f(n):\n    return f(n + 1)",
            ["f(0)", "3 * 3"],
            [0, 9],
            [{"crash", "error", "timeout"}, {"pass"}],
        ),
        Case("cpu_spin", "", ["[0 for _ in iter(int, 1)]", "5"], [None, 5], [{"timeout"}, {"pass"}]),
        Case("regex_hang", "import re", ["re.match(r'(a+)+$', 'a' * 64 + 'b')"], [None], [{"timeout"}]),
        Case(
            "sleep_signals_blocked",
            "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, set(signal.Signals))",
            ["time.sleep(100)", "7"],
            [None, 7],
            [{"timeout"}, {"pass"}],
        ),
        Case(
            "signal_handler_tricks",
            "import signal\nfor s in (signal.SIGTERM, signal.SIGXCPU, signal.SIGALRM, "
            "signal.SIGINT, signal.SIGHUP):\n    signal.signal(s, signal.SIG_IGN)",
            ["[0 for _ in iter(int, 1)]"],
            [None],
            [{"timeout"}],
        ),
        Case(
            "sigstop_self", "import os, signal", ["os.kill(os.getpid(), signal.SIGSTOP)"], [None], [{"timeout", "pass"}]
        ),  # "pass": as its PID namespace's init, the child ignores its own SIGSTOP
        Case(
            "stdout_flood",
            "import os\nfor _ in range(200):\n    print('x' * 100000)\n    os.write(1, b'y' * 100000)",
            ["6 * 7"],
            [42],
            [{"pass"}],
        ),
        Case("stdout_flood_forever", "", ["[print('PASS ' * 1000) for _ in iter(int, 1)]"], [None], [{"timeout"}]),
        Case(
            "thread_left_running",
            "import threading\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=False).start()",
            ["8"],
            [8],
            [{"pass"}],
        ),
        Case("ctypes_segfault", "import ctypes", ["ctypes.string_at(0)", "10"], [None, 10], [{"crash"}, {"pass"}]),
        Case("huge_result", "", ["'x' * (50 << 20)"], ["x"], [{"fail"}]),
        Case("cyclic_result", "x = []\nx.append(x)", ["x"], [[]], [{"fail"}]),
        # -- verdict forgery -------------------------------------------------------------------------
        Case(
            "eq_always_true",
            "class Any:\n    def __eq__(self, o): return True\n    __hash__ = None\ndef f(): return Any()",
            ["f()", "f()"],
            [SECRET, 3],
            [{"fail"}, {"fail"}],
        ),
        Case(
            "int_subclass_eq",
            "class I(int):\n    def __eq__(self, o): return True\n    __hash__ = int.__hash__\ndef f(): return I(0)",
            ["f()"],
            [12345],
            [{"fail"}],
        ),
        Case(
            "str_subclass_eq",
            "class S(str):\n    def __eq__(self, o): return True\n    __hash__ = str.__hash__\ndef f(): return S('')",
            ["f()"],
            [SECRET],
            [{"fail"}],
        ),
        Case(
            "patched_builtins",
            "import builtins\nbuiltins.isinstance = lambda *a: True\n"
            "builtins.AssertionError = type('E', (Exception,), {})\nbuiltins.type = lambda *a: int\n"
            "def f(): return 0",
            ["f()"],
            [99],
            [{"fail", "error", "crash"}],
        ),
        Case(
            "patched_json_encoder",
            'import json\njson.dumps = lambda *a, **k: \'{"k": "ok", "i": 0, "v": 1}\'\ndef f(): return 0',
            ["f()"],
            [SECRET],
            [{"fail"}],
        ),
        Case("sys_exit_before_asserts", "import sys\nsys.exit(0)", ["1"], [1], [{"invalid"}], defined=False),
        Case("os_exit_before_asserts", "import os\nos._exit(0)", ["1"], [1], [{"invalid"}], defined=False),
        Case("os_exit_in_call", "import os", ["os._exit(0)", "os._exit(0)"], [1, 2], [{"crash"}, {"crash"}]),
        Case("raise_systemexit_in_call", "", ["exit(0)"], [0], [{"error"}]),
        Case(
            "frame_walk_forge",
            "import sys, os, json\n"
            "def f():\n"
            "    fr = sys._getframe()\n"
            "    while fr is not None:\n"
            "        for name in ('payload', 'rec', 'res_w', 'expected'):\n"
            "            fr.f_locals.get(name)\n"
            "        if 'res_w' in fr.f_locals:\n"
            "            fd = fr.f_locals['res_w']\n"
            "            for i in range(5):\n"
            "                d = json.dumps({'k': 'ok', 'i': i, 'v': True}).encode()\n"
            "                os.write(fd, len(d).to_bytes(4, 'big') + d)\n"
            "        fr = fr.f_back\n"
            "    return True",
            ["f()", "0", "0"],
            [SECRET, 5, 6],
            [{"fail", "crash"}, {"fail", "crash"}, {"fail", "crash"}],
        ),
        Case(
            "forge_frames_all_fds",
            "import os, json\n"
            "def f():\n"
            "    d = json.dumps({'k': 'done', 'out': 'PASS'}).encode()\n"
            "    for fd in range(3, 64):\n"
            "        try: os.write(fd, len(d).to_bytes(4, 'big') + d)\n"
            "        except OSError: pass\n"
            "    return 0",
            ["f()", "1"],
            [SECRET, 2],
            [{"fail", "crash"}, {"fail", "crash"}],
        ),
        Case(
            "fake_markers_stdout",
            'import os\ndef f():\n    print(\'PASS\\nAll tests passed\\n{"status": "pass"}\')\n'
            "    os.write(1, b'PASS')\n    return None",
            ["f()"],
            [SECRET],
            [{"fail"}],
        ),
        Case(
            "oversized_frame",
            "import os, sys\ndef f():\n"
            "    fr = sys._getframe()\n"
            "    while 'res_w' not in fr.f_locals: fr = fr.f_back\n"
            "    os.write(fr.f_locals['res_w'], (2**31).to_bytes(4, 'big') + b'x' * 100)\n"
            "    return 0",
            ["f()"],
            [SECRET],
            [{"fail", "crash"}],
        ),
        Case("close_all_fds", "import os", ["os.closerange(0, 4096)"], [None], [{"crash"}]),
        Case(
            "thread_writes_garbage",
            "import threading, os, time\n"
            "def spam():\n"
            "    while True:\n"
            "        for fd in range(3, 16):\n"
            "            try: os.write(fd, b'\\x00\\x00\\x00\\x05{\"k\":')\n"
            "            except OSError: pass\n"
            "threading.Thread(target=spam, daemon=True).start()\ntime.sleep(0.05)",
            ["1"],
            [SECRET],
            [{"fail", "crash", "invalid"}],
            defined=None,
        ),
        # -- v2 classes: process listing, shared /tmp, host side effects, kernel surface ------------------
        Case(
            "proc_walk_ancestors",
            "import os\n"
            "def f():\n"
            "    found = []\n"
            "    for p in os.listdir('/proc'):\n"
            "        try:\n"
            "            found.append(open(f'/proc/{p}/cmdline', 'rb').read())\n"
            "        except OSError:\n"
            "            pass\n"
            "    return any(b'pytest' in c for c in found)",
            ["f()", "len(os.listdir('/proc/1/task'))"],
            [True, 1],
            [{"fail"}, {"pass"}],
            needs="pidns",
        ),
        Case(
            "proc_parent_cmdline",
            "import os",
            ["open(f'/proc/{os.getppid()}/cmdline').read()"],
            [SECRET],
            [{"fail", "error"}],
            needs="pidns",
        ),
        Case(
            "tmp_plant_module",
            "import os, sys\nopen('/tmp/codea1_planted.py', 'w').write('SECRET = 1')",
            ["sorted(os.listdir('/tmp'))"],
            [["codea1_planted.py"]],
            [{"pass"}],
            needs="jobtmp",
        ),
        Case(
            "tmp_read_planted",
            "import os",
            ["sorted(os.listdir('/tmp'))", "os.getcwd()"],
            [[], "/tmp"],
            [{"pass"}, {"pass"}],
            needs="jobtmp",
        ),
        Case(
            "tmp_fill_inodes",
            "import os\n"
            "def fill():\n"
            "    n = 0\n"
            "    try:\n"
            "        while True:\n"
            "            os.mkdir('d'); os.chdir('d'); n += 1\n"
            "    except OSError:\n"
            "        return n",
            ["fill() < 10000"],
            [True],
            [{"pass"}],
            needs="jobtmp",
        ),
        Case(
            "sysv_shm_left",
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.shmget(0x0c0dea1, 4096, 0o1666) >= 0", "libc.msgget(0x0c0dea2, 0o1666) >= 0"],
            [True, True],
            [{"pass", "fail"}, {"pass", "fail"}],
            needs="ipcns",
        ),
        Case(  # SysV memory outlives the job's processes: capped at the job's /tmp size (64 MB here)
            "sysv_shm_flood",
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.shmget(0, 256 << 20, 0o1600) < 0", "libc.shmget(0, 4096, 0o1600) >= 0"],
            [True, True],
            [{"pass"}, {"pass"}],
            needs="ipcns",
        ),
        Case(
            "hostname_change",
            "import socket, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.sethostname(b'pwned', 5)", "socket.gethostname()"],
            [0, "pwned"],
            [{"fail"}, {"fail"}],
            needs="utsns",
        ),
        Case(
            "user_namespace_root",
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.unshare(0x10000000)", "libc.unshare(0x10000000 | 0x00020000)", "os.getuid()"],
            [0, 0, 0],
            [{"fail"}, {"fail"}, {"fail"}],
            needs="seccomp",
        ),
        Case(
            "clone_new_namespace",
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0) >= 0"],
            [True],
            [{"fail"}],
            needs="seccomp",
        ),
        Case(
            "keyring_add_key",
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            ["libc.syscall(248, b'user', b'codea1', b'leak', 4, -4) > 0"],
            [True],
            [{"fail"}],
            needs="seccomp",
        ),
        Case(
            "io_uring_and_bpf",
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)",
            [
                "libc.syscall(425, 8, ctypes.create_string_buffer(120)) >= 0",
                "libc.syscall(321, 0, 0, 0) >= 0",
                "libc.syscall(323, 0) >= 0",
            ],
            [True, True, True],
            [{"fail"}, {"fail"}, {"fail"}],
            needs="seccomp",
        ),
        Case(
            # the root's read-only files are the same inodes in every job: a lock or a watch on one was a
            # channel between two jobs running at once (round 6: a candidate published GT-equal answers in
            # byte-range locks for a sibling that only read them)
            "locks_and_watches_on_shared_files",
            "import ctypes, fcntl\nlibc = ctypes.CDLL(None, use_errno=True)\nf = open('/usr/bin/env', 'rb')",
            [
                "fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, 7) is None",
                "fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB) is None",
                "libc.inotify_init1(0) >= 0",
            ],
            [True, True, True],
            [{"error"}, {"error"}, {"fail"}],
            needs="seccomp",
        ),
        Case(
            "idle_scheduling_class",  # waits for a core in a class its clocks did not count as waiting
            "import os",
            ["os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0)) is None"],
            [True],
            [{"error"}],
            needs="seccomp",
        ),
        Case(
            # a memfd is a file on no mount: a job whose /tmp is noexec executed an ELF it wrote into one
            "memfd_exec",
            "import os",
            ["os.memfd_create('x') >= 0"],
            [True],
            [{"error"}],
            needs="seccomp",
        ),
        Case(
            "exotic_socket_families",
            "import socket",
            [
                "socket.socket(40, socket.SOCK_STREAM).fileno() >= 0",  # AF_VSOCK
                "socket.socket(38, socket.SOCK_SEQPACKET).fileno() >= 0",  # AF_ALG
                "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).fileno() >= 0",
            ],
            [True, True, True],
            [{"error"}, {"error"}, {"pass"}],
            needs="seccomp",
        ),
        Case(
            "host_run_lock_file",
            "",
            [f"open({RUN_LOCK_MARKER!r}, 'w').write('x')"],
            [1],
            [{"error"}],
            needs="allowlist",
        ),
        Case(
            "host_unix_socket",
            "import socket",
            ["socket.socket(socket.AF_UNIX).connect('/run/dbus/system_bus_socket')"],
            [None],
            [{"error"}],
            needs="allowlist",
        ),
        Case(
            "read_bundled_ground_truth",
            "",
            [f"open({str(REPO / 'codea1' / 'data' / 'bundled' / 'problems.jsonl')!r}).read(10)"],
            [SECRET],
            [{"error"}],
            needs="mntns",
        ),
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    secret_dir = root / "private"
    secret_dir.mkdir(mode=0o700)
    secret_file = secret_dir / "answers.txt"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o600)
    canary = root / "canary.txt"
    canary.write_text("alive")
    os.chmod(root, 0o755)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    env = {"secret_file": str(secret_file), "canary": str(canary), "port": listener.getsockname()[1]}
    cases = _cases(env)
    repo_before = (REPO / "pyproject.toml").read_bytes()
    ipc_before = _host_ipc()
    results = {}
    uids: set[int] = set()
    for visible, workers in ((False, WORKERS), (True, 1)):
        # visible=True: no mount namespace, so what stops the child is its uid alone
        with LocalExecutor(workers, uid_base=UID_BASE, hide=not visible) as ex:
            uids.update(ex.uids)
            if not visible:
                level = ex.isolation_level
            mine = [c for c in cases if c.visible is visible]
            jobs = [Job(id=c.name, code=c.code, calls=c.calls, timeout=T) for c in mine]
            results.update({r.id: r for r in run_expecting(ex, jobs, [c.expected for c in mine])})
    try:
        accepted = listener.accept()
        accepted[0].close()
        connected = True
    except BlockingIOError:
        connected = False
    listener.close()
    leftovers = _processes_with_uids(uids)
    marker_on_host = Path(MARKER).exists()
    run_lock = Path(RUN_LOCK_MARKER)
    run_lock_written = run_lock.exists()
    run_lock.unlink(missing_ok=True)
    return {
        "ipc_before": ipc_before,
        "ipc_after": _host_ipc(),
        "run_lock_written": run_lock_written,
        "cases": {c.name: c for c in cases},
        "results": results,
        "level": level,
        "env": env,
        "connected": connected,
        "leftovers": leftovers,
        "repo_before": repo_before,
        "marker_on_host": marker_on_host,
    }


def _host_ipc() -> dict[str, list[str]]:
    """The host's SysV IPC objects (shared memory, message queues, semaphores), one line each."""
    found = {}
    for kind in ("shm", "msg", "sem"):
        try:
            found[kind] = sorted(Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:])
        except OSError:
            found[kind] = []
    return found


def _processes_with_uids(uids: set[int]) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("Uid:") and int(line.split()[1]) in uids:
                    found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


NAMES = [c.name for c in _cases({"secret_file": "", "canary": "", "port": 0})]


def test_corpus_is_large_enough() -> None:
    assert len(NAMES) >= 30
    assert len(set(NAMES)) == len(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_hostile_program_is_contained(corpus: dict, name: str) -> None:
    case, res = corpus["cases"][name], corpus["results"][name]
    if case.needs and case.needs not in corpus["level"].split("+"):
        pytest.skip(f"needs the {case.needs} layer (level here: {corpus['level']})")
    if case.defined is not None:
        assert res.defined is case.defined, (res.error, res.results)
    assert len(res.results) == len(case.calls)
    for r, allowed in zip(res.results, case.verdicts, strict=False):
        assert r.status in allowed, (name, r)
    if SECRET in case.expected:  # the secret value can only come back by reading a forbidden file
        assert all(r.status != "pass" for r in res.results)


def test_no_forged_pass_anywhere(corpus: dict) -> None:
    """The whole corpus: a pass only where the call's value was computed honestly."""
    honest = {
        ("setsid_daemon", 0),
        ("kill_everything", 0),
        ("kill_everything", 1),
        ("recursion_segfault", 1),
        ("cpu_spin", 1),
        ("sleep_signals_blocked", 1),
        ("stdout_flood", 0),
        ("thread_left_running", 0),
        ("ctypes_segfault", 1),
        ("write_host_tmp", 0),
        ("kill_parent", 0),
        ("sigstop_self", 0),
        ("proc_walk_ancestors", 1),
        ("tmp_plant_module", 0),
        ("tmp_read_planted", 0),
        ("tmp_read_planted", 1),
        ("tmp_fill_inodes", 0),
        ("sysv_shm_left", 0),
        ("sysv_shm_left", 1),
        ("sysv_shm_flood", 0),
        ("sysv_shm_flood", 1),
        ("exotic_socket_families", 2),
    }
    layers = corpus["level"].split("+")
    for name, res in corpus["results"].items():
        needs = corpus["cases"][name].needs
        if needs and needs not in layers:
            continue  # a hole this machine's level leaves open (its own test skips too)
        for i, r in enumerate(res.results):
            if r.status == "pass":
                assert (name, i) in honest, (name, i, r)


def test_files_outside_are_untouched(corpus: dict) -> None:
    if "uid" not in corpus["level"]:
        pytest.skip("needs uid isolation")
    canary = Path(corpus["env"]["canary"])
    assert canary.read_text() == "alive"
    assert (REPO / "pyproject.toml").read_bytes() == corpus["repo_before"]
    secret = Path(corpus["env"]["secret_file"])
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600


def test_no_network_reached_the_host(corpus: dict) -> None:
    if "netns" not in corpus["level"]:
        pytest.skip("needs a network namespace")
    assert corpus["connected"] is False


def test_no_process_left_behind(corpus: dict) -> None:
    if "uid" not in corpus["level"]:
        pytest.skip("needs uid isolation")
    assert corpus["leftovers"] == []


def test_mount_namespace_keeps_host_tmp_clean(corpus: dict) -> None:
    if "mntns" not in corpus["level"]:
        pytest.skip("needs a mount namespace")
    assert corpus["results"]["write_host_tmp"].results[0].status == "pass"  # its own private /tmp ...
    assert corpus["marker_on_host"] is False  # ... not the host's
    assert corpus["results"]["read_repo_source"].results[0].status == "error"  # the repo is hidden


def test_no_ipc_objects_left_on_the_host(corpus: dict) -> None:
    if "ipcns" not in corpus["level"]:
        pytest.skip("needs an IPC namespace per job")
    assert corpus["ipc_after"] == corpus["ipc_before"]


def test_no_file_left_in_world_writable_host_dirs(corpus: dict) -> None:
    if "allowlist" not in corpus["level"]:
        pytest.skip("needs the allow-list root")
    assert corpus["run_lock_written"] is False
