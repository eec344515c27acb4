"""Gather and the scatters: reading, writing and combining at integer positions; and
``iota``.

The one form used here, for an operand of shape ``(d0, ..., d{k-1}, *rest)``:

* ``indices`` has shape ``(*batch, k)``: its last axis holds one position in the first ``k``
  axes of the operand, and its other axes (``batch``) are free;
* ``gather(operand, indices)`` has shape ``(*batch, *rest)``: entry ``b`` is the slice
  ``operand[indices[b, 0], ..., indices[b, k-1]]`` (all of ``rest``);
* a scatter, ``scatter*(operand, indices, updates)`` with ``updates`` of shape
  ``(*batch, *rest)``, is a copy of ``operand`` where every ``updates[b]`` is written at the
  position ``indices[b]`` (``scatter``: of repeated positions the last update in row-major
  order wins), added (``scatter_add``: repeats accumulate), multiplied (``scatter_mul``), or
  combined by minimum or maximum (``scatter_min``, ``scatter_max``).

With ``batch_dims=m`` (``tf.gather``'s name; JAX's ``operand_batching_dims``) the first
``m`` axes of the operand and of ``indices`` are shared batch axes, of equal sizes, that
the positions do not index: for an operand ``(*B, d0, ..., d{k-1}, *rest)`` and indices
``(*B, *batch, k)``, entry ``(a, b)`` of the result ``(*B, *batch, *rest)`` reads
``operand[a][indices[a, b]]``, and a scatter writes ``updates[a, b]`` there.  Row ``a`` of
the operand meets row ``a`` of the indices alone, which chunked arrays (dask) and jit's
regions over rows keep chunk by chunk.

NumPy's advanced indexing ``x[i, j]`` is ``gather(x, stack([i, j], -1))`` once the indexed
axes are moved to the front (``functrans.numpy`` does this).  Positions out of bounds follow
JAX's modes: clamped into range by default ("clip", or "promise_in_bounds"); with
``mode="fill"`` a gather reads ``fill_value`` there and with ``mode="drop"`` a scatter
drops the update (each accepts the other's name too).  Negative positions are not wrapped
here (``x[-1]`` is wrapped by ``functrans.numpy`` before it gets here).  A clamping
scatter-add is exactly the transpose of a clamping gather, a dropping one of a filling one.

Gather is linear in the operand and transposes to scatter-add.  ``scatter_add`` and
``scatter`` are linear in (operand, updates) jointly: scatter-add passes the operand's
cotangent through and gathers the updates'; scatter masks the operand's cotangent where it
wrote and gives each update the cotangent of the element it wrote (repeats: only to the
winner).  ``scatter_mul`` is linear in the operand; its derivative in the updates is the
product rule, computed without dividing by zero.  ``scatter_min``/``scatter_max`` give
each result element the mean tangent of every value attaining the extremum there (ties
share, as JAX).  Batching adds the batch axis to the form rather than looping: a batched
operand alone keeps its batch axis among ``rest``; batched indices alone add a ``batch``
axis; both batched make it one more shared batch axis (``batch_dims + 1``), so batch
member ``b`` reads (or writes) its own operand.
"""
from __future__ import annotations

import builtins
import enum
import math
import operator
from typing import NamedTuple

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.primitives.elementwise import (add, bitwise_and, div, eq, ge, gt, le, mul, neg,
                                             select)
from functrans.primitives.elementwise import max as elementwise_max, min as elementwise_min
from functrans.primitives.shape import (bdim_to_front, broadcast_in_dim, expand_dims, moveaxis,
                                        ndim_of, reshape, shape_of)
from functrans.primitives.slicing import concatenate, slice as slicing_slice

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["gather", "GatherDimensionNumbers", "GatherScatterMode", "iota", "scatter",
           "scatter_add", "scatter_apply", "scatter_max", "scatter_min", "scatter_mul",
           "scatter_sub", "ScatterDimensionNumbers"]

gather_p = Primitive("gather", origin="library")
iota_p = Primitive("iota", origin="library")


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
# On chunks of rows (codegen's "Row regions"): an iota over the rows is the rows'
# numbers, which a chunk computes from its first row's (in an integer type that holds them
# all, positions); any other is the same values placed beside every chunk.


def _iota_numbered(n, out_aval) -> bool:
    dtype = np.dtype(out_aval.dtype)
    return (codegen.rowed(out_aval, n) and dtype.kind in "iu"
            and np.iinfo(dtype).max >= n - 1)


codegen.deflowering(
    iota_p,
    rows=lambda n, in_avals, out_aval, **params: (
        ("row_index", ()) if _iota_numbered(n, out_aval) or (
            codegen.rowed(out_aval, n) and np.dtype(out_aval.dtype).kind in "fc")
        else ("same", ())),
    numbers=lambda n, in_avals, out_aval, facts, **params: (
        codegen.ROW_NUMBERS if _iota_numbered(n, out_aval) else None))


# -- modes -------------------------------------------------------------------------------
# JAX's names for what happens to positions out of bounds.  At the primitive level a gather
# either clamps ("clip") or reads `fill_value` ("fill"); a scatter either clamps or drops
# the update ("drop").  The default, clip, is not written into a primitive's params, so
# jaxprs of clamping gathers read as before.

class GatherScatterMode(enum.Enum):
    """JAX's names for what a gather or scatter does with positions out of bounds: ``CLIP``
    clamps them into range; ``FILL_OR_DROP`` reads the fill value (gathers) or drops the
    update (scatters); ``PROMISE_IN_BOUNDS`` promises there are none (here they clamp).
    Every ``mode=`` takes these or their lower-case names ("fill" and "drop" for the
    second)."""
    CLIP = "clip"
    FILL_OR_DROP = "fill_or_drop"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @staticmethod
    def from_any(mode) -> GatherScatterMode:
        """The member for a mode name, a member, or None (``FILL_OR_DROP``, as JAX)."""
        key = mode_name(mode)
        if key in (None, "fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        return GatherScatterMode(key)


_GATHER_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip", "fill": "fill",
                 "drop": "fill", "fill_or_drop": "fill"}
_SCATTER_MODES = {None: "clip", "clip": "clip", "promise_in_bounds": "clip", "drop": "drop",
                  "fill": "drop", "fill_or_drop": "drop"}


def mode_name(mode) -> str | None:
    """``mode`` ("clip", a ``GatherScatterMode``, JAX's enum, None) as a lower-case name."""
    return getattr(mode, "name", mode).lower() if mode is not None else None


def _batch_dims_param(batch_dims, name: str) -> dict:
    """``{"batch_dims": m}`` for ``m`` shared batch axes, ``{}`` for none (the params of a
    gather or scatter without them read as before)."""
    if isinstance(batch_dims, (bool, np.bool_)) or not isinstance(batch_dims,
                                                                   (int, np.integer)):
        raise TypeError(f"{name}: batch_dims must be a non-negative int (the number of "
                        f"leading axes the operand and the indices share), got "
                        f"{batch_dims!r}")
    if batch_dims < 0:
        raise ValueError(f"{name}: batch_dims must be non-negative, got {batch_dims}")
    return {"batch_dims": int(batch_dims)} if batch_dims else {}


