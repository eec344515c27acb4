"""``functrans.scipy.linalg``: ``scipy.linalg``'s functions with JAX's signatures,
differentiable in both modes and batched over leading axes.

Everything here is built on functrans's own primitives (whose impls use NumPy, or CuPy on
device arrays), so this module works without SciPy installed, except the functions built
on the Schur or Hessenberg decomposition or a Sylvester solve (``schur``, ``hessenberg``,
``sqrtm``, ``funm``, ``solve_sylvester``), whose impls call SciPy's LAPACK drivers on the
host (NumPy and CuPy have none: CuPy arrays are refused, as JAX's CPU-only ``schur``
refuses GPUs).  SciPy's keywords that only concern memory or input checking
(``overwrite_a``, ``overwrite_b``, ``overwrite_c``, ``check_finite``, ``lwork``,
``debug``, ``turbo``) are accepted and ignored, as in JAX.

>>> import numpy as np, functrans as ft
>>> import functrans.scipy.linalg as fsl
>>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
>>> fsl.cho_solve(fsl.cho_factor(a), np.array([2.0, 1.0]))
array([0.5, 0. ])
>>> round(float(ft.grad(lambda t: fsl.expm(t * a)[0, 1])(0.0)), 12)  # d/dt exp(ta) = a
2.0
"""
from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

import functrans.numpy as fnp
from functrans import backend, lax
from functrans.core import get_aval
from functrans.primitives import decompositions, matrix_functions
from functrans.primitives.custom_derivatives import library_custom_jvp
from functrans.primitives.decompositions import permutation_matrix

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie",
           "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf",
           "schur", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd",
           "toeplitz"]


def __dir__() -> list:
    return sorted(__all__)


# -- helpers -------------------------------------------------------------------------------


def _inexact(*xs):
    """The arguments as arrays of one float or complex dtype (integers become float64)."""
    xs = [fnp.asarray(x) if isinstance(x, (list, tuple)) else x for x in xs]
    dtype = np.result_type(*[get_aval(x).dtype for x in xs])
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return [x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
            for x in xs]


def _square(name: str, what: str, x):
    shape = get_aval(x).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"{name}: {what} must be a square matrix (or a stack of them, "
                         f"(..., n, n)), got shape {shape}")
    return shape


def _adjoint(x):
    x = fnp.linalg.matrix_transpose(x)
    return lax.conj(x) if get_aval(x).dtype.kind == "c" else x


def _right_hand_side(name: str, a, b):
    """``a`` and ``b`` with equal (broadcast) batch axes and ``b`` a stack of matrices, and
    whether ``b`` was a vector (``b.ndim == a.ndim - 1``: one vector per matrix)."""
    a_shape, b_shape = get_aval(a).shape, get_aval(b).shape
    vector = len(b_shape) == len(a_shape) - 1
    if vector:
        b = lax.expand_dims(b, (len(b_shape),))
        b_shape = get_aval(b).shape
    if len(b_shape) < 2 or b_shape[-2] != a_shape[-1]:
        raise ValueError(f"{name}: a has shape {a_shape}, so b must have shape (..., "
                         f"{a_shape[-1]}) or (..., {a_shape[-1]}, k), got {get_aval(b).shape}")
    try:
        batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ValueError(f"{name}: the leading (batch) axes of a {a_shape} and b {b_shape} "
                         "do not broadcast") from None
    a = fnp.broadcast_to(a, batch + a_shape[-2:])
    b = fnp.broadcast_to(b, batch + b_shape[-2:])
    return a, b, vector


def _vector_back(x, vector: bool):
    return lax.squeeze(x, (get_aval(x).ndim - 1,)) if vector else x


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def _trans(name: str, trans):
    try:
        return _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(f"{name}: trans must be 0, 1, 2 or 'N', 'T', 'C' (a x = b, aᵀ x = b, "
                         f"aᴴ x = b), got {trans!r}") from None


# -- triangular and Cholesky solves --------------------------------------------------------


