"""Indexing: the ``x[index]`` of tracers (``getitem``, installed as ``Tracer.__getitem__``),
``take`` and ``take_along_axis``, elementwise selection (``where``), and the parts of arrays
picked by position (``diagonal``, ``diag``, ``tril``, ``triu``).

Basic indices (Python ints, slices, None, Ellipsis) become slices.  Integer arrays, lists
and traced integers (advanced indices) become one ``lax.gather``: the basic part is applied
first with the advanced axes kept whole, those axes are moved to the front, and the index
arrays, broadcast together, are stacked into the gather's positions; NumPy's rule then
places the broadcast index axes where the first advanced index was if the advanced indices
are adjacent, else in front.  Concrete indices out of bounds raise ``IndexError`` as in
NumPy; traced ones cannot be checked and are clamped (JAX's choice for reads).  A new
function that picks or places elements by position goes here.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np
from numpy import newaxis

from functrans import backend, lax
from functrans.core import Tracer
from functrans.numpy._index_tricks import nonzero
from functrans.numpy._util import arg, as_bool, dtype_of, shape_of, static_int
from functrans.primitives import shape as shape_ops
from functrans.primitives.gather import with_batch_column

__all__ = ["newaxis", "where", "diagonal", "diag", "diagflat", "tril", "triu", "take",
           "take_along_axis"]



def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elementwise ``x if condition else y`` (broadcasting); ``where(condition)`` alone is
    ``nonzero(condition, size=size, fill_value=fill_value)``."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError("where: pass both x and y, or neither (where(condition) is nonzero)")
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


def diagflat(v, k: int = 0):
    """A square array with the flattened ``v`` on diagonal ``k`` and zeros elsewhere.

    >>> import functrans.numpy as fnp
    >>> fnp.diagflat([[1, 2]], 1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    v = arg(v)
    return diag(shape_ops.reshape(v, (math.prod(shape_of(v)),)), k)


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



def _full_index(shape: tuple, index: tuple) -> tuple:
    """``index`` with its Ellipsis (or the missing trailing axes) spelled out as slices."""
    n_real = len([i for i in index if i is not None and i is not Ellipsis])
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for an array of shape {shape}")
    if builtins.sum(i is Ellipsis for i in index) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    rest = (builtins.slice(None),) * (len(shape) - n_real)
    for k, i in enumerate(index):
        if i is Ellipsis:
            return index[:k] + rest + index[k + 1:]
    return index + rest


def _basic_getitem(x, index: tuple):
    shape = shape_of(x)
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




def _is_boolean(idx) -> bool:
    return isinstance(idx, (bool, np.bool_)) or getattr(idx, "dtype", None) == np.bool_


def _is_advanced(idx) -> bool:
    return isinstance(idx, (Tracer, list, tuple)) or (
        backend.is_array(idx) and idx.ndim > 0)


def _expand_masks(index: tuple) -> tuple:
    """Concrete boolean arrays replaced by the integer arrays of their True positions."""
    out = []
    for idx in index:
        if isinstance(idx, list) and idx and builtins.all(
                isinstance(i, (bool, np.bool_)) for i in idx):
            idx = np.asarray(idx)
        if _is_boolean(idx):
            if isinstance(idx, Tracer):
                raise TypeError(
                    f"A traced boolean mask ({idx.aval.str_short()}) cannot index an array "
                    "inside a transform: the result's shape would depend on the mask's "
                    "values. Use functrans.numpy.where(mask, x, 0) to keep the shape.")
            if not backend.is_array(idx) or idx.ndim == 0:
                raise IndexError(f"boolean scalar indices ({idx!r}) are not supported; use "
                                 "an explicit boolean array or functrans.numpy.where")
            out.extend(idx.nonzero())
        else:
            out.append(idx)
    return tuple(out)


def _index_array(idx, n: int, axis: int):
    """An advanced index as int64 positions in ``0 .. n-1``: negative ones wrapped; concrete
    host ones checked against the bounds as NumPy does, traced ones left for the gather to
    clamp."""
    if isinstance(idx, Tracer):
        if dtype_of(idx).kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer type, got a traced "
                             f"{idx.aval.str_short()} for axis {axis}")
        i = lax.convert_element_type(idx, np.int64)
        return lax.select(lax.lt(i, 0), lax.add(i, n), i)
    device = backend.is_device_array(idx)
    i = idx if device else np.asarray(idx)
    if i.dtype.kind not in "iu" and not (i.size == 0 and i.dtype.kind == "f"):
        raise IndexError(f"arrays used as indices must be of integer type, got {i.dtype} "
                         f"for axis {axis}")
    i = i.astype(np.int64)
    if not device and i.size and (i.min() < -n or i.max() >= n):
        bad = i[(i < -n) | (i >= n)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    return backend.array_module(i).where(i < 0, i + n, i)


def _advanced_getitem(x, index: tuple):
    shape = shape_of(x)
    basic, advanced, axis = [], [], 0
    for idx in index:  # advanced entries stay whole axes of the basic result
        if idx is None or isinstance(idx, builtins.slice):
            basic.append(idx)
        else:
            advanced.append((len(basic), _index_array(idx, shape[axis], axis)))
            basic.append(builtins.slice(None))
        axis += idx is not None
    y = _basic_getitem(x, tuple(basic))
    places = [p for p, _ in advanced]
    arrays = [a for _, a in advanced]
    batch = np.broadcast_shapes(*[shape_of(a) for a in arrays])
    positions = lax.concatenate(
        [shape_ops.expand_dims(shape_ops.broadcast_to(a, batch), (len(batch),))
         for a in arrays], len(batch))
    rest = [i for i in range(len(shape_of(y))) if i not in places]
    out = lax.gather(shape_ops.transpose_axes(y, places + rest), positions)
    first, nb = places[0], len(batch)
    if places == list(range(first, first + len(places))) and first:
        # adjacent advanced indices: their axes go where the first of them was
        ndim = len(shape_of(out))
        out = shape_ops.transpose_axes(out, list(range(nb, nb + first)) + list(range(nb))
                                       + list(range(nb + first, ndim)))
    return out


def getitem(x, index):
    """``x[index]`` for a tracer ``x``, with NumPy's rules: ints, slices, None, Ellipsis,
    integer arrays (broadcast together), concrete boolean masks, and traced integers."""
    if not isinstance(index, tuple):
        index = (index,)
    index = _full_index(shape_of(x), _expand_masks(index))
    if builtins.any(_is_advanced(i) for i in index):
        return _advanced_getitem(x, index)
    return _basic_getitem(x, index)


def take(a, indices, axis=None, mode=None):
    """The elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    ``axis`` is None): ``a[..., indices, ...]``.

    ``mode=None`` indexes as ``a[...]`` does (negative indices wrap; concrete ones out of
    bounds raise, traced ones are clamped); ``mode="clip"`` clamps every index into
    ``0 .. n-1``, negative ones to 0, as NumPy's ``clip`` mode.

    >>> import functrans.numpy as fnp
    >>> fnp.take(fnp.asarray([[1., 2.], [3., 4.]]), [3, 0, -1])
    array([4., 1., 4.])
    >>> fnp.take(fnp.asarray([10., 20., 30.]), [-1, 5], mode="clip")
    array([10., 30.])
    """
    a = arg(a)
    if axis is None:
        a, axis = shape_ops.reshape(a, (math.prod(shape_of(a)),)), 0
    shape = shape_of(a)
    axis = shape_ops.normalize_axis(static_int(axis, "take", "axis"), len(shape))
    if mode == "clip":
        if isinstance(indices, Tracer):
            indices = lax.max(lax.min(indices, shape[axis] - 1), 0)
        else:
            indices = backend.array_module(indices).clip(
                indices if backend.is_array(indices) else np.asarray(indices), 0, shape[axis] - 1)
    elif mode is not None:
        raise NotImplementedError(f"take: mode={mode!r} is not supported; use None (as "
                                  "indexing) or 'clip'")
    if not _is_advanced(indices):  # a scalar index: one element, as NumPy does
        if not isinstance(indices, Tracer) and not backend.is_array(indices):
            indices = np.asarray(indices)
    return _advanced_getitem(a, (builtins.slice(None),) * axis + (indices,)
                             + (builtins.slice(None),) * (len(shape) - axis - 1))


def take_along_axis(arr, indices, axis):
    """``out[..., j, ...] = arr[..., indices[..., j, ...], ...]`` along ``axis``: ``indices``
    has ``arr``'s number of axes and broadcasts with it on the others (with ``axis=None``,
    1-D ``indices`` into the flattened ``arr``).  Negative indices wrap; traced ones out of
    bounds are clamped.

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([[10., 30., 20.], [60., 40., 50.]])
    >>> fnp.take_along_axis(x, fnp.asarray([[0, 2], [1, -1]]), axis=1)
    array([[10., 20.],
           [40., 50.]])
    """
    arr = arg(arr)
    if axis is None:
        arr, axis = shape_ops.reshape(arr, (math.prod(shape_of(arr)),)), 0
    shape = shape_of(arr)
    if not isinstance(indices, Tracer) and not backend.is_array(indices):
        indices = np.asarray(indices)
    if len(shape_of(indices)) != len(shape):
        raise ValueError(f"take_along_axis: indices of shape {shape_of(indices)} must have as "
                         f"many axes as the array of shape {shape}")
    axis = shape_ops.normalize_axis(static_int(axis, "take_along_axis", "axis"), len(shape))
    indices = _index_array(indices, shape[axis], axis)
    last = len(shape) - 1
    arr, indices = shape_ops.moveaxis(arr, axis, last), shape_ops.moveaxis(indices, axis, last)
    lead = np.broadcast_shapes(shape_of(arr)[:-1], shape_of(indices)[:-1])
    n, m, rows = shape[axis], shape_of(indices)[-1], math.prod(lead)
    arr = shape_ops.reshape(shape_ops.broadcast_to(arr, lead + (n,)), (rows, n))
    indices = shape_ops.reshape(shape_ops.broadcast_to(indices, lead + (m,)), (rows, m, 1))
    out = lax.gather(arr, with_batch_column(indices, rows))  # row r reads its own row
    return shape_ops.moveaxis(shape_ops.reshape(out, lead + (m,)), last, axis)


def setitem(x, index, value):
    """``x[index] = value`` on a tracer: refused, as traced arrays are immutable values."""
    raise TypeError(
        f"A traced array ({x.aval.str_short()}) does not support item assignment "
        f"(x[{index!r}] = ...): inside a transform arrays are immutable values, and changing "
        "one in place would hide the change from the derivative. Build a new array instead: "
        "functrans.lax.dynamic_update_slice(x, update, start_indices) for a block, "
        "functrans.numpy.where(mask, new, x) elementwise, or functrans.numpy.concatenate. "
        "(JAX's x.at[index].set(value) is not available in functrans yet.)")
