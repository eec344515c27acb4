"""``functrans.example_libraries``: JAX's ``jax.example_libraries``, the small optimizer
library (``optimizers``) and neural-network layer library (``stax``) that JAX's examples
and many tutorials train with.  Each is imported as a module, as in JAX: ``from
functrans.example_libraries import optimizers, stax``.

>>> import numpy as np
>>> from functrans.example_libraries import optimizers, stax
>>> init_fun, apply_fun = stax.serial(stax.Dense(3), stax.Relu)
>>> opt_init, opt_update, get_params = optimizers.sgd(0.1)
"""
from functrans.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]


def __dir__() -> list:
    return sorted(__all__)
