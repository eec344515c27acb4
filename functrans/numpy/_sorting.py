"""Sorting, searching, order statistics and set operations, all built on ``lax.sort``
(``functrans/primitives/sorting.py``) and gathers, so they differentiate and batch.

- ``sort``, ``argsort`` (always stable; ``descending=``), ``lexsort``, ``sort_complex``,
  ``partition`` and ``argpartition`` (a full sort: a valid partition);
- ``searchsorted`` (a binary search, or comparing with every element) and ``digitize``;
- ``median``, ``quantile``, ``percentile`` and their ``nan*`` forms: sort, then gather the
  one or two order statistics each method reads;
- ``unique`` and its four array-API forms, ``isin``, ``intersect1d``, ``union1d``,
  ``setdiff1d``, ``setxor1d``: sort, mark the first of each run of equal values, and pack
  the marked ones to the front.  The output's length is the number of marked values, so
  under a transform whose values are abstract (``vmap``) it must be given as ``size=``
  (JAX's rule; ``fill_value=`` pads).  Under differentiation alone the values are concrete
  and ``size`` may be left out.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from functrans import core, lax
from functrans.core import ConcretizationTypeError, Tracer, get_aval
from functrans.numpy._shape import concatenate, ravel
from functrans.numpy._util import (arg, axis_tuple, dtype_of, promote_inexact, shape_of,
                                   static_int)
from functrans.primitives import shape as shape_ops
from functrans.primitives.sorting import positions_along, sort_descending, take_along

__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition",
           "searchsorted", "digitize", "median", "quantile", "percentile", "nanmedian",
           "nanquantile", "nanpercentile", "unique", "unique_values", "unique_counts",
           "unique_inverse", "unique_all", "isin", "intersect1d", "union1d", "setdiff1d",
           "setxor1d"]

_INDEX = np.dtype(np.int64)  # NumPy's intp


def _common_dtype(x, y) -> np.dtype:
    return core.result_type(get_aval(x), get_aval(y))[0]


def _array(a):
    """``a`` as an operand with at least the value NumPy would make of it."""
    a = arg(a)
    return np.asarray(a) if isinstance(a, (int, float, complex, bool)) else a


def _flat_or_axis(a, axis, name: str):
    """``a`` and the axis to sort along: the flattened ``a`` and 0 when ``axis`` is None."""
    a = _array(a)
    if axis is None:
        return ravel(a), 0
    shape = shape_of(a)
    if not shape:
        raise ValueError(f"{name}: axis {axis} is out of bounds for a scalar (rank 0); pass "
                         "axis=None or an array with an axis")
    axis = static_int(axis, name, "axis")
    return a, shape_ops.normalize_axis(axis, len(shape), f"{name}: axis")


def _check_kind_order(name: str, kind, order) -> None:
    if order is not None:
        raise NotImplementedError(f"{name}: order= (sorting structured arrays by field) is not "
                                  "supported; sort by the fields' arrays with lexsort")
    if kind not in (None, "stable", "mergesort", "quicksort", "heapsort"):
        raise ValueError(f"{name}: kind={kind!r} is not a sorting algorithm NumPy knows")


# -- sort, argsort, lexsort, partition -------------------------------------------------------


def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False):
    """``a`` sorted along ``axis`` (the flattened ``a`` if None), NaNs last (first when
    ``descending``).  The sort is always stable (``kind`` is accepted and ignored); its
    derivative moves each tangent with its element.

    >>> import functrans.numpy as fnp
    >>> fnp.sort(fnp.asarray([[3., 1.], [0., 2.]]), axis=None)
    array([0., 1., 2., 3.])
    >>> fnp.sort(fnp.asarray([1., float("nan"), 3.]), descending=True)
    array([nan,  3.,  1.])
    """
    _check_kind_order("sort", kind, order)
    a, axis = _flat_or_axis(a, axis, "sort")
    if descending:
        return sort_descending(a, axis)[0]
    return lax.sort(a, dimension=axis)


def _index_dtype(name: str, dtype) -> np.dtype:
    """The integer dtype of positions: ``dtype``, or int64 (NumPy's ``intp``) if None."""
    if dtype is None:
        return _INDEX
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"{name}: dtype must be an integer type for the indices, got {dtype}")
    return dtype


def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False, dtype=None):
    """The positions that sort ``a`` along ``axis`` (int64, or the integer ``dtype``
    given).  Stable: equal values keep their order, with ``descending=True`` too (the
    first of equal values comes first).

    >>> import functrans.numpy as fnp
    >>> fnp.argsort(fnp.asarray([2., 1., 2., 0.]))
    array([3, 1, 0, 2])
    >>> fnp.argsort(fnp.asarray([2., 1., 2., 0.]), descending=True, dtype="int32")
    array([0, 2, 1, 3], dtype=int32)
    """
    _check_kind_order("argsort", kind, order)
    dtype = _index_dtype("argsort", dtype)
    a, axis = _flat_or_axis(a, axis, "argsort")
    if descending:
        return sort_descending(a, axis, dtype)[1]
    return lax.sort((a, positions_along(a, axis, dtype)), dimension=axis)[1]


def lexsort(keys, axis: int = -1):
    """The positions that sort by several keys: the **last** key is the primary one, the
    one before breaks its ties, and so on (NumPy's order); stable.  A 2-D array is a
    sequence of its rows; a 1-D array is a sequence of scalar keys, sorted at position 0.

    >>> import functrans.numpy as fnp
    >>> fnp.lexsort((fnp.asarray([3, 1, 2]), fnp.asarray([1, 0, 1])))
    array([1, 2, 0])
    >>> fnp.lexsort(fnp.asarray([3, 1, 2]))
    array(0)
    """
    if isinstance(keys, (list, tuple)):
        keys = [_array(k) for k in keys]
    else:
        keys = _array(keys)
        keys = [keys[i] for i in range(shape_of(keys)[0])] if shape_of(keys) else [keys]
    if not keys:
        raise TypeError("lexsort: needs at least one key")
    shape = np.broadcast_shapes(*(shape_of(k) for k in keys))
    if not shape:  # scalar keys (a 1-D array is a sequence of them): one position, 0
        if static_int(axis, "lexsort", "axis") not in (0, -1):
            raise ValueError(f"lexsort: axis {axis} is out of bounds for scalar keys (rank 0)")
        zero = lax.convert_element_type(lax.zeros_like(keys[0]), _INDEX)
        return np.asarray(zero) if isinstance(zero, np.generic) else zero
    keys = [shape_ops.broadcast_to(k, shape) for k in keys]
    axis = shape_ops.normalize_axis(static_int(axis, "lexsort", "axis"), len(shape),
                                    "lexsort: axis")
    operands = keys[::-1] + [positions_along(keys[0], axis, _INDEX)]
    return lax.sort(tuple(operands), dimension=axis, num_keys=len(keys))[-1]


