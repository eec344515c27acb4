"""``functrans.test_util``: JAX's ``jax.test_util`` import path for :func:`check_grads`
(the same function as ``functrans.testing.check_grads``).

>>> import numpy as np, functrans.numpy as fnp
>>> from functrans.test_util import check_grads
>>> check_grads(fnp.tanh, (np.array([0.3, -1.2]),), order=2, modes=("fwd", "rev"))
"""
from functrans.testing import check_grads

__all__ = ["check_grads"]


def __dir__() -> list[str]:
    return sorted(__all__)
