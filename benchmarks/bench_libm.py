"""Calibration of the fusion cost model's libm table (``codegen._LIBM_COSTS``): per
float64 element, beyond an addition, the time of NumPy's function (most are vectorised
with AVX-512 where the CPU has it) and of a fused loop LLVM compiled calling the C
library's scalar function.

    python benchmarks/bench_libm.py [--size 4096] [--rounds 9]

Each round times np.add, NumPy's function and the loop in turn (process CPU time); the
table gives medians over the rounds, in nanoseconds per element.  Needs llvmlite.
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

from functrans.interpreters import codegen, llvm_kernels  # noqa: E402

FUNCTIONS = ["tanh", "exp", "sin", "cos", "log", "log1p", "expm1", "arctan", "sinh", "cosh",
             "log2", "log10", "exp2", "arcsin", "cbrt", "tan", "arctanh"]


def _per_element(f, size: int, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        f()
    return (time.process_time() - start) / calls / size * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if not llvm_kernels.installed():
        sys.exit("bench_libm.py needs llvmlite")
    x = np.random.default_rng(0).uniform(0.05, 0.95, args.size)
    calls = max(1, 2_000_000 // args.size)
    print(f"ns per float64 element beyond np.add, {args.size} elements, median of "
          f"{args.rounds} rounds")
    print(f"{'function':10s} {'NumPy':>7s} {'loop':>7s}   table (NumPy, loop)")
    for name in FUNCTIONS:
        kernel = llvm_kernels.ufunc_kernel(
            [(np.float64, False)], [("t0", np.dtype(np.float64), f"np.{name}(x0)")],
            [("t0", np.dtype(np.float64))], codegen._kernel_directory())
        numpy_f = getattr(np, name)
        numpy_t, loop_t = [], []
        for _ in range(args.rounds):
            base = _per_element(lambda: np.add(x, x), args.size, calls)
            numpy_t.append(_per_element(lambda: numpy_f(x), args.size, calls) - base)
            loop_t.append(_per_element(lambda: kernel.ufunc(x), args.size, calls) - base)
        table = codegen._LIBM_COSTS.get(name)
        print(f"{name:10s} {statistics.median(numpy_t):7.2f} {statistics.median(loop_t):7.2f}"
              f"   {table}")


if __name__ == "__main__":
    main()
