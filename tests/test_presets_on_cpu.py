"""`--config NAME`: the presets of codea1/configs/ by name (tiny-cpu, smollm2-cpu, qwen2.5-coder-1.5b[-1x8]) for
every command that takes --config; a file of that name wins, an unknown name lists the presets, and
`--help` names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from codea1.cli import main
from codea1.config import load_config, load_section, preset_names
from codea1.errors import UserError

PRESETS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
NAMES = ["qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-1x8", "smollm2-cpu", "tiny-cpu"]


def test_a_preset_name_reads_the_preset_and_a_file_of_that_name_wins(tmp_path: Path, monkeypatch) -> None:
    assert preset_names() == NAMES == sorted(p.stem for p in PRESETS.glob("*.yaml"))
    for name in NAMES:
        assert load_config(name).to_dict() == load_config(PRESETS / f"{name}.yaml").to_dict()
    assert load_config("tiny-cpu", ["game.M=3"]).game.M == 3
    assert load_section("game", "qwen2.5-coder-1.5b").M == 8
    monkeypatch.chdir(tmp_path)
    Path("tiny-cpu").write_text("game:\n  M: 5\n")
    assert load_config("tiny-cpu").game.M == 5  # a path that exists is read as given
    assert load_config(PRESETS / "tiny-cpu.yaml").game.M == 4


def test_an_unknown_name_lists_the_presets(tmp_path: Path, capsys) -> None:
    for spec in ("tiny-gpu", str(tmp_path / "missing.yaml")):
        with pytest.raises(UserError) as info:
            load_config(spec)
        message = str(info.value)
        assert message.startswith(f"{spec}: no such config file or preset")
        assert all(name in message for name in NAMES)
    assert main(["train", "--config", "tiny-gpu", "--run-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "tiny-gpu: no such config file or preset" in err and "qwen2.5-coder-1.5b" in err
    assert not (tmp_path / "r").exists()


def test_train_takes_a_preset_name_and_names_its_run_after_it(tmp_path: Path, monkeypatch) -> None:
    from codea1.train import loop

    seen = {}
    monkeypatch.setattr(loop, "train", lambda cfg, run_dir, **kwargs: seen.update(cfg=cfg, run_dir=run_dir))
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--config", "qwen2.5-coder-1.5b", "--no-progress", "game.M=2"]) == 0
    assert seen["cfg"].model.code_model == "Qwen/Qwen2.5-Coder-1.5B-Instruct" and seen["cfg"].game.M == 2
    assert Path(seen["run_dir"]).name.startswith("qwen2.5-coder-1.5b-")  # not "qwen2.5-coder-1"


@pytest.mark.parametrize(
    "command", [["train"], ["sft"], ["demo"], ["compare"], ["score"], ["eval", "code"], ["eval", "tests"]]
)
def test_help_of_every_command_with_config_lists_the_presets(command: list[str], capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "500")  # one help entry per line: no name broken at a hyphen
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    line = next(x for x in capsys.readouterr().out.splitlines() if x.lstrip().startswith("--config"))
    assert all(name in line for name in NAMES), line
