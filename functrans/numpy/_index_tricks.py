"""Index tricks: the positions of nonzero elements (``nonzero``, ``argwhere``,
``flatnonzero``, ``compress``, ``extract``, ``count_nonzero``), selection among several
arrays (``select``, ``choose``, ``piecewise``), builders of index arrays (``indices``,
``ix_``, ``unravel_index``, ``ravel_multi_index``, the ``*_indices`` functions) and the
index-expression objects (``s_``, ``index_exp``, ``mgrid``, ``ogrid``, ``r_``, ``c_``),
and counting into bins (``bincount``, ``histogram`` and friends: weights differentiate).

The number of nonzero elements decides the shape of ``nonzero``'s result, so under vmap
and in jaxprs (where the elements are not known) it needs JAX's static ``size=`` (under
differentiation alone the values are known, and positions carry no derivative): the first
``size`` positions are kept and the missing ones are ``fill_value``.  With ``size`` the
positions come from a running count: the element at ``i`` with ``count[i] = k`` true
elements up to and including it is scattered into slot ``k - 1`` (slots past ``size``
land in one extra slot that is dropped), so every step is a primitive that batches and
the gathers that use the positions differentiate.  On concrete values the array library
computes the positions itself (padded to ``size`` if given).
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from functrans import backend, lax
from functrans.core import ConcretizationTypeError, Tracer
from functrans.numpy._creation import arange, linspace
from functrans.numpy._shape import concatenate, ravel, stack
from functrans.numpy._util import arg, as_bool, dtype_of, shape_of, static_int
from functrans.primitives import shape as shape_ops

__all__ = ["nonzero", "argwhere", "flatnonzero", "compress", "extract", "count_nonzero",
           "select", "choose", "piecewise", "indices", "ix_", "unravel_index",
           "ravel_multi_index", "diag_indices", "diag_indices_from", "tril_indices",
           "triu_indices", "tril_indices_from", "triu_indices_from", "mask_indices",
           "s_", "index_exp", "mgrid", "ogrid", "r_", "c_", "bincount", "histogram",
           "histogram_bin_edges", "histogram2d", "histogramdd"]

INT = np.dtype(np.int64)


def _traced(*xs) -> bool:
    return builtins.any(isinstance(x, Tracer) for x in xs)


def _need_size(name: str, x) -> ConcretizationTypeError:
    return ConcretizationTypeError(
        f"{name}: the number of nonzero elements of a traced {x.aval.str_short()} decides "
        f"the shape of the result, which a transform must know in advance; pass a static "
        f"size= (e.g. {name}(..., size=n, fill_value=...)): the first n positions are kept "
        "and missing ones are filled")


def lazy_shape_error(what: str, x, instead: str) -> ValueError:
    """The error for a result whose shape depends on the values of the dask array ``x``:
    functrans builds dask graphs without computing them, so such a shape is unknown."""
    chunks = getattr(x, "chunks", None)
    return ValueError(
        f"{what}: the shape of the result depends on the values of a dask array "
        f"({x.dtype}{list(x.shape)}, chunks {chunks}), which functrans does not compute while "
        f"it builds the graph; {instead}, or compute the array first (x.compute())")


def _concrete(name: str, x):
    """The concrete value of ``x`` (under differentiation, its primal: positions carry no
    derivative), or the error that asks for ``size=`` when there is none (vmap, jaxprs,
    dask arrays)."""
    if isinstance(x, Tracer):
        try:
            x = x.to_concrete_value(f"{name} without size=")
        except ConcretizationTypeError as e:
            raise _need_size(name, x) from e
    if backend.is_lazy(x):
        raise lazy_shape_error(f"{name} without size=", x,
                               f"pass a static size= (e.g. {name}(..., size=n, "
                               "fill_value=...)) for a result of fixed shape")
    return x


def _size(name: str, size) -> int:
    size = static_int(size, name, "size")
    if size < 0:
        raise ValueError(f"{name}: size must be non-negative, got {size}")
    return size


def _zeros(shape, dtype, like):
    """Zeros on the device of ``like`` (a tracer or an array), traced along with it."""
    zero = lax.zeros_like(lax.iota(dtype, 1, like=like))
    return shape_ops.broadcast_to(shape_ops.reshape(zero, ()), shape)


def _slots(mask, size: int):
    """For a 1-D boolean ``mask``: the positions of its first ``size`` true elements, in
    order (int64, shape ``(size,)``; 0 where there are fewer), and which of the ``size``
    slots hold one."""
    if not isinstance(mask, Tracer) and not backend.is_lazy(mask):
        # concrete: the library finds them (8x faster); dask's would have unknown sizes
        xp = backend.array_module(mask)
        found = xp.flatnonzero(mask)[:size].astype(INT)
        k = found.shape[0]
        return (xp.concatenate([found, xp.zeros(size - k, dtype=INT)]),
                xp.arange(size) < k)
    n = shape_of(mask)[0]
    count = lax.cumsum(lax.convert_element_type(mask, INT), axis=0)
    keep = lax.bitwise_and(mask, lax.le(count, size))
    slot = lax.select(keep, lax.sub(count, 1), size)  # the rest all go to slot `size`
    target = _zeros((size + 1,), INT, mask)
    filled = lax.scatter_add(target, shape_ops.reshape(slot, (n, 1)),
                             lax.iota(INT, n, like=mask))
    total = lax.reduce_sum(lax.convert_element_type(mask, INT), (0,))
    return lax.slice(filled, (0,), (size,)), lax.lt(lax.iota(INT, size, like=mask), total)


def _coordinates(flat, shape: tuple):
    """Flat C-order positions (non-negative, in range) as an ``(n, len(shape))`` array of
    coordinates (the last axis varies fastest)."""
    n = shape_of(flat)[0]
    columns = []
    for d in reversed(shape[1:]):
        quotient = _floor_div(flat, d)
        columns.append(lax.sub(flat, lax.mul(quotient, lax.convert_element_type(d, INT))))
        flat = quotient
    columns.append(flat)
    return lax.concatenate([shape_ops.reshape(c, (n, 1)) for c in reversed(columns)], 1)


def _fill(name: str, fill_value, ndim: int, size: int, like):
    """``fill_value`` (None: 0, a scalar, or one value per axis) as an int64 ``(size, ndim)``
    array on the device of ``like`` (made there, not copied from the host)."""
    if isinstance(fill_value, Tracer):
        fill = lax.convert_element_type(fill_value, INT)
        if shape_of(fill) not in ((), (ndim,)):
            raise ValueError(f"{name}: fill_value must be a scalar or have one value per axis "
                             f"({ndim}), got shape {shape_of(fill)}")
        return shape_ops.broadcast_to(fill, (size, ndim))
    values = np.asarray(0 if fill_value is None else fill_value)
    if values.shape not in ((), (ndim,)):
        raise ValueError(f"{name}: fill_value must be a scalar or have one value per axis "
                         f"({ndim}), got shape {values.shape}")
    if not values.shape:
        return backend.full((size, ndim), values.item(), INT, like=like)
    return lax.concatenate([backend.full((size, 1), v, INT, like=like)
                            for v in values.tolist()], 1)


def _positions(name: str, a, size, fill_value):
    """The ``(size, ndim)`` coordinates of the first ``size`` nonzero elements of ``a``."""
    shape = shape_of(a)
    size = _size(name, size)
    mask = shape_ops.reshape(as_bool(a), (math.prod(shape),))
    flat, valid = _slots(mask, size)
    if not math.prod(shape):  # nothing to read coordinates from: every slot is filled
        coords = _zeros((size, len(shape)), INT, mask)
    else:
        coords = _coordinates(flat, shape)
    fill = _fill(name, fill_value, len(shape), size, mask)
    return lax.select(shape_ops.broadcast_in_dim(valid, (size, len(shape)), (0,)), coords, fill)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a``: one int64 array per axis.

    Inside a transform pass a static ``size``: the result then has ``size`` positions,
    the first ones found (C order), and slots beyond the number of nonzero elements hold
    ``fill_value`` (0 by default; a scalar or one value per axis).

    >>> import functrans.numpy as fnp
    >>> fnp.nonzero(fnp.asarray([[0, 5], [7, 0]]))
    (array([0, 1]), array([1, 0]))
    >>> fnp.nonzero(fnp.asarray([0, 5, 0, 7]), size=3, fill_value=-1)
    (array([ 1,  3, -1]),)
    """
    a = arg(a)
    if not shape_of(a):
        raise ValueError("nonzero: a 0-d array has no axes to index (NumPy refuses it too); "
                         "use nonzero(atleast_1d(a))")
    if size is None:
        a = _concrete("nonzero", a)
        return tuple(i.astype(INT) for i in backend.array_module(a).nonzero(a))
    out = _positions("nonzero", a, size, fill_value)
    return tuple(shape_ops.squeeze(c, (1,))
                 for c in (lax.slice(out, (0, k), (shape_of(out)[0], k + 1))
                           for k in range(len(shape_of(a)))))


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of ``a`` as rows of a ``(count, ndim)`` array;
    ``size`` and ``fill_value`` as in ``nonzero``.

    >>> import functrans.numpy as fnp
    >>> fnp.argwhere(fnp.asarray([[0, 5], [7, 0]]))
    array([[0, 1],
           [1, 0]])
    """
    a = arg(a)
    if size is None:
        a = _concrete("argwhere", a)
        return backend.array_module(a).argwhere(a).astype(INT)
    if not shape_of(a):  # NumPy's convention: one row of no columns if a is true
        out = _positions("argwhere", shape_ops.reshape(a, (1,)), size, fill_value)
        return lax.slice(out, (0, 0), (shape_of(out)[0], 0))
    return _positions("argwhere", a, size, fill_value)


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened ``a``; ``size`` and
    ``fill_value`` as in ``nonzero``.

    >>> import functrans.numpy as fnp
    >>> fnp.flatnonzero(fnp.asarray([[0, 5], [7, 0]]), size=3, fill_value=9)
    array([1, 2, 9])
    """
    a = arg(a)
    if size is None:
        a = _concrete("flatnonzero", a)
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (of the flattened ``a`` when None) where the 1-D
    ``condition`` is true; a ``condition`` shorter than the axis leaves out the rest.
    ``out`` must be None (as JAX).

    A traced ``condition`` needs a static ``size``: the result then has ``size`` slices
    along ``axis``, and those beyond the number of true entries are ``fill_value``.  A
    concrete ``condition`` needs none, even when ``a`` is traced.  The result
    differentiates with respect to ``a`` (and ``fill_value``).

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([[1., 2., 3.], [4., 5., 6.]])
    >>> fnp.compress([True, False, True], x, axis=1)
    array([[1., 3.],
           [4., 6.]])
    >>> fnp.compress([True, False, True], x, axis=1, size=3, fill_value=-1.)
    array([[ 1.,  3., -1.],
           [ 4.,  6., -1.]])
    """
    if out is not None:
        raise NotImplementedError("compress: out= is not supported (arrays are immutable); "
                                  "use the returned array")
    return _compress("compress", condition, a, axis, size, fill_value)


def _compress(name: str, condition, a, axis, size, fill_value):
    condition, a = arg(condition), arg(a)
    if len(shape_of(condition)) != 1:
        raise ValueError(f"{name}: condition must be 1-D, got shape {shape_of(condition)}")
    if axis is None:
        a, axis = ravel(a), 0
    shape = shape_of(a)
    axis = shape_ops.normalize_axis(static_int(axis, name, "axis"), len(shape))
    n, m = shape[axis], shape_of(condition)[0]
    if m > n:
        raise ValueError(f"{name}: condition has {m} entries, more than the {n} of axis "
                         f"{axis} of the array of shape {shape}")
    a = shape_ops.moveaxis(a, axis, 0)
    if m < n:
        a = lax.slice(a, (0,) * len(shape), (m,) + shape_of(a)[1:])
    rest = shape_of(a)[1:]
    if size is None:
        condition = _concrete(name, condition)
        where = backend.array_module(condition).flatnonzero(condition)
        out = lax.gather(a, shape_ops.reshape(where.astype(INT), (where.shape[0], 1)))
    else:
        size = _size(name, size)
        where, valid = _slots(as_bool(condition), size)
        picked = lax.gather(a, shape_ops.reshape(where, (size, 1)))
        if isinstance(fill_value, Tracer):
            fill = shape_ops.broadcast_to(
                lax.convert_element_type(fill_value, dtype_of(a)), (size,) + rest)
        else:
            fill = backend.full((size,) + rest, fill_value, dtype_of(a), like=a)
        out = lax.select(shape_ops.broadcast_in_dim(valid, (size,) + rest, (0,)), picked,
                         fill)
    return shape_ops.moveaxis(out, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, both flattened:
    ``compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)``.

    >>> import functrans.numpy as fnp
    >>> fnp.extract(fnp.asarray([[1, 0], [0, 1]]), fnp.asarray([[1., 2.], [3., 4.]]))
    array([1., 4.])
    """
    return _compress("extract", ravel(arg(condition)), ravel(arg(arr)), None, size, fill_value)


