"""The training loop on tiny-random models: a1, golden and selfplay runs, their files, and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from train_scripted import scripted_factory

from codea1.config import load_config
from codea1.train.loop import batch_indices, derive_seed, epoch_permutation, planned_steps, train
from codea1.train.metrics import read_metrics

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
SMALL = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=6",
    "train.checkpoint_every=2",
    "train.progress=false",
]


def _problems(cfg):
    from codea1.data import load_problems

    return load_problems(cfg.data.train)


def test_data_order_is_a_fresh_permutation_per_epoch() -> None:
    n, size = 7, 3
    seen = batch_indices(0, n, 0, 4 * n)
    for epoch in range(4):
        assert sorted(seen[epoch * n : (epoch + 1) * n]) == list(range(n))
    assert seen[:n] != seen[n : 2 * n]
    assert batch_indices(0, n, 5, size) == seen[5:8]  # a cursor reads the same order
    assert epoch_permutation(1, 0, n) != epoch_permutation(0, 0, n)
    assert derive_seed(0, 3, "gen_code") == derive_seed(0, 3, "gen_code") != derive_seed(0, 4, "gen_code")


def test_planned_steps_is_capped_by_the_data() -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["train.batch_size=4", "train.data_epochs=2"])
    assert planned_steps(cfg, 10, None) == 5
    assert planned_steps(cfg, 100, 7) == 7


@pytest.fixture(scope="module")
def a1_run(tmp_path_factory) -> Path:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", SMALL)
    run_dir = tmp_path_factory.mktemp("a1") / "run"
    result = train(cfg, run_dir, max_steps=3, policy_factory=scripted_factory(_problems(cfg)))
    assert result["steps"] == 3
    return run_dir


def test_a1_run_writes_metrics_rollouts_checkpoints_and_book(a1_run: Path) -> None:
    from codea1.game.mistake_book import MistakeBook

    rows = read_metrics(a1_run / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3]
    for key in (
        "code_reward",
        "test_reward",
        "valid_ratio",
        "adv",
        "hist_pass",
        "gen_pass",
        "golden_pass_rate",
        "mistake_book_size",
        "mistake_book_added",
        "mistake_book_removed",
        "code_kl",
        "test_kl",
        "code_response_len",
        "code_tokens_per_s",
        "time_gen_code",
        "time_gen_tests",
        "time_execute",
        "time_learn",
        "outside_model_frac",
    ):
        assert key in rows[-1], key
    assert 0.0 < sum(r["code_reward"] for r in rows)  # scripted GT codes pass their tests
    with MistakeBook(a1_run / "mistake_book.sqlite") as book:
        assert book.last_step == 3
        assert book.size() == rows[-1]["mistake_book_size"] > 0  # wrong variants failed some tests
    assert sorted(p.name for p in (a1_run / "checkpoints").iterdir()) == ["step_000002", "step_000003"]
    assert (a1_run / "config.yaml").is_file()
    lines = [json.loads(x) for x in (a1_run / "rollouts" / "step_1.jsonl").read_text().splitlines()]
    assert len(lines) == 2
    for line in lines:
        assert len(line["codes"]) == 2 and all(len(c["tests"]) == 2 for c in line["codes"])
        assert isinstance(line["codes"][0]["response"], str)
        assert len(line["scores"]["codes"]) == 2


def test_rollouts_rescore_with_codea1_score(a1_run: Path, tmp_path: Path) -> None:
    """Rollout files are `codea1 score` input; step 1 starts from an empty Mistake Book, so re-scoring
    it with the run's own game settings (its config.yaml) must reproduce the logged scores exactly."""
    from codea1.cli import main

    out = tmp_path / "scores.jsonl"
    rollouts = a1_run / "rollouts" / "step_1.jsonl"
    assert (
        main(
            [
                "score",
                "--problems",
                "bundled",
                "--rollouts",
                str(rollouts),
                "--output",
                str(out),
                "--config",
                str(a1_run / "config.yaml"),
            ]
        )
        == 0
    )
    logged = [json.loads(x) for x in rollouts.read_text().splitlines()]
    rescored = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["question_id"] for r in rescored] == [r["question_id"] for r in logged]
    for line, again in zip(logged, rescored, strict=False):
        assert again["codes"] == line["scores"]["codes"]
        assert again["mistake_book"] == line["scores"]["mistake_book"]


