"""One training step of each method: problems -> rollouts -> execution -> rewards and Mistake Book -> GRPO.

A method is one object (`METHODS[cfg.method]`) that says which policies it needs (`roles`) and plays
one step (`step`); the trainer around it (codea1.train.loop) only orders the data, checkpoints and logs.
- `A1`: B questions -> M codes each (code policy) -> N test suites per code (test policy) -> oracle
  validation and execution in the sandbox (codea1.game.play_step) -> rewards -> Mistake Book update
  (one transaction, tagged with the step) -> GRPO: the code policy on groups of M, the test policy on
  the N suites of each TopVar-selected code.
- `SelfPlay`: the same game, but one policy writes the code and the tests and learns from both.
- `Golden`: the code policy alone, rewarded by the share of the dataset's golden tests it passes.
Whether the test prompt shows the code (white-box) or only the question (black-box) is the game's
`blackbox_tests` (black-box by default for selfplay only). Dynamic sampling (train.dynamic_sampling) runs
between the play and the Mistake Book update: `refill_equal_groups` samples equal groups' questions
again; `dynamic_sample` (dapo) drops them and plays new questions drawn from a reserve (codea1.train.dynamic).

Every sampling call is seeded from (seed, step, role), so a replayed step samples the same way; the
`debug_kill` calls mark the points where the resume tests kill the process.
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codea1.config import Config, GameConfig, Sampling
from codea1.game import extract_code, golden_step, merge_updates, play_step
from codea1.game.mistake_book import gt_digest
from codea1.game.prompts import code_messages, test_messages, with_prefix
from codea1.game.rewards import cure_normalize
from codea1.judge.kinds import calls_entry
from codea1.method_traits import TRAITS, MethodTraits
from codea1.rl.api import ConcurrentLearner, PolicyHandle
from codea1.train.checkpoint import debug_kill
from codea1.train.dynamic import dapo_metrics, reserve_draws, reserve_order, select_groups

if TYPE_CHECKING:
    from codea1.game import QuestionResult
    from codea1.game.mistake_book import MistakeBook
    from codea1.inference.rollout import Sample
    from codea1.problem import Problem
    from codea1.sandbox import Executor
    from codea1.train.one_step_off import OneStepOff

PHASES = ("gen_code", "gen_tests", "execute", "learn")


def derive_seed(seed: int, step: int, tag: str) -> int:
    """A 63-bit seed from (run seed, step, phase tag): the same step samples the same way on a replay."""
    digest = hashlib.sha256(f"{seed}/{step}/{tag}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


@dataclass
class StepEnv:
    """What a step works with: the run config, the policies in their roles (test_policy is None for
    golden and the code policy itself for selfplay), the Mistake Book, the sandbox, a callback that
    names the current phase, and the training problems (where dynamic sampling, dapo, draws new
    questions from)."""

    cfg: Config
    code_policy: PolicyHandle
    test_policy: PolicyHandle | None
    book: MistakeBook
    executor: Executor
    phase: Callable[[str], None]
    problems: Sequence[Problem] = ()
    # train.one_step_off: each step's samples come from here, drawn one update behind in the background
    one_step_off: OneStepOff | None = None


@dataclass
class Round:
    """One question's round of the game as a step samples it: the problem, its M code samples, and the N
    test suites written for each code (suites[m][n])."""

    problem: Problem
    codes: list[Sample]
    suites: list[list[Sample]]

    @property
    def code_texts(self) -> list[str]:
        return [s.text for s in self.codes]

    @property
    def suite_texts(self) -> list[list[str]]:
        return [[s.text for s in suites] for suites in self.suites]

    @property
    def test_samples(self) -> list[Sample]:
        """Every test suite of the round, code by code."""
        return [s for suites in self.suites for s in suites]


@dataclass
class StepOutput:
    """What one step produced: the metrics row and the rollout lines."""

    metrics: dict[str, Any]
    rollouts: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def timed(seconds: dict[str, float], name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start  # a phase may run more than once


def sample(policy: PolicyHandle, prompts: list, sampling: Sampling, n: int, seed: int) -> list[list[Any]]:
    """n samples per prompt, seeded; the global torch RNG is also set from the seed, so what runs after
    a step does not depend on how many random numbers the sampling drew."""
    import torch

    from codea1.inference.rollout import GenerationConfig

    torch.manual_seed(seed)
    return policy.generate(prompts, GenerationConfig.of(sampling, n=n, seed=seed))


def sample_codes(env: StepEnv, step: int, batch: list, tag: str = "gen_code") -> list[list[Any]]:
    """codes[b][m]: the M code samples of question b (seeded by step and `tag`)."""

    cfg = env.cfg
    prefix = cfg.generation.code.response_prefix
    return sample(
        env.code_policy,
        [with_prefix(code_messages(p), prefix, p) for p in batch],
        cfg.generation.code,
        cfg.game.M,
        derive_seed(cfg.seed, step, tag),
    )


def sample_tests(
    env: StepEnv, step: int, batch: list, codes: list[list[Any]], tag: str = "gen_tests"
) -> list[list[list[Any]]]:
    """tests[b][m]: the N test suites written for code m of question b. White-box: one prompt per code,
    N samples each; black-box: one prompt per question, M*N samples cut into M groups of N."""

    cfg, game = env.cfg, env.cfg.game
    M, N = game.M, game.N
    seed = derive_seed(cfg.seed, step, tag)
    prefix = cfg.generation.test.response_prefix
    if game.blackbox_tests:
        rows = sample(
            env.test_policy,
            [with_prefix(test_messages(p, "", game), prefix, p) for p in batch],
            cfg.generation.test,
            M * N,
            seed,
        )
        return [[row[m * N : (m + 1) * N] for m in range(M)] for row in rows]
    prompts = [
        with_prefix(test_messages(p, extract_code(s.text, p.language), game), prefix, p)
        for p, row in zip(batch, codes, strict=True)
        for s in row
    ]
    rows = sample(env.test_policy, prompts, cfg.generation.test, N, seed)
    return [rows[b * M : (b + 1) * M] for b in range(len(batch))]


def draw_round(
    env: StepEnv, step: int, batch: list, tests: bool, seconds: dict[str, float]
) -> tuple[list[list[Any]], list[list[list[Any]]] | None]:
    """A step's codes[b][m] and, where the method writes tests, tests[b][m][n], sampled as the step's seeds
    say with env's policies (the learners, or one_step_off's copies of them); seconds per phase added."""
    with timed(seconds, "gen_code"):
        codes = sample_codes(env, step, batch)
    debug_kill("gen_code", step)
    if not tests:
        return codes, None
    env.phase("generate tests")
    with timed(seconds, "gen_tests"):
        suites = sample_tests(env, step, batch, codes)
    debug_kill("gen_tests", step)
    return codes, suites


def step_samples(
    env: StepEnv, step: int, batch: list, tests: bool, seconds: dict[str, float]
) -> tuple[list[list[Any]], list[list[list[Any]]] | None, dict[str, float]]:
    """The step's samples: drawn now, or taken from one-step-off rollout (its background seconds counted
    as the phases', and two metrics of its own: the seconds the step waited for it, and its lag in
    updates behind a synchronous run's samples)."""
    if env.one_step_off is None:
        return (*draw_round(env, step, batch, tests, seconds), {})
    rollout, waited = env.one_step_off.take(step, batch)
    for name, value in rollout.seconds.items():
        seconds[name] = seconds.get(name, 0.0) + value
    lag = {"time_rollout_wait": waited, "rollout_lag": float(step - 1 - rollout.weights_step)}
    return rollout.codes, rollout.tests, lag


