"""BigCodeBench: loading the published format, running its unittest tests in the sandbox with the verdict
decided by the parent, and the forgeries of unittest results that must not pass. The fixture
(tests/data/bigcodebench_tiny.jsonl) is three tasks written for these tests in the benchmark's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import quiet_executor

from codea1.data.bigcodebench import load_bigcodebench
from codea1.data.loaders import load_benchmark
from codea1.eval.bigcodebench import evaluate_bigcodebench
from codea1.judge.formats import bigcodebench as bcb_format
from codea1.judge.formats.bigcodebench import verdict

FIXTURE = Path(__file__).parent / "data" / "bigcodebench_tiny.jsonl"
UID_BASE = 1_700_700_600

WORDS = "BigCodeBench/900"
FILES = "BigCodeBench/901"
STATS = "BigCodeBench/902"

GOOD = {
    WORDS: (
        "import collections\nimport re\n\ndef task_func(text):\n    if not isinstance(text, str):\n"
        "        raise TypeError()\n    c = collections.Counter(re.findall(r'\\w+', text.lower()))\n"
        "    return dict(c)\n"
    ),
    FILES: "import os\n\ndef task_func(directory):\n    return sorted(n for n in os.listdir(directory) if n.endswith('.txt'))\n",
    STATS: "import math\n\ndef task_func(values):\n    m = sum(values) / len(values)\n"
    "    return m, math.sqrt(sum((v - m) ** 2 for v in values) / len(values))\n",
}
WRONG_WORDS = "def task_func(text):\n    return {w: 1 for w in text.split()}\n"

# forgeries of the unittest outcome; none of them solves the task
FORGERIES = {
    "patch-assert-methods": (
        "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "unittest.TestCase.assertRaises = lambda *a, **k: __import__('contextlib').nullcontext()\n"
        "def task_func(text):\n    return {}\n"
    ),
    "replace-testcase": (
        "import unittest\nclass Lenient(unittest.TestCase):\n"
        "    def assertEqual(self, *a, **k):\n        pass\n"
        "    def assertRaises(self, *a, **k):\n        return __import__('contextlib').nullcontext()\n"
        "unittest.TestCase = Lenient\ndef task_func(text):\n    return {}\n"
    ),
    "define-testcases": (
        "import unittest\nclass TestCases(unittest.TestCase):\n    def test_counts(self):\n"
        "        pass\ndef task_func(text):\n    return {}\n"
    ),
    "patch-failure-exception": (
        "import unittest\nunittest.TestCase.failureException = KeyError\ndef task_func(text):\n    return {}\n"
    ),
    "patch-during-call": (
        "import unittest\ndef task_func(text):\n"
        "    unittest.TestCase.assertEqual = lambda *a, **k: None\n"
        "    unittest.TestCase.assertRaises = lambda *a, **k: __import__('contextlib').nullcontext()\n"
        "    return {}\n"
    ),
    "raise-skip": "import unittest\ndef task_func(text):\n    raise unittest.SkipTest('skip me')\n",
    "exit-early": "import sys\ndef task_func(text):\n    sys.exit(0)\n",
    "print-ok": "def task_func(text):\n    print('OK\\n----\\nRan 3 tests\\nOK')\n    return {}\n",
}
FORGE_FILES = {
    "noop-mock-patch": (
        "import unittest.mock\nunittest.mock.patch = lambda *a, **k: (lambda f: (lambda self: None))\n"
        "def task_func(directory):\n    return ['wrong']\n"
    ),
}


@pytest.fixture(scope="module")
def executor():
    ex = quiet_executor(UID_BASE, workers=2)
    yield ex
    ex.close()


def test_loads_the_published_format_from_jsonl_and_parquet(tmp_path):
    problems = load_bigcodebench(FIXTURE)
    assert [p.id for p in problems] == [WORDS, FILES, STATS]
    p = problems[0]
    assert p.entry_point == "task_func" and p.prompt.startswith("Count the words")
    assert p.gt_solution.startswith("import collections") and "def task_func(text):" in p.gt_solution
    assert p.meta["libs"] == ["collections", "re"] and p.meta["test_format"] == "bigcodebench"
    assert bcb_format.test_methods(problems[2].test_code) == ["test_later", "test_mean", "test_single", "test_std"]
    complete = load_benchmark("bigcodebench-complete", str(FIXTURE))
    assert complete[0].prompt.startswith("import collections") and '"""' in complete[0].prompt
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bcb.parquet")
    assert [p.id for p in load_benchmark("bigcodebench", str(tmp_path / "bcb.parquet"))] == [WORDS, FILES, STATS]


