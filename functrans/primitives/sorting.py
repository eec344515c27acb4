"""Sorting: ``sort`` over several operands at once (JAX's ``lax.sort``), and what is built on
it (``sort_key_val``, ``top_k``, a stable descending sort, ``take_along``).

``sort_p`` sorts a tuple of equally shaped operands along one ``dimension``: the first
``num_keys`` operands are the keys, compared lexicographically (the first key decides, the
next one breaks its ties, ...), and every operand is permuted the same way.  The order is
NumPy's: NaNs after every number, complex numbers by real then imaginary part, and equal
keys keep their original order (the sort is always stable, whatever ``is_stable`` says).

**Derivative.** Sorting only moves elements, so the tangent of each output is the operand's
tangent gathered by the sorting permutation.  The JVP rule finds that permutation by
sorting one extra operand along, an ``iota`` of positions: the rule stays one ``sort_p``
plus gathers, whose transposes (scatter-adds) give reverse mode.  With ties the derivative
goes where the stable permutation puts each element (an output position receives the
tangent of the element that landed there).

**Batching** moves the batch axis of every operand to the front (broadcasting unbatched
ones) and sorts along ``dimension + 1``.
"""
from __future__ import annotations


import numpy as np

from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.primitives.elementwise import sub
from functrans.primitives.gather import gather, iota
from functrans.primitives.shape import (bdim_to_front, broadcast_in_dim, moveaxis,
                                        normalize_axis, reshape, rev, shape_of)
from functrans.primitives.slicing import slice

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["approx_max_k", "approx_min_k", "sort", "sort_key_val", "top_k"]

sort_p = Primitive("sort", multiple_results=True, origin="library")


def _permutation(xp, keys, axis: int):
    """The stable lexicographic sorting permutation of ``keys`` along ``axis``: one stable
    argsort per key, least significant first (each later sort keeps the earlier order among
    its ties).  Works on any backend with ``argsort`` and ``take_along_axis``."""
    perm = None
    for key in reversed(keys):
        k = key if perm is None else xp.take_along_axis(key, perm, axis)
        p = xp.argsort(k, axis=axis, kind="stable")
        perm = p if perm is None else xp.take_along_axis(perm, p, axis)
    return perm


def _sort_impl(*operands, dimension, is_stable, num_keys):
    xp = array_module(*operands)
    operands = coerce(xp, *operands)
    perm = _permutation(xp, operands[:num_keys], dimension)
    return [xp.take_along_axis(x, perm, dimension) for x in operands]


def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
    if not avals:
        raise TypeError("sort: needs at least one operand")
    shape = avals[0].shape
    if any(a.shape != shape for a in avals):
        raise ValueError("sort: every operand must have the same shape, got "
                         + ", ".join(a.str_short() for a in avals))
    if not 1 <= num_keys <= len(avals):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(avals)})")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort: dimension {dimension} is not an axis of operands of shape "
                         f"{shape}")
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]


def positions_along(x, axis: int, dtype=np.int64):
    """An integer array of ``x``'s shape holding each element's position along ``axis``."""
    shape = shape_of(x)
    return broadcast_in_dim(iota(dtype, shape[axis], like=x), shape, (axis,))


def take_along(x, indices, axis: int):
    """``out[..., j, ...] = x[..., indices[..., j, ...], ...]`` along ``axis``, for
    ``indices`` with ``x``'s shape except (perhaps) along ``axis``: one gather, linear in
    ``x``.  Positions out of range are clamped.

    >>> import numpy as np
    >>> from functrans.primitives.sorting import take_along
    >>> take_along(np.array([[1., 2., 3.], [4., 5., 6.]]), np.array([[2, 0], [1, 1]]), 1)
    array([[3., 1.],
           [5., 5.]])
    """
    last = len(shape_of(x)) - 1
    x, indices = moveaxis(x, axis, last), moveaxis(indices, axis, last)
    lead = shape_of(x)[:-1]  # shared: each row reads its own row
    out = gather(x, reshape(indices, shape_of(indices) + (1,)), batch_dims=len(lead))
    return moveaxis(out, last, axis)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    positions = positions_along(primals[0], dimension)
    *outs, perm = sort_p.bind(*primals, positions, dimension=dimension, is_stable=is_stable,
                              num_keys=num_keys)
    tangents_out = [Zero.from_value(out) if type(t) is Zero else take_along(t, perm, dimension)
                    for out, t in zip(outs, tangents)]
    return outs, tangents_out


def _sort_batch(vals, dims, *, dimension, is_stable, num_keys):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


impl_rules[sort_p] = _sort_impl
abstract_eval_rules[sort_p] = _sort_abstract_eval
# on chunks of rows (codegen's "Row regions"): along another axis, of rowed operands
codegen.deflowering(sort_p, rows=lambda n, in_avals, out_avals, *, dimension, is_stable,
                    num_keys: ("rows", ()) if all(codegen.rowed(a, n) for a in in_avals)
                    and not codegen.along(0, (dimension,), in_avals[0]) else None)
ad.jvp_rules[sort_p] = _sort_jvp
batching.batching_rules[sort_p] = _sort_batch


# -- lax-level functions -----------------------------------------------------------------

