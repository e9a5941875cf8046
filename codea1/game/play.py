"""One round of the game for a batch of questions, as a pipeline of stages with plain records between them.

    parse_round      responses -> ParsedRound (the code of each candidate, a ParsedSuite per test
                     response)                                                              (here)
    resolve_calls    ParsedRound -> ResolvedCalls per question: each CALL with its arguments turned into
                     plain values once, in a child that holds neither GT nor a candidate   (game.answers)
    ask_gt           ResolvedCalls -> GTAnswers per question (GT's value of every resolved CALL, the
                     value of every model EXPECTED in GT's program, each call in a job of its own, so
                     from a clean start; GT's time for the Mistake Book's calls too)       (game.answers)
    validate_suite   ParsedSuite + GTAnswers -> CheckedSuite (V kept tests carrying GT's value, I
                     invalid)                                                               (game.answers)
    run_matrix       CheckedSuites + Mistake Book tests -> CandidateRun per candidate (one sandbox job
                     for its book tests and one per suite, each with its own byte budget)  (game.matrix)
    score_question   CandidateRuns -> CodeScore per candidate (Code-A1's rewards, or CURE's test
                     reward) and the question's Mistake Book update                       (game.score)
    topvar           which candidates' suites train the Test LLM                            (game.topvar)

`play_step` chains them, batching every sandbox job of all questions into one `Executor.run` call per
stage (GT's answers, then the matrix), so a trainer gets all the parallelism of the pool. docs/algorithm.md
describes the game; codea1.judge owns what a test means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from codea1.config import CURE_REWARDS, GameConfig
from codea1.game.answers import CheckedSuite, ask_gt, resolve_calls, validate_suite
from codea1.game.matrix import run_matrix
from codea1.game.mistake_book import BookUpdate, StoredTest, gt_digest
from codea1.game.parsing import ParsedSuite, extract_code, parse_test_suite
from codea1.game.rewards import CodeScore
from codea1.game.score import cure_rewards, score_question
from codea1.game.stdio_round import ask_gt_stdio, check_stdio_config, parse_stdio, stdio_matrix, validate_stdio
from codea1.game.topvar import topvar_select
from codea1.problem import Problem
from codea1.sandbox import OnProgress
from codea1.sandbox.api import Executor


@dataclass
class QuestionResult:
    """Everything one question produced in one step.

    codes[m]: CodeScore (valid, code_reward, hist_pass, topvar_selected, suites[n]).
    updates: what this question does to the Mistake Book (apply with MistakeBook.apply_step).
    history: the Mistake Book tests replayed (same for all candidates).
    checked[m][n]: suite n of candidate m checked against GT's answers.
    code_texts[m]: the extracted code of candidate m.
    gt_error: why GT could not run, if it could not (then no generated test is kept).
    tests_trained: False where the test reward trains none of the question's suites (CURE's reward on a
    question with no correct code).
    """

    question_id: str
    codes: list[CodeScore]
    updates: BookUpdate
    history: list[StoredTest]
    checked: list[list[CheckedSuite]]
    code_texts: list[str]
    gt_error: str | None = None
    timeouts_excused: int = 0  # candidate calls not held against them: GT's own repeat missed the limit too
    tests_trained: bool = True

    @property
    def code_rewards(self) -> list[float]:
        return [c.code_reward for c in self.codes]

    @property
    def test_rewards(self) -> list[list[float]]:
        return [[s.test_reward for s in c.suites] for c in self.codes]

    @property
    def topvar_selected(self) -> list[bool]:
        return [c.topvar_selected for c in self.codes]

    def to_dict(self) -> dict[str, Any]:
        out = {"question_id": self.question_id, "codes": [c.to_dict() for c in self.codes]}
        if not self.tests_trained:  # said only where it happens (CURE's reward, no correct code)
            out["tests_trained"] = False
        return out


@dataclass
class ParsedRound:
    """codes[q][m]: the extracted code of candidate m of question q; suites[q][m][n]: its n-th suite."""

    codes: list[list[str]]
    suites: list[list[list[ParsedSuite]]]


def parse_round(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    config: GameConfig,
) -> ParsedRound:
    codes = [[extract_code(r) for r in per_q] for per_q in code_responses]
    suites = [
        [
            [parse_test_suite(t, p.entry_point, config.max_tests_per_suite, config.test_validity) for t in per_code]
            for per_code in per_q
        ]
        for p, per_q in zip(problems, test_responses, strict=True)
    ]
    return ParsedRound(codes, suites)


def play_step(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    executor: Executor,
    histories: Sequence[Sequence[StoredTest]] | None = None,
    config: GameConfig | None = None,
    progress: OnProgress = None,
) -> list[QuestionResult]:
    """Plays many questions at once; returns one QuestionResult per problem, in order.

    code_responses[q][m]: the m-th code response to problem q; test_responses[q][m][n]: the n-th test
    response written for that code; histories[q]: the Mistake Book tests to replay (use
    MistakeBook.retrieve(problem.id, config.history_size, gt_digest(problem)): tests of the problem's GT
    now); each update carries that digest. The executor is a codea1.sandbox.Executor
    (anything with its `run(jobs, progress=None)`).
    """
    config = config or GameConfig()
    histories = histories if histories is not None else [[] for _ in problems]
    if not (len(problems) == len(code_responses) == len(test_responses) == len(histories)):
        raise ValueError("play_step: problems, code_responses, test_responses and histories differ in length")
    for q, (per_code, per_tests) in enumerate(zip(code_responses, test_responses, strict=True)):
        if len(per_code) != len(per_tests):
            raise ValueError(
                f"play_step: question {q} has {len(per_code)} code responses but "
                f"{len(per_tests)} lists of test responses (one list per code)"
            )
    stdio = [q for q, p in enumerate(problems) if p.is_stdio]
    if stdio:
        return _by_kind(problems, code_responses, test_responses, executor, histories, config, progress, stdio)
    parsed = parse_round(problems, code_responses, test_responses, config)
    resolved = resolve_calls(problems, parsed.suites, executor, config, progress)
    answers = ask_gt(problems, parsed.suites, executor, config, resolved, histories, progress)
    checked = [
        [[validate_suite(s, answers[q], config, resolved[q]) for s in per_code] for per_code in parsed.suites[q]]
        for q in range(len(problems))
    ]
    runs = run_matrix(
        problems, parsed.codes, parsed.suites, histories, checked, answers, resolved, executor, config, progress
    )
    results = []
    for q, problem in enumerate(problems):
        question_runs = [runs[q, m] for m in range(len(parsed.codes[q]))]
        scores, update = score_question(histories[q], checked[q], question_runs, config)
        update.gt_digest = gt_digest(problem)  # the book keeps the tests under the GT that judged them
        trained = True
        if config.selfplay_reward in CURE_REWARDS:
            trained = cure_rewards(scores, parsed.suites[q], answers[q], question_runs, config, resolved[q])
        selected = topvar_select([[s.test_reward for s in c.suites] for c in scores], config.topvar_ell)
        for score, chosen in zip(scores, selected, strict=True):
            score.topvar_selected = chosen
        results.append(
            QuestionResult(
                problem.id,
                scores,
                update,
                list(histories[q]),
                checked[q],
                parsed.codes[q],
                answers[q].gt_error,
                timeouts_excused=sum(r.timeouts_excused for r in question_runs),
                tests_trained=trained,
            )
        )
    return results


def _by_kind(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    executor: Executor,
    histories: Sequence[Sequence[StoredTest]],
    config: GameConfig,
    progress: OnProgress,
    stdio: list[int],
) -> list[QuestionResult]:
    """play_step for a batch holding stdin/stdout problems: those are played by `play_stdio`, the others
    as usual, and the results come back in the problems' order."""
    rest = [q for q in range(len(problems)) if q not in set(stdio)]
    out: list[QuestionResult | None] = [None] * len(problems)
    for part, play in ((stdio, play_stdio), (rest, play_step)):
        if not part:
            continue
        results = play(
            problems=[problems[q] for q in part],
            code_responses=[code_responses[q] for q in part],
            test_responses=[test_responses[q] for q in part],
            histories=[histories[q] for q in part],
            executor=executor,
            config=config,
            progress=progress,
        )
        for q, result in zip(part, results, strict=True):
            out[q] = result
    return [r for r in out if r is not None]


