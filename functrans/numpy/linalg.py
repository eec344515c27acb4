"""``functrans.numpy.linalg``: ``numpy.linalg``'s functions, differentiable and batched
over leading axes.

>>> import numpy as np, functrans.numpy as fnp
>>> float(fnp.linalg.norm(np.array([3.0, 4.0])))
5.0
"""
from __future__ import annotations

from functrans import lax
from functrans.core import get_aval
from functrans.numpy._elementwise import sqrt
from functrans.numpy._reductions import sum
from functrans.numpy._util import promote_inexact
from functrans.primitives.shape import normalize_axis

__all__ = ["cholesky", "norm"]


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
