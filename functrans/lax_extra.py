"""``functrans.lax`` functions written with other primitives: ``Precision``, ``rsqrt``,
``clamp``, ``select_n``, ``full``, ``full_like``, ``broadcasted_iota``, ``split``,
``cumlogsumexp``, ``dot``, ``batch_matmul``, the shape helpers (``tile``, ``stack``,
``unstack``, ``collapse``, ``broadcast_shapes``, ``broadcast_to_rank``, ``broadcast_like``),
``empty``, ``dtype``, ``platform_dependent``, ``composite``, ``rng_uniform`` and
``rng_bit_generator``, with the signatures of JAX's ``jax.lax``.  ``functrans.lax`` re-exports
them; every transform reaches them through the primitives they bind.
"""
from __future__ import annotations

import builtins
import enum
import functools
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from functrans import backend
from functrans.array_types import user_result, weak_result
from functrans.core import Tracer, abstract_eval_rules, get_aval
from functrans.primitives.conversion import (bitcast_convert_type, convert_element_type,
                                             zeros_like)
from functrans.primitives.elementwise import (abs, add, div, eq, exp, gt, log1p, lt, neg,
                                              select, sqrt, sub)
from functrans.primitives.gather import iota
from functrans.primitives.linalg import dot_general
from functrans.primitives.prng import random_bits_p, random_fold_in_p, random_split_p
from functrans.primitives.prng import rng_uniform_p
from functrans.primitives.shape import (broadcast, broadcast_in_dim, expand_dims,
                                        normalize_axis, reshape, shape_of, squeeze)
from functrans.primitives.slicing import concatenate, pad
from functrans.tree_util import tree_leaves
from functrans.primitives.slicing import slice as _slice

__all__ = ["Precision", "RandomAlgorithm", "batch_matmul", "broadcast_like",
           "broadcast_shapes", "broadcast_to_rank", "broadcasted_iota", "clamp", "collapse",
           "composite", "cumlogsumexp", "dot", "dtype", "empty", "full", "full_like",
           "platform_dependent", "rng_bit_generator", "rng_uniform", "rsqrt", "select_n",
           "split", "stack", "tile", "unstack"]


