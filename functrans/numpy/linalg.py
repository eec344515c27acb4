"""``functrans.numpy.linalg``: ``numpy.linalg``'s functions, differentiable and batched
over leading axes.

>>> import numpy as np, functrans.numpy as fnp
>>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
5.0
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

import functrans.numpy._contractions as contractions
import functrans.numpy._elementwise as elementwise
import functrans.numpy._indexing as indexing
import functrans.numpy._reductions as reductions
import functrans.numpy._shape as shapes
from functrans import backend, lax
from functrans.core import ConcretizationTypeError, Tracer, get_aval
from functrans.numpy._util import arg, promote_inexact
from functrans.primitives.custom_derivatives import library_custom_jvp
from functrans.primitives.decompositions import permutation_matrix
from functrans.primitives.shape import broadcast_to, normalize_axis

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
           "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
           "vector_norm"]


def __dir__() -> list:
    return sorted(__all__)


def _matrix_transpose(x):
    nd = get_aval(x).ndim
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _adjoint(x):
    x = _matrix_transpose(x)
    return lax.conj(x) if get_aval(x).dtype.kind == "c" else x


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The Cholesky factor of each Hermitian positive-definite matrix in ``a`` (shape
    ``(..., n, n)``): lower ``L`` with ``a = L Lᴴ``, or upper ``U = Lᴴ`` with ``a = Uᴴ U``
    if ``upper``.  Integers become float64.

    As in JAX, ``a`` is taken to be Hermitian: its value is ``(a + aᴴ) / 2`` (which is ``a``
    for the Hermitian inputs the factorization is meant for), so gradients are Hermitian.
    NumPy instead reads one triangle; ``functrans.lax.linalg.cholesky(a,
    symmetrize_input=False)`` does that too.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> fnp.linalg.cholesky(a)
    array([[2., 0.],
           [1., 2.]])
    >>> ft.grad(lambda a: fnp.linalg.cholesky(a)[1, 1])(a)  # d sqrt(a11 - a10²/a00)
    array([[ 0.0625, -0.125 ],
           [-0.125 ,  0.25  ]])
    """
    factor = lax.linalg.cholesky(promote_inexact(a), symmetrize_input=symmetrize_input)
    return _adjoint(factor) if upper else factor


def _matmul(a, b):
    nd = get_aval(a).ndim
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _square(name: str, a):
    aval = get_aval(a)
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise np.linalg.LinAlgError(f"{name}: expected a stack of square matrices of shape "
                                    f"(..., n, n), got shape {aval.shape}")
    return aval


def _steps(x):
    """``0, 1, ..., n-1`` along the last axis of ``x`` (int32, ``x``'s shape), computed
    from ``x``: inside a staged ``custom_jvp`` function a constant would be made on the
    host."""
    ones = lax.add(lax.convert_element_type(lax.zeros_like(x), np.int32), 1)
    return lax.sub(lax.cumsum(ones, get_aval(x).ndim - 1), 1)


def _identity_like(x):
    """Identity matrices of the shape and dtype of the stack ``x``, made from ``x``."""
    nd = get_aval(x).ndim
    columns = _steps(x)
    rows = lax.transpose(columns, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return lax.convert_element_type(lax.eq(rows, columns), get_aval(x).dtype)


def _diagonal(x):
    """The diagonals of a stack of square matrices, shape ``(..., n)``."""
    return lax.reduce_sum(lax.mul(x, _identity_like(x)), (get_aval(x).ndim - 1,))


def _parity(pivots, dtype):
    """``det(P)``, +1 or -1, from LU's pivots: a factor -1 for each actual row swap."""
    swapped = lax.convert_element_type(lax.ne(pivots, _steps(pivots)), dtype)
    return lax.reduce_prod(lax.sub(1, lax.mul(2, swapped)), (get_aval(pivots).ndim - 1,))


def _lu_solve(packed, permutation, b):
    """``a⁻¹ b`` from ``a``'s LU factors (equal batch shapes)."""
    dtype = get_aval(packed).dtype
    permuted = _matmul(permutation_matrix(permutation, dtype, packed), b)
    y = lax.linalg.triangular_solve(packed, permuted, left_side=True, lower=True,
                                    unit_diagonal=True)
    return lax.linalg.triangular_solve(packed, y, left_side=True, lower=False)


def _common_inexact(*xs):
    xs = [arg(x) for x in xs]
    dtype = np.result_type(*[get_aval(x).dtype for x in xs])
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return [x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype)
            for x in xs]


def solve(a, b):
    """The solution ``x`` of ``a @ x = b`` for each square matrix in ``a`` (shape
    ``(..., M, M)``), by LU decomposition with partial pivoting.  As in NumPy 2, ``b`` is
    one vector if it is 1-D (shape ``(M,)``) and otherwise a stack of matrices
    ``(..., M, K)``, its leading axes broadcast against those of ``a``.  Integers become
    float64.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.solve(np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([3.0, 5.0]))
    array([0.8, 1.4])
    """
    a, b = _common_inexact(a, b)
    a_aval, b_aval = _square("solve", a), get_aval(b)
    m = a_aval.shape[-1]
    vector = b_aval.ndim == 1
    if vector:
        b = lax.expand_dims(b, (1,))
    b_shape = get_aval(b).shape
    if b_shape[-2] != m:
        what = "(M,)" if vector else "(..., M, K)"
        raise ValueError(f"solve: a has shape {a_aval.shape}, so b must have shape {what} "
                         f"with M = {m}, got {b_aval.shape}")
    try:
        batch = np.broadcast_shapes(a_aval.shape[:-2], b_shape[:-2])
    except ValueError:
        raise ValueError(f"solve: the leading (batch) axes of a {a_aval.shape} and b "
                         f"{b_aval.shape} do not broadcast") from None
    a = broadcast_to(a, batch + a_aval.shape[-2:])
    b = broadcast_to(b, batch + b_shape[-2:])
    if get_aval(b).size == 0:  # no matrix, no equation or no right-hand side: nothing to solve
        x = b
    else:
        packed, _, permutation = lax.linalg.lu(a)
        x = _lu_solve(packed, permutation, b)
    return lax.squeeze(x, (len(batch) + 1,)) if vector else x


