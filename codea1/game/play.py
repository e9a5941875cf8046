"""One round of the game for a batch of questions, as a pipeline of stages with plain records between them.

    parse_round      responses -> ParsedRound (the code of each candidate, a ParsedSuite per test response)
    resolve_calls    ParsedRound -> ResolvedCalls per question: each CALL with its arguments turned into
                     plain values once, in a child that holds neither GT nor a candidate ("values in")
    ask_oracle       ResolvedCalls -> OracleAnswers per question (GT's value of every resolved CALL, the
                     value of every model EXPECTED in GT's program, each call in a job of its own, so
                     from a clean start; GT's time for the Mistake Book's calls too)
    validate_suite   ParsedSuite + OracleAnswers -> SuiteOracle (V kept tests carrying GT's value, I invalid)
    run_matrix       SuiteOracles + Mistake Book tests -> CandidateRun per candidate (one sandbox job for
                     its book tests and one per suite, each with its own byte budget)
    score_question   CandidateRuns -> CodeScore per candidate (Code-A1's rewards, or CURE's test reward)
    topvar / book    which candidates' suites train the Test LLM; what the Mistake Book learns

`play_step` chains them, batching every sandbox job of all questions into one `Executor.run` call per
stage (the oracle, then the matrix), so a trainer gets all the parallelism of the pool. docs/algorithm.md
describes the game; codea1.judge owns what a test means.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from codea1.config import GameConfig
from codea1.game.mistake_book import BookUpdate, StoredTest
from codea1.game.parsing import ParsedSuite, extract_code, parse_test_suite
from codea1.game.rewards import (
    CodeScore,
    SuiteVerdicts,
    cure_suite_reward,
    cure_test_rewards,
    golden_reward,
    score_candidate,
)
from codea1.game.topvar import topvar_select
from codea1.judge import (
    AssertCase,
    decide,
    encode_expected,
    literal,
    prediction_right,
    run_assertions,
    values_equal,
)
from codea1.judge.resolve import CallSet, ResolvedCalls
from codea1.judge.resolve import resolve_calls as judge_resolve_calls
from codea1.problem import Problem
from codea1.sandbox import Job, JobResult, OnProgress
from codea1.sandbox.api import Executor, Then
from codea1.sandbox.values import UNSERIALIZABLE, contains_unserializable

Pair = tuple[str, str]  # (CALL, GT's value as JSON): one executable test


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
    unresolved: int = 0  # CALLs whose arguments need the function under test, or are not plain values

    @property
    def valid_tests(self) -> int:
        return len(self.kept)

    @property
    def invalid_tests(self) -> int:
        return self.unparseable + self.duplicate + self.gt_error + self.wrong_expected + self.unresolved


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
    timeouts_excused: int = 0  # candidate calls not held against them: GT's own repeat missed the limit too

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
    """The program a candidate runs as: the problem's import lines and GT's top-level imports (the
    reference code hoists GT's imports above the candidate too), then the extracted code."""
    header = "\n".join(
        dict.fromkeys(line for line in (problem.imports.strip(), gt_imports(problem.gt_solution)) if line)
    )
    return f"{header}\n{code}" if header else code


def gt_program(problem: Problem) -> str:
    imports = problem.imports.strip()
    return f"{imports}\n{problem.gt_solution}" if imports else problem.gt_solution


@functools.lru_cache(maxsize=4096)
def gt_imports(gt_solution: str) -> str:
    """GT's top-level `import` / `from ... import` statements, one per line ("" when it does not parse)."""
    try:
        tree = ast.parse(gt_solution)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    return "\n".join(
        ast.unparse(node)
        for node in tree.body
        if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and node.module != "__future__"
    )


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _run(executor: Executor, jobs: list, progress: OnProgress, then: Then = None) -> list:
    if not jobs:
        return []
    kwargs = {"then": then} if then is not None else {}
    if progress is None:
        return executor.run(jobs, **kwargs)
    return executor.run(jobs, progress=progress, **kwargs)


# ---------------------------------------------------------------------- stage 1: parse
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
        for p, per_q in zip(problems, test_responses)
    ]
    return ParsedRound(codes, suites)


# ---------------------------------------------------------------------- stage 1b: values in
def values_program(problem: Problem) -> str:
    """Where argument expressions are evaluated: the problem's and GT's imports, no GT, no candidate."""
    return "\n".join(dict.fromkeys(line for line in (problem.imports.strip(), gt_imports(problem.gt_solution)) if line))