class Precision(enum.Enum):
    """The precision of a matrix product on accelerators (``DEFAULT``, ``HIGH``,
    ``HIGHEST``), as JAX's ``lax.Precision``; also made from JAX's strings ("default",
    "high", "highest", "bfloat16", "tensorfloat32", "float32", "fastest").  NumPy and CuPy
    compute at the operands' precision, so functrans accepts it and changes nothing.

    >>> import functrans.lax as lax
    >>> lax.Precision("float32"), lax.Precision("high")
    (<Precision.HIGHEST: 2>, <Precision.HIGH: 1>)
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "tensorfloat32": cls.HIGH, "bfloat16_3x": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __str__(self):
        return self.name


def rsqrt(x, *, accuracy=None):
    """Elementwise reciprocal square root, ``1 / sqrt(x)``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.rsqrt(np.array([4.0, 0.25]))
    array([0.5, 2. ])
    """
    del accuracy  # NumPy has one accuracy
    return div(1.0 if get_aval(x).dtype.kind == "f" else 1, sqrt(x))


def clamp(min, x, max):  # noqa: A002 (JAX's names)
    """``x`` limited to ``[min, max]`` elementwise (``min`` and ``max`` are scalars or of
    ``x``'s shape).  The derivative follows whichever value is the result; where ``x``
    equals a bound it goes to ``x``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.clamp(0.0, np.array([-1.0, 0.5, 2.0]), 1.0)
    array([0. , 0.5, 1. ])
    """
    shape = tuple(shape_of(x))
    for name, bound in (("min", min), ("max", max)):
        bound_shape = tuple(shape_of(bound))
        if bound_shape not in ((), shape):
            raise TypeError(f"clamp: {name} must be a scalar or of x's shape {shape}, got "
                            f"shape {bound_shape}")
    dtype = get_aval(x).dtype
    low, high = convert_element_type(min, dtype), convert_element_type(max, dtype)
    return select(lt(x, low), low, select(gt(x, high), high, x))


def select_n(which, *cases):
    """Elementwise ``cases[which]``: ``which`` is boolean (two cases: False picks
    ``cases[0]``) or integer (one per case), a scalar or of the cases' shape.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
    array([0., 2., 1.])
    """
    if not cases:
        raise ValueError("select_n: at least one case is required")
    which_aval = get_aval(which)
    shapes = {tuple(shape_of(c)) for c in cases}
    if len(shapes) != 1:
        raise TypeError(f"select_n: the cases must have one shape, got {sorted(shapes)}")
    shape = shapes.pop()
    if which_aval.shape not in ((), shape):
        raise TypeError(f"select_n: which must be a scalar or of the cases' shape {shape}, "
                        f"got shape {which_aval.shape}")
    if which_aval.dtype == np.bool_:
        if len(cases) > 2:
            raise TypeError(f"select_n: a boolean which selects between at most 2 cases, "
                            f"got {len(cases)}")
        return cases[0] if len(cases) == 1 else select(which, cases[1], cases[0])
    if which_aval.dtype.kind not in "iu":
        raise TypeError(f"select_n: which must be boolean or integer, got "
                        f"{which_aval.dtype}")
    out = cases[0]
    for i, case in enumerate(cases[1:], 1):
        out = select(eq(which, i), case, out)
    return out


def full(shape: int | Sequence[int], fill_value, dtype=None, *, sharding=None, like=None):
    """An array of ``shape`` filled with ``fill_value`` (of ``dtype`` if given; a traced
    ``fill_value`` carries its derivative), on the device of ``like`` (a functrans
    extension; NumPy when None).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.full((2, 2), 3, np.float32)
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    del sharding
    if tuple(shape_of(fill_value)):
        raise TypeError(f"full: fill_value must be a scalar, got shape "
                        f"{tuple(shape_of(fill_value))}")
    shape = (operator.index(shape),) if isinstance(shape, (int, np.integer)) else tuple(
        operator.index(d) for d in shape)
    value = fill_value if dtype is None else convert_element_type(fill_value, dtype)
    if isinstance(value, Tracer):  # broadcast the traced value: it keeps its derivative
        return broadcast_in_dim(value, shape, ())
    if like is None and backend.is_device_array(value):
        like = value  # a device scalar fills an array on its device
    aval = get_aval(value)
    out = backend.full(shape, value, aval.dtype, like=like)
    # weakly typed as the value is (a Python scalar, a weak array) unless a dtype is given,
    # as in JAX
    return weak_result(out) if aval.weak_type and dtype is None else user_result([out])[0]


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (its shape and dtype unless ``shape`` or ``dtype`` is given)
    filled with ``fill_value``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.full_like(np.zeros((2,), np.int32), 7.9)
    array([7, 7], dtype=int32)
    """
    del sharding
    aval = get_aval(x)
    dtype = aval.dtype if dtype is None else np.dtype(dtype)
    if shape is None or tuple(shape) == aval.shape:  # on x's device, derivative of the fill
        return add(convert_element_type(zeros_like(x), dtype),
                   convert_element_type(fill_value, dtype))
    return full(shape, fill_value, dtype, like=x)


def broadcasted_iota(dtype, shape: Sequence[int], dimension: int, *, out_sharding=None,
                     like=None):
    """An array of ``shape`` whose values count ``0, 1, ...`` along axis ``dimension``, on
    the device of ``like`` (a functrans extension; NumPy when None).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.broadcasted_iota(np.int32, (2, 3), 1)
    array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
    """
    del out_sharding
    shape = tuple(int(d) for d in shape)
    if not 0 <= dimension < len(shape):
        raise ValueError(f"broadcasted_iota: dimension {dimension} is not an axis of "
                         f"shape {shape}")
    return broadcast_in_dim(iota(dtype, shape[dimension], like=like), shape,
                            (int(dimension),))


def split(operand, sizes: Sequence[int], axis: int = 0):
    """``operand`` cut along ``axis`` into consecutive pieces of the given ``sizes``
    (which add up to the axis' length).

    >>> import numpy as np, functrans.lax as lax
    >>> [p.tolist() for p in lax.split(np.arange(5), (2, 3))]
    [[0, 1], [2, 3, 4]]
    """
    shape = tuple(shape_of(operand))
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"split: axis {axis} is out of bounds for shape {shape}")
    axis %= len(shape)
    sizes = [int(s) for s in sizes]
    if builtins.sum(sizes) != shape[axis] or builtins.min(sizes, default=0) < 0:
        raise ValueError(f"split: sizes {tuple(sizes)} must be non-negative and add up to "
                         f"{shape[axis]}, the length of axis {axis} of shape {shape}")
    pieces, start = [], 0
    for size in sizes:
        starts, limits = [0] * len(shape), list(shape)
        starts[axis], limits[axis] = start, start + size
        pieces.append(_slice(operand, starts, limits))
        start += size
    return pieces


def _logaddexp(a, b):
    top = select(gt(a, b), a, b)
    return add(top, log1p(exp(neg(abs(sub(a, b))))))


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """``log(cumsum(exp(operand)))`` along ``axis`` (from the end if ``reverse``), without
    overflow or underflow: a prefix scan of ``logaddexp`` (``ceil(log2 n)`` rounds).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.cumlogsumexp(np.array([0.0, 0.0, 1000.0])).tolist()
    [0.0, 0.6931471805599453, 1000.0]
    """
    aval = get_aval(operand)
    if aval.dtype.kind not in "f":
        raise TypeError(f"cumlogsumexp: operand must be real floating, got {aval.dtype}")
    shape = aval.shape
    if not -len(shape) <= axis < len(shape):
        raise ValueError(f"cumlogsumexp: axis {axis} is out of bounds for shape {shape}")
    axis %= len(shape)
    n, distance, out = shape[axis], 1, operand
    while distance < n:
        start, limit = [0] * len(shape), list(shape)
        config = [(0, 0, 0)] * len(shape)
        if reverse:
            start[axis], config[axis] = distance, (0, distance, 0)
        else:
            limit[axis], config[axis] = n - distance, (distance, 0, 0)
        shifted = pad(_slice(out, start, limit), -np.inf, config)
        out = _logaddexp(out, shifted)
        distance *= 2
    return out


# -- products ------------------------------------------------------------------------------


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """The product of vectors and matrices (1-D or 2-D each: the last axis of ``lhs``
    against the first of ``rhs``), or ``dot_general`` with ``dimension_numbers``.
    ``preferred_element_type`` is the result's dtype; ``precision`` is checked and ignored.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dot(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0]))
    array([3., 7.])
    """
    del out_sharding
    if dimension_numbers is None:
        lhs_shape, rhs_shape = tuple(shape_of(lhs)), tuple(shape_of(rhs))
        if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
                and lhs_shape[-1] == rhs_shape[0]):
            raise ValueError(f"dot: dimension_numbers must be given unless the operands are "
                             f"vectors or matrices with matching inner lengths; got shapes "
                             f"{lhs_shape} and {rhs_shape}")
        dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision=precision,
                       preferred_element_type=preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch axes: ``lhs`` ``(..., m, k)`` times ``rhs``
    ``(..., k, n)`` of the same rank (at least 2).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.batch_matmul(np.ones((5, 2, 3)), np.ones((5, 3, 4))).shape
    (5, 2, 4)
    """
    lhs_ndim, rhs_ndim = len(shape_of(lhs)), len(shape_of(rhs))
    if builtins.min(lhs_ndim, rhs_ndim) < 2:
        raise ValueError(f"batch_matmul: operands must be at least 2-D, got ranks {lhs_ndim} "
                         f"and {rhs_ndim}")
    if lhs_ndim != rhs_ndim:
        raise ValueError(f"batch_matmul: operands must have one rank, got {lhs_ndim} and "
                         f"{rhs_ndim}")
    batch = tuple(range(lhs_ndim - 2))
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)),
                       precision=precision)


