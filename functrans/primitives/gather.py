"""Gather and scatter-add: reading and accumulating at integer positions; and ``iota``.

The one form used here, for an operand of shape ``(d0, ..., d{k-1}, *rest)``:

* ``indices`` has shape ``(*batch, k)``: its last axis holds one position in the first ``k``
  axes of the operand, and its other axes (``batch``) are free;
* ``gather(operand, indices)`` has shape ``(*batch, *rest)``: entry ``b`` is the slice
  ``operand[indices[b, 0], ..., indices[b, k-1]]`` (all of ``rest``);
* ``scatter_add(operand, indices, updates)``, with ``updates`` of shape ``(*batch, *rest)``,
  is a copy of ``operand`` with every ``updates[b]`` added at the position ``indices[b]``;
  positions that repeat accumulate (the sum of their updates is added).

NumPy's advanced indexing ``x[i, j]`` is ``gather(x, stack([i, j], -1))`` once the indexed
axes are moved to the front (``functrans.numpy`` does this).  Out-of-bounds positions are
clamped into range (``i`` below 0 reads 0, above ``d - 1`` reads ``d - 1``), which is JAX's
default for gathers; negative positions are not wrapped here (``x[-1]`` is wrapped by
``functrans.numpy`` before it gets here).  Scatter-add clamps the same way, so that it is
exactly the transpose of gather: a cotangent flows back to the element that was read.

Gather is linear in the operand and transposes to scatter-add; scatter-add is linear in the
operand and the updates (the operand's cotangent passes through, the updates' is a gather).
Batching adds the batch axis to the form rather than looping: a batched operand alone keeps
its batch axis among ``rest``; batched indices alone add a ``batch`` axis; both batched put
an ``iota`` column in front of the positions, so batch member ``b`` reads its own operand.
"""
from __future__ import annotations

import builtins

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.shape import (bdim_to_front, broadcast_in_dim, moveaxis, ndim_of,
                                        shape_of)
from functrans.primitives.slicing import concatenate

__all__ = ["gather_p", "scatter_add_p", "iota_p", "gather", "scatter_add", "iota",
           "with_batch_column"]

gather_p = Primitive("gather")
scatter_add_p = Primitive("scatter_add")
iota_p = Primitive("iota")


# -- iota --------------------------------------------------------------------------------
# Its one operand only picks the device (like zeros_like's): a Python scalar means NumPy.

def iota(dtype, size: int, *, like=None):
    """``0, 1, ..., size - 1`` of ``dtype``, on the device of ``like`` (NumPy when None).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.iota(np.int32, 4)
    array([0, 1, 2, 3], dtype=int32)
    """
    return iota_p.bind(0 if like is None else like, dtype=np.dtype(dtype), size=int(size))


def _iota_impl(like, *, dtype, size):
    return backend.arange(size, dtype=dtype, like=like)


impl_rules[iota_p] = _iota_impl
abstract_eval_rules[iota_p] = lambda like, *, dtype, size: ShapedArray((size,), dtype)
ad.defjvp_zero(iota_p)
transpose.deftranspose(iota_p, lambda ct, like, **params: [None])
batching.batching_rules[iota_p] = lambda vals, dims, **params: (
    iota_p.bind(vals[0], **params), not_mapped)


# -- gather ------------------------------------------------------------------------------

def gather(operand, indices):
    """``out[b] = operand[indices[b, 0], ..., indices[b, k-1]]`` for ``indices`` of shape
    ``(*batch, k)``; positions out of bounds are clamped into range.

    >>> import numpy as np, functrans.lax as lax
    >>> x = np.arange(12.0).reshape(4, 3)
    >>> lax.gather(x, np.array([[3], [0], [3], [9]]))  # rows 3, 0, 3 and (clamped) 3
    array([[ 9., 10., 11.],
           [ 0.,  1.,  2.],
           [ 9., 10., 11.],
           [ 9., 10., 11.]])
    >>> lax.gather(x, np.array([[1, 2], [-5, 0]]))     # elements (1, 2) and (clamped) (0, 0)
    array([5., 0.])
    """
    return gather_p.bind(operand, indices)


def _check_indices(name: str, aval: ShapedArray, indices: ShapedArray) -> int:
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {indices.str_short()}")
    if indices.ndim == 0:
        raise ValueError(f"{name}: indices must have a last axis of positions (shape "
                         f"(*batch, k)), got a scalar; use shape (1,) for one position")
    k = indices.shape[-1]
    if k > aval.ndim:
        raise ValueError(f"{name}: indices of shape {indices.shape} hold {k} positions, but "
                         f"the operand of shape {aval.shape} has only {aval.ndim} axes")
    if builtins.any(d == 0 for d in aval.shape[:k]) and np.prod(indices.shape[:-1]) > 0:
        raise IndexError(f"{name}: cannot index axes of size zero (operand shape "
                         f"{aval.shape}): there is no element to clamp a position to")
    return k


def _gather_abstract_eval(aval, indices):
    k = _check_indices("gather", aval, indices)
    return ShapedArray(indices.shape[:-1] + aval.shape[k:], aval.dtype, aval.weak_type)


def _clamped_positions(xp, indices, dims) -> tuple:
    return tuple(xp.clip(indices[..., j], 0, d - 1) for j, d in enumerate(dims))


def _gather_impl(operand, indices):
    xp = array_module(operand, indices)
    operand, indices = coerce(xp, xp.asarray(operand), indices)
    _check_indices("gather", get_aval(operand), get_aval(indices))  # eager calls too
    k = indices.shape[-1]
    if k == 0:  # no position to pick: every batch entry is the whole operand
        return xp.broadcast_to(operand, indices.shape[:-1] + operand.shape).copy()
    return operand[_clamped_positions(xp, indices, operand.shape[:k])]


