"""Policies hosted in Ray actors (`placement.backend: ray`) train as the same run in one process does, and
a lost actor ends the run with an error that says how to go on. Skipped where Ray is not installed (it is
an optional extra)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
from train_scripted import scripted_factory

ray = pytest.importorskip("ray")

from codea1.cluster.policies import RemotePolicy, actor_groups
from codea1.config import load_config
from codea1.train.loop import method_policies, train
from codea1.train.metrics import read_metrics

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
UID_BASE = 1_701_000_000
SMALL = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=4",
    "train.checkpoint_every=1",
    "train.progress=false",
    "generation.code.max_new_tokens=24",
    "generation.test.max_new_tokens=24",
]
# what depends on the machine's speed, not on what was sampled and learned
TIMING = ("time_", "_tokens_per_s", "outside_model_frac")


@pytest.fixture(scope="module")
def ray_session():
    # four logical CPUs: two policy actors (one each) and a sandbox pool (none) fit on this 2-core machine
    ray.init(num_cpus=4, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


def _train(tmp: Path, name: str, extra: list[str], steps: int, resume: bool = False) -> list[dict]:
    """Real tiny-random policies (in this process or in actors) whose sampled texts are replaced by script
    (tests/train_scripted.py), so that rewards, advantages and updates are not all zero."""
    from codea1.data import load_problems

    cfg = load_config(CONFIGS / "tiny-cpu.yaml", SMALL + extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        train(
            cfg,
            tmp / name,
            max_steps=steps,
            resume=resume,
            policy_factory=scripted_factory(load_problems(cfg.data.train)),
        )
    return read_metrics(tmp / name / "metrics.jsonl")


def _same(local: list[dict], remote: list[dict]) -> None:
    assert [r["step"] for r in local] == [r["step"] for r in remote]
    for a, b in zip(local, remote, strict=False):
        keys = {k for k in a if not any(t in k for t in TIMING)}
        assert keys == {k for k in b if not any(t in k for t in TIMING)}
        for k in sorted(keys):
            if isinstance(a[k], float):
                assert math.isclose(a[k], b[k], rel_tol=1e-6, abs_tol=1e-9), (a["step"], k, a[k], b[k])
            else:
                assert a[k] == b[k], (a["step"], k)


def test_actor_groups() -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml")
    assert actor_groups(cfg, test=True) == [("code",), ("test",)]
    assert actor_groups(cfg, test=False) == [("code",)]
    dual = load_config(CONFIGS / "tiny-cpu.yaml", ["model.mode=dual-lora"])
    assert actor_groups(dual, test=True) == [("code", "test")]


def test_ray_hosted_a1_run_matches_the_single_process_run(ray_session, tmp_path: Path) -> None:
    local = _train(tmp_path, "local", [f"executor.uid_base={UID_BASE}"], steps=2)
    remote = _train(
        tmp_path,
        "ray",
        [f"executor.uid_base={UID_BASE + 100}", "executor.backend=ray", "placement.backend=ray"],
        steps=2,
    )
    # the game had something to learn from: rewards that differ within groups, so updates that move
    assert any(r["code_reward"] > 0 for r in local) and any(r["code_loss"] != 0.0 for r in local)
    assert any(r["test_loss"] != 0.0 for r in local)
    _same(local, remote)
    # the actors wrote their checkpoints; resuming restarts them from step 2 and continues as one process does
    assert (tmp_path / "ray" / "checkpoints" / "step_000002" / "code_policy").is_dir()
    assert (tmp_path / "ray" / "checkpoints" / "step_000002" / "test_policy").is_dir()
    local = _train(tmp_path, "local", [f"executor.uid_base={UID_BASE}"], steps=3, resume=True)
    remote = _train(
        tmp_path,
        "ray",
        [f"executor.uid_base={UID_BASE + 100}", "executor.backend=ray", "placement.backend=ray"],
        steps=3,
        resume=True,
    )
    _same(local, remote)


def test_dual_lora_golden_and_selfplay_place_one_actor(ray_session) -> None:
    for overrides, separate in (
        (["model.mode=dual-lora"], True),
        (["method=golden", "train.torch_threads=null", "placement.cpus_per_policy=1"], False),
        (["method=selfplay"], False),
    ):
        cfg = load_config(CONFIGS / "tiny-cpu.yaml", [*overrides, "placement.backend=ray"])
        code, test = method_policies(cfg)
        assert isinstance(code, RemotePolicy)
        if separate:
            assert isinstance(test, RemotePolicy) and test.handle is code.handle and test.role == "test"
        else:
            assert test is None or test is code
        info = code.info()
        assert info["roles"] == (["code", "test"] if separate else ["code"])
        # unset, an actor's torch threads are its CPU reservation, not every core of the node
        assert info["torch_threads"] == (1 if "train.torch_threads=null" in overrides else cfg.train.torch_threads)
        ray.kill(code.handle)


def test_a_lost_policy_actor_is_reported(ray_session) -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["method=golden", "placement.backend=ray"])
    code, _ = method_policies(cfg)
    ray.kill(code.handle)
    with pytest.raises(RuntimeError, match="Code LLM was lost.*--resume"):
        code.generate([[{"role": "user", "content": "hi"}]])


def test_a_policy_error_arrives_as_itself(ray_session) -> None:
    cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["method=golden", "placement.backend=ray"])
    code, _ = method_policies(cfg)
    with pytest.raises(ValueError):  # samples and advantages of different lengths: the Policy's own check
        code.train_step([], [1.0])
    ray.kill(code.handle)


def _data_parallel_base() -> list[str]:
    return [
        f"executor.uid_base={UID_BASE + 400}",
        "placement.backend=ray",
        "policy.mini_batches=2",
        "generation.code.rows_per_call=2",  # calls of several chunks: the ranks sample a share each
        "generation.test.rows_per_call=2",
    ]


def test_two_sharded_ranks_per_policy_train_as_one(ray_session, tmp_path: Path) -> None:
    """placement.learner_ranks=2 with placement.fsdp: each policy is two actors in one gloo group, each
    sampling its share of every generate call and holding half of each policy (FSDP2); the run's metrics
    are those of one rank per policy, and a checkpoint written by the two sharded ranks resumes on one."""
    base = _data_parallel_base()
    one = _train(tmp_path, "one", base, steps=2)
    assert any(r["code_loss"] != 0.0 for r in one) and any(r["test_loss"] != 0.0 for r in one)
    sharded = _train(tmp_path, "fsdp", [*base, "placement.learner_ranks=2", "placement.fsdp=true"], steps=2)
    _same_within(one, sharded, rel=1e-4)
    more = _train(tmp_path, "one", base, steps=3, resume=True)
    unsharded = _train(tmp_path, "fsdp", base, steps=3, resume=True)  # written by 2 sharded ranks, on 1
    _same_within(more, unsharded, rel=1e-4)


@pytest.mark.slow  # the replicated layout's update is also checked without Ray, test_data_parallel_on_cpu
def test_two_replicated_ranks_per_policy_train_as_one(ray_session, tmp_path: Path) -> None:
    """As above with replicated ranks (no fsdp): the same metrics, and their checkpoint resumes on one."""
    base = _data_parallel_base()
    one = _train(tmp_path, "one", base, steps=2)
    two = _train(tmp_path, "two", [*base, "placement.learner_ranks=2"], steps=2)
    _same_within(one, two, rel=1e-4)
    again = _train(tmp_path, "two", base, steps=3, resume=True)  # written by 2 ranks, resumed on 1
    more = _train(tmp_path, "one", base, steps=3, resume=True)
    _same_within(more, again, rel=1e-4)


def _same_within(a_rows: list[dict], b_rows: list[dict], rel: float) -> None:
    """As _same, with a tolerance for the order in which two ranks' gradients are summed."""
    assert [r["step"] for r in a_rows] == [r["step"] for r in b_rows]
    for a, b in zip(a_rows, b_rows, strict=False):
        for k in sorted(k for k in a if not any(t in k for t in TIMING)):
            if isinstance(a[k], float):
                assert math.isclose(a[k], b[k], rel_tol=rel, abs_tol=1e-6), (a["step"], k, a[k], b[k])
            else:
                assert a[k] == b[k], (a["step"], k)