def test_report_has_plots_and_examples(a1_run: Path) -> None:
    from codea1.train.report import write_report

    path = write_report(a1_run, examples=2)
    page = path.read_text()
    for name in ("rewards.png", "pass_rates.png", "mistake_book.png", "valid_vs_adv.png", "phase_times.png"):
        assert (a1_run / "plots" / name).stat().st_size > 1000
        assert f"plots/{name}" in page
    assert "attacking suite" in page and "Example rollouts (step 3)" in page


def test_a_resume_target_below_the_runs_step_is_refused(a1_run: Path) -> None:
    from codea1.errors import UserError

    cfg = load_config(CONFIGS / "tiny-cpu.yaml", SMALL)
    before = (a1_run / "run.json").read_text()
    with pytest.raises(UserError, match=r"^--max-steps 1 is below step 3, where .* stands: a resume goes on"):
        train(cfg, a1_run, resume=True, max_steps=1, policy_factory=scripted_factory(_problems(cfg)))
    assert (a1_run / "run.json").read_text() == before  # nothing of the run was changed


@pytest.mark.parametrize("method", ["golden", "selfplay", "selfplay-cure"])
def test_baselines_run_two_steps(method: str, tmp_path: Path) -> None:
    # selfplay-cure: CURE's test reward and its separate update of the test rows
    cure = ["game.selfplay_reward=cure", "train.separate_test_update=true"] if method == "selfplay-cure" else []
    method = method.split("-")[0]
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", [*SMALL, f"method={method}", *cure])
    train(cfg, tmp_path / "run", max_steps=2, policy_factory=scripted_factory(_problems(cfg)))
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2]
    assert all("mistake_book_size" in r and "code_reward" in r for r in rows)
    ckpt = tmp_path / "run" / "checkpoints" / "step_000002"
    assert (ckpt / "code_policy").is_dir() and not (ckpt / "test_policy").exists()
    if method == "golden":
        assert rows[-1]["golden_pass_rate"] == rows[-1]["code_reward"]
    else:
        assert "test_reward" in rows[-1]
    train(cfg, tmp_path / "run", resume=True, max_steps=3, policy_factory=scripted_factory(_problems(cfg)))
    assert [r["step"] for r in read_metrics(tmp_path / "run" / "metrics.jsonl")] == [1, 2, 3]


def test_every_method_reads_the_same_questions_in_the_same_order(tmp_path) -> None:
    """One problem list for every method, even where some problems have no golden tests (before, golden
    dropped them and shuffled a shorter list than a1 and selfplay, so the orders differed from step 1)."""
    import dataclasses

    from codea1.data import load_problems, write_problems_jsonl
    from codea1.errors import UserError

    problems = load_problems("bundled:train")[:8]
    for i in (1, 4, 6):
        problems[i] = dataclasses.replace(problems[i], golden_tests=[])
    data = tmp_path / "mixed.jsonl"
    write_problems_jsonl(problems, data)
    ids = {}
    for method in ("golden", "a1", "selfplay"):
        cfg = load_config(
            CONFIGS / "tiny-cpu.yaml",
            [*SMALL, f"method={method}", f"data.train={data}", "data.limit=null", "train.data_epochs=2"],
        )
        run_dir = tmp_path / method
        train(cfg, run_dir, max_steps=4, policy_factory=scripted_factory(problems))
        ids[method] = [
            [
                json.loads(line)["question_id"]
                for line in (run_dir / "rollouts" / f"step_{k}.jsonl").read_text().splitlines()
            ]
            for k in range(1, 5)
        ]
    assert ids["golden"] == ids["a1"] == ids["selfplay"]
    seen = [q for step in ids["a1"] for q in step]
    assert len(set(seen)) == 5 and not {problems[i].id for i in (1, 4, 6)} & set(seen)  # one epoch of 5, then more
    with pytest.raises(UserError, match="require_golden_tests"):
        cfg = load_config(
            CONFIGS / "tiny-cpu.yaml",
            [*SMALL, "method=golden", f"data.train={data}", "data.require_golden_tests=false"],
        )
        train(cfg, tmp_path / "refused", max_steps=1, policy_factory=scripted_factory(problems))


