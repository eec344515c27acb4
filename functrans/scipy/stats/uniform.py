"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``).

>>> import functrans.scipy.stats.uniform as uniform
>>> float(uniform.cdf(1.5, loc=1.0, scale=2.0))
0.25
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """``log`` of the density ``1 / scale`` on ``[loc, loc + scale]``; ``-inf`` outside.

    >>> import numpy as np
    >>> logpdf(np.array([-0.5, 0.0, 0.5, 1.0, 1.5]))
    array([-inf,   0.,   0.,   0., -inf])
    """
    x, loc, scale = inexact_all(x, loc, scale)
    y = fnp.divide(x - loc, scale)
    value = fnp.where((y < 0) | (y > 1), -np.inf, 0.0 - fnp.log(scale))  # 0, not -0, at 1
    return nan_unless((scale > 0) & ~fnp.isnan(y), value)


def pdf(x, loc=0, scale=1):
    """The density ``exp(logpdf(x, loc, scale))``.

    >>> float(pdf(1.0, scale=4.0))
    0.25
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The distribution function ``(x - loc) / scale`` clipped to ``[0, 1]``.

    >>> float(cdf(5.0))
    1.0
    """
    x, loc, scale = inexact_all(x, loc, scale)
    return nan_unless(scale > 0, fnp.clip(fnp.divide(x - loc, scale), 0.0, 1.0))


def ppf(q, loc=0, scale=1):
    """The quantile function ``loc + scale q``, the inverse of ``cdf``; nan outside ``[0,
    1]``.

    >>> float(ppf(0.25, loc=1.0, scale=2.0))
    1.5
    """
    q, loc, scale = inexact_all(q, loc, scale)
    return nan_unless((scale > 0) & (q >= 0) & (q <= 1), loc + scale * q)


def __dir__() -> list[str]:
    return sorted(__all__)
