"""Whole programs fed stdin, as sandbox jobs: the Python runner and the process runner.

    job = python_program_job("c0", source, inputs, timeout=2.0)
    job = process_program_job("c0", "main.cpp", source, compile_argv, run_argv, inputs, timeout=2.0)
    [res] = executor.run([job])
    run_result(res, i)  # RunResult(stdout, exit_code, error, status) of input i

Both are ordinary jobs on the ordinary pool, under every layer of the sandbox (jail, allow-list root,
uid, cgroup, seccomp, rlimits); the child returns each run's stdout as a plain string and the trusted parent
compares it with the expected output (codea1.judge.kinds.stdio). An expected output never enters a job.

- Python: the program is compiled once when the job is defined (a syntax error fails every input, with the
  compiler's message); each input is then one call, which forks the child and runs the program in the fork
  as `__main__` in a fresh namespace, with the input as file descriptor 0 (`input()`, `sys.stdin`,
  `open(0)` all read it) and fd 1 and `sys.stdout` writing to a file the call reads back. A fork costs about
  a millisecond, against tens for a new interpreter, which is what makes the runner fast.
- Process (compiled languages): call 0 compiles the source with the language's argv (its own limit,
  `compile_timeout`), and each later call runs the compiled program as a process of the job with the input
  on stdin; the job's children may execute files of their own /tmp (zygote flavour "process"), nothing
  else changes. A compile error fails every input, with the compiler's first error line as the reason (or,
  where it said nothing, how it ended: a signal from a limit, an exit status).

Every run starts as the first did: after each one, whatever it started is killed (every other process of
the job's PID namespace, else the run's process group), the files it left in the job's /tmp are removed,
and a compiled program is written again from the bytes the compile produced. So a run's verdict never
depends on the inputs that ran before it (a counter in `builtins`, a file, a background process writing
into the next run's output), and a candidate runs as GT does.

A run's output is capped at MAX_STDOUT characters; past that the run fails ("output limit"), unless all it
wrote past the cap is blanks (" \n\t\r\v"), which the output rules strip (RunResult.blank_tail).
"""

from __future__ import annotations

from dataclasses import dataclass

from codea1.sandbox.api import CallResult, Job, JobResult

MAX_STDOUT = 900_000  # characters of one run's stdout kept (a plain value holds at most 1,000,000)
BLANKS = " \n\t\r\v"  # whitespace both output rules strip from the end of an output (codea1.judge.kinds.outputs)
COMPILE_TIMEOUT = 20.0  # seconds of CPU for one compile (g++ on a small program takes about 1-2)