def solve_triangular(a, b, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True):
    """The solution ``x`` of ``a x = b`` (``trans`` 0 or ``'N'``), ``aᵀ x = b`` (1,
    ``'T'``) or ``aᴴ x = b`` (2, ``'C'``) for triangular ``a``: only its ``lower`` (or
    upper) triangle is read, and not its diagonal if ``unit_diagonal`` (taken to be ones).
    ``a`` is ``(..., n, n)``; ``b`` is ``(..., n)`` (vectors) or ``(..., n, k)``, leading
    axes broadcast.  Linear in ``b``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
    >>> fsl.solve_triangular(a, np.array([2.0, 9.0]), lower=True)
    array([1., 2.])
    >>> fsl.solve_triangular(a, np.array([2.0, 8.0]), trans="T", lower=True)
    array([0., 2.])
    """
    transpose_a, conjugate_a = _trans("solve_triangular", trans)
    a, b = _inexact(a, b)
    _square("solve_triangular", "a", a)
    a, b, vector = _right_hand_side("solve_triangular", a, b)
    x = lax.linalg.triangular_solve(a, b, left_side=True, lower=lower, transpose_a=transpose_a,
                                    conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return _vector_back(x, vector)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of each Hermitian positive-definite matrix in ``a``: upper ``U``
    with ``a = Uᴴ U`` (SciPy's default), or lower ``L`` with ``a = L Lᴴ`` if ``lower``.
    As SciPy (and JAX's ``jax.scipy.linalg.cholesky``), only that triangle of ``a`` is
    read, so derivatives with respect to the other are zero (``functrans.numpy.linalg
    .cholesky`` instead symmetrizes ``a``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[2., 1.],
           [0., 2.]])
    """
    (a,) = _inexact(a)
    _square("cholesky", "a", a)
    if lower:
        return lax.linalg.cholesky(a, symmetrize_input=False)
    return _adjoint(lax.linalg.cholesky(_adjoint(a), symmetrize_input=False))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """``(c, lower)`` for ``cho_solve``: ``c`` is ``cholesky(a, lower)``.  Unlike SciPy's
    (whose other triangle holds whatever ``a`` had there), ``c``'s other triangle is zero,
    as in JAX; ``cho_solve`` reads only the factor's triangle, so both work with it.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> c, lower = fsl.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)
    >>> c, lower
    (array([[2., 0.],
           [1., 2.]]), True)
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """The solution ``x`` of ``a x = b`` from ``(c, lower) = cho_factor(a, lower)``: two
    triangular solves.  ``b`` is ``(..., n)`` or ``(..., n, k)``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> fsl.cho_solve(fsl.cho_factor(a), a @ np.array([1.0, -1.0]))
    array([ 1., -1.])
    """
    if not isinstance(c_and_lower, (tuple, list)) or len(c_and_lower) != 2:
        raise TypeError("cho_solve: the first argument must be the pair (c, lower) that "
                        f"cho_factor returns, got {type(c_and_lower).__name__}")
    c, lower = c_and_lower
    c, b = _inexact(c, b)
    _square("cho_solve", "c", c)
    c, b, vector = _right_hand_side("cho_solve", c, b)
    # a = L Lᴴ (lower) or Uᴴ U: first the factor that stands left, then the other.
    y = lax.linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    x = lax.linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return _vector_back(x, vector)


# -- LU ------------------------------------------------------------------------------------


def _unit_lower(packed):
    n = get_aval(packed).shape[-1]
    eye = backend.eye(n, dtype=get_aval(packed).dtype, like=packed)
    return fnp.tril(packed, -1) + eye


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """LU decomposition with partial pivoting of each square matrix in ``a``: ``(p, l,
    u)`` with ``a = p @ l @ u`` (``p`` a real permutation matrix, as SciPy's, ``l`` unit
    lower triangular, ``u`` upper triangular), or ``(p @ l, u)`` if ``permute_l``.  Only
    square matrices (functrans's ``lu`` primitive is square).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> p, l, u = fsl.lu(np.array([[1.0, 2.0], [4.0, 4.0]]))
    >>> p
    array([[0., 1.],
           [1., 0.]])
    >>> l @ u
    array([[4., 4.],
           [1., 2.]])
    """
    (a,) = _inexact(a)
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise NotImplementedError(f"lu: only square matrices (..., n, n) are supported, got "
                                  f"shape {shape}")
    packed, _, permutation = lax.linalg.lu(a)
    # a[permutation] = L U, that is P a = L U with P = permutation_matrix: a = Pᵀ L U.
    real = np.finfo(get_aval(a).dtype).dtype
    p = fnp.linalg.matrix_transpose(permutation_matrix(permutation, real, a))
    l, u = _unit_lower(packed), fnp.triu(packed)
    return (fnp.matmul(p, l), u) if permute_l else (p, l, u)


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """``(lu, piv)`` for ``lu_solve``: ``lu`` holds ``u`` in its upper triangle and ``l``'s
    strict lower triangle (its unit diagonal implied), and row ``i`` was swapped with row
    ``piv[i]`` (int32, 0-based, as SciPy's ``ipiv`` and JAX's).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.lu_factor(np.array([[1.0, 2.0], [4.0, 4.0]]))
    (array([[4.  , 4.  ],
           [0.25, 1.  ]]), array([1, 1], dtype=int32))
    """
    (a,) = _inexact(a)
    _square("lu_factor", "a", a)
    packed, pivots, _ = lax.linalg.lu(a)
    return packed, pivots


def _permutation_from_pivots(pivots):
    """The row order ``perm`` with ``a[perm] = L U`` from LAPACK's row swaps ``pivots``
    (row ``j`` swapped with row ``pivots[j]``, in order), with integer operations that
    work on traced pivots too."""
    pivots = lax.convert_element_type(pivots, np.int32)
    nd = get_aval(pivots).ndim
    n = get_aval(pivots).shape[-1]
    steps = lax.sub(lax.cumsum(lax.add(lax.mul(pivots, 0), 1), nd - 1), 1)   # 0, 1, ..., n-1
    perm = steps
    shape = get_aval(pivots).shape

    def entry(x, j):  # x[..., j:j + 1]
        return lax.slice(x, (0,) * (nd - 1) + (j,), shape[:-1] + (j + 1,))

    for j in range(n):
        column = entry(pivots, j)
        at_j = lax.convert_element_type(lax.eq(steps, j), np.int32)
        at_pivot = lax.convert_element_type(lax.eq(steps, column), np.int32)
        value_j = entry(perm, j)
        value_pivot = lax.reduce_sum(lax.mul(at_pivot, perm), (nd - 1,))
        value_pivot = lax.expand_dims(value_pivot, (nd - 1,))
        change = lax.sub(value_pivot, value_j)
        perm = lax.add(perm, lax.mul(lax.sub(at_j, at_pivot), change))
    return perm


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True):
    """The solution ``x`` of ``a x = b`` (``trans`` 0), ``aᵀ x = b`` (1) or ``aᴴ x = b``
    (2) from ``(lu, piv) = lu_factor(a)``.  ``b`` is ``(..., n)`` or ``(..., n, k)``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 2.0], [4.0, 4.0]])
    >>> fsl.lu_solve(fsl.lu_factor(a), np.array([3.0, 8.0]))
    array([1., 1.])
    """
    if not isinstance(lu_and_piv, (tuple, list)) or len(lu_and_piv) != 2:
        raise TypeError("lu_solve: the first argument must be the pair (lu, piv) that "
                        f"lu_factor returns, got {type(lu_and_piv).__name__}")
    packed, pivots = lu_and_piv
    transpose_a, conjugate_a = _trans("lu_solve", trans)
    packed, b = _inexact(packed, b)
    shape = _square("lu_solve", "lu", packed)
    if get_aval(pivots).shape != shape[:-1]:
        raise ValueError(f"lu_solve: piv must have shape {shape[:-1]} for lu of shape {shape}, "
                         f"got {get_aval(pivots).shape}")
    packed, b, vector = _right_hand_side("lu_solve", packed, b)
    batch = get_aval(packed).shape[:-2]
    pivots = fnp.broadcast_to(pivots, batch + shape[-1:])
    p = permutation_matrix(_permutation_from_pivots(pivots), get_aval(packed).dtype, packed)
    solve = lax.linalg.triangular_solve
    if not transpose_a:  # P a = L U: x = U⁻¹ L⁻¹ P b
        y = solve(packed, fnp.matmul(p, b), left_side=True, lower=True, unit_diagonal=True)
        x = solve(packed, y, left_side=True, lower=False)
    else:  # op(a) = op(U) op(L) P: x = Pᵀ op(L)⁻¹ op(U)⁻¹ b
        y = solve(packed, b, left_side=True, lower=False, transpose_a=True,
                  conjugate_a=conjugate_a)
        z = solve(packed, y, left_side=True, lower=True, transpose_a=True,
                  conjugate_a=conjugate_a, unit_diagonal=True)
        x = fnp.matmul(fnp.linalg.matrix_transpose(p), z)
    return _vector_back(x, vector)


# -- general solves, inverse, determinant ----------------------------------------------------

_ASSUME = {"gen": "gen", "general": "gen", "sym": "sym", "symmetric": "sym", "her": "her",
           "hermitian": "her", "pos": "pos", "positive definite": "pos"}


def _from_triangle(a, lower: bool, hermitian: bool):
    """The symmetric (Hermitian) matrix that has ``a``'s lower (or upper) triangle."""
    strict = fnp.tril(a, -1) if lower else fnp.triu(a, 1)
    other = fnp.linalg.matrix_transpose(strict)
    diagonal = fnp.tril(fnp.triu(a))
    if hermitian and get_aval(a).dtype.kind == "c":
        other = fnp.conj(other)
        diagonal = lax.convert_element_type(fnp.real(diagonal), get_aval(a).dtype)
    return strict + other + diagonal


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """The solution ``x`` of ``a x = b``.  ``assume_a``: ``'gen'`` (LU with partial
    pivoting), ``'sym'`` or ``'her'`` (``a`` is the symmetric or Hermitian matrix with the
    ``lower``, or upper, triangle of the argument, as SciPy reads it; solved by LU),
    ``'pos'`` (Hermitian positive definite: Cholesky of that triangle).  SciPy's long
    names (``'general'``, ``'symmetric'``, ``'hermitian'``, ``'positive definite'``) are
    accepted too.  ``b`` is one vector if it is 1-D, else a stack of matrices whose
    leading axes broadcast against ``a``'s (as ``functrans.numpy.linalg.solve``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[4.0, 99.0], [2.0, 5.0]])  # 'pos' with lower=True reads [[4, 2], [2, 5]]
    >>> fsl.solve(a, np.array([6.0, 7.0]), assume_a="pos", lower=True)
    array([1., 1.])
    """
    kind = _ASSUME.get(assume_a) if isinstance(assume_a, str) else None
    if kind is None:
        raise ValueError(f"solve: assume_a must be one of {sorted(_ASSUME)}, got {assume_a!r}"
                         " (SciPy's banded, tridiagonal, diagonal and triangular solvers are "
                         "not offered: use solve_triangular for triangular a)")
    a, b = _inexact(a, b)
    _square("solve", "a", a)
    if kind == "pos":
        if get_aval(b).ndim == 1:  # one vector, as NumPy 2 and the general solve read it
            return lax.squeeze(cho_solve(cho_factor(a, lower), lax.expand_dims(b, (1,))), (1,))
        return cho_solve(cho_factor(a, lower), b)
    if kind != "gen":
        a = _from_triangle(a, lower, hermitian=kind == "her")
    return fnp.linalg.solve(a, b)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of each square matrix in ``a`` (``functrans.numpy.linalg.inv``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    return fnp.linalg.inv(a)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant of each square matrix in ``a`` (``functrans.numpy.linalg.det``:
    its gradient is finite at singular matrices too).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> float(fsl.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
    """
    return fnp.linalg.det(a)


# -- decompositions ------------------------------------------------------------------------


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """The singular value decomposition ``(u, s, vh)`` of each matrix in ``a`` (``s`` alone
    if not ``compute_uv``), as ``functrans.numpy.linalg.svd`` computes it (its derivatives
    and their edge choices); ``overwrite_a``, ``check_finite`` and ``lapack_driver`` are
    accepted for compatibility (the array library picks its driver).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.svd(np.array([[3.0, 0.0], [0.0, 4.0]]), compute_uv=False)
    array([4., 3.])
    """
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got "
                         f"{lapack_driver!r}")
    return fnp.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
    """Eigenvalues ``w`` (ascending) and eigenvectors ``v`` (columns) of each Hermitian
    matrix in ``a``: ``(w, v)``, or ``w`` if ``eigvals_only``.  As JAX (and
    ``functrans.numpy.linalg.eigh``), ``a`` is taken to be Hermitian, ``(a + aᴴ) / 2``, so
    ``lower`` does not change the result for Hermitian input.  The generalized problem
    (``b``) and eigenvalue subsets (``eigvals``) are not supported.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
    array([1., 3.])
    """
    if b is not None:
        raise NotImplementedError("eigh: the generalized eigenproblem (b) is not supported; "
                                  "for positive-definite b, solve the standard problem of "
                                  "L⁻¹ a L⁻ᴴ with L = cholesky(b, lower=True)")
    if eigvals is not None or type != 1:
        raise NotImplementedError("eigh: eigvals (a subset) and type other than 1 are not "
                                  "supported; select from the full result instead")
    (a,) = _inexact(a)
    _square("eigh", "a", a)
    v, w = lax.linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


_QR_MODES = ("full", "r", "economic")


def qr(a, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True):
    """QR decomposition of each matrix in ``a`` (shape ``(..., M, N)``): ``(q, r)`` with
    ``q`` ``M x M`` (``mode='full'``) or ``M x K``, ``K = min(M, N)`` (``'economic'``), or
    ``(r,)`` for ``mode='r'`` (``r`` as in ``'full'``), as SciPy.  Differentiable where
    ``functrans.numpy.linalg.qr`` is (``M >= N`` economic, or square).  Column pivoting
    and ``mode='raw'`` are not supported.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> q, r = fsl.qr(np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 2.0]]))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    """
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported (its column "
                                  "permutation is not differentiable)")
    if mode not in _QR_MODES:
        raise ValueError(f"qr: mode must be one of {_QR_MODES}, got {mode!r}")
    (a,) = _inexact(a)
    q, r = lax.linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


# -- matrix functions and constructions ----------------------------------------------------


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):  # noqa: N803
    """The matrix exponential of each square matrix in ``A`` (shape ``(..., n, n)``), by
    scaling and squaring with a degree-13 Padé approximant.  Its derivative is the
    Fréchet derivative ``expm_frechet`` (the 2n x 2n block method), in both modes and to
    any order.  ``upper_triangular`` and ``max_squarings`` are JAX's keywords, accepted
    and not needed: the number of squarings is chosen from the value of ``A``'s norm.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.expm(np.array([[0.0, np.pi], [-np.pi, 0.0]])).round(12) + 0.0  # a half turn
    array([[-1.,  0.],
           [ 0., -1.]])
    """
    (A,) = _inexact(A)
    _square("expm", "A", A)
    return matrix_functions.expm(A)


def expm_frechet(A, E, method: str | None = None, compute_expm: bool = True):  # noqa: N803
    """The Fréchet derivative of ``expm`` at ``A`` in the direction ``E`` (``d/dt
    expm(A + t E)`` at ``t = 0``), with ``expm(A)`` first if ``compute_expm``:
    ``(expm(A), L)`` or ``L``.  Computed by the block method whatever ``method``
    (``None``, ``'SPS'`` or ``'blockEnlarge'``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.expm_frechet(np.zeros((2, 2)), np.eye(2), compute_expm=False)
    array([[1., 0.],
           [0., 1.]])
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: method must be None, 'SPS' or 'blockEnlarge', got "
                         f"{method!r}")
    A, E = _inexact(A, E)
    shape = _square("expm_frechet", "A", A)
    if get_aval(E).shape != shape:
        raise ValueError(f"expm_frechet: E must have A's shape {shape}, got {get_aval(E).shape}")
    frechet = matrix_functions.expm_frechet(A, E)
    return (matrix_functions.expm(A), frechet) if compute_expm else frechet


