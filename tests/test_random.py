"""functrans.random: JAX's bits and values (recorded), every transform, moments, errors.

``REFERENCE`` holds jax.random's outputs (JAX 0.10.2, ``jax_enable_x64=True``, default
partitionable threefry) for the expressions of ``tests/random_cases.py``, printed by
``/tmp/venv-jax/bin/python tests/test_crosscheck_jax_random.py``.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.random as random
from random_cases import CASES, evaluate

REFERENCE = {
    'key0': np.array([0, 0], np.uint32),
    'key64': np.array([256, 123], np.uint32),
    'key_negative': np.array([4294967295, 4294967289], np.uint32),
    'key_uint64': np.array([4294967295, 4294967293], np.uint32),
    'key_int32': np.array([0, 4294967291], np.uint32),
    'split2': np.array([[3809716006, 3673372365], [544436768, 1555818814]], np.uint32),
    'split23': np.array([[[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]],
              [[2467461003, 3840466878], [2285895361, 433833334], [1524306142, 1887795613]]], np.uint32),
    'fold_in': np.array([1572650111, 2877872237], np.uint32),
    'fold_in_max': np.array([743310391, 3789761811], np.uint32),
    'fold_in_int': np.array([743310391, 3789761811], np.uint32),
    'bits_u8': np.array([[235, 30, 5], [110, 57, 35]], np.uint8),
    'bits_u16': np.array([37355, 39710, 44037, 51566, 26681], np.uint16),
    'bits_u32': np.array([[1389436230, 2162228630], [2112265252, 1331773895]], np.uint32),
    'bits_u64': np.array([16362605656491112141, 2338338114855758142, 844797087424183932], np.uint64),
    'bits_scalar': np.array(4070199207, np.uint32),
    'uniform_f16': np.array([0.5693359375, 0.60546875, 0.671875, 0.7861328125], np.float16),
    'uniform_f32': np.array([-0.8695859909057617,
              0.43717968463897705,
              0.9012048244476318,
              2.1464829444885254], np.float32),
    'uniform_f64': np.array([[17.740372600291266, 11.267615632066136],
              [0.9159308374947228, 19.71449794754321]], np.float64),
    'normal_f32': np.array([-0.7518094182014465,
              -0.03149856626987457,
              0.2025100141763687,
              0.9513893127441406,
              0.4455784261226654], np.float32),
    'normal_f64': np.array([-0.013295511467803037,
              -0.8508752968836385,
              -0.1729973463580383,
              -1.13339399042764,
              0.14596326907217064], np.float64),
    'normal_c128': np.array([(-0.5162263494229943-0.06361163563676855j),
              (-0.014032330505204095-0.3181341558526829j)], np.complex128),
    'truncated_normal': np.array([1.2912865461688543,
              -0.27071645777113157,
              -0.4147505788021091,
              1.729699308061995], np.float64),
    'bernoulli': np.array([[False, True, True], [False, False, True]], np.bool),
    'randint': np.array([-3, 1, -1, -4, 12, 8], np.int64),
    'randint_u8_clip': np.array([248, 248, 117, 154, 4, 228], np.uint8),
    'randint_wide': np.array([3628067672421680906, 832947455762503915, -2533158591115080362], np.int64),
    'randint_bounds': np.array([0, 11, 100], np.int64),
    'permutation': np.array([1, 5, 9, 8, 3, 0, 2, 6, 4, 7], np.int64),
    'permutation_axis': np.array([[1, 3, 0, 2], [5, 7, 4, 6], [9, 11, 8, 10]], np.int64),
    'permutation_independent': np.array([[1, 3, 0, 2], [5, 6, 4, 7], [9, 8, 11, 10]], np.int64),
    'choice': np.array([2, 0, 1], np.int64),
    'choice_noreplace': np.array([1.0, 5.0, 9.0, 8.0], np.float64),
    'choice_p': np.array([1, 3, 3, 0, 0], np.int64),
    'choice_p_noreplace': np.array([3, 0, 2], np.int64),
    'categorical': np.array([[0, 0], [2, 1], [2, 0], [2, 1]], np.int64),
    'categorical_axis0': np.array([1, 1, 1], np.int64),
    'exponential': np.array([2.1805323412474333,
              0.13554663695929153,
              0.04687836179721954,
              3.5560911539154594], np.float64),
    'laplace': np.array([-1.4873851606874886, 1.372300231657417, 2.390399515071116, -2.862943973355516], np.float64),
    'logistic': np.array([2.0606430477529134, -1.9299007752580712, -3.036668333833843, 3.527125464344766], np.float64),
    'gumbel': np.array([2.1211865162274726, -0.7253468674566705, -1.12608045904516, 3.5416432676845386], np.float64),
    'gumbel_high': np.array([-0.7795690402234506,
              1.9984395136787616,
              3.0601990789225115,
              -1.2686619511576107], np.float64),
    'cauchy': np.array([2.6980465450956608,
              -2.3769221208662303,
              -6.902497975025262,
              11.119214019239415], np.float64),
    'rademacher': np.array([-1, 1, 1, -1, -1, -1], np.int64),
    'multivariate_normal': np.array([[2.7123641835624115, 1.3600033649436072],
              [-1.3858538034626338, 3.183201079532977],
              [2.9322434082850704, 2.5609964999229193]], np.float64),
    'orthogonal': np.array([[0.4757861270287602, -0.8244293458632156, -0.3065025530179535],
              [0.7475921895941094, 0.5626426195765284, -0.35290112027868004],
              [0.4633934390826632, -0.06123345748537268, 0.8840344927091528]], np.float64),
    'gamma': np.array([[0.1078545271727686,
               0.5747568641968551,
               2.824747249228595,
               14.866824505416128],
              [0.2095423088254249,
               0.21307132251719735,
               1.7641025556922767,
               7.702893609529226]], np.float64),
    'gamma_f32': np.array([1.673992395401001, 0.16302816569805145, 0.120643749833107, 0.04126212000846863], np.float32),
    'loggamma': np.array([-854.9284213165616, -10.034896295271908, 1.2209212645447987], np.float64),
    'beta': np.array([[0.940069402183896, 0.4392702092556373],
              [0.6579275010628158, 0.22492335795085408]], np.float64),
    'dirichlet': np.array([[0.0047069844740250935, 0.1126109829035444, 0.8826820326224305],
              [0.46197919668941095, 0.02147595177965858, 0.5165448515309304]], np.float64),
}


def test_reference_covers_every_case():
    assert set(REFERENCE) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_recorded_jax(name):
    want, got = REFERENCE[name], evaluate(random, name)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype)
    if want.dtype.kind in "fc":
        # JAX's XLA kernels (erfinv, pow, fused multiply-adds) round differently.
        tol = 4 * np.finfo(want.dtype).eps
        np.testing.assert_allclose(got, want, rtol=tol * 8, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


K = random.PRNGKey(1234)
KEYS = random.split(K, 4)

SAMPLERS = {
    "split": lambda k: random.split(k, 3),
    "fold_in": lambda k: random.fold_in(k, 5),
    "bits": lambda k: random.bits(k, (2, 3), np.uint64),
    "uniform": lambda k: random.uniform(k, (3,), minval=-1.0, maxval=2.0),
    "normal": lambda k: random.normal(k, (2, 2), np.float32),
    "truncated_normal": lambda k: random.truncated_normal(k, -1.0, 0.5, (3,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (5,)),
    "randint": lambda k: random.randint(k, (4,), 3, 90),
    "permutation": lambda k: random.permutation(k, np.arange(6.0)),
    "choice": lambda k: random.choice(k, 5, (3,), replace=False),
    "choice_p": lambda k: random.choice(k, 3, (4,), p=np.array([0.2, 0.3, 0.5])),
    "categorical": lambda k: random.categorical(k, np.zeros((2, 3)), shape=(4, 2)),
    "gumbel": lambda k: random.gumbel(k, (3,)),
    "multivariate_normal": lambda k: random.multivariate_normal(
        k, np.zeros(2), np.array([[1.0, 0.3], [0.3, 2.0]])),
    "orthogonal": lambda k: random.orthogonal(k, 3),
    "gamma": lambda k: random.gamma(k, np.array([0.5, 3.0])),
    "dirichlet": lambda k: random.dirichlet(k, np.array([1.0, 2.0, 0.5])),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_vmap_over_keys_is_the_loop(name):
    f = SAMPLERS[name]
    loop = np.stack([f(k) for k in KEYS])
    if loop.dtype.kind == "f":  # batched matrix products may round differently
        np.testing.assert_allclose(ft.vmap(f)(KEYS), loop, rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_array_equal(ft.vmap(f)(KEYS), loop)


def test_nested_vmap_and_batched_parameters():
    keys = random.split(K, (2, 3))
    got = ft.vmap(ft.vmap(lambda k: random.normal(k, (2,))))(keys)
    np.testing.assert_array_equal(got, [[random.normal(k, (2,)) for k in r] for r in keys])
    # the key unbatched, the parameter batched; and both batched along other axes
    hi = np.array([5, 50, 500])
    got = ft.vmap(lambda m: random.randint(K, (3,), 0, m))(hi)
    np.testing.assert_array_equal(got, [random.randint(K, (3,), 0, m) for m in hi])
    a = np.array([[0.5, 1.0], [2.0, 4.0]])
    got = ft.vmap(lambda k, ai: random.gamma(k, ai), in_axes=(0, 1))(KEYS[:2], a)
    np.testing.assert_array_equal(got, [random.gamma(k, a[:, i]) for i, k in enumerate(KEYS[:2])])
    seeds = np.arange(3)
    np.testing.assert_array_equal(ft.vmap(random.PRNGKey)(seeds),
                                  [random.PRNGKey(s) for s in seeds])
    data = np.arange(4, dtype=np.uint32)
    np.testing.assert_array_equal(ft.vmap(lambda d: random.fold_in(K, d))(data),
                                  [random.fold_in(K, d) for d in data])


@pytest.mark.parametrize("name", ["split", "bits", "normal", "randint", "permutation", "gamma"])
def test_jit_gives_the_same_draws(name):
    f = SAMPLERS[name]
    np.testing.assert_array_equal(ft.jit(f)(K), f(K))
    np.testing.assert_array_equal(ft.jit(ft.vmap(f))(KEYS), ft.vmap(f)(KEYS))


def test_samples_are_constants_for_grad():
    z = random.normal(K, (3,))
    assert np.isclose(ft.grad(lambda s: fnp.sum(s * random.normal(K, (3,))))(2.0), z.sum())
    # uniform is differentiable in its bounds, as in JAX: x = lo + u (hi - lo)
    u = random.uniform(K, (4,))
    g = ft.grad(lambda lo, hi: fnp.sum(random.uniform(K, (4,), minval=lo, maxval=hi)),
                argnums=(0, 1))(1.0, 3.0)
    np.testing.assert_allclose(g, [np.sum(1 - u), np.sum(u)])
    # mean and covariance of multivariate_normal: d/dmean sum(x) = n samples
    g = ft.grad(lambda m: fnp.sum(random.multivariate_normal(K, m, np.eye(2), (5,))))(
        np.zeros(2))
    np.testing.assert_allclose(g, [5.0, 5.0])
    # a key passed through grad's closure, never differentiated
    assert ft.grad(lambda x: x * random.uniform(K))(1.0) == random.uniform(K)


def test_gamma_stopped_in_its_shape_is_a_constant():
    g = ft.grad(lambda a, s: fnp.sum(s * random.gamma(K, ft.lax.stop_gradient(a), (3,))),
                argnums=1)(2.0, 1.0)
    assert np.isclose(g, random.gamma(K, 2.0, (3,)).sum())


def test_moments():
    k = random.PRNGKey(7)
    n = 20000
    x = random.normal(k, (n,))
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1) < 0.03
    x = random.uniform(k, (n,), minval=2.0, maxval=4.0)
    assert x.min() >= 2.0 and x.max() < 4.0 and abs(x.mean() - 3) < 0.02
    x = random.normal(k, (n,), np.float32)
    assert x.dtype == np.float32 and abs(x.std() - 1) < 0.03
    x = random.exponential(k, (n,))
    assert abs(x.mean() - 1) < 0.03
    x = random.gamma(k, 0.4, (n,))
    assert abs(x.mean() - 0.4) < 0.02 and abs(x.var() - 0.4) < 0.04
    x = random.beta(k, 2.0, 5.0, (n,))
    assert abs(x.mean() - 2 / 7) < 0.01
    x = random.randint(k, (n,), -3, 4)
    assert x.min() == -3 and x.max() == 3 and abs(x.mean()) < 0.05
    counts = np.bincount(random.categorical(k, np.log(np.array([0.2, 0.3, 0.5])),
                                            shape=(n,)), minlength=3) / n
    np.testing.assert_allclose(counts, [0.2, 0.3, 0.5], atol=0.015)
    x = random.truncated_normal(k, 0.0, 1.0, (n,))
    assert x.min() > 0 and x.max() < 1 and abs(x.mean() - 0.4599) < 0.01
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    x = random.multivariate_normal(k, np.array([1.0, -1.0]), cov, (n,))
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)
    x = random.laplace(k, (n,))
    assert abs(x.var() - 2) < 0.1
    x = random.bits(k, (n,), np.uint8)
    assert abs(x.mean() - 127.5) < 1.5


def test_permutations_are_permutations():
    for k in KEYS:
        assert sorted(random.permutation(k, 50).tolist()) == list(range(50))
        x = random.permutation(k, np.arange(20).reshape(4, 5), axis=1, independent=True)
        assert (np.sort(x, axis=1) == np.arange(20).reshape(4, 5)).all()
        c = random.choice(k, 10, (10,), replace=False)
        assert sorted(c.tolist()) == list(range(10))


def test_keys_split_fold_in_and_typed_keys():
    assert random.key(5).tolist() == random.PRNGKey(5).tolist() == [0, 5]
    assert random.key_data(random.key(5)) is not None
    assert random.split(K, 5).shape == (5, 2) and random.split(K, (2, 3)).shape == (2, 3, 2)
    assert random.split(K, 0).shape == (0, 2)
    np.testing.assert_array_equal(random.wrap_key_data(np.array([0, 5], np.uint32)),
                                  random.key(5))
    # distinct keys and independent streams
    assert len({tuple(k) for k in random.split(K, 100).tolist()}) == 100
    assert not np.array_equal(random.fold_in(K, 1), random.fold_in(K, 2))


@pytest.mark.parametrize("call, error, match", [
    (lambda: random.PRNGKey(1.5), TypeError, "seed must be an integer"),
    (lambda: random.PRNGKey(np.arange(2)), TypeError, "scalar"),
    (lambda: random.PRNGKey(2 ** 64), OverflowError, "64 bits"),
    (lambda: random.split(np.array([1, 2]), 2), TypeError, "uint32"),
    (lambda: random.split(KEYS, 2), TypeError, "vmap"),
    (lambda: random.normal(np.zeros(3, np.uint32)), TypeError, "last axis of length 2"),
    (lambda: random.fold_in(K, np.arange(2)), TypeError, "scalar"),
    (lambda: random.fold_in(K, 1.5), TypeError, "integer"),
    (lambda: random.fold_in(K, -1), OverflowError, "uint32"),
    (lambda: random.bits(K, (2,), np.int32), ValueError, "unsigned"),
    (lambda: random.uniform(K, (2,), np.int32), ValueError, "float16, float32 or float64"),
    (lambda: random.normal(K, (-1,)), ValueError, "non-negative"),
    (lambda: random.normal(K, "a"), TypeError, "tuple of integers"),
    (lambda: random.uniform(K, (2,), minval=np.zeros(3)), ValueError, "broadcast"),
    (lambda: random.randint(K, (3,), 0, 5, np.float64), ValueError, "integer dtype"),
    (lambda: random.choice(K, 3, (4,), replace=False), ValueError, "without replacement"),
    (lambda: random.choice(K, 3, (2,), p=np.ones(4) / 4), ValueError, "p must have shape"),
    (lambda: random.choice(K, 3, 2), TypeError, "sequence"),
    (lambda: random.categorical(K, np.zeros((2, 3)), shape=(4, 3)), ValueError, "batch shape"),
    (lambda: random.multivariate_normal(K, np.zeros(2), np.eye(3)), ValueError, "cov"),
    (lambda: random.multivariate_normal(K, np.zeros(2), np.eye(2), method="x"), ValueError,
     "method"),
    (lambda: random.gumbel(K, (2,), mode="x"), ValueError, "mode"),
    (lambda: random.permutation(K, np.zeros(())), TypeError, "0-d"),
    (lambda: random.dirichlet(K, 1.0), ValueError, "at least one axis"),
])
def test_errors_name_the_function_and_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_namespace():
    assert ft.random is random
    for name in random.__all__:
        assert callable(getattr(random, name))


# -- the derivative of gamma draws in their shape (implicit reparameterization) ------------

# jax.random's derivatives (JAX 0.10.2, jax_enable_x64=True) of the draws below, key 1234.
GRADIENT_REFERENCE = {
    "gamma": [0.0002367879337530558, 0.8340490166627681, 1.1296040543461767,
              0.7891230545820385, 1.0655458757188403],
    "gamma_f32": [0.002618710122785308, 0.9396013324980967],
    "loggamma": [707820.8466004538, 2.995111101939327, 0.33286952680012943],
    "beta": [0.35188775736590633, -0.9646596039738605],
    "dirichlet": [[3.1308173455591856e-07, -5.952537575909477e-10, -7.860496061970112e-10],
                  [-3.3188150336540167e-08, 0.14917975349105994, -0.023358653122050235],
                  [-2.798935842193784e-07, -0.14917975289580618, 0.023358653908099852]],
}
GRADIENT_EXPRESSIONS = {
    "gamma": lambda r, d: d.jacfwd(lambda a: r.gamma(K, a))(
        np.array([0.3, 1.0, 2.5, 7.0, 40.0])).diagonal(),
    "gamma_f32": lambda r, d: d.jacfwd(lambda a: r.gamma(K, a))(
        np.array([0.4, 3.0], np.float32)).diagonal(),
    "loggamma": lambda r, d: d.jacfwd(lambda a: r.loggamma(K, a))(
        np.array([1e-3, 0.5, 3.0])).diagonal(),
    "beta": lambda r, d: np.array(d.grad(lambda a, b: r.beta(K, a, b, (3,)).sum(),
                                         argnums=(0, 1))(2.0, 0.7)),
    "dirichlet": lambda r, d: d.jacrev(lambda a: r.dirichlet(K, a))(np.array([0.2, 1.0, 4.0])),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_EXPRESSIONS))
def test_shape_derivatives_match_recorded_jax(name):
    got = np.asarray(GRADIENT_EXPRESSIONS[name](random, ft))
    want = np.array(GRADIENT_REFERENCE[name])
    if name == "loggamma":
        # The first draw, exp(-3401), underflows: JAX clamps it to the smallest normal
        # float, functrans uses the series' first term there (checked below); the rest agree.
        got, want = got[1:], want[1:]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(GRADIENT_EXPRESSIONS))
def test_shape_derivatives_match_jax(name):
    """Optional: the same against jax.random itself (skipped without JAX)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.random as jax_random
    jax_key = jax_random.PRNGKey(1234)
    assert np.array_equal(np.asarray(jax_key), K)
    got = np.asarray(GRADIENT_EXPRESSIONS[name](random, ft))
    want = np.asarray(GRADIENT_EXPRESSIONS[name](jax_random, jax))
    if name == "loggamma":
        got, want = got[1:], want[1:]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_gamma_derivative_is_the_quantiles_at_the_draws_level():
    """d x/da of a draw x = F^-1(u; a) with its level u = F(x; a) held fixed, checked with
    SciPy's gammaincinv; and Marsaglia and Tsang's transform, differenced with the key
    fixed, is smooth but a different (equally valid in distribution) path, hence no
    finite-difference check of the sampler itself."""
    ss = pytest.importorskip("scipy.special")
    a = np.array([0.3, 0.9, 2.0, 7.0, 30.0])
    x = random.gamma(K, a)
    u = ss.gammainc(a, x)
    h = 1e-5 * a
    quantile = (ss.gammaincinv(a + h, u) - ss.gammaincinv(a - h, u)) / (2 * h)
    got = ft.jacfwd(lambda a: random.gamma(K, a))(a).diagonal()
    np.testing.assert_allclose(got, quantile, rtol=1e-6)
    transform = (random.gamma(K, a + h) - random.gamma(K, a - h)) / (2 * h)
    assert not np.allclose(transform, got, rtol=1e-3)
    # log space: d log(x)/da = (dx/da) / x, and where x underflows, the first series term
    np.testing.assert_allclose(ft.jacfwd(lambda a: random.loggamma(K, a))(a).diagonal(),
                               got / x, rtol=1e-12)
    a = np.array([1e-3, 1e-4])
    log_x = random.loggamma(K, a)
    assert (log_x < -800).all()
    np.testing.assert_allclose(ft.jacfwd(lambda a: random.loggamma(K, a))(a).diagonal(),
                               -(log_x - ss.digamma(a + 1)) / a, rtol=1e-12)


