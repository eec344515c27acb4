"""Sweep cases of the linear-algebra family (functrans/primitives/decompositions.py and
functrans.numpy.linalg): checked by tests/test_primitives.py and tests/test_numpy.py.

Decompositions need well-posed inputs, so most cases build them from unconstrained draws:
``_spd(x) = x xᴴ + 3 I`` is Hermitian positive definite, and ``x + 3 I`` has a triangle far
from singular.  Complex cases take two real draws and join them with ``lax.complex``, so
the derivative checks (which draw real inputs) cover complex matrices too; their complex
results are returned as real and imaginary parts side by side."""
from __future__ import annotations

import numpy as np

from functrans import backend, lax
from sweep import C64, C128, F32, F64, I64, A, Case, numpy_case


def _mT(x):
    nd = len(np.shape(x))
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _matmul(a, b):
    nd = len(np.shape(a))
    batch = tuple(range(nd - 2))
    return lax.dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _eye(x, scale):
    """``scale`` times the identity, on the device of ``x`` (no host constants)."""
    n = np.shape(x)[-1]
    return backend.eye(n, dtype=x.dtype, like=x) * scale


def _spd(x):
    """A Hermitian positive-definite matrix (stack) from any square one."""
    xh = lax.conj(_mT(x)) if np.dtype(x.dtype).kind == "c" else _mT(x)
    return lax.add(_matmul(x, xh), _eye(x, 3.0))


def _shifted(a):
    return lax.add(a, _eye(a, 3.0))


def _sym(x):
    """A Hermitian matrix (stack) from any square one."""
    xh = lax.conj(_mT(x)) if np.dtype(x.dtype).kind == "c" else _mT(x)
    return lax.add(x, xh)


def _squared(v):
    """``|v|²``: eigenvectors are unique up to a sign or phase per column; this is not."""
    return lax.real(lax.mul(v, lax.conj(v))) if np.dtype(v.dtype).kind == "c" else lax.mul(v, v)


def _expm_sym(a):
    """``exp(a)`` of a symmetric ``a``, through its eigendecomposition."""
    v, w = lax.linalg.eigh(a)
    scaled = lax.mul(v, lax.expand_dims(lax.exp(w), (len(np.shape(w)) - 1,)))
    return _matmul(scaled, _mT(v))


def _strict_upper(x):
    n = np.shape(x)[-1]
    return 1 - backend.tri(n, n, 0, dtype=x.dtype, like=x)


def _cplx(x, y):
    return lax.complex(x, y)


def _parts(z):
    """The real and imaginary parts of ``z`` side by side: the harness pairs cotangents with
    real outputs."""
    return lax.concatenate([lax.real(z), lax.imag(z)], len(np.shape(z)) - 1)


def _svd_invariants(x, full_matrices):
    """``s``, ``|u|²``, ``|vh|²`` and ``u diag(exp(s)) vh`` (real and imaginary parts): free
    of the sign (phase) shared by a column of ``u`` and the row of ``vh``."""
    u, s, vh = lax.linalg.svd(x, full_matrices=full_matrices)
    nd = len(np.shape(x))
    weighted = lax.mul(u, lax.convert_element_type(lax.expand_dims(lax.exp(s), (nd - 2,)),
                                                   u.dtype))
    product = _matmul(weighted, vh)
    if np.dtype(x.dtype).kind == "c":
        product = _parts(product)
    flat = [lax.reshape(y, np.shape(y)[:-2] + (np.shape(y)[-2] * np.shape(y)[-1],))
            for y in (_squared(u), _squared(vh), product)]
    return lax.concatenate([s] + flat, nd - 2)


def _eig(x, vectors=True):
    return lax.linalg.eig(x, compute_left_eigenvectors=vectors,
                          compute_right_eigenvectors=vectors, enable_eigvec_derivs=vectors)


def _solve(**params):
    return lambda a, b: lax.linalg.triangular_solve(_shifted(a), b, **params)


def _tridiagonal_solve(dl, d, du, b):
    """A system far from singular: the diagonal is shifted by 4 (the draws are standard
    normal)."""
    shift = backend.zeros(np.shape(d), dtype=d.dtype, like=d) + 4.0
    return lax.linalg.tridiagonal_solve(dl, lax.add(d, shift), du, b)


def _fixed_tridiagonal_solve(b):
    """The solve with one fixed matrix (made on the device and in the dtype of ``b``):
    linear."""
    dl, d, du = (backend.full(np.shape(b)[:-1], v, dtype=b.dtype, like=b)
                 for v in (1.0, 3.0, -0.5))
    return lax.linalg.tridiagonal_solve(dl, d, du, b)


