"""Matrix decompositions and solves on the last two axes (``cholesky``,
``triangular_solve``, ``triangular_matmul``, ``lu``, ``eigh``, ``qr``, ``svd``, ``eig``,
``schur``, ``hessenberg``, ``sylvester``, ``tridiagonal_solve``, and LAPACK's packed
``tridiagonal`` and ``hessenberg_reflectors``, which have no derivative); leading axes are
batch members.  ``householder_product``, ``ormqr``, ``cholesky_update`` and
``symmetric_product`` are composed from lax operations at the end.

Each primitive reads only the part of its matrix operand that its impl reads, and its
derivative is exactly that of the impl:

* ``cholesky(a)`` reads the lower triangle of ``a`` (the strict upper triangle is taken to
  be the conjugate transpose of the strict lower one).  With ``L = cholesky(a)`` and the
  Hermitian tangent ``dA`` built from the lower triangle of the tangent,
  ``dL = L Φ(L⁻¹ dA L⁻ᴴ)`` where ``Φ`` keeps the lower triangle and halves the diagonal.
* ``triangular_solve(a, b)`` reads one triangle of ``a`` (without its diagonal if
  ``unit_diagonal``); it is linear in ``b``, so its transpose in ``b`` is a triangular solve
  with ``a`` transposed, and ``d x = -op(a)⁻¹ op(da) x`` (left side) in ``a``.
* ``triangular_matmul(a, b)`` is ``op(a) b`` (or ``b op(a)``) reading one triangle of
  ``a``: linear in ``b`` (its transpose multiplies by ``op(a)ᵀ``), and in ``a`` the product
  with that triangle of the tangent.  ``cholesky``'s rule multiplies by ``L`` with it.
* ``lu(a)`` factors ``a[permutation] = L U`` with partial pivoting; with
  ``X = L⁻¹ da[permutation] U⁻¹``, ``dL = L tril(X, -1)`` and ``dU = triu(X) U``.
* ``eigh(a)`` reads the ``lower`` (or upper) triangle of ``a = V diag(w) Vᴴ``.  With the
  Hermitian tangent ``dA`` built from that triangle and ``M = Vᴴ dA V``: ``dw = Re diag(M)``
  and ``dV = V (F ∘ M)``, ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal and 0 on it
  (the gauge ``diag(Vᴴ dV) = 0``).  At repeated eigenvalues ``dw`` stays finite and ``dV``
  is not (inf or nan), as in JAX: the eigenvectors are not differentiable there.
* ``qr(a)`` (``m >= n``, reduced): with ``C = Qᴴ da R⁻¹`` and ``Ω`` the skew-Hermitian
  matrix with the strict lower triangle of ``C`` (and the imaginary part of its diagonal),
  ``dQ = Q (Ω - C) + da R⁻¹`` and ``dR = (C - Ω) R``.  Wide ``a = [a1 a2]`` (``m < n``,
  ``a1`` square): ``dQ`` and ``dR1`` from ``a1``, and ``dR2 = dQᴴ a2 + Qᴴ da2``.
* ``svd(a) = (s, U, Vh)``: with ``dS = Uᴴ da V``, ``ds = Re diag(dS)``;
  ``dU = U (F ∘ (dS S + S dSᴴ) + i Im diag(dS) / s)`` and ``dV = V (F ∘ (S dS + dSᴴ S))``,
  ``F[i, j] = 1 / (s[j]² - s[i]²)``, plus for ``m > n`` (``m < n``) the part of ``da V / s``
  (``daᴴ U / s``) outside the span of ``U`` (``V``), as JAX.
* ``tridiagonal_solve(dl, d, du, b)`` solves ``A x = b`` for the tridiagonal ``A``: linear
  in ``b`` (its transpose solves with ``Aᵀ``), ``dx = -A⁻¹ (dA x)`` in the diagonals.
* ``eig(a)``: with ``P = V⁻¹ da V``, ``dw = diag(P)`` and
  ``dV = V (F ∘ P) + V diag(c)``, ``F[i, j] = 1 / (w[j] - w[i])``, ``c`` keeping each
  column's norm 1 and its largest component real (LAPACK's normalization, as JAX).

Complex transposes are linear transposes (no conjugation), as for ``dot_general``.
"""
from __future__ import annotations

import numpy as np

from functrans import backend
from functrans.backend import array_module, coerce
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import (abs, add, complex, conj, div, eq, gt, imag, mul,
                                              neg, real, sqrt, sub)
from functrans.primitives.elementwise import max as maximum
from functrans.primitives.reductions import argmax
from functrans.primitives.shape import expand_dims, reduce_sum
from functrans.primitives.linalg import dot_general_p
from functrans.primitives.shape import (broadcast_in_dim, moveaxis, shape_of, squeeze,
                                       transpose_axes)
from functrans.primitives.slicing import concatenate
from functrans.primitives.slicing import slice as slice_array

# -- helpers on stacks of matrices, in primitives ------------------------------------------


def _swap_last(x):
    """The matrix transpose of every member of the stack ``x``."""
    nd = len(shape_of(x))
    return transpose_axes(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _adjoint(x):
    return conj(_swap_last(x)) if get_aval(x).dtype.kind == "c" else _swap_last(x)


def _triangle_mask(x, lower: bool, k: int, like):
    """A 0/1 array of ``x``'s shape and dtype: the lower triangle at and below diagonal
    ``k`` (``lower``), or the upper one at and above diagonal ``k``, of every matrix.  It is
    made on the device of ``like``, a primal: a tangent being transposed has no device."""
    shape, dtype = shape_of(x), get_aval(x).dtype
    n, m = shape[-2], shape[-1]
    tri = backend.tri(n, m, k, dtype=dtype, like=like)
    if not lower:
        tri = 1 - backend.tri(n, m, k - 1, dtype=dtype, like=like)
    return broadcast_in_dim(tri, shape, (len(shape) - 2, len(shape) - 1))


def _triangle(x, lower: bool, k: int, like):
    return mul(x, _triangle_mask(x, lower, k, like))


def _matmul(a, b):
    """Batched matrix product of two stacks with equal batch shapes."""
    nd = len(shape_of(a))
    batch = tuple(range(nd - 2))
    return dot_general_p.bind(a, b, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)))


def _check_inexact(name: str, what: str, aval: ShapedArray) -> None:
    if aval.dtype.kind not in "fc":
        raise TypeError(f"{name}: {what} must be a floating or complex array, got dtype "
                        f"{aval.dtype}; convert it first (convert_element_type, or use "
                        "functrans.numpy.linalg, which promotes integers)")


def _check_square(name: str, what: str, aval: ShapedArray) -> None:
    # NumPy's LinAlgError, a ValueError: code written for numpy.linalg catches it.
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise np.linalg.LinAlgError(f"{name}: {what} must be a stack of square matrices of shape "
                         f"(..., n, n), got shape {aval.shape}")


# -- cholesky ------------------------------------------------------------------------------

cholesky_p = Primitive("cholesky", origin="library")


def _cholesky_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    # Read the lower triangle only, on every backend: the JVP below assumes it.  NumPy's
    # cholesky calls LAPACK's potrf on the lower triangle, which reads nothing else (a test
    # holds it to that); elsewhere the triangle is mirrored first.
    if xp is np:
        return np.linalg.cholesky(a)
    lower = xp.tril(a)
    hermitian = lower + xp.conj(xp.swapaxes(xp.tril(a, -1), -1, -2))
    return xp.linalg.cholesky(hermitian)


def _cholesky_abstract_eval(a):
    _check_inexact("cholesky", "the operand", a)
    _check_square("cholesky", "the operand", a)
    return ShapedArray(a.shape, a.dtype)


def _cholesky_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    L = cholesky_p.bind(a)
    if type(t) is ad.Zero:
        return L, ad.Zero.from_value(L)
    # The Hermitian tangent the impl sees: the lower triangle, mirrored.  Each mask is one
    # multiplication (the gradient's cost at n = 200 is partly these 0/1 products).
    if get_aval(t).dtype.kind == "c":
        dA = add(_triangle(t, True, 0, a), _adjoint(_triangle(t, True, -1, a)))
    else:  # T + Tᵀ with T the strict lower triangle and half the diagonal
        half = _half_diagonal_lower(t, a)
        dA = add(half, _swap_last(half))
    left = triangular_solve_p.bind(L, dA, **_SOLVE_L)            # L⁻¹ dA
    X = triangular_solve_p.bind(L, left, **_SOLVE_LH_RIGHT)      # L⁻¹ dA L⁻ᴴ
    return L, triangular_matmul_p.bind(L, _half_diagonal_lower(X, a), **_MATMUL_L)


def _half_diagonal_lower(x, like):
    """Φ(x): the strict lower triangle of each matrix of ``x`` and half its diagonal, by
    one multiplication with a mask made on the device of ``like``."""
    shape, dtype = shape_of(x), get_aval(x).dtype
    n, m = shape[-2], shape[-1]
    weights = (backend.tri(n, m, 0, dtype=dtype, like=like)
               - 0.5 * backend.eye(n, m, dtype=dtype, like=like))
    return mul(x, broadcast_in_dim(weights, shape, (len(shape) - 2, len(shape) - 1)))


def _diagonal_part(x, like):
    shape, dtype = shape_of(x), get_aval(x).dtype
    eye = backend.eye(shape[-2], shape[-1], dtype=dtype, like=like)
    return mul(x, broadcast_in_dim(eye, shape, (len(shape) - 2, len(shape) - 1)))


_MATMUL_L = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False)
_SOLVE_L = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
                unit_diagonal=False)
_SOLVE_LH_RIGHT = dict(left_side=False, lower=True, transpose_a=True, conjugate_a=True,
                       unit_diagonal=False)

