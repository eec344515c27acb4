"""Primitives on lazy (dask) arrays that dask.array has no chunked algorithm for.

dask computes most primitives chunk by chunk with its own NumPy-like functions.  The
primitives below need some axes whole: a sort along its axis, a decomposition over the
matrix axes, an FFT over its axes, a gather or scatter over the indexed array.  For those,
one table says which axes are the *core* of each operand and result; on dask arrays the
primitive's own impl then runs on NumPy (or CuPy) chunks, once per chunk of the other
(*batch*) axes, after the core axes are gathered into one chunk
(``backend.map_chunked``).  Where that gathering would make a chunk bigger than dask's
``array.chunk-size``, ``backend.ChunkedAxisError`` names the primitive and the axis before
anything is computed.

The gather and the scatters need no gathering when their positions are lazy or their
operand is split along the indexed axes: ``PER_CHUNK`` plans them chunk by chunk.  With
shared batch axes (``batch_dims``) a chunk of positions meets the operand chunks of its
own shared rows alone: one task per chunk of those axes when the operand's indexed axes
are one chunk each.  A
scatter computes, for every pair of an updates chunk and an operand chunk, the updates
whose positions fall in that operand chunk (a *partial*, kept sparse: those positions and
values), merges the partials of each operand chunk in a tree of tasks (sparse while that
is smaller than the chunk, else combined into the operation's identity) and combines the
result with the operand (sum, product, minimum, maximum); ``scatter`` (the last write
wins) folds the updates chunks into each operand chunk in row-major order instead.  A
gather reads, for every pair of a chunk of positions and an operand chunk, the positions
that fall in that operand chunk, and assembles each chunk of its result from
those reads.  Every task holds about one chunk of each operand.  ``dynamic_slice`` and
``dynamic_update_slice`` at lazy starts are planned the same way: each task pairs a chunk
of the slice (or of the update) with an operand chunk it may meet, reads the start, and
keeps their overlap.

The tables are the one place that decides this: a primitive's impl never tests for dask.
On NumPy and CuPy arrays the impl runs as it is (one type lookup more per call).
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Callable

import numpy as np

from functrans import backend
from functrans.core import Primitive, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import codegen
from functrans.primitives import (decompositions, elementwise, fft, gather, indexing,
                                  matrix_functions, prng, reductions, shape, sorting,
                                  special)

__all__ = ["CORE_AXES", "DASK_FIRST", "ELEMENTWISE", "PER_CHUNK"]

#: A rule: (input avals, output avals, params) -> (core axes per input, per output)
CoreRule = Callable[..., tuple]


def _leading_batch(count: Callable) -> CoreRule:
    """Core axes: every axis after the first ``count(avals_in, params)`` of each operand
    and result (batched matrices, batched FFTs)."""
    def rule(avals_in, avals_out, params):
        batch = count(avals_in, params)
        return ([tuple(range(batch, a.ndim)) for a in avals_in],
                [tuple(range(batch, a.ndim)) for a in avals_out])
    return rule


def _whole(avals_in, avals_out, params):
    """Every axis is core: the operation reads anywhere in its operands."""
    return ([tuple(range(a.ndim)) for a in avals_in],
            [tuple(range(a.ndim)) for a in avals_out])


def _along_dimension(avals_in, avals_out, params):
    """The axis ``params["dimension"]`` of every operand and result (sort)."""
    d = params["dimension"]
    return [(d,)] * len(avals_in), [(d,)] * len(avals_out)


def ELEMENTWISE(avals_in, avals_out, params):
    """No core axes: an elementwise primitive whose impl dask.array cannot run (it calls
    a function dask lacks, or compacts its inputs by value as a kernel of its own does);
    its impl runs on each chunk, operands broadcast as dask's elementwise functions do."""
    return [()] * len(avals_in), [()] * len(avals_out)


_matrices = _leading_batch(lambda avals, params: avals[0].ndim - 2)
#: a gather's or scatter's shared batch axes: each chunk of them meets its own chunk alone
_shared_batch = _leading_batch(lambda avals, params: params.get("batch_dims", 0))