def _equal(rewards: Sequence[float]) -> bool:
    return len(rewards) > 1 and max(rewards) == min(rewards)


def play_again(
    env: StepEnv, step: int, sub: list, histories: list, tag: str, seconds: dict[str, float]
) -> tuple[list[Round], list]:
    """Samples `sub`'s codes and tests afresh (seed tags gen_code_TAG, gen_tests_TAG, so a replayed step
    samples the same) and plays them against `histories`; the extra rounds of refill and dapo."""
    with timed(seconds, "gen_code"):
        codes = sample_codes(env, step, sub, f"gen_code_{tag}")
    with timed(seconds, "gen_tests"):
        tests = sample_tests(env, step, sub, codes, f"gen_tests_{tag}")
    rounds = [Round(p, c, t) for p, c, t in zip(sub, codes, tests, strict=True)]
    with timed(seconds, "execute"):
        texts = [r.code_texts for r in rounds]
        results = play_step(sub, texts, [r.suite_texts for r in rounds], env.executor, histories, env.cfg.game)
    return rounds, results


def refill_equal_groups(
    env: StepEnv, step: int, batch: list, rounds: list, results: list, histories: list, seconds: dict[str, float]
) -> dict[str, float]:
    """Dynamic sampling by refill (train.dynamic_sampling refill; dapo is `dynamic_sample`): a question whose
    M codes all got the same R_C gives the Code LLM no gradient, so up to `refill_rounds` times its codes
    and their tests are sampled again (seeds of their own, so a resume repeats them) and played against
    the same Mistake Book tests; a new group with unequal rewards replaces the old one in `rounds` and
    `results` (in place). Returns the step's refill metrics."""

    cfg = env.cfg
    if cfg.train.refill_rounds == 0:
        return {}
    equal = [b for b, r in enumerate(results) if _equal(r.code_rewards)]
    out = {"refill_equal_groups": float(len(equal)), "refill_recovered": 0.0}
    for attempt in range(1, cfg.train.refill_rounds + 1):
        if not equal:
            break
        sub = [batch[b] for b in equal]
        again, played = play_again(env, step, sub, [histories[b] for b in equal], f"refill{attempt}", seconds)
        still = []
        for b, new_round, result in zip(equal, again, played, strict=True):
            if _equal(result.code_rewards):
                still.append(b)
            else:
                rounds[b], results[b] = new_round, result
                out["refill_recovered"] += 1.0
        equal = still
    return out


