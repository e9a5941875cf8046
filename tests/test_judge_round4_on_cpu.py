"""Round 4 of the verdict attacks: one test per class of issue, each failing on the code before its fix.

Pure-value classes run without a sandbox; the rest share one LocalExecutor.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from codea1.config import GameConfig
from codea1.game import StoredTest, play_step
from codea1.judge import encode_expected
from codea1.judge.equality import holds, values_equal
from codea1.problem import Problem


def test_nan_equals_nan_inside_sets_and_dict_keys() -> None:
    # two NaN objects, as the parent decodes them from two different children
    assert values_equal({float("nan"), 1}, {float("nan"), 1})
    assert values_equal(frozenset({(float("nan"), 2)}), frozenset({(float("nan"), 2)}))
    assert values_equal({float("nan"): "a"}, {float("nan"): "a"})
    assert values_equal({(1, float("nan")): [float("nan")]}, {(1, float("nan")): [float("nan")]})
    assert holds("in", float("nan"), {float("nan")})
    # still Python's == everywhere else: sizes, members and values must match, one to one
    assert not values_equal({float("nan"), 1}, {float("nan"), 2})
    assert not values_equal({float("nan")}, {float("nan"), 3})
    assert not values_equal({float("nan"): 1}, {float("nan"): 2})
    assert not values_equal({float("nan"): 1, 2: 3}, {float("nan"): 1, float("nan"): 3})
    assert values_equal({1, 2.0}, {1.0, 2})  # 1 == 1.0 as in Python


def test_decimal_nan_equals_decimal_nan() -> None:
    assert values_equal(Decimal("NaN"), Decimal("NaN"))
    assert values_equal(Decimal("sNaN"), Decimal("sNaN"))
    assert values_equal([Decimal("NaN")], [Decimal("NaN")])
    assert values_equal({Decimal("NaN")}, {Decimal("NaN")})
    assert not values_equal(Decimal("NaN"), Decimal("sNaN"))
    assert not values_equal(Decimal("NaN"), Decimal(1))
    assert not values_equal(Decimal("sNaN"), 1)  # a signalling NaN compared with == raises: unequal, no crash
    assert math.isnan(float(Decimal("NaN")))


# ---------------------------------------------------------------- input files
def test_jsonl_is_split_on_newlines_only(tmp_path) -> None:
    import json

    from codea1.cli import main as cli_main
    from codea1.problem import jsonl_rows

    text = "\n".join(json.dumps(r, ensure_ascii=False) for r in ({"a": "x\u2028y\x85z"}, {"a": 2}))
    assert [row for _, row in jsonl_rows(text, "mem")] == [{"a": "x\u2028y\x85z"}, {"a": 2}]
    src = tmp_path / "jobs.jsonl"
    jobs = [{"id": "one", "code": "s = 'a\u2028b'", "calls": ["s"]}, {"id": "two", "code": "", "calls": ["1 + 1"]}]
    src.write_text("\n".join(json.dumps(j, ensure_ascii=False) for j in jobs) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["exec", "--input", str(src), "--output", str(out), "--timeout", "2", "--workers", "1", "--no-progress"]
    assert cli_main(args) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").split("\n") if line]
    assert [r["id"] for r in rows] == ["one", "two"]
    assert [r["results"][0]["value"] for r in rows] == ["a\u2028b", 2]


def test_repeated_problem_ids_are_refused_in_one_sentence(tmp_path) -> None:
    from codea1.data import load_problems
    from codea1.errors import UserError
    from codea1.problem import write_problems_jsonl

    def problem(pid: str, body: str) -> Problem:
        return Problem(pid, "p", "d", "f", f"def f():\n    return {body}", [f"assert f() == {body}"])

    path = tmp_path / "p.jsonl"
    write_problems_jsonl([problem("q/1", "1"), problem("q/2", "2"), problem("q/1", "3")], path)
    with pytest.raises(UserError, match=r"problem ids must be unique, but 'q/1' \(2 times\) repeat"):
        load_problems(str(path))


# ---------------------------------------------------------------- the game's jobs
UID_BASE = 1_701_100_000


@pytest.fixture(scope="module")
def executor():
    from conftest import quiet_executor

    with quiet_executor(UID_BASE) as ex:
        yield ex


def _problem(pid: str, gt: str, entry: str = "f") -> Problem:
    return Problem(id=pid, prompt="p", description="d", entry_point=entry, gt_solution=gt)


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


def test_every_gt_call_starts_from_a_clean_gt_program(executor) -> None:
    # GT keeps state between calls (a mutable default). Candidate 0's suite calls f(1); candidate 1's calls
    # f(2). Run in one GT program, f(2) would answer 2 and a GT-identical candidate 1 (f(2) alone: 1) fails.
    gt = "def f(x, seen=[]):\n    seen.append(x)\n    return len(seen)\n"
    problem = _problem("r4/state", gt)
    result = play_step(
        [problem], [[_fenced(gt), _fenced(gt)]], [[["assert f(1) == 1"], ["assert f(2) == 1"]]], executor
    )[0]
    assert [c.suites[0].gen_pass for c in result.codes] == [1.0, 1.0]
    assert [c.suites[0].valid_tests for c in result.codes] == [1, 1]


def test_each_suite_of_a_candidate_has_its_own_byte_budget(executor, monkeypatch) -> None:
    from codea1.sandbox import executor as executor_module
    from codea1.sandbox import wire

    monkeypatch.setattr(wire, "MAX_CHILD_BYTES", 512 << 10)  # scaled down: 4 values of 300 KB use it up
    monkeypatch.setattr(executor_module, "MAX_JOB_BYTES", 1 << 20)
    gt = "def f(n):\n    return 'x' * n\n"
    big = "\n".join(f"assert f({300_000 + i}) == 'x' * {300_000 + i}" for i in range(4))
    result = play_step([_problem("r4/budget", gt)], [[_fenced(gt)]], [[[big, "assert f(1) == 'x'"]]], executor)[0]
    heavy, light = result.codes[0].suites
    assert light.valid_tests == 1 and light.gen_pass == 1.0  # the other suite's values cannot crash it
    assert heavy.valid_tests == 4 and heavy.gen_pass < 1.0  # the heavy suite alone is over its budget


def test_a_replayed_test_is_timed_against_gts_own_time(executor) -> None:
    # GT takes ~0.6 s on the book's call, past the 0.2 s limit and the sandbox's grace. Before, a book test carried no GT time: the
    # job's limit stayed 0.2 s, GT's repeat timed out too, and a candidate that never returns was excused,
    # counted as passing and the test left the book.
    gt = "import time\ndef f(x):\n    time.sleep(0.6)\n    return x\n"
    loops = "def f(x):\n    while True:\n        pass\n"
    book = [StoredTest(call="f(3)", expected_json=encode_expected(3))]
    config = GameConfig(test_timeout=0.2, timeout_factor=4)
    result = play_step([_problem("r4/book", gt)], [[_fenced(loops)]], [[[""]]], executor, [book], config)[0]
    assert result.timeouts_excused == 0
    assert result.codes[0].hist_pass == 0.0
    assert result.updates.passed == []
    honest = play_step([_problem("r4/book", gt)], [[_fenced(gt)]], [[[""]]], executor, [book], config)[0]
    assert honest.codes[0].hist_pass == 1.0 and len(honest.updates.passed) == 1


def test_hashing_by_address_is_the_same_in_every_slot() -> None:
    # hash(None) is None's address in CPython 3.11: the order of a set holding None depended on the slot
    from conftest import quiet_executor

    from codea1.sandbox import Job

    calls = ["hash(None)", "[repr(x) for x in {None, *range(20), 'a', (None, 1)}]"]
    seen = []
    for base in (UID_BASE + 10, UID_BASE + 20):
        with quiet_executor(base) as ex:
            seen.append([r.value for r in ex.run([Job("h", "", calls)])[0].results])
    assert seen[0] == seen[1]


# ---------------------------------------------------------------- evaluation
def test_golden_asserts_keep_every_comparison(executor) -> None:
    from codea1.eval.code_eval import evaluate_samples

    tests = [
        "assert f(1) == 2",
        "assert f(2) != 5",
        "assert f(3) is not None",
        "assert f(4) < 10",
        "assert f(5) in [10, 11]",
        "assert f(6)",
    ]
    problem = Problem("r4/golden", "p", "d", "f", "def f(x):\n    return 2 * x\n", tests)
    samples = [
        ("r4/golden", "def f(x):\n    return 2 * x\n"),
        ("r4/golden", "def f(x):\n    return {1: 2, 2: 5, 3: None, 4: 12, 5: 9, 6: 0}[x]\n"),  # fails 5 of 6
        ("r4/golden", "def f(x):\n    return 2 if x == 1 else None\n"),
    ]
    _, results, _ = evaluate_samples([problem], samples, executor, ks=[1])
    assert [r.passed for r in results] == [True, False, False]


def test_a_golden_test_that_cannot_be_read_leaves_no_partial_spec() -> None:
    from codea1.judge.formats import spec_for

    problem = Problem(
        "r4/chain", "p", "d", "f", "def f(x):\n    return x\n", ["assert f(1) == 1", "assert 0 < f(1) < 2"]
    )
    assert spec_for(problem) is None
    ok = Problem("r4/ok", "p", "d", "f", "def f(x):\n    return x\n", ["assert f(1) == 1", "assert f(1) is not None"])
    assert spec_for(ok).ops == ["==", "is not"]


SIGN = "def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n"


def test_mut_at_k_counts_what_the_assert_decides(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.mutation import generate_mutants
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    undefined = sum(not m.compiles for m in generate_mutants(SIGN))
    suites = {
        "honest": ["assert sign(5) == 1", "assert sign(-5) == -1", "assert sign(0) == 0"],
        "tautology": ["assert sign(5) == sign(5)", "assert sign(-5) == sign(-5)", "assert sign(0) == sign(0)"],
        "never": ["assert sign(5) != -12345", "assert sign(-5) != -12345", "assert sign(0) != -12345"],
    }
    killed = {}
    for name, tests in suites.items():
        _, [record] = score_tests([fn], {"sign": tests}, executor, k=3, coverage=False)
        assert record.all_valid, name
        killed[name] = record.killed
    assert killed["tautology"] == killed["never"] - _crashing_or_looping(executor) == undefined
    assert killed["honest"] > killed["never"] + 5


def test_no_argument_expression_of_eval_tests_runs_beside_a_mutant(executor) -> None:
    """U5: a test's argument expressions ran in each mutant's child, where they could tell the mutant from
    GT (here by its bytecode) and make every mutant fail one call. The CALLs are now resolved to plain
    arguments first, in a child holding neither GT nor a mutant; such a test cannot be resolved, fails on
    GT too, and kills nothing. An honest test's CALLs resolve to themselves."""
    from codea1.data.ult import UltFunction
    from codea1.eval.mutation import generate_mutants
    from codea1.eval.suite_eval import mutants_killed_by_asserts

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    space: dict = {}
    exec(SIGN, space)  # noqa: S102  (the test's own trusted GT, for its bytecode)
    gt = space["sign"].__code__.co_code.hex()
    sneaky = f"assert sign(5 if globals()['sign'].__code__.co_code.hex() == '{gt}' else None) == 1"
    by_bytecode = mutants_killed_by_asserts(fn, [sneaky], executor)
    honest = mutants_killed_by_asserts(fn, ["assert sign(5) == 1"], executor)
    undefined = sum(not m.compiles for m in generate_mutants(SIGN))
    assert by_bytecode.killed == undefined  # only the mutants that do not even compile
    assert honest.killed > undefined
    assert honest.killed < honest.total  # sign(5) alone leaves survivors, which the sneaky test had killed


