"""Sweep case of functrans.experimental.ode.odeint, checked by tests/test_primitives.py
(abstract evaluation, float32, vmap against a loop along every axis choice) and on the
device stand-in.  It is marked not differentiable for the sweep only: odeint has reverse
mode alone (the adjoint, as in JAX), and the sweep's derivative checks begin with forward
mode; tests/test_ode.py checks its gradients (closed forms, a differentiated fixed-step
integration, finite differences, vmap of the gradient, second order)."""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.experimental.ode import odeint
from sweep import F32, F64, A, Case


def _forced_decay(y, t, rate):
    return -rate * y + fnp.sin(3.0 * t)


def _times(steps):
    """Increasing output times from positive draws, starting at 0."""
    return lax.cumsum(steps) - steps[0]


def _solve(y0, rate, steps):
    """A small non-autonomous linear system, one rate per component, at drawn times (so
    that vmap batches the output times too)."""
    return odeint(_forced_decay, y0, _times(steps), rate)


def _exact(y0, rate, steps):
    """y(t) = e^(-rt) y0 + ∫₀ᵗ e^(-r(t-s)) sin(3s) ds."""
    t = np.asarray(_times(steps))[:, None]
    forced = (rate * np.sin(3 * t) - 3 * np.cos(3 * t) + 3 * np.exp(-rate * t)) / (
        rate ** 2 + 9)
    return np.exp(-rate * t) * y0 + forced


PRIMITIVE_CASES = [
    Case("odeint", _solve, [A(3), A(3, kind="pos"), A(3, kind="pos")], differentiable=False,
         dtypes=(F64, F32), reference=_exact),
]