Group = tuple[list[Any], list[float]]  # one GRPO group: its samples and their rewards


@dataclass
class StepGroups:
    """The GRPO groups a step trains on, per role ("code", "test"), and what dynamic sampling (dapo)
    added to the step: the questions it drew, their rounds (golden: code rows) and results (golden:
    rewards), the draw each came from, and its metrics."""

    groups: dict[str, list[Group]]
    questions: list[Problem] = field(default_factory=list)
    rounds: list[Any] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    draws: list[int] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)

    def samples(self, role: str) -> list[Any]:
        return [s for samples, _ in self.groups[role] for s in samples]

    def rewards(self, role: str) -> list[list[float]]:
        return [list(rewards) for _, rewards in self.groups[role]]


def game_groups(
    rounds: Sequence[Round], results: Sequence[QuestionResult], game: GameConfig | None = None
) -> dict[str, list[Group]]:
    """A played batch's GRPO groups: the Code LLM's, one per question (its M codes and their R_C), and the
    Test LLM's, one per TopVar-selected code (its N suites and their R_T), in question order. Under CURE's
    reward (game.selfplay_reward cure) the Test LLM's group is the question (its M x N suites), as CURE
    normalises over a question's tests: none for a question whose tests are not trained (no correct
    code) or whose suites all earned the same (cure_normalize's std 0)."""
    pairs = list(zip(rounds, results, strict=True))
    if game is not None and game.selfplay_reward == "cure":
        tests = [
            (r.test_samples, flat)
            for r, res in pairs
            if res.tests_trained and cure_normalize(flat := _flat(res.test_rewards)) is not None
        ]
    else:
        tests = [
            (r.suites[m], [s.test_reward for s in c.suites])
            for r, res in pairs
            for m, c in enumerate(res.codes)
            if c.topvar_selected
        ]
    return {"code": [(r.codes, res.code_rewards) for r, res in pairs], "test": tests}


def reserve_batches(env: StepEnv, step: int, batch: Sequence[Problem]) -> list[list[Problem]]:
    """The batches of new questions a step may draw (codea1.train.dynamic.reserve_order): every training
    problem but the step's own batch, in an order seeded by (seed, step), never the data stream."""
    cfg = env.cfg
    order_seed = derive_seed(cfg.seed, step, "dapo-reserve")
    order = reserve_order(order_seed, [p.id for p in env.problems], [p.id for p in batch])
    draws = reserve_draws(order, cfg.train.batch_size, cfg.train.dapo_max_draws)
    return [[env.problems[i] for i in draw] for draw in draws]


