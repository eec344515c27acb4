"""Student's t distribution with ``df`` degrees of freedom, shifted by ``loc`` and scaled by
``scale`` (``jax.scipy.stats.t``).

>>> import functrans.scipy.stats.t as t
>>> round(float(t.logpdf(0.0, 1.0)), 10)  # the Cauchy density at 0 is 1 / pi
-1.1447298858
"""
from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless, standardized

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """``log`` of the density ``Gamma((df+1)/2) / (Gamma(df/2) sqrt(df pi) scale)
    (1 + z^2 / df)^(-(df+1)/2)``, ``z = (x - loc) / scale``.

    >>> round(float(logpdf(0.5, 3.0, 1.0, 2.0)), 8)
    -1.7352746
    """
    x, df, loc, scale = inexact_all(x, df, loc, scale)
    z, scale = standardized(x, loc, scale)
    half = 0.5 * (df + 1)
    normalizer = (special.gammaln(half) - special.gammaln(0.5 * df)
                  - 0.5 * fnp.log(df * math.pi) - fnp.log(scale))
    return nan_unless((df > 0) & (scale > 0), normalizer - half * fnp.log1p(z * z / df))


def pdf(x, df, loc=0, scale=1):
    """The density ``exp(logpdf(x, df, loc, scale))``.

    >>> round(float(pdf(0.0, 1.0)), 10)
    0.3183098862
    """
    return fnp.exp(logpdf(x, df, loc, scale))


def __dir__() -> list[str]:
    return sorted(__all__)
