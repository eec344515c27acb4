"""Argument helpers shared by the families of ``functrans.numpy``, and the naming of the
functions that factories make.

Public inside the package (no leading underscore) so that every family imports them by
their own names; nothing here is part of ``functrans.numpy``'s API.  A helper used by one
family only stays in that family's module.
"""
from __future__ import annotations

import operator

import numpy as np

from functrans import backend, core, lax
from functrans.array_types import Array
from functrans.core import Tracer, get_aval
from functrans.naming import alias, public
from functrans.primitives import shape as shape_ops

__all__ = ["arg", "shape_of", "dtype_of", "promote_inexact", "as_bool", "axis_tuple", "as_tuple",
           "keep_dims", "static_int", "slice_axis", "sequence_to_array", "public", "alias"]

def arg(x):
    """Accept arrays, tracers and Python scalars as they are; convert lists and tuples."""
    if type(x) is np.ndarray or isinstance(x, Tracer) or core.is_python_scalar(x):
        return x
    if type(x) is Array:  # a result of ours: as a plain ndarray it takes the fast paths
        return x.view(type=np.ndarray)
    if isinstance(x, (list, tuple)):
        return sequence_to_array(x)
    get_aval(x)  # raises a clear TypeError for unsupported values
    return x


def sequence_to_array(seq, dtype=None):
    """A (nested) list or tuple as one array.  Plain values make a NumPy array; if tracers
    or device arrays are among them, the items are stacked, so that the result is traced
    or stays on the device."""
    if not any(isinstance(x, Tracer) or backend.is_device_array(x) for x in _flat(seq)):
        return np.asarray(seq, dtype=dtype)
    like = next(x for x in _flat(seq) if isinstance(x, Tracer) or backend.is_device_array(x))
    items = []
    for x in seq:
        if isinstance(x, (list, tuple)):
            x = sequence_to_array(x, dtype)
        elif isinstance(x, Tracer):
            x = x if dtype is None else lax.convert_element_type(x, dtype)
        elif backend.is_device_array(x):
            x = x if dtype is None else backend.asarray(x, dtype, like=x)
        elif np.ndim(x) == 0:  # a scalar: filled on the device, not copied there
            x = backend.full((), x, dtype=dtype, like=like)
        else:
            x = np.asarray(x, dtype=dtype)
        items.append(shape_ops.expand_dims(x, (0,)))
    return lax.concatenate(items, 0)


def _flat(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def shape_of(x) -> tuple:
    return get_aval(x).shape


def dtype_of(x) -> np.dtype:
    return get_aval(x).dtype


def promote_inexact(x):
    """Integers and booleans become float64 (weakly typed if they were), like NumPy."""
    if type(x) is Array:
        x = x.view(type=np.ndarray)
    if type(x) is np.ndarray and x.dtype.kind in "fc":  # the common case, kept cheap
        return x
    if isinstance(x, Tracer):  # the common case under transforms, without arg's checks
        aval = x.aval
        if aval.dtype.kind in "fc":
            return x
        return lax.convert_element_type(x, np.float64, aval.weak_type)
    x = arg(x)
    aval = get_aval(x)
    if core.is_inexact(aval.dtype):
        return x
    return lax.convert_element_type(x, np.float64, aval.weak_type)


def as_bool(x):
    """``x != 0`` unless ``x`` is boolean already."""
    x = arg(x)
    return x if dtype_of(x) == np.bool_ else lax.ne(x, 0)


def axis_tuple(axis, ndim: int) -> tuple:
    """NumPy's ``axis`` argument (None: all axes, an int, or a sequence) as a tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def as_tuple(axes) -> tuple:
    return (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)


def keep_dims(out, x_shape: tuple, axes: tuple, keepdims: bool):
    """The result of a reduction over ``axes`` of an array of shape ``x_shape``, with the
    reduced axes kept as size 1 if ``keepdims``."""
    if not keepdims:
        return out
    axes = {a % len(x_shape) for a in axes} if x_shape else set()  # type: ignore[assignment]
    return shape_ops.reshape(out, [1 if i in axes else n for i, n in enumerate(x_shape)])


def static_int(value, name: str, what: str) -> int:
    """``value`` as a Python int; a tracer is refused, since ``what`` decides a shape."""
    if isinstance(value, Tracer):
        raise NotImplementedError(f"{name}: {what} must be a static integer, not a traced "
                                  "value (it decides the output shape)")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {value!r}") from None


def slice_axis(x, axis: int, lo: int, hi: int):
    """``x[..., lo:hi, ...]`` along ``axis`` (``0 <= lo <= hi <= size``)."""
    shape = shape_of(x)
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)
