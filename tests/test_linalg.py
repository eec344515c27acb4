"""Targeted tests of the linear-algebra family: the documented choices (which triangle is
read, symmetrized Cholesky gradients, the finite det gradient at singular matrices),
LU's outputs, holomorphic derivatives, and the errors.  The sweep (values, derivatives in
both modes to second order, vmap, float32, complex) is in tests/cases_linalg.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import backend, lax

RNG = np.random.default_rng(13)


def _spd(n, complex_=False):
    x = RNG.standard_normal((n, n))
    if complex_:
        x = x + 1j * RNG.standard_normal((n, n))
    return x @ x.conj().T + n * np.eye(n)


def _cofactor(a):
    """The cofactor matrix by definition (minors), for comparing with ``grad(det)``."""
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


# -- cholesky ------------------------------------------------------------------------------


def test_cholesky_primitive_reads_the_lower_triangle_only():
    a = _spd(4)
    noisy = a + np.triu(RNG.standard_normal((4, 4)), 1)
    got = lax.linalg.cholesky(noisy, symmetrize_input=False)
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-12)
    g = ft.grad(lambda x: fnp.sum(lax.linalg.cholesky(x, symmetrize_input=False)))(a)
    assert np.all(np.triu(g, 1) == 0)


def test_cholesky_reads_the_lower_triangle_only_complex():
    a = _spd(3, complex_=True)
    noise = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    got = lax.linalg.cholesky(a + np.triu(noise, 1), symmetrize_input=False)
    np.testing.assert_allclose(got, np.linalg.cholesky(a), rtol=1e-12)


@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky_jvp_in_a_non_hermitian_direction(complex_):
    # Only the tangent's lower triangle moves the factor (the real rule mirrors it by
    # halving the diagonal, the complex one by masks): against central differences.  The
    # complex tangent's diagonal is real, since LAPACK reads only the real part of a's.
    a = _spd(4, complex_)
    t = RNG.standard_normal((4, 4)) + (1j * np.tril(RNG.standard_normal((4, 4)), -1)
                                       if complex_ else 0)
    _, got = ft.jvp(lambda x: lax.linalg.cholesky(x, symmetrize_input=False), (a,), (t,))
    h = 1e-6
    lower = np.tril(t) + np.tril(t, -1).conj().T
    numeric = (np.linalg.cholesky(a + h * lower) - np.linalg.cholesky(a - h * lower)) / (2 * h)
    np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


def test_cholesky_gradient_is_symmetric_as_jax():
    a = _spd(4)
    g = ft.grad(lambda x: fnp.sum(fnp.linalg.cholesky(x) ** 3))(a)
    np.testing.assert_allclose(g, g.T, rtol=1e-12, atol=1e-12)


def test_cholesky_upper_is_the_adjoint_of_lower():
    a = _spd(3, complex_=True)
    np.testing.assert_allclose(fnp.linalg.cholesky(a, upper=True),
                               np.linalg.cholesky(a).conj().T, rtol=1e-12)


def test_cholesky_holomorphic_derivative():
    a = _spd(3, complex_=True)
    t = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    t = t + t.conj().T  # a Hermitian direction keeps the input Hermitian
    _, jvp = ft.jvp(fnp.linalg.cholesky, (a,), (t,))
    h = 1e-6
    numeric = (np.linalg.cholesky(a + h * t) - np.linalg.cholesky(a - h * t)) / (2 * h)
    np.testing.assert_allclose(jvp, numeric, rtol=1e-6, atol=1e-8)


def test_cholesky_of_an_indefinite_matrix_raises_numpys_error():
    with pytest.raises(np.linalg.LinAlgError):
        fnp.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))


# -- triangular_solve ----------------------------------------------------------------------


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("conjugate_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_every_option(left_side, lower, transpose_a, conjugate_a,
                                       unit_diagonal):
    a = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4)) + 4 * np.eye(4)
    b = RNG.standard_normal((4, 2) if left_side else (2, 4)) + 0j
    x = lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a, conjugate_a=conjugate_a,
                                    unit_diagonal=unit_diagonal)
    m = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        np.fill_diagonal(m, 1)
    m = m.conj() if conjugate_a else m
    m = m.T if transpose_a else m
    np.testing.assert_allclose(m @ x if left_side else x @ m, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lapack", [True, False])
def test_triangular_solve_with_and_without_a_triangular_solver(monkeypatch, lapack):
    # LAPACK's trsm (SciPy, matrix by matrix) where there is one, blocks of LU solves where
    # there is none (no SciPy): the same answers, reading the same triangle.  n = 70 > 64:
    # a stack loops over trsm, and the blocks recurse.
    if not lapack:
        monkeypatch.setattr(backend, "triangular_solver", lambda *args: None)
    n = 70
    a = RNG.standard_normal((2, n, n)) + 1j * RNG.standard_normal((2, n, n)) + n * np.eye(n)
    for left_side, lower, transpose_a, conjugate_a in np.ndindex(2, 2, 2, 2):
        b = RNG.standard_normal((2, n, 3) if left_side else (2, 3, n)) + 0j
        x = lax.linalg.triangular_solve(a, b, left_side=bool(left_side), lower=bool(lower),
                                        transpose_a=bool(transpose_a),
                                        conjugate_a=bool(conjugate_a))
        m = np.tril(a) if lower else np.triu(a)
        m = m.conj() if conjugate_a else m
        m = np.swapaxes(m, -1, -2) if transpose_a else m
        np.testing.assert_allclose(m @ x if left_side else x @ m, b, rtol=1e-10, atol=1e-10)
        assert x.dtype == b.dtype


@pytest.mark.parametrize("blas", [True, False])
def test_triangular_matmul_every_option_with_and_without_blas(monkeypatch, blas):
    # BLAS's trmm (SciPy) on one matrix, matmul of the triangle otherwise: both read only
    # the triangle asked for.
    from functrans.primitives.decompositions import triangular_matmul
    if not blas:
        monkeypatch.setattr(backend, "triangular_multiplier", lambda *args: None)
    for dtype in (np.float32, np.complex128):
        a = RNG.standard_normal((4, 4)).astype(dtype)
        if dtype == np.complex128:
            a = a + 1j * RNG.standard_normal((4, 4))
        for left_side, lower, transpose_a, conjugate_a in np.ndindex(2, 2, 2, 2):
            b = RNG.standard_normal((4, 3) if left_side else (3, 4)).astype(dtype)
            got = triangular_matmul(a, b, left_side=bool(left_side), lower=bool(lower),
                                    transpose_a=bool(transpose_a),
                                    conjugate_a=bool(conjugate_a))
            m = np.tril(a) if lower else np.triu(a)
            m = m.conj() if conjugate_a else m
            m = m.T if transpose_a else m
            assert got.dtype == dtype
            np.testing.assert_allclose(got, m @ b if left_side else b @ m, rtol=1e-5,
                                       atol=1e-5)
    # A stack of matrices larger than 64 x 64 goes matrix by matrix.
    a, b = RNG.standard_normal((2, 70, 70)), RNG.standard_normal((2, 3, 70))
    got = triangular_matmul(a, b, left_side=False, lower=False, transpose_a=True)
    np.testing.assert_allclose(got, b @ np.swapaxes(np.triu(a), -1, -2), rtol=1e-12,
                               atol=1e-12)


def test_triangular_solve_vmap_with_an_unbatched_matrix():
    a = np.tril(RNG.standard_normal((3, 3))) + 3 * np.eye(3)
    bs = RNG.standard_normal((5, 3, 2))
    got = ft.vmap(lambda b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True))(bs)
    np.testing.assert_allclose(got, np.linalg.solve(a, bs), rtol=1e-12)


@pytest.mark.parametrize("a, b, error, match", [
    (np.eye(3), np.ones((2, 2)), ValueError, "must have 3 rows"),
    (np.ones((2, 3)), np.ones((2, 2)), np.linalg.LinAlgError, "square matrices"),
    (np.eye(2, dtype=np.int64), np.ones((2, 2), np.int64), TypeError, "floating or complex"),
    (np.eye(2), np.ones((2, 2), np.float32), TypeError, "same dtype"),
    (np.ones((2, 2, 2)), np.ones((3, 2, 2)), ValueError, "batch"),
])
def test_triangular_solve_errors_teach(a, b, error, match):
    with pytest.raises(error, match=match):
        lax.linalg.triangular_solve(a, b, left_side=True)


# -- lu ------------------------------------------------------------------------------------


def test_lu_factors_with_partial_pivoting():
    a = RNG.standard_normal((2, 5, 5))
    packed, pivots, permutation = lax.linalg.lu(a)
    assert pivots.dtype == permutation.dtype == np.int32
    for k in range(2):
        lower = np.tril(packed[k], -1) + np.eye(5)
        np.testing.assert_allclose(a[k][permutation[k]], lower @ np.triu(packed[k]),
                                   rtol=1e-12, atol=1e-12)
        assert np.all(np.abs(np.tril(packed[k], -1)) <= 1)  # partial pivoting
        # The pivots are the swaps that produce the permutation.
        order = np.arange(5)
        for j, p in enumerate(pivots[k]):
            order[[j, p]] = order[[p, j]]
        np.testing.assert_array_equal(order, permutation[k])


def test_lu_of_a_singular_matrix_has_a_zero_pivot_and_no_error():
    packed, _, _ = lax.linalg.lu(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert packed[1, 1] == 0


# -- solve, inv, det, slogdet --------------------------------------------------------------


def test_solve_follows_numpy2_for_b():
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal(3)
    np.testing.assert_allclose(fnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=1e-12)
    with pytest.raises(ValueError, match=r"b must have shape \(\.\.\., M, K\)"):
        fnp.linalg.solve(a, RNG.standard_normal((2, 3)))  # a stack of matrices, not vectors


def test_solve_holomorphic_gradient():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    g = ft.grad(lambda b: fnp.sum(fnp.linalg.solve(a, b)), holomorphic=True)(b)
    np.testing.assert_allclose(g, np.linalg.inv(a).sum(0), rtol=1e-10)


def test_det_holomorphic_gradient_is_the_cofactor_matrix():
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    g = ft.grad(fnp.linalg.det, holomorphic=True)(a)
    np.testing.assert_allclose(g, _cofactor(a), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5])
def test_det_gradient_at_a_singular_matrix_is_the_finite_cofactor_matrix(n):
    x = RNG.standard_normal((n, n - 1))
    a = x @ RNG.standard_normal((n - 1, n))  # rank n - 1
    g = ft.grad(fnp.linalg.det)(a)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, _cofactor(a), rtol=1e-8, atol=1e-10)


def test_det_of_the_zero_matrix_has_zero_gradient():
    # Rank 0: every cofactor vanishes (n >= 2).
    np.testing.assert_array_equal(ft.grad(fnp.linalg.det)(np.zeros((3, 3))), 0)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_slogdet_at_a_singular_matrix_matches_numpy():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    sign, logabsdet = fnp.linalg.slogdet(a)
    assert sign == 0 and logabsdet == -np.inf
    assert type(fnp.linalg.slogdet(np.eye(2))).__name__ == "SlogdetResult"


def test_inv_and_det_of_integers_are_float64():
    a = np.array([[2, 1], [1, 1]])
    assert fnp.linalg.inv(a).dtype == np.float64
    np.testing.assert_allclose(fnp.linalg.det(a), 1.0)
    assert float(fnp.linalg.det(np.zeros((0, 0)))) == 1.0


def test_det_gradient_at_rank_n_minus_2_is_zero():
    a = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 4))
    np.testing.assert_allclose(ft.grad(fnp.linalg.det)(a), 0, atol=1e-12)


# -- eigh ----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                            "ignore:invalid value:RuntimeWarning")
def test_eigh_at_repeated_eigenvalues_values_finite_vectors_not():
    a = np.diag([1.0, 1.0, 2.0])
    t = RNG.standard_normal((3, 3))
    t = t + t.T
    (_, _), (dv, dw) = ft.jvp(lax.linalg.eigh, (a,), (t,))
    assert np.all(np.isfinite(dw))
    assert not np.all(np.isfinite(dv))  # as in JAX: the eigenvectors have no derivative
    g = ft.grad(lambda a: fnp.sum(fnp.linalg.eigvalsh(a)))(a)  # the trace's gradient
    np.testing.assert_allclose(g, np.eye(3), atol=1e-12)


def test_eigh_primitive_reads_one_triangle():
    x = RNG.standard_normal((3, 3))
    a = x + x.T
    noisy = a + np.triu(RNG.standard_normal((3, 3)), 1)
    for lower, kept in [(True, noisy), (False, noisy.T)]:
        _, w = lax.linalg.eigh(kept, lower=lower, symmetrize_input=False)
        np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12)
    g = ft.grad(lambda y: fnp.sum(lax.linalg.eigh(y, symmetrize_input=False)[1] ** 2))(a)
    assert np.all(np.triu(g, 1) == 0)
    g = ft.grad(lambda y: fnp.sum(fnp.linalg.eigvalsh(y) ** 2))(noisy)
    np.testing.assert_allclose(g, g.T, rtol=1e-12)


def test_eigh_reconstructs_complex_hermitian_matrices():
    x = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))
    a = x + np.swapaxes(x.conj(), -1, -2)
    w, v = fnp.linalg.eigh(a)
    assert w.dtype == np.float64 and v.dtype == np.complex128
    np.testing.assert_allclose((v * w[..., None, :]) @ np.swapaxes(v.conj(), -1, -2), a,
                               atol=1e-12)


def test_eigh_uplo_error_teaches():
    with pytest.raises(ValueError, match="UPLO must be 'L' or 'U'"):
        fnp.linalg.eigh(np.eye(2), UPLO="X")


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_by_blocks_above_the_block_size(lower, transpose_a, left_side):
    n = 150  # solved by halves down to 64
    a = RNG.standard_normal((2, n, n)) + n * np.eye(n)
    b = RNG.standard_normal((2, n, 3) if left_side else (2, 3, n))
    x = lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a)
    m = np.tril(a) if lower else np.triu(a)
    m = np.swapaxes(m, -1, -2) if transpose_a else m
    np.testing.assert_allclose(m @ x if left_side else x @ m, b, atol=1e-12)


# -- qr ------------------------------------------------------------------------------------


def test_qr_matches_numpy_modes():
    a = RNG.standard_normal((5, 3))
    for mode in ("reduced", "complete"):
        q, r = fnp.linalg.qr(a, mode=mode)
        want_q, want_r = np.linalg.qr(a, mode=mode)
        np.testing.assert_allclose(q, want_q, atol=1e-12)
        np.testing.assert_allclose(r, want_r, atol=1e-12)
    np.testing.assert_allclose(fnp.linalg.qr(a, mode="r"), np.linalg.qr(a, mode="r"),
                               atol=1e-12)
    assert type(fnp.linalg.qr(a)).__name__ == "QRResult"


def test_qr_derivative_limits_are_named():
    with pytest.raises(NotImplementedError, match="full_matrices=True"):
        ft.grad(lambda a: fnp.sum(fnp.linalg.qr(a, mode="complete").Q))(
            RNG.standard_normal((4, 2)))
    with pytest.raises(ValueError, match="'raw'"):
        fnp.linalg.qr(np.eye(2), mode="raw")


def test_qr_of_a_wide_matrix_differentiates_as_the_square_block_and_the_rest():
    a, t = RNG.standard_normal((2, 3, 5)), RNG.standard_normal((2, 3, 5))
    (q, r), (dq, dr) = ft.jvp(lambda a: fnp.linalg.qr(a), (a,), (t,))
    h = 1e-6
    plus, minus = np.linalg.qr(a + h * t), np.linalg.qr(a - h * t)
    np.testing.assert_allclose(dq, (plus.Q - minus.Q) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(dr, (plus.R - minus.R) / (2 * h), atol=1e-7)


# -- svd -----------------------------------------------------------------------------------


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("complex_", [False, True])
def test_svd_tangents_rebuild_the_input_tangent(shape, complex_):
    # d(U S Vh) = dU S Vh + U dS Vh + U S dVh = da, whatever gauge dU and dVh are in.
    a = _complex(*shape) if complex_ else RNG.standard_normal(shape)
    t = _complex(*shape) if complex_ else RNG.standard_normal(shape)
    (u, s, vh), (du, ds, dvh) = ft.jvp(lambda a: tuple(fnp.linalg.svd(a, full_matrices=False)),
                                       (a,), (t,))
    rebuilt = (du * s[..., None, :]) @ vh + (u * ds[..., None, :]) @ vh \
        + (u * s[..., None, :]) @ dvh
    np.testing.assert_allclose(rebuilt, t, atol=1e-10)
    # JAX's gauge: Re diag(Uᴴ dU) = 0 (unit columns), Im diag(Uᴴ dU) = Im diag(Uᴴ da V) / s,
    # and diag(Vᴴ dV) = 0.
    uh_du = np.diagonal(u.conj().swapaxes(-1, -2) @ du, axis1=-2, axis2=-1)
    dv = dvh.conj().swapaxes(-1, -2)
    v = vh.conj().swapaxes(-1, -2)
    vh_dv = np.diagonal(vh @ dv, axis1=-2, axis2=-1)
    ds_mat = u.conj().swapaxes(-1, -2) @ t @ v
    np.testing.assert_allclose(uh_du, 1j * np.diagonal(ds_mat, axis1=-2, axis2=-1).imag / s,
                               atol=1e-10)
    np.testing.assert_allclose(vh_dv, 0, atol=1e-10)


def test_svd_values_have_finite_derivatives_at_repeated_singular_values():
    eye = np.eye(3)
    g = ft.grad(lambda a: fnp.sum(fnp.linalg.svdvals(a)))(eye)  # the nuclear norm: U Vᵀ
    np.testing.assert_allclose(g, eye, atol=1e-12)
    for jacobian in (ft.jacfwd, ft.jacrev):
        j = jacobian(fnp.linalg.svdvals)(np.diag([2.0, 1.0, 1.0]))
        np.testing.assert_allclose(j[0], np.diag([1.0, 0.0, 0.0]), atol=1e-12)
        assert np.all(np.isfinite(j))
    # The singular vectors have no derivative there: inf or nan, as in JAX.
    with np.errstate(divide="ignore", invalid="ignore"):
        _, (du, _, _) = ft.jvp(lambda a: tuple(fnp.linalg.svd(a)), (eye,),
                               (RNG.standard_normal((3, 3)),))
    assert not np.all(np.isfinite(du))


def test_svd_full_matrices_derivative_is_for_square_matrices_only():
    a = RNG.standard_normal((4, 3))
    with pytest.raises(NotImplementedError, match="full_matrices=True is implemented for "
                                                  "square matrices only"):
        ft.jvp(lambda a: fnp.linalg.svd(a).U, (a,), (a,))
    # The singular values alone differentiate for every option.
    g = ft.grad(lambda a: fnp.sum(fnp.linalg.svd(a, full_matrices=True, compute_uv=False)))(a)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, atol=1e-12)


def test_decompositions_of_constants_need_no_derivative_rules():
    # A zero tangent asks nothing of the rules that would refuse it (full non-square U,
    # eigenvectors without the opt-in).
    a = RNG.standard_normal((4, 3))
    g = ft.grad(lambda x: x * fnp.sum(fnp.abs(fnp.linalg.svd(a).U)))(2.0)
    assert g == pytest.approx(np.sum(np.abs(np.linalg.svd(a).U)))
    g = ft.grad(lambda x: x * fnp.sum(fnp.abs(lax.linalg.eig(a[:3])[2])))(2.0)
    assert g == pytest.approx(np.sum(np.abs(np.linalg.eig(a[:3]).eigenvectors)))


def test_svd_matches_numpy_and_names_its_result():
    a = _complex(2, 3, 5)
    got, want = fnp.linalg.svd(a), np.linalg.svd(a)
    assert type(got).__name__ == "SVDResult" and got.U.shape == (2, 3, 3)
    assert got.Vh.shape == (2, 5, 5)
    np.testing.assert_allclose(got.S, want.S, rtol=1e-12)
    np.testing.assert_allclose((got.U * got.S[..., None, :]) @ got.Vh[..., :3, :], a,
                               atol=1e-12)


def test_svd_hermitian_takes_the_hermitian_part():
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(fnp.linalg.svd(a, hermitian=True, compute_uv=False),
                               np.linalg.svd((a + a.T) / 2, compute_uv=False), rtol=1e-12)


def test_svd_errors_teach():
    with pytest.raises(TypeError, match="svd: the operand must be a floating or complex"):
        lax.linalg.svd(np.ones((2, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="svd: the operand must be a stack of matrices"):
        lax.linalg.svd(np.ones(3))


# -- pinv, lstsq, matrix_rank, cond --------------------------------------------------------


def _rank_two(m=4, n=3):
    return RNG.standard_normal((m, 2)) @ RNG.standard_normal((2, n))


def test_pinv_of_a_rank_deficient_matrix_matches_numpy_and_differentiates_at_fixed_rank():
    x, y = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 3))
    a = x @ y
    np.testing.assert_allclose(fnp.linalg.pinv(a, rtol=None), np.linalg.pinv(a, rtol=None),
                               atol=1e-12)
    # Along a direction that keeps the rank, the derivative is the finite difference's.
    dx, dy = RNG.standard_normal((4, 2)), RNG.standard_normal((2, 3))
    t = dx @ y + x @ dy
    _, dp = ft.jvp(lambda a: fnp.linalg.pinv(a, 1e-8), (a,), (t,))
    h = 1e-6
    numeric = (np.linalg.pinv((x + h * dx) @ (y + h * dy), 1e-8)
               - np.linalg.pinv((x - h * dx) @ (y - h * dy), 1e-8)) / (2 * h)
    np.testing.assert_allclose(dp, numeric, atol=1e-6)
    assert np.all(np.isfinite(ft.grad(lambda a: fnp.sum(fnp.linalg.pinv(a, 1e-8)))(a)))


def test_pinv_defaults_and_errors_follow_numpy():
    a = np.diag([1.0, 1e-14])
    np.testing.assert_allclose(fnp.linalg.pinv(a), np.linalg.pinv(a))           # rcond 1e-15
    np.testing.assert_allclose(fnp.linalg.pinv(a, rtol=None), np.linalg.pinv(a, rtol=None))
    np.testing.assert_allclose(fnp.linalg.pinv(a, rtol=1e-10), np.diag([1.0, 0.0]))
    with pytest.raises(ValueError, match="pinv: give rcond or rtol, not both"):
        fnp.linalg.pinv(a, 1e-3, rtol=1e-3)


def test_lstsq_of_a_rank_deficient_matrix_is_the_minimum_norm_solution():
    a, b = _rank_two(), RNG.standard_normal((4, 2))
    x, residuals, rank, s = fnp.linalg.lstsq(a, b)
    want = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, want[0], atol=1e-12)
    assert int(rank) == want[2] == 2
    np.testing.assert_allclose(s, want[3], atol=1e-12)
    # NumPy returns no residuals below full rank; functrans returns them (documented).
    assert want[1].shape == (0,)
    np.testing.assert_allclose(residuals, np.sum((b - a @ x) ** 2, axis=0), rtol=1e-12)
    assert np.all(np.isfinite(ft.grad(lambda a: fnp.sum(fnp.linalg.lstsq(a, b)[0]))(a)))


def test_lstsq_errors_teach():
    with pytest.raises(np.linalg.LinAlgError, match="lstsq: a has 3 rows"):
        fnp.linalg.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(np.linalg.LinAlgError, match="lstsq: a must be 2-D"):
        fnp.linalg.lstsq(np.ones((2, 3, 2)), np.ones(3))


@pytest.mark.parametrize("kwargs", [{}, {"tol": 0.5}, {"rtol": 0.1}, {"hermitian": True}])
def test_matrix_rank_matches_numpy(kwargs):
    a = np.stack([_rank_two(3, 3), np.diag([3.0, 1.0, 0.2]), np.zeros((3, 3))])
    a = a + a.swapaxes(-1, -2) if kwargs.get("hermitian") else a
    np.testing.assert_array_equal(fnp.linalg.matrix_rank(a, **kwargs),
                                  np.linalg.matrix_rank(a, **kwargs))
    for v in (np.zeros(3), np.array([0.0, 2.0]), np.array(0.0)):
        assert int(fnp.linalg.matrix_rank(v)) == np.linalg.matrix_rank(v)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy before 2.1 fails on empty matrices here")
def test_empty_matrices_follow_numpy():
    for shape in [(0, 3), (3, 0), (2, 0, 0)]:
        a = np.zeros(shape)
        # rank 0, as NumPy from 2.4.5 gives (before, its largest singular value of none
        # raised "zero-size array to reduction operation maximum")
        rank = fnp.linalg.matrix_rank(a)
        assert np.asarray(rank).dtype.kind == "i"
        np.testing.assert_array_equal(rank, np.zeros(shape[:-2], int))
        assert fnp.linalg.pinv(a).shape == np.linalg.pinv(a).shape
        assert [x.shape for x in fnp.linalg.svd(a)] == [x.shape for x in np.linalg.svd(a)]
    got, want = fnp.linalg.lstsq(np.zeros((0, 2)), np.zeros(0)), np.linalg.lstsq(
        np.zeros((0, 2)), np.zeros(0))
    assert type(got) is tuple and int(got[2]) == want[2] == 0
    np.testing.assert_array_equal(got[0], want[0])


def test_matrix_rank_under_vmap_is_traced():
    a = np.stack([_rank_two(3, 3), np.eye(3)])
    np.testing.assert_array_equal(ft.vmap(fnp.linalg.matrix_rank)(a), [2, 3])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_cond_of_a_singular_matrix_is_inf_and_of_nan_is_nan():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    for p in (1, "fro", np.inf, -2):
        assert fnp.linalg.cond(singular, p) == np.linalg.cond(singular, p)
    assert fnp.linalg.cond(np.zeros((2, 2))) == np.inf == np.linalg.cond(np.zeros((2, 2)))
    batch = np.stack([singular, np.eye(2)])
    np.testing.assert_array_equal(fnp.linalg.cond(batch, 1), [np.inf, 1.0])
    assert np.isnan(fnp.linalg.cond(np.array([[np.nan, 0.0], [0.0, 1.0]]), 1))


def test_cond_derivative_is_that_of_the_singular_value_ratio():
    a = RNG.standard_normal((3, 3))
    u, s, vh = np.linalg.svd(a)
    want = (np.outer(u[:, 0], vh[0]) * s[2] - np.outer(u[:, 2], vh[2]) * s[0]) / s[2] ** 2
    np.testing.assert_allclose(ft.grad(fnp.linalg.cond)(a), want, atol=1e-10)


# -- eig -----------------------------------------------------------------------------------


def test_eig_of_a_rotation_has_complex_eigenvalues_with_derivatives():
    a = np.array([[0.5, -2.0], [1.0, 0.3]])
    w, v = fnp.linalg.eig(a)
    want = np.linalg.eig(a)
    np.testing.assert_allclose(w, want.eigenvalues, rtol=1e-12)   # LAPACK's order
    np.testing.assert_allclose(v, want.eigenvectors, rtol=1e-12)
    assert w.dtype == np.complex128 and np.all(w.imag != 0)
    t = RNG.standard_normal((2, 2))
    (_, _), (dw, dv) = ft.jvp(lambda a: tuple(fnp.linalg.eig(a)), (a,), (t,))
    h = 1e-6
    plus, minus = np.linalg.eig(a + h * t), np.linalg.eig(a - h * t)
    np.testing.assert_allclose(dw, (plus.eigenvalues - minus.eigenvalues) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(dv, (plus.eigenvectors - minus.eigenvectors) / (2 * h),
                               atol=1e-7)


def test_eig_outputs_are_complex_even_for_real_eigenvalues():
    w = fnp.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]], dtype=np.float32))
    assert w.dtype == np.complex64
    np.testing.assert_allclose(w, [2.0, 3.0])


def test_eig_tangents_keep_lapacks_normalization():
    a, t = _complex(4, 4), _complex(4, 4)
    (w, v), (dw, dv) = ft.jvp(lambda a: tuple(fnp.linalg.eig(a)), (a,), (t,))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1, rtol=1e-12)
    k = np.argmax(np.abs(v), axis=0)
    columns = np.arange(4)
    np.testing.assert_allclose(v[k, columns].imag, 0, atol=1e-15)
    np.testing.assert_allclose(np.real(np.sum(v.conj() * dv, axis=0)), 0, atol=1e-10)
    np.testing.assert_allclose(dv[k, columns].imag, 0, atol=1e-10)
    # and satisfy the differentiated eigenvalue equation: da v + a dv = dv w + v dw.
    np.testing.assert_allclose(t @ v + a @ dv, dv * w + v * dw, atol=1e-10)


def test_eig_left_eigenvectors_and_their_derivatives():
    a, t = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    f = lambda a: tuple(lax.linalg.eig(a, enable_eigvec_derivs=True))  # noqa: E731
    (w, vl, vr), (dw, dvl, dvr) = ft.jvp(f, (a,), (t,))
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=1e-12)
    h = 1e-6
    np.testing.assert_allclose(dvl, (f(a + h * t)[1] - f(a - h * t)[1]) / (2 * h), atol=1e-7)


def test_eig_vector_derivatives_need_the_opt_in_in_lax():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        ft.jvp(lambda a: lax.linalg.eig(a)[2], (np.eye(2),), (np.eye(2),))
    # The eigenvalues alone need none.
    _, dw = ft.jvp(lambda a: lax.linalg.eig(a, compute_left_eigenvectors=False,
                                            compute_right_eigenvectors=False)[0],
                   (np.diag([1.0, 2.0]),), (np.ones((2, 2)),))
    np.testing.assert_allclose(dw, [1.0, 1.0])


def test_eig_errors_teach():
    with pytest.raises(np.linalg.LinAlgError, match="eig: expected a stack of square"):
        fnp.linalg.eig(np.ones((2, 3)))


# -- norm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [None, 2, 3, 1.5])
def test_norm_has_a_zero_subgradient_at_the_zero_vector(ord):
    g = ft.grad(lambda x: fnp.linalg.norm(x, ord))(np.zeros(3))
    np.testing.assert_array_equal(g, np.zeros(3))
    g = ft.grad(lambda x: fnp.linalg.norm(x, "fro" if ord is None else None, (0, 1)))(
        np.zeros((2, 2)))
    np.testing.assert_array_equal(g, np.zeros((2, 2)))


def test_norm_matches_numpy_for_every_order_on_complex_input():
    x = _complex(2, 3, 4)
    for ord in (None, 0, 1, 2, -1, 3, np.inf, -np.inf):
        np.testing.assert_allclose(fnp.linalg.norm(x, ord, axis=1),
                                   np.linalg.norm(x, ord, axis=1), rtol=1e-12)
    for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(fnp.linalg.norm(x, ord, axis=(2, 1), keepdims=True),
                                   np.linalg.norm(x, ord, axis=(2, 1), keepdims=True),
                                   rtol=1e-12)


def test_nuclear_norm_gradient_is_u_vh():
    a = RNG.standard_normal((4, 3))
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(ft.grad(lambda a: fnp.linalg.norm(a, "nuc"))(a), u @ vh,
                               atol=1e-12)


# -- against JAX (optional: skipped where JAX is not installed) ------------------------------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_svd_and_eig_tangents_are_jaxs(shape):
    jax = _jax()
    a, t = _complex(*shape), _complex(*shape)
    mine = ft.jvp(lambda a: lax.linalg.svd(a, full_matrices=False), (a,), (t,))
    theirs = jax.jvp(lambda a: jax.lax.linalg.svd(a, full_matrices=False), (a,), (t,))
    for x, y in zip(mine[0] + mine[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(x, np.asarray(y), atol=1e-12)
    square = a[..., :3, :3]
    mine = ft.jvp(lambda a: lax.linalg.eig(a, enable_eigvec_derivs=True), (square,),
                  (t[..., :3, :3],))
    theirs = jax.jvp(lambda a: jax.lax.linalg.eig(a, enable_eigvec_derivs=True), (square,),
                     (t[..., :3, :3],))
    for x, y in zip(mine[0] + mine[1], theirs[0] + theirs[1]):
        np.testing.assert_allclose(x, np.asarray(y), atol=1e-12)


def test_pinv_tangent_is_jaxs():
    jax = _jax()
    a, t = _rank_two(), RNG.standard_normal((4, 3))
    _, mine = ft.jvp(lambda a: fnp.linalg.pinv(a, rtol=1e-8), (a,), (t,))
    _, theirs = jax.jvp(lambda a: jax.numpy.linalg.pinv(a, rtol=1e-8), (a,), (t,))
    np.testing.assert_allclose(mine, np.asarray(theirs), atol=1e-10)
