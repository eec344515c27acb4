"""``functrans.scipy.optimize``: ``minimize`` with JAX's methods, BFGS and L-BFGS.

The gradients come from ``functrans.grad``; the iterations and the line search (strong
Wolfe conditions, with a zoom by cubic or quadratic interpolation) are
``lax.while_loop``s, so ``minimize`` runs under ``jit`` and ``vmap`` (a batch runs until its
last member stops; the others keep their result).  As in JAX, ``minimize`` itself is not
differentiable (reverse mode refuses its loops).

>>> import numpy as np
>>> from functrans.scipy.optimize import minimize
>>> result = minimize(lambda x: ((x - 3.0) ** 2).sum(), np.zeros(2), method="BFGS")
>>> np.allclose(result.x, 3.0), bool(result.success), int(result.status)
(True, True, 0)
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.api import eval_shape, value_and_grad
from functrans.core import get_aval

__all__ = ["OptimizeResults", "minimize"]


def __dir__() -> list:
    return sorted(__all__)


class OptimizeResults(NamedTuple):
    """What ``minimize`` returns (JAX's fields).

    ``x``: the solution; ``success``: whether it converged; ``status``: 0 converged,
    1 maximum iterations reached; BFGS: 3 the line search's zoom failed, 5 the line search
    reached its maximum iterations; L-BFGS: 2 maximum function evaluations, 3 maximum
    gradient evaluations, 4 the decrease of ``fun`` fell below ``ftol``, 5 the line search
    failed; -1 undefined.  ``fun`` and ``jac``: the value and gradient at ``x``;
    ``hess_inv``: BFGS's estimate of the inverse Hessian (None for L-BFGS); ``nfev``,
    ``njev``: the numbers of evaluations of ``fun`` and of its gradient; ``nit``: the
    number of iterations.

    >>> import numpy as np
    >>> from functrans.scipy.optimize import minimize
    >>> r = minimize(lambda x: (x ** 2).sum(), np.ones(3), method="BFGS")
    >>> r._fields[:4]
    ('x', 'success', 'status', 'fun')
    """
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


# ------------------------------------------------------------------------------------------
# Line search: the strong Wolfe conditions (Nocedal & Wright, algorithms 3.5 and 3.6)
# ------------------------------------------------------------------------------------------


class _LineSearchResult(NamedTuple):
    failed: Any
    nfev: Any
    step: Any
    f: Any
    g: Any
    status: Any  # 0 found, 1 the zoom failed, 3 too many bracketing steps


class _Search(NamedTuple):
    zooming: Any   # False while bracketing, True once [lo, hi] brackets a good step
    done: Any
    failed: Any
    status: Any
    bracket_steps: Any
    zoom_steps: Any
    nfev: Any
    a_next: Any    # the next trial step while bracketing
    prev: tuple    # the previous trial while bracketing: (a, f, f', gradient)
    lo: tuple      # the zoom interval's end with sufficient decrease and the lowest f
    hi: tuple      # its other end
    old: tuple     # (a, f) of the end dropped last: a third point for the cubic
    star: tuple    # the result: (a, f, f', gradient)


def _pick(cond, new: tuple, old: tuple) -> tuple:
    return tuple(fnp.where(cond, n, o) for n, o in zip(new, old))


def _cubic_minimizer(a, fa, da, b, fb, c, fc):
    """The minimizer of the cubic through ``(a, fa)`` with slope ``da``, ``(b, fb)`` and
    ``(c, fc)`` (NaN where there is none)."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - da * db, fc - fa - da * dc
    denominator = (db * dc) ** 2 * (db - dc)
    denominator = fnp.where(denominator == 0, fnp.nan, denominator)
    p = (dc ** 2 * rb - db ** 2 * rc) / denominator
    q = (-dc ** 3 * rb + db ** 3 * rc) / denominator
    radical = q * q - 3 * p * da
    safe_p = fnp.where(p == 0, fnp.nan, p)
    return a + (-q + fnp.sqrt(fnp.where(radical < 0, fnp.nan, radical))) / (3 * safe_p)


def _quadratic_minimizer(a, fa, da, b, fb):
    """The minimizer of the parabola through ``(a, fa)`` with slope ``da`` and ``(b, fb)``."""
    db = b - a
    curvature = (fb - fa - da * db) / fnp.where(db == 0, fnp.nan, db * db)
    return a - da / fnp.where(curvature == 0, fnp.nan, 2 * curvature)


def _line_search(value_and_gradient: Callable, x, p, f0, g0, f_before=None, c1=1e-4,
                 c2=0.9, maxiter=20, max_zoom=30) -> _LineSearchResult:
    """A step ``a`` along the descent direction ``p`` satisfying the strong Wolfe
    conditions ``f(x + a p) <= f0 + c1 a f0'`` and ``|f'(x + a p)| <= c2 |f0'|``.

    Bracketing doubles the step until the interval ``[lo, hi]`` must hold such a step,
    then the zoom narrows it, trying the minimizer of a cubic (through lo, hi and the point
    dropped last), of a parabola, or the midpoint, whichever falls well inside.  One
    evaluation of ``value_and_gradient`` per iteration of a single loop.  ``f_before``
    (the previous iterate's value) sets the first trial step, as in SciPy.
    """
    dtype = get_aval(x).dtype
    tiny = 1e-10 if np.finfo(dtype).bits >= 64 else 1e-5
    d0 = fnp.real(fnp.vdot(g0, p))
    zero = fnp.zeros_like(d0)
    one = zero + 1
    if f_before is None:
        first = one
    else:
        guess = 1.01 * 2 * (f0 - f_before) / fnp.where(d0 == 0, -1, d0)
        first = fnp.where((guess > 0) & (guess < 1) & fnp.isfinite(guess), guess, one)

    def evaluate(a):
        f, g = value_and_gradient(x + a.astype(dtype) * p)
        return f.astype(d0.dtype), fnp.real(fnp.vdot(g, p)), g

    def trial_step(s: _Search):
        low, high = fnp.minimum(s.lo[0], s.hi[0]), fnp.maximum(s.lo[0], s.hi[0])
        width = high - low
        (a_lo, f_lo, d_lo, _), (a_hi, f_hi, _, _) = s.lo, s.hi
        cubic = _cubic_minimizer(a_lo, f_lo, d_lo, a_hi, f_hi, *s.old)
        quadratic = _quadratic_minimizer(a_lo, f_lo, d_lo, a_hi, f_hi)
        use_cubic = (s.zoom_steps > 0) & (cubic > low + 0.2 * width) & (
            cubic < high - 0.2 * width)
        use_quadratic = (quadratic > low + 0.1 * width) & (quadratic < high - 0.1 * width)
        zoom_trial = fnp.where(use_cubic, cubic, fnp.where(use_quadratic, quadratic,
                                                           (a_lo + a_hi) / 2))
        return fnp.where(s.zooming, zoom_trial, s.a_next), width

    def go_on(s: _Search):
        return ~s.done & ~s.failed

    def step(s: _Search):
        a, width = trial_step(s)
        f, d, g = evaluate(a)
        point = (a, f, d, g)
        sufficient = f <= f0 + c1 * a * d0
        curvature = fnp.abs(d) <= -c2 * d0
        zooming = s.zooming
        # bracketing: the interval is found when the trial is worse than the previous one
        # (it is [prev, a]) or the slope turned positive (it is [a, prev])
        worse = ~sufficient | ((f >= s.prev[1]) & (s.bracket_steps > 0))
        rising = ~worse & ~curvature & (d >= 0)
        double = ~worse & ~curvature & ~rising
        b_lo = _pick(worse, s.prev, _pick(rising, point, s.lo))
        b_hi = _pick(worse, point, _pick(rising, s.prev, s.hi))
        # zooming: a replaces hi, or replaces lo (the old lo becoming hi if the slope at a
        # points back past lo)
        to_hi = ~sufficient | (f >= s.lo[1])
        to_lo = ~to_hi & ~curvature
        flip = to_lo & (d * (s.hi[0] - s.lo[0]) >= 0)
        z_lo = _pick(to_lo, point, s.lo)
        z_hi = _pick(to_hi, point, _pick(flip, s.lo, s.hi))
        z_old = _pick(to_hi | flip, s.hi[:2], _pick(to_lo, s.lo[:2], s.old))
        lo = _pick(zooming, z_lo, b_lo)
        hi = _pick(zooming, z_hi, b_hi)
        old = _pick(zooming, z_old, hi[:2])
        found = curvature & fnp.where(zooming, ~to_hi, ~worse)
        bracket_steps = s.bracket_steps + fnp.where(zooming, 0, 1)
        zoom_steps = s.zoom_steps + fnp.where(zooming, 1, 0)
        too_many = ~zooming & double & (bracket_steps >= maxiter)
        stuck = zooming & ~found & ((width <= tiny) | (zoom_steps >= max_zoom))
        failed = too_many | stuck
        # a failed search returns the lowest point known to decrease f enough (lo)
        fallback = _pick(zooming, s.lo, (zero, f0, d0, g0))
        star = _pick(found, point, _pick(failed, fallback, s.star))
        return _Search(
            zooming=zooming | worse | rising, done=found, failed=failed,
            status=fnp.where(too_many, 3, fnp.where(stuck, 1, 0)),
            bracket_steps=bracket_steps, zoom_steps=zoom_steps, nfev=s.nfev + 1,
            a_next=fnp.where(~zooming & double, 2 * a, s.a_next),
            prev=_pick(~zooming & double, point, s.prev), lo=lo, hi=hi, old=old, star=star)

    start = (zero, f0, d0, g0)
    init = _Search(
        zooming=fnp.asarray(False), done=fnp.asarray(False), failed=fnp.asarray(False),
        status=fnp.asarray(0), bracket_steps=fnp.asarray(0), zoom_steps=fnp.asarray(0),
        nfev=fnp.asarray(0), a_next=first, prev=start, lo=start, hi=start,
        old=(zero, f0), star=start)
    s = lax.while_loop(go_on, step, init)
    a_star, f_star, _, g_star = s.star
    return _LineSearchResult(failed=s.failed, nfev=s.nfev, step=a_star.astype(dtype),
                             f=f_star, g=g_star, status=s.status)


# ------------------------------------------------------------------------------------------
# BFGS and L-BFGS
# ------------------------------------------------------------------------------------------


def _norm(g, order):
    return fnp.linalg.norm(g, ord=order)


class _BFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    h: Any
    f_before: Any
    ls_status: Any


def _bfgs(fun: Callable, x0, maxiter: int | None = None, norm=np.inf, gtol: float = 1e-5,
          line_search_maxiter: int = 10) -> OptimizeResults:
    n = get_aval(x0).shape[0]
    maxiter = 200 * n if maxiter is None else maxiter
    value_and_gradient = value_and_grad(fun)
    f0, g0 = value_and_gradient(x0)
    state = _BFGSState(
        converged=_norm(g0, norm) < gtol, failed=fnp.asarray(False), k=fnp.asarray(0),
        nfev=fnp.asarray(1), x=x0, f=f0, g=g0,
        h=fnp.eye(n, dtype=get_aval(x0).dtype, like=x0),
        f_before=f0 + fnp.linalg.norm(g0) / 2, ls_status=fnp.asarray(0))

    def go_on(s: _BFGSState):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s: _BFGSState):
        p = -(s.h @ s.g)
        ls = _line_search(value_and_gradient, s.x, p, s.f, s.g, s.f_before,
                          maxiter=line_search_maxiter)
        dx = ls.step * p
        dg = ls.g - s.g
        curvature = fnp.vdot(dg, dx)
        rho = 1 / fnp.where(curvature == 0, fnp.nan, curvature)
        # H ← (I - ρ s yᵀ) H (I - ρ y sᵀ) + ρ s sᵀ, written with one matrix-vector product
        hy = s.h @ dg
        h = (s.h - rho * (fnp.outer(dx, hy) + fnp.outer(hy, dx))
             + (rho * rho * fnp.vdot(dg, hy) + rho) * fnp.outer(dx, dx))
        h = fnp.where(fnp.isfinite(rho), h, s.h)
        return _BFGSState(converged=_norm(ls.g, norm) < gtol, failed=ls.failed, k=s.k + 1,
                          nfev=s.nfev + ls.nfev, x=s.x + dx, f=ls.f, g=ls.g, h=h,
                          f_before=s.f, ls_status=ls.status)

    s = lax.while_loop(go_on, step, state)
    status = fnp.where(s.converged, 0, fnp.where(s.k >= maxiter, 1, fnp.where(
        s.failed, 2 + s.ls_status, -1)))
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=status, fun=s.f,
                           jac=s.g, hess_inv=s.h, nfev=s.nfev, njev=s.nfev, nit=s.k)


