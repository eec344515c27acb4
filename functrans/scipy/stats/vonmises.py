"""The von Mises distribution on the circle, concentrated around 0 by ``kappa``
(``jax.scipy.stats.vonmises``); the density is periodic in ``x`` and normalized over one
turn.

>>> import functrans.scipy.stats.vonmises as vonmises
>>> round(float(vonmises.pdf(1.0, 0.0)), 10)  # kappa = 0: uniform, 1 / (2 pi)
0.1591549431
"""
from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all
from functrans.scipy.stats._common import nan_unless

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x, kappa):
    """``log`` of the density ``exp(kappa cos(x)) / (2 pi I0(kappa))``, as ``kappa (cos(x)
    - 1) - log(2 pi i0e(kappa))`` (no overflow for large ``kappa``); nan for ``kappa < 0``.

    >>> round(float(logpdf(0.0, 1.0)), 10)
    -1.0737914249
    """
    x, kappa = inexact_all(x, kappa)
    value = kappa * (fnp.cos(x) - 1.0) - _LOG_2PI - fnp.log(special.i0e(kappa))
    return nan_unless(kappa >= 0, value)


def pdf(x, kappa):
    """The density ``exp(logpdf(x, kappa))``.

    >>> import numpy as np
    >>> round(float(pdf(np.pi, 0.0)), 10)
    0.1591549431
    """
    return fnp.exp(logpdf(x, kappa))


def __dir__() -> list[str]:
    return sorted(__all__)
