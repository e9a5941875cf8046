"""The knobs of the Code-A1 game: `GameConfig`, defined with every other config section in
codea1.config (it is the `game` section of a training config) and imported here for the game."""

from codea1.config import FAIL_DENOMINATORS, SELFPLAY_REWARDS, TEST_VALIDITY, GameConfig

__all__ = ["FAIL_DENOMINATORS", "SELFPLAY_REWARDS", "TEST_VALIDITY", "GameConfig"]