def resolve_calls(
    problems: Sequence[Problem],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
) -> list[ResolvedCalls]:
    """Values in (codea1.judge.resolve): every CALL of each question's suites becomes the function under
    test applied to plain values, once, and the same values go to GT and to every candidate."""
    sets = [
        CallSet(
            problem.id,
            problem.entry_point,
            values_program(problem),
            [t.call for per_code in suites[q] for suite in per_code for t in suite.tests],
        )
        for q, problem in enumerate(problems)
    ]
    return judge_resolve_calls(sets, executor, config.test_timeout, progress)


# ---------------------------------------------------------------------- stage 2: oracle
@dataclass
class OracleAnswers:
    """GT's answers for one question, by source text.

    gt: CALL -> GT's value (only calls GT answered with plain data); predicted: EXPECTED -> its value
    (literals read here, other expressions evaluated in GT's program, as the reference code does);
    gt_seconds: CALL -> GT's time for it; gt_error: why GT's program did not run, if it did not.
    """

    gt: dict[str, Any] = field(default_factory=dict)
    predicted: dict[str, Any] = field(default_factory=dict)
    gt_seconds: dict[str, float] = field(default_factory=dict)
    gt_error: str | None = None


def ask_oracle(
    problems: Sequence[Problem],
    suites: Sequence[Sequence[Sequence[ParsedSuite]]],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
    resolved: Sequence[ResolvedCalls] | None = None,
    histories: Sequence[Sequence[StoredTest]] | None = None,
) -> list[OracleAnswers]:
    """Runs every distinct resolved CALL of each question in GT's program (answers are keyed by the
    resolved CALL) and every non-literal EXPECTED, each in a job of its own: every GT call starts from
    GT's clean module state, so no test (a sibling sample's stateful call, an EXPECTED with side effects)
    can change another test's GT answer, and a slow GT is spread over the workers. The Mistake Book's
    calls (`histories`) are timed the same way (gt_seconds only), so a replayed test's time limit is set
    by GT's own time, as a new test's is."""

    if resolved is None:
        resolved = resolve_calls(problems, suites, executor, config, progress)
    answers = [OracleAnswers() for _ in problems]
    # a book test's GT answered within test_timeout when it was kept; timed now, under this step's load, it
    # gets the limit a candidate would, and a GT that misses even that counts as taking all of it
    book_limit = config.timeout_factor * config.test_timeout
    jobs, plan = [], []  # plan: (question, "gt" | "book" | "expected", sources)
    for q, problem in enumerate(problems):
        tests = [t for per_code in suites[q] for suite in per_code for t in suite.tests]
        calls = _unique([c for c in (resolved[q].calls.get(t.call) for t in tests) if c])
        in_suites = set(calls)
        book = _unique([t.call for t in (histories[q] if histories is not None else ()) if t.call not in in_suites])
        pending = []
        for source in _unique([t.expected for t in tests]):
            ok, value = literal(source)
            if ok:
                answers[q].predicted[source] = value
            else:
                pending.append(source)
        for kind, sources, limit in (("gt", calls, config.test_timeout), ("book", book, book_limit)):
            for k, call in enumerate(sources):
                jobs.append(Job(id=f"{kind}:{problem.id}#{k}", code=gt_program(problem), calls=[call], timeout=limit))
                plan.append((q, kind, [call]))
        for source in pending:  # one job each: an EXPECTED with side effects reaches no other test
            jobs.append(
                Job(id=f"expected:{problem.id}", code=gt_program(problem), calls=[source], timeout=config.test_timeout)
            )
            plan.append((q, "expected", [source]))
    for (q, kind, sources), result in zip(plan, _run(executor, jobs, progress)):
        answer = answers[q]
        if kind == "gt" and not result.defined and answer.gt_error is None:
            answer.gt_error = result.error or "GT did not run"
        for source, res in zip(sources, result.results, strict=False):
            if kind == "book":
                answer.gt_seconds[source] = book_limit if res.status == "timeout" else float(res.seconds or 0.0)
            if res.status != "ok" or contains_unserializable(res.value):
                continue
            if kind == "gt":
                answer.gt[source] = res.value
                answer.gt_seconds[source] = float(res.seconds or 0.0)
            elif kind == "expected":
                answer.predicted[source] = res.value
    return answers


