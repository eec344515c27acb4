"""Pooling layers, forward and backward: functrans (eager ``grad`` and ``jit(grad)``)
against hand-written NumPy, and JAX and torch (CPU, autograd, one thread) when installed.

Workloads (NCHW, float64, a fixed random cotangent ``w`` so the loss is ``sum(pool(x) * w)``):
  max_pool_2x2     2x2 max-pool, stride 2, on 64 x 16 x 32 x 32: ``lax.reduce_window`` with
                   ``lax.max``; the NumPy version takes one strided slice per window tap,
                   three ``maximum`` calls forward, and routes each cotangent to the first
                   maximal tap backward (a reshape-and-``max`` forward measured 7x slower)
  avg_pool_2x2     the same with an average (``reduce_window`` with ``lax.add``, divided by 4)
  max_pool_3x3_s2  3x3 windows, stride 2, SAME padding, on 16 x 16 x 32 x 32 (overlapping
                   windows: the NumPy backward adds one strided slice per window tap)

Method: benchmarks/run.py's (interleaved rounds in shuffled order, process CPU time over
~20 ms per contender and round, median of the per-round ratios to NumPy, malloc thresholds
fixed, single-threaded BLAS).

    python benchmarks/bench_pool.py [--rounds 15] [--only max_pool_2x2] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import sys

import run  # noqa: E402  (re-executes with run.py's environment when run as a script)

if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in run.ENV.items()):
    os.environ.update(run.ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

import functrans.lax  # noqa: E402


def _lax_of(m):
    """The lax module that goes with the NumPy-like module ``m``."""
    if m.__name__.startswith("jax"):
        import jax.lax
        return jax.lax
    if m.__name__.startswith("functrans"):
        return functrans.lax
    raise NotImplementedError(f"{m.__name__} has no reduce_window")


def _max_pool_2x2(rng):
    x = rng.normal(size=(64, 16, 32, 32))
    w = rng.normal(size=(64, 16, 16, 16))

    def f(m):
        lax = _lax_of(m)

        def loss(x, w):
            pooled = lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                       "VALID")
            return m.sum(pooled * w)
        return loss

    def hand(x, w):  # one strided slice per window tap, the gradient to the first maximum
        taps = [(i, j) for i in range(2) for j in range(2)]
        pooled = x[:, :, 0::2, 0::2]
        for i, j in taps[1:]:
            pooled = np.maximum(pooled, x[:, :, i::2, j::2])
        grad = np.empty_like(x)
        taken = np.zeros(pooled.shape, bool)
        for i, j in taps:
            first = (x[:, :, i::2, j::2] == pooled) & ~taken
            taken |= first
            grad[:, :, i::2, j::2] = np.where(first, w, 0.0)
        return grad

    return f, hand, (x, w), "grad"


def _avg_pool_2x2(rng):
    x = rng.normal(size=(64, 16, 32, 32))
    w = rng.normal(size=(64, 16, 16, 16))

    def f(m):
        lax = _lax_of(m)

        def loss(x, w):
            pooled = lax.reduce_window(x, 0., lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
            return m.sum(pooled / 4 * w)
        return loss

    def hand(x, w):
        return np.broadcast_to(w[:, :, :, None, :, None] / 4,
                               x.shape[:2] + (16, 2, 16, 2)).reshape(x.shape)

    return f, hand, (x, w), "grad"


def _max_pool_3x3(rng):
    x = rng.normal(size=(16, 16, 32, 32))
    w = rng.normal(size=(16, 16, 16, 16))

    def f(m):
        lax = _lax_of(m)

        def loss(x, w):
            pooled = lax.reduce_window(x, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                                       "SAME")
            return m.sum(pooled * w)
        return loss

    def hand(x, w):  # SAME pads (0, 1) here: each window tap is one strided slice
        padded = np.pad(x, ((0, 0), (0, 0), (0, 1), (0, 1)), constant_values=-np.inf)
        taps = [(i, j) for i in range(3) for j in range(3)]
        views = np.stack([padded[:, :, i:i + 31:2, j:j + 31:2] for i, j in taps])
        first = np.argmax(views, axis=0)  # the first maximal tap of each window
        grad = np.zeros_like(padded)
        for k, (i, j) in enumerate(taps):
            grad[:, :, i:i + 31:2, j:j + 31:2] += np.where(first == k, w, 0.0)
        return grad[:, :, :32, :32]

    return f, hand, (x, w), "grad"


def _torch_pool(pool):
    """A workload's torch version: the gradient of ``sum(pool(x) * w)`` by autograd."""
    def version(torch):
        def grad(x, w):
            x = x.detach().requires_grad_()
            return torch.autograd.grad((pool(torch, x) * w).sum(), x)[0]
        return grad, torch.tensor
    return version


_max_pool_2x2.torch = _torch_pool(  # type: ignore[attr-defined]
    lambda torch, x: torch.nn.functional.max_pool2d(x, 2, 2))
_avg_pool_2x2.torch = _torch_pool(  # type: ignore[attr-defined]
    lambda torch, x: torch.nn.functional.avg_pool2d(x, 2, 2))
_max_pool_3x3.torch = _torch_pool(  # type: ignore[attr-defined]  # SAME pads (0, 1)
    lambda torch, x: torch.nn.functional.max_pool2d(
        torch.nn.functional.pad(x, (0, 1, 0, 1), value=-float("inf")), 3, 2))

WORKLOADS = {"max_pool_2x2": _max_pool_2x2, "avg_pool_2x2": _avg_pool_2x2,
             "max_pool_3x3_s2": _max_pool_3x3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    run.WORKLOADS.update(WORKLOADS)
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}; median of "
          f"{args.rounds} rounds of per-round ratios to hand-written NumPy (process CPU time)")
    run.run(names, args.rounds, args.markdown)


if __name__ == "__main__":
    main()
