"""A run stopped by run health (health.mode=stop): `codea1 train` exits with its own code (3), says the
command that continues it, and that command works: a resume may change health.* and placement.* keys (and
nothing else of what the run computes), and each change is kept in run.json's `config_changes` with its step."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from codea1.cli import main

CONFIG = str(Path(__file__).resolve().parents[1] / "codea1" / "configs" / "tiny-cpu.yaml")
# random tiny models write no passing code: every group's rewards are equal, so with a window of one step
# the "no signal" rule fires at step 1 (code_zero_var_groups 1.0 > 0.9)
OVERRIDES = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=4",
    "game.tests_per_suite=2",
    "train.checkpoint_every=1",
    "health.window=1",
    "health.mode=stop",
    "executor.uid_base=1700980000",
]


def _last_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no error message"
    return err[-1]


def _steps(run_dir: Path) -> list[int]:
    return [json.loads(x)["step"] for x in (run_dir / "metrics.jsonl").read_text().splitlines()]


def _stopped_run(tmp_path: Path, capsys) -> Path:
    run_dir = tmp_path / "r"
    argv = ["train", "--config", CONFIG, "--no-progress", "--run-dir", str(run_dir), "--max-steps", "3", *OVERRIDES]
    assert main(argv) == 3
    message = _last_error(capsys)
    assert message.startswith("codea1: error: run health stopped the run at step 1 (checkpointed)")
    assert f"`codea1 train --resume {run_dir} health.mode=warn`" in message
    assert "health.max_zero_var_groups" in message  # the threshold that fired, to loosen instead
    assert _steps(run_dir) == [1]
    return run_dir


def test_a_health_stop_exits_3_and_the_command_it_names_trains_on(tmp_path: Path, capsys) -> None:
    run_dir = _stopped_run(tmp_path, capsys)
    # a plain resume keeps health.mode=stop: one more step, flagged again, the same exit code
    assert main(["train", "--resume", str(run_dir), "--no-progress"]) == 3
    assert "stopped the run at step 2" in _last_error(capsys)
    assert "config_changes" not in json.loads((run_dir / "run.json").read_text())
    # the command the message names continues to the target the run was started with (3 steps)
    assert main(["train", "--resume", str(run_dir), "--no-progress", "health.mode=warn"]) == 0
    assert _steps(run_dir) == [1, 2, 3]
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert rows[2].get("health_warnings")  # still checked and logged, no longer stopping
    state = json.loads((run_dir / "run.json").read_text())
    assert state["config_changes"] == [{"step": 2, "changed": {"health.mode": ["stop", "warn"]}}]
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["health"]["mode"] == "warn"
    assert state["config"]["health"]["mode"] == "stop"  # the config the run started with stays as it was
    # a later plain resume keeps the changed setting and records nothing new
    assert main(["train", "--resume", str(run_dir), "--no-progress", "--max-steps", "4"]) == 0
    assert _steps(run_dir) == [1, 2, 3, 4]
    assert len(json.loads((run_dir / "run.json").read_text())["config_changes"]) == 1


def test_a_resume_may_change_only_health_and_placement_keys(tmp_path: Path, capsys) -> None:
    run_dir = _stopped_run(tmp_path, capsys)
    before = (run_dir / "config.yaml").read_text()
    for extra in (["game.M=3"], ["health.mode=warn", "policy.lr=1e-3"]):
        assert main(["train", "--resume", str(run_dir), "--no-progress", *extra]) == 2
        message = _last_error(capsys)
        assert message.startswith("codea1: error: --resume may change only health.* and placement.* keys")
        assert extra[-1] in message and "--run-dir NEW_DIR" in message
    assert main(["train", "--resume", str(run_dir), "--no-progress", "health.mood=warn"]) == 2
    assert "unknown config key 'health.mood'" in _last_error(capsys)
    assert main(["train", "--resume", str(run_dir), "--config", CONFIG, "health.mode=warn"]) == 2
    assert "--resume" in _last_error(capsys)
    assert (run_dir / "config.yaml").read_text() == before and _steps(run_dir) == [1]
    # a threshold loosened by editing config.yaml's health section is taken, and recorded, too
    (run_dir / "config.yaml").write_text(before.replace("max_zero_var_groups: 0.9", "max_zero_var_groups: 1.0"))
    assert main(["train", "--resume", str(run_dir), "--no-progress"]) == 0
    assert _steps(run_dir) == [1, 2, 3]
    changes = json.loads((run_dir / "run.json").read_text())["config_changes"]
    assert changes == [{"step": 1, "changed": {"health.max_zero_var_groups": [0.9, 1.0]}}]
    # where the run computes may change on the command line too, as the message and the docs say
    assert (
        main(["train", "--resume", str(run_dir), "--no-progress", "--max-steps", "4", "placement.cpus_per_policy=2"])
        == 0
    )
    changes = json.loads((run_dir / "run.json").read_text())["config_changes"]
    assert changes[-1] == {"step": 3, "changed": {"placement.cpus_per_policy": [1.0, 2.0]}}