#: primitive -> its core axes on lazy arrays (``backend.map_chunked``)
CORE_AXES: dict[Primitive, CoreRule] = {
    sorting.sort_p: _along_dimension,
    decompositions.cholesky_p: _matrices,
    decompositions.lu_p: _matrices,
    decompositions.eigh_p: _matrices,
    decompositions.eig_p: _matrices,
    decompositions.qr_p: _matrices,
    decompositions.svd_p: _matrices,
    decompositions.triangular_solve_p: _matrices,
    decompositions.triangular_matmul_p: _matrices,
    decompositions.schur_p: _matrices,
    decompositions.hessenberg_p: _matrices,
    decompositions.sylvester_p: _matrices,
    matrix_functions.expm_p: _matrices,
    matrix_functions.expm_frechet_p: _matrices,
    matrix_functions.sqrtm_p: _matrices,
    fft.fft_p: _leading_batch(lambda avals, params: avals[0].ndim - len(params["fft_lengths"])),
    # a permutation is drawn whole (a stable argsort of random keys): one per key
    prng.random_shuffle_p: _leading_batch(lambda avals, params: avals[0].ndim - 1),
    # gamma draws: rejection rounds over the whole draw, per key
    prng.random_gamma_p: _leading_batch(lambda avals, params: avals[0].ndim - 1),
    # every axis but the shared batch axes (``batch_dims``, none by default)
    gather.gather_p: _shared_batch,
    gather.scatter_p: _shared_batch,
    gather.scatter_add_p: _shared_batch,
    gather.scatter_mul_p: _shared_batch,
    gather.scatter_min_p: _shared_batch,
    gather.scatter_max_p: _shared_batch,
    indexing.dynamic_slice_p: _whole,
    indexing.dynamic_update_slice_p: _whole,
    shape.reshape_p: _whole,
    shape.squeeze_p: _whole,
    shape.expand_dims_p: _whole,
    # (never gathered: dask's tree where a reduced axis is split, else a task per chunk)
    shape.reduce_sum_p: _whole,
    reductions.reduce_max_p: _whole,
    reductions.reduce_min_p: _whole,
    elementwise.gcd_p: ELEMENTWISE,
    elementwise.lcm_p: ELEMENTWISE,
    elementwise.population_count_p: ELEMENTWISE,
    special.igamma_grad_a_p: ELEMENTWISE,
    special.random_gamma_grad_p: ELEMENTWISE,
    special.igamma_second_grad_a_p: ELEMENTWISE,
    special.random_gamma_second_grad_p: ELEMENTWISE,
    special.hyp_parameter_derivative_p: ELEMENTWISE,
}

#: primitives that change an array's shape, not its elements' order
_RESHAPES = (shape.reshape_p, shape.squeeze_p, shape.expand_dims_p)


def _unit_axes(prim: Primitive, x, params) -> tuple | None:
    """For a reshape (squeeze, expand_dims) that only adds or drops axes of length 1: for
    each axis of the result, the axis of ``x`` it is (None for a new one); else None."""
    shape_in = get_aval(x).shape
    shape_out = abstract_eval_rules[prim](get_aval(x), **params).shape
    kept = [j for j, n in enumerate(shape_in) if n != 1]
    if [shape_in[j] for j in kept] != [n for n in shape_out if n != 1]:
        return None
    kept_iter = iter(kept)
    return tuple(None if n == 1 else next(kept_iter) for n in shape_out)


def _moves_elements(prim: Primitive, args, params) -> bool:
    """dask's own reshape, for one that does more than add or drop axes of length 1."""
    return _unit_axes(prim, args[0], params) is None


def _reshape_per_chunk(prim: Primitive, impl: Callable) -> Callable:
    """A reshape that only adds or drops axes of length 1 as blockwise layers, a lazy
    squeeze and a lazy broadcast (views of each chunk, which dask's optimizer fuses into
    the tasks around them, and which need no functrans on the workers; dask's reshape and
    indexing make layers of their own), else None."""
    def plan(x, **params):
        axes = _unit_axes(prim, x, params)
        if axes is None:
            return None
        shape = x.shape
        dropped = tuple(j for j, n in enumerate(shape) if n == 1)
        if dropped:
            x = backend.lazy_squeeze(x, dropped)
        if None in axes:  # (the broadcast's layers: not a blockwise with new_axes)
            x = backend.lazy_broadcast(x, tuple(1 if j is None else shape[j] for j in axes),
                                       tuple(q for q, j in enumerate(axes) if j is not None))
        return x
    return plan


#: reductions -> the NumPy function computing one on each chunk
_REDUCTIONS = {shape.reduce_sum_p: np.sum, reductions.reduce_max_p: np.max,
               reductions.reduce_min_p: np.min}


def _reduces_across_chunks(args, params) -> bool:
    """dask's own reduction (a tree over the chunks), for one over an axis in chunks."""
    return any(args[0].numblocks[a] > 1 for a in params["axes"])


def _reduction_per_chunk(prim: Primitive, impl: Callable) -> Callable:
    """A reduction over axes that are one chunk each as a blockwise layer of NumPy's
    function on each chunk, which dask's optimizer fuses with the tasks around it (dask's
    own reduction adds an aggregating layer even where there is nothing to combine)."""
    reduce = _REDUCTIONS[prim]

    def plan(x, *, axes):
        from dask.array.core import blockwise
        from dask.base import tokenize
        dtype = abstract_eval_rules[prim](get_aval(x), axes=axes).dtype
        fun = functools.partial(np.sum, dtype=dtype) if reduce is np.sum else reduce
        out = backend.lazy_reduce(fun, x, tuple(axes), dtype)
        if out is not None:
            return out
        index = tuple(f"i{j}" for j in range(x.ndim))
        return blockwise(fun, tuple(i for j, i in enumerate(index) if j not in axes), x,
                         index, axis=tuple(axes), concatenate=True, dtype=dtype,
                         meta=x._meta, name=f"{prim.name}-{tokenize(x, axes)}")
    return plan


def _host_indices(args, params) -> bool:
    """The positions (every operand after the first) are host values: dask indexes its
    chunks by them itself, without gathering the operand (without shared batch axes,
    which the table keeps chunk by chunk)."""
    return not params.get("batch_dims") and not any(backend.is_lazy(a) for a in args[1:])


