"""``functrans.scipy.integrate``: numerical integration of sampled data, as
``jax.scipy.integrate``.

>>> import numpy as np, functrans.scipy.integrate as integrate
>>> float(integrate.trapezoid(np.array([1.0, 2.0, 3.0])))
4.0
"""
from __future__ import annotations

import functrans.numpy as fnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule: at the sample
    points ``x`` if given (broadcast against ``y`` along ``axis``, or 1-D), else at spacing
    ``dx``.  As ``scipy.integrate.trapezoid`` (and ``jax.scipy.integrate.trapezoid``);
    differentiable in ``y``, ``x`` and ``dx``.

    >>> import numpy as np, functrans as ft, functrans.scipy.integrate as integrate
    >>> float(integrate.trapezoid(np.array([1.0, 2.0, 4.0]), x=np.array([0.0, 1.0, 3.0])))
    7.5
    >>> ft.grad(integrate.trapezoid)(np.array([1.0, 2.0, 4.0]))  # the rule's weights
    array([0.5, 1. , 0.5])
    """
    return fnp.trapezoid(y, x, dx, axis)
