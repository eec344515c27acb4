"""Elementwise primitives: unary math, broadcasting binary arithmetic, comparisons, select.

Two factories register everything a family member needs:

* ``unary(name, impl, derivative)``: same-shape operation; batching applies it to the whole
  batch; the JVP multiplies by the derivative.
* ``binary(name, impl, derivatives)``: NumPy-broadcasting operation with NumPy's dtype
  promotion (Python scalars are weak).  Its JVP broadcasts each term to the output, its
  transpose (if linear) sums cotangents back over broadcast axes, and its batching rule
  aligns batch axes before broadcasting.
"""
from __future__ import annotations

import builtins
import enum
import math
from typing import Any, Callable

import numpy as np

from functrans import core
from functrans.backend import array_module, coerce, is_mutable
from functrans.array_types import Array
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, transpose
from functrans.interpreters.ad import Zero, add_any_p
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.partial_eval import JaxprTracer
from functrans.interpreters.transpose import UndefinedPrimal, is_undefined_primal
from functrans.naming import public
from functrans.primitives.conversion import convert_element_type, zeros_like
from functrans.primitives.shape import (bdim_to_front, broadcast_to, expand_dims, moveaxis,
                                        reduce_sum, reshape, shape_of)

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
           "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "ceil",
           "clz", "complex", "conj", "cos", "cosh", "div", "eq", "exp", "exp2", "expm1",
           "floor", "ge", "gt", "imag", "integer_pow", "is_finite", "le", "log", "log1p",
           "logistic", "lt", "max", "min", "mul", "mulhi", "ne", "neg", "nextafter",
           "population_count", "pow", "real", "reciprocal", "reduce_precision", "rem",
           "round", "RoundingMethod", "select",
           "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sin",
           "sinh", "sqrt", "square", "sub", "tan", "tanh"]

# The lax-level functions that the derivative rules below call; they are defined at the end
# of the module (declared here for type checkers, which cannot infer them before then).
neg: Callable[[Any], Any]
sin: Callable[[Any], Any]
cos: Callable[[Any], Any]
sinh: Callable[[Any], Any]
cosh: Callable[[Any], Any]
sqrt: Callable[[Any], Any]
real: Callable[[Any], Any]
imag: Callable[[Any], Any]
conj: Callable[[Any], Any]
add: Callable[[Any, Any], Any]
sub: Callable[[Any, Any], Any]
mul: Callable[[Any, Any], Any]
div: Callable[[Any, Any], Any]
pow: Callable[[Any, Any], Any]  # noqa: A001
lt: Callable[[Any, Any], Any]
gt: Callable[[Any, Any], Any]

# -- shared rules --------------------------------------------------------------------------


def _broadcast_shapes(name: str, avals) -> tuple:
    first = avals[0].shape
    if all(a.shape == first for a in avals):  # the common case, without NumPy's helper
        return first
    try:
        return np.broadcast_shapes(*[a.shape for a in avals])
    except ValueError:
        shapes = ", ".join(str(a.shape) for a in avals)
        raise ValueError(f"{name}: operand shapes {shapes} cannot be broadcast together"
                         ) from None


def match_tangent(t, ans):
    """Broadcast and convert the tangent term ``t`` to the type of the output ``ans``."""
    if type(ans) is np.ndarray and type(t) is JaxprTracer:  # linearize's common case
        aval = t.aval
        if aval.shape == ans.shape and aval.dtype == ans.dtype and ans.dtype.kind in "fc":
            return t
    aval, out = get_aval(t), get_aval(ans)
    if aval.shape == out.shape and aval.dtype == out.dtype and out.dtype.kind in "fc":
        return t  # the common case: nothing to convert
    if aval.shape != out.shape:
        t = broadcast_to(t, out.shape)
    dtype = core.tangent_dtype(out.dtype)
    if aval.dtype != dtype:
        t = convert_element_type(t, dtype, out.weak_type)
    return t


def unbroadcast(aval: ShapedArray, ct):
    """Sum the cotangent ``ct`` of a broadcast result back to an operand of type ``aval``."""
    t = type(ct)
    if (t is np.ndarray or t is Array) and ct.shape == aval.shape and (
            ct.dtype == aval.dtype and aval.dtype.kind in "fc"):
        return ct  # the common case in reverse mode, without an aval
    ct_aval = get_aval(ct)
    shape = ct_aval.shape
    if shape == aval.shape and ct_aval.dtype == aval.dtype and aval.dtype.kind in "fc":
        return ct  # the common case: nothing to sum or convert
    lead = len(shape) - aval.ndim
    axes = list(range(lead)) + [lead + i for i, n in enumerate(aval.shape)
                                if n == 1 and shape[lead + i] != 1]
    if axes:
        ct = reshape(reduce_sum(ct, axes), aval.shape)
    dtype = core.tangent_dtype(aval.dtype)
    if get_aval(ct).dtype != dtype:
        ct = convert_element_type(ct, dtype, aval.weak_type)
    return ct


_PY_SCALARS = core.python_scalar_types


def broadcasting_batcher(prim: Primitive) -> Callable:
    """Batching rule of an n-ary NumPy-broadcasting primitive."""
    def rule(vals, dims, **params):
        if len(vals) == 2:  # one operand batched, the other a Python scalar (x * 2.0)
            if dims[1] is not_mapped and type(vals[1]) in _PY_SCALARS:
                return prim.bind(*vals, **params), dims[0]
            if dims[0] is not_mapped and type(vals[0]) in _PY_SCALARS:
                return prim.bind(*vals, **params), dims[1]
            if dims[0] == dims[1] is not not_mapped and vals[0].ndim == vals[1].ndim:  # alike
                return prim.bind(*vals, **params), dims[0]
        shapes = [shape_of(v) for v in vals]
        ranks = [len(s) - (d is not not_mapped) for s, d in zip(shapes, dims)]
        out_rank = builtins.max(ranks)
        bd = next(d for d in dims if d is not not_mapped)
        # Common case: batch axes already agree and NumPy broadcasting lines the rest up.
        if all(r <= out_rank - bd if d is not_mapped else (d == bd and r == out_rank)
               for d, r in zip(dims, ranks)):
            return prim.bind(*vals, **params), bd
        aligned = []
        for v, d, r in zip(vals, dims, ranks):
            if d is not not_mapped:
                v = moveaxis(v, d, 0)
                if r < out_rank:
                    v = expand_dims(v, tuple(range(1, 1 + out_rank - r)))
            aligned.append(v)
        return prim.bind(*aligned, **params), 0
    return rule


# -- unary family --------------------------------------------------------------------------


def _require_inexact(name: str, aval: ShapedArray) -> None:
    if not core.is_inexact(aval.dtype):
        raise TypeError(f"{name} requires a floating-point or complex operand, got "
                        f"{aval.dtype.name}; convert it first (functrans.numpy does this)")


def _require_real_floating(name: str, aval: ShapedArray) -> None:
    if aval.dtype.kind != "f":
        raise TypeError(f"{name} requires a real floating-point operand, got "
                        f"{aval.dtype.name}")


def unary(name: str, impl: Callable, derivative: Callable | None, *,
          inexact_only: bool = True, real_only: bool = False,
          out_dtype: Callable | None = None,
          abstract_eval: Callable | None = None) -> Primitive:
    """A unary elementwise primitive.  ``derivative(g, ans, x, **params)`` is the tangent
    map (``None``: zero derivative); ``out_dtype(dtype)`` maps the input dtype;
    ``real_only`` refuses complex (and integer) operands; ``abstract_eval`` replaces the
    default type rule."""
    prim = Primitive(name, origin="library")

    def default_abstract_eval(aval, **params):
        if real_only:
            _require_real_floating(name, aval)
        elif inexact_only:
            _require_inexact(name, aval)
        if out_dtype is None:
            return aval
        return ShapedArray(aval.shape, out_dtype(aval.dtype), aval.weak_type)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval or default_abstract_eval
    if derivative is None:
        ad.defjvp_zero(prim)
    else:
        ad.defjvp(prim, derivative)
    batching.defvectorized(prim)
    codegen.deflowering(prim, rows=codegen.rows_elementwise)
    ufunc = getattr(impl, "ufunc_name", None)
    if ufunc is not None:
        codegen.deflowering(prim, lambda ctx, x: f"{ctx.xp}.{ufunc}({x})", ufunc=ufunc,
                            kernel=_UNARY_KERNELS.get(ufunc))
    return prim


#: scalar code for fused loops (codegen's "Fusion") giving NumPy's values: the ufuncs on
#: floating point that numba computes with the same libm calls (or exactly)
_UNARY_KERNELS = {
    **{name: codegen.scalar_kernel(f"np.{name}({{}})") for name in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt", "sin",
        "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
        "arccosh", "arctanh", "floor", "ceil")},
    "absolute": codegen.scalar_kernel("np.abs({})"),
    "negative": codegen.scalar_kernel("(-{})", "iuf"),
    "isfinite": codegen.scalar_kernel("np.isfinite({})"),
    "invert": codegen.scalar_kernel("(not {})", "b"),
}


