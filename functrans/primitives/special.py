"""Special-function primitives: error functions, log-gamma and its derivatives, incomplete
gamma, exponentially scaled Bessel functions, Hurwitz zeta and the normal quantile.

The kernels are SciPy's (``scipy.special`` on NumPy arrays, ``cupyx.scipy.special`` on CuPy
arrays), found by ``backend.special_module`` when a primitive first runs, so functrans
imports without SciPy.  Every primitive is elementwise (unary) or broadcasting (binary), so
the factories of ``elementwise`` give it its type rule and batching rule; each JVP is written
with other primitives, so derivatives of any order follow.

Derivatives JAX does not define are refused with an error naming the argument: the order
``m`` of ``polygamma``, the exponent ``x`` of ``zeta``, the shapes of ``betainc``, the
order of ``bessel_jv``, second derivatives in the parameters of ``hyp1f1``/``hyp2f1``, and
third derivatives in the shape ``a`` of ``igamma``/``igammac`` and of a gamma sample (their
first and second derivatives in ``a``, ``igamma_grad_a``/``random_gamma_grad`` and
``igamma_second_grad_a``/``random_gamma_second_grad``, have their own kernels here, not
SciPy's).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from functrans.backend import array_module, coerce, special_module
from functrans.naming import public
from functrans.primitives.elementwise import (add, binary, div, eq, exp, log, log1p, mul,
                                              nary, neg, select, sign, sub, unary)

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["bessel_i0e", "bessel_i1e", "betainc", "digamma", "erf", "erf_inv", "erfc",
           "igamma", "igamma_grad_a", "igammac", "lgamma", "polygamma",
           "random_gamma_grad", "zeta"]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)

# Defined at the end of the module, used by derivative rules before (declared for type checkers).
digamma: Callable[[Any], Any]
polygamma: Callable[[Any, Any], Any]
igamma_grad_a: Callable[[Any, Any], Any]
random_gamma_grad: Callable[[Any, Any], Any]
zeta: Callable[[Any, Any], Any]
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2
_SQRT_TWO_PI = math.sqrt(2 * math.pi)


def kernel_impl(name: str, kernel: str, part: int | None = None, integer_first: bool = False,
                where: str = "functrans.lax") -> Callable:
    """The impl calling the special-function kernel ``kernel`` of SciPy (of cupyx on CuPy
    arrays), in the inputs' promoted dtype (some kernels, such as ``polygamma``, compute in
    float64 whatever the input).  ``part``: the item of the tuple the kernel returns
    (``sici``, ``fresnel``); ``integer_first``: the first argument passed as an integer (the
    order of ``expn``, which SciPy would truncate with a warning); ``where``: the module of
    the user-facing name, for the errors."""
    def impl(*args):
        xp = array_module(*args)
        args = coerce(xp, *args)
        if integer_first:
            args = (xp.asarray(args[0]).astype(np.int64),) + tuple(args[1:])
        module = special_module(*args, what=f"{where}.{name}")
        if not hasattr(module, kernel):  # cupyx.scipy.special lacks some of SciPy's
            raise NotImplementedError(
                f"{where}.{name}: {module.__name__} has no {kernel} kernel for "
                f"{xp.__name__} arrays; compute it on NumPy arrays")
        out = getattr(module, kernel)(*args)
        if part is not None:
            out = out[part]
        dtype = np.result_type(*[getattr(a, "dtype", a) for a in args[integer_first:]])
        return out if out.dtype == dtype else out.astype(dtype)
    impl.__name__ = kernel if part is None else f"{kernel}_{part}"
    return impl


def refuse(message: str, error: type = NotImplementedError) -> Callable:
    """A derivative rule that raises ``error(message)``: for arguments JAX does not
    differentiate either."""
    def derivative(g, ans, *primals):
        raise error(message)
    return derivative


def _gaussian(x):
    return exp(neg(mul(x, x)))


erf_p = unary("erf", kernel_impl("erf", "erf"),
              lambda g, ans, x: mul(g, mul(_TWO_OVER_SQRT_PI, _gaussian(x))), real_only=True)
erfc_p = unary("erfc", kernel_impl("erfc", "erfc"),
               lambda g, ans, x: mul(g, mul(-_TWO_OVER_SQRT_PI, _gaussian(x))), real_only=True)
erf_inv_p = unary("erf_inv", kernel_impl("erf_inv", "erfinv"),
                  lambda g, ans, x: mul(g, mul(_SQRT_PI_OVER_TWO, exp(mul(ans, ans)))),
                  real_only=True)
lgamma_p = unary("lgamma", kernel_impl("lgamma", "gammaln"),
                 lambda g, ans, x: mul(g, digamma(x)), real_only=True)
digamma_p = unary("digamma", kernel_impl("digamma", "psi"),
                  lambda g, ans, x: mul(g, polygamma(1, x)), real_only=True)
# d/dx ndtri(p) = 1 / pdf(ndtri(p)) = sqrt(2 pi) exp(ndtri(p)^2 / 2).
ndtri_p = unary("ndtri", kernel_impl("ndtri", "ndtri"),
                lambda g, ans, x: mul(g, mul(_SQRT_TWO_PI, exp(mul(0.5, mul(ans, ans))))),
                real_only=True)


def _i0e_derivative(g, ans, x):
    # i0e(x) = exp(-|x|) I0(x) and I0' = I1, so i0e' = i1e - sign(x) i0e.
    return mul(g, sub(bessel_i1e(x), mul(sign(x), ans)))


def _i1e_derivative(g, ans, x):
    # I1' = I0 - I1 / x, so i1e' = i0e - i1e (sign(x) + 1 / x); its limit at 0 is 1/2.
    at_zero = eq(x, 0)
    safe_x = select(at_zero, 1, x)
    general = sub(bessel_i0e(x), mul(ans, add(sign(x), div(1, safe_x))))
    return mul(g, select(at_zero, 0.5, general))


bessel_i0e_p = unary("bessel_i0e", kernel_impl("bessel_i0e", "i0e"), _i0e_derivative,
                     real_only=True)
bessel_i1e_p = unary("bessel_i1e", kernel_impl("bessel_i1e", "i1e"), _i1e_derivative,
                     real_only=True)

polygamma_p = binary(
    "polygamma", kernel_impl("polygamma", "polygamma"),
    (refuse("polygamma: the derivative with respect to the order m is not defined (m is "
             "an integer); differentiate with respect to x only", ValueError),
     lambda g, ans, m, x: mul(g, polygamma(add(m, 1), x))),
    real_only=True)


def _igamma_density(a, x):
    # d/dx P(a, x) = x^(a-1) exp(-x) / Gamma(a), through logarithms against overflow.
    return exp(sub(sub(mul(sub(a, 1), log(x)), x), lgamma(a)))


# In a, both derivatives are the kernel igamma_grad_a of the next section.
igamma_p = binary(
    "igamma", kernel_impl("igamma", "gammainc"),
    (lambda g, ans, a, x: mul(g, igamma_grad_a(a, x)),
     lambda g, ans, a, x: mul(g, _igamma_density(a, x))),
    real_only=True)
igammac_p = binary(
    "igammac", kernel_impl("igammac", "gammaincc"),
    (lambda g, ans, a, x: neg(mul(g, igamma_grad_a(a, x))),
     lambda g, ans, a, x: neg(mul(g, _igamma_density(a, x)))),
    real_only=True)

# -- the derivative of the incomplete gamma function in its shape a -------------------------
#
# Both kernels run in float64 whatever the input (then round to it), on whole arrays: each
# loop step updates the elements still converging, so no element has a Python loop of its
# own.  Below x = a + 1 the power series is used,
#     P(a, x) = x^a e^-x / Gamma(a + 1) * S,   S = sum_k t_k,  t_0 = 1,  t_k = t_(k-1) x / (a + k),
# whose terms differentiate in closed form: dt_k/da = t_k h_k with h_k = -sum_(j<=k) 1/(a + j).
# Above, the continued fraction of the upper function,
#     Q(a, x) = x^a e^-x / Gamma(a) * R,   R = 1 / (b_0 + a_1 / (b_1 + a_2 / (b_2 + ...))),
# with b_n = x + 2n + 1 - a and a_n = n (a - n), is evaluated by the forward recurrence of its
# numerators and denominators, differentiated in a alongside.  Near x = a the series needs
# about 9 sqrt(a) terms, the fraction about sqrt(a) steps; _MAX_STEPS bounds both (the series
# reaches a of about 1e8 at x = a, further off x = a more).  An element that would need more
# is nan, never a truncated sum.
_MAX_STEPS = 100000
_EPS = float(np.finfo(np.float64).eps)
# Above this shape, the factor x^a e^-x / Gamma(a) and log x - digamma(a) are written with
# d = (x - a) / a and Stirling's series, free of the cancellation of a log x against x and
# lgamma(a) (each near a log a: 1e-9 relative at a = 1e6 written out plainly).
_LARGE_SHAPE = 10.0
# Stirling's series: lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2) = sum_n
# B_2n / (2n (2n - 1) a^(2n - 1)), and log a - digamma(a) = 1 / (2a) + sum_n B_2n / (2n a^2n);
# eight terms reach float64's resolution from a = 10.
_BERNOULLI_2N = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)


def _stirling_remainder(a):
    inv2 = 1 / (a * a)
    total = 0.0
    for n in range(len(_BERNOULLI_2N), 0, -1):  # Horner in 1 / a^2
        total = total * inv2 + _BERNOULLI_2N[n - 1] / (2 * n * (2 * n - 1))
    return total / a


def _log_minus_digamma(a):
    inv2 = 1 / (a * a)
    total = 0.0
    for n in range(len(_BERNOULLI_2N), 0, -1):
        total = total * inv2 + _BERNOULLI_2N[n - 1] / (2 * n)
    return 0.5 / a + total * inv2


def _log_ratio(xp, x, a):
    """``log(x / a)`` and ``x / a - 1 - log(x / a)`` (>= 0), both to float64's resolution:
    near ``x = a`` from ``d = (x - a) / a`` (exact difference) with ``u = d / (2 + d)``, as
    ``log1p(d) = 2 atanh(u)`` and ``d - 2u = d u``, so the second is ``d u - 2 (u^3/3 +
    u^5/5 + ...)`` (18 terms for ``|d| <= 1/2``); elsewhere from ``x / a`` itself (``1 + d``
    would lose ``d``'s last digits where ``x`` is far below ``a``)."""
    d = (x - a) / a
    small = xp.abs(d) <= 0.5
    u = xp.where(small, d, 0.0) / (2 + xp.where(small, d, 0.0))
    u2 = u * u
    tail = xp.zeros_like(u)
    for n in range(18, 0, -1):
        tail = tail * u2 + 1 / (2 * n + 1)
    log_far = xp.log(xp.where(small, 1.0, x / a))
    return (xp.where(small, xp.log1p(d), log_far),
            xp.where(small, d * u - 2 * u * u2 * tail, d - log_far))


def _series_in_a(xp, a, x):
    """``S`` and ``dS/da`` of the series above, for ``x < a + 1`` (nan where ``_MAX_STEPS``
    terms do not reach float64's resolution)."""
    s_out, ds_out = xp.ones_like(x), xp.zeros_like(x)
    live = xp.nonzero(x > 0)[0]  # at x = 0 the sum is its first term
    a, x = a[live], x[live]
    s, ds, t, h = xp.ones_like(x), xp.zeros_like(x), xp.ones_like(x), xp.zeros_like(x)
    # Finished elements are written out at once and dropped from the arrays in batches:
    # dropping them at every step cost more than computing them on (measured, 200k
    # elements); what they compute meanwhile is never read.  On CuPy, nonzero reads the
    # count of those left on the host: one synchronisation a step, as random.gamma's loop.
    finished = xp.zeros(x.shape, dtype=bool)
    for k in range(1, _MAX_STEPS + 1):
        if live.shape[0] == 0:
            break
        ak = a + k
        t = t * x / ak
        h = h - 1 / ak
        s = s + t
        ds = ds + t * h
        # The terms fall at least geometrically by r, so this bounds what is left.
        r = x / (ak + 1)
        rest = t * r / (1 - r)
        rest_d = rest * (xp.abs(h) + 1 / ((1 - r) * (ak + 1)))
        done = (rest <= _EPS * s) & (rest_d <= _EPS * xp.abs(ds))
        new = done & ~finished
        s_out[live[new]], ds_out[live[new]] = s[new], ds[new]
        finished |= done
        keep = xp.nonzero(~finished)[0]
        if 4 * keep.shape[0] <= 3 * finished.shape[0]:  # drop them, a quarter at least
            live, a, x, s, ds, t, h, finished = (
                v[keep] for v in (live, a, x, s, ds, t, h, finished))
    unfinished = live[~finished]  # the step limit reached: no answer rather than a wrong one
    s_out[unfinished], ds_out[unfinished] = np.nan, np.nan
    return s_out, ds_out


def _fraction_in_a(xp, a, x):
    """``R`` and ``dR/da`` of the continued fraction above, for ``x >= a + 1`` (nan where
    ``_MAX_STEPS`` steps do not settle it)."""
    # Convergents A_n / B_n of b_0 + a_1 / (b_1 + ...), from A_-1 = 1, B_-1 = 0, A_0 = b_0,
    # B_0 = 1, and their derivatives in a (db_n/da = -1, da_n/da = n); R_n = B_n / A_n.
    r_out, dr_out = xp.zeros_like(x), xp.zeros_like(x)
    one, zero = xp.ones_like(x), xp.zeros_like(x)
    a_prev, b_prev, da_prev, db_prev = one, zero, zero, zero
    a_now, b_now, da_now, db_now = x + 1 - a, one, -one, zero
    r = b_now / a_now
    dr = (db_now * a_now - b_now * da_now) / (a_now * a_now)
    size = xp.abs(xp.log(x)) + x + 1  # the scale of R's factor log x - digamma(a), roughly
    live = xp.arange(x.shape[0])
    finished = xp.zeros(x.shape, dtype=bool)
    for n in range(1, _MAX_STEPS + 1):
        if live.shape[0] == 0:
            break
        b_n, a_n = x + (2 * n + 1) - a, n * (a - n)
        a_new = b_n * a_now + a_n * a_prev
        b_new = b_n * b_now + a_n * b_prev
        da_new = -a_now + b_n * da_now + n * a_prev + a_n * da_prev
        db_new = -b_now + b_n * db_now + n * b_prev + a_n * db_prev
        r_new = b_new / a_new
        dr_new = (db_new * a_new - b_new * da_new) / (a_new * a_new)
        done = ((xp.abs(r_new - r) <= _EPS * xp.abs(r_new))
                & (xp.abs(dr_new - dr) <= _EPS * (xp.abs(r_new) * size + xp.abs(dr_new))))
        # The ratios are what matter: rescale all eight together before they overflow.
        scale = xp.where(xp.abs(a_new) > 1e100, 1e-100, 1.0)
        a_prev, b_prev, da_prev, db_prev = a_now * scale, b_now * scale, da_now * scale, \
            db_now * scale
        a_now, b_now, da_now, db_now = a_new * scale, b_new * scale, da_new * scale, \
            db_new * scale
        r, dr = r_new, dr_new
        new = done & ~finished  # as in _series_in_a
        r_out[live[new]], dr_out[live[new]] = r[new], dr[new]
        finished |= done
        keep = xp.nonzero(~finished)[0]
        if 4 * keep.shape[0] <= 3 * finished.shape[0]:
            (live, a, x, size, r, dr, a_prev, b_prev, da_prev, db_prev, a_now, b_now, da_now,
             db_now, finished) = (v[keep] for v in (live, a, x, size, r, dr, a_prev, b_prev,
                                                    da_prev, db_prev, a_now, b_now, da_now,
                                                    db_now, finished))
    unfinished = live[~finished]
    r_out[unfinished], dr_out[unfinished] = np.nan, np.nan
    return r_out, dr_out


def _series_in_a_twice(xp, a, x):
    """``S``, ``dS/da`` and ``d²S/da²`` of the series of ``_series_in_a`` (same domain): term
    ``t_k`` has ``d log t_k / da = h_k = -sum 1/(a+j)`` and ``d² log t_k / da² = h2_k =
    sum 1/(a+j)²``, so ``d²t_k/da² = t_k (h_k² + h2_k)``."""
    s, ds, d2s = xp.ones_like(x), xp.zeros_like(x), xp.zeros_like(x)
    t, h, h2 = xp.ones_like(x), xp.zeros_like(x), xp.zeros_like(x)
    out = [xp.ones_like(x), xp.zeros_like(x), xp.zeros_like(x)]
    finished = x <= 0  # at x = 0 the sum is its first term
    for k in range(1, _MAX_STEPS + 1):
        if xp.nonzero(~finished)[0].shape[0] == 0:  # as _series_in_a: no bool() sync
            break
        ak = a + k
        t = t * x / ak
        h = h - 1 / ak
        h2 = h2 + 1 / (ak * ak)
        s, ds, d2s = s + t, ds + t * h, d2s + t * (h * h + h2)
        r = x / (ak + 1)
        rest = t * r / (1 - r)
        c = 1 / ((1 - r) * (ak + 1))
        done = ((rest <= _EPS * s) & (rest * (xp.abs(h) + c) <= _EPS * xp.abs(ds))
                & (rest * ((xp.abs(h) + c) ** 2 + h2 + c * c)
                   <= _EPS * (xp.abs(d2s) + xp.abs(ds) + s)))
        new = done & ~finished
        for o, v in zip(out, (s, ds, d2s)):
            o[new] = v[new]
        finished |= done
    for o in out:
        o[~finished] = np.nan  # the step limit reached: no answer rather than a wrong one
    return out


def _fraction_in_a_twice(xp, a, x):
    """``R``, ``dR/da`` and ``d²R/da²`` of the continued fraction of ``_fraction_in_a``
    (same domain), from second derivatives of its convergents' recurrences (``b_n`` and
    ``a_n`` are linear in ``a``: ``d²A_n = b_n d²A_{n-1} + a_n d²A_{n-2} - 2 dA_{n-1} +
    2n dA_{n-2}``, the same for ``B``) and ``B = R A``."""
    one, zero = xp.ones_like(x), xp.zeros_like(x)
    # (A, B, dA, dB, d2A, d2B) at n - 1 and at n
    prev = [one, zero, zero, zero, zero, zero]
    now = [x + 1 - a, one, -one, zero, zero, zero]

    def ratios(v):
        big_a, big_b, da, db, d2a, d2b = v
        r = big_b / big_a
        dr = (db - r * da) / big_a
        return r, dr, (d2b - 2 * dr * da - r * d2a) / big_a

    r, dr, d2r = ratios(now)
    out = [zero.copy(), zero.copy(), zero.copy()]
    size = xp.abs(xp.log(x)) + x + 1
    finished = xp.zeros(x.shape, dtype=bool)
    for n in range(1, _MAX_STEPS + 1):
        if xp.nonzero(~finished)[0].shape[0] == 0:  # as _series_in_a: no bool() sync
            break
        b_n, a_n = x + (2 * n + 1) - a, n * (a - n)
        (a1, b1, da1, db1, d2a1, d2b1), (a0, b0, da0, db0, d2a0, d2b0) = now, prev
        new_state = [b_n * a1 + a_n * a0, b_n * b1 + a_n * b0,
                     -a1 + b_n * da1 + n * a0 + a_n * da0,
                     -b1 + b_n * db1 + n * b0 + a_n * db0,
                     -2 * da1 + b_n * d2a1 + 2 * n * da0 + a_n * d2a0,
                     -2 * db1 + b_n * d2b1 + 2 * n * db0 + a_n * d2b0]
        r_new, dr_new, d2r_new = ratios(new_state)
        done = ((xp.abs(r_new - r) <= _EPS * xp.abs(r_new))
                & (xp.abs(dr_new - dr) <= _EPS * (xp.abs(r_new) * size + xp.abs(dr_new)))
                & (xp.abs(d2r_new - d2r) <= _EPS * (xp.abs(r_new) * size * size
                                                     + xp.abs(dr_new) * size
                                                     + xp.abs(d2r_new))))
        scale = xp.where(xp.abs(new_state[0]) > 1e100, 1e-100, 1.0)
        prev, now = [v * scale for v in now], [v * scale for v in new_state]
        r, dr, d2r = r_new, dr_new, d2r_new
        new = done & ~finished
        for o, v in zip(out, (r, dr, d2r)):
            o[new] = v[new]
        finished |= done
    for o in out:
        o[~finished] = np.nan
    return out


def _series_steps(xp, a, x):
    """About how many terms the series takes at ``x < a + 1``: ``t_k`` is near
    ``exp(-k log(a / x) - k^2 / (2a))``, below float64's resolution (e^-40 against ``S >= 1``)
    for ``k = a (sqrt(l^2 + 80 / a) - l)``, ``l = max(log(a / x), 0)``."""
    ell = xp.maximum(xp.log(a / x), 0.0)
    return 80 / (xp.sqrt(ell * ell + 80 / a) + ell)  # a (sqrt(...) - l), free of cancellation


def _shape_derivative(a, x, *, sample: bool, second: bool = False):
    """``dP/da`` at ``(a, x)``, or with ``sample`` the implicit derivative of a Gamma(a)
    sample ``x`` held at a fixed quantile, ``-(dP/da) / p(x; a)``, which is kept free of the
    density's underflow by cancelling the common factor ``x^(a-1) e^-x / Gamma(a)``.  Nan
    where the series or the fraction would need more than ``_MAX_STEPS`` steps (large ``a``
    with ``x`` within a few ``sqrt(a)`` of it, beyond ``a`` of about 1e8).  With ``second``,
    the derivative of that in ``a`` (``x`` held): ``d²P/da²``, or ``d/da`` of the sample's
    derivative."""
    xp = array_module(a, x)
    sp = special_module(a, x, what="functrans.lax.igamma_grad_a")
    a, x = coerce(xp, a, x)
    dtype = np.result_type(getattr(a, "dtype", a), getattr(x, "dtype", x))
    shape = np.broadcast_shapes(np.shape(a), np.shape(x))
    a64 = xp.broadcast_to(xp.asarray(a, dtype=np.float64), shape).reshape(-1)
    x64 = xp.broadcast_to(xp.asarray(x, dtype=np.float64), shape).reshape(-1)
    bad = ~((a64 > 0) & (x64 >= 0))  # nan included
    edge = (x64 == 0) | xp.isinf(x64) | bad
    a_ok = xp.where(bad, 1.0, a64)
    x_ok = xp.where(edge, 1.0, x64)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        series = x_ok < a_ok + 1
        too_long = series & (_series_steps(xp, a_ok, x_ok) > _MAX_STEPS)
        # log(x^a e^-x / Gamma(a)) and log x - digamma(a): plainly for small a, through
        # d = (x - a) / a and Stirling's series for large a (see _LARGE_SHAPE).
        large = a_ok >= _LARGE_SHAPE
        a_big = xp.where(large, a_ok, _LARGE_SHAPE)
        log_ratio, excess = _log_ratio(xp, x_ok, a_big)
        log_factor = xp.where(
            large,
            -a_big * excess - 0.5 * xp.log(2 * math.pi / a_big) - _stirling_remainder(a_big),
            a_ok * xp.log(x_ok) - x_ok - sp.gammaln(a_ok))
        log_gap = xp.where(large, log_ratio + _log_minus_digamma(a_big),
                           xp.log(x_ok) - sp.psi(a_ok))
        out = xp.zeros_like(x_ok)
        if second:
            trigamma = sp.polygamma(1, a_ok)
        i = xp.nonzero(series & ~too_long)[0]
        if i.shape[0] and second:
            ai, xi = a_ok[i], x_ok[i]
            s, ds, d2s = _series_in_a_twice(xp, ai, xi)
            # P = exp(L) S with L = a log x - x - log Gamma(a + 1): L' = log x - digamma(a + 1),
            # L'' = -trigamma(a + 1) = 1/a² - trigamma(a)
            d1 = log_gap[i] - 1 / ai
            d2 = 1 / (ai * ai) - trigamma[i]
            if sample:  # -(x / a) (S L' + S'), differentiated in a
                out[i] = -xi * ((ds * d1 + s * d2 + d2s) / ai - (s * d1 + ds) / (ai * ai))
            else:
                out[i] = xp.exp(log_factor[i] - xp.log(ai)) * (
                    s * (d1 * d1 + d2) + 2 * ds * d1 + d2s)
        elif i.shape[0]:
            ai, xi = a_ok[i], x_ok[i]
            s, ds = _series_in_a(xp, ai, xi)
            # log x - digamma(a + 1) = log x - digamma(a) - 1 / a, Gamma(a + 1) = a Gamma(a)
            bracket = s * (log_gap[i] - 1 / ai) + ds
            out[i] = (-(xi / ai) * bracket if sample else
                      xp.exp(log_factor[i] - xp.log(ai)) * bracket)
        j = xp.nonzero(~series)[0]
        if j.shape[0] and second:
            aj, xj = a_ok[j], x_ok[j]
            r, dr, d2r = _fraction_in_a_twice(xp, aj, xj)
            # Q = 1 - P = exp(M) R with M = a log x - x - log Gamma(a): M' = log x -
            # digamma(a), M'' = -trigamma(a)
            d1, d2 = log_gap[j], -trigamma[j]
            if sample:  # x (R M' + R'), differentiated in a
                out[j] = xj * (dr * d1 + r * d2 + d2r)
            else:
                out[j] = -xp.exp(log_factor[j]) * (r * (d1 * d1 + d2) + 2 * dr * d1 + d2r)
        elif j.shape[0]:
            aj, xj = a_ok[j], x_ok[j]
            r, dr = _fraction_in_a(xp, aj, xj)
            bracket = r * log_gap[j] + dr
            out[j] = xj * bracket if sample else -xp.exp(log_factor[j]) * bracket
    out = xp.where(too_long, np.nan, out)
    # At x = 0 and x = inf, P is 0 and 1 for every a (and a sample at 0 stays there).
    out = xp.where(edge, 0.0, out)
    out = xp.where(bad, np.nan, out)
    return out.reshape(shape).astype(dtype)


def _igamma_grad_a_impl(a, x):
    return _shape_derivative(a, x, sample=False)


def _random_gamma_grad_impl(a, x):
    return _shape_derivative(a, x, sample=True)


_NO_THIRD_SHAPE_DERIVATIVE = (
    "{name}: the derivative with respect to the shape a is not implemented (so igamma, "
    "igammac, gammainc, gammaincc and random.gamma have derivatives of first and second "
    "order in a, and mixed ones with x, but none of third order in a alone); wrap a in "
    "functrans.lax.stop_gradient where that derivative is not needed")


def _igamma_grad_a_in_x(g, ans, a, x):
    # d/dx dP/da = d/da p(x; a) = p(x; a) (log x - digamma(a)).
    return mul(g, mul(_igamma_density(a, x), sub(log(x), digamma(a))))


def _random_gamma_grad_in_x(g, ans, a, x):
    # With dx/da = -(dP/da) / p: d/dx of it = -(log x - digamma(a)) - ans ((a - 1) / x - 1),
    # since dp/da = p (log x - digamma(a)) and dp/dx = p ((a - 1) / x - 1).
    return mul(g, neg(add(sub(log(x), digamma(a)), mul(ans, sub(div(sub(a, 1), x), 1)))))


def _igamma_second_grad_a_in_x(g, ans, a, x):
    # d/dx d²P/da² = d²p/da² = p ((log x - digamma(a))² - trigamma(a)).
    gap = sub(log(x), digamma(a))
    return mul(g, mul(_igamma_density(a, x), sub(mul(gap, gap), polygamma(1, a))))


def _random_gamma_second_grad_in_x(g, ans, a, x):
    # d/da of _random_gamma_grad_in_x's factor, with r = dx/da and ans = dr/da:
    # trigamma(a) - ans ((a - 1) / x - 1) - r / x.
    r = random_gamma_grad(a, x)
    return mul(g, sub(sub(polygamma(1, a), mul(ans, sub(div(sub(a, 1), x), 1))), div(r, x)))


# Second derivatives in a (of P, and of a sample at a fixed quantile): the series and the
# continued fraction differentiated once more; a third derivative in a is refused.
igamma_second_grad_a_p = binary(
    "igamma_second_grad_a", lambda a, x: _shape_derivative(a, x, sample=False, second=True),
    (refuse(_NO_THIRD_SHAPE_DERIVATIVE.format(name="igamma_second_grad_a")),
     _igamma_second_grad_a_in_x),
    real_only=True)
random_gamma_second_grad_p = binary(
    "random_gamma_second_grad",
    lambda a, x: _shape_derivative(a, x, sample=True, second=True),
    (refuse(_NO_THIRD_SHAPE_DERIVATIVE.format(name="random_gamma_second_grad")),
     _random_gamma_second_grad_in_x),
    real_only=True)
igamma_grad_a_p = binary(
    "igamma_grad_a", _igamma_grad_a_impl,
    (lambda g, ans, a, x: mul(g, igamma_second_grad_a_p.bind(a, x)), _igamma_grad_a_in_x),
    real_only=True)
random_gamma_grad_p = binary(
    "random_gamma_grad", _random_gamma_grad_impl,
    (lambda g, ans, a, x: mul(g, random_gamma_second_grad_p.bind(a, x)),
     _random_gamma_grad_in_x),
    real_only=True)

# Hurwitz zeta: d/dq sum_k (k + q)^-x = -x zeta(x + 1, q); in x there is no closed form.
zeta_p = binary(
    "zeta", kernel_impl("zeta", "zeta"),
    (refuse("zeta: the derivative with respect to the exponent x is not implemented "
             "(only the derivative in q is)"),
     lambda g, ans, x, q: neg(mul(g, mul(x, zeta(add(x, 1), q))))),
    real_only=True)


# -- lax-level functions -------------------------------------------------------------------


def _unary_fn(prim, doc: str, name: str | None = None) -> Callable:
    def f(x):
        return prim.bind(x)
    return public(f, name or prim.name, doc, module="functrans.lax")


def _binary_fn(prim, doc: str, first: str, second: str) -> Callable:
    def f(x, y):
        return prim.bind(x, y)
    f = public(f, prim.name, doc, module="functrans.lax")
    # The argument names JAX uses, which errors about missing arguments show.
    f.__code__ = f.__code__.replace(co_varnames=(first, second) + f.__code__.co_varnames[2:])
    return f


erf = _unary_fn(erf_p, """Elementwise error function ``2/sqrt(pi) int_0^x exp(-t^2) dt``.

>>> import numpy as np
>>> erf(np.array([0.0, 1.0])).round(6)
array([0.      , 0.842701])
""")
erfc = _unary_fn(erfc_p, """Elementwise complementary error function ``1 - erf(x)``, accurate
where ``erf(x)`` is close to 1.

>>> float(erfc(10.0)) > 0
True
""")
erf_inv = _unary_fn(erf_inv_p, """Elementwise inverse of ``erf`` on ``(-1, 1)`` (±inf at ±1).

>>> print(f"{float(erf_inv(erf(0.3))):.12f}")
0.300000000000
""")
lgamma = _unary_fn(lgamma_p, """Elementwise ``log|Gamma(x)|``.

>>> print(f"{float(lgamma(5.0)):.10f}")  # log(4!)
3.1780538303
""")
digamma = _unary_fn(digamma_p, """Elementwise digamma function, the derivative of ``lgamma``.

>>> print(f"{float(digamma(1.0)):.10f}")  # minus the Euler-Mascheroni constant
-0.5772156649
""")
bessel_i0e = _unary_fn(bessel_i0e_p, """Elementwise exponentially scaled modified Bessel
function of order 0, ``exp(-|x|) I0(x)``.

>>> float(bessel_i0e(0.0))
1.0
""")
bessel_i1e = _unary_fn(bessel_i1e_p, """Elementwise exponentially scaled modified Bessel
function of order 1, ``exp(-|x|) I1(x)``.

>>> float(bessel_i1e(0.0))
0.0
""")


def ndtri(p):
    """Elementwise quantile of the standard normal distribution (the inverse of its CDF),
    ``-inf`` at 0 and ``inf`` at 1.  JAX's ``lax`` has no such primitive, so this is not in
    ``functrans.lax``; ``functrans.scipy.special.ndtri`` is its public name.

    >>> float(ndtri(0.5))
    0.0
    """
    return ndtri_p.bind(p)


polygamma = _binary_fn(polygamma_p, """Elementwise polygamma function: the ``m``-th derivative
of ``digamma`` at ``x`` (``m`` a non-negative integer value).  Not differentiable in ``m``.

>>> print(f"{float(polygamma(1.0, 1.0)):.10f}")  # pi^2 / 6
1.6449340668
""", "m", "x")
igamma = _binary_fn(igamma_p, """Elementwise regularized lower incomplete gamma function
``P(a, x) = int_0^x t^(a-1) exp(-t) dt / Gamma(a)``.  Differentiable in ``x`` to any order
and once in ``a`` (``igamma_grad_a``; mixed derivatives in ``a`` and ``x`` too).

>>> print(f"{float(igamma(1.0, 2.0)):.10f}")  # 1 - exp(-2)
0.8646647168
""", "a", "x")
igammac = _binary_fn(igammac_p, """Elementwise regularized upper incomplete gamma function
``Q(a, x) = 1 - P(a, x)``.  Differentiable as ``igamma``.

>>> print(f"{float(igammac(1.0, 2.0)):.10f}")  # exp(-2)
0.1353352832
""", "a", "x")
igamma_grad_a = _binary_fn(igamma_grad_a_p, """Elementwise derivative of ``igamma(a, x)``
in the shape ``a``: a series below ``x = a + 1``, a continued fraction above, differentiated
term by term (in float64 whatever the input: within about 1e-11 of a Richardson-extrapolated
difference of SciPy's ``gammainc`` for ``a`` in [0.1, 50], ``x`` in [1e-3, 100], and of
mpmath for ``a`` up to 1e7 near ``x = a``).  Nan where the loops would need more than 100,000
steps: ``a`` beyond about 1e8 with ``x`` a few ``sqrt(a)`` below it.
Differentiable in ``x``; its derivative in ``a`` is not implemented (an error says so).

>>> print(f"{float(igamma_grad_a(1.0, 2.0)):.10f}")
-0.2208254262
""", "a", "x")
random_gamma_grad = _binary_fn(random_gamma_grad_p, """Elementwise derivative of a Gamma(a, 1)
sample ``x`` in its shape ``a``, with the sample's quantile held fixed (the implicit
reparameterization ``-(d/da P(a, x)) / p(x; a)``, ``p`` the gamma density): the derivative of
``functrans.random.gamma`` in ``a``.  Differentiable in ``x``, not in ``a``.

>>> print(f"{float(random_gamma_grad(1.0, 2.0)):.10f}")
1.6316914623
""", "a", "x")
zeta = _binary_fn(zeta_p, """Elementwise Hurwitz zeta function ``sum_k (k + q)^-x``
(``x > 1``).  Differentiable in ``q`` only.

>>> print(f"{float(zeta(2.0, 1.0)):.10f}")  # pi^2 / 6
1.6449340668
""", "x", "q")


# -- incomplete beta, hypergeometric functions, Bessel J of integer order -------------------
# SciPy's kernels again; betainc, hyp1f1 and hyp2f1 take three or four broadcasting operands
# (``nary``, the counterpart of ``binary``).

def _betainc_density(a, b, x):
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b), through logarithms against overflow.
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return exp(sub(add(mul(sub(a, 1), log(x)), mul(sub(b, 1), log1p(neg(x)))), log_beta))


