"""``functrans.scipy.stats``: log-densities, densities and distribution functions of
``jax.scipy.stats``, one submodule per distribution (``norm``, ``multivariate_normal``,
``t``, ``gamma``, ``beta``, ``poisson``, ``bernoulli``), differentiable in every argument
where the function is.  The discrete and multivariate ones: ``binom``, ``nbinom``, ``geom``,
``betabinom``, ``multinomial`` and ``dirichlet``; and the summaries ``mode``, ``rankdata``
and ``sem``.

>>> import functrans.scipy.stats as stats
>>> round(float(stats.norm.logpdf(0.0)), 10)
-0.9189385332
"""
from functrans.scipy.stats import (bernoulli, beta, gamma, multivariate_normal, norm,
                                   poisson, t)
from functrans.scipy.stats import betabinom, binom, dirichlet, geom, multinomial, nbinom
from functrans.scipy.stats._descriptive import mode, rankdata, sem

__all__ = ["bernoulli", "beta", "gamma", "multivariate_normal", "norm", "poisson", "t"]
__all__ += ["betabinom", "binom", "dirichlet", "geom", "mode", "multinomial", "nbinom",
            "rankdata", "sem"]
