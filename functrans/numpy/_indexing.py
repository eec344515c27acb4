"""Indexing: the ``x[index]`` of tracers (``getitem``, installed as ``Tracer.__getitem__``),
JAX's functional updates ``x.at[index].set(...)`` and friends (``IndexUpdateHelper``,
installed as ``.at`` of tracers and of ``functrans.array_types.Array``), ``take`` and
``take_along_axis``, their functional inverses ``put_along_axis``, ``put``, ``place`` and
``fill_diagonal``, elementwise selection (``where``), and the parts of arrays picked by
position (``diagonal``, ``diag``, ``tril``, ``triu``).

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

from functrans import backend, core, lax
from functrans.core import NonConcreteBooleanIndexError, Tracer, is_python_scalar
from functrans.numpy._index_tricks import lazy_shape_error, nonzero
from functrans.numpy._dtypes import result_type
from functrans.numpy._elementwise import power, true_divide
from functrans.numpy._util import (arg, as_bool, dtype_of, sequence_to_array, shape_of,
                                   static_int)
from functrans.primitives import shape as shape_ops
from functrans.primitives.gather import mode_name

__all__ = ["newaxis", "where", "diagonal", "diag", "diagflat", "tril", "triu", "take",
           "take_along_axis", "put_along_axis", "put", "place", "fill_diagonal"]



def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elementwise ``x if condition else y`` (broadcasting); ``where(condition)`` alone is
    ``nonzero(condition, size=size, fill_value=fill_value)``.

    >>> import functrans.numpy as fnp
    >>> fnp.where(fnp.asarray([True, False]), fnp.asarray([1, 2]), fnp.asarray([-1, -2]))
    array([ 1, -2])
    >>> fnp.where(fnp.asarray([0, 3, 0, 5]))
    (array([1, 3]),)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise TypeError("where: pass both x and y, or neither (where(condition) is nonzero)")
    if size is not None or fill_value is not None:
        raise ValueError("where: size= and fill_value= belong to where(condition) alone (the "
                         "nonzero form); where(condition, x, y) has the shape of its inputs")
    return lax.select(as_bool(condition), arg(x), arg(y))



def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal ``a[i, i + offset]`` of the planes spanned by ``axis1`` and ``axis2``,
    as the last axis of the result (the other axes keep their order).

    >>> import functrans.numpy as fnp
    >>> fnp.diagonal(fnp.asarray([[1, 2, 3], [4, 5, 6]]), offset=1)
    array([2, 6])
    """
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
    """Zero the elements above the ``k``-th diagonal of the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.tril(fnp.asarray([[1, 2], [3, 4]]))
    array([[1, 0],
           [3, 4]])
    """
    return _triangle("tril", m, k, lower=True)


def triu(m, k: int = 0):
    """Zero the elements below the ``k``-th diagonal of the last two axes.

    >>> import functrans.numpy as fnp
    >>> fnp.triu(fnp.asarray([[1, 2], [3, 4]]))
    array([[1, 2],
           [0, 4]])
    """
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
            i = _as_int(idx)
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


def _prepare_index(x, index: tuple):
    """``index`` in the forms the getters take, and ``x`` to apply it to, following NumPy:
    (nested) lists and tuples become integer or boolean arrays (traced when they hold
    tracers); a concrete boolean mask is checked against the axes it covers and becomes
    the integer arrays of its True positions; a scalar boolean (``x[True]``) indexes a new
    axis of length 1 with ``[0]`` (``[]`` for False).  Also whether the advanced indices
    are adjacent: NumPy puts their axes in place of the first one only then, and an
    Ellipsis between them separates them even when it stands for no axis."""
    index = tuple(sequence_to_array(i) if isinstance(i, (list, tuple)) else i for i in index)
    shape = shape_of(x)
    widths = []
    for idx in index:
        if idx is None or idx is Ellipsis:
            widths.append(0)
        elif _is_boolean(idx):
            if isinstance(idx, Tracer):
                raise NonConcreteBooleanIndexError(
                    f"A traced boolean mask ({idx.aval.str_short()}) cannot index an array "
                    "inside a transform: the result's shape would depend on the mask's "
                    "values. Use functrans.numpy.where(mask, x, 0) to keep the shape.")
            widths.append(np.ndim(idx))
        else:
            widths.append(1)
    if builtins.sum(widths) > len(shape):
        raise IndexError(f"too many indices ({builtins.sum(widths)}) for an array of shape "
                         f"{shape}")
    out: list = []
    advanced: list[int] = []
    new_axes: list[int] = []
    axis = 0
    for idx, width in zip(index, widths):
        if idx is Ellipsis:
            out.append(idx)
            axis += len(shape) - builtins.sum(widths)
            continue
        if idx is None:
            out.append(idx)
            continue
        if _is_boolean(idx) and width == 0:  # True / False: index a new axis of length 1
            new_axes.append(axis + len(new_axes))
            advanced.append(len(out))
            out.append(np.zeros(1 if idx else 0, np.int64))
            continue
        if _is_boolean(idx):
            mask = idx if backend.is_array(idx) else np.asarray(idx)
            if backend.is_lazy(mask):
                raise lazy_shape_error(
                    "indexing with a boolean mask", mask,
                    "use functrans.numpy.where(mask, x, 0) to keep the shape")
            for j, (m, n) in enumerate(zip(mask.shape, shape[axis:axis + width])):
                if m != n:
                    raise IndexError(
                        f"boolean index did not match indexed array along axis {axis + j}; "
                        f"size of axis is {n} but size of corresponding boolean axis is {m}")
            arrays = mask.nonzero()
            advanced.extend(range(len(out), len(out) + len(arrays)))
            out.extend(arrays)
            axis += width
            continue
        if not isinstance(idx, builtins.slice):
            advanced.append(len(out))
        out.append(idx)
        axis += 1
    if new_axes:
        x = shape_ops.expand_dims(x, tuple(new_axes))
    adjacent = not advanced or advanced[-1] - advanced[0] == len(advanced) - 1
    return x, tuple(out), adjacent


