"""Transforms, control flow and gradcheck on dask arrays: every transform builds a graph
without computing anything (dask computes are counted with a scheduler callback), one
compute afterwards gives NumPy's answer; ``scan`` over a chunked axis is one task per
chunk; data-dependent shapes are refused by name; gradcheck's fast mode is one compute.
"""
from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.lax as lax  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import backend  # noqa: E402
from functrans.interpreters import codegen  # noqa: E402
from functrans.primitives.control_flow_dask import SCAN_TASK_PREFIX  # noqa: E402


from test_dask import Computes  # noqa: E402  (the counting callback, shared)


def lazy_then_numpy(fn, lazy_args, host_args, rtol=1e-12, atol=1e-12):
    """``fn`` on dask arguments computes nothing, gives only dask arrays, and one compute of
    them equals ``fn`` on the NumPy arguments."""
    with Computes() as during:
        got = fn(*lazy_args)
    assert during.count == 0, f"{during.count} computes while building the graph"
    leaves = ft.tree_util.tree_leaves(got)
    assert leaves and all(type(v) is da.Array for v in leaves), [type(v) for v in leaves]
    with Computes() as after:
        (values,) = dask.compute(got)
    assert after.count == 1
    want = fn(*host_args)
    for g, w in zip(ft.tree_util.tree_leaves(values), ft.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def loss(w, X, y):
    return fnp.mean((fnp.tanh(X @ w) - y) ** 2)


def least_squares(w, X, y):
    return fnp.mean((X @ w - y) ** 2)


def example_loss(w, x, y):
    return (fnp.tanh(x @ w) - y) ** 2


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X, y, w = rng.standard_normal((96, 4)), rng.standard_normal(96), rng.standard_normal(4)
    return (w, X, y), (da.from_array(w, chunks=2), da.from_array(X, chunks=(24, 4)),
                       da.from_array(y, chunks=24))


TRANSFORMS = {
    "grad_wrt_dask_parameter": lambda w, X, y: ft.grad(loss)(w, X, y),
    "grad_wrt_data": lambda w, X, y: ft.grad(loss, argnums=1)(w, X, y),
    "vjp": lambda w, X, y: ft.vjp(loss, w, X, y)[1](2.0),
    "jvp": lambda w, X, y: ft.jvp(lambda w: loss(w, X, y), (w,), (fnp.ones_like(w),)),
    "linearize": lambda w, X, y: ft.linearize(lambda w: loss(w, X, y), w)[1](w * 0.5),
    "per_example_grads": lambda w, X, y: ft.vmap(ft.grad(example_loss), (None, 0, 0))(w, X, y),
    "jacfwd": lambda w, X, y: ft.jacfwd(loss)(w, X, y),
    "jacrev": lambda w, X, y: ft.jacrev(loss)(w, X, y),
    "jacrev_of_residuals": lambda w, X, y: ft.jacrev(lambda w: fnp.tanh(X[:8] @ w))(w),
    "hessian": lambda w, X, y: ft.hessian(loss)(w, X, y),
    "hvp": lambda w, X, y: ft.jvp(ft.grad(lambda w: loss(w, X, y)), (w,), (w,))[1],
    "jit_grad": lambda w, X, y: ft.jit(ft.grad(loss))(w, X, y),
    "jit_value_and_grad": lambda w, X, y: ft.jit(ft.value_and_grad(loss, argnums=(0, 1)))(
        w, X, y),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transform_builds_a_graph_equal_to_numpy(data, name):
    host, lazy = data
    lazy_then_numpy(TRANSFORMS[name], lazy, host)


# ------------------------------------------------------------------------------------------
# jit: one blockwise task per chunk for each elementwise region
# ------------------------------------------------------------------------------------------


def long_loss(x, y):
    """25 elementwise operations, then a mean."""
    z = x * y
    for _ in range(3):
        z = fnp.tanh(z) * 0.5 + fnp.sin(z) - z * z * 0.1 + 1.0
    return fnp.mean(z)


def tasks(x) -> int:
    return len(x.__dask_graph__())


def layers(x, prefix: str) -> int:
    """The number of layers of ``x``'s graph whose names start with ``prefix-<token>``."""
    return sum(1 for k in x.__dask_graph__().layers if k.rsplit("-", 1)[0] == prefix)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(2)
    xh, yh = rng.standard_normal((400, 3)), rng.standard_normal(3)
    return (xh, yh), (da.from_array(xh, chunks=(100, 3)), da.from_array(yh))


@pytest.fixture
def without_row_regions(monkeypatch):
    """jit's elementwise regions alone (row regions, below, take whole programs over rows)."""
    monkeypatch.setattr(codegen, "ROW_REGIONS", False)


def test_jit_is_one_task_per_chunk_per_elementwise_region(rows, without_row_regions):
    host, (x, y) = rows
    chunks, inputs = x.npartitions, tasks(x) + tasks(y)
    assert codegen.fusion_active(backend.library_of(x))
    eager = ft.grad(long_loss)(x, y)
    jitted = lazy_then_numpy(ft.jit(ft.grad(long_loss)), (x, y), host)
    # forward and backward are one region: one task per chunk over the inputs' tasks,
    # where the eager gradient has tasks per chunk for each of its ~50 operations
    assert tasks(jitted) == inputs + chunks, tasks(jitted)
    assert tasks(eager) > 25 * chunks
    # both gradients: the region's two results picked out of its tuple, and the sum over
    # the rows that y's gradient needs
    gx, gy = lazy_then_numpy(ft.jit(ft.grad(long_loss, argnums=(0, 1))), (x, y), host)
    assert layers(gy, "jit-region") == 1 and tasks(gy) <= inputs + 3 * chunks + 2
    source = ft.jit(ft.grad(long_loss)).lower(x, y).as_text()
    assert "region" in source


def test_dask_regions_broadcast_and_give_several_outputs():
    rng = np.random.default_rng(5)
    Xh = rng.standard_normal((40, 6)).astype(np.float32)
    vh, ch, nh = (rng.standard_normal(6).astype(np.float32), rng.standard_normal((40, 1)),
                  rng.standard_normal(6))
    X = da.from_array(Xh, chunks=(10, 3))                 # chunked along both axes
    v, c = da.from_array(vh, chunks=3), da.from_array(ch, chunks=(10, 1))

    def f(X, v, c, n, s):
        a = X * v
        return (fnp.sin(a + c) * s, a * c - n, fnp.cos(X) * X,
                fnp.broadcast_to(v, (40, 6)) * 2.0 + 1.0)  # a broadcast no input spans
    got = lazy_then_numpy(lambda X, v, c: ft.jit(f)(X, v, c, nh, 1.5), (X, v, c),
                          (Xh, vh, ch), rtol=1e-6, atol=1e-6)
    want = f(Xh, vh, ch, nh, 1.5)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g._meta.dtype == w.dtype
        assert g.chunks == X.chunks
    assert layers(got[0], "jit-region") == 1  # the first three results: one task per chunk


def test_jit_regions_on_the_sweep():
    """jit of a stride of the sweep's cases on dask arrays (regions wherever elementwise
    operations meet) equals NumPy."""
    from test_dask import DASK_CANNOT, HOST_DRIVEN, SLOW, SWEEP, _rng, run_on_dask
    cases = [c for c in SWEEP[::12] if c.id not in SLOW and f"{c.id}-eval" not in DASK_CANNOT
             and f"{c.id}-eval" not in HOST_DRIVEN]
    for case in cases:
        run_on_dask(ft.jit(case.fun), case.draw(_rng(case.id)), case.id)


def test_jit_of_pullbacks_on_the_sweep():
    """jit of the value and pullback of a stride of the derivative sweep's cases on dask
    arrays split in two along their first axis (row regions wherever equations keep rows
    apart, the rest dask calls and elementwise regions) equals jit on NumPy."""
    from test_dask import (DASK_CANNOT, HOST_DRIVEN, SLOW, SWEEP_DIFF, _on_device_split,
                           _random_like, _rng, run_on_dask)
    cases = [c for c in SWEEP_DIFF[5::12] if c.id not in SLOW
             and f"{c.id}-vjp" not in DASK_CANNOT and f"{c.id}-vjp" not in HOST_DRIVEN]
    for case in cases:
        rng = _rng(case.id + "/jit-vjp")
        args = case.draw(rng)
        f, primals = _on_device_split(case, args)
        cts = _random_like(rng, f(*primals))

        @ft.jit
        def value_and_pullback(args, cts, case=case):
            f, primals = _on_device_split(case, args)
            out, pullback = ft.vjp(f, *primals)
            return out, pullback(cts)
        run_on_dask(value_and_pullback, [args, cts], case.id)


def test_a_dask_region_of_host_values_only_is_evaluated_at_once(rows):
    host, (x, y) = rows
    n = np.linspace(0.0, 1.0, 5)
    lazy, eager = ft.jit(lambda x, n: (x * 2.0 + 1.0, fnp.sin(n) * 2.0 + n))(x, n)
    assert type(lazy) is da.Array
    np.testing.assert_allclose(np.asarray(eager), np.sin(n) * 2.0 + n, rtol=1e-15)


# ------------------------------------------------------------------------------------------
# grad's seed: no rechunk
# ------------------------------------------------------------------------------------------


def test_grad_seed_meets_the_data_chunks_without_a_rechunk():
    rng = da.random.default_rng(4)
    X, y = dask.persist(rng.standard_normal((300, 8), chunks=(100, 8)),
                        rng.standard_normal(300, chunks=100))
    w = np.linspace(-1, 1, 8)

    g = ft.grad(least_squares)(w, X, y)
    by_hand = (2.0 / 300) * (X.T @ (X @ w - y))
    assert not any(k.startswith("rechunk") for k in g.__dask_graph__().layers)
    assert tasks(g) <= tasks(by_hand) + 7, (tasks(g), tasks(by_hand))
    np.testing.assert_allclose(g.compute(), by_hand.compute(), rtol=1e-12)


def optimized_tasks(x) -> int:
    """The tasks ``compute`` runs: ``x``'s graph after dask's optimization (blockwise
    layers fused into the elementwise operations that read them)."""
    (optimized,) = dask.optimize(x)
    return len(optimized.__dask_graph__())


@pytest.mark.parametrize("name", ["least_squares", "logistic"])
def test_eager_grad_runs_as_many_tasks_as_the_gradient_written_by_hand(name):
    from test_dask import Computes
    rng = da.random.default_rng(8)
    X, y = dask.persist(rng.standard_normal((400, 8), chunks=(100, 8)),
                        da.sign(rng.standard_normal(400, chunks=100)))
    w = np.linspace(-1, 1, 8)
    losses = {
        "least_squares": (lambda w, X, y: fnp.mean((X @ w - y) ** 2),
                          lambda w, X, y: (2.0 / 400) * (X.T @ (X @ w - y))),
        "logistic": (lambda w, X, y: fnp.mean(fnp.logaddexp(0.0, -y * (X @ w))),
                     lambda w, X, y: (-1.0 / 400) * (X.T @ (y / (1.0 + da.exp(y * (X @ w)))))),
    }
    loss, hand = losses[name]
    with Computes() as counted:
        g, by_hand = ft.grad(loss)(w, X, y), hand(w, X, y)
    assert counted.count == 0
    # the seed's broadcast over the rows is a blockwise view that dask fuses into the
    # pullback's first product: no layer of its own (dask.array.broadcast_to's would be)
    assert all(type(layer).__name__ == "Blockwise" for key, layer in g.dask.layers.items()
               if "broadcast" in key)
    assert optimized_tasks(g) == optimized_tasks(by_hand), (
        optimized_tasks(g), optimized_tasks(by_hand))
    # the functions in the tasks are dask's and NumPy's: the workers need no functrans
    import cloudpickle
    assert b"functrans" not in cloudpickle.dumps(dict(g.__dask_graph__()))
    np.testing.assert_allclose(g.compute(), by_hand.compute(), rtol=1e-12)


def test_a_broadcast_along_a_new_trailing_axis_fuses_too():
    rng = da.random.default_rng(9)
    X, y = dask.persist(rng.standard_normal((400, 8), chunks=(100, 8)),
                        rng.standard_normal(400, chunks=100))

    def loss(X, y):  # the pullback of the row sums broadcasts (N,) over (N, d)
        return fnp.mean((fnp.sum(X * X, axis=1) - y) ** 2)
    g = ft.grad(loss)(X, y)
    by_hand = (2.0 / 400) * ((X * X).sum(1) - y)[:, None] * 2 * X
    assert all(type(layer).__name__ == "Blockwise" for key, layer in g.dask.layers.items()
               if key.startswith(("broadcast", "reshape")))
    # fewer than by hand, whose r[:, None] runs as tasks of its own
    assert optimized_tasks(g) < optimized_tasks(by_hand), (
        optimized_tasks(g), optimized_tasks(by_hand))
    np.testing.assert_allclose(g.compute(), by_hand.compute(), rtol=1e-12)


def labels_cross_entropy(W, X, labels):
    return -fnp.mean(ft.nn.log_softmax(X @ W)[fnp.arange(X.shape[0]), labels])


def labels_cross_entropy_take(W, X, labels):
    return -fnp.mean(fnp.take_along_axis(ft.nn.log_softmax(X @ W), labels[:, None], axis=1))


@pytest.mark.parametrize("loss", [labels_cross_entropy, labels_cross_entropy_take],
                         ids=["arange", "take_along_axis"])
def test_eager_grad_of_a_pick_at_labels_keeps_each_chunk_of_rows_to_itself(loss):
    """``logp[arange(N), labels]`` and ``take_along_axis`` eagerly: the rows are an axis
    the gather shares with its positions, so its gradient's scatter-add is a task per chunk
    of rows (not a pair of every chunk with every other) into which dask fuses the zeros
    it adds to, and the softmax's reductions over the classes (one chunk) and its
    ``keepdims`` are blockwise and fuse: no more tasks than the gradient by hand."""
    from test_dask import Computes
    rng = np.random.default_rng(15)
    W = rng.standard_normal((8, 3))
    counts, hand_counts = {}, {}
    for chunks in (4, 8):
        host_X, host_y = rng.standard_normal((50 * chunks, 8)), rng.integers(0, 3, 50 * chunks)
        X, y = da.from_array(host_X, chunks=(50, 8)), da.from_array(host_y, chunks=50)
        with Computes() as counted:
            g = ft.grad(loss)(W, X, y)
        assert counted.count == 0
        logits = X @ W
        p = da.exp(logits - logits.max(axis=1, keepdims=True))
        p = p / p.sum(axis=1, keepdims=True)
        by_hand = X.T @ (p - (y[:, None] == np.arange(3))) / X.shape[0]
        counts[chunks], hand_counts[chunks] = optimized_tasks(g), optimized_tasks(by_hand)
        assert not any(key.startswith(("rechunk", "block-")) for key in g.dask.layers)
        assert not any(key.startswith("zeros") for key in dask.optimize(g)[0].dask.layers)
        np.testing.assert_allclose(g.compute(), ft.grad(loss)(W, host_X, host_y),
                                   rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g.compute(), by_hand.compute(), rtol=1e-10, atol=1e-14)
    # as many tasks more per chunk: twice the chunks, about twice the tasks (the pairs of
    # chunks of positions and of the table made four times as many)
    assert counts[8] <= 2 * counts[4], counts
    # (dask before 2024.12: the keepdims's squeezes are tasks of their own)
    slack = 1.0 if backend._broadcasts_one_block() else 1.7
    assert counts[8] <= slack * hand_counts[8], (counts, hand_counts)


# ------------------------------------------------------------------------------------------
# dask arrays of CuPy chunks: tests/test_standin.py's test_dask_arrays_of_device_chunks (on
# the CuPy stand-in here, on CuPy in tests/test_cupy.py)
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# Control flow
# ------------------------------------------------------------------------------------------


def recurrence(w, xs):
    def body(c, x):
        c = fnp.tanh(0.9 * c + x @ w)
        return c, 2.0 * c
    c, ys = lax.scan(body, 0.0, xs)
    return c + fnp.sum(ys ** 2)


@pytest.fixture(scope="module")
def sequence():
    rng = np.random.default_rng(1)
    xs, w = rng.standard_normal((60, 3)), rng.standard_normal(3)
    return (w, xs), (w, da.from_array(xs, chunks=(12, 3)))


def scan_tasks(x) -> int:
    return sum(1 for k in x.__dask_graph__() if isinstance(k, str) and
               k.startswith(SCAN_TASK_PREFIX) and k.rsplit("-", 1)[-1].isdigit())


def test_scan_is_one_task_per_chunk(sequence):
    host, (w, xs) = sequence
    got = lazy_then_numpy(lambda w, xs: lax.scan(lambda c, x: (c + x, c * x), w, xs),
                          (w, xs), host)
    assert scan_tasks(got[1]) == xs.numblocks[0] == 5


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_grad_over_chunks(sequence, reverse):
    host, lazy = sequence

    def f(w, xs):
        c, ys = lax.scan(lambda c, x: (fnp.sin(c) + x @ w, c * x[0]), 0.5, xs, reverse=reverse)
        return c + fnp.sum(ys)
    lazy_then_numpy(ft.grad(f, argnums=(0, 1)), lazy, host)


def test_scan_grad_and_jit_grad(sequence):
    host, lazy = sequence
    lazy_then_numpy(ft.grad(recurrence), lazy, host)
    lazy_then_numpy(ft.jit(ft.grad(recurrence)), lazy, host)
    lazy_then_numpy(ft.vmap(recurrence, (None, 0)), (lazy[0], lazy[1].reshape(5, 12, 3)),
                    (host[0], host[1].reshape(5, 12, 3)))


def test_scan_with_unaligned_chunks_and_a_dask_carry(sequence):
    (w, xs), _ = sequence
    a, b = da.from_array(xs, chunks=(12, 3)), da.from_array(xs[:, 0], chunks=25)
    carry = da.from_array(np.array(0.25))

    def f(c0, a, b):
        return lax.scan(lambda c, x: (c * 0.5 + x[0] @ w + x[1], c), c0, (a, b))
    lazy_then_numpy(f, (carry, a, b), (0.25, xs, xs[:, 0]))


def test_cond_on_a_lazy_predicate_selects_both_branches(data):
    host, lazy = data

    def f(w, X, y):
        return lax.cond(fnp.sum(y) > 0, lambda v: fnp.sin(v) * 2.0, lambda v: -v, X @ w)
    lazy_then_numpy(f, lazy, host)
    lazy_then_numpy(ft.grad(lambda w, X, y: fnp.sum(f(w, X, y))), lazy, host)

    def g(w, X, y):
        return lax.switch(fnp.argmax(y[:3]), [lambda v: v, lambda v: 2 * v, lambda v: v ** 2],
                          w)
    lazy_then_numpy(g, lazy, host)


def test_while_loop_computes_its_predicate_per_iteration():
    x = np.array([1.0, 2.0, 3.0])
    lazy = da.from_array(x, chunks=2)

    def f(x):
        return lax.while_loop(lambda c: fnp.sum(c[0]) < 100.0,
                              lambda c: (c[0] * 2.0, c[1] + 1), (x, 0))
    with Computes() as c:
        got = f(lazy)
    want = f(x)
    assert int(want[1]) == 5
    # 6 predicate reads, each a compute after a persist of the carry
    assert c.count == 12, c.count
    np.testing.assert_allclose(dask.compute(got[0])[0], want[0])
    assert int(got[1]) == 5


# ------------------------------------------------------------------------------------------
# Data-dependent shapes
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, fn", [
    ("nonzero without size=", lambda x: fnp.nonzero(x)),
    ("argwhere without size=", lambda x: fnp.argwhere(x)),
    ("flatnonzero without size=", lambda x: fnp.flatnonzero(x)),
    ("extract without size=", lambda x: fnp.extract(x > 0, x)),
    ("indexing with a boolean mask", lambda x: ft.grad(lambda x: fnp.sum(x[x > 0]))(x)),
])
def test_data_dependent_shapes_are_refused_by_name(name, fn):
    x = da.from_array(np.array([1.0, -2.0, 3.0, 0.0]), chunks=2)
    with Computes() as c:
        with pytest.raises(ValueError, match=name) as e:
            fn(x)
    assert c.count == 0
    assert "dask array" in str(e.value) and "chunks ((2, 2),)" in str(e.value)


