"""Collectives: operations across the members of a named ``vmap`` axis (``psum``, ``pmean``,
``pmax``, ``pmin``, ``all_gather``, ``axis_index``, ``axis_size``, ``ppermute``,
``pshuffle``, ``pbroadcast``, ``all_to_all``, ``pswapaxes``, ``psum_scatter``), as JAX's
``lax`` collectives behave under ``jax.vmap(..., axis_name=...)``.

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
``ppermute``, ``all_to_all`` and ``psum_scatter`` are linear too: their transposes are
``ppermute`` along the inverse pairs, ``all_to_all`` with the split and concat axes
swapped, and ``all_gather``.  ``pshuffle`` and ``pswapaxes`` are written with them, and
``pbroadcast`` with ``psum`` of the source's masked value.
"""
from __future__ import annotations

from typing import Hashable

import numpy as np

from functrans.core import (Primitive, ShapedArray, abstract_eval_rules, find_top_trace,
                            get_aval, impl_rules, is_inexact)
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.primitives.elementwise import add, div, eq, mul, select
from functrans.primitives.gather import iota
from functrans.primitives.indexing import dynamic_slice
from functrans.primitives.reductions import reduce_max, reduce_min
from functrans.primitives.shape import (broadcast, broadcast_in_dim, moveaxis, reduce_sum,
                                        reshape, shape_of)
from functrans.primitives.slicing import concatenate, slice as slice_
from functrans.tree_util import tree_map

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pmax",
           "pmean", "pmin", "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes"]


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
            f"axis; call {caller} inside functrans.vmap(f, axis_name={axis_name!r}) (or "
            f"functrans.pmap(f, axis_name={axis_name!r})).")
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
ppermute_p = CollectivePrimitive("ppermute", origin="library")
all_to_all_p = CollectivePrimitive("all_to_all", origin="library")
reduce_scatter_p = CollectivePrimitive("reduce_scatter", origin="library")  # psum_scatter


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
    """The position (int32) of the current member along the named batch axis (along
    several, a tuple of names: the position in their product, the first name major).

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: v * lax.axis_index("i"), axis_name="i")(np.ones(3))
    array([0., 1., 2.])
    """
    names = _names(axis_name, "axis_index")
    if not names:
        raise ValueError("lax.axis_index: axis_name is an empty tuple; name at least one axis")
    index = None
    for name in names:
        size = _axis_trace(name, "axis_index").axis_size
        own = axis_index_p.bind(axis_name=name)
        index = own if index is None else add(mul(index, np.int32(size)), own)
    return index


def axis_size(axis_name) -> int:
    """The number of members of the named batch axis (of several axes, a tuple: the
    product of their sizes), a Python int.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> ft.vmap(lambda v: v / lax.axis_size("i"), axis_name="i")(np.array([2.0, 4.0]))
    array([1., 2.])
    """
    size = 1
    for name in _names(axis_name, "axis_size"):
        size *= _axis_trace(name, "axis_size").axis_size
    return size


def _one_name(axis_name, caller: str):
    names = _names(axis_name, caller)
    if len(names) != 1:
        raise NotImplementedError(f"lax.{caller}: one axis name at a time, got {axis_name!r} "
                                  "(jax.vmap refuses several names here too)")
    return names[0]


def _axis_of(x, axis: int, caller: str, what: str) -> int:
    ndim = len(shape_of(x))
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not (
            -ndim <= axis < ndim):
        raise ValueError(f"lax.{caller}: {what}={axis!r} is out of range for an operand of "
                         f"shape {shape_of(x)}")
    return int(axis) % ndim


def _check_perm(perm, size: int, caller: str) -> tuple:
    try:
        pairs = tuple((int(src), int(dst)) for src, dst in perm)
    except (TypeError, ValueError):
        raise TypeError(f"lax.{caller}: perm must be a sequence of (source, destination) "
                        f"index pairs, got {perm!r}") from None
    for src, dst in pairs:
        if not (0 <= src < size and 0 <= dst < size):
            raise ValueError(f"lax.{caller}: perm pair {(src, dst)} is out of range for an "
                             f"axis of size {size} (indices must be in [0, {size}))")
    for k, what in ((0, "source"), (1, "destination")):
        seen = [pair[k] for pair in pairs]
        if len(set(seen)) != len(seen):
            raise ValueError(f"lax.{caller}: perm is not a permutation: a {what} index "
                             f"appears twice in {list(pairs)}")
    return pairs


