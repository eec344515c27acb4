"""The Bernoulli distribution: 1 with probability ``p``, else 0
(``jax.scipy.stats.bernoulli``).  Differentiable in ``p``.

>>> import functrans.scipy.stats.bernoulli as bernoulli
>>> round(float(bernoulli.pmf(1, 0.3)), 12)
0.3
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.core import get_aval
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """``log(p)`` at ``k - loc == 1``, ``log(1 - p)`` at 0, ``-inf`` elsewhere.

    >>> import numpy as np
    >>> logpmf(np.array([0, 1, 2]), 0.5).round(6)
    array([-0.693147, -0.693147,      -inf])
    """
    k, p, loc = inexact_all(k, p, loc)
    k = k - loc
    valid, unknown = (k == 0) | (k == 1), fnp.isnan(k)
    k = fnp.where(valid, k, 0.0)
    value = fnp.where(valid, special.xlogy(k, p) + special.xlog1py(1 - k, -p), -np.inf)
    value = fnp.where(unknown, np.nan, value)
    return nan_unless((p >= 0) & (p <= 1), value)


def pmf(k, p, loc=0):
    """The probability ``exp(logpmf(k, p, loc))``.

    >>> round(float(pmf(0, 0.25)), 12)
    0.75
    """
    return fnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """``P(K <= k)``: 0 below 0, ``1 - p`` on ``[0, 1)``, 1 from 1 on.

    >>> import numpy as np
    >>> cdf(np.array([-1.0, 0.5, 1.0]), 0.25)
    array([0.  , 0.75, 1.  ])
    """
    k, p = inexact_all(k, p)
    value = fnp.where(k < 0, 0.0, fnp.where(k < 1, 1 - p, 1.0))
    return nan_unless((p >= 0) & (p <= 1) & ~fnp.isnan(k), value)


def ppf(q, p):
    """The smallest ``k`` with ``cdf(k, p) >= q``: 0 up to ``q = 1 - p``, then 1 (as in
    JAX, 0 at ``q = 0``); nan outside ``[0, 1]``.

    >>> import numpy as np
    >>> ppf(np.array([0.0, 0.5, 0.9]), 0.25)
    array([0., 0., 1.])
    """
    q, p = inexact_all(q, p)
    k = fnp.astype(q > 1 - p, get_aval(q).dtype)
    return nan_unless((q >= 0) & (q <= 1) & (p >= 0) & (p <= 1), k)


def __dir__() -> list[str]:
    return sorted(__all__)
