"""Programs at the edge of what reverse and forward mode can do, compared with JAX.

A differential fuzzer against JAX found programs where the two libraries disagree on
whether to answer. Each case here says what JAX 0.10.2 does (checked by hand with x64
enabled; JAX is not needed to run this file) and pins functrans's behaviour:

* where JAX refuses and functrans answers, the answer is confirmed by a symmetric finite
  difference, and docs say why functrans can;
* where both refuse, functrans's error is the named, explained one (never an assertion or
  a failure deep inside a rule).
"""
import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp


def central_difference(f, x, eps=1e-6):
    x = np.asarray(x, dtype=float)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


# JAX refuses reverse mode of a reduce_window with a general computation ("Linearization
# failed to produce known values for all output primals"); functrans's general
# reduce_window is a fold of pads, strided slices and the computation, so its JVP is the
# computation's own and transposes.
ANSWERED_WHERE_JAX_REFUSES = {
    "reduce_window product": lambda x: fnp.sum(
        lax.reduce_window(x, 1.0, lambda a, b: a * b, (2,), (1,), "VALID")),
    "reduce_window max as a lambda": lambda x: fnp.sum(
        lax.reduce_window(x, -np.inf, lambda a, b: fnp.maximum(a, b), (2,), (1,), "VALID")),
    "reduce_window logaddexp, strided and padded": lambda x: fnp.sum(
        lax.reduce_window(x, -np.inf, fnp.logaddexp, (3,), (2,), ((1, 1),)) ** 2),
}


@pytest.mark.parametrize("name", sorted(ANSWERED_WHERE_JAX_REFUSES))
def test_reverse_mode_answers_that_jax_refuses_agree_with_finite_differences(name):
    f = ANSWERED_WHERE_JAX_REFUSES[name]
    x = np.array([0.3, 2.1, -1.2, 1.7, 0.4])
    expected = central_difference(lambda v: float(f(v)), x)
    np.testing.assert_allclose(ft.grad(f)(x), expected, rtol=1e-7, atol=1e-8)
    # both modes and the compiled plan agree
    np.testing.assert_allclose(ft.jacfwd(f)(x), ft.grad(f)(x), rtol=1e-12)
    with ft.config.reverse_mode_set("compiled"):
        np.testing.assert_allclose(ft.grad(f)(x), ft.grad(f)(x), rtol=1e-12)


def _while_squares(x):
    return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * c[0], c[1] + 1), (x, 0))[0]


WHILE_MESSAGE = "Reverse-mode differentiation (grad, vjp, jacrev) of lax.while_loop"


@pytest.mark.parametrize("wrap", [lambda f: f, ft.checkpoint, ft.jit,
                                  lambda f: ft.jit(ft.checkpoint(f))],
                         ids=["plain", "checkpoint", "jit", "jit of checkpoint"])
def test_while_loop_reverse_mode_is_refused_with_its_reason_under_checkpoint_too(wrap):
    # JAX: "Reverse-mode differentiation does not work for lax.while_loop ..." in each case.
    f = wrap(_while_squares)
    with pytest.raises(TypeError, match=r"Reverse-mode differentiation \(grad, vjp, jacrev\)"):
        ft.grad(f)(1.1)
    # forward mode is supported, checkpoint or not (JAX agrees)
    expected = 8 * 1.1 ** 7
    assert ft.jvp(f, (1.1,), (1.0,))[1] == pytest.approx(expected, rel=1e-12)
    assert ft.jacfwd(f)(1.1) == pytest.approx(expected, rel=1e-12)


def test_linearize_of_a_checkpointed_while_loop_evaluates_its_tangent_map():
    y, f_lin = ft.linearize(ft.checkpoint(_while_squares), 1.1)
    assert y == pytest.approx(1.1 ** 8, rel=1e-12)
    assert f_lin(2.0) == pytest.approx(2 * 8 * 1.1 ** 7, rel=1e-12)


def _custom_vjp_sin():
    @ft.custom_vjp
    def g(c, y):
        return fnp.sin(c) * 2.0

    g.defvjp(lambda c, y: (g(c, y), c), lambda c, ct: (ct * fnp.cos(c) * 2.0, 0.0 * c))
    return g


def test_forward_mode_through_custom_vjp_follows_jax():
    g = _custom_vjp_sin()
    # The custom_vjp's inputs do not depend on x: no tangent reaches it, so forward mode
    # runs it as a plain function (JAX: 0.9092974268256817).
    out, tangent = ft.jvp(lambda x: x * g(2.0, 1.0), (1.5,), (1.0,))
    assert tangent == pytest.approx(np.sin(2.0) * 2.0, rel=1e-14)
    # Its output ignores x, but x is passed in, so a tangent reaches it: JAX refuses ("can't
    # apply forward-mode autodiff (jvp) to a custom_vjp function") and so does functrans,
    # naming the function's kind and the way out.
    with pytest.raises(TypeError, match="custom_vjp function .g. is not supported"):
        ft.jvp(lambda x: g(2.0, x), (1.5,), (1.0,))
    # stop_gradient before the call removes the tangent (JAX: 3.0 times the input tangent)
    tangent = ft.jvp(lambda x: x * g(2.0, lax.stop_gradient(x)), (1.5,), (1.0,))[1]
    assert tangent == pytest.approx(np.sin(2.0) * 2.0, rel=1e-14)


def test_checkpointed_while_loop_forward_mode_batches_and_nests():
    f = ft.checkpoint(_while_squares)
    xs = np.array([0.9, 1.1, 1.3])
    # vmap of forward mode against a loop, and a second derivative by forward over forward
    batched = ft.vmap(lambda x: ft.jvp(f, (x,), (1.0,))[1])(xs)
    np.testing.assert_allclose(batched, [ft.jvp(f, (x,), (1.0,))[1] for x in xs], rtol=1e-13)
    np.testing.assert_allclose(batched, 8 * xs ** 7, rtol=1e-12)
    second = ft.jacfwd(ft.jacfwd(f))(1.1)
    assert second == pytest.approx(56 * 1.1 ** 6, rel=1e-12)