def gather_params(mode=None, fill_value=None, *, batch_dims: int = 0,
                  name: str = "gather") -> dict:
    """The params of a ``gather_p`` bind for a JAX ``mode`` ("clip", "promise_in_bounds",
    "fill" or "drop", None for clip), ``fill_value`` and ``batch_dims``."""
    key = mode_name(mode)
    if key not in _GATHER_MODES:
        raise ValueError(f"{name}: mode={mode!r} is not one of 'clip', 'promise_in_bounds', "
                         "'fill' or 'drop'")
    batch = _batch_dims_param(batch_dims, name)
    if _GATHER_MODES[key] == "clip":
        return batch
    return {"mode": "fill", "fill_value": fill_value, **batch}


def scatter_params(mode=None, *, batch_dims: int = 0, name: str = "scatter") -> dict:
    """The params of a scatter bind for a JAX ``mode`` ("clip", "promise_in_bounds", "drop"
    or "fill", None for clip) and ``batch_dims``."""
    key = mode_name(mode)
    if key not in _SCATTER_MODES:
        raise ValueError(f"{name}: mode={mode!r} is not one of 'clip', 'promise_in_bounds', "
                         "'drop' or 'fill'")
    batch = _batch_dims_param(batch_dims, name)
    return batch if _SCATTER_MODES[key] == "clip" else {"mode": "drop", **batch}


def _with_batch_dims(params: dict, m: int) -> dict:
    """``params`` with ``m`` shared batch axes."""
    params = {key: v for key, v in params.items() if key != "batch_dims"}
    return {**params, "batch_dims": m} if m else params


def _fill_value(fill_value, dtype):
    return default_fill_value(dtype) if fill_value is None else fill_value


def default_fill_value(dtype: np.dtype):
    """JAX's fill for gathers out of bounds: NaN for inexact types, the smallest value for
    signed integers, the largest for unsigned ones, True for booleans."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _in_bounds(xp, indices, dims):
    ok = None
    for j, d in enumerate(dims):
        c = (indices[..., j] >= 0) & (indices[..., j] < d)
        ok = c if ok is None else ok & c
    return ok


def _known_in_bounds(xp, indices, dims) -> bool:
    """Whether host ``indices`` are all in bounds, by two reductions per column (no
    temporaries); False on a device, where reading the answer would synchronise."""
    if xp is not np or not indices.size:
        return xp is np
    if len(dims) == 1 and indices.dtype.kind in "iu":  # the common case, in one pass:
        # negative positions read as unsigned are larger than any axis
        return int(indices.view(indices.dtype.str.replace("i", "u")).max()) < dims[0]
    return all(indices[..., j].min() >= 0 and indices[..., j].max() < d
               for j, d in enumerate(dims))


def _clamped_positions(xp, indices, dims) -> tuple:
    return tuple(xp.clip(indices[..., j], 0, builtins.max(d - 1, 0)) for j, d in enumerate(dims))


def _take_rows(xp, operand, positions: tuple):
    """``operand[positions]`` for in-range integer arrays indexing its leading axes, by
    ``take`` along one flattened axis (several times faster than advanced indexing)."""
    k = len(positions)
    if k == 1:
        return xp.take(operand, positions[0], axis=0)
    flat = positions[0]
    for p, d in zip(positions[1:], operand.shape[1:k]):
        flat = flat * d + p
    # the row count spelled out: -1 is ambiguous when a trailing axis has size 0
    rows = xp.reshape(operand, (math.prod(operand.shape[:k]),) + operand.shape[k:])
    return xp.take(rows, flat, axis=0)


# -- gather ------------------------------------------------------------------------------

def gather(operand, start_indices, dimension_numbers=None, slice_sizes=None, *,
           unique_indices: bool = False, indices_are_sorted: bool = False, mode=None,
           fill_value=None, batch_dims: int = 0):
    """Two forms.  With ``dimension_numbers`` (a ``GatherDimensionNumbers``) and
    ``slice_sizes``, JAX's and XLA's general gather: a slice of ``slice_sizes`` read from
    each start in ``start_indices`` (see "Gather and scatter with dimension numbers" in
    docs/jax_names.md); ``mode`` None or "promise_in_bounds" or "clip" clamps each start so
    its slice fits, "fill" reads ``fill_value`` for a whole slice that does not fit.
    ``unique_indices`` and ``indices_are_sorted`` are hints, accepted and not needed.

    Without them, functrans's own form:
    ``out[b] = operand[indices[b, 0], ..., indices[b, k-1]]`` for ``indices``
    (``start_indices``) of shape ``(*batch, k)``.  Positions out of bounds are clamped into
    range (``mode`` None, "clip" or "promise_in_bounds"), or read ``fill_value`` (``mode="fill"`` or "drop"; by default
    NaN for floats, the smallest integer, the largest unsigned integer, True).  With
    ``batch_dims=m`` the first ``m`` axes of ``operand`` and ``indices`` are shared (equal
    sizes): ``out[a, b] = operand[a][indices[a, b]]``.

    >>> import numpy as np, functrans.lax as lax
    >>> x = np.arange(12.0).reshape(4, 3)
    >>> lax.gather(x, np.array([[3], [0], [3], [9]]))  # rows 3, 0, 3 and (clamped) 3
    array([[ 9., 10., 11.],
           [ 0.,  1.,  2.],
           [ 9., 10., 11.],
           [ 9., 10., 11.]])
    >>> lax.gather(x, np.array([[1, 2], [-5, 0]]))     # elements (1, 2) and (clamped) (0, 0)
    array([5., 0.])
    >>> lax.gather(x, np.array([[1, 2], [-5, 0]]), mode="fill", fill_value=-1.0)
    array([ 5., -1.])
    >>> lax.gather(x, np.array([[2], [0], [1], [1]]), batch_dims=1)  # row r's element
    array([ 2.,  3.,  7., 10.])
    >>> dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                                    start_index_map=(0,))
    >>> lax.gather(x, np.array([[3], [0]]), dnums, slice_sizes=(1, 2))  # x[[3, 0], :2]
    array([[ 9., 10.],
           [ 0.,  1.]])
    """
    if dimension_numbers is None:
        if slice_sizes is not None:
            raise TypeError("gather: slice_sizes goes with dimension_numbers (XLA's form); "
                            "without them the index array's last axis picks whole slices")
        return gather_p.bind(operand, start_indices, **gather_params(
            mode, fill_value, batch_dims=batch_dims))
    if batch_dims:
        raise TypeError("gather: batch_dims belongs to functrans's own form; with "
                        "dimension_numbers use their operand_batching_dims")
    if slice_sizes is None:
        raise TypeError("gather: with dimension_numbers, slice_sizes is required (one size "
                        "per operand axis)")
    return _xla_gather(operand, start_indices, dimension_numbers, slice_sizes, mode,
                       fill_value)


def _check_indices(name: str, aval: ShapedArray, indices: ShapedArray,
                   clamping: bool = True, batch_dims: int = 0) -> int:
    m = batch_dims
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {indices.str_short()}")
    if indices.ndim == 0:
        raise ValueError(f"{name}: indices must have a last axis of positions (shape "
                         f"(*batch, k)), got a scalar; use shape (1,) for one position")
    if m and (indices.ndim <= m or aval.ndim < m or aval.shape[:m] != indices.shape[:m]):
        raise ValueError(f"{name}: with batch_dims={m} the operand (shape {aval.shape}) and "
                         f"the indices (shape {indices.shape}) must share their first {m} "
                         "axes, of equal sizes, and the indices need a last axis of "
                         "positions after them")
    k = indices.shape[-1]
    if k > aval.ndim - m:
        raise ValueError(f"{name}: indices of shape {indices.shape} hold {k} positions, but "
                         f"the operand of shape {aval.shape} has only {aval.ndim - m} axes"
                         + (f" after its {m} batch axes" if m else ""))
    if clamping and 0 in aval.shape[m:m + k] and 0 not in indices.shape[:-1]:
        raise IndexError(f"{name}: cannot index axes of size zero (operand shape "
                         f"{aval.shape}): there is no element to clamp a position to; use "
                         "mode='fill' (gathers) or mode='drop' (scatters)")
    return k


def _gather_abstract_eval(aval, indices, *, mode="clip", fill_value=None, batch_dims=0):
    k = _check_indices("gather", aval, indices, mode == "clip", batch_dims)
    return ShapedArray(indices.shape[:-1] + aval.shape[batch_dims + k:], aval.dtype,
                       aval.weak_type)


def _unbatched(xp, operand, indices, m: int):
    """``operand`` of shape ``(*B, *tail)`` and ``indices`` of shape ``(*B, *batch, k)``
    (``m == len(B)`` shared batch axes) in the form without them: the operand as
    ``(P, *tail)`` (a view where it can be, so a scatter writes through it) and the indices
    as ``(P, *batch, k + 1)`` with each entry's batch number in front, ``P = prod(B)``."""
    size = math.prod(operand.shape[:m])
    operand = xp.reshape(operand, (size,) + operand.shape[m:])
    indices = xp.reshape(indices, (size,) + indices.shape[m:])
    column = xp.arange(size, dtype=indices.dtype).reshape((size,) + (1,) * (indices.ndim - 1))
    column = xp.broadcast_to(column, indices.shape[:-1] + (1,))
    return operand, xp.concatenate([column, indices], axis=-1)


