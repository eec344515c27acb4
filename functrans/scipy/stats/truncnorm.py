"""The normal distribution with mean ``loc`` and standard deviation ``scale`` truncated to
``[loc + a scale, loc + b scale]`` (``jax.scipy.stats.truncnorm``; ``a`` and ``b`` are in
standard units and may be infinite).  The mass between the bounds is computed in logs, so
that the tails keep their accuracy: a truncation far from the mean stays finite.

>>> import functrans.scipy.stats.truncnorm as truncnorm
>>> round(float(truncnorm.pdf(0.5, 0.0, np.inf)), 10)  # the half-normal density
0.7041306535
"""
from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log1mexp, nan_unless

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_LOG_2 = math.log(2.0)


def _log_mass_between(low, high):
    """``log(ndtr(high) - ndtr(low))`` for ``low < high``: in the lower tail (``high <=
    0``) the difference of the ``log_ndtr``, in the upper tail its mirror image, and
    across 0 ``log1p`` of minus the two tails.  Each branch sees only bounds of its own
    case, so no other branch's nan reaches the derivative."""
    lower_tail, upper_tail = high <= 0, low >= 0
    across = ~(lower_tail | upper_tail)

    low_l, high_l = fnp.where(lower_tail, low, -2.0), fnp.where(lower_tail, high, -1.0)
    log_high = special.log_ndtr(high_l)
    in_lower = log_high + log1mexp(log_high - special.log_ndtr(low_l))

    low_u, high_u = fnp.where(upper_tail, low, 1.0), fnp.where(upper_tail, high, 2.0)
    log_low = special.log_ndtr(-low_u)
    in_upper = log_low + log1mexp(log_low - special.log_ndtr(-high_u))

    low_m, high_m = fnp.where(across, low, -1.0), fnp.where(across, high, 1.0)
    in_middle = fnp.log1p(-special.ndtr(low_m) - special.ndtr(-high_m))

    return fnp.where(lower_tail, in_lower, fnp.where(upper_tail, in_upper, in_middle))


def _standardized(x, a, b, loc, scale):
    # z = (x - loc) / scale, where z is strictly between a and b, and a point strictly
    # between them elsewhere (the mass between a and a would put an infinite derivative
    # into a masked branch); whether z <= a, whether z >= b; whether the parameters are
    # valid; log of the mass between a and b.
    x, a, b, loc, scale = inexact_all(x, a, b, loc, scale)
    valid = (a < b) & (scale > 0)
    a_safe, b_safe = fnp.where(valid, a, -1.0), fnp.where(valid, b, 1.0)
    z = fnp.divide(x - loc, scale)
    below, above = z <= a_safe, z >= b_safe
    finite_a, finite_b = fnp.isfinite(a_safe), fnp.isfinite(b_safe)
    inner = fnp.where(finite_a & finite_b, 0.5 * (a_safe + b_safe),
                      fnp.where(finite_a, a_safe + 1.0,
                                fnp.where(finite_b, b_safe - 1.0, 0.0)))
    z_safe = fnp.where(below | above, inner, z)
    return (z, z_safe, a_safe, b_safe, below, above, valid,
            _log_mass_between(a_safe, b_safe), scale)


def logpdf(x, a, b, loc=0, scale=1):
    """``log`` of the density ``phi(z) / (scale (ndtr(b) - ndtr(a)))``, ``z = (x - loc) /
    scale``, ``phi`` the standard normal density; ``-inf`` outside ``[a, b]``, nan unless
    ``a < b`` and ``scale > 0``.

    >>> import numpy as np
    >>> logpdf(np.array([-2.0, 0.0, 2.0]), -1.0, 1.0).round(10)
    array([       -inf, -0.53722339,        -inf])
    """
    z, _, a_safe, b_safe, _, _, valid, log_mass, scale = _standardized(x, a, b, loc, scale)
    value = -0.5 * z * z - _LOG_SQRT_2PI - log_mass - fnp.log(scale)
    value = fnp.where((z < a_safe) | (z > b_safe), -np.inf, value)
    return nan_unless(valid, value)


def pdf(x, a, b, loc=0, scale=1):
    """The density ``exp(logpdf(x, a, b, loc, scale))``.

    >>> round(float(pdf(0.0, -1.0, 1.0)), 10)
    0.5843685673
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _log_cdf_and_sf(x, a, b, loc, scale, upper):
    # log(cdf), or log(sf) if upper: each as the log of a mass between bounds less that
    # between a and b, or, where that probability exceeds 1/2, as log(1 - the other one)
    # (the difference of logs would keep only its rounding there).
    _, z_safe, a_safe, b_safe, below, above, valid, log_mass, _ = _standardized(
        x, a, b, loc, scale)
    log_lower = _log_mass_between(a_safe, z_safe) - log_mass
    log_upper = _log_mass_between(z_safe, b_safe) - log_mass
    if upper:
        log_lower, log_upper, below, above = log_upper, log_lower, above, below
    large = log_lower > -_LOG_2
    value = fnp.where(large, log1mexp(-fnp.where(large, log_upper, -1.0)), log_lower)
    return nan_unless(valid, fnp.where(below, -np.inf, fnp.where(above, 0.0, value)))


def logcdf(x, a, b, loc=0, scale=1):
    """``log(cdf)``: the log of the mass between ``a`` and ``z`` less that between ``a``
    and ``b`` (``log(1 - sf)`` above the median); ``-inf`` at and below ``a``, 0 at and
    above ``b``.

    >>> round(float(logcdf(0.0, -1.0, 1.0)), 10)  # log(1/2)
    -0.6931471806
    """
    return _log_cdf_and_sf(x, a, b, loc, scale, upper=False)


def cdf(x, a, b, loc=0, scale=1):
    """The distribution function ``exp(logcdf(x, a, b, loc, scale))``.

    >>> round(float(cdf(1.0, 0.0, np.inf)), 10)  # P(|Z| <= 1)
    0.6826894921
    """
    return fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """``log(sf)``: the log of the mass between ``z`` and ``b`` less that between ``a`` and
    ``b`` (``log(1 - cdf)`` below the median); 0 at and below ``a``, ``-inf`` at and above
    ``b``.

    >>> round(float(logsf(0.0, -1.0, 1.0)), 10)
    -0.6931471806
    """
    return _log_cdf_and_sf(x, a, b, loc, scale, upper=True)


def sf(x, a, b, loc=0, scale=1):
    """The survival function ``exp(logsf(x, a, b, loc, scale))``.

    >>> round(float(sf(30.0, 29.0, 31.0) * 1e13), 10)  # far in the tail, still accurate
    1.4914997574
    """
    return fnp.exp(logsf(x, a, b, loc, scale))


def __dir__() -> list[str]:
    return sorted(__all__)
