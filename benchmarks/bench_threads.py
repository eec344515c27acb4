"""``functrans.config.fusion_parallel``: fused loops on one thread against every core.

    python benchmarks/bench_threads.py [--rounds 9]

Two functions, each jitted twice (fusion_parallel off, then on), on arrays of growing size:
elementwise regions with libm calls, ending in a sum over their trailing axis.  Each round
times both in turn; the table gives medians of wall-clock time per call (the point is
to use more cores, so process CPU time, which counts every thread, would hide it) and of
the per-round ratios (parallel / serial).  Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import itertools
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


def waves(x, w):  # libm functions the loop computes as fast as NumPy (sin, cos)
    z = fnp.sin(x) * w + fnp.cos(x * 0.5) - 0.25 * x
    return z, fnp.sum(z * z, axis=-1)


def tanh_and_sin(x, w):  # NumPy's vectorised tanh (on one thread) between two loops
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
    print(f"{'function':>14s} {'elements':>10s} {'one thread':>12s} {'parallel':>12s} "
          f"{'ratio':>7s}")
    rng = np.random.default_rng(0)
    for f, rows in itertools.product((waves, tanh_and_sin), (128, 1024, 4096, 16384)):
        x, w = rng.normal(size=(rows, 1024)), rng.normal(size=1024)
        jitted, outputs = {}, {}
        for on in (False, True):  # the switch is read when jit first sees a signature
            ft.config.fusion_parallel = on
            jitted[on] = ft.jit(lambda x, w, f=f: f(x, w))
            outputs[on] = jitted[on](x, w)
            assert ("_split" in jitted[on].lower(x, w).as_text()) == on
        ft.config.fusion_parallel = False
        serial, parallel = jitted[False], jitted[True]
        for a, b in zip(outputs[False], outputs[True]):
            assert np.array_equal(a, b)  # the same program, split: the same bits
        calls = max(1, 2 ** 22 // x.size)
        times: dict = {"serial": [], "parallel": [], "ratio": []}
        for _ in range(args.rounds):
            s, p = _time(serial, (x, w), calls), _time(parallel, (x, w), calls)
            times["serial"].append(s)
            times["parallel"].append(p)
            times["ratio"].append(p / s)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{f.__name__:>14s} {x.size:>10d} {med['serial'] * 1e3:9.2f} ms {med['parallel'] * 1e3:9.2f} ms "
              f"{med['ratio']:6.2f}x")


if __name__ == "__main__":
    main()