def _gather_impl(operand, indices, *, mode="clip", fill_value=None, batch_dims=0):
    xp = array_module(operand, indices)
    operand, indices = coerce(xp, xp.asarray(operand), indices)
    if batch_dims:
        shape = _gather_abstract_eval(get_aval(operand), get_aval(indices), mode=mode,
                                      batch_dims=batch_dims).shape
        operand, indices = _unbatched(xp, operand, indices, batch_dims)
        return xp.reshape(_gather_impl(operand, indices, mode=mode, fill_value=fill_value),
                          shape)
    _check_indices("gather", get_aval(operand), get_aval(indices), mode == "clip")
    k = indices.shape[-1]
    if k == 0:  # no position to pick: every batch entry is the whole operand
        return xp.broadcast_to(operand, indices.shape[:-1] + operand.shape).copy()
    if 0 in operand.shape[:k]:  # (fill mode) nothing to read: every position is out of bounds
        return backend.full(indices.shape[:-1] + operand.shape[k:],
                            _fill_value(fill_value, operand.dtype), operand.dtype,
                            like=operand)
    if k == 1 and xp is np:  # NumPy's take clamps as it reads (CuPy's wraps)
        out = np.take(operand, indices[..., 0], axis=0, mode="clip")
    else:
        out = _take_rows(xp, operand, _clamped_positions(xp, indices, operand.shape[:k]))
    if mode == "fill" and not _known_in_bounds(xp, indices, operand.shape[:k]):
        keep = _in_bounds(xp, indices, operand.shape[:k])
        keep = keep.reshape(keep.shape + (1,) * (operand.ndim - k))
        # the fill value as a NumPy scalar (CuPy's kernels refuse 0-d NumPy arrays)
        out = xp.where(keep, out, np.asarray(_fill_value(fill_value, operand.dtype),
                                             dtype=operand.dtype)[()])
    return out


def _zero_fill(params: dict) -> dict:
    """The params of the gather that reads tangents or cotangents: zero where out of
    bounds."""
    return {**params, "fill_value": 0} if params.get("mode") == "fill" else params


def _gather_to_scatter(params: dict) -> dict:
    mode = {"mode": "drop"} if params.get("mode") == "fill" else {}
    return _with_batch_dims(mode, params.get("batch_dims", 0))


def _scatter_to_gather(params: dict) -> dict:
    mode = {"mode": "fill", "fill_value": 0} if params.get("mode") == "drop" else {}
    return _with_batch_dims(mode, params.get("batch_dims", 0))


def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    ans = gather_p.bind(operand, indices, **params)
    if type(tangents[0]) is Zero:
        return ans, Zero.from_value(ans)
    return ans, gather_p.bind(tangents[0], indices, **_zero_fill(params))


def _gather_transpose(ct, operand, indices, **params):
    assert is_undefined_primal(operand) and not is_undefined_primal(indices)
    zeros = ad.zeros(operand.aval.update(dtype=get_aval(ct).dtype, weak_type=False), ct)
    out = scatter_add_p.bind(zeros, indices, ct, **_gather_to_scatter(params))
    return [convert_element_type(out, operand.aval.dtype), None]


def _gather_batch(vals, dims, **params):
    operand, indices = vals
    op_dim, ix_dim = dims
    m = params.get("batch_dims", 0)
    if ix_dim is not_mapped:  # the batch axis joins `rest`, right after the indexed axes
        k = shape_of(indices)[-1]
        out = gather_p.bind(moveaxis(operand, op_dim, m + k), indices, **params)
        return out, ndim_of(indices) - 1
    if op_dim is not_mapped:  # the batch axis is one more `batch` axis of the indices
        return gather_p.bind(operand, moveaxis(indices, ix_dim, m), **params), m
    # both: one more shared batch axis, in front
    return gather_p.bind(moveaxis(operand, op_dim, 0), moveaxis(indices, ix_dim, 0),
                         **_with_batch_dims(params, m + 1)), 0