def play_stdio(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    histories: Sequence[Sequence[StoredTest]],
    executor: Executor,
    config: GameConfig | None = None,
    progress: OnProgress = None,
) -> list[QuestionResult]:
    """A round of stdin/stdout problems (codea1.game.stdio_round): the same QuestionResult, rewards, TopVar
    and Mistake Book update as a round of function problems."""
    config = config or GameConfig()
    check_stdio_config(config)
    codes, suites = parse_stdio(problems, code_responses, test_responses, config)
    answers = ask_gt_stdio(problems, suites, histories, executor, config, progress)
    checked = [
        [[validate_stdio(s, answers[q]) for s in per_code] for per_code in suites[q]] for q in range(len(problems))
    ]
    runs = stdio_matrix(problems, codes, checked, histories, executor, config, progress)
    results = []
    for q, problem in enumerate(problems):
        scores, update = score_question(histories[q], checked[q], runs[q], config)
        update.gt_digest = gt_digest(problem)
        selected = topvar_select([[s.test_reward for s in c.suites] for c in scores], config.topvar_ell)
        for score, chosen in zip(scores, selected, strict=True):
            score.topvar_selected = chosen
        results.append(
            QuestionResult(problem.id, scores, update, list(histories[q]), checked[q], codes[q], answers[q].gt_error)
        )
    return results


def play_question(
    problem: Problem,
    code_responses: Sequence[str],
    test_responses: Sequence[Sequence[str]],
    executor: Executor,
    history: Sequence[StoredTest] | None = None,
    config: GameConfig | None = None,
) -> QuestionResult:
    """One question of the game (see play_step, which batches many)."""
    return play_step([problem], [code_responses], [test_responses], executor, [list(history or [])], config)[0]
