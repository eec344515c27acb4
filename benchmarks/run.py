"""One benchmark runner: functrans eager and jit against hand-written NumPy derivatives (and
HIPS autograd, JAX and torch.func when installed), side by side in one process.

Method (the machine is shared and noisy): every contender of a workload runs once per
round, in a shuffled order; a round times each with the process CPU time over enough calls
to take ~20 ms; the table gives the median over rounds of each contender's time divided by
the hand-written NumPy time *of the same round*.  glibc's malloc thresholds are fixed (the
script re-executes itself with ``MALLOC_MMAP_THRESHOLD_`` and ``MALLOC_TRIM_THRESHOLD_``
set) so that page faults from returning memory to the kernel do not decide the large
workloads, and BLAS runs on one thread.

    python benchmarks/run.py [--rounds 15] [--only mlp_grad,hvp] [--markdown] [--no-compile]
    python benchmarks/run.py --device cupy [--rounds 9] [--markdown]

With ``--device cupy`` every array goes to the GPU first: the hand-written derivatives run on
CuPy arrays (the same code: NumPy's functions dispatch to CuPy's), functrans eager and
``jit`` (its fused regions CuPy kernels) and ``jit unfused`` (one CuPy call per operation)
on them, JAX on its default device (the GPU where jaxlib has CUDA); times are wall-clock
per call with the GPU synchronised after each timing, ratios to the hand-written CuPy
derivative.  ``--device standin`` runs the same on the tests' NumPy-backed CuPy stand-in:
it checks this mode without a GPU (its times mean nothing).

Each row also gives jit's first call (tracing and compiling) in a new process, with an
empty kernel cache (cold) and with the cache the cold process filled (warm).  With
``FUNCTRANS_BENCH_NUMBA=1`` a contender "jit numba" runs beside "jit": the same program
with every fused region compiled by numba instead of LLVM, in the same rounds.

Workloads:
  mlp_grad          grad of the MSE of a 128 x 256 -> 256 -> 256 -> 1 tanh MLP (all params)
  chain200_grad     grad of 200 elementwise ops on 8 floats
  one_op_grad       grad of sum(sin(x)) on 8 floats: the fixed cost of a grad call
  per_example_grad  vmap(grad) of a logistic-regression loss, 256 examples x 64 features
  hvp               jvp of grad (a Hessian-vector product), n = 1000
  jacfwd_200        jacfwd of a 200 -> 200 function (tanh(W x) * x)
  jacrev_200        jacrev of the same function
  embedding_per_example  vmap(grad) of a logistic loss on the mean of 16 rows of a
                    10,000 x 64 embedding table (gathers batched by their indices), 256
                    examples, against hand-written NumPy
  embedding_table_grad   grad w.r.t. that table (gather's transpose: a scatter-add), against
                    np.add.at
  pair_potential_grad    grad of a soft pair potential over the triu_indices pairs of 500
                    particles (124,750 pairs), against a bincount-based hand derivative
  make_jaxpr_10k    make_jaxpr of a function of 10,000 equations (functrans only; ratio
                    to functrans eager evaluation of the same function)
and the peak memory (tracemalloc) of one call of grad(mlp) for each contender.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import tracemalloc

ENV = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
if __name__ == "__main__" and any(os.environ.get(k) != v for k, v in ENV.items()):
    os.environ.update(ENV)
    os.execv(sys.executable, [sys.executable, *sys.argv])

import numpy as np  # noqa: E402

import functrans as ft  # noqa: E402
import functrans.numpy as fnp  # noqa: E402


# -- workloads ------------------------------------------------------------------------------
# Each workload is make(rng) -> (f(m), hand, args, kind): ``f(m)`` is the function written
# against the NumPy-like module ``m`` (functrans.numpy, autograd.numpy, jax.numpy), ``hand``
# the hand-written NumPy derivative, ``kind`` which derivative is timed.


def _mlp(rng):
    sizes = [(256, 256), (256, 256), (256, 1)]
    params = [(rng.normal(size=s) / np.sqrt(s[0]), np.zeros(s[1])) for s in sizes]
    x, y = rng.normal(size=(128, 256)), rng.normal(size=(128, 1))

    def f(m):
        def loss(params, x, y):
            h = x
            for w, b in params[:-1]:
                h = m.tanh(h @ w + b)
            w, b = params[-1]
            return m.mean((h @ w + b - y) ** 2)
        return loss

    def hand(params, x, y):
        hs = [x]
        for w, b in params[:-1]:
            hs.append(np.tanh(hs[-1] @ w + b))
        w, b = params[-1]
        out = hs[-1] @ w + b
        d = 2 * (out - y) / out.size
        grads = []
        for i in range(len(params) - 1, -1, -1):
            w, b = params[i]
            grads.append((hs[i].T @ d, d.sum(axis=0)))
            if i:
                d = (d @ w.T) * (1 - hs[i] * hs[i])
        return grads[::-1]

    return f, hand, (params, x, y), "grad"


def _chain(rng):
    def f(m):
        def loss(x):
            for _ in range(50):
                x = m.tanh(m.sin(x)) * 0.9 + 0.1
            return m.sum(x)
        return loss

    def hand(x):
        cosines, tanhs = [], []
        for _ in range(50):
            cosines.append(np.cos(x))
            t = np.tanh(np.sin(x))
            tanhs.append(t)
            x = t * 0.9 + 0.1
        g = np.ones_like(x)
        for c, t in zip(reversed(cosines), reversed(tanhs)):
            g = g * 0.9 * (1 - t * t) * c
        return g

    return f, hand, (rng.normal(size=8),), "grad"


def _one_op(rng):
    def f(m):
        return lambda x: m.sum(m.sin(x))

    def hand(x):
        return np.cos(x)

    return f, hand, (rng.normal(size=8),), "grad"


def _per_example(rng):
    x, y = rng.normal(size=(256, 64)), (rng.random(256) > 0.5).astype(float)
    w = rng.normal(size=64) / 8

    def f(m):
        def loss(w, xi, yi):
            z = m.dot(xi, w)
            return m.logaddexp(0.0, z) - yi * z
        return loss

    def hand(w, x, y):
        z = x @ w
        s = 0.5 * (1 + np.tanh(0.5 * z))  # the logistic function
        return (s - y)[:, None] * x

    return f, hand, (w, x, y), "per_example"


def _hvp(rng):
    x, v = rng.normal(size=1000), rng.normal(size=1000)

    def f(m):
        return lambda x: m.sum(m.tanh(x) ** 2 * x)

    def hand(x, v):
        # f = sum(t^2 x): f' = t^2 + 2 t s x, f'' = 2 t s * 2 + 2 x (s^2 - 2 t^2 s)
        t = np.tanh(x)
        s = 1 - t * t
        return (4 * t * s + 2 * x * s * (s - 2 * t * t)) * v

    return f, hand, (x, v), "hvp"


def _jac(mode):
    def make(rng):
        w, x = rng.normal(size=(200, 200)) / 14, rng.normal(size=200)

        def f(m):
            return lambda x, w: m.tanh(w @ x) * x

        def hand(x, w):
            t = np.tanh(w @ x)
            return (1 - t * t)[:, None] * w * x[:, None] + np.diag(t)

        return f, hand, (x, w), mode
    return make


def _embedding(rng):
    table = rng.normal(size=(10_000, 64)) / 8
    idx = rng.integers(0, 10_000, size=(256, 16))
    y = (rng.random(256) > 0.5).astype(float)
    w = rng.normal(size=64) / 8

    def f(m):
        def loss(w, table, idx, y):  # one example: the mean of 16 embedding rows
            z = m.dot(m.mean(m.take(table, idx, axis=0), axis=0), w)
            return m.logaddexp(0.0, z) - y * z
        return loss

    def hand(w, table, idx, y):
        feats = table[idx].mean(axis=1)
        s = 0.5 * (1 + np.tanh(0.5 * (feats @ w)))
        return (s - y)[:, None] * feats

    return f, hand, (w, table, idx, y), "per_example4"


def _add_at(target, index, updates) -> None:
    """``np.add.at``; on a device array (``--device``), its library's scatter-add
    (``cupyx.scatter_add`` on CuPy), which NumPy's ``add.at`` does not dispatch to."""
    if isinstance(target, np.ndarray):
        np.add.at(target, index, updates)
    else:
        from functrans import backend
        backend.library_of(target).scatter_add(target, index, updates)


