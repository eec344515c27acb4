"""Windowed reductions (``reduce_window``, pooling) and general reductions (``reduce``,
``map``, ``associative_scan``), with JAX's ``jax.lax`` names and signatures.

**Windows.** A window reduction pads the operand (``padding`` elements of the reduction's
identity before and after each axis, ``base_dilation - 1`` of them between neighbours),
then slides a window of ``window_dimensions`` (its taps ``window_dilation`` apart) over it
in steps of ``window_strides``, reducing each window to one output element.  The impls
build the padded array once and fold over the window *offsets*: one strided view of the
padded array per offset, so a 2x2 max-pool is three ``maximum`` calls on whole arrays, never
a Python loop over output positions (a fold measured 7x faster than reducing a
``sliding_window_view`` over its window axes, 3.2 against 23.8 ms on f64[64,16,32,32]).

* ``reduce_window_sum`` is linear.  Its transpose spreads each output cotangent back over
  its window: the cotangent, dilated by the strides and padded by the window's reach, is
  window-summed again with the base dilation as stride.
* ``reduce_window_max`` and ``reduce_window_min`` route derivatives to one *selected*
  element per window: the first maximal (minimal) one in row-major window order, padding
  and base-dilation holes counting as the identity (-inf, +inf), and a NaN counting as
  maximal (minimal).  That is JAX's ``select_and_scatter_add`` (its reverse mode) on ties.
  Both modes use the one selection, through two primitives that transpose into each
  other: ``select_and_gather_add`` (the JVP: each output takes the tangent of its
  window's selected element) and ``select_and_scatter_add`` (each output cotangent is
  added to its window's selected element).  Neither depends smoothly on the operand, so
  their derivative in it is zero.
* Any other computation (a pytree of operands, a non-identity initial value, products,
  log-sum-exp, ...) is the primitive ``reduce_window``, which holds the computation traced
  on scalars (a jaxpr).  Its impl is the same fold written with ``pad``, strided ``slice``
  and the computation applied elementwise (under a batch trace); its JVP is that fold
  differentiated, the computation's own JVP at every offset, so reverse mode transposes
  pads, slices and the computation's linear pieces; batching adds a window of one.  A
  computation that closes over arrays is the fold itself, which carries them along.

**General reductions.** ``reduce`` recognises ``add``/``mul``/``max``/``min`` (and
``bitwise_or``/``bitwise_and`` of booleans) with their identities and uses the reduction
primitives; any other computation is a pairwise tree over the reduced elements, in their
order, so a non-commutative monoid (matrix products) is reduced correctly.  ``map`` is a
``scan``, or a ``scan`` of batches of ``batch_size`` plus one batch of the rest, as JAX
does.  ``associative_scan`` is the parallel prefix of Ladner and Fischer as JAX writes
it: combine neighbours, scan the half as long result recursively, fill in the rest; made
of slices and concatenations only, so it differentiates and batches like any function.
"""
from __future__ import annotations

import builtins
import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np

from functrans import backend
from functrans.backend import array_module, is_device_array
from functrans.core import (Primitive, ShapedArray, Tracer, abstract_eval_rules, eval_jaxpr,
                            get_aval, impl_rules)
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.jaxpr_transforms import trace_function
from functrans.primitives.control_flow import scan
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.convolution import padtype_to_pads
from functrans.primitives.cumulative import reduce_prod
from functrans.primitives.elementwise import add, bitwise_and, bitwise_or, max, min, mul
from functrans.primitives.reductions import reduce_max, reduce_min
from functrans.primitives.shape import (bdim_to_front, broadcast_in_dim, expand_dims,
                                        normalize_axis, reduce_sum, reshape, rev, shape_of,
                                        transpose_axes)
from functrans.primitives.slicing import concatenate, pad, slice
from functrans.tree_util import tree_flatten, tree_leaves, tree_unflatten

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's)
__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce", "map", "associative_scan"]

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
           "window_dilation")


# -- shapes and parameters -----------------------------------------------------------------


