"""codea1.config: presets load, overrides coerce, every mistake is a UserError naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from codea1.config import Config, config_from_dict, describe_keys, load_config, parse_override
from codea1.errors import UserError

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"


@pytest.mark.parametrize("name", ["tiny-cpu", "smollm2-cpu", "qwen2.5-coder-1.5b"])
def test_shipped_presets_load_and_round_trip(name: str, tmp_path: Path) -> None:
    cfg = load_config(CONFIGS / f"{name}.yaml")
    out = tmp_path / "c.yaml"
    out.write_text(cfg.to_yaml())
    assert load_config(out) == cfg


def test_repo_root_configs_link_points_at_the_package_presets() -> None:
    root_configs = CONFIGS.parents[1] / "configs"
    assert (root_configs / "tiny-cpu.yaml").is_file()


def test_paper_preset_has_the_reference_optimisation_settings() -> None:
    cfg = load_config(CONFIGS / "qwen2.5-coder-1.5b.yaml")
    assert (cfg.game.M, cfg.game.N, cfg.game.tests_per_suite, cfg.game.H, cfg.game.ell) == (8, 8, 8, 8, 1)
    assert cfg.optim.lr == 1e-6 and cfg.optim.clip_low == 0.2 and cfg.optim.clip_high == 0.28
    assert cfg.optim.dual_clip == 10.0 and cfg.optim.kl_coef == 0.001 and cfg.train.batch_size == 256


def test_overrides_are_coerced_to_the_declared_types() -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["game.M=3", "optim.lr=1e-5", "data.limit=null",
                                                  "model.lora_targets=q_proj,v_proj", "train.wandb=no",
                                                  "executor.timeout=3"])
    assert cfg.game.M == 3 and cfg.optim.lr == 1e-5 and cfg.data.limit is None
    assert cfg.model.lora_targets == ["q_proj", "v_proj"]
    assert cfg.train.wandb is False and cfg.executor.timeout == 3.0 and isinstance(cfg.executor.timeout, float)


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("game.M=0", "'game.M' must be >= 1"),
        ("game.alpha=2", "'game.alpha' must be <= 1"),
        ("game.alpha=-0.1", "'game.alpha' must be >= 0"),
        ("game.bogus=1", "unknown config key 'game.bogus'"),
        ("bogus=1", "unknown config key 'bogus'"),
        ("optim.lr=0", "'optim.lr' must be > 0"),
        ("optim.lr=fast", "'optim.lr' must be a number"),
        ("method=dpo", "'method' must be one of a1, golden, selfplay"),
        ("game.ell=9", "'game.ell' (9) cannot exceed game.M"),
        ("train.progress=maybe", "'train.progress' must be true or false"),
        ("game.N=2.5", "'game.N' must be an integer"),
        ("game=3", "section 'game' must be a mapping"),
        ("noequals", "must look like key=value"),
    ],
)
def test_bad_values_name_the_key(override: str, fragment: str) -> None:
    with pytest.raises(UserError) as info:
        load_config(CONFIGS / "tiny-cpu.yaml", [override])
    assert fragment in str(info.value)
    assert "command-line override" in str(info.value) or "key=value" in str(info.value)


def test_errors_in_the_file_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "my.yaml"
    path.write_text("game:\n  M: 0\n")
    with pytest.raises(UserError, match=r"my.yaml: config key 'game.M' must be >= 1"):
        load_config(path)


def test_unreadable_or_malformed_config_files(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: [1, 2\n")
    with pytest.raises(UserError, match="not valid YAML"):
        load_config(bad)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("42\n")
    with pytest.raises(UserError, match="YAML mapping"):
        load_config(scalar)


def test_dual_lora_requires_one_shared_base() -> None:
    with pytest.raises(UserError, match="model.test_policy"):
        config_from_dict({"model": {"mode": "dual-lora", "code_policy": "a", "test_policy": "b"}})
    cfg = config_from_dict({"model": {"mode": "dual-lora", "code_policy": "a"}})
    assert cfg.test_model_name == "a"


def test_every_key_has_help_text() -> None:
    rows = describe_keys()
    assert len(rows) > 50
    assert all(help_text for _key, _type, _default, help_text in rows)
    keys = {row[0] for row in rows}
    for key in ("game.M", "game.N", "game.H", "game.ell", "game.alpha", "optim.kl_coef", "model.mode",
                "train.checkpoint_every", "executor.workers", "data.difficulty", "seed"):
        assert key in keys


def test_parse_override_parses_yaml_scalars() -> None:
    assert parse_override("a.b=1") == ("a.b", 1)
    assert parse_override("a=x=y") == ("a", "x=y")
    assert parse_override("a=[1, 2]") == ("a", [1, 2])
    assert Config().game.M == 8
