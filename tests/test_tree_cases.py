"""The ``TREE_CASES`` of tests/cases_*.py (see ``sweep.TreeCase``): every ``functrans.tree``
function used on traced pytrees, against the computation written out by hand: values and
``jit``; derivatives in both modes to second order against central differences, and
``grad`` against the reference's; ``vmap`` against a loop."""
from __future__ import annotations

import pytest

import functrans.numpy as fnp
import functrans.tree as tree
from sweep import check_tree_case, discovered_cases, ids, tree_case

CASES = discovered_cases("TREE_CASES")


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_values_and_jit(case):
    check_tree_case(case, "values")


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_derivatives(case):
    check_tree_case(case, "grads")


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_vmap_matches_loop(case):
    check_tree_case(case, "vmap")


def test_a_wrong_reference_fails():
    import cases_tree
    wrong = tree_case("map", lambda t: tree.map(fnp.sin, t), cases_tree._make,
                      lambda t: cases_tree._by_hand(t, fnp.cos))
    with pytest.raises(AssertionError):
        check_tree_case(wrong, "values")
    with pytest.raises(AssertionError):
        check_tree_case(wrong, "grads")
