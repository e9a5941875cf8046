"""`codea1 eval code` on EvalPlus programs (HumanEval+, MBPP+) agrees with evalplus 0.3.1's evaluator: the
output's type is checked before a float tolerance applies, and MBPP+'s special oracles (set equality,
"not None", ...) are applied by entry point (see codea1.judge.formats.evalplus).

The side-by-side test runs evalplus's own `untrusted_check` where evalplus is installed (it is optional:
`pip install --no-deps evalplus==0.3.1`; its evaluator needs only numpy and psutil). It executes code in a
fork of the test process, so it only gets GT and benign wrong solutions.
"""

import ast
import math

import pytest

from codea1.data.benchmarks import EVALPLUS_HELPERS, evalplus_release_problem
from codea1.eval.code_eval import evaluate_samples
from codea1.judge.formats.evalplus import evalplus_assertion, evalplus_oracle, is_floats
from codea1.problem import Problem


@pytest.fixture(scope="module")
def executor():
    from codea1.sandbox import LocalExecutor

    with LocalExecutor(workers=2) as ex:
        yield ex


def test_type_rule_before_tolerance():
    f64 = "numpy.float64"
    assert evalplus_assertion(0.5, 0.5, 0, out_type=f64, exp_type="builtins.float")  # exact: no type check
    assert not evalplus_assertion(0.5000000001, 0.5, 0, out_type=f64, exp_type="builtins.float")
    assert evalplus_assertion(0.5000000001, 0.5, 0, out_type="builtins.float", exp_type="builtins.float")
    floats = [1.0, 2.0000001]
    assert evalplus_assertion(floats, [1.0, 2.0], 0, out_type="builtins.list", exp_type="builtins.list")
    assert not evalplus_assertion(tuple(floats), [1.0, 2.0], 0, out_type="builtins.tuple", exp_type="builtins.list")
    assert not evalplus_assertion([1.0], [1.0, 1.0], 0, out_type="builtins.list", exp_type="builtins.list")
    assert not evalplus_assertion(5, 5.0000001, 0, out_type="builtins.int", exp_type="builtins.float")
    assert evalplus_assertion(5, 5.0, 0, out_type="builtins.int", exp_type="builtins.float")
    # an empty list is not floats (0.3.1): no tolerance, and allclose's broadcasting cannot pass [1.0] for []
    assert not is_floats([]) and not evalplus_assertion(
        [1.0], [], 0, out_type="builtins.list", exp_type="builtins.list"
    )
    # numpy arrays compare element-wise: ambiguous truth value, a failure as in EvalPlus
    assert not evalplus_assertion([1, 2], [1, 2], 0, out_type="numpy.ndarray", exp_type="builtins.list")


def test_special_oracles():
    assert evalplus_oracle("MBPP/2", "similar_elements") == "set" == evalplus_oracle("Mbpp/769", "Diff")
    assert evalplus_oracle("MBPP/737", "check_str") == "not_none"
    assert evalplus_oracle("HumanEval/2", "similar_elements") == ""  # MBPP+ only, as EvalPlus
    assert evalplus_assertion((5, 4), (4, 5), 0, oracle="set", out_type="builtins.tuple", exp_type="builtins.tuple")
    assert not evalplus_assertion((5,), (4, 5), 0, oracle="set", out_type="builtins.tuple", exp_type="builtins.tuple")
    assert not evalplus_assertion([[1]], [[1]], 0, oracle="set", out_type="builtins.list", exp_type="builtins.list")
    # "not None": a bool is compared, anything else counts as whether it is None
    match = "re.Match"
    assert evalplus_assertion(object(), True, 0, oracle="not_none", out_type=match, exp_type="builtins.bool")
    assert not evalplus_assertion(
        None, True, 0, oracle="not_none", out_type="builtins.NoneType", exp_type="builtins.bool"
    )
    assert not evalplus_assertion(False, True, 0, oracle="not_none", out_type="builtins.bool", exp_type="builtins.bool")
    assert not evalplus_assertion("", False, 0, oracle="not_none", out_type="builtins.str", exp_type="builtins.bool")
    assert evalplus_assertion(
        42, 40, 0, oracle="surface_Area", alt=42, out_type="builtins.int", exp_type="builtins.int"
    )


def evalplus_program(entry: str, inputs: list, results: list, assertion: str = "", atol: float = 0) -> str:
    return (
        (assertion or EVALPLUS_HELPERS)
        + f"\n\ndef check(candidate):\n    inputs = {inputs!r}\n    results = {results!r}\n"
        + f"    for i, (inp, exp) in enumerate(zip(inputs, results)):\n        assertion({entry}(*inp), exp, {atol!r})\n"
    )


SET_ASSERTION = """import numpy as np

def assertion(out, exp, atol):
    out = set(out)
    exp = set(exp)
    assert out == exp
"""
NOT_NONE_ASSERTION = """import numpy as np

def assertion(out, exp, atol):
    if isinstance(out, bool):
        exact_match = out == exp
    else:
        exact_match = exp == (out is not None)
"""


