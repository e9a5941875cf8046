"""Dynamic sampling as DAPO defines it (train.dynamic_sampling=dapo): groups with all-equal rewards are
dropped and new questions, from a reserve order of (seed, step), are played until each role holds its
batch's number of groups, at most train.dapo_max_draws draws.

The selection is tested on hand-made rewards (codea1.train.dynamic); the runs use the tiny-cpu preset with
scripted texts (tests/train_scripted.py), each in a forked child, as tests/test_train_resume_on_cpu.py
does (a kill with CODEA1_DEBUG_KILL_AT must not take pytest with it).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

import pytest
from train_scripted import scripted_factory

from codea1.config import load_config
from codea1.errors import UserError
from codea1.train.dynamic import dapo_metrics, has_signal, reserve_draws, reserve_order, select_groups

CONFIGS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
B, STEPS = 4, 2
RUN = [
    "game.M=2",
    "game.N=2",
    f"train.batch_size={B}",
    "data.limit=16",
    "train.checkpoint_every=1",
    "train.progress=false",
    f"train.max_steps={STEPS}",
    "train.dapo_max_draws=2",
]

# ----------------------------------------------------------------------------------------------------
# the selection, on hand-made rewards


def _script(draws: dict[int, dict[str, list[list[float]]]]):
    """A play(draw) over scripted reward groups (None past the last draw) that records the draws asked."""
    asked: list[int] = []

    def play(draw: int):
        asked.append(draw)
        return draws.get(draw)

    return play, asked


def test_select_groups_drops_equal_groups_draws_until_the_targets_and_trims_the_surplus() -> None:
    play, asked = _script(
        {
            0: {"code": [[1, 1], [0, 1], [0, 0]], "test": [[1, 0], [0.5, 0.5]]},
            1: {"code": [[0, 1], [1, 1], [0.2, 0.3]], "test": [[0, 0]]},
            2: {"code": [[1, 0]], "test": [[1, 0], [0, 1]]},
            3: {"code": [[1, 0]], "test": [[1, 0]]},
        }
    )
    picked, made = select_groups({"code": 3, "test": 2}, max_draws=5, play=play)
    assert asked == [0, 1, 2] and made == 2  # the test role's target is met only by draw 2
    code, test = picked["code"], picked["test"]
    assert code.kept == [(0, 1), (1, 0), (1, 2)] and code.trimmed == 1 and code.dropped == 3
    assert test.kept == [(0, 0), (2, 0)] and test.trimmed == 1 and test.dropped == 2
    assert code.met and test.met and code.recovered == 2 and test.recovered == 1
    metrics = dapo_metrics(picked, made)
    assert metrics["dapo_draws"] == 2 and metrics["dapo_code_groups"] == 3 and metrics["dapo_test_recovered"] == 1


def test_select_groups_stops_at_the_cap_and_when_the_reserve_runs_out() -> None:
    rows = {d: {"code": [[0, 0], [1, 0]]} for d in range(10)}
    play, asked = _script(rows)
    picked, made = select_groups({"code": 4}, max_draws=2, play=play)
    assert asked == [0, 1, 2] and made == 2  # the cap: two draws after the batch, target not met
    assert picked["code"].kept == [(0, 1), (1, 1), (2, 1)] and not picked["code"].met
    assert dapo_metrics(picked, made)["dapo_code_target_met"] == 0.0
    play, asked = _script({0: rows[0], 1: rows[1]})
    picked, made = select_groups({"code": 4}, max_draws=5, play=play)
    assert asked == [0, 1, 2] and made == 1  # draw 2 had no question left
    assert picked["code"].dropped == 2 and picked["code"].recovered == 1


def test_select_groups_draws_nothing_when_the_batch_has_its_groups() -> None:
    play, asked = _script({0: {"code": [[0, 1], [1, 0]], "test": [[0, 1]]}})
    picked, made = select_groups({"code": 2, "test": 1}, max_draws=3, play=play)
    assert asked == [0] and made == 0
    assert all(p.met and p.dropped == 0 and p.recovered == 0 and p.trimmed == 0 for p in picked.values())


def test_a_group_has_signal_only_with_two_unequal_rewards() -> None:
    assert has_signal([0.0, 0.5]) and not has_signal([0.3, 0.3, 0.3]) and not has_signal([1.0]) and not has_signal([])


def test_the_reserve_is_a_seeded_order_without_the_batch() -> None:
    ids = [f"q{i}" for i in range(11)]
    order = reserve_order(7, ids, ["q2", "q5"])
    assert sorted(order) == [i for i in range(11) if i not in (2, 5)]
    assert order == reserve_order(7, ids, ["q2", "q5"]) and order != reserve_order(8, ids, ["q2", "q5"])
    draws = reserve_draws(order, 4, 2)
    assert draws == [order[:4], order[4:8]]  # capped at two draws
    assert reserve_draws(order, 4, 9) == [order[:4], order[4:8], order[8:]]  # the last one shorter


def test_dynamic_sampling_keys_keep_old_configs_meaning() -> None:
    assert load_config(None, ["train.refill_rounds=2"]).train.dynamic_sampling == "refill"
    assert load_config(None, []).train.dynamic_sampling == "off"
    assert load_config(None, ["train.dynamic_sampling=off"]).train.dynamic_sampling == "off"  # not YAML's False
    with pytest.raises(UserError, match="refill_rounds"):
        load_config(None, ["train.dynamic_sampling=dapo", "train.refill_rounds=1"])
    with pytest.raises(UserError, match="dapo_max_draws"):
        load_config(None, ["train.dynamic_sampling=dapo", "train.dapo_max_draws=0"])


# ----------------------------------------------------------------------------------------------------
# runs


def _child(run_dir: Path, overrides: list[str], resume: bool = False, kill_at: str | None = None) -> int:
    """Trains in a forked child; returns its exit code, or -signal if it was killed."""
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            if kill_at:
                os.environ["CODEA1_DEBUG_KILL_AT"] = kill_at
            else:
                os.environ.pop("CODEA1_DEBUG_KILL_AT", None)
            from codea1.data import load_problems
            from codea1.train.loop import train

            cfg = load_config(run_dir / "config.yaml") if resume else load_config(CONFIGS / "tiny-cpu.yaml", overrides)
            factory = scripted_factory(load_problems(cfg.data.train))
            train(cfg, run_dir, resume=resume, policy_factory=factory, progress=False)
            code = 0
        except BaseException:  # noqa: BLE001  (a forked child must never return into pytest)
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    deadline = time.monotonic() + 300
    while not (done := os.waitpid(pid, os.WNOHANG))[0]:
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("training child did not finish in 300 s")
        time.sleep(0.05)
    status = done[1]
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _fingerprint(run_dir: Path) -> dict:
    """What a run computed: its metrics (time aside), its rollouts' questions and the Mistake Book."""
    from codea1.game.mistake_book import MistakeBook
    from codea1.train.metrics import read_metrics

    with MistakeBook(run_dir / "mistake_book.sqlite") as book:
        book_text, book_steps = book.show(), book.step_log()
    rows = [
        {k: v for k, v in r.items() if not k.startswith(("time_", "outside_", "code_tokens", "test_tokens"))}
        for r in read_metrics(run_dir / "metrics.jsonl")
    ]
    rollouts = {}
    for step in range(1, len(rows) + 1):
        lines = [json.loads(line) for line in (run_dir / "rollouts" / f"step_{step}.jsonl").read_text().splitlines()]
        rollouts[step] = [(line["question_id"], line.get("dapo_draw")) for line in lines]
    return {"metrics": rows, "rollouts": rollouts, "book": book_text, "book_steps": book_steps}


