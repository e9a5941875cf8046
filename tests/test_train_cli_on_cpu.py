"""`codea1 train/report` on bad input: one sentence, exit 2, and never a partial checkpoint."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
import yaml

from codea1.cli import main

CONFIG = str(Path(__file__).resolve().parents[1] / "codea1" / "configs" / "tiny-cpu.yaml")
OVERRIDES = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=4",
    "game.tests_per_suite=2",
    "train.checkpoint_every=1",
]


def train_args(run_dir: Path, *extra: str) -> list[str]:
    """`codea1 train` arguments: options first, then the key=value overrides."""
    options = [e for e in extra if e.startswith("--") or not ("=" in e)]
    overrides = [e for e in extra if e not in options]
    return ["train", "--config", CONFIG, "--no-progress", "--run-dir", str(run_dir), *options, *OVERRIDES, *overrides]


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no error message"
    return err[-1]


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("game.M=0", "'game.M' must be >= 1"),
        ("game.alpha=2", "'game.alpha' must be <= 1"),
        ("game.colour=red", "unknown config key 'game.colour'"),
    ],
)
def test_bad_config_values_exit_2_naming_the_key(override: str, fragment: str, tmp_path: Path, capsys) -> None:
    assert main(train_args(tmp_path / "r", override)) == 2
    message = _error(capsys)
    assert message.startswith("codea1: error:") and fragment in message
    assert not (tmp_path / "r").exists()


def test_overrides_may_stand_between_options(tmp_path: Path, monkeypatch) -> None:
    from codea1.train import loop

    seen = {}
    monkeypatch.setattr(loop, "train", lambda cfg, run_dir, **kwargs: seen.update(cfg=cfg, run_dir=run_dir))
    argv = [
        "train",
        "game.M=3",
        "--config",
        CONFIG,
        "game.N=2",
        "--run-dir",
        str(tmp_path / "r"),
        "--no-progress",
        "game.M=4",
    ]
    assert main(argv) == 0
    assert seen["run_dir"] == tmp_path / "r"
    assert (seen["cfg"].game.M, seen["cfg"].game.N) == (4, 2)  # all three applied, in order: the last M wins
    with pytest.raises(SystemExit) as exc:  # an unknown option is still refused
        main(["train", "--config", CONFIG, "game.M=2", "--bogus", "game.N=2"])
    assert exc.value.code == 2


def test_missing_model_is_one_sentence(tmp_path: Path, capsys) -> None:
    rc = main(train_args(tmp_path / "r", f"model.code_model={tmp_path / 'nope'}"))
    assert rc == 2
    assert "nope" in _error(capsys)
    assert not (tmp_path / "r").exists()  # a run that could not start leaves nothing behind


def test_unreadable_dataset_is_one_sentence(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "problems.jsonl"
    bad.write_text("{not json\n")
    assert main(train_args(tmp_path / "r", f"data.train={bad}")) == 2
    assert "problems.jsonl" in _error(capsys)
    assert main(train_args(tmp_path / "r2", f"data.train={tmp_path / 'gone.jsonl'}")) == 2
    assert "gone.jsonl" in _error(capsys)


def test_dataset_whose_gts_all_fail_is_refused(tmp_path: Path, capsys) -> None:
    from codea1.data import load_problems

    problems = load_problems("bundled:train")[:2]
    path = tmp_path / "broken.jsonl"
    with path.open("w") as handle:
        for p in problems:
            row = p.to_dict()
            row["gt_solution"] = f"def {p.entry_point}(*args, **kwargs):\n    raise ValueError('broken')\n"
            handle.write(json.dumps(row) + "\n")
    rc = main(train_args(tmp_path / "r", f"data.train={path}", "data.check_gt=true"))
    assert rc == 2
    assert "no usable problems" in _error(capsys)


def test_resume_needs_a_run_directory_and_a_new_run_needs_a_fresh_one(tmp_path: Path, capsys) -> None:
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a codea1 run directory" in _error(capsys)
    (tmp_path / "config.yaml").write_text("method: a1\n")
    assert main(train_args(tmp_path)) == 2
    assert "already holds a run" in _error(capsys)


def test_full_disk_on_checkpoint_is_one_sentence_and_nothing_partial(tmp_path: Path, capsys, monkeypatch) -> None:
    from codea1.train import checkpoint

    def full(_root: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint, "_fsync_tree", full)
    run_dir = tmp_path / "r"
    assert main(train_args(run_dir, "--max-steps=1")) == 2
    message = _error(capsys)
    assert "disk is full" in message and "no complete checkpoint" in message
    assert list((run_dir / "checkpoints").iterdir()) == []


def test_train_resume_and_report_through_the_cli(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "r"
    assert main(train_args(run_dir, "--max-steps=1")) == 0
    assert f"report: {run_dir / 'report.html'}" in capsys.readouterr().out  # where to look, said at the end
    assert main(["train", "--resume", str(run_dir), "--max-steps", "2", "--no-progress"]) == 0
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]
    assert main(["report", str(run_dir)]) == 0
    assert "report.html" in capsys.readouterr().out
    assert main(["train", "--list-keys"]) == 0
    assert "game.alpha" in capsys.readouterr().out


def test_demo_runs_end_to_end_on_a_tiny_preset(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "demo"
    assert (
        main(["demo", "--config", CONFIG, "--steps", "1", "--run-dir", str(run_dir), *OVERRIDES, "eval.limit=2"]) == 0
    )
    out = capsys.readouterr().out
    assert f"run directory: {run_dir}" in out and "report.html" in out
    summary = json.loads((run_dir / "eval.json").read_text())
    assert list(summary["stages"]) == ["start", "after cold start", "after 1 a1 steps"]
    for stage in summary["stages"].values():
        assert stage["code"]["problems"] == len(stage["tests"]["per_problem"]) == 2
        assert 0.0 <= stage["code"]["pass@1"] <= 1.0 and 0.0 <= stage["tests"]["valid_ratio"] <= 1.0
    assert (run_dir / "sft" / "sft.json").is_file() and (run_dir / "train" / "metrics.jsonl").is_file()
    # the cold start and the a1 steps train on the train split less near-duplicates of the held-out problems
    from codea1.data import read_problems_jsonl

    kept = {p.id for p in read_problems_jsonl(run_dir / "train_problems.jsonl")}
    assert kept and "train_problems.jsonl" in (run_dir / "train" / "config.yaml").read_text()
    # every change line states what its interval supports
    changes = [line for line in summary["lines"] if "paired difference" in line]
    assert len(changes) == 6 and all("interval" in line for line in changes)
    assert any(line.startswith("pass@1, after cold start -> after 1 a1 steps") for line in changes)
    assert "disk: " in out and "optimiser state deleted" in out
    assert not list((run_dir / "train" / "checkpoints").glob("*/*/optimizer.pt"))
    assert "Held-out measurements" in (run_dir / "train" / "report.html").read_text()
    # the demo's figures are seeded: the same command on the same machine prints the same figures
    again = tmp_path / "demo-again"
    assert main(["demo", "--config", CONFIG, "--steps", "1", "--run-dir", str(again), *OVERRIDES, "eval.limit=2"]) == 0
    repeat = json.loads((again / "eval.json").read_text())
    figures = [(s["code"]["pass@1"], s["tests"]["valid_ratio"]) for s in summary["stages"].values()]
    assert [(s["code"]["pass@1"], s["tests"]["valid_ratio"]) for s in repeat["stages"].values()] == figures
    assert [line for line in repeat["lines"] if "paired difference" in line] == changes


def test_a_start_that_fails_takes_back_what_it_wrote(tmp_path: Path, capsys, monkeypatch) -> None:
    """train.tensorboard=true without the extra: one sentence, no run directory left behind, and the same
    command gives the same sentence again (before, a half-made run blocked both a rerun and --resume)."""
    import sys

    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # as if tensorboard were not installed
    run_dir = tmp_path / "r"
    for _ in range(2):
        assert main(train_args(run_dir, "--max-steps=1", "train.tensorboard=true")) == 2
        assert "tensorboard is not installed" in _error(capsys)
        assert not run_dir.exists()
    # a directory that existed before keeps what was in it, and loses only what the run wrote
    run_dir.mkdir()
    (run_dir / "notes.txt").write_text("mine")
    assert main(train_args(run_dir, "--max-steps=1", "train.tensorboard=true")) == 2
    assert sorted(p.name for p in run_dir.iterdir()) == ["notes.txt"]


def test_an_edited_config_is_refused_on_resume_naming_the_keys(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "r"
    assert main(train_args(run_dir, "--max-steps=1")) == 0
    path = run_dir / "config.yaml"
    original = path.read_text()
    path.write_text(original.replace("M: 2", "M: 3").replace("lr: 0.0001", "lr: 0.001"))
    assert main(["train", "--resume", str(run_dir), "--max-steps", "2", "--no-progress"]) == 2
    message = _error(capsys)
    assert "game.M: 2 -> 3" in message and "policy.lr: 0.0001 -> 0.001" in message and "--run-dir" in message
    path.write_text(original)
    assert main(["train", "--resume", str(run_dir), "--max-steps", "2", "--no-progress"]) == 0


def test_a_run_written_with_the_keys_of_an_earlier_version_resumes(tmp_path: Path) -> None:
    """A run directory whose config.yaml and run.json hold keys renamed since (model.code_policy,
    generation.code.batch_size) resumes: codea1 reads its own earlier files under the new names."""
    run_dir = tmp_path / "r"
    assert main(train_args(run_dir, "--max-steps=1")) == 0
    path = run_dir / "config.yaml"
    text = path.read_text()
    assert "code_model:" in text and "rows_per_call:" in text
    path.write_text(text.replace("code_model:", "code_policy:").replace("rows_per_call:", "batch_size_old:"))
    old = yaml.safe_load(path.read_text())
    for section in ("code", "test"):  # the Sampling key, under its old name
        old["generation"][section]["batch_size"] = old["generation"][section].pop("batch_size_old")
    old["eval"]["batch_size"] = old["eval"].pop("batch_size_old")
    path.write_text(yaml.safe_dump(old))
    state = json.loads((run_dir / "run.json").read_text())
    state["config"]["model"]["code_policy"] = state["config"]["model"].pop("code_model")
    state["config"]["generation"]["code"]["batch_size"] = state["config"]["generation"]["code"].pop("rows_per_call")
    (run_dir / "run.json").write_text(json.dumps(state))
    assert main(["train", "--resume", str(run_dir), "--max-steps", "2", "--no-progress"]) == 0
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2]


def test_interrupt_says_how_to_resume_and_the_resume_keeps_the_target(tmp_path: Path, capsys, monkeypatch) -> None:
    from codea1.train import methods

    real = methods.A1.step
    calls = {"n": 0}

    def interrupted(self, env, step, batch):
        calls["n"] += 1
        if step == 3 and calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, env, step, batch)

    monkeypatch.setattr(methods.A1, "step", interrupted)
    run_dir = tmp_path / "r"
    assert main(train_args(run_dir, "--max-steps=5")) == 130
    message = _error(capsys)
    assert "interrupted (the last checkpoint is step 2)" in message
    assert f"codea1 train --resume {run_dir}" in message
    assert main(["train", "--resume", str(run_dir), "--no-progress"]) == 0
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3, 4, 5]  # the target given at the start, not the preset's 30
