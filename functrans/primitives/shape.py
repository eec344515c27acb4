"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, expand_dims, slice, pad,
concatenate and rev.  All are linear; each transposes to another one of this family."""
from __future__ import annotations

import builtins
import math
from typing import Sequence

import numpy as np

from functrans import core
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal


def shape_of(x) -> tuple:
    return x.shape if type(x) is np.ndarray else get_aval(x).shape


def ndim_of(x) -> int:
    return x.ndim if type(x) is np.ndarray else len(get_aval(x).shape)


def _asarray(x):
    return array_module(x).asarray(x) if core.is_python_scalar(x) or isinstance(
        x, np.generic) else x


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    if not -ndim <= axis < max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise ValueError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim if ndim else 0


# -- broadcast_in_dim ----------------------------------------------------------------------

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(x, shape: Sequence[int], broadcast_dimensions: Sequence[int]):
    """Broadcast ``x`` to ``shape``; operand axis ``i`` becomes output axis
    ``broadcast_dimensions[i]`` (size 1 or equal), the other output axes are new."""
    shape, dims = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    if shape_of(x) == shape and dims == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast(x, sizes: Sequence[int]):
    """Prepend new axes of the given sizes (``lax.broadcast``)."""
    sizes = tuple(sizes)
    nd = ndim_of(x)
    return broadcast_in_dim(x, sizes + shape_of(x), tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to(x, shape: Sequence[int]):
    """NumPy-style broadcasting of ``x`` to ``shape`` (trailing axes aligned)."""
    shape = tuple(shape)
    nd = ndim_of(x)
    if nd > len(shape):
        raise ValueError(f"cannot broadcast an array of shape {shape_of(x)} to shape {shape}")
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - nd, len(shape))))


def _broadcast_in_dim_abstract_eval(aval, *, shape, broadcast_dimensions):
    dims = broadcast_dimensions
    if len(dims) != aval.ndim or any(not 0 <= d < len(shape) for d in dims) or any(
            a >= b for a, b in zip(dims, dims[1:])):
        raise ValueError(f"broadcast_in_dim: broadcast_dimensions {dims} must be increasing "
                         f"axes of the output shape {shape}, one per operand axis "
                         f"(operand shape {aval.shape})")
    for i, d in enumerate(dims):
        if aval.shape[i] not in (1, shape[d]):
            raise ValueError(f"broadcast_in_dim: operand of shape {aval.shape} cannot be "
                             f"broadcast to {shape}: its axis {i} has size {aval.shape[i]}, "
                             f"output axis {d} has size {shape[d]}")
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = _asarray(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return array_module(x).broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    operand_shape = x.aval.shape
    summed = [d for d in range(len(shape)) if d not in broadcast_dimensions] + [
        d for i, d in enumerate(broadcast_dimensions) if operand_shape[i] == 1 and shape[d] != 1]
    from functrans.primitives.reductions import reduce_sum
    return [reshape(reduce_sum(ct, sorted(summed)), operand_shape)]


def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions):
    (x,), (bd,) = vals, dims
    x = moveaxis(x, bd, 0)
    return broadcast_in_dim_p.bind(
        x, shape=(shape_of(x)[0],) + shape,
        broadcast_dimensions=(0,) + tuple(d + 1 for d in broadcast_dimensions)), 0


impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl
abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract_eval
transpose.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
batching.batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch

# -- reshape -------------------------------------------------------------------------------

reshape_p = Primitive("reshape")


def reshape(x, new_sizes: Sequence[int]):
    """Reshape ``x`` (row-major) to ``new_sizes``."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if shape_of(x) == new_sizes:
        return x
    return reshape_p.bind(x, new_sizes=new_sizes)


def _reshape_abstract_eval(aval, *, new_sizes):
    if math.prod(new_sizes) != aval.size or any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape: cannot reshape an array of shape {aval.shape} "
                        f"({aval.size} elements) to shape {new_sizes}")
    return ShapedArray(new_sizes, aval.dtype, aval.weak_type)


def _reshape_batch(vals, dims, *, new_sizes):
    (x,), (bd,) = vals, dims
    x = moveaxis(x, bd, 0)
    return reshape_p.bind(x, new_sizes=(shape_of(x)[0],) + new_sizes), 0


impl_rules[reshape_p] = lambda x, *, new_sizes: array_module(x).reshape(x, new_sizes)
abstract_eval_rules[reshape_p] = _reshape_abstract_eval
transpose.deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])
batching.batching_rules[reshape_p] = _reshape_batch

# -- transpose -----------------------------------------------------------------------------