def _embedding_table(rng):
    table = rng.normal(size=(10_000, 64)) / 8
    idx = rng.integers(0, 10_000, size=(256, 16))
    w = rng.normal(size=64) / 8

    def f(m):
        def loss(table, w, idx):  # the gradient w.r.t. the table: a scatter-add
            feats = m.mean(m.take(table, idx, axis=0), axis=1)
            return m.sum(m.tanh(feats @ w))
        return loss

    def hand(table, w, idx):
        feats = table[idx].mean(axis=1)
        d = 1 - np.tanh(feats @ w) ** 2
        rows = np.repeat((d[:, None] * w[None, :]) / idx.shape[1], idx.shape[1], axis=0)
        grad = np.zeros_like(table)
        _add_at(grad, idx.reshape(-1), rows)
        return grad

    return f, hand, (table, w, idx), "grad"


def _pairs(rng):
    n = 500
    x = rng.normal(size=(n, 3)) * 3
    i, j = np.triu_indices(n, 1)

    def f(m):
        def energy(x, i, j):  # a soft pair potential over all pairs
            d = m.take(x, i, axis=0) - m.take(x, j, axis=0)
            return m.sum(m.exp(-m.sum(d * d, axis=1)))
        return energy

    def hand(x, i, j):
        d = x[i] - x[j]
        g = (-2 * np.exp(-np.sum(d * d, axis=1)))[:, None] * d
        return np.stack([np.bincount(i, g[:, k], minlength=n) -
                         np.bincount(j, g[:, k], minlength=n) for k in range(3)], axis=1)

    return f, hand, (x, i, j), "grad"