def test_gamma_derivative_moments_and_transforms():
    """Unbiased in expectation: E[dx/da] = d E[x]/da = 1, E[2 x dx/da] = 2a + 1,
    E[d log x/da] = trigamma(a); batched and compiled as eager."""
    k = random.PRNGKey(11)
    n = 20000
    for a in (0.3, 2.0, 9.0):
        x = random.gamma(k, a, (n,))
        dx = ft.jacfwd(lambda a: random.gamma(k, a, (n,)))(a)  # one derivative per draw
        for sample, mean in ((dx, 1.0), (2 * x * dx, 2 * a + 1)):
            # within five standard errors
            assert abs(sample.mean() - mean) < 5 * sample.std() / np.sqrt(n), (a, mean)
    np.testing.assert_allclose(ft.grad(lambda a: random.loggamma(k, a, (n,)).mean())(2.0),
                               0.6449340668, rtol=0.03)  # trigamma(2) = pi^2 / 6 - 1
    a = np.array([0.5, 2.0, 5.0])
    one = lambda a, k: random.gamma(k, a, (4,)).sum()  # noqa: E731
    keys = random.split(k, 3)
    np.testing.assert_allclose(ft.vmap(ft.grad(one))(a, keys),
                               [ft.grad(one)(ai, ki) for ai, ki in zip(a, keys)], rtol=1e-14)
    np.testing.assert_allclose(ft.jit(ft.grad(one))(2.0, k), ft.grad(one)(2.0, k), rtol=1e-14)
    # reverse and forward agree for a shape broadcast against the draw
    f = lambda a: random.gamma(k, a, (3, 2)) * np.arange(6.0).reshape(3, 2)  # noqa: E731
    np.testing.assert_allclose(ft.jacrev(f)(a[:2]), ft.jacfwd(f)(a[:2]), rtol=1e-14)


