"""Elementwise functions: math (``sin``, ``exp``, ``power``, ...), arithmetic, comparisons,
logical functions and predicates (``isnan``), each applied to every element, broadcasting
binary operands as NumPy does.

A new ufunc-like function goes here; one whose input is promoted to float and then handed
to a single ``lax`` function is one line with ``_inexact_unary``.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np
from numpy import e, inf, nan, pi

from functrans import core, lax
from functrans.core import get_aval
from functrans.numpy._creation import full_like
from functrans.numpy._util import alias, arg, as_bool, dtype_of, promote_inexact, public, shape_of

__all__ = [
    "e", "inf", "nan", "pi",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "expm1", "log", "log1p", "sqrt",
    "arctan", "arcsin", "arccos", "arctan2", "floor", "ceil", "round", "around", "log2",
    "log10", "exp2", "negative", "positive", "absolute", "abs", "sign", "real", "imag",
    "conjugate", "conj", "square", "reciprocal", "add", "subtract", "multiply", "true_divide",
    "divide", "power", "maximum", "minimum", "logaddexp", "clip", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not",
    "isnan", "isfinite",
]


def _inexact_unary(f, name: str, doc: str):
    """The function ``name``: ``f`` applied after integers and booleans become float."""
    def fn(x):
        return f(promote_inexact(x))
    return public(fn, name, doc)


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

    >>> import functrans.numpy as fnp
    >>> float(fnp.arctan2(1.0, -1.0)) == 3 * fnp.pi / 4
    True
    """
    return lax.atan2(promote_inexact(x1), promote_inexact(x2))


def floor(x):
    """Elementwise floor; integers and booleans come back unchanged, as in NumPy 2."""
    x = arg(x)
    return x if dtype_of(x).kind in "biu" else lax.floor(x)


def ceil(x):
    """Elementwise ceiling; integers and booleans come back unchanged, as in NumPy 2."""
    x = arg(x)
    return x if dtype_of(x).kind in "biu" else lax.ceil(x)


def round(a, decimals: int = 0):  # noqa: A001 (NumPy's name)
    """Round half to even to ``decimals`` places (negative: to tens, hundreds, ...), by
    NumPy's method: scale by a power of ten, round to an integer, scale back.

    >>> import functrans.numpy as fnp
    >>> fnp.round(fnp.asarray([0.5, 1.5, 2.5]))
    array([0., 2., 2.])
    >>> fnp.round(fnp.asarray([0.125, 0.375]), 2), float(fnp.round(-1250.0, -2))
    (array([0.12, 0.38]), -1200.0)
    """
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"round: decimals must be a static integer, got {decimals!r}") from None
    a = arg(a)
    kind = dtype_of(a).kind
    if kind in "iu":
        if decimals < 0:
            raise NotImplementedError("round: integer arrays with decimals < 0 are not "
                                      "supported; convert to float first")
        return a
    if kind == "b":
        a = lax.convert_element_type(a, np.float16)  # NumPy's result type for booleans
    if kind == "c":
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    even = lax.RoundingMethod.TO_NEAREST_EVEN
    if decimals == 0:
        return lax.round(a, even)
    factor = 10.0 ** builtins.abs(decimals)
    if decimals > 0:
        return lax.div(lax.round(lax.mul(a, factor), even), factor)
    return lax.mul(lax.round(lax.div(a, factor), even), factor)


around = alias(round, "around")


def log2(x):
    """Elementwise base-2 logarithm."""
    return lax.div(log(x), math.log(2))


def log10(x):
    """Elementwise base-10 logarithm."""
    return lax.div(log(x), math.log(10))


def exp2(x):
    """Elementwise 2 ** x."""
    return exp(lax.mul(promote_inexact(x), math.log(2)))


def negative(x):
    return lax.neg(arg(x))


def positive(x):
    return arg(x)


def absolute(x):
    return lax.abs(arg(x))


abs = alias(absolute, "abs")  # noqa: A001 (NumPy's name)


def sign(x):
    return lax.sign(arg(x))


def real(x):
    return lax.real(arg(x))


def imag(x):
    return lax.imag(arg(x))