# The runner's own code, defined in the child before any call; program text and inputs are string
# literals of the job, so nothing is read from the parent's files.
_COMMON = r"""
import os as __os, sys as __sys, io as __io
__codea1_cap = {cap}
__codea1_blanks = {blanks!r}
__codea1_stat = __sys.modules["stat"]
# modules the zygote itself holds, taken from sys.modules, so that the job's flavour (codea1.sandbox.preload)
# follows the program's own imports
__codea1_signal, __codea1_ctypes = (__sys.modules[m] for m in ("signal", "ctypes"))
__codea1_libc = __codea1_ctypes.CDLL(None, use_errno=True)

def __codea1_tmp(name):
    return __os.path.join(__os.environ.get("TMPDIR", "/tmp"), name)

__codea1_tmp_mode = __codea1_stat.S_IMODE(__os.stat(__codea1_tmp("")).st_mode)  # before any program ran

def __codea1_new_file(name, mode):
    # a new regular file each time: nothing of what a run left under the name (its mode, a FIFO, a link) stays
    path = __codea1_tmp(name)
    try:
        __os.unlink(path)
    except FileNotFoundError:
        pass
    return path, __os.open(path, __os.O_WRONLY | __os.O_CREAT | __os.O_EXCL | __os.O_NOFOLLOW, mode)

def __codea1_feed(data):
    path, fd = __codea1_new_file(".stdin", 0o600)
    with open(fd, "w", encoding="utf-8", errors="surrogateescape", newline="") as h:
        h.write(data)
    __codea1_onto(__os.open(path, __os.O_RDONLY | __os.O_NOFOLLOW), 0)

def __codea1_onto(fd, target):
    # a program may have closed the target (open(0) closes fd 0 when collected), and then fd is it
    if fd != target:
        __os.dup2(fd, target)
        __os.close(fd)

def __codea1_open(path):
    # a regular file only, never waited on: a run may have put a FIFO or a link in the file's place
    fd = __os.open(path, __os.O_RDONLY | __os.O_NONBLOCK | __os.O_NOFOLLOW)
    h = open(fd, "rb")
    if not __codea1_stat.S_ISREG(__os.fstat(fd).st_mode):
        h.close()
        raise OSError("the program replaced its output file with something else than a file")
    return h

def __codea1_read(path, limit):
    with __codea1_open(path) as h:
        return h.read(limit)

def __codea1_drain(path):
    # the first `cap` characters written, and whether more were: True, or "blank" where everything past the cap
    # is blanks (the ASCII whitespace every output rule strips from the end: a right answer followed by
    # trailing spaces); to say so the rest of the file is read (the job's file-size limit bounds it, and so
    # does this reader: past 64 MiB more, the output is over the limit)
    with __codea1_open(path) as h:
        text = h.read(4 * __codea1_cap + 4).decode("utf-8", errors="replace")
        if len(text) <= __codea1_cap:
            return (text, False)
        if text[__codea1_cap:].strip(__codea1_blanks):
            return (text[:__codea1_cap], True)
        for _ in range(64):
            chunk = h.read(1 << 20)
            if not chunk:
                return (text[:__codea1_cap], "blank")
            if chunk.translate(None, __codea1_blanks.encode()):
                break
        return (text[:__codea1_cap], True)

def __codea1_reset(group):
    # after each run: what the run started is killed (PID 1 of the job's PID namespace: every other process
    # of the job; otherwise the run's process group), the System V IPC objects it made are removed (the
    # job's IPC namespace outlives its runs) and so is every file in /tmp, so that no run sees another's
    # processes, memory, queues or files
    try:
        __os.kill(-1 if __os.getpid() == 1 else -group, __codea1_signal.SIGKILL)
    except OSError:
        pass
    try:
        while __os.waitpid(-1, __os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
    for kind, remove in (("shm", __codea1_libc.shmctl), ("msg", __codea1_libc.msgctl), ("sem", __codea1_libc.semctl)):
        try:
            with open("/proc/sysvipc/" + kind) as h:
                rows = h.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            remove(int(row.split()[1]), 0, 0, 0)  # IPC_RMID
    __codea1_clear(__codea1_tmp(""))

def __codea1_clear(top):
    # every file and directory under /tmp, whatever modes the run gave them (a directory it closed to its
    # own uid, /tmp itself included, kept files from the next run or made every later input fail), without
    # recursion (the tree may be deep): the job's uid owns all of it, so it may open each one again
    __os.chmod(top, __codea1_tmp_mode)
    stack, dirs = [top], []
    while stack:
        d = stack.pop()
        try:
            if d != top:
                __os.chmod(d, 0o700)
            entries = list(__os.scandir(d))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
                dirs.append(entry.path)
            else:
                try:
                    __os.unlink(entry.path)
                except OSError:
                    pass
    for d in reversed(dirs):
        try:
            __os.rmdir(d)
        except OSError:
            pass
"""

_PYTHON = r"""
__builtins_module = __sys.modules["builtins"]
__codea1_program = compile({source!r}, "<program>", "exec", dont_inherit=True)

def __codea1_threads_done():
    threading = __sys.modules.get("threading")
    for t in threading.enumerate() if threading is not None else ():
        if t is not threading.main_thread() and not t.daemon:
            t.join()

def __codea1_main(out_path, status_path):
    # the forked run: the program as __main__ with the input on fd 0 and fd 1 on out_path; never returns.
    # The status file says how it ended: the exit status, whether the program raised SystemExit (the parent's
    # rule decides what that means; see codea1.judge.kinds.stdio), and an uncaught exception's message
    code, raised_exit, error = 0, 0, ""
    try:
        __os.setpgid(0, 0)
        __os.closerange(3, 1 << 16)  # the job's pipes to the parent are the runner's, not the program's
        __codea1_onto(__os.open(out_path, __os.O_WRONLY | __os.O_CREAT | __os.O_TRUNC, 0o600), 1)
        __sys.stdin = open(0, "r", encoding="utf-8", errors="surrogateescape", closefd=False)
        __sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        exec(__codea1_program, {{"__name__": "__main__", "__builtins__": __builtins_module}})
        __codea1_threads_done()
    except SystemExit as exc:
        # the status CPython exits with (_Py_HandleSystemExit, Python/pythonrun.c): the exception's `code`
        # attribute (a subclass's own `code` counts: a checker's `class WrongAnswer(SystemExit): code = 1`
        # rejects), None is 0, an int its low byte (one beyond a C long is 255: PyLong_AsLong fails, -1),
        # anything else 1. This runs in the program's own forked process, which could exit as it likes
        # anyway; the parent reads the plain number it writes
        raised_exit = 1
        try:
            status = exc.code
        except BaseException:
            status = exc
        if status is None:
            code = 0
        elif issubclass(type(status), int):
            value = int.__index__(status)
            code = value & 0xFF if -(1 << 63) <= value < (1 << 63) else 255
        else:
            code = 1
        try:
            __codea1_threads_done()  # as the interpreter does at exit: its other threads finish
        except BaseException:
            pass
    except BaseException as exc:
        code, error = 1, f"{{type(exc).__name__}}: {{exc}}"[:300]
    try:
        __sys.stdout.flush()
    except BaseException:
        pass
    try:
        with open(status_path, "w", encoding="utf-8", errors="replace") as h:
            h.write(f"{{code}}\n{{raised_exit}}\n{{error}}")
    finally:
        __os._exit(0)

def __codea1_run(data):
    # each input runs in a process of its own, forked from this one: nothing one run changes (modules,
    # builtins, files, processes) reaches the next, as GT's runs start afresh
    out_path, status_path = __codea1_tmp(".stdout"), __codea1_tmp(".status")
    __codea1_feed(data)
    pid = __os.fork()
    if pid == 0:
        __codea1_main(out_path, status_path)
    _, status = __os.waitpid(pid, 0)
    try:
        head, _, rest = __codea1_read(status_path, 1000).decode("utf-8", errors="replace").partition("\n")
        flag, _, error = rest.partition("\n")
        code, raised_exit = int(head), flag == "1"
    except (OSError, ValueError):  # the run ended without its status: os._exit, a signal
        code = -__os.WTERMSIG(status) if __os.WIFSIGNALED(status) else __os.waitstatus_to_exitcode(status)
        error, raised_exit = f"killed by signal {{-code}}" if code < 0 else "", False
    try:
        text, cut = __codea1_drain(out_path)
    finally:
        __codea1_reset(pid)
    return (text, code, error[:300], cut, raised_exit)
"""

