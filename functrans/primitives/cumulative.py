"""Cumulative reductions along one axis (cumsum, cumprod, cummax, cummin) and reduce_prod.

Every derivative here is exact when the operand contains zeros: none divides by the operand.
Two identities do the work:

* The tangent of ``y = cumprod(x)`` obeys the first-order linear recurrence
  ``dy[i] = x[i] * dy[i-1] + y[i-1] * dx[i]``; so does the tangent of ``cummax`` (a forward
  fill of the tangent from the positions where a new running maximum is set).
  ``_linear_recurrence`` solves ``z[i] = a[i] * z[i-1] + b[i]`` with a prefix scan of affine
  maps (``ceil(log2 n)`` rounds of shifted multiplies and adds), linear in ``b``.
* The derivative of ``prod(x)`` with respect to ``x[j]`` is the product of all the other
  elements: an exclusive prefix product times an exclusive suffix product.

The numpy-level functions at the end (``cumsum``, ``cumprod``, ``prod``) promote dtypes as
NumPy does and are meant to be re-exported unchanged by ``functrans.numpy``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from functrans import backend
from functrans.backend import array_module
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import add, ge, gt, le, lt, mul, sub
from functrans.primitives.slicing import pad, slice
from functrans.primitives.shape import (kept_dims, reduce_sum, reduced_aval, reduction_batcher,
                                        reshape, shape_of, transpose_axes)

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["cummax", "cummin", "cumprod", "cumsum", "reduce_prod"]


def _check_axis(name: str, axis, shape: tuple) -> int:
    ndim = len(shape)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of shape {shape} "
                         f"(rank {ndim}); pass an axis in [-{ndim}, {ndim})"
                         if ndim else f"{name}: axis {axis} is out of bounds for an array of "
                         f"shape () (rank 0); reshape the scalar to shape (1,) first")
    return int(axis) % ndim


def _check_dtype(name: str, aval: ShapedArray, ordered: bool) -> None:
    """Running extrema (``ordered``) need ordered values; sums and products need numbers."""
    if ordered and aval.dtype.kind == "c":
        raise TypeError(f"{name} is not defined for complex values (dtype {aval.dtype})")
    if not ordered and aval.dtype == np.bool_:
        raise TypeError(f"{name} is not defined for booleans; convert the operand to an "
                        "integer dtype first (convert_element_type), or use the numpy-level "
                        f"{name.replace('reduce_', '')}, which does")


# -- shifts and the linear-recurrence scan -------------------------------------------------


def _shift(x, axis: int, reverse: bool, distance: int, fill):
    """``x`` moved ``distance`` places along ``axis`` in the scan direction (later
    positions read earlier ones), the vacated places filled with ``fill``."""
    shape = shape_of(x)
    n = shape[axis]
    start, limit = [0] * len(shape), list(shape)
    config = [(0, 0, 0)] * len(shape)
    if reverse:
        start[axis] = distance
        config[axis] = (0, distance, 0)
    else:
        limit[axis] = n - distance
        config[axis] = (distance, 0, 0)
    return pad(slice(x, start, limit), fill, config)


def _linear_recurrence(a, b, axis: int, reverse: bool):
    """The solution ``z`` of ``z[i] = a[i] * z[i-1] + b[i]`` (``z[-1] = 0``) along ``axis``
    (``i+1`` instead of ``i-1`` if ``reverse``); linear in ``b``.

    Element ``i`` stands for the affine map ``z -> a[i] z + b[i]``; round ``k`` composes it
    with the map ``2**k`` places earlier (Hillis and Steele's inclusive scan), which is the
    identity ``(1, 0)`` before the start.
    """
    n, distance = shape_of(b)[axis], 1
    while distance < n:
        b = add(b, mul(a, _shift(b, axis, reverse, distance, 0)))
        if 2 * distance < n:
            a = mul(a, _shift(a, axis, reverse, distance, 1))
        distance *= 2
    return b


# -- cumsum, cumprod, cummax, cummin -------------------------------------------------------


def _flip(xp, x, axis: int, reverse: bool):
    return xp.flip(x, axis) if reverse else x


def _cumulative(name: str, accumulate, *, ordered: bool = False) -> Primitive:
    """A primitive ``name(x, axis, reverse)`` computed by ``accumulate(xp, x, axis)``."""
    prim = Primitive(name, origin="library")

    def impl(x, *, axis, reverse):
        xp = array_module(x)
        x = xp.asarray(x)
        out = accumulate(xp, _flip(xp, x, axis, reverse), axis)
        return backend.ascontiguous(_flip(xp, out, axis, reverse).astype(x.dtype, copy=False))

    def abstract_eval(aval, *, axis, reverse):
        _check_dtype(name, aval, ordered)
        if not 0 <= axis < aval.ndim:
            raise ValueError(f"{name}: axis {axis} is not an axis of an array of shape "
                             f"{aval.shape}; the parameter must be in [0, {aval.ndim})")
        return aval

    def batch(vals, dims, *, axis, reverse):
        (x,), (bd,) = vals, dims
        return prim.bind(x, axis=axis + (axis >= bd), reverse=reverse), bd

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    batching.batching_rules[prim] = batch
    # on chunks of rows (codegen's "Row regions"): along another axis than the rows
    codegen.deflowering(prim, rows=lambda n, in_avals, out_aval, *, axis, reverse: (
        ("rows", ()) if codegen.rowed(in_avals[0], n)
        and not codegen.along(0, (axis,), in_avals[0]) else None))
    return prim


cumsum_p = _cumulative("cumsum", lambda xp, x, axis: xp.cumsum(x, axis, dtype=x.dtype))
cumprod_p = _cumulative("cumprod", lambda xp, x, axis: xp.cumprod(x, axis, dtype=x.dtype))
# Through the backend: CuPy's ufuncs have no accumulate.
cummax_p = _cumulative("cummax", lambda xp, x, axis: backend.cumulative_max(x, axis),
                       ordered=True)
cummin_p = _cumulative("cummin", lambda xp, x, axis: backend.cumulative_min(x, axis),
                       ordered=True)


def _bind(prim: Primitive, operand, axis: int, reverse: bool):
    aval = get_aval(operand)
    _check_dtype(prim.name, aval, ordered=prim in (cummax_p, cummin_p))
    axis = _check_axis(prim.name, axis, aval.shape)
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis: int = 0, reverse: bool = False):
    """Cumulative sum along ``axis`` (from the end if ``reverse``); the dtype is kept.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import cumsum
    >>> cumsum(np.array([1, 2, 3]), reverse=True)
    array([6, 5, 3])
    """
    return _bind(cumsum_p, operand, axis, reverse)


def cumprod(operand, axis: int = 0, reverse: bool = False):
    """Cumulative product along ``axis`` (from the end if ``reverse``); the dtype is kept.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import cumprod
    >>> cumprod(np.array([1.0, 2.0, 3.0]))
    array([1., 2., 6.])
    """
    return _bind(cumprod_p, operand, axis, reverse)


def cummax(operand, axis: int = 0, reverse: bool = False):
    """Running maximum along ``axis`` (from the end if ``reverse``).  Its derivative is the
    tangent of the element holding the running maximum (on ties, the lowest index, as
    ``argmax``).

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import cummax
    >>> cummax(np.array([1.0, 3.0, 2.0]))
    array([1., 3., 3.])
    """
    return _bind(cummax_p, operand, axis, reverse)


def cummin(operand, axis: int = 0, reverse: bool = False):
    """Running minimum along ``axis`` (from the end if ``reverse``); derivative as
    ``cummax``.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import cummin
    >>> cummin(np.array([3.0, 1.0, 2.0]), reverse=True)
    array([1., 1., 2.])
    """
    return _bind(cummin_p, operand, axis, reverse)


# The transpose of a running sum is the running sum in the opposite direction.
transpose.deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [
    cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if type(t) is Zero:
        return ans, Zero.from_value(ans)
    # dy[i] = x[i] dy[i-1] + y[i-1] t[i], with y[-1] = 1: no division, exact at zeros.
    previous = _shift(ans, axis, reverse, 1, 1) if shape_of(x)[axis] else ans
    return ans, _linear_recurrence(x, mul(previous, t), axis, reverse)


ad.jvp_rules[cumprod_p] = _cumprod_jvp


def _running_extremum_jvp(prim: Primitive, beats, beats_or_ties):
    # The tangent is carried forward from the last position that set a new running
    # extremum: z[i] = (1 - r[i]) z[i-1] + r[i] t[i].  Ties go to the lowest index, so a
    # tie sets a new extremum only when scanning in reverse.
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        shape = shape_of(x)
        n = shape[axis]
        if type(t) is Zero or n <= 1:
            return ans, (Zero.from_value(ans) if type(t) is Zero else t)
        start, limit = [0] * len(shape), list(shape)
        head_limit, tail_start = list(shape), [0] * len(shape)
        head_limit[axis], tail_start[axis] = n - 1, 1
        head, tail = (start, head_limit), (tail_start, limit)
        if reverse:  # x[i] against the extremum of x[i+1:]
            record = beats_or_ties(slice(x, *head), slice(ans, *tail))
            first = (0, 1, 0)
        else:  # x[i] against the extremum of x[:i]
            record = beats(slice(x, *tail), slice(ans, *head))
            first = (1, 0, 0)
        config = [(0, 0, 0)] * len(shape)
        config[axis] = first
        record = convert_element_type(pad(record, True, config), get_aval(t).dtype)
        return ans, _linear_recurrence(sub(1, record), mul(record, t), axis, reverse)
    return rule


ad.jvp_rules[cummax_p] = _running_extremum_jvp(cummax_p, gt, ge)
ad.jvp_rules[cummin_p] = _running_extremum_jvp(cummin_p, lt, le)

# -- reduce_prod ---------------------------------------------------------------------------

reduce_prod_p = Primitive("reduce_prod", origin="library")


def _normalize_axes(name: str, axes, shape: tuple) -> tuple:
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    normalized = tuple(_check_axis(name, a, shape) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{name}: repeated axis in {axes} for an array of shape {shape}")
    return tuple(sorted(normalized))


def reduce_prod(operand, axes: Sequence[int]):
    """Product of ``operand`` over the given axes (the dtype is kept).  Its derivative is
    exact when the operand contains zeros.

    >>> import numpy as np, functrans as ft
    >>> from functrans.primitives.cumulative import reduce_prod
    >>> ft.grad(lambda x: reduce_prod(x, (0,)))(np.array([0.0, 2.0, 3.0]))
    array([6., 0., 0.])
    """
    aval = get_aval(operand)
    _check_dtype("reduce_prod", aval, ordered=False)
    axes = _normalize_axes("reduce_prod", axes, aval.shape)
    return reduce_prod_p.bind(operand, axes=axes) if axes else operand


def _reduce_prod_impl(x, *, axes):
    return array_module(x).prod(x, axis=axes, dtype=get_aval(x).dtype)


def _reduce_prod_abstract_eval(aval, *, axes):
    _check_dtype("reduce_prod", aval, ordered=False)
    return reduced_aval("reduce_prod", aval, axes)


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if type(t) is Zero:
        return ans, Zero.from_value(ans)
    # d prod / dx[j] = prod(x[:j]) * prod(x[j+1:]) along the flattened reduced axes.
    shape = shape_of(x)
    kept = kept_dims(len(shape), axes)
    flat = [shape[i] for i in kept] + [int(np.prod([shape[a] for a in axes]))]

    def flatten(v):
        return reshape(transpose_axes(v, kept + axes), flat)

    x, t, last = flatten(x), flatten(t), len(kept)
    if flat[-1] == 0:
        return ans, reduce_sum(t, (last,))
    before = cumprod_p.bind(_shift(x, last, False, 1, 1), axis=last, reverse=False)
    after = cumprod_p.bind(_shift(x, last, True, 1, 1), axis=last, reverse=True)
    return ans, reduce_sum(mul(mul(before, after), t), (last,))


impl_rules[reduce_prod_p] = _reduce_prod_impl
abstract_eval_rules[reduce_prod_p] = _reduce_prod_abstract_eval
ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
batching.batching_rules[reduce_prod_p] = reduction_batcher(reduce_prod_p)


# ------------------------------------------------------------------------------------------
# numpy-level: NumPy's signatures and dtype promotion (re-exported by functrans.numpy)
# ------------------------------------------------------------------------------------------


def _numpy_operand(a, dtype):
    """``a`` as an operand: lists become arrays; ``dtype`` if given, else booleans and
    integers narrower than 64 bits widen to (u)int64, as NumPy accumulates them."""
    if isinstance(a, (list, tuple)):
        a = np.asarray(a)
    aval = get_aval(a)
    if dtype is not None:
        return convert_element_type(a, dtype)
    if aval.dtype == np.bool_ or (aval.dtype.kind in "iu" and aval.dtype.itemsize < 8):
        return convert_element_type(a, np.uint64 if aval.dtype.kind == "u" else np.int64)
    return a


def _numpy_cumulative(prim: Primitive, a, axis, dtype):
    a = _numpy_operand(a, dtype)
    if axis is None:
        a = reshape(a, (int(np.prod(shape_of(a))),))
        axis = 0
    return _bind(prim, a, axis, False)


def numpy_cumsum(a, axis: int | None = None, dtype=None):
    """NumPy's ``cumsum``: running sum along ``axis`` (of the flattened array if None);
    booleans and integers narrower than 64 bits accumulate as (u)int64.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import numpy_cumsum
    >>> numpy_cumsum(np.array([[True, False], [True, True]]))
    array([1, 1, 2, 3])
    """
    return _numpy_cumulative(cumsum_p, a, axis, dtype)


def numpy_cumprod(a, axis: int | None = None, dtype=None):
    """NumPy's ``cumprod``: running product along ``axis`` (of the flattened array if
    None); booleans and integers narrower than 64 bits accumulate as (u)int64.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import numpy_cumprod
    >>> numpy_cumprod(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    array([[1., 2.],
           [3., 8.]])
    """
    return _numpy_cumulative(cumprod_p, a, axis, dtype)


def numpy_prod(a, axis: int | Sequence[int] | None = None, dtype=None, keepdims: bool = False):
    """NumPy's ``prod``: product over ``axis`` (all axes if None); booleans and integers
    narrower than 64 bits multiply as (u)int64.

    >>> import numpy as np
    >>> from functrans.primitives.cumulative import numpy_prod
    >>> numpy_prod(np.array([[1, 2], [3, 4]], np.int32), axis=1, keepdims=True)
    array([[ 2],
           [12]])
    """
    a = _numpy_operand(a, dtype)
    shape = shape_of(a)
    axes = tuple(range(len(shape))) if axis is None else _normalize_axes("prod", axis, shape)
    out = reduce_prod(a, axes)
    if keepdims:
        out = reshape(out, [1 if i in axes else n for i, n in enumerate(shape)])
    return out
