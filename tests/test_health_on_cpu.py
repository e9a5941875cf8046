"""Run health: signals of collapse and reward hacking, from metrics rows and from runs built to show them."""

from __future__ import annotations

import dataclasses

from codea1.config import HealthSection
from codea1.train.health import check


def _rows(n: int, **series) -> list[dict]:
    return [{"step": i + 1, **{k: (v(i) if callable(v) else v) for k, v in series.items()}} for i in range(n)]


def test_a_healthy_run_raises_nothing() -> None:
    rows = _rows(
        12,
        code_entropy=lambda i: 1.0 - 0.02 * i,
        code_response_len=100,
        code_zero_var_groups=0.4,
        test_zero_var_groups=0.5,
        tests_not_calling=0.1,
        tests_refused=0.05,
        book_fresh_gap=0.2,
    )
    assert check(rows, HealthSection()) == []
    assert check(rows[:3], HealthSection()) == []  # fewer rows than a window: nothing to say yet


def test_collapse_is_flagged() -> None:
    rows = _rows(12, code_entropy=lambda i: 2.0 if i < 5 else 0.2, test_response_len=lambda i: 80 if i < 5 else 10)
    got = check(rows, HealthSection())
    assert len(got) == 2
    assert got[0].startswith("collapse: the code policy's entropy fell to 0.2 over the last 5 steps, 10%")
    assert got[1].startswith("collapse: the test policy's response length fell to 10")
    assert check(_rows(12, code_zero_var_groups=1.0), HealthSection())[0].startswith(
        "no signal: 100% of the Code LLM's groups had all-equal rewards"
    )


def test_reward_hacking_is_flagged_and_thresholds_are_knobs() -> None:
    rows = _rows(6, tests_not_calling=lambda i: 0.9, tests_refused=0.7, book_fresh_gap=0.8)
    got = check(rows, HealthSection())
    assert [s.split(":")[0] for s in got] == ["reward hacking"] * 3
    assert "never call the function under test" in got[0] and "(health.max_tests_not_calling 0.5)" in got[0]
    loose = dataclasses.replace(
        HealthSection(), max_tests_not_calling=0.95, max_tests_refused=0.8, max_book_fresh_gap=0.9
    )
    assert check(rows, loose) == []
    assert check(rows, dataclasses.replace(HealthSection(), mode="off")) == []


def test_a_run_built_to_hack_is_flagged_then_stopped(tmp_path) -> None:
    """A tiny a1 run whose Test LLM writes only tests that never call the function (`assert len([1]) ==
    1`, valid in the reference reading): the health check flags it in metrics.jsonl and the report, and
    with health.mode=stop ends the run at the first full window, checkpointed."""
    from pathlib import Path

    from train_scripted import ScriptedPolicy, scripted_factory

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.train.loop import train
    from codea1.train.metrics import read_metrics
    from codea1.train.report import health_flags

    class Tautologies(ScriptedPolicy):
        def _text(self, problem, sample):
            if self.role == "test":
                return "```python\nassert len([1]) == 1\nassert abs(-2) == 2\n```"
            return super()._text(problem, sample)

    configs = Path(__file__).resolve().parents[1] / "codea1" / "configs"
    out = {}
    for mode in ("warn", "stop"):
        cfg = load_config(
            configs / "tiny-cpu.yaml",
            [
                f"health.mode={mode}",
                "health.window=2",
                "data.limit=4",
                "train.progress=false",
                "train.checkpoint_every=2",
            ],
        )
        problems = load_problems(cfg.data.train)

        def factory(c, problems=problems):
            code, test = scripted_factory(problems)(c)
            return code, Tautologies(test.policy, "test", problems)

        train(cfg, tmp_path / mode, max_steps=3, policy_factory=factory)
        out[mode] = read_metrics(tmp_path / mode / "metrics.jsonl")
    warn, stop = out["warn"], out["stop"]
    assert [r["tests_not_calling"] for r in warn] == [1.0] * 3
    assert "health_warnings" not in warn[0]  # one step is not a window
    assert any("never call the function under test" in s for s in warn[1]["health_warnings"])
    assert len(warn) == 3 and len(stop) == 2  # stop ends the run at the first flagged step
    assert any(f.startswith("health at step 3 (since step 2): reward hacking") for f in health_flags(warn))


def test_a_run_built_to_collapse_is_flagged(tmp_path) -> None:
    """A tiny Golden-Tests run whose Code LLM writes the same code every time (a collapsed policy): every
    question's codes get one reward, no group carries a gradient, and the health check says so."""
    from pathlib import Path

    from train_scripted import ScriptedPolicy, scripted_factory

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.train.loop import train
    from codea1.train.metrics import read_metrics

    class OneAnswer(ScriptedPolicy):
        def _text(self, problem, sample):
            return f"```python\n{problem.gt_solution}\n```" if self.role == "code" else super()._text(problem, sample)

    configs = Path(__file__).resolve().parents[1] / "codea1" / "configs"
    cfg = load_config(
        configs / "tiny-cpu.yaml", ["method=golden", "health.window=2", "data.limit=4", "train.progress=false"]
    )
    problems = load_problems(cfg.data.train)

    def factory(c):
        code, _ = scripted_factory(problems)(c)
        return OneAnswer(code.policy, "code", problems), None

    train(cfg, tmp_path / "run", max_steps=2, policy_factory=factory)
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert [r["code_zero_var_groups"] for r in rows] == [1.0, 1.0]
    assert any(s.startswith("no signal: 100% of the Code LLM's groups") for s in rows[1]["health_warnings"])


def test_a_healthy_stdio_run_is_not_taken_for_reward_hacking(tmp_path) -> None:
    """A stdio test is an input, not a call: `tests_not_calling` counted every kept stdio test as one that
    never calls the function under test (1.0 at every step), so a healthy stdio a1 run was warned of reward
    hacking after a window and stopped with health.mode=stop. Now the kind says whether a test calls."""
    from pathlib import Path

    from train_scripted import scripted_factory

    from codea1.config import load_config
    from codea1.data import load_problems
    from codea1.train.loop import train
    from codea1.train.metrics import read_metrics

    configs = Path(__file__).resolve().parents[1] / "codea1" / "configs"
    cfg = load_config(
        configs / "tiny-cpu.yaml",
        [
            "data.train=bundled-stdio:train",
            "health.mode=stop",
            "health.window=2",
            "data.limit=4",
            "train.progress=false",
        ],
    )
    problems = load_problems(cfg.data.train)
    train(cfg, tmp_path / "run", max_steps=3, policy_factory=scripted_factory(problems))
    rows = read_metrics(tmp_path / "run" / "metrics.jsonl")
    assert len(rows) == 3 and all(r["tests_not_calling"] == 0.0 for r in rows)
    assert not any("never call the function" in s for r in rows for s in r.get("health_warnings", []))
