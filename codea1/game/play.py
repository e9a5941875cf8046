"""One round of the game for a batch of questions: parse, validate against GT, execute, score.

`play_step` is the workhorse: it batches every sandbox job of all its questions into as few
`Executor.run` calls as possible (one for the oracle, one for the execution matrix), so a trainer gets
all the parallelism of the pool. `play_question` is the one-question wrapper of the module contract.

Stages (REFERENCE.md section 2, steps 3-6):
1. parse: code from each code response, a ParsedSuite from each test response;
2. oracle: every distinct CALL runs on GT (expected=None gives values), every distinct model EXPECTED
   is evaluated (ast.literal_eval, else in a clean child); per suite this gives V kept tests carrying
   GT's value and I invalid ones;
3. execution matrix: one job per candidate with the Mistake Book tests plus all kept tests of its N
   suites (identical (CALL, value) pairs run once, verdicts fanned back out);
4. rewards, TopVar, Mistake Book updates from valid candidates.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codea1.data.problem import Problem
from codea1.game.config import GameConfig
from codea1.game.mistake_book import BookUpdate, StoredTest, encode_expected
from codea1.game.parsing import ParsedSuite, ParsedTest, extract_code, parse_test_suite
from codea1.game.rewards import (
    CodeScore,
    SuiteVerdicts,
    cure_suite_reward,
    cure_test_rewards,
    golden_reward,
    score_candidate,
)
from codea1.game.topvar import topvar_select
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable, values_equal

Progress = Callable[[int, int], None]
GT_CALLS_PER_JOB = 64  # GT calls of one question are split into jobs of at most this many


@dataclass
class KeptTest:
    """A test that survived the oracle: CALL with GT's value. predicted_ok: the model's own EXPECTED
    agreed with GT (False: counted invalid but still used to attack the code)."""

    call: str
    expected: Any
    expected_json: str
    predicted_ok: bool

    def stored(self) -> StoredTest:
        return StoredTest(call=self.call, expected_json=self.expected_json)


@dataclass
class SuiteOracle:
    """Oracle outcome of one suite: kept tests and the invalid counts by reason."""

    kept: list[KeptTest] = field(default_factory=list)
    unparseable: int = 0
    duplicate: int = 0
    gt_error: int = 0
    wrong_expected: int = 0
    nonprintable: float = 0.0

    @property
    def valid_tests(self) -> int:
        return len(self.kept)

    @property
    def invalid_tests(self) -> int:
        return self.unparseable + self.duplicate + self.gt_error + self.wrong_expected


@dataclass
class QuestionResult:
    """Everything one question produced in one step.

    codes[m]: CodeScore (valid, code_reward, hist_pass, topvar_selected, suites[n]).
    updates: what this question does to the Mistake Book (apply with MistakeBook.apply_step).
    history: the Mistake Book tests replayed (same for all candidates).
    oracles[m][n]: the oracle outcome of suite n of candidate m.
    code_texts[m]: the extracted code of candidate m.
    gt_error: why GT could not run, if it could not (then no generated test is kept).
    """

    question_id: str
    codes: list[CodeScore]
    updates: BookUpdate
    history: list[StoredTest]
    oracles: list[list[SuiteOracle]]
    code_texts: list[str]
    gt_error: str | None = None

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
        return {"question_id": self.question_id, "codes": [c.to_dict() for c in self.codes]}


def candidate_program(problem: Problem, code: str) -> str:
    """The program a candidate runs as: the problem's import lines, then the extracted code."""
    return f"{problem.imports.strip()}\n{code}" if problem.imports.strip() else code


def gt_program(problem: Problem) -> str:
    return candidate_program(problem, problem.gt_solution)


def _literal(source: str) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _claim_holds(op: str, predicted: Any, actual: Any, float_tol: float | None) -> bool:
    """Whether the model's prediction, read with its comparison, agrees with GT's value.

    `==` and `is` claim the value; `!=` and `is not` pin no value, so they never count as correct
    predictions (their CALL is still kept with GT's value, to attack the code).
    """
    if op in ("==", "is"):
        return values_equal(predicted, actual, float_tol)
    return False


