"""``functrans.numpy``: NumPy-named functions that work on arrays and on tracers alike.

Code written for ``numpy`` (or ``jax.numpy``) runs under every transform after swapping the
import.  Dtypes follow NumPy: float32 stays float32, and Python scalars do not upcast arrays.

>>> import numpy as np, functrans.numpy as fnp
>>> fnp.sum(fnp.sin(np.zeros(3, np.float32)) * 2.0).dtype
dtype('float32')
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Sequence

import numpy as _np

from functrans import core, lax
from functrans.core import Tracer, get_aval
from functrans.primitives import cumulative as _cumulative
from functrans.primitives import shape as _shape

# Dtypes and constants, re-exported so that `fnp.float32` etc. work as in NumPy.
from numpy import (bool_, complex64, complex128, dtype, e, float16, float32, float64, inf,  # noqa
                   int8, int16, int32, int64, nan, newaxis, pi, uint8, uint32, uint64)

ndarray = _np.ndarray

# ------------------------------------------------------------------------------------------
# Argument handling
# ------------------------------------------------------------------------------------------


def _arg(x):
    """Accept arrays, tracers and Python scalars as they are; convert lists and tuples."""
    if type(x) is _np.ndarray or isinstance(x, Tracer) or core.is_python_scalar(x):
        return x
    if isinstance(x, (list, tuple)):
        return asarray(x)
    get_aval(x)  # raises a clear TypeError for unsupported values
    return x


def _shape_of(x) -> tuple:
    return get_aval(x).shape


def _dtype_of(x) -> _np.dtype:
    return get_aval(x).dtype


def _promote_inexact(x):
    """Integers and booleans become float64 (weakly typed if they were), like NumPy."""
    if type(x) is _np.ndarray and x.dtype.kind in "fc":  # the common case, kept cheap
        return x
    x = _arg(x)
    aval = get_aval(x)
    if core.is_inexact(aval.dtype):
        return x
    return lax.convert_element_type(x, _np.float64, aval.weak_type)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, _np.integer)):
        return (int(axis),)
    return tuple(int(a) for a in axis)


def _keepdims(out, x_shape: tuple, axes: tuple, keepdims: bool):
    if not keepdims:
        return out
    axes = {a % len(x_shape) for a in axes} if x_shape else set()
    return _shape.reshape(out, [1 if i in axes else n for i, n in enumerate(x_shape)])


# ------------------------------------------------------------------------------------------
# Array creation (concrete arrays; constants inside traced functions)
# ------------------------------------------------------------------------------------------


def asarray(a, dtype=None):
    """Like ``numpy.asarray``; tracers are returned (converted to ``dtype`` if given)."""
    if isinstance(a, Tracer):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if isinstance(a, (list, tuple)) and builtins.any(isinstance(x, Tracer) for x in _flat(a)):
        return stack([asarray(x, dtype) for x in a])
    if type(a).__module__.startswith("cupy"):
        return a if dtype is None else a.astype(dtype)
    return _np.asarray(a, dtype=dtype)


def _flat(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def array(a, dtype=None, copy: bool = True):
    """Like ``numpy.array``."""
    if isinstance(a, Tracer) or (isinstance(a, (list, tuple)) and builtins.any(
            isinstance(x, Tracer) for x in _flat(a))):
        return asarray(a, dtype)
    return _np.array(a, dtype=dtype, copy=copy)


zeros, ones, full, empty = _np.zeros, _np.ones, _np.full, _np.zeros
arange, linspace, eye, identity = _np.arange, _np.linspace, _np.eye, _np.identity
result_type, iscomplexobj, issubdtype, finfo, iinfo = (
    _np.result_type, _np.iscomplexobj, _np.issubdtype, _np.finfo, _np.iinfo)


def zeros_like(a, dtype=None):
    a = _arg(a)
    z = lax.zeros_like(a)
    return z if dtype is None else lax.convert_element_type(z, dtype)


def ones_like(a, dtype=None):
    return full_like(a, 1, dtype)


def full_like(a, fill_value, dtype=None):
    """An array like ``a`` (shape, array module; dtype unless given) filled with
    ``fill_value`` converted to that dtype."""
    a = _arg(a)
    dtype = _dtype_of(a) if dtype is None else _np.dtype(dtype)
    fill = lax.convert_element_type(_arg(fill_value), dtype)
    return lax.add(lax.convert_element_type(lax.zeros_like(a), dtype), fill)


# ------------------------------------------------------------------------------------------
# Elementwise functions
# ------------------------------------------------------------------------------------------


def _inexact_unary(f, name: str, doc: str):
    def fn(x):
        return f(_promote_inexact(x))
    fn.__name__, fn.__doc__ = name, doc
    return fn


sin = _inexact_unary(lax.sin, "sin", "Elementwise sine.")
cos = _inexact_unary(lax.cos, "cos", "Elementwise cosine.")
tan = _inexact_unary(lax.tan, "tan", "Elementwise tangent.")
tanh = _inexact_unary(lax.tanh, "tanh", "Elementwise hyperbolic tangent.")
sinh = _inexact_unary(lax.sinh, "sinh", "Elementwise hyperbolic sine.")
cosh = _inexact_unary(lax.cosh, "cosh", "Elementwise hyperbolic cosine.")
exp = _inexact_unary(lax.exp, "exp", "Elementwise exponential.")
expm1 = _inexact_unary(lax.expm1, "expm1", "Elementwise exp(x) - 1.")
log = _inexact_unary(lax.log, "log", "Elementwise natural logarithm.")
log1p = _inexact_unary(lax.log1p, "log1p", "Elementwise log(1 + x).")
sqrt = _inexact_unary(lax.sqrt, "sqrt", "Elementwise square root.")
arctan = _inexact_unary(lax.atan, "arctan", "Elementwise arc tangent.")
arcsin = _inexact_unary(lax.asin, "arcsin", "Elementwise arc sine.")
arccos = _inexact_unary(lax.acos, "arccos", "Elementwise arc cosine.")


def arctan2(x1, x2):
    """Elementwise arc tangent of ``x1 / x2`` in the quadrant of the point ``(x2, x1)``
    (broadcasting; integers are promoted to float).

    >>> float(arctan2(1.0, -1.0)) == 3 * pi / 4
    True
    """
    return lax.atan2(_promote_inexact(x1), _promote_inexact(x2))


def floor(x):
    """Elementwise floor; integers and booleans come back unchanged, as in NumPy 2."""
    x = _arg(x)
    return x if _dtype_of(x).kind in "biu" else lax.floor(x)


def ceil(x):
    """Elementwise ceiling; integers and booleans come back unchanged, as in NumPy 2."""
    x = _arg(x)
    return x if _dtype_of(x).kind in "biu" else lax.ceil(x)


def round(a, decimals: int = 0):  # noqa: A001 (NumPy's name)
    """Round half to even to ``decimals`` places (negative: to tens, hundreds, ...), by
    NumPy's method: scale by a power of ten, round to an integer, scale back.

    >>> round(asarray([0.5, 1.5, 2.5]))
    array([0., 2., 2.])
    >>> round(asarray([0.125, 0.375]), 2), float(round(-1250.0, -2))
    (array([0.12, 0.38]), -1200.0)
    """
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be a static integer, got {decimals!r}") from None
    a = _arg(a)
    kind = _dtype_of(a).kind
    if kind in "iu":
        if decimals < 0:
            raise NotImplementedError("round: integer arrays with decimals < 0 are not "
                                      "supported; convert to float first")
        return a
    if kind == "b":
        a = lax.convert_element_type(a, _np.float16)  # NumPy's result type for booleans
    if kind == "c":
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    even = lax.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return lax.round(a, even)
    factor = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return lax.div(lax.round(lax.mul(a, factor), even), factor)
    return lax.mul(lax.round(lax.div(a, factor), even), factor)


around = round


def log2(x):
    """Elementwise base-2 logarithm."""
    return lax.div(log(x), math.log(2))


def log10(x):
    """Elementwise base-10 logarithm."""
    return lax.div(log(x), math.log(10))


def exp2(x):
    """Elementwise 2 ** x."""
    return exp(lax.mul(_promote_inexact(x), math.log(2)))


def negative(x):
    return lax.neg(_arg(x))


def positive(x):
    return _arg(x)


def absolute(x):
    return lax.abs(_arg(x))


abs = absolute  # noqa: A001


def sign(x):
    return lax.sign(_arg(x))


def real(x):
    return lax.real(_arg(x))


def imag(x):
    return lax.imag(_arg(x))


def conjugate(x):
    return lax.conj(_arg(x))


conj = conjugate


def square(x):
    return lax.integer_pow(_arg(x), 2)


def reciprocal(x):
    return lax.div(1, _promote_inexact(x))


def add(x, y):
    return lax.add(_arg(x), _arg(y))


def subtract(x, y):
    return lax.sub(_arg(x), _arg(y))


def multiply(x, y):
    return lax.mul(_arg(x), _arg(y))


def true_divide(x, y):
    """Elementwise x / y; integers are promoted to float first, as in NumPy."""
    return lax.div(_promote_inexact(x), _promote_inexact(y))


divide = true_divide


def power(x, y):
    """Elementwise x ** y with NumPy's result dtype; a static integer exponent (a Python or
    NumPy integer) uses repeated multiplication (``integer_pow``)."""
    x, y = _arg(x), _arg(y)
    dtype, weak = core.result_type(get_aval(x), get_aval(y))
    if type(y) is int or isinstance(y, _np.integer):
        if y < 0 and not core.is_inexact(dtype):
            raise ValueError(f"power: integers to negative integer powers ({int(y)}) are not "
                             "allowed, as in NumPy; convert the base to float first")
        return lax.integer_pow(lax.convert_element_type(x, dtype, weak), int(y))
    if core.is_inexact(dtype):
        return lax.pow(x, y)
    # Integer base and integer array exponent: computed in float64, where integer results
    # up to 2**53 are exact, then rounded to the nearest integer (truncated for negative
    # exponents, whose results lie strictly between -1 and 1 unless they are +-1).
    p = lax.pow(lax.convert_element_type(x, _np.float64), lax.convert_element_type(
        y, _np.float64))
    rounded = lax.select(lax.ge(y, 0), lax.add(p, lax.mul(lax.sign(p), 0.5)), p)
    return lax.convert_element_type(rounded, dtype, weak)


def maximum(x, y):
    return lax.max(_arg(x), _arg(y))


def minimum(x, y):
    return lax.min(_arg(x), _arg(y))


def logaddexp(x1, x2):
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow or underflow.

    Each side of ``x1 == x2`` uses a formula that is exact everywhere and stable on that
    side, so derivatives of every order are right at ties too; the branch not taken gets a
    harmless argument, so it adds no nan to gradients.

    >>> float(logaddexp(1000.0, 1000.0)) == 1000.0 + math.log(2)
    True
    """
    x1, x2 = _promote_inexact(x1), _promote_inexact(x2)
    if _dtype_of(x1).kind == "c" or _dtype_of(x2).kind == "c":
        raise TypeError("logaddexp: complex operands are not supported (nor by NumPy)")
    try:
        _np.broadcast_shapes(_shape_of(x1), _shape_of(x2))
    except ValueError:
        raise ValueError(f"logaddexp: operand shapes {_shape_of(x1)} and {_shape_of(x2)} "
                         "cannot be broadcast together") from None
    delta = lax.sub(x1, x2)
    x1_larger = lax.ge(delta, 0)
    via_x1 = lax.add(x1, lax.log1p(lax.exp(lax.select(x1_larger, lax.neg(delta), 0.0))))
    via_x2 = lax.add(x2, lax.log1p(lax.exp(lax.select(x1_larger, 0.0, delta))))
    out = lax.select(x1_larger, via_x1, via_x2)
    # delta is nan for a nan operand or infinities of one sign: then x1 + x2 is the answer.
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), out)


