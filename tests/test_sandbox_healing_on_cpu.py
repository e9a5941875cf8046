"""A parent that cannot be crashed or bloated, and workers that heal: one hostile job changes no honest verdict.

- Every step of deciding a verdict is total (decode, compare, tolerance): a failure is that call's verdict.
- A result frame is bounded before it is parsed (a 16 MB frame of empty lists never reaches json.loads).
- A zygote that fails to set up a job is replaced and the job run once more on a fresh one.
- The batch guarantee: honest jobs with known verdicts, hostile ones spread through them, every honest
  verdict right, results in input order, and one output line per input id from `codea1 exec`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from conftest import quiet_executor

from codea1.judge.calls import decide, run_expecting
from codea1.sandbox import Executor, Job, LocalExecutor
from codea1.sandbox.wire import MAX_FRAME_NODES
from codea1.sandbox.wire import frame_bounded as _frame_bounded

REPO = Path(__file__).resolve().parents[1]
UID_BASE = 1_700_300_000  # this file's own uid range


@pytest.fixture(scope="module")
def ex() -> Executor:
    executor = quiet_executor(UID_BASE)
    yield executor
    executor.close()


# --- the parent's side: bounded, total -------------------------------------------------------------------


def test_frame_bound_counts_only_outside_strings() -> None:
    honest = json.dumps({"k": "ok", "i": 0, "v": ["[[[{{{,,," * 100_000, list(range(1000))]}).encode()
    assert _frame_bounded(honest)
    escaped = json.dumps({"k": "ok", "v": ['\\"[[[' * 200_000, '"\\' * 1000]}).encode()
    assert _frame_bounded(escaped)
    assert not _frame_bounded(b"[" + b"[]," * (MAX_FRAME_NODES + 1) + b"[]]")
    assert not _frame_bounded(b"[" + b"1," * (MAX_FRAME_NODES + 1) + b"1]")


BLOAT = """import os, sys
def f():
    fr = sys._getframe()
    while 'res_w' not in fr.f_locals:
        fr = fr.f_back
    body = b'{"k": "ok", "i": 0, "v": [' + b'[],' * ((16 << 20) // 3 - 20) + b'[]]}'
    os.write(fr.f_locals['res_w'], len(body).to_bytes(4, 'big') + body)
    return 0
"""

BLOAT_SCRIPT = """
import resource, sys, warnings
sys.path.insert(0, {repo!r})
from codea1.judge.calls import run_expecting
from codea1.sandbox import LocalExecutor, Job
warnings.simplefilter("ignore")
with LocalExecutor(1, uid_base={uid}) as ex:
    run_expecting(ex, [Job("warm", "def g(): return 1", ["g()"])], [[1]])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    [res] = run_expecting(ex, [Job("bloat", {code!r}, ["f()", "1 + 1"])], [[0, 2]])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024, *[r.status for r in res.results])
