"""Mutation scoring that a test cannot game: each program runs alone in its child, the parent decides.

A test call that looks around its child (the `__main__` module, globals, gc, the stack, inspect, the
environment, files, descriptors, limits) to find out whether it runs against GT or a mutant gets the same
answer under GT and under every mutant, so it kills no mutant that honest calls do not kill; a call whose
value changes from run to run (a clock, a random id, a coin) is not scored. Honest calls get the same kill counts
as the earlier engine (one child for many mutants), kept in benchmarks/mutation_speed.py as a baseline;
that engine is also shown to fall to the attack, so the attack is real.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import quiet_executor

from codea1.eval.mutation import generate_mutants, run_programs, score_mutants

REPO = Path(__file__).resolve().parents[1]

SIGN = "def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n"
SIGN_CALLS = ["sign(5)", "sign(-5)", "sign(0)"]

# a small corpus of honest (function, calls): loops, strings, exceptions, containers, hangs
CORPUS = [
    (SIGN, ["sign(5)", "sign(-5)", "sign(0)", "sign(1)"]),
    (
        "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    return min(x, hi)\n",
        ["clamp(5, 0, 3)", "clamp(-1, 0, 3)"],
    ),
    (
        "def count_down(n):\n    out = []\n    while n > 0:\n        out.append(n)\n        n -= 1\n    return out\n",
        ["count_down(3)", "count_down(0)"],
    ),
    (
        (
            "def first_even(xs):\n    for x in xs:\n        if x % 2 == 0:\n            return x\n        else:\n"
            "            continue\n    return None\n"
        ),
        ["first_even([1, 3, 4, 6])", "first_even([1, 3])", "first_even([])"],
    ),
    (
        "def safe_div(a, b):\n    try:\n        return a / b\n    except ZeroDivisionError:\n        return None\n",
        ["safe_div(6, 3)", "safe_div(1, 0)"],
    ),
    (
        (
            "import re\n\ndef words(s, upper=False):\n    ws = [w for w in re.split(r'\\s+', s) if w]\n"
            "    return [w.upper() for w in ws] if upper else ws\n"
        ),
        ["words('a bc  d')", "words(' x y ', True)", "words('')"],
    ),
    (
        (
            "def histogram(xs):\n    h = {}\n    for x in xs:\n        h[x] = h.get(x, 0) + 1\n"
            "    return sorted(h.items(), key=lambda kv: (-kv[1], kv[0]))\n"
        ),
        ["histogram([3, 1, 3, 2, 1, 3])", "histogram([])"],
    ),
]


def _attack(body: str) -> str:
    """One test call (an expression) that runs the statements `body` and returns what they set `result` to."""
    return f"(lambda g: (exec({body!r}, g), g['result'])[1])(dict(globals()))"


GT_LINE = "    if x < 0:\n        return -1\n"  # text only GT holds in full (mutants change one spot)

# each: a question a hostile test asks of its surroundings; its answer must not depend on the program
ATTACKS = {
    # the earlier engine's leak: the list of programs and the index of the one being run
    "index": """
import sys
result = None
f = sys._getframe()
while f is not None:
    progs = f.f_globals.get('__CODEA1_PROGRAMS')
    if progs is not None and 'k' in f.f_locals:
        result = (progs[f.f_locals['k']] == GT_REVERSED[::-1], len(progs), f.f_locals['k'])
    f = f.f_back
""",
    "main_module": """
import sys
main = sys.modules['__main__']
names = sorted(main.__dict__)
texts = [n for n, v in main.__dict__.items() if isinstance(v, str) and GT_LINE_REVERSED[::-1] in v]
lists = [n for n, v in main.__dict__.items() if isinstance(v, (list, tuple))
         and any(isinstance(s, str) and 'def sign' in s for s in v)]
result = (main.__name__, names, texts, lists, sorted(globals()))
""",
    "gc": """
import gc
def probe():
    needle = GT_LINE_REVERSED[::-1]  # a local: not itself in a list or dict the search walks
    found = strings = 0
    for o in gc.get_objects():
        items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple)) else ()
        for s in items:
            if isinstance(s, str):
                strings += 'def ' in s
                found += needle in s
    return (found, strings)
result = probe()
""",
    "stack": """
import sys
frames = []
f = sys._getframe(1)
while f is not None:
    small = sorted((k, v) for k, v in f.f_locals.items()
                   if type(v) in (int, bool, type(None)) or (type(v) is str and len(v) < 80))
    frames.append((f.f_code.co_name, f.f_code.co_filename, sorted(f.f_locals), small))
    f = f.f_back
result = frames
""",
    "inspect": """
inspect = __import__("inspect")  # (a dynamic import: the sandbox then preloads inspect)
try:
    source = inspect.getsource(sign)
except Exception as exc:
    source = type(exc).__name__
result = (source, [(fr.function, fr.filename) for fr in inspect.stack()[1:]], inspect.getmodule(sign) is None)
""",
    "environment": """
import os, sys, resource
limits = [resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith('RLIMIT_')]
result = (sorted(os.environ.items()), os.getcwd(), sys.argv, sorted(sys.modules), limits, os.getpid(),
          os.getuid(), sys.flags.optimize)
""",
    "files": """
import os
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return type(exc).__name__
status = [l for l in read('/proc/self/status').splitlines()
          if l.split(':')[0] in ('Uid', 'Gid', 'Groups', 'NSpid', 'Seccomp', 'NoNewPrivs', 'PPid')]