def block_diag(*arrs):
    """The block-diagonal matrix with the given blocks (0-D and 1-D arrays are ``1 x 1``
    and ``1 x n`` blocks), zeros elsewhere, in the blocks' common dtype.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.block_diag(np.array([[1, 2]]), np.array([3]))
    array([[1, 2, 0],
           [0, 0, 3]])
    """
    if not arrs:
        return np.zeros((1, 0))
    blocks = []
    for i, x in enumerate(arrs):
        x = fnp.asarray(x) if isinstance(x, (list, tuple)) else x
        nd = get_aval(x).ndim
        if nd > 2:
            raise ValueError(f"block_diag: block {i} has shape {get_aval(x).shape}; blocks must "
                             "have at most 2 dimensions")
        blocks.append(fnp.reshape(x, (1, -1)) if nd < 2 else x)
    dtype = np.result_type(*[get_aval(x).dtype for x in blocks])
    width = sum(get_aval(x).shape[1] for x in blocks)
    rows, start = [], 0
    for x in blocks:
        columns = get_aval(x).shape[1]
        x = x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
        rows.append(fnp.pad(x, ((0, 0), (start, width - start - columns))))
        start += columns
    return fnp.concatenate(rows, axis=0)


# -- special matrices ----------------------------------------------------------------------
# The constructors from arrays gather their entries from a vector (the inputs' values, then
# a zero and a one where the pattern needs them) with an index matrix computed from the
# row and column numbers: one ``take`` along the last axis, so derivatives, vmap and jit
# come from the gather's rules and leading axes are batch axes.  The numbers are made by
# ``iota`` on the vector's device, so a device array meets no host constant.  The
# constructors from an order ``n`` compute exact integer values in Python where there are
# any, then round once to float64.


def _vector(x):
    """``x`` as an array of at least one axis (its last: the vector, the others: a batch)."""
    return fnp.atleast_1d(fnp.asarray(x))


def _promoted(*xs):
    """The arguments in their common dtype (integers stay integers)."""
    dtype = np.result_type(*[get_aval(x).dtype for x in xs])
    return [x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
            for x in xs]


def _common_batch(name: str, named: dict):
    """The arrays (by argument name) with their leading (batch) axes broadcast."""
    shapes = {k: get_aval(x).shape for k, x in named.items()}
    try:
        batch = np.broadcast_shapes(*[s[:-1] for s in shapes.values()])
    except ValueError:
        described = ", ".join(f"{k} {s}" for k, s in shapes.items())
        raise ValueError(f"{name}: the leading (batch) axes of {described} do not "
                         "broadcast") from None
    return [fnp.broadcast_to(x, batch + shapes[k][-1:]) for k, x in named.items()]


def _with_constants(v, *constants):
    """``v`` with the given constants appended along its last axis (in ``v``'s dtype)."""
    shape = get_aval(v).shape[:-1] + (1,)
    dtype = get_aval(v).dtype
    extra = [lax.full(shape, value, dtype, like=v) for value in constants]
    return fnp.concatenate([v, *extra], axis=-1)


def _gather(v, shape: tuple, index_of):
    """The ``shape`` matrices (one per vector on ``v``'s leading axes) with entry ``v[...,
    index_of(i, j)]`` at row ``i`` and column ``j``.  The index is taken flattened (dask
    takes 1-D index arrays only) and promised in bounds (nothing to check or fill)."""
    i, j = (lax.broadcasted_iota(np.int64, shape, axis, like=v) for axis in (0, 1))
    index = fnp.reshape(index_of(i, j), (math.prod(shape),))
    flat = fnp.take(v, index, axis=-1, mode="promise_in_bounds")
    return fnp.reshape(flat, get_aval(v).shape[:-1] + shape)


def _order(name: str, n, least: int = 0) -> int:
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{name}: n must be an integer, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: n must be a static Python integer (it is the size of the "
                        f"result; under jit, pass it with static_argnums), got {n!r}") from None
    if n < least:
        raise ValueError(f"{name}: n must be at least {least}, got {n}")
    return n


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r``: ``t[i, j] = c[i -
    j]`` for ``i >= j`` and ``r[j - i]`` above the diagonal (``r[0]`` is not read).  Without
    ``r``, ``r = conj(c)`` (a Hermitian matrix when ``c[0]`` is real).  ``c`` is ``(...,
    N)`` and ``r`` ``(..., M)``, leading axes broadcast: the result is ``(..., N, M)`` in
    their common dtype.  Linear in ``c`` and ``r``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.toeplitz(np.array([1, 2, 3]), np.array([0, -1, -2, -3]))
    array([[ 1, -1, -2, -3],
           [ 2,  1, -1, -2],
           [ 3,  2,  1, -1]])
    """
    c = _vector(c)
    r = fnp.conj(c) if r is None else _vector(r)
    c, r = _promoted(*_common_batch("toeplitz", {"c": c, "r": r}))
    rows, columns = get_aval(c).shape[-1], get_aval(r).shape[-1]
    # v = c reversed, then r[1:]: t[i, j] = v[rows - 1 - i + j]
    v = fnp.concatenate([fnp.flip(c, -1), r[..., 1:]], axis=-1)
    return _gather(v, (rows, columns), lambda i, j: rows - 1 - i + j)


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r``: ``h[i, j] = v[i +
    j]`` with ``v = concatenate([c, r[1:]])`` (``r[0]`` is not read).  Without ``r``, zeros
    (``h`` is zero below the anti-diagonal).  ``c`` is ``(..., N)`` and ``r`` ``(..., M)``,
    leading axes broadcast: the result is ``(..., N, M)``.  Linear in ``c`` and ``r``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.hankel(np.array([1, 2, 3]), np.array([9, 4, 5, 6]))
    array([[1, 2, 3, 4],
           [2, 3, 4, 5],
           [3, 4, 5, 6]])
    """
    c = fnp.asarray(c)
    r = fnp.zeros_like(c) if r is None else fnp.asarray(r)
    for what, x in (("c", c), ("r", r)):
        if get_aval(x).ndim == 0:
            raise ValueError(f"hankel: {what} must have at least one axis (a vector, or a "
                             f"stack of them), got a scalar of shape {get_aval(x).shape}")
    c, r = _promoted(*_common_batch("hankel", {"c": c, "r": r}))
    rows, columns = get_aval(c).shape[-1], get_aval(r).shape[-1]
    v = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather(v, (rows, columns), lambda i, j: i + j)


