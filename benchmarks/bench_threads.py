"""``functrans.config.fusion_parallel``: fused loops on one thread against every core.

    python benchmarks/bench_threads.py [--rounds 9]

The same function, jitted twice (fusion_parallel off, then on), on arrays of growing size:
an elementwise region with libm calls, ending in a sum over its trailing axis.  Each round
times both in turn; the table gives medians of wall-clock time per call (the point is
to use more cores, so process CPU time, which counts every thread, would hide it) and of
the per-round ratios (parallel / serial).  Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
       "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in ENV.items()):
    os.environ.update(ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans.interpreters import codegen  # noqa: E402


def f(x, w):
    z = fnp.tanh(x * w + 0.5) * fnp.sin(x) - 0.25 * x
    return z, fnp.sum(z * z, axis=-1)


def _time(g, args, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        g(*args)
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print(f"{codegen._threads()} threads; median of {args.rounds} rounds, wall-clock time")
    print(f"{'elements':>10s} {'one thread':>12s} {'parallel':>12s} {'ratio':>7s}")
    rng = np.random.default_rng(0)
    for rows in (128, 1024, 4096, 16384):
        x, w = rng.normal(size=(rows, 1024)), rng.normal(size=1024)
        ft.config.fusion_parallel = False
        serial = ft.jit(lambda x, w: f(x, w))
        ft.config.fusion_parallel = True
        parallel = ft.jit(lambda x, w: f(x, w))
        ft.config.fusion_parallel = False
        for a, b in zip(serial(x, w), parallel(x, w)):
            assert np.array_equal(a, b)
        calls = max(1, 2 ** 22 // x.size)
        times: dict = {"serial": [], "parallel": [], "ratio": []}
        for _ in range(args.rounds):
            s, p = _time(serial, (x, w), calls), _time(parallel, (x, w), calls)
            times["serial"].append(s)
            times["parallel"].append(p)
            times["ratio"].append(p / s)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{x.size:>10d} {med['serial'] * 1e3:9.2f} ms {med['parallel'] * 1e3:9.2f} ms "
              f"{med['ratio']:6.2f}x")


if __name__ == "__main__":
    main()