impl_rules[gather_p] = _gather_impl
abstract_eval_rules[gather_p] = _gather_abstract_eval
ad.jvp_rules[gather_p] = _gather_jvp
transpose.deftranspose(gather_p, _gather_transpose)
batching.batching_rules[gather_p] = _gather_batch


# -- the scatters ------------------------------------------------------------------------
# One impl, abstract eval and batching rule for all five; they differ in how an update
# combines with what is there (backend.scatter_apply's operation) and in their derivatives.

SCATTER_OPS: dict = {}  # primitive -> backend.scatter_apply's operation


def _scatter_abstract_eval(name):
    def abstract_eval(aval, indices, updates, *, mode="clip", batch_dims=0):
        k = _check_indices(name, aval, indices, mode == "clip", batch_dims)
        expected = indices.shape[:-1] + aval.shape[batch_dims + k:]
        if updates.shape != expected:
            raise ValueError(f"{name}: updates must have shape {expected} (the batch axes "
                             f"of indices {indices.shape} and the unindexed axes of the "
                             f"operand {aval.shape}), got {updates.shape}")
        if updates.dtype != aval.dtype:
            raise TypeError(f"{name}: updates ({updates.str_short()}) must have the dtype "
                            f"of the operand ({aval.str_short()}); convert them first")
        return aval
    return abstract_eval


def _scatter_impl(prim):
    op = SCATTER_OPS[prim]
    check = _scatter_abstract_eval(prim.name)

    def impl(operand, indices, updates, *, mode="clip", batch_dims=0):
        xp = array_module(operand, indices, updates)
        operand, indices, updates = coerce(xp, operand, indices, updates)
        check(get_aval(operand), get_aval(indices), get_aval(updates), mode=mode,
              batch_dims=batch_dims)
        out = xp.array(operand, copy=True)  # never write into the caller's array
        if not batch_dims:
            _write(xp, out, indices, updates, mode)
            return out
        # without the shared axes (a view of `out` where it can be; its shape given back)
        target, indices = _unbatched(xp, out, indices, batch_dims)
        if backend.is_array(updates):
            updates = xp.reshape(updates, indices.shape[:-1] + target.shape[
                indices.shape[-1]:])
        _write(xp, target, indices, updates, mode)
        return xp.reshape(target, out.shape)

    def _write(xp, out, indices, updates, mode):
        """The scatter into ``out``, in place."""
        target = out
        if indices.shape[-1] == 0:  # the whole operand at every entry: one unit axis
            target = out[None]
            indices = xp.zeros(indices.shape[:-1] + (1,), dtype=indices.dtype)
        dims = target.shape[:indices.shape[-1]]
        if 0 in dims:  # (drop mode) nowhere to write: every update is dropped
            return
        keep = (_in_bounds(xp, indices, dims) if mode == "drop" and
                not _known_in_bounds(xp, indices, dims) else None)
        # A scalar update is filled in on the device (asarray would copy it from the host).
        updates = (xp.asarray(updates, dtype=out.dtype) if backend.is_array(updates)
                   else xp.full((), updates, dtype=out.dtype))
        backend.scatter_apply(op, target, _clamped_positions(xp, indices, dims), updates,
                              keep=keep)
    return impl


def _scatter_batch(prim):
    def batch(vals, dims, **params):
        operand, indices, updates = vals
        op_dim, ix_dim, up_dim = dims
        m = params.get("batch_dims", 0)
        size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
        operand = bdim_to_front(operand, op_dim, size)
        updates = bdim_to_front(updates, up_dim, size)
        if ix_dim is not_mapped:  # the batch axis joins `rest` of the operand and updates
            k, nb = shape_of(indices)[-1], ndim_of(indices) - 1
            out = prim.bind(moveaxis(operand, 0, m + k), indices, moveaxis(updates, 0, nb),
                            **params)
            return out, m + k
        # one more shared batch axis, in front
        return prim.bind(operand, moveaxis(indices, ix_dim, 0), updates,
                         **_with_batch_dims(params, m + 1)), 0
    return batch


def _scatter_primitive(name: str, op: str) -> Primitive:
    prim = Primitive(name, origin="library")
    SCATTER_OPS[prim] = op
    impl_rules[prim] = _scatter_impl(prim)
    abstract_eval_rules[prim] = _scatter_abstract_eval(name)
    batching.batching_rules[prim] = _scatter_batch(prim)
    return prim


scatter_p = _scatter_primitive("scatter", "set")
scatter_add_p = _scatter_primitive("scatter_add", "add")
codegen.deflowering(scatter_add_p, scatter="add")  # jit's fusion: one loop
scatter_mul_p = _scatter_primitive("scatter_mul", "multiply")
scatter_min_p = _scatter_primitive("scatter_min", "minimum")
scatter_max_p = _scatter_primitive("scatter_max", "maximum")
# on chunks of rows (codegen's "Row regions"): positions in indices' last axis
for _p in (gather_p, scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    codegen.deflowering(_p, positions=1)


def _scatter_either(prim, name: str, operand, indices, updates, dimension_numbers, mode,
                    batch_dims):
    """A scatter in XLA's form when ``dimension_numbers`` is given, else in functrans's."""
    if dimension_numbers is None:
        return prim.bind(operand, indices, updates,
                         **scatter_params(mode, batch_dims=batch_dims, name=name))
    if batch_dims:
        raise TypeError(f"{name}: batch_dims belongs to functrans's own form; with "
                        "dimension_numbers use their operand_batching_dims")
    return _xla_scatter(prim, name, operand, indices, updates, dimension_numbers, mode)


def scatter(operand, scatter_indices, updates, dimension_numbers=None, *,
            indices_are_sorted: bool = False, unique_indices: bool = False,
            mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with ``updates`` written into it.  Two forms: with
    ``dimension_numbers`` (a ``ScatterDimensionNumbers``), JAX's and XLA's general scatter,
    each window of ``updates`` written from its start in ``scatter_indices`` (``mode`` None,
    "fill", "drop" or "promise_in_bounds" drops a whole window that does not fit, "clip"
    clamps its start; ``indices_are_sorted`` and ``unique_indices`` are hints, accepted and
    not needed).  Without them, functrans's own form: ``updates[b]`` written at
    ``indices[b]`` (``scatter_indices``) for every ``b`` (shapes as for ``gather``).  Of
    repeated positions the last update in row-major order of the batch axes wins.  Out-of-bounds positions are clamped (``mode`` None, "clip" or
    "promise_in_bounds") or their updates dropped (``mode="drop"`` or "fill").  With
    ``batch_dims=m`` the first ``m`` axes of ``operand``, ``indices`` and ``updates`` are
    shared: ``updates[a, b]`` goes to ``operand[a][indices[a, b]]``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([ 0., 10.,  0.,  2.])
    >>> lax.scatter(np.zeros(3), np.array([[0], [7]]), np.array([1.0, 2.0]), mode="drop")
    array([1., 0., 0.])
    >>> dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
    ...                                     scatter_dims_to_operand_dims=(0,))
    >>> lax.scatter(np.zeros(5), np.array([[1], [4]]), np.ones((2, 2)), dnums)  # 4: dropped
    array([0., 1., 1., 0., 0.])
    """
    return _scatter_either(scatter_p, "scatter", operand, scatter_indices, updates,
                           dimension_numbers, mode, batch_dims)


def scatter_add(operand, scatter_indices, updates, dimension_numbers=None, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with ``updates[b]`` added at ``indices[b]`` for every ``b``
    (shapes as for ``gather``); repeated positions accumulate.  Modes, and XLA's form with
    ``dimension_numbers``, as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_add(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([ 0., 11.,  0.,  2.])
    """
    return _scatter_either(scatter_add_p, "scatter_add", operand, scatter_indices, updates,
                           dimension_numbers, mode, batch_dims)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers=None, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None, batch_dims: int = 0):
    """A copy of ``operand`` multiplied by ``updates[b]`` at ``indices[b]`` for every ``b``;
    repeated positions multiply by all their updates.  Modes, and XLA's form with
    ``dimension_numbers``, as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_mul(np.ones(3), np.array([[1], [1], [2]]), np.array([2.0, 3.0, 5.0]))
    array([1., 6., 5.])
    """
    return _scatter_either(scatter_mul_p, "scatter_mul", operand, scatter_indices, updates,
                           dimension_numbers, mode, batch_dims)


