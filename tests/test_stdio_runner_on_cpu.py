"""The sandbox's program runners (codea1.sandbox.runners) and the stdio kind's verdicts
(codea1.judge.kinds.stdio): Python programs run in the forked child with the input on fd 0, C++ programs
compiled once in the job and run per input, every layer on; hostile programs (floods, bombs, reading
what they should not) stay within their own job."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from codea1.game.parsing import extract_code
from codea1.judge.kinds.stdio import judge_runs, program_job
from codea1.lang import CPP, language
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor
from codea1.sandbox.preload import flavour
from codea1.sandbox.runners import MAX_STDOUT, process_program_job, python_program_job, run_results

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2) as ex:
        yield ex


def _py(executor, source: str, inputs: list[str], timeout: float = 2.0):
    [res] = executor.run([python_program_job("p", source, inputs, timeout)])
    return run_results(res, len(inputs), compiled=False)


def _cpp(executor, source: str, inputs: list[str], timeout: float = 2.0):
    job = process_program_job("c", CPP.source, source, CPP.compile_argv, CPP.run_argv, inputs, timeout)
    [res] = executor.run([job])
    return run_results(res, len(inputs), compiled=True)


def test_a_python_program_reads_each_input_as_stdin_in_every_way_programs_read_it(executor):
    ways = {
        "input": "a = int(input())\nb = int(input())\nprint(a + b)",
        "sys.stdin": "import sys\nprint(sum(map(int, sys.stdin.read().split())))",
        "open(0)": "print(sum(map(int, open(0).read().split())))",
        "buffer": "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())))",
        "readline": "import sys\ninput = sys.stdin.readline\nprint(int(input()) + int(input()))",
        "main guard": "def main():\n    print(int(input()) + int(input()))\nif __name__ == '__main__':\n    main()",
    }
    for name, source in ways.items():
        runs = _py(executor, source, ["1\n2\n", "30\n12\n", "5\n5\n"])
        assert [r.stdout for r in runs] == ["3\n", "42\n", "10\n"], name
        assert all(r.status == "ok" and r.exit_code == 0 for r in runs), name


def test_each_input_runs_the_program_afresh(executor):
    """Module-level state of one run (a counter, a cache) is not seen by the next: each run is the program
    started again, as GT's runs are."""
    source = "count = globals().get('count', 0) + 1\nseen = []\nseen.append(input())\nprint(count, len(seen))"
    assert [r.stdout for r in _py(executor, source, ["a\n", "b\n", "c\n"])] == ["1 1\n"] * 3


def test_exit_codes_errors_threads_and_raw_writes(executor):
    runs = _py(executor, "import sys\nprint('partial')\nsys.exit(3)", ["\n"])
    assert (runs[0].stdout, runs[0].exit_code) == ("partial\n", 3)
    runs = _py(executor, "print(1)\nraise ValueError('boom')", ["\n"])
    assert runs[0].exit_code == 1 and "ValueError: boom" in runs[0].error
    deep = (
        "import sys, threading\nsys.setrecursionlimit(10**6)\nthreading.stack_size(1 << 26)\n"
        "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n"
        "threading.Thread(target=lambda: print(depth(int(input())))).start()"
    )
    assert [r.stdout for r in _py(executor, deep, ["20000\n", "3\n"])] == ["20000\n", "3\n"]
    runs = _py(executor, "import os\nos.write(1, b'raw\\n')\nprint('text')", ["\n", "\n"])
    assert [r.stdout for r in runs] == ["raw\ntext\n"] * 2
    # a program that closes fd 0 and fd 1 does not take the next run's stdin or stdout away
    closer = "import os\nprint(input())\nopen(0).close()\n"
    assert [r.stdout for r in _py(executor, closer, ["x\n", "y\n"])] == ["x\n", "y\n"]