def _crashing_or_looping(executor) -> int:
    """Mutants of SIGN that raise, loop or crash on 5, -5 or 0 (a `!=` test kills those, honestly)."""
    from codea1.eval.mutation import generate_mutants, run_programs

    mutants = [m for m in generate_mutants(SIGN) if m.compiles]
    runs = run_programs([m.code for m in mutants], ["sign(5)", "sign(-5)", "sign(0)"], executor, timeout=2.0)
    return sum(run[0] != "ran" or any(s != "ok" for s, _ in run[1]) for run in runs)


def test_the_attack_rate_counts_what_the_assert_decides(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.mutation import generate_mutants
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    buggy = next(m for m in generate_mutants(SIGN) if m.id == "ReplaceComparisonOperator_Gt_GtE@2:9")
    tautology = {"sign": ["assert sign.__code__.co_code.hex() == sign.__code__.co_code.hex()"]}
    summary, [record] = score_tests(
        [fn], tautology, executor, k=1, mutation=False, coverage=False, buggy={"sign": buggy}
    )
    assert record.valid == [True] and record.exposed is False and summary["attack_rate"] == 0.0


def test_a_test_cannot_write_the_coverage_records(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    forge = "(getattr(__import__('sys')._getframe(1).f_locals.get('lines'), 'update', len)(range(1, 7)), 5)[1]"
    forged = {"sign": [f"assert sign({forge}) == 1"]}
    honest = {"sign": ["assert sign(5) == 1"]}
    _, [f] = score_tests([fn], forged, executor, k=1, mutation=False)
    _, [h] = score_tests([fn], honest, executor, k=1, mutation=False)
    assert f.valid == [True] and (f.line_coverage, f.branch_coverage) == (h.line_coverage, h.branch_coverage)
    assert h.line_coverage == 50.0


def test_eval_tests_reads_every_comparison(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    tests = {"sign": ["assert sign(5) < 3", "assert sign(0) in [0, 1]", "assert sign(-4) <= -1"]}
    summary, [record] = score_tests([fn], tests, executor, k=3)
    assert record.valid == [True, True, True] and record.killed > 0 and summary["pass@3"] == 100.0


def test_evalplus_type_checks_are_decided_on_decoded_values(executor) -> None:
    from codea1.eval.code_eval import evaluate_samples

    test_code = (
        "def check(candidate):\n"
        "    inputs = [[1.0], [2.0]]\n"
        "    results = [(0.5, 0.25), (1.0, 0.5)]\n"
        "    for i, (inp, exp) in enumerate(zip(inputs, results)):\n"
        "        assertion(candidate(*inp), exp, 1e-6)\n"
    )
    gt = "def halves(x):\n    return (x / 2, x / 4)\n"
    problem = Problem("r4/typed", "p", "d", "halves", gt, test_code=test_code, source="humanevalplus")
    forged = (
        "class L(list):\n    __module__ = 'builtins'\n    __qualname__ = 'tuple'\n"
        "def halves(x):\n    return L([x / 2 + 1e-9, x / 4])\n"
    )
    honest = "def halves(x):\n    return (x / 2 + 1e-9, x / 4)\n"
    _, results, _ = evaluate_samples([problem], [("r4/typed", honest), ("r4/typed", forged)], executor, ks=[1])
    assert [r.passed for r in results] == [True, False]


# ---------------------------------------------------------------- the oracle's reading of an assert
THIEF = (
    "import sys\n"
    "def f(x):\n"
    "    for depth in range(1, 8):\n"
    "        try:\n"
    "            loc = sys._getframe(depth).f_locals\n"
    "        except ValueError:\n"
    "            break\n"
    "        for value in list(loc.values()):\n"
    "            if type(value) in (tuple, list) and len(value) == 2 and value[0] == x:\n"
    "                return value[1]\n"
    "            if hasattr(value, 'want') and getattr(value, 'arg', None) == x:\n"
    "                return value.want\n"
    "    return -1\n"
)


def test_only_the_arguments_of_a_loop_reach_the_candidate(executor) -> None:
    from codea1.judge.oracle import AssertCase, run_assertions

    tests = [
        "assert all(f(t[0]) == t[1] for t in [(1, 10), (2, 20)])",
        "assert [f(p[0]) for p in [[1, 10]]] == [10]",
        "assert all(f(c.arg) == c.want for c in [type('C', (), {'arg': 1, 'want': 10})])",
        "assert all(f(x=t[0]) == t[1] for t in [(3, 30)])",
        "assert all(f(*t[:1]) == t[1] for t in [(4, 40)])",
    ]
    [res] = run_assertions(executor, [AssertCase(code=THIEF, tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["fail"] * 5
    [ok] = run_assertions(executor, [AssertCase(code="def f(x):\n    return 10 * x\n", tests=tests, entry_point="f")])
    assert [r.status for r in ok.results] == ["pass"] * 5


def test_short_circuits_hold(executor) -> None:
    from codea1.judge.oracle import AssertCase, run_assertions

    code = "def f(x):\n    if x < 0:\n        raise ValueError(x)\n    return x\n"
    tests = [
        "assert f(1) == 1 or f(-1) == 0",
        "assert f(0) == 1 and f(-1) == 0",
        "assert f(2) if f(2) > 1 else f(-2)",
        "assert any([f(1) > 0, f(-1) > 0]) or f(1) == 1",
        "assert (lambda g=f: g(2))() == 2",
        "assert f(1) == 2 or f(-1) == 0",
        "assert f(-1) == 0 or True",
    ]
    [res] = run_assertions(executor, [AssertCase(code=code, tests=tests, entry_point="f")])
    assert [r.status for r in res.results] == ["pass", "fail", "pass", "error", "pass", "error", "error"]
    # (a list display is built whole, as in Python; the iterations of a comprehension split per iteration
    # still run together in the candidate's child: one that raises fails the test, a limit of the split)


def test_without_an_entry_point_the_child_computes_calls_not_verdicts(executor) -> None:
    from codea1.judge.oracle import AssertCase, run_assertions

    # the candidate reads the expected constant from its caller's code: with the whole boolean assert in
    # its child, the caller was the assert itself
    reader = (
        "import sys\n"
        "def f(x):\n"
        "    consts = [c for c in sys._getframe(1).f_code.co_consts if type(c) is int and c != x]\n"
        "    return consts[0] if consts else -1\n"
    )
    tests = ["assert f(1) == 7 and f(2) == 7", "assert all([f(3) == 9])", "assert f(1) == 7"]
    [res] = run_assertions(executor, [AssertCase(code=reader, tests=tests)])
    assert [r.status for r in res.results] == ["fail", "fail", "fail"]
    [ok] = run_assertions(executor, [AssertCase(code="def f(x):\n    return 7 if x < 3 else 9\n", tests=tests)])
    assert [r.status for r in ok.results] == ["pass", "pass", "pass"]


def test_the_parents_compiled_code_cache_is_bounded_in_bytes(monkeypatch) -> None:
    from codea1.sandbox import executor as executor_module

    cache = executor_module._ship_call
    cache.cache_clear()
    monkeypatch.setattr(cache, "max_bytes", 1 << 20)
    for i in range(60):  # 60 distinct calls of ~20 KB of source each, ~70 KB with their compiled form
        call = f"len([{', '.join(str(i + j) for j in range(3_000))}])"
        assert executor_module._shipped(call, "eval") == executor_module._ship(call, "eval")
    assert 0 < cache.bytes <= 1 << 20 and len(cache.items) < 60
    cache.cache_clear()


def test_the_allowlist_root_holds_with_codea1_under_tmp(tmp_path) -> None:
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    from codea1.sandbox import isolation_level

    if "allowlist" not in isolation_level():
        pytest.skip("the allow-list root is not available on this machine (root and bubblewrap)")
    repo = Path(__file__).resolve().parents[1]
    assert str(tmp_path.resolve()).startswith("/tmp/")
    shutil.copytree(repo / "codea1", tmp_path / "codea1", ignore=shutil.ignore_patterns("__pycache__"))
    script = (
        "import warnings; warnings.simplefilter('ignore')\n"
        "import codea1, json\n"
        "from codea1.sandbox import Job, LocalExecutor\n"
        f"with LocalExecutor(1, uid_base={UID_BASE + 40}) as ex:\n"
        "    [r] = ex.run([Job('w', 'import os', ['os.path.exists(\"/run/lock\")', 'len(os.listdir(\"/tmp\"))', "
        "'__import__(\"json\").dumps([1])'])])\n"
        "    print(json.dumps([codea1.__file__, ex.isolation_level, [x.value for x in r.results]]))\n"
    )
    import sysconfig

    # -S: no site initialisation, so the checkout's editable install does not shadow the copy under /tmp
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), sysconfig.get_paths()["purelib"]])}
    out = subprocess.run(
        [sys.executable, "-S", "-c", script],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    where, level, values = __import__("json").loads(out.stdout.strip().splitlines()[-1])
    assert where.startswith(str(tmp_path))  # this run's codea1 is the copy under /tmp
    assert level.split("+")[0] == "allowlist"
    assert values == [False, 0, "[1]"]  # no host /run in the root, an empty /tmp, the stdlib importable


def test_keys_whose_hashes_repeat_a_little_are_not_a_flood() -> None:
    import json

    from codea1.judge.literals import literal
    from codea1.sandbox.values import UNSERIALIZABLE, floods, from_json, to_json

    powers = {2**k for k in range(300)}  # CPython's int hash repeats every 61 powers of two
    assert from_json(json.loads(json.dumps(to_json(powers)))) == powers
    assert from_json(to_json({2**k: k for k in range(300)})) == {2**k: k for k in range(300)}
    assert literal("{" + ", ".join(str(2**k) for k in range(300)) + "}") == (True, powers)
    p = 2**61 - 1
    assert floods([hash(k * p + 7) for k in range(66)]) and not floods([hash(k * p + 7) for k in range(65)])
    assert from_json(to_json({k * p + 7 for k in range(200)})) is UNSERIALIZABLE


def test_large_float_outputs_keep_evalplus_tolerance(executor) -> None:
    from codea1.data.benchmarks import EVALPLUS_HELPERS
    from codea1.eval.code_eval import evaluate_samples

    test_code = EVALPLUS_HELPERS + (
        "\ndef ref_func(n):\n    return [i / 3 for i in range(n)]\n\n"
        "def check(candidate):\n    inputs = [[60000]]\n"
        "    for i, inp in enumerate(inputs):\n        assertion(candidate(*inp), ref_func(*inp), 1e-6)\n"
    )
    gt = "def thirds(n):\n    return [i / 3 for i in range(n)]\n"
    problem = Problem("r4/thirds", "p", "d", "thirds", gt, test_code=test_code, source="humanevalplus")
    close = "def thirds(n):\n    return [i / 3 + 1e-9 for i in range(n)]\n"
    off = "def thirds(n):\n    return [i / 3 + 1e-3 for i in range(n)]\n"
    _, results, _ = evaluate_samples([problem], [("r4/thirds", close), ("r4/thirds", off)], executor, ks=[1])
    assert [r.passed for r in results] == [True, False]


def test_outputs_too_large_to_send_compare_as_python_does(executor) -> None:
    """U4: values over the wire's limits go as a digest; it was a digest of `repr`, so a dict built in
    another order, or 0.0 where GT returns 0, failed an honest program. The digest is now of a canonical
    text: dict and set items sorted, equal numbers one token."""
    from codea1.data.benchmarks import EVALPLUS_HELPERS
    from codea1.eval.code_eval import evaluate_samples

    def problem(pid: str, gt: str) -> Problem:
        test_code = EVALPLUS_HELPERS + (
            f"\n{gt.replace('def f(', 'def ref_func(')}\n"
            "def check(candidate):\n    inputs = [[100000]]\n"
            "    for i, inp in enumerate(inputs):\n        assertion(candidate(*inp), ref_func(*inp), 0)\n"
        )
        return Problem(pid, "p", "d", "f", gt, test_code=test_code, source="humanevalplus")

    squares = problem("r5/squares", "def f(n):\n    return {i: i * i for i in range(n)}\n")
    zeros = problem("r5/zeros", "def f(n):\n    return [0] * n\n")
    samples = [
        ("r5/squares", "def f(n):\n    return {i: i * i for i in reversed(range(n))}\n"),  # another order
        ("r5/squares", "def f(n):\n    return {i: i * i + (i == 7) for i in range(n)}\n"),  # one value off
        ("r5/zeros", "def f(n):\n    return [0.0] * n\n"),  # 0.0 == 0
        ("r5/zeros", "def f(n):\n    return [0] * (n - 1) + [1]\n"),
    ]
    _, results, _ = evaluate_samples([squares, zeros], samples, executor, ks=[1])
    assert [r.passed for r in results] == [True, False, True, False]


SPINNERS = 8


def _beside_the_slot(group, pids: list[int]) -> None:
    """Moves processes into a CPU group beside the slot's, weighing as much as SPINNERS slots (as another
    sandbox pool's spinning jobs would): the slot's share of the CPU drops to 1 / (SPINNERS + 1)."""
    cpu_dir = next(d for d in group.dirs if (d / ("cpu.weight" if group.version == 2 else "cpu.shares")).exists())
    beside = cpu_dir.parent / "r4-spinners"
    beside.mkdir(exist_ok=True)
    knob = "cpu.weight" if group.version == 2 else "cpu.shares"
    (beside / knob).write_text(str(SPINNERS * (100 if group.version == 2 else 1024)))
    for pid in pids:
        (beside / "cgroup.procs").write_text(str(pid))


@pytest.mark.serial  # its margins assume nothing else runs beside its spinners
def test_a_slowed_honest_call_is_not_a_timeout() -> None:
    """One CPU shared with SPINNERS spinning processes: a call that computes for 0.12 s takes about 0.5 s
    of wall time. At a 0.15 s limit it timed out on the wall clock (0.4 s with the grace); the limit is now on
    the call's CPU time (the slot's cgroup counts it), so it passes; a call that computes past the limit,
    and one that sleeps past three limits, still time out."""
    import os
    import subprocess
    import sys

    from conftest import quiet_executor

    from codea1.sandbox import Job

    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}:\n    pass\n"
    before = os.sched_getaffinity(0)
    cpu = min(before)
    os.sched_setaffinity(0, {cpu})
    spinners = []
    try:
        with quiet_executor(UID_BASE + 50, workers=1) as ex:
            if "cgroup" not in ex.isolation_level.split("+"):
                pytest.skip("no cgroup counts the slot's CPU time here")
            spinners = [subprocess.Popen([sys.executable, "-c", spin.format(30)]) for _ in range(SPINNERS)]
            _beside_the_slot(ex._slots[0].cgroup, [p.pid for p in spinners])
            __import__("time").sleep(0.5)  # until they all spin
            job = Job(
                "slowed",
                "import time\ndef f(s):\n"
                + "\n".join("    " + x for x in spin.format("s").splitlines())
                + "\n    return s\n",
                ["f(0.12)", "f(0.12)", "f(1.0)", "time.sleep(5)"],
                timeout=0.15,
            )
            [res] = ex.run([job])
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        os.sched_setaffinity(0, before)
    for d in (__import__("pathlib").Path("/sys/fs/cgroup") / x / "codea1-sandbox" / "r4-spinners" for x in ("", "cpu")):
        if d.is_dir():
            d.rmdir()
    assert [r.status for r in res.results] == ["ok", "ok", "timeout", "timeout"], [
        (r.status, r.seconds) for r in res.results
    ]
    assert min(r.seconds for r in res.results[:2]) > 0.4  # the machine really was slow for them
    assert res.results[3].seconds < 2.0  # the sleeping call ended at the wall backstop


# ---------------------------------------------------------------- round 5: this change's own attacker
def test_a_forged_failed_call_marker_neither_crashes_nor_decides(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.suite_eval import score_tests
    from codea1.game import golden_rewards

    p = Problem(
        "r5/marker", "p", "d", "f", "def f(x):\n    return x + 2\n", ["assert int(f(1)) == 3", "assert f(2) == 4"]
    )
    forged = "```python\ndef f(x):\n    return '__codea1_failed_call:5'\n```"
    assert golden_rewards(p, [forged, "```python\ndef f(x):\n    return x + 2\n```"], executor) == [0.0, 1.0]
    fn = UltFunction(task_id="sign", func_name="sign", code=SIGN)
    tests = {"sign": ["assert sign(1) == {}.get(0, int('__codea1_failed_call:9'))"]}
    _, [record] = score_tests([fn], tests, executor, k=1, mutation=False, coverage=False)
    assert record.valid == [False]


def test_an_attribute_of_the_function_is_the_candidates_not_gts(executor) -> None:
    from codea1.judge.oracle import AssertCase, run_assertions

    mutant = SIGN.replace("x > 0", "x >= 0")
    tests = [
        "assert bytes(sign.__code__.co_code) == sign.__code__.co_code",
        "assert sign.__code__.co_code != b''",
        "assert sign is not None",
    ]
    for code in (SIGN, mutant):  # Python: all three hold on either program
        [res] = run_assertions(executor, [AssertCase(code, tests, "sign", SIGN)])
        assert [r.status for r in res.results] == ["pass"] * 3


def test_a_child_cannot_claim_more_time_than_its_job_ran(executor) -> None:
    from codea1.sandbox import Job

    forge = (
        "(lambda j: setattr(j, '_default_encoder', type('E', (j.JSONEncoder,), {'encode': lambda s, o: "
        "j.JSONEncoder.encode(s, {**o, 's': 999999.0} if 's' in o else o)})()) or 5)(__import__('json'))"
    )
    [res] = executor.run([Job("forge", "", [forge, "1 + 1"])])
    assert [r.status for r in res.results] == ["ok", "ok"]
    assert max(r.seconds for r in res.results) < 60.0  # the job ran for well under a minute


def test_huge_exact_numbers_cost_the_parent_nothing() -> None:
    import time
    from fractions import Fraction

    from codea1.sandbox.values import UNSERIALIZABLE, from_json

    big = (1 << 999_000) | 1
    forged = {"$t": "fraction", "v": [{"$t": "int", "v": hex(big)}, {"$t": "int", "v": hex(big + 2)}]}
    t0 = time.process_time()
    assert from_json(forged) is UNSERIALIZABLE  # refused before the gcd that would reduce it
    assert not values_equal(Decimal(1), 1 << 1_199_000)
    assert time.process_time() - t0 < 0.5
    assert from_json({"$t": "fraction", "v": [3, 6]}) == Fraction(1, 2)
    assert values_equal(Decimal(1 << 20_000), 1 << 20_000)


def test_evalplus_not_none_check_reads_the_decoded_type() -> None:
    from codea1.judge.formats.evalplus import evalplus_assertion

    # Mbpp's not_none oracle compares a bool output as a bool; the child's claimed type name cannot make 0 one
    claim = {"out_type": "builtins.bool", "exp_type": "builtins.bool", "oracle": "not_none"}
    assert evalplus_assertion(False, False, 0, **claim) and not evalplus_assertion(0, False, 0, **claim)


def test_a_candidate_cannot_see_its_calls_while_its_code_runs(executor) -> None:
    """While its code is defined (a budget outside every call's limit), a candidate read the job's calls
    from its caller's frame and computed their answers there. The calls now arrive after that."""
    from codea1.sandbox import Job

    spy = (
        "import sys\n"
        "frame, SAW = sys._getframe(1), []\n"
        "while frame is not None:\n"
        "    SAW += [k for k, v in frame.f_locals.items() if isinstance(v, dict) and 'calls' in v]\n"
        "    frame = frame.f_back\n"
        "def f(x):\n"
        "    return x\n"
    )
    [res] = executor.run([Job("spy", spy, ["SAW", "f(3)", "f(4)"])])
    assert [(r.status, r.value) for r in res.results] == [("ok", []), ("ok", 3), ("ok", 4)]


def test_work_split_over_helper_processes_is_charged_its_cpu_time(executor) -> None:
    """A call that forks helpers to compute in parallel came back within the wall deadline with twice its
    CPU limit. The limit is on the CPU time the call's processes used, all of them."""
    import os

    if "cgroup" not in executor.isolation_level.split("+") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs a cgroup that counts the slot's CPU time and two cores")
    code = (
        "import os, time\n"
        "def spin(s):\n"
        "    t = time.process_time()\n"
        "    while time.process_time() - t < s:\n"
        "        pass\n"
        "def f(total, parts):\n"
        "    kids = []\n"
        "    for _ in range(parts - 1):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            spin(total / parts)\n"
        "            os._exit(0)\n"
        "        kids.append(pid)\n"
        "    spin(total / parts)\n"
        "    for pid in kids:\n"
        "        os.waitpid(pid, 0)\n"
        "    return parts\n"
    )
    from codea1.sandbox import Job

    [res] = executor.run([Job("split", code, ["f(1.0, 2)", "f(0.1, 2)"], timeout=0.5)])
    assert [r.status for r in res.results] == ["timeout", "ok"]


def test_exact_numbers_against_complex_and_bytearrays_compare_as_python_does() -> None:
    from fractions import Fraction

    from codea1.sandbox.values import from_json, to_json

    assert values_equal(Fraction(1), 1 + 0j) and values_equal(Decimal(2), 2 + 0j)
    assert not values_equal(Fraction(1, 3), 1 + 0j)
    assert values_equal(from_json(to_json(bytearray(b"ab"))), b"ab")
