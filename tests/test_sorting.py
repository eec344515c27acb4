"""Targeted tests of the sorting family (the sweep is in tests/cases_sorting.py): ties and
their derivatives, NaNs, descending order, quantile methods against NumPy, searchsorted's
methods, and ``unique`` with ``size=`` under transforms."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.core import ConcretizationTypeError


def _primitive_names(closed) -> list:
    return [eqn.primitive.name for eqn in closed.jaxpr.eqns]


# -- sort and its derivative ------------------------------------------------------------------


def test_sort_with_ties_is_stable_and_carries_values():
    keys = np.array([2, 1, 2, 1, 0])
    values = np.array([0., 1., 2., 3., 4.])
    sorted_keys, carried = lax.sort((keys, values))
    np.testing.assert_array_equal(sorted_keys, [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(carried, [4., 1., 3., 0., 2.])


def test_derivative_at_ties_follows_the_stable_permutation():
    x = np.array([1., 3., 1., 3.])
    perm = np.argsort(x, kind="stable")  # [0, 2, 1, 3]
    expected = np.eye(4)[perm]  # output i is input perm[i]
    np.testing.assert_array_equal(ft.jacfwd(lax.sort)(x), expected)
    np.testing.assert_array_equal(ft.jacrev(lax.sort)(x), expected)
    # values carried by tied keys: each gets its own cotangent back
    grad = ft.grad(lambda v: fnp.sum(lax.sort_key_val(np.array([1, 0, 1]), v)[1]
                                     * np.array([1., 10., 100.])))(np.zeros(3))
    np.testing.assert_array_equal(grad, [10., 1., 100.])


def test_sort_jvp_is_one_sort_with_an_iota_and_a_gather():
    closed = ft.make_jaxpr(lambda x, t: ft.jvp(lax.sort, (x,), (t,)))(np.zeros(3), np.zeros(3))
    names = _primitive_names(closed)
    assert names.count("sort") == 1 and "iota" in names and "gather" in names


def test_sort_nans_last_and_first_when_descending():
    x = np.array([np.nan, 2., -np.inf, np.nan, 1.])
    np.testing.assert_array_equal(fnp.sort(x), np.sort(x))
    np.testing.assert_array_equal(fnp.argsort(x), np.argsort(x, kind="stable"))
    np.testing.assert_array_equal(fnp.sort(x, descending=True),
                                  [np.nan, np.nan, 2., 1., -np.inf])
    np.testing.assert_array_equal(fnp.argsort(x, descending=True), [0, 3, 1, 4, 2])


def test_complex_sort_is_lexicographic_like_numpy():
    x = np.array([1 + 2j, 1 - 1j, -1 + 5j, 1 + 0j, 0.5 + 0j])
    np.testing.assert_array_equal(fnp.sort(x), np.sort(x))
    np.testing.assert_array_equal(fnp.sort_complex(x.real), np.sort_complex(x.real))
    np.testing.assert_array_equal(fnp.argsort(x), np.argsort(x, kind="stable"))


def test_descending_argsort_keeps_ties_in_order():
    x = np.array([1., 3., 1., 3., 2.])
    np.testing.assert_array_equal(fnp.argsort(x, descending=True), [1, 3, 4, 0, 2])
    xs = np.array([[1., 1., 0.], [0., 2., 2.]])
    np.testing.assert_array_equal(ft.vmap(lambda r: fnp.argsort(r, descending=True))(xs),
                                  [[0, 1, 2], [1, 2, 0]])


def test_two_keys_match_lexsort():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, (2, 10)), rng.integers(0, 3, (2, 10))
    np.testing.assert_array_equal(fnp.lexsort((a, b)), np.lexsort((a, b)))
    positions = np.broadcast_to(np.arange(10), (2, 10))
    _, _, got = lax.sort((b, a, positions), num_keys=2)
    np.testing.assert_array_equal(got, np.lexsort((a, b)))


def test_top_k_ties_nans_and_gradient():
    values, indices = lax.top_k(np.array([1., np.nan, 3., 3., 2.]), 3)
    np.testing.assert_array_equal(values, [np.nan, 3., 3.])
    np.testing.assert_array_equal(indices, [1, 2, 3])
    assert indices.dtype == np.int32
    grad = ft.grad(lambda x: fnp.sum(lax.top_k(x, 2)[0] * np.array([1., 10.])))(
        np.array([5., 1., 5., 0.]))
    np.testing.assert_array_equal(grad, [1., 0., 10., 0.])
    with pytest.raises(ValueError, match="top_k: k must be"):
        lax.top_k(np.zeros(3), 4)


def test_top_k_along_an_axis():
    x = np.array([[1., 5., 5.], [3., 2., 5.], [3., np.nan, 0.], [0., 1., 2.]])
    values, indices = lax.top_k(x, 2, axis=0)
    last_values, last_indices = lax.top_k(x.T, 2)
    np.testing.assert_array_equal(values, last_values.T)
    np.testing.assert_array_equal(indices, last_indices.T)
    np.testing.assert_array_equal(indices, [[1, 2, 0], [2, 0, 1]])
    assert indices.dtype == np.int32
    grad = ft.grad(lambda x: fnp.sum(lax.top_k(x, 1, axis=-2)[0]))(np.array([[1., 4.], [2., 3.]]))
    np.testing.assert_array_equal(grad, [[0., 1.], [1., 0.]])
    got = ft.vmap(lambda r: lax.top_k(r, 1, axis=0)[1], in_axes=1)(x[:, :2])
    np.testing.assert_array_equal(got, [[1], [2]])  # NaN counts as the largest
    with pytest.raises(ValueError, match="top_k: k must be an integer in \\[0, 4\\]"):
        lax.top_k(x, 5, axis=0)


def test_argsort_index_dtype():
    x = np.array([[2., 1., 2.], [0., np.nan, -1.]])
    for descending in (False, True):
        got = fnp.argsort(x, dtype=np.int32, descending=descending)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, fnp.argsort(x, descending=descending))
    assert fnp.argsort(x, axis=None, dtype="uint8").dtype == np.uint8
    assert ft.jit(lambda x: fnp.argsort(x, dtype=np.int16))(x).dtype == np.int16
    with pytest.raises(ValueError, match="argsort: dtype must be an integer type"):
        fnp.argsort(x, dtype=np.float32)


def test_lexsort_of_scalar_keys_is_position_zero():
    for keys in (np.array([3, 1, 2]), [np.array(1.), np.array(0.)]):
        got = fnp.lexsort(keys)
        assert np.shape(got) == () and np.asarray(got).dtype == np.int64
        assert int(got) == np.lexsort(keys) == 0
    with pytest.raises(ValueError, match="lexsort: axis 1"):
        fnp.lexsort(np.array([3, 1]), axis=1)


@pytest.mark.parametrize("name", ["argmax", "argmin", "nanargmax", "nanargmin"])
def test_arg_extrema_take_out_none_as_jax(name):
    x = np.array([[1., np.nan, 3.], [4., 0., 2.]])
    f = getattr(fnp, name)
    np.testing.assert_array_equal(f(x, 1, None, True), f(x, axis=1, keepdims=True))
    assert np.shape(f(x, 1, None, True)) == (2, 1)
    with pytest.raises(NotImplementedError, match=f"{name}: out= is not supported"):
        f(x, out=np.zeros((), np.int64))


def test_partition_is_a_valid_partition():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8))
    for kth in (0, 3, 7, -2):
        got = fnp.partition(x, kth, axis=1)
        k = kth % 8
        np.testing.assert_array_equal(got[:, k], np.partition(x, kth, axis=1)[:, k])
        assert (got[:, :k] <= got[:, k:k + 1]).all() and (got[:, k:] >= got[:, k:k + 1]).all()
        idx = fnp.argpartition(x, kth, axis=1)
        np.testing.assert_array_equal(np.take_along_axis(x, idx, 1), got)
    with pytest.raises(ValueError, match="partition: kth=8"):
        fnp.partition(x, 8)


def test_sort_errors_name_the_function_and_argument():
    with pytest.raises(NotImplementedError, match="sort: order="):
        fnp.sort(np.zeros(3), order="a")
    with pytest.raises(ValueError, match="sort: num_keys=3"):
        lax.sort((np.zeros(3), np.zeros(3)), num_keys=3)
    with pytest.raises(ValueError, match="same shape"):
        lax.sort((np.zeros(3), np.zeros(4)))


# -- searchsorted and digitize -------------------------------------------------------------


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_methods_match_numpy(method, side):
    rng = np.random.default_rng(2)
    a = np.sort(np.concatenate([rng.integers(-3, 4, 9).astype(float), [np.nan, np.inf]]))
    v = np.concatenate([rng.integers(-5, 6, 12) / 1.0, [np.nan, np.inf, -np.inf]])
    np.testing.assert_array_equal(fnp.searchsorted(a, v, side, method=method),
                                  np.searchsorted(a, v, side))
    # both arguments traced
    got = ft.vmap(lambda a, v: fnp.searchsorted(a, v, side, method=method))(
        np.stack([a, a]), np.stack([v, v[::-1]]))
    np.testing.assert_array_equal(got, [np.searchsorted(a, v, side),
                                        np.searchsorted(a, v[::-1], side)])


def test_searchsorted_has_no_derivative_and_rejects_bad_arguments():
    grad = ft.grad(lambda v: fnp.sum(v * fnp.searchsorted(np.arange(4.), v)))(np.array([1.5]))
    np.testing.assert_array_equal(grad, [2.])  # only through the product's other factor
    with pytest.raises(ValueError, match="searchsorted: side"):
        fnp.searchsorted(np.arange(3.), 1., side="middle")
    with pytest.raises(ValueError, match="searchsorted: method"):
        fnp.searchsorted(np.arange(3.), 1., method="bisect")


def test_digitize_with_traced_bins_of_either_direction():
    x = np.array([-1., 0., 0.5, 1., 2., 3.])
    bins = np.array([[0., 1., 2.], [2., 1., 0.]])
    for right in (False, True):
        got = ft.vmap(lambda b: fnp.digitize(x, b, right=right))(bins)
        np.testing.assert_array_equal(got, [np.digitize(x, b, right=right) for b in bins])


@pytest.mark.parametrize("method", [None, "scan", "scan_unrolled", "sort", "compare_all"])
def test_digitize_methods(method):
    x = np.array([-1., 0., 0.5, 1., 2., 3., np.nan])
    for bins in (np.array([0., 1., 1., 2.]), np.array([2., 1., 0.])):
        for right in (False, True):
            np.testing.assert_array_equal(fnp.digitize(x, bins, right, method=method),
                                          np.digitize(x, bins, right))


def test_searchsorted_by_sorting_needs_no_loop():
    closed = ft.make_jaxpr(lambda a, v: fnp.searchsorted(a, v, method="sort"))(
        np.zeros(5), np.zeros((2, 3)))
    names = _primitive_names(closed)
    assert "sort" in names and "while" not in names and "fori_loop" not in names


# -- quantiles ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_methods_match_numpy(method):
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal((4, 5, 3)), 1)  # some ties
    q = np.array([0., 0.1, 0.25, 0.5, 2 / 3, 0.9, 1.])
    for axis in (None, 0, 1, (0, 2)):
        for keepdims in (False, True):
            np.testing.assert_allclose(
                fnp.quantile(x, q, axis=axis, method=method, keepdims=keepdims),
                np.quantile(x, q, axis=axis, method=method, keepdims=keepdims), rtol=1e-14)
    np.testing.assert_allclose(fnp.percentile(x, 100 * q, axis=1, method=method),
                               np.percentile(x, 100 * q, axis=1, method=method), rtol=1e-14)
    np.testing.assert_allclose(fnp.nanquantile(x, q, axis=2, method=method),
                               np.nanquantile(x, q, axis=2, method=method), rtol=1e-14)


# NumPy's weighted quantiles over a tuple of axes pick wrong elements before 2.4 (seen in
# 2.0.0 to 2.3.5; 2.4.0 agrees with the quantile over the axes moved last and flattened).
WEIGHTED_AXIS_TUPLES = np.lib.NumpyVersion(np.__version__) >= "2.4.0"


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.2.0",
                    reason="NumPy's weighted quantiles before 2.2 mishandle zero weights "
                           "(numpy#27549)")
def test_inverted_cdf_matches_numpy():
    rng = np.random.default_rng(6)
    x = np.round(rng.standard_normal((4, 5, 3)), 1)  # some ties
    with_nans = x.copy()
    with_nans[0, 1], with_nans[1, :, 0] = np.nan, np.nan  # an all-NaN row along axis 1
    q = np.array([0., 0.1, 0.25, 0.3, 0.5, 2 / 3, 0.9, 1.])
    for axis in (None, 0, 1, (0, 2), (2, 0)):
        w = rng.random(x.shape) + 0.05
        w[rng.random(x.shape) < 0.1] = 0.  # zero weights: never the element picked
        for keepdims in (False, True):
            kw = dict(axis=axis, method="inverted_cdf", keepdims=keepdims)
            np.testing.assert_array_equal(fnp.quantile(x, q, **kw), np.quantile(x, q, **kw))
            if isinstance(axis, tuple) and not WEIGHTED_AXIS_TUPLES:
                continue
            np.testing.assert_array_equal(fnp.quantile(x, q, weights=w, **kw),
                                          np.quantile(x, q, weights=w, **kw))
            np.testing.assert_array_equal(fnp.percentile(x, 100 * q, weights=w, **kw),
                                          np.percentile(x, 100 * q, weights=w, **kw))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slices
                for ours, theirs in [(fnp.nanquantile, np.nanquantile),
                                     (fnp.nanpercentile, np.nanpercentile)]:
                    scale = 100 if ours is fnp.nanpercentile else 1
                    np.testing.assert_array_equal(ours(with_nans, scale * q, **kw),
                                                  theirs(with_nans, scale * q, **kw))
                    np.testing.assert_array_equal(ours(with_nans, scale * q, weights=w, **kw),
                                                  theirs(with_nans, scale * q, weights=w, **kw))
            if axis is not None:  # weights of the reduced axes' shape, in axis's order
                axes = np.atleast_1d(axis)
                small = rng.random(tuple(x.shape[a] for a in axes)) + 0.1
                full = np.expand_dims(small.transpose(np.argsort(axes)),
                                      tuple(i for i in range(3) if i not in axes))
                np.testing.assert_array_equal(
                    fnp.quantile(x, q, weights=small, **kw),
                    np.quantile(x, q, weights=np.broadcast_to(full, x.shape), **kw))
    # NumPy rounds the two forms differently: 10 * 0.3 is above 3, the cdf 3 / 10 is not
    ten = np.arange(10.)
    for w in (None, np.ones(10)):
        assert (fnp.quantile(ten, 0.3, method="inverted_cdf", weights=w)
                == np.quantile(ten, 0.3, method="inverted_cdf", weights=w))
    # an element is picked: integers stay integers
    got = fnp.quantile(np.arange(5), 0.5, method="inverted_cdf", weights=np.ones(5))
    assert np.asarray(got).dtype == np.int64 and int(got) == 2


def test_weights_need_inverted_cdf_and_valid_values():
    x = np.arange(6.).reshape(2, 3)
    with pytest.raises(ValueError, match="quantile: only method='inverted_cdf' supports weights"):
        fnp.quantile(x, 0.5, weights=np.ones((2, 3)))
    with pytest.raises(ValueError, match="nanpercentile: only method='inverted_cdf'"):
        fnp.nanpercentile(x, 50, method="nearest", weights=np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"shape \(2, 3\) of a when axis is None"):
        fnp.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(3))
    with pytest.raises(ValueError, match=r"the shape \(3,\) of the reduced axes \(1,\)"):
        fnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=np.ones(2))
    with pytest.raises(ValueError, match="quantile: weights must be non-negative"):
        fnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=np.array([1., -1., 1.]))
    for bad in ([0., 0., 0.], [1., np.nan, 1.], [1., np.inf, 1.]):
        with pytest.raises(ValueError, match="weights include NaN or inf, or are all zero"):
            fnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=np.array(bad))
    with pytest.raises(TypeError, match="weights must be real"):
        fnp.quantile(x, 0.5, method="inverted_cdf", weights=np.ones((2, 3)) * 1j)
    # traced weights cannot raise: those rows are NaN (as JAX)
    rows = np.array([[1., 1., 1.], [1., -1., 1.], [0., 0., 0.], [1., np.inf, 1.]])
    got = ft.vmap(lambda w: fnp.quantile(x[0], 0.5, method="inverted_cdf", weights=w))(rows)
    np.testing.assert_array_equal(got, [1., np.nan, np.nan, np.nan])


def test_inverted_cdf_derivatives():
    x, w = np.array([3., 1., 2., 1., 5.]), np.array([1., 2., 0.5, 1., 1.])

    def f(x, w, q=0.5):
        return fnp.quantile(x, q, method="inverted_cdf", weights=w)
    # sorted: 1 (x[1], w 2), 1 (x[3], w 1), 2, 3, 5; cumulative 2, 3, 3.5, 4.5, 5.5: the
    # half of 5.5 is reached at the second 1, x[3]
    assert f(x, w) == 1.
    np.testing.assert_array_equal(ft.grad(f)(x, w), [0., 0., 0., 1., 0.])
    np.testing.assert_array_equal(ft.jacfwd(f)(x, w), [0., 0., 0., 1., 0.])
    # the weights only choose: no derivative, and no NaN from the division by the total
    for jac in (ft.grad, ft.jacfwd, ft.jacrev):
        np.testing.assert_array_equal(jac(f, 1)(x, w), np.zeros(5))
    np.testing.assert_array_equal(ft.grad(f, 2)(x, w, 0.5), 0.)
    np.testing.assert_array_equal(ft.jit(ft.grad(f, 1))(x, np.zeros(5)), np.zeros(5))
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.quantile(x, 0.5, method="inverted_cdf"))(x),
                                  [0., 0., 1., 0., 0.])
    grad = ft.grad(lambda x: fnp.nanquantile(x, 0.5, method="inverted_cdf",
                                             weights=np.array([5., 1., 1., 1.])))(
        np.array([np.nan, 4., 1., 2.]))
    np.testing.assert_array_equal(grad, [0., 0., 0., 1.])  # the NaN's weight is left out


def test_quantile_nans():
    x = np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan], [4., 2., 0.]])
    np.testing.assert_array_equal(fnp.quantile(x, 0.5, axis=1), [np.nan, np.nan, 2.])
    np.testing.assert_array_equal(fnp.nanmedian(x, axis=1), [2., np.nan, 2.])
    np.testing.assert_array_equal(fnp.nanpercentile(x, 50, axis=1), [2., np.nan, 2.])


def test_quantiles_between_infinities_are_infinite_not_nan():
    inf = np.inf
    with np.errstate(invalid="ignore"):
        assert fnp.median(np.array([1., inf, inf])) == inf  # NumPy's median agrees
        assert fnp.nanmedian(np.array([inf, np.nan, inf])) == inf
        assert fnp.quantile(np.array([-inf, 1.]), 0.25) == -inf
        assert fnp.quantile(np.array([1., inf]), 0.5, method="midpoint") == inf
        assert fnp.median(np.array([-inf, -inf, 3.])) == -inf
        assert np.isnan(fnp.quantile(np.array([-inf, inf]), 0.5))  # undefined
    # finite data keep NumPy's rounding and finite derivatives
    x = np.array([1., 5., 3., 2.])
    assert fnp.quantile(x, 0.3) == np.quantile(x, 0.3)
    np.testing.assert_array_equal(ft.grad(fnp.median)(x), [0., 0., 0.5, 0.5])


def test_quantile_derivative_at_ties_and_in_q():
    # the middle of [1, 1, 2] is the second 1 the stable sort placed there
    np.testing.assert_array_equal(ft.grad(fnp.median)(np.array([1., 1., 2.])), [0., 1., 0.])
    x = np.array([3., 1., 2., 1.])
    # q = 0.4: position 1.2 between sorted[1] (x[3]) and sorted[2] (x[2])
    np.testing.assert_allclose(ft.grad(lambda x: fnp.quantile(x, 0.4))(x), [0, 0, 0.2, 0.8])
    np.testing.assert_allclose(ft.grad(lambda q: fnp.quantile(x, q))(0.4), 3.0)  # (2-1)*3
    hess = ft.hessian(lambda x: fnp.quantile(x, 0.4))(x)
    np.testing.assert_array_equal(hess, np.zeros((4, 4)))


def test_quantile_vmap_over_a_non_leading_axis():
    x = np.random.default_rng(4).standard_normal((5, 3, 4))
    got = ft.vmap(lambda m: fnp.quantile(m, np.array([0.3, 0.8]), axis=1), in_axes=1)(x)
    want = np.stack([np.quantile(x[:, i], [0.3, 0.8], axis=1) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_quantile_errors():
    with pytest.raises(ValueError, match="quantile: axis=.* more than once"):
        fnp.quantile(np.zeros((2, 3)), 0.5, axis=(1, 1))
    with pytest.raises(ValueError, match="nanpercentile: axis=.* more than once"):
        fnp.nanpercentile(np.zeros((2, 3)), 50, axis=(0, -2))
    with pytest.raises(ValueError, match=r"quantile: quantiles must be in the range \[0, 1\]"):
        fnp.quantile(np.arange(3.), 1.5)
    with pytest.raises(ValueError, match="percentile: quantiles .*percentiles in"):
        fnp.percentile(np.arange(3.), 150)
    with pytest.raises(ValueError, match="quantile: method must be one of"):
        fnp.quantile(np.arange(3.), 0.5, method="hazen")


# -- unique and sets ---------------------------------------------------------------------------


def test_unique_matches_numpy_on_concrete_values():
    x = np.array([[3., np.nan, 1.], [3., np.nan, 2.]])
    got = fnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert np.asarray(g).dtype == w.dtype
    np.testing.assert_array_equal(fnp.unique(x, equal_nan=False), np.unique(x, equal_nan=False))


def test_unique_size_pads_and_truncates_like_jax():
    x = np.array([3., 1., 3., 2.])
    values, index, inverse, counts = fnp.unique(x, size=5, return_index=True,
                                                return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(values, [1., 2., 3., 1., 1.])
    np.testing.assert_array_equal(index, [1, 3, 0, 1, 1])
    np.testing.assert_array_equal(inverse, [2, 0, 2, 1])
    np.testing.assert_array_equal(counts, [1, 1, 2, 0, 0])
    np.testing.assert_array_equal(fnp.unique(x, size=2, fill_value=9.), [1., 2.])
    np.testing.assert_array_equal(fnp.unique(x, size=4, fill_value=9.), [1., 2., 3., 9.])


def test_unique_under_vmap_needs_size():
    xs = np.array([[1, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(ft.vmap(lambda r: fnp.unique(r, size=3))(xs),
                                  [[1, 2, 1], [3, 4, 5]])
    counts = ft.vmap(lambda r: fnp.unique_counts(r, size=3).counts, in_axes=1)(xs.T)
    np.testing.assert_array_equal(counts, [[2, 1, 0], [1, 1, 1]])
    with pytest.raises(ConcretizationTypeError, match="unique: .* Pass size="):
        ft.vmap(fnp.unique)(xs)
    with pytest.raises(ConcretizationTypeError, match="intersect1d: .* Pass size="):
        ft.make_jaxpr(lambda a: fnp.intersect1d(a, a))(np.arange(3))


def test_grad_through_unique_values_and_indices():
    x = np.array([2., 1., 2., 3.])
    # without size: under differentiation alone the values are concrete
    grad = ft.grad(lambda x: fnp.sum(fnp.unique(x) ** 2))(x)
    np.testing.assert_array_equal(grad, [4., 2., 0., 6.])  # the first 2 (stable) gets it

    def energy(x):
        _, first = fnp.unique(x, return_index=True, size=3)
        return fnp.sum(x[first] * np.array([1., 10., 100.]))
    np.testing.assert_array_equal(ft.grad(energy)(x), [10., 1., 0., 100.])
    per_row = ft.vmap(ft.grad(energy))(np.stack([x, x[::-1]]))
    np.testing.assert_array_equal(per_row, [[10., 1., 0., 100.], [100., 10., 1., 0.]])


def test_set_operations_match_numpy():
    a, b = np.array([5, 1, 3, 3, 7]), np.array([3, 4, 5, 5])
    for ours, theirs in [(fnp.intersect1d, np.intersect1d), (fnp.union1d, np.union1d),
                         (fnp.setdiff1d, np.setdiff1d), (fnp.setxor1d, np.setxor1d)]:
        np.testing.assert_array_equal(ours(a, b), theirs(a, b))
    np.testing.assert_array_equal(fnp.isin(a, b), np.isin(a, b))
    np.testing.assert_array_equal(fnp.setdiff1d(a, b, size=4), [1, 7, 0, 0])
    with pytest.raises(NotImplementedError, match="unique: axis="):
        fnp.unique(np.zeros((2, 2)), axis=0)


NAN = np.nan
SETXOR_NANS = [  # NumPy: the unique values of each input, then a NaN from each is distinct
    ([NAN, 1.], [1., 2.]),  # [2, nan]
    ([NAN, 1.], [NAN, 2.]),  # [1, 2, nan, nan]
    ([NAN, NAN, 1.], [2.]),  # [1, 2, nan]
    ([NAN, NAN, 1.], [NAN, 2., 2.]),
    ([NAN], [NAN]),
    ([1., NAN, -np.inf], [np.inf, 1., -np.inf]),
    ([], [NAN, NAN]),
]


def test_setxor1d_keeps_a_nan_from_each_input():
    for a, b in SETXOR_NANS:
        a, b = np.array(a), np.array(b)
        want = np.setxor1d(a, b)
        np.testing.assert_array_equal(fnp.setxor1d(a, b), want)
        padded = np.concatenate([want, np.full(5 - len(want), -1.)])
        np.testing.assert_array_equal(fnp.setxor1d(a, b, size=5, fill_value=-1), padded)
        jitted = ft.jit(lambda a, b: fnp.setxor1d(a, b, size=5, fill_value=-1))
        np.testing.assert_array_equal(jitted(a, b), padded)
    rows = np.array([[NAN, NAN, 1.], [NAN, 1., 3.], [2., 2., 1.]])
    others = np.array([[2., 2.], [1., NAN], [NAN, NAN]])
    got = ft.vmap(lambda a, b: fnp.setxor1d(a, b, size=5, fill_value=-1))(rows, others)
    for g, a, b in zip(got, rows, others):
        want = np.setxor1d(a, b)
        np.testing.assert_array_equal(g, np.concatenate([want, np.full(5 - len(want), -1.)]))
    np.testing.assert_array_equal(got[0], [1., 2., NAN, -1., -1.])  # JAX's answer
    # the derivative goes to the first occurrence, as for unique
    grad = ft.grad(lambda a: fnp.sum(fnp.setxor1d(a, np.array([1., 5.])) * np.array([1., 10.])))
    np.testing.assert_array_equal(grad(np.array([3., 1., 3.])), [1., 0., 0.])


def test_set_operations_pad_with_the_smallest_valid_value_or_zero():
    a = np.array
    for got, want in [
            (fnp.intersect1d(a([5, 6]), a([7]), size=2), [0, 0]),  # JAX's answers
            (fnp.setxor1d(a([5, 6]), a([6, 5]), size=2), [0, 0]),
            (fnp.setdiff1d(a([5, 6]), a([6, 5]), size=2), [0, 0]),
            (fnp.intersect1d(a([5, 6, 7]), a([7, 6]), size=3), [6, 7, 6]),
            (fnp.setxor1d(a([5, 6, 7]), a([7, 6, 9]), size=5), [5, 9, 5, 5, 5]),
            (fnp.union1d(a([-3, -1]), a([-1]), size=3), [-3, -1, -3]),
            (fnp.setxor1d(a([], dtype=int), a([], dtype=int), size=2), [0, 0]),
            (fnp.intersect1d(a([1, 2]), a([], dtype=int), size=3), [0, 0, 0])]:
        np.testing.assert_array_equal(got, want)
    got = ft.vmap(lambda x, y: fnp.intersect1d(x, y, size=3))(a([[5, 6, 7], [5, 6, 7]]),
                                                              a([[7, 6], [8, 9]]))
    np.testing.assert_array_equal(got, [[6, 7, 6], [0, 0, 0]])


@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setxor1d", "setdiff1d"])
def test_set_operations_promote_like_numpy(name):
    ours, theirs = getattr(fnp, name), getattr(np, name)
    for a, b in [(np.array([1, 2, 3]), np.array([2., 3.5])),
                 (np.array([3, 1], np.int32), np.array([1, 4], np.int8)),
                 (np.array([2.5, 1.], np.float32), np.array([1, 2]))]:
        want = theirs(a, b)
        got = ours(a, b)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want)
        assert ours(a, b, size=4).dtype == want.dtype
    np.testing.assert_array_equal(fnp.intersect1d(np.array([1, 2, 3]), np.array([2.5, 3.]),
                                                  return_indices=True)[1:], ([2], [1]))


@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
def test_isin_methods_match_numpy(method):
    rng = np.random.default_rng(7)
    element = rng.integers(-3, 4, (3, 5)).astype(float)
    element[0, :3] = NAN, np.inf, -0.
    test = np.array([2., NAN, 0., np.inf, -1., 2.])
    for invert in (False, True):
        np.testing.assert_array_equal(fnp.isin(element, test, invert=invert, method=method),
                                      np.isin(element, test, invert=invert))
        got = ft.vmap(lambda e, t: fnp.isin(e, t, invert=invert, method=method))(
            element, np.stack([test, test[::-1], -test]))
        np.testing.assert_array_equal(got, [np.isin(e, t, invert=invert) for e, t in
                                            zip(element, [test, test[::-1], -test])])
    np.testing.assert_array_equal(fnp.isin(np.array([1, 2, 3]), np.array([2.5, 3.]),
                                           method=method), [False, False, True])
    np.testing.assert_array_equal(fnp.isin(np.array(2), np.array([1, 2]), method=method), True)
    np.testing.assert_array_equal(fnp.isin(np.zeros(2), np.zeros(0), method=method),
                                  [False, False])


def test_isin_by_search_or_sort_does_not_compare_every_pair():
    for method in ("binary_search", "sort", "auto"):
        closed = ft.make_jaxpr(lambda e, t: fnp.isin(e, t, method=method))(np.zeros(3000),
                                                                          np.zeros(2000))
        largest = max(math.prod(v.aval.shape) for eqn in closed.jaxpr.eqns
                      for v in eqn.outvars)
        assert largest <= 5000, (method, largest)
    with pytest.raises(ValueError, match="isin: method must be one of"):
        fnp.isin(np.zeros(2), np.zeros(2), method="hash")


def test_intersect1d_indices_match_numpy_and_batch():
    a, b = np.array([3, 1, 2, 1, 5]), np.array([5, 1, 3, 3, 7, 8])
    for ours, theirs in zip(fnp.intersect1d(a, b, return_indices=True),
                            np.intersect1d(a, b, return_indices=True)):
        np.testing.assert_array_equal(ours, theirs)
    values, i1, i2 = fnp.intersect1d(a, b, return_indices=True, size=5, fill_value=-1)
    np.testing.assert_array_equal(values, [1, 3, 5, -1, -1])
    np.testing.assert_array_equal(i1, [1, 0, 4, 5, 5])  # padded with len(a)
    np.testing.assert_array_equal(i2, [1, 2, 0, 6, 6])  # and len(b)
    rows = np.stack([a, a[::-1]]), np.stack([b[:5], b[1:]])
    got = ft.vmap(lambda a, b: fnp.intersect1d(a, b, return_indices=True, size=3))(*rows)
    for k, (x, y) in enumerate(zip(*rows)):
        want = np.intersect1d(x, y, return_indices=True)
        n = len(want[0])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g[k, :n], w)


def test_unique_of_an_empty_array():
    np.testing.assert_array_equal(fnp.unique(np.zeros(0)), np.zeros(0))
    values, counts = fnp.unique(np.zeros(0), size=2, return_counts=True)
    np.testing.assert_array_equal(values, [0., 0.])
    np.testing.assert_array_equal(counts, [0, 0])


def test_nan_forms_differentiate_around_the_nans():
    grad = ft.grad(fnp.nanmedian)(np.array([1., np.nan, 2., 5.]))
    np.testing.assert_array_equal(grad, [0., 0., 1., 0.])
    grad = ft.grad(lambda x: fnp.nanquantile(x, 0.25))(np.array([4., np.nan, 0., 2.]))
    np.testing.assert_allclose(grad, [0., 0., 0.5, 0.5])


# -- against JAX, where it is installed ----------------------------------------------------


def test_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, (3, 7)).astype(float)
    x[0, 2] = np.nan
    for descending in (False, True):
        np.testing.assert_array_equal(fnp.argsort(x, descending=descending),
                                      jnp.argsort(x, descending=descending))
    for ours, theirs in zip(lax.top_k(x, 3), jax.lax.top_k(x, 3)):
        np.testing.assert_array_equal(ours, theirs)
    y = rng.standard_normal((4, 6))
    y[1, 1] = y[1, 3]
    q = np.array([0.1, 0.5, 0.77])
    for method in ("linear", "lower", "higher", "midpoint"):
        ours = ft.grad(lambda y: fnp.sum(fnp.quantile(y, q, axis=1, method=method)))(y)
        theirs = jax.grad(lambda y: jnp.sum(jnp.quantile(y, q, axis=1, method=method)))(y)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    z, w = rng.integers(0, 4, 9), rng.integers(0, 6, 5)
    for ours, theirs in zip(fnp.unique(z, size=6, return_index=True, return_inverse=True,
                                       return_counts=True),
                            jnp.unique(z, size=6, return_index=True, return_inverse=True,
                                       return_counts=True)):
        np.testing.assert_array_equal(ours, theirs)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        np.testing.assert_array_equal(getattr(fnp, name)(z, w, size=8),
                                      getattr(jnp, name)(z, w, size=8))