impl_rules[cholesky_p] = _cholesky_impl
abstract_eval_rules[cholesky_p] = _cholesky_abstract_eval
ad.jvp_rules[cholesky_p] = _cholesky_jvp
batching.defleading_dims(cholesky_p, moveaxis)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor ``L`` of each Hermitian positive-definite matrix in ``x``
    (shape ``(..., n, n)``): ``x = L Lᴴ``.

    With ``symmetrize_input`` (the default, as JAX) ``x`` is replaced by ``(x + xᴴ) / 2``
    first, so the gradient with respect to ``x`` is Hermitian; without it only the lower
    triangle of ``x`` is read, and the gradient is lower triangular.  A matrix that is not
    positive definite raises NumPy's ``LinAlgError`` on concrete values.

    >>> import numpy as np
    >>> from functrans.lax_linalg import cholesky
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
    array([[2., 0.],
           [1., 2.]])
    """
    aval = get_aval(x)
    _check_inexact("cholesky", "x", aval)
    _check_square("cholesky", "x", aval)
    if symmetrize_input:
        x = mul(add(x, _adjoint(x)), 0.5)
    return cholesky_p.bind(x)


# -- triangular_solve ----------------------------------------------------------------------

triangular_solve_p = Primitive("triangular_solve", origin="library")


def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
    xp = array_module(a, b)
    a, b = coerce(xp, a, b)
    n = a.shape[-1]
    # LAPACK's trsm where there is one: one matrix, or a stack of ones too large for the
    # batched LU below to be faster than a loop.
    solve = (backend.triangular_solver(a, b) if (a.ndim == 2 or n > _BLOCK) and a.size
             and b.size else None)
    if solve is not None:
        return _solve_lapack(xp, solve, a, b, left_side, lower, transpose_a, conjugate_a,
                             unit_diagonal)
    m = xp.tril(a) if lower else xp.triu(a)
    if unit_diagonal:
        eye = xp.eye(a.shape[-1], dtype=bool)
        m = xp.where(eye, xp.ones((), dtype=a.dtype), m)
    if conjugate_a:
        m = xp.conj(m)
    if transpose_a:
        m = xp.swapaxes(m, -1, -2)
        lower = not lower
    if left_side:  # op(a) x = b
        return _solve_triangle(xp, m, b, lower)
    # x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ
    x = _solve_triangle(xp, xp.swapaxes(m, -1, -2), xp.swapaxes(b, -1, -2), not lower)
    return xp.swapaxes(x, -1, -2)


#: Below this size a triangle is solved as a general matrix (LAPACK's LU) when there is no
#: triangular solver (NumPy has none; SciPy is not a dependency), and a stack of triangles
#: is solved by one batched LU rather than a loop of triangular solves.
_BLOCK = 64


def _solve_lapack(xp, solve, a, b, left_side, lower, transpose_a, conjugate_a,
                  unit_diagonal):
    """The impl of ``triangular_solve`` by ``solve``, LAPACK's trsm (SciPy's signature),
    matrix by matrix; it reads only the triangle the primitive reads."""
    conjugate = conjugate_a and a.dtype.kind == "c"
    if not left_side:  # x op(a) = b  <=>  op(a)ᵀ xᵀ = bᵀ
        b = xp.swapaxes(b, -1, -2)
        transpose_a = not transpose_a
    if conjugate and not transpose_a:  # LAPACK conjugates only along with the transpose
        a, conjugate = xp.conj(a), False
    trans = (2 if conjugate else 1) if transpose_a else 0
    options = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal, check_finite=False)
    if a.ndim == 2:
        x = solve(a, b, **options)
    else:
        n, k = a.shape[-1], b.shape[-1]
        pairs = zip(a.reshape(-1, n, n), b.reshape(-1, n, k))
        x = xp.stack([solve(ai, bi, **options) for ai, bi in pairs]).reshape(b.shape)
    x = x.astype(b.dtype, copy=False)
    return x if left_side else xp.swapaxes(x, -1, -2)


def _solve_triangle(xp, m, b, lower: bool):
    """``m⁻¹ b`` for triangular ``m`` by blocks: two half-size solves and one matrix
    product, so that large solves cost ``n² k`` like a triangular solver, not an LU."""
    if not lower:  # reversing rows and columns makes an upper triangle lower
        return _solve_triangle(xp, m[..., ::-1, ::-1], b[..., ::-1, :], True)[..., ::-1, :]
    n = m.shape[-1]
    if n <= _BLOCK:
        return xp.linalg.solve(m, b)
    h = n // 2
    top = _solve_triangle(xp, m[..., :h, :h], b[..., :h, :], True)
    rest = b[..., h:, :] - xp.matmul(m[..., h:, :h], top)
    return xp.concatenate([top, _solve_triangle(xp, m[..., h:, h:], rest, True)], axis=-2)


def _check_matrix_and_operand(name: str, a: ShapedArray, b: ShapedArray, left_side: bool
                              ) -> None:
    """The type checks of a square matrix ``a`` acting on ``b`` from the left or right."""
    _check_inexact(name, "b", b)
    _check_square(name, "a", a)
    if a.dtype != b.dtype:
        raise TypeError(f"{name}: a and b must have the same dtype, got {a.dtype} and "
                        f"{b.dtype}; convert one of them")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
        raise ValueError(f"{name}: a (shape {a.shape}) and b (shape {b.shape}) must have the "
                         "same rank and the same leading (batch) dimensions")
    n = a.shape[-1]
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != n:
        where = "rows" if left_side else "columns"
        raise ValueError(f"{name}: with left_side={left_side} b must have {n} {where} "
                         f"(a has shape {a.shape}), got b of shape {b.shape}")


def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
    name = "triangular_solve"
    _check_inexact(name, "a", a)
    _check_matrix_and_operand(name, a, b, left_side)
    return ShapedArray(b.shape, b.dtype)


def _op(a, transpose_a: bool, conjugate_a: bool):
    if conjugate_a and get_aval(a).dtype.kind == "c":
        a = conj(a)
    return _swap_last(a) if transpose_a else a


def _triangular_solve_jvp_a(g, x, a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    # Only the triangle the impl reads moves: d op(a) = op(da restricted to it).
    dA = _op(_triangle(g, lower, (-1 if lower else 1) if unit_diagonal else 0, a),
             transpose_a, conjugate_a)
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    rhs = _matmul(dA, x) if left_side else _matmul(x, dA)
    return neg(triangular_solve_p.bind(a, rhs, **params))


def _triangular_solve_jvp_b(g, x, a, b, **params):
    return triangular_solve_p.bind(a, g, **params)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
    assert not is_undefined_primal(a), "triangular_solve is linear in b only"
    ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                   transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)
    return [None, ct_b]


def batch_matrix_and_operand(primitive):
    """The batching rule of a primitive of a stack of matrices and an operand with the same
    leading dimensions: batch axes to the front, an unbatched operand broadcast along the
    batch."""
    def rule(vals, dims, **params):
        size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
        out = []
        for v, d in zip(vals, dims):
            if d is not_mapped:
                shape = shape_of(v)
                v = broadcast_in_dim(v, (size,) + shape, tuple(range(1, len(shape) + 1)))
            elif d != 0:
                v = moveaxis(v, d, 0)
            out.append(v)
        return primitive.bind(*out, **params), 0
    return rule


impl_rules[triangular_solve_p] = _triangular_solve_impl
abstract_eval_rules[triangular_solve_p] = _triangular_solve_abstract_eval
ad.defjvp(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
transpose.deftranspose(triangular_solve_p, _triangular_solve_transpose)
batching.batching_rules[triangular_solve_p] = batch_matrix_and_operand(triangular_solve_p)


def triangular_solve(a, b, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for ``x``, where ``a`` is
    triangular (only its ``lower`` or upper triangle is read; its diagonal is taken to be
    ones if ``unit_diagonal``) and ``op`` transposes if ``transpose_a`` and conjugates if
    ``conjugate_a``.  ``a`` is ``(..., m, m)``; ``b`` is ``(..., m, n)`` for the left side,
    ``(..., n, m)`` for the right, with the same leading (batch) dimensions as ``a``.
    Linear in ``b``.  The defaults are JAX's.

    >>> import numpy as np
    >>> from functrans.lax_linalg import triangular_solve
    >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
    >>> triangular_solve(a, np.array([[2.0], [9.0]]), left_side=True, lower=True)
    array([[1.],
           [2.]])
    """
    params = dict(left_side=bool(left_side), lower=bool(lower),
                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                  unit_diagonal=bool(unit_diagonal))
    # Checked here too: on concrete values the impl runs without abstract evaluation.
    _triangular_solve_abstract_eval(get_aval(a), get_aval(b), **params)
    return triangular_solve_p.bind(a, b, **params)


# -- triangular_matmul ---------------------------------------------------------------------
# The product with a triangular matrix: BLAS's trmm does half the work of a general product
# (the reverse-mode rule of cholesky multiplies by Lᴴ).

triangular_matmul_p = Primitive("triangular_matmul", origin="library")


def _triangular_matmul_impl(a, b, *, left_side, lower, transpose_a, conjugate_a):
    xp = array_module(a, b)
    a, b = coerce(xp, a, b)
    n = a.shape[-1]
    # BLAS's trmm on one matrix, or matrix by matrix on a stack of large ones.
    multiply = (backend.triangular_multiplier(a, b) if (a.ndim == 2 or n > _BLOCK)
                and a.size and b.size else None)
    conjugate = conjugate_a and a.dtype.kind == "c"
    if multiply is not None:
        if conjugate and not transpose_a:  # BLAS conjugates only along with the transpose
            a, conjugate = xp.conj(a), False
        trans = (2 if conjugate else 1) if transpose_a else 0
        if a.ndim == 2:
            return multiply(a, b, left_side, lower, trans)
        pairs = zip(a.reshape(-1, n, n), b.reshape((-1,) + b.shape[-2:]))
        return xp.stack([multiply(ai, bi, left_side, lower, trans)
                         for ai, bi in pairs]).reshape(b.shape)
    m = xp.tril(a) if lower else xp.triu(a)
    if conjugate:
        m = xp.conj(m)
    if transpose_a:
        m = xp.swapaxes(m, -1, -2)
    return xp.matmul(m, b) if left_side else xp.matmul(b, m)


def _triangular_matmul_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a):
    name = "triangular_matmul"
    _check_inexact(name, "a", a)
    _check_matrix_and_operand(name, a, b, left_side)
    return ShapedArray(b.shape, b.dtype)


def _triangular_matmul_jvp_a(g, out, a, b, *, left_side, lower, transpose_a, conjugate_a):
    dA = _op(_triangle(g, lower, 0, a), transpose_a, conjugate_a)
    return _matmul(dA, b) if left_side else _matmul(b, dA)


def _triangular_matmul_jvp_b(g, out, a, b, **params):
    return triangular_matmul_p.bind(a, g, **params)


def _triangular_matmul_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a):
    assert not is_undefined_primal(a), "triangular_matmul is linear in b only"
    ct_b = triangular_matmul_p.bind(a, ct, left_side=left_side, lower=lower,
                                    transpose_a=not transpose_a, conjugate_a=conjugate_a)
    return [None, ct_b]


impl_rules[triangular_matmul_p] = _triangular_matmul_impl
abstract_eval_rules[triangular_matmul_p] = _triangular_matmul_abstract_eval
ad.defjvp(triangular_matmul_p, _triangular_matmul_jvp_a, _triangular_matmul_jvp_b)
transpose.deftranspose(triangular_matmul_p, _triangular_matmul_transpose)
batching.batching_rules[triangular_matmul_p] = batch_matrix_and_operand(triangular_matmul_p)


def triangular_matmul(a, b, left_side: bool = True, lower: bool = True,
                      transpose_a: bool = False, conjugate_a: bool = False):
    """``op(a) @ b`` (``left_side``) or ``b @ op(a)`` where only the ``lower`` (or upper)
    triangle of ``a`` is read and ``op`` transposes if ``transpose_a`` and conjugates if
    ``conjugate_a``; shapes as in ``triangular_solve``.  Linear in ``b``.  BLAS's ``trmm``
    (through SciPy, on NumPy arrays) does half the work of ``matmul``.

    >>> import numpy as np
    >>> from functrans.primitives.decompositions import triangular_matmul
    >>> a = np.array([[2.0, 9.0], [1.0, 4.0]])
    >>> triangular_matmul(a, np.array([[1.0], [2.0]]))
    array([[2.],
           [9.]])
    """
    params = dict(left_side=bool(left_side), lower=bool(lower),
                  transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a))
    _triangular_matmul_abstract_eval(get_aval(a), get_aval(b), **params)
    return triangular_matmul_p.bind(a, b, **params)


# -- lu ------------------------------------------------------------------------------------

lu_p = Primitive("lu", multiple_results=True, origin="library")


def _lu_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    shape, n = a.shape, a.shape[-1]
    flat = xp.array(a, copy=True).reshape(-1, n, n)
    count = flat.shape[0]
    members = xp.arange(count)
    permutation = xp.broadcast_to(xp.arange(n, dtype=np.int32), (count, n)).copy()
    pivots = xp.empty((count, n), dtype=np.int32)
    # Doolittle elimination with partial pivoting, all members of the batch at once.
    for j in range(n):
        p = xp.argmax(xp.abs(flat[:, j:, j]), axis=1) + j
        pivots[:, j] = p
        row = flat[:, j, :].copy()
        flat[:, j, :] = flat[members, p, :]
        flat[members, p, :] = row
        index = permutation[:, j].copy()
        permutation[:, j] = permutation[members, p]
        permutation[members, p] = index
        pivot = flat[:, j, j]
        # A zero pivot has only zeros below it: dividing them by one keeps them zero.
        flat[:, j + 1:, j] /= xp.where(pivot == 0, xp.ones((), dtype=flat.dtype), pivot)[:, None]
        flat[:, j + 1:, j + 1:] -= flat[:, j + 1:, j, None] * flat[:, j, None, j + 1:]
    batch = shape[:-2]
    return [flat.reshape(shape), pivots.reshape(batch + (n,)),
            permutation.reshape(batch + (n,))]