def test_verdict_rule():
    assert verdict(["passed", "passed"], ["passed", "passed"]) == (True, None)
    assert verdict(["passed", "skipped"], ["passed", "skipped"]) == (True, None)
    assert verdict(["passed", "skipped"], ["passed", "passed"]) == (False, 1)  # a skip the GT did not take
    assert verdict(["failed", "passed"], ["passed", "passed"]) == (False, 0)
    assert verdict(["timeout"], ["passed"]) == (False, 0)


def test_honest_failing_erroring_and_timing_out_solutions(executor):
    problems = load_bigcodebench(FIXTURE)
    samples = [
        (WORDS, GOOD[WORDS]),
        (WORDS, WRONG_WORDS),
        (WORDS, "def task_func(text):\n    raise RuntimeError('boom')\n"),
        (WORDS, "def task_func(text):\n    while True:\n        pass\n"),
        (WORDS, "def task_func(text:\n"),
        (FILES, GOOD[FILES]),
        (FILES, "    return sorted(os.listdir(directory))\n"),  # a completion continuing the prompt: wrong
        (STATS, "from __future__ import annotations\n" + GOOD[STATS]),
        (STATS, "    m = sum(values) / len(values)\n    return m, 0.0\n"),  # a completion: wrong std
        ("BigCodeBench/unknown", "x = 1\n"),
    ]
    summary, results, tasks = evaluate_bigcodebench(problems, samples, executor, [1], timeout=1.0)
    assert not any(t.excluded for t in tasks), [t.reason for t in tasks]
    assert tasks[2].gt_outcomes == ["skipped", "passed", "passed", "passed"]
    got = [(r.task_id, r.passed, r.status) for r in results]
    assert got == [
        (WORDS, True, "pass"),
        (WORDS, False, "fail"),
        (WORDS, False, "error"),
        (WORDS, False, "timeout"),
        (WORDS, False, "undefined"),
        (FILES, True, "pass"),
        (FILES, False, "fail"),
        (STATS, True, "pass"),
        (STATS, False, "fail"),
        ("BigCodeBench/unknown", False, "excluded"),
    ]
    assert results[1].error.startswith("test_counts")
    assert summary["scored_tasks"] == 3 and summary["samples"] == 9


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_unittest_outcomes_do_not_pass(executor, name):
    problems = load_bigcodebench(FIXTURE)
    samples = [(WORDS, FORGERIES[name]), (WORDS, GOOD[WORDS])]
    _, results, _ = evaluate_bigcodebench(problems[:1], samples, executor, [1], timeout=2.0)
    assert [r.passed for r in results] == [False, True], (name, results[0])


def test_a_no_op_mock_patch_does_not_pass_and_unittest_is_restored_for_the_tests(executor):
    problems = load_bigcodebench(FIXTURE)
    samples = [(FILES, FORGE_FILES["noop-mock-patch"]), (FILES, GOOD[FILES])]
    _, results, _ = evaluate_bigcodebench(problems[1:2], samples, executor, [1], timeout=2.0)
    assert [r.passed for r in results] == [False, True]


def test_a_task_whose_canonical_solution_fails_here_is_excluded(executor, tmp_path):
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    rows[0]["canonical_solution"] = "    return {}\n"
    rows[1]["libs"] = "['no_such_library_here']"
    rows[1]["canonical_solution"] = "    import no_such_library_here\n    return []\n"
    path = tmp_path / "broken.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    problems = load_bigcodebench(path)
    summary, results, tasks = evaluate_bigcodebench(
        problems, [(WORDS, GOOD[WORDS]), (STATS, GOOD[STATS])], executor, [1]
    )
    assert [t.excluded for t in tasks] == [True, True, False]
    assert "canonical solution" in tasks[0].reason
    assert summary["excluded"] == [WORDS, FILES]
    assert [r.status for r in results] == ["excluded", "pass"]


def test_eval_code_cli_on_bigcodebench(tmp_path, monkeypatch):
    from codea1.cli import main

    samples = tmp_path / "samples.jsonl"
    rows = [{"task_id": t, "solution": s} for t, s in GOOD.items()] + [{"task_id": WORDS, "solution": WRONG_WORDS}]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "bcb.json"
    import codea1.cli.eval as eval_cli

    monkeypatch.setattr(eval_cli, "_executor", lambda args: quiet_executor(UID_BASE + 100, workers=2))
    rc = main(
        [
            "eval",
            "code",
            "--benchmark",
            "bigcodebench",
            "--data",
            str(FIXTURE),
            "--samples",
            str(samples),
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    summary = json.loads(out.read_text())
    assert summary["tasks"] == {
        WORDS: {"n": 2, "correct": 1},
        FILES: {"n": 1, "correct": 1},
        STATS: {"n": 1, "correct": 1},
    }