PRIMITIVE_CASES = [
    Case("cholesky", lambda x: lax.linalg.cholesky(_spd(x)), [A(3, 3)]),
    Case("cholesky_batched", lambda x: lax.linalg.cholesky(_spd(x)), [A(2, 4, 4)]),
    # Only the lower triangle is read: the derivative in the strict upper one is zero.
    Case("cholesky_reads_lower",
         lambda x, y: lax.linalg.cholesky(lax.add(_spd(x), lax.mul(y, _strict_upper(y))),
                                          symmetrize_input=False),
         [A(3, 3), A(3, 3)]),
    Case("cholesky_complex", lambda x, y: _parts(lax.linalg.cholesky(_spd(_cplx(x, y)))),
         [A(3, 3), A(3, 3)]),
    Case("triangular_solve_left_lower", _solve(left_side=True, lower=True),
         [A(3, 3), A(3, 2)]),
    Case("triangular_solve_left_upper_transpose",
         _solve(left_side=True, lower=False, transpose_a=True), [A(3, 3), A(3, 2)]),
    Case("triangular_solve_right_lower_unit",
         _solve(left_side=False, lower=True, unit_diagonal=True), [A(3, 3), A(2, 3)]),
    Case("triangular_solve_right_upper_transpose",
         _solve(left_side=False, lower=False, transpose_a=True), [A(3, 3), A(2, 3)]),
    Case("triangular_solve_batched",
         _solve(left_side=True, lower=True, transpose_a=True, unit_diagonal=True),
         [A(2, 3, 3), A(2, 3, 4)]),
    Case("triangular_solve_complex",
         lambda a, c, b, d: _parts(lax.linalg.triangular_solve(
             _shifted(_cplx(a, c)), _cplx(b, d), left_side=True, lower=True,
             transpose_a=True, conjugate_a=True)),
         [A(3, 3), A(3, 3), A(3, 2), A(3, 2)]),
    Case("triangular_solve_complex_conjugate_only",
         lambda a, c, b, d: _parts(lax.linalg.triangular_solve(
             _shifted(_cplx(a, c)), _cplx(b, d), left_side=False, lower=False,
             conjugate_a=True)),
         [A(3, 3), A(3, 3), A(2, 3), A(2, 3)]),
    Case("lu", lambda a: lax.linalg.lu(a)[0], [A(4, 4)]),
    Case("lu_batched", lambda a: lax.linalg.lu(a)[0], [A(2, 3, 3)]),
    Case("lu_complex", lambda a, b: _parts(lax.linalg.lu(_cplx(a, b))[0]), [A(3, 3), A(3, 3)]),
    Case("eigh_values", lambda x: lax.linalg.eigh(_sym(x))[1], [A(4, 4)]),
    Case("eigh_vectors_squared", lambda x: _squared(lax.linalg.eigh(_sym(x))[0]), [A(3, 3)]),
    Case("eigh_matrix_exponential", lambda x: _expm_sym(_sym(x)), [A(3, 3)]),
    Case("eigh_batched_upper",
         lambda x: _squared(lax.linalg.eigh(_sym(x), lower=False)[0]), [A(2, 3, 3)]),
    Case("eigh_reads_lower",
         lambda x, y: lax.linalg.eigh(lax.add(_sym(x), lax.mul(y, _strict_upper(y))),
                                      symmetrize_input=False)[1], [A(3, 3), A(3, 3)]),
    Case("eigh_complex_values", lambda x, y: lax.linalg.eigh(_sym(_cplx(x, y)))[1],
         [A(3, 3), A(3, 3)]),
    Case("eigh_complex_vectors", lambda x, y: _squared(lax.linalg.eigh(_sym(_cplx(x, y)))[0]),
         [A(3, 3), A(3, 3)]),
    Case("qr_reduced_q", lambda x: lax.linalg.qr(x, full_matrices=False)[0], [A(4, 3)]),
    Case("qr_reduced_r", lambda x: lax.linalg.qr(x, full_matrices=False)[1], [A(4, 3)]),
    Case("qr_square_full_batched", lambda x: _matmul(*lax.linalg.qr(x)), [A(2, 3, 3)]),
    Case("qr_square_q_batched", lambda x: lax.linalg.qr(x)[0], [A(2, 3, 3)]),
    Case("qr_complex", lambda x, y: _parts(lax.linalg.qr(_cplx(x, y), full_matrices=False)[0]),
         [A(4, 3), A(4, 3)]),
    Case("qr_complex_r", lambda x, y: _parts(lax.linalg.qr(_cplx(x, y), full_matrices=False)[1]),
         [A(3, 3), A(3, 3)]),
    Case("qr_wide", lambda x: lax.concatenate(list(lax.linalg.qr(x)), 1), [A(3, 5)]),
    Case("qr_wide_complex_batched", lambda x, y: _parts(lax.concatenate(
        list(lax.linalg.qr(_cplx(x, y), full_matrices=False)), 2)), [A(2, 2, 3), A(2, 2, 3)]),
    Case("svd_values", lambda x: lax.linalg.svd(x, compute_uv=False), [A(4, 3)]),
    Case("svd_values_wide_batched", lambda x: lax.linalg.svd(x, compute_uv=False),
         [A(2, 3, 4)]),
    Case("svd_values_complex", lambda x, y: lax.linalg.svd(_cplx(x, y), compute_uv=False),
         [A(3, 3), A(3, 3)]),
    # u and vh carry a sign (phase) per column: |u|², |vh|² and u f(s) vh do not.
    Case("svd_tall_vectors_squared", lambda x: _svd_invariants(x, False), [A(4, 3)]),
    Case("svd_wide_vectors_squared", lambda x: _svd_invariants(x, False), [A(2, 3, 4)]),
    Case("svd_square_full", lambda x: _svd_invariants(x, True), [A(3, 3)]),
    Case("svd_complex_tall", lambda x, y: _svd_invariants(_cplx(x, y), False),
         [A(4, 3), A(4, 3)]),
    Case("svd_complex_wide_batched", lambda x, y: _svd_invariants(_cplx(x, y), False),
         [A(2, 2, 3), A(2, 2, 3)]),
    Case("eig_values", lambda x: _parts(_eig(x, vectors=False)[0]), [A(4, 4)]),
    Case("eig_values_complex_batched",
         lambda x, y: _parts(_eig(_cplx(x, y), vectors=False)[0]), [A(2, 3, 3), A(2, 3, 3)]),
    # Real matrices: LAPACK fixes a real eigenvector up to its sign only, so |vr|².
    Case("eig_vectors_squared", lambda x: _squared(_eig(x)[2]), [A(2, 3, 3)]),
    # Complex ones: unit norm and a real largest component fix each eigenvector.
    Case("eig_vectors_complex", lambda x, y: _parts(lax.concatenate(
        _eig(_cplx(x, y))[1:], 1)), [A(3, 3), A(3, 3)]),
    Case("tridiagonal_solve", _tridiagonal_solve, [A(4), A(4), A(4), A(4, 2)]),
    Case("tridiagonal_solve_batched", _tridiagonal_solve, [A(2, 3), A(2, 3), A(2, 3), A(2, 3, 1)]),
    Case("tridiagonal_solve_linear_in_b",
         _fixed_tridiagonal_solve, [A(3, 2)], linear=True),
    Case("tridiagonal_solve_complex",
         lambda a, b, c, d, e, f, g, h: _parts(_tridiagonal_solve(
             _cplx(a, b), _cplx(c, d), _cplx(e, f), _cplx(g, h))),
         [A(3), A(3), A(3), A(3), A(3), A(3), A(3, 2), A(3, 2)]),
    # Built from lax operations: differentiable here (JAX's are not).
    Case("householder_product", lambda a, t: lax.linalg.householder_product(a, t),
         [A(4, 3), A(3)]),
    Case("householder_product_batched_complex", lambda a, b, t, u: _parts(
        lax.linalg.householder_product(_cplx(a, b), _cplx(t, u))),
         [A(2, 3, 3), A(2, 3, 3), A(2, 2), A(2, 2)]),
    Case("ormqr_left", lambda a, t, c: lax.linalg.ormqr(a, t, c), [A(4, 3), A(3), A(4, 2)]),
    Case("ormqr_right_transpose",
         lambda a, t, c: lax.linalg.ormqr(a, t, c, left=False, transpose=True),
         [A(2, 4, 3), A(2, 2), A(2, 2, 4)]),
    Case("ormqr_complex_left_transpose", lambda a, b, t, u, c, d: _parts(lax.linalg.ormqr(
        _cplx(a, b), _cplx(t, u), _cplx(c, d), transpose=True)),
         [A(3, 3), A(3, 3), A(3), A(3), A(3, 2), A(3, 2)]),
    Case("cholesky_update", lambda x, w: lax.linalg.cholesky_update(
        _mT(lax.linalg.cholesky(_spd(x))), w), [A(3, 3), A(3)]),
    Case("cholesky_update_batched", lambda x, w: lax.linalg.cholesky_update(
        _mT(lax.linalg.cholesky(_spd(x))), w), [A(2, 3, 3), A(2, 3)]),
    Case("symmetric_product", lambda a, c: lax.linalg.symmetric_product(
        a, _sym(c), alpha=2.0, beta=-0.5), [A(3, 4), A(3, 3)]),
    Case("symmetric_product_symmetrized", lambda a, c: lax.linalg.symmetric_product(
        a, c, alpha=0.5, beta=1.5, symmetrize_output=True), [A(2, 3, 2), A(2, 3, 3)]),
    Case("qdwh", lambda x: lax.concatenate(list(lax.linalg.qdwh(x)[:2]), 0), [A(4, 3)]),
    Case("lu_pivots_and_permutation",
         lambda a: lax.concatenate(list(lax.linalg.lu(a)[1:]), len(np.shape(a)) - 2),
         [A(2, 4, 4)],
         differentiable=False),
]


