"""A policy larger than one node (`placement.span_nodes`): on a local Ray cluster of two "nodes" (two raylets
on this machine, one CPU each, as Ray's own multi-node tests build them), a policy of two ranks of one CPU
cannot be placed on one node, and with span_nodes its ranks land on both nodes and sample and train as one
torch.distributed group over the network between them. Skipped where Ray is not installed."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
# a Ray cluster of its own beside the other Ray tests' sessions: run alone, after the parallel part
pytestmark = pytest.mark.serial

from ray.cluster_utils import Cluster

from codea1.config import load_config
from codea1.errors import UserError
from codea1.train.loop import method_policies

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"


@pytest.fixture(scope="module")
def two_nodes():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    cluster.wait_for_nodes()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _policy(*extra: str):
    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml",
        ["method=golden", "placement.backend=ray", "placement.learner_ranks=2", "placement.place_timeout=5", *extra],
    )
    return method_policies(cfg)[0]


def test_a_policy_larger_than_a_node_spans_nodes_and_trains_as_one(two_nodes) -> None:
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    with pytest.raises(UserError, match="on one node.*placement.span_nodes"):
        _policy()
    code = _policy("placement.span_nodes=true")
    placed = ray.util.placement_group_table(code.reservation.group)
    assert placed["strategy"] == "PACK" and len(set(placed["bundles_to_node_id"].values())) == 2
    [group] = code.generate([[{"role": "user", "content": "Count to 3."}]])
    metrics = code.train_step(group, [1.0] + [0.0] * (len(group) - 1))
    assert metrics and not any(math.isnan(v) for v in metrics.values() if isinstance(v, float))
    # the two ranks, one per node, hold the same weights after the update (their gradients were summed),
    # and the update moved them
    before = code.info(0)["weights_sum"]["code"]
    code.train_step(group, [0.0] * (len(group) - 1) + [1.0])
    sums = [code.info(r)["weights_sum"]["code"] for r in (0, 1)]
    assert sums[0] == pytest.approx(sums[1], rel=1e-9) and sums[0] != before
    code.close()


def test_span_nodes_needs_the_ray_backend() -> None:
    with pytest.raises(UserError, match="placement.span_nodes.*placement.backend ray"):
        load_config(CONFIGS / "tiny-cpu.yaml", ["placement.span_nodes=true"])