def _dilated(n: int, d: int) -> int:
    """The length of ``n`` elements with ``d - 1`` holes between neighbours."""
    return 0 if n == 0 else (n - 1) * d + 1


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The shape of a window reduction's result: per axis, the number of window positions
    that fit in the padded, base-dilated operand.

    >>> from functrans import lax
    >>> lax.reduce_window_shape_tuple((5, 6), (2, 3), (1, 2), ((0, 0), (1, 1)))
    (4, 3)
    """
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    out = []
    for size, w, s, (lo, hi), bd, wd in zip(operand_shape, window_dimensions, window_strides,
                                             padding, base_dilation, window_dilation):
        room = _dilated(size, bd) + lo + hi - _dilated(w, wd)
        out.append(0 if room < 0 else room // s + 1)
    return tuple(out)


def _int_tuple(name: str, argument: str, value, shape: tuple, least: int) -> tuple:
    try:
        out = tuple(int(v) for v in value)
        ok = all(int(v) == v and not isinstance(v, bool) for v in value)
    except TypeError:
        raise TypeError(f"{name}: {argument} must be a sequence of ints, got {value!r}"
                        ) from None
    if not ok:
        raise TypeError(f"{name}: {argument} must be a sequence of ints, got {value!r}")
    if len(out) != len(shape):
        raise TypeError(f"{name}: {argument} {out} has {len(out)} entries for an operand of "
                        f"shape {shape} (rank {len(shape)}); give one per axis")
    if any(v < least for v in out):
        raise ValueError(f"{name}: {argument} {out} must be at least {least} on every axis "
                         f"(operand shape {shape})")
    return out


def _window_params(name: str, shape: tuple, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation, negative: bool = False) -> dict:
    """The checked parameters of a window reduction of an operand of ``shape``; with
    ``negative``, padding may be negative (see ``_cropped``)."""
    n = len(shape)
    window_dimensions = _int_tuple(name, "window_dimensions", window_dimensions, shape, 1)
    window_strides = _int_tuple(name, "window_strides", window_strides, shape, 1)
    base_dilation = _int_tuple(name, "base_dilation", (1,) * n if base_dilation is None
                               else base_dilation, shape, 1)
    window_dilation = _int_tuple(name, "window_dilation", (1,) * n if window_dilation is None
                                 else window_dilation, shape, 1)
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "SAME_LOWER", "VALID"):
            raise ValueError(f"{name}: unknown padding {padding!r} for an operand of shape "
                             f"{shape}; expected 'SAME', 'SAME_LOWER', 'VALID' or a "
                             "sequence of (low, high) pairs, one per axis")
        padding = padtype_to_pads(shape, [_dilated(w, d) for w, d in
                                          zip(window_dimensions, window_dilation)],
                                  window_strides, padding)
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: padding must be 'SAME', 'SAME_LOWER', 'VALID' or a "
                        f"sequence of (low, high) pairs, got {padding!r} for an operand of "
                        f"shape {shape}") from None
    if len(pairs) != n:
        raise TypeError(f"{name}: padding {pairs} has {len(pairs)} pairs for an operand of "
                        f"shape {shape} (rank {n}); give one (low, high) pair per axis")
    if not negative and any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"{name}: negative padding {pairs} is not supported (operand shape "
                         f"{shape}); slice the operand instead")
    return dict(window_dimensions=window_dimensions, window_strides=window_strides,
                padding=pairs, base_dilation=base_dilation, window_dilation=window_dilation)


def _check_params(name: str, aval: ShapedArray, params: dict) -> tuple:
    """Abstract evaluation's check of the parameters; the result's shape."""
    for key in _PARAMS:
        if len(params[key]) != aval.ndim:
            raise TypeError(f"{name}: {key} {params[key]} for an operand of shape "
                            f"{aval.shape}; give one per axis")
    if any(v < 0 for pair in params["padding"] for v in pair):
        raise ValueError(f"{name}: the primitive takes padding of at least 0, got "
                         f"{params['padding']} (the lax functions crop the operand first)")
    return reduce_window_shape_tuple(aval.shape, **params)


def _cropped(operands: list, params: dict) -> tuple[list, dict]:
    """Negative padding removes elements of the base-dilated operand (as ``lax.pad`` and
    JAX's ``reduce_window`` do): the operands sliced to the elements that remain, and the
    padding (at least 0) that puts them where they were, holes of the dilation included.
    The slice carries every derivative and batching rule."""
    padding = params["padding"]
    if all(lo >= 0 and hi >= 0 for lo, hi in padding):
        return operands, params
    starts, limits, pairs = [], [], []
    for n, (lo, hi), d in zip(shape_of(operands[0]), padding, params["base_dilation"]):
        length = _dilated(n, d)
        if lo >= 0 and hi >= 0:
            start, limit, pair = 0, n, (lo, hi)
        else:
            a, b = builtins.max(-lo, 0), length - builtins.max(-hi, 0)  # kept: [a, b)
            first, last = -(-a // d), (b - 1) // d  # the operand's elements in there
            if b <= a or first > last:  # none remain: only padding, if any
                start, limit, pair = 0, 0, (0, builtins.max(length + lo + hi, 0))
            else:
                start, limit = first, last + 1
                pair = (builtins.max(lo, 0) + first * d - a,
                        builtins.max(hi, 0) + b - 1 - last * d)
        starts.append(start)
        limits.append(limit)
        pairs.append(pair)
    return ([slice(x, starts, limits) for x in operands],
            dict(params, padding=tuple(pairs)))


def _batched_params(params: dict, axis: int) -> dict:
    """The parameters with a window of one (no padding, no dilation) on a new ``axis``."""
    def insert(t, v):
        return t[:axis] + (v,) + t[axis:]
    return dict(window_dimensions=insert(params["window_dimensions"], 1),
                window_strides=insert(params["window_strides"], 1),
                padding=insert(params["padding"], (0, 0)),
                base_dilation=insert(params["base_dilation"], 1),
                window_dilation=insert(params["window_dilation"], 1))


def _identity(kind: str, dtype) -> Any:
    """The identity of ``add``, ``max`` or ``min`` as a NumPy scalar of ``dtype``."""
    dtype = np.dtype(dtype)
    if kind == "add":
        return dtype.type(0)
    if dtype == np.bool_:
        return np.bool_(kind == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if kind == "max" else info.max)
    return dtype.type(-np.inf if kind == "max" else np.inf)


# -- the arrays: padding and the views of the window offsets --------------------------------


def _padded(xp, x, fill, padding, base_dilation):
    """``x`` base-dilated and padded with ``fill`` (``x`` itself when neither applies)."""
    if all(d == 1 for d in base_dilation) and all(p == (0, 0) for p in padding):
        return x
    shape = tuple(_dilated(n, d) + lo + hi
                  for n, d, (lo, hi) in zip(x.shape, base_dilation, padding))
    out = backend.full(shape, fill, x.dtype, like=x)
    out[_interior(x.shape, padding, base_dilation)] = x
    return out


def _interior(shape, padding, base_dilation) -> tuple:
    """The index of the operand's own elements inside the padded array."""
    return tuple(builtins.slice(lo, lo + _dilated(n, d), d)
                 for n, (lo, _), d in zip(shape, padding, base_dilation))


def _offset_slices(out_shape, window_dimensions, window_strides, window_dilation):
    """For each window offset (row-major), the index of the padded array's elements that
    this tap of every window reads: a strided slice of ``out_shape``."""
    for offset in itertools.product(*(range(w) for w in window_dimensions)):
        yield tuple(builtins.slice(k * d, k * d + (o - 1) * s + 1, s)
                    for k, d, o, s in zip(offset, window_dilation, out_shape, window_strides))


def _window_count(window_dimensions) -> int:
    return math.prod(window_dimensions)


# -- reduce_window_sum, reduce_window_max, reduce_window_min ------------------------------


def _window_reducer(name: str, kind: str, fold: str) -> Primitive:
    prim = Primitive(name, origin="library")

    def impl(x, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        xp = array_module(x)
        x = xp.asarray(x)
        out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation)
        init = _identity(kind, x.dtype)
        if 0 in out_shape:
            return backend.full(out_shape, init, x.dtype, like=x)
        p = _padded(xp, x, init, padding, base_dilation)
        combine = getattr(xp, fold)
        acc = None
        for index in _offset_slices(out_shape, window_dimensions, window_strides,
                                    window_dilation):
            acc = p[index] if acc is None else combine(acc, p[index])
        return backend.copy(acc) if _window_count(window_dimensions) == 1 else acc

    def abstract_eval(aval, **params):
        if kind == "add" and (aval.dtype == np.bool_ or aval.dtype.kind not in "iufc"):
            raise TypeError(f"{name}: the operand must have a number dtype, got {aval.dtype}")
        if kind != "add" and aval.dtype.kind == "c":
            raise TypeError(f"{name} is not defined for complex values (dtype {aval.dtype})")
        return ShapedArray(_check_params(name, aval, params), aval.dtype, aval.weak_type)

    def batch(vals, dims, **params):
        (x,), (bd,) = vals, dims
        return prim.bind(x, **_batched_params(params, bd)), bd

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    batching.batching_rules[prim] = batch
    # jit calls the impl, which always allocates its result: never copied for the caller
    codegen.deflowering(prim, fresh=True)
    return prim


reduce_window_sum_p = _window_reducer("reduce_window_sum", "add", "add")
reduce_window_max_p = _window_reducer("reduce_window_max", "max", "maximum")
reduce_window_min_p = _window_reducer("reduce_window_min", "min", "minimum")


def _pad_signed(x, value, config):
    """``pad`` that also takes negative low and high padding (removing elements)."""
    if all(c == (0, 0, 0) for c in config):
        return x
    grown = pad(x, value, [(builtins.max(lo, 0), builtins.max(hi, 0), i)
                           for lo, hi, i in config])
    shape = shape_of(grown)
    start = [builtins.max(-lo, 0) for lo, _, _ in config]
    limit = [n - builtins.max(-hi, 0) for n, (_, hi, _) in zip(shape, config)]
    return slice(grown, start, limit)


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    # The padded operand's cotangent at p sums ct[o] over the (o, k) with
    # o * stride + k * window_dilation == p: a window sum (window_dilation apart) of ct
    # dilated by the strides and shifted by the window's reach.  Reading it at the
    # operand's own positions (every base_dilation-th, from the low padding on) makes
    # base_dilation the stride of that window sum.
    assert is_undefined_primal(x)
    shape = x.aval.shape
    if 0 in shape:
        return [Zero(x.aval)]
    zero = np.zeros((), get_aval(ct).dtype)[()]  # a NumPy scalar: no array on the host
    if window_strides == window_dimensions and all(
            d == 1 for d in base_dilation + window_dilation):
        # Windows that tile the padded operand: each element takes its window's cotangent,
        # a broadcast (3.4 ms against 7.6 for the window sum, 2x2 avg-pool f64[64,16,32,32])
        out_shape = shape_of(ct)
        tiled = broadcast_in_dim(ct, tuple(n for o, w in zip(out_shape, window_dimensions)
                                           for n in (o, w)),
                                 tuple(range(0, 2 * len(shape), 2)))
        tiled = reshape(tiled, tuple(o * w for o, w in zip(out_shape, window_dimensions)))
        return [_pad_signed(tiled, zero, [(-lo, lo + n - o * w, 0) for n, o, w, (lo, _) in
                                          zip(shape, out_shape, window_dimensions, padding)])]
    config = []
    for n, o, w, s, (lo, _), bd, wd in zip(shape, shape_of(ct), window_dimensions,
                                           window_strides, padding, base_dilation,
                                           window_dilation):
        reach = (w - 1) * wd
        config.append((reach - lo, (n - 1) * bd + 1 + lo - _dilated(o, s), s - 1))
    spread = _pad_signed(ct, zero, config)
    ones = (1,) * len(shape)
    return [reduce_window_sum_p.bind(spread, window_dimensions=window_dimensions,
                                     window_strides=base_dilation,
                                     padding=((0, 0),) * len(shape), base_dilation=ones,
                                     window_dilation=window_dilation)]


transpose.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(prim: Primitive, kind: str):
    def rule(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **params)
        if type(t) is Zero:
            return ans, Zero.from_value(ans)
        return ans, select_and_gather_add_p.bind(t, x, select=kind, **params)
    return rule


ad.jvp_rules[reduce_window_max_p] = _chooser_jvp(reduce_window_max_p, "max")
ad.jvp_rules[reduce_window_min_p] = _chooser_jvp(reduce_window_min_p, "min")

# -- the selection: select_and_gather_add and select_and_scatter_add ----------------------


def _selection(xp, x, select: str, params: dict, out_shape: tuple) -> list:
    """For each window tap (row-major), the index of the padded array it reads and a mask
    of the windows whose first maximal (``select="max"``) or minimal element it is; padding
    and holes hold the identity, and a NaN is the extremum of its window.

    The extremum first (a fold of ``maximum``, which propagates NaN), then one comparison
    per tap: 6.0 ms for a 2x2 pool of f64[64,16,32,32], against 8.0 for ``argmax`` over the
    taps stacked on a last axis (one measurement, same machine and load)."""
    p = _padded(xp, x, _identity(select, x.dtype), params["padding"], params["base_dilation"])
    indices = list(_offset_slices(out_shape, params["window_dimensions"],
                                  params["window_strides"], params["window_dilation"]))
    combine = xp.maximum if select == "max" else xp.minimum
    best = p[indices[0]]
    for index in indices[1:]:
        best = combine(best, p[index])
    # A NaN is its window's extremum: looked for at each tap only where the fold met one
    # (one check of the result saves two operations per tap).
    # On device and lazy (dask) arrays the check would synchronise or compute: every tap
    # looks for NaN there.
    inexact = x.dtype.kind in "fc" and (xp is not np or bool(np.isnan(best).any()))
    taken = None
    selection = []
    for index in indices:
        tap = p[index]
        hit = (tap == best) | (tap != tap) if inexact else tap == best
        first = hit if taken is None else hit & ~taken
        taken = hit if taken is None else taken | hit
        selection.append((index, first))
    return selection


def _select_and_gather_add_impl(t, x, *, select, **params):
    xp = array_module(t, x)
    t, x = xp.asarray(t), xp.asarray(x)
    out_shape = reduce_window_shape_tuple(x.shape, **params)
    if 0 in out_shape:
        return xp.zeros(out_shape, dtype=t.dtype)
    pt = _padded(xp, t, t.dtype.type(0), params["padding"], params["base_dilation"])
    out = None
    for index, first in _selection(xp, x, select, params, out_shape):
        out = xp.where(first, pt[index], t.dtype.type(0) if out is None else out)
    return out


def _select_and_scatter_add_impl(ct, x, *, select, **params):
    xp = array_module(ct, x)
    ct, x = xp.asarray(ct), xp.asarray(x)
    out_shape = reduce_window_shape_tuple(x.shape, **params)
    if 0 in out_shape or x.size == 0:
        return xp.zeros(x.shape, dtype=ct.dtype)
    padded_shape = tuple(_dilated(n, d) + lo + hi for n, d, (lo, hi) in
                         zip(x.shape, params["base_dilation"], params["padding"]))
    total = xp.zeros(padded_shape, dtype=ct.dtype)
    zero = ct.dtype.type(0)
    # Windows apart by at least their span: no position is read by two taps, so each tap's
    # share is written rather than added.
    apart = all(s >= _dilated(w, d) for s, w, d in zip(
        params["window_strides"], params["window_dimensions"], params["window_dilation"]))
    for index, first in _selection(xp, x, select, params, out_shape):
        if apart:
            total[index] = xp.where(first, ct, zero)
        else:
            total[index] += xp.where(first, ct, zero)  # one tap: distinct positions
    if total.shape == x.shape:
        return total
    return backend.copy(total[_interior(x.shape, params["padding"], params["base_dilation"])])


def _select_abstract_eval(name: str, gather: bool):
    def rule(v, x, *, select, **params):
        if select not in ("max", "min"):
            raise ValueError(f"{name}: select must be 'max' or 'min', got {select!r}")
        if x.dtype.kind == "c":
            raise TypeError(f"{name}: the operand must be real, got dtype {x.dtype}")
        out_shape = _check_params(name, x, params)
        want = x.shape if gather else out_shape
        if v.shape != want:
            what = "tangents" if gather else "source (cotangents)"
            raise TypeError(f"{name}: {what} of shape {v.shape} for an operand of shape "
                            f"{x.shape} and windows of shape {out_shape}; expected {want}")
        return ShapedArray(out_shape if gather else x.shape, v.dtype, v.weak_type)
    return rule


select_and_gather_add_p = Primitive("select_and_gather_add", origin="library")
select_and_scatter_add_p = Primitive("select_and_scatter_add", origin="library")


def _select_jvp(prim: Primitive):
    # Linear in the first operand; the selection is piecewise constant in the second.
    def rule(primals, tangents, **params):
        (v, x), (dv, _) = primals, tangents
        ans = prim.bind(v, x, **params)
        return ans, (Zero.from_value(ans) if type(dv) is Zero else prim.bind(dv, x, **params))
    return rule


def _select_transpose(other: Primitive):
    def rule(ct, v, x, **params):
        if is_undefined_primal(x):
            raise TypeError(f"{other.name}: not linear in the operand it selects by")
        return [other.bind(ct, x, **params), None]
    return rule


def _select_batch(prim: Primitive):
    def rule(vals, dims, *, select, **params):
        size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
        v, x = (bdim_to_front(v, d, size) for v, d in zip(vals, dims))
        return prim.bind(v, x, select=select, **_batched_params(params, 0)), 0
    return rule


for _prim, _impl, _gather, _other in (
        (select_and_gather_add_p, _select_and_gather_add_impl, True, select_and_scatter_add_p),
        (select_and_scatter_add_p, _select_and_scatter_add_impl, False,
         select_and_gather_add_p)):
    impl_rules[_prim] = _impl
    abstract_eval_rules[_prim] = _select_abstract_eval(_prim.name, _gather)
    ad.jvp_rules[_prim] = _select_jvp(_prim)
    transpose.deftranspose(_prim, _select_transpose(_other))
    batching.batching_rules[_prim] = _select_batch(_prim)
    codegen.deflowering(_prim, fresh=True)  # its impl allocates its result


def select_and_gather_add(tangents, operand, select: str, window_dimensions, window_strides,
                          padding, base_dilation=None, window_dilation=None):
    """For each window of ``operand``, the element of ``tangents`` at the window's first
    maximal (``select="max"``) or minimal element: the JVP of ``reduce_window_max``/``min``.

    >>> import numpy as np
    >>> from functrans.primitives.windows import select_and_gather_add
    >>> select_and_gather_add(np.array([10., 20., 30., 40.]), np.array([1., 3., 3., 2.]),
    ...                       "max", (2,), (2,), "VALID")
    array([20., 30.])
    """
    params = _window_params("select_and_gather_add", shape_of(operand), window_dimensions,
                            window_strides, padding, base_dilation, window_dilation)
    return select_and_gather_add_p.bind(tangents, operand, select=select, **params)


def select_and_scatter_add(source, operand, select: str, window_dimensions, window_strides,
                           padding, base_dilation=None, window_dilation=None):
    """Each element of ``source`` (one per window) added at its window's first maximal
    (``select="max"``) or minimal element of ``operand``: the transpose of
    ``select_and_gather_add``, and the gradient of a max-pool.

    >>> import numpy as np
    >>> from functrans.primitives.windows import select_and_scatter_add
    >>> select_and_scatter_add(np.array([1., 2., 4.]), np.array([5., 3., 5., 1.]),
    ...                        "max", (2,), (1,), "VALID")
    array([1., 0., 6., 0.])
    """
    params = _window_params("select_and_scatter_add", shape_of(operand), window_dimensions,
                            window_strides, padding, base_dilation, window_dilation)
    return select_and_scatter_add_p.bind(source, operand, select=select, **params)


# -- the lax-level functions ---------------------------------------------------------------


def _monoid_bind(prim: Primitive, name: str, operand, window_dimensions, window_strides,
                 padding, base_dilation, window_dilation):
    params = _window_params(name, shape_of(operand), window_dimensions, window_strides,
                            padding, base_dilation, window_dilation, negative=True)
    (operand,), params = _cropped([operand], params)
    abstract_eval_rules[prim](get_aval(operand), **params)  # the dtype errors, eagerly too
    return prim.bind(operand, **params)


def reduce_window_sum(operand, window_dimensions, window_strides, padding,
                      base_dilation=None, window_dilation=None):
    """The sum of each window (``reduce_window`` with ``lax.add`` and 0).

    >>> import numpy as np
    >>> from functrans.primitives.windows import reduce_window_sum
    >>> reduce_window_sum(np.arange(5.), (2,), (1,), "VALID")
    array([1., 3., 5., 7.])
    """
    return _monoid_bind(reduce_window_sum_p, "reduce_window_sum", operand, window_dimensions,
                        window_strides, padding, base_dilation, window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides, padding,
                      base_dilation=None, window_dilation=None):
    """The maximum of each window; derivatives go to the first maximal element.

    >>> import numpy as np
    >>> from functrans.primitives.windows import reduce_window_max
    >>> reduce_window_max(np.array([1., 4., 2., 3.]), (2,), (2,), "VALID")
    array([4., 3.])
    """
    return _monoid_bind(reduce_window_max_p, "reduce_window_max", operand, window_dimensions,
                        window_strides, padding, base_dilation, window_dilation)


def reduce_window_min(operand, window_dimensions, window_strides, padding,
                      base_dilation=None, window_dilation=None):
    """The minimum of each window; derivatives go to the first minimal element.

    >>> import numpy as np
    >>> from functrans.primitives.windows import reduce_window_min
    >>> reduce_window_min(np.array([1., 4., 2., 3.]), (2,), (2,), "VALID")
    array([1., 2.])
    """
    return _monoid_bind(reduce_window_min_p, "reduce_window_min", operand, window_dimensions,
                        window_strides, padding, base_dilation, window_dilation)


_MONOIDS = {add: "add", max: "max", min: "min"}
_WINDOW_PRIMITIVES = {"add": reduce_window_sum_p, "max": reduce_window_max_p,
                      "min": reduce_window_min_p}


def _known_value(init, value) -> bool:
    """Whether ``init`` is a known (host, untraced) scalar equal to ``value``."""
    if isinstance(init, Tracer) or is_device_array(init):
        return False
    try:
        known = np.asarray(init)
        return known.shape == () and bool(known == value)
    except (TypeError, ValueError):
        return False


def _is_identity(init, kind: str, dtype) -> bool:
    """Whether ``init`` is the identity of ``kind`` ("add", "max", "min") in ``dtype``."""
    return _known_value(init, _identity(kind, dtype))


def _scalar_init(name: str, init, aval: ShapedArray):
    """``init`` as a scalar of the operand's dtype: Python scalars are cast, arrays must
    already have it."""
    if isinstance(init, (bool, int, float, complex)):
        try:
            value = np.asarray(init, aval.dtype)[()]
            exact = value == init or init != init  # NaN stays NaN
        except (OverflowError, TypeError, ValueError):
            exact = False
        if not exact:
            raise TypeError(f"{name}: the init value {init!r} is not a value of the operand's "
                            f"dtype {aval.dtype} (operand shape {aval.shape})")
        return value
    init_aval = get_aval(init)
    if init_aval.shape != ():
        raise TypeError(f"{name}: init_values must be scalars, got one of shape "
                        f"{init_aval.shape} for an operand of shape {aval.shape}")
    if init_aval.dtype != aval.dtype:
        raise TypeError(f"{name}: an init value of dtype {init_aval.dtype} for an operand of "
                        f"dtype {aval.dtype}; they must agree")
    return init


def _flat_pair(name: str, operands, init_values) -> tuple:
    flat, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise ValueError(f"{name}: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}")
    if not flat:
        raise ValueError(f"{name}: needs at least one operand")
    avals = [get_aval(x) for x in flat]
    if any(a.shape != avals[0].shape for a in avals):
        raise ValueError(f"{name}: every operand must have the same shape, got "
                         + ", ".join(str(a.shape) for a in avals))
    return flat, tree, [_scalar_init(name, i, a) for i, a in zip(inits, avals)], avals


def _combiner(name: str, computation: Callable, tree, avals) -> Callable:
    """``computation`` on two pytrees, as a function of their flat leaves."""
    n = len(avals)

    def combine(*leaves):
        out = computation(tree_unflatten(tree, leaves[:n]), tree_unflatten(tree, leaves[n:]))
        flat, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"{name}: the computation must return the operands' structure "
                            f"{tree}, got {out_tree}")
        result = []
        for x, aval in zip(flat, avals):
            x_aval = get_aval(x)
            if x_aval.dtype != aval.dtype:
                if not x_aval.weak_type:
                    raise TypeError(f"{name}: the computation returned dtype {x_aval.dtype} "
                                    f"for an operand of dtype {aval.dtype}; they must agree")
                x = convert_element_type(x, aval.dtype)
            result.append(x)
        return result
    return combine


