"""``pad`` in all of NumPy's modes, built from slices, reversals, gathers and reductions,
so that derivatives and batching come from those primitives' rules.

The axes are padded one after the other (axis 0 first), each from the array padded along
the axes before it, as NumPy does: a corner takes the value the last axis gives it.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable

import numpy as np

from functrans import backend, lax
from functrans.core import Tracer
from functrans.numpy._creation import linspace
from functrans.numpy._functional import apply_along_axis
from functrans.numpy._shape import concatenate, pad_constant
from functrans.numpy._util import arg, dtype_of, shape_of, slice_axis
from functrans.primitives import shape as shape_ops
from functrans.primitives.elementwise import RoundingMethod
from functrans.primitives.sorting import sort, take_along

__all__ = ["pad"]

# Each mode and the keyword arguments it takes (NumPy's).
_MODE_KEYWORDS = {
    "constant": {"constant_values"}, "empty": set(), "edge": set(), "wrap": set(),
    "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "mean": {"stat_length"},
    "median": {"stat_length"}, "minimum": {"stat_length"}, "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
}


def pad(array, pad_width, mode: str | Callable = "constant", **kwargs):
    """``array`` padded by ``pad_width`` (an int, a ``(before, after)`` pair, or one pair
    per axis), as ``numpy.pad`` in every mode:

    * ``"constant"`` (``constant_values``: a scalar, or a pair, or a pair per axis; traced
      values carry derivatives), ``"empty"`` (zeros, as JAX);
    * ``"edge"``, ``"wrap"``, ``"reflect"`` and ``"symmetric"`` (``reflect_type`` "even" or
      "odd"; pads wider than the axis repeat the reflection, as NumPy's);
    * ``"linear_ramp"`` (from ``end_values`` to the edge), ``"maximum"``, ``"minimum"``,
      ``"mean"``, ``"median"`` (of the ``stat_length`` elements at each end; the mean and
      median of integers are rounded to even, as NumPy);
    * a function ``f(vector, (before, after), axis, kwargs)`` called on every 1-D slice
      along each axis (zeros in the pad), which returns the padded vector, as
      ``jax.numpy.pad`` requires (functrans arrays are immutable: build it with
      ``vector.at[...].set(...)``).

    >>> import functrans.numpy as fnp
    >>> fnp.pad(fnp.asarray([1.0, 2.0, 3.0]), (2, 3), mode="reflect")
    array([3., 2., 1., 2., 3., 2., 1., 2.])
    >>> fnp.pad(fnp.asarray([1, 2]), 1, constant_values=(7, 9))
    array([7, 1, 2, 9])
    >>> fnp.pad(fnp.asarray([0, 1, 2, 3]), (3, 2), mode="linear_ramp", end_values=(10, -3))
    array([10,  6,  3,  0,  1,  2,  3,  0, -3])
    """
    array = arg(array)
    shape = shape_of(array)
    nd = len(shape)
    widths = _widths(pad_width, nd)
    if callable(mode):
        return _pad_with_function(array, widths, mode, kwargs)
    if mode not in _MODE_KEYWORDS:
        raise ValueError(f"pad: mode {mode!r} is not supported; use one of "
                         f"{sorted(_MODE_KEYWORDS)} or a function")
    unexpected = set(kwargs) - _MODE_KEYWORDS[mode]
    if unexpected:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: "
                         f"{sorted(unexpected)}")
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0) if mode == "constant" else 0
        return _pad_constant(array, widths, values)
    for axis, (lo, hi) in enumerate(widths):
        if (lo or hi) and shape[axis] == 0:
            raise ValueError(f"pad: cannot extend the empty axis {axis} of an array of shape "
                             f"{shape} with mode {mode!r}; only 'constant' and 'empty' can")
    if mode == "linear_ramp":
        ends = _per_side(kwargs.get("end_values", 0), nd, "end_values")
    if mode in ("maximum", "minimum", "mean", "median"):
        lengths = _stat_lengths(kwargs.get("stat_length"), shape)
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for axis, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        if mode == "edge" or (mode in ("reflect", "symmetric") and shape[axis] == 1):
            array = _pad_edge(array, axis, lo, hi)
        elif mode == "wrap":
            array = _pad_wrap(array, axis, lo, hi)
        elif mode in ("reflect", "symmetric"):
            array = _pad_reflect(array, axis, lo, hi, mode == "symmetric", reflect_type == "odd")
        elif mode == "linear_ramp":
            array = _pad_ramp(array, axis, lo, hi, ends[axis])
        else:
            array = _pad_stat(array, axis, lo, hi, lengths[axis], mode)
    return array


def _widths(pad_width, nd: int) -> list[tuple[int, int]]:
    """``pad_width`` as one ``(before, after)`` pair of ints per axis.  The widths decide
    the output's shape, so they are read on the host (device ones too)."""
    if isinstance(pad_width, Tracer):
        raise TypeError("pad: pad_width must be static (it decides the output's shape), not "
                        "a traced value")
    widths = np.asarray(backend.to_host(pad_width) if backend.is_device_array(pad_width)
                        else pad_width)
    if widths.dtype.kind not in "iu" and widths.size:
        raise TypeError(f"pad: pad_width must be integers, got {widths.tolist()!r}")
    try:
        widths = np.broadcast_to(widths.astype(np.int64), (nd, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width of shape {widths.shape} does not fit an array with "
                         f"{nd} axes (expected an int, a pair, or {nd} pairs)") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {widths.tolist()}")
    return [(int(lo), int(hi)) for lo, hi in widths]


def _per_side(values, nd: int, name: str) -> list[tuple[Any, Any]]:
    """A scalar, a pair or a pair per axis (``constant_values``, ``end_values``) as one
    ``(before, after)`` pair of scalars per axis; traced values stay traced."""
    if isinstance(values, Tracer) or backend.is_device_array(values):
        full = shape_ops.broadcast_to(values, (nd, 2)) if shape_of(values) else None
        if full is None:
            return [(values, values)] * nd
        return [tuple(shape_ops.reshape(lax.slice(full, (i, j), (i + 1, j + 1)), ())
                      for j in range(2)) for i in range(nd)]
    host = np.asarray(values)
    try:
        host = np.broadcast_to(host, (nd, 2))
    except ValueError:
        raise ValueError(f"pad: {name} of shape {host.shape} does not fit an array with {nd} "
                         f"axes (expected a scalar, a pair, or {nd} pairs)") from None
    return [(host[i, 0], host[i, 1]) for i in range(nd)]


def _pad_constant(array, widths, values):
    nd = len(widths)
    if not isinstance(values, Tracer) and np.ndim(values) == 0 and not isinstance(
            values, (tuple, list)) or (isinstance(values, Tracer) and not shape_of(values)):
        return pad_constant(array, widths, constant_values=values)  # one value: one pad
    for axis, ((lo, hi), (before, after)) in enumerate(zip(widths, _per_side(values, nd,
                                                                            "constant_values"))):
        config = [(0, 0)] * nd
        if lo:
            config[axis] = (lo, 0)
            array = pad_constant(array, config, constant_values=before)
        if hi:
            config[axis] = (0, hi)
            array = pad_constant(array, config, constant_values=after)
    return array


def _stretched(piece, axis: int, width: int):
    """``piece`` (one element long along ``axis``) repeated ``width`` times along it."""
    shape = list(shape_of(piece))
    shape[axis] = width
    return shape_ops.broadcast_in_dim(shape_ops.squeeze(piece, (axis,)), tuple(shape),
                                      tuple(d for d in range(len(shape)) if d != axis))


def _pad_edge(array, axis, lo, hi):
    n = shape_of(array)[axis]
    parts = [_stretched(slice_axis(array, axis, 0, 1), axis, lo)] if lo else []
    parts.append(array)
    if hi:
        parts.append(_stretched(slice_axis(array, axis, n - 1, n), axis, hi))
    return concatenate(parts, axis=axis)


def _pad_wrap(array, axis, lo, hi):
    """Position ``i`` of the output reads element ``(i - lo) mod n``: one gather."""
    n = shape_of(array)[axis]
    shape = list(shape_of(array))
    shape[axis] = n + lo + hi
    # (i - lo) mod n with a non-negative left operand: shift by a multiple of n first
    shift = -(-lo // n) * n - lo
    positions = lax.rem(lax.add(lax.iota(np.int64, n + lo + hi, like=array), shift), n)
    return take_along(array, shape_ops.broadcast_in_dim(positions, tuple(shape), (axis,)),
                      axis)


def _pad_reflect(array, axis, lo, hi, symmetric: bool, odd: bool):
    """Reflection about the edge elements (``symmetric``: about the array's ends, edges
    repeated), in rounds as NumPy's: each round mirrors at most the part padded so far,
    counted in whole periods of the original axis, so wide pads repeat the reflection
    (and, for ``odd``, keep extrapolating: ``2·edge - mirrored``)."""
    n = shape_of(array)[axis]
    while lo or hi:
        length = shape_of(array)[axis]
        if symmetric:
            room = length // n * n
        else:
            room = (length - 1) // (n - 1) * (n - 1)
        parts = []
        if lo:
            take = builtins.min(room, lo)
            start = 0 if symmetric else 1
            chunk = lax.rev(slice_axis(array, axis, start, start + take), (axis,))
            if odd:
                chunk = _odd(chunk, slice_axis(array, axis, 0, 1), axis)
            parts.append(chunk)
            lo -= take
        parts.append(array)
        if hi:
            take = builtins.min(room, hi)
            stop = length if symmetric else length - 1
            chunk = lax.rev(slice_axis(array, axis, stop - take, stop), (axis,))
            if odd:
                chunk = _odd(chunk, slice_axis(array, axis, length - 1, length), axis)
            parts.append(chunk)
            hi -= take
        array = concatenate(parts, axis=axis)
    return array


def _odd(chunk, edge, axis):
    """``2·edge - chunk``, the edge (one element along ``axis``) stretched to the chunk."""
    edge = _stretched(edge, axis, shape_of(chunk)[axis])
    return lax.sub(lax.add(edge, edge), chunk)


def _pad_ramp(array, axis, lo, hi, ends):
    n = shape_of(array)[axis]
    parts = []
    dtype = dtype_of(array)
    for width, end, position in ((lo, ends[0], 0), (hi, ends[1], n - 1)):
        if not width:
            parts.append(None)
            continue
        edge = shape_ops.squeeze(slice_axis(array, axis, position, position + 1), (axis,))
        if not (isinstance(end, Tracer) or backend.is_device_array(end)):
            end = np.asarray(end).astype(np.result_type(end, dtype) if np.asarray(
                end).dtype.kind == "c" else np.float64)
        ramp = linspace(end, edge, width, endpoint=False, dtype=dtype, axis=axis)
        parts.append(ramp)
    left, right = parts
    if right is not None:
        right = lax.rev(right, (axis,))
    return concatenate([p for p in (left, array, right) if p is not None], axis=axis)


def _stat_lengths(stat_length, shape) -> list[tuple[int, int]]:
    """``stat_length`` (None: the whole axis) as one pair of ints per axis, each at most
    the axis's length; a zero one has no statistic to pad with."""
    nd = len(shape)
    if stat_length is None:
        return [(n, n) for n in shape]
    lengths = np.asarray(stat_length)
    if lengths.dtype.kind not in "iu":
        raise TypeError(f"pad: stat_length must be integers, got {lengths.tolist()!r}")
    try:
        lengths = np.broadcast_to(lengths, (nd, 2))
    except ValueError:
        raise ValueError(f"pad: stat_length of shape {lengths.shape} does not fit an array "
                         f"with {nd} axes") from None
    if (lengths < 0).any():
        raise ValueError(f"pad: stat_length must be non-negative, got {lengths.tolist()}")
    return [(builtins.min(int(a), n), builtins.min(int(b), n))
            for (a, b), n in zip(lengths, shape)]


def _pad_stat(array, axis, lo, hi, lengths, mode):
    n = shape_of(array)[axis]
    parts = []
    for width, length, ends_at_start in ((lo, lengths[0], True), (hi, lengths[1], False)):
        if not width:
            parts.append(None)
            continue
        if length == 0:
            raise ValueError(f"pad: stat_length of 0 along axis {axis} leaves no values to "
                             f"compute the {mode} from")
        piece = (slice_axis(array, axis, 0, length) if ends_at_start else
                 slice_axis(array, axis, n - length, n))
        parts.append(_stretched(_statistic(piece, axis, mode), axis, width))
    left, right = parts
    return concatenate([p for p in (left, array, right) if p is not None], axis=axis)


def _statistic(piece, axis: int, mode: str):
    """The ``mode`` statistic of ``piece`` along ``axis``, kept as an axis of length 1, in
    ``piece``'s dtype (integer means and medians rounded to even, as NumPy)."""
    dtype = np.dtype(dtype_of(piece))
    length = shape_of(piece)[axis]
    if mode == "maximum":
        value = lax.reduce_max(piece, (axis,))
    elif mode == "minimum":
        value = lax.reduce_min(piece, (axis,))
    else:
        wide = dtype if dtype.kind in "fc" else np.dtype(np.float64)
        piece = lax.convert_element_type(piece, wide)
        if mode == "mean":
            value = lax.div(shape_ops.reduce_sum(piece, (axis,)), wide.type(length))
        else:
            ordered = sort(piece, axis)
            middle = slice_axis(ordered, axis, (length - 1) // 2, length // 2 + 1)
            value = lax.div(shape_ops.reduce_sum(middle, (axis,)),
                            wide.type(shape_of(middle)[axis]))
        if dtype.kind not in "fc":
            value = lax.convert_element_type(
                lax.round(value, RoundingMethod.TO_NEAREST_EVEN), dtype)
    return shape_ops.expand_dims(value, (axis,))


def _pad_with_function(array, widths, function, kwargs):
    padded = _pad_constant(array, widths, 0)
    for axis, pair in enumerate(widths):
        def one(vector, axis=axis, pair=pair):
            out = function(vector, pair, axis, kwargs)
            if out is None:
                name = getattr(function, "__name__", "the padding function")
                raise TypeError(f"pad: {name} returned None; it must return the padded "
                                "vector (functrans arrays are immutable, as JAX's: build it "
                                "with vector.at[...].set(...) instead of writing in place)")
            return out
        padded = apply_along_axis(one, axis, padded)
    return padded