_NO_BETAINC_PARAMETER_DERIVATIVE = (
    "betainc: the derivative with respect to {arg} is not supported (as in JAX; only the "
    "derivative in x is); wrap {arg} in functrans.lax.stop_gradient if it needs none")
regularized_incomplete_beta_p = nary(
    "regularized_incomplete_beta", kernel_impl("betainc", "betainc"),
    (refuse(_NO_BETAINC_PARAMETER_DERIVATIVE.format(arg="a"), ValueError),
     refuse(_NO_BETAINC_PARAMETER_DERIVATIVE.format(arg="b"), ValueError),
     lambda g, ans, a, b, x: mul(g, _betainc_density(a, b, x))))

# -- hypergeometric functions and their derivatives in the parameters --
# pFq(u; l; x) = sum_k t_k with t_k = prod (u_i)_k / prod (l_j)_k x^k / k!.  In x:
# d/dx pFq(u; l; x) = prod u / prod l pFq(u + 1; l + 1; x).  In a parameter, term by term
# (JAX's series): d/du_i pFq = sum_k t_k sum_{j<k} 1 / (u_i + j), and minus the same with
# 1 / (l_j + j) for a lower parameter l_j.  These series are the impl of
# ``hyp_parameter_derivative``; its own derivative in x follows from the one above.