def _elementwise(combine: Callable, args: list, n: int) -> list:
    """``combine`` (traced on scalars) at every position of ``2n`` equal-shaped arrays."""
    shape = shape_of(args[0])
    size = math.prod(shape)
    if size == 0:
        return list(args[:n])
    flat = [reshape(a, (size,)) for a in args]
    outs, dims = batching.batch_flat(combine, size, flat, [0] * len(flat))
    return [reshape(bdim_to_front(o, d, size), shape) for o, d in zip(outs, dims)]


def _full_like(x, value, shape: tuple):
    """An array of ``shape`` filled with the scalar ``value``, on ``x``'s device: an empty
    slice of ``x`` padded (differentiable in ``value``)."""
    nd = len(shape_of(x))
    empty = slice(x, (0,) * nd, (0,) * nd)
    if len(shape) != nd:
        empty = reshape(empty, (0,) * len(shape))
    return pad(empty, value, [(0, n, 0) for n in shape])


def _general_reduce_window(operands: list, inits: list, combine: Callable,
                           params: dict) -> list:
    """The fold over window offsets, in primitives: pad with the initial values, one
    strided slice per offset, the computation elementwise."""
    out_shape = reduce_window_shape_tuple(shape_of(operands[0]), **params)
    acc = [_full_like(x, init, out_shape) for x, init in zip(operands, inits)]
    if 0 in out_shape:
        return acc
    config = [(lo, hi, bd - 1) for (lo, hi), bd in zip(params["padding"],
                                                      params["base_dilation"])]
    padded = [pad(x, init, config) for x, init in zip(operands, inits)]
    for index in _offset_slices(out_shape, params["window_dimensions"],
                                params["window_strides"], params["window_dilation"]):
        start, limit = [i.start for i in index], [i.stop for i in index]
        taps = [slice(p, start, limit, params["window_strides"]) for p in padded]
        acc = _elementwise(combine, acc + taps, len(operands))
    return acc


