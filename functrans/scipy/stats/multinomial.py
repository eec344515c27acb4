"""The multinomial distribution: the counts ``x`` of ``n`` draws among categories of
probabilities ``p`` (``jax.scipy.stats.multinomial``).  Differentiable in ``p``; ``x`` and
``n`` are integer counts.

>>> import numpy as np
>>> import functrans.scipy.stats.multinomial as multinomial
>>> round(float(multinomial.pmf(np.array([1, 1]), 2, np.array([0.5, 0.5]))), 12)
0.5
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import core
from functrans.core import get_aval
from functrans.scipy import special
from functrans.scipy._util import inexact

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """``log(n!) + sum(x log(p) - log(x!))`` over the categories, the last axis of ``x``
    and ``p`` (their other axes and ``n`` broadcast): ``-inf`` where a count is negative
    or the counts do not sum to ``n``; nan where ``n < 0`` or an entry of ``p`` is outside
    ``[0, 1]``, as SciPy.  ``x`` and ``n`` must be integers, as in JAX.

    >>> import numpy as np
    >>> logpmf(np.array([[1, 2], [2, 2]]), 3, np.array([0.5, 0.5])).round(6)
    array([-0.980829,      -inf])
    """
    p = inexact(p)
    x, n = fnp.asarray(x), fnp.asarray(n)
    dtype, _ = core.result_type(get_aval(x), get_aval(n))
    if dtype.kind not in "iu":
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type (counts), "
                         f"got x.dtype={get_aval(x).dtype}, n.dtype={get_aval(n).dtype}")
    if not get_aval(x).shape:
        raise ValueError("multinomial.logpmf: x must have at least one axis (the "
                         "categories)")
    float_dtype = get_aval(p).dtype
    x, n = fnp.astype(x, float_dtype), fnp.astype(n, float_dtype)
    inside = fnp.all(x >= 0, axis=-1) & (fnp.sum(x, axis=-1) == n)
    valid = (n >= 0) & fnp.all((p >= 0) & (p <= 1), axis=-1)
    # Stand-ins where the value is masked, and for p = 0 with no count, keep the
    # derivatives finite.
    p = fnp.where(fnp.expand_dims(valid, -1) & (x != 0), p, 1.0)
    value = (special.gammaln(n + 1)
             + fnp.sum(special.xlogy(x, p) - special.gammaln(fnp.maximum(x, 0) + 1), axis=-1))
    return fnp.where(valid, fnp.where(inside, value, -np.inf), np.nan)


def pmf(x, n, p):
    """The probability ``exp(logpmf(x, n, p))``.

    >>> import numpy as np
    >>> round(float(pmf(np.array([2, 0]), 2, np.array([0.5, 0.5]))), 12)
    0.25
    """
    return fnp.exp(logpmf(x, n, p))


def __dir__() -> list[str]:
    return sorted(__all__)
