"""``functrans.scipy.sparse``: as ``jax.scipy.sparse``, the iterative solvers of
``linalg`` (``import functrans.scipy.sparse.linalg``)."""

from functrans.scipy.sparse import linalg

__all__ = ["linalg"]
