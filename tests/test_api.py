"""Tests for the public transforms in functrans/api.py: pytrees in and out, argnums, has_aux,
allow_int, holomorphic, the identities between transforms (linearize == jvp, vjp == Jᵀ,
jacfwd == jacrev), vmap's axis specifications, jaxpr printing and checking, and float32."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core import Tracer
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure

Pair = namedtuple("Pair", ["a", "b"])

RTOL, ATOL = 1e-10, 1e-12


def assert_tree_allclose(actual, expected, rtol=RTOL, atol=ATOL):
    a_leaves, a_def = tree_flatten(actual)
    e_leaves, e_def = tree_flatten(expected)
    assert a_def == e_def, f"structure {a_def} != {e_def}"
    for a, e in zip(a_leaves, e_leaves):
        assert not isinstance(a, Tracer), f"a tracer escaped: {a!r}"
        assert np.shape(a) == np.shape(e), f"shape {np.shape(a)} != {np.shape(e)}"
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


def flat(tree) -> np.ndarray:
    """All leaves of a pytree, raveled and concatenated."""
    leaves = tree_leaves(tree)
    return np.concatenate([np.ravel(np.asarray(x, dtype=np.float64)) for x in leaves]) if leaves \
        else np.zeros(0)


def unflat(vector: np.ndarray, like):
    """The inverse of :func:`flat` for a pytree shaped like ``like``."""
    leaves, treedef = tree_flatten(like)
    out, offset = [], 0
    for x in leaves:
        n = int(np.size(x))
        out.append(vector[offset:offset + n].reshape(np.shape(x)))
        offset += n
    assert offset == vector.size
    return treedef.unflatten(out)


# ------------------------------------------------------------------------------------------
# A pytree model with a hand-written Jacobian
# ------------------------------------------------------------------------------------------
#
#   params = {"v": (3,), "w": Pair(a=(3,), b=())},  x: (3,)
#   model(params, x) = {"s": b * Σ sin(a x),  "t": (v x,  cos b)}
#
# Flat input order (dict keys sorted): v, a, b, x  -> 10 entries.
# Flat output order: s, t0 (3), t1           -> 5 entries.


def model(params, x):
    a, b = params["w"]
    return {"s": b * fnp.sum(fnp.sin(a * x)), "t": (params["v"] * x, fnp.cos(b))}


def model_jacobian(params, x) -> np.ndarray:
    v, (a, b) = params["v"], params["w"]
    jac = np.zeros((5, 10))
    # s
    jac[0, 3:6] = np.cos(a * x) * x * b
    jac[0, 6] = np.sum(np.sin(a * x))
    jac[0, 7:10] = np.cos(a * x) * a * b
    # t0 = v * x
    jac[1:4, 0:3] = np.diag(x)
    jac[1:4, 7:10] = np.diag(v)
    # t1 = cos b
    jac[4, 6] = -np.sin(b)
    return jac


def model_inputs(seed=0):
    rng = np.random.default_rng(seed)
    params = {"v": rng.standard_normal(3), "w": Pair(rng.standard_normal(3), 0.7)}
    return params, rng.standard_normal(3)


def scalar_model(params, x):
    out = model(params, x)
    return out["s"] + fnp.sum(out["t"][0] * np.array([1.0, 2.0, 3.0])) + out["t"][1]


SCALAR_WEIGHTS = np.array([1.0, 1.0, 2.0, 3.0, 1.0])  # d scalar_model / d (s, t0, t1)


def test_model_outputs():
    params, x = model_inputs()
    out = model(params, x)
    assert tree_structure(out) == tree_structure({"s": 0.0, "t": (0.0, 0.0)})
    np.testing.assert_allclose(out["t"][0], params["v"] * x, rtol=RTOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jvp_pytree(seed):
    params, x = model_inputs(seed)
    rng = np.random.default_rng(100 + seed)
    tangent = unflat(rng.standard_normal(10), (params, x))
    assert isinstance(tangent[0]["w"], Pair)
    out, out_dot = ft.jvp(model, (params, x), tangent)
    assert_tree_allclose(out, model(params, x))
    assert tree_structure(out_dot) == tree_structure(out)
    np.testing.assert_allclose(flat(out_dot), model_jacobian(params, x) @ flat(tangent),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vjp_pytree(seed):
    params, x = model_inputs(seed)
    out, f_vjp = ft.vjp(model, params, x)
    assert_tree_allclose(out, model(params, x))
    ct = unflat(np.random.default_rng(seed).standard_normal(5), out)
    ct_params, ct_x = f_vjp(ct)
    assert tree_structure(ct_params) == tree_structure(params)
    assert isinstance(ct_params["w"], Pair)
    np.testing.assert_allclose(flat((ct_params, ct_x)), flat(ct) @ model_jacobian(params, x),
                               rtol=RTOL, atol=ATOL)


def test_linearize_pytree_equals_jvp_for_several_tangents():
    params, x = model_inputs(3)
    out, f_jvp = ft.linearize(model, params, x)
    assert_tree_allclose(out, model(params, x))
    rng = np.random.default_rng(7)
    for _ in range(4):
        t_params, t_x = unflat(rng.standard_normal(10), (params, x))
        _, expected = ft.jvp(model, (params, x), (t_params, t_x))
        assert_tree_allclose(f_jvp(t_params, t_x), expected)


@pytest.mark.parametrize("transform", [ft.jacfwd, ft.jacrev])
def test_jacobian_pytree_layout(transform):
    params, x = model_inputs(4)
    jac = transform(model, argnums=(0, 1))(params, x)
    full = model_jacobian(params, x)
    # Output structure outside, (params, x) inside; blocks are out.shape + in.shape.
    in_shapes = [np.shape(leaf) for leaf in tree_leaves((params, x))]
    out_shapes = [(), (3,), ()]
    out_offsets, in_offsets = [0, 1, 4, 5], [0, 3, 6, 7, 10]
    assert tree_structure(jac) == tree_structure(
        {"s": (params, x), "t": ((params, x), (params, x))})
    for i, out_block in enumerate([jac["s"], jac["t"][0], jac["t"][1]]):
        for j, block in enumerate(tree_leaves(out_block)):
            expected = full[out_offsets[i]:out_offsets[i + 1], in_offsets[j]:in_offsets[j + 1]]
            assert np.shape(block) == out_shapes[i] + in_shapes[j]
            np.testing.assert_allclose(np.asarray(block).reshape(expected.shape), expected,
                                       rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("transform", [ft.jacfwd, ft.jacrev])
def test_jacobian_int_argnums_is_not_wrapped_in_a_tuple(transform):
    params, x = model_inputs(5)
    jac_x = transform(model, argnums=1)(params, x)
    jac_both = transform(model, argnums=(0, 1))(params, x)
    assert_tree_allclose(
        jac_x, {"s": jac_both["s"][1], "t": (jac_both["t"][0][1], jac_both["t"][1][1])})
    jac_1 = transform(model, argnums=(1,))(params, x)
    assert isinstance(jac_1["s"], tuple) and len(jac_1["s"]) == 1
    np.testing.assert_allclose(jac_1["s"][0], jac_x["s"], rtol=RTOL)


# ------------------------------------------------------------------------------------------
# grad, value_and_grad and argnums
# ------------------------------------------------------------------------------------------


def test_grad_pytree_argument():
    params, x = model_inputs(6)
    g = ft.grad(scalar_model)(params, x)
    assert tree_structure(g) == tree_structure(params)
    expected = SCALAR_WEIGHTS @ model_jacobian(params, x)
    np.testing.assert_allclose(flat(g), expected[:7], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("argnums,slices", [
    (0, [slice(0, 7)]),
    (1, [slice(7, 10)]),
    ((0, 1), [slice(0, 7), slice(7, 10)]),
    ((1, 0), [slice(7, 10), slice(0, 7)]),
    ((1,), [slice(7, 10)]),
])
def test_grad_argnums(argnums, slices):
    params, x = model_inputs(7)
    expected = SCALAR_WEIGHTS @ model_jacobian(params, x)
    value, g = ft.value_and_grad(scalar_model, argnums=argnums)(params, x)
    np.testing.assert_allclose(value, scalar_model(params, x), rtol=RTOL)
    g_only = ft.grad(scalar_model, argnums=argnums)(params, x)
    assert_tree_allclose(g_only, g)
    if isinstance(argnums, int):
        g = (g,)
    else:
        assert isinstance(g, tuple) and len(g) == len(argnums)
    for part, sl in zip(g, slices):
        np.testing.assert_allclose(flat(part), expected[sl], rtol=RTOL, atol=ATOL)


def test_grad_of_three_arguments_with_keyword_argument():
    def f(x, y, z, *, scale):
        return scale * fnp.sum(x * y ** 2 * fnp.exp(z))
    x, y, z = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([0.1, 0.2])
    gx, gz = ft.grad(f, argnums=(0, 2))(x, y, z, scale=3.0)
    np.testing.assert_allclose(gx, 3.0 * y ** 2 * np.exp(z), rtol=RTOL)
    np.testing.assert_allclose(gz, 3.0 * x * y ** 2 * np.exp(z), rtol=RTOL)


@pytest.mark.parametrize("transform", [ft.grad, ft.jacfwd, ft.jacrev, ft.hessian])
def test_keyword_arguments_are_passed_through_not_differentiated(transform):
    def f(x, *, scale, shift=0.0):
        return fnp.sum(x ** 3) * scale + shift
    x = np.array([0.5, -1.0])
    expected = {ft.grad: 6.0 * x ** 2, ft.jacfwd: 6.0 * x ** 2, ft.jacrev: 6.0 * x ** 2,
                ft.hessian: np.diag(12.0 * x)}[transform]
    np.testing.assert_allclose(transform(f)(x, scale=2.0, shift=1.0), expected, rtol=RTOL)


def test_grad_python_scalars():
    assert ft.grad(lambda x: x ** 3)(2.0) == pytest.approx(12.0, rel=RTOL)
    assert ft.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    assert ft.grad(lambda xs: xs[0] * xs[1])([2.0, 3.0]) == [3.0, 2.0]


@pytest.mark.parametrize("fun", [
    lambda x: x * x, fnp.sin, lambda x: fnp.where(x > 0, x, -x), lambda x: fnp.maximum(x, 0.0),
    fnp.abs, lambda x: 1.0, lambda x: fnp.dot(x, x), lambda x: fnp.sum(x) * 2.0,
], ids=["mul", "sin", "where", "maximum", "abs", "constant", "dot", "sum"])
def test_derivatives_of_python_floats_are_python_floats(fun):
    # Whatever primitives the derivative went through (select, max, dot, ...), the
    # gradient of a Python float is a Python float.
    assert type(ft.grad(fun)(2.0)) is float
    assert type(ft.vjp(fun, 2.0)[1](1.0)[0]) is float
    y, t = ft.jvp(fun, (2.0,), (1.0,))
    assert type(t) is type(y)  # a tangent is the same kind of value as its primal


def test_grad_of_constant_function_is_zero():
    g = ft.grad(lambda x: 1.0)(np.ones(3))
    np.testing.assert_array_equal(g, np.zeros(3))
    g = ft.grad(lambda x, y: fnp.sum(x), argnums=1)(np.ones(2), np.ones((2, 2)))
    np.testing.assert_array_equal(g, np.zeros((2, 2)))


# ------------------------------------------------------------------------------------------
# has_aux
# ------------------------------------------------------------------------------------------


def with_aux(x):
    y = fnp.sum(fnp.sin(x) * x)
    return y, {"double": 2.0 * x, "label": (fnp.cos(x), 3.0)}


def expected_aux(x):
    return {"double": 2.0 * x, "label": (np.cos(x), 3.0)}


X3 = np.array([0.3, -1.2, 2.0])
DY_DX = np.cos(X3) * X3 + np.sin(X3)


def _assert_aux(aux):
    assert_tree_allclose(aux, expected_aux(X3))


def test_grad_has_aux():
    g, aux = ft.grad(with_aux, has_aux=True)(X3)
    np.testing.assert_allclose(g, DY_DX, rtol=RTOL)
    _assert_aux(aux)


def test_value_and_grad_has_aux():
    (value, aux), g = ft.value_and_grad(with_aux, has_aux=True)(X3)
    np.testing.assert_allclose(value, np.sum(np.sin(X3) * X3), rtol=RTOL)
    np.testing.assert_allclose(g, DY_DX, rtol=RTOL)
    _assert_aux(aux)


def test_vjp_has_aux():
    y, f_vjp, aux = ft.vjp(with_aux, X3, has_aux=True)
    np.testing.assert_allclose(y, np.sum(np.sin(X3) * X3), rtol=RTOL)
    (ct,) = f_vjp(2.0)
    np.testing.assert_allclose(ct, 2.0 * DY_DX, rtol=RTOL)
    _assert_aux(aux)


def test_jvp_has_aux():
    t = np.array([1.0, 0.5, -2.0])
    y, y_dot, aux = ft.jvp(with_aux, (X3,), (t,), has_aux=True)
    np.testing.assert_allclose(y_dot, DY_DX @ t, rtol=RTOL)
    _assert_aux(aux)


def test_linearize_has_aux():
    t = np.array([1.0, 0.5, -2.0])
    y, f_jvp, aux = ft.linearize(with_aux, X3, has_aux=True)
    np.testing.assert_allclose(f_jvp(t), DY_DX @ t, rtol=RTOL)
    np.testing.assert_allclose(f_jvp(2.0 * t), 2.0 * DY_DX @ t, rtol=RTOL)
    _assert_aux(aux)


@pytest.mark.parametrize("transform", [ft.jacfwd, ft.jacrev])
def test_jacobian_has_aux(transform):
    def f(x):
        return fnp.sin(x) * x[0], {"n": fnp.sum(x)}
    jac, aux = transform(f, has_aux=True)(X3)
    expected = np.diag(np.cos(X3) * X3[0])
    expected[:, 0] += np.sin(X3)
    np.testing.assert_allclose(jac, expected, rtol=RTOL, atol=ATOL)
    assert_tree_allclose(aux, {"n": np.sum(X3)})


@pytest.mark.parametrize("make", [
    lambda f: ft.grad(f, has_aux=True)(X3),
    lambda f: ft.value_and_grad(f, has_aux=True)(X3),
    lambda f: ft.vjp(f, X3, has_aux=True),
    lambda f: ft.jvp(f, (X3,), (X3,), has_aux=True),
    lambda f: ft.linearize(f, X3, has_aux=True),
    lambda f: ft.jacfwd(f, has_aux=True)(X3),
    lambda f: ft.jacrev(f, has_aux=True)(X3),
], ids=["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev"])
def test_has_aux_requires_a_pair(make):
    with pytest.raises(TypeError, match="has_aux"):
        make(lambda x: fnp.sum(x))


# ------------------------------------------------------------------------------------------
# allow_int and float0
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [3, np.int32(3), np.arange(4), np.array([True, False])],
                         ids=["py_int", "np_int32", "int_array", "bool_array"])
def test_allow_int_gives_float0_zeros(n):
    def f(x, n):
        return fnp.sum(x * n)
    x = np.array([1.0, 2.0, 3.0, 4.0])[:np.size(n)] if np.ndim(n) else 2.0
    gx, gn = ft.grad(f, argnums=(0, 1), allow_int=True)(x, n)
    np.testing.assert_allclose(gx, np.asarray(n, dtype=np.float64) * np.ones_like(x), rtol=RTOL)
    assert gn.dtype == ft.float0
    assert np.shape(gn) == np.shape(n)
    _, (_, gn2) = ft.value_and_grad(f, argnums=(0, 1), allow_int=True)(x, n)
    assert gn2.dtype == ft.float0 and np.shape(gn2) == np.shape(n)


def test_jacrev_allow_int_gives_float0_blocks():
    def f(x, n):
        return {"y": x * n, "s": fnp.sum(x)}
    x, n = np.array([1.0, 2.0, 3.0]), np.arange(3)
    jac_x, jac_n = ft.jacrev(f, argnums=(0, 1), allow_int=True)(x, n)["y"]
    np.testing.assert_allclose(jac_x, np.diag(n.astype(float)), rtol=RTOL)
    assert jac_n.dtype == ft.float0 and jac_n.shape == (3, 3)
    jac_s = ft.jacrev(f, argnums=1, allow_int=True)(x, n)["s"]
    assert jac_s.dtype == ft.float0 and jac_s.shape == (3,)
    with pytest.raises(TypeError, match="jacrev.*int64"):
        ft.jacrev(f, argnums=(0, 1))(x, n)


def test_vjp_of_int_input_gives_float0():
    y, f_vjp = ft.vjp(lambda x, n: x * n, 2.0, np.arange(3))
    ct_x, ct_n = f_vjp(np.ones(3))
    np.testing.assert_allclose(ct_x, 3.0)
    assert ct_n.dtype == ft.float0 and ct_n.shape == (3,)


def test_jvp_with_float0_tangent_for_int_input():
    y, y_dot = ft.jvp(lambda x, n: x * n, (2.0, np.arange(3)),
                      (1.0, np.zeros(3, dtype=ft.float0)))
    np.testing.assert_allclose(y_dot, np.arange(3.0))


# ------------------------------------------------------------------------------------------
# Complex numbers and holomorphic
# ------------------------------------------------------------------------------------------

Z_POINTS = [1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j]


@pytest.mark.parametrize("z", Z_POINTS)
def test_holomorphic_grad_of_square(z):
    g = ft.grad(lambda z: z ** 2, holomorphic=True)(z)
    assert g == pytest.approx(2 * z, rel=RTOL)
    g = ft.grad(lambda z: z * z, holomorphic=True)(np.complex128(z))
    assert g == pytest.approx(2 * z, rel=RTOL)


@pytest.mark.parametrize("z", Z_POINTS)
def test_holomorphic_grad_of_polynomial(z):
    def p(z):
        return z ** 3 + 2.0 * z ** 2 - z + (1.0 + 1.0j)
    value, g = ft.value_and_grad(p, holomorphic=True)(z)
    assert value == pytest.approx(z ** 3 + 2 * z ** 2 - z + 1 + 1j, rel=RTOL)
    assert g == pytest.approx(3 * z ** 2 + 4 * z - 1, rel=RTOL)


def test_holomorphic_jacobians_of_array_polynomial():
    z = np.array(Z_POINTS)
    expected = np.diag(3 * z ** 2 + 1j)
    for transform in (ft.jacfwd, ft.jacrev):
        jac = transform(lambda z: z ** 3 + 1j * z, holomorphic=True)(z)
        assert jac.dtype == np.complex128
        np.testing.assert_allclose(jac, expected, rtol=RTOL)
    g = ft.grad(lambda z: fnp.sum(z ** 3), holomorphic=True)(z)
    np.testing.assert_allclose(g, 3 * z ** 2, rtol=RTOL)


@pytest.mark.parametrize("make", [
    lambda f, z: ft.grad(f)(z),
    lambda f, z: ft.value_and_grad(f)(z),
    lambda f, z: ft.jacfwd(f)(z),
    lambda f, z: ft.jacrev(f)(z),
], ids=["grad", "value_and_grad", "jacfwd", "jacrev"])
@pytest.mark.parametrize("z", [1.0 + 2.0j, np.array([1.0 + 1.0j, 2.0])], ids=["scalar", "array"])
def test_complex_input_without_holomorphic_raises(make, z):
    with pytest.raises(TypeError, match="holomorphic"):
        make(lambda z: fnp.sum(z * z), z)


def test_grad_of_real_function_of_complex_input_follows_jax_convention():
    # As in JAX: a real-valued f of complex z gets df/dx - i df/dy, e.g. |z|^2 -> 2 conj(z).
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    g = ft.grad(lambda z: fnp.sum(fnp.abs(z) ** 2))(z)
    np.testing.assert_allclose(g, 2 * np.conj(z), rtol=RTOL)
    assert g.dtype == np.complex128


@pytest.mark.parametrize("make", [
    lambda f: ft.grad(f, holomorphic=True)(2.0),
    lambda f: ft.jacfwd(f, holomorphic=True)(np.ones(2)),
    lambda f: ft.jacrev(f, holomorphic=True)(np.ones(2)),
], ids=["grad", "jacfwd", "jacrev"])
def test_holomorphic_with_real_input_raises(make):
    with pytest.raises(TypeError, match="complex"):
        make(lambda x: fnp.sum(x * x))


# ------------------------------------------------------------------------------------------
# Identities between transforms
# ------------------------------------------------------------------------------------------

A23 = np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])


def vector_fn(x, y):
    """R^3 x R^(2,2) -> (R^2, R^(2,3), R)."""
    return (fnp.sin(A23 @ x) * y[0, 1],
            fnp.exp(fnp.outer(y[:, 0], x) * 0.1) + y[1, 1] * x,
            fnp.sum(fnp.tanh(x)) * fnp.sum(y ** 2))


def vector_fn_inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3), rng.standard_normal((2, 2))


@pytest.mark.parametrize("seed", range(3))
def test_linearize_equals_jvp_for_several_tangents(seed):
    x, y = vector_fn_inputs(seed)
    out, f_jvp = ft.linearize(vector_fn, x, y)
    assert_tree_allclose(out, vector_fn(x, y))
    rng = np.random.default_rng(seed + 50)
    for _ in range(5):
        tx, ty = rng.standard_normal(3), rng.standard_normal((2, 2))
        assert_tree_allclose(f_jvp(tx, ty), ft.jvp(vector_fn, (x, y), (tx, ty))[1])
    # Linear in the tangent.
    tx, ty = rng.standard_normal(3), rng.standard_normal((2, 2))
    assert_tree_allclose(f_jvp(3.0 * tx, 3.0 * ty), tree_map(lambda t: 3.0 * t, f_jvp(tx, ty)))


def test_linearize_does_not_see_later_mutation_of_inputs():
    x = np.array([0.1, 0.2, 0.3])
    _, f_jvp = ft.linearize(lambda x: fnp.sin(x) * x, x)
    expected = f_jvp(np.ones(3))
    x[:] = 5.0
    np.testing.assert_allclose(f_jvp(np.ones(3)), expected, rtol=RTOL)


@pytest.mark.parametrize("seed", range(3))
def test_vjp_equals_transpose_of_jacfwd(seed):
    x, y = vector_fn_inputs(seed)
    jac = ft.jacfwd(vector_fn, argnums=(0, 1))(x, y)
    out, f_vjp = ft.vjp(vector_fn, x, y)
    rng = np.random.default_rng(seed + 10)
    cts = tuple(rng.standard_normal(np.shape(o)) for o in out)
    ct_x, ct_y = f_vjp(cts)
    expected_x = sum(np.tensordot(ct, block[0], axes=np.ndim(ct)) for ct, block in zip(cts, jac))
    expected_y = sum(np.tensordot(ct, block[1], axes=np.ndim(ct)) for ct, block in zip(cts, jac))
    np.testing.assert_allclose(ct_x, expected_x, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ct_y, expected_y, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", range(3))
def test_dot_product_identity(seed):
    # <v, J u> == <Jᵀ v, u>
    x, y = vector_fn_inputs(seed)
    rng = np.random.default_rng(seed + 20)
    u = (rng.standard_normal(3), rng.standard_normal((2, 2)))
    out, ju = ft.jvp(vector_fn, (x, y), u)
    v = tuple(rng.standard_normal(np.shape(o)) for o in out)
    jtv = ft.vjp(vector_fn, x, y)[1](v)
    np.testing.assert_allclose(flat(v) @ flat(ju), flat(jtv) @ flat(u), rtol=1e-10)


def random_fn_a(x, y):
    return fnp.sin(x) * fnp.sum(y), fnp.dot(y, x[:2]) ** 2


def random_fn_b(x, y):
    return {"p": fnp.tanh(fnp.outer(x, y)), "q": fnp.exp(-x * x) / (1.0 + fnp.sum(y ** 2))}


def random_fn_c(x, y):
    m = fnp.reshape(x, (1, 3)) * fnp.reshape(y[:2], (2, 1))
    return (m.T @ m)[::2], fnp.mean(fnp.log(1.0 + x ** 2)) * y


def central_difference_jacobian(fn, args, argnum, h=1e-6):
    """d fn / d args[argnum] by central differences, laid out like jacfwd's blocks."""
    arg = args[argnum]
    columns = []
    for k in range(arg.size):
        step = np.zeros(arg.size)
        step[k] = h
        plus, minus = list(args), list(args)
        plus[argnum] = arg + step.reshape(arg.shape)
        minus[argnum] = arg - step.reshape(arg.shape)
        columns.append(tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * h),
                                fn(*plus), fn(*minus)))
    return tree_map(lambda *cols: np.stack(cols, axis=-1).reshape(np.shape(cols[0]) + arg.shape),
                    *columns)


