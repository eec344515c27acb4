"""Slicing at traced positions: dynamic_slice and dynamic_update_slice.

Start indices are scalar integer operands (they may be traced) and are clamped so the
slice fits, as in JAX.  Both primitives are linear in their array operands.  Batched arrays
with unbatched starts stay slices (the batch axis is sliced whole); batched starts turn the
slice into a gather (and the update into a scatter) of every element of every member's
block, one call for the whole batch.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import add, lt, max, min, select
from functrans.primitives.gather import gather, scatter
from functrans.primitives.gather import iota
from functrans.primitives.shape import bdim_to_front, broadcast_in_dim, moveaxis, shape_of
from functrans.primitives.slicing import concatenate

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["dynamic_slice", "dynamic_update_slice"]

dynamic_slice_p = Primitive("dynamic_slice", origin="library")
dynamic_update_slice_p = Primitive("dynamic_update_slice", origin="library")


def _from_the_end(starts: Sequence, shape: tuple, name: str) -> list:
    """Negative start indices counted from the end of their axis (JAX's
    ``allow_negative_indices``); the primitives then clamp them so the slice fits."""
    if len(starts) != len(shape):
        raise ValueError(f"{name}: {len(starts)} start indices for an operand of shape "
                         f"{shape}")
    out = []
    for i, n in zip(starts, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            out.append(i + n if i < 0 else i)
        else:
            out.append(select(lt(i, 0), add(i, n), i))
    return out


def dynamic_slice(operand, start_indices: Sequence, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool = True):
    """``operand[i0:i0+s0, i1:i1+s1, ...]`` for (possibly traced) scalar starts ``i``; the
    starts are clamped to keep the slice in bounds, after negative ones count from the end
    (unless ``allow_negative_indices`` is False, as JAX).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_slice(np.arange(10.0), (8,), (3,))  # start clamped to 7
    array([7., 8., 9.])
    >>> lax.dynamic_slice(np.arange(10.0), (-2,), (2,))  # the last two
    array([8., 9.])
    """
    if allow_negative_indices:
        start_indices = _from_the_end(start_indices, shape_of(operand), "dynamic_slice")
    return dynamic_slice_p.bind(operand, *start_indices,
                                slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices: Sequence, *,
                         allow_negative_indices: bool = True):
    """A copy of ``operand`` with ``update`` written at the (clamped) ``start_indices``
    (negative ones count from the end unless ``allow_negative_indices`` is False).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.dynamic_update_slice(np.zeros(5), np.ones(2), (1,))
    array([0., 1., 1., 0., 0.])
    >>> lax.dynamic_update_slice(np.zeros(5), np.ones(2), (-2,))
    array([0., 0., 0., 1., 1.])
    """
    if allow_negative_indices:
        start_indices = _from_the_end(start_indices, shape_of(operand), "dynamic_update_slice")
    return dynamic_update_slice_p.bind(operand, update, *start_indices)


def _check_indices(name: str, aval: ShapedArray, indices) -> None:
    if len(indices) != aval.ndim:
        raise ValueError(f"{name}: {len(indices)} start indices for an operand of shape "
                         f"{aval.shape}")
    for i, idx in enumerate(indices):
        if idx.shape != () or idx.dtype.kind not in "iu":
            raise TypeError(f"{name}: start index {i} must be an integer scalar, got "
                            f"{idx.str_short()}")


def _dynamic_slice_abstract_eval(aval, *indices, slice_sizes):
    _check_indices("dynamic_slice", aval, indices)
    if len(slice_sizes) != aval.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes,
                                                                          aval.shape)):
        raise ValueError(f"dynamic_slice: slice_sizes {slice_sizes} do not fit an operand of "
                         f"shape {aval.shape}")
    return ShapedArray(slice_sizes, aval.dtype, aval.weak_type)


def _clamped_slices(indices, sizes, shape, xp):
    """The block's index: slices when the start indices are on the host; index arrays
    computed on the device when they are device arrays, so that reading them back (a
    synchronisation per index) is never needed."""
    if not any(backend.is_device_array(i) for i in indices):
        return tuple(slice(s, s + n) for s, n in zip(
            (int(np.clip(int(i), 0, d - n)) for i, n, d in zip(indices, sizes, shape)), sizes))
    starts = [xp.clip(i.astype(np.int64), 0, d - n) if backend.is_device_array(i) else
              int(np.clip(int(i), 0, d - n)) for i, n, d in zip(indices, sizes, shape)]
    return xp.ix_(*[s + xp.arange(n) for s, n in zip(starts, sizes)])


def _dynamic_slice_impl(operand, *indices, slice_sizes):
    xp = array_module(operand, *indices)
    operand = xp.asarray(operand)
    return operand[_clamped_slices(indices, slice_sizes, operand.shape, xp)]


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    ans = dynamic_slice_p.bind(*primals, slice_sizes=slice_sizes)
    g = tangents[0]
    if type(g) is Zero:
        return ans, Zero.from_value(ans)
    return ans, dynamic_slice_p.bind(g, *primals[1:], slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, operand, *indices, slice_sizes):
    zeros = ad.zeros(operand.aval.update(dtype=get_aval(ct).dtype, weak_type=False), ct)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _block_positions(starts, batched, dims, size: int, block: Sequence[int]):
    """The positions of every element of each batch member's clamped block: shape
    ``(size, *block, len(block))``, from scalar ``starts`` into axes of sizes ``dims``; the
    ``batched`` ones have shape ``(size,)``, the others stay scalars (no host array)."""
    full = (size, *block, 1)
    witness = next(s for s, b in zip(starts, batched) if b)
    columns = []
    for axis, (start, b, d, n) in enumerate(zip(starts, batched, dims, block)):
        start = max(min(convert_element_type(start, np.int64), d - n), 0)
        offsets = broadcast_in_dim(iota(np.int64, n, like=witness), full, (axis + 1,))
        columns.append(add(broadcast_in_dim(start, full, (0,)), offsets) if b else
                       add(offsets, start))
    return concatenate(columns, len(full) - 1)


def _batched_starts(vals, dims):
    return ([v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(vals, dims)],
            [d is not not_mapped for d in dims])


def _batch_size(vals, dims) -> int:
    return next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)


def _dynamic_slice_batch(vals, dims, *, slice_sizes):
    operand, indices = vals[0], vals[1:]
    size = _batch_size(vals, dims)
    if any(d is not not_mapped for d in dims[1:]):
        starts, batched = _batched_starts(indices, dims[1:])
        if dims[0] is not_mapped:
            positions = _block_positions(starts, batched, shape_of(operand), size, slice_sizes)
            return gather(operand, positions), 0
        operand = moveaxis(operand, dims[0], 0)
        positions = _block_positions(starts, batched, shape_of(operand)[1:], size,
                                     slice_sizes)
        return gather(operand, positions, batch_dims=1), 0
    operand = moveaxis(operand, dims[0], 0)
    return dynamic_slice_p.bind(operand, np.int64(0), *indices,
                                slice_sizes=(size,) + slice_sizes), 0


impl_rules[dynamic_slice_p] = _dynamic_slice_impl
abstract_eval_rules[dynamic_slice_p] = _dynamic_slice_abstract_eval
ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose.deftranspose(dynamic_slice_p, _dynamic_slice_transpose)
batching.batching_rules[dynamic_slice_p] = _dynamic_slice_batch


def _dynamic_update_slice_abstract_eval(aval, update, *indices):
    _check_indices("dynamic_update_slice", aval, indices)
    if update.ndim != aval.ndim or any(u > n for u, n in zip(update.shape, aval.shape)):
        raise ValueError(f"dynamic_update_slice: an update of shape {update.shape} does not "
                         f"fit an operand of shape {aval.shape}")
    return aval


def _dynamic_update_slice_impl(operand, update, *indices):
    xp = array_module(operand, update)
    operand, update = coerce(xp, operand, update)
    out = backend.copy(operand)  # never write into the caller's array
    out[_clamped_slices(indices, xp.shape(update), out.shape, xp)] = update
    return out


def _dynamic_update_slice_jvp(primals, tangents):
    operand, update, *indices = primals
    g_op, g_up = tangents[0], tangents[1]
    ans = dynamic_update_slice_p.bind(*primals)
    if type(g_op) is Zero and type(g_up) is Zero:
        return ans, Zero.from_value(ans)
    return ans, dynamic_update_slice_p.bind(ad.instantiate(g_op, operand),
                                            ad.instantiate(g_up, update), *indices)


def _dynamic_update_slice_transpose(ct, operand, update, *indices):
    update_aval = update.aval if is_undefined_primal(update) else get_aval(update)
    ct_operand = ct_update = None
    if is_undefined_primal(operand):
        zeros = ad.zeros(update_aval.update(dtype=get_aval(ct).dtype, weak_type=False), ct)
        ct_operand = dynamic_update_slice_p.bind(ct, zeros, *indices)
    if is_undefined_primal(update):
        ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
        ct_update = convert_element_type(ct_update, update_aval.dtype)
    return [ct_operand, ct_update] + [None] * len(indices)


def _dynamic_update_slice_batch(vals, dims):
    size = _batch_size(vals, dims)
    operand = bdim_to_front(vals[0], dims[0], size)
    update = bdim_to_front(vals[1], dims[1], size)
    if any(d is not not_mapped for d in dims[2:]):
        starts, batched = _batched_starts(vals[2:], dims[2:])
        positions = _block_positions(starts, batched, shape_of(operand)[1:], size,
                                     shape_of(update)[1:])
        update = convert_element_type(update, get_aval(operand).dtype)
        return scatter(operand, positions, update, batch_dims=1), 0
    return dynamic_update_slice_p.bind(operand, update, np.int64(0), *vals[2:]), 0


impl_rules[dynamic_update_slice_p] = _dynamic_update_slice_impl
abstract_eval_rules[dynamic_update_slice_p] = _dynamic_update_slice_abstract_eval
ad.jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
transpose.deftranspose(dynamic_update_slice_p, _dynamic_update_slice_transpose)
batching.batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch
