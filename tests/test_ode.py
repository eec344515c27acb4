"""functrans.experimental.ode.odeint: solutions against closed forms and SciPy's
integrators, the adjoint gradients against closed forms and against differentiating a
fixed-step integration, vmap against a loop, jit against eager, mxstep and hmax, and the
errors for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.experimental.ode import odeint
from functrans.runge_kutta import (dense_output, dormand_prince_step, error_ratio,
                                   initial_step_size, next_step_size)

TS = np.linspace(0.0, 2.0, 6)
TIGHT = dict(rtol=1e-11, atol=1e-11)


def decay(y, t, k):
    return -k * y


def oscillator(state, t, omega):
    x, v = state
    return v, -omega ** 2 * x


def lotka_volterra(y, t, p):
    prey, predator = y[0], y[1]
    return fnp.stack([p["a"] * prey - p["b"] * prey * predator,
                      p["c"] * prey * predator - p["d"] * predator])


LV_PARAMS = {"a": 1.1, "b": 0.4, "c": 0.1, "d": 0.4}
LV_Y0 = np.array([10.0, 5.0])


def forced(y, t, w):
    """Non-autonomous: the time enters the derivative."""
    return -w * y + fnp.sin(3.0 * t)


# ------------------------------------------------------------------------------------------
# the stepper's pieces
# ------------------------------------------------------------------------------------------


def test_one_step_is_fifth_order_and_its_error_estimate_fourth():
    def step_error(h):
        y1, _, err, _ = dormand_prince_step(lambda y, t: y, np.ones(1), np.ones(1), 0.0, h)
        return abs(float(y1[0]) - np.exp(h)), abs(float(err[0]))
    (e1, d1), (e2, d2) = step_error(0.1), step_error(0.05)
    assert 2 ** 5.7 < e1 / e2 < 2 ** 6.3   # local error O(h^6)
    assert 2 ** 4.7 < d1 / d2 < 2 ** 5.3   # the estimate O(h^5)


def test_dense_output_matches_the_step_ends_and_is_accurate_inside():
    y0, h = np.array([1.0, 2.0]), 0.2
    y1, _, _, c = dormand_prince_step(lambda y, t: -y, y0, -y0, 0.0, h)
    np.testing.assert_array_equal(dense_output(c, 0.0), y0)
    np.testing.assert_allclose(dense_output(c, 1.0), y1, rtol=1e-14)
    theta = np.linspace(0, 1, 7)[:, None]
    np.testing.assert_allclose(ft.vmap(lambda s: dense_output(c, s))(theta[:, 0]),
                               y0 * np.exp(-h * theta), rtol=2e-7)

    def midpoint_error(h):
        _, _, _, c = dormand_prince_step(lambda y, t: -y, y0, -y0, 0.0, h)
        return abs(float(dense_output(c, 0.5)[0]) - np.exp(-h / 2))
    assert 2 ** 4.7 < midpoint_error(0.1) / midpoint_error(0.05) < 2 ** 5.3  # O(h^5)


def test_step_size_control():
    assert float(next_step_size(1.0, 0.0)) == 10.0           # no error: grow most
    assert float(next_step_size(1.0, 1e9)) == 0.2            # huge error: shrink most
    assert float(next_step_size(1.0, 1e-9, hmax=0.5)) == 0.5
    np.testing.assert_allclose(float(next_step_size(1.0, 2.0 ** 5)), 0.45)
    assert float(error_ratio(np.array([3.0, 4.0]), np.zeros(2), np.zeros(2), 1.0, 1.0)) \
        == pytest.approx(np.sqrt(12.5))
    h = initial_step_size(lambda y, t: -y, np.ones(3), -np.ones(3), 0.0, 1e-8, 1e-8)
    assert 1e-4 < float(h) < 1e-1


# ------------------------------------------------------------------------------------------
# solutions
# ------------------------------------------------------------------------------------------


def test_exponential_decay_at_default_and_tight_tolerances():
    exact = np.exp(-0.7 * TS)
    np.testing.assert_allclose(odeint(decay, 1.0, TS, 0.7), exact, rtol=5e-8)
    np.testing.assert_allclose(odeint(decay, 1.0, TS, 0.7, **TIGHT), exact, rtol=1e-10)


def test_harmonic_oscillator_with_a_tuple_state():
    ts = np.linspace(0.0, 10.0, 21)
    x, v = odeint(oscillator, (1.0, 0.0), ts, 2.0, **TIGHT)
    np.testing.assert_allclose(x, np.cos(2 * ts), atol=1e-9)
    np.testing.assert_allclose(v, -2 * np.sin(2 * ts), atol=2e-9)


def test_a_pytree_state_of_several_shapes_and_dtypes():
    def f(state, t):
        return {"a": -state["a"], "b": [2.0 * state["b"][0]]}
    y0 = {"a": np.ones((2, 3)), "b": [np.arange(1.0, 3.0, dtype=np.float32)]}
    out = odeint(f, y0, TS, **TIGHT)
    assert out["a"].shape == (6, 2, 3) and out["a"].dtype == np.float64
    assert out["b"][0].shape == (6, 2) and out["b"][0].dtype == np.float32
    np.testing.assert_allclose(out["a"], np.exp(-TS)[:, None, None] * np.ones((2, 3)),
                               rtol=1e-10)
    np.testing.assert_allclose(out["b"][0], np.exp(2 * TS)[:, None] * [1.0, 2.0],
                               rtol=1e-6)


def test_float32_stays_float32():
    out = odeint(decay, np.float32(1.0), TS.astype(np.float32), np.float32(0.7),
                 rtol=1e-5, atol=1e-5)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.exp(-0.7 * TS), rtol=1e-4)
    grads = ft.grad(lambda y0, k, ts: odeint(decay, y0, ts, k, rtol=1e-5, atol=1e-5)[-1],
                    (0, 1, 2))(np.float32(1.0), np.float32(0.7), TS.astype(np.float32))
    assert [np.asarray(g).dtype for g in grads] == [np.float32] * 3
    np.testing.assert_allclose(grads[1], -2.0 * np.exp(-1.4), rtol=1e-4)


def test_complex_state():
    ts = np.linspace(0.0, 3.0, 5)
    out = odeint(lambda y, t: -1j * y, np.array([1.0 + 0j, 1j]), ts, **TIGHT)
    np.testing.assert_allclose(out, np.exp(-1j * ts)[:, None] * [1, 1j], atol=1e-9)


@pytest.mark.parametrize("method", ["DOP853", "RK45"])
def test_against_scipy_solve_ivp(method):
    integrate = pytest.importorskip("scipy.integrate")
    ts = np.linspace(0.0, 8.0, 9)

    def lv(t, y):
        return np.asarray(lotka_volterra(y, t, LV_PARAMS))
    want = integrate.solve_ivp(lv, (0.0, 8.0), LV_Y0, method=method, t_eval=ts,
                               rtol=1e-12, atol=1e-12).y.T
    got = odeint(lotka_volterra, LV_Y0, ts, LV_PARAMS, **TIGHT)
    np.testing.assert_allclose(got, want, rtol=1e-8)

    def scipy_forced(t, y):
        return -0.5 * y + np.sin(3.0 * t)
    want = integrate.solve_ivp(scipy_forced, (0.0, 8.0), [1.0], method=method, t_eval=ts,
                               rtol=1e-12, atol=1e-12).y.T
    np.testing.assert_allclose(odeint(forced, np.ones(1), ts, 0.5, **TIGHT), want,
                               rtol=1e-8, atol=1e-10)


def test_output_times_may_repeat_and_a_single_time_returns_y0():
    out = odeint(decay, 1.0, np.array([0.0, 0.0, 1.0, 1.0, 2.0]), 0.5)
    np.testing.assert_allclose(out, np.exp(-0.5 * np.array([0, 0, 1, 1, 2.0])), rtol=1e-7)
    np.testing.assert_array_equal(odeint(decay, np.ones(2), np.array([0.3]), 0.5),
                                  np.ones((1, 2)))


def test_a_start_other_than_zero_and_negative_times():
    ts = np.array([-3.0, -1.0, 0.5])
    np.testing.assert_allclose(odeint(forced, np.ones(1), ts, 0.5, **TIGHT)[:, 0],
                               _forced_exact(ts, 0.5, -3.0, 1.0), rtol=1e-9)


def _forced_exact(t, w, t0, y0):
    """y' = -w y + sin(3t), y(t0) = y0."""
    def particular(s):
        return (w * np.sin(3 * s) - 3 * np.cos(3 * s)) / (w ** 2 + 9)
    return particular(t) + (y0 - particular(t0)) * np.exp(-w * (t - t0))