def sort_complex(a):
    """``a`` sorted along its last axis by real part, then imaginary part, as complex.

    >>> import functrans.numpy as fnp
    >>> fnp.sort_complex(fnp.asarray([2., 1.]))
    array([1.+0.j, 2.+0.j])
    """
    a = sort(a)
    dtype = dtype_of(a)
    if dtype.kind != "c":
        small = dtype.kind in "iub" and dtype.itemsize <= 2  # NumPy's choice
        a = lax.convert_element_type(a, np.complex64 if small else np.complex128)
    return a


def _check_kth(name: str, kth, n: int):
    for k in np.atleast_1d(kth):
        k = static_int(k, name, "kth")
        if not -n <= k < n:
            raise ValueError(f"{name}: kth={k} is out of bounds for an axis of size {n}")


def partition(a, kth, axis: int | None = -1):
    """``a`` rearranged so that the element at ``kth`` is where sorting would put it, none
    before it larger and none after it smaller.  Here the whole axis is sorted, which is
    one valid partition (NumPy's order of the other elements is unspecified, JAX's
    differs from NumPy's too); the derivative follows the elements.

    >>> import functrans.numpy as fnp
    >>> float(fnp.partition(fnp.asarray([5., 1., 4., 2., 3.]), 2)[2])
    3.0
    """
    a, axis = _flat_or_axis(a, axis, "partition")
    _check_kth("partition", kth, shape_of(a)[axis])
    return lax.sort(a, dimension=axis)


def argpartition(a, kth, axis: int | None = -1):
    """The positions that ``partition`` would move to each place (a full stable sort's).

    >>> import functrans.numpy as fnp
    >>> int(fnp.argpartition(fnp.asarray([5., 1., 4., 2., 3.]), 0)[0])
    1
    """
    a, axis = _flat_or_axis(a, axis, "argpartition")
    _check_kth("argpartition", kth, shape_of(a)[axis])
    return argsort(a, axis)


# -- searchsorted, digitize ------------------------------------------------------------------


def _nan_aware_less(x, y):
    """``x < y`` in sorting order: NaNs after every number; complex by (real, imag)."""
    if dtype_of(x).kind == "c":
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(lax.lt(xr, yr), lax.bitwise_and(lax.eq(xr, yr),
                                                              lax.lt(lax.imag(x), lax.imag(y))))
    less = lax.lt(x, y)
    if dtype_of(x).kind != "f":
        return less
    return lax.bitwise_or(less, lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))


_SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Where to insert ``v`` into the sorted 1-D ``a`` to keep it sorted: for ``side="left"``
    the first position ``i`` with ``v <= a[i]``, for ``"right"`` the first with
    ``v < a[i]`` (int64, ``v``'s shape; NaNs sort last, as NumPy).  ``sorter`` holds the
    positions that sort an unsorted ``a``.

    ``method="scan"`` is a binary search: ``ceil(log2(len(a) + 1))`` rounds of one gather
    and one comparison each, in a ``lax.fori_loop``; ``"scan_unrolled"`` is the same search
    with its rounds written out (faster for short ``a``); ``"sort"`` sorts ``a`` and ``v``
    together and subtracts each value's rank among the ``v`` alone (no loop, memory
    ``len(a) + v.size``); ``"compare_all"`` compares every ``v`` with every ``a`` and
    counts (``len(a) * v.size`` memory, no loop).  The result is an integer: it has no
    derivative.

    >>> import functrans.numpy as fnp
    >>> a = fnp.asarray([1., 2., 2., 3.])
    >>> fnp.searchsorted(a, fnp.asarray([2., 2.5, 9.]))
    array([1, 3, 4])
    >>> int(fnp.searchsorted(a, 2., side="right", method="compare_all"))
    3
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in _SEARCH_METHODS:
        raise ValueError(f"searchsorted: method must be one of {_SEARCH_METHODS}, got "
                         f"{method!r}")
    a, v = _array(a), _array(v)
    if len(shape_of(a)) != 1:
        raise ValueError(f"searchsorted: a must be 1-D, got shape {shape_of(a)}")
    if sorter is not None:
        a = take_along(a, _array(sorter), 0)
    dtype = _common_dtype(a, v)
    a, v = lax.convert_element_type(a, dtype), lax.convert_element_type(v, dtype)
    n = shape_of(a)[0]

    if n == 0:
        return lax.convert_element_type(lax.zeros_like(v), _INDEX)
    if method == "sort":
        return _search_by_sorting(a, v, side)
    if method == "compare_all":
        rows = shape_ops.broadcast_in_dim(a, shape_of(v) + (n,), (len(shape_of(v)),))
        v = shape_ops.expand_dims(v, (len(shape_of(v)),))
        hits = lax.convert_element_type(_goes_right(rows, v, side), _INDEX)
        return shape_ops.reduce_sum(hits, (len(shape_of(hits)) - 1,))

    lo = lax.convert_element_type(lax.zeros_like(v), _INDEX)
    hi = lax.add(lo, n)

    def step(_, bounds):
        lo, hi = bounds
        active = lax.lt(lo, hi)
        # lax has no integer division; halving in float64 is exact below 2**53.
        mid = lax.convert_element_type(
            lax.floor(lax.mul(lax.convert_element_type(lax.add(lo, hi), np.float64), 0.5)),
            _INDEX)
        element = lax.gather(a, shape_ops.expand_dims(mid, (len(shape_of(mid)),)))
        right = _goes_right(element, v, side)
        lo = lax.select(lax.bitwise_and(active, right), lax.add(mid, 1), lo)
        hi = lax.select(lax.bitwise_and(active, lax.bitwise_not(right)), mid, hi)
        return lo, hi

    rounds = int(n).bit_length()
    if method == "scan":
        return lax.fori_loop(0, rounds, step, (lo, hi))[0]
    for i in range(rounds):
        lo, hi = step(i, (lo, hi))
    return lo