def _np_unary(ufunc_name: str) -> Callable:
    ufunc = getattr(np, ufunc_name)

    def impl(x):
        if type(x) is np.ndarray:  # the hot path: no module lookup
            return ufunc(x)
        return getattr(array_module(x), ufunc_name)(x)
    impl.__name__ = impl.ufunc_name = ufunc_name  # type: ignore[attr-defined]  # read by jit
    return impl


neg_p = unary("neg", _np_unary("negative"), lambda g, ans, x: neg(g), inexact_only=False)
exp_p = unary("exp", _np_unary("exp"), lambda g, ans, x: mul(g, ans))
log_p = unary("log", _np_unary("log"), lambda g, ans, x: div(g, x))
sin_p = unary("sin", _np_unary("sin"), lambda g, ans, x: mul(g, cos(x)))
cos_p = unary("cos", _np_unary("cos"), lambda g, ans, x: neg(mul(g, sin(x))))
tan_p = unary("tan", _np_unary("tan"), lambda g, ans, x: mul(g, add(1, mul(ans, ans))))
tanh_p = unary("tanh", _np_unary("tanh"), lambda g, ans, x: mul(g, sub(1, mul(ans, ans))))
sinh_p = unary("sinh", _np_unary("sinh"), lambda g, ans, x: mul(g, cosh(x)))
cosh_p = unary("cosh", _np_unary("cosh"), lambda g, ans, x: mul(g, sinh(x)))
sqrt_p = unary("sqrt", _np_unary("sqrt"), lambda g, ans, x: div(g, mul(2, ans)))
log1p_p = unary("log1p", _np_unary("log1p"), lambda g, ans, x: div(g, add(1, x)))
expm1_p = unary("expm1", _np_unary("expm1"), lambda g, ans, x: mul(g, add(ans, 1)))
# Base 2 and 10 as NumPy computes them (log10(1000) is 3.0, not log(1000) / log(10)).
exp2_p = unary("exp2", _np_unary("exp2"), lambda g, ans, x: mul(g, mul(ans, math.log(2))))
log2_p = unary("log2", _np_unary("log2"), lambda g, ans, x: div(g, mul(x, math.log(2))))
log10_p = unary("log10", _np_unary("log10"), lambda g, ans, x: div(g, mul(x, math.log(10))))
atan_p = unary("atan", _np_unary("arctan"), lambda g, ans, x: div(g, add(1, mul(x, x))))
asin_p = unary("asin", _np_unary("arcsin"),
               lambda g, ans, x: div(g, sqrt(sub(1, mul(x, x)))))
acos_p = unary("acos", _np_unary("arccos"),
               lambda g, ans, x: neg(div(g, sqrt(sub(1, mul(x, x))))))
asinh_p = unary("asinh", _np_unary("arcsinh"),
                lambda g, ans, x: div(g, sqrt(add(mul(x, x), 1))))
# sqrt(x - 1) sqrt(x + 1) rather than sqrt(x² - 1): the principal branch for complex x too.
acosh_p = unary("acosh", _np_unary("arccosh"),
                lambda g, ans, x: div(g, mul(sqrt(sub(x, 1)), sqrt(add(x, 1)))))
atanh_p = unary("atanh", _np_unary("arctanh"), lambda g, ans, x: div(g, sub(1, mul(x, x))))
cbrt_p = unary("cbrt", _np_unary("cbrt"), lambda g, ans, x: div(g, mul(3, mul(ans, ans))),
               real_only=True)
def _logistic_derivative(g, ans, x):
    return mul(g, mul(ans, logistic_p.bind(neg(x))))  # not ans (1 - ans): 0 for x > 37


logistic_p = unary("logistic", lambda x: _logistic_impl(x), _logistic_derivative)
sign_p = unary("sign", _np_unary("sign"), None, inexact_only=False)
# Piecewise constant: the derivative is zero wherever it exists.
floor_p = unary("floor", _np_unary("floor"), None, real_only=True)
ceil_p = unary("ceil", _np_unary("ceil"), None, real_only=True)
is_finite_p = unary("is_finite", _np_unary("isfinite"), None, real_only=True,
                    out_dtype=lambda d: np.dtype(np.bool_))


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties (``x.5``), with ``jax.lax.RoundingMethod``'s values."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1

    def __repr__(self) -> str:  # as jaxprs print it
        return self.name


def _round_impl(x, *, rounding_method):
    xp = array_module(x)
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return xp.rint(x)
    whole = xp.trunc(x)  # x - trunc(x) is exact, so the tie test is too
    with np.errstate(invalid="ignore"):  # inf - inf: nan, which is not >= 0.5
        return xp.where(xp.abs(x - whole) >= 0.5, whole + xp.sign(x), whole)


round_p = unary("round", _round_impl, None, real_only=True)


def _logistic_impl(x):
    # 1 / (1 + exp(-x)): a few ulp relative to the result in both tails (0.5 (1 + tanh(x/2))
    # cancels for x < 0: ~150 ulp at x = -5, 0 at -40); exp(-x) overflows to inf only where
    # the result is below the smallest normal number (0 then).  In place in the one buffer
    # allocated here (measured: a third of the time for small arrays).  Complex x: tanh.
    xp = array_module(x)
    if np.iscomplexobj(x):
        return 0.5 * (1 + xp.tanh(x * 0.5))
    with np.errstate(over="ignore"):
        t = xp.negative(x)
        if not is_mutable(t):  # a scalar (nothing to write into) or a lazy graph
            return 1 / (1 + xp.exp(t))
        xp.exp(t, out=t)
    t += 1
    return xp.reciprocal(t, out=t)


def _abs_derivative(g, ans, x):
    if get_aval(x).dtype.kind == "c":
        safe = select(eq(ans, 0), 1, ans)
        return real(mul(g, div(conj(x), convert_element_type(safe, get_aval(x).dtype))))
    return mul(g, sign(x))  # sign(0) = 0: the symmetric subgradient at the kink


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.empty((), dtype).real.dtype


abs_p = unary("abs", _np_unary("abs"), _abs_derivative, inexact_only=False,
              out_dtype=_real_dtype)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


real_p = unary("real", _np_unary("real"), lambda g, ans, x: real(g), inexact_only=False,
               out_dtype=_real_dtype)
imag_p = unary("imag", _np_unary("imag"), lambda g, ans, x: imag(g), inexact_only=False,
               out_dtype=_real_dtype)
conj_p = unary("conj", _np_unary("conj"), lambda g, ans, x: conj(g), inexact_only=False)


def _to_complex(ct, aval):
    return convert_element_type(ct, core.tangent_dtype(aval.dtype), aval.weak_type)


transpose.deftranspose(neg_p, lambda ct, x: [neg(ct)])
transpose.deftranspose(real_p, lambda ct, x: [_to_complex(ct, x.aval)])
transpose.deftranspose(imag_p, lambda ct, x: [mul(_to_complex(ct, x.aval), -1j)
                                           if x.aval.dtype.kind == "c" else None])
transpose.deftranspose(conj_p, lambda ct, x: [conj(ct)])

# -- integer_pow ---------------------------------------------------------------------------


def _integer_pow_derivative(g, ans, x, *, y):
    if y == 0:
        return mul(g, 0)
    return mul(g, mul(y, integer_pow(x, y - 1)))


def _integer_pow_impl(x, *, y):
    # the square and the reciprocal as the correctly rounded x * x and 1 / x, as the
    # generated code and the fused loops compute them (NumPy's power takes these paths
    # only from some versions on: NumPy 2.0's float64 power(x, -1) can be off by an ulp)
    xp = array_module(x)
    if y == 2:
        return xp.multiply(x, x)
    if y == -1 and xp.asarray(x).dtype.kind in "fc":
        return xp.reciprocal(x)
    return xp.power(x, y)


integer_pow_p = unary("integer_pow", _integer_pow_impl, _integer_pow_derivative,
                      inexact_only=False)


def integer_pow(x, y: int):
    """``x ** y`` for a static Python integer ``y``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.integer_pow(np.array([2.0, -3.0]), 3)
    array([  8., -27.])
    """
    y = int(y)
    if y == 1:
        return x
    return integer_pow_p.bind(x, y=y)


# -- binary family -------------------------------------------------------------------------


