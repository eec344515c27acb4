"""Sweep cases of functrans/numpy/_index_tricks.py: the positions of nonzero elements with
``size=`` (NumPy has no ``size``, so the references pad NumPy's answer), the gathers and
selections built on them, and the index builders used as indices of a swept array.

Conditions are drawn arguments, so vmap batches them (``size=`` is what makes that
possible) and the derivative checks differentiate the gathers that use the positions.  The
index builders with no array arguments (``tril_indices``, ``mgrid``, ...) make host arrays
of constants, which a device-array case would copy: tests/test_index_tricks.py checks them.
"""
from __future__ import annotations

import numpy as np

from sweep import F32, F64, A, numpy_case

FLOATS = (F64, F32)


def _pad(values, size: int, fill):
    """The first ``size`` of ``values`` along axis 0, then ``fill`` up to ``size``."""
    values = np.asarray(values)[:size]
    extra = np.broadcast_to(np.asarray(fill, values.dtype),
                            (size - len(values),) + values.shape[1:])
    return np.concatenate([values, extra])


def padded_nonzero(x, size: int, fill_value=0):
    """NumPy's ``nonzero(x)`` with JAX's ``size`` and ``fill_value``."""
    rows = _pad(np.argwhere(x), size, fill_value)
    return tuple(rows[:, k] for k in range(np.ndim(x)))


def padded_compress(condition, x, axis, size: int, fill_value):
    kept = np.moveaxis(np.compress(condition, x, axis), axis, 0)
    return np.moveaxis(_pad(kept, size, fill_value).astype(x.dtype), 0, axis)


def _gather_nonzero(m, x):
    if m is np:
        return x[padded_nonzero(x > 0, 4)]
    return x[m.nonzero(x > 0, size=4)]


