"""dask.array on a LocalCluster: ``grad`` of a least-squares and a logistic loss over an
N x d array, functrans (eager and ``jit``) against the same gradient written by hand with
dask.array, and the memory of the client and of the workers.

Workloads (d = 32, float64, row chunks of ~50 MB, N = 10^5 ... --max-rows):
  least_squares  mean((X w - y)^2);      by hand: 2/N X^T (X w - y)
  logistic       mean(log(1 + exp(-y X w)));  by hand: -1/N X^T (y sigmoid(-y X w))
  labels_cross_entropy (with --losses)   -mean(log_softmax(X W)[arange(N), labels]), 3
                 classes, labels = (y > 0); by hand: 1/N X^T (softmax(X W) - onehot)

Method: a LocalCluster of two worker processes (one thread each) holds X and y, generated
and persisted on the workers.  Every round builds and computes each contender once, in a
shuffled order, timed by wall clock (the work runs in the workers, so the client's CPU time
says nothing); the table gives the median over rounds of each contender's time divided by
the hand-written gradient's time *of the same round* (benchmarks/run.py's method; its
environment too: glibc's malloc thresholds fixed, BLAS on one thread, inherited by the
workers), and the number of tasks of each graph over the persisted data.  Memory, in a
separate pass where the data are generated inside the graph instead of persisted (so that
what the workers hold is the computation's working set):
  client   peak of Python's traced allocations (tracemalloc, NumPy's included) while the
           gradient is built and computed, in the client process, which also hosts the
           scheduler;
  workers  the largest growth of a worker's resident memory over its value before the
           computation, sampled every 10 ms in each worker, on a fresh cluster for each
           measurement whose workers run with glibc returning freed memory at once (so
           that resident memory follows what they hold), in chunks (50 MB); then again
           with X and y persisted first (the working set a training step adds).

    python benchmarks/bench_dask.py [--rounds 5] [--min-rows 1e5] [--max-rows 1e6] [--memory-only]
                                    [--threads 1] [--saturation 1.1]
                                    [--losses least_squares,logistic,labels_cross_entropy]
    python benchmarks/bench_dask.py --graph-sizes     # the tasks of each graph, no cluster
    python benchmarks/bench_dask.py --chunk-bodies    # a row region's task, compiled or not
    python benchmarks/bench_dask.py --static-order    # peak memory in dask's static order

The largest size, 10^7 rows (2.6 GB persisted), takes a few minutes: pass --max-rows 1e7
(and --min-rows 1e7 for it alone).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import threading
import time
import tracemalloc

import run  # noqa: E402  (its environment)

if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in run.ENV.items()):
    os.environ.update(run.ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402

FEATURES = 32
CHUNK_BYTES = 50_000_000
CHUNK_ROWS = CHUNK_BYTES // (8 * FEATURES)


def least_squares(w, X, y):
    return fnp.mean((X @ w - y) ** 2)


def logistic(w, X, y):
    return fnp.mean(fnp.logaddexp(0.0, -y * (X @ w)))


def hand_least_squares(da, w, X, y):
    return (2.0 / X.shape[0]) * (X.T @ (X @ w - y))


def hand_logistic(da, w, X, y):
    margin = -y * (X @ w)
    return (-1.0 / X.shape[0]) * (X.T @ (y / (1.0 + da.exp(-margin))))


def labels_cross_entropy(W, X, y):
    """Softmax cross-entropy with integer labels, picked at ``[arange(N), labels]``."""
    logp = ft.nn.log_softmax(X @ W)
    return -fnp.mean(logp[fnp.arange(X.shape[0]), (y > 0).astype(np.int64)])


def labels_cross_entropy_take(W, X, y):
    """The same loss, picked by ``take_along_axis`` (no array of ``N`` row numbers)."""
    logp = ft.nn.log_softmax(X @ W)
    labels = (y > 0).astype(np.int64)
    return -fnp.mean(fnp.take_along_axis(logp, labels[:, None], axis=1))


def hand_labels_cross_entropy(da, W, X, y):
    logits = X @ W
    p = da.exp(logits - logits.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    onehot = (y > 0).astype(np.int64)[:, None] == np.arange(W.shape[1])
    return X.T @ (p - onehot) / X.shape[0]


LOSSES = {"least_squares": (least_squares, hand_least_squares),
          "logistic": (logistic, hand_logistic)}
#: timed only when asked for (--losses)
MORE_LOSSES = {"labels_cross_entropy": (labels_cross_entropy, hand_labels_cross_entropy),
               "labels_cross_entropy_take": (labels_cross_entropy_take,
                                             hand_labels_cross_entropy)}


def parameters(name: str):
    """The parameters of loss ``name``: a vector of weights, or a matrix of them (one
    column per class)."""
    if name.startswith("labels_cross_entropy"):
        return np.linspace(0.1, -0.1, FEATURES * 3).reshape(FEATURES, 3)
    return np.linspace(0.1, -0.1, FEATURES)


def make_data(da, rows: int, seed: int = 0):
    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, FEATURES), chunks=(CHUNK_ROWS, FEATURES))
    y = da.sign(X @ np.linspace(-1.0, 1.0, FEATURES)
                + rng.standard_normal(rows, chunks=CHUNK_ROWS))
    return X, y


def contenders(da, name: str) -> dict:
    f, hand = {**LOSSES, **MORE_LOSSES}[name]
    return {"dask by hand": lambda w, X, y: hand(da, w, X, y),
            "functrans grad": ft.grad(f),
            "functrans jit(grad)": ft.jit(ft.grad(f))}


def graph_tasks(result) -> tuple:
    """The tasks of ``result``'s graph as built, and after dask's optimization (the
    blockwise fusion that ``compute`` applies before the scheduler sees the graph)."""
    import dask
    (optimized,) = dask.optimize(result)
    return len(result.__dask_graph__()), len(optimized.__dask_graph__())


def wall_time(fn, args) -> float:
    """Wall seconds to build ``fn(*args)``'s graph and compute it on the cluster."""
    start = time.perf_counter()
    fn(*args).compute()
    return time.perf_counter() - start


