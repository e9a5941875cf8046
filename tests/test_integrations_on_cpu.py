"""codea1's judge as a reward for TRL (a real GRPOTrainer step) and verl (called as its reward managers do)."""

from __future__ import annotations

import json
from functools import partial

import pytest

from codea1.integrations.judge import CodeJudge
from codea1.problem import Problem

ADD = Problem(
    id="int/add",
    prompt="Write add(a, b).",
    description="add two numbers",
    entry_point="add",
    gt_solution="def add(a, b):\n    return a + b\n",
    golden_tests=["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(10, 5) == 15"],
)
BROKEN = Problem(
    id="int/broken",
    prompt="p",
    description="d",
    entry_point="f",
    gt_solution="def f():\n    return 1\n",
    golden_tests=["assert f() == 2"],
)
RIGHT = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"
UNPARSEABLE = "```python\ndef add(a, b)\n    return a +\n```"
HOSTILE = {
    "forged_eq": "```python\nclass Any:\n    def __eq__(self, o):\n        return True\ndef add(a, b):\n    return Any()\n```",
    "exit_zero": "```python\nimport sys\nsys.exit(0)\n```",
    "exit_in_call": "```python\ndef add(a, b):\n    raise SystemExit(0)\n```",
    "frame_walk": (
        "```python\nimport sys\ndef add(a, b):\n    f = sys._getframe(1)\n    while f is not None:\n"
        "        for v in f.f_locals.values():\n            if isinstance(v, int) and v not in (a, b):\n"
        "                return v\n        f = f.f_back\n    return 0\n```"
    ),
}
UID_BASE = 1_701_900_000


@pytest.fixture(scope="module")
def judge():
    from conftest import quiet_executor

    with quiet_executor(UID_BASE) as ex:
        j = CodeJudge([ADD, BROKEN], executor=ex)
        yield j
        j.close()


def test_the_judge_scores_right_wrong_unparseable_and_hostile_code(judge) -> None:
    texts = [RIGHT, WRONG, UNPARSEABLE, *HOSTILE.values()]
    scores = judge.score([("int/add", t) for t in texts] + [("int/broken", RIGHT)])
    assert [s.reward for s in scores] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, None]
    assert scores[2].status == "undefined" and "SyntaxError" in scores[2].reason
    assert scores[-1].status == "excluded" and "GT" in scores[-1].reason
    # a problem given whole (its dict or its JSON) needs no registration
    assert [s.reward for s in judge.score([(ADD.to_dict(), RIGHT), (json.dumps(ADD.to_dict()), WRONG)])] == [1.0, 0.0]


def test_the_trl_reward_in_trls_calling_convention(judge) -> None:
    from codea1.integrations.trl import code_reward

    logged: dict[str, list] = {}
    reward = code_reward(judge=judge)
    completions = [RIGHT, WRONG, [{"role": "assistant", "content": RIGHT}], HOSTILE["frame_walk"]]
    out = reward(
        prompts=["p"] * 4,
        completions=completions,
        completion_ids=[[1]] * 4,
        problem_id=["int/add"] * 4,
        trainer_state=None,
        log_extra=lambda column, values: logged.setdefault(column, values),
        log_metric=lambda name, value: None,
    )
    assert out == [1.0, 0.0, 1.0, 0.0]
    assert logged["codea1_reason"][0] == "pass" and logged["codea1_reason"][1]
    with pytest.raises(Exception, match="no 'problem_id' column"):
        reward(prompts=["p"], completions=[RIGHT], other=[1])


def test_a_real_grpo_trainer_step_with_the_trl_reward(judge, tmp_path) -> None:
    pytest.importorskip("trl")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from codea1.integrations.trl import code_reward
    from codea1.models import load_model_and_tokenizer

    model, tok = load_model_and_tokenizer("tiny-random")
    seen: list[list] = []
    inner = code_reward(judge=judge)

    def reward(prompts, completions, **kwargs):  # the codea1 reward, with what TRL gave it recorded
        seen.append([completions, kwargs["problem_id"]])
        scores = inner(prompts=prompts, completions=completions, **kwargs)
        seen[-1].append(scores)
        return scores

    data = Dataset.from_list([{"prompt": "Write add(a, b).", "problem_id": "int/add"}] * 4)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_steps=1,
        learning_rate=1e-5,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        use_cpu=True,
        bf16=False,
        seed=0,
    )
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=data, processing_class=tok)
    trainer.train()
    completions, ids, scores = seen[0]
    assert ids == ["int/add"] * len(completions) and len(completions) == 4
    assert scores == [0.0] * 4  # a random tiny model writes no add()
    logged = [h for h in trainer.state.log_history if any(k.startswith("rewards/") for k in h)]
    assert logged and any(v == 0.0 for k, v in logged[0].items() if k.startswith("rewards/"))