NUMPY_CASES = [
    numpy_case("nonzero_size_truncates", lambda m, x: m.nonzero(x, size=5, fill_value=-1),
               A(3, 4, kind="zeros"), diff=False,
               reference=lambda x: padded_nonzero(x, 5, -1)),
    numpy_case("nonzero_size_pads", lambda m, x: m.nonzero(x, size=14, fill_value=(7, 8)),
               A(3, 4, kind="grid"), diff=False,
               reference=lambda x: padded_nonzero(x, 14, (7, 8))),
    numpy_case("where_one_argument_size", lambda m, c: m.where(c, size=4),
               A(2, 3, kind="bool"), dtypes=(F64,), diff=False,
               reference=lambda c: padded_nonzero(c, 4)),
    numpy_case("argwhere_size", lambda m, x: m.argwhere(x, size=7, fill_value=-2),
               A(2, 3, 2, kind="grid"), diff=False,
               reference=lambda x: _pad(np.argwhere(x), 7, -2)),
    numpy_case("flatnonzero_size", lambda m, x: m.flatnonzero(x, size=6, fill_value=99),
               A(3, 3, kind="grid"), diff=False,
               reference=lambda x: _pad(np.flatnonzero(x), 6, 99)),
    numpy_case("gather_at_nonzero_size", _gather_nonzero, A(6, kind="away0"), dtypes=FLOATS),
    numpy_case("compress_size_axis1",
               lambda m, c, x: m.compress(c, x, axis=1, size=3, fill_value=0.5),
               A(4, kind="bool"), A(2, 4), dtypes=FLOATS,
               reference=lambda c, x: padded_compress(c, x, 1, 3, 0.5)),
    numpy_case("compress_size_flat_short_condition",
               lambda m, c, x: m.compress(c, x, size=5, fill_value=-1.0),
               A(4, kind="bool"), A(2, 3),
               reference=lambda c, x: padded_compress(c, x.ravel(), 0, 5, -1.0)),
    numpy_case("extract_size", lambda m, c, x: m.extract(c, x, size=4),
               A(2, 3, kind="bool"), A(2, 3), dtypes=FLOATS,
               reference=lambda c, x: _pad(np.extract(c, x), 4, 0)),
    numpy_case("count_nonzero", lambda m, x: m.count_nonzero(x), A(3, 4, kind="grid"),
               diff=False, reference=lambda x: np.asarray(np.count_nonzero(x))),
    numpy_case("count_nonzero_axes_keepdims",
               lambda m, x: m.count_nonzero(x, axis=(0, 2), keepdims=True),
               A(2, 3, 4, kind="grid"), diff=False),
    numpy_case("select", lambda m, c1, c2, x, y, z: m.select([c1, c2], [x, y], z),
               A(3, 4, kind="bool"), A(4, kind="bool"), A(3, 4), A(3, 4), A(3, 1)),
    numpy_case("select_scalar_default", lambda m, x, y: m.select([x > 0.5, x < 0], [x, y], 0.25),
               A(2, 5, kind="away0"), A(2, 5)),
    numpy_case("choose_wrap", lambda m, a, x, y, z: m.choose(a, [x, y, z], mode="wrap"),
               A(3, 4, kind="int"), A(3, 4), A(4), A(3, 1)),
    numpy_case("choose_clip", lambda m, a, x, y: m.choose(a, (x, y), mode="clip"),
               A(2, 3, kind="int"), A(2, 3), A(2, 3)),
    numpy_case("piecewise", lambda m, x: m.piecewise(x, [x < -0.5, x > 0.5],
                                                     [m.sin, lambda v: v ** 2, 0.5]),
               A(3, 4, kind="away0"), dtypes=FLOATS),
    numpy_case("piecewise_args", lambda m, x, y: m.piecewise(x, [x > 0], [lambda v, s: v * s],
                                                              0.5) + y,
               A(5, kind="away0"), A(5), dtypes=FLOATS),
    numpy_case("unravel_index", lambda m, i: m.unravel_index(m.abs(i) * 2 + 1, (2, 2, 2)),
               A(2, 3, kind="int"), diff=False),
    numpy_case("ravel_multi_index_clip",
               lambda m, i, j: m.ravel_multi_index((i, j), (3, 2), mode="clip"),
               A(4, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("ravel_multi_index_wrap_fortran",
               lambda m, i, j: m.ravel_multi_index((i, j), (3, 2), mode="wrap", order="F"),
               A(4, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("ix_", lambda m, i, j: m.ix_(i, j), A(3, kind="int"), A(2, kind="int"),
               diff=False),
    numpy_case("r_directive", lambda m, x: m.r_["0,2,0", x, x], A(3)),
    numpy_case("c_", lambda m, x, y: m.c_[x, y], A(3), A(3, 2)),
    numpy_case("s_and_index_exp", lambda m, x: x[m.s_[::2, 1]] + x[m.index_exp[-1]][1],
               A(3, 2)),
]


def _keep_float32(out, w):
    """NumPy's counts, in float32 for float32 weights (NumPy gives float64 for densities,
    histogramdd and bincount; functrans keeps float32, as JAX)."""
    counts, *rest = out
    return (counts.astype(w.dtype) if w.dtype == np.float32 else counts, *rest)


def _bincount_reference(x, w, length):
    out = np.bincount(np.abs(x), w, minlength=length)[:length]
    return out.astype(w.dtype) if w is not None and w.dtype.kind == "f" else out


NUMPY_CASES += [
    numpy_case("bincount_weights_length", lambda m, x, w: m.bincount(m.abs(x), w, length=5),
               A(6, kind="int"), A(6),
               reference=lambda x, w: _bincount_reference(x, w, 5)),
    numpy_case("histogram_weights_density",
               lambda m, a, w: m.histogram(a, bins=4, weights=w, density=True), A(12), A(12),
               dtypes=FLOATS,  # small integer weights can sum to 0
               reference=lambda a, w: _keep_float32(
                   np.histogram(a, bins=4, weights=w, density=True), w)),
    numpy_case("histogram_counts_range", lambda m, a: m.histogram(a, bins=3, range=(-1, 1)),
               A(10), diff=False),
    # the range's high end drawn, so traced: the edges and the density (through the bin
    # widths) differentiate with respect to it
    numpy_case("histogram_traced_range",
               lambda m, a, r: m.histogram(a, bins=3, range=(-2.5, r * r + 1.25), density=True),
               A(10, kind="quarter"), A(), dtypes=FLOATS),
    numpy_case("histogram2d_weights",
               lambda m, x, y, w: m.histogram2d(x, y, bins=(2, 3), weights=w), A(9), A(9),
               A(9), dtypes=FLOATS,
               reference=lambda x, y, w: _keep_float32(
                   np.histogram2d(x, y, bins=(2, 3), weights=w)[:1], w)
               + np.histogram2d(x, y, bins=(2, 3), weights=w)[1:]),
    numpy_case("bincount_length_drops", lambda m, x: m.bincount(m.abs(x), length=3),
               A(7, kind="int"), diff=False,
               reference=lambda x: _bincount_reference(x, None, 3)),
]
