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
from functrans.numpy._dtypes import iscomplexobj
from functrans.numpy._util import alias, arg, as_bool, dtype_of, promote_inexact, public, shape_of
from functrans.primitives import elementwise as elementwise_primitives

__all__ = [
    "e", "inf", "nan", "pi",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "expm1", "log", "log1p", "sqrt",
    "arctan", "arcsin", "arccos", "arctan2", "floor", "ceil", "round", "around", "log2",
    "log10", "exp2", "negative", "positive", "absolute", "abs", "sign", "real", "imag",
    "conjugate", "conj", "square", "reciprocal", "add", "subtract", "multiply", "true_divide",
    "divide", "power", "maximum", "minimum", "logaddexp", "clip", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_not",
    "isnan", "isfinite",
    "arcsinh", "arccosh", "arctanh", "asin", "acos", "atan", "atan2", "asinh", "acosh", "atanh",
    "pow", "euler_gamma", "cbrt", "hypot", "signbit", "copysign", "fabs", "heaviside", "sinc",
    "fmax", "fmin", "fmod", "mod", "remainder", "floor_divide", "divmod", "trunc", "fix",
    "rint", "modf", "ldexp", "frexp", "nextafter", "spacing", "float_power", "logaddexp2",
    "logical_xor", "deg2rad", "rad2deg", "radians", "degrees", "angle", "i0", "nan_to_num",
    "isinf",
    "isposinf", "isneginf", "isreal", "iscomplex", "isrealobj", "isscalar", "isclose",
    "allclose", "array_equal", "array_equiv", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "bitwise_not", "bitwise_invert", "left_shift", "right_shift",
    "bitwise_left_shift", "bitwise_right_shift", "bitwise_count", "gcd", "lcm",
]


def _inexact_unary(f, name: str, doc: str):
    """The function ``name``: ``f`` applied after integers and booleans become float."""
    def fn(x):
        return f(promote_inexact(x))
    return public(fn, name, doc)


sin = _inexact_unary(lax.sin, "sin", """Elementwise sine.

    >>> import functrans.numpy as fnp
    >>> fnp.sin(fnp.asarray([0.0, fnp.pi / 2]))
    array([0., 1.])
    """)
cos = _inexact_unary(lax.cos, "cos", """Elementwise cosine.

    >>> import functrans.numpy as fnp
    >>> fnp.cos(fnp.asarray([0.0, fnp.pi]))
    array([ 1., -1.])
    """)
tan = _inexact_unary(lax.tan, "tan", """Elementwise tangent.

    >>> import functrans.numpy as fnp
    >>> fnp.tan(fnp.asarray([0.0, fnp.pi / 4]))
    array([0., 1.])
    """)
def _special_values(z, out, cases):
    """``out`` with the entries where a case's condition holds replaced: ``cases`` is a
    list of ``(condition, value)`` with ``value`` a function of ``out`` (the replacement,
    computed from ``out`` so that it stays on its device and keeps its derivative where it
    has one)."""
    for condition, value in cases:
        out = lax.select(condition, value(out), out)
    return out


def _complex_constant(like, re, im):
    """A complex array of ``like``'s (complex) shape, dtype and device, all ``re + im j``;
    ``re`` and ``im`` may be arrays of the real dtype."""
    real_zero = full_like(lax.real(like), 0)
    parts = [v if not isinstance(v, (int, float)) else lax.add(real_zero, v) for v in (re, im)]
    return lax.complex(*parts)


def tanh(x):
    """Elementwise hyperbolic tangent.  For complex ``x`` with an infinite real part and a
    finite imaginary part the result is ``±1 + 0j`` with the zero's sign that of the
    imaginary part, as the array API standard specifies (NumPy's sign follows
    ``sin(2 imag)`` instead).

    >>> import functrans.numpy as fnp
    >>> fnp.tanh(fnp.asarray([0.0, 1.0]))
    array([0.        , 0.76159416])
    >>> fnp.tanh(fnp.asarray([complex(fnp.inf, 2.0)]))
    array([1.+0.j])
    """
    x = promote_inexact(x)
    out = lax.tanh(x)
    if dtype_of(x).kind != "c":
        return out
    a, b = lax.stop_gradient(lax.real(x)), lax.stop_gradient(lax.imag(x))
    infinite_real = lax.bitwise_and(lax.bitwise_not(lax.is_finite(a)), lax.eq(a, a))
    return _special_values(x, out, [(
        lax.bitwise_and(infinite_real, lax.is_finite(b)),
        lambda out: _complex_constant(out, lax.sign(a), _copysign_zero(b)))])
sinh = _inexact_unary(lax.sinh, "sinh", """Elementwise hyperbolic sine.

    >>> import functrans.numpy as fnp
    >>> fnp.sinh(fnp.asarray([0.0, 1.0]))
    array([0.        , 1.17520119])
    """)
cosh = _inexact_unary(lax.cosh, "cosh", """Elementwise hyperbolic cosine.

    >>> import functrans.numpy as fnp
    >>> fnp.cosh(fnp.asarray([0.0, 1.0]))
    array([1.        , 1.54308063])
    """)
exp = _inexact_unary(lax.exp, "exp", """Elementwise exponential.

    >>> import functrans.numpy as fnp
    >>> fnp.exp(fnp.asarray([0, 1]))
    array([1.        , 2.71828183])
    """)
