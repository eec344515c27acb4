"""The chi-squared distribution with ``df`` degrees of freedom, shifted by ``loc`` and
scaled by ``scale`` (``jax.scipy.stats.chi2``): the gamma distribution with shape ``df / 2``
and scale ``2 scale``.  The distribution functions differentiate in ``x``, ``loc`` and
``scale`` to any order and twice in ``df`` (see ``functrans.scipy.special.gammainc``).

>>> import functrans.scipy.stats.chi2 as chi2
>>> round(float(chi2.cdf(2.0, 2.0)), 10)  # 1 - exp(-1)
0.6321205588
"""
from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log_probability, nan_unless

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_2 = math.log(2.0)


def logpdf(x, df, loc=0, scale=1):
    """``log`` of the density ``y^(k-1) exp(-y/2) / (2^k Gamma(k) scale)``, ``k = df / 2``,
    ``y = (x - loc) / scale``; ``-inf`` where ``y < 0``.

    >>> import numpy as np
    >>> logpdf(np.array([-1.0, 0.0, 2.0]), 2.0).round(4)
    array([   -inf, -0.6931, -1.6931])
    """
    x, df, loc, scale = inexact_all(x, df, loc, scale)
    y = fnp.divide(x - loc, scale)
    outside = y < 0
    y = fnp.where(outside, 1.0, y)  # keeps log(y) and its derivatives finite outside
    k = 0.5 * df
    value = (special.xlogy(k - 1, y) - 0.5 * y - special.gammaln(k) - k * _LOG_2
             - fnp.log(scale))
    return nan_unless((df > 0) & (scale > 0), fnp.where(outside, -np.inf, value))


def pdf(x, df, loc=0, scale=1):
    """The density ``exp(logpdf(x, df, loc, scale))``.

    >>> round(float(pdf(2.0, 2.0)), 10)  # exp(-1) / 2
    0.1839397206
    """
    return fnp.exp(logpdf(x, df, loc, scale))


def _half_standardized(x, df, loc, scale):
    # y / 2 clipped at 0 (the distribution functions are those of 0 below the support),
    # the shape df / 2, and whether the parameters are valid.
    x, df, loc, scale = inexact_all(x, df, loc, scale)
    half_y = fnp.maximum(fnp.divide(x - loc, 2.0 * scale), 0.0)
    return half_y, 0.5 * df, (df > 0) & (scale > 0)


def cdf(x, df, loc=0, scale=1):
    """The distribution function ``gammainc(df / 2, y / 2)``, 0 where ``y <= 0``.

    >>> round(float(cdf(1.0, 1.0)), 10)  # P(|Z| <= 1) for a standard normal Z
    0.6826894921
    """
    half_y, k, valid = _half_standardized(x, df, loc, scale)
    return nan_unless(valid, special.gammainc(k, half_y))


def logcdf(x, df, loc=0, scale=1):
    """``log(cdf(x, df, loc, scale))``, as ``log1p(-sf)`` where the distribution function
    nears 1.

    >>> round(float(logcdf(2.0, 2.0)), 10)
    -0.4586751454
    """
    return _log_probability(x, df, loc, scale, upper=False)


def sf(x, df, loc=0, scale=1):
    """The survival function ``gammaincc(df / 2, y / 2)``, accurate in the upper tail.

    >>> round(float(sf(2.0, 2.0)), 10)  # exp(-1)
    0.3678794412
    """
    half_y, k, valid = _half_standardized(x, df, loc, scale)
    return nan_unless(valid, special.gammaincc(k, half_y))


def logsf(x, df, loc=0, scale=1):
    """``log(sf(x, df, loc, scale))``, as ``log1p(-cdf)`` where the survival function nears
    1.

    >>> round(float(logsf(4.0, 2.0)), 10)
    -2.0
    """
    return _log_probability(x, df, loc, scale, upper=True)


def _log_probability(x, df, loc, scale, upper):
    # log(cdf), or log(sf) if upper; at y = 0 the shape's derivative would be infinite,
    # so the functions see y = 1 there (the value is 0 or -inf whatever the shape).
    half_y, k, valid = _half_standardized(x, df, loc, scale)
    at_zero = half_y == 0
    half_y = fnp.where(at_zero, 1.0, half_y)
    lower, upper_tail = special.gammainc(k, half_y), special.gammaincc(k, half_y)
    if upper:
        value = fnp.where(at_zero, 0.0, log_probability(upper_tail, lower))
    else:
        value = fnp.where(at_zero, -np.inf, log_probability(lower, upper_tail))
    return nan_unless(valid, value)


def __dir__() -> list[str]:
    return sorted(__all__)
