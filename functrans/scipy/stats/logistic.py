"""The logistic distribution with median ``loc`` and scale ``scale``
(``jax.scipy.stats.logistic``): its distribution function is ``expit``, its quantile
function ``logit``.

>>> import functrans.scipy.stats.logistic as logistic
>>> round(float(logistic.cdf(0.0)), 12)
0.5
"""
from __future__ import annotations

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``exp(-z) / (scale (1 + exp(-z))^2)``, ``z = (x - loc) /
    scale``, as ``-2 logaddexp(z/2, -z/2) - log(scale)`` (even in ``z``, smooth at 0).

    >>> round(float(logpdf(0.0)), 10)  # log(1/4)
    -1.3862943611
    """
    x, loc, scale = inexact_all(x, loc, scale)
    half = fnp.divide(x - loc, 2.0 * scale)
    return nan_unless(scale > 0, -2.0 * fnp.logaddexp(half, -half) - fnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> round(float(pdf(0.0, scale=0.5)), 12)
    0.5
    """
    return fnp.exp(logpdf(x, loc, scale))


def _expit(z):
    # 1 / (1 + exp(-z)), as exp(z) / (1 + exp(z)) below 0: relatively accurate in the
    # lower tail (lax.logistic's tanh form keeps only an absolute accuracy there), and each
    # exponential sees only its own side, so neither overflows into the derivative.
    upper = z >= 0
    z_upper, z_lower = fnp.where(upper, z, 0.0), fnp.where(upper, 0.0, z)
    e = fnp.exp(z_lower)
    return fnp.where(upper, 1.0 / (1.0 + fnp.exp(-z_upper)), e / (1.0 + e))


def cdf(x, loc=0, scale=1):
    """The distribution function ``expit(z)``, relatively accurate in the lower tail.

    >>> round(float(cdf(2.0, loc=2.0)), 12)
    0.5
    """
    x, loc, scale = inexact_all(x, loc, scale)
    return nan_unless(scale > 0, _expit(fnp.divide(x - loc, scale)))


def sf(x, loc=0, scale=1):
    """The survival function ``expit(-z)``, accurate in the upper tail.

    >>> import numpy as np
    >>> round(float(sf(40.0) / np.exp(-40.0)), 12)
    1.0
    """
    x, loc, scale = inexact_all(x, loc, scale)
    return nan_unless(scale > 0, _expit(fnp.divide(loc - x, scale)))


def ppf(x, loc=0, scale=1):
    """The quantile function ``loc + scale logit(x)`` of the probability ``x`` (JAX's name),
    the inverse of ``cdf``.

    >>> round(float(ppf(0.5, loc=2.0)), 12)
    2.0
    """
    x, loc, scale = inexact_all(x, loc, scale)
    return nan_unless(scale > 0, loc + scale * special.logit(x))


def isf(x, loc=0, scale=1):
    """The inverse of ``sf``: ``loc - scale logit(x)``.

    >>> round(float(isf(0.25)), 10)  # log(3)
    1.0986122887
    """
    x, loc, scale = inexact_all(x, loc, scale)
    return nan_unless(scale > 0, loc - scale * special.logit(x))


def __dir__() -> list[str]:
    return sorted(__all__)
