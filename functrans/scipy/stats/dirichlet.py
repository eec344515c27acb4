"""The Dirichlet distribution on the probability simplex with concentrations ``alpha``
(``jax.scipy.stats.dirichlet``).  Differentiable in ``x`` and ``alpha``.

>>> import numpy as np
>>> import functrans.scipy.stats.dirichlet as dirichlet
>>> round(float(dirichlet.pdf(np.array([0.2, 0.8]), np.ones(2))), 12)  # uniform: 1
1.0
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.core import get_aval
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """``sum((alpha - 1) log(x)) - log B(alpha)``, ``B(alpha) = prod Gamma(alpha_i) /
    Gamma(sum alpha_i)``, for ``x`` of shape ``(K, ...)``: the ``K`` categories on the first
    axis (or ``K - 1`` of them, the last being ``1 - sum(x)``), points to evaluate on the
    others; ``alpha`` of shape ``(K,)``.  ``-inf`` where ``x`` is off the simplex (an
    entry ``<= 0``, or a sum more than ``1e-6`` from 1, as in JAX); nan for an ``alpha``
    entry ``<= 0``.

    >>> import numpy as np
    >>> logpdf(np.array([[0.25, 0.5], [0.75, 0.75]]), np.array([2.0, 1.0])).round(6)
    array([-0.693147,      -inf])
    """
    x, alpha = inexact_all(x, alpha)
    x_shape, alpha_shape = get_aval(x).shape, get_aval(alpha).shape
    if len(alpha_shape) != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional (the K "
                         f"concentrations), got shape {alpha_shape}")
    size = alpha_shape[0]
    if not x_shape or x_shape[0] not in (size, size - 1):
        raise ValueError(f"dirichlet.logpdf: x must have the K = {size} categories of alpha "
                         f"(or K - 1 of them) on its first axis, got x of shape {x_shape}")
    if x_shape[0] != size:
        x = fnp.concatenate([x, 1 - fnp.sum(x, axis=0, keepdims=True)], axis=0)
    on_simplex = fnp.all(x > 0, axis=0) & (fnp.abs(fnp.sum(x, axis=0) - 1) < 1e-6)
    valid = fnp.all(alpha > 0)
    # Stand-ins where the value is masked keep every derivative finite there.
    x = fnp.where(on_simplex, x, 1.0 / size)
    alpha = fnp.where(valid, alpha, 1.0)
    alpha = fnp.reshape(alpha, (size,) + (1,) * (len(x_shape) - 1))
    normalizer = fnp.sum(special.gammaln(alpha), axis=0) - special.gammaln(fnp.sum(alpha,
                                                                                   axis=0))
    value = fnp.sum(special.xlogy(alpha - 1, x), axis=0) - normalizer
    return fnp.where(valid, fnp.where(on_simplex, value, -np.inf), np.nan)


def pdf(x, alpha):
    """The density ``exp(logpdf(x, alpha))``.

    >>> import numpy as np
    >>> round(float(pdf(np.array([0.5]), np.array([2.0, 2.0]))), 12)  # 6 x (1 - x)
    1.5
    """
    return fnp.exp(logpdf(x, alpha))


def __dir__() -> list[str]:
    return sorted(__all__)