def time_rows(client, da, rows: int, rounds: int, losses=tuple(LOSSES)) -> list:
    X, y = make_data(da, rows)
    X, y = client.persist([X, y])
    from dask.distributed import wait
    wait([X, y])
    out = []
    for name in losses:
        w = parameters(name)
        fns = contenders(da, name)
        want = fns["dask by hand"](w, X, y).compute()
        for label, fn in fns.items():
            np.testing.assert_allclose(fn(w, X, y).compute(), want, rtol=1e-9, atol=1e-12,
                                       err_msg=label)
        tasks = {label: graph_tasks(fn(w, X, y)) for label, fn in fns.items()}
        times: dict = {label: [] for label in fns}
        ratios: dict = {label: [] for label in fns}
        for _ in range(rounds):
            order = list(fns)
            random.shuffle(order)
            measured = {label: wall_time(fns[label], (w, X, y)) for label in order}
            for label in fns:
                times[label].append(measured[label])
                ratios[label].append(measured[label] / measured["dask by hand"])
        for label in fns:
            out.append((name, rows, label, statistics.median(times[label]),
                        statistics.median(ratios[label]), tasks[label]))
    del X, y
    return out


def _start_sampler(dask_worker, interval: float = 0.01) -> None:
    """Runs in a worker: a thread recording the largest growth of its resident memory."""
    import psutil
    process = psutil.Process()
    state = {"base": process.memory_info().rss, "peak": 0, "stop": threading.Event()}
    state["peak"] = state["base"]

    def sample():
        while not state["stop"].is_set():
            state["peak"] = max(state["peak"], process.memory_info().rss)
            time.sleep(interval)
    state["thread"] = threading.Thread(target=sample, daemon=True)
    state["thread"].start()
    dask_worker.functrans_memory_sampler = state


def _stop_sampler(dask_worker) -> float:
    state = dask_worker.functrans_memory_sampler
    state["stop"].set()
    state["thread"].join()
    return float(state["peak"] - state["base"])


