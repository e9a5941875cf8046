"""codea1.config: presets load, overrides coerce, every mistake is a UserError naming the key."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from codea1.config import (
    RENAMED,
    Config,
    EvalSection,
    GameConfig,
    PolicyConfig,
    Sampling,
    config_from_dict,
    describe_keys,
    load_config,
    load_section,
    migrate,
    parse_override,
)
from codea1.errors import UserError

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"


@pytest.mark.parametrize("name", ["tiny-cpu", "smollm2-cpu", "qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-1x8"])
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
    game, policy = cfg.game, cfg.policy
    assert (game.M, game.N, game.tests_per_suite, game.history_size, game.topvar_ell) == (8, 8, 8, 8, 1)
    assert policy.lr == 1e-6 and policy.clip_low == 0.2 and policy.clip_high == 0.28
    assert policy.dual_clip == 10.0 and policy.kl_coef == 0.001 and cfg.train.batch_size == 256


def test_overrides_are_coerced_to_the_declared_types() -> None:
    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml",
        [
            "game.M=3",
            "policy.lr=1e-5",
            "data.limit=null",
            "policy.lora_targets=q_proj,v_proj",
            "train.wandb=no",
            "game.test_timeout=3",
            "policy.betas=[0.8, 0.9]",
        ],
    )
    assert cfg.game.M == 3 and cfg.policy.lr == 1e-5 and cfg.data.limit is None
    assert cfg.policy.lora_targets == ["q_proj", "v_proj"] and cfg.policy.betas == [0.8, 0.9]
    assert cfg.train.wandb is False and cfg.game.test_timeout == 3.0 and isinstance(cfg.game.test_timeout, float)


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("game.M=0", "'game.M' must be >= 1"),
        ("game.alpha=2", "'game.alpha' must be <= 1"),
        ("game.alpha=-0.1", "'game.alpha' must be >= 0"),
        ("game.bogus=1", "unknown config key 'game.bogus'"),
        ("bogus=1", "unknown config key 'bogus'"),
        ("policy.lr=0", "'policy.lr' must be > 0"),
        ("policy.lr=fast", "'policy.lr' must be a number"),
        ("policy.betas=[0.9]", "'policy.betas' must be a list of 2 values"),
        ("policy.betas=[0.9, 1.0]", "'policy.betas' must be < 1"),
        ("game.timeout_factor=0.5", "'game.timeout_factor' must be >= 1"),
        ("generation.code.top_p=0", "'generation.code.top_p' must be > 0"),
        ("method=dpo", "'method' must be one of a1, golden, selfplay"),
        ("game.topvar_ell=9", "'game.topvar_ell' (9) cannot exceed game.M"),
        ("game.selfplay_reward=cure", "'game.selfplay_reward' is 'cure', but it applies to method selfplay"),
        (
            "game.selfplay_reward=cure-suite",
            "'game.selfplay_reward' is 'cure-suite', but it applies to method selfplay",
        ),
        ("train.separate_test_update=true", "'train.separate_test_update' splits the update of a policy that plays"),
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
    with pytest.raises(UserError, match="model.test_model"):
        config_from_dict({"model": {"mode": "dual-lora", "code_model": "a", "test_model": "b"}})
    cfg = config_from_dict({"model": {"mode": "dual-lora", "code_model": "a"}})
    assert cfg.test_model_name == "a"


def test_placement_fsdp_needs_ray_ranks_and_full_fine_tuning() -> None:
    with pytest.raises(UserError, match="placement.fsdp.*learner_ranks"):
        config_from_dict({"placement": {"fsdp": True}})
    with pytest.raises(UserError, match="placement.fsdp.*learner_ranks"):
        config_from_dict({"placement": {"fsdp": True, "backend": "ray"}})
    ray2 = {"fsdp": True, "backend": "ray", "learner_ranks": 2}
    with pytest.raises(UserError, match="placement.fsdp.*model.mode full"):
        config_from_dict({"placement": ray2, "model": {"mode": "lora"}})
    assert config_from_dict({"placement": ray2}).placement.fsdp


def test_every_key_has_help_text() -> None:
    rows = describe_keys()
    assert len(rows) > 50
    assert all(help_text for _key, _type, _default, help_text in rows)
    keys = {row[0] for row in rows}
    for key in (
        "game.M",
        "game.N",
        "game.history_size",
        "game.topvar_ell",
        "game.alpha",
        "policy.kl_coef",
        "model.mode",
        "generation.code.temperature",
        "eval.max_new_tokens",
        "train.checkpoint_every",
        "executor.workers",
        "data.difficulty",
        "seed",
    ):
        assert key in keys


def test_parse_override_parses_yaml_scalars() -> None:
    assert parse_override("a.b=1") == ("a.b", 1)
    assert parse_override("a=x=y") == ("a", "x=y")
    assert parse_override("a=[1, 2]") == ("a", [1, 2])
    assert Config().game.M == 8


# ----------------------------------------------------------------------------------------------------
# one config: the sections are the types the game, the policies and sampling take


def _another_value(f: dataclasses.Field, default):
    """A valid value of knob `f` that differs from its default."""
    meta = f.metadata
    if meta.get("choices"):
        return next(c for c in meta["choices"] if c != default)
    if isinstance(default, bool) or (default is None and "bool" in str(f.type)):
        return not default
    if isinstance(default, list):
        return [0.5, 0.75] if default and isinstance(default[0], float) else ["zz_proj"]
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default / 2 if default > 0 else 0.5
    if default is None:
        value = 3 if "int" in str(f.type) else 0.25
        return max(value, meta.get("low", value) + 1)  # within the knob's range
    return default + "-other"


SECTIONS = {
    "game": GameConfig,
    "policy": PolicyConfig,
    "generation.code": Sampling,
    "generation.test": Sampling,
    "eval": EvalSection,
}


def _knobs(cls):
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("derived")]


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_knob_of_the_game_policy_sampling_and_eval_is_settable_from_yaml(section, tmp_path: Path) -> None:
    cls = SECTIONS[section]
    defaults = Config()
    for part in section.split("."):
        defaults = getattr(defaults, part)
    assert type(defaults) is cls  # the section *is* the type the code takes
    wanted = {f.name: _another_value(f, getattr(defaults, f.name)) for f in _knobs(cls)}
    data: dict = {"method": "selfplay"} if section == "game" else {}  # selfplay_reward=cure needs it
    node = data
    for part in section.split("."):
        node = node.setdefault(part, {})
    node.update(wanted)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    got = load_config(path)
    for part in section.split("."):
        got = getattr(got, part)
    assert {name: getattr(got, name) for name in wanted} == wanted
    assert all(getattr(got, n) != getattr(defaults, n) for n in wanted)


def test_sampling_sections_reach_the_generate_call_unchanged() -> None:
    from codea1.inference.rollout import GenerationConfig

    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml",
        ["generation.test.top_k=5", "generation.test.stop=[END]", "eval.max_prompt_tokens=99"],
    )
    gen = GenerationConfig.of(cfg.generation.test, n=4, seed=7)
    assert isinstance(gen, Sampling) and (gen.n, gen.seed, gen.top_k, gen.stop) == (4, 7, 5, ["END"])
    assert {f.name: getattr(gen, f.name) for f in dataclasses.fields(Sampling)} == dataclasses.asdict(
        cfg.generation.test
    )
    assert GenerationConfig.of(cfg.eval, n=1, seed=0).max_prompt_tokens == 99


def test_one_default_per_knob() -> None:
    """The policy and game types built in Python have the defaults a training config has."""
    cfg = Config()
    assert dataclasses.asdict(PolicyConfig()) | {"lora": False, "total_steps": 0} == dataclasses.asdict(cfg.policy) | {
        "lora": False,
        "total_steps": 0,
    }
    assert dataclasses.asdict(GameConfig()) | {"blackbox_tests": None} == dataclasses.asdict(cfg.game) | {
        "blackbox_tests": None
    }
    assert PolicyConfig().micro_batch_tokens == 16384 and PolicyConfig().mini_batches == 1


def test_migrate_moves_the_keys_codea1_itself_wrote_under_older_names() -> None:

    data = {"model": {"code_policy": "x", "mode": "full"}, "optim": {"lr": 1e-5}, "eval": {"batch_size": 3}}
    moved, names = migrate(data)
    assert moved == {"model": {"code_model": "x", "mode": "full"}, "policy": {"lr": 1e-5}, "eval": {"rows_per_call": 3}}
    assert sorted(names) == ["eval.batch_size", "model.code_policy", "optim"]
    assert data["model"] == {"code_policy": "x", "mode": "full"}  # the input is left as it was
    assert config_from_dict(moved).model.code_model == "x"


def test_a_run_written_before_cure_became_cures_reward_keeps_its_reward() -> None:
    """selfplay_reward cure meant what cure-suite means now; a run's config.yaml from then (no
    train.separate_test_update, added with the change) resumes with the reward it trained with."""
    old = {"method": "selfplay", "game": {"selfplay_reward": "cure"}, "train": {"max_steps": 2}}
    moved, names = migrate(old)
    assert moved["game"]["selfplay_reward"] == "cure-suite" and names == ["game.selfplay_reward"]
    now = config_from_dict({"method": "selfplay", "game": {"selfplay_reward": "cure"}}).to_dict()
    assert migrate(now) == (now, [])


def test_the_two_ray_addresses_of_earlier_runs_become_one_key() -> None:
    both = {"executor": {"ray_address": None, "workers": 2}, "placement": {"ray_address": "auto"}}
    moved, names = migrate(both)
    assert moved["ray"] == {"address": "auto"} and sorted(names) == ["executor.ray_address", "placement.ray_address"]
    assert config_from_dict(moved).ray.address == "auto"
    with pytest.raises(UserError, match="are now one key, 'ray.address', but their values differ"):
        migrate({"executor": {"ray_address": "auto"}, "placement": {"ray_address": "10.0.0.1:6379"}})


@pytest.mark.parametrize(("old", "new"), sorted(RENAMED.items()))
def test_keys_of_earlier_versions_name_their_replacement(old: str, new: str, tmp_path: Path) -> None:
    value = {"lr": 1e-5} if old == "optim" else 1
    data: dict = {}
    node = data
    parts = old.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError) as info:
        load_config(path)
    assert f"config key '{old}' is now '{new}'" in str(info.value) and str(info.value).count("\n") == 0
    with pytest.raises(UserError, match=f"command-line override: config key '{old}' is now '{new}'"):
        load_config(None, [f"{old}.lr=1e-5" if old == "optim" else f"{old}=1"])


def test_derived_keys_are_set_from_the_key_they_follow() -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["model.mode=lora", "train.max_steps=7"])
    assert cfg.policy.lora is True and cfg.policy.total_steps == 7
    assert "lora" not in cfg.to_dict()["policy"] and "total_steps" not in cfg.to_dict()["policy"]
    with pytest.raises(UserError, match="'policy.lora' is set from model.mode"):
        load_config(None, ["policy.lora=true"])
    with pytest.raises(UserError, match="'policy.total_steps' is set from train.max_steps"):
        load_config(None, ["policy.total_steps=3"])


def test_game_prompt_keys_follow_the_scoring_keys_and_the_method_unless_set() -> None:
    a1 = load_config(None, ["game.tests_per_suite=4"])
    assert a1.game.tests_requested == 4 and a1.game.blackbox_tests is False
    selfplay = load_config(None, ["method=selfplay", "game.tests_requested=6"])
    assert selfplay.game.tests_requested == 6 and selfplay.game.blackbox_tests is True
    assert load_config(None, ["method=selfplay", "game.blackbox_tests=false"]).game.blackbox_tests is False
    assert load_config(None, ["game.blackbox_tests=true"]).game.blackbox_tests is True


def test_sections_built_in_python_are_checked_too() -> None:
    with pytest.raises(UserError, match="GameConfig.alpha must be <= 1"):
        GameConfig(alpha=1.5)
    with pytest.raises(UserError, match="PolicyConfig.loss_agg must be one of"):
        PolicyConfig(loss_agg="sum")
    with pytest.raises(UserError, match="unknown config key 'game.alfa'"):
        GameConfig.from_dict({"alfa": 0.5}, "game")


def test_load_section_reads_one_section_of_a_run_config(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(load_config(CONFIGS / "smollm2-cpu.yaml", ["game.alpha=0.25"]).to_yaml())
    game = load_section("game", path, ["game.history_size=3"])
    assert isinstance(game, GameConfig) and (game.alpha, game.history_size, game.tests_per_suite) == (0.25, 3, 4)
    assert load_section("eval").temperature == 0.7  # the eval defaults, not Sampling's
    with pytest.raises(UserError, match="command-line override: config key 'game.H' is now 'game.history_size'"):
        load_section("game", None, ["game.H=3"])
    with pytest.raises(UserError, match="must set a key of section 'game'"):
        load_section("game", None, ["policy.lr=1"])


# ----------------------------------------------------------------------------------------------------
# `codea1 score` and `codea1 eval` read the same keys as a training config


def _args(argv: list[str]):
    from codea1.cli import build_parser

    return build_parser().parse_args(argv)


SCORE = ["score", "--problems", "bundled", "--rollouts", "r.jsonl", "--output", "o.jsonl"]
EVAL = ["eval", "code", "--model", "tiny-random"]


def test_score_options_are_the_game_keys(tmp_path: Path) -> None:
    from codea1.cli.game import SCORED_KEYS, _config

    run_config = tmp_path / "config.yaml"
    run_config.write_text(
        load_config(
            CONFIGS / "smollm2-cpu.yaml", ["game.alpha=0.25", "game.float_tol=1e-6", "game.test_timeout=1.5"]
        ).to_yaml()
    )
    game = _config(
        _args(
            [
                *SCORE,
                "--config",
                str(run_config),
                "--history-size",
                "3",
                "--timeout-factor",
                "4",
                "--max-tests-per-suite",
                "5",
                "--test-validity",
                "strict",
            ]
        )
    )
    assert (game.alpha, game.float_tol, game.test_timeout, game.tests_per_suite) == (0.25, 1e-6, 1.5, 4)
    assert (game.history_size, game.timeout_factor, game.max_tests_per_suite, game.test_validity) == (
        3,
        4.0,
        5,
        "strict",
    )
    assert _config(_args(SCORE)) == GameConfig()
    scored = {f.name for f in SCORED_KEYS}
    assert scored == {f.name for f in dataclasses.fields(GameConfig)} - {"M", "N", "tests_requested", "blackbox_tests"}


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--timeout", "1"], "option --timeout is now --test-timeout"),
        (["--test-reward", "cure"], "option --test-reward is now --selfplay-reward"),
        (["--history-size", "-1"], "config key 'game.history_size' must be >= 0"),
        (["--selfplay-reward", "best"], "config key 'game.selfplay_reward' must be one of a1, cure"),
    ],
)
def test_score_options_are_checked_like_keys(options: list[str], fragment: str) -> None:
    from codea1.cli.game import _config

    with pytest.raises(UserError, match=fragment):
        _config(_args([*SCORE, *options]))


def test_eval_sampling_options_are_the_eval_keys(tmp_path: Path) -> None:
    from codea1.cli.eval import _sampling

    assert _sampling(_args(EVAL)) == Config().eval
    preset = CONFIGS / "qwen2.5-coder-1.5b.yaml"
    got = _sampling(_args([*EVAL, "--config", str(preset), "--top-k", "20", "--stop", "[END]"]))
    assert (got.max_new_tokens, got.temperature, got.top_k, got.stop) == (1024, 0.7, 20, ["END"])
    with pytest.raises(UserError, match="config key 'eval.top_p' must be <= 1"):
        _sampling(_args([*EVAL, "--top-p", "1.5"]))


def test_torch_threads_of_a_policy_actor_are_its_cpu_reservation() -> None:
    """Unset, train.torch_threads was every core of the node in each rank's actor (8 ranks of a node each
    spinning 128 threads); now a policy actor takes its reservation, the local process every core it may use."""
    from codea1.config import torch_threads, usable_cores

    cfg = config_from_dict({"placement": {"backend": "ray", "cpus_per_policy": 1}})
    assert cfg.train.torch_threads is None
    assert torch_threads(cfg) == usable_cores()
    assert torch_threads(cfg, policy_actor=True) == 1
    wide = config_from_dict({"placement": {"backend": "ray", "cpus_per_policy": 10_000}})
    assert torch_threads(wide, policy_actor=True) == usable_cores()  # never more than it may use
    pinned = config_from_dict({"train": {"torch_threads": 3}, "placement": {"cpus_per_policy": 1}})
    assert torch_threads(pinned) == torch_threads(pinned, policy_actor=True) == 3


def test_an_engine_over_gpus_inside_a_policy_actor_is_refused_when_the_config_is_read() -> None:
    ray_tp2 = {"rollout": {"backend": "vllm", "vllm_tensor_parallel_size": 2}, "placement": {"backend": "ray"}}
    with pytest.raises(UserError, match=r"vllm_tensor_parallel_size.*placement.backend ray"):
        config_from_dict(ray_tp2)
    assert config_from_dict({"rollout": ray_tp2["rollout"]}).rollout.vllm_tensor_parallel_size == 2  # local: fine
    assert config_from_dict({"placement": {"backend": "ray"}, "rollout": {"backend": "vllm"}})


def test_half_precision_policies_gather_their_shards_in_half_precision_by_default() -> None:
    assert Config().placement.fsdp_half_gathers is True


def test_data_train_help_names_every_source_it_reads():
    import dataclasses

    from codea1.config import DataSection

    [train] = [f for f in dataclasses.fields(DataSection) if f.name == "train"]
    for source in ("bundled-stdio", "bundled-stdio-cpp", "humaneval+", "mbpp+", "livecodebench:", "verl:"):
        assert source in train.metadata["help"], source