def test_gamma_second_derivative_in_its_shape_holds_the_level_fixed():
    """d²x/da² of a draw x = F⁻¹(u; a) with its level u held fixed, against SciPy's
    gammaincinv differenced twice; a third derivative is refused, naming stop_gradient."""
    import scipy.special as sp
    a = np.array([0.6, 2.0, 7.5, 30.0])
    x = random.gamma(K, a)
    u = sp.gammainc(a, x)
    h = 1e-3
    want = (sp.gammaincinv(a + h, u) - 2 * sp.gammaincinv(a, u) + sp.gammaincinv(a - h, u)) / h**2
    hess = ft.hessian(lambda a: fnp.sum(random.gamma(K, a)))(a)
    np.testing.assert_allclose(hess, np.diag(want), rtol=1e-5, atol=1e-8)
    second = ft.grad(ft.grad(lambda a, k: random.gamma(k, a)))
    keys = random.split(K, 4)
    np.testing.assert_allclose(ft.vmap(second)(a, keys),
                               [second(ai, ki) for ai, ki in zip(a, keys)], rtol=1e-13)
    # beta (log-space gamma draws) now has second derivatives in its shapes too
    assert np.isfinite(ft.hessian(lambda a: random.beta(K, a, 2.0))(2.0))
    with pytest.raises(NotImplementedError, match="random_gamma_second_grad: the derivative "
                                                  "with respect to the shape a.*stop_gradient"):
        ft.grad(ft.grad(ft.grad(lambda a: random.gamma(K, a))))(2.0)