# (function, size of its second argument)
RANDOM_FUNCTIONS = {"a": (random_fn_a, 2), "b": (random_fn_b, 2), "c": (random_fn_c, 3)}


@pytest.mark.parametrize("name", list(RANDOM_FUNCTIONS))
@pytest.mark.parametrize("seed", range(3))
def test_jacfwd_equals_jacrev(name, seed):
    fn, y_size = RANDOM_FUNCTIONS[name]
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(3), rng.standard_normal(y_size)
    jf = ft.jacfwd(fn, argnums=(0, 1))(x, y)
    jr = ft.jacrev(fn, argnums=(0, 1))(x, y)
    assert_tree_allclose(jf, jr)
    # And, one argument at a time, against central differences of the function itself.
    for argnum in (0, 1):
        expected = central_difference_jacobian(fn, (x, y), argnum)
        assert_tree_allclose(ft.jacfwd(fn, argnums=argnum)(x, y), expected, rtol=1e-6, atol=1e-8)
        assert_tree_allclose(ft.jacrev(fn, argnums=argnum)(x, y), expected, rtol=1e-6, atol=1e-8)


def test_hessian_equals_nested_jacobians():
    def f(x, y):
        return fnp.sum(fnp.sin(x) * y[0] ** 2) + x[0] * x[1] * x[2] * y[1]
    x, y = np.array([0.1, 0.5, -0.7]), np.array([1.5, -2.0])
    h = ft.hessian(f, argnums=(0, 1))(x, y)
    assert_tree_allclose(h, ft.jacfwd(ft.jacrev(f, argnums=(0, 1)), argnums=(0, 1))(x, y))
    assert_tree_allclose(h, ft.jacrev(ft.jacfwd(f, argnums=(0, 1)), argnums=(0, 1))(x, y))
    assert_tree_allclose(h, ft.jacfwd(ft.jacfwd(f, argnums=(0, 1)), argnums=(0, 1))(x, y))
    # Symmetric: the (x, y) block is the transpose of the (y, x) block.
    np.testing.assert_allclose(h[0][1], h[1][0].T, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(h[0][0], h[0][0].T, rtol=RTOL, atol=ATOL)


def jac_fn(x):
    return fnp.sin(x) * x[0]


def jac_fn_jacobian(x):
    jac = np.diag(np.cos(x) * x[0])
    jac[:, 0] += np.sin(x)
    return jac


def test_vmap_of_linearized_function_is_the_jacobian():
    x = np.array([0.5, -1.0, 2.0])
    _, f_jvp = ft.linearize(jac_fn, x)
    np.testing.assert_allclose(ft.vmap(f_jvp, out_axes=1)(np.eye(3)), jac_fn_jacobian(x),
                               rtol=RTOL, atol=ATOL)


def test_vmap_of_pullback_is_the_jacobian():
    x = np.array([0.5, -1.0, 2.0])
    _, f_vjp = ft.vjp(jac_fn, x)
    (rows,) = ft.vmap(f_vjp)(np.eye(3))
    np.testing.assert_allclose(rows, jac_fn_jacobian(x), rtol=RTOL, atol=ATOL)
    # The pullback can be called again, with other cotangents.
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], np.ones(3) @ jac_fn_jacobian(x), rtol=RTOL)


