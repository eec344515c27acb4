"""The scatters (set, add, mul, min, max) and their modes, ``x.at[index]`` updates on tracers
and on the arrays functrans returns, and the error for a NumPy array indexed by a tracer.

The sweep (tests/cases_gather.py) checks derivatives numerically at random points; here are
the documented choices: which duplicate wins a scatter-set (and gets the cotangent), how
ties share a min/max derivative, zeros in scatter-mul, every mode with positions out of
bounds, and every batching combination against a loop."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, ops
from functrans.array_types import Array
from sweep import assert_close

SCATTERS = {"scatter": (lax.scatter, None), "scatter_add": (lax.scatter_add, np.add),
            "scatter_mul": (lax.scatter_mul, np.multiply),
            "scatter_min": (lax.scatter_min, np.minimum),
            "scatter_max": (lax.scatter_max, np.maximum)}


def _reference(name, x, indices, updates, mode=None):
    """The scatter by a Python loop over the entries, in row-major order."""
    ufunc = SCATTERS[name][1]
    out = np.array(x, copy=True)
    k = indices.shape[-1]
    dims = np.array(x.shape[:k])
    flat_ix = indices.reshape(-1, k)
    flat_up = updates.reshape((len(flat_ix),) + x.shape[k:])
    for pos, up in zip(flat_ix, flat_up):
        if mode == "drop" and ((pos < 0) | (pos >= dims)).any():
            continue
        pos = tuple(np.clip(pos, 0, dims - 1))
        out[pos] = up if ufunc is None else ufunc(out[pos], up)
    return out


# ------------------------------------------------------------------------------------------
# Values: repeated positions and modes, on NumPy and on the CuPy stand-in
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds", "drop", "fill"])
def test_scatter_values_with_repeats_and_out_of_bounds(name, mode):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3))
    indices = rng.integers(-3, 7, size=(2, 5, 1))  # repeats, and out of bounds both ways
    updates = rng.normal(size=(2, 5, 3))
    got = SCATTERS[name][0](x, indices, updates, mode=mode)
    want = _reference(name, x, indices, updates, "drop" if mode in ("drop", "fill") else None)
    assert_close(got, want)


@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("mode", [None, "drop"])
def test_scatter_on_a_device_library_matches_numpy_without_synchronising(name, mode):
    standin = pytest.importorskip("cupy_standin")
    rng = np.random.default_rng(1)
    x, indices = rng.normal(size=(5, 2)), rng.integers(-2, 7, size=(9, 1))
    updates = rng.normal(size=(9, 2))
    updates[3] = updates[1]  # a tie for min/max
    want = SCATTERS[name][0](x, indices, updates, mode=mode)
    with standin.transfers() as moved:
        got = SCATTERS[name][0](standin.asarray(x), standin.asarray(indices),
                                standin.asarray(updates), mode=mode)
    assert isinstance(got, standin.ndarray)
    assert moved.d2h == 0
    assert_close(got.get(), want)


def test_scatter_set_last_duplicate_wins():
    got = lax.scatter(np.zeros(3), np.array([[1], [2], [1], [1]]), np.array([1., 2., 3., 4.]))
    assert_close(got, np.array([0., 4., 2.]))


def test_gather_fill_default_values():
    idx = np.array([[0], [5]])
    assert np.isnan(lax.gather(np.ones(3), idx, mode="fill")[1])
    assert lax.gather(np.ones(3, np.int32), idx, mode="fill")[1] == np.iinfo(np.int32).min
    assert lax.gather(np.ones(3, np.uint8), idx, mode="fill")[1] == 255
    assert lax.gather(np.zeros(3, bool), idx, mode="fill")[1]
    assert_close(lax.gather(np.ones(3), idx, mode="fill", fill_value=-2.0), np.array([1., -2.]))


def test_fill_and_drop_work_on_axes_of_size_zero():
    assert lax.gather(np.zeros((0, 2)), np.array([[0]]), mode="fill").shape == (1, 2)
    assert lax.scatter_add(np.zeros(0), np.array([[0]]), np.ones(1), mode="drop").shape == (0,)
    with pytest.raises(IndexError, match="mode='fill'"):
        lax.gather(np.zeros((0, 2)), np.array([[0]]))


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="scatter_add: mode='wrap'"):
        lax.scatter_add(np.zeros(3), np.array([[0]]), np.ones(1), mode="wrap")
    with pytest.raises(ValueError, match="gather: mode='wrap'"):
        lax.gather(np.zeros(3), np.array([[0]]), mode="wrap")


# ------------------------------------------------------------------------------------------
# Derivatives at repeated positions
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "drop"])
def test_scatter_set_transpose_gives_the_cotangent_to_the_winner_only(mode):
    indices = np.array([[1], [2], [1], [5]])
    f = lambda x, u: lax.scatter(x, indices, u, mode=mode)
    _, pullback = ft.vjp(f, np.zeros(4), np.zeros(4))
    ct_x, ct_u = pullback(np.array([10., 20., 30., 40.]))
    # clip: 5 lands on 3 (it wins there); drop: 5 is dropped and gets nothing
    assert_close(ct_x, np.array([10., 0., 0., 40.]) if mode == "drop" else
                 np.array([10., 0., 0., 0.]))
    assert_close(ct_u, np.array([0., 30., 20., 0.]) if mode == "drop" else
                 np.array([0., 30., 20., 40.]))


def test_scatter_add_transpose_with_repeats_reads_the_cotangent_for_each():
    indices = np.array([[1], [1], [0], [9]])
    _, pullback = ft.vjp(lambda u: lax.scatter_add(np.zeros(3), indices, u, mode="drop"),
                         np.ones(4))
    (ct_u,) = pullback(np.array([5., 7., 11.]))
    assert_close(ct_u, np.array([7., 7., 5., 0.]))


def test_scatter_mul_gradient_with_repeats_and_zeros():
    indices = np.array([[0], [0], [0], [1], [1]])
    f = lambda x, u: fnp.sum(lax.scatter_mul(x, indices, u) * np.array([1.0, 2.0]))
    x = np.array([3.0, 5.0])
    for u in [np.array([2.0, 4.0, 0.5, 3.0, 7.0]),   # no zero
              np.array([2.0, 0.0, 0.5, 0.0, 7.0]),   # one zero per position
              np.array([0.0, 0.0, 0.5, 3.0, 7.0])]:  # two zeros at position 0
        gx, gu = ft.grad(f, argnums=(0, 1))(x, u)
        want_u = np.array([3.0 * np.prod(np.delete(u[:3], j)) for j in range(3)] +
                          [2 * 5.0 * np.prod(np.delete(u[3:], j)) for j in range(2)])
        assert_close(gu, want_u)
        assert_close(gx, np.array([np.prod(u[:3]), 2 * np.prod(u[3:])]))
        ft.testing.check_grads(f, (x, u), order=1)


@pytest.mark.parametrize("name", ["scatter_min", "scatter_max"])
def test_scatter_extremum_ties_share_the_derivative(name):
    scatter = SCATTERS[name][0]
    # position 0: the operand and two updates tie; position 1: one update wins outright
    x, u = np.array([1.0, 0.0]), np.array([1.0, 1.0, 5.0 if name == "scatter_max" else -5.0])
    indices = np.array([[0], [0], [1]])
    gx, gu = ft.grad(lambda x, u: fnp.sum(scatter(x, indices, u)), argnums=(0, 1))(x, u)
    assert_close(gx, np.array([1 / 3, 0.0]))
    assert_close(gu, np.array([1 / 3, 1 / 3, 1.0]))
    _, t = ft.jvp(lambda x, u: scatter(x, indices, u), (x, u),
                  (np.array([3.0, 1.0]), np.array([6.0, 0.0, 2.0])))
    assert_close(t, np.array([3.0, 2.0]))


# ------------------------------------------------------------------------------------------
# Batching: every combination of batched operand, indices and updates, against a loop
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCATTERS)
@pytest.mark.parametrize("axes", [a for a in itertools.product([0, 1, None], repeat=3)
                                  if a != (None, None, None)])
def test_scatter_vmap_matches_a_loop(name, axes):
    rng = np.random.default_rng(2)
    size = 3
    shapes = [(4, 2), (5, 1), (5, 2)]
    args = []
    for shape, ax, kind in zip(shapes, axes, ["real", "int", "real"]):
        full = shape if ax is None else shape[:ax] + (size,) + shape[ax:]
        args.append(rng.integers(-2, 6, full) if kind == "int" else rng.normal(size=full))
    f = lambda x, i, u: SCATTERS[name][0](x, i, u, mode="drop")
    got = ft.vmap(f, in_axes=axes)(*args)
    member = lambda a, ax, b: a if ax is None else np.take(a, b, axis=ax)
    want = np.stack([f(*[member(a, ax, b) for a, ax in zip(args, axes)])
                     for b in range(size)])
    assert_close(got, want)


def test_gather_fill_vmap_of_both_matches_a_loop():
    rng = np.random.default_rng(3)
    x, i = rng.normal(size=(3, 4, 2)), rng.integers(-2, 6, size=(3, 5, 1))
    f = lambda x, i: lax.gather(x, i, mode="fill", fill_value=7.0)
    assert_close(ft.vmap(f)(x, i), np.stack([f(x[b], i[b]) for b in range(3)]))


# ------------------------------------------------------------------------------------------
# x.at[index]
# ------------------------------------------------------------------------------------------

INDEX_FORMS = [1, -1, slice(None, None, 2), slice(3, 0, -1), (Ellipsis, 0), (None, 1),
               np.array([0, 2, -1]), ([0, 1], [2, 0]), (slice(None), [1, 1, 0]),
               ([0, 1], slice(None), [0, 1]), np.array([True, False, True, False]),
               (np.array([[0], [2]]), np.array([1, 0])),
               (slice(None), [0, 2], Ellipsis, [1, 0]),  # the Ellipsis stands for no axis
               ([1, 3], 0, slice(1, 1)), True]


def _numpy_update(x, index, op, values):
    out = np.array(x, copy=True)
    if op == "set":
        out[index] = values
    else:
        getattr(np, op).at(out, index, values)
    return out


@pytest.mark.parametrize("index", INDEX_FORMS, ids=repr)
@pytest.mark.parametrize("op", ["set", "add", "multiply", "min", "max"])
def test_at_every_index_form_matches_numpy(index, op):
    x = fnp.asarray(np.random.default_rng(4).normal(size=(4, 3, 2)))
    values = np.random.default_rng(5).normal(size=np.shape(np.asarray(x)[index]))
    method = {"min": "minimum", "max": "maximum"}.get(op, op)
    got = getattr(x.at[index], op)(values)
    assert type(got) is Array
    assert_close(got, _numpy_update(np.asarray(x), index, method, values))
    assert_close(x.at[index].get(), np.asarray(x)[index])


def test_at_methods_on_a_concrete_array():
    x = fnp.arange(1.0, 5.0)
    assert isinstance(x, np.ndarray) and repr(x) == "array([1., 2., 3., 4.])"
    i = np.array([1, 1, 3])
    assert_close(x.at[i].subtract(1.0), np.array([1., 0., 3., 3.]))
    assert_close(x.at[i].divide(np.array([2., 4., 2.])), np.array([1., 0.25, 3., 2.]))
    assert_close(x.at[i].power(np.array([2., 3., 2.])), np.array([1., 64., 3., 16.]))
    # once per repeat, as JAX and NumPy's ufunc.at
    assert_close(x.at[i].apply(lambda v: v * 10), np.array([1., 200., 3., 40.]))
    assert_close(fnp.arange(4).at[1].divide(2), np.array([0., 0.5, 2., 3.]))
    assert_close(x.at[1].set(7, indices_are_sorted=True, unique_indices=True),
                 np.array([1., 7., 3., 4.]))
    assert_close(x, np.arange(1.0, 5.0))  # unchanged
    assert (fnp.zeros(2, dtype=np.int32).at[0].set(2.7)).dtype == np.int32


def test_at_repeats_apply_each_time():
    # as JAX and NumPy's ufunc.at: `apply` once per repeat, `multiply` by every value
    x = fnp.arange(4.0)
    assert_close(x.at[np.array([1, 1, 3])].apply(lambda v: 2 * v + 1),
                 np.array([0., 7., 2., 7.]))
    traced = ft.jit(lambda i: x.at[i].apply(lambda v: 2 * v + 1))  # counts known at run time
    assert_close(traced(np.array([1, 1, 3, 1])), np.array([0., 15., 2., 7.]))
    want = np.array([1.0, np.cos(np.sin(1.0)) * np.cos(1.0), 1.0, 1.0])
    f = lambda x: fnp.sum(x.at[np.array([1, 1])].apply(fnp.sin))  # noqa: E731
    assert_close(ft.grad(f)(x), want)
    # concrete indices: the repeats are counted now, not by a loop reverse mode would refuse
    assert_close(ft.jit(ft.grad(f))(x), want)
    assert_close(ft.grad(ft.jit(f))(x), want)
    assert_close(ft.vmap(ft.grad(f))(np.stack([x, x])), np.stack([want, want]))


def test_at_multiply_second_derivatives_are_exact_at_zero_updates():
    # the product of a position's updates comes from a scan, not a division: the Hessian is
    # exact (and symmetric) with zeros among repeated updates
    def f(u):
        return fnp.sum(fnp.asarray([1.5, 2.0, 3.0]).at[np.array([1, 1, 0, 1])].multiply(u) ** 2)

    def exact(u):  # f = 4 (u0 u1 u3)^2 + 2.25 u2^2 + 9
        a, b, c, d = u
        h = np.zeros((4, 4))
        h[0, 0], h[1, 1], h[3, 3] = 8 * (b * d) ** 2, 8 * (a * d) ** 2, 8 * (a * b) ** 2
        h[0, 1] = h[1, 0] = 16 * a * b * d * d
        h[0, 3] = h[3, 0] = 16 * a * b * b * d
        h[1, 3] = h[3, 1] = 16 * a * a * b * d
        h[2, 2] = 4.5
        return h
    for u in ([0.0, 3.0, 2.0, 0.0], [0.0, 3.0, 2.0, 1.5], [0.0, 0.0, 0.0, 0.0],
              [0.5, 3.0, 2.0, -1.0]):
        assert_close(ft.hessian(f)(np.array(u)), exact(u), rtol=1e-12, atol=1e-12)
        assert_close(ft.jacfwd(ft.jacrev(f))(np.array(u)), exact(u), rtol=1e-12, atol=1e-12)
    g = lambda u: fnp.asarray([1.5, 2.0]).at[np.array([1, 1])].divide(u)[1]
    ft.testing.check_grads(g, (np.array([0.7, -1.3]),), order=3)


def test_at_result_dtype_is_the_arrays():
    # computed in the promoted dtype, then cast back, as JAX: 2 * 2.5 = 5
    i = fnp.asarray([1, 2, 3])
    for op, value, want in [("multiply", 2.5, [1, 5, 3]), ("add", 0.6, [1, 2, 3]),
                            ("power", 0.5, [1, 1, 3]), ("set", 2.7, [1, 2, 3]),
                            ("min", 1.5, [1, 1, 3]), ("subtract", 0.6, [1, 1, 3])]:
        got = getattr(i.at[1], op)(value)
        assert got.dtype == np.int64 and np.array_equal(got, want), (op, got)
    assert np.array_equal(i.at[np.array([1, 1])].add(0.6), [1, 3, 3])  # 2 + 0.6 + 0.6
    assert i.at[1].divide(2.5).dtype == np.float64  # true division of integers
    f32 = fnp.ones(3, np.float32)
    for op in AT_METHODS:
        assert getattr(f32.at[1], op)(2.0).dtype == np.float32, op  # a weak Python float
        assert getattr(f32.at[1], op)(np.float64(2.0)).dtype == np.float32, op
        assert ft.jit(lambda x: getattr(x.at[1], op)(2.0))(f32).dtype == np.float32, op


def test_at_modes_decide_for_integer_indices_too():
    x = fnp.arange(5.0)
    assert_close(x.at[9].set(1.0), np.arange(5.0))                     # dropped
    assert_close(x.at[9].set(1.0, mode="clip"), np.array([0., 1., 2., 3., 1.]))
    assert_close(x.at[np.array(9)].add(1.0), np.arange(5.0))
    assert float(x.at[9].get(mode="fill", fill_value=-1.0)) == -1.0
    assert_close(x.at[(2, )].get(mode="clip"), 2.0)
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[9].get()  # no mode: as x[9], refused as NumPy refuses it
    # wrap_negative_indices=False: negative positions are out of bounds
    assert_close(x.at[-1].set(9.0, wrap_negative_indices=False), np.arange(5.0))
    assert_close(x.at[np.array([-1, 2])].set(9.0, wrap_negative_indices=False),
                 np.array([0., 1., 9., 3., 4.]))
    assert np.isnan(x.at[-1].get(mode="fill", wrap_negative_indices=False))
    # JAX's enum, and ours, name the modes too
    assert_close(x.at[np.array([9, 1])].set(7.0, mode=lax.GatherScatterMode.FILL_OR_DROP),
                 np.array([0., 7., 2., 3., 4.]))
    assert_close(x.at[np.array([9, 1])].get(mode=lax.GatherScatterMode.CLIP),
                 np.array([4., 1.]))
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP


def test_at_errors_name_the_method_and_the_shapes():
    x = fnp.zeros((3, 4))
    with pytest.raises(ValueError, match=r"x.at\[...\].set: values of shape \(4,\) do not "
                                         r"broadcast to the shape \(3,\) of x\[index\]"):
        x.at[:, 0].set(np.ones(4))
    with pytest.raises(TypeError, match="invalid index 1.5 of type float"):
        x.at[1.5].set(1.0)


def test_at_modes_out_of_bounds():
    x = fnp.arange(4.0)
    i = np.array([1, 7, -9])
    assert_close(x.at[i].set(9.0), np.array([0., 9., 2., 3.]))              # default: drop
    assert_close(x.at[i].add(1.0, mode="drop"), np.array([0., 2., 2., 3.]))
    assert_close(x.at[i].add(1.0, mode="clip"), np.array([1., 2., 2., 4.]))
    assert_close(x.at[i].get(mode="clip"), np.array([1., 3., 0.]))
    assert_close(x.at[i].get(mode="fill", fill_value=-1.0), np.array([1., -1., -1.]))
    with pytest.raises(IndexError, match="out of bounds"):
        x.at[i].get()  # as NumPy: concrete indices out of bounds are refused
    with pytest.raises(ValueError, match="mode='wrap'"):
        x.at[i].set(1.0, mode="wrap")


def test_at_under_grad_jacfwd_and_vmap():
    def f(x, v):
        return fnp.sum(x.at[1:3].set(v * x[0]) ** 2) + fnp.sum(x.at[0].multiply(v[0]))
    x, v = fnp.asarray([1.0, 2.0, 3.0, 4.0]), fnp.asarray([0.5, -1.5])
    ft.testing.check_grads(f, (x, v), order=2)
    assert_close(ft.jacfwd(f, argnums=1)(x, v), ft.grad(f, argnums=1)(x, v))
    rows = np.arange(12.0).reshape(3, 4)
    where = np.array([0, 3, 1])
    got = ft.vmap(lambda r, i: r.at[i].add(100.0))(rows, where)
    want = rows.copy()
    want[np.arange(3), where] += 100.0
    assert_close(got, want)
    # a concrete array updated at a traced index with traced values
    table = fnp.zeros((3, 2))
    got = ft.vmap(lambda i, v: table.at[i].set(v))(np.array([2, 0]), np.ones((2, 2)))
    assert_close(got[0], np.array([[0., 0.], [0., 0.], [1., 1.]]))


def test_at_with_the_counter_of_fori_loop_and_scan():
    out = lax.fori_loop(0, 4, lambda i, x: x.at[i].set(x[i - 1] + 1.0), np.zeros(5))
    assert_close(out, np.array([1., 2., 3., 4., 0.]))

    def step(carry, i):
        return carry.at[i].add(1.0), carry[i]
    carry, seen = lax.scan(step, np.zeros(3), np.array([0, 2, 2, 1]))
    assert_close(carry, np.array([1., 1., 2.]))
    assert_close(seen, np.array([0., 0., 1., 0.]))
    # a functrans array indexed by the traced counter (x is an Array when f runs eagerly)
    f = lambda x: fnp.sum(lax.fori_loop(0, 3, lambda i, y: y.at[i + 1].add(y[i] * x[i]), x))
    ft.testing.check_grads(f, (fnp.asarray([1., 2., 3., 4.]),), order=2)


def test_results_stay_ndarrays_for_numpy():
    x = fnp.sin(np.arange(3.0))
    assert type(x) is Array and isinstance(x, np.ndarray)
    assert repr(x) == repr(np.sin(np.arange(3.0)))
    assert str(x) == str(np.sin(np.arange(3.0)))
    assert isinstance(np.cos(x), np.ndarray)
    assert type(fnp.asarray([1, 2])) is Array and type(fnp.zeros(2)) is Array
    # inside transforms too, what the function sees of a value without derivative is an
    # Array, as in its own calls (docs/array_api.md)
    seen = []
    ft.grad(lambda x: seen.append(type(ft.lax.stop_gradient(x))) or fnp.sum(x))(np.ones(2))
    assert seen[0] is Array


def test_setitem_on_a_tracer_points_to_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match=r"x.at\[0\].set"):
        ft.grad(lambda x: fnp.sum(f(x)))(np.ones(2))


def test_numpy_array_indexed_by_a_tracer_names_the_fix():
    table = np.arange(5.0)
    with pytest.raises(ft.core.TracerArrayConversionError,
                       match=r"table\[i\].*take\(table, i, axis=0\)"):
        ft.vmap(lambda i: table[i])(np.array([1, 2]))
    # the fixes it names, and arrays made by functrans, which take tracers as indices
    i = np.array([1, 2])
    assert_close(ft.vmap(lambda i: fnp.take(table, i, axis=0))(i), np.array([1., 2.]))
    assert_close(ft.vmap(lambda i: fnp.asarray(table).at[i].get())(i), np.array([1., 2.]))
    assert_close(ft.vmap(lambda i: fnp.asarray(table)[i])(i), np.array([1., 2.]))
    grid = fnp.asarray(np.arange(6.0).reshape(2, 3))
    assert_close(ft.vmap(lambda i: grid[1, i])(i), np.array([4., 5.]))
    assert type(grid[1:]) is Array and type(grid[0, 1]) is Array and grid[0, 1].shape == ()


# x.at[...] swept like the sweep's cases (which cannot hold it: device arrays have no .at):
# derivatives of both modes to second order and vmap against a loop, in every argument.

AT_METHODS = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]


@pytest.mark.parametrize("method", AT_METHODS)
def test_at_method_derivatives_and_vmap(method):
    rng = np.random.default_rng(6)
    x = fnp.asarray(rng.uniform(0.5, 2.0, size=(4, 2)))
    v = fnp.asarray(rng.uniform(0.5, 2.0, size=(3, 2)))
    i = np.array([2, -1, 2])  # a repeat, and a negative position
    f = lambda x, v: getattr(x.at[i], method)(v)
    ft.testing.check_grads(f, (x, v), order=2)
    xs, vs = rng.uniform(0.5, 2.0, size=(3, 4, 2)), rng.uniform(0.5, 2.0, size=(3, 3, 2))
    assert_close(ft.vmap(f)(xs, vs), np.stack([f(fnp.asarray(a), b) for a, b in zip(xs, vs)]))
    idx = np.array([[0, 1, 1], [3, 3, -2], [1, 0, 2]])
    g = lambda x, i: getattr(x.at[i], method)(v)
    assert_close(ft.vmap(g)(xs, idx), np.stack([g(fnp.asarray(a), b) for a, b in zip(xs, idx)]))


def test_at_apply_and_get_derivatives():
    x = fnp.asarray([0.3, 1.2, -0.7, 2.0])
    ft.testing.check_grads(lambda x: x.at[1::2].apply(fnp.sin), (x,), order=2)
    ft.testing.check_grads(lambda x: x.at[np.array([3, 9, 0])].get(mode="fill",
                                                                   fill_value=0.0),
                           (x,), order=2)


def test_place_values_derivatives_and_vmap():
    mask = np.array([[True, False, True], [False, True, False]])
    x, v = np.arange(6.0).reshape(2, 3), np.array([10.0, 20.0])
    want = x.copy()
    np.place(want, mask, v)
    assert_close(fnp.place(x, mask, v, inplace=False), want)
    ft.testing.check_grads(lambda x, v: fnp.place(x, mask, v, inplace=False), (x, v), order=2)
    vs = np.array([[1.0, 2.0], [3.0, 4.0]])
    got = ft.vmap(lambda v: fnp.place(x, mask, v, inplace=False))(vs)
    assert_close(got[1], fnp.place(x, mask, vs[1], inplace=False))
    with pytest.raises(ValueError, match="inplace=False"):
        fnp.place(x, mask, v)
    with pytest.raises(TypeError, match="must be concrete"):
        ft.vmap(lambda m: fnp.place(x, m, v, inplace=False))(np.ones((2, 2, 3), bool))


def test_functional_puts_require_inplace_false():
    for call in [lambda: fnp.put(fnp.zeros(3), [0], 1.0),
                 lambda: fnp.put_along_axis(fnp.zeros((2, 2)), np.zeros((2, 1), int), 1.0, 1),
                 lambda: fnp.fill_diagonal(fnp.zeros((2, 2)), 1.0)]:
        with pytest.raises(ValueError, match="inplace=False"):
            call()


def test_segment_ops_drop_or_clamp_ids_and_need_num_segments_when_traced():
    data, ids = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 5, -1, 1])
    assert_close(ops.segment_sum(data, ids, num_segments=3), np.array([1.0, 4.0, 0.0]))
    assert_close(ops.segment_sum(data, ids, num_segments=3, mode="clip"),
                 np.array([4.0, 4.0, 2.0]))
    assert_close(ops.segment_sum(data, np.array([0, 0, 2, 2])), np.array([3.0, 0.0, 7.0]))
    assert ops.segment_sum(data, ids, num_segments=0, mode="clip").shape == (0,)  # no segment
    assert_close(ops.segment_sum(data, ids, num_segments=3, mode=lax.GatherScatterMode.CLIP),
                 np.array([4.0, 4.0, 2.0]))
    with pytest.raises(TypeError, match="pass num_segments"):
        ft.vmap(lambda s: ops.segment_sum(data, s))(np.zeros((2, 4), int))
    got = ft.vmap(lambda s: ops.segment_max(data, s, 2))(np.array([[0, 0, 1, 1], [1, 1, 1, 0]]))
    assert_close(got, np.array([[2.0, 4.0], [4.0, 3.0]]))


def test_numpy_operations_on_results_behave_as_on_ndarrays():
    y = fnp.arange(1.0, 4.0)
    # methods, operators and ufuncs give Arrays, 0-d ones included, as JAX's give 0-d arrays
    assert type(y.sum()) is Array and y.sum().shape == () and type(y[0]) is Array
    assert type(y * 2) is Array and type(np.sin(y)) is Array
    assert float(y.mean()) == 2.0 and repr(y.mean()) == repr(np.array(2.0))
    # NumPy's functions compute on plain ndarrays and give NumPy's results, as they do for
    # JAX's arrays (their code may write into arrays it makes from its inputs)
    z = fnp.asarray([3.0, 1.0, 2.0])
    assert type(np.max(z)) is np.float64 and type(np.sort(z)) is np.ndarray
    assert_close(np.sort(z), np.array([1.0, 2.0, 3.0]))
    assert_close(np.linspace(z, 4.0, 3, axis=1)[:, 1], np.array([3.5, 2.5, 3.0]))
    assert_close(z, np.array([3.0, 1.0, 2.0]))
    assert type(np.asarray(y)) is np.ndarray