# -- reduce_window: any computation -------------------------------------------------------

reduce_window_p = Primitive("reduce_window", multiple_results=True, origin="library")


def _jaxpr_combiner(jaxpr) -> Callable:
    return lambda *leaves: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *leaves)


def _reduce_window_impl(*args, jaxpr, **params):
    k = len(args) // 2
    return _general_reduce_window(list(args[:k]), list(args[k:]), _jaxpr_combiner(jaxpr),
                                  params)


def _reduce_window_abstract_eval(*avals, jaxpr, **params):
    k = len(avals) // 2
    operands, inits = avals[:k], avals[k:]
    if any(a.shape != operands[0].shape for a in operands):
        raise ValueError("reduce_window: every operand must have the same shape, got "
                         + ", ".join(str(a.shape) for a in operands))
    if any(i.shape != () or i.dtype != a.dtype for a, i in zip(operands, inits)):
        raise TypeError("reduce_window: init_values must be scalars of the operands' dtypes, "
                        "got " + ", ".join(i.str_short() for i in inits) + " for operands "
                        + ", ".join(a.str_short() for a in operands))
    if len(jaxpr.in_avals) != 2 * k or len(jaxpr.out_avals) != k:
        raise TypeError(f"reduce_window: the computation takes {len(jaxpr.in_avals)} and "
                        f"returns {len(jaxpr.out_avals)} values for {k} operands")
    out_shape = _check_params("reduce_window", operands[0], params)
    return [ShapedArray(out_shape, a.dtype) for a in operands]


