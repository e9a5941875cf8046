"""Data-parallel learners on CPU (gloo), in both layouts of codea1.rl.distributed: 2 ranks, each doing
half of the forward and backward work of an update, give the loss, grad norm and updated weights of 1
rank doing all of it; sharded (FSDP2), each rank holds half of the weights and optimiser state, rank 0's
replica samples as 1 rank does, and checkpoints move between 1 and 2 ranks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "dp_worker.py"

pytestmark = pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")


def _run(tmp_path: Path, world: int, *flags: str, name: str = "") -> list[dict]:
    tag = name or f"world{world}"
    out, init = tmp_path / f"{tag}.pt", tmp_path / f"init-{tag}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(out), str(rank), str(world), str(init), *flags],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(world)
    ]
    for p in procs:
        text, _ = p.communicate(timeout=300)
        assert p.returncode == 0, text[-3000:]
    return [torch.load(f"{out}.{rank}", weights_only=False) for rank in range(world)]


def _same_update(one: dict, two: dict, rel: float = 1e-5) -> None:
    for a, b in zip(one["metrics"], two["metrics"], strict=False):
        for key in ("loss", "pg_loss", "kl", "grad_norm", "entropy", "clipfrac", "num_samples"):
            assert a[key] == pytest.approx(b[key], rel=rel, abs=1e-7), key
    _same_weights(one["state"], two["state"], rel)


def _same_weights(a: dict, b: dict, rel: float = 1e-5) -> None:
    assert set(a) == set(b)
    for name, weight in a.items():
        assert torch.allclose(weight, b[name], atol=0.1 * rel, rtol=rel), name


def test_two_ranks_give_the_update_of_one(tmp_path: Path) -> None:
    [one], (two, other) = _run(tmp_path, 1), _run(tmp_path, 2)
    # the work was split: each rank computed about half of the rows, together all of them
    assert two["rows"] + other["rows"] == one["rows"] and 0 < two["rows"] < one["rows"]
    for name, weight in two["state"].items():  # the replicas stay equal
        assert torch.equal(weight, other["state"][name]), name
    _same_update(one, two)
    assert one["metrics"][1]["ppo_kl"] != 0.0  # the second update saw the first one's weights


def test_two_sharded_ranks_give_the_update_of_one_holding_half_each(tmp_path: Path) -> None:
    [one] = _run(tmp_path, 1, "--kl", "0.05")
    two, other = _run(tmp_path, 2, "--fsdp", "--kl", "0.05")
    # each rank computed its share (plus a zero-weighted pass where it had fewer micro-batches than the other)
    assert two["rows"] + other["rows"] >= one["rows"] and two["rows"] < one["rows"] and other["rows"] < one["rows"]
    _same_update(one, two)  # rank 0's replica holds the updated weights
    assert one["metrics"][1]["kl"] > 0  # the (sharded) reference took part
    for rank in (two, other):  # each rank holds half of the weights and of the AdamW state
        for what in ("weights", "optimizer"):
            assert rank["held"][what] == pytest.approx(one["held"][what] / 2, rel=0.02), what
    assert two["sample"] == one["sample"]  # the replica samples as the one-rank policy does


def test_two_sharded_ranks_under_bf16_autocast_give_the_update_of_one(tmp_path: Path) -> None:
    """The GPU presets train in bf16 autocast over fp32 master weights: FSDP gathers the fp32 shards and
    autocast computes in bf16 as on one rank. Each rank's micro-batches hold other rows (padded to other
    lengths), which moves bf16 results in their last bits: within bf16's rounding, as replicated ranks."""
    [one] = _run(tmp_path, 1, "--kl", "0.05", "--dtype", "bfloat16")
    sharded, _ = _run(tmp_path, 2, "--fsdp", "--kl", "0.05", "--dtype", "bfloat16")
    replicated, _ = _run(tmp_path, 2, "--kl", "0.05", "--dtype", "bfloat16", name="bf16-replicated")
    _same_update(one, sharded, rel=2e-3)
    _same_update(one, replicated, rel=2e-3)
    assert one["gathered"] == sharded["gathered"] == ["torch.float32"]


def test_half_gathers_move_bf16_and_keep_the_update(tmp_path: Path) -> None:
    """placement.fsdp_half_gathers: the blocks are gathered in bf16 (half the bytes), the shards and AdamW
    stay float32. The passes then compute with bf16-rounded norms and embeddings too, where autocast keeps
    fp32 ones, so numbers move by more than bf16's last bits (losses 1-3% here, and AdamW's sign-like
    steps flip where a gradient is near zero); the update must still point where one rank's does."""
    from codea1.models import load_model_and_tokenizer

    [one] = _run(tmp_path, 1, "--kl", "0.05", "--dtype", "bfloat16")
    half, _ = _run(tmp_path, 2, "--fsdp", "--half-gathers", "--kl", "0.05", "--dtype", "bfloat16", name="half")
    assert half["gathered"] == ["torch.bfloat16"] and half["shards"] == ["torch.float32"]
    start, _ = load_model_and_tokenizer("tiny-random")
    before = start.state_dict()
    a = torch.cat([(one["state"][k] - before[k]).flatten() for k in sorted(before)])
    b = torch.cat([(half["state"][k] - before[k]).flatten() for k in sorted(before)])
    cosine = float(torch.nn.functional.cosine_similarity(a, b, dim=0))
    assert cosine > 0.9, cosine
    for x, y in zip(one["metrics"], half["metrics"], strict=True):
        assert x["loss"] == pytest.approx(y["loss"], rel=0.1)