def circulant(c):
    """The circulant matrix with first column ``c``: ``a[i, j] = c[(i - j) mod N]`` (each
    column is the one before it shifted down by one, cyclically).  ``c`` is ``(..., N)``;
    the result ``(..., N, N)``.  Linear in ``c``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.circulant(np.array([1, 2, 3]))
    array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]])
    """
    c = _vector(c)
    n = get_aval(c).shape[-1]
    return _gather(c, (n, n), lambda i, j: (i - j + n) % max(n, 1))


def leslie(f, s):
    """The Leslie matrix of a population model: fecundities ``f`` (``(..., N)``, ``N >=
    2``) as its first row, survival rates ``s`` (``(..., N - 1)``) on its first
    subdiagonal, zeros elsewhere; leading axes broadcast, the result is ``(..., N, N)`` in
    the common dtype.  Linear in ``f`` and ``s``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.leslie(np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8]))
    array([[0.1, 2. , 1. ],
           [0.2, 0. , 0. ],
           [0. , 0.8, 0. ]])
    """
    f, s = _vector(f), _vector(s)
    n = get_aval(f).shape[-1]
    if n < 2:
        raise ValueError(f"leslie: f must have at least 2 entries on its last axis, got "
                         f"shape {get_aval(f).shape}")
    if get_aval(s).shape[-1] != n - 1:
        raise ValueError(f"leslie: s must have one entry fewer than f on the last axis: f "
                         f"has shape {get_aval(f).shape}, so s must be (..., {n - 1}), got "
                         f"{get_aval(s).shape}")
    f, s = _promoted(*_common_batch("leslie", {"f": f, "s": s}))
    v = _with_constants(fnp.concatenate([f, s], axis=-1), 0)   # f, s, then a zero
    return _gather(v, (n, n), lambda i, j: fnp.where(
        i == 0, j, fnp.where(j == i - 1, n + j, 2 * n - 1)))


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest power
    first, ``(..., N)``, ``N >= 2``): first row ``-a[1:] / a[0]``, ones on the first
    subdiagonal; its eigenvalues are the polynomial's roots.  The result is ``(..., N - 1,
    N - 1)``, integers become float64.  As JAX, ``a[0] = 0`` is not checked (SciPy raises):
    it gives infinities or NaN.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.companion(np.array([1.0, -10.0, 31.0, -30.0]))
    array([[ 10., -31.,  30.],
           [  1.,   0.,   0.],
           [  0.,   1.,   0.]])
    """
    (a,) = _inexact(_vector(a))
    n = get_aval(a).shape[-1]
    if n < 2:
        raise ValueError(f"companion: a must have at least 2 entries on its last axis, got "
                         f"shape {get_aval(a).shape}")
    m = n - 1
    v = _with_constants(-a[..., 1:] / a[..., :1], 0, 1)    # the first row, then 0 and 1
    return _gather(v, (m, m), lambda i, j: fnp.where(
        i == 0, j, fnp.where(j == i - 1, m + 1, m)))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest
    power first, ``(..., N)``, ``N >= 1``): pentadiagonal, with the polynomial's roots as
    eigenvalues, as ``companion``.  The result is ``(..., N - 1, N - 1)`` (``(..., 0, 0)``
    for ``N = 1``, where SciPy returns shape ``(0,)``); integers become float64; ``a[0] =
    0`` is not checked, as in JAX.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.fiedler_companion(np.array([1.0, -16.0, 86.0, -176.0, 105.0]))
    array([[  16.,  -86.,    1.,    0.],
           [   1.,    0.,    0.,    0.],
           [   0.,  176.,    0., -105.],
           [   0.,    1.,    0.,    0.]])
    """
    (a,) = _inexact(_vector(a))
    n = get_aval(a).shape[-1]
    if n < 1:
        raise ValueError(f"fiedler_companion: a must have at least 1 entry on its last axis, "
                         f"got shape {get_aval(a).shape}")
    m = n - 1
    # v[k - 1] = -a[k] / a[0] for k = 1 .. m, then v[m] = 0 and v[m + 1] = 1.
    v = _with_constants(-a[..., 1:] / a[..., :1], 0, 1)
    zero, one = m, m + 1

    def index(i, j):
        even = i % 2 == 0
        pattern = [((i == 0) & (j == 0), 0),                # -a[1]
                   ((i == 1) & (j == 0), one),
                   (even & (j == i + 1), i + 1),            # -a[i + 2]
                   (even & (j == i + 2), one),
                   (even & (i >= 2) & (j == i - 1), i),     # -a[i + 1]
                   (~even & (i >= 3) & (j == i - 2), one)]
        out = fnp.full_like(i, zero)
        for where, value in reversed(pattern):
            out = fnp.where(where, value, out)
        return out
    return _gather(v, (m, m), index)


def fiedler(a):
    """The symmetric Fiedler matrix ``|a[i] - a[j]|`` of the vector ``a`` (``(..., N)``,
    giving ``(..., N, N)``); integers stay integers, complex ``a`` gives real moduli.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.fiedler(np.array([1, 4, 12]))
    array([[ 0,  3, 11],
           [ 3,  0,  8],
           [11,  8,  0]])
    """
    a = _vector(a)
    return fnp.abs(a[..., :, None] - a[..., None, :])


_CONVOLUTION_MODES = ("full", "same", "valid")