def _reduce_window_jvp(primals, tangents, *, jaxpr, **params):
    # The fold in primitives, differentiated: the computation's own JVP at every offset.
    k = len(primals) // 2
    combine = _jaxpr_combiner(jaxpr)
    return ad.jvp_flat(lambda *args: _general_reduce_window(list(args[:k]), list(args[k:]),
                                                            combine, params),
                       primals, tangents)


def _reduce_window_batch(vals, dims, *, jaxpr, **params):
    k = len(vals) // 2
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    if all(d is not_mapped for d in dims[k:]):  # a window of one along the batch axis
        operands = [bdim_to_front(v, d, size) for v, d in zip(vals[:k], dims[:k])]
        outs = reduce_window_p.bind(*operands, *vals[k:], jaxpr=jaxpr,
                                    **_batched_params(params, 0))
        return outs, [0] * k
    # initial values that differ between batch members: the fold, batched piece by piece
    combine = _jaxpr_combiner(jaxpr)
    return batching.batch_flat(lambda *args: _general_reduce_window(
        list(args[:k]), list(args[k:]), combine, params), size, vals, dims)


impl_rules[reduce_window_p] = _reduce_window_impl
abstract_eval_rules[reduce_window_p] = _reduce_window_abstract_eval
ad.jvp_rules[reduce_window_p] = _reduce_window_jvp
batching.batching_rules[reduce_window_p] = _reduce_window_batch