_PROCESS = r"""
import subprocess as __subprocess
__codea1_state = {{}}

def __codea1_argv(parts):
    src, out = __codea1_tmp({source_name!r}), __codea1_tmp("program")
    return [p.replace("{{src}}", src).replace("{{out}}", out) for p in parts]

def __codea1_compile():
    tmp = __os.environ.get("TMPDIR", "/tmp")
    with open(__os.path.join(tmp, {source_name!r}), "w", encoding="utf-8", errors="surrogateescape") as h:
        h.write({source!r})
    log = __os.path.join(tmp, ".compile")
    with open(log, "wb") as h:
        proc = __subprocess.Popen(__codea1_argv({compile_argv!r}), stdin=__subprocess.DEVNULL, stdout=h,
                                  stderr=__subprocess.STDOUT, cwd=tmp, start_new_session=True)
        code = proc.wait()
    text, _ = __codea1_drain(log)
    program = __os.path.join(tmp, "program")
    ok = code == 0 and __os.path.isfile(program)
    if ok:  # kept here: a run that rewrites its own file does not change the next run's program
        with open(program, "rb") as h:
            __codea1_state["program"] = h.read()
    __codea1_state["compiled"] = ok
    __codea1_reset(proc.pid)  # the source, the log and the program are gone: each run gets the program again
    if ok:
        return (True, "")
    lines = [ln for ln in text.splitlines() if "error" in ln] or [ln for ln in text.splitlines() if ln.strip()]
    if not lines:  # nothing said: killed by a limit (memory, CPU, file size) or a silent failure
        lines = [f"the compiler was killed by signal {{-code}}" if code < 0 else f"the compiler exited with status {{code}} and no message"]
    return (False, lines[0].replace(tmp + "/", "")[:300])

def __codea1_restore():
    _, fd = __codea1_new_file("program", 0o700)
    with open(fd, "wb") as h:
        h.write(__codea1_state["program"])

def __codea1_run(data):
    if not __codea1_state.get("compiled"):
        return ("", -1, "not compiled", False, False)
    __codea1_restore()
    __codea1_feed(data)
    out_path = __codea1_tmp(".stdout")
    with open(out_path, "wb") as out:
        proc = __subprocess.Popen(__codea1_argv({run_argv!r}), stdin=0, stdout=out, stderr=__subprocess.DEVNULL,
                                  cwd=__codea1_tmp(""), start_new_session=True)
        code = proc.wait()
    try:
        text, cut = __codea1_drain(out_path)
    finally:
        __codea1_reset(proc.pid)
    return (text, code, "" if code == 0 else (f"killed by signal {{-code}}" if code < 0 else f"exit status {{code}}"), cut, False)
"""


def python_program_job(job_id: str, source: str, inputs: list[str], timeout: float) -> Job:
    """A job that runs the Python program `source` once per input (call i: input i), each within
    `timeout` seconds."""
    code = _COMMON.format(cap=MAX_STDOUT, blanks=BLANKS) + _PYTHON.format(source=source)
    return Job(id=job_id, code=code, calls=[f"__codea1_run({data!r})" for data in inputs], timeout=timeout)