def _index_array(idx, n: int, axis: int, check: bool = True, wrap: bool = True):
    """An advanced index as int64 positions in ``0 .. n-1``: negative ones wrapped (left
    out of bounds if ``wrap`` is False); concrete host ones checked against the bounds as
    NumPy does (unless ``check`` is False: an explicit ``mode`` then says what happens to
    them), traced ones left to the gather's mode."""
    if isinstance(idx, Tracer):
        if dtype_of(idx).kind not in "iu":
            raise IndexError(f"arrays used as indices must be of integer type, got a traced "
                             f"{idx.aval.str_short()} for axis {axis}")
        i = lax.convert_element_type(idx, np.int64)
        return lax.select(lax.lt(i, 0), lax.add(i, n), i) if wrap else i
    device = backend.is_device_array(idx)
    i = idx if device else np.asarray(idx)
    if i.dtype.kind not in "iu" and not (i.size == 0 and i.dtype.kind == "f"):
        raise IndexError(f"arrays used as indices must be of integer type, got {i.dtype} "
                         f"for axis {axis}")
    i = i.astype(np.int64)  # a copy: what is traced must not change with the caller's array
    if not wrap:
        return i
    if device or not i.size:
        return backend.array_module(i).where(i < 0, i + n, i)
    low = i.min()
    if check and (low < -n or i.max() >= n):
        bad = i[(i < -n) | (i >= n)].flat[0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    return i if low >= 0 else np.where(i < 0, i + n, i)


_WHOLE = builtins.slice(None)


def _row_numbers(arrays: list, axes: list, shape: tuple) -> int | None:
    """Which of the index ``arrays`` (into the axes ``axes`` of an array of ``shape``) is a
    host ``arange(n)`` along the first axis of their broadcast shape, for its axis of size
    ``n``, as in ``x[arange(n), labels]``; None if none is.  That axis is then one the
    gather's operand and positions share (``batch_dims=1``): each row of the result reads
    its own row of ``x``, which chunked (dask) arrays keep chunk by chunk, where positions
    in a column would pair every chunk with every other.  Cheap tests first; a candidate
    is compared a block at a time (no temporary of ``n`` elements)."""
    try:
        batch = np.broadcast_shapes(*(shape_of(a) for a in arrays))
    except ValueError:
        return None  # (refused with the shapes below)
    if not batch or not batch[0]:
        return None
    n = batch[0]
    want = (n,) + (1,) * (len(batch) - 1)
    for j, (a, axis) in enumerate(zip(arrays, axes)):
        if (isinstance(a, np.ndarray) and a.dtype.kind in "iu" and a.shape == want
                and shape[axis] == n and a.flat[0] == 0 and a.flat[-1] == n - 1):
            flat = a.reshape(-1)
            if all(np.array_equal(flat[i:i + _BLOCK], np.arange(i, min(i + _BLOCK, n)))
                   for i in range(0, n, _BLOCK)):
                return j
    return None


_BLOCK = 1 << 16


def _advanced_getitem(x, index: tuple, mode=None, fill_value=None, adjacent=None,
                      wrap_negative: bool = True, check: bool | None = None,
                      prepared: bool = False):
    """``x[index]`` for a full index (one entry per axis of ``x``, or None) holding
    integer arrays; ``check``: refuse concrete indices out of bounds (by default when
    ``mode`` is None); ``prepared``: the arrays are ``_index_array``'s already."""
    shape = shape_of(x)
    basic, advanced, axis = [], [], 0
    for idx in index:  # advanced entries stay whole axes of the basic result
        if idx is None or isinstance(idx, builtins.slice):
            basic.append(idx)
        else:
            advanced.append((len(basic), idx, axis))
            basic.append(builtins.slice(None))
        axis += idx is not None
    shared = (_row_numbers([a for _, a, _ in advanced], [d for _, _, d in advanced], shape)
              if len(advanced) > 1 else None)
    if shared is not None:  # x[arange(n), j]: row r of the result reads row r of x
        advanced.insert(0, advanced.pop(shared))
    given = sorted(p for p, _, _ in advanced)
    places = [p for p, _, _ in advanced]
    arrays = [idx if prepared else _index_array(
        idx, shape[d], d, mode is None if check is None else check, wrap_negative)
        for _, idx, d in advanced[shared is not None:]]
    y = x if all(b == _WHOLE for b in basic) else _basic_getitem(x, tuple(basic))
    if len(advanced) == 1:  # the common case (take, x[i]), without the general steps
        batch = shape_of(arrays[0])
        positions = (arrays[0][..., None] if type(arrays[0]) is np.ndarray else
                     shape_ops.expand_dims(arrays[0], (len(batch),)))
    else:
        shapes = [shape_of(a) for _, a, _ in advanced]
        try:
            batch = np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                             f"with shapes {' '.join(map(str, shapes))}") from None
        positions = lax.concatenate(
            [shape_ops.expand_dims(shape_ops.broadcast_to(a, batch), (len(batch),))
             for a in arrays], len(batch))
    rest = [i for i in range(len(shape_of(y))) if i not in places]
    out = lax.gather(shape_ops.transpose_axes(y, places + rest), positions, mode=mode,
                     fill_value=fill_value, batch_dims=int(shared is not None))
    first, nb = given[0], len(batch)
    if adjacent is None:
        adjacent = given[-1] - first == len(given) - 1
    if adjacent and first:
        # adjacent advanced indices: their axes go where the first of them was
        ndim = len(shape_of(out))
        out = shape_ops.transpose_axes(out, list(range(nb, nb + first)) + list(range(nb))
                                       + list(range(nb + first, ndim)))
    return out


