"""Round 5 of the verdict attacks: hostile candidates and hostile tests that the current judge contains.

Each test is one attack, with the verdict that shows it failed (and, where it helps, the honest control that
passes). The attacks this round found uncontained are not here: they are described in the round's report.
"""

from __future__ import annotations

import pytest

from codea1.config import GameConfig
from codea1.game import golden_rewards, play_step
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.problem import Problem

UID_BASE = 1_701_700_000
MARKER = "__codea1_failed_call:"  # what the oracle's lazy values raise for a call that did not return


@pytest.fixture(scope="module")
def executor():
    from conftest import quiet_executor

    with quiet_executor(UID_BASE) as ex:
        yield ex


def _problem(pid: str, gt: str, golden: list[str] | None = None) -> Problem:
    return Problem(id=pid, prompt="p", description="d", entry_point="f", gt_solution=gt, golden_tests=golden or [])


def _fenced(code: str) -> str:
    return f"```python\n{code}\n```"


# ---------------------------------------------------------------- the oracle's failed-call marker
def test_the_failed_call_marker_in_a_candidates_value_is_never_a_pass(executor) -> None:
    # the candidate's value puts the marker of call 0 (which returned) into the oracle's KeyError message:
    # the oracle then reports call 0's own outcome, which is not a pass
    gt = "def f(x):\n    return 'k'\n"
    problem = _problem("r5/marker-value", gt, ["assert {'k': 3}[f(1)] == 3"])
    forged = f"def f(x):\n    return '{MARKER}0'\n"
    assert golden_rewards(problem, [_fenced(forged), _fenced(gt)], executor) == [0.0, 1.0]


def test_the_failed_call_marker_in_a_candidates_exception_names_no_other_call(executor) -> None:
    # f(2) raises with the marker of call 1 (f(1), which returned 3) in its message; the oracle never sees
    # that text, so the assert that reaches f(2) first is f(2)'s error, as in Python, and the one that
    # short-circuits before it passes
    code = f"def f(x):\n    if x == 2:\n        raise ValueError('{MARKER}1')\n    return 3\n"
    tests = ["assert f(2) == 4 or f(1) == 3", "assert f(1) == 3 or f(2) == 4"]
    [res] = run_assertions(executor, [AssertCase(code=code, tests=tests, entry_point="f", oracle=code)])
    assert [r.status for r in res.results] == ["error", "pass"]


def test_a_test_that_raises_the_marker_itself_is_not_valid_on_gt(executor) -> None:
    from codea1.data.ult import UltFunction
    from codea1.eval.suite_eval import score_tests

    fn = UltFunction(task_id="sign", func_name="sign", code="def sign(x):\n    return (x > 0) - (x < 0)\n")
    tests = {"sign": [f"assert sign(5) == 1 and {{}}.get(0, {{}})['{MARKER}0']"]}
    _, [record] = score_tests([fn], tests, executor, k=1, coverage=False)
    assert record.valid == [False] and record.mutation_score is None and record.killed == 0


# ---------------------------------------------------------------- values the parent decodes
def test_a_counter_subclass_cannot_forge_its_missing_counts(executor) -> None:
    from collections import Counter

    forged = (
        "from collections import Counter\n"
        "class C(Counter):\n"
        "    def __missing__(self, key):\n"
        "        return 1\n"
        "def f(s):\n"
        "    return C({'a': 2})\n"
    )
    namespace: dict = {}
    exec(forged, namespace)  # noqa: S102  (in one Python process the forgery holds)
    assert namespace["f"]("aab") == Counter("aab")
    gt = "from collections import Counter\ndef f(s):\n    return Counter(s)\n"
    suite = _fenced("assert f('aab') == Counter({'a': 2, 'b': 1})")
    [result] = play_step([_problem("r5/counter", gt)], [[_fenced(forged), _fenced(gt)]], [[[suite], [suite]]], executor)
    assert [c.suites[0].valid_tests for c in result.codes] == [1, 1]
    assert [c.suites[0].gen_pass for c in result.codes] == [0.0, 1.0]