class WorkerPeaks:
    """Samples each worker's resident memory while the ``with`` block runs (a thread in
    each worker, started and read back through ``client.run``)."""

    def __init__(self, client):
        self.client = client

    def __enter__(self):
        self.client.run(_start_sampler)
        return self

    def __exit__(self, *exc):
        self.peak = max(self.client.run(_stop_sampler).values(), default=0.0)


def memory_rows(da, rows: int, threads: int = 1, saturation=None,
                losses=tuple(LOSSES)) -> list:
    """Client and worker memory of each gradient, each on a fresh cluster (so that the
    workers' memory holds nothing of earlier runs), with the data generated inside the
    graph, then the workers' growth once the data are persisted."""
    from dask.distributed import wait
    out = []
    for name in losses:
        w = parameters(name)
        for label in ("dask by hand", "functrans grad", "functrans jit(grad)"):
            with cluster(RELEASING_MALLOC, threads, saturation) as client:
                fn = contenders(da, name)[label]
                X, y = make_data(da, rows, seed=1)
                with WorkerPeaks(client) as workers:
                    tracemalloc.start()
                    fn(w, X, y).compute()
                    client_peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
                # the working set over persisted inputs: the memory a training step adds
                X, y = client.persist([X, y])
                wait([X, y])
                with WorkerPeaks(client) as persisted:
                    fn(w, X, y).compute()
            out.append((name, rows, label, client_peak, workers.peak, persisted.peak))
    return out


#: glibc's defaults for the workers of the memory pass: memory freed goes back to the
#: system at once, so that resident memory follows what the worker holds (run.ENV's fixed
#: thresholds, right for timing, keep freed chunks resident)
RELEASING_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}


@contextlib.contextmanager
def cluster(environ=None, threads: int = 1, saturation=None):
    """A client of a LocalCluster of two worker processes of ``threads`` threads each
    (``environ``: variables set in the workers' environment before they start;
    ``saturation``: the scheduler's worker-saturation, how many root tasks, such as the
    generation of a chunk, a worker is given per thread; dask's default 1.1)."""
    import dask
    from dask.distributed import Client, LocalCluster
    settings = {f"distributed.nanny.pre-spawn-environ.{k}": v for k, v in (environ or {}).items()}
    if saturation is not None:
        settings["distributed.scheduler.worker-saturation"] = saturation
    with dask.config.set(settings), LocalCluster(
                n_workers=2, threads_per_worker=threads, processes=True, host="127.0.0.1",
                dashboard_address=None, memory_limit="6GB") as local, \
            Client(local) as client:
        yield client


def tanh_regression(w, X, y):
    return fnp.mean((fnp.tanh(X @ w) - y) ** 2)


def hand_tanh_regression(da, w, X, y):
    t = da.tanh(X @ w)
    return (2.0 / X.shape[0]) * (X.T @ ((t - y) * (1.0 - t ** 2)))


def graph_sizes() -> None:
    """docs/scaling.md's table of graph sizes: tasks of each gradient as built / run, over
    persisted data (chunks of 100 rows, no cluster: the local scheduler persists)."""
    import dask
    import dask.array as da
    losses = dict(LOSSES, tanh_regression=(tanh_regression, hand_tanh_regression))
    print("| loss | chunks | `grad` | `jit(grad)` | by hand with dask.array |")
    print("|---|---|---|---|---|")
    for chunks in (3, 8):
        rng = da.random.default_rng(0)
        X, y = dask.persist(rng.standard_normal((100 * chunks, FEATURES), chunks=(100, FEATURES)),
                            da.sign(rng.standard_normal(100 * chunks, chunks=100)))
        w = np.linspace(-0.1, 0.1, FEATURES)
        for name, (f, hand) in losses.items():
            results = [ft.grad(f)(w, X, y), ft.jit(ft.grad(f))(w, X, y), hand(da, w, X, y)]
            want = results[-1].compute()
            for r in results:
                np.testing.assert_allclose(r.compute(), want, rtol=1e-10, atol=1e-13)
            cells = " | ".join("%d / %d" % graph_tasks(r) for r in results)
            print(f"| {name.replace('_', ' ')} | {chunks} | {cells} |")
        # per-example gradients of the logistic loss: a rowed result, (N, d)
        per_example = ft.vmap(ft.grad(lambda w, x, t: fnp.logaddexp(0.0, -t * (x @ w))),
                              (None, 0, 0))
        results = [per_example(w, X, y), ft.jit(per_example)(w, X, y),
                   (-y / (1.0 + da.exp(y * (X @ w))))[:, None] * X]
        want = results[-1].compute()
        for r in results:
            np.testing.assert_allclose(r.compute(), want, rtol=1e-10, atol=1e-13)
        cells = " | ".join("%d / %d" % graph_tasks(r) for r in results)
        print(f"| per-example logistic (`vmap(grad)`) | {chunks} | {cells} |")
        W = parameters("labels_cross_entropy")
        results = [ft.grad(labels_cross_entropy)(W, X, y),
                   ft.jit(ft.grad(labels_cross_entropy))(W, X, y),
                   hand_labels_cross_entropy(da, W, X, y)]
        want = results[-1].compute()
        for r in results:
            np.testing.assert_allclose(r.compute(), want, rtol=1e-10, atol=1e-13)
        cells = " | ".join("%d / %d" % graph_tasks(r) for r in results)
        print(f"| cross-entropy with integer labels | {chunks} | {cells} |")