def test_replay_is_counted_and_happens_when_questions_come_back(tmp_path) -> None:
    """metrics show how many Mistake Book tests each step replayed: none in the first epoch (every question
    is new), some once the questions come back with tests stored against them."""
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", [*SMALL, "train.data_epochs=2"])
    run_dir = tmp_path / "run"
    train(cfg, run_dir, max_steps=6, policy_factory=scripted_factory(_problems(cfg)))
    rows = read_metrics(run_dir / "metrics.jsonl")
    assert [r["mistake_book_replayed"] for r in rows[:3]] == [0.0, 0.0, 0.0]
    assert sum(r["mistake_book_replayed"] for r in rows[3:]) > 0
    assert all(0 <= r["mistake_book_replay_questions"] <= cfg.train.batch_size for r in rows)
    assert all(r["mistake_book_replayed"] <= cfg.game.history_size * r["mistake_book_replay_questions"] for r in rows)


def test_training_writes_the_report_and_it_flags_a_collapse(a1_run: Path, tmp_path: Path) -> None:
    from codea1.train.report import collapses, make_plots

    assert (a1_run / "report.html").is_file() and (a1_run / "plots" / "rewards.png").is_file()
    fell = [
        {"step": k, "code_reward": r, "golden_pass_rate": g}
        for k, (r, g) in enumerate([(0.59, 0.575), (0.5, 0.5), (0.3, 0.2), (0.1, 0.05), (0.04, 0.025)], 1)
    ]
    flags = collapses(fell)
    assert len(flags) == 2 and flags[0].startswith("R_C (the Code LLM's reward) collapsed: 0.545")
    assert collapses([{**r, "code_reward": 0.5, "golden_pass_rate": 0.5} for r in fell]) == []
    assert collapses(fell[:1]) == []
    # a series that never changes is named in the caption, not drawn as a flat line
    rows = [{"step": k, "code_kl": 0.01 * k, "code_clipfrac": 0.0, "test_clipfrac": 0.0} for k in (1, 2, 3)]
    captions = dict(make_plots(rows, tmp_path / "plots"))
    assert "constant, not drawn: code clip fraction = 0; test clip fraction = 0" in captions["policy_stats.png"]


def test_a_gpu_sized_config_on_a_cpu_says_so() -> None:
    from codea1.config import Config
    from codea1.train.loop import sizing_note, step_tokens

    paper = Config()  # the defaults: the paper's M=N=8, 4,096 new tokens
    assert step_tokens(paper) == 8 * 8 * 4096 + 8 * 8 * 8 * 4096
    note = sizing_note(paper, has_gpu=False)
    assert note is not None and "sized for GPUs" in note and "2,359,296 tokens" in note
    assert sizing_note(paper, has_gpu=True) is None
    assert sizing_note(load_config(CONFIGS / "smollm2-cpu.yaml"), has_gpu=False) is None
    assert sizing_note(load_config(CONFIGS / "tiny-cpu.yaml"), has_gpu=False) is None


def test_the_schedule_spans_the_steps_the_data_allows_not_max_steps(tmp_path) -> None:
    """train.max_steps above what the data epochs give (a budget set from the list before it was
    decontaminated): the learning rate decays over the steps that run, and a stop point (--max-steps)
    does not change it."""
    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml", [*SMALL, "train.data_epochs=1", "train.max_steps=10", "policy.warmup_steps=0"]
    )
    inner = scripted_factory(_problems(cfg))
    seen = []

    def factory(c):
        seen.append(c.policy.total_steps)
        return inner(c)

    run_dir = tmp_path / "run"
    train(cfg, run_dir, max_steps=2, policy_factory=factory)
    train(cfg, run_dir, resume=True, policy_factory=factory, max_steps=3)
    assert seen == [3, 3]  # 6 problems, batch 2, one epoch: 3 steps, not 10
    rows = read_metrics(run_dir / "metrics.jsonl")
    assert [r["step"] for r in rows] == [1, 2, 3]
    lr = cfg.policy.lr
    from codea1.rl.policy import lr_factor

    assert [r["code_lr"] for r in rows] == pytest.approx([lr * lr_factor(k, 0, 3) for k in range(3)])


def test_metrics_record_each_steps_questions(a1_run: Path) -> None:
    """metrics.jsonl alone tells which questions each step trained on, in order (a committed record
    of an arm's data order), and they are the rollouts' questions."""
    rows = read_metrics(a1_run / "metrics.jsonl")
    for row in rows:
        lines = (a1_run / "rollouts" / f"step_{row['step']}.jsonl").read_text().splitlines()
        in_rollouts = list(dict.fromkeys(json.loads(line)["question_id"] for line in lines))
        assert row["question_ids"] == in_rollouts and len(row["question_ids"]) == 2
