"""``functrans.scipy.stats.gaussian_kde`` beyond the sweep (tests/cases_special.py):
values against ``scipy.stats.gaussian_kde`` in one and several dimensions, weighted and not,
with every kind of bandwidth; the shapes points may take; dtypes; the estimator as a pytree
through ``jit``, ``grad`` and ``vmap``; ``logpdf`` far from the data against a computation
in 50-digit decimals; ``resample``; the refusals and argument errors; device arrays.  Where
JAX is installed, values, derivatives, draws and errors are compared with JAX's class."""
from __future__ import annotations

import dataclasses
import inspect
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
import scipy.stats as st

import functrans as ft
import functrans.numpy as fnp
import functrans.random as random
from functrans.scipy.stats import gaussian_kde
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from sweep import assert_close, check_grads

#: the public names of JAX 0.10.2's class (``dir()`` without underscores)
JAX_NAMES = {"covariance", "d", "dataset", "evaluate", "integrate_box", "integrate_box_1d",
             "integrate_gaussian", "integrate_kde", "inv_cov", "logpdf", "n", "neff", "pdf",
             "resample", "set_bandwidth", "tree_flatten", "tree_unflatten", "weights"}
LEAVES = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _data(d, n=30, seed=0):
    rng = np.random.default_rng(seed)
    mixing = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    data = mixing @ rng.standard_normal((d, n))
    return data[0] if d == 1 else data, rng.uniform(0.2, 1.0, n), rng.standard_normal((d, 7))


BANDWIDTHS = {"default": None, "scott": "scott", "silverman": "silverman", "scalar": 0.4,
              "numpy_scalar": np.float64(0.6),
              "callable": lambda kde: 0.8 * kde.neff ** (-1.0 / (kde.d + 4))}


@pytest.fixture(scope="module")
def jax_stats():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats
    return jax.scipy.stats


# -- values against SciPy --------------------------------------------------------------------