def test_differentiating_linear_functions_returned_by_transforms():
    x = np.array([0.5, -1.0, 2.0])
    jac = jac_fn_jacobian(x)
    _, f_vjp = ft.vjp(jac_fn, x)
    _, f_jvp = ft.linearize(jac_fn, x)
    # Both are linear: their gradients are columns/rows sums of J.
    np.testing.assert_allclose(ft.grad(lambda c: fnp.sum(f_vjp(c)[0]))(np.ones(3)),
                               jac.sum(axis=1), rtol=RTOL)
    np.testing.assert_allclose(ft.grad(lambda t: fnp.sum(f_jvp(t)))(np.ones(3)),
                               jac.sum(axis=0), rtol=RTOL)
    np.testing.assert_allclose(ft.jacfwd(lambda c: f_vjp(c)[0])(np.ones(3)), jac.T, rtol=RTOL)


def test_integer_outputs_get_float0_tangents():
    x = np.array([0.5, -1.0, 2.0])
    (y, positive), (y_dot, positive_dot) = ft.jvp(lambda x: (x * 2, x > 0), (x,), (x,))
    np.testing.assert_allclose(y_dot, 2 * x)
    assert positive.dtype == np.bool_
    assert positive_dot.dtype == ft.float0 and positive_dot.shape == (3,)
    _, f_jvp = ft.linearize(lambda x: (x * 2, fnp.argmax(x)), x)
    dy, dargmax = f_jvp(x)
    assert dargmax.dtype == ft.float0 and dargmax.shape == ()
    g, aux = ft.grad(lambda x: (fnp.sum(x), fnp.argmax(x)), has_aux=True)(x)
    assert aux == 2