class _LBFGSState(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    s_history: Any   # row k % maxcor holds step k (a ring buffer; unused rows are zero)
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any


def _two_loop(s: _LBFGSState, maxcor: int):
    """``-H g`` for L-BFGS's implicit inverse Hessian (Nocedal & Wright, algorithm 7.4).
    Unused history rows are zero, so they change nothing."""
    newest = s.k - 1

    def backward(j, carry):
        q, alphas = carry
        i = (newest - j) % maxcor
        alpha = s.rho_history[i] * fnp.vdot(s.s_history[i], q)
        return q - alpha * s.y_history[i], alphas.at[i].set(alpha)

    q, alphas = lax.fori_loop(0, maxcor, backward, (-s.g, fnp.zeros_like(s.rho_history)))
    r = s.gamma * q

    def forward(j, r):
        i = (newest - (maxcor - 1) + j) % maxcor
        beta = s.rho_history[i] * fnp.vdot(s.y_history[i], r)
        return r + (alphas[i] - beta) * s.s_history[i]

    return lax.fori_loop(0, maxcor, forward, r)


def _lbfgs(fun: Callable, x0, maxiter: int | None = None, norm=np.inf, maxcor: int = 10,
           ftol: float = 2.220446049250313e-09, gtol: float = 1e-5,
           maxfun: int | None = None, maxgrad: int | None = None,
           maxls: int = 20) -> OptimizeResults:
    n = get_aval(x0).shape[0]
    dtype = get_aval(x0).dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = 200 * n
    # a missing limit never stops the loop
    iter_limit = np.inf if maxiter is None else maxiter
    fun_limit = np.inf if maxfun is None else maxfun
    grad_limit = np.inf if maxgrad is None else maxgrad
    value_and_gradient = value_and_grad(fun)
    f0, g0 = value_and_gradient(x0)
    state = _LBFGSState(
        converged=_norm(g0, norm) < gtol, failed=fnp.asarray(False), k=fnp.asarray(0),
        nfev=fnp.asarray(1), x=x0, f=f0, g=g0,
        s_history=fnp.zeros((maxcor, n), dtype, like=x0),
        y_history=fnp.zeros((maxcor, n), dtype, like=x0),
        rho_history=fnp.zeros((maxcor,), dtype, like=x0),
        gamma=fnp.ones_like(f0), status=fnp.asarray(0))

    def go_on(s: _LBFGSState):
        return ~s.converged & ~s.failed

    def step(s: _LBFGSState):
        p = _two_loop(s, maxcor)
        ls = _line_search(value_and_gradient, s.x, p, s.f, s.g, maxiter=maxls)
        dx = ls.step * p
        dg = ls.g - s.g
        curvature = fnp.vdot(dg, dx)
        rho = 1 / fnp.where(curvature == 0, fnp.nan, curvature)
        gamma = curvature / fnp.vdot(dg, dg)
        # a step without positive curvature would break the two-loop recursion: dropped
        keep = fnp.isfinite(rho) & (curvature > 0)
        slot = s.k % maxcor
        k = s.k + 1
        nfev = s.nfev + ls.nfev
        status = fnp.where(s.f - ls.f < ftol, 4, 0)
        status = fnp.where(nfev >= grad_limit, 3, status)
        status = fnp.where(nfev >= fun_limit, 2, status)
        status = fnp.where(k >= iter_limit, 1, status)
        status = fnp.where(ls.failed, 5, status)
        converged = _norm(ls.g, norm) < gtol
        return _LBFGSState(
            converged=converged, failed=(status > 0) & ~converged, k=k, nfev=nfev,
            x=s.x + dx, f=ls.f, g=ls.g,
            s_history=fnp.where(keep, s.s_history.at[slot].set(dx), s.s_history),
            y_history=fnp.where(keep, s.y_history.at[slot].set(dg), s.y_history),
            rho_history=fnp.where(keep, s.rho_history.at[slot].set(rho), s.rho_history),
            gamma=fnp.where(keep, gamma, s.gamma), status=fnp.where(converged, 0, status))

    s = lax.while_loop(go_on, step, state)
    return OptimizeResults(x=s.x, success=s.converged & ~s.failed, status=s.status, fun=s.f,
                           jac=s.g, hess_inv=None, nfev=s.nfev, njev=s.nfev, nit=s.k)


_METHODS: dict[str, Callable[..., OptimizeResults]] = {
    "bfgs": _bfgs, "l-bfgs-experimental-do-not-rely-on-this": _lbfgs}


def minimize(fun: Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimize ``fun(x, *args)`` (a real scalar) over a real 1-D ``x0``, as JAX's
    ``jax.scipy.optimize.minimize``.

    ``method`` (required, any case): ``"BFGS"``, or ``"l-bfgs-experimental-do-not-rely-on-this"``
    (JAX's name for its L-BFGS; JAX has no ``"L-BFGS-B"``).  ``options``: BFGS takes
    ``maxiter`` (default 200 × size), ``norm`` (of the gradient in the convergence test,
    default ``inf``), ``gtol`` (default 1e-5) and ``line_search_maxiter`` (10); L-BFGS
    ``maxiter``, ``norm``, ``maxcor`` (history size, 10), ``ftol``, ``gtol``, ``maxfun``,
    ``maxgrad`` and ``maxls`` (20).  ``tol``, where given, is ``gtol`` unless ``options``
    sets it (SciPy's meaning; JAX ignores ``tol``).

    >>> import numpy as np
    >>> from functrans.scipy.optimize import minimize
    >>> rosen = lambda x: ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()
    >>> r = minimize(rosen, np.zeros(3), method="BFGS", options={"gtol": 1e-8})
    >>> np.allclose(r.x, 1.0, atol=1e-6), bool(r.success)
    (True, True)
    """
    if not isinstance(method, str) or method.lower() not in _METHODS:
        raise ValueError(f"minimize: method {method!r} not recognized; functrans (like JAX) "
                         f"has 'BFGS' and 'l-bfgs-experimental-do-not-rely-on-this'")
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, got {type(args).__name__}")
    options = dict(options or {})
    if tol is not None:
        options.setdefault("gtol", tol)
    x0 = fnp.asarray(x0)
    aval = get_aval(x0)
    if aval.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {aval.shape}; ravel "
                         "the parameters (and reshape them inside fun)")
    if aval.dtype.kind == "c":
        raise TypeError("minimize: x0 must be real; minimize over the real and imaginary "
                        "parts instead")
    if aval.dtype.kind != "f":
        x0 = x0.astype(np.float64)
    value = eval_shape(lambda x: fun(x, *args), x0)
    if getattr(value, "shape", None) != () or np.dtype(value.dtype).kind not in "fiub":
        raise TypeError(f"minimize: fun must return a real scalar, got "
                        f"{getattr(value, 'dtype', type(value).__name__)}"
                        f"{list(getattr(value, 'shape', []))}")
    solver = _METHODS[method.lower()]
    known = list(inspect.signature(solver).parameters)[2:]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"minimize: method {method!r} has no options {unknown}; its options "
                        f"are {known}")
    return solver(lambda x: fun(x, *args), x0, **options)