def _unique(items: Sequence[str]) -> tuple[list[str], dict[str, int]]:
    order: list[str] = []
    index: dict[str, int] = {}
    for item in items:
        if item not in index:
            index[item] = len(order)
            order.append(item)
    return order, index


@dataclass
class _Oracle:
    """GT values and predicted values of one question, by source text."""

    gt: dict[str, Any]  # call -> GT value (only calls GT answered with a plain value)
    predicted: dict[str, Any]  # expected source -> value (only those that evaluated)
    gt_error: str | None = None
    gt_seconds: dict[str, float] = field(default_factory=dict)  # call -> GT's time for it


def _oracle_jobs(problems: Sequence[Problem], suites: Sequence[Sequence[Sequence[ParsedSuite]]],
                 config: GameConfig) -> tuple[list, list[tuple[int, str, list[str]]], dict[int, _Oracle]]:
    """Builds the GT and predicted-value jobs of all questions; literals are decoded right here."""
    from codea1.sandbox import Job

    jobs = []
    plan: list[tuple[int, str, list[str]]] = []  # (question index, "gt"|"pred", calls)
    oracles: dict[int, _Oracle] = {}
    for q, problem in enumerate(problems):
        tests = [t for per_code in suites[q] for suite in per_code for t in suite.tests]
        calls, _ = _unique([t.call for t in tests])
        oracle = _Oracle(gt={}, predicted={})
        pending = []
        for source in _unique([t.expected for t in tests])[0]:
            ok, value = _literal(source)
            if ok:
                oracle.predicted[source] = value
            else:
                pending.append(source)
        oracles[q] = oracle
        for k in range(0, len(calls), GT_CALLS_PER_JOB):  # chunks: a slow GT is spread over workers
            chunk = calls[k:k + GT_CALLS_PER_JOB]
            jobs.append(Job(id=f"gt:{problem.id}#{k // GT_CALLS_PER_JOB}", code=gt_program(problem),
                            calls=chunk, timeout=config.test_timeout))
            plan.append((q, "gt", chunk))
        if pending:
            jobs.append(Job(id=f"pred:{problem.id}", code=problem.imports.strip(), calls=pending,
                            timeout=config.test_timeout))
            plan.append((q, "pred", pending))
    return jobs, plan, oracles


def validate_suite(parsed: ParsedSuite, oracle: _Oracle, config: GameConfig) -> SuiteOracle:
    """Oracle validation of one suite (REFERENCE.md section 2.4), given GT's and the predicted values."""
    out = SuiteOracle(unparseable=parsed.unparseable, nonprintable=parsed.nonprintable)
    seen: set[str] = set()
    for test in parsed.tests:
        if test.call in seen:
            out.duplicate += 1
            continue
        seen.add(test.call)
        if test.call not in oracle.gt:
            out.gt_error += 1
            continue
        value = oracle.gt[test.call]
        ok = test.expected in oracle.predicted and _claim_holds(
            test.op, oracle.predicted[test.expected], value, config.float_tol
        )
        if not ok:
            out.wrong_expected += 1
        out.kept.append(KeptTest(test.call, value, encode_expected(value), ok))
    return out


def _run(executor: Any, jobs: list, progress: Progress | None) -> list:
    if not jobs:
        return []
    if progress is None:
        return executor.run(jobs)
    return executor.run(jobs, progress=progress)