def test_transforms_of_eval_jaxpr():
    x = np.array([0.5, -1.0, 2.0])
    closed = ft.make_jaxpr(lambda x: fnp.sum(fnp.sin(x) * x))(x)

    def staged(x):
        return ft.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

    np.testing.assert_allclose(ft.grad(staged)(x), np.cos(x) * x + np.sin(x), rtol=RTOL)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(ft.vmap(staged)(xs), np.sum(np.sin(xs) * xs, axis=1), rtol=RTOL)


def test_none_and_empty_containers_in_pytrees():
    x = np.array([0.5, -1.0])
    g = ft.grad(lambda p: fnp.sum(p.a ** 2))(Pair(x, None))
    assert g.b is None
    np.testing.assert_allclose(g.a, 2 * x)
    assert ft.grad(lambda p, x: fnp.sum(x), argnums=0)((), x) == ()
    out, out_dot = ft.jvp(lambda x: {"x": x, "nothing": None, "empty": []}, (x,), (x,))
    assert out_dot["nothing"] is None and out_dot["empty"] == []
    assert ft.vmap(lambda x: (x, None))(x)[1] is None


# ------------------------------------------------------------------------------------------
# linear_transpose
# ------------------------------------------------------------------------------------------

B32 = np.arange(6.0).reshape(3, 2) - 2.5

