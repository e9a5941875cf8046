"""Model-driven evaluation commands end to end (tiny-random by default, SmolLM2 in the slow set)."""

import json

import pytest

from codea1.problem import Problem, write_problems_jsonl

PROBLEM = Problem(
    id="M/add",
    prompt="def add(a, b):\n    'Return a + b.'\n",
    description="Return the sum of a and b.",
    entry_point="add",
    gt_solution="def add(a, b):\n    return a + b\n",
    golden_tests=["assert add(1, 2) == 3", "assert add(-1, 1) == 0"],
)


def run_eval_code(tmp_path, model: str, n: int) -> dict:
    from codea1.cli import main

    bench = tmp_path / "bench.jsonl"
    write_problems_jsonl([PROBLEM], bench)
    out = tmp_path / "r.json"
    argv = [
        "eval",
        "code",
        "--model",
        model,
        "--benchmark",
        str(bench),
        "--n",
        str(n),
        "--k",
        f"1,{n}",
        "--max-new-tokens",
        "24",
        "--seed",
        "3",
        "--workers",
        "1",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    return json.loads(out.read_text())


def test_eval_code_with_tiny_random_model(tmp_path):
    summary = run_eval_code(tmp_path, "tiny-random", 2)
    assert summary["tasks"]["M/add"]["n"] == 2
    assert 0.0 <= summary["pass@1"] <= 1.0 and "pass@2" in summary
    assert summary["config"]["sampling"]["model"] == "tiny-random"
    assert summary["config"]["sampling"]["seed"] == 3 and summary["config"]["sampling"]["n"] == 2
    lines = (tmp_path / "r.evalplus.jsonl").read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["task_id"] == "M/add"


@pytest.mark.slow
def test_eval_code_and_tests_with_smollm2(tmp_path, ult_lite):
    from codea1.cli import main

    summary = run_eval_code(tmp_path, "smollm2-135m", 2)
    assert summary["tasks"]["M/add"]["n"] == 2
    out = tmp_path / "t.json"
    argv = [
        "eval",
        "tests",
        "--model",
        "smollm2-135m",
        "--benchmark",
        str(ult_lite),
        "--limit",
        "2",
        "--k",
        "5",
        "--max-new-tokens",
        "128",
        "--workers",
        "1",
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["functions"] == 2 and 0.0 <= result["pass@5"] <= 100.0
