"""The knobs of the Code-A1 game (REFERENCE.md sections 2-5); defaults follow the reference code."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from codea1.errors import UserError

FAIL_DENOMINATORS = ("fixed", "actual")
SELFPLAY_REWARDS = ("a1", "cure")
TEST_VALIDITY = ("reference", "strict")


@dataclass
class GameConfig:
    """How one question is played and scored.

    alpha: weight of valid_ratio in the test reward, R_T = alpha*valid_ratio + (1-alpha)*Adv.
    tests_per_suite: the "8" of valid_ratio = min(V/8, 1 - I/8) and of gen_fail's first-8 window.
    fail_denominator: "fixed" divides gen_fail by tests_per_suite (reference code), "actual" by
        min(V, tests_per_suite) (the paper's figure).
    history_size: H, how many Mistake Book tests (most frequent first) each question is replayed with.
    topvar_ell: how many candidates per question the test policy is trained on (ell = M trains on all).
    nonprintable_penalty: subtract the share of non-printable characters of a test response from R_T.
    max_tests_per_suite: assert statements after this many in one response are ignored (bounds the
        execution cost of a runaway response); 0 keeps them all (the reference code reads them all).
    test_timeout: per-call time limit in seconds, for GT and for candidates.
    timeout_factor: a candidate's per-call limit is raised to timeout_factor times the slowest GT call
        of its tests when that is larger than test_timeout (as EvalPlus scales limits with the GT's
        own runtime), so a slow but correct candidate is not failed by a tight fixed limit.
    float_tol: None compares values exactly; a number compares floats with that abs/rel tolerance.
    selfplay_reward: "a1" (Code-A1's R_T) or "cure" (CURE's per-test reward, averaged over a suite).
    test_validity: "reference" reads and validates tests as the authors' reward code does; "strict"
        also requires every test to call the function under test and counts only `==` claims that
        agree with GT as right predictions (see docs/algorithm.md).
    blackbox_tests: the test prompt shows only the question, not the candidate (the Self-Play
        baseline, where one policy writes both); prompts.test_messages follows this flag.
    tests_requested: how many tests the test prompt asks for.
    """

    alpha: float = 0.5
    tests_per_suite: int = 8
    fail_denominator: str = "fixed"
    history_size: int = 8
    topvar_ell: int = 1
    nonprintable_penalty: bool = True
    max_tests_per_suite: int = 0
    test_timeout: float = 2.0
    timeout_factor: float = 2.0
    float_tol: float | None = None
    selfplay_reward: str = "a1"
    test_validity: str = "reference"
    blackbox_tests: bool = False
    tests_requested: int = 8
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.alpha) <= 1.0:
            raise UserError(f"game config: alpha must be in [0, 1], got {self.alpha}")
        if self.tests_per_suite < 1:
            raise UserError(f"game config: tests_per_suite must be >= 1, got {self.tests_per_suite}")
        if self.fail_denominator not in FAIL_DENOMINATORS:
            raise UserError(
                f"game config: fail_denominator must be one of {FAIL_DENOMINATORS}, got {self.fail_denominator!r}"
            )
        if self.history_size < 0:
            raise UserError(f"game config: history_size must be >= 0, got {self.history_size}")
        if self.topvar_ell < 1:
            raise UserError(f"game config: topvar_ell must be >= 1, got {self.topvar_ell}")
        if self.max_tests_per_suite < 0:
            raise UserError(f"game config: max_tests_per_suite must be >= 0, got {self.max_tests_per_suite}")
        if self.test_timeout <= 0:
            raise UserError(f"game config: test_timeout must be > 0, got {self.test_timeout}")
        if self.timeout_factor < 1.0:
            raise UserError(f"game config: timeout_factor must be >= 1, got {self.timeout_factor}")
        if self.selfplay_reward not in SELFPLAY_REWARDS:
            raise UserError(f"game config: selfplay_reward must be one of {SELFPLAY_REWARDS}, "
                            f"got {self.selfplay_reward!r}")
        if self.test_validity not in TEST_VALIDITY:
            raise UserError(f"game config: test_validity must be one of {TEST_VALIDITY}, "
                            f"got {self.test_validity!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> GameConfig:
        """Builds a config from a plain dict (e.g. a YAML section); unknown keys are a UserError."""
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UserError(f"game config: unknown field(s) {', '.join(unknown)}")
        return cls(**data)