def play_step(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    test_responses: Sequence[Sequence[Sequence[str]]],
    executor: Any,
    histories: Sequence[Sequence[StoredTest]] | None = None,
    config: GameConfig | None = None,
    progress: Progress | None = None,
) -> list[QuestionResult]:
    """Plays many questions at once; returns one QuestionResult per problem, in order.

    code_responses[q][m]: the m-th code response to problem q; test_responses[q][m][n]: the n-th test
    response written for that code; histories[q]: the Mistake Book tests to replay (use
    MistakeBook.retrieve(problem.id, config.history_size)). The executor is a codea1.sandbox.Executor
    (anything with its `run(jobs, progress=None)`).
    """
    from codea1.sandbox import Job

    config = config or GameConfig()
    histories = histories if histories is not None else [[] for _ in problems]
    if not (len(problems) == len(code_responses) == len(test_responses) == len(histories)):
        raise ValueError("play_step: problems, code_responses, test_responses and histories differ in length")
    for q, (per_code, per_tests) in enumerate(zip(code_responses, test_responses)):
        if len(per_code) != len(per_tests):
            raise ValueError(f"play_step: question {q} has {len(per_code)} code responses but "
                             f"{len(per_tests)} lists of test responses (one list per code)")
    codes = [[extract_code(r) for r in per_q] for per_q in code_responses]
    parsed = [
        [[parse_test_suite(t, p.entry_point, config.max_tests_per_suite) for t in per_code] for per_code in per_q]
        for p, per_q in zip(problems, test_responses)
    ]

    # 1. oracle: GT values of every call, predicted values of every non-literal EXPECTED
    jobs, plan, oracles = _oracle_jobs(problems, parsed, config)
    for (q, kind, calls), result in zip(plan, _run(executor, jobs, progress)):
        oracle = oracles[q]
        if kind == "gt" and not result.defined and oracle.gt_error is None:
            oracle.gt_error = result.error or "GT did not run"
        for call, res in zip(calls, result.results):
            if res.status != "ok" or contains_unserializable(res.value):
                continue
            (oracle.gt if kind == "gt" else oracle.predicted)[call] = res.value
            if kind == "gt":
                oracle.gt_seconds[call] = float(res.seconds or 0.0)
    oracle_out = [
        [[validate_suite(s, oracles[q], config) for s in per_code] for per_code in parsed[q]]
        for q in range(len(problems))
    ]

    # 2. execution matrix: one job per candidate
    cure = config.selfplay_reward == "cure"
    matrix_jobs = []
    matrix_plan: list[tuple[int, int, list[tuple[str, str]], list[Any]]] = []
    for q, problem in enumerate(problems):
        question_pairs = _question_pairs(histories[q], oracle_out[q], parsed[q]) if cure else None
        for m, code in enumerate(codes[q]):
            if not code.strip():
                continue
            if cure:
                pairs, values = question_pairs
            else:
                pairs, values = _candidate_pairs(histories[q], oracle_out[q][m])
            slowest = max((oracles[q].gt_seconds.get(call, 0.0) for call, _ in pairs), default=0.0)
            matrix_jobs.append(Job(
                id=f"cand:{problem.id}:{m}",
                code=candidate_program(problem, code),
                calls=[call for call, _ in pairs],
                expected=None if cure else values,
                timeout=max(config.test_timeout, config.timeout_factor * slowest),
                float_tol=config.float_tol,
            ))
            matrix_plan.append((q, m, pairs, values))
    verdicts: dict[tuple[int, int], dict[tuple[str, str], bool]] = {}
    raw_values: dict[tuple[int, int], dict[str, Any]] = {}
    valid: dict[tuple[int, int], bool] = {}
    for (q, m, pairs, values), result in zip(matrix_plan, _run(executor, matrix_jobs, progress)):
        valid[q, m] = bool(result.defined)
        got: dict[tuple[str, str], bool] = {}
        vals: dict[str, Any] = {}
        for pair, value, res in zip(pairs, values, result.results):
            if cure:
                ok = res.status == "ok" and not contains_unserializable(res.value)
                vals[pair[0]] = res.value if ok else UNSERIALIZABLE
                got[pair] = ok and values_equal(res.value, value, config.float_tol)
            else:
                got[pair] = res.status == "pass"
        verdicts[q, m] = got
        raw_values[q, m] = vals

    # 3. rewards, TopVar, Mistake Book updates
    results = []
    for q, problem in enumerate(problems):
        history = list(histories[q])
        scores: list[CodeScore] = []
        update = BookUpdate()
        for m in range(len(codes[q])):
            is_valid = valid.get((q, m), False)
            got = verdicts.get((q, m), {})
            book_passed = [got.get((t.call, t.expected_json), False) for t in history]
            suites = []
            for suite in oracle_out[q][m]:
                passed = [got.get((k.call, k.expected_json), False) for k in suite.kept]
                suites.append(SuiteVerdicts(suite.valid_tests, suite.invalid_tests, passed, suite.nonprintable))
            scores.append(score_candidate(is_valid, book_passed, suites, config))
            if is_valid:
                update.passed.extend(t for t, ok in zip(history, book_passed) if ok)
                for suite, verdict in zip(oracle_out[q][m], suites):
                    update.failed.extend(k.stored() for k, ok in zip(suite.kept, verdict.passed) if not ok)
        if cure:
            _apply_cure(scores, parsed[q], oracles[q], oracle_out[q], raw_values, valid, q, config)
        selected = topvar_select([[s.test_reward for s in c.suites] for c in scores], config.topvar_ell)
        for score, chosen in zip(scores, selected):
            score.topvar_selected = chosen
        results.append(QuestionResult(problem.id, scores, update, history, oracle_out[q], codes[q],
                                      oracles[q].gt_error))
    return results