"""


def test_a_16mb_frame_of_empty_lists_does_not_bloat_the_parent() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOAT_SCRIPT.format(repo=str(REPO), uid=UID_BASE + 100, code=BLOAT)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    grew_mb, *statuses = out.stdout.split()
    assert statuses == ["crash", "pass"]  # a malformed frame ends that child; the next call resumes
    assert int(grew_mb) < 100, out.stdout  # was ~440 MB when the frame was parsed before its budget


def test_a_job_cannot_make_the_parent_read_more_by_crashing_and_restarting(ex: Executor) -> None:
    """Each child may send 64 MB, and a crash resumed the remaining calls in a fresh child with a fresh
    allowance: calls that each send a 6 MB value and then crash made the parent read (and keep) 6 MB per
    restart without end. All the children of one job now share one budget (wire.MAX_JOB_BYTES)."""
    from codea1.sandbox.wire import MAX_JOB_BYTES

    code = "import os\ndef big():\n    return '\\u4e00' * 999_000\ndef die():\n    os._exit(3)\n"
    rounds = 30  # 30 x ~6 MB is more than the job budget
    [res] = ex.run([Job("greedy", code, ["big()", "die()"] * rounds, timeout=10.0)])
    values = [r for r in res.results[0::2] if r.status == "ok"]
    assert 0 < len(values) * 6_000_000 <= MAX_JOB_BYTES + 6_000_000
    assert len(values) < rounds
    assert "sent over" in res.results[-2].error and res.results[-2].status == "crash"


def test_verdict_steps_are_total(ex: Executor) -> None:
    code = "def f(): return 10 ** 400\ndef g(): return float('nan')\ndef h(): return [1.0]"
    cases = [  # (job, expected values, float tolerance): the judge's verdict step (codea1.judge.calls.decide)
        (Job("big_vs_complex", code, ["f()"]), [1j], None),
        (Job("bad_tol", code, ["h()"]), [[1.0]], "not a number"),
        (Job("nan_tol", code, ["g()", "h()"]), [float("nan"), [1.0 + 1e-9]], 1e-6),
        (Job("short_expected", code, ["g()", "h()"]), [float("nan")], None),
        (Job("unencodable_expected", code, ["h()"]), [object()], None),
    ]
    ran = ex.run([job for job, _, _ in cases])
    judged = [decide(r, expected, tol) for r, (_, expected, tol) in zip(ran, cases, strict=False)]  # type: ignore[arg-type]
    res = {r.id: [c.status for c in r.results] for r in judged}
    assert res == {
        "big_vs_complex": ["fail"],
        "bad_tol": ["pass"],
        "nan_tol": ["pass", "pass"],
        "short_expected": ["pass", "invalid"],
        "unencodable_expected": ["fail"],
    }


# --- self-healing workers --------------------------------------------------------------------------------


def test_a_job_that_fakes_a_setup_failure_is_not_taken_for_one(ex: Executor) -> None:
    """A candidate exiting with a set-up status (70-72) exits after the "started" frame: the job's own
    crash, no zygote replaced, no rerun (before: two restarts, 0.4-0.7 s per job)."""
    before = ex.restarts
    res = run_expecting(
        ex,
        [Job(f"fake{code}", f"import os\nos._exit({code})", ["1"]) for code in (70, 71, 72)]
        + [
            Job("late", "import os\ndef f():\n    os._exit(72)", ["f()", "1"]),
            Job("after", "def f(x): return x * 3", ["f(3)"]),
        ],
        [[1], [1], [1], [None, 1], [9]],
    )
    for r in res[:3]:
        assert r.defined is False and r.results[0].status == "invalid" and "crashed while running" in r.error
    assert [r.status for r in res[3].results] == ["crash", "pass"]
    assert res[4].results[0].status == "pass"
    assert ex.restarts == before


# hostile jobs of the classes that once broke later verdicts: state left in a zygote or its /tmp
HOSTILE = [
    # fills the inodes of /tmp with a directory chain too deep for the clean-up (which then fails)
    (
        "fill_tmp_inodes",
        (
            "import os\n"
            "def fill(top):\n"
            "    os.chdir(top)\n"
            "    n = 0\n"
            "    try:\n"
            "        while True:\n"
            "            os.mkdir('d'); os.chdir('d'); n += 1\n"
            "    except OSError:\n"
            "        return n\n"
        ),
        ["fill('.')", "fill('/tmp')"],
    ),
    # the same from a test's CALL expression alone
    ("fill_tmp_from_call", "", ["[__import__('os').mkdir(f'/tmp/x{i}') for i in range(10 ** 6)]"]),
    # plants modules where a later job might import them from
    (
        "plant_modules",
        (
            "import os\n"
            "def plant():\n"
            "    for d in ['/tmp', os.getcwd(), os.environ.get('TMPDIR', '/tmp')]:\n"
            "        try:\n"
            "            open(os.path.join(d, 'helper_mod.py'), 'w').write('VALUE = 666\\n')\n"
            "        except OSError:\n"
            "            pass\n"
            "    return 1\n"
        ),
        ["plant()"],
    ),
    (
        "leave_processes",
        (
            "import os, time\n"
            "for _ in range(8):\n"
            "    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        while True: time.sleep(0.01)\n"
        ),
        ["1"],
    ),
    ("kill_everything", "import os, signal", ["os.kill(-1, signal.SIGKILL)"]),
    ("exit_setup_code", "import os\nos._exit(72)", ["1"]),
    ("fd_exhaustion", "fs = []\ntry:\n    while True: fs.append(open('/dev/null'))\nexcept OSError: pass", ["len(fs)"]),
]


def _honest(k: int) -> tuple[Job, list, list[str]]:
    """An honest job, its expected values and its known verdicts; k picks one of a few shapes (pass, fail,
    error, state, import)."""
    shape = k % 5
    if shape == 0:
        return Job(f"h{k}", f"def f(x):\n    return x * {k}", ["f(2)", "f(-1)"]), [2 * k, -k], ["pass", "pass"]
    if shape == 1:
        return Job(f"h{k}", "def f(s):\n    return s[::-1]", ["f('abc')", "f('')"]), ["cba", "x"], ["pass", "fail"]
    if shape == 2:
        return Job(f"h{k}", "def f(d):\n    return d['k']", ["f({'k': 1})", "f({})"]), [1, None], ["pass", "error"]
    if shape == 3:  # a module planted by a hostile job must not be found
        code = (
            "def f():\n    try:\n        import helper_mod\n        return helper_mod.VALUE\n"
            "    except ImportError:\n        return 0"
        )
        return Job(f"h{k}", code, ["f()"]), [0], ["pass"]
    return Job(f"h{k}", "import os\ndef f():\n    return sorted(os.listdir('.'))", ["f()"]), [[]], ["pass"]


def _batch(n_honest: int) -> tuple[list[Job], list, dict[str, list[str]]]:
    jobs, expected, want = [], [], {}
    step = max(1, n_honest // (len(HOSTILE) + 1))
    hostile = iter(HOSTILE)
    for k in range(n_honest):
        job, values, verdicts = _honest(k)
        jobs.append(job)
        expected.append(values)
        want[job.id] = verdicts
        if k % step == step // 2:
            h = next(hostile, None)
            if h is not None:
                jobs.append(Job(h[0], h[1], h[2], timeout=2.0))
                expected.append(None)
    rest = [Job(h[0], h[1], h[2], timeout=2.0) for h in hostile]
    return jobs + rest, expected + [None] * len(rest), want


def _check_batch(n_honest: int) -> None:
    jobs, expected, want = _batch(n_honest)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(2, uid_base=UID_BASE + 200) as ex:
            results = run_expecting(ex, jobs, expected)
    wrong = [
        (r.id, [c.status for c in r.results], want[r.id])
        for r in results
        if r.id in want and [c.status for c in r.results] != want[r.id]
    ]
    assert wrong == [], wrong[:10]
    assert [r.id for r in results] == [j.id for j in jobs]


def test_one_thousand_honest_jobs_and_hostile_ones_spread_through() -> None:
    """Without the zygote replacement, the /tmp fillers alone made hundreds of later honest verdicts wrong."""
    _check_batch(1000)


def test_cli_batch_one_line_per_input_id(tmp_path: Path) -> None:
    jobs, _expected, _want = _batch(40)
    rows = [{"id": j.id, "code": j.code, "calls": j.calls} for j in jobs]
    (tmp_path / "in.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "codea1.cli",
            "exec",
            "--input",
            str(tmp_path / "in.jsonl"),
            "--output",
            str(tmp_path / "out.jsonl"),
            "--workers",
            "2",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [g["id"] for g in got] == [j.id for j in jobs]


# --- per-job resources (cgroups) ---------------------------------------------------------------------------

HELPERS = """import os, select, time
def hold(n, mb):
    # n helpers each fill a block of mb MB and report; returns how many reported helpers are alive at the
    # end, i.e. hold their block at the same moment (the out-of-memory killer may have ended earlier ones,
    # letting later ones finish, so the number that ever reported is no bound on what the job holds)
    r, w = os.pipe()
    kids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            try:
                block = bytearray(mb << 20)
                for j in range(0, len(block), 4096):
                    block[j] = 1
                os.write(w, bytes([i]))
                time.sleep(30)
            finally:
                os._exit(0)
        kids.append(pid)
    os.close(w)
    reported = set()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        if not select.select([r], [], [], max(0, deadline - time.monotonic()))[0]:
            break
        try:
            b = os.read(r, 16)
        except OSError:
            break
        if not b:
            break
        reported.update(b)
    alive = 0
    for i in reported:
        try:
            alive += os.waitpid(kids[i], os.WNOHANG) == (0, 0)
        except ChildProcessError:
            pass
    return alive