LINEAR_FUNCTIONS = {
    "matvec": (lambda x: B32 @ x, (2,)),
    "scale_and_neg": (lambda x: -2.0 * x + x / 4.0, (3,)),
    "sum_axis": (lambda x: fnp.sum(x, axis=0), (3, 2)),
    "transpose_slice": (lambda x: x.T[:, ::2] * 3.0, (3, 2)),
    "reshape_concat": (lambda x: fnp.concatenate([fnp.reshape(x, (6,)), x[0]]), (2, 3)),
    "broadcast_mul": (lambda x: x[:, None] * np.array([1.0, -1.0, 0.5]), (2,)),
    "cumulative": (lambda x: fnp.stack([x[0], x[0] + x[1], x[0] + x[1] + x[2]]), (3,)),
}


def _matrix_of(fun, shape):
    """The matrix of a linear map, from its action on unit vectors."""
    n = int(np.prod(shape))
    cols = [np.ravel(np.asarray(fun(np.eye(n)[j].reshape(shape)))) for j in range(n)]
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("name", list(LINEAR_FUNCTIONS))
def test_linear_transpose_equals_matrix_transpose(name):
    fun, shape = LINEAR_FUNCTIONS[name]
    matrix = _matrix_of(fun, shape)
    f_t = ft.linear_transpose(fun, np.zeros(shape))
    rng = np.random.default_rng(0)
    out_shape = np.shape(fun(np.zeros(shape)))
    for _ in range(3):
        ct = rng.standard_normal(out_shape)
        (ct_in,) = f_t(ct)
        assert np.shape(ct_in) == shape
        np.testing.assert_allclose(np.ravel(ct_in), matrix.T @ np.ravel(ct), rtol=RTOL,
                                   atol=ATOL)


def test_linear_transpose_pytree():
    def f(x, y):
        return {"a": B32 @ x + y, "b": 2.0 * x}
    f_t = ft.linear_transpose(f, np.zeros(2), np.zeros(3))
    ct = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([-1.0, 0.5])}
    ct_x, ct_y = f_t(ct)
    np.testing.assert_allclose(ct_x, B32.T @ ct["a"] + 2.0 * ct["b"], rtol=RTOL)
    np.testing.assert_allclose(ct_y, ct["a"], rtol=RTOL)


def test_linear_transpose_of_unused_input_is_zero():
    f_t = ft.linear_transpose(lambda x, y: 2.0 * x, np.zeros(2), np.zeros(3))
    ct_x, ct_y = f_t(np.ones(2))
    np.testing.assert_array_equal(ct_x, [2.0, 2.0])
    np.testing.assert_array_equal(ct_y, np.zeros(3))


# ------------------------------------------------------------------------------------------
# eval_shape and ShapeDtypeStruct
# ------------------------------------------------------------------------------------------


def test_eval_shape_pytree():
    calls = []

    def f(params, x):
        calls.append(type(x))
        return model(params, x)

    params = {"v": ft.ShapeDtypeStruct((3,), np.float32),
              "w": Pair(np.zeros(3, np.float32), ft.ShapeDtypeStruct((), np.float32))}
    out = ft.eval_shape(f, params, ft.ShapeDtypeStruct((3,), np.float32))
    assert out == {"s": ft.ShapeDtypeStruct((), np.float32),
                   "t": (ft.ShapeDtypeStruct((3,), np.float32),
                         ft.ShapeDtypeStruct((), np.float32))}
    assert len(calls) == 1 and issubclass(calls[0], Tracer)


@pytest.mark.parametrize("shape,dtype",
                         [((2, 3), np.float32), ((4,), np.float64), ((1, 5), np.float64)])
def test_eval_shape_matches_real_output(shape, dtype):
    def f(x):
        return fnp.sum(fnp.sin(x) * 2.0, axis=0), x.T
    x = np.ones(shape, dtype)
    expected = f(x)
    out = ft.eval_shape(f, ft.ShapeDtypeStruct(shape, dtype))
    for o, e in zip(out, expected):
        assert o.shape == np.shape(e)
        assert o.dtype == np.asarray(e).dtype == dtype


def test_eval_shape_of_grad():
    out = ft.eval_shape(ft.grad(lambda x: fnp.sum(x ** 2)), ft.ShapeDtypeStruct((3,), np.float32))
    assert out == ft.ShapeDtypeStruct((3,), np.float32)


def test_make_jaxpr_with_shape_dtype_struct_inputs():
    closed = ft.make_jaxpr(lambda x, y: fnp.dot(x, y) + 1.0)(
        ft.ShapeDtypeStruct((2, 3), np.float32), np.ones(3, np.float32))
    assert [(a.shape, a.dtype) for a in closed.in_avals] == [((2, 3), np.float32),
                                                            ((3,), np.float32)]
    assert [(a.shape, a.dtype) for a in closed.out_avals] == [((2,), np.float32)]
    ft.check_jaxpr(closed.jaxpr)
    closed, shape = ft.make_jaxpr(lambda x: {"y": x * 2.0}, return_shape=True)(
        ft.ShapeDtypeStruct((5,), np.float32))
    assert shape == {"y": ft.ShapeDtypeStruct((5,), np.float32)}


def test_make_jaxpr_static_argnums():
    closed = ft.make_jaxpr(lambda x, n: x * n if n > 1 else x, static_argnums=1)(np.ones(3), 3)
    assert len(closed.in_avals) == 1
    np.testing.assert_allclose(ft.eval_jaxpr(closed.jaxpr, closed.consts, np.ones(3))[0],
                               [3.0, 3.0, 3.0])


# ------------------------------------------------------------------------------------------
# vmap
# ------------------------------------------------------------------------------------------


def loop(fun, n, *args_per_index):
    """Stack ``fun`` applied to each batch member: the reference for vmap."""
    outs = [fun(*[a(i) for a in args_per_index]) for i in range(n)]
    return tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *outs)


RNG = np.random.default_rng(42)
MAT = RNG.standard_normal((4, 3))   # batch of 4 vectors along axis 0, or 3 along axis 1
VEC = RNG.standard_normal(3)


def vm_fun(x, y):
    return fnp.sin(x) * fnp.sum(y), fnp.dot(x, y)


# (in_axes, batched arguments, batch member i of each argument, batch size)
VMAP_IN_AXES = {
    "mapped_unmapped": ((0, None), (MAT, VEC), lambda i: (MAT[i], VEC), 4),
    "unmapped_mapped": ((None, 0), (VEC, MAT), lambda i: (VEC, MAT[i]), 4),
    "both": ((0, 0), (MAT, MAT * 2), lambda i: (MAT[i], MAT[i] * 2), 4),
    "axis_1": ((1, None), (MAT[:3], VEC), lambda i: (MAT[:3, i], VEC), 3),
    "negative": ((-1, None), (MAT[:3], VEC), lambda i: (MAT[:3, i], VEC), 3),
    "mixed_negative": ((-2, 1), (MAT, MAT.T[:3]), lambda i: (MAT[i], MAT.T[:3, i]), 4),
    "list": ([0, None], (MAT, VEC), lambda i: (MAT[i], VEC), 4),
}