transpose_p = Primitive("transpose")


def transpose_axes(x, permutation: Sequence[int]):
    """Permute the axes of ``x``: output axis ``i`` is input axis ``permutation[i]``."""
    permutation = tuple(map(int, permutation))
    if permutation == tuple(range(len(permutation))):
        return x
    return transpose_p.bind(x, permutation=permutation)


def moveaxis(x, source: int, destination: int):
    if source == destination:
        return x
    perm = [i for i in range(ndim_of(x)) if i != source]
    perm.insert(destination, source)
    return transpose_axes(x, perm)


def _transpose_abstract_eval(aval, *, permutation):
    if sorted(permutation) != list(range(aval.ndim)):
        raise ValueError(f"transpose: permutation {permutation} is not a permutation of the "
                         f"axes of an array of shape {aval.shape}")
    return ShapedArray([aval.shape[p] for p in permutation], aval.dtype, aval.weak_type)


def _transpose_batch(vals, dims, *, permutation):
    (x,), (bd,) = vals, dims
    physical = [p + (p >= bd) for p in permutation]
    return transpose_p.bind(x, permutation=(bd, *physical)), 0


impl_rules[transpose_p] = lambda x, *, permutation: array_module(x).transpose(x, permutation)
abstract_eval_rules[transpose_p] = _transpose_abstract_eval
transpose.deflinear(transpose_p, lambda ct, x, *, permutation: [
    transpose_axes(ct, tuple(int(i) for i in np.argsort(permutation)))])
batching.batching_rules[transpose_p] = _transpose_batch

# -- squeeze / expand_dims -----------------------------------------------------------------

squeeze_p = Primitive("squeeze")
expand_dims_p = Primitive("expand_dims")


def squeeze(x, dimensions: Sequence[int]):
    """Remove the given axes, each of size 1."""
    nd = ndim_of(x)
    dims = tuple(sorted({normalize_axis(d, nd) for d in dimensions}))
    return squeeze_p.bind(x, dimensions=dims) if dims else x


def expand_dims(x, dimensions: Sequence[int]):
    """Insert axes of size 1 at the given positions of the output."""
    out_nd = ndim_of(x) + len(dimensions)
    dims = tuple(sorted({normalize_axis(d, out_nd) for d in dimensions}))
    return expand_dims_p.bind(x, dimensions=dims) if dims else x


def _squeeze_abstract_eval(aval, *, dimensions):
    for d in dimensions:
        if not 0 <= d < aval.ndim or aval.shape[d] != 1:
            raise ValueError(f"squeeze: axis {d} of an array of shape {aval.shape} is not of "
                             "size 1")
    shape = [n for i, n in enumerate(aval.shape) if i not in dimensions]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _expand_dims_abstract_eval(aval, *, dimensions):
    shape = list(aval.shape)
    for d in dimensions:
        shape.insert(d, 1)
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def _axes_batch(prim):
    def rule(vals, dims, *, dimensions):
        (x,), (bd,) = vals, dims
        x = moveaxis(x, bd, 0)
        return prim.bind(x, dimensions=tuple(d + 1 for d in dimensions)), 0
    return rule


impl_rules[squeeze_p] = lambda x, *, dimensions: array_module(x).squeeze(x, axis=dimensions)
impl_rules[expand_dims_p] = lambda x, *, dimensions: array_module(x).expand_dims(x, dimensions)
abstract_eval_rules[squeeze_p] = _squeeze_abstract_eval
abstract_eval_rules[expand_dims_p] = _expand_dims_abstract_eval
for _p in (squeeze_p, expand_dims_p):
    transpose.deflinear(_p, lambda ct, x, **_: [reshape(ct, x.aval.shape)])
    batching.batching_rules[_p] = _axes_batch(_p)

# -- slice ---------------------------------------------------------------------------------

slice_p = Primitive("slice")