def _ranks(x):
    """Each element's position in the stable sort of the 1-D ``x``."""
    positions = positions_along(x, 0, _INDEX)
    order = lax.sort((x, positions), dimension=0)[1]
    return lax.sort((order, positions), dimension=0)[1]  # the inverse permutation


def _search_by_sorting(a, v, side: str):
    """``searchsorted`` by one stable sort of ``a`` and ``v`` together: the values before
    ``v[j]`` are the elements of ``a`` before it and the ``v`` that sort before it on their
    own.  For ``side="left"`` the ``v`` come first (ahead of equal elements of ``a``), for
    ``"right"`` after them."""
    n, flat = shape_of(a)[0], ravel(v)
    m = shape_of(flat)[0]
    if side == "left":
        rank = lax.slice(_ranks(concatenate([flat, a])), [0], [m])
    else:
        rank = lax.slice(_ranks(concatenate([a, flat])), [n], [n + m])
    return shape_ops.reshape(lax.sub(rank, _ranks(flat)), shape_of(v))


def _goes_right(elements, v, side: str):
    """For each element of the sorted array: does ``v`` go after it (``side`` as in
    ``searchsorted``)?"""
    if side == "left":
        return _nan_aware_less(elements, v)
    return lax.bitwise_not(_nan_aware_less(v, elements))


def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """The bin of each ``x``: for increasing ``bins``, ``i`` with ``bins[i-1] <= x <
    bins[i]`` (``bins[i-1] < x <= bins[i]`` if ``right``); decreasing ``bins`` count from
    the other end, as NumPy.  Whether ``bins`` increase is read from its ends, so traced
    bins work.  ``method`` is ``searchsorted``'s (None: ``"scan"``).

    >>> import functrans.numpy as fnp
    >>> fnp.digitize(fnp.asarray([0.5, 1.0, 2.5]), fnp.asarray([1., 2., 3.]))
    array([0, 1, 2])
    """
    x, bins = _array(x), _array(bins)
    if len(shape_of(bins)) != 1:
        raise ValueError(f"digitize: bins must be 1-D, got shape {shape_of(bins)}")
    side = "left" if right else "right"
    method = "scan" if method is None else method
    n = shape_of(bins)[0]
    if n == 0:
        return lax.convert_element_type(lax.zeros_like(x), _INDEX)
    increasing = searchsorted(bins, x, side, method=method)
    decreasing = lax.sub(n, searchsorted(shape_ops.rev(bins, (0,)), x, side, method=method))
    ends = lax.slice(bins, [0], [1]), lax.slice(bins, [n - 1], [n])
    rising = shape_ops.reshape(lax.ge(ends[1], ends[0]), ())
    return lax.select(shape_ops.broadcast_to(rising, shape_of(increasing)), increasing,
                      decreasing)


# -- quantiles ---------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")
_PICKING = ("lower", "higher", "nearest", "inverted_cdf")  # return an element: a's dtype


def _take_last(s, idx):
    """``out[q..., l...] = s[l..., idx[q..., l...]]`` for ``s`` of shape ``(*lead, n)``
    and ``idx`` of shape ``(*qshape, *lead)``."""
    lead = shape_of(s)[:-1]
    qshape = shape_of(idx)[:len(shape_of(idx)) - len(lead)]
    nq = len(qshape)
    # (*qshape, *lead) -> (*lead, m)
    idx = shape_ops.transpose_axes(idx, tuple(range(nq, nq + len(lead))) + tuple(range(nq)))
    idx = shape_ops.reshape(idx, lead + (math.prod(qshape),))
    out = take_along(s, idx, len(lead))
    out = shape_ops.reshape(out, lead + qshape)
    nl = len(lead)
    return shape_ops.transpose_axes(out, tuple(range(nl, nl + nq)) + tuple(range(nl)))


def _lerp(low, high, diff, t):
    """NumPy's interpolation, kept to its rounding: ``low + diff t`` below ``t = 1/2``,
    ``high - diff (1 - t)`` from there on, with ``diff = high - low`` (exact at both ends).
    Where an end is infinite (``diff`` is not finite) the answer is the end at ``t = 0``
    or ``1`` and ``low (1 - t) + high t`` between them: ``median([1, inf, inf])`` is inf,
    not ``inf - inf``, and the quantiles between ``-inf`` and a number are ``-inf``."""
    finite = lax.select(lax.ge(t, 0.5), lax.sub(high, lax.mul(diff, lax.sub(1, t))),
                        lax.add(low, lax.mul(diff, t)))
    weighted = lax.add(lax.mul(low, lax.sub(1, t)), lax.mul(high, t))
    infinite = lax.select(lax.eq(t, 0), low, lax.select(lax.eq(t, 1), high, weighted))
    return lax.select(lax.is_finite(diff), finite, infinite)


def _weights_along(name: str, weights, shape: tuple, axis, axes: tuple):
    """``weights`` broadcast to ``a``'s ``shape``: given with that shape, or (with an
    ``axis``) with the shape of the reduced axes in the order ``axis`` names them, as
    NumPy; float64, in which NumPy sums them."""
    weights = arg(weights)
    if dtype_of(weights).kind == "c":
        raise TypeError(f"{name}: weights must be real, got {dtype_of(weights)}")
    wshape = shape_of(weights)
    if wshape != shape:
        if axis is None:
            raise ValueError(f"{name}: weights of shape {wshape} must have the shape {shape} "
                             f"of a when axis is None (or pass axis= and weights of the "
                             f"reduced axes' shape)")
        named = tuple(shape_ops.normalize_axis(ax, len(shape), f"{name}: axis")
                      for ax in axis_tuple(axis, len(shape)))
        if wshape != tuple(shape[ax] for ax in named):
            raise ValueError(f"{name}: weights of shape {wshape} must have the shape {shape} "
                             f"of a or the shape {tuple(shape[ax] for ax in named)} of the "
                             f"reduced axes {named}")
        weights = shape_ops.transpose_axes(weights, tuple(int(i) for i in np.argsort(named)))
        weights = shape_ops.broadcast_in_dim(weights, shape, axes)
    return lax.convert_element_type(weights, np.float64)


