"""Executor on ordinary code: values, verdicts, order, resume after a hang, CLI, fallback."""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

import pytest
from conftest import quiet_executor

from codea1.cli import main as cli_main
from codea1.judge.calls import run_expecting
from codea1.sandbox import CallResult, Executor, Job, JobResult, LocalExecutor, isolation_level
from codea1.sandbox import executor as executor_module

UID_BASE = 1_700_200_000  # this file's own uid range


@pytest.fixture(scope="module")
def ex() -> Executor:
    executor = quiet_executor(UID_BASE)
    yield executor
    executor.close()


SOLUTION = """
from collections import Counter
import math, heapq, itertools, functools, re

def top_k(words, k):
    counts = Counter(words)
    return [w for w, _ in heapq.nsmallest(k, counts.items(), key=lambda kv: (-kv[1], kv[0]))]

@functools.lru_cache(None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def stats(xs):
    return {"mean": sum(xs) / len(xs), "sqrt": math.sqrt(len(xs)), "pairs": list(itertools.pairwise(xs))}

def words(s):
    return re.findall(r"[a-z]+", s.lower())
"""


def test_ordinary_code_values_and_verdicts(ex: Executor) -> None:
    job = Job(
        "sol",
        SOLUTION,
        [
            "top_k(['a', 'b', 'a', 'c', 'b', 'a'], 2)",
            "fib(90)",
            "stats([1, 2, 3])",
            "words('Hi, there!')",
            "fib(-1) + undefined_name",
            "top_k([], 1)",
        ],
    )
    expected = [
        ["a", "b"],
        2880067194370816120,
        {"mean": 2.0, "sqrt": 3**0.5, "pairs": [(1, 2), (2, 3)]},
        ["hi", "there"],
        0,
        ["x"],
    ]
    [res] = run_expecting(ex, [job], [expected])
    assert isinstance(res, JobResult) and res.defined and res.error is None
    assert [r.status for r in res.results] == ["pass", "pass", "pass", "pass", "error", "fail"]
    assert "NameError" in res.results[4].error
    assert res.results[5].value == []
    assert all(isinstance(r, CallResult) and r.seconds >= 0 for r in res.results)


def test_calls_without_expected_return_plain_values(ex: Executor) -> None:
    [res] = ex.run(
        [
            Job(
                "v",
                "import numpy as np\nclass P: pass",
                ["(1, [2.5, None], {'k': {3}})", "np.arange(3)", "np.float64(0.5)", "P()", "1 +", "b'ab'"],
            )
        ]
    )
    assert [r.status for r in res.results] == ["ok", "ok", "ok", "ok", "invalid", "ok"]
    assert res.results[0].value == (1, [2.5, None], {"k": {3}})
    assert res.results[1].value == [0, 1, 2] and res.results[2].value == 0.5
    from codea1.sandbox import UNSERIALIZABLE

    assert res.results[3].value is UNSERIALIZABLE and res.results[5].value == b"ab"


def test_state_persists_between_calls_of_one_job(ex: Executor) -> None:
    [res] = run_expecting(
        ex,
        [Job("s", "acc = []\ndef push(x):\n    acc.append(x)\n    return len(acc)", ["push(1)", "push(2)"])],
        [[1, 2]],
    )
    assert [r.status for r in res.results] == ["pass", "pass"]


def test_hang_ends_child_and_remaining_calls_resume(ex: Executor) -> None:
    code = "import time\nruns = []\nruns.append(1)\ndef slow():\n    while True: pass"
    [res] = run_expecting(
        ex,
        [Job("h", code, ["len(runs)", "slow()", "len(runs)", "1/0", "len(runs)"], timeout=0.5)],
        [[1, None, 1, 0, 1]],
    )
    # a fresh child re-ran the code for the calls after the timeout (runs has one element again)
    assert [r.status for r in res.results] == ["pass", "timeout", "pass", "error", "pass"]


def test_a_job_stops_where_its_stop_says_and_the_rest_is_skipped(ex: Executor) -> None:
    """Job.stop, asked in the parent as each call ends: after an ok call it ends the child there; after a
    timeout no child is started again for the calls left. Either way the rest come back "skipped"."""
    seen = []

    def stop(i: int, r: CallResult) -> bool:
        seen.append(i)
        return r.status != "ok" or r.value == 2

    job = Job(id="s", code="import time", calls=["1", "2", "3", "4"], timeout=1.0, stop=stop)
    [res] = ex.run([job])
    assert [r.status for r in res.results] == ["ok", "ok", "skipped", "skipped"]
    assert [r.value for r in res.results[:2]] == [1, 2] and seen[:2] == [0, 1]
    job = Job(id="t", code="", calls=["1", "(lambda: [0 for _ in iter(int, 1)])()", "3"], timeout=0.5, stop=stop)
    [res] = ex.run([job])
    assert [r.status for r in res.results] == ["ok", "timeout", "skipped"]
    [res] = ex.run([Job(id="u", code="", calls=["1", "2", "3"], stop=lambda i, r: False)])
    assert [r.value for r in res.results] == [1, 2, 3]


