"""Sweep cases of the gather family (functrans/primitives/gather.py: gather, iota and the
scatters) and of what is built on it: integer-array indexing, take and take_along_axis,
x.at[...] updates, put_along_axis, put, place, fill_diagonal, functrans.ops' segments.

Integer arguments are drawn from -3..3, so positions repeat (scatter-add accumulates) and
some fall outside the axis (clamped by the primitives); vmap batches them too, which sweeps
the batching rules with batched operands, batched indices and both.
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import lax, ops
from sweep import F32, F64, A, Case, numpy_case


def _np_inplace(fun, x, *args, **kwargs):
    out = np.array(x, copy=True)
    fun(out, *args, **kwargs)
    return out


def _np_put_along_axis(x, i, v, axis):
    return _np_inplace(np.put_along_axis, x, i, v, axis)


def _np_segment(data, ids, n, ufunc):
    """A segment reduction by a loop; ids out of 0..n-1 are dropped; empty segments hold
    the identity, then infinities are zeroed (as _finite does for ours)."""
    identity = {np.add: 0.0, np.multiply: 1.0, np.maximum: -np.inf, np.minimum: np.inf}
    out = np.full((n,) + data.shape[1:], identity[ufunc], dtype=data.dtype)
    for row, s in zip(data, ids):
        if 0 <= s < n:
            out[s] = ufunc(out[s], row)
    return np.where(np.isfinite(out), out, 0)


def _finite(x):
    return fnp.where(fnp.isfinite(x), x, 0)



# XLA-form dimension numbers: x[:, i] / x.at[:, i]; windows of (2, 3) from starts (i, j);
# take_along_axis / put_along_axis along axis 1 (axis 0 shared)
_COLUMNS = lax.GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,),
                                      start_index_map=(1,))
_COLUMNS_UPDATE = lax.ScatterDimensionNumbers(update_window_dims=(0,),
                                              inserted_window_dims=(1,),
                                              scatter_dims_to_operand_dims=(1,))
_WINDOWS = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                      start_index_map=(0, 1))
_WINDOWS_UPDATE = lax.ScatterDimensionNumbers(update_window_dims=(1, 2),
                                              inserted_window_dims=(),
                                              scatter_dims_to_operand_dims=(0, 1))
_ALONG = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
_ALONG_UPDATE = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                            scatter_dims_to_operand_dims=(1,),
                                            operand_batching_dims=(0,),
                                            scatter_indices_batching_dims=(0,))

PRIMITIVE_CASES = [
    Case("gather_rows", lambda x, i: lax.gather(x, i), [A(5, 3), A(4, 1, kind="int")],
         linear=True),
    Case("gather_elements", lambda x, i: lax.gather(x, i), [A(4, 5), A(2, 3, 2, kind="int")],
         linear=True),
    Case("gather_no_position", lambda x, i: lax.gather(x, i), [A(2, 3), A(2, 0, kind="int")],
         linear=True),
    Case("gather_repeated_rows", lambda x, i: lax.gather(x, i), [A(3, 2), A(8, 1, kind="int")],
         linear=True),
    Case("scatter_add_rows", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(5, 3), A(6, 1, kind="int"), A(6, 3)], linear=True),
    Case("scatter_add_elements", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(4, 5), A(3, 2, kind="int"), A(3)], linear=True),
    Case("scatter_add_repeated_rows", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(3, 2), A(8, 1, kind="int"), A(8, 2)], linear=True),
    Case("iota", lambda x: x * lax.iota(x.dtype, 4, like=x), [A(3, 4)], linear=True),
    # XLA's form (dimension numbers), translated into the primitives above
    Case("gather_dnums_columns_fill",
         lambda x, i: lax.gather(x, i, _COLUMNS, (4, 1), mode="fill", fill_value=0.0),
         [A(4, 5), A(3, 1, kind="int")], linear=True),
    Case("gather_dnums_windows_clip",
         lambda x, i: lax.gather(x, i, _WINDOWS, (2, 3), mode="clip"),
         [A(5, 4), A(3, 2, kind="int")], linear=True),
    Case("gather_dnums_batching", lambda x, i: lax.gather(x, i, _ALONG, (1, 1)),
         [A(3, 4), A(3, 2, 1, kind="int")], linear=True),
    Case("scatter_add_dnums_windows_drop",
         lambda x, i, u: lax.scatter_add(x, i, u, _WINDOWS_UPDATE),
         [A(5, 4), A(3, 2, kind="int"), A(3, 2, 3)], linear=True),
    Case("scatter_sub_dnums_columns_clip",
         lambda x, i, u: lax.scatter_sub(x, i, u, _COLUMNS_UPDATE, mode="clip"),
         [A(4, 5), A(3, 1, kind="int"), A(4, 3)], linear=True),
    Case("scatter_max_dnums_batching",
         lambda x, i, u: lax.scatter_max(x, i, u, _ALONG_UPDATE),
         [A(3, 4), A(3, 2, 1, kind="int"), A(3, 2)]),
    Case("scatter_mul_dnums_windows_clip",
         lambda x, i, u: lax.scatter_mul(x, i, u, _WINDOWS_UPDATE, mode="clip"),
         [A(5, 4), A(3, 2, kind="int"), A(3, 2, 3)]),
]

def _np_take_fill(x, i, fill):
    """``take`` along axis 0 reading ``fill`` out of bounds (after negative ones wrap)."""
    n = x.shape[0]
    i = np.where(i < 0, i + n, i)
    inside = (i >= 0) & (i < n)
    out = np.take(x, np.clip(i, 0, n - 1), axis=0)
    return np.where(inside.reshape(inside.shape + (1,) * (x.ndim - 1)), out, fill)


def _np_take_along_fill(x, i, fill):
    n = x.shape[0]
    i = np.where(i < 0, i + n, i)
    inside = (i >= 0) & (i < n)
    return np.where(inside, np.take_along_axis(x, np.clip(i, 0, n - 1), axis=0), fill)


# NumPy-level: the indices are drawn arguments, so vmap also batches them (traced indices).
# `x[i]` itself is swept in tests/test_gather.py: with `x` unbatched and `i` batched, `x`
# would be a plain NumPy array indexed by a tracer, which NumPy refuses (docs/indexing.md).
NUMPY_CASES = [
    numpy_case("take_axis0", lambda m, x, i: m.take(x, i, axis=0), A(5, 3), A(4, kind="int")),
    numpy_case("take_axis1_2d_indices", lambda m, x, i: m.take(x, i, axis=1), A(2, 4),
               A(2, 3, kind="int")),
    numpy_case("take_flat", lambda m, x, i: m.take(x, i), A(2, 3), A(2, 2, kind="int")),
    numpy_case("take_scalar_index", lambda m, x, i: m.take(x, i, axis=0), A(4, 3),
               A(kind="int")),
    numpy_case("take_clip", lambda m, x, i: m.take(x, i, axis=0, mode="clip"), A(2, 3),
               A(5, kind="int")),
    numpy_case("take_wrap", lambda m, x, i: m.take(x, i, axis=1, mode="wrap"), A(3, 2),
               A(5, kind="int")),
    numpy_case("take_fill", lambda m, x, i: m.take(x, i, axis=0, mode="fill", fill_value=-1.0),
               A(2, 3), A(5, kind="int"), reference=lambda x, i: _np_take_fill(x, i, -1.0),
               dtypes=(F64, F32)),
    numpy_case("take_along_axis_fill", lambda m, x, i: m.take_along_axis(
        x, i, axis=0, mode="fill", fill_value=2.0), A(2, 3), A(4, 3, kind="int"),
        reference=lambda x, i: _np_take_along_fill(x, i, 2.0), dtypes=(F64, F32)),
    numpy_case("take_along_axis1", lambda m, x, i: m.take_along_axis(x, i, axis=1), A(3, 5),
               A(3, 2, kind="int")),
    numpy_case("take_along_axis0_broadcast", lambda m, x, i: m.take_along_axis(x, i, axis=0),
               A(4, 3), A(6, 1, kind="int")),
    numpy_case("take_along_axis_none", lambda m, x, i: m.take_along_axis(x, i, axis=None),
               A(2, 3), A(4, kind="int")),
]

# The other scatters, and the modes: with indices drawn from -3..3 some positions fall out
# of bounds, so "drop" and "fill" are exercised under every transform.
PRIMITIVE_CASES += [
    Case("gather_fill", lambda x, i: lax.gather(x, i, mode="fill", fill_value=0.5),
         [A(3, 2), A(5, 1, kind="int")]),
    Case("scatter_add_drop", lambda x, i, u: lax.scatter_add(x, i, u, mode="drop"),
         [A(3, 2), A(6, 1, kind="int"), A(6, 2)], linear=True),
    Case("scatter_rows", lambda x, i, u: lax.scatter(x, i, u),
         [A(4, 2), A(5, 1, kind="int"), A(5, 2)], linear=True),
    Case("scatter_elements_drop", lambda x, i, u: lax.scatter(x, i, u, mode="drop"),
         [A(3, 3), A(4, 2, kind="int"), A(4)], linear=True),
    Case("scatter_mul_rows", lambda x, i, u: lax.scatter_mul(x, i, u),
         [A(3, 2), A(4, 1, kind="int"), A(4, 2)]),
    Case("scatter_mul_drop", lambda x, i, u: lax.scatter_mul(x, i, u, mode="drop"),
         [A(4), A(5, 1, kind="int"), A(5)]),
    Case("scatter_min_rows", lambda x, i, u: lax.scatter_min(x, i, u),
         [A(3, 2), A(4, 1, kind="int"), A(4, 2)]),
    Case("scatter_max_drop", lambda x, i, u: lax.scatter_max(x, i, u, mode="drop"),
         [A(4), A(5, 1, kind="int"), A(5)]),
]

# Shared batch axes (batch_dims): row r of the positions indexes row r of the operand
# alone; vmap with both batched adds one more (batch_dims + 1).
PRIMITIVE_CASES += [
    Case("gather_shared_rows", lambda x, i: lax.gather(x, i, batch_dims=1),
         [A(4, 5), A(4, 3, 1, kind="int")], linear=True),
    Case("gather_shared_two_fill", lambda x, i: lax.gather(
        x, i, batch_dims=2, mode="fill", fill_value=0.5), [A(2, 3, 4, 2), A(2, 3, 2, 1,
                                                                            kind="int")]),
    Case("gather_shared_no_position", lambda x, i: lax.gather(x, i, batch_dims=1),
         [A(3, 2), A(3, 2, 0, kind="int")], linear=True),
    Case("scatter_add_shared_rows", lambda x, i, u: lax.scatter_add(x, i, u, batch_dims=1),
         [A(4, 5), A(4, 3, 1, kind="int"), A(4, 3)], linear=True),
    Case("scatter_shared_rows", lambda x, i, u: lax.scatter(x, i, u, batch_dims=1),
         [A(3, 4, 2), A(3, 5, 1, kind="int"), A(3, 5, 2)], linear=True),
    Case("scatter_mul_shared_drop", lambda x, i, u: lax.scatter_mul(
        x, i, u, batch_dims=1, mode="drop"), [A(3, 4), A(3, 5, 1, kind="int"), A(3, 5)]),
    Case("scatter_max_shared_rows", lambda x, i, u: lax.scatter_max(x, i, u, batch_dims=1),
         [A(2, 4), A(2, 3, 1, kind="int"), A(2, 3)]),
    Case("scatter_min_shared_two", lambda x, i, u: lax.scatter_min(x, i, u, batch_dims=2),
         [A(2, 2, 4), A(2, 2, 3, 1, kind="int"), A(2, 2, 3)]),
]

# Functional updates: put_along_axis, put, fill_diagonal and the segment reductions;
# positions are drawn, so vmap also batches them (traced indices).  x.at[...] and place
# are checked in tests/test_scatter.py: the stand-in's device arrays have no `.at`, and
# place's mask is a host constant.
NUMPY_CASES += [
    numpy_case("put_along_axis", lambda m, x, i, v: m.put_along_axis(
        x, i, v, axis=1, inplace=False), A(3, 4), A(3, 2, kind="int"), A(3, 2),
        reference=lambda x, i, v: _np_put_along_axis(x, i, v, 1)),
    numpy_case("put_clip", lambda m, x, i, v: m.put(x, i, v, mode="clip", inplace=False),
               A(2, 3), A(4, kind="int"), A(4),
               reference=lambda x, i, v: _np_inplace(np.put, x, i, v, mode="clip")),
    numpy_case("put_wrap", lambda m, x, i, v: m.put(x, i, v, mode="wrap", inplace=False),
               A(2), A(4, kind="int"), A(3),
               reference=lambda x, i, v: _np_inplace(np.put, x, i, v, mode="wrap")),
    numpy_case("fill_diagonal", lambda m, x, v: m.fill_diagonal(x, v, inplace=False),
               A(3, 3), A(3), reference=lambda x, v: _np_inplace(np.fill_diagonal, x, v)),
]

_SEGMENTS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}

for _name, _ufunc in _SEGMENTS.items():
    NUMPY_CASES.append(numpy_case(
        f"segment_{_name}", lambda m, d, s, _name=_name: _finite(
            getattr(ops, f"segment_{_name}")(d, s, num_segments=4)),
        A(5, 2), A(5, kind="int"), dtypes=(F64, F32),
        reference=lambda d, s, _ufunc=_ufunc: _np_segment(d, s, 4, _ufunc)))
