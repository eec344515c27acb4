"""The geometric distribution: the trial of the first success of probability ``p``, from 1
(shifted by ``loc``) (``jax.scipy.stats.geom``).  Differentiable in ``p``; ``k`` is a count.

>>> import functrans.scipy.stats.geom as geom
>>> round(float(geom.pmf(2, 0.5)), 12)
0.25
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """``(y - 1) log(1 - p) + log(p)``, ``y = k - loc``: ``-inf`` unless ``y`` is an integer
    ``>= 1``; nan for ``p`` outside ``(0, 1]`` or ``k`` nan, as SciPy.

    >>> import numpy as np
    >>> logpmf(np.array([0.0, 1.0, 1.5, 2.0]), 0.5).round(6)
    array([     -inf, -0.693147,      -inf, -1.386294])
    """
    k, p, loc = inexact_all(k, p, loc)
    y = k - loc
    valid = (p > 0) & (p <= 1)
    inside = valid & (y >= 1) & (y == fnp.floor(y))
    # Stand-ins where the value is masked, and at p = 1 for y = 1 (the first term is 0
    # there whatever p), keep the derivatives finite.
    failures = fnp.where(inside, y - 1, 0.0)
    p = fnp.where(valid, p, 0.5)
    value = (special.xlog1py(failures, -fnp.where((failures == 0) & (p == 1), 0.0, p))
             + fnp.log(p))
    return fnp.where(valid & ~fnp.isnan(y), fnp.where(inside, value, -np.inf), np.nan)


def pmf(k, p, loc=0):
    """The probability ``exp(logpmf(k, p, loc))``.

    >>> round(float(pmf(1, 0.25)), 12)
    0.25
    """
    return fnp.exp(logpmf(k, p, loc))


def __dir__() -> list[str]:
    return sorted(__all__)