_HYP_SERIES_TERMS = {1: 2000, 2: 20000}  # the most terms summed (1F1; 2F1 near |x| = 1)


def _parameter_series(xp, upper, lower, x) -> tuple:
    """``pFq(upper; lower; x)`` and ``[d/dp pFq for p in upper + lower]``, summed until the
    terms fall below the dtype's resolution: checked every 16 terms on NumPy, every 64 on a
    device, where each check is a synchronisation (as a ``while_loop``'s condition).  The
    terms of 2F1 fall about as ``|x|^k``, so what is left after a term is up to ``1 / (1 -
    |x|)`` times it: its test asks that much more.  An element still short of that after
    ``_HYP_SERIES_TERMS`` terms is nan, not a truncated sum."""
    # The terms' derivatives are carried by their own recurrence, d t_(k+1) = d t_k r_k +
    # t_k d r_k, with the factor (u + k) left out of r_k rather than divided out: at u = 0
    # (Pfaff's c - b where c = b) t_k vanishes from k = 1 on, but d/du t_k does not.
    eps = float(np.finfo(x.dtype).eps)
    every = 16 if xp is np else 64
    params = list(upper) + list(lower)
    shape = np.broadcast_shapes(x.shape, *[p.shape for p in params])
    term = xp.ones(shape, dtype=x.dtype)
    value = xp.zeros(shape, dtype=x.dtype)
    d_terms = [xp.zeros(shape, dtype=x.dtype) for _ in params]
    sums = [xp.zeros(shape, dtype=x.dtype) for _ in params]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tolerance = eps * (1 - xp.absolute(x) if len(upper) == 2 else 1.0)

        def short():  # the elements whose last terms are not yet negligible
            left = xp.zeros(shape, dtype=bool)
            for d, t in zip(d_terms, sums):
                left |= ~(xp.absolute(d) <= tolerance * xp.absolute(t))
            return left

        for k in range(_HYP_SERIES_TERMS[len(upper)]):
            value = value + term
            for i in range(len(params)):
                sums[i] = sums[i] + d_terms[i]
            base = x / (k + 1)
            for q in lower:
                base = base / (q + k)
            factors = [u + k for u in upper]
            ratio = base
            for f in factors:
                ratio = ratio * f
            for i in range(len(upper)):  # d r_k / d u_i: r_k without the factor u_i + k
                partial = base
                for j, f in enumerate(factors):
                    if j != i:
                        partial = partial * f
                d_terms[i] = d_terms[i] * ratio + term * partial
            for i, q in enumerate(lower, len(upper)):
                d_terms[i] = (d_terms[i] - term / (q + k)) * ratio
            term = term * ratio
            if k % every == every - 1 and not int(xp.count_nonzero(short())):
                break
        else:
            # Out of terms; read on the device, so no synchronisation more.
            unfinished = short()
            sums = [xp.where(unfinished, np.nan, t) for t in sums]
    return value, sums