def _computation_jaxpr(name: str, computation: Callable, tree, avals) -> tuple:
    """``computation`` traced on scalars of the operands' dtypes: ``(jaxpr, consts)``."""
    combine = _combiner(name, computation, tree, avals)
    scalars = tree_unflatten(tree, [ShapedArray((), a.dtype) for a in avals])
    in_tree = tree_flatten((scalars, scalars))[1]
    jaxpr, consts, _ = trace_function(
        lambda a, b: combine(*tree_leaves(a), *tree_leaves(b)), in_tree,
        [ShapedArray((), a.dtype) for a in avals] * 2, name, key=computation, static=(tree,))
    return jaxpr, consts


def reduce_window(operand, init_value, computation: Callable, window_dimensions,
                  window_strides=None, padding="VALID", base_dilation=None,
                  window_dilation=None):
    """Reduce each window of ``operand`` with ``computation``, starting from ``init_value``
    (JAX's ``lax.reduce_window``).  ``padding`` is ``"SAME"``, ``"SAME_LOWER"``,
    ``"VALID"`` or one ``(low, high)`` pair per axis, filled with ``init_value``;
    ``base_dilation`` puts holes between the operand's elements and ``window_dilation``
    between the window's taps.  Negative padding removes elements (of the base-dilated
    operand), as in JAX.  ``operand`` and ``init_value`` may be matching pytrees (a
    reduction of several arrays at once; ``computation`` takes and returns such pytrees).

    ``lax.add``, ``lax.max`` and ``lax.min`` with their identities as ``init_value`` are
    the primitives ``reduce_window_sum``/``max``/``min``; any other computation is traced
    on scalars into the primitive ``reduce_window``, a fold over the window's offsets
    differentiated through the computation's own JVP.  A max-pool's derivative goes to the
    first maximal element of each window, as in JAX.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> from functrans import lax
    >>> x = np.array([[1., 2., 6., 3.], [4., 4., 0., 3.]])
    >>> lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID")
    array([[4., 6.]])
    >>> ft.grad(lambda x: fnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2),
    ...                                             "VALID")))(x)
    array([[0., 0., 1., 0.],
           [1., 0., 0., 0.]])
    >>> lax.reduce_window(x, 1., lax.mul, (1, 2), (1, 1), "VALID")
    array([[ 2., 12., 18.],
           [16.,  0.,  0.]])
    """
    name = "reduce_window"
    flat, tree, inits, avals = _flat_pair(name, operand, init_value)
    if window_strides is None:  # JAX's default: every position
        window_strides = (1,) * len(avals[0].shape)
    params = _window_params(name, avals[0].shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation, negative=True)
    flat, params = _cropped(flat, params)
    avals = [a.update(shape=tuple(shape_of(flat[0]))) for a in avals]
    kind = _MONOIDS.get(computation) if len(flat) == 1 else None
    if kind is not None and _is_identity(inits[0], kind, avals[0].dtype):
        prim = _WINDOW_PRIMITIVES[kind]
        abstract_eval_rules[prim](avals[0], **params)  # the dtype errors, eagerly too
        return tree_unflatten(tree, [prim.bind(flat[0], **params)])
    jaxpr, consts = _computation_jaxpr(name, computation, tree, avals)
    if consts:  # it closes over arrays: the fold in primitives, which takes them along
        combine = _combiner(name, computation, tree, avals)
        return tree_unflatten(tree, _general_reduce_window(flat, inits, combine, params))
    return tree_unflatten(tree, reduce_window_p.bind(*flat, *inits, jaxpr=jaxpr, **params))


