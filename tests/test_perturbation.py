"""Perturbation confusion: nested transforms must keep their perturbations (tangents, batch
axes) apart, including when an inner function closes over an outer tracer.  And traces are
per thread: transforms running concurrently in several threads do not see each other."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp

RTOL, ATOL = 1e-10, 1e-12


# Derivative operators built from each transform, for scalar functions of a scalar.
def d_grad(f):
    return ft.grad(f)


def d_jvp(f):
    return lambda x: ft.jvp(f, (x,), (1.0,))[1]


def d_vjp(f):
    def df(x):
        _, f_vjp = ft.vjp(f, x)
        return f_vjp(1.0)[0]
    return df


def d_linearize(f):
    return lambda x: ft.linearize(f, x)[1](1.0)


def d_jacfwd(f):
    return ft.jacfwd(f)


def d_jacrev(f):
    return ft.jacrev(f)


DERIVATIVES = [d_grad, d_jvp, d_vjp, d_linearize, d_jacfwd, d_jacrev]
DERIVATIVE_IDS = ["grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev"]


def outer_inner():
    return pytest.mark.parametrize(
        "outer,inner",
        [(o, i) for o in DERIVATIVES for i in DERIVATIVES],
        ids=[f"{a}-of-{b}" for a in DERIVATIVE_IDS for b in DERIVATIVE_IDS])


def test_grad_of_grad_closing_over_outer_variable():
    assert ft.grad(lambda x: ft.grad(lambda y: x * y)(1.0))(2.0) == 1.0


@outer_inner()
def test_closure_over_outer_variable_all_pairs(outer, inner):
    # d/dx [ d/dy (x y) ] = d/dx [x] = 1, whichever transforms compute the two derivatives.
    value = outer(lambda x: inner(lambda y: x * y)(1.0))(2.0)
    np.testing.assert_allclose(value, 1.0, rtol=RTOL)


@outer_inner()
def test_siskind_pearlmutter(outer, inner):
    # d/dx [ x · (d/dy (x + y))|_{y=1} ] at x = 1 is 1 (perturbation confusion gives 2).
    value = outer(lambda x: x * inner(lambda y: x + y)(1.0))(1.0)
    np.testing.assert_allclose(value, 1.0, rtol=RTOL)


def test_siskind_pearlmutter_nested_jvp_explicitly():
    def f(x):
        _, inner = ft.jvp(lambda y: x + y, (1.0,), (1.0,))
        return x * inner
    value, derivative = ft.jvp(f, (1.0,), (1.0,))
    assert value == 1.0
    assert derivative == 1.0
    assert ft.grad(lambda x: x * ft.grad(lambda y: x + y)(1.0))(1.0) == 1.0


@outer_inner()
def test_inner_evaluated_at_the_outer_tracer(outer, inner):
    # g(x) = d/dy [x y²]|_{y=x} = 2x², so g'(x) = 4x.
    x = 1.3
    value = outer(lambda x: inner(lambda y: x * y * y)(x))(x)
    np.testing.assert_allclose(value, 4 * x, rtol=RTOL)


@outer_inner()
def test_inner_function_returning_only_the_outer_variable(outer, inner):
    # The inner function ignores its argument: its derivative is 0 however x is traced, so
    # d/dx [ D(y ↦ x²)(1) + x ] = 1.
    value = outer(lambda x: inner(lambda y: x ** 2)(1.0) + x)(3.0)
    np.testing.assert_allclose(value, 1.0, rtol=RTOL)


def test_nested_jvp_inner_closes_over_outer_tracer():
    # g(x) = d/dy sin(x y)|_{y=1} = x cos x;  g'(x) = cos x - x sin x.
    def g(x):
        return ft.jvp(lambda y: fnp.sin(x * y), (1.0,), (1.0,))[1]
    for x in (-0.4, 0.5, 2.0):
        value, derivative = ft.jvp(g, (x,), (1.0,))
        np.testing.assert_allclose(value, x * np.cos(x), rtol=RTOL)
        np.testing.assert_allclose(derivative, np.cos(x) - x * np.sin(x), rtol=RTOL)


def test_three_levels_of_nesting():
    # inner: d/dz (x y z) = x y; middle: d/dy [x y · x y]|_{y=1} = 2x²; outer: d/dx [x · 2x²].
    def outer(x):
        def middle(y):
            return x * y * d_jvp(lambda z: x * y * z)(1.0)
        return x * d_jvp(middle)(1.0)
    for d in (d_grad, d_jvp, d_vjp):
        np.testing.assert_allclose(d(outer)(1.5), 6 * 1.5 ** 2, rtol=RTOL)


def test_same_derivative_operator_reused_at_two_levels():
    D = d_jvp
    # D(x ↦ x · D(y ↦ x y)(2)) = D(x ↦ x²) = 2x.
    np.testing.assert_allclose(D(lambda x: x * D(lambda y: x * y)(2.0))(3.0), 6.0, rtol=RTOL)


def test_mixed_partial_with_nested_jvp_in_different_directions():
    # f(x, y) = x² y³: ∂²f/∂x∂y = 6 x y².
    def f(x, y):
        return x ** 2 * y ** 3

    def df_dy(x, y):
        return ft.jvp(f, (x, y), (0.0, 1.0))[1]

    x, y = 1.5, -0.7
    np.testing.assert_allclose(ft.jvp(df_dy, (x, y), (1.0, 0.0))[1], 6 * x * y ** 2, rtol=RTOL)
    np.testing.assert_allclose(ft.grad(ft.grad(f, argnums=1), argnums=0)(x, y), 6 * x * y ** 2,
                               rtol=RTOL)
    # And the pure second derivatives.
    np.testing.assert_allclose(ft.jvp(df_dy, (x, y), (0.0, 1.0))[1], 6 * x ** 2 * y, rtol=RTOL)
    np.testing.assert_allclose(ft.hessian(f, argnums=(0, 1))(x, y),
                               ((2 * y ** 3, 6 * x * y ** 2), (6 * x * y ** 2, 6 * x ** 2 * y)),
                               rtol=RTOL)


# ------------------------------------------------------------------------------------------
# grad of functions that call other transforms
# ------------------------------------------------------------------------------------------

XS = np.array([0.3, -0.8, 1.4])


def test_grad_of_function_calling_jacfwd():
    # jacfwd(y ↦ sin(y) x)(x) = diag(cos(x) x); its sum is Σ x cos x.
    def f(x):
        return fnp.sum(ft.jacfwd(lambda y: fnp.sin(y) * x)(x))
    np.testing.assert_allclose(f(XS), np.sum(XS * np.cos(XS)), rtol=RTOL)
    np.testing.assert_allclose(ft.grad(f)(XS), np.cos(XS) - XS * np.sin(XS), rtol=RTOL)


def test_grad_of_function_calling_jacrev():
    # jacrev(y ↦ x[0] y²)(x) = diag(2 x[0] x); its sum is 2 x[0] Σ x.
    def f(x):
        return fnp.sum(ft.jacrev(lambda y: x[0] * y ** 2)(x))
    expected = np.full(3, 2 * XS[0])
    expected[0] += 2 * np.sum(XS)
    np.testing.assert_allclose(ft.grad(f)(XS), expected, rtol=RTOL)


def test_grad_of_function_calling_vmap():
    # Σ_i sin(x_i) x_0: ∂/∂x_0 = x_0 cos x_0 + Σ sin x;  ∂/∂x_i = x_0 cos x_i.
    def f(x):
        return fnp.sum(ft.vmap(lambda y: fnp.sin(y) * x[0])(x))
    expected = XS[0] * np.cos(XS)
    expected[0] += np.sum(np.sin(XS))
    np.testing.assert_allclose(ft.grad(f)(XS), expected, rtol=RTOL)


def test_grad_of_function_calling_hessian():
    # hessian(y ↦ x[0] Σ y³)(x) = diag(6 x[0] x); trace = 6 x[0] Σ x.
    def f(x):
        h = ft.hessian(lambda y: x[0] * fnp.sum(y ** 3))(x)
        return h[0, 0] + h[1, 1] + h[2, 2]
    expected = np.full(3, 6 * XS[0])
    expected[0] += 6 * np.sum(XS)
    np.testing.assert_allclose(f(XS), 6 * XS[0] * np.sum(XS), rtol=RTOL)
    np.testing.assert_allclose(ft.grad(f)(XS), expected, rtol=RTOL)


def test_grad_of_function_calling_vmap_of_grad():
    # Σ_i d/dy [x_0 sin(y)]|_{y = x_i} = x_0 Σ cos x_i.
    def f(x):
        return fnp.sum(ft.vmap(ft.grad(lambda y: x[0] * fnp.sin(y)))(x))
    expected = -XS[0] * np.sin(XS)
    expected[0] += np.sum(np.cos(XS))
    np.testing.assert_allclose(ft.grad(f)(XS), expected, rtol=RTOL)


def test_vmap_of_grad_closing_over_batched_value():
    # For each x: d/dy [x y²]|_{y=1} = 2x.
    out = ft.vmap(lambda x: ft.grad(lambda y: x * y ** 2)(1.0))(XS)
    np.testing.assert_allclose(out, 2 * XS, rtol=RTOL)
    # And the outer vmap's batch axis does not leak into the inner vmap.
    out = ft.vmap(lambda x: ft.vmap(lambda y: x * y)(XS))(XS[:2])
    np.testing.assert_allclose(out, np.outer(XS[:2], XS), rtol=RTOL)
    # An inner vmap returning only the outer batched value broadcasts it along its own axis.
    out = ft.vmap(lambda x: ft.vmap(lambda y: x)(XS))(XS[:2])
    np.testing.assert_allclose(out, np.repeat(XS[:2, None], 3, axis=1), rtol=RTOL)
    out = ft.vmap(lambda x: ft.vmap(lambda y: 2 * x, out_axes=0)(XS), out_axes=1)(XS[:2])
    np.testing.assert_allclose(out, np.repeat(2 * XS[None, :2], 3, axis=0), rtol=RTOL)


# ------------------------------------------------------------------------------------------
# Higher-order derivatives of sin
# ------------------------------------------------------------------------------------------

SIN_DERIVATIVES = [np.sin, np.cos, lambda x: -np.sin(x), lambda x: -np.cos(x), np.sin]


def nth(derivative, f, n):
    for _ in range(n):
        f = derivative(f)
    return f


@pytest.mark.parametrize("order", range(5))
@pytest.mark.parametrize("derivative", [d_grad, d_jvp, d_vjp, d_linearize],
                         ids=["grad", "jvp", "vjp", "linearize"])
@pytest.mark.parametrize("x", [-1.1, 0.0, 0.7, 2.5])
def test_higher_order_derivatives_of_sin(order, derivative, x):
    value = nth(derivative, fnp.sin, order)(x)
    np.testing.assert_allclose(value, SIN_DERIVATIVES[order](x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("order", range(5))
def test_higher_order_derivatives_alternating_grad_and_jvp(order):
    f = fnp.sin
    for k in range(order):
        f = d_grad(f) if k % 2 == 0 else d_jvp(f)
    np.testing.assert_allclose(f(0.7), SIN_DERIVATIVES[order](0.7), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("order", range(5))
def test_higher_order_derivatives_of_sin_on_arrays(order):
    x = np.linspace(-2.0, 2.0, 5)

    def d_elementwise_jvp(f):
        return lambda x: ft.jvp(f, (x,), (fnp.ones_like(x),))[1]

    def d_elementwise_grad(f):
        return ft.grad(lambda x: fnp.sum(f(x)))

    for derivative in (d_elementwise_jvp, d_elementwise_grad):
        np.testing.assert_allclose(nth(derivative, fnp.sin, order)(x), SIN_DERIVATIVES[order](x),
                                   rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ft.vmap(nth(d_grad, fnp.sin, order))(x), SIN_DERIVATIVES[order](x),
                               rtol=RTOL, atol=ATOL)


def test_fourth_derivative_with_jacfwd_and_jacrev():
    x = 0.7
    for derivatives in ([d_jacfwd] * 4, [d_jacrev] * 4, [d_jacfwd, d_jacrev, d_jacfwd, d_jacrev]):
        f = fnp.sin
        for d in derivatives:
            f = d(f)
        np.testing.assert_allclose(f(x), np.sin(x), rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------------------------
# Traces are per thread
# ------------------------------------------------------------------------------------------

NUM_THREADS = 8


def threaded_work(i):
    """Several nested transforms on an input that depends on ``i``; the trace-stack depth
    seen inside is recorded too (it must not depend on other threads)."""
    depths = []

    def f(x):
        depths.append(len(ft.core.trace_stack()))
        return fnp.sum(fnp.sin(x) * x ** 2) * (i + 1)

    x = np.linspace(-1.0, 1.0, 5) + 0.1 * i
    results = {
        "grad": ft.grad(f)(x),
        "hvp": ft.jvp(ft.grad(f), (x,), (np.ones(5),))[1],
        "vmap_grad": ft.vmap(ft.grad(lambda y: f(y[None])))(x),
        "nested": ft.grad(lambda s: s * ft.grad(lambda y: s * y ** 3)(1.0 + i))(0.5),
    }
    return results, depths


def test_grad_in_threads_matches_serial(monkeypatch):
    # The depth inside grad is 3 under linearize and 2 on a tape (functrans.config), which
    # grad uses once a function was differentiated before: compare linearize with itself.
    monkeypatch.setattr(ft.config, "reverse_mode", "compiled")
    serial = [threaded_work(i) for i in range(NUM_THREADS)]
    barrier = threading.Barrier(NUM_THREADS)
    results, errors = [None] * NUM_THREADS, []

    def run(i):
        try:
            barrier.wait(timeout=10)
            for _ in range(5):  # several rounds, so the transforms overlap in time
                results[i] = threaded_work(i)
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(NUM_THREADS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so that transforms interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors
    for i in range(NUM_THREADS):
        expected, expected_depths = serial[i]
        got, got_depths = results[i]
        assert got_depths == expected_depths
        for key in expected:
            np.testing.assert_allclose(got[key], expected[key], rtol=RTOL, atol=ATOL,
                                       err_msg=f"thread {i}, {key}")
        # And against the closed form of the plain gradient.
        x = np.linspace(-1.0, 1.0, 5) + 0.1 * i
        np.testing.assert_allclose(got["grad"], (i + 1) * (np.cos(x) * x ** 2 + 2 * x * np.sin(x)),
                                   rtol=RTOL)
        np.testing.assert_allclose(got["nested"], 2 * 0.5 * 3 * (1.0 + i) ** 2, rtol=RTOL)
    assert len(ft.core.trace_stack()) == 1


def test_each_thread_starts_with_an_empty_trace_stack():
    seen = []

    def inside_grad(x):
        thread = threading.Thread(target=lambda: seen.append(len(ft.core.trace_stack())))
        thread.start()
        thread.join()
        return x * x

    assert ft.grad(inside_grad)(3.0) == 6.0
    assert seen == [1]