def problem(pid: str, entry: str, gt: str, test_code: str) -> Problem:
    return Problem(id=pid, prompt=pid, description=pid, entry_point=entry, gt_solution=gt, test_code=test_code)


def test_evalplus_scoring_in_the_sandbox(executor):
    half = problem(
        "T/half", "half", "def half(x):\n    return x / 2\n", evalplus_program("half", [[1], [3]], [0.5, 1.5])
    )
    pairs = problem(
        "T/pairs",
        "pairs",
        "def pairs(x):\n    return [x / 2, x / 4]\n",
        evalplus_program("pairs", [[1], [2]], [[0.5, 0.25], [1.0, 0.5]]),
    )
    shared = problem(  # EvalPlus's expected value in another order than GT's output
        "MBPP/2",
        "similar_elements",
        "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
        evalplus_program("similar_elements", [[(3, 4, 5, 6), (5, 7, 4, 10)]], [(5, 4)], SET_ASSERTION),
    )
    vowel = problem(
        "MBPP/737",
        "check_str",
        "import re\ndef check_str(s):\n    return re.search('^[aeiou]', s)\n",
        evalplus_program("check_str", [["annie"], ["dawood"]], [True, False], NOT_NONE_ASSERTION),
    )
    samples = [
        ("T/half", "def half(x):\n    return x / 2 + 1e-9\n"),
        ("T/half", "import numpy as np\ndef half(x):\n    return np.float64(x) / 2 + 1e-9\n"),
        ("T/half", "import numpy as np\ndef half(x):\n    return np.float64(x) / 2\n"),  # exact: passes
        ("T/pairs", "def pairs(x):\n    return [x / 2 + 1e-9, x / 4]\n"),
        ("T/pairs", "def pairs(x):\n    return (x / 2 + 1e-9, x / 4)\n"),
        ("MBPP/2", "def similar_elements(a, b):\n    return sorted(set(a) & set(b))\n"),
        ("MBPP/2", "def similar_elements(a, b):\n    return (4,)\n"),
        ("MBPP/737", "import re\ndef check_str(s):\n    return re.match('[aeiou]', s)\n"),
        ("MBPP/737", "def check_str(s):\n    return s[0] in 'aeiou'\n"),
        ("MBPP/737", "def check_str(s):\n    return 'yes' if s[0] in 'aeiou' else ''\n"),  # '' is not None
        ("MBPP/737", "def check_str(s):\n    return None\n"),
    ]
    summary, results, _ = evaluate_samples([half, pairs, shared, vowel], samples, executor)
    assert summary["excluded"] == []
    assert [r.passed for r in results] == [
        True,
        False,
        True,
        True,
        False,
        True,
        False,
        True,
        True,
        False,
        False,
    ]


def test_release_file_not_none_expected_from_gt(executor):
    row = {
        "task_id": "Mbpp/737",
        "prompt": '"""\nStarts with a vowel?\n"""\n',
        "entry_point": "check_str",
        "canonical_solution": "import re\ndef check_str(s):\n    return re.search('^[aeiou]', s)\n",
        "base_input": [["annie"], ["dawood"]],
        "plus_input": [],
        "atol": 0,
    }
    p = evalplus_release_problem(row, "row")
    samples = [
        ("Mbpp/737", "def check_str(s):\n    return s[0] in 'aeiou'\n"),
        ("Mbpp/737", "def check_str(s):\n    return True\n"),
    ]
    summary, results, _ = evaluate_samples([p], samples, executor)
    assert summary["excluded"] == [] and [r.passed for r in results] == [True, False]


# --------------------------------------------------------------------- side by side with evalplus


def _row_oracle_data(row: dict) -> tuple[list, list | None, float]:
    """A parquet row's inputs, expected values (None: from ref_func) and atol, read from its check()."""
    namespace: dict = {"inf": math.inf, "nan": math.nan}
    tree = ast.parse(row["test"])
    check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
    program = ast.Module([n for n in tree.body if n is not check], [])
    exec(compile(program, "test", "exec"), namespace)  # noqa: S102 - the benchmark's own helpers
    lists = {
        s.targets[0].id: eval(compile(ast.Expression(s.value), "v", "eval"), namespace)
        for s in check.body
        if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)
    }
    loop = next(s for s in check.body if isinstance(s, ast.For))
    call = loop.body[0].value
    atol = ast.literal_eval(call.args[2])
    results = lists.get("results")
    if not (isinstance(call.args[1], ast.Name)):  # assertion(f(*inp), ref_func(*inp), atol)
        results = [namespace[call.args[1].func.id](*inp) for inp in lists["inputs"]]
    return lists["inputs"], results, atol