def expm1(x):
    """Elementwise exp(x) - 1.  For complex ``x`` the infinite, NaN and zero cases are
    those of the array API standard where NumPy differs: ``expm1(±0 + 0j)`` is ``+0 + 0j``,
    ``expm1(inf + 0j)`` is ``inf + 0j``, ``expm1(nan + 0j)`` is ``nan + 0j``, and with an
    infinite real part and an infinite or NaN imaginary part the result is ``-1 + 0j``
    (real part -inf) or ``inf + nan j`` (+inf) (NumPy: NaNs).

    >>> import functrans.numpy as fnp
    >>> fnp.expm1(fnp.asarray([0.0, 1e-10]))
    array([0.e+00, 1.e-10])
    >>> fnp.expm1(fnp.asarray([complex(fnp.inf, 0.0)]))
    array([inf+0.j])
    """
    x = promote_inexact(x)
    out = lax.expm1(x)
    if dtype_of(x).kind != "c":
        return out
    a, b = lax.stop_gradient(lax.real(x)), lax.stop_gradient(lax.imag(x))
    zero_b = lax.eq(b, 0)
    plus_zero_b = lax.bitwise_and(zero_b, lax.bitwise_not(elementwise_primitives.signbit(b)))
    finite_b = lax.is_finite(b)
    plus_inf_a, minus_inf_a = lax.eq(a, np.inf), lax.eq(a, -np.inf)
    return _special_values(x, out, [
        (lax.bitwise_and(lax.eq(a, 0), plus_zero_b), lambda out: lax.add(out, 0.0)),
        (lax.bitwise_and(plus_inf_a, zero_b), lambda out: _complex_constant(out, np.inf, b)),
        (lax.bitwise_and(lax.ne(a, a), zero_b), lambda out: _complex_constant(out, np.nan, b)),
        (lax.bitwise_and(minus_inf_a, lax.bitwise_not(finite_b)),
         lambda out: _complex_constant(out, -1.0, 0.0)),
        (lax.bitwise_and(plus_inf_a, lax.bitwise_not(finite_b)),
         lambda out: _complex_constant(out, np.inf, np.nan))])
log = _inexact_unary(lax.log, "log", """Elementwise natural logarithm.

    >>> import functrans.numpy as fnp
    >>> fnp.log(fnp.asarray([1.0, fnp.e]))
    array([0., 1.])
    """)
log1p = _inexact_unary(lax.log1p, "log1p", """Elementwise log(1 + x).

    >>> import functrans.numpy as fnp
    >>> fnp.log1p(fnp.asarray([0.0, 1e-10]))
    array([0.e+00, 1.e-10])
    """)
sqrt = _inexact_unary(lax.sqrt, "sqrt", """Elementwise square root.

    >>> import functrans.numpy as fnp
    >>> fnp.sqrt(fnp.asarray([4, 9]))
    array([2., 3.])
    """)
arctan = _inexact_unary(lax.atan, "arctan", """Elementwise arc tangent.

    >>> import functrans.numpy as fnp
    >>> fnp.arctan(fnp.asarray([0.0, 1.0]))
    array([0.        , 0.78539816])
    """)
arcsin = _inexact_unary(lax.asin, "arcsin", """Elementwise arc sine.

    >>> import functrans.numpy as fnp
    >>> fnp.arcsin(fnp.asarray([0.0, 1.0]))
    array([0.        , 1.57079633])
    """)
arccos = _inexact_unary(lax.acos, "arccos", """Elementwise arc cosine.

    >>> import functrans.numpy as fnp
    >>> fnp.arccos(fnp.asarray([1.0, 0.0]))
    array([0.        , 1.57079633])
    """)


def arctan2(x1, x2):
    """Elementwise arc tangent of ``x1 / x2`` in the quadrant of the point ``(x2, x1)``
    (broadcasting; integers are promoted to float).

    >>> import functrans.numpy as fnp
    >>> float(fnp.arctan2(1.0, -1.0)) == 3 * fnp.pi / 4
    True
    """
    return lax.atan2(promote_inexact(x1), promote_inexact(x2))


def floor(x):
    """Elementwise floor; integers and booleans come back unchanged, as in NumPy 2.

    >>> import functrans.numpy as fnp
    >>> fnp.floor(fnp.asarray([-1.5, 2.5]))
    array([-2.,  2.])
    >>> fnp.floor(fnp.asarray([3, -4]))
    array([ 3, -4])
    """
    x = arg(x)
    return x if dtype_of(x).kind in "biu" else lax.floor(x)


def ceil(x):
    """Elementwise ceiling; integers and booleans come back unchanged, as in NumPy 2.

    >>> import functrans.numpy as fnp
    >>> fnp.ceil(fnp.asarray([-1.5, 2.5]))
    array([-1.,  3.])
    """
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


log2 = _inexact_unary(elementwise_primitives.log2_p.bind, "log2", """Elementwise base-2 logarithm.

    >>> import functrans.numpy as fnp
    >>> fnp.log2(fnp.asarray([1, 8]))
    array([0., 3.])
    """)
log10 = _inexact_unary(elementwise_primitives.log10_p.bind, "log10", """Elementwise base-10 logarithm.

    >>> import functrans.numpy as fnp
    >>> fnp.log10(fnp.asarray([1.0, 1000.0]))
    array([0., 3.])
    """)
exp2 = _inexact_unary(lax.exp2, "exp2", """Elementwise 2 ** x.

    >>> import functrans.numpy as fnp
    >>> fnp.exp2(fnp.asarray([0.0, 3.0, -1.0]))
    array([1. , 8. , 0.5])
    """)


def negative(x):
    """Elementwise ``-x``.

    >>> import functrans.numpy as fnp
    >>> fnp.negative(fnp.asarray([1.0, -2.0]))
    array([-1.,  2.])
    """
    return lax.neg(arg(x))


def positive(x):
    """Elementwise ``+x``: the input itself (converted to an array if it is a list).

    >>> import functrans.numpy as fnp
    >>> fnp.positive([1.0, -2.0])
    array([ 1., -2.])
    """
    return arg(x)


def absolute(x):
    """Elementwise absolute value (the modulus, as a float, for complex numbers).

    >>> import functrans.numpy as fnp
    >>> fnp.absolute(fnp.asarray([-1.5, 2.0]))
    array([1.5, 2. ])
    >>> fnp.abs(3 + 4j)
    5.0
    """
    return lax.abs(arg(x))


abs = alias(absolute, "abs")  # noqa: A001 (NumPy's name)


def sign(x):
    """Elementwise sign: -1, 0 or 1 (nan stays nan).

    >>> import functrans.numpy as fnp
    >>> fnp.sign(fnp.asarray([-2.5, 0.0, 3.0]))
    array([-1.,  0.,  1.])
    """
    return lax.sign(arg(x))


def real(x):
    """The real part (a real input is returned as it is).

    >>> import functrans.numpy as fnp
    >>> fnp.real(fnp.asarray([1 + 2j, 3 - 4j]))
    array([1., 3.])
    """
    return lax.real(arg(x))


def imag(x):
    """The imaginary part (zeros for a real input).

    >>> import functrans.numpy as fnp
    >>> fnp.imag(fnp.asarray([1 + 2j, 3 - 4j]))
    array([ 2., -4.])
    """
    return lax.imag(arg(x))


