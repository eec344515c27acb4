"""Targeted tests of functrans.nn: the stable edges and documented derivative choices that a
random sweep does not reach (tests/cases_nn.py sweeps the values and derivatives)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import functrans as ft
import functrans.nn as nn


def _grad2(f):
    return ft.grad(ft.grad(f))


@pytest.mark.parametrize("x,value,slope", [(1000.0, 1000.0, 1.0), (-1000.0, 0.0, 0.0),
                                           (0.0, math.log(2), 0.5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softplus_is_finite_with_the_right_derivatives_at_the_edges(x, value, slope, dtype):
    x = dtype(x)
    out = nn.softplus(x)
    assert np.asarray(out).dtype == dtype
    np.testing.assert_allclose(out, value, rtol=1e-6)
    np.testing.assert_allclose(ft.grad(nn.softplus)(x), slope, rtol=1e-6)
    np.testing.assert_allclose(ft.jvp(nn.softplus, (x,), (dtype(1),))[1], slope, rtol=1e-6)
    curvature = float(_grad2(nn.softplus)(x))
    assert np.isfinite(curvature)
    np.testing.assert_allclose(curvature, slope * (1 - slope), atol=1e-7)


def test_log_sigmoid_and_sigmoid_at_the_edges():
    np.testing.assert_allclose(nn.log_sigmoid(np.array([-1000.0, 1000.0])), [-1000.0, 0.0])
    np.testing.assert_allclose(ft.vmap(ft.grad(nn.log_sigmoid))(np.array([-1000.0, 1000.0])),
                               [1.0, 0.0])
    np.testing.assert_allclose(nn.sigmoid(np.array([-1000.0, 1000.0])), [0.0, 1.0])


@pytest.mark.parametrize("f", [nn.relu, nn.relu6])
def test_relu_derivative_at_zero_is_zero_in_both_modes(f):
    assert float(ft.grad(f)(0.0)) == 0.0
    assert float(ft.jvp(f, (0.0,), (1.0,))[1]) == 0.0
    assert float(ft.grad(f)(0.5)) == 1.0
    assert float(_grad2(f)(0.5)) == 0.0


def test_relu6_derivative_at_six_is_zero():
    assert float(ft.grad(nn.relu6)(6.0)) == 0.0
    assert float(nn.relu6(6.0)) == 6.0


def test_elu_family_is_finite_far_out():
    for f in (nn.elu, nn.selu, nn.celu):
        xs = np.array([-1000.0, 1000.0])
        out = f(xs)
        grads = ft.vmap(ft.grad(f))(xs)
        assert np.all(np.isfinite(out)) and np.all(np.isfinite(grads)), f.__name__
        np.testing.assert_allclose(grads[0], 0.0, atol=1e-300)
    np.testing.assert_allclose(nn.selu(np.array([-1000.0])), [-1.0507009873554805 *
                                                             1.6732632423543772])


def test_logsumexp_with_minus_inf_entries():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, 2.0]])
    want = [np.logaddexp(0.0, 1.0), 2.0]
    np.testing.assert_allclose(nn.logsumexp(x, axis=1), want)
    g = ft.grad(lambda x: nn.logsumexp(x, axis=1).sum())(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, [[1 / (1 + np.e), 0.0, np.e / (1 + np.e)], [0, 0, 1.0]])
    # Every entry -inf: the sum is empty and the result is -inf, not nan.
    with np.errstate(divide="ignore"):
        assert nn.logsumexp(np.array([-np.inf, -np.inf])) == -np.inf


def test_logsumexp_is_stable_at_large_values():
    x = np.array([1000.0, 1000.0, -1000.0])
    np.testing.assert_allclose(nn.logsumexp(x), 1000.0 + math.log(2))
    np.testing.assert_allclose(ft.grad(nn.logsumexp)(x), [0.5, 0.5, 0.0])


def test_logsumexp_return_sign_of_a_negative_sum():
    value, sign = nn.logsumexp(np.array([0.0, 1.0]), b=np.array([1.0, -1.0]), return_sign=True)
    assert float(sign) == -1.0
    np.testing.assert_allclose(value, math.log(math.e - 1))


def test_softmax_and_log_softmax_at_extremes():
    x = np.array([1000.0, 1000.0, -np.inf])
    np.testing.assert_allclose(nn.softmax(x), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(nn.log_softmax(x), [-math.log(2), -math.log(2), -np.inf])
    g = ft.grad(lambda x: nn.softmax(x)[0])(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, [0.25, -0.25, 0.0])
    np.testing.assert_allclose(nn.softmax(np.zeros((2, 4)), axis=0), np.full((2, 4), 0.5))


@pytest.mark.parametrize("dtype,tol", [(np.float64, 2e-15), (np.float32, 1e-6)])
def test_gelu_exact_uses_an_accurate_erf(dtype, tol):
    x = np.linspace(-9, 9, 721).astype(dtype)
    erf = np.array([math.erf(v / math.sqrt(2)) for v in x.astype(np.float64)])
    out = nn.gelu(x, approximate=False)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, 0.5 * x * (1 + erf), rtol=tol, atol=tol)
    slopes = ft.vmap(ft.grad(lambda v: nn.gelu(v, approximate=False)))(x)
    pdf = np.exp(-x.astype(np.float64) ** 2 / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(slopes, 0.5 * (1 + erf) + x * pdf, rtol=tol * 10, atol=tol * 10)


def test_gelu_forms_differ_by_the_approximation_only():
    x = np.linspace(-3, 3, 13)
    assert np.max(np.abs(nn.gelu(x) - nn.gelu(x, approximate=False))) < 1e-3
    assert np.max(np.abs(nn.gelu(x) - nn.gelu(x, approximate=False))) > 1e-6


def test_one_hot():
    out = nn.one_hot(np.array([0, 3, -1, 5]), 4)
    np.testing.assert_array_equal(out, [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0],
                                        [0, 0, 0, 0]])
    assert out.dtype == np.float64
    assert nn.one_hot(np.array([1]), 2, dtype=np.int32).dtype == np.int32
    batched = ft.vmap(lambda x: nn.one_hot(x, 3))(np.array([[0, 1], [2, 2]]))
    np.testing.assert_array_equal(batched, nn.one_hot(np.array([[0, 1], [2, 2]]), 3))


def test_one_hot_needs_a_concrete_number_of_classes():
    with pytest.raises(TypeError, match="num_classes must be a concrete Python int"):
        nn.one_hot(np.array([0, 1]), np.array(2.0))


def test_glu_needs_an_even_axis():
    with pytest.raises(ValueError, match="odd length 3"):
        nn.glu(np.zeros((2, 3)))


def test_standardize_with_given_statistics():
    x = np.array([[1.0, 2.0, 3.0], [4.0, 6.0, 8.0]])
    np.testing.assert_allclose(nn.standardize(x, mean=1.0, variance=4.0, epsilon=0.0),
                               (x - 1.0) / 2.0)
    out = nn.standardize(x, epsilon=0.0)
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(out.std(axis=-1), 1.0)
    # Centred before squaring: a large offset loses nothing.
    np.testing.assert_allclose(nn.standardize(x + 1e8, epsilon=0.0), out, atol=1e-7)


def test_leaky_relu_and_hard_tanh_pick_a_side_at_the_kinks():
    assert float(ft.grad(nn.leaky_relu)(0.0)) == 1.0
    assert float(ft.grad(nn.hard_tanh)(1.0)) == 1.0
    assert float(ft.grad(nn.hard_tanh)(1.5)) == 0.0


def test_namespace():
    assert set(dir(nn)) == set(nn.__all__)
    assert nn.swish is nn.silu
    for name in nn.__all__:
        assert getattr(nn, name).__doc__, name
    assert ft.nn is nn and "nn" in ft.__all__


# --- the hard, sparse and smooth units: values and derivatives at the kinks (JAX's) ------

_AT_KINKS = {
    # name: (x values, values, first derivatives), the derivatives at kinks as JAX gives them
    "hard_sigmoid": ([-3.0, 3.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.0, 1 / 6]),
    "hard_silu": ([-3.0, 3.0, 0.0], [0.0, 3.0, 0.0], [0.0, 1.0, 0.5]),
    "sparse_sigmoid": ([-1.0, 1.0, 0.0], [0.0, 1.0, 0.5], [0.25, 0.25, 0.5]),
    "sparse_plus": ([-1.0, 1.0, 0.0], [0.0, 1.0, 0.25], [0.0, 1.0, 0.5]),
}


@pytest.mark.parametrize("name", sorted(_AT_KINKS))
def test_derivatives_at_the_kinks_are_jaxs(name):
    f = getattr(nn, name)
    xs, values, slopes = (np.array(v) for v in _AT_KINKS[name])
    np.testing.assert_allclose(f(xs), values, atol=1e-15)
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(xs), slopes, atol=1e-15)
    np.testing.assert_allclose(ft.jvp(f, (xs,), (np.ones(3),))[1], slopes, atol=1e-15)


def test_hard_swish_is_hard_silu_and_tanh_identity_are_the_plain_functions():
    assert nn.hard_swish is nn.hard_silu
    x = np.linspace(-2, 2, 5)
    np.testing.assert_array_equal(nn.tanh(x), np.tanh(x))
    np.testing.assert_array_equal(nn.identity(x), x)
    assert float(ft.grad(nn.identity)(3.0)) == 1.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mish_and_squareplus_are_finite_far_out(dtype):
    xs = np.array([-1000.0, -30.0, 30.0, 1000.0], dtype)
    for f in (nn.mish, nn.squareplus):
        want = [0.0, 0.0, 30.0, 1000.0]
        out = f(xs)
        assert out.dtype == dtype
        np.testing.assert_allclose(out, want, atol=0.07)
        g = ft.vmap(ft.grad(f))(xs)
        assert np.all(np.isfinite(g)) and g.dtype == dtype
        np.testing.assert_allclose(g[[0, 3]], [0.0, 1.0], atol=1e-5)


def test_log1mexp_is_accurate_on_both_sides_of_log2_and_inf_at_zero():
    xs = np.array([1e-300, 1e-12, math.log(2.0), 1.0, 40.0, 800.0])
    want = [math.log(-math.expm1(-x)) for x in xs[:4]] + [-math.exp(-40.0), -0.0]
    np.testing.assert_allclose(nn.log1mexp(xs), want, rtol=1e-14)
    slopes = ft.vmap(ft.grad(nn.log1mexp))(xs)  # 1 / expm1(x)
    np.testing.assert_allclose(slopes[1:5], 1 / np.expm1(xs[1:5]), rtol=1e-12)
    # Far out the second derivative tends to 0 (JAX gets nan at 800: inf * 0 in a branch).
    assert np.all(np.isfinite(ft.vmap(_grad2(nn.log1mexp))(xs[1:])))
    assert float(nn.log1mexp(0.0)) == -math.inf
    assert math.isnan(float(nn.log1mexp(-1.0)))


def test_logmeanexp_where_and_overflow():
    x = np.array([[1000.0, 1000.0, 0.0], [-np.inf, 2.0, 2.0]])
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1),
                               [1000 + math.log(2 / 3), 2 + math.log(2 / 3)])
    w = np.array([True, True, False])
    np.testing.assert_allclose(nn.logmeanexp(x, axis=1, where=w), [1000.0, 2 - math.log(2)])
    assert float(nn.logmeanexp(x[1], where=np.array([True, False, False]))) == -math.inf
    g = ft.grad(lambda x: nn.logmeanexp(x, where=w[None]))(x[:1])
    np.testing.assert_allclose(g, [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(nn.logmeanexp(x[:1], axis=(0, 1), keepdims=True),
                               [[1000 + math.log(2 / 3)]])
    np.testing.assert_allclose(nn.logsumexp(x, axis=1, where=w), [1000 + math.log(2), 2.0])


# --- dot_product_attention: the options the sweep does not reach -------------------------

def _qkv(B=2, T=3, S=4, N=2, K=2, H=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, T, N, H)), rng.standard_normal((B, S, K, H)),
            rng.standard_normal((B, S, K, H)))


def test_attention_sequence_lengths_are_masks_and_zero_the_padded_queries():
    q, k, v = _qkv()
    q_len, kv_len = np.array([2, 3]), np.array([4, 1])
    got = nn.dot_product_attention(q, k, v, query_seq_lengths=q_len,
                                   key_value_seq_lengths=kv_len)
    kv_mask = (np.arange(4)[None, :] < kv_len[:, None])[:, None, None, :]  # (B, 1, 1, S)
    want = np.asarray(nn.dot_product_attention(q, k, v, mask=np.broadcast_to(
        kv_mask, (2, 1, 3, 4))))
    want[0, 2:] = 0.0
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    g = ft.grad(lambda q: (nn.dot_product_attention(q, k, v, query_seq_lengths=q_len) ** 2
                           ).sum())(q)
    assert np.all(g[0, 2:] == 0) and np.all(g[1] != 0)


def test_attention_local_window_and_causal():
    q, k, v = _qkv(T=4, S=4)
    t, s = np.arange(4)[:, None], np.arange(4)[None, :]
    window = nn.dot_product_attention(q, k, v, local_window_size=(1, 0))
    np.testing.assert_allclose(window, nn.dot_product_attention(
        q, k, v, mask=((s <= t) & (s >= t - 1))[None, None]), rtol=1e-12)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, local_window_size=1),
                               nn.dot_product_attention(q, k, v, local_window_size=(1, 1)))
    causal = nn.dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(causal[:, 0], v[:, 0], rtol=1e-12)  # query 0 sees key 0 only


def test_attention_residual_is_the_logsumexp_without_gradient():
    q, k, v = _qkv()
    out, lse = nn.dot_product_attention(q, k, v, return_residual=True)
    logits = np.einsum("btnh,bsnh->btns", q, k) / np.sqrt(3)
    m = logits.max(-1)
    np.testing.assert_allclose(lse, m + np.log(np.exp(logits - m[..., None]).sum(-1)),
                               rtol=1e-12)
    assert lse.shape == (2, 3, 2)
    g = ft.grad(lambda q: nn.dot_product_attention(q, k, v, return_residual=True)[1].sum())(q)
    assert np.all(g == 0)


def test_attention_vmaps_over_a_leading_axis_and_keeps_float32():
    q, k, v = _qkv()
    batched = ft.vmap(nn.dot_product_attention)(q, k, v)
    np.testing.assert_allclose(batched, nn.dot_product_attention(q, k, v), rtol=1e-12)
    out = nn.dot_product_attention(*(x.astype(np.float32) for x in (q, k, v)))
    assert out.dtype == np.float32


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(implementation="cudnn"), NotImplementedError, "only the reference"),
    (dict(mask=np.ones((1, 1, 3, 4))), ValueError, "mask must be boolean"),
])
def test_attention_errors(kwargs, error, match):
    q, k, v = _qkv()
    with pytest.raises(error, match=match):
        nn.dot_product_attention(q, k, v, **kwargs)


def test_attention_shape_errors():
    q, k, v = _qkv(N=3, K=2)
    with pytest.raises(ValueError, match="multiple of the number of key/value heads"):
        nn.dot_product_attention(q, k, v)
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="value must have key's shape"):
        nn.dot_product_attention(q, k, v[..., :2])
    with pytest.raises(ValueError, match="query must be"):
        nn.dot_product_attention(q[..., :2], k, v)


# --- initializers ------------------------------------------------------------------------

import functrans.random as random  # noqa: E402
from functrans.nn import initializers  # noqa: E402

KEY = random.PRNGKey(42)


def test_initializers_reproduce_jaxs_draws():
    # Values printed by JAX 0.10.2 (jax_enable_x64) for the same key.
    np.testing.assert_allclose(initializers.glorot_normal()(KEY, (2, 3)), [
        [-0.1267014206229613, -1.2838983649049596, 0.12822523146653195],
        [0.4177043342395597, 0.33478152767358826, 0.2527211167173407]], rtol=1e-13)
    w = initializers.he_uniform()(KEY, (3, 2), np.float32)
    assert w.dtype == np.float32
    np.testing.assert_allclose(w, [[-0.03193416, 0.5085432], [0.32886544, 0.17257954],
                                   [-0.13959812, 0.24286531]], rtol=1e-6)


@pytest.mark.parametrize("name,scale,fan,dist", [
    ("glorot_normal", 1.0, "avg", "truncated_normal"), ("glorot_uniform", 1.0, "avg", "uniform"),
    ("he_normal", 2.0, "in", "truncated_normal"), ("he_uniform", 2.0, "in", "uniform"),
    ("lecun_normal", 1.0, "in", "truncated_normal"), ("lecun_uniform", 1.0, "in", "uniform"),
])
def test_variance_scaling_family_is_its_formula(name, scale, fan, dist):
    shape = (3, 4, 5)  # receptive field 3: fan_in = 12, fan_out = 15
    fans = {"in": 12.0, "avg": 13.5}
    variance = scale / fans[fan]
    got = getattr(initializers, name)()(KEY, shape)
    if dist == "uniform":
        want = random.uniform(KEY, shape, minval=-1.0, maxval=1.0) * math.sqrt(3 * variance)
    else:
        std = math.sqrt(variance) / 0.87962566103423978
        want = random.truncated_normal(KEY, -2, 2, shape) * std
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert initializers.xavier_uniform is initializers.glorot_uniform
    assert initializers.kaiming_normal is initializers.he_normal


def test_variance_scaling_reaches_its_variance_and_axes():
    w = initializers.variance_scaling(2.0, "fan_out", "truncated_normal")(KEY, (300, 200))
    assert abs(w.var() * 200 / 2.0 - 1) < 0.03
    # in_axis / out_axis / batch_axis pick the fans: here fan_in = 3, fan_out = 4.
    init = initializers.variance_scaling(1.0, "fan_geo_avg", "normal", in_axis=0,
                                         out_axis=1, batch_axis=2)
    np.testing.assert_allclose(init(KEY, (3, 4, 5)),
                               random.normal(KEY, (3, 4, 5)) / math.sqrt(math.sqrt(12)))


def test_simple_initializers():
    np.testing.assert_array_equal(initializers.zeros(KEY, (2, 3)), np.zeros((2, 3)))
    assert initializers.ones(KEY, 3, np.float32).dtype == np.float32
    np.testing.assert_array_equal(initializers.constant(-2.0)(KEY, (2,)), [-2.0, -2.0])
    np.testing.assert_allclose(initializers.normal(3.0)(KEY, (4,)), 3 * random.normal(KEY, (4,)))
    np.testing.assert_allclose(initializers.uniform(3.0)(KEY, (4,)), 3 * random.uniform(KEY, (4,)))
    x = initializers.truncated_normal(2.0, lower=-1.0, upper=0.5)(KEY, (200,))
    assert x.min() > -2.0 and x.max() < 1.0


@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((6, 2), -1), ((3, 2, 2), 0)])
def test_orthogonal(shape, axis):
    w = np.moveaxis(np.asarray(initializers.orthogonal(2.0, column_axis=axis)(KEY, shape)),
                    axis, -1)
    m = w.reshape(-1, w.shape[-1])
    small = min(m.shape)
    gram = m.T @ m if m.shape[1] == small else m @ m.T
    np.testing.assert_allclose(gram, 4 * np.eye(small), atol=1e-12)


def test_delta_orthogonal_is_orthogonal_at_the_centre_only():
    w = np.asarray(initializers.delta_orthogonal()(KEY, (3, 4, 2, 5)))
    np.testing.assert_allclose(w[1, 1] @ w[1, 1].T, np.eye(2), atol=1e-12)
    w[1, 1] = 0
    assert not w.any()


def test_initializer_errors():
    with pytest.raises(ValueError, match="no input axis -2"):
        initializers.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="mode must be one of"):
        initializers.variance_scaling(1.0, "fan", "normal")
    with pytest.raises(ValueError, match="distribution must be"):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(TypeError, match="real floating dtype"):
        initializers.normal()(KEY, (2,), np.int32)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        initializers.orthogonal()(KEY, (3,))
    with pytest.raises(ValueError, match="must not exceed"):
        initializers.delta_orthogonal()(KEY, (3, 4, 2))


def test_scaled_matmul_result_dtype_and_errors():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((1, 2, 6)), rng.standard_normal((1, 3, 6))
    sa, sb = rng.random((1, 2, 3)), rng.random((1, 3, 3))
    out = nn.scaled_matmul(a, b, sa, sb)
    assert out.dtype == np.float32  # JAX's default preferred_element_type
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 2, -1), b * np.repeat(sb, 2, -1))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    exact = nn.scaled_matmul(a, b, sa, sb, preferred_element_type=np.float64)
    np.testing.assert_allclose(exact, want, rtol=1e-14)
    with pytest.raises(ValueError, match="must divide the contracted dimension"):
        nn.scaled_matmul(a, b, rng.random((1, 2, 4)), rng.random((1, 3, 4)))
    with pytest.raises(ValueError, match="3-dimensional"):
        nn.scaled_matmul(a[0], b, sa, sb)
    with pytest.raises(ValueError, match="agree in the batch"):
        nn.scaled_matmul(a, b[..., :3], sa, sb)
