"""The negative binomial distribution: failures before the ``n``-th success of probability
``p``, counted from ``loc`` (``jax.scipy.stats.nbinom``).  Differentiable in ``n`` (any real
``n > 0``) and ``p``; ``k`` is a count.

>>> import functrans.scipy.stats.nbinom as nbinom
>>> round(float(nbinom.pmf(0, 2, 0.5)), 12)  # two successes first: 1/4
0.25
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """``log(Gamma(y + n) / (Gamma(n) y!)) + n log(p) + y log(1 - p)``, ``y = k - loc``:
    ``-inf`` unless ``y`` is a non-negative integer; nan for ``n <= 0``, ``p`` outside
    ``(0, 1]`` or ``k`` nan, as SciPy.

    >>> import numpy as np
    >>> logpmf(np.array([-1.0, 0.0, 0.5, 1.0]), 1.0, 0.5).round(6)
    array([     -inf, -0.693147,      -inf, -1.386294])
    """
    k, n, p, loc = inexact_all(k, n, p, loc)
    y = k - loc
    valid = (n > 0) & (p > 0) & (p <= 1)
    inside = valid & (y >= 0) & (y == fnp.floor(y))
    # Stand-ins where the value is masked, and at p = 1 for y = 0 (the last term is 0
    # there whatever p), keep the derivatives finite.
    y = fnp.where(inside, y, 0.0)
    n = fnp.where(valid, n, 1.0)
    p = fnp.where(valid, p, 0.5)
    value = (special.gammaln(y + n) - special.gammaln(n) - special.gammaln(y + 1)
             + n * fnp.log(p) + special.xlog1py(y, -fnp.where((y == 0) & (p == 1), 0.0, p)))
    return fnp.where(valid & ~fnp.isnan(k - loc), fnp.where(inside, value, -np.inf), np.nan)


def pmf(k, n, p, loc=0):
    """The probability ``exp(logpmf(k, n, p, loc))``.

    >>> round(float(pmf(1, 1, 0.5)), 12)
    0.25
    """
    return fnp.exp(logpmf(k, n, p, loc))


def __dir__() -> list[str]:
    return sorted(__all__)