def test_the_game_reward_scores_r_c_against_another_models_tests(judge) -> None:
    from codea1.integrations.trl import game_reward

    def test_llm(problem, codes):  # a scripted Test LLM: one response per code, one of its tests wrong
        return [["```python\nassert add(2, 2) == 4\nassert add(0, 0) == 1\n```"] for _ in codes]

    reward = game_reward(test_llm, judge=judge)
    out = reward(prompts=["p", "p"], completions=[RIGHT, WRONG], problem_id=["int/add", "int/add"])
    assert out[0] > out[1]  # GT-validated tests: the wrong code fails add(2, 2) == 4
    static = game_reward(judge=judge)
    tests = test_llm(ADD, [RIGHT, WRONG])  # the same tests, written beforehand in the dataset
    assert static(prompts=["p", "p"], completions=[RIGHT, WRONG], problem_id=["int/add"] * 2, tests=tests) == out


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    """verl.trainer.ppo.reward._call_with_kwargs (0.9.1): how verl wraps a custom reward function."""
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def _naive_reward_extra_info(result):
    """The end of NaiveRewardManager.run_single (and DAPORewardManager's), verl 0.9.1
    verl/experimental/reward_loop/reward_manager/naive.py: a dict's "score" is the reward and all its keys
    are the response's reward_extra_info; a plain number is the reward and its "acc"."""
    reward_extra_info = {}
    if isinstance(result, dict):
        score = result["score"]
        for key, value in result.items():
            reward_extra_info[key] = value
    else:
        score = result
        reward_extra_info["acc"] = score
    return {"reward_score": score, "reward_extra_info": reward_extra_info}


def _stacked(outputs):
    """verl 0.9.1 verl/experimental/agent_loop/agent_loop.py (and reward_loop.py): the first response's keys
    name the batch's extra fields, every response must have them, each becomes one numpy array."""
    import numpy as np

    infos = [o["reward_extra_info"] for o in outputs]
    return {key: np.array([info[key] for info in infos]) for key in list(infos[0].keys())}


def _dapo_filtered_groups(outputs, uids, metric):
    """verl 0.9.1 verl/trainer/ppo/v1/replay_buffer.py ReplayBuffer._dapo_filtered_keys (metric other than
    "reward"): the metric is read from each response's reward_extra_info (a group without it raises), cast
    with float(); a group whose values all agree (std 0) is filtered out."""
    import numpy as np

    metrics_by_uid, missing = {}, set()
    for uid, out in zip(uids, outputs, strict=True):
        info = out["reward_extra_info"]
        if metric not in info:
            missing.add(uid)
        else:
            metrics_by_uid.setdefault(uid, []).append(float(info[metric]))
    if missing:
        raise RuntimeError(f"Finished groups are missing DAPO metric {metric!r}: {sorted(missing)[:5]}")
    return {uid for uid, v in metrics_by_uid.items() if len(v) > 1 and float(np.std(v)) == 0.0}


def _main_eval_item(reward_fn, data_source, response_lst, ground_truth):
    """verl 0.9.1 verl/trainer/main_eval.py process_item: the function called positionally per response,
    the results averaged with numpy (and the items' means averaged again per data source)."""
    import numpy as np

    score_lst = [reward_fn(data_source, r, ground_truth) for r in response_lst]
    return data_source, np.mean(score_lst)


def test_verl_compute_score_as_its_reward_managers_call_it(judge, monkeypatch) -> None:
    from codea1.integrations import judge as judge_module
    from codea1.integrations import verl

    monkeypatch.setattr(judge_module, "_DEFAULT", judge)
    truth = verl.ground_truth_of(ADD)
    naive = partial(_call_with_kwargs, verl.compute_score, {})
    extra = {"index": 0, "num_turns": None, "rollout_reward_scores": {}}  # what the naive manager adds
    assert naive(data_source="codea1", solution_str=RIGHT, ground_truth=truth, extra_info=extra)["score"] == 1.0
    assert naive(data_source="codea1", solution_str=HOSTILE["forged_eq"], ground_truth=truth, extra_info=extra) == {
        "score": 0.0,
        "acc": 0.0,
        "judged": 1.0,
    }
    batch = partial(_call_with_kwargs, verl.compute_score_batch, {})
    out = batch(
        data_sources=["codea1"] * 3,
        solution_strs=[RIGHT, WRONG, RIGHT],
        ground_truths=[truth, truth, verl.ground_truth_of(BROKEN)],
        extra_infos=[{"rollout_reward_scores": {}}] * 3,
    )
    assert [o["score"] for o in out] == [1.0, 0.0, 0.0] and [o["judged"] for o in out] == [1.0, 1.0, 0.0]


