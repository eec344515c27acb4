"""functrans on a real dask.distributed cluster: two worker processes started and closed by
a module fixture compute a gradient, per-example gradients, a scan and a fast gradcheck of
data persisted on the workers.  Results equal NumPy's.  For the gradient and the
per-example gradients the client process holds less than one chunk: measured as the peak
of Python's allocations traced with tracemalloc (NumPy's included) while the transform is
built and computed, in the client process, which also hosts the LocalCluster's scheduler
and its task state (most of what is measured).  The scheduler receives one graph per
computation.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

import functrans as ft  # noqa: E402
import functrans.lax as lax  # noqa: E402
import functrans.numpy as fnp  # noqa: E402

#: 200,000 rows of 16 float64 (25.6 MB) in chunks of 50,000 rows (6.4 MB)
ROWS, FEATURES, CHUNK = 200_000, 16, 50_000
CHUNK_BYTES = CHUNK * FEATURES * 8


class GraphCounter(distributed.diagnostics.plugin.SchedulerPlugin):
    """Counts the graphs the scheduler receives (one per compute or persist)."""

    def __init__(self):
        self.graphs = 0

    def update_graph(self, scheduler, **kwargs):
        self.graphs += 1


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        counter = GraphCounter()
        cluster.scheduler.add_plugin(counter, name="functrans-graph-counter")
        yield client, counter


@pytest.fixture(scope="module")
def data(cluster):
    """A regression data set generated and persisted on the workers."""
    client, _ = cluster
    rng = da.random.default_rng(7)
    X = rng.standard_normal((ROWS, FEATURES), chunks=(CHUNK, FEATURES))
    y = da.tanh(X @ np.linspace(-1, 1, FEATURES)) + 0.1 * rng.standard_normal(
        ROWS, chunks=CHUNK)
    X, y = client.persist([X, y])
    distributed.wait([X, y])
    return X, y


def loss(w, X, y):
    return fnp.mean((fnp.tanh(X @ w) - y) ** 2)


def example_loss(w, x, y):
    return (fnp.tanh(x @ w) - y) ** 2


W = np.linspace(0.3, -0.2, FEATURES)


def numpy_grad(w, X, y):
    r = np.tanh(X @ w)
    return (2.0 / len(y)) * X.T @ ((r - y) * (1 - r * r))


def client_peak(fn):
    """``fn()`` and the peak of the client's traced allocations while it ran (bytes)."""
    tracemalloc.start()
    try:
        out = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return out, peak


def test_gradient_on_the_cluster(cluster, data):
    client, counter = cluster
    X, y = data
    before = counter.graphs
    g, peak = client_peak(lambda: ft.grad(loss)(W, X, y).compute())
    assert counter.graphs - before == 1
    assert peak < CHUNK_BYTES, (peak, CHUNK_BYTES)
    Xn, yn = client.compute([X, y], sync=True)
    np.testing.assert_allclose(g, numpy_grad(W, Xn, yn), rtol=1e-10, atol=1e-13)
    # jit's row region: tasks that carry their equations to the workers
    jitted = ft.jit(ft.grad(loss))(W, X, y)
    assert any(k.startswith("jit-rows") for k in jitted.__dask_graph__().layers)
    np.testing.assert_allclose(jitted.compute(), g, rtol=1e-12, atol=1e-15)


def test_per_example_gradients_on_the_cluster(cluster, data):
    client, counter = cluster
    X, y = data
    per_example = ft.vmap(ft.grad(example_loss), (None, 0, 0))(W, X, y)
    assert per_example.chunks[0] == X.chunks[0]
    before = counter.graphs
    # reduced on the workers: their mean is the gradient of the mean loss; and one chunk's
    (mean, first), peak = client_peak(lambda: client.compute(
        [per_example.mean(axis=0), per_example[:1000]], sync=True))
    assert counter.graphs - before == 1
    assert peak < CHUNK_BYTES, (peak, CHUNK_BYTES)
    Xn, yn = client.compute([X[:1000], y[:1000]], sync=True)
    want = np.stack([numpy_grad(W, Xn[i:i + 1], yn[i:i + 1]) for i in range(1000)])
    np.testing.assert_allclose(first, want, rtol=1e-10, atol=1e-13)
    g = ft.grad(loss)(W, X, y).compute()
    np.testing.assert_allclose(mean, g, rtol=1e-10, atol=1e-14)


def test_fast_gradcheck_on_the_cluster(cluster, data):
    client, counter = cluster
    X, y = data
    before = counter.graphs
    # (not under tracemalloc, which slows the in-process scheduler fivefold: the graphs
    # bring back a few scalars, as the gradient's does)
    result = ft.gradcheck(loss, fast_mode=True)(W, X, y)
    assert result, result.report()
    # the directional check of both modes is one graph; the undefined-gradient and rerun
    # checks one each
    assert counter.graphs - before <= 3
    assert "dask.array" in result.report()


def test_scan_over_chunks_on_the_cluster(cluster, data):
    client, _ = cluster
    X, _ = data
    xs = X[:600, :4].rechunk((200, 4))  # 3 chunks of 200 rows: 3 tasks each way

    def f(w, xs):
        c, ys = lax.scan(lambda c, x: (fnp.tanh(0.5 * c + x @ w), c), 0.0, xs)
        return c + fnp.sum(ys)
    g = ft.grad(f)(W[:4], xs).compute()
    np.testing.assert_allclose(g, ft.grad(f)(W[:4], xs.compute()), rtol=1e-10, atol=1e-13)