WORKLOADS = {"mlp_grad": _mlp, "chain200_grad": _chain, "one_op_grad": _one_op,
             "per_example_grad": _per_example,
             "hvp": _hvp, "jacfwd_200": _jac("jacfwd"), "jacrev_200": _jac("jacrev"),
             "embedding_per_example": _embedding, "embedding_table_grad": _embedding_table,
             "pair_potential_grad": _pairs}


def _derivative(lib, f, kind):
    """``kind``'s derivative of ``f`` with the transforms of ``lib`` (functrans or jax),
    which share JAX's API; None where the library lacks the transform."""
    if kind == "grad":
        return lib.grad(f)
    if kind == "per_example":
        return lib.vmap(lib.grad(f), in_axes=(None, 0, 0))
    if kind == "per_example4":
        return lib.vmap(lib.grad(f), in_axes=(None, None, 0, 0))
    if kind == "hvp":
        return lambda x, v: lib.jvp(lib.grad(f), (x,), (v,))[1]
    return (lib.jacfwd if kind == "jacfwd" else lib.jacrev)(f)


def _transformed(f, kind, jit: bool):
    """The functrans derivative of ``f`` (written against functrans.numpy) for a workload
    kind, eager or under jit."""
    g = _derivative(ft, f, kind)
    return ft.jit(g) if jit else g


def _per_example_loop(grad_f, kind):
    """Per-example gradients the way a library without ``vmap`` computes them: one
    gradient per example, stacked (the examples are the last two arguments)."""
    shared = 1 if kind == "per_example" else 2

    def loop(*args):
        fixed, batched = args[:shared], args[shared:]
        return np.stack([grad_f(*fixed, *example) for example in zip(*batched)])
    return loop


def _others(make, kind) -> dict:
    """Other libraries' versions of a workload, for those installed: label -> function, or
    (function, conversion of the arguments to the library's arrays, done once).  A
    workload with a ``torch`` attribute (``torch -> (function, conversion)``) gets a torch
    CPU column."""
    found = {}
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        pass
    else:
        f = make(np.random.default_rng(0))[0](anp)
        if kind == "grad":
            found["autograd"] = autograd.grad(f)
        elif kind == "hvp":
            found["autograd"] = autograd.hessian_vector_product(f)
        elif kind in ("jacfwd", "jacrev"):
            found["autograd"] = autograd.jacobian(f)
        elif kind in ("per_example", "per_example4"):  # no vmap in autograd: a loop
            found["autograd"] = _per_example_loop(autograd.grad(f), kind)
    jax = _jax()
    if jax is not None:
        g = _derivative(jax, make(np.random.default_rng(0))[0](jax.numpy), kind)
        jitted = jax.jit(g)
        found["jax"] = (lambda *a: jax.block_until_ready(g(*a)), jax.device_put)
        found["jax.jit"] = (lambda *a: jax.block_until_ready(jitted(*a)), jax.device_put)
    torch_version = getattr(make, "torch", None)  # a workload's own torch version, if any
    if torch_version is not None:
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.set_num_threads(1)  # as BLAS for the others
            found["torch CPU"] = torch_version(torch)
    return found