def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of nonzero elements of ``a`` along ``axis`` (all axes when None), int64.

    >>> import functrans.numpy as fnp
    >>> fnp.count_nonzero(fnp.asarray([[0, 5], [7, 1]]), axis=0)
    array([1, 2])
    """
    a = arg(a)
    shape = shape_of(a)
    axes = tuple(range(len(shape))) if axis is None else (
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis))
    axes = tuple(shape_ops.normalize_axis(static_int(x, "count_nonzero", "axis"), len(shape))
                 for x in axes)
    out = lax.reduce_sum(lax.convert_element_type(as_bool(a), INT), axes)
    if keepdims:
        out = shape_ops.reshape(out, [1 if i in axes else d for i, d in enumerate(shape)])
    return out


# -- choosing among arrays ------------------------------------------------------------------

def _promote(values: list):
    """``values`` converted to their common NumPy result type (Python scalars weakly, and
    made on the device of the arrays rather than copied there)."""
    values = [arg(v) for v in values]
    scalars = [isinstance(v, (int, float, complex, bool)) for v in values]
    dtype = np.result_type(*[v if s else dtype_of(v) for v, s in zip(values, scalars)])
    like = next((v for v, s in zip(values, scalars) if not s), None)
    return [backend.full((), v, dtype, like=like) if s else lax.convert_element_type(v, dtype)
            for v, s in zip(values, scalars)]


def select(condlist, choicelist, default=0):
    """``choicelist[k]`` where ``condlist[k]`` is the first true condition, else
    ``default`` (all broadcast together).  Every choice is computed; the result
    differentiates with respect to each where it is selected.

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([-2., 0.5, 3.])
    >>> fnp.select([x < 0, x < 1], [-x, 10 * x], default=x ** 2)
    array([2., 5., 9.])
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist has {len(condlist)} entries but choicelist has "
                         f"{len(choicelist)}; they must be the same length")
    if not condlist:
        raise ValueError("select: condlist and choicelist must not be empty")
    conds = [arg(c) for c in condlist]
    for k, c in enumerate(conds):
        if dtype_of(c) != np.bool_:
            raise TypeError(f"select: condlist[{k}] must be boolean, got {dtype_of(c)}; "
                            "compare it explicitly (e.g. x > 0)")
    *choices, out = _promote(list(choicelist) + [default])
    for c, x in zip(reversed(conds), reversed(choices)):
        out = lax.select(c, x, out)
    return out