SUBCLASS_FORGERIES = {
    # a subclass that keeps its base's == but lies in every method a naive encoder would read
    "float": (
        "class F(float):\n    def __float__(self):\n        return 0.5\n    def __repr__(self):\n        return '0.5'\n",
        "F(0.25)",
        "0.5",
        0.5,
    ),
    "int": (
        "class I(int):\n    def __index__(self):\n        return 7\n    def __int__(self):\n        return 7\n",
        "I(3)",
        "7",
        7,
    ),
    "str": ("class S(str):\n    def __str__(self):\n        return 'right'\n", "S('wrong')", "'right'", "right"),
    "tuple": (
        (
            "class T(tuple):\n    def __iter__(self):\n        return iter((1, 2))\n"
            "    def __len__(self):\n        return 2\n    def __getitem__(self, i):\n        return (1, 2)[i]\n"
        ),
        "T((9, 9, 9))",
        "(1, 2)",
        (1, 2),
    ),
    "dict": (
        (
            "class D(dict):\n    def items(self):\n        return [('a', 1)]\n    def keys(self):\n        return ['a']\n"
            "    def __iter__(self):\n        return iter(['a'])\n    def __len__(self):\n        return 1\n"
        ),
        "D({'a': 1, 'b': 2})",
        "{'a': 1}",
        {"a": 1},
    ),
    "odict": (
        (
            "from collections import OrderedDict\nclass O(OrderedDict):\n"
            "    def __iter__(self):\n        return iter(sorted(dict.keys(self)))\n"
            "    def items(self):\n        return [(k, dict.__getitem__(self, k)) for k in sorted(dict.keys(self))]\n"
        ),
        "O([(2, 'b'), (1, 'a')])",
        "__import__('collections').OrderedDict([(1, 'a'), (2, 'b')])",
        __import__("collections").OrderedDict([(1, "a"), (2, "b")]),
    ),
}


@pytest.mark.parametrize("kind", sorted(SUBCLASS_FORGERIES))
def test_a_subclass_sends_its_real_contents_not_what_its_methods_say(executor, kind: str) -> None:
    from codea1.judge import run_expecting
    from codea1.sandbox import Job

    code, forged, honest, expected = SUBCLASS_FORGERIES[kind]
    [res] = run_expecting(executor, [Job(kind, code, [forged, honest])], [[expected, expected]])
    assert [r.status for r in res.results] == ["fail", "pass"]


# ---------------------------------------------------------------- the child's frames and memory
PIPE = (
    "import json, os, sys\n"
    "def _pipe():\n"
    "    frame = sys._getframe(1)\n"
    "    while frame is not None and 'res_w' not in frame.f_locals:\n"
    "        frame = frame.f_back\n"
    "    return frame.f_locals['res_w']\n"
)


def test_a_frame_forged_for_a_later_call_does_not_answer_it(executor) -> None:
    from codea1.judge import run_expecting
    from codea1.sandbox import Job

    # while answering f(1), the candidate writes the frame of f(2) (4, right) into the result pipe; it then
    # answers f(2) itself with 999 (wrong). The out-of-order frame is a crash of f(1), and f(2), run again
    # in a fresh child, is judged on what the candidate returns there
    code = PIPE + (
        "def f(x):\n"
        "    if x == 1:\n"
        "        data = json.dumps({'k': 'ok', 'i': 1, 'v': 4, 's': 0.0}).encode()\n"
        "        os.write(_pipe(), len(data).to_bytes(4, 'big') + data)\n"
        "        return 3\n"
        "    return 999\n"
    )
    [res] = run_expecting(executor, [Job("forged-frame", code, ["f(1)", "f(2)"])], [[3, 4]])
    assert [r.status for r in res.results] == ["crash", "fail"]


