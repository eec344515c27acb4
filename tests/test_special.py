"""Edges, documented choices and errors of functrans.scipy.special, functrans.scipy.stats and
the special-function primitives (their sweep is tests/cases_special.py)."""
from __future__ import annotations

import fractions
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy
import scipy.special as ss
import scipy.stats as st

import functrans as ft
import functrans.scipy.special as S
from functrans import lax
from functrans.primitives.special import bessel_jv
import functrans.scipy.stats as stats
from functrans.scipy.stats import bernoulli, beta, gamma, multivariate_normal, norm, poisson

ROOT = pathlib.Path(__file__).resolve().parents[1]


# -- log_ndtr in the tails -----------------------------------------------------------------


@pytest.mark.parametrize("x", [-40.0, -100.0, -1000.0, -37.5, -30.0, -20.0, 5.0, 30.0])
def test_log_ndtr_tails_match_scipy_with_finite_derivatives(x):
    np.testing.assert_allclose(S.log_ndtr(x), ss.log_ndtr(x), rtol=1e-12)
    # d/dx log ndtr(x) = pdf(x) / ndtr(x), from SciPy's logs.
    want = np.exp(st.norm.logpdf(x) - ss.log_ndtr(x))
    np.testing.assert_allclose(ft.grad(S.log_ndtr)(x), want, rtol=1e-10, atol=1e-300)
    second = ft.grad(ft.grad(S.log_ndtr))(x)
    assert np.isfinite(second) and -1.001 <= second <= 0  # -1 + O(1/x^2) far out


def test_log_ndtr_float32_tail_and_series_order():
    x = np.float32([-40.0, -15.0, -9.0, 3.0])
    got = S.log_ndtr(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ss.log_ndtr(x.astype(np.float64)), rtol=2e-6)
    # A longer series is closer to SciPy at the switch point.
    errors = [abs(float(S.log_ndtr(-38.0, series_order=n)) - ss.log_ndtr(-38.0))
              for n in (0, 1, 3)]
    assert errors[0] > errors[1] > errors[2]
    with pytest.raises(ValueError, match="log_ndtr: series_order must be between 0 and 30"):
        S.log_ndtr(1.0, series_order=31)


# -- x log y, entropy ----------------------------------------------------------------------


def test_xlogy_and_xlog1py_are_zero_at_zero_with_jaxs_derivatives():
    assert float(S.xlogy(0.0, 0.0)) == 0.0 and float(S.xlogy(0.0, -1.0)) == 0.0
    assert float(S.xlog1py(0.0, -1.0)) == 0.0
    np.testing.assert_allclose(ft.grad(S.xlogy, argnums=(0, 1))(0.0, 2.0), (np.log(2.0), 0.0))
    np.testing.assert_allclose(ft.grad(S.xlog1py, argnums=(0, 1))(0.0, 1.0),
                               (np.log(2.0), 0.0))
    # At y == 0 the derivatives are JAX's: log(0) in x and 0 / 0 in y.
    with np.errstate(divide="ignore", invalid="ignore"):
        gx, gy = ft.grad(S.xlogy, argnums=(0, 1))(0.0, 0.0)
    assert gx == -np.inf and np.isnan(gy)
    x = np.array([0.0, 1.0, 2.0])
    np.testing.assert_array_equal(ft.vmap(S.xlogy)(x, np.array([0.0, 3.0, 0.5])),
                                  ss.xlogy(x, [0.0, 3.0, 0.5]))


def test_entr_edges():
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(S.entr(np.array([-1.0, 0.0, 1.0, 0.5])),
                                      ss.entr(np.array([-1.0, 0.0, 1.0, 0.5])))
        assert float(ft.grad(S.entr)(0.0)) == np.inf  # as JAX
    np.testing.assert_allclose(ft.grad(S.entr)(0.5), -(np.log(0.5) + 1))
    assert float(ft.grad(S.entr)(-1.0)) == 0.0


# -- logsumexp -----------------------------------------------------------------------------


def test_logsumexp_with_minus_inf_entries():
    a = np.array([[0.0, -np.inf], [-np.inf, -np.inf]])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(S.logsumexp(a, axis=1), [0.0, -np.inf])
    grad = ft.grad(lambda a: S.logsumexp(a[0]))(a)
    np.testing.assert_array_equal(grad, [[1.0, 0.0], [0.0, 0.0]])


def test_logsumexp_negative_b_and_return_sign_match_scipy():
    a = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]])
    b = np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 1.0]])
    for axis in (None, 0, 1):
        got = S.logsumexp(a, axis=axis, b=b, return_sign=True)
        want = ss.logsumexp(a, axis=axis, b=b, return_sign=True)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
        np.testing.assert_array_equal(got[1], want[1])
    # Without return_sign a negative sum has no logarithm (nan, as in JAX).
    with np.errstate(invalid="ignore"):
        assert np.isnan(S.logsumexp(a[0], b=b[0]))
    with np.errstate(divide="ignore"):
        value, sign = S.logsumexp(a[0], b=np.zeros(3), return_sign=True)
    assert float(value) == -np.inf and float(sign) == 0.0
    # log|s| is differentiable where s != 0, whatever its sign.
    f = lambda a: S.logsumexp(a, b=b[0], return_sign=True)[0]  # noqa: E731
    s = np.sum(b[0] * np.exp(a[0]))
    np.testing.assert_allclose(ft.grad(f)(a[0]), b[0] * np.exp(a[0]) / s, rtol=1e-13)


# -- erf_inv near ±1, Bessel at 0 ----------------------------------------------------------


def test_erfinv_near_plus_minus_one():
    x = np.array([-1.0, -1 + 1e-12, 1 - 1e-12, 1.0])
    np.testing.assert_allclose(S.erfinv(x), ss.erfinv(x), rtol=1e-13)
    inner = x[1:3]
    want = np.sqrt(np.pi) / 2 * np.exp(ss.erfinv(inner) ** 2)
    np.testing.assert_allclose(ft.vmap(ft.grad(S.erfinv))(inner), want, rtol=1e-12)
    x32 = np.float32([-0.9999, 0.9999])
    assert S.erfinv(x32).dtype == np.float32
    np.testing.assert_allclose(S.erfinv(x32), ss.erfinv(x32.astype(np.float64)), rtol=1e-5)


def test_bessel_derivatives_at_zero():
    assert float(ft.grad(S.i0e)(0.0)) == 0.0
    assert float(ft.grad(S.i1e)(0.0)) == 0.5
    assert float(ft.grad(lax.bessel_i1e)(np.float32(0.0))) == 0.5


# -- refused derivatives and bad arguments -------------------------------------------------


def test_second_shape_derivative_of_the_incomplete_gamma_function():
    """d²P/da² against a second difference of SciPy's gammainc, on both sides of x = a + 1
    (the series and the continued fraction) and for large a (Stirling's factor)."""
    import scipy.special as ss
    a = np.array([0.3, 0.7, 2.0, 5.0, 5.0, 30.0, 0.5, 12.0])
    x = np.array([0.2, 1.5, 1.0, 3.0, 9.0, 28.0, 4.0, 15.0])
    h = 1e-4
    want = (ss.gammainc(a + h, x) - 2 * ss.gammainc(a, x) + ss.gammainc(a - h, x)) / h**2
    got = ft.vmap(ft.grad(ft.grad(S.gammainc)))(a, x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(ft.vmap(ft.grad(ft.grad(S.gammaincc)))(a, x), -got, rtol=1e-13)


def test_refused_derivatives_name_the_argument():
    # Third order in the shape of the incomplete gamma function (first and second work).
    with pytest.raises(NotImplementedError, match="igamma_second_grad_a: the derivative "
                                                  "with respect to the shape a"):
        ft.grad(ft.grad(ft.grad(lambda a: S.gammainc(a, 2.0))))(1.5)
    with pytest.raises(NotImplementedError, match="igamma_second_grad_a"):
        ft.jacfwd(ft.hessian(lambda a: S.gammaincc(a, 2.0)))(1.5)
    with pytest.raises(ValueError, match="polygamma: the derivative with respect to the "
                                         "order m"):
        ft.grad(lambda m: lax.polygamma(m, 2.0))(1.0)
    with pytest.raises(NotImplementedError, match="zeta: the derivative with respect to "
                                                  "the exponent x"):
        ft.grad(lambda x: S.zeta(x, 2.0))(3.0)
    # The derivatives that exist, where the others are held fixed.
    np.testing.assert_allclose(ft.grad(lambda x: S.gammainc(1.5, x))(2.0),
                               np.exp(-2.0) * 2.0 ** 0.5 / ss.gamma(1.5), rtol=1e-13)
    np.testing.assert_allclose(ft.grad(lambda q: S.zeta(3.0, q))(2.0),
                               -3.0 * ss.zeta(4.0, 2.0), rtol=1e-13)


def test_bad_arguments_are_reported():
    with pytest.raises(ValueError, match="polygamma: the order n must be of integer type"):
        S.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="zeta: the Riemann zeta function"):
        S.zeta(2.0)
    with pytest.raises(ValueError, match="multigammaln: d must be a concrete positive int"):
        S.multigammaln(3.0, 0)
    with pytest.raises(NotImplementedError, match="allow_singular=True is not supported"):
        multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2), allow_singular=True)
    with pytest.raises(ValueError, match=r"cov must be a scalar or of shape \(2, 2\)"):
        multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.ones(2))
    with pytest.raises(TypeError, match="erf requires a real floating-point operand"):
        ft.make_jaxpr(lax.erf)(np.array([1, 2]))


