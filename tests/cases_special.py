"""Sweep cases of the special-function family: the primitives of
functrans/primitives/special.py (``PRIMITIVE_CASES``, checked by tests/test_primitives.py),
and ``functrans.scipy.special`` and ``functrans.scipy.stats`` against SciPy
(``NUMPY_CASES``, checked by tests/test_numpy.py: values and dtypes, derivatives in both
modes to second order, vmap against a loop, float32).

Arguments outside a function's domain are mapped into it inside the case (``0.5 + 0.45 u``
for a probability from a ``unit`` draw, say), the same way for functrans and the reference.
Arguments a function is not differentiable in (the shape of the incomplete gamma function,
the exponent of ``zeta``, counts) come from integer draws, which the derivative checks
leave alone."""
from __future__ import annotations

import dataclasses

import numpy as np
import scipy.special as ss
import scipy.stats as st

import functrans.numpy as fnp
import functrans.scipy.special as S
from functrans import backend, lax
from functrans.primitives import special
from functrans.primitives.special import (bessel_jv, hyp1f1, hyp2f1,
                                          hyp_parameter_derivative_p, ndtri)
from functrans.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet,
                                   expon, gamma, gaussian_kde, gennorm, geom, gumbel_l, gumbel_r, laplace,
                                   logistic, mode, multinomial, multivariate_normal, nbinom, norm,
                                   pareto, poisson, rankdata, sem, t, truncnorm, uniform,
                                   vonmises, wrapcauchy)
from sweep import F32, F64, I64, A, Case, numpy_case


def _scipy_mode(x, **kwargs):
    """SciPy's ``mode`` with the dtypes SciPy 1.17 gives (and JAX): the mode in ``x``'s
    dtype, the count an integer (SciPy 1.13 gave both as float64 for float32 input)."""
    found = st.mode(x, **kwargs)
    return found.mode.astype(x.dtype), found.count.astype(np.int64)


def _prob(u):
    """A probability in (0.05, 0.95) from a ``unit`` draw in (-0.8, 0.8)."""
    return u * 0.5 + 0.5


def _shape_param(k, like):
    """A positive parameter ``|k| + 0.5`` in the dtype of ``like``, from an integer draw: a
    function is not differentiable in it, so the derivative checks must not perturb it."""
    return lax.add(lax.convert_element_type(lax.abs(k), like.dtype), 0.5)