def choose(a, choices, out=None, mode: str = "raise"):
    """``choices[a[i]][i]`` elementwise (``a`` and the choices broadcast together).

    ``mode`` handles entries of ``a`` outside ``0 .. n-1``: ``"raise"`` refuses them (for
    concrete ``a``; a traced ``a`` cannot be checked, so it needs another mode), ``"wrap"``
    takes them modulo ``n``, ``"clip"`` clamps them into range.

    >>> import functrans.numpy as fnp
    >>> fnp.choose(fnp.asarray([0, 1, 3]), [[1., 2., 3.], [10., 20., 30.]], mode="clip")
    array([ 1., 20., 30.])
    """
    if out is not None:
        raise NotImplementedError("choose: out= is not supported (arrays are immutable "
                                  "values); use the returned array")
    a = arg(a)
    if dtype_of(a).kind not in "iu":
        raise TypeError(f"choose: a must be an integer array, got {dtype_of(a)}")
    if not isinstance(choices, (list, tuple)):
        choices = arg(choices)
        choices = [lax.squeeze(lax.slice(choices, (k,) + (0,) * (len(shape_of(choices)) - 1),
                                         (k + 1,) + shape_of(choices)[1:]), (0,))
                   for k in range(shape_of(choices)[0])]
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must not be empty")
    if mode == "raise":
        if isinstance(a, Tracer):
            raise ConcretizationTypeError(
                f"choose: mode='raise' needs to check a traced {a.aval.str_short()} against "
                "the number of choices, which a transform cannot do; use mode='wrap' or "
                "mode='clip'")
        xp = backend.array_module(a)
        if bool(xp.any((a < 0) | (a >= n))):
            raise ValueError(f"choose: entries of a must be in 0 .. {n - 1} with "
                             "mode='raise'; use mode='wrap' or mode='clip'")
    elif mode == "wrap":
        a = _floor_mod(a, n)
    elif mode == "clip":
        a = lax.max(lax.min(a, n - 1), 0)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    choices = _promote(list(choices))
    out = choices[-1]
    for k in range(n - 2, -1, -1):
        out = lax.select(lax.eq(a, k), choices[k], out)
    if shape_of(out) != np.broadcast_shapes(shape_of(a), shape_of(out)):
        out = shape_ops.broadcast_to(out, np.broadcast_shapes(shape_of(a), shape_of(out)))
    return out


def piecewise(x, condlist, funclist, *args, **kw):
    """``funclist[k]`` where ``condlist[k]`` is true (later conditions win), and the
    extra last entry of ``funclist``, if any, where none is; elsewhere 0.  Entries are
    functions (called on the whole ``x`` with ``*args`` and ``**kw``, every one of them,
    as JAX does) or constants.  The result has ``x``'s dtype.

    >>> import functrans.numpy as fnp
    >>> x = fnp.asarray([-2., 0.5, 3.])
    >>> fnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, lambda v: v ** 2, 7.])
    array([2., 7., 9.])
    """
    x = arg(x)
    if isinstance(condlist, (list, tuple)):
        conds = [as_bool(c) for c in condlist]
    else:
        condlist = as_bool(condlist)
        shape = shape_of(condlist)
        if len(shape) == len(shape_of(x)) + 1:  # NumPy's: a stack of conditions
            conds = [shape_ops.squeeze(lax.slice(condlist, (k,) + (0,) * (len(shape) - 1),
                                                 (k + 1,) + shape[1:]), (0,))
                     for k in builtins.range(shape[0])]
        else:
            conds = [condlist]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:
        otherwise = conds[0]
        for c in conds[1:]:
            otherwise = lax.bitwise_or(otherwise, c)
        conds.append(lax.bitwise_not(otherwise))
    elif len(funcs) != len(conds):
        raise ValueError(f"piecewise: funclist has {len(funcs)} entries; it needs one per "
                         f"condition ({len(conds)}), or one more for where none holds")
    dtype = dtype_of(x)
    out = lax.zeros_like(x)
    for c, f in zip(conds, funcs):
        if callable(f):
            value = lax.convert_element_type(arg(f(x, *args, **kw)), dtype)
        elif isinstance(f, (int, float, complex, bool)):  # made on x's device, not copied
            value = backend.full((), f, dtype, like=x)
        else:
            value = lax.convert_element_type(arg(f), dtype)
        out = lax.select(c, value, out)
    return out