def _lu_abstract_eval(a):
    _check_inexact("lu", "the operand", a)
    _check_square("lu", "the operand", a)
    indices = ShapedArray(a.shape[:-1], np.int32)
    return [ShapedArray(a.shape, a.dtype), indices, indices]


def permutation_matrix(permutation, dtype, like):
    """The 0/1 matrices ``P`` with ``(P x)[i] = x[permutation[i]]``."""
    shape = shape_of(permutation)
    n = shape[-1]
    full = shape + (n,)
    columns = broadcast_in_dim(backend.arange(n, dtype=np.int32, like=like), full,
                               (len(full) - 1,))
    rows = broadcast_in_dim(permutation, full, tuple(range(len(shape))))
    return convert_element_type(eq(rows, columns), dtype)


def _lu_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    lu, pivots, permutation = lu_p.bind(a)
    zeros = [ad.Zero.from_value(pivots), ad.Zero.from_value(permutation)]
    if type(t) is ad.Zero:
        return [lu, pivots, permutation], [ad.Zero.from_value(lu)] + zeros
    dtype = get_aval(a).dtype
    permuted = _matmul(permutation_matrix(permutation, dtype, a), t)
    left = triangular_solve_p.bind(lu, permuted, left_side=True, lower=True,
                                   transpose_a=False, conjugate_a=False, unit_diagonal=True)
    X = triangular_solve_p.bind(lu, left, left_side=False, lower=False, transpose_a=False,
                                conjugate_a=False, unit_diagonal=False)
    L = add(_triangle(lu, True, -1, a), _diagonal_part(_triangle_mask(lu, True, 0, a), a))
    U = _triangle(lu, False, 0, a)
    d_lu = add(_matmul(L, _triangle(X, True, -1, a)), _matmul(_triangle(X, False, 0, a), U))
    return [lu, pivots, permutation], [d_lu] + zeros


impl_rules[lu_p] = _lu_impl
abstract_eval_rules[lu_p] = _lu_abstract_eval
ad.jvp_rules[lu_p] = _lu_jvp
batching.defleading_dims(lu_p, moveaxis)


def lu(x):
    """LU decomposition with partial pivoting of each square matrix in ``x`` (shape
    ``(..., n, n)``): ``(lu, pivots, permutation)`` with ``x[..., permutation, :] = L U``,
    where ``L`` is the unit lower triangle of ``lu`` and ``U`` its upper triangle;
    ``pivots[j]`` is the row swapped with row ``j`` at step ``j`` (int32, as JAX).  A
    singular matrix factors without error (a zero on ``U``'s diagonal).

    >>> import numpy as np
    >>> from functrans.lax_linalg import lu
    >>> packed, pivots, permutation = lu(np.array([[1.0, 2.0], [4.0, 4.0]]))
    >>> packed
    array([[4.  , 4.  ],
           [0.25, 1.  ]])
    >>> pivots, permutation
    (array([1, 1], dtype=int32), array([1, 0], dtype=int32))
    """
    _lu_abstract_eval(get_aval(x))
    return tuple(lu_p.bind(x))


# -- eigh ----------------------------------------------------------------------------------

eigh_p = Primitive("eigh", multiple_results=True, origin="library")


def _hermitian_from(xp, a, lower: bool):
    """The Hermitian matrix that has ``a``'s lower (or upper) triangle."""
    if lower:
        return xp.tril(a) + xp.conj(xp.swapaxes(xp.tril(a, -1), -1, -2))
    return xp.triu(a) + xp.conj(xp.swapaxes(xp.triu(a, 1), -1, -2))


def _eigh_impl(a, *, lower):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    # The triangle is made explicit: the JVP assumes exactly it is read, on every backend.
    w, v = xp.linalg.eigh(_hermitian_from(xp, a, lower))
    return [v, w]


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.empty((), dtype).real.dtype


def _eigh_abstract_eval(a, *, lower):
    _check_inexact("eigh", "the operand", a)
    _check_square("eigh", "the operand", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-1], _real_dtype(a.dtype))]


def _eigh_jvp(primals, tangents, *, lower):
    (a,), (t,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    if type(t) is ad.Zero:
        return [v, w], [ad.Zero.from_value(v), ad.Zero.from_value(w)]
    shape, dtype = shape_of(a), get_aval(a).dtype
    nd = len(shape)
    dA = add(_triangle(t, lower, 0, a), _adjoint(_triangle(t, lower, -1 if lower else 1, a)))
    m = _matmul(_matmul(_adjoint(v), dA), v)
    eye = _diagonal_part(_triangle_mask(a, True, 0, a), a)
    diag = reduce_sum(mul(m, eye), (nd - 1,))
    dw = real(diag) if dtype.kind == "c" else diag
    # F[i, j] = 1 / (w[j] - w[i]) off the diagonal; the eye keeps the diagonal finite.
    gaps = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))
    eye_real = convert_element_type(real(eye) if dtype.kind == "c" else eye, get_aval(w).dtype)
    f = sub(div(1, add(gaps, eye_real)), eye_real)
    dv = _matmul(v, mul(convert_element_type(f, dtype), m))
    return [v, w], [dv, dw]


impl_rules[eigh_p] = _eigh_impl
abstract_eval_rules[eigh_p] = _eigh_abstract_eval
ad.jvp_rules[eigh_p] = _eigh_jvp
batching.defleading_dims(eigh_p, moveaxis)


def _subset(name: str, x, subset_by_index, axes: tuple, size: int):
    """``x`` sliced to ``subset_by_index = (start, end)`` along each of ``axes`` (the
    entries of a decomposition a subset asks for)."""
    try:
        start, end = (int(i) for i in subset_by_index)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: subset_by_index must be a pair (start, end) of ints, got "
                        f"{subset_by_index!r}") from None
    if not 0 <= start <= end <= size:
        raise ValueError(f"{name}: subset_by_index {(start, end)} must satisfy 0 <= start <= "
                         f"end <= {size}")
    shape = get_aval(x).shape
    lo, hi = [0] * len(shape), list(shape)
    for axis in axes:
        lo[axis], hi[axis] = start, end
    return slice_array(x, lo, hi)


#: JAX's choices of algorithm and library (``implementation``, ``algorithm``,
#: ``use_magma``) pick among XLA kernels; the NumPy/CuPy (LAPACK, cuSOLVER) one here gives
#: the same decomposition, so they are accepted and change nothing.
_KERNEL_CHOICES = ("implementation", "algorithm", "use_magma")


def eigh(x, lower: bool = True, symmetrize_input: bool = True, *,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
    """Eigenvectors ``v`` and eigenvalues ``w`` (ascending, real) of each Hermitian matrix
    in ``x`` (shape ``(..., n, n)``): ``x = v diag(w) vᴴ``.  With ``symmetrize_input``
    (the default, as JAX) ``x`` is replaced by ``(x + xᴴ) / 2``; without it only its
    ``lower`` (or upper) triangle is read.  Eigenvalue derivatives are finite everywhere;
    eigenvector derivatives are not at repeated eigenvalues (as in JAX).

    >>> import numpy as np
    >>> from functrans.lax_linalg import eigh
    >>> v, w = eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    array([1., 3.])
    """
    del implementation, sort_eigenvalues  # see _KERNEL_CHOICES; always sorted (allowed)
    aval = get_aval(x)
    _eigh_abstract_eval(aval, lower=lower)
    if symmetrize_input:
        x = mul(add(x, _adjoint(x)), 0.5)
    v, w = eigh_p.bind(x, lower=bool(lower))
    if subset_by_index is None:
        return v, w
    n, nd = aval.shape[-1], aval.ndim
    return (_subset("eigh", v, subset_by_index, (nd - 1,), n),
            _subset("eigh", w, subset_by_index, (nd - 2,), n))


# -- qr ------------------------------------------------------------------------------------

qr_p = Primitive("qr", multiple_results=True, origin="library")


def _qr_impl(a, *, full_matrices):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    q, r = xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return [q, r]


def _qr_abstract_eval(a, *, full_matrices):
    _check_inexact("qr", "the operand", a)
    if a.ndim < 2:
        raise ValueError(f"qr: the operand must be a stack of matrices (..., m, n), got shape "
                         f"{a.shape}")
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), a.dtype), ShapedArray((*batch, k, n), a.dtype)]


def _qr_tangents(q, r, t, like):
    """``dq, dr`` of ``x = q r`` for ``m >= n`` (reduced) along ``t``."""
    dtype = get_aval(q).dtype
    t_rinv = triangular_solve_p.bind(r, t, left_side=False, lower=False, transpose_a=False,
                                     conjugate_a=False, unit_diagonal=False)   # dx R⁻¹
    c = _matmul(_adjoint(q), t_rinv)
    strict = _triangle(c, True, -1, like)
    omega = sub(strict, _adjoint(strict))
    if dtype.kind == "c":  # the diagonal's imaginary part: Ω is skew-Hermitian
        diagonal = _diagonal_part(c, like)
        omega = add(omega, sub(diagonal, convert_element_type(real(diagonal), dtype)))
    dq = add(_matmul(q, sub(omega, c)), t_rinv)
    dr = _matmul(sub(c, omega), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, full_matrices):
    (a,), (t,) = primals, tangents
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    if type(t) is ad.Zero:
        return [q, r], [ad.Zero.from_value(q), ad.Zero.from_value(r)]
    shape = shape_of(a)
    *batch, m, n = shape
    if full_matrices and m > n:
        raise NotImplementedError(
            f"qr: the derivative with full_matrices=True is implemented for m <= n only, as "
            f"in JAX (the extra columns of q are not unique); got an operand of shape "
            f"{shape}.  Pass full_matrices=False")
    if m >= n:
        return [q, r], list(_qr_tangents(q, r, t, r))
    # Wide: x = [x1 x2] with x1 square, q r1 = x1 and r2 = qᴴ x2.
    zeros, nd = (0,) * len(shape), len(shape)
    square, rest = (*batch, m, m), (*zeros[:-1], m)
    r1 = slice_array(r, zeros, square)
    dq, dr1 = _qr_tangents(q, r1, slice_array(t, zeros, square), r1)
    dr2 = add(_matmul(_adjoint(dq), slice_array(a, rest, shape)),
              _matmul(_adjoint(q), slice_array(t, rest, shape)))
    return [q, r], [dq, concatenate([dr1, dr2], nd - 1)]


impl_rules[qr_p] = _qr_impl
abstract_eval_rules[qr_p] = _qr_abstract_eval
ad.jvp_rules[qr_p] = _qr_jvp
batching.defleading_dims(qr_p, moveaxis)


def qr(x, full_matrices: bool = True, *, use_magma=None):
    """QR decomposition of each matrix in ``x`` (shape ``(..., m, n)``): ``x = q r`` with
    ``q`` having orthonormal columns and ``r`` upper triangular; ``q`` is ``m x m`` if
    ``full_matrices`` (JAX's default), else ``m x min(m, n)``.  Differentiable for every
    shape except ``m > n`` with ``full_matrices`` (as in JAX).  The signs of ``r``'s
    diagonal are LAPACK's (not made positive).

    >>> import numpy as np
    >>> from functrans.lax_linalg import qr
    >>> q, r = qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> np.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]]), np.allclose(q.T @ q, np.eye(2))
    (True, True)
    """
    del use_magma  # see _KERNEL_CHOICES
    _qr_abstract_eval(get_aval(x), full_matrices=full_matrices)
    return tuple(qr_p.bind(x, full_matrices=bool(full_matrices)))


