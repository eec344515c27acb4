"""The beta distribution with shapes ``a`` and ``b`` on ``[loc, loc + scale]``
(``jax.scipy.stats.beta``; its distribution functions need the incomplete beta function,
which functrans does not have yet).

>>> import functrans.scipy.stats.beta as beta
>>> round(float(beta.pdf(0.5, 2.0, 2.0)), 12)  # 6 y (1 - y) at 1/2
1.5
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans.scipy import special
from functrans.scipy._util import inexact_all

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    """``log`` of the density ``y^(a-1) (1-y)^(b-1) / (B(a, b) scale)``, ``y = (x - loc) /
    scale``; ``-inf`` outside ``[0, 1]``.

    >>> import numpy as np
    >>> logpdf(np.array([-0.5, 0.5]), 1.0, 1.0)
    array([-inf,   0.])
    """
    x, a, b, loc, scale = inexact_all(x, a, b, loc, scale)
    y = (x - loc) / scale
    inside = (y >= 0) & (y <= 1)
    y = fnp.where(inside, y, 0.5)  # keeps the logs and their derivatives finite outside
    value = (special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b)
             - fnp.log(scale))
    return fnp.where(inside, value, -np.inf)


def pdf(x, a, b, loc=0, scale=1):
    """The density ``exp(logpdf(x, a, b, loc, scale))``.

    >>> round(float(pdf(0.25, 1.0, 1.0)), 12)
    1.0
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))


def __dir__() -> list[str]:
    return sorted(__all__)