# -- integer arithmetic on index arrays -----------------------------------------------------

def _floor_mod(i, n: int):
    """``i mod n`` (non-negative) for an integer array or tracer ``i`` and ``n > 0``."""
    if not isinstance(i, Tracer):
        return backend.array_module(i).mod(i, n)
    return lax.sub(i, lax.mul(_floor_div(i, n), lax.convert_element_type(n, dtype_of(i))))


def _floor_div(i, n: int):
    """``floor(i / n)`` for an integer array or tracer ``i`` and ``n > 0``: a float
    quotient, then a one-step correction for its rounding (exact while ``|i| < 2**53``)."""
    dtype = dtype_of(i)
    q = lax.convert_element_type(lax.floor(lax.div(lax.convert_element_type(i, np.float64),
                                                   float(n))), dtype)
    r = lax.sub(i, lax.mul(q, lax.convert_element_type(n, dtype)))
    q = lax.select(lax.lt(r, 0), lax.sub(q, 1), q)
    return lax.select(lax.ge(r, n), lax.add(q, 1), q)


# -- index arrays ---------------------------------------------------------------------------

def _dims(name: str, shape) -> tuple:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return tuple(static_int(d, name, "shape") for d in shape)


def indices(dimensions, dtype=None, sparse: bool = False):
    """The index of every element of an array of shape ``dimensions``: an array of shape
    ``(len(dimensions), *dimensions)``, or with ``sparse`` a tuple of arrays that broadcast
    to it.

    >>> import functrans.numpy as fnp
    >>> fnp.indices((2, 3))[1]
    array([[0, 1, 2],
           [0, 1, 2]])
    """
    dims = _dims("indices", dimensions)
    dtype = np.dtype(int) if dtype is None else dtype
    axes = [shape_ops.reshape(lax.iota(dtype, d), [d if j == i else 1 for j in range(len(dims))])
            for i, d in enumerate(dims)]
    if sparse:
        return tuple(axes)
    return stack([shape_ops.broadcast_to(x, dims) for x in axes]) if dims else np.empty(
        (0,), dtype)


def ix_(*args):
    """An open mesh from 1-D sequences: argument ``k`` becomes an array with all axes of
    size 1 except axis ``k``, so that ``x[ix_(rows, cols)]`` picks the cross product.
    Boolean sequences stand for their true positions.

    >>> import functrans.numpy as fnp
    >>> [i.shape for i in fnp.ix_([0, 1], [2, 0, 1])]
    [(2, 1), (1, 3)]
    """
    out = []
    for k, x in enumerate(args):
        x = arg(x)
        if len(shape_of(x)) != 1:
            raise ValueError(f"ix_: argument {k} must be 1-D, got shape {shape_of(x)}")
        if dtype_of(x) == np.bool_:
            x = nonzero(x)[0]
        elif shape_of(x)[0] == 0:
            x = lax.convert_element_type(x, INT)
        elif dtype_of(x).kind not in "iu":
            raise ValueError(f"ix_: argument {k} must be integer or boolean, got "
                             f"{dtype_of(x)}")
        out.append(shape_ops.reshape(x, [shape_of(x)[0] if j == k else 1
                                         for j in range(len(args))]))
    return tuple(out)


def unravel_index(indices, shape):
    """Flat C-order ``indices`` into an array of ``shape`` as a tuple of coordinate arrays.

    Concrete indices out of bounds raise as in NumPy; traced ones cannot be checked, so
    (as in JAX) a negative index is first wrapped once, then every index is clamped.

    >>> import functrans.numpy as fnp
    >>> fnp.unravel_index(fnp.asarray([5, 7]), (2, 4))
    (array([1, 1]), array([1, 3]))
    """
    dims = _dims("unravel_index", shape)
    indices = arg(indices)
    if dtype_of(indices).kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {dtype_of(indices)}")
    if not isinstance(indices, Tracer):
        return tuple(i.astype(INT) for i in backend.array_module(indices).unravel_index(
            indices, dims))
    total = math.prod(dims)
    i = lax.convert_element_type(indices, INT)
    i = lax.select(lax.lt(i, 0), lax.add(i, total), i)
    i = lax.max(lax.min(i, total - 1), 0)
    out = []
    for d in reversed(dims):
        out.append(_floor_mod(i, d))
        i = _floor_div(i, d)
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C", *,
                      dtype=None):
    """Coordinate arrays into an array of shape ``dims`` as flat indices (C or Fortran
    order), int64 or the integer ``dtype`` given (as JAX, it must hold ``prod(dims) - 1``).
    ``mode`` handles coordinates out of range: ``"raise"`` (concrete only), ``"wrap"`` or
    ``"clip"``, or a tuple of them, one per axis.

    >>> import functrans.numpy as fnp
    >>> fnp.ravel_multi_index((fnp.asarray([1, 0]), fnp.asarray([2, 5])), (2, 3), mode="clip")
    array([5, 2])
    >>> fnp.ravel_multi_index((fnp.asarray([1]), fnp.asarray([2])), (2, 3), dtype="int8")
    array([5], dtype=int8)
    """
    dims = _dims("ravel_multi_index", dims)
    dtype = INT if dtype is None else np.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"ravel_multi_index: dtype must be an integer type, got {dtype}")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"ravel_multi_index: dtype {dtype} cannot hold the flat indices of "
                         f"shape {dims} (up to {math.prod(dims) - 1}); pass a larger dtype")
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} coordinate arrays for "
                         f"{len(dims)} dimensions")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    coords = [arg(c) for c in multi_index]
    for k, c in enumerate(coords):
        if dtype_of(c).kind not in "iu":
            raise TypeError(f"ravel_multi_index: multi_index[{k}] must be integers, got "
                            f"{dtype_of(c)}")
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    if not _traced(*coords):
        xp = backend.array_module(*coords)
        return xp.ravel_multi_index(tuple(coords), dims, mode=modes, order=order).astype(dtype)
    strides, step = [], 1
    for d in (reversed(dims) if order == "C" else dims):
        strides.append(step)
        step *= d
    if order == "C":
        strides.reverse()
    out = 0
    for k, (c, d, m, s) in enumerate(zip(coords, dims, modes, strides)):
        c = lax.convert_element_type(c, INT)
        if m == "wrap":
            c = _floor_mod(c, d)
        elif m == "clip":
            c = lax.max(lax.min(c, d - 1), 0)
        elif m == "raise":
            raise ConcretizationTypeError(
                f"ravel_multi_index: mode='raise' needs to check traced coordinates "
                f"(multi_index[{k}]) against the bounds, which a transform cannot do; use "
                "mode='wrap' or mode='clip'")
        else:
            raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', "
                             f"got {m!r}")
        out = lax.add(out, lax.mul(c, s))
    return lax.convert_element_type(out, dtype)


