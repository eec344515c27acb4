"""Sweep cases of the elementwise math beyond the basics: the inverse hyperbolic functions,
roots and norms, remainders, floating-point representation, predicates, and the integer and
bitwise family (functrans/primitives/elementwise.py, functrans/numpy/_elementwise.py).

Inputs keep away from the places a function jumps or is undefined (``away0`` divisors,
``pos`` shifts), so the numerical derivatives see one smooth piece; the edges themselves
(ties of ``hypot``, ``sinc`` at 0, nan for ``fmax``, ...) are tested in
tests/test_elementwise.py.
"""
from __future__ import annotations

import numpy as np

from functrans import lax
from functrans.primitives import elementwise
from sweep import C128, F32, F64, I64, A, Case, numpy_case

INTS = (F64,)  # integer-only cases: the drawn dtype is int64 whatever is asked
WITH_COMPLEX = (F64, F32, I64, C128)
FLOATS = (F64, F32)

# lax-level: the new primitives, each in at least one case.
PRIMITIVE_CASES = [
    Case("logaddexp", elementwise.logaddexp, [A(3, 4), A(3, 4)]),
    Case("logaddexp_broadcast_far_apart", lambda x, y: elementwise.logaddexp(x * 30.0, y),
         [A(3, 1), A(4)]),
    Case("asinh", lax.asinh, [A(3, 4)]),
    Case("acosh", lambda x: lax.acosh(x + 1.0), [A(5, kind="pos")]),
    Case("atanh", lax.atanh, [A(3, 4, kind="unit")]),
    Case("cbrt", lax.cbrt, [A(3, 4, kind="away0")]),
    Case("rem", lambda x, y: lax.rem(x, 0.5 + 0.02 * y),
         [A(3, 4, kind="quarter"), A(4, kind="unit")]),
    Case("nextafter", lax.nextafter, [A(3, 4), A(4)]),
    Case("div_int", lax.div, [A(3, 4, kind="int"), A(4, kind="away0")], differentiable=False,
         dtypes=(I64,)),
    Case("rem_int", lax.rem, [A(3, 4, kind="int"), A(4, kind="away0")], differentiable=False,
         dtypes=(I64,)),
    Case("bitwise_and_int", lax.bitwise_and, [A(3, 4, kind="int"), A(4, kind="int")],
         differentiable=False, dtypes=INTS),
    Case("bitwise_or_int", lax.bitwise_or, [A(3, 4, kind="int"), A(4, kind="int")],
         differentiable=False, dtypes=INTS),
    Case("bitwise_xor", lax.bitwise_xor, [A(3, 4, kind="int"), A(3, 4, kind="int")],
         differentiable=False, dtypes=INTS),
    Case("bitwise_xor_bool", lax.bitwise_xor, [A(3, kind="bool"), A(3, kind="bool")],
         differentiable=False, dtypes=INTS),
    Case("bitwise_not_int", lax.bitwise_not, [A(3, 4, kind="int")], differentiable=False,
         dtypes=INTS),
    Case("shift_left", lax.shift_left, [A(3, 4, kind="int"), A(4, kind="int")],
         differentiable=False, dtypes=(I64,)),
    Case("shift_right_arithmetic", lax.shift_right_arithmetic,
         [A(3, 4, kind="int"), A(4, kind="int")], differentiable=False, dtypes=(I64,)),
    Case("shift_right_logical", lax.shift_right_logical,
         [A(3, 4, kind="int"), A(4, kind="int")], differentiable=False, dtypes=(I64,)),
    Case("population_count", lax.population_count, [A(3, 4, kind="int")],
         differentiable=False, dtypes=INTS),
    Case("clz", lax.clz, [A(3, 4, kind="int")], differentiable=False, dtypes=INTS),
    Case("square", lax.square, [A(3, 4)], reference=np.square),
    Case("square_int", lax.square, [A(3, 4, kind="int")], differentiable=False, dtypes=INTS,
         reference=np.square),
    Case("reciprocal", lax.reciprocal, [A(3, 4, kind="away0")], reference=np.reciprocal),
    # rounding below the step's resolution: the derivative (the tangent rounded alike) is 1
    Case("reduce_precision_fine", lambda x: lax.reduce_precision(x * x, 11, 44), [A(3, 4)],
         reference=lambda x: x * x),
    Case("mulhi", lax.mulhi, [A(3, 4, kind="int"), A(4, kind="int")], differentiable=False,
         dtypes=(I64,), reference=lambda x, y: np.where(x * y < 0, -1, 0)),
    Case("reduce_xor_int", lambda x: lax.reduce_xor(x, (0, 2)), [A(3, 2, 5, kind="int")],
         differentiable=False, dtypes=(I64,),
         reference=lambda x: np.bitwise_xor.reduce(x, axis=(0, 2))),
    Case("reduce_and_int", lambda x: lax.reduce_and(x, (1,)), [A(3, 4, kind="int")],
         differentiable=False, dtypes=(I64,),
         reference=lambda x: np.bitwise_and.reduce(x, axis=1)),
    Case("reduce_or_bool", lambda p: lax.reduce_or(p, (1,)), [A(4, 3, kind="bool")],
         differentiable=False, dtypes=INTS, reference=lambda p: p.any(1)),
    Case("bitcast_convert_type_narrower", lambda x: lax.bitcast_convert_type(x, np.uint16),
         [A(3, 2, kind="int")], differentiable=False, dtypes=(I64,),
         reference=lambda x: x.view(np.uint16).reshape(3, 2, 4)),
    # primitives with no jax.lax name, behind functrans.numpy functions
    Case("bessel_i0", elementwise.bessel_i0, [A(3, 4)]),
    Case("bessel_i1", elementwise.bessel_i1, [A(3, 4, kind="zeros")]),
    Case("bessel_i1_large", lambda x: elementwise.bessel_i1(x * 20.0), [A(5, kind="away0")],
         tol=1e-6),
    Case("ldexp", elementwise.ldexp, [A(3, 4), A(4, kind="int")]),
    Case("frexp_exponent", elementwise.frexp_exponent, [A(3, 4, kind="zeros")],
         differentiable=False),
    Case("signbit", elementwise.signbit, [A(3, 4, kind="zeros")], differentiable=False),
    Case("gcd", elementwise.gcd, [A(3, 4, kind="int"), A(4, kind="int")], differentiable=False,
         dtypes=INTS),
    Case("lcm", elementwise.lcm, [A(3, 4, kind="int"), A(4, kind="int")], differentiable=False,
         dtypes=INTS),
]

