"""Targeted tests of the linear-algebra family: the documented choices (which triangle is
read, symmetrized Cholesky gradients, the finite det gradient at singular matrices),
LU's outputs, holomorphic derivatives, and the errors.  The sweep (values, derivatives in
both modes to second order, vmap, float32, complex) is in tests/cases_linalg.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

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
