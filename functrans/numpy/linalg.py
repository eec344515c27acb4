"""``functrans.numpy.linalg``: ``numpy.linalg``'s functions, differentiable and batched
over leading axes.

>>> import numpy as np, functrans.numpy as fnp
>>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
5.0
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from functrans import backend, lax
from functrans.core import get_aval
from functrans.numpy._elementwise import sqrt
from functrans.numpy._reductions import sum
from functrans.numpy._util import arg, promote_inexact
from functrans.primitives.custom_derivatives import custom_jvp
from functrans.primitives.decompositions import permutation_matrix
from functrans.primitives.shape import broadcast_to, normalize_axis

__all__ = ["cholesky", "det", "eigh", "eigvalsh", "inv", "norm", "qr", "slogdet", "solve"]


def __dir__() -> list:
    return sorted(__all__)


def _matrix_transpose(x):
    nd = get_aval(x).ndim
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _adjoint(x):
    x = _matrix_transpose(x)
    return lax.conj(x) if get_aval(x).dtype.kind == "c" else x


def cholesky(a, /, *, upper: bool = False):
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
    factor = lax.linalg.cholesky(promote_inexact(a))
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
    eye = broadcast_to(backend.eye(aval.shape[-1], dtype=aval.dtype, like=a), aval.shape)
    packed, _, permutation = lax.linalg.lu(a)
    return _lu_solve(packed, permutation, eye)


@custom_jvp
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


def slogdet(a):
    """The sign (a unit complex number for complex ``a``) and the log of the absolute
    value of the determinant of each square matrix in ``a``, from its LU decomposition, as
    a named tuple ``(sign, logabsdet)``.  At a singular matrix the sign is 0 and
    ``logabsdet`` is ``-inf``, as NumPy; there its derivative is not finite.

    >>> import numpy as np, functrans.numpy as fnp
    >>> sign, logabsdet = fnp.linalg.slogdet(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> float(sign), round(float(logabsdet), 6)
    (-1.0, 1.791759)
    """
    (a,) = _common_inexact(a)
    aval = _square("slogdet", a)
    nd, dtype = aval.ndim, aval.dtype
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
    sign = lax.mul(_parity(pivots, dtype), lax.reduce_prod(unit, (nd - 2,)))
    return _SlogdetResult(sign, logabsdet)


class _EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


_EighResult.__name__ = _EighResult.__qualname__ = "EighResult"


def _uplo(name: str, UPLO) -> bool:  # noqa: N803 (NumPy's name)
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def eigh(a, UPLO: str = "L"):  # noqa: N803 (NumPy's name)
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
    lower = _uplo("eigh", UPLO)
    v, w = lax.linalg.eigh(promote_inexact(a), lower=lower)
    return _EighResult(w, v)


def eigvalsh(a, UPLO: str = "L"):  # noqa: N803 (NumPy's name)
    """The eigenvalues (ascending, real) of each Hermitian matrix in ``a``, as ``eigh``'s.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.array([[1.0, 0.0], [0.0, -1.0]]))
    array([-1.,  1.])
    """
    return eigh(a, UPLO).eigenvalues


class _QRResult(NamedTuple):
    Q: object  # noqa: N815 (NumPy's field names)
    R: object  # noqa: N815


_QRResult.__name__ = _QRResult.__qualname__ = "QRResult"


def qr(a, mode: str = "reduced"):
    """QR decomposition of each matrix in ``a`` (shape ``(..., M, N)``): ``a = Q R``.
    ``mode``: ``'reduced'`` (``Q`` is ``M x K``, ``K = min(M, N)``), ``'complete'``
    (``Q`` is ``M x M``) or ``'r'`` (``R`` only); ``'raw'`` is not supported.  Returns a
    named tuple ``(Q, R)``, or ``R``.  Integers become float64.  Differentiable for
    ``M >= N`` (reduced, or ``'r'``) and for square matrices, as in JAX.

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


def norm(x, ord=None, axis=None, keepdims: bool = False):  # noqa: A002 (NumPy's name)
    """The Euclidean norm of vectors (``ord`` None or 2) or the Frobenius norm of matrices
    (``ord`` None or ``'fro'``).  ``axis``: None (the whole array; with ``ord``, a 1-D or
    2-D one), an int (vectors along it) or a pair of ints (matrices in that plane).  Its
    derivative at ``x = 0`` is undefined."""
    x = promote_inexact(x)
    aval = get_aval(x)
    if axis is None:
        axes = tuple(range(aval.ndim))
        if ord is not None and aval.ndim not in (1, 2):
            raise ValueError(f"norm: with ord={ord!r} and axis=None the input must be 1-D or "
                             f"2-D, got shape {aval.shape}")
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(normalize_axis(int(a), aval.ndim) for a in axes)
        if len(set(axes)) != len(axes) or len(axes) not in (1, 2):
            raise ValueError(f"norm: axis must be one axis or a pair of distinct axes, got "
                             f"{axis!r} (input shape {aval.shape})")
    if ord is not None:
        if len(axes) == 1 and not (isinstance(ord, (int, float)) and ord == 2):
            raise NotImplementedError(f"norm: vector ord={ord!r} is not supported; only "
                                      "ord=None or 2 (the Euclidean norm)")
        if len(axes) == 2 and not (isinstance(ord, str) and ord == "fro"):
            raise NotImplementedError(f"norm: matrix ord={ord!r} is not supported; only "
                                      "ord=None or 'fro' (the Frobenius norm)")
    squares = lax.real(lax.mul(x, lax.conj(x))) if aval.dtype.kind == "c" else lax.mul(x, x)
    return sqrt(sum(squares, axes, keepdims=keepdims))
