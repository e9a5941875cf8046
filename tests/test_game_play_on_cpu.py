"""The game end to end through the real sandbox: oracle, execution matrix, rewards, updates, TopVar."""

import pytest

from codea1.config import GameConfig
from codea1.game import StoredTest, golden_rewards, play_question, play_step
from codea1.problem import Problem
from codea1.sandbox import LocalExecutor

SECOND = Problem(
    id="t/second",
    prompt="def second_largest(nums):",
    description="Return the second largest distinct value of nums, or None if there is none.",
    entry_point="second_largest",
    gt_solution="def second_largest(nums):\n    d = sorted(set(nums))\n    return d[-2] if len(d) > 1 else None\n",
    golden_tests=[
        "assert second_largest([1, 3, 2]) == 2",
        "assert second_largest([5, 5, 4]) == 4",
        "assert second_largest([7, 7]) is None",
        "assert second_largest([2, 9]) == max([1, 2])",
    ],
)
RIGHT = "```python\ndef second_largest(nums):\n    s = sorted(set(nums), reverse=True)\n    return s[1] if len(s) >= 2 else None\n```"
WRONG = (
    "```python\ndef second_largest(nums):\n    if len(nums) < 2:\n        return None\n    return sorted(nums)[-2]\n```"
)
BROKEN = "```python\ndef second_largest(nums)\n    return 1\n```"
SLOW = "```python\ndef second_largest(nums):\n    while True:\n        pass\n```"

# suite 1: 4 parseable asserts; the [5, 5, 4] one predicts 5 (wrong: GT says 4) -> I = 1 but kept
SUITE1 = """```python
assert second_largest([1, 2, 3]) == 2
assert second_largest([5, 5, 4]) == 5
assert second_largest([]) == None
assert second_largest([9]) is None
```"""
# suite 2: x inlined; second_largest(1) raises on GT (dropped); a duplicate; an assert that is not a
# comparison (ignored, as in the reference code); max([1]) is not a literal and is evaluated in GT's program
SUITE2 = """```python
x = [7, 7]
assert second_largest(x) == None
assert second_largest([1, 2, 3]) == 2
assert second_largest(1) == 0
assert second_largest([3, 1]) == max([1])
assert second_largest([3, 1]) == 1
assert second_largest([3, 1])
```"""


class CountingExecutor:
    """Wraps an Executor and records the size of each run() batch."""

    def __init__(self, inner):
        self.inner = inner
        self.batches = []

    def run(self, jobs, progress=None, then=None):
        self.batches.append([j.id for j in jobs])
        return self.inner.run(jobs, progress=progress, then=then)


UID_BASE = 64970  # this file's sandbox slot uids (64970, 64969): concurrent sandboxes must not share uids


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2, uid_base=UID_BASE) as ex:
        yield ex


def test_oracle_matrix_and_rewards_by_hand(executor):
    counting = CountingExecutor(executor)
    result = play_question(SECOND, [RIGHT, WRONG], [[SUITE1, SUITE2], [SUITE1, SUITE2]], counting, [], GameConfig())
    # one oracle batch (a GT job per distinct call, 7 of them, and a job in GT's program for the one
    # non-literal EXPECTED, max([1])), then one matrix batch with a job per (candidate, suite)
    assert counting.batches == [
        [*(f"gt:t/second#{k}" for k in range(7)), "expected:t/second"],
        ["cand:t/second:0:0", "cand:t/second:0:1", "cand:t/second:1:0", "cand:t/second:1:1"],
    ]
    o1, o2 = result.checked[0]
    assert [k.call for k in o1.kept] == [
        "second_largest([1, 2, 3])",
        "second_largest([5, 5, 4])",
        "second_largest([])",
        "second_largest([9])",
    ]
    assert [k.predicted_ok for k in o1.kept] == [True, False, True, True]
    assert (o1.valid_tests, o1.invalid_tests, o1.wrong_expected) == (4, 1, 1)
    assert [k.call for k in o2.kept] == [
        "second_largest([7, 7])",
        "second_largest([1, 2, 3])",
        "second_largest([3, 1])",
    ]
    assert (o2.gt_error, o2.duplicate, o2.unparseable, o2.wrong_expected) == (1, 1, 0, 0)
    assert (o2.valid_tests, o2.invalid_tests) == (3, 2)
    right, wrong = result.codes
    # right code passes everything; no book (H = 0): Pass = gen_pass = 1, Adv = gen_fail = 0
    # suite 1: valid_ratio = min(4/8, 1 - 1/8) = 0.5 -> R_T = 0.5*0.5 = 0.25
    # suite 2: valid_ratio = min(3/8, 1 - 2/8) = 0.375 -> R_T = 0.1875
    assert right.valid and right.code_reward == 1.0
    assert [s.test_reward for s in right.suites] == [0.25, 0.1875]
    # wrong code fails [5, 5, 4] (returns 5) and [7, 7] (returns 7)
    # suite 1: gen_pass 3/4, gen_fail 1/8 -> R_T = 0.25 + 0.5*0.125 = 0.3125
    # suite 2: gen_pass 2/3, gen_fail 1/8 -> R_T = 0.1875 + 0.0625 = 0.25; R_C = (0.75 + 2/3)/2
    assert [s.gen_pass for s in wrong.suites] == pytest.approx([0.75, 2 / 3])
    assert [s.test_reward for s in wrong.suites] == [0.3125, 0.25]
    assert wrong.code_reward == pytest.approx((0.75 + 2 / 3) / 2)
    # TopVar (ell = 1): std of R_T is 0.03125 for both -> tie -> lower index
    assert result.topvar_selected == [True, False]
    # Mistake Book: the two failures of the wrong code, with GT's values
    assert [(t.call, t.expected) for t in result.updates.failed] == [
        ("second_largest([5, 5, 4])", 4),
        ("second_largest([7, 7])", None),
    ]
    assert result.updates.passed == []