def test_verl_dapo_group_filter_and_main_eval_read_what_codea1_returns(judge, monkeypatch) -> None:
    from codea1.integrations import judge as judge_module
    from codea1.integrations import verl

    monkeypatch.setattr(judge_module, "_DEFAULT", judge)
    truth = verl.ground_truth_of(ADD)
    naive = partial(_call_with_kwargs, verl.compute_score, {})
    texts = {"mixed": [RIGHT, WRONG], "all_right": [RIGHT, RIGHT], "all_wrong": [WRONG, UNPARSEABLE]}
    uids = [uid for uid, group in texts.items() for _ in group]
    outputs = [
        _naive_reward_extra_info(naive(data_source="codea1", solution_str=t, ground_truth=truth, extra_info={}))
        for group in texts.values()
        for t in group
    ]
    extra = _stacked(outputs)  # every response has the same keys, all numbers
    assert extra["acc"].tolist() == [1.0, 0.0, 1.0, 1.0, 0.0, 0.0] and extra["score"].dtype.kind == "f"
    # DAPO's group filter on "acc", as verl's DAPO recipes set it: the groups without signal go
    assert _dapo_filtered_groups(outputs, uids, "acc") == {"all_right", "all_wrong"}
    # verl's main_eval averages what the function returns: compute_score_value is the score alone
    value = partial(_call_with_kwargs, verl.compute_score_value, {})
    assert _main_eval_item(value, "codea1", [RIGHT, WRONG, RIGHT, RIGHT], truth) == ("codea1", 0.75)
    assert _main_eval_item(value, "codea1", [RIGHT], verl.ground_truth_of(BROKEN)) == ("codea1", 0.0)


ONE_SUM = {"inputs": ["1 2\n"], "outputs": ["3\n"]}  # verl's stdio format, one test
BUSY = "```python\nimport time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass\nprint(3)\n```"
HUNGRY = "```python\nx = bytearray(300 << 20)\nprint(3)\n```"


def test_verl_reward_kwargs_set_the_time_and_memory_limits_and_unknown_ones_are_refused(monkeypatch) -> None:
    from codea1.errors import UserError
    from codea1.integrations import judge as judge_module
    from codea1.integrations import verl

    monkeypatch.setattr(judge_module, "_SIZED", {}, raising=False)
    plain = partial(_call_with_kwargs, verl.compute_score, {})
    assert plain(data_source="taco", solution_str=BUSY, ground_truth=ONE_SUM)["score"] == 1.0  # within 6 s
    tight = partial(_call_with_kwargs, verl.compute_score, {"timeout": 0.3})
    assert tight(data_source="taco", solution_str=BUSY, ground_truth=ONE_SUM) == {
        "score": 0.0,
        "acc": 0.0,
        "judged": 1.0,
    }
    assert plain(data_source="taco", solution_str=HUNGRY, ground_truth=ONE_SUM)["score"] == 1.0  # 1 GiB by default
    small = partial(_call_with_kwargs, verl.compute_score, {"memory_limit_mb": 100, "sandbox_workers": 1})
    try:
        assert small(data_source="taco", solution_str=HUNGRY, ground_truth=ONE_SUM)["score"] == 0.0
        [sized] = judge_module._SIZED.values()
        assert (sized.executor.memory_mb, sized.executor.workers) == (100, 1)
    finally:
        for j in judge_module._SIZED.values():
            j.close()
    unknown = partial(_call_with_kwargs, verl.compute_score, {"sandbox_fusion_url": "http://x", "timeout": 1})
    with pytest.raises(
        UserError, match=r"^codea1's verl reward does not understand reward_kwargs sandbox_fusion_url; "
    ):
        unknown(data_source="taco", solution_str=BUSY, ground_truth=ONE_SUM)
    with pytest.raises(UserError, match=r"timeout=-1"):
        verl.compute_score("taco", BUSY, ONE_SUM, timeout=-1)


# --------------------------------------------------------------------------------------------- reasons

SURROGATE_ERROR = (  # an exception whose text holds a lone surrogate (bytes decoded with surrogateescape)
    "```python\ndef add(a, b):\n    raise ValueError(b'bad \\xff byte'.decode('utf-8', 'surrogateescape'))\n```"
)
LONG_WRONG = "```python\ndef add(a, b):\n    return 'x' * 100000\n```"


