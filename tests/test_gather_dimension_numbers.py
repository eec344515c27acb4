"""lax.gather and lax.scatter* in XLA's form (dimension numbers): against loops over the
index vectors (always), and against JAX 0.10.2 where it is installed (CI does not install
it): values, gradients and JVPs on the configurations jax.numpy's own indexing produces (``x[i]``,
``x[:, i]``, ``x[i, :, j]``, take_along_axis's batching dims, ``.at[...]`` updates) and on
windows wider than one element, in each mode, with starts out of bounds; and the errors for
bad dimension numbers.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans
from functrans import lax

from sweep import needs_jax, optional_jax

jax = optional_jax()
jlax, jnp = (jax.lax, jax.numpy) if jax is not None else (None, None)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5, 6))
ALONG = RNG.integers(-1, 7, size=(4, 2, 6, 1))  # take_along_axis-like, some out of bounds

# name -> (indices, GatherDimensionNumbers fields, slice_sizes) for an operand of X's shape
GATHERS = {
    "x[i]": (np.array([[0], [3], [7], [-2]]),
             dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)),
             (1, 5, 6)),
    "x[:, i]": (np.array([[1], [4], [5]]),
                dict(offset_dims=(0, 2), collapsed_slice_dims=(1,), start_index_map=(1,)),
                (4, 1, 6)),
    "x[i, :, j]": (np.array([[0, 1], [3, 5], [2, 6], [-1, 0]]),
                   dict(offset_dims=(1,), collapsed_slice_dims=(0, 2), start_index_map=(0, 2)),
                   (1, 5, 1)),
    "take_along_axis": (ALONG,
                        dict(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                             operand_batching_dims=(0, 2), start_indices_batching_dims=(0, 2)),
                        (1, 1, 1)),
    "windows": (np.array([[0, 0], [2, 2], [3, 1], [1, 4], [-1, 0]]),
                dict(offset_dims=(1, 2, 3), collapsed_slice_dims=(), start_index_map=(0, 1)),
                (2, 3, 6)),
    "map_reordered_2d_batch": (np.array([[[4, 0], [1, 3]], [[0, 2], [5, 1]]]),
                               dict(offset_dims=(2, 3), collapsed_slice_dims=(0,),
                                    start_index_map=(2, 0)),
                               (1, 5, 2)),
    "offset_between_batch": (np.array([[[1], [0], [3]], [[4], [2], [2]]]),
                             dict(offset_dims=(0, 3), collapsed_slice_dims=(1,),
                                  start_index_map=(1,)),
                             (4, 1, 2)),
}

# name -> (indices, ScatterDimensionNumbers fields, updates shape)
SCATTERS = {
    "x.at[:, i]": (np.array([[1], [4], [7]]),
                   dict(update_window_dims=(0, 2), inserted_window_dims=(1,),
                        scatter_dims_to_operand_dims=(1,)),
                   (4, 3, 6)),
    "x.at[i, :, j]": (np.array([[0, 1], [3, 5], [2, 6], [-1, 0]]),
                      dict(update_window_dims=(1,), inserted_window_dims=(0, 2),
                           scatter_dims_to_operand_dims=(0, 2)),
                      (4, 5)),
    "windows": (np.array([[0, 0], [2, 3], [3, 1], [-1, 0]]),
                dict(update_window_dims=(1, 2, 3), inserted_window_dims=(),
                     scatter_dims_to_operand_dims=(0, 1)),
                (4, 2, 2, 6)),
    "put_along_axis": (np.stack([RNG.permutation(5)[:2] for _ in range(24)]).reshape(
                           4, 6, 2).transpose(0, 2, 1)[..., None],
                       dict(update_window_dims=(), inserted_window_dims=(1,),
                            scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0, 2),
                            scatter_indices_batching_dims=(0, 2)),
                       (4, 2, 6)),
}

GATHER_MODES = [None, "clip", "fill"]
SCATTER_MODES = [None, "clip", "drop"]


def _in_bounds(indices, axes, window):
    """``indices`` clamped so that every window fits (the positions JAX promises)."""
    upper = np.array([X.shape[d] - window[d] for d in axes])
    return np.clip(indices, 0, upper)


def _window(fields, updates_shape):
    window = [1] * X.ndim
    kept = [d for d in range(X.ndim) if d not in fields["inserted_window_dims"]
            and d not in fields.get("operand_batching_dims", ())]
    for a, d in zip(fields["update_window_dims"], kept):
        window[d] = updates_shape[a]
    return window


def _loop_gather(x, indices, fields, sizes, mode):
    """XLA's gather by a loop over index vectors and slice positions."""
    offset_dims, collapsed = fields["offset_dims"], fields["collapsed_slice_dims"]
    start_map = fields["start_index_map"]
    op_batch = fields.get("operand_batching_dims", ())
    ix_batch = fields.get("start_indices_batching_dims", ())
    kept = [d for d in range(x.ndim) if d not in collapsed and d not in op_batch]
    batch_shape = indices.shape[:-1]
    out_rank = len(batch_shape) + len(offset_dims)
    batch_axes = [a for a in range(out_rank) if a not in offset_dims]
    out_shape = [0] * out_rank
    for a, n in zip(batch_axes, batch_shape):
        out_shape[a] = n
    for a, d in zip(offset_dims, kept):
        out_shape[a] = sizes[d]
    out = np.empty(out_shape)
    for pos in np.ndindex(*out_shape):
        b = tuple(pos[a] for a in batch_axes)
        start = [0] * x.ndim
        inside = True
        for k, d in enumerate(start_map):
            s, top = indices[b][k], x.shape[d] - sizes[d]
            inside &= 0 <= s <= top
            start[d] = min(max(s, 0), top) if mode != "fill" else s
        for a, c in zip(op_batch, ix_batch):
            start[a] = b[c]
        for a, d in zip(offset_dims, kept):
            start[d] += pos[a]
        out[pos] = x[tuple(start)] if inside or mode != "fill" else np.nan
    return out


