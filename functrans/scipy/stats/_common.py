"""Pieces shared by the distributions of ``functrans.scipy.stats`` (public inside the
package; nothing here is part of its API)."""
from __future__ import annotations

import math

import numpy as np

import functrans.numpy as fnp
from functrans.scipy._util import inexact_all

__all__ = ["log1mexp", "log_probability", "nan_unless", "quantile", "standardized"]

_LOG_2 = math.log(2.0)


def log1mexp(t):
    """``log(1 - exp(-t))`` for ``t >= 0``, accurate at both ends: ``log(-expm1(-t))``
    below ``log 2``, ``log1p(-exp(-t))`` above (Maechler's split).  Each branch sees only
    arguments in its own range, so neither puts a nan into the other's derivative."""
    small = t <= _LOG_2
    near = fnp.where(small, t, _LOG_2)
    far = fnp.where(small, 1.0, t)
    return fnp.where(small, fnp.log(-fnp.expm1(-near)), fnp.log1p(-fnp.exp(-far)))


def log_probability(p, complement):
    """``log(p)`` from a probability and its complement ``1 - p``, both computed
    accurately: ``log1p(-complement)`` where ``p > 1/2`` (where ``log(p)`` would keep only
    the rounding of ``p`` near 1), ``log(p)`` elsewhere; each branch sees safe values."""
    upper = p > 0.5
    return fnp.where(upper, fnp.log1p(-fnp.where(upper, complement, 0.5)),
                     fnp.log(fnp.where(upper, 0.5, p)))


def nan_unless(valid, value):
    """``value`` where ``valid``, nan elsewhere (invalid parameters, as SciPy)."""
    return fnp.where(valid, value, np.nan)


def quantile(q, value, low, high):
    """A quantile function's ``value`` completed at the ends: ``low`` at ``q == 0``,
    ``high`` at ``q == 1`` and nan outside ``[0, 1]`` (the edges of the support, as
    SciPy gives them)."""
    value = fnp.where(q == 0, low, fnp.where(q == 1, high, value))
    return fnp.where((q >= 0) & (q <= 1), value, np.nan)


def standardized(x, loc, scale):
    """``((x - loc) / scale, scale)`` after the arguments' promotion (``fnp.divide``: a
    Python-scalar ``scale`` of 0 gives inf or nan, not ZeroDivisionError)."""
    x, loc, scale = inexact_all(x, loc, scale)
    return fnp.divide(x - loc, scale), scale
