"""functrans on dask arrays: the registration of ``dask.array`` as a lazy backend, where
dask differs from NumPy (creation, chunks, scatters, cumulative ops, special functions, the
chunked fallback), bad input, and the primitive and functrans.numpy sweeps on dask arrays.

Every check counts dask computes with a scheduler callback: transforms and evaluation
build graphs and compute nothing; one compute afterwards gives NumPy's answer.
"""
from __future__ import annotations

import math
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.callbacks import Callback  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import backend  # noqa: E402


class Computes(Callback):
    """Counts the dask computes started inside the ``with`` block."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def _start(self, dsk):
        self.count += 1


def compute(x):
    """One compute of every dask array in the pytree ``x`` (NumPy values pass through)."""
    return dask.compute(x)[0]


# ------------------------------------------------------------------------------------------
# Registration
# ------------------------------------------------------------------------------------------


def test_importing_functrans_does_not_import_dask():
    code = "import functrans, functrans.numpy, sys; print('dask' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_dask_arrays_are_a_lazy_library():
    x = da.ones((4, 3), chunks=2)
    library = backend.library_of(x)
    assert library.xp is da and library.lazy and not library.has_ufunc_methods
    assert backend.array_module(x) is da and backend.array_module(np.ones(2), x) is da
    assert backend.is_array(x) and backend.is_device_array(x) and not backend.is_mutable(x)
    assert backend.memory_owner(x) is x and backend.owned([x], [x])[0] is not None
    np.testing.assert_array_equal(backend.to_host(x), np.ones((4, 3)))
    with pytest.raises(TypeError, match="immutable task graphs"):
        backend.scatter_apply("add", x, (np.array([0]),), da.ones((1, 3)))


def loss(w, X, y):
    return fnp.mean((fnp.tanh(X @ w) - y) ** 2)


@pytest.fixture
def regression():
    rng = np.random.default_rng(0)
    Xn, yn, wn = rng.standard_normal((64, 5)), rng.standard_normal(64), rng.standard_normal(5)
    return (wn, Xn, yn), (da.from_array(wn), da.from_array(Xn, chunks=(16, 5)),
                          da.from_array(yn, chunks=16))


TRANSFORMS = {
    "grad": lambda w, X, y: ft.grad(loss)(w, X, y),
    "grad_wrt_data": lambda w, X, y: ft.grad(loss, argnums=(0, 1, 2))(w, X, y),
    "value_and_grad": lambda w, X, y: ft.value_and_grad(loss)(w, X, y),
    "jvp": lambda w, X, y: ft.jvp(lambda w: loss(w, X, y), (w,), (w * 0.5,)),
    "vjp": lambda w, X, y: ft.vjp(lambda w: loss(w, X, y), w)[1](1.5),
    "vmap_grad": lambda w, X, y: ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))(
        w, X[:, None, :], y[:, None]),
    "jit_grad": lambda w, X, y: ft.jit(ft.grad(loss))(w, X, y),
    "hessian_vector": lambda w, X, y: ft.jvp(ft.grad(lambda w: loss(w, X, y)), (w,), (w,))[1],
    "eager": lambda w, X, y: fnp.tanh(X @ w) - y,
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_stay_lazy_and_match_numpy(regression, name):
    host, lazy = regression
    with Computes() as c:
        got = TRANSFORMS[name](*lazy)
    assert c.count == 0
    leaves = ft.tree_util.tree_leaves(got)
    assert leaves and all(type(v) is da.Array for v in leaves), [type(v) for v in leaves]
    want = TRANSFORMS[name](*host)
    for g, w in zip(ft.tree_util.tree_leaves(compute(got)), ft.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------
# Bad input: a clear error naming the operation and the array, and nothing computed
# ------------------------------------------------------------------------------------------


def test_mixing_dask_and_a_device_array_is_refused():
    import cupy_standin as standin
    x = da.ones((6, 3), chunks=2)
    c = standin.asarray(np.ones((6, 3)))
    with Computes() as counted:
        with pytest.raises(backend.MixedArrayLibrariesError, match=r"^mul: .*dask.*shape "
                           r"\(6, 3\).*standin.*shape \(6, 3\)"):
            fnp.multiply(x, c)
        with pytest.raises(backend.MixedArrayLibrariesError, match="dask.*standin"):
            ft.grad(lambda a, b: fnp.sum(a * b))(x, c)
    assert counted.count == 0


def test_unknown_chunk_sizes_where_a_shape_is_needed():
    x = da.arange(12.0, chunks=4).reshape(6, 2)
    y = x[x[:, 0] > 3]  # data-dependent: chunks of unknown size
    with Computes() as counted:
        with pytest.raises(backend.UnknownChunkSizesError,
                           match=r"^grad: argument: .*shape \(nan, 2\).*compute_chunk_sizes"):
            ft.grad(lambda a: fnp.sum(a ** 2))(y)
        with pytest.raises(backend.UnknownChunkSizesError, match=r"^sort: .*\(nan, 2\)"):
            fnp.sort(y, axis=0)
    assert counted.count == 0


def test_a_sort_along_a_chunked_axis_gathers_it_under_the_size_limit():
    rng = np.random.default_rng(1)
    host = rng.standard_normal((40, 3))
    x = da.from_array(host, chunks=(10, 3))
    with Computes() as counted:
        out = fnp.sort(x, axis=0)
        along_rows = fnp.sort(x, axis=1)
    assert counted.count == 0
    assert out.chunks == ((40,), (3,)) and along_rows.chunks == x.chunks
    np.testing.assert_array_equal(out.compute(), np.sort(host, axis=0))
    np.testing.assert_array_equal(along_rows.compute(), np.sort(host, axis=1))


def test_a_distributed_sort_along_a_chunked_axis_beyond_the_limit_is_refused():
    x = da.zeros((4000, 100), chunks=(500, 100))
    with Computes() as counted, dask.config.set({"array.chunk-size": "1MiB"}):
        with pytest.raises(backend.ChunkedAxisError, match=(
                r"^sort: axis 0 of the dask array of shape \(4000, 100\) \(chunks \(\(500, "
                r".*has 8 chunks.*3200000 bytes.*1048576 bytes.*rechunk")):
            fnp.sort(x, axis=0)
        with pytest.raises(backend.ChunkedAxisError, match="^eigh: axis 0"):
            fnp.linalg.eigh(da.eye(2000, chunks=500))
        fnp.sort(x, axis=1)  # along the one-chunk axis: chunk by chunk, no gathering
        key = da.from_array(np.asarray(ft.random.PRNGKey(0)))
        with pytest.raises(backend.ChunkedAxisError, match=(
                r"^random_shuffle: its result of shape \(200000,\) \(int64\) is computed "
                r"whole.*1600000 bytes.*1048576 bytes")):
            ft.random.permutation(key, 200_000)  # drawn whole: refused before drawing
        drawn = ft.random.permutation(key, 1000)
    assert counted.count == 0
    np.testing.assert_array_equal(drawn.compute(),
                                  ft.random.permutation(ft.random.PRNGKey(0), 1000))


# ------------------------------------------------------------------------------------------
# Where dask differs from NumPy
# ------------------------------------------------------------------------------------------


def test_creation_is_by_keyword_and_follows_the_operands_chunks():
    like = da.ones((6, 4), chunks=(3, 4))
    for make in (lambda: backend.zeros((6, 4), np.int64, like=like),
                 lambda: backend.ones((6, 4), np.int32, like=like),
                 lambda: backend.full((6, 4), 3, np.int64, like=like),
                 lambda: backend.empty((6, 4), np.int16, like=like)):
        out = make()
        assert type(out) is da.Array and out.chunks == like.chunks and out.dtype != np.float64
    other = backend.zeros((5,), np.int64, like=like)
    assert other.dtype == np.int64 and other.shape == (5,)
    # along an axis of another size: as finely as like splits it, else dask's "auto"
    longer = backend.zeros((20, 4), like=like)
    assert longer.chunks == ((3,) * 6 + (2,), (4,))
    assert backend.zeros((20, 4), like=da.ones((6, 4), chunks=(6, 2))).chunks == ((20,), (2, 2))
    eye = backend.eye(3, 5, 1, np.int64, like=like)
    np.testing.assert_array_equal(eye.compute(), np.eye(3, 5, 1, dtype=np.int64))
    tri = backend.tri(4, 2, -1, np.int8, like=like)
    np.testing.assert_array_equal(tri.compute(), np.tri(4, 2, -1, dtype=np.int8))
    assert backend.arange(5, dtype=np.int32, like=like).dtype == np.int32


def test_copies_are_new_graphs_and_special_functions_stay_lazy():
    x = da.from_array(np.linspace(0.1, 2.0, 12), chunks=4)
    y = backend.copy(x)
    y[0] = 100.0
    assert float(x[0].compute()) == pytest.approx(0.1)
    special = backend.special_module(x)
    with Computes() as counted:
        g = special.gammaln(x)
        si, ci = special.sici(x)
    assert counted.count == 0 and type(g) is da.Array and g.chunks == x.chunks
    import scipy.special
    np.testing.assert_allclose(g.compute(), scipy.special.gammaln(x.compute()))
    np.testing.assert_allclose(ci.compute(), scipy.special.sici(x.compute())[1])


@pytest.mark.parametrize("name", ["cumulative_max", "cumulative_min"])
def test_cumulative_extrema_are_dask_cumulative_reductions(name):
    host = np.random.default_rng(2).integers(-9, 9, (12, 5))
    x = da.from_array(host, chunks=(4, 2))
    for axis in (0, 1):
        with Computes() as counted:
            out = getattr(backend, name)(x, axis)
        assert counted.count == 0 and out.chunks == x.chunks
        ufunc = np.maximum if name == "cumulative_max" else np.minimum
        np.testing.assert_array_equal(out.compute(), ufunc.accumulate(host, axis))


def test_core_axes_table_batches_over_the_other_axes():
    from functrans.primitives import chunked
    host = np.random.default_rng(3).standard_normal((8, 4, 4))
    spd = host @ host.transpose(0, 2, 1) + 4 * np.eye(4)
    x = da.from_array(spd, chunks=(2, 4, 2))  # a batch of matrices, a core axis split
    with Computes() as counted:
        w, v = fnp.linalg.eigh(x)
        chol = fnp.linalg.cholesky(x)
    assert counted.count == 0
    assert w.chunks == ((2, 2, 2, 2), (4,)) and v.chunks == ((2, 2, 2, 2), (4,), (4,))
    np.testing.assert_allclose(w.compute(), np.linalg.eigh(spd)[0], atol=1e-12)
    np.testing.assert_allclose(chol.compute(), np.linalg.cholesky(spd), atol=1e-12)
    doc = (pathlib.Path(__file__).parent.parent / "docs" / "dask.md").read_text()
    missing = [p.name for p in chunked.CORE_AXES if f"`{p.name}`" not in doc]
    assert not missing, f"docs/dask.md's fallback table lacks {missing}"


def test_indexing_by_host_positions_is_dasks_own_and_its_transpose_is_per_chunk():
    host = np.random.default_rng(4).standard_normal((12, 3))
    x = da.from_array(host, chunks=(4, 3))
    idx = np.array([0, 5, 11, 5])

    def f(x):
        return fnp.sum(fnp.take(x, idx, axis=0) ** 2)
    with Computes() as counted:
        picked = fnp.take(x, idx, axis=0)  # dask's own indexing: no gathering of x
        g = ft.grad(f)(x)  # a scatter-add chunk by chunk
    assert counted.count == 0
    assert picked.chunks[1] == (3,) and len(picked.chunks[0]) >= 1
    np.testing.assert_array_equal(picked.compute(), host[idx])
    np.testing.assert_allclose(g.compute(), ft.grad(f)(host), atol=1e-12)


# ------------------------------------------------------------------------------------------
# Positions in chunked axes: gathers and scatters chunk by chunk (chunked.PER_CHUNK)
# ------------------------------------------------------------------------------------------


class TaskSizes(Callback):
    """The number of tasks run inside the ``with`` block and the largest array one of them
    gives (a broadcast view counts as its base; the final concatenation is not counted)."""

    def __init__(self):
        super().__init__()
        self.tasks = self.largest = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        self.tasks += 1
        if not str(key).startswith("finalize"):
            owned = getattr(result, "base", None) if 0 in getattr(result, "strides", ()) \
                else result
            self.largest = max(self.largest, getattr(owned, "nbytes", 0))


def gathered(*arrays) -> list:
    """The layers of the graphs of ``arrays`` that gather core axes into one chunk
    (``backend.map_chunked``'s tasks)."""
    return [name for a in arrays for name in a.dask.layers if name.startswith("block-")]


@pytest.mark.parametrize("shape, chunks, axes", [
    ((8, 1), (2, 1), (1,)), ((4, 4, 1), (2, 2, 1), (2,)), ((1, 6, 1, 3), (1, 2, 1, 3), (0, 2)),
    ((1, 1), (1, 1), (0, 1))], ids=str)
def test_lazy_squeeze_is_a_view_that_fuses(shape, chunks, axes):
    host = np.arange(float(np.prod(shape))).reshape(shape)
    x = da.from_array(host, chunks=chunks)
    got = backend.lazy_squeeze(x * 2.0, axes) + 1.0
    np.testing.assert_array_equal(got.compute(), np.squeeze(host * 2.0, axes) + 1.0)
    if len(axes) < len(shape):  # one task per chunk, the squeeze fused in (dask >= 2024.12)
        optimized = dask.optimize(got)[0].__dask_graph__()
        fused = backend._broadcasts_one_block() or any(x.numblocks[d] == 1 for d in range(
            len(shape)) if d not in axes)
        assert not fused or len(optimized) == 2 * x.npartitions, dict(optimized).keys()


def embedding_loss(table, idx):
    return fnp.sum(table[idx] ** 2)


def test_the_gradient_of_a_lookup_scatters_per_chunk_of_the_table():
    rng = np.random.default_rng(5)
    host, host_idx = rng.standard_normal((10 ** 5, 8)), rng.integers(0, 10 ** 5, 20_000)
    table = da.from_array(host, chunks=(10 ** 4, 8))  # 10 chunks of 640 kB
    idx = da.from_array(host_idx, chunks=5_000)  # lazy positions, 4 chunks
    with Computes() as counted:
        g = ft.grad(embedding_loss)(table, idx)
        looked_up = table[idx]
    assert counted.count == 0 and not gathered(g, looked_up)
    assert looked_up.chunks == ((5_000,) * 4, (8,))
    assert max(g.chunks[0]) < host.shape[0]
    with TaskSizes() as sizes:
        got = g.compute()
    # no task holds the whole table: the largest result is one chunk of the gradient
    assert sizes.largest <= 5_000 * 8 * 8 < host.nbytes, sizes.largest  # 320 kB < 6.4 MB
    want = np.zeros_like(host)
    np.add.at(want, host_idx, 2 * host[host_idx])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    with TaskSizes() as sizes:
        np.testing.assert_array_equal(looked_up.compute(), host[host_idx])
    assert sizes.largest <= 5_000 * 8 * 8, sizes.largest


def test_per_example_gradients_of_an_embedding_stay_chunked():
    rng = np.random.default_rng(6)
    host = rng.standard_normal((400, 4))
    host_idx, host_y = rng.integers(0, 400, (6, 5)), rng.standard_normal(6)
    table = da.from_array(host, chunks=(100, 4))
    idx, y = da.from_array(host_idx, chunks=(3, 5)), da.from_array(host_y, chunks=3)

    def loss(table, idx, y):  # one example: the mean of its looked-up rows against y
        return (fnp.mean(table[idx]) - y) ** 2

    def batch_loss(table, idx, y):
        return fnp.mean(ft.vmap(loss, in_axes=(None, 0, 0))(table, idx, y))
    per_example = ft.vmap(ft.grad(loss), in_axes=(None, 0, 0))
    with Computes() as counted:
        g = ft.grad(batch_loss)(table, idx, y)
        each = per_example(table, idx, y)
    assert counted.count == 0 and not gathered(g)
    # each example's gradient (one row of `each`) is scattered in the task of its chunk of
    # examples alone: the examples keep their chunks
    assert each.shape == (6, 400, 4) and each.chunks[0] == (3, 3)
    got_g, got_each = compute([g, each])
    np.testing.assert_allclose(got_g, ft.grad(batch_loss)(host, host_idx, host_y),
                               rtol=1e-12, atol=1e-12)
    loop = np.stack([ft.grad(loss)(host, host_idx[b], host_y[b]) for b in range(6)])
    np.testing.assert_allclose(got_each, loop, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_g, loop.mean(0), rtol=1e-12, atol=1e-12)


class TaskBytes(Callback):
    """The bytes of all the arrays the tasks run inside the ``with`` block give (tuples of
    arrays counted by their items)."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        parts = result if type(result) is tuple else (result,)
        self.total += sum(getattr(p, "nbytes", 0) for p in parts)


@pytest.mark.parametrize("name", ["scatter_add", "scatter_max"])
def test_scatter_partials_are_as_small_as_what_they_hold(name):
    """Every pair of an updates chunk and an operand chunk is a partial, but one holds only
    the updates that land in its operand chunk: updates at each row's own number (the
    gradient of ``logp[arange(N), labels]``) land in one chunk each, and the tasks in all
    make a few times the operand's bytes, not a copy of it per chunk of updates."""
    rng = np.random.default_rng(9)
    chunks, rows = 20, 500
    n = chunks * rows
    labels = rng.integers(0, 3, n)
    positions = np.stack([np.arange(n), labels], axis=1)
    updates, operand = rng.standard_normal(n), rng.standard_normal((n, 3))
    fun = getattr(ft.lax, name)
    got = fun(da.from_array(operand, chunks=(rows, 3)), da.from_array(positions, chunks=rows),
              da.from_array(updates, chunks=rows))
    with TaskBytes() as produced:
        values = got.compute()
    np.testing.assert_allclose(values, fun(operand, positions, updates), rtol=1e-14)
    assert produced.total < 6 * operand.nbytes, (produced.total, operand.nbytes)