def diag_indices(n: int, ndim: int = 2):
    """The indices of the main diagonal of an ``(n,) * ndim`` array.

    >>> import functrans.numpy as fnp
    >>> fnp.diag_indices(3)
    (array([0, 1, 2]), array([0, 1, 2]))
    """
    i = lax.iota(INT, static_int(n, "diag_indices", "n"))
    return (i,) * static_int(ndim, "diag_indices", "ndim")


def diag_indices_from(arr):
    """``diag_indices`` for ``arr``, whose axes (at least two) must all have one size.

    >>> import functrans.numpy as fnp
    >>> fnp.diag_indices_from(fnp.zeros((3, 3)))
    (array([0, 1, 2]), array([0, 1, 2]))
    """
    arr = arg(arr)
    shape = shape_of(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: arr must have at least two axes, all of one "
                         f"size, got shape {shape}")
    if backend.library_of(arr) is backend.NUMPY:
        return diag_indices(shape[0], len(shape))
    return (lax.iota(INT, shape[0], like=arr),) * len(shape)  # on arr's device


def _triangle_indices(name: str, n, k, m, lower: bool):
    n = static_int(n, name, "n")
    m = n if m is None else static_int(m, name, "m")
    k = static_int(k, name, "k")
    inside = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return tuple(i.astype(INT) for i in np.nonzero(inside))


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """The indices of the lower triangle (on and below the ``k``-th diagonal) of an
    ``(n, m)`` array, row by row.

    >>> import functrans.numpy as fnp
    >>> fnp.tril_indices(3)
    (array([0, 1, 1, 2, 2, 2]), array([0, 0, 1, 0, 1, 2]))
    """
    return _triangle_indices("tril_indices", n, k, m, lower=True)


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """The indices of the upper triangle (on and above the ``k``-th diagonal) of an
    ``(n, m)`` array, row by row.

    >>> import functrans.numpy as fnp
    >>> fnp.triu_indices(3, k=1)
    (array([0, 0, 1]), array([1, 2, 2]))
    """
    return _triangle_indices("triu_indices", n, k, m, lower=False)


def _from_2d(name: str, arr) -> tuple:
    shape = shape_of(arg(arr))
    if len(shape) != 2:
        raise ValueError(f"{name}: arr must be 2-D, got shape {shape}")
    return shape


def _triangle_indices_of(name: str, arr, k, lower: bool) -> tuple:
    """The triangle's indices for the 2-D ``arr``, on its device (made there: the mask by
    ``tri``, its positions by the device's ``nonzero``)."""
    n, m = _from_2d(name, arr)
    library = backend.library_of(arg(arr))
    if library is backend.NUMPY:
        return _triangle_indices(name, n, k, m, lower)
    if library.lazy:  # from the shape alone: a graph's constants, of known size (its
        # nonzero would give chunks of unknown size)
        return tuple(backend.asarray(i, like=arg(arr))
                     for i in _triangle_indices(name, n, k, m, lower))
    k = static_int(k, name, "k")
    inside = backend.tri(n, m, k if lower else k - 1, dtype=bool, like=arr)
    if not lower:
        inside = ~inside
    return tuple(i.astype(INT) for i in library.xp.nonzero(inside))


def tril_indices_from(arr, k: int = 0):
    """``tril_indices`` for the shape of the 2-D ``arr``.

    >>> import functrans.numpy as fnp
    >>> fnp.tril_indices_from(fnp.zeros((2, 2)))
    (array([0, 1, 1]), array([0, 0, 1]))
    """
    return _triangle_indices_of("tril_indices_from", arr, k, lower=True)


def triu_indices_from(arr, k: int = 0):
    """``triu_indices`` for the shape of the 2-D ``arr``.

    >>> import functrans.numpy as fnp
    >>> fnp.triu_indices_from(fnp.zeros((2, 2)), k=1)
    (array([0]), array([1]))
    """
    return _triangle_indices_of("triu_indices_from", arr, k, lower=False)


def mask_indices(n: int, mask_func, k=0, *, size=None):
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (``mask_func`` is, for
    example, ``triu`` or ``tril``).  Inside a transform ``mask_func``'s result is traced,
    so pass ``size`` (the number of indices), as for ``nonzero``.

    >>> import functrans.numpy as fnp
    >>> fnp.mask_indices(2, fnp.triu)
    (array([0, 0, 1]), array([0, 1, 1]))
    """
    n = static_int(n, "mask_indices", "n")
    return nonzero(mask_func(np.ones((n, n), INT), k), size=size)


# -- index expressions ----------------------------------------------------------------------

class _IndexExpression:
    """``s_[...]`` and ``index_exp[...]``: the index written between the brackets, as a
    tuple always (``index_exp``) or as written (``s_``)."""

    def __init__(self, always_tuple: bool):
        self._always_tuple = always_tuple

    def __getitem__(self, index):
        if self._always_tuple and not isinstance(index, tuple):
            return (index,)
        return index


s_ = _IndexExpression(always_tuple=False)
index_exp = _IndexExpression(always_tuple=True)


def _slice_values(name: str, s: builtins.slice):
    """A slice of a grid: ``start:stop:step`` as ``arange``, or with an imaginary step
    ``start:stop:nj`` as ``n`` points from start to stop inclusive (``linspace``)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if s.stop is None:
        raise ValueError(f"{name}: a slice needs a stop, got {s!r}")
    if isinstance(step, complex):
        return linspace(start, s.stop, int(builtins.abs(step)))
    return arange(start, s.stop, step)


