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

The table is the one place that decides this: a primitive's impl never tests for dask.
On NumPy and CuPy arrays the impl runs as it is (one type lookup more per call).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from functrans import backend
from functrans.core import Primitive, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import codegen
from functrans.primitives import (decompositions, elementwise, fft, gather, indexing,
                                  matrix_functions, shape, sorting, special)

__all__ = ["CORE_AXES", "DASK_FIRST", "ELEMENTWISE"]

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
    matrix_functions.expm_p: _matrices,
    matrix_functions.expm_frechet_p: _matrices,
    fft.fft_p: _leading_batch(lambda avals, params: avals[0].ndim - len(params["fft_lengths"])),
    gather.gather_p: _whole,
    gather.scatter_p: _whole,
    gather.scatter_add_p: _whole,
    gather.scatter_mul_p: _whole,
    gather.scatter_min_p: _whole,
    gather.scatter_max_p: _whole,
    indexing.dynamic_slice_p: _whole,
    indexing.dynamic_update_slice_p: _whole,
    shape.reshape_p: _whole,
    elementwise.gcd_p: ELEMENTWISE,
    elementwise.lcm_p: ELEMENTWISE,
    elementwise.population_count_p: ELEMENTWISE,
    special.igamma_grad_a_p: ELEMENTWISE,
    special.random_gamma_grad_p: ELEMENTWISE,
    special.igamma_second_grad_a_p: ELEMENTWISE,
    special.random_gamma_second_grad_p: ELEMENTWISE,
    special.hyp_parameter_derivative_p: ELEMENTWISE,
}

def _always(args) -> bool:
    return True


def _host_indices(args) -> bool:
    """The positions (every operand after the first) are host values: dask indexes its
    chunks by them itself, without gathering the operand."""
    return not any(backend.is_lazy(a) for a in args[1:])


#: Primitives of CORE_AXES that dask computes itself where it can, without gathering: for
#: these arguments (the predicate) the impl runs on the dask arrays first, and the table's
#: way is taken only where dask refuses (its reshape only merges or splits axes; its
#: indexing takes one integer array per axis).
DASK_FIRST: dict[Primitive, Callable] = {
    shape.reshape_p: _always,
    gather.gather_p: _host_indices,
    indexing.dynamic_slice_p: _host_indices,
    indexing.dynamic_update_slice_p: _host_indices,
}


def _chunked_impl(prim: Primitive, impl: Callable) -> Callable:
    @functools.wraps(impl)  # with its attributes (jit reads an elementwise impl's ufunc)
    def chunked(*args, **params):
        for a in args:  # NumPy's fast path: a type test per operand more
            if type(a) is not np.ndarray and backend.is_lazy(a):
                break
        else:
            return impl(*args, **params)
        dask_first = DASK_FIRST.get(prim)
        if dask_first is not None and dask_first(args):
            try:
                return impl(*args, **params)
            except (NotImplementedError, IndexError, TypeError, ValueError):
                pass  # dask refuses: gather the core axes below
        for a in args:
            if backend.is_lazy(a):
                backend.check_known_chunks(a, prim.name)
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
        return outs if prim.multiple_results else outs[0]
    return chunked


for _prim in CORE_AXES:
    impl_rules[_prim] = _chunked_impl(_prim, impl_rules[_prim])
    codegen.LAZY_IMPL.add(_prim)  # jit on dask calls this impl too
