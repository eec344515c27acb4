"""Peak memory (tracemalloc) and time of grad through a 50-layer tanh network, with and
without ``checkpoint`` around each layer.

Run: python benchmarks/bench_checkpoint.py
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

import functrans as ft
import functrans.numpy as fnp

LAYERS, WIDTH, BATCH = 50, 256, 256


def make_loss(segment: int, policy=None):
    """The loss, with every ``segment`` consecutive layers checkpointed (0: none)."""
    def block(ws, x):
        for w in ws:
            x = fnp.tanh(x @ w)
        return x
    run = ft.checkpoint(block, policy=policy) if segment else block

    def loss(ws, x):
        step = segment or len(ws)
        for i in range(0, len(ws), step):
            x = run(ws[i:i + step], x)
        return fnp.sum(x * x)
    return loss


def measure(loss, ws, x):
    grad = ft.grad(loss)
    g = grad(ws, x)  # warm up
    start = time.perf_counter()
    for _ in range(3):
        grad(ws, x)
    elapsed = (time.perf_counter() - start) / 3  # timed without tracemalloc's overhead
    tracemalloc.start()
    grad(ws, x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return g, peak / 2**20, elapsed


def main():
    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH) for _ in range(LAYERS)]
    x = rng.standard_normal((BATCH, WIDTH))
    base_g, base_mem, base_t = measure(make_loss(0), ws, x)
    print(f"grad of a {LAYERS}-layer tanh network, width {WIDTH}, batch {BATCH}, float64")
    print(f"{'variant':<30}{'peak MiB':>10}{'memory ratio':>14}{'time s':>9}{'time ratio':>12}")
    print(f"{'no checkpoint':<30}{base_mem:>10.1f}{1.0:>14.2f}{base_t:>9.3f}{1.0:>12.2f}")
    for name, segment, policy in (
            ("checkpoint every layer", 1, None),
            ("checkpoint every 5 layers", 5, None),
            ("every layer, dots_saveable", 1, ft.checkpoint_policies.dots_saveable)):
        g, mem, t = measure(make_loss(segment, policy), ws, x)
        for a, b in zip(g, base_g):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        print(f"{name:<30}{mem:>10.1f}{mem / base_mem:>14.2f}{t:>9.3f}{t / base_t:>12.2f}")


if __name__ == "__main__":
    main()