def _hyp_parameter_derivative_impl(*args, upper: int, wrt: int):
    xp = array_module(*args)
    dtype = np.result_type(*[getattr(a, "dtype", a) for a in args])
    *params, x = [xp.asarray(a, dtype=dtype) for a in coerce(xp, *args)]
    if upper == 1:
        # Kummer's transformation 1F1(a; b; x) = e^x 1F1(b - a; b; -x) makes the terms
        # positive for x < 0 (the series alternates there, cancelling e^|x| of accuracy).
        a, b = params
        flip = x < 0
        _, (da, db) = _parameter_series(xp, [xp.where(flip, b - a, a)], [b], xp.absolute(x))
        scale = xp.where(flip, xp.exp(x), 1.0)
        out = [xp.where(flip, -scale * da, da), xp.where(flip, scale * (da + db), db)][wrt]
        return out.astype(dtype, copy=False)
    # Below x = -1/2, Pfaff's transformation 2F1(a, b; c; x) = (1 - x)^-a 2F1(a, c - b; c; z)
    # with z = x / (x - 1) in [1/3, 1): the series converges there (for every x < 0) with
    # terms of one sign from some k on.  As 2F1 is symmetric in a and b, the one taken out
    # is the smaller, which makes the terms of 2F1(a, c - b; c; z) fall as k^(a - b - 1) z^k.
    # Differentiated: d/da = (1 - x)^-a (dG/da - log(1 - x) G), d/db = -(1 - x)^-a dG/d2,
    # d/dc = (1 - x)^-a (dG/d2 + dG/dc), G = 2F1(a, c - b; c; z) and dG/d2 its derivative
    # in the second parameter.
    a, b, c = params
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        far = x < -0.5
        swap = far & (a > b)
        first, second = xp.where(swap, b, a), xp.where(swap, a, b)
        outside = ~((x < 1) & (x > -np.inf))  # on or past the branch point x = 1, nan, -inf
        z = xp.where(outside, 0.0, xp.where(far, x / (x - 1), x))
        value, (d1, d2, d3) = _parameter_series(
            xp, [first, xp.where(far, c - second, second)], [c], z)
        log_1mx = xp.log1p(-xp.where(far, x, 0.0))
        scale = xp.exp(-first * log_1mx)
        d_first = xp.where(far, scale * (d1 - log_1mx * value), d1)
        d_second = xp.where(far, -scale * d2, d2)
        out = [xp.where(swap, d_second, d_first), xp.where(swap, d_first, d_second),
               xp.where(far, scale * (d2 + d3), d3)][wrt]
        out = xp.where(outside, np.nan, out)
    return out.astype(dtype, copy=False)