# ------------------------------------------------------------------------------------------
# gradcheck
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big():
    rng = da.random.default_rng(3)
    X = rng.standard_normal((20_000, 8), chunks=(5_000, 8))
    y = rng.standard_normal(20_000, chunks=5_000)
    return np.linspace(-0.5, 0.5, 8), X, y


def test_fast_gradcheck_is_lazy_with_one_compute_per_check(big):
    w, X, y = big
    with Computes() as c:
        result = ft.gradcheck(loss, fast_mode=True)(w, X, y)
    assert result, result.report()
    directional = [k for k in result.checks if k.kind == "directional"]
    assert {k.mode for k in directional} == {"fwd", "rev"}
    # the directional checks (both modes): one compute; the undefined-gradient and
    # rerun checks: one each
    assert c.count <= 3, c.count
    report = result.report()
    assert "dask.array" in report and "X in 4 x 1 chunks of up to (5000, 8)" in report


def test_fast_gradcheck_catches_a_wrong_rule_on_dask(big):
    w, X, y = big

    @ft.custom_vjp
    def square(v):
        return v * v

    square.defvjp(lambda v: (v * v, v), lambda v, g: (3.0 * v * g,))  # should be 2 v g
    result = ft.gradcheck(lambda w, X: fnp.sum(square(X @ w)), fast_mode=True, modes="rev",
                          raise_exception=False)(w, X)
    assert not result
    assert "dask" in result.report()