def scatter_min(operand, scatter_indices, updates, dimension_numbers=None, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with the minimum of it and of ``updates[b]`` at ``indices[b]``
    for every ``b``.  Modes, and XLA's form with ``dimension_numbers``, as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_min(np.zeros(3), np.array([[1], [1], [2]]), np.array([-2.0, -3.0, 5.0]))
    array([ 0., -3.,  0.])
    """
    return _scatter_either(scatter_min_p, "scatter_min", operand, scatter_indices, updates,
                           dimension_numbers, mode, batch_dims)


def scatter_max(operand, scatter_indices, updates, dimension_numbers=None, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with the maximum of it and of ``updates[b]`` at ``indices[b]``
    for every ``b``.  Modes, and XLA's form with ``dimension_numbers``, as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_max(np.zeros(3), np.array([[1], [1], [2]]), np.array([2.0, 3.0, -5.0]))
    array([0., 3., 0.])
    """
    return _scatter_either(scatter_max_p, "scatter_max", operand, scatter_indices, updates,
                           dimension_numbers, mode, batch_dims)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers=None, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None,
                batch_dims: int = 0):
    """A copy of ``operand`` with ``updates[b]`` subtracted at ``indices[b]`` for every
    ``b``: ``scatter_add`` of the negated updates (differentiable as it is).  Modes, and
    XLA's form with ``dimension_numbers``, as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_sub(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([  0., -11.,   0.,  -2.])
    """
    return _scatter_either(scatter_add_p, "scatter_sub", operand, scatter_indices,
                           neg(updates), dimension_numbers, mode, batch_dims)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
    """A copy of ``operand`` with ``func`` applied to the elements that a scatter in XLA's
    form (``dimension_numbers``, with updates of shape ``update_shape``) would write: once
    per update that reaches an element, as JAX (an element two windows cover gets
    ``func(func(x))``).  ``func`` is called on whole arrays and must act elementwise.
    Modes as for ``scatter``'s XLA form.

    >>> import numpy as np, functrans.lax as lax
    >>> dnums = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
    ...                                     scatter_dims_to_operand_dims=(0,))
    >>> lax.scatter_apply(np.arange(5.0), np.array([[1], [2]]), lambda v: 2 * v, dnums,
    ...                   update_shape=(2, 2))
    array([0., 2., 8., 6., 4.])
    """
    if not callable(func):
        raise TypeError(f"scatter_apply: func must be callable, got {func!r}")
    one = convert_element_type(add(_int_zeros(scatter_indices), 1), np.int32)
    try:
        update_shape = tuple(operator.index(n) for n in update_shape)
    except TypeError:
        raise TypeError(f"scatter_apply: update_shape must be a sequence of ints, got "
                        f"{update_shape!r}") from None
    board = broadcast_in_dim(mul(one, 0), tuple(shape_of(operand)), ())
    hits = _xla_scatter(scatter_add_p, "scatter_apply", board, scatter_indices,
                        broadcast_in_dim(one, update_shape, ()), dimension_numbers, mode)
    if unique_indices:
        times = 1
    elif backend.is_array(hits):  # known: as many rounds as the most-covered element needs
        times = int(hits.max()) if hits.size else 0
    else:  # traced: at most one round per window
        times = math.prod(shape_of(scatter_indices)[:-1])
    out = operand
    for round_ in range(times):
        out = select(gt(hits, round_), func(out), out)
    return out


def _both_zero(g_op, g_up) -> bool:
    return type(g_op) is Zero and type(g_up) is Zero


# scatter_add: linear in (operand, updates) jointly.

def _scatter_add_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    g_op, g_up = tangents[0], tangents[2]
    ans = scatter_add_p.bind(*primals, **params)
    if _both_zero(g_op, g_up):
        return ans, Zero.from_value(ans)
    return ans, scatter_add_p.bind(ad.instantiate(g_op, operand), indices,
                                   ad.instantiate(g_up, updates), **params)


def _scatter_add_transpose(ct, operand, indices, updates, **params):
    assert not is_undefined_primal(indices)
    ct_operand = ct if is_undefined_primal(operand) else None
    ct_updates = None
    if is_undefined_primal(updates):
        ct_updates = gather_p.bind(ct, indices, **_scatter_to_gather(params))
        ct_updates = convert_element_type(ct_updates, updates.aval.dtype)
    return [ct_operand, None, ct_updates]


ad.jvp_rules[scatter_add_p] = _scatter_add_jvp
transpose.deftranspose(scatter_add_p, _scatter_add_transpose)


# scatter (set): linear in (operand, updates) jointly.  Its transpose gives the operand the
# cotangent where nothing was written, and each update the cotangent of the element it
# wrote -- for repeated positions only the winning (last) update, found by scattering the
# updates' entry numbers (1, 2, ...) and reading back which number landed.

def _scatter_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    g_op, g_up = tangents[0], tangents[2]
    ans = scatter_p.bind(*primals, **params)
    if _both_zero(g_op, g_up):
        return ans, Zero.from_value(ans)
    return ans, scatter_p.bind(ad.instantiate(g_op, operand), indices,
                               ad.instantiate(g_up, updates), **params)


