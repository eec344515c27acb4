"""``functrans.experimental``: JAX's ``jax.experimental`` modules that functrans offers.
Each is imported as a module, as in JAX: ``from functrans.experimental.ode import odeint``.

>>> import numpy as np
>>> from functrans.experimental import ode
>>> np.allclose(ode.odeint(lambda y, t: y, 1.0, np.array([0.0, 1.0]))[-1], np.e)
True
"""
from functrans.experimental import ode

__all__ = ["ode"]


def __dir__() -> list:
    return sorted(__all__)