def validate_suite(
    parsed: ParsedSuite, answers: OracleAnswers, config: GameConfig, resolved: ResolvedCalls | None = None
) -> SuiteOracle:
    """Oracle validation of one suite: a CALL that cannot be turned into values is dropped (invalid), a
    repeated CALL (the same resolved call) is dropped (invalid), a CALL GT could not answer is dropped
    (invalid), and every other test is kept with its resolved CALL and GT's value; a wrong prediction of
    that value is counted invalid but kept (config.test_validity says what a right prediction is).
    Without `resolved` the CALLs are taken as written."""
    out = SuiteOracle(unparseable=parsed.unparseable, nonprintable=parsed.nonprintable)
    seen: set[str] = set()
    for test in parsed.tests:
        call = resolved.calls.get(test.call) if resolved is not None else test.call
        if call is None:
            out.unresolved += 1
            continue
        if call in seen:
            out.duplicate += 1
            continue
        seen.add(call)
        if call not in answers.gt:
            out.gt_error += 1
            continue
        value = answers.gt[call]
        ok = test.expected in answers.predicted and prediction_right(
            test.op, answers.predicted[test.expected], value, config.test_validity, config.float_tol
        )
        if not ok:
            out.wrong_expected += 1
        out.kept.append(KeptTest(call, value, encode_expected(value), ok))
    return out


# ---------------------------------------------------------------------- stage 3: execution matrix
@dataclass
class CandidateRun:
    """What one candidate did: whether its program ran (valid), its verdict on each executable test, and
    (CURE) its plain value of each call."""

    valid: bool = False
    passed: dict[Pair, bool] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    excused: set[Pair] = field(default_factory=set)  # timed out twice while GT's own repeat timed out too

    @property
    def timeouts_excused(self) -> int:
        return len(self.excused)


Group = list[tuple[Pair, Any]]  # the executable tests of one sandbox job: (CALL, GT's value as JSON), value


def _groups(history: Sequence[StoredTest], suites: Sequence[SuiteOracle]) -> list[Group]:
    """The candidate's jobs: its Mistake Book tests, then the kept tests of each suite, each group its own
    job (its own byte budget and time, so no suite's large values or slow calls reach another's verdicts).
    A (CALL, value) pair runs once, in the first group that has it."""
    seen: set[Pair] = set()
    groups: list[Group] = []
    for items in [[(t.call, t.expected_json, t.expected) for t in history]] + [
        [(k.call, k.expected_json, k.expected) for k in s.kept] for s in suites
    ]:
        group = []
        for call, exp_json, value in items:
            if (call, exp_json) not in seen:
                seen.add((call, exp_json))
                group.append(((call, exp_json), value))
        groups.append(group)
    return [g for g in groups if g] or [[]]  # an empty candidate still runs once: valid when it runs


def _cure_groups(
    history: Sequence[StoredTest],
    oracle_out: Sequence[Sequence[SuiteOracle]],
    parsed: Sequence[Sequence[ParsedSuite]],
    resolved: ResolvedCalls | None = None,
) -> list[Group]:
    """CURE: every candidate runs the book tests, every kept test of the question, and the resolved calls
    GT could not answer (a correct code may raise there too), so tests can be judged across codes; one
    group per suite as for Code-A1, the unanswered calls in a group of their own."""
    groups = _groups(history, [s for per_code in oracle_out for s in per_code])
    seen = {pair[0] for group in groups for pair, _ in group}
    extra: Group = []
    for test in (t for per_code in parsed for suite in per_code for t in suite.tests):
        call = resolved.calls.get(test.call) if resolved is not None else test.call
        if call is not None and call not in seen:
            seen.add(call)
            extra.append(((call, encode_expected(UNSERIALIZABLE)), UNSERIALIZABLE))
    return [g for g in [*groups, extra] if g] or [[]]


