"""Sweep cases of the sorting family (functrans/primitives/sorting.py) and of the NumPy
functions built on it (functrans/numpy/_sorting.py).

Differentiated arguments are drawn distinct (kind "spread"): at a tie the sorted output is
not differentiable, and a numerical difference would cross the tie.  Ties are swept where
nothing is differentiated (integer keys, kind "int"), so stable order is checked by the
value and vmap comparisons; tests/test_sorting.py checks derivatives at ties.

The set operations are called with ``size=`` (their output length is not known while
tracing otherwise); their NumPy references pad NumPy's result the same way.
"""
from __future__ import annotations

import numpy as np
import pytest

from functrans import lax
from sweep import A, Case, F32, F64, numpy_case

PRIMITIVE_CASES = [
    Case("sort_last", lambda x: lax.sort(x), [A(3, 5, kind="spread")]),
    Case("sort_axis0", lambda x: lax.sort(x, dimension=0), [A(4, 3, kind="spread")]),
    Case("sort_int_keys_carry_values",
         lambda k, v: lax.sort((k, v), dimension=1)[1], [A(2, 6, kind="int"), A(2, 6)]),
    Case("sort_two_keys",
         lambda k1, k2, v: lax.sort((k1, k2, v), dimension=0, num_keys=2)[2],
         [A(7, kind="int"), A(7, kind="int"), A(7)]),
    Case("sort_key_val", lambda k, v: lax.add(*lax.sort_key_val(k, v)),
         [A(3, 4, kind="spread"), A(3, 4)]),
    Case("top_k", lambda x: lax.top_k(x, 2)[0], [A(3, 5, kind="spread")]),
    Case("top_k_axis0", lambda x: lax.top_k(x, 3, axis=0)[0], [A(4, 3, kind="spread")]),
    Case("approx_max_k", lambda x: lax.approx_max_k(x, 2, reduction_dimension=0)[0],
         [A(4, 3, kind="spread")]),
    Case("approx_min_k", lambda x: lax.approx_min_k(x, 3, recall_target=0.9)[0],
         [A(3, 5, kind="spread")]),
]

def _in_01(m, q):
    """Quantiles in (0.04, 0.88), smooth in ``q`` (no kink for the numerical derivative)."""
    return (m.tanh(q) + 1.1) / 2.4


def _weighted(reference, since="2.2.0"):
    """A reference from NumPy's weighted quantiles, skipped before NumPy ``since``: before
    2.2 they mishandled zero weights (numpy#27549), before 2.4 a tuple of axes (seen in
    2.0.0 to 2.3.5)."""
    def checked(*args):
        if np.lib.NumpyVersion(np.__version__) < since:
            pytest.skip(f"NumPy {np.__version__}'s weighted quantiles have known bugs")
        return reference(*args)
    return checked


def _nanquantile_with_infinities(x, q):
    """NumPy's ``nanquantile(x, q, axis=1)``, except between infinite neighbours: NumPy's
    ``inf - inf`` makes NaN there, functrans (as JAX, and NumPy's median) gives the
    neighbour at ``t = 0`` or where both are equal, and ``low (1 - t) + high t`` between."""
    with np.errstate(invalid="ignore"):
        out = np.nanquantile(x, q, axis=1)
    for r, row in enumerate(x):
        v = np.sort(row[~np.isnan(row)])
        if len(v) and np.isnan(out[r]):
            pos = q * (len(v) - 1)
            lo, t = int(np.floor(pos)), pos - np.floor(pos)
            low, high = v[lo], v[int(np.ceil(pos))]
            with np.errstate(invalid="ignore"):
                out[r] = low if t == 0 or low == high else low * (1 - t) + high * t
    return out.astype(x.dtype)