def binary(name: str, impl: Callable, derivatives, *, out_dtype=None,
           transpose_rule=None, inexact_only=False, real_only=False,
           abstract_eval: Callable | None = None) -> Primitive:
    """A NumPy-broadcasting binary primitive (see the module docstring).  ``abstract_eval``
    replaces the default type rule (broadcast shapes, NumPy promotion, ``out_dtype``)."""
    prim = Primitive(name, origin="library")

    # Type rule results by operand types: the same few types recur in every program.
    cache: dict = {}

    def default_abstract_eval(x, y):
        key = (x.shape, x.dtype, x.weak_type, y.shape, y.dtype, y.weak_type)
        out = cache.get(key)
        if out is None:
            out = compute_abstract_eval(x, y)
            if len(cache) < 256:  # bounded: programs with many shapes compute as before
                cache[key] = out
        return out

    def compute_abstract_eval(x, y):
        shape = _broadcast_shapes(name, (x, y))
        dtype, weak = core.result_type(x, y)
        if real_only:
            _require_real_floating(name, ShapedArray((), dtype))
        elif inexact_only:
            _require_inexact(name, ShapedArray((), dtype))
        if out_dtype is not None:
            dtype, weak = out_dtype, False
        return ShapedArray(shape, dtype, weak)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval or default_abstract_eval
    if derivatives is None:
        ad.defjvp_zero(prim)
    else:
        ad.defjvp(prim, *[None if d is None else
                          (lambda d: lambda g, ans, x, y: match_tangent(d(g, ans, x, y), ans))(d)
                          for d in derivatives])
    if transpose_rule is not None:
        transpose.deftranspose(prim, transpose_rule)
    batching.batching_rules[prim] = broadcasting_batcher(prim)
    ufunc = getattr(impl, "ufunc_name", None)
    codegen.deflowering(prim, broadcasting=True, ufunc=ufunc, rows=codegen.rows_elementwise,
                        kernel=_BINARY_KERNELS.get(ufunc) if ufunc else None)
    if ufunc in _OPERATORS:
        operator = _OPERATORS[ufunc]
        codegen.deflowering(prim, lambda ctx, x, y: f"({x} {operator} {y})",
                            augmented=operator + "=")
    elif ufunc is not None:
        codegen.deflowering(prim, lambda ctx, x, y: f"{ctx.xp}.{ufunc}({x}, {y})")
    return prim


def nary(name: str, impl: Callable, derivatives, *, real_only: bool = True) -> Primitive:
    """A primitive of any number of NumPy-broadcast operands (three or four: ``betainc``,
    ``hyp2f1``), ``binary``'s rules for more operands: broadcast shapes and NumPy
    promotion (real floating point with ``real_only``), ``derivatives[i](g, ans, *operands,
    **params)`` the tangent contribution of operand ``i`` (``None``: not differentiable),
    and the broadcasting batching rule."""
    prim = Primitive(name, origin="library")

    def abstract_eval(*avals, **params):
        shape = _broadcast_shapes(name, avals)
        dtype, weak = core.result_type(*avals)
        if real_only:
            _require_real_floating(name, ShapedArray((), dtype))
        return ShapedArray(shape, dtype, weak)

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract_eval
    ad.defjvp(prim, *[None if d is None else
                      (lambda d: lambda g, ans, *xs, **params:
                       match_tangent(d(g, ans, *xs, **params), ans))(d)
                      for d in derivatives])
    batching.batching_rules[prim] = broadcasting_batcher(prim)
    codegen.deflowering(prim, broadcasting=True, rows=codegen.rows_elementwise)
    return prim


#: operand types that NumPy's ufuncs take as they are, beside an ndarray
_PLAIN_SCALARS = frozenset({float, int, builtins.complex, bool})  # lax.complex shadows it

#: scalar code for fused loops (see _UNARY_KERNELS); integers wrap around as NumPy's do
_BINARY_KERNELS = {
    "add": codegen.scalar_kernel("({} + {})", "iuf"),
    "subtract": codegen.scalar_kernel("({} - {})", "iuf"),
    "multiply": codegen.scalar_kernel("({} * {})", "iuf"),
    # NaN wins; between equal operands (0.0 and -0.0) the second, as NumPy's loops give
    "maximum": codegen.scalar_kernel("({0} if {0} > {1} or {0} != {0} else {1})", "iuf"),
    "minimum": codegen.scalar_kernel("({0} if {0} < {1} or {0} != {0} else {1})", "iuf"),
    "power": codegen.scalar_kernel("np.power({}, {})"),
    "arctan2": codegen.scalar_kernel("np.arctan2({}, {})"),
    **{name: codegen.scalar_kernel(f"({{}} {op} {{}})", "biuf") for name, op in (
        ("less", "<"), ("less_equal", "<="), ("greater", ">"), ("greater_equal", ">="),
        ("equal", "=="), ("not_equal", "!="))},
    "bitwise_and": codegen.scalar_kernel("({} & {})", "b"),
    "bitwise_or": codegen.scalar_kernel("({} | {})", "b"),
}

#: ufuncs that jit writes as Python operators (which call the same ufunc, sooner)
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/"}


def _linear_each(ct, x, y, ct_x, ct_y):
    """Cotangents of a binary op that is linear in each undefined operand separately."""
    return [unbroadcast(x.aval, ct_x(ct)) if type(x) is UndefinedPrimal else None,
            unbroadcast(y.aval, ct_y(ct)) if type(y) is UndefinedPrimal else None]


def _np_binary(ufunc_name: str) -> Callable:
    ufunc = getattr(np, ufunc_name)

    def impl(x, y):
        if type(x) is np.ndarray and (type(y) is np.ndarray or type(y) in _PLAIN_SCALARS):
            return ufunc(x, y)  # the hot path: no module lookup
        xp = array_module(x, y)
        if xp is not np:  # the hot path skips the call
            x, y = coerce(xp, x, y)
        return getattr(xp, ufunc_name)(x, y)
    impl.__name__ = impl.ufunc_name = ufunc_name  # type: ignore[attr-defined]  # read by jit
    return impl


add_p = binary("add", _np_binary("add"), (lambda g, ans, x, y: g, lambda g, ans, x, y: g),
               transpose_rule=lambda ct, x, y: _linear_each(ct, x, y, lambda c: c, lambda c: c))
sub_p = binary("sub", _np_binary("subtract"),
               (lambda g, ans, x, y: g, lambda g, ans, x, y: neg(g)),
               transpose_rule=lambda ct, x, y: _linear_each(ct, x, y, lambda c: c, neg))


def _mul_transpose(ct, x, y):
    if type(y) is not UndefinedPrimal:  # the common case first, without the lambdas
        return [unbroadcast(x.aval, mul(ct, y)), None]
    assert type(x) is not UndefinedPrimal, "mul is not linear in both"
    return [None, unbroadcast(y.aval, mul(x, ct))]


def _div_transpose(ct, x, y):
    assert not is_undefined_primal(y), "div is linear only in its numerator"
    return [unbroadcast(x.aval, div(ct, y)), None]


mul_p = binary("mul", _np_binary("multiply"),
               (lambda g, ans, x, y: mul(g, y), lambda g, ans, x, y: mul(x, g)),
               transpose_rule=_mul_transpose)
_mul_jvp_two_terms = ad.jvp_rules[mul_p]


def _mul_jvp(primals, tangents, **params):
    # x * x (one value twice, ``r * r`` in a loss): one tangent term, (x + x) * t, instead
    # of t * x + x * t: one operation fewer in the pullback (a task per chunk on dask),
    # and the same bits, doubling being exact.
    x, y = primals
    t = tangents[0]
    if x is y and t is tangents[1] and type(t) is not Zero:
        return mul_p.bind(x, y), mul(t, add(x, x))
    return _mul_jvp_two_terms(primals, tangents, **params)


ad.jvp_rules[mul_p] = _mul_jvp
def _div_impl(x, y):
    xp = array_module(x, y)
    if xp is not np:
        x, y = coerce(xp, x, y)
    if np.result_type(x, y).kind not in "biu":
        return xp.true_divide(x, y)
    # Integers divide rounding towards zero, as jax.lax.div does (x / 0 gives 0, as NumPy's
    # floor_divide does).
    with np.errstate(divide="ignore"):
        q, r = xp.floor_divide(x, y), xp.remainder(x, y)
    return q + ((r != 0) & ((xp.asarray(x) < 0) != (xp.asarray(y) < 0))).astype(q.dtype)


def _div_abstract_eval(x, y):
    shape = _broadcast_shapes("div", (x, y))
    dtype, weak = core.result_type(x, y)
    if dtype == _BOOL:
        raise TypeError("div requires numeric operands, got bool")
    return ShapedArray(shape, dtype, weak)


div_p = binary("div", _div_impl,
               (lambda g, ans, x, y: div(g, y), lambda g, ans, x, y: neg(mul(g, div(ans, y)))),
               transpose_rule=_div_transpose, abstract_eval=_div_abstract_eval)


def _pow_rhs_derivative(g, ans, x, y):
    # d/dy x**y = log(x) x**y; at x == 0 take log(1) so that 0**y has derivative 0 in y.
    safe_x = select(eq(x, 0), 1, x)
    return mul(g, mul(log(convert_element_type(safe_x, get_aval(ans).dtype)), ans))