_JAX: list = []  # [jax or None], once found


def _jax():
    """JAX with float64 on, or None where it is missing or fails to start (the reason
    printed once: a run on a machine of one try must not end at a contender's import)."""
    if not _JAX:
        try:
            import jax
            jax.config.update("jax_enable_x64", True)
            jax.devices()
        except ImportError:
            _JAX.append(None)
        except Exception as e:  # noqa: BLE001 (a broken plugin: no JAX column, say why)
            print(f"JAX skipped: {type(e).__name__}: {e}")
            _JAX.append(None)
        else:
            _JAX.append(jax)
    return _JAX[0]


def _flatten(x, to_host=np.asarray):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _flatten(item, to_host)]
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k], to_host)]
    return [to_host(x)]


class Device:
    """An array library on a GPU for ``--device``: its module, copies to and from it, and
    the wait for its queued work."""

    def __init__(self, name: str):
        self.name = name
        if name == "cupy":
            import cupy
            self.xp, self.put, self.get = cupy, cupy.asarray, cupy.asnumpy
            self.synchronize = lambda: cupy.cuda.get_current_stream().synchronize()
            self.protocols = None
        elif name == "standin":  # the tests' stand-in: this mode checked without a GPU
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
                os.path.abspath(__file__))), "tests"))
            import cupy_standin
            self.xp, self.put, self.get = cupy_standin, cupy_standin.asarray, cupy_standin.asnumpy
            self.synchronize = lambda: None
            self.protocols = cupy_standin.array_protocols
        else:
            raise SystemExit(f"--device {name!r}: 'cupy' or 'standin'")

    def to_host(self, x) -> np.ndarray:
        return self.get(x) if isinstance(x, self.xp.ndarray) else np.asarray(x)

    def hand(self, fn):
        """The hand-written derivative ``fn`` on the device's arrays (NumPy's functions reach
        CuPy's through NumPy's dispatch protocols, which the stand-in allows in a block)."""
        if self.protocols is None:
            return fn

        def on_standin(*args):
            with self.protocols():
                return fn(*args)
        return on_standin

    def tree_put(self, tree):
        from functrans.tree_util import tree_map
        return tree_map(self.put, tree)


def cpu_time(fn, args, number: int) -> float:
    """Process CPU seconds per call of ``fn(*args)``, over ``number`` calls."""
    start = time.process_time()
    for _ in range(number):
        fn(*args)
    return (time.process_time() - start) / number


def gpu_timer(device: Device):
    """Wall-clock seconds per call of ``fn(*args)`` over ``number`` calls, the device's
    queued work finished before the clock starts and before it stops (a GPU's time is not
    the process's CPU time)."""
    def timer(fn, args, number: int) -> float:
        device.synchronize()
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        device.synchronize()
        return (time.perf_counter() - start) / number
    return timer


def calibrate(fn, args, timer=cpu_time) -> int:
    """How many calls of ``fn(*args)`` make one timing of at least 20 ms."""
    number = 1
    while True:
        t = timer(fn, args, number)
        if t * number > 0.02 or number >= 1 << 16:
            return number
        number *= 2


def _numba_loops(g, args):
    """The jitted ``g`` compiled now for ``args`` with every fused region numba's."""
    from functrans.interpreters import codegen
    previous = codegen.FUSION_COMPILER
    codegen.FUSION_COMPILER = "numba"
    try:
        g(*args)
    finally:
        codegen.FUSION_COMPILER = previous
    return g


def _unfused(g, args):
    """The jitted ``g`` compiled now for ``args`` without fused regions."""
    previous = ft.config.fusion
    ft.config.fusion = False
    try:
        g(*args)
    finally:
        ft.config.fusion = previous
    return g


