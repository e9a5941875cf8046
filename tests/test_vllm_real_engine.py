"""codea1's vLLM code against vLLM's own engine: its CPU build (`vllm-cpu`), on the bundled SmolLM2-135M.

vLLM's CPU build pins transformers below the main environment's, so these tests run in an environment
of their own, `.venv-vllm`, which `make test` builds (scripts/install-vllm.sh) and runs them in
(scripts/test.sh). In the main environment vLLM is absent and this file is skipped; in the vLLM run
(CODEA1_REQUIRE_VLLM=1) a missing vLLM is an error, so nothing here is skipped where it is meant to run.

Two placements of the engine are tested. codea1 colocates an engine with its learner in one process
(`engine_process_env`: VLLM_ENABLE_V1_MULTIPROCESSING=0), which is what the module's fixture and the tiny
a1 run get. vLLM's own default, the engine core in a process of its own fed through vLLM's message encoder
(what the fake engine of test_vllm_backend_on_cpu.py imitates, and what a data-parallel rank gets), is
tested by `test_a_grpo_update_reaches_an_engine_in_a_process_of_its_own` in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

if os.environ.get("CODEA1_REQUIRE_VLLM") == "1":
    import vllm  # noqa: F401  (the vLLM run: its absence is a failure, not a skip)
else:
    pytest.importorskip("vllm")

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")  # GiB of KV cache: plenty for the bundled model

from codea1.config import config_from_dict
from codea1.inference.rollout import GenerationConfig

ROOT = Path(__file__).resolve().parent.parent
PREFILL = "```python\ndef add(a, b):\n"
PROMPTS = [
    [{"role": "user", "content": "Write a Python function that adds two numbers."}],
    [
        {"role": "user", "content": "Complete the function."},
        {"role": "assistant", "content": PREFILL},
    ],
]


def _config(model=None, policy=None, **rollout):
    return config_from_dict(
        {
            "model": {"code_model": "smollm2-135m", "mode": "full", **(model or {})},
            "policy": {"kl_coef": 0.0, "lr": 2e-4, "warmup_steps": 0, **(policy or {})},
            # the default sleep level (null) is kept: the CPU build has no sleep mode, so it means 0, silently
            "rollout": {"backend": "vllm", "vllm_dtype": "float32", "vllm_enforce_eager": True, **rollout},
        }
    )


@pytest.fixture(scope="module")
def code(tmp_path_factory):
    from codea1.inference.vllm_backend import attach_vllm
    from codea1.rl.build import load_policies

    cfg = _config()
    policy, _ = load_policies(cfg, test=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        attach_vllm(cfg, [policy, None], workdir=str(tmp_path_factory.mktemp("vllm")))
    policy.sleep_warnings = [str(w.message) for w in caught if "sleep mode" in str(w.message)]
    return policy


def _gap(samples, policy) -> float:
    """Mean |engine - learner| log-prob over the samples' tokens (the learner scoring them now)."""
    learner = policy.logprobs(
        [s.prompt_ids for s in samples], [s.response_ids for s in samples], temperature=[s.temperature for s in samples]
    )
    pairs = [
        (e, lp) for s, row in zip(samples, learner, strict=False) for e, lp in zip(s.engine_logprobs, row, strict=False)
    ]
    return sum(abs(e - lp) for e, lp in pairs) / len(pairs)


def test_the_cpu_build_has_no_sleep_mode_and_the_default_asks_none_without_a_word(code):
    """vLLM's own platform answer on its CPU build: no sleep mode; the default level then means 0 and says
    nothing (an explicit level 1 warns once: tests/test_vllm_backend_on_cpu.py)."""
    from codea1.inference.vllm_backend import sleep_mode_available

    assert sleep_mode_available() is False
    assert code.sleep_warnings == [] and code.rollout.engine.sleep_level == 0