def convolution_matrix(a, n: int, mode: str = "full"):
    """The Toeplitz matrix ``t`` with ``t @ v == numpy.convolve(a, v, mode)`` for every
    ``v`` of length ``n``: ``(..., k, n)`` for ``a`` of shape ``(..., m)``, with ``k = m +
    n - 1`` (``'full'``), ``max(m, n)`` (``'same'``) or ``max(m, n) - min(m, n) + 1``
    (``'valid'``).  Linear in ``a``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> fsl.convolution_matrix(np.array([1, 2, 3]), 2)
    array([[1, 0],
           [2, 1],
           [3, 2],
           [0, 3]])
    """
    n = _order("convolution_matrix", n, least=1)
    if mode not in _CONVOLUTION_MODES:
        raise ValueError(f"convolution_matrix: mode must be one of {_CONVOLUTION_MODES}, "
                         f"got {mode!r}")
    a = fnp.asarray(a)
    if get_aval(a).ndim == 0:
        raise ValueError("convolution_matrix: a must have at least one axis (a vector, or a "
                         "stack of them), got a scalar of shape ()")
    m = get_aval(a).shape[-1]
    if m < 1:
        raise ValueError(f"convolution_matrix: a must have at least 1 entry on its last "
                         f"axis, got shape {get_aval(a).shape}")
    # row i of the full matrix holds a[i - j] in column j; the other modes drop rows.
    shortest = min(m, n)
    first, rows = {"full": (0, m + n - 1), "same": ((shortest - 1) // 2, max(m, n)),
                   "valid": (shortest - 1, max(m, n) - shortest + 1)}[mode]
    v = _with_constants(a, 0)

    def index(i, j):
        k = i + first - j
        return fnp.where((k >= 0) & (k < m), k, m)
    return _gather(v, (rows, n), index)


def _rounded(exact) -> np.ndarray:
    """A matrix of exact Python integers (an object array) rounded once to float64;
    those past float64's range become infinite, as SciPy's floating-point results."""
    exact = np.asarray(exact, dtype=object)
    huge = np.abs(exact) >= 2 ** 1024 - 2 ** 970        # what float() rounds to infinity
    out = np.where(huge, 0, exact).astype(np.float64)
    return np.where(huge, np.where(exact > 0, np.inf, -np.inf), out).astype(np.float64)


def _symmetric_pascal(n: int) -> np.ndarray:
    """``C(i + j, i)`` as exact integers: each row is the running sum of the one above."""
    s = np.ones((n, n), dtype=object)
    for i in range(1, n):
        s[i] = np.cumsum(s[i - 1])
    return s


def _lower_pascal(n: int) -> np.ndarray:
    """``C(i, j)`` (zero above the diagonal) as exact integers: ``C(i, j) = C((i - j) + j,
    j)``, an entry of the symmetric one."""
    s = _symmetric_pascal(n)
    i, j = np.ogrid[:n, :n]
    return np.where(j <= i, s[np.maximum(i - j, 0), j], 0)


def hadamard(n: int, dtype=int):
    """The ``n x n`` Hadamard matrix of Sylvester's construction (``n`` a power of two):
    ``h[i, j] = (-1) ** popcount(i & j)``, so that ``h @ h.T == n * eye(n)``, in ``dtype``
    (default int64).

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.hadamard(4)
    array([[ 1,  1,  1,  1],
           [ 1, -1,  1, -1],
           [ 1,  1, -1, -1],
           [ 1, -1, -1,  1]])
    """
    n = _order("hadamard", n, least=1)
    if n & (n - 1):
        raise ValueError(f"hadamard: n must be a power of two (1, 2, 4, 8, ...), got {n}")
    h = np.ones((1, 1), dtype=dtype)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order ``n`` (float64): row ``k - 1`` (``k = 1 .. n - 1``) is
    ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))`` with ``k`` ones, orthonormal rows that
    are orthogonal to the constant vector; the ``(n - 1, n)`` matrix, or the orthogonal
    ``(n, n)`` one with the row ``1 / sqrt(n)`` first if ``full``.

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.helmert(3, full=True).round(4)
    array([[ 0.5774,  0.5774,  0.5774],
           [ 0.7071, -0.7071,  0.    ],
           [ 0.4082,  0.4082, -0.8165]])
    """
    n = _order("helmert", n, least=1)
    k = np.arange(1, n, dtype=np.float64)[:, None]
    j = np.arange(n)[None, :]
    rows = np.where(j < k, 1.0, np.where(j == k, -k, 0.0)) / np.sqrt(k * (k + 1))
    if full:
        rows = np.concatenate([np.full((1, n), 1 / np.sqrt(n)), rows])
    return rows


def hilbert(n: int):
    """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)`` (float64), a classic
    ill-conditioned matrix.

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.hilbert(3)
    array([[1.        , 0.5       , 0.33333333],
           [0.5       , 0.33333333, 0.25      ],
           [0.33333333, 0.25      , 0.2       ]])
    """
    n = _order("hilbert", n)
    i, j = np.ogrid[:n, :n]
    return 1.0 / (i + j + 1.0)


def invhilbert(n: int):
    """The inverse of ``hilbert(n)``, from its closed form in binomial coefficients
    evaluated in exact integers and rounded once to float64 (infinite past float64's
    range, from ``n`` near 100).

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.invhilbert(3)
    array([[   9.,  -36.,   30.],
           [ -36.,  192., -180.],
           [  30., -180.,  180.]])
    """
    n = _order("invhilbert", n)
    comb = math.comb
    exact = np.array([[(-1) ** (i + j) * (i + j + 1) * comb(n + i, n - j - 1)
                       * comb(n + j, n - i - 1) * comb(i + j, i) ** 2 for j in range(n)]
                      for i in range(n)], dtype=object).reshape(n, n)
    return _rounded(exact)


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_kind(name: str, kind) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"{name}: kind must be None or one of {_PASCAL_KINDS}, got {kind!r}")
    return kind


def pascal(n: int, kind: str | None = None):
    """The ``n x n`` Pascal matrix: ``'lower'`` holds the binomial coefficients ``C(i,
    j)``, ``'upper'`` their transpose, and ``'symmetric'`` (None, the default) ``C(i + j,
    i)``, the product of the two.  Exact integers rounded once to float64 (as JAX's, a float
    result; SciPy's default ``exact=True`` gives uint64).

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.pascal(4)
    array([[ 1.,  1.,  1.,  1.],
           [ 1.,  2.,  3.,  4.],
           [ 1.,  3.,  6., 10.],
           [ 1.,  4., 10., 20.]])
    """
    n = _order("pascal", n)
    kind = _pascal_kind("pascal", kind)
    if kind == "symmetric":
        return _rounded(_symmetric_pascal(n))
    lower = _lower_pascal(n)
    return _rounded(lower if kind == "lower" else lower.T)


def invpascal(n: int, kind: str | None = None):
    """The inverse of ``pascal(n, kind)``: ``(-1) ** (i - j) C(i, j)`` for ``'lower'``, its
    transpose for ``'upper'``, and for ``'symmetric'`` (None) the product of the two
    inverses, summed in exact integers; rounded once to float64.

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.invpascal(3)
    array([[ 3., -3.,  1.],
           [-3.,  5., -2.],
           [ 1., -2.,  1.]])
    """
    n = _order("invpascal", n)
    kind = _pascal_kind("invpascal", kind)
    i, j = np.ogrid[:n, :n]
    lower = np.where((i - j) % 2, -1, 1) * _lower_pascal(n)
    if kind == "symmetric":
        exact = lower.T.dot(lower) if n else lower
    else:
        exact = lower if kind == "lower" else lower.T
    return _rounded(exact)


_DFT_SCALES = (None, "sqrtn", "n")


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The ``n x n`` discrete Fourier transform matrix ``w[i, j] = exp(-2πi i j / n)``
    (``w @ x == numpy.fft.fft(x)``), divided by ``sqrt(n)`` (``scale='sqrtn'``: unitary)
    or ``n`` (``'n'``); complex128 unless ``dtype`` (a complex dtype) says otherwise.  The
    exponent ``i j`` is reduced modulo ``n`` first, so large entries are as accurate as
    small ones.

    >>> import functrans.scipy.linalg as fsl
    >>> fsl.dft(4).round(12) + 0.0
    array([[ 1.+0.j,  1.+0.j,  1.+0.j,  1.+0.j],
           [ 1.+0.j,  0.-1.j, -1.+0.j,  0.+1.j],
           [ 1.+0.j, -1.+0.j,  1.+0.j, -1.+0.j],
           [ 1.+0.j,  0.+1.j, -1.+0.j,  0.-1.j]])
    """
    n = _order("dft", n)
    if scale not in _DFT_SCALES:
        raise ValueError(f"dft: scale must be one of {_DFT_SCALES}, got {scale!r}")
    dtype = np.dtype(np.complex128 if dtype is None else dtype)
    if dtype.kind != "c":
        raise ValueError(f"dft: dtype must be a complex dtype, got {dtype}")
    i, j = np.ogrid[:n, :n]
    w = np.exp(-2j * np.pi * ((i * j) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        w = w / np.sqrt(n)
    elif scale == "n":
        w = w / n
    return w.astype(dtype)


# -- polar decomposition -------------------------------------------------------------------

def _polar_factors(u, s, vh, side):
    """``(u vh, p)`` from the reduced SVD ``u s vh`` of ``a``."""
    s = lax.expand_dims(s, (get_aval(s).ndim - 1,))   # (..., 1, k): scales columns
    if side == "right":
        p = fnp.matmul(_adjoint(vh) * s, vh)
    else:
        p = fnp.matmul(u * s, _adjoint(u))
    return fnp.matmul(u, vh), p


@functools.partial(library_custom_jvp, nondiff_argnums=(1,))
def _polar(a, side):
    return _polar_factors(*fnp.linalg.svd(a, full_matrices=False), side)


@_polar.defjvp
def _polar_jvp(side, primals, tangents):
    # With a = U S Vᴴ (reduced) and C = Uᴴ da V, the factor q = U Vᴴ moves by U Y Vᴴ, Y the
    # skew-Hermitian solution of Y S + S Y = C - Cᴴ: Y_ij = (C_ij - C̄_ji) / (s_i + s_j).
    # Unlike the SVD's own rule (1 / (s_i² - s_j²)) this stays finite where singular values
    # repeat.  A tall a adds the part of da outside U's columns, (I - U Uᴴ) da V S⁻¹ Vᴴ; a
    # wide one U S⁻¹ Uᴴ da (I - V Vᴴ).  p = qᴴ a (right) or a qᴴ (left) for every shape.
    (a,), (da,) = primals, tangents
    u, s, vh = fnp.linalg.svd(a, full_matrices=False)
    q, p = _polar_factors(u, s, vh, side)
    v, uh = _adjoint(vh), _adjoint(u)
    c = fnp.matmul(fnp.matmul(uh, da), v)
    col = lax.expand_dims(s, (get_aval(s).ndim - 1,))              # (..., 1, k)
    row = lax.expand_dims(s, (get_aval(s).ndim,))                  # (..., k, 1)
    dq = fnp.matmul(fnp.matmul(u, (c - _adjoint(c)) / (row + col)), vh)
    m, n = get_aval(a).shape[-2:]
    if m > n:
        outside = da - fnp.matmul(u, fnp.matmul(uh, da))
        dq = dq + fnp.matmul(fnp.matmul(outside, v / col), vh)
    elif m < n:
        outside = da - fnp.matmul(fnp.matmul(da, v), vh)
        dq = dq + fnp.matmul(u / col, fnp.matmul(uh, outside))
    if side == "right":
        dp = fnp.matmul(_adjoint(dq), a) + fnp.matmul(_adjoint(q), da)
    else:
        dp = fnp.matmul(da, _adjoint(q)) + fnp.matmul(a, _adjoint(dq))
    return (q, p), (dq, (dp + _adjoint(dp)) / 2)



_POLAR_METHODS = ("qdwh", "svd")


def polar(a, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None):
    """The polar decomposition of each matrix in ``a`` (``(..., m, n)``): ``(u, p)`` with
    ``a = u p`` (``side='right'``, ``p`` ``n x n``) or ``a = p u`` (``'left'``, ``p`` ``m x
    m``), ``u`` with orthonormal columns (rows if ``m < n``) and ``p`` Hermitian positive
    semidefinite.  Computed from the reduced SVD ``a = U S Vᴴ`` as ``u = U Vᴴ``, ``p = V S
    Vᴴ`` (or ``U S Uᴴ``), whatever ``method`` (JAX's ``'qdwh'`` iteration or ``'svd'``),
    for every shape; ``eps`` and ``max_iterations`` (the iteration's) are accepted and not
    needed.  Differentiable wherever ``a`` has full rank, also where singular values repeat
    (first derivatives; second ones through the SVD's rules, at distinct singular values).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> u, p = fsl.polar(np.array([[0.0, 2.0], [-3.0, 0.0]]))
    >>> u.round(12) + 0.0, p.round(12) + 0.0
    (array([[ 0.,  1.],
           [-1.,  0.]]), array([[3., 0.],
           [0., 2.]]))
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in _POLAR_METHODS:
        raise ValueError(f"polar: method must be one of {_POLAR_METHODS}, got {method!r}")
    (a,) = _inexact(a)
    if get_aval(a).ndim < 2:
        raise ValueError(f"polar: a must be a matrix (or a stack of them, (..., m, n)), got "
                         f"shape {get_aval(a).shape}")
    return _polar(a, side)


# -- Schur and Hessenberg forms, and what is built on them ----------------------------------


def _refuse_integers(name: str, x, hint: str = ""):
    dtype = get_aval(x).dtype
    if dtype.kind not in "fc":
        raise TypeError(f"{name}: a must be a float or complex array, got {dtype} (as JAX, "
                        f"integers are refused{hint}; convert first, e.g. with "
                        "functrans.numpy.asarray(a, float))")


def schur(a, output: str = "real"):
    """The Schur decomposition ``(T, Z)`` of each square matrix in ``a`` (``(..., N,
    N)``): ``a = Z T Zᴴ`` with ``Z`` unitary and ``T`` upper triangular
    (``output='complex'``, or complex ``a``) or quasi-upper triangular, with a 2 x 2 block
    on the diagonal for each complex conjugate pair of eigenvalues (``output='real'`` for
    real ``a``).  Computed by LAPACK's ``gees`` through SciPy, on NumPy arrays only (as
    JAX's, CPU only).  Not differentiable (neither is JAX's): ``Z``'s columns are unique
    only up to their phases, which LAPACK picks by no rule a derivative could follow;
    ``jvp`` and ``grad`` raise ``NotImplementedError``.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 2.0], [-2.0, 1.0]])      # eigenvalues 1 ± 2i
    >>> t, z = fsl.schur(a)
    >>> np.allclose(z @ t @ z.T, a), t.dtype
    (True, dtype('float64'))
    >>> t, z = fsl.schur(a, output="complex")
    >>> np.sort_complex(np.diag(t)).round(12)
    array([1.-2.j, 1.+2.j])
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    a = fnp.asarray(a)
    if output == "complex":
        dtype = np.result_type(get_aval(a).dtype, np.complex64)
        if get_aval(a).dtype != dtype:
            a = lax.convert_element_type(a, dtype)
    _refuse_integers("schur", a, hint=" with output='real'")
    _square("schur", "a", a)
    return tuple(decompositions.schur_p.bind(a))


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True):
    """The Hessenberg form ``H`` of each square matrix in ``a`` (``(..., N, N)``), zero
    below its first subdiagonal, with ``a = Q H Qᴴ``; ``(H, Q)`` if ``calc_q``.  ``Q`` is
    unitary with first column ``e₀``, and ``H``'s subdiagonal is real (LAPACK's ``gehrd``
    through SciPy, on NumPy arrays only; JAX's values, also for 2 x 2 complex ``a``, where
    SciPy returns ``a`` itself).  Differentiable, unlike JAX's: ``Ω = Qᴴ dQ`` is the
    skew-Hermitian matrix with ``Ω e₀ = 0`` that keeps ``dH = Qᴴ da Q + H Ω - Ω H``
    Hessenberg with a real subdiagonal, solved column by column (undefined where the
    subdiagonal has a zero: the matrix is then reduced and ``Q`` not unique).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 0.0], [2.0, 0.0, 4.0]])
    >>> h, q = fsl.hessenberg(a, calc_q=True)
    >>> h.round(6) + 0.0
    array([[ 1.      , -3.535534,  0.707107],
           [-2.828427,  2.5     , -1.5     ],
           [ 0.      , -1.5     ,  2.5     ]])
    >>> np.allclose(q @ h @ q.T, a)
    True
    """
    a = fnp.asarray(a)
    _refuse_integers("hessenberg", a)
    _square("hessenberg", "a", a)
    h, q = decompositions.hessenberg_p.bind(a)
    return (h, q) if calc_q else h