@pytest.fixture(scope="module")
def dapo_run(tmp_path_factory) -> dict:
    run_dir = tmp_path_factory.mktemp("dapo") / "run"
    assert _child(run_dir, [*RUN, "train.dynamic_sampling=dapo"]) == 0
    return _fingerprint(run_dir)


def test_dapo_trains_on_full_groups_from_draws_outside_the_batch(dapo_run: dict) -> None:
    rows, rollouts = dapo_run["metrics"], dapo_run["rollouts"]
    assert [r["step"] for r in rows] == list(range(1, STEPS + 1))
    assert sum(r["dapo_draws"] for r in rows) > 0 and sum(r["dapo_code_recovered"] for r in rows) > 0
    for r in rows:
        batch = [qid for qid, draw in rollouts[r["step"]] if draw is None]
        drawn = [qid for qid, draw in rollouts[r["step"]] if draw is not None]
        assert batch == r["question_ids"] and not set(drawn) & set(batch) and len(set(drawn)) == len(drawn)
        assert len(drawn) == B * r["dapo_draws"]
        for role in ("code", "test"):  # targets: B questions' code groups; topvar_ell 1: B suite groups
            groups, met = r[f"dapo_{role}_groups"], r[f"dapo_{role}_target_met"]
            assert groups <= B and (groups == B) == bool(met)
            assert met or r["dapo_draws"] == 2  # short only at the cap
        assert r["code_num_samples"] == 2 * r["dapo_code_groups"] and r["test_num_samples"] == 2 * r["dapo_test_groups"]
    # the drawn questions' results reach the Mistake Book, in the step's one update of every question played
    book_steps = dapo_run["book_steps"]
    assert [s["questions"] for s in book_steps] == [len(rollouts[s["step"]]) for s in book_steps]
    assert book_steps[-1]["size"] > 0