def test_sampling_as_configured(code):
    gen = GenerationConfig(temperature=1.0, max_new_tokens=24, n=3, seed=11, stop=["\n\n"])
    groups = code.generate(PROMPTS, gen)
    assert [len(g) for g in groups] == [3, 3]
    assert all(s.text.startswith(PREFILL) for s in groups[1])  # the response prefix leads the text
    for s in (s for g in groups for s in g):
        body = s.text[len(PREFILL) :] if s in groups[1] else s.text
        assert "\n\n" not in body[:-2]  # cut at the first stop string, which the text keeps
        assert len(s.engine_logprobs) == len(s.response_ids) and s.logprobs == []
    again = code.generate(PROMPTS, gen)
    assert [[s.response_ids for s in g] for g in again] == [[s.response_ids for s in g] for g in groups]
    other = code.generate(PROMPTS, GenerationConfig(temperature=1.0, max_new_tokens=24, n=3, seed=12, stop=["\n\n"]))
    assert [[s.response_ids for s in g] for g in other] != [[s.response_ids for s in g] for g in groups]
    greedy = code.generate(PROMPTS[:1], GenerationConfig(temperature=0.0, max_new_tokens=12, n=3))
    assert len({tuple(s.response_ids) for s in greedy[0]}) == 1 and len(greedy[0]) == 3


def test_engine_logprobs_are_the_learners_in_float32(code):
    samples = [
        s for g in code.generate(PROMPTS, GenerationConfig(temperature=0.8, max_new_tokens=24, n=4, seed=3)) for s in g
    ]
    gap = _gap(samples, code)
    print(f"fp32 engine vs learner: mean |d log p| {gap:.2e} over {sum(len(s.response_ids) for s in samples)} tokens")
    assert gap < 1e-3


def test_a_grpo_update_reaches_the_engine(code):
    """The crash of the first real run: the first sync after an update. After it the engine's log-probs
    of fresh samples are the updated learner's, and the update moved them well beyond that tolerance."""
    gen = GenerationConfig(temperature=1.0, max_new_tokens=16, n=4, seed=5)
    samples = [s for g in code.generate(PROMPTS, gen) for s in g]
    metrics = code.train_step(samples, [1.0, -1.0, 0.5, -0.5] * 2)  # the learner scores the rows it trains
    assert metrics["mismatch_abs"] < 1e-3  # the engine sampled with the learner's weights
    moved = _gap(samples, code)  # the stale engine log-probs against the updated learner
    fresh = [s for g in code.generate(PROMPTS, gen) for s in g]  # syncs first
    assert code.rollout.syncs >= 1
    assert set(code.rollout.engine.transfers) == {"direct"}  # in the learner's process: no file, no copy
    after = _gap(fresh, code)
    print(f"after one update: learner moved {moved:.2e} per token; engine vs learner after the sync {after:.2e}")
    assert moved > 10 * after and after < 1e-3


OUT_OF_PROCESS = """
import os, sys, warnings
from codea1.config import config_from_dict
from codea1.inference.rollout import GenerationConfig
from codea1.inference.vllm_backend import attach_vllm
from codea1.rl.build import load_policies
sys.path.insert(0, "tests")
from test_vllm_real_engine import PROMPTS, _config, _gap

if __name__ == "__main__":  # the engine core is a spawned process: the script needs its main guard
    cfg = _config(vllm_sleep_level=0)
    policy, _ = load_policies(cfg, test=False)
    attach_vllm(cfg, [policy, None], workdir=sys.argv[1])
    assert os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] == "1"
    gen = GenerationConfig(temperature=1.0, max_new_tokens=16, n=4, seed=5)
    samples = [s for g in policy.generate(PROMPTS, gen) for s in g]
    before = _gap(samples, policy)
    policy.train_step(samples, [1.0, -1.0, 0.5, -0.5] * 2)
    moved = _gap(samples, policy)
    fresh = [s for g in policy.generate(PROMPTS, gen) for s in g]
    after = _gap(fresh, policy)
    print(f"engine in its own process: before {before:.2e}, learner moved {moved:.2e}, after the sync {after:.2e}")
    assert before < 1e-3 and after < 1e-3 and moved > 10 * after and policy.rollout.syncs >= 1
    assert set(policy.rollout.engine.transfers) == {"file"}  # CPU tensors to another process: the file
"""


