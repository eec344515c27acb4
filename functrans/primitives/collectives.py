"""Collectives: operations across the members of a named ``vmap`` axis (``psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``axis_index``), as JAX's ``lax`` collectives behave
under ``jax.vmap(..., axis_name=...)``.

Inside ``vmap(f, axis_name="i")`` each batch member runs ``f``; ``psum(x, "i")`` gives every
member the sum of ``x`` over all members.  The primitives are processed at least by the
innermost batch trace named ``"i"`` (``CollectivePrimitive.bind``), even when ``x`` is not
batched there (then all members hold the same ``x``); that trace's batching rule reduces
over its batch axis.  A batch trace of another axis treats a collective as elementwise and
passes it on.  Outside every vmap of that name the axis is unbound: ``NameError``.

Derivatives: ``psum`` and ``all_gather`` are linear (the transpose of ``psum`` is ``psum``:
each member's input reaches every member's output; ``all_gather``'s is ``psum`` followed by
the member's own slice); ``pmax``/``pmin`` pass the tangent of the members holding the
extreme value (averaged over ties); ``pmean`` is ``psum`` divided by the axis size.
"""
from __future__ import annotations

from typing import Hashable

import numpy as np

from functrans.core import (Primitive, ShapedArray, abstract_eval_rules, find_top_trace,
                            get_aval, impl_rules, is_inexact)
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import div, eq, mul
from functrans.primitives.gather import iota
from functrans.primitives.indexing import dynamic_slice
from functrans.primitives.reductions import reduce_max, reduce_min
from functrans.primitives.shape import (broadcast_in_dim, moveaxis, reduce_sum, reshape,
                                        shape_of)
from functrans.tree_util import tree_map

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["all_gather", "axis_index", "pmax", "pmean", "pmin", "psum"]


class CollectivePrimitive(Primitive):
    """A primitive acting across the members of the named batch axis in its
    ``axis_name`` parameter: bound at the innermost batch trace of that name at least."""

    __slots__ = ()

    def bind(self, *args, **params):
        named = _axis_trace(params["axis_name"], self.name)
        top = find_top_trace(args)
        if top.level < named.level:
            top = named
        return top.process_primitive(self, args, params)


def _axis_trace(axis_name, caller: str) -> batching.BatchTrace:
    trace = batching.find_axis(axis_name)
    if trace is None:
        raise NameError(
            f"lax.{caller}: unbound axis name {axis_name!r}: no enclosing vmap has "
            f"axis_name={axis_name!r}. Collectives act across the members of a named batch "
            f"axis; call {caller} inside functrans.vmap(f, axis_name={axis_name!r}).")
    return trace


def _unbound(*args, axis_name, **params):
    # Reached only by evaluating a staged collective outside its vmap.
    raise NameError(f"unbound axis name {axis_name!r}: a collective was evaluated outside "
                    f"the vmap(..., axis_name={axis_name!r}) it belongs to")


psum_p = CollectivePrimitive("psum", origin="library")
pmax_p = CollectivePrimitive("pmax", origin="library")
pmin_p = CollectivePrimitive("pmin", origin="library")
all_gather_p = CollectivePrimitive("all_gather", origin="library")
axis_index_p = CollectivePrimitive("axis_index", origin="library")


def _names(axis_name, caller: str) -> tuple:
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        if not isinstance(name, Hashable):
            raise TypeError(f"lax.{caller}: axis_name must be a hashable name (or a tuple of "
                            f"names), got {name!r}")
    return tuple(names)


def _check_groups(axis_index_groups, caller: str) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"lax.{caller}: axis_index_groups is not supported; "
                                  "reduce over the whole named axis")