def getitem(x, index, mode=None, fill_value=None, wrap_negative: bool = True):
    """``x[index]`` for a tracer ``x``, with NumPy's rules: ints, slices, None, Ellipsis,
    integer arrays (broadcast together), concrete boolean masks, and traced integers.
    ``mode`` (``x.at[index].get(mode=...)``) says what integer-array and traced indices out
    of bounds do: None clamps traced ones and refuses concrete ones as NumPy does; "clip"
    and "promise_in_bounds" clamp, "fill" and "drop" read ``fill_value``."""
    if not isinstance(index, tuple):
        index = (index,)
    x, index, adjacent = _prepare_index(x, index)
    index = _full_index(shape_of(x), index)
    if builtins.any(_is_advanced(i) for i in index) or (
            mode is not None or not wrap_negative) and not _ints_in_bounds(
            shape_of(x), index, wrap_negative):
        # (integers out of bounds are gathered when a mode says what to do with them)
        return _advanced_getitem(x, index, mode, fill_value, adjacent, wrap_negative)
    return _basic_getitem(x, index)


def _as_int(idx) -> int:
    try:
        return operator.index(idx)
    except TypeError:
        raise TypeError(f"invalid index {idx!r} of type {type(idx).__name__}; use ints, "
                        "slices, None, Ellipsis, and integer or boolean arrays") from None


def _ints_in_bounds(shape: tuple, index: tuple, wrap_negative: bool) -> bool:
    """Whether the integers of a full basic ``index`` are all in bounds (negative ones
    count from the end only if ``wrap_negative``)."""
    axis = 0
    for i in index:
        if i is None:
            continue
        if not isinstance(i, builtins.slice):
            i, n = _as_int(i), shape[axis]
            if not (-n if wrap_negative else 0) <= i < n:
                return False
        axis += 1
    return True


_TAKE_MODES = (None, "raise", "fill", "clip", "wrap", "promise_in_bounds")