def test_integer_arguments_promote_to_float64_and_float32_stays():
    assert S.gammaln(np.array([1, 2, 3])).dtype == np.float64
    np.testing.assert_allclose(S.gammainc(2, 3), ss.gammainc(2, 3), rtol=1e-14)
    assert S.gammainc(2, np.float32([3.0])).dtype == np.float32
    assert S.polygamma(np.array([0, 1]), np.float32(2.0)).dtype == np.float32


# -- stats edges ---------------------------------------------------------------------------


def test_stats_outside_the_support():
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(gamma.logpdf(np.array([-1.0, 0.0, 1.0]), 2.0),
                                      st.gamma.logpdf([-1.0, 0.0, 1.0], 2.0))
        np.testing.assert_array_equal(beta.logpdf(np.array([-0.5, 0.0, 1.0, 1.5]), 2.0, 3.0),
                                      st.beta.logpdf([-0.5, 0.0, 1.0, 1.5], 2.0, 3.0))
        np.testing.assert_allclose(poisson.logpmf(np.array([-1.0, 1.5, 2.0]), 2.0),
                                   st.poisson.logpmf([-1.0, 1.5, 2.0], 2.0))
        np.testing.assert_allclose(bernoulli.logpmf(np.array([-1, 0, 1, 2]), 0.3),
                                   st.bernoulli.logpmf([-1, 0, 1, 2], 0.3))
    np.testing.assert_allclose(poisson.cdf(np.array([-1.0, 0.0, 2.5]), 2.0),
                               st.poisson.cdf([-1.0, 0.0, 2.5], 2.0), rtol=1e-13)
    np.testing.assert_allclose(gamma.cdf(np.array([-1.0, 2.0]), 2.0),
                               st.gamma.cdf([-1.0, 2.0], 2.0), rtol=1e-13)
    # As JAX: the 0-quantile of a Bernoulli variable is 0 (SciPy says -1).
    np.testing.assert_array_equal(bernoulli.ppf(np.array([0.0, 0.3, 0.7, 1.0]), 0.4),
                                  [0.0, 0.0, 1.0, 1.0])
    # Outside the support the log-density is -inf with a zero (not nan) gradient.
    assert float(ft.grad(lambda a: gamma.logpdf(-1.0, a))(2.0)) == 0.0


def test_normal_tails_and_quantiles():
    np.testing.assert_allclose(norm.logcdf(-40.0), st.norm.logcdf(-40.0), rtol=1e-13)
    np.testing.assert_allclose(norm.logsf(40.0), st.norm.logsf(40.0), rtol=1e-13)
    q = np.array([1e-300, 1e-10, 0.3, 1 - 1e-10])
    np.testing.assert_allclose(norm.ppf(q, 1.0, 2.0), st.norm.ppf(q, 1.0, 2.0), rtol=1e-12)
    np.testing.assert_allclose(norm.isf(q, 1.0, 2.0), st.norm.isf(q, 1.0, 2.0), rtol=1e-9)
    # ppf inverts cdf, and so do their derivatives.
    np.testing.assert_allclose(ft.grad(norm.ppf)(norm.cdf(0.7)) * ft.grad(norm.cdf)(0.7),
                               1.0, rtol=1e-12)


# Points on both sides of each support's edges, the edges themselves, infinities and nan,
# and the parameters (after x) each distribution is checked with; SciPy's log-densities
# underflow to -inf far out (it takes the log of the density), so the points stop before.
_EDGE_X = np.array([-np.inf, -30.0, -1.0, -1e-300, 0.0, 1e-300, 0.5, 1.0, 1.001, 1.5,
                    2.0, 2 * np.pi, 6.3, 40.0, np.inf, np.nan])
_EDGE_PARAMS = {
    "cauchy": [(), (0.5, 2.0)], "laplace": [(), (0.5, 2.0)], "logistic": [(), (0.5, 2.0)],
    "gumbel_r": [(), (0.5, 2.0)], "gumbel_l": [(), (0.5, 2.0)],
    "expon": [(), (0.5, 2.0), (1.0, 1.0)], "uniform": [(), (0.5, 2.0), (-1.0, 2.0)],
    "chi2": [(1.0,), (2.0,), (3.5, 0.5, 2.0), (0.3,)],
    "pareto": [(1.0,), (2.5, 0.5, 0.5), (0.3, -1.0, 2.0)],
    "gennorm": [(0.5,), (1.0,), (2.0,), (3.7,)],
    "truncnorm": [(-1.0, 1.0), (0.0, np.inf), (-np.inf, 1.0), (1.0, 2.0), (-3.0, -0.5, 1.0, 2.0),
                  (-np.inf, np.inf)],
    "vonmises": [(0.0,), (1.0,), (50.0,)], "wrapcauchy": [(0.1,), (0.5,), (0.99,)],
}
_NEW = sorted(_EDGE_PARAMS)
# SciPy before 1.15 loses accuracy in the far tails these tests compare (seen in 1.13.0:
# expon.logcdf of x = 1e-300 is 0, cauchy.ppf of a probability of 1e-300 is -3e16 where
# the quantile is -6e299); 1.15.3 and later agree with functrans.
_TAILS_LIKE_SCIPY = pytest.mark.skipif(
    np.lib.NumpyVersion(scipy.__version__) < "1.15.0",
    reason=f"SciPy {scipy.__version__} is less accurate in the tails than functrans")


def _assert_like_scipy(name, function, args, rtol=1e-12):
    with np.errstate(all="ignore"):
        want = getattr(getattr(st, name), function)(*args)
        got = getattr(getattr(stats, name), function)(*args)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0,
                               err_msg=f"{name}.{function}{args[1:]}")


@_TAILS_LIKE_SCIPY
@pytest.mark.parametrize("name", _NEW)
def test_stats_edges_of_the_support_match_scipy(name):
    module = getattr(stats, name)
    for params in _EDGE_PARAMS[name]:
        for function in module.__all__:
            if function in ("ppf", "isf"):
                continue
            _assert_like_scipy(name, function, (_EDGE_X, *params))


@_TAILS_LIKE_SCIPY
@pytest.mark.parametrize("name", [n for n in _NEW if "ppf" in getattr(stats, n).__all__])
def test_stats_quantiles_at_the_ends_match_scipy(name):
    q = np.array([-0.5, 0.0, 1e-300, 1e-10, 0.1, 0.25, 0.5, 0.75, 0.9, 1 - 1e-10, 1.0, 1.5,
                  np.nan])
    params = {"pareto": (2.5, 0.5, 2.0)}.get(name, (0.5, 2.0))
    for function in ("ppf", "isf"):
        if function in getattr(stats, name).__all__:
            _assert_like_scipy(name, function, (q, *params))


def test_stats_invalid_parameters_give_nan_as_scipy():
    calls = [("cauchy", "cdf", (1.0, 0.0, -1.0)), ("expon", "logpdf", (1.0, 0.0, 0.0)),
             ("chi2", "logpdf", (1.0, -1.0)), ("chi2", "sf", (1.0, 0.0)),
             ("gennorm", "cdf", (1.0, 0.0)), ("gumbel_r", "ppf", (0.5, 0.0, -2.0)),
             ("laplace", "logpdf", (1.0, 0.0, -1.0)), ("logistic", "isf", (0.5, 0.0, 0.0)),
             ("pareto", "logcdf", (2.0, -1.0)), ("truncnorm", "logpdf", (0.5, 1.0, 0.0)),
             ("truncnorm", "cdf", (0.5, 1.0, 1.0)), ("uniform", "cdf", (0.5, 0.0, -1.0)),
             ("vonmises", "logpdf", (0.5, -1.0)), ("wrapcauchy", "pdf", (0.5, 1.0))]
    for name, function, args in calls:
        # Python scalars throughout: a zero scale is no ZeroDivisionError.
        with np.errstate(all="ignore"):
            got = getattr(getattr(stats, name), function)(*args)
            want = getattr(getattr(st, name), function)(*args)
        assert np.isnan(got) and np.isnan(want), (name, function, args)


#: the distributions written before the invalid-parameter convention, with valid shapes
_OLDER = {"norm": (), "t": (3.0,), "gamma": (2.0,), "beta": (2.0, 3.0)}
_OLDER_DISCRETE = {"poisson": (2.0,), "bernoulli": (0.3,)}


