"""``functrans.scipy.special``: SciPy's special functions with JAX's ``jax.scipy.special``
names, differentiable (to any order) and batchable.

Integer and boolean arguments are promoted to float64 first; float32 stays float32.  The
kernels are SciPy's (``cupyx.scipy.special`` on CuPy arrays), so this needs SciPy:
``pip install "functrans[scipy]"``.

Edges follow JAX: ``xlogy(0, y)`` and ``xlog1py(0, y)`` are 0 for every ``y`` with
derivatives ``log(y)`` and ``x / y`` in ``x`` and ``y``; ``entr`` is ``-inf`` below 0;
``log_ndtr`` stays accurate far in the lower tail (an asymptotic series below -37, or -10
in float32); ``gammainc``/``gammaincc`` differentiate in ``x`` to any order and once in
``a``; ``zeta`` differentiates in ``q`` only; ``polygamma`` takes an integer order.

>>> import numpy as np, functrans as ft, functrans.scipy.special as special
>>> round(float(special.log_ndtr(-40.0)), 6)
-804.608442
>>> float(ft.grad(special.xlogy)(0.0, 2.0)) == float(np.log(2.0))
True
"""
from __future__ import annotations

import fractions
import functools
import math
import operator

import numpy as np

import functrans.numpy as fnp
from functrans import lax, nn
from functrans.core import ConcretizationTypeError, get_aval
from functrans.primitives.custom_derivatives import library_custom_jvp
from functrans.primitives import special_integrals as integrals
from functrans.primitives.special import bessel_jv as _bessel_jv
from functrans.primitives.special import hyp1f1 as _hyp1f1_primitive
from functrans.primitives.special import hyp2f1 as _hyp2f1_primitive
from functrans.primitives.special import ndtri as _ndtri_primitive
from functrans.scipy._util import inexact, inexact_all

__all__ = [
    "bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
    "dawsn", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp1", "expi", "expit",
    "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln", "gammasgn",
    "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "log_softmax",
    "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch",
    "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y", "wofz", "xlog1py",
    "xlogy", "zeta",
]


# -- error function and the normal distribution --------------------------------------------


def erf(x):
    """The error function ``2/sqrt(pi) int_0^x exp(-t^2) dt``.

    >>> round(float(erf(0.5)), 10)
    0.5204998778
    """
    return lax.erf(inexact(x))


def erfc(x):
    """The complementary error function ``1 - erf(x)``, accurate for large ``x``.

    >>> float(erfc(0.0))
    1.0
    """
    return lax.erfc(inexact(x))


def erfinv(x):
    """The inverse of ``erf`` on ``[-1, 1]`` (±inf at ±1, nan outside).

    >>> round(float(erfinv(erf(0.75))), 12)
    0.75
    """
    return lax.erf_inv(inexact(x))


_SQRT_HALF = math.sqrt(0.5)


def ndtr(x):
    """The standard normal CDF ``Phi(x) = erfc(-x / sqrt(2)) / 2``.

    >>> float(ndtr(0.0))
    0.5
    """
    x = inexact(x)
    return 0.5 * lax.erfc(-x * _SQRT_HALF)


def ndtri(p):
    """The standard normal quantile, the inverse of ``ndtr`` on ``[0, 1]``.

    >>> round(float(ndtri(ndtr(1.5))), 12)
    1.5
    """
    return _ndtri_primitive(inexact(p))


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_ndtr_lower(x, series_order: int):
    # Below the lower cut Phi(x) underflows: log Phi(x) = -x^2/2 - log(-x) - log sqrt(2 pi)
    # + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n)), the asymptotic series of Mills' ratio.
    x2 = x * x
    term, total = fnp.ones_like(x), fnp.ones_like(x)
    for n in range(1, series_order + 1):
        term = term * (-(2 * n - 1)) / x2
        total = total + term
    return -0.5 * x2 - fnp.log(-x) - _LOG_SQRT_2PI + fnp.log(total)


def log_ndtr(x, series_order: int = 3):
    """``log(ndtr(x))``, accurate everywhere: ``log1p(-ndtr(-x))`` above 0, ``log(ndtr(x))``
    down to -37 (-10 in float32), and below that, where ``ndtr`` leaves the normal floats,
    the asymptotic series of order ``series_order`` (0 to 30; JAX's default 3).  Its
    derivative ``exp(log(pdf(x)) - log_ndtr(x))`` is finite at every order, wherever ``x``.

    >>> import numpy as np
    >>> log_ndtr(np.array([-40.0, 0.0, 3.0])).round(6)
    array([-8.04608442e+02, -6.93147000e-01, -1.35100000e-03])
    """
    if not 0 <= int(series_order) <= 30:
        raise ValueError(f"log_ndtr: series_order must be between 0 and 30, got "
                         f"{series_order}")
    return _log_ndtr_of_order(int(series_order))(inexact(x))


