"""``functrans.lax_linalg`` (also ``functrans.lax.linalg``): the linear-algebra primitives'
own functions, with the names of JAX's ``jax.lax.linalg``.

>>> import numpy as np
>>> from functrans import lax
>>> lax.linalg.cholesky(np.array([[9.0]]))
array([[3.]])
"""
from __future__ import annotations

import enum

import numpy as np

from functrans.core import get_aval
from functrans.lax_extra import full
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import conj, mul
from functrans.primitives.linalg import dot_general
from functrans.primitives.shape import broadcast_in_dim
from functrans.primitives.decompositions import (  # noqa: F401 (the *_p are re-exported)
    cholesky_p, eig_p, eigh_p, lu_p, qr_p, svd_p, triangular_solve_p)
from functrans.primitives.decompositions import (
    cholesky, cholesky_update, eig, eigh, householder_product, lu, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, ormqr, qr, schur_p, svd, symmetric_product, triangular_solve,
    tridiagonal, tridiagonal_p, tridiagonal_solve, tridiagonal_solve_p)
from functrans.primitives.decompositions import hessenberg_reflectors as hessenberg
from functrans.primitives.decompositions import schur as _schur_pair

__all__ = ["cholesky", "cholesky_update", "eig", "eigh", "hessenberg", "householder_product",
           "lu", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "qr",
           "qdwh", "schur", "schur_p", "svd", "symmetric_product", "triangular_solve", "tridiagonal",
           "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p",
           "EigImplementation", "EighImplementation", "SvdAlgorithm",
           # the primitives of the decompositions, under JAX's names (functrans's parameters)
           "cholesky_p", "eig_p", "eigh_p", "lu_p", "qr_p", "svd_p", "triangular_solve_p"]


class EigImplementation(enum.Enum):
    """The eigensolvers JAX's ``eig(..., implementation=...)`` chooses among.  functrans
    accepts each and calls NumPy's LAPACK driver (``geev``) for all."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """The Hermitian eigensolvers JAX's ``eigh(..., implementation=...)`` chooses among.
    functrans accepts each and calls NumPy's LAPACK driver (``syevd`` / ``heevd``) for
    all."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """The SVD algorithms JAX's ``svd(..., algorithm=...)`` chooses among.  functrans
    accepts each and calls NumPy's LAPACK driver (``gesdd``) for all."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """The Schur decomposition of each square matrix in ``x`` (``(..., n, n)``): ``(t,
    vs)`` with ``x = vs t vsᴴ``, ``vs`` unitary and ``t`` upper triangular (complex ``x``)
    or quasi-triangular with 2 x 2 blocks for complex conjugate pairs (real ``x``), as
    LAPACK's ``gees`` (through SciPy); ``(t,)`` alone without ``compute_schur_vectors``, as
    JAX.  Sorting the eigenvalues (``sort_eig_vals``, ``select_callable``) is refused, as
    by JAX on CPU.  Not differentiable (nor in JAX).

    >>> import numpy as np
    >>> from functrans.lax_linalg import schur
    >>> t, vs = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> t
    array([[1., 2.],
           [0., 3.]])
    """
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("schur: sort_eig_vals and select_callable (gees's sorting) "
                                  "are not implemented, as in JAX on CPU; sort the "
                                  "eigenvalues of t afterwards, or use "
                                  "functrans.scipy.linalg.schur")
    t, vs = _schur_pair(x)
    return (t, vs) if compute_schur_vectors else (t,)


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition ``x = u h`` of the matrix ``x`` (``(m, n)``, ``m >= n``, as
    JAX): ``(u, h, num_iters, is_converged)`` with ``u`` (``m x n``) having orthonormal
    columns and ``h`` (``n x n``) Hermitian positive semidefinite.  JAX iterates (QDWH);
    functrans computes the same factors from the SVD ``x = U S Vᴴ``, ``u = U Vᴴ`` and ``h
    = V S Vᴴ`` (agreeing to rounding), so ``num_iters`` is 0 (a weakly typed integer, as
    JAX's) and ``is_converged`` True; ``is_hermitian``, ``max_iterations`` and ``eps``,
    the iteration's, are accepted and not needed.  ``dynamic_shape`` is refused.
    Differentiable where ``x`` has full rank and distinct singular values (through the
    SVD's rules).

    >>> import numpy as np
    >>> from functrans.lax_linalg import qdwh
    >>> u, h, num_iters, is_converged = qdwh(np.array([[0.0, 2.0], [-3.0, 0.0]]))
    >>> u.round(12) + 0.0, h.round(12) + 0.0
    (array([[ 0.,  1.],
           [-1.,  0.]]), array([[3., 0.],
           [0., 2.]]))
    """
    del is_hermitian, max_iterations, eps
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape (a padded matrix's true shape) is "
                                  "not implemented; slice the matrix to its shape first")
    aval = get_aval(x)
    if aval.dtype.kind not in "fc":
        raise TypeError(f"qdwh: x must be a floating or complex matrix, got dtype "
                        f"{aval.dtype}; convert it first")
    if aval.ndim != 2 or aval.shape[0] < aval.shape[1]:
        raise ValueError(f"qdwh: x must be a matrix of shape (m, n) with m >= n (as JAX), "
                         f"got shape {aval.shape}")
    big_u, s, vh = svd(x, full_matrices=False)
    u = dot_general(big_u, vh, (((1,), (0,)), ((), ())))
    scaled = mul(vh, broadcast_in_dim(convert_element_type(s, aval.dtype), vh.shape, (0,)))
    v_t = conj(vh) if aval.dtype.kind == "c" else vh          # Vᵀ
    h = dot_general(v_t, scaled, (((0,), (0,)), ((), ())))    # V S Vᴴ
    return u, h, full((), 0), full((), True, dtype=np.bool_)
