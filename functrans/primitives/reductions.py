"""Reductions: reduce_max, reduce_min, argmax and argmin over static axes (reduce_sum, the
transpose of broadcast_in_dim, is in ``shape.py``)."""
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
__all__ = ["argmax", "argmin", "reduce_max", "reduce_min"]


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


