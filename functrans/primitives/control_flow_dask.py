"""Control flow over lazy (dask) arrays: what ``cond``, ``while_loop`` and ``scan`` do when
their operands are ``dask.array`` arrays, so that a transform never computes them.

* ``scan`` over a chunked leading axis becomes one task per chunk of rows: the body,
  compiled for the chunk's array library (NumPy, or CuPy for CuPy-backed chunks), loops over
  that chunk's rows; the carry is threaded from each chunk's task to the next.  The graph
  has a task per chunk, not per row, and nothing is computed while it is built.
* ``cond`` / ``switch`` with a lazy index computes every branch lazily and selects the
  chosen one's outputs elementwise, as a batched ``cond`` does.
* ``while_loop`` stays driven from the host: each iteration computes its predicate (one
  compute) after persisting the carry, so that an iteration's graph starts from the last
  iteration's values rather than from the loop's start.

dask is imported only when a dask array is seen.  The chunk tasks of ``scan`` run
functrans (the compiled body) on the workers; everything else builds plain dask graphs.
"""
from __future__ import annotations

import functools
import uuid
from typing import Any, Callable, Sequence

import numpy as np

from functrans import backend
from functrans.interpreters import codegen

__all__ = ["is_lazy", "any_lazy", "chunked_scan", "lazy_cond", "host_driven_while",
           "SCAN_TASK_PREFIX"]

#: the start of the names of scan's chunk tasks in dask graphs
SCAN_TASK_PREFIX = "scan-chunk"


def is_lazy(x) -> bool:
    """Whether ``x`` is a dask array (a lazy array: its values exist only once computed)."""
    return backend.is_lazy(x)


def any_lazy(args) -> bool:
    """Whether any of ``args`` is a dask array."""
    return any(is_lazy(x) for x in args)


# ------------------------------------------------------------------------------------------
# scan: one task per chunk of rows
# ------------------------------------------------------------------------------------------

def _scan_rows(run_scan: Callable, jaxpr, carry_avals, y_avals, num_consts: int,
               num_carry: int, rows: int, reverse: bool, consts, carry, xs):
    """The task of one chunk: the scan's body, compiled for the chunk's library, run over
    its ``rows`` rows.  Returns ``(carry, ys)`` as tuples of concrete arrays."""
    args = [*consts, *carry, *xs]
    library = backend.library_of(*args)
    body = codegen.compile_jaxpr(jaxpr, library, "scan_body", owned_outputs=False).fn
    outs = run_scan(body, y_avals, num_consts, num_carry, rows, reverse, *args)
    xp = library.xp
    carry_out = tuple(xp.asarray(c, dtype=a.dtype) for c, a in zip(outs[:num_carry], carry_avals))
    return carry_out, tuple(outs[num_carry:])


def _row_bounds(xs, length: int) -> tuple:
    """The chunk sizes along the scanned axis: those of the dask leaf of ``xs`` with the
    most chunks there (the data; the others, a cotangent of ones say, follow it), else one
    chunk."""
    chunked = [tuple(int(c) for c in x.chunks[0]) for x in xs if is_lazy(x)]
    return max(chunked, key=len) if chunked else (length,)


def chunked_scan(run_scan: Callable, jaxpr, num_consts: int, num_carry: int, length: int,
                 reverse: bool, args: Sequence):
    """``scan``'s results as dask arrays, built from one task per chunk of the scanned
    axis: ``run_scan`` (the row loop, ``control_flow._run_scan``) runs the body compiled
    from ``jaxpr`` over each chunk's rows, the carry passing from task to task.  Nothing is
    computed.  Leaves of ``xs`` with other chunks are rechunked to the most finely chunked one's."""
    import dask
    import dask.array as da
    from dask.array.utils import meta_from_array

    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    out_avals = jaxpr.out_avals
    carry_avals, y_avals = out_avals[:num_carry], out_avals[num_carry:]
    bounds = _row_bounds(xs, length)
    starts = np.concatenate([[0], np.cumsum(bounds)]).astype(int)
    xs = [x.rechunk({0: bounds}) if is_lazy(x) and tuple(x.chunks[0]) != bounds else x
          for x in xs]
    witness = next(x for x in args if is_lazy(x))
    order = range(len(bounds) - 1, -1, -1) if reverse else range(len(bounds))
    name = f"{SCAN_TASK_PREFIX}-{uuid.uuid4().hex}"  # the dashboard shows "scan-chunk"
    # the constants once in the graph (a key every chunk's task depends on), not per task
    consts = dask.delayed(consts, name=f"{name}-consts") if consts else []
    state = carry
    pieces: dict[int, Any] = {}
    for k in order:
        if bounds[k] == 0:
            continue
        rows = [x.blocks[k] if is_lazy(x) else x[starts[k]:starts[k + 1]] for x in xs]
        task = functools.partial(_scan_rows, run_scan, jaxpr, carry_avals, y_avals,
                                 num_consts, num_carry, bounds[k], reverse)
        part = dask.delayed(task, nout=2)(consts, state, rows,
                                          dask_key_name=f"{name}-{k}")
        state, pieces[k] = part[0], part[1]

    def lazy(value, shape, aval):
        return da.from_delayed(value, shape=shape, dtype=aval.dtype,
                               meta=meta_from_array(witness._meta, len(shape), aval.dtype))

    if state is carry:  # no rows at all: the carry is the initial one
        carry_out = list(carry)
    else:
        carry_out = [lazy(state[j], a.shape, a) for j, a in enumerate(carry_avals)]
    ys = []
    for j, aval in enumerate(y_avals):
        blocks = [lazy(pieces[k][j], (bounds[k],) + aval.shape, aval)
                  for k in range(len(bounds)) if bounds[k]]
        ys.append(da.concatenate(blocks, axis=0) if blocks else
                  da.zeros((0,) + aval.shape, dtype=aval.dtype))
    return carry_out + ys


# ------------------------------------------------------------------------------------------
# cond with a lazy index: every branch, then a selection
# ------------------------------------------------------------------------------------------

def lazy_cond(branch_fns: Sequence[Callable], index, ops):
    """``switch``'s outputs for a dask ``index``: every branch computed lazily on ``ops``,
    each output chosen elementwise by the (clipped) index, as a batched ``cond`` does."""
    xp = backend.array_module(index)
    index = xp.clip(index, 0, len(branch_fns) - 1)
    results = None
    for i, branch in enumerate(branch_fns):
        outs = list(branch(*ops))
        if results is None:
            results = outs
            continue
        chosen = index == i
        results = [xp.where(chosen, o, r).astype(np.result_type(o)) for o, r in zip(outs, results)]
    return results


# ------------------------------------------------------------------------------------------
# while_loop: host-driven, the carry persisted per iteration
# ------------------------------------------------------------------------------------------

def host_driven_while(cond_fn: Callable, body_fn: Callable, cconsts, bconsts, carry):
    """``while_loop`` over dask values: before each predicate is computed (one compute per
    iteration) the carry is persisted, so each iteration's graph is one body deep."""
    import dask

    carry = list(carry)
    while True:
        lazy_at = [i for i, c in enumerate(carry) if is_lazy(c)]
        if lazy_at:
            persisted = dask.persist(*[carry[i] for i in lazy_at])
            for i, c in zip(lazy_at, persisted):
                carry[i] = c
        pred = cond_fn(*cconsts, *carry)[0]
        if is_lazy(pred):
            (pred,) = dask.compute(pred)
        if not bool(pred):
            return carry
        carry = list(body_fn(*bconsts, *carry))