C = numpy_case


def _unary(name, *args, **kw):
    return lambda m, x: getattr(m, name)(x, *args, **kw)


def _off_the_jumps(name):
    # x = n/2 + 1/4 over divisors within 2% of 1/2: x / y stays 0.4 away from integers.
    return lambda m, x, y: getattr(m, name)(x, 0.5 + 0.02 * y)


def _binary(name):
    return lambda m, x, y: getattr(m, name)(x, y)


NUMPY_CASES = [
    # inverse hyperbolics and the array API's aliases
    C("arcsinh", _unary("arcsinh"), A(3, 4), dtypes=WITH_COMPLEX),
    C("arccosh", lambda m, x: m.arccosh(x + 1.0), A(3, 4, kind="pos"), dtypes=WITH_COMPLEX),
    C("arctanh", _unary("arctanh"), A(3, 4, kind="unit"), dtypes=(F64, F32, C128)),
    C("asin", _unary("asin"), A(4, kind="unit")),
    C("acos", _unary("acos"), A(4, kind="unit")),
    C("atan", _unary("atan"), A(4)),
    C("atan2", _binary("atan2"), A(3, 4), A(4, kind="away0")),
    C("asinh", _unary("asinh"), A(4)),
    C("acosh", lambda m, x: m.acosh(x + 1.0), A(4, kind="pos")),
    C("atanh", _unary("atanh"), A(4, kind="unit"), dtypes=FLOATS),
    C("pow", _binary("pow"), A(3, 4, kind="pos"), A(4), dtypes=FLOATS),
    # roots, norms, signs
    C("cbrt", _unary("cbrt"), A(3, 4, kind="away0")),
    C("hypot", _binary("hypot"), A(3, 4, kind="away0"), A(4)),
    C("hypot_scalar", lambda m, x: m.hypot(x, 2.0), A(5)),
    C("copysign", _binary("copysign"), A(3, 4, kind="away0"), A(4, kind="away0")),
    C("signbit", _unary("signbit"), A(3, 4, kind="zeros"), diff=False),
    C("fabs", _unary("fabs"), A(3, 4, kind="away0")),
    C("heaviside", _binary("heaviside"), A(3, 4, kind="away0"), A(4), dtypes=FLOATS),
    C("heaviside_at_0", lambda m, x, y: m.heaviside(x * 0, y), A(3, 4), A(4), dtypes=FLOATS),
    C("heaviside_grid", _binary("heaviside"), A(3, 4, kind="grid"), A(4), dtypes=FLOATS,
      diff=False),
    C("sinc", _unary("sinc"), A(3, 4, kind="away0"), dtypes=WITH_COMPLEX),
    C("sinc_zeros", _unary("sinc"), A(3, 4, kind="zeros"), dtypes=FLOATS),
    # nan-skipping extrema
    C("fmax", _binary("fmax"), A(3, 4), A(4)),
    C("fmin", _binary("fmin"), A(3, 4), A(4)),
    C("fmax_nonfinite", _binary("fmax"), A(3, 4, kind="nonfinite"), A(4), dtypes=FLOATS,
      diff=False),
    C("fmin_nonfinite", _binary("fmin"), A(4), A(3, 4, kind="nonfinite"), dtypes=FLOATS,
      diff=False),
    # division with remainders
    C("fmod", _off_the_jumps("fmod"), A(3, 4, kind="quarter"), A(4, kind="unit")),
    C("mod", _off_the_jumps("mod"), A(3, 4, kind="quarter"), A(4, kind="unit")),
    C("remainder", _off_the_jumps("remainder"), A(3, 4, kind="quarter"), A(4, kind="unit")),
    C("floor_divide", _off_the_jumps("floor_divide"), A(3, 4, kind="quarter"), A(4, kind="unit")),
    C("divmod", _off_the_jumps("divmod"), A(3, 4, kind="quarter"), A(4, kind="unit")),
    # NumPy before 2.1 gave float64 for integers; functrans keeps them, as 2.1+ and JAX do.
    C("trunc", _unary("trunc"), A(3, 4, kind="quarter"),
      reference=lambda x: np.trunc(x).astype(x.dtype)),
    # NumPy 2.5 deprecates np.fix for np.trunc, the same rounding; JAX keeps fix.
    C("fix", _unary("fix"), A(4, kind="quarter"), reference=lambda x: np.trunc(x).astype(x.dtype)),
    C("rint", _unary("rint"), A(3, 4, kind="quarter"), dtypes=WITH_COMPLEX),
    C("modf", _unary("modf"), A(3, 4, kind="quarter")),
    # floating-point representation
    C("ldexp", _binary("ldexp"), A(3, 4), A(4, kind="int")),
    # spread values mapped to at least 3% from every power of two (where 2**-e jumps)
    C("frexp_mantissa", lambda m, x: m.frexp(0.7 * x + 0.1)[0], A(3, 4, kind="spread")),
    C("frexp_zeros", _unary("frexp"), A(3, 4, kind="zeros"), diff=False),
    C("nextafter", _binary("nextafter"), A(3, 4), A(4)),
    C("spacing", _unary("spacing"), A(3, 4, kind="zeros")),
    # powers, logarithms, angles
    C("float_power", _binary("float_power"), A(3, 4, kind="pos"), A(4), dtypes=WITH_COMPLEX),
    C("logaddexp2", _binary("logaddexp2"), A(3, 4), A(4)),
    C("logical_xor", _binary("logical_xor"), A(3, 4, kind="grid"), A(4, kind="bool"),
      dtypes=FLOATS, diff=False),
    C("deg2rad", _unary("deg2rad"), A(4)),
    C("rad2deg", _unary("rad2deg"), A(4)),
    C("radians", _unary("radians"), A(4)),
    C("degrees", _unary("degrees"), A(4)),
    C("angle", _unary("angle"), A(3, 4, kind="away0"), dtypes=WITH_COMPLEX),
    C("angle_deg", _unary("angle", deg=True), A(4, kind="away0"), dtypes=(F64, C128)),
    C("i0", _unary("i0"), A(3, 4)),
    C("i0_large", lambda m, x: m.i0(x * 20.0), A(5, kind="away0"), tol=1e-6),
    C("nan_to_num", _unary("nan_to_num"), A(3, 4, kind="nonfinite"), dtypes=(F64, F32, C128),
      diff=False),
    C("nan_to_num_finite", _unary("nan_to_num"), A(3, 4)),
    C("nan_to_num_values", _unary("nan_to_num", nan=1.5, posinf=9.0, neginf=-9.0),
      A(3, 4, kind="nonfinite"), dtypes=FLOATS, diff=False),
    # predicates
    C("isinf", _unary("isinf"), A(3, 4, kind="nonfinite"), dtypes=(F64, F32, C128, I64),
      diff=False),
    C("isposinf", _unary("isposinf"), A(3, 4, kind="nonfinite"), diff=False),
    C("isneginf", _unary("isneginf"), A(3, 4, kind="nonfinite"), diff=False),
    C("isreal", _unary("isreal"), A(3, 4, kind="grid"), dtypes=WITH_COMPLEX, diff=False),
    C("iscomplex", _unary("iscomplex"), A(3, 4, kind="grid"), dtypes=WITH_COMPLEX, diff=False),
    C("isclose", lambda m, x, y: m.isclose(x, x + 1e-6 * y), A(3, 4), A(4), dtypes=FLOATS,
      diff=False),
    C("isclose_nonfinite", lambda m, x, y: m.isclose(x, y, equal_nan=True),
      A(3, 4, kind="nonfinite"), A(3, 4, kind="nonfinite"), dtypes=FLOATS, diff=False),
    C("allclose", lambda m, x, y: m.allclose(x, x + 1e-9 * y), A(3, 4), A(4), dtypes=FLOATS,
      diff=False),
    C("array_equal", lambda m, x: m.array_equal(x, x), A(3, 4), diff=False),
    C("array_equal_nan", lambda m, x: m.array_equal(x, x, equal_nan=True),
      A(3, 4, kind="nonfinite"), dtypes=FLOATS, diff=False),
    C("array_equiv", lambda m, x, y: m.array_equiv(x, y), A(3, 4, kind="grid"),
      A(4, kind="grid"), diff=False),
    # integers and bits
    C("bitwise_and", _binary("bitwise_and"), A(3, 4, kind="int"), A(4, kind="int"),
      dtypes=INTS, diff=False),
    C("bitwise_or", _binary("bitwise_or"), A(3, 4, kind="int"), A(4, kind="int"), dtypes=INTS,
      diff=False),
    C("bitwise_xor", _binary("bitwise_xor"), A(3, 4, kind="bool"), A(4, kind="bool"),
      dtypes=INTS, diff=False),
    C("invert", _unary("invert"), A(3, 4, kind="int"), dtypes=INTS, diff=False),
    C("bitwise_not", _unary("bitwise_not"), A(4, kind="bool"), dtypes=INTS, diff=False),
    C("bitwise_invert", _unary("bitwise_invert"), A(4, kind="int"), dtypes=INTS, diff=False),
    C("left_shift", _binary("left_shift"), A(3, 4, kind="int"), A(4, kind="int"),
      dtypes=(I64,), diff=False),
    C("right_shift", _binary("right_shift"), A(3, 4, kind="int"), A(4, kind="int"),
      dtypes=(I64,), diff=False),
    C("bitwise_left_shift", _binary("bitwise_left_shift"), A(4, kind="int"), A(4, kind="int"),
      dtypes=(I64,), diff=False),
    C("bitwise_right_shift", _binary("bitwise_right_shift"), A(4, kind="int"),
      A(4, kind="int"), dtypes=(I64,), diff=False),
    C("bitwise_count", _unary("bitwise_count"), A(3, 4, kind="int"), dtypes=INTS, diff=False),
    C("gcd", _binary("gcd"), A(3, 4, kind="int"), A(4, kind="int"), dtypes=INTS, diff=False),
    C("lcm", _binary("lcm"), A(3, 4, kind="int"), A(4, kind="int"), dtypes=INTS, diff=False),
    C("floor_divide_int", _binary("floor_divide"), A(3, 4, kind="int"), A(4, kind="away0"),
      dtypes=(I64,), diff=False),
    C("mod_int", _binary("mod"), A(3, 4, kind="int"), A(4, kind="away0"), dtypes=(I64,),
      diff=False),
    C("fmod_int", _binary("fmod"), A(3, 4, kind="int"), A(4, kind="away0"), dtypes=(I64,),
      diff=False),
    C("fmax_int", _binary("fmax"), A(3, 4, kind="int"), A(4, kind="int"), dtypes=(I64,),
      diff=False),
]

