"""The Laplace (double exponential) distribution with median ``loc`` and scale ``scale``
(``jax.scipy.stats.laplace``).

>>> import functrans.scipy.stats.laplace as laplace
>>> round(float(laplace.pdf(0.0)), 12)
0.5
"""
from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logpdf", "pdf"]

_LOG_2 = math.log(2.0)


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(-|z|) / (2 scale)``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(1.0)), 10)  # -1 - log(2)
    -1.6931471806
    """
    x, loc, scale = inexact_all(x, loc, scale)
    z = fnp.divide(x - loc, scale)
    return nan_unless(scale > 0, -fnp.abs(z) - _LOG_2 - fnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(1.0, loc=1.0, scale=2.0)), 12)
    0.25
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function: ``exp(z) / 2`` below the median, ``1 - exp(-z) / 2``
    above it.

    >>> round(float(cdf(0.0)), 12)
    0.5
    """
    x, loc, scale = inexact_all(x, loc, scale)
    z = fnp.divide(x - loc, scale)
    # Each exponential sees only its own side, so neither overflows into the derivative.
    upper = z > 0
    value = fnp.where(upper, 1.0 - 0.5 * fnp.exp(-fnp.where(upper, z, 0.0)),
                      0.5 * fnp.exp(fnp.where(upper, 0.0, z)))
    return nan_unless(scale > 0, value)


def __dir__() -> list[str]:
    return sorted(__all__)
