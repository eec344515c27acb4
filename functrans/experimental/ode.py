"""``functrans.experimental.ode``: ``odeint``, the adaptive Dormand–Prince integrator of
JAX's ``jax.experimental.ode``, with the adjoint method for reverse mode (implemented in
``functrans/runge_kutta.py``).

>>> import numpy as np
>>> from functrans.experimental.ode import odeint
>>> ts = np.linspace(0.0, np.pi, 3)
>>> np.allclose(odeint(lambda y, t: (y[1], -y[0]), (1.0, 0.0), ts)[0], np.cos(ts))
True
"""
from functrans.runge_kutta import odeint

__all__ = ["odeint"]


def __dir__() -> list:
    return sorted(__all__)
