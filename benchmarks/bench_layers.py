"""Where eager ``grad`` spends its time: the 200-operation chain of ``run.py`` timed layer
by layer, each layer including the ones before it.

    numpy              the hand-written NumPy derivative of run.py
    eager              the function on functrans.numpy, no transform
    jvp                ad.jvp_flat with a concrete tangent (JVP rules, tangents computed)
    linearize          ad.linearize_flat (JVP rules, tangent equations staged)
    structure key      reverse_mode.structure_key of the linear jaxpr
    compiled backward  reverse_mode.compiled_backward (the key, the cache, the compiled code)
    interpreted backward  transpose.backward_pass (the transpose rules interpreted)
    record             tape.record_flat: the forward pass recorded on a tape
    tape gradient      reverse_mode.compiled_gradient of that tape (key, cache, compiled code)
    grad               functrans.grad, whole (from the third call: recorded, compiled)
    autograd           HIPS autograd's grad, when installed

Process CPU time, median of 9 repeats.  Usage::

    python benchmarks/bench_layers.py [--size 8]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import reverse_mode
from functrans.interpreters import ad, tape, transpose
from run import WORKLOADS


def timed(fn, calls: int = 200) -> float:
    for _ in range(10):
        fn()
    times = []
    for _ in range(9):
        start = time.process_time()
        for _ in range(calls):
            fn()
        times.append((time.process_time() - start) / calls)
    return statistics.median(times)


def _linearized(loss, x):
    with ft.config.reverse_mode_set("compiled"):
        return ft.grad(loss)(x)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args(argv)
    chain, hand, _, _ = WORKLOADS["chain200_grad"](np.random.default_rng(0))
    x = np.random.default_rng(0).normal(size=args.size)
    loss = chain(fnp)
    flat = lambda x: [loss(x)]  # noqa: E731
    _, jaxpr, consts, _ = ad.linearize_flat(flat, [x])
    one = np.float64(1.0)
    undefined = [transpose.UndefinedPrimal(v.aval) for v in jaxpr.invars]
    for _ in range(reverse_mode.COMPILE_AFTER):
        reverse_mode.compiled_backward(jaxpr, consts, [one])
    _, recorded = tape.record_flat(flat, [x])
    for _ in range(reverse_mode.COMPILE_AFTER):
        reverse_mode.compiled_gradient(recorded, [one])
    rows = {
        "numpy": lambda: hand(x),
        "eager": lambda: loss(x),
        "jvp": lambda: ad.jvp_flat(flat, [x], [x]),
        "linearize": lambda: ad.linearize_flat(flat, [x]),
        "structure key": lambda: reverse_mode.structure_key(jaxpr),
        "compiled backward": lambda: reverse_mode.compiled_backward(jaxpr, consts, [one]),
        "interpreted backward": lambda: transpose.backward_pass(jaxpr, consts, undefined,
                                                                [one]),
        "record": lambda: tape.record_flat(flat, [x]),
        "tape gradient": lambda: reverse_mode.compiled_gradient(recorded, [one]),
        "grad": lambda: ft.grad(loss)(x),
        "grad, compiled (reverse_mode 'compiled')": lambda: _linearized(loss, x),
    }
    try:
        import autograd
        import autograd.numpy as anp
        rows["autograd"] = lambda: autograd.grad(chain(anp))(x)
    except ImportError:
        pass
    print(f"200-operation chain on f64[{args.size}], {len(jaxpr.eqns)} linear equations")
    print("| layer | time (µs) |\n|---|---:|")
    for name, fn in rows.items():
        print(f"| {name} | {timed(fn) * 1e6:.0f} |")


if __name__ == "__main__":
    main()
