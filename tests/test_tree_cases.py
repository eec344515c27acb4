"""The ``TREE_CASES`` of tests/cases_*.py (see ``sweep.TreeCase``): every ``functrans.tree``
function used on traced pytrees, against the computation written out by hand: values and
``jit``; derivatives in both modes to second order against central differences, and
``grad`` against the reference's; ``vmap`` against a loop; on the CuPy stand-in (leaves,
results and gradients stay on the device, with no copy between host and device)."""
from __future__ import annotations

import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.tree as tree
from functrans.tree_util import tree_leaves
from sweep import assert_close, case_rng, check_tree_case, discovered_cases, ids, tree_case

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


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_on_device(device, case):
    host = case.make(case_rng(case))
    t = device.put(host)

    def summed(tree_):
        return sum(fnp.sum(x) for x in tree_leaves(case(tree_)))
    with device.transfers() as counted:
        out, grads = case(t), ft.grad(summed)(t)
    if counted is not None:
        assert (counted.h2d, counted.d2h) == (0, 0), (counted.h2d_log, counted.d2h_log)
    for leaf in tree_leaves((out, grads)):
        assert isinstance(leaf, device.array_type), f"{case.name}: {type(leaf).__name__}"
    assert_close(device.get(out), case.reference(host), 1e-13, 1e-13, case.name)
    assert_close(device.get(grads), ft.grad(lambda h: sum(
        fnp.sum(x) for x in tree_leaves(case.reference(h))))(host), 1e-12, 1e-12, case.name)


def test_a_wrong_reference_fails():
    import cases_tree
    wrong = tree_case("map", lambda t: tree.map(fnp.sin, t), cases_tree._make,
                      lambda t: cases_tree._by_hand(t, fnp.cos))
    with pytest.raises(AssertionError):
        check_tree_case(wrong, "values")
    with pytest.raises(AssertionError):
        check_tree_case(wrong, "grads")