def conjugate(x):
    """Elementwise complex conjugate (a real input is returned as it is); ``conj`` is its alias.

    >>> import functrans.numpy as fnp
    >>> fnp.conjugate(fnp.asarray([1 + 2j, 3 - 4j]))
    array([1.-2.j, 3.+4.j])
    """
    return lax.conj(arg(x))


conj = alias(conjugate, "conj")


def square(x):
    """Elementwise ``x * x``, keeping integer dtypes.

    >>> import functrans.numpy as fnp
    >>> fnp.square(fnp.asarray([-3, 4]))
    array([ 9, 16])
    """
    return lax.integer_pow(arg(x), 2)


def reciprocal(x):
    """Elementwise ``1 / x``; integers and booleans are promoted to float first.

    >>> import functrans.numpy as fnp
    >>> fnp.reciprocal(fnp.asarray([2, 4]))
    array([0.5 , 0.25])
    """
    return lax.div(1, promote_inexact(x))


def add(x, y):
    """Elementwise ``x + y``, broadcasting as NumPy does.

    >>> import functrans.numpy as fnp
    >>> fnp.add(fnp.asarray([1, 2]), 10)
    array([11, 12])
    """
    return lax.add(arg(x), arg(y))


def subtract(x, y):
    """Elementwise ``x - y``, broadcasting as NumPy does.

    >>> import functrans.numpy as fnp
    >>> fnp.subtract(fnp.asarray([1.0, 2.0]), 0.5)
    array([0.5, 1.5])
    """
    return lax.sub(arg(x), arg(y))


def multiply(x, y):
    """Elementwise ``x * y``, broadcasting as NumPy does.

    >>> import functrans.numpy as fnp
    >>> fnp.multiply(fnp.asarray([[1], [2]]), fnp.asarray([3, 4]))
    array([[3, 4],
           [6, 8]])
    """
    return lax.mul(arg(x), arg(y))


def true_divide(x, y):
    """Elementwise x / y; integers are promoted to float first, as in NumPy.

    >>> import functrans.numpy as fnp
    >>> fnp.true_divide(fnp.asarray([1, 7]), 2)
    array([0.5, 3.5])
    """
    return lax.div(promote_inexact(x), promote_inexact(y))


divide = alias(true_divide, "divide")


def power(x, y):
    """Elementwise x ** y with NumPy's result dtype; a static integer exponent (a Python or
    NumPy integer) uses repeated multiplication (``integer_pow``).

    >>> import functrans.numpy as fnp
    >>> fnp.power(fnp.asarray([2, 3]), 2)
    array([4, 9])
    >>> fnp.power(fnp.asarray([4.0, 9.0]), 0.5)
    array([2., 3.])
    """
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
    """Elementwise maximum, broadcasting; nan wins (see ``fmax`` for the opposite).

    >>> import functrans.numpy as fnp
    >>> fnp.maximum(fnp.asarray([1.0, 5.0, fnp.nan]), 3.0)
    array([ 3.,  5., nan])
    """
    return lax.max(arg(x), arg(y))


def minimum(x, y):
    """Elementwise minimum, broadcasting; nan wins (see ``fmin`` for the opposite).

    >>> import functrans.numpy as fnp
    >>> fnp.minimum(fnp.asarray([1.0, 5.0, fnp.nan]), 3.0)
    array([ 1.,  3., nan])
    """
    return lax.min(arg(x), arg(y))


