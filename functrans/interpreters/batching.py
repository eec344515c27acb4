"""Batching (vmap): run a function on a batch of values as if on one.

Type of the transform::

    vmap : (f : a -> b) -> (a with a batch axis -> b with a batch axis)

A batched value is a ``BatchTracer``: a value with one extra (physical) axis,
``batch_dim``.  Each primitive has a batching rule
``rule(vals, dims, **params) -> (out, out_dim)`` where ``dims[i]`` is the batch axis of
``vals[i]`` or ``None`` (``not_mapped``) when that argument is the same for every batch
member.  Rules that need to move axes use the primitives' own helpers.
"""
from __future__ import annotations

from typing import Callable, Sequence

from functrans import core
from functrans.core import ConcretizationTypeError, Primitive, ShapedArray, Trace, Tracer, get_aval

#: primitive -> rule(vals, dims, **params) -> (out, out_dim)   (lists if multiple_results)
batching_rules: dict[Primitive, Callable] = {}

not_mapped = None


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace: BatchTrace, val, batch_dim: int):
        assert batch_dim is not not_mapped
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self) -> ShapedArray:
        aval = get_aval(self.val)
        shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
        return ShapedArray(shape, aval.dtype, aval.weak_type)

    def to_concrete_value(self, context: str):
        raise ConcretizationTypeError(
            f"A batched value under vmap was used where Python needs one concrete value "
            f"({context}): it holds {self._trace.axis_size} different values, one per batch "
            "member. Use functrans.numpy.where / lax.select instead of `if`, or "
            "lax.cond / lax.while_loop, which batch.")


class BatchTrace(Trace):
    __slots__ = ("axis_size",)
    transforms = "vmap, jacfwd, jacrev"

    def __init__(self, level: int, axis_size: int):
        super().__init__(level)
        self.axis_size = axis_size

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        vals, dims = [], []
        for x in args:
            if isinstance(x, BatchTracer) and x._trace is self:
                vals.append(x.val)
                dims.append(x.batch_dim)
            else:
                vals.append(x)
                dims.append(not_mapped)
        try:
            rule = batching_rules[prim]
        except KeyError:
            raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented") from None
        out, out_dim = rule(vals, dims, **params)
        if prim.multiple_results:
            return [self.pack(x, d) for x, d in zip(out, out_dim)]
        return self.pack(out, out_dim)

    def pack(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)

    def unpack(self, x) -> tuple:
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        return x, not_mapped


def batch_flat(fun: Callable, axis_size: int, vals: Sequence, dims: Sequence) -> tuple[list, list]:
    """Run ``fun`` (flat list in, flat list out) on values batched along ``dims``; return
    the outputs and their batch axes (``not_mapped`` where an output is not batched)."""
    with core.new_trace(BatchTrace, axis_size) as trace:
        ins = [trace.pack(v, d) for v, d in zip(vals, dims)]
        outs = fun(*ins)
        pairs = [trace.unpack(x) for x in outs]
        del ins, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return [v for v, _ in pairs], [d for _, d in pairs]


def vectorized_batcher(prim: Primitive) -> Callable:
    """Batching rule of a unary elementwise primitive: apply it to the whole batch."""
    def rule(vals, dims, **params):
        return prim.bind(*vals, **params), dims[0]
    return rule


def defvectorized(prim: Primitive) -> None:
    batching_rules[prim] = vectorized_batcher(prim)


def batch_jaxpr(closed, axis_size: int, in_dims: Sequence, instantiate: bool = True):
    """A closed jaxpr computing ``closed`` for every batch member, inputs batched along
    ``in_dims`` (``not_mapped`` allowed).  Returns ``(jaxpr, out_dims)``: outputs are
    batched along axis 0, or ``not_mapped`` where unbatched and ``instantiate`` is False."""
    from functrans.interpreters.eval import eval_jaxpr
    from functrans.interpreters.partial_eval import trace_to_jaxpr
    from functrans.primitives.shape import bdim_to_front
    found = {}

    def fun(*args):
        outs, dims = batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                axis_size, args, in_dims)
        found["dims"] = [0 if instantiate or d is not not_mapped else not_mapped for d in dims]
        return [x if d is not_mapped and not instantiate else bdim_to_front(x, d, axis_size)
                for x, d in zip(outs, dims)]

    avals = [a if d is not_mapped else
             ShapedArray(a.shape[:d] + (axis_size,) + a.shape[d:], a.dtype, a.weak_type)
             for a, d in zip(closed.in_avals, in_dims)]
    jaxpr, _ = trace_to_jaxpr(fun, avals)
    return jaxpr, found["dims"]