def test_syntax_errors_timeouts_and_floods(executor):
    runs = _py(executor, "def (:", ["1\n", "2\n"])
    assert [r.status for r in runs] == ["compile", "compile"] and "SyntaxError" in runs[0].error
    runs = _py(executor, "while True:\n    pass", ["1\n"], timeout=0.5)
    assert runs[0].status == "timeout"
    runs = _py(executor, "while True:\n    print('x' * 65536)", ["1\n"])
    assert runs[0].status == "output limit" and len(runs[0].stdout) == MAX_STDOUT
    runs = _py(executor, "import sys\nsys.stdout.buffer.write(b'\\xff\\xfeok\\n')", ["\n"])
    assert runs[0].status == "ok" and runs[0].stdout.endswith("ok\n")  # not UTF-8: replaced, never raised
    # stdin is a file: a program that reads past its end gets EOF, not a wait
    runs = _py(executor, "import sys\nsys.stdin.read()\nprint(repr(sys.stdin.read()))\ninput()", ["a\n"])
    assert runs[0].exit_code == 1 and "EOFError" in runs[0].error


def test_a_job_holds_no_expected_output_and_only_the_process_flavour_may_execute_its_tmp(executor):
    problem = Problem("s/1", "p", "d", kind="stdio", gt_solution="print(input())")
    job = program_job("j", problem, "print(input())", ["question\n"], 1.0)
    assert "answer-text" not in job.code + "".join(job.calls)
    # a Python job cannot run a file it writes (its /tmp is noexec where the jail is on)
    dropper = (
        "import os, subprocess\np = os.path.join(os.environ['TMPDIR'], 'x.sh')\n"
        "open(p, 'w').write('#!/bin/sh\\necho ran\\n')\nos.chmod(p, 0o755)\n"
        "try:\n    print(subprocess.run([p], capture_output=True, text=True).stdout.strip() or 'blocked')\n"
        "except OSError:\n    print('blocked')"
    )
    runs = _py(executor, dropper, ["\n"])
    assert runs[0].stdout in ("blocked\n", "ran\n")
    if "jobtmp" in executor.isolation_level.split("+"):
        assert runs[0].stdout == "blocked\n"
    assert flavour(python_program_job("p", "import numpy", ["\n"], 1.0).code, []) == "numpy"


@needs_gpp
def test_a_cpp_program_is_compiled_once_and_run_per_input(executor):
    source = "#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n"
    runs = _cpp(executor, source, ["1 2\n", "40 2\n", "-5 5\n"])
    assert [(r.status, r.stdout) for r in runs] == [("ok", "3\n"), ("ok", "42\n"), ("ok", "0\n")]
    runs = _cpp(executor, "int main( {", ["1\n", "2\n"])
    assert [r.status for r in runs] == ["compile", "compile"]
    assert runs[0].error.startswith("compile error: main.cpp:1:") and "error" in runs[0].error
    runs = _cpp(executor, "int main(){ volatile int *p = 0; return *p; }", ["\n"])
    assert runs[0].status == "ok" and runs[0].exit_code < 0 and "signal" in runs[0].error
    runs = _cpp(executor, "int main(){ for(;;); }", ["\n"], timeout=0.5)
    assert runs[0].status == "timeout"


@needs_gpp
def test_a_cpp_program_that_times_out_on_one_input_is_still_run_on_the_others(executor):
    """The compiled program lived only in the child that compiled it: after a timeout the next child ran the
    remaining inputs without it, and every one came back "not compiled" (a GT that timed out on one Test LLM
    input made every other input of the round invalid). The child started again now compiles first."""
    source = (
        "#include <bits/stdc++.h>\nint main(){long long a,b;std::cin>>a>>b;if(a==7){for(;;);}std::cout<<a+b<<'\\n';}\n"
    )
    runs = _cpp(executor, source, ["1 2\n", "7 0\n", "40 2\n", "-5 5\n"], timeout=0.5)
    assert [(r.status, r.stdout) for r in runs] == [("ok", "3\n"), ("timeout", ""), ("ok", "42\n"), ("ok", "0\n")]


