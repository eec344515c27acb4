"""Batching (vmap): run a function on a batch of values as if on one.

Type of the transform::

    vmap : (f : a -> b) -> (a with a batch axis -> b with a batch axis)

A batched value is a ``BatchTracer``: a value with one extra (physical) axis,
``batch_dim``.  Each primitive has a batching rule
``rule(vals, dims, **params) -> (out, out_dim)`` where ``dims[i]`` is the batch axis of
``vals[i]`` or ``None`` (``not_mapped``) when that argument is the same for every batch
member.  Rules that need to move axes use the primitives' own helpers.

A vmap may name its batch axis (``axis_name``); collectives (``lax.psum`` ...) find the
innermost trace of that name on the stack and have ``named_batching_rules``, which are also
told the trace's axis name and size.  Traces made while a named trace's rule runs (a
``cond`` or ``jit`` batching its jaxpr) batch the same axis, so they inherit the name.
"""
from __future__ import annotations

import functools
import threading
from typing import Callable, Sequence

from functrans import core
from functrans.interpreters import partial_eval
from functrans.core import ConcretizationTypeError, Primitive, ShapedArray, Trace, Tracer, get_aval

#: primitive -> rule(vals, dims, **params) -> (out, out_dim)   (lists if multiple_results)
batching_rules: dict[Primitive, Callable] = {}
#: primitive -> rule(trace, vals, dims, **params) -> (out, out_dim), for primitives that act
#: across batch members (collectives): they read the trace's ``axis_name`` (which may or
#: may not be the axis the primitive names), ``axis_size`` and ``witness`` (a batched input,
#: whose device new arrays are made on)
named_batching_rules: dict[Primitive, Callable] = {}

not_mapped = None
INHERIT = object()  # batch_flat's default axis_name: the name of the named rule running now


class _RunningRule(threading.local):
    axis_name = None


_running = _RunningRule()


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "_aval")
    _trace: BatchTrace

    def __init__(self, trace: BatchTrace, val, batch_dim: int):
        assert batch_dim is not not_mapped
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval: ShapedArray | None = None

    @property
    def aval(self) -> ShapedArray:
        aval = self._aval  # computed once: a tracer's value never changes
        if aval is None:
            inner = get_aval(self.val)
            shape, dim = inner.shape, self.batch_dim
            aval = self._aval = ShapedArray(
                shape[1:] if dim == 0 else shape[:dim] + shape[dim + 1:], inner.dtype,
                inner.weak_type)
        return aval

    def device_witness(self):
        val = self.val
        return val.device_witness() if isinstance(val, Tracer) else val

    def to_concrete_value(self, context: str):
        raise ConcretizationTypeError(
            f"A batched value under vmap was used where Python needs one concrete value "
            f"({context}): it holds {self._trace.axis_size} different values, one per batch "
            "member. Use functrans.numpy.where / lax.select instead of `if`, or "
            "lax.cond / lax.while_loop, which batch.")


class BatchTrace(Trace):
    __slots__ = ("axis_size", "axis_name", "witness")
    transforms = "vmap, jacfwd, jacrev"

    def __init__(self, level: int, axis_size: int, axis_name=None, witness=None):
        super().__init__(level)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.witness = witness

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        vals: list = []
        dims: list[int | None] = []  # None: not_mapped
        for x in args:
            if type(x) is BatchTracer and x._trace is self:  # BatchTracer has no subclasses
                vals.append(x.val)
                dims.append(x.batch_dim)
            else:
                vals.append(x)
                dims.append(not_mapped)
        try:
            rule = batching_rules[prim]
        except KeyError:
            named = named_batching_rules.get(prim)
            if named is None:
                raise NotImplementedError(
                    f"Batching rule for '{prim.name}' not implemented") from None
            rule = functools.partial(named, self)
        counter = self.counter
        counter.internal += 1  # the rule's own operations on constants: plain arrays
        try:
            if self.axis_name is None:
                out, out_dim = rule(vals, dims, **params)
            else:
                outer, _running.axis_name = _running.axis_name, self.axis_name
                try:
                    out, out_dim = rule(vals, dims, **params)
                finally:
                    _running.axis_name = outer
        finally:
            counter.internal -= 1
        if prim.multiple_results:
            out = [self.pack(x, d) for x, d in zip(out, out_dim)]
        else:
            out = self.pack(out, out_dim)
        return out if counter.internal else core.handed_to_caller(out)

    def pack(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)

    def unpack(self, x) -> tuple:
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped


def batch_flat(fun: Callable, axis_size: int, vals: Sequence, dims: Sequence,
               axis_name=INHERIT) -> tuple[list, list]:
    """Run ``fun`` (flat list in, flat list out) on values batched along ``dims``; return
    the outputs and their batch axes (``not_mapped`` where an output is not batched).
    ``axis_name`` names the batch axis for collectives (default: the axis whose named
    batching rule is running, if any, else none)."""
    if axis_name is INHERIT:
        axis_name = _running.axis_name
    witness = next((v for v, d in zip(vals, dims) if d is not not_mapped), None)
    with core.new_trace(BatchTrace, axis_size, axis_name, witness) as trace:
        ins = [trace.pack(v, d) for v, d in zip(vals, dims)]
        outs = fun(*ins)
        pairs = [trace.unpack(x) for x in outs]
        del ins, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return [v for v, _ in pairs], [d for _, d in pairs]


def batch_closed_jaxpr(closed: core.ClosedJaxpr, axis_size: int, in_dims: Sequence,
                       finish: Callable | None = None) -> tuple[core.ClosedJaxpr, list]:
    """A closed jaxpr computing ``closed`` for every batch member, its inputs batched along
    ``in_dims`` (``not_mapped`` allowed): ``(jaxpr, out_dims)``, an output's batch axis as
    the batching rules left it (``not_mapped`` where unbatched), unless ``finish(outs,
    dims) -> (outs, dims)`` moves them (traced with the rest)."""
    found: list = []

    def fun(*args):
        outs, dims = batch_flat(lambda *xs: core.eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                axis_size, args, in_dims)
        if finish is not None:
            outs, dims = finish(outs, dims)
        found[:] = dims
        return outs

    avals = [a if d is not_mapped else a.update(shape=a.shape[:d] + (axis_size,) + a.shape[d:])
             for a, d in zip(closed.in_avals, in_dims)]
    jaxpr, _ = partial_eval.trace_to_jaxpr(fun, avals)
    return jaxpr, found


def find_axis(axis_name) -> BatchTrace | None:
    """The innermost active batch trace named ``axis_name`` (None if there is none)."""
    for trace in reversed(core.trace_stack()):
        if type(trace) is BatchTrace and trace.axis_name == axis_name:
            return trace
    return None


def vectorized_batcher(prim: Primitive) -> Callable:
    """Batching rule of a unary elementwise primitive: apply it to the whole batch."""
    def rule(vals, dims, **params):
        return prim.bind(*vals, **params), dims[0]
    return rule


def defvectorized(prim: Primitive) -> None:
    """Register the batching rule of a primitive that applies elementwise (or otherwise
    independently along every axis): bind it on the whole batch."""
    batching_rules[prim] = vectorized_batcher(prim)


def leading_dims_batcher(prim: Primitive, moveaxis: Callable) -> Callable:
    """Batching rule of a primitive that acts on the trailing axes of its operands and
    treats leading axes as independent members (matrix decompositions, solves, FFTs): move
    every batch axis to the front (``moveaxis(x, src, dst)`` is the caller's shape
    primitive) and bind once.  Unbatched operands are broadcast by the primitive itself,
    so they must be allowed fewer leading axes."""
    def rule(vals, dims, **params):
        vals = [v if d is not_mapped or d == 0 else moveaxis(v, d, 0)
                for v, d in zip(vals, dims)]
        out = prim.bind(*vals, **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    return rule


def defleading_dims(prim: Primitive, moveaxis: Callable) -> None:
    """Register ``leading_dims_batcher`` as the batching rule of ``prim``."""
    batching_rules[prim] = leading_dims_batcher(prim, moveaxis)