@pytest.mark.parametrize("name", list(VMAP_IN_AXES))
def test_vmap_in_axes(name):
    in_axes, args, member, n = VMAP_IN_AXES[name]
    out = ft.vmap(vm_fun, in_axes=in_axes)(*args)
    expected = loop(vm_fun, n, lambda i: member(i)[0], lambda i: member(i)[1])
    assert_tree_allclose(out, expected)


def test_vmap_in_axes_int_applies_to_all_arguments():
    out = ft.vmap(vm_fun, in_axes=1)(MAT.T, MAT.T * 3)
    expected = loop(vm_fun, 4, lambda i: MAT[i], lambda i: MAT[i] * 3)
    assert_tree_allclose(out, expected)


def test_vmap_dict_prefix_in_axes():
    def f(params, x):
        return fnp.dot(params["w"], x) + params["b"]
    params = {"w": RNG.standard_normal((5, 2, 3)), "b": RNG.standard_normal(2)}
    xs = RNG.standard_normal((3, 5))
    out = ft.vmap(f, in_axes=({"w": 0, "b": None}, 1))(params, xs)
    expected = loop(f, 5, lambda i: {"w": params["w"][i], "b": params["b"]}, lambda i: xs[:, i])
    assert_tree_allclose(out, expected)
    # A dict as in_axes for a single dict argument (a prefix of the argument tuple's tree).
    out = ft.vmap(lambda p: p["w"].sum(axis=1) * p["b"], in_axes=({"w": 0, "b": None},))(params)
    np.testing.assert_allclose(out, params["w"].sum(axis=2) * params["b"], rtol=RTOL)


def test_vmap_nested_tuple_prefix_in_axes():
    def f(pair, z):
        return pair[0] * pair[1][0] + z
    a, b = RNG.standard_normal((3, 2)), RNG.standard_normal(2)
    out = ft.vmap(f, in_axes=((0, (None,)), None))((a, (b,)), 1.0)
    np.testing.assert_allclose(out, a * b + 1.0, rtol=RTOL)


def test_vmap_pytree_output_and_out_axes():
    def f(x):
        return {"id": x, "sq": Pair(x ** 2, fnp.sum(x))}
    out = ft.vmap(f, out_axes={"id": 1, "sq": Pair(0, 0)})(MAT)
    np.testing.assert_allclose(out["id"], MAT.T, rtol=RTOL)
    np.testing.assert_allclose(out["sq"].a, MAT ** 2, rtol=RTOL)
    np.testing.assert_allclose(out["sq"].b, MAT.sum(axis=1), rtol=RTOL)


@pytest.mark.parametrize("out_axes", [1, -1])
def test_vmap_out_axes_last(out_axes):
    out = ft.vmap(lambda x: fnp.outer(x, x[:2]), out_axes=out_axes)(MAT)
    expected = np.stack([np.outer(MAT[i], MAT[i, :2]) for i in range(4)], axis=-1 if out_axes == -1
                        else 1)
    np.testing.assert_allclose(out, expected, rtol=RTOL)


def test_vmap_out_axes_none_for_unbatched_output():
    def f(x, c):
        return x * 2.0, c + 1.0
    out, unbatched = ft.vmap(f, in_axes=(0, None), out_axes=(0, None))(MAT, VEC)
    np.testing.assert_allclose(out, MAT * 2.0, rtol=RTOL)
    np.testing.assert_allclose(unbatched, VEC + 1.0, rtol=RTOL)
    assert np.shape(unbatched) == (3,)


def test_vmap_unbatched_output_is_broadcast():
    out = ft.vmap(lambda x: (1.0, VEC), in_axes=0)(MAT)
    np.testing.assert_allclose(out[0], np.ones(4))
    np.testing.assert_allclose(out[1], np.tile(VEC, (4, 1)))


def test_vmap_axis_size_when_nothing_is_mapped():
    out = ft.vmap(lambda x: x * 2.0, in_axes=None, axis_size=5)(VEC)
    np.testing.assert_allclose(out, np.tile(VEC * 2.0, (5, 1)))
    out = ft.vmap(lambda: 3.0, axis_size=2)()
    np.testing.assert_allclose(out, [3.0, 3.0])
    # axis_size agreeing with the mapped size is accepted.
    np.testing.assert_allclose(ft.vmap(fnp.sin, axis_size=4)(MAT), np.sin(MAT), rtol=RTOL)


def test_vmap_of_vmap():
    xs, ys = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 3))
    pairwise = ft.vmap(ft.vmap(fnp.dot, in_axes=(None, 0)), in_axes=(0, None))(xs, ys)
    np.testing.assert_allclose(pairwise, xs @ ys.T, rtol=RTOL)
    # Mapping both over the same axis twice: elementwise on a matrix.
    out = ft.vmap(ft.vmap(lambda a, b: a * b + fnp.sin(a)))(xs, xs.T.T * 2)
    np.testing.assert_allclose(out, xs * xs * 2 + np.sin(xs), rtol=RTOL)
    # Inner over axis 1, outer over axis 0.
    out = ft.vmap(ft.vmap(lambda a: a ** 2, in_axes=0, out_axes=0), in_axes=1, out_axes=1)(ys)
    np.testing.assert_allclose(out, ys ** 2, rtol=RTOL)


def test_vmap_of_grad_per_example():
    def loss(w, x):
        return fnp.sum(fnp.tanh(w * x) ** 2)
    w, xs = VEC, MAT
    out = ft.vmap(ft.grad(loss), in_axes=(None, 0))(w, xs)
    expected = np.stack([2 * np.tanh(w * x) * (1 - np.tanh(w * x) ** 2) * x for x in xs])
    np.testing.assert_allclose(out, expected, rtol=RTOL)


def test_vmap_keeps_the_function_name():
    def my_function(x):
        return x
    assert ft.vmap(my_function).__name__ == "my_function"
    assert ft.grad(my_function).__name__ == "my_function"


# ------------------------------------------------------------------------------------------
# Jaxprs: printing, type checking and evaluation
# ------------------------------------------------------------------------------------------

C3 = np.array([1.0, 2.0, 3.0])

PRINTED = [
    (lambda x: fnp.sin(x), (np.zeros(3),),
     "{ lambda ; a:f64[3]. let\n"
     "    b:f64[3] = sin a\n"
     "  in (b,) }"),
    (lambda x, y: fnp.sum(x * y + 1.0), (np.zeros(3), np.zeros(3)),
     "{ lambda ; a:f64[3] b:f64[3]. let\n"
     "    c:f64[3] = mul a b\n"
     "    d:f64[3] = add c 1.0\n"
     "    e:f64[] = reduce_sum[axes=(0,)] d\n"
     "  in (e,) }"),
    (lambda x: fnp.sum(x * C3), (np.zeros(3),),
     "{ lambda a:f64[3]; b:f64[3]. let\n"
     "    c:f64[3] = mul b a\n"
     "    d:f64[] = reduce_sum[axes=(0,)] c\n"
     "  in (d,) }"),
    (lambda x: x * 2.0, (np.zeros((2, 2), np.float32),),
     "{ lambda ; a:f32[2,2]. let\n"
     "    b:f32[2,2] = mul a 2.0\n"
     "  in (b,) }"),
    (lambda x, y: (x + y, x * 2.0), (np.zeros(2), np.zeros(2)),
     "{ lambda ; a:f64[2] b:f64[2]. let\n"
     "    c:f64[2] = add a b\n"
     "    d:f64[2] = mul a 2.0\n"
     "  in (c, d) }"),
    (lambda x: (), (np.zeros(2),),
     "{ lambda ; a:f64[2]. let\n"
     "  in () }"),
]


