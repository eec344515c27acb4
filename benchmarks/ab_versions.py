"""Is a change slower?  Times the same workloads with two checkouts of functrans and prints
a ratio table (after / before).

The versions cannot share a process, so each round runs one worker process per version,
in alternating order; a worker times every workload in process CPU time (best of 7
repeats).  The table reports the median over rounds of each version's time and the median
(and range) of the per-round ratios.  Workers run with single-threaded BLAS and fixed glibc
malloc thresholds, so that thread scheduling and page faults do not decide the result.

    git worktree add /tmp/before <rev>
    python benchmarks/ab_versions.py /tmp/before            # after = this checkout
    python benchmarks/ab_versions.py /tmp/before /path/to/after --rounds 9
    python benchmarks/ab_versions.py /tmp/before --only eager,scan    # some workloads
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "MALLOC_MMAP_THRESHOLD_": "1000000000", "MALLOC_TRIM_THRESHOLD_": "1000000000"}


def _workloads() -> dict:
    """name -> (function, calls per repeat).  Uses only API that every version has."""
    import numpy as np

    import functrans as ft
    import functrans.numpy as fnp
    from functrans import lax

    def chain_loss(x):
        for _ in range(50):
            x = fnp.tanh(fnp.sin(x)) * 0.9 + 0.1
        return fnp.sum(x)

    def mlp_loss(p, x, y):
        h = fnp.tanh(x @ p[0] + p[1])
        return fnp.mean((h @ p[2] + p[3] - y) ** 2)

    def scan_loss(x):
        c, ys = lax.scan(lambda c, v: (c * 0.9 + fnp.sin(v), c * v), 0.0, x)
        return c + fnp.sum(ys)

    def one_op(x):
        return fnp.sum(fnp.sin(x))

    def hvp_f(x):
        return fnp.sum(fnp.tanh(x) ** 2 * x)

    def logistic_loss(w, x, y):
        z = fnp.dot(x, w)
        return fnp.logaddexp(0.0, z) - y * z

    rng = np.random.default_rng(0)
    x8 = rng.standard_normal(8)
    x, xs, x3 = rng.standard_normal(1000), rng.standard_normal(50), rng.standard_normal(3)
    params = [rng.standard_normal((256, 256)) * 0.05, np.zeros(256),
              rng.standard_normal((256, 10)) * 0.05, np.zeros(10)]
    xb, yb = rng.standard_normal((128, 256)), rng.standard_normal((128, 10))
    xe, ye, we = rng.standard_normal((256, 64)), (rng.random(256) > 0.5) * 1.0, x[:64] / 8
    i3, key = np.arange(3), ft.random.PRNGKey(0)
    per_example = ft.vmap(ft.grad(logistic_loss), in_axes=(None, 0, 0))
    return {
        "grad, 200-op chain, f64[1000]": (lambda: ft.grad(chain_loss)(x), 20),
        "grad, MLP 256->256->10, batch 128": (lambda: ft.grad(mlp_loss)(params, xb, yb), 10),
        "grad, 200-op chain, f64[8]": (lambda: ft.grad(chain_loss)(x8), 20),
        "grad, one op (sum of sin), f64[8]": (lambda: ft.grad(one_op)(x8), 2000),
        "per-example grad (vmap of grad), 256 x 64": (lambda: per_example(we, xe, ye), 100),
        "hvp (jvp of grad), f64[1000]": (lambda: ft.jvp(ft.grad(hvp_f), (x, ), (x, )), 50),
        "eager sin, f64[3]": (lambda: fnp.sin(x3), 20000),
        "eager multiply, add by Python floats, f64[3]": (
            lambda: fnp.add(fnp.multiply(x3, 2.0), 1.0), 20000),
        "eager add of a Python int, int64[3]": (lambda: fnp.add(i3, 1), 20000),
        "eager random.normal, (3,)": (lambda: ft.random.normal(key, (3,)), 2000),
        "grad, 50-step scan (lambda body)": (lambda: ft.grad(scan_loss)(xs), 20),
        "grad, 3-step scan (lambda body)": (lambda: ft.grad(scan_loss)(xs[:3]), 200),
    }


def worker() -> None:
    times = {}
    only = [w for w in os.environ.get("AB_ONLY", "").split(",") if w]
    for name, (fun, calls) in _workloads().items():
        if only and not any(w in name for w in only):
            continue
        fun()  # warm up (and fill the caches a real program would have filled)
        best = float("inf")
        for _ in range(7):
            start = time.process_time()
            for _ in range(calls):
                fun()
            best = min(best, (time.process_time() - start) / calls)
        times[name] = best
    print(json.dumps(times))


def run_worker(checkout: pathlib.Path) -> dict:
    env = {**os.environ, **WORKER_ENV, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, __file__, "--worker"], env=env, cwd=checkout,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _format(seconds: float) -> str:
    return f"{seconds * 1e6:.2f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=pathlib.Path, help="checkout of the old version")
    parser.add_argument("after", type=pathlib.Path, nargs="?",
                        default=pathlib.Path(__file__).resolve().parents[1],
                        help="checkout of the new version (default: this one)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="",
                        help="comma-separated parts of workload names: time only those")
    args = parser.parse_args()
    os.environ["AB_ONLY"] = args.only
    before, after = [], []
    for r in range(args.rounds):
        pair = [(before, args.before), (after, args.after)]
        for results, checkout in (pair if r % 2 == 0 else pair[::-1]):
            results.append(run_worker(checkout.resolve()))
    print(f"{args.rounds} rounds, alternating; process CPU time, best of 7 per round\n")
    print("| workload | before | after | after / before (range) |")
    print("|---|---:|---:|---:|")
    for name in before[0]:
        ratios = [a[name] / b[name] for b, a in zip(before, after)]
        print(f"| {name} | {_format(statistics.median(b[name] for b in before))} | "
              f"{_format(statistics.median(a[name] for a in after))} | "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |")


if __name__ == "__main__":
    worker() if sys.argv[1:] == ["--worker"] else main()