# -- statistics and the nan-skipping reductions (functrans/numpy/_statistics.py) ------------


def _sprinkled(m, x):
    """A "nonfinite" draw (nan at every third place, infinities elsewhere) with its
    infinities made finite: nan at fixed places, whatever the values."""
    return m.where(m.isinf(x), 0.5, x)


def _nan_row(m, x):
    """``_sprinkled(x)`` under a row of nan only: the all-nan slices of axis 1."""
    return m.concatenate([_sprinkled(m, x), m.full_like(x[:1], m.nan)], axis=0)


def _nan_case(name, **kw):
    """Derivatives on scattered nan; values (no derivatives) with an all-nan row too."""
    label = "_".join(f"{k}{v}" for k, v in kw.items()) or "all"
    return [C(f"{name}_{label}", lambda m, x: getattr(m, name)(_sprinkled(m, x), **kw),
              A(4, 5, kind="nonfinite"), dtypes=FLOATS),
            C(f"{name}_{label}_nan_row", lambda m, x: getattr(m, name)(_nan_row(m, x), **kw),
              A(3, 4, kind="nonfinite"), dtypes=FLOATS, diff=False)]


NUMPY_CASES += [
    C("var_correction", lambda m, x: m.var(x, axis=0, correction=1), A(4, 3)),
    C("std_correction", lambda m, x: m.std(x, correction=1, keepdims=True), A(4, 3)),
    C("cumulative_sum", lambda m, x: m.cumulative_sum(x, axis=1), A(3, 4)),
    C("cumulative_sum_initial", lambda m, x: m.cumulative_sum(x, include_initial=True), A(5)),
    C("cumulative_prod", lambda m, x: m.cumulative_prod(x, axis=0, include_initial=True),
      A(3, 4)),
    C("average", lambda m, x: m.average(x, axis=1), A(3, 4)),
    C("average_weights", lambda m, x, w: m.average(x, axis=0, weights=w, returned=True),
      A(3, 4), A(3, kind="pos")),
    C("average_full_weights", lambda m, x, w: m.average(x, weights=w, keepdims=True), A(3, 4),
      A(3, 4, kind="pos")),
    C("ptp", lambda m, x: m.ptp(x, axis=0), A(3, 4, kind="spread")),
    C("cov", lambda m, x: m.cov(x), A(3, 5), dtypes=WITH_COMPLEX),
    C("cov_columns_bias", lambda m, x: m.cov(x, rowvar=False, bias=True), A(5, 2)),
    C("cov_y_ddof", lambda m, x, y: m.cov(x, y, ddof=2), A(5), A(2, 5)),
    C("cov_weights", lambda m, x, w, f: m.cov(x, fweights=m.abs(f) + 1, aweights=w),
      A(2, 4), A(4, kind="pos"), A(4, kind="int")),
    C("corrcoef", lambda m, x: m.corrcoef(x), A(3, 5, kind="spread"), dtypes=(F64, F32, C128)),
    C("corrcoef_pair", lambda m, x, y: m.corrcoef(x, y), A(6), A(6)),
    *[case for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nancumsum",
                        "nancumprod")
      for kw in ({}, {"axis": 1}) for case in _nan_case(name, **kw)],
    *_nan_case("nanvar", axis=0, ddof=1),
    *_nan_case("nanstd", axis=1, correction=1, keepdims=True),
    *[case for name in ("nanmin", "nanmax") for axis in (0, 1)
      for case in _nan_case(name, axis=axis)],
    *[C(f"{name}_axis{axis}", lambda m, x, name=name, axis=axis: getattr(m, name)(
        _sprinkled(m, x), axis=axis), A(4, 5, kind="nonfinite"), dtypes=FLOATS, diff=False)
      for name in ("nanargmin", "nanargmax") for axis in (None, 1)],
    C("nansum_int", lambda m, x: m.nansum(x, axis=0), A(3, 4, kind="int"), dtypes=(I64,),
      diff=False),
]
