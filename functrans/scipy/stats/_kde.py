"""Kernel density estimation with Gaussian kernels: ``gaussian_kde``
(``jax.scipy.stats.gaussian_kde``), a pytree whose evaluation is differentiable in the
data, the weights, the bandwidth and the evaluation points."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import functrans.numpy as fnp
from functrans import lax
from functrans import random as ft_random
from functrans.core import get_aval
from functrans.scipy import special
from functrans.scipy._util import inexact, inexact_all
from functrans.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]

_LOG_2PI = math.log(2 * math.pi)


def _refuse_complex(x, what: str) -> None:
    if get_aval(x).dtype.kind == "c":
        raise NotImplementedError(f"gaussian_kde: complex {what} are not supported (got "
                                  f"dtype {get_aval(x).dtype})")


@register_pytree_node_class
@dataclass(frozen=True, init=False, eq=False, slots=True)
class gaussian_kde:
    """A Gaussian kernel density estimate of the data ``dataset``, as
    ``jax.scipy.stats.gaussian_kde`` (and ``scipy.stats.gaussian_kde``): a weighted sum of
    normal densities, one centred on each data point, all with the covariance of the data
    scaled by the square of a bandwidth factor.

    ``dataset`` holds ``n`` points of ``d`` dimensions, shape ``(d, n)`` (or ``(n,)`` for
    ``d = 1``); ``weights`` (``(n,)``, normalized to sum 1) defaults to equal ones.
    ``bw_method`` chooses the bandwidth factor: ``"scott"`` (the default, ``neff ** (-1 /
    (d + 4))``), ``"silverman"`` (``(neff (d + 2) / 4) ** (-1 / (d + 4))``), a scalar (the
    factor itself, possibly traced), or a callable given the estimator (``dataset``,
    ``weights``, ``neff``, ``d`` and ``n`` are set) that returns the factor.

    Attributes: ``dataset`` (``(d, n)``, float), ``weights``, ``neff`` (the effective
    number of points, ``1 / sum(weights ** 2)``), ``covariance`` (the kernel's) and
    ``inv_cov`` (its inverse), the pytree's five leaves; ``d`` and ``n`` come from the
    shape of ``dataset``.  As in JAX, the bandwidth factor itself is not kept (it is
    ``covariance`` divided by the data's covariance) and the estimator is immutable:
    ``set_bandwidth`` and ``integrate_box`` (a box of more than one dimension) raise
    ``NotImplementedError``.

    The estimator is a pytree: ``jit``, ``vmap`` and ``grad`` take it as an argument, and a
    function that builds one from traced data is differentiable in the data and weights.

    >>> import numpy as np, functrans as ft
    >>> from functrans.scipy.stats import gaussian_kde
    >>> data = np.array([-1.0, 0.0, 0.5, 2.0])
    >>> kde = gaussian_kde(data)
    >>> kde.d, kde.n, float(kde.neff)
    (1, 4, 4.0)
    >>> kde.pdf(np.array([0.0, 1.0])).round(6)
    array([0.26852 , 0.223548])
    >>> kde.logpdf(np.array([0.0, 1.0])).round(6)
    array([-1.314831, -1.498131])
    >>> ft.grad(lambda x: gaussian_kde(x).logpdf(0.0)[0])(data).round(6)
    array([ 0.38712 ,  0.037322, -0.202486, -0.255818])
    """

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = fnp.atleast_2d(inexact(dataset))
        _refuse_complex(dataset, "data")
        shape = get_aval(dataset).shape
        if len(shape) != 2:
            raise ValueError(f"gaussian_kde: dataset must be of shape (d, n) or (n,), got "
                             f"shape {shape}")
        if math.prod(shape) <= 1:
            raise ValueError(f"gaussian_kde: dataset must have more than one element, got "
                             f"shape {shape}")
        d, n = shape
        if weights is None:
            weights = fnp.full_like(dataset[0], 1.0 / n)
        else:
            dataset, weights = inexact_all(dataset, weights)
            weights = fnp.atleast_1d(weights)
            if get_aval(weights).shape != (n,):
                raise ValueError(f"gaussian_kde: weights must be one-dimensional of length "
                                 f"n = {n} (one per data point), got shape "
                                 f"{get_aval(weights).shape}")
            weights = weights / fnp.sum(weights)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1.0 / fnp.sum(weights * weights))
        factor = self._bandwidth_factor(bw_method, neff, d)
        # In the data's dtype: NumPy's cov (and so functrans.numpy's) computes in float64.
        data_covariance = fnp.atleast_2d(fnp.cov(dataset, rowvar=True, bias=False,
                                                 aweights=weights,
                                                 dtype=get_aval(dataset).dtype))
        factor_squared = factor * factor
        self._set("covariance", data_covariance * factor_squared)
        self._set("inv_cov", fnp.linalg.inv(data_covariance) / factor_squared)

    def _set(self, name: str, value):
        # The dataclass is frozen: the constructor and tree_unflatten set its fields here.
        object.__setattr__(self, name, value)
        return value

    def _bandwidth_factor(self, bw_method, neff, d: int):
        if bw_method is None or isinstance(bw_method, str):
            method = "scott" if bw_method is None else bw_method
            if method == "scott":
                return neff ** (-1.0 / (d + 4))
            if method == "silverman":
                return (neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        elif callable(bw_method):
            return bw_method(self)
        elif isinstance(bw_method, numbers.Number) or (hasattr(bw_method, "dtype")
                                                       and get_aval(bw_method).shape == ()):
            return bw_method  # a scalar: the factor itself (a 0-d array or tracer too)
        raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a scalar or "
                         f"a callable taking the estimator, got {bw_method!r}")

    def tree_flatten(self):
        """The five array attributes as the pytree's children (no static data)."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """An estimator from its five children, without recomputing or checking them (a
        transform may pass tracers or placeholders)."""
        del aux_data
        kde = object.__new__(cls)
        for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                               children):
            kde._set(name, value)
        return kde

    @property
    def d(self) -> int:
        """The number of dimensions of the data."""
        return get_aval(self.dataset).shape[0]

    @property
    def n(self) -> int:
        """The number of data points."""
        return get_aval(self.dataset).shape[1]

    def _points(self, points):
        """``points`` as ``(d, m)``: a ``(d, m)`` array, ``m`` points of one dimension, or
        one point of ``d`` (a ``(d,)`` array)."""
        points = fnp.atleast_2d(inexact(points))
        _refuse_complex(points, "points")
        shape = get_aval(points).shape
        if len(shape) != 2:
            raise ValueError(f"gaussian_kde: points must be of shape (d, m) with d = "
                             f"{self.d}, got shape {shape}")
        if shape[0] != self.d:
            if shape[0] == 1 and shape[1] == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise ValueError(f"gaussian_kde: points have dimension {shape[0]} (shape "
                             f"{shape}), the data have dimension {self.d}")
        return points

    def _log_kernels(self, points):
        """The log-density of each kernel at each point, ``(m, n)``, and the weights, in
        the promoted dtype: the distances are taken in coordinates where the kernel's
        covariance is the identity (``x -> x L`` with ``L Lᵀ = inv_cov``), as differences
        of points, not by expanding the square (which cancels far from the data)."""
        points = self._points(points)
        dataset, weights, points, inv_cov = inexact_all(self.dataset, self.weights, points,
                                                        self.inv_cov)
        whitening = lax.linalg.cholesky(inv_cov)
        data = fnp.matmul(fnp.transpose(dataset), whitening)    # (n, d)
        at = fnp.matmul(fnp.transpose(points), whitening)       # (m, d)
        difference = at[:, None, :] - data[None, :, :]          # (m, n, d)
        log_norm = fnp.sum(fnp.log(fnp.diagonal(whitening))) - 0.5 * self.d * _LOG_2PI
        return log_norm - 0.5 * fnp.sum(difference * difference, axis=-1), weights

    def evaluate(self, points):
        """The estimated density at ``points``: ``(d, m)`` (``m`` points), ``(m,)`` for
        one-dimensional data, or ``(d,)`` (one point); returns ``(m,)``.

        >>> import numpy as np
        >>> kde = gaussian_kde(np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]]))
        >>> kde.evaluate(np.array([[0.0, 1.0], [0.0, 1.0]])).round(6)
        array([0.098225, 0.101334])
        """
        log_kernels, weights = self._log_kernels(points)
        return fnp.sum(weights * fnp.exp(log_kernels), axis=1)

    def __call__(self, points):
        """``evaluate(points)``."""
        return self.evaluate(points)

    def pdf(self, x):
        """The estimated density at the points ``x`` (as ``evaluate``).

        >>> import numpy as np
        >>> gaussian_kde(np.array([0.0, 1.0])).pdf(0.5).round(6)
        array([0.46598])
        """
        return self.evaluate(x)

    def logpdf(self, x):
        """``log`` of the estimated density at the points ``x`` (shapes as ``evaluate``),
        summed in logs: finite far from the data, where the density underflows to 0.

        >>> import numpy as np
        >>> [round(float(v), 4) for v in gaussian_kde(np.array([0.0, 1.0])).logpdf(
        ...     np.array([0.5, 100.0]))]
        [-0.7636, -12933.6239]
        """
        log_kernels, weights = self._log_kernels(x)
        return special.logsumexp(log_kernels, axis=1, b=weights[None, :])

    def integrate_gaussian(self, mean, cov):
        """The integral of the estimated density times the normal density of mean ``mean``
        (``(d,)``) and covariance ``cov`` (``(d, d)``).

        >>> import numpy as np
        >>> kde = gaussian_kde(np.array([0.0, 1.0]))
        >>> round(float(kde.integrate_gaussian(0.0, 1.0)), 6)
        0.288071
        """
        mean = fnp.atleast_1d(fnp.squeeze(inexact(mean)))
        cov = fnp.atleast_2d(inexact(cov))
        if get_aval(mean).shape != (self.d,):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean must have {self.d} "
                             f"entries, got shape {get_aval(mean).shape}")
        if get_aval(cov).shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: cov must be of shape "
                             f"({self.d}, {self.d}), got shape {get_aval(cov).shape}")
        dataset, weights, mean, cov, covariance = inexact_all(
            self.dataset, self.weights, mean, cov, self.covariance)
        return _gaussian_overlap(covariance + cov, dataset, weights, mean[:, None],
                                 fnp.ones_like(weights[:1]))

    def integrate_box_1d(self, low, high):
        """The estimated probability of ``[low, high]`` (scalars), for one-dimensional data.

        >>> import numpy as np
        >>> round(float(gaussian_kde(np.array([0.0, 1.0])).integrate_box_1d(0.0, 1.0)), 6)
        0.447866
        """
        if self.d != 1:
            raise ValueError(f"gaussian_kde.integrate_box_1d: only for one-dimensional data "
                             f"(this estimator has d = {self.d})")
        low, high = inexact(low), inexact(high)
        if get_aval(low).shape != () or get_aval(high).shape != ():
            raise ValueError(f"gaussian_kde.integrate_box_1d: low and high must be scalars, "
                             f"got shapes {get_aval(low).shape} and {get_aval(high).shape}")
        dataset, weights, low, high, covariance = inexact_all(
            self.dataset[0], self.weights, low, high, self.covariance)
        sigma = fnp.sqrt(covariance[0, 0])
        upper = special.ndtr((high - dataset) / sigma)
        lower = special.ndtr((low - dataset) / sigma)
        return fnp.sum(weights * (upper - lower))

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported, as in JAX: only one-dimensional boxes, by ``integrate_box_1d``.

        >>> import numpy as np
        >>> gaussian_kde(np.array([0.0, 1.0])).integrate_box(0.0, 1.0)
        Traceback (most recent call last):
        ...
        NotImplementedError: gaussian_kde.integrate_box is not supported (as in JAX): only one-dimensional boxes are, by integrate_box_1d(low, high)
        """
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("gaussian_kde.integrate_box is not supported (as in JAX): "
                                  "only one-dimensional boxes are, by "
                                  "integrate_box_1d(low, high)")

    def integrate_kde(self, other):
        """The integral of the product of this estimated density and ``other``'s (a
        ``gaussian_kde`` of the same dimension).

        >>> import numpy as np
        >>> kde = gaussian_kde(np.array([0.0, 1.0]))
        >>> round(float(kde.integrate_kde(kde)), 6)
        0.347589
        """
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: the estimators have different "
                             f"dimensions ({self.d} and {other.d})")
        data, weights, other_data, other_weights, covariance, other_covariance = inexact_all(
            self.dataset, self.weights, other.dataset, other.weights, self.covariance,
            other.covariance)
        return _gaussian_overlap(covariance + other_covariance, data, weights, other_data,
                                 other_weights)

    def resample(self, key, shape=()):
        """Draws from the estimated density with the random key ``key``: an array of shape
        ``(d,) + shape``, a data point drawn by weight plus a draw of the kernel (the same
        bits as JAX for the same key).

        >>> import numpy as np, functrans.random as random
        >>> kde = gaussian_kde(np.array([[0.0, 1.0, 2.0], [0.0, 2.0, 1.0]]))
        >>> kde.resample(random.key(0), (5,)).shape
        (2, 5)
        """
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        index_key, kernel_key = ft_random.split(key)
        index = ft_random.choice(index_key, self.n, shape=shape, p=self.weights)
        noise = ft_random.multivariate_normal(
            kernel_key, fnp.zeros_like(self.covariance[0]), self.covariance, shape=shape,
            dtype=get_aval(self.dataset).dtype)
        return fnp.take(self.dataset, index, axis=1) + fnp.moveaxis(noise, -1, 0)

    def set_bandwidth(self, bw_method=None):
        """Not supported, as in JAX: the estimator is immutable; build a new one with the
        bandwidth wanted, ``gaussian_kde(kde.dataset, bw_method, kde.weights)``.

        >>> import numpy as np
        >>> gaussian_kde(np.array([0.0, 1.0])).set_bandwidth("silverman")
        Traceback (most recent call last):
        ...
        NotImplementedError: gaussian_kde.set_bandwidth is not supported (as in JAX): the estimator is immutable; build a new one, gaussian_kde(kde.dataset, bw_method, kde.weights)
        """
        del bw_method
        raise NotImplementedError("gaussian_kde.set_bandwidth is not supported (as in JAX): "
                                  "the estimator is immutable; build a new one, "
                                  "gaussian_kde(kde.dataset, bw_method, kde.weights)")


def _gaussian_overlap(covariance, points, weights, centres, centre_weights):
    """``sum_ij centre_weights[j] weights[i] N(points[:, i]; centres[:, j], covariance)``:
    the integral of two weighted sums of normal densities whose covariances add up to
    ``covariance``, through its Cholesky factor ``L`` (``|L⁻¹ (x - c)|²`` by a triangular
    solve)."""
    d, n = get_aval(points).shape
    m = get_aval(centres).shape[1]
    factor = lax.linalg.cholesky(covariance)
    difference = fnp.reshape(points[:, :, None] - centres[:, None, :], (d, n * m))
    z = lax.linalg.triangular_solve(factor, difference, left_side=True, lower=True)
    exponent = -0.5 * fnp.reshape(fnp.sum(z * z, axis=0), (n, m))
    log_norm = fnp.sum(fnp.log(fnp.diagonal(factor))) + 0.5 * d * _LOG_2PI
    kernels = fnp.exp(exponent - log_norm)
    return fnp.sum(weights[:, None] * kernels * centre_weights[None, :])
