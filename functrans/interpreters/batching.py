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
    _trace: BatchTrace

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
    __slots__ = ("axis_size",)
    transforms = "vmap, jacfwd, jacrev"

    def __init__(self, level: int, axis_size: int):
        super().__init__(level)
        self.axis_size = axis_size

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        vals: list = []
        dims: list[int | None] = []  # None: not_mapped
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
