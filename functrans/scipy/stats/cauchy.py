"""The Cauchy distribution with median ``loc`` and half-width ``scale``
(``jax.scipy.stats.cauchy``).

>>> import functrans.scipy.stats.cauchy as cauchy
>>> round(float(cauchy.cdf(1.0)), 12)  # a quarter of the mass lies above 1
0.75
"""
from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log_probability, nan_unless, quantile, standardized

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_LOG_PI = math.log(math.pi)


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``1 / (pi scale (1 + z^2))``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(0.0)), 10)  # log(1 / pi)
    -1.1447298858
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -_LOG_PI - fnp.log(scale) - fnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(1.0)), 10)  # 1 / (2 pi)
    0.1591549431
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``arctan2(1, -z) / pi``, the form of ``1/2 + arctan(z) /
    pi`` that keeps its accuracy in the lower tail.

    >>> float(cdf(-1e10) * 1e10 * np.pi)
    1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, fnp.arctan2(1.0, -z) / math.pi)


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x, loc, scale))``, as ``log1p(-sf)`` above the median (accurate where the
    distribution function nears 1).

    >>> round(float(logcdf(0.0)), 10)  # log(1/2)
    -0.6931471806
    """
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, computed as ``arctan2(1, z) / pi``, accurate in
    the upper tail.

    >>> round(float(sf(1.0)), 12)
    0.25
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, fnp.arctan2(1.0, z) / math.pi)


def logsf(x, loc=0, scale=1):
    """``log(sf(x, loc, scale))``, as ``log1p(-cdf)`` below the median.

    >>> round(float(logsf(1.0)), 10)  # log(1/4)
    -1.3862943611
    """
    return log_probability(sf(x, loc, scale), cdf(x, loc, scale))


def _standard_ppf(q):
    # tan(pi (q - 1/2)) where q - 1/2 is exact (Sterbenz), -cot(pi q) and cot(pi (1 - q))
    # in the tails, where q - 1/2 would round away the digits of a small q.
    low, high = q < 0.25, q > 0.75
    middle = ~(low | high)
    q_low = fnp.where(low, q, 0.125)
    q_high = fnp.where(high, q, 0.875)
    q_middle = fnp.where(middle, q, 0.5)
    return fnp.where(low, -1.0 / fnp.tan(math.pi * q_low),
                     fnp.where(high, 1.0 / fnp.tan(math.pi * (1.0 - q_high)),
                               fnp.tan(math.pi * (q_middle - 0.5))))


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale tan(pi (q - 1/2))``, the inverse of ``cdf``;
    ``-inf`` and ``inf`` at 0 and 1, nan outside ``[0, 1]``.

    >>> round(float(ppf(0.75, loc=1.0, scale=2.0)), 12)
    3.0
    """
    q, loc, scale = inexact_all(q, loc, scale)
    value = loc + scale * _standard_ppf(q)
    return nan_unless(scale > 0, quantile(q, value, -np.inf, np.inf))


def isf(q, loc=0, scale=1):
    """The inverse of ``sf``: ``ppf(1 - q)``, computed without the rounding of ``1 - q``.

    >>> round(float(isf(0.25, loc=1.0, scale=2.0)), 12)
    3.0
    """
    q, loc, scale = inexact_all(q, loc, scale)
    value = loc - scale * _standard_ppf(q)
    return nan_unless(scale > 0, quantile(q, value, np.inf, -np.inf))


def __dir__() -> list[str]:
    return sorted(__all__)