#: Primitives of CORE_AXES that dask computes itself where it can, without gathering: for
#: these arguments (the predicate) the impl runs on the dask arrays first, and the table's
#: way is taken only where dask refuses (its reshape only merges or splits axes; its
#: indexing takes one integer array per axis).
DASK_FIRST: dict[Primitive, Callable] = {
    **{p: functools.partial(_moves_elements, p) for p in _RESHAPES},
    **{p: _reduces_across_chunks for p in _REDUCTIONS},
    gather.gather_p: _host_indices,
    indexing.dynamic_slice_p: _host_indices,
    indexing.dynamic_update_slice_p: _host_indices,
}


# -- positions in chunked axes: the gather and the scatters chunk by chunk ----------------
# The form of gather.py: an operand (d0, ..., d{k-1}, *rest), indices (*batch, k), updates
# and gathered results (*batch, *rest).  Each task sees one chunk of the indices (all k
# columns), the matching chunk of the updates or result, and one chunk of the operand; it
# shifts the positions by that chunk's start and keeps those that fall inside it.


def _shifted(indices, starts: tuple, dims: tuple, clip: bool):
    """The positions of a chunk of indices relative to an operand chunk starting at
    ``starts``, as int64 (unsigned ones may go negative); clamped into the whole operand
    (``dims``) first for a clamping primitive, so each lands in exactly one chunk."""
    xp = backend.array_module(indices)
    columns = []
    for j, (start, d) in enumerate(zip(starts, dims)):
        column = indices[..., j].astype(np.int64)
        if clip:
            column = xp.clip(column, 0, d - 1)
        columns.append(column - start)
    return xp.stack(columns, axis=-1)


def _inside(positions, shape: tuple):
    """Where the shifted ``positions`` fall inside a chunk of ``shape``."""
    inside = None
    for j in range(positions.shape[-1]):
        here = (positions[..., j] >= 0) & (positions[..., j] < shape[j])
        inside = here if inside is None else inside & here
    return inside


def _scatter_partial(indices, updates, starts, dims, clip, shape):
    """One partial: the updates of one chunk whose positions fall in one operand chunk (of
    ``shape``, starting at ``starts``), kept sparse: their positions in that chunk (one
    row of ``k`` each) and their values (most pairs of chunks meet no update)."""
    xp = backend.array_module(updates)
    positions = _shifted(indices, starts, dims, clip)
    k, nb = positions.shape[-1], positions.ndim - 1
    where = xp.nonzero(_inside(positions, shape).reshape(-1))[0]
    values = xp.reshape(updates, (-1,) + tuple(updates.shape[nb:]))
    return positions.reshape(-1, k)[where], values[where]


def _scatter_merge(op, identity, shape, dtype, *parts):
    """Partials of one operand chunk (of ``shape``) combined by ``op``: sparse (positions
    and values side by side) while that is smaller than the chunk, else the chunk's
    combination into ``identity``."""
    sparse = [p for p in parts if type(p) is tuple]
    dense = [p for p in parts if type(p) is not tuple]
    entries = sum(p[1].size for p in sparse) + sum(p[0].size for p in sparse)
    like = (sparse[0][1] if sparse else dense[0])
    xp = backend.array_module(like)
    if not dense and entries <= math.prod(shape):
        if len(sparse) == 1:
            return sparse[0]
        return (xp.concatenate([p[0] for p in sparse]),
                xp.concatenate([p[1] for p in sparse]))
    acc = xp.array(dense[0], copy=True) if dense else xp.full(shape, identity, dtype=dtype)
    ufunc = getattr(xp, op)
    for d in dense[1:]:
        ufunc(acc, d, out=acc)
    for part in sparse:
        _apply_sparse(op, acc, part)
    return acc


def _apply_sparse(op, target, part) -> None:
    """A sparse partial (positions in ``target``, one row each, and values) combined into
    ``target`` in place by ``op``."""
    positions, values = part
    if len(positions):
        backend.scatter_apply(op, target, tuple(positions[:, j]
                                                for j in range(positions.shape[1])), values)


def _scatter_combine(op, block, merged):
    """The operand chunk ``block`` with its merged partial combined in by ``op``."""
    xp = backend.array_module(block)
    if type(merged) is not tuple:
        return getattr(xp, op)(block, merged)
    out = xp.array(block, copy=True)
    _apply_sparse(op, out, merged)
    return out


def _scatter_step(scatter, acc, indices, updates, starts, dims, clip):
    """One step of a fold: the updates of one chunk written into one operand chunk."""
    return scatter(acc, _shifted(indices, starts, dims, clip), updates, mode="drop")


def _local_batch(indices, m: int):
    """A chunk of indices with ``m`` shared batch axes in the form without them: each
    entry's numbers in those axes of the chunk put in front of its positions.  Paired with
    the operand chunk of the same shared rows alone, they are already relative to it."""
    xp = backend.array_module(indices)
    columns = [xp.broadcast_to(xp.arange(n, dtype=np.int64).reshape(
        (1,) * j + (n,) + (1,) * (indices.ndim - 1 - j)), indices.shape[:-1] + (1,))
        for j, n in enumerate(indices.shape[:m])]
    return xp.concatenate(columns + [indices.astype(np.int64)], axis=-1)