def _winners(indices, operand_aval: ShapedArray, updates_aval: ShapedArray, params: dict):
    """True for the updates that a scatter with these indices actually writes."""
    batch = shape_of(indices)[:-1]
    n = int(np.prod(batch, dtype=np.int64))
    numbers = add(reshape(iota(np.int64, n, like=indices), batch), 1)
    numbers = broadcast_in_dim(numbers, updates_aval.shape, tuple(range(len(batch))))
    board = ad.zeros(operand_aval.update(dtype=np.dtype(np.int64), weak_type=False), indices)
    landed = gather_p.bind(scatter_p.bind(board, indices, numbers, **params), indices,
                           **_scatter_to_gather(params))
    return eq(landed, numbers)


def _scatter_transpose(ct, operand, indices, updates, **params):
    assert not is_undefined_primal(indices)
    up_aval = updates.aval if is_undefined_primal(updates) else get_aval(updates)
    op_aval = operand.aval if is_undefined_primal(operand) else get_aval(operand)
    ct_operand = ct_updates = None
    if is_undefined_primal(operand):
        zeros = ad.zeros(up_aval.update(dtype=get_aval(ct).dtype, weak_type=False), ct)
        ct_operand = scatter_p.bind(ct, indices, zeros, **params)
    if is_undefined_primal(updates):
        read = gather_p.bind(ct, indices, **_scatter_to_gather(params))
        ct_updates = select(_winners(indices, op_aval, up_aval, params), read,
                            zeros_like(read))
        ct_updates = convert_element_type(ct_updates, up_aval.dtype)
    return [ct_operand, None, ct_updates]


ad.jvp_rules[scatter_p] = _scatter_jvp
transpose.deftranspose(scatter_p, _scatter_transpose)


# scatter_mul: linear in the operand (times the product of the updates at each position).
# In the updates, d out[p] = operand[p] * sum_b g[b] * (product of the other updates at p);
# "the others" is computed without dividing by zero: with no zero among a position's
# updates it is the product over the update, with exactly one zero it is the product of
# the non-zero ones for that zero update and 0 for the rest, with two or more it is 0.
# (So first derivatives are exact everywhere; second derivatives at updates that are
# exactly zero are not.)

def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    g_op, g_up = tangents[0], tangents[2]
    ans = scatter_mul_p.bind(*primals, **params)
    if _both_zero(g_op, g_up):
        return ans, Zero.from_value(ans)
    out = None
    if type(g_op) is not Zero:
        out = scatter_mul_p.bind(g_op, indices, updates, **params)
    if type(g_up) is not Zero:
        zero, one = zeros_like(updates), add(zeros_like(updates), 1)
        is_zero = eq(updates, zero)
        nonzero = select(is_zero, one, updates)
        ones = add(zeros_like(operand), 1)
        product = scatter_mul_p.bind(ones, indices, nonzero, **params)
        zeros_at = scatter_add_p.bind(zeros_like(operand), indices,
                                      select(is_zero, one, zero), **params)
        read = _scatter_to_gather(params)
        product, zeros_at = gather_p.bind(product, indices, **read), gather_p.bind(
            zeros_at, indices, **read)
        others = select(is_zero, select(eq(zeros_at, 1), product, zero),
                        select(eq(zeros_at, 0), div(product, nonzero), zero))
        term = mul(operand, scatter_add_p.bind(zeros_like(operand), indices,
                                               mul(g_up, others), **params))
        out = term if out is None else add(out, term)
    return ans, out


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if is_undefined_primal(updates):
        raise NotImplementedError("scatter_mul is linear in its operand only; its updates "
                                  "cannot be transposed")
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose.deftranspose(scatter_mul_p, _scatter_mul_transpose)


# scatter_min / scatter_max: the result's tangent at a position is the mean of the tangents
# of every value that attains the extremum there (the operand's element and the updates),
# so that ties share the derivative equally, as JAX does.

def _scatter_extremum_jvp(prim):
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        g_op, g_up = tangents[0], tangents[2]
        ans = prim.bind(*primals, **params)
        if _both_zero(g_op, g_up):
            return ans, Zero.from_value(ans)
        g_op, g_up = ad.instantiate(g_op, operand), ad.instantiate(g_up, updates)
        read = _scatter_to_gather(params)
        from_operand = eq(operand, ans)
        from_updates = eq(updates, gather_p.bind(ans, indices, **read))
        zero_op, zero_up = zeros_like(ans), zeros_like(updates)
        count = scatter_add_p.bind(select(from_operand, add(zero_op, 1), zero_op), indices,
                                   select(from_updates, add(zero_up, 1), zero_up), **params)
        total = scatter_add_p.bind(select(from_operand, g_op, zeros_like(g_op)), indices,
                                   select(from_updates, g_up, zeros_like(g_up)), **params)
        return ans, div(total, count)
    return jvp


ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)


# -- XLA's form: dimension numbers --------------------------------------------------------
# jax.lax.gather / scatter* take XLA's general form: `start_indices` of shape
# (*batch, n) whose last axis holds n start positions, spread over the operand's axes by
# `start_index_map`, and a window (`slice_sizes`, or the updates' window axes) read or
# written from there.  Here that form is translated into the one above: one position
# (a full coordinate of the operand) for every element of the result (gather) or of the
# updates (scatter), then one gather_p or scatter bind.  The positions are integer
# arithmetic on the indices, so jvp, transposition and batching are the primitive's own.

class GatherDimensionNumbers(NamedTuple):
    """XLA's description of a general gather (``jax.lax.GatherDimensionNumbers``).

    ``offset_dims``: the result's axes that hold the slice's (uncollapsed, unbatched) axes;
    ``collapsed_slice_dims``: operand axes whose slice has size 1 and no result axis;
    ``start_index_map``: the operand axis that each entry of an index vector starts;
    ``operand_batching_dims`` / ``start_indices_batching_dims``: operand axes paired with
    axes of the indices (equal sizes), element ``a`` of one meeting element ``a`` of the
    other.

    >>> import functrans.lax as lax
    >>> lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
    ...                            start_index_map=(0,)).offset_dims
    (1,)
    """
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """XLA's description of a general scatter (``jax.lax.ScatterDimensionNumbers``).

    ``update_window_dims``: the updates' axes that hold a window (the operand's axes that
    are neither inserted nor batching, in order); ``inserted_window_dims``: operand axes
    of window size 1 that the updates do not have; ``scatter_dims_to_operand_dims``: the
    operand axis each entry of an index vector starts; ``operand_batching_dims`` /
    ``scatter_indices_batching_dims``: operand axes paired with axes of the indices.

    >>> import functrans.lax as lax
    >>> lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                             scatter_dims_to_operand_dims=(0,)).inserted_window_dims
    (0,)
    """
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _dims_field(name: str, dnums, field: str) -> tuple:
    try:
        value = getattr(dnums, field)
    except AttributeError:
        raise TypeError(f"{name}: dimension_numbers must be a "
                        f"{'Gather' if name == 'gather' else 'Scatter'}DimensionNumbers "
                        f"(it has no field {field}), got {dnums!r}") from None
    try:
        return tuple(operator.index(d) for d in value)
    except TypeError:
        raise TypeError(f"{name}: dimension_numbers.{field} must be a sequence of ints, "
                        f"got {value!r}") from None