def _pow_lhs_derivative(g, ans, x, y):
    # y x**(y-1), except that x**0 is constant: 0 where y == 0, also at x == 0 (not 0 * inf).
    if core.is_python_scalar(y):  # decided here: no host arrays next to device ones
        return mul(g, 0) if y == 0 else mul(g, mul(y, pow(x, y - 1)))
    return mul(g, mul(y, pow(x, select(eq(y, 0), 1, sub(y, 1)))))


pow_p = binary("pow", _np_binary("power"), (_pow_lhs_derivative, _pow_rhs_derivative),
               inexact_only=True)


def _minmax_derivative(pick):
    # Ties share the derivative equally, so max(x, x) has derivative 1 in x.
    def derivative(g, ans, x, y):
        dtype = core.tangent_dtype(get_aval(ans).dtype)
        weight = add(convert_element_type(pick(x, y), dtype),
                     mul(convert_element_type(eq(x, y), dtype), 0.5))
        return mul(g, weight)
    return (derivative,
            lambda g, ans, x, y: derivative(g, ans, y, x))


def _atan2_derivatives():
    # atan2(x, y) is the angle of the point (y, x): d/dx = y / r², d/dy = -x / r².
    def radius2(x, y):
        return add(mul(x, x), mul(y, y))
    return (lambda g, ans, x, y: mul(g, div(y, radius2(x, y))),
            lambda g, ans, x, y: mul(g, div(neg(x), radius2(x, y))))


atan2_p = binary("atan2", _np_binary("arctan2"), _atan2_derivatives(), real_only=True)


def _logaddexp_derivative(g, ans, x, y):
    # d/dx log(e^x + e^y) = e^x / (e^x + e^y) = logistic(x - y): bounded, no overflow.
    # Equal inputs get half each, infinite ones included (both -inf: the limit along
    # x = y), where the difference is taken of zeros instead, so that inf - inf is never
    # computed (NumPy would warn).  A nan input gives a nan derivative.  When one input
    # is a finite constant (``logaddexp(0, z)``, softplus) they cannot both be infinite
    # and the guard is skipped.
    if _finite_scalar(x) or _finite_scalar(y):
        return mul(g, logistic(sub(x, y)))
    tie = and_p.bind(eq(x, y), not_p.bind(is_finite_p.bind(x)))
    return mul(g, logistic(sub(select(tie, 0.0, x), select(tie, 0.0, y))))


def _finite_scalar(x) -> bool:
    """``x`` is a finite Python or NumPy scalar (a constant, not a traced value)."""
    if type(x) in (int, float) or isinstance(x, (np.integer, np.floating)):
        return bool(np.isfinite(x))
    return type(x) is np.ndarray and x.ndim == 0 and bool(np.isfinite(x))


logaddexp_p = binary("logaddexp", _np_binary("logaddexp"),
                     (_logaddexp_derivative, lambda g, ans, x, y: _logaddexp_derivative(
                         g, ans, y, x)), real_only=True)


max_p = binary("max", _np_binary("maximum"), _minmax_derivative(lambda a, b: gt(a, b)))
min_p = binary("min", _np_binary("minimum"), _minmax_derivative(lambda a, b: lt(a, b)))


def _complex_impl(x, y):
    # Written into the two halves of each complex number, not as x + 1j * y: 1j * inf is
    # nan + inf j, which would make complex(0, inf) nan + inf j.
    xp = array_module(x, y)
    x, y = coerce(xp, x, y)
    x_aval, y_aval = get_aval(x), get_aval(y)
    dtype = _complex_abstract_eval(x_aval, y_aval).dtype
    shape = np.broadcast_shapes(x_aval.shape, y_aval.shape)
    parts = xp.empty(shape + (2,), dtype=np.finfo(dtype).dtype)
    parts[..., 0] = x
    parts[..., 1] = y
    out = parts.view(dtype)[..., 0]
    return out if shape else out[()]


def _complex_abstract_eval(x, y):
    shape = _broadcast_shapes("complex", (x, y))
    dtype, weak = core.result_type(x, y)
    if dtype.kind == "c":
        raise TypeError("complex: operands must be real")
    return ShapedArray(shape, _complex_dtype(dtype), weak)


complex_p = binary(
    "complex", _complex_impl,
    (lambda g, ans, x, y: g, lambda g, ans, x, y: mul(g, 1j)),
    transpose_rule=lambda ct, x, y: [real(ct) if is_undefined_primal(x) else None,
                                     neg(imag(ct)) if is_undefined_primal(y) else None],
    abstract_eval=_complex_abstract_eval)

_BOOL = np.dtype(np.bool_)
eq_p = binary("eq", _np_binary("equal"), None, out_dtype=_BOOL)
ne_p = binary("ne", _np_binary("not_equal"), None, out_dtype=_BOOL)
lt_p = binary("lt", _np_binary("less"), None, out_dtype=_BOOL)
le_p = binary("le", _np_binary("less_equal"), None, out_dtype=_BOOL)
gt_p = binary("gt", _np_binary("greater"), None, out_dtype=_BOOL)
ge_p = binary("ge", _np_binary("greater_equal"), None, out_dtype=_BOOL)

# -- integer and bitwise family: exact on integers (and booleans), no derivative ----------


def _require_integer(name: str, dtype: np.dtype, booleans: bool = True) -> None:
    kinds = "biu" if booleans else "iu"
    if dtype.kind not in kinds:
        what = "an integer or boolean" if booleans else "an integer"
        raise TypeError(f"{name} requires {what} operand, got {dtype.name}")


def _integer_unary(name: str, impl: Callable, *, booleans: bool = True,
                   out_dtype: Callable | None = None) -> Primitive:
    def abstract_eval(aval):
        _require_integer(name, aval.dtype, booleans)
        dtype = aval.dtype if out_dtype is None else out_dtype(aval.dtype)
        return ShapedArray(aval.shape, dtype, aval.weak_type and out_dtype is None)
    return unary(name, impl, None, inexact_only=False, abstract_eval=abstract_eval)


def _integer_binary(name: str, impl: Callable, *, booleans: bool = True) -> Primitive:
    def abstract_eval(x, y):
        shape = _broadcast_shapes(name, (x, y))
        dtype, weak = core.result_type(x, y)
        _require_integer(name, dtype, booleans)
        return ShapedArray(shape, dtype, weak)
    return binary(name, impl, None, abstract_eval=abstract_eval)


def _unsigned_view(x):
    """``x``'s bits as the unsigned integer type of its size (booleans stay booleans)."""
    if x.dtype.kind != "i":
        return x
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _shift_right_logical_impl(x, y):
    xp = array_module(x, y)
    x, y = coerce(xp, x, y)
    dtype = np.result_type(x, y)
    x = xp.asarray(x).astype(dtype, copy=False)
    unsigned = _unsigned_view(x)
    out = xp.right_shift(unsigned, xp.asarray(y).astype(unsigned.dtype))
    return out.view(dtype) if dtype.kind == "i" else out


def _population_count_impl(x):
    xp = array_module(x)
    unsigned = _unsigned_view(x)
    return xp.bitwise_count(unsigned).astype(x.dtype, copy=False)


def _clz_impl(x):
    # Binary search on the highest set bit: shift by 32, 16, ..., 1 while the top is empty.
    xp = array_module(x)
    u = _unsigned_view(x)
    bits = 8 * x.dtype.itemsize
    count = xp.zeros(x.shape, dtype=u.dtype)
    step = bits // 2
    while step:
        empty = xp.right_shift(u, bits - step) == 0
        count = count + xp.where(empty, step, 0).astype(u.dtype)
        u = xp.where(empty, xp.left_shift(u, step), u)
        step //= 2
    count = count + (u == 0).astype(u.dtype)  # zero has every bit leading
    return count.view(x.dtype) if x.dtype.kind == "i" else count


and_p = _integer_binary("and", _np_binary("bitwise_and"))
or_p = _integer_binary("or", _np_binary("bitwise_or"))
xor_p = _integer_binary("xor", _np_binary("bitwise_xor"))
not_p = _integer_unary("not", _np_unary("invert"))
shift_left_p = _integer_binary("shift_left", _np_binary("left_shift"), booleans=False)
shift_right_arithmetic_p = _integer_binary("shift_right_arithmetic", _np_binary("right_shift"),
                                           booleans=False)
shift_right_logical_p = _integer_binary("shift_right_logical", _shift_right_logical_impl,
                                        booleans=False)
population_count_p = _integer_unary("population_count", _population_count_impl, booleans=False)
clz_p = _integer_unary("clz", _clz_impl, booleans=False)
gcd_p = _integer_binary("gcd", _np_binary("gcd"), booleans=False)
lcm_p = _integer_binary("lcm", _np_binary("lcm"), booleans=False)


