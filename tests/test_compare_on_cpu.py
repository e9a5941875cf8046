"""`codea1 compare`: intervals, eval points, the table, and a comparison that resumes after SIGKILL to the
same results as an uninterrupted one (tiny random models: the plumbing, not learning)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codea1.eval.policy_eval import distinct_valid
from codea1.eval.stats import (
    bootstrap_interval,
    held_out_difference,
    held_out_difference_by_part,
    paired_difference,
    problem_part,
)
from codea1.recipes.compare import CompareSpec, comparison_table, eval_points

REPO = Path(__file__).resolve().parents[1]
UID_BASE = 1_700_800_000  # this file's own uid range
ARGS = [
    "--config",
    str(REPO / "codea1" / "configs" / "tiny-cpu.yaml"),
    "--steps",
    "2",
    "--eval-every",
    "1",
    "--eval-limit",
    "3",
    "--code-samples",
    "2",
    "--test-k",
    "3",
    "--methods",
    "base,golden,a1",
    "train.batch_size=2",
    "game.M=2",
    "game.N=2",
    "executor.workers=1",
    f"executor.uid_base={UID_BASE}",
]


def test_bootstrap_interval_brackets_the_mean_and_is_seeded() -> None:
    values = [0.0, 0.25, 1.0, 1.0, 0.5, 0.0, 0.75]
    mean, low, high = bootstrap_interval(values, samples=2000, seed=3)
    assert mean == pytest.approx(sum(values) / len(values))
    assert 0.0 <= low < mean < high <= 1.0
    assert bootstrap_interval(values, samples=2000, seed=3) == (mean, low, high)
    assert bootstrap_interval([0.5] * 9, samples=500) == (0.5, 0.5, 0.5)
    assert bootstrap_interval([], samples=10) == (0.0, 0.0, 0.0)


def test_paired_difference_uses_common_problems_only() -> None:
    a = {"p1": 1.0, "p2": 0.5, "p3": 1.0, "only_a": 0.0}
    b = {"p1": 0.5, "p2": 0.5, "p3": 0.0, "only_b": 1.0}
    d, low, high = paired_difference(a, b, samples=1000)
    assert d == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert low <= d <= high


def test_eval_diff_by_part_compares_each_part_on_its_own_problems(tmp_path: Path) -> None:
    assert [problem_part(i) for i in ("MBPP/12", "bundled/0003", "a/b/c", "plain")] == [
        "MBPP",
        "bundled",
        "a/b",
        "plain",
    ]
    new = {
        "code": {"per_problem": {"MBPP/1": 1.0, "MBPP/2": 0.5, "bundled/0001": 0.0, "bundled/0002": 0.25}},
        "tests": {
            "whitebox": {
                "per_problem": {"MBPP/1": 1.0, "MBPP/2": 1.0, "bundled/0001": 0.5, "bundled/0002": 0.5},
                "per_problem_distinct": {"MBPP/1": 0.5, "MBPP/2": 0.5, "bundled/0001": 0.5, "bundled/0002": 0.5},
            }
        },
    }
    old = {
        "code": {
            "per_problem": {
                "MBPP/1": 0.5,
                "MBPP/2": 0.5,
                "bundled/0001": 0.5,
                "bundled/0002": 0.25,
                "bundled/0009": 1.0,
            }
        },
        "tests": {
            "whitebox": {
                "per_problem": {"MBPP/1": 0.0, "MBPP/2": 0.0, "bundled/0001": 0.5, "bundled/0002": 0.5},
                "per_problem_distinct": {"MBPP/1": 0.0, "MBPP/2": 0.0, "bundled/0001": 0.0, "bundled/0002": 0.5},
            }
        },
    }
    parts = held_out_difference_by_part(new, old, samples=500)
    assert list(parts) == ["MBPP", "bundled"]
    mbpp, bundled = ({r["measure"]: r for r in parts[k]} for k in ("MBPP", "bundled"))
    assert mbpp["code pass@1"]["problems"] == 2 and mbpp["code pass@1"]["delta"] == pytest.approx(0.25)
    assert bundled["code pass@1"]["problems"] == 2  # bundled/0009 is not in `new`
    assert bundled["code pass@1"]["delta"] == pytest.approx(-0.25) and bundled["code pass@1"]["old"] == pytest.approx(
        0.375
    )
    assert mbpp["test valid ratio (whitebox)"]["delta"] == pytest.approx(1.0)
    assert bundled["test valid ratio (whitebox)"]["delta"] == pytest.approx(0.0)
    assert bundled["test valid ratio, repeated calls invalid (whitebox)"]["delta"] == pytest.approx(0.25)
    # the parts together are the whole: the pooled difference is their problem-weighted mean
    whole = held_out_difference(new, old, samples=500)[0]
    assert whole["delta"] == pytest.approx((2 * 0.25 + 2 * -0.25) / 4)

    (tmp_path / "new.json").write_text(json.dumps(new))
    (tmp_path / "old.json").write_text(json.dumps(old))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "codea1",
            "eval",
            "diff",
            "--parts",
            str(tmp_path / "new.json"),
            str(tmp_path / "old.json"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| part | measure |" in out
    assert "| all | code pass@1 | 43.8 | 43.8 | +0.0 [" in out
    assert (
        "| MBPP | code pass@1 | 75.0 | 50.0 | +25.0 [" in out
        and "| bundled | code pass@1 | 12.5 | 37.5 | -25.0 [" in out
    )


def test_held_out_difference_between_two_evaluations(tmp_path: Path) -> None:
    new = {
        "code": {"per_problem": {"p1": 1.0, "p2": 0.5, "p3": 0.25}},
        "tests": {
            "whitebox": {"per_problem": {"p1": 1.0, "p2": 1.0, "p3": 0.5}},
            "blackbox": {"per_problem": {"p1": 0.0, "p2": 0.0, "p3": 0.0}},
        },
    }
    old = {
        "code": {"per_problem": {"p1": 0.5, "p2": 0.5, "p3": 0.25, "p4": 1.0}},
        "tests": {"whitebox": {"per_problem": {"p1": 0.0, "p2": 0.5, "p3": 0.5}}},
    }
    rows = held_out_difference(new, old, samples=500)
    # blackbox: new only; the repeated-calls measure: neither has it
    assert [r["measure"] for r in rows] == ["code pass@1", "test valid ratio (whitebox)"]
    code, white = rows
    assert code["problems"] == 3 and code["old"] == pytest.approx(1.25 / 3)  # p4 is not in `new`
    assert code["delta"] == pytest.approx(0.5 / 3) and code["ci95"][0] <= code["delta"] <= code["ci95"][1]
    assert white["delta"] == pytest.approx(0.5) and white["new"] == pytest.approx(2.5 / 3)
    new["tests"]["whitebox"]["per_problem_distinct"] = {"p1": 0.5, "p2": 1.0, "p3": 0.5}
    old["tests"]["whitebox"]["per_problem_distinct"] = {"p1": 0.0, "p2": 0.5, "p3": 0.5}
    distinct = held_out_difference(new, old, samples=500)[2]
    assert distinct["measure"] == "test valid ratio, repeated calls invalid (whitebox)"
    assert distinct["delta"] == pytest.approx(1.0 / 3)
    del new["tests"]["whitebox"]["per_problem_distinct"], old["tests"]["whitebox"]["per_problem_distinct"]
    # pass@k with missing tests invalid, where both evaluations recorded it per problem
    new["tests"]["whitebox"]["per_problem_pass@4"] = {"p1": 0.75, "p2": 0.5, "p3": 0.0}
    old["tests"]["whitebox"]["per_problem_pass@4"] = {"p1": 0.25, "p2": 0.5, "p3": 0.0}
    passk = held_out_difference(new, old, samples=500)[2]
    assert passk["measure"] == "test pass@4, missing tests invalid (whitebox)"
    assert passk["delta"] == pytest.approx(0.5 / 3) and passk["old"] == pytest.approx(0.75 / 3)
    del new["tests"]["whitebox"]["per_problem_pass@4"], old["tests"]["whitebox"]["per_problem_pass@4"]
    with pytest.raises(ValueError, match="share no problem"):
        held_out_difference({"code": {"per_problem": {"a": 1.0}}}, {"code": {"per_problem": {"b": 1.0}}})

    # the CLI prints the same numbers as a table
    (tmp_path / "new.json").write_text(json.dumps(new))
    (tmp_path / "old.json").write_text(json.dumps(old))
    out = subprocess.run(
        [sys.executable, "-m", "codea1", "eval", "diff", str(tmp_path / "new.json"), str(tmp_path / "old.json")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| test valid ratio (whitebox) | 83.3 | 33.3 | +50.0 [" in out
    bad = subprocess.run(
        [sys.executable, "-m", "codea1", "eval", "diff", str(tmp_path / "new.json"), str(tmp_path / "missing.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode != 0 and "cannot read" in bad.stderr
    (tmp_path / "list.json").write_text("[1]")
    (tmp_path / "text.json").write_text(json.dumps({"code": {"per_problem": {"p1": "x"}}}))
    for name, says in (("list.json", "is not a held-out evaluation"), ("text.json", "is not a number")):
        bad = subprocess.run(
            [sys.executable, "-m", "codea1", "eval", "diff", str(tmp_path / name), str(tmp_path / name)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert bad.returncode != 0 and says in bad.stderr and "Traceback" not in bad.stderr


def test_eval_points() -> None:
    assert eval_points(CompareSpec(steps=10, eval_every=0), 10) == [10]
    assert eval_points(CompareSpec(steps=10, eval_every=4), 10) == [4, 8, 10]
    assert eval_points(CompareSpec(steps=10, eval_every=5), 10) == [5, 10]


def test_comparison_table_marks_an_untrained_test_llm_and_signs_deltas() -> None:
    tests = {
        mode: {"valid_ratio": 0.5, "pass@5": 50.0, "mut@5": 40.0, "Mul": 20.0} for mode in ("whitebox", "blackbox")
    }
    results = {
        "spec": {"steps": 3, "minutes": None, "code_samples": 4},
        "held_out": {"problems": "bundled:eval"},
        "methods": {
            "base": {"step": 0, "code": {"pass@1": 0.1, "ci95": [0.0, 0.2]}, "tests": tests, "tests_from": "base"},
            "golden": {
                "step": 3,
                "code": {"pass@1": 0.2, "ci95": [0.1, 0.3], "delta_vs_base": 0.1, "delta_ci95": [-0.05, 0.25]},
                "tests": tests,
                "tests_from": "base (not trained)",
            },
        },
    }
    table = comparison_table(results, 5)
    assert "| golden | 3 | 20.0 [10.0, 30.0] | +10.0 [-5.0, +25.0] | 50.0 (base) | - |" in table
    assert "| base | 0 | 10.0 [0.0, 20.0] | - | 50.0 | - |" in table
    tests["whitebox"]["valid_ratio_distinct"] = 0.25
    assert "| base | 0 | 10.0 [0.0, 20.0] | - | 50.0 | 25.0 | 50.0 |" in comparison_table(results, 5)


def test_a_repeated_call_is_valid_once() -> None:
    assert distinct_valid(["f(1)", "f(1)", "f(2)", "f(1)"], [True, True, True, True]) == 2
    # an invalid first occurrence still uses up the call: a later repeat of it is not counted either
    assert distinct_valid(["f(1)", "f(1)", "f(2)"], [False, True, True]) == 1
    assert distinct_valid([], []) == 0
    # a suite shorter than k: its validity flags cover the padded k tests (the missing ones invalid)
    assert distinct_valid(["f(1)", "f(1)"], [True, True, False, False]) == 1
    assert distinct_valid([], [False] * 4) == 0


def _compare(out: Path, kill_at: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CODEA1_DEBUG_KILL_AT", None)
    if kill_at:
        env["CODEA1_DEBUG_KILL_AT"] = kill_at
    return subprocess.run(
        [sys.executable, "-m", "codea1", "compare", "--out", str(out), *ARGS],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _without_times(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        {
            k: v
            for k, v in r.items()
            if not k.startswith("time_") and "tokens_per_s" not in k and k != "outside_model_frac"
        }
        for r in rows
    ]


def _check_reanalysis_files(out: Path) -> None:
    """What a comparison leaves for re-analysis: the training problems selected once (every method's
    run reads them), the id lists, the decontamination report, the power statement, per-problem
    evaluations with their gzipped samples, and the commit."""
    import gzip

    from codea1.data import read_problems_jsonl

    train_ids = json.loads((out / "train_ids.json").read_text())
    assert [p.id for p in read_problems_jsonl(out / "train_problems.jsonl")] == train_ids
    held = json.loads((out / "heldout_ids.json").read_text())
    assert len(held) == 3 and not set(held) & set(train_ids)
    report = json.loads((out / "decontamination.json").read_text())
    assert report["kept"] == len(train_ids) and report["held_out"] == 3
    for method in ("golden", "a1"):
        cfg = (out / "runs" / method / "config.yaml").read_text()
        assert "train_problems.jsonl" in cfg and "check_gt: false" in cfg
    power = json.loads((out / "power.json").read_text())
    assert power["problems"] == 3 and power["samples_per_problem"] == 2
    for method, step in (("base", 0), ("golden", 2), ("a1", 2)):
        ev = json.loads((out / "evals" / method / f"step_{step}.json").read_text())
        assert set(ev["code"]["per_problem"]) == set(held)
        with gzip.open(out / "evals" / method / f"step_{step}.samples.jsonl.gz", "rt") as handle:
            rows = [json.loads(line) for line in handle]
        code = [r for r in rows if r["role"] == "code"]
        assert len(code) == 3 * 2 and {r["task_id"] for r in code} == set(held)
        for tid, frac in ev["code"]["per_problem"].items():
            mine = [r["passed"] for r in code if r["task_id"] == tid]
            assert sum(mine) / len(mine) == frac  # the samples give back the per-problem figure
        assert any(r["role"] == "test" for r in rows) == (method != "golden")
        for mode, figures in (ev.get("tests") or {}).items():
            # pass@k with missing tests invalid, per problem: never above the valid ratio of the tests written
            passk = next(v for key, v in figures.items() if key.startswith("per_problem_pass@"))
            assert set(passk) == set(held), mode
            assert all(0.0 <= passk[t] <= figures["per_problem"][t] + 1e-12 for t in held), mode
    results = json.loads((out / "results.json").read_text())
    assert results["power"] == power and results["code_commits"]
    assert [(v["new"], v["old"]) for v in results["versus"]] == [("a1", "golden")]


def test_power_statement_matches_the_spread_of_simulated_null_comparisons() -> None:
    """The paired standard error from the base evaluation alone is the spread of the pass@1 difference
    between two policies with the same per-problem pass rates (simulated), and the detectable difference
    is 2.80 times it."""
    import numpy as np

    from codea1.eval.stats import power_statement

    hand = power_statement({"a": 0.5, "b": 0.0, "c": 1.0, "d": 0.25}, 4)
    assert hand["paired_se"] == pytest.approx((2 * 0.25 / 3 + 2 * 0.1875 / 3) ** 0.5 / 4)
    assert hand["mde_80"] == pytest.approx(2.8016 * hand["paired_se"], rel=1e-4)
    rng = np.random.default_rng(0)
    p_true = rng.beta(0.6, 1.4, size=120)
    n = 8
    base = rng.binomial(n, p_true) / n
    se = power_statement(dict(enumerate(base)), n)["paired_se"]
    diffs = (rng.binomial(n, p_true, size=(4000, 120)) - rng.binomial(n, p_true, size=(4000, 120))).mean(1) / n
    assert se == pytest.approx(float(diffs.std()), rel=0.15)
    assert power_statement({"a": 0.5}, 1)["paired_se"] is None


def test_compare_resumes_after_sigkill_to_the_uninterrupted_results(tmp_path: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    first = _compare(whole)
    assert first.returncode == 0, first.stderr[-2000:]
    _check_reanalysis_files(whole)
    assert "smallest difference detectable at 80% power" in first.stderr
    # killed inside a1's second step (golden has no test policy, so learn_test:2 is reached in golden
    # first: the kill lands in golden's step 2, after its step-1 evaluation was written)
    dead = _compare(killed, kill_at="learn_test:2")
    assert dead.returncode != 0
    written = sorted(p.name for p in (killed / "evals" / "golden").glob("*.json"))
    assert written == ["step_1.json"]
    stamp = (killed / "evals" / "golden" / "step_1.json").stat().st_mtime_ns
    again = _compare(killed)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "resuming the comparison" in again.stderr
    assert (killed / "evals" / "golden" / "step_1.json").stat().st_mtime_ns == stamp  # not redone
    for method in ("golden", "a1"):
        assert _without_times(killed / "runs" / method / "metrics.jsonl") == _without_times(
            whole / "runs" / method / "metrics.jsonl"
        )
    a, b = (json.loads((d / "results.json").read_text()) for d in (whole, killed))
    for method in ("base", "golden", "a1"):
        ca, cb = a["methods"][method]["code"], b["methods"][method]["code"]
        assert (ca["pass@1"], ca["ci95"], ca["problems"]) == (cb["pass@1"], cb["ci95"], cb["problems"])
        assert a["methods"][method].get("tests") == b["methods"][method].get("tests")
    assert a["curves"] == b["curves"] and [p["step"] for p in a["curves"]["a1"]] == [0, 1, 2]
    assert (killed / "results.md").read_text().count("\n| ") == 4  # header + 3 methods
    assert (killed / "plots" / "training.png").is_file() and (killed / "plots" / "heldout_pass1.png").is_file()
    # a finished comparison is not redone, and another comparison is refused in the same directory
    stamps = {p: p.stat().st_mtime_ns for p in (killed / "evals").rglob("*.json")}
    assert _compare(killed).returncode == 0
    assert {p: p.stat().st_mtime_ns for p in (killed / "evals").rglob("*.json")} == stamps
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    other = subprocess.run(
        [sys.executable, "-m", "codea1", "compare", "--out", str(killed), *ARGS[:-1], "--steps", "3"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert other.returncode != 0 and "different comparison" in other.stderr


def test_a_training_budget_stops_the_run_with_a_checkpoint(tmp_path: Path) -> None:
    """train(stop=...) ends the run after the step at which it says so, and checkpoints there (how
    `codea1 compare --minutes` spends a time budget)."""
    from conftest import quiet_executor

    from codea1.config import load_config
    from codea1.train.checkpoint import latest_checkpoint, read_state
    from codea1.train.loop import train

    cfg = load_config(
        REPO / "codea1" / "configs" / "tiny-cpu.yaml",
        ["train.batch_size=2", "game.M=2", "game.N=2", "train.checkpoint_every=10"],
    )
    ex = quiet_executor(UID_BASE + 10, workers=1)
    try:
        out = train(cfg, tmp_path / "run", max_steps=5, executor=ex, progress=False, stop=lambda rows: len(rows) >= 2)
    finally:
        ex.close()
    assert out["steps"] == 2
    assert read_state(latest_checkpoint(tmp_path / "run" / "checkpoints")).step == 2


def test_an_evaluation_gives_the_same_numbers_on_a_busy_machine() -> None:
    """The same held-out evaluation with a core kept busy by another process: the same samples and the
    same per-problem figures (sampling is seeded and the verdicts do not depend on timing)."""
    from conftest import quiet_executor

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.eval.policy_eval import evaluate_policies
    from codea1.train.loop import method_policies

    cfg = load_config(REPO / "codea1" / "configs" / "tiny-cpu.yaml", ["train.batch_size=2"])
    problems = load_problems("bundled:eval")[:3]
    spec = CompareSpec(code_samples=2, test_samples=1, test_k=3, mutation=False, bootstrap=100)
    ex = quiet_executor(UID_BASE + 20, workers=1)
    try:

        def once() -> dict:
            code, test = method_policies(cfg)
            out = evaluate_policies(code, test, problems, ex, cfg, spec.eval_plan())
            out.pop("seconds")
            return out

        idle = once()
        spinner = subprocess.Popen(
            [sys.executable, "-c", "import time\nt = time.time() + 120\nwhile time.time() < t: pass"]
        )
        try:
            busy = once()
        finally:
            spinner.kill()
            spinner.wait()
    finally:
        ex.close()
    assert busy == idle


def test_an_arm_stops_when_its_training_list_is_not_the_committed_one(tmp_path: Path) -> None:
    """`--train-ids`: the comparison selects its training list as always, then stops before any
    evaluation or training unless the list (and its order) is the committed one."""
    cfg_args = ["train.batch_size=2", "data.limit=8", "executor.workers=1", f"executor.uid_base={UID_BASE + 20}"]
    base = [
        sys.executable, "-m", "codea1", "compare", "--config", str(REPO / "codea1" / "configs" / "tiny-cpu.yaml"),
        "--steps", "1", "--eval-limit", "3", "--code-samples", "1", "--methods", "base,golden",
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    first = tmp_path / "first"
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(["bundled/none"]))
    run = subprocess.run(
        [*base, "--out", str(first), "--train-ids", str(wrong), *cfg_args],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert run.returncode != 0 and "committed list has 1" in run.stderr, run.stderr[-2000:]
    selected = json.loads((first / "train_ids.json").read_text())
    assert selected and not (first / "evals").exists() and not list((first / "runs").iterdir())
    # the committed list itself, in another order: refused too (the order is part of the list)
    wrong.write_text(json.dumps(selected[::-1]))
    again = subprocess.run(
        [*base, "--out", str(tmp_path / "second"), "--train-ids", str(wrong), *cfg_args],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert again.returncode != 0 and "first difference at position 0" in again.stderr
    # a directory holding only evaluations copied in beforehand (a shared base evaluation) is a new
    # comparison's to claim; anything else in it is refused
    seeded = tmp_path / "seeded"
    (seeded / "evals" / "base").mkdir(parents=True)
    (seeded / "evals" / "base" / "step_0.json").write_text("{}")
    claimed = subprocess.run(
        [*base, "--out", str(seeded), "--train-ids", str(wrong), *cfg_args],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert "first difference at position 0" in claimed.stderr and (seeded / "compare.json").is_file()
    other = tmp_path / "other"
    (other / "evals").mkdir(parents=True)
    (other / "notes.txt").write_text("mine")
    refused = subprocess.run(
        [*base, "--out", str(other), *cfg_args], capture_output=True, text=True, timeout=300, check=False, env=env
    )
    assert refused.returncode != 0 and "is not a comparison directory" in refused.stderr


def test_simulated_power_grows_with_samples_and_problems_and_knows_the_null() -> None:
    from codea1.eval.stats import power_statement, simulated_power

    rates = [0.0] * 40 + [0.05, 0.1, 0.2, 0.3, 0.5, 0.8] * 10
    null = simulated_power(rates, 165, 12, 0.0, sims=3000)
    assert 0.01 <= null <= 0.045  # one-sided half of a two-sided 5% test
    small = simulated_power(rates, 165, 12, 0.015, sims=1500)
    more_samples = simulated_power(rates, 165, 24, 0.015, sims=1500)
    more_problems = simulated_power(rates, 330, 12, 0.015, sims=1500)
    assert small < more_samples and small < more_problems
    assert simulated_power(rates, 165, 12, 0.015, gaining=1.0, sims=1500) == small  # seeded
    with pytest.raises(ValueError, match="gaining"):
        simulated_power(rates, 165, 12, 0.015, gaining=0.0)
    # at the analytic smallest detectable difference the simulated power is near 80%
    mde = power_statement(dict(enumerate(rates * 2)), 12)["mde_80"]
    assert 0.7 <= simulated_power(rates, 2 * len(rates), 12, mde, sims=1500) <= 0.9