def _gather_jvp(primals, tangents):
    operand, indices = primals
    ans = gather_p.bind(operand, indices)
    if type(tangents[0]) is Zero:
        return ans, Zero.from_value(ans)
    return ans, gather_p.bind(tangents[0], indices)


def _gather_transpose(ct, operand, indices):
    assert is_undefined_primal(operand) and not is_undefined_primal(indices)
    zeros = ad.zeros(operand.aval.update(dtype=get_aval(ct).dtype, weak_type=False), ct)
    out = scatter_add_p.bind(zeros, indices, ct)
    return [convert_element_type(out, operand.aval.dtype), None]


def with_batch_column(indices, size: int):
    """Batched ``indices`` of shape ``(size, *batch, k)`` with the batch member's number put
    in front of each position: shape ``(size, *batch, k + 1)``, for an operand whose
    leading axis is that batch."""
    shape = shape_of(indices)
    column = iota(get_aval(indices).dtype, size, like=indices)
    column = broadcast_in_dim(column, shape[:-1] + (1,), (0,))
    return concatenate([column, indices], len(shape) - 1)


def _gather_batch(vals, dims):
    operand, indices = vals
    op_dim, ix_dim = dims
    if ix_dim is not_mapped:  # the batch axis joins `rest`, right after the indexed axes
        k = shape_of(indices)[-1]
        out = gather_p.bind(moveaxis(operand, op_dim, k), indices)
        return out, ndim_of(indices) - 1
    indices = moveaxis(indices, ix_dim, 0)
    if op_dim is not_mapped:  # the batch axis is one more `batch` axis of the indices
        return gather_p.bind(operand, indices), 0
    size = shape_of(indices)[0]
    operand = moveaxis(operand, op_dim, 0)
    return gather_p.bind(operand, with_batch_column(indices, size)), 0


impl_rules[gather_p] = _gather_impl
abstract_eval_rules[gather_p] = _gather_abstract_eval
ad.jvp_rules[gather_p] = _gather_jvp
transpose.deftranspose(gather_p, _gather_transpose)
batching.batching_rules[gather_p] = _gather_batch


# -- scatter_add -------------------------------------------------------------------------

def scatter_add(operand, indices, updates):
    """A copy of ``operand`` with ``updates[b]`` added at ``indices[b]`` for every ``b``
    (shapes as for ``gather``); repeated positions accumulate, out-of-bounds ones are clamped.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_add(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([ 0., 11.,  0.,  2.])
    """
    return scatter_add_p.bind(operand, indices, updates)


def _scatter_add_abstract_eval(aval, indices, updates):
    k = _check_indices("scatter_add", aval, indices)
    expected = indices.shape[:-1] + aval.shape[k:]
    if updates.shape != expected:
        raise ValueError(f"scatter_add: updates must have shape {expected} (the batch axes "
                         f"of indices {indices.shape} and the unindexed axes of the operand "
                         f"{aval.shape}), got {updates.shape}")
    if updates.dtype != aval.dtype:
        raise TypeError(f"scatter_add: updates ({updates.str_short()}) must have the dtype "
                        f"of the operand ({aval.str_short()}); convert them first")
    return aval


def _scatter_add_impl(operand, indices, updates):
    xp = array_module(operand, indices, updates)
    operand, indices, updates = coerce(xp, operand, indices, updates)
    _scatter_add_abstract_eval(get_aval(operand), get_aval(indices), get_aval(updates))
    out = xp.array(operand, copy=True)  # never write into the caller's array
    k = indices.shape[-1]
    if k == 0:
        batch = indices.ndim - 1
        out += xp.sum(updates, axis=tuple(range(batch))) if batch else updates
        return out
    positions = _clamped_positions(xp, indices, out.shape[:k])
    backend.scatter_add(out, positions, xp.asarray(updates, dtype=out.dtype))
    return out


def _scatter_add_jvp(primals, tangents):
    operand, indices, updates = primals
    g_op, g_up = tangents[0], tangents[2]
    ans = scatter_add_p.bind(*primals)
    if type(g_op) is Zero and type(g_up) is Zero:
        return ans, Zero.from_value(ans)
    return ans, scatter_add_p.bind(ad.instantiate(g_op, operand), indices,
                                   ad.instantiate(g_up, updates))


def _scatter_add_transpose(ct, operand, indices, updates):
    assert not is_undefined_primal(indices)
    ct_operand = ct if is_undefined_primal(operand) else None
    ct_updates = None
    if is_undefined_primal(updates):
        ct_updates = convert_element_type(gather_p.bind(ct, indices), updates.aval.dtype)
    return [ct_operand, None, ct_updates]


def _scatter_add_batch(vals, dims):
    operand, indices, updates = vals
    op_dim, ix_dim, up_dim = dims
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    operand = bdim_to_front(operand, op_dim, size)
    updates = bdim_to_front(updates, up_dim, size)
    if ix_dim is not_mapped:  # the batch axis joins `rest` of the operand and the updates
        k, batch = shape_of(indices)[-1], ndim_of(indices) - 1
        out = scatter_add_p.bind(moveaxis(operand, 0, k), indices, moveaxis(updates, 0, batch))
        return out, k
    indices = with_batch_column(moveaxis(indices, ix_dim, 0), size)
    return scatter_add_p.bind(operand, indices, updates), 0


impl_rules[scatter_add_p] = _scatter_add_impl
abstract_eval_rules[scatter_add_p] = _scatter_add_abstract_eval
ad.jvp_rules[scatter_add_p] = _scatter_add_jvp
transpose.deftranspose(scatter_add_p, _scatter_add_transpose)
batching.batching_rules[scatter_add_p] = _scatter_add_batch