def run_matrix(
    problems: Sequence[Problem],
    parsed: ParsedRound,
    histories: Sequence[Sequence[StoredTest]],
    oracle_out: Sequence[Sequence[Sequence[SuiteOracle]]],
    answers: Sequence[OracleAnswers],
    executor: Executor,
    config: GameConfig,
    progress: OnProgress = None,
    resolved: Sequence[ResolvedCalls] | None = None,
) -> dict[tuple[int, int], CandidateRun]:
    """Per candidate, one sandbox job for its Mistake Book tests and one per suite (in CURE mode, every
    test of the question, grouped the same way); each job's time limit comes from GT's time for its own
    calls. Identical (CALL, value) pairs of a candidate run once. Every candidate runs, an empty one too:
    as in the reference code, code that compiles and runs is valid (in every one of its jobs)."""

    cure = config.selfplay_reward == "cure"
    jobs, plan = [], []  # plan[n]: (question, candidate, pairs, values) of job n
    for q, problem in enumerate(problems):
        shared = (
            _cure_groups(histories[q], oracle_out[q], parsed.suites[q], resolved[q] if resolved is not None else None)
            if cure
            else None
        )
        for m, code in enumerate(parsed.codes[q]):
            groups = shared if shared is not None else _groups(histories[q], oracle_out[q][m])
            for g, group in enumerate(groups):
                pairs, values = [pair for pair, _ in group], [value for _, value in group]
                slowest = max((answers[q].gt_seconds.get(call, 0.0) for call, _ in pairs), default=0.0)
                jobs.append(
                    Job(
                        id=f"cand:{problem.id}:{m}:{g}",
                        code=candidate_program(problem, code),
                        calls=[call for call, _ in pairs],
                        timeout=max(config.test_timeout, config.timeout_factor * slowest),
                    )
                )
                plan.append((q, m, pairs, values))
    # outside CURE a candidate's values matter only for their verdicts: each job is reduced to them as it
    # ends, so a batch's values are never held together (a large batch of large values would otherwise
    # stay in the parent until the last job ends)
    judge = None if cure else _verdicts_only(config.float_tol)
    first = _run(executor, jobs, progress, (lambda n, res: judge(res, plan[n][3])) if judge else None)
    results = _recheck_timeouts(problems, jobs, plan, first, executor, judge)
    runs: dict[tuple[int, int], CandidateRun] = {}
    for (q, m, pairs, values), (result, excused) in zip(plan, results, strict=True):
        run = runs.get((q, m))
        if run is None:
            run = runs[q, m] = CandidateRun(valid=True)
        run.valid = run.valid and bool(result.defined)
        for i, (pair, value, res) in enumerate(zip(pairs, values, result.results, strict=True)):
            if i in excused:
                run.excused.add(pair)
            if cure:
                ok = res.status == "ok" and not contains_unserializable(res.value)
                run.values[pair[0]] = res.value if ok else UNSERIALIZABLE
                run.passed[pair] = ok and values_equal(res.value, value, config.float_tol)
            else:
                run.passed[pair] = res.status == "pass" or i in excused
    return runs


def _verdicts_only(float_tol: float | None) -> Callable[[JobResult, Sequence[Any]], JobResult]:
    """A job's result decided against its expected values (one per call), its values then dropped."""
    return lambda result, expected: decide(result, expected, float_tol).without_values()


