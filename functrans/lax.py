"""``functrans.lax``: the primitives' own functions, with JAX's ``jax.lax`` names.

Unlike ``functrans.numpy`` these do no implicit dtype promotion beyond NumPy's rules for
the operation itself, and shape operations take explicit static parameters.
"""
import builtins

import numpy as np

from functrans import lax_linalg as linalg
from functrans.primitives.collectives import (all_gather, axis_index, pmax, pmean, pmin,
                                              psum)
from functrans.primitives.control_flow import cond, fori_loop, scan, switch, while_loop
from functrans.primitives.conversion import convert_element_type, stop_gradient, zeros_like
from functrans.primitives.elementwise import (RoundingMethod, abs, acos, acosh, add, asin, asinh,
                                              atan, atan2, atanh, bitwise_and, bitwise_not,
                                              bitwise_or, bitwise_xor, cbrt, ceil, clz, complex,
                                              conj, cos, cosh, div, eq, exp, exp2, expm1, floor,
                                              ge, gt, imag, integer_pow, is_finite, le, log, log1p,
                                              logistic, lt, max, min, mul, ne, neg, nextafter,
                                              population_count, pow, real, rem, round, select,
                                              shift_left, shift_right_arithmetic,
                                              shift_right_logical, sign, sin, sinh, sqrt, sub, tan,
                                              tanh)
from functrans.primitives.cumulative import cummax, cummin, cumprod, cumsum, reduce_prod
from functrans.primitives.fft import FftType, fft
from functrans.primitives.gather import (GatherScatterMode, gather, iota, scatter, scatter_add,
                                         scatter_max, scatter_min, scatter_mul)
from functrans.primitives.indexing import dynamic_slice, dynamic_update_slice
from functrans.primitives.linalg import dot_general
from functrans.primitives.reductions import argmax, argmin, reduce_max, reduce_min
from functrans.primitives.shape import (broadcast, broadcast_in_dim, expand_dims, reduce_sum,
                                        rev, squeeze)
from functrans.primitives.shape import reshape as _reshape
from functrans.primitives.slicing import concatenate, pad, slice
from functrans.primitives.special import (bessel_i0e, bessel_i1e, betainc, digamma, erf,
                                          erf_inv, erfc, igamma, igamma_grad_a, igammac,
                                          lgamma, polygamma, random_gamma_grad, zeta)
from functrans.primitives.sorting import (approx_max_k, approx_min_k, sort, sort_key_val,
                                          top_k)
from functrans.primitives.shape import normalize_axis as _normalize_axis
from functrans.primitives.shape import shape_of as _shape_of
from functrans.primitives.shape import transpose_axes as _transpose_axes

__all__ = [
    "abs", "acos", "acosh", "add", "all_gather", "approx_max_k", "approx_min_k", "argmax",
    "argmin", "asin", "asinh", "atan", "atan2", "atanh", "axis_index", "bessel_i0e",
    "bessel_i1e", "betainc", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor",
    "broadcast", "broadcast_in_dim", "cbrt", "ceil", "clz", "complex", "concatenate", "cond",
    "conj", "convert_element_type", "cos", "cosh", "cummax", "cummin", "cumprod", "cumsum",
    "digamma", "div", "dot_general", "dynamic_index_in_dim", "dynamic_slice",
    "dynamic_slice_in_dim", "dynamic_update_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "eq", "erf", "erf_inv", "erfc", "exp", "exp2",
    "expand_dims", "expm1", "fft", "FftType", "floor", "fori_loop", "gather",
    "GatherScatterMode", "ge", "gt", "igamma", "igamma_grad_a", "igammac", "imag",
    "index_in_dim", "index_take", "integer_pow", "iota", "is_finite", "le", "lgamma", "linalg",
    "log", "log1p", "logistic", "lt", "max", "min", "mul", "ne", "neg", "nextafter", "pad",
    "pmax", "pmean", "pmin", "polygamma", "population_count", "pow", "psum",
    "random_gamma_grad", "real", "reduce_max", "reduce_min", "reduce_prod", "reduce_sum",
    "rem", "reshape", "rev", "round", "RoundingMethod", "scan", "scatter", "scatter_add",
    "scatter_max", "scatter_min", "scatter_mul", "select", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "sin", "sinh", "slice",
    "slice_in_dim", "sort", "sort_key_val", "sqrt", "squeeze", "stop_gradient", "sub",
    "switch", "tan", "tanh", "top_k", "transpose", "while_loop", "zeros_like", "zeta",
]