def _reduce_over(prim: Primitive, caller: str, x, axis_name):
    names = _names(axis_name, caller)
    for name in names:  # over several axes: one after the other
        _axis_trace(name, caller)
        x = tree_map(lambda leaf, name=name: prim.bind(leaf, axis_name=name), x)
    return x


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of ``x`` (an array or a pytree of arrays) over the members of the named
    batch axis (or axes, a tuple), the same for every member.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.array([1.0, 2.0, 3.0]))
    array([6., 6., 6.])
    >>> ft.vmap(lambda v: lax.psum(1, "i"), axis_name="i")(np.zeros(4))  # the axis size
    array([4, 4, 4, 4])
    """
    _check_groups(axis_index_groups, "psum")
    return _reduce_over(psum_p, "psum", x, axis_name)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The maximum of ``x`` over the members of the named batch axis.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(np.array([1.0, 5.0, 3.0]))
    array([5., 5., 5.])
    """
    _check_groups(axis_index_groups, "pmax")
    return _reduce_over(pmax_p, "pmax", x, axis_name)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The minimum of ``x`` over the members of the named batch axis.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(np.array([4.0, 5.0, 3.0]))
    array([3., 3., 3.])
    """
    _check_groups(axis_index_groups, "pmin")
    return _reduce_over(pmin_p, "pmin", x, axis_name)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the members of the named batch axis (integers are averaged
    as floats).

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> xs = np.array([1.0, 2.0, 6.0])
    >>> ft.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(xs)
    array([-2., -1.,  3.])
    """
    _check_groups(axis_index_groups, "pmean")
    size = 1
    for name in _names(axis_name, "pmean"):
        size *= _axis_trace(name, "pmean").axis_size

    def mean(leaf):
        if not is_inexact(get_aval(leaf).dtype):
            leaf = convert_element_type(leaf, np.float64)
        total = _reduce_over(psum_p, "pmean", leaf, axis_name)
        return div(total, float(size))  # a Python scalar: weak, on the operand's device
    return tree_map(mean, x)


def all_gather(x, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False):
    """Every member's ``x`` stacked along a new axis ``axis`` (with ``tiled=True``:
    concatenated along the existing axis ``axis``), the same for every member.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(np.array([1.0, 2.0]))
    array([[1., 2.],
           [1., 2.]])
    """
    _check_groups(axis_index_groups, "all_gather")
    if isinstance(axis_name, (tuple, list)):
        raise NotImplementedError("lax.all_gather: gathering over several axes at once is "
                                  "not supported; gather over one name at a time")
    size = _axis_trace(axis_name, "all_gather").axis_size

    def gather(leaf):
        ndim = len(shape_of(leaf))
        if not (-(ndim + (not tiled)) <= axis < ndim + (not tiled)) or (tiled and ndim == 0):
            raise ValueError(f"lax.all_gather: axis {axis} is out of range for an operand of "
                             f"shape {shape_of(leaf)} (tiled={tiled})")
        return all_gather_p.bind(leaf, axis_name=axis_name, axis=axis % (ndim + (not tiled)),
                                 tiled=bool(tiled), axis_size=size)
    return tree_map(gather, x)


def axis_index(axis_name):
    """The position (int32) of the current member along the named batch axis.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(np.ones(3))
    array([0., 1., 2.])
    """
    if isinstance(axis_name, (tuple, list)):
        raise NotImplementedError("lax.axis_index: one axis name at a time")
    _axis_trace(axis_name, "axis_index")
    return axis_index_p.bind(axis_name=axis_name)


# -- abstract evaluation -------------------------------------------------------------------

def _gathered_shape(shape: tuple, axis: int, tiled: bool, size: int) -> tuple:
    if tiled:
        return shape[:axis] + (shape[axis] * size,) + shape[axis + 1:]
    return shape[:axis] + (size,) + shape[axis:]


for _p in (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p):
    impl_rules[_p] = _unbound
abstract_eval_rules[psum_p] = lambda x, *, axis_name: x
abstract_eval_rules[pmax_p] = lambda x, *, axis_name: x
abstract_eval_rules[pmin_p] = lambda x, *, axis_name: x
abstract_eval_rules[all_gather_p] = lambda x, *, axis_name, axis, tiled, axis_size: (
    ShapedArray(_gathered_shape(x.shape, axis, tiled, axis_size), x.dtype, x.weak_type))