def _take_indices(name: str, indices, n: int, axis: int, mode, clip_wraps: bool = False):
    """``indices`` into an axis of length ``n`` as positions for a gather, and the gather's
    mode, for ``take``'s ``mode``: None and "raise" refuse concrete indices out of bounds
    (NumPy's default) and read the fill value for traced ones (JAX's default), "fill" reads
    it for all, "clip" clamps (negative ones to 0, as NumPy), "wrap" counts modulo ``n``,
    "promise_in_bounds" clamps after wrapping negative ones (as "clip" does with
    ``clip_wraps``: JAX's ``take_along_axis``)."""
    key = mode_name(mode)
    if key == "fill_or_drop":
        key = "fill"
    if key not in _TAKE_MODES:
        raise ValueError(f"{name}: mode={mode!r} is not one of 'fill', 'clip', 'wrap', "
                         "'raise' or 'promise_in_bounds'")
    if not isinstance(indices, Tracer) and not backend.is_array(indices):
        indices = np.asarray(indices)
    if key == "raise" and isinstance(indices, Tracer):
        raise NotImplementedError(
            f"{name}: mode='raise' cannot check traced indices ({indices.aval.str_short()}) "
            "against the bounds: their values are not known while tracing. Use mode='fill' "
            "(out of bounds reads NaN, the default), 'clip' or 'wrap'.")
    if key == "clip" and clip_wraps:
        key = "promise_in_bounds"
    if key in ("clip", "wrap"):
        if dtype_of(indices).kind not in "iu":
            raise IndexError(f"{name}: indices must be integers, got {dtype_of(indices)}")
        if isinstance(indices, Tracer):
            i = lax.convert_element_type(indices, np.int64)
            i = (lax.max(lax.min(i, n - 1), 0) if key == "clip" else
                 lax.rem(lax.add(lax.rem(i, n), n), n))
        else:
            i = backend.array_module(indices).asarray(indices, dtype=np.int64)
            i = i.clip(0, n - 1) if key == "clip" else i % n
        return i, "clip"
    check = key in (None, "raise")
    positions = _index_array(indices, n, axis, check)
    if check and not isinstance(positions, Tracer) and not backend.is_device_array(positions):
        return positions, "clip"  # checked to be in bounds: nothing to fill
    return positions, "clip" if key == "promise_in_bounds" else "fill"


def take(a, indices, axis=None, out=None, mode=None, unique_indices: bool = False,
         indices_are_sorted: bool = False, fill_value=None):
    """The elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when
    ``axis`` is None): ``a[..., indices, ...]``; negative indices count from the end.

    ``mode`` says what indices out of bounds do: by default (None, or "raise") concrete
    ones raise ``IndexError`` as in NumPy, and traced ones read ``fill_value`` as in JAX
    (default: NaN for floats, the smallest integer, the largest unsigned one, True);
    ``"fill"`` reads ``fill_value`` for both; ``"clip"`` clamps into ``0 .. n-1``
    (negative ones to 0, as NumPy's ``clip``); ``"wrap"`` counts modulo ``n``.
    ``unique_indices`` and ``indices_are_sorted`` are accepted for JAX's sake.

    >>> import functrans.numpy as fnp
    >>> fnp.take(fnp.asarray([[1., 2.], [3., 4.]]), [3, 0, -1])
    array([4., 1., 4.])
    >>> fnp.take(fnp.asarray([10., 20., 30.]), [-1, 5], mode="clip")
    array([10., 30.])
    >>> fnp.take(fnp.asarray([10., 20., 30.]), [-1, 5], mode="fill")
    array([30., nan])
    """
    if out is not None:
        raise NotImplementedError("take: out= is not supported (arrays are immutable)")
    a = arg(a)
    if axis is None:
        a, axis = shape_ops.reshape(a, (math.prod(shape_of(a)),)), 0
    shape = shape_of(a)
    axis = shape_ops.normalize_axis(static_int(axis, "take", "axis"), len(shape))
    indices, gather_mode = _take_indices("take", indices, shape[axis], axis, mode)
    index = ((builtins.slice(None),) * axis + (indices,)
             + (builtins.slice(None),) * (len(shape) - axis - 1))
    return _advanced_getitem(a, index, gather_mode, fill_value, prepared=True)


