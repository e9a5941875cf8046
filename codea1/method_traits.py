"""What each training method is, as properties the rooms below codea1.train can read (config, game, recipes):
the one place besides codea1.train.methods (each method's step) where a method is named. Code asks a
property (`method_traits(cfg.method).writes_tests`), never compares a method's name
(tests/test_house_on_cpu.py holds it to that).

A new method is one row here (naming the module of its Method object, which codea1.train.methods.METHODS
finds there), that module, and its docs.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MethodTraits:
    """name: the method's config value (`method: NAME`).
    summary: one line about it (the config's help, a model card).
    writes_tests: a step samples tests (the game); false: the Code LLM alone (no Test LLM to train,
    export or warm up).
    separate_test_policy: the test role has a policy, and a model, of its own; false: one policy plays
    every role the method has.
    needs_golden_tests: its problems must have golden tests (data.require_golden_tests).
    blackbox_by_default: a null game.blackbox_tests means black-box tests (the prompt shows no code).
    chooses_test_reward: game.selfplay_reward picks its test reward.
    module: the module whose Method subclass, with this row as its `traits`, plays the method's step.
    """

    name: str
    summary: str
    writes_tests: bool
    separate_test_policy: bool
    needs_golden_tests: bool = False
    blackbox_by_default: bool = False
    chooses_test_reward: bool = False
    module: str = "codea1.train.methods"

    @property
    def plays_both_roles(self) -> bool:
        """One policy writes the code and the tests (and so trains on both)."""
        return self.writes_tests and not self.separate_test_policy


TRAITS: dict[str, MethodTraits] = {
    t.name: t
    for t in (
        MethodTraits(
            "a1",
            "the Code LLM and the Test LLM trained against each other (the Code-A1 game, GRPO for both)",
            writes_tests=True,
            separate_test_policy=True,
        ),
        MethodTraits(
            "golden",
            "the Code LLM trained on the problems' golden tests (GRPO), no Test LLM",
            writes_tests=False,
            separate_test_policy=False,
            needs_golden_tests=True,
        ),
        MethodTraits(
            "selfplay",
            "one policy playing both roles of the Code-A1 game (GRPO)",
            writes_tests=True,
            separate_test_policy=False,
            blackbox_by_default=True,
            chooses_test_reward=True,
        ),
    )
}

DEFAULT_METHOD = next(iter(TRAITS))  # the game itself


def method_traits(name: str) -> MethodTraits:
    """The traits of method `name` (a KeyError names the methods there are)."""
    try:
        return TRAITS[name]
    except KeyError:
        raise KeyError(f"no method {name!r}; the methods: {', '.join(TRAITS)}") from None


def strictest_data_method() -> str:
    """The method whose data requirements include every other's (golden tests): a comparison selects its
    training problems once, with them, for every method."""
    return next(t.name for t in TRAITS.values() if t.needs_golden_tests)