@pytest.mark.parametrize("fun,args,expected", PRINTED,
                         ids=["sin", "sum_mul_add", "closure_const", "float32", "two_outputs",
                              "no_outputs"])
def test_make_jaxpr_prints_exactly(fun, args, expected):
    closed = ft.make_jaxpr(fun)(*args)
    assert str(closed) == expected
    # Stable: printing again, and tracing again, give the same text.
    assert str(closed) == expected
    assert str(ft.make_jaxpr(fun)(*args)) == expected
    assert repr(closed) == expected


def _sum_sin(x):
    return fnp.sum(fnp.sin(x) * x)


V3 = np.array([0.3, -0.8, 1.7])
M23 = np.array([[0.3, -0.8, 1.7], [1.1, 0.2, -0.4]])

TRACED = {
    "plain": (lambda x: fnp.tanh(x) * fnp.sum(x ** 2) / 3.0, (V3,)),
    "grad": (ft.grad(_sum_sin), (V3,)),
    "grad_argnums": (ft.grad(lambda x, y: fnp.sum(x * fnp.exp(y)), argnums=(0, 1)), (V3, V3)),
    "value_and_grad": (ft.value_and_grad(_sum_sin), (V3,)),
    "vmap": (ft.vmap(_sum_sin), (M23,)),
    "vmap_in_axes": (ft.vmap(lambda x, y: x * y, in_axes=(1, None)), (M23, 2.0)),
    "vmap_out_axes": (ft.vmap(lambda x: fnp.outer(x, x), out_axes=2), (M23,)),
    "vmap_of_vmap": (ft.vmap(ft.vmap(lambda a, b: a * b, in_axes=(None, 0))), (M23, M23)),
    "jacfwd": (ft.jacfwd(lambda x: fnp.sin(x) * x[0]), (V3,)),
    "jacrev": (ft.jacrev(lambda x: fnp.sin(x) * x[0]), (V3,)),
    "hessian": (ft.hessian(_sum_sin), (V3,)),
    "jvp": (lambda x: ft.jvp(fnp.sin, (x,), (x,)), (V3,)),
    "linearize": (lambda x: ft.linearize(_sum_sin, x)[1](x), (V3,)),
    "vjp": (lambda x: ft.vjp(fnp.sin, x)[1](x), (V3,)),
    "vmap_of_grad": (ft.vmap(ft.grad(_sum_sin)), (M23,)),
    "grad_of_grad": (ft.grad(ft.grad(lambda x: fnp.sin(x) * x ** 3)), (0.7,)),
    "matmul": (lambda a, b: fnp.tanh(a @ b).T, (M23, M23.T)),
}


@pytest.mark.parametrize("name", list(TRACED))
def test_jaxpr_type_checks_and_evaluates_like_the_function(name):
    fun, args = TRACED[name]
    closed = ft.make_jaxpr(fun)(*args)
    ft.check_jaxpr(closed.jaxpr)
    assert isinstance(closed, ft.ClosedJaxpr) and isinstance(closed.jaxpr, ft.Jaxpr)
    flat_args = tree_leaves(args)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *flat_args)
    expected = tree_leaves(fun(*args))
    assert len(outs) == len(expected)
    for out, e in zip(outs, expected):
        assert np.shape(out) == np.shape(e)
        np.testing.assert_allclose(out, e, rtol=RTOL, atol=ATOL)
    assert [tuple(np.shape(e)) for e in expected] == [a.shape for a in closed.out_avals]


def test_check_jaxpr_rejects_an_ill_typed_jaxpr():
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) + 1.0)(V3)
    eqn = closed.jaxpr.eqns[0]
    eqn.outvars[0].aval = eqn.outvars[0].aval.update(shape=(4,))
    with pytest.raises(TypeError):
        ft.check_jaxpr(closed.jaxpr)


# ------------------------------------------------------------------------------------------
# float32 and weak types
# ------------------------------------------------------------------------------------------

X32 = np.array([0.25, -1.0, 0.5, 2.0], np.float32)


def f32_loss(x):
    return fnp.mean(fnp.tanh(x * 2.0 + 1.0) ** 2 / 3.0 - fnp.exp(-x) + 0.5 * fnp.sqrt(x * x + 1))


@pytest.mark.parametrize("expr", [
    lambda x: x * 2.0, lambda x: 2.0 * x, lambda x: x / 2, lambda x: 1 - x, lambda x: x ** 2,
    lambda x: fnp.abs(x) ** 0.5, lambda x: x + True,
    lambda x: fnp.maximum(x, 0.0), lambda x: fnp.where(x > 0, x, 0.5),
], ids=["mul", "rmul", "div_int", "rsub_int", "pow_int", "pow_float", "add_bool", "maximum",
        "where"])
def test_python_scalars_do_not_upcast_float32(expr):
    assert np.asarray(expr(X32)).dtype == np.float32
    closed = ft.make_jaxpr(expr)(X32)
    assert closed.out_avals[0].dtype == np.float32
    assert np.asarray(ft.vmap(expr)(X32)).dtype == np.float32
    g = ft.grad(lambda x: fnp.sum(expr(x)))(X32)
    assert g.dtype == np.float32


@pytest.mark.parametrize("name,run", [
    ("value", lambda: f32_loss(X32)),
    ("grad", lambda: ft.grad(f32_loss)(X32)),
    ("value_and_grad", lambda: ft.value_and_grad(f32_loss)(X32)),
    ("jvp", lambda: ft.jvp(f32_loss, (X32,), (X32,))),
    ("vjp", lambda: (ft.vjp(f32_loss, X32)[1](np.float32(1.0)))),
    ("vjp_python_scalar_cotangent", lambda: (ft.vjp(f32_loss, X32)[1](1.0))),
    ("linearize", lambda: ft.linearize(f32_loss, X32)[1](X32)),
    ("jacfwd", lambda: ft.jacfwd(lambda x: fnp.sin(x) * 2.0)(X32)),
    ("jacrev", lambda: ft.jacrev(lambda x: fnp.sin(x) * 2.0)(X32)),
    ("hessian", lambda: ft.hessian(f32_loss)(X32)),
    ("vmap", lambda: ft.vmap(f32_loss)(np.stack([X32, X32 * 2]))),
    ("hvp", lambda: ft.jvp(ft.grad(f32_loss), (X32,), (X32,))),
    ("scalar_grad", lambda: ft.grad(lambda x: fnp.sin(x) * 2.0)(np.float32(0.5))),
    ("jvp_python_scalar_tangent", lambda: ft.jvp(lambda x: x * 2.0, (np.float32(1.5),), (1.0,))),
    ("linear_transpose", lambda: ft.linear_transpose(lambda x: x * 2.0, X32)(X32)),
])
def test_float32_stays_float32(name, run):
    for leaf in tree_leaves(run()):
        assert np.asarray(leaf).dtype == np.float32, f"{name}: got {np.asarray(leaf).dtype}"


def test_float32_gradient_values():
    g32 = ft.grad(f32_loss)(X32)
    g64 = ft.grad(f32_loss)(X32.astype(np.float64))
    np.testing.assert_allclose(g32, g64, rtol=1e-5)