def _by_shared_rows(name: str, fun: Callable, operand, indices, updates, m: int, k: int,
                    dtype):
    """``fun(operand, indices[, updates])`` (a gather's or scatter's impl with ``m`` shared
    batch axes) as one task per chunk of the shared axes, for an operand whose ``k``
    indexed axes are one chunk each: the task reads its chunks of the operand and indices
    (the indices' other axes joined into one chunk), and its updates.  The arrays are
    brought to common chunks along the shared axes (the finer of theirs).

    A scatter whose indices and updates have no axes but the shared ones and the positions
    (the gradient of ``x[arange(n), labels]``) contracts nothing: the positions' axis
    (one chunk) is labelled as the operand's first indexed axis, so that dask's optimizer
    fuses the operand's producer into the task.  That matters beyond the task count: a
    gradient's zeros are otherwise tasks without inputs, which dask.distributed releases a
    few at a time (root-task queuing) while the rest of the graph runs ahead and holds
    every chunk's intermediate results."""
    from dask.array.core import blockwise, unify_chunks
    from dask.base import tokenize
    ndim, nb = operand.ndim, indices.ndim - 1
    if updates is not None and nb > m and all(n == 1 for n in indices.shape[m:nb]):
        # unshared axes of length 1 (take_along_axis's): dropped here, put back in the task
        drop = tuple(range(m, nb))
        indices = backend.lazy_squeeze(indices, drop)
        updates = backend.lazy_squeeze(updates, drop)
        fun, nb = functools.partial(_expanded, fun, drop), m
    shared = tuple(f"s{j}" for j in range(m))
    rest = tuple(f"r{j}" for j in range(ndim - m - k))
    free = tuple(f"c{j}" for j in range(nb - m))  # the indices' unshared batch axes
    operand_index = shared + tuple(f"d{j}" for j in range(k)) + rest
    pairs = [operand, operand_index, indices, shared + free + ("k",)]
    if updates is None:  # a gather: (*shared, *free, *rest)
        out_index = shared + free + rest
    else:  # a scatter: the operand's shape
        out_index = operand_index
        pairs += [updates, shared + free + rest]
    _, arrays = unify_chunks(*pairs)
    pairs[::2] = arrays
    token = f"{name}-{tokenize(name, fun, *pairs[::2])}"
    if updates is not None and not free and k and indices.numblocks[-1] == 1:
        pairs[3] = shared + ("d0",)
        return blockwise(fun, out_index, *pairs, align_arrays=False, dtype=dtype,
                         meta=operand._meta, name=token)
    return blockwise(fun, out_index, *pairs, concatenate=True, dtype=dtype,
                     meta=operand._meta, name=token)


def _expanded(fun: Callable, axes: tuple, operand, indices, updates):
    """``fun`` of a chunk of indices and updates given without their ``axes`` of length
    1 (``backend.lazy_squeeze``)."""
    xp = backend.array_module(indices)
    return fun(operand, xp.expand_dims(indices, axes), xp.expand_dims(updates, axes))


def _pairs(index_blocks: list, operand_blocks: list, m: int) -> list:
    """``(b, o)`` for every block ``b`` of positions and block ``o`` of the operand that
    can meet: with ``m`` shared batch axes, those of the same shared blocks alone."""
    return [(b, o) for b in index_blocks for o in operand_blocks if b[:m] == o[:m]]


def _gather_partial(gather, block, indices, starts, dims, clip):
    """The positions of a chunk of indices that fall in the operand chunk ``block``, read
    from it: their flat numbers in the chunk of indices, and the values read there."""
    xp = backend.array_module(block)
    positions = _shifted(indices, starts, dims, clip)
    where = xp.nonzero(_inside(positions, block.shape).reshape(-1))[0]
    positions = positions.reshape(-1, positions.shape[-1])[where]
    return where, gather(block, positions)


def _gather_assemble(partials, fill, shape, dtype):
    """A chunk of a gather's result (of ``shape``) from the partials of every operand
    chunk; positions that none of them holds (out of bounds, in fill mode) read ``fill``."""
    like = partials[0][1]
    xp = backend.array_module(like)
    nbatch = len(shape) - (like.ndim - 1)
    out = xp.full((math.prod(shape[:nbatch]),) + tuple(shape[nbatch:]), fill, dtype=dtype)
    for where, values in partials:
        out[where] = values
    return out.reshape(shape)


#: pairs of chunks a gather or scatter may make before it warns (dask's PerformanceWarning)
PAIRS_WARNING = 256


def _warn_pairs(name: str, position_blocks: int, operand_blocks: int, pairs: int) -> None:
    """A PerformanceWarning where a gather or scatter pairs many chunks of positions with
    many chunks of its operand (``pairs`` pairs): the tasks grow as their product."""
    if pairs < PAIRS_WARNING:
        return
    import warnings
    from dask.array.core import PerformanceWarning
    warnings.warn(
        f"functrans: {name} on dask arrays pairs each of {position_blocks} chunks of "
        f"positions with each of {operand_blocks} chunks of the operand ({pairs} tasks, "
        "growing as the square of the chunks): positions are only seen when the graph "
        "runs. Where the positions in the rows' axis are each row's own number, a gather "
        "or scatter sharing that axis (batch_dims=1; take_along_axis, x[arange(n), labels]) "
        "or jit(...) of the whole computation does it in one task per chunk of rows.",
        PerformanceWarning,
        stacklevel=2)


