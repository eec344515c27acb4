"""A small tanh MLP, differentiated by every transform and checked against derivatives written
out by hand in plain NumPy: backprop for the gradient, its directional derivative (the R-op)
for Hessian-vector products, closed forms for derivatives with respect to the input."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.tree_util import tree_leaves, tree_map, tree_structure

RTOL, ATOL = 1e-10, 1e-12
FD_STEP, FD_TOL = 1e-5, 1e-7  # central differences of the hand gradient: O(h²) + roundoff

KEYS = ("W1", "W2", "W3", "b1", "b2", "b3")  # the order of tree_leaves(params): sorted keys


def init_params(sizes=(4, 5, 3), seed=0) -> dict:
    """Params of an n0 -> n1 -> n2 -> 1 tanh network; weights are (fan_in, fan_out)."""
    n0, n1, n2 = sizes
    rng = np.random.default_rng(seed)
    return {"W1": rng.standard_normal((n0, n1)) * 0.7, "b1": rng.standard_normal(n1) * 0.3,
            "W2": rng.standard_normal((n1, n2)) * 0.7, "b2": rng.standard_normal(n2) * 0.3,
            "W3": rng.standard_normal((n2, 1)) * 0.7, "b3": rng.standard_normal(1) * 0.3}


def init_data(batch=6, n0=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((batch, n0)), rng.standard_normal(batch)


def random_like(params, seed):
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(v.shape) for k, v in params.items()}


# ------------------------------------------------------------------------------------------
# The network, written with functrans.numpy (this is what gets transformed)
# ------------------------------------------------------------------------------------------


def forward(params, x):
    """x: (batch, n0) or (n0,) -> (batch,) or ()."""
    a1 = fnp.tanh(x @ params["W1"] + params["b1"])
    a2 = fnp.tanh(a1 @ params["W2"] + params["b2"])
    y = a2 @ params["W3"] + params["b3"]
    return fnp.reshape(y, y.shape[:-1])


def loss(params, x, t):
    return fnp.mean((forward(params, x) - t) ** 2)


def example_loss(params, x, t):
    return (forward(params, x) - t) ** 2


# ------------------------------------------------------------------------------------------
# Hand-derived reference, plain NumPy
# ------------------------------------------------------------------------------------------


def np_forward(p, x):
    a1 = np.tanh(x @ p["W1"] + p["b1"])
    a2 = np.tanh(a1 @ p["W2"] + p["b2"])
    y = a2 @ p["W3"] + p["b3"]  # (batch, 1)
    return y, (a1, a2)


def np_loss(p, x, t):
    y, _ = np_forward(p, x)
    return np.mean((y[:, 0] - t) ** 2)


def np_backprop(p, x, cache, dy):
    """The gradient of <dy, y> with respect to the params; dy: (batch, 1)."""
    a1, a2 = cache
    da2 = dy @ p["W3"].T
    dz2 = da2 * (1 - a2 ** 2)
    da1 = dz2 @ p["W2"].T
    dz1 = da1 * (1 - a1 ** 2)
    return {"W3": a2.T @ dy, "b3": dy.sum(0), "W2": a1.T @ dz2, "b2": dz2.sum(0),
            "W1": x.T @ dz1, "b1": dz1.sum(0)}


def np_grad(p, x, t):
    y, cache = np_forward(p, x)
    dy = 2 * (y - t[:, None]) / len(t)
    return np_backprop(p, x, cache, dy)


def np_hvp(p, x, t, v):
    """H·v for the loss: the directional derivative (along v) of every backprop quantity."""
    y, (a1, a2) = np_forward(p, x)
    s1, s2 = 1 - a1 ** 2, 1 - a2 ** 2
    # Forward pass and its derivative along v.
    r_a1 = s1 * (x @ v["W1"] + v["b1"])
    r_a2 = s2 * (r_a1 @ p["W2"] + a1 @ v["W2"] + v["b2"])
    r_y = r_a2 @ p["W3"] + a2 @ v["W3"] + v["b3"]
    # Backward pass and its derivative along v.
    dy, r_dy = 2 * (y - t[:, None]) / len(t), 2 * r_y / len(t)
    da2 = dy @ p["W3"].T
    r_da2 = r_dy @ p["W3"].T + dy @ v["W3"].T
    dz2 = da2 * s2
    r_dz2 = r_da2 * s2 - 2 * a2 * r_a2 * da2
    da1 = dz2 @ p["W2"].T
    r_da1 = r_dz2 @ p["W2"].T + dz2 @ v["W2"].T
    r_dz1 = r_da1 * s1 - 2 * a1 * r_a1 * da1
    return {"W3": r_a2.T @ dy + a2.T @ r_dy, "b3": r_dy.sum(0),
            "W2": r_a1.T @ dz2 + a1.T @ r_dz2, "b2": r_dz2.sum(0),
            "W1": x.T @ r_dz1, "b1": r_dz1.sum(0)}


def flat(p) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(p[k])) for k in KEYS])


def unflat(vector, like) -> dict:
    out, offset = {}, 0
    for k in KEYS:
        n = like[k].size
        out[k] = vector[offset:offset + n].reshape(like[k].shape)
        offset += n
    return out


def np_hessian(p, x, t) -> np.ndarray:
    """The full Hessian, column by column from the hand-derived H·v."""
    n = flat(p).size
    return np.stack([flat(np_hvp(p, x, t, unflat(np.eye(n)[j], p))) for j in range(n)], axis=1)


def fd_hvp(p, x, t, v, h=FD_STEP) -> dict:
    """Central differences of the hand gradient along v."""
    plus = np_grad(tree_map(lambda a, b: a + h * b, p, v), x, t)
    minus = np_grad(tree_map(lambda a, b: a - h * b, p, v), x, t)
    return {k: (plus[k] - minus[k]) / (2 * h) for k in KEYS}


def fd_hessian(p, x, t) -> np.ndarray:
    n = flat(p).size
    return np.stack([flat(fd_hvp(p, x, t, unflat(np.eye(n)[j], p))) for j in range(n)], axis=1)


def nested_to_matrix(h, p) -> np.ndarray:
    """A Hessian as nested dicts of blocks (shape p[k1].shape + p[k2].shape) -> a matrix."""
    return np.concatenate([
        np.concatenate([np.asarray(h[k1][k2]).reshape(p[k1].size, p[k2].size) for k2 in KEYS],
                       axis=1) for k1 in KEYS], axis=0)


def assert_params_close(actual, expected, rtol=RTOL, atol=ATOL):
    assert tree_structure(actual) == tree_structure(expected)
    for k in KEYS:
        assert np.shape(actual[k]) == np.shape(expected[k]), k
        np.testing.assert_allclose(actual[k], expected[k], rtol=rtol, atol=atol, err_msg=k)


# ------------------------------------------------------------------------------------------
# The hand derivations agree with finite differences (so the references can be trusted)
# ------------------------------------------------------------------------------------------


def test_hand_gradient_matches_finite_differences_of_hand_loss():
    p, (x, t) = init_params(), init_data()
    g = flat(np_grad(p, x, t))
    theta, h = flat(p), 1e-6
    fd = np.array([(np_loss(unflat(theta + h * e, p), x, t)
                    - np_loss(unflat(theta - h * e, p), x, t)) / (2 * h)
                   for e in np.eye(theta.size)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_hand_hvp_matches_finite_differences_of_hand_gradient():
    p, (x, t) = init_params(), init_data()
    v = random_like(p, 5)
    assert_params_close(np_hvp(p, x, t, v), fd_hvp(p, x, t, v), rtol=FD_TOL, atol=FD_TOL)


# ------------------------------------------------------------------------------------------
# First order
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [1, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_forward_and_loss_match_numpy(batch, seed):
    p, (x, t) = init_params(seed=seed), init_data(batch, seed=seed + 10)
    np.testing.assert_allclose(forward(p, x), np_forward(p, x)[0][:, 0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(loss(p, x, t), np_loss(p, x, t), rtol=RTOL)


def test_grad_of_network_written_with_an_ellipsis_index():
    def forward_ellipsis(params, x):
        a1 = fnp.tanh(x @ params["W1"] + params["b1"])
        a2 = fnp.tanh(a1 @ params["W2"] + params["b2"])
        return (a2 @ params["W3"] + params["b3"])[..., 0]

    p, (x, t) = init_params(), init_data()
    np.testing.assert_allclose(forward_ellipsis(p, x), forward(p, x), rtol=RTOL)
    g = ft.grad(lambda q: fnp.mean((forward_ellipsis(q, x) - t) ** 2))(p)
    assert_params_close(g, np_grad(p, x, t))


@pytest.mark.parametrize("batch", [1, 6])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grad_matches_hand_backprop(batch, seed):
    p, (x, t) = init_params(seed=seed), init_data(batch, seed=seed + 10)
    value, g = ft.value_and_grad(loss)(p, x, t)
    np.testing.assert_allclose(value, np_loss(p, x, t), rtol=RTOL)
    assert_params_close(g, np_grad(p, x, t))
    assert_params_close(ft.grad(loss)(p, x, t), g)


def test_grad_with_respect_to_inputs_and_params():
    p, (x, t) = init_params(), init_data()
    g_p, g_x, g_t = ft.grad(loss, argnums=(0, 1, 2))(p, x, t)
    assert_params_close(g_p, np_grad(p, x, t))
    # dL/dx by hand: backprop one step further, to the input.
    y, (a1, a2) = np_forward(p, x)
    dy = 2 * (y - t[:, None]) / len(t)
    dz1 = ((dy @ p["W3"].T) * (1 - a2 ** 2) @ p["W2"].T) * (1 - a1 ** 2)
    np.testing.assert_allclose(g_x, dz1 @ p["W1"].T, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(g_t, -dy[:, 0], rtol=RTOL, atol=ATOL)


def test_vjp_of_network_output_matches_hand_backprop():
    p, (x, _) = init_params(), init_data()
    ct = np.random.default_rng(3).standard_normal(len(x))
    y, f_vjp = ft.vjp(forward, p, x)
    (g_p, _) = f_vjp(ct)
    assert_params_close(g_p, np_backprop(p, x, np_forward(p, x)[1], ct[:, None]))


@pytest.mark.parametrize("transform", [ft.jacfwd, ft.jacrev])
def test_output_jacobian_matches_hand_backprop(transform):
    p, (x, _) = init_params(), init_data(batch=3)
    jac = transform(forward)(p, x)
    cache = np_forward(p, x)[1]
    for i in range(len(x)):
        row = np_backprop(p, x, cache, np.eye(len(x))[:, i:i + 1])
        assert_params_close({k: jac[k][i] for k in KEYS}, row)


def test_jacrev_equals_jacfwd():
    p, (x, _) = init_params(seed=4), init_data(batch=5, seed=4)
    jr = ft.jacrev(forward, argnums=(0, 1))(p, x)
    jf = ft.jacfwd(forward, argnums=(0, 1))(p, x)
    assert tree_structure(jr) == tree_structure(jf)
    for a, b in zip(tree_leaves(jr), tree_leaves(jf)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------------------------
# Hessian-vector products: three ways of composing the transforms
# ------------------------------------------------------------------------------------------


def hvp_forward_over_reverse(p, x, t, v):
    return ft.jvp(lambda q: ft.grad(loss)(q, x, t), (p,), (v,))[1]


def hvp_reverse_over_forward(p, x, t, v):
    return ft.grad(lambda q: ft.jvp(lambda r: loss(r, x, t), (q,), (v,))[1])(p)


def hvp_reverse_over_reverse(p, x, t, v):
    def directional(q):
        g = ft.grad(loss)(q, x, t)
        return sum(fnp.sum(g[k] * v[k]) for k in KEYS)
    return ft.grad(directional)(p)


def hvp_linearize_of_grad(p, x, t, v):
    _, f_jvp = ft.linearize(lambda q: ft.grad(loss)(q, x, t), p)
    return f_jvp(v)


@pytest.mark.parametrize("hvp", [hvp_forward_over_reverse, hvp_reverse_over_forward,
                                 hvp_reverse_over_reverse, hvp_linearize_of_grad])
@pytest.mark.parametrize("seed", [0, 1])
def test_hvp_matches_hand_and_finite_differences(hvp, seed):
    p, (x, t) = init_params(seed=seed), init_data(seed=seed + 20)
    v = random_like(p, seed + 30)
    out = hvp(p, x, t, v)
    assert_params_close(out, np_hvp(p, x, t, v))
    assert_params_close(out, fd_hvp(p, x, t, v), rtol=FD_TOL, atol=FD_TOL)


# ------------------------------------------------------------------------------------------
# Full Hessians
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny():
    """A 2 -> 3 -> 2 -> 1 network (20 parameters) and its hand and finite-difference
    Hessians."""
    p, (x, t) = init_params((2, 3, 2), seed=7), init_data(batch=4, n0=2, seed=8)
    return p, x, t, np_hessian(p, x, t), fd_hessian(p, x, t)


def test_tiny_hand_hessian_is_symmetric_and_matches_finite_differences(tiny):
    _, _, _, hand, fd = tiny
    assert hand.shape == (20, 20)
    np.testing.assert_allclose(hand, hand.T, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(hand, fd, rtol=FD_TOL, atol=FD_TOL)


@pytest.mark.parametrize("make_hessian", [
    ft.hessian,
    lambda f: ft.jacfwd(ft.jacrev(f)),
    lambda f: ft.jacrev(ft.jacfwd(f)),
    lambda f: ft.jacrev(ft.jacrev(f)),
    lambda f: ft.jacfwd(ft.grad(f)),
], ids=["hessian", "jacfwd_jacrev", "jacrev_jacfwd", "jacrev_jacrev", "jacfwd_grad"])
def test_tiny_hessian_matches_hand(tiny, make_hessian):
    p, x, t, hand, fd = tiny
    h = make_hessian(lambda q: loss(q, x, t))(p)
    assert tree_structure(h) == tree_structure({k: {k2: 0 for k2 in KEYS} for k in KEYS})
    for k1 in KEYS:
        for k2 in KEYS:
            assert np.shape(h[k1][k2]) == p[k1].shape + p[k2].shape
    matrix = nested_to_matrix(h, p)
    np.testing.assert_allclose(matrix, hand, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(matrix, fd, rtol=FD_TOL, atol=FD_TOL)


def test_tiny_hessian_of_flat_parameter_vector(tiny):
    p, x, t, hand, _ = tiny
    shapes = {k: p[k].shape for k in KEYS}

    def flat_loss(theta):
        params, offset = {}, 0
        for k in KEYS:
            n = int(np.prod(shapes[k]))
            params[k] = fnp.reshape(theta[offset:offset + n], shapes[k])
            offset += n
        return loss(params, x, t)

    theta = flat(p)
    np.testing.assert_allclose(ft.grad(flat_loss)(theta), flat(np_grad(p, x, t)), rtol=RTOL,
                               atol=ATOL)
    np.testing.assert_allclose(ft.hessian(flat_loss)(theta), hand, rtol=RTOL, atol=ATOL)


def test_full_hessian_of_the_4_5_3_1_network():
    p, (x, t) = init_params(seed=3), init_data(seed=4)
    hand = np_hessian(p, x, t)
    assert hand.shape == (47, 47)
    h_fwd_rev = nested_to_matrix(ft.hessian(loss)(p, x, t), p)
    h_rev_fwd = nested_to_matrix(ft.jacrev(ft.jacfwd(loss))(p, x, t), p)
    np.testing.assert_allclose(h_fwd_rev, hand, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(h_rev_fwd, h_fwd_rev, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------------------------------------
# Batching composed with differentiation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1])
def test_per_example_gradients_vmap_of_grad(seed):
    p, (x, t) = init_params(seed=seed), init_data(batch=7, seed=seed + 40)
    per_example = ft.vmap(ft.grad(example_loss), in_axes=(None, 0, 0))(p, x, t)
    for k in KEYS:
        assert per_example[k].shape == (7,) + p[k].shape
    for i in range(len(x)):
        expected = np_grad(p, x[i:i + 1], t[i:i + 1])  # a batch of one: the example's loss
        assert_params_close({k: per_example[k][i] for k in KEYS}, expected)
    # Their mean is the batch gradient.
    assert_params_close({k: per_example[k].mean(0) for k in KEYS}, np_grad(p, x, t))


def test_per_example_gradients_with_params_batched_on_axis_1():
    p, (x, t) = init_params(seed=5), init_data(batch=3, seed=6)
    # The same parameters three times, stacked along axis 1 of each leaf (axis 0 for vectors).
    stacked = {k: np.stack([v] * 3, axis=min(1, v.ndim)) for k, v in p.items()}
    axes = {k: min(1, v.ndim) for k, v in p.items()}
    out = ft.vmap(ft.grad(example_loss), in_axes=(axes, 0, 0))(stacked, x, t)
    for i in range(3):
        assert_params_close({k: out[k][i] for k in KEYS}, np_grad(p, x[i:i + 1], t[i:i + 1]))


@pytest.mark.parametrize("seed", [0, 1])
def test_grad_of_mean_of_vmapped_losses(seed):
    p, (x, t) = init_params(seed=seed), init_data(batch=5, seed=seed + 50)

    def batched_loss(q):
        return fnp.mean(ft.vmap(example_loss, in_axes=(None, 0, 0))(q, x, t))

    np.testing.assert_allclose(batched_loss(p), np_loss(p, x, t), rtol=RTOL)
    assert_params_close(ft.grad(batched_loss)(p), np_grad(p, x, t))


def test_vmap_of_hvp_over_several_directions():
    p, (x, t) = init_params(seed=2), init_data(seed=3)
    directions = [random_like(p, s) for s in range(3)]
    stacked = {k: np.stack([d[k] for d in directions]) for k in KEYS}
    out = ft.vmap(lambda v: hvp_forward_over_reverse(p, x, t, v))(stacked)
    for i, v in enumerate(directions):
        assert_params_close({k: out[k][i] for k in KEYS}, np_hvp(p, x, t, v))


# ------------------------------------------------------------------------------------------
# Derivatives with respect to the input of a 1 -> 5 -> 1 network: closed forms
# ------------------------------------------------------------------------------------------
#
#   f(x) = Σ_j v_j tanh(w_j x + c_j) + d,   t_j = tanh(w_j x + c_j),  s_j = 1 - t_j²
#   f'    = Σ v w s
#   f''   = Σ v w² (-2 t s)
#   f'''  = Σ v w³ s (6t² - 2)
#   f'''' = Σ v w⁴ s t (16 - 24t²)

SCALAR_NET = {"w": np.array([0.8, -1.3, 0.4, 2.0, -0.6]), "c": np.array([0.1, 0.5, -0.7, 0.0, 0.3]),
              "v": np.array([1.5, -0.4, 0.9, 0.3, -1.1]), "d": 0.25}


def scalar_net(params, x):
    return fnp.sum(params["v"] * fnp.tanh(params["w"] * x + params["c"])) + params["d"]


def scalar_net_derivative(x, order):
    w, c, v = SCALAR_NET["w"], SCALAR_NET["c"], SCALAR_NET["v"]
    t = np.tanh(w * x + c)
    s = 1 - t ** 2
    factor = [t, s, -2 * t * s, s * (6 * t ** 2 - 2), s * t * (16 - 24 * t ** 2)][order]
    return np.sum(v * w ** order * factor) + (SCALAR_NET["d"] if order == 0 else 0.0)


@pytest.mark.parametrize("x", [-0.9, 0.0, 0.35, 1.7])
@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_nested_grad_of_scalar_network(x, order):
    f = lambda x: scalar_net(SCALAR_NET, x)  # noqa: E731
    for _ in range(order):
        f = ft.grad(f)
    np.testing.assert_allclose(f(x), scalar_net_derivative(x, order), rtol=RTOL, atol=ATOL)


def test_grad_of_grad_with_respect_to_params_of_input_derivative():
    # d/dparams of f'(x) = Σ v w s, by hand.
    x = 0.6
    w, c, v = SCALAR_NET["w"], SCALAR_NET["c"], SCALAR_NET["v"]
    t = np.tanh(w * x + c)
    s = 1 - t ** 2
    expected = {"v": w * s, "w": v * (s - 2 * w * t * s * x), "c": v * w * (-2 * t * s),
                "d": 0.0}
    g = ft.grad(lambda q: ft.grad(scalar_net, argnums=1)(q, x))(SCALAR_NET)
    assert tree_structure(g) == tree_structure(expected)
    for k in expected:
        np.testing.assert_allclose(g[k], expected[k], rtol=RTOL, atol=ATOL, err_msg=k)


def test_vmap_of_second_derivative_over_inputs():
    xs = np.linspace(-1.0, 1.0, 6)
    f2 = ft.vmap(ft.grad(ft.grad(lambda x: scalar_net(SCALAR_NET, x))))(xs)
    np.testing.assert_allclose(f2, [scalar_net_derivative(x, 2) for x in xs], rtol=RTOL,
                               atol=ATOL)


# ------------------------------------------------------------------------------------------
# The transformed network staged as jaxprs
# ------------------------------------------------------------------------------------------

STAGED = {
    "loss": lambda p, x, t: loss(p, x, t),
    "grad": ft.grad(loss),
    "hvp": lambda p, x, t: hvp_forward_over_reverse(p, x, t, p),
    "per_example_grads": ft.vmap(ft.grad(example_loss), in_axes=(None, 0, 0)),
    "hessian": ft.hessian(loss),
}


@pytest.mark.parametrize("name", list(STAGED))
def test_jaxprs_of_transformed_network_type_check_and_evaluate(name):
    fun = STAGED[name]
    p, (x, t) = init_params((3, 2, 2), seed=9), init_data(batch=3, n0=3, seed=9)
    closed = ft.make_jaxpr(fun)(p, x, t)
    ft.check_jaxpr(closed.jaxpr)
    outs = ft.eval_jaxpr(closed.jaxpr, closed.consts, *tree_leaves((p, x, t)))
    expected = tree_leaves(fun(p, x, t))
    assert len(outs) == len(expected)
    for out, e in zip(outs, expected):
        np.testing.assert_allclose(out, e, rtol=RTOL, atol=ATOL)