def _cdf_positions(name: str, s, w, q, last, ignore_nan: bool, out_shape, lead_dims):
    """``inverted_cdf``'s weighted positions, NumPy's: the first sorted element whose
    cumulative weight reaches ``q`` times the total (elements of zero cumulative weight
    are passed over), and a mask of the rows whose weights NumPy rejects (a negative,
    NaN or infinite weight, or a zero total), where the quantile is NaN."""
    last_axis = len(shape_of(s)) - 1
    nan_data = lax.ne(s, s)
    if ignore_nan:  # NaNs and their weights are left out, as NumPy
        w = lax.select(nan_data, lax.zeros_like(w), w)
    cumulative = lax.cumsum(w, axis=last_axis)
    n = shape_of(s)[-1]
    total = lax.slice(cumulative, [0] * last_axis + [n - 1], shape_of(s))
    usable = lax.bitwise_and(lax.is_finite(total), lax.gt(total, 0))
    # rows of no usable total divide by 1 (they are NaN or raise): no 0/0 on the way
    total = lax.select(usable, total, lax.add(lax.zeros_like(total), 1))
    cdf = lax.convert_element_type(lax.div(cumulative, total), dtype_of(q))
    negative = shape_ops.reduce_sum(lax.convert_element_type(lax.lt(w, 0), _INDEX),
                                    (last_axis,))
    bad_total = shape_ops.reshape(lax.bitwise_not(usable), shape_of(s)[:-1])
    if ignore_nan:  # an all-NaN row is NaN anyway, and NumPy accepts its weights
        valid = shape_ops.reduce_sum(lax.convert_element_type(lax.bitwise_not(nan_data),
                                                              _INDEX), (last_axis,))
        bad_total = lax.bitwise_and(bad_total, lax.gt(valid, 0))
    # checked on host values only: on a device, as under jit, such rows are NaN (no sync)
    if isinstance(negative, (np.ndarray, np.generic)) and np.any(negative):
        raise ValueError(f"{name}: weights must be non-negative (as NumPy; under a transform "
                         "the quantiles of such rows are NaN)")
    if isinstance(bad_total, (np.ndarray, np.generic)) and np.any(bad_total):
        raise ValueError(f"{name}: the weights include NaN or inf, or are all zero along the "
                         "reduced axes (as NumPy; under a transform such quantiles are NaN)")
    bad = lax.bitwise_or(lax.gt(negative, 0), bad_total)
    nq = len(out_shape) - len(lead_dims)
    cdf = shape_ops.broadcast_in_dim(cdf, out_shape + (n,), tuple(range(nq, len(out_shape) + 1)))
    q = shape_ops.expand_dims(q, (len(out_shape),))
    before = lax.bitwise_or(lax.lt(cdf, q), lax.eq(cdf, 0))
    pos = shape_ops.reduce_sum(lax.convert_element_type(before, _INDEX), (len(out_shape),))
    pos = lax.min(pos, last if isinstance(last, int) else lax.convert_element_type(last, _INDEX))
    return pos, shape_ops.broadcast_in_dim(bad, out_shape, lead_dims)