def test_definition_failures(ex: Executor) -> None:
    res = ex.run(
        [
            Job("syntax", "def f(:\n", ["1"]),
            Job("raise", "raise ValueError('no')", ["1", "2"]),
            Job("hang", "while True: pass", ["1"]),
            Job("ok", "", []),
        ]
    )
    assert [r.defined for r in res] == [False, False, False, True]
    assert "SyntaxError" in res[0].error and "ValueError: no" in res[1].error
    assert "timed out" in res[2].error
    assert all(r.status == "invalid" for x in res[:3] for r in x.results)
    assert len(res[1].results) == 2 and res[3].results == []


def test_results_in_input_order_with_progress(ex: Executor) -> None:
    seen = []
    jobs = [Job(str(i), f"import time\nX = {i}\ntime.sleep({0.05 if i % 3 == 0 else 0})", ["X * 2"]) for i in range(12)]
    res = run_expecting(ex, jobs, [[2 * i] for i in range(12)], progress=lambda done, total: seen.append((done, total)))
    assert [r.id for r in res] == [str(i) for i in range(12)]
    assert all(r.results[0].status == "pass" for r in res)
    assert seen[-1] == (12, 12) and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_float_tolerance_option(ex: Executor) -> None:
    exact = run_expecting(ex, [Job("t", "", ["0.1 + 0.2"])], [[0.3]])
    close = run_expecting(ex, [Job("t", "", ["0.1 + 0.2"])], [[0.3]], float_tol=1e-9)
    assert exact[0].results[0].status == "fail" and close[0].results[0].status == "pass"


def test_captured_stdout_is_capped(ex: Executor) -> None:
    [res] = ex.run([Job("p", "print('hello')\nprint('x' * 100000)", ["1"])])
    assert res.stdout.startswith("hello\n") and len(res.stdout) <= 4096


def test_isolation_level_is_reported(ex: Executor) -> None:
    level = isolation_level()
    assert level.endswith("rlimits")
    assert ex.isolation_level == level


def test_forced_fallback_still_works_and_warns_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor_module, "_warned", False)
    with pytest.warns(RuntimeWarning, match="running without allowlist, netns") as caught:
        weak = LocalExecutor(1, isolate=False)
    assert "allowlist needs root and bubblewrap" in str(caught[0].message)
    with weak, warnings.catch_warnings():
        warnings.simplefilter("error")  # a second weak executor must not warn again
        LocalExecutor(1, isolate=False).close()
        assert weak.isolation_level == "rlimits"
        [res] = run_expecting(
            weak,
            [Job("f", "def f(x): return x + 1", ["f(1)", "f('a')", "[0 for _ in iter(int, 1)]", "f(2)"], timeout=0.5)],
            [[2, 2, None, 3]],
        )
    assert [r.status for r in res.results] == ["pass", "error", "timeout", "pass"]