def _candidate_pairs(history: Sequence[StoredTest], suites: Sequence[SuiteOracle]
                     ) -> tuple[list[tuple[str, str]], list[Any]]:
    """Distinct (call, expected_json) pairs of the book tests and one candidate's kept tests."""
    pairs: list[tuple[str, str]] = []
    values: list[Any] = []
    seen: set[tuple[str, str]] = set()
    items = [(t.call, t.expected_json, t.expected) for t in history]
    items += [(k.call, k.expected_json, k.expected) for s in suites for k in s.kept]
    for call, exp_json, value in items:
        if (call, exp_json) not in seen:
            seen.add((call, exp_json))
            pairs.append((call, exp_json))
            values.append(value)
    return pairs, values


def _question_pairs(history: Sequence[StoredTest], oracle_out: Sequence[Sequence[SuiteOracle]],
                    parsed: Sequence[Sequence[ParsedSuite]]) -> tuple[list[tuple[str, str]], list[Any]]:
    """CURE mode: every candidate runs the book tests, every kept test of the question, and the calls
    GT could not answer (a correct code may raise there too), so tests can be judged across codes."""
    pairs, values = _candidate_pairs(history, [s for per_code in oracle_out for s in per_code])
    seen_calls = {call for call, _ in pairs}
    for per_code in parsed:
        for suite in per_code:
            for test in suite.tests:
                if test.call not in seen_calls:
                    seen_calls.add(test.call)
                    pairs.append((test.call, encode_expected(UNSERIALIZABLE)))
                    values.append(UNSERIALIZABLE)
    return pairs, values


def _apply_cure(scores: list[CodeScore], parsed: Sequence[Sequence[ParsedSuite]], oracle: _Oracle,
                oracle_out: Sequence[Sequence[SuiteOracle]], raw_values: dict, valid: dict, q: int,
                config: GameConfig) -> None:
    """Replaces each suite's test_reward by CURE's: the mean reward of its tests (unparseable
    statements count -1), judged on the question's valid codes with the test's OWN predicted value.

    Correct codes: valid candidates that agree with GT on every call GT answered (i.e. pass every
    GT-validated test of the question); the others are wrong codes.
    """
    codes = [m for m in range(len(scores)) if valid.get((q, m), False)]
    gt_calls = [c for c in oracle.gt]
    correct = []
    for m in codes:
        vals = raw_values.get((q, m), {})
        correct.append(all(values_equal(vals.get(c, UNSERIALIZABLE), oracle.gt[c], config.float_tol)
                           for c in gt_calls if c in vals))
    for m, score in enumerate(scores):
        for n, suite in enumerate(parsed[m]):
            tests: list[ParsedTest] = []
            seen: set[str] = set()
            for t in suite.tests:
                if t.call not in seen:
                    seen.add(t.call)
                    tests.append(t)
            matrix = []
            for c in codes:
                vals = raw_values.get((q, c), {})
                row = []
                for t in tests:
                    pred = oracle.predicted.get(t.expected, UNSERIALIZABLE)
                    got = vals.get(t.call, UNSERIALIZABLE)
                    row.append(t.op in ("==", "is") and values_equal(got, pred, config.float_tol))
                matrix.append(row)
            per_test = cure_test_rewards(matrix, correct) if codes else [0.0] * len(tests)
            per_test += [-1.0] * suite.unparseable
            penalty = suite.nonprintable if config.nonprintable_penalty else 0.0
            score.suites[n].test_reward = cure_suite_reward(per_test, penalty)