def _mulhi_impl(x, y):
    # The high half of the double-width product.  Up to 32 bits the product fits a 64-bit
    # integer; 64-bit operands are split into 32-bit halves whose four partial products
    # are summed with their carries (unsigned), then corrected for negative operands:
    # as unsigned, a negative x stands for x + 2**64, which adds y * 2**64 to the product.
    xp = array_module(x, y)
    dtype = core.result_type(get_aval(x), get_aval(y))[0]
    x, y = (xp.asarray(v).astype(dtype, copy=False) for v in coerce(xp, x, y))
    width = dtype.itemsize * 8
    with np.errstate(over="ignore"):
        if width < 64:
            wide = np.int64 if dtype.kind == "i" else np.uint64
            return ((x.astype(wide) * y.astype(wide)) >> wide(width)).astype(dtype)
        u = np.uint64
        mask, half = u(0xFFFFFFFF), u(32)
        xu, yu = x.astype(u), y.astype(u)
        x_lo, x_hi, y_lo, y_hi = xu & mask, xu >> half, yu & mask, yu >> half
        low, cross1, cross2 = x_lo * y_lo, x_hi * y_lo, x_lo * y_hi
        middle = (low >> half) + (cross1 & mask) + (cross2 & mask)
        high = x_hi * y_hi + (cross1 >> half) + (cross2 >> half) + (middle >> half)
        if dtype.kind == "i":
            high = high - xp.where(x < 0, yu, u(0)) - xp.where(y < 0, xu, u(0))
        return high.astype(dtype)


