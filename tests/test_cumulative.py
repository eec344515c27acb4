"""functrans/primitives/cumulative.py: cumsum, cumprod, cummax, cummin and reduce_prod
against NumPy, numerical derivatives to second order (with exact zeros for the products),
vmap against a Python loop, the numpy-level functions, errors and jaxprs."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans.core import impl_rules
from functrans.primitives import cumulative as cu
from sweep import (A, Case, assert_close, case_rng, check_case_grads, check_grads, check_jvp,
                   check_vmap_matches_loop, check_vmap_of_derivatives, draw, ids)

CUMULATIVE = {"cumsum": cu.cumsum, "cumprod": cu.cumprod, "cummax": cu.cummax,
              "cummin": cu.cummin}
NUMPY_ACCUMULATE = {"cumsum": np.cumsum, "cumprod": np.cumprod,
                    "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate}


def _rng(*key) -> np.random.Generator:
    return case_rng(repr(key))


def _reference(name: str, x, axis: int, reverse: bool):
    accumulate = NUMPY_ACCUMULATE[name]
    if not reverse:
        return accumulate(x, axis=axis)
    return np.flip(accumulate(np.flip(x, axis), axis=axis), axis)


def _draw(rng, shape, dtype=np.float64, kind="real"):
    return draw(rng, shape, dtype, kind)


def _tolerance(dtype) -> float:
    return {"float32": 1e-5, "complex64": 1e-5}.get(np.dtype(dtype).name, 1e-10)


# ------------------------------------------------------------------------------------------
# Values against NumPy
# ------------------------------------------------------------------------------------------

SHAPES_AXES = [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1),
               ((2, 0, 3), 1), ((1, 6), 1)]


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_values_match_numpy(name, dtype, reverse):
    if name in ("cummax", "cummin") and np.dtype(dtype).kind == "c":
        pytest.skip("no ordering of complex values")
    for shape, axis in SHAPES_AXES:
        x = _draw(_rng(name, dtype, shape), shape, dtype, "zeros")
        out = CUMULATIVE[name](x, axis, reverse)
        want = _reference(name, x, axis, reverse)
        assert out.dtype == np.dtype(dtype) and out.shape == x.shape
        tol = _tolerance(dtype)
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol,
                                   err_msg=f"{name} shape={shape} axis={axis}")
        shaped = ft.eval_shape(lambda x: CUMULATIVE[name](x, axis, reverse), x)
        assert (shaped.shape, shaped.dtype) == (x.shape, x.dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
@pytest.mark.parametrize("shape,axes", [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)),
                                        ((2, 3, 4), (0, 2)), ((2, 3, 4), (-1, 1)),
                                        ((3, 0), (1,)), ((3, 4), ())])
def test_reduce_prod_values_match_numpy(dtype, shape, axes):
    x = _draw(_rng("reduce_prod", dtype, shape), shape, dtype, "zeros")
    out = cu.reduce_prod(x, axes)
    want = np.prod(x, axis=tuple(axes), dtype=dtype)
    assert np.asarray(out).dtype == np.dtype(dtype) and np.shape(out) == want.shape
    tol = _tolerance(dtype)
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    shaped = ft.eval_shape(lambda x: cu.reduce_prod(x, axes), x)
    assert (shaped.shape, shaped.dtype) == (want.shape, want.dtype)


def test_ties_of_running_extrema_go_to_the_lowest_index():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    g = ft.grad(lambda x: cu.cummax(x).sum())(x)
    np.testing.assert_array_equal(g, [1.0, 3.0, 0.0, 0.0])
    # Reversed: position i takes the first maximum of x[i:].
    y = np.array([2.0, 3.0, 3.0, 1.0])
    np.testing.assert_array_equal(ft.grad(lambda y: cu.cummax(y, 0, True).sum())(y),
                                  [0.0, 2.0, 1.0, 1.0])
    np.testing.assert_array_equal(ft.grad(lambda y: cu.cummin(y, 0, True).sum())(-y),
                                  [0.0, 2.0, 1.0, 1.0])


# ------------------------------------------------------------------------------------------
# Derivatives, numerically, forward and reverse, to second order
# ------------------------------------------------------------------------------------------

DERIVATIVE_CASES = [
    *[Case(f"{name}_axis{axis}{'_rev' if rev else ''}", CUMULATIVE[name],
           [A(*shape, kind="spread" if name in ("cummax", "cummin") else "real")],
           static=dict(axis=axis, reverse=rev))
      for name in sorted(CUMULATIVE)
      for shape, axis, rev in [((6,), 0, False), ((3, 5), 1, True), ((4, 3), 0, True),
                               ((2, 3, 5), -1, False)]],
    Case("cumprod_zeros", cu.cumprod, [A(4, 6, kind="zeros")], static=dict(axis=1)),
    Case("cumprod_zeros_rev", cu.cumprod, [A(6, 3, kind="zeros")],
         static=dict(axis=0, reverse=True)),
    Case("cumprod_all_zeros", lambda x: cu.cumprod(x * 0, 0), [A(5)]),
    Case("reduce_prod_last", cu.reduce_prod, [A(3, 5)], static=dict(axes=(1,))),
    Case("reduce_prod_two_axes", cu.reduce_prod, [A(2, 3, 3)], static=dict(axes=(0, 2))),
    Case("reduce_prod_all", cu.reduce_prod, [A(3, 4, kind="zeros")], static=dict(axes=(0, 1))),
    Case("reduce_prod_zeros", cu.reduce_prod, [A(6, 3, kind="zeros")], static=dict(axes=(0,))),
    Case("prod_numpy_level", cu.numpy_prod, [A(3, 4, kind="zeros")],
         static=dict(axis=-1, keepdims=True)),
    Case("cumsum_numpy_level", cu.numpy_cumsum, [A(3, 4)]),
    Case("cumprod_numpy_level", cu.numpy_cumprod, [A(4, 3, kind="zeros")], static=dict(axis=0)),
    Case("cumsum_linear", cu.cumsum, [A(3, 4)], static=dict(axis=1, reverse=True), linear=True),
]

#: This family's primitive sweep (tests/test_primitives.py checks every primitive has one).
PRIMITIVE_CASES = DERIVATIVE_CASES


@pytest.mark.parametrize("case", DERIVATIVE_CASES, ids=ids(DERIVATIVE_CASES))
def test_derivatives_numerically(case):
    check_case_grads(case)


def test_products_with_two_zeros_and_a_zero_from_a_product():
    # Two zeros in one product: a derivative needs both, so every gradient entry but the
    # zeros' is 0 and each zero gets the product of the others.
    x = np.array([0.0, 2.0, 0.0, 3.0])
    np.testing.assert_array_equal(ft.grad(lambda x: cu.reduce_prod(x, (0,)))(x), 0.0)
    hess = ft.hessian(lambda x: cu.reduce_prod(x, (0,)))(x)
    np.testing.assert_array_equal(hess[0], [0.0, 0.0, 6.0, 0.0])
    check_grads(lambda x: cu.cumprod(x, 0), (x,), 2, _rng("two zeros"))
    # Exact closed forms: d cumprod(x)[i] / d x[j] = prod of x[:i+1] without x[j].
    jac = ft.jacfwd(lambda x: cu.cumprod(x, 0))(np.array([2.0, 0.0, 5.0]))
    np.testing.assert_array_equal(jac, [[1, 0, 0], [0, 2, 0], [0, 10, 0]])
    np.testing.assert_array_equal(ft.jacrev(lambda x: cu.cumprod(x, 0))(
        np.array([2.0, 0.0, 5.0])), jac)


@pytest.mark.parametrize("fun", [lambda x: cu.cumprod(x, 0), lambda x: cu.cumsum(x, 0, True),
                                 lambda x: cu.reduce_prod(x, (0,))],
                         ids=["cumprod", "cumsum", "reduce_prod"])
def test_complex_derivatives(fun):
    # Reverse mode transposes without conjugating (J^T ct, as in JAX), so it is checked
    # against forward mode with the bilinear pairing; forward mode numerically.
    rng = _rng("complex")
    x = _draw(rng, (5,), np.complex128, "zeros")
    check_jvp(fun, (x,), rng)
    check_jvp(lambda x: ft.jvp(fun, (x,), (np.ones_like(x),))[1], (x,), rng)
    t, ct = (_draw(rng, (5,), np.complex128) for _ in range(2))
    out, pullback = ft.vjp(fun, x)
    ct = ct[:np.size(out)].reshape(np.shape(out))
    (ct_in,) = pullback(ct)
    np.testing.assert_allclose(np.sum(ct_in * t), np.sum(ct * ft.jvp(fun, (x,), (t,))[1]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "reduce_prod"])
def test_float32_is_kept_by_values_and_gradients(name):
    x = _draw(_rng("f32", name), (3, 4), np.float32, "spread")
    fun = (lambda x: cu.reduce_prod(x, (1,))) if name == "reduce_prod" else (
        lambda x: CUMULATIVE[name](x, 1))
    assert fun(x).dtype == np.float32
    assert ft.grad(lambda x: fun(x).sum())(x).dtype == np.float32


def test_integer_operands_have_zero_tangents():
    x = np.array([[1, 2], [3, 4]])
    y, t = ft.jvp(lambda x: cu.cumprod(x, 1), (x,), (np.zeros(x.shape, ft.float0),))
    np.testing.assert_array_equal(y, [[1, 2], [3, 12]])
    assert t.dtype == ft.float0


def test_empty_axis_derivatives():
    x = np.zeros((0, 3))
    assert ft.jvp(lambda x: cu.cumprod(x, 0), (x,), (x,))[1].shape == (0, 3)
    assert ft.grad(lambda x: cu.cummax(x, 0).sum())(x).shape == (0, 3)
    np.testing.assert_array_equal(ft.jvp(lambda x: cu.reduce_prod(x, (0,)), (x,), (x,))[1],
                                  np.zeros(3))


# ------------------------------------------------------------------------------------------
# vmap against a Python loop
# ------------------------------------------------------------------------------------------

def _vmap_case(name, fun, **static):
    kind = "spread" if name.startswith("cumm") else "zeros"
    return Case(name, fun, [A(3, 4, kind=kind)], static=static)


VMAP_CASES = {c.name: c for c in [
    *[_vmap_case(f"{name}_{rev}", CUMULATIVE[name], axis=1, reverse=rev)
      for name in sorted(CUMULATIVE) for rev in (False, True)],
    _vmap_case("cumsum_axis0", cu.cumsum, axis=0),
    _vmap_case("reduce_prod_1", cu.reduce_prod, axes=(1,)),
    _vmap_case("reduce_prod_all", cu.reduce_prod, axes=(0, 1)),
    _vmap_case("numpy_cumprod_flat", cu.numpy_cumprod),
]}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_matches_loop(name, in_axis):
    """The values, and the JVP, transpose and gradient batched: per-member tangents,
    cotangents and primals."""
    case = VMAP_CASES[name]
    rng = _rng("vmap", name)
    check_vmap_matches_loop(case, rng, in_axes=[(in_axis,)])
    check_vmap_of_derivatives(case, case.draw(rng), rng, in_axis)


# ------------------------------------------------------------------------------------------
# numpy-level functions
# ------------------------------------------------------------------------------------------

NUMPY_LEVEL = [(cu.numpy_cumsum, np.cumsum), (cu.numpy_cumprod, np.cumprod)]


@pytest.mark.parametrize("ours,theirs", NUMPY_LEVEL, ids=["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8,
                                   np.bool_, np.complex64])
def test_numpy_level_cumulative_matches_numpy(ours, theirs, dtype):
    x = (_rng("np", dtype).integers(0, 3, (2, 3, 4))).astype(dtype)
    other = np.complex128 if np.dtype(dtype).kind == "c" else np.float32
    for axis, kwargs in [(None, {}), (1, {}), (-1, {}), (0, {"dtype": other})]:
        out, want = ours(x, axis, **kwargs), theirs(x, axis, **kwargs)
        assert out.dtype == want.dtype and out.shape == want.shape, (axis, kwargs)
        np.testing.assert_allclose(out, want, rtol=1e-10)
    np.testing.assert_array_equal(ours([[1, 2], [3, 4]]), theirs([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(ours(np.float64(3.0)), theirs(np.float64(3.0)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint16, np.bool_,
                                   np.complex128])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (None, True), (1, False),
                                           ((0, 2), True), (-1, False), ((), False)])
def test_numpy_level_prod_matches_numpy(dtype, axis, keepdims):
    x = (_rng("prod", dtype).integers(0, 3, (2, 3, 4))).astype(dtype)
    out, want = cu.numpy_prod(x, axis, keepdims=keepdims), np.prod(x, axis, keepdims=keepdims)
    assert np.asarray(out).dtype == want.dtype and np.shape(out) == want.shape
    np.testing.assert_allclose(out, want, rtol=1e-10)
    assert cu.numpy_prod(x, axis, np.float32).dtype == np.float32


def test_numpy_level_functions_run_under_transforms():
    x = np.array([[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]])
    np.testing.assert_array_equal(ft.grad(lambda x: cu.numpy_prod(x))(x),
                                  [[0, 120, 0], [0, 0, 0]])
    np.testing.assert_array_equal(ft.grad(lambda x: cu.numpy_cumsum(x).sum())(x),
                                  [[6, 5, 4], [3, 2, 1]])


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,call", [
    ("cumsum", lambda x: cu.cumsum(x, 2)),
    ("cumprod", lambda x: cu.cumprod(x, -3)),
    ("cummax", lambda x: cu.cummax(x, 5, True)),
    ("cummin", lambda x: cu.cummin(x, 2)),
    ("reduce_prod", lambda x: cu.reduce_prod(x, (0, 2))),
    ("cumsum", lambda x: cu.numpy_cumsum(x, 2)),
    ("cumprod", lambda x: cu.numpy_cumprod(x, -3)),
    ("prod", lambda x: cu.numpy_prod(x, (1, 2))),
])
def test_bad_axis_error_names_function_axis_and_shape(name, call):
    with pytest.raises(ValueError) as info:
        call(np.ones((3, 4)))
    message = str(info.value)
    assert message.startswith(f"{name}: axis ") and "out of bounds" in message, message
    assert "(3, 4)" in message, message
    # The same error under a transform, where the operand is a tracer.
    with pytest.raises(ValueError, match=f"^{name}: axis .* shape \\(3, 4\\)"):
        ft.grad(lambda x: call(x).sum())(np.ones((3, 4)))


def test_other_errors():
    with pytest.raises(ValueError, match=r"cumsum: axis 0 is out of bounds .* shape \(\)"):
        cu.cumsum(np.float64(1.0))
    with pytest.raises(ValueError, match="reduce_prod: repeated axis"):
        cu.reduce_prod(np.ones((2, 3)), (1, -1))
    with pytest.raises(TypeError, match="cummax is not defined for complex"):
        cu.cummax(np.ones(3, np.complex128))
    with pytest.raises(TypeError, match="cumsum is not defined for booleans"):
        cu.cumsum(np.ones(3, bool))
    with pytest.raises(TypeError, match="cumsum: axis must be an int"):
        cu.cumsum(np.ones(3), 0.0)


# ------------------------------------------------------------------------------------------
# Jaxprs
# ------------------------------------------------------------------------------------------


def test_registered_primitive_names():
    names = {p.name for p in impl_rules}
    assert {"cumsum", "cumprod", "cummax", "cummin", "reduce_prod"} <= names


def test_jaxpr_printing_and_transpose_of_cumsum():
    x = np.ones((2, 3))
    text = str(ft.make_jaxpr(lambda x: cu.cumsum(x, 1, True))(x))
    assert "cumsum[axis=1, reverse=True] a" in text, text
    # The transpose of a forward running sum is a reversed one.
    grad_text = str(ft.make_jaxpr(ft.grad(lambda x: cu.cumsum(x, 1).sum()))(x))
    assert "cumsum[axis=1, reverse=True]" in grad_text, grad_text
    assert "reduce_prod[axes=(0, 1)]" in str(ft.make_jaxpr(
        lambda x: cu.reduce_prod(x, (1, 0)))(x))


@pytest.mark.parametrize("fun", [lambda x: cu.cumprod(x, 1, True),
                                 lambda x: cu.cummin(x, 0),
                                 lambda x: cu.reduce_prod(x, (0,))],
                         ids=["cumprod", "cummin", "reduce_prod"])
def test_jaxprs_typecheck_and_match_eager(fun):
    x = _draw(_rng("jaxpr"), (4, 3), kind="spread")
    t = np.ones_like(x)

    def jvp_fun(x):
        return ft.jvp(fun, (x,), (t,))

    def vjp_fun(x):
        out, pullback = ft.vjp(fun, x)
        return pullback(np.ones_like(out))

    for f in (fun, jvp_fun, vjp_fun):
        closed = ft.make_jaxpr(f)(x)
        ft.check_jaxpr(closed.jaxpr)
        got = ft.eval_jaxpr(closed.jaxpr, closed.consts, x)
        assert_close(got, ft.tree_util.tree_leaves(f(x)), 1e-13, 1e-13)
