"""One round of the game for stdin/stdout problems: the Test LLM writes inputs, GT's program gives their
outputs, and the candidates' programs are judged by the problem's output rule.

    parse      responses -> each candidate's program, a ParsedSuite of inputs per test response
               (parsing.parse_input_suite: one ```input block per test)
    ask_gt     every distinct input of the question (its suites' and the Mistake Book's) run through GT's
               program in one job, each input from a fresh start and within game.test_timeout: an input
               GT runs to exit status 0 has GT's output as its expected output, any other is invalid; so is
               an input the problem's validator (Problem.validator, where it has one) rejects
    validate   ParsedSuite -> CheckedSuite: kept tests (input, GT's output), duplicates and GT failures
               counted invalid (the same record as function problems')
    matrix     one job per candidate: its program on every distinct kept input and Mistake Book input,
               passed where it exits 0 and its output matches GT's by the problem's rule
    score      game.score.score_question, unchanged: R_C, R_T(alpha), TopVar and the Mistake Book update
               (tests keyed by input and GT's output, under the digest of GT's program) are the same
               numbers as for function problems

No output the Test LLM predicts is needed (GT gives every output), so CURE's test reward, which judges a
test by its own predicted value, does not apply: `check_stdio_config` refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from codea1.config import CURE_REWARDS, GameConfig
from codea1.errors import UserError
from codea1.game.answers import CheckedSuite, KeptTest
from codea1.game.matrix import CandidateRun
from codea1.game.mistake_book import StoredTest
from codea1.game.parsing import ParsedSuite, extract_code, parse_input_suite
from codea1.judge.kinds.stdio import (
    judge_outputs,
    program_compiled,
    program_job,
    program_runs,
    validator_accepts,
    validator_job,
)
from codea1.judge.literals import decode_expected, encode_expected
from codea1.problem import Problem
from codea1.sandbox.api import Executor, OnProgress


@dataclass
class StdioAnswers:
    """GT's outputs for one question: input -> output (inputs GT ran to exit status 0), input -> why not
    (the others), and why GT's program could not run at all, if it could not."""

    outputs: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    gt_error: str | None = None


def check_stdio_config(config: GameConfig) -> None:
    """A UserError for settings a stdin/stdout round cannot honour."""
    if config.selfplay_reward in CURE_REWARDS:
        raise UserError(
            f"game.selfplay_reward={config.selfplay_reward} judges a test by the output it predicts, and tests of stdin/stdout "
            "problems are inputs only (GT gives every output): use game.selfplay_reward=a1"
        )


def parse_stdio(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    config: GameConfig,
) -> tuple[list[list[str]], list[list[list[ParsedSuite]]]]:
    """(codes[q][m], suites[q][m][n]) of a round: each program read in its problem's language."""
    codes = [[extract_code(r, p.language) for r in per_q] for p, per_q in zip(problems, code_responses, strict=True)]
    suites = [
        [[parse_input_suite(t, config.max_tests_per_suite) for t in per_code] for per_code in per_q]
        for per_q in test_responses
    ]
    return codes, suites


def _distinct(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def ask_gt_stdio(
    problems: Sequence[Problem],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    histories: Sequence[Sequence[StoredTest]],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
) -> list[StdioAnswers]:
    """GT's output of every distinct input of each question (see the module docstring)."""
    inputs = [
        _distinct([t.call for per_code in per_q for s in per_code for t in s.tests] + [t.call for t in history])
        for per_q, history in zip(suites, histories, strict=True)
    ]
    jobs = [
        program_job(f"gt:{p.id}", p, p.gt_solution, ins, config.test_timeout)
        for p, ins in zip(problems, inputs, strict=True)
    ]
    checked = [q for q, p in enumerate(problems) if p.validator]  # the questions whose inputs a validator checks
    jobs += [validator_job(f"validator:{problems[q].id}", problems[q], inputs[q], config.test_timeout) for q in checked]
    results = executor.run(jobs, progress) if jobs else []
    accepted = {
        q: validator_accepts(res, len(inputs[q])) for q, res in zip(checked, results[len(problems) :], strict=True)
    }
    answers = []
    for q, (p, ins, res) in enumerate(zip(problems, inputs, results[: len(problems)], strict=True)):
        answer = StdioAnswers()
        runs = program_runs(p, res, len(ins))
        allowed = accepted.get(q, [True] * len(ins))
        for text, run, ok in zip(ins, runs, allowed, strict=True):
            if run.status == "compile":
                answer.gt_error = f"GT does not run: {run.error}"
            if not ok:
                answer.failed[text] = "the problem's input validator rejects it"
            elif run.status == "ok" and run.exit_code == 0:  # a status other than 0 (SystemExit's too): GT refuses it
                answer.outputs[text] = run.stdout
            else:
                answer.failed[text] = run.error or run.status
        answers.append(answer)
    return answers


def validate_stdio(suite: ParsedSuite, answers: StdioAnswers) -> CheckedSuite:
    """The suite's tests GT answered, each once (a repeat counts as a duplicate, an input GT fails on as a
    GT error, both invalid)."""
    checked = CheckedSuite(unparseable=suite.unparseable, nonprintable=suite.nonprintable)
    seen: set[str] = set()
    for t in suite.tests:
        if t.call in seen:
            checked.duplicate += 1
            continue
        seen.add(t.call)
        output = answers.outputs.get(t.call)
        if output is None:
            checked.gt_error += 1
            continue
        checked.kept.append(KeptTest(t.call, output, encode_expected(output), True))
    return checked


def stdio_matrix(
    problems: Sequence[Problem],
    codes: Sequence[Sequence[str]],
    checked: Sequence[Sequence[Sequence[CheckedSuite]]],
    histories: Sequence[Sequence[StoredTest]],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
) -> list[list[CandidateRun]]:
    """runs[q][m]: candidate m of question q on every kept input of its own suites and every Mistake Book
    input of the question, one job each."""
    plan: list[tuple[int, int, list[tuple[str, str]]]] = []
    for q, (per_q, history) in enumerate(zip(checked, histories, strict=True)):
        book = [(t.call, t.expected_json) for t in history]
        for m, per_code in enumerate(per_q):
            kept = [(k.call, k.expected_json) for s in per_code for k in s.kept]
            plan.append((q, m, list(dict.fromkeys(book + kept))))
    jobs = [
        program_job(f"{problems[q].id}#{m}", problems[q], codes[q][m], [i for i, _ in pairs], config.test_timeout)
        for q, m, pairs in plan
    ]
    runs = [[CandidateRun() for _ in per_q] for per_q in codes]
    groups = []
    for (q, m, pairs), res in zip(plan, executor.run(jobs, progress) if jobs else [], strict=True):
        p = problems[q]
        expected = [decode_expected(e) for _, e in pairs]
        expected = [e if isinstance(e, str) else "" for e in expected]
        groups.append((p, program_runs(p, res, len(pairs)), [i for i, _ in pairs], expected))
        runs[q][m].valid = program_compiled(p, res)
    for (q, m, pairs), verdicts in zip(plan, judge_outputs(groups, executor), strict=True):
        runs[q][m].passed = {pair: v.passed for pair, v in zip(pairs, verdicts, strict=True)}
    return runs