# -- reduce --------------------------------------------------------------------------------


def _reduce_monoid(computation, init, dtype):
    """The reduction primitive's function for ``computation`` with identity ``init``."""
    if computation is add and _is_identity(init, "add", dtype):
        return reduce_sum
    if computation is mul and dtype != np.bool_ and _known_value(init, 1):
        return reduce_prod
    if computation in (max, bitwise_or) and (computation is max or dtype == np.bool_) \
            and _is_identity(init, "max", dtype) and np.dtype(dtype).kind != "c":
        return reduce_max
    if computation in (min, bitwise_and) and (computation is min or dtype == np.bool_) \
            and _is_identity(init, "min", dtype) and np.dtype(dtype).kind != "c":
        return reduce_min
    return None


def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]):
    """Reduce ``operands`` over ``dimensions`` with the monoid ``computation`` whose
    identity is ``init_values`` (JAX's ``lax.reduce``; pytrees of operands reduce
    together).  ``add``, ``mul``, ``max`` and ``min`` (``bitwise_or``/``bitwise_and`` on
    booleans) with their identities are the reduction primitives; any other computation
    is applied as a pairwise tree that keeps the elements' order, so it need not commute.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.reduce(np.arange(6.).reshape(2, 3), 0., lax.add, (1,))
    array([ 3., 12.])
    >>> lax.reduce((np.array([3., 7., 7., 1.]), np.arange(4)), (-np.inf, 0),
    ...            lambda a, b: (lax.max(a[0], b[0]),
    ...                          lax.select(a[0] >= b[0], a[1], b[1])), (0,))
    (array(7.), array(1))
    """
    name = "reduce"
    flat, tree, inits, avals = _flat_pair(name, operands, init_values)
    shape = avals[0].shape
    try:
        dims = tuple(normalize_axis(int(d), len(shape), f"{name}: dimension")
                     for d in dimensions)
    except TypeError:
        raise TypeError(f"{name}: dimensions must be a sequence of ints, got {dimensions!r}"
                        ) from None
    if len(set(dims)) != len(dims):
        raise ValueError(f"{name}: repeated dimension in {tuple(dimensions)} for operands of "
                         f"shape {shape}")
    if len(flat) == 1 and all(shape[d] for d in dims):
        fn = _reduce_monoid(computation, inits[0], avals[0].dtype)
        if fn is not None:
            return tree_unflatten(tree, [fn(flat[0], dims) if dims else flat[0]])
    combine = _combiner(name, computation, tree, avals)
    kept = [i for i in range(len(shape)) if i not in dims]
    kept_shape = tuple(shape[i] for i in kept)
    rows, n = math.prod(kept_shape), math.prod(shape[d] for d in dims)
    xs = [reshape(transpose_axes(x, kept + list(dims)), (rows, n)) for x in flat]
    acc = [_full_like(x, init, (rows,)) for x, init in zip(flat, inits)]
    if n:
        while n > 1:  # neighbours combined in order: (0, 1), (2, 3), ...; an odd one waits
            half = n // 2
            pairs = _elementwise(combine, [slice(x, (0, 0), (rows, 2 * half), (1, 2)) for x in xs]
                                 + [slice(x, (0, 1), (rows, 2 * half), (1, 2)) for x in xs],
                                 len(xs))
            if n % 2:
                pairs = [concatenate([p, slice(x, (0, n - 1), (rows, n))], 1)
                         for p, x in zip(pairs, xs)]
            xs, n = pairs, half + n % 2
        acc = _elementwise(combine, acc + [reshape(x, (rows,)) for x in xs], len(xs))
    return tree_unflatten(tree, [reshape(a, kept_shape) for a in acc])


# -- map -----------------------------------------------------------------------------------