# -- svd -----------------------------------------------------------------------------------

svd_p = Primitive("svd", multiple_results=True, origin="library")


def _svd_impl(a, *, full_matrices, compute_uv):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    if not compute_uv:
        return [xp.linalg.svd(a, compute_uv=False)]
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    return [s, u, vh]


def _svd_abstract_eval(a, *, full_matrices, compute_uv):
    _check_inexact("svd", "the operand", a)
    if a.ndim < 2:
        raise ValueError(f"svd: the operand must be a stack of matrices (..., m, n), got shape "
                         f"{a.shape}")
    *batch, m, n = a.shape
    k = min(m, n)
    s = ShapedArray((*batch, k), _real_dtype(a.dtype))
    if not compute_uv:
        return [s]
    cols, rows = (m, n) if full_matrices else (k, k)
    return [s, ShapedArray((*batch, m, cols), a.dtype), ShapedArray((*batch, rows, n), a.dtype)]


def _off_diagonal_inverse(x, eye):
    """``1 / x`` off the diagonal and 0 on it (``eye`` is the identity stack)."""
    return sub(div(1, add(x, eye)), eye)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    (a,), (t,) = primals, tangents
    if type(t) is ad.Zero:
        outs = svd_p.bind(a, full_matrices=full_matrices, compute_uv=compute_uv)
        return outs, [ad.Zero.from_value(o) for o in outs]
    shape, dtype = shape_of(a), get_aval(a).dtype
    *_, m, n = shape
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"svd: the derivative of u and vh with full_matrices=True is implemented for "
            f"square matrices only, as in JAX (the extra columns of a non-square matrix's "
            f"factors are not unique); got an operand of shape {shape}.  Pass "
            f"full_matrices=False, or compute_uv=False for the singular values")
    s, u, vh = svd_p.bind(a, full_matrices=False, compute_uv=True)
    outs = [s, u, vh] if compute_uv else [s]
    nd = len(shape)
    complex_ = dtype.kind == "c"
    v = _adjoint(vh)
    ds_mat = _matmul(_matmul(_adjoint(u), t), v)                     # uᴴ da v, k x k
    eye = _diagonal_part(_triangle_mask(ds_mat, True, 0, a), a)
    diag = reduce_sum(mul(real(ds_mat) if complex_ else ds_mat, real(eye) if complex_ else eye),
                      (nd - 1,))
    if not compute_uv:
        return outs, [diag]
    real_eye = convert_element_type(real(eye) if complex_ else eye, get_aval(s).dtype)
    row = expand_dims(s, (nd - 2,))                                  # s[j] at [i, j]
    column = expand_dims(s, (nd - 1,))                               # s[i] at [i, j]
    # F[i, j] = 1 / (s[j]² - s[i]²) off the diagonal: inf at repeated values, as in JAX.
    f = convert_element_type(_off_diagonal_inverse(mul(add(row, column), sub(row, column)),
                                                   real_eye), dtype)
    ds_s = mul(ds_mat, convert_element_type(row, dtype))             # dS diag(s)
    s_ds = mul(ds_mat, convert_element_type(column, dtype))          # diag(s) dS
    # The gauge: the imaginary part of diag(uᴴ du) is Im diag(dS) / s, 0 where s = 0.
    zero = convert_element_type(eq(s, 0), get_aval(s).dtype)
    s_inv = sub(div(1, add(s, zero)), zero)
    gauge = mul(mul(0.5, sub(ds_mat, _adjoint(ds_mat))),
                mul(eye, convert_element_type(expand_dims(s_inv, (nd - 2,)), dtype)))
    du = _matmul(u, add(mul(f, add(ds_s, _adjoint(ds_s))), gauge))
    dv = _matmul(v, mul(f, add(s_ds, _adjoint(s_ds))))
    s_row = convert_element_type(row, dtype)
    if m > n:  # the part of da v outside u's column space
        t_v = _matmul(t, v)
        du = add(du, div(sub(t_v, _matmul(u, _matmul(_adjoint(u), t_v))), s_row))
    if n > m:
        t_u = _matmul(_adjoint(t), u)
        dv = add(dv, div(sub(t_u, _matmul(v, _matmul(vh, t_u))), s_row))
    return outs, [diag, du, _adjoint(dv)]


impl_rules[svd_p] = _svd_impl
abstract_eval_rules[svd_p] = _svd_abstract_eval
ad.jvp_rules[svd_p] = _svd_jvp
batching.defleading_dims(svd_p, moveaxis)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
    """Singular value decomposition of each matrix in ``x`` (shape ``(..., m, n)``):
    ``x = u diag(s) vh`` with ``s`` real, non-negative and descending.  Returns
    ``(u, s, vh)``, or ``s`` alone if not ``compute_uv``.  ``u`` is ``m x m`` and ``vh``
    is ``n x n`` if ``full_matrices`` (JAX's default), else ``m x k`` and ``k x n``
    (``k = min(m, n)``).

    ``s`` is differentiable everywhere (its derivative is finite at repeated singular
    values).  ``u`` and ``vh`` are differentiable where the singular values are distinct and
    non-zero, as in JAX: at repeated values their derivatives are inf or nan, and with
    ``full_matrices`` the derivative exists for square ``x`` only.

    >>> import numpy as np
    >>> from functrans.lax_linalg import svd
    >>> svd(np.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
    array([4., 3.])
    """
    del algorithm  # see _KERNEL_CHOICES
    aval = get_aval(x)
    _svd_abstract_eval(aval, full_matrices=full_matrices, compute_uv=compute_uv)
    if subset_by_index is not None and full_matrices and compute_uv:
        raise ValueError("svd: subset_by_index needs full_matrices=False (as JAX)")
    params = dict(full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    k, nd = min(aval.shape[-2:]), aval.ndim
    if not compute_uv:
        s = svd_p.bind(x, **params)[0]
        return s if subset_by_index is None else _subset("svd", s, subset_by_index,
                                                          (nd - 2,), k)
    s, u, vh = svd_p.bind(x, **params)
    if subset_by_index is not None:
        s = _subset("svd", s, subset_by_index, (nd - 2,), k)
        u = _subset("svd", u, subset_by_index, (nd - 1,), k)
        vh = _subset("svd", vh, subset_by_index, (nd - 2,), k)
    return u, s, vh


# -- eig -----------------------------------------------------------------------------------

eig_p = Primitive("eig", multiple_results=True, origin="library")


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _lapack_normalized(xp, v):
    """The columns of ``v`` scaled as LAPACK's ``geev`` scales eigenvectors: unit norm, and
    the component of largest modulus (the first such) real and positive."""
    v = v / xp.linalg.norm(v, axis=-2, keepdims=True)
    k = xp.argmax(xp.abs(v), axis=-2)[..., None, :]
    top = xp.take_along_axis(v, k, axis=-2)
    v = v * (xp.conj(top) / xp.abs(top))
    return v


def _eig_impl(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    dtype = _complex_dtype(a.dtype)
    if not hasattr(xp.linalg, "eig"):
        raise NotImplementedError(f"eig: {xp.__name__}.linalg has no eig (the general "
                                  "eigendecomposition); move the matrix to NumPy first")
    # NumPy returns real arrays when every eigenvalue is real; eig_p's outputs are complex.
    w, vr = xp.linalg.eig(a)
    w, vr = w.astype(dtype), vr.astype(dtype)
    out = [w]
    if compute_left_eigenvectors:
        # NumPy has no left eigenvectors: the rows of vr⁻¹ are they, up to scale.
        out.append(_lapack_normalized(xp, xp.conj(xp.swapaxes(xp.linalg.inv(vr), -1, -2))))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def _eig_abstract_eval(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs):
    _check_inexact("eig", "the operand", a)
    _check_square("eig", "the operand", a)
    dtype = _complex_dtype(a.dtype)
    vectors = [ShapedArray(a.shape, dtype)] * (int(compute_left_eigenvectors)
                                               + int(compute_right_eigenvectors))
    return [ShapedArray(a.shape[:-1], dtype)] + vectors


def _general_solve(a, b):
    """``a⁻¹ b`` for general square ``a`` (equal batch shapes), by LU with pivoting."""
    packed, _, permutation = lu_p.bind(a)
    permuted = _matmul(permutation_matrix(permutation, get_aval(a).dtype, a), b)
    y = triangular_solve_p.bind(packed, permuted, left_side=True, lower=True,
                                transpose_a=False, conjugate_a=False, unit_diagonal=True)
    return triangular_solve_p.bind(packed, y, left_side=True, lower=False, transpose_a=False,
                                   conjugate_a=False, unit_diagonal=False)


def _eigenvector_jvp(w, v, da, like):
    """The tangents of eigenvalues ``w`` and of eigenvectors ``v`` (columns, normalized as
    LAPACK's) of a matrix moving along ``da``.  With ``P = v⁻¹ da v``, ``dw = diag(P)``
    and ``dv = v (F ∘ P) + v diag(c)``, ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal;
    ``c`` keeps each column's norm 1 (its real part) and its largest component real (its
    imaginary part)."""
    shape = shape_of(v)
    nd, n = len(shape), shape[-1]
    p = _general_solve(v, _matmul(da, v))
    eye = _diagonal_part(_triangle_mask(p, True, 0, like), like)
    dw = reduce_sum(mul(p, eye), (nd - 1,))
    f = _off_diagonal_inverse(sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,))), eye)
    du = _matmul(v, mul(f, p))
    k = argmax(abs(v), nd - 2, np.int32)
    rows = broadcast_in_dim(backend.arange(n, dtype=np.int32, like=like), shape, (nd - 2,))
    mask = convert_element_type(eq(rows, expand_dims(k, (nd - 2,))), get_aval(v).dtype)
    top_du = reduce_sum(mul(mask, du), (nd - 2,))
    top_v = real(reduce_sum(mul(mask, v), (nd - 2,)))
    c = complex(neg(real(reduce_sum(mul(conj(v), du), (nd - 2,)))),
                neg(div(imag(top_du), top_v)))
    return dw, add(du, mul(v, expand_dims(c, (nd - 2,))))


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    (a,), (t,) = primals, tangents
    params = dict(compute_left_eigenvectors=compute_left_eigenvectors,
                  compute_right_eigenvectors=compute_right_eigenvectors,
                  enable_eigvec_derivs=enable_eigvec_derivs)
    if type(t) is ad.Zero:
        outs = eig_p.bind(a, **params)
        return outs, [ad.Zero.from_value(o) for o in outs]
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "eig: derivatives of eigenvectors hold only where the eigenvalues are distinct "
            "(and each eigenvector's largest component is unique), which functrans cannot "
            "check; pass enable_eigvec_derivs=True to lax.linalg.eig to opt in (as in JAX), "
            "or differentiate the eigenvalues alone (compute_left_eigenvectors=False, "
            "compute_right_eigenvectors=False; numpy.linalg.eigvals)")
    # Opted in: higher derivatives of the eigenvalues differentiate these vectors.
    outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                      compute_right_eigenvectors=True, enable_eigvec_derivs=True)
    w, vr = outs[0], outs[-1]
    primal_out = outs if compute_right_eigenvectors else outs[:-1]
    da = convert_element_type(t, get_aval(w).dtype)
    if not vectors:  # dw = diag(vr⁻¹ da vr)
        p = _matmul(_general_solve(vr, da), vr)
        nd = len(shape_of(p))
        return primal_out, [reduce_sum(mul(p, _diagonal_part(_triangle_mask(p, True, 0, a), a)),
                                       (nd - 1,))]
    dw, dvr = _eigenvector_jvp(w, vr, da, a)
    tangent_out = [dw]
    if compute_left_eigenvectors:  # vl: the right eigenvectors of aᴴ, eigenvalues conj(w)
        tangent_out.append(_eigenvector_jvp(conj(w), outs[1], _adjoint(da), a)[1])
    if compute_right_eigenvectors:
        tangent_out.append(dvr)
    return primal_out, tangent_out


