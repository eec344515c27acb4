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

import functools
import math

import numpy as np

import functrans.numpy as fnp
from functrans import lax, nn
from functrans.core import get_aval
from functrans.primitives.custom_derivatives import custom_jvp
from functrans.primitives.special import ndtri as _ndtri_primitive
from functrans.scipy._util import inexact, inexact_all

__all__ = [
    "beta", "betaln", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gamma",
    "gammainc", "gammaincc", "gammaln", "i0e", "i1e", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "multigammaln", "ndtr", "ndtri", "polygamma", "softmax", "xlog1py", "xlogy",
    "zeta",
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
    @custom_jvp
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
    ``x`` to any order and once in ``a`` (``lax.igamma_grad_a``; a second derivative in
    ``a`` raises NotImplementedError, mixed ones with ``x`` work).

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


@custom_jvp
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


@custom_jvp
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


@custom_jvp
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


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """``log(sum(b * exp(a), axis))`` without overflow, ``-inf`` entries allowed.  With
    ``return_sign=True``, returns ``(log|s|, sign(s))`` for ``s = sum(b * exp(a))`` (``b``
    may then have negative entries; without it a negative sum gives nan, as in JAX).

    >>> import numpy as np
    >>> float(logsumexp(np.array([1.0, 2.0]), b=np.array([1.0, -2.0]), return_sign=True)[1])
    -1.0
    """
    return nn.logsumexp(inexact(a), axis=axis, b=b, keepdims=keepdims,
                        return_sign=return_sign)


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


def __dir__() -> list[str]:
    return sorted(__all__)