def clip(a, a_min=None, a_max=None, *, min=None, max=None):  # noqa: A002 (NumPy's names)
    """Limit the values of ``a`` to ``[a_min, a_max]`` (``min``/``max`` are aliases)."""
    a = _arg(a)
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def equal(x, y):
    return lax.eq(_arg(x), _arg(y))


def not_equal(x, y):
    return lax.ne(_arg(x), _arg(y))


def less(x, y):
    return lax.lt(_arg(x), _arg(y))


def less_equal(x, y):
    return lax.le(_arg(x), _arg(y))


def greater(x, y):
    return lax.gt(_arg(x), _arg(y))


def greater_equal(x, y):
    return lax.ge(_arg(x), _arg(y))


def _as_bool(x):
    x = _arg(x)
    return x if _dtype_of(x) == _np.bool_ else lax.ne(x, 0)


def logical_and(x, y):
    return lax.bitwise_and(_as_bool(x), _as_bool(y))


def logical_or(x, y):
    return lax.bitwise_or(_as_bool(x), _as_bool(y))


def logical_not(x):
    return lax.bitwise_not(_as_bool(x))


def isnan(x):
    """Elementwise test for nan (never true for integers and booleans)."""
    x = _arg(x)
    if not core.is_inexact(_dtype_of(x)):
        return full_like(x, False, dtype=_np.bool_)
    return lax.ne(x, x)