@pytest.mark.parametrize("mode", [None, "fill"])
@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_matches_a_loop(name, mode):
    indices, fields, sizes = GATHERS[name]
    got = lax.gather(X, indices, lax.GatherDimensionNumbers(**fields), sizes, mode=mode)
    np.testing.assert_array_equal(got, _loop_gather(X, indices, fields, sizes, mode))


def test_scatter_add_matches_a_loop():
    indices, fields, shape = SCATTERS["windows"]  # windows (2, 2, 6) from starts (i, j)
    updates = RNG.standard_normal(shape)
    dn = lax.ScatterDimensionNumbers(**fields)
    for mode in (None, "clip"):
        expected = X.copy()
        for (i, j), u in zip(indices, updates):
            if mode == "clip":
                i, j = min(max(i, 0), 2), min(max(j, 0), 3)
            elif not (0 <= i <= 2 and 0 <= j <= 3):
                continue
            expected[i:i + 2, j:j + 2] += u
        np.testing.assert_allclose(lax.scatter_add(X, indices, updates, dn, mode=mode),
                                   expected, rtol=1e-14)
        np.testing.assert_allclose(lax.scatter_sub(X, indices, -updates, dn, mode=mode),
                                   expected, rtol=1e-14)


def _gather_pair(name):
    indices, fields, sizes = GATHERS[name]
    return (indices, lax.GatherDimensionNumbers(**fields),
            jlax.GatherDimensionNumbers(**fields), sizes)


@needs_jax
@pytest.mark.parametrize("mode", GATHER_MODES + ["promise_in_bounds"])
@pytest.mark.parametrize("name", list(GATHERS))
def test_gather_values_and_gradients_match_jax(name, mode):
    indices, ours, theirs, sizes = _gather_pair(name)
    expected = jlax.gather(X, indices, theirs, sizes, mode=mode)
    got = lax.gather(X, indices, ours, sizes, mode=mode)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
    if mode in (None, "promise_in_bounds"):
        # a broken promise: JAX's values clamp (as ours) but its transpose, a scatter-add
        # in the same mode, drops what was out of bounds; compare where the promise holds
        indices = _in_bounds(indices, GATHERS[name][1]["start_index_map"], sizes)
    weights = RNG.standard_normal(expected.shape)

    def loss(f, dn, lib):
        return lambda x: lib.sum(lib.where(lib.isnan(f(x, indices, dn, sizes, mode=mode)), 0.0,
                                           f(x, indices, dn, sizes, mode=mode)) * weights)
    np.testing.assert_allclose(functrans.grad(loss(lax.gather, ours, functrans.numpy))(X),
                               jax.grad(loss(jlax.gather, theirs, jnp))(X), rtol=1e-12)
    tangent = RNG.standard_normal(X.shape)
    _, jt = jax.jvp(lambda x: jlax.gather(x, indices, theirs, sizes, mode=mode, fill_value=0.0),
                    (X,), (tangent,))
    _, ft = functrans.jvp(lambda x: lax.gather(x, indices, ours, sizes, mode=mode,
                                               fill_value=0.0), (X,), (tangent,))
    np.testing.assert_allclose(ft, jt, rtol=1e-12)