SCATTERS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


@pytest.mark.parametrize("mode", [None, "drop"])
@pytest.mark.parametrize("name", SCATTERS)
def test_scatters_on_chunked_operands_match_numpy(name, mode):
    rng = np.random.default_rng(7)
    fun = getattr(ft.lax, name)
    operand = rng.standard_normal((30, 4))
    positions = rng.integers(-3, 33, (5, 6, 1))  # repeats, and out of bounds both sides
    updates = rng.standard_normal((5, 6, 4))
    # every axis split, and unevenly: operand, positions and updates each their own way
    lazy = (da.from_array(operand, chunks=(7, 3)), da.from_array(positions, chunks=(2, 4, 1)),
            da.from_array(updates, chunks=(3, 2, 2)))
    cube = rng.integers(-9, 9, (6, 5, 4)).astype(np.int32)  # two positions per update
    pairs, rows = rng.integers(0, 6, (9, 2)), rng.integers(-9, 9, (9, 4)).astype(np.int32)
    with Computes() as counted:
        got = fun(*lazy, mode=mode)
        got_cube = fun(da.from_array(cube, chunks=(4, 2, 3)), da.from_array(pairs, chunks=4),
                       rows, mode=mode)
    assert counted.count == 0 and got.chunks == lazy[0].chunks and not gathered(got, got_cube)
    np.testing.assert_allclose(got.compute(), fun(operand, positions, updates, mode=mode),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got_cube.compute(), fun(cube, pairs, rows, mode=mode))


