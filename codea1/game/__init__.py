"""The Code-A1 game: parsing, GT's answers, the execution matrix, rewards, Mistake Book, TopVar, prompts;
one module per stage (play chains them), and the Golden-Tests baseline (golden).

Pure functions over execution results, plus the SQLite Mistake Book; execution goes through
codea1.sandbox.Executor. See docs/algorithm.md sections 2-7 for the algorithm.
"""

from codea1.game.answers import CheckedSuite, GTAnswers, KeptTest, validate_suite
from codea1.game.golden import golden_rewards, golden_step
from codea1.game.mistake_book import BookUpdate, MistakeBook, StoredTest, merge_updates
from codea1.game.parsing import ParsedSuite, ParsedTest, extract_code, nonprintable_share, parse_test_suite
from codea1.game.play import QuestionResult, play_question, play_step
from codea1.game.rewards import (
    CodeScore,
    SuiteScore,
    SuiteVerdicts,
    cure_normalize,
    cure_suite_reward,
    cure_suite_test_rewards,
    cure_test_rewards,
    golden_reward,
    score_candidate,
)
from codea1.game.topvar import population_std, topvar_select

__all__ = [
    "BookUpdate",
    "CheckedSuite",
    "CodeScore",
    "GTAnswers",
    "KeptTest",
    "MistakeBook",
    "ParsedSuite",
    "ParsedTest",
    "QuestionResult",
    "StoredTest",
    "SuiteScore",
    "SuiteVerdicts",
    "cure_normalize",
    "cure_suite_reward",
    "cure_suite_test_rewards",
    "cure_test_rewards",
    "extract_code",
    "golden_reward",
    "golden_rewards",
    "golden_step",
    "merge_updates",
    "nonprintable_share",
    "parse_test_suite",
    "play_question",
    "play_step",
    "population_std",
    "score_candidate",
    "topvar_select",
    "validate_suite",
]