impl_rules[eig_p] = _eig_impl
abstract_eval_rules[eig_p] = _eig_abstract_eval
ad.jvp_rules[eig_p] = _eig_jvp
batching.defleading_dims(eig_p, moveaxis)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation=None, use_magma=None):
    """Eigenvalues ``w`` and eigenvectors of each square matrix in ``x`` (shape
    ``(..., n, n)``), all complex: ``[w, vl, vr]`` (as JAX), less the eigenvectors not asked
    for, with ``x vr = vr diag(w)`` and ``vlᴴ x = diag(w) vlᴴ``.  The order of the
    eigenvalues is LAPACK's (NumPy's); each eigenvector has unit norm and its component of
    largest modulus real, as LAPACK's ``geev`` makes them (``vl`` is computed from
    ``vr⁻¹``, its largest component made real and positive).

    Eigenvalue derivatives hold where the eigenvalues are distinct.  Eigenvector
    derivatives raise ``NotImplementedError`` unless ``enable_eigvec_derivs`` (as in JAX):
    they also need the largest component of each eigenvector to be unique.

    >>> import numpy as np
    >>> from functrans.lax_linalg import eig
    >>> w, vr = eig(np.array([[0.0, 1.0], [-1.0, 0.0]]), compute_left_eigenvectors=False)
    >>> w
    array([0.+1.j, 0.-1.j])
    """
    del implementation, use_magma  # see _KERNEL_CHOICES
    params = dict(compute_left_eigenvectors=bool(compute_left_eigenvectors),
                  compute_right_eigenvectors=bool(compute_right_eigenvectors),
                  enable_eigvec_derivs=bool(enable_eigvec_derivs))
    _eig_abstract_eval(get_aval(x), **params)
    return list(eig_p.bind(x, **params))


# -- schur, hessenberg, sylvester: SciPy's LAPACK drivers on the host ---------------------
# NumPy has no Schur or Hessenberg decomposition and no Sylvester solver: their impls call
# SciPy's (``backend.linalg_kernel``), matrix by matrix.  CuPy has none of the three, so
# device arrays are refused with an error that names the function, never copied to the
# host behind the caller's back (JAX's Schur decomposition is CPU-only too).


def matrix_by_matrix(kernel, *stacks):
    """``kernel`` on each batch member of ``stacks`` (equal leading axes): a list of the
    stacked results (``kernel`` returns one array or a tuple of them)."""
    xp = array_module(*stacks)
    batch = stacks[0].shape[:-2]
    flat = [s.reshape((-1,) + s.shape[-2:]) for s in stacks]
    outs = [kernel(*members) for members in zip(*flat)]
    outs = [o if isinstance(o, tuple) else (o,) for o in outs]
    return [xp.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*outs)]


def _no_derivative(prim: Primitive, name: str, why: str):
    """A JVP rule that raises ``NotImplementedError`` naming the functions ``name`` (a
    bare name is ``functrans.scipy.linalg``'s) and saying ``why``, unless every tangent is
    zero."""
    if "." not in name:
        name = f"functrans.scipy.linalg.{name}"

    def jvp(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        if all(type(t) is ad.Zero for t in tangents):
            return outs, [ad.Zero.from_value(o) for o in outs]
        raise NotImplementedError(f"{name}: {why}")
    return jvp


schur_p = Primitive("schur", multiple_results=True, origin="library")


def _schur_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    kernel = backend.linalg_kernel("schur", a, what="functrans.scipy.linalg.schur")
    if not a.size:
        return [xp.zeros_like(a), xp.zeros_like(a)]
    output = "complex" if a.dtype.kind == "c" else "real"
    t, z = matrix_by_matrix(lambda m: tuple(kernel(m, output=output, check_finite=False)), a)
    return [t.astype(a.dtype, copy=False), z.astype(a.dtype, copy=False)]


def _schur_abstract_eval(a):
    _check_inexact("schur", "the operand", a)
    _check_square("schur", "the operand", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape, a.dtype)]


_SCHUR_NO_DERIVATIVE = (
    "the Schur decomposition has no derivative: its vectors are unique only up to each "
    "column's phase (sign), which LAPACK fixes by no rule a derivative could follow, and "
    "so are the entries of T above the diagonal (JAX has no derivative either).  Functions "
    "of the matrix that do not depend on that choice have rules of their own (sqrtm, "
    "solve_sylvester, expm); funm has none")

impl_rules[schur_p] = _schur_impl
abstract_eval_rules[schur_p] = _schur_abstract_eval
ad.jvp_rules[schur_p] = _no_derivative(schur_p, "schur", _SCHUR_NO_DERIVATIVE + (
    " (functrans.lax.linalg.schur computes the same decomposition)"))
batching.defleading_dims(schur_p, moveaxis)


def schur(x):
    """The Schur decomposition ``(t, z)`` of each square matrix in ``x`` (``(..., n,
    n)``): ``x = z t zᴴ`` with ``z`` unitary and ``t`` upper triangular (complex ``x``) or
    quasi-upper triangular with 2 x 2 blocks for complex conjugate eigenvalue pairs (real
    ``x``), as LAPACK's ``gees`` (through SciPy) computes it.  Not differentiable.

    >>> import numpy as np
    >>> from functrans.primitives.decompositions import schur
    >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> t
    array([[1., 2.],
           [0., 3.]])
    """
    _schur_abstract_eval(get_aval(x))
    return tuple(schur_p.bind(x))


# -- hessenberg ----------------------------------------------------------------------------

hessenberg_p = Primitive("hessenberg", multiple_results=True, origin="library")


def _hessenberg_two(xp, a):
    """LAPACK's ``gehrd`` on 2 x 2 complex matrices, which SciPy does not call: one
    reflector of size 1 makes ``h[1, 0]`` real, ``-sign(Re α) |α|`` (``zlarfg``), unless
    it is real already."""
    alpha = a[..., 1, 0]
    beta = -xp.copysign(xp.ones_like(alpha.real), alpha.real) * xp.abs(alpha)
    real = alpha.imag == 0
    g = xp.where(real, 1, beta / xp.where(real, 1, xp.conj(alpha))).astype(a.dtype)
    q = xp.zeros_like(a)
    q[..., 0, 0] = 1
    q[..., 1, 1] = g
    h = a.copy()
    h[..., 1, 0] = xp.where(real, alpha, beta)
    h[..., 0, 1] = a[..., 0, 1] * g
    return h, q


def _hessenberg_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    kernel = backend.linalg_kernel("hessenberg", a, what="functrans.scipy.linalg.hessenberg")
    n = a.shape[-1]
    if not a.size:
        return [xp.zeros_like(a), xp.zeros_like(a)]
    if n <= 2:  # SciPy returns (a, eye) here; LAPACK (and JAX) make h[1, 0] real
        if a.dtype.kind == "c" and n == 2:
            return list(_hessenberg_two(xp, a))
        return [a.copy(), xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape).copy()]
    h, q = matrix_by_matrix(
        lambda m: tuple(kernel(m, calc_q=True, check_finite=False)), a)
    return [h.astype(a.dtype, copy=False), q.astype(a.dtype, copy=False)]


def _hessenberg_abstract_eval(a):
    _check_inexact("hessenberg", "the operand", a)
    _check_square("hessenberg", "the operand", a)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape, a.dtype)]


def _column(x, j: int):
    """``x[..., :, j]`` of a stack of matrices."""
    shape = shape_of(x)
    nd = len(shape)
    return squeeze(slice_array(x, (0,) * (nd - 1) + (j,), shape[:-1] + (j + 1,)), (nd - 1,))


def _entry(x, i: int, j: int):
    """``x[..., i, j]`` of a stack of matrices."""
    shape = shape_of(x)
    nd = len(shape)
    part = slice_array(x, (0,) * (nd - 2) + (i, j), shape[:-2] + (i + 1, j + 1))
    return squeeze(part, (nd - 2, nd - 1))


def _matvec(x, v):
    """``x @ v`` for a stack of matrices ``(..., n, k)`` and of vectors ``(..., k)``."""
    nd = len(shape_of(x))
    batch = tuple(range(nd - 2))
    return dot_general_p.bind(x, v, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)))


def _columns_to_matrix(columns):
    """The stack of matrices with the given columns (each ``(..., n)``)."""
    nd = len(shape_of(columns[0]))
    return concatenate([expand_dims(c, (nd,)) for c in columns], nd)


def _hessenberg_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    h, q = hessenberg_p.bind(a)
    if type(t) is ad.Zero:
        return [h, q], [ad.Zero.from_value(h), ad.Zero.from_value(q)]
    shape, dtype = shape_of(a), get_aval(a).dtype
    nd, n = len(shape), shape[-1]
    complex_ = dtype.kind == "c"
    m = _matmul(_matmul(_adjoint(q), t), q)                          # Qᴴ dA Q
    # Ω = Qᴴ dQ is skew-Hermitian with Ω e₀ = 0 (q e₀ = e₀), and dH = M + H Ω - Ω H is
    # Hessenberg with a real subdiagonal (LAPACK's reflectors make every h[j + 1, j] real).
    # Column j of that equation gives column j + 1 of Ω: below the diagonal from the zeros
    # of dH, on it from the realness (nothing for real matrices), above it from the skew
    # symmetry.  A zero on h's subdiagonal (a reduced matrix) has no derivative (inf, nan).
    vector = shape[:-1]
    index = broadcast_in_dim(backend.arange(n, dtype=np.int32, like=a), vector, (nd - 2,))
    columns = [backend.zeros(vector, dtype, like=a)]
    for j in range(n - 1):
        known = _columns_to_matrix(columns)                          # Ω[:, :j + 1]
        h_top = slice_array(_column(h, j), (0,) * (nd - 1), vector[:-1] + (j + 1,))
        v = sub(add(_column(m, j), _matvec(h, columns[j])), _matvec(known, h_top))
        pivot = expand_dims(_entry(h, j + 1, j), (nd - 2,))           # h[j + 1, j]
        column = mul(div(v, pivot), convert_element_type(gt(index, j + 1), dtype))
        if complex_:  # i Im(v[j + 1]) / h[j + 1, j] on the diagonal
            column = add(column, mul(div(mul(sub(v, conj(v)), 0.5), pivot),
                                     convert_element_type(eq(index, j + 1), dtype)))
        if j:  # Ω[i, j + 1] = -conj(Ω[j + 1, i]) for i <= j (Ω[0, j + 1] = 0)
            row = squeeze(slice_array(known, (0,) * (nd - 2) + (j + 1, 0),
                                      vector[:-1] + (j + 2, j + 1)), (nd - 2,))
            row = neg(conj(row) if complex_ else row)
            rest = backend.zeros(vector[:-1] + (n - j - 1,), dtype, like=a)
            column = add(column, concatenate([row, rest], nd - 2))
        columns.append(column)
    omega = _columns_to_matrix(columns)
    dh = _triangle(sub(add(m, _matmul(h, omega)), _matmul(omega, h)), False, -1, a)
    return [h, q], [dh, _matmul(q, omega)]


impl_rules[hessenberg_p] = _hessenberg_impl
abstract_eval_rules[hessenberg_p] = _hessenberg_abstract_eval
ad.jvp_rules[hessenberg_p] = _hessenberg_jvp
batching.defleading_dims(hessenberg_p, moveaxis)