def test_history_invalid_and_timeout_candidates(executor):
    history = [
        StoredTest.from_value("second_largest([5, 5, 4])", 4),
        StoredTest.from_value("second_largest([1, 1])", None),
    ]
    config = GameConfig(test_timeout=0.25)
    result = play_question(SECOND, [RIGHT, WRONG, BROKEN, SLOW, ""], [[SUITE1]] * 5, executor, history, config)
    right, wrong, broken, slow, empty = result.codes
    # right: hist_pass 1, gen_pass 1 -> R_C 1; Adv = (gen_fail 0 + hist_pass 1)/2 = 0.5
    # R_T = 0.5*0.5 + 0.5*0.5 = 0.5
    assert right.hist_pass == 1.0 and right.code_reward == 1.0
    assert right.suites[0].adv == 0.5 and right.suites[0].test_reward == 0.5
    # wrong: book [5,5,4] fails, [1,1] passes (len 2 -> sorted[-2] = 1 ... returns 1, GT None: fails)
    assert wrong.hist_pass == 0.0
    assert wrong.suites[0].adv == pytest.approx(0.0625)  # (1/8 + 0)/2
    # a syntax error is invalid: R_C 0, R_T 0
    assert not broken.valid and broken.code_reward == 0.0 and broken.suites[0].test_reward == 0.0
    # empty code compiles and runs, so it is valid (as in the reference code) and fails every test:
    # R_C 0; gen_fail 4/8, Adv = (0.5 + 0)/2 -> R_T = 0.5*0.5 + 0.5*0.25 = 0.375
    assert empty.valid and empty.code_reward == 0.0 and empty.suites[0].test_reward == 0.375
    # an infinite loop defines fine: every call times out and counts as failed
    assert slow.valid and slow.code_reward == 0.0 and slow.suites[0].gen_fail == 0.5  # 4 of 4 / 8
    # updates: book tests passed by valid candidates (right passes both), failures of valid ones only
    assert [t.call for t in result.updates.passed] == [t.call for t in history]
    failed = [t.call for t in result.updates.failed]
    assert failed.count("second_largest([5, 5, 4])") == 3  # wrong, slow and empty
    assert len(failed) == 1 + 4 + 4  # wrong fails 1 kept test, slow and empty all 4


def test_play_step_batches_questions_and_gt_errors(executor):
    broken_gt = Problem(
        id="t/broken",
        prompt="p",
        description="d",
        entry_point="f",
        gt_solution="def f(x):\n    raise ValueError('no')\n",
    )
    counting = CountingExecutor(executor)
    results = play_step(
        [SECOND, broken_gt],
        [[RIGHT], ["def f(x): return x"]],
        [[[SUITE1]], [["assert f(1) == 1\nassert f(2) == 2"]]],
        counting,
    )
    assert len(counting.batches) == 2  # all oracle jobs of both questions, then all candidate jobs
    assert results[0].codes[0].suites[0].valid_tests == 4
    s = results[1].codes[0].suites[0]
    assert (s.valid_tests, s.invalid_tests, s.valid_ratio) == (0, 2, 0.0)
    assert results[1].codes[0].code_reward == 0.0  # no test kept and no book: Pass = 0