@pytest.mark.parametrize("name", sorted(_OLDER) + sorted(_OLDER_DISCRETE))
def test_stats_nan_points_and_invalid_parameters_follow_scipy(name):
    # nan in (a point, loc) gives nan, not the value outside the support (-inf, 0); a scale
    # <= 0 or an invalid shape gives nan, and a Python-scalar scale of 0 no ZeroDivisionError
    nan = float("nan")
    discrete = name in _OLDER_DISCRETE
    shapes = (_OLDER_DISCRETE if discrete else _OLDER)[name]
    locs_scales = [(0.0,), (nan,)] if discrete else [(0.0, 1.0), (0.0, 0.0), (0.0, -1.0),
                                                     (nan, 1.0)]
    invalid_shapes = {"t": [(-1.0,)], "gamma": [(0.0,)], "beta": [(2.0, -1.0)],
                      "poisson": [(-1.0,)], "bernoulli": [(1.5,)]}.get(name, [])
    module = getattr(stats, name)
    functions = [f for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "logpmf", "pmf")
                 if f in module.__all__]
    if name == "bernoulli":  # cdf(k, p) takes no loc, as in JAX
        functions.remove("cdf")
        for x in (nan, -0.5, 0.0, 0.5, 1.0):
            for p in (0.3, 1.5):
                with np.errstate(all="ignore"):
                    np.testing.assert_equal(float(module.cdf(x, p)), st.bernoulli.cdf(x, p))
    checked = 0
    for function in functions:
        for x in (nan, -0.5, 0.5, 1.0):
            for shape in [shapes] + invalid_shapes:
                for rest in locs_scales:
                    args = (x, *shape, *rest)
                    with np.errstate(all="ignore"):
                        got = float(getattr(module, function)(*args))
                        want = float(getattr(getattr(st, name), function)(*args))
                    np.testing.assert_allclose(got, want, rtol=1e-12,
                                               err_msg=f"{name}.{function}{args}")
                    checked += 1
    for function in ("ppf", "isf"):
        if function in module.__all__:
            for q in (nan, 0.3):
                for rest in [()] if discrete else locs_scales:   # ppf(q, p): no loc
                    with np.errstate(all="ignore"):
                        got = float(getattr(module, function)(q, *shapes, *rest))
                        want = float(getattr(getattr(st, name), function)(q, *shapes, *rest))
                    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert checked >= 16


@_TAILS_LIKE_SCIPY
def test_stats_tails_keep_their_accuracy():
    x = np.array([-40.0, -10.0, 10.0, 40.0])
    for name in ("cauchy", "gumbel_r", "gumbel_l", "logistic"):
        for function in ("cdf", "sf", "logcdf", "logsf"):
            if function in getattr(stats, name).__all__:
                _assert_like_scipy(name, function, (x,), rtol=1e-13)
    # A truncation 30 standard deviations out, where ndtr(b) - ndtr(a) would be 0.
    _assert_like_scipy("truncnorm", "logpdf", (np.array([29.5, 30.0]), 29.0, 31.0))
    _assert_like_scipy("truncnorm", "logsf", (np.array([29.5, 30.0]), 29.0, 31.0))
    _assert_like_scipy("truncnorm", "logcdf", (np.array([-29.5, -30.0]), -31.0, -29.0))
    _assert_like_scipy("expon", "logcdf", (np.array([1e-10, 0.5, 40.0]),))
    _assert_like_scipy("chi2", "logcdf", (np.array([1e-6, 60.0]), 3.0), rtol=1e-11)


def _symmetric_difference(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_stats_gradients_are_zero_outside_the_support_and_finite_at_branch_points():
    outside = [lambda a: stats.expon.logpdf(-1.0, 0.0, a), lambda a: stats.expon.logcdf(-1.0, a),
               lambda a: stats.chi2.logpdf(-1.0, a), lambda a: stats.chi2.logcdf(-1.0, a),
               lambda a: stats.pareto.logpdf(0.5, a), lambda a: stats.pareto.logcdf(0.5, a),
               lambda a: stats.truncnorm.logcdf(-2.0, -1.0, a),
               lambda a: stats.truncnorm.logsf(2.0, -a, 1.0),
               lambda a: stats.uniform.logpdf(3.0, 0.0, a),
               lambda a: stats.wrapcauchy.logpdf(-1.0, 0.5 / a)]
    for f in outside:
        assert float(f(2.0)) in (-np.inf, 0.0)
        assert float(ft.grad(f)(2.0)) == 0.0
    # Where one formula hands over to another, the derivative is that of the function: a
    # symmetric difference (which never sees the switch's position) agrees.
    switches = [
        (lambda q: stats.cauchy.ppf(q, 0.3, 2.0), 0.25),  # tan(pi (q - 1/2)) to -cot(pi q)
        (lambda q: stats.cauchy.isf(q, 0.3, 2.0), 0.75),
        (lambda x: stats.cauchy.logcdf(x), 0.0),  # log(cdf) to log1p(-sf)
        (lambda x: stats.gumbel_r.logsf(x), -np.log(np.log(2.0))),
        (lambda x: stats.laplace.cdf(x, 0.5), 0.5),  # the two exponentials
        (lambda x: stats.logistic.cdf(x), 0.0),
        (lambda x: stats.logistic.logpdf(x), 0.0),
        (lambda x: stats.expon.logcdf(x), np.log(2.0)),  # log1mexp's split
        (lambda x: stats.gennorm.cdf(x, 1.5), 0.0),  # the density at 0, not 0 * inf
        (lambda a: stats.truncnorm.logpdf(0.5, a, 2.0), 0.0),  # across 0 to the upper tail
        (lambda b: stats.truncnorm.logpdf(-1.0, -2.0, b), 0.0),
        (lambda x: stats.truncnorm.logcdf(x, -1.0, 2.0), 0.35),  # near the median
    ]
    for f, x in switches:
        for df in (ft.grad(f), ft.jacfwd(f)):
            got = float(df(x))
            assert np.isfinite(got)
            np.testing.assert_allclose(got, _symmetric_difference(f, x), rtol=1e-6)
    # Second derivatives too, where both sides are smooth.
    second = ft.grad(ft.grad(stats.logistic.logpdf))(0.0)
    np.testing.assert_allclose(second, -0.5, rtol=1e-12)


def test_multivariate_normal_gradient_matches_the_closed_form():
    rng = np.random.default_rng(0)
    c = rng.standard_normal((3, 3))
    cov, mean, x = c @ c.T + np.eye(3), rng.standard_normal(3), rng.standard_normal((2, 3))
    np.testing.assert_allclose(multivariate_normal.logpdf(x, mean, cov),
                               st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-13)
    g = ft.grad(lambda m: multivariate_normal.logpdf(x[0], m, cov))(mean)
    np.testing.assert_allclose(g, np.linalg.solve(cov, x[0] - mean), rtol=1e-12)
    # d/dcov log N = (cov^-1 d d^T cov^-1 - cov^-1) / 2 (symmetric perturbations).
    d = np.linalg.solve(cov, x[0] - mean)
    want = 0.5 * (np.outer(d, d) - np.linalg.inv(cov))
    e = rng.standard_normal((3, 3))
    e = e + e.T
    _, t = ft.jvp(lambda s: multivariate_normal.logpdf(x[0], mean, s), (cov,), (e,))
    np.testing.assert_allclose(t, np.sum(want * e), rtol=1e-11)


# -- SciPy is optional ---------------------------------------------------------------------


def test_kernels_without_scipy_raise_an_import_error_that_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=r'functrans.lax.erf needs SciPy.*'
                                          r'pip install "functrans\[scipy\]"'):
        lax.erf(np.ones(2))


def test_functrans_imports_without_scipy():
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import functrans, functrans.numpy, functrans.lax, functrans.nn\n"
            "import functrans.scipy.special, functrans.scipy.stats\n"
            "try:\n    functrans.scipy.special.erf(1.0)\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
    assert 'pip install "functrans[scipy]"' in out.stdout, out.stderr


# -- optional: the same numbers as JAX -----------------------------------------------------

_JAX_CHECKS = [  # (name, args, argnums differentiated)
    ("erf", (0.3,), (0,)), ("erfc", (1.7,), (0,)), ("erfinv", (0.9,), (0,)),
    ("ndtr", (-1.2,), (0,)), ("ndtri", (0.2,), (0,)), ("log_ndtr", (-40.0,), (0,)),
    ("log_ndtr", (-5.0,), (0,)), ("log_ndtr", (3.0,), (0,)), ("expit", (0.7,), (0,)),
    ("logit", (0.3,), (0,)), ("gammaln", (2.5,), (0,)), ("digamma", (2.5,), (0,)),
    ("betaln", (2.5, 1.5), (0, 1)), ("xlogy", (0.0, 2.0), (0, 1)),
    ("xlog1py", (1.5, 0.5), (0, 1)), ("entr", (0.5,), (0,)), ("i0e", (-1.5,), (0,)),
    ("i1e", (-1.5,), (0,)), ("gammainc", (1.5, 2.0), (0, 1)),
    ("gammaincc", (1.5, 2.0), (0, 1)), ("gammainc", (30.0, 25.0), (0,)),
    ("gammaincc", (0.2, 7.0), (0,)),
    ("gamma", (-1.5,), (0,)), ("beta", (2.5, 1.5), (0, 1)), ("zeta", (3.0, 2.0), ()),
]