def test_a_missing_layer_stops_a_root_executor_unless_less_was_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: a layer that does not come up (here the allow-list root: no bubblewrap) is an error with
    what it needs, not a warning, unless the caller asked for fewer layers."""
    from codea1.errors import UserError

    if os.geteuid() != 0 or isolation_level() != executor_module.FULL_LEVEL:
        pytest.skip("needs root and every layer on this machine, to take one away")
    monkeypatch.setenv("CODEA1_BWRAP", "/nonexistent/bwrap")
    monkeypatch.delenv("CODEA1_SANDBOX_ISOLATION", raising=False)
    with pytest.raises(UserError, match=r"missing the layer\(s\) allowlist .*bubblewrap.*isolation=available"):
        LocalExecutor(1)
    monkeypatch.setattr(executor_module, "_warned", False)
    with pytest.warns(RuntimeWarning, match="running without allowlist"):
        weak = LocalExecutor(1, isolation="available")
    with weak:
        run_expecting(weak, [Job("f", "def f(x): return x + 1", ["f(1)"])], [[2]])
    monkeypatch.setenv("CODEA1_SANDBOX_ISOLATION", "available")  # the same, for every Executor of a process
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        LocalExecutor(1).close()


def test_cli_exec_jsonl_contract(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    lines = [
        {"id": "t", "code": "def f(x):\n    return x * 2", "tests": ["assert f(2) == 4", "assert f(2) == 5", "junk"]},
        {"id": "c", "code": "def f(x): return (x, {x})", "calls": ["f(1)", "1/0"]},
        "this is not json",
        {"id": "bad", "code": 3, "calls": []},
        {"id": "both", "code": "", "calls": [], "tests": []},
        {
            "id": "ep",
            "code": "def f(x):\n    return x * 2",
            "entry_point": "f",
            "tests": ["assert abs(f(0.1) - 0.2) < 1e-9", "assert 4 in [f(1), f(2)]", "assert f(1) > 3"],
        },
    ]
    src.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    out = tmp_path / "out.jsonl"
    assert (
        cli_main(
            ["exec", "--input", str(src), "--output", str(out), "--timeout", "1", "--workers", "1", "--no-progress"]
        )
        == 0
    )
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["t", "c", None, "bad", "both", "ep"]
    assert [x["status"] for x in rows[5]["results"]] == ["pass", "pass", "fail"]
    assert [x["status"] for x in rows[0]["results"]] == ["pass", "fail", "invalid"]
    assert rows[1]["results"][0] == {
        "status": "ok",
        "value": {"$t": "tuple", "v": [1, {"$t": "set", "v": [1]}]},
        "error": None,
        "seconds": rows[1]["results"][0]["seconds"],
    }
    assert rows[1]["results"][1]["status"] == "error"
    for row in rows[2:5]:
        assert row["defined"] is False and row["results"] == [] and row["error"].startswith("line ")


def test_cli_missing_input_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code = cli_main(["exec", "--input", str(tmp_path / "nope.jsonl"), "--output", str(tmp_path / "o.jsonl")])
    assert code == 2
    assert "no such file" in capsys.readouterr().err


def _benchmark_module():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "sandbox_throughput.py"
    spec = importlib.util.spec_from_file_location("sandbox_throughput", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sandbox_throughput", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_gt_programs_verdicts_match_a_fresh_interpreter(validation_parquet: Path, ex: Executor) -> None:
    """HumanEval+/MBPP+ GT programs and wrong variants: same verdicts as one `python` per script."""
    bench = _benchmark_module()
    programs = bench.load_workload(validation_parquet, 6, 4)
    assert len(programs) == 12
    ours = bench.run_executor(ex, programs, 5.0)
    theirs = bench.run_script_per_program(programs, 2, 5.0)
    assert ours == theirs
    assert 0 < sum(ours) < len(ours)  # GT passes, wrong variants fail somewhere


def test_no_file_descriptor_leak(ex: Executor) -> None:
    jobs = [
        Job(
            str(i),
            "import os",
            ["1", "os._exit(1)" if i % 3 == 0 else "2", "[0 for _ in iter(int, 1)]" if i % 5 == 0 else "3"],
            timeout=0.3,
        )
        for i in range(20)
    ]
    ex.run(jobs[:2])
    before = len(os.listdir("/proc/self/fd"))
    res = ex.run(jobs)
    assert len(os.listdir("/proc/self/fd")) == before
    assert res[0].results[1].status == "crash" and res[0].results[2].status == "timeout"
    assert res[1].results == [
        CallResult("ok", 1, None, res[1].results[0].seconds),
        CallResult("ok", 2, None, res[1].results[1].seconds),
        CallResult("ok", 3, None, res[1].results[2].seconds),
    ]


NONROOT_SCRIPT = """
import sys, warnings
sys.path.insert(0, {repo!r})
from codea1.judge.calls import run_expecting
from codea1.sandbox import LocalExecutor, Job
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ex = LocalExecutor(1)
with ex:
    [res] = run_expecting(ex, [Job("a", "def f(x): return x * 2", ["f(2)", "f(3)", "[0 for _ in iter(int, 1)]", "f(4)"],
                                   timeout=0.5)], [[4, 7, None, 8]])