def process_program_job(
    job_id: str,
    source_name: str,
    source: str,
    compile_argv: tuple[str, ...],
    run_argv: tuple[str, ...],
    inputs: list[str],
    timeout: float,
    compile_timeout: float = COMPILE_TIMEOUT,
) -> Job:
    """A job that compiles `source` (written to the job's /tmp as `source_name`; "{src}" and "{out}" in the
    argv lists are that file and the program's) in call 0, then runs the program once per input (call 1 + i:
    input i), each within `timeout` seconds."""
    code = _COMMON.format(cap=MAX_STDOUT, blanks=BLANKS) + _PROCESS.format(
        source_name=source_name, source=source, compile_argv=list(compile_argv), run_argv=list(run_argv)
    )
    calls = ["__codea1_compile()"] + [f"__codea1_run({data!r})" for data in inputs]
    return Job(
        id=job_id,
        code=code,
        calls=calls,
        timeout=timeout,
        timeouts=[compile_timeout] + [timeout] * len(inputs),
        flavour="process",
        setup_calls=1,  # the compiled program lives in the child: one started after a timeout compiles again
    )


@dataclass
class RunResult:
    """One run of a program on one input, as the parent reads it from the job's result.

    status: "ok" (it ran and exited, whatever its exit code), "timeout", "crash", "error" (the runner
    itself failed), "compile" (the program did not compile: `error` holds why), "output limit".
    blank_tail: the run wrote more than MAX_STDOUT characters, and all of those past the cap were blanks
    (" \n\t\r\v", which both output rules strip from the end of an output): `stdout` holds the first
    MAX_STDOUT, and an output rule judges them as it would the whole output (codea1.judge.kinds.stdio).
    system_exit: a Python program ended by raising SystemExit (`sys.exit(...)`, `exit()`, `raise
    SystemExit(...)`); `exit_code` is then the status it asked for. What that means is the caller's rule: a
    candidate's run is judged on its output (as LiveCodeBench's and prime_code's `call_method` swallow
    SystemExit), a validator's or checker's status is its answer.
    """

    status: str
    stdout: str = ""
    exit_code: int = 0
    error: str = ""
    seconds: float = 0.0
    system_exit: bool = False
    blank_tail: bool = False


def run_results(res: JobResult, n_inputs: int, compiled: bool) -> list[RunResult]:
    """The RunResult of each of `n_inputs` inputs of a job built above (`compiled`: by process_program_job).
    Only plain values are read: a value of another shape is the program's failure, never trusted."""
    if not res.defined:
        return [RunResult("compile", error=str(res.error or "the program does not compile")[:300])] * n_inputs
    calls = list(res.results)
    if compiled:
        head = calls[0] if calls else CallResult("crash", error="no result")
        if not compiled_ok(res, compiled):
            why = head.value[1] if head.status == "ok" and type(head.value) is tuple and len(head.value) == 2 else None
            reason = why if type(why) is str and why else head.error or head.status
            return [RunResult("compile", error=f"compile error: {reason}"[:300])] * n_inputs
        calls = calls[1:]
    out = [call_run(r) for r in calls[:n_inputs]]
    return out + [RunResult("crash", error="no result")] * (n_inputs - len(out))


def compiled_ok(res: JobResult, compiled: bool) -> bool:
    """Whether the job's program is one, whatever its runs did: Python, it parsed (the job was defined); a
    compiled language, call 0 (the compile) returned (True, ...). Answers for a job with no input too."""
    if not res.defined:
        return False
    if not compiled:
        return True
    return compile_call_ok(res.results[0] if res.results else None)


def compile_call_ok(head: CallResult | None) -> bool:
    """Whether the compile call (call 0 of a process_program_job) returned (True, ...)."""
    return (
        head is not None
        and head.status == "ok"
        and type(head.value) is tuple
        and len(head.value) == 2
        and head.value[0] is True
    )


def call_run(r: CallResult) -> RunResult:
    """The RunResult of one run call (a call after the compile, if any), read from its plain value."""
    if r.status != "ok":
        return RunResult(r.status, error=str(r.error or r.status)[:300], seconds=r.seconds)
    v = r.value
    shaped = (
        type(v) is tuple
        and len(v) == 5
        and type(v[0]) is str
        and type(v[1]) is int
        and type(v[2]) is str
        and (type(v[3]) is bool or (type(v[3]) is str and v[3] == "blank"))  # cut: no, yes, or only blanks
        and type(v[4]) is bool
    )
    if not shaped:
        return RunResult("error", error="the runner returned a value of another shape", seconds=r.seconds)
    if v[3] is True:
        return RunResult("output limit", v[0], v[1], f"more than {MAX_STDOUT} characters of output", r.seconds)
    return RunResult("ok", v[0], v[1], v[2], r.seconds, system_exit=v[4], blank_tail=v[3] == "blank")