def test_fast_gradcheck_of_numpy_parameters_on_dask_data(big):
    w, X, y = big
    with Computes() as c:
        result = ft.gradcheck(loss, fast_mode=True, argnums=0)(w, X, y)
    assert result, result.report()
    assert c.count <= 3, c.count


def test_full_gradcheck_on_small_dask_inputs_and_its_size_guard(big):
    w, X, y = big
    assert ft.gradcheck(loss)(w, X[:50], y[:50])
    with Computes() as c:
        with pytest.raises(ValueError, match=r"1 x 180008 = 180,008 real entries") as e:
            ft.gradcheck(loss)(w, X, y)
    assert c.count == 0
    assert "fast_mode=True" in str(e.value) and "X in 4 x 1 chunks" in str(e.value)


def test_fast_gradcheck_detecting_kinks_stays_one_compute_on_dask(big):
    w, X, y = big
    with Computes() as plain:
        ft.gradcheck(loss, fast_mode=True)(w, X, y)
    with Computes() as detecting:
        assert ft.gradcheck(loss, fast_mode=True, detect_nondifferentiable=True)(w, X, y)
    assert detecting.count == plain.count <= 3

    Xs = da.from_array(np.array([[1.0, -1.0], [2.0, 1.0], [0.5, 0.5]]), chunks=(2, 2))
    result = ft.gradcheck(lambda w, X: fnp.sum(fnp.maximum(X @ w, 0.0)), fast_mode=True,
                          detect_nondifferentiable=True, raise_exception=False)(
        np.array([1.0, 1.0]), Xs)
    assert not result and "one-sided derivatives differ" in result.report()
    assert "X[0, 1]" in result.report()


