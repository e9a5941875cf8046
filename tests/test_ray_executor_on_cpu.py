"""The Ray execution backend gives the local Executor's results, and loses nothing when an actor dies
mid-batch. Skipped where Ray is not installed (it is an optional extra)."""

from __future__ import annotations

import warnings

import pytest

ray = pytest.importorskip("ray")

from codea1.cluster.sandbox_pools import RayExecutor
from codea1.judge.calls import run_expecting
from codea1.sandbox import Job, LocalExecutor

UID_BASE = 1_700_700_000


def corpus() -> tuple[list[Job], list]:
    """Honest, failing, erroring, timing-out, undefined and crashing jobs, with their expected values."""
    add = "def add(a, b):\n    return a + b\n"
    cases = [
        (Job("honest", add, ["add(1, 2)", "add('a', 'b')", "add([1], [2])"]), [3, "ab", [1, 2]]),
        (Job("failing", "def add(a, b):\n    return a - b\n", ["add(1, 2)", "add(2, 0)"]), [3, 2]),
        (Job("erroring", "def f(x):\n    return 1 // x\n", ["f(1)", "f(0)", "f(2)"]), [1, 0, 0]),
        (
            Job("timing-out", "def spin():\n    while True:\n        pass\n", ["spin()", "1 + 1"], timeout=0.5),
            [None, 2],
        ),
        (Job("undefined", "def broken(:\n    pass\n", ["broken()"]), [None]),
        (Job("raises-at-define", "raise ValueError('no')\n", ["1"]), [1]),
        (Job("crash", "import os\ndef die():\n    os._exit(3)\n", ["die()", "2 * 3"]), [None, 6]),
        (Job("values", "def g():\n    return {'a': (1, 2.5), 'b': None}\n", ["g()"]), None),
    ]
    cases += [(Job(f"many-{i}", add, [f"add({i}, {i})"]), [2 * i if i % 3 else -1]) for i in range(12)]
    return [job for job, _ in cases], [exp for _, exp in cases]


def outcome(res) -> tuple:
    return (res.id, res.defined, res.error, [(c.status, c.value, c.error) for c in res.results])


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    yield
    ray.shutdown()


def ray_executor(uid_base: int, **kwargs) -> RayExecutor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return RayExecutor(workers=1, uid_base=uid_base, **kwargs)


def test_ray_matches_local(ray_session):
    jobs, values = corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(2, uid_base=UID_BASE) as local:
            expected = [outcome(r) for r in run_expecting(local, jobs, values)]
    seen = []
    with ray_executor(UID_BASE + 100, actors_per_node=2, chunk_size=3) as ex:
        assert len(ex.actors()) == 2
        got = [outcome(r) for r in run_expecting(ex, jobs, values, progress=lambda d, t: seen.append((d, t)))]
        # a second batch on the same pools
        again = [outcome(r) for r in run_expecting(ex, jobs[:5], values[:5])]
    assert got == expected
    assert again == expected[:5]
    statuses = {c[0] for row in got for c in row[3]}
    assert {"pass", "fail", "error", "timeout", "crash"} <= statuses
    assert seen[-1] == (len(jobs), len(jobs))
    assert ex.stats["actors_lost"] == 0 and ex.stats["requeued_jobs"] == 0

    # mutation scoring runs its programs one after another on one slot: through Ray, on one actor
    from codea1.eval.mutation import score_mutants

    gt = "def sign(x):\n    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n"
    calls = ["sign(5)", "sign(-2)", "sign(0)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with LocalExecutor(1, uid_base=UID_BASE + 200) as local:
            want = score_mutants(gt, calls, local)
    with ray_executor(UID_BASE + 300, actors_per_node=2) as ex:
        got_report = score_mutants(gt, calls, ex)
    assert (got_report.total, got_report.killed) == (want.total, want.killed) and want.killed > 0


def test_killing_an_actor_mid_batch_loses_nothing(ray_session):
    # one-job chunks, two in flight per one-slot pool, each job sleeping in the sandbox: when the first
    # chunk comes back, the other pool still has a chunk waiting behind its running one, so killing it
    # loses work in flight
    jobs = [
        Job(
            f"j{i}",
            "import time\ndef f(x):\n    time.sleep(0.3)\n    return x * x\n",
            [f"f({i})"],
        )
        for i in range(14)
    ]
    values = [[i * i if i % 5 else 0] for i in range(14)]
    killed = []
    with ray_executor(UID_BASE + 200, actors_per_node=2, chunk_size=1, max_in_flight=2) as ex:
        seen = []

        def progress(done: int, total: int) -> None:
            seen.append(done)
            if not killed:  # the first finished chunk: kill the actor that has the most work in flight
                victim = ex.busiest_actor()
                killed.append(victim)
                ray.kill(victim)

        results = run_expecting(ex, jobs, values, progress=progress)
        assert killed and ex.stats["actors_lost"] == 1
        assert ex.stats["requeued_jobs"] >= 1  # its in-flight chunks ran again elsewhere
        assert len(ex.actors()) == 1
        assert seen == sorted(seen) and seen[-1] == len(jobs)  # each job counted once
        # the next batch replaces the lost pool
        ex.run(jobs[:2])
        assert len(ex.actors()) == 2
    assert [r.id for r in results] == [j.id for j in jobs]
    assert [[c.status for c in r.results] for r in results] == [
        ["pass" if i % 5 else ("pass" if i == 0 else "fail")] for i in range(14)
    ]
    assert [r.results[0].value for r in results] == [i * i for i in range(14)]


def test_make_executor_builds_the_ray_backend_from_config(ray_session):
    from codea1.config import config_from_dict
    from codea1.train.loop import make_executor

    cfg = config_from_dict(
        {
            "executor": {"backend": "ray", "workers": 1, "uid_base": UID_BASE + 300},
            "ray": {"sandbox_chunks_in_flight": 3},
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ex = make_executor(cfg)
    with ex:
        assert isinstance(ex, RayExecutor) and ex.max_in_flight == 3 and ex.workers == 1
        [res] = run_expecting(ex, [Job("a", "def f(x):\n    return x + 1\n", ["f(1)"])], [[2]])
        assert res.results[0].status == "pass"
