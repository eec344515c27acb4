"""docs/coverage.md is current (regenerated here from the sweep registry and compared), and
the pieces it is built from tell the truth: the call recorder, the checks read from a case,
the stored JAX names and the exclusions."""
from __future__ import annotations

import difflib

import numpy as np
import pytest

import functrans.nn as fnn
import functrans.numpy as fnp
import coverage_table as ct
from coverage_exclusions import EXCLUSIONS
from sweep import F32, F64, A, Case, creation_case, numpy_case, tree_case


@pytest.fixture(scope="module")
def coverage():
    return ct.sweep_coverage()


def test_page_is_current(coverage):
    want = ct.render(ct.jax_names(), coverage)
    have = ct.PAGE.read_text()
    if have != want:
        diff = "".join(list(difflib.unified_diff(
            have.splitlines(True), want.splitlines(True), "docs/coverage.md (on disk)",
            "docs/coverage.md (generated)", n=0))[:40])
        pytest.fail("docs/coverage.md is stale: run `PYTHONPATH=$PWD python "
                    f"tests/coverage_table.py --write` and commit it\n{diff}")


def test_every_function_the_numpy_sweep_names_is_credited(coverage):
    """The recorder agrees with tests/test_numpy.py's own list of the functions its cases
    call, and credits values, both derivative modes and vmap to them."""
    import test_numpy
    for name in sorted(test_numpy.ALL_NUMPY_FUNCTIONS - {"linalg"}):
        checks = coverage.get(("jax.numpy", name))
        assert checks is not None, f"no sweep case credited to {name}"
        assert checks.values and checks.vmap and checks.standin, name
    assert coverage[("jax.numpy", "sin")].fwd == coverage[("jax.numpy", "sin")].rev == 2
    assert coverage[("jax.numpy", "sin")].complex


def _recorded(fun, *args):
    with ct.record_calls(ct.public_callables()) as recorder:
        fun(*args)
    return recorder.names


def test_recorder_credits_the_outermost_public_call_only():
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    # std computes a mean inside: only std is credited; sin and sum are both called here.
    assert _recorded(lambda v: fnp.sum(fnp.sin(fnp.std(v, axis=0))), x) == {
        ("jax.numpy", "std"), ("jax.numpy", "sin"), ("jax.numpy", "sum")}
    # a function referenced directly (not through the module), a custom_jvp one, a submodule's
    assert _recorded(fnn.relu, x) == {("jax.nn", "relu")}
    assert ("jax.numpy.linalg", "norm") in _recorded(fnp.linalg.norm, x)
    # NumPy's own functions, and functions functrans.numpy passes through from NumPy
    assert _recorded(lambda v: np.add(v, 1.0), x) == set()
    assert _recorded(lambda v: fnp.issubdtype(v.dtype, np.floating), x) == set()
    assert ct.is_reexported(fnp.issubdtype) and not ct.is_reexported(fnp.sin)


def test_checks_follow_the_case_fields_and_table():
    x = [np.ones((3, 4))]
    plain = ct.case_checks("numpy", numpy_case("t", lambda m, v: m.sin(v), A(3, 4)), x, set())
    assert (plain.values, plain.fwd, plain.rev, plain.vmap, plain.float32, plain.complex,
            plain.standin, plain.jit) == (True, 2, 2, True, True, False, True, True)
    no_diff = ct.case_checks("numpy", numpy_case("t", lambda m, v: m.sin(v), A(3, 4),
                                                 dtypes=(F64,), diff=False), x, set())
    assert (no_diff.fwd, no_diff.float32) == (0, False)
    lax_case = Case("t", fnp.sin, [A(3, 4)], order=0, dtypes=(F64, F32))
    lax_checks = ct.case_checks("lax", lax_case, x, {"lax-t-eval"})
    assert (lax_checks.values, lax_checks.fwd, lax_checks.standin) == (False, 0, False)
    # jit needs concrete values here: the case does not count as checked under jit
    concrete = ct.case_checks("numpy", numpy_case("t", lambda m, v: m.sin(v) if float(
        m.sum(v)) > 0 else v, A(3, 4)), x, set())
    assert not concrete.jit


def test_creation_and_tree_cases_mark_what_does_not_apply():
    eye = ct.creation_checks(creation_case("t", lambda m, **kw: m.eye(2, dtype=np.float32, **kw),
                                           like=True), fnp.eye(2, dtype=np.float32), True)
    assert (eye.values, eye.float32, eye.complex, eye.standin, eye.jit) == (
        True, True, False, True, True)
    assert eye.na == {"fwd", "rev", "vmap"}
    window = ct.creation_checks(creation_case("t", lambda m: m.hanning(3), jit=False),
                                fnp.hanning(3), False)
    assert window.na == {"fwd", "rev", "vmap", "standin"} and not window.jit
    tree_checks = ct.tree_checks(tree_case("t", lambda t: t, lambda rng: 1.0, lambda t: t))
    assert (tree_checks.fwd, tree_checks.rev, tree_checks.vmap) == (2, 2, True)
    assert tree_checks.na == {"float32", "complex"}
    # A column is "–" only where no case of the function applies it.
    merged = ct.Checks()
    merged.merge(window)
    row = ct.Row("hanning", "function", "present", checks=merged)
    assert ct._row_line(row) == "| `hanning` | present | ✓ | – | – | – | · | · | – | · | 1 |"
    merged.merge(ct.case_checks("numpy", numpy_case("t", lambda m, v: m.sin(v), A(3)),
                                [np.ones(3)], set()))
    assert ct._row_line(row) == "| `hanning` | present | ✓ | 2 | 2 | ✓ | ✓ | · | ✓ | ✓ | 2 |"


def test_numpy_fft_and_tree_functions_all_have_a_case(coverage):
    """Every present function of these namespaces is swept (by an ordinary, a
    creation or a tree case)."""
    for namespace, table in ct.rows(ct.jax_names(), coverage).items():
        if namespace in ("jax.numpy", "jax.numpy.fft", "jax.tree"):
            bare = [r.name for r in table
                    if r.status == "present" and r.kind == "function" and not r.checks]
            assert not bare, f"{namespace}: no sweep case calls {bare}"


def test_jax_names_are_stored_for_every_namespace():
    names = ct.jax_names()
    assert names["jax_version"]
    assert set(names["namespaces"]) == set(ct.NAMESPACES)
    kinds = {k for ns in names["namespaces"].values() for k in ns.values()}
    assert kinds <= {"function", "type", "constant", "module", "object"}, kinds
    assert names["namespaces"]["jax.numpy"]["sin"] == "function"


def test_exclusions_name_jax_names_that_functrans_lacks():
    names = ct.jax_names()["namespaces"]
    for namespace, excluded in EXCLUSIONS.items():
        module = ct.functrans_module(namespace)
        for name, why in excluded.items():
            assert name in names[namespace], f"{namespace}.{name} is not a JAX name"
            assert not hasattr(module, name), (
                f"{namespace}.{name} is excluded but functrans has it: drop the exclusion")
            assert why and why[0].islower() and not why.endswith("."), (namespace, name, why)


def test_stored_names_match_installed_jax():
    """Only where JAX is installed: the stored names are JAX's (else regenerate them)."""
    jax = pytest.importorskip("jax")
    stored = ct.jax_names()
    if stored["jax_version"] != jax.__version__:
        pytest.skip(f"names stored from JAX {stored['jax_version']}, {jax.__version__} here")
    import jax_names
    assert jax_names.collect() == stored