# -- shapes --------------------------------------------------------------------------------


def tile(operand, reps: Sequence[int]):
    """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one count per axis).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.tile(np.array([[1, 2], [3, 4]]), (2, 3))
    array([[1, 2, 1, 2, 1, 2],
           [3, 4, 3, 4, 3, 4],
           [1, 2, 1, 2, 1, 2],
           [3, 4, 3, 4, 3, 4]])
    """
    shape = tuple(shape_of(operand))
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape):
        raise TypeError(f"tile: reps must have one count per axis of the operand, got "
                        f"{len(reps)} counts for shape {shape}")
    if builtins.min(reps, default=0) < 0:
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    if all(r == 1 for r in reps):
        return operand
    # each axis n becomes (r, n): the copies are the slower-varying axis, then merged
    spread = tuple(d for pair in zip(reps, shape) for d in pair)
    copies = broadcast_in_dim(operand, spread, tuple(range(1, 2 * len(shape), 2)))
    return reshape(copies, tuple(r * n for r, n in zip(reps, shape)))


def stack(operands: Sequence, axis: int = 0):
    """The arrays ``operands`` (of one shape) joined along a new axis ``axis``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.stack([np.zeros(2), np.ones(2)], axis=1)
    array([[0., 1.],
           [0., 1.]])
    """
    operands = list(operands)
    if not operands:
        raise ValueError("stack: needs at least one operand")
    shapes = [tuple(shape_of(x)) for x in operands]
    if len(set(shapes)) != 1:
        raise ValueError(f"stack: the operands must have one shape, got "
                         f"{', '.join(map(str, shapes))}")
    axis = normalize_axis(axis, len(shapes[0]) + 1, "stack: axis")
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple of arrays without that axis.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.unstack(np.array([[1, 2], [3, 4]]), axis=1)
    (array([1, 3]), array([2, 4]))
    """
    shape = tuple(shape_of(x))
    axis = normalize_axis(axis, len(shape), "unstack: axis")
    pieces = split(x, (1,) * shape[axis], axis)
    return tuple(squeeze(p, (axis,)) for p in pieces)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """``operand`` with axes ``start_dimension`` up to (not including) ``stop_dimension``
    (None: the last) merged into one, in row-major order (Python's slice rules for the
    bounds).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.collapse(np.zeros((2, 3, 4)), 0, 2).shape
    (6, 4)
    """
    shape = tuple(shape_of(operand))
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"collapse: the axes {start_dimension}:{stop_dimension} of shape "
                         f"{shape} are an empty range")
    return reshape(operand, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def broadcast_shapes(*shapes):
    """The shape that arrays of ``shapes`` broadcast to (NumPy's rules).

    >>> import functrans.lax as lax
    >>> lax.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    if not shapes:
        raise ValueError("broadcast_shapes: needs at least one shape")
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"broadcast_shapes: the shapes {', '.join(map(str, shapes))} do "
                         f"not broadcast together") from None


