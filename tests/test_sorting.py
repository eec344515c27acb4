"""Targeted tests of the sorting family (the sweep is in tests/cases_sorting.py): ties and
their derivatives, NaNs, descending order, quantile methods against NumPy, searchsorted's
methods, and ``unique`` with ``size=`` under transforms."""
from __future__ import annotations

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


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "compare_all"])
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
        fnp.searchsorted(np.arange(3.), 1., method="sort")


def test_digitize_with_traced_bins_of_either_direction():
    x = np.array([-1., 0., 0.5, 1., 2., 3.])
    bins = np.array([[0., 1., 2.], [2., 1., 0.]])
    for right in (False, True):
        got = ft.vmap(lambda b: fnp.digitize(x, b, right=right))(bins)
        np.testing.assert_array_equal(got, [np.digitize(x, b, right=right) for b in bins])


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


def test_quantile_nans():
    x = np.array([[1., np.nan, 3.], [np.nan, np.nan, np.nan], [4., 2., 0.]])
    np.testing.assert_array_equal(fnp.quantile(x, 0.5, axis=1), [np.nan, np.nan, 2.])
    np.testing.assert_array_equal(fnp.nanmedian(x, axis=1), [2., np.nan, 2.])
    np.testing.assert_array_equal(fnp.nanpercentile(x, 50, axis=1), [2., np.nan, 2.])


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