def play_draw(env: StepEnv, step: int, sub: list, draw: int, seconds: dict[str, float]) -> tuple:
    """Plays draw `draw` of new questions in full (codes, tests, execution against the Mistake Book as the
    step found it, rewards), with sampling seeds of its own; returns (rounds, results, groups)."""
    histories = [env.book.retrieve(p.id, env.cfg.game.history_size, gt_digest(p)) for p in sub]
    rounds, results = play_again(env, step, sub, histories, f"dapo{draw}", seconds)
    return rounds, results, game_groups(rounds, results, env.cfg.game)


def dynamic_sample(
    env: StepEnv, step: int, batch: list, own: dict[str, list[Group]], play_new: Callable[[list, int], tuple]
) -> StepGroups:
    """The groups a step trains on. Without dynamic_sampling dapo: `own`, the groups of its batch. With it
    (codea1.train.dynamic.select_groups): the groups of `own` with unequal rewards, then those of batches
    of new questions from the reserve, each played by play_new(questions, draw) -> (rounds, results,
    groups), until each role holds as many groups as `own` has or train.dapo_max_draws draws were made;
    surplus groups are dropped in draw order."""
    if env.cfg.train.dynamic_sampling != "dapo":
        return StepGroups(own)
    out = StepGroups({})
    played = {0: own}
    draws = reserve_batches(env, step, batch)

    def play(draw: int) -> dict[str, list[list[float]]] | None:
        if draw > len(draws):
            return None
        if draw > 0:
            rounds, results, played[draw] = play_new(draws[draw - 1], draw)
            out.questions += draws[draw - 1]
            out.rounds += rounds
            out.results += results
            out.draws += [draw] * len(rounds)
        return {role: [list(rewards) for _, rewards in groups] for role, groups in played[draw].items()}

    picked, made = select_groups({role: len(g) for role, g in own.items()}, env.cfg.train.dapo_max_draws, play)
    out.groups = {role: [played[d][role][g] for d, g in p.kept] for role, p in picked.items()}
    out.metrics = dapo_metrics(picked, made)
    return out


def advantages(groups: Sequence[Sequence[float]], cfg: Config) -> list[float]:
    """GRPO advantages of reward groups, flattened in order."""
    from codea1.rl.grpo import group_advantages

    return _flat(group_advantages([list(g) for g in groups], std_norm=cfg.policy.adv_std_norm))


def advantages_of_tests(groups: Sequence[Sequence[float]], cfg: Config) -> list[float]:
    """The Test LLM's advantages: GRPO's (advantages), or under CURE's reward CURE's own normalisation of
    each question's rewards (population std, no epsilon: codea1.game.rewards.cure_normalize)."""
    if cfg.game.selfplay_reward != "cure":
        return advantages(groups, cfg)
    return _flat([cure_normalize(list(g)) or [0.0] * len(g) for g in groups])


# ----------------------------------------------------------------------------------------------------
# the methods


class Method:
    """What every method object has: its traits (codea1.method_traits: what it is, for the rooms that
    cannot import this one), read here as properties, `roles` and `step`."""

    traits: MethodTraits

    @property
    def name(self) -> str:
        return self.traits.name

    @property
    def writes_tests(self) -> bool:
        return self.traits.writes_tests

    @property
    def separate_test_policy(self) -> bool:
        """The test role needs a policy (and a model) of its own."""
        return self.traits.separate_test_policy

    @property
    def needs_golden_tests(self) -> bool:
        return self.traits.needs_golden_tests