def test_cure_mode_judges_tests_across_codes(executor):
    config = GameConfig(selfplay_reward="cure")
    result = play_question(SECOND, [RIGHT, WRONG], [[SUITE1], [SUITE1]], executor, [], config)
    # correct code: RIGHT (agrees with GT everywhere); wrong code: WRONG.
    # suite 1 tests judged with their own predicted values:
    #   [1,2,3] == 2: both pass -> passes all correct, rejects 0 of 1 wrong -> 0
    #   [5,5,4] == 5: RIGHT gives 4 -> fails a correct code; WRONG gives 5 -> let through -> -1
    #   [] == None: both None -> 0;  [9] is None: both None -> 0      -> mean -0.25
    assert [s.test_reward for c in result.codes for s in c.suites] == [-0.25, -0.25]
    assert result.codes[0].code_reward == 1.0  # the code reward stays Code-A1's


def test_each_candidate_carries_the_valid_tests_it_failed(executor):
    """What a breaking test fed back to the coder needs: the Mistake Book tests and kept tests a valid
    candidate failed, once each, with GT's expected value (a kept test whose own prediction was wrong
    breaks WRONG by GT's value); none for a correct candidate, none recorded for invalid code."""
    book = [StoredTest("second_largest([2, 2, 1])", "1")]
    result = play_question(SECOND, [RIGHT, WRONG, BROKEN], [[SUITE1, SUITE2]] * 3, executor, book, GameConfig())
    right, wrong, broken = result.codes
    assert right.failed == [] and not broken.valid and broken.failed == []
    assert [(t.call, t.expected_json) for t in wrong.failed] == [
        ("second_largest([2, 2, 1])", "1"),
        ("second_largest([5, 5, 4])", "4"),
        ("second_largest([7, 7])", "null"),
    ]


def test_golden_rewards(executor):
    rewards = golden_rewards(SECOND, [RIGHT, WRONG, BROKEN], executor)
    # WRONG fails [5,5,4] and [7,7] (is None form): 2 of 4
    assert rewards == [1.0, 0.5, 0.0]


def test_every_gt_call_is_a_job_of_its_own(executor):
    suite = "\n".join(f"assert second_largest([{i}, {i + 1}]) == {i}" for i in range(150))
    counting = CountingExecutor(executor)
    result = play_question(SECOND, [RIGHT], [[suite]], counting, [], GameConfig(max_tests_per_suite=0))
    assert counting.batches[0] == [f"gt:t/second#{k}" for k in range(150)]  # a clean GT program per call
    s = result.codes[0].suites[0]
    assert (s.valid_tests, s.invalid_tests, s.gen_pass) == (150, 0, 1.0)


def test_candidate_time_limit_scales_with_gt_runtime(executor):
    spin = "import time\ndef f(x):\n    t = time.process_time()\n    while time.process_time() - t < {}:\n        pass\n    return x\n"
    slow_gt = Problem(id="t/slow", prompt="p", description="d", entry_point="f", gt_solution=spin.format(0.2))
    slower = spin.format(0.9)
    suite = "assert f(1) == 1"
    # GT computes for ~0.2 s (< test_timeout 0.5): kept. The candidate computes for ~0.9 s: with the limit
    # scaled to 8 x 0.2 = 1.6 s it passes; with factor 1 the limit stays 0.5 s and it times out (a failure).
    # (CPU time, which is what the limit is on where the slot's cgroup counts it; wide margins both sides.)
    scaled = play_question(slow_gt, [slower], [[suite]], executor, [], GameConfig(test_timeout=0.5, timeout_factor=8))
    fixed = play_question(slow_gt, [slower], [[suite]], executor, [], GameConfig(test_timeout=0.5, timeout_factor=1))
    assert scaled.codes[0].suites[0].gen_pass == 1.0
    assert fixed.codes[0].suites[0].gen_pass == 0.0


class LoadedExecutor:
    """Wraps an Executor; the first run of each candidate job reports its first call as timed out (a
    loaded machine), and GT's repeats of timed-out calls come back as `gt_repeat` says: "timeout", a
    share of the limit, or as the sandbox ran them (None)."""

    def __init__(self, inner, gt_repeat=None):
        self.inner, self.gt_repeat = inner, gt_repeat
        self.batches = []

    def run(self, jobs, progress=None, then=None):
        from codea1.sandbox import CallResult

        self.batches.append([j.id for j in jobs])
        out = self.inner.run(jobs, progress=progress)
        for job, res in zip(jobs, out, strict=False):
            if job.id.startswith("cand:") and not job.id.endswith(":again") and res.defined and res.results:
                res.results[0] = CallResult("timeout", error="no result (a loaded machine)", seconds=job.timeout)
            if job.id.startswith("gt-again:") and self.gt_repeat is not None:
                for r in res.results:
                    if self.gt_repeat == "timeout":
                        r.status, r.value, r.seconds = "timeout", None, job.timeout
                    else:
                        r.seconds = self.gt_repeat * job.timeout
        return [then(n, res) for n, res in enumerate(out)] if then is not None else out