def static_order_peaks() -> None:
    """Each gradient over 20 chunks of data generated inside the graph (10,000 x 32, y made
    from X as in the memory pass), computed in this process by dask's synchronous scheduler
    (its static order), the second time (the first compiles jit's chunk programs): the
    peak of Python's traced allocations, in chunks."""
    import dask.array as da
    rows = 10_000
    w = np.linspace(0.1, -0.1, FEATURES)
    print("| loss | contender | peak, in chunks |")
    print("|---|---|---|")
    for name in LOSSES:
        for label, fn in contenders(da, name).items():
            rng = da.random.default_rng(1)
            X = rng.standard_normal((20 * rows, FEATURES), chunks=(rows, FEATURES))
            y = da.sign(X @ np.linspace(-1.0, 1.0, FEATURES)
                        + rng.standard_normal(20 * rows, chunks=rows))
            fn(w, X, y).compute(scheduler="sync")  # jit's chunk programs compiled first
            g = fn(w, X, y)
            tracemalloc.start()
            try:
                g.compute(scheduler="sync")
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            print(f"| {name} | {label} | {peak / (rows * FEATURES * 8):.1f} |")


def chunk_bodies(rounds: int) -> None:
    """One task of a row region on one chunk of CHUNK_ROWS x 32: its equations compiled for
    the chunk (``RowRegion.run_chunk``) against one impl call each (``evaluate``), process
    CPU time, interleaved, the median of the per-round ratios."""
    import dask.array as da
    from functrans.interpreters import codegen
    rng = np.random.default_rng(0)
    rows = CHUNK_ROWS
    Xh, yh = rng.standard_normal((2 * rows, FEATURES)), np.sign(rng.standard_normal(2 * rows))
    X, y = da.from_array(Xh, chunks=(rows, FEATURES)), da.from_array(yh, chunks=rows)
    w, W = np.linspace(-0.1, 0.1, FEATURES), rng.standard_normal((FEATURES, 16)) * 0.1
    programs = {"least_squares grad": (ft.grad(least_squares), w),
                "logistic grad": (ft.grad(logistic), w),
                "tanh layer grad": (ft.grad(lambda W, X, y: fnp.mean(
                    (fnp.tanh(X @ W).sum(1) - y) ** 2)), W)}
    print(f"| program (one chunk of {rows} x {FEATURES}) | impl calls | compiled | ratio |")
    print("|---|---|---|---|")
    for name, (fn, p) in programs.items():
        source = ft.jit(fn).lower(p, X, y)
        region = next(v for v in source._entry.compiled.fn.__globals__.values()
                      if isinstance(v, codegen.RowRegion))
        chunk = {(2 * rows, FEATURES): Xh[:rows], (2 * rows,): yh[:rows]}
        args = [chunk.get(tuple(x.aval.shape), p) for x in region.inputs]
        contenders = {"impl": lambda: region.evaluate(args, rows),
                      "compiled": lambda: region.run_chunk(args, rows)}
        for a, b in zip(*(f() for f in contenders.values())):
            np.testing.assert_allclose(a, b, rtol=1e-10)
        times: dict = {k: [] for k in contenders}
        for _ in range(rounds):
            for label in random.sample(list(contenders), len(contenders)):
                start = time.process_time()
                for _ in range(5):
                    contenders[label]()
                times[label].append((time.process_time() - start) / 5)
        ratio = statistics.median(c / i for c, i in zip(times["compiled"], times["impl"]))
        print(f"| {name} | {statistics.median(times['impl']) * 1e3:.1f} ms | "
              f"{statistics.median(times['compiled']) * 1e3:.1f} ms | {ratio:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-rows", type=float, default=1e6)
    parser.add_argument("--min-rows", type=float, default=1e5)
    parser.add_argument("--memory-only", action="store_true")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads per worker (default 1)")
    parser.add_argument("--saturation", type=float, default=None,
                        help="the scheduler's worker-saturation in the memory pass "
                             "(default: dask's, 1.1)")
    parser.add_argument("--losses", default=",".join(LOSSES),
                        help="the losses timed, comma-separated, of "
                             f"{', '.join({**LOSSES, **MORE_LOSSES})} (default: the first two)")
    parser.add_argument("--graph-sizes", action="store_true",
                        help="only the table of graph sizes (docs/scaling.md), no cluster")
    parser.add_argument("--chunk-bodies", action="store_true",
                        help="only a row region's task on one chunk, compiled against impl "
                             "calls, no cluster")
    parser.add_argument("--static-order", action="store_true",
                        help="only each gradient's peak memory in dask's static order, "
                             "in this process, no cluster")
    opts = parser.parse_args()
    if opts.static_order:
        static_order_peaks()
        return
    if opts.graph_sizes:
        graph_sizes()
        return
    if opts.chunk_bodies:
        chunk_bodies(max(opts.rounds, 9))
        return
    import dask.array as da

    losses = opts.losses.split(",")
    unknown = set(losses) - set(LOSSES) - set(MORE_LOSSES)
    if unknown:
        parser.error(f"--losses: unknown {', '.join(sorted(unknown))}")
    sizes = [n for n in (100_000, 1_000_000, 10_000_000) if opts.min_rows <= n <= opts.max_rows]
    timed = []
    if not opts.memory_only:
        with cluster(threads=opts.threads) as client:
            timed = [row for n in sizes
                     for row in time_rows(client, da, n, opts.rounds, losses)]
    print(f"grad over N x {FEATURES} float64 on a LocalCluster of 2 workers of {opts.threads} "
          f"thread(s), chunks of "
          f"{CHUNK_ROWS} rows ({CHUNK_BYTES / 1e6:.0f} MB); median of {opts.rounds} rounds")
    print()
    print("| loss | N | contender | tasks built / run | time | ratio to dask by hand |")
    print("|---|---|---|---|---|---|")
    for name, rows, label, t, ratio, (built, run_) in timed:
        print(f"| {name} | {rows:.0e} | {label} | {built} / {run_} | {t * 1e3:.0f} ms | "
              f"{ratio:.2f}x |")
    print(flush=True)
    memory = [row for n in sizes
              for row in memory_rows(da, n, opts.threads, opts.saturation, losses)]
    if opts.saturation is not None:
        print(f"(memory pass: worker-saturation {opts.saturation})")
    print("| loss | N | contender | client peak | worker peak growth | over persisted data |")
    print("|---|---|---|---|---|---|")
    for name, rows, label, client_peak, worker_peak, persisted_peak in memory:
        print(f"| {name} | {rows:.0e} | {label} | {client_peak / 1e6:.1f} MB | "
              f"{worker_peak / 1e6:.0f} MB ({worker_peak / CHUNK_BYTES:.1f} chunks) | "
              f"{persisted_peak / 1e6:.0f} MB ({persisted_peak / CHUNK_BYTES:.1f} chunks) |")


if __name__ == "__main__":
    main()