def conjugate(x):
    return lax.conj(arg(x))


conj = alias(conjugate, "conj")


def square(x):
    return lax.integer_pow(arg(x), 2)


def reciprocal(x):
    return lax.div(1, promote_inexact(x))


def add(x, y):
    return lax.add(arg(x), arg(y))


def subtract(x, y):
    return lax.sub(arg(x), arg(y))


def multiply(x, y):
    return lax.mul(arg(x), arg(y))


def true_divide(x, y):
    """Elementwise x / y; integers are promoted to float first, as in NumPy."""
    return lax.div(promote_inexact(x), promote_inexact(y))


divide = alias(true_divide, "divide")


def power(x, y):
    """Elementwise x ** y with NumPy's result dtype; a static integer exponent (a Python or
    NumPy integer) uses repeated multiplication (``integer_pow``)."""
    x, y = arg(x), arg(y)
    dtype, weak = core.result_type(get_aval(x), get_aval(y))
    if type(y) is int or isinstance(y, np.integer):
        if y < 0 and not core.is_inexact(dtype):
            raise ValueError(f"power: integers to negative integer powers ({int(y)}) are not "
                             "allowed, as in NumPy; convert the base to float first")
        return lax.integer_pow(lax.convert_element_type(x, dtype, weak), int(y))
    if core.is_inexact(dtype):
        return lax.pow(x, y)
    # Integer base and integer array exponent: computed in float64, where integer results
    # up to 2**53 are exact, then rounded to the nearest integer (truncated for negative
    # exponents, whose results lie strictly between -1 and 1 unless they are +-1).
    p = lax.pow(lax.convert_element_type(x, np.float64), lax.convert_element_type(
        y, np.float64))
    rounded = lax.select(lax.ge(y, 0), lax.add(p, lax.mul(lax.sign(p), 0.5)), p)
    return lax.convert_element_type(rounded, dtype, weak)


def maximum(x, y):
    return lax.max(arg(x), arg(y))


def minimum(x, y):
    return lax.min(arg(x), arg(y))


def logaddexp(x1, x2):
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow or underflow.

    Each side of ``x1 == x2`` uses a formula that is exact everywhere and stable on that
    side, so derivatives of every order are right at ties too; the branch not taken gets a
    harmless argument, so it adds no nan to gradients.

    >>> import math, functrans.numpy as fnp
    >>> float(fnp.logaddexp(1000.0, 1000.0)) == 1000.0 + math.log(2)
    True
    """
    x1, x2 = promote_inexact(x1), promote_inexact(x2)
    if dtype_of(x1).kind == "c" or dtype_of(x2).kind == "c":
        raise TypeError("logaddexp: complex operands are not supported (nor by NumPy)")
    try:
        np.broadcast_shapes(shape_of(x1), shape_of(x2))
    except ValueError:
        raise ValueError(f"logaddexp: operand shapes {shape_of(x1)} and {shape_of(x2)} "
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
    a = arg(a)
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def equal(x, y):
    return lax.eq(arg(x), arg(y))


def not_equal(x, y):
    return lax.ne(arg(x), arg(y))


def less(x, y):
    return lax.lt(arg(x), arg(y))


def less_equal(x, y):
    return lax.le(arg(x), arg(y))


def greater(x, y):
    return lax.gt(arg(x), arg(y))


def greater_equal(x, y):
    return lax.ge(arg(x), arg(y))




def logical_and(x, y):
    return lax.bitwise_and(as_bool(x), as_bool(y))


def logical_or(x, y):
    return lax.bitwise_or(as_bool(x), as_bool(y))


def logical_not(x):
    return lax.bitwise_not(as_bool(x))


def isnan(x):
    """Elementwise test for nan (never true for integers and booleans)."""
    x = arg(x)
    if not core.is_inexact(dtype_of(x)):
        return full_like(x, False, dtype=np.bool_)
    return lax.ne(x, x)


def isfinite(x):
    """Elementwise test for values that are neither infinite nor nan."""
    x = arg(x)
    dtype = dtype_of(x)
    if not core.is_inexact(dtype):
        return full_like(x, True, dtype=np.bool_)
    if dtype.kind == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)
