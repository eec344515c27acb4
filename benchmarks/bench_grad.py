"""How much does functrans cost over hand-written NumPy?  Prints a ratio table.

Cases:
  chain  grad of a 200-op elementwise chain on a float64 vector of 1000 elements,
         against a hand-written NumPy forward and backward pass of the same chain.
  mlp    grad of the mean squared error of a two-layer tanh MLP (batch 128, 256 -> 256 -> 10)
         with respect to all four parameters, against hand-written NumPy backprop.
  sin    one eager op on a 3-vector, fnp.sin against np.sin: the per-op dispatch overhead.

Each pair is checked to agree before it is timed.  Times are the best of several repeats
(timeit-style), so they measure the code, not the noise of the machine.

    python benchmarks/bench_grad.py [--repeat 7]
"""
from __future__ import annotations

import argparse
import platform
import timeit

import numpy as np

import functrans as ft
import functrans.numpy as fnp

CHAIN_LENGTH = 200  # elementwise ops, in groups of 4: sin, tanh, * 0.9, + 0.1


# -- (a) elementwise chain -------------------------------------------------------------------


def chain_loss(x):
    for _ in range(CHAIN_LENGTH // 4):
        x = fnp.tanh(fnp.sin(x)) * 0.9 + 0.1
    return fnp.sum(x)


def chain_grad_numpy(x):
    # Forward: keep what the backward pass needs (cos of each sin input, each tanh output).
    cosines, tanhs = [], []
    for _ in range(CHAIN_LENGTH // 4):
        cosines.append(np.cos(x))
        t = np.tanh(np.sin(x))
        tanhs.append(t)
        x = t * 0.9 + 0.1
    g = np.ones_like(x)
    for c, t in zip(reversed(cosines), reversed(tanhs)):
        g = g * 0.9 * (1 - t * t) * c
    return g


# -- (b) MLP -------------------------------------------------------------------------------


def mlp_loss(params, x, y):
    hidden = fnp.tanh(x @ params["w1"] + params["b1"])
    out = hidden @ params["w2"] + params["b2"]
    return fnp.mean((out - y) ** 2)


def mlp_grad_numpy(params, x, y):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    out = hidden @ params["w2"] + params["b2"]
    d_out = 2 * (out - y) / out.size
    d_hidden = (d_out @ params["w2"].T) * (1 - hidden * hidden)
    return {"w1": x.T @ d_hidden, "b1": d_hidden.sum(axis=0),
            "w2": hidden.T @ d_out, "b2": d_out.sum(axis=0)}


# -- timing --------------------------------------------------------------------------------


def best_time(fn, repeat: int) -> float:
    """Best per-call time in seconds, with the call count chosen to fill ~0.1 s per repeat."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, number // 2)
    return min(timer.repeat(repeat=repeat, number=number)) / number


def format_time(seconds: float) -> str:
    if seconds < 1e-5:
        return f"{seconds * 1e6:.2f} µs"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="repeats per case (best is kept)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    x_chain = rng.normal(size=1000)
    chain_grad = ft.grad(chain_loss)
    np.testing.assert_allclose(chain_grad(x_chain), chain_grad_numpy(x_chain), rtol=1e-10)

    batch, n_in, n_hidden, n_out = 128, 256, 256, 10
    params = {"w1": rng.normal(size=(n_in, n_hidden)) / np.sqrt(n_in),
              "b1": np.zeros(n_hidden),
              "w2": rng.normal(size=(n_hidden, n_out)) / np.sqrt(n_hidden),
              "b2": np.zeros(n_out)}
    x_mlp, y_mlp = rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out))
    mlp_grad = ft.grad(mlp_loss)
    ours, theirs = mlp_grad(params, x_mlp, y_mlp), mlp_grad_numpy(params, x_mlp, y_mlp)
    for name in params:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-10, atol=1e-12)

    x_small = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(fnp.sin(x_small), np.sin(x_small))

    cases = [
        (f"grad, {CHAIN_LENGTH}-op elementwise chain, f64[1000]",
         lambda: chain_grad_numpy(x_chain), lambda: chain_grad(x_chain)),
        (f"grad, MLP {n_in}->{n_hidden}->{n_out}, batch {batch}",
         lambda: mlp_grad_numpy(params, x_mlp, y_mlp), lambda: mlp_grad(params, x_mlp, y_mlp)),
        ("eager sin, f64[3] (dispatch overhead)",
         lambda: np.sin(x_small), lambda: fnp.sin(x_small)),
    ]
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, "
          f"best of {args.repeat} repeats\n")
    header = f"| {'case':<45} | {'numpy':>10} | {'functrans':>10} | {'ratio':>7} |"
    print(header)
    print(f"|{'-' * 47}|{'-' * 11}:|{'-' * 11}:|{'-' * 8}:|")
    times = []
    for name, numpy_fn, functrans_fn in cases:
        t_numpy, t_ours = best_time(numpy_fn, args.repeat), best_time(functrans_fn, args.repeat)
        times.append((t_numpy, t_ours))
        print(f"| {name:<45} | {format_time(t_numpy):>10} | {format_time(t_ours):>10} | "
              f"{t_ours / t_numpy:>6.1f}x |")
    t_numpy, t_ours = times[-1]
    print(f"\nEager dispatch overhead: {(t_ours - t_numpy) * 1e6:.2f} µs per op "
          "(the sin row: functrans minus numpy).")


if __name__ == "__main__":
    main()