def play_question(
    problem: Problem,
    code_responses: Sequence[str],
    test_responses: Sequence[Sequence[str]],
    executor: Any,
    history: Sequence[StoredTest] | None = None,
    config: GameConfig | None = None,
) -> QuestionResult:
    """One question of the game (see play_step, which batches many)."""
    return play_step([problem], [code_responses], [test_responses], executor, [list(history or [])], config)[0]


# ---------------------------------------------------------------------- Golden-Tests baseline
@dataclass
class _GoldenTest:
    call: str
    expected_source: str | None  # None: `call` is already a boolean check expected True


def _golden_form(statement: str) -> _GoldenTest | None:
    from codea1.sandbox.asserts import parse_assert, split_assert

    parts = split_assert(statement)
    if parts is not None and parts[1] == "==":
        return _GoldenTest(parts[0], parts[2])
    node = parse_assert(statement)
    if node is None:
        return None
    return _GoldenTest(f"bool({ast.unparse(node.test)})", None)


def golden_step(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    executor: Any,
    config: GameConfig | None = None,
    progress: Progress | None = None,
) -> list[list[float]]:
    """Golden-Tests rewards of many questions: rewards[q][m] = share of problem q's human tests that
    candidate m passes (invalid code 0). `assert CALL == EXPECTED` tests compare in the trusted parent;
    any other assert becomes `bool(CONDITION)` expected True. A golden test whose EXPECTED cannot be
    evaluated is dropped (a dataset problem, reported by `codea1 data check`)."""
    from codea1.sandbox import Job

    config = config or GameConfig()
    forms = [[f for f in (_golden_form(t) for t in p.golden_tests) if f is not None] for p in problems]
    expected: list[dict[str, Any]] = [{} for _ in problems]
    jobs, plan = [], []
    for q, problem in enumerate(problems):
        pending = []
        for f in forms[q]:
            if f.expected_source is None:
                continue
            ok, value = _literal(f.expected_source)
            if ok:
                expected[q][f.expected_source] = value
            elif f.expected_source not in pending:
                pending.append(f.expected_source)
        if pending:
            jobs.append(Job(id=f"golden-exp:{problem.id}", code=problem.imports.strip(), calls=pending,
                            timeout=config.test_timeout))
            plan.append((q, pending))
    for (q, pending), result in zip(plan, _run(executor, jobs, progress)):
        for source, res in zip(pending, result.results):
            if res.status == "ok" and not contains_unserializable(res.value):
                expected[q][source] = res.value
    usable = [[f for f in forms[q] if f.expected_source is None or f.expected_source in expected[q]]
              for q in range(len(problems))]
    cand_jobs, cand_plan = [], []
    for q, problem in enumerate(problems):
        calls = [f.call for f in usable[q]]
        values = [True if f.expected_source is None else expected[q][f.expected_source] for f in usable[q]]
        for m, response in enumerate(code_responses[q]):
            code = extract_code(response)
            if not code.strip() or not calls:
                continue
            cand_jobs.append(Job(id=f"golden:{problem.id}:{m}", code=candidate_program(problem, code),
                                 calls=calls, expected=values, timeout=config.test_timeout,
                                 float_tol=config.float_tol))
            cand_plan.append((q, m))
    rewards = [[0.0] * len(code_responses[q]) for q in range(len(problems))]
    for (q, m), result in zip(cand_plan, _run(executor, cand_jobs, progress)):
        rewards[q][m] = golden_reward(bool(result.defined), [r.status == "pass" for r in result.results])
    return rewards


def golden_rewards(problem: Problem, code_responses: Sequence[str], executor: Any,
                   config: GameConfig | None = None) -> list[float]:
    """Golden-Tests rewards of one question's candidates (see golden_step)."""
    return golden_step([problem], [code_responses], executor, config)[0]


def result_to_json(result: QuestionResult) -> str:
    return json.dumps(result.to_dict(), ensure_ascii=True)
