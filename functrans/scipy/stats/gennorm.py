"""The generalized normal distribution with shape ``beta`` (``jax.scipy.stats.gennorm``):
density proportional to ``exp(-|x|^beta)``; ``beta = 2`` is a normal distribution, ``beta
= 1`` the Laplace distribution.  ``cdf`` differentiates in ``x`` to any order and twice in
``beta`` (see ``functrans.scipy.special.gammainc``).

>>> import functrans.scipy.stats.gennorm as gennorm
>>> round(float(gennorm.pdf(0.0, 1.0)), 12)  # the Laplace density at 0
0.5
"""
from __future__ import annotations

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logpdf", "pdf"]


def _power(x, beta):
    # |x|^beta and whether x is nonzero; at x = 0 the power sees 1, so that the derivative
    # in beta (|x|^beta log|x|) is 0 there rather than 0 * -inf.
    nonzero = x != 0
    return fnp.where(nonzero, fnp.power(fnp.abs(fnp.where(nonzero, x, 1.0)), beta),
                     0.0), nonzero


def logpdf(x, beta):
    """``log`` of the density ``beta exp(-|x|^beta) / (2 Gamma(1 / beta))``.

    >>> round(float(logpdf(1.0, 2.0)), 10)  # the normal density of variance 1/2 at 1
    -1.5723649429
    """
    x, beta = inexact_all(x, beta)
    power, _ = _power(x, beta)
    value = fnp.log(0.5 * beta) - special.gammaln(fnp.reciprocal(beta)) - power
    return nan_unless(beta > 0, value)


def pdf(x, beta):
    """The density ``exp(logpdf(x, beta))``.

    >>> round(float(pdf(0.0, 2.0)), 10)  # 1 / sqrt(pi)
    0.5641895835
    """
    return fnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """The distribution function ``gammaincc(1/beta, |x|^beta) / 2`` below 0, ``1 -
    gammaincc(1/beta, |x|^beta) / 2`` above (no cancellation in either tail).

    >>> round(float(cdf(-1.0, 1.0)), 10)  # exp(-1) / 2
    0.1839397206
    """
    x, beta = inexact_all(x, beta)
    power, nonzero = _power(x, beta)
    tail = 0.5 * special.gammaincc(fnp.reciprocal(beta), fnp.where(nonzero, power, 1.0))
    value = fnp.where(x < 0, tail, 1.0 - tail)
    # At 0 the value is 1/2 and the derivative in x the density there (the tail's own
    # derivative would be 0 * inf).
    at_zero = 0.5 + x * (0.5 * beta * fnp.exp(-special.gammaln(fnp.reciprocal(beta))))
    return nan_unless(beta > 0, fnp.where(nonzero, value, at_zero))


def __dir__() -> list[str]:
    return sorted(__all__)
