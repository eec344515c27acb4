"""The beta-binomial distribution: successes in ``n`` trials whose probability is drawn
from ``Beta(a, b)``, counted from ``loc`` (``jax.scipy.stats.betabinom``).  Differentiable
in ``a``, ``b`` and ``n``, which may be any real ``n >= 0`` as in JAX; ``k`` is a count.

>>> import functrans.scipy.stats.betabinom as betabinom
>>> round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 12)  # uniform p: each of 0, 1, 2 is 1/3
0.333333333333
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """``-log(n + 1) - log B(n - y + 1, y + 1) + log B(y + a, n - y + b) - log B(a, b)``,
    ``y = k - loc``: ``-inf`` unless ``y`` is an integer in ``[0, n]``; nan for ``n < 0``,
    ``a <= 0``, ``b <= 0`` or ``k`` nan, as SciPy.

    >>> import numpy as np
    >>> logpmf(np.array([-1.0, 0.0, 0.5, 2.0, 3.0]), 2.0, 1.0, 1.0).round(6)
    array([     -inf, -1.098612,      -inf, -1.098612,      -inf])
    """
    k, n, a, b, loc = inexact_all(k, n, a, b, loc)
    y = k - loc
    valid = (n >= 0) & (a > 0) & (b > 0)
    inside = valid & (y >= 0) & (y <= n) & (y == fnp.floor(y))
    # Stand-ins where the value is masked keep every derivative finite there.
    y = fnp.where(inside, y, 0.0)
    n = fnp.where(inside, n, 0.0)
    a = fnp.where(valid, a, 1.0)
    b = fnp.where(valid, b, 1.0)
    value = (special.betaln(y + a, n - y + b) - special.betaln(a, b) - fnp.log1p(n)
             - special.betaln(n - y + 1, y + 1))
    return fnp.where(valid & ~fnp.isnan(k - loc), fnp.where(inside, value, -np.inf), np.nan)


def pmf(k, n, a, b, loc=0):
    """The probability ``exp(logpmf(k, n, a, b, loc))``.

    >>> round(float(pmf(0, 1, 2.0, 1.0)), 12)  # E[1 - p] for p ~ Beta(2, 1)
    0.333333333333
    """
    return fnp.exp(logpmf(k, n, a, b, loc))


def __dir__() -> list[str]:
    return sorted(__all__)