def _hyp_x_derivative_of_parameter_derivative(g, ans, *args, upper: int, wrt: int):
    # d/dx dF/dp = d/dp (c F(shifted)) = c (F(shifted) (+-) / p + dF/dp (shifted)), with
    # c = prod upper / prod lower and the sign + for an upper parameter p, - for a lower.
    *params, x = args
    shifted = [add(p, 1) for p in params]
    coefficient = params[0]
    for p in params[1:upper]:
        coefficient = mul(coefficient, p)
    for q in params[upper:]:
        coefficient = div(coefficient, q)
    function: Callable[..., Any] = hyp1f1 if upper == 1 else hyp2f1
    value = function(*shifted, x)
    own = div(value, params[wrt]) if wrt < upper else neg(div(value, params[wrt]))
    inner = add(own, hyp_parameter_derivative_p.bind(*shifted, x, upper=upper, wrt=wrt))
    return mul(g, mul(coefficient, inner))


def _no_second_parameter_derivative(g, ans, *args, upper: int, wrt: int):
    name = "hyp1f1" if upper == 1 else "hyp2f1"
    raise NotImplementedError(f"{name}: second derivatives in the parameters are not "
                              f"implemented (the first ones are series summed term by "
                              f"term); derivatives in x of any order are")


def _hyp_parameter_derivative_rule(i: int) -> Callable:
    # Operand i is x when it is the last one (the third of 1F1's, the fourth of 2F1's).
    def rule(g, ans, *args, upper: int, wrt: int):
        if i == len(args) - 1:
            return _hyp_x_derivative_of_parameter_derivative(g, ans, *args, upper=upper,
                                                             wrt=wrt)
        return _no_second_parameter_derivative(g, ans, *args, upper=upper, wrt=wrt)
    return rule


