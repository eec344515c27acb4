"""The wrapped Cauchy distribution on ``[0, 2 pi]`` with concentration ``c`` in ``(0, 1)``
(``jax.scipy.stats.wrapcauchy``).

>>> import functrans.scipy.stats.wrapcauchy as wrapcauchy
>>> round(float(wrapcauchy.pdf(np.pi / 2, 0.5)), 10)  # 0.75 / (2 pi 1.25)
0.0954929659
"""
from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x, c):
    """``log`` of the density ``(1 - c^2) / (2 pi (1 + c^2 - 2 c cos(x)))``, written as
    ``(1 - c) (1 + c) / (2 pi ((1 - c)^2 + 4 c sin^2(x / 2)))`` (no cancellation for ``c``
    near 1); ``-inf`` outside ``[0, 2 pi]``, nan unless ``0 < c < 1``.

    >>> round(float(logpdf(0.0, 0.5)), 10)  # log(3 / (2 pi))
    -0.7392647777
    """
    x, c = inexact_all(x, c)
    half_sine = fnp.sin(0.5 * x)
    value = (fnp.log1p(-c) + fnp.log1p(c) - _LOG_2PI
             - fnp.log((1.0 - c) ** 2 + 4.0 * c * half_sine * half_sine))
    value = fnp.where((x < 0) | (x > 2 * np.pi), -np.inf, value)
    return nan_unless((c > 0) & (c < 1), value)


def pdf(x, c):
    """The density ``exp(logpdf(x, c))``.

    >>> round(float(pdf(np.pi, 0.5)), 10)  # 0.75 / (2 pi 2.25)
    0.0530516477
    """
    return fnp.exp(logpdf(x, c))


def __dir__() -> list[str]:
    return sorted(__all__)
