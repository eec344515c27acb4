"""Shape manipulation: reshaping and transposing (``reshape``, ``moveaxis``), joining and
splitting (``concatenate``, ``stack``, ``split``), repeating and shifting (``tile``,
``repeat``, ``roll``, ``flip``, ``pad``), and shape queries (``shape``, ``ndim``).

These move or copy elements without arithmetic on them.  A new function that rearranges
elements goes here.
"""
from __future__ import annotations

import builtins
import math
from typing import Sequence

import numpy as np

from functrans import backend, lax
from functrans.array_types import user_result
from functrans.core import ConcretizationTypeError, Tracer, get_aval
from functrans.numpy._elementwise import bitwise_and, multiply, not_equal, right_shift
from functrans.numpy._util import (arg, as_tuple, axis_tuple, dtype_of, shape_of, slice_axis,
                                   static_int)
from functrans.primitives import shape as shape_ops
from functrans.primitives.sorting import take_along

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "broadcast_to",
           "broadcast_arrays", "expand_dims", "squeeze", "atleast_1d", "atleast_2d",
           "concatenate", "stack", "hstack", "vstack", "split", "tile", "repeat", "roll",
           "flip", "pad_constant", "shape", "ndim", "size",
           "append", "insert", "delete", "resize", "trim_zeros", "block", "column_stack",
           "dstack", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "rot90", "fliplr",
           "flipud", "rollaxis", "matrix_transpose", "permute_dims", "concat", "atleast_3d",
           "kron", "packbits", "unpackbits"]