def test_jit_reshapes_a_scalar_constant_beside_dask_arrays():
    # the constant 1.0 is reshaped to (1,) in the generated code: as a dask array
    x = da.from_array(np.array(2.0))
    with Computes() as counted:
        got = ft.jit(lambda x: fnp.array([x, 1.0, x]))(x)
    assert counted.count == 0 and isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), [2.0, 1.0, 2.0])


# ------------------------------------------------------------------------------------------
# jit: row regions, one task per chunk of rows for a whole program over the rows
# ------------------------------------------------------------------------------------------


def mlp_loss(p, X, y):
    h = fnp.tanh(X @ p["W1"] + p["b1"])
    return fnp.mean((h @ p["W2"] - y) ** 2)


def xent_loss(W, X, y):
    logits = X @ W
    labels = ft.nn.one_hot((fnp.abs(y) * 3).astype(int) % 3, 3)
    return -fnp.mean(fnp.sum(ft.nn.log_softmax(logits) * labels, axis=1))


def within_rows(w, X, y):
    pairs = X.reshape(X.shape[0], 2, 2).sum(-1)            # reshape within each row
    head = fnp.transpose(X[:, :2])[::-1].T                  # a slice and transposes of columns
    return (fnp.max(X @ w), fnp.min(fnp.tanh(X), axis=0),   # partials combined by max, min
            fnp.expand_dims(pairs * head, 1) - y[:, None, None], fnp.sum(X * y[:, None]))