def inv(a):
    """The inverse of each square matrix in ``a`` (shape ``(..., n, n)``), by LU
    decomposition with partial pivoting.  Integers become float64.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    (a,) = _common_inexact(a)
    aval = _square("inv", a)
    if aval.size == 0:  # no matrices, or 0 x 0 ones: the (empty) result has a's shape
        return a
    eye = broadcast_to(backend.eye(aval.shape[-1], dtype=aval.dtype, like=a), aval.shape)
    packed, _, permutation = lax.linalg.lu(a)
    return _lu_solve(packed, permutation, eye)


@library_custom_jvp
def _det(a):
    packed, pivots, _ = lax.linalg.lu(a)
    nd = get_aval(a).ndim
    return lax.mul(_parity(pivots, get_aval(a).dtype),
                   lax.reduce_prod(_diagonal(packed), (nd - 2,)))


def _adjugate(a):
    """``adj(a) = det(a) a⁻¹``, finite everywhere; exact where ``a`` is invertible, where
    only the last pivot of its LU decomposition is zero (the usual case at rank n - 1),
    and at rank n - 2 or less (zero).  At a rank n - 1 matrix whose zero pivot comes
    earlier (its leading column zero, say) it is zero, not the adjugate.

    With ``a[p] = L U`` and ``U'`` equal to ``U`` but for a one at its last diagonal
    place, ``U = diag(1, ..., 1, u_nn) U'``, so ``det(U) U⁻¹ = (u_11 ... u_n-1,n-1)
    U'⁻¹ diag(u_nn, ..., u_nn, 1)``: no division by ``u_nn``."""
    aval = get_aval(a)
    nd, n, dtype = aval.ndim, aval.shape[-1], aval.dtype
    packed, pivots, permutation = lax.linalg.lu(a)
    corner = backend.zeros((n, n), dtype, like=a)
    corner[n - 1, n - 1] = 1
    last = corner[n - 1]
    upper = lax.add(lax.mul(packed, 1 - corner), corner)
    d = _diagonal(packed)
    # An earlier zero pivot makes the product ``head`` below zero; a one in its place keeps
    # the solve finite, so that the adjugate is zero, as it is at rank n - 2 or less.
    zero = lax.convert_element_type(lax.eq(_diagonal(upper), 0), dtype)
    upper = lax.add(upper, lax.mul(lax.expand_dims(zero, (nd - 2,)), _identity_like(packed)))
    batch = aval.shape[:-2]
    head = lax.reduce_prod(lax.slice(d, (0,) * (nd - 1), batch + (n - 1,)), (nd - 2,))
    u_nn = lax.slice(d, (0,) * (nd - 2) + (n - 1,), batch + (n,))
    scale = lax.add(lax.mul(u_nn, 1 - last), last)                        # (..., n)
    y = lax.linalg.triangular_solve(packed, permutation_matrix(permutation, dtype, a),
                                    left_side=True, lower=True, unit_diagonal=True)
    z = lax.mul(lax.expand_dims(scale, (nd - 1,)), y)
    w = lax.linalg.triangular_solve(upper, z, left_side=True, lower=False)
    factor = lax.mul(_parity(pivots, dtype), head)
    return lax.mul(lax.expand_dims(factor, (nd - 2, nd - 1)), w)


