"""The gamma distribution with shape ``a``, shifted by ``loc`` and scaled by ``scale``
(``jax.scipy.stats.gamma``).  The distribution functions (``cdf``, ``sf`` and their logs)
differentiate in ``x``, ``loc`` and ``scale`` to any order and twice in ``a`` (see
``functrans.scipy.special.gammainc``).  nan for invalid parameters, as SciPy.

>>> import functrans.scipy.stats.gamma as gamma
>>> round(float(gamma.logpdf(1.0, 2.0)), 12)  # log(x exp(-x)) at 1
-1.0
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """``log`` of the density ``y^(a-1) exp(-y) / (Gamma(a) scale)``, ``y = (x - loc) /
    scale``; ``-inf`` where ``y < 0``.

    >>> import numpy as np
    >>> logpdf(np.array([-1.0, 1.0]), 1.0)
    array([-inf,  -1.])
    """
    x, a, loc, scale = inexact_all(x, a, loc, scale)
    y = fnp.divide(x - loc, scale)
    inside, below = y >= 0, y < 0        # neither: nan
    y = fnp.where(inside, y, 1.0)  # keeps log(y) and its derivatives finite outside
    value = special.xlogy(a - 1, y) - y - special.gammaln(a) - fnp.log(scale)
    value = fnp.where(below, -np.inf, fnp.where(inside, value, np.nan))
    return nan_unless((a > 0) & (scale > 0), value)


def pdf(x, a, loc=0, scale=1):
    """The density ``exp(logpdf(x, a, loc, scale))``.

    >>> round(float(pdf(1.0, 1.0)), 10)
    0.3678794412
    """
    return fnp.exp(logpdf(x, a, loc, scale))


def _standardized(x, a, loc, scale):
    x, a, loc, scale = inexact_all(x, a, loc, scale)
    return fnp.maximum(fnp.divide(x - loc, scale), 0.0), (a > 0) & (scale > 0), a


def cdf(x, a, loc=0, scale=1):
    """The distribution function ``gammainc(a, y)``, 0 where ``y <= 0``.

    >>> round(float(cdf(2.0, 1.0)), 10)  # 1 - exp(-2)
    0.8646647168
    """
    y, valid, a = _standardized(x, a, loc, scale)
    return nan_unless(valid, special.gammainc(a, y))


def logcdf(x, a, loc=0, scale=1):
    """``log(cdf(x))``.

    >>> round(float(logcdf(2.0, 1.0)), 10)
    -0.1454134579
    """
    return fnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """The survival function ``gammaincc(a, y)``, accurate in the upper tail.

    >>> round(float(sf(2.0, 1.0)), 10)  # exp(-2)
    0.1353352832
    """
    y, valid, a = _standardized(x, a, loc, scale)
    return nan_unless(valid, special.gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """``log(sf(x))``.

    >>> round(float(logsf(2.0, 1.0)), 10)
    -2.0
    """
    return fnp.log(sf(x, a, loc, scale))


def __dir__() -> list[str]:
    return sorted(__all__)
