"""Where the presets put the policies on a machine of 8 GPUs (a patched device count): the paper preset in
one process on cuda:0 says so and names the keys; the 1x8 preset uses every GPU; the trainer prints both
before anything loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from codea1.cli import main
from codea1.config import load_config
from codea1.errors import UserError
from codea1.train import layout, loop


@pytest.fixture
def eight_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 8)


def test_the_device_count_is_read(eight_gpus: None) -> None:
    assert layout.gpu_count() == 8


def test_the_paper_preset_alone_leaves_seven_gpus_idle_and_says_which_keys_spread_it() -> None:
    cfg = load_config("qwen2.5-coder-1.5b")
    lines = layout.describe_layout(cfg, 8)
    assert [line.split(":")[0] for line in lines] == ["code policy", "test policy", "GPUs"]
    assert all("on cuda:0" in line for line in lines[:2]) and lines[2] == "GPUs: 1 of 8 in use, 7 idle"
    note = layout.placement_note(cfg, 8)
    assert note is not None and "7 GPUs stay idle" in note
    assert all(key in note for key in ("placement.backend=ray", "placement.learner_ranks", layout.MULTI_GPU_PRESET))
    assert layout.placement_note(cfg, 1) is None and layout.placement_note(cfg, 0) is None


def test_the_1x8_preset_uses_every_gpu_of_the_node_with_its_own_settings() -> None:
    cfg = load_config(layout.MULTI_GPU_PRESET)
    paper = load_config("qwen2.5-coder-1.5b")
    for section in ("game", "generation", "data", "train", "model"):
        assert getattr(cfg, section) == getattr(paper, section), section
    assert cfg.policy == paper.policy
    lines = layout.describe_layout(cfg, 8)
    assert "GPUs 0-3" in lines[0] and "GPUs 4-7" in lines[1] and lines[2] == "GPUs: 8 of 8 in use"
    assert all("vLLM" in line and "FSDP" in line for line in lines[:2])
    assert layout.placement_note(cfg, 8) is None
    assert "8 asked for, 4 here" in layout.describe_layout(cfg, 4)[-1]


def test_a_golden_run_lays_out_one_policy() -> None:
    cfg = load_config("qwen2.5-coder-1.5b", ["method=golden", "data.require_golden_tests=true"])
    assert [line.split(":")[0] for line in layout.describe_layout(cfg, 8)] == ["code policy", "GPUs"]


def test_train_prints_the_layout_and_the_note_before_anything_loads(
    eight_gpus: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stop(*args: object, **kwargs: object) -> None:
        raise UserError("stopped here by the test")

    monkeypatch.setattr(loop, "load_training_problems", stop)
    monkeypatch.setenv("COLUMNS", "400")
    code = main(["train", "--config", "tiny-cpu", "--run-dir", str(tmp_path / "r"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "stopped here by the test" in err
    assert "layout: code policy: learner and the loop engine" in err and "GPUs: 0 of 8 in use, 8 idle" in err
    assert "this machine has 8 GPUs and placement.backend is local" in err
