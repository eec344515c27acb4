"""The binomial distribution: successes in ``n`` trials of probability ``p``, counted from
``loc`` (``jax.scipy.stats.binom``).  Differentiable in ``p`` and in ``n``, which may be any
real ``n >= 0`` as in JAX (the log-factorials extended by ``gammaln``); ``k`` is a count.

>>> import functrans.scipy.stats.binom as binom
>>> round(float(binom.pmf(1, 2, 0.5)), 12)
0.5
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """``log(n! / (y! (n - y)!)) + y log(p) + (n - y) log(1 - p)``, ``y = k - loc``: ``-inf``
    unless ``y`` is an integer with ``0 <= y < n + 1``; nan for ``n < 0``, ``p`` outside
    ``[0, 1]`` or ``k`` nan, as SciPy.

    >>> import numpy as np
    >>> logpmf(np.array([-1.0, 0.0, 1.5, 3.0]), 3.0, 0.5).round(6)
    array([     -inf, -2.079442,      -inf, -2.079442])
    """
    k, n, p, loc = inexact_all(k, n, p, loc)
    y = k - loc
    valid = (n >= 0) & (p >= 0) & (p <= 1)
    inside = valid & (y >= 0) & (y < n + 1) & (y == fnp.floor(y))
    # Safe stand-ins where the value is masked keep every derivative finite there; so do
    # those at p = 0 (y = 0) and p = 1 (y = n), where a term is 0 whatever p.
    y = fnp.where(inside, y, 0.0)
    n = fnp.where(inside, n, 0.0)
    p = fnp.where(valid, p, 0.5)
    rest = n - y
    value = (special.gammaln(n + 1) - special.gammaln(y + 1) - special.gammaln(rest + 1)
             + special.xlogy(y, fnp.where((y == 0) & (p == 0), 1.0, p))
             + special.xlog1py(rest, -fnp.where((rest == 0) & (p == 1), 0.0, p)))
    return fnp.where(valid & ~fnp.isnan(k - loc), fnp.where(inside, value, -np.inf), np.nan)


def pmf(k, n, p, loc=0):
    """The probability ``exp(logpmf(k, n, p, loc))``.

    >>> round(float(pmf(2, 4, 0.5)), 12)  # 6 / 16
    0.375
    """
    return fnp.exp(logpmf(k, n, p, loc))


def __dir__() -> list[str]:
    return sorted(__all__)
