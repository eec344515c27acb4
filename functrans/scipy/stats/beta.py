"""The beta distribution with shapes ``a`` and ``b`` on ``[loc, loc + scale]``
(``jax.scipy.stats.beta``).  The distribution functions are the regularized incomplete beta
function, differentiable in ``x``, ``loc`` and ``scale`` (not in ``a`` and ``b``, as in JAX).

>>> import functrans.scipy.stats.beta as beta
>>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)  # 6 y (1 - y) at 1/2
1.5
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    """``log`` of the density ``y^(a-1) (1-y)^(b-1) / (B(a, b) scale)``, ``y = (x - loc) /
    scale``; ``-inf`` outside ``[0, 1]``.

    >>> import numpy as np
    >>> logpdf(np.array([-0.5, 0.5]), 1.0, 1.0)
    array([-inf,   0.])
    """
    x, a, b, loc, scale = inexact_all(x, a, b, loc, scale)
    y = fnp.divide(x - loc, scale)
    inside, outside = (y >= 0) & (y <= 1), (y < 0) | (y > 1)    # neither: nan
    y = fnp.where(inside, y, 0.5)  # keeps the logs and their derivatives finite outside
    value = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
             - fnp.log(scale))
    value = fnp.where(outside, -np.inf, fnp.where(inside, value, np.nan))
    return nan_unless(_valid(a, b, scale), value)


def pdf(x, a, b, loc=0, scale=1):
    """The density ``exp(logpdf(x, a, b, loc, scale))``.

    >>> round(float(pdf(0.25, 1.0, 1.0)), 12)
    1.0
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def _valid(a, b, scale):
    return (a > 0) & (b > 0) & (scale > 0)


def _standardized(x, loc, scale):
    # (x - loc) / scale clipped into the support, where the distribution functions are 0 or 1.
    return fnp.clip(fnp.divide(x - loc, scale), 0.0, 1.0)


def cdf(x, a, b, loc=0, scale=1):
    """The distribution function ``betainc(a, b, y)``, ``y = (x - loc) / scale`` clipped to
    ``[0, 1]``; the derivative in ``a`` or ``b`` raises ValueError, as in JAX.

    >>> round(float(cdf(0.5, 2.0, 3.0)), 10)
    0.6875
    """
    x, a, b, loc, scale = inexact_all(x, a, b, loc, scale)
    return nan_unless(_valid(a, b, scale), special.betainc(a, b, _standardized(x, loc, scale)))


def logcdf(x, a, b, loc=0, scale=1):
    """``log(cdf(x, a, b, loc, scale))``.

    >>> float(logcdf(2.0, 2.0, 3.0))
    0.0
    """
    return fnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """The survival function ``1 - cdf``, computed as ``betainc(b, a, 1 - y)``.

    >>> round(float(sf(0.5, 2.0, 3.0)), 10)
    0.3125
    """
    x, a, b, loc, scale = inexact_all(x, a, b, loc, scale)
    value = special.betainc(b, a, 1.0 - _standardized(x, loc, scale))
    return nan_unless(_valid(a, b, scale), value)


def logsf(x, a, b, loc=0, scale=1):
    """``log(sf(x, a, b, loc, scale))``.

    >>> float(logsf(-1.0, 2.0, 3.0))
    0.0
    """
    return fnp.log(sf(x, a, b, loc, scale))


def __dir__() -> list[str]:
    return sorted(__all__)