def test_every_rank_samples_its_share_and_fsdp_shards_each_rank(ray_session) -> None:
    from codea1.inference.rollout import GenerationConfig

    def build(*extra: str):
        cfg = load_config(CONFIGS / "tiny-cpu.yaml", ["method=golden", "placement.backend=ray", *extra])
        return method_policies(cfg)[0]

    def release(policy) -> None:  # the session's 4 logical CPUs hold 4 policy actors at a time
        policy.close()

    prompts = [[{"role": "user", "content": f"Count to {k}."}] for k in range(4)]
    gen = GenerationConfig(n=2, seed=3, max_new_tokens=5, rows_per_call=2)
    one = build()
    want = [[s.response_ids for s in g] for g in one.generate(prompts, gen)]
    release(one)
    held = {}
    for layout in ("replicated", "sharded"):
        policy = build("placement.learner_ranks=2", *(["placement.fsdp=true"] if layout == "sharded" else []))
        infos = [policy.info(r) for r in (0, 1)]
        assert [i["sharded"] for i in infos] == [{"code": layout == "sharded"}] * 2
        held[layout] = [i["weights_held"]["code"] for i in infos]
        # both ranks sample, and the merged samples are one rank's
        assert [[s.response_ids for s in g] for g in policy.generate(prompts, gen)] == want
        assert [policy.info(r)["rows_sampled"] for r in (0, 1)] == [4, 4]
        release(policy)
    assert held["sharded"] == pytest.approx([held["replicated"][0] / 2] * 2, rel=0.02)  # FSDP2: half each


