"""Adaptive Runge–Kutta integration of ordinary differential equations: the Dormand–Prince
5(4) pair with error-controlled steps and dense output, and ``odeint`` built on it (public
as ``functrans.experimental.ode.odeint``, JAX's ``jax.experimental.ode.odeint``).

The pieces work on one flat state vector ``y`` (a pytree is raveled first) and are written
with ``functrans.numpy`` and ``functrans.lax`` control flow, so an integration runs under
``jit`` and ``vmap``:

* ``dormand_prince_step(fun, y, f, t, h)``: one step of size ``h`` from ``(t, y)``, where
  ``f = fun(y, t)`` (the pair's first-same-as-last stage); returns the new state, its
  derivative, the local error estimate and the dense-output coefficients of the step.
* ``error_ratio`` and ``next_step_size``: the error norm relative to the tolerances, and the
  step size it asks for.
* ``initial_step_size``: the first step, from the size of the state and of its first two
  derivatives (Hairer, Nørsett & Wanner, *Solving ODEs I*, section II.4).
* ``dense_output(coefficients, theta)``: the solution at the fraction ``theta`` of a step.

``odeint``'s reverse mode is the adjoint method: its ``custom_vjp`` rule integrates the
adjoint system backward between the output times (see docs/solvers.md).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import functrans.numpy as fnp
from functrans import backend, lax
from functrans.api import vjp, vmap
from functrans.core import Tracer, eval_jaxpr, get_aval, is_inexact
from functrans.custom_derivatives import custom_vjp
from functrans.flatten_util import ravel_pytree
from functrans.jaxpr_transforms import trace_function
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["dormand_prince_step", "error_ratio", "next_step_size", "initial_step_size",
           "dense_output", "odeint"]

# ------------------------------------------------------------------------------------------
# The Dormand–Prince 5(4) pair (Dormand & Prince 1980), with Shampine's (1986) fourth-order
# continuous extension for output between steps
# ------------------------------------------------------------------------------------------

#: the stages' times, as fractions of the step
_NODES = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
#: each stage's combination of the earlier stages' derivatives
_STAGE_WEIGHTS = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
#: the fifth-order solution's weights (the seventh stage, at the new point, has weight 0)
_SOLUTION_WEIGHTS = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
#: the fifth-order minus the embedded fourth-order weights: the local error estimate
_ERROR_WEIGHTS = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525,
                  -1 / 40)
#: ``y(t + θh) = y + h Σ_j k_j Σ_m P[j][m] θ^(m+1)``: row j weighs stage j's derivative
_DENSE = (
    (1.0, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432),
    (0.0, 0.0, 0.0, 0.0),
    (0.0, 131558114200 / 32700410799, -68118460800 / 10900136933,
     87487479700 / 32700410799),
    (0.0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072),
    (0.0, 127303824393 / 49829197408, -318862633887 / 49829197408,
     701980252875 / 199316789632),
    (0.0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844),
    (0.0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423),
)
_ORDER = 5  # of the solution; the error estimate is of order 4


def _combine(weights, ks):
    """``Σ w_j k_j`` over the non-zero weights (Python constants)."""
    terms = [w * k for w, k in zip(weights, ks) if w != 0.0]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def dormand_prince_step(fun: Callable, y, f, t, h):
    """One Dormand–Prince step of size ``h`` for ``y' = fun(y, t)`` from ``(t, y)``, given
    ``f = fun(y, t)``.  Returns ``(y_new, f_new, error, coefficients)``: the fifth-order
    solution at ``t + h``, ``fun`` there, the local error estimate (fourth order), and the
    five vectors, stacked, that ``dense_output`` evaluates within the step.

    >>> import numpy as np
    >>> y1, f1, err, _ = dormand_prince_step(lambda y, t: -y, np.ones(1), -np.ones(1),
    ...                                      0.0, 0.1)
    >>> np.allclose(y1, np.exp(-0.1), rtol=1e-8, atol=0), bool(abs(err[0]) < 1e-7)
    (True, True)
    """
    h_y = fnp.asarray(h).astype(fnp.real(y).dtype)
    ks = [f]
    for node, weights in zip(_NODES[1:], _STAGE_WEIGHTS[1:]):
        ks.append(fun(y + h_y * _combine(weights, ks), t + node * h))
    y_new = y + h_y * _combine(_SOLUTION_WEIGHTS[:6], ks)
    f_new = fun(y_new, t + h)
    ks.append(f_new)
    error = h_y * _combine(_ERROR_WEIGHTS, ks)
    coefficients = fnp.stack([y] + [h_y * _combine([row[m] for row in _DENSE], ks)
                                    for m in range(4)])
    return y_new, f_new, error, coefficients


def dense_output(coefficients, theta):
    """The solution at the fraction ``theta`` (0 to 1) of a step, from the step's
    ``coefficients`` (``dormand_prince_step``'s last result): a quartic in ``theta``.

    >>> import numpy as np
    >>> _, _, _, c = dormand_prince_step(lambda y, t: -y, np.ones(1), -np.ones(1), 0.0, 0.1)
    >>> np.allclose(dense_output(c, 0.5), np.exp(-0.05), rtol=1e-8, atol=0)
    True
    """
    theta = fnp.asarray(theta).astype(fnp.real(coefficients).dtype)
    total = coefficients[4]
    for m in (3, 2, 1):
        total = total * theta + coefficients[m]
    return coefficients[0] + total * theta


def error_ratio(error, y, y_new, rtol, atol):
    """The root-mean-square of ``error`` measured in units of ``atol + rtol * |y|`` (the
    larger ``|y|`` of the step's two ends): a step is accepted when this is at most 1.

    >>> import numpy as np
    >>> float(error_ratio(np.array([1e-6]), np.ones(1), np.ones(1), 1e-6, 0.0))
    1.0
    """
    scale = atol + rtol * fnp.maximum(fnp.abs(y), fnp.abs(y_new))
    return fnp.sqrt(fnp.mean(fnp.abs(error / scale) ** 2))


def next_step_size(h, ratio, hmax=np.inf):
    """The step size that an ``error_ratio`` of ``ratio`` asks for after a step of size
    ``h``: ``h`` times ``0.9 ratio^(-1/5)``, kept between 0.2 and 10 times ``h`` (10 times
    for an error of zero), and at most ``hmax``.

    >>> round(float(next_step_size(0.1, 1.0)), 12)
    0.09
    """
    safe = fnp.where(ratio > 0, ratio, 1.0)
    factor = fnp.clip(0.9 * safe ** (-1.0 / _ORDER), 0.2, 10.0)
    factor = fnp.where(ratio > 0, factor, 10.0)
    return fnp.clip(h * factor.astype(fnp.asarray(h).dtype), 0.0, hmax)


def _rms(x):
    return fnp.sqrt(fnp.mean(fnp.abs(x) ** 2))


def initial_step_size(fun: Callable, y0, f0, t0, rtol, atol):
    """A first step for ``y' = fun(y, t)`` from ``(t0, y0)`` (``f0 = fun(y0, t0)``): the
    step over which the state would change by about 1% of its size, corrected by an
    estimate of the second derivative (one more evaluation of ``fun``).

    >>> import numpy as np
    >>> h = initial_step_size(lambda y, t: -y, np.ones(2), -np.ones(2), 0.0, 1e-6, 1e-6)
    >>> bool(0 < h < 0.1)
    True
    """
    t0 = fnp.asarray(t0)
    real = fnp.real(y0).dtype
    scale = atol + rtol * fnp.abs(y0)
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    tiny = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = fnp.where(tiny, 1e-6, 0.01 * d0 / fnp.where(tiny, 1.0, d1)).astype(t0.dtype)
    f1 = fun(y0 + h0.astype(real) * f0, t0 + h0)
    d2 = (_rms((f1 - f0) / scale) / h0).astype(t0.dtype)
    d1 = d1.astype(t0.dtype)
    flat = (d1 <= 1e-15) & (d2 <= 1e-15)
    biggest = fnp.where(flat, 1.0, fnp.maximum(d1, d2))
    h1 = fnp.where(flat, fnp.maximum(1e-6, h0 * 1e-3), (0.01 / biggest) ** (1.0 / _ORDER))
    return fnp.minimum(100 * h0, h1)


# ------------------------------------------------------------------------------------------
# odeint: the integration between output times, and its adjoint
# ------------------------------------------------------------------------------------------


def _integrate(fun, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution of ``y' = fun(y, t, *args)`` (``y`` a flat vector) at each of ``ts``,
    stacked: a scan over the output times whose body steps (a while loop) until the
    integration has passed the next output time, then interpolates there."""
    def rhs(y, t):
        return fun(y, t, *args)

    f0 = rhs(y0, ts[0])
    h0 = fnp.clip(initial_step_size(rhs, y0, f0, ts[0], rtol, atol), 0.0, hmax)
    nan = fnp.full_like(y0, np.nan)

    def to_next_output(carry, target):
        def going(state):
            count, _, _, t, h, _, _ = state
            more = (t < target) & (h > 0)
            return more if mxstep == np.inf else more & (count < mxstep)

        def step(state):
            count, y, f, t, h, last_t, coefficients = state
            y_new, f_new, error, new_coefficients = dormand_prince_step(rhs, y, f, t, h)
            ratio = error_ratio(error, y, y_new, rtol, atol)
            accept = ratio <= 1.0
            h_next = next_step_size(h, ratio, hmax)
            return (count + 1, fnp.where(accept, y_new, y), fnp.where(accept, f_new, f),
                    fnp.where(accept, t + h, t), h_next, fnp.where(accept, t, last_t),
                    fnp.where(accept, new_coefficients, coefficients))

        y, f, t, h, last_t, coefficients, last_target = carry
        # the step count starts on target's device (a Python 0 would be a host array
        # once vmap batches it)
        count = fnp.zeros_like(target, dtype=np.int32)
        _, y, f, t, h, last_t, coefficients = lax.while_loop(
            going, step, (count, y, f, t, h, last_t, coefficients))
        stepped = t > last_t
        theta = fnp.where(stepped, (target - last_t) / fnp.where(stepped, t - last_t, 1.0),
                          0.0)
        # an output time the integration did not reach (mxstep), or one before the last
        # (t not increasing), has no solution
        valid = (t >= target) & (target >= last_target)
        y_out = fnp.where(valid, dense_output(coefficients, theta), nan)
        return (y, f, t, h, last_t, coefficients, target), y_out

    start = fnp.stack([y0] + [fnp.zeros_like(y0)] * 4)
    carry = (y0, f0, ts[0], h0, ts[0], start, ts[0])
    _, ys = lax.scan(to_next_output, carry, ts[1:])
    return fnp.concatenate([y0[None], ys])


def _integrate_fwd(fun, rtol, atol, mxstep, hmax, y0, ts, *args):
    # the solution by the differentiable call, so that derivatives of the adjoint (second
    # order) can go through it
    ys = _integrate_with_adjoint(fun, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _integrate_bwd(fun, rtol, atol, mxstep, hmax, residuals, g):
    """The adjoint method.  With ``a(t)`` the cotangent of the state at time ``t``, from
    the last output time back to the first: ``a`` jumps by the output's cotangent at each
    output time, and between them solves ``a' = -aᵀ ∂f/∂y`` while the arguments' cotangent
    gathers ``∫ aᵀ ∂f/∂args dt``; the state is integrated backward alongside, from the
    stored solution.  Output time ``t_i`` (i > 0) moves its output by ``f(y_i, t_i)``, and
    the first time moves every later output by ``-Φ f(y_0, t_0)``."""
    ys, ts, args = residuals
    arg_leaves, arg_tree = tree_flatten(args)
    live = [is_inexact(get_aval(x).dtype) for x in arg_leaves]
    params = [x for x, keep in zip(arg_leaves, live) if keep]
    frozen = [x for x, keep in zip(arg_leaves, live) if not keep]

    def with_params(p):
        p, fr = iter(p), iter(frozen)
        return tree_unflatten(arg_tree, [next(p) if keep else next(fr) for keep in live])

    def rhs(y, t, p):
        return fun(y, t, *with_params(p))

    def backward(state, s, *p):
        # s = -t: integrating forward in s runs backward in time
        y, a, _ = state
        y_dot, pullback = vjp(lambda y, p: rhs(y, -s, list(p)), y, tuple(p))
        a_dot, p_dot = pullback(a)
        return -y_dot, a_dot, list(p_dot)

    def time_cotangent(y, t, g):
        return fnp.real(fnp.sum(rhs(y, t, params) * g))

    def interval(carry, pieces):
        # from the later output time back to the earlier one
        a, p_bar = carry
        y, g_out, t_out, t_before = pieces
        a = a + g_out
        span = fnp.stack([-t_out, -t_before])
        _, a, p_bar = odeint(backward, (y, a, p_bar), span, *params, rtol=rtol,
                             atol=atol, mxstep=mxstep, hmax=hmax)
        return (a[1], [q[1] for q in p_bar]), time_cotangent(y, t_out, g_out)

    init = (fnp.zeros_like(g[0]), [fnp.zeros_like(p) for p in params])
    (a, p_bar), t_bars = lax.scan(interval, init, (ys[1:], g[1:], ts[1:], ts[:-1]),
                                  reverse=True)
    t0_bar = -time_cotangent(ys[0], ts[0], a)
    ts_bar = fnp.concatenate([t0_bar[None], t_bars]).astype(ts.dtype)
    p_bar = iter(p_bar)
    args_bar = tree_unflatten(arg_tree, [next(p_bar) if keep else None for keep in live])
    return (a + g[0], ts_bar, *args_bar)


_integrate.__name__ = "odeint"  # names the function in the errors of custom_vjp
_integrate_with_adjoint = custom_vjp(_integrate, nondiff_argnums=(0, 1, 2, 3, 4))
_integrate_with_adjoint.defvjp(_integrate_fwd, _integrate_bwd)


def _check_inputs(func, y0, t, args) -> Any:
    for leaf in tree_flatten(args)[0]:
        try:
            get_aval(leaf)
        except TypeError:
            raise TypeError(f"odeint: the contents of *args must be arrays or scalars, got "
                            f"{type(leaf).__name__} {leaf!r}") from None
    if not isinstance(t, Tracer) and not backend.is_array(t):
        t = np.asarray(t)
    t_aval = get_aval(t)
    if t_aval.ndim != 1 or t_aval.shape[0] == 0:
        raise ValueError(f"odeint: t must be a non-empty 1-d array of output times, got "
                         f"shape {t_aval.shape}")
    if not np.issubdtype(t_aval.dtype, np.floating):
        raise TypeError(f"odeint: t must be an array of floats, got dtype {t_aval.dtype}")
    if not isinstance(t, Tracer) and bool(backend.array_module(t).any(t[1:] < t[:-1])):
        raise ValueError(f"odeint: the output times t must be increasing, got {t}")
    y_leaves, y_tree = tree_flatten(y0)
    for leaf in y_leaves:
        aval = get_aval(leaf)
        if not is_inexact(aval.dtype):
            raise TypeError(f"odeint: y0 must hold floating-point or complex arrays, got a "
                            f"leaf of dtype {aval.dtype} and shape {aval.shape} (convert it, "
                            f"e.g. with y0.astype(float))")
    return t


def _explicit_closure(func: Callable, y0, t0, args) -> tuple[Callable, list]:
    """``func`` traced once, with every tracer it closes over made an explicit argument:
    ``(converted, consts)`` with ``converted(y, t, *args, *consts) == func(y, t, *args)``.
    Unlike ``closure_convert``, integer tracers are hoisted too (they are not
    differentiated, but a ``vmap`` batches them, and the adjoint must not close over
    them).  Checks that ``func`` returns the structure and shapes of ``y0``."""
    leaves, in_tree = tree_flatten((y0, t0, *args))
    jaxpr, consts, out_tree = trace_function(func, in_tree, [get_aval(x) for x in leaves],
                                             "odeint")
    y_leaves, y_tree = tree_flatten(y0)
    out_shapes = [a.shape for a in jaxpr.out_avals]
    if out_tree != y_tree or out_shapes != [get_aval(y).shape for y in y_leaves]:
        raise TypeError(f"odeint: func(y, t, *args) must return the structure and shapes of "
                        f"y0: y0 is {y_tree} with shapes "
                        f"{[get_aval(y).shape for y in y_leaves]}, func returned {out_tree} "
                        f"with shapes {out_shapes}")
    hoisted = [isinstance(c, Tracer) for c in consts]
    kept = [None if h else c for c, h in zip(consts, hoisted)]
    n_hoisted = sum(hoisted)

    def converted(y, t, *args_and_consts):
        n_args = len(args_and_consts) - n_hoisted
        extra = iter(args_and_consts[n_args:])
        arg_leaves = tree_flatten((y, t, *args_and_consts[:n_args]))[0]
        all_consts = [next(extra) if h else c for c, h in zip(kept, hoisted)]
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *all_consts, *arg_leaves)
        return tree_unflatten(out_tree, outs)

    return converted, [c for c, h in zip(consts, hoisted) if h]


def odeint(func: Callable, y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)`` with ``y(t[0]) = y0`` at each of the
    times ``t``, by the adaptive Dormand–Prince 5(4) method (JAX's
    ``jax.experimental.ode.odeint``).

    ``y0`` is an array or a pytree of floating-point or complex arrays, and ``func`` returns
    the same structure; ``t`` is a 1-d array of increasing float times; ``args`` are arrays,
    scalars or pytrees of them.  Returns ``y0``'s structure with a leading axis of length
    ``len(t)``.  Each step's local error is kept below ``atol + rtol * |y|`` (root mean
    square over the state); ``mxstep`` bounds the steps (accepted or rejected) between two
    output times and ``hmax`` the step size.  Outputs between steps are interpolated with
    the method's fourth-order continuous extension.

    An output time that the integration did not reach within ``mxstep`` steps is NaN (JAX
    extrapolates the last step there instead).  Reverse mode (``grad``, ``vjp``) uses the
    adjoint method, with respect to ``y0``, ``t`` and the ``args`` (and whatever ``func``
    closes over); forward mode is an error, as in JAX.  Runs under ``jit`` and ``vmap``.

    >>> import numpy as np, functrans as ft
    >>> from functrans.experimental.ode import odeint
    >>> decay = lambda y, t, k: -k * y
    >>> ts = np.array([0.0, 1.0, 2.0])
    >>> np.allclose(odeint(decay, 1.0, ts, 0.5), np.exp(-0.5 * ts), rtol=1e-7)
    True
    >>> grad_k = ft.grad(lambda k: odeint(decay, 1.0, ts, k)[-1])(0.5)
    >>> np.allclose(grad_k, -2.0 * np.exp(-1.0), rtol=1e-6)
    True
    """
    t = _check_inputs(func, y0, t, args)
    converted, consts = _explicit_closure(func, y0, t[0], args)
    flat_y0, unravel = ravel_pytree(y0)
    dtype = get_aval(flat_y0).dtype

    def flat_func(y, t, *args):
        return ravel_pytree(converted(unravel(y), t, *args))[0].astype(dtype)

    ys = _integrate_with_adjoint(flat_func, rtol, atol, mxstep, hmax, flat_y0, t, *args,
                                 *consts)
    return vmap(unravel)(ys)