def labels_of(y, classes: int):
    return (fnp.abs(y) * classes).astype(int) % classes


def labels_loss(W, X, y):
    """Cross-entropy with integer labels, picked at ``[arange(n), labels]``."""
    logp = ft.nn.log_softmax(X @ W)
    return -fnp.mean(logp[fnp.arange(X.shape[0]), labels_of(y, 3)])


def embedding_loss(W, x, y):
    """One example: the embedding row of its label against the example's features."""
    return fnp.tanh(W.T[labels_of(y, 3)] @ x) ** 2


def row_numbers(w, X, y):
    """The rows' numbers as values: weights by position, an output of its own."""
    n = X.shape[0]
    return fnp.sum(X * fnp.arange(n)[:, None], axis=1) * y, fnp.arange(n) * 2


ROW_PROGRAMS = {
    "least_squares_grad": lambda p, X, y: ft.grad(
        lambda w: fnp.mean((X @ w - y) ** 2))(p["w"]),
    "logistic_value_and_grad": lambda p, X, y: ft.value_and_grad(
        lambda w: fnp.mean(fnp.logaddexp(0.0, -y * (X @ w))))(p["w"]),
    "mlp_grad": lambda p, X, y: ft.grad(mlp_loss)(
        {k: p[k] for k in ("W1", "b1", "W2")}, X, y),
    "softmax_cross_entropy_grad": lambda p, X, y: ft.grad(xent_loss)(p["W"], X, y),
    "per_example_grads": lambda p, X, y: ft.vmap(ft.grad(example_loss), (None, 0, 0))(
        p["w"], X, y),
    "hvp": lambda p, X, y: ft.jvp(ft.grad(lambda w: loss(w, X, y)), (p["w"],), (p["w"],))[1],
    "within_rows": lambda p, X, y: within_rows(p["w"], X, y),
    "labels_cross_entropy_grad": lambda p, X, y: ft.grad(labels_loss)(p["W"], X, y),
    "take_along_axis_value_and_grad": lambda p, X, y: ft.value_and_grad(
        lambda W: -fnp.mean(fnp.take_along_axis(ft.nn.log_softmax(X @ W),
                                                labels_of(y, 3)[:, None], axis=1)))(p["W"]),
    "embedding_per_example_grads": lambda p, X, y: ft.vmap(
        ft.grad(embedding_loss), (None, 0, 0))(p["W"], X, y),
    "row_numbers": lambda p, X, y: row_numbers(p["w"], X, y),
}


@pytest.fixture(scope="module")
def row_data():
    rng = np.random.default_rng(11)
    X, y = rng.standard_normal((96, 4)), rng.standard_normal(96)
    params = {"w": rng.standard_normal(4), "W": rng.standard_normal((4, 3)),
              "W1": rng.standard_normal((4, 5)), "b1": rng.standard_normal(5),
              "W2": rng.standard_normal(5)}
    # uneven chunks, and y's not X's: the region brings y to X's chunks of rows
    lazy = (da.from_array(X, chunks=((30, 30, 36), 4)), da.from_array(y, chunks=50))
    return params, (X, y), lazy