def _as_lazy(args: list) -> list:
    """``args`` as dask arrays: host arrays (and scalars) as one chunk."""
    import dask.array as da
    meta = next(a for a in args if backend.is_lazy(a))._meta
    return [a if backend.is_lazy(a) else da.from_array(np.asarray(a), chunks=-1, meta=meta)
            for a in args]


def _blocks(numblocks) -> list:
    return list(itertools.product(*(range(n) for n in numblocks)))


def _starts(chunks: tuple) -> list:
    return [np.cumsum((0,) + c[:-1]).tolist() for c in chunks]


def _align(indices, updates, nb: int, operand_rest_chunks: tuple, ordered: bool,
           shared: tuple):
    """Indices and updates with equal chunks along the batch axes (those of the one split
    more finely; the ``shared`` ones chunked as the operand's), all ``k`` positions in one
    chunk, and the updates' other axes chunked as the operand's.  ``ordered`` (a
    last-write-wins scatter): the batch axes after the first unshared one in one chunk, so
    that a row-major walk over the chunks is one over the updates of each shared chunk."""
    m = len(shared)
    batch = shared + max(indices.chunks[m:nb], updates.chunks[m:nb],
                         key=lambda c: math.prod(len(n) for n in c))
    if ordered:
        batch = batch[:m + 1] + tuple((sum(c),) for c in batch[m + 1:])
    indices = indices.rechunk(batch + (indices.shape[-1:],))
    updates = updates.rechunk(batch + tuple(operand_rest_chunks))
    return indices, updates


#: a scatter's operation (the name of the ufunc combining two partials, and the result with
#: the operand) -> the identity of its partials; ``scatter`` (set) folds instead
_IDENTITY = {
    "add": lambda dtype: 0,
    "multiply": lambda dtype: 1,
    "minimum": lambda dtype: np.inf if dtype.kind == "f" else np.iinfo(dtype).max,
    "maximum": lambda dtype: -np.inf if dtype.kind == "f" else np.iinfo(dtype).min,
}
#: partials merged by one task
MERGE_EVERY = 8


def _scatter_per_chunk(prim: Primitive, impl: Callable) -> Callable:
    """The plan of a scatter on dask arrays (see the module's docstring), or None where the
    table's way is taken: no positions (``k == 0``) nor shared axes, an axis of size
    zero, booleans, and the extrema of complex numbers."""
    op = gather.SCATTER_OPS[prim]

    def plan(operand, indices, updates, *, mode="clip", batch_dims=0):
        import dask.array as da
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph

        dtype = np.dtype(get_aval(operand).dtype)
        m, k, nb = batch_dims, get_aval(indices).shape[-1], get_aval(indices).ndim - 1
        shape = get_aval(operand).shape
        if (k == 0 and not m or 0 in shape or dtype.kind == "b"
                or (dtype.kind == "c" and op in ("minimum", "maximum"))):
            return None
        if not backend.is_array(updates):
            updates = np.asarray(updates, dtype=dtype)
        operand, indices, updates = _as_lazy([operand, indices, updates])
        if m and all(n == 1 for n in operand.numblocks[m:m + k]):
            return _by_shared_rows(prim.name, functools.partial(impl, mode=mode, batch_dims=m),
                                   operand, indices, updates, m, k, dtype)
        k += m  # the shared axes become leading positions, local to each pair of chunks
        indices, updates = _align(indices, updates, nb, operand.chunks[k:], op == "set",
                                  operand.chunks[:m])
        clip, dims, starts = mode == "clip", shape[:k], _starts(operand.chunks[:k])
        token = tokenize(prim.name, operand, indices, updates, mode, m)
        batch_blocks = _blocks(updates.numblocks[:nb])
        pairs = _pairs(batch_blocks, _blocks(operand.numblocks), m)
        _warn_pairs(prim.name, len(batch_blocks), math.prod(operand.numblocks), len(pairs))
        meeting: dict = {}  # operand block -> the blocks of updates that can meet it
        for b, o in pairs:
            meeting.setdefault(o, []).append(b)
        dsk: dict = {}

        def keys(b, o):
            ix = (indices.name, *b, 0)
            return ((_local_batch, ix, m) if m else ix, (updates.name, *b, *o[k:]),
                    (0,) * m + tuple(starts[j][o[j]] for j in range(m, k)))

        if op == "set":  # last write wins: fold the updates chunks in row-major order
            name = f"{prim.name}-{token}"
            step = functools.partial(_scatter_step, impl)
            for o in _blocks(operand.numblocks):
                previous = (operand.name, *o)
                for u, b in enumerate(meeting[o]):
                    key = ((name, *o) if u == len(meeting[o]) - 1
                           else (f"{name}-step", u, *o))
                    ix, up, start = keys(b, o)
                    dsk[key] = (step, previous, ix, up, start, dims, clip)
                    previous = key
            graph = HighLevelGraph.from_collections(name, dsk,
                                                    dependencies=[operand, indices, updates])
            return da.Array(graph, name, chunks=operand.chunks, dtype=dtype,
                            meta=operand._meta)
        name = f"{prim.name}-{token}"
        merge = functools.partial(_scatter_merge, op, _IDENTITY[op](dtype))
        for o in _blocks(operand.numblocks):
            block = tuple(operand.chunks[d][o[d]] for d in range(operand.ndim))
            level = []
            for u, b in enumerate(meeting[o]):
                ix, up, start = keys(b, o)
                key = (f"{name}-partial", u, *o)
                dsk[key] = (_scatter_partial, ix, up, start, dims, clip, block)
                level.append(key)
            depth = 0
            while len(level) > 1:  # a tree: each task merges a few partials
                depth += 1
                merged = []
                for i in range(0, len(level), MERGE_EVERY):
                    key = (f"{name}-merge", depth, i, *o)
                    dsk[key] = (merge, block, dtype, *level[i:i + MERGE_EVERY])
                    merged.append(key)
                level = merged
            key = (name, *o)
            dsk[key] = (_scatter_combine, op, (operand.name, *o), level[0])
        graph = HighLevelGraph.from_collections(name, dsk,
                                                dependencies=[operand, indices, updates])
        return da.Array(graph, name, chunks=operand.chunks, dtype=dtype, meta=operand._meta)
    return plan