def logaddexp(x1, x2):
    """Elementwise ``log(exp(x1) + exp(x2))`` without overflow or underflow.

    The derivative in ``x1`` is ``logistic(x1 - x2)`` (in ``x2`` the other way round):
    bounded at every input, one half each where both are the same infinity.

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
    return elementwise_primitives.logaddexp(x1, x2)


def clip(x=None, /, min=None, max=None, *, a=None, a_min=None,  # noqa: A002
         a_max=None):
    """Limit the values of ``x`` to ``[min, max]`` (either may be None), the array API's
    names; NumPy's ``a``, ``a_min`` and ``a_max`` are accepted as keywords.

    >>> import functrans.numpy as fnp
    >>> fnp.clip(fnp.asarray([-2.0, 0.5, 3.0]), 0.0, 1.0)
    array([0. , 0.5, 1. ])
    >>> fnp.clip(fnp.asarray([-2.0, 0.5, 3.0]), max=0.0)
    array([-2.,  0.,  0.])
    """
    for given, alias_of, name in ((a, x, "a"), (a_min, min, "a_min"), (a_max, max, "a_max")):
        if given is not None and alias_of is not None:
            raise TypeError(f"clip: got both {name} and its array API name "
                            f"{ {'a': 'x', 'a_min': 'min', 'a_max': 'max'}[name] }")
    x = arg(a if x is None else x)
    low = a_min if min is None else min
    high = a_max if max is None else max
    if low is not None:
        x = maximum(x, low)
    if high is not None:
        x = minimum(x, high)
    return x


def equal(x, y):
    """Elementwise ``x == y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.equal(fnp.asarray([1, 2, 3]), 2)
    array([False,  True, False])
    """
    return lax.eq(arg(x), arg(y))


def not_equal(x, y):
    """Elementwise ``x != y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.not_equal(fnp.asarray([1, 2, 3]), 2)
    array([ True, False,  True])
    """
    return lax.ne(arg(x), arg(y))


def less(x, y):
    """Elementwise ``x < y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.less(fnp.asarray([1, 2, 3]), 2)
    array([ True, False, False])
    """
    return lax.lt(arg(x), arg(y))


def less_equal(x, y):
    """Elementwise ``x <= y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.less_equal(fnp.asarray([1, 2, 3]), 2)
    array([ True,  True, False])
    """
    return lax.le(arg(x), arg(y))


def greater(x, y):
    """Elementwise ``x > y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.greater(fnp.asarray([1, 2, 3]), 2)
    array([False, False,  True])
    """
    return lax.gt(arg(x), arg(y))


def greater_equal(x, y):
    """Elementwise ``x >= y``, broadcasting, as a boolean array.

    >>> import functrans.numpy as fnp
    >>> fnp.greater_equal(fnp.asarray([1, 2, 3]), 2)
    array([False,  True,  True])
    """
    return lax.ge(arg(x), arg(y))


def logical_and(x, y):
    """Elementwise ``x and y`` of the truth values (nonzero is true).

    >>> import functrans.numpy as fnp
    >>> fnp.logical_and(fnp.asarray([1, 0, 2]), fnp.asarray([True, True, False]))
    array([ True, False, False])
    """
    return lax.bitwise_and(as_bool(x), as_bool(y))


def logical_or(x, y):
    """Elementwise ``x or y`` of the truth values (nonzero is true).

    >>> import functrans.numpy as fnp
    >>> fnp.logical_or(fnp.asarray([1, 0, 0]), fnp.asarray([False, True, False]))
    array([ True,  True, False])
    """
    return lax.bitwise_or(as_bool(x), as_bool(y))


def logical_not(x):
    """Elementwise ``not x`` of the truth values (nonzero is true).

    >>> import functrans.numpy as fnp
    >>> fnp.logical_not(fnp.asarray([0.0, 2.5]))
    array([ True, False])
    """
    return lax.bitwise_not(as_bool(x))


def isnan(x):
    """Elementwise test for nan (never true for integers and booleans).

    >>> import functrans.numpy as fnp
    >>> fnp.isnan(fnp.asarray([1.0, fnp.inf, fnp.nan]))
    array([False, False,  True])
    """
    x = arg(x)
    if not core.is_inexact(dtype_of(x)):
        return full_like(x, False, dtype=np.bool_)
    return lax.ne(x, x)


def isfinite(x):
    """Elementwise test for values that are neither infinite nor nan.

    >>> import functrans.numpy as fnp
    >>> fnp.isfinite(fnp.asarray([1.0, fnp.inf, fnp.nan]))
    array([ True, False, False])
    """
    x = arg(x)
    dtype = dtype_of(x)
    if not core.is_inexact(dtype):
        return full_like(x, True, dtype=np.bool_)
    if dtype.kind == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


# -- inverse hyperbolic functions and the array API's names ---------------------------------

arcsinh = _inexact_unary(lax.asinh, "arcsinh", """Elementwise inverse hyperbolic sine.

    >>> import functrans.numpy as fnp
    >>> fnp.arcsinh(fnp.asarray([0.0, 1.0]))
    array([0.        , 0.88137359])
    """)
arccosh = _inexact_unary(lax.acosh, "arccosh", """Elementwise inverse hyperbolic cosine.

    >>> import functrans.numpy as fnp
    >>> fnp.arccosh(fnp.asarray([1.0, 2.0]))
    array([0.       , 1.3169579])
    """)
arctanh = _inexact_unary(lax.atanh, "arctanh", """Elementwise inverse hyperbolic tangent.

    >>> import functrans.numpy as fnp
    >>> fnp.arctanh(fnp.asarray([0.0, 0.5]))
    array([0.        , 0.54930614])
    """)
asin = alias(arcsin, "asin")
acos = alias(arccos, "acos")
atan = alias(arctan, "atan")
atan2 = alias(arctan2, "atan2")
asinh = alias(arcsinh, "asinh")
acosh = alias(arccosh, "acosh")
atanh = alias(arctanh, "atanh")
pow = alias(power, "pow")  # noqa: A001 (the array API's name)

euler_gamma = np.euler_gamma

# -- helpers of the functions below ---------------------------------------------------------


def _common(name: str, x, y, *, inexact: bool = False, real: bool = False):
    """``x`` and ``y`` converted to their NumPy result dtype (at least float if ``inexact``;
    complex refused if ``real``)."""
    x, y = arg(x), arg(y)
    dtype, weak = core.result_type(get_aval(x), get_aval(y))
    if inexact and not core.is_inexact(dtype):
        dtype, weak = np.dtype(np.float64), weak
    if real and dtype.kind == "c":
        raise TypeError(f"{name}: complex operands are not supported (nor by NumPy), got "
                        f"{dtype.name}")
    return [v if dtype_of(v) == dtype else lax.convert_element_type(v, dtype, weak)
            for v in (x, y)]


def _real_inexact(name: str, x):
    x = promote_inexact(x)
    if dtype_of(x).kind == "c":
        raise TypeError(f"{name}: complex input is not supported (nor by NumPy), got "
                        f"{dtype_of(x).name}")
    return x


def _copysign_zero(x):
    """A zero with the sign of ``x`` (no derivative), in ``x``'s dtype."""
    zero = full_like(x, 0)
    return lax.select(elementwise_primitives.signbit(x), lax.neg(zero), zero)


# -- roots, norms, signs --------------------------------------------------------------------


def cbrt(x):
    """Elementwise real cube root (negative for negative ``x``).

    >>> import functrans.numpy as fnp
    >>> fnp.cbrt(fnp.asarray([-8.0, 27.0]))
    array([-2.,  3.])
    """
    return lax.cbrt(_real_inexact("cbrt", x))


def hypot(x1, x2):
    """Elementwise ``sqrt(x1**2 + x2**2)`` without overflow or underflow.

    The larger magnitude is factored out; at ``|x1| == |x2|`` one factorisation is used on
    both sides, so derivatives of every order are right there, and at ``(0, 0)`` the
    derivative is the zero subgradient.

    >>> import math, functrans as ft, functrans.numpy as fnp
    >>> math.isclose(fnp.hypot(3e200, 4e200), 5e200), float(fnp.hypot(3e-200, 4e-200)) > 0
    (True, True)
    >>> float(ft.grad(lambda x: fnp.hypot(x, 0.0))(0.0))
    0.0
    """
    x1, x2 = _common("hypot", x1, x2, inexact=True, real=True)
    a1, a2 = lax.abs(x1), lax.abs(x2)
    first = lax.ge(a1, a2)
    big, small = lax.select(first, a1, a2), lax.select(first, a2, a1)
    zero = lax.eq(big, 0)
    ratio = lax.div(small, lax.select(zero, 1, big))
    out = lax.select(zero, 0, lax.mul(big, lax.sqrt(lax.add(1, lax.mul(ratio, ratio)))))
    return lax.select(lax.bitwise_or(isinf(x1), isinf(x2)), inf, out)


def signbit(x):
    """Whether the sign bit is set: true for negative numbers, ``-0.0`` and ``-nan``.

    >>> import functrans.numpy as fnp
    >>> fnp.signbit(fnp.asarray([-1.0, -0.0, 0.0, 2.0]))
    array([ True,  True, False, False])
    """
    x = arg(x)
    kind = dtype_of(x).kind
    if kind == "b" or kind == "u":
        return full_like(x, False, dtype=np.bool_)
    if kind == "i":
        return lax.lt(x, 0)
    if kind == "c":
        raise TypeError(f"signbit: complex input is not supported (nor by NumPy), got "
                        f"{dtype_of(x).name}")
    return elementwise_primitives.signbit(x)