abstract_eval_rules[axis_index_p] = lambda *, axis_name: ShapedArray((), np.dtype(np.int32))


# -- batching: the named axis reduces, another axis passes the collective on ---------------

def _reduction_batcher(prim: Primitive, reduce):
    def rule(trace, vals, dims, *, axis_name):
        (x,), (d,) = vals, dims
        if trace.axis_name != axis_name:
            return prim.bind(x, axis_name=axis_name), d
        if d is not_mapped:  # every member holds x
            return (mul(x, trace.axis_size) if prim is psum_p else x), d
        return reduce(x, (d,)), not_mapped
    return rule


batching.named_batching_rules[psum_p] = _reduction_batcher(psum_p, reduce_sum)
batching.named_batching_rules[pmax_p] = _reduction_batcher(pmax_p, reduce_max)
batching.named_batching_rules[pmin_p] = _reduction_batcher(pmin_p, reduce_min)


def _all_gather_batch(trace, vals, dims, *, axis_name, axis, tiled, axis_size):
    (x,), (d,) = vals, dims
    if trace.axis_name != axis_name:  # our axis is a leading member axis of the operand
        if d is not_mapped:
            return all_gather_p.bind(x, axis_name=axis_name, axis=axis, tiled=tiled,
                                     axis_size=axis_size), d
        return all_gather_p.bind(moveaxis(x, d, 0), axis_name=axis_name, axis=axis + 1,
                                 tiled=tiled, axis_size=axis_size), 0
    if d is not_mapped:
        shape = shape_of(x)
        keep = [i if i < axis else i + 1 for i in range(len(shape))]
        out = broadcast_in_dim(x, shape[:axis] + (axis_size,) + shape[axis:], keep)
    else:
        out = moveaxis(x, d, axis)
    if tiled:
        shape = shape_of(out)
        out = reshape(out, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])
    return out, not_mapped


def _axis_index_batch(trace, vals, dims, *, axis_name):
    assert trace.axis_name == axis_name, "axis_index is bound at the trace of its axis"
    return iota(np.int32, trace.axis_size, like=trace.witness), 0


batching.named_batching_rules[all_gather_p] = _all_gather_batch
batching.named_batching_rules[axis_index_p] = _axis_index_batch


# -- derivatives ---------------------------------------------------------------------------

transpose.deflinear(psum_p, lambda ct, x, *, axis_name: [psum_p.bind(ct, axis_name=axis_name)])


def _extreme_jvp(prim: Primitive):
    # The tangent of the members holding the extreme value, averaged over ties.
    def rule(primals, tangents, *, axis_name):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis_name=axis_name)
        if type(t) is Zero:
            return out, Zero.from_value(out)
        hit = convert_element_type(eq(x, out), get_aval(t).dtype)
        count = psum_p.bind(hit, axis_name=axis_name)
        return out, div(psum_p.bind(mul(hit, t), axis_name=axis_name), count)
    return rule


ad.jvp_rules[pmax_p] = _extreme_jvp(pmax_p)
ad.jvp_rules[pmin_p] = _extreme_jvp(pmin_p)


def _all_gather_transpose(ct, x, *, axis_name, axis, tiled, axis_size):
    # Member b's input is slice b of every member's output: sum the cotangents over the
    # members, then take this member's slice.
    total = psum_p.bind(ct, axis_name=axis_name)
    shape = shape_of(total)
    chunk = shape[axis] // axis_size
    start = mul(axis_index_p.bind(axis_name=axis_name), np.int32(chunk))
    starts = [np.int32(0)] * len(shape)
    starts[axis] = start
    sizes = list(shape)
    sizes[axis] = chunk
    piece = dynamic_slice(total, starts, sizes)
    return [reshape(piece, x.aval.shape)]


transpose.deflinear(all_gather_p, _all_gather_transpose)

