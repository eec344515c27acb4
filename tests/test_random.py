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
    'poisson': np.array([0, 0, 5, 8, 6, 46, 917], np.int64),
    'poisson_shape_i32': np.array([[5, 3, 2], [2, 4, 4]], np.int32),
    'poisson_invalid': np.array([-1, -1, 0], np.int64),
    'binomial': np.array([[0.0, 6.0, 34.0, 191.0], [0.0, 6.0, 22.0, 167.0]], np.float64),
    'binomial_high_p': np.array([0.0, 32.0, 59.0, 60.0], np.float64),
    'binomial_f32': np.array([11.0, 11.0, 16.0, 9.0], np.float32),
    'binomial_invalid': np.array([np.nan, np.nan, np.inf, 3.0, np.nan], np.float64),
    'multinomial': np.array([2.0, 0.0, 15.0, 13.0], np.float64),
    'multinomial_shape': np.array([[[4.0, 0.0, 1.0], [188.0, 112.0, 100.0]],
              [[4.0, 0.0, 1.0], [197.0, 105.0, 98.0]],
              [[2.0, 1.0, 2.0], [198.0, 98.0, 104.0]]], np.float64),
    'geometric': np.array([[3, 3, 2], [1, 1, 1]], np.int64),
    'geometric_f32': np.array([4, 2, 2, 4], np.int32),
    't': np.array([-3.406437870414267, -0.01405906294200299, 1.4996968072688068], np.float64),
    't_f32': np.array([0.41126951575279236, 0.2517988681793213, 0.4437931776046753], np.float32),
    'chisquare': np.array([[0.048048095600607646, 1.1495137283937102, 10.113283513254668],
              [4.2468345193126344, 0.19742190558910544, 5.5537172098697445]], np.float64),
    'f': np.array([0.7256724355514576, 4.69876769071819], np.float64),
    'lognormal': np.array([[1.4379914274151977, 0.18036897943560742],
              [0.6028324262227583, 17.353810636262203]], np.float64),
    'lognormal_default': np.array([0.9867924834340193, 0.4270409806738392, 0.8411398469256551], np.float64),
    'pareto': np.array([[15.266569328347844, 1.0462184764374212],
              [1.0603488441593143, 3.271876645410172]], np.float64),
    'rayleigh': np.array([0.9793438354103022, 4.064920577051771, 4.966726644888815, 0.48137876621798176], np.float64),
    'wald': np.array([[0.1444972016531002, 0.980351217324083, 0.38608884226679496],
              [0.07706135458376245, 0.2790275222589962, 0.5858312293567352]], np.float64),
    'maxwell': np.array([2.3698162524846134, 2.343797727399282, 1.5620784420143083, 2.0935146956729005], np.float64),
    'double_sided_maxwell': np.array([[0.8274802253637392, 4.422719206136463],
              [-0.898775920975858, 4.12910962983521]], np.float64),
    'double_sided_maxwell_shape': np.array([-4.617240666207442,
              -3.1880069268145212,
              -3.124657163581676,
              3.9233904047352954], np.float64),
    'weibull_min': np.array([[9.509442582452026, 1.0273684972647263],
              [0.004395161609582025, 3.052724582547527]], np.float64),
    'generalized_normal': np.array([1.0602217563628293,
              3.7036481648466237,
              -1.012428074762577,
              0.08312995630360774], np.float64),
    'triangular': np.array([[0.9916189560146766, -0.3833277291625312, -0.3579962018238324],
              [1.4930958204836848, 1.2819942979328394, 1.1906166472946662]], np.float64),
    'ball': np.array([[-0.3964923133798396, 0.2711840476505037, -0.20965949390569819],
              [0.8015100167102779, 0.2502929866463519, 0.1766076745222755]], np.float64),
    'ball_default': np.array([-0.5850110599908863,
              0.07958249556376817,
              0.30104848632496184,
              -0.27871737197968244], np.float64),
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
    "poisson": lambda k: random.poisson(k, np.array([2.0, 40.0]), (3, 2)),
    "binomial": lambda k: random.binomial(k, np.array([5.0, 300.0]), 0.4, (3, 2)),
    "multinomial": lambda k: random.multinomial(k, 50.0, np.array([0.2, 0.5, 0.3])),
    "geometric": lambda k: random.geometric(k, 0.3, (4,)),
    "t": lambda k: random.t(k, np.array([1.0, 6.0])),
    "chisquare": lambda k: random.chisquare(k, 3.0, (2,)),
    "f": lambda k: random.f(k, 2.0, 5.0, (2,)),
    "lognormal": lambda k: random.lognormal(k, 0.5, (3,)),
    "pareto": lambda k: random.pareto(k, 2.0, (3,)),
    "rayleigh": lambda k: random.rayleigh(k, 1.5, (3,)),
    "wald": lambda k: random.wald(k, 2.0, (3,)),
    "maxwell": lambda k: random.maxwell(k, (3,)),
    "double_sided_maxwell": lambda k: random.double_sided_maxwell(k, 1.0, 2.0, (3,)),
    "weibull_min": lambda k: random.weibull_min(k, 1.0, 2.0, (3,)),
    "generalized_normal": lambda k: random.generalized_normal(k, 1.5, (3,)),
    "triangular": lambda k: random.triangular(k, 0.0, 0.3, 1.0, (3,)),
    "ball": lambda k: random.ball(k, 3, 1.0, (2,)),
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


