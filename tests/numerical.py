"""A small internal numerical derivative checker for the test suite.

Derivatives are compared against a fourth-order central difference
``(-f(x+2h) + 8 f(x+h) - 8 f(x-h) + f(x-2h)) / 12h`` whose error is O(h⁴): with h = 1e-3 in
float64 it agrees with exact derivatives of smooth functions to about 1e-9.
Second order recurses on the derivative functions themselves (forward-over-forward,
reverse-over-forward, reverse-over-reverse).
"""
from __future__ import annotations

import numpy as np

import functrans as ft
from functrans.tree_util import tree_flatten, tree_map, tree_unflatten

STEP = 1e-3
RTOL = ATOL = 1e-7


def _axpy(a, x, y):
    return tree_map(lambda xi, yi: yi + a * np.asarray(xi, dtype=np.result_type(yi)), x, y)


def _vdot(xs, ys) -> float:
    xs_leaves, ys_leaves = tree_flatten(xs)[0], tree_flatten(ys)[0]
    return float(sum(np.real(np.vdot(np.asarray(a), np.asarray(b)))
                     for a, b in zip(xs_leaves, ys_leaves)))


def numerical_jvp(f, primals, tangents, step=STEP):
    """Fourth-order central difference of ``f`` at ``primals`` along ``tangents``."""
    def at(scale):
        return f(*_axpy(scale * step, tangents, primals))
    plus2, plus1, minus1, minus2 = at(2.0), at(1.0), at(-1.0), at(-2.0)
    return tree_map(lambda a, b, c, d: (-np.asarray(a) + 8 * np.asarray(b) - 8 * np.asarray(c)
                                        + np.asarray(d)) / (12 * step),
                    plus2, plus1, minus1, minus2)


def random_like(rng, tree):
    def draw(x):
        x = np.asarray(x)
        if x.dtype.kind == "c":
            return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
        return rng.standard_normal(x.shape).astype(x.dtype)
    return tree_map(draw, tree)


def assert_close(actual, expected, rtol=RTOL, atol=ATOL, what=""):
    """Pytrees of equal structure whose leaves have equal shapes and close values (float0
    leaves must both be float0)."""
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree, f"{what}: structures differ: {a_tree} vs {e_tree}"
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what}: shapes differ: {a.shape} vs {e.shape}"
        if ft.float0 in (a.dtype, e.dtype):
            assert a.dtype == e.dtype, f"{what}: dtypes differ: {a.dtype} vs {e.dtype}"
            continue
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def check_jvp(f, primals, rng, rtol=RTOL, atol=ATOL):
    tangents = random_like(rng, primals)
    _, analytic = ft.jvp(f, primals, tangents)
    numeric = numerical_jvp(f, primals, tangents)
    assert_close(analytic, numeric, rtol, atol, "jvp vs central difference")


def check_vjp(f, primals, rng, rtol=RTOL, atol=ATOL):
    """<ct, J t> computed numerically must equal <vjp(ct), t>."""
    tangents = random_like(rng, primals)
    out, f_vjp = ft.vjp(f, *primals)
    cts = random_like(rng, out)
    cts_in = f_vjp(cts)
    lhs = _vdot(cts, numerical_jvp(f, primals, tangents))
    rhs = _vdot(cts_in, tangents)
    np.testing.assert_allclose(rhs, lhs, rtol=rtol, atol=atol,
                               err_msg="<vjp(ct), t> vs <ct, numerical J t>")
    # The same identity against forward mode holds to rounding.
    _, jt = ft.jvp(f, primals, tangents)
    exact = max(1e-11, rtol * 1e-4)
    np.testing.assert_allclose(rhs, _vdot(cts, jt), rtol=exact, atol=exact,
                               err_msg="<vjp(ct), t> vs <ct, jvp(t)>")


def check_grads(f, primals, order: int, rng, rtol=RTOL, atol=ATOL):
    """Forward and reverse mode up to ``order`` against numerical differences."""
    check_jvp(f, primals, rng, rtol, atol)
    check_vjp(f, primals, rng, rtol, atol)
    if order > 1:
        tangents = random_like(rng, primals)

        def f_jvp(*p):
            return ft.jvp(f, p, tangents)[1]
        check_grads(f_jvp, primals, order - 1, rng, rtol * 10, atol * 10)

        cts = random_like(rng, f(*primals))

        def f_vjp(*p):
            return ft.vjp(f, *p)[1](cts)
        check_grads(f_vjp, primals, order - 1, rng, rtol * 10, atol * 10)


def stack_along(xs, axis):
    return np.stack([np.asarray(x) for x in xs], axis=axis)


def unflatten_like(tree, leaves):
    return tree_unflatten(tree_flatten(tree)[1], leaves)
