"""Reductions and scans along axes: sums and means (``sum``, ``mean``, ``var``), extrema
(``max``, ``argmax``), truth tests (``any``, ``all``), running sums and products
(``cumsum``, ``cumprod``) and differences (``diff``, ``trace``).

A new function that combines elements along an axis goes here.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from functrans import backend, lax
from functrans.core import Tracer, get_aval
from functrans.numpy._dtypes import astype, result_type
from functrans.numpy._elementwise import logical_not, sqrt
from functrans.numpy._indexing import diagonal
from functrans.numpy._shape import ravel
from functrans.numpy._util import (alias, arg, as_bool, axis_tuple, dtype_of, keep_dims,
                                   promote_inexact, shape_of, slice_axis, static_int)
from functrans.primitives import cumulative
from functrans.primitives import shape as shape_ops

__all__ = ["sum", "mean", "prod", "cumsum", "cumprod", "var", "std", "max", "min", "amax",
           "amin", "any", "all", "argmax", "argmin", "diff", "trace", "cumulative_sum",
           "cumulative_prod"]


def _where_mask(name: str, a, where):
    """``where`` (None, or booleans broadcasting to ``a``'s shape) as a mask of ``a``'s
    shape (None when no mask is given)."""
    if where is None:
        return None
    where = as_bool(where)
    shape, mask_shape = shape_of(a), shape_of(where)
    try:
        np.broadcast_shapes(mask_shape, shape)
    except ValueError:
        raise ValueError(f"{name}: where= must broadcast to the input's shape {shape}, got "
                         f"shape {mask_shape}") from None
    if np.broadcast_shapes(mask_shape, shape) != shape:
        raise ValueError(f"{name}: where= must broadcast to the input's shape {shape}, got "
                         f"shape {mask_shape}")
    return shape_ops.broadcast_to(where, shape) if mask_shape != shape else where


def _masked(a, mask, fill):
    """``a`` with ``fill`` where ``mask`` is false (``a`` itself without a mask)."""
    if mask is None:
        return a
    fill = arg(fill)
    if not shape_of(fill):  # a scalar: filled on a's device
        return lax.select(mask, a, lax.full_like(a, fill))
    fill = lax.convert_element_type(fill, dtype_of(a))
    return lax.select(mask, a, shape_ops.broadcast_to(fill, shape_of(a)))


def _integer_sum_dtype(dtype: np.dtype, promote_integers: bool):
    """The accumulation dtype of a sum or product of ``dtype`` without ``dtype=`` (None:
    the input's): booleans count as int64; small integers widen to 64 bits, as NumPy,
    unless ``promote_integers`` is false."""
    if dtype == np.bool_:
        return np.dtype(np.int64)
    if dtype.kind in "iu" and dtype.itemsize < 8 and promote_integers:
        return np.dtype(np.int64 if dtype.kind == "i" else np.uint64)
    return None


def sum(a, axis=None, dtype=None, out=None, keepdims: bool = False,  # noqa: A001
        initial=None, where=None, promote_integers: bool = True):
    """Sum over ``axis`` (all axes by default); booleans and small ints sum as int64.

    >>> import functrans.numpy as fnp
    >>> fnp.sum(fnp.asarray([[1, 2], [3, 4]]), axis=0)
    array([4, 6])
    """
    if out is not None:
        _no_out("sum", out)
    a = arg(a)
    aval = get_aval(a)
    if dtype is None and aval.dtype.kind in "biu":  # (a float sum calls no helper)
        dtype = _integer_sum_dtype(aval.dtype, promote_integers)
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    if where is not None:
        a = _masked(a, _where_mask("sum", a, where), 0)
    axes = axis_tuple(axis, aval.ndim)
    total = keep_dims(lax.reduce_sum(a, axes), aval.shape, axes, keepdims)
    if initial is None:
        return total
    return lax.add(total, lax.convert_element_type(initial, dtype_of(total)))


def _count(mask, shape: tuple, axis, keepdims: bool, dtype):
    """The number of elements a reduction over ``axis`` combines (those where ``mask`` is
    true), in ``dtype``: a Python number without a mask."""
    axes = axis_tuple(axis, len(shape))
    if mask is None:
        return math.prod(shape[a_ % len(shape)] for a_ in axes) if shape else 1
    return lax.convert_element_type(sum(mask, axis, keepdims=keepdims), dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=None):
    """Arithmetic mean over ``axis``; integers average in float64.

    >>> import functrans.numpy as fnp
    >>> fnp.mean(fnp.asarray([[1, 2], [3, 5]]), axis=0)
    array([2. , 3.5])
    """
    _no_out("mean", out)
    a = promote_inexact(a) if dtype is None else astype(a, dtype)
    mask = _where_mask("mean", a, where)
    total = sum(a, axis, keepdims=keepdims, where=mask)
    return lax.div(total, _count(mask, shape_of(a), axis, keepdims, _real(dtype_of(total))))


def _real(dtype) -> np.dtype:
    """The real dtype of the same precision as an inexact ``dtype``."""
    dtype = np.dtype(dtype)
    return np.finfo(dtype).dtype if dtype.kind in "fc" else dtype


def prod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
         where=None, promote_integers: bool = True):
    """Product over ``axis`` (all axes by default); booleans and small ints multiply as
    int64.  Its derivative is exact where elements are zero (no division).

    >>> import functrans.numpy as fnp
    >>> fnp.prod(fnp.asarray([[1, 2], [3, 4]]), axis=1)
    array([ 2, 12])
    """
    _no_out("prod", out)
    a = arg(a)
    mask = _where_mask("prod", a, where)
    if dtype is None and not promote_integers:
        dtype = _integer_sum_dtype(dtype_of(a), False) or dtype_of(a)
    product = cumulative.numpy_prod(_masked(a, mask, 1), axis, dtype, keepdims)
    if initial is None:
        return product
    return lax.mul(product, lax.convert_element_type(initial, dtype_of(product)))


def cumsum(a, axis=None, dtype=None):
    """Running sum along ``axis`` (of the flattened array by default).

    >>> import functrans.numpy as fnp
    >>> fnp.cumsum(fnp.asarray([[1, 2], [3, 4]]), axis=0)
    array([[1, 2],
           [4, 6]])
    """
    return cumulative.numpy_cumsum(arg(a), axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """Running product along ``axis`` (of the flattened array by default).

    >>> import functrans.numpy as fnp
    >>> fnp.cumprod(fnp.asarray([[1, 2], [3, 4]]))
    array([ 1,  2,  6, 24])
    """
    return cumulative.numpy_cumprod(arg(a), axis, dtype)


def _cumulative(name: str, running, initial, x, axis, dtype, include_initial: bool):
    x = arg(x)
    shape = shape_of(x)
    if not shape:
        raise ValueError(f"{name}: the input must have at least one axis, got a scalar")
    if axis is None:
        if len(shape) > 1:
            raise ValueError(f"{name}: axis must be given for an input of {len(shape)} axes, "
                             f"got axis=None (shape {shape})")
        axis = 0
    axis = shape_ops.normalize_axis(static_int(axis, name, "axis"), len(shape))
    out = running(x, axis, dtype)
    if not include_initial:
        return out
    config = [(1 if i == axis else 0, 0, 0) for i in range(len(shape))]
    return lax.pad(out, lax.convert_element_type(initial, dtype_of(out)), config)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Running sum along ``axis`` (the array API's ``cumsum``): ``axis`` may be left out for
    one-dimensional input only; ``include_initial`` puts the empty sum 0 first.

    >>> import functrans.numpy as fnp
    >>> fnp.cumulative_sum(fnp.asarray([1.0, 2.0, 3.0]), include_initial=True)
    array([0., 1., 3., 6.])
    """
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Running product along ``axis`` (the array API's ``cumprod``); ``include_initial`` puts
    the empty product 1 first.

    >>> import functrans.numpy as fnp
    >>> fnp.cumulative_prod(fnp.asarray([1, 2, 3]), include_initial=True)
    array([1, 1, 2, 6])
    """
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def _degrees_of_freedom(name: str, ddof, correction) -> int:
    """NumPy 2's ``correction`` is the array API's name for ``ddof``; one of them may be given."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"{name}: give ddof or correction, not both (they are the same "
                         f"thing), got ddof={ddof!r} and correction={correction!r}")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False, *,
        where=None, mean=None, correction=None):
    """Variance over ``axis``: the mean squared deviation, divided by ``count - ddof``
    rather than ``count`` (``correction`` is the array API's name for ``ddof``).

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([1.0, 2.0, 3.0, 4.0])
    >>> float(fnp.var(x)), float(fnp.var(x, ddof=1)), float(fnp.var(x, correction=1))
    (1.25, 1.6666666666666667, 1.6666666666666667)
    """
    return _variance("var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)


def _variance(name, a, axis, dtype, out, ddof, keepdims, where, center, correction):
    _no_out(name, out)
    ddof = _degrees_of_freedom(name, ddof, correction)
    a = promote_inexact(a) if dtype is None else astype(a, dtype)
    aval = get_aval(a)
    mask = _where_mask(name, a, where)
    if center is None:
        center = globals()["mean"](a, axis, keepdims=True, where=mask)
    else:
        center = arg(center)
        if len(shape_of(center)) not in (0, aval.ndim):
            raise ValueError(f"{name}: mean= must have the shape of the reduction with "
                             f"keepdims=True (or be a scalar), got shape {shape_of(center)} "
                             f"for an input of shape {aval.shape}")
    centered = lax.sub(a, center)
    squares = lax.real(lax.mul(centered, lax.conj(centered))) if aval.dtype.kind == "c" else (
        lax.mul(centered, centered))
    total = sum(squares, axis, keepdims=keepdims, where=mask)
    count = _count(mask, aval.shape, axis, keepdims, dtype_of(total))
    return lax.div(total, lax.sub(count, ddof) if mask is not None else count - ddof)


def std(a, axis=None, dtype=None, out=None, ddof: int = 0, keepdims: bool = False, *,
        where=None, mean=None, correction=None):
    """Standard deviation over ``axis`` (the square root of ``var``, same arguments).

    >>> import functrans.numpy as fnp
    >>> fnp.std(fnp.asarray([1.0, 3.0]))
    array(1.)
    >>> fnp.std(fnp.asarray([1.0, 3.0]), ddof=1)
    array(1.41421356)
    """
    return sqrt(_variance("std", a, axis, dtype, out, ddof, keepdims, where, mean, correction))


def max(a, axis=None, out=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None):
    """The maximum over ``axis`` (all axes by default); nan propagates. ``amax`` is its alias.

    >>> import functrans.numpy as fnp
    >>> fnp.max(fnp.asarray([[1.0, 7.0], [4.0, 2.0]]), axis=0)
    array([4., 7.])
    """
    return _extremum("max", lax.reduce_max, lax.max, a, axis, out, keepdims,
                     initial, where)


def min(a, axis=None, out=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None):
    """The minimum over ``axis`` (all axes by default); nan propagates. ``amin`` is its alias.

    >>> import functrans.numpy as fnp
    >>> fnp.min(fnp.asarray([[1.0, 7.0], [4.0, 2.0]]), axis=1)
    array([1., 2.])
    """
    return _extremum("min", lax.reduce_min, lax.min, a, axis, out, keepdims,
                     initial, where)


def _extremum(name, reduce, combine, a, axis, out, keepdims, initial, where):
    _no_out(name, out)
    a = arg(a)
    aval = get_aval(a)
    mask = _where_mask(name, a, where)
    axes = axis_tuple(axis, aval.ndim)
    if mask is not None:
        if initial is None:
            raise ValueError(f"{name}: a where= mask needs initial= (the value of a slice "
                             "where the mask selects nothing): the reduction has no "
                             "identity")
        a = _masked(a, mask, initial)
    out = keep_dims(reduce(a, axes), aval.shape, axes, keepdims)
    if initial is None:
        return out
    return combine(out, lax.convert_element_type(initial, dtype_of(out)))


amax = alias(max, "amax")
amin = alias(min, "amin")


def any(a, axis=None, out=None, keepdims: bool = False, *,  # noqa: A001 (NumPy's name)
        where=None):
    """Whether any element along ``axis`` (all axes by default) is true (nonzero).

    >>> import functrans.numpy as fnp
    >>> fnp.any(fnp.asarray([[1, 0], [0, 0]]), axis=1)
    array([ True, False])
    """
    _no_out("any", out)
    return lax.gt(sum(as_bool(a), axis, keepdims=keepdims, where=where), 0)


def all(a, axis=None, out=None, keepdims: bool = False, *,  # noqa: A001 (NumPy's name)
        where=None):
    """Whether every element along ``axis`` (all axes by default) is true (nonzero).

    >>> import functrans.numpy as fnp
    >>> fnp.all(fnp.asarray([[1, 0], [2, 3]]), axis=1)
    array([False,  True])
    """
    _no_out("all", out)
    return lax.eq(sum(logical_not(a), axis, keepdims=keepdims, where=where), 0)


def _arg_extremum(f, a, axis, keepdims: bool):
    a = arg(a)
    shape = shape_of(a)
    if axis is None:
        return keep_dims(f(ravel(a), 0), shape, tuple(range(len(shape))), bool(keepdims))
    axis = shape_ops.normalize_axis(int(axis), len(shape))
    return keep_dims(f(a, axis), shape, (axis,), bool(keepdims))


def _no_out(name: str, out) -> None:
    """Reject NumPy's ``out=`` (JAX accepts only None): arrays here are immutable."""
    if out is not None:
        raise NotImplementedError(f"{name}: out= is not supported (arrays are immutable); "
                                  f"use the returned array: x = {name}(...)")


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the first maximum along ``axis`` (of the flattened array by default).
    ``out`` must be None (as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.argmax(fnp.asarray([[1.0, 7.0, 7.0], [4.0, 2.0, 0.0]]), axis=1)
    array([1, 0])
    """
    _no_out("argmax", out)
    return _arg_extremum(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the first minimum along ``axis`` (of the flattened array by default).
    ``out`` must be None (as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.argmin(fnp.asarray([[1.0, 7.0, 7.0], [4.0, 2.0, 0.0]]))
    array(5)
    """
    _no_out("argmin", out)
    return _arg_extremum(lax.argmin, a, axis, keepdims)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis``: ``a[1:] - a[:-1]``, ``n`` times
    (booleans differ by ``!=``, as in NumPy).  ``prepend`` and ``append`` (scalars, taken
    as one entry along ``axis``, or arrays of ``a``'s shape but along ``axis``) are joined
    to ``a`` before differencing.

    >>> import functrans.numpy as fnp
    >>> fnp.diff(fnp.asarray([1, 4, 9, 16]))
    array([3, 5, 7])
    >>> fnp.diff(fnp.asarray([1, 4, 9, 16]), n=2)
    array([2, 2])
    >>> fnp.diff(fnp.asarray([1, 4, 9]), prepend=0, append=fnp.asarray([16]))
    array([1, 3, 5, 7])
    """
    a = arg(a)
    n = static_int(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: the order n must be non-negative, got {n}")
    shape = shape_of(a)
    if not shape:
        raise ValueError("diff: the input must have at least one axis, got a scalar")
    axis = shape_ops.normalize_axis(static_int(axis, "diff", "axis"), len(shape))
    if n == 0:
        return a
    if prepend is not None or append is not None:
        parts = [a]
        for where, extra in (("prepend", prepend), ("append", append)):
            if extra is None:
                continue
            extra = arg(extra)
            if not shape_of(extra):
                if not isinstance(extra, Tracer):  # on a's device, in the promoted dtype
                    extra = backend.full((), extra, result_type(a, extra), like=a)
                extra = shape_ops.broadcast_to(extra, shape[:axis] + (1,) + shape[axis + 1:])
            elif (len(shape_of(extra)) != len(shape) or shape_of(extra)[:axis] != shape[:axis]
                  or shape_of(extra)[axis + 1:] != shape[axis + 1:]):
                raise ValueError(f"diff: {where} must be a scalar or have the shape of a "
                                 f"{shape} except along axis {axis}, got {shape_of(extra)}")
            parts.insert(0 if where == "prepend" else len(parts), extra)
        dtype = np.result_type(*[get_aval(p).dtype for p in parts])
        a = lax.concatenate([astype(p, dtype, copy=False) for p in parts], axis)
    difference = lax.ne if dtype_of(a) == np.bool_ else lax.sub
    for _ in range(n):
        m = shape_of(a)[axis]
        a = difference(slice_axis(a, axis, builtins.min(1, m), m),
                       slice_axis(a, axis, 0, builtins.max(m - 1, 0)))
    return a


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """The sum along a diagonal (see ``diagonal``), with ``sum``'s dtype rules.

    >>> import functrans.numpy as fnp
    >>> fnp.trace(fnp.asarray([[1, 2], [3, 4]]))
    array(5)
    """
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