def slice(x, start_indices, limit_indices, strides=None):  # noqa: A001 (lax's name)
    """The static slice ``x[start:limit:stride, ...]`` (non-negative, in-bounds indices)."""
    start = tuple(int(i) for i in start_indices)
    limit = tuple(int(i) for i in limit_indices)
    strides = None if strides is None or all(s == 1 for s in strides) else tuple(
        int(s) for s in strides)
    if start == (0,) * len(start) and limit == shape_of(x) and strides is None:
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


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
    return x[tuple(_pyslice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


_pyslice = builtins.slice


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    config = []
    for s, l, st, n, m in zip(start_indices, limit_indices, strides, x.aval.shape, shape_of(ct)):
        used = s + (m - 1) * st + 1 if m else s
        config.append((s, n - used, st - 1 if m > 1 else 0))
    zero = np.zeros((), ct.dtype if hasattr(ct, "dtype") else get_aval(ct).dtype)
    return [pad(ct, zero, config)]


def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bd,) = vals, dims
    n = shape_of(x)[bd]
    strides = None if strides is None else strides[:bd] + (1,) + strides[bd:]
    return slice_p.bind(x, start_indices=start_indices[:bd] + (0,) + start_indices[bd:],
                        limit_indices=limit_indices[:bd] + (n,) + limit_indices[bd:],
                        strides=strides), bd


impl_rules[slice_p] = _slice_impl
abstract_eval_rules[slice_p] = _slice_abstract_eval
transpose.deflinear(slice_p, _slice_transpose)
batching.batching_rules[slice_p] = _slice_batch

# -- pad -----------------------------------------------------------------------------------

pad_p = Primitive("pad")


def pad(x, padding_value, padding_config):
    """Pad ``x`` with the scalar ``padding_value``: per axis ``(low, high, interior)``
    elements before, after and between the elements (all non-negative)."""
    config = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return pad_p.bind(x, padding_value, padding_config=config)


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
    return tuple(_pyslice(lo, lo + max(n - 1, 0) * (i + 1) + 1 if n else lo, i + 1)
                 for (lo, _, i), n in zip(padding_config, shape))


def _pad_impl(x, padding_value, *, padding_config):
    x = _asarray(x)
    xp = array_module(x, padding_value)
    x, padding_value = coerce(xp, x, padding_value)
    shape = [lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(padding_config, x.shape)]
    out = xp.full(shape, padding_value, dtype=x.dtype)
    out[_interior_slices(padding_config, x.shape)] = x
    return out


def _unpad(ct, padding_config, operand_shape):
    lo = [s.start for s in _interior_slices(padding_config, operand_shape)]
    hi = [s.stop for s in _interior_slices(padding_config, operand_shape)]
    return slice(ct, lo, hi, [i + 1 for _, _, i in padding_config])


def _pad_transpose(ct, x, v, *, padding_config):
    from functrans.primitives.conversion import convert_element_type
    from functrans.primitives.elementwise import sub
    from functrans.primitives.reductions import reduce_sum
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
    from functrans.primitives.elementwise import select
    zero = np.zeros((), get_aval(x).dtype)
    padded = pad_p.bind(x, zero, padding_config=config)
    mask = pad_p.bind(np.ones(shape_of(x)[1:], bool), False, padding_config=padding_config)
    v = reshape(moveaxis(v, bv, 0), (size,) + (1,) * len(padding_config))
    return select(mask, padded, v), 0


impl_rules[pad_p] = _pad_impl
abstract_eval_rules[pad_p] = _pad_abstract_eval
transpose.deflinear(pad_p, _pad_transpose)
batching.batching_rules[pad_p] = _pad_batch

# -- concatenate ---------------------------------------------------------------------------

concatenate_p = Primitive("concatenate")


def concatenate(operands: Sequence, dimension: int):
    """Join arrays along an existing axis ``dimension``."""
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
    xs = [_asarray(x) for x in coerce(xp, *xs)]
    return xp.concatenate(xs, axis=dimension)


def _concatenate_transpose(ct, *xs, dimension):
    from functrans.primitives.conversion import convert_element_type
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
abstract_eval_rules[concatenate_p] = _concatenate_abstract_eval
transpose.deflinear(concatenate_p, _concatenate_transpose)
batching.batching_rules[concatenate_p] = _concatenate_batch

# -- rev -----------------------------------------------------------------------------------

rev_p = Primitive("rev")


def rev(x, dimensions: Sequence[int]):
    """Reverse the order of elements along the given axes."""
    dims = tuple(sorted({normalize_axis(d, ndim_of(x)) for d in dimensions}))
    return rev_p.bind(x, dimensions=dims) if dims else x


impl_rules[rev_p] = lambda x, *, dimensions: array_module(x).flip(x, axis=dimensions)
abstract_eval_rules[rev_p] = lambda aval, *, dimensions: aval
transpose.deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])
batching.batching_rules[rev_p] = lambda vals, dims, *, dimensions: (
    rev_p.bind(vals[0], dimensions=tuple(d + (d >= dims[0]) for d in dimensions)), dims[0])


# -- batching helpers ----------------------------------------------------------------------


def bdim_to_front(x, bdim, size: int):
    """``x`` with its batch axis first; an unbatched ``x`` is broadcast to ``size`` copies."""
    if bdim is not_mapped:
        return broadcast(x, (size,))
    return moveaxis(x, bdim, 0)