def _vmap_leading(f: Callable, xs):
    """``f`` mapped over the leading axis of every leaf of ``xs`` (outputs batched first)."""
    leaves, tree = tree_flatten(xs)
    size = shape_of(leaves[0])[0]
    found = {}

    def flat(*args):
        out, found["tree"] = tree_flatten(f(tree_unflatten(tree, args)))
        return out
    outs, dims = batching.batch_flat(flat, size, leaves, [0] * len(leaves))
    return tree_unflatten(found["tree"], [bdim_to_front(o, d, size)
                                          for o, d in zip(outs, dims)])


def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 (lax's name)
    """``f`` applied to each slice of ``xs`` along its leading axis (a pytree's leaves
    together), results stacked: a ``scan`` without a carry.  With ``batch_size``, ``f`` is
    ``vmap``-ed over batches of that many slices, scanned over the full batches, and the
    rest is one more batch (JAX's ``lax.map``).

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.map(lambda row: row @ row, np.arange(6.).reshape(3, 2))
    array([ 1., 13., 41.])
    >>> lax.map(lambda row: row * 2, np.arange(5.), batch_size=2)
    array([0., 2., 4., 6., 8.])
    """
    leaves, tree = tree_flatten(xs)
    if not leaves:
        raise ValueError("map: xs must hold at least one array")
    sizes = {shape_of(x)[0] if shape_of(x) else None for x in leaves}
    if None in sizes or len(sizes) != 1:
        raise ValueError("map: every leaf of xs needs the same leading axis length, got "
                         "shapes " + ", ".join(str(shape_of(x)) for x in leaves))
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
    if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
        raise ValueError(f"map: batch_size must be a positive int, got {batch_size!r}")
    n, batch_size = sizes.pop(), int(batch_size)
    assert n is not None  # refused above
    full, rest = divmod(n, batch_size)
    if full == 0:
        return _vmap_leading(f, xs)

    def part(x, start, stop):
        shape = shape_of(x)
        return slice(x, (start,) + (0,) * (len(shape) - 1), (stop,) + shape[1:])
    batches = tree_unflatten(tree, [reshape(part(x, 0, full * batch_size),
                                            (full, batch_size) + shape_of(x)[1:])
                                    for x in leaves])
    ys = scan(lambda carry, x: (carry, _vmap_leading(f, x)), (), batches)[1]
    y_leaves, y_tree = tree_flatten(ys)
    y_leaves = [reshape(y, (full * batch_size,) + shape_of(y)[2:]) for y in y_leaves]
    if rest:
        tail = _vmap_leading(f, tree_unflatten(tree, [part(x, full * batch_size, n)
                                                      for x in leaves]))
        y_leaves = [concatenate([y, t], 0) for y, t in zip(y_leaves, tree_flatten(tail)[0])]
    return tree_unflatten(y_tree, y_leaves)


# -- associative_scan ----------------------------------------------------------------------


def _along(x, axis: int, start: int, stop: int | None = None, stride: int = 1):
    """``x[start:stop:stride]`` along ``axis``."""
    shape = shape_of(x)
    stop = shape[axis] if stop is None else stop
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, builtins.max(start, stop), stride
    return slice(x, starts, limits, strides)


def _interleave(a, b, axis: int):
    """``a[0], b[0], a[1], b[1], ...`` along ``axis``; ``a`` may be one longer than ``b``."""
    n = shape_of(a)[axis] + shape_of(b)[axis]
    if shape_of(a)[axis] > shape_of(b)[axis]:
        b = concatenate([b, _along(a, axis, 0, 1)], axis)  # a stand-in, sliced off below
    pairs = concatenate([expand_dims(a, (axis + 1,)), expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(shape_of(a))
    shape[axis] *= 2
    return _along(reshape(pairs, shape), axis, 0, n)


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """All prefix combinations ``fn(...fn(fn(e[0], e[1]), e[2])..., e[i])`` along ``axis``
    for an associative ``fn`` that combines whole slices elementwise (JAX's
    ``lax.associative_scan``; ``elems`` may be a pytree).  ``O(log n)`` rounds of slicing,
    ``fn`` and concatenation: differentiable and batchable like any function.

    >>> import numpy as np
    >>> from functrans import lax
    >>> lax.associative_scan(lax.add, np.arange(1., 6.))
    array([ 1.,  3.,  6., 10., 15.])
    >>> lax.associative_scan(lax.mul, np.arange(1., 5.), reverse=True)
    array([24., 24., 12.,  4.])
    """
    leaves, tree = tree_flatten(elems)
    if not leaves:
        raise ValueError("associative_scan: elems must hold at least one array")
    shapes = [shape_of(x) for x in leaves]
    if any(len(s) == 0 for s in shapes):
        raise ValueError("associative_scan: elems must be arrays with at least one axis, got "
                         "shapes " + ", ".join(str(s) for s in shapes))
    axis = normalize_axis(int(axis), len(shapes[0]), "associative_scan: axis")
    if any(len(s) <= axis or s[axis] != shapes[0][axis] for s in shapes):
        raise ValueError(f"associative_scan: every leaf of elems needs the same length along "
                         f"axis {axis}, got shapes " + ", ".join(str(s) for s in shapes))

    def combine(a: list, b: list) -> list:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return the structure of elems "
                            f"{tree}, got {out_tree}")
        return out

    def prefix(xs: list) -> list:
        n = shape_of(xs[0])[axis]
        if n < 2:
            return xs
        # odd[i] holds the prefix up to 2i + 1, from the neighbours' combinations
        odd = prefix(combine([_along(x, axis, 0, n - 1, 2) for x in xs],
                             [_along(x, axis, 1, None, 2) for x in xs]))
        # the prefix up to 2i (i >= 1) adds x[2i] to the one up to 2i - 1
        head = odd if n % 2 else [_along(o, axis, 0, shape_of(o)[axis] - 1) for o in odd]
        even = combine(head, [_along(x, axis, 2, None, 2) for x in xs])
        even = [concatenate([_along(x, axis, 0, 1), e], axis) for x, e in zip(xs, even)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    out = prefix(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)