def test_a_checkpoint_moves_between_one_rank_and_two_sharded_ranks(tmp_path: Path) -> None:
    d1, d2 = tmp_path / "ckpt1", tmp_path / "ckpt2"
    _run(tmp_path, 1, "--save", str(d1), name="save1")
    _run(tmp_path, 2, "--fsdp", "--save", str(d2), name="save2")
    # the same files, whatever the layout that wrote them
    assert sorted(p.name for p in d1.iterdir()) == sorted(p.name for p in d2.iterdir())
    opt1, opt2 = torch.load(d1 / "optimizer.pt"), torch.load(d2 / "optimizer.pt")
    assert opt1["param_groups"] == opt2["param_groups"] and set(opt1["state"]) == set(opt2["state"])
    for i, state in opt1["state"].items():
        for key, value in state.items():
            assert torch.allclose(value, opt2["state"][i][key], atol=1e-7, rtol=1e-5), (i, key)
    # each checkpoint goes on alike on 1 rank and on 2 sharded ranks (the two checkpoints differ by float
    # rounding only; k_proj's bias, whose gradient is zero but for rounding, lets AdamW amplify that, so
    # runs are compared from the same checkpoint)
    for ckpt in (d1, d2):
        [on_one] = _run(tmp_path, 1, "--load", str(ckpt), name=f"{ckpt.name}-on1")
        # rank 0 alone reads the weights and the AdamW state; the other rank takes its shards from its
        # broadcast (dp_worker --rank0-reads makes a read on rank 1 fail)
        on_two, _ = _run(tmp_path, 2, "--fsdp", "--rank0-reads", "--load", str(ckpt), name=f"{ckpt.name}-on2")
        _same_update(on_one, on_two)
        assert on_one["metrics"][0]["ppo_kl"] != 0.0  # it went on from the checkpoint's weights


def test_ranks_but_0_build_no_weights_and_take_rank_0_s(tmp_path: Path) -> None:
    """Every rank built the full fp32 model (and its reference) before sharding it: ~104 GB per GPU at 7B.
    With from_rank0, rank 1 builds the model on the meta device (dp_worker asserts it) and takes its shards,
    the reference's and the rotary buffers from rank 0; its replica samples what rank 0's does, and the
    update equals one rank's."""
    [one] = _run(tmp_path, 1, "--kl", "0.05", name="one")
    two, other = _run(tmp_path, 2, "--fsdp", "--from-rank0", "--kl", "0.05", name="meta")
    _same_update(one, two)  # rank 0's replica holds the updated weights
    assert one["metrics"][1]["kl"] > 0  # the reference, broadcast too, took part
    # both ranks trained on the samples their replicas drew (rank 1's from the broadcast weights): a replica
    # that sampled otherwise would have changed the update
    assert two["sample"] == one["sample"] and other["rows"] > 0


def test_ranks_wait_for_a_slow_checkpoint_read_outside_the_collective_timeout(tmp_path: Path) -> None:
    """Rank 0 reads a sharded policy's checkpoint alone; the other ranks used to wait for it inside a
    collective, so a read longer than the process group's timeout (NCCL's watchdog: a 7B checkpoint on
    storage under ~150 MB/s) ended the run. Here the group's timeout is 3 s and rank 0's read takes 8 s more."""
    ckpt = tmp_path / "ckpt"
    _run(tmp_path, 1, "--save", str(ckpt), name="save")
    [on_one] = _run(tmp_path, 1, "--load", str(ckpt), name="on1")
    flags = ("--fsdp", "--load", str(ckpt), "--timeout", "3", "--slow-read", "8")
    on_two, _ = _run(tmp_path, 2, *flags, name="slow")
    _same_update(on_one, on_two)


def test_a_shard_takes_every_world_size_th_sample() -> None:
    from codea1.rl.distributed import DataParallel

    assert DataParallel(0, 2).shard(range(5)) == [0, 2, 4] and DataParallel(1, 2).shard(range(5)) == [1, 3]
    assert DataParallel(2, 3).shard(range(2)) == []  # a rank with nothing to do still joins the reduction
    with pytest.raises(ValueError):
        DataParallel(2, 2)