def transpose(operand, permutation):
    """Permute the axes of ``operand``: output axis ``i`` is input axis ``permutation[i]``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.transpose(np.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    return _transpose_axes(operand, permutation)


def reshape(operand, new_sizes, dimensions=None):
    """Reshape ``operand`` (row-major) to ``new_sizes``; with ``dimensions`` (a permutation
    of its axes) its axes are first transposed into that order, as in JAX.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reshape(np.arange(6.0), (2, 3))
    array([[0., 1., 2.],
           [3., 4., 5.]])
    >>> lax.reshape(np.arange(6.0).reshape(2, 3), (6,), dimensions=(1, 0))
    array([0., 3., 1., 4., 2., 5.])
    """
    if dimensions is not None:
        ndim = len(_shape_of(operand))
        dims = tuple(int(d) for d in dimensions)
        if sorted(dims) != list(builtins.range(ndim)):
            raise TypeError(f"reshape: dimensions must be a permutation of the operand's axes "
                            f"(0 .. {ndim - 1}) for an operand of shape "
                            f"{_shape_of(operand)}, got dimensions={tuple(dimensions)}")
        if dims != tuple(builtins.range(ndim)):
            operand = _transpose_axes(operand, dims)
    return _reshape(operand, new_sizes)


def _axis(operand, axis: int, name: str) -> int:
    from_shape = _shape_of(operand)
    return _normalize_axis(axis, len(from_shape), f"{name}: axis")


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """``lax.slice`` along one ``axis``: ``start_index:limit_index:stride`` there (None for
    an end, negative ones counted from the end), whole slices elsewhere.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.slice_in_dim(np.arange(12).reshape(3, 4), 1, -1, axis=1)
    array([[ 1,  2],
           [ 5,  6],
           [ 9, 10]])
    """
    shape = _shape_of(operand)
    axis = _axis(operand, axis, "slice_in_dim")
    start, limit, _ = builtins.slice(start_index, limit_index).indices(shape[axis])
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, builtins.max(start, limit), int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The static position ``index`` (negative: from the end) along ``axis``, keeping that
    axis with length 1 unless ``keepdims`` is False.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.index_in_dim(np.arange(6).reshape(2, 3), -1, axis=1, keepdims=False)
    array([2, 5])
    """
    axis = _axis(operand, axis, "index_in_dim")
    n = _shape_of(operand)[axis]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"index_in_dim: index {i} is out of bounds for axis {axis} with "
                         f"size {n}")
    out = slice_in_dim(operand, i % n, i % n + 1, axis=axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """``dynamic_slice`` along one ``axis``: ``slice_size`` elements from the (possibly
    traced, clamped) ``start_index``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_slice_in_dim(np.arange(10), 8, 3)
    array([7, 8, 9])
    """
    shape = _shape_of(operand)
    axis = _axis(operand, axis, "dynamic_slice_in_dim")
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The (possibly traced, clamped) position ``index`` along ``axis``, keeping that axis
    with length 1 unless ``keepdims`` is False.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_index_in_dim(np.arange(6).reshape(3, 2), -1, keepdims=False)
    array([4, 5])
    """
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (_axis(operand, axis, "dynamic_index_in_dim"),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``dynamic_update_slice`` along one ``axis``: ``update`` written from the (possibly
    traced, clamped) ``start_index`` there.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_update_slice_in_dim(np.zeros(5), np.ones(2), -2, axis=0)
    array([0., 0., 0., 1., 1.])
    """
    axis = _axis(operand, axis, "dynamic_update_slice_in_dim")
    starts = [0] * len(_shape_of(operand))
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
    """``update`` (with or without ``axis``) written at the (possibly traced) position
    ``index`` along ``axis``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_update_index_in_dim(np.zeros((3, 2)), np.ones(2), 1, axis=0)
    array([[0., 0.],
           [1., 1.],
           [0., 0.]])
    """
    axis = _axis(operand, axis, "dynamic_update_index_in_dim")
    if len(_shape_of(update)) == len(_shape_of(operand)) - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """``src`` read at the positions ``idxs[j]`` (broadcast together; clamped) along
    ``axes[j]``: the result's leading axes are the indices', then ``src``'s other axes.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.index_take(np.arange(12).reshape(3, 4), (np.array([2, 0]), np.array([1, 3])),
    ...                (0, 1))
    array([9, 3])
    """
    axes = tuple(_axis(src, a, "index_take") for a in axes)
    if len(idxs) != len(axes):
        raise ValueError(f"index_take: {len(idxs)} index arrays for {len(axes)} axes")
    rest = tuple(a for a in range(len(_shape_of(src))) if a not in axes)
    moved = transpose(src, axes + rest)
    batch = np.broadcast_shapes(*(_shape_of(i) for i in idxs))
    positions = concatenate([expand_dims(broadcast_in_dim(convert_element_type(i, np.int64),
                                                          batch, tuple(range(
                                                              len(batch) - len(_shape_of(i)),
                                                              len(batch)))), (len(batch),))
                             for i in idxs], len(batch))
    return gather(moved, positions)


def __dir__() -> list[str]:
    return sorted(__all__)
