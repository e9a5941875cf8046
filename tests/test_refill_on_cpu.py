"""Dynamic sampling (train.refill_rounds): questions whose M codes all got one reward are sampled again."""

from __future__ import annotations

from pathlib import Path

import pytest
from train_scripted import scripted_factory

from codea1.config import load_config
from codea1.data import load_problems
from codea1.train.loop import train
from codea1.train.metrics import read_metrics

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
SMALL = ["game.M=2", "game.N=2", "train.batch_size=4", "data.limit=8", "train.progress=false"]


@pytest.mark.parametrize("method", ["a1", "golden"])
def test_refill_recovers_groups_with_equal_rewards(tmp_path, method) -> None:
    rows = {}
    for rounds in (0, 2):
        cfg = load_config(CONFIGS / "tiny-cpu.yaml", [*SMALL, f"method={method}", f"train.refill_rounds={rounds}"])
        problems = load_problems(cfg.data.train)
        train(cfg, tmp_path / f"{method}-{rounds}", max_steps=3, policy_factory=scripted_factory(problems))
        rows[rounds] = read_metrics(tmp_path / f"{method}-{rounds}" / "metrics.jsonl")
    off, on = rows[0], rows[2]
    assert "refill_equal_groups" not in off[0]  # off: the step is what it was
    equal = sum(r["refill_equal_groups"] for r in on)
    recovered = sum(r["refill_recovered"] for r in on)
    assert equal > 0 and 0 < recovered <= equal
    # the groups trained on: those still equal after the refill, step by step
    for r in on:
        assert r["code_zero_var_groups"] * 4 == pytest.approx(r["refill_equal_groups"] - r["refill_recovered"])
    # step 1 samples what the run without refill sampled, before refilling
    assert on[0]["refill_equal_groups"] == pytest.approx(off[0]["code_zero_var_groups"] * 4)
