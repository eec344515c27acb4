"""``functrans.lax`` functions written with other primitives: ``Precision``, ``rsqrt``,
``clamp``, ``select_n``, ``full``, ``full_like``, ``broadcasted_iota``, ``split`` and
``cumlogsumexp``, with the signatures of JAX's ``jax.lax``.  ``functrans.lax`` re-exports
them; every transform reaches them through the primitives they bind.
"""
from __future__ import annotations

import builtins
import enum
import operator
from typing import Sequence

import numpy as np

from functrans import backend
from functrans.array_types import user_result, weak_result
from functrans.core import Tracer, get_aval
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.primitives.elementwise import (abs, add, div, eq, exp, gt, log1p, lt, neg,
                                              select, sqrt, sub)
from functrans.primitives.gather import iota
from functrans.primitives.shape import broadcast_in_dim, shape_of
from functrans.primitives.slicing import pad
from functrans.primitives.slicing import slice as _slice

__all__ = ["Precision", "broadcasted_iota", "clamp", "cumlogsumexp", "full", "full_like",
           "rsqrt", "select_n", "split"]


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


def __dir__() -> list[str]:
    return sorted(__all__)
