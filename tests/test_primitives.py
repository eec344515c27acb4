"""Every primitive: numerical derivatives (forward, reverse, second order), vmap against a
Python loop, abstract evaluation against the impl, jaxpr type checks, float32 dtypes."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans.primitives import elementwise
from sweep import (F32, F64, A, Case, case_rng, check_case_grads, check_jaxprs,
                   check_vmap_matches_loop, check_vmap_of_derivatives, differentiable_part,
                   discovered_cases)

# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


def dot(dims):
    return lambda x, y: lax.dot_general(x, y, dims)


CASES = [
    # unary
    Case("neg", lax.neg, [A(3, 4)]),
    Case("exp", lax.exp, [A(3, 4)]),
    Case("log", lax.log, [A(3, 4, kind="pos")]),
    Case("sin", lax.sin, [A(3, 4)]),
    Case("cos", lax.cos, [A(3, 4)]),
    Case("tan", lax.tan, [A(5, kind="unit")]),
    Case("tanh", lax.tanh, [A(3, 4)]),
    Case("sinh", lax.sinh, [A(5)]),
    Case("cosh", lax.cosh, [A(5)]),
    Case("sqrt", lax.sqrt, [A(3, 4, kind="pos")]),
    Case("log1p", lax.log1p, [A(5, kind="pos")]),
    Case("expm1", lax.expm1, [A(5)]),
    Case("exp2", lax.exp2, [A(5)]),
    Case("log2", elementwise.log2_p.bind, [A(3, 4, kind="pos")]),
    Case("log10", elementwise.log10_p.bind, [A(5, kind="pos")]),
    Case("atan", lax.atan, [A(5)]),
    Case("asin", lax.asin, [A(3, 4, kind="unit")]),
    Case("acos", lax.acos, [A(5, kind="unit")]),
    Case("floor", lax.floor, [A(3, 4, kind="quarter")]),
    Case("ceil", lax.ceil, [A(5, kind="quarter")]),
    Case("round", lax.round, [A(3, 4, kind="quarter")]),
    Case("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
         [A(5, kind="quarter")]),
    Case("is_finite", lax.is_finite, [A(3, 4)], differentiable=False),
    Case("logistic", lax.logistic, [A(5)]),
    Case("abs", lax.abs, [A(3, 4, kind="away0")]),
    Case("sign", lax.sign, [A(3, 4, kind="away0")]),
    Case("integer_pow_2", lambda x: lax.integer_pow(x, 2), [A(3, 4)]),
    Case("integer_pow_3", lambda x: lax.integer_pow(x, 3), [A(3, 4)]),
    Case("integer_pow_0", lambda x: lax.integer_pow(x, 0), [A(3)]),
    Case("integer_pow_-2", lambda x: lax.integer_pow(x, -2), [A(3, 4, kind="away0")]),
    # complex, through real inputs and outputs
    Case("complex_mul_real_imag",
         lambda a, b: lax.real(lax.mul(lax.complex(a, b), lax.conj(lax.complex(b, a)))) +
         lax.imag(lax.mul(lax.complex(a, b), lax.complex(a, a))), [A(4), A(4)]),
    Case("complex_exp_abs", lambda a, b: lax.abs(lax.exp(lax.complex(a, b))), [A(4), A(4)]),
    Case("complex_abs", lambda a, b: lax.abs(lax.complex(a, b)), [A(4, kind="away0"), A(4)]),
    # binary, with broadcasting and weak scalars
    Case("add", lax.add, [A(3, 4), A(3, 4)]),
    Case("add_bcast", lax.add, [A(3, 4), A(4)]),
    Case("add_outer", lax.add, [A(3, 1), A(1, 4)]),
    Case("add_pyscalar", lax.add, [A(3, 4), A(kind="pyfloat")]),
    Case("sub", lax.sub, [A(3, 4), A(4)]),
    Case("sub_scalar_lhs", lax.sub, [A(), A(2, 3)]),
    Case("mul", lax.mul, [A(3, 4), A(3, 4)]),
    Case("mul_bcast", lax.mul, [A(2, 1, 4), A(3, 1)]),
    Case("mul_pyscalar", lambda x, s: lax.mul(s, x), [A(3), A(kind="pyfloat")]),
    Case("div", lax.div, [A(3, 4), A(3, 4, kind="away0")]),
    Case("div_bcast", lax.div, [A(4), A(3, 4, kind="away0")]),
    Case("pow", lax.pow, [A(3, 4, kind="pos"), A(3, 4)]),
    Case("pow_bcast", lax.pow, [A(3, 4, kind="pos"), A(4)]),
    Case("atan2", lax.atan2, [A(3, 4), A(3, 4)]),
    Case("atan2_bcast", lax.atan2, [A(4), A(3, 1, kind="away0")]),
    Case("atan2_pyscalar", lambda x, s: lax.atan2(s, x), [A(3), A(kind="pyfloat")]),
    # max/min/select are checked away from ties: the second operand is x + d with |d| >= 0.5.
    Case("max", lambda x, d: lax.max(x, lax.add(x, d)), [A(3, 4), A(3, 4, kind="away0")]),
    Case("min_bcast", lambda x, d: lax.min(x, lax.add(x, d)),
         [A(3, 4), A(4, kind="away0")]),
    Case("select", lambda p, x, y: lax.select(p, x, y), [A(3, 4, kind="bool"), A(3, 4), A(3, 4)]),
    Case("select_bcast", lambda p, x, y: lax.select(p, x, y), [A(4, kind="bool"), A(3, 4), A(1)]),
    Case("select_via_lt", lambda x, d: lax.select(lax.lt(x, lax.add(x, d)), x, lax.add(x, d)),
         [A(3, 4), A(3, 4, kind="away0")]),
    # comparisons and logical ops: zero derivative / non-float outputs
    *[Case(name, getattr(lax, name), [A(3, 4), A(4)], differentiable=False)
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    Case("and", lax.bitwise_and, [A(3, kind="bool"), A(3, kind="bool")], differentiable=False),
    Case("or", lax.bitwise_or, [A(3, kind="bool"), A(3, kind="bool")], differentiable=False),
    Case("not", lax.bitwise_not, [A(3, kind="bool")], differentiable=False),
    # reductions
    Case("reduce_sum_0", lambda x: lax.reduce_sum(x, (0,)), [A(3, 4)]),
    Case("reduce_sum_1", lambda x: lax.reduce_sum(x, (1,)), [A(3, 4, 2)]),
    Case("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1)), [A(3, 4)]),
    Case("reduce_max", lambda x: lax.reduce_max(x, (1,)), [A(3, 4)]),
    Case("reduce_min_all", lambda x: lax.reduce_min(x, (0, 1)), [A(3, 4)]),
    Case("argmax", lambda x: lax.argmax(x, 1), [A(3, 4)], differentiable=False),
    Case("argmin", lambda x: lax.argmin(x, 0), [A(3, 4)], differentiable=False),
    # shape
    Case("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [A(3, 1)]),
    Case("broadcast", lambda x: lax.broadcast(x, (2,)), [A(3)]),
    Case("reshape", lambda x: lax.reshape(x, (4, 3)), [A(3, 4)]),
    Case("transpose", lambda x: lax.transpose(x, (2, 0, 1)), [A(2, 3, 4)]),
    Case("squeeze", lambda x: lax.squeeze(x, (1,)), [A(3, 1, 4)]),
    Case("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), [A(3, 4)]),
    Case("slice", lambda x: lax.slice(x, (1, 0), (3, 4)), [A(4, 5)]),
    Case("slice_strided", lambda x: lax.slice(x, (0, 1), (5, 5), (2, 3)), [A(5, 6)]),
    Case("pad", lambda x, v: lax.pad(x, v, ((1, 2, 0), (0, 1, 1))), [A(2, 3), A()]),
    Case("concatenate", lambda x, y: lax.concatenate([x, y], 1), [A(2, 3), A(2, 2)]),
    Case("rev", lambda x: lax.rev(x, (0,)), [A(3, 4)]),
    # dynamic slicing (start indices are integer operands, clamped)
    Case("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 3)),
         [A(4, 5), A(kind="int")]),
    Case("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (1, i)),
         [A(4, 5), A(2, 2), A(kind="int")]),
    # lax's helpers over them (starts drawn in -3..3: negative ones count from the end)
    Case("dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
         [A(3, 5), A(kind="int")]),
    Case("dynamic_index_in_dim", lambda x, i: lax.dynamic_index_in_dim(x, i, 0, False),
         [A(4, 3), A(kind="int")]),
    Case("dynamic_update_index_in_dim",
         lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, axis=1),
         [A(3, 4), A(3), A(kind="int")]),
    Case("slice_and_index_in_dim", lambda x: lax.slice_in_dim(x, 1, None, 2, axis=1)
         + lax.index_in_dim(x, -1, axis=1), [A(3, 5)]),
    Case("index_take", lambda x, i, j: lax.index_take(x, (i, j), (2, 0)),
         [A(3, 2, 4), A(5, kind="pos"), A(5, kind="int")]),
    # dot_general
    Case("matmul", dot((((1,), (0,)), ((), ()))), [A(3, 4), A(4, 5)]),
    Case("batched_matmul", dot((((2,), (1,)), ((0,), (0,)))), [A(2, 3, 4), A(2, 4, 5)]),
    Case("dot_vectors", dot((((0,), (0,)), ((), ()))), [A(4), A(4)]),
    Case("outer", dot((((), ()), ((), ()))), [A(3), A(2)]),
    Case("contract_two_axes_batch_middle", dot((((0, 3), (2, 0)), ((1,), (1,)))),
         [A(2, 3, 4, 5), A(5, 3, 2, 6)]),
    Case("matvec_lhs_transposed", dot((((0,), (0,)), ((), ()))), [A(4, 3), A(4)]),
    Case("matmul_both_transposed", dot((((0,), (1,)), ((), ()))), [A(4, 3), A(5, 4)]),
    Case("vecmat_rhs_transposed", dot((((0,), (1,)), ((), ()))), [A(4), A(5, 4)]),
    Case("contract_two_axes_no_batch", dot((((0, 2), (1, 0)), ((), ()))),
         [A(2, 3, 4), A(4, 2, 5)]),
    # conversion
    Case("convert_f32", lambda x: lax.convert_element_type(lax.convert_element_type(x, np.float32),
                                                           np.float64),
         [A(3)], order=1, dtypes=(F64,), tol=1e-3),
    Case("convert_int", lambda x: lax.convert_element_type(x, np.int64), [A(3)],
         differentiable=False),
    # Not checked numerically: its derivative is zero by definition, not by calculus.
    Case("stop_gradient", lambda x: lax.mul(x, lax.stop_gradient(x)), [A(3)], order=0),
    Case("zeros_like", lambda x: lax.add(x, lax.zeros_like(x)), [A(3)]),
]

CASES += discovered_cases("PRIMITIVE_CASES")
IDS = [c.name for c in CASES]
DIFF_CASES = [c for c in CASES if c.differentiable]
FLOAT32_CASES = [c for c in CASES if F32 in c.dtypes]


# ------------------------------------------------------------------------------------------
# Derivatives
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", DIFF_CASES, ids=[c.name for c in DIFF_CASES])
def test_derivatives_numerically(case):
    if case.order == 0:
        pytest.skip("derivative is not the numerical one by design (see its own test)")
    check_case_grads(case, salt=0)


@pytest.mark.parametrize("case", DIFF_CASES, ids=[c.name for c in DIFF_CASES])
def test_jaxprs_typecheck(case):
    """The jaxprs of f, its JVP and its gradient type-check and evaluate to the eager
    results."""
    rng = case_rng(case, 1)
    f, primals = differentiable_part(case, case.draw(rng))
    check_jaxprs(f, primals, rng)


# ------------------------------------------------------------------------------------------
# Abstract evaluation and dtypes
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_abstract_eval_matches_impl(case):
    args = case.draw(case_rng(case, 2))
    out = case(*args)
    shape = ft.eval_shape(case, *args)
    assert shape.shape == np.shape(out)
    assert shape.dtype == np.asarray(out).dtype, (shape.dtype, np.asarray(out).dtype)


@pytest.mark.parametrize("case", FLOAT32_CASES, ids=[c.name for c in FLOAT32_CASES])
def test_float32_preserved(case):
    rng = case_rng(case, 3)
    args = case.draw(rng, F32)
    out = case(*args)
    in_floats = {np.asarray(a).dtype for a in args if isinstance(a, np.ndarray)
                 and a.dtype.kind == "f"}
    if in_floats == {F32} and np.asarray(out).dtype.kind == "f":
        assert np.asarray(out).dtype == np.float32
        assert ft.eval_shape(case, *args).dtype == np.float32
    if case.differentiable and in_floats == {F32}:
        f, primals = differentiable_part(case, args)
        grads = ft.grad(lambda *p: lax.reduce_sum(lax.real(f(*p)) if np.asarray(
            out).dtype.kind == "c" else f(*p), tuple(range(np.ndim(out)))),
            argnums=tuple(range(len(primals))))(*primals)
        for g, p in zip(grads, primals):
            assert np.asarray(g).dtype == np.asarray(p).dtype


# ------------------------------------------------------------------------------------------
# Batching
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_vmap_matches_loop(case):
    check_vmap_matches_loop(case, case_rng(case, 4))


@pytest.mark.parametrize("case", DIFF_CASES, ids=[c.name for c in DIFF_CASES])
def test_vmap_of_jvp_and_vjp_matches_loop(case):
    """Batching the JVP and transpose rules: per-member tangents and cotangents, and
    per-example gradients, batched along the leading and the last axis."""
    rng = case_rng(case, 5)
    f, primals = differentiable_part(case, case.draw(rng))
    for in_axis in (0, -1):
        check_vmap_of_derivatives(f, primals, rng, in_axis)


# ------------------------------------------------------------------------------------------
# Specific semantics
# ------------------------------------------------------------------------------------------


def test_max_ties_share_derivative():
    x = np.array([1.0, 2.0, 3.0])
    assert np.allclose(ft.grad(lambda x: lax.reduce_sum(lax.max(x, x), (0,)))(x), 1.0)
    g = ft.grad(lambda x: lax.reduce_max(x, (0,)))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5])


def test_pow_at_zero_base_has_zero_exponent_derivative():
    assert ft.grad(lambda y: lax.pow(0.0, y), argnums=0)(2.0) == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_breaks_ties_by_its_rounding_method(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -1.25, np.inf, -np.inf], dtype)
    away = lax.round(x)
    np.testing.assert_array_equal(away, [1, 2, 3, -1, -3, 0, -1, np.inf, -np.inf])
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint(x))
    assert away.dtype == dtype and np.isnan(lax.round(np.array([np.nan], dtype)))[0]


def test_is_finite_and_rounding_reject_non_floats():
    np.testing.assert_array_equal(lax.is_finite(np.array([1.0, np.inf, -np.inf, np.nan])),
                                  [True, False, False, False])
    for fun in (lax.floor, lax.ceil, lax.round, lax.is_finite):
        for bad in (np.array([1 + 2j]), np.array([1, 2])):
            with pytest.raises(TypeError, match=f"{fun.__name__} requires a real floating"):
                ft.make_jaxpr(fun)(bad)
    with pytest.raises(TypeError, match="atan2 requires a real floating"):
        lax.atan2(np.array([1j]), 1.0)
    with pytest.raises(TypeError, match="atan2 requires"):
        ft.make_jaxpr(lax.atan2)(np.array([1, 2]), np.array([3, 4]))
    with pytest.raises(ValueError, match="atan2: operand shapes"):
        lax.atan2(np.ones(3), np.ones(2))


def test_stop_gradient_blocks_derivatives_in_both_modes():
    x = np.array([1.0, -2.0, 3.0])
    f = lambda x: lax.mul(x, lax.stop_gradient(x))  # noqa: E731
    np.testing.assert_array_equal(ft.jvp(f, (x,), (np.ones(3),))[1], x)
    np.testing.assert_array_equal(ft.grad(lambda x: lax.reduce_sum(f(x), (0,)))(x), x)
    # The gradient, stop_gradient(x), is itself constant: every higher derivative is zero.
    np.testing.assert_array_equal(
        ft.hessian(lambda x: lax.reduce_sum(f(x), (0,)))(x), np.zeros((3, 3)))


def test_sign_and_comparisons_have_zero_derivative():
    x = np.array([-1.0, 2.0])
    np.testing.assert_array_equal(ft.grad(lambda x: lax.reduce_sum(lax.sign(x), (0,)))(x), 0.0)
    y, t = ft.jvp(lambda x: lax.lt(x, 0.0), (x,), (np.ones(2),))
    assert y.dtype == np.bool_ and t.dtype == ft.float0


def _sum_to_shape(a, shape):
    a = np.sum(a, axis=tuple(range(a.ndim - len(shape))))
    return np.sum(a, axis=tuple(i for i, n in enumerate(shape) if n == 1), keepdims=True)


@pytest.mark.parametrize("shapes", [((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))])
def test_broadcast_cotangents_sum_over_broadcast_axes(shapes):
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(s) for s in shapes)
    full = np.broadcast_shapes(*shapes)
    gx, gy = ft.grad(lambda x, y: lax.reduce_sum(lax.mul(x, y), tuple(range(len(full)))),
                     argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, _sum_to_shape(np.broadcast_to(y, full), x.shape), rtol=1e-13)
    np.testing.assert_allclose(gy, _sum_to_shape(np.broadcast_to(x, full), y.shape), rtol=1e-13)
    assert gx.shape == x.shape and gy.shape == y.shape


def test_unused_inputs_get_zero_gradients_without_work():
    calls = []

    def f(x, y):
        calls.append(1)
        return lax.reduce_sum(lax.sin(x), (0,))

    gx, gy = ft.grad(f, argnums=(0, 1))(np.ones(3), np.ones(2))
    np.testing.assert_allclose(gx, np.cos(1.0))
    np.testing.assert_array_equal(gy, np.zeros(2))
    jaxpr = ft.make_jaxpr(ft.grad(f, argnums=1))(np.ones(3), np.ones(2)).jaxpr
    assert "cos" not in str(jaxpr) and "mul" not in str(jaxpr), str(jaxpr)


def _primitive_case_tables() -> list:
    """``CASES`` here plus the ``PRIMITIVE_CASES`` of every other test module that sweeps
    primitives of its own family (a new family adds its table there, not here)."""
    import importlib
    import pathlib
    tables = [CASES]
    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        if path.stem != "test_primitives" and "\nPRIMITIVE_CASES" in path.read_text():
            tables.append(importlib.import_module(path.stem).PRIMITIVE_CASES)
    return tables


def test_every_registered_primitive_is_covered():
    """New primitives must be added to a sweep: ``CASES`` above or a family's
    ``PRIMITIVE_CASES``."""
    from functrans.core import impl_rules
    traced = set()
    for table in _primitive_case_tables():
        for case in table:
            args = case.draw(case_rng(case, 6))
            traced |= {e.primitive.name for e in ft.make_jaxpr(case)(*args).eqns}
    internal = {"add_any"}
    covered_elsewhere = {"cond", "while", "scan",  # tests/test_control_flow.py
                         "custom_jvp_call", "custom_vjp_call", "custom_lin",  # test_custom_rules
                         "checkpoint",
                         "debug_callback",  # tests/test_jax_names.py (no value to sweep)
                         "rng_uniform",  # tests/test_lax_misc.py (stateful: a new draw
                                         # each call, nothing to compare a loop with)
                         # LAPACK's packed forms and integer permutations, with no
                         # derivative: against SciPy's LAPACK, under vmap and jit, in
                         # tests/test_lax_linalg.py
                         "hessenberg_reflectors", "tridiagonal", "lu_pivots_to_permutation",
                         "io_callback",  # tests/test_jax_names.py (effects, no derivative)
                         "linear_call",  # tests/test_custom_rules.py (a user's transpose)
                         # a named vmap turns them into reductions before any jaxpr:
                         # tests/cases_collectives.py and tests/test_collectives.py
                         "psum", "pmax", "pmin", "all_gather", "axis_index", "ppermute",
                         "all_to_all", "reduce_scatter"}
    internal |= covered_elsewhere
    missing = {p.name for p in impl_rules} - traced - internal
    assert not missing, f"primitives without a test case: {sorted(missing)}"


def test_add_any_batches_one_mapped_and_one_unmapped_tangent():
    # Cotangents of x meet from a batched and an unbatched path under vmap(grad).
    def f(x, y):
        return fnp.sum(x * y + x)

    closed = ft.make_jaxpr(ft.vmap(ft.grad(f), in_axes=(None, 0)))(np.ones(2), np.ones((3, 2)))
    ft.check_jaxpr(closed.jaxpr)
    y = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(ft.vmap(ft.grad(f), in_axes=(None, 0))(np.ones(2), y), y + 1)