def test_the_candidates_child_holds_no_expected_value(executor) -> None:
    # GT's value 5 * 7919 + 13 is found anywhere in the child's memory (gc-tracked containers, frames,
    # the job's payload) only if the judge put it there
    scan = (
        "import gc, sys\n"
        "def _ints(o, out, depth=0):\n"
        "    if depth > 6:\n"
        "        return\n"
        "    if type(o) is int:\n"
        "        out.add(o)\n"
        "    elif type(o) is str and o.isdigit() and len(o) < 20:\n"
        "        out.add(int(o))\n"
        "    elif type(o) in (list, tuple, set, frozenset):\n"
        "        for x in list(o):\n"
        "            _ints(x, out, depth + 1)\n"
        "    elif type(o) is dict:\n"
        "        for k, v in list(o.items()):\n"
        "            _ints(k, out, depth + 1)\n"
        "            _ints(v, out, depth + 1)\n"
        "def f(x):\n"
        "    seen = set()\n"
        "    for o in gc.get_objects():\n"
        "        if type(o) in (list, tuple, dict):\n"
        "            _ints(o, seen, 5)\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"
        "        _ints(dict(frame.f_locals), seen)\n"
        "        frame = frame.f_back\n"
        "    hits = [v for v in seen if v != x * 7919 and v - 13 == x * 7919]\n"
        "    return hits[0] if hits else -1\n"
    )
    gt = "def f(x):\n    return x * 7919 + 13\n"
    suite = _fenced("assert f(5) == 39608\nassert f(6) == 47527")
    [result] = play_step([_problem("r5/scan", gt)], [[_fenced(scan), _fenced(gt)]], [[[suite], [suite]]], executor)
    assert [c.suites[0].valid_tests for c in result.codes] == [2, 2]
    assert [c.suites[0].gen_pass for c in result.codes] == [0.0, 1.0]


def test_a_literal_shaped_string_stays_one_value_in_the_oracle(executor) -> None:
    # pasted as text between quotes, "x' or 'X" would make the template read 'x' and pass; pasted as its
    # repr it is one string, whose upper() is not 'X'
    gt = "def f(x):\n    return 'x'\n"
    problem = _problem("r5/paste", gt, ["assert f(1).upper() == 'X'"])
    forged = "def f(x):\n    return \"x' or 'X\"\n"
    assert golden_rewards(problem, [_fenced(forged), _fenced(gt)], executor) == [0.0, 1.0]


# ---------------------------------------------------------------- time
class _Recording:
    """An Executor that records every job it is given."""

    def __init__(self, inner) -> None:
        self.inner, self.jobs = inner, []

    def run(self, jobs, progress=None, then=None):
        self.jobs += list(jobs)
        return self.inner.run(jobs, progress=progress, then=then)


def test_a_tests_argument_cannot_forge_gts_time_in_the_game(executor) -> None:
    # the argument patches the JSON encoder of the child it runs in, so that every frame reports 999999 s;
    # in the game it runs only where arguments are resolved (no GT there), so GT's time and with it the
    # candidates' time limit stay GT's own
    forge = (
        "(lambda j: setattr(j, '_default_encoder', type('E', (j.JSONEncoder,), "
        "{'encode': lambda self, o: j.JSONEncoder.encode(self, {**o, 's': 999999.0} if 's' in o else o)})()) "
        "or 5)(__import__('json'))"
    )
    gt = "def f(x):\n    return x + 2\n"
    config = GameConfig(test_timeout=0.5)
    recording = _Recording(executor)
    [result] = play_step(
        [_problem("r5/time", gt)], [[_fenced(gt)]], [[[_fenced(f"assert f({forge}) == 7")]]], recording, config=config
    )
    assert result.codes[0].suites[0].valid_tests == 1 and result.codes[0].suites[0].gen_pass == 1.0
    assert [j.timeout for j in recording.jobs if j.id.startswith("cand:")] == [0.5]


def test_helpers_a_looping_candidate_leaves_do_not_get_its_timeouts_excused() -> None:
    # the candidate leaves spinning helpers (in new sessions) and loops: were they alive when GT's repeat
    # runs on the same slot, the slot's CPU clock would count their time, GT's repeat would time out and the
    # candidate's timeouts would be excused (counted as passes)
    from conftest import quiet_executor

    hog = (
        "import os\n"
        "def f(x):\n"
        "    for _ in range(2):\n"
        "        if os.fork() == 0:\n"
        "            os.setsid()\n"
        "            if os.fork() == 0:\n"
        "                while True:\n"
        "                    pass\n"
        "            os._exit(0)\n"
        "    while True:\n"
        "        pass\n"
    )
    gt = "def f(x):\n    s = 0\n    for i in range(200000):\n        s += i\n    return x + 1\n"
    suite = _fenced("assert f(1) == 2\nassert f(2) == 3")
    config = GameConfig(test_timeout=0.5, timeout_factor=2.0)
    with quiet_executor(UID_BASE + 10, workers=1) as ex:
        [result] = play_step([_problem("r5/hog", gt)], [[_fenced(hog)]], [[[suite]]], ex, config=config)
    assert result.timeouts_excused == 0
    assert result.codes[0].suites[0].valid_tests == 2 and result.codes[0].suites[0].gen_pass == 0.0