def _quantile(name: str, a, q, axis, method: str, keepdims: bool, ignore_nan: bool,
              weights=None):
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"{name}: only method='inverted_cdf' supports weights, got "
                         f"method={method!r} (as NumPy; JAX raises NotImplementedError)")
    a, q = _array(a), promote_inexact(arg(q))
    if dtype_of(a).kind == "c" or dtype_of(q).kind == "c":
        raise TypeError(f"{name}: complex values have no order for quantiles")
    if isinstance(q, (np.ndarray, np.generic, float, int)):
        if np.any((np.asarray(q) < 0) | (np.asarray(q) > 1)):
            raise ValueError(f"{name}: quantiles must be in the range [0, 1]"
                             + (" (percentiles in [0, 100])" if "percentile" in name else ""))
    if method in _PICKING:  # picks an element: a's own dtype, as NumPy
        dtype = dtype_of(a)
    else:  # interpolates: a (at least float64 for integers) promoted with q
        a = promote_inexact(a)
        dtype = _common_dtype(a, q)
    if core.is_python_scalar(q):  # made where `a` lives, not copied there
        q = shape_ops.reshape(lax.add(lax.iota(dtype_of(q), 1, like=a), q), ())
    shape = given_shape = shape_of(a)
    named = [shape_ops.normalize_axis(ax, len(shape), f"{name}: axis")
             for ax in axis_tuple(axis, len(shape))]
    if len(set(named)) != len(named):
        raise ValueError(f"{name}: axis={axis!r} names an axis more than once (repeated axis)")
    axes = tuple(sorted(named))
    if weights is not None:
        weights = _weights_along(name, weights, shape, axis, axes)
    if not shape:  # a scalar: its own quantile
        a, shape, axes = shape_ops.reshape(a, (1,)), (1,), (0,)
        weights = None if weights is None else shape_ops.reshape(weights, (1,))
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    lead = tuple(shape[i] for i in kept)
    n = math.prod(shape[i] for i in axes)
    if n == 0:
        raise ValueError(f"{name}: cannot take quantiles of an empty axis (shape {shape})")

    def rows(x):  # the reduced axes last, as one
        return shape_ops.reshape(shape_ops.transpose_axes(x, kept + axes), lead + (n,))

    if weights is None:
        s = lax.sort(rows(a), dimension=len(lead))  # NaNs last
    else:
        s, weights = lax.sort((rows(a), rows(weights)), dimension=len(lead))
    qshape = shape_of(q)
    out_shape, lead_dims = qshape + lead, tuple(range(len(qshape), len(qshape) + len(lead)))
    q = shape_ops.broadcast_in_dim(q, out_shape, tuple(range(len(qshape))))
    nans = lax.ne(s, s)
    if ignore_nan:  # the valid values are the first `count` of each sorted row
        count = shape_ops.reduce_sum(lax.convert_element_type(lax.bitwise_not(nans), _INDEX),
                                     (len(lead),))
        last = lax.convert_element_type(
            lax.sub(shape_ops.broadcast_in_dim(count, out_shape, lead_dims), 1), dtype_of(q))
    else:
        last = n - 1
    pos = lax.mul(q, last)
    lo, hi = lax.floor(pos), lax.ceil(pos)

    def at(p):
        return _take_last(s, lax.convert_element_type(p, _INDEX))

    rejected = None
    if method == "lower":
        out = at(lo)
    elif method == "higher":
        out = at(hi)
    elif method == "nearest":
        out = at(lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN))
    elif method == "inverted_cdf" and weights is None:
        # NumPy's: the element at ceil(count q) - 1 (at least 0), rounded as NumPy does
        virtual = lax.sub(lax.mul(q, last + 1 if isinstance(last, int) else lax.add(last, 1)), 1)
        below = lax.floor(virtual)
        out = at(lax.max(lax.select(lax.eq(virtual, below), below, lax.add(below, 1)),
                         lax.zeros_like(below)))
    elif method == "inverted_cdf":
        where, rejected = _cdf_positions(name, s, weights, q, last, ignore_nan, out_shape,
                                         lead_dims)
        out = _take_last(s, where)
    else:
        t = lax.sub(pos, lo) if method == "linear" else lax.mul(lax.zeros_like(pos), 0.5)
        if method == "midpoint":
            t = lax.add(t, 0.5)
        low, high = at(lo), at(hi)
        diff = lax.convert_element_type(lax.sub(high, low), dtype)  # in a's dtype, as NumPy
        out = _lerp(*(lax.convert_element_type(v, dtype) for v in (low, high, diff, t)))
    if dtype.kind in "fc":
        if ignore_nan:
            empty = lax.lt(last, 0)  # an all-NaN row
        else:  # any NaN makes the quantile NaN, as NumPy
            any_nan = shape_ops.reduce_sum(lax.convert_element_type(nans, _INDEX), (len(lead),))
            empty = shape_ops.broadcast_in_dim(lax.gt(any_nan, 0), out_shape, lead_dims)
        if rejected is not None:
            empty = lax.bitwise_or(empty, rejected)
        out = lax.select(empty, lax.add(lax.zeros_like(out), math.nan), out)
    if keepdims:
        out = shape_ops.reshape(out, qshape + tuple(1 if i in axes else d
                                                    for i, d in enumerate(given_shape)))
    return out


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or an array) of ``a`` over
    ``axis`` (all axes if None): shape ``q.shape + (the kept axes)``.  ``method`` picks
    between the two order statistics around ``q * (n - 1)``: ``"linear"`` interpolates,
    ``"lower"``/``"higher"`` take one, ``"midpoint"`` their mean, ``"nearest"`` the nearer
    (halves to the even position, as NumPy).  ``"inverted_cdf"`` takes the first element
    at which the empirical distribution reaches ``q``: the element at ``ceil(n q) - 1``,
    or with ``weights`` (of ``a``'s shape, or of the reduced axes' shape; only this method
    takes them, as NumPy and JAX) the first whose cumulative weight reaches ``q`` times
    the total.  A NaN in ``a`` makes the quantile NaN, and so do weights NumPy rejects
    (negative, NaN or infinite, or all zero) where they are traced (or on a device);
    such NumPy arrays raise, as in NumPy.

    The derivative flows to the one or two elements read (through the sort's permutation:
    among equal values, to the one the stable sort placed there); with ``"linear"`` it
    also flows to ``q``.  The weights only choose the element: their derivative is zero.

    >>> import functrans.numpy as fnp
    >>> fnp.quantile(fnp.asarray([4., 1., 3., 2.]), fnp.asarray([0.5, 1.0]))
    array([2.5, 4. ])
    >>> fnp.quantile(fnp.asarray([4., 1., 3., 2.]), 0.5, method="inverted_cdf",
    ...              weights=fnp.asarray([1., 1., 1., 3.]))
    array(2.)
    """
    if out is not None:
        raise NotImplementedError("quantile: out= is not supported (arrays are immutable)")
    return _quantile("quantile", a, q, axis, method, keepdims, ignore_nan=False,
                     weights=weights)


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, weights=None):
    """``quantile`` with ``q`` in percent (0 to 100).

    >>> import functrans.numpy as fnp
    >>> fnp.percentile(fnp.asarray([1., 2., 3., 4., 5.]), 25)
    array(2.)
    """
    if out is not None:
        raise NotImplementedError("percentile: out= is not supported (arrays are immutable)")
    q = promote_inexact(arg(q))
    return _quantile("percentile", a, lax.div(q, 100), axis, method,
                     keepdims, ignore_nan=False, weights=weights)


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median over ``axis`` (all axes if None): the middle value, or the mean of the
    two middle values.

    >>> import functrans.numpy as fnp
    >>> fnp.median(fnp.asarray([[1., 5., 3.], [4., 2., 6.]]), axis=1)
    array([3., 4.])
    """
    if out is not None:
        raise NotImplementedError("median: out= is not supported (arrays are immutable)")
    return _quantile("median", a, 0.5, axis, "linear", keepdims, ignore_nan=False)


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, weights=None):
    """``quantile`` ignoring NaNs (NaN where every value is NaN); with ``weights``, the
    NaNs' weights are left out too.

    >>> import functrans.numpy as fnp
    >>> fnp.nanquantile(fnp.asarray([1., float("nan"), 3.]), 0.5)
    array(2.)
    >>> fnp.nanquantile(fnp.asarray([1., 2., float("nan"), 4., 5.]), 0.5,
    ...                 method="inverted_cdf", weights=fnp.asarray([1., 1., 1., 2., 1.]))
    array(4.)
    """
    if out is not None:
        raise NotImplementedError("nanquantile: out= is not supported (arrays are immutable)")
    return _quantile("nanquantile", a, q, axis, method, keepdims, ignore_nan=True,
                     weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *, weights=None):
    """``percentile`` ignoring NaNs.

    >>> import functrans.numpy as fnp
    >>> fnp.nanpercentile(fnp.asarray([1., float("nan"), 3.]), 100)
    array(3.)
    """
    if out is not None:
        raise NotImplementedError("nanpercentile: out= is not supported (arrays are immutable)")
    q = promote_inexact(arg(q))
    return _quantile("nanpercentile", a, lax.div(q, 100), axis,
                     method, keepdims, ignore_nan=True, weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """``median`` ignoring NaNs.

    >>> import functrans.numpy as fnp
    >>> fnp.nanmedian(fnp.asarray([1., float("nan"), 3., 4.]))
    array(3.)
    """
    if out is not None:
        raise NotImplementedError("nanmedian: out= is not supported (arrays are immutable)")
    return _quantile("nanmedian", a, 0.5, axis, "linear", keepdims, ignore_nan=True)


# -- unique and set operations ----------------------------------------------------------------


class UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _sorted_runs(flat, equal_nan: bool):
    """The sorted 1-D ``flat``, the positions it came from, and a mask of the first
    element of each run of equal values."""
    s, perm = lax.sort((flat, positions_along(flat, 0, _INDEX)), dimension=0)
    n = shape_of(s)[0]
    if n == 0:
        return s, perm, lax.ne(s, s)
    before, after = lax.slice(s, [0], [n - 1]), lax.slice(s, [1], [n])
    differs = lax.ne(after, before)
    if equal_nan and dtype_of(s).kind in "fc":
        differs = lax.bitwise_and(differs, lax.bitwise_not(lax.bitwise_and(
            lax.ne(after, after), lax.ne(before, before))))
    first = lax.convert_element_type(lax.add(lax.zeros_like(lax.slice(s, [0], [1])), 1),
                                     np.bool_)
    return s, perm, concatenate([first, differs])


def _static_size(name: str, count, size):
    """``size`` as an int, or the concrete ``count`` when ``size`` is None."""
    if size is not None:
        size = static_int(size, name, "size")
        if size < 0:
            raise ValueError(f"{name}: size must be non-negative, got {size}")
        return size
    if isinstance(count, Tracer):
        try:
            count = count.to_concrete_value(f"the number of results of {name}")
        except ConcretizationTypeError as err:
            raise ConcretizationTypeError(
                f"{name}: the number of results depends on the values of a traced array, "
                f"but output shapes must be known while tracing. Pass size= (the length of "
                f"the result; fill_value= pads it) to {name}, as in JAX.\n{err}") from None
    return int(count)


def _pack(name: str, keep, size):
    """The positions (in sorted order) of the kept elements, the first ``size + 1`` of
    them (clamped past the end); a mask of the places that hold one; and ``size``."""
    n = shape_of(keep)[0]
    count = shape_ops.reduce_sum(lax.convert_element_type(keep, _INDEX), (0,))
    size = _static_size(name, count, size)
    order = lax.sort((lax.bitwise_not(keep), positions_along(keep, 0, _INDEX)),
                     dimension=0)[1]  # kept positions first, in order
    places = lax.iota(_INDEX, size + 1, like=keep)
    if n == 0:
        return None, None, size
    taken = lax.gather(order, shape_ops.expand_dims(places, (1,)))  # clamped past n
    return taken, lax.lt(places, count), size


def _fill(values, valid, fill_value):
    """``values`` where ``valid``, else ``fill_value``; if None, as JAX, the smallest valid
    value (the first: the valid values come first, in order), or 0 when none is valid."""
    if shape_of(values)[0] == 0:
        return values
    if fill_value is None:
        first = lax.slice(values, [0], [1])
        first = lax.select(lax.slice(valid, [0], [1]), first, lax.zeros_like(first))
        fill = shape_ops.broadcast_to(first, shape_of(values))
    else:
        fill = lax.add(lax.zeros_like(values), fill_value)
    return lax.select(valid, values, lax.convert_element_type(fill, dtype_of(values)))


def _empty_like(x, dtype=None):
    return lax.convert_element_type(lax.slice(ravel(x), [0], [0]), dtype or dtype_of(x))


def _unique(name, ar, return_index, return_inverse, return_counts, equal_nan, size,
            fill_value, keep=None):
    ar = _array(ar)
    flat = ravel(ar)
    s, perm, first = _sorted_runs(flat, equal_nan)
    taken, valid, size = _pack(name, first if keep is None else keep(s, perm, first), size)
    if taken is None:  # an empty input: `size` places of padding
        fill = lax.convert_element_type(0 if fill_value is None else fill_value, dtype_of(flat))
        index = lax.pad(_empty_like(flat, _INDEX), 0, [(0, size, 0)])
        results = [lax.pad(flat, fill, [(0, size, 0)])] + [index] * return_index
        results += [shape_ops.reshape(_empty_like(flat, _INDEX), shape_of(ar))] * return_inverse
        results += [index] * return_counts
        return results[0] if len(results) == 1 else tuple(results)
    head = lax.slice(taken, [0], [size])
    head_valid = lax.slice(valid, [0], [size])
    values = _fill(take_along(s, head, 0), head_valid, fill_value)
    results = [values]
    if return_index:  # the first occurrence: the stable sort keeps it first in its run
        results.append(_fill(take_along(perm, head, 0), head_valid, None))
    if return_inverse:  # the run number of each element, sent back to its place
        run = lax.sub(lax.cumsum(lax.convert_element_type(first, _INDEX)), 1)
        inverse = lax.sort((perm, run), dimension=0)[1]
        results.append(shape_ops.reshape(inverse, shape_of(ar)))
    if return_counts:  # the distance from each run's start to the next one's
        starts = lax.select(valid, taken, lax.add(lax.zeros_like(taken), shape_of(flat)[0]))
        counts = lax.sub(lax.slice(starts, [1], [size + 1]), lax.slice(starts, [0], [size]))
        results.append(counts)
    return results[0] if len(results) == 1 else tuple(results)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis=None, *, equal_nan: bool = True, size=None,
           fill_value=None, sorted: bool = True):  # noqa: A002
    """The sorted distinct values of ``ar`` (flattened), and on request the position of
    each one's first occurrence, each element's index into the result (in ``ar``'s shape)
    and how often each occurs.  NaNs count as one value unless ``equal_nan=False``.

    With ``size=`` the result has exactly that length: truncated, or padded with
    ``fill_value`` (default: the smallest value; indices pad with the smallest value's,
    counts with 0).  Under ``vmap`` (abstract values) ``size`` is required.  The values
    are differentiable (a gather of ``ar``).

    >>> import functrans.numpy as fnp
    >>> fnp.unique(fnp.asarray([3., 1., 3., 2.]), return_counts=True)
    (array([1., 2., 3.]), array([1, 1, 2]))
    >>> fnp.unique(fnp.asarray([3., 1., 3.]), size=4, fill_value=-1.)
    array([ 1.,  3., -1., -1.])
    """
    if axis is not None:
        raise NotImplementedError("unique: axis= is not supported; unique values of the "
                                  "flattened array only (axis=None)")
    return _unique("unique", ar, return_index, return_inverse, return_counts, equal_nan,
                   size, fill_value)


