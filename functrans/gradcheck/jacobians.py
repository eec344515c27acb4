"""Jacobian builders: the numerical Jacobian by central differences (every perturbed point
of a chunk evaluated in one vmapped call) and the analytic one by ``vmap`` of the pullback
(reverse mode) or of ``jvp`` (forward mode), all realified to float64 on the host.

Perturbations and unit vectors are made on the device of the values they perturb; the
outputs are copied to the host, explicitly, to assemble the Jacobian.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from functrans import backend, core
from functrans.api import vmap
from functrans.core import ConcretizationTypeError, TracerArrayConversionError, get_aval
from functrans.primitives.control_flow_dask import is_lazy
from functrans.gradcheck.options import CHUNK_ELEMENTS, MAX_JACOBIAN, NOISE_ULPS, numeric_dtype
from functrans.gradcheck.problem import Problem
from functrans.gradcheck.realify import is_complex, realify, symbolic_zero

__all__ = ["PACED_CHUNK_SECONDS", "chunk_ranges", "batched_call", "stencil_values", "host_rows",
           "rounding_noise", "chunk_size_for",
           "NumericJacobian", "numeric_jacobian", "direct_column", "unit_chunk", "map_units",
           "reverse_jacobian", "forward_jacobian", "analytic_jacobian"]


#: With a progress bar, chunks are sized to take about this long, so that the bar moves
#: several times a second (without one, chunks are as large as memory allows).
PACED_CHUNK_SECONDS = 0.25


def chunk_ranges(total: int, chunk: int, tick: Callable[[int], None] | None = None
                 ) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` ranges covering ``range(total)``, at most ``chunk`` long.  With
    ``tick`` (a progress bar's counter, called with each finished range's length) the
    first range is short and the next ones are sized from the measured pace to take
    about :data:`PACED_CHUNK_SECONDS`.

    >>> list(chunk_ranges(5, 2))
    [(0, 2), (2, 4), (4, 5)]
    """
    if tick is None:
        for start in range(0, total, chunk):
            yield start, min(total, start + chunk)
        return
    start, size = 0, max(1, min(chunk, -(-total // 64)))
    while start < total:
        stop = min(total, start + size)
        began = time.perf_counter()
        yield start, stop
        elapsed = time.perf_counter() - began
        tick(stop - start)
        pace = (stop - start) / max(elapsed, 1e-6)
        size = int(max(1, min(chunk, pace * PACED_CHUNK_SECONDS, 2 * size + 1)))
        start = stop


def batched_call(fun: Callable, args: list, in_axes: list, size: int, state: dict) -> list:
    """``vmap(fun)`` on the batched arguments, or a Python loop if ``fun`` cannot be
    vmapped (the result notes it)."""
    if not state.get("loop"):
        try:
            return [backend.to_host(y) for y in vmap(fun, in_axes=tuple(in_axes))(*args)]
        except (NotImplementedError, TracerArrayConversionError,
                ConcretizationTypeError) as e:
            state["loop"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    rows = []
    for b in range(size):
        rows.append([backend.to_host(y) for y in fun(*[x if ax is None else x[b]
                                                       for x, ax in zip(args, in_axes)])])
    return [np.stack([r[k] for r in rows]) for k in range(len(rows[0]))]


def stencil_values(problem: Problem, xs: list, eps: float, steps: Sequence[float],
                   start: int, stop: int, state: dict) -> np.ndarray:
    """f at ``xs + step * eps * e_j`` for each step and each real input coordinate j in
    [start, stop), as an array (len(steps), stop - start, M) of realified outputs."""
    count = stop - start
    batch = len(steps) * count
    args: list = []
    in_axes: list[int | None] = []
    offset = 0
    for x, n in zip(xs, problem.in_sizes):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo >= hi:
            args.append(x)
            in_axes.append(None)
            offset += n
            continue
        xp = backend.array_module(x)
        aval = get_aval(x)
        size = aval.size
        stacked = xp.repeat(xp.reshape(x, (1, size)), batch, axis=0)
        local = backend.arange(lo, hi, like=x) - offset
        position = local % size
        unit = (xp.where(local < size, 1.0, 1j) if is_complex(aval.dtype)
                else backend.ones(hi - lo, like=x))
        if is_lazy(x):  # dask writes no entries in place: add one-hot rows instead
            units = one_hot_units(x, start, stop, offset, n, 1j)
            stacked = stacked + xp.concatenate([(step * eps) * units for step in steps])
        for s, step in enumerate(steps if not is_lazy(x) else ()):
            rows = s * count + backend.arange(lo - start, hi - start, like=x)
            stacked[rows, position] += ((step * eps) * unit).astype(aval.dtype)
        args.append(xp.reshape(stacked, (batch,) + aval.shape))
        in_axes.append(0)
        offset += n
    outs = batched_call(problem.fun, args, in_axes, batch, state)
    return host_rows(outs, batch).reshape(len(steps), count, -1)


def host_rows(outs: list, batch: int, conjugate: bool = False) -> np.ndarray:
    """The batched outputs ``outs`` as one host array (batch, realified coordinates); one
    float64 output is returned as it is (a view where possible), without copies.  With
    ``conjugate`` the complex conjugates."""
    if len(outs) == 1:
        y = backend.to_host(outs[0])
        if y.dtype == np.float64:
            return y.reshape(batch, -1)
    return np.concatenate([realify(np.conj(backend.to_host(y)) if conjugate else y, 1)
                           for y in outs], axis=1)


def rounding_noise(values: np.ndarray, dtype, eps: float) -> np.ndarray:
    ulp = np.finfo(dtype).eps
    return NOISE_ULPS * ulp * values / eps


def chunk_size_for(problem: Problem, steps: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return max(1, int(chunk_size))
    per_point = sum(a.size for a in problem.in_avals) + sum(a.size for a in problem.out_avals)
    return max(1, CHUNK_ELEMENTS // (steps * max(1, per_point)))


@dataclass
class NumericJacobian:
    jacobian: np.ndarray  # (M, N) realified
    noise: np.ndarray
    kink: np.ndarray | None = None  # |right - left| one-sided derivative estimates
    kink_tol_noise: np.ndarray | None = None
    left: np.ndarray | None = None
    right: np.ndarray | None = None
    nonfinite_change: np.ndarray | None = None
    # With `detect`: the 5-point estimate (8 (f(x+h/2) - f(x-h/2)) - (f(x+h) - f(x-h))) / 6h,
    # accurate to fourth order in h (Chainer's numerical_grad returns it then).
    five_point: np.ndarray | None = None
    vmap_note: str | None = None
    xs: list | None = None  # the inputs in the numerical side's dtype
    eps: float = 0.0


def numeric_jacobian(problem: Problem, eps: float, dtype=None, chunk_size=None,
                     detect: bool = False, tick: Callable[[int], None] | None = None
                     ) -> NumericJacobian:
    """The realified numerical Jacobian of ``problem`` by central differences, all
    perturbed points of a chunk evaluated in one vmapped call.  With ``detect`` the 5-point
    stencil (±eps, ±eps/2, 0) also estimates one-sided derivatives at every coordinate.
    ``tick`` counts finished columns (see :func:`chunk_ranges`)."""
    xs = problem.cast(dtype)
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    if n_in * n_out > MAX_JACOBIAN:
        raise ValueError(f"gradcheck: the Jacobian of {problem.label} has {n_out} x {n_in} "
                         "real entries, too many for full mode; use fast_mode=True")
    steps = (1.0, -1.0, 0.5, -0.5) if detect else (1.0, -1.0)
    real_dtype = max((np.finfo(numeric_dtype(a.dtype, dtype)).dtype for a in problem.in_avals),
                     key=lambda d: np.finfo(d).eps)
    chunk = chunk_size_for(problem, len(steps), chunk_size)
    jac = np.empty((n_out, n_in))
    noise = np.empty((n_out, n_in))
    out = NumericJacobian(jac, noise)
    if detect:
        f0 = np.concatenate([realify(y) for y in problem.fun(*xs)])
        out.left, out.right = np.empty((n_out, n_in)), np.empty((n_out, n_in))
        out.kink_tol_noise = np.empty((n_out, n_in))
        out.nonfinite_change = np.zeros((n_out, n_in), bool)
        out.five_point = np.empty((n_out, n_in))
    state: dict = {}
    scratch = None  # |f(x - h e_j)|, reused across chunks
    noise_scale = NOISE_ULPS * np.finfo(real_dtype).eps  # as rounding_noise, in place
    for start, stop in chunk_ranges(n_in, chunk, tick):
        vals = stencil_values(problem, xs, eps, steps, start, stop, state)
        plus, minus = vals[0], vals[1]
        # Written straight into (transposed views of) the results: no full-size temporaries.
        jac_t, noise_t = jac[:, start:stop].T, noise[:, start:stop].T
        np.subtract(plus, minus, out=jac_t)
        jac_t /= 2 * eps
        if scratch is None or scratch.shape[0] < stop - start:
            scratch = np.empty(minus.shape)
        np.abs(minus, out=scratch[:stop - start])
        np.abs(plus, out=noise_t)
        noise_t += scratch[:stop - start]
        noise_t *= noise_scale
        noise_t /= 2 * eps
        if detect:
            half_plus, half_minus = vals[2], vals[3]
            right = (4 * half_plus - 3 * f0 - plus) / eps
            left = (3 * f0 - 4 * half_minus + minus) / eps
            out.right[:, start:stop], out.left[:, start:stop] = right.T, left.T
            out.five_point[:, start:stop] = ((8 * (half_plus - half_minus) - (plus - minus))
                                             / (6 * eps)).T
            scale = (np.abs(plus) + 4 * np.abs(half_plus) + 6 * np.abs(f0)
                     + 4 * np.abs(half_minus) + np.abs(minus))
            out.kink_tol_noise[:, start:stop] = rounding_noise(scale, real_dtype, eps).T
            finite = [np.isfinite(v) for v in (plus, minus, half_plus, half_minus)]
            change = np.zeros_like(finite[0])
            for fin in finite:
                change |= fin != np.isfinite(f0)
            out.nonfinite_change[:, start:stop] = change.T
    out.vmap_note = state.get("loop")
    out.xs, out.eps = xs, eps
    return out


def direct_column(problem: Problem, num: NumericJacobian, j: int) -> np.ndarray:
    """Column ``j`` of the numerical Jacobian from two plain (unbatched) calls of f."""
    values = []
    for sign in (1.0, -1.0):
        shifted, offset = [], 0
        for x, n in zip(num.xs, problem.in_sizes):
            if offset <= j < offset + n:
                local = j - offset
                size = get_aval(x).size
                step = (sign * num.eps) * (1j if local >= size else 1.0)
                x = x.copy()
                x.reshape(-1)[local % size] += step
            shifted.append(x)
            offset += n
        values.append(np.concatenate([realify(y) for y in problem.fun(*shifted)]))
    return (values[0] - values[1]) / (2 * num.eps)


# ------------------------------------------------------------------------------------------
# Analytic side
# ------------------------------------------------------------------------------------------


def one_hot_units(v, start: int, stop: int, offset: int, n: int, imaginary_unit):
    """Rows ``start:stop`` of the realified identity restricted to the value ``v`` (whose
    ``n`` coordinates start at ``offset``), as ``(stop - start, v.size)`` rows of ``v``'s
    dtype, built by comparisons rather than by writing entries (dask arrays)."""
    aval = get_aval(v)
    xp = backend.array_module(v)
    every = backend.arange(start, stop, like=v) - offset  # this value's coordinates: [0, n)
    onehot = (((every % aval.size)[:, None] == backend.arange(aval.size, like=v)[None, :])
              & ((every >= 0) & (every < n))[:, None])
    unit = (xp.where(every < aval.size, 1.0, imaginary_unit)[:, None]
            if is_complex(aval.dtype) else 1.0)
    return (unit * onehot).astype(aval.dtype)


def unit_chunk(values, sizes, start: int, stop: int, imaginary_unit):
    """Unit vectors for the realified coordinates ``start:stop`` of ``values`` (``sizes``
    coordinates each: a complex value has its real parts, then its imaginary parts, which
    get ``imaginary_unit``).  Returns, for each value the chunk touches, an array of shape
    ``(stop - start, *value.shape)``, and the positions of those values."""
    count = stop - start
    batched, positions, offset = [], [], 0
    for k, (v, n) in enumerate(zip(values, sizes)):
        lo, hi = max(start, offset), min(stop, offset + n)
        if lo < hi:
            aval = get_aval(v)
            local = backend.arange(lo, hi, like=v) - offset
            if is_lazy(v):  # dask writes no entries in place
                units = one_hot_units(v, start, stop, offset, n, imaginary_unit)
                batched.append(units.reshape((count,) + aval.shape))
                positions.append(k)
                offset += n
                continue
            units = backend.zeros((count, aval.size), aval.dtype, like=v)
            unit = backend.array_module(v).where(local < aval.size, 1.0, imaginary_unit) if (
                is_complex(aval.dtype)) else 1.0
            units[backend.arange(lo - start, hi - start, like=v), local % aval.size] = unit
            batched.append(units.reshape((count,) + aval.shape))
            positions.append(k)
        offset += n
    return batched, positions


def map_units(fun: Callable, batched: list, state: dict | None = None,
              concrete: bool = False) -> list:
    """``vmap(fun)(*batched)``; a batch of one unit vector (a scalar output's only row) is
    a plain call, which costs a fraction of tracing ``fun`` under vmap.  When ``fun``
    cannot be vmapped (say a ``custom_vjp`` rule that calls NumPy), the rows are computed
    one by one, as PyTorch's gradcheck does, and ``state["loop"]`` says why.  ``concrete``:
    one by one anyway, so that ``fun`` sees concrete values (a pullback whose compiled
    code runs on concrete cotangents only)."""
    size = batched[0].shape[0]
    if size == 1:
        return [backend.to_host(y)[None] for y in fun(*[b[0] for b in batched])]
    state = {} if state is None else state
    if not state.get("loop") and not concrete:
        try:
            return vmap(fun)(*batched)
        except (NotImplementedError, TracerArrayConversionError,
                ConcretizationTypeError) as e:
            state["loop"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    rows = [[backend.to_host(y) for y in fun(*[b[i] for b in batched])] for i in range(size)]
    return [np.stack([r[k] for r in rows]) for k in range(len(rows[0]))]


def reverse_jacobian(problem: Problem, chunk_size=None, state: dict | None = None,
                     tick: Callable[[int], None] | None = None) -> np.ndarray:
    """The realified Jacobian from ``vmap`` of the pullback over unit output coordinates.
    Row of a coordinate c (1 for a real part, 1j for an imaginary one) is
    ``conj(pullback(conj(c)))`` in real coordinates."""
    outs, pullback = problem.outs, problem.pullback()
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    jac = np.empty((n_out, n_in))
    chunk = chunk_size_for(problem, 1, chunk_size)
    for start, stop in chunk_ranges(n_out, chunk, tick):
        batched, positions = unit_chunk(outs, problem.out_sizes, start, stop, -1j)

        def pull(*cts, positions=tuple(positions)):
            full = [symbolic_zero(y) for y in outs]
            for k, c in zip(positions, cts):
                full[k] = c
            grads = pullback(full)
            if not any(isinstance(c, core.Tracer) for c in cts):  # a plain call (one row):
                problem.directional_cache.setdefault("rev", (full, grads))  # nondet reuses it
            return grads

        rows = host_rows(map_units(pull, batched, state, problem.compiled_rows()),
                         stop - start, conjugate=True)
        if start == 0 and stop == n_out:
            return rows  # one chunk: its rows are the Jacobian, no copy
        jac[start:stop] = rows
    return jac


def forward_jacobian(problem: Problem, chunk_size=None, state: dict | None = None,
                     tick: Callable[[int], None] | None = None) -> np.ndarray:
    """The realified Jacobian from ``vmap`` of ``jvp`` over unit input coordinates
    (1 for a real part, 1j for an imaginary part)."""
    n_in, n_out = sum(problem.in_sizes), sum(problem.out_sizes)
    jac = np.empty((n_out, n_in))
    chunk = chunk_size_for(problem, 1, chunk_size)
    for start, stop in chunk_ranges(n_in, chunk, tick):
        batched, positions = unit_chunk(problem.leaves, problem.in_sizes, start, stop, 1j)

        def push(*ts, positions=tuple(positions)):
            full = [symbolic_zero(x) for x in problem.leaves]
            for i, t in zip(positions, ts):
                full[i] = t
            return problem.push(full)

        cols = host_rows(map_units(push, batched, state), stop - start)
        if start == 0 and stop == n_in:
            return cols.T  # one chunk: a transposed view, no copy
        jac[:, start:stop] = cols.T
    return jac


def analytic_jacobian(problem: Problem, mode: str, chunk_size,
                      state: dict | None = None,
                      tick: Callable[[int], None] | None = None) -> np.ndarray:
    """The realified analytic Jacobian in ``mode``; ``state["loop"]`` is set when the
    derivative could not be vmapped and its rows (columns) were computed one by one.
    ``tick`` counts finished rows (columns)."""
    if mode == "rev":
        return reverse_jacobian(problem, chunk_size, state, tick)
    return forward_jacobian(problem, chunk_size, state, tick)
