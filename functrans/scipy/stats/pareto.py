"""The Pareto distribution with shape ``b`` on ``[loc + scale, inf)``
(``jax.scipy.stats.pareto``): the survival function falls as ``y^(-b)``, ``y = (x - loc) /
scale``.

>>> import functrans.scipy.stats.pareto as pareto
>>> round(float(pareto.sf(2.0, 3.0)), 12)  # 2^-3
0.125
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log1mexp, nan_unless, quantile

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _log_standardized(x, b, loc, scale):
    # log(y), y = (x - loc) / scale, where y > 1 (1 elsewhere: the formulas and their
    # derivatives stay finite), whether y < 1 and whether y == 1, and whether the
    # parameters are valid.
    x, b, loc, scale = inexact_all(x, b, loc, scale)
    y = fnp.divide(x - loc, scale)
    below, at_one = y < 1, y == 1
    log_y = fnp.log(fnp.where(below | at_one, 2.0, y))
    return fnp.where(at_one, 0.0, log_y), b, below, at_one, scale, (b > 0) & (scale > 0)


def logpdf(x, b, loc=0, scale=1):
    """``log`` of the density ``b y^(-b-1) / scale``; ``-inf`` where ``y < 1``.

    >>> import numpy as np
    >>> logpdf(np.array([0.5, 1.0, np.e]), 1.0)
    array([-inf,   0.,  -2.])
    """
    log_y, b, below, _, scale, valid = _log_standardized(x, b, loc, scale)
    value = fnp.log(b) - (b + 1) * log_y - fnp.log(scale)
    return nan_unless(valid, fnp.where(below, -np.inf, value))


def pdf(x, b, loc=0, scale=1):
    """The density ``exp(logpdf(x, b, loc, scale))``.

    >>> round(float(pdf(2.0, 1.0)), 12)  # 1 / 2^2
    0.25
    """
    return fnp.exp(logpdf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    """``log(sf(x, b, loc, scale))``: ``-b log(y)``, 0 where ``y < 1``.

    >>> round(float(logsf(np.e, 2.0)), 12)
    -2.0
    """
    log_y, b, below, _, _, valid = _log_standardized(x, b, loc, scale)
    return nan_unless(valid, fnp.where(below, 0.0, -b * log_y))


def sf(x, b, loc=0, scale=1):
    """The survival function ``y^(-b)``, 1 where ``y < 1``.

    >>> round(float(sf(3.0, 2.0, loc=1.0)), 12)  # 2^-2
    0.25
    """
    return fnp.exp(logsf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """The distribution function ``1 - y^(-b)``, as ``-expm1(-b log(y))`` (accurate near
    ``y = 1``), 0 where ``y < 1``.

    >>> round(float(cdf(2.0, 3.0)), 12)
    0.875
    """
    log_y, b, below, _, _, valid = _log_standardized(x, b, loc, scale)
    return nan_unless(valid, fnp.where(below, 0.0, -fnp.expm1(-b * log_y)))


def logcdf(x, b, loc=0, scale=1):
    """``log(cdf(x, b, loc, scale))``, accurate near ``y = 1`` and far in the upper tail;
    ``-inf`` where ``y <= 1``.

    >>> round(float(logcdf(2.0, 1.0)), 10)  # log(1/2)
    -0.6931471806
    """
    log_y, b, below, at_one, _, valid = _log_standardized(x, b, loc, scale)
    edge = below | at_one
    value = log1mexp(b * fnp.where(edge, 1.0, log_y))
    return nan_unless(valid, fnp.where(edge, -np.inf, value))


def ppf(q, b, loc=0, scale=1):
    """The quantile function ``loc + scale (1 - q)^(-1/b)``, the inverse of ``cdf``
    (through ``log1p(-q)``); nan outside ``[0, 1]``.

    >>> round(float(ppf(0.75, 2.0)), 12)
    2.0
    """
    q, b, loc, scale = inexact_all(q, b, loc, scale)
    inside = (q >= 0) & (q < 1)
    value = loc + scale * fnp.exp(-fnp.log1p(-fnp.where(inside, q, 0.5)) / b)
    return nan_unless((b > 0) & (scale > 0), quantile(q, value, loc + scale, np.inf))


def __dir__() -> list[str]:
    return sorted(__all__)