class A1(Method):
    """Code-A1: a Code LLM and a Test LLM, each trained on its own rewards."""

    traits = TRAITS["a1"]

    def roles(self, code_policy: PolicyHandle, test_policy: PolicyHandle) -> tuple[PolicyHandle, PolicyHandle]:
        return code_policy, test_policy

    def learn(
        self, env: StepEnv, step: int, codes: list, code_advs: list[float], tests: list, test_advs: list[float]
    ) -> tuple[dict, dict]:
        if tests and isinstance(env.code_policy, ConcurrentLearner) and isinstance(env.test_policy, ConcurrentLearner):
            # policies in actors of their own (codea1.cluster.policies): the two updates run at the same time
            code_done = env.code_policy.submit_train_step(codes, code_advs)
            test_done = env.test_policy.submit_train_step(tests, test_advs)
            code_metrics = code_done()
            debug_kill("learn_code", step)
            test_metrics = test_done()
            debug_kill("learn_test", step)
            return code_metrics, test_metrics
        code_metrics = env.code_policy.train_step(codes, code_advs)
        debug_kill("learn_code", step)
        test_metrics = env.test_policy.train_step(tests, test_advs) if tests else {}
        debug_kill("learn_test", step)
        return code_metrics, test_metrics

    def step(self, env: StepEnv, step: int, batch: list) -> StepOutput:

        cfg, game, seconds = env.cfg, env.cfg.game, {}
        env.phase("generate code")
        code_samples, test_samples, lag = step_samples(env, step, batch, True, seconds)

        rounds = [Round(p, c, t) for p, c, t in zip(batch, code_samples, test_samples, strict=True)]
        env.phase("execute")
        with timed(seconds, "execute"):
            code_texts = [r.code_texts for r in rounds]
            histories = [env.book.retrieve(p.id, game.history_size, gt_digest(p)) for p in batch]
            results = play_step(batch, code_texts, [r.suite_texts for r in rounds], env.executor, histories, game)
        refill = refill_equal_groups(env, step, batch, rounds, results, histories, seconds)
        own = game_groups(rounds, results, game)
        trained = dynamic_sample(env, step, batch, own, lambda sub, d: play_draw(env, step, sub, d, seconds))
        with timed(seconds, "execute"):
            code_texts = [r.code_texts for r in rounds]
            golden = golden_step(batch, code_texts, env.executor, game) if cfg.train.measure_golden_pass else None
            debug_kill("execute", step)
            played = [*results, *trained.results]  # the drawn questions update the book like the batch's
            book = env.book.apply_step(step, merge_updates((r.question_id, r.updates) for r in played))
        debug_kill("book", step)

        env.phase("learn")
        with timed(seconds, "learn"):
            code_metrics, test_metrics = self.learn(
                env,
                step,
                trained.samples("code"),
                advantages(trained.rewards("code"), cfg),
                trained.samples("test"),
                advantages_of_tests(trained.rewards("test"), cfg),
            )

        metrics = game_metrics(step, results, book, code_metrics, test_metrics, _flat(trained.rewards("test")))
        # the batch's own groups, before dapo dropped any: run health still sees a policy that stops giving signal
        metrics.update(health_signals(results, list(batch), [g[1] for g in own["test"]]))
        metrics.update(refill)
        metrics.update(trained.metrics)
        metrics.update(replay_metrics(histories))
        metrics.update(lag)
        if golden is not None:
            metrics["golden_pass_rate"] = mean(_flat(golden))
        every = [*rounds, *trained.rounds]
        metrics.update(_length_metrics("code", [r.codes for r in every], seconds["gen_code"]))
        metrics.update(_length_metrics("test", [r.test_samples for r in every], seconds["gen_tests"]))
        metrics.update(_times(seconds))
        return StepOutput(metrics, game_rollouts(book, rounds, results, trained))


class SelfPlay(A1):
    """Self-Play: one policy writes the code and the tests (black-box by default) and learns from both,
    in one update, or (train.separate_test_update, CURE's separate_training) in one on the code rows and
    then one on the test rows."""

    traits = TRAITS["selfplay"]

    def roles(self, code_policy: PolicyHandle, test_policy: PolicyHandle) -> tuple[PolicyHandle, PolicyHandle]:
        return code_policy, code_policy

    def learn(
        self, env: StepEnv, step: int, codes: list, code_advs: list[float], tests: list, test_advs: list[float]
    ) -> tuple[dict, dict]:
        if not env.cfg.train.separate_test_update:
            metrics = env.code_policy.train_step(codes + tests, code_advs + test_advs)
            debug_kill("learn_code", step)
            debug_kill("learn_test", step)
            return metrics, {}
        code_metrics = env.code_policy.train_step(codes, code_advs)
        debug_kill("learn_code", step)
        test_metrics = env.code_policy.train_step(tests, test_advs) if tests else {}
        debug_kill("learn_test", step)
        return code_metrics, test_metrics