@needs_gpp
def test_hostile_cpp_programs_stay_in_their_job(executor):
    """A fork bomb, an include of a device, and a program that looks for the expected output on the
    machine: each ends within its limits, and the expected output is nowhere it can read."""
    bomb = '#include <unistd.h>\n#include <cstdio>\nint main(){ for(int i=0;i<100000;i++) fork(); puts("done"); }'
    runs = _cpp(executor, bomb, ["\n"], timeout=2.0)
    assert runs[0].status in ("ok", "timeout", "crash")
    runs = _cpp(executor, '#include "/dev/zero"\nint main(){}', ["\n"])
    assert runs[0].status == "compile"
    finder = (
        "#include <bits/stdc++.h>\n#include <dirent.h>\nint main(){ int found = 0; const char* dirs[] = "
        '{"/tmp", "/", "/proc/self", "/root", "/home", "/srv"};\n for (auto d : dirs) { DIR* h = opendir(d); if (!h) continue;'
        ' while (auto e = readdir(h)) { std::string n = e->d_name; if (n.find("expected") != std::string::npos)'
        " found++; } closedir(h); }\n std::cout << found << std::endl; }"
    )
    runs = _cpp(executor, finder, ["\n"])
    assert runs[0].stdout == "0\n"


def test_verdicts_follow_the_output_rule_and_the_exit_status():
    from codea1.sandbox.runners import RunResult

    runs = [
        RunResult("ok", "3\n"),
        RunResult("ok", "4\n"),
        RunResult("ok", "3\n", exit_code=2, error="exit status 2"),
        RunResult("timeout", error="no result within 1s"),
        RunResult("compile", error="compile error: x"),
    ]
    verdicts = judge_runs(runs, ["3", "3", "3", "3", "3"], "lcb")
    assert [v.status for v in verdicts] == ["pass", "fail", "error", "timeout", "undefined"]


def test_languages_fence_and_name_their_programs():
    assert language("cpp").compiled and not language("python").compiled
    assert extract_code("Here:\n```C++\nint main(){}\n```\n", "cpp") == "int main(){}"
    assert extract_code("```python\nprint(1)\n```\n```cpp\nint main(){}\n```", "cpp") == "int main(){}"
    assert extract_code("```cppx\nA\n```", "cpp") == "A"  # no cpp fence: the first fence of any kind
    with pytest.raises(Exception, match="language 'rust' is unknown"):
        language("rust")


@needs_gpp
def test_the_compile_has_a_limit_of_its_own_and_a_program_waiting_on_stdin_gets_eof(executor):
    heavy = "#include <bits/stdc++.h>\nint main(){ std::map<int, std::vector<std::string>> m; std::cout << m.size(); }"
    job = process_program_job(
        "slow", CPP.source, heavy, CPP.compile_argv, CPP.run_argv, ["\n"], 1.0, compile_timeout=0.05
    )
    [res] = executor.run([job])
    [run] = run_results(res, 1, compiled=True)
    assert run.status == "compile" and "0.05s" in run.error  # the compile ran out of its own limit
    waiter = '#include <cstdio>\nint main(){ int c, n = 0; while ((c = getchar()) != EOF) n++; printf("%d\\n", n); }'
    assert [r.stdout for r in _cpp(executor, waiter, ["abc\n", ""])] == ["4\n", "0\n"]


