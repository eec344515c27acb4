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
from functrans.core import Tracer, get_aval
from functrans.numpy._util import (arg, as_tuple, axis_tuple, dtype_of, shape_of, slice_axis,
                                   static_int)
from functrans.primitives import shape as shape_ops

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "broadcast_to",
           "broadcast_arrays", "expand_dims", "squeeze", "atleast_1d", "atleast_2d",
           "concatenate", "stack", "hstack", "vstack", "split", "tile", "repeat", "roll",
           "flip", "pad", "shape", "ndim", "size"]


def reshape(a, shape=None, order: str = "C", *, newshape=None):
    """Reshape (row-major) to ``shape`` (``newshape`` is NumPy's older name); one entry may
    be -1."""
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
    return shape_ops.reshape(a, shape)


def ravel(a):
    return reshape(a, -1)


def transpose(a, axes=None):
    a = arg(a)
    nd = len(shape_of(a))
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(i) % nd for i in axes)
    return shape_ops.transpose_axes(a, perm)


def swapaxes(a, axis1: int, axis2: int):
    a = arg(a)
    nd = len(shape_of(a))
    perm = list(range(nd))
    perm[axis1 % nd], perm[axis2 % nd] = perm[axis2 % nd], perm[axis1 % nd]
    return shape_ops.transpose_axes(a, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` (an int or a sequence) to positions ``destination``; the other
    axes keep their order."""
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



def broadcast_to(a, shape):
    return shape_ops.broadcast_to(arg(a), tuple(shape))


def broadcast_arrays(*args):
    shape = np.broadcast_shapes(*[shape_of(arg(a)) for a in args])
    return [broadcast_to(a, shape) for a in args]


def expand_dims(a, axis):
    return shape_ops.expand_dims(arg(a), axis_tuple(axis, 0))


def squeeze(a, axis=None):
    a = arg(a)
    shape = shape_of(a)
    axes = tuple(i for i, n in enumerate(shape) if n == 1) if axis is None else axis_tuple(
        axis, len(shape))
    return shape_ops.squeeze(a, axes)


def atleast_1d(a):
    a = arg(a)
    return reshape(a, (1,)) if not shape_of(a) else a


def atleast_2d(*arys):
    """Arrays with at least two axes: a scalar becomes shape (1, 1), a vector (1, n).  One
    array in, one array out; several in, a tuple out."""
    outs = []
    for a in arys:
        a = arg(a)
        nd = len(shape_of(a))
        outs.append(shape_ops.reshape(a, (1, 1)) if nd == 0 else
                    shape_ops.expand_dims(a, (0,)) if nd == 1 else a)
    return outs[0] if len(outs) == 1 else tuple(outs)


def concatenate(arrays: Sequence, axis: int = 0):
    arrays = [arg(a) for a in arrays]
    nd = len(shape_of(arrays[0]))
    if axis is None:
        return lax.concatenate([ravel(a) for a in arrays], 0)
    return lax.concatenate(arrays, shape_ops.normalize_axis(axis, nd))


def stack(arrays: Sequence, axis: int = 0):
    arrays = [arg(a) for a in arrays]
    nd = len(shape_of(arrays[0])) + 1
    axis = shape_ops.normalize_axis(axis, nd)
    return lax.concatenate([shape_ops.expand_dims(a, (axis,)) for a in arrays], axis)


def hstack(tup: Sequence):
    """Concatenate along the second axis (the first, for 1-D arrays); scalars count as 1-D."""
    arrays = [atleast_1d(a) for a in tup]
    if not arrays:
        raise ValueError("hstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0 if len(shape_of(arrays[0])) == 1 else 1)


def vstack(tup: Sequence):
    """Concatenate along the first axis, after making every array at least 2-D."""
    arrays = [atleast_2d(a) for a in tup]
    if not arrays:
        raise ValueError("vstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0)



def split(ary, indices_or_sections, axis: int = 0):
    """Split ``ary`` along ``axis`` into equal sections (an int that divides the axis) or
    at the given indices (the pieces are ``ary[:i0], ary[i0:i1], ..., ary[ik:]``, with
    Python's slicing rules)."""
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
    shorter of ``A.shape`` and ``reps`` is padded with leading ones)."""
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


def repeat(a, repeats, axis=None):
    """Repeat each element ``repeats`` times (a static int) along ``axis`` (of the
    flattened array by default)."""
    if not isinstance(repeats, Tracer) and backend.array_module(repeats).ndim(repeats) > 0:
        raise NotImplementedError("repeat: only one static integer count is supported, not "
                                  "one count per element")
    repeats = static_int(repeats, "repeat", "repeats")
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    a = arg(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = shape_of(a)
    axis = shape_ops.normalize_axis(static_int(axis, "repeat", "axis"), len(shape))
    # Each element gets a new axis of size `repeats` right after it, then the two merge.
    widened = shape_ops.broadcast_in_dim(
        a, shape[:axis + 1] + (repeats,) + shape[axis + 1:],
        tuple(i if i <= axis else i + 1 for i in range(len(shape))))
    return shape_ops.reshape(widened, shape[:axis] + (shape[axis] * repeats,) + shape[axis + 1:])


def roll(a, shift, axis=None):
    """Shift elements ``shift`` places along ``axis`` (of the flattened array by default),
    wrapping around; ``shift`` and ``axis`` may be tuples of equal length (or one of them
    an int, used for every axis)."""
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



def flip(a, axis=None):
    a = arg(a)
    return lax.rev(a, axis_tuple(axis, len(shape_of(a))))


def pad(array, pad_width, mode: str = "constant", constant_values=0):
    """Constant padding, as ``numpy.pad(mode='constant')``; ``constant_values`` is one
    scalar (it may be traced)."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode={mode!r} is not supported; only 'constant'")
    array = arg(array)
    nd = len(shape_of(array))
    # The widths decide the output shape, so they are read on the host (device ones too).
    widths = np.broadcast_to(np.asarray(backend.to_host(pad_width), dtype=int), (nd, 2))
    value = lax.convert_element_type(arg(constant_values), dtype_of(array))
    return lax.pad(array, value, [(int(lo), int(hi), 0) for lo, hi in widths])


def shape(a):
    return shape_of(arg(a))


def ndim(a):
    return len(shape_of(arg(a)))


def size(a):
    return get_aval(arg(a)).size
