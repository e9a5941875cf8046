"""One engine registry (codea1.engines): every engine is named once, chosen by `rollout.backend` in training and
in `codea1 eval` alike, and found by the name alone."""

import argparse
import json
import sys

import pytest
import yaml

from codea1.config import Config, config_from_dict, load_section
from codea1.engines import ALIASES, ENGINES, engine_entry, engine_names
from codea1.errors import UserError
from codea1.inference.engines import load_engine
from codea1.inference.rollout import TransformersRollout
from codea1.problem import Problem, write_problems_jsonl


def test_every_entry_loads_an_engine_of_its_name():
    assert set(ENGINES) == {"loop", "hf-generate", "vllm"}
    for name in ENGINES:
        engine = load_engine(name)  # vLLM's module imports without vLLM: nothing of it loads before use
        assert engine.name == name
        assert all(callable(getattr(engine, m)) for m in ("check", "attach", "sampler"))
        assert isinstance(engine.batches_itself, bool)
    assert load_engine("transformers").name == "loop"  # the older name still loads


def test_the_config_offers_exactly_the_registry():
    from codea1.config import RolloutSection

    [field] = [f for f in RolloutSection.__dataclass_fields__.values() if f.name == "backend"]
    assert tuple(field.metadata["choices"]) == engine_names() == (*ENGINES, *ALIASES)
    assert Config().rollout.backend == "loop"
    with pytest.raises(UserError, match="rollout.backend"):
        config_from_dict({"rollout": {"backend": "sglang"}})
    with pytest.raises(UserError, match="loop, hf-generate, vllm"):
        engine_entry("sglang")


@pytest.mark.parametrize("backend", ["loop", "hf-generate", "transformers"])
def test_training_policies_sample_with_the_engine_the_config_names(backend):
    from codea1.rl.build import build_policies

    cfg = config_from_dict({"model": {"code_model": "tiny-random"}, "rollout": {"backend": backend}})
    code, test = build_policies(cfg)
    want = "hf-generate" if backend == "hf-generate" else "loop"
    for policy in (code, test):
        assert isinstance(policy.rollout, TransformersRollout) and policy.rollout.engine == want
        assert policy.rollout.model is policy.model and policy.rollout.reuse_logprobs is True


def test_a_run_directory_written_with_the_older_name_still_loads(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"rollout": {"backend": "transformers"}}))
    assert load_section("rollout", path).backend == "transformers"
    assert engine_entry("transformers").name == "loop"


def _eval_code(tmp_path, *extra: str) -> dict:
    from codea1.cli import main

    bench = tmp_path / "bench.jsonl"
    problem = Problem(
        id="T/inc",
        prompt="Write inc(x).",
        description="Write inc(x).",
        entry_point="inc",
        gt_solution="def inc(x):\n    return x + 1\n",
        golden_tests=["assert inc(1) == 2"],
    )
    write_problems_jsonl([problem], bench)
    out = tmp_path / "r.json"
    args = ["eval", "code", "--model", "tiny-random", "--benchmark", str(bench), "--n", "2", "--max-new-tokens", "4"]
    assert main([*args, "--workers", "1", "-o", str(out), *extra]) == 0
    return json.loads(out.read_text())["config"]["sampling"]


def test_eval_reads_the_engine_from_the_rollout_section_of_its_config(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(yaml.safe_dump({"rollout": {"backend": "hf-generate"}}))
    assert _eval_code(tmp_path)["engine"] == "loop"  # the default
    assert _eval_code(tmp_path, "--config", str(cfg))["engine"] == "hf-generate"
    # --engine is the short form of rollout.backend, and wins over the config's
    assert _eval_code(tmp_path, "--config", str(cfg), "--engine", "loop")["engine"] == "loop"


def test_eval_takes_rollout_keys_and_refuses_others(tmp_path, monkeypatch):
    from codea1.cli import main

    monkeypatch.setitem(sys.modules, "vllm", None)  # no vLLM here: its keys still parse; the engine is not built
    assert main(["eval", "code", "--model", "tiny-random", "--rollout", "eval.n_samples=3"]) != 0
    from codea1.cli.eval import _rollout

    keys = ["rollout.vllm_tensor_parallel_size=2", "rollout.vllm_gpu_memory_utilization=0.45"]
    section = _rollout(argparse.Namespace(config=None, engine="vllm", rollout=keys))
    assert (section.backend, section.vllm_tensor_parallel_size, section.vllm_gpu_memory_utilization) == (
        "vllm",
        2,
        0.45,
    )


def test_the_vllm_memory_share_follows_the_role():
    from codea1.config import RolloutSection
    from codea1.inference.vllm_backend import memory_share

    assert memory_share(RolloutSection(), beside_learner=True) == 0.3
    assert memory_share(RolloutSection(), beside_learner=False) == 0.9
    assert memory_share(RolloutSection(vllm_gpu_memory_utilization=0.5), beside_learner=False) == 0.5


def test_the_local_engines_sample_under_the_policys_half_dtype_on_cuda_only() -> None:
    """The loop sampled the fp32 master weights of a bf16 policy in fp32 on a GPU; now it samples under the
    policy's autocast there, and on a CPU as before (float32, MKL-packed)."""
    import torch

    from codea1.config import config_from_dict
    from codea1.inference.engines import load_engine
    from codea1.inference.rollout import sampling_autocast
    from codea1.rl.build import load_policies

    on_gpu = sampling_autocast(torch.device("cuda", 0), "bfloat16")
    assert isinstance(on_gpu, torch.autocast) and on_gpu.fast_dtype == torch.bfloat16
    assert isinstance(sampling_autocast(torch.device("cuda", 0), "float16"), torch.autocast)
    for device, dtype in (("cuda", "float32"), ("cuda", "auto"), ("cpu", "bfloat16")):
        assert not isinstance(sampling_autocast(torch.device(device), dtype), torch.autocast)
    cfg = config_from_dict({"policy": {"dtype": "bfloat16"}, "rollout": {"backend": "hf-generate"}})
    code, test = load_policies(cfg)
    load_engine("hf-generate").attach(cfg, [code, test])
    assert code.rollout.autocast == test.rollout.autocast == "bfloat16"
    assert code.rollout.engine == "hf-generate"