hyp_parameter_derivative_p = nary(
    "hyp_parameter_derivative", _hyp_parameter_derivative_impl,
    tuple(_hyp_parameter_derivative_rule(i) for i in range(4)))


def _parameter_derivative(index: int, upper: int):
    return lambda g, ans, *args: mul(g, hyp_parameter_derivative_p.bind(
        *args, upper=upper, wrt=index))


hyp1f1_p = nary(
    "hyp1f1", kernel_impl("hyp1f1", "hyp1f1"),
    (_parameter_derivative(0, 1), _parameter_derivative(1, 1),
     lambda g, ans, a, b, x: mul(g, mul(div(a, b), hyp1f1(add(a, 1), add(b, 1), x)))))

hyp2f1_p = nary(
    "hyp2f1", kernel_impl("hyp2f1", "hyp2f1"),
    (_parameter_derivative(0, 2), _parameter_derivative(1, 2), _parameter_derivative(2, 2),
     lambda g, ans, a, b, c, x: mul(g, mul(div(mul(a, b), c),
                                           hyp2f1(add(a, 1), add(b, 1), add(c, 1), x)))))

# J_v' = (J_{v-1} - J_{v+1}) / 2 for every order v; the order is not differentiated.
bessel_jv_p = binary(
    "bessel_jv", kernel_impl("bessel_jv", "jv"),
    (refuse("bessel_jv: the derivative with respect to the order v is not defined (the "
             "order is an integer); differentiate with respect to z only", ValueError),
     lambda g, ans, v, z: mul(g, mul(0.5, sub(bessel_jv(sub(v, 1), z),
                                              bessel_jv(add(v, 1), z))))),
    real_only=True)