def _gather_per_chunk(impl: Callable) -> Callable:
    """The plan of a gather on dask arrays (see the module's docstring), or None where the
    table's way is taken (no positions nor shared axes, an axis of size zero)."""
    def plan(operand, indices, *, mode="clip", fill_value=None, batch_dims=0):
        import dask.array as da
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph

        dtype = np.dtype(get_aval(operand).dtype)
        m, k, nb = batch_dims, get_aval(indices).shape[-1], get_aval(indices).ndim - 1
        shape = get_aval(operand).shape
        if k == 0 and not m or 0 in shape:
            return None
        operand, indices = _as_lazy([operand, indices])
        if m and all(n == 1 for n in operand.numblocks[m:m + k]):
            return _by_shared_rows("gather", functools.partial(
                impl, mode=mode, fill_value=fill_value, batch_dims=m), operand, indices, None,
                m, k, dtype)
        k += m  # the shared axes become leading positions, local to each pair of chunks
        indices = indices.rechunk({**dict(enumerate(operand.chunks[:m])), nb: -1})
        clip, dims, starts = mode == "clip", shape[:k], _starts(operand.chunks[:k])
        fill = 0 if clip else gather.default_fill_value(dtype) if fill_value is None \
            else fill_value
        name = f"gather-{tokenize(operand, indices, mode, fill_value, m)}"
        partial = functools.partial(_gather_partial, impl)
        dsk: dict = {}
        index_blocks = _blocks(indices.numblocks[:nb])
        pairs = _pairs(index_blocks, _blocks(operand.numblocks[:k]), m)
        _warn_pairs("gather", len(index_blocks), math.prod(operand.numblocks[:k]), len(pairs))
        meeting: dict = {}  # block of positions -> the operand blocks it can meet
        for b, o in pairs:
            meeting.setdefault(b, []).append(o)
        for b in index_blocks:
            ix = (indices.name, *b, 0)
            ix = (_local_batch, ix, m) if m else ix
            for r in _blocks(operand.numblocks[k:]):
                out = (tuple(indices.chunks[d][b[d]] for d in range(nb))
                       + tuple(operand.chunks[k + d][r[d]] for d in range(len(r))))
                parts = []
                for s, o in enumerate(meeting[b]):
                    key = (f"{name}-partial", s, *b, *r)
                    start = (0,) * m + tuple(starts[j][o[j]] for j in range(m, k))
                    dsk[key] = (partial, (operand.name, *o, *r), ix, start, dims, clip)
                    parts.append(key)
                key = (name, *b, *r)
                dsk[key] = (_gather_assemble, parts, fill, out, dtype)
        graph = HighLevelGraph.from_collections(name, dsk, dependencies=[operand, indices])
        return da.Array(graph, name, chunks=indices.chunks[:nb] + operand.chunks[k:],
                        dtype=dtype, meta=operand._meta)
    return plan


# -- slices at lazy starts: dynamic_slice and dynamic_update_slice chunk by chunk ---------
# A start that is a dask 0-d array is known only inside a task.  Each task pairs one piece
# that moves with the starts (a chunk of the slice, or of the update) with one operand
# chunk that may overlap it for some start in the clamped range, reads the start, and
# keeps the overlap (None where there is none this time).  A final task per result chunk
# writes the overlaps it received into the chunk.


def _overlap(starts, dims, sizes, offsets, lengths, chunk_starts, chunk_shape):
    """Where a piece at ``offsets`` (of ``lengths``) of a block of ``sizes`` placed at the
    clamped ``starts`` meets the operand chunk at ``chunk_starts`` (of ``chunk_shape``):
    (the slices of the piece, those of the chunk), or None where they do not meet."""
    piece, chunk = [], []
    for s, d, n, off, length, c0, c in zip(starts, dims, sizes, offsets, lengths,
                                            chunk_starts, chunk_shape):
        at = min(max(int(s), 0), d - n) + off
        lo, hi = max(at, c0), min(at + length, c0 + c)
        if hi <= lo:
            return None
        piece.append(slice(lo - at, hi - at))
        chunk.append(slice(lo - c0, hi - c0))
    return tuple(piece), tuple(chunk)