# ------------------------------------------------------------------------------------------
# Arrays returned by transforms are immutable values (as JAX's are): read-only, sharing no
# memory with the caller's inputs or with each other, so that the caller changing its own
# inputs later cannot change a result; `g *= lr` rebinds `g` to a new array.
# ------------------------------------------------------------------------------------------

V = np.array([1.0, 2.0, 3.0])
C = np.array([0.5, -1.0, 2.0])


def _read_only_and_unshared(outputs, inputs):
    leaves = [x for x in tree_leaves(outputs) if isinstance(x, np.ndarray)]
    assert leaves
    for i, a in enumerate(leaves):
        assert type(a) is ft.Array and not a.flags.writeable, f"output {i} is writeable"
        for b in leaves[:i] + [x for x in inputs if isinstance(x, np.ndarray)]:
            assert not np.shares_memory(a, b), f"output {i} shares memory"


@pytest.mark.parametrize("name, run, inputs", [
    ("grad_of_sum", lambda: ft.grad(lambda x: fnp.sum(x))(V), [V]),
    ("grad_of_mean", lambda: ft.grad(lambda x: fnp.mean(x))(V), [V]),
    ("grad_two_args_one_cotangent", lambda: ft.grad(lambda x, y: fnp.sum((x + y) * C),
                                                    argnums=(0, 1))(V, V), [V, C]),
    ("value_and_grad", lambda: ft.value_and_grad(lambda x: fnp.sum(x))(V)[1], [V]),
    ("jvp_identity", lambda: ft.jvp(lambda x: x, (V,), (C,))[1], [V, C]),
    ("jvp_two_outputs", lambda: ft.jvp(lambda x: (x, x), (V,), (C,))[1], [V, C]),
    ("linearize_identity", lambda: ft.linearize(lambda x: x, V)[1](C), [V, C]),
    ("vjp_identity", lambda: ft.vjp(lambda x: x, V)[1](C), [V, C]),
    ("vjp_of_sum", lambda: ft.vjp(lambda x: fnp.sum(x), V)[1](np.float64(2.0)), [V]),
    ("vmap_of_constant", lambda: ft.vmap(lambda v: C)(np.ones((4, 3))), [C]),
    ("vmap_identity_moved_axis", lambda: ft.vmap(lambda v: v, in_axes=1)(np.ones((4, 3))), []),
    ("jacfwd_of_sum", lambda: ft.jacfwd(lambda x: fnp.sum(x))(V), [V]),
    ("jacrev_of_sum", lambda: ft.jacrev(lambda x: fnp.sum(x))(V), [V]),
    ("hessian", lambda: ft.hessian(lambda x: fnp.sum(x * x))(V), [V]),
    ("linear_transpose_identity", lambda: ft.linear_transpose(lambda x: x, V)(C), [V, C]),
])
def test_transform_outputs_are_read_only_and_unshared(name, run, inputs):
    before = [x.copy() for x in inputs]
    out = run()
    _read_only_and_unshared(out, inputs)
    for leaf in tree_leaves(out):
        if isinstance(leaf, np.ndarray):
            kept = leaf
            leaf *= 3.0  # rebinds `leaf`: the output itself is unchanged
            assert leaf is not kept and np.array_equal(leaf, kept * 3.0)
            with pytest.raises(ValueError, match="read-only"):
                np.multiply(kept, 3.0, out=kept)
    for x, b in zip(inputs, before):
        np.testing.assert_array_equal(x, b)


def test_gradient_update_in_place():
    params = {"w": np.ones(3), "b": np.zeros(())}
    grads = ft.grad(lambda p: fnp.sum(p["w"]) + p["b"])(params)
    w = grads["w"]
    grads["w"] *= 0.1  # rebinds the entry to a new array, as with JAX's arrays
    grads["b"] *= 0.1
    np.testing.assert_allclose(grads["w"], 0.1)
    np.testing.assert_allclose(grads["b"], 0.1)
    np.testing.assert_allclose(w, 1.0)
    np.testing.assert_allclose(params["w"], 1.0)


# ------------------------------------------------------------------------------------------
# Keyword arguments of vmap, eval_shape and make_jaxpr (JAX's conventions)
# ------------------------------------------------------------------------------------------


def _scaled_sin(x, scale=1.0, *, shift):
    return fnp.sin(x) * scale + shift


def test_vmap_maps_keyword_arguments_over_their_leading_axis():
    xs = np.arange(6.0).reshape(3, 2)
    scales, shifts = np.array([1.0, -2.0, 0.5]), np.arange(6.0).reshape(3, 2) / 7
    out = ft.vmap(_scaled_sin, in_axes=(1,))(xs.T, scale=scales, shift=shifts)
    loop = np.stack([_scaled_sin(xs[i], scale=scales[i], shift=shifts[i]) for i in range(3)])
    np.testing.assert_allclose(out, loop, rtol=1e-15)
    # and under differentiation: per-example gradients with a keyword argument
    g = ft.vmap(ft.grad(lambda x, *, shift: fnp.sum(_scaled_sin(x, shift=shift))))(
        xs, shift=shifts)
    np.testing.assert_allclose(g, np.cos(xs), rtol=1e-15)


def test_vmap_keyword_argument_of_the_wrong_batch_size_is_named():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        ft.vmap(_scaled_sin)(np.ones((3, 2)), shift=np.ones((4, 2)))


def test_eval_shape_and_make_jaxpr_take_keyword_arguments():
    shape = ft.eval_shape(_scaled_sin, ft.ShapeDtypeStruct((2, 5), np.float32),
                          shift=ft.ShapeDtypeStruct((5,), np.float32))
    assert shape == ft.ShapeDtypeStruct((2, 5), np.float32)
    jaxpr = ft.make_jaxpr(_scaled_sin)(np.ones(2), scale=np.ones(2), shift=np.ones(2))
    assert len(jaxpr.jaxpr.invars) == 3  # keyword arguments are traced, not baked in


def test_make_jaxpr_names_inputs_and_outputs_by_pytree_path():
    def f(params, x, *rest, k=1.0):
        return {"s": fnp.sum(params["w"] * x) + params["b"][0], "t": (x * k, rest[0])}

    closed = ft.make_jaxpr(f)({"w": np.ones(3), "b": np.ones(2)}, np.ones(3), np.ones(2), k=2.0)
    info = closed.debug_info
    assert info.traced_for == "make_jaxpr"
    assert info.func_src_info.startswith("test_make_jaxpr_names_inputs_and_outputs_by_pytree")
    assert info.arg_names == ("params['b']", "params['w']", "x", "rest[0]", "k")
    assert info.result_paths == ("result['s']", "result['t'][0]", "result['t'][1]")
    assert len(info.arg_names) == len(closed.jaxpr.invars)
    text = closed.pretty_print(arg_names=True)
    assert text.splitlines()[:5] == ["# a = params['b']", "# b = params['w']", "# c = x",
                                     "# d = rest[0]", "# e = k"]
    assert text.split("\n", 5)[5] == str(closed)  # the program itself is unchanged
    assert closed.pretty_print() == str(closed)


def test_make_jaxpr_argument_names_skip_static_arguments_and_count_constants():
    y = np.arange(3.0)
    closed = ft.make_jaxpr(lambda n, a: a * n + y, static_argnums=0)(2, np.ones(3))
    assert closed.debug_info.arg_names == ("a",)
    assert closed.debug_info.result_paths == ("result",)
    # the constant y is named first by pp_jaxpr; the legend names the input after it
    legend = closed.pretty_print(arg_names=True).splitlines()[0]
    assert legend == "# " + str(closed).split(";")[1].split(":")[0].strip() + " = a"