def _negatives_out_of_bounds(indices, n: int, mode):
    """Negative ``indices`` as out of bounds rather than counted from the end (JAX's
    ``wrap_negative_indices=False``): clamped to 0 by ``"clip"``, past the end (read as
    the fill value, or refused) otherwise."""
    if dtype_of(indices).kind not in "iu":
        return indices
    past = 0 if mode_name(mode) == "clip" else n
    if isinstance(indices, Tracer):
        return lax.select(lax.lt(indices, lax.full_like(indices, 0)),
                          lax.full_like(indices, past), indices)
    return backend.array_module(indices).where(indices < 0, past, indices)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """``out[..., j, ...] = arr[..., indices[..., j, ...], ...]`` along ``axis``: ``indices``
    has ``arr``'s number of axes and broadcasts with it on the others (with ``axis=None``,
    1-D ``indices`` into the flattened ``arr``).  Negative indices count from the end;
    ``mode`` and ``fill_value`` say what ones out of bounds do, as for ``take`` (but
    ``"clip"`` counts negative indices from the end before clamping, as JAX).

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
    if wrap_negative_indices is False:
        indices = _negatives_out_of_bounds(indices, shape[axis], mode)
    indices, gather_mode = _take_indices("take_along_axis", indices, shape[axis], axis, mode,
                                         clip_wraps=True)
    last = len(shape) - 1
    arr, indices = shape_ops.moveaxis(arr, axis, last), shape_ops.moveaxis(indices, axis, last)
    lead = np.broadcast_shapes(shape_of(arr)[:-1], shape_of(indices)[:-1])
    n, m = shape[axis], shape_of(indices)[-1]
    arr = shape_ops.broadcast_to(arr, lead + (n,))
    indices = shape_ops.broadcast_to(indices, lead + (m,))
    out = lax.gather(arr, shape_ops.expand_dims(indices, (len(lead) + 1,)), mode=gather_mode,
                     fill_value=fill_value, batch_dims=len(lead))  # each row reads its own
    return shape_ops.moveaxis(out, last, axis)


def setitem(x, index, value):
    """``x[index] = value`` on a tracer: refused, as traced arrays are immutable values."""
    raise TypeError(
        f"A traced array ({x.aval.str_short()}) does not support item assignment "
        f"(x[{index!r}] = ...): inside a transform arrays are immutable values, and changing "
        "one in place would hide the change from the derivative. Build a new array instead: "
        f"y = x.at[{index!r}].set(value) (or .add, .multiply, ...), "
        "functrans.lax.dynamic_update_slice(x, update, start_indices) for a block, "
        "functrans.numpy.where(mask, new, x) elementwise, or functrans.numpy.concatenate.")


# -- x.at[index]: functional updates ------------------------------------------------------
# Every index form that x[index] accepts is turned into flat element positions by indexing
# an array of element numbers (0 .. x.size-1, shaped like x) with it; the update is then
# one scatter into the flattened x.  Positions out of bounds read -1 there (the gather's
# fill) and the scatter drops them, unless mode="clip" clamps both.

_CLAMPING = frozenset({"clip", "promise_in_bounds"})


_MODES = (None, "clip", "promise_in_bounds", "fill", "drop", "fill_or_drop")


def _mode_key(mode, name: str):
    key = mode_name(mode)
    if key not in _MODES:
        raise ValueError(f"{name}: mode={mode!r} is not one of 'clip', 'promise_in_bounds', "
                         "'fill' or 'drop' (or a GatherScatterMode)")
    return "fill" if key in ("drop", "fill_or_drop") else key


class IndexUpdateHelper:
    """``x.at``: ``x.at[index]`` names the elements of ``x`` that an update applies to."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"IndexUpdateHelper({self.array!r})"