def test_two_runs_with_one_seed_draw_the_same_questions(dapo_run: dict, tmp_path: Path) -> None:
    assert _child(tmp_path / "again", [*RUN, "train.dynamic_sampling=dapo"]) == 0
    again = _fingerprint(tmp_path / "again")
    assert again["rollouts"] == dapo_run["rollouts"]
    assert again["metrics"] == dapo_run["metrics"]
    assert again["book"] == dapo_run["book"]


def test_dapo_leaves_the_main_data_order_as_it_was(dapo_run: dict, tmp_path: Path) -> None:
    assert _child(tmp_path / "off", RUN) == 0
    off = _fingerprint(tmp_path / "off")["metrics"]
    assert [r["question_ids"] for r in off] == [r["question_ids"] for r in dapo_run["metrics"]]
    assert off[0]["code_reward"] == dapo_run["metrics"][0]["code_reward"]  # step 1's batch is sampled alike
    assert "dapo_draws" not in off[0]


def test_a_dapo_run_killed_and_resumed_matches_the_uninterrupted_one(dapo_run: dict, tmp_path: Path) -> None:
    assert dapo_run["metrics"][1]["dapo_draws"] > 0  # step 2 draws: the replay must draw the same
    run_dir = tmp_path / "run"
    # step 2's book holds the drawn questions, the checkpoint is step 1: rolled back, step 2 replayed
    assert _child(run_dir, [*RUN, "train.dynamic_sampling=dapo"], kill_at="book:2") == -signal.SIGKILL
    assert _child(run_dir, [], resume=True) == 0
    got = _fingerprint(run_dir)
    assert got == dapo_run


@pytest.mark.parametrize("method", ["golden", "selfplay"])
def test_dapo_for_golden_and_selfplay(method: str, tmp_path: Path) -> None:
    overrides = [*RUN, f"method={method}", "train.dynamic_sampling=dapo"]
    assert _child(tmp_path / "run", overrides) == 0
    rows = _fingerprint(tmp_path / "run")["metrics"]
    assert sum(r["dapo_code_dropped"] for r in rows) > 0
    for r in rows:
        assert r["dapo_code_groups"] <= B and (r["dapo_code_groups"] == B) == bool(r["dapo_code_target_met"])
        if method == "golden":  # the code role only
            assert not any(k.startswith("dapo_test") for k in r)
            assert r["code_num_samples"] == 2 * r["dapo_code_groups"]
        else:  # one policy learns from both roles' kept groups in one update
            assert r["code_num_samples"] == 2 * (r["dapo_code_groups"] + r["dapo_test_groups"])