def _recheck_timeouts(
    problems: Sequence[Problem],
    jobs: list[Job],
    plan: list,
    results: list[JobResult],
    executor: Executor,
    judge: Callable[[JobResult, Sequence[Any]], JobResult] | None = None,
) -> list[tuple[JobResult, set[int]]]:
    """Timeouts that do not pay for noise. GT's time, which sets the limit, was measured in another stage
    under other load: in the round-3 audit a correct candidate near the limit failed 3 of 308 calls on a
    loaded machine (benchmarks/timeout_noise.py measures it here). So each call a candidate timed out on
    is run again in GT's program with the same limit, now:
    - GT's repeat times out too: the limit cannot be met on this machine now, and the call is excused
      (not held against the candidate);
    - GT's repeat took more than half the limit (the machine is slow now): the candidate's call runs once
      more and keeps that outcome;
    - else the timeout stands (a looping candidate costs one fast GT call more, no second wait).
    judge(result, expected), where given, decides the second runs as the first (plan[n][3]: job n's
    expected values). Returns (result, indices of excused calls) per job."""
    out = [(result, set()) for result in results]
    late = [
        (n, [i for i, r in enumerate(res.results) if r.status == "timeout"])
        for n, res in enumerate(results)
        if res.defined
    ]
    late = [(n, idx) for n, idx in late if idx]
    if not late:
        return out
    gt_jobs = [
        Job(
            id=f"gt-again:{problems[plan[n][0]].id}",
            code=gt_program(problems[plan[n][0]]),
            calls=[jobs[n].calls[i] for i in idx],
            timeout=jobs[n].timeout,
        )
        for n, idx in late
    ]
    retry_plan, retry_jobs = [], []
    for (n, idx), gt in zip(late, executor.run(gt_jobs)):
        slow = []
        for k, i in enumerate(idx):
            repeat = gt.results[k] if gt.defined and k < len(gt.results) else None
            if repeat is None or repeat.status == "timeout":
                out[n][1].add(i)
            elif repeat.seconds > jobs[n].timeout / 2:
                slow.append(i)
        if slow:
            retry_plan.append((n, slow))
            job = jobs[n]
            retry_jobs.append(
                Job(id=f"{job.id}:again", code=job.code, calls=[job.calls[i] for i in slow], timeout=job.timeout)
            )

    def again_judged(j: int, res: JobResult) -> JobResult:
        n, slow = retry_plan[j]
        return judge(res, [plan[n][3][i] for i in slow])

    for (n, slow), again in zip(retry_plan, _run(executor, retry_jobs, None, again_judged if judge else None)):
        for k, i in enumerate(slow):
            if again.defined and k < len(again.results):
                out[n][0].results[i] = again.results[k]
    return out


# ---------------------------------------------------------------------- stage 4: scores and book updates
def score_question(
    history: Sequence[StoredTest],
    oracle_out: Sequence[Sequence[SuiteOracle]],
    runs: Sequence[CandidateRun],
    config: GameConfig,
) -> tuple[list[CodeScore], BookUpdate]:
    """Code-A1's numbers for each candidate of one question, and the Mistake Book update from its valid
    candidates (book tests they passed, kept tests they failed)."""
    scores: list[CodeScore] = []
    update = BookUpdate()
    for suites_oracle, run in zip(oracle_out, runs):
        book_passed = [run.passed.get((t.call, t.expected_json), False) for t in history]
        suites = []
        for suite in suites_oracle:
            passed = [run.passed.get((k.call, k.expected_json), False) for k in suite.kept]
            suites.append(SuiteVerdicts(suite.valid_tests, suite.invalid_tests, passed, suite.nonprintable))
        scores.append(score_candidate(run.valid, book_passed, suites, config))
        if run.valid:  # an excused timeout is not held against the code, but does not clear a book test
            update.passed.extend(
                t
                for t, ok in zip(history, book_passed, strict=True)
                if ok and (t.call, t.expected_json) not in run.excused
            )
            for suite, verdict in zip(suites_oracle, suites):
                update.failed.extend(k.stored() for k, ok in zip(suite.kept, verdict.passed) if not ok)
    return scores, update


def cure_rewards(
    scores: list[CodeScore],
    parsed: Sequence[Sequence[ParsedSuite]],
    answers: OracleAnswers,
    runs: Sequence[CandidateRun],
    config: GameConfig,
    resolved: ResolvedCalls | None = None,
) -> None:
    """Replaces each suite's test_reward by CURE's: the mean reward of its tests (unparseable statements
    count -1), judged on the question's valid codes with the test's OWN predicted value.

    Correct codes: valid candidates that agree with GT on every call GT answered (i.e. pass every
    GT-validated test of the question); the others are wrong codes.
    """
    codes = [m for m, run in enumerate(runs) if run.valid]
    correct = [
        all(
            values_equal(runs[m].values.get(c, UNSERIALIZABLE), v, config.float_tol)
            for c, v in answers.gt.items()
            if c in runs[m].values
        )
        for m in codes
    ]
    for score, per_code in zip(scores, parsed):
        for n, suite in enumerate(per_code):
            firsts: dict[str, Any] = {}
            unresolved = 0
            for t in suite.tests:
                call = resolved.calls.get(t.call) if resolved is not None else t.call
                if call is None:
                    unresolved += 1
                    continue
                firsts.setdefault(call, t)  # the first test of each (resolved) CALL
            calls, tests = list(firsts), list(firsts.values())
            matrix = [
                [
                    prediction_right(
                        t.op,
                        answers.predicted.get(t.expected, UNSERIALIZABLE),
                        runs[c].values.get(call, UNSERIALIZABLE),
                        config.test_validity,
                        config.float_tol,
                    )
                    for call, t in zip(calls, tests)
                ]
                for c in codes
            ]
            per_test = cure_test_rewards(matrix, correct) if codes else [0.0] * len(tests)
            per_test += [-1.0] * (suite.unparseable + unresolved)
            penalty = suite.nonprintable if config.nonprintable_penalty else 0.0
            score.suites[n].test_reward = cure_suite_reward(per_test, penalty)


