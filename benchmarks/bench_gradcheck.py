"""How fast is gradcheck?  Prints two ratio tables.

Table "loop": f(v) = tanh(W v) · v (scalar output), W an n x n float64 matrix, checked at a
random v three ways:

  loop   what PyTorch's slow mode does: perturb one input element at a time, 2n calls of f
         for the numerical gradient, one vjp for the analytic one ("rev"), plus one jvp per
         input element for the forward-mode Jacobian ("fwd+rev"); compare every entry.
  full   functrans.gradcheck: the same central differences, every perturbed point of a
         chunk evaluated in one vmapped call; analytic Jacobians by vmap of vjp / jvp.
  fast   functrans.gradcheck(fast_mode=True): vᵀ J u for random unit u, v.

Table "limit": f(v) = tanh(W v) * v elementwise (vector output, an n x n Jacobian):

  limit  a hand-written batched NumPy check doing full mode's arithmetic: f at the 2n
         perturbed points in one batched call, the analytic Jacobian by a hand-written
         batched vjp (and jvp) over the n unit vectors, and one comparison pass
         |num - ana| <= atol + rtol |num| + rounding noise, with the five worst entries.
         It is the fastest full mode could be on this machine.
  full   functrans.gradcheck, as above; its ratio to the limit is what the table reports.
  fast   functrans.gradcheck(fast_mode=True), in evaluations of f ("f-call equivalents").

Each method is also run on a copy of f whose tanh has a JVP rule 1% too large, to show that
they reach the same verdict.

Method (the machine is shared and noisy, as in benchmarks/run.py): every contender runs once
per round, in a shuffled order; a round times each with the process CPU time over enough
calls to take ~20 ms; a ratio is the median over rounds of the per-round ratio (so a burst
of load slows both sides of a ratio alike).  glibc's malloc thresholds are fixed and BLAS
runs on one thread: the script re-executes itself with the environment set.

Table "fast": what fast mode's time is made of on the vector f (linearize, the linear map,
one backward pass, the two perturbed calls), in calls of f, beside the batched (vmapped)
alternatives for the two perturbed calls and for two backward passes.

    python benchmarks/bench_gradcheck.py [--n 1000] [--rounds 9] [--table loop limit fast]
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time

_ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in _ENV.items()):
    os.environ.update(_ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import functools  # noqa: E402

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402
from functrans import lax  # noqa: E402
from functrans.core import Primitive, abstract_eval_rules, impl_rules  # noqa: E402
from functrans.gradcheck.options import NOISE_ULPS  # noqa: E402
from functrans.interpreters import ad, batching, transpose  # noqa: E402

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
    """(scalar f, its wrong twin, vector f, its wrong twin, W, v)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((n, n)) / np.sqrt(n)
    v = rng.standard_normal(n)

    def f(x):
        return fnp.dot(fnp.tanh(w @ x), x)

    def f_wrong(x):
        return fnp.dot(tanh_wrong_p.bind(w @ x), x)

    def g(x):
        return fnp.tanh(w @ x) * x

    def g_wrong(x):
        return tanh_wrong_p.bind(w @ x) * x

    return f, f_wrong, g, g_wrong, w, v


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


def limit_check(w, x, modes, wrong: bool = False, worst: int = 5) -> bool:
    """Full mode's arithmetic for g(v) = tanh(W v) * v, written by hand with batched NumPy.

    Numerical side: g at the 2n points x ± h e_j in one batched call; J[:, j] is the central
    difference, and each entry's tolerance gets the rounding noise gradcheck adds
    (NOISE_ULPS ulps of |g(x + h e_j)| + |g(x - h e_j)|, over 2h).  Analytic side: the vjp
    of g over the n unit cotangents in one batched call (rows of J), and for "fwd" the jvp
    over the n unit tangents (columns).  Comparison: one pass per mode over the n x n
    entries, in place, with the count of failures and the ``worst`` largest ratios."""
    n = x.size
    rows = np.arange(n)
    points = np.repeat(x[None], 2 * n, axis=0)
    points[rows, rows] += STEP
    points[n + rows, rows] -= STEP
    values = np.tanh(points @ w.T)
    values *= points
    plus, minus = values[:n], values[n:]
    numeric = np.subtract(plus, minus).T
    numeric /= 2 * STEP
    noise = np.abs(plus)
    noise += np.abs(minus)
    noise *= NOISE_ULPS * np.finfo(np.float64).eps / (2 * STEP)
    tol = noise.T
    np.abs(numeric, out=values[:n].T)  # values is no longer needed: reuse its memory
    tol += TOL * values[:n].T
    tol += TOL
    t = np.tanh(w @ x)
    d = x * ((1.01 if wrong else 1.0) * (1 - t * t))  # d g_i / d (W x)_i
    units = np.eye(n)
    analytics = []
    if "fwd" in modes:  # jvp of each unit tangent e_j gives column j of J
        columns = units @ w.T
        columns *= d
        columns += units * t
        analytics.append(columns.T)
    if "rev" in modes:  # the vjp of each unit cotangent e_i gives row i of J
        rows_ = (units * d) @ w
        rows_ += units * t
        analytics.append(rows_)
    ok = True
    for analytic in analytics:
        ratio = np.subtract(analytic, numeric, out=units)
        np.abs(ratio, out=ratio)
        ratio /= tol
        failed = int(np.count_nonzero(ratio > 1))
        top = np.argpartition(ratio, ratio.size - worst, axis=None)[-worst:]
        top = top[np.argsort(ratio.reshape(-1)[top])[::-1]]
        _ = [(int(k) // n, int(k) % n, float(numeric.reshape(-1)[k]),
              float(analytic.reshape(-1)[k])) for k in top]
        ok = ok and failed == 0
    return ok