EVALPLUS_CASES = {  # task -> benign wrong or differently-typed solutions (full programs)
    "HumanEval/2": [
        "def truncate_number(number):\n    return 0.5\n",
        "import numpy as np\ndef truncate_number(number):\n    return np.float64(number) % 1.0 + 1e-9\n",
        "def truncate_number(number):\n    return number % 1.0 + 1e-9\n",
    ],
    "HumanEval/0": ["def has_close_elements(numbers, threshold):\n    return False\n"],
    "MBPP/2": [
        "def similar_elements(a, b):\n    return sorted(set(a) & set(b))\n",
        "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n",
    ],
    "MBPP/82": [
        "import math\ndef volume_sphere(r):\n    return 4 / 3 * 3.14159 * r ** 3\n",
        "import math\ndef volume_sphere(r):\n    return (4 / 3 * math.pi * r ** 3,)\n",
    ],
    "MBPP/737": [
        "def check_str(string):\n    return string[:1] in 'aeiouAEIOU' and string[:1] != ''\n",
        "def check_str(string):\n    return string\n",
    ],
    "MBPP/581": [
        "import math\ndef surface_Area(b, s):\n    return round(b * b + 2 * b * math.sqrt((b / 2) ** 2 + s * s))\n",
        "def surface_Area(b, s):\n    return b * s\n",
    ],
}


def test_side_by_side_with_evalplus(executor, validation_parquet):
    pytest.importorskip("evalplus.eval", reason="evalplus is optional: pip install --no-deps evalplus==0.3.1")
    import pyarrow.parquet as pq
    from evalplus.eval import untrusted_check

    from codea1.data.reference import load_reference_parquet

    rows = {r["extra_info"]["question_id"]: r for r in pq.read_table(validation_parquet).to_pylist()}
    problems = [p for p in load_reference_parquet(validation_parquet) if p.id in EVALPLUS_CASES]
    by_id = {p.id: p for p in problems}
    samples = [(t, by_id[t].gt_solution) for t in EVALPLUS_CASES]
    samples += [(t, s) for t, cases in EVALPLUS_CASES.items() for s in cases]
    theirs = []
    for task_id, solution in samples:
        inputs, expected, atol = _row_oracle_data(rows[task_id])
        dataset = "mbpp" if task_id.startswith("MBPP") else "humaneval"
        stat, _ = untrusted_check(
            dataset,
            by_id[task_id].imports + "\n" + solution,
            inputs,
            by_id[task_id].entry_point,
            expected,
            atol,
            [0.25] * len(inputs),
            fast_check=True,
        )
        theirs.append(stat == "pass")
    _, results, _ = evaluate_samples(problems, samples, executor)
    assert [r.passed for r in results] == theirs
    assert theirs[: len(EVALPLUS_CASES)] == [True] * len(EVALPLUS_CASES)


# --------------------------------------------------------------------- acceptance: the whole parquet


@pytest.mark.slow
def test_all_parquet_gts_pass(validation_parquet):
    from codea1.data.reference import load_reference_parquet
    from codea1.sandbox import LocalExecutor

    problems = load_reference_parquet(validation_parquet)
    with LocalExecutor(workers=2, memory_mb=4096) as ex:  # MBPP/255's GT needs more than 1 GiB
        summary, results, _ = evaluate_samples(problems, [(p.id, p.gt_solution) for p in problems], ex)
    print(f"parquet GTs: {sum(r.passed for r in results)}/{len(results)} pass, excluded: {summary['excluded']}")
    assert summary["excluded"] == ["HumanEval/32"]
    assert summary["pass@1"] == 1.0 and summary["scored_tasks"] == len(problems) - 1


def test_entry_point_is_what_a_ref_func_loop_calls():
    from codea1.data.reference import check_program_facts

    program = (
        EVALPLUS_HELPERS
        + "\ndef ref_func(t):\n    return list(t)\n\ndef check(candidate):\n    inputs = [[(3, 4)]]\n"
        + "    for i, inp in enumerate(inputs):\n        assertion(get_coordinates(*inp), ref_func(*inp), 0)\n"
    )
    facts = check_program_facts(program, "adjac")  # MBPP/630's function_name field names GT's helper
    assert facts["called"] == "get_coordinates" and facts["atol"] == 0 and facts["golden_tests"] == []


def test_release_rows_keep_their_inputs_as_data(executor):
    """An EvalPlus release row's inputs were written into a check() program by their repr and parsed back,
    so an input of inf (repr `inf`, a name no program defines) excluded the task; they now go to the calls
    as data, and the task is judged."""
    row = {
        "task_id": "HumanEval/900",
        "prompt": 'def clamp(x):\n    """x, or 0.0 where x is below it."""\n',
        "entry_point": "clamp",
        "canonical_solution": "    return max(x, 0.0)\n",
        "base_input": [[1.5], [float("inf")]],
        "plus_input": [[float("-inf")], [-2]],
        "atol": 0,
    }
    p = evalplus_release_problem(row, "row")
    assert p.test_code == "" and p.meta["evalplus_inputs"][1] == [float("inf")]
    samples = [
        ("HumanEval/900", "def clamp(x):\n    return x if x > 0 else 0.0\n"),
        ("HumanEval/900", "def clamp(x):\n    return abs(x)\n"),  # wrong on -inf and -2
    ]
    summary, results, _ = evaluate_samples([p], samples, executor)
    assert summary["excluded"] == [] and [r.passed for r in results] == [True, False]
    assert results[1].failed_input == 2