def _slice_last2(x, rows, columns):
    """``x[..., rows[0]:rows[1], columns[0]:columns[1]]``."""
    shape = get_aval(x).shape
    nd = len(shape)
    return lax.slice(x, (0,) * (nd - 2) + (rows[0], columns[0]),
                     shape[:-2] + (rows[1], columns[1]))


def _entry(x, i: int, j: int):
    return lax.squeeze(_slice_last2(x, (i, i + 1), (j, j + 1)), (get_aval(x).ndim - 2,
                                                                get_aval(x).ndim - 1))


def _square_modulus(z):
    return fnp.real(z * fnp.conj(z)) if get_aval(z).dtype.kind == "c" else z * z


def rsf2csf(T, Z, check_finite: bool = True):
    """The complex Schur form ``(T, Z)`` from the real one (``schur(a)``'s output): each
    2 x 2 block of ``T`` (a complex conjugate pair of eigenvalues) is made upper triangular
    by a Givens rotation, applied to ``Z``'s columns too, so that ``Z T Zᴴ`` is unchanged.
    SciPy's (and JAX's) algorithm, with JAX's rotations (the eigenvalue of positive
    imaginary part first); complex results, leading axes of ``T`` and ``Z`` broadcast.
    Differentiable in ``T`` and ``Z`` as JAX's: the derivative of the rotations computed,
    which are smooth away from a block's splitting (a subdiagonal entry at the threshold
    ``eps (|T[m-1, m-1]| + |T[m, m]|)``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 2.0], [-2.0, 1.0]])
    >>> t, z = fsl.rsf2csf(*fsl.schur(a))
    >>> np.diag(t).round(12), np.allclose(z @ t @ z.conj().T, a)
    (array([1.+2.j, 1.-2.j]), True)
    """
    T, Z = fnp.asarray(T), fnp.asarray(Z)
    for what, x in (("T", T), ("Z", Z)):
        shape = get_aval(x).shape
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"rsf2csf: {what} must be a square matrix (or a stack of them, "
                             f"(..., N, N)), got shape {shape}")
    t_shape, z_shape = get_aval(T).shape, get_aval(Z).shape
    if t_shape[-1] != z_shape[-1]:
        raise ValueError(f"rsf2csf: T {t_shape} and Z {z_shape} must be of one order N")
    try:
        batch = np.broadcast_shapes(t_shape[:-2], z_shape[:-2])
    except ValueError:
        raise ValueError(f"rsf2csf: the leading (batch) axes of T {t_shape} and Z {z_shape} "
                         "do not broadcast") from None
    dtype = np.result_type(get_aval(T).dtype, get_aval(Z).dtype, np.complex64)
    T, Z = (fnp.broadcast_to(lax.convert_element_type(x, dtype), batch + t_shape[-2:])
            for x in (T, Z))
    n = t_shape[-1]
    eps = float(np.finfo(dtype).eps)
    rows = lax.broadcasted_iota(np.int32, (n, n), 0, like=T)
    columns = lax.broadcasted_iota(np.int32, (n, n), 1, like=T)
    for m in range(n - 1, 0, -1):
        p, q, r, s = (_entry(T, m - 1, m - 1), _entry(T, m - 1, m), _entry(T, m, m - 1),
                      _entry(T, m, m))
        split = fnp.abs(r) > eps * (fnp.abs(p) + fnp.abs(s))
        # The block's eigenvalue of positive imaginary part, less s (zgeev's first), and
        # the rotation that moves it to the top.  Where the block has split, the rotation
        # is the identity; the values a split block would give are kept out of the
        # derivatives (no sqrt at 0, no division by 0, on either side of the where).
        half = (p - s) * 0.5
        discriminant = fnp.where(split, half * half + q * r, 1)
        root = fnp.sqrt(discriminant)
        root = fnp.where(fnp.imag(root) < 0, -root, root)
        mu = half + root
        norm = fnp.sqrt(fnp.where(split, _square_modulus(mu) + _square_modulus(r), 1))
        norm = lax.convert_element_type(norm, dtype)
        c = fnp.where(split, mu / norm, 1)
        sn = fnp.where(split, r / norm, 0)
        g = fnp.stack([fnp.stack([fnp.conj(c), sn], -1), fnp.stack([-sn, c], -1)], -2)
        g_h = fnp.conj(fnp.swapaxes(g, -1, -2))
        # rows m - 1 and m from column m - 1 on, then columns m - 1 and m down to row m
        pair = _slice_last2(T, (m - 1, m + 1), (0, n))
        pair = fnp.where(columns[m - 1:m + 1] >= m - 1, fnp.matmul(g, pair), pair)
        T = fnp.concatenate([_slice_last2(T, (0, m - 1), (0, n)), pair,
                             _slice_last2(T, (m + 1, n), (0, n))], axis=-2)
        pair = _slice_last2(T, (0, n), (m - 1, m + 1))
        pair = fnp.where(rows[:, m - 1:m + 1] < m + 1, fnp.matmul(pair, g_h), pair)
        T = fnp.concatenate([_slice_last2(T, (0, n), (0, m - 1)), pair,
                             _slice_last2(T, (0, n), (m + 1, n))], axis=-1)
        pair = fnp.matmul(_slice_last2(Z, (0, n), (m - 1, m + 1)), g_h)
        Z = fnp.concatenate([_slice_last2(Z, (0, n), (0, m - 1)), pair,
                             _slice_last2(Z, (0, n), (m + 1, n))], axis=-1)
        T = fnp.where((rows == m) & (columns == m - 1), 0, T)
    return T, Z