@_det.defjvp
def _det_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    nd = get_aval(a).ndim
    adjugate = lax.transpose(_adjugate(a), tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return _det(a), lax.reduce_sum(lax.mul(adjugate, t), (nd - 2, nd - 1))


def det(a):
    """The determinant of each square matrix in ``a`` (shape ``(..., n, n)``), from its LU
    decomposition.  Integers become float64.

    Its derivative is ``tr(adj(a) da)`` with the adjugate computed without inverting
    ``a``, so the gradient is finite everywhere: it is the adjugate at invertible
    matrices, at singular ones whose LU decomposition has its only zero pivot last (almost
    every matrix of rank ``n - 1``) and at rank ``n - 2`` or less (zero); at the rare rank
    ``n - 1`` matrices with an earlier zero pivot (a zero first column, say) it is zero.
    (``slogdet`` has no finite derivative there: ``log|det|`` is ``-inf``.)

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> float(fnp.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
    >>> ft.grad(fnp.linalg.det)(np.array([[1.0, 2.0], [2.0, 4.0]]))  # singular: adj(a)ᵀ
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    (a,) = _common_inexact(a)
    aval = _square("det", a)
    if aval.shape[-1] == 0:
        return lax.reduce_prod(a, (aval.ndim - 2, aval.ndim - 1))  # 1 for 0 x 0
    return _det(a)


class _SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


_SlogdetResult.__name__ = _SlogdetResult.__qualname__ = "SlogdetResult"


def slogdet(a, *, method: str | None = None):
    """The sign (a unit complex number for complex ``a``) and the log of the absolute
    value of the determinant of each square matrix in ``a``, from its LU decomposition, as
    a named tuple ``(sign, logabsdet)``.  At a singular matrix the sign is 0 and
    ``logabsdet`` is ``-inf``, as NumPy; there its derivative is not finite.

    >>> import numpy as np, functrans.numpy as fnp
    >>> sign, logabsdet = fnp.linalg.slogdet(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> float(sign), round(float(logabsdet), 6)
    (-1.0, 1.791759)
    """
    if method not in (None, "lu", "qr"):
        raise ValueError(f"slogdet: method must be None, 'lu' or 'qr', got {method!r}")
    (a,) = _common_inexact(a)
    aval = _square("slogdet", a)
    nd, dtype = aval.ndim, aval.dtype
    if method == "qr":  # |det a| = prod |r_ii|; the sign also needs det q (+-1, phase)
        q, r = lax.linalg.qr(a, full_matrices=False)
        q_sign, _ = slogdet(q)
        d = _diagonal(r)
        pivots = None
    else:
        packed, pivots, _ = lax.linalg.lu(a)
        d = _diagonal(packed)
    size = lax.abs(d)
    logabsdet = lax.reduce_sum(lax.log(size), (nd - 2,))
    if dtype.kind == "c":
        zero = lax.eq(size, 0)
        safe = lax.select(zero, lax.add(lax.mul(size, 0), 1), size)
        unit = lax.select(zero, lax.mul(d, 0), lax.div(d, lax.convert_element_type(safe, dtype)))
    else:
        unit = lax.sign(d)
    permutation_sign = q_sign if pivots is None else _parity(pivots, dtype)
    sign = lax.mul(permutation_sign, lax.reduce_prod(unit, (nd - 2,)))
    return _SlogdetResult(sign, logabsdet)


class _EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


_EighResult.__name__ = _EighResult.__qualname__ = "EighResult"


def _uplo(name: str, UPLO) -> bool:  # noqa: N803 (NumPy's name)
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def eigh(a, UPLO: str | None = None,  # noqa: N803 (NumPy's name)
         symmetrize_input: bool = True):
    """Eigenvalues (ascending, real) and eigenvectors (columns) of each Hermitian matrix in
    ``a`` (shape ``(..., n, n)``), as a named tuple ``(eigenvalues, eigenvectors)``.
    Integers become float64.

    As in JAX, ``a`` is taken to be Hermitian: its value is ``(a + aᴴ) / 2``, so ``UPLO``
    does not change the result for Hermitian inputs.  Eigenvalue derivatives are finite
    everywhere; eigenvector derivatives are inf or nan at repeated eigenvalues, where the
    eigenvectors are not differentiable (as in JAX).  Each eigenvector is unique only up to
    its sign (phase, if complex): functions of ``|v|`` or of ``v diag(f(w)) vᴴ`` are what
    differentiate reliably.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> a = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> fnp.linalg.eigh(a).eigenvalues
    array([1., 3.])
    >>> ft.grad(lambda a: fnp.linalg.eigh(a).eigenvalues[1])(a)  # v vᵀ of the top one
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    lower = _uplo("eigh", "L" if UPLO is None else UPLO)
    v, w = lax.linalg.eigh(promote_inexact(a), lower=lower, symmetrize_input=symmetrize_input)
    return _EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L", *,  # noqa: N803 (NumPy's name)
             symmetrize_input: bool = True):
    """The eigenvalues (ascending, real) of each Hermitian matrix in ``a``, as ``eigh``'s.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[1.0, 0.0], [0.0, -1.0]]))
    array([-1.,  1.])
    """
    return eigh(a, UPLO, symmetrize_input).eigenvalues


class _QRResult(NamedTuple):
    Q: object  # noqa: N815 (NumPy's field names)
    R: object  # noqa: N815


_QRResult.__name__ = _QRResult.__qualname__ = "QRResult"


def qr(a, mode: str = "reduced"):
    """QR decomposition of each matrix in ``a`` (shape ``(..., M, N)``): ``a = Q R``.
    ``mode``: ``'reduced'`` (``Q`` is ``M x K``, ``K = min(M, N)``), ``'complete'``
    (``Q`` is ``M x M``) or ``'r'`` (``R`` only); ``'raw'`` is not supported.  Returns a
    named tuple ``(Q, R)``, or ``R``.  Integers become float64.  Differentiable for every
    shape and mode but ``'complete'`` with ``M > N`` (as in JAX).

    >>> import numpy as np, functrans.numpy as fnp
    >>> q, r = fnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 2.0]]))
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}" + (
            " ('raw' gives LAPACK's Householder reflectors, which functrans does not "
            "differentiate)" if mode == "raw" else ""))
    q, r = lax.linalg.qr(promote_inexact(a), full_matrices=mode == "complete")
    return r if mode == "r" else _QRResult(q, r)


class _SVDResult(NamedTuple):
    U: object  # noqa: N815 (NumPy's field names)
    S: object  # noqa: N815
    Vh: object  # noqa: N815


_SVDResult.__name__ = _SVDResult.__qualname__ = "SVDResult"


def _hermitian_part(a):
    return lax.mul(lax.add(a, _adjoint(a)), 0.5)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
    """Singular value decomposition of each matrix in ``a`` (shape ``(..., M, N)``):
    ``a = U diag(S) Vh``, ``S`` real and descending.  Returns a named tuple ``(U, S, Vh)``,
    or ``S`` if not ``compute_uv``; ``U`` is ``M x M`` and ``Vh`` ``N x N`` if
    ``full_matrices`` (NumPy's default), else ``M x K`` and ``K x N``, ``K = min(M, N)``.
    With ``hermitian``, ``a`` is taken to be Hermitian, ``(a + aᴴ) / 2`` (as JAX; the
    singular vectors may differ from NumPy's, which come from ``eigh``, by their signs).
    Integers become float64.

    ``S`` is differentiable everywhere (finite at repeated singular values).  ``U`` and
    ``Vh`` are differentiable where the singular values are distinct and non-zero, with
    ``full_matrices`` for square matrices only (as JAX): pass ``full_matrices=False``.
    Each pair of singular vectors is unique only up to a shared sign (phase): functions
    of ``|U|`` or of ``U diag(f(S)) Vh`` are what differentiate reliably.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> a = np.array([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])
    >>> fnp.linalg.svd(a, compute_uv=False)
    array([4., 3.])
    >>> ft.grad(lambda a: fnp.linalg.svd(a, compute_uv=False)[0])(a)  # u₁ v₁ᵀ
    array([[ 0.,  0.],
           [ 0., -1.],
           [ 0.,  0.]])
    """
    a = promote_inexact(a)
    if hermitian:
        _square("svd", a)
        a = _hermitian_part(a)
    if not compute_uv:
        return lax.linalg.svd(a, full_matrices=False, compute_uv=False,
                              subset_by_index=subset_by_index)
    u, s, vh = lax.linalg.svd(a, full_matrices=full_matrices, subset_by_index=subset_by_index)
    return _SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values (descending) of each matrix in ``x``: ``svd(x,
    compute_uv=False)``.  Their derivative is finite everywhere.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.svdvals(np.array([[0.0, 2.0], [1.0, 0.0]]))
    array([2., 1.])
    """
    return svd(x, compute_uv=False)


class _NoValue:
    """The default of ``pinv``'s ``rtol``: NumPy tells "not given" from ``None``."""

    def __repr__(self):
        return "<no value>"


_NO_VALUE = _NoValue()


def _pinv_rcond(name: str, rcond, rtol, shape, dtype):
    if rcond is not None:
        if rtol is not _NO_VALUE:
            raise ValueError(f"{name}: give rcond or rtol, not both (rcond={rcond!r}, "
                             f"rtol={rtol!r})")
        return rcond
    if rtol is _NO_VALUE:
        return 1e-15  # NumPy's default
    if rtol is None:
        return max(shape[-2:]) * np.finfo(dtype).eps
    return rtol


def _pinv_value(a, rcond):
    """``v diag(1 / s) uᴴ`` with the singular values at or below ``rcond`` times the
    largest one dropped."""
    u, s, vh = lax.linalg.svd(a, full_matrices=False)
    nd = get_aval(a).ndim
    cutoff = lax.mul(lax.reduce_max(s, (nd - 2,)), rcond)
    large = lax.gt(s, lax.expand_dims(cutoff, (nd - 2,)))
    safe = lax.select(large, s, lax.add(lax.mul(s, 0), 1))
    s_inv = lax.select(large, lax.div(1, safe), lax.mul(s, 0))
    scaled = lax.mul(_adjoint(vh), lax.convert_element_type(lax.expand_dims(s_inv, (nd - 2,)),
                                                            get_aval(a).dtype))
    return _matmul(scaled, _adjoint(u))


def _scalar_or_array(x):
    """A Python float stays one (no host array to copy to a device); arrays stay."""
    return float(x) if np.ndim(x) == 0 and not isinstance(x, Tracer) else x


@functools.partial(library_custom_jvp, nondiff_argnums=(1,))
def _pinv(a, rcond):
    return _pinv_value(a, rcond)


@_pinv.defjvp
def _pinv_jvp(rcond, primals, tangents):
    # The derivative of the pseudo-inverse where the rank does not change (Golub and
    # Pereyra): -P dA P + P Pᴴ dAᴴ (I - A P) + (I - P A) dAᴴ Pᴴ P.
    (a,), (t,) = primals, tangents
    p = _pinv(a, rcond)
    th, ph = _adjoint(t), _adjoint(p)
    left = _matmul(_matmul(p, ph), th)                         # P Pᴴ dAᴴ
    right = _matmul(th, _matmul(ph, p))                        # dAᴴ Pᴴ P
    dp = lax.neg(_matmul(_matmul(p, t), p))
    dp = lax.add(dp, lax.sub(left, _matmul(_matmul(left, a), p)))
    dp = lax.add(dp, lax.sub(right, _matmul(_matmul(p, a), right)))
    return p, dp


def pinv(a, rcond=None, hermitian: bool = False, *, rtol=_NO_VALUE):
    """The Moore-Penrose pseudo-inverse of each matrix in ``a`` (shape ``(..., M, N)``),
    from its SVD: singular values at or below ``rcond`` (or ``rtol``; NumPy's defaults:
    1e-15, or ``max(M, N) * eps`` for ``rtol=None``) times the largest are dropped.  With
    ``hermitian``, ``a`` is taken to be Hermitian, ``(a + aᴴ) / 2``.  Integers become
    float64.

    Its derivative is that of the pseudo-inverse at fixed rank, computed from ``a`` and
    ``pinv(a)`` alone (as JAX), so it stays finite at repeated singular values and at
    rank-deficient matrices.  It is the true derivative wherever the rank is locally
    constant; at a rank-deficient matrix, along the directions that keep its rank (the
    pseudo-inverse jumps along the others).

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.linalg.pinv(np.array([[1.0, 1.0], [1.0, 1.0]]))  # rank 1
    array([[0.25, 0.25],
           [0.25, 0.25]])
    >>> ft.grad(lambda a: fnp.linalg.pinv(a)[0, 0])(np.eye(2)) + 0.0  # repeated values
    array([[-1.,  0.],
           [ 0.,  0.]])
    """
    a = promote_inexact(a)
    aval = get_aval(a)
    if aval.ndim < 2:
        raise np.linalg.LinAlgError(f"pinv: a must be a stack of matrices (..., M, N), got "
                                    f"shape {aval.shape}")
    rcond = _pinv_rcond("pinv", rcond, rtol, aval.shape, aval.dtype)
    if hermitian:
        _square("pinv", a)
        a = _hermitian_part(a)
    if 0 in aval.shape[-2:]:
        return lax.zeros_like(_adjoint(a))
    return _pinv(a, _scalar_or_array(rcond))


def _rank(s, tol):
    """How many of the singular values ``s`` (last axis) exceed ``tol``."""
    nd = get_aval(s).ndim
    above = lax.convert_element_type(lax.gt(s, tol), np.int64)
    return lax.reduce_sum(above, (nd - 1,))


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """The least-squares solution ``x`` of ``a @ x ≈ b`` (``a`` of shape ``(M, N)``, ``b``
    of shape ``(M,)`` or ``(M, K)``), as NumPy: a tuple ``(x, residuals, rank, s)``.
    Singular values at or below ``rcond`` (default ``max(M, N) * eps``) times the largest
    are dropped; ``x = pinv(a) @ b`` is the minimum-norm solution, and its derivative is
    that of the pseudo-inverse (finite at rank-deficient ``a``; see ``pinv``).
    ``residuals`` is the squared norm of ``b - a x`` per column (shape ``(K,)``, ``(1,)``
    for a vector ``b``) if ``M > N``, else empty.  NumPy also returns it empty when
    ``M > N`` and the rank is below ``N``; functrans returns the residuals there too, so
    that the shape does not depend on values (JAX always returns them).  ``rank`` is a
    0-d int64 array, as in JAX (NumPy's is an int; reading it would copy a device array to
    the host); ``s`` are the singular values of ``a``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
    >>> x, residuals, rank, s = fnp.linalg.lstsq(a, np.array([1.0, 2.0, 2.0]))
    >>> x.round(6), residuals.round(6), int(rank)
    (array([1.166667, 0.5     ]), array([0.166667]), 2)
    """
    a, b = _common_inexact(a, b)
    a_aval, b_aval = get_aval(a), get_aval(b)
    if a_aval.ndim != 2 or b_aval.ndim not in (1, 2):
        raise np.linalg.LinAlgError(f"lstsq: a must be 2-D and b 1-D or 2-D, got shapes "
                                    f"{a_aval.shape} and {b_aval.shape}")
    m, n = a_aval.shape
    if b_aval.shape[0] != m:
        raise np.linalg.LinAlgError(f"lstsq: a has {m} rows, so b must too, got a of shape "
                                    f"{a_aval.shape} and b of shape {b_aval.shape}")
    real = np.empty((), a_aval.dtype).real.dtype
    if rcond is None:
        rcond = np.finfo(real).eps * max(m, n)
    vector = b_aval.ndim == 1
    column = lax.expand_dims(b, (1,)) if vector else b
    s = lax.linalg.svd(a, full_matrices=False, compute_uv=False)
    rcond_value = _scalar_or_array(rcond)
    if 0 in (m, n):
        x = lax.zeros_like(_matmul(_adjoint(a), column))
        rank = lax.convert_element_type(lax.reduce_sum(s, (0,)), np.int64)
    else:
        x = _matmul(_pinv(a, rcond_value), column)
        rank = _rank(s, lax.mul(lax.reduce_max(s, (0,)), rcond_value))
    if m > n:
        r = lax.sub(column, _matmul(a, x))
        residuals = lax.reduce_sum(_squares(r), (0,))
    else:
        residuals = lax.slice(s, (0,), (0,))  # empty, and traced where s is
    if numpy_resid and m > n:  # NumPy's empty residuals at a rank below N: shape by value
        if isinstance(rank, Tracer):
            raise ConcretizationTypeError(
                "lstsq: numpy_resid=True makes the residuals' shape depend on the rank, a "
                "traced value here; leave numpy_resid False under jit/vmap (the residuals "
                "are then always returned)")
        if int(rank) < n:
            residuals = lax.slice(s, (0,), (0,))
    if vector:
        x = lax.squeeze(x, (1,))
    return x, residuals, rank, s


def matrix_rank(M, tol=None, hermitian: bool = False, *, rtol=None):  # noqa: N803 (NumPy's)
    """The rank of each matrix in ``M``: how many singular values exceed ``tol`` (default
    ``rtol`` times the largest; ``rtol`` defaults to ``max(M, N) * eps``), as NumPy.  A 0-D
    or 1-D ``M`` has rank 1 unless it is all zeros.  The result is an integer (int64) array
    and has no derivative; it is traced under transformations, as in JAX.

    >>> import numpy as np, functrans.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    M = promote_inexact(M)  # noqa: N806
    aval = get_aval(M)
    if aval.ndim < 2:
        nonzero = lax.convert_element_type(lax.ne(M, 0), np.int64)
        return lax.reduce_max(lax.reshape(nonzero, (int(np.prod(aval.shape)),)), (0,)) \
            if aval.ndim else nonzero
    if hermitian:
        _square("matrix_rank", M)
        M = _hermitian_part(M)  # noqa: N806
    s = lax.linalg.svd(M, full_matrices=False, compute_uv=False)
    nd = aval.ndim
    if 0 in aval.shape[-2:]:  # no singular values: rank 0
        return lax.reduce_sum(lax.convert_element_type(s, np.int64), (nd - 2,))
    if tol is None:
        if rtol is None:
            rtol = max(aval.shape[-2:]) * np.finfo(get_aval(s).dtype).eps
        rtol = lax.expand_dims(rtol, (nd - 2,)) if np.ndim(rtol) else rtol
        tol = lax.mul(lax.expand_dims(lax.reduce_max(s, (nd - 2,)), (nd - 2,)), rtol)
    elif np.ndim(tol):
        tol = lax.expand_dims(tol, (nd - 2,))
    return _rank(s, tol)


def cond(x, p=None):
    """The condition number of each matrix in ``x`` in the norm ``p`` (as NumPy): for
    ``None``, 2 and -2 the ratio of the largest and the smallest singular values
    (differentiable, as JAX), for the other orders (``'fro'``, ``'nuc'``, ``inf``,
    ``-inf``, 1, -1) ``norm(x, p) * norm(inv(x), p)`` of square ``x``.  Singular matrices
    give ``inf`` (a NaN becomes ``inf`` unless ``x`` holds a NaN), as NumPy.

    >>> import numpy as np, functrans.numpy as fnp
    >>> float(fnp.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    x = promote_inexact(x)
    aval = get_aval(x)
    if aval.ndim < 2 or 0 in aval.shape[-2:]:
        raise np.linalg.LinAlgError(f"cond: x must be a stack of non-empty matrices, got "
                                    f"shape {aval.shape}")
    nd = aval.ndim
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = lax.linalg.svd(x, full_matrices=False, compute_uv=False)
        k = get_aval(s).shape[-1]
        batch = aval.shape[:-2]
        first = lax.squeeze(lax.slice(s, (0,) * (nd - 1), batch + (1,)), (nd - 2,))
        last = lax.squeeze(lax.slice(s, (0,) * (nd - 2) + (k - 1,), batch + (k,)), (nd - 2,))
        r = lax.div(last, first) if p == -2 else lax.div(first, last)
    else:
        _square("cond", x)
        # adj(x) / det(x): inf or nan at singular members, where inv would raise.
        inverse = lax.div(_adjugate(x), lax.expand_dims(det(x), (nd - 2, nd - 1)))
        r = lax.mul(norm(x, p, axis=(-2, -1)), norm(inverse, p, axis=(-2, -1)))
    x_nan = lax.ne(x, x)
    has_nan = lax.reduce_max(lax.convert_element_type(x_nan, np.int8), (nd - 2, nd - 1))
    to_inf = lax.bitwise_and(lax.ne(r, r), lax.eq(has_nan, 0))
    return lax.select(to_inf, lax.add(lax.zeros_like(r), np.inf), r)


class _EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


_EigResult.__name__ = _EigResult.__qualname__ = "EigResult"


def eig(a):
    """Eigenvalues and right eigenvectors (columns) of each square matrix in ``a`` (shape
    ``(..., n, n)``), as a named tuple ``(eigenvalues, eigenvectors)``.  Both are always
    complex, as JAX (NumPy returns real arrays when every eigenvalue is real); the order is
    LAPACK's, as NumPy's, and each eigenvector has unit norm and its component of largest
    modulus real, as LAPACK makes it.  Integers become float64.

    Differentiable where the eigenvalues are distinct, eigenvectors included (JAX's
    ``jnp.linalg.eig`` refuses eigenvector derivatives): their derivative keeps the unit
    norm and the real largest component, LAPACK's normalization (and ``lax.linalg.eig``'s
    with ``enable_eigvec_derivs=True``).  At repeated eigenvalues both are inf or nan.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> a = np.array([[2.0, 1.0], [0.0, 3.0]])
    >>> fnp.linalg.eig(a).eigenvalues
    array([2.+0.j, 3.+0.j])
    >>> ft.grad(lambda a: fnp.linalg.eig(a).eigenvalues[1].real)(a)  # u vᵀ / (uᵀ v)
    array([[0., 0.],
           [1., 1.]])
    """
    (a,) = _common_inexact(a)
    _square("eig", a)
    w, v = lax.linalg.eig(a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)
    return _EigResult(w, v)


def eigvals(a):
    """The eigenvalues (complex, LAPACK's order) of each square matrix in ``a``, as
    ``eig``'s; differentiable where they are distinct.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]]))
    array([0.+1.j, 0.-1.j])
    """
    (a,) = _common_inexact(a)
    _square("eigvals", a)
    return lax.linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


def _safe_sqrt(q):
    """``sqrt(q)`` for ``q >= 0`` whose derivative at ``q = 0`` is 0, not inf: the norm's
    subgradient at the zero vector is then 0 instead of nan."""
    zero = lax.eq(q, 0)
    safe = lax.select(zero, lax.add(lax.mul(q, 0), 1), q)
    return lax.select(zero, lax.mul(q, 0), lax.sqrt(safe))


def _squares(x):
    return lax.real(lax.mul(x, lax.conj(x))) if get_aval(x).dtype.kind == "c" else lax.mul(x, x)


def _vector_norm(x, ord, axis: int):  # noqa: A002 (NumPy's name)
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _safe_sqrt(lax.reduce_sum(_squares(x), (axis,)))
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid order {ord!r} for vectors; use an int, a float, inf "
                         "or -inf ('fro' and 'nuc' are matrix orders: give axis a pair)")
    if ord == np.inf:
        return lax.reduce_max(lax.abs(x), (axis,))
    if ord == -np.inf:
        return lax.reduce_min(lax.abs(x), (axis,))
    if ord == 0:  # how many entries are not zero, as NumPy
        real = np.empty((), get_aval(x).dtype).real.dtype
        return lax.reduce_sum(lax.convert_element_type(lax.ne(x, 0), real), (axis,))
    if ord == 1:
        return lax.reduce_sum(lax.abs(x), (axis,))
    total = lax.reduce_sum(lax.pow(lax.abs(x), float(ord)), (axis,))
    if ord < 0:
        return lax.pow(total, 1.0 / ord)
    zero = lax.eq(total, 0)  # as for sqrt: a zero subgradient at the zero vector
    safe = lax.select(zero, lax.add(lax.mul(total, 0), 1), total)
    return lax.select(zero, lax.mul(total, 0), lax.pow(safe, 1.0 / ord))


def _matrix_norm(x, ord, axes: tuple):  # noqa: A002 (NumPy's name)
    row, col = axes
    if ord is None or ord == "fro":
        return _safe_sqrt(lax.reduce_sum(_squares(x), axes))
    if ord == "nuc" or (not isinstance(ord, str) and ord in (2, -2)):
        nd = get_aval(x).ndim
        rest = [i for i in range(nd) if i not in axes]
        s = lax.linalg.svd(lax.transpose(x, tuple(rest) + (row, col)), full_matrices=False,
                           compute_uv=False)
        last = (nd - 2,)
        if ord == "nuc":
            return lax.reduce_sum(s, last)
        return lax.reduce_max(s, last) if ord == 2 else lax.reduce_min(s, last)
    if isinstance(ord, str) or ord not in (1, -1, np.inf, -np.inf):
        raise ValueError(f"norm: invalid order {ord!r} for matrices; one of None, 'fro', "
                         "'nuc', inf, -inf, 1, -1, 2, -2")
    # 1: the largest column sum of |x| (summed over rows); inf: the largest row sum.
    summed, kept = (row, col) if ord in (1, -1) else (col, row)
    sums = lax.reduce_sum(lax.abs(x), (summed,))
    kept = kept - 1 if kept > summed else kept
    return lax.reduce_max(sums, (kept,)) if ord > 0 else lax.reduce_min(sums, (kept,))


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 (NumPy's name)
    """Vector or matrix norms, as NumPy.  ``axis``: None (the whole array, flattened, if
    ``ord`` is None; else ``x`` must be 1-D or 2-D), an int (vectors along it) or a pair
    of ints (matrices in that plane).

    Vector orders: None or 2 (Euclidean), ``inf`` (largest ``|x|``), ``-inf``, 0 (how many
    entries are not zero), 1 and any other number ``p`` (``sum(|x|ᵖ)^(1/p)``).  Matrix
    orders: None or ``'fro'`` (Frobenius), ``'nuc'`` (the sum of the singular values), 2
    and -2 (the largest and smallest singular values), 1 and -1 (the largest and smallest
    column sums of ``|x|``), ``inf`` and ``-inf`` (row sums).

    At the zero vector (and the zero matrix, for the Frobenius norm) the Euclidean and
    ``p``-norms (``p > 0``) have the subgradient 0, not nan.  The derivatives of
    ``inf``/``1``-type norms at ties and of the singular-value norms are those of the
    maximum and of ``svd``'s singular values.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
    5.0
    >>> ft.grad(fnp.linalg.norm)(np.zeros(2))  # a subgradient, not nan
    array([0., 0.])
    >>> float(fnp.linalg.norm(np.array([[1.0, 2.0], [3.0, 4.0]]), 1))  # largest column sum
    6.0
    """
    x = promote_inexact(x)
    aval = get_aval(x)
    if axis is None:
        if ord is None:
            flat = lax.reshape(x, (int(np.prod(aval.shape)),))
            out = _vector_norm(flat, None, 0)
            return lax.reshape(out, (1,) * aval.ndim) if keepdims else out
        if aval.ndim not in (1, 2):
            raise ValueError(f"norm: with ord={ord!r} and axis=None the input must be 1-D or "
                             f"2-D, got shape {aval.shape}")
        axes = tuple(range(aval.ndim))
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(normalize_axis(int(a), aval.ndim) for a in axes)
        if len(set(axes)) != len(axes) or len(axes) not in (1, 2):
            raise ValueError(f"norm: axis must be one axis or a pair of distinct axes, got "
                             f"{axis!r} (input shape {aval.shape})")
    out = _vector_norm(x, ord, axes[0]) if len(axes) == 1 else _matrix_norm(x, ord, axes)
    return lax.expand_dims(out, tuple(sorted(axes))) if keepdims else out


# ------------------------------------------------------------------------------------------
# The rest of numpy.linalg, composed from the functions above and functrans.numpy's
# families (so derivatives and batching come from theirs).
# ------------------------------------------------------------------------------------------


def matrix_power(a, n: int):
    """``a`` raised to the integer power ``n`` for each square matrix in ``a`` (shape
    ``(..., M, M)``), by repeated squaring; ``n = 0`` gives identities (``a``'s dtype) and a
    negative ``n`` powers of ``inv(a)``.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> fnp.linalg.matrix_power(np.array([[1, 1], [0, 1]]), 3)
    array([[1, 3],
           [0, 1]])
    >>> a = np.array([[2.0, 0.0], [0.0, 1.0]])
    >>> ft.grad(lambda a: fnp.linalg.matrix_power(a, -1)[0, 0])(a) + 0.0  # -(a⁻ᵀ e₀ e₀ᵀ a⁻ᵀ)
    array([[-0.25,  0.  ],
           [ 0.  ,  0.  ]])
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: the exponent n must be a Python or NumPy integer, "
                        f"got {type(n).__name__} {n!r}")
    a = arg(a)
    aval = _square("matrix_power", a)
    n = int(n)
    if n == 0:
        return broadcast_to(backend.eye(aval.shape[-1], dtype=aval.dtype, like=a), aval.shape)
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while True:  # the binary digits of n, lowest first
        n, bit = divmod(n, 2)
        if bit:
            result = power if result is None else contractions.matmul(result, power)
        if not n:
            return result
        power = contractions.matmul(power, power)


def _chain_order(dims: list) -> list:
    """``split[i][j]``: where the cheapest product of matrices ``i..j`` (matrix ``k`` of
    shape ``dims[k] x dims[k + 1]``) splits, by the classic dynamic programme."""
    count = len(dims) - 1
    cost: list[list[float]] = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, out=None, precision=None):
    """The product of two or more matrices, ``arrays[0] @ arrays[1] @ ...``, in the order
    of multiplication that needs the fewest scalar multiplications (as NumPy chooses it).
    The first array may be 1-D (a row vector) and the last 1-D (a column vector); the
    others must be 2-D.  ``out`` is not supported (arrays are immutable here).

    >>> import numpy as np, functrans.numpy as fnp
    >>> a, b, c = np.ones((10, 100)), np.ones((100, 5)), np.ones((5, 50))
    >>> fnp.linalg.multi_dot([a, b, c]).shape  # (a @ b) @ c: 7,500 multiplications
    (10, 50)
    """
    if out is not None:
        raise NotImplementedError("multi_dot: out= is not supported; use the returned array")
    contractions.check_precision("multi_dot", precision)
    arrays = [arg(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}")
    first_vector = get_aval(arrays[0]).ndim == 1
    last_vector = get_aval(arrays[-1]).ndim == 1
    if first_vector:
        arrays[0] = lax.expand_dims(arrays[0], (0,))
    if last_vector:
        arrays[-1] = lax.expand_dims(arrays[-1], (1,))
    for i, x in enumerate(arrays):
        if get_aval(x).ndim != 2:
            raise ValueError(f"multi_dot: array {i} has shape {get_aval(arrays[i]).shape}; "
                             "all but the first and last must be 2-D (those may be 1-D)")
    dims = [get_aval(arrays[0]).shape[0]] + [get_aval(x).shape[1] for x in arrays]
    for i in range(len(arrays) - 1):
        if get_aval(arrays[i]).shape[1] != get_aval(arrays[i + 1]).shape[0]:
            raise ValueError(f"multi_dot: shapes {get_aval(arrays[i]).shape} and "
                             f"{get_aval(arrays[i + 1]).shape} (arrays {i} and {i + 1}) are "
                             "not aligned")
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        k = split[i][j]
        return contractions.matmul(product(i, k), product(k + 1, j))

    result = product(0, len(arrays) - 1)
    if first_vector:
        result = lax.squeeze(result, (0,))
    if last_vector:
        result = lax.squeeze(result, (get_aval(result).ndim - 1,))
    return result


def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-element vectors along ``axis`` (the other axes broadcast), as
    NumPy 2's ``numpy.linalg.cross``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    x1, x2 = arg(x1), arg(x2)
    for name, x in (("x1", x1), ("x2", x2)):
        shape = get_aval(x).shape
        if not shape or normalize_axis(axis, len(shape)) is None or shape[axis] != 3:
            raise ValueError(f"cross: {name} must have 3 elements along axis {axis}, got "
                             f"shape {shape}")
    a = shapes.moveaxis(x1, axis, -1)
    b = shapes.moveaxis(x2, axis, -1)
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    components = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    result = shapes.stack(shapes.broadcast_arrays(*components), axis=-1)
    return shapes.moveaxis(result, -1, axis)


def outer(x1, x2, /):
    """The outer product of two vectors (1-D only, as ``numpy.linalg.outer``).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.outer(np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0]))
    array([[ 3.,  4.,  5.],
           [ 6.,  8., 10.]])
    """
    x1, x2 = arg(x1), arg(x2)
    for name, x in (("x1", x1), ("x2", x2)):
        if get_aval(x).ndim != 1:
            raise ValueError(f"outer: {name} must be a vector (1-D), got shape "
                             f"{get_aval(x).shape}; functrans.numpy.outer flattens its inputs")
    return contractions.outer(x1, x2)


def tensorinv(a, ind: int = 2):
    """The inverse of ``a`` seen as a linear map from its last axes (those after the first
    ``ind``) to its first ``ind`` axes: ``tensordot(tensorinv(a, ind), a, ind)`` is the
    identity.  ``prod(a.shape[:ind])`` must equal ``prod(a.shape[ind:])``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a = np.eye(6).reshape(6, 2, 3) * 2
    >>> fnp.linalg.tensorinv(a, ind=1).shape
    (2, 3, 6)
    """
    a = arg(a)
    shape = get_aval(a).shape
    if not isinstance(ind, (int, np.integer)) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind!r}")
    rows, columns = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != columns:
        raise np.linalg.LinAlgError(
            f"tensorinv: a of shape {shape} is not square with ind={ind}: the first {ind} "
            f"axes have {rows} elements, the others {columns}")
    return shapes.reshape(inv(shapes.reshape(a, (rows, columns))), shape[ind:] + shape[:ind])


def tensorsolve(a, b, axes=None):
    """The ``x`` with ``tensordot(a, x, x.ndim) == b``, where ``x`` has the shape of
    ``a``'s last axes (those after ``b.ndim``); ``axes`` names axes of ``a`` to move to
    the end first.

    >>> import numpy as np, functrans.numpy as fnp
    >>> a = np.eye(6).reshape(2, 3, 6) * 2
    >>> fnp.linalg.tensorsolve(a, np.ones((2, 3))).shape
    (6,)
    """
    a, b = arg(a), arg(b)
    nd = get_aval(a).ndim
    if axes is not None:
        order = list(range(nd))
        for k in axes:
            order.remove(normalize_axis(k, nd))
            order.append(normalize_axis(k, nd))
        a = lax.transpose(a, tuple(order))
    shape, b_shape = get_aval(a).shape, get_aval(b).shape
    x_shape = shape[len(b_shape):]
    size = math.prod(x_shape)
    if shape[:len(b_shape)] != b_shape or math.prod(b_shape) != size:
        raise np.linalg.LinAlgError(
            f"tensorsolve: a of shape {shape} must start with b's shape {b_shape} and the "
            f"rest, {x_shape}, must have as many elements as b")
    x = solve(shapes.reshape(a, (size, size)), shapes.reshape(b, (size,)))
    return shapes.reshape(x, x_shape)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The dot product of vectors along ``axis``, conjugating ``x1``: ``sum(conj(x1) *
    x2, axis)``, the other axes broadcast.

    The result has the promoted dtype of the inputs (``int8`` vectors give ``int8``, as
    the array API says, not ``sum``'s ``int64``), and the vectors must have one length:
    a length-1 axis is not broadcast against a longer one.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.vecdot(np.array([1j, 1.0]), np.array([1j, 2.0]))
    array(3.+0.j)
    """
    x1, x2 = contractions.preferred_operands("vecdot", arg(x1), arg(x2), precision,
                                              preferred_element_type)
    shape1, shape2 = get_aval(x1).shape, get_aval(x2).shape
    nd = max(len(shape1), len(shape2))
    if not shape1 or not shape2 or not -nd <= axis < nd:
        raise ValueError(f"vecdot: axis {axis} is not an axis of both operands, of shapes "
                         f"{shape1} and {shape2}")
    axis = axis - nd if axis >= 0 else axis
    if -axis > min(len(shape1), len(shape2)) or shape1[axis] != shape2[axis]:
        raise ValueError(f"vecdot: the vectors along axis {axis} have sizes "
                         f"{shape1[axis] if -axis <= len(shape1) else None} and "
                         f"{shape2[axis] if -axis <= len(shape2) else None} (operands of "
                         f"shapes {shape1} and {shape2})")
    dtype = np.result_type(get_aval(x1).dtype, get_aval(x2).dtype)
    return contractions.preferred_result(reductions.sum(
        elementwise.multiply(elementwise.conj(x1), x2), axis=axis, dtype=dtype),
        preferred_element_type)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of the ``offset`` diagonal of each matrix in ``x`` (its last two axes), as
    ``numpy.linalg.trace`` (``numpy.trace`` reads the first two axes instead).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.trace(np.arange(8.0).reshape(2, 2, 2))
    array([ 3., 11.])
    """
    return reductions.trace(arg(x), offset, -2, -1, dtype)


def diagonal(x, /, *, offset: int = 0):
    """The ``offset`` diagonal of each matrix in ``x`` (its last two axes), as
    ``numpy.linalg.diagonal``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.diagonal(np.arange(4.0).reshape(2, 2))
    array([0., 3.])
    """
    return indexing.diagonal(arg(x), offset, -2, -1)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """The matrix product, as ``functrans.numpy.matmul`` (``numpy.linalg``'s name).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.matmul(np.eye(2), np.array([1.0, 2.0]))
    array([1., 2.])
    """
    return contractions.matmul(x1, x2, precision=precision,
                               preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
    """Each matrix in ``x`` (shape ``(..., M, N)``) transposed: its last two axes swapped.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.matrix_transpose(np.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = arg(x)
    if get_aval(x).ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least two axes, got shape "
                         f"{get_aval(x).shape}")
    return _matrix_transpose(x)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):  # noqa: A002 (NumPy's name)
    """The norm of each matrix in ``x`` (its last two axes): ``norm(x, ord, (-2, -1),
    keepdims)``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.matrix_norm(np.full((2, 2, 2), 0.5))
    array([1., 1.])
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):  # noqa: A002
    """The norm of vectors along ``axis`` of ``x``: ``None`` treats all of ``x`` as one
    vector (whatever its shape) and a tuple of axes the elements in them as one vector,
    as ``numpy.linalg.vector_norm``; computed by ``norm``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> float(fnp.linalg.vector_norm(np.full((2, 2, 2), 0.5)))
    1.4142135623730951
    """
    x = promote_inexact(x)
    shape = get_aval(x).shape
    nd = len(shape)
    if axis is None:
        axes = tuple(range(nd))
    else:
        given = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(normalize_axis(int(a), nd) for a in given)
        if len(set(axes)) != len(axes):
            raise ValueError(f"vector_norm: axis {axis!r} repeats an axis")
    kept = [i for i in range(nd) if i not in axes]
    flat = shapes.reshape(lax.transpose(x, tuple(kept) + axes) if nd else x,
                          tuple(shape[i] for i in kept) + (math.prod(shape[i] for i in axes),))
    result = norm(flat, ord=ord, axis=-1)
    if keepdims:
        result = shapes.reshape(result, tuple(1 if i in axes else shape[i] for i in range(nd)))
    return result


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """``numpy.linalg.tensordot`` (the array API's): ``functrans.numpy.tensordot`` with
    ``axes`` as a keyword.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.tensordot(np.ones((2, 3)), np.ones((3, 4)), axes=1)
    array([[3., 3., 3., 3.],
           [3., 3., 3., 3.]])
    """
    return contractions.tensordot(x1, x2, axes, precision=precision,
                                  preferred_element_type=preferred_element_type)