PRIMITIVE_CASES = [
    Case("erf", lax.erf, [A(3, 4)]),
    Case("erfc", lax.erfc, [A(3, 4)]),
    Case("erf_inv", lax.erf_inv, [A(3, 4, kind="unit")]),
    Case("lgamma", lax.lgamma, [A(3, 4, kind="pos")]),
    Case("lgamma_negative", lambda x: lax.lgamma(lax.neg(x)), [A(2, 3, kind="quarter")]),
    Case("digamma", lax.digamma, [A(3, 4, kind="pos")]),
    Case("polygamma", lambda m, x: lax.polygamma(
        lax.convert_element_type(lax.abs(m), x.dtype), x), [A(3, 4, kind="int"),
                                                            A(3, 4, kind="pos")]),
    Case("polygamma_scalar_order", lambda x: lax.polygamma(2, x), [A(5, kind="pos")]),
    Case("igamma", lambda a, x: lax.igamma(_shape_param(a, x), x),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
    Case("igammac", lambda a, x: lax.igammac(_shape_param(a, x), x),
         [A(4, kind="int"), A(3, 4, kind="pos")]),
    Case("bessel_i0e", lax.bessel_i0e, [A(3, 4, kind="away0")]),
    Case("bessel_i1e", lax.bessel_i1e, [A(3, 4, kind="away0")]),
    Case("zeta", lambda x, q: lax.zeta(lax.add(_shape_param(x, q), 1.0), q),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
    Case("ndtri", lambda u: ndtri(_prob(u)), [A(3, 4, kind="unit")]),
]


def _like_inputs(reference):
    """SciPy's ``reference`` in the dtype functrans gives: the inputs' promoted float dtype
    (SciPy's stats functions compute in float64 whatever the input)."""
    def f(*xs):
        out = reference(*xs)
        dtype = np.result_type(*[x.dtype for x in xs if hasattr(x, "dtype")])
        if dtype.kind != "f":  # integer arguments promote to float64
            dtype = np.dtype(np.float64)
        if isinstance(out, np.ndarray) and out.dtype == np.float32:
            dtype = out.dtype  # SciPy kept float32 (polygamma's order was an integer)
        if isinstance(out, tuple):
            return tuple(np.asarray(o).astype(dtype) for o in out)
        return np.asarray(out).astype(dtype)
    return f


def _case(name, fun, reference, *args, dtypes=(F64, F32), diff=True, tol=1e-7):
    return numpy_case(f"scipy_{name}", lambda m, *xs: fun(*xs), *args, dtypes=dtypes,
                      diff=diff, tol=tol, reference=_like_inputs(reference))


def _spd(c):
    """A symmetric positive-definite 3 x 3 matrix from any, on the device of ``c``."""
    return c @ c.T + backend.eye(3, dtype=c.dtype, like=c) * 3.0


SPECIAL_CASES = [
    _case("erf", S.erf, ss.erf, A(3, 4), dtypes=(F64, F32, I64)),
    _case("erfc", S.erfc, ss.erfc, A(3, 4)),
    _case("erfinv", S.erfinv, ss.erfinv, A(3, 4, kind="unit")),
    _case("ndtr", S.ndtr, ss.ndtr, A(3, 4), dtypes=(F64, F32, I64)),
    _case("ndtri", lambda u: S.ndtri(_prob(u)), lambda u: ss.ndtri(_prob(u)),
          A(3, 4, kind="unit")),
    _case("log_ndtr", S.log_ndtr, ss.log_ndtr, A(3, 4)),
    # From -45 to 25: the series, the middle and the upper tail.
    _case("log_ndtr_tails", lambda x: S.log_ndtr(x * 17.5 - 10),
          lambda x: ss.log_ndtr(x * 17.5 - 10), A(8, kind="spread")),
    _case("expit", S.expit, ss.expit, A(3, 4)),
    _case("logit", lambda u: S.logit(_prob(u)), lambda u: ss.logit(_prob(u)),
          A(3, 4, kind="unit")),
    _case("gammaln", S.gammaln, ss.gammaln, A(3, 4, kind="pos"), dtypes=(F64, F32, I64)),
    _case("digamma", S.digamma, ss.digamma, A(3, 4, kind="pos")),
    _case("polygamma", lambda n, x: S.polygamma(abs(n), x),
          lambda n, x: ss.polygamma(abs(n), x).astype(x.dtype), A(3, 4, kind="int"),
          A(3, 4, kind="pos")),
    _case("gamma", S.gamma, ss.gamma, A(3, 4, kind="quarter")),
    _case("betaln", S.betaln, ss.betaln, A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("beta", S.beta, ss.beta, A(3, 4, kind="pos"), A(3, 4, kind="pos")),
    _case("multigammaln", lambda a: S.multigammaln(a + 1.0, 3),
          lambda a: ss.multigammaln(a + 1.0, 3), A(3, 4, kind="pos")),
    _case("gammainc", lambda a, x: S.gammainc(abs(a) + 0.5, x),
          lambda a, x: ss.gammainc(abs(a) + 0.5, x), A(3, 4, kind="int"), A(3, 4, kind="pos")),
    _case("gammaincc", lambda a, x: S.gammaincc(abs(a) + 0.5, x),
          lambda a, x: ss.gammaincc(abs(a) + 0.5, x), A(3, 4, kind="int"),
          A(3, 4, kind="pos")),
    _case("zeta", lambda x, q: S.zeta(abs(x) + 1.5, q), lambda x, q: ss.zeta(abs(x) + 1.5, q),
          A(3, 4, kind="int"), A(3, 4, kind="pos")),
    _case("i0e", S.i0e, ss.i0e, A(3, 4, kind="away0")),
    _case("i1e", S.i1e, ss.i1e, A(3, 4, kind="away0")),
    _case("xlogy", S.xlogy, ss.xlogy, A(3, 4, kind="zeros"), A(3, 4, kind="pos")),
    _case("xlog1py", S.xlog1py, ss.xlog1py, A(3, 4, kind="zeros"), A(3, 4, kind="unit")),
    _case("entr", S.entr, ss.entr, A(3, 4, kind="pos")),
    _case("logsumexp", S.logsumexp, ss.logsumexp, A(3, 4)),
    _case("logsumexp_axis_keepdims", lambda a: S.logsumexp(a, axis=1, keepdims=True),
          lambda a: ss.logsumexp(a, axis=1, keepdims=True), A(3, 4)),
    _case("logsumexp_b", lambda a, b: S.logsumexp(a, axis=0, b=b),
          lambda a, b: ss.logsumexp(a, axis=0, b=b), A(3, 4), A(3, 4, kind="pos")),
    _case("logsumexp_sign", lambda a, b: S.logsumexp(a, axis=1, b=-b, return_sign=True),
          lambda a, b: ss.logsumexp(a, axis=1, b=-b, return_sign=True),
          A(3, 2), A(3, 2, kind="pos")),
    _case("softmax", S.softmax, ss.softmax, A(3, 4)),
    _case("log_softmax_axis", lambda x: S.log_softmax(x, axis=0),
          lambda x: ss.log_softmax(x, axis=0), A(3, 4)),
]

STATS_CASES = [
    _case("norm_logpdf", norm.logpdf, st.norm.logpdf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_pdf", norm.pdf, st.norm.pdf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_cdf", norm.cdf, st.norm.cdf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_logcdf", norm.logcdf, st.norm.logcdf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_sf", norm.sf, st.norm.sf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_logsf", norm.logsf, st.norm.logsf, A(3, 4), A(4), A(4, kind="pos")),
    _case("norm_ppf", lambda u, loc, scale: norm.ppf(_prob(u), loc, scale),
          lambda u, loc, scale: st.norm.ppf(_prob(u), loc, scale),
          A(3, 4, kind="unit"), A(4), A(4, kind="pos")),
    _case("norm_isf", lambda u, loc, scale: norm.isf(_prob(u), loc, scale),
          lambda u, loc, scale: st.norm.isf(_prob(u), loc, scale),
          A(3, 4, kind="unit"), A(4), A(4, kind="pos")),
    _case("t_logpdf", t.logpdf, st.t.logpdf, A(3, 4), A(4, kind="pos"), A(4),
          A(4, kind="pos")),
    _case("t_pdf", t.pdf, st.t.pdf, A(3, 4), A(4, kind="pos")),
    _case("gamma_logpdf", lambda x, a, loc, scale: gamma.logpdf(x, a, -loc, scale),
          lambda x, a, loc, scale: st.gamma.logpdf(x, a, -loc, scale),
          A(3, 4, kind="pos"), A(4, kind="pos"), A(4, kind="pos"), A(4, kind="pos")),
    _case("gamma_pdf", gamma.pdf, st.gamma.pdf, A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("gamma_cdf", lambda x, a, scale: gamma.cdf(x, abs(a) + 0.5, 0.0, scale),
          lambda x, a, scale: st.gamma.cdf(x, abs(a) + 0.5, 0.0, scale),
          A(3, 4, kind="pos"), A(4, kind="int"), A(4, kind="pos")),
    _case("gamma_sf", lambda x, a: gamma.sf(x, abs(a) + 0.5),
          lambda x, a: st.gamma.sf(x, abs(a) + 0.5), A(3, 4, kind="pos"), A(4, kind="int")),
    _case("gamma_logcdf", lambda x, a: gamma.logcdf(x, abs(a) + 0.5),
          lambda x, a: st.gamma.logcdf(x, abs(a) + 0.5), A(3, 4, kind="pos"),
          A(4, kind="int")),
    _case("gamma_logsf", lambda x, a: gamma.logsf(x, abs(a) + 0.5),
          lambda x, a: st.gamma.logsf(x, abs(a) + 0.5), A(3, 4, kind="pos"),
          A(4, kind="int")),
    _case("beta_logpdf", lambda u, a, b: beta.logpdf(_prob(u), a, b),
          lambda u, a, b: st.beta.logpdf(_prob(u), a, b),
          A(3, 4, kind="unit"), A(4, kind="pos"), A(4, kind="pos")),
    _case("beta_pdf_loc_scale", lambda u, a, b: beta.pdf(_prob(u) * 2.0 - 1.0, a, b, -1.0, 2.0),
          lambda u, a, b: st.beta.pdf(_prob(u) * 2.0 - 1.0, a, b, -1.0, 2.0),
          A(3, 4, kind="unit"), A(4, kind="pos"), A(4, kind="pos")),
    _case("poisson_logpmf", lambda k, mu: poisson.logpmf(abs(k), mu),
          lambda k, mu: st.poisson.logpmf(abs(k), mu), A(3, 4, kind="int"),
          A(3, 4, kind="pos")),
    _case("poisson_pmf", lambda k, mu: poisson.pmf(abs(k), mu),
          lambda k, mu: st.poisson.pmf(abs(k), mu), A(3, 4, kind="int"), A(4, kind="pos")),
    _case("poisson_cdf", poisson.cdf, st.poisson.cdf, A(3, 4, kind="int"),
          A(3, 4, kind="pos")),
    _case("bernoulli_logpmf", lambda k, u: bernoulli.logpmf(k, _prob(u)),
          lambda k, u: st.bernoulli.logpmf(k.astype(u.dtype), _prob(u)),
          A(3, 4, kind="bool"), A(3, 4, kind="unit")),
    _case("bernoulli_pmf", lambda k, u: bernoulli.pmf(k, _prob(u)),
          lambda k, u: st.bernoulli.pmf(k.astype(u.dtype), _prob(u)),
          A(3, 4, kind="bool"), A(4, kind="unit")),
    _case("bernoulli_cdf", lambda k, u: bernoulli.cdf(k, _prob(u)),
          lambda k, u: st.bernoulli.cdf(k, _prob(u)), A(3, 4, kind="quarter"),
          A(4, kind="unit")),
    # Piecewise constant in both arguments: values and batching only.
    _case("bernoulli_ppf", lambda q, u: bernoulli.ppf(_prob(q), _prob(u)),
          lambda q, u: np.where(_prob(q) > 1 - _prob(u), 1.0, 0.0),
          A(3, 4, kind="unit"), A(4, kind="unit"), diff=False),
    _case("multivariate_normal_logpdf",
          lambda x, mean, c: multivariate_normal.logpdf(x, mean, _spd(c)),
          lambda x, mean, c: st.multivariate_normal.logpdf(x, mean, _spd(c)),
          A(4, 3), A(3), A(3, 3)),
    _case("multivariate_normal_pdf",
          lambda x, mean, c: multivariate_normal.pdf(x, mean, _spd(c)),
          lambda x, mean, c: st.multivariate_normal.pdf(x, mean, _spd(c)),
          A(2, 3), A(3), A(3, 3)),
    _case("multivariate_normal_scalar_cov",
          lambda x, mean, v: multivariate_normal.logpdf(x, mean, v),
          lambda x, mean, v: st.multivariate_normal.logpdf(x, mean, v),
          A(4, 3), A(3), A(kind="pos")),
]

# -- Bessel, gamma part 2, incomplete beta, hypergeometric functions -------------

PRIMITIVE_CASES += [
    Case("betainc", lambda a, b, u: lax.betainc(_shape_param(a, u), _shape_param(b, u),
                                                _prob(u)),
         [A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="unit")]),
    Case("hyp1f1", lambda a, b, x: hyp1f1(_shape_param(a, x), _shape_param(b, x), x),
         [A(3, 4, kind="int"), A(4, kind="int"), A(3, 4)]),
    Case("hyp2f1", lambda a, b, c, u: hyp2f1(_shape_param(a, u), _shape_param(b, u),
                                             lax.add(_shape_param(c, u), 1.0), u),
         [A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="int"), A(3, 4, kind="unit")]),
    # Their derivatives in the parameters: first order only (the second is refused).
    Case("hyp1f1_in_parameters", hyp1f1, [A(3, 4, kind="pos"), A(4, kind="pos"), A(3, 4)],
         order=1),
    Case("hyp2f1_in_parameters", lambda a, b, c, u: hyp2f1(a, b, lax.add(c, 1.0), u),
         [A(3, 4, kind="pos"), A(4, kind="pos"), A(3, 1, kind="pos"), A(3, 4, kind="unit")],
         order=1),
    # The parameter series themselves, differentiated in x (to the second order).
    Case("hyp_parameter_derivative_1f1", lambda a, b, x: hyp_parameter_derivative_p.bind(
        _shape_param(a, x), _shape_param(b, x), x, upper=1, wrt=1),
         [A(3, 4, kind="int"), A(4, kind="int"), A(3, 4)]),
    Case("hyp_parameter_derivative_2f1", lambda a, b, c, u: hyp_parameter_derivative_p.bind(
        _shape_param(a, u), _shape_param(b, u), lax.add(_shape_param(c, u), 1.0), u,
        upper=2, wrt=2), [A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="int"),
                          A(3, 4, kind="unit")]),
    Case("bessel_jv", lambda v, z: bessel_jv(
        lax.convert_element_type(lax.abs(v), z.dtype), z), [A(3, 4, kind="int"), A(3, 4)]),
]


def _jn_reference(v):
    return lambda z: ss.jv(np.arange(v + 1).reshape((v + 1,) + (1,) * z.ndim), z)


def _scaled_by(constants, x):
    return fnp.stack([x[i] * float(c) for i, c in enumerate(np.asarray(constants))])


def _comb_reference(repetition):
    return lambda n, k: ss.comb(n, k, exact=False, repetition=repetition)


SPECIAL_CASES += [
    _case("i0", S.i0, ss.i0, A(3, 4), dtypes=(F64, F32, I64)),
    _case("i1", S.i1, ss.i1, A(3, 4)),
    _case("bessel_jn", lambda z: S.bessel_jn(z, v=3), _jn_reference(3), A(3, 4)),
    _case("bessel_jn_v0_scalar", lambda z: S.bessel_jn(z, v=0), _jn_reference(0), A()),
    # Piecewise constant: the numerical derivatives (0) away from the poles agree.
    _case("gammasgn", S.gammasgn, ss.gammasgn, A(3, 4, kind="quarter")),
    _case("loggamma", S.loggamma, ss.loggamma, A(3, 4, kind="pos")),
    _case("poch", S.poch, ss.poch, A(3, 4, kind="pos"), A(3, 4)),
    _case("factorial", S.factorial, lambda n: ss.factorial(n, exact=False),
          A(3, 4, kind="pos")),
    _case("comb", lambda n, k: S.comb(n + k, k), lambda n, k: ss.comb(n + k, k),
          A(3, 4, kind="pos"), A(3, 4, kind="pos")),
    _case("comb_repetition", lambda n, k: S.comb(n + 1.0, k, repetition=True),
          lambda n, k: _comb_reference(True)(n + 1.0, k), A(3, 4, kind="pos"),
          A(4, kind="pos")),
    _case("boxcox", S.boxcox, ss.boxcox, A(3, 4, kind="pos"), A(3, 4)),
    # Near lmbda = 0 the value and both derivatives go through exprel's series.
    _case("boxcox_small_lmbda", lambda x, lm: S.boxcox(x, lm * 1e-3),
          lambda x, lm: ss.boxcox(x, lm * 1e-3), A(3, 4, kind="pos"), A(3, 4)),
    _case("boxcox1p", S.boxcox1p, ss.boxcox1p, A(3, 4, kind="unit"), A(3, 4)),
    _case("boxcox1p_small_lmbda", lambda x, lm: S.boxcox1p(x, lm * 1e-3),
          lambda x, lm: ss.boxcox1p(x, lm * 1e-3), A(3, 4, kind="unit"), A(4)),
    # Host constants (n is static: there is no input whose device to follow), each scaling
    # an entry of a drawn array as a Python float, so that the sweep has something to batch
    # and differentiate on any device; test_special.py checks them against exact rationals.
    _case("bernoulli", lambda x: _scaled_by(S.bernoulli(12), x),
          lambda x: ss.bernoulli(12) * x, A(13), dtypes=(F64,)),
    _case("betainc", lambda a, b, u: S.betainc(abs(a) + 0.5, abs(b) + 0.5, _prob(u)),
          lambda a, b, u: ss.betainc(abs(a) + 0.5, abs(b) + 0.5, _prob(u)),
          A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="unit")),
    _case("hyp1f1", lambda a, b, x: S.hyp1f1(abs(a) + 0.5, abs(b) + 0.5, x),
          lambda a, b, x: ss.hyp1f1(abs(a) + 0.5, abs(b) + 0.5, x),
          A(3, 4, kind="int"), A(4, kind="int"), A(3, 4)),
    _case("hyp2f1", lambda a, b, c, u: S.hyp2f1(abs(a) + 0.5, abs(b) - 0.5, abs(c) + 1.5, u),
          lambda a, b, c, u: ss.hyp2f1(abs(a) + 0.5, abs(b) - 0.5, abs(c) + 1.5, u),
          A(3, 4, kind="int"), A(4, kind="int"), A(3, 1, kind="int"), A(3, 4, kind="unit")),
]

STATS_CASES += [
    _case("beta_cdf", lambda u, a, b: beta.cdf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          lambda u, a, b: st.beta.cdf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          A(3, 4, kind="unit"), A(4, kind="int"), A(4, kind="int")),
    _case("beta_sf_loc_scale",
          lambda u, a, b, loc, scale: beta.sf(_prob(u) * scale + loc, abs(a) + 0.5,
                                              abs(b) + 0.5, loc, scale),
          lambda u, a, b, loc, scale: st.beta.sf(_prob(u) * scale + loc, abs(a) + 0.5,
                                                 abs(b) + 0.5, loc, scale),
          A(3, 4, kind="unit"), A(4, kind="int"), A(4, kind="int"), A(4), A(4, kind="pos"),
          dtypes=(F64,)),  # float32 rounds (x - loc) / scale too far from x: beta_cdf has it
    _case("beta_logcdf", lambda u, a, b: beta.logcdf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          lambda u, a, b: st.beta.logcdf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          A(3, 4, kind="unit"), A(4, kind="int"), A(4, kind="int")),
    _case("beta_logsf", lambda u, a, b: beta.logsf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          lambda u, a, b: st.beta.logsf(_prob(u), abs(a) + 0.5, abs(b) + 0.5),
          A(3, 4, kind="unit"), A(4, kind="int"), A(4, kind="int")),
]

# -- the discrete and multivariate distributions, the summaries -------------------------
# Counts come from integer draws (|k| in 0..3, n = |n| + 3 trials: inside the support), the
# probabilities and shapes from float ones; a real number of trials (JAX's extension, which
# SciPy refuses) is compared with the formula in scipy.special.


def _f64(x):
    """``x`` in float64: SciPy computes some terms in the float32 of its inputs."""
    return np.asarray(x, dtype=np.float64)


def _trials(n):
    return abs(n) + 3


def _binom_real_n(k, n, p):
    return (ss.gammaln(n + 1) - ss.gammaln(k + 1) - ss.gammaln(n - k + 1) + ss.xlogy(k, p)
            + ss.xlog1py(n - k, -p))


def _betabinom_real_n(k, n, a, b):
    return (ss.betaln(k + a, n - k + b) - ss.betaln(a, b) - np.log1p(n)
            - ss.betaln(n - k + 1, k + 1))


def _simplex(x):
    """The columns of a positive ``x`` scaled to sum to 1 (categories on the first axis)."""
    return x / x.sum(axis=0)


def _scipy_dirichlet(x, alpha):
    # SciPy wants the sums within 1e-9 of 1: those of float32 inputs are renormalized in
    # float64 (the tolerance of float32 covers the difference).
    x = np.asarray(x, dtype=np.float64)
    return st.dirichlet.logpdf(x / x.sum(axis=0), alpha)


STATS_CASES += [
    _case("binom_logpmf", lambda k, n, u: binom.logpmf(abs(k), _trials(n), _prob(u)),
          lambda k, n, u: st.binom.logpmf(abs(k), _trials(n), _f64(_prob(u))),
          A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="unit")),
    _case("binom_pmf_loc", lambda k, n, u, loc: binom.pmf(abs(k) + loc, _trials(n), _prob(u),
                                                           loc),
          lambda k, n, u, loc: st.binom.pmf(abs(k) + loc, _trials(n), _f64(_prob(u)),
                                            loc),
          A(3, 4, kind="int"), A(4, kind="int"), A(4, kind="unit"), A(4, kind="int")),
    _case("binom_logpmf_real_n", lambda k, n, u: binom.logpmf(abs(k), n + 3, _prob(u)),
          lambda k, n, u: _binom_real_n(abs(k), _f64(n + 3), _f64(_prob(u))),
          A(3, 4, kind="int"), A(3, 4, kind="pos"), A(4, kind="unit")),
    _case("nbinom_logpmf", lambda k, n, u: nbinom.logpmf(abs(k), n, _prob(u)),
          lambda k, n, u: st.nbinom.logpmf(abs(k), _f64(n), _f64(_prob(u))),
          A(3, 4, kind="int"), A(3, 4, kind="pos"), A(4, kind="unit")),
    _case("nbinom_pmf_loc", lambda k, n, u, loc: nbinom.pmf(abs(k) + loc, n, _prob(u), loc),
          lambda k, n, u, loc: st.nbinom.pmf(abs(k) + loc, _f64(n), _f64(_prob(u)), loc),
          A(3, 4, kind="int"), A(4, kind="pos"), A(3, 4, kind="unit"), A(4, kind="int")),
    _case("geom_logpmf", lambda k, u: geom.logpmf(abs(k) + 1, _prob(u)),
          lambda k, u: st.geom.logpmf(abs(k) + 1, _f64(_prob(u))),
          A(3, 4, kind="int"), A(3, 4, kind="unit")),
    _case("geom_pmf_loc", lambda k, u, loc: geom.pmf(abs(k) + 1 + loc, _prob(u), loc),
          lambda k, u, loc: st.geom.pmf(abs(k) + 1 + loc, _f64(_prob(u)), loc),
          A(3, 4, kind="int"), A(4, kind="unit"), A(4, kind="int")),
    _case("betabinom_logpmf", lambda k, n, a, b: betabinom.logpmf(abs(k), _trials(n), a, b),
          lambda k, n, a, b: st.betabinom.logpmf(abs(k), _trials(n), _f64(a), _f64(b)),
          A(3, 4, kind="int"), A(4, kind="int"), A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("betabinom_pmf_loc",
          lambda k, n, a, b, loc: betabinom.pmf(abs(k) + loc, _trials(n), a, b, loc),
          lambda k, n, a, b, loc: st.betabinom.pmf(abs(k) + loc, _trials(n), _f64(a),
                                                    _f64(b), loc),
          A(3, 4, kind="int"), A(4, kind="int"), A(4, kind="pos"), A(3, 4, kind="pos"),
          A(4, kind="int")),
    _case("betabinom_logpmf_real_n",
          lambda k, n, a, b: betabinom.logpmf(abs(k), n + 3, a, b),
          lambda k, n, a, b: _betabinom_real_n(abs(k), _f64(n + 3), _f64(a), _f64(b)),
          A(3, 4, kind="int"), A(3, 4, kind="pos"), A(4, kind="pos"), A(4, kind="pos")),
    _case("multinomial_logpmf",
          lambda x, logits: multinomial.logpmf(abs(x), abs(x).sum(axis=-1), S.softmax(logits)),
          lambda x, logits: st.multinomial.logpmf(
              abs(x), abs(x).sum(axis=-1), ss.softmax(_f64(logits))).astype(logits.dtype),
          A(4, 3, kind="int"), A(3)),
    _case("multinomial_pmf_batched_p",
          lambda x, logits: multinomial.pmf(abs(x), abs(x).sum(axis=-1),
                                            S.softmax(logits, axis=-1)),
          lambda x, logits: st.multinomial.pmf(
              abs(x), abs(x).sum(axis=-1),
              ss.softmax(_f64(logits), axis=-1)).astype(logits.dtype),
          A(4, 3, kind="int"), A(4, 3)),
    _case("dirichlet_logpdf", lambda x, alpha: dirichlet.logpdf(_simplex(x), alpha),
          lambda x, alpha: _scipy_dirichlet(_simplex(x), alpha),
          A(3, 5, kind="pos"), A(3, kind="pos")),
    _case("dirichlet_pdf_one_fewer", lambda x, alpha: dirichlet.pdf(_simplex(x)[:2], alpha),
          lambda x, alpha: np.exp(_scipy_dirichlet(_simplex(x), alpha)),
          A(3, 4, kind="pos"), A(3, kind="pos")),
    _case("sem", sem, st.sem, A(3, 4)),
    _case("sem_axis_ddof_keepdims", lambda x: sem(x, axis=-1, ddof=0, keepdims=True),
          lambda x: st.sem(x, axis=-1, ddof=0, keepdims=True), A(3, 4)),
    _case("sem_flat", lambda x: sem(x, axis=None), lambda x: st.sem(x, axis=None), A(3, 4)),
    # Ranks are piecewise constant (zero derivatives where the values are distinct); the
    # mode is an entry of the input (its derivative picks that entry).
    # float64 ranks, JAX's (SciPy 1.18 keeps float32 input's dtype, 1.17 gives float64)
    numpy_case("scipy_rankdata", lambda m, x: rankdata(x), A(3, 4, kind="spread"),
               reference=lambda x: st.rankdata(x).astype(np.float64)),
    numpy_case("scipy_mode_distinct", lambda m, x: mode(x, axis=1).mode,
               A(3, 4, kind="spread"), reference=lambda x: _scipy_mode(x, axis=1)[0]),
    *[numpy_case(f"scipy_rankdata_{method}_ties",
                 lambda m, x, method=method: rankdata(x, method, axis=0), A(5, 3, kind="grid"),
                 diff=False,  # SciPy's ranks are integers but for "average"; JAX's floats
                 reference=lambda x, method=method: _f64(st.rankdata(x, method, axis=0)))
      for method in ("average", "min", "max", "dense", "ordinal")],
    numpy_case("scipy_mode_ties", lambda m, x: tuple(mode(x)), A(6, 3, kind="grid"),
               diff=False, reference=lambda x: _scipy_mode(x)),
    numpy_case("scipy_mode_flat_keepdims",
               lambda m, x: tuple(mode(x, axis=None, keepdims=True)), A(4, 3, kind="grid"),
               diff=False, reference=lambda x: _scipy_mode(x, axis=None, keepdims=True)),
]

def _loc_scale_cases(name, module, reference, functions, quantiles=()):
    """Cases of a location-scale distribution without shape parameters: each function of
    ``x`` (anywhere on the line), ``loc`` and ``scale``, and each quantile function of a
    probability in (0.1, 0.9)."""
    out = [_case(f"{name}_{f}", getattr(module, f), getattr(reference, f), A(3, 4), A(4),
                 A(4, kind="pos")) for f in functions]
    out += [_case(f"{name}_{f}",
                  lambda u, loc, scale, f=f: getattr(module, f)(_prob(u), loc, scale),
                  lambda u, loc, scale, f=f: getattr(reference, f)(_prob(u), loc, scale),
                  A(3, 4, kind="unit"), A(4), A(4, kind="pos")) for f in quantiles]
    return out


_ALL = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")


def _pareto_case(f):
    # x = loc + scale y with y >= 1.5, inside the support.
    return _case(f"pareto_{f}",
                 lambda y, b, loc, scale: getattr(pareto, f)(y * scale + loc + scale, b, loc,
                                                             scale),
                 lambda y, b, loc, scale: getattr(st.pareto, f)(y * scale + loc + scale, b,
                                                                loc, scale),
                 A(3, 4, kind="pos"), A(4, kind="pos"), A(4), A(4, kind="pos"))


def _truncnorm_bounds(a, b, side):
    """Bounds across 0 (``side`` 0), in the upper tail (1) or the lower tail (-1), from two
    positive draws."""
    if side == 0:
        return -a, b
    low, high = 1.0 + a, 1.0 + a + b
    return (low, high) if side == 1 else (-high, -low)


def _truncnorm_case(f, side, loc_scale=False):
    # x between the bounds, at the fraction _prob(u) of the way.
    def call(module, u, a, b, *loc_scale_args):
        low, high = _truncnorm_bounds(a, b, side)
        z = low + _prob(u) * (high - low)
        if loc_scale_args:
            loc, scale = loc_scale_args
            return getattr(module, f)(z * scale + loc, low, high, loc, scale)
        return getattr(module, f)(z, low, high)
    extra = [A(4), A(4, kind="pos")] if loc_scale else []
    suffix = {0: "", 1: "_upper_tail", -1: "_lower_tail"}[side] + ("_loc_scale" if loc_scale
                                                                    else "")
    return _case(f"truncnorm_{f}{suffix}", lambda *xs: call(truncnorm, *xs),
                 lambda *xs: call(st.truncnorm, *xs), A(3, 4, kind="unit"), A(4, kind="pos"),
                 A(4, kind="pos"), *extra)


STATS_CASES += [
    *_loc_scale_cases("cauchy", cauchy, st.cauchy, _ALL, ("ppf", "isf")),
    *_loc_scale_cases("gumbel_r", gumbel_r, st.gumbel_r, _ALL, ("ppf",)),
    *_loc_scale_cases("gumbel_l", gumbel_l, st.gumbel_l, _ALL, ("ppf",)),
    # x = loc + z scale with |z| >= 0.5: a numerical derivative never straddles the kink.
    *[_case(f"laplace_{f}",
            lambda z, loc, scale, f=f: getattr(laplace, f)(z * scale + loc, loc, scale),
            lambda z, loc, scale, f=f: getattr(st.laplace, f)(z * scale + loc, loc, scale),
            A(3, 4, kind="away0"), A(4), A(4, kind="pos")) for f in ("logpdf", "pdf", "cdf")],
    *_loc_scale_cases("logistic", logistic, st.logistic, ("logpdf", "pdf", "cdf", "sf"),
                      ("ppf", "isf")),
    # Inside the support: x >= 0.5 above loc <= -0.5.
    *[_case(f"expon_{f}", lambda x, loc, scale, f=f: getattr(expon, f)(x, -loc, scale),
            lambda x, loc, scale, f=f: getattr(st.expon, f)(x, -loc, scale),
            A(3, 4, kind="pos"), A(4, kind="pos"), A(4, kind="pos")) for f in _ALL],
    _case("expon_ppf", lambda u, loc, scale: expon.ppf(_prob(u), loc, scale),
          lambda u, loc, scale: st.expon.ppf(_prob(u), loc, scale),
          A(3, 4, kind="unit"), A(4), A(4, kind="pos")),
    _case("chi2_logpdf", lambda x, df, loc, scale: chi2.logpdf(x, df, -loc, scale),
          lambda x, df, loc, scale: st.chi2.logpdf(x, df, -loc, scale),
          A(3, 4, kind="pos"), A(4, kind="pos"), A(4, kind="pos"), A(4, kind="pos")),
    _case("chi2_pdf", chi2.pdf, st.chi2.pdf, A(3, 4, kind="pos"), A(4, kind="pos")),
    # The distribution functions differentiate once in df (SHAPE_CASES): here it is held.
    *[_case(f"chi2_{f}",
            lambda x, k, scale, f=f: getattr(chi2, f)(x, 2 * abs(k) + 1.0, 0.0, scale),
            lambda x, k, scale, f=f: getattr(st.chi2, f)(x, 2 * abs(k) + 1.0, 0.0, scale),
            A(3, 4, kind="pos"), A(4, kind="int"), A(4, kind="pos"))
      for f in ("cdf", "logcdf", "sf", "logsf")],
    # beta >= 1.5 keeps |x|^beta twice differentiable at the draws near 0.
    _case("gennorm_logpdf", lambda x, b: gennorm.logpdf(x, b + 1.0),
          lambda x, b: st.gennorm.logpdf(x, b + 1.0), A(3, 4), A(4, kind="pos")),
    _case("gennorm_pdf", lambda x, b: gennorm.pdf(x, b + 1.0),
          lambda x, b: st.gennorm.pdf(x, b + 1.0), A(3, 4), A(4, kind="pos")),
    _case("gennorm_cdf", lambda x, k: gennorm.cdf(x, abs(k) + 1.5),
          lambda x, k: st.gennorm.cdf(x, abs(k) + 1.5), A(3, 4), A(4, kind="int")),
    *[_pareto_case(f) for f in _ALL],
    _case("pareto_ppf", lambda u, b, loc, scale: pareto.ppf(_prob(u), b, loc, scale),
          lambda u, b, loc, scale: st.pareto.ppf(_prob(u), b, loc, scale),
          A(3, 4, kind="unit"), A(4, kind="pos"), A(4), A(4, kind="pos")),
    *[_truncnorm_case(f, side) for f in _ALL for side in (0, 1, -1)],
    *[_truncnorm_case(f, 0, loc_scale=True) for f in ("logpdf", "cdf", "logsf")],
    # Inside [loc, loc + scale]: the density is flat there.
    *[_case(f"uniform_{f}",
            lambda u, loc, scale, f=f: getattr(uniform, f)(_prob(u) * scale + loc, loc, scale),
            lambda u, loc, scale, f=f: getattr(st.uniform, f)(_prob(u) * scale + loc, loc,
                                                              scale),
            A(3, 4, kind="unit"), A(4), A(4, kind="pos")) for f in ("logpdf", "pdf", "cdf")],
    _case("uniform_ppf", lambda u, loc, scale: uniform.ppf(_prob(u), loc, scale),
          lambda u, loc, scale: st.uniform.ppf(_prob(u), loc, scale),
          A(3, 4, kind="unit"), A(4), A(4, kind="pos")),
    _case("vonmises_logpdf", vonmises.logpdf, st.vonmises.logpdf, A(3, 4),
          A(4, kind="pos")),
    _case("vonmises_pdf", vonmises.pdf, st.vonmises.pdf, A(3, 4), A(4, kind="pos")),
    # x = pi (1 + u) in (0.6, 5.6), inside [0, 2 pi]; c in (0.1, 0.9).
    *[_case(f"wrapcauchy_{f}",
            lambda u, v, f=f: getattr(wrapcauchy, f)(np.pi * (1 + u), _prob(v)),
            lambda u, v, f=f: getattr(st.wrapcauchy, f)(np.pi * (1 + u), _prob(v)),
            A(3, 4, kind="unit"), A(4, kind="unit")) for f in ("logpdf", "pdf")],
]


def _spd2(c):
    """A symmetric positive-definite 2 x 2 matrix from any, on the device of ``c``."""
    return c @ c.T + backend.eye(2, dtype=c.dtype, like=c) * 2.0


# gaussian_kde through every transform: the estimator is built inside the case from traced
# data (and weights, and a scalar bandwidth), so the derivatives run through the data's
# covariance, its inverse and their Cholesky factors.  SciPy's estimator is the reference
# (it takes a Python float as bandwidth, not a 0-d array).
STATS_CASES += [
    _case("gaussian_kde_logpdf_1d", lambda data, x: gaussian_kde(data).logpdf(x),
          lambda data, x: st.gaussian_kde(data).logpdf(x), A(12), A(5)),
    _case("gaussian_kde_pdf_1d_weighted",
          lambda data, w, x: gaussian_kde(data, weights=w).pdf(x),
          lambda data, w, x: st.gaussian_kde(data, weights=w).pdf(x),
          A(12), A(12, kind="pos"), A(5)),
    _case("gaussian_kde_evaluate_2d_weighted",
          lambda data, w, x: gaussian_kde(data, weights=w)(x),
          lambda data, w, x: st.gaussian_kde(data, weights=w)(x),
          A(2, 10), A(10, kind="pos"), A(2, 4)),
    _case("gaussian_kde_logpdf_3d_silverman",
          lambda data, w, x: gaussian_kde(data, "silverman", w).logpdf(x),
          lambda data, w, x: st.gaussian_kde(data, "silverman", w).logpdf(x),
          A(3, 12), A(12, kind="pos"), A(3, 4)),
    _case("gaussian_kde_logpdf_scalar_bandwidth",
          lambda data, bw, x: gaussian_kde(data, bw).logpdf(x),
          lambda data, bw, x: st.gaussian_kde(data, float(bw)).logpdf(x),
          A(2, 10), A(kind="pos"), A(2, 3)),
    _case("gaussian_kde_integrate_gaussian",
          lambda data, mean, c: gaussian_kde(data).integrate_gaussian(mean, _spd2(c)),
          lambda data, mean, c: st.gaussian_kde(data).integrate_gaussian(mean, _spd2(c)),
          A(2, 10), A(2), A(2, 2)),
    _case("gaussian_kde_integrate_box_1d",
          lambda data, w, low, width: gaussian_kde(data, weights=w).integrate_box_1d(
              low, low + width),
          lambda data, w, low, width: st.gaussian_kde(data, weights=w).integrate_box_1d(
              low, low + width),
          A(12), A(12, kind="pos"), A(), A(kind="pos")),
    _case("gaussian_kde_integrate_kde",
          lambda data, w, other: gaussian_kde(data, weights=w).integrate_kde(
              gaussian_kde(other)),
          lambda data, w, other: st.gaussian_kde(data, weights=w).integrate_kde(
              st.gaussian_kde(other)),
          A(2, 10), A(10, kind="pos"), A(2, 7)),
]

# The shape of the incomplete gamma function: igamma and igammac differentiate in it twice
# (a third derivative raises), and the kernels of those derivatives differentiate in x to
# any order (their shape comes from integer draws, held fixed).
PRIMITIVE_CASES += [
    Case("igamma_in_a", lambda a, x: lax.igamma(a, _shape_param(x, a)),
         [A(3, 4, kind="pos"), A(3, 4, kind="int")]),
    Case("igammac_in_a", lambda a, x: lax.igammac(a, _shape_param(x, a)),
         [A(3, 4, kind="pos"), A(4, kind="int")]),
    Case("igamma_grad_a_in_a", lambda a, x: lax.igamma_grad_a(a, _shape_param(x, a)),
         [A(3, 4, kind="pos"), A(3, 4, kind="int")], order=1),
    Case("random_gamma_grad_in_a", lambda a, x: lax.random_gamma_grad(a, _shape_param(x, a)),
         [A(3, 4, kind="pos"), A(3, 4, kind="int")], order=1),
    Case("igamma_second_grad_a",
         lambda a, x: special.igamma_second_grad_a_p.bind(_shape_param(a, x), x),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
    Case("random_gamma_second_grad",
         lambda a, x: special.random_gamma_second_grad_p.bind(_shape_param(a, x), x),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
    Case("igamma_grad_a", lambda a, x: lax.igamma_grad_a(_shape_param(a, x), x),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
    Case("random_gamma_grad", lambda a, x: lax.random_gamma_grad(_shape_param(a, x), x),
         [A(3, 4, kind="int"), A(3, 4, kind="pos")]),
]

SHAPE_CASES = [dataclasses.replace(case, order=1) for case in [
    _case("gammainc_in_a", lambda a, x: S.gammainc(a, abs(x) + 0.5),
          lambda a, x: ss.gammainc(a, abs(x) + 0.5), A(3, 4, kind="pos"), A(3, 4, kind="int")),
    _case("gammaincc_in_a", lambda a, x: S.gammaincc(a, abs(x) + 0.5),
          lambda a, x: ss.gammaincc(a, abs(x) + 0.5), A(3, 4, kind="pos"), A(4, kind="int")),
    _case("gamma_cdf_in_a", lambda x, a, scale: gamma.cdf(x, a, 0.0, scale),
          lambda x, a, scale: st.gamma.cdf(x, a, 0.0, scale),
          A(3, 4, kind="pos"), A(4, kind="pos"), A(4, kind="pos")),
    _case("gamma_logsf_in_a", lambda x, a: gamma.logsf(x, a), lambda x, a: st.gamma.logsf(x, a),
          A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("chi2_cdf_in_df", lambda x, df: chi2.cdf(x, df), lambda x, df: st.chi2.cdf(x, df),
          A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("chi2_logsf_in_df", lambda x, df: chi2.logsf(x, df),
          lambda x, df: st.chi2.logsf(x, df), A(3, 4, kind="pos"), A(4, kind="pos")),
    _case("gennorm_cdf_in_beta", lambda x, b: gennorm.cdf(x, b + 1.0),
          lambda x, b: st.gennorm.cdf(x, b + 1.0), A(3, 4), A(4, kind="pos")),
]]

NUMPY_CASES = SPECIAL_CASES + STATS_CASES + SHAPE_CASES
