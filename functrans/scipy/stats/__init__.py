"""``functrans.scipy.stats``: log-densities, densities and distribution functions of
``jax.scipy.stats``, one submodule per distribution (``norm``, ``multivariate_normal``,
``t``, ``gamma``, ``beta``, ``chi2``, ``expon``, ``cauchy``, ``laplace``, ``logistic``,
``gennorm``, ``gumbel_r``, ``gumbel_l``, ``pareto``, ``uniform``, ``truncnorm``,
``vonmises``, ``wrapcauchy``, ``poisson``, ``bernoulli``), differentiable in every argument
where the function is.

>>> import functrans.scipy.stats as stats
>>> round(float(stats.norm.logpdf(0.0)), 10)
-0.9189385332
"""
from functrans.scipy.stats import (bernoulli, beta, cauchy, chi2, expon, gamma, gennorm,
                                   gumbel_l, gumbel_r, laplace, logistic,
                                   multivariate_normal, norm, pareto, poisson, t, truncnorm,
                                   uniform, vonmises, wrapcauchy)

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "gennorm", "gumbel_l",
           "gumbel_r", "laplace", "logistic", "multivariate_normal", "norm", "pareto",
           "poisson", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