def test_no_python_run_sees_what_an_earlier_run_left(executor):
    """Round 6: one job's runs shared a process, so a run saw what earlier inputs left: a counter on the
    builtins module, a module it changed, a file in /tmp. The verdict of an input then depended on the
    inputs before it, where GT's runs each start afresh. Each run is now a process of its own."""
    source = (
        "import builtins, os, json\n"
        "builtins.runs = getattr(builtins, 'runs', 0) + 1\n"
        "json.seen = getattr(json, 'seen', 0) + 1\n"
        "tmp = os.environ.get('TMPDIR', '/tmp')\n"
        "left = sorted(n for n in os.listdir(tmp) if not n.startswith('.'))\n"
        "open(os.path.join(tmp, 'note' + input().strip()), 'w').write('x')\n"
        "print(builtins.runs, json.seen, left)"
    )
    runs = _py(executor, source, ["1\n", "2\n", "3\n"])
    assert [r.stdout for r in runs] == ["1 1 []\n"] * 3
    # round 7: the input file's mode, a FIFO put in its place, System V shared memory reached later runs
    source = (
        "import os, stat, ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "tmp = os.environ.get('TMPDIR', '/tmp')\n"
        "mode = stat.S_IMODE(os.stat(os.path.join(tmp, '.stdin')).st_mode)\n"
        "seg = libc.shmget(0x5EED, 4096, 0o600)\n"
        "print(input().strip(), oct(mode), seg >= 0)\n"
        "libc.shmget(0x5EED, 4096, 0o1600)\n"
        "os.chmod(os.path.join(tmp, '.stdin'), 0o644)\n"
        "os.unlink(os.path.join(tmp, '.stdin'))\n"
        "os.mkfifo(os.path.join(tmp, '.stdin'))"
    )
    runs = _py(executor, source, ["a\n", "b\n", "c\n"])
    assert [(r.status, r.stdout) for r in runs] == [("ok", f"{x} 0o600 False\n") for x in "abc"]
    runs = _py(executor, "import os\nprint(input())\nos._exit(4)", ["a\n"])  # no flush: nothing printed
    assert (runs[0].stdout, runs[0].exit_code) == ("", 4)
    runs = _py(executor, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", ["a\n"])
    assert runs[0].exit_code == -9 and "signal 9" in runs[0].error


@needs_gpp
def test_no_cpp_run_sees_what_an_earlier_run_left(executor):
    """Round 6: a process started by one run outlived it and wrote into the next runs' output; files it left
    and a rewritten program file reached later runs too. Round 7: so did the source and the compiler's log
    (kept past the compile) and System V shared memory (the job's IPC namespace outlives its runs)."""
    source = (
        "#include <bits/stdc++.h>\n#include <unistd.h>\n#include <sys/shm.h>\n"
        'int main(){ int x; std::cin >> x; FILE* f = fopen("left", "r"); int seen = f != nullptr;\n'
        " if (shmget(0x5EED, 4096, 0600) >= 0) seen += 1000; shmget(0x5EED, 4096, 01600);\n"
        ' if (FILE* s = fopen("main.cpp", "r")) { seen += 10; fclose(s); }  // the source, kept past the compile\n'
        ' if (FILE* c = fopen(".compile", "r")) { seen += 100; fclose(c); }  // the compiler\'s log\n'
        ' if (f) fclose(f); f = fopen("left", "w"); fputs("x", f); fclose(f);\n'
        ' if (x == 1 && fork() == 0) { setsid(); for (int i = 0; i < 40; i++) { usleep(50000); write(1, "42\\n", 3); } _exit(0); }\n'
        ' if (x == 1) { unlink("program"); FILE* p = fopen("program", "w"); fputs("#!/bin/sh\\necho forged\\n", p); fclose(p); }\n'
        " if (x != 1) usleep(300000);  // the first run ends at once, its child writing on\n"
        ' printf("%d %d\\n", x, seen); return 0; }\n'
    )
    runs = _cpp(executor, source, ["1\n", "2\n", "3\n"])
    assert [(r.status, r.stdout) for r in runs] == [("ok", "1 0\n"), ("ok", "2 0\n"), ("ok", "3 0\n")]


def test_a_compile_that_says_nothing_is_reported_by_how_it_ended(executor):
    """Round 6: a compiler killed by a limit, or failing without a message, was reported as "compile error:
    ok" (the call's own status); the reason now says how the compiler ended."""
    for argv, why in (
        (("/bin/sh", "-c", "kill -9 $$"), "killed by signal 9"),
        (("/bin/sh", "-c", "exit 3"), "status 3"),
    ):
        job = process_program_job("c", "main.cpp", "int main(){}", argv, ("{out}",), ["\n"], 1.0)
        [res] = executor.run([job])
        [run] = run_results(res, 1, compiled=True)
        assert run.status == "compile" and why in run.error, run.error


@needs_gpp
def test_precompiled_headers_change_how_long_a_compile_takes_never_what_it_means(executor):
    """The compile reads <bits/stdc++.h> precompiled (codea1.sandbox.pch) where it is a program's first
    include; where the program's macros differ from the header's build it reads the header itself, so a
    program means the same with or without them. The jobs cannot write the headers."""
    from codea1.sandbox import pch

    argv = pch.with_precompiled_headers(CPP.compile_argv)
    built = pch.precompiled_dir(tuple(CPP.compile_argv))
    if built is None:
        pytest.skip("precompiled headers cannot be built here")
    assert argv[1:5] == ("-I", f"{pch.MOUNT}/{built.rsplit('/', 1)[-1]}", "-I", built)
    # the headers are valid for the language's flags: g++ reads the precompiled form ("!" in -H's list)
    probe = subprocess.run(
        [argv[0], "-H", *argv[1:5], *CPP.compile_argv[1:-3], "-fsyntax-only", "-x", "c++", "-"],
        input="#include <bits/stdc++.h>\nint main(){}\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.stderr.splitlines()[0] == f"! {built}/bits/stdc++.h.gch", probe.stderr[:300]
    # and the sandbox sees them where its compile looks first
    seen = _py(executor, f"import os\nprint(sorted(os.listdir({argv[2]!r})))", ["\n"])[0].stdout
    if "allowlist" in executor.isolation_level.split("+"):
        assert seen == "['bits', 'cstdio', 'cstdio.gch', 'iostream', 'iostream.gch']\n"
    source = "#include <bits/stdc++.h>\nint main(){ std::vector<int> v(2); std::cout << v.size() << '\\n'; }"
    assert [r.stdout for r in _cpp(executor, source, ["\n"])] == ["2\n"]
    debug = "#define _GLIBCXX_DEBUG\n" + source.replace("v.size()", "v[5]")  # checked: aborts, as without
    runs = _cpp(executor, debug, ["\n"])
    assert runs[0].status == "ok" and runs[0].exit_code < 0
    clash = "#include <iostream>\nint y1 = 3;\nint main(){ std::cout << y1 << '\\n'; }"  # no <cmath> brought in
    assert [r.stdout for r in _cpp(executor, clash, ["\n"])] == ["3\n"]
    # round 7: a precompiled header included again (by the program or inside another header) was not found
    main = "\nint main(){ long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }"
    for first, then in (("cstdio", "iostream"), ("iostream", "iostream"), ("iostream", "bits/stdc++.h")):
        runs = _cpp(executor, f"#include <{first}>\n#include <{then}>{main}", ["1 2\n"])
        assert [(r.status, r.stdout) for r in runs] == [("ok", "3\n")], (first, then, runs[0].error)
    writer = f"import os\nopen({pch.MOUNT + '/x'!r}, 'w')"
    runs = _py(executor, writer, ["\n"])
    assert runs[0].exit_code == 1 and (
        "Read-only" in runs[0].error or "Permission" in runs[0].error or "No such" in runs[0].error
    )


def test_precompiled_headers_are_not_read_from_a_directory_others_may_write(tmp_path, monkeypatch):
    from codea1.sandbox import pch

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("CODEA1_PCH_DIR", str(shared))
    pch.precompiled_dir.cache_clear()
    try:
        assert pch.bound_dirs() == []
        assert pch.with_precompiled_headers(CPP.compile_argv) == CPP.compile_argv
    finally:
        pch.precompiled_dir.cache_clear()


def test_a_run_that_closes_its_tmp_to_itself_reaches_no_later_run(executor):
    """A run that took every permission off /tmp (and off a directory it left there) made each later input
    fail and kept its files from the clean-up; the clean-up now opens them again, so later runs start as
    the first did (the run that did it spoiled only its own output)."""
    source = (
        "import os\nt = os.environ['TMPDIR']\nx = input().strip()\nseen = os.path.exists(os.path.join(t, 'd'))\n"
        "if x == 'a':\n"
        "    os.makedirs(os.path.join(t, 'd', 'e'))\n"
        "    open(os.path.join(t, 'd', 'e', 'f'), 'w').write('1')\n"
        "    for p in (os.path.join(t, 'd', 'e'), os.path.join(t, 'd'), t):\n"
        "        os.chmod(p, 0)\n"
        "print(x, seen)"
    )
    runs = _py(executor, source, ["a\n", "b\n", "c\n"])
    assert [(r.status, r.stdout) for r in runs[1:]] == [("ok", "b False\n"), ("ok", "c False\n")]