def broadcast_to_rank(x, rank: int):
    """``x`` with leading axes of length 1 added up to rank ``rank`` (unchanged if it has
    that many already).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.broadcast_to_rank(np.ones(3), 3).shape
    (1, 1, 3)
    """
    ndim = len(shape_of(x))
    return broadcast(x, (1,) * (operator.index(rank) - ndim)) if rank > ndim else x


def broadcast_like(arr, like_arr):
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.broadcast_like(np.arange(3.0), np.zeros((2, 3)))
    array([[0., 1., 2.],
           [0., 1., 2.]])
    """
    shape, target = tuple(shape_of(arr)), tuple(shape_of(like_arr))
    if len(shape) > len(target) or any(n not in (1, m) for n, m in zip(
            shape[::-1], target[::-1])):
        raise ValueError(f"broadcast_like: shape {shape} does not broadcast to {target}")
    lead = len(target) - len(shape)
    kept = [i for i, n in enumerate(shape) if n == target[lead + i]]
    squeezed = squeeze(arr, tuple(i for i in range(len(shape)) if i not in kept)) if len(
        kept) < len(shape) else arr
    return broadcast_in_dim(squeezed, target, tuple(lead + i for i in kept))


# -- creation and types --------------------------------------------------------------------


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values are unspecified (functrans fills it
    with zeros, as JAX does on CPU).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.empty((2,), np.float32)
    array([0., 0.], dtype=float32)
    """
    del out_sharding
    return full(shape, 0, dtype)