def copysign(x1, x2):
    """``x1`` with the sign (bit) of ``x2``; derivative ``±1`` in ``x1`` and ``0`` in ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.copysign(fnp.asarray([1.0, -2.0]), -0.0)
    array([-1., -2.])
    """
    x1, x2 = _common("copysign", x1, x2, inexact=True, real=True)
    flip = lax.ne(elementwise_primitives.signbit(x1), elementwise_primitives.signbit(x2))
    return lax.select(flip, lax.neg(x1), x1)


def fabs(x):
    """Elementwise absolute value of real numbers, as float (integers are promoted).

    >>> import functrans.numpy as fnp
    >>> fnp.fabs(fnp.asarray([-2, 3]))
    array([2., 3.])
    """
    return lax.abs(_real_inexact("fabs", x))


def heaviside(x1, x2):
    """The step function: 0 for ``x1 < 0``, ``x2`` at ``x1 == 0``, 1 for ``x1 > 0`` (nan
    for nan).  The derivative is 0 in ``x1``, and 1 in ``x2`` where ``x1 == 0``.

    >>> import functrans.numpy as fnp
    >>> fnp.heaviside(fnp.asarray([-1.0, 0.0, 2.0]), 0.5)
    array([0. , 0.5, 1. ])
    """
    x1, x2 = _common("heaviside", x1, x2, inexact=True, real=True)
    out = lax.select(lax.lt(x1, 0), 0, lax.select(lax.gt(x1, 0), 1, x2))
    return lax.select(lax.ne(x1, x1), x1, out)


def sinc(x):
    """The normalised sinc ``sin(pi x) / (pi x)``, 1 at 0.

    At 0 the value and derivatives come from the Taylor polynomial
    ``1 - (pi x)**2 / 6 + (pi x)**4 / 120``, so ``sinc'(0) = 0`` and ``sinc''(0) = -pi**2 / 3``
    exactly, with no nan.

    >>> import math, functrans as ft, functrans.numpy as fnp
    >>> math.isclose(ft.grad(ft.grad(fnp.sinc))(0.0), -math.pi ** 2 / 3)
    True
    """
    x = promote_inexact(x)
    y = lax.mul(x, pi)
    zero = lax.eq(x, 0)
    safe = lax.select(zero, 1, y)
    y2 = lax.mul(y, y)
    series = lax.add(lax.sub(1, lax.div(y2, 6)), lax.div(lax.mul(y2, y2), 120))
    return lax.select(zero, series, lax.div(lax.sin(safe), safe))


# -- maxima and minima that skip nan -------------------------------------------------------


def fmax(x1, x2):
    """Elementwise maximum that ignores nan (nan only where both are nan).  The derivative
    goes to the value picked (half to each at ties, as ``maximum``'s).

    >>> import functrans.numpy as fnp
    >>> fnp.fmax(fnp.asarray([1.0, fnp.nan, fnp.nan]), fnp.asarray([2.0, 0.0, fnp.nan]))
    array([ 2.,  0., nan])
    """
    x1, x2 = _common("fmax", x1, x2)
    return _skip_nan(lax.max(x1, x2), x1, x2)


def fmin(x1, x2):
    """Elementwise minimum that ignores nan (nan only where both are nan).

    >>> import functrans.numpy as fnp
    >>> fnp.fmin(fnp.asarray([1.0, fnp.nan, fnp.nan]), fnp.asarray([2.0, 0.0, fnp.nan]))
    array([ 1.,  0., nan])
    """
    x1, x2 = _common("fmin", x1, x2)
    return _skip_nan(lax.min(x1, x2), x1, x2)


def _skip_nan(out, x1, x2):
    if not core.is_inexact(dtype_of(out)):
        return out
    return lax.select(lax.ne(x2, x2), x1, lax.select(lax.ne(x1, x1), x2, out))


# -- division with remainders --------------------------------------------------------------


def fmod(x1, x2):
    """Elementwise remainder with the sign of ``x1`` (C's fmod): ``x1 - trunc(x1 / x2) x2``.
    Derivatives: 1 in ``x1``, ``-trunc(x1 / x2)`` in ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.fmod(fnp.asarray([7.0, -7.0]), 3.0)
    array([ 1., -1.])
    """
    return lax.rem(*_common("fmod", x1, x2, real=True))


def mod(x1, x2):
    """Elementwise remainder with the sign of ``x2`` (Python's ``%``): ``x1 - floor(x1 / x2)
    x2``.  Derivatives: 1 in ``x1``, ``-floor(x1 / x2)`` in ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.mod(fnp.asarray([-7.5, 7.5]), 2.0)
    array([0.5, 1.5])
    """
    x1, x2 = _common("mod", x1, x2, real=True)
    r = lax.rem(x1, x2)
    wrong_side = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(x2, 0)))
    out = lax.select(wrong_side, lax.add(r, x2), r)
    if core.is_inexact(dtype_of(out)):  # a zero remainder takes the sign of x2, as NumPy's
        out = lax.select(lax.eq(r, 0), _copysign_zero(lax.mul(x2, full_like(r, 1))), out)
    return out


remainder = alias(mod, "remainder")