def test_mxstep_leaves_the_times_not_reached_nan():
    # from t = 0.5, about 50 steps reach t = 20 (JAX would extrapolate the last step there);
    # the next interval goes on from where the integration stopped, and reaches t = 40
    ts = np.array([0.0, 0.5, 20.0, 40.0])
    full = odeint(decay, 1.0, ts, 1.0)
    short = odeint(decay, 1.0, ts, 1.0, mxstep=30)
    np.testing.assert_array_equal(np.isnan(short), [False, False, True, False])
    np.testing.assert_array_equal(short[:2], full[:2])
    assert abs(float(short[3]) - np.exp(-40.0)) < 1e-8   # within atol
    np.testing.assert_array_equal(odeint(decay, 1.0, ts, 1.0, mxstep=10 ** 6), full)


def test_hmax_keeps_steps_from_jumping_over_a_pulse():
    def pulse(y, t):
        return fnp.exp(-((t - 5.0) / 0.01) ** 2) * fnp.ones_like(y)
    ts = np.array([4.0, 6.0])
    area = 0.01 * np.sqrt(np.pi)
    assert abs(float(odeint(pulse, 0.0, ts)[-1]) - area) > 0.5 * area   # stepped over it
    np.testing.assert_allclose(odeint(pulse, 0.0, ts, hmax=0.005)[-1], area, rtol=1e-6)