def test_a_grpo_update_reaches_an_engine_in_a_process_of_its_own(tmp_path):
    """vLLM's default placement, where RPC arguments cross its message encoder (the first real run's crash:
    tensors arrived as encoded tuples): the sync after an update reaches the engine there too."""
    script = tmp_path / "out_of_process.py"
    script.write_text(OUT_OF_PROCESS)
    env = dict(os.environ, VLLM_ENABLE_V1_MULTIPROCESSING="1", PYTHONPATH=str(ROOT))
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "vllm")],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    print(*[line for line in run.stdout.splitlines() if line.startswith("engine in its own process")], sep="\n")


LORA = """
import sys
from codea1.inference.rollout import GenerationConfig
from codea1.inference.vllm_backend import attach_vllm
from codea1.rl.build import load_policies
sys.path.insert(0, "tests")
from test_vllm_real_engine import PROMPTS, _config, _gap

if __name__ == "__main__":
    cfg = _config(model={"mode": "lora"}, policy={"lora_r": 8, "lr": 2e-3}, vllm_sleep_level=0)
    policy, _ = load_policies(cfg, test=False)
    attach_vllm(cfg, [policy, None], workdir=sys.argv[1])
    gen = GenerationConfig(temperature=1.0, max_new_tokens=16, n=4, seed=5)
    ids = []
    for update in range(2):
        samples = [s for g in policy.generate(PROMPTS, gen) for s in g]
        before = _gap(samples, policy)
        policy.train_step(samples, [1.0, -1.0, 0.5, -0.5] * 2)
        moved = _gap(samples, policy)
        fresh = [s for g in policy.generate(PROMPTS, gen) for s in g]  # a new adapter first
        after = _gap(fresh, policy)
        ids.append(policy.rollout.lora_request.lora_int_id)
        print(f"LoRA update {update + 1}: before {before:.2e}, learner moved {moved:.2e}, after the sync {after:.2e}")
        assert before < 1e-3 and after < 1e-3 and moved > 10 * after, (before, moved, after)
    assert ids[0] != ids[1], ids  # the engine caches adapters by id: each update brings a new one
    dropped = policy.rollout.engine.adapter_dir(policy.rollout.adapter or "adapter", ids[0])
    assert not dropped.exists(), dropped  # the first update's adapter left with its successor
"""


def test_a_lora_update_reaches_the_engine_as_a_new_adapter(tmp_path):
    """model.mode lora: each update's adapter goes to the engine under a new id (vLLM caches adapters by
    id), the previous one is dropped, and the engine's log-probs after each sync are the learner's."""
    script = tmp_path / "lora.py"
    script.write_text(LORA)
    run = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "vllm")],
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    print(*[line for line in run.stdout.splitlines() if line.startswith("LoRA update")], sep="\n")


