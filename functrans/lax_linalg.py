"""``functrans.lax_linalg`` (also ``functrans.lax.linalg``): the linear-algebra primitives'
own functions, with the names of JAX's ``jax.lax.linalg``.

>>> import numpy as np
>>> from functrans import lax
>>> lax.linalg.cholesky(np.array([[9.0]]))
array([[3.]])
"""
from functrans.primitives.decompositions import (cholesky, eig, eigh, lu, qr, svd,
                                                 triangular_solve, tridiagonal_solve,
                                                 tridiagonal_solve_p)

__all__ = ["cholesky", "eig", "eigh", "lu", "qr", "svd", "triangular_solve",
           "tridiagonal_solve", "tridiagonal_solve_p"]