"""


def test_memory_is_limited_per_job_not_per_process() -> None:
    """Eight helpers of 150 MB each under --memory-mb 256: the job's processes share one limit."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(1, uid_base=UID_BASE + 300, memory_mb=256) as ex:
            if "cgroup" not in ex.isolation_level:
                pytest.skip(f"needs the cgroup layer (level here: {ex.isolation_level})")
            [res] = run_expecting(ex, [Job("helpers", HELPERS, ["hold(8, 150)", "1 + 1"], timeout=10.0)], [[8, 2]])
            [after] = run_expecting(
                ex, [Job("after", "def f(): return len(bytearray(200 << 20))", ["f()"], timeout=10.0)], [[200 << 20]]
            )
    assert res.results[0].status == "fail", res.results[0]
    assert res.results[0].value <= 2, res.results[
        0
    ]  # at most two 150 MB helpers fit at once in 256 MB + the job's /tmp
    assert after.results[0].status == "pass"  # the limit is per job: the next job has all of it


def test_a_job_after_a_fork_bomb_has_its_whole_process_budget() -> None:
    """A fork bomb's processes are gone before the next job of its slot starts: they do not use up that
    job's process limit (one slot, so every job follows a bomb on the same uid)."""
    bomb = Job("bomb", "import os", ["[os.fork() for _ in iter(int, 1)]"], timeout=2.0)
    forks = Job(
        "forks",
        "import os\ndef f():\n    if os.fork() == 0:\n        os._exit(0)\n    os.wait()\n    return 1",
        ["f()"],
        timeout=5.0,
    )
    one = quiet_executor(UID_BASE + 400, workers=1)
    try:
        results = run_expecting(one, [bomb, forks] * 4, [[None], [1]] * 4)
    finally:
        one.close()
    assert [r.results[0].status for r in results[1::2]] == ["pass"] * 4, [r.error for r in results[1::2]]