def test_codea1_eval_code_with_the_vllm_engine(tmp_path):
    out = tmp_path / "eval.json"
    run = subprocess.run(
        [
            *(sys.executable, "-m", "codea1", "eval", "code", "--model", "smollm2-135m", "--benchmark", "bundled"),
            *("--limit", "2", "--n", "2", "--engine", "vllm", "--dtype", "float32", "--max-new-tokens", "48"),
            *("--workers", "2", "--output", str(out)),
        ],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary, summary


def test_a_tiny_a1_run_on_the_engine_killed_and_resumed(tmp_path):
    """Both policies sample with vLLM (one engine, full weights swapped per policy), the run is killed
    with SIGKILL while the test policy learns at step 2, and resumes to the end; every step logs the
    engine's gap to the learner, which stays at float32 rounding (the syncs reached the engine).

    The model is the tiny Qwen2 of the tests with heads of 32 (2 heads, 1 KV head): vLLM's CPU attention
    takes no head smaller than 32, and the builtin tiny-random's are 16 (its numerics are what the
    sampling and learning tests of the main suite are tuned to)."""
    import torch
    from transformers import Qwen2ForCausalLM

    from codea1.models import _tiny_tokenizer, tiny_config

    tok = _tiny_tokenizer()
    cfg = tiny_config(
        len(tok),
        num_attention_heads=2,
        num_key_value_heads=1,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(0)
    model_dir = tmp_path / "tiny-head32"
    Qwen2ForCausalLM(cfg).save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    run_dir = tmp_path / "run"
    command = [
        *(sys.executable, "-m", "codea1", "train", "--config", "codea1/configs/tiny-cpu.yaml"),
        *("--run-dir", str(run_dir), "--max-steps", "3", "--no-progress", f"model.code_model={model_dir}"),
        *("rollout.backend=vllm", "rollout.vllm_dtype=float32", "rollout.vllm_enforce_eager=true"),
        *("rollout.vllm_sleep_level=0", "game.M=2", "game.N=2", "train.batch_size=2", "data.limit=4"),
        "train.checkpoint_every=1",
    ]
    env = dict(os.environ, CODEA1_DEBUG_KILL_AT="learn_test:2")
    killed = subprocess.run(command, cwd=ROOT, env=env, check=False, capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr[-3000:]
    env.pop("CODEA1_DEBUG_KILL_AT")
    resumed = subprocess.run(
        [sys.executable, "-m", "codea1", "train", "--resume", str(run_dir), "--no-progress"],
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    gaps = [r[k] for r in rows for k in ("code_mismatch_abs", "test_mismatch_abs") if k in r]
    print(f"engine vs learner per step (code, test): {gaps}")
    assert len(gaps) >= 4 and max(gaps) < 1e-3


GAPS = ("code_mismatch_abs", "test_mismatch_abs")


def _tiny_preset_on_the_engine(run_dir: Path, steps: int, *overrides: str) -> list[dict]:
    """`codea1 train --config tiny-cpu model.code_model=tiny-random-h32 rollout.backend=vllm` as a user runs
    it, with `overrides`; the metrics rows of the finished run."""
    done = subprocess.run(
        [sys.executable, "-m", "codea1", "train", "--config", "tiny-cpu", "--no-progress"]
        + ["--run-dir", str(run_dir), "--max-steps", str(steps), "model.code_model=tiny-random-h32"]
        + ["rollout.backend=vllm", "rollout.vllm_sleep_level=0", *overrides],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_the_tiny_preset_trains_on_the_cpu_engine_as_a_user_runs_it(tmp_path):
    """`codea1 train --config tiny-cpu model.code_model=tiny-random-h32 rollout.backend=vllm` as the training
    page gives it, with the preset's own batch: the CPU defaults (the learner's float32, eager) need no
    flag, and a batch whose prompts exceed the engine's token budget no longer dies in vLLM's CPU build
    ("CPU Generator does not use offset" after a chunked prefill of a seeded request). The builtin
    tiny-random itself is refused before any model loads, in one sentence."""
    run_dir = tmp_path / "run"
    base = [sys.executable, "-m", "codea1", "train", "--config", "tiny-cpu", "--no-progress"]
    refused = subprocess.run(
        [*base, "--run-dir", str(tmp_path / "refused"), "--max-steps", "1", "rollout.backend=vllm"],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "tiny-random-h32" in refused.stderr and "Traceback" not in refused.stderr
    rows = _tiny_preset_on_the_engine(run_dir, 2)
    gaps = [r[k] for r in rows for k in GAPS if k in r]
    assert [r["step"] for r in rows] == [1, 2] and gaps and max(gaps) < 1e-4


def test_one_step_off_samples_on_the_engine_one_update_behind(tmp_path):
    """train.one_step_off with rollout.backend vllm, the tiny preset as a user runs it: the engine samples
    step t+1 in the background from a snapshot of the weights after update t-1 while step t learns (one
    engine for both roles, each role's snapshot loaded before it samples); the lag is 0 at step 1, then
    exactly one update, and on-policy step 1's engine/learner gap is that of a synchronous run."""
    rows = _tiny_preset_on_the_engine(tmp_path / "run", 3, "train.one_step_off=true")
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["rollout_lag"] for r in rows] == [0.0, 1.0, 1.0]
    first = [rows[0][k] for k in GAPS if k in rows[0]]
    later = [r[k] for r in rows[1:] for k in GAPS if k in r]
    print(f"engine vs learner: step 1 {first}, steps 2-3 {later}")
    assert first and max(first) < 1e-4  # on-policy: the engine's log-probs are the learner's
    assert later and max(later) > max(first)  # one update behind: the learner has moved on