def betainc(a, b, x):
    """Elementwise regularized incomplete beta function ``I_x(a, b) = int_0^x t^(a-1)
    (1-t)^(b-1) dt / B(a, b)`` (nan outside ``[0, 1]``).  Differentiable in ``x`` only:
    the derivative in ``a`` or ``b`` raises ValueError, as in JAX.

    >>> print(f"{float(betainc(1.0, 2.0, 0.5)):.10f}")  # 1 - (1 - x)^2
    0.7500000000
    """
    return regularized_incomplete_beta_p.bind(a, b, x)


betainc = public(betainc, "betainc", module="functrans.lax")


def hyp1f1(a, b, x):
    """Elementwise confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k
    x^k / k!``, differentiable in ``x`` (to any order) and in ``a``, ``b`` (first order).
    JAX's ``lax`` has no such primitive: ``functrans.scipy.special.hyp1f1`` is its public
    name.

    >>> print(f"{float(hyp1f1(1.0, 1.0, 1.0)):.10f}")  # exp(1)
    2.7182818285
    """
    return hyp1f1_p.bind(a, b, x)


def hyp2f1(a, b, c, x):
    """Elementwise Gauss hypergeometric function ``2F1(a, b; c; x)``, differentiable in
    ``x`` (to any order) and in ``a``, ``b``, ``c`` (first order, for ``x < 1``: nan where
    their series cannot be summed, below about -500 and very near 1).
    ``functrans.scipy.special.hyp2f1`` is its public name.

    >>> print(f"{float(hyp2f1(1.0, 1.0, 2.0, 0.5)):.10f}")  # -log(1 - x) / x
    1.3862943611
    """
    return hyp2f1_p.bind(a, b, c, x)


def bessel_jv(v, z):
    """Elementwise Bessel function of the first kind ``J_v(z)``, differentiable in ``z``
    (to any order).  ``functrans.scipy.special.bessel_jn`` stacks it over integer orders.

    >>> print(f"{float(bessel_jv(0.0, 0.0)):.1f}")
    1.0
    """
    return bessel_jv_p.bind(v, z)