class _Grid:
    """``mgrid[...]`` (``sparse=False``: one dense array stacking every coordinate) and
    ``ogrid[...]`` (a list of arrays that broadcast against each other)."""

    def __init__(self, name: str, sparse: bool):
        self._name, self._sparse = name, sparse

    def __getitem__(self, key):
        if isinstance(key, builtins.slice):
            return _slice_values(self._name, key)
        if not isinstance(key, tuple) or not builtins.all(
                isinstance(k, builtins.slice) for k in key):
            raise TypeError(f"{self._name}: index with slices, e.g. {self._name}[0:3, 0:1:5j]")
        axes = [_slice_values(self._name, k) for k in key]
        dtype = np.result_type(*[dtype_of(x) for x in axes])
        axes = [lax.convert_element_type(x, dtype) for x in axes]
        nd = len(axes)
        shaped = [shape_ops.reshape(x, [shape_of(x)[0] if j == i else 1 for j in range(nd)])
                  for i, x in enumerate(axes)]
        if self._sparse:
            return shaped
        full = tuple(shape_of(x)[0] for x in axes)
        return stack([shape_ops.broadcast_to(x, full) for x in shaped])


mgrid = _Grid("mgrid", sparse=False)
ogrid = _Grid("ogrid", sparse=True)


class _Concatenator:
    """``r_[...]`` and ``c_[...]``: the items between the brackets (arrays, scalars,
    sequences, and slices as in ``mgrid``) joined along an axis.  A leading string
    ``"axis"``, ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"`` sets the axis, the least
    number of axes each item is given, and where an item's own axes go when it is given
    more (as NumPy's)."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int):
        self._name, self._defaults = name, (axis, ndmin, trans1d)

    def __getitem__(self, key):
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self._defaults
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            try:
                numbers = [int(v) for v in directive.split(",")]
            except ValueError:
                raise ValueError(f"{self._name}: the directive {directive!r} is not "
                                 "supported; use 'axis', 'axis,ndmin' or "
                                 "'axis,ndmin,trans1d' (integers)") from None
            if not 1 <= len(numbers) <= 3:
                raise ValueError(f"{self._name}: too many numbers in {directive!r}")
            axis, ndmin, trans1d = numbers + [ndmin, trans1d][len(numbers) - 1:]
        arrays = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"{self._name}: a string is only allowed first, got {item!r}")
            scalar = isinstance(item, (int, float, complex, bool))
            x = _slice_values(self._name, item) if isinstance(item, builtins.slice) else arg(
                item)
            arrays.append((self._at_least(x, ndmin, trans1d), scalar))
        if not arrays:
            return np.empty((0,))
        # Python scalars take the dtype of the arrays (weak, as in NumPy).
        dtype = np.result_type(*[item if s else dtype_of(x) for (x, s), item in
                                 zip(arrays, items)])
        return concatenate([lax.convert_element_type(x, dtype) for x, _ in arrays], axis)

    @staticmethod
    def _at_least(x, ndmin: int, trans1d: int):
        shape = shape_of(x)
        if len(shape) >= ndmin:
            return x
        # NumPy's rule: the item's own axes start at trans1d (counted from the end among
        # the ndmin - ndim + 1 places they can start at when negative); new axes have size 1
        spare = ndmin - len(shape)
        start = trans1d + spare + 1 if trans1d < 0 else builtins.min(trans1d, spare)
        return shape_ops.reshape(x, (1,) * start + shape + (1,) * (spare - start))


r_ = _Concatenator("r_", axis=0, ndmin=1, trans1d=-1)
c_ = _Concatenator("c_", axis=-1, ndmin=2, trans1d=0)


# -- counting into bins ---------------------------------------------------------------------

def _weights(name: str, weights, shape: tuple):
    """``weights`` (None: ones) flattened, of an inexact dtype (float64 for integers and
    booleans, as NumPy; float32 stays float32)."""
    if weights is None:
        return None
    weights = arg(weights)
    if shape_of(weights) != shape:
        raise ValueError(f"{name}: weights of shape {shape_of(weights)} must have the shape "
                         f"{shape} of the values")
    if dtype_of(weights).kind not in "fc":
        weights = lax.convert_element_type(weights, np.float64)
    return shape_ops.reshape(weights, (math.prod(shape),))


def _add_into_bins(bins, keep, count: int, weights, like):
    """Per element bin numbers (1-D int64) summed into ``count`` bins: the ``weights`` (or
    ones, as int64 counts) of the elements where ``keep`` is true.  The others go to an
    extra bin that is dropped, since scatter-add clamps rather than drops."""
    n = shape_of(bins)[0]
    slot = lax.select(keep, bins, count)
    if weights is None:
        updates = backend.ones((n,), INT, like=like)
        dtype = INT
    else:
        updates, dtype = weights, dtype_of(weights)
    target = _zeros((count + 1,), dtype, like if weights is None else updates)
    out = lax.scatter_add(target, shape_ops.reshape(slot, (n, 1)), updates)
    return lax.slice(out, (0,), (count,))


def bincount(x, weights=None, minlength: int = 0, *, length=None):
    """The number of occurrences of each value ``0, 1, ...`` in the 1-D non-negative
    integer ``x`` (the sum of ``weights`` at its occurrences, with ``weights``).

    The result has ``max(x) + 1`` bins, at least ``minlength``.  A traced ``x`` under vmap
    or in a jaxpr needs a static ``length`` instead (JAX's): then there are exactly
    ``length`` bins, values beyond are dropped and negative values counted in bin 0, as in
    JAX.  The result differentiates with respect to ``weights``; integer counts carry no
    derivative.

    >>> import functrans.numpy as fnp
    >>> fnp.bincount(fnp.asarray([0, 2, 2, 3]))
    array([1, 0, 2, 1])
    >>> fnp.bincount(fnp.asarray([0, 2, 2, 3]), weights=[0.5, 1., 2., 4.], length=3)
    array([0.5, 0. , 3. ])
    """
    x = arg(x)
    if len(shape_of(x)) != 1 or dtype_of(x).kind not in "iub":
        raise TypeError(f"bincount: x must be a 1-D array of non-negative integers, got "
                        f"{dtype_of(x)} of shape {shape_of(x)}")
    minlength = static_int(minlength, "bincount", "minlength")
    if minlength < 0:
        raise ValueError(f"bincount: minlength must be non-negative, got {minlength}")
    w = _weights("bincount", weights, shape_of(x))
    if length is None:
        try:
            values = _concrete("bincount", x)
        except ConcretizationTypeError:
            raise ConcretizationTypeError(
                f"bincount: the number of bins of a traced {x.aval.str_short()} depends on its "
                "values, which a transform must know in advance; pass a static length= "
                "(values at or beyond it are dropped)") from None
        xp = backend.array_module(values)
        if shape_of(x)[0] and bool(xp.any(values < 0)):
            raise ValueError("bincount: x must not be negative (pass length= to count "
                             "negative values in bin 0, as JAX does)")
        length = builtins.max(int(values.max()) + 1 if shape_of(x)[0] else 0, minlength)
    else:
        length = _size("bincount", length)
    i = lax.max(lax.convert_element_type(x, INT), 0)
    return _add_into_bins(i, lax.lt(i, length), length, w, x)


def _concrete_values(name: str, a):
    try:
        return _concrete(name, a)
    except ConcretizationTypeError:
        raise ConcretizationTypeError(
            f"{name}: the values of a traced {a.aval.str_short()} decide which bin each falls "
            "in and cannot be read under vmap or in a jaxpr; call it on concrete values (its "
            "weights may be traced)") from None


def _range_ends(range):  # noqa: A002 (NumPy's name)
    """The two ends of a histogram's ``range``: a pair, or an array of shape (2,)."""
    if isinstance(range, Tracer) or hasattr(range, "shape"):
        r = arg(range)
        if shape_of(r) != (2,):
            raise ValueError(f"histogram_bin_edges: range must be a pair (low, high), got an "
                             f"array of shape {shape_of(r)}")
        return tuple(shape_ops.reshape(lax.slice(r, (i,), (i + 1,)), ()) for i in (0, 1))
    try:
        lo, hi = range
    except (TypeError, ValueError):
        raise ValueError(f"histogram_bin_edges: range must be a pair (low, high), got "
                         f"{range!r}") from None
    return arg(lo) if isinstance(lo, Tracer) else lo, arg(hi) if isinstance(hi, Tracer) else hi


def _known(x, what: str = "", why: str = ""):
    """The value of ``x``: itself, a traced value's primal under differentiation, or (where
    the value is abstract: jit, vmap) None, or the error ``why`` if one is given."""
    if not isinstance(x, Tracer):
        return x
    try:
        return x.to_concrete_value(what or "a histogram's range")
    except ConcretizationTypeError as e:
        if not why:
            return None
        raise ConcretizationTypeError(f"{what}: {why}, but a traced {x.aval.str_short()} has "
                                      "no value here (pass concrete numbers, or bins as a "
                                      "count)") from e


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 (NumPy's name)
    """The edges of ``histogram``'s bins: ``bins + 1`` evenly spaced from ``range`` (the
    minimum and maximum of ``a`` when None), or ``bins`` itself when it is a sequence of
    edges, or NumPy's named estimators (``"auto"``, ``"fd"``, ...; concrete ``a`` only).

    Evenly spaced edges are computed from ``a``'s minimum and maximum, or from the ends of
    ``range``, so they work on traced ``a`` or a traced ``range`` (under ``grad``, ``jit``
    or ``vmap``) and differentiate with respect to them.  A concrete ``range`` must be
    finite with low <= high; a traced one under ``jit``/``vmap`` cannot be checked.

    >>> import functrans.numpy as fnp
    >>> fnp.histogram_bin_edges(fnp.asarray([1., 2., 5.]), bins=2)
    array([1., 3., 5.])
    """
    a = arg(a)
    if isinstance(bins, str):
        a = _concrete_values("histogram_bin_edges", a)
        if weights is not None:
            weights = _concrete_values("histogram_bin_edges", arg(weights))
        if range is not None:
            range = tuple(_known(v, "histogram_bin_edges", f"bins={bins!r} (a named "
                                 "estimator) needs the values of range")
                          for v in _range_ends(range))
        return backend.array_module(a).histogram_bin_edges(a, bins, range, weights)
    if not isinstance(bins, (int, np.integer)):
        edges = arg(bins)
        if len(shape_of(edges)) != 1 or shape_of(edges)[0] < 2:
            raise ValueError(f"histogram_bin_edges: bins must be a count or a 1-D array of at "
                             f"least two edges, got shape {shape_of(edges)}")
        if type(edges) is np.ndarray and bool((edges[1:] < edges[:-1]).any()):
            raise ValueError("histogram_bin_edges: the edges in bins must increase "
                             "monotonically")
        return edges
    if bins < 1:
        raise ValueError(f"histogram_bin_edges: bins must be positive, got {bins}")
    dtype = np.result_type(dtype_of(a), 0.0)
    axes = tuple(builtins.range(len(shape_of(a))))
    if range is not None:
        lo, hi = _range_ends(range)
        # checked where the values are on the host (traced ends under jit and vmap have
        # none; device arrays are not synchronised to check them)
        host = (int, float, np.ndarray, np.generic)
        known = [_known(v) for v in (lo, hi)]
        if all(isinstance(v, host) for v in known):
            low, high = (float(v) for v in known)
            if not (math.isfinite(low) and math.isfinite(high)) or low > high:
                raise ValueError(f"histogram_bin_edges: range must be finite with low <= high, "
                                 f"got {(low, high)!r}")
        lo, hi = (backend.full((), float(v), dtype, like=a) if isinstance(v, host)
                  else lax.convert_element_type(v, dtype) for v in (lo, hi))
    elif not math.prod(shape_of(a)):
        lo, hi = (backend.full((), v, dtype, like=a) for v in (0.0, 1.0))
    else:
        lo, hi = (lax.convert_element_type(f(a, axes), dtype)
                  for f in (lax.reduce_min, lax.reduce_max))
        if type(a) is np.ndarray and not math.isfinite(lo + hi):  # device: no sync to check
            raise ValueError("histogram_bin_edges: the range of the values is not finite; "
                             "pass range=(low, high)")
    same = lax.eq(lo, hi)  # NumPy widens an empty range by 1/2 on both sides
    lo, hi = lax.select(same, lax.sub(lo, 0.5), lo), lax.select(same, lax.add(hi, 0.5), hi)
    steps = lax.div(lax.iota(dtype, bins, like=a), backend.full((), bins, dtype, like=a))
    inner = lax.add(lo, lax.mul(lax.sub(hi, lo), steps))
    return lax.concatenate([inner, shape_ops.reshape(hi, (1,))], 0)


def _bin_numbers(values, edges):
    """For 1-D ``values``: the bin of each (``edges[k] <= v < edges[k + 1]``, the last bin
    its right edge too), as the number of inner edges at or below it; and which values
    fall inside the edges at all (NaN does not).  One comparison per value and edge, so
    traced values and edges work."""
    n, nb = shape_of(values)[0], shape_of(edges)[0] - 1
    values = lax.convert_element_type(values, np.result_type(dtype_of(values), 0.0))
    inner = lax.convert_element_type(lax.slice(edges, (1,), (nb,)), dtype_of(values))
    above = lax.ge(shape_ops.broadcast_in_dim(values, (n, nb - 1), (0,)),
                   shape_ops.broadcast_in_dim(inner, (n, nb - 1), (1,)))
    k = lax.reduce_sum(lax.convert_element_type(above, INT), (1,))
    first, last = (lax.convert_element_type(lax.slice(edges, (i,), (i + 1,)), dtype_of(values))
                   for i in (0, nb))
    keep = lax.bitwise_and(lax.ge(values, first), lax.le(values, last))
    return k, keep


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of ``a`` (flattened) in the bins of ``histogram_bin_edges``, and the edges.

    Values, edges and ``weights`` may all be traced (vmap batches them; named estimators
    for ``bins`` need concrete values): each bin is the sum of the weights of its values,
    which differentiates with respect to the weights.  Counts without weights are int64
    and carry no derivative.  With ``density`` the counts are divided by their total and
    the bin widths (a density that integrates to 1).

    >>> import functrans.numpy as fnp
    >>> counts, edges = fnp.histogram(fnp.asarray([1., 2., 2., 5.]), bins=2)
    >>> counts, edges
    (array([3, 1]), array([1., 3., 5.]))
    """
    a = arg(a)
    edges = histogram_bin_edges(a, bins, range, weights)
    w = _weights("histogram", weights, shape_of(a))
    k, keep = _bin_numbers(ravel(a), edges)
    counts = _add_into_bins(k, keep, shape_of(edges)[0] - 1, w, a)
    if density:
        counts = _density(counts, _widths(edges))
    return counts, edges


def _widths(edges):
    n = shape_of(edges)[0]
    return lax.sub(lax.slice(edges, (1,), (n,)), lax.slice(edges, (0,), (n - 1,)))


def _density(counts, widths):
    # float32 weights keep float32 (NumPy divides in float64), as everywhere in functrans
    if dtype_of(counts).kind not in "fc":
        counts = lax.convert_element_type(counts, np.float64)
    total = lax.reduce_sum(counts, tuple(builtins.range(len(shape_of(counts)))))
    return lax.div(lax.div(counts, total), lax.convert_element_type(widths, dtype_of(counts)))


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Counts of the ``(N, D)`` points of ``sample`` in a ``D``-dimensional grid of bins, and
    the ``D`` arrays of edges.  ``bins`` is a count for every axis, one per axis, or one
    array of edges per axis; ``range`` one ``(low, high)`` (or None) per axis.  As in
    ``histogram``: traced points and weights, differentiable weights, ``density``.

    >>> import functrans.numpy as fnp
    >>> counts, edges = fnp.histogramdd(fnp.asarray([[0., 0.], [1., 1.], [1., 0.]]), bins=2)
    >>> counts
    array([[1., 0.],
           [1., 1.]])
    """
    sample = arg(sample)
    if len(shape_of(sample)) == 1:
        sample = shape_ops.reshape(sample, (shape_of(sample)[0], 1))
    if len(shape_of(sample)) != 2:
        raise ValueError(f"histogramdd: sample must be (N, D), got shape {shape_of(sample)}")
    n, d = shape_of(sample)
    if isinstance(bins, (int, np.integer)):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError(f"histogramdd: bins has {len(bins)} entries for {d} dimensions")
    ranges = [None] * d if range is None else list(range)
    if len(ranges) != d:
        raise ValueError(f"histogramdd: range has {len(ranges)} entries for {d} dimensions")
    edges, flat, keep, shape = [], 0, None, []
    for axis in builtins.range(d):
        column = shape_ops.squeeze(lax.slice(sample, (0, axis), (n, axis + 1)), (1,))
        e = histogram_bin_edges(column, bins[axis], ranges[axis])
        k, inside = _bin_numbers(column, e)
        edges.append(e)
        shape.append(shape_of(e)[0] - 1)
        flat = lax.add(lax.mul(flat, shape[-1]), k)  # C order, one axis at a time
        keep = inside if keep is None else lax.bitwise_and(keep, inside)
    w = _weights("histogramdd", weights, (n,))
    if w is None:  # NumPy's histogramdd counts in float64
        w = backend.ones((n,), np.float64, like=sample)
    counts = shape_ops.reshape(_add_into_bins(flat, keep, math.prod(shape), w, sample), shape)
    if density:
        cell = None
        for axis, e in enumerate(edges):
            width = shape_ops.broadcast_in_dim(_widths(e), shape, (axis,))
            cell = width if cell is None else lax.mul(cell, width)
        counts = _density(counts, cell)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """``histogramdd`` of the points ``(x[i], y[i])``: the counts and the x and y edges.

    >>> import functrans.numpy as fnp
    >>> counts, xedges, yedges = fnp.histogram2d([0., 1., 1.], [0., 1., 0.], bins=2)
    >>> counts
    array([[1., 0.],
           [1., 1.]])
    """
    if not isinstance(bins, (int, np.integer)) and len(bins) != 2:
        bins = [bins, bins]  # one array of edges for both axes
    counts, (xedges, yedges) = histogramdd(stack([arg(x), arg(y)], 1), bins, range, weights,
                                           density)
    return counts, xedges, yedges
