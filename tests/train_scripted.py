"""Test helper for the trainer: real tiny-random policies whose sampled text is replaced by script.

The tiny random model writes gibberish, so every code would be invalid and the Mistake Book would stay
empty. Here sampling still runs the real model (seeds, RNG, checkpoints and GRPO updates are exercised
exactly), but each sample's text is chosen deterministically from its sampled token ids: the code role
picks the GT solution, a partly wrong variant, or the model's own text; the test role picks a subset of
the problem's golden tests (a stdin/stdout problem's: of its given inputs). The game then sees real passes and failures and a growing Mistake Book,
and any drift in sampling after a resume changes the choices and shows up in the book.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any


def _choice(sample: Any) -> int:
    digest = hashlib.sha256(repr(list(sample.response_ids)).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def wrong_variant(problem: Any) -> str:
    """GT, wrapped so that it returns None for inputs whose repr has a length divisible by 3."""
    return (
        f"{problem.gt_solution}\n\n_gt_{problem.entry_point} = {problem.entry_point}\n\n"
        f"def {problem.entry_point}(*args, **kwargs):\n"
        f"    out = _gt_{problem.entry_point}(*args, **kwargs)\n"
        f"    return None if len(repr(args)) % 3 == 0 else out\n"
    )


def wrong_program(problem: Any) -> str:
    """A stdin/stdout GT (Python), wrapped so that it prints "0" for inputs whose length is divisible by 3."""
    return (
        "import io, sys\n_data = sys.stdin.read()\nif len(_data) % 3 == 0:\n    print(0)\nelse:\n"
        f"    sys.stdin = io.StringIO(_data)\n    exec(compile({problem.gt_solution!r}, 'gt', 'exec'), "
        "{'__name__': '__main__'})\n"
    )


def _stdio_text(role: str, problem: Any, sample: Any, h: int) -> str:
    """The scripted text of a stdin/stdout problem: GT, a partly wrong program or the model's text (code);
    a subset of its given inputs, one ```input block each, sometimes an empty block (tests)."""
    if role == "code":
        kind = h % 4
        if kind == 0:
            return f"```python\n{problem.gt_solution}\n```"
        if kind in (1, 3):
            return f"```python\n{wrong_program(problem)}```"
        return sample.text
    chosen = [t["input"] for i, t in enumerate(problem.io_tests) if (h >> (i + 2)) & 1]
    if h % 3 == 0:
        chosen.append("")  # an empty input: unparseable
    return "".join(f"```input\n{text}```\n" for text in chosen)


class ScriptedPolicy:
    """Wraps a Policy; generate() keeps ids/logprobs but replaces each sample's text."""

    def __init__(self, policy: Any, role: str, problems: list) -> None:
        self.policy = policy
        self.role = role
        self.problems = problems

    def __getattr__(self, name: str) -> Any:
        return getattr(self.policy, name)

    def _problem(self, messages: list[dict]) -> Any:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        for p in self.problems:
            if p.entry_point in text and (p.description.strip() in text or p.prompt.strip() in text):
                return p
        raise AssertionError("prompt of an unknown problem")

    def _text(self, problem: Any, sample: Any) -> str:
        h = _choice(sample)
        if problem.kind == "stdio":
            return _stdio_text(self.role, problem, sample, h)
        if self.role == "code":
            kind = h % 4
            if kind == 0:
                return f"```python\n{problem.gt_solution}\n```"
            if kind in (1, 3):
                return f"```python\n{wrong_variant(problem)}```"
            return sample.text
        chosen = [t for i, t in enumerate(problem.golden_tests) if (h >> (i + 2)) & 1]
        if h % 3 == 0:
            chosen.append(f"assert {problem.entry_point}(")  # an unparseable statement
        return "```python\n" + "\n".join(chosen) + "\n```"

    def generate(self, prompts: list, gen: Any, *args: Any, **kwargs: Any) -> list:
        out = self.policy.generate(prompts, gen, *args, **kwargs)
        return [
            [dataclasses.replace(s, text=self._text(self._problem(msgs), s)) for s in row]
            for msgs, row in zip(prompts, out, strict=False)
        ]


def scripted_factory(problems: list):
    """A policy_factory for codea1.train.loop.train: the default policies, each wrapped by role."""

    def factory(cfg: Any) -> tuple[Any, Any]:
        from codea1.train.loop import method_policies

        code_policy, test_policy = method_policies(cfg)
        if cfg.traits.plays_both_roles:
            return _SelfPlayScripted(code_policy, problems), None
        wrapped_test = ScriptedPolicy(test_policy, "test", problems) if test_policy is not None else None
        return ScriptedPolicy(code_policy, "code", problems), wrapped_test

    return factory


class _SelfPlayScripted(ScriptedPolicy):
    """One policy for both roles (selfplay): the role follows the prompt (test prompts ask for asserts)."""

    def __init__(self, policy: Any, problems: list) -> None:
        super().__init__(policy, "code", problems)

    def generate(self, prompts: list, gen: Any, *args: Any, **kwargs: Any) -> list:
        out = self.policy.generate(prompts, gen, *args, **kwargs)
        rows = []
        for msgs, row in zip(prompts, out, strict=False):
            text = "\n".join(str(m.get("content", "")) for m in msgs)
            self.role = "test" if "assert" in text or "```input" in text else "code"
            rows.append([dataclasses.replace(s, text=self._text(self._problem(msgs), s)) for s in row])
        self.role = "code"
        return rows
