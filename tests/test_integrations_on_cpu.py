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
        "passed": 0.0,
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
