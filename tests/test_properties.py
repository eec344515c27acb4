"""Property-based tests: identities that must hold for random compositions of primitives on
random shapes (hypothesis draws the programs, the shapes and the values).

* forward and reverse mode agree: ``<v, J u> == <Jᵀ v, u>``;
* ``vmap`` equals a Python loop over the batch (any ``in_axes``/``out_axes``);
* evaluating ``make_jaxpr(f)`` equals ``f``;
* the gradient of a sum is the sum of the gradients;
* ``jacfwd`` equals ``jacrev``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.tree_util import tree_flatten, tree_map
from sweep import assert_close, vdot

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
RTOL = ATOL = 1e-10


def _matrix(n: int) -> np.ndarray:
    """A fixed, well-conditioned n x n matrix closed over by the `matmul` op."""
    return 0.6 * np.eye(n) + 0.1 * np.arange(n * n).reshape(n, n) / max(n * n - 1, 1)


# Each op maps (a, y) to a value of a's shape (m, n); y is the program's second input.
# Ops are smooth or piecewise linear and keep values of moderate size.
OPS = {
    "sin": lambda a, y: fnp.sin(a),
    "cos": lambda a, y: fnp.cos(a),
    "tanh": lambda a, y: fnp.tanh(a),
    "exp": lambda a, y: fnp.exp(0.2 * a),
    "x_tanh_x": lambda a, y: a * fnp.tanh(a),
    "log1p_square": lambda a, y: fnp.log1p(a * a),
    "sqrt": lambda a, y: fnp.sqrt(1.0 + a * a),
    "affine": lambda a, y: 1.5 * a - 0.25,
    "leaky_relu": lambda a, y: fnp.where(a > 0, a, 0.5 * a),
    "maximum": lambda a, y: fnp.maximum(a, y),
    "add": lambda a, y: a + y,
    "mul": lambda a, y: a * y,
    "sub": lambda a, y: a - 0.5 * y,
    "div": lambda a, y: a / (1.5 + fnp.sin(y)),
    "pow": lambda a, y: (1.0 + a * a) ** 0.75,
    "center_columns": lambda a, y: a - fnp.mean(a, axis=0, keepdims=True),
    "scale_rows": lambda a, y: a * fnp.tanh(fnp.sum(a, axis=1, keepdims=True)),
    "matmul": lambda a, y: a @ _matrix(a.shape[1]),
    "flip": lambda a, y: fnp.flip(a, 0),
    "roll_rows": lambda a, y: fnp.concatenate([a[1:], a[:1]], axis=0),
    "shift_down": lambda a, y: fnp.pad(a, ((1, 0), (0, 0)))[:-1] + 0.5 * a,
    "reverse_flat": lambda a, y: fnp.reshape(fnp.flip(fnp.reshape(a, (-1,)), 0), a.shape),
    "transpose_twice": lambda a, y: fnp.transpose(fnp.transpose(a) * 0.9),
    "broadcast_row": lambda a, y: a + fnp.broadcast_to(a[:1], a.shape),
    "dot_y": lambda a, y: a * fnp.tanh(fnp.sum(a * y)),
    "max_columns": lambda a, y: a - fnp.max(a, axis=0, keepdims=True),
    "abs": lambda a, y: fnp.abs(a),
    "clip": lambda a, y: fnp.clip(a, -1.0, 1.0),
    "cube": lambda a, y: fnp.tanh(a) ** 3,
    "stop_gradient": lambda a, y: lax.stop_gradient(a) * 0.5 + a,
    "cond": lambda a, y: lax.cond(fnp.sum(a) > 0, fnp.sin, lambda b: b * y, a),
    "scan_cumsum": lambda a, y: lax.scan(lambda c, r: (c + r, c + r), a[0] * 0.0, a)[1],
}
OUTPUTS = {
    "array": lambda a, y: a,
    "sum": lambda a, y: fnp.sum(a * a) + fnp.sum(y * a),
    "pair": lambda a, y: (a, {"s": fnp.sum(fnp.sin(a))}),
}


def build(ops: list[str], output: str):
    def f(x, y):
        a = x
        for name in ops:
            a = OPS[name](a, y)
        return OUTPUTS[output](a, y)
    f.__name__ = "_".join(ops) + "_" + output
    return f


programs = st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=6)
shapes = st.tuples(st.integers(1, 3), st.integers(1, 4))
seeds = st.integers(0, 2 ** 32 - 1)


def draw_like(rng, tree):
    return tree_map(lambda a: rng.uniform(-1.5, 1.5, np.shape(a)), tree)


def assert_trees_close(actual, expected, rtol=RTOL, atol=ATOL):
    assert_close(actual, expected, rtol, atol)


@SETTINGS
@given(ops=programs, output=st.sampled_from(sorted(OUTPUTS)), shape=shapes, seed=seeds)
def test_forward_and_reverse_mode_agree(ops, output, shape, seed):
    """<v, J u> == <Jᵀ v, u>, and jvp, linearize and vjp agree on the value."""
    rng = np.random.default_rng(seed)
    f = build(ops, output)
    x, y, ux, uy = (rng.uniform(-1.5, 1.5, shape) for _ in range(4))
    value = f(x, y)
    out, jv = ft.jvp(f, (x, y), (ux, uy))
    out_lin, f_jvp = ft.linearize(f, x, y)
    out_vjp, f_vjp = ft.vjp(f, x, y)
    for o in (out, out_lin, out_vjp):
        assert_trees_close(o, value, rtol=1e-13, atol=1e-13)
    assert_trees_close(f_jvp(ux, uy), jv, rtol=1e-12, atol=1e-12)
    v = draw_like(rng, value)
    vx, vy = f_vjp(v)
    np.testing.assert_allclose(vdot(v, jv), vdot(vx, ux) + vdot(vy, uy), rtol=RTOL, atol=ATOL)


@SETTINGS
@given(ops=programs, output=st.sampled_from(sorted(OUTPUTS)), shape=shapes, seed=seeds,
       batch=st.integers(1, 3), x_axis=st.sampled_from([0, 1, 2, -1, None]),
       y_axis=st.sampled_from([0, 1, None]), out_axis=st.sampled_from([0, -1]))
def test_vmap_equals_a_python_loop(ops, output, shape, seed, batch, x_axis, y_axis, out_axis):
    if x_axis is None and y_axis is None:
        x_axis = 0
    rng = np.random.default_rng(seed)
    f = build(ops, output)
    xs = [rng.uniform(-1.5, 1.5, shape) for _ in range(batch)]
    ys = [rng.uniform(-1.5, 1.5, shape) for _ in range(batch)]
    if x_axis is None:
        xs = [xs[0]] * batch
    if y_axis is None:
        ys = [ys[0]] * batch
    x_in = xs[0] if x_axis is None else np.stack(xs, axis=x_axis)
    y_in = ys[0] if y_axis is None else np.stack(ys, axis=y_axis)
    batched = ft.vmap(f, in_axes=(x_axis, y_axis), out_axes=out_axis)(x_in, y_in)
    looped = [f(x, y) for x, y in zip(xs, ys)]
    expected = tree_map(lambda *leaves: np.stack([np.asarray(a) for a in leaves], axis=out_axis),
                        *looped)
    assert_trees_close(batched, expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(ops=programs, shape=shapes, seed=seeds, batch=st.integers(1, 3))
def test_vmap_of_grad_equals_a_loop_of_grads(ops, shape, seed, batch):
    rng = np.random.default_rng(seed)
    f = build(ops, "sum")
    xs = rng.uniform(-1.5, 1.5, (batch,) + shape)
    y = rng.uniform(-1.5, 1.5, shape)
    batched = ft.vmap(ft.grad(f, argnums=(0, 1)), in_axes=(0, None))(xs, y)
    looped = [ft.grad(f, argnums=(0, 1))(x, y) for x in xs]
    expected = tuple(np.stack([g[i] for g in looped]) for i in range(2))
    assert_trees_close(batched, expected, rtol=1e-12, atol=1e-12)


@SETTINGS
@given(ops=programs, output=st.sampled_from(sorted(OUTPUTS)), shape=shapes, seed=seeds)
def test_evaluating_the_jaxpr_equals_the_function(ops, output, shape, seed):
    rng = np.random.default_rng(seed)
    f = build(ops, output)
    x, y = rng.uniform(-1.5, 1.5, shape), rng.uniform(-1.5, 1.5, shape)
    closed = ft.make_jaxpr(f)(x, y)
    ft.check_jaxpr(closed.jaxpr)
    flat, tree = tree_flatten(f(x, y))
    assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, x, y), flat,
                       rtol=1e-14, atol=1e-14)
    if output == "sum":  # and the staged gradient equals the eager one
        grad = ft.grad(f, argnums=(0, 1))
        closed = ft.make_jaxpr(grad)(x, y)
        ft.check_jaxpr(closed.jaxpr)
        assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, x, y),
                           list(grad(x, y)), rtol=1e-13, atol=1e-13)


@SETTINGS
@given(ops1=programs, ops2=programs, shape=shapes, seed=seeds)
def test_gradient_of_a_sum_is_the_sum_of_gradients(ops1, ops2, shape, seed):
    rng = np.random.default_rng(seed)
    f, g = build(ops1, "sum"), build(ops2, "sum")
    x, y = rng.uniform(-1.5, 1.5, shape), rng.uniform(-1.5, 1.5, shape)
    both = ft.grad(lambda x, y: f(x, y) + g(x, y), argnums=(0, 1))(x, y)
    separate = [ft.grad(h, argnums=(0, 1))(x, y) for h in (f, g)]
    assert_trees_close(both, tuple(a + b for a, b in zip(*separate)))


@settings(SETTINGS, max_examples=30)
@given(ops=programs, shape=shapes, seed=seeds)
def test_jacfwd_equals_jacrev(ops, shape, seed):
    rng = np.random.default_rng(seed)
    f = build(ops, "array")
    x, y = rng.uniform(-1.5, 1.5, shape), rng.uniform(-1.5, 1.5, shape)
    assert_trees_close(ft.jacfwd(f, argnums=(0, 1))(x, y), ft.jacrev(f, argnums=(0, 1))(x, y))
