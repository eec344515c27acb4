"""functrans.pmap (functrans/parallel.py): jit of a named vmap.  Programs written for
jax.pmap on N devices are compared with JAX: with jax.vmap(axis_name=...) for N > 1 (this
JAX has one CPU device) and with jax.pmap itself for N = 1."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from sweep import assert_close

RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 3))


def _program(lx, np_):
    """One data-parallel step as written for pmap: every collective of the family."""
    def step(x, w):
        local = np_.tanh(x * w)
        mean = lx.pmean(local, "i")
        n = lx.axis_size("i")
        neighbour = lx.ppermute(local, "i", [(j, (j + 1) % n) for j in range(n)])
        gathered = lx.all_gather(local, "i")
        return (local - mean) * neighbour + gathered.sum(0) * lx.axis_index("i")
    return step


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_values_and_derivatives_agree_with_jax(jax):
    jnp, w = jax.numpy, np.array([0.5, -1.0, 2.0])
    ours_step, theirs_step = _program(lax, fnp), _program(jax.lax, jnp)
    ours = ft.pmap(ours_step, axis_name="i", in_axes=(0, None))
    theirs = jax.jit(jax.vmap(theirs_step, axis_name="i", in_axes=(0, None)))
    assert_close(ours(X, w), np.asarray(theirs(X, w)))
    # grad of pmap, and pmap of grad
    loss = lambda f: lambda x, w: (f(x, w) ** 2).sum()  # noqa: E731
    assert_close(ft.grad(loss(ours), argnums=(0, 1))(X, w), tuple(
        np.asarray(g) for g in jax.jit(jax.grad(loss(theirs), argnums=(0, 1)))(X, w)))
    per_member = lambda step, grad: lambda x, w: grad(  # noqa: E731
        lambda x: (step(x, w) ** 2).sum())(x)
    assert_close(ft.pmap(per_member(ours_step, ft.grad), axis_name="i", in_axes=(0, None))(X, w),
                 np.asarray(jax.jit(jax.vmap(per_member(theirs_step, jax.grad),
                                             axis_name="i", in_axes=(0, None)))(X, w)))
    # one member: JAX's own pmap on its one device
    one = X[:1]
    assert_close(ours(one, w), np.asarray(jax.pmap(theirs_step, axis_name="i",
                                                   in_axes=(0, None))(one, w)))


def test_nested_maps_with_collectives_agree_with_jax(jax):
    x = RNG.standard_normal((2, 3, 4))

    def member(lx):
        return lambda v: lx.psum(v, "rows") * lx.all_gather(v, "cols")[0] + lx.pmax(v, "cols")

    ours = ft.pmap(ft.pmap(member(lax), axis_name="cols"), axis_name="rows")(x)
    theirs = jax.vmap(jax.vmap(member(jax.lax), axis_name="cols"), axis_name="rows")(x)
    assert_close(ours, np.asarray(theirs))
    mixed = ft.pmap(ft.vmap(member(lax), axis_name="cols"), axis_name="rows")(x)
    assert_close(mixed, np.asarray(theirs))


def test_traced_once_per_signature_with_static_and_broadcast_arguments():
    traces = []

    def f(x, power, c):
        traces.append(power)
        return x ** power + c

    mapped = ft.pmap(f, "i", in_axes=(0, None, None), static_broadcasted_argnums=1)
    c = np.array([1.0, 2.0, 3.0])
    assert_close(mapped(X, 2, c), X ** 2 + c)
    assert_close(mapped(2 * X, 2, c), 4 * X ** 2 + c)
    assert traces == [2]
    assert_close(mapped(X, 3, c), X ** 3 + c)
    assert traces == [2, 3]
    # out_axes moves the mapped axis; out_axes=None returns a value the same for all
    moved = ft.pmap(lambda x: x * 2, out_axes=1)(X)
    assert_close(moved, 2 * X.T)
    total = ft.pmap(lambda x: lax.psum(x, "i"), "i", out_axes=None)(X)
    assert_close(total, X.sum(0))
    # nothing mapped: axis_size says how many members
    counted = ft.pmap(lambda c: c + lax.axis_index("i"), "i", in_axes=None, axis_size=3)(1.0)
    assert_close(counted, np.array([1.0, 2.0, 3.0]))
    # keyword arguments are mapped over their leading axis, as in JAX
    assert_close(ft.pmap(lambda x, y: x * y)(X, y=X), X * X)


def test_mapped_axis_is_not_limited_by_the_device_count():
    many = RNG.standard_normal((3 * len(ft.devices()) + 5, 2))
    assert_close(ft.pmap(lambda r: r - lax.pmean(r, "i"), "i")(many), many - many.mean(0))


def test_placement_arguments():
    assert_close(ft.pmap(fnp.sin, devices=ft.devices(), backend="cpu")(X), np.sin(X))
    with pytest.raises(ValueError, match="pmap: devices must be devices of "
                                         r"functrans.devices\(\)"):
        ft.pmap(fnp.sin, devices=["tpu:0"])
    with pytest.raises(ValueError, match="pmap: unknown backend 'tpu'"):
        ft.pmap(fnp.sin, backend="tpu")
    with pytest.raises(TypeError, match="pmap: static_broadcasted_argnums must be "
                                        "non-negative ints"):
        ft.pmap(fnp.sin, static_broadcasted_argnums=-1)
    with pytest.raises(TypeError, match="pmap: expected a function"):
        ft.pmap(3)
    with pytest.raises(ValueError, match="pmap: in_axes has 1 entries but the function was "
                                         "called with 2 positional arguments"):
        ft.pmap(lambda a, b: a, in_axes=(0,))(X, X)