@needs_jax
def test_gather_fill_value_and_integer_defaults():
    indices, ours, theirs, sizes = _gather_pair("windows")
    xi = np.arange(120, dtype=np.int32).reshape(4, 5, 6)
    for fill in (None, -7):
        np.testing.assert_array_equal(
            lax.gather(xi, indices, ours, sizes, mode="fill", fill_value=fill),
            jlax.gather(xi, indices, theirs, sizes, mode="fill", fill_value=fill))
    assert lax.gather(xi, indices, ours, sizes, mode=lax.GatherScatterMode.FILL_OR_DROP).min() \
        == np.iinfo(np.int32).min


def _scatter_pair(name):
    indices, fields, shape = SCATTERS[name]
    return (indices, lax.ScatterDimensionNumbers(**fields),
            jlax.ScatterDimensionNumbers(**fields), RNG.standard_normal(shape))


SCATTER_OPS = ["scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
               "scatter"]


# every mode for scatter_add; the default (drop) and clip for the others (they share the
# translation and differ in their derivative rules)
OP_MODES = ([("scatter_add", m) for m in SCATTER_MODES + ["promise_in_bounds"]]
            + [(op, m) for op in SCATTER_OPS[1:] for m in (None, "clip")])


@needs_jax
@pytest.mark.parametrize("name", list(SCATTERS))
@pytest.mark.parametrize("op, mode", OP_MODES)
def test_scatter_values_and_gradients_match_jax(op, name, mode):
    indices, ours, theirs, updates = _scatter_pair(name)
    if mode == "promise_in_bounds":
        fields = SCATTERS[name][1]
        indices = _in_bounds(indices, fields["scatter_dims_to_operand_dims"],
                             _window(fields, updates.shape))
    unique = name in ("x.at[i, :, j]", "put_along_axis") and mode != "clip"
    if op in ("scatter", "scatter_mul") and not unique:
        pytest.skip("repeated positions: JAX leaves the winner unspecified (scatter) or "
                    "has no updates' derivative (scatter_mul without unique_indices)")
    ours_f, theirs_f = getattr(lax, op), getattr(jlax, op)
    kwargs = dict(mode=mode, unique_indices=unique)
    expected = theirs_f(X, indices, updates, theirs, **kwargs)
    got = ours_f(X, indices, updates, ours, **kwargs)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    weights = RNG.standard_normal(X.shape)

    def loss(f, dn, lib, indices):
        return lambda x, u: lib.sum(f(x, indices, u, dn, **kwargs) * weights)
    got = functrans.grad(loss(ours_f, ours, functrans.numpy, indices), argnums=(0, 1))(
        X, updates)
    if mode == "clip" and op in ("scatter_min", "scatter_max"):
        # JAX's derivative of these clamps in its gathers but drops in its scatter-adds;
        # the same function with the starts clamped beforehand has JAX's derivative right
        fields = SCATTERS[name][1]
        indices = _in_bounds(indices, fields["scatter_dims_to_operand_dims"],
                             _window(fields, updates.shape))
    expected = jax.grad(loss(theirs_f, theirs, jnp, indices), argnums=(0, 1))(X, updates)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@needs_jax