@pytest.mark.parametrize("name", ROW_PROGRAMS)
def test_row_regions_compute_numpys_values(row_data, name):
    params, host, lazy = row_data
    fn = ft.jit(ROW_PROGRAMS[name])
    got = lazy_then_numpy(fn, (params,) + lazy, (params,) + host, rtol=1e-11, atol=1e-12)
    for leaf in ft.tree_util.tree_leaves(got):
        assert layers(leaf, "jit-rows") + layers(leaf, "jit-rows-result") >= 1, (
            name, list(leaf.__dask_graph__().layers))
    assert "a row region" in fn.lower(params, *lazy).as_text()


def test_a_chunk_of_data_is_read_by_one_task():
    """jit(grad) of a least-squares loss over persisted data: one task per chunk of rows
    reads that chunk of X and of y, once, and returns the chunk's part of the gradient; by
    hand (and eagerly) X's chunks are read twice (``X w`` and ``Xᵀ r``), so a worker holds
    a chunk until the residual is back.  Fewer tasks in all, the same gradient."""
    rng = da.random.default_rng(12)
    X, y = dask.persist(rng.standard_normal((800, 8), chunks=(100, 8)),
                        rng.standard_normal(800, chunks=100))
    w = np.linspace(-1.0, 1.0, 8)

    jitted = ft.jit(ft.grad(least_squares))(w, X, y)
    by_hand = (2.0 / 800) * (X.T @ (X @ w - y))
    np.testing.assert_allclose(jitted.compute(), by_hand.compute(), rtol=1e-12)

    def readers(result, array) -> list:
        (optimized,) = dask.optimize(result)
        graph = dict(optimized.__dask_graph__())
        deps = {k: dask.core.get_dependencies(graph, k) for k in graph}
        keys = set(dask.core.flatten(array.__dask_keys__()))
        return [sum(key in d for d in deps.values()) for key in sorted(keys)]

    assert readers(jitted, X) == [1] * 8 and readers(jitted, y) == [1] * 8
    assert readers(by_hand, X) == [2] * 8
    assert optimized_tasks(jitted) < optimized_tasks(by_hand), (
        optimized_tasks(jitted), optimized_tasks(by_hand))


def test_row_regions_take_other_splits_as_dask_calls(row_data):
    """Data split along columns too, or rows that are not dask arrays: the region's
    equations become dask calls as without regions (elementwise regions still fused),
    with the same values."""
    params, (Xh, yh), _ = row_data
    fn = ft.jit(ROW_PROGRAMS["mlp_grad"])
    both = da.from_array(Xh, chunks=(24, 2))
    got = lazy_then_numpy(fn, (params, both, da.from_array(yh, chunks=24)),
                          (params, Xh, yh), rtol=1e-11, atol=1e-12)
    assert not any(layers(g, "jit-rows") for g in ft.tree_util.tree_leaves(got))
    lazy_params = {k: da.from_array(v) for k, v in params.items()}
    lazy_then_numpy(fn, (lazy_params, Xh, yh), (params, Xh, yh), rtol=1e-11, atol=1e-12)


def test_row_regions_off_give_the_same_values(row_data, monkeypatch):
    params, host, lazy = row_data
    fn = ROW_PROGRAMS["softmax_cross_entropy_grad"]
    on = ft.jit(fn)(params, *lazy).compute()
    monkeypatch.setattr(codegen, "ROW_REGIONS", False)
    off = ft.jit(fn)(params, *lazy)
    assert not layers(off, "jit-rows")
    np.testing.assert_allclose(on, off.compute(), rtol=1e-12, atol=1e-14)


def shapes_within_rows(w, X, y):
    """Primitives along other axes than the rows: reversal, padding, concatenation,
    cumulative sums, argmax."""
    Z = fnp.concatenate([X[:, ::-1], fnp.cumsum(X, axis=1)], axis=1) * w[0]
    padded = fnp.pad(Z, ((0, 0), (1, 2)))
    return padded * y[:, None], fnp.argmax(Z, axis=1), fnp.sum(padded ** 2)


def test_row_regions_over_shapes_within_rows(row_data):
    params, host, lazy = row_data
    fn = ft.jit(lambda p, X, y: shapes_within_rows(p["w"], X, y))
    lazy_then_numpy(fn, (params,) + lazy, (params,) + host)
    text = fn.lower(params, *lazy).as_text()
    assert text.count("a row region") == 1, text


def test_row_regions_take_zero_dimensional_dask_inputs(row_data):
    params, (Xh, yh), (X, y) = row_data
    scale = da.from_array(np.array(1.5))

    def f(s, X, y):
        return fnp.sum(fnp.tanh(X) * s), fnp.tanh(X) * s + y[:, None]
    lazy_then_numpy(ft.jit(f), (scale, X, y), (1.5, Xh, yh))
    lazy_then_numpy(ft.jit(ft.grad(lambda s, X, y: f(s, X, y)[0])), (scale, X, y), (1.5, Xh, yh))


def test_a_row_region_task_reads_its_chunk_in_place():
    """The tasks get the persisted chunks themselves: a copy of one (dask's concatenation
    of an input's blocks along axes the result lacks) would be a chunk more per task."""
    import tracemalloc
    rng = da.random.default_rng(13)
    X, y = dask.persist(rng.standard_normal((200_000, 16), chunks=(50_000, 16)),
                        rng.standard_normal(200_000, chunks=50_000), scheduler="sync")
    chunk_bytes = 50_000 * 16 * 8
    w = np.linspace(-1.0, 1.0, 16)
    g = ft.jit(ft.grad(least_squares))(w, X, y)
    tracemalloc.start()
    try:
        g.compute(scheduler="sync")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < chunk_bytes / 2, (peak, chunk_bytes)


