"""``functrans.scipy.stats``: log-densities, densities and distribution functions of
``jax.scipy.stats``, one submodule per distribution, differentiable in every argument where
the function is: continuous (``norm``, ``multivariate_normal``, ``t``, ``gamma``, ``beta``,
``chi2``, ``expon``, ``cauchy``, ``laplace``, ``logistic``, ``gennorm``, ``gumbel_r``,
``gumbel_l``, ``pareto``, ``uniform``, ``truncnorm``, ``vonmises``, ``wrapcauchy``,
``dirichlet``) and discrete (``poisson``, ``bernoulli``, ``binom``, ``nbinom``, ``geom``,
``betabinom``, ``multinomial``); the summaries ``mode``, ``rankdata`` and ``sem``; and the
kernel density estimator ``gaussian_kde``.

>>> import functrans.scipy.stats as stats
>>> round(float(stats.norm.logpdf(0.0)), 10)
-0.9189385332
"""
from functrans.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet,
                                   expon, gamma, gennorm, geom, gumbel_l, gumbel_r, laplace,
                                   logistic, multinomial, multivariate_normal, nbinom, norm,
                                   pareto, poisson, t, truncnorm, uniform, vonmises,
                                   wrapcauchy)
from functrans.scipy.stats._descriptive import mode, rankdata, sem
from functrans.scipy.stats._kde import gaussian_kde

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]
