"""Statistics: weighted averages (``average``), spreads (``ptp``), covariance and
correlation matrices (``cov``, ``corrcoef``), and the reductions that skip nan (``nansum``,
``nanmean``, ``nanmax``, ...).

A new function that summarises data along an axis, beyond the plain reductions of
``_reductions``, goes here.

The nan-skipping functions replace nan by the neutral element of the reduction (0 for sums,
1 for products, -inf for maxima, ...) through a select, so gradients are 0 at nan positions
and flow normally elsewhere.  All-nan slices give what NumPy gives (0 for ``nansum``, nan for
``nanmean``, ``nanvar``, ``nanmin`` and ``nanmax``), except ``nanargmin``/``nanargmax``,
which return -1 there as ``jax.numpy`` does (NumPy raises, which a traced function cannot).
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from functrans import core, lax
from functrans.numpy._contractions import dot
from functrans.numpy._creation import full_like
from functrans.numpy._dtypes import astype
from functrans.numpy._elementwise import conj, isnan, sqrt
from functrans.numpy._indexing import diagonal
from functrans.numpy._reductions import (argmax, argmin, cumprod, cumsum, max, mean, min, prod,
                                         sum)
from functrans.numpy._shape import atleast_2d, broadcast_to, concatenate, squeeze
from functrans.numpy._util import arg, axis_tuple, dtype_of, promote_inexact, shape_of

__all__ = ["average", "ptp", "cov", "corrcoef", "nansum", "nanprod", "nanmean", "nanvar",
           "nanstd", "nanmin", "nanmax", "nanargmin", "nanargmax", "nancumsum", "nancumprod"]


def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """The mean of ``a`` along ``axis`` weighted by ``weights`` (of ``a``'s shape, or 1-D
    along a single ``axis``); with ``returned``, also the sum of the weights (broadcast to the
    result's shape).

    >>> import functrans.numpy as fnp
    >>> avg, total = fnp.average(fnp.asarray([1.0, 2.0, 4.0]),
    ...                          weights=fnp.asarray([2.0, 1.0, 1.0]), returned=True)
    >>> float(avg), float(total)
    (2.0, 4.0)
    """
    a = arg(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        ndim = len(shape_of(a))
        count = math.prod(shape_of(a)[i % ndim] for i in axis_tuple(axis, ndim)) if ndim else 1
        return avg, full_like(avg, count)
    w = arg(weights)
    dtype = np.result_type(dtype_of(a), dtype_of(w))
    if dtype_of(a).kind in "biu":  # NumPy's rule: integer data average in float64 at least
        dtype = np.result_type(dtype, np.float64)
    a, w = astype(a, dtype), astype(w, dtype)
    a_shape, w_shape = shape_of(a), shape_of(w)
    if a_shape != w_shape:
        if axis is None:
            raise TypeError(f"average: weights of shape {w_shape} differ from a's shape "
                            f"{a_shape}; give the axis they apply along")
        if len(w_shape) != 1 or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"average: weights of shape {w_shape} must have a's shape "
                            f"{a_shape} or be 1-D along one axis (got axis={axis!r})")
        axis_ = int(axis) % len(a_shape)
        if w_shape[0] != a_shape[axis_]:
            raise ValueError(f"average: {w_shape[0]} weights for an axis of length "
                             f"{a_shape[axis_]}")
        w = lax.broadcast_in_dim(w, a_shape, (axis_,))
    total = sum(w, axis, keepdims=keepdims)
    avg = lax.div(sum(lax.mul(a, w), axis, keepdims=keepdims), total)
    if not returned:
        return avg
    return avg, broadcast_to(total, shape_of(avg)) if shape_of(total) != shape_of(avg) else total


def ptp(a, axis=None, keepdims: bool = False):
    """Peak to peak: ``max - min`` along ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.ptp(fnp.asarray([[1.0, 7.0], [4.0, 2.0]]), axis=1)
    array([6., 2.])
    """
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def _as_rows(name: str, x, rowvar: bool, dtype):
    x = arg(x)
    if len(shape_of(x)) > 2:
        raise ValueError(f"{name}: the input must have at most 2 axes, got shape {shape_of(x)}")
    x = astype(atleast_2d(x), dtype)
    if not rowvar and shape_of(x)[0] != 1:
        x = lax.transpose(x, (1, 0))
    return x


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None,
        aweights=None, dtype=None):
    """The covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``), observed in its columns, with NumPy's frequency (``fweights``, integers)
    and reliability (``aweights``) weights; normalised by ``N - 1`` (``N`` if ``bias``, or
    ``N - ddof``).

    >>> import functrans.numpy as fnp
    >>> fnp.cov(fnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    m = arg(m)
    if dtype is None:
        dtype = np.result_type(dtype_of(m), *([] if y is None else [dtype_of(arg(y))]),
                               np.float64)
    x = _as_rows("cov", m, rowvar, dtype)
    if y is not None:
        x = concatenate([x, _as_rows("cov", y, rowvar, dtype)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape_of(x)[1]
    w = None
    if fweights is not None:
        fweights = arg(fweights)
        _check_weights("fweights", fweights, n)
        if dtype_of(fweights).kind not in "iub":
            raise TypeError(f"cov: fweights must be integers, got {dtype_of(fweights).name}")
        w = astype(fweights, dtype)
    if aweights is not None:
        aweights = astype(arg(aweights), dtype)
        _check_weights("aweights", aweights, n)
        w = aweights if w is None else lax.mul(w, aweights)
    if w is None:
        avg = mean(x, axis=1)
        factor = builtins.max(n - ddof, 0)
    else:
        avg, w_sum = average(x, axis=1, weights=w, returned=True)
        w_sum = lax.slice(w_sum, (0,), (1,))
        if ddof == 0:
            factor = w_sum
        elif aweights is None:
            factor = lax.sub(w_sum, ddof)
        else:
            factor = lax.sub(w_sum, lax.div(lax.mul(ddof, sum(lax.mul(w, aweights))), w_sum))
        factor = lax.reshape(lax.max(factor, 0.0), ())
    centered = lax.sub(x, lax.reshape(avg, (shape_of(x)[0], 1)))
    weighted = centered if w is None else lax.mul(centered, w)
    c = dot(centered, lax.transpose(conj(weighted), (1, 0)))
    return squeeze(lax.div(c, factor))


def _check_weights(what: str, weights, n: int) -> None:
    if shape_of(weights) != (n,):
        raise ValueError(f"cov: {what} must be 1-D with one weight per observation ({n}), "
                         f"got shape {shape_of(weights)}")


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients: ``cov`` normalised by the standard deviations,
    clipped to [-1, 1] (real and imaginary parts separately).

    >>> import functrans.numpy as fnp
    >>> fnp.corrcoef(fnp.asarray([0.0, 1.0, 2.0]), fnp.asarray([1.0, 3.0, 5.0]))
    array([[1., 1.],
           [1., 1.]])
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if not shape_of(c):
        return lax.div(c, c)
    stddev = sqrt(lax.real(diagonal(c)))
    k = shape_of(stddev)[0]
    c = lax.div(c, lax.convert_element_type(lax.reshape(stddev, (k, 1)), dtype_of(c)))
    c = lax.div(c, lax.convert_element_type(lax.reshape(stddev, (1, k)), dtype_of(c)))
    if dtype_of(c).kind == "c":
        return lax.complex(_clip1(lax.real(c)), _clip1(lax.imag(c)))
    return _clip1(c)


def _clip1(x):
    return lax.min(lax.max(x, -1.0), 1.0)


# -- the nan-skipping reductions -----------------------------------------------------------


def _no_out(name: str, out) -> None:
    """Reject NumPy's ``out=`` (JAX accepts only None): arrays here are immutable."""
    if out is not None:
        raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable); "
                                  f"use the returned array: x = {name}(...)")


def _filled(a, value):
    """``a`` with nan replaced by ``value`` (nothing to do for integers and booleans)."""
    a = arg(a)
    if not core.is_inexact(dtype_of(a)):
        return a
    return lax.select(isnan(a), value, a)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.finfo(dtype).dtype


def _degrees_of_freedom(name: str, ddof, correction) -> int:
    """NumPy 2's ``correction`` is the array API's name for ``ddof``; one of them may be given."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: give ddof or correction, not both (they are the same "
                         f"thing), got ddof={ddof!r} and correction={correction!r}")
    return correction


def _count(a, axis, keepdims: bool, where=None):
    """The number of non-nan elements along ``axis`` (int64), of those ``where`` selects."""
    present = lax.convert_element_type(lax.bitwise_not(isnan(a)), np.int64)
    return sum(present, axis, keepdims=keepdims, where=where)


def nansum(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
           where=None):
    """``sum`` treating nan as 0 (0 for an all-nan slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nansum(fnp.asarray([1.0, fnp.nan, 2.0]))
    array(3.)
    """
    return sum(_filled(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
            where=None):
    """``prod`` treating nan as 1 (1 for an all-nan slice).

    >>> import functrans.numpy as fnp
    >>> fnp.nanprod(fnp.asarray([3.0, fnp.nan, 2.0]))
    array(6.)
    """
    return prod(_filled(a, 1), axis, dtype, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None):
    """``cumsum`` treating nan as 0.

    >>> import functrans.numpy as fnp
    >>> fnp.nancumsum(fnp.asarray([1.0, fnp.nan, 2.0]))
    array([1., 1., 3.])
    """
    return cumsum(_filled(a, 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None):
    """``cumprod`` treating nan as 1.

    >>> import functrans.numpy as fnp
    >>> fnp.nancumprod(fnp.asarray([3.0, fnp.nan, 2.0]))
    array([3., 3., 6.])
    """
    return cumprod(_filled(a, 1), axis, dtype)


def nanmean(a, axis=None, dtype=None, out=None, keepdims: bool = False, where=None):
    """The mean of the non-nan elements along ``axis`` (nan for an all-nan slice).

    >>> import functrans as ft, functrans.numpy as fnp
    >>> x = fnp.asarray([1.0, fnp.nan, 2.0])
    >>> float(fnp.nanmean(x)), ft.grad(fnp.nanmean)(x)
    (1.5, array([0.5, 0. , 0.5]))
    """
    _no_out("nanmean", out)
    a = promote_inexact(a) if dtype is None else astype(a, dtype)
    total = sum(_filled(a, 0), axis, keepdims=keepdims, where=where)
    return lax.div(total, lax.convert_element_type(_count(a, axis, keepdims, where),
                                                   _real_dtype(dtype_of(total))))


def nanvar(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False,
           where=None, mean=None, *, correction=None):
    """The variance of the non-nan elements along ``axis``, divided by ``count - ddof``
    (nan for an all-nan slice or one with ``count <= ddof``).

    >>> import functrans.numpy as fnp
    >>> fnp.nanvar(fnp.asarray([1.0, fnp.nan, 3.0]))
    array(1.)
    """
    return _nan_variance("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean,
                         correction)


def _nan_variance(name, a, axis, dtype, out, ddof, keepdims, where, center, correction):
    _no_out(name, out)
    ddof = _degrees_of_freedom(name, ddof, correction)
    a = promote_inexact(a) if dtype is None else astype(a, dtype)
    if center is None:
        center = nanmean(a, axis, keepdims=True, where=where)
    elif len(shape_of(center)) not in (0, len(shape_of(a))):
        raise ValueError(f"{name}: mean= must have the shape of the reduction with "
                         f"keepdims=True (or be a scalar), got shape {shape_of(center)} for "
                         f"an input of shape {shape_of(a)}")
    centered = _filled(lax.sub(a, center), 0)
    if dtype_of(a).kind == "c":
        squares = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        squares = lax.mul(centered, centered)
    total = sum(squares, axis, keepdims=keepdims, where=where)
    dof = lax.sub(lax.convert_element_type(_count(a, axis, keepdims, where), dtype_of(total)),
                  ddof)
    positive = lax.gt(dof, 0)
    out = lax.div(total, lax.select(positive, dof, 1.0))
    return lax.select(positive, out, math.nan)


def nanstd(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False,
           where=None, mean=None, *, correction=None):
    """The standard deviation of the non-nan elements (the square root of ``nanvar``).

    >>> import functrans.numpy as fnp
    >>> fnp.nanstd(fnp.asarray([1.0, fnp.nan, 3.0]))
    array(1.)
    """
    return sqrt(_nan_variance("nanstd", a, axis, dtype, out, ddof, keepdims, where, mean,
                              correction))


def _nan_extremum(reduce, fill: float, a, axis, out, keepdims: bool, initial, where):
    a = arg(a)
    if not core.is_inexact(dtype_of(a)):
        return reduce(a, axis, out, keepdims, initial, where)
    if dtype_of(a).kind == "c":
        raise TypeError("nanmin/nanmax: complex input is not supported")
    result = reduce(_filled(a, fill), axis, out, keepdims, initial, where)
    if initial is not None:  # a slice with nothing to reduce gives initial
        return result
    none = lax.eq(_count(a, axis, keepdims), 0)
    return lax.select(none, math.nan, result)


def nanmax(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """``max`` ignoring nan (nan for an all-nan slice); the gradient goes to the maximum.

    >>> import functrans.numpy as fnp
    >>> fnp.nanmax(fnp.asarray([4.0, fnp.nan, 3.0]))
    array(4.)
    """
    return _nan_extremum(max, -math.inf, a, axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """``min`` ignoring nan (nan for an all-nan slice); the gradient goes to the minimum.

    >>> import functrans.numpy as fnp
    >>> fnp.nanmin(fnp.asarray([4.0, fnp.nan, 3.0]))
    array(3.)
    """
    return _nan_extremum(min, math.inf, a, axis, out, keepdims, initial, where)


def _nan_arg_extremum(arg_reduce, fill: float, a, axis, keepdims: bool):
    a = arg(a)
    if not core.is_inexact(dtype_of(a)):
        return arg_reduce(a, axis, keepdims=keepdims)
    index = arg_reduce(_filled(a, fill), axis, keepdims=keepdims)
    none = lax.eq(_count(a, axis, bool(keepdims)), 0)
    return lax.select(none, lax.convert_element_type(-1, dtype_of(index)), index)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """``argmax`` ignoring nan; -1 for an all-nan slice (as ``jax.numpy``; NumPy raises).
    ``out`` must be None (as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.nanargmax(fnp.asarray([fnp.nan, 4.0, 3.0]))
    array(1)
    """
    if out is not None:
        raise NotImplementedError("nanargmax: out= is not supported (arrays are immutable); "
                                  "use the returned array")
    return _nan_arg_extremum(argmax, -math.inf, a, axis, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """``argmin`` ignoring nan; -1 for an all-nan slice (as ``jax.numpy``; NumPy raises).
    ``out`` must be None (as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.nanargmin(fnp.asarray([fnp.nan, 4.0, 3.0]))
    array(2)
    """
    if out is not None:
        raise NotImplementedError("nanargmin: out= is not supported (arrays are immutable); "
                                  "use the returned array")
    return _nan_arg_extremum(argmin, math.inf, a, axis, keepdims)