def _slice_read(block, starts, dims, sizes, offsets, lengths, chunk_starts):
    """The part of operand chunk ``block`` that a chunk of the slice reads: (where in the
    slice's chunk, the values copied), or None."""
    where = _overlap(starts, dims, sizes, offsets, lengths, chunk_starts, block.shape)
    return None if where is None else (where[0], block[where[1]].copy())


def _update_read(block, starts, dims, sizes, offsets, chunk_starts, chunk_shape):
    """The part of update chunk ``block`` written into one operand chunk: (where in that
    chunk, the values copied), or None."""
    where = _overlap(starts, dims, sizes, offsets, block.shape, chunk_starts, chunk_shape)
    return None if where is None else (where[1], block[where[0]].copy())


def _write_parts(out, parts):
    for part in parts:
        if part is not None:
            out[part[0]] = part[1]
    return out


def _slice_assemble(parts, shape, dtype):
    """A chunk of the slice from its parts, which cover it exactly once."""
    like = next(p for p in parts if p is not None)[1]
    return _write_parts(backend.array_module(like).empty(shape, dtype=dtype), parts)


def _update_assemble(block, parts, dtype):
    """An operand chunk with the parts of the update that fall in it written over."""
    return _write_parts(block.astype(dtype, copy=True), parts)


def _reachable(start, d: int, n: int, offset: int, length: int, chunk_starts, chunks):
    """The operand chunks along one axis that a piece at ``offset`` (of ``length``) of a
    block of ``n`` may meet: all starts of the clamped range, or the host start's own."""
    lo, hi = (0, d - n) if start is None else (start, start)
    return [i for i, (c0, c) in enumerate(zip(chunk_starts, chunks))
            if c0 < hi + offset + length and c0 + c > lo + offset]


def _lazy_starts(starts, dims, sizes) -> tuple:
    """The starts as graph arguments (the key of a dask 0-d array, a host int clamped
    now) and as known values (None for a lazy one)."""
    refs: list = []
    known: list[int | None] = []
    for s, d, n in zip(starts, dims, sizes):
        if backend.is_lazy(s):
            refs.append(s.__dask_keys__()[0])
            known.append(None)
        else:
            refs.append(min(max(int(s), 0), d - n))
            known.append(refs[-1])
    return refs, known


def _dynamic_slice_per_chunk(impl: Callable) -> Callable:
    """The plan of a dynamic_slice at lazy starts (see above): the slice chunked as finely
    as its operand; None (the table's way) for an empty operand or slice."""
    def plan(operand, *starts, slice_sizes):
        import dask.array as da
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph

        dtype, dims = np.dtype(get_aval(operand).dtype), get_aval(operand).shape
        if 0 in dims or 0 in slice_sizes:
            return None
        (operand,) = _as_lazy([operand, *starts])[:1]
        refs, known = _lazy_starts(starts, dims, slice_sizes)
        out_chunks = tuple(da.core.normalize_chunks(max(c), (n,))[0]
                           for c, n in zip(operand.chunks, slice_sizes))
        out_starts, op_starts = _starts(out_chunks), _starts(operand.chunks)
        name = f"dynamic_slice-{tokenize(operand, *starts, slice_sizes)}"
        dsk: dict = {}
        for b in _blocks(tuple(len(c) for c in out_chunks)):
            offsets = tuple(out_starts[j][b[j]] for j in range(len(b)))
            lengths = tuple(out_chunks[j][b[j]] for j in range(len(b)))
            parts = []
            for o in itertools.product(*(
                    _reachable(known[j], dims[j], slice_sizes[j], offsets[j], lengths[j],
                               op_starts[j], operand.chunks[j]) for j in range(len(b)))):
                key = (f"{name}-read", *b, *o)
                dsk[key] = (_slice_read, (operand.name, *o), list(refs), dims, slice_sizes,
                            offsets, lengths, tuple(op_starts[j][o[j]] for j in range(len(o))))
                parts.append(key)
            out_key = (name, *b)
            dsk[out_key] = (_slice_assemble, parts, lengths, dtype)
        graph = HighLevelGraph.from_collections(
            name, dsk, dependencies=[operand, *(s for s in starts if backend.is_lazy(s))])
        return da.Array(graph, name, chunks=out_chunks, dtype=dtype, meta=operand._meta)
    return plan


