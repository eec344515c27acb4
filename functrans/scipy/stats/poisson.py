"""The Poisson distribution with mean ``mu`` on the integers from ``loc``
(``jax.scipy.stats.poisson``).  Differentiable in ``mu``; ``k`` is a count.

>>> import functrans.scipy.stats.poisson as poisson
>>> round(float(poisson.pmf(0, 2.0)), 10)  # exp(-2)
0.1353352832
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """``k log(mu) - mu - log(k!)`` for ``k - loc`` a non-negative integer, else ``-inf``.

    >>> import numpy as np
    >>> logpmf(np.array([0.0, 1.5, -1.0]), 2.0)
    array([ -2., -inf, -inf])
    """
    k, mu, loc = inexact_all(k, mu, loc)
    k = k - loc
    valid, unknown = (k >= 0) & (k == fnp.floor(k)), fnp.isnan(k)
    k = fnp.where(valid, k, 0.0)
    value = special.xlogy(k, mu) - special.gammaln(k + 1) - mu
    value = fnp.where(unknown, np.nan, fnp.where(valid, value, -np.inf))
    return nan_unless(mu >= 0, value)


def pmf(k, mu, loc=0):
    """The probability ``exp(logpmf(k, mu, loc))``.

    >>> round(float(pmf(2, 2.0)), 10)  # 2 exp(-2)
    0.2706705665
    """
    return fnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """``P(K <= k) = gammaincc(floor(k) + 1, mu)``, 0 below ``loc``.

    >>> round(float(cdf(1.5, 2.0)), 10)  # 3 exp(-2)
    0.4060058497
    """
    k, mu, loc = inexact_all(k, mu, loc)
    k = fnp.floor(k - loc)
    valid = k >= 0
    value = special.gammaincc(fnp.where(valid, k, 0.0) + 1, mu)
    value = fnp.where(fnp.isnan(k), np.nan, fnp.where(valid, value, 0.0))
    return nan_unless(mu >= 0, value)


def __dir__() -> list[str]:
    return sorted(__all__)
