"""The gradient of a Gaussian process's log marginal likelihood: functrans against a
hand-written NumPy/SciPy derivative.  Prints a ratio table.

The model: an RBF kernel on 200 points in 3-D, ``K = s² exp(-|x - x'|² / 2l²) + σ² I``,
and ``log p(y) = -yᵀK⁻¹y / 2 - log det K / 2 - n log(2π) / 2`` computed through a Cholesky
factor ``L``, a triangular solve and ``sum(log diag L)``.  The gradient is taken with
respect to ``(log l, log s², log σ²)``.

* functrans: ``grad`` of that function, written with ``functrans.scipy.linalg``, and
  ``jit(grad)`` of it (traced, linearized and transposed once, then run from its cache).
* hand-written: SciPy's ``cho_factor``/``cho_solve`` and the classic formula
  ``∂/∂θ log p = tr((α αᵀ - K⁻¹) ∂K/∂θ) / 2`` with ``α = K⁻¹ y``.

The three gradients are checked to agree first.  Then, in each of ``--rounds`` rounds,
the three sides are timed one after the other (their order reversed every other round),
each as the best of 7 repeats in process CPU time; the table gives the median time of
each side and the median (and range) of its per-round ratios to the hand-written one.  The script re-runs itself
with single-threaded BLAS and fixed glibc malloc thresholds (as benchmarks/ab_versions.py
does), so that thread scheduling and page faults do not decide the result.

    python benchmarks/bench_gp.py [--n 200 5] [--rounds 7] [--profile]

``--profile`` also prints where the arithmetic of functrans's gradient goes at the first
``n``: the CPU time of each primitive's impl in the gradient's jaxpr, summed by
primitive.  (Tracing, linearization and transposition add a per-call overhead that does
not grow with ``n``: the ``n = 5`` row shows it.)
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import scipy
import scipy.linalg as sl

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans.core import impl_rules

WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "MALLOC_MMAP_THRESHOLD_": "1000000000", "MALLOC_TRIM_THRESHOLD_": "1000000000"}


def squared_distances(x):
    sq = np.sum(x * x, axis=1)
    return np.maximum(sq[:, None] + sq[None, :] - 2 * x @ x.T, 0.0)


# -- functrans -----------------------------------------------------------------------------


def log_marginal_likelihood(theta, sqdist, y):
    lengthscale2, variance, noise = fnp.exp(2 * theta[0]), fnp.exp(theta[1]), fnp.exp(theta[2])
    n = y.shape[0]
    k = variance * fnp.exp(-0.5 * sqdist / lengthscale2) + noise * np.eye(n)
    chol = fsl.cholesky(k, lower=True)
    white = fsl.solve_triangular(chol, y, lower=True)   # L⁻¹ y: yᵀK⁻¹y = |L⁻¹ y|²
    return (-0.5 * fnp.sum(white * white) - fnp.sum(fnp.log(fnp.diagonal(chol)))
            - 0.5 * n * math.log(2 * math.pi))


# -- hand-written --------------------------------------------------------------------------


def grad_by_hand(theta, sqdist, y):
    lengthscale2, variance, noise = np.exp(2 * theta[0]), np.exp(theta[1]), np.exp(theta[2])
    n = y.shape[0]
    rbf = variance * np.exp(-0.5 * sqdist / lengthscale2)
    k = rbf + noise * np.eye(n)
    factor = sl.cho_factor(k, lower=True)
    alpha = sl.cho_solve(factor, y)
    w = np.outer(alpha, alpha) - sl.cho_solve(factor, np.eye(n))   # α αᵀ - K⁻¹
    # ∂K/∂log l = rbf ∘ D / l², ∂K/∂log s² = rbf, ∂K/∂log σ² = σ² I
    return 0.5 * np.array([np.sum(w * rbf * sqdist) / lengthscale2, np.sum(w * rbf),
                           noise * np.trace(w)])


# -- timing --------------------------------------------------------------------------------


def best_time(fn, calls: int, repeat: int = 7) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.process_time() - start) / calls)
    return best


def calls_for(fn, target: float = 0.05) -> int:
    """Enough calls that one repeat takes about ``target`` seconds of CPU time."""
    start = time.process_time()
    fn()
    once = max(time.process_time() - start, 1e-6)
    return max(1, int(target / once))


def _format(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[200, 5],
                        help="numbers of training points (5: the per-call overhead)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", action="store_true",
                        help="also print the impls' time by primitive at the first n")
    args = parser.parse_args(argv)
    if any(os.environ.get(k) != v for k, v in WORKER_ENV.items()):
        env = {**os.environ, **WORKER_ENV}
        sys.exit(subprocess.run([sys.executable, *sys.argv], env=env).returncode)

    print(f"Python {platform.python_version()}, NumPy {np.__version__}, SciPy "
          f"{scipy.__version__}; single-threaded BLAS; {args.rounds} rounds, alternating, "
          "process CPU time, best of 7 per round\n")
    print("| case | hand-written | grad | grad / hand-written (range) | jit(grad) | "
          "jit(grad) / hand-written (range) |")
    print("|---|---:|---:|---:|---:|---:|")
    for n in args.n:
        hand, *contenders = measure(n, args.rounds)
        cells = []
        for times in contenders:
            ratios = [f / h for h, f in zip(hand, times)]
            cells.append(f"{_format(statistics.median(times))} | {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f})")
        print(f"| GP log marginal likelihood, n = {n}, 3-D RBF | "
              f"{_format(statistics.median(hand))} | {' | '.join(cells)} |")
    if args.profile:
        profile(args.n[0])


def _problem(n: int):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, size=(n, 3))
    y = np.sin(x).sum(axis=1) + 0.1 * rng.standard_normal(n)
    theta = np.array([np.log(0.8), np.log(1.5), np.log(0.05)])
    return theta, squared_distances(x), y


def profile(n: int, repeat: int = 20) -> None:
    """The CPU time of each impl in ``grad``'s jaxpr, by primitive, per gradient."""
    args = _problem(n)
    closed = ft.make_jaxpr(ft.grad(log_marginal_likelihood))(*args)
    jaxpr, by_primitive = closed.jaxpr, {}
    for _ in range(repeat):
        env = dict(zip(jaxpr.constvars, closed.consts)) | dict(zip(jaxpr.invars, args))
        for eqn in jaxpr.eqns:
            values = [env[v] if v in env else v.val for v in eqn.invars]
            start = time.process_time()
            out = impl_rules[eqn.primitive](*values, **eqn.params)
            spent = time.process_time() - start
            name = eqn.primitive.name
            by_primitive[name] = by_primitive.get(name, 0.0) + spent / repeat
            outs = out if eqn.primitive.multiple_results else [out]
            env.update(zip(eqn.outvars, outs))
    impls = sum(by_primitive.values())
    print(f"\nThe impls of the gradient's jaxpr at n = {n} ({len(jaxpr.eqns)} equations), "
          f"{_format(impls)} in all (the n = 5 row shows the tracing and AD overhead):\n")
    print("| primitive | impl time | share |\n|---|---:|---:|")
    for name, spent in sorted(by_primitive.items(), key=lambda kv: -kv[1]):
        if spent >= 0.01 * impls:
            print(f"| {name} | {_format(spent)} | {spent / impls:.0%} |")


def measure(n: int, rounds: int) -> list[list[float]]:
    """Per-round times of the hand-written gradient, functrans's ``grad`` and its
    ``jit(grad)`` at ``n`` points, checked to agree first."""
    theta, sqdist, y = _problem(n)
    ours, compiled = ft.grad(log_marginal_likelihood), ft.jit(ft.grad(log_marginal_likelihood))
    expected = grad_by_hand(theta, sqdist, y)
    for fn in (ours, compiled):
        np.testing.assert_allclose(fn(theta, sqdist, y), expected, rtol=1e-8, atol=1e-8)
    sides = [lambda: grad_by_hand(theta, sqdist, y), lambda: ours(theta, sqdist, y),
             lambda: compiled(theta, sqdist, y)]
    calls = [calls_for(fn) for fn in sides]
    times = [[] for _ in sides]
    for r in range(rounds):
        order = range(len(sides)) if r % 2 == 0 else reversed(range(len(sides)))
        for i in order:
            times[i].append(best_time(sides[i], calls[i]))
    return times


if __name__ == "__main__":
    main()