def run(names, rounds: int, markdown: bool, compile_dir: str | None = None,
        device: Device | None = None) -> list:
    rows = []
    base = "numpy" if device is None else device.name  # the hand-written derivative
    timer = cpu_time if device is None else gpu_timer(device)
    for name in names:
        make = WORKLOADS[name]
        f, hand, args, kind = make(np.random.default_rng(0))
        f = f(fnp)
        contenders = {base: hand, "eager": _transformed(f, kind, False),
                      "jit": _transformed(f, kind, True)}
        inputs = {label: args for label in contenders}
        if device is not None:
            contenders[base] = device.hand(hand)
            inputs = {label: device.tree_put(args) for label in contenders}
            contenders["jit unfused"] = _unfused(_transformed(f, kind, True), inputs["jit"])
            inputs["jit unfused"] = inputs["jit"]
        others = _others(make, kind)
        if device is not None:  # JAX (on its default device); autograd and torch on the CPU
            others = {label: fn for label, fn in others.items() if label.startswith("jax")}
        contenders.update(others)
        if os.environ.get("FUNCTRANS_BENCH_NUMBA") == "1" and device is None:
            contenders["jit numba"] = _numba_loops(_transformed(f, kind, True), args)
        for label, fn in list(contenders.items()):
            convert = None
            if isinstance(fn, tuple):
                fn, convert = fn
                contenders[label] = fn
            if label not in inputs:
                inputs[label] = tuple(convert(a) for a in args) if convert else args
        expected = _flatten(hand(*args))
        for label, fn in list(contenders.items()):
            try:
                got = _flatten(fn(*inputs[label]), device.to_host if device else np.asarray)
                if kind in ("jacfwd", "jacrev") and label != base:
                    got = [got[0]]
                for a, b in zip(got, expected):
                    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10,
                                               err_msg=f"{name}: {label} disagrees")
            except NotImplementedError as e:  # a library without a rule this workload needs
                print(f"{name}: {label} skipped ({e})")
                del contenders[label]
            except Exception as e:  # another library failing is its column's loss alone
                if label not in others:
                    raise  # functrans's and the hand-written ones are what is measured
                print(f"{name}: {label} skipped ({type(e).__name__}: {str(e)[:300]})")
                del contenders[label]
        numbers = {label: calibrate(fn, inputs[label], timer)
                   for label, fn in contenders.items()}
        ratios = {label: [] for label in contenders}
        times = {label: [] for label in contenders}
        for _ in range(rounds):
            order = list(contenders)
            random.shuffle(order)
            round_times = {label: timer(contenders[label], inputs[label], numbers[label])
                           for label in order}
            for label in contenders:
                times[label].append(round_times[label])
                ratios[label].append(round_times[label] / round_times[base])
        row = (name, {label: (statistics.median(times[label]),
                              statistics.median(ratios[label])) for label in contenders})
        if compile_dir is not None:
            row += (compile_times(name, compile_dir, device.name if device else ""),)
        rows.append(row)
        _print_row(rows[-1], markdown)
    return rows


_FIRST_CALL = """
import sys, time
sys.argv = ["run.py"]
import numpy as np
import functrans as ft
import functrans.numpy as fnp
import run
name, device = {name!r}, {device!r}
f, hand, args, kind = run.WORKLOADS[name](np.random.default_rng(0))
synchronize = lambda: None
if device:  # the arrays on the GPU first; its queued work finished within each timing
    device = run.Device(device)
    args, synchronize = device.tree_put(args), device.synchronize
    synchronize()
g = run._transformed(f(fnp), kind, True)
start = time.perf_counter()
g(*args)
synchronize()
first = time.perf_counter() - start
start = time.perf_counter()
g(*args)
synchronize()
print(first - (time.perf_counter() - start))
"""


