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

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.primitives.elementwise import add, div, eq, mul, select
from functrans.primitives.shape import (bdim_to_front, broadcast_in_dim, moveaxis, ndim_of,
                                        reshape, shape_of)
from functrans.primitives.slicing import concatenate

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["gather", "GatherScatterMode", "iota", "scatter", "scatter_add", "scatter_max",
           "scatter_min", "scatter_mul"]

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

def gather(operand, indices, *, mode=None, fill_value=None, batch_dims: int = 0):
    """``out[b] = operand[indices[b, 0], ..., indices[b, k-1]]`` for ``indices`` of shape
    ``(*batch, k)``.  Positions out of bounds are clamped into range (``mode`` None, "clip"
    or "promise_in_bounds"), or read ``fill_value`` (``mode="fill"`` or "drop"; by default
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
    """
    return gather_p.bind(operand, indices, **gather_params(mode, fill_value,
                                                           batch_dims=batch_dims))


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


def scatter(operand, indices, updates, *, mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with ``updates[b]`` written at ``indices[b]`` for every ``b``
    (shapes as for ``gather``).  Of repeated positions the last update in row-major order
    of the batch axes wins.  Out-of-bounds positions are clamped (``mode`` None, "clip" or
    "promise_in_bounds") or their updates dropped (``mode="drop"`` or "fill").  With
    ``batch_dims=m`` the first ``m`` axes of ``operand``, ``indices`` and ``updates`` are
    shared: ``updates[a, b]`` goes to ``operand[a][indices[a, b]]``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([ 0., 10.,  0.,  2.])
    >>> lax.scatter(np.zeros(3), np.array([[0], [7]]), np.array([1.0, 2.0]), mode="drop")
    array([1., 0., 0.])
    """
    return scatter_p.bind(operand, indices, updates,
                          **scatter_params(mode, batch_dims=batch_dims, name="scatter"))


def scatter_add(operand, indices, updates, *, mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with ``updates[b]`` added at ``indices[b]`` for every ``b``
    (shapes as for ``gather``); repeated positions accumulate.  Modes as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_add(np.zeros(4), np.array([[1], [3], [1]]), np.array([1.0, 2.0, 10.0]))
    array([ 0., 11.,  0.,  2.])
    """
    return scatter_add_p.bind(operand, indices, updates,
                              **scatter_params(mode, batch_dims=batch_dims, name="scatter_add"))


def scatter_mul(operand, indices, updates, *, mode=None, batch_dims: int = 0):
    """A copy of ``operand`` multiplied by ``updates[b]`` at ``indices[b]`` for every ``b``;
    repeated positions multiply by all their updates.  Modes as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_mul(np.ones(3), np.array([[1], [1], [2]]), np.array([2.0, 3.0, 5.0]))
    array([1., 6., 5.])
    """
    return scatter_mul_p.bind(operand, indices, updates,
                              **scatter_params(mode, batch_dims=batch_dims, name="scatter_mul"))


def scatter_min(operand, indices, updates, *, mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with the minimum of it and of ``updates[b]`` at ``indices[b]``
    for every ``b``.  Modes as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_min(np.zeros(3), np.array([[1], [1], [2]]), np.array([-2.0, -3.0, 5.0]))
    array([ 0., -3.,  0.])
    """
    return scatter_min_p.bind(operand, indices, updates,
                              **scatter_params(mode, batch_dims=batch_dims, name="scatter_min"))


def scatter_max(operand, indices, updates, *, mode=None, batch_dims: int = 0):
    """A copy of ``operand`` with the maximum of it and of ``updates[b]`` at ``indices[b]``
    for every ``b``.  Modes as for ``scatter``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.scatter_max(np.zeros(3), np.array([[1], [1], [2]]), np.array([2.0, 3.0, -5.0]))
    array([0., 3., 0.])
    """
    return scatter_max_p.bind(operand, indices, updates,
                              **scatter_params(mode, batch_dims=batch_dims, name="scatter_max"))


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