def unique_values(x, *, size=None, fill_value=None):
    """The sorted distinct values of ``x`` (NaNs all distinct, as the array API).

    >>> import functrans.numpy as fnp
    >>> fnp.unique_values(fnp.asarray([2, 1, 2]))
    array([1, 2])
    """
    return _unique("unique_values", x, False, False, False, False, size, fill_value)


def unique_counts(x, *, size=None, fill_value=None):
    """``(values, counts)`` of ``unique`` (NaNs all distinct).

    >>> import functrans.numpy as fnp
    >>> fnp.unique_counts(fnp.asarray([2, 1, 2])).counts
    array([1, 2])
    """
    return UniqueCountsResult(*_unique("unique_counts", x, False, False, True, False, size,
                                       fill_value))


def unique_inverse(x, *, size=None, fill_value=None):
    """``(values, inverse_indices)`` of ``unique`` (NaNs all distinct).

    >>> import functrans.numpy as fnp
    >>> fnp.unique_inverse(fnp.asarray([2, 1, 2])).inverse_indices
    array([1, 0, 1])
    """
    return UniqueInverseResult(*_unique("unique_inverse", x, False, True, False, False, size,
                                        fill_value))


def unique_all(x, *, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` of ``unique`` (NaNs all distinct).

    >>> import functrans.numpy as fnp
    >>> fnp.unique_all(fnp.asarray([2, 1, 2])).indices
    array([1, 0])
    """
    return UniqueAllResult(*_unique("unique_all", x, True, True, True, False, size,
                                    fill_value))


_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")
# "auto" compares every pair up to this many pairs (512 kB of int64 counts), and sorts
# beyond: memory then grows with the sizes, not their product.  Measured under jit on the
# NumPy backend (2 cores): 180 x 180 values, compare_all 40 us, sort 87 us, binary_search
# 196 us; 300 x 300: 98, 95, 224 us; 1000 x 1000: 897, 308, 362 us.
_COMPARE_ALL_PAIRS = 1 << 16


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto"):
    """Whether each element of ``element`` is among ``test_elements`` (booleans of
    ``element``'s shape; ``invert`` negates).  NaN is never among them (NaN != NaN).

    ``method="compare_all"`` compares every pair (memory: the product of the sizes);
    ``"binary_search"`` sorts ``test_elements`` and looks each element up with
    ``searchsorted`` (memory: the sum of the sizes); ``"sort"`` sorts both together and
    asks whether each element's run of equal values starts with a test element (memory:
    the sum of the sizes); ``"auto"`` compares every pair while there are at most 65536
    pairs, else sorts.  ``assume_unique`` is accepted and ignored.

    >>> import functrans.numpy as fnp
    >>> fnp.isin(fnp.asarray([1, 2, 3]), [2, 4])
    array([False,  True, False])
    >>> fnp.isin(fnp.asarray([1., float("nan")]), [float("nan"), 1.], method="binary_search")
    array([ True, False])
    """
    if method not in _ISIN_METHODS:
        raise ValueError(f"isin: method must be one of {_ISIN_METHODS}, got {method!r}")
    element, test = _array(element), ravel(_array(test_elements))
    dtype = _common_dtype(element, test)
    element = lax.convert_element_type(element, dtype)
    test = lax.convert_element_type(test, dtype)
    shape, m = shape_of(element), shape_of(test)[0]
    if m == 0 or math.prod(shape) == 0:
        found = lax.ne(lax.zeros_like(element), lax.zeros_like(element))
    else:
        if method == "auto":
            many = math.prod(shape) * m > _COMPARE_ALL_PAIRS
            method = "sort" if many else "compare_all"
        found = _ISIN[method](element, test)
    return lax.bitwise_not(found) if invert else found


def _isin_compare_all(element, test):
    shape = shape_of(element)
    pairs = lax.eq(shape_ops.expand_dims(element, (len(shape),)),
                   shape_ops.broadcast_in_dim(test, shape + shape_of(test), (len(shape),)))
    hits = shape_ops.reduce_sum(lax.convert_element_type(pairs, _INDEX), (len(shape),))
    return lax.gt(hits, 0)


def _isin_binary_search(element, test):
    test = lax.sort(test, dimension=0)
    at = lax.min(searchsorted(test, element), shape_of(test)[0] - 1)  # the first >= element
    return lax.eq(lax.gather(test, shape_ops.expand_dims(at, (len(shape_of(at)),))), element)


def _isin_sort(element, test):
    m, flat = shape_of(test)[0], ravel(element)
    # NaNs each start a run (equal_nan=False); the stable sort puts the test elements
    # first in every run of equal values
    s, perm, first = _sorted_runs(concatenate([test, flat]), equal_nan=False)
    start = lax.cummax(lax.select(first, positions_along(perm, 0, _INDEX),
                                  lax.zeros_like(perm)), axis=0)
    from_test = lax.convert_element_type(lax.lt(take_along(perm, start, 0), m), np.int8)
    found = lax.sort((perm, from_test), dimension=0)[1]  # back in the concatenation's order
    return shape_ops.reshape(lax.gt(lax.slice(found, [m], [shape_of(found)[0]]), 0),
                             shape_of(element))


_ISIN = {"compare_all": _isin_compare_all, "binary_search": _isin_binary_search,
         "sort": _isin_sort}


def _promoted(*arrays):
    """The flattened arrays, converted to their common dtype (NumPy's promotion)."""
    flats = [ravel(_array(a)) for a in arrays]
    dtype = core.result_type(*(get_aval(f) for f in flats))[0]
    return [lax.convert_element_type(f, dtype) for f in flats]


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size=None, fill_value=None):
    """The sorted values in both ``ar1`` and ``ar2`` (each once, in their common dtype);
    ``size=`` and ``fill_value=`` as for ``unique`` (padding with the smallest value by
    default, 0 when there is none).  With ``return_indices``, also the position of each
    value's first occurrence in the flattened ``ar1`` and ``ar2`` (padded places hold each
    array's size, as JAX).

    >>> import functrans.numpy as fnp
    >>> fnp.intersect1d(fnp.asarray([3, 1, 2, 1]), fnp.asarray([1, 3, 5]))
    array([1, 3])
    >>> fnp.intersect1d(fnp.asarray([3, 1, 2, 1]), fnp.asarray([1, 3, 5]), return_indices=True)
    (array([1, 3]), array([1, 0]), array([0, 1]))
    >>> fnp.intersect1d(fnp.asarray([5, 6]), fnp.asarray([7]), size=2)
    array([0, 0])
    """
    flat1, flat2 = _promoted(ar1, ar2)
    n1, n2 = shape_of(flat1)[0], shape_of(flat2)[0]

    def keep(s, perm, first):
        return lax.bitwise_and(first, isin(s, flat2))

    s, perm, first = _sorted_runs(flat1, True)
    taken, valid, size = _pack("intersect1d", keep(s, perm, first), size)
    if taken is None or n2 == 0:  # nothing in common: only padding
        values = _unique("intersect1d", flat1, False, False, False, True, size, fill_value,
                         keep=keep)
        if not return_indices:
            return values
        empty = _empty_like(flat1, _INDEX)
        return (values, lax.pad(empty, n1, [(0, size, 0)]), lax.pad(empty, n2, [(0, size, 0)]))
    head, head_valid = lax.slice(taken, [0], [size]), lax.slice(valid, [0], [size])
    common = take_along(s, head, 0)
    values = _fill(common, head_valid, fill_value)
    if not return_indices:
        return values
    index1 = lax.select(head_valid, take_along(perm, head, 0),
                        lax.add(lax.zeros_like(head), n1))
    # the first of equal values in the stably sorted ar2 is its first occurrence
    s2, perm2 = lax.sort((flat2, positions_along(flat2, 0, _INDEX)), dimension=0)
    at2 = searchsorted(s2, common, side="left")
    index2 = lax.select(head_valid, take_along(perm2, at2, 0),
                        lax.add(lax.zeros_like(head), n2))
    return values, index1, index2


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted values in ``ar1`` or ``ar2`` (each once, in their common dtype).

    >>> import functrans.numpy as fnp
    >>> fnp.union1d(fnp.asarray([3, 1]), fnp.asarray([1, 2]))
    array([1, 2, 3])
    """
    return _unique("union1d", concatenate(_promoted(ar1, ar2)), False, False, False, True,
                   size, fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted values of ``ar1`` that are not in ``ar2`` (each once, in ``ar1``'s
    dtype, as NumPy); padding with 0 by default, as JAX.

    >>> import functrans.numpy as fnp
    >>> fnp.setdiff1d(fnp.asarray([3, 1, 2, 1]), fnp.asarray([2]))
    array([1, 3])
    """
    ar2 = _array(ar2)
    return _unique("setdiff1d", ar1, False, False, False, True, size,
                   0 if fill_value is None else fill_value,
                   keep=lambda s, perm, first: lax.bitwise_and(first, isin(s, ar2, invert=True)))


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """The sorted values in exactly one of ``ar1`` and ``ar2`` (each once, in their common
    dtype).  As NumPy, NaNs are one value within an array but never equal across the
    two: a NaN in each gives two NaNs.

    One sort of both arrays together: the stable sort puts ``ar1``'s elements first in
    every run of equal values, so a run holds one array's values only when its first and
    last elements come from the same array.

    >>> import functrans.numpy as fnp
    >>> fnp.setxor1d(fnp.asarray([3, 1, 1]), fnp.asarray([1, 2]))
    array([2, 3])
    >>> nan = float("nan")
    >>> fnp.setxor1d(fnp.asarray([nan, nan, 1.]), fnp.asarray([nan, 2.]))
    array([ 1.,  2., nan, nan])
    """
    flat1, flat2 = _promoted(ar1, ar2)
    n1 = shape_of(flat1)[0]

    def keep(s, perm, first):
        n = shape_of(s)[0]
        if n == 0:
            return first
        second = lax.ge(perm, n1)  # from ar2
        # an element ends its run where the next one starts another; the last one does
        # (first[0], always true, stands for it)
        last = concatenate([lax.slice(first, [1], [n]), lax.slice(first, [0], [1])])
        positions = positions_along(perm, 0, _INDEX)
        end = lax.cummin(lax.select(last, positions, lax.add(lax.zeros_like(positions), n - 1)),
                         axis=0, reverse=True)  # the last position of each element's run
        one_array = lax.eq(second, take_along(second, end, 0))
        kept = lax.bitwise_and(first, one_array)
        if dtype_of(s).kind not in "fc":
            return kept
        # the NaNs are one run: keep its first element and the first from ar2
        switches = lax.ne(lax.slice(second, [1], [n]), lax.slice(second, [0], [n - 1]))
        changes = concatenate([lax.slice(first, [0], [1]), switches])
        return lax.select(lax.ne(s, s), lax.bitwise_or(first, changes), kept)

    return _unique("setxor1d", concatenate([flat1, flat2]), False, False, False, True, size,
                   fill_value, keep=keep)