def floor_divide(x1, x2):
    """Elementwise ``floor(x1 / x2)`` (Python's ``//``), computed as NumPy does (from the
    remainder, so ``1.0 // 0.1 == 9.0``); piecewise constant, so its derivative is 0.
    With one infinite operand the result is ``floor(x1 / x2)`` as the array API standard
    prefers (``inf // 2`` is ``inf``, ``1 // -inf`` is ``-0``), where NumPy follows Python
    (``nan``, ``-1``).

    >>> import functrans.numpy as fnp
    >>> fnp.floor_divide(fnp.asarray([7, -7]), 2), float(fnp.floor_divide(1.0, 0.1))
    (array([ 3, -4]), 9.0)
    """
    x1, x2 = _common("floor_divide", x1, x2, real=True)
    if dtype_of(x1) == np.bool_:
        x1, x2 = (lax.convert_element_type(v, np.int8) for v in (x1, x2))
    r = lax.rem(x1, x2)
    wrong_side = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(x2, 0)))
    if not core.is_inexact(dtype_of(x1)):
        return lax.sub(lax.div(x1, x2), lax.convert_element_type(wrong_side, dtype_of(x1)))
    x1, x2, r = lax.stop_gradient(x1), lax.stop_gradient(x2), lax.stop_gradient(r)
    quotient = lax.div(lax.sub(x1, r), x2)  # an integer up to rounding
    quotient = lax.select(wrong_side, lax.sub(quotient, 1), quotient)
    out = lax.floor(quotient)
    out = lax.select(lax.gt(lax.sub(quotient, out), 0.5), lax.add(out, 1), out)
    out = lax.select(lax.eq(quotient, 0), _copysign_zero(lax.div(x1, x2)), out)
    one_infinite = lax.ne(lax.is_finite(x1), lax.is_finite(x2))  # or a NaN: NaN either way
    return lax.select(lax.bitwise_or(lax.eq(x2, 0), one_infinite), lax.div(x1, x2), out)


def divmod(x1, x2):  # noqa: A001 (NumPy's name)
    """``(floor_divide(x1, x2), mod(x1, x2))``.

    >>> import functrans.numpy as fnp
    >>> fnp.divmod(fnp.asarray([7, -7]), 3)
    (array([ 2, -3]), array([1, 2]))
    """
    return floor_divide(x1, x2), mod(x1, x2)


def trunc(x):
    """Elementwise rounding towards zero; integers and booleans come back unchanged.

    >>> import functrans.numpy as fnp
    >>> fnp.trunc(fnp.asarray([-1.7, 1.7]))
    array([-1.,  1.])
    """
    x = arg(x)
    if dtype_of(x).kind in "biu":
        return x
    if dtype_of(x).kind == "c":
        raise TypeError("trunc: complex input is not supported (nor by NumPy)")
    return lax.select(lax.lt(x, 0), lax.ceil(x), lax.floor(x))


fix = alias(trunc, "fix")


def rint(x):
    """Elementwise rounding to the nearest integer, ties to even; integers become float.

    >>> import functrans.numpy as fnp
    >>> fnp.rint(fnp.asarray([0.5, 1.5, -2.7]))
    array([ 0.,  2., -3.])
    """
    x = arg(x)
    if dtype_of(x).kind in "iu":
        x = promote_inexact(x)
    return round(x)


def modf(x):
    """``(x - trunc(x), trunc(x))``: fractional and integral parts, both with the sign of
    ``x`` (the fractional part of ``±inf`` is ``±0``).  Derivatives 1 and 0.

    >>> import functrans.numpy as fnp
    >>> fnp.modf(fnp.asarray([2.5, -1.25]))
    (array([ 0.5 , -0.25]), array([ 2., -1.]))
    """
    x = _real_inexact("modf", x)
    whole = trunc(x)
    frac = lax.select(isinf(x), _copysign_zero(x), lax.sub(x, whole))
    return frac, whole


# -- floating-point representation ---------------------------------------------------------


def ldexp(x1, x2):
    """``x1 * 2**x2`` for integer ``x2``, exact wherever the result is representable.

    >>> import functrans.numpy as fnp
    >>> fnp.ldexp(fnp.asarray([1.0, 3.0]), fnp.asarray([-1, 4]))
    array([ 0.5, 48. ])
    """
    x1, x2 = _real_inexact("ldexp", x1), arg(x2)
    if dtype_of(x2).kind not in "iu":
        raise TypeError(f"ldexp: the exponent x2 must be an integer, got {dtype_of(x2).name}")
    return elementwise_primitives.ldexp(x1, x2)


def frexp(x):
    """``(m, e)`` with ``x = m * 2**e``, ``0.5 <= |m| < 1`` (``m = x``, ``e = 0`` for zero and
    non-finite ``x``); ``e`` is int32.  The derivative of ``m`` is ``2**-e``.

    >>> import functrans.numpy as fnp
    >>> fnp.frexp(fnp.asarray([8.0, -3.0]))
    (array([ 0.5 , -0.75]), array([4, 2], dtype=int32))
    """
    x = _real_inexact("frexp", x)
    exponent = elementwise_primitives.frexp_exponent(x)
    return elementwise_primitives.ldexp(x, lax.neg(exponent)), exponent


def nextafter(x1, x2):
    """The next representable value after ``x1`` towards ``x2``; derivative 1 in ``x1``.

    >>> import functrans.numpy as fnp
    >>> fnp.nextafter(1.0, 2.0) - 1.0
    2.220446049250313e-16
    """
    return lax.nextafter(*_common("nextafter", x1, x2, inexact=True, real=True))


def spacing(x):
    """The distance from ``x`` to the next representable value away from zero (negative
    for negative ``x``); derivative 0.

    >>> import functrans.numpy as fnp
    >>> fnp.spacing(fnp.asarray([1.0, -1.0]))
    array([ 2.22044605e-16, -2.22044605e-16])
    """
    x = _real_inexact("spacing", x)
    away = full_like(x, inf)
    away = lax.select(elementwise_primitives.signbit(x), lax.neg(away), away)
    return lax.sub(lax.nextafter(x, away), x)


# -- more powers, logarithms and angles ----------------------------------------------------


def float_power(x1, x2):
    """``x1 ** x2`` computed in float64 (complex128 for complex operands), as NumPy does.

    >>> import functrans.numpy as fnp
    >>> fnp.float_power(fnp.asarray([2, 3]), 2)
    array([4., 9.])
    """
    x1, x2 = arg(x1), arg(x2)
    dtype = np.result_type(dtype_of(x1), dtype_of(x2), np.float64)
    return lax.pow(lax.convert_element_type(x1, dtype), lax.convert_element_type(x2, dtype))


def logaddexp2(x1, x2):
    """Elementwise ``log2(2**x1 + 2**x2)`` without overflow (see ``logaddexp``).

    >>> import functrans.numpy as fnp
    >>> fnp.logaddexp2(fnp.asarray([1.0, 1000.0]), fnp.asarray([1.0, 1000.0]))
    array([   2., 1001.])
    """
    ln2 = math.log(2)
    x1, x2 = promote_inexact(x1), promote_inexact(x2)
    return lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2)


