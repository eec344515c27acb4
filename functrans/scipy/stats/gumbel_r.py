"""The right-skewed Gumbel (extreme value) distribution with mode ``loc`` and scale
``scale`` (``jax.scipy.stats.gumbel_r``): the law of the maximum of many samples.

>>> import functrans.scipy.stats.gumbel_r as gumbel_r
>>> round(float(gumbel_r.cdf(0.0)), 10)  # exp(-1)
0.3678794412
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log_probability, nan_unless, quantile, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(-z - exp(-z)) / scale``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(0.0)), 12)
    -1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -z - fnp.exp(-z) - fnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(0.0)), 10)  # exp(-1)
    0.3678794412
    """
    return fnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x, loc, scale))``: ``-exp(-z)``.

    >>> float(logcdf(0.0))
    -1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -fnp.exp(-z))


def cdf(x, loc=0, scale=1):
    """The distribution function ``exp(-exp(-z))``.

    >>> round(float(cdf(1.0, loc=1.0, scale=3.0)), 10)
    0.3678794412
    """
    return fnp.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, as ``-expm1(-exp(-z))``, accurate in the upper
    tail.

    >>> round(float(sf(40.0) / np.exp(-40.0)), 12)
    1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -fnp.expm1(-fnp.exp(-z)))


def logsf(x, loc=0, scale=1):
    """``log(sf(x, loc, scale))``, as ``log1p(-cdf)`` where the survival function nears 1.

    >>> round(float(logsf(40.0)), 10)
    -40.0
    """
    return log_probability(sf(x, loc, scale), cdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function ``loc - scale log(-log(p))``, the inverse of ``cdf``; nan
    outside ``[0, 1]``.

    >>> round(float(ppf(np.exp(-1.0), loc=2.0)), 12)
    2.0
    """
    p, loc, scale = inexact_all(p, loc, scale)
    inside = (p > 0) & (p < 1)
    value = loc - scale * fnp.log(-fnp.log(fnp.where(inside, p, 0.5)))
    return nan_unless(scale > 0, quantile(p, value, -np.inf, np.inf))


def __dir__() -> list[str]:
    return sorted(__all__)