@library_custom_jvp
def _funm_operand(a):
    """``a`` itself; a derivative through it is refused with funm's reason."""
    return a


@_funm_operand.defjvp
def _funm_operand_jvp(primals, tangents):
    raise NotImplementedError(
        "functrans.scipy.linalg.funm: no derivative with respect to A (JAX has none "
        "either): it is computed from the Schur decomposition, whose derivative does not "
        "exist, and func's derivative is not known to it.  For the exponential, the square "
        "root and other functions with rules of their own use expm or sqrtm; for a "
        "Hermitian A, eigh with func applied to the eigenvalues is differentiable")


def _parlett(f, t):
    """Parlett's recurrence (Golub and Van Loan, Algorithm 11.1.1, as SciPy and JAX) for
    ``f(t)`` of upper triangular ``t`` from its diagonal ``f``: one superdiagonal at a time,
    each from those below it; where two eigenvalues are equal (``t[j, j] = t[i, i]``) the
    entry is not divided, as theirs.  Also returns the smallest ``|t[j, j] - t[i, i]|``
    (``i < j``) and ``|t[0, 0]|``."""
    n = get_aval(t).shape[-1]
    diagonal = fnp.diagonal(t, axis1=-2, axis2=-1)
    rows = lax.broadcasted_iota(np.int32, (n, n), 0, like=t)
    columns = lax.broadcasted_iota(np.int32, (n, n), 1, like=t)
    den = diagonal[..., None, :] - diagonal[..., :, None]             # t[j, j] - t[i, i]
    nonzero = den != 0
    safe = fnp.where(nonzero, den, 1)
    t_strict = fnp.where(columns > rows, t, 0)
    for p in range(1, n):
        fd = fnp.diagonal(f, axis1=-2, axis2=-1)
        f_strict = fnp.where(columns > rows, f, 0)
        s = (t * (fd[..., None, :] - fd[..., :, None]) + fnp.matmul(t_strict, f_strict)
             - fnp.matmul(f_strict, t_strict))
        f = fnp.where(columns - rows == p, fnp.where(nonzero, s / safe, s), f)
    gaps = fnp.where(columns > rows, fnp.abs(den), np.inf)
    smallest = fnp.abs(t[..., 0, 0])
    if n > 1:
        smallest = fnp.minimum(smallest, fnp.min(gaps, axis=(-2, -1)))
    return f, smallest


def funm(A, func, disp: bool = True):
    """``func`` extended to each square matrix in ``A`` (``(..., N, N)``): the Schur form
    ``A = Z T Zᴴ`` (complex, by ``schur`` and ``rsf2csf``), ``func`` applied to ``T``'s
    diagonal (the eigenvalues; ``func`` takes and returns an array of them, ``(..., N)``),
    Parlett's recurrence for the rest of ``f(T)``, and ``Z f(T) Zᴴ``.  Complex, as JAX's
    (SciPy returns a real array where the imaginary parts vanish).  With ``disp=False``,
    ``(F, err)``, ``err`` JAX's (and SciPy's) estimate of the relative error; ``disp``
    prints nothing.  Inaccurate where eigenvalues nearly repeat (Parlett's recurrence
    divides by their differences).  Integers are refused and there is no derivative with
    respect to ``A``, as in JAX.

    >>> import numpy as np, functrans.numpy as fnp, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 3.0], [1.0, 4.0]])
    >>> fsl.funm(a, lambda x: x * x).real.round(12)
    array([[ 4., 15.],
           [ 5., 19.]])
    >>> np.allclose(fsl.funm(a, fnp.exp), fsl.expm(a))
    True
    """
    A = fnp.asarray(A)
    _refuse_integers("funm", A)
    _square("funm", "A", A)
    A = _funm_operand(A)
    t, z = rsf2csf(*decompositions.schur_p.bind(A))
    dtype = get_aval(t).dtype
    values = fnp.asarray(func(fnp.diagonal(t, axis1=-2, axis2=-1)))
    values = lax.convert_element_type(values, dtype) if get_aval(values).dtype != dtype \
        else values
    n = get_aval(t).shape[-1]
    eye = backend.eye(n, dtype=dtype, like=t)
    f, smallest = _parlett(values[..., None, :] * eye, t)
    F = fnp.matmul(fnp.matmul(z, f), _adjoint(z))
    if disp:
        return F
    real = np.finfo(dtype).dtype
    tol = float(np.finfo(np.float32 if real == np.float32 else np.float64).eps)
    smallest = fnp.where(smallest == 0, tol, smallest)
    upper = fnp.where(lax.broadcasted_iota(np.int32, (n, n), 1, like=t)
                      > lax.broadcasted_iota(np.int32, (n, n), 0, like=t), t, 0)
    norm1 = fnp.max(fnp.sum(fnp.abs(upper), axis=-2), axis=-1)
    err = fnp.minimum(1, fnp.maximum(tol, (tol / smallest) * norm1))
    err = fnp.where(fnp.any(fnp.isinf(F), axis=(-2, -1)), np.inf, err)
    return F, lax.convert_element_type(err, real)


def sqrtm(A, blocksize: int = 1):
    """The principal square root ``X`` (``X @ X = A``, eigenvalues with non-negative real
    part) of each square matrix in ``A`` (``(..., N, N)``), complex as JAX's
    (``complex64`` for ``float32`` or ``complex64``, else ``complex128``; integers become
    ``complex128``): the complex Schur form (SciPy's, on NumPy arrays only) and Björck and
    Hammarling's recurrence for the triangular root, as JAX.  Its derivative solves ``X dX
    + dX X = dA`` (a Sylvester equation, ``solve_sylvester``'s primitive), so both modes
    work to any order (JAX has none); it does not exist where ``A`` has an eigenvalue on
    the closed negative real axis (no principal root there, and the computed one jumps
    with the sign of a rounding error).  ``blocksize`` > 1 is refused, as JAX.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> import functrans.scipy.linalg as fsl
    >>> a = np.array([[5.0, 4.0], [4.0, 5.0]])      # eigenvalues 1 and 9
    >>> fsl.sqrtm(a).real
    array([[2., 1.],
           [1., 2.]])
    >>> g = ft.grad(lambda a: fnp.real(fsl.sqrtm(a)[0, 0]))(a)  # a's eigenbasis, 1 / (√λᵢ + √λⱼ)
    >>> np.allclose(g, [[7 / 24, -1 / 12], [-1 / 12, 1 / 24]])
    True
    """
    if blocksize > 1:
        raise NotImplementedError("sqrtm: blocksize > 1 (SciPy's blocked algorithm) is not "
                                  "implemented, as in JAX; the default computes the same "
                                  "root")
    (A,) = _inexact(A)
    _square("sqrtm", "A", A)
    dtype = np.result_type(get_aval(A).dtype, np.complex64)
    if get_aval(A).dtype != dtype:
        A = lax.convert_element_type(A, dtype)
    return matrix_functions.sqrtm(A)


_SYLVESTER_METHODS = ("schur", "eigen")


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """The solution ``X`` of the Sylvester equation ``A X + X B = C`` for each member of
    ``A`` (``(..., M, M)``), ``B`` (``(..., N, N)``) and ``C`` (``(..., M, N)``), leading
    axes broadcast, by Bartels and Stewart's method (SciPy's ``solve_sylvester``, on NumPy
    arrays only) whatever ``method`` (JAX's ``'schur'``, or ``'eigen'``, a faster and
    less accurate route to the same solution).  As JAX's, the solution is NaN where some
    eigenvalue sum ``λ(A) + μ(B)`` is within ``tol`` of zero (the equation is then
    singular or nearly so; ``tol`` is a static number, 0 to turn the check off).
    Differentiable in all three: ``A dX + dX B = dC - dA X - X dB``, another Sylvester
    solve, and linear in ``C``, whose transpose solves ``Aᵀ Y + Y Bᵀ = Ȳ`` (JAX has no
    derivative).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a, b = np.array([[2.0, 0.0], [0.0, 3.0]]), np.array([[1.0]])
    >>> fsl.solve_sylvester(a, b, np.array([[3.0], [8.0]]))
    array([[1.],
           [2.]])
    """
    if method not in _SYLVESTER_METHODS:
        raise ValueError(f"solve_sylvester: method must be 'schur' or 'eigen', got "
                         f"{method!r}")
    A, B, C = _inexact(A, B, C)
    shapes = {k: get_aval(x).shape for k, x in (("A", A), ("B", B), ("C", C))}
    if len(shapes["C"]) < 2:
        raise ValueError(f"solve_sylvester: C must be a matrix (or a stack of them, (..., M, "
                         f"N)), got shape {shapes['C']}")
    m, n = shapes["C"][-2:]
    if shapes["A"][-2:] != (m, m) or shapes["B"][-2:] != (n, n):
        raise ValueError(f"solve_sylvester: C has shape {shapes['C']}, so A must be (..., "
                         f"{m}, {m}) and B (..., {n}, {n}); got A {shapes['A']} and B "
                         f"{shapes['B']}")
    try:
        batch = np.broadcast_shapes(*[s[:-2] for s in shapes.values()])
    except ValueError:
        raise ValueError(f"solve_sylvester: the leading (batch) axes of A {shapes['A']}, B "
                         f"{shapes['B']} and C {shapes['C']} do not broadcast") from None
    A, B, C = (fnp.broadcast_to(x, batch + s[-2:]) for x, s in zip((A, B, C),
                                                                   shapes.values()))
    return decompositions.sylvester(A, B, C, tol=tol)