def logical_xor(x1, x2):
    """Elementwise exclusive or of the truth values of ``x1`` and ``x2``.

    >>> import functrans.numpy as fnp
    >>> fnp.logical_xor(fnp.asarray([True, True, False]), fnp.asarray([1, 0, 0]))
    array([False,  True, False])
    """
    return lax.ne(as_bool(x1), as_bool(x2))


def deg2rad(x):
    """Degrees to radians.

    >>> import functrans.numpy as fnp
    >>> fnp.deg2rad(fnp.asarray([90.0, 180.0]))
    array([1.57079633, 3.14159265])
    """
    return lax.mul(promote_inexact(x), pi / 180)


def rad2deg(x):
    """Radians to degrees.

    >>> import functrans.numpy as fnp
    >>> fnp.rad2deg(fnp.asarray([fnp.pi / 2, fnp.pi]))
    array([ 90., 180.])
    """
    return lax.mul(promote_inexact(x), 180 / pi)


radians = alias(deg2rad, "radians")
degrees = alias(rad2deg, "degrees")


def angle(z, deg: bool = False):
    """The argument (phase) of complex ``z``, in radians or, with ``deg``, degrees; 0 or pi
    for real ``z``.

    >>> import functrans.numpy as fnp
    >>> fnp.angle(fnp.asarray([1j, -1.0]), deg=True)
    array([ 90., 180.])
    """
    z = promote_inexact(z)
    if dtype_of(z).kind == "c":
        out = lax.atan2(lax.imag(z), lax.real(z))
    else:
        out = lax.atan2(full_like(z, 0), z)  # +0: pi for negative z, as NumPy
    return lax.mul(out, 180 / pi) if deg else out


def i0(x):
    """The modified Bessel function of the first kind of order 0 (real input); its derivative
    is ``I1``, computed from its series (``|x| <= 30``) or its asymptotic expansion.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> float(fnp.i0(0.0)), round(float(ft.grad(fnp.i0)(1.0)), 12)
    (1.0, 0.565159103992)
    """
    return elementwise_primitives.bessel_i0(_real_inexact("i0", x))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None):
    """``x`` with nan, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (by
    default 0 and the largest finite values of the dtype).  Gradients pass where ``x`` is
    finite only.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> x = fnp.asarray([1.0, fnp.nan, -fnp.inf])
    >>> fnp.nan_to_num(x, neginf=-1.0), ft.grad(lambda x: fnp.nan_to_num(x).sum())(x)
    (array([ 1.,  0., -1.]), array([1., 0., 0.]))
    """
    del copy  # functrans never writes into its inputs
    x = arg(x)
    dtype = dtype_of(x)
    if not core.is_inexact(dtype):
        return x
    if dtype.kind == "c":
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    big = float(np.finfo(dtype).max)
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = lax.select(lax.eq(x, math.inf), posinf, lax.select(lax.eq(x, -math.inf), neginf, x))
    return lax.select(lax.ne(x, x), nan, out)


# -- predicates -----------------------------------------------------------------------------


def isinf(x):
    """Elementwise test for +inf or -inf (in either part, for complex).

    >>> import functrans.numpy as fnp
    >>> fnp.isinf(fnp.asarray([1.0, fnp.inf, -fnp.inf, fnp.nan]))
    array([False,  True,  True, False])
    """
    x = arg(x)
    if not core.is_inexact(dtype_of(x)):
        return full_like(x, False, dtype=np.bool_)
    return lax.eq(lax.abs(x), math.inf)


def isposinf(x):
    """Elementwise test for +inf.

    >>> import functrans.numpy as fnp
    >>> fnp.isposinf(fnp.asarray([1.0, fnp.inf, -fnp.inf]))
    array([False,  True, False])
    """
    return _signed_inf("isposinf", x, math.inf)


def isneginf(x):
    """Elementwise test for -inf.

    >>> import functrans.numpy as fnp
    >>> fnp.isneginf(fnp.asarray([1.0, fnp.inf, -fnp.inf]))
    array([False, False,  True])
    """
    return _signed_inf("isneginf", x, -math.inf)


def _signed_inf(name: str, x, value: float):
    x = arg(x)
    if dtype_of(x).kind == "c":
        raise TypeError(f"{name}: complex input is not supported (nor by NumPy)")
    if not core.is_inexact(dtype_of(x)):
        return full_like(x, False, dtype=np.bool_)
    return lax.eq(x, value)


def isreal(x):
    """Elementwise test for a zero imaginary part (always true for real dtypes).

    >>> import functrans.numpy as fnp
    >>> fnp.isreal(fnp.asarray([1 + 0j, 1 + 2j]))
    array([ True, False])
    """
    x = arg(x)
    if dtype_of(x).kind != "c":
        return full_like(x, True, dtype=np.bool_)
    return lax.eq(lax.imag(x), 0)


def iscomplex(x):
    """Elementwise test for a nonzero imaginary part (always false for real dtypes).

    >>> import functrans.numpy as fnp
    >>> fnp.iscomplex(fnp.asarray([1 + 0j, 1 + 2j]))
    array([False,  True])
    """
    x = arg(x)
    if dtype_of(x).kind != "c":
        return full_like(x, False, dtype=np.bool_)
    return lax.ne(lax.imag(x), 0)


def isrealobj(x) -> builtins.bool:
    """Whether ``x``'s dtype is not complex (a Python bool, decided by the dtype only).

    >>> import functrans.numpy as fnp
    >>> fnp.isrealobj(fnp.asarray([1.0, 2.0])), fnp.isrealobj(fnp.asarray([1 + 0j]))
    (True, False)
    """
    return not iscomplexobj(x)