mulhi_p = _integer_binary("mulhi", _mulhi_impl, booleans=False)


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    # XLA's ReducePrecision on the bits: round the mantissa to nearest even (a carry may
    # bump the exponent, up to inf), then send exponents above the narrow format's range
    # to inf and those at or below its smallest normal exponent to zero (its subnormals
    # are flushed), keeping the sign.  NaNs come out as they went in (payload and all).
    xp = array_module(x)
    x = xp.asarray(x)
    dtype = x.dtype
    info = np.finfo(dtype)
    mantissa, exponent = info.nmant, info.nexp
    u = np.dtype(f"u{dtype.itemsize}").type
    bits = x.view(u)
    if mantissa_bits < mantissa:
        shift = mantissa - mantissa_bits
        last = u(1) << u(shift)
        bias = (last >> u(1)) - u(1) + ((bits & last) >> u(shift))
        bits = (bits + bias) & ~(last - u(1))
    if exponent_bits < exponent:
        sign = bits & (u(1) << u(8 * dtype.itemsize - 1))
        exponent_mask = ((u(1) << u(exponent)) - u(1)) << u(mantissa)
        bias, narrow_bias = (1 << (exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        biased = bits & exponent_mask
        bits = xp.where(biased > u((bias + narrow_bias) << mantissa), sign | exponent_mask,
                        xp.where(biased <= u((bias - narrow_bias) << mantissa), sign, bits))
    return xp.where(xp.isnan(x), x, xp.asarray(bits).view(dtype))


def _reduce_precision_abstract_eval(aval, *, exponent_bits, mantissa_bits):
    _require_real_floating("reduce_precision", aval)
    return aval


def _reduce_precision_derivative(g, ans, x, **params):
    # linear for derivatives, as JAX has it: the tangent is rounded as the value is
    return reduce_precision_p.bind(g, **params)


reduce_precision_p = unary("reduce_precision", _reduce_precision_impl,
                           _reduce_precision_derivative,
                           abstract_eval=_reduce_precision_abstract_eval)
transpose.deftranspose(reduce_precision_p, lambda ct, x, **params: [
    reduce_precision_p.bind(ct, **params)])

# -- floating-point bit-level family --------------------------------------------------------


_fmod = _np_binary("fmod")


def _rem_impl(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):  # x % 0: nan (0 for integers)
        return _fmod(x, y)


def _rem_abstract_eval(x, y):
    shape = _broadcast_shapes("rem", (x, y))
    dtype, weak = core.result_type(x, y)
    if dtype.kind not in "iuf":
        raise TypeError(f"rem requires real (integer or floating-point) operands, got "
                        f"{dtype.name}")
    return ShapedArray(shape, dtype, weak)


def _truncate(q):
    return select(lt(q, 0), ceil(q), floor(q))


# rem(x, y) = x - trunc(x / y) y: slope 1 in x and -trunc(x / y) in y between the jumps.
rem_p = binary("rem", _rem_impl,
               (lambda g, ans, x, y: g,
                lambda g, ans, x, y: mul(g, neg(_truncate(div(x, y))))),
               abstract_eval=_rem_abstract_eval)
# nextafter(x, y) is x moved by one unit in the last place: slope 1 in x, 0 in y.
nextafter_p = binary("nextafter", _np_binary("nextafter"), (lambda g, ans, x, y: g, None),
                     real_only=True)


def _ldexp_abstract_eval(x, n):
    shape = _broadcast_shapes("ldexp", (x, n))
    _require_real_floating("ldexp", x)
    _require_integer("ldexp", n.dtype, booleans=False)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _ldexp_impl(x, n):
    xp = array_module(x, n)
    x, n = coerce(xp, x, n)
    out = xp.ldexp(x, n)
    dtype = getattr(x, "dtype", None)  # None for a Python float: float64 already
    return out if dtype is None else out.astype(dtype, copy=False)


ldexp_p = binary("ldexp", _ldexp_impl, (lambda g, ans, x, n: ldexp(g, n), None),
                 transpose_rule=lambda ct, x, n: [unbroadcast(x.aval, ldexp(ct, n)), None],
                 abstract_eval=_ldexp_abstract_eval)
core.own_typed_operands[ldexp_p] = frozenset({1})  # the integer exponent
frexp_exponent_p = unary("frexp_exponent", lambda x: array_module(x).frexp(x)[1], None,
                         real_only=True, out_dtype=lambda d: np.dtype(np.int32))


def _signbit_abstract_eval(aval):
    if aval.dtype.kind == "c":
        raise TypeError("signbit requires a real operand, got " + aval.dtype.name)
    return ShapedArray(aval.shape, _BOOL, False)


signbit_p = unary("signbit", _np_unary("signbit"), None, inexact_only=False,
                  abstract_eval=_signbit_abstract_eval)

# -- modified Bessel functions of the first kind (jax.numpy.i0) ------------------------------


def _bessel_i1_impl(x):
    """I1 from its power series for |x| <= 30 and its asymptotic expansion beyond: every term
    of the series is positive and it converges in 60 terms there; the expansion's 20 terms
    reach float64 precision from 30 on."""
    xp = array_module(x)
    x = xp.asarray(x)  # a Python float too
    ax = xp.abs(x)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        small = xp.minimum(ax, 30)
        q = small * small / 4
        term = xp.ones_like(q)
        total = xp.ones_like(q)
        for k in range(1, 60):
            term = term * q / (k * (k + 1))
            total = total + term
        series = small / 2 * total
        big = xp.maximum(ax, 30)
        coefficient = xp.ones_like(big)
        expansion = xp.ones_like(big)
        for k in range(1, 20):  # a_k(1) = prod_{j<=k} (4 - (2j - 1)**2) / (k! 8**k)
            coefficient = coefficient * (4 - (2 * k - 1) ** 2) / (8 * k * big)
            expansion = expansion + (-1) ** k * coefficient
        asymptotic = xp.exp(big) / xp.sqrt(2 * np.pi * big) * expansion
        out = xp.where(ax <= 30, series, asymptotic)
    return xp.copysign(out, x).astype(x.dtype, copy=False)


def _bessel_i1_derivative(g, ans, x):
    # I1'(x) = I0(x) - I1(x) / x, whose limit at 0 is 1/2.
    zero = eq(x, 0)
    safe = select(zero, 1, x)
    return mul(g, select(zero, 0.5, sub(bessel_i0(x), div(bessel_i1(safe), safe))))


bessel_i0_p = unary("bessel_i0", _np_unary("i0"), lambda g, ans, x: mul(g, bessel_i1(x)),
                    real_only=True)
bessel_i1_p = unary("bessel_i1", _bessel_i1_impl, _bessel_i1_derivative, real_only=True)

# -- add_any: the sum of two tangents of one type (used by AD itself) ----------------------


def _add_any_abstract_eval(x, y):
    assert x.shape == y.shape, f"add_any of tangents of shapes {x.shape} and {y.shape}"
    return x


impl_rules[add_any_p] = _np_binary("add")
abstract_eval_rules[add_any_p] = _add_any_abstract_eval
ad.defjvp(add_any_p, lambda g, ans, x, y: g, lambda g, ans, x, y: g)
transpose.deftranspose(add_any_p, lambda ct, x, y: [ct if is_undefined_primal(x) else None,
                                                  ct if is_undefined_primal(y) else None])
def _add_any_batch(vals, dims):
    # Tangents of one type: both operands must end up batched along the same axis.
    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    size = shape_of(x)[dx] if dx is not not_mapped else shape_of(y)[dy]
    return add_any_p.bind(bdim_to_front(x, dx, size), bdim_to_front(y, dy, size)), 0


batching.batching_rules[add_any_p] = _add_any_batch

# -- select --------------------------------------------------------------------------------

select_p = Primitive("select", origin="library")


def _select_abstract_eval(pred, on_true, on_false):
    if pred.dtype != _BOOL:
        raise TypeError(f"select: the predicate must be boolean, got {pred.dtype.name}")
    shape = _broadcast_shapes("select", (pred, on_true, on_false))
    dtype, weak = core.result_type(on_true, on_false)
    return ShapedArray(shape, dtype, weak)


def _select_jvp(primals, tangents):
    pred, on_true, on_false = primals
    _, g_true, g_false = tangents
    ans = select_p.bind(pred, on_true, on_false)
    if type(g_true) is Zero and type(g_false) is Zero:
        return ans, Zero.from_value(ans)
    g_true = 0 if type(g_true) is Zero else g_true
    g_false = 0 if type(g_false) is Zero else g_false
    return ans, match_tangent(select_p.bind(pred, g_true, g_false), ans)


def _select_transpose(ct, pred, on_true, on_false):
    assert not is_undefined_primal(pred)
    zero = zeros_like(ct)
    return [None,
            unbroadcast(on_true.aval, select(pred, ct, zero)) if is_undefined_primal(
                on_true) else None,
            unbroadcast(on_false.aval, select(pred, zero, ct)) if is_undefined_primal(
                on_false) else None]


def _select_impl(pred, on_true, on_false):
    xp = array_module(pred, on_true, on_false)
    return xp.where(*coerce(xp, pred, on_true, on_false))


impl_rules[select_p] = _select_impl
abstract_eval_rules[select_p] = _select_abstract_eval
ad.jvp_rules[select_p] = _select_jvp
transpose.deftranspose(select_p, _select_transpose)
batching.batching_rules[select_p] = broadcasting_batcher(select_p)

# -- jit: direct lowerings and simplifications ------------------------------------------


def _is_scalar_literal(x, value) -> bool:
    """Whether the jaxpr atom ``x`` is a scalar literal equal to ``value``."""
    return type(x) is core.Literal and np.ndim(x.val) == 0 and x.val == value


def _identity_operand(neutral: float, positions: tuple, zero_sign: int = 0) -> Callable:
    """Simplification of ``x op neutral`` (for the operand positions of ``neutral`` in
    ``positions``): the result is the other operand when that has the result's type.

    ``zero_sign`` (for a neutral 0 of addition, -1, or subtraction, +1): in floating point
    ``x + 0.0`` is not ``x`` where ``x`` is ``-0.0`` (it gives ``+0.0``), while
    ``x + (-0.0)`` and ``x - 0.0`` are ``x`` everywhere; so with a floating result only the
    zero of that sign is neutral."""
    def rule(operands, out_aval):
        for i in positions:
            other, literal = operands[1 - i], operands[i]
            if (_is_scalar_literal(literal, neutral) and type(other) is not core.Literal
                    and other.aval.shape == out_aval.shape
                    and other.aval.dtype == out_aval.dtype
                    and (not zero_sign or out_aval.dtype.kind not in "fc"
                         or _zero_of_sign(literal.val, zero_sign))):
                return 1 - i
        return None
    return rule


def _zero_of_sign(value, sign: int) -> bool:
    """Whether the zero ``value`` (a float or complex literal) has the sign ``sign`` in
    every part (an integer zero converts to +0.0)."""
    parts = (value.real, value.imag) if isinstance(
        value, (builtins.complex, np.complexfloating)) else (value,)
    return all(isinstance(p, (builtins.float, np.floating)) and bool(np.signbit(p)) == (sign < 0)
               for p in parts)


def _integer_pow_lowering(ctx, x, *, y):
    if y == 2:  # correctly rounded, as the impl computes it
        return f"({x} * {x})"
    if y == -1 and ctx.in_avals[0].dtype.kind in "fc":
        return f"{ctx.xp}.reciprocal({x})"
    return f"{ctx.xp}.power({x}, {y})"


def _integer_pow_kernel(operands, in_dtypes, out_dtype, *, y):
    if in_dtypes[0].kind != "f":
        return None
    x, = operands
    if y == 2:
        return f"({x} * {x})"
    if y == -1:  # correctly rounded, as the impl's reciprocal
        return f"(np.{in_dtypes[0].name}(1.0) / {x})"
    return f"np.power({x}, np.{in_dtypes[0].name}({float(y)!r}))"


def _logistic_kernel(operands, in_dtypes, out_dtype):
    if in_dtypes[0].kind != "f":
        return None
    one = f"np.{in_dtypes[0].name}(1.0)"
    return f"({one} / (np.exp(-{operands[0]}) + {one}))"   # _logistic_impl's arithmetic


def _select_kernel(operands, in_dtypes, out_dtype):
    pred, on_true, on_false = operands
    if in_dtypes[0].kind != "b" or in_dtypes[1] != in_dtypes[2]:
        return None
    return f"({on_true} if {pred} else {on_false})"


def _negated(x, producer):
    """The operand of the ``neg`` computing ``x``, or None."""
    eqn = producer(id(x)) if type(x) is core.Var else None
    return eqn.invars[0] if eqn is not None and eqn.primitive is neg_p else None


def _absorb_neg_in_add(operands, producer):  # a + (-b) is a - b; (-a) + b is b - a
    a, b = operands
    for keep, other in ((a, b), (b, a)):
        inner = _negated(other, producer)
        if inner is not None:
            return [(sub_p, [keep, inner], {})]
    return None


def _absorb_neg_in_sub(operands, producer):  # a - (-b) is a + b
    inner = _negated(operands[1], producer)
    return None if inner is None else [(add_p, [operands[0], inner], {})]


def _lift_neg_from_mul(operands, producer):  # (-a) * b is -(a * b): the neg may go next
    a, b = operands
    for i in (0, 1):  # x * -1 is -x (exactly), which an add or a sub can absorb
        other = operands[1 - i]
        if (_is_scalar_literal(operands[i], -1) and type(other) is not core.Literal
                and core.result_type(other.aval, operands[i].aval) == (
                    other.aval.dtype, other.aval.weak_type)):
            return [(neg_p, [other], {})]
    for i in (0, 1):
        inner = _negated(operands[i], producer)
        if inner is not None:
            pair = [inner, b] if i == 0 else [a, inner]
            return [(mul_p, pair, {}), (neg_p, [codegen.Ref(0)], {})]
    return None


codegen.deflowering(add_p, rewrite=_absorb_neg_in_add, commutative=True,
                    simplify=_identity_operand(0, (0, 1), zero_sign=-1))
codegen.deflowering(add_any_p, rewrite=_absorb_neg_in_add, commutative=True)
codegen.deflowering(sub_p, rewrite=_absorb_neg_in_sub,
                    simplify=_identity_operand(0, (1,), zero_sign=1))
codegen.deflowering(mul_p, rewrite=_lift_neg_from_mul, commutative=True,
                    simplify=_identity_operand(1, (0, 1)))
codegen.deflowering(div_p, simplify=_identity_operand(1, (1,)))
codegen.deflowering(integer_pow_p, _integer_pow_lowering, kernel=_integer_pow_kernel)
codegen.deflowering(div_p, kernel=codegen.scalar_kernel("({} / {})"))
codegen.deflowering(logistic_p, kernel=_logistic_kernel)
codegen.deflowering(select_p, kernel=_select_kernel)


# -- facts about row numbers (codegen's "Row regions"): the wrap of negative positions ----
# that indexing writes, ``select(i < 0, i + size, i)``, leaves row numbers as they are


def _lt_numbers(n, in_avals, out_aval, facts):
    bound = facts[1]
    never = (facts[0] == codegen.ROW_NUMBERS and isinstance(bound, (int, float, np.number))
             and not isinstance(bound, (bool, np.bool_)) and bound <= 0)
    return codegen.NEVER if never and in_avals[0].shape == out_aval.shape else None


def _select_numbers(n, in_avals, out_aval, facts):
    on_false = in_avals[2]
    return (facts[2] if facts[0] == codegen.NEVER and on_false.shape == out_aval.shape
            and on_false.dtype == out_aval.dtype else None)


codegen.deflowering(lt_p, numbers=_lt_numbers)
codegen.deflowering(select_p, numbers=_select_numbers)
codegen.deflowering(add_any_p, lambda ctx, x, y: f"({x} + {y})")
codegen.deflowering(add_any_p, ufunc="add", augmented="+=", kernel=_BINARY_KERNELS["add"])
codegen.deflowering(select_p, lambda ctx, pred, on_true, on_false:
                    f"{ctx.xp}.where({pred}, {on_true}, {on_false})")
codegen.deflowering(select_p, broadcasting=True)

# -- lax-level functions -------------------------------------------------------------------


#: Functions that take JAX's ``accuracy=`` (a tolerance XLA may trade speed against): the
#: NumPy/CuPy kernels here are accurate to about one unit in the last place, within any
#: tolerance that can be asked for, so the argument is accepted and changes nothing.
ACCURACY_FUNCTIONS = frozenset({"cbrt", "cos", "exp", "exp2", "expm1", "log", "log1p",
                                "logistic", "rsqrt", "sin", "sqrt", "tan", "tanh"})


def _unary_fn(prim: Primitive, doc: str, name: str | None = None) -> Callable:
    def f(x):
        return prim.bind(x)

    def f_accuracy(x, *, accuracy=None):
        del accuracy  # within any tolerance already (see ACCURACY_FUNCTIONS)
        return prim.bind(x)

    fun = f_accuracy if (name or prim.name) in ACCURACY_FUNCTIONS else f
    return public(fun, name or prim.name, doc, module="functrans.lax")


def _binary_fn(prim: Primitive, doc: str, name: str | None = None) -> Callable:
    def f(x, y):
        return prim.bind(x, y)

    def f_named(x1, x2):  # nextafter: JAX's names for its operands
        return prim.bind(x1, x2)

    def f_out_dtype(x, y, *, out_dtype=None):  # mul
        if out_dtype is not None:  # the product formed in out_dtype (wider: exact)
            x, y = convert_element_type(x, out_dtype), convert_element_type(y, out_dtype)
        return prim.bind(x, y)

    fun = {"nextafter": f_named, "mul": f_out_dtype}.get(name or prim.name, f)
    return public(fun, name or prim.name, doc, module="functrans.lax")


neg = _unary_fn(neg_p, "Elementwise negation.")
exp = _unary_fn(exp_p, "Elementwise exponential.")
log = _unary_fn(log_p, "Elementwise natural logarithm.")
sin = _unary_fn(sin_p, "Elementwise sine.")
cos = _unary_fn(cos_p, "Elementwise cosine.")
tan = _unary_fn(tan_p, "Elementwise tangent.")
tanh = _unary_fn(tanh_p, "Elementwise hyperbolic tangent.")
sinh = _unary_fn(sinh_p, "Elementwise hyperbolic sine.")
cosh = _unary_fn(cosh_p, "Elementwise hyperbolic cosine.")
sqrt = _unary_fn(sqrt_p, "Elementwise square root.")
log1p = _unary_fn(log1p_p, "Elementwise log(1 + x), accurate near 0.")
expm1 = _unary_fn(expm1_p, "Elementwise exp(x) - 1, accurate near 0.")
exp2 = _unary_fn(exp2_p, "Elementwise 2 ** x.")
atan = _unary_fn(atan_p, "Elementwise arc tangent.")
asin = _unary_fn(asin_p, "Elementwise arc sine.")
acos = _unary_fn(acos_p, "Elementwise arc cosine.")
floor = _unary_fn(floor_p, "Elementwise floor (largest integer not above x), for floats.")
ceil = _unary_fn(ceil_p, "Elementwise ceiling (smallest integer not below x), for floats.")
is_finite = _unary_fn(is_finite_p, "Elementwise test for values that are neither inf nor nan.")
logistic = _unary_fn(logistic_p, "Elementwise logistic sigmoid 1 / (1 + exp(-x)).")
sign = _unary_fn(sign_p, "Elementwise sign (-1, 0 or 1).")
abs = _unary_fn(abs_p, "Elementwise absolute value (modulus for complex).")  # noqa: A001
real = _unary_fn(real_p, "Real part.")
imag = _unary_fn(imag_p, "Imaginary part.")
conj = _unary_fn(conj_p, "Complex conjugate.")
asinh = _unary_fn(asinh_p, "Elementwise inverse hyperbolic sine.")
acosh = _unary_fn(acosh_p, "Elementwise inverse hyperbolic cosine.")
atanh = _unary_fn(atanh_p, "Elementwise inverse hyperbolic tangent.")
cbrt = _unary_fn(cbrt_p, "Elementwise real cube root.")
bitwise_not = _unary_fn(not_p, "Elementwise bitwise not of integers (logical not of booleans).",
                        "bitwise_not")
population_count = _unary_fn(population_count_p, "Elementwise number of set bits of integers "
                             "(of the two's complement bits for negative values).")
clz = _unary_fn(clz_p, "Elementwise number of leading zero bits of integers.")
add = _binary_fn(add_p, "Elementwise (broadcasting) x + y.")
sub = _binary_fn(sub_p, "Elementwise (broadcasting) x - y.")
mul = _binary_fn(mul_p, "Elementwise (broadcasting) x * y.")
div = _binary_fn(div_p, "Elementwise (broadcasting) division x / y: true division of "
                       "floats, rounding towards zero for integers.")
pow = _binary_fn(pow_p, "Elementwise (broadcasting) x ** y for real exponents.")  # noqa: A001
atan2 = _binary_fn(atan2_p, "Elementwise (broadcasting) arc tangent of x / y, in the quadrant "
                            "of the point (y, x).")
logaddexp = _binary_fn(logaddexp_p, "Elementwise (broadcasting) log(exp(x) + exp(y)), "
                                    "without overflow; its derivative in x is "
                                    "logistic(x - y).")
max = _binary_fn(max_p, "Elementwise (broadcasting) maximum.")  # noqa: A001
min = _binary_fn(min_p, "Elementwise (broadcasting) minimum.")  # noqa: A001
complex = _binary_fn(complex_p, "x + 1j * y from real x and y.")  # noqa: A001
eq = _binary_fn(eq_p, "Elementwise x == y.")
ne = _binary_fn(ne_p, "Elementwise x != y.")
lt = _binary_fn(lt_p, "Elementwise x < y.")
le = _binary_fn(le_p, "Elementwise x <= y.")
gt = _binary_fn(gt_p, "Elementwise x > y.")
ge = _binary_fn(ge_p, "Elementwise x >= y.")
bitwise_and = _binary_fn(and_p, "Elementwise bitwise and of integers or booleans.",
                         "bitwise_and")
bitwise_or = _binary_fn(or_p, "Elementwise bitwise or of integers or booleans.", "bitwise_or")
bitwise_xor = _binary_fn(xor_p, "Elementwise bitwise exclusive or of integers or booleans.",
                         "bitwise_xor")
shift_left = _binary_fn(shift_left_p, "Elementwise x << y for integers (0 once y reaches the "
                        "bit width).")
shift_right_arithmetic = _binary_fn(shift_right_arithmetic_p, "Elementwise x >> y for integers, "
                                    "filling with the sign bit.")
shift_right_logical = _binary_fn(shift_right_logical_p, "Elementwise x >> y for integers, "
                                 "filling with zeros.")
rem = _binary_fn(rem_p, "Elementwise remainder x - trunc(x / y) y, with the sign of x (C's "
                 "fmod).")
nextafter = _binary_fn(nextafter_p, "Elementwise next floating-point value after x towards y.")

# Examples of the functions above, appended to their docstrings (and so doctested):
# (function, expression, its output).
_EXAMPLES = [
    (neg, "lax.neg(np.array([1.0, -2.0]))", "array([-1.,  2.])"),
    (exp, "lax.exp(np.array([0.0, 1.0]))", "array([1.        , 2.71828183])"),
    (log, "lax.log(np.array([1.0, np.e]))", "array([0., 1.])"),
    (sin, "lax.sin(np.array([0.0, np.pi / 2]))", "array([0., 1.])"),
    (cos, "lax.cos(np.array([0.0, np.pi]))", "array([ 1., -1.])"),
    (tan, "lax.tan(np.array([0.0, np.pi / 4]))", "array([0., 1.])"),
    (tanh, "lax.tanh(np.array([0.0, 1.0]))", "array([0.        , 0.76159416])"),
    (sinh, "lax.sinh(np.array([0.0, 1.0]))", "array([0.        , 1.17520119])"),
    (cosh, "lax.cosh(np.array([0.0, 1.0]))", "array([1.        , 1.54308063])"),
    (sqrt, "lax.sqrt(np.array([4.0, 2.25]))", "array([2. , 1.5])"),
    (log1p, "lax.log1p(np.array([0.0, 1e-10]))", "array([0.e+00, 1.e-10])"),
    (expm1, "lax.expm1(np.array([0.0, 1e-10]))", "array([0.e+00, 1.e-10])"),
    (exp2, "lax.exp2(np.array([3.0, -1.0]))", "array([8. , 0.5])"),
    (atan, "lax.atan(np.array([0.0, 1.0]))", "array([0.        , 0.78539816])"),
    (asin, "lax.asin(np.array([0.0, 1.0]))", "array([0.        , 1.57079633])"),
    (acos, "lax.acos(np.array([1.0, 0.0]))", "array([0.        , 1.57079633])"),
    (floor, "lax.floor(np.array([-1.5, 2.5]))", "array([-2.,  2.])"),
    (ceil, "lax.ceil(np.array([-1.5, 2.5]))", "array([-1.,  3.])"),
    (is_finite, "lax.is_finite(np.array([1.0, np.inf, np.nan]))", "array([ True, False, False])"),
    (logistic, "lax.logistic(np.array([0.0, 2.0]))", "array([0.5       , 0.88079708])"),
    (sign, "lax.sign(np.array([-3.0, 0.0, 2.0]))", "array([-1.,  0.,  1.])"),
    (abs, "lax.abs(np.array([-1.5, 3 + 4j]))", "array([1.5, 5. ])"),
    (real, "lax.real(np.array([1 + 2j, 3 - 4j]))", "array([1., 3.])"),
    (imag, "lax.imag(np.array([1 + 2j, 3 - 4j]))", "array([ 2., -4.])"),
    (conj, "lax.conj(np.array([1 + 2j, 3 - 4j]))", "array([1.-2.j, 3.+4.j])"),
    (asinh, "lax.asinh(np.array([0.0, 1.0]))", "array([0.        , 0.88137359])"),
    (acosh, "lax.acosh(np.array([1.0, 2.0]))", "array([0.       , 1.3169579])"),
    (atanh, "lax.atanh(np.array([0.0, 0.5]))", "array([0.        , 0.54930614])"),
    (cbrt, "lax.cbrt(np.array([-8.0, 27.0]))", "array([-2.,  3.])"),
    (bitwise_not, "lax.bitwise_not(np.int8([0, 5]))", "array([-1, -6], dtype=int8)"),
    (population_count, "lax.population_count(np.int8([0, 7, -1]))", "array([0, 3, 8], dtype=int8)"),
    (clz, "lax.clz(np.int8([1, 16, -1]))", "array([7, 3, 0], dtype=int8)"),
    (add, "lax.add(np.array([1.0, 2.0]), 10.0)", "array([11., 12.])"),
    (sub, "lax.sub(np.array([1.0, 2.0]), np.array([0.5, 3.0]))", "array([ 0.5, -1. ])"),
    (mul, "lax.mul(np.array([1.0, 2.0]), np.array([3.0, -1.0]))", "array([ 3., -2.])"),
    (div, "lax.div(np.array([7.0, -7.0]), 2.0)", "array([ 3.5, -3.5])"),
    (div, "lax.div(np.array([7, -7]), 2)", "array([ 3, -3])"),
    (pow, "lax.pow(np.array([2.0, 9.0]), np.array([3.0, 0.5]))", "array([8., 3.])"),
    (atan2, "lax.atan2(np.array([1.0, 1.0]), np.array([1.0, -1.0]))",
     "array([0.78539816, 2.35619449])"),
    (max, "lax.max(np.array([1.0, 5.0]), np.array([3.0, 2.0]))", "array([3., 5.])"),
    (min, "lax.min(np.array([1.0, 5.0]), np.array([3.0, 2.0]))", "array([1., 2.])"),
    (complex, "lax.complex(np.array([1.0, 0.0]), np.array([2.0, -1.0]))",
     "array([1.+2.j, 0.-1.j])"),
    (eq, "lax.eq(np.array([1.0, 2.0, 3.0]), 2.0)", "array([False,  True, False])"),
    (ne, "lax.ne(np.array([1.0, 2.0, 3.0]), 2.0)", "array([ True, False,  True])"),
    (lt, "lax.lt(np.array([1.0, 2.0, 3.0]), 2.0)", "array([ True, False, False])"),
    (le, "lax.le(np.array([1.0, 2.0, 3.0]), 2.0)", "array([ True,  True, False])"),
    (gt, "lax.gt(np.array([1.0, 2.0, 3.0]), 2.0)", "array([False, False,  True])"),
    (ge, "lax.ge(np.array([1.0, 2.0, 3.0]), 2.0)", "array([False,  True,  True])"),
    (bitwise_and, "lax.bitwise_and(np.array([12, 10]), np.array([10, 6]))", "array([8, 2])"),
    (bitwise_or, "lax.bitwise_or(np.array([12, 10]), np.array([10, 6]))", "array([14, 14])"),
    (bitwise_xor, "lax.bitwise_xor(np.array([12, 10]), np.array([10, 6]))", "array([ 6, 12])"),
    (shift_left, "lax.shift_left(np.int8([1, 3]), np.int8([2, 8]))", "array([4, 0], dtype=int8)"),
    (shift_right_arithmetic, "lax.shift_right_arithmetic(np.int8([-16, 16]), np.int8([2, 2]))",
     "array([-4,  4], dtype=int8)"),
    (shift_right_logical, "lax.shift_right_logical(np.int8([-16, 16]), np.int8([2, 2]))",
     "array([60,  4], dtype=int8)"),
    (rem, "lax.rem(np.array([7.0, -7.0]), 3.0)", "array([ 1., -1.])"),
    (nextafter, "lax.nextafter(np.array([1.0, 1.0]), np.array([2.0, 0.0])) - 1.0",
     "array([ 2.22044605e-16, -1.11022302e-16])"),
]
for _fn, _expression, _output in _EXAMPLES:
    _doc = _fn.__doc__ or ""
    if ">>>" not in _doc:
        _doc += "\n\n    >>> import numpy as np, functrans.lax as lax"
    _fn.__doc__ = _doc + f"\n    >>> {_expression}\n    {_output}\n    "
del _fn, _expression, _output, _doc


def ldexp(x, n):
    """``x * 2**n`` for a float ``x`` and an integer ``n``, exactly (no ``2**n`` formed)."""
    return ldexp_p.bind(x, n)


def frexp_exponent(x):
    """The int32 exponent ``e`` of ``x = m * 2**e`` with ``0.5 <= |m| < 1`` (0 for 0)."""
    return frexp_exponent_p.bind(x)


def signbit(x):
    """Whether the sign bit of ``x`` is set (true for -0.0 and negative nan too)."""
    return signbit_p.bind(x)


def gcd(x, y):
    """Elementwise greatest common divisor of integers (non-negative)."""
    return gcd_p.bind(x, y)


def lcm(x, y):
    """Elementwise least common multiple of integers (non-negative)."""
    return lcm_p.bind(x, y)


def bessel_i0(x):
    """The modified Bessel function of the first kind of order 0, ``I0``."""
    return bessel_i0_p.bind(x)


def bessel_i1(x):
    """The modified Bessel function of the first kind of order 1, ``I1 = I0'``."""
    return bessel_i1_p.bind(x)


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false`` (broadcasting, like ``numpy.where``).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.select(np.array([True, False]), np.array([1.0, 2.0]), np.array([-1.0, -2.0]))
    array([ 1., -2.])
    """
    return select_p.bind(pred, on_true, on_false)


def round(x, rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    """Elementwise rounding to the nearest integer of a float array; ties go away from zero
    by default (``jax.lax.round``), or to even with ``RoundingMethod.TO_NEAREST_EVEN``.

    >>> import numpy as np
    >>> round(np.array([0.5, 1.5, -2.5]))
    array([ 1.,  2., -3.])
    >>> round(np.array([0.5, 1.5, -2.5]), RoundingMethod.TO_NEAREST_EVEN)
    array([ 0.,  2., -2.])
    """
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def mulhi(x, y, /):
    """Elementwise high half of the double-width product of integers: ``(x * y) >> bits``
    computed exactly (signed for signed dtypes; 64-bit operands included).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.mulhi(np.array([-100, 100], np.int8), np.array([100, 100], np.int8))
    array([-40,  39], dtype=int8)
    """
    for name, v in (("x", x), ("y", y)):
        dtype = get_aval(v).dtype
        if dtype.kind not in "iu":
            raise TypeError(f"mulhi: {name} must be an integer, got {dtype}")
    return mulhi_p.bind(x, y)


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """``operand`` (real floating point) rounded to a float format of ``exponent_bits``
    exponent and ``mantissa_bits`` mantissa bits and back, as XLA's ReducePrecision: to
    nearest even, overflow to inf, the narrow format's subnormals flushed to zero.  (5, 10)
    rounds to float16's values, (8, 7) to bfloat16's.  Its derivative rounds the tangent
    the same way, as JAX's does.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reduce_precision(np.array([1.1, 70000.0, 1e-6]), 5, 10)
    array([1.09960938,        inf, 0.        ])
    """
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive, got "
                         f"{exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative, got "
                         f"{mantissa_bits}")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


def square(x):
    """Elementwise ``x * x``.

    >>> import numpy as np, functrans.lax as lax
    >>> lax.square(np.array([3, -2]))
    array([9, 4])
    """
    return integer_pow(x, 2)


def reciprocal(x):
    """Elementwise ``1 / x`` of floating-point or complex ``x`` (integers are refused, as
    JAX refuses them).

    >>> import numpy as np, functrans.lax as lax
    >>> lax.reciprocal(np.array([4.0, -0.5]))
    array([ 0.25, -2.  ])
    """
    aval = get_aval(x)
    if not core.is_inexact(aval.dtype):
        raise TypeError(f"reciprocal: x must be floating point or complex, got "
                        f"{aval.dtype}; convert it first")
    return integer_pow(x, -1)
