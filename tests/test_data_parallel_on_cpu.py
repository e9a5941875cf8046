"""Data-parallel learners on CPU (gloo): 2 ranks, each doing half of the forward and backward work of an
update, give the loss, grad norm and updated weights of 1 rank doing all of it (codea1.rl.distributed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "dp_worker.py"


def _run(tmp_path: Path, world: int) -> dict:
    out, init = tmp_path / f"world{world}.pt", tmp_path / f"init{world}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(out), str(rank), str(world), str(init)],
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


@pytest.mark.skipif(not torch.distributed.is_available(), reason="torch.distributed is not available")
def test_two_ranks_give_the_update_of_one(tmp_path: Path) -> None:
    [one], (two, other) = _run(tmp_path, 1), _run(tmp_path, 2)
    # the work was split: each rank computed about half of the rows, together all of them
    assert two["rows"] + other["rows"] == one["rows"] and 0 < two["rows"] < one["rows"]
    for name, weight in two["state"].items():  # the replicas stay equal
        assert torch.equal(weight, other["state"][name]), name
    for a, b in zip(one["metrics"], two["metrics"]):
        for key in ("loss", "pg_loss", "grad_norm", "entropy", "clipfrac", "num_samples"):
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), key
    assert one["metrics"][1]["ppo_kl"] != 0.0  # the second update saw the first one's weights
    assert set(one["state"]) == set(two["state"])
    for name, weight in one["state"].items():
        assert torch.allclose(weight, two["state"][name], atol=1e-6, rtol=1e-5), name


def test_a_shard_takes_every_world_size_th_sample() -> None:
    from codea1.rl.distributed import DataParallel

    assert DataParallel(0, 2).shard(range(5)) == [0, 2, 4] and DataParallel(1, 2).shard(range(5)) == [1, 3]
    assert DataParallel(2, 3).shard(range(2)) == []  # a rank with nothing to do still joins the reduction
    with pytest.raises(ValueError):
        DataParallel(2, 2)
