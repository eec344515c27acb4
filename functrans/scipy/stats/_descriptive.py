"""The summary functions of ``jax.scipy.stats``: ``mode``, ``rankdata`` and ``sem``
(re-exported by ``functrans.scipy.stats``).

>>> import numpy as np
>>> from functrans.scipy.stats import rankdata
>>> rankdata(np.array([10, 30, 20, 30]))
array([1. , 3.5, 2. , 3.5])
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import functrans.numpy as fnp
from functrans import core, lax
from functrans.core import get_aval
from functrans.primitives.shape import normalize_axis
from functrans.scipy._util import inexact

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """What ``mode`` returns: the most common values and how often each occurs."""
    mode: Any
    count: Any  # type: ignore[assignment]  # the field shadows tuple.count, as in SciPy


def _check_nan_policy(name: str, nan_policy: str) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"{name}: illegal nan_policy value {nan_policy!r}; expected one of "
                         "'propagate', 'omit', 'raise'")
    if nan_policy != "propagate":
        raise NotImplementedError(
            f"{name}: nan_policy={nan_policy!r} is not supported (as in JAX): it would need "
            "to know whether the input holds a nan while tracing; use nan_policy='propagate' "
            "and handle nans before the call")


def _runs(sorted_values):
    """The first and last positions of the run of equal values (nans equal) that each
    position of ``sorted_values`` (sorted along its last axis) belongs to."""
    aval = get_aval(sorted_values)
    size = aval.shape[-1]
    same = sorted_values[..., 1:] == sorted_values[..., :-1]
    if core.is_inexact(aval.dtype):
        same = same | (fnp.isnan(sorted_values[..., 1:]) & fnp.isnan(sorted_values[..., :-1]))
    edge = fnp.ones_like(sorted_values[..., :1], dtype=bool)
    positions = fnp.broadcast_to(lax.iota(np.int64, size, like=sorted_values), aval.shape)
    starts = fnp.concatenate([edge, ~same], axis=-1)
    ends = fnp.concatenate([~same, edge], axis=-1)
    first = lax.cummax(fnp.where(starts, positions, 0), axis=aval.ndim - 1)
    last = lax.cummin(fnp.where(ends, positions, size), axis=aval.ndim - 1, reverse=True)
    return first, last


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` (the smallest of equally common ones; nans
    count as equal) and its count, as a ``ModeResult(mode, count)``.  The mode is an entry
    of ``a``: its derivative picks that entry (the first of its kind), as in JAX.  Along an
    empty axis the mode is nan and the count 0.0, as in JAX.

    >>> import numpy as np
    >>> mode(np.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))
    ModeResult(mode=array(4), count=array(3))
    >>> mode(np.array([[1, 2, 1], [3, 1, 3], [1, 2, 2]]), axis=1)
    ModeResult(mode=array([1, 3, 2]), count=array([2, 2, 2]))
    """
    _check_nan_policy("mode", nan_policy)
    x = fnp.atleast_1d(fnp.asarray(a))
    shape = get_aval(x).shape
    if axis is None:
        x = fnp.reshape(x, (1,) * (len(shape) - 1) + (-1,))
        axis = len(shape) - 1
        out_shape = (1,) * len(shape) if keepdims else ()
    else:
        axis = normalize_axis(axis, len(shape))
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(shape)
                          if keepdims or i != axis)
    x = fnp.moveaxis(x, axis, -1)
    if get_aval(x).shape[-1] == 0:
        return ModeResult(fnp.full_like(x, np.nan, np.float64, out_shape),
                          fnp.full_like(x, 0.0, np.float64, out_shape))
    order = fnp.argsort(x, axis=-1, stable=True)
    first, last = _runs(fnp.take_along_axis(x, order, axis=-1))
    counts = last - first + 1
    best = fnp.argmax(counts, axis=-1, keepdims=True)  # the first: the smallest value
    value = fnp.take_along_axis(x, fnp.take_along_axis(order, best, axis=-1), axis=-1)
    count = fnp.take_along_axis(counts, best, axis=-1)
    return ModeResult(fnp.reshape(value, out_shape), fnp.reshape(count, out_shape))


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """The ranks (from 1, as floats) of the entries of ``a`` along ``axis`` (of the flattened
    array for None), ties resolved by ``method``: ``'average'``, ``'min'``, ``'max'``,
    ``'dense'`` or ``'ordinal'``.  A slice with a nan ranks as all nan, as in JAX.  Ranks
    are constant in ``a``: their derivative is zero.

    >>> import numpy as np
    >>> rankdata(np.array([3, 1, 3, 2]), "min")
    array([3., 1., 3., 2.])
    >>> rankdata(np.array([[1, 3], [2, 2]]), axis=1)
    array([[1. , 2. ],
           [1.5, 1.5]])
    """
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; expected one of "
                         f"{', '.join(map(repr, _RANK_METHODS))}")
    x = fnp.asarray(a)
    if axis is None:
        x, axis = fnp.ravel(x), 0
    else:
        axis = normalize_axis(axis, get_aval(x).ndim)
    x = fnp.moveaxis(x, axis, -1)
    if get_aval(x).shape[-1] == 0:
        return fnp.moveaxis(fnp.zeros_like(x, dtype=np.float64), -1, axis)
    order = fnp.argsort(x, axis=-1, stable=True)
    inverse = fnp.argsort(order, axis=-1, stable=True)  # where each entry sorts to
    sorted_values = fnp.take_along_axis(x, order, axis=-1)
    if method == "ordinal":
        ranks = inverse + 1
    elif method == "dense":
        new = fnp.concatenate([fnp.ones_like(sorted_values[..., :1], dtype=bool),
                               sorted_values[..., 1:] != sorted_values[..., :-1]], axis=-1)
        ranks = fnp.take_along_axis(fnp.cumsum(new, axis=-1), inverse, axis=-1)
    else:
        first, last = _runs(sorted_values)
        by_method = {"min": first + 1, "max": last + 1, "average": 0.5 * (first + last) + 1}
        ranks = fnp.take_along_axis(by_method[method], inverse, axis=-1)
    ranks = fnp.astype(ranks, np.float64)
    if core.is_inexact(get_aval(x).dtype):
        ranks = fnp.where(fnp.any(fnp.isnan(x), axis=-1, keepdims=True), np.nan, ranks)
    return fnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean along ``axis`` (all axes for None): the standard
    deviation with ``ddof`` degrees of freedom removed, over the square root of the number
    of values.  ``nan_policy='omit'`` leaves nans out (of both); ``'raise'`` is not
    supported, as in JAX.

    >>> import numpy as np
    >>> round(float(sem(np.array([1.0, 2.0, 3.0]))), 10)  # 1 / sqrt(3)
    0.5773502692
    >>> round(float(sem(np.array([1.0, np.nan, 3.0, 4.0]), nan_policy="omit")), 6)
    0.881917
    """
    b = inexact(a)
    aval = get_aval(b)
    if nan_policy == "propagate":
        if axis is None:
            size = math.prod(aval.shape)
        else:
            size = aval.shape[normalize_axis(axis, aval.ndim)]
        return fnp.std(b, axis, ddof=ddof, keepdims=keepdims) / math.sqrt(size)
    if nan_policy == "omit":
        count = fnp.sum(~fnp.isnan(b), axis, keepdims=keepdims)
        return (fnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
                / fnp.astype(fnp.sqrt(count), aval.dtype))
    raise ValueError(f"sem: nan_policy={nan_policy!r} is not supported; use 'propagate' or "
                     "'omit'")