@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("bw", BANDWIDTHS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_matches_scipy(d, bw, weighted):
    data, w, points = _data(d)
    kwargs = {"bw_method": BANDWIDTHS[bw], "weights": w if weighted else None}
    got, want = gaussian_kde(data, **kwargs), st.gaussian_kde(data, **kwargs)
    assert (got.d, got.n) == (want.d, want.n) == (d, 30)
    for name in ("dataset", "weights", "covariance", "inv_cov"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-12,
                                   atol=1e-14, err_msg=name)
    np.testing.assert_allclose(got.neff, want.neff, rtol=1e-13)
    for method in ("evaluate", "__call__", "pdf", "logpdf"):
        np.testing.assert_allclose(getattr(got, method)(points), getattr(want, method)(points),
                                   rtol=1e-12, err_msg=method)
    mean, cov = points[:, 0], np.eye(d) * 0.5 + 0.1
    np.testing.assert_allclose(got.integrate_gaussian(mean, cov),
                               want.integrate_gaussian(mean, cov), rtol=1e-12)
    # Both orders of the pair: the estimator with fewer points is the one mapped over.
    other_data = points[0] if d == 1 else points
    for other, other_scipy in [(gaussian_kde(other_data), st.gaussian_kde(other_data))]:
        np.testing.assert_allclose(got.integrate_kde(other), want.integrate_kde(other_scipy),
                                   rtol=1e-12)
        np.testing.assert_allclose(other.integrate_kde(got), other_scipy.integrate_kde(want),
                                   rtol=1e-12)
    if d == 1:
        for low, high in [(-0.5, 1.0), (1.0, -0.5), (-40.0, 40.0), (3.0, 5.0)]:
            np.testing.assert_allclose(got.integrate_box_1d(low, high),
                                       want.integrate_box_1d(low, high), rtol=1e-12,
                                       atol=1e-16)


def test_points_take_scipys_shapes():
    data1, _, points = _data(1)
    kde1, ref1 = gaussian_kde(data1), st.gaussian_kde(data1)
    for x in (0.3, [0.3, 1.0], points[0], points[:1]):
        np.testing.assert_allclose(kde1.logpdf(x), ref1.logpdf(x), rtol=1e-12)
    data2, _, points = _data(2)
    kde2, ref2 = gaussian_kde(data2), st.gaussian_kde(data2)
    one_point = points[:, 0]  # (d,): one point of d dimensions
    np.testing.assert_allclose(kde2.pdf(one_point), ref2.pdf(one_point), rtol=1e-12)
    assert kde2.pdf(one_point).shape == (1,)
    assert kde2.pdf(points).shape == (7,)


def test_dtypes():
    data, w, points = _data(2)
    single = gaussian_kde(data.astype(np.float32))
    for name in LEAVES:
        assert getattr(single, name).dtype == np.float32, name
    assert single.logpdf(points.astype(np.float32)).dtype == np.float32
    assert single.pdf(0.5 * np.ones(2, np.float32)).dtype == np.float32
    assert single.logpdf(points).dtype == np.float64  # float64 points promote
    assert single.integrate_kde(single).dtype == np.float32
    np.testing.assert_allclose(single.logpdf(points), gaussian_kde(data).logpdf(points),
                               rtol=1e-4)
    integers = gaussian_kde(np.array([0, 1, 3, 4, 7]))
    assert integers.dataset.dtype == integers.covariance.dtype == np.float64
    # float64 weights promote float32 data, as NumPy's rules say
    assert gaussian_kde(data.astype(np.float32), weights=w).dataset.dtype == np.float64


def test_lists_are_taken_as_arrays():
    kde = gaussian_kde([0.0, 1.0, 3.0], weights=[1, 2, 1])
    want = st.gaussian_kde([0.0, 1.0, 3.0], weights=[1, 2, 1])
    np.testing.assert_allclose(kde.logpdf([0.5, 2.0]), want.logpdf([0.5, 2.0]), rtol=1e-12)


# -- logpdf far from the data ----------------------------------------------------------------

def _log_density_in_decimals(kde, x) -> float:
    """``log(sum_i w_i N(x; x_i, covariance))`` in 50-digit decimals from the estimator's
    ``inv_cov`` (the determinant by cofactors, no Cholesky factor): no term underflows."""
    with localcontext() as context:
        context.prec = 50
        precision = [[Decimal(float(v)) for v in row] for row in np.asarray(kde.inv_cov)]
        d = len(precision)
        determinant = (precision[0][0] if d == 1 else
                       precision[0][0] * precision[1][1] - precision[0][1] * precision[1][0])
        pi = Decimal("3.14159265358979323846264338327950288419716939937511")
        log_norm = determinant.ln() / 2 - Decimal(d) / 2 * (2 * pi).ln()
        total = Decimal(0)
        data = np.asarray(kde.dataset)
        for i, weight in enumerate(np.asarray(kde.weights)):
            diff = [Decimal(float(x[j])) - Decimal(float(data[j, i])) for j in range(d)]
            form = sum(diff[j] * precision[j][k] * diff[k] for j in range(d) for k in range(d))
            total += Decimal(float(weight)) * (-form / 2).exp()
        return float(total.ln() + log_norm)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_logpdf_far_from_the_data_sums_in_logs(d, weighted):
    data, w, _ = _data(d, n=12, seed=3)
    weights = w[:12] if weighted else None
    kde = gaussian_kde(data, weights=weights)
    far = np.full(d, 150.0)
    # SciPy's density, and the sum of kernels, underflow to 0 there
    assert st.gaussian_kde(data, weights=weights).pdf(far)[0] == 0.0
    assert float(kde.pdf(far)[0]) == 0.0
    got = float(kde.logpdf(far)[0])
    want = _log_density_in_decimals(kde, far)
    assert want < -745  # below log of the smallest subnormal double
    assert math.isclose(got, want, rel_tol=1e-13), (got, want)
    # the derivative is finite there, and agrees with differences of logpdf
    grad = ft.grad(lambda x: kde.logpdf(x)[0])(far)
    assert np.all(np.isfinite(grad))
    check_grads(lambda x: kde.logpdf(x), [far], order=2, rng=np.random.default_rng(0),
                rtol=1e-6, atol=1e-6)


# -- the estimator as a pytree ---------------------------------------------------------------

def test_is_a_frozen_dataclass_pytree_with_jaxs_names():
    data, w, _ = _data(2)
    kde = gaussian_kde(data, weights=w)
    assert dataclasses.is_dataclass(kde)
    assert tuple(f.name for f in dataclasses.fields(kde)) == LEAVES
    assert {n for n in dir(kde) if not n.startswith("_")} == JAX_NAMES
    with pytest.raises(dataclasses.FrozenInstanceError):
        kde.dataset = data  # type: ignore[misc]
    leaves, tree = tree_flatten(kde)
    assert len(leaves) == 5
    for leaf, name in zip(leaves, LEAVES):
        assert leaf is getattr(kde, name)
    again = tree_unflatten(tree, leaves)
    assert type(again) is gaussian_kde and again.dataset is kde.dataset
    doubled = tree_map(lambda x: 2 * x, kde)
    np.testing.assert_array_equal(doubled.dataset, 2 * kde.dataset)
    assert kde.tree_flatten() == (tuple(leaves), None)
    assert gaussian_kde.tree_unflatten(None, leaves).neff is kde.neff


def test_jit_takes_and_returns_the_estimator():
    data, w, points = _data(2)
    kde = gaussian_kde(data, weights=w)
    logpdf = ft.jit(lambda kde, x: kde.logpdf(x))
    assert_close(logpdf(kde, points), kde.logpdf(points), rtol=1e-13, atol=0)
    built = ft.jit(lambda data, w: gaussian_kde(data, "silverman", w))(data, w)
    assert type(built) is gaussian_kde
    for got, want in zip(tree_leaves(built), tree_leaves(gaussian_kde(data, "silverman", w))):
        assert_close(got, want, rtol=1e-13, atol=1e-15)
    methods = ft.jit(lambda kde, x: (kde.pdf(x), kde.integrate_kde(kde),
                                     kde.integrate_gaussian(x[:, 0], np.eye(2))))
    for got, want in zip(methods(kde, points), (kde.pdf(points), kde.integrate_kde(kde),
                                                kde.integrate_gaussian(points[:, 0],
                                                                       np.eye(2)))):
        assert_close(got, want, rtol=1e-13, atol=0)
    data1 = data[0]
    box = ft.jit(lambda kde, low, high: kde.integrate_box_1d(low, high))
    assert_close(box(gaussian_kde(data1), -0.5, 1.0),
                 gaussian_kde(data1).integrate_box_1d(-0.5, 1.0), rtol=1e-13, atol=0)


@pytest.mark.parametrize("d", [1, 2])
def test_grad_in_the_data_the_weights_and_the_points(d):
    data, w, points = _data(d, n=8)
    points = points[0, :3] if d == 1 else points[:, :3]

    def loss(data, w, x):
        return gaussian_kde(data, weights=w).logpdf(x)

    check_grads(loss, [data, w, points], order=2, rng=np.random.default_rng(1), rtol=1e-6,
                atol=1e-6)
    check_grads(lambda data, x: gaussian_kde(data).pdf(x), [data, points], order=1,
                rng=np.random.default_rng(2), rtol=1e-6, atol=1e-6)
    check_grads(lambda bw: gaussian_kde(data, bw).logpdf(points), [np.float64(0.7)],
                order=2, rng=np.random.default_rng(3), rtol=1e-6, atol=1e-6)


def test_grad_of_an_estimator_argument_is_an_estimator():
    data, w, points = _data(2)
    kde = gaussian_kde(data, weights=w)
    cotangent = ft.grad(lambda kde: fnp.sum(kde.pdf(points)))(kde)
    assert type(cotangent) is gaussian_kde
    # d/dx_i of the density at p is w_i N(p; x_i, C) inv_cov (p - x_i); a kernel's
    # covariance enters through inv_cov only (evaluation reads covariance nowhere).
    diff = points[:, :, None] - kde.dataset[:, None, :]  # (d, m, n)
    kernels = np.stack([st.multivariate_normal.pdf(points.T, x, kde.covariance)
                        for x in kde.dataset.T], axis=-1)  # (m, n)
    want = np.einsum("jk,kmn,mn->jn", kde.inv_cov, diff, kernels) * kde.weights
    np.testing.assert_allclose(cotangent.dataset, want, rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(cotangent.covariance, np.zeros((2, 2)))
    np.testing.assert_array_equal(cotangent.neff, 0.0)


def test_vmap_over_data_over_estimators_and_over_points():
    rng = np.random.default_rng(4)
    datasets, weights = rng.standard_normal((3, 2, 9)), rng.uniform(0.5, 1.0, (3, 9))
    points = rng.standard_normal((2, 5))
    loop = np.stack([gaussian_kde(x, weights=w).logpdf(points)
                     for x, w in zip(datasets, weights)])
    batched = ft.vmap(lambda x, w: gaussian_kde(x, weights=w).logpdf(points))(datasets,
                                                                            weights)
    np.testing.assert_allclose(batched, loop, rtol=1e-13)
    estimators = ft.vmap(lambda x, w: gaussian_kde(x, weights=w))(datasets, weights)
    assert type(estimators) is gaussian_kde and estimators.dataset.shape == (3, 2, 9)
    assert estimators.inv_cov.shape == (3, 2, 2)
    np.testing.assert_allclose(ft.vmap(lambda kde: kde.logpdf(points))(estimators), loop,
                               rtol=1e-13)
    kde = gaussian_kde(datasets[0])
    by_point = ft.vmap(kde.logpdf, in_axes=1)(points)
    np.testing.assert_allclose(by_point[:, 0], kde.logpdf(points), rtol=1e-13)
    grads = ft.vmap(ft.grad(lambda x: fnp.sum(gaussian_kde(x).logpdf(points))))(datasets)
    for g, x in zip(grads, datasets):
        np.testing.assert_allclose(
            g, ft.grad(lambda x: fnp.sum(gaussian_kde(x).logpdf(points)))(x), rtol=1e-12)


# -- resample ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
@pytest.mark.parametrize("d", [1, 2])
def test_resample_draws_a_point_by_weight_plus_a_kernel_draw(d, shape):
    data, w, _ = _data(d, n=10)
    kde = gaussian_kde(data, weights=w)
    key = random.key(7)
    got = kde.resample(key, shape)
    assert got.shape == (d,) + shape and got.dtype == np.float64
    index_key, kernel_key = random.split(key)
    index = random.choice(index_key, 10, shape=shape, p=kde.weights)
    noise = random.multivariate_normal(kernel_key, np.zeros(d), kde.covariance, shape=shape)
    want = kde.dataset[:, np.asarray(index)] + np.moveaxis(np.asarray(noise), -1, 0)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(ft.jit(kde.resample, static_argnums=1)(key, shape), got)


def test_resample_follows_the_estimated_distribution():
    data, w, _ = _data(2, n=10)
    kde = gaussian_kde(data, weights=w)
    draws = np.asarray(kde.resample(random.key(0), (40_000,)))
    mean = data @ kde.weights
    # the mixture's covariance: the weighted data's (divided by the total weight) plus
    # the kernel's
    spread = np.cov(data, aweights=kde.weights, bias=True) + kde.covariance
    np.testing.assert_allclose(draws.mean(axis=1), mean, atol=0.03)
    np.testing.assert_allclose(np.cov(draws), spread, atol=0.05)
    assert gaussian_kde(data.astype(np.float32)).resample(random.key(0), (3,)).dtype == \
        np.float32


# -- refusals and errors ---------------------------------------------------------------------

#: name: (call(K, kde) with the class K and a 2-D estimator kde, error, message)
ERRORS = {
    "integrate_box": (lambda K, kde: kde.integrate_box([0.0, 0.0], [1.0, 1.0]),
                      NotImplementedError, "integrate_box_1d"),
    "set_bandwidth": (lambda K, kde: kde.set_bandwidth("silverman"), NotImplementedError,
                      "immutable"),
    "complex_data": (lambda K, kde: K(np.ones((2, 5)) * 1j), NotImplementedError,
                     "complex data"),
    "complex_points": (lambda K, kde: kde.pdf(np.ones(2) * 1j), NotImplementedError,
                       "complex points"),
    "one_element": (lambda K, kde: K(np.array([1.0])), ValueError,
                    "more than one element"),
    "weights_shape": (lambda K, kde: K(np.arange(5.0), weights=np.ones((5, 1))),
                      ValueError, r"weights must be one-dimensional of length n = 5"),
    "weights_length": (lambda K, kde: K(np.arange(5.0), weights=np.ones(4)),
                       ValueError, r"got shape \(4,\)"),
    "bw_string": (lambda K, kde: K(np.arange(5.0), "normal"), ValueError,
                  "bw_method must be"),
    "bw_array": (lambda K, kde: K(np.arange(5.0), np.ones(2)), ValueError,
                 "bw_method must be"),
    "points_dimension": (lambda K, kde: kde.logpdf(np.ones((3, 4))), ValueError,
                         "points have dimension 3"),
    "box_1d_of_2d": (lambda K, kde: kde.integrate_box_1d(0.0, 1.0), ValueError,
                     "only for one-dimensional data"),
    "box_1d_limits": (lambda K, kde: K(np.arange(5.0)).integrate_box_1d(
        np.zeros(2), 1.0), ValueError, "must be scalars"),
    "gaussian_mean": (lambda K, kde: kde.integrate_gaussian(np.zeros(3), np.eye(2)),
                      ValueError,
                      "mean must have 2 entries"),
    "gaussian_cov": (lambda K, kde: kde.integrate_gaussian(np.zeros(2), np.eye(3)),
                     ValueError,
                     r"cov must be of shape \(2, 2\)"),
    "kde_dimensions": (lambda K, kde: kde.integrate_kde(K(np.arange(5.0))),
                       ValueError, "different dimensions"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_name_the_estimator_and_the_problem(name):
    call, error, match = ERRORS[name]
    with pytest.raises(error, match=match) as raised:
        call(gaussian_kde, gaussian_kde(_data(2)[0]))
    assert "gaussian_kde" in str(raised.value)


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_jaxs(name, jax_stats):
    """JAX raises the same exception types for the same calls."""
    call, error, _ = ERRORS[name]
    with pytest.raises(error):
        call(jax_stats.gaussian_kde, jax_stats.gaussian_kde(_data(2)[0]))


# -- JAX's class, where JAX is installed -----------------------------------------------------

def test_jax_names_are_the_stored_ones(jax_stats):
    kde = jax_stats.gaussian_kde(_data(2)[0])
    assert {n for n in dir(kde) if not n.startswith("_")} == JAX_NAMES
    assert tuple(f.name for f in dataclasses.fields(kde)) == LEAVES


def test_methods_take_jaxs_parameters(jax_stats):
    for name in sorted(JAX_NAMES | {"__call__"}):
        ours, theirs = getattr(gaussian_kde, name), getattr(jax_stats.gaussian_kde, name)
        if isinstance(theirs, property):
            assert isinstance(ours, property), name
            continue
        if not callable(theirs):
            continue
        theirs = getattr(theirs, "__wrapped__", theirs)  # JAX jits two of them
        want = [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters
                .values()]
        got = [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters
               .values()]
        assert got == want, name


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("d", [1, 3])
def test_values_and_derivatives_match_jax(d, weighted, jax_stats):
    import jax
    import jax.numpy as jnp
    data, w, points = _data(d)
    weights = w if weighted else None
    got, want = gaussian_kde(data, weights=weights), jax_stats.gaussian_kde(data,
                                                                           weights=weights)
    for name in LEAVES:
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-12,
                                   atol=1e-15, err_msg=name)
    for method in ("pdf", "logpdf"):
        np.testing.assert_allclose(getattr(got, method)(points),
                                   getattr(want, method)(points), rtol=1e-12)
    np.testing.assert_allclose(got.integrate_kde(got), want.integrate_kde(want), rtol=1e-12)
    np.testing.assert_allclose(got.integrate_gaussian(points[:, 0], np.eye(d)),
                               want.integrate_gaussian(points[:, 0], np.eye(d)), rtol=1e-12)
    if d == 1:
        np.testing.assert_allclose(got.integrate_box_1d(-0.5, 1.0),
                                   want.integrate_box_1d(-0.5, 1.0), rtol=1e-12)
    w = w if weighted else np.ones_like(w)
    ours = ft.grad(lambda x, w, p: fnp.sum(gaussian_kde(x, weights=w).logpdf(p)),
                   argnums=(0, 1, 2))(data, w, points)
    theirs = jax.grad(lambda x, w, p: jnp.sum(jax_stats.gaussian_kde(x, weights=w).logpdf(p)),
                      argnums=(0, 1, 2))(data, w, points)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(), (5,)])
@pytest.mark.parametrize("d", [1, 2])
def test_resample_draws_jaxs_bits(d, shape, jax_stats):
    import jax
    data, w, _ = _data(d, n=10)
    got = gaussian_kde(data, weights=w).resample(random.key(3), shape)
    want = jax_stats.gaussian_kde(data, weights=w).resample(jax.random.key(3), shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# -- device arrays ---------------------------------------------------------------------------

def test_device_arrays_stay_on_the_device(device):
    data, w, points = _data(2, n=10)
    data1 = data[0]

    def everything(data, w, points, data1, mean, cov, seed):
        kde = gaussian_kde(data, weights=w)
        one = gaussian_kde(data1, "silverman")
        return (tree_leaves(kde), kde.pdf(points), kde.logpdf(points), kde(points[:, 0]),
                kde.integrate_gaussian(mean, cov), kde.integrate_kde(kde),
                one.integrate_box_1d(mean[0], mean[1]), one.logpdf(data1),
                kde.resample(random.PRNGKey(seed), (4,)),
                ft.grad(lambda x: fnp.sum(gaussian_kde(x, weights=w).logpdf(points)))(data),
                ft.vmap(lambda p: kde.logpdf(p), in_axes=1)(points))

    host = (data, w, points, data1, np.array([-0.5, 1.0]), np.eye(2), np.array(3))
    args = device.put(host)
    with device.transfers() as counts:
        got = everything(*args)
    if counts is not None:
        assert counts.h2d == 0, counts.h2d_log
        assert counts.d2h == 0, counts.d2h_log
    for g, w_ in zip(tree_leaves(got), tree_leaves(everything(*host))):
        assert isinstance(g, device.array_type), type(g)
        np.testing.assert_allclose(device.get(g), np.asarray(w_), rtol=1e-12, atol=1e-14)
