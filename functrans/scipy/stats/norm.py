"""The normal distribution with mean ``loc`` and standard deviation ``scale``
(``jax.scipy.stats.norm``).

>>> import functrans.scipy.stats.norm as norm
>>> round(float(norm.cdf(1.0, loc=1.0, scale=2.0)), 12)
0.5
"""
from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless, standardized

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(-z^2 / 2) / (scale sqrt(2 pi))``, ``z = (x - loc) /
    scale``.

    >>> round(float(logpdf(0.0)), 10)
    -0.9189385332
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -0.5 * z * z - _LOG_SQRT_2PI - fnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(0.0)), 10)
    0.3989422804
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``P(X <= x)``.

    >>> float(cdf(0.0))
    0.5
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(z))


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x))``, accurate far in the lower tail.

    >>> round(float(logcdf(-40.0)), 6)
    -804.608442
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(z))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf(x)``, accurate in the upper tail.

    >>> float(sf(0.0))
    0.5
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(-z))


def logsf(x, loc=0, scale=1):
    """``log(sf(x))``, accurate far in the upper tail.

    >>> round(float(logsf(40.0)), 6)
    -804.608442
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(-z))


def ppf(q, loc=0, scale=1):
    """The quantile function, the inverse of ``cdf``.

    >>> round(float(ppf(0.5, loc=3.0)), 12)
    3.0
    """
    q, loc, scale = inexact_all(q, loc, scale)
    return nan_unless(scale > 0, loc + scale * special.ndtri(q))


def isf(q, loc=0, scale=1):
    """The inverse of ``sf``: ``ppf(1 - q)``, computed without the rounding of ``1 - q``.

    >>> round(float(isf(0.5, loc=3.0)), 12)
    3.0
    """
    q, loc, scale = inexact_all(q, loc, scale)
    return nan_unless(scale > 0, loc - scale * special.ndtri(q))


def __dir__() -> list[str]:
    return sorted(__all__)