def _check_axes(name: str, field: str, axes: tuple, rank: int, what: str,
                ordered: bool = True) -> None:
    """``axes`` (a field of the dimension numbers) are distinct, in ``range(rank)``, and
    increasing when ``ordered``."""
    for d in axes:
        if not 0 <= d < rank:
            raise ValueError(f"{name}: dimension_numbers.{field}={axes} must be axes of "
                             f"{what} (0 <= axis < {rank}); {d} is not")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: dimension_numbers.{field}={axes} repeats an axis")
    if ordered and list(axes) != sorted(axes):
        raise ValueError(f"{name}: dimension_numbers.{field}={axes} must be sorted")


def _check_disjoint(name: str, field_a: str, a: tuple, field_b: str, b: tuple) -> None:
    common = sorted(set(a) & set(b))
    if common:
        raise ValueError(f"{name}: dimension_numbers.{field_a}={a} and {field_b}={b} "
                         f"share the axes {common}")


def _index_batch(name: str, operand_shape: tuple, indices, n_starts: int, index_field: str,
                 operand_batching: tuple, indices_batching: tuple,
                 indices_batching_field: str) -> tuple:
    """The batch shape of XLA-form ``indices`` (all axes but the last, the index vector),
    after checking it against the fields that name its axes."""
    aval = get_aval(indices)
    if aval.dtype.kind not in "iu":
        raise TypeError(f"{name}: indices must be integers, got {aval.str_short()}")
    if aval.ndim == 0:
        raise ValueError(f"{name}: indices must have a last axis holding the index vectors "
                         "(shape (*batch, n)), got a scalar")
    batch = tuple(aval.shape[:-1])
    if aval.shape[-1] != n_starts:
        raise ValueError(f"{name}: the indices' last axis (shape {aval.shape}) holds "
                         f"{aval.shape[-1]} start positions, but "
                         f"dimension_numbers.{index_field} names {n_starts} operand axes")
    _check_axes(name, indices_batching_field, indices_batching, len(batch),
                "the indices' batch axes (all but the last)", ordered=False)
    if len(indices_batching) != len(operand_batching):
        raise ValueError(f"{name}: dimension_numbers.operand_batching_dims="
                         f"{operand_batching} and {indices_batching_field}="
                         f"{indices_batching} must have equal lengths")
    for a, b in zip(operand_batching, indices_batching):
        if operand_shape[a] != batch[b]:
            raise ValueError(f"{name}: operand axis {a} (size {operand_shape[a]}, in "
                             f"operand_batching_dims) and indices axis {b} (size "
                             f"{batch[b]}, in {indices_batching_field}) must have equal "
                             "sizes")
    return batch


def _starts(name: str, indices, batch: tuple, operand_shape: tuple, window: tuple,
            start_map: tuple, operand_batching: tuple, indices_batching: tuple,
            clamp: bool):
    """Per operand axis, the window's start for each index vector (an int64 array of shape
    ``batch``, or the int 0), clamped so the window fits when ``clamp``; and, when not
    clamping, a boolean array of shape ``batch``: whether each window is in bounds (None
    when all are)."""
    indices = convert_element_type(indices, np.int64)
    nb = len(batch)
    starts: list = [0] * len(operand_shape)
    inside = None
    for k, d in enumerate(start_map):
        column = reshape(slicing_slice(indices, (0,) * nb + (k,), batch + (k + 1,)), batch)
        upper = operand_shape[d] - window[d]
        if clamp:
            column = elementwise_max(elementwise_min(column, upper), 0)
        else:
            ok = bitwise_and(ge(column, 0), le(column, upper))
            inside = ok if inside is None else bitwise_and(inside, ok)
        starts[d] = column
    for a, b in zip(operand_batching, indices_batching):
        starts[a] = broadcast_in_dim(iota(np.int64, batch[b], like=indices), batch, (b,))
    return starts, inside


def _positions(starts: list, inside, operand_shape: tuple, out_shape: tuple,
               batch_axes: tuple, window_axes: tuple, window_operand_dims: tuple, like):
    """The full coordinate (last axis, one per operand axis) of every element of
    ``out_shape``: its window's start (broadcast from the ``batch_axes``) plus its place in
    the window (``window_axes[j]`` runs along operand axis ``window_operand_dims[j]``);
    every coordinate of a window out of bounds (``inside`` False) moved out of bounds."""
    offsets = dict(zip(window_operand_dims, window_axes))
    columns = []
    for d, start in enumerate(starts):
        column = None
        if not isinstance(start, int):
            column = broadcast_in_dim(start, out_shape, batch_axes)
        if d in offsets:
            axis = offsets[d]
            step = broadcast_in_dim(iota(np.int64, out_shape[axis], like=like), out_shape,
                                    (axis,))
            column = step if column is None else add(column, step)
        if column is None:
            column = broadcast_in_dim(_int_zeros(like), out_shape, ())
        if inside is not None and d == 0:
            outside = broadcast_in_dim(inside, out_shape, batch_axes)
            column = select(outside, column, add(mul(column, 0), operand_shape[0]))
        columns.append(expand_dims(column, (len(out_shape),)))
    if not columns:
        return _empty_positions(out_shape, like)
    return concatenate(columns, len(out_shape))


def _int_zeros(like):
    return reshape(iota(np.int64, 1, like=like), ())


def _empty_positions(out_shape: tuple, like):
    return broadcast_in_dim(reshape(slicing_slice(iota(np.int64, 1, like=like), (0,), (0,)),
                                    (0,)), out_shape + (0,), (len(out_shape),))


def _xla_gather_mode(mode) -> str:
    """jax.lax.gather's modes: None is PROMISE_IN_BOUNDS there, which (like CLIP) clamps
    each start so the slice fits; FILL_OR_DROP reads the fill value for whole slices out of
    bounds."""
    key = mode_name(mode)
    if key is None or key in ("clip", "promise_in_bounds"):
        return "clip"
    if key in ("fill", "drop", "fill_or_drop"):
        return "fill"
    raise ValueError(f"gather: mode={mode!r} is not one of 'clip', 'fill', 'drop', "
                     "'promise_in_bounds' or a GatherScatterMode")


def _xla_scatter_mode(name: str, mode) -> str:
    """jax.lax.scatter*'s modes: None is FILL_OR_DROP there; FILL_OR_DROP and
    PROMISE_IN_BOUNDS drop whole windows out of bounds (XLA's scatter); CLIP clamps each
    start so the window fits."""
    key = mode_name(mode)
    if key == "clip":
        return "clip"
    if key is None or key in ("fill", "drop", "fill_or_drop", "promise_in_bounds"):
        return "drop"
    raise ValueError(f"{name}: mode={mode!r} is not one of 'clip', 'fill', 'drop', "
                     "'promise_in_bounds' or a GatherScatterMode")