#: the dtypes of Python scalars and of their types (functrans is 64-bit throughout)
_PYTHON_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64),
                  float: np.dtype(np.float64), builtins.complex: np.dtype(np.complex128)}


def _numeric_dtype(x, dt: np.dtype) -> np.dtype:
    if dt.kind not in "biufc":
        raise TypeError(f"dtype: {x!r} has dtype {dt}, which is not a numeric array type")
    return dt


def dtype(x: Any) -> np.dtype:
    """The dtype of a value, a Python scalar type, a NumPy scalar type or a dtype name
    (``lax.dtype``; Python scalars have the 64-bit dtypes).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dtype(1.0), lax.dtype(np.float32), lax.dtype(np.zeros(2, np.int8))
    (dtype('float64'), dtype('float32'), dtype('int8'))
    """
    if x is None:
        raise ValueError("dtype: None has no dtype")
    if isinstance(x, type):
        if x in _PYTHON_DTYPES:
            return _PYTHON_DTYPES[x]
        if issubclass(x, np.generic):
            return _numeric_dtype(x, np.dtype(x))
    elif type(x) in _PYTHON_DTYPES:
        return _PYTHON_DTYPES[type(x)]
    if isinstance(x, (str, np.dtype)):
        return _numeric_dtype(x, np.dtype(x))
    found = getattr(x, "dtype", None)
    if isinstance(found, np.dtype):
        return _numeric_dtype(x, found)
    try:
        return _numeric_dtype(x, np.result_type(x))
    except TypeError:
        raise TypeError(f"dtype: cannot tell the dtype of {x!r}") from None


# -- control -------------------------------------------------------------------------------


def platform_dependent(*args, default: Callable | None = None,
                       **per_platform: Callable):
    """``per_platform[p](*args)`` for the platform ``p`` that ``args`` (pytrees of arrays,
    traced or not) live on: ``"cpu"`` for NumPy and dask arrays, ``"cuda"`` for CuPy's (or
    a registered device library's); ``default(*args)`` for a platform not named.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.platform_dependent(np.ones(2), cpu=lambda x: x + 1, default=lambda x: x)
    array([2., 2.])
    """
    for name, candidate in per_platform.items():
        if name == "gpu":
            raise ValueError("platform_dependent: name the GPU platform 'cuda' (or 'rocm'), "
                             "not 'gpu'")
        if not callable(candidate):  # a keyword that is no branch: worded as Python's
            raise TypeError(f"platform_dependent() got a branch '{name}' that is not "
                            f"callable: {candidate!r}")
    if default is not None and not callable(default):
        raise TypeError("platform_dependent: the 'default' branch must be callable")
    library = backend.library_of(*tree_leaves(args))
    platform = "cpu" if library is backend.NUMPY or library.lazy else "cuda"
    branch: Callable | None = per_platform.get(platform, default)
    if branch is None:
        raise ValueError(f"platform_dependent: the operands are on platform '{platform}', "
                         f"which has no branch ({sorted(per_platform)}) and there is no "
                         f"default")
    return branch(*args)


