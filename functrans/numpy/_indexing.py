"""Indexing with static indices: the ``x[index]`` of tracers (``getitem``, installed as
``Tracer.__getitem__``), elementwise selection (``where``), and the parts of arrays picked
by position (``diagonal``, ``diag``, ``tril``, ``triu``).

Indices here are static (Python ints, slices, None, Ellipsis): they decide the output
shape.  A new function that picks or places elements by position goes here.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np
from numpy import newaxis

from functrans import backend, lax
from functrans.core import Tracer
from functrans.numpy._util import arg, as_bool, dtype_of, shape_of, static_int
from functrans.primitives import shape as shape_ops

__all__ = ["newaxis", "where", "diagonal", "diag", "tril", "triu"]



def where(condition, x=None, y=None):
    """Elementwise ``x if condition else y`` (broadcasting); the one-argument form is not
    supported (its output shape depends on the data)."""
    if x is None or y is None:
        raise TypeError("where(condition) without x and y has a data-dependent shape and is "
                        "not supported; use where(condition, x, y)")
    return lax.select(as_bool(condition), arg(x), arg(y))



def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal ``a[i, i + offset]`` of the planes spanned by ``axis1`` and ``axis2``,
    as the last axis of the result (the other axes keep their order)."""
    a = arg(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"diagonal: the input must have at least two axes, got shape {shape}")
    offset = static_int(offset, "diagonal", "offset")
    ax1 = shape_ops.normalize_axis(static_int(axis1, "diagonal", "axis1"), len(shape), "axis1")
    ax2 = shape_ops.normalize_axis(static_int(axis2, "diagonal", "axis2"), len(shape), "axis2")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are axis {ax1}")
    rest = [i for i in range(len(shape)) if i not in (ax1, ax2)]
    lead = [shape[i] for i in rest]
    rows, cols = shape[ax1], shape[ax2]
    r0, c0 = builtins.min(builtins.max(-offset, 0), rows), builtins.min(builtins.max(offset, 0),
                                                                         cols)
    size = builtins.min(rows - r0, cols - c0)
    # The square block whose main diagonal is the wanted one, flattened: every
    # (size + 1)-th element lies on that diagonal.
    x = shape_ops.transpose_axes(a, rest + [ax1, ax2])
    x = lax.slice(x, [0] * len(lead) + [r0, c0], lead + [r0 + size, c0 + size])
    x = shape_ops.reshape(x, lead + [size * size])
    return lax.slice(x, [0] * (len(lead) + 1), lead + [size * size],
                        [1] * len(lead) + [size + 1])


def diag(v, k: int = 0):
    """A 1-D ``v`` placed on the ``k``-th diagonal of a square 2-D array, or the ``k``-th
    diagonal of a 2-D ``v``.

    >>> import functrans.numpy as fnp
    >>> fnp.diag(fnp.asarray([1, 2]), 1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    v = arg(v)
    shape = shape_of(v)
    k = static_int(k, "diag", "k")
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ValueError(f"diag: the input must be 1-D or 2-D, got shape {shape}")
    n = shape[0]
    size = n + builtins.abs(k)
    # With `size` zeros between neighbours, element i lands at flat position
    # start + i * (size + 1), which is (i, i + k) of the (size, size) result.
    start = k if k >= 0 else -k * size
    spread = n + (n - 1) * size if n else 0
    zero = lax.convert_element_type(0, dtype_of(v))
    flat = lax.pad(v, zero, [(start, size * size - start - spread, size)])
    return shape_ops.reshape(flat, (size, size))



def _triangle(name: str, m, k, lower: bool):
    m = arg(m)
    shape = shape_of(m)
    if len(shape) < 2:
        raise ValueError(f"{name}: the input must have at least two axes, got shape {shape}")
    k = static_int(k, name, "k")
    rows, cols = shape[-2:]
    keep = (backend.tri(rows, cols, k, dtype=bool, like=m) if lower else
            ~backend.tri(rows, cols, k - 1, dtype=bool, like=m))
    return lax.select(keep, m, lax.zeros_like(m))


def tril(m, k: int = 0):
    """Zero the elements above the ``k``-th diagonal of the last two axes."""
    return _triangle("tril", m, k, lower=True)


def triu(m, k: int = 0):
    """Zero the elements below the ``k``-th diagonal of the last two axes."""
    return _triangle("triu", m, k, lower=False)



def getitem(x, index):
    """``x[index]`` for a tracer ``x``: basic indexing with Python ints, slices, None and
    Ellipsis."""
    if not isinstance(index, tuple):
        index = (index,)
    for idx in index:
        if isinstance(idx, (Tracer, list, bool, np.bool_)) or getattr(idx, "ndim", 0) > 0 or (
                getattr(idx, "dtype", None) == np.bool_):
            raise NotImplementedError(
                f"Indexing with {type(idx).__name__} {idx!r} (advanced, boolean or traced "
                "indices) is not supported yet; use static ints, slices, None and Ellipsis")
    shape = shape_of(x)
    n_real = len([i for i in index if i is not None and i is not Ellipsis])
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for an array of shape {shape}")
    if index.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    rest = (builtins.slice(None),) * (len(shape) - n_real)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + rest + index[k + 1:]
    else:
        index = index + rest
    start, limit, strides, squeeze_axes, reverse_axes, new_axes = [], [], [], [], [], []
    axis, out_axis = 0, 0
    for idx in index:
        if idx is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        n = shape[axis]
        if not isinstance(idx, builtins.slice):
            try:
                i = operator.index(idx)
            except TypeError:
                raise TypeError(f"invalid index {idx!r} of type {type(idx).__name__}; use "
                                "ints, slices, None and Ellipsis") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            start.append(i), limit.append(i + 1), strides.append(1)
            squeeze_axes.append(axis)
        else:
            lo, hi, step = idx.indices(n)
            if step < 0:
                # x[hi+1 .. lo] reversed: reverse the axis, then slice forward.
                reverse_axes.append(axis)
                lo, hi, step = n - 1 - lo, n - 1 - hi, -step
            count = builtins.max(0, -(-(hi - lo) // step))
            start.append(lo), limit.append(lo + (count - 1) * step + 1 if count else lo)
            strides.append(step)
            out_axis += 1
        axis += 1
    if reverse_axes:
        x = lax.rev(x, reverse_axes)
    x = lax.slice(x, start, limit, strides)
    if squeeze_axes:
        x = shape_ops.squeeze(x, squeeze_axes)
    if new_axes:
        x = shape_ops.expand_dims(x, new_axes)
    return x


def setitem(x, index, value):
    """``x[index] = value`` on a tracer: refused, as traced arrays are immutable values."""
    raise TypeError(
        f"A traced array ({x.aval.str_short()}) does not support item assignment "
        f"(x[{index!r}] = ...): inside a transform arrays are immutable values, and changing "
        "one in place would hide the change from the derivative. Build a new array instead: "
        "functrans.lax.dynamic_update_slice(x, update, start_indices) for a block, "
        "functrans.numpy.where(mask, new, x) elementwise, or functrans.numpy.concatenate. "
        "(JAX's x.at[index].set(value) is not available in functrans yet.)")