@pytest.mark.parametrize("name,args,argnums", _JAX_CHECKS,
                         ids=[f"{c[0]}{c[1]}" for c in _JAX_CHECKS])
def test_values_and_derivatives_match_jax(name, args, argnums):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_special = pytest.importorskip("jax.scipy.special")
    ours, theirs = getattr(S, name), getattr(jax_special, name)
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12)
    for i in argnums:
        np.testing.assert_allclose(ft.grad(ours, argnums=i)(*args),
                                   jax.grad(theirs, argnums=i)(*args), rtol=1e-10)


# -- Bessel, gamma part 2, incomplete beta, hypergeometric functions ------------

_JAX_CHECKS_MORE = [  # (name, args, argnums differentiated)
    ("i0", (-1.5,), (0,)), ("i1", (-1.5,), (0,)), ("loggamma", (2.5,), (0,)),
    ("poch", (2.5, 1.5), (0, 1)), ("factorial", (3.5,), (0,)), ("comb", (5.5, 2.0), (0, 1)),
    ("boxcox", (2.5, 0.7), (0, 1)), ("boxcox1p", (0.5, -0.3), (0, 1)),
    ("betainc", (1.3, 2.1, 0.4), (2,)), ("hyp1f1", (0.3, 1.7, 0.4), (0, 1, 2)),
    ("hyp1f1", (1.3, 2.7, -3.5), (0, 1, 2)), ("hyp2f1", (0.3, 0.7, 1.3, 0.2), (0, 1, 2, 3)),
    ("hyp2f1", (1.5, -0.7, 2.3, -0.6), (0, 1, 2, 3)), ("gammasgn", (-1.5,), ()),
]


@pytest.mark.parametrize("name,args,argnums", _JAX_CHECKS_MORE,
                         ids=[f"{c[0]}{c[1]}" for c in _JAX_CHECKS_MORE])
def test_more_values_and_derivatives_match_jax(name, args, argnums):
    test_values_and_derivatives_match_jax(name, args, argnums)


def test_bessel_jn_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_special = pytest.importorskip("jax.scipy.special")
    z = np.array([[0.5, 3.0], [7.5, -2.0]])
    np.testing.assert_allclose(S.bessel_jn(z, v=4), jax_special.bessel_jn(z, v=4),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ft.grad(lambda z: S.bessel_jn(z, v=2)[2])(1.3),
                               jax.grad(lambda z: jax_special.bessel_jn(z, v=2)[2])(1.3),
                               rtol=1e-9)