class Golden(Method):
    """Golden-Tests RL: the Code LLM alone, rewarded by the share of the dataset's tests it passes. The
    Mistake Book stays empty; each step is still tagged in it, as in the game, for resuming."""

    traits = TRAITS["golden"]

    def roles(self, code_policy: PolicyHandle, test_policy: PolicyHandle) -> tuple[PolicyHandle, PolicyHandle]:
        return code_policy, None

    def step(self, env: StepEnv, step: int, batch: list) -> StepOutput:

        cfg, seconds = env.cfg, {}
        env.phase("generate code")
        codes, _, lag = step_samples(env, step, batch, False, seconds)

        env.phase("execute")
        with timed(seconds, "execute"):
            rewards = golden_step(batch, [[s.text for s in row] for row in codes], env.executor, cfg.game)
        refill = self._refill(env, step, batch, codes, rewards, seconds)
        own = {"code": list(zip(codes, rewards, strict=True))}
        trained = dynamic_sample(env, step, batch, own, lambda sub, d: self._play_draw(env, step, sub, d, seconds))
        with timed(seconds, "execute"):
            debug_kill("execute", step)
            book = env.book.apply_step(step, {})
        debug_kill("book", step)

        env.phase("learn")
        with timed(seconds, "learn"):
            code_metrics = env.code_policy.train_step(trained.samples("code"), advantages(trained.rewards("code"), cfg))
            debug_kill("learn_code", step)
            debug_kill("learn_test", step)

        flat_rewards = _flat(rewards)
        metrics = {
            "step": step,
            "mistake_book_size": int(book["size"]),
            "code_reward": mean(flat_rewards),
            "golden_pass_rate": mean(flat_rewards),
            "code_all_pass_frac": mean([r >= 1.0 for r in flat_rewards]),
            "code_zero_var_groups": mean([float(max(g) == min(g)) for g in rewards if len(g) > 1]),
            **refill,
            **lag,
            **trained.metrics,
            **_prefixed("code_", code_metrics),
            **_length_metrics("code", [*codes, *trained.rounds], seconds["gen_code"]),
            **_times(seconds),
        }
        rollouts = [_golden_line(p, row, r) for p, row, r in zip(batch, codes, rewards, strict=True)]
        for p, row, r, draw in zip(trained.questions, trained.rounds, trained.results, trained.draws, strict=True):
            rollouts.append({**_golden_line(p, row, r), "dapo_draw": draw})
        return StepOutput(metrics, rollouts)

    @staticmethod
    def _play_draw(env: StepEnv, step: int, sub: list, draw: int, seconds: dict[str, float]) -> tuple:
        """Dynamic sampling (dapo) for Golden-Tests RL: draw `draw` of new questions, M codes each scored on
        their golden tests; returns (code rows, rewards, groups)."""
        with timed(seconds, "gen_code"):
            codes = sample_codes(env, step, sub, f"gen_code_dapo{draw}")
        with timed(seconds, "execute"):
            rewards = golden_step(sub, [[s.text for s in row] for row in codes], env.executor, env.cfg.game)
        return codes, rewards, {"code": list(zip(codes, rewards, strict=True))}

    @staticmethod
    def _refill(
        env: StepEnv, step: int, batch: list, codes: list, rewards: list, seconds: dict[str, float]
    ) -> dict[str, float]:
        """Dynamic sampling for Golden-Tests RL (see refill_equal_groups): codes sampled again for the
        questions whose M codes passed the same share of golden tests; `codes` and `rewards` in place."""

        if env.cfg.train.refill_rounds == 0:
            return {}
        equal = [b for b, r in enumerate(rewards) if _equal(r)]
        out = {"refill_equal_groups": float(len(equal)), "refill_recovered": 0.0}
        for attempt in range(1, env.cfg.train.refill_rounds + 1):
            if not equal:
                break
            sub = [batch[b] for b in equal]
            with timed(seconds, "gen_code"):
                again = sample_codes(env, step, sub, f"gen_code_refill{attempt}")
            with timed(seconds, "execute"):
                scored = golden_step(sub, [[s.text for s in row] for row in again], env.executor, env.cfg.game)
            still = []
            for b, row, r in zip(equal, again, scored, strict=True):
                if _equal(r):
                    still.append(b)
                else:
                    codes[b], rewards[b] = row, r
                    out["refill_recovered"] += 1.0
            equal = still
        return out