def compile_times(name: str, cache_dir: str, device: str = "") -> tuple:
    """First-call cost of ``jit`` on workload ``name`` (tracing and compiling: the first
    call's wall time less the second's), in a new process with the kernel cache in
    ``cache_dir``: cold (the directory empty), then warm (a second process, the cache
    filled by the first).  Each process imports functrans before timing (and numba where
    the regions are numba's, ``FUNCTRANS_FUSION_COMPILER=numba``, so that the times include
    numba's start-up in the process, its first loop, but not its import); with LLVM's
    loops the times include importing llvmlite.  With ``device`` (``--device``) the
    arrays are on the GPU and the kernels CuPy's, cached by CuPy in the same directory
    (``CUPY_CACHE_DIR``)."""
    import subprocess
    import tempfile
    times = []
    with tempfile.TemporaryDirectory(dir=cache_dir) as directory:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, FUNCTRANS_CACHE_DIR=directory, CUPY_CACHE_DIR=directory,
                   PYTHONPATH=os.pathsep.join(filter(None, [root,
                                                            os.environ.get("PYTHONPATH")])))
        from functrans.interpreters import codegen
        code = (("import numba\n" if codegen.FUSION_COMPILER == "numba" else "")
                + _FIRST_CALL.format(name=name, device=device))
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
            times.append(float(out.stdout.split()[-1]) if out.returncode == 0 else float("nan"))
    return tuple(times)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def _print_row(row, markdown: bool) -> None:
    name, results = row[:2]
    cells = [f"{label} {_fmt(t)} ({r:.2f}x)" for label, (t, r) in results.items()]
    if len(row) > 2:  # jit's first call, cold and warm kernel cache
        cold, warm = row[2]
        cells.append(f"jit first call cold {cold:.2f} s / warm {warm * 1e3:.0f} ms")
    print(f"| {name} | " + " | ".join(cells) + " |" if markdown else
          f"{name:<18} " + "   ".join(cells), flush=True)


def make_jaxpr_row(rounds: int) -> None:
    n = 10_000

    def f(x):
        for _ in range(n // 2):
            x = fnp.sin(x) * 0.5
        return x

    x = np.ones(3)
    t_trace = min(cpu_time(ft.make_jaxpr(f), (x,), 1) for _ in range(max(3, rounds // 5)))
    t_eager = min(cpu_time(f, (x,), 1) for _ in range(max(3, rounds // 5)))
    print(f"make_jaxpr_10k     trace {_fmt(t_trace)}   eager {_fmt(t_eager)}   "
          f"({t_trace / t_eager:.2f}x eager evaluation)")


def peak_memory_row() -> None:
    f, hand, args, kind = _mlp(np.random.default_rng(0))
    f = f(fnp)
    contenders = {"numpy": hand, "eager": _transformed(f, kind, False),
                  "jit": _transformed(f, kind, True)}
    peaks = {}
    for label, fn in contenders.items():
        for _ in range(3):  # warm: traces, compiles and records outside the measurement
            fn(*args)
        tracemalloc.start()
        fn(*args)
        peaks[label] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print("peak memory, grad(mlp): " + "   ".join(
        f"{label} {peak / 2**20:.2f} MiB ({peak / peaks['numpy']:.2f}x)"
        for label, peak in peaks.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip timing jit's first call in new processes (cold and "
                             "warm kernel cache)")
    parser.add_argument("--device", default="",
                        help="'cupy': every array on the GPU, ratios to hand-written CuPy "
                             "(wall clock); 'standin': the same on the tests' CuPy stand-in")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    from functrans.interpreters import codegen
    if args.device:
        device = Device(args.device)
        print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, "
              f"{device.xp.__name__} {getattr(device.xp, '__version__', '')}; median of "
              f"{args.rounds} rounds of per-round ratios to the hand-written derivative on "
              f"{args.device} arrays (wall clock, synchronised)")
        if args.device == "cupy":
            props = device.xp.cuda.runtime.getDeviceProperties(0)
            print(f"GPU: {props['name'].decode()}")
        jax = _jax()
        if jax is not None:
            print(f"JAX {jax.__version__} on {jax.devices()[0]}")
        print(f"jit fusion {'on' if codegen.fusion_active(backend_library(device)) else 'off'}")
        compile_dir = None
        if not args.no_compile:
            import tempfile
            compile_dir = tempfile.mkdtemp(prefix="functrans-bench-")
        run(names, args.rounds, args.markdown, compile_dir, device)
        return
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}; median of "
          f"{args.rounds} rounds of per-round ratios to hand-written NumPy (process CPU time)")
    print(f"jit fusion {'on' if codegen.fusion_active() else 'off'}")
    compile_dir = None
    if not args.no_compile:
        import tempfile
        compile_dir = tempfile.mkdtemp(prefix="functrans-bench-")
    run(names, args.rounds, args.markdown, compile_dir)
    if not args.only:
        make_jaxpr_row(args.rounds)
        peak_memory_row()


def backend_library(device: Device):
    """functrans's record of the device's array library (registered by its first array)."""
    from functrans import backend
    return backend.library_of(device.put(np.zeros(1)))


if __name__ == "__main__":
    main()