def test_scatter_apply_matches_jax():
    indices, ours, theirs, updates = _scatter_pair("windows")
    for mode in SCATTER_MODES:
        np.testing.assert_allclose(
            lax.scatter_apply(X, indices, lambda v: v * 2 + 1, ours,
                              update_shape=updates.shape, mode=mode),
            jlax.scatter_apply(X, indices, lambda v: v * 2 + 1, theirs,
                               update_shape=updates.shape, mode=mode), rtol=1e-12)
    # traced indices: as many rounds as windows, each applied where one still reaches
    traced = functrans.jit(lambda x, i: lax.scatter_apply(x, i, lambda v: v * 2 + 1, ours,
                                                          update_shape=updates.shape))
    np.testing.assert_allclose(traced(X, indices),
                               jlax.scatter_apply(X, indices, lambda v: v * 2 + 1, theirs,
                                                  update_shape=updates.shape), rtol=1e-12)


@needs_jax
def test_vmap_over_indices_and_operand():
    indices, ours, theirs, sizes = _gather_pair("x[i, :, j]")
    stacked = np.stack([indices, indices[::-1]])
    xs = np.stack([X, 2 * X])
    for in_axes in ((None, 0), (0, 0), (0, None)):
        i = stacked if in_axes[1] == 0 else indices
        x = xs if in_axes[0] == 0 else X
        np.testing.assert_allclose(
            functrans.vmap(lambda x, i: lax.gather(x, i, ours, sizes, mode="fill"),
                           in_axes)(x, i),
            jax.vmap(lambda x, i: jlax.gather(x, i, theirs, sizes, mode="fill"),
                     in_axes)(x, i), rtol=1e-12, equal_nan=True)


@pytest.mark.parametrize("fields, sizes, match", [
    (dict(offset_dims=(2, 1), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 5, 6),
     "offset_dims=.* must be sorted"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 5),
     "slice_sizes=.* one size per operand axis"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)), (2, 5, 6),
     r"slice_sizes\[0\] must be 1 .*collapsed_slice_dims"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 9, 6),
     r"slice_sizes\[1\]=9 must be between 0 and"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0, 1)), (1, 5, 6),
     "holds 1 start positions, but dimension_numbers.start_index_map names 2"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(3,), start_index_map=(0,)), (1, 5, 6),
     "collapsed_slice_dims=.* must be axes of the operand"),
    (dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 5, 6),
     "offset_dims=.* one result axis for each"),
    (dict(offset_dims=(1, 2), collapsed_slice_dims=(0,), start_index_map=(0,),
          operand_batching_dims=(1,), start_indices_batching_dims=(0,)), (1, 1, 6),
     "operand axis 1 .* must have equal sizes"),
])
def test_gather_errors_name_the_field(fields, sizes, match):
    with pytest.raises((ValueError, TypeError), match="gather: .*" + match):
        lax.gather(X, np.array([[1], [2]]), lax.GatherDimensionNumbers(**fields), sizes)


def test_scatter_errors_name_the_field():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(0, 2), inserted_window_dims=(1,),
                                     scatter_dims_to_operand_dims=(1,))
    with pytest.raises(ValueError, match="scatter_add: the updates' axes outside "):
        lax.scatter_add(X, np.array([[1], [2]]), np.ones((4, 3, 6)), dn)
    bad = dn._replace(inserted_window_dims=(1, 1))
    with pytest.raises(ValueError, match=r"scatter: dimension_numbers.inserted_window_dims="
                                         r"\(1, 1\) repeats an axis"):
        lax.scatter(X, np.array([[1], [2]]), np.ones((4, 2, 6)), bad)
    with pytest.raises(TypeError, match="scatter_max: updates .* dtype of the operand"):
        lax.scatter_max(X, np.array([[1], [2]]), np.ones((4, 2, 6), np.float32), dn)
    with pytest.raises(TypeError, match="gather: indices must be integers"):
        lax.gather(X, np.array([[1.0]]), lax.GatherDimensionNumbers((1, 2), (0,), (0,)),
                   (1, 5, 6))
    with pytest.raises(TypeError, match="gather: with dimension_numbers, slice_sizes"):
        lax.gather(X, np.array([[1]]), lax.GatherDimensionNumbers((1, 2), (0,), (0,)))


@needs_jax
def test_jax_dimension_numbers_are_accepted():
    # code that builds jax.lax's own NamedTuples and passes them here
    indices, ours, theirs, sizes = _gather_pair("x[:, i]")
    np.testing.assert_allclose(lax.gather(X, indices, theirs, sizes),
                               jlax.gather(X, indices, theirs, sizes), rtol=1e-12)