@pytest.mark.parametrize("mode", [None, "fill"])
def test_gathers_by_lazy_positions_read_each_chunk_once(mode):
    rng = np.random.default_rng(8)
    operand, positions = rng.standard_normal((6, 5, 4)), rng.integers(-2, 8, (3, 3, 2))
    lazy = da.from_array(operand, chunks=(4, 2, 3))
    with Computes() as counted:
        got = ft.lax.gather(lazy, da.from_array(positions, chunks=(2, 2, 1)), mode=mode)
    assert counted.count == 0 and got.chunks == ((2, 1), (2, 1), (3, 1)) and not gathered(got)
    np.testing.assert_array_equal(got.compute(), ft.lax.gather(operand, positions, mode=mode))


@pytest.mark.parametrize("operand_chunks", [(2, 7, 3), (2, 3, 3), (4, 7, 2)], ids=str)
@pytest.mark.parametrize("name", ["gather", "scatter_add", "scatter", "scatter_max"])
def test_shared_batch_axes_on_dask_match_numpy(name, operand_chunks):
    """Gathers and scatters with a shared batch axis: one task per chunk of it where the
    indexed axis is one chunk (first case), else the pairs of the same shared rows only
    (second: the indexed axis split); the positions and updates chunked otherwise than
    the operand along the shared axis, and along the rest (third)."""
    rng = np.random.default_rng(21)
    operand = rng.standard_normal((6, 7, 3))
    indices = rng.integers(-2, 9, (6, 5, 1))  # some out of bounds: clamped or dropped
    updates = rng.standard_normal((6, 5, 3))
    lazy = [da.from_array(operand, chunks=operand_chunks),
            da.from_array(indices, chunks=(3, 5, 1)), da.from_array(updates, chunks=(3, 5, 1))]
    mode = "drop" if name == "scatter_max" else None
    fun = getattr(ft.lax, name)
    args, host = (lazy[:2], (operand, indices)) if name == "gather" else (lazy, (
        operand, indices, updates))
    with Computes() as counted:
        got = fun(*args, batch_dims=1, mode=mode)
    assert counted.count == 0 and not gathered(got)
    if operand_chunks[1] == 7:  # the indexed axis one chunk: one task per result chunk
        assert len(got.dask.layers[got.name]) == math.prod(got.numblocks)
    pairs = [k for k in got.__dask_graph__() if type(k) is tuple and k[0].endswith((
        "-partial", "-step"))]
    if name != "scatter" and operand_chunks[1] != 7:
        # pairs of the same shared rows only: each operand block meets the one block of
        # positions of its rows (a pair with every block of positions: 3 times as many)
        assert len(pairs) == lazy[0].npartitions, (len(pairs), lazy[0].numblocks)
    else:  # (a last-write scatter's chain is one step per operand block: no step keys)
        assert not pairs, pairs
    np.testing.assert_array_equal(got.compute(), fun(*host, batch_dims=1, mode=mode))


