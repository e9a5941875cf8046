"""pass@k maths and the mutant generator (pure, no sandbox)."""

import math
import random

import pytest

from codea1.eval.mutation import family_of, generate_mutants, operator_counts
from codea1.eval.passk import mean_pass_at_k, pass_at_k, pass_at_ks


def comb_form(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def test_pass_at_k_hand_computed_values():
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0  # fewer than k wrong samples: always a correct one
    assert pass_at_k(1000, 1, 1) == pytest.approx(0.001)


def test_pass_at_k_matches_binomial_form():
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 60)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        assert pass_at_k(n, c, k) == pytest.approx(comb_form(n, c, k), abs=1e-12)


def test_pass_at_k_rejects_bad_arguments_and_skips_small_tasks():
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    assert mean_pass_at_k([(2, 1), (10, 5)], 5) == pytest.approx(comb_form(10, 5, 5))
    assert mean_pass_at_k([(2, 1)], 5) is None
    assert pass_at_ks([(4, 2), (4, 0)], [1, 2]) == {"pass@1": 0.25, "pass@2": pytest.approx((5 / 6) / 2)}


SOURCE = """\
def f(a, b=2, *, c=None):
    total = 0
    for x in range(a):
        if x % 2 == 0 and not c:
            continue
        elif x > b:
            break
        total += -x
    while total < 0 or a is None:
        total = total + 1
    try:
        flag = True
    except (ValueError, KeyError):
        flag = False
    return total if flag else ~b
"""


def test_mutants_of_each_family_with_cosmic_ray_names():
    mutants = generate_mutants(SOURCE)
    ops = {m.operator for m in mutants}
    for name in [
        "ReplaceBinaryOperator_Mod_Add",
        "ReplaceBinaryOperator_Add_Sub",
        "ReplaceComparisonOperator_Eq_NotEq",
        "ReplaceComparisonOperator_Gt_GtE",
        "ReplaceComparisonOperator_Is_IsNot",
        "ReplaceUnaryOperator_USub_UAdd",
        "ReplaceUnaryOperator_Delete_USub",
        "ReplaceUnaryOperator_Delete_Not",
        "ReplaceUnaryOperator_Invert_USub",
        "ReplaceAndWithOr",
        "ReplaceOrWithAnd",
        "ReplaceTrueWithFalse",
        "ReplaceFalseWithTrue",
        "AddNot",
        "ReplaceBreakWithContinue",
        "ReplaceContinueWithBreak",
        "NumberReplacer",
        "ZeroIterationForLoop",
        "ExceptionReplacer",
    ]:
        assert name in ops, name
    # against None only Is -> IsNot; against a number never `is`
    assert "ReplaceComparisonOperator_Is_Eq" not in ops
    assert "ReplaceComparisonOperator_Eq_Is" not in ops
    # `elif` conditions get no AddNot (Cosmic-Ray mutates the `if` test only), `+=` is not a binary op
    addnot_lines = sorted(m.line for m in mutants if m.operator == "AddNot")
    assert addnot_lines == [4, 9, 15]
    counts = operator_counts(mutants)
    assert counts["break_continue"] == 2 and counts["zero_iteration_for_loop"] == 1
    assert family_of("ReplaceBinaryOperator_Add_Sub") == "binary_operator_replacement"


def test_mutant_text_edits_are_exact_and_ids_deterministic():
    mutants = generate_mutants(SOURCE)
    by_id = {m.id: m for m in mutants}
    assert len(by_id) == len(mutants)
    zero = next(m for m in mutants if m.operator == "ZeroIterationForLoop")
    assert "for x in []:" in zero.code
    number = [m for m in mutants if m.operator == "NumberReplacer" and m.line == 2]
    assert sorted(" ".join(m.code.splitlines()[1].split()) for m in number) == ["total = -1", "total = 1"]
    brk = next(m for m in mutants if m.operator == "ReplaceBreakWithContinue")
    assert brk.code.splitlines()[6].strip() == "continue"
    # the keyword-only marker `*` is an operator token to Cosmic-Ray; only `/` (positional-only) compiles
    star = [m for m in mutants if m.operator.startswith("ReplaceBinaryOperator_Mul_") and m.line == 1]
    assert len(star) == 11
    assert [m.operator for m in star if m.compiles] == ["ReplaceBinaryOperator_Mul_Div"]
    assert [m.id for m in generate_mutants(SOURCE)] == [m.id for m in mutants]


def test_mutants_match_cosmic_ray_operators_exactly():
    pytest.importorskip("cosmic_ray")
    import ast

    from cosmic_ray import plugins
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    def norm(code: str) -> str:
        try:
            return ast.dump(ast.parse(code))
        except SyntaxError:
            return "SYNTAX:" + "".join(code.split())

    ops = [(n.split("/")[-1], plugins.get_operator(n)) for n in plugins.operator_names()]
    ops = [(n, c()) for n, c in ops if not c.arguments()]
    source = SOURCE + "\n\n@staticmethod\ndef g(x, /, y):\n    return [x ** 2, y << 1, x | y, x if x >= 1.5 else -y]\n"
    theirs = []
    tree = get_ast(source)
    for name, op in ops:
        count = sum(1 for node in ast_nodes(tree) for _ in op.mutation_positions(node))
        theirs += [(name, norm(mutate_code(source, op, i))) for i in range(count)]
    ours = [(m.operator, norm(m.code)) for m in generate_mutants(source)]
    assert sorted(ours) == sorted(theirs)
