"""How fast is gradcheck?  Prints a ratio table.

The function is f(v) = tanh(W v) · v with W an n x n float64 matrix (n = 1000 by default),
checked at a random v.  Three ways to check its derivative:

  loop   what PyTorch's slow mode does: perturb one input element at a time, 2n calls of f
         for the numerical gradient, one vjp for the analytic one ("rev"), plus one jvp per
         input element for the forward-mode Jacobian ("fwd+rev"); compare every entry.
  full   functrans.gradcheck: the same central differences, every perturbed point of a
         chunk evaluated in one vmapped call; analytic Jacobians by vmap of vjp / jvp.
  fast   functrans.gradcheck(fast_mode=True): vᵀ J u for random unit u, v.

Each method is also run on a copy of f whose tanh has a JVP rule 1% too large, to show that
they reach the same verdict.  Times are the best of several rounds; each round times every
method once, in turn, so that a burst of load on a shared machine slows one round of all
methods rather than every repeat of one.

    python benchmarks/bench_gradcheck.py [--n 1000] [--rounds 7]
"""
from __future__ import annotations

import argparse
import functools
import os
import platform
import timeit

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.core import Primitive, abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching

STEP = 1e-6
TOL = 1e-5  # gradcheck's float64 default (atol = rtol)

# A tanh whose JVP (and hence vjp) is 1% too large: the "wrong rule" case.
tanh_wrong_p = Primitive("tanh_1pct_wrong")
impl_rules[tanh_wrong_p] = np.tanh
abstract_eval_rules[tanh_wrong_p] = lambda aval: aval
ad.defjvp(tanh_wrong_p,
          lambda g, ans, x: lax.mul(g, lax.mul(1.01, lax.sub(1.0, lax.mul(ans, ans)))))
batching.defvectorized(tanh_wrong_p)


def make_functions(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, n)) / np.sqrt(n)
    v = rng.standard_normal(n)

    def f(x):
        return fnp.dot(fnp.tanh(w @ x), x)

    def f_wrong(x):
        return fnp.dot(tanh_wrong_p.bind(w @ x), x)

    return f, f_wrong, v


def loop_check(f, x, modes) -> bool:
    """The per-element loop: 2n evaluations, then one vjp (and n jvps for "fwd")."""
    n = x.size
    numeric = np.empty(n)
    xp = x.copy()
    for j in range(n):
        xp[j] = x[j] + STEP
        plus = f(xp)
        xp[j] = x[j] - STEP
        minus = f(xp)
        xp[j] = x[j]
        numeric[j] = (plus - minus) / (2 * STEP)
    analytic = [ft.grad(f)(x)]
    if "fwd" in modes:
        basis = np.zeros(n)
        column = np.empty(n)
        for j in range(n):
            basis[j] = 1.0
            column[j] = ft.jvp(f, (x,), (basis,))[1]
            basis[j] = 0.0
        analytic.append(column)
    return all(bool(np.all(np.abs(a - numeric) <= TOL + TOL * np.abs(numeric)))
               for a in analytic)


def gradcheck_verdict(f, x, **options) -> bool:
    return bool(ft.gradcheck(f, raise_exception=False, **options)(x))


def measure(functions: dict, rounds: int) -> dict:
    """Best time per call of each function over interleaved rounds."""
    numbers = {}
    for name, fn in functions.items():
        number = 1
        while timeit.timeit(fn, number=number) < 0.02 and number < 10_000:
            number *= 4  # enough calls that one sample takes at least 20 ms
        numbers[name] = number
    samples = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            samples[name].append(timeit.timeit(fn, number=numbers[name]) / numbers[name])
    return {name: min(times) for name, times in samples.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    print(f"# gradcheck benchmark: f(v) = tanh(W v) · v, float64; {platform.machine()}, "
          f"{os.cpu_count()} CPUs, NumPy {np.__version__}, Python {platform.python_version()}")
    for n in args.n:
        f, f_wrong, x = make_functions(n)
        # Every method evaluates f at the 2n points x ± h e_j; full mode does it in one
        # vmapped call, and that call alone bounds how much faster than the loop it can be.
        points = np.concatenate([x + STEP * np.eye(n), x - STEP * np.eye(n)])
        batched_f = ft.vmap(f)
        functions = {"f": lambda: f(x), "grad": lambda: ft.grad(f)(x),
                     "jvp": lambda: ft.jvp(f, (x,), (x,)),
                     "vmap(f) at 2n points": lambda: batched_f(points)}
        verdicts = {}
        for modes in (("rev",), ("fwd", "rev")):
            label = "+".join(modes)
            functions[f"loop ({label})"] = functools.partial(loop_check, f, x, modes)
            functions[f"full ({label})"] = functools.partial(ft.gradcheck(f, modes=modes), x)
            functions[f"fast ({label})"] = functools.partial(
                ft.gradcheck(f, modes=modes, fast_mode=True), x)
            verdicts[f"loop ({label})"] = (loop_check(f, x, modes), loop_check(f_wrong, x, modes))
            for name, fast in (("full", False), ("fast", True)):
                verdicts[f"{name} ({label})"] = (
                    gradcheck_verdict(f, x, modes=modes, fast_mode=fast),
                    gradcheck_verdict(f_wrong, x, modes=modes, fast_mode=fast))
        times = measure(functions, args.rounds)
        t_eval = times["f"]
        rows = []
        for name, (ok, ok_wrong) in verdicts.items():
            t = times[name]
            t_loop = times["loop" + name[4:]]
            rows.append((name, t, t_loop / t, t / t_eval, "pass" if ok else "FAIL",
                         "pass" if ok_wrong else "FAIL"))
        t_points = times["vmap(f) at 2n points"]
        print(f"\nn = {n}: one call of f {t_eval * 1e6:.0f} µs, grad {times['grad'] / t_eval:.1f} "
              f"calls, jvp {times['jvp'] / t_eval:.1f} calls; f at all 2n points in one vmapped "
              f"call {t_points * 1e3:.2f} ms, so full (rev) can be at most "
              f"{times['loop (rev)'] / t_points:.1f}x faster than the loop here")
        print("| method | time (ms) | speed-up over loop | f-call equivalents | verdict, "
              "correct f | verdict, 1% wrong rule |")
        print("|---|---:|---:|---:|---|---|")
        for name, t, speedup, calls, ok, ok_wrong in rows:
            print(f"| {name} | {t * 1e3:.2f} | {speedup:.1f}x | {calls:.1f} | {ok} | "
                  f"{ok_wrong} |")


if __name__ == "__main__":
    main()