def ppermute(x, axis_name, perm):
    """Send ``x`` from member ``source`` to member ``destination`` for every
    ``(source, destination)`` pair in ``perm``; members no pair sends to get zeros.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> shift = lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)])
    >>> ft.vmap(shift, axis_name="i")(np.array([1.0, 2.0, 3.0]))
    array([3., 1., 2.])
    """
    name = _one_name(axis_name, "ppermute")
    pairs = _check_perm(perm, _axis_trace(name, "ppermute").axis_size, "ppermute")
    return tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=name, perm=pairs), x)


def pshuffle(x, axis_name, perm):
    """Member ``i`` gets the ``x`` of member ``perm[i]`` (``perm`` lists every member
    once): ``ppermute`` with the permutation written as sources.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> shuffle = lambda v: lax.pshuffle(v, "i", [2, 0, 1])
    >>> ft.vmap(shuffle, axis_name="i")(np.array([1.0, 2.0, 3.0]))
    array([3., 1., 2.])
    """
    perm = list(perm)
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"lax.pshuffle: perm must list every member index 0..{len(perm) - 1} "
                         f"exactly once, got {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pbroadcast(x, axis_name, source):
    """Every member gets the ``x`` of member ``source``.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> from_1 = lambda v: lax.pbroadcast(v, "i", 1)
    >>> ft.vmap(from_1, axis_name="i")(np.array([1.0, 2.0, 3.0]))
    array([2., 2., 2.])
    """
    name = _one_name(axis_name, "pbroadcast")
    size = _axis_trace(name, "pbroadcast").axis_size
    if isinstance(source, bool) or not isinstance(source, (int, np.integer)) or not (
            0 <= source < size):
        raise ValueError(f"lax.pbroadcast: source={source!r} must be a member index in "
                         f"[0, {size})")
    # the source's value, masked into a sum: linear, so every derivative follows
    is_source = eq(axis_index(name), np.int32(source))

    def broadcast_leaf(leaf):
        kept = select(broadcast(is_source, shape_of(leaf)), leaf, zeros_like(leaf))
        return psum_p.bind(kept, axis_name=name)
    return tree_map(broadcast_leaf, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Exchange pieces between members: axis ``split_axis`` of ``x`` (of the axis size;
    with ``tiled=True`` divisible by it) is split among the members, and the pieces each
    member receives are stacked along a new axis ``concat_axis`` (``tiled``: concatenated
    along the existing one).  Member ``b`` gets piece ``b`` of every member's ``x``.  A
    tuple of names exchanges over their product (the first name major).

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> x = np.arange(4.0).reshape(2, 2)   # member m holds row m
    >>> ft.vmap(lambda r: lax.all_to_all(r, "i", 0, 0), axis_name="i")(x)  # the transpose
    array([[0., 2.],
           [1., 3.]])
    """
    _check_groups(axis_index_groups, "all_to_all")
    names = _names(axis_name, "all_to_all")
    size = axis_size(names)

    def exchange(leaf):
        shape = shape_of(leaf)
        split = _axis_of(leaf, split_axis, "all_to_all", "split_axis")
        concat = _axis_of(leaf, concat_axis, "all_to_all", "concat_axis")
        if (shape[split] % size if tiled else shape[split] != size):
            raise ValueError(
                f"lax.all_to_all: axis split_axis={split_axis} of the operand (shape "
                f"{shape}) must be {'divisible by' if tiled else 'equal to'} the size "
                f"{size} of axis {axis_name!r}")
        if len(names) == 1:
            return all_to_all_p.bind(leaf, axis_name=names[0], split_axis=split,
                                     concat_axis=concat, tiled=bool(tiled), axis_size=size)
        return _all_to_all_over(leaf, names, split, concat, bool(tiled), size)
    return tree_map(exchange, x)


def _all_to_all_over(x, names: tuple, split: int, concat: int, tiled: bool, size: int):
    # Several axes as one (the first name major): every member's operand gathered, then
    # this member's piece of each.  Linear pieces, so derivatives follow.
    shape = shape_of(x)
    everyone = x
    for name in reversed(names):
        everyone = all_gather(everyone, name)
    everyone = reshape(everyone, (size,) + shape)
    chunk = shape[split] // size if tiled else 1
    starts = [np.int32(0)] * (len(shape) + 1)
    starts[1 + split] = mul(axis_index(names), np.int32(chunk))
    sizes = [size] + list(shape)
    sizes[1 + split] = chunk
    pieces = dynamic_slice(everyone, starts, sizes)  # (sender, ...)
    if not tiled:
        pieces = reshape(pieces, (size,) + shape[:split] + shape[split + 1:])
    out = moveaxis(pieces, 0, concat)
    if tiled:  # senders-major into the concat axis
        out_shape = shape_of(out)
        out = reshape(out, out_shape[:concat] + (out_shape[concat] * out_shape[concat + 1],)
                      + out_shape[concat + 2:])
    return out


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named batch axis with axis ``axis`` of ``x`` (of the axis size):
    ``all_to_all(x, axis_name, axis, axis)``.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> x = np.arange(4.0).reshape(2, 2)
    >>> ft.vmap(lambda r: lax.pswapaxes(r, "i", 0), axis_name="i")(x)
    array([[0., 2.],
           [1., 3.]])
    """
    _check_groups(axis_index_groups, "pswapaxes")
    return all_to_all(x, axis_name, axis, axis)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum of ``x`` over the members, scattered: member ``b`` keeps index ``b`` of axis
    ``scatter_dimension`` of the sum (of the axis size), or with ``tiled=True`` its ``b``-th
    equal chunk along that axis.

    >>> import numpy as np, functrans as ft, functrans.lax as lax
    >>> x = np.arange(4.0).reshape(2, 2)   # the sum over members is [2., 4.]
    >>> ft.vmap(lambda r: lax.psum_scatter(r, "i"), axis_name="i")(x)
    array([2., 4.])
    """
    _check_groups(axis_index_groups, "psum_scatter")
    name = _one_name(axis_name, "psum_scatter")
    size = _axis_trace(name, "psum_scatter").axis_size

    def scatter(leaf):
        shape = shape_of(leaf)
        dim = _axis_of(leaf, scatter_dimension, "psum_scatter", "scatter_dimension")
        if (shape[dim] % size if tiled else shape[dim] != size):
            raise ValueError(
                f"lax.psum_scatter: axis scatter_dimension={scatter_dimension} of the operand "
                f"(shape {shape}) must be {'divisible by' if tiled else 'equal to'} the size "
                f"{size} of axis {name!r}")
        return reduce_scatter_p.bind(leaf, axis_name=name, scatter_dimension=dim,
                                     tiled=bool(tiled), axis_size=size)
    return tree_map(scatter, x)


# -- abstract evaluation -------------------------------------------------------------------

def _gathered_shape(shape: tuple, axis: int, tiled: bool, size: int) -> tuple:
    if tiled:
        return shape[:axis] + (shape[axis] * size,) + shape[axis + 1:]
    return shape[:axis] + (size,) + shape[axis:]


def _all_to_all_shape(shape: tuple, split_axis: int, concat_axis: int, tiled: bool,
                      size: int) -> tuple:
    out = list(shape)
    if tiled:
        out[split_axis] //= size
        out[concat_axis] *= size
        return tuple(out)
    del out[split_axis]
    return tuple(out[:concat_axis] + [size] + out[concat_axis:])


def _scattered_shape(shape: tuple, dim: int, tiled: bool, size: int) -> tuple:
    if tiled:
        return shape[:dim] + (shape[dim] // size,) + shape[dim + 1:]
    return shape[:dim] + shape[dim + 1:]


for _p in (psum_p, pmax_p, pmin_p, all_gather_p, axis_index_p, ppermute_p, all_to_all_p,
           reduce_scatter_p):
    impl_rules[_p] = _unbound
abstract_eval_rules[psum_p] = lambda x, *, axis_name: x
abstract_eval_rules[pmax_p] = lambda x, *, axis_name: x
abstract_eval_rules[pmin_p] = lambda x, *, axis_name: x
abstract_eval_rules[all_gather_p] = lambda x, *, axis_name, axis, tiled, axis_size: (
    ShapedArray(_gathered_shape(x.shape, axis, tiled, axis_size), x.dtype, x.weak_type))
abstract_eval_rules[axis_index_p] = lambda *, axis_name: ShapedArray((), np.dtype(np.int32))
abstract_eval_rules[ppermute_p] = lambda x, *, axis_name, perm: x
abstract_eval_rules[all_to_all_p] = (
    lambda x, *, axis_name, split_axis, concat_axis, tiled, axis_size: ShapedArray(
        _all_to_all_shape(x.shape, split_axis, concat_axis, tiled, axis_size), x.dtype,
        x.weak_type))
abstract_eval_rules[reduce_scatter_p] = (
    lambda x, *, axis_name, scatter_dimension, tiled, axis_size: ShapedArray(
        _scattered_shape(x.shape, scatter_dimension, tiled, axis_size), x.dtype,
        x.weak_type))


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


def _members_first(trace, x, d):
    """``x`` with the trace's member axis in front (made, when ``x`` is the same for every
    member)."""
    if d is not_mapped:
        return broadcast(x, (trace.axis_size,))
    return moveaxis(x, d, 0)


def _ppermute_batch(trace, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    if trace.axis_name != axis_name:  # elementwise for another axis
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    xs = _members_first(trace, x, d)
    shape = shape_of(xs)
    source_of = {dst: src for src, dst in perm}
    pieces = []
    for member in range(trace.axis_size):
        src = source_of.get(member, member)
        piece = slice_(xs, (src,) + (0,) * (len(shape) - 1), (src + 1,) + shape[1:])
        pieces.append(piece if member in source_of else zeros_like(piece))
    return concatenate(pieces, 0), 0


def _all_to_all_batch(trace, vals, dims, *, axis_name, split_axis, concat_axis, tiled,
                      axis_size):
    (x,), (d,) = vals, dims
    if trace.axis_name != axis_name:  # our axis is a leading member axis of the operand
        if d is not_mapped:
            return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis,
                                     concat_axis=concat_axis, tiled=tiled,
                                     axis_size=axis_size), d
        return all_to_all_p.bind(moveaxis(x, d, 0), axis_name=axis_name,
                                 split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 tiled=tiled, axis_size=axis_size), 0
    xs = _members_first(trace, x, d)  # (sender, ...), split axis at 1 + split_axis
    shape = shape_of(xs)
    if tiled:  # the split axis into (receiver, piece)
        split = 1 + split_axis
        xs = reshape(xs, shape[:split] + (axis_size, shape[split] // axis_size)
                     + shape[split + 1:])
    out = moveaxis(xs, 1 + split_axis, 0)  # (receiver, sender, rest)
    out = moveaxis(out, 1, 1 + concat_axis)  # the senders where the rest's concat axis is
    if tiled:  # senders-major into the concat axis
        shape = shape_of(out)
        c = 1 + concat_axis
        out = reshape(out, shape[:c] + (shape[c] * shape[c + 1],) + shape[c + 2:])
    return out, 0


def _reduce_scatter_batch(trace, vals, dims, *, axis_name, scatter_dimension, tiled,
                          axis_size):
    (x,), (d,) = vals, dims
    if trace.axis_name != axis_name:
        if d is not_mapped:
            return reduce_scatter_p.bind(x, axis_name=axis_name,
                                         scatter_dimension=scatter_dimension, tiled=tiled,
                                         axis_size=axis_size), d
        return reduce_scatter_p.bind(moveaxis(x, d, 0), axis_name=axis_name,
                                     scatter_dimension=scatter_dimension + 1, tiled=tiled,
                                     axis_size=axis_size), 0
    total = mul(x, axis_size) if d is not_mapped else reduce_sum(x, (d,))
    if tiled:  # the scattered axis into (member, chunk)
        shape = shape_of(total)
        total = reshape(total, shape[:scatter_dimension] + (
            axis_size, shape[scatter_dimension] // axis_size) + shape[scatter_dimension + 1:])
    return moveaxis(total, scatter_dimension, 0), 0


batching.named_batching_rules[ppermute_p] = _ppermute_batch
batching.named_batching_rules[all_to_all_p] = _all_to_all_batch
batching.named_batching_rules[reduce_scatter_p] = _reduce_scatter_batch


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



# ppermute sends back along the inverse pairs; all_to_all's pieces go back with the split
# and concat axes swapped; psum_scatter's member b received slice b of the sum of every
# member's input, so each input gets every member's cotangent: all_gather.
transpose.deflinear(ppermute_p, lambda ct, x, *, axis_name, perm: [ppermute_p.bind(
    ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm))])
transpose.deflinear(all_to_all_p, lambda ct, x, *, axis_name, split_axis, concat_axis, tiled,
                    axis_size: [all_to_all_p.bind(ct, axis_name=axis_name,
                                                  split_axis=concat_axis,
                                                  concat_axis=split_axis, tiled=tiled,
                                                  axis_size=axis_size)])
transpose.deflinear(reduce_scatter_p, lambda ct, x, *, axis_name, scatter_dimension, tiled,
                    axis_size: [all_gather_p.bind(ct, axis_name=axis_name,
                                                  axis=scatter_dimension, tiled=tiled,
                                                  axis_size=axis_size)])