class IndexUpdateRef:
    """``x.at[index]``: its methods return a new array, ``x`` with the elements at
    ``index`` replaced (``set``), combined with ``values`` (``add``, ``subtract``,
    ``multiply``, ``divide``, ``power``, ``min``, ``max``), transformed (``apply``), or
    read (``get``).

    Updates at repeated positions all apply, as JAX and NumPy's ``ufunc.at`` do: ``add``
    adds each, ``multiply`` multiplies by each, ``apply`` applies ``func`` once per
    repeat; of ``set``'s, the last in row-major order wins.  The result has ``x``'s dtype
    (``divide`` of integers gives floats): the update is computed in the dtype ``x`` and
    ``values`` promote to, then cast back, as JAX does.  ``mode`` says what indices out of
    bounds do: None (the default), "drop" or "fill" drop their updates, "clip" or
    "promise_in_bounds" clamp them into range; for ``get`` None clamps (and refuses
    concrete ones, as NumPy does), "fill" reads ``fill_value``.  With
    ``wrap_negative_indices=False`` negative indices are out of bounds instead of counting
    from the end.  ``indices_are_sorted`` and ``unique_indices`` are accepted for JAX's
    sake and change nothing.

    >>> import functrans.numpy as fnp
    >>> x = fnp.zeros(4)
    >>> x.at[1].set(5.0)
    array([0., 5., 0., 0.])
    >>> x.at[fnp.asarray([0, 0, 9])].add(1.0)      # repeated: both add; 9: dropped
    array([2., 0., 0., 0.])
    >>> x.at[::2].set(fnp.asarray([1.0, 2.0]))
    array([1., 0., 2., 0.])
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, wrap_negative_indices=True):
        """``x[index]``, with ``mode`` and ``fill_value`` for indices out of bounds."""
        return getitem(arg(self.array), self.index, _mode_key(mode, "x.at[...].get"),
                       fill_value, wrap_negative_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """``x`` with ``values`` (broadcast) written at ``index``."""
        return _update("set", self, values, mode, wrap_negative_indices)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """``x`` with ``values`` added at ``index``."""
        return _update("add", self, values, mode, wrap_negative_indices)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """``x`` with ``values`` subtracted at ``index``."""
        return _update("subtract", self, values, mode, wrap_negative_indices)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        """``x`` multiplied by ``values`` at ``index``."""
        return _update("multiply", self, values, mode, wrap_negative_indices)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               wrap_negative_indices=True):
        """``x`` divided by ``values`` at ``index`` (true division: integers become
        floats)."""
        return _update("divide", self, values, mode, wrap_negative_indices)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """``x`` raised to ``values`` at ``index``."""
        return _update("power", self, values, mode, wrap_negative_indices)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """``x`` with the minimum of its elements and ``values`` at ``index``."""
        return _update("min", self, values, mode, wrap_negative_indices)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        """``x`` with the maximum of its elements and ``values`` at ``index``."""
        return _update("max", self, values, mode, wrap_negative_indices)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """``x`` with ``func`` (an elementwise function) applied to the elements at
        ``index``, once for each time an element is named there."""
        return _update("apply", self, func, mode, wrap_negative_indices)


_SCATTERS = {"set": lax.scatter, "add": lax.scatter_add, "subtract": lax.scatter_add,
             "min": lax.scatter_min, "max": lax.scatter_max}


def _update(op: str, ref: IndexUpdateRef, values, mode, wrap_negative: bool = True):
    key = _mode_key(mode, f"x.at[...].{op}")
    clamp = key in _CLAMPING
    x = arg(ref.array)
    shape, dtype = shape_of(x), dtype_of(x)
    size = math.prod(shape)
    numbers = backend.arange(size, dtype=np.int64, like=x).reshape(shape)
    with core.evaluating_constants():  # concrete indices: concrete positions, also under jit
        positions = getitem(numbers, ref.index, "clip" if clamp else "fill", -1, wrap_negative)
        updated = shape_of(positions)  # the shape of x[index]
        positions = shape_ops.reshape(positions, (math.prod(updated), 1))
    scatter_mode = "clip" if clamp else "drop"
    flat = shape_ops.reshape(x, (size,))
    if op == "apply":
        out = lax.scatter(flat, positions, _applied(values, flat, positions, scatter_mode),
                          mode=scatter_mode)
        return shape_ops.reshape(out, shape)
    if not (isinstance(values, Tracer) or backend.is_array(values)):
        values = arg(values)
        if is_python_scalar(values) and backend.library_of(x) is not backend.NUMPY:
            # spread on x's device: broadcasting a Python scalar would make a host array
            values = lax.add(lax.zeros_like(shape_ops.reshape(positions, updated), dtype),
                             values)
    if not _broadcasts_to(shape_of(values), updated):
        raise ValueError(f"x.at[...].{op}: values of shape {shape_of(values)} do not broadcast "
                         f"to the shape {updated} of x[index] (x of shape {shape})")
    values = shape_ops.reshape(shape_ops.broadcast_to(values, updated), (math.prod(updated),))
    if op == "set":
        out = lax.scatter(flat, positions, lax.convert_element_type(values, dtype),
                          mode=scatter_mode)
        return shape_ops.reshape(out, shape)
    # The others compute in the dtype x and the values promote to, and give x's dtype.
    work = np.dtype(result_type(x, values))
    out_dtype = dtype
    if op == "divide" and dtype.kind not in "fc":  # true division: floats from integers
        work = out_dtype = work if work.kind in "fc" else np.dtype(np.float64)
    flat, values = (lax.convert_element_type(v, work) for v in (flat, values))
    if op == "subtract":
        values = lax.neg(values)
    if op in _SCATTERS:
        out = _SCATTERS[op](flat, positions, values, mode=scatter_mode)
    else:  # x * (v1 * v2 ...), x / (v1 * v2 ...), x ** (v1 * v2 ...)
        factors = _products_at(flat, positions, values, scatter_mode)
        out = {"multiply": lax.mul, "divide": true_divide, "power": power}[op](flat, factors)
    return shape_ops.reshape(lax.convert_element_type(out, out_dtype), shape)


def _broadcasts_to(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def _products_at(flat, positions, values, mode: str):
    """The product of the ``values`` written to each element of ``flat`` (1 where none
    is), without dividing: sorted by position, a segmented scan of ``log2(len(values))``
    steps multiplies each value by the ones before it in its run of equal positions, and
    the last of each run (the run's product) is scattered.  So every derivative is exact,
    zeros among the values included."""
    ones = lax.add(lax.zeros_like(flat), 1)
    m = shape_of(values)[0]
    if m <= 1:
        return lax.scatter(ones, positions, values, mode=mode)
    where, order = lax.sort((positions[:, 0], lax.iota(np.int64, m, like=values)), num_keys=1)
    run = lax.gather(values, shape_ops.expand_dims(order, (1,)))
    step = 1
    while step < m:  # run[i] *= run[i - step] where both are in the same run
        before = lax.pad(lax.slice(where, [0], [m - step]), np.int64(-2), [(step, 0, 0)])
        earlier = lax.pad(lax.slice(run, [0], [m - step]), lax.convert_element_type(
            1, dtype_of(run)), [(step, 0, 0)])
        run = lax.select(lax.eq(where, before), lax.mul(run, earlier), run)
        step *= 2
    return lax.scatter(ones, shape_ops.expand_dims(where, (1,)), run, mode=mode)


def _applied(func, flat, positions, mode: str):
    """``func`` applied to the elements at ``positions`` as many times as each is named
    there (each repeat reads the same element, so all of its copies agree)."""
    read = lax.gather(flat, positions, mode="clip")
    # counted from the positions alone: concrete indices give concrete counts, whatever x is
    with core.evaluating_constants():
        ones = lax.add(lax.zeros_like(positions[:, 0]), 1)
        zeros = lax.mul(lax.iota(np.int64, shape_of(flat)[0], like=positions), 0)
        counts = lax.gather(lax.scatter_add(zeros, positions, ones, mode=mode), positions,
                            mode="clip")
    # How often to apply it is known only from the counts' values: for traced indices a
    # loop until done, for concrete ones their largest (read from a device: one
    # synchronisation).
    if isinstance(counts, Tracer):
        def body(carry):
            r, v = carry
            return lax.add(r, 1), lax.select(lax.gt(counts, r), func(v), v)
        most = lax.reduce_max(counts, (0,)) if shape_of(counts)[0] else 0
        return lax.while_loop(lambda carry: lax.lt(carry[0], most), body,
                              (np.int64(0), read))[1]
    for r in range(int(counts.max()) if counts.size else 0):
        read = lax.select(lax.gt(counts, r), func(read), read)
    return read


# -- functional put_along_axis, put, place, fill_diagonal ---------------------------------
# NumPy's versions write into their argument; these return the new array, and (as JAX's)
# require inplace=False so that code relying on the in-place write fails loudly.

def _require_not_inplace(name: str, inplace) -> None:
    if inplace:
        raise ValueError(f"{name}: functrans arrays are immutable, so {name} cannot write in "
                         f"place; pass inplace=False and use the array it returns")


def _cycled(values, n: int, name: str):
    """``values`` flattened and repeated (or cut) to ``n`` entries, as NumPy's put does."""
    values = arg(values)
    flat = shape_ops.reshape(values, (math.prod(shape_of(values)),))
    m = shape_of(flat)[0]
    if m == n:
        return flat
    if m == 0:
        if n:
            raise ValueError(f"{name}: cannot place {n} elements from empty values")
        return flat
    return take(flat, lax.rem(lax.iota(np.int64, n, like=flat), m))  # on flat's device


def put_along_axis(arr, indices, values, axis, inplace: bool = True, *, mode=None):
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the positions
    ``take_along_axis`` reads), returned as a new array; ``inplace=False`` is required.
    ``mode`` as for ``x.at[...].set``: out-of-bounds indices are dropped by default.

    >>> import functrans.numpy as fnp
    >>> x = fnp.zeros((2, 3))
    >>> fnp.put_along_axis(x, fnp.asarray([[2], [0]]), 5.0, axis=1, inplace=False)
    array([[0., 0., 5.],
           [5., 0., 0.]])
    """
    _require_not_inplace("put_along_axis", inplace)
    arr = arg(arr)
    if axis is None:
        arr_flat = shape_ops.reshape(arr, (math.prod(shape_of(arr)),))
        out = put_along_axis(arr_flat, indices, values, 0, inplace=False, mode=mode)
        return shape_ops.reshape(out, shape_of(arr))
    shape = shape_of(arr)
    if not isinstance(indices, Tracer) and not backend.is_array(indices):
        indices = np.asarray(indices)
    if len(shape_of(indices)) != len(shape):
        raise ValueError(f"put_along_axis: indices of shape {shape_of(indices)} must have as "
                         f"many axes as the array of shape {shape}")
    axis = shape_ops.normalize_axis(static_int(axis, "put_along_axis", "axis"), len(shape))
    index = tuple(indices if j == axis else backend.arange(n, like=arr).reshape(
        (1,) * j + (n,) + (1,) * (len(shape) - j - 1)) for j, n in enumerate(shape))
    return IndexUpdateRef(arr, index).set(values, mode=mode)


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """``a`` with the flat positions ``ind`` set to ``v`` (repeated to the length of
    ``ind``), returned as a new array; ``inplace=False`` is required.  Negative positions
    count from the end.  ``mode``: by default (None, or "raise") concrete positions out of
    bounds raise ``IndexError`` as in NumPy and traced ones are clamped into range as in
    JAX; "clip" clamps every position into ``0 .. size-1`` (negative ones to 0, as NumPy),
    "wrap" takes them modulo the size.

    >>> import functrans.numpy as fnp
    >>> fnp.put(fnp.zeros(5), fnp.asarray([0, 2, 6]), fnp.asarray([1.0, 2.0]), mode="wrap",
    ...         inplace=False)
    array([1., 1., 2., 0., 0.])
    """
    _require_not_inplace("put", inplace)
    a = arg(a)
    size = math.prod(shape_of(a))
    ind = arg(ind)
    ind = shape_ops.reshape(ind, (math.prod(shape_of(ind)),))
    if mode not in (None, "raise", "clip", "wrap"):
        raise ValueError(f"put: mode={mode!r} is not one of None, 'raise', 'clip' or 'wrap'")
    ind, _ = _take_indices("put", ind, size, 0, mode)
    values = _cycled(v, shape_of(ind)[0], "put")
    flat = shape_ops.reshape(a, (size,))
    out = IndexUpdateRef(flat, ind).set(values, mode="clip", wrap_negative_indices=False)
    return shape_ops.reshape(out, shape_of(a))


def place(arr, mask, vals, *, inplace: bool = True):
    """``arr`` with the elements where the concrete ``mask`` is True replaced, in order, by
    ``vals`` (repeated as needed), returned as a new array; ``inplace=False`` is required.

    >>> import functrans.numpy as fnp
    >>> fnp.place(fnp.arange(5.0), fnp.arange(5) % 2 == 1, fnp.asarray([-1.0]),
    ...           inplace=False)
    array([ 0., -1.,  2., -1.,  4.])
    """
    _require_not_inplace("place", inplace)
    if isinstance(mask, Tracer):
        raise TypeError(f"place: the mask ({mask.aval.str_short()}) must be concrete: the "
                        "number of values it takes depends on it; use "
                        "functrans.numpy.where(mask, values, arr) instead")
    arr = arg(arr)
    mask = backend.array_module(mask).asarray(mask, dtype=bool)
    count = int(mask.sum())
    return IndexUpdateRef(arr, mask).set(_cycled(vals, count, "place"))


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """``a`` with its main diagonal set to ``val`` (repeated along it), returned as a new
    array; ``inplace=False`` is required.  An array of more than two axes must have equal
    sizes; a tall matrix with ``wrap=True`` restarts the diagonal every ``columns + 1``
    rows, as NumPy does.

    >>> import functrans.numpy as fnp
    >>> fnp.fill_diagonal(fnp.zeros((2, 3)), 7.0, inplace=False)
    array([[7., 0., 0.],
           [0., 7., 0.]])
    """
    _require_not_inplace("fill_diagonal", inplace)
    a = arg(a)
    shape = shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"fill_diagonal: the array must have at least two axes, got shape "
                         f"{shape}")
    if len(shape) == 2:
        step, end = shape[1] + 1, (None if wrap else shape[1] * shape[1])
    else:
        if len(set(shape)) != 1:
            raise ValueError(f"fill_diagonal: all axes must have the same size, got shape "
                             f"{shape}")
        step, end = 1 + int(np.cumprod(shape[:-1]).sum()), None
    size = math.prod(shape)
    positions = backend.arange(size, like=a)[:end:step]
    values = _cycled(val, len(positions), "fill_diagonal")
    flat = shape_ops.reshape(a, (size,))
    return shape_ops.reshape(IndexUpdateRef(flat, positions).set(values), shape)