def _padded(values, size, fill=None):
    """NumPy's sorted ``values`` with JAX's ``size``: padded with ``fill``, by default the
    smallest value (the first: NaNs sort last) or 0 when there is none."""
    values = np.asarray(values)
    fill = values[0] if fill is None and values.size else (0 if fill is None else fill)
    out = np.full(size, fill, dtype=values.dtype)
    out[:min(size, values.size)] = values[:size]
    return out


def _unique_all_reference(x, size):
    values, index, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    fill_index = index[0] if index.size else 0
    return (_padded(values, size), _padded(index, size, fill_index), inverse,
            _padded(counts, size, 0))


NUMPY_CASES = [
    numpy_case("sort_axis0", lambda m, x: m.sort(x, axis=0), A(4, 3, kind="spread")),
    numpy_case("sort_flat", lambda m, x: m.sort(x, axis=None), A(2, 3, kind="spread")),
    numpy_case("sort_descending", lambda m, x: m.sort(x, descending=True),
               A(3, 4, kind="spread"), reference=lambda x: np.flip(np.sort(x), -1)),
    numpy_case("argsort_ties", lambda m, x: m.argsort(x, axis=1, kind="stable"),
               A(3, 6, kind="int"), diff=False),
    numpy_case("argsort_descending_ties", lambda m, x: m.argsort(x, descending=True),
               A(2, 7, kind="int"), diff=False,
               reference=lambda x: np.flip(x.shape[-1] - 1 - np.argsort(np.flip(x, -1), -1,
                                                                         kind="stable"), -1)),
    numpy_case("argsort_dtype_int32", lambda m, x: m.argsort(x, axis=0, dtype=np.int32),
               A(5, 3, kind="int"), diff=False,
               reference=lambda x: np.argsort(x, axis=0, kind="stable").astype(np.int32)),
    numpy_case("lexsort", lambda m, a, b: m.lexsort((a, b)), A(2, 7, kind="int"),
               A(2, 7, kind="int"), diff=False),
    numpy_case("lexsort_scalar_keys", lambda m, k: m.lexsort(k), A(3, kind="int"),
               diff=False, reference=lambda k: np.asarray(np.lexsort(k))),
    numpy_case("sort_complex", lambda m, x: m.sort_complex(x), A(5, kind="spread"),
               dtypes=(F64, F32)),
    numpy_case("partition_kth", lambda m, x: m.partition(x, 2)[..., 2], A(3, 5, kind="spread")),
    numpy_case("argpartition_kth", lambda m, x: m.argpartition(x, 1, axis=0)[1],
               A(4, 3, kind="spread"), diff=False),
    numpy_case("searchsorted_left", lambda m, a, v: m.searchsorted(m.sort(a), v),
               A(6, kind="int"), A(2, 3, kind="int"), diff=False),
    numpy_case("searchsorted_right_sorter",
               lambda m, a, v: m.searchsorted(a, v, side="right", sorter=m.argsort(a)),
               A(5), A(4), diff=False),
    numpy_case("searchsorted_compare_all",
               lambda m, a, v: m.searchsorted(m.sort(a), v, side="right",
                                              **({"method": "compare_all"} if m is not np
                                                 else {})),
               A(6, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("searchsorted_sort", lambda m, a, v: m.searchsorted(
                   m.sort(a), v, **({"method": "sort"} if m is not np else {})),
               A(6, kind="int"), A(2, 3, kind="int"), diff=False),
    numpy_case("searchsorted_sort_right_nans", lambda m, a, v: m.searchsorted(
                   m.sort(a), v, side="right", **({"method": "sort"} if m is not np else {})),
               A(7, kind="nonfinite"), A(5, kind="nonfinite"), dtypes=(F64, F32), diff=False),
    numpy_case("digitize", lambda m, x, b: m.digitize(x, m.sort(b)), A(2, 4), A(5),
               diff=False),
    numpy_case("digitize_method_none", lambda m, x, b: m.digitize(
                   x, m.sort(b), **({"method": None} if m is not np else {})),
               A(5, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("digitize_right_decreasing",
               lambda m, x, b: m.digitize(x, m.flip(m.sort(b)), right=True),
               A(6, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("quantile_linear_axis1", lambda m, x, q: m.quantile(x, _in_01(m, q), axis=1),
               A(3, 5, kind="spread"), A(2, 2), dtypes=(F64, F32)),
    numpy_case("quantile_traced_q", lambda m, x, q: m.quantile(x, _in_01(m, q), axis=0),
               A(5, 2, kind="spread"), A(3), dtypes=(F64, F32)),
    numpy_case("quantile_lower_keepdims",
               lambda m, x: m.quantile(x, 0.4, axis=(0, 2), method="lower", keepdims=True),
               A(2, 3, 2, kind="spread")),
    numpy_case("quantile_higher", lambda m, x: m.quantile(x, 0.3, method="higher"),
               A(2, 3, kind="spread")),
    numpy_case("quantile_midpoint", lambda m, x: m.quantile(x, 0.5, axis=-1, method="midpoint"),
               A(2, 4, kind="spread")),
    numpy_case("quantile_nearest", lambda m, x: m.quantile(x, 0.5, axis=0, method="nearest"),
               A(5, 2, kind="spread")),
    numpy_case("quantile_inverted_cdf",
               lambda m, x, q: m.quantile(x, _in_01(m, q), axis=1, method="inverted_cdf"),
               A(3, 10, kind="spread"), A(4)),
    numpy_case("quantile_weighted",
               lambda m, x, w: m.quantile(x, 0.37, axis=(0, 2), method="inverted_cdf",
                                          weights=w), A(2, 3, 4, kind="spread"),
               A(2, 3, 4, kind="pos"),
               reference=_weighted(lambda x, w: np.quantile(x, 0.37, axis=(0, 2),
                                                            method="inverted_cdf", weights=w),
                                   since="2.4.0")),
    numpy_case("percentile_weighted_reduced_axis",
               lambda m, x, w: m.percentile(x, 61., axis=0, method="inverted_cdf", weights=w,
                                            keepdims=True),
               A(6, 2, kind="spread"), A(6, kind="pos"),
               reference=_weighted(lambda x, w: np.percentile(
                   x, 61., axis=0, method="inverted_cdf",
                   weights=np.broadcast_to(w[:, None], x.shape), keepdims=True))),
    numpy_case("percentile", lambda m, x: m.percentile(x, 30, axis=1), A(2, 6, kind="spread")),
    numpy_case("median_even", lambda m, x: m.median(x, axis=0), A(4, 3, kind="spread")),
    numpy_case("median_flat", lambda m, x: m.median(x), A(3, 3, kind="spread")),
    numpy_case("nanquantile", lambda m, x: m.nanquantile(x, 0.7, axis=1),
               A(3, 7, kind="nonfinite"), dtypes=(F64, F32), diff=False,
               reference=lambda x: _nanquantile_with_infinities(x, 0.7)),
    numpy_case("nanpercentile", lambda m, x: m.nanpercentile(x, 60, axis=0),
               A(4, 3, kind="spread"), dtypes=(F64, F32)),
    numpy_case("nanquantile_inverted_cdf",
               lambda m, x, q: m.nanquantile(x, _in_01(m, q), axis=1, method="inverted_cdf"),
               A(3, 7, kind="nonfinite"), A(3), dtypes=(F64, F32), diff=False),
    numpy_case("nanquantile_weighted",
               lambda m, x, w: m.nanquantile(x, 0.5, axis=1, method="inverted_cdf", weights=w),
               A(3, 7, kind="nonfinite"), A(3, 7, kind="pos"), dtypes=(F64, F32), diff=False,
               reference=_weighted(lambda x, w: np.nanquantile(x, 0.5, axis=1,
                                                               method="inverted_cdf",
                                                               weights=w))),
    numpy_case("nanmedian", lambda m, x: m.nanmedian(x, axis=1, keepdims=True),
               A(2, 5, kind="spread")),
    numpy_case("unique_sized", lambda m, x: m.unique(x, size=8) if m is not np else
               _padded(np.unique(x), 8), A(9, kind="int"), diff=False),
    numpy_case("unique_values_differentiable",
               lambda m, x: m.unique_values(x, size=6) if m is not np else
               _padded(np.sort(np.unique_values(x)), 6), A(2, 3, kind="spread")),
    numpy_case("unique_all", lambda m, x: tuple(m.unique_all(x, size=7)) if m is not np else
               _unique_all_reference(x, 7), A(9, kind="int"), diff=False),
    numpy_case("unique_counts", lambda m, x: tuple(m.unique_counts(x, size=3)) if m is not np
               else tuple(_padded(r, 3, 0 if i else None) for i, r in
                          enumerate(np.unique_counts(x))), A(3, 3, kind="int"), diff=False),
    numpy_case("unique_inverse", lambda m, x: tuple(m.unique_inverse(x, size=9)) if m is not np
               else (_padded(np.unique(x), 9), np.unique_inverse(x)[1]), A(3, 3, kind="int"),
               diff=False),
    numpy_case("isin", lambda m, x, y: m.isin(x, y), A(3, 4, kind="int"), A(3, kind="int"),
               diff=False),
    numpy_case("isin_invert", lambda m, x, y: m.isin(x, y, invert=True), A(5, kind="int"),
               A(2, 2, kind="int"), diff=False),
    numpy_case("isin_binary_search", lambda m, x, y: m.isin(
                   x, y, **({"method": "binary_search"} if m is not np else {})),
               A(3, 4, kind="grid"), A(5, kind="grid"), diff=False),
    numpy_case("isin_sort_invert_nans", lambda m, x, y: m.isin(
                   x, y, invert=True, **({"method": "sort"} if m is not np else {})),
               A(2, 5, kind="nonfinite"), A(6, kind="nonfinite"), dtypes=(F64, F32), diff=False),
    numpy_case("intersect1d", lambda m, x, y: m.intersect1d(x, y, size=5) if m is not np else
               _padded(np.intersect1d(x, y), 5), A(6, kind="int"), A(5, kind="int"),
               diff=False),
    numpy_case("union1d", lambda m, x, y: m.union1d(x, y, size=8) if m is not np else
               _padded(np.union1d(x, y), 8), A(4, kind="int"), A(2, 2, kind="int"), diff=False),
    numpy_case("setdiff1d", lambda m, x, y: m.setdiff1d(x, y, size=6) if m is not np else
               _padded(np.setdiff1d(x, y), 6, 0), A(6, kind="int"), A(3, kind="int"),
               diff=False),
    numpy_case("setxor1d", lambda m, x, y: m.setxor1d(x, y, size=7) if m is not np else
               _padded(np.setxor1d(x, y), 7), A(5, kind="int"), A(4, kind="int"), diff=False),
    numpy_case("setxor1d_nans", lambda m, x, y: m.setxor1d(x, y, size=9) if m is not np else
               _padded(np.setxor1d(x, y), 9), A(5, kind="nonfinite"), A(4, kind="nonfinite"),
               dtypes=(F64, F32), diff=False),
    # x[:2] in both arrays is left out; it moves with itself, so it stays a tie
    numpy_case("setxor1d_differentiable",
               lambda m, x, y: m.setxor1d(x, m.concatenate([x[:2], y + 0.25]), size=8)
               if m is not np else _padded(np.setxor1d(x, np.concatenate([x[:2], y + 0.25])), 8),
               A(4, kind="spread"), A(3, kind="spread")),
    numpy_case("intersect1d_none_in_common_pads_zero",
               lambda m, x, y: m.intersect1d(x, y + 10, size=3) if m is not np
               else _padded(np.intersect1d(x, y + 10), 3), A(4, kind="grid"), A(2, kind="grid"),
               diff=False),
]