@pytest.mark.parametrize("name", ["split", "bits", "normal", "randint", "permutation", "gamma",
                                  "poisson", "binomial", "multinomial", "t", "wald", "ball"])
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
    np.testing.assert_array_equal(random.key(5, dtype=None), random.key(5))
    assert random.key_impl(K) == random.key_impl(random.split(K, (2, 3))) == "threefry2x32"
    assert random.clone(K) is K
    assert random.uniform(random.clone(K)) == random.uniform(K)
    with pytest.raises(NotImplementedError, match="random.key: dtype='key<fry>'"):
        random.key(5, dtype="key<fry>")
    with pytest.raises(NotImplementedError, match="random.wrap_key_data: dtype"):
        random.wrap_key_data(random.key(5), dtype="key<fry>")
    with pytest.raises(TypeError, match="random.key_impl: key must be"):
        random.key_impl(np.zeros(3))
    with pytest.raises(TypeError, match="random.clone: key must be"):
        random.clone(np.zeros(2))
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
        obj = getattr(random, name)
        assert callable(obj) or isinstance(obj, ft.core.Primitive) and name.endswith("_p")


# -- the derivative of gamma draws in their shape (implicit reparameterization) ------------

# jax.random's derivatives (JAX 0.10.2, jax_enable_x64=True) of the draws below, key 1234.
GRADIENT_REFERENCE = {
    "gamma": [0.0002367879337530558, 0.8340490166627681, 1.1296040543461767,
              0.7891230545820385, 1.0655458757188403],
    "gamma_f32": [0.002618710122785308, 0.9396013324980967],
    "loggamma": [707820.8466004538, 2.995111101939327, 0.33286952680012943],
    "beta": [0.35188775736590633, -0.9646596039738605],
    "t": [-0.5111230371635935, 0.00312845713306887, -0.00012071167164901206],
    "chisquare": [3.265181123452976e-05, 0.8939515121240782, 1.0629671038438784],
    "f": [-0.334488874148664, -0.4125631885634349],
    "generalized_normal": [0.001681846181906797, -0.28223681240098303, 0.5322320201323845],
    "ball": [-0.18647624542715074, -0.18631022676298514, 0.03696886505251296],
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
    # samplers built on gamma draws differentiate through its implicit derivative
    "t": lambda r, d: d.jacfwd(lambda a: r.t(K, a))(np.array([0.5, 3.0, 20.0])).diagonal(),
    "chisquare": lambda r, d: d.jacfwd(lambda a: r.chisquare(K, a))(
        np.array([0.5, 3.0, 20.0])).diagonal(),
    "f": lambda r, d: np.array(d.grad(lambda a, b: r.f(K, a, b, (3,)).sum(),
                                      argnums=(0, 1))(3.0, 7.0)),
    "generalized_normal": lambda r, d: d.jacfwd(lambda p: r.generalized_normal(K, p, (3,)))(1.5),
    "ball": lambda r, d: d.jacfwd(lambda p: r.ball(K, 3, p))(1.5),
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

# -- the samplers built on the others: distributions, parameters, errors ---------------------

N = 4000


def _ks(x, dist):
    """Kolmogorov-Smirnov against the SciPy distribution ``dist``: with a fixed key the
    p-value is a fixed number; below 1e-3 means the draws do not follow ``dist``."""
    stats = pytest.importorskip("scipy.stats")
    return stats.kstest(np.asarray(x).ravel(), dist.cdf).pvalue


def _continuous_cases():
    import scipy.stats as st
    k = random.PRNGKey(21)
    return {
        "t": (random.t(k, 3.5, (N,)), st.t(3.5)),
        "t_small_df": (random.t(k, 0.6, (N,)), st.t(0.6)),
        "chisquare": (random.chisquare(k, 2.5, (N,)), st.chi2(2.5)),
        "chisquare_f32": (random.chisquare(k, 0.3, (N,), np.float32), st.chi2(0.3)),
        "f": (random.f(k, 4.0, 9.0, (N,)), st.f(4.0, 9.0)),
        "lognormal": (random.lognormal(k, 0.6, (N,)), st.lognorm(0.6)),
        "pareto": (random.pareto(k, 2.5, (N,)), st.pareto(2.5)),
        "rayleigh": (random.rayleigh(k, 1.7, (N,)), st.rayleigh(scale=1.7)),
        "wald": (random.wald(k, 0.8, (N,)), st.invgauss(0.8)),
        "wald_wide": (random.wald(k, 6.0, (N,)), st.invgauss(6.0)),
        "maxwell": (random.maxwell(k, (N,)), st.maxwell()),
        "double_sided_maxwell": (random.double_sided_maxwell(k, 0.0, 1.0, (N,)), _dsm()),
        "weibull_min": (random.weibull_min(k, 2.0, 0.7, (N,)), st.weibull_min(0.7, scale=2.0)),
        "generalized_normal": (random.generalized_normal(k, 0.8, (N,)), st.gennorm(0.8)),
        "generalized_normal_p4": (random.generalized_normal(k, 4.0, (N,)), st.gennorm(4.0)),
        "triangular": (random.triangular(k, -1.0, 0.5, 3.0, (N,)),
                       st.triang(1.5 / 4.0, loc=-1.0, scale=4.0)),
        # a point uniform in the unit p-ball of dimension d has P(|x|_p <= r) = r**d
        "ball_radius": (_ball_radius_to_the_d(k, 3, 1.5), st.uniform()),
        "ball_radius_l2": (_ball_radius_to_the_d(k, 5, 2), st.uniform()),
    }


def _dsm():
    import scipy.stats as st

    class Symmetric:  # |x| is Maxwell, the sign a fair coin
        @staticmethod
        def cdf(x):
            return 0.5 + np.sign(x) * 0.5 * st.maxwell.cdf(np.abs(x))
    return Symmetric()


def _ball_radius_to_the_d(k, d, p):
    x = np.asarray(random.ball(k, d, p, (N,)))
    return (np.sum(np.abs(x) ** p, axis=-1) ** (1 / p)) ** d


@pytest.mark.parametrize("name", ["t", "t_small_df", "chisquare", "chisquare_f32", "f",
                                  "lognormal", "pareto", "rayleigh", "wald", "wald_wide",
                                  "maxwell", "double_sided_maxwell", "weibull_min",
                                  "generalized_normal", "generalized_normal_p4", "triangular",
                                  "ball_radius", "ball_radius_l2"])
def test_continuous_draws_follow_their_distribution(name):
    pytest.importorskip("scipy.stats")
    x, dist = _continuous_cases()[name]
    assert _ks(x, dist) > 1e-3


def test_a_wrong_distribution_is_told_apart():
    """The KS check above can fail: draws against a nearby wrong law."""
    import scipy.stats as st
    k = random.PRNGKey(21)
    assert _ks(random.t(k, 3.5, (N,)), st.t(2.0)) < 1e-3
    assert _ks(random.wald(k, 0.8, (N,)), st.invgauss(1.0)) < 1e-3


def _chi_square_pvalue(draws, pmf, support):
    """Pearson's test of integer ``draws`` against ``pmf`` over ``support`` (the rest
    pooled into one tail bin)."""
    stats = pytest.importorskip("scipy.stats")
    draws = np.asarray(draws).astype(np.int64).ravel()
    observed = np.array([(draws == v).sum() for v in support] + [(~np.isin(draws, support)).sum()])
    probs = np.append(pmf(support), 1 - pmf(support).sum())
    keep = probs * len(draws) >= 5
    observed = np.append(observed[keep], observed[~keep].sum())
    expected = np.append(probs[keep], probs[~keep].sum()) * len(draws)
    return stats.chisquare(observed[expected > 0], expected[expected > 0]).pvalue


@pytest.mark.parametrize("lam", [0.3, 4.0, 9.9, 10.0, 25.0, 400.0])
def test_poisson_draws_follow_the_poisson_law(lam):
    import scipy.stats as st
    x = random.poisson(random.PRNGKey(8), lam, (N,))
    assert x.dtype == np.int64
    support = np.arange(int(lam + 6 * np.sqrt(lam) + 5))
    assert _chi_square_pvalue(x, st.poisson(lam).pmf, support) > 1e-3
    assert abs(x.mean() - lam) < 5 * np.sqrt(lam / N)
    # and the test tells a shifted rate apart
    assert _chi_square_pvalue(x, st.poisson(lam * 1.15 + 0.1).pmf, support) < 1e-3


@pytest.mark.parametrize("n, p", [(7, 0.3), (30, 0.2), (30, 0.8), (200, 0.45), (2000, 0.97),
                                  (5, 1.0), (12, 0.0)])
def test_binomial_draws_follow_the_binomial_law(n, p):
    import scipy.stats as st
    x = random.binomial(random.PRNGKey(9), float(n), p, (N,))
    assert x.dtype == np.float64 and (x >= 0).all() and (x <= n).all()
    assert (x == np.round(x)).all()
    if p in (0.0, 1.0):
        assert (x == n * p).all()
        return
    support = np.arange(n + 1)
    assert _chi_square_pvalue(x, st.binom(n, p).pmf, support) > 1e-3


def test_geometric_and_multinomial_laws():
    import scipy.stats as st
    k = random.PRNGKey(10)
    for p in (0.05, 0.4, 0.9):
        x = random.geometric(k, p, (N,))
        assert x.dtype == np.int64 and x.min() >= 1
        support = np.arange(1, int(20 / p))
        assert _chi_square_pvalue(x, st.geom(p).pmf, support) > 1e-3
    probs = np.array([0.1, 0.0, 0.45, 0.45])
    x = random.multinomial(k, 60.0, probs, shape=(N, 4))
    assert x.shape == (N, 4) and (x.sum(-1) == 60).all() and (x[:, 1] == 0).all()
    np.testing.assert_allclose(x.mean(0), 60 * probs, atol=5 * np.sqrt(60 * 0.25 / N))
    # each count is binomial: the first one's law
    assert _chi_square_pvalue(x[:, 0], st.binom(60, 0.1).pmf, np.arange(61)) > 1e-3
    np.testing.assert_allclose(np.cov(x[:, 2], x[:, 3]), 60 * np.array(
        [[0.45 * 0.55, -0.45 * 0.45], [-0.45 * 0.45, 0.45 * 0.55]]), rtol=0.12)


def test_rejection_samplers_batched_parameters_are_the_loop():
    """Under vmap every member keeps its own rejection rounds (a finished member's carry is
    kept), as JAX's while_loop batching does: the loop over members gives the same."""
    keys = random.split(K, 3)
    lam = np.array([0.5, 12.0, 700.0])
    f = lambda k, lam: random.poisson(k, lam, (5,))  # noqa: E731
    np.testing.assert_array_equal(ft.vmap(f)(keys, lam), [f(k, v) for k, v in zip(keys, lam)])
    np.testing.assert_array_equal(ft.vmap(f, in_axes=(None, 0))(K, lam),
                                  [f(K, v) for v in lam])
    g = lambda k, n, p: random.binomial(k, n, p, (4,))  # noqa: E731
    n, p = np.array([3.0, 50.0, 900.0]), np.array([0.2, 0.7, 0.5])
    np.testing.assert_array_equal(ft.vmap(g)(keys, n, p), [g(*a) for a in zip(keys, n, p)])
    h = lambda k, n: random.multinomial(k, n, np.array([0.3, 0.3, 0.4]))  # noqa: E731
    np.testing.assert_array_equal(ft.jit(ft.vmap(h))(keys, n), [h(*a) for a in zip(keys, n)])


def test_parameter_broadcasting_and_shapes():
    k = K
    assert random.t(k, np.array([1.0, 2.0])).shape == (2,)
    assert random.t(k, np.array([1.0, 2.0]), (3, 2)).shape == (3, 2)
    assert random.f(k, np.ones((2, 1)), np.ones(3)).shape == (2, 3)
    assert random.triangular(k, 0.0, np.full((2, 1), 0.5), np.ones(3)).shape == (2, 3)
    assert random.binomial(k, np.array([[3.0], [4.0]]), np.array([0.1, 0.5, 0.9])).shape == (2, 3)
    assert random.poisson(k, 3.0).shape == ()
    assert random.lognormal(k).shape == ()
    assert random.multinomial(k, 3.0, np.array([0.5, 0.5])).shape == (2,)
    assert random.multinomial(k, np.array([3.0, 9.0]), np.array([0.5, 0.5]),
                              shape=(2, 2)).shape == (2, 2)
    assert random.ball(k, 4, shape=(2, 3)).shape == (2, 3, 4)
    assert random.maxwell(k, (2, 3)).shape == (2, 3)
    # as in JAX: weibull_min's shape broadcasts against its parameters, and
    # double_sided_maxwell appends the parameters' shape to it (() counting as that shape)
    assert random.weibull_min(k, np.ones(3), 1.0, (2, 1)).shape == (2, 3)
    assert random.double_sided_maxwell(k, np.zeros(2), 1.0).shape == (2, 2)
    assert random.double_sided_maxwell(k, np.zeros(2), 1.0, (5,)).shape == (5, 2)
    # dtypes: floats default to float64, counts to int64, binomial counts are floats
    assert random.poisson(k, 2.0, (2,), np.int8).dtype == np.int8
    assert random.geometric(k, 0.5, (2,)).dtype == np.int64
    assert random.binomial(k, 4.0, 0.5).dtype == np.float64
    assert random.multinomial(k, 4.0, np.array([0.5, 0.5]), dtype=np.float32).dtype == np.float32
    for name in ("t", "chisquare", "pareto", "rayleigh", "wald"):
        assert getattr(random, name)(k, 2.0, (2,), np.float32).dtype == np.float32


@pytest.mark.parametrize("call, error, match", [
    (lambda: random.t(K, np.ones(3), (2,)), ValueError, r"random.t: df of shape \(3,\)"),
    (lambda: random.f(K, np.ones(2), np.ones(3)), ValueError,
     r"random.f: the shapes of the parameters \(dfnum \(2,\), dfden \(3,\)\)"),
    (lambda: random.triangular(K, 0.0, 0.5, np.ones(4), (2,)), ValueError,
     r"random.triangular: right of shape \(4,\)"),
    (lambda: random.poisson(K, np.ones(3), (3, 2)), ValueError, "random.poisson: lam"),
    (lambda: random.binomial(K, np.ones(2), 0.5, (3,)), ValueError, "random.binomial: n"),
    (lambda: random.poisson(K, 1.0, (2,), np.float32), ValueError,
     "random.poisson: dtype must be an integer dtype"),
    (lambda: random.geometric(K, 0.5, (2,), np.float64), ValueError,
     "random.geometric: dtype must be an integer"),
    (lambda: random.binomial(K, 4.0, 0.5, (2,), np.int64), ValueError,
     "random.binomial: dtype must be float16, float32 or float64"),
    (lambda: random.wald(K, 1.0, (-1,)), ValueError, "random.wald: shape must be non-negative"),
    (lambda: random.ball(K, 2.5), TypeError, "random.ball: d must be an integer"),
    (lambda: random.ball(K, -1), ValueError, "random.ball: d must be non-negative"),
    (lambda: random.multinomial(K, 3.0, 0.5), ValueError, "random.multinomial: p must have"),
    (lambda: random.multinomial(K, 3.0, np.ones(3) / 3, shape=(2, 4)), ValueError,
     r"random.multinomial: p of shape \(3,\)"),
    (lambda: random.multinomial(K, np.ones(3), np.ones(2) / 2), ValueError,
     r"random.multinomial: n of shape \(3,\)"),
    (lambda: random.weibull_min(K, np.ones(3), 1.0, (2,)), ValueError,
     r"random.weibull_min: shape=\(2,\) and the shapes of the parameters"),
    (lambda: random.double_sided_maxwell(K, np.ones(2), np.ones(3)), ValueError,
     "random.double_sided_maxwell"),
    (lambda: random.maxwell(K, (2,), np.int32), ValueError, "random.maxwell: dtype"),
    (lambda: random.lognormal(KEYS, 1.0), TypeError, "random.lognormal: takes a single key"),
])
def test_new_sampler_errors_name_the_function_and_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_invalid_parameters_give_jaxs_values():
    """JAX's conventions: lam = 0 gives 0, a NaN or negative rate -1; binomial's NaN for a
    negative or NaN n or p outside [0, 1], infinity for n = inf, n floored."""
    np.testing.assert_array_equal(random.poisson(K, np.array([0.0, np.nan, -3.0])), [0, -1, -1])
    with np.errstate(invalid="ignore", divide="ignore"):
        x = random.binomial(K, np.array([-1.0, np.nan, 5.0, 5.0, np.inf]),
                            np.array([0.5, 0.5, -0.1, 1.1, 0.5]))
    np.testing.assert_array_equal(x, [np.nan, np.nan, np.nan, np.nan, np.inf])
    x = random.binomial(K, 7.9, 0.5, (2000,))
    assert x.max() <= 7


def test_reparameterized_derivatives_are_the_pathwise_ones():
    """The transforms of standard draws differentiate through the transform, as JAX's:
    checked against the derivatives written out from the standard draws."""
    k = random.PRNGKey(13)
    z = random.normal(k, (4,))
    e = random.exponential(k, (4,))
    u = random.uniform(k, (4,))
    np.testing.assert_allclose(ft.jacfwd(lambda s: random.lognormal(k, s, (4,)))(0.7),
                               z * np.exp(0.7 * z), rtol=1e-13)
    np.testing.assert_allclose(ft.jacrev(lambda b: random.pareto(k, b, (4,)))(2.5),
                               -e / 2.5 ** 2 * np.exp(e / 2.5), rtol=1e-13)
    np.testing.assert_allclose(ft.grad(lambda s: random.rayleigh(k, s, (4,)).sum())(3.0),
                               np.sqrt(-2 * np.log(u)).sum(), rtol=1e-13)
    w = -np.log1p(-u)
    gs, gc = ft.grad(lambda s, c: random.weibull_min(k, s, c, (4,)).sum(), argnums=(0, 1))(
        2.0, 1.5)
    np.testing.assert_allclose(gs, (w ** (1 / 1.5)).sum(), rtol=1e-13)
    np.testing.assert_allclose(gc, (2.0 * w ** (1 / 1.5) * np.log(w) * -1 / 1.5 ** 2).sum(),
                               rtol=1e-12)
    lo, md, hi = ft.grad(lambda a, b, c: random.triangular(k, a, b, c, (4,)).sum(),
                         argnums=(0, 1, 2))(0.0, 0.4, 1.0)
    np.testing.assert_allclose(lo + md + hi, 4.0, rtol=1e-12)  # a shift moves every draw
    gl, gsc = ft.grad(lambda a, b: random.double_sided_maxwell(k, a, b, (4,)).sum(),
                      argnums=(0, 1))(1.0, 2.0)
    x = random.double_sided_maxwell(k, 1.0, 2.0, (4,))
    np.testing.assert_allclose([gl, gsc], [4.0, ((x - 1.0) / 2.0).sum()], rtol=1e-13)
    # wald: a finite difference of the draws (the transform is smooth away from its switch)
    h = 1e-6
    fd = (random.wald(k, 1.5 + h, (4,)) - random.wald(k, 1.5 - h, (4,))) / (2 * h)
    np.testing.assert_allclose(ft.jacfwd(lambda m: random.wald(k, m, (4,)))(1.5), fd, rtol=1e-6)


def test_gamma_based_derivatives_are_unbiased():
    """E[d x/d df] = d E[x]/d df for chisquare (mean df: derivative 1) and, for f, the
    derivative of dfden/(dfden - 2) in dfden."""
    k = random.PRNGKey(14)
    n = 20000
    d = ft.jacfwd(lambda v: random.chisquare(k, v, (n,)))(3.0)
    assert abs(d.mean() - 1.0) < 5 * d.std() / np.sqrt(n)
    d = ft.jacfwd(lambda v: random.f(k, 4.0, v, (n,)))(12.0)
    want = -2 / (12.0 - 2) ** 2
    assert abs(d.mean() - want) < 5 * d.std() / np.sqrt(n)


def test_discrete_samplers_have_zero_derivatives():
    assert ft.grad(lambda n: random.binomial(K, n, 0.3, (3,)).sum())(10.0) == 0
    assert ft.grad(lambda p: random.binomial(K, 40.0, p, (3,)).sum())(0.3) == 0
    np.testing.assert_array_equal(
        ft.grad(lambda p: random.multinomial(K, 10.0, p).sum())(np.array([0.2, 0.8])), 0)


def test_new_samplers_namespace():
    for name in ("poisson", "binomial", "t", "lognormal", "weibull_min", "geometric",
                 "multinomial", "chisquare", "f", "pareto", "rayleigh", "wald", "maxwell",
                 "double_sided_maxwell", "generalized_normal", "triangular", "ball"):
        assert name in random.__all__ and name in dir(random)