def isfinite(x):
    """Elementwise test for values that are neither infinite nor nan."""
    x = _arg(x)
    dtype = _dtype_of(x)
    if not core.is_inexact(dtype):
        return full_like(x, True, dtype=_np.bool_)
    if dtype.kind == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def where(condition, x=None, y=None):
    """Elementwise ``x if condition else y`` (broadcasting); the one-argument form is not
    supported (its output shape depends on the data)."""
    if x is None or y is None:
        raise TypeError("where(condition) without x and y has a data-dependent shape and is "
                        "not supported; use where(condition, x, y)")
    return lax.select(_as_bool(condition), _arg(x), _arg(y))


def astype(x, dtype):
    return lax.convert_element_type(_arg(x), dtype)


# ------------------------------------------------------------------------------------------
# Reductions
# ------------------------------------------------------------------------------------------


def sum(a, axis=None, dtype=None, keepdims: bool = False):  # noqa: A001
    """Sum over ``axis`` (all axes by default); booleans and small ints sum as int64."""
    a = _arg(a)
    aval = get_aval(a)
    if dtype is not None:
        a = lax.convert_element_type(a, dtype)
    elif aval.dtype == _np.bool_ or (aval.dtype.kind in "iu" and aval.dtype.itemsize < 8):
        a = lax.convert_element_type(a, _np.int64 if aval.dtype.kind != "u" else _np.uint64)
    axes = _axes(axis, aval.ndim)
    return _keepdims(lax.reduce_sum(a, axes), aval.shape, axes, keepdims)


def mean(a, axis=None, dtype=None, keepdims: bool = False):
    """Arithmetic mean over ``axis``; integers average in float64."""
    a = _promote_inexact(a) if dtype is None else astype(a, dtype)
    aval = get_aval(a)
    axes = _axes(axis, aval.ndim)
    count = math.prod(aval.shape[a_ % aval.ndim] for a_ in axes) if aval.ndim else 1
    return lax.div(sum(a, axis, keepdims=keepdims), count)


def prod(a, axis=None, dtype=None, keepdims: bool = False):
    """Product over ``axis`` (all axes by default); booleans and small ints multiply as
    int64.  Its derivative is exact where elements are zero (no division)."""
    return _cumulative.numpy_prod(_arg(a), axis, dtype, keepdims)


def cumsum(a, axis=None, dtype=None):
    """Running sum along ``axis`` (of the flattened array by default)."""
    return _cumulative.numpy_cumsum(_arg(a), axis, dtype)


def cumprod(a, axis=None, dtype=None):
    """Running product along ``axis`` (of the flattened array by default)."""
    return _cumulative.numpy_cumprod(_arg(a), axis, dtype)


def var(a, axis=None, ddof: int = 0, keepdims: bool = False):
    """Variance over ``axis`` (``ddof`` delta degrees of freedom)."""
    a = _promote_inexact(a)
    aval = get_aval(a)
    axes = _axes(axis, aval.ndim)
    centered = lax.sub(a, mean(a, axis, keepdims=True))
    count = math.prod(aval.shape[a_ % aval.ndim] for a_ in axes) if aval.ndim else 1
    squares = lax.real(lax.mul(centered, lax.conj(centered))) if aval.dtype.kind == "c" else (
        lax.mul(centered, centered))
    return lax.div(sum(squares, axis, keepdims=keepdims), count - ddof)


def std(a, axis=None, ddof: int = 0, keepdims: bool = False):
    """Standard deviation over ``axis``."""
    return sqrt(var(a, axis, ddof, keepdims))


