"""The exponential distribution on ``[loc, inf)`` with mean ``loc + scale``
(``jax.scipy.stats.expon``).

>>> import functrans.scipy.stats.expon as expon
>>> round(float(expon.sf(2.0)), 12)  # exp(-2)
0.135335283237
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import log1mexp, nan_unless, quantile

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _standardized(x, loc, scale):
    # (x - loc) / scale, clipped at 0: below the support the distribution functions are
    # those of 0, with zero derivatives.
    x, loc, scale = inexact_all(x, loc, scale)
    return fnp.maximum(fnp.divide(x - loc, scale), 0.0), scale


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(-y) / scale``, ``y = (x - loc) / scale``; ``-inf`` where
    ``y < 0``.

    >>> import numpy as np
    >>> logpdf(np.array([-1.0, 1.0, 2.0]))
    array([-inf,  -1.,  -2.])
    """
    x, loc, scale = inexact_all(x, loc, scale)
    y = fnp.divide(x - loc, scale)
    value = fnp.where(y < 0, -np.inf, -y - fnp.log(scale))
    return nan_unless(scale > 0, value)


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(1.0)), 10)
    0.3678794412
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``1 - exp(-y)`` (as ``-expm1(-y)``), 0 where ``y < 0``.

    >>> round(float(cdf(1e-20)), 30)
    1e-20
    """
    y, scale = _standardized(x, loc, scale)
    return nan_unless(scale > 0, -fnp.expm1(-y))


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x, loc, scale))``, accurate near 0 and far in the upper tail.

    >>> bool(logcdf(40.0) == -np.exp(-40.0))
    True
    """
    y, scale = _standardized(x, loc, scale)
    at_zero = y == 0  # -inf, with a zero derivative rather than nan
    value = fnp.where(at_zero, -np.inf, log1mexp(fnp.where(at_zero, 1.0, y)))
    return nan_unless(scale > 0, value)


def sf(x, loc=0, scale=1):
    """The survival function ``exp(-y)``, 1 where ``y < 0``.

    >>> round(float(sf(1.0, scale=2.0)), 10)
    0.6065306597
    """
    return fnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """``log(sf(x, loc, scale))``: ``-y``, 0 where ``y < 0``.

    >>> float(logsf(3.0, loc=1.0))
    -2.0
    """
    y, scale = _standardized(x, loc, scale)
    return nan_unless(scale > 0, -y)


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc - scale log1p(-q)``, the inverse of ``cdf``; nan outside
    ``[0, 1]``.

    >>> round(float(ppf(1 - np.exp(-2.0))), 12)
    2.0
    """
    q, loc, scale = inexact_all(q, loc, scale)
    inside = (q >= 0) & (q <= 1)
    value = loc - scale * fnp.log1p(-fnp.where(inside, q, 0.5))
    return nan_unless(scale > 0, quantile(q, value, loc, np.inf))


def __dir__() -> list[str]:
    return sorted(__all__)