@functools.lru_cache(maxsize=None)
def _log_ndtr_of_order(series_order: int):
    @library_custom_jvp
    def log_ndtr(x):
        lower = -10.0 if get_aval(x).dtype == np.float32 else -37.0
        low, high = x < lower, x > 0
        # Each branch sees only inputs in its own range (no overflow, no warnings).
        middle = fnp.log(ndtr(fnp.where(low, lower, fnp.where(high, 0.0, x))))
        upper_tail = fnp.log1p(-ndtr(-fnp.where(high, x, 0.0)))
        lower_tail = _log_ndtr_lower(fnp.where(low, x, lower), series_order)
        return fnp.where(low, lower_tail, fnp.where(high, upper_tail, middle))

    @log_ndtr.defjvp
    def log_ndtr_jvp(primals, tangents):
        # pdf / ndtr as a difference of logs: differentiating log(ndtr) directly divides by
        # ndtr(x)^2, which underflows below -26.
        (x,), (t,) = primals, tangents
        value = log_ndtr(x)
        return value, t * fnp.exp(-0.5 * x * x - _LOG_SQRT_2PI - value)
    return log_ndtr


# -- logistic ------------------------------------------------------------------------------


def expit(x):
    """The logistic function ``1 / (1 + exp(-x))``, without overflow.

    >>> float(expit(0.0))
    0.5
    """
    return lax.logistic(inexact(x))


def logit(x):
    """The inverse of ``expit``: ``log(x / (1 - x))`` (-inf at 0, inf at 1).

    >>> float(logit(0.5))
    0.0
    """
    x = inexact(x)
    return fnp.log(x) - fnp.log1p(-x)


# -- gamma family --------------------------------------------------------------------------


def gammaln(x):
    """``log|Gamma(x)|``.

    >>> round(float(gammaln(10.0)), 8)  # log(9!)
    12.80182748
    """
    return lax.lgamma(inexact(x))


def digamma(x):
    """The digamma function, the derivative of ``gammaln``.

    >>> round(float(digamma(1.0)), 10)
    -0.5772156649
    """
    return lax.digamma(inexact(x))


def polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` at ``x``; ``n`` is a non-negative integer
    (an integer array or Python int, as in JAX) and is not differentiated.

    >>> round(float(polygamma(1, 1.0)), 10)  # pi^2 / 6
    1.6449340668
    """
    n_dtype = get_aval(fnp.asarray(n) if isinstance(n, (list, tuple)) else n).dtype
    if n_dtype.kind not in "iub":
        raise ValueError(f"polygamma: the order n must be of integer type, got "
                         f"{n_dtype.name}")
    x = inexact(x)
    if isinstance(n, (list, tuple)):
        n = fnp.asarray(n)
    aval = get_aval(x)
    return lax.polygamma(lax.convert_element_type(n, aval.dtype, aval.weak_type), x)


def gamma(x):
    """The gamma function, ``sign * exp(gammaln(x))`` with the sign of ``Gamma(x)``
    (negative on ``(-1, 0)``, ``(-3, -2)``, ...).

    >>> round(float(gamma(5.0)), 9), round(float(gamma(-0.5)), 9)
    (24.0, -3.544907702)
    """
    x = inexact(x)
    return _gamma_sign(x) * fnp.exp(lax.lgamma(x))


def betaln(a, b):
    """``log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``.

    >>> round(float(betaln(2.0, 3.0)), 10)  # log(1/12)
    -2.4849066498
    """
    a, b = inexact_all(a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``.

    >>> round(float(beta(2.0, 3.0)), 12)
    0.083333333333
    """
    a, b = inexact_all(a, b)
    sign = _gamma_sign(a) * _gamma_sign(b) * _gamma_sign(a + b)
    return sign * fnp.exp(betaln(a, b))


def _gamma_sign(x):
    # Gamma is negative where x < 0 and floor(x) is odd: on (-1, 0), (-3, -2), ...
    whole = fnp.floor(x)
    odd = whole - 2 * fnp.floor(0.5 * whole) != 0
    return 1.0 - 2.0 * fnp.astype((x < 0) & odd, get_aval(x).dtype)


def multigammaln(a, d: int):
    """The log of the multivariate gamma function of dimension ``d`` (a concrete int):
    ``d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2)`` for ``j`` in ``0 .. d-1``.

    >>> round(float(multigammaln(3.0, 2)), 8)
    1.55019499
    """
    if not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"multigammaln: d must be a concrete positive int (the dimension), "
                         f"got {d!r}")
    a = inexact(a)
    total = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(int(d)):
        total = total + lax.lgamma(a - j / 2)
    return total


def gammainc(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)``; differentiable in
    ``x`` to any order and twice in ``a`` (a third derivative in ``a`` raises
    NotImplementedError; mixed ones with ``x`` work).

    >>> round(float(gammainc(1.0, 2.0)), 10)  # 1 - exp(-2)
    0.8646647168
    """
    a, x = inexact_all(a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``;
    differentiable as ``gammainc``.

    >>> round(float(gammaincc(1.0, 2.0)), 10)  # exp(-2)
    0.1353352832
    """
    a, x = inexact_all(a, x)
    return lax.igammac(a, x)


def zeta(x, q=None):
    """The Hurwitz zeta function ``sum_k (k + q)^-x``; differentiable in ``q`` only.  As in
    JAX, ``q`` is required (``q=None``, the Riemann zeta function, raises).

    >>> round(float(zeta(2.0, 1.0)), 10)  # pi^2 / 6
    1.6449340668
    """
    if q is None:
        raise NotImplementedError("zeta: the Riemann zeta function (q=None) is not "
                                  "implemented; pass q=1.0 for it")
    x, q = inexact_all(x, q)
    return lax.zeta(x, q)


# -- Bessel --------------------------------------------------------------------------------


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``.

    >>> float(i0e(0.0))
    1.0
    """
    return lax.bessel_i0e(inexact(x))


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``.

    >>> round(float(i1e(1.0)), 10)
    0.2079104153
    """
    return lax.bessel_i1e(inexact(x))


# -- x log y and entropy -------------------------------------------------------------------


@library_custom_jvp
def xlogy(x, y):
    """``x * log(y)``, and 0 where ``x == 0`` (even at ``y == 0``).  Derivatives, as in
    JAX: ``log(y)`` in ``x`` and ``x / y`` in ``y``.

    >>> float(xlogy(0.0, 0.0)), round(float(xlogy(2.0, 3.0)), 10)
    (0.0, 2.1972245773)
    """
    x, y = inexact_all(x, y)
    zero = x == 0
    return fnp.where(zero, fnp.zeros_like(x), x * fnp.log(fnp.where(zero, 1.0, y)))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    x, y = inexact_all(*primals)
    tx, ty = tangents
    return xlogy(x, y), tx * fnp.log(y) + ty * fnp.divide(x, y)


@library_custom_jvp
def xlog1py(x, y):
    """``x * log1p(y)``, and 0 where ``x == 0`` (even at ``y == -1``).  Derivatives, as in
    JAX: ``log1p(y)`` in ``x`` and ``x / (1 + y)`` in ``y``.

    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    x, y = inexact_all(x, y)
    zero = x == 0
    return fnp.where(zero, fnp.zeros_like(x), x * fnp.log1p(fnp.where(zero, 0.0, y)))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    x, y = inexact_all(*primals)
    tx, ty = tangents
    return xlog1py(x, y), tx * fnp.log1p(y) + ty * fnp.divide(x, 1 + y)


@library_custom_jvp
def _xlogx(x):
    zero = x == 0
    return fnp.where(zero, fnp.zeros_like(x), x * fnp.log(fnp.where(zero, 1.0, x)))


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), t * (fnp.log(x) + 1)


def entr(x):
    """The entropy term ``-x log(x)``: 0 at 0 and ``-inf`` below 0.  Its derivative
    ``-(log(x) + 1)`` is ``inf`` at 0, as in JAX.

    >>> import numpy as np
    >>> entr(np.array([-1.0, 0.0, 1.0]))
    array([-inf,   0.,   0.])
    """
    x = inexact(x)
    negative = x < 0
    return fnp.where(negative, -np.inf, 0.0 - _xlogx(fnp.where(negative, 1.0, x)))


# -- reductions (shared with functrans.nn) -------------------------------------------------


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """``log(sum(b * exp(a), axis))`` without overflow, ``-inf`` entries allowed.  With
    ``return_sign=True``, returns ``(log|s|, sign(s))`` for ``s = sum(b * exp(a))`` (``b``
    may then have negative entries; without it a negative sum gives nan, as in JAX).

    >>> import numpy as np
    >>> float(logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -2.0]), return_sign=True)[1])
    -1.0
    """
    return nn.logsumexp(inexact(a), axis=axis, b=b, keepdims=keepdims,
                        return_sign=return_sign, where=where)


def softmax(x, *, axis=None):
    """``exp(x) / sum(exp(x), axis)``, by default over all axes (as SciPy and JAX's
    ``jax.scipy.special.softmax``; ``functrans.nn.softmax`` takes the last axis).

    >>> import numpy as np
    >>> softmax(np.zeros((2, 2)))
    array([[0.25, 0.25],
           [0.25, 0.25]])
    """
    return nn.softmax(inexact(x), axis=axis)


def log_softmax(x, *, axis=None):
    """``x - logsumexp(x, axis)``, by default over all axes.

    >>> import numpy as np
    >>> np.exp(log_softmax(np.zeros(4)))
    array([0.25, 0.25, 0.25, 0.25])
    """
    return nn.log_softmax(inexact(x), axis=axis)


# -- integrals: exponential, sine/cosine, Fresnel, Dawson, Faddeeva, Owen's T ---------------
# The kernels are the primitives of functrans/primitives/special_integrals.py.


def erfcx(x):
    """The scaled complementary error function ``exp(x^2) erfc(x)``, finite where
    ``erfc`` underflows.  Derivative ``2 x erfcx(x) - 2 / sqrt(pi)``.

    >>> round(float(erfcx(30.0)), 12)
    0.018795888861
    """
    return integrals.erfcx(inexact(x))


def dawsn(x):
    """Dawson's integral ``exp(-x^2) int_0^x exp(t^2) dt``.  Derivative ``1 - 2 x dawsn(x)``.

    >>> round(float(dawsn(1.0)), 10)
    0.5380795069
    """
    return integrals.dawsn(inexact(x))


def exp1(x):
    """The exponential integral ``E1(x) = int_x^inf exp(-t) / t dt``: ``inf`` at 0 and nan
    below 0, as SciPy's.  Derivative ``-exp(-x) / x``.

    >>> round(float(exp1(1.0)), 10)
    0.2193839344
    """
    return integrals.exp1(inexact(x))


def expi(x):
    """The exponential integral ``Ei(x)``, the principal value of ``int_-inf^x exp(t) / t
    dt`` (``-inf`` at 0).  Derivative ``exp(x) / x``.

    >>> round(float(expi(1.0)), 10)
    1.8951178164
    """
    return integrals.expi(inexact(x))


def expn(n, x):
    """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t^n dt`` for an
    integer ``n >= 0`` (a float ``n`` is truncated, as SciPy does; nan below 0).  The result
    has ``x``'s float dtype.  Differentiable in ``x`` (``-E_{n-1}(x)``); the derivative in
    ``n`` raises ValueError.

    >>> round(float(expn(2, 1.0)), 10)
    0.1484955068
    """
    if isinstance(n, (list, tuple)):
        n = fnp.asarray(n)
    x = inexact(x)
    aval = get_aval(x)
    return integrals.expn(lax.convert_element_type(n, aval.dtype, aval.weak_type), x)


def sici(x):
    """The sine and cosine integrals ``(Si(x), Ci(x))``: ``Si(x) = int_0^x sin(t) / t dt``
    and ``Ci(x) = gamma + log|x| + int_0^x (cos(t) - 1) / t dt`` (``-inf`` at 0; below 0
    the real part, as SciPy's real ``sici``).  Derivatives ``sin(x) / x`` (1 at 0) and
    ``cos(x) / x``.

    >>> si, ci = sici(1.0)
    >>> round(float(si), 10), round(float(ci), 10)
    (0.9460830704, 0.3374039229)
    """
    x = inexact(x)
    return integrals.sici_si(x), integrals.sici_ci(x)


def fresnel(x):
    """The Fresnel integrals ``(S(x), C(x))``, in SciPy's order: ``S(x) = int_0^x
    sin(pi t^2 / 2) dt`` and ``C(x) = int_0^x cos(pi t^2 / 2) dt``.  Their derivatives are
    the integrands.

    >>> s, c = fresnel(1.0)
    >>> round(float(s), 10), round(float(c), 10)
    (0.4382591474, 0.7798934004)
    """
    x = inexact(x)
    return integrals.fresnel_s(x), integrals.fresnel_c(x)


def spence(x):
    """Spence's function (the dilogarithm in SciPy's convention) ``int_1^x log(t) / (1 - t)
    dt``, for ``x >= 0`` (nan below).  Derivative ``log(x) / (1 - x)``: -1 at 1, its limit,
    and ``-inf`` at 0.

    >>> round(float(spence(0.0)), 10)  # pi^2 / 6
    1.6449340668
    """
    return integrals.spence(inexact(x))


def owens_t(h, a):
    """Owen's T function ``int_0^a exp(-h^2 (1 + t^2) / 2) / (2 pi (1 + t^2)) dt``,
    differentiable in both arguments.

    >>> round(float(owens_t(0.0, 1.0)), 12)  # 1/8
    0.125
    """
    h, a = inexact_all(h, a)
    return integrals.owens_t(h, a)


def wofz(z):
    """The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)``, complex for every input
    (complex64 for float32 and complex64, complex128 otherwise).  It is holomorphic:
    ``w'(z) = -2 z w(z) + 2 i / sqrt(pi)``; ``grad`` of a real function of it works with a
    real ``z``, and ``jvp`` with a complex one.

    >>> round(complex(wofz(1.0)).real, 10)  # exp(-1)
    0.3678794412
    """
    z = inexact(z)
    aval = get_aval(z)
    if aval.dtype.kind != "c":
        z = lax.convert_element_type(z, np.result_type(aval.dtype, np.complex64),
                                     aval.weak_type)
    return integrals.wofz(z)


def rel_entr(p, q):
    """The relative entropy term ``p log(p / q)`` for ``p > 0`` and ``q > 0``, 0 where
    ``p == 0`` and ``q >= 0``, ``inf`` elsewhere (SciPy's and JAX's conventions).  As in
    JAX, its derivatives are ``(log(p / q) + 1, -p / q)`` where ``p, q > 0`` and 0 elsewhere.

    >>> import numpy as np
    >>> rel_entr(np.array([0.0, 1.0, -1.0]), np.array([1.0, np.e, 1.0]))
    array([ 0., -1., inf])
    """
    p, q = inexact_all(p, q)
    inside = (p > 0) & (q > 0)
    # The formula sees only points inside, so the derivative is 0 (not nan) elsewhere.
    safe_p, safe_q = fnp.where(inside, p, 1.0), fnp.where(inside, q, 1.0)
    edge = fnp.where((p == 0) & (q >= 0), fnp.zeros_like(p), fnp.full_like(p, np.inf))
    return fnp.where(inside, safe_p * fnp.log(safe_p / safe_q), edge)


def kl_div(p, q):
    """The Kullback-Leibler divergence term ``p log(p / q) - p + q`` for ``p > 0`` and
    ``q > 0``, ``q`` where ``p == 0`` and ``q >= 0``, ``inf`` elsewhere.  As in JAX, it is
    ``rel_entr(p, q) - p + q``, so outside ``p, q > 0`` its derivatives are ``(-1, 1)``.

    >>> import numpy as np
    >>> kl_div(np.array([0.0, 1.0, 1.0]), np.array([2.0, 1.0, 0.0]))
    array([ 2.,  0., inf])
    """
    p, q = inexact_all(p, q)
    return rel_entr(p, q) - p + q


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic ``Y_n^m(theta, phi)`` of degree ``n`` and order ``m``
    (integers, ``|m| <= n``; 0 where ``|m| > n``), at colatitude ``theta`` and longitude
    ``phi``: ``sqrt((2n + 1) (n - m)! / (4 pi (n + m)!)) P_n^m(cos theta) exp(i m phi)``
    with the Condon-Shortley phase, as ``scipy.special.sph_harm_y``.  The arguments
    broadcast; the result is complex (complex64 for float32 angles).

    ``n_max`` is the largest degree (JAX's extra argument): degrees above it are clipped to
    it, as in JAX.  Without it ``n`` must be concrete.  Differentiable in ``theta`` and
    ``phi``; ``diff_n`` (SciPy's derivative orders) is not supported, as in JAX.

    >>> import numpy as np
    >>> y = sph_harm_y(1, 0, 0.0, 0.0)
    >>> round(float(y.real) ** 2 * 4 * np.pi / 3, 12)  # Y_1^0(0, phi)^2 = 3 / (4 pi)
    1.0
    """
    if diff_n not in (None, 0):
        raise NotImplementedError(
            f"sph_harm_y: diff_n={diff_n!r} (derivatives in theta and phi as SciPy's "
            "diff_n) is not supported, as in JAX; differentiate with functrans.grad or "
            "jacfwd instead")
    n, m = (fnp.asarray(v) if isinstance(v, (list, tuple)) else v for v in (n, m))
    for name, v in (("n", n), ("m", m)):
        if get_aval(v).dtype.kind not in "iub":
            raise ValueError(f"sph_harm_y: the {name} argument must be of integer type, "
                             f"got {get_aval(v).dtype.name}")
    if n_max is None:
        try:
            n_max = int(fnp.max(n))
        except ConcretizationTypeError:
            raise ConcretizationTypeError(
                "sph_harm_y: n is traced, so its largest value is not known; pass n_max= "
                "(a Python int, the largest degree) to use sph_harm_y under jit or vmap"
            ) from None
    n_max = int(n_max)
    theta, phi = inexact_all(theta, phi)
    n = fnp.minimum(n, n_max)
    order = fnp.abs(m)
    cos_t, sin_t = fnp.cos(theta), fnp.sin(theta)
    shape = fnp.broadcast_shapes(*(fnp.shape(v) for v in (n, m, theta, phi)))
    legendre = fnp.broadcast_to(fnp.zeros_like(theta), shape)  # on theta's device
    # The orthonormal associated Legendre functions by the usual stable recurrences:
    # diagonal P_k^k from P_{k-1}^{k-1}, then up in degree l for each order k.
    diagonal = fnp.full_like(theta, 1 / math.sqrt(4 * math.pi))
    for k in range(n_max + 1):
        if k > 0:
            diagonal = -math.sqrt((2 * k + 1) / (2 * k)) * sin_t * diagonal
        previous, current = fnp.zeros_like(diagonal), diagonal
        for degree in range(k, n_max + 1):
            if degree > k:
                a = math.sqrt((4 * degree ** 2 - 1) / (degree ** 2 - k ** 2))
                b = math.sqrt(((degree - 1) ** 2 - k ** 2) / (4 * (degree - 1) ** 2 - 1))
                previous, current = current, a * (cos_t * current - b * previous)
            legendre = fnp.where((order == k) & (n == degree), current, legendre)
    # Y_n^-m = (-1)^m conj(Y_n^m): the sign (-1)^m for negative orders.
    odd = (order % 2) == 1
    legendre = fnp.where((m < 0) & odd, -legendre, legendre)
    angle = fnp.astype(m, get_aval(phi).dtype) * phi
    return lax.complex(legendre * fnp.cos(angle), legendre * fnp.sin(angle))
# -- Bessel I of orders 0 and 1, Bessel J of integer orders --------------------------------


def i0(x):
    """The modified Bessel function of order 0, ``I0(x) = exp(|x|) i0e(x)`` (overflows to
    inf beyond about 713, as in JAX).

    >>> round(float(i0(1.0)), 10)
    1.2660658778
    """
    x = inexact(x)
    return fnp.exp(fnp.abs(x)) * lax.bessel_i0e(x)


def i1(x):
    """The modified Bessel function of order 1, ``I1(x) = exp(|x|) i1e(x)``; its derivative
    at 0 is 1/2.

    >>> round(float(i1(1.0)), 10)
    0.565159104
    """
    x = inexact(x)
    return fnp.exp(fnp.abs(x)) * lax.bessel_i1e(x)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """The Bessel functions of the first kind ``J_0(z), ..., J_v(z)`` stacked on a new
    leading axis (shape ``(v + 1, *z.shape)``), differentiable in ``z`` to any order through
    ``J_n' = (J_{n-1} - J_{n+1}) / 2``.  ``v`` and ``n_iter`` are concrete ints as in JAX;
    ``n_iter`` is checked but not needed (SciPy's ``jv`` kernel converges by itself, where
    JAX's recurrence runs ``n_iter`` steps).

    >>> import numpy as np
    >>> bessel_jn(np.array([0.0, 1.0]), v=1).round(6)
    array([[1.      , 0.765198],
           [0.      , 0.440051]])
    """
    try:
        v, n_iter = operator.index(v), operator.index(n_iter)
    except TypeError:
        raise TypeError(f"bessel_jn: v and n_iter must be concrete ints, got v={v!r} and "
                        f"n_iter={n_iter!r}") from None
    if v < 0 or n_iter < 0:
        raise ValueError(f"bessel_jn: v and n_iter must be non-negative, got v={v} and "
                         f"n_iter={n_iter}")
    z = inexact(z)
    if get_aval(z).dtype.kind == "c":
        raise ValueError("bessel_jn: complex input is not supported (as in JAX)")
    return fnp.stack([_bessel_jv(float(n), z) for n in range(v + 1)])


# -- gamma family, part 2 ------------------------------------------------------------------


def gammasgn(x):
    """The sign of the gamma function: 1 or -1, ``-1`` at ``-0.0``, nan at the poles (0 is
    not one: ``+-0.0`` give ``+-1``), at ``-inf`` and at nan.  Its derivative is 0.

    >>> import numpy as np
    >>> gammasgn(np.array([2.0, -0.5, -1.5, -2.0]))
    array([ 1., -1.,  1., nan])
    """
    x = inexact(x)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("gammasgn does not support complex input")
    whole = fnp.floor(x)
    negative = x < 0
    pole = (negative & (x == whole)) | fnp.isnan(x)
    finite = fnp.where(fnp.isfinite(whole), whole, 0.0)  # inf - inf would warn
    odd = finite - 2 * fnp.floor(0.5 * finite) != 0
    minus = (negative & odd) | ((x == 0) & fnp.signbit(x))
    return lax.stop_gradient(fnp.where(pole, np.nan, fnp.where(minus, -1.0, 1.0))
                             .astype(get_aval(x).dtype))


def loggamma(x):
    """The principal branch of ``log(Gamma(x))``, for real ``x``: ``gammaln(x)`` for
    ``x > 0`` and nan elsewhere (as in JAX; SciPy gives inf at 0).  Complex input is not
    supported.

    >>> import numpy as np
    >>> loggamma(np.array([3.0, -0.5])).round(8)
    array([0.69314718,        nan])
    """
    x = inexact(x)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("loggamma: complex input is not supported (functrans's lgamma is "
                         "real); use gammaln for log|Gamma(x)| of real x")
    return fnp.where(x > 0, lax.lgamma(fnp.where(x > 0, x, 1.0)), np.nan)


@library_custom_jvp
def _poch(z, m):
    sign = _gamma_sign(z + m) * _gamma_sign(z)
    ratio = sign * fnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return fnp.where(m == 0, fnp.ones_like(ratio), ratio)


@_poch.defjvp
def _poch_jvp(primals, tangents):
    # d/dz (z)_m = (psi(z + m) - psi(z)) (z)_m and d/dm (z)_m = psi(z + m) (z)_m, as JAX.
    (z, m), (tz, tm) = primals, tangents
    value = _poch(z, m)
    return value, value * (tz * (lax.digamma(z + m) - lax.digamma(z))
                           + tm * lax.digamma(z + m))


def poch(z, m):
    """The Pochhammer symbol ``(z)_m = Gamma(z + m) / Gamma(z)`` (1 at ``m == 0``), from
    the difference of log-gammas, so large arguments do not overflow on the way.
    Differentiable in both arguments, with JAX's rules.

    >>> round(float(poch(3.0, 2.0)), 10)  # 3 * 4
    12.0
    """
    z, m = inexact_all(z, m)
    if get_aval(z).dtype.kind == "c":
        raise ValueError("poch does not support complex input")
    return _poch(z, m)


def factorial(n, exact: bool = False):
    """``n! = Gamma(n + 1)`` in floating point, 0 for ``n < 0``.  As in JAX, only
    ``exact=False`` is supported.

    >>> import numpy as np
    >>> factorial(np.array([-1.0, 0.0, 4.0, 0.5])).round(8)
    array([ 0.        ,  1.        , 24.        ,  0.88622693])
    """
    if exact:
        raise NotImplementedError("factorial: exact=True is not supported (the floating "
                                  "result, exact=False, is what functrans computes)")
    n = inexact(n)
    return fnp.where(n < 0, 0.0, fnp.exp(lax.lgamma(fnp.where(n < 0, 0.0, n) + 1)))


def comb(N, k, *, repetition: bool = False):
    """``N`` choose ``k`` in floating point, ``exp(gammaln(N + 1) - gammaln(k + 1) -
    gammaln(N - k + 1))``: 0 when ``N < 0``, ``k < 0`` or ``k > N``.  With
    ``repetition=True``, the number of multisets, ``comb(N + k - 1, k)`` (1 at ``k == 0``
    for ``N >= 0``).  SciPy's ``exact=`` does not exist here, as in JAX.

    >>> round(float(comb(5, 2)), 9), round(float(comb(5, 2, repetition=True)), 9)
    (10.0, 15.0)
    """
    N, k = inexact_all(N, k)
    if repetition:
        return fnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    valid = (k <= N) & (N >= 0) & (k >= 0)
    N, k = fnp.where(valid, N, 0.0), fnp.where(valid, k, 0.0)
    value = fnp.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N - k + 1))
    return fnp.where(valid, value, 0.0)


# Below this |t|, exprel(t) = expm1(t) / t is summed from its Taylor series, whose terms
# t^j / (j + 1)! for j < 12 leave an error under 1e-20: the quotient loses digits there.
_EXPREL_CUT = 0.1


def _exprel(t):
    small = fnp.abs(t) < _EXPREL_CUT
    ts = fnp.where(small, t, 0.0)
    total, term = fnp.ones_like(t), fnp.ones_like(t)
    for j in range(1, 12):
        term = term * ts / (j + 1)
        total = total + term
    tl = fnp.where(small, 1.0, t)
    return fnp.where(small, total, fnp.expm1(tl) / tl)


def boxcox(x, lmbda):
    """The Box-Cox transform ``(x^lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda == 0``,
    computed as ``log(x) exprel(lmbda log(x))`` so that it is accurate, and smooth to any
    order, near ``lmbda == 0`` (its derivative in ``lmbda`` there is ``log(x)^2 / 2``; JAX
    gets 0).  nan for ``x < 0``.

    >>> round(float(boxcox(2.0, 1e-12)), 12), round(float(boxcox(2.0, 2.0)), 12)
    (0.69314718056, 1.5)
    """
    x, lmbda = inexact_all(x, lmbda)
    log_x = fnp.log(x)
    return log_x * _exprel(lmbda * log_x)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of ``1 + x``: ``((1 + x)^lmbda - 1) / lmbda``, ``log1p(x)`` at
    ``lmbda == 0``, accurate for small ``x`` and near ``lmbda == 0`` as ``boxcox``.

    >>> print(f"{float(boxcox1p(1e-10, 0.5)):.11e}")  # x - x^2 / 4 + ...
    9.99999999975e-11
    """
    x, lmbda = inexact_all(x, lmbda)
    log1p_x = fnp.log1p(x)
    return log1p_x * _exprel(lmbda * log1p_x)


# Bernoulli numbers B_0 .. B_n: exact rationals up to _BERNOULLI_EXACT, beyond it B_k for
# even k from B_{k-2} by B_k / B_{k-2} = -k (k - 1) zeta(k) / ((2 pi)^2 zeta(k - 2)).
_BERNOULLI_EXACT = 60


@functools.lru_cache(maxsize=None)
def _bernoulli_exact() -> tuple:
    numbers: list = [fractions.Fraction(1)]
    for m in range(1, _BERNOULLI_EXACT + 1):
        # sum_{j <= m} C(m + 1, j) B_j = 0 for m >= 1.
        total = sum(math.comb(m + 1, j) * numbers[j] for j in range(m))
        numbers.append(-total / (m + 1))
    return tuple(float(b) for b in numbers)


def _zeta_even(k: int) -> float:
    # Converges fast for the k > 60 it is used at: the third term is 3^-62 < 1e-29.
    return 1.0 + 2.0 ** -k + 3.0 ** -k


def bernoulli(n: int):
    """The Bernoulli numbers ``B_0, ..., B_n`` (``n + 1`` of them, float64, with ``B_1 =
    -1/2``); ``n`` is a concrete non-negative int.  Exact (rounded once) up to ``B_60``;
    inf once they overflow (``B_260`` and beyond).  Constants: no derivative.

    >>> bernoulli(4)
    array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333333])
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a concrete int, got {n!r}") from None
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}")
    values = list(_bernoulli_exact()[:n + 1])
    if n > _BERNOULLI_EXACT:
        last = _BERNOULLI_EXACT if _BERNOULLI_EXACT % 2 == 0 else _BERNOULLI_EXACT - 1
        # |B_k| / zeta(k) = 2 k! / (2 pi)^k, carried from the last exact even number.
        scaled = abs(values[last]) / _zeta_even(last)
        with np.errstate(over="ignore"):
            for k in range(last + 1, n + 1):
                if k % 2:
                    values.append(0.0)
                    continue
                scaled = float(np.float64(scaled) * (k * (k - 1) / (4 * math.pi ** 2)))
                sign = 1.0 if k % 4 == 2 else -1.0
                values.append(sign * scaled * _zeta_even(k))
    return fnp.asarray(np.array(values, dtype=np.float64))


# -- incomplete beta and hypergeometric functions ------------------------------------------


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b) = int_0^x t^(a-1) (1-t)^(b-1) dt
    / B(a, b)`` (nan for ``x`` outside ``[0, 1]``).  Differentiable in ``x`` to any order;
    the derivative in ``a`` or ``b`` raises ValueError, as in JAX.

    >>> round(float(betainc(2.0, 3.0, 0.5)), 10)
    0.6875
    """
    a, b, x = inexact_all(a, b, x)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("betainc does not support complex input")
    return lax.betainc(a, b, x)


def hyp1f1(a, b, x):
    """The confluent hypergeometric function ``1F1(a; b; x) = sum_k (a)_k / (b)_k x^k /
    k!``, with SciPy's values (accurate also for large ``|x|``), except that ``1F1(0; 0; x)
    = 1`` as in JAX (SciPy gives inf).  Differentiable in ``x`` to any order through
    ``d/dx 1F1(a; b; x) = a / b 1F1(a + 1; b + 1; x)``, and in ``a`` and ``b`` to the first
    order (then in ``x`` again to any order) through the series JAX sums too, taken on
    Kummer's transformation for ``x < 0``; a second derivative in ``a`` or ``b`` raises
    NotImplementedError.

    >>> round(float(hyp1f1(1.0, 2.0, 1.0)), 10)  # (e - 1) / 1
    1.7182818285
    """
    a, b, x = inexact_all(a, b, x)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("hyp1f1 does not support complex input")
    both_zero = (a == 0) & (b == 0)
    return fnp.where(both_zero, 1.0, _hyp1f1_primitive(a, fnp.where(both_zero, 1.0, b), x))


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function ``2F1(a, b; c; x)``, with SciPy's values
    (analytically continued below ``x = -1``; inf or nan at and beyond ``x = 1`` as SciPy).
    Differentiable in ``x`` to any order through ``d/dx 2F1(a, b; c; x) = a b / c
    2F1(a + 1, b + 1; c + 1; x)``, and in ``a``, ``b`` and ``c`` to the first order through
    their power series (Pfaff-transformed below ``x = -1/2``; nan at and beyond ``x = 1``
    and where the series cannot be summed, below about -500 and very near 1); a second
    derivative in the parameters raises NotImplementedError.

    >>> round(float(hyp2f1(1.0, 1.0, 2.0, -1.0)), 10)  # log(2)
    0.6931471806
    """
    a, b, c, x = inexact_all(a, b, c, x)
    if get_aval(x).dtype.kind == "c":
        raise ValueError("hyp2f1 does not support complex input")
    return _hyp2f1_primitive(a, b, c, x)


def __dir__() -> list[str]:
    return sorted(__all__)