def gradcheck_verdict(f, x, **options) -> bool:
    return bool(ft.gradcheck(f, raise_exception=False, **options)(x))


def _time(fn, number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        fn()
    return (time.process_time() - start) / number


def _calibrate(fn) -> int:
    number = 1
    while _time(fn, number) * number < 0.02 and number < 1 << 14:
        number *= 2
    return number


def measure(functions: dict, rounds: int, pairs: dict) -> tuple[dict, dict, dict]:
    """Median CPU time of each function, and for each ``pairs[label] = (a, b)`` the median
    and the spread (min, max) over rounds of time(a) / time(b) within a round."""
    numbers = {name: _calibrate(fn) for name, fn in functions.items()}
    times = {name: [] for name in functions}
    ratios = {label: [] for label in pairs}
    for _ in range(rounds):
        order = list(functions)
        random.shuffle(order)
        got = {name: _time(functions[name], numbers[name]) for name in order}
        for name in functions:
            times[name].append(got[name])
        for label, (a, b) in pairs.items():
            ratios[label].append(got[a] / got[b])
    return ({name: statistics.median(t) for name, t in times.items()},
            {label: statistics.median(r) for label, r in ratios.items()},
            {label: (min(r), max(r)) for label, r in ratios.items()})


def loop_table(n: int, rounds: int) -> None:
    f, f_wrong, _, _, _, x = make_functions(n)
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
    pairs = {"points": ("loop (rev)", "vmap(f) at 2n points"), "grad": ("grad", "f"),
             "jvp": ("jvp", "f")}
    for name in verdicts:
        pairs[name + " speed-up"] = ("loop" + name[4:], name)
        pairs[name + " calls"] = (name, "f")
    times, ratio, _ = measure(functions, rounds, pairs)
    print(f"\nloop table, n = {n}, f(v) = tanh(W v) · v: one call of f {times['f'] * 1e6:.0f} "
          f"µs, grad {ratio['grad']:.1f} calls, jvp {ratio['jvp']:.1f} calls; f at all 2n "
          f"points in one vmapped call {times['vmap(f) at 2n points'] * 1e3:.2f} ms, so full "
          f"(rev) can be at most {ratio['points']:.1f}x faster than the loop here")
    print("| method | time (ms) | speed-up over loop | f-call equivalents | verdict, "
          "correct f | verdict, 1% wrong rule |")
    print("|---|---:|---:|---:|---|---|")
    for name, (ok, ok_wrong) in verdicts.items():
        print(f"| {name} | {times[name] * 1e3:.2f} | {ratio[name + ' speed-up']:.1f}x | "
              f"{ratio[name + ' calls']:.1f} | {'pass' if ok else 'FAIL'} | "
              f"{'pass' if ok_wrong else 'FAIL'} |")


def limit_table(n: int, rounds: int) -> None:
    _, _, g, g_wrong, w, x = make_functions(n)
    functions = {"f": lambda: g(x)}
    verdicts = {}
    pairs = {}
    for modes in (("rev",), ("fwd", "rev")):
        label = "+".join(modes)
        functions[f"limit ({label})"] = functools.partial(limit_check, w, x, modes)
        functions[f"full ({label})"] = functools.partial(ft.gradcheck(g, modes=modes), x)
        functions[f"fast ({label})"] = functools.partial(
            ft.gradcheck(g, modes=modes, fast_mode=True), x)
        verdicts[f"limit ({label})"] = (limit_check(w, x, modes),
                                        limit_check(w, x, modes, wrong=True))
        for name, fast in (("full", False), ("fast", True)):
            verdicts[f"{name} ({label})"] = (
                gradcheck_verdict(g, x, modes=modes, fast_mode=fast),
                gradcheck_verdict(g_wrong, x, modes=modes, fast_mode=fast))
        for name in ("limit", "full", "fast"):
            pairs[f"{name} ({label}) limit"] = (f"{name} ({label})", f"limit ({label})")
            pairs[f"{name} ({label}) calls"] = (f"{name} ({label})", "f")
    times, ratio, spread = measure(functions, rounds, pairs)
    print(f"\nlimit table, n = {n}, f(v) = tanh(W v) * v: one call of f "
          f"{times['f'] * 1e6:.0f} µs; median of {rounds} per-round ratios (min-max)")
    print("| method | time (ms) | ratio to limit | f-call equivalents | verdict, correct f | "
          "verdict, 1% wrong rule |")
    print("|---|---:|---:|---:|---|---|")
    for name, (ok, ok_wrong) in verdicts.items():
        lo, hi = spread[name + " limit"]
        clo, chi = spread[name + " calls"]
        print(f"| {name} | {times[name] * 1e3:.2f} | {ratio[name + ' limit']:.3f}x "
              f"({lo:.2f}-{hi:.2f}) | {ratio[name + ' calls']:.1f} ({clo:.1f}-{chi:.1f}) | "
              f"{'pass' if ok else 'FAIL'} | {'pass' if ok_wrong else 'FAIL'} |")


def fast_table(n: int, rounds: int) -> None:
    """What fast mode's time is made of, each part in calls of f (the vector f of the limit
    table), timed interleaved like the other tables; and the batched alternatives that
    were measured and not taken."""
    _, _, g, _, _, x = make_functions(n)
    rng = np.random.default_rng(1)
    u, v = rng.standard_normal(n), rng.standard_normal(n)
    # The library calls gradcheck makes: public linearize and vjp would also copy W, a
    # residual the caller could mutate (their "snapshot"), which gradcheck does not need.
    flat_g = lambda x: [g(x)]  # noqa: E731
    _, jaxpr, consts, out_tangents = ad.linearize_flat(flat_g, [x])
    linear_pullback = transpose.linear_pullback(jaxpr, consts, out_tangents)

    def pullback(ct):
        return linear_pullback([ct])[0]
    points = np.stack([x + STEP * u, x - STEP * u])
    cotangents = np.stack([v, -v])
    batched_f, batched_pullback = ft.vmap(g), ft.vmap(pullback)
    functions = {
        "f": lambda: g(x),
        "linearize (f and its linear map)": lambda: ad.linearize_flat(flat_g, [x]),
        "the linear map J u (forward mode)": lambda: ad.eval_linearized(
            jaxpr, consts, out_tangents, [u]),
        "pullback vᵀ J (one backward pass)": lambda: pullback(v),
        "f at x ± h u, two calls": lambda: (g(points[0]), g(points[1])),
        "f at x ± h u, one vmapped call": lambda: batched_f(points),
        "pullback of v and -v, two passes": lambda: (pullback(v), pullback(cotangents[1])),
        "pullback of v and -v, one vmapped pass": lambda: batched_pullback(cotangents),
        "fast (rev)": functools.partial(ft.gradcheck(g, modes=("rev",), fast_mode=True), x),
        "fast (fwd+rev)": functools.partial(ft.gradcheck(g, fast_mode=True), x),
    }
    pairs = {name: (name, "f") for name in functions if name != "f"}
    times, ratio, spread = measure(functions, rounds, pairs)
    print(f"\nfast-mode parts, n = {n}, f(v) = tanh(W v) * v: one call of f "
          f"{times['f'] * 1e6:.0f} µs; median of {rounds} per-round ratios (min-max)")
    print("| part | time (µs) | f-call equivalents |")
    print("|---|---:|---:|")
    for name in pairs:
        lo, hi = spread[name]
        print(f"| {name} | {times[name] * 1e6:.0f} | {ratio[name]:.2f} ({lo:.2f}-{hi:.2f}) |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--table", nargs="+", choices=("loop", "limit", "fast"),
                        default=["loop", "limit", "fast"])
    args = parser.parse_args(argv)
    print(f"# gradcheck benchmark, float64; {platform.machine()}, {os.cpu_count()} CPUs, "
          f"NumPy {np.__version__}, Python {platform.python_version()}, one BLAS thread, "
          f"process CPU time, load average {os.getloadavg()[0]:.1f}")
    for n in args.n:
        if "loop" in args.table:
            loop_table(n, args.rounds)
        if "limit" in args.table:
            limit_table(n, args.rounds)
        if "fast" in args.table:
            fast_table(n, args.rounds)


if __name__ == "__main__":
    main()
