"""Reductions: reduce_max, reduce_min, argmax, argmin and the bitwise reduce_and, reduce_or
and reduce_xor over static axes (reduce_sum, the transpose of broadcast_in_dim, is in
``shape.py``)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from functrans.backend import array_module
from functrans.core import Primitive, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import div, eq, mul
from functrans.primitives.shape import (broadcast_in_dim, kept_dims, normalize_axes,
                                        normalize_axis, reduce_sum, reduced_aval,
                                        reduction_batcher, shape_of)

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["argmax", "argmin", "reduce_and", "reduce_max", "reduce_min", "reduce_or",
           "reduce_xor"]


# -- reduce_max / reduce_min ---------------------------------------------------------------


def _reduce_chooser_jvp(prim: Primitive):
    # The derivative flows to the elements equal to the extremum, shared equally among ties.
    def rule(primals, tangents, *, axes):
        (x,), (g,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if type(g) is ad.Zero:
            return ans, ad.Zero.from_value(ans)
        shape = shape_of(x)
        location = eq(x, broadcast_in_dim(ans, shape, kept_dims(len(shape), axes)))
        location = convert_element_type(location, get_aval(g).dtype)
        counts = reduce_sum(location, axes)
        return ans, div(reduce_sum(mul(g, location), axes), counts)
    return rule


def _chooser(name: str, numpy_name: str) -> Primitive:
    prim = Primitive(name, origin="library")

    def abstract_eval(aval, *, axes):
        if aval.dtype.kind == "c":
            raise TypeError(f"{name} is not defined for complex values")
        if any(aval.shape[a] == 0 for a in axes if 0 <= a < aval.ndim):
            raise ValueError(f"{name}: reduction over an axis of size 0 (shape {aval.shape})")
        return reduced_aval(name, aval, axes)

    impl_rules[prim] = lambda x, *, axes: getattr(array_module(x), numpy_name)(x, axis=axes)
    abstract_eval_rules[prim] = abstract_eval
    ad.jvp_rules[prim] = _reduce_chooser_jvp(prim)
    batching.batching_rules[prim] = reduction_batcher(prim)
    return prim


reduce_max_p = _chooser("reduce_max", "max")
reduce_min_p = _chooser("reduce_min", "min")
# jit's fusion may end an elementwise loop with them (NumPy's NaN semantics)
codegen.deflowering(reduce_max_p, reduction="max", rows=codegen.rows_reduction("max"))
codegen.deflowering(reduce_min_p, reduction="min", rows=codegen.rows_reduction("min"))


def reduce_max(operand, axes: Sequence[int]):
    """Maximum of ``operand`` over the given axes.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_max(np.array([[1.0, 7.0], [4.0, 2.0]]), (0,))
    array([4., 7.])
    """
    axes = normalize_axes(axes, len(shape_of(operand)))
    return reduce_max_p.bind(operand, axes=axes) if axes else operand


def reduce_min(operand, axes: Sequence[int]):
    """Minimum of ``operand`` over the given axes.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_min(np.array([[1.0, 7.0], [4.0, 2.0]]), (0,))
    array([1., 2.])
    """
    axes = normalize_axes(axes, len(shape_of(operand)))
    return reduce_min_p.bind(operand, axes=axes) if axes else operand


# -- argmax / argmin -----------------------------------------------------------------------


def _arg_chooser(name: str, numpy_name: str) -> Primitive:
    prim = Primitive(name, origin="library")

    def abstract_eval(aval, *, axes, index_dtype):
        (axis,) = axes
        if aval.shape[axis] == 0:
            raise ValueError(f"{name}: empty axis {axis} (shape {aval.shape})")
        return reduced_aval(name, aval, axes).update(dtype=index_dtype, weak_type=False)

    def impl(x, *, axes, index_dtype):
        return getattr(array_module(x), numpy_name)(x, axis=axes[0]).astype(index_dtype)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    ad.defjvp_zero(prim)
    batching.batching_rules[prim] = reduction_batcher(prim)
    # on chunks of rows (codegen's "Row regions"): along another axis than the rows
    codegen.deflowering(prim, rows=lambda n, in_avals, out_aval, *, axes, index_dtype: (
        ("rows", ()) if codegen.rowed(in_avals[0], n)
        and not codegen.along(0, axes, in_avals[0]) else None))
    return prim


argmax_p = _arg_chooser("argmax", "argmax")
argmin_p = _arg_chooser("argmin", "argmin")


def argmax(operand, axis: int, index_dtype=np.int64):
    """Index of the (first) maximum along ``axis``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.argmax(np.array([[1.0, 7.0, 7.0], [4.0, 2.0, 0.0]]), axis=1)
    array([1, 0])
    """
    axis = normalize_axis(axis, len(shape_of(operand)))
    return argmax_p.bind(operand, axes=(axis,), index_dtype=np.dtype(index_dtype))


def argmin(operand, axis: int, index_dtype=np.int64):
    """Index of the (first) minimum along ``axis``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.argmin(np.array([[1.0, 7.0, 7.0], [4.0, 2.0, 0.0]]), axis=1)
    array([0, 2])
    """
    axis = normalize_axis(axis, len(shape_of(operand)))
    return argmin_p.bind(operand, axes=(axis,), index_dtype=np.dtype(index_dtype))




# -- reduce_and / reduce_or / reduce_xor ---------------------------------------------------


def _bitwise_reduce_impl(op: str):
    # Halving rounds of the elementwise operation over the reduced axes moved last and
    # flattened: ceil(log2 n) whole-array steps in any array library (CuPy and dask have no
    # ``bitwise_and.reduce``).
    def impl(x, *, axes):
        xp = array_module(x)
        x = xp.asarray(x)
        kept = [i for i in range(x.ndim) if i not in axes]
        out_shape = tuple(x.shape[i] for i in kept)
        n = 1
        for a in axes:
            n *= x.shape[a]
        if n == 0:  # the operation's identity: all bits set for and, none for or and xor
            fill = 0
            if op == "and":
                fill = True if x.dtype == np.bool_ else np.iinfo(x.dtype).max if (
                    x.dtype.kind == "u") else -1
            return xp.full(out_shape, fill, dtype=x.dtype)
        y = xp.transpose(x, kept + list(axes)).reshape(out_shape + (n,))
        combine = getattr(xp, "bitwise_" + op)
        while n > 1:
            half = n // 2
            head = combine(y[..., :half], y[..., half:2 * half])
            y = xp.concatenate([head, y[..., 2 * half:]], axis=-1) if n % 2 else head
            n = half + n % 2
        return y[..., 0]
    return impl


def _bitwise_reduction(name: str, op: str) -> Primitive:
    prim = Primitive(name, origin="library")

    def abstract_eval(aval, *, axes):
        if aval.dtype.kind not in "biu":
            raise TypeError(f"{name}: operand must be boolean or integer, got {aval.dtype}")
        return reduced_aval(name, aval, axes)

    impl_rules[prim] = _bitwise_reduce_impl(op)
    abstract_eval_rules[prim] = abstract_eval
    ad.defjvp_zero(prim)
    batching.batching_rules[prim] = reduction_batcher(prim)
    return prim


reduce_and_p = _bitwise_reduction("reduce_and", "and")
reduce_or_p = _bitwise_reduction("reduce_or", "or")
reduce_xor_p = _bitwise_reduction("reduce_xor", "xor")


def _bitwise_reduce(prim: Primitive, operand, axes: Sequence[int]):
    aval = get_aval(operand)
    axes = normalize_axes(axes, aval.ndim)
    if not axes:  # nothing reduced: only the type is checked
        abstract_eval_rules[prim](aval, axes=())
        return operand
    return prim.bind(operand, axes=axes)


def reduce_and(operand, axes: Sequence[int]):
    """Bitwise and of the elements of a boolean or integer ``operand`` over the given axes
    (over none: ``operand`` itself; over an empty axis: all bits set); the dtype is kept.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_and(np.array([[1, 3], [6, 5]]), (1,))
    array([1, 4])
    """
    return _bitwise_reduce(reduce_and_p, operand, axes)


def reduce_or(operand, axes: Sequence[int]):
    """Bitwise or of the elements of a boolean or integer ``operand`` over the given axes
    (over none: ``operand`` itself); the dtype is kept.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_or(np.array([[1, 3], [6, 5]]), (1,))
    array([3, 7])
    """
    return _bitwise_reduce(reduce_or_p, operand, axes)


def reduce_xor(operand, axes: Sequence[int]):
    """Bitwise exclusive or of the elements of a boolean or integer ``operand`` over the
    given axes (over none: ``operand`` itself); the dtype is kept.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_xor(np.array([[1, 3], [6, 5]]), (1,))
    array([2, 3])
    """
    return _bitwise_reduce(reduce_xor_p, operand, axes)