print(ex.isolation_level, len(caught), *[r.status for r in res.results])
"""


def test_really_unprivileged_process_falls_back() -> None:
    """As uid 65534 with the system Python: a weaker level, one warning, same verdicts."""
    import shutil
    import stat
    import subprocess

    system_python = Path("/usr/bin/python3")
    repo = Path(__file__).resolve().parents[1]
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not system_python.exists():
        pytest.skip("needs root, setpriv and a system python3")
    if any(not p.stat().st_mode & stat.S_IXOTH for p in (repo, *repo.parents)):
        pytest.skip("the checkout is not readable by other users")
    version = subprocess.run(
        [str(system_python), "-c", "import sys; print(sys.version_info >= (3, 10))"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    if version != "True":
        pytest.skip("the system python3 is older than 3.10")
    out = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
            "HOME=/",
            str(system_python),
            "-c",
            NONROOT_SCRIPT.format(repo=str(repo)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
    )
    assert out.returncode == 0, out.stderr[-2000:]
    level, warned, *statuses = out.stdout.split()
    assert "uid" not in level and level.endswith("rlimits")
    assert warned == "1"
    assert statuses == ["pass", "fail", "timeout", "pass"]


# --- zygote flavours: a job forks from the leanest zygote holding what it imports ---------------------------


def test_flavour_routing_is_conservative() -> None:
    from codea1.sandbox.preload import flavour

    assert flavour("import math\nfrom collections import Counter\ndef f(): return 1", ["f()"]) == "lean"
    assert flavour("def f(): return 1", ["f()"]) == "lean"
    assert flavour("import re, heapq as h, typing", []) == "lean"
    assert flavour("import inspect", []) == "full"
    assert flavour("import math, dataclasses", []) == "full"
    assert flavour("from sortedcontainers import SortedList", []) == "full"
    assert flavour("import os.path\nfrom xml.dom import minidom", []) == "full"
    assert flavour("m = __import__('inspect')", []) == "full"  # dynamic imports: never lean
    assert flavour("import importlib", []) == "full"
    assert flavour("def f(): return 1", ["__import__('csv').__name__"]) == "full"  # calls are scanned too
    assert flavour("import numpy as np", []) == "numpy"
    assert flavour("x = 1", ["numpy_like()"]) == "numpy"  # any mention of numpy


def test_missing_module_in_a_lean_child_reruns_on_the_full_zygote() -> None:
    from codea1.sandbox.preload import needs_full

    assert needs_full(False, "ModuleNotFoundError: No module named 'inspect'", [])
    assert needs_full(True, None, ["ImportError: cannot import name 'x'"])
    assert needs_full(True, None, ["LookupError: unknown encoding: cp1252"])
    assert not needs_full(True, None, ["ValueError: bad"])
    assert not needs_full(False, "SyntaxError: invalid syntax", [])


def test_lean_children_hold_fewer_modules_and_hidden_imports_still_work(ex: Executor) -> None:
    probe = "import sys\ndef held(*names): return [n for n in names if n in sys.modules]"
    call = "held('inspect', 'dataclasses', 'math', 'collections')"
    lean, full, hidden = run_expecting(
        ex,
        [
            Job("lean", probe, [call]),
            Job("full", probe + "\nimport inspect", [call]),
            Job("hidden", "exec('imp' + 'ort inspect as ins')\ndef f(): return ins.isfunction(f)", ["f()"]),
        ],
        [None, None, [True]],
    )
    assert lean.results[0].value == ["math", "collections"]
    assert full.results[0].value[0] == "inspect"
    assert hidden.defined and hidden.results[0].status == "pass"


def test_importing_the_values_module_does_not_load_the_executor() -> None:
    import subprocess

    probe = "import sys, codea1.sandbox.values; print(sorted(m for m in sys.modules if m.startswith('codea1')))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.replace("'", '"')) == ["codea1", "codea1.sandbox", "codea1.sandbox.values"]


# --- compiled in the parent, loaded by the child ------------------------------------------------------------


def test_code_compiles_as_its_own_module_whatever_the_parent_warnings(ex: Executor) -> None:
    from codea1.sandbox.executor import _shipped, clear_caches

    plain = "def f(x: int) -> int:\n    assert x >= 0\n    return x + 1"
    warns = "import re\ndef g(s):\n    return re.findall('\\d+', s) if s is not 'x' else []"  # two warnings
    clear_caches()
    assert type(_shipped(plain, "exec")) is bytes  # clean: shipped compiled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # would make the warnings errors, here
        assert _shipped(warns, "exec") == warns  # warns: the child compiles it, as it always did
        assert _shipped("def (", "exec") == "def ("
        assert _shipped("f(", "eval") is None and _shipped("(yield)", "eval") == "(yield)"
        res = run_expecting(
            ex,
            [
                Job("p", plain, ["f(1)", "f(-1)", "f.__annotations__['x'] is int"]),
                Job("w", warns, ["g('a1b22')"]),
                Job("s", "def (", ["1"]),
            ],
            [[2, None, True], [["1", "22"]], None],
        )
    assert [r.status for r in res[0].results] == ["pass", "error", "pass"]  # asserts kept, no stringified hints
    assert "AssertionError" in res[0].results[1].error
    assert res[1].defined and res[1].results[0].status == "pass"
    assert not res[2].defined and res[2].error.startswith("SyntaxError")


def test_stdlib_container_results_get_pythons_verdict(ex: Executor) -> None:
    from collections import Counter, OrderedDict, deque

    code = (
        "from collections import Counter, OrderedDict, defaultdict, namedtuple, deque\n"
        "P = namedtuple('P', 'x y')\n"
        "def count(s): return Counter(s)\n"
        "def point(): return P(1, 2)\n"
        "def groups():\n    d = defaultdict(list)\n    d['a'].append(1)\n    return d\n"
        "def ordered(): return OrderedDict([('b', 1), ('a', 2)])\n"
        "def window(): return deque([1, 2], maxlen=2)\n"
    )
    calls = ["count('aab')", "count('ab')", "point()", "groups()", "ordered()", "ordered()", "window()", "window()"]
    expected = [
        {"a": 2, "b": 1},
        Counter(a=1, b=1, c=0),
        (1, 2),
        {"a": [1]},
        {"a": 2, "b": 1},
        OrderedDict([("a", 2), ("b", 1)]),
        deque([1, 2]),
        [1, 2],
    ]
    [res] = run_expecting(ex, [Job("containers", code, calls)], [expected])
    assert [r.status for r in res.results] == ["pass", "pass", "pass", "pass", "pass", "fail", "pass", "fail"]


def test_isolation_report_lists_every_layer(capsys: pytest.CaptureFixture) -> None:
    from codea1.sandbox import isolation_report
    from codea1.sandbox.isolation import LAYERS

    report = isolation_report("netns+seccomp+rlimits")
    assert "[on] netns" in report and "[--] uid" in report and "missing: needs root" in report
    assert all(name in report for name in LAYERS if name != "userns")
    assert report.splitlines()[-1].startswith("missing: allowlist")
    assert cli_main(["exec", "--isolation"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"isolation level: {isolation_level()}\n")


def test_allowlist_root_of_an_installed_package_holds_only_its_sandbox(tmp_path: Path) -> None:
    """Installed (non-editable) codea1 inside a bound site-packages: its data is covered by an empty tmpfs
    before codea1/__init__.py and codea1/sandbox/ are bound back; the caller's directories never appear."""
    from codea1.sandbox import allowlist

    site = tmp_path / "site-packages"
    (site / "codea1" / "sandbox").mkdir(parents=True)
    (site / "codea1" / "__init__.py").write_text("")
    (site / "codea1" / "data" / "bundled").mkdir(parents=True)
    args = allowlist.command(
        "bwrap", [sys.executable, "-S", "-m", "codea1.sandbox.zygote", "3"], str(site), [str(site)]
    )
    pkg = allowlist.inside(str(site / "codea1"))  # under /tmp here: bound under allowlist.KEEP
    assert args[args.index("--tmpfs", args.index(str(site.resolve()))) + 1] == pkg
    binds = [args[i + 2] for i, a in enumerate(args) if a in ("--ro-bind", "--dev-bind")]
    assert f"{pkg}/sandbox" in binds and f"{pkg}/__init__.py" in binds
    assert args.index("--tmpfs") < args.index(f"{pkg}/sandbox") < args.index("--remount-ro")
    assert os.getcwd() not in binds and str(Path.home()) not in binds
    assert not {"/etc", "/etc/passwd", "/run", "/var", "/tmp", "/home"} & set(binds)


def test_the_cli_shows_codea1_warnings_as_one_line(capsys) -> None:
    """codea1's own warnings reach the console as one line, without Python's source-line echo."""
    import sys

    from codea1 import cli

    cli._show_warning(
        RuntimeWarning("codea1 sandbox: running without allowlist (needs root)"), RuntimeWarning, "x.py", 3, sys.stderr
    )
    assert capsys.readouterr().err == "codea1: note: running without allowlist (needs root)\n"


def test_the_local_executor_is_an_executor_and_returns_values_not_verdicts(ex: Executor) -> None:
    """The sandbox runs code and returns plain values; only the judge turns them into verdicts."""
    from codea1.judge.calls import decide

    assert isinstance(ex, Executor)
    [res] = ex.run([Job("v", "def f(x): return x * 2", ["f(2)", "f(3)"])])
    assert [(r.status, r.value) for r in res.results] == [("ok", 4), ("ok", 6)]
    judged = decide(res, [4, 7])
    assert [r.status for r in judged.results] == ["pass", "fail"]
