"""Every script in benchmarks/ runs, at its smallest size, as a user would run it: a fresh process, the
command line a README figure comes from with the sizes turned down. A figure whose script no longer runs
is a figure nobody can check. What a script measures is not asserted here (no wall-clock figures in
tests); that it finishes with exit 0 and prints its result is.

Scripts that need what a machine may lack are skipped when it is missing: the shared validation data
(the EvalPlus parquet, ULT-Lite), Ray, vLLM's CPU build (the vLLM scripts run in the real-engine tier,
`scripts/test.sh`, where its absence is a failure). A new script needs an entry in SMOKE.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ULT_LITE, VALIDATION_PARQUET

from codea1.models import ensure_smollm2_cache

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"

# script -> its arguments at the smallest size; "{model_dir}", "{parquet}", "{ult}", "{repo}" and "{tmp}" (a fresh
# folder) are filled in
SMOKE: dict[str, list[str]] = {
    "cold_start": [
        "--config",
        "{repo}/codea1/configs/tiny-cpu.yaml",
        "--sft-dir",
        "{tmp}/sft",
        "--limit",
        "2",
        "--n",
        "1",
        "--code-n",
        "1",
        "--no-sft-plain",
        "generation.test.response_prefix=```python",
        "sft.epochs=1",
        "sft.max_examples=4",
    ],
    "eval_fidelity": ["--data", "{parquet}", "--limit", "2", "--mutants", "1", "--workers", "1"],
    "game_jobs_cost": ["--rounds", "1"],
    "generation_throughput": ["--model", "tiny-random", "--batches", "1", "--new-tokens", "8", "--repeats", "1"],
    "gpu_check": [
        "--model-dir",
        "{model_dir}",
        "--device",
        "cpu",
        "--batches",
        "1",
        "--new-tokens",
        "4",
        "--train-rows",
        "4",
        "--dist-layers",
        "2",
        "--qwen-layers",
        "1",
        "--qwen-rows",
        "2",
        "--qwen-tokens",
        "16",
        "--qwen-vocab",
        "4096",
    ],
    "gpu_sync_check": ["--device", "cpu", "--layers", "1", "--vocab", "4096"],
    "chunked_logprobs": ["--model", "tiny-random", "--repeats", "1"],
    "learner_memory": ["--smoke"],
    "learner_shared_prompt": ["--model", "tiny-random", "--repeats", "1"],
    "mutation_speed": ["--ult", "{ult}", "--functions", "1", "--max-mutants", "20", "--no-cosmic-ray"],
    "paper_step_estimate": ["--measure-jobs", "10"],
    "parent_values_memory": ["--candidates", "2", "--calls", "1", "--chars", "1000"],
    "policy_memory": ["--model", "tiny-random", "--batch", "1", "--prompt", "8", "--response", "8", "--steps", "1"],
    "ray_executor_overhead": ["--jobs", "10", "--rounds", "1"],
    "prime_code_compare": ["--verl", "{tmp}/no-verl-checkout"],
    "refill_recovery": ["--steps", "2", "--rounds", "1", "--draws", "2"],
    "sandbox_layer_cost": ["--parquet", "{parquet}", "--limit", "2", "--rounds", "1"],
    "sandbox_throughput": ["--parquet", "{parquet}", "--limit", "2"],
    "stdio_throughput": ["--rounds", "1", "--limit", "1", "--workers", "1"],
    "step_overhead": ["--steps", "1"],
    "step_variants": [
        *("--config", "tiny-cpu", "--steps", "2", "--out", "{tmp}"),
        *("sync:train.one_step_off=false", "off:train.one_step_off=true"),
    ],
    "timeout_noise": ["--rounds", "1", "--calls", "1", "--spinners", "1", "--work", "1000"],
    "vllm_cpu_rollout": ["--rows", "2", "--new-tokens", "4", "--dtypes", "float32"],
    "vllm_cpu_sync_check": [],
}
NEEDS = {  # script -> (what it needs, whether this machine has it)
    "eval_fidelity": ("the shared validation parquet", VALIDATION_PARQUET.is_file()),
    "sandbox_layer_cost": ("the shared validation parquet", VALIDATION_PARQUET.is_file()),
    "sandbox_throughput": ("the shared validation parquet", VALIDATION_PARQUET.is_file()),
    "mutation_speed": ("the shared ULT-Lite file", ULT_LITE.is_file()),
    "ray_executor_overhead": ("Ray", importlib.util.find_spec("ray") is not None),
    "vllm_cpu_rollout": ("vLLM's CPU build", importlib.util.find_spec("vllm") is not None),
    "vllm_cpu_sync_check": ("vLLM's CPU build", importlib.util.find_spec("vllm") is not None),
}


def test_every_benchmark_script_has_a_smoke_run() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")}
    assert scripts == set(SMOKE), f"add to SMOKE: {sorted(scripts - set(SMOKE))}; gone: {sorted(set(SMOKE) - scripts)}"


def _arguments(name: str, tmp: Path) -> list[str]:
    fill = {"{parquet}": str(VALIDATION_PARQUET), "{ult}": str(ULT_LITE), "{tmp}": str(tmp), "{repo}": str(REPO)}
    if "{model_dir}" in SMOKE[name]:
        fill["{model_dir}"] = str(ensure_smollm2_cache())
    out = []
    for arg in SMOKE[name]:
        for key, value in fill.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_a_benchmark_runs_at_its_smallest_size(name: str, tmp_path: Path) -> None:
    what, present = NEEDS.get(name, ("", True))
    if not present:
        if name.startswith("vllm") and os.environ.get("CODEA1_REQUIRE_VLLM"):
            pytest.fail(f"{what} is required here (CODEA1_REQUIRE_VLLM) but is not installed")
        pytest.skip(f"needs {what}")
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env["OMP_NUM_THREADS"] = env.get("OMP_NUM_THREADS", "1")
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / f"{name}.py"), *_arguments(name, tmp_path)],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = (run.stdout[-3000:] + "\n" + run.stderr[-3000:]).strip()
    assert run.returncode == 0, f"{name} exited {run.returncode}:\n{tail}"
    assert run.stdout.strip(), f"{name} printed nothing:\n{tail}"