# ---------------------------------------------------------------------- the whole round
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
    MistakeBook.retrieve(problem.id, config.history_size)). The executor is a codea1.sandbox.Executor
    (anything with its `run(jobs, progress=None)`).
    """
    config = config or GameConfig()
    histories = histories if histories is not None else [[] for _ in problems]
    if not (len(problems) == len(code_responses) == len(test_responses) == len(histories)):
        raise ValueError("play_step: problems, code_responses, test_responses and histories differ in length")
    for q, (per_code, per_tests) in enumerate(zip(code_responses, test_responses)):
        if len(per_code) != len(per_tests):
            raise ValueError(
                f"play_step: question {q} has {len(per_code)} code responses but "
                f"{len(per_tests)} lists of test responses (one list per code)"
            )
    parsed = parse_round(problems, code_responses, test_responses, config)
    resolved = resolve_calls(problems, parsed.suites, executor, config, progress)
    answers = ask_oracle(problems, parsed.suites, executor, config, progress, resolved, histories)
    oracle_out = [
        [[validate_suite(s, answers[q], config, resolved[q]) for s in per_code] for per_code in parsed.suites[q]]
        for q in range(len(problems))
    ]
    runs = run_matrix(problems, parsed, histories, oracle_out, answers, executor, config, progress, resolved)
    results = []
    for q, problem in enumerate(problems):
        question_runs = [runs[q, m] for m in range(len(parsed.codes[q]))]
        scores, update = score_question(histories[q], oracle_out[q], question_runs, config)
        if config.selfplay_reward == "cure":
            cure_rewards(scores, parsed.suites[q], answers[q], question_runs, config, resolved[q])
        selected = topvar_select([[s.test_reward for s in c.suites] for c in scores], config.topvar_ell)
        for score, chosen in zip(scores, selected):
            score.topvar_selected = chosen
        results.append(
            QuestionResult(
                problem.id,
                scores,
                update,
                list(histories[q]),
                oracle_out[q],
                parsed.codes[q],
                answers[q].gt_error,
                timeouts_excused=sum(r.timeouts_excused for r in question_runs),
            )
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


# ---------------------------------------------------------------------- Golden-Tests baseline
def golden_step(
    problems: Sequence[Problem],
    code_responses: Sequence[Sequence[str]],
    executor: Executor,
    config: GameConfig | None = None,
    progress: OnProgress = None,
) -> list[list[float]]:
    """Golden-Tests rewards of many questions: rewards[q][m] = share of problem q's human tests that
    candidate m passes (invalid code 0). Each test means what Python's `assert` means; codea1.judge.oracle runs
    only the calls of the function under test in the candidate's child and decides the rest outside it,
    with GT's program as the oracle for EXPECTED expressions."""
    config = config or GameConfig()
    cases, plan = [], []
    for q, problem in enumerate(problems):
        if not problem.golden_tests:
            continue
        for m, response in enumerate(code_responses[q]):
            cases.append(
                AssertCase(
                    code=candidate_program(problem, extract_code(response)),
                    tests=list(problem.golden_tests),
                    entry_point=problem.entry_point,
                    oracle=gt_program(problem),
                    id=f"golden:{problem.id}:{m}",
                    float_tol=config.float_tol,
                )
            )
            plan.append((q, m))
    rewards = [[0.0] * len(code_responses[q]) for q in range(len(problems))]
    for (q, m), result in zip(plan, run_assertions(executor, cases, config.test_timeout, progress)):
        rewards[q][m] = golden_reward(bool(result.defined), [r.status == "pass" for r in result.results])
    return rewards


def golden_rewards(
    problem: Problem, code_responses: Sequence[str], executor: Executor, config: GameConfig | None = None
) -> list[float]:
    """Golden-Tests rewards of one question's candidates (see golden_step)."""
    return golden_step([problem], [code_responses], executor, config)[0]