def test_a_lost_learner_rank_ends_the_update_with_an_error_at_once(ray_session) -> None:
    """Rank 1 of a 2-rank Code LLM is killed: the update fails with the lost-actor error saying how to go
    on, as soon as Ray knows, although rank 0 is still waiting for rank 1 in its gradient reduction."""
    import time

    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml", ["method=golden", "placement.backend=ray", "placement.learner_ranks=2"]
    )
    code, _ = method_policies(cfg)
    assert len(code.ranks) == 2
    [group] = code.generate([[{"role": "user", "content": "hi"}]])
    ray.kill(code.ranks[1])
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="Code LLM was lost.*--resume"):
        code.train_step(group, [1.0] * len(group))
    assert time.monotonic() - start < 60
    code.close()


def test_a_policy_the_cluster_cannot_hold_is_an_error_not_a_wait(ray_session) -> None:
    """Two ranks of 3 CPUs each in a cluster of 4: the run stops with a sentence within
    placement.place_timeout, where the second rank would otherwise wait for its CPUs forever."""
    from codea1.errors import UserError

    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml",
        [
            "method=golden",
            "placement.backend=ray",
            "placement.learner_ranks=2",
            "placement.cpus_per_policy=3",
            "placement.place_timeout=3",
        ],
    )
    with pytest.raises(UserError, match="could not reserve the Code LLM's 2 rank.*3 CPU each on one node"):
        method_policies(cfg)
    assert _groups() == {}  # and it reserved nothing it keeps


def test_a_policys_ranks_share_one_placement_group_that_goes_with_the_policy(ray_session) -> None:
    import gc

    cfg = load_config(
        CONFIGS / "tiny-cpu.yaml", ["method=golden", "placement.backend=ray", "placement.learner_ranks=2"]
    )
    code, _ = method_policies(cfg)
    [(strategy, bundles)] = _groups().values()
    assert strategy == "STRICT_PACK" and bundles == [{"CPU": 1.0}, {"CPU": 1.0}]
    placed = ray.util.placement_group_table(code.reservation.group)["bundles_to_node_id"]
    assert len(placed) == 2 and len(set(placed.values())) == 1  # both ranks on one node
    del code
    gc.collect()
    assert _groups() == {}  # the last handle gone: the group with it, as the actors


def _groups() -> dict:
    """The placement groups of this session that are not removed: id -> (strategy, bundles)."""
    return {
        k: (g["strategy"], list(g["bundles"].values()))
        for k, g in ray.util.placement_group_table().items()
        if g["state"] != "REMOVED"
    }