def composite(decomposition: Callable, name: str, version: int = 0):
    """``decomposition`` marked as a composite operation called ``name`` (for XLA, which
    may replace it by a kernel of that name); functrans runs ``decomposition`` itself,
    under every transform.  Keyword arguments are its static attributes.

    >>> import functools, numpy as np, functrans.lax as lax
    >>> @functools.partial(lax.composite, name="my.tangent")
    ... def tangent(x):
    ...     return lax.sin(x) / lax.cos(x)
    ...
    >>> tangent(np.array([0.0]))
    array([0.])
    """
    if not isinstance(name, str):
        raise TypeError(f"composite: name must be a string, got {name!r}")

    @functools.wraps(decomposition)
    def call(*args, **attributes):
        for key, value in attributes.items():
            if any(isinstance(leaf, Tracer) for leaf in tree_leaves(value)):
                raise TypeError(f"composite '{name}': the attribute {key!r} is a traced "
                                f"value; pass traced values as positional arguments")
        return decomposition(*args, **attributes)
    return call


# -- random numbers ------------------------------------------------------------------------


class RandomAlgorithm(enum.IntEnum):
    """The bit generator ``rng_bit_generator`` is asked for (JAX's ``lax.RandomAlgorithm``);
    functrans draws the same threefry bits for all three."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_BIT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """``(new_key, bits)``: random bits of ``shape`` and an unsigned ``dtype`` drawn from
    ``key`` (``uint32[4]`` or ``uint64[2]``), and the next key, of ``key``'s type.  The bits
    are functrans's threefry2x32 (``functrans.random``'s generator) from the key's words,
    for every ``algorithm``: deterministic and of good quality, but not XLA's bits, which
    differ between XLA's backends too.

    >>> import numpy as np, functrans.lax as lax
    >>> new_key, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (3,), np.uint8)
    >>> new_key.shape, new_key.dtype, bits.shape, bits.dtype
    ((4,), dtype('uint32'), (3,), dtype('uint8'))
    """
    del out_sharding
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(operator.index(d) for d in shape)
    dtype = np.dtype(dtype)
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: dtype must be uint8, uint16, uint32 or uint64, "
                        f"got {dtype}")
    RandomAlgorithm(algorithm)  # a bad value raises
    aval = get_aval(key)
    if (aval.shape, aval.dtype) == ((2,), np.dtype(np.uint64)):
        words = reshape(bitcast_convert_type(key, np.uint32), (4,))
    elif (aval.shape, aval.dtype) == ((4,), np.dtype(np.uint32)):
        words = key
    else:
        raise TypeError(f"rng_bit_generator: key must be uint32[4] or uint64[2], got "
                        f"{aval.dtype}{list(aval.shape)}")
    state = _slice(words, (0,), (2,))
    for i in (2, 3):
        state = random_fold_in_p.bind(state, reshape(_slice(words, (i,), (i + 1,)), ()))
    keys = random_split_p.bind(state, shape=(3,))
    bits = random_bits_p.bind(reshape(_slice(keys, (0, 0), (1, 2)), (2,)), shape=shape,
                              bit_width=dtype.itemsize * 8)
    new_words = reshape(_slice(keys, (1, 0), (3, 2)), (4,))
    if aval.dtype == np.uint64:
        return bitcast_convert_type(reshape(new_words, (2, 2)), np.uint64), bits
    return new_words, bits


def rng_uniform(a, b, shape):
    """Random numbers of ``shape`` uniform in ``[a, b)`` (scalars of one real dtype) from a
    process-wide stateful generator: every evaluation, a ``jit``-compiled one included,
    draws anew.  Prefer ``functrans.random``; this has no derivative and does not batch,
    as in JAX.

    >>> import numpy as np, functrans.lax as lax
    >>> x = lax.rng_uniform(np.float32(2.0), np.float32(3.0), (4,))
    >>> x.shape, x.dtype, bool(((2 <= x) & (x < 3)).all())
    ((4,), dtype('float32'), True)
    """
    shape = tuple(operator.index(d) for d in shape)
    abstract_eval_rules[rng_uniform_p](get_aval(a), get_aval(b), shape=shape)  # checks
    return rng_uniform_p.bind(a, b, shape=shape)


def __dir__() -> list[str]:
    return sorted(__all__)
