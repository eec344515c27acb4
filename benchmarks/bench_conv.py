"""Convolutions: the gradient of a two-layer CNN, functrans (eager and ``jit``) against a
hand-written im2col forward and backward pass in NumPy.

Workload: a batch of 64 images of 3 x 32 x 32, two 3 x 3 "SAME" convolutions (3 -> 16 ->
16 channels, ReLU after the first), the loss ``sum(y ** 2) / 64``; the gradient with
respect to both kernels.  The NumPy contender gathers each layer's patches into an im2col
matrix (nine slice copies), multiplies once, and goes back with two matrix products and a
col2im of nine slice additions.  Where installed, torch on the CPU (``conv2d`` and
autograd, one thread) and ``jax.jit`` (float64) compute the same gradient too.

Method, as benchmarks/run.py: the script re-executes itself with glibc's malloc thresholds
fixed and BLAS on one thread; every round runs each contender once in a shuffled order,
each timed by process CPU time over enough calls to take ~50 ms; the table gives the
median over rounds of the per-round ratio to NumPy.

    python benchmarks/bench_conv.py [--rounds 15]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys

import run  # noqa: E402  (its environment, timer and calibration)
from run import calibrate, cpu_time  # noqa: E402

if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in run.ENV.items()):
    os.environ.update(run.ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import lax  # noqa: E402


def loss(w1, w2, x):
    h = ft.nn.relu(lax.conv(x, w1, (1, 1), "SAME"))
    y = lax.conv(h, w2, (1, 1), "SAME")
    return fnp.sum(y * y) / x.shape[0]


def _im2col(x, k: int):
    """(N, C, H, W) -> cols (C, k, k, N, H, W) for a k x k "SAME" convolution."""
    n, c, h, w = x.shape
    p = k // 2
    padded = np.zeros((c, n, h + 2 * p, w + 2 * p))
    padded[:, :, p:p + h, p:p + w] = x.transpose(1, 0, 2, 3)
    cols = np.empty((c, k, k, n, h, w))
    for i in range(k):
        for j in range(k):
            cols[:, i, j] = padded[:, :, i:i + h, j:j + w]
    return cols


def _col2im(dcols, shape, k: int):
    n, c, h, w = shape
    p = k // 2
    padded = np.zeros((c, n, h + 2 * p, w + 2 * p))
    for i in range(k):
        for j in range(k):
            padded[:, :, i:i + h, j:j + w] += dcols[:, i, j]
    return padded[:, :, p:p + h, p:p + w].transpose(1, 0, 2, 3)


def hand_grad(w1, w2, x):
    """The gradient of ``loss`` w.r.t. (w1, w2), written out with im2col."""
    n, _, h, w = x.shape
    k = w1.shape[2]
    o1, o2 = w1.shape[0], w2.shape[0]
    cols1 = _im2col(x, k)
    z1 = (w1.reshape(o1, -1) @ cols1.reshape(-1, n * h * w)).reshape(o1, n, h, w)
    a1 = np.maximum(z1, 0)
    cols2 = _im2col(a1.transpose(1, 0, 2, 3), k)
    y = w2.reshape(o2, -1) @ cols2.reshape(-1, n * h * w)
    dy = (2.0 / n) * y
    dw2 = (dy @ cols2.reshape(-1, n * h * w).T).reshape(w2.shape)
    dcols2 = (w2.reshape(o2, -1).T @ dy).reshape(cols2.shape)
    da1 = _col2im(dcols2, (n, o1, h, w), k).transpose(1, 0, 2, 3)  # (o1, n, h, w)
    dz1 = np.where(z1 > 0, da1, 0.0)
    dw1 = (dz1.reshape(o1, -1) @ cols1.reshape(-1, n * h * w).T).reshape(w1.shape)
    return dw1, dw2


def _others() -> dict:
    """The same gradient in the libraries installed: label -> (function, conversion of the
    arguments, done once).  torch on the CPU (``torch.nn.functional.conv2d``, autograd,
    one thread as the others), and JAX's ``jit`` (float64)."""
    found = {}
    try:
        import torch
    except ImportError:
        pass
    else:
        torch.set_num_threads(1)
        conv2d = torch.nn.functional.conv2d

        def torch_grad(w1, w2, x):
            x = x.detach()  # no gradient for the images, as for the others
            h = torch.relu(conv2d(x, w1, padding=1))
            y = conv2d(h, w2, padding=1)
            return torch.autograd.grad((y * y).sum() / x.shape[0], (w1, w2))

        found["torch CPU"] = (torch_grad, lambda a: torch.tensor(a, requires_grad=True))
    try:
        import jax
    except ImportError:
        pass
    else:
        jax.config.update("jax_enable_x64", True)
        from jax import lax as jlax

        def jax_loss(w1, w2, x):
            h = jax.nn.relu(jlax.conv(x, w1, (1, 1), "SAME"))
            y = jlax.conv(h, w2, (1, 1), "SAME")
            return (y * y).sum() / x.shape[0]

        jitted = jax.jit(jax.grad(jax_loss, argnums=(0, 1)))
        found["jax.jit"] = (lambda *a: jax.block_until_ready(jitted(*a)), jax.device_put)
    return found


def _numpy(values) -> list:
    return [v.detach().numpy() if hasattr(v, "detach") else np.asarray(v) for v in values]


def main(rounds: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 3, 32, 32))
    w1 = rng.standard_normal((16, 3, 3, 3)) / 3
    w2 = rng.standard_normal((16, 16, 3, 3)) / 12
    args = (w1, w2, x)
    grad = ft.grad(loss, argnums=(0, 1))
    contenders = {"numpy im2col": hand_grad, "functrans eager": grad,
                  "functrans jit": ft.jit(grad)}
    inputs = {label: args for label in contenders}
    for label, (fn, convert) in _others().items():
        contenders[label], inputs[label] = fn, tuple(convert(a) for a in args)
    want = hand_grad(*args)
    for label, fn in contenders.items():
        for got, expected in zip(_numpy(fn(*inputs[label])), want):
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9, err_msg=label)
    numbers = {label: calibrate(fn, inputs[label]) for label, fn in contenders.items()}
    times = {label: [] for label in contenders}
    ratios = {label: [] for label in contenders}
    for _ in range(rounds):
        order = list(contenders)
        random.shuffle(order)
        measured = {label: cpu_time(contenders[label], inputs[label], numbers[label])
                    for label in order}
        for label in contenders:
            times[label].append(measured[label])
            ratios[label].append(measured[label] / measured["numpy im2col"])
    print("grad of a two-layer CNN (64 x 3 x 32 x 32, 3x3 SAME, 3 -> 16 -> 16), "
          f"median of {rounds} rounds")
    print("| contender | time | ratio to NumPy |")
    print("|---|---|---|")
    for label in contenders:
        print(f"| {label} | {statistics.median(times[label]) * 1e3:.1f} ms | "
              f"{statistics.median(ratios[label]):.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    main(parser.parse_args().rounds)