@pytest.mark.parametrize("name", ROW_PROGRAMS)
def test_row_region_tasks_compiled_or_by_impl_agree(row_data, name, monkeypatch):
    """A region's task runs its equations compiled for the chunk (fused loops where fusion
    is on), once per region and row count in a process; with ROW_CHUNKS_COMPILED off, one
    impl call each: the same values."""
    params, _, lazy = row_data
    monkeypatch.setattr(codegen, "_chunk_programs", {})
    compiled = ft.tree_util.tree_leaves(ft.jit(ROW_PROGRAMS[name])(params, *lazy))
    (compiled,) = dask.compute(compiled, scheduler="sync")
    # chunks of 30 and 36 rows (X's), one program each per region
    rows = sorted({key[1] for key in codegen._chunk_programs})
    assert rows == [30, 36] and len(codegen._chunk_programs) <= 2 * 4, codegen._chunk_programs
    monkeypatch.setattr(codegen, "ROW_CHUNKS_COMPILED", False)
    (by_impl,) = dask.compute(ft.tree_util.tree_leaves(ft.jit(ROW_PROGRAMS[name])(
        params, *lazy)), scheduler="sync")
    for a, b in zip(compiled, by_impl):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["labels_cross_entropy_grad", "take_along_axis_value_and_grad",
                                  "embedding_per_example_grads", "row_numbers"])
def test_gathers_at_each_rows_own_number_stay_in_one_row_region(row_data, name):
    """``x[arange(n), labels]``, ``take_along_axis`` and vmap's batched gathers read each
    row at its own number, and their gradients' scatter-adds write there: one region, its
    positions in the rows' axis renumbered for each chunk; ``arange(n)`` is computed by
    each task for its rows (uneven chunks: 30, 30, 36 rows)."""
    params, host, lazy = row_data
    text = ft.jit(ROW_PROGRAMS[name]).lower(params, *lazy).as_text()
    assert text.count("a row region") == 1 and "a dask region" not in text, text
    assert "row_index(first_row" in text or "gather(" in text, text
    for primitive in ("gather", "scatter_add", "iota"):  # none outside the region
        assert f"_{primitive}_" not in text.split("# _rows")[0], text


def test_a_loss_value_beside_its_gradient_is_the_same_region(row_data):
    """value_and_grad: the value's division by n reads the region's combined sum; it comes
    after the region rather than ending it, so the gradient's backward pass stays in the
    region (X read once).  Callbacks after it keep their order."""
    params, host, lazy = row_data
    order = []

    def logistic(w, X, y):
        value = fnp.mean(fnp.logaddexp(0.0, -y * (X @ w)))
        ft.debug.callback(lambda v: order.append("value"), value)
        ft.debug.callback(lambda v: order.append("w"), w)  # reads nothing of the region
        lax.fori_loop(0, 1, lambda i, c: ft.debug.callback(  # a loop with an effect
            lambda i: order.append("loop"), i) or c, w)
        return value

    fn = ft.jit(ft.value_and_grad(logistic))
    text = fn.lower(params["w"], *lazy).as_text()
    assert text.count("a row region") == 1, text
    order.clear()
    lazy_then_numpy(fn, (params["w"],) + lazy, (params["w"],) + host)
    assert order == ["value", "w", "loop"] * 2, order  # on dask, then on NumPy


