"""Slicing primitives: slice, pad and concatenate.  All are linear (pad in the operand and
the padding value together) and transpose into each other: slice into pad, pad and
concatenate into slices.  Pad's rules need arithmetic, so this family lives above the
elementwise one."""
from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from functrans import backend, core
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import eq, select, sub
from functrans.primitives.shape import (as_operand, bdim_to_front, moveaxis, reduce_sum,
                                        reshape, shape_of)

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["concatenate", "pad", "slice"]

# -- slice ---------------------------------------------------------------------------------

slice_p = Primitive("slice", origin="library")


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (lax's name)
    """The static slice ``x[start:limit:stride, ...]`` (non-negative, in-bounds indices).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.slice(np.arange(10), (1,), (8,), (3,))
    array([1, 4, 7])
    """
    start = tuple(int(i) for i in start_indices)
    limit = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else tuple(
        int(s) for s in strides)
    if start == (0,) * len(start) and limit == shape_of(operand) and strides is None:
        return operand
    return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def _slice_abstract_eval(aval, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * aval.ndim
    if not len(start_indices) == len(limit_indices) == len(strides) == aval.ndim:
        raise ValueError(f"slice: got {len(start_indices)} start indices, {len(limit_indices)} "
                         f"limit indices and {len(strides)} strides for an array of shape "
                         f"{aval.shape}")
    for i, (s, l, st, n) in enumerate(zip(start_indices, limit_indices, strides, aval.shape)):
        if not 0 <= s <= l <= n or st < 1:
            raise ValueError(f"slice: axis {i} of size {n} cannot be sliced with start {s}, "
                             f"limit {l}, stride {st}")
    shape = [-(-(l - s) // st) for s, l, st in zip(start_indices, limit_indices, strides)]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return x[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]



def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    config = []
    for s, l, st, n, m in zip(start_indices, limit_indices, strides, x.aval.shape, shape_of(ct)):
        used = s + (m - 1) * st + 1 if m else s
        config.append((s, n - used, st - 1 if m > 1 else 0))
    zero = np.zeros((), get_aval(ct).dtype)[()]  # a NumPy scalar: no array on the host
    return [pad(ct, zero, config)]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bd,) = vals, dims
    n = shape_of(x)[bd]
    strides = None if strides is None else strides[:bd] + (1,) + strides[bd:]
    return slice_p.bind(x, start_indices=start_indices[:bd] + (0,) + start_indices[bd:],
                        limit_indices=limit_indices[:bd] + (n,) + limit_indices[bd:],
                        strides=strides), bd


impl_rules[slice_p] = _slice_impl


def _pad_rows(n, in_avals, out_aval, *, padding_config):
    # on chunks of rows (codegen's "Row regions"): no padding along the rows
    ok = codegen.rowed(in_avals[0], n) and tuple(padding_config[0]) == (0, 0, 0)
    return ("rows", ()) if ok else None


def _concatenate_rows(n, in_avals, out_aval, *, dimension):
    # on chunks of rows: along another axis, of rowed operands
    ok = (not codegen.along(0, (dimension,), out_aval)
          and all(codegen.rowed(a, n) for a in in_avals))
    return ("rows", ()) if ok else None


# on chunks of rows (codegen's "Row regions"): all of the rows, each chunk's end its own
codegen.deflowering(slice_p, rows=lambda n, in_avals, out_aval, *, start_indices,
                    limit_indices, strides: (
    ("rows", ("limit_indices",)) if codegen.rowed(in_avals[0], n) and start_indices[0] == 0
    and limit_indices[0] == n and (strides is None or strides[0] == 1) else None))
abstract_eval_rules[slice_p] = _slice_abstract_eval
transpose.deflinear(slice_p, _slice_transpose)
batching.batching_rules[slice_p] = _slice_batch

# -- pad -----------------------------------------------------------------------------------

pad_p = Primitive("pad", origin="library")


def pad(operand, padding_value, padding_config):
    """Pad ``operand`` with the scalar ``padding_value``: per axis ``(low, high, interior)``
    elements before, after and between the elements (all non-negative).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.pad(np.array([1.0, 2.0]), 0.0, [(1, 2, 1)])
    array([0., 1., 0., 2., 0., 0.])
    """
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=config)


def _pad_abstract_eval(aval, pad_aval, *, padding_config):
    if pad_aval.shape != ():
        raise TypeError(f"pad: padding_value must be a scalar, got shape {pad_aval.shape}")
    if len(padding_config) != aval.ndim:
        raise ValueError(f"pad: {len(padding_config)} (low, high, interior) triples for an "
                         f"array of rank {aval.ndim}")
    if any(v < 0 for c in padding_config for v in c):
        raise ValueError(f"pad: negative padding {padding_config} is not supported; slice "
                         "the array instead")
    shape = [lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(padding_config, aval.shape)]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _interior_slices(padding_config, shape):
    return tuple(builtins.slice(lo, lo + max(n - 1, 0) * (i + 1) + 1 if n else lo, i + 1)
                 for (lo, _, i), n in zip(padding_config, shape))


def _pad_impl(x, padding_value, *, padding_config):
    xp = array_module(x, padding_value)
    x, padding_value = coerce(xp, as_operand(x, xp), padding_value)
    shape = [lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(padding_config, x.shape)]
    out = backend.full(shape, padding_value, x.dtype, like=x)
    if x.size:  # nothing to write (dask refuses to assign an empty array)
        out[_interior_slices(padding_config, x.shape)] = x
    return out


def _unpad(ct, padding_config, operand_shape):
    lo = [s.start for s in _interior_slices(padding_config, operand_shape)]
    hi = [s.stop for s in _interior_slices(padding_config, operand_shape)]
    return slice(ct, lo, hi, [i + 1 for _, _, i in padding_config])


def _pad_transpose(ct, x, v, *, padding_config):
    operand_shape = x.aval.shape if is_undefined_primal(x) else shape_of(x)
    ct_x = _unpad(ct, padding_config, operand_shape)
    ct_v = None
    if is_undefined_primal(v):
        axes = tuple(range(len(operand_shape)))
        ct_v = sub(reduce_sum(ct, axes), reduce_sum(ct_x, axes))
        ct_v = convert_element_type(ct_v, v.aval.dtype, v.aval.weak_type)
    return [ct_x if is_undefined_primal(x) else None, ct_v]


def _pad_batch(vals, dims, *, padding_config):
    (x, v), (bx, bv) = vals, dims
    size = shape_of(x)[bx] if bx is not not_mapped else shape_of(v)[bv]
    x = bdim_to_front(x, bx, size)
    config = ((0, 0, 0),) + padding_config
    if bv is not_mapped:
        return pad_p.bind(x, v, padding_config=config), 0
    # A batched padding value: pad with zeros, then select the padding positions per member.
    zero = np.zeros((), get_aval(x).dtype)[()]  # a NumPy scalar: no array on the host
    padded = pad_p.bind(x, zero, padding_config=config)
    inside = eq(ad.zeros(get_aval(x).update(shape=shape_of(x)[1:]), x), zero)  # all True
    mask = pad_p.bind(inside, False, padding_config=padding_config)
    v = reshape(moveaxis(v, bv, 0), (size,) + (1,) * len(padding_config))
    return select(mask, padded, v), 0


impl_rules[pad_p] = _pad_impl
codegen.deflowering(pad_p, rows=_pad_rows)
abstract_eval_rules[pad_p] = _pad_abstract_eval
transpose.deflinear(pad_p, _pad_transpose)
batching.batching_rules[pad_p] = _pad_batch

# -- concatenate ---------------------------------------------------------------------------

concatenate_p = Primitive("concatenate", origin="library")


def concatenate(operands: Sequence, dimension: int):
    """Join arrays along an existing axis ``dimension``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.concatenate([np.array([1.0]), np.array([2.0, 3.0])], 0)
    array([1., 2., 3.])
    """
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_abstract_eval(*avals, dimension):
    if not avals:
        raise ValueError("concatenate: need at least one operand")
    first = avals[0]
    if not 0 <= dimension < first.ndim:
        raise ValueError(f"concatenate: dimension {dimension} out of range for rank "
                         f"{first.ndim}")
    for a in avals:
        if a.ndim != first.ndim or any(m != n for i, (m, n) in enumerate(zip(a.shape, first.shape))
                                       if i != dimension):
            raise TypeError(f"concatenate: operand shapes {[x.shape for x in avals]} must agree "
                            f"except along dimension {dimension}")
    dtype, weak = core.result_type(*avals)
    shape = list(first.shape)
    shape[dimension] = sum(a.shape[dimension] for a in avals)
    return ShapedArray(shape, dtype, weak)


def _concatenate_impl(*xs, dimension):
    xp = array_module(*xs)
    xs = [as_operand(x, xp) for x in coerce(xp, *xs)]
    return xp.concatenate(xs, axis=dimension)


def _concatenate_transpose(ct, *xs, dimension):
    cts, offset = [], 0
    ct_shape = shape_of(ct)
    for x in xs:
        aval = x.aval if is_undefined_primal(x) else get_aval(x)
        n = aval.shape[dimension]
        if is_undefined_primal(x):
            start = [0] * len(ct_shape)
            limit = list(ct_shape)
            start[dimension], limit[dimension] = offset, offset + n
            cts.append(convert_element_type(slice(ct, start, limit), aval.dtype, aval.weak_type))
        else:
            cts.append(None)
        offset += n
    return cts


def _concatenate_batch(vals, dims, *, dimension):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    xs = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


impl_rules[concatenate_p] = _concatenate_impl
def _concatenate_numbers(n, in_avals, out_aval, facts, *, dimension):
    # the operands' facts side by side: along the last axis, the columns they number
    if all(f is None for f in facts) or _concatenate_rows(
            n, in_avals, out_aval, dimension=dimension) is None:
        return None
    if all(f == codegen.ROW_NUMBERS for f in facts):
        return codegen.ROW_NUMBERS
    if dimension % len(out_aval.shape) != len(out_aval.shape) - 1:
        return None
    columns, offset = set(), 0
    for aval, fact in zip(in_avals, facts):
        columns.update(offset + c for c in codegen.row_columns(fact, aval))
        offset += aval.shape[-1]
    return frozenset(columns) or None


codegen.deflowering(concatenate_p, rows=_concatenate_rows, numbers=_concatenate_numbers)
abstract_eval_rules[concatenate_p] = _concatenate_abstract_eval
transpose.deflinear(concatenate_p, _concatenate_transpose)
batching.batching_rules[concatenate_p] = _concatenate_batch