def test_a_thread_bomb_of_spinning_threads_leaves_nothing_for_the_next_job() -> None:
    """A job starts as many spinning daemon threads as it can (each is a task of the slot: the process
    limit stops it) and returns; the next jobs of its slot run at once, pass, and no task of the slot's
    uid is left on the machine."""
    bomb = Job(
        "threads",
        "import threading\ndef spin():\n    while True:\n        pass\n"
        "def f(x):\n    for _ in range(2000):\n        try:\n"
        "            threading.Thread(target=spin, daemon=True).start()\n"
        "        except Exception:\n            break\n    return x + 1\n",
        ["f(1)"],
        timeout=3.0,
    )
    honest = Job("honest", "def g(x):\n    return x * 2\n", ["g(3)", "g(4)"])
    one = quiet_executor(UID_BASE + 500, workers=1)
    try:
        results = run_expecting(one, [bomb, honest, honest], [[2], [6, 8], [6, 8]])
        uids = set(one.uids)
    finally:
        one.close()
    assert results[0].results[0].status == "pass"  # the job's own value is still its own verdict
    assert [[c.status for c in r.results] for r in results[1:]] == [["pass", "pass"]] * 2
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as fh:
                uid = int(next(line for line in fh if line.startswith("Uid:")).split()[1])
        except (OSError, StopIteration, ValueError):
            continue
        if uid in uids:
            left.append(pid)
    assert left == []
