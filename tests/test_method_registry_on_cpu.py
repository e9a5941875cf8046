"""A method is one object: each row of codea1.method_traits.TRAITS has its object in
codea1.train.methods.METHODS, found in the module the row names, so a new method is its row, its module and
its docs."""

from __future__ import annotations

import pytest

from codea1.method_traits import TRAITS, MethodTraits
from codea1.train.methods import A1, METHODS, MethodRegistry


class Duel(A1):
    """A method a test adds: a row of its own, in a module of its own (this one)."""

    traits = MethodTraits("duel", "a test's method", writes_tests=True, separate_test_policy=True, module=__name__)


def test_every_row_of_the_traits_has_its_object():
    assert list(METHODS) == list(TRAITS)
    for name, row in TRAITS.items():
        method = METHODS[name]
        assert method.traits is row and method.name == name
        assert method.separate_test_policy == row.separate_test_policy
    assert METHODS["a1"] is METHODS["a1"]  # one object per method


def test_a_new_method_is_its_row_and_its_module():
    registry = MethodRegistry({**TRAITS, "duel": Duel.traits})
    assert isinstance(registry["duel"], Duel) and registry["duel"].writes_tests
    assert list(registry) == [*TRAITS, "duel"]
    orphan = MethodTraits("orphan", "no object", writes_tests=False, separate_test_policy=False, module=__name__)
    with pytest.raises(RuntimeError, match="defines 0 Method classes"):
        MethodRegistry({"orphan": orphan})["orphan"]
