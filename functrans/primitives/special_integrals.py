"""Special-function primitives defined by integrals: the scaled complementary error function,
Dawson's integral, the exponential integrals, the sine and cosine integrals, the Fresnel
integrals, Spence's dilogarithm, Owen's T function and the Faddeeva function.

As in ``special``, the kernels are SciPy's (``cupyx.scipy.special`` on CuPy arrays), found
when a primitive first runs; every primitive is elementwise (unary) or broadcasting
(binary), so the factories of ``elementwise`` give it its type and batching rules, and each
JVP is written with other primitives, so derivatives of any order follow.

JAX's ``lax`` has none of these; ``functrans.scipy.special`` is their public face.  The
order ``n`` of ``expn`` is an integer and is not differentiated (an error says so).
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from functrans.primitives.elementwise import (add, binary, cos, div, eq, exp, log, mul, neg,
                                              select, sin, sub, unary)
from functrans.primitives.special import erf, kernel_impl, refuse

__all__ = [
    "erfcx_p", "dawsn_p", "exp1_p", "expi_p", "expn_p", "spence_p", "sici_si_p",
    "sici_ci_p", "fresnel_s_p", "fresnel_c_p", "owens_t_p", "wofz_p", "erfcx", "dawsn",
    "exp1", "expi", "expn", "spence", "sici_si", "sici_ci", "fresnel_s", "fresnel_c",
    "owens_t", "wofz",
]

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_HALF_PI = math.pi / 2
_INV_SQRT_TWO_PI = 1 / math.sqrt(2 * math.pi)
_INV_SQRT_TWO = 1 / math.sqrt(2)
# SciPy's kernels (cupyx's on CuPy), named in errors by their functrans.scipy.special name.
_kernel = functools.partial(kernel_impl, where="functrans.scipy.special")


def _safe_ratio(numerator: Callable, x, at_zero):
    """``numerator(x) / x``, and ``at_zero`` where ``x == 0`` (no 0 / 0 in any order)."""
    zero = eq(x, 0)
    safe = select(zero, 1, x)
    return select(zero, at_zero, div(numerator(safe), safe))


# erfcx(x) = exp(x^2) erfc(x): erfcx' = 2 x erfcx(x) - 2 / sqrt(pi).
erfcx_p = unary("erfcx", _kernel("erfcx", "erfcx"),
                lambda g, ans, x: mul(g, sub(mul(mul(2, x), ans), _TWO_OVER_SQRT_PI)),
                real_only=True)
# Dawson's integral D(x) = exp(-x^2) int_0^x exp(t^2) dt: D' = 1 - 2 x D(x).
dawsn_p = unary("dawsn", _kernel("dawsn", "dawsn"),
                lambda g, ans, x: mul(g, sub(1, mul(mul(2, x), ans))), real_only=True)
# E1(x) = int_x^inf exp(-t) / t dt and Ei(x) = -PV int_-x^inf exp(-t) / t dt.
exp1_p = unary("exp1", _kernel("exp1", "exp1"),
               lambda g, ans, x: mul(g, neg(div(exp(neg(x)), x))), real_only=True)
expi_p = unary("expi", _kernel("expi", "expi"),
               lambda g, ans, x: mul(g, div(exp(x), x)), real_only=True)


def _spence_derivative(g, ans, z):
    # spence(z) = int_1^z log(t) / (1 - t) dt; at z == 1 the ratio's limit is -1.
    one = eq(z, 1)
    safe = select(one, 2, z)
    return mul(g, select(one, -1, div(log(safe), sub(1, safe))))


spence_p = unary("spence", _kernel("spence", "spence"), _spence_derivative, real_only=True)

# Si(x) = int_0^x sin t / t dt (Si' -> 1 at 0) and Ci(x) = gamma + log|x| + int_0^x
# (cos t - 1) / t dt (Ci' = cos x / x, inf at 0 without a warning: grad of Si computes it).
sici_si_p = unary("sici_si", _kernel("sici", "sici", 0),
                  lambda g, ans, x: mul(g, _safe_ratio(sin, x, 1)), real_only=True)
sici_ci_p = unary("sici_ci", _kernel("sici", "sici", 1),
                  lambda g, ans, x: mul(g, _safe_ratio(cos, x, np.inf)), real_only=True)
# S(x) = int_0^x sin(pi t^2 / 2) dt and C(x) = int_0^x cos(pi t^2 / 2) dt (SciPy's order).
fresnel_s_p = unary("fresnel_s", _kernel("fresnel", "fresnel", 0),
                    lambda g, ans, x: mul(g, sin(mul(_HALF_PI, mul(x, x)))), real_only=True)
fresnel_c_p = unary("fresnel_c", _kernel("fresnel", "fresnel", 1),
                    lambda g, ans, x: mul(g, cos(mul(_HALF_PI, mul(x, x)))), real_only=True)


def _wofz_derivative(g, ans, z):
    # w(z) = exp(-z^2) erfc(-i z) is holomorphic: w' = -2 z w(z) + 2 i / sqrt(pi).
    return mul(g, add(mul(mul(-2, z), ans), 1j * _TWO_OVER_SQRT_PI))


def _require_complex(name: str) -> Callable:
    def abstract_eval(aval):
        if aval.dtype.kind != "c":
            raise TypeError(f"{name}: the operand must be complex, got {aval.dtype.name} "
                            f"(functrans.scipy.special.{name} converts real inputs first)")
        return aval
    return abstract_eval


wofz_p = unary("wofz", _kernel("wofz", "wofz"), _wofz_derivative,
               abstract_eval=_require_complex("wofz"))


def _expn_derivative(g, ans, n, x):
    # E_n' = -E_{n-1}; E_{-1}(x) = exp(-x) (x + 1) / x^2 is outside SciPy's domain.
    below = mul(exp(neg(x)), div(add(x, 1), mul(x, x)))
    return mul(g, neg(select(eq(n, 0), below, expn(select(eq(n, 0), 1, sub(n, 1)), x))))


expn_p = binary(
    "expn", _kernel("expn", "expn", integer_first=True),
    (refuse("expn: the derivative with respect to the order n is not defined (n is an "
             "integer); differentiate with respect to x only", ValueError),
     _expn_derivative),
    real_only=True)


def _owens_t_dh(g, ans, h, a):
    # d/dh T(h, a) = -phi(h) erf(a h / sqrt 2) / 2, phi the standard normal density.
    phi = mul(_INV_SQRT_TWO_PI, exp(mul(-0.5, mul(h, h))))
    return mul(g, mul(-0.5, mul(phi, erf(mul(_INV_SQRT_TWO, mul(a, h))))))


def _owens_t_da(g, ans, h, a):
    # d/da T(h, a) = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2)), the integrand at a.
    one_a2 = add(1, mul(a, a))
    return mul(g, div(exp(mul(-0.5, mul(mul(h, h), one_a2))), mul(2 * math.pi, one_a2)))


owens_t_p = binary("owens_t", _kernel("owens_t", "owens_t"), (_owens_t_dh, _owens_t_da),
                   real_only=True)


# -- functions binding them (functrans.scipy.special wraps them with argument promotion) ---


def erfcx(x):
    """Elementwise ``exp(x^2) erfc(x)``, without overflow for large ``x``.

    >>> float(erfcx(0.0))
    1.0
    """
    return erfcx_p.bind(x)


def dawsn(x):
    """Elementwise Dawson integral ``exp(-x^2) int_0^x exp(t^2) dt``.

    >>> float(dawsn(0.0))
    0.0
    """
    return dawsn_p.bind(x)


def exp1(x):
    """Elementwise exponential integral ``E1(x) = int_x^inf exp(-t) / t dt`` (nan below 0).

    >>> print(f"{float(exp1(1.0)):.10f}")
    0.2193839344
    """
    return exp1_p.bind(x)


def expi(x):
    """Elementwise exponential integral ``Ei(x)`` (``-E1(-x)`` below 0).

    >>> print(f"{float(expi(1.0)):.10f}")
    1.8951178164
    """
    return expi_p.bind(x)


def expn(n, x):
    """Elementwise generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n
    dt`` for an integer-valued ``n`` (as a float of ``x``'s dtype).

    >>> print(f"{float(expn(1.0, 1.0)):.10f}")
    0.2193839344
    """
    return expn_p.bind(n, x)


def spence(z):
    """Elementwise Spence function ``int_1^z log(t) / (1 - t) dt`` (SciPy's convention).

    >>> print(f"{float(spence(0.0)):.10f}")  # pi^2 / 6
    1.6449340668
    """
    return spence_p.bind(z)


def sici_si(x):
    """Elementwise sine integral ``Si(x) = int_0^x sin(t) / t dt``.

    >>> print(f"{float(sici_si(1.0)):.10f}")
    0.9460830704
    """
    return sici_si_p.bind(x)


def sici_ci(x):
    """Elementwise cosine integral ``Ci(x)`` (of ``|x|``: SciPy's real part below 0).

    >>> print(f"{float(sici_ci(1.0)):.10f}")
    0.3374039229
    """
    return sici_ci_p.bind(x)


def fresnel_s(x):
    """Elementwise Fresnel integral ``S(x) = int_0^x sin(pi t^2 / 2) dt``.

    >>> print(f"{float(fresnel_s(1.0)):.10f}")
    0.4382591474
    """
    return fresnel_s_p.bind(x)


def fresnel_c(x):
    """Elementwise Fresnel integral ``C(x) = int_0^x cos(pi t^2 / 2) dt``.

    >>> print(f"{float(fresnel_c(1.0)):.10f}")
    0.7798934004
    """
    return fresnel_c_p.bind(x)


def owens_t(h, a):
    """Elementwise Owen's T function ``int_0^a exp(-h^2 (1 + x^2) / 2) / (2 pi (1 + x^2))
    dx``.

    >>> print(f"{float(owens_t(0.0, 1.0)):.10f}")  # 1/8
    0.1250000000
    """
    return owens_t_p.bind(h, a)


def wofz(z):
    """Elementwise Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)`` of a complex ``z``.

    >>> complex(wofz(np.complex128(0.0)))
    (1+0j)
    """
    return wofz_p.bind(z)