def _dynamic_update_slice_per_chunk(impl: Callable) -> Callable:
    """The plan of a dynamic_update_slice at lazy starts (see above): the operand's
    chunks, each with the parts of the update chunks that may fall in it; None (the
    table's way) for an empty operand or update."""
    def plan(operand, update, *starts):
        import dask.array as da
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph

        dtype, dims = np.dtype(get_aval(operand).dtype), get_aval(operand).shape
        sizes = get_aval(update).shape
        if 0 in dims or 0 in sizes:
            return None
        operand, update = _as_lazy([operand, update, *starts])[:2]
        refs, known = _lazy_starts(starts, dims, sizes)
        up_starts, op_starts = _starts(update.chunks), _starts(operand.chunks)
        name = f"dynamic_update_slice-{tokenize(operand, update, *starts)}"
        # per axis: update chunk -> the operand chunks it can reach
        reach = [[set(_reachable(known[j], dims[j], sizes[j], up_starts[j][i], c,
                                 op_starts[j], operand.chunks[j]))
                  for i, c in enumerate(update.chunks[j])] for j in range(len(dims))]
        dsk: dict = {}
        for o in _blocks(operand.numblocks):
            c0 = tuple(op_starts[j][o[j]] for j in range(len(o)))
            shape = tuple(operand.chunks[j][o[j]] for j in range(len(o)))
            parts = []
            for u in _blocks(update.numblocks):
                offsets = tuple(up_starts[j][u[j]] for j in range(len(u)))
                if all(o[j] in reach[j][u[j]] for j in range(len(o))):
                    key = (f"{name}-read", *o, *u)
                    dsk[key] = (_update_read, (update.name, *u), list(refs), dims, sizes,
                                offsets, c0, shape)
                    parts.append(key)
            out_key = (name, *o)
            dsk[out_key] = ((_update_assemble, (operand.name, *o), parts, dtype) if parts
                            else (operand.name, *o))
        graph = HighLevelGraph.from_collections(
            name, dsk,
            dependencies=[operand, update, *(s for s in starts if backend.is_lazy(s))])
        return da.Array(graph, name, chunks=operand.chunks, dtype=dtype, meta=operand._meta)
    return plan


#: Primitives of CORE_AXES planned chunk by chunk on dask arrays (after DASK_FIRST, before
#: the table): a function of the primitive's impl giving the plan, which returns the
#: result, or None to take the table's way.
PER_CHUNK: dict[Primitive, Callable] = {
    **{p: functools.partial(_reshape_per_chunk, p) for p in _RESHAPES},
    **{p: functools.partial(_reduction_per_chunk, p) for p in _REDUCTIONS},
    gather.gather_p: _gather_per_chunk,
    indexing.dynamic_slice_p: _dynamic_slice_per_chunk,
    indexing.dynamic_update_slice_p: _dynamic_update_slice_per_chunk,
    **{p: functools.partial(_scatter_per_chunk, p) for p in (
        gather.scatter_p, gather.scatter_add_p, gather.scatter_mul_p, gather.scatter_min_p,
        gather.scatter_max_p)},
}


def _check_results_fit(what: str, args, avals_out, out_core) -> None:
    """Raise ``backend.ChunkedAxisError`` where a result's core axes alone (a random
    permutation drawn whole) would make a chunk over dask's ``array.chunk-size`` and
    larger than every chunk of the arguments (so nothing the caller chunked grows)."""
    import dask
    from dask.utils import parse_bytes
    limit = parse_bytes(dask.config.get("array.chunk-size"))
    largest = max((a.dtype.itemsize * math.prod(a.chunksize) for a in args
                   if backend.is_lazy(a)), default=0)
    for aval, core in zip(avals_out, out_core):
        size = aval.dtype.itemsize * math.prod(aval.shape[d] for d in core)
        if size > max(limit, largest):
            raise backend.ChunkedAxisError(
                f"{what}: its result of shape {aval.shape} ({aval.dtype}) is computed whole "
                f"along axes {tuple(core)}: one chunk of {size} bytes, over dask's "
                f"array.chunk-size of {limit} bytes. Raise the limit with "
                "dask.config.set({'array.chunk-size': ...}) or make smaller results. "
                "Nothing was computed.")


def _chunked_impl(prim: Primitive, impl: Callable) -> Callable:
    per_chunk = PER_CHUNK[prim](impl) if prim in PER_CHUNK else None

    @functools.wraps(impl)  # with its attributes (jit reads an elementwise impl's ufunc)
    def chunked(*args, **params):
        for a in args:  # NumPy's fast path: a type test per operand more
            if type(a) is not np.ndarray and backend.is_lazy(a):
                break
        else:
            return impl(*args, **params)
        dask_first = DASK_FIRST.get(prim)
        if dask_first is not None and dask_first(args, params):
            try:
                return impl(*args, **params)
            except (NotImplementedError, IndexError, TypeError, ValueError):
                pass  # dask refuses: gather the core axes below
        for a in args:
            if backend.is_lazy(a):
                backend.check_known_chunks(a, prim.name)
        if per_chunk is not None:
            out = per_chunk(*args, **params)
            if out is not None:
                return out
        avals_in = [get_aval(a) for a in args]
        avals_out = abstract_eval_rules[prim](*avals_in, **params)
        avals_out = list(avals_out) if prim.multiple_results else [avals_out]
        rule = CORE_AXES[prim]
        if rule is ELEMENTWISE:
            assert not prim.multiple_results, prim
            return backend.map_elementwise(prim.name, functools.partial(impl, **params), args,
                                           avals_out[0].dtype)
        in_core, out_core = rule(avals_in, avals_out, params)

        def block(*blocks):
            out = impl(*blocks, **params)
            return list(out) if prim.multiple_results else [out]
        outs = backend.map_chunked(prim.name, block, list(args), in_core,
                                   [a.shape for a in avals_out], [a.dtype for a in avals_out],
                                   out_core)
        # (after the arguments' check, whose error names the axis to rechunk)
        _check_results_fit(prim.name, args, avals_out, out_core)
        return outs if prim.multiple_results else outs[0]
    return chunked


for _prim in CORE_AXES:
    impl_rules[_prim] = _chunked_impl(_prim, impl_rules[_prim])
    codegen.LAZY_IMPL.add(_prim)  # jit on dask calls this impl too