result = (listing('.'), listing('/tmp'), listing('/proc/self/fd'), status, read('/proc/self/cgroup'),
          read('/proc/self/cmdline'), listing('/proc'))
""",
}
ATTACK_CALLS = [
    # GT's text travels reversed, so that the probes' own constants hold no copy for the search to find
    _attack(f"GT_REVERSED = {SIGN[::-1]!r}\nGT_LINE_REVERSED = {GT_LINE[::-1]!r}\n{body}")
    for body in ATTACKS.values()
]
# values that change from run to run: a test made of them would tell every child apart from GT's
NOISE_CALLS = [
    "__import__('time').time()",
    "id(object())",
    "__import__('os').urandom(8)",
    "__import__('time').perf_counter_ns()",
    # a coin per run (as `assert coin != 2` would test it), and a call that raises at random
    "__import__('time').perf_counter_ns() // 1000 % 2",
    "1 // (__import__('time').perf_counter_ns() // 1000 % 2)",
]


def _legacy():
    spec = importlib.util.spec_from_file_location("mutation_speed", REPO / "benchmarks" / "mutation_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def executor():
    ex = quiet_executor(uid_base=1_700_600_000)
    yield ex
    ex.close()


def test_every_probe_gets_the_same_answer_under_gt_and_every_mutant(executor):
    mutants = [m for m in generate_mutants(SIGN) if m.compiles]
    programs = [SIGN] * 2 + [m.code for m in mutants]
    runs = run_programs(programs, ATTACK_CALLS, executor, timeout=10.0, stop_on_error=False)
    assert all(kind == "ran" for kind, _ in runs), runs
    reference = runs[0][1]
    assert all(status == "ok" for status, _ in reference), reference
    assert len(reference) == len(ATTACKS)
    for program, (_, payload) in zip(programs, runs, strict=False):
        for name, ref, got in zip(ATTACKS, reference, payload, strict=False):
            assert got == ref, (name, program)
    # nothing names the other programs or an index; no source text sits in the child
    index, main, gc_probe = reference[0][1], reference[1][1], reference[2][1]
    assert index is None and main[2] == [] and gc_probe[0] == 0


def test_probes_kill_nothing_beyond_honest_calls(executor, monkeypatch):
    from codea1.eval import mutation

    # a coin goes unnoticed only if every GT run and every mutant run twice flip alike: with 16 mutants
    # run twice, about once in 2**18 tries
    monkeypatch.setattr(mutation, "RERUNS", 16)
    honest = score_mutants(SIGN, SIGN_CALLS, executor)
    hostile = score_mutants(SIGN, SIGN_CALLS + ATTACK_CALLS + NOISE_CALLS, executor)
    assert hostile.total == honest.total > 0
    assert [o.killed for o in hostile.outcomes] == [o.killed for o in honest.outcomes]
    # alone, the probes and the noise kill only what cannot define
    alone = score_mutants(SIGN, ATTACK_CALLS + NOISE_CALLS, executor)
    assert all(o.how == "undefined" for o in alone.outcomes if o.killed)


def test_the_probe_kills_every_mutant_under_the_earlier_engine(executor):
    """The attack is real: where several programs shared a child, the index probe told GT apart."""
    legacy = _legacy().legacy_score_mutants(SIGN, ATTACK_CALLS[:1], executor)
    assert legacy.total > 0 and legacy.killed == legacy.total
    assert score_mutants(SIGN, ATTACK_CALLS[:1], executor).killed < legacy.total


@pytest.mark.parametrize("index", range(len(CORPUS)))
def test_honest_calls_score_as_the_earlier_engine(executor, index):
    source, calls = CORPUS[index]
    ours = score_mutants(source, calls, executor)
    legacy = _legacy().legacy_score_mutants(source, calls, executor)
    assert ours.total == legacy.total > 0
    assert [(o.id, o.killed) for o in ours.outcomes] == [(o.id, o.killed) for o in legacy.outcomes]
    assert ours.killed == legacy.killed and ours.by_family == legacy.by_family


def test_honest_calls_on_ult_functions_score_as_the_earlier_engine(executor, ult_lite):
    from codea1.data.ult import ULT_PRELUDE, load_ult
    from codea1.judge.asserts import split_assert

    legacy = _legacy()
    checked = 0
    for fn in load_ult(ult_lite):
        mutants = generate_mutants(fn.code)
        calls = [p[0] for p in (split_assert(t) for t in fn.tests) if p]
        if not calls or not 0 < len(mutants) <= 30:
            continue
        ours = score_mutants(fn.code, calls, executor, prelude=ULT_PRELUDE, mutants=mutants)
        old = legacy.legacy_score_mutants(fn.code, calls, executor, prelude=ULT_PRELUDE, mutants=mutants)
        assert [o.killed for o in ours.outcomes] == [o.killed for o in old.outcomes], fn.task_id
        checked += 1
        if checked == 4:
            break
    assert checked == 4


def test_a_program_that_does_not_compile_is_undefined_without_a_child(executor):
    runs = run_programs(["def f(:\n", "def f():\n    return 1\n"], ["f()"], executor, timeout=5.0)
    assert runs[0][0] == "undefined" and runs[0][1].startswith("SyntaxError")
    assert runs[1] == ("ran", [("ok", 1)])