# ------------------------------------------------------------------------------------------
# gradients by the adjoint method
# ------------------------------------------------------------------------------------------


def test_gradients_of_decay_in_closed_form():
    def loss(y0, k, ts):
        return fnp.sum(odeint(decay, y0, ts, k, **TIGHT) ** 2)
    y0, k = 1.3, 0.7
    g_y0, g_k, g_ts = ft.grad(loss, (0, 1, 2))(y0, k, TS)
    e = np.exp(-2 * k * (TS - TS[0]))
    np.testing.assert_allclose(g_y0, np.sum(2 * y0 * e), rtol=1e-8)
    np.testing.assert_allclose(g_k, np.sum(-2 * (TS - TS[0]) * y0 ** 2 * e), rtol=1e-8)
    want_ts = -2 * k * y0 ** 2 * e
    want_ts[0] = -np.sum(want_ts[1:])
    np.testing.assert_allclose(g_ts, want_ts, rtol=1e-8, atol=1e-12)


def test_gradients_of_the_oscillator_pytree_state():
    ts = np.array([0.0, 1.0, 2.5])

    def loss(state, omega):
        x, v = odeint(oscillator, state, ts, omega, **TIGHT)
        return fnp.sum(x) + 0.5 * v[-1]
    (gx, gv), gw = ft.grad(loss, (0, 1))((1.0, 0.5), 2.0)
    # x(t) = x0 cos(wt) + v0 sin(wt)/w,  v(t) = -x0 w sin(wt) + v0 cos(wt)
    w, x0, v0, T = 2.0, 1.0, 0.5, ts[-1]
    np.testing.assert_allclose(gx, np.sum(np.cos(w * ts)) - 0.5 * w * np.sin(w * T),
                               rtol=1e-8)
    np.testing.assert_allclose(gv, np.sum(np.sin(w * ts)) / w + 0.5 * np.cos(w * T),
                               rtol=1e-8)
    dx_dw = -x0 * ts * np.sin(w * ts) + v0 * (ts * np.cos(w * ts) / w
                                              - np.sin(w * ts) / w ** 2)
    dv_dw = -x0 * (np.sin(w * T) + w * T * np.cos(w * T)) - v0 * T * np.sin(w * T)
    np.testing.assert_allclose(gw, np.sum(dx_dw) + 0.5 * dv_dw, rtol=1e-7)


def _rk4(f, y0, ts, *args, substeps=400):
    """A fixed-step classical Runge–Kutta integration written with lax.scan, which reverse
    mode differentiates step by step: the reference for the adjoint gradients."""
    def interval(y, bounds):
        t0, t1 = bounds
        h = (t1 - t0) / substeps

        def step(y, i):
            t = t0 + i * h
            k1 = f(y, t, *args)
            k2 = f(y + h / 2 * k1, t + h / 2, *args)
            k3 = f(y + h / 2 * k2, t + h / 2, *args)
            k4 = f(y + h * k3, t + h, *args)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), None
        y, _ = lax.scan(step, y, fnp.arange(substeps, dtype=float))
        return y, y
    _, ys = lax.scan(interval, y0, (ts[:-1], ts[1:]))
    return fnp.concatenate([y0[None], ys])