def max(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _arg(a)
    aval = get_aval(a)
    axes = _axes(axis, aval.ndim)
    return _keepdims(lax.reduce_max(a, axes), aval.shape, axes, keepdims)


def min(a, axis=None, keepdims: bool = False):  # noqa: A001
    a = _arg(a)
    aval = get_aval(a)
    axes = _axes(axis, aval.ndim)
    return _keepdims(lax.reduce_min(a, axes), aval.shape, axes, keepdims)


amax, amin = max, min


def any(a, axis=None, keepdims: bool = False):  # noqa: A001 (NumPy's name)
    """Whether any element along ``axis`` (all axes by default) is true (nonzero)."""
    return lax.gt(sum(_as_bool(a), axis, keepdims=keepdims), 0)


def all(a, axis=None, keepdims: bool = False):  # noqa: A001 (NumPy's name)
    """Whether every element along ``axis`` (all axes by default) is true (nonzero)."""
    return lax.eq(sum(logical_not(a), axis, keepdims=keepdims), 0)


def _arg_extremum(f, a, axis, keepdims: bool):
    a = _arg(a)
    shape = _shape_of(a)
    if axis is None:
        return _keepdims(f(ravel(a), 0), shape, tuple(range(len(shape))), keepdims)
    axis = _shape.normalize_axis(int(axis), len(shape))
    return _keepdims(f(a, axis), shape, (axis,), keepdims)


def argmax(a, axis=None, keepdims: bool = False):
    """Index of the first maximum along ``axis`` (of the flattened array by default)."""
    return _arg_extremum(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims: bool = False):
    """Index of the first minimum along ``axis`` (of the flattened array by default)."""
    return _arg_extremum(lax.argmin, a, axis, keepdims)


# ------------------------------------------------------------------------------------------
# Linear algebra
# ------------------------------------------------------------------------------------------


def matmul(a, b):
    """Matrix product with NumPy's ``@`` semantics (1-D operands, broadcast batch axes)."""
    a, b = _arg(a), _arg(b)
    a_nd, b_nd = len(_shape_of(a)), len(_shape_of(b))
    if a_nd == 0 or b_nd == 0:
        raise ValueError("matmul: operands must have at least one axis; use multiply for "
                         "scalars")
    if a_nd <= 2 and b_nd <= 2:  # no batch axes: one dot_general, no expand/squeeze
        k_a, k_b = _shape_of(a)[-1], _shape_of(b)[0 if b_nd == 1 else -2]
        if k_a != k_b:
            raise ValueError(f"matmul: contracting sizes differ: operands of shapes "
                             f"{_shape_of(a)} and {_shape_of(b)}")
        return lax.dot_general(a, b, (((a_nd - 1,), (b_nd - 2 if b_nd == 2 else 0,)),
                                      ((), ())))
    a2 = _shape.expand_dims(a, (0,)) if a_nd == 1 else a
    b2 = _shape.expand_dims(b, (1,)) if b_nd == 1 else b
    a_batch, b_batch = _shape_of(a2)[:-2], _shape_of(b2)[:-2]
    try:
        batch = _np.broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ValueError(f"matmul: batch shapes {a_batch} and {b_batch} (of operands "
                         f"{_shape_of(a)} and {_shape_of(b)}) do not broadcast") from None
    if _shape_of(a2)[-1] != _shape_of(b2)[-2]:
        raise ValueError(f"matmul: contracting sizes differ: operands of shapes {_shape_of(a)} "
                         f"and {_shape_of(b)}")
    nb = len(batch)
    a2 = _shape.broadcast_to(a2, batch + _shape_of(a2)[-2:])
    b2 = _shape.broadcast_to(b2, batch + _shape_of(b2)[-2:])
    batch_dims = tuple(range(nb))
    out = lax.dot_general(a2, b2, (((nb + 1,), (nb,)), (batch_dims, batch_dims)))
    if a_nd == 1:
        out = _shape.squeeze(out, (-2,))
    if b_nd == 1:
        out = _shape.squeeze(out, (-1,))
    return out


def dot(a, b):
    """NumPy's ``dot``: a sum product over the last axis of ``a`` and the second-to-last of
    ``b`` (the last if ``b`` is 1-D); scalars multiply."""
    a, b = _arg(a), _arg(b)
    a_nd, b_nd = len(_shape_of(a)), len(_shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return lax.mul(a, b)
    contract_b = 0 if b_nd == 1 else b_nd - 2
    return lax.dot_general(a, b, (((a_nd - 1,), (contract_b,)), ((), ())))


def vdot(a, b):
    """Dot product of flattened arrays, conjugating the first."""
    return dot(ravel(conj(a)), ravel(b))


def inner(a, b):
    a, b = _arg(a), _arg(b)
    a_nd, b_nd = len(_shape_of(a)), len(_shape_of(b))
    if a_nd == 0 or b_nd == 0:
        return lax.mul(a, b)
    return lax.dot_general(a, b, (((a_nd - 1,), (b_nd - 1,)), ((), ())))


def outer(a, b):
    a = ravel(a)
    return lax.mul(_shape.reshape(a, (get_aval(a).size, 1)), ravel(b))


def tensordot(a, b, axes=2):
    """Sum products over the given axes (an int: the last ``axes`` of ``a`` and the first of
    ``b``; or a pair of axis sequences)."""
    a, b = _arg(a), _arg(b)
    a_nd, b_nd = len(_shape_of(a)), len(_shape_of(b))
    if isinstance(axes, (int, _np.integer)):
        ca, cb = tuple(range(a_nd - axes, a_nd)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ca = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        cb = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
        ca = tuple(i % a_nd for i in ca)
        cb = tuple(i % b_nd for i in cb)
    return lax.dot_general(a, b, ((ca, cb), ((), ())))


def einsum(subscripts: str, *operands):
    """Einstein summation, lowered to dot_general, transposes, reductions and (for repeated
    indices) diagonals; more than two operands are contracted left to right.  Explicit
    output (``'ij,jk->ik'``) and implicit forms are supported; ellipses are not yet."""
    if "..." in subscripts:
        raise NotImplementedError("einsum: ellipsis ('...') is not supported yet")
    subscripts = subscripts.replace(" ", "")
    if "->" in subscripts:
        inputs, output = subscripts.split("->")
    else:
        inputs = subscripts
        counts = {}
        for c in inputs.replace(",", ""):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    specs = inputs.split(",")
    if len(specs) != len(operands):
        raise ValueError(f"einsum: {len(specs)} operand specs for {len(operands)} operands")
    operands = [_arg(x) for x in operands]
    if len(specs) == 1:
        return _einsum_single(specs[0], output, operands[0])
    if len(specs) != 2:
        out, spec = operands[0], specs[0]
        for k in range(1, len(specs)):
            rest = set("".join(specs[k + 1:])) | set(output)
            keep = "".join(dict.fromkeys(c for c in spec + specs[k] if c in rest))
            out = einsum(f"{spec},{specs[k]}->{keep}", out, operands[k])
            spec = keep
        return _einsum_single(spec, output, out)
    (sa, sb), (a, b) = specs, operands
    # Letters used by one operand only and absent from the output are summed out first.
    a, sa = _einsum_single(sa, "".join(c for c in dict.fromkeys(sa) if c in sb or c in output),
                           a), "".join(c for c in dict.fromkeys(sa) if c in sb or c in output)
    b, sb = _einsum_single(sb, "".join(c for c in dict.fromkeys(sb) if c in sa or c in output),
                           b), "".join(c for c in dict.fromkeys(sb) if c in sa or c in output)
    batch = [c for c in sa if c in sb and c in output]
    contract = [c for c in sa if c in sb and c not in output]
    dn = ((tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
          (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    out = lax.dot_general(a, b, dn)
    out_spec = "".join(batch) + "".join(c for c in sa if c not in sb) + "".join(
        c for c in sb if c not in sa)
    return _einsum_single(out_spec, output, out)


def _einsum_single(spec: str, output: str, x):
    """One-operand einsum: take diagonals of repeated letters, sum letters not in
    ``output`` and transpose to its order."""
    for c in spec:
        while spec.count(c) > 1:
            first = spec.index(c)
            second = spec.index(c, first + 1)
            x = _diagonal(x, first, second)
            spec = spec[:second] + spec[second + 1:]
    missing = [c for c in output if c not in spec]
    if missing:
        raise ValueError(f"einsum: output index {missing[0]!r} does not occur in the inputs")
    summed = tuple(i for i, c in enumerate(spec) if c not in output)
    x = lax.reduce_sum(x, summed) if summed else x
    kept = [c for c in spec if c in output]
    return _shape.transpose_axes(x, [kept.index(c) for c in output])


def _diagonal(x, axis1: int, axis2: int):
    """The diagonal over ``axis1 < axis2`` (of equal size n), left at ``axis1``: the two
    axes are merged into one of size n * n and every (n + 1)-th element is kept."""
    shape = _shape_of(x)
    n = shape[axis1]
    if shape[axis2] != n:
        raise ValueError(f"einsum: a repeated index labels axes of sizes {n} and "
                         f"{shape[axis2]} (operand shape {shape})")
    x = _shape.moveaxis(x, axis2, axis1 + 1)
    merged = shape[:axis1] + (n * n,) + tuple(d for i, d in enumerate(shape)
                                              if i > axis1 and i != axis2)
    x = _shape.reshape(x, merged)
    strides = [1] * len(merged)
    strides[axis1] = n + 1
    return lax.slice(x, [0] * len(merged), merged, strides)


# ------------------------------------------------------------------------------------------
# Shape manipulation
# ------------------------------------------------------------------------------------------


def reshape(a, shape=None, order: str = "C", *, newshape=None):
    """Reshape (row-major) to ``shape`` (``newshape`` is NumPy's older name); one entry may
    be -1."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported")
    if (shape is None) == (newshape is None):
        raise TypeError("reshape: give the new shape once, as `shape` (or `newshape`)")
    shape = newshape if shape is None else shape
    a = _arg(a)
    size = get_aval(a).size
    shape = (shape,) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise ValueError(f"reshape: cannot reshape an array of size {size} into shape "
                             f"{shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    return _shape.reshape(a, shape)


def ravel(a):
    return reshape(a, -1)


def transpose(a, axes=None):
    a = _arg(a)
    nd = len(_shape_of(a))
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(i) % nd for i in axes)
    return _shape.transpose_axes(a, perm)


def swapaxes(a, axis1: int, axis2: int):
    a = _arg(a)
    nd = len(_shape_of(a))
    perm = list(range(nd))
    perm[axis1 % nd], perm[axis2 % nd] = perm[axis2 % nd], perm[axis1 % nd]
    return _shape.transpose_axes(a, perm)


def moveaxis(a, source, destination):
    """Move axes ``source`` (an int or a sequence) to positions ``destination``; the other
    axes keep their order."""
    a = _arg(a)
    nd = len(_shape_of(a))
    src = [_shape.normalize_axis(int(i), nd, "source axis") for i in _as_tuple(source)]
    dst = [_shape.normalize_axis(int(i), nd, "destination axis")
           for i in _as_tuple(destination)]
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must be "
                         "the same number of distinct axes")
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _shape.transpose_axes(a, order)


def _as_tuple(axes) -> tuple:
    return (axes,) if isinstance(axes, (int, _np.integer)) else tuple(axes)


def broadcast_to(a, shape):
    return _shape.broadcast_to(_arg(a), tuple(shape))


def broadcast_arrays(*args):
    shape = _np.broadcast_shapes(*[_shape_of(_arg(a)) for a in args])
    return [broadcast_to(a, shape) for a in args]


def expand_dims(a, axis):
    return _shape.expand_dims(_arg(a), _axes(axis, 0))


def squeeze(a, axis=None):
    a = _arg(a)
    shape = _shape_of(a)
    axes = tuple(i for i, n in enumerate(shape) if n == 1) if axis is None else _axes(
        axis, len(shape))
    return _shape.squeeze(a, axes)


def atleast_1d(a):
    a = _arg(a)
    return reshape(a, (1,)) if not _shape_of(a) else a


def atleast_2d(*arys):
    """Arrays with at least two axes: a scalar becomes shape (1, 1), a vector (1, n).  One
    array in, one array out; several in, a tuple out."""
    outs = []
    for a in arys:
        a = _arg(a)
        nd = len(_shape_of(a))
        outs.append(_shape.reshape(a, (1, 1)) if nd == 0 else
                    _shape.expand_dims(a, (0,)) if nd == 1 else a)
    return outs[0] if len(outs) == 1 else tuple(outs)


def concatenate(arrays: Sequence, axis: int = 0):
    arrays = [_arg(a) for a in arrays]
    nd = len(_shape_of(arrays[0]))
    if axis is None:
        return lax.concatenate([ravel(a) for a in arrays], 0)
    return lax.concatenate(arrays, _shape.normalize_axis(axis, nd))


def stack(arrays: Sequence, axis: int = 0):
    arrays = [_arg(a) for a in arrays]
    nd = len(_shape_of(arrays[0])) + 1
    axis = _shape.normalize_axis(axis, nd)
    return lax.concatenate([_shape.expand_dims(a, (axis,)) for a in arrays], axis)


def hstack(tup: Sequence):
    """Concatenate along the second axis (the first, for 1-D arrays); scalars count as 1-D."""
    arrays = [atleast_1d(a) for a in tup]
    if not arrays:
        raise ValueError("hstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0 if len(_shape_of(arrays[0])) == 1 else 1)


def vstack(tup: Sequence):
    """Concatenate along the first axis, after making every array at least 2-D."""
    arrays = [atleast_2d(a) for a in tup]
    if not arrays:
        raise ValueError("vstack: need at least one array to concatenate")
    return concatenate(arrays, axis=0)


def _static_int(value, name: str, what: str) -> int:
    if isinstance(value, Tracer):
        raise NotImplementedError(f"{name}: {what} must be a static integer, not a traced "
                                  "value (it decides the output shape)")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an integer, got {value!r}") from None


def _slice_axis(x, axis: int, lo: int, hi: int):
    """``x[..., lo:hi, ...]`` along ``axis`` (``0 <= lo <= hi <= size``)."""
    shape = _shape_of(x)
    start, limit = [0] * len(shape), list(shape)
    start[axis], limit[axis] = lo, hi
    return lax.slice(x, start, limit)


def split(ary, indices_or_sections, axis: int = 0):
    """Split ``ary`` along ``axis`` into equal sections (an int that divides the axis) or
    at the given indices (the pieces are ``ary[:i0], ary[i0:i1], ..., ary[ik:]``, with
    Python's slicing rules)."""
    ary = _arg(ary)
    shape = _shape_of(ary)
    axis = _shape.normalize_axis(_static_int(axis, "split", "axis"), len(shape))
    n = shape[axis]
    if isinstance(indices_or_sections, (int, _np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"split: {sections} sections do not divide axis {axis} (of size "
                             f"{n}, array shape {shape}) equally; pass split indices instead")
        size = n // sections
        bounds = [(i * size, (i + 1) * size) for i in range(sections)]
    else:
        if isinstance(indices_or_sections, Tracer):
            raise NotImplementedError("split: indices must be static, not a traced value")
        points = [_static_int(i, "split", "each index") for i in indices_or_sections]
        edges = [0, *points, n]
        bounds = []
        for lo, hi in zip(edges, edges[1:]):
            lo, hi, _ = builtins.slice(lo, hi).indices(n)
            bounds.append((lo, builtins.max(lo, hi)))
    return [_slice_axis(ary, axis, lo, hi) for lo, hi in bounds]


def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis (an int or a tuple; the
    shorter of ``A.shape`` and ``reps`` is padded with leading ones)."""
    A = _arg(A)
    reps = tuple(_static_int(r, "tile", "reps") for r in _as_tuple(reps))
    if builtins.any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    shape = _shape_of(A)
    d = builtins.max(len(shape), len(reps))
    shape, reps = (1,) * (d - len(shape)) + shape, (1,) * (d - len(reps)) + reps
    # Each axis of size n becomes a pair (r, n) of axes, merged into one of size r * n.
    pairs = _shape.broadcast_in_dim(_shape.reshape(A, shape),
                                    [m for r, n in zip(reps, shape) for m in (r, n)],
                                    tuple(range(1, 2 * d, 2)))
    return _shape.reshape(pairs, [r * n for r, n in zip(reps, shape)])


def repeat(a, repeats, axis=None):
    """Repeat each element ``repeats`` times (a static int) along ``axis`` (of the
    flattened array by default)."""
    if not isinstance(repeats, Tracer) and _np.ndim(repeats) > 0:
        raise NotImplementedError("repeat: only one static integer count is supported, not "
                                  "one count per element")
    repeats = _static_int(repeats, "repeat", "repeats")
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    a = _arg(a)
    if axis is None:
        a, axis = ravel(a), 0
    shape = _shape_of(a)
    axis = _shape.normalize_axis(_static_int(axis, "repeat", "axis"), len(shape))
    # Each element gets a new axis of size `repeats` right after it, then the two merge.
    widened = _shape.broadcast_in_dim(
        a, shape[:axis + 1] + (repeats,) + shape[axis + 1:],
        tuple(i if i <= axis else i + 1 for i in range(len(shape))))
    return _shape.reshape(widened, shape[:axis] + (shape[axis] * repeats,) + shape[axis + 1:])


def roll(a, shift, axis=None):
    """Shift elements ``shift`` places along ``axis`` (of the flattened array by default),
    wrapping around; ``shift`` and ``axis`` may be tuples of equal length (or one of them
    an int, used for every axis)."""
    a = _arg(a)
    if isinstance(shift, Tracer):
        raise NotImplementedError("roll: shift must be static, not a traced value")
    if axis is None:
        return _shape.reshape(roll(ravel(a), shift, 0), _shape_of(a))
    shifts, axes = _as_tuple(shift), _as_tuple(axis)
    if len(shifts) == 1:
        shifts *= len(axes)
    if len(axes) == 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    nd = len(_shape_of(a))
    for s, ax in zip(shifts, axes):
        ax = _shape.normalize_axis(_static_int(ax, "roll", "axis"), nd)
        n = _shape_of(a)[ax]
        s = _static_int(s, "roll", "shift") % n if n else 0
        if s:
            a = lax.concatenate([_slice_axis(a, ax, n - s, n), _slice_axis(a, ax, 0, n - s)],
                                   ax)
    return a


def diff(a, n: int = 1, axis: int = -1):
    """The ``n``-th forward difference along ``axis``: ``a[1:] - a[:-1]``, ``n`` times
    (booleans differ by ``!=``, as in NumPy)."""
    a = _arg(a)
    n = _static_int(n, "diff", "n")
    if n < 0:
        raise ValueError(f"diff: the order n must be non-negative, got {n}")
    shape = _shape_of(a)
    if not shape:
        raise ValueError("diff: the input must have at least one axis, got a scalar")
    axis = _shape.normalize_axis(_static_int(axis, "diff", "axis"), len(shape))
    difference = lax.ne if _dtype_of(a) == _np.bool_ else lax.sub
    for _ in range(n):
        m = _shape_of(a)[axis]
        a = difference(_slice_axis(a, axis, builtins.min(1, m), m),
                       _slice_axis(a, axis, 0, builtins.max(m - 1, 0)))
    return a


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal ``a[i, i + offset]`` of the planes spanned by ``axis1`` and ``axis2``,
    as the last axis of the result (the other axes keep their order)."""
    a = _arg(a)
    shape = _shape_of(a)
    if len(shape) < 2:
        raise ValueError(f"diagonal: the input must have at least two axes, got shape {shape}")
    offset = _static_int(offset, "diagonal", "offset")
    ax1 = _shape.normalize_axis(_static_int(axis1, "diagonal", "axis1"), len(shape), "axis1")
    ax2 = _shape.normalize_axis(_static_int(axis2, "diagonal", "axis2"), len(shape), "axis2")
    if ax1 == ax2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, both are axis {ax1}")
    rest = [i for i in range(len(shape)) if i not in (ax1, ax2)]
    lead = [shape[i] for i in rest]
    rows, cols = shape[ax1], shape[ax2]
    r0, c0 = builtins.min(builtins.max(-offset, 0), rows), builtins.min(builtins.max(offset, 0),
                                                                         cols)
    size = builtins.min(rows - r0, cols - c0)
    # The square block whose main diagonal is the wanted one, flattened: every
    # (size + 1)-th element lies on that diagonal.
    x = _shape.transpose_axes(a, rest + [ax1, ax2])
    x = lax.slice(x, [0] * len(lead) + [r0, c0], lead + [r0 + size, c0 + size])
    x = _shape.reshape(x, lead + [size * size])
    return lax.slice(x, [0] * (len(lead) + 1), lead + [size * size],
                        [1] * len(lead) + [size + 1])


def diag(v, k: int = 0):
    """A 1-D ``v`` placed on the ``k``-th diagonal of a square 2-D array, or the ``k``-th
    diagonal of a 2-D ``v``.

    >>> diag(asarray([1, 2]), 1)
    array([[0, 1, 0],
           [0, 0, 2],
           [0, 0, 0]])
    """
    v = _arg(v)
    shape = _shape_of(v)
    k = _static_int(k, "diag", "k")
    if len(shape) == 2:
        return diagonal(v, k)
    if len(shape) != 1:
        raise ValueError(f"diag: the input must be 1-D or 2-D, got shape {shape}")
    n = shape[0]
    size = n + builtins.abs(k)
    # With `size` zeros between neighbours, element i lands at flat position
    # start + i * (size + 1), which is (i, i + k) of the (size, size) result.
    start = k if k >= 0 else -k * size
    spread = n + (n - 1) * size if n else 0
    zero = lax.convert_element_type(0, _dtype_of(v))
    flat = lax.pad(v, zero, [(start, size * size - start - spread, size)])
    return _shape.reshape(flat, (size, size))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None):
    """The sum along a diagonal (see ``diagonal``), with ``sum``'s dtype rules."""
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _triangle(name: str, m, k, lower: bool):
    m = _arg(m)
    shape = _shape_of(m)
    if len(shape) < 2:
        raise ValueError(f"{name}: the input must have at least two axes, got shape {shape}")
    k = _static_int(k, name, "k")
    rows, cols = shape[-2:]
    keep = _np.tri(rows, cols, k, dtype=bool) if lower else ~_np.tri(rows, cols, k - 1,
                                                                      dtype=bool)
    return lax.select(keep, m, lax.zeros_like(m))


def tril(m, k: int = 0):
    """Zero the elements above the ``k``-th diagonal of the last two axes."""
    return _triangle("tril", m, k, lower=True)


def triu(m, k: int = 0):
    """Zero the elements below the ``k``-th diagonal of the last two axes."""
    return _triangle("triu", m, k, lower=False)


def flip(a, axis=None):
    a = _arg(a)
    return lax.rev(a, _axes(axis, len(_shape_of(a))))


def pad(array, pad_width, mode: str = "constant", constant_values=0):
    """Constant padding, as ``numpy.pad(mode='constant')``; ``constant_values`` is one
    scalar (it may be traced)."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode={mode!r} is not supported; only 'constant'")
    array = _arg(array)
    nd = len(_shape_of(array))
    widths = _np.broadcast_to(_np.asarray(pad_width, dtype=int), (nd, 2))
    value = lax.convert_element_type(_arg(constant_values), _dtype_of(array))
    return lax.pad(array, value, [(int(lo), int(hi), 0) for lo, hi in widths])


def shape(a):
    return _shape_of(_arg(a))


def ndim(a):
    return len(_shape_of(_arg(a)))


def size(a):
    return get_aval(_arg(a)).size


# ------------------------------------------------------------------------------------------
# Indexing (static) and the array methods of tracers
# ------------------------------------------------------------------------------------------


def _getitem(x, index):
    """Basic indexing with Python ints, slices, None and Ellipsis."""
    if not isinstance(index, tuple):
        index = (index,)
    for idx in index:
        if isinstance(idx, (Tracer, list, bool, _np.bool_)) or getattr(idx, "ndim", 0) > 0 or (
                getattr(idx, "dtype", None) == _np.bool_):
            raise NotImplementedError(
                f"Indexing with {type(idx).__name__} {idx!r} (advanced, boolean or traced "
                "indices) is not supported yet; use static ints, slices, None and Ellipsis")
    shape = _shape_of(x)
    n_real = len([i for i in index if i is not None and i is not Ellipsis])
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for an array of shape {shape}")
    if index.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    rest = (builtins.slice(None),) * (len(shape) - n_real)
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = index[:k] + rest + index[k + 1:]
    else:
        index = index + rest
    start, limit, strides, squeeze_axes, reverse_axes, new_axes = [], [], [], [], [], []
    axis, out_axis = 0, 0
    for idx in index:
        if idx is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        n = shape[axis]
        if not isinstance(idx, builtins.slice):
            try:
                i = operator.index(idx)
            except TypeError:
                raise TypeError(f"invalid index {idx!r} of type {type(idx).__name__}; use "
                                "ints, slices, None and Ellipsis") from None
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            start.append(i), limit.append(i + 1), strides.append(1)
            squeeze_axes.append(axis)
        else:
            lo, hi, step = idx.indices(n)
            if step < 0:
                # x[hi+1 .. lo] reversed: reverse the axis, then slice forward.
                reverse_axes.append(axis)
                lo, hi, step = n - 1 - lo, n - 1 - hi, -step
            count = builtins.max(0, -(-(hi - lo) // step))
            start.append(lo), limit.append(lo + (count - 1) * step + 1 if count else lo)
            strides.append(step)
            out_axis += 1
        axis += 1
    if reverse_axes:
        x = lax.rev(x, reverse_axes)
    x = lax.slice(x, start, limit, strides)
    if squeeze_axes:
        x = _shape.squeeze(x, squeeze_axes)
    if new_axes:
        x = _shape.expand_dims(x, new_axes)
    return x


def _reflected(f):
    return lambda self, other: f(other, self)


def _boolean_only(f, name: str):
    """``&``, ``|`` and ``~`` are logical on booleans; on integers NumPy's are bitwise, which
    have no primitives yet, so refuse rather than compute a logical result."""
    def method(*args):
        for x in args:
            dtype = _dtype_of(_arg(x))
            if dtype != _np.bool_:
                raise TypeError(f"operator {name} is supported for boolean arrays only, got "
                                f"{dtype.name}: bitwise operations on integers are not "
                                "implemented; use logical_and/logical_or/logical_not for "
                                "logical results")
        return f(*args)
    return method


def _method_reshape(self, *shape, order="C"):
    return reshape(self, shape[0] if len(shape) == 1 else shape, order)


def _method_transpose(self, *axes):
    return transpose(self, None if not axes else (axes[0] if len(axes) == 1 and not isinstance(
        axes[0], int) else axes))


_TRACER_METHODS = {
    "__add__": add, "__radd__": _reflected(add),
    "__sub__": subtract, "__rsub__": _reflected(subtract),
    "__mul__": multiply, "__rmul__": _reflected(multiply),
    "__truediv__": true_divide, "__rtruediv__": _reflected(true_divide),
    "__pow__": power, "__rpow__": _reflected(power),
    "__matmul__": matmul, "__rmatmul__": _reflected(matmul),
    "__neg__": negative, "__pos__": positive, "__abs__": absolute,
    "__eq__": equal, "__ne__": not_equal, "__lt__": less, "__le__": less_equal,
    "__gt__": greater, "__ge__": greater_equal,
    "__and__": _boolean_only(logical_and, "&"), "__rand__": _boolean_only(logical_and, "&"),
    "__or__": _boolean_only(logical_or, "|"), "__ror__": _boolean_only(logical_or, "|"),
    "__invert__": _boolean_only(logical_not, "~"),
    "__getitem__": _getitem,
    "sum": sum, "mean": mean, "max": max, "min": min, "var": var, "std": std,
    "argmax": argmax, "argmin": argmin, "dot": dot, "conj": conj, "conjugate": conj,
    "reshape": _method_reshape, "transpose": _method_transpose, "ravel": ravel,
    "flatten": ravel, "squeeze": squeeze, "astype": astype, "clip": clip,
    "swapaxes": swapaxes, "all": all, "any": any, "round": round, "diagonal": diagonal,
    "trace": trace, "repeat": repeat, "prod": prod, "cumsum": cumsum, "cumprod": cumprod,
}


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs on tracers (``np.sin(x)``, ``ndarray + x``) run the functrans.numpy
    function of the same name."""
    fn = _UFUNCS.get(ufunc.__name__)
    if method != "__call__" or fn is None or kwargs:
        raise TypeError(
            f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method} cannot be "
            f"applied to a functrans tracer{' with ' + ', '.join(kwargs) if kwargs else ''}; "
            "use the functrans.numpy function instead")
    return fn(*inputs)


def _array_function(self, func, types, args, kwargs):
    """NumPy functions on tracers (``np.sum(x)``) run the functrans.numpy function of the
    same name, when there is one."""
    namespace = vars(linalg) if func.__module__ == "numpy.linalg" else globals()
    fn = namespace.get(func.__name__)
    if fn is None or not callable(fn) or fn is func:
        raise TypeError(f"numpy.{func.__name__} cannot be applied to a functrans tracer; use "
                        "functrans.numpy functions on traced values")
    return fn(*args, **kwargs)


_UFUNCS = {
    "add": add, "subtract": subtract, "multiply": multiply, "true_divide": true_divide,
    "divide": true_divide, "power": power, "negative": negative, "positive": positive,
    "absolute": absolute, "sign": sign, "sin": sin, "cos": cos, "tan": tan, "tanh": tanh,
    "sinh": sinh, "cosh": cosh, "exp": exp, "expm1": expm1, "log": log, "log1p": log1p,
    "log2": log2, "log10": log10, "exp2": exp2, "sqrt": sqrt, "arctan": arctan,
    "square": square, "reciprocal": reciprocal, "maximum": maximum, "minimum": minimum,
    "equal": equal, "not_equal": not_equal, "less": less, "less_equal": less_equal,
    "greater": greater, "greater_equal": greater_equal, "logical_and": logical_and,
    "logical_or": logical_or, "logical_not": logical_not, "conjugate": conjugate,
    "matmul": matmul, "bitwise_and": _TRACER_METHODS["__and__"],
    "bitwise_or": _TRACER_METHODS["__or__"], "invert": _TRACER_METHODS["__invert__"],
    "arcsin": arcsin, "arccos": arccos, "arctan2": arctan2, "floor": floor, "ceil": ceil,
    "isnan": isnan, "isfinite": isfinite, "logaddexp": logaddexp,
}


def _install_tracer_methods() -> None:
    for name, fn in _TRACER_METHODS.items():
        setattr(Tracer, name, fn)
    Tracer.__array_ufunc__ = _array_ufunc
    Tracer.__array_function__ = _array_function
    Tracer.T = property(lambda self: transpose(self))
    Tracer.real = property(real)
    Tracer.imag = property(imag)


_install_tracer_methods()

from functrans.numpy import linalg as linalg  # noqa: E402  (it uses the functions above)
