"""Optional: functrans.experimental.ode.odeint against jax.experimental.ode.odeint on the
same problems (skipped when JAX is not installed; CI does not install it): solutions,
adjoint gradients with respect to y0, the times and pytree arguments, vmap, the refusal of
forward mode, and the one documented difference (mxstep)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.experimental.ode import odeint

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = pytest.importorskip("jax.numpy")
from jax.experimental.ode import odeint as jax_odeint  # noqa: E402

TIGHT = dict(rtol=1e-10, atol=1e-10)
TS = np.array([0.0, 0.5, 1.5, 3.0])


def lotka_volterra(m):
    def f(y, t, p):
        prey, predator = y["prey"], y["predator"]
        return {"prey": p["a"] * prey - p["b"] * prey * predator,
                "predator": p["c"] * prey * predator - p["d"] * predator + 0.1 * m.sin(t)}
    return f


Y0 = {"prey": np.array([10.0, 8.0]), "predator": np.array([5.0, 6.0])}
PARAMS = {"a": 1.1, "b": 0.4, "c": 0.1, "d": np.array([0.4, 0.5])}


def _close(got, want, rtol, atol=0.0):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


def test_solutions_agree():
    _close(odeint(lotka_volterra(fnp), Y0, TS, PARAMS, **TIGHT),
           jax_odeint(lotka_volterra(jnp), Y0, jnp.asarray(TS), PARAMS, **TIGHT), 1e-8)
    # the default tolerances: both within them of the solution, so of each other
    _close(odeint(lotka_volterra(fnp), Y0, TS, PARAMS),
           jax_odeint(lotka_volterra(jnp), Y0, jnp.asarray(TS), PARAMS), 1e-6)


def test_adjoint_gradients_agree():
    def loss(m, solve):
        def f(y0, ts, params):
            ys = solve(lotka_volterra(m), y0, ts, params, **TIGHT)
            return m.sum(ys["prey"] * m.cos(ts)[:, None]) + m.sum(ys["predator"][-1] ** 2)
        return f
    ours = ft.grad(loss(fnp, odeint), (0, 1, 2))(Y0, TS, PARAMS)
    theirs = jax.grad(loss(jnp, jax_odeint), (0, 1, 2))(Y0, jnp.asarray(TS), PARAMS)
    _close(ours, theirs, 1e-6, 1e-9)


def test_vmap_agrees():
    def decay(m):
        return lambda y, t, k: -k * y + m.cos(t)
    ks = np.array([0.3, 1.0, 2.5])
    ours = ft.vmap(lambda k: odeint(decay(fnp), np.ones(2), TS, k, **TIGHT))(ks)
    theirs = jax.vmap(lambda k: jax_odeint(decay(jnp), jnp.ones(2), jnp.asarray(TS), k,
                                           **TIGHT))(ks)
    _close(ours, theirs, 1e-8)


def test_both_refuse_forward_mode():
    with pytest.raises(TypeError, match="'odeint'"):
        ft.jvp(lambda y0: odeint(lambda y, t: -y, y0, TS), (1.0,), (1.0,))
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(lambda y0: jax_odeint(lambda y, t: -y, y0, jnp.asarray(TS)), (1.0,), (1.0,))


def test_both_refuse_integer_times():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(lambda y, t: -y, 1.0, np.arange(3))
    with pytest.raises(TypeError, match="t must be an array of floats"):
        jax_odeint(lambda y, t: -y, 1.0, jnp.arange(3))


def test_mxstep_where_they_differ():
    """Where the steps reach an output time both agree; where mxstep stops them first, JAX
    extrapolates the last step (a finite, wrong value) and functrans gives NaN."""
    ts = np.array([0.0, 0.5, 20.0, 40.0])
    ours = np.asarray(odeint(lambda y, t: -y, 1.0, ts, mxstep=30))
    theirs = np.asarray(jax_odeint(lambda y, t: -y, 1.0, jnp.asarray(ts), mxstep=30))
    np.testing.assert_allclose(ours[:2], theirs[:2], rtol=1e-7)
    assert np.isnan(ours[2]) and np.isfinite(theirs[2])
    assert abs(theirs[2] - np.exp(-20.0)) > 1e-3   # far from the solution, 2e-9