def _spd_numpy(m, x):
    """``x xᴴ + 3 I`` with ``m`` = functrans.numpy or numpy (the identity made from ``x``,
    on its device)."""
    identity = m.tril(m.triu(m.ones_like(x)))
    return x @ m.conj(m.swapaxes(x, -1, -2)) + 3 * identity


def _general(m, x, pivot=True):
    """A well-conditioned square matrix (diagonally dominant, also for the small integers
    drawn for integer dtypes); with ``pivot`` its rows are reversed, so that LU
    with partial pivoting swaps rows."""
    square = x + 8 * m.tril(m.triu(m.ones_like(x)))
    return m.flip(square, -2) if pivot else square


WITH_COMPLEX = (F64, F32, I64, C128, C64)

NUMPY_CASES = [
    numpy_case("linalg.cholesky", lambda m, x: m.linalg.cholesky(_spd_numpy(m, x)), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.cholesky_upper",
               lambda m, x: m.linalg.cholesky(_spd_numpy(m, x), upper=True), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.cholesky_batched", lambda m, x: m.linalg.cholesky(_spd_numpy(m, x)),
               A(2, 4, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.solve_vector", lambda m, a, b: m.linalg.solve(_general(m, a), b),
               A(3, 3), A(3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.solve_matrix",
               lambda m, a, b: m.linalg.solve(_general(m, a, pivot=False), b),
               A(3, 3), A(3, 2), dtypes=WITH_COMPLEX),
    numpy_case("linalg.solve_batch_broadcast", lambda m, a, b: m.linalg.solve(_general(m, a), b),
               A(2, 3, 3), A(3, 2), dtypes=WITH_COMPLEX),
    numpy_case("linalg.inv", lambda m, a: m.linalg.inv(_general(m, a)), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.inv_batched", lambda m, a: m.linalg.inv(_general(m, a)), A(2, 3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.det", lambda m, a: m.linalg.det(_general(m, a)), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.det_random", lambda m, a: m.linalg.det(a), A(4, 4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.det_batched", lambda m, a: m.linalg.det(_general(m, a)), A(2, 3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.slogdet", lambda m, a: m.linalg.slogdet(_general(m, a)), A(3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.slogdet_batched", lambda m, a: m.linalg.slogdet(_general(m, a)),
               A(2, 3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.eigh", lambda m, a: _eigh_squared(m, m.linalg.eigh(a + m.swapaxes(
        m.conj(a), -1, -2))), A(3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.eigh_upper_batched", lambda m, a: _eigh_squared(m, m.linalg.eigh(
        a + m.swapaxes(m.conj(a), -1, -2), UPLO="U")), A(2, 3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.qr", lambda m, a: m.linalg.qr(a), A(4, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.qr_r_batched", lambda m, a: m.linalg.qr(a, mode="r"), A(2, 4, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.qr_complete_square", lambda m, a: m.linalg.qr(a, mode="complete"),
               A(2, 3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.svd_values", lambda m, a: m.linalg.svd(a, compute_uv=False), A(2, 4, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.svd_reduced", lambda m, a: _svd_free(m, m.linalg.svd(
        a, full_matrices=False)), A(3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.svd_square_batched", lambda m, a: _svd_free(m, m.linalg.svd(a)),
               A(2, 3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.svdvals", lambda m, a: m.linalg.svdvals(a), A(3, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.pinv_tall", lambda m, a: m.linalg.pinv(a), A(4, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.pinv_wide_batched", lambda m, a: m.linalg.pinv(a), A(2, 2, 3),
               dtypes=WITH_COMPLEX),
    # Rank 2 stays rank 2 along every direction of x and y: the derivative is defined.
    numpy_case("linalg.pinv_rank_deficient", lambda m, x, y: m.linalg.pinv(x @ y, rcond=1e-5),
               A(4, 2), A(2, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.pinv_hermitian", lambda m, a: m.linalg.pinv(
        a + m.conj(m.swapaxes(a, -1, -2)), hermitian=True), A(3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.lstsq_tall", lambda m, a, b: _lstsq_parts(m.linalg.lstsq(a, b)),
               A(4, 3), A(4, 2), dtypes=WITH_COMPLEX),
    numpy_case("linalg.lstsq_wide_vector", lambda m, a, b: _lstsq_parts(m.linalg.lstsq(a, b)),
               A(2, 3), A(2), dtypes=WITH_COMPLEX),
    numpy_case("linalg.lstsq_rank_deficient",
               lambda m, x, y, b: m.linalg.lstsq(x @ y, b, rcond=1e-5)[0],
               A(4, 2), A(2, 3), A(4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.matrix_rank", lambda m, x, y: m.linalg.matrix_rank(
        m.stack([x @ y, m.ones_like(x @ y), x @ y + 3])), A(4, 2), A(2, 3), diff=False,
        dtypes=WITH_COMPLEX),
    numpy_case("linalg.cond", lambda m, a: m.linalg.cond(a), A(2, 3, 4), dtypes=WITH_COMPLEX),
    # NumPy before 2.1 returned some orders of complex matrices as complex: real parts.
    numpy_case("linalg.cond_orders", lambda m, a: m.stack(
        [m.real(m.linalg.cond(_general(m, a), p)) for p in (-2, "fro", "nuc", 1, -1, np.inf)]),
        A(3, 3), dtypes=WITH_COMPLEX),
    numpy_case("linalg.eig", lambda m, a: _eig_parts(m, m.linalg.eig(a)), A(2, 3, 3),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.eigvals", lambda m, a: _complex_parts(m, m.linalg.eigvals(a)), A(4, 4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.norm_vector_orders", lambda m, x: m.stack(
        [m.linalg.norm(x, p, axis=1) for p in (None, 1, 3, -1.5, np.inf, -np.inf)]),
        A(2, 4, kind="away0"), dtypes=WITH_COMPLEX),
    numpy_case("linalg.norm_count", lambda m, x: m.linalg.norm(x, 0, axis=0), A(3, 4, kind="grid"),
               dtypes=(F64, F32)),
    numpy_case("linalg.norm_matrix_orders", lambda m, x: m.stack(
        [m.linalg.norm(x, p, axis=(2, 0), keepdims=True)
         for p in ("fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf)]),
        A(3, 2, 4), dtypes=WITH_COMPLEX),
    numpy_case("linalg.qr_wide_batched", lambda m, a: m.linalg.qr(a), A(2, 3, 4),
               dtypes=WITH_COMPLEX),
    numpy_case("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(
        a + m.swapaxes(m.conj(a), -1, -2)), A(2, 4, 4), dtypes=WITH_COMPLEX),
]


def _eigh_squared(m, result):
    """Eigenvalues and ``|eigenvectors|²`` (free of the per-column sign or phase)."""
    w, v = result
    return w, m.real(v * m.conj(v))


def _svd_free(m, result):
    """Singular values, ``|U|²``, ``|Vh|²`` and ``U diag(S) Vh``'s product with its
    adjoint's: nothing depends on the sign (phase) of a pair of singular vectors."""
    u, s, vh = result
    k = s.shape[-1]
    u, vh = u[..., :, :k], vh[..., :k, :]
    return s, m.real(u * m.conj(u)), m.real(vh * m.conj(vh)), (u * s[..., None, :]) @ vh


def _lstsq_parts(result):
    """``x``, the residuals and ``s``.  Rank-deficient cases keep ``x`` only: NumPy's
    residuals are empty there (functrans's are not), and a zero singular value has no
    second derivative."""
    x, residuals, rank, s = result
    return x, residuals, s


def _complex_parts(m, z):
    return m.real(z), m.imag(z)


def _eig_parts(m, result):
    """Eigenvalues, and ``|v|²`` (a real eigenvector's sign is LAPACK's, unnormalized)."""
    w, v = result
    return m.real(w), m.imag(w), m.real(v * m.conj(v))