def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None):
    """Reshape (row-major) to ``shape`` (``newshape`` is NumPy's older name); one entry may
    be -1.  ``copy=True`` gives a new array, ``copy=False`` refuses to copy (a ValueError
    when the data cannot be viewed in the new shape); traced values are never copied.

    >>> import functrans.numpy as fnp
    >>> fnp.reshape(fnp.arange(6), (2, -1))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    if (shape is None) == (newshape is None):
        raise TypeError("reshape: give the new shape once, as `shape` (or `newshape`)")
    shape = newshape if shape is None else shape
    a = arg(a)
    size = get_aval(a).size
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {size} into shape "
                             f"{shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    out = shape_ops.reshape(a, shape)
    if copy is None or isinstance(a, Tracer) or not backend.is_array(a):
        return out
    if copy:
        return user_result(backend.copy(out))
    if isinstance(a, np.ndarray) and a.size and not np.shares_memory(out, a):
        raise ValueError(f"reshape: an array of shape {get_aval(a).shape} and these strides "
                         f"cannot be viewed in shape {shape}; it needs a copy, but copy=False")
    return out


def ravel(a, order: str = "C"):
    """``a`` flattened to one axis, in row-major order.

    >>> import functrans.numpy as fnp
    >>> fnp.ravel(fnp.asarray([[1, 2], [3, 4]]))
    array([1, 2, 3, 4])
    """
    if order == "F":  # column-major: the reversed axes, flattened
        return reshape(transpose(arg(a)), -1)
    if order != "C":
        raise NotImplementedError(f"ravel: order must be 'C' or 'F' (as JAX), got "
                                  f"order={order!r}")
    return reshape(a, -1)


def transpose(a, axes=None):
    """Permute the axes: reverse them by default, or put input axis ``axes[i]`` at position ``i``.

    >>> import functrans.numpy as fnp
    >>> fnp.transpose(fnp.zeros((2, 3, 4))).shape
    (4, 3, 2)
    >>> fnp.transpose(fnp.zeros((2, 3, 4)), (1, 0, 2)).shape
    (3, 2, 4)
    """
    a = arg(a)
    nd = len(shape_of(a))
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(i) % nd for i in axes)
    return shape_ops.transpose_axes(a, perm)


def swapaxes(a, axis1: int, axis2: int):
    """Exchange axes ``axis1`` and ``axis2``.

    >>> import functrans.numpy as fnp
    >>> fnp.swapaxes(fnp.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = arg(a)
    nd = len(shape_of(a))
    perm = list(range(nd))
    perm[axis1 % nd], perm[axis2 % nd] = perm[axis2 % nd], perm[axis1 % nd]
    return shape_ops.transpose_axes(a, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` (an int or a sequence) to positions ``destination``; the other
    axes keep their order.

    >>> import functrans.numpy as fnp
    >>> fnp.moveaxis(fnp.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = arg(a)
    nd = len(shape_of(a))
    src = [shape_ops.normalize_axis(int(i), nd, "source axis") for i in as_tuple(source)]
    dst = [shape_ops.normalize_axis(int(i), nd, "destination axis")
           for i in as_tuple(destination)]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must be "
                         "the same number of distinct axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return shape_ops.transpose_axes(a, order)



def broadcast_to(array, shape):
    """``a`` broadcast to ``shape`` by NumPy's rules.

    >>> import functrans.numpy as fnp
    >>> fnp.broadcast_to(fnp.asarray([1, 2]), (2, 2))
    array([[1, 2],
           [1, 2]])
    """
    return shape_ops.broadcast_to(arg(array), tuple(shape))


def broadcast_arrays(*args):
    """The arguments broadcast against each other to one common shape (a tuple, as the
    array API standard returns since its 2025.12 revision; JAX returns a list).

    >>> import functrans.numpy as fnp
    >>> [x.shape for x in fnp.broadcast_arrays(fnp.zeros((2, 1)), fnp.zeros(3))]
    [(2, 3), (2, 3)]
    """
    shape = np.broadcast_shapes(*[shape_of(arg(a)) for a in args])
    return tuple(broadcast_to(a, shape) for a in args)


def expand_dims(a, axis):
    """Insert an axis of size 1 at position ``axis`` (an int or a tuple) of the result.

    >>> import functrans.numpy as fnp
    >>> fnp.expand_dims(fnp.zeros((2, 3)), (0, -1)).shape
    (1, 2, 3, 1)
    """
    return shape_ops.expand_dims(arg(a), axis_tuple(axis, 0))


def squeeze(a, axis=None):
    """Remove axes of size 1 (all of them, or those named by ``axis``).

    >>> import functrans.numpy as fnp
    >>> fnp.squeeze(fnp.zeros((1, 3, 1)), axis=0).shape
    (3, 1)
    """
    a = arg(a)
    shape = shape_of(a)
    axes = tuple(i for i, n in enumerate(shape) if n == 1) if axis is None else axis_tuple(
        axis, len(shape))
    return shape_ops.squeeze(a, axes)


def atleast_1d(*arys):
    """Arrays with at least one axis: a scalar becomes shape (1,), other arrays are
    unchanged.  One array in, one array out; several in, a tuple out.

    >>> import functrans.numpy as fnp
    >>> fnp.atleast_1d(3.0)
    array([3.])
    """
    outs = [arg(a) for a in arys]
    outs = [reshape(a, (1,)) if not shape_of(a) else a for a in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def atleast_2d(*arys):
    """Arrays with at least two axes: a scalar becomes shape (1, 1), a vector (1, n).  One
    array in, one array out; several in, a tuple out.

    >>> import functrans.numpy as fnp
    >>> fnp.atleast_2d(fnp.asarray([1, 2]))
    array([[1, 2]])
    """
    outs = []
    for a in arys:
        a = arg(a)
        nd = len(shape_of(a))
        outs.append(shape_ops.reshape(a, (1, 1)) if nd == 0 else
                    shape_ops.expand_dims(a, (0,)) if nd == 1 else a)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _cast_all(arrays: list, dtype) -> list:
    """The arrays converted to ``dtype`` (as they are when it is None)."""
    if dtype is None:
        return arrays
    dtype = np.dtype(dtype)
    return [lax.convert_element_type(a, dtype) for a in arrays]


def concatenate(arrays: Sequence, axis: int = 0, dtype=None):
    """Join a sequence of arrays along the existing axis ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.concatenate([fnp.asarray([[1, 2]]), fnp.asarray([[3, 4]])], axis=0)
    array([[1, 2],
           [3, 4]])
    """
    arrays = _cast_all([arg(a) for a in arrays], dtype)
    nd = len(shape_of(arrays[0]))
    if axis is None:
        return lax.concatenate([ravel(a) for a in arrays], 0)
    return lax.concatenate(arrays, shape_ops.normalize_axis(axis, nd))


def stack(arrays: Sequence, axis: int = 0, out=None, dtype=None):
    """Join a sequence of same-shape arrays along a new axis ``axis``.

    >>> import functrans.numpy as fnp
    >>> fnp.stack([fnp.asarray([1, 2]), fnp.asarray([3, 4])], axis=1)
    array([[1, 3],
           [2, 4]])
    """
    if out is not None:
        raise NotImplementedError("stack: out= is not supported (arrays are immutable); use "
                                  "the returned array")
    arrays = _cast_all([arg(a) for a in arrays], dtype)
    nd = len(shape_of(arrays[0])) + 1
    axis = shape_ops.normalize_axis(axis, nd)
    return lax.concatenate([shape_ops.expand_dims(a, (axis,)) for a in arrays], axis)


def hstack(tup: Sequence, dtype=None):
    """Concatenate along the second axis (the first, for 1-D arrays); scalars count as 1-D.

    >>> import functrans.numpy as fnp
    >>> fnp.hstack([fnp.asarray([1, 2]), fnp.asarray([3])])
    array([1, 2, 3])
    """
    arrays = [atleast_1d(a) for a in tup]
    if not arrays:
        raise ValueError("hstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1, dtype=dtype)


def vstack(tup: Sequence, dtype=None):
    """Concatenate along the first axis, after making every array at least 2-D.

    >>> import functrans.numpy as fnp
    >>> fnp.vstack([fnp.asarray([1, 2]), fnp.asarray([3, 4])])
    array([[1, 2],
           [3, 4]])
    """
    arrays = [atleast_2d(a) for a in tup]
    if not arrays:
        raise ValueError("vstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0, dtype=dtype)



def split(ary, indices_or_sections, axis: int = 0):
    """Split ``ary`` along ``axis`` into equal sections (an int that divides the axis) or
    at the given indices (the pieces are ``ary[:i0], ary[i0:i1], ..., ary[ik:]``, with
    Python's slicing rules).

    >>> import functrans.numpy as fnp
    >>> fnp.split(fnp.arange(6), 3)
    [array([0, 1]), array([2, 3]), array([4, 5])]
    >>> fnp.split(fnp.arange(6), [1, 4])
    [array([0]), array([1, 2, 3]), array([4, 5])]
    """
    ary = arg(ary)
    shape = shape_of(ary)
    axis = shape_ops.normalize_axis(static_int(axis, "split", "axis"), len(shape))
    n = shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"split: {sections} sections do not divide axis {axis} (of size "
                             f"{n}, array shape {shape}) equally; pass split indices instead")
        size = n // sections
        bounds = [(i * size, (i + 1) * size) for i in range(sections)]
    else:
        if isinstance(indices_or_sections, Tracer):
            raise NotImplementedError("split: indices must be static, not a traced value")
        points = [static_int(i, "split", "each index") for i in indices_or_sections]
        edges = [0, *points, n]
        bounds = []
        for lo, hi in zip(edges, edges[1:]):
            lo, hi, _ = builtins.slice(lo, hi).indices(n)
            bounds.append((lo, builtins.max(lo, hi)))
    return [slice_axis(ary, axis, lo, hi) for lo, hi in bounds]


def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis (an int or a tuple; the
    shorter of ``A.shape`` and ``reps`` is padded with leading ones).

    >>> import functrans.numpy as fnp
    >>> fnp.tile(fnp.asarray([1, 2]), (2, 2))
    array([[1, 2, 1, 2],
           [1, 2, 1, 2]])
    """
    A = arg(A)
    reps = tuple(static_int(r, "tile", "reps") for r in as_tuple(reps))
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    shape = shape_of(A)
    d = builtins.max(len(shape), len(reps))
    shape, reps = (1,) * (d - len(shape)) + shape, (1,) * (d - len(reps)) + reps
    # Each axis of size n becomes a pair (r, n) of axes, merged into one of size r * n.
    pairs = shape_ops.broadcast_in_dim(shape_ops.reshape(A, shape),
                                    [m for r, n in zip(reps, shape) for m in (r, n)],
                                    tuple(range(1, 2 * d, 2)))
    return shape_ops.reshape(pairs, [r * n for r, n in zip(reps, shape)])


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array by
    default).  ``repeats`` is an int, or one count per element along the axis (an array,
    which may be traced).  The output's length must be known: with traced counts (under
    ``jit``) pass ``total_repeat_length``, as in JAX; the output is then cut to that length,
    or filled up with the last element along the axis.

    >>> import functrans.numpy as fnp
    >>> fnp.repeat(fnp.asarray([1, 2]), 2)
    array([1, 1, 2, 2])
    >>> fnp.repeat(fnp.asarray([1.0, 2.0, 3.0]), [1, 0, 2])
    array([1., 3., 3.])
    >>> fnp.repeat(fnp.asarray([1.0, 2.0, 3.0]), [1, 0, 2], total_repeat_length=5)
    array([1., 3., 3., 3., 3.])
    """
    a = arg(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = shape_of(a)
    axis = shape_ops.normalize_axis(static_int(axis, "repeat", "axis"), len(shape))
    if total_repeat_length is not None:
        total_repeat_length = static_int(total_repeat_length, "repeat", "total_repeat_length")
        if total_repeat_length < 0:
            raise ValueError(f"repeat: total_repeat_length must be non-negative, got "
                             f"{total_repeat_length}")
    if isinstance(repeats, Tracer) or backend.array_module(repeats).ndim(repeats) > 0:
        return _repeat_counts(a, repeats, axis, total_repeat_length)
    repeats = static_int(repeats, "repeat", "repeats")
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    if total_repeat_length is not None and total_repeat_length != repeats * shape[axis]:
        return _repeat_counts(a, repeats, axis, total_repeat_length)
    # Each element gets a new axis of size `repeats` right after it, then the two merge.
    widened = shape_ops.broadcast_in_dim(
        a, shape[:axis + 1] + (repeats,) + shape[axis + 1:],
        tuple(i if i <= axis else i + 1 for i in range(len(shape))))
    return shape_ops.reshape(widened, shape[:axis] + (shape[axis] * repeats,) + shape[axis + 1:])


def _repeat_counts(a, repeats, axis: int, total):
    """``repeat`` with one count per element along ``axis``: output position ``j`` reads
    the element whose run of copies covers ``j`` (one gather, so the derivative is the
    matching scatter-add); past the last run it reads the last element."""
    shape = shape_of(a)
    n = shape[axis]
    counts = arg(repeats)
    if np.dtype(dtype_of(counts)).kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got dtype {dtype_of(counts)}")
    if len(shape_of(counts)) > 1 or shape_of(counts) not in ((), (1,), (n,)):
        raise ValueError(f"repeat: repeats of shape {shape_of(counts)} do not match the "
                         f"{n} elements along axis {axis} of an array of shape {shape}")
    if not isinstance(counts, Tracer) and (total is None or not backend.is_device_array(
            counts)):
        # concrete counts decide the output length: read them (a device array is synced)
        host = np.broadcast_to(np.asarray(backend.to_host(counts), dtype=np.int64), (n,))
        if (host < 0).any():
            raise ValueError(f"repeat: repeats must be non-negative, got {host.tolist()}")
        if total is None:
            total = int(host.sum())
        if not backend.is_device_array(counts):
            source = np.repeat(np.arange(n), host)[:total]
            source = np.concatenate([source, np.full(total - source.size, max(n - 1, 0))])
            return _take_run(a, backend.asarray(source, like=a) if backend.is_device_array(a)
                             else source, axis, total)
    elif total is None:
        raise ConcretizationTypeError(
            "repeat: repeats is traced, so the length of the output is not known; pass "
            "total_repeat_length= (a static int), as jax.numpy.repeat requires under jit")
    counts = lax.convert_element_type(shape_ops.broadcast_to(counts, (n,)), np.int64)
    # A 1 where each run after the first starts; their running sum is the source index.
    starts = lax.cumsum(counts, 0)
    starts = shape_ops.reshape(lax.slice(starts, (0,), (builtins.max(n - 1, 0),)),
                               (builtins.max(n - 1, 0), 1))
    zeros = lax.mul(lax.iota(np.int64, total, like=counts), 0)
    marks = lax.scatter_add(zeros, starts, lax.add(lax.mul(starts[:, 0], 0), 1), mode="drop")
    return _take_run(a, lax.cumsum(marks, 0), axis, total)


def _take_run(a, source, axis: int, total: int):
    shape = shape_of(a)
    out_shape = shape[:axis] + (total,) + shape[axis + 1:]
    if total == 0:
        return shape_ops.reshape(slice_axis(a, axis, 0, 0), out_shape)
    if shape[axis] == 0:
        raise ValueError(f"repeat: total_repeat_length={total} copies of an empty axis "
                         f"(array of shape {shape})")
    index = shape_ops.broadcast_in_dim(source, out_shape, (axis,))
    return take_along(a, index, axis)


def roll(a, shift, axis=None):
    """Shift elements ``shift`` places along ``axis`` (of the flattened array by default),
    wrapping around; ``shift`` and ``axis`` may be tuples of equal length (or one of them
    an int, used for every axis).

    >>> import functrans.numpy as fnp
    >>> fnp.roll(fnp.asarray([1, 2, 3, 4]), 1)
    array([4, 1, 2, 3])
    """
    a = arg(a)
    if isinstance(shift, Tracer):
        raise NotImplementedError("roll: shift must be static, not a traced value")
    if axis is None:
        return shape_ops.reshape(roll(ravel(a), shift, 0), shape_of(a))
    shifts, axes = as_tuple(shift), as_tuple(axis)
    if len(shifts) == 1:
        shifts *= len(axes)
    if len(axes) == 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    nd = len(shape_of(a))
    for s, ax in zip(shifts, axes):
        ax = shape_ops.normalize_axis(static_int(ax, "roll", "axis"), nd)
        n = shape_of(a)[ax]
        s = static_int(s, "roll", "shift") % n if n else 0
        if s:
            a = lax.concatenate([slice_axis(a, ax, n - s, n), slice_axis(a, ax, 0, n - s)],
                                   ax)
    return a



def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes by default).

    >>> import functrans.numpy as fnp
    >>> fnp.flip(fnp.asarray([[1, 2], [3, 4]]), axis=1)
    array([[2, 1],
           [4, 3]])
    """
    m = arg(m)
    return lax.rev(m, axis_tuple(axis, len(shape_of(m))))


def pad_constant(array, pad_width, constant_values=0):
    """``numpy.pad(array, pad_width, mode="constant")`` with one ``constant_values`` scalar
    (it may be traced): one ``lax.pad``.  ``functrans.numpy.pad`` has every mode.

    >>> import numpy as np
    >>> from functrans.numpy._shape import pad_constant
    >>> pad_constant(np.asarray([1, 2]), (1, 2))
    array([0, 1, 2, 0, 0])
    """
    array = arg(array)
    nd = len(shape_of(array))
    # The widths decide the output shape, so they are read on the host (device ones too).
    widths = np.broadcast_to(np.asarray(backend.to_host(pad_width), dtype=int), (nd, 2))
    value = lax.convert_element_type(arg(constant_values), dtype_of(array))
    return lax.pad(array, value, [(int(lo), int(hi), 0) for lo, hi in widths])


def shape(a):
    """The shape of ``a`` (a tuple of ints, also for tracers).

    >>> import functrans.numpy as fnp
    >>> fnp.shape([[1, 2, 3]])
    (1, 3)
    """
    return shape_of(arg(a))


def ndim(a):
    """The number of axes of ``a`` (an int, also for tracers).

    >>> import functrans.numpy as fnp
    >>> fnp.ndim(fnp.zeros((2, 3)))
    2
    """
    return len(shape_of(arg(a)))


def size(a, axis=None):
    """The number of elements of ``a`` (an int, also for tracers).

    >>> import functrans.numpy as fnp
    >>> fnp.size(fnp.zeros((2, 3)))
    6
    """
    if axis is None:
        return get_aval(arg(a)).size
    shape = shape_of(arg(a))
    return math.prod(shape[shape_ops.normalize_axis(ax, len(shape))]
                     for ax in axis_tuple(axis, len(shape)))


# -- the rest of NumPy's shape functions, composed from the ones above -------------------


def _same_dtype(*arrays):
    """The arrays converted to their common dtype (NumPy's promotion), for joining."""
    arrays = [arg(a) for a in arrays]
    common = np.result_type(*[dtype_of(a) for a in arrays])
    return [a if dtype_of(a) == common else lax.convert_element_type(a, common)
            for a in arrays]


def _static_positions(name: str, obj):
    if isinstance(obj, Tracer):
        raise NotImplementedError(f"{name}: the positions `obj` must be static (they decide "
                                  "the output shape), not a traced value")
    return obj if isinstance(obj, builtins.slice) else np.asarray(backend.to_host(obj))


def append(arr, values, axis=None):
    """``arr`` with ``values`` joined at the end along ``axis`` (both flattened when
    ``axis`` is None).

    >>> import functrans.numpy as fnp
    >>> fnp.append(fnp.asarray([1.0, 2.0]), [[3.0]])
    array([1., 2., 3.])
    """
    arr, values = _same_dtype(arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the static position(s) ``obj`` (an int, a
    slice or a sequence of ints) along ``axis`` (of the flattened array when None).  An int
    inserts all of ``values`` there as a block; a sequence inserts one slice per position.

    >>> import functrans.numpy as fnp
    >>> fnp.insert(fnp.asarray([1.0, 2.0, 3.0]), [0, 2], [-1.0, -2.0])
    array([-1.,  1.,  2., -2.,  3.])
    """
    arr, values = _same_dtype(arr, values)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = shape_of(arr)
    axis = shape_ops.normalize_axis(static_int(axis, "insert", "axis"), len(shape))
    n = shape[axis]
    positions = _static_positions("insert", obj)
    if isinstance(positions, builtins.slice):
        positions = np.arange(*positions.indices(n))
    if positions.ndim == 0:  # one position: values form a block, their first axis at axis
        nd = builtins.max(len(shape), len(shape_of(values)))
        values = shape_ops.reshape(values, (1,) * (nd - len(shape_of(values)))
                                   + shape_of(values))
        values = moveaxis(values, 0, axis)
        count = shape_of(values)[axis]
    else:
        count = positions.size
    target = shape[:axis] + (count,) + shape[axis + 1:]
    values = broadcast_to(values, target)
    order = np.insert(np.arange(n), positions, np.arange(n, n + count))
    return _pick(concatenate([arr, values], axis), order, axis)


def delete(arr, obj, axis=None, *, assume_unique_indices: bool = False):
    """``arr`` without the entries at the static position(s) ``obj`` (an int, a slice, a
    sequence of ints or a boolean mask) along ``axis`` (of the flattened array when None).
    ``assume_unique_indices`` (JAX's promise for traced positions) is accepted; positions
    here are static, and repeats are removed once.

    >>> import functrans.numpy as fnp
    >>> fnp.delete(fnp.asarray([[1, 2, 3], [4, 5, 6]]), [0, 2], axis=1)
    array([[2],
           [5]])
    """
    arr = arg(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    shape = shape_of(arr)
    axis = shape_ops.normalize_axis(static_int(axis, "delete", "axis"), len(shape))
    keep = np.delete(np.arange(shape[axis]), _static_positions("delete", obj))
    return _pick(arr, keep, axis)


def _pick(x, indices, axis: int):
    """``take(x, indices, axis)`` for static indices, as slices of the runs of consecutive
    indices joined: no index array to copy to the device, and cheap derivatives."""
    indices = [int(i) for i in indices]
    if not indices:
        return slice_axis(x, axis, 0, 0)
    runs, start = [], 0
    for k in range(1, len(indices) + 1):
        if k == len(indices) or indices[k] != indices[k - 1] + 1:
            runs.append(slice_axis(x, axis, indices[start], indices[k - 1] + 1))
            start = k
    return runs[0] if len(runs) == 1 else lax.concatenate(runs, axis)


def resize(a, new_shape):
    """An array of ``new_shape`` filled with the elements of ``a`` in order, repeated as
    often as needed (NumPy's function, not the method, which pads with zeros).

    >>> import functrans.numpy as fnp
    >>> fnp.resize(fnp.asarray([1, 2, 3]), (2, 4))
    array([[1, 2, 3, 1],
           [2, 3, 1, 2]])
    """
    a = ravel(arg(a))
    new_shape = tuple(static_int(n, "resize", "new_shape") for n in as_tuple(new_shape))
    if builtins.any(n < 0 for n in new_shape):
        raise ValueError(f"resize: new_shape must be non-negative, got {new_shape}")
    total, n = math.prod(new_shape), shape_of(a)[0]
    if n == 0 or total == 0:
        return backend.zeros(new_shape, dtype_of(a), like=None if isinstance(a, Tracer) else a)
    repeated = tile(a, -(-total // n))
    return reshape(slice_axis(repeated, 0, 0, total), new_shape)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """``filt`` without its leading ('f') and/or trailing ('b') zeros along the given axes
    (all of them by default: the bounding box of the nonzero entries).  The output's shape
    depends on the values, so ``filt`` must be concrete, not traced.

    >>> import functrans.numpy as fnp
    >>> fnp.trim_zeros(fnp.asarray([0, 0, 1, 2, 0]))
    array([1, 2])
    """
    filt = arg(filt)
    if isinstance(filt, Tracer):
        raise ConcretizationTypeError(
            "trim_zeros: the output shape depends on the values of `filt`, which is traced "
            "here; trim outside the transform, or keep the zeros (they do not change sums)")
    trim = trim.lower()
    if not set(trim) <= {"f", "b"}:
        raise ValueError(f"trim_zeros: trim must be made of 'f' and 'b', got {trim!r}")
    values = np.asarray(backend.to_host(filt))
    nonzero = np.nonzero(values)
    for ax in axis_tuple(axis, values.ndim):
        ax = shape_ops.normalize_axis(ax, values.ndim)
        n = values.shape[ax]
        if not nonzero[ax].size:
            lo = hi = n if "f" in trim else 0
        else:
            lo = int(nonzero[ax].min()) if "f" in trim else 0
            hi = int(nonzero[ax].max()) + 1 if "b" in trim else n
        filt = slice_axis(filt, ax, lo, builtins.max(lo, hi))
    return filt


def _nesting_depth(arrays, name: str) -> int:
    if isinstance(arrays, tuple):
        raise TypeError(f"{name}: nested sequences must be lists, not tuples")
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError(f"{name}: lists cannot be empty")
    depths = {_nesting_depth(a, name) for a in arrays}
    if len(depths) > 1:
        raise ValueError(f"{name}: lists are nested to different depths ({sorted(depths)})")
    return 1 + depths.pop()


def block(arrays):
    """One array assembled from nested lists of blocks: the innermost lists join along the
    last axis, the next along the second-to-last, and so on (blocks get leading axes of size
    one as needed).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.block([[np.eye(2), np.zeros((2, 1))], [np.ones((1, 2)), np.full((1, 1), 5.0)]])
    array([[1., 0., 0.],
           [0., 1., 0.],
           [1., 1., 5.]])
    """
    depth = _nesting_depth(arrays, "block")
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for item in x:
                collect(item)
        else:
            leaves.append(arg(x))
    collect(arrays)
    nd = builtins.max(depth, *[len(shape_of(x)) for x in leaves])
    common = np.result_type(*[dtype_of(x) for x in leaves])

    def assemble(x, level):
        if not isinstance(x, list):
            x = arg(x)
            x = x if dtype_of(x) == common else lax.convert_element_type(x, common)
            return shape_ops.reshape(x, (1,) * (nd - len(shape_of(x))) + shape_of(x))
        return concatenate([assemble(item, level + 1) for item in x], axis=nd - depth + level)
    return assemble(arrays, 0)


def column_stack(tup):
    """1-D arrays as columns (and 2-D arrays as they are) side by side.

    >>> import functrans.numpy as fnp
    >>> fnp.column_stack([fnp.asarray([1, 2]), fnp.asarray([3, 4])])
    array([[1, 3],
           [2, 4]])
    """
    arrays = [arg(a) for a in tup]
    arrays = [shape_ops.reshape(a, (get_aval(a).size, 1)) if len(shape_of(a)) < 2 else a
              for a in arrays]
    return concatenate(_same_dtype(*arrays), axis=1)


def dstack(tup, dtype=None):
    """Arrays joined along the third axis, after making each at least 3-D.

    >>> import functrans.numpy as fnp
    >>> fnp.dstack([fnp.asarray([1, 2]), fnp.asarray([3, 4])]).shape
    (1, 2, 2)
    """
    arrays = [atleast_3d(a) for a in tup]
    out = concatenate(_same_dtype(*arrays), axis=2)
    return out if dtype is None else lax.convert_element_type(out, dtype)


def array_split(ary, indices_or_sections, axis: int = 0):
    """``split``, except that an int number of sections need not divide the axis: the first
    ``size % sections`` pieces are one longer.

    >>> import functrans.numpy as fnp
    >>> [p.tolist() for p in fnp.array_split(fnp.arange(5), 3)]
    [[0, 1], [2, 3], [4]]
    """
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(ary, indices_or_sections, axis)
    ary = arg(ary)
    sections = int(indices_or_sections)
    if sections <= 0:
        raise ValueError(f"array_split: the number of sections must be positive, got "
                         f"{sections}")
    n = shape_of(ary)[shape_ops.normalize_axis(axis, len(shape_of(ary)))]
    size, extra = divmod(n, sections)
    points = np.cumsum([size + 1] * extra + [size] * (sections - extra))[:-1]
    return split(ary, [int(p) for p in points], axis)


def hsplit(ary, indices_or_sections):
    """``split`` along the second axis (the first for 1-D arrays).

    >>> import functrans.numpy as fnp
    >>> [p.shape for p in fnp.hsplit(fnp.ones((2, 4)), 2)]
    [(2, 2), (2, 2)]
    """
    ary = arg(ary)
    if not shape_of(ary):
        raise ValueError("hsplit: needs an array of at least one axis, got a scalar")
    return split(ary, indices_or_sections, 1 if len(shape_of(ary)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along the first axis of an array of at least two axes.

    >>> import functrans.numpy as fnp
    >>> [p.shape for p in fnp.vsplit(fnp.ones((4, 2)), [1])]
    [(1, 2), (3, 2)]
    """
    ary = arg(ary)
    if len(shape_of(ary)) < 2:
        raise ValueError(f"vsplit: needs an array of at least two axes, got shape "
                         f"{shape_of(ary)}")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``split`` along the third axis of an array of at least three axes.

    >>> import functrans.numpy as fnp
    >>> [p.shape for p in fnp.dsplit(fnp.ones((1, 2, 4)), 2)]
    [(1, 2, 2), (1, 2, 2)]
    """
    ary = arg(ary)
    if len(shape_of(ary)) < 3:
        raise ValueError(f"dsplit: needs an array of at least three axes, got shape "
                         f"{shape_of(ary)}")
    return split(ary, indices_or_sections, 2)


def unstack(x, /, *, axis: int = 0):
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``).

    >>> import functrans.numpy as fnp
    >>> fnp.unstack(fnp.asarray([[1, 2], [3, 4]]), axis=1)
    (array([1, 3]), array([2, 4]))
    """
    x = arg(x)
    shape = shape_of(x)
    if not shape:
        raise ValueError("unstack: needs an array of at least one axis, got a scalar")
    axis = shape_ops.normalize_axis(static_int(axis, "unstack", "axis"), len(shape))
    return tuple(shape_ops.squeeze(slice_axis(x, axis, i, i + 1), (axis,))
                 for i in range(shape[axis]))


def rot90(m, k: int = 1, axes=(0, 1)):
    """``m`` rotated by ``k`` quarter turns in the plane of ``axes``, from the first axis
    towards the second.

    >>> import functrans.numpy as fnp
    >>> fnp.rot90(fnp.asarray([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    m = arg(m)
    nd = len(shape_of(m))
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be two axes, got {axes}")
    a0, a1 = (shape_ops.normalize_axis(static_int(a, "rot90", "axes"), nd) for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: the two axes must differ, got {axes}")
    k = static_int(k, "rot90", "k") % 4
    if k == 0:
        return m
    if k == 2:
        return lax.rev(m, (a0, a1))
    perm = list(range(nd))
    perm[a0], perm[a1] = a1, a0
    if k == 1:
        return shape_ops.transpose_axes(lax.rev(m, (a1,)), perm)
    return lax.rev(shape_ops.transpose_axes(m, perm), (a1,))


def fliplr(m):
    """``m`` with its second axis reversed (columns left to right).

    >>> import functrans.numpy as fnp
    >>> fnp.fliplr(fnp.asarray([[1, 2, 3]]))
    array([[3, 2, 1]])
    """
    m = arg(m)
    if len(shape_of(m)) < 2:
        raise ValueError(f"fliplr: needs an array of at least two axes, got shape "
                         f"{shape_of(m)}")
    return lax.rev(m, (1,))


def flipud(m):
    """``m`` with its first axis reversed (rows upside down).

    >>> import functrans.numpy as fnp
    >>> fnp.flipud(fnp.asarray([1, 2, 3]))
    array([3, 2, 1])
    """
    m = arg(m)
    if not shape_of(m):
        raise ValueError("flipud: needs an array of at least one axis, got a scalar")
    return lax.rev(m, (0,))


def rollaxis(a, axis: int, start: int = 0):
    """Axis ``axis`` moved to just before position ``start`` (NumPy's older form of
    ``moveaxis``).

    >>> import functrans.numpy as fnp
    >>> fnp.rollaxis(fnp.ones((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = arg(a)
    nd = len(shape_of(a))
    axis = shape_ops.normalize_axis(static_int(axis, "rollaxis", "axis"), nd)
    start = static_int(start, "rollaxis", "start")
    if not -nd <= start <= nd:
        raise ValueError(f"rollaxis: start must be in [-{nd}, {nd}] for an array of {nd} "
                         f"axes, got {start}")
    start = start + nd if start < 0 else start
    destination = start - 1 if axis < start else start
    return moveaxis(a, axis, destination)


def matrix_transpose(x, /):
    """Each matrix of the stack ``x`` transposed (the last two axes swapped).

    >>> import functrans.numpy as fnp
    >>> fnp.matrix_transpose(fnp.ones((5, 2, 3))).shape
    (5, 3, 2)
    """
    x = arg(x)
    nd = len(shape_of(x))
    if nd < 2:
        raise ValueError(f"matrix_transpose: needs an array of at least two axes, got shape "
                         f"{shape_of(x)}")
    return swapaxes(x, -1, -2)


def permute_dims(a, /, axes):
    """The array API's name for ``transpose`` with explicit ``axes``.

    >>> import functrans.numpy as fnp
    >>> fnp.permute_dims(fnp.ones((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return transpose(a, axes)


def concat(arrays, /, *, axis=0):
    """The array API's name for ``concatenate``.

    >>> import functrans.numpy as fnp
    >>> fnp.concat([fnp.asarray([1, 2]), fnp.asarray([3])])
    array([1, 2, 3])
    """
    return concatenate(arrays, axis)


def atleast_3d(*arys):
    """Arrays with at least three axes: a scalar becomes shape (1, 1, 1), a vector (1, n, 1)
    and a matrix (m, n, 1).  One array in, one array out; several in, a tuple out.

    >>> import functrans.numpy as fnp
    >>> fnp.atleast_3d(fnp.ones(4)).shape
    (1, 4, 1)
    """
    outs = []
    for a in arys:
        a = arg(a)
        shape = shape_of(a)
        new = {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}.get(len(shape), shape)
        outs.append(a if new == shape else shape_ops.reshape(a, new))
    return outs[0] if len(outs) == 1 else tuple(outs)


def kron(a, b):
    """The Kronecker product: the blocks ``a[i, j, ...] * b``, laid out like ``a``.

    >>> import functrans.numpy as fnp
    >>> fnp.kron(fnp.asarray([1, 10]), fnp.asarray([1, 2, 3]))
    array([ 1,  2,  3, 10, 20, 30])
    """
    a, b = arg(a), arg(b)
    nd = builtins.max(len(shape_of(a)), len(shape_of(b)))
    sa = (1,) * (nd - len(shape_of(a))) + shape_of(a)
    sb = (1,) * (nd - len(shape_of(b))) + shape_of(b)
    # Axis i of a and axis i of b become the pair (i of a, i of b), merged after the product.
    product = multiply(shape_ops.reshape(a, [m for n in sa for m in (n, 1)]),
                       shape_ops.reshape(b, [m for n in sb for m in (1, n)]))
    return shape_ops.reshape(product, [m * n for m, n in zip(sa, sb)])


def _bit_shifts(bitorder: str, like):
    """The shift of each bit of a byte, in ``bitorder``, made on the device of ``like``."""
    positions = lax.iota(np.uint8, 8, like=like)
    return lax.sub(np.uint8(7), positions) if bitorder == "big" else positions


def _bit_axis(name: str, a, axis, bitorder: str):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        return ravel(a), 0
    return a, shape_ops.normalize_axis(static_int(axis, name, "axis"), len(shape_of(a)),
                                       "axis")


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """The elements of an integer or boolean array, as bits (nonzero or not), packed eight
    to a ``uint8`` along ``axis`` (the flattened array if None), as ``numpy.packbits``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
    array([176, 128], dtype=uint8)
    """
    a = arg(a)
    if dtype_of(a).kind not in "biu":
        raise TypeError(f"packbits: expected an integer or boolean array, got "
                        f"{dtype_of(a).name}")
    a, axis = _bit_axis("packbits", a, axis, bitorder)
    bits = moveaxis(lax.convert_element_type(not_equal(a, 0), np.uint8), axis, -1)
    n = shape_of(bits)[-1]
    bits = pad_constant(bits, [(0, 0)] * (len(shape_of(bits)) - 1) + [(0, -n % 8)])
    groups = reshape(bits, shape_of(bits)[:-1] + ((n + 7) // 8, 8))
    weights = lax.shift_left(np.uint8(1), _bit_shifts(bitorder, groups))
    packed = shape_ops.reduce_sum(multiply(groups, weights), (len(shape_of(groups)) - 1,))
    return moveaxis(lax.convert_element_type(packed, np.uint8), -1, axis)


def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """The bits of a ``uint8`` array, unpacked along ``axis`` (the flattened array if None)
    into an array of zeros and ones (``count`` keeps that many bits), as
    ``numpy.unpackbits``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.unpackbits(np.array([176], dtype=np.uint8))
    array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """
    a = arg(a)
    if dtype_of(a) != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {dtype_of(a).name}")
    a, axis = _bit_axis("unpackbits", a, axis, bitorder)
    a = moveaxis(a, axis, -1)
    shifts = _bit_shifts(bitorder, a)
    bits = bitwise_and(right_shift(expand_dims(a, -1), shifts), np.uint8(1))
    bits = reshape(bits, shape_of(a)[:-1] + (shape_of(a)[-1] * 8,))
    if count is not None:
        count = static_int(count, "unpackbits", "count")
        total = shape_of(bits)[-1]
        keep = count if count >= 0 else builtins.max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = pad_constant(bits, [(0, 0)] * (len(shape_of(bits)) - 1) + [(0, keep - total)])
    return moveaxis(bits, -1, axis)
