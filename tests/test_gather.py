"""functrans/primitives/gather.py and the indexing built on it: scatter-add with repeated
positions under transposition, every batching combination against a loop, clamping,
errors, and (in the numpy part) integer-array and traced indices against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import lax
from sweep import assert_close, case_rng, draw


def _rng(*key) -> np.random.Generator:
    return case_rng(repr(key))


def _reference_gather(x, indices):
    k = indices.shape[-1]
    dims = np.array(x.shape[:k])
    clamped = np.clip(indices, 0, dims - 1)
    return x[tuple(np.moveaxis(clamped, -1, 0))]


def _reference_scatter_add(x, indices, updates):
    k = indices.shape[-1]
    out = x.copy()
    clamped = np.clip(indices, 0, np.array(x.shape[:k]) - 1)
    np.add.at(out, tuple(np.moveaxis(clamped, -1, 0)), updates)
    return out


# ------------------------------------------------------------------------------------------
# Values, clamping, repeated positions
# ------------------------------------------------------------------------------------------


def test_gather_clamps_out_of_bounds_positions():
    x = np.arange(12.0).reshape(4, 3)
    got = lax.gather(x, np.array([[-7, 1], [2, 99], [4, -1]]))
    np.testing.assert_array_equal(got, [x[0, 1], x[2, 2], x[3, 0]])


@pytest.mark.parametrize("shape,index_shape", [((5,), (7, 1)), ((4, 3), (2, 3, 1)),
                                               ((4, 3, 2), (6, 2)), ((3, 2), (5, 2))])
def test_gather_and_scatter_add_match_numpy(shape, index_shape):
    rng = _rng(shape, index_shape)
    x = draw(rng, shape)
    indices = rng.integers(-2, max(shape) + 2, index_shape)
    np.testing.assert_array_equal(lax.gather(x, indices), _reference_gather(x, indices))
    updates = draw(rng, index_shape[:-1] + shape[index_shape[-1]:])
    np.testing.assert_allclose(lax.scatter_add(x, indices, updates),
                               _reference_scatter_add(x, indices, updates), rtol=1e-14)


def test_scatter_add_repeated_positions_accumulate():
    out = lax.scatter_add(np.zeros(3), np.array([[1], [1], [1], [0]]),
                          np.array([1.0, 2.0, 4.0, 8.0]))
    np.testing.assert_array_equal(out, [8.0, 7.0, 0.0])


def test_scatter_add_does_not_write_into_its_operand():
    x = np.zeros(3)
    lax.scatter_add(x, np.array([[0]]), np.array([1.0]))
    np.testing.assert_array_equal(x, np.zeros(3))


def test_gather_transpose_accumulates_repeated_positions():
    """The cotangent of x through x[[1, 1, 1, 0]] counts how often each row was read."""
    indices = np.array([[1], [1], [1], [0], [-3]])  # -3 is clamped to row 0
    x = np.arange(6.0).reshape(3, 2)
    _, pullback = ft.vjp(lambda x: lax.gather(x, indices), x)
    (ct,) = pullback(np.ones((5, 2)))
    np.testing.assert_array_equal(ct, [[2.0, 2.0], [3.0, 3.0], [0.0, 0.0]])
    transposed = ft.linear_transpose(lambda x: lax.gather(x, indices), x)
    np.testing.assert_array_equal(transposed(np.ones((5, 2)))[0], ct)


def test_scatter_add_transpose_is_gather_for_the_updates_and_identity_for_the_operand():
    rng = _rng("scatter-transpose")
    x, updates = draw(rng, (4, 3)), draw(rng, (6, 3))
    indices = np.array([[0], [2], [2], [2], [3], [0]])
    transposed = ft.linear_transpose(lambda x, u: lax.scatter_add(x, indices, u), x, updates)
    ct = draw(rng, (4, 3))
    ct_x, ct_u = transposed(ct)
    np.testing.assert_array_equal(ct_x, ct)
    np.testing.assert_array_equal(ct_u, ct[indices[:, 0]])
    # <ct, S(x, u)> == <S^T ct, (x, u)>, with the repeated rows accumulating
    lhs = np.vdot(ct, lax.scatter_add(x, indices, updates))
    np.testing.assert_allclose(lhs, np.vdot(ct_x, x) + np.vdot(ct_u, updates), rtol=1e-12)


# ------------------------------------------------------------------------------------------
# Batching: operand only, indices only, both, at leading and non-leading axes
# ------------------------------------------------------------------------------------------

AXES = [(0, None), (None, 0), (0, 0), (2, 1), (1, None), (None, 2)]


def _batched(rng, shape, axis, size, kind="real", high=None):
    if axis is None:
        return (rng.integers(-1, high, shape) if kind == "int" else draw(rng, shape)), []
    members = [rng.integers(-1, high, shape) if kind == "int" else draw(rng, shape)
               for _ in range(size)]
    return np.stack(members, axis), members


def _count_primitives(jaxpr, name):
    return sum(eqn.primitive.name == name for eqn in jaxpr.jaxpr.eqns)


@pytest.mark.parametrize("in_axes", AXES, ids=str)
def test_gather_batching_matches_a_loop(in_axes):
    rng, size = _rng("gather-batch", in_axes), 3
    x, xs = _batched(rng, (4, 3, 2), in_axes[0], size)
    i, is_ = _batched(rng, (5, 2, 2), in_axes[1], size, "int", 5)
    got = ft.vmap(lax.gather, in_axes=in_axes)(x, i)
    want = np.stack([lax.gather(xs[b] if xs else x, is_[b] if is_ else i)
                     for b in range(size)])
    assert_close(got, want, what=f"vmap(gather, {in_axes})")
    jaxpr = ft.make_jaxpr(ft.vmap(lax.gather, in_axes=in_axes))(x, i)
    assert _count_primitives(jaxpr, "gather") == 1, "batched gather must be one gather"


@pytest.mark.parametrize("in_axes", [(0, None, 0), (None, 0, None), (0, 0, 0), (None, None, 1),
                                     (1, 1, None), (None, 2, 0), (2, None, None)], ids=str)
def test_scatter_add_batching_matches_a_loop(in_axes):
    rng, size = _rng("scatter-batch", in_axes), 3
    x, xs = _batched(rng, (4, 3, 2), in_axes[0], size)
    i, is_ = _batched(rng, (5, 2, 2), in_axes[1], size, "int", 5)
    u, us = _batched(rng, (5, 2, 2), in_axes[2], size)
    got = ft.vmap(lax.scatter_add, in_axes=in_axes)(x, i, u)
    want = np.stack([lax.scatter_add(xs[b] if xs else x, is_[b] if is_ else i,
                                      us[b] if us else u) for b in range(size)])
    assert_close(got, want, what=f"vmap(scatter_add, {in_axes})")
    jaxpr = ft.make_jaxpr(ft.vmap(lax.scatter_add, in_axes=in_axes))(x, i, u)
    assert _count_primitives(jaxpr, "scatter_add") == 1


def test_per_example_gradient_of_a_lookup_is_one_scatter_add():
    table = draw(_rng("lookup"), (6, 4))
    ids = np.array([[1], [5], [1]])

    def loss(table, i):
        return (lax.gather(table, i[None]) ** 2).sum()
    grads = ft.vmap(ft.grad(loss), in_axes=(None, 0))(table, ids)
    for b in range(3):
        want = np.zeros_like(table)
        want[ids[b, 0]] = 2 * table[ids[b, 0]]
        np.testing.assert_allclose(grads[b], want)


# ------------------------------------------------------------------------------------------
# Shared batch axes (batch_dims)
# ------------------------------------------------------------------------------------------


def test_shared_batch_axes_read_and_write_their_own_rows():
    rng = _rng("shared")
    x = draw(rng, (2, 3, 5, 4))
    i = rng.integers(-1, 6, (2, 3, 7, 1))
    got = lax.gather(x, i, batch_dims=2)
    want = np.stack([np.stack([_reference_gather(x[a, b], i[a, b]) for b in range(3)])
                     for a in range(2)])
    np.testing.assert_array_equal(got, want)
    u = draw(rng, (2, 3, 7, 4))
    got = lax.scatter_add(x, i, u, batch_dims=2)
    want = np.stack([np.stack([_reference_scatter_add(x[a, b], i[a, b], u[a, b])
                               for b in range(3)]) for a in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    # a transposed (not C-ordered) operand is written whole, not through a copy
    xc = x[:, :, :, 0].copy()
    got = lax.scatter(np.asfortranarray(xc), i, u[..., 0], batch_dims=2)
    np.testing.assert_array_equal(got, lax.scatter(xc, i, u[..., 0], batch_dims=2))
    assert not np.array_equal(got, xc)


def test_vmap_with_operand_and_positions_batched_adds_a_shared_axis():
    rng = _rng("shared-vmap")
    x, i = draw(rng, (3, 4, 2)), rng.integers(0, 4, (3, 5, 1))
    jaxpr = ft.make_jaxpr(ft.vmap(lax.gather))(x, i)
    (eqn,) = jaxpr.jaxpr.eqns
    assert eqn.params == {"batch_dims": 1}, eqn.params
    # and once more: two shared axes, against a double loop
    xx, ii = draw(rng, (2, 3, 4, 2)), rng.integers(0, 4, (2, 3, 5, 1))
    got = ft.vmap(ft.vmap(lax.gather))(xx, ii)
    want = np.stack([np.stack([lax.gather(xx[a, b], ii[a, b]) for b in range(3)])
                     for a in range(2)])
    np.testing.assert_array_equal(got, want)
    assert ft.make_jaxpr(ft.vmap(ft.vmap(lax.gather)))(xx, ii).jaxpr.eqns[0].params == {
        "batch_dims": 2}


def test_indexing_by_a_host_arange_shares_the_rows():
    rng = _rng("arange-rows")
    x, labels = draw(rng, (6, 3)), rng.integers(0, 3, 6)

    def pick(x):
        return x[np.arange(6), labels]
    (eqn,) = [e for e in ft.make_jaxpr(pick)(x).jaxpr.eqns if e.primitive.name == "gather"]
    assert eqn.params == {"batch_dims": 1}
    np.testing.assert_array_equal(pick(ft.numpy.asarray(x)), x[np.arange(6), labels])
    g = ft.grad(lambda x: (pick(x) ** 2).sum())(x)
    want = np.zeros_like(x)
    want[np.arange(6), labels] = 2 * x[np.arange(6), labels]
    np.testing.assert_allclose(g, want, rtol=1e-14)
    # not an arange (a permutation, a shifted one, a shorter one): the plain gather
    for rows in (np.arange(6)[::-1], np.arange(1, 7) % 6, np.arange(6)[:5]):
        def other(x, rows=rows):
            return x[rows, labels[:len(rows)]]
        (eqn,) = [e for e in ft.make_jaxpr(other)(x).jaxpr.eqns
                  if e.primitive.name == "gather"]
        assert eqn.params == {}, rows
        np.testing.assert_array_equal(other(ft.numpy.asarray(x)),
                                      x[rows, labels[:len(rows)]])
    # the rows' axis in another place, non-adjacent indices, broadcast index arrays
    y = draw(rng, (2, 3, 6, 4))
    for index in [(slice(None), labels, np.arange(6)),
                  (np.arange(2)[:, None], slice(None), labels[None, :]),
                  (1, labels, slice(None), np.arange(4)[:, None])]:
        np.testing.assert_array_equal(ft.jit(lambda y: y[index])(y), y[index])
        np.testing.assert_array_equal(ft.numpy.asarray(y)[index], y[index])


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------


def test_errors_name_the_problem():
    x = np.zeros((3, 2))
    with pytest.raises(TypeError, match="indices must be integers"):
        lax.gather(x, np.zeros((2, 1)))
    with pytest.raises(ValueError, match="has only 2 axes"):
        lax.gather(x, np.zeros((2, 3), int))
    with pytest.raises(ValueError, match="updates must have shape"):
        lax.scatter_add(x, np.zeros((4, 1), int), np.zeros((4, 3)))
    with pytest.raises(TypeError, match="dtype of the operand"):
        lax.scatter_add(x, np.zeros((4, 1), int), np.zeros((4, 2), np.float32))
    with pytest.raises(IndexError, match="size zero"):
        lax.gather(np.zeros((0, 2)), np.zeros((1, 1), int))
    with pytest.raises(ValueError, match="must share their first 1 axes"):
        lax.gather(x, np.zeros((2, 1), int), batch_dims=1)
    with pytest.raises(ValueError, match=r"scatter_add: batch_dims must be non-negative"):
        lax.scatter_add(x, np.zeros((4, 1), int), np.zeros((4, 2)), batch_dims=-1)
    with pytest.raises(TypeError, match="batch_dims must be a non-negative int"):
        lax.gather(x, np.zeros((3, 1), int), batch_dims=1.0)
    with pytest.raises(ValueError, match="after its 1 batch axes"):
        lax.gather(x, np.zeros((3, 2), int), batch_dims=1)


# ------------------------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice with batched starts: one gather / scatter-add
# ------------------------------------------------------------------------------------------

def test_dynamic_slices_count_negative_starts_from_the_end_as_jax():
    x = np.arange(10.0)
    for start, want in [(-2, [8., 9.]), (-11, [0., 1.]), (3, [3., 4.]), (9, [8., 9.])]:
        np.testing.assert_array_equal(lax.dynamic_slice(x, (start,), (2,)), want)
        np.testing.assert_array_equal(ft.jit(lambda i: lax.dynamic_slice(x, (i,), (2,)))(start),
                                      want)
    np.testing.assert_array_equal(ft.vmap(lambda i: lax.dynamic_slice(x, (i,), (2,)))(
        np.array([-2, 3])), [[8., 9.], [3., 4.]])
    np.testing.assert_array_equal(lax.dynamic_slice(x, (-2,), (2,), allow_negative_indices=False),
                                  [0., 1.])
    written = lax.dynamic_update_slice(x, -np.ones(2), (-3,))
    np.testing.assert_array_equal(written, np.r_[x[:7], -1., -1., x[9]])
    g = ft.grad(lambda x, i: lax.dynamic_slice(x, (i,), (2,)).sum())(x, -2)
    np.testing.assert_array_equal(g, np.r_[np.zeros(8), 1., 1.])


def test_lax_in_dim_helpers_match_numpy():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, -1, axis=2), x[:, :, 1:-1])
    np.testing.assert_array_equal(lax.slice_in_dim(x, 0, None, 2, axis=-1), x[..., ::2])
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, axis=1), x[:, -1:])
    np.testing.assert_array_equal(lax.index_in_dim(x, 0, keepdims=False), x[0])
    with pytest.raises(IndexError, match="index_in_dim: index 3 is out of bounds"):
        lax.index_in_dim(x, 3, axis=1)
    f = ft.jit(lambda i: lax.dynamic_slice_in_dim(x, i, 2, axis=2))
    np.testing.assert_array_equal(f(-2), x[..., 2:])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, -1, axis=1, keepdims=False),
                                  x[:, -1])
    np.testing.assert_array_equal(
        ft.vmap(lambda i: lax.dynamic_index_in_dim(x, i, axis=2))(np.array([0, 3])),
        np.stack([x[..., :1], x[..., 3:]]))
    u = -np.ones((2, 3, 1))
    want = x.copy()
    want[..., 1:2] = u
    np.testing.assert_array_equal(lax.dynamic_update_slice_in_dim(x, u, 1, axis=2), want)
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, u[..., 0], 1, axis=2),
                                  want)
    i, j = np.array([[1, 0]]), np.array([3, -9])  # clamped: -9 reads position 0
    np.testing.assert_array_equal(lax.index_take(x, (i, j), (0, 2)),
                                  np.moveaxis(x, 1, -1)[[[1, 0]], [3, 0]])
    # derivatives and vmap go through the primitives
    ft.testing.check_grads(lambda x: lax.dynamic_update_index_in_dim(
        x, x[..., 0] ** 2, -1, axis=2), (x,), order=2)
    ft.testing.check_grads(lambda x: lax.index_take(x, (i, j), (0, 2)), (x,), order=2)


DYNAMIC_AXES = [(None, 0, None), (0, 0, 0), (1, None, 0), (None, 0, 0)]


@pytest.mark.parametrize("in_axes", DYNAMIC_AXES, ids=str)
def test_dynamic_slice_with_batched_starts_matches_a_loop(in_axes):
    rng, size = _rng("dynamic-slice", in_axes), 4
    x, xs = _batched(rng, (5, 6), in_axes[0], size)
    starts = [np.array([-2, 1, 3, 9]) if a is not None else np.int64(2) for a in in_axes[1:]]

    def f(x, i, j):
        return lax.dynamic_slice(x, (i, j), (3, 2))
    got = ft.vmap(f, in_axes=in_axes)(x, *starts)
    want = np.stack([f(xs[b] if xs else x, *[s[b] if s.ndim else s for s in starts])
                     for b in range(size)])
    assert_close(got, want, what=f"vmap(dynamic_slice, {in_axes})")
    eqns = ft.make_jaxpr(ft.vmap(f, in_axes=in_axes))(x, *starts).jaxpr.eqns
    names = [e.primitive.name for e in eqns]
    assert names.count("gather") == 1 and "dynamic_slice" not in names, names


@pytest.mark.parametrize("in_axes", [(None, None, 0, None), (0, 0, 0, 0), (1, None, None, 0),
                                     (None, 0, 0, None)], ids=str)
def test_dynamic_update_slice_with_batched_starts_matches_a_loop(in_axes):
    rng, size = _rng("dynamic-update-slice", in_axes), 4
    x, xs = _batched(rng, (5, 6), in_axes[0], size)
    u, us = _batched(rng, (2, 3), in_axes[1], size)
    starts = [np.array([-2, 1, 4, 9]) if a is not None else np.int64(1) for a in in_axes[2:]]

    def f(x, u, i, j):
        return lax.dynamic_update_slice(x, u, (i, j))
    got = ft.vmap(f, in_axes=in_axes)(x, u, *starts)
    want = np.stack([f(xs[b] if xs else x, us[b] if us else u,
                       *[s[b] if s.ndim else s for s in starts]) for b in range(size)])
    assert_close(got, want, what=f"vmap(dynamic_update_slice, {in_axes})")
    names = [e.primitive.name for e in
             ft.make_jaxpr(ft.vmap(f, in_axes=in_axes))(x, u, *starts).jaxpr.eqns]
    assert "dynamic_update_slice" not in names, names

    def loss(x, u, i, j):
        return (f(x, u, i, j) ** 2).sum()
    g = ft.vmap(ft.grad(loss, argnums=(0, 1)), in_axes=in_axes)(x, u, *starts)
    for b in range(size):
        args = (xs[b] if xs else x, us[b] if us else u, *[s[b] if s.ndim else s for s in starts])
        want_b = ft.grad(loss, argnums=(0, 1))(*args)
        assert_close((g[0][b], g[1][b]), want_b, what="per-member gradient")


# ------------------------------------------------------------------------------------------
# x[index] on tracers: every form against NumPy's values, derivatives and vmap
# ------------------------------------------------------------------------------------------

INDEX_FORMS = {
    "one_array": (np.array([0, 2, -1, 2]),),
    "list": ([1, 0, 1],),
    "two_arrays_broadcast": (np.array([[0], [2]]), slice(None), np.array([1, -1, 3])),
    "adjacent_after_slice": (slice(1, 3), np.array([[0], [3]]), np.array([1, 4])),
    "separated_by_slice": (np.array([0, 1]), slice(None), 2),
    "separated_by_newaxis": (np.array([0, 2]), None, np.array([1, 2])),
    "int_then_array": (1, np.array([0, 2, 3])),
    "ellipsis": (Ellipsis, [0, 4, 4]),
    "reversed_slice_then_arrays": (None, [1], slice(None, None, -1), [[0, 1]]),
    "stepped_slice": (np.array([2, 0]), slice(None, None, 2), slice(1, None)),
    "concrete_mask": (np.array([True, False, True]),),
    "mask_inside": (slice(None), np.array([False, True, True, False])),
    "empty_array": (np.array([], int),),
    "zero_d_array": (np.array(-1), slice(None), np.array([0, 1])),
    # an Ellipsis standing for no axis still separates: the arrays' axes go first
    "ellipsis_of_no_axes_between_arrays": (slice(None), np.array([0, 2]), Ellipsis,
                                           np.array([1, 4])),
    "nested_list_mask": ([[True, False, False, True], [False] * 4, [True] * 4],),
    "tuple_as_array": ((0, 2), slice(None), [1, 3]),
    "scalar_true_with_array": (np.array([0, 2]), True),
    "scalar_false": (Ellipsis, False),
    "two_arrays_and_an_empty_slice": (np.array([0, 2]), 0, slice(1, 1)),
}


@pytest.mark.parametrize("form", sorted(INDEX_FORMS))
def test_advanced_index_forms_match_numpy(form):
    index = INDEX_FORMS[form]
    rng = _rng("getitem", form)
    x = draw(rng, (3, 4, 5))
    want = x[index]
    got = ft.jvp(lambda x: x[index], (x,), (x,))  # x is traced, the value and tangent as NumPy
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], want)
    ct = draw(rng, want.shape)
    _, pullback = ft.vjp(lambda x: x[index], x)
    expected = np.zeros_like(x)
    np.add.at(expected, index, ct)
    np.testing.assert_allclose(pullback(ct)[0], expected, rtol=1e-14)
    xs = draw(rng, (2, 3, 4, 5))
    np.testing.assert_array_equal(ft.vmap(lambda x: x[index])(xs), np.stack([v[index] for v in xs]))
    np.testing.assert_array_equal(ft.vmap(lambda x: x[index], in_axes=3, out_axes=0)(
        np.moveaxis(xs, 0, 3)), np.stack([v[index] for v in xs]))


def test_traced_integer_indices_under_vmap_match_numpy():
    rng = _rng("traced-indices")
    x = draw(rng, (4, 5))
    i = np.array([[0, -1], [3, 2], [1, 1]])
    j = np.array([4, -5, 0])
    got = ft.vmap(lambda i, j: ft.numpy.take(x, i, axis=0)[:, j])(i, j)
    np.testing.assert_array_equal(got, np.stack([x[i[b]][:, j[b]] for b in range(3)]))
    both = ft.vmap(lambda x, i, j: x[i, j])(np.stack([x, 2 * x, 3 * x]), i, j)
    np.testing.assert_array_equal(both, np.stack([(b + 1) * x[i[b], j[b]] for b in range(3)]))


def test_traced_loop_counter_indexes_inside_fori_loop_and_scan():
    x = draw(_rng("fori"), (5, 3))

    def through_fori(x):
        return lax.fori_loop(1, 4, lambda i, c: c + x[i] * x[-i], np.zeros(3)).sum()

    def through_scan(x):
        return lax.scan(lambda c, i: (c + x[i, ::-1] ** 2, None), np.zeros(3),
                        np.array([4, 0, 4]))[0].sum()
    want = sum(x[i] * x[-i] for i in range(1, 4)).sum()
    value, g = ft.value_and_grad(through_fori)(x)  # x traced: a NumPy x[i] refuses a tracer i
    np.testing.assert_allclose(value, want)
    expected = np.zeros_like(x)
    for i in range(1, 4):
        expected[i] += x[-i]
        expected[-i] += x[i]
    np.testing.assert_allclose(g, expected)
    np.testing.assert_allclose(ft.grad(through_scan)(x)[4], 4 * x[4])
    np.testing.assert_allclose(ft.grad(through_scan)(x)[0], 2 * x[0])


def test_traced_indices_out_of_bounds_are_clamped_or_filled_and_concrete_ones_raise():
    x = np.arange(5.0)
    # x[i] clamps (JAX's indexing); take reads the fill value (JAX's take: NaN for floats)
    got = ft.vmap(lambda i: ft.numpy.asarray(x)[i])(np.array([7, -9, 2]))
    np.testing.assert_array_equal(got, [4.0, 0.0, 2.0])
    got = ft.vmap(lambda i: ft.numpy.take(x, i))(np.array([7, -9, 2, -1]))
    np.testing.assert_array_equal(got, [np.nan, np.nan, 2.0, 4.0])
    got = ft.jit(lambda i: ft.numpy.take(np.arange(5), i))(np.array([7, 1]))
    np.testing.assert_array_equal(got, [np.iinfo(np.int64).min, 1])
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        ft.grad(lambda x: x[np.array([1, 7])].sum())(x)
    with pytest.raises(IndexError, match="integer type"):
        ft.grad(lambda x: x[np.array([1.0])].sum())(x)


def _random_index(rng, shape):
    """A random index tuple of NumPy's forms: ints, slices with steps, None, one Ellipsis,
    integer arrays (broadcasting), and boolean masks."""
    forms = [lambda n: slice(None), lambda n: slice(None, None, -1), lambda n: slice(1, None, 2),
             lambda n: int(rng.integers(-n, n)), lambda n: rng.integers(-n, n, size=2),
             lambda n: None, lambda n: Ellipsis, lambda n: rng.integers(0, n, size=(2, 1)),
             lambda n: rng.random(n) > 0.5, lambda n: [int(rng.integers(0, n))],
             lambda n: slice(1, 1), lambda n: Ellipsis]
    index, axis, ellipsis = [], 0, False
    for _ in range(int(rng.integers(1, 5))):
        entry = forms[int(rng.integers(len(forms)))](shape[min(axis, len(shape) - 1)])
        if entry is Ellipsis:
            if ellipsis:
                continue
            ellipsis = True
        index.append(entry)
        axis += entry is not None and entry is not Ellipsis
    return tuple(index)


def test_random_index_tuples_match_numpy():
    # x[index] under jit, and x.at[index].add (a scatter of NumPy's np.add.at), against
    # NumPy for random combinations of the index forms
    rng = _rng("random-index-tuples")
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    checked = 0
    while checked < 300:
        index = _random_index(rng, x.shape)
        try:
            want = x[index]
        except IndexError:
            continue  # not an index NumPy takes (too many indices, a mask too long, ...)
        checked += 1
        got = ft.jit(lambda x: x[index])(x)
        assert got.shape == want.shape and np.array_equal(got, want), index
        updated = x.copy()
        np.add.at(updated, index, 1.0)
        np.testing.assert_array_equal(ft.numpy.asarray(x).at[index].add(1.0), updated,
                                      err_msg=repr(index))


def test_boolean_masks_must_match_the_axes_they_index():
    x = np.arange(20.0).reshape(4, 5)
    for index in [np.array([True, False]), (slice(None), np.ones(6, bool)),
                  np.ones((4, 4), bool)]:
        with pytest.raises(IndexError, match="boolean index did not match"):
            x[index]  # NumPy's verdict, which the traced path and .at[] must share
        with pytest.raises(IndexError, match="boolean index did not match"):
            ft.jit(lambda x: x[index])(x)
        with pytest.raises(IndexError, match="boolean index did not match"):
            ft.numpy.asarray(x).at[index].set(0.0)


def test_index_arrays_that_do_not_broadcast_are_reported_as_numpy_does():
    x = np.zeros((3, 3))
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes "
                                         r"\(2,\) \(3,\)"):
        x[[0, 1], [0, 1, 2]]  # NumPy's verdict
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes "
                                         r"\(2,\) \(3,\)"):
        ft.jit(lambda x: x[[0, 1], [0, 1, 2]])(x)


def test_a_list_holding_a_tracer_is_an_index_array():
    x = draw(_rng("list-tracer"), (3, 4))
    np.testing.assert_array_equal(ft.jit(lambda x, i: x[:, [i, 1]])(x, 2), x[:, [2, 1]])
    arr = ft.numpy.asarray(x)  # an Array: its own __getitem__ sees the tracer in the list
    np.testing.assert_array_equal(ft.vmap(lambda i: arr[[i, 0]])(np.array([2, 1])),
                                  np.stack([x[[2, 0]], x[[1, 0]]]))


def test_traced_boolean_mask_points_to_where():
    with pytest.raises(TypeError, match="where"):
        ft.vmap(lambda x: x[x > 0])(np.ones((2, 3)))


def test_take_modes_and_errors():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ft.numpy.take(x, [[0, 5], [-1, 2]]),
                                  np.take(x, [[0, 5], [-1, 2]]))
    np.testing.assert_array_equal(ft.numpy.take(x, [-4, 9], axis=1, mode="clip"),
                                  np.take(x, [-4, 9], axis=1, mode="clip"))
    for mode in ["wrap", "clip", "fill"]:
        want = (np.take(x, [-4, 9, 1], axis=1, mode=mode) if mode != "fill" else
                np.array([[np.nan, np.nan, 1.0], [np.nan, np.nan, 4.0]]))
        np.testing.assert_array_equal(ft.numpy.take(x, [-4, 9, 1], axis=1, mode=mode), want)
        np.testing.assert_array_equal(
            ft.jit(lambda i: ft.numpy.take(x, i, axis=1, mode=mode))(np.array([-4, 9, 1])), want)
        np.testing.assert_array_equal(
            ft.numpy.take_along_axis(x, np.array([[-4, 9, 1]] * 2), axis=1, mode=mode), want)
    # -1 under "clip": take clamps it to 0 (NumPy's clip), take_along_axis counts it from
    # the end first (JAX's take_along_axis)
    np.testing.assert_array_equal(ft.numpy.take(x[0], [-1], mode="clip"), [0.0])
    np.testing.assert_array_equal(ft.numpy.take_along_axis(x[0], np.array([-1]), axis=0,
                                                           mode="clip"), [2.0])
    np.testing.assert_array_equal(ft.numpy.take(x, [9], mode="fill", fill_value=-1.0), [-1.0])
    with pytest.raises(IndexError, match="out of bounds"):
        ft.numpy.take(x, [9], mode="raise")
    with pytest.raises(NotImplementedError, match="mode='raise' cannot check traced"):
        ft.jit(lambda i: ft.numpy.take(x, i, mode="raise"))(np.array([1]))
    with pytest.raises(ValueError, match="mode='bogus' is not one of"):
        ft.numpy.take(x, [0], mode="bogus")
    with pytest.raises(NotImplementedError, match="out="):
        ft.numpy.take(x, [0], out=np.zeros(1))
    with pytest.raises(ValueError, match="as many axes"):
        ft.numpy.take_along_axis(x, np.array([0]), axis=1)
    # take_along_axis's axis defaults to the last, as JAX and NumPy
    np.testing.assert_array_equal(ft.numpy.take_along_axis(x, np.array([[2], [0]])),
                                  np.take_along_axis(x, np.array([[2], [0]]), axis=-1))
    # derivatives: the fill mode's transpose drops the cotangents of positions out of bounds
    g = ft.grad(lambda x: ft.numpy.sum(ft.numpy.take(x, np.array([0, 0, 7]), mode="fill")))
    np.testing.assert_array_equal(g(np.arange(5.0)), [2.0, 0.0, 0.0, 0.0, 0.0])