def test_a_timeout_under_load_is_not_held_against_a_correct_candidate(executor):
    """A correct candidate's call timed out (the machine was loaded). Before, that failed its test and
    paid the Test LLM. Now GT repeats the call: when GT misses the limit too, the call is excused; when GT
    is slow (over half the limit), the candidate's call runs again and keeps that outcome; when GT is
    fast, the timeout stands (a looping candidate)."""
    config = GameConfig()
    clean = play_question(SECOND, [RIGHT], [[SUITE1]], executor, [], config)
    assert clean.codes[0].code_reward == 1.0
    excused = play_question(SECOND, [RIGHT], [[SUITE1]], LoadedExecutor(executor, "timeout"), [], config)
    assert excused.timeouts_excused == 1
    assert excused.codes[0].code_reward == clean.codes[0].code_reward
    slow_gt = LoadedExecutor(executor, 0.9)
    retried = play_question(SECOND, [RIGHT], [[SUITE1]], slow_gt, [], config)
    assert retried.timeouts_excused == 0 and retried.codes[0].code_reward == clean.codes[0].code_reward
    assert any(i.endswith(":again") for batch in slow_gt.batches for i in batch)  # the candidate ran again
    fast_gt = LoadedExecutor(executor)
    stands = play_question(SECOND, [RIGHT], [[SUITE1]], fast_gt, [], config)
    assert stands.timeouts_excused == 0 and stands.codes[0].code_reward < clean.codes[0].code_reward
    assert not any(i.endswith(":again") for batch in fast_gt.batches for i in batch)  # no second wait


class HeldValues:
    """Wraps an Executor: counts, after each candidate job has ended and the game had its say, how many
    of that job's call values the parent still holds."""

    def __init__(self, inner):
        self.inner = inner
        self.kept = []  # per candidate job: values still held once it ended
        self.statuses = []

    def run(self, jobs, progress=None, then=None):
        def after(n, res):
            res = then(n, res) if then is not None else res
            if jobs[n].id.startswith("cand:"):
                self.kept.append(sum(r.value is not None for r in res.results))
                self.statuses.append([r.status for r in res.results])
            return res

        return self.inner.run(jobs, progress=progress, then=after)


def test_a_candidates_values_are_dropped_as_soon_as_its_verdicts_are_decided(executor):
    """Round-3 audit: the parent kept every candidate's values until the whole batch had ended (32 calls
    of ~1 M characters took it from 29 to 170 MB). Outside CURE only the verdicts matter: each job is
    reduced to them as it ends, and the rewards are those of before."""
    config = GameConfig()
    plain = play_question(SECOND, [RIGHT, WRONG], [[SUITE1], [SUITE2]], executor, [], config)
    held = HeldValues(executor)
    reduced = play_question(SECOND, [RIGHT, WRONG], [[SUITE1], [SUITE2]], held, [], config)
    assert len(held.kept) == 2 and held.kept == [0, 0]
    assert all(s in ("pass", "fail", "error", "timeout", "crash", "invalid") for row in held.statuses for s in row)
    assert {"pass", "fail"} <= {s for row in held.statuses for s in row}  # decided, not merely "ok"
    assert [c.code_reward for c in reduced.codes] == [c.code_reward for c in plain.codes]
    assert reduced.test_rewards == plain.test_rewards


def test_then_runs_as_each_job_ends_and_its_result_is_kept(executor):
    from codea1.sandbox import Job

    jobs = [Job(f"j{i}", f"x = {i}", ["x * 2", "x + 1"]) for i in range(4)]
    seen = []

    def then(n, res):
        seen.append((n, [r.value for r in res.results]))
        return res.without_values()

    for one_slot in (False, True):
        seen.clear()
        out = executor.run(jobs, then=then, one_slot=one_slot)
        assert sorted(seen) == [(i, [2 * i, i + 1]) for i in range(4)]
        assert [r.id for r in out] == [j.id for j in jobs]
        assert all(r.status == "ok" and r.value is None for res in out for r in res.results)