def test_bessel_jn_shape_derivatives_and_arguments():
    z = np.array([[0.5, 3.0, 10.0]])
    out = S.bessel_jn(z, v=3, n_iter=10)
    assert out.shape == (4, 1, 3) and S.bessel_jn(2.0, v=0).shape == (1,)
    np.testing.assert_allclose(out, ss.jv(np.arange(4)[:, None, None], z), rtol=1e-13)
    # J_0' = -J_1 and J_0'' = -(J_0 - J_2) / 2, in both modes and under vmap and jit.
    j0 = lambda z: S.bessel_jn(z, v=0)[0]  # noqa: E731
    np.testing.assert_allclose(ft.grad(j0)(2.3), -ss.j1(2.3), rtol=1e-12)
    np.testing.assert_allclose(ft.jacfwd(ft.jacrev(j0))(2.3),
                               -(ss.jv(0, 2.3) - ss.jv(2, 2.3)) / 2, rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(ft.grad(j0))(np.array([1.0, 2.0])),
                               -ss.j1([1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(ft.jit(lambda z: S.bessel_jn(z, v=2))(z), out[:3], rtol=1e-13)
    assert S.bessel_jn(np.float32([1.0]), v=1).dtype == np.float32
    with pytest.raises(TypeError, match="bessel_jn: v and n_iter must be concrete ints"):
        S.bessel_jn(1.0, v=1.5)
    with pytest.raises(ValueError, match="bessel_jn: v and n_iter must be non-negative"):
        S.bessel_jn(1.0, v=-1)
    with pytest.raises(ValueError, match="bessel_jv: the derivative with respect to the order"):
        ft.grad(bessel_jv)(1.0, 2.0)


def test_i0_i1_derivatives_at_zero_and_overflow():
    assert float(ft.grad(S.i0)(0.0)) == 0.0 and float(ft.grad(S.i1)(0.0)) == 0.5
    np.testing.assert_allclose(ft.grad(ft.grad(S.i0))(0.0), 0.5)  # I0'' = I1' = 1/2 at 0
    np.testing.assert_allclose(S.i0(np.array([-3.0, 700.0])), ss.i0([-3.0, 700.0]),
                               rtol=1e-13)
    with np.errstate(over="ignore"):
        assert float(S.i1(800.0)) == np.inf  # as JAX: exp(|x|) i1e(x) overflows


def test_gammasgn_edges_match_scipy_and_have_zero_derivative():
    x = np.array([-0.0, 0.0, -1.0, -1.5, -2.5, -3.0, np.inf, -np.inf, np.nan, 7.5])
    expected = [-1.0, 1.0, np.nan, 1.0, -1.0, np.nan, 1.0, np.nan, np.nan, 1.0]
    np.testing.assert_array_equal(S.gammasgn(x), expected)  # JAX's and SciPy's since 1.15
    if tuple(int(p) for p in scipy.__version__.split(".")[:2]) >= (1, 15):
        np.testing.assert_array_equal(S.gammasgn(x), ss.gammasgn(x))  # 0 at poles before
    assert float(ft.grad(S.gammasgn)(-1.5)) == 0.0
    assert S.gammasgn(np.float32(-0.5)).dtype == np.float32


def test_loggamma_follows_jax_off_the_positive_axis():
    got = S.loggamma(np.array([0.0, -1.5, 4.0]))
    assert np.isnan(got[0]) and np.isnan(got[1])  # SciPy: inf at 0 (JAX: nan)
    np.testing.assert_allclose(got[2], ss.loggamma(4.0), rtol=1e-14)
    with pytest.raises(ValueError, match="loggamma: complex input is not supported"):
        S.loggamma(np.array([1.0 + 1.0j]))


def test_poch_derivatives_are_jaxs_also_at_m_zero():
    assert float(S.poch(2.5, 0.0)) == 1.0
    np.testing.assert_allclose(ft.grad(S.poch, argnums=1)(2.5, 0.0), ss.digamma(2.5))
    np.testing.assert_allclose(ft.grad(S.poch, argnums=0)(2.5, 0.0), 0.0, atol=1e-15)
    # No overflow on the way: Gamma(200) alone is out of float64's range.
    np.testing.assert_allclose(S.poch(200.0, 2.0), 200.0 * 201.0, rtol=1e-12)


def test_factorial_and_comb_edges():
    np.testing.assert_array_equal(S.factorial(np.array([-2.0, 0.0])), [0.0, 1.0])
    with pytest.raises(NotImplementedError, match="factorial: exact=True"):
        S.factorial(3, exact=True)
    got = S.comb(np.array([3.0, -1.0, 4.0, 0.0]), np.array([4.0, 1.0, -1.0, 0.0]))
    np.testing.assert_array_equal(got, [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(S.comb(np.array([2.0, -1.0]), 0.0, repetition=True),
                                  [1.0, 0.0])
    np.testing.assert_allclose(S.comb(10, np.arange(11)), ss.comb(10, np.arange(11)),
                               rtol=1e-12)


@pytest.mark.parametrize("fun,ref,log", [(S.boxcox, ss.boxcox, np.log),
                                         (S.boxcox1p, ss.boxcox1p, np.log1p)])
def test_boxcox_is_smooth_at_lmbda_zero(fun, ref, log):
    x = 2.5
    for lm in (0.0, 1e-14, 1e-6, 0.0999, 0.1, 0.1001, -0.5, 3.0):
        np.testing.assert_allclose(fun(x, lm), ref(x, lm), rtol=1e-14)
    # d/dlmbda = log(x)^2 / 2 and d^2/dlmbda^2 = log(x)^3 / 3 at 0, in both modes (JAX: 0).
    L = log(x)
    np.testing.assert_allclose(ft.grad(fun, argnums=1)(x, 0.0), L ** 2 / 2, rtol=1e-14)
    np.testing.assert_allclose(ft.jacfwd(ft.grad(fun, argnums=1), argnums=1)(x, 0.0),
                               L ** 3 / 3, rtol=1e-13)
    np.testing.assert_allclose(ft.grad(fun)(x, 0.0), 1 / (x if log is np.log else 1 + x),
                               rtol=1e-14)
    assert fun(np.float32(x), np.float32(1e-3)).dtype == np.float32


def test_bernoulli_numbers():
    exact = [fractions.Fraction(1)]
    for m in range(1, 121):
        exact.append(-sum(math.comb(m + 1, j) * exact[j] for j in range(m)) / (m + 1))
    got = S.bernoulli(120)
    assert got.shape == (121,) and got.dtype == np.float64
    np.testing.assert_allclose(got, [float(b) for b in exact], rtol=1e-14, atol=0)
    np.testing.assert_allclose(got, ss.bernoulli(120), rtol=1e-11)  # SciPy's B_4 is 2e-12 off
    np.testing.assert_array_equal(S.bernoulli(0), [1.0])
    with np.errstate(over="ignore"):
        big = S.bernoulli(300)
    assert np.isfinite(big[258]) and np.isinf(big[300]) and big[299] == 0.0
    with pytest.raises(ValueError, match="bernoulli: n must be non-negative"):
        S.bernoulli(-1)
    with pytest.raises(TypeError, match="bernoulli: n must be a concrete int"):
        S.bernoulli(2.0)


def test_betainc_edges_derivatives_and_refusals():
    with np.errstate(invalid="ignore"):
        got = S.betainc(2.0, 3.0, np.array([-0.1, 0.0, 1.0, 1.2]))
    np.testing.assert_array_equal(got, ss.betainc(2.0, 3.0, [-0.1, 0.0, 1.0, 1.2]))
    # d/dx is the beta density; d^2/dx^2 its derivative, in both modes.
    a, b, x = 2.5, 1.5, 0.3
    density = x ** (a - 1) * (1 - x) ** (b - 1) / ss.beta(a, b)
    np.testing.assert_allclose(ft.grad(S.betainc, argnums=2)(a, b, x), density, rtol=1e-13)
    np.testing.assert_allclose(ft.jacrev(ft.jacfwd(S.betainc, argnums=2), argnums=2)(a, b, x),
                               density * ((a - 1) / x - (b - 1) / (1 - x)), rtol=1e-12)
    for i, arg in ((0, "a"), (1, "b")):
        with pytest.raises(ValueError, match=f"betainc: the derivative with respect to {arg}"):
            ft.grad(S.betainc, argnums=i)(a, b, x)
    np.testing.assert_allclose(ft.grad(lambda a: S.betainc(lax.stop_gradient(a), b, x))(a),
                               0.0)
    assert S.betainc(np.float32(2), np.float32(3), np.float32(0.5)).dtype == np.float32


def test_beta_distribution_functions_outside_the_support_and_derivatives():
    x = np.array([-1.0, 0.0, 0.25, 1.0, 2.0])
    for ours, theirs in ((beta.cdf, st.beta.cdf), (beta.sf, st.beta.sf)):
        np.testing.assert_allclose(ours(x, 2.0, 3.0), theirs(x, 2.0, 3.0), rtol=1e-14)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(beta.logcdf(x, 2.0, 3.0), st.beta.logcdf(x, 2.0, 3.0),
                                   rtol=1e-14)
        np.testing.assert_allclose(beta.logsf(x, 2.0, 3.0), st.beta.logsf(x, 2.0, 3.0),
                                   rtol=1e-14)
    np.testing.assert_allclose(ft.grad(beta.cdf)(0.6, 2.0, 3.0, -1.0, 2.0),
                               st.beta.pdf(0.6, 2.0, 3.0, -1.0, 2.0), rtol=1e-13)
    np.testing.assert_allclose(ft.grad(beta.sf)(0.3, 2.0, 3.0),
                               -st.beta.pdf(0.3, 2.0, 3.0), rtol=1e-13)
    with pytest.raises(ValueError, match="betainc: the derivative with respect to a"):
        ft.grad(beta.cdf, argnums=1)(0.3, 2.0, 3.0)


def _central_difference(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("args", [(0.3, 1.7, 0.4), (0.3, 1.7, -25.0), (2.3, 0.7, 30.0)])
def test_hyp1f1_derivatives_in_every_argument(args):
    a, b, x = args
    np.testing.assert_allclose(ft.grad(S.hyp1f1, argnums=2)(*args),
                               a / b * ss.hyp1f1(a + 1, b + 1, x), rtol=1e-13)
    np.testing.assert_allclose(
        ft.jacfwd(ft.grad(S.hyp1f1, argnums=2), argnums=2)(*args),
        a * (a + 1) / (b * (b + 1)) * ss.hyp1f1(a + 2, b + 2, x), rtol=1e-12)
    # In a and b: the series (Kummer-transformed for x < 0), against SciPy's differences.
    for i in (0, 1):
        np.testing.assert_allclose(ft.grad(S.hyp1f1, argnums=i)(*args),
                                   _central_difference(ss.hyp1f1, args, i), rtol=1e-7)
        # The mixed derivative in x, in both modes.
        mixed = _central_difference(ft.grad(S.hyp1f1, argnums=i), args, 2)
        np.testing.assert_allclose(ft.jacfwd(ft.grad(S.hyp1f1, argnums=i), argnums=2)(*args),
                                   mixed, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(ft.grad(ft.grad(S.hyp1f1, argnums=2), argnums=i)(*args),
                                   mixed, rtol=1e-6, atol=1e-9)


def test_hyp1f1_edges_and_refusals():
    np.testing.assert_allclose(S.hyp1f1(0.5, 1.5, np.array([-150.0, 120.0])),
                               ss.hyp1f1(0.5, 1.5, [-150.0, 120.0]), rtol=1e-12)
    assert float(S.hyp1f1(0.0, 0.0, 2.0)) == 1.0  # JAX's convention (SciPy: inf)
    with pytest.raises(NotImplementedError,
                       match="hyp1f1: second derivatives in the parameters"):
        ft.grad(ft.grad(S.hyp1f1))(0.3, 1.7, 0.4)
    np.testing.assert_allclose(  # batched parameter derivatives
        ft.vmap(ft.grad(S.hyp1f1), in_axes=(0, None, 0))(np.array([0.3, 1.3]), 1.7,
                                                         np.array([0.4, -2.0])),
        [ft.grad(S.hyp1f1)(0.3, 1.7, 0.4), ft.grad(S.hyp1f1)(1.3, 1.7, -2.0)], rtol=1e-14)


@pytest.mark.parametrize("args", [(0.3, 0.7, 1.3, 0.2), (1.5, -0.7, 2.3, -0.9),
                                  (1.3, 0.7, 2.3, 0.95)])
def test_hyp2f1_derivatives_in_every_argument(args):
    a, b, c, x = args
    np.testing.assert_allclose(ft.grad(S.hyp2f1, argnums=3)(*args),
                               a * b / c * ss.hyp2f1(a + 1, b + 1, c + 1, x), rtol=1e-12)
    for i in (0, 1, 2):
        np.testing.assert_allclose(ft.grad(S.hyp2f1, argnums=i)(*args),
                                   _central_difference(ss.hyp2f1, args, i), rtol=1e-7)
        mixed = _central_difference(ft.grad(S.hyp2f1, argnums=i), args, 3)
        np.testing.assert_allclose(ft.jacfwd(ft.grad(S.hyp2f1, argnums=i), argnums=3)(*args),
                                   mixed, rtol=1e-6, atol=1e-9)


def test_hyp2f1_edges_and_refusals():
    x = np.array([-3.0, -0.5, 0.5, 0.99])
    np.testing.assert_allclose(S.hyp2f1(1.0, 1.0, 2.0, x), -np.log1p(-x) / x, rtol=1e-13)
    # Past the branch point x = 1 (where SciPy's value is nan or inf): nan, documented.
    assert np.isnan(ft.grad(S.hyp2f1)(1.0, 1.0, 2.0, 3.0))
    with pytest.raises(NotImplementedError,
                       match="hyp2f1: second derivatives in the parameters"):
        ft.grad(ft.grad(S.hyp2f1, argnums=2), argnums=1)(0.3, 0.7, 1.3, 0.2)
    with pytest.raises(ValueError, match="hyp2f1 does not support complex input"):
        S.hyp2f1(1.0, 1.0, 2.0, np.array([0.5j]))
# -- the derivative of the incomplete gamma function in its shape --------------------------


def _richardson(f, a, x, h):
    """d/da f(a, x) by central differences of steps h, h/2, h/4, h/8, Richardson-extrapolated
    three times (error O(h^8))."""
    with np.errstate(divide="ignore", invalid="ignore"):  # masked by the callers
        d = [(f(a + h / 2 ** k, x) - f(a - h / 2 ** k, x)) / (2 * h / 2 ** k)
             for k in range(4)]
    for m in range(1, 4):
        d = [(4 ** m * d[i + 1] - d[i]) / (4 ** m - 1) for i in range(len(d) - 1)]
    return d[0]


def _shape_derivative_reference(a, x):
    """dP/da from SciPy: the smaller of P and Q times the difference of its logarithm (smooth
    where P or Q itself is far below 1, say 1e-200)."""
    p, q = ss.gammainc(a, x), ss.gammaincc(a, x)
    d_log_p = _richardson(lambda a, x: np.log(ss.gammainc(a, x)), a, x, 1e-2 * a)
    d_log_q = _richardson(lambda a, x: np.log(ss.gammaincc(a, x)), a, x, 1e-2 * a)
    return np.where(p < q, p * d_log_p, -q * d_log_q)


GRID_A, GRID_X = np.meshgrid(np.geomspace(0.1, 50, 45), np.geomspace(1e-3, 100, 55),
                             indexing="ij")


def test_igamma_grad_a_matches_extrapolated_differences_of_scipy():
    want = _shape_derivative_reference(GRID_A, GRID_X)
    got = lax.igamma_grad_a(GRID_A, GRID_X)
    assert got.dtype == np.float64 and (got < 0).all()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    # float32 inputs: computed in float64 then rounded, so within an ulp of float32 of the
    # float64 kernel at the same (rounded) inputs, where that is a normal float32.
    a32, x32 = GRID_A.astype(np.float32), GRID_X.astype(np.float32)
    got32, at = lax.igamma_grad_a(a32, x32), lax.igamma_grad_a(a32.astype(float), x32.astype(float))
    normal = np.abs(at) > np.finfo(np.float32).tiny
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32[normal], at[normal], rtol=2 * np.finfo(np.float32).eps)


def test_igamma_grad_a_far_out_and_at_the_edges():
    # Large shapes (hundreds of series or fraction steps near x = a), tiny shapes.
    a = np.array([1e-3, 0.02, 200.0, 200.0, 3000.0, 3000.0, 150.0])
    x = np.array([0.5, 30.0, 190.0, 215.0, 2990.0, 3040.0, 1.0])
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), _shape_derivative_reference(a, x),
                               rtol=1e-7)
    # P(a, 0) = 0 and P(a, inf) = 1 for every a; outside the domain, nan (as JAX).
    edges = lax.igamma_grad_a(np.array([2.0, 2.0, 0.0, -1.0, 2.0, np.nan]),
                              np.array([0.0, np.inf, 1.0, 1.0, -1.0, 1.0]))
    np.testing.assert_array_equal(edges, [0.0, 0.0, np.nan, np.nan, np.nan, np.nan])
    # broadcasting and a scalar
    assert lax.igamma_grad_a(np.ones((3, 1)), np.ones(4)).shape == (3, 4)
    assert np.shape(lax.igamma_grad_a(1.0, 2.0)) == ()


def test_gammainc_and_gammaincc_differentiate_in_a_once_and_mixed_to_any_order():
    a, x = 2.5, 1.7
    want = _shape_derivative_reference(np.array(a), np.array(x))
    np.testing.assert_allclose(ft.grad(S.gammainc)(a, x), want, rtol=1e-10)
    np.testing.assert_allclose(ft.grad(S.gammaincc)(a, x), -want, rtol=1e-10)
    np.testing.assert_allclose(ft.jvp(lambda a: S.gammainc(a, x), (a,), (2.0,))[1], 2 * want,
                               rtol=1e-10)
    # d^2 P / da dx in both orders: through the density's derivative in a, and through
    # igamma_grad_a's derivative in x; against differences of the density in a.
    density = lambda a, x: st.gamma.pdf(x, a)  # noqa: E731
    mixed = _richardson(density, np.array(a), np.array(x), 1e-2)
    np.testing.assert_allclose(ft.grad(ft.grad(S.gammainc, 0), 1)(a, x), mixed, rtol=1e-9)
    np.testing.assert_allclose(ft.grad(ft.grad(S.gammainc, 1), 0)(a, x), mixed, rtol=1e-9)
    np.testing.assert_allclose(ft.grad(ft.grad(S.gammaincc, 0), 1)(a, x), -mixed, rtol=1e-9)
    # d^3 P / da dx^2 exists too: d/dx of p(x; a) (log x - digamma(a)).
    third = ft.grad(ft.grad(ft.grad(S.gammainc, 0), 1), 1)(a, x)
    mixed_in_x = lambda x, a: st.gamma.pdf(x, a) * (np.log(x) - ss.digamma(a))  # noqa: E731
    np.testing.assert_allclose(third, _richardson(mixed_in_x, np.array(x), np.array(a), 1e-2),
                               rtol=1e-9)
    # batched: vmap of the gradient against a loop
    aa, xx = np.array([0.5, 3.0, 12.0]), np.array([2.0, 1.0, 12.5])
    np.testing.assert_array_equal(ft.vmap(ft.grad(S.gammainc))(aa, xx),
                                  [ft.grad(S.gammainc)(ai, xi) for ai, xi in zip(aa, xx)])
    np.testing.assert_allclose(ft.jit(ft.grad(S.gammainc))(a, x), want, rtol=1e-10)


def test_gamma_cdf_differentiates_in_its_shape():
    x, a, scale = 3.0, 2.2, 1.5
    want = _shape_derivative_reference(np.array(a), np.array(x / scale))
    np.testing.assert_allclose(ft.grad(gamma.cdf, 1)(x, a, 0.0, scale), want, rtol=1e-10)
    np.testing.assert_allclose(ft.grad(gamma.sf, 1)(x, a, 0.0, scale), -want, rtol=1e-10)
    np.testing.assert_allclose(
        ft.grad(gamma.logcdf, 1)(x, a, 0.0, scale), want / st.gamma.cdf(x, a, 0.0, scale),
        rtol=1e-10)


def test_random_gamma_grad_is_the_derivative_of_the_quantile_at_a_fixed_level():
    # x(a) = F^-1(u; a) with u = F(x; a) fixed, differentiated with SciPy's gammaincinv.
    a, x = GRID_A[::4, ::5], GRID_X[::4, ::5]
    u = ss.gammainc(a, x)
    keep = (u > 1e-12) & (u < 1 - 1e-12)  # where the quantile is well conditioned
    want = _richardson(lambda a, u: ss.gammaincinv(a, u), a, u, 1e-3 * a)
    got = lax.random_gamma_grad(a, x)
    np.testing.assert_allclose(got[keep], want[keep], rtol=1e-7)
    # the same as -(dP/da) / density, where the density does not underflow
    np.testing.assert_allclose(got, -lax.igamma_grad_a(a, x) / st.gamma.pdf(x, a), rtol=1e-10)
    np.testing.assert_array_equal(lax.random_gamma_grad(2.0, 0.0), 0.0)
    assert lax.random_gamma_grad(np.float32(2.0), np.float32(3.0)).dtype == np.float32


def test_random_gamma_grad_differentiates_in_x_and_a():
    for a, x in [(1.7, 2.4), (1.7, 0.9), (25.0, 22.0)]:  # the fraction, the series, large a
        want = _richardson(lambda x, a: lax.random_gamma_grad(a, x), np.array(x), np.array(a),
                           1e-2)
        np.testing.assert_allclose(ft.grad(lax.random_gamma_grad, 1)(a, x), want, rtol=1e-8)
        for f in (lax.random_gamma_grad, lax.igamma_grad_a):
            want = _richardson(f, np.array(a), np.array(x), 1e-2)
            np.testing.assert_allclose(ft.grad(f)(a, x), want, rtol=1e-8)
    for f in (lax.random_gamma_grad, lax.igamma_grad_a):  # a third derivative is refused
        with pytest.raises(NotImplementedError, match="second_grad.*: the derivative with "
                                                      "respect to the shape a"):
            ft.grad(ft.grad(f))(1.7, 2.4)


# Large shapes: x = a (1 + k / sqrt(a)), where the series needs about 9 sqrt(a) terms.
LARGE_A = np.repeat([1e3, 1e4, 1e5, 1e6, 1e7], 11)
LARGE_K = np.tile(np.arange(-5.0, 6.0), 5)
LARGE_X = LARGE_A * (1 + LARGE_K / np.sqrt(LARGE_A))
# SciPy's gammainc stops its series at 2000 terms, so at k = -5 (outside its asymptotic
# expansion's range) for a >= 1e6 its differences are off (6e-6 and 3e-2); there the
# references are mpmath's (40 digits, mpmath.diff of x^a e^-x / Gamma(a + 1) 1F1(1; a + 1; x)).
# Elsewhere on this grid the Richardson references below agree with mpmath to 5e-11
# (quantiles) and 3e-11 (dP/da).
SCIPY_OFF = (LARGE_K == -5) & (LARGE_A >= 1e6)
MPMATH_DP_DA = np.array([-1.429398587782120e-09, -4.643478994672502e-10])
MPMATH_SAMPLE = np.array([0.9974959891344933, 0.9992090302420569])


def _large_shape_references(a, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        p, q = ss.gammainc(a, x), ss.gammaincc(a, x)
        h = 0.1 * np.sqrt(a)
        d_log_p = _richardson(lambda a, x: np.log(ss.gammainc(a, x)), a, x, h)
        d_log_q = _richardson(lambda a, x: np.log(ss.gammaincc(a, x)), a, x, h)
        sample = _richardson(lambda a, u: ss.gammaincinv(a, u), a, p, h)
    return np.where(p < q, p * d_log_p, -q * d_log_q), sample


def test_igamma_grad_a_and_random_gamma_grad_for_large_shapes():
    want, want_sample = _large_shape_references(LARGE_A, LARGE_X)
    got, got_sample = lax.igamma_grad_a(LARGE_A, LARGE_X), lax.random_gamma_grad(LARGE_A, LARGE_X)
    np.testing.assert_allclose(got[~SCIPY_OFF], want[~SCIPY_OFF], rtol=1e-9)
    np.testing.assert_allclose(got_sample[~SCIPY_OFF], want_sample[~SCIPY_OFF], rtol=1e-9)
    np.testing.assert_allclose(got[SCIPY_OFF], MPMATH_DP_DA, rtol=1e-12)
    np.testing.assert_allclose(got_sample[SCIPY_OFF], MPMATH_SAMPLE, rtol=1e-12)
    # float32: the float64 kernel at the rounded inputs, rounded; that kernel against the
    # references at those inputs.
    a32, x32 = LARGE_A.astype(np.float32), LARGE_X.astype(np.float32)
    a64, x64 = a32.astype(np.float64), x32.astype(np.float64)
    want, want_sample = _large_shape_references(a64, x64)
    for f, ref in ((lax.igamma_grad_a, want), (lax.random_gamma_grad, want_sample)):
        got32, at = f(a32, x32), f(a64, x64)
        assert got32.dtype == np.float32
        np.testing.assert_allclose(got32, at, rtol=2 * np.finfo(np.float32).eps)
        np.testing.assert_allclose(at[~SCIPY_OFF], ref[~SCIPY_OFF], rtol=1e-9)


def test_shape_derivatives_are_nan_where_the_loops_cannot_converge():
    # Beyond a of about 1e8 the series would need more than 1e5 terms within a few sqrt(a)
    # below x = a: nan, not a truncated sum; the fraction (x >= a + 1) still answers.
    a = np.full(5, 1e12)
    x = a + np.array([-1.0, 0.0, 1.0, 3.0, 5.0]) * 1e6
    for f in (lax.igamma_grad_a, lax.random_gamma_grad):
        out = f(a, x)
        assert np.isnan(out[:2]).all() and np.isfinite(out[2:]).all()
    want, want_sample = _large_shape_references(a[2:], x[2:])
    np.testing.assert_allclose(lax.igamma_grad_a(a, x)[2:], want, rtol=1e-10)
    np.testing.assert_allclose(lax.random_gamma_grad(a, x)[2:], want_sample, rtol=1e-7)


def _richardson_in(f, args, i, h=1e-2):
    """d/d args[i] of f by _richardson's scheme (SciPy's hyp2f1 in float64: within 5e-11 of
    mpmath's derivatives at the points below)."""
    def shifted(t, _):
        return f(*args[:i], t, *args[i + 1:])
    return _richardson(shifted, args[i], None, h)


@pytest.mark.parametrize("params", [(0.3, 0.7, 1.3), (1.5, -0.7, 2.3), (2.5, 1.7, 0.6),
                                    (0.8, 3.2, 1.7)])
def test_hyp2f1_parameter_derivatives_below_minus_one(params):
    # Pfaff's transformation below x = -1/2, where the plain series diverges (x < -1) or
    # converges slowly; against SciPy's values, differentiated.
    for x in (-0.6, -0.99, -1.0, -2.0, -5.0, -20.0, -100.0):
        args = (*params, x)
        for i in (0, 1, 2):
            np.testing.assert_allclose(ft.grad(S.hyp2f1, argnums=i)(*args),
                                       _richardson_in(ss.hyp2f1, args, i), rtol=1e-9)
    # the mixed derivative in x (through the parameter derivative at shifted parameters)
    args = (*params, -5.0)
    for i in (0, 1, 2):
        mixed = _richardson_in(ft.grad(S.hyp2f1, argnums=i), args, 3)
        np.testing.assert_allclose(ft.grad(ft.grad(S.hyp2f1, argnums=i), argnums=3)(*args),
                                   mixed, rtol=1e-8)


def test_hyp2f1_parameter_derivatives_are_nan_where_they_cannot_be_summed():
    a, b, c = 1.3, 0.7, 2.3
    x = np.array([-1e5, -np.inf, 0.9999, 1.0, 3.0, np.nan, -3.0, 0.5])
    for i in (0, 1, 2):
        got = ft.vmap(ft.grad(S.hyp2f1, argnums=i), in_axes=(None, None, None, 0))(a, b, c, x)
        # far below -1 and close to 1 the series would need more than 20000 terms; at and
        # past the branch point x = 1 SciPy's value is inf or nan (a complex branch beyond)
        assert np.isnan(got[:6]).all()
        np.testing.assert_allclose(got[6:], [_richardson_in(ss.hyp2f1, (a, b, c, v), i)
                                             for v in x[6:]], rtol=1e-9)


def test_parameter_derivatives_at_a_zero_parameter():
    # At u = 0 the terms vanish from k = 1 on but their derivatives in u do not (they were
    # 0 * inf once); Pfaff's transformation meets it wherever c = b.
    for x in (0.7, -0.7):
        np.testing.assert_allclose(ft.grad(S.hyp1f1)(0.0, 1.5, x),
                                   _richardson_in(ss.hyp1f1, (0.0, 1.5, x), 0), rtol=1e-9)
    for x in (0.5, -3.0):
        np.testing.assert_allclose(ft.grad(S.hyp2f1, argnums=1)(1.0, 0.0, 2.0, x),
                                   _richardson_in(ss.hyp2f1, (1.0, 0.0, 2.0, x), 1), rtol=1e-9)
    # 2F1(a, b; b; x) = (1 - x)^-a
    np.testing.assert_allclose(ft.grad(S.hyp2f1)(1.3, 2.0, 2.0, -3.0), -np.log(4) * 4 ** -1.3,
                               rtol=1e-14)


# -- the discrete and multivariate distributions, mode, rankdata, sem ----------------------

from functrans.scipy.stats import (betabinom, binom, dirichlet, geom, mode,  # noqa: E402
                                   multinomial, nbinom, rankdata, sem)

_COUNTS = np.array([-1.0, 0.0, 1.0, 1.5, 2.0, 3.0, 5.0, 6.0, np.nan])
_DISCRETE = [  # (ours, SciPy's, parameters (without loc), locs): SciPy's values everywhere
    (binom, st.binom, [(5.0, 0.3), (5.0, 0.0), (5.0, 1.0), (0.0, 0.3), (-1.0, 0.3),
                       (5.0, 1.2), (5.0, -0.2), (5.0, np.nan), (1000.0, 0.01)]),
    (nbinom, st.nbinom, [(3.0, 0.4), (2.5, 0.4), (0.0, 0.4), (-1.0, 0.4), (3.0, 1.0),
                         (3.0, 0.0), (3.0, 1.2), (np.nan, 0.4)]),
    (geom, st.geom, [(0.3,), (1.0,), (0.0,), (1.2,), (-0.2,), (np.nan,)]),
    (betabinom, st.betabinom, [(5.0, 2.0, 3.0), (0.0, 2.0, 3.0), (-1.0, 2.0, 3.0),
                               (5.0, 0.0, 3.0), (5.0, 2.0, -1.0), (5.0, 0.3, 0.7),
                               (50.0, 2.5, 0.5), (5.0, np.nan, 1.0)]),
]


@pytest.mark.parametrize("ours,theirs,params", _DISCRETE,
                         ids=[d[0].__name__.rpartition(".")[2] for d in _DISCRETE])
@pytest.mark.parametrize("loc", [0.0, 1.0, 0.5, -2.0])
def test_discrete_distributions_match_scipy_everywhere(ours, theirs, params, loc):
    """-inf off the support (negative, too large or non-integer counts, also where JAX
    interpolates), nan for invalid parameters or a nan count, as SciPy."""
    with np.errstate(all="ignore"):
        for args in params:
            want = theirs.logpmf(_COUNTS, *args, loc)
            got = ours.logpmf(_COUNTS, *args, loc)
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=str(args))
            np.testing.assert_allclose(ours.pmf(_COUNTS, *args, loc),
                                       theirs.pmf(_COUNTS, *args, loc), rtol=1e-11,
                                       atol=1e-300, err_msg=str(args))


def test_discrete_derivatives_are_zero_where_masked_and_one_sided_at_the_edges():
    with np.errstate(all="ignore"):
        for k in (-1.0, 1.5, 7.0):  # off the support
            for i in (1, 2):
                assert float(ft.grad(binom.logpmf, argnums=i)(k, 5.0, 0.3)) == 0.0
                assert float(ft.grad(nbinom.logpmf, argnums=i)(k if k < 0 else 1.5, 3.0,
                                                               0.3)) == 0.0
            assert float(ft.grad(geom.logpmf, argnums=1)(k if k < 7 else 0.0, 0.3)) == 0.0
            for i in (1, 2, 3):
                assert float(ft.grad(betabinom.logpmf, argnums=i)(k, 5.0, 2.0, 3.0)) == 0.0
        # invalid parameters: nan values, zero (not nan) derivatives
        assert float(ft.grad(binom.logpmf, argnums=2)(2.0, 5.0, 1.3)) == 0.0
        assert float(ft.grad(betabinom.logpmf, argnums=2)(2.0, 5.0, -1.0, 3.0)) == 0.0
        # d/dp at p = 0 (k = 0) and p = 1 (k = n) of log((1 - p)^n) and log(p^n)
        assert float(ft.grad(binom.logpmf, argnums=2)(0.0, 5.0, 0.0)) == -5.0
        assert float(ft.grad(binom.logpmf, argnums=2)(5.0, 5.0, 1.0)) == 5.0
        assert float(ft.grad(nbinom.logpmf, argnums=2)(0.0, 3.0, 1.0)) == 3.0
        assert float(ft.grad(geom.logpmf, argnums=1)(1.0, 1.0)) == 1.0


_JAX_DISCRETE = [  # (name, args, argnums differentiated): inside the support
    ("binom", (2.0, 5.0, 0.3), (1, 2)), ("binom", (2.0, 4.5, 0.3), (1, 2)),
    ("binom", (3.0, 5.0, 0.7, 1.0), (1, 2)), ("nbinom", (4.0, 2.5, 0.4), (1, 2)),
    ("nbinom", (0.0, 3.0, 0.9), (1, 2)), ("geom", (3.0, 0.3), (1,)),
    ("geom", (1.0, 0.8), (1,)), ("betabinom", (2.0, 5.0, 2.0, 3.0), (1, 2, 3)),
    ("betabinom", (2.0, 4.5, 0.3, 0.7), (1, 2, 3)),
]


@pytest.mark.parametrize("name,args,argnums", _JAX_DISCRETE,
                         ids=[f"{c[0]}{c[1]}" for c in _JAX_DISCRETE])
def test_discrete_values_and_derivatives_match_jax(name, args, argnums):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_stats = pytest.importorskip("jax.scipy.stats")
    for fun in ("logpmf", "pmf"):
        ours = getattr({"binom": binom, "nbinom": nbinom, "geom": geom,
                        "betabinom": betabinom}[name], fun)
        theirs = getattr(getattr(jax_stats, name), fun)
        np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-12)
        for i in argnums:
            np.testing.assert_allclose(ft.grad(ours, argnums=i)(*args),
                                       jax.grad(theirs, argnums=i)(*args), rtol=1e-10)


def test_dirichlet_matches_scipy_and_jax():
    alpha = np.array([2.0, 0.5, 3.0])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]).T  # two points, categories first
    want = st.dirichlet.logpdf(x, alpha)
    np.testing.assert_allclose(dirichlet.logpdf(x, alpha), want, rtol=1e-13)
    np.testing.assert_allclose(dirichlet.logpdf(x[:2], alpha), want, rtol=1e-13)
    np.testing.assert_allclose(dirichlet.pdf(x[:, 0], alpha), st.dirichlet.pdf(x[:, 0], alpha),
                               rtol=1e-13)
    # Off the simplex: -inf with zero derivatives; a non-positive alpha: nan.
    off = np.array([0.5, 0.6, -0.1])
    assert float(dirichlet.logpdf(off, alpha)) == -np.inf
    assert float(dirichlet.logpdf(np.array([0.5, 0.5, 0.0]), alpha)) == -np.inf
    np.testing.assert_array_equal(ft.grad(lambda v: dirichlet.logpdf(v, alpha))(off), 0.0)
    assert np.isnan(dirichlet.logpdf(x[:, 0], np.array([1.0, 0.0, 2.0])))
    with pytest.raises(ValueError, match="alpha must be one-dimensional"):
        dirichlet.logpdf(x, alpha[None])
    with pytest.raises(ValueError, match="categories of alpha"):
        dirichlet.logpdf(x[:1], alpha)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_stats = pytest.importorskip("jax.scipy.stats")
    for xs in (x, x[:2], x[:, 0], off):
        np.testing.assert_allclose(dirichlet.logpdf(xs, alpha),
                                   jax_stats.dirichlet.logpdf(xs, alpha), rtol=1e-13)
    for argnum in (0, 1):
        np.testing.assert_allclose(ft.grad(dirichlet.logpdf, argnums=argnum)(x[:, 1], alpha),
                                   jax.grad(jax_stats.dirichlet.logpdf, argnums=argnum)(
                                       x[:, 1], alpha), rtol=1e-12)


def test_multinomial_matches_scipy_and_jax():
    p = np.array([0.2, 0.5, 0.3])
    x = np.array([[1, 2, 0], [3, 0, 0], [0, 0, 2], [-1, 3, 1], [1, 1, 1]])
    # Each row against its own n (JAX sums the counts of all rows together).
    np.testing.assert_allclose(multinomial.logpmf(x, 3, p), st.multinomial.logpmf(x, 3, p),
                               rtol=1e-13)
    np.testing.assert_allclose(multinomial.pmf(x[0], np.array([3, 4]), p),
                               st.multinomial.pmf(x[0], [3, 4], p), rtol=1e-13)
    with np.errstate(all="ignore"):
        assert np.isnan(multinomial.logpmf(x[0], 3, np.array([0.2, 1.5, -0.7])))
        assert np.isnan(multinomial.logpmf(x[0], -3, p))
    # p = 0 where the count is 0: the term is 0, and so is its derivative.
    zero = np.array([0.2, 0.8, 0.0])
    np.testing.assert_allclose(multinomial.logpmf(x[0], 3, zero),
                               st.multinomial.logpmf(x[0], 3, zero), rtol=1e-13)
    np.testing.assert_allclose(ft.grad(lambda q: multinomial.logpmf(x[0], 3, q))(zero),
                               [5.0, 2.5, 0.0])
    with pytest.raises(ValueError, match="x and n must be of integer type"):
        multinomial.logpmf(x[0].astype(float), 3, p)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_stats = pytest.importorskip("jax.scipy.stats")
    for row in x[[0, 1, 4]]:
        np.testing.assert_allclose(multinomial.logpmf(row, 3, p),
                                   jax_stats.multinomial.logpmf(row, 3, p), rtol=1e-13)
        np.testing.assert_allclose(
            ft.grad(multinomial.logpmf, argnums=2)(row, 3, p),
            jax.grad(jax_stats.multinomial.logpmf, argnums=2)(row, 3, p), rtol=1e-12)


def test_mode_rankdata_sem_match_jax_in_values_and_derivatives():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jax_stats = pytest.importorskip("jax.scipy.stats")
    x1 = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]])
    xf = np.array([[1.0, 2.0], [1.0, 3.0], [2.0, 3.0]])
    inputs = [x1, xf, np.array([np.nan, 1.0, np.nan, 2.0, 1.0, 1.0]),
              np.array([1.0, np.nan, np.nan, 2.0]), np.array(5.0),
              np.array([True, False, True]), np.zeros((0, 3)), np.zeros((3, 0))]
    for x in inputs:
        for kwargs in ({}, {"axis": -1}, {"axis": None, "keepdims": True}, {"keepdims": True}):
            got, want = mode(x, **kwargs), jax_stats.mode(x, **kwargs)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
                assert np.asarray(g).dtype == w.dtype and np.shape(g) == w.shape
    for x in [x1, xf, np.array([[1.0, np.nan], [2.0, 2.0]]), np.array(3.0), np.zeros(0)]:
        for method in ("average", "min", "max", "dense", "ordinal"):
            for axis in ([None, 0, -1] if np.ndim(x) == 2 else [None]):
                np.testing.assert_array_equal(rankdata(x, method, axis=axis),
                                              jax_stats.rankdata(x, method, axis=axis))
    x2 = np.array([[1, 2, 3, np.nan, 4, 2], [4, 5, 4, 3, np.nan, 1], [7, np.nan, 8, 7, 9, 1]])
    for x in [x1, x2]:
        for kwargs in ({}, {"axis": 1, "keepdims": True}, {"axis": None, "ddof": 0},
                       {"nan_policy": "omit"}, {"axis": 1, "nan_policy": "omit"}):
            np.testing.assert_allclose(sem(x, **kwargs), jax_stats.sem(x, **kwargs),
                                       rtol=1e-13)
    # Derivatives: the mode's picks its entry, ranks have none, sem's are the same.
    np.testing.assert_array_equal(ft.grad(lambda v: mode(v).mode.sum())(xf),
                                  jax.grad(lambda v: jax_stats.mode(v).mode.sum())(xf))
    v1 = np.array([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(ft.grad(lambda v: (rankdata(v) * v).sum())(v1),
                                  jax.grad(lambda v: (jax_stats.rankdata(v) * v).sum())(v1))
    for kwargs in ({}, {"axis": None}, {"nan_policy": "omit"}):
        np.testing.assert_allclose(ft.grad(lambda v: sem(v, **kwargs).sum())(x2[:, :3]),
                                   jax.grad(lambda v: jax_stats.sem(v, **kwargs).sum())(
                                       x2[:, :3]), rtol=1e-12, atol=1e-15)


def test_summaries_refuse_what_jax_refuses():
    with pytest.raises(NotImplementedError, match="nan_policy='omit' is not supported"):
        mode(np.ones(3), nan_policy="omit")
    with pytest.raises(NotImplementedError, match="nan_policy='raise' is not supported"):
        rankdata(np.ones(3), nan_policy="raise")
    with pytest.raises(ValueError, match="illegal nan_policy value 'bad'"):
        mode(np.ones(3), nan_policy="bad")
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        rankdata(np.ones(3), "foo")
    with pytest.raises(ValueError, match="nan_policy='raise' is not supported"):
        sem(np.ones(3), nan_policy="raise")
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        mode(np.ones((2, 3)), axis=2)