class MethodRegistry(Mapping[str, Method]):
    """METHODS: each row of codea1.method_traits.TRAITS with its object, an instance of the Method subclass
    of the row's `module` whose own `traits` is that row. The module is imported on first use, so a method
    in a module of its own may import this one: a new method is its module, its row and its docs."""

    def __init__(self, traits: Mapping[str, MethodTraits] = TRAITS) -> None:
        self._traits = traits
        self._objects: dict[str, Method] = {}

    def __getitem__(self, name: str) -> Method:
        if name not in self._objects:
            row = self._traits[name]
            importlib.import_module(row.module)
            found = [c for c in _subclasses(Method) if c.__module__ == row.module and c.__dict__.get("traits") is row]
            if len(found) != 1:
                raise RuntimeError(f"{row.module} defines {len(found)} Method classes for method {name!r}, not one")
            self._objects[name] = found[0]()
        return self._objects[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._traits)

    def __len__(self) -> int:
        return len(self._traits)


def _subclasses(cls: type) -> list[type]:
    return [s for sub in cls.__subclasses__() for s in (sub, *_subclasses(sub))]


METHODS = MethodRegistry()


# ----------------------------------------------------------------------------------------------------
# metrics and rollout records


def mean(values: Sequence[float]) -> float:
    values = [float(v) for v in values]
    return sum(values) / len(values) if values else 0.0


def _flat(rows: Sequence[Sequence[Any]]) -> list:
    return [x for row in rows for x in row]


def _prefixed(prefix: str, metrics: dict[str, Any]) -> dict[str, float]:
    return {f"{prefix}{k}": float(v) for k, v in metrics.items() if isinstance(v, (int, float))}


def _times(seconds: dict[str, float]) -> dict[str, float]:
    return {f"time_{name}": seconds.get(name, 0.0) for name in PHASES}


def _length_metrics(name: str, samples: list[list[Any]], seconds: float) -> dict[str, float]:
    lengths = [len(s.response_ids) for row in samples for s in row]
    return {
        f"{name}_response_len": mean(lengths),
        f"{name}_tokens_per_s": sum(lengths) / seconds if seconds > 0 else 0.0,
    }


def game_metrics(
    step: int,
    results: list,
    book_stats: dict,
    code_metrics: dict,
    test_metrics: dict,
    test_rewards_selected: list[float],
) -> dict[str, Any]:
    """The per-step metrics row of a game step (a1 or selfplay)."""
    codes = [c for r in results for c in r.codes]
    suites = [s for c in codes for s in c.suites]
    valid_codes = [c for c in codes if c.valid]
    return {
        "step": step,
        "mistake_book_size": int(book_stats["size"]),
        "mistake_book_added": int(book_stats["added"]),
        "mistake_book_removed": int(book_stats["removed"]),
        "code_reward": mean([c.code_reward for c in codes]),
        "test_reward": mean([s.test_reward for s in suites]),
        "test_reward_selected": mean(test_rewards_selected),
        "code_valid_frac": len(valid_codes) / len(codes) if codes else 0.0,
        "hist_pass": mean([c.hist_pass for c in valid_codes]),
        "gen_pass": mean([s.gen_pass for c in valid_codes for s in c.suites]),
        "gen_fail": mean([s.gen_fail for c in valid_codes for s in c.suites]),
        "valid_ratio": mean([s.valid_ratio for s in suites]),
        "adv": mean([s.adv for s in suites]),
        "valid_tests": mean([s.valid_tests for s in suites]),
        "invalid_tests": mean([s.invalid_tests for s in suites]),
        "timeouts_excused": float(sum(r.timeouts_excused for r in results)),
        **_prefixed("code_", code_metrics),
        **_prefixed("test_", test_metrics),
    }


