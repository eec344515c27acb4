"""The multivariate normal distribution with mean ``mean`` and covariance ``cov``
(``jax.scipy.stats.multivariate_normal``), through the Cholesky factor of ``cov``.

>>> import numpy as np
>>> import functrans.scipy.stats.multivariate_normal as mvn
>>> round(float(mvn.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 10)  # -log(2 pi)
-1.8378770664
"""
from __future__ import annotations

import math

import functrans.numpy as fnp
from functrans import lax
from functrans.core import get_aval
from functrans.scipy._util import inexact_all

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x, mean, cov, allow_singular=None):
    """``log`` of the density at ``x`` (``(..., n)``, the trailing axis the variables) for
    mean ``mean`` (``(..., n)``, broadcast against ``x``) and covariance ``cov``: an
    ``(n, n)`` symmetric positive-definite matrix, or a scalar (the variance of each
    variable, independently).  ``allow_singular`` must stay off, as in JAX.

    >>> import numpy as np
    >>> logpdf(np.ones((2, 2)), np.zeros(2), 2.0).round(6)
    array([-3.031024, -3.031024])
    """
    if allow_singular:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular=True is not "
                                  "supported; cov must be positive definite")
    x, mean, cov = inexact_all(x, mean, cov)
    diff = x - mean
    shape = get_aval(diff).shape
    if not shape:
        raise ValueError("multivariate_normal.logpdf: x and mean must have at least one "
                         "axis (the variables)")
    n = shape[-1]
    cov_shape = get_aval(cov).shape
    if cov_shape == ():
        maha = fnp.sum(diff * diff, axis=-1) / cov
        return -0.5 * (maha + n * (_LOG_2PI + fnp.log(cov)))
    if cov_shape != (n, n):
        raise ValueError(f"multivariate_normal.logpdf: cov must be a scalar or of shape "
                         f"({n}, {n}) for x and mean with {n} variables, got {cov_shape}; "
                         f"for a batch of covariances use functrans.vmap")
    factor = lax.linalg.cholesky(cov)
    rows = fnp.reshape(diff, (-1, n))
    # z factorᵀ = diff, so |z|² = diffᵀ cov⁻¹ diff.
    z = lax.linalg.triangular_solve(factor, rows, left_side=False, lower=True,
                                    transpose_a=True)
    maha = fnp.reshape(fnp.sum(z * z, axis=-1), shape[:-1])
    half_log_det = fnp.sum(fnp.log(fnp.diagonal(factor)))
    return -0.5 * (maha + n * _LOG_2PI) - half_log_det


def pdf(x, mean, cov):
    """The density ``exp(logpdf(x, mean, cov))``.

    >>> import numpy as np
    >>> round(float(pdf(np.zeros(1), np.zeros(1), np.eye(1))), 10)
    0.3989422804
    """
    return fnp.exp(logpdf(x, mean, cov))


def __dir__() -> list[str]:
    return sorted(__all__)