def _xla_gather(operand, start_indices, dimension_numbers, slice_sizes, mode, fill_value):
    name = "gather"
    shape = tuple(shape_of(operand))
    rank = len(shape)
    offset_dims = _dims_field(name, dimension_numbers, "offset_dims")
    collapsed = _dims_field(name, dimension_numbers, "collapsed_slice_dims")
    start_map = _dims_field(name, dimension_numbers, "start_index_map")
    operand_batching = _dims_field(name, dimension_numbers, "operand_batching_dims")
    indices_batching = _dims_field(name, dimension_numbers, "start_indices_batching_dims")
    try:
        slice_sizes = tuple(operator.index(s) for s in slice_sizes)
    except TypeError:
        raise TypeError(f"gather: slice_sizes must be a sequence of ints, got "
                        f"{slice_sizes!r}") from None
    if len(slice_sizes) != rank:
        raise ValueError(f"gather: slice_sizes={slice_sizes} must have one size per operand "
                         f"axis ({rank}, operand shape {shape})")
    for d, (s, n) in enumerate(zip(slice_sizes, shape)):
        if not 0 <= s <= n:
            raise ValueError(f"gather: slice_sizes[{d}]={s} must be between 0 and the "
                             f"operand's size there ({n}; operand shape {shape})")
    _check_axes(name, "collapsed_slice_dims", collapsed, rank, "the operand")
    _check_axes(name, "operand_batching_dims", operand_batching, rank, "the operand")
    _check_axes(name, "start_index_map", start_map, rank, "the operand", ordered=False)
    _check_disjoint(name, "collapsed_slice_dims", collapsed, "operand_batching_dims",
                    operand_batching)
    _check_disjoint(name, "start_index_map", start_map, "operand_batching_dims",
                    operand_batching)
    for field, axes in (("collapsed_slice_dims", collapsed),
                        ("operand_batching_dims", operand_batching)):
        for d in axes:
            if slice_sizes[d] != 1:
                raise ValueError(f"gather: slice_sizes[{d}] must be 1 (axis {d} is in "
                                 f"dimension_numbers.{field}), got {slice_sizes[d]}")
    kept = tuple(d for d in range(rank) if d not in collapsed and d not in operand_batching)
    batch = _index_batch(name, shape, start_indices, len(start_map), "start_index_map",
                         operand_batching, indices_batching, "start_indices_batching_dims")
    out_rank = len(batch) + len(offset_dims)
    _check_axes(name, "offset_dims", offset_dims, out_rank, "the result")
    if len(offset_dims) != len(kept):
        raise ValueError(f"gather: dimension_numbers.offset_dims={offset_dims} must name one "
                         f"result axis for each operand axis not collapsed or batching "
                         f"{kept}")
    batch_axes = tuple(a for a in range(out_rank) if a not in offset_dims)
    out_shape = [0] * out_rank
    for a, n in zip(batch_axes, batch):
        out_shape[a] = n
    for a, d in zip(offset_dims, kept):
        out_shape[a] = slice_sizes[d]
    out_shape = tuple(out_shape)
    kind = _xla_gather_mode(mode)
    starts, inside = _starts(name, start_indices, batch, shape, slice_sizes, start_map,
                             operand_batching, indices_batching, clamp=kind == "clip")
    positions = _positions(starts, inside, shape, out_shape, batch_axes, offset_dims, kept,
                           start_indices)
    if kind == "clip":
        return gather_p.bind(operand, positions)
    return gather_p.bind(operand, positions, mode="fill", fill_value=fill_value)


def _xla_scatter(prim, name: str, operand, scatter_indices, updates, dimension_numbers,
                 mode):
    shape = tuple(shape_of(operand))
    rank = len(shape)
    up_shape = tuple(shape_of(updates))
    window_dims = _dims_field(name, dimension_numbers, "update_window_dims")
    inserted = _dims_field(name, dimension_numbers, "inserted_window_dims")
    start_map = _dims_field(name, dimension_numbers, "scatter_dims_to_operand_dims")
    operand_batching = _dims_field(name, dimension_numbers, "operand_batching_dims")
    indices_batching = _dims_field(name, dimension_numbers, "scatter_indices_batching_dims")
    _check_axes(name, "update_window_dims", window_dims, len(up_shape), "the updates")
    _check_axes(name, "inserted_window_dims", inserted, rank, "the operand")
    _check_axes(name, "operand_batching_dims", operand_batching, rank, "the operand")
    _check_axes(name, "scatter_dims_to_operand_dims", start_map, rank, "the operand",
                ordered=False)
    _check_disjoint(name, "inserted_window_dims", inserted, "operand_batching_dims",
                    operand_batching)
    _check_disjoint(name, "scatter_dims_to_operand_dims", start_map, "operand_batching_dims",
                    operand_batching)
    kept = tuple(d for d in range(rank) if d not in inserted and d not in operand_batching)
    if len(window_dims) != len(kept):
        raise ValueError(f"{name}: dimension_numbers.update_window_dims={window_dims} must "
                         f"name one updates axis for each operand axis not inserted or "
                         f"batching {kept}")
    batch = _index_batch(name, shape, scatter_indices, len(start_map),
                         "scatter_dims_to_operand_dims", operand_batching, indices_batching,
                         "scatter_indices_batching_dims")
    scatter_axes = tuple(a for a in range(len(up_shape)) if a not in window_dims)
    if tuple(up_shape[a] for a in scatter_axes) != batch:
        raise ValueError(f"{name}: the updates' axes outside update_window_dims="
                         f"{window_dims} (shape {up_shape}) must match the indices' batch "
                         f"axes {batch}")
    window = [1] * rank
    for a, d in zip(window_dims, kept):
        if up_shape[a] > shape[d]:
            raise ValueError(f"{name}: the updates' window axis {a} (size {up_shape[a]}) is "
                             f"larger than operand axis {d} (size {shape[d]})")
        window[d] = up_shape[a]
    up_dtype, op_dtype = get_aval(updates).dtype, get_aval(operand).dtype
    if up_dtype != op_dtype:
        raise TypeError(f"{name}: updates ({up_dtype}) must have the dtype of the operand "
                        f"({op_dtype}); convert them first")
    kind = _xla_scatter_mode(name, mode)
    starts, inside = _starts(name, scatter_indices, batch, shape, tuple(window), start_map,
                             operand_batching, indices_batching, clamp=kind == "clip")
    positions = _positions(starts, inside, shape, up_shape, scatter_axes, window_dims, kept,
                           scatter_indices)
    if kind == "clip":
        return prim.bind(operand, positions, updates)
    return prim.bind(operand, positions, updates, mode="drop")