def test_optimizer_state_names_and_numbers_round_trip() -> None:
    from codea1.rl.distributed import optimizer_state_by_index, optimizer_state_by_name

    names = ["a.weight", "b.weight", "b.bias"]
    by_name = {
        "state": {"b.weight": {"step": 1}, "a.weight": {"step": 2}},
        "param_groups": [{"lr": 0.1, "params": ["a.weight", "b.weight", "b.bias"]}],
    }
    by_index = optimizer_state_by_index(by_name, names)
    assert by_index == {"state": {1: {"step": 1}, 0: {"step": 2}}, "param_groups": [{"lr": 0.1, "params": [0, 1, 2]}]}
    assert optimizer_state_by_name(by_index, names) == by_name


def test_a_lora_policy_is_not_sharded() -> None:
    from codea1.errors import UserError
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.distributed import DataParallel
    from codea1.rl.policy import Policy, PolicyConfig

    model, tok = load_model_and_tokenizer("tiny-random")
    policy = Policy(model, tok, PolicyConfig(lora=True, lora_targets=["q_proj"]))
    with pytest.raises(UserError, match="full fine-tuning"):
        policy.shard(DataParallel(0, 2))


_FIRST_WORLD = """
import sys, tempfile, torch
from codea1.rl.distributed import join
from codea1.inference.vllm_backend import engine_process_env
from types import SimpleNamespace
colocated = SimpleNamespace(vllm_sleep_level=1, vllm_gpu_memory_utilization=0.5)
print("alone:", engine_process_env(colocated))
path = tempfile.mktemp()
torch.distributed.init_process_group("gloo", init_method=f"file://{path}", rank=0, world_size=1)  # an engine's
try:
    dp = join(f"file://{path}x", 0, 2)
    print("joined silently:", dp.world_size, torch.distributed.get_world_size())
except RuntimeError as exc:
    print("refused:", exc)
"""


def test_a_group_made_before_the_learners_is_refused_not_joined() -> None:
    """An in-process engine that set torch.distributed up for itself (a world of 1) made join() skip the
    learners' group: 2 ranks trained 2 separate models without a word. Now join refuses that world."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _FIRST_WORLD], check=False, capture_output=True, text=True, timeout=120)
    assert "refused: torch.distributed is already set up in this process as rank 0 of 1" in out.stdout, (
        out.stdout + out.stderr
    )
    assert "alone: {'VLLM_ENABLE_V1_MULTIPROCESSING': '0'}" in out.stdout  # a colocated engine, no group: in process


def test_an_engine_beside_a_data_parallel_rank_runs_in_its_own_process(tmp_path) -> None:
    import subprocess
    import sys

    script = """
import torch, sys
from types import SimpleNamespace
from codea1.rl.distributed import join
from codea1.inference.vllm_backend import engine_process_env
rank = int(sys.argv[1])
join(sys.argv[2], rank, 2)
print(engine_process_env(SimpleNamespace(vllm_sleep_level=1, vllm_gpu_memory_utilization=0.5)))
"""
    init = f"file://{tmp_path / 'rendezvous'}"
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(r), init], stdout=subprocess.PIPE, text=True)
        for r in (0, 1)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all("'VLLM_ENABLE_V1_MULTIPROCESSING': '1'" in o for o in outs), outs


_SCORE_SHARDED = """
import sys, torch
from codea1.models import load_model_and_tokenizer
from codea1.rl.distributed import join
from codea1.rl.policy import Policy, PolicyConfig
rank, init = int(sys.argv[1]), sys.argv[2]
torch.set_num_threads(1)
torch.manual_seed(0)
model, tok = load_model_and_tokenizer("tiny-random")
policy = Policy(model, tok, PolicyConfig(micro_batch_tokens=24, kl_coef=0.0))
policy.shard(join(init, rank, 2, backend="gloo"))
rows = 1 if rank == 0 else 7  # rank 1 scores seven rows in several passes, rank 0 one row in one
prompts = [[5, 6, 7, 8] for _ in range(rows)]
responses = [[9, 10, 11, 12, 13][: 2 + i % 3] for i in range(rows)]
got = policy.logprobs(prompts, responses)
want = policy._logprobs_of(policy.replica, prompts, responses)  # the full weights, unsharded
print("max diff", max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g, w)))
"""


def test_sharded_ranks_scoring_different_rows_run_as_many_passes(tmp_path) -> None:
    """With FSDP2 every pass gathers the blocks on all ranks: a rank scoring more rows (a vLLM engine's
    share) ran more passes than the others, and the group hung. Now every rank runs as many passes."""
    import subprocess
    import sys

    init = f"file://{tmp_path / 'rendezvous'}"
    procs = [
        subprocess.Popen([sys.executable, "-c", _SCORE_SHARDED, str(r), init], stdout=subprocess.PIPE, text=True)
        for r in (0, 1)
    ]
    try:
        outs = [p.communicate(timeout=120)[0] for p in procs]
    finally:
        for p in procs:
            p.kill()
    diffs = [float(o.split("max diff")[1]) for o in outs]
    assert max(diffs) < 1e-5, outs
