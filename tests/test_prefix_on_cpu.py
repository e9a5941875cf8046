"""Response prefixes (Sampling.response_prefix): prompts end with the prefix, responses start with it,
log-probs cover the generated tokens only, and the game's call sites use the role's prefix."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from codea1.config import Config, Sampling, config_from_dict, load_config
from codea1.errors import UserError
from codea1.game import parse_test_suite
from codea1.game.prompts import code_messages, format_prefix, test_messages, with_prefix
from codea1.inference.rollout import GenerationConfig, render_prompts, rendered_prefix
from codea1.problem import Problem

PREFIX = "```python\nassert {entry_point}("


def problem(entry_point: str = "add_one") -> Problem:
    return Problem(
        id=f"p/{entry_point}",
        prompt=f'def {entry_point}(x):\n    """x + 1"""\n',
        description="Return x plus one.",
        entry_point=entry_point,
        gt_solution=f"def {entry_point}(x):\n    return x + 1\n",
        golden_tests=[f"assert {entry_point}(1) == 2", f"assert {entry_point}(0) == 1"],
    )


@pytest.fixture(scope="module")
def policy():
    from codea1.models import load_model_and_tokenizer
    from codea1.rl.policy import Policy, PolicyConfig

    model, tok = load_model_and_tokenizer("tiny-random")
    return Policy(model, tok, PolicyConfig(kl_coef=0.0))


def test_prefix_is_formatted_per_problem() -> None:
    a, b = problem("add_one"), problem("inc")
    assert format_prefix(PREFIX, a) == "```python\nassert add_one("
    assert with_prefix(test_messages(b, b.gt_solution), PREFIX, b)[-1] == {
        "role": "assistant",
        "content": "```python\nassert inc(",
    }
    messages = code_messages(a)
    assert with_prefix(messages, "", a) == messages  # no prefix: the prompt is unchanged
    assert format_prefix("{{literal}} {entry_point}", a) == "{literal} add_one"


def test_prompt_ends_with_the_prefix_and_text_starts_with_it(policy) -> None:
    p = problem()
    messages = with_prefix(test_messages(p, p.gt_solution), PREFIX, p)
    gen = GenerationConfig(n=2, max_new_tokens=6, temperature=1.0, seed=3)
    samples = policy.generate([messages], gen)[0]
    tok = policy.tokenizer
    prefix = format_prefix(PREFIX, p)
    plain = render_prompts(tok, [test_messages(p, p.gt_solution)])[0]
    for s in samples:
        assert tok.decode(s.prompt_ids).endswith(prefix)
        assert len(s.prompt_ids) > len(plain)  # the prefix tokens are in the prompt ...
        assert s.text.startswith(prefix)  # ... and in the text the parser reads
        assert s.text == prefix + tok.decode(s.response_ids, skip_special_tokens=True)
        assert 0 < len(s.response_ids) <= gen.max_new_tokens  # generated tokens only
        assert len(s.logprobs) == len(s.response_ids)
    # the stored log-probs are those of the generated tokens given prompt + prefix
    again = policy.logprobs([s.prompt_ids for s in samples], [s.response_ids for s in samples])
    for s, lp in zip(samples, again, strict=False):
        assert torch.allclose(torch.tensor(s.logprobs), torch.tensor(lp), atol=1e-4)


def test_prefilled_prompt_is_an_open_assistant_turn(policy) -> None:
    tok = policy.tokenizer
    p = problem()
    messages = with_prefix(code_messages(p), "```python\n", p)
    text = tok.decode(render_prompts(tok, [messages])[0])
    opened = tok.decode(render_prompts(tok, [code_messages(p)])[0])
    assert text == opened + "```python\n"  # the generation prompt, then the prefix, no end of turn
    assert rendered_prefix(tok, messages) == "```python\n"
    assert rendered_prefix(tok, code_messages(p)) == ""


def test_long_prompt_cut_keeps_the_prefix(policy) -> None:
    tok = policy.tokenizer
    p = problem()
    ids = render_prompts(tok, [with_prefix(code_messages(p), PREFIX, p)], max_prompt_tokens=40)[0]
    assert len(ids) == 40 and tok.decode(ids).endswith(format_prefix(PREFIX, p))


def test_stop_strings_are_searched_in_the_generated_text_only(policy) -> None:
    p = problem()
    messages = with_prefix(code_messages(p), PREFIX, p)  # the prefix itself holds the stop string
    gen = GenerationConfig(n=1, max_new_tokens=5, seed=0, stop=["```"])
    s = policy.generate([messages], gen)[0][0]
    generated = s.text[len(format_prefix(PREFIX, p)) :]
    assert "```" not in generated[:-3] or s.finished
    assert len(s.response_ids) == 5 or "```" in generated  # not cut at once by the prefix's fence


def test_parser_reads_the_asserts_of_a_prefixed_response() -> None:
    p = problem()
    text = format_prefix(PREFIX, p) + "1) == 2\nassert add_one(5) == 6\n```"
    suite = parse_test_suite(text, p.entry_point)
    assert [t.statement for t in suite.tests] == ["assert add_one(1) == 2", "assert add_one(5) == 6"]
    cut = format_prefix(PREFIX, p) + "1) == 2\nassert add_one(5) =="  # cut by max_new_tokens
    suite = parse_test_suite(cut, p.entry_point)
    assert [t.statement for t in suite.tests] == ["assert add_one(1) == 2"] and suite.unparseable == 1


class Recorder:
    """A policy stand-in that records the prompts it is asked to answer."""

    def __init__(self) -> None:
        self.prompts: list = []

    def generate(self, prompts, gen):
        from codea1.inference.rollout import Sample

        self.prompts.extend(prompts)
        return [
            [Sample([1], [2], "```python\ndef f():\n    pass\n```", [0.0], True) for _ in range(gen.n)] for _ in prompts
        ]


@pytest.mark.parametrize("blackbox", [False, True])
def test_game_samples_with_each_roles_prefix(blackbox: bool) -> None:
    from codea1.train.methods import StepEnv, sample_codes, sample_tests

    cfg = config_from_dict(
        {
            "game": {"M": 2, "N": 2, "blackbox_tests": blackbox},
            "generation": {
                "code": {"response_prefix": "```python\ndef {entry_point}("},
                "test": {"response_prefix": PREFIX},
            },
        }
    )
    code, test = Recorder(), Recorder()
    env = StepEnv(cfg, code, test, None, None, lambda name: None)
    batch = [problem("a"), problem("b")]
    codes = sample_codes(env, 0, batch)
    sample_tests(env, 0, batch, codes)
    assert [m[-1]["content"] for m in code.prompts] == ["```python\ndef a(", "```python\ndef b("]
    assert {m[-1]["content"] for m in test.prompts} == {"```python\nassert a(", "```python\nassert b("}
    assert all(m[-1]["role"] == "assistant" for m in code.prompts + test.prompts)


def test_demo_eval_uses_the_eval_prefix(monkeypatch) -> None:
    from codea1.eval import policy_eval
    from codea1.eval.policy_eval import EvalPlan, evaluate_code

    seen = {}

    def fake_evaluate(problems, solutions, executor):
        seen["solutions"] = solutions
        results = [SimpleNamespace(passed=False, status="fail") for _ in solutions]  # one verdict per solution
        return {"pass@1": 0.5, "tasks": {"p/add_one": {"n": 2, "correct": 1}}, "excluded": []}, results, []

    monkeypatch.setattr(policy_eval, "evaluate_problems", fake_evaluate)
    cfg = config_from_dict({"eval": {"response_prefix": "```python\n", "n_samples": 1}})
    rec = Recorder()
    assert evaluate_code(rec, [problem()], None, cfg, EvalPlan(code_samples=1, bootstrap=10))["pass@1"] == 0.5
    assert rec.prompts[0][-1] == {"role": "assistant", "content": "```python\n"}
    assert seen["solutions"] == [("p/add_one", "def f():\n    pass")]


def test_config_round_trips_the_prefix(tmp_path) -> None:
    cfg = config_from_dict(
        {"generation": {"test": {"response_prefix": PREFIX}}, "eval": {"response_prefix": "```python\n"}}
    )
    path = tmp_path / "c.yaml"
    path.write_text(cfg.to_yaml())
    again = load_config(path)
    assert again == cfg and again.generation.test.response_prefix == PREFIX
    assert again.generation.code.response_prefix == ""
    gen = GenerationConfig.of(again.generation.test, n=2, seed=1)
    assert gen.response_prefix == PREFIX
    assert dataclasses.replace(Config().generation.code, response_prefix="x").response_prefix == "x"


@pytest.mark.parametrize(
    "bad", ["{problem}", "assert {entry_point", "x { y", "{entry_point!r}", "{entry_point:>3}", "{0}", "{}"]
)
def test_bad_prefix_templates_are_refused(bad: str) -> None:
    with pytest.raises(UserError, match="generation.test.response_prefix"):
        load_config(None, [f"generation.test.response_prefix={bad}"]) if bad[0] != "{" else config_from_dict(
            {"generation": {"test": {"response_prefix": bad}}}
        )
    with pytest.raises(UserError, match="response_prefix"):
        Sampling(response_prefix=bad)
