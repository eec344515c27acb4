"""``functrans.experimental``: JAX's ``jax.experimental`` modules and functions that
functrans offers: the module ``ode`` (imported as a module, as in JAX:
``from functrans.experimental.ode import odeint``) and ``io_callback``.

>>> import numpy as np
>>> from functrans.experimental import ode
>>> np.allclose(ode.odeint(lambda y, t: y, 1.0, np.array([0.0, 1.0]))[-1], np.e)
True
"""
from functrans.experimental import ode
from functrans.runtime import io_callback

__all__ = ["io_callback", "ode"]


def __dir__() -> list:
    return sorted(__all__)