def test_take_along_axis_and_its_gradient_by_lazy_positions():
    rng = np.random.default_rng(10)
    x, positions = rng.standard_normal((40, 30)), rng.integers(0, 30, (40, 7))
    lazy = da.from_array(x, chunks=(10, 10)), da.from_array(positions, chunks=(20, 7))

    def f(x, i):
        return fnp.sum(fnp.take_along_axis(x, i, axis=1) ** 3)
    with Computes() as counted:
        taken = fnp.take_along_axis(*lazy, axis=1)
        g = ft.grad(f)(*lazy)
    assert counted.count == 0 and not gathered(taken, g)
    np.testing.assert_array_equal(taken.compute(), np.take_along_axis(x, positions, 1))
    np.testing.assert_allclose(g.compute(), ft.grad(f)(x, positions), rtol=1e-12)


@pytest.mark.parametrize("method", ["set", "add", "multiply", "min", "max"])
def test_index_updates_by_lazy_positions(method):
    rng = np.random.default_rng(9)
    x, values = rng.standard_normal((40, 3)), rng.standard_normal((10, 3))
    rows = rng.integers(0, 40, 10)

    def update(x, rows, values):
        return getattr(x.at[rows], method)(values)
    lazy = (da.from_array(x, chunks=(10, 3)), da.from_array(rows, chunks=5),
            da.from_array(values, chunks=(5, 3)))
    with Computes() as counted:
        got = ft.jit(update)(*lazy)
        g = ft.grad(lambda x, v: fnp.sum(update(x, lazy[1], v) ** 2), (0, 1))(lazy[0], lazy[2])
    assert counted.count == 0
    # (multiply sorts the updates by position, gathered under the size limit; x never is)
    assert not gathered(got, *g) or method == "multiply"
    np.testing.assert_allclose(got.compute(), ft.jit(update)(x, rows, values), rtol=1e-12)
    want = ft.grad(lambda x, v: fnp.sum(update(x, rows, v) ** 2), (0, 1))(x, values)
    for a, b in zip(compute(g), want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# Slices at lazy starts: each chunk reads or writes its part once the start is known


@pytest.mark.parametrize("start", [(3, 1), (-2, 0), (45, 9), (17, 2)])
def test_dynamic_slices_at_lazy_starts_match_numpy(start):
    rng = np.random.default_rng(11)
    x, u = rng.standard_normal((50, 6)), rng.standard_normal((13, 4))
    X, U = da.from_array(x, chunks=(7, 4)), da.from_array(u, chunks=(5, 3))  # uneven
    lazy = (da.from_array(np.int64(start[0])), da.from_array(np.int32(start[1])))
    with Computes() as counted:
        got = [ft.lax.dynamic_slice(X, lazy, (13, 4)),
               ft.lax.dynamic_slice(X, (lazy[0], 2), (13, 4)),  # a host start beside
               ft.lax.dynamic_update_slice(X, U, lazy),
               ft.lax.dynamic_update_slice(X, u, (lazy[0], 1))]
    assert counted.count == 0 and not gathered(*got)
    want = [ft.lax.dynamic_slice(x, start, (13, 4)),
            ft.lax.dynamic_slice(x, (start[0], 2), (13, 4)),
            ft.lax.dynamic_update_slice(x, u, start),
            ft.lax.dynamic_update_slice(x, u, (start[0], 1))]
    for g, w in zip(compute(got), want):
        np.testing.assert_array_equal(g, w)


def window_loss(x, update, at):
    """A loss through both slices at the position ``at`` of the largest row sum."""
    i = fnp.argmax(fnp.sum(x, axis=1)) - at
    window = ft.lax.dynamic_slice(x, (i, 0), (3_000, x.shape[1]))
    written = ft.lax.dynamic_update_slice(x, update * window, (i, 0))
    return fnp.sum(fnp.sin(written)) + fnp.sum(window ** 2)


def test_grad_and_vmap_through_slices_at_lazy_starts_stay_chunked():
    rng = np.random.default_rng(12)
    x, update = rng.standard_normal((20_000, 8)), rng.standard_normal((3_000, 8))
    X = da.from_array(x, chunks=(2_000, 8))  # 10 chunks of 128 kB
    U = da.from_array(update, chunks=(1_000, 8))
    at = np.arange(3) * 700
    # new arrays (the zero cotangent of x per example) in chunks of 128 kB, as x's: at
    # scale, dask's own limit of 128 MiB
    with Computes() as counted, dask.config.set({"array.chunk-size": "128kB"}):
        g = ft.grad(window_loss, (0, 1))(X, U, 500)
        each = ft.vmap(ft.grad(window_loss), (None, None, 0))(X, U, da.from_array(at))
        rows = ft.vmap(lambda x: ft.lax.dynamic_slice(x, (fnp.argmax(x[:2_000]),), (5,)),
                       in_axes=1)(X)  # a batched operand at a lazy start
    assert counted.count == 0 and not gathered(*g, each, rows)
    with TaskSizes() as sizes:
        got = compute([g, rows])
    # no task holds the whole operand: the largest result is one chunk of it
    assert sizes.largest <= 2_000 * 8 * 8 < x.nbytes, sizes.largest
    with TaskSizes() as sizes:
        got.append(each.compute())
    # per example, batched starts are a gather and a scatter at the positions of the
    # window's elements (three int64 per element); no task holds the operand of all three
    assert sizes.largest <= 3 * 3_000 * 8 * 3 * 8 < 3 * x.nbytes, sizes.largest
    want = ft.grad(window_loss, (0, 1))(x, update, 500)
    for a, b in zip(got[0], want):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    loop = np.stack([ft.grad(window_loss)(x, update, a) for a in at])
    np.testing.assert_allclose(got[2], loop, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(
        got[1], np.stack([x[np.argmax(x[:2_000, k]):][:5, k] for k in range(8)]))


# ------------------------------------------------------------------------------------------
# The primitive and functrans.numpy sweeps, on dask arrays
# ------------------------------------------------------------------------------------------
# Every case evaluates on dask arrays split into two chunks along axis 0 (where the axis
# has two elements): nothing is computed while functrans builds the graph, one compute
# gives NumPy's answer.  To stay within CI's time, a stride of the cases runs by default
# (every case when FUNCTRANS_DASK_SWEEP=full); the derivative checks take a sparser stride.

import os  # noqa: E402
import zlib  # noqa: E402

from test_standin import SWEEP, SWEEP_DIFF, _on_device_split, _random_like  # noqa: E402

from functrans.tree_util import tree_leaves, tree_map, tree_structure  # noqa: E402

FULL = os.environ.get("FUNCTRANS_DASK_SWEEP") == "full"
EVAL_STRIDE, DERIVATIVE_STRIDE = (1, 1) if FULL else (3, 12)
TOL = 1e-10


def to_dask(tree):
    """``tree`` with its NumPy arrays as dask arrays, split in two along axis 0 where it has
    two elements or more (NumPy and Python scalars stay as they are)."""
    def put(x):
        if not isinstance(x, np.ndarray):
            return x
        if x.ndim and x.shape[0] >= 2:
            return da.from_array(x, chunks=((x.shape[0] + 1) // 2,) + x.shape[1:])
        return da.from_array(x)
    return tree_map(put, tree)


def run_on_dask(fun, host_args, what: str, computes_allowed: bool = False):
    """``fun`` on dask copies of ``host_args`` computes nothing and, computed once, equals
    ``fun`` on ``host_args``; arrays of one or more axes come back as dask arrays."""
    lazy_args = to_dask(host_args)
    with Computes() as counted:
        got = fun(*lazy_args)
    if not computes_allowed:
        assert counted.count == 0, f"{what}: {counted.count} computes while building the graph"
    want = fun(*host_args)
    assert tree_structure(got) == tree_structure(want), what
    got_leaves, want_leaves = tree_leaves(got), tree_leaves(want)
    for g, w in zip(got_leaves, want_leaves):
        if np.ndim(w) and np.asarray(w).dtype != ft.float0:
            assert type(g) is da.Array, f"{what}: a {type(g).__name__}, not a dask array"
    for g, w in zip(dask.compute(got_leaves)[0], want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype, g.shape,
                                                          w.shape)
        np.testing.assert_allclose(g, w, rtol=TOL, atol=TOL, err_msg=what, equal_nan=True)


def _rng(key: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(key.encode()))


def mark_known(request, key: str):
    """A strict xfail for the sweep checks that dask cannot express (``DASK_CANNOT``):
    when one starts working the suite fails until its entry is deleted."""
    reason = DASK_CANNOT.get(key)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=REASONS[reason]))


# Checks that compute while functrans builds the graph, by design: the Krylov solvers and
# odeint's adaptive steps are while_loops, whose condition is read on the host each
# iteration (as it synchronises on CuPy).
HOST_DRIVEN = {f"lax-sparse.linalg.{case}-{mode}" for case in (
    "bicgstab", "cg", "cg_preconditioned", "gmres") for mode in ("eval", "jvp", "vjp")} | {
    "lax-odeint-eval"}

# Why dask cannot express a sweep check (the keys of DASK_CANNOT's values).
REASONS = {
    "getitem": "the case indexes a concrete array with Python's [], which on a dask array "
               "is dask's own __getitem__: no nd fancy indexing with integer arrays",
}

# The sweep checks dask cannot express, each with its reason.  The list only shrinks: a
# listed check that passes fails the suite (strict xfail); delete its entry then.
DASK_CANNOT = {
    **{f"numpy-{case}-eval": "getitem" for case in (
        "diag_indices_from", "diag_indices_from_3d", "tril_indices_from", "triu_indices_from")},
}

# Cases whose graphs take over a second to build (long elementwise chains: random bits,
# Bessel series; solvers' loops): left out of the default stride, run with
# FUNCTRANS_DASK_SWEEP=full.
SLOW = {
    "lax-bessel_i0", "lax-bessel_i1", "lax-bessel_i1_large", "lax-custom_root_vector",
    "lax-jit_elementwise", "lax-jit_of_jit", "lax-random_gamma", "lax-random_normal",
    "lax-random_randint", "lax-random_truncated_normal", "lax-random_uniform",
    "lax-sparse.linalg.bicgstab", "lax-sparse.linalg.cg", "lax-sparse.linalg.gmres",
    "numpy-i0_large", "numpy-kaiser_beta", "numpy-linalg.cond_orders", "numpy-nn_gelu_exact",
    "numpy-nn_gelu_exact_wide", "numpy-scipy.linalg.solve_her_lower0",
    "numpy-scipy_boxcox1p", "lax-hyp2f1_in_parameters", "lax-hyp1f1_in_parameters",
}


def _sample(cases: list, stride: int) -> list:
    return cases if FULL else [c for c in cases[::stride] if c.id not in SLOW]


EVAL_CASES = _sample(SWEEP, EVAL_STRIDE)
DERIVATIVE_CASES = _sample(SWEEP_DIFF, DERIVATIVE_STRIDE)


@pytest.mark.parametrize("case", EVAL_CASES, ids=[c.id for c in EVAL_CASES])
def test_sweep_evaluates_on_dask(request, case):
    key = f"{case.id}-eval"
    mark_known(request, key)
    run_on_dask(case.fun, case.draw(_rng(case.id)), case.id,
                computes_allowed=key in HOST_DRIVEN)


@pytest.mark.parametrize("case", DERIVATIVE_CASES, ids=[c.id for c in DERIVATIVE_CASES])
def test_sweep_jvp_on_dask(request, case):
    key = f"{case.id}-jvp"
    mark_known(request, key)
    rng = _rng(case.id + "/jvp")
    args = case.draw(rng)
    f, primals = _on_device_split(case, args)
    tangents = _random_like(rng, primals)

    def jvp(args, tangents):
        f, primals = _on_device_split(case, args)
        return ft.jvp(f, primals, tangents)
    run_on_dask(jvp, [args, tangents], key, computes_allowed=key in HOST_DRIVEN)


@pytest.mark.parametrize("case", DERIVATIVE_CASES, ids=[c.id for c in DERIVATIVE_CASES])
def test_sweep_vjp_on_dask(request, case):
    key = f"{case.id}-vjp"
    mark_known(request, key)
    rng = _rng(case.id + "/vjp")
    args = case.draw(rng)
    f, primals = _on_device_split(case, args)
    cts = _random_like(rng, f(*primals))

    def vjp(args, cts):
        f, primals = _on_device_split(case, args)
        out, pullback = ft.vjp(f, *primals)
        return out, pullback(cts)
    run_on_dask(vjp, [args, cts], key, computes_allowed=key in HOST_DRIVEN)




def test_gathers_pairing_many_chunks_warn_and_point_to_jit():
    """A gather or scatter by lazy positions pairs every chunk of positions with every
    chunk of its operand: past chunked.PAIRS_WARNING pairs, dask's PerformanceWarning says
    so and names jit, which does picks at each row's own number one task per chunk.  (Here
    the row numbers are a column of the positions, which an eager call cannot see into;
    x[arange(n), y] and take_along_axis share the rows' axis instead, eagerly too.)"""
    from dask.array.core import PerformanceWarning
    rng = np.random.default_rng(12)

    def loss(W, X, y):
        positions = fnp.stack([fnp.arange(X.shape[0]), y], axis=1)
        return -fnp.mean(ft.lax.gather(ft.nn.log_softmax(X @ W), positions))

    W = rng.standard_normal((4, 3))
    for chunks, warns in ((4, False), (20, True)):
        n = 50 * chunks
        X = da.from_array(rng.standard_normal((n, 4)), chunks=(50, 4))
        y = da.from_array(rng.integers(0, 3, n), chunks=50)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ft.grad(loss)(W, X, y)
            jitted = ft.jit(ft.grad(loss))(W, X, y)
        messages = [str(w.message) for w in caught if w.category is PerformanceWarning]
        assert bool(messages) is warns, messages
        assert all("jit" in m and f"{chunks} chunks of positions" in m for m in messages)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ft.jit(ft.grad(loss))(W, X, y)  # one task per chunk of rows: nothing to say
        assert not [w for w in caught if w.category is PerformanceWarning]
        np.testing.assert_allclose(jitted.compute(), ft.grad(loss)(
            W, X.compute(), y.compute()), rtol=1e-12)