def hessenberg(x):
    """The Hessenberg form ``(h, q)`` of each square matrix in ``x`` (``(..., n, n)``):
    ``x = q h qᴴ`` with ``q`` unitary, ``q[:, 0] = e₀``, and ``h`` zero below its first
    subdiagonal, which is real (LAPACK's ``gehrd`` reflectors, through SciPy).
    Differentiable where that subdiagonal has no zero.

    >>> import numpy as np
    >>> from functrans.primitives.decompositions import hessenberg
    >>> h, q = hessenberg(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 0.0, 1.0]]))
    >>> np.allclose(q @ h @ q.T, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 0.0, 1.0]])
    True
    """
    _hessenberg_abstract_eval(get_aval(x))
    return tuple(hessenberg_p.bind(x))


# -- sylvester -----------------------------------------------------------------------------
# x with a x + x b = c: linear in c, so d x = sylvester(a, b, dc - da x - x db), and its
# transpose in c (the linear one, no conjugation) solves aᵀ y + y bᵀ = ct.

sylvester_p = Primitive("sylvester", origin="library")


def _sylvester_impl(a, b, c, *, tol):
    xp = array_module(a, b, c)
    a, b, c = coerce(xp, a, b, c)
    kernel = backend.linalg_kernel("solve_sylvester", a, b, c,
                                   what="functrans.scipy.linalg.solve_sylvester")
    if not c.size:
        return xp.zeros_like(c)
    (x,) = matrix_by_matrix(kernel, a, b, c)
    x = x.astype(c.dtype, copy=False)
    if tol > 0:  # JAX's rule: NaN where some λ(a) + μ(b) is within tol of zero
        sums = xp.linalg.eigvals(a)[..., :, None] + xp.linalg.eigvals(b)[..., None, :]
        close = (xp.abs(sums) < tol).any(axis=(-2, -1))
        x = xp.where(close[..., None, None], xp.asarray(np.nan, dtype=x.dtype), x)
    return x


def _sylvester_abstract_eval(a, b, c, *, tol):
    for what, aval in (("a", a), ("b", b), ("c", c)):
        _check_inexact("sylvester", what, aval)
    _check_square("sylvester", "a", a)
    _check_square("sylvester", "b", b)
    if not a.dtype == b.dtype == c.dtype:
        raise TypeError(f"sylvester: a, b and c must have one dtype, got {a.dtype}, "
                        f"{b.dtype} and {c.dtype}; convert them first")
    m, n = a.shape[-1], b.shape[-1]
    if c.ndim != a.ndim or c.shape[-2:] != (m, n) or not (
            a.shape[:-2] == b.shape[:-2] == c.shape[:-2] and b.ndim == a.ndim):
        raise ValueError(f"sylvester: a (..., m, m), b (..., n, n) and c (..., m, n) must "
                         f"have the same leading (batch) axes, got shapes {a.shape}, "
                         f"{b.shape} and {c.shape}")
    return ShapedArray(c.shape, c.dtype)


def _sylvester_jvp_a(g, x, a, b, c, *, tol):
    return neg(sylvester_p.bind(a, b, _matmul(g, x), tol=tol))


def _sylvester_jvp_b(g, x, a, b, c, *, tol):
    return neg(sylvester_p.bind(a, b, _matmul(x, g), tol=tol))


def _sylvester_jvp_c(g, x, a, b, c, *, tol):
    return sylvester_p.bind(a, b, g, tol=tol)


def _sylvester_transpose(ct, a, b, c, *, tol):
    assert not (is_undefined_primal(a) or is_undefined_primal(b)), (
        "sylvester is linear in c only")
    return [None, None, sylvester_p.bind(_swap_last(a), _swap_last(b), ct, tol=tol)]


impl_rules[sylvester_p] = _sylvester_impl
abstract_eval_rules[sylvester_p] = _sylvester_abstract_eval
ad.defjvp(sylvester_p, _sylvester_jvp_a, _sylvester_jvp_b, _sylvester_jvp_c)
transpose.deftranspose(sylvester_p, _sylvester_transpose)
batching.batching_rules[sylvester_p] = batch_matrix_and_operand(sylvester_p)


def sylvester(a, b, c, *, tol: float = 0.0):
    """The solution ``x`` of ``a x + x b = c`` for each member of the stacks ``a`` (``(...,
    m, m)``), ``b`` (``(..., n, n)``) and ``c`` (``(..., m, n)``), of one dtype and equal
    leading axes (Bartels and Stewart's method, SciPy's ``solve_sylvester``).  NaN for the
    members where some eigenvalue sum ``λ(a) + μ(b)`` is within ``tol`` of zero (JAX's
    rule; 0, the default, never).  Linear in ``c``; differentiable in all three.

    >>> import numpy as np
    >>> from functrans.primitives.decompositions import sylvester
    >>> sylvester(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[3.0]]), np.array([[4.0], [5.0]]))
    array([[1.],
           [1.]])
    """
    tol = _static_tol(tol)
    _sylvester_abstract_eval(get_aval(a), get_aval(b), get_aval(c), tol=tol)
    return sylvester_p.bind(a, b, c, tol=tol)


def _static_tol(tol) -> float:
    try:
        return float(tol)
    except (TypeError, ValueError):
        raise TypeError(f"solve_sylvester: tol must be a static number (it decides which "
                        f"answers are NaN), got {tol!r}") from None


# -- tridiagonal_solve ---------------------------------------------------------------------
# x with A x = b for the tridiagonal A with subdiagonal dl (dl[i] = A[i, i - 1], dl[0]
# unread), diagonal d and superdiagonal du (du[i] = A[i, i + 1], du[-1] unread).  Linear in
# b; in the diagonals d x = -A⁻¹ (dA x), where (dA x)[i] = ddl[i] x[i - 1] + dd[i] x[i] +
# ddu[i] x[i + 1].  Its transpose in b solves with Aᵀ: subdiagonal [0, du[:-1]] and
# superdiagonal [dl[1:], 0].

tridiagonal_solve_p = Primitive("tridiagonal_solve", origin="library")


def _gtsv(xp, dl, d, du, b, perturb_singular: bool):
    """LAPACK's ``gtsv`` (Gaussian elimination with partial pivoting, rows swapped where
    the subdiagonal entry is the larger), vectorized over the batch and the columns of
    ``b``: one Python step per row."""
    m = d.shape[-1]
    lower = xp.moveaxis(dl, -1, 0)
    diag = xp.moveaxis(d, -1, 0).copy()
    upper = xp.moveaxis(du, -1, 0).copy()
    rhs = xp.moveaxis(b, -2, 0).copy()
    second = xp.zeros_like(diag)                 # the second superdiagonal rows swaps make
    one = xp.ones((), dtype=d.dtype)
    for i in range(m - 1):
        below = lower[i + 1]
        swap = xp.abs(diag[i]) < xp.abs(below)
        fact = xp.where(swap, diag[i] / xp.where(swap, below, one),
                        below / xp.where(swap, one, diag[i]))
        kept_diag, kept_rhs = diag[i].copy(), rhs[i].copy()
        next_diag, next_upper = diag[i + 1].copy(), upper[i + 1].copy()
        f, s = fact[..., None], swap[..., None]
        diag[i] = xp.where(swap, below, kept_diag)
        diag[i + 1] = xp.where(swap, upper[i] - fact * next_diag, next_diag - fact * upper[i])
        rhs[i] = xp.where(s, rhs[i + 1], kept_rhs)
        rhs[i + 1] = xp.where(s, kept_rhs - f * rhs[i + 1], rhs[i + 1] - f * kept_rhs)
        if i < m - 2:
            second[i] = xp.where(swap, next_upper, 0)
            upper[i + 1] = xp.where(swap, -fact * next_upper, next_upper)
        upper[i] = xp.where(swap, next_diag, upper[i])
    if perturb_singular:  # tiny pivots moved to eps max|U| (keeping their sign), as dlagts
        scale = xp.abs(xp.concatenate([diag, upper[:-1], second])).max(axis=0)
        tol = np.finfo(diag.dtype).eps * xp.where(scale == 0, 1, scale)
        small = xp.abs(diag) < tol
        sign = xp.where(diag.real < 0, -1, 1) if diag.dtype.kind == "f" else xp.where(
            diag == 0, 1, diag / xp.where(diag == 0, 1, xp.abs(diag)))
        diag = xp.where(small, sign * tol, diag)
    singular = (diag == 0).any(axis=0)          # gtsv's info > 0: JAX answers nan
    x = xp.empty_like(rhs)
    for i in range(m - 1, -1, -1):
        acc = rhs[i]
        if i + 1 < m:
            acc = acc - upper[i][..., None] * x[i + 1]
        if i + 2 < m:
            acc = acc - second[i][..., None] * x[i + 2]
        x[i] = acc / diag[i][..., None]
    x = xp.where(singular[..., None], np.nan, x)
    return xp.moveaxis(x, 0, -2)


def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
    xp = array_module(dl, d, du, b)
    dl, d, du, b = coerce(xp, dl, d, du, b)
    if not b.size:
        return xp.zeros_like(b)
    with np.errstate(divide="ignore", invalid="ignore"):  # a singular A gives inf or nan
        return _gtsv(xp, dl, d, du, b, perturb_singular).astype(b.dtype, copy=False)


def _tridiagonal_solve_abstract_eval(dl, d, du, b, *, perturb_singular):
    name = "tridiagonal_solve"
    for what, aval in (("dl", dl), ("d", d), ("du", du), ("b", b)):
        _check_inexact(name, what, aval)
    if not dl.dtype == d.dtype == du.dtype == b.dtype:
        raise TypeError(f"{name}: dl, d, du and b must have one dtype, got {dl.dtype}, "
                        f"{d.dtype}, {du.dtype} and {b.dtype}; convert them first")
    if d.ndim < 1 or not dl.shape == d.shape == du.shape:
        raise ValueError(f"{name}: dl, d and du must be vectors (or stacks of them, (..., "
                         f"m)) of one shape, got shapes {dl.shape}, {d.shape} and {du.shape}")
    if b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise ValueError(f"{name}: b must have shape (..., m, n) with the leading axes and m "
                         f"of the diagonals {d.shape}, got shape {b.shape}")
    return ShapedArray(b.shape, b.dtype)