# -- eigh_tridiagonal and qr_multiply ------------------------------------------------------

_TRIDIAGONAL_DTYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                  np.complex128))


def _select_range(select, select_range, n: int):
    """The (start, stop) of the eigenvalues ``select`` asks for (JAX's ``'a'`` and
    ``'i'``, ``select_range`` inclusive)."""
    if select == "a":
        return 0, n
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal: select='v' (eigenvalues in a range of "
                                  "values: a result of data-dependent length) is not "
                                  "implemented, as in JAX; use select='i' or 'a' and mask "
                                  "the eigenvalues")
    if select != "i":
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}")
    if select_range is None:
        raise ValueError("eigh_tridiagonal: for select='i', select_range must be given, a "
                         "pair of indices (first, last), both included")
    try:
        first, last = (operator.index(i) for i in select_range)
    except TypeError:
        raise TypeError(f"eigh_tridiagonal: select_range must be a pair of integers (first, "
                        f"last), got {select_range!r}") from None
    if first > last:
        raise ValueError(f"eigh_tridiagonal: select_range {(first, last)} is empty (first > "
                         "last)")
    if first < 0 or last >= n:
        raise ValueError(f"eigh_tridiagonal: select_range {(first, last)} must be within the "
                         f"{n} eigenvalues' indices 0 .. {n - 1}")
    return first, last + 1


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key=None):
    """Eigenvalues ``w`` (ascending) of the Hermitian tridiagonal matrix with diagonal
    ``d`` (``(..., N)``, its real part) and ``e`` (``(..., N - 1)``) above the diagonal
    (``conj(e)`` below), and its eigenvectors ``v`` (columns, ``(..., N, K)``): ``(w, v)``,
    or ``w`` if ``eigvals_only``.  ``select='i'`` keeps the eigenvalues of indices
    ``select_range[0]`` to ``select_range[1]`` (both included); ``select='v'`` is not
    implemented, as in JAX.  ``d`` and ``e`` must have one dtype, float32, float64,
    complex64 or complex128 (JAX's rule); leading axes broadcast.  Computed by ``eigh`` of
    the matrix (LAPACK, to rounding), so ``tol`` (the bisection's tolerance in JAX) and
    ``key`` (its random start for inverse iteration) are accepted and not needed; the
    eigenvectors' signs (phases) are LAPACK's.  Differentiable through ``eigh``: the
    eigenvalues everywhere, the eigenvectors where the eigenvalues are distinct (always,
    when ``e`` has no zero); JAX has no reverse mode.

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> d, e = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 1.0, 1.0])
    >>> fsl.eigh_tridiagonal(d, e, eigvals_only=True).round(6)
    array([0.254719, 1.822717, 3.177283, 4.745281])
    """
    del tol, key  # see the docstring
    d, e = fnp.asarray(d), fnp.asarray(e)
    dtype = get_aval(d).dtype
    if get_aval(e).dtype != dtype:
        raise TypeError(f"eigh_tridiagonal: d and e must have the same dtype (as JAX), got "
                        f"{dtype} and {get_aval(e).dtype}")
    if dtype not in _TRIDIAGONAL_DTYPES:
        raise TypeError(f"eigh_tridiagonal: d and e must be float32, float64, complex64 or "
                        f"complex128 (as JAX), got {dtype}; convert them first")
    if get_aval(d).ndim < 1 or get_aval(e).ndim < 1:
        raise ValueError(f"eigh_tridiagonal: d and e must be vectors (or stacks of them), got "
                         f"shapes {get_aval(d).shape} and {get_aval(e).shape}")
    n = get_aval(d).shape[-1]
    if get_aval(e).shape[-1] != max(n - 1, 0):
        raise ValueError(f"eigh_tridiagonal: d has {n} entries on its last axis, so e must "
                         f"have {max(n - 1, 0)}, got shape {get_aval(e).shape}")
    start, stop = _select_range(select, select_range, n)
    d, e = _common_batch("eigh_tridiagonal", {"d": d, "e": e})
    if dtype.kind == "c":
        d = lax.convert_element_type(fnp.real(d), dtype)
    # The lower triangle eigh reads: d on the diagonal, conj(e) below it.
    below = fnp.conj(e) if dtype.kind == "c" else e
    v = _with_constants(fnp.concatenate([d, below], axis=-1), 0)
    matrix = _gather(v, (n, n), lambda i, j: fnp.where(
        i == j, i, fnp.where(i == j + 1, n + j, 2 * n - 1)))
    vectors, w = lax.linalg.eigh(matrix, lower=True, symmetrize_input=False)
    w, vectors = w[..., start:stop], vectors[..., start:stop]
    return w if eigvals_only else (w, vectors)


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """``Q`` of ``a``'s QR decomposition (``a = Q R``, ``(..., M, N)``) multiplied with
    ``c``, and ``R``: ``(Q @ c, R)`` for ``mode='left'`` (``c`` ``(..., K, P)``, ``K =
    min(M, N)``) or ``(c @ Q, R)`` for ``'right'`` (``c`` ``(..., P, M)``, the result
    ``(..., P, K)``), with ``conj(Q)`` for ``Q`` if ``conjugate``; ``R`` is ``(..., K,
    N)``.  A 1-D ``c`` is one column (``'left'``) or row (``'right'``), and the result is
    1-D again.  Leading axes of ``a`` and ``c`` broadcast.  Built on the reduced ``qr``,
    so differentiable for every shape.  ``pivoting=True`` is not supported (as ``qr``).

    >>> import numpy as np, functrans.scipy.linalg as fsl
    >>> a = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0], [1.0, 4.0]])
    >>> b = np.array([2.0, 4.0, 5.0, 4.0])
    >>> qtb, r = fsl.qr_multiply(a, b)                  # least squares: r x = Qᵀ b
    >>> fsl.solve_triangular(r, qtb).round(12)
    array([2. , 0.7])
    """
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not supported (as qr: its "
                                  "column permutation is not differentiable)")
    a, c = _inexact(a, c)
    a_shape = get_aval(a).shape
    if len(a_shape) < 2:
        raise ValueError(f"qr_multiply: a must be a matrix (or a stack of them, (..., M, N)), "
                         f"got shape {a_shape}")
    one = get_aval(c).ndim == 1
    if one:
        c = lax.expand_dims(c, (1,) if mode == "left" else (0,))
    elif get_aval(c).ndim < 1:
        raise ValueError("qr_multiply: c must be an array of at least one axis, got a scalar")
    c_shape = get_aval(c).shape
    m, n = a_shape[-2:]
    k = min(m, n)
    if mode == "left" and c_shape[-2] != k:
        raise ValueError(f"qr_multiply: a has shape {a_shape}, so Q has {k} columns and c "
                         f"(mode='left') must have {k} rows, got shape {c_shape}")
    if mode == "right" and c_shape[-1] != m:
        raise ValueError(f"qr_multiply: a has shape {a_shape}, so Q has {m} rows and c "
                         f"(mode='right') must have {m} columns, got shape {c_shape}")
    try:
        batch = np.broadcast_shapes(a_shape[:-2], c_shape[:-2])
    except ValueError:
        raise ValueError(f"qr_multiply: the leading (batch) axes of a {a_shape} and c "
                         f"{c_shape} do not broadcast") from None
    a = fnp.broadcast_to(a, batch + a_shape[-2:])
    c = fnp.broadcast_to(c, batch + c_shape[-2:])
    q, r = lax.linalg.qr(a, full_matrices=False)
    if conjugate and get_aval(q).dtype.kind == "c":
        q = fnp.conj(q)
    out = fnp.matmul(q, c) if mode == "left" else fnp.matmul(c, q)
    if one:
        out = lax.squeeze(out, (get_aval(out).ndim - (1 if mode == "left" else 2),))
    return out, r
