"""The left-skewed Gumbel (extreme value) distribution with mode ``loc`` and scale
``scale`` (``jax.scipy.stats.gumbel_l``): the law of the minimum of many samples, the
mirror image of ``gumbel_r``.

>>> import functrans.scipy.stats.gumbel_l as gumbel_l
>>> round(float(gumbel_l.sf(0.0)), 10)  # exp(-1)
0.3678794412
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log_probability, nan_unless, quantile, standardized

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(z - exp(z)) / scale``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(0.0)), 12)
    -1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, z - fnp.exp(z) - fnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(0.0)), 10)  # exp(-1)
    0.3678794412
    """
    return fnp.exp(logpdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """``log(sf(x, loc, scale))``: ``-exp(z)``.

    >>> float(logsf(0.0))
    -1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -fnp.exp(z))


def sf(x, loc=0, scale=1):
    """The survival function ``exp(-exp(z))``.

    >>> round(float(sf(1.0, loc=1.0, scale=3.0)), 10)
    0.3678794412
    """
    return fnp.exp(logsf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``1 - exp(-exp(z))``, as ``-expm1(-exp(z))``, accurate in
    the lower tail.

    >>> round(float(cdf(-40.0) / np.exp(-40.0)), 12)
    1.0
    """
    z, scale = standardized(x, loc, scale)
    return nan_unless(scale > 0, -fnp.expm1(-fnp.exp(z)))


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x, loc, scale))``, as ``log1p(-sf)`` where the distribution function
    nears 1.

    >>> round(float(logcdf(-40.0)), 10)
    -40.0
    """
    return log_probability(cdf(x, loc, scale), sf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function ``loc + scale log(-log1p(-p))``, the inverse of ``cdf``; nan
    outside ``[0, 1]``.

    >>> round(float(ppf(1 - np.exp(-1.0), loc=2.0)), 12)
    2.0
    """
    p, loc, scale = inexact_all(p, loc, scale)
    inside = (p > 0) & (p < 1)
    value = loc + scale * fnp.log(-fnp.log1p(-fnp.where(inside, p, 0.5)))
    return nan_unless(scale > 0, quantile(p, value, -np.inf, np.inf))


def __dir__() -> list[str]:
    return sorted(__all__)