def isscalar(element) -> builtins.bool:
    """Whether ``element`` is a scalar: a Python or NumPy number, or a zero-dimensional array
    or tracer (as ``jax.numpy.isscalar`` decides, unlike NumPy for 0-d arrays).

    >>> import functrans.numpy as fnp
    >>> fnp.isscalar(3.0), fnp.isscalar(fnp.asarray([3.0]))
    (True, False)
    """
    if isinstance(element, (list, tuple, str, bytes)):
        return False
    try:
        return get_aval(element).ndim == 0
    except TypeError:
        return False


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Elementwise ``|a - b| <= atol + rtol |b|``; infinities are close only to themselves,
    nan to nothing (to nan too with ``equal_nan``).

    >>> import functrans.numpy as fnp
    >>> fnp.isclose(fnp.asarray([1.0, fnp.inf, fnp.nan]), [1.0 + 1e-9, fnp.inf, fnp.nan])
    array([ True,  True, False])
    """
    a, b = _common("isclose", a, b, inexact=True)
    finite = lax.bitwise_and(isfinite(a), isfinite(b))
    near = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = lax.select(finite, near, lax.eq(a, b))
    if equal_nan:
        out = lax.bitwise_or(out, lax.bitwise_and(isnan(a), isnan(b)))
    return out


def _all_true(x):
    """A boolean scalar: whether every element of the boolean ``x`` is true."""
    misses = lax.convert_element_type(lax.bitwise_not(x), np.int64)
    return lax.eq(lax.reduce_sum(misses, tuple(range(len(shape_of(x))))), 0)


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether ``isclose`` holds everywhere (a boolean scalar array).

    >>> import functrans.numpy as fnp
    >>> fnp.allclose(fnp.asarray([1.0, 2.0]), fnp.asarray([1.0, 2.0 + 1e-9]))
    array(True)
    """
    return _all_true(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether ``a1`` and ``a2`` have one shape and equal elements (a boolean scalar array;
    ``equal_nan`` counts nan as equal to nan).

    >>> import functrans.numpy as fnp
    >>> fnp.array_equal(fnp.asarray([1, 2]), fnp.asarray([1, 2]))
    array(True)
    >>> fnp.array_equal(fnp.asarray([1, 2]), fnp.asarray([[1, 2]]))
    array(False)
    """
    a1, a2 = arg(a1), arg(a2)
    if shape_of(a1) != shape_of(a2):
        return np.asarray(False)
    same = lax.eq(a1, a2)
    if equal_nan:
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(a1), isnan(a2)))
    return _all_true(same)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` broadcast together and are equal elementwise.

    >>> import functrans.numpy as fnp
    >>> fnp.array_equiv(fnp.asarray([1, 2]), fnp.asarray([[1, 2], [1, 2]]))
    array(True)
    """
    a1, a2 = arg(a1), arg(a2)
    try:
        np.broadcast_shapes(shape_of(a1), shape_of(a2))
    except ValueError:
        return np.asarray(False)
    return _all_true(lax.eq(a1, a2))


# -- integers and bits (no derivatives) ----------------------------------------------------


def _integers(name: str, *operands, booleans: bool = True):
    xs = [arg(x) for x in operands]
    for x in xs:
        kinds = "biu" if booleans else "iu"
        if dtype_of(x).kind not in kinds:
            raise TypeError(f"{name}: needs integer{' or boolean' if booleans else ''} "
                            f"operands, got {dtype_of(x).name}")
    return xs


def bitwise_and(x1, x2):
    """Elementwise bitwise and of integers (logical and of booleans).

    >>> import functrans.numpy as fnp
    >>> fnp.bitwise_and(fnp.asarray([12, 10]), fnp.asarray([10, 6]))
    array([8, 2])
    """
    return lax.bitwise_and(*_integers("bitwise_and", x1, x2))


def bitwise_or(x1, x2):
    """Elementwise bitwise or of integers (logical or of booleans).

    >>> import functrans.numpy as fnp
    >>> fnp.bitwise_or(fnp.asarray([12, 10]), fnp.asarray([10, 6]))
    array([14, 14])
    """
    return lax.bitwise_or(*_integers("bitwise_or", x1, x2))


def bitwise_xor(x1, x2):
    """Elementwise bitwise exclusive or of integers (logical xor of booleans).

    >>> import functrans.numpy as fnp
    >>> fnp.bitwise_xor(fnp.asarray([12, 10]), fnp.asarray([10, 6]))
    array([ 6, 12])
    """
    return lax.bitwise_xor(*_integers("bitwise_xor", x1, x2))


def invert(x):
    """Elementwise bitwise not: ``~x = -x - 1`` for signed integers; logical not of booleans.

    >>> import functrans.numpy as fnp
    >>> fnp.invert(fnp.asarray([0, 5])), fnp.invert(fnp.asarray([True, False]))
    (array([-1, -6]), array([False,  True]))
    """
    return lax.bitwise_not(*_integers("invert", x))


bitwise_not = alias(invert, "bitwise_not")
bitwise_invert = alias(invert, "bitwise_invert")


def left_shift(x1, x2):
    """Elementwise ``x1 << x2`` for integers (0 once ``x2`` reaches the bit width).

    >>> import functrans.numpy as fnp
    >>> fnp.left_shift(fnp.asarray([1, 3]), 2)
    array([ 4, 12])
    """
    return lax.shift_left(*_integers("left_shift", x1, x2, booleans=False))


def right_shift(x1, x2):
    """Elementwise ``x1 >> x2`` for integers, keeping the sign of signed ones.

    >>> import functrans.numpy as fnp
    >>> fnp.right_shift(fnp.asarray([-16, 16]), 2)
    array([-4,  4])
    """
    return lax.shift_right_arithmetic(*_integers("right_shift", x1, x2, booleans=False))


bitwise_left_shift = alias(left_shift, "bitwise_left_shift")
bitwise_right_shift = alias(right_shift, "bitwise_right_shift")


def bitwise_count(x):
    """The number of set bits of ``|x|``, as uint8 (NumPy's ``bitwise_count``).

    >>> import functrans.numpy as fnp
    >>> fnp.bitwise_count(fnp.asarray([-1, 7, 1023]))
    array([ 1,  3, 10], dtype=uint8)
    """
    (x,) = _integers("bitwise_count", x, booleans=False)
    if dtype_of(x).kind == "i":
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), np.uint8)


def gcd(x1, x2):
    """Elementwise greatest common divisor of integers (``gcd(0, 0) == 0``).

    >>> import functrans.numpy as fnp
    >>> fnp.gcd(fnp.asarray([12, 0, -9]), fnp.asarray([18, 0, 6]))
    array([6, 0, 3])
    """
    return elementwise_primitives.gcd(*_integers("gcd", x1, x2, booleans=False))


def lcm(x1, x2):
    """Elementwise least common multiple of integers (``lcm(0, x) == 0``).

    >>> import functrans.numpy as fnp
    >>> fnp.lcm(fnp.asarray([4, 0, -3]), fnp.asarray([6, 5, 2]))
    array([12,  0,  6])
    """
    return elementwise_primitives.lcm(*_integers("lcm", x1, x2, booleans=False))