def _bind(operands, dimension, is_stable, num_keys):
    avals = [get_aval(x) for x in operands]
    if avals and avals[0].ndim == 0:
        raise ValueError("sort: operands must have at least one axis, got a scalar; reshape "
                         "it to shape (1,) first")
    dimension = normalize_axis(int(dimension), avals[0].ndim, "sort: dimension") if avals else 0
    _sort_abstract_eval(*avals, dimension=dimension, is_stable=bool(is_stable),
                        num_keys=int(num_keys))
    return sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                       num_keys=int(num_keys))


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort ``operand`` along ``dimension``, or a sequence of equally shaped operands by
    their first ``num_keys`` (lexicographically), permuting the others along.  NaNs sort
    last; equal keys keep their order.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.sort(np.array([3., np.nan, 1.]))
    array([ 1.,  3., nan])
    >>> keys, values = lax.sort((np.array([2, 1, 2, 1]), np.array([0., 1., 2., 3.])))
    >>> keys, values
    (array([1, 1, 2, 2]), array([1., 3., 0., 2.]))
    """
    if isinstance(operand, (tuple, list)):
        return tuple(_bind(list(operand), dimension, is_stable, num_keys))
    return _bind([operand], dimension, is_stable, num_keys)[0]


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """``keys`` sorted along ``dimension``, and ``values`` permuted the same way.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.sort_key_val(np.array([3, 1, 2]), np.array([30., 10., 20.]))
    (array([1, 2, 3]), array([10., 20., 30.]))
    """
    return tuple(_bind([keys, values], dimension, is_stable, 1))


def sort_descending(x, axis: int, index_dtype=np.int64):
    """``x`` sorted largest first along ``axis``, and the positions the values came from;
    equal values keep their original order (stable) and NaNs come first.

    The stable ascending sort of the reversed array, reversed again: ties in the reversed
    array are ordered by reversed position, which reversing turns back into original order.

    >>> import numpy as np
    >>> from functrans.primitives.sorting import sort_descending
    >>> sort_descending(np.array([1., 3., 1., 3.]), 0)
    (array([3., 3., 1., 1.]), array([1, 3, 0, 2]))
    """
    n = shape_of(x)[axis]
    values, where = sort_p.bind(rev(x, (axis,)), positions_along(x, axis, index_dtype),
                                dimension=axis, is_stable=True, num_keys=1)
    return rev(values, (axis,)), sub(n - 1, rev(where, (axis,)))


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` (the last by default), largest first, and
    their positions (``int32``, as JAX); equal values are listed lowest position first,
    NaNs count as the largest.  The derivative of the values is the gather of the
    operand's tangent.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.top_k(np.array([1., 4., 2., 4.]), 3)
    (array([4., 4., 2.]), array([1, 3, 2], dtype=int32))
    >>> lax.top_k(np.array([[1., 5.], [3., 2.]]), 1, axis=0)
    (array([[3., 5.]]), array([[1, 0]], dtype=int32))
    """
    return _first_k("top_k", operand, k, axis, descending=True)


def _first_k(name: str, operand, k, axis, descending: bool):
    """The first ``k`` entries along ``axis`` of ``operand`` sorted (stably, NaNs as the
    largest), and their positions as ``int32``: ``top_k``'s and ``approx_min_k``'s."""
    shape = shape_of(operand)
    if not shape:
        raise ValueError(f"{name}: the operand must have at least one axis, got a scalar")
    axis = normalize_axis(int(axis), len(shape), f"{name}: axis")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 0 <= k <= shape[axis]:
        raise ValueError(f"{name}: k must be an integer in [0, {shape[axis]}] (the size of "
                         f"axis {axis} of the operand of shape {shape}), got {k!r}")
    if descending:
        values, indices = sort_descending(operand, axis, np.int32)
    else:
        values, indices = sort((operand, positions_along(operand, axis, np.int32)),
                               dimension=axis)
    limit = list(shape)
    limit[axis] = int(k)
    start = [0] * len(shape)
    return slice(values, start, limit), slice(indices, start, limit)


def approx_max_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """JAX's approximate top-k: here exact (a recall of 1, above any ``recall_target``),
    so it is ``top_k`` along ``reduction_dimension``; the other arguments are accepted for
    JAX's sake (with ``aggregate_to_topk=False`` the result still has ``k`` entries).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.approx_max_k(np.array([1., 4., 2., 4.]), 2)
    (array([4., 4.]), array([1, 3], dtype=int32))
    """
    _check_recall("approx_max_k", recall_target)
    return top_k(operand, k, axis=reduction_dimension)


def approx_min_k(operand, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True):
    """The ``k`` smallest entries along ``reduction_dimension``, smallest first, and their
    positions (``int32``; equal values lowest position first, NaNs last): JAX's
    approximate bottom-k, here exact (see ``approx_max_k``).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.approx_min_k(np.array([3., 1., 2., 1.]), 3)
    (array([1., 1., 2.]), array([1, 3, 2], dtype=int32))
    """
    _check_recall("approx_min_k", recall_target)
    return _first_k("approx_min_k", operand, k, reduction_dimension, descending=False)


def _check_recall(name: str, recall_target) -> None:
    if not 0 < float(recall_target) <= 1:
        raise ValueError(f"{name}: recall_target must be in (0, 1], got {recall_target!r}")