def health_signals(results: list, problems: list[Problem], test_rewards: list[list[float]]) -> dict[str, float]:
    """The step's signals of collapse and reward hacking (codea1.train.health reads them over a window).

    code_zero_var_groups / test_zero_var_groups: share of the batch's code groups and of the suite groups
    of its TopVar-selected codes (`test_rewards`) whose rewards are all equal (no gradient; with refill,
    after it; with dapo, before it dropped any); tests_not_calling: share of kept tests whose CALL is not
    the function under test (the free-validity hack: `assert len([1]) == 1`; over the kept tests of kinds
    whose tests call a function, codea1.judge.kinds.calls_entry: a stdio test is an input); tests_refused: share of
    written tests the judge refused as introspective, random or not plain data; tests_wrong_prediction:
    share of kept tests whose expected value GT contradicts; book_fresh_gap: fresh tests' pass rate minus
    the Mistake Book's (tests that grow easy while old failures stay failed)."""
    code_groups = [r.code_rewards for r in results if len(r.code_rewards) > 1]
    test_groups = [g for g in test_rewards if len(g) > 1]
    kept = calling_kinds = not_calling = refused = written = wrong = 0
    for r, problem in zip(results, problems, strict=True):
        for suite in (s for per_code in r.checked for s in per_code):
            kept += len(suite.kept)
            calls = [calls_entry(problem, k.call) for k in suite.kept]
            calling_kinds += sum(c is not None for c in calls)
            not_calling += sum(c is False for c in calls)
            wrong += sum(not k.predicted_ok for k in suite.kept)
            refused += suite.unresolved
            written += len(suite.kept) + suite.invalid_tests
    valid = [c for r in results for c in r.codes if c.valid]
    with_book = [c for c, r in ((c, r) for r in results for c in r.codes) if c.valid and r.history]
    fresh = mean([s.gen_pass for c in valid for s in c.suites])
    return {
        "code_zero_var_groups": mean([float(max(g) == min(g)) for g in code_groups]),
        "test_zero_var_groups": mean([float(max(g) == min(g)) for g in test_groups]),
        "tests_not_calling": not_calling / calling_kinds if calling_kinds else 0.0,
        "tests_refused": refused / written if written else 0.0,
        "tests_wrong_prediction": wrong / kept if kept else 0.0,
        "book_fresh_gap": fresh - mean([c.hist_pass for c in with_book]) if with_book else 0.0,
    }


def replay_metrics(histories: Sequence[Sequence[Any]]) -> dict[str, float]:
    """How much the Mistake Book replayed this step: the stored tests retrieved for the batch's questions
    (each run against every valid code of its question) and the questions that had any."""
    return {
        "mistake_book_replayed": float(sum(len(h) for h in histories)),
        "mistake_book_replay_questions": float(sum(1 for h in histories if h)),
    }


def game_rollouts(book: dict, rounds: list[Round], results: list, trained: StepGroups) -> list[dict[str, Any]]:
    """A game step's rollout lines: its batch's questions, then those dynamic sampling drew (each with
    `dapo_draw`, the draw it came from)."""
    per_question = book.get("questions", {})
    lines = [rollout_line(r, res, per_question.get(r.problem.id)) for r, res in zip(rounds, results, strict=True)]
    for r, res, draw in zip(trained.rounds, trained.results, trained.draws, strict=True):
        lines.append({**rollout_line(r, res, per_question.get(r.problem.id)), "dapo_draw": draw})
    return lines


def _golden_line(problem: Problem, codes: list, rewards: list[float]) -> dict[str, Any]:
    """A Golden-Tests RL rollout line: the question's codes and their golden rewards."""
    return {
        "question_id": problem.id,
        "codes": [{"response": s.text, "tests": []} for s in codes],
        "scores": {"golden_rewards": rewards},
    }


def rollout_line(round_: Round, result: QuestionResult, book_summary: dict | None = None) -> dict[str, Any]:
    """One `codea1 score` input line (question_id, codes[response, tests]) plus the step's scores in
    the `codea1 score` output form (codes[...], mistake_book{added, removed, size})."""
    scores = result.to_dict()
    scores.pop("question_id", None)
    if book_summary is not None:
        scores["mistake_book"] = book_summary
    if result.gt_error:
        scores["gt_error"] = result.gt_error
    return {
        "question_id": round_.problem.id,
        "codes": [
            {"response": code, "tests": tests}
            for code, tests in zip(round_.code_texts, round_.suite_texts, strict=True)
        ],
        "scores": scores,
    }