def shifted_rows(w, X, y):
    n = X.shape[0]
    return (fnp.tanh(X)[(fnp.arange(n) + 1) % n, labels_of(y, 4)],    # the next row's
            fnp.tanh(X)[n - 1 - fnp.arange(n), 0],                     # rows reversed
            fnp.zeros_like(X).at[fnp.arange(n) // 2, 1].add(y),        # pairs of rows
            fnp.take_along_axis(X, fnp.argsort(X[:, :1], axis=0), axis=0))  # sorted rows


def test_gathers_across_rows_stay_outside_row_regions(row_data):
    """Positions in the rows' axis that are not each row's own number move data between
    chunks: those gathers and scatters are dask calls over the whole arrays, and the
    values are NumPy's."""
    params, host, lazy = row_data
    fn = ft.jit(lambda p, X, y: shifted_rows(p["w"], X, y))
    lazy_then_numpy(fn, (params,) + lazy, (params,) + host)
    text = fn.lower(params, *lazy).as_text()
    program = text.split("# _rows")[0]
    assert program.count("_gather_") >= 2 and "_scatter_add_" in program, text


def test_float_row_numbers_round_as_the_whole_arange():
    """A floating iota over the rows, made by each task from its first row's number:
    the numbers are made as integers and converted, so each rounds as in the whole
    ``arange`` (float16 spaces its integers 2 and 4 apart above 2048 and 4096;
    ``arange(3000, 4500, dtype=float16)`` rounds differently)."""
    n = 5000
    X = da.from_array(np.ones((n, 2), dtype=np.float16), chunks=(1500, 2))
    fn = ft.jit(lambda X: X * fnp.arange(n, dtype=np.float16)[:, None])
    assert "row_index(first_row" in fn.lower(X).as_text()
    np.testing.assert_array_equal(fn(X).compute(), np.ones((n, 2), np.float16)
                                  * np.arange(n, dtype=np.float16)[:, None])


def test_arange_over_the_rows_adds_no_constant_to_the_graph():
    """Under jit, ``arange(n)`` is an iota (as JAX's): each task makes its own rows'
    numbers, and the graph holds no array of n elements."""
    import pickle
    n = 200_000
    X = da.from_array(np.ones((n, 2)), chunks=(50_000, 2))
    y = da.from_array(np.zeros(n, dtype=np.int64), chunks=50_000)
    fn = ft.jit(lambda X, y: fnp.sum(X[fnp.arange(X.shape[0]), y] * fnp.arange(n)))
    got = fn(X, y)
    graph = dict(got.__dask_graph__())
    data = {k: v for k, v in graph.items()  # without X's and y's own chunks
            if not any(name in str(k) for name in (X.name, y.name))}
    assert len(pickle.dumps(data)) < n, len(pickle.dumps(data))
    assert got.compute() == n * (n - 1) / 2


def negative_axes(w, X, y):
    """Axes counted from the end, all of them other axes than the rows."""
    Z = fnp.concatenate([fnp.flip(X, axis=-1), fnp.cumsum(X, axis=-1)], axis=-1)
    col = fnp.expand_dims(fnp.max(Z, axis=-1) + fnp.argmax(Z, axis=-1), -1)
    return fnp.sum(fnp.squeeze(col * Z[:, :1], -1) * y) + fnp.sum(fnp.sum(X, axis=-1) * w[0])


def sorts_within_rows(w, X, y):
    """Primitives of several results (sort with its permutation) along the rows' axes."""
    return (fnp.argsort(X * w, axis=1), lax.top_k(X * w, 2),
            fnp.sort(X, axis=-1) * y[:, None])


@pytest.mark.parametrize("fn", [
    negative_axes, sorts_within_rows,
    ft.grad(lambda w, X, y: fnp.sum(X / fnp.linalg.norm(X, axis=1, keepdims=True) @ w * y)),
    ft.grad(lambda w, X, y: fnp.mean((fnp.tanh(X @ w) - y) ** 2)),
], ids=["negative_axes", "sorts", "grad_normalized_rows", "grad_tanh_regression"])
def test_a_program_over_rows_is_one_row_region(row_data, fn):
    params, host, lazy = row_data
    lazy_then_numpy(ft.jit(fn), (params["w"],) + lazy, (params["w"],) + host)
    text = ft.jit(fn).lower(params["w"], *lazy).as_text()
    assert text.count("a row region") == 1 and "a dask region" not in text, text


# ------------------------------------------------------------------------------------------
# Row regions: seeded random programs of picks by row numbers, against NumPy
# ------------------------------------------------------------------------------------------


def row_numbers_of(n, kind):
    r = fnp.arange(n)
    return {"own": r, "own_int32": r.astype(np.int32), "shifted": (r + 1) % n,
            "reversed": n - 1 - r, "halved": r // 2, "negative": r - n}[kind]


def random_pick_program(seed: int):
    """A loss over rows of one to three picks, each by the rows' own numbers or by other
    positions (shifted, reversed, halved rows; negative numbers that indexing wraps), in
    one of six forms (indexing, take_along_axis, .at add and max, a vmapped pick, where),
    ending in a sum, a rowed result, or both."""
    rng = np.random.default_rng(seed)
    kinds = ["own", "own", "own_int32", "shifted", "reversed", "halved", "negative"]
    forms = ["index", "take_along", "at_add", "at_max", "vmap_pick", "where_index"]
    chosen = [(rng.choice(forms), rng.choice(kinds)) for _ in range(rng.integers(1, 4))]
    tail = rng.choice(["sum", "rows", "both"])

    def f(W, X, y):
        n = X.shape[0]
        A = ft.nn.log_softmax(X @ W)
        labels = (fnp.abs(y) * 7).astype(np.int64) % W.shape[1]
        out = fnp.tanh(X[:, 0])
        for form, kind in chosen:
            r = row_numbers_of(n, kind)
            if form == "index":
                v = A[r, labels]
            elif form == "take_along":
                v = fnp.take_along_axis(A, labels[:, None], axis=1)[:, 0] * (r % 3)
            elif form == "at_add":
                v = fnp.zeros_like(A).at[r, labels].add(out)[:, 0] + A[:, 1]
            elif form == "at_max":
                v = A.at[r, labels].max(out)[:, -1]
            elif form == "vmap_pick":
                v = ft.vmap(lambda a, i: a[i])(A, labels) + r
            else:
                v = fnp.where(labels > 0, A[r, 0], A[r, labels])
            out = out * 0.5 + v
        if tail == "sum":
            return fnp.sum(out ** 2)
        return out if tail == "rows" else (fnp.mean(out), out * X[:, 1])
    return f, f"{chosen} -> {tail}"


def test_random_programs_of_picks_by_row_numbers_match_numpy():
    """Which gathers and scatters join a row region is decided by facts about the rows'
    numbers; a wrong fact is a wrong answer.  Seeded random programs mixing picks at the
    rows' own numbers with picks elsewhere, and their gradients: jit on dask (uneven
    chunks) against the same on NumPy."""
    rng = np.random.default_rng(21)
    Xh, yh, Wh = rng.standard_normal((70, 4)), rng.standard_normal(70), rng.standard_normal((4, 3))
    X, y = da.from_array(Xh, chunks=((20, 25, 25), 4)), da.from_array(yh, chunks=35)
    local = 0
    for seed in range(24):
        f, desc = random_pick_program(seed)
        got = dask.compute(ft.jit(f)(Wh, X, y))[0]
        for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(f(Wh, Xh, yh))):
            np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-12, err_msg=desc)

        def loss(W, X, y, f=f):
            return fnp.sum(ft.tree_util.tree_leaves(f(W, X, y))[0])
        np.testing.assert_allclose(ft.jit(ft.grad(loss))(Wh, X, y).compute(),
                                   ft.grad(loss)(Wh, Xh, yh), rtol=1e-10, atol=1e-12,
                                   err_msg=desc)
        local += "local_rows" in ft.jit(ft.grad(loss)).lower(Wh, X, y).as_text()
    assert local >= 8, local  # the programs do exercise picks inside row regions