def test_a_failing_verdicts_reason_names_the_call_expected_and_got_in_valid_utf8(judge) -> None:
    from codea1.integrations.judge import REASON_PART
    from codea1.integrations.trl import code_reward

    wrong, raised, long_wrong = judge.score([("int/add", t) for t in (WRONG, SURROGATE_ERROR, LONG_WRONG)])
    assert wrong.status == "fail" and "add(1, 2)" in wrong.reason
    assert "expected 3" in wrong.reason and "got -1" in wrong.reason
    assert raised.status == "error" and "add(1, 2)" in raised.reason and "ValueError" in raised.reason
    assert "got 'xxx" in long_wrong.reason and len(long_wrong.reason) <= 4 * REASON_PART
    for s in (wrong, raised, long_wrong):
        s.reason.encode("utf-8")  # what pyarrow does to a string column: raises on a lone surrogate
    logged: dict[str, list] = {}
    reward = code_reward(judge=judge)
    reward(
        prompts=["p"] * 2,
        completions=[SURROGATE_ERROR, WRONG],
        problem_id=["int/add"] * 2,
        log_extra=lambda column, values: logged.setdefault(column, values),
    )
    assert [v.encode("utf-8").decode("utf-8") for v in logged["codea1_reason"]] == [raised.reason, wrong.reason]


# ------------------------------------------------------------------------------------ problem identity

TWIN_A = Problem(
    id="int/twin",
    prompt="p",
    description="d",
    entry_point="f",
    gt_solution="def f(x):\n    return x + 1\n",
    golden_tests=["assert f(1) == 2", "assert f(5) == 6"],
)
TWIN_B = Problem(
    id="int/twin",
    prompt="p",
    description="d",
    entry_point="f",
    gt_solution="def f(x):\n    return x * 2\n",
    golden_tests=["assert f(3) == 6", "assert f(5) == 10"],
)
PLUS_ONE = "```python\ndef f(x):\n    return x + 1\n```"
TIMES_TWO = "```python\ndef f(x):\n    return x * 2\n```"


def test_problems_sharing_an_id_in_one_batch_are_each_judged_against_their_own(judge, monkeypatch) -> None:
    from codea1.integrations import judge as judge_module
    from codea1.integrations import verl
    from codea1.integrations.trl import code_reward, game_reward

    a, b = TWIN_A.to_dict(), json.dumps(TWIN_B.to_dict())
    pairs = [(a, PLUS_ONE), (b, TIMES_TWO), (a, TIMES_TWO), (b, PLUS_ONE)]
    assert [s.reward for s in judge.score(pairs)] == [1.0, 1.0, 0.0, 0.0]
    reward = code_reward(judge=judge)
    assert reward(prompts=["p"] * 4, completions=[c for _, c in pairs], problem_id=[p for p, _ in pairs]) == [
        1.0,
        1.0,
        0.0,
        0.0,
    ]
    monkeypatch.setattr(judge_module, "_DEFAULT", judge)
    truths = [verl.ground_truth_of(TWIN_A), verl.ground_truth_of(TWIN_B)]
    out = verl.compute_score_batch(["codea1"] * 2, [PLUS_ONE, TIMES_TWO], truths)
    assert [o["score"] for o in out] == [1.0, 1.0]
    # the game reward too: rows of the two problems in one batch score as each row alone
    tests = [["```python\nassert f(1) == 2\n```"], ["```python\nassert f(3) == 6\n```"]]
    game = game_reward(judge=judge)
    together = game(prompts=["p"] * 2, completions=[PLUS_ONE, TIMES_TWO], problem_id=[a, b], tests=tests)
    alone = [
        game(prompts=["p"], completions=[c], problem_id=[p], tests=[t])[0]
        for p, c, t in zip([a, b], [PLUS_ONE, TIMES_TWO], tests, strict=True)
    ]
    assert together == alone


# ------------------------------------------------------------------------------------------ async (TRL)


def test_the_async_trl_reward_is_awaited_by_trl_and_scores_as_the_sync_one(judge) -> None:
    import asyncio

    pytest.importorskip("trl")
    from trl.trainer.utils import is_async_callable

    from codea1.integrations.trl import as_async, code_reward

    sync = code_reward(judge=judge)
    reward = as_async(sync)
    assert is_async_callable(reward) and not is_async_callable(sync)  # TRL 1.16's test for the async path
    assert reward.__name__ == sync.__name__ and reward.judge is judge  # same column name in TRL's logs
    kwargs = {"prompts": ["p"] * 3, "completions": [RIGHT, WRONG, RIGHT], "problem_id": ["int/add"] * 3}
    assert asyncio.run(reward(**kwargs)) == sync(**kwargs) == [1.0, 0.0, 1.0]