def _tridiagonal_product(ddl, dd, ddu, x):
    """``dA x`` for the tridiagonal ``dA`` with diagonals ``ddl``, ``dd``, ``ddu`` (each
    possibly a symbolic zero) and the stack of matrices ``x``."""
    shape = shape_of(x)
    nd, m = len(shape), shape[-2]
    dtype = get_aval(x).dtype
    zero_row = backend.zeros(shape[:-2] + (1, shape[-1]), dtype, like=x)
    start = (0,) * nd
    previous = concatenate([zero_row, slice_array(x, start, shape[:-2] + (m - 1, shape[-1]))],
                           nd - 2)
    following = concatenate([slice_array(x, start[:-2] + (1, 0), shape), zero_row], nd - 2)
    total = None
    for g, y in ((ddl, previous), (dd, x), (ddu, following)):
        if type(g) is ad.Zero:
            continue
        term = mul(broadcast_in_dim(g, shape, tuple(range(nd - 1))), y)
        total = term if total is None else add(total, term)
    return total


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    ddl, dd, ddu, db = tangents
    x = tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=perturb_singular)
    rhs = None if type(db) is ad.Zero else ad.instantiate(db, b)
    product = _tridiagonal_product(ddl, dd, ddu, x)
    if product is not None:
        rhs = neg(product) if rhs is None else sub(rhs, product)
    if rhs is None:
        return x, ad.Zero.from_value(x)
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    assert not any(is_undefined_primal(v) for v in (dl, d, du)), (
        "tridiagonal_solve is linear in b only")
    shape = shape_of(d)
    nd, m = len(shape), shape[-1]
    zero = backend.zeros(shape[:-1] + (1,), get_aval(d).dtype, like=d)
    start = (0,) * nd
    dl_t = concatenate([zero, slice_array(du, start, shape[:-1] + (m - 1,))], nd - 1)
    du_t = concatenate([slice_array(dl, start[:-1] + (1,), shape), zero], nd - 1)
    return [None, None, None,
            tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


impl_rules[tridiagonal_solve_p] = _tridiagonal_solve_impl
abstract_eval_rules[tridiagonal_solve_p] = _tridiagonal_solve_abstract_eval
ad.jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose.deftranspose(tridiagonal_solve_p, _tridiagonal_solve_transpose)
batching.batching_rules[tridiagonal_solve_p] = batch_matrix_and_operand(tridiagonal_solve_p)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """The solution ``x`` of ``A x = b`` for the tridiagonal matrix ``A`` with subdiagonal
    ``dl`` (``dl[i] = A[i, i - 1]``; ``dl[0]`` is not read), diagonal ``d`` and
    superdiagonal ``du`` (``du[i] = A[i, i + 1]``; ``du[-1]`` is not read), each ``(...,
    m)``, and ``b`` ``(..., m, n)`` with the same leading (batch) axes, all of one float or
    complex dtype.  Gaussian elimination with partial pivoting (LAPACK's ``gtsv``); a
    singular ``A`` (a zero pivot) gives nan, as JAX, unless ``perturb_singular``, which moves pivots
    smaller than ``eps`` times the largest entry of ``U`` to that size (keeping their sign)
    for a finite answer (inverse iteration's use).  Linear in ``b``; differentiable in all
    four, as JAX.

    >>> import numpy as np
    >>> from functrans.lax_linalg import tridiagonal_solve
    >>> dl, d, du = np.array([0.0, 1.0, 1.0]), np.array([2.0, 2.0, 2.0]), np.array([1.0, 1.0, 0.0])
    >>> tridiagonal_solve(dl, d, du, np.array([[3.0], [4.0], [3.0]]))
    array([[1.],
           [1.],
           [1.]])
    """
    params = dict(perturb_singular=bool(perturb_singular))
    _tridiagonal_solve_abstract_eval(get_aval(dl), get_aval(d), get_aval(du), get_aval(b),
                                     **params)
    return tridiagonal_solve_p.bind(dl, d, du, b, **params)


# -- packed Householder forms: tridiagonal (sytrd / hetrd) and hessenberg_reflectors (gehrd)
# LAPACK's own outputs, as JAX returns them: the reduced matrix with the reflectors' vectors
# below (or above) the band, and their scalar factors.  No derivative (none in JAX): the
# reflectors are one of many choices, fixed by LAPACK's sign conventions, not by a rule a
# derivative could follow; scipy.linalg.hessenberg's (h, q) and eigh have rules.

_PACKED_NO_DERIVATIVE = (
    "the packed Householder form (LAPACK's reflectors and their factors) has no derivative "
    "(JAX has none either): differentiate the unpacked forms instead, "
    "functrans.scipy.linalg.hessenberg's (h, q) or functrans.numpy.linalg.eigh")

tridiagonal_p = Primitive("tridiagonal", multiple_results=True, origin="library")


def _tridiagonal_impl(a, *, lower):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    n = a.shape[-1]
    real = _real_dtype(a.dtype)
    batch = a.shape[:-2]
    if not a.size or n == 1:  # LAPACK asks for n >= 1; nothing to reduce for n <= 1
        return [a.copy(), xp.real(a[..., :, 0] if n else a[..., 0]).astype(real),
                xp.zeros(batch + (max(n - 1, 0),), real),
                xp.zeros(batch + (max(n - 1, 0),), a.dtype)]
    name = "hetrd" if a.dtype.kind == "c" else "sytrd"
    kernel = backend.lapack_kernel(name, a, what="functrans.lax.linalg.tridiagonal")
    arr, d, e, taus = matrix_by_matrix(
        lambda m: tuple(kernel(m, lower=int(lower))[:4]), a)
    return [arr.astype(a.dtype, copy=False), d.astype(real, copy=False),
            e.astype(real, copy=False), taus.astype(a.dtype, copy=False)]


def _tridiagonal_abstract_eval(a, *, lower):
    _check_inexact("tridiagonal", "the operand", a)
    _check_square("tridiagonal", "the operand", a)
    n, batch, real = a.shape[-1], a.shape[:-2], _real_dtype(a.dtype)
    short = batch + (max(n - 1, 0),)
    return [ShapedArray(a.shape, a.dtype), ShapedArray(batch + (n,), real),
            ShapedArray(short, real), ShapedArray(short, a.dtype)]


impl_rules[tridiagonal_p] = _tridiagonal_impl
abstract_eval_rules[tridiagonal_p] = _tridiagonal_abstract_eval
ad.jvp_rules[tridiagonal_p] = _no_derivative(
    tridiagonal_p, "functrans.lax.linalg.tridiagonal", _PACKED_NO_DERIVATIVE)
batching.defleading_dims(tridiagonal_p, moveaxis)


def tridiagonal(a, *, lower: bool = True):
    """The reduction of each Hermitian matrix in ``a`` (``(..., n, n)``, reading its
    ``lower`` or upper triangle) to a real symmetric tridiagonal one, ``a = Q T Qᴴ``, in
    LAPACK's packed form (``sytrd``, ``hetrd``, through SciPy), as JAX: ``(arr, d, e,
    taus)``, where ``d`` (``(..., n)``) and ``e`` (``(..., n - 1)``) are ``T``'s diagonal
    and off-diagonal (real), ``taus`` (``(..., n - 1)``) the reflectors' factors and
    ``arr`` the matrix with ``T`` on its band and the reflectors' vectors below it (above
    it when not ``lower``).  NumPy arrays only (CuPy has no such kernel).  Not
    differentiable (nor in JAX): ``eigh`` and ``scipy.linalg.eigh_tridiagonal`` are.

    >>> import numpy as np
    >>> from functrans.lax_linalg import tridiagonal
    >>> arr, d, e, taus = tridiagonal(np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]]))
    >>> d, e
    (array([2., 2., 2.]), array([1., 1.]))
    """
    _tridiagonal_abstract_eval(get_aval(a), lower=bool(lower))
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


hessenberg_reflectors_p = Primitive("hessenberg_reflectors", multiple_results=True,
                                    origin="library")


def _hessenberg_reflectors_impl(a):
    xp = array_module(a)
    (a,) = coerce(xp, a)
    n = a.shape[-1]
    if not a.size or n == 1:
        return [a.copy(), xp.zeros(a.shape[:-2] + (max(n - 1, 0),), a.dtype)]
    kernel = backend.lapack_kernel("gehrd", a, what="functrans.lax.linalg.hessenberg")
    packed, taus = matrix_by_matrix(lambda m: tuple(kernel(m)[:2]), a)
    return [packed.astype(a.dtype, copy=False), taus.astype(a.dtype, copy=False)]


def _hessenberg_reflectors_abstract_eval(a):
    _check_inexact("hessenberg", "the operand", a)
    _check_square("hessenberg", "the operand", a)
    return [ShapedArray(a.shape, a.dtype),
            ShapedArray(a.shape[:-2] + (max(a.shape[-1] - 1, 0),), a.dtype)]


impl_rules[hessenberg_reflectors_p] = _hessenberg_reflectors_impl
abstract_eval_rules[hessenberg_reflectors_p] = _hessenberg_reflectors_abstract_eval
ad.jvp_rules[hessenberg_reflectors_p] = _no_derivative(
    hessenberg_reflectors_p, "functrans.lax.linalg.hessenberg", _PACKED_NO_DERIVATIVE)
batching.defleading_dims(hessenberg_reflectors_p, moveaxis)


def hessenberg_reflectors(a):
    """The reduction of each square matrix in ``a`` (``(..., n, n)``) to upper Hessenberg
    form ``a = Q H Qᴴ`` in LAPACK's packed form (``gehrd``, through SciPy), as JAX's
    ``lax.linalg.hessenberg``: ``(a_out, taus)`` with ``H`` on and above the first
    subdiagonal of ``a_out``, the reflectors' vectors below it and their factors in
    ``taus`` (``(..., n - 1)``).  NumPy arrays only.  Not differentiable (nor in JAX);
    ``functrans.scipy.linalg.hessenberg``'s unpacked ``(h, q)`` is.

    >>> import numpy as np
    >>> from functrans.lax_linalg import hessenberg
    >>> a_out, taus = hessenberg(np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 6.0, 7.0]]))
    >>> taus
    array([0., 0.])
    """
    _hessenberg_reflectors_abstract_eval(get_aval(a))
    return tuple(hessenberg_reflectors_p.bind(a))


# -- lu_pivots_to_permutation --------------------------------------------------------------

lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", origin="library")


def _lu_pivots_to_permutation_impl(pivots, *, permutation_size):
    xp = array_module(pivots)
    (pivots,) = coerce(xp, pivots)
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    flat = pivots.reshape((-1, k))
    rows = xp.arange(flat.shape[0])
    permutation = xp.broadcast_to(xp.arange(permutation_size, dtype=pivots.dtype),
                                  (flat.shape[0], permutation_size)).copy()
    for i in range(k):  # swap entries i and pivots[i], in order (LAPACK's row swaps)
        j = flat[:, i]
        here, there = permutation[:, i].copy(), permutation[rows, j]
        permutation[:, i] = there
        permutation[rows, j] = here
    return permutation.reshape(batch + (permutation_size,))


def _lu_pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
    name = "lu_pivots_to_permutation"
    if pivots.dtype.kind not in "iu":
        raise TypeError(f"{name}: pivots must be an integer array, got dtype {pivots.dtype}")
    if pivots.ndim < 1 or pivots.shape[-1] > permutation_size:
        raise ValueError(f"{name}: pivots must have shape (..., k) with k <= "
                         f"permutation_size = {permutation_size}, got shape {pivots.shape}")
    return ShapedArray(pivots.shape[:-1] + (permutation_size,), pivots.dtype)


impl_rules[lu_pivots_to_permutation_p] = _lu_pivots_to_permutation_impl
abstract_eval_rules[lu_pivots_to_permutation_p] = _lu_pivots_to_permutation_abstract_eval
ad.defjvp_zero(lu_pivots_to_permutation_p)
batching.defleading_dims(lu_pivots_to_permutation_p, moveaxis)


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation (``(..., permutation_size)``, the dtype of ``pivots``) that the row
    swaps ``pivots`` (``(..., k)``, ``k <= permutation_size``; LAPACK's ``getrf`` pivots,
    0-based, as ``lu`` returns them) make of ``0, 1, ..., permutation_size - 1``: swap
    entries ``i`` and ``pivots[i]`` for ``i = 0, 1, ...`` in turn.  Integer valued.

    >>> import numpy as np
    >>> from functrans.lax_linalg import lu_pivots_to_permutation
    >>> lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5)
    array([2, 0, 3, 1, 4], dtype=int32)
    """
    try:
        permutation_size = int(permutation_size)
    except TypeError:
        raise TypeError(f"lu_pivots_to_permutation: permutation_size must be a static "
                        f"integer, got {permutation_size!r}") from None
    _lu_pivots_to_permutation_abstract_eval(get_aval(pivots),
                                            permutation_size=permutation_size)
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=permutation_size)


# -- Householder reflectors: householder_product (orgqr) and ormqr -------------------------
# Built from lax operations, one reflector H = I - τ v vᴴ at a time, so every transform
# (derivatives too, which JAX does not have) goes through them.  Column i of ``a`` holds
# v below the diagonal; v[i] = 1 and v[:i] = 0.


def _reflector(a, i: int):
    """The ``i``-th Householder vector of the stack of packed reflectors ``a``."""
    shape = shape_of(a)
    nd, m = len(shape), shape[-2]
    dtype = get_aval(a).dtype
    rows = backend.arange(m, like=a)
    below = broadcast_in_dim((rows > i).astype(dtype), shape[:-1], (nd - 2,))
    unit = broadcast_in_dim((rows == i).astype(dtype), shape[:-1], (nd - 2,))
    return add(mul(_column(a, i), below), unit)


def _scalar_at(x, i: int):
    """``x[..., i]`` of a stack of vectors."""
    shape = shape_of(x)
    nd = len(shape)
    return squeeze(slice_array(x, (0,) * (nd - 1) + (i,), shape[:-1] + (i + 1,)), (nd - 1,))


def _apply_reflector(v, tau, c, left: bool, adjoint: bool):
    """``H c`` (``left``) or ``c H``, with ``H = I - τ v vᴴ`` (``Hᴴ`` if ``adjoint``)."""
    shape = shape_of(c)
    nd = len(shape)
    batch = tuple(range(nd - 2))
    complex_ = get_aval(c).dtype.kind == "c"
    vc = conj(v) if complex_ else v
    if adjoint and complex_:
        tau = conj(tau)
    if left:   # w = vᴴ c, (..., s); c - τ v w
        w = dot_general_p.bind(vc, c, dimension_numbers=(((nd - 2,), (nd - 2,)),
                                                         (batch, batch)))
        v_full = broadcast_in_dim(v, shape, batch + (nd - 2,))
        w_full = broadcast_in_dim(w, shape, batch + (nd - 1,))
    else:      # w = c v, (..., r); c - τ w vᴴ
        w = dot_general_p.bind(c, v, dimension_numbers=(((nd - 1,), (nd - 2,)),
                                                        (batch, batch)))
        v_full = broadcast_in_dim(vc, shape, batch + (nd - 1,))
        w_full = broadcast_in_dim(w, shape, batch + (nd - 2,))
    return sub(c, mul(broadcast_in_dim(tau, shape, batch), mul(v_full, w_full)))


def _check_reflectors(name: str, a: ShapedArray, taus: ShapedArray) -> None:
    _check_inexact(name, "a", a)
    if a.ndim < 2:
        raise ValueError(f"{name}: a must be a stack of matrices (..., m, n) holding "
                         f"Householder reflectors, got shape {a.shape}")
    if taus.dtype != a.dtype:
        raise TypeError(f"{name}: taus must have the dtype of a, {a.dtype}, got "
                        f"{taus.dtype}; convert it first")
    if taus.ndim != a.ndim - 1 or taus.shape[:-1] != a.shape[:-2] or (
            taus.shape[-1] > min(a.shape[-2:])):
        raise ValueError(f"{name}: taus must have shape (..., k) with the leading axes of "
                         f"a {a.shape} and k <= min(m, n) = {min(a.shape[-2:])}, got shape "
                         f"{taus.shape}")


def _apply_reflectors(a, taus, c, left: bool, transpose: bool):
    """``Q c``, ``Qᴴ c``, ``c Q`` or ``c Qᴴ`` with ``Q = H_0 H_1 ... H_{k-1}``."""
    k = shape_of(taus)[-1]
    order = list(range(k))
    if left != transpose:  # Q c and c Qᴴ apply H_{k-1} first
        order.reverse()
    for i in order:
        c = _apply_reflector(_reflector(a, i), _scalar_at(taus, i), c, left, transpose)
    return c


def householder_product(a, taus):
    """The first ``n`` columns of ``Q = H_0 H_1 ... H_{k-1}``, the product of the
    Householder reflectors ``H_i = I - taus[i] v_i v_iᴴ`` packed in the columns of ``a``
    (``(..., m, n)``, ``m >= n``: ``v_i`` is column ``i`` below the diagonal, with 1 on
    it), and ``taus`` (``(..., k)``, ``k <= n``), as LAPACK's ``orgqr`` / ``ungqr`` from the
    output of ``geqrf``.  Built from lax operations, so differentiable (JAX's is not) and
    batched.

    >>> import numpy as np
    >>> from functrans.lax_linalg import householder_product
    >>> householder_product(np.array([[1.0], [1.0]]), np.array([1.0]))
    array([[ 0.],
           [-1.]])
    """
    a_aval, taus_aval = get_aval(a), get_aval(taus)
    _check_reflectors("householder_product", a_aval, taus_aval)
    m, n = a_aval.shape[-2:]
    if m < n:
        raise ValueError(f"householder_product: a must have at least as many rows as "
                         f"columns (m >= n, as LAPACK's orgqr), got shape {a_aval.shape}")
    eye = backend.eye(m, n, dtype=a_aval.dtype, like=a)
    first = broadcast_in_dim(eye, a_aval.shape, (a_aval.ndim - 2, a_aval.ndim - 1))
    return _apply_reflectors(a, taus, first, left=True, transpose=False)


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """``Q c`` (``left``), ``c Q``, or with ``transpose`` ``Qᴴ c`` or ``c Qᴴ`` (the
    conjugate transpose for complex arrays), for ``Q = H_0 H_1 ... H_{k-1}`` (``m x m``)
    given by the Householder reflectors packed in ``a`` (``(..., m, n)``) and ``taus``
    (``(..., k)``), as LAPACK's ``ormqr`` / ``unmqr``, without forming ``Q``.  ``c`` is
    ``(..., m, s)`` (``left``) or ``(..., r, m)`` with the leading axes of ``a``.  Built
    from lax operations, so differentiable (JAX's is not) and batched.

    >>> import numpy as np
    >>> from functrans.lax_linalg import ormqr
    >>> ormqr(np.array([[1.0], [1.0]]), np.array([1.0]), np.array([[1.0], [2.0]]))
    array([[-2.],
           [-1.]])
    """
    a_aval, taus_aval, c_aval = get_aval(a), get_aval(taus), get_aval(c)
    _check_reflectors("ormqr", a_aval, taus_aval)
    m = a_aval.shape[-2]
    if c_aval.dtype != a_aval.dtype:
        raise TypeError(f"ormqr: c must have the dtype of a, {a_aval.dtype}, got "
                        f"{c_aval.dtype}; convert it first")
    axis = -2 if left else -1
    if c_aval.ndim != a_aval.ndim or c_aval.shape[:-2] != a_aval.shape[:-2] or (
            c_aval.shape[axis] != m):
        want = "(..., m, s)" if left else "(..., r, m)"
        raise ValueError(f"ormqr: c must have shape {want} with the leading axes of a and "
                         f"m = {m} (left={bool(left)}), got shape {c_aval.shape}")
    return _apply_reflectors(a, taus, c, left=bool(left), transpose=bool(transpose))


# -- cholesky_update and symmetric_product: built from lax operations ----------------------


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor ``R'`` of ``Rᵀ R + w wᵀ`` from the upper factor ``R =
    r_matrix`` (``(..., n, n)``; its strict lower triangle is not read) and ``w =
    w_vector`` (``(..., n)``), real, in ``O(n²)`` operations: one Givens rotation per row
    folds ``w`` into ``R``, as JAX (equal to JAX's values where ``R``'s diagonal is positive,
    as ``cholesky`` makes it, or ``w`` reaches no zero on the way).  Built from lax
    operations, so differentiable (JAX's is not) and batched.

    >>> import numpy as np
    >>> from functrans.lax_linalg import cholesky_update
    >>> cholesky_update(np.array([[3.0, 0.0], [0.0, 1.0]]), np.array([4.0, 0.0]))
    array([[5., 0.],
           [0., 1.]])
    """
    r_aval, w_aval = get_aval(r_matrix), get_aval(w_vector)
    for what, aval in (("r_matrix", r_aval), ("w_vector", w_aval)):
        if aval.dtype.kind != "f":
            raise TypeError(f"cholesky_update: {what} must be a real floating array, got "
                            f"dtype {aval.dtype}")
    _check_square("cholesky_update", "r_matrix", r_aval)
    if w_aval.shape != r_aval.shape[:-1] or w_aval.dtype != r_aval.dtype:
        raise ValueError(f"cholesky_update: w_vector must have shape (..., n) = "
                         f"{r_aval.shape[:-1]} and dtype {r_aval.dtype}, as r_matrix "
                         f"{r_aval.shape}, got {w_aval.str_short()}")
    shape = r_aval.shape
    nd, n = len(shape), shape[-1]
    r = _triangle(r_matrix, False, 0, r_matrix)
    z = w_vector
    rows = []
    for k in range(n):
        row = squeeze(slice_array(r, (0,) * (nd - 2) + (k, 0), shape[:-2] + (k + 1, n)),
                      (nd - 2,))
        x, y = _scalar_at(row, k), _scalar_at(z, k)
        # c = x / |(x, y)|, s = -y / |(x, y)|, scaled against overflow; (1, 0) at (0, 0)
        size = maximum(abs(x), abs(y))
        zero = eq(size, 0.0)
        safe = add(size, convert_element_type(zero, r_aval.dtype))
        xs, ys = div(x, safe), div(y, safe)
        norm = sqrt(add(add(mul(xs, xs), mul(ys, ys)), convert_element_type(zero, r_aval.dtype)))
        c = add(div(xs, norm), convert_element_type(zero, r_aval.dtype))
        s = neg(div(ys, norm))
        c_row, s_row = (broadcast_in_dim(v, shape[:-1], tuple(range(nd - 2))) for v in (c, s))
        rows.append(sub(mul(c_row, row), mul(s_row, z)))
        z = add(mul(c_row, z), mul(s_row, row))
    return concatenate([expand_dims(row, (nd - 2,)) for row in rows], nd - 2)


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """``alpha a aᵀ + beta c`` for ``a = a_matrix`` (``(..., m, n)``) and the symmetric
    ``c = c_matrix`` (``(..., m, m)``), real (as JAX), as BLAS's ``syrk``.  The whole matrix is computed here (JAX promises the
    lower triangle only, unless ``symmetrize_output``); with ``symmetrize_output`` the
    upper triangle is the transpose of the lower one.  Built from lax operations, so
    differentiable (JAX's is not) and batched.

    >>> import numpy as np
    >>> from functrans.lax_linalg import symmetric_product
    >>> symmetric_product(np.array([[1.0, 2.0], [0.0, 1.0]]), np.eye(2), alpha=1.0, beta=2.0)
    array([[7., 2.],
           [2., 3.]])
    """
    a_aval, c_aval = get_aval(a_matrix), get_aval(c_matrix)
    for what, aval in (("a_matrix", a_aval), ("c_matrix", c_aval)):
        if aval.dtype.kind != "f":
            raise TypeError(f"symmetric_product: {what} must be a real floating array (as "
                            f"JAX), got dtype {aval.dtype}")
    if a_aval.ndim < 2 or c_aval.shape != a_aval.shape[:-1] + (a_aval.shape[-2],) or (
            a_aval.dtype != c_aval.dtype):
        raise ValueError(f"symmetric_product: a_matrix (..., m, n) and c_matrix (..., m, m) "
                         f"must have the same leading axes, m and dtype, got "
                         f"{a_aval.str_short()} and {c_aval.str_short()}")
    product = _matmul(a_matrix, _swap_last(a_matrix))
    out = add(mul(product, _static_scalar("alpha", alpha, a_aval.dtype, a_matrix)),
              mul(c_matrix, _static_scalar("beta", beta, a_aval.dtype, a_matrix)))
    if symmetrize_output:
        out = add(_triangle(out, True, 0, a_matrix), _swap_last(_triangle(out, True, -1,
                                                                            a_matrix)))
    return out


def _static_scalar(what: str, value, dtype, like):
    try:
        value = float(value)
    except TypeError:
        raise TypeError(f"symmetric_product: {what} must be a static number, got "
                        f"{value!r}") from None
    return backend.full((), value, dtype=dtype, like=like)