def test_adjoint_gradients_agree_with_differentiating_fixed_steps():
    ts = np.array([0.0, 0.7, 1.5, 3.0])
    weights = np.array([[0.3, -0.2], [1.0, 0.5], [-0.4, 0.8], [0.6, 0.1]])

    def loss(solve):
        def f(y0, params, ts):
            return fnp.sum(solve(lotka_volterra, y0, ts, params) * weights)
        return f
    adjoint = ft.grad(loss(lambda *a: odeint(*a, **TIGHT)), (0, 1, 2))(LV_Y0, LV_PARAMS, ts)
    stepped = ft.grad(loss(_rk4), (0, 1, 2))(LV_Y0, LV_PARAMS, ts)
    for got, want in zip(ft.tree_util.tree_leaves(adjoint),
                         ft.tree_util.tree_leaves(stepped)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_time_gradients_of_a_non_autonomous_system_against_finite_differences():
    ts = np.array([0.2, 1.0, 1.7])

    def loss(ts, w):
        return fnp.sum(odeint(forced, np.ones(1), ts, w, **TIGHT)[:, 0] * [0.5, 1.0, -2.0])

    def exact_loss(ts, w):
        return np.sum(_forced_exact(ts, w, ts[0], 1.0) * [0.5, 1.0, -2.0])
    g_ts, g_w = ft.grad(loss, (0, 1))(ts, 0.5)
    eps = 1e-6
    fd_ts = [(exact_loss(ts + eps * e, 0.5) - exact_loss(ts - eps * e, 0.5)) / (2 * eps)
             for e in np.eye(3)]
    fd_w = (exact_loss(ts, 0.5 + eps) - exact_loss(ts, 0.5 - eps)) / (2 * eps)
    np.testing.assert_allclose(g_ts, fd_ts, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_w, fd_w, rtol=1e-6)


def test_closures_integer_args_and_second_order():
    T = TS[-1]
    # what func closes over is differentiated (closure_convert)
    g = ft.grad(lambda k: odeint(lambda y, t: -k * y, 1.0, TS, **TIGHT)[-1])(0.7)
    np.testing.assert_allclose(g, -T * np.exp(-0.7 * T), rtol=1e-8)
    # an integer argument is not differentiated, and does not stop the others' gradients
    g = ft.grad(lambda y0: odeint(lambda y, t, n: -n * y, y0, TS, 2, **TIGHT)[-1])(1.0)
    np.testing.assert_allclose(g, np.exp(-2 * T), rtol=1e-8)
    # an integer closed over and batched by vmap, under grad
    g = ft.grad(lambda y0: fnp.sum(ft.vmap(
        lambda n: odeint(lambda y, t: -n * y, y0, TS, **TIGHT)[-1])(np.array([1, 2]))))(1.0)
    np.testing.assert_allclose(g, np.exp(-T) + np.exp(-2 * T), rtol=1e-8)
    # the adjoint is differentiable again: second order
    h = ft.grad(ft.grad(lambda k: odeint(decay, 1.0, TS, k, **TIGHT)[-1]))(0.7)
    np.testing.assert_allclose(h, T ** 2 * np.exp(-0.7 * T), rtol=1e-6)


def test_gradient_through_a_complex_state():
    def loss(w):
        return fnp.real(odeint(lambda y, t, w: -1j * w * y, np.ones(1, complex), TS, w,
                               **TIGHT)[-1, 0])
    T = TS[-1]
    np.testing.assert_allclose(ft.grad(loss)(1.3), -T * np.sin(1.3 * T), rtol=1e-7)


def test_forward_mode_is_refused_by_name():
    with pytest.raises(TypeError, match="custom_vjp function 'odeint' is not supported"):
        ft.jvp(lambda k: odeint(decay, 1.0, TS, k), (0.7,), (1.0,))
    with pytest.raises(TypeError, match="'odeint'"):
        ft.jacfwd(lambda y0: odeint(decay, y0, TS, 0.7))(np.ones(2))


# ------------------------------------------------------------------------------------------
# vmap and jit
# ------------------------------------------------------------------------------------------


def test_vmap_over_y0_args_and_times_equals_a_loop():
    y0s = np.array([[10.0, 5.0], [4.0, 2.0], [1.0, 9.0]])
    a_s = np.array([1.1, 0.8, 1.4])
    ts = np.array([0.0, 1.0, 4.0])
    times = np.stack([ts, 2 * ts, ts + 1.0])

    def solve(y0, a, ts):
        return odeint(lotka_volterra, y0, ts, dict(LV_PARAMS, a=a))
    for axes in [(0, None, None), (None, 0, None), (0, 0, None), (0, 0, 0), (None, None, 0)]:
        got = ft.vmap(solve, in_axes=axes)(
            *(b if ax == 0 else b[0] for b, ax in zip((y0s, a_s, times), axes)))
        want = np.stack([solve(y0s[i] if axes[0] == 0 else y0s[0],
                               a_s[i] if axes[1] == 0 else a_s[0],
                               times[i] if axes[2] == 0 else times[0]) for i in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=str(axes))


def test_vmap_of_the_gradient_equals_a_loop():
    def loss(y0, a):
        return fnp.sum(odeint(lotka_volterra, y0, np.array([0.0, 1.0, 2.0]),
                              dict(LV_PARAMS, a=a)) ** 2)
    y0s, a_s = np.array([[10.0, 5.0], [4.0, 2.0]]), np.array([1.1, 0.8])
    got = ft.vmap(ft.grad(loss, (0, 1)))(y0s, a_s)
    want = [ft.grad(loss, (0, 1))(y, a) for y, a in zip(y0s, a_s)]
    np.testing.assert_allclose(got[0], np.stack([w[0] for w in want]), rtol=1e-10)
    np.testing.assert_allclose(got[1], np.stack([w[1] for w in want]), rtol=1e-10)


def test_jit_equals_eager_for_values_and_gradients():
    def loss(y0, params, ts):
        return fnp.sum(odeint(lotka_volterra, y0, ts, params)[:, 0])
    ts = np.array([0.0, 1.0, 3.0])
    eager = odeint(lotka_volterra, LV_Y0, ts, LV_PARAMS)
    jitted = ft.jit(lambda y0, p, ts: odeint(lotka_volterra, y0, ts, p))(LV_Y0, LV_PARAMS, ts)
    np.testing.assert_allclose(jitted, eager, rtol=1e-14)
    g_eager = ft.grad(loss, (0, 2))(LV_Y0, LV_PARAMS, ts)
    g_jit = ft.jit(ft.grad(loss, (0, 2)))(LV_Y0, LV_PARAMS, ts)
    for got, want in zip(g_jit, g_eager):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_under_jit_decreasing_times_give_nan_not_a_wrong_value():
    out = ft.jit(lambda ts: odeint(decay, 1.0, ts, 0.5))(np.array([0.0, 2.0, 1.0]))
    assert np.isnan(out[2]) and np.isfinite(out[:2]).all()


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call,error,message", [
    (lambda: odeint(decay, 1.0, np.ones((2, 2)), 0.5), ValueError,
     r"odeint: t must be a non-empty 1-d array of output times, got shape \(2, 2\)"),
    (lambda: odeint(decay, 1.0, np.array(1.0), 0.5), ValueError, r"got shape \(\)"),
    (lambda: odeint(decay, 1.0, np.zeros(0), 0.5), ValueError, r"got shape \(0,\)"),
    (lambda: odeint(decay, 1.0, np.arange(3), 0.5), TypeError,
     "odeint: t must be an array of floats, got dtype int64"),
    (lambda: odeint(decay, 1.0, np.array([0.0, 2.0, 1.0]), 0.5), ValueError,
     "odeint: the output times t must be increasing"),
    (lambda: odeint(decay, np.array([1, 2]), TS, 0.5), TypeError,
     r"odeint: y0 must hold floating-point or complex arrays, got a leaf of dtype "
     r"int64 and shape \(2,\)"),
    (lambda: odeint(decay, 1.0, TS, "fast"), TypeError,
     "odeint: the contents of \\*args must be arrays or scalars, got str 'fast'"),
    (lambda: odeint(lambda y, t: fnp.ones(3), np.ones(2), TS), TypeError,
     r"odeint: func\(y, t, \*args\) must return the structure and shapes of y0"),
])
def test_bad_input_names_odeint_and_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_lists_of_times_are_accepted():
    np.testing.assert_allclose(odeint(decay, 1.0, [0.0, 1.0], 0.5)[-1], np.exp(-0.5),
                               rtol=1e-7)


def test_device_arrays_stay_on_the_device():
    import cupy_standin as standin
    ts, y0, k = np.array([0.0, 0.5, 1.5]), np.array([1.0, 2.0]), np.array([0.5, 1.5])

    def loss(y0, k, ts):
        return fnp.sum(odeint(forced, y0, ts, k) ** 2)
    device = [standin.asarray(x) for x in (y0, k, ts)]
    with standin.transfers() as moved:
        out = odeint(forced, device[0], device[2], device[1])
        grads = ft.grad(loss, (0, 1, 2))(*device)
    assert moved.h2d == 0   # only the while loops' conditions are read back
    np.testing.assert_array_equal(standin.asnumpy(out), odeint(forced, y0, ts, k))
    for got, want in zip(grads, ft.grad(loss, (0, 1, 2))(y0, k, ts)):
        np.testing.assert_array_equal(standin.asnumpy(got), want)


def test_the_sweep_case_matches_its_closed_form():
    from cases_ode import PRIMITIVE_CASES
    from sweep import case_rng
    for case in PRIMITIVE_CASES:
        args = case.draw(case_rng(case, 0))
        np.testing.assert_allclose(case(*args), case.reference(*args), rtol=1e-7, atol=1e-8)
