"""functrans.scipy.linalg and the rest of functrans.numpy.linalg: what the random sweep
(tests/cases_scipy_linalg.py: values, both modes to second order, vmap, float32, complex)
does not reach: expm's derivative against finite differences and SciPy's expm_frechet,
factor/solve round trips (with SciPy's own factors too), pivots that are traced, the
order multi_dot chooses, import without SciPy, and the errors."""
from __future__ import annotations

import inspect
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg as sl

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
ROOT = str(pathlib.Path(__file__).resolve().parents[1])
RNG = np.random.default_rng(20261123)


def _matrix(n=4, scale=1.0, complex_=False):
    a = RNG.standard_normal((n, n)) * scale
    return a + 1j * RNG.standard_normal((n, n)) * scale if complex_ else a


def _spd(n=4):
    a = RNG.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


# -- expm ----------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-3, 1.0, 30.0])
def test_expm_values_match_scipy_over_norms(scale):
    a = _matrix(scale=scale)
    np.testing.assert_allclose(fsl.expm(a), sl.expm(a), rtol=1e-11, atol=1e-14)


def test_expm_of_a_matrix_far_from_normal_is_not_over_scaled():
    """Its norm (1e8) would ask for 25 squarings and lose 2²⁵ u; the norms of its powers
    (zero) ask for none (Al-Mohy and Higham 2009, as SciPy)."""
    a = np.array([[0.0, 1e8], [0.0, 0.0]])
    np.testing.assert_allclose(fsl.expm(a), [[1.0, 1e8], [0.0, 1.0]], rtol=1e-14)
    b = np.array([[1.0, 1e8], [0.0, -1.0]])
    np.testing.assert_allclose(fsl.expm(b), sl.expm(b), rtol=1e-13)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("scale", [0.5, 5.0])
def test_expm_jvp_and_vjp_are_scipys_frechet_derivative(scale, complex_):
    a, e = _matrix(scale=scale, complex_=complex_), _matrix(complex_=complex_)
    want = sl.expm_frechet(a, e, compute_expm=False)
    value, tangent = ft.jvp(fsl.expm, (a,), (e,))
    np.testing.assert_allclose(value, sl.expm(a), rtol=1e-11)
    np.testing.assert_allclose(tangent, want, rtol=1e-10, atol=1e-12)
    # The transpose is the linear (unconjugated) one: <c, L(a, e)> = <L(aᵀ, c), e>.
    c = _matrix(complex_=complex_)
    (ct,) = ft.vjp(fsl.expm, a)[1](c)
    np.testing.assert_allclose(ct, sl.expm_frechet(a.T, c, compute_expm=False), rtol=1e-10,
                               atol=1e-12)


def test_expm_gradient_matches_central_differences():
    a, w = _matrix(3), _matrix(3)
    grad = ft.grad(lambda a: fnp.sum(fsl.expm(a) * w))(a)
    h = 1e-6
    numeric = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = h
        numeric[i] = (np.sum(sl.expm(a + d) * w) - np.sum(sl.expm(a - d) * w)) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-7, atol=1e-8)


def test_expm_second_derivative_matches_differences_of_frechet():
    a, e = _matrix(3), _matrix(3)
    # d²/dt² expm(a + t e) at 0, by forward over forward against a difference of SciPy's L
    second = ft.jvp(lambda a: ft.jvp(fsl.expm, (a,), (e,))[1], (a,), (e,))[1]
    h = 1e-5
    numeric = (sl.expm_frechet(a + h * e, e, compute_expm=False)
               - sl.expm_frechet(a - h * e, e, compute_expm=False)) / (2 * h)
    np.testing.assert_allclose(second, numeric, rtol=1e-6, atol=1e-8)
    # and reverse over forward agrees with forward over forward
    w = _matrix(3)
    hess_w = ft.grad(lambda a: fnp.sum(w * ft.jvp(fsl.expm, (a,), (e,))[1]))(a)
    np.testing.assert_allclose(np.sum(hess_w * e), np.sum(w * second), rtol=1e-9)


def test_expm_batch_members_take_their_own_number_of_squarings():
    a = np.stack([_matrix(3, 0.01), _matrix(3, 50.0)])
    np.testing.assert_allclose(fsl.expm(a), np.stack([sl.expm(m) for m in a]), rtol=1e-10)
    np.testing.assert_allclose(ft.vmap(fsl.expm)(a), fsl.expm(a), rtol=1e-13)


def test_expm_keeps_float32_and_the_derivative_too():
    a = _matrix(3).astype(np.float32)
    assert fsl.expm(a).dtype == np.float32
    assert ft.grad(lambda a: fnp.sum(fsl.expm(a)))(a).dtype == np.float32


def test_expm_frechet_returns_scipys_pair():
    a, e = _matrix(), _matrix()
    value, frechet = fsl.expm_frechet(a, e)
    want_value, want_frechet = sl.expm_frechet(a, e)
    np.testing.assert_allclose(value, want_value, rtol=1e-11)
    np.testing.assert_allclose(frechet, want_frechet, rtol=1e-10, atol=1e-12)


# -- factor and solve round trips ----------------------------------------------------------


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_round_trip_and_scipys_factor(lower):
    a, b = _spd(5), RNG.standard_normal((5, 2))
    x = fsl.cho_solve(fsl.cho_factor(a, lower=lower), b)
    np.testing.assert_allclose(a @ x, b, rtol=1e-11, atol=1e-12)
    # SciPy's factor keeps a's entries in its other triangle; cho_solve must not read them.
    np.testing.assert_allclose(fsl.cho_solve(sl.cho_factor(a, lower=lower), b), x, rtol=1e-12)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve_round_trip_and_scipys_factor(trans):
    a = _matrix(5, complex_=True)
    b = RNG.standard_normal((5, 3)) + 0j
    x = fsl.lu_solve(fsl.lu_factor(a), b, trans=trans)
    op = [a, a.T, a.conj().T][trans]
    np.testing.assert_allclose(op @ x, b, rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(fsl.lu_solve(sl.lu_factor(a), b, trans=trans), x, rtol=1e-12)


def test_lu_factor_pivots_are_scipys():
    a = _matrix(6)
    packed, piv = fsl.lu_factor(a)
    want_packed, want_piv = sl.lu_factor(a)
    np.testing.assert_array_equal(piv, want_piv)
    assert piv.dtype == np.int32
    np.testing.assert_allclose(packed, want_packed, rtol=1e-12)


def test_lu_solve_with_traced_pivots():
    """Factored inside the transform, the pivots are tracers: the permutation is rebuilt
    from them with array operations."""
    a = np.stack([_matrix(4), _matrix(4)[::-1]])
    b = RNG.standard_normal((2, 4))
    batched = ft.vmap(lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b))(a, b)
    np.testing.assert_allclose(batched, np.stack([np.linalg.solve(m, v) for m, v in zip(a, b)]),
                               rtol=1e-11)
    jaxpr = ft.make_jaxpr(lambda a, b: fsl.lu_solve(fsl.lu_factor(a), b))(a[0], b[0])
    np.testing.assert_allclose(ft.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, a[0], b[0])[0],
                               np.linalg.solve(a[0], b[0]), rtol=1e-11)


def test_lu_gradient_flows_through_the_factors():
    a = _matrix(3)
    grad = ft.grad(lambda a: fnp.sum(fsl.lu_solve(fsl.lu_factor(a), np.ones(3))))(a)
    want = ft.grad(lambda a: fnp.sum(fnp.linalg.solve(a, np.ones(3))))(a)
    np.testing.assert_allclose(grad, want, rtol=1e-11)


def test_solve_sym_reads_one_triangle_as_scipy():
    a = _spd(3)
    junk = np.triu(RNG.standard_normal((3, 3)), 1) * 100
    b = RNG.standard_normal(3)
    for assume in ("sym", "pos", "symmetric", "positive definite"):
        np.testing.assert_allclose(fsl.solve(a + junk, b, lower=True, assume_a=assume),
                                   np.linalg.solve(a, b), rtol=1e-11)
    grad = ft.grad(lambda m: fnp.sum(fsl.solve(m, b, lower=True, assume_a="sym")))(a + junk)
    assert np.all(np.triu(grad, 1) == 0), "the unread triangle has a zero derivative"


def test_scipy_cholesky_reads_one_triangle_and_numpy_symmetrizes():
    a = _spd(3)
    upper_junk = a + np.triu(np.ones((3, 3)), 1)
    np.testing.assert_allclose(fsl.cholesky(upper_junk, lower=True), sl.cholesky(a, lower=True))
    grad = ft.grad(lambda m: fsl.cholesky(m, lower=True)[2, 2])(a)
    assert np.all(np.triu(grad, 1) == 0)


# -- special matrices ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 4, 8, 64])
@pytest.mark.parametrize("dtype", [int, np.float32, np.complex128])
def test_hadamard_is_scipys_and_orthogonal(n, dtype):
    h = fsl.hadamard(n, dtype)
    want = sl.hadamard(n, dtype)
    np.testing.assert_array_equal(h, want)
    assert h.dtype == want.dtype
    np.testing.assert_array_equal(h @ h.T, n * np.eye(n))


@pytest.mark.parametrize("n", range(1, 9))
@pytest.mark.parametrize("full", [False, True])
def test_helmert_is_scipys(n, full):
    h = fsl.helmert(n, full)
    np.testing.assert_allclose(h, sl.helmert(n, full), rtol=1e-14, atol=1e-15)
    assert h.shape == ((n, n) if full else (n - 1, n)) and h.dtype == np.float64
    np.testing.assert_allclose(h @ h.T, np.eye(h.shape[0]), atol=1e-14)


@pytest.mark.parametrize("n", range(0, 14))
def test_hilbert_and_its_exact_inverse(n):
    np.testing.assert_array_equal(fsl.hilbert(n), sl.hilbert(n))
    inverse = fsl.invhilbert(n)
    assert inverse.dtype == np.float64 and inverse.shape == (n, n)
    # exact integers rounded once: SciPy's exact answer, converted
    np.testing.assert_array_equal(inverse, np.array(sl.invhilbert(n, exact=True), dtype=float))
    np.testing.assert_allclose(inverse, sl.invhilbert(n), rtol=1e-12)
    if 0 < n <= 5:
        np.testing.assert_allclose(fsl.hilbert(n) @ inverse, np.eye(n), atol=1e-9)


def test_invhilbert_past_float64_is_infinite_as_scipys():
    with np.errstate(over="ignore"):
        ours, theirs = fsl.invhilbert(230), sl.invhilbert(230)
    np.testing.assert_array_equal(np.isinf(ours), np.isinf(theirs))
    assert np.isinf(ours).any() and np.isfinite(ours).any()
    finite = np.isfinite(ours)
    np.testing.assert_allclose(ours[finite], theirs[finite], rtol=1e-10)


@pytest.mark.parametrize("kind", [None, "symmetric", "lower", "upper"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 40])
def test_pascal_and_invpascal_are_scipys_exact_values(n, kind):
    scipy_kind = kind or "symmetric"
    p, q = fsl.pascal(n, kind), fsl.invpascal(n, kind)
    assert p.dtype == q.dtype == np.float64 and p.shape == q.shape == (n, n)
    np.testing.assert_array_equal(p, np.array(sl.pascal(n, scipy_kind), dtype=float))
    np.testing.assert_array_equal(q, np.array(sl.invpascal(n, scipy_kind), dtype=float))
    if n <= 12:  # exact in float64 still
        np.testing.assert_array_equal(p @ q, np.eye(n))


def test_pascal_past_float64_is_infinite():
    p = fsl.pascal(600)
    assert np.isinf(p[-1, -1]) and p[-1, -1] > 0 and np.isfinite(p[300, 300])
    assert p[300, 300] == float(sl.pascal(301, exact=True)[300, 300])


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16])
@pytest.mark.parametrize("scale", [None, "sqrtn", "n"])
def test_dft_is_scipys_and_is_the_fft(n, scale):
    w = fsl.dft(n, scale)
    assert w.dtype == np.complex128
    np.testing.assert_allclose(w, sl.dft(n, scale), rtol=1e-12, atol=1e-13)
    if n:
        x = RNG.standard_normal(n)
        norm = {None: "backward", "sqrtn": "ortho", "n": "forward"}[scale]
        np.testing.assert_allclose(w @ x, np.fft.fft(x, norm=norm), atol=1e-12)


def test_dft_dtype_and_accuracy_of_large_exponents():
    assert fsl.dft(4, dtype=np.complex64).dtype == np.complex64
    w = fsl.dft(1000)   # i j reduced modulo n first: w[999, 999] = w[1, 1] exactly
    assert w[999, 999] == w[1, 1]


def _polynomial_roots_sorted(x):
    return np.sort_complex(np.asarray(x, dtype=complex).round(8))


@pytest.mark.parametrize("constructor", ["companion", "fiedler_companion"])
def test_companion_matrices_have_the_polynomials_roots(constructor):
    a = np.array([2.0, -3.0, -11.0, 12.0, 4.0, -4.0])
    m = getattr(fsl, constructor)(a)
    np.testing.assert_allclose(_polynomial_roots_sorted(np.linalg.eigvals(m)),
                               _polynomial_roots_sorted(np.roots(a)), atol=1e-7)
    np.testing.assert_array_equal(m, getattr(sl, constructor)(a))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("m,n", [(1, 1), (1, 4), (4, 1), (3, 5), (5, 3), (4, 4), (2, 7)])
def test_convolution_matrix_convolves(mode, m, n):
    a, v = RNG.standard_normal(m), RNG.standard_normal(n)
    t = fsl.convolution_matrix(a, n, mode)
    np.testing.assert_allclose(t @ v, np.convolve(a, v, mode), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(t, sl.convolution_matrix(a, n, mode))


INTEGER_CONSTRUCTORS = {  # name -> (arguments, the dtype of the result)
    "toeplitz": ((np.array([1, 2, 3]), np.array([0, 4, 5])), np.int64),
    "hankel": ((np.array([1, 2, 3]), np.array([0, 4, 5, 6])), np.int64),
    "circulant": ((np.array([1, 2, 3]),), np.int64),
    "fiedler": ((np.array([1, 4, 12]),), np.int64),
    "leslie": ((np.array([1, 2, 3]), np.array([4, 5])), np.int64),
    "companion": ((np.array([1, 2, 3]),), np.float64),
    "fiedler_companion": ((np.array([1, 2, 3, 4]),), np.float64),
}


@pytest.mark.parametrize("name", INTEGER_CONSTRUCTORS)
def test_integer_inputs_give_scipys_dtype_and_values(name):
    args, dtype = INTEGER_CONSTRUCTORS[name]
    ours, theirs = getattr(fsl, name)(*args), getattr(sl, name)(*args)
    assert ours.dtype == dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_convolution_matrix_keeps_integers():
    t = fsl.convolution_matrix(np.array([1, 2, 3]), 4, "same")
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t, sl.convolution_matrix(np.array([1, 2, 3]), 4, "same"))


def test_mixed_dtypes_promote():
    assert fsl.toeplitz(np.array([1, 2]), np.array([0.5, 1.5])).dtype == np.float64
    assert fsl.leslie(np.array([1, 2]), np.array([0.5j])).dtype == np.complex128
    assert fsl.toeplitz(np.ones(2, np.float32)).dtype == np.float32


def test_toeplitz_without_r_is_hermitian():
    c = np.array([1.0, 2 + 1j, 1 - 2j])
    t = fsl.toeplitz(c)
    np.testing.assert_array_equal(t, t.conj().T)
    np.testing.assert_array_equal(t, sl.toeplitz(c))


def test_scalars_are_one_by_one_matrices():
    for name in ("toeplitz", "circulant", "fiedler"):
        np.testing.assert_array_equal(getattr(fsl, name)(3.0), getattr(sl, name)(3.0))


def test_leading_axes_broadcast_between_c_and_r():
    c, r = RNG.standard_normal((2, 3)), RNG.standard_normal((4, 1, 5))
    for name in ("toeplitz", "hankel"):
        got = getattr(fsl, name)(c, r)
        assert got.shape == (4, 2, 3, 5)
        for i, j in np.ndindex(4, 2):
            np.testing.assert_array_equal(got[i, j], getattr(sl, name)(c[j], r[i, 0]))
    f, s = RNG.standard_normal((3, 1, 4)), RNG.standard_normal((2, 3))
    got = fsl.leslie(f, s)
    assert got.shape == (3, 2, 4, 4)
    np.testing.assert_array_equal(got[2, 1], sl.leslie(f[2, 0], s[1]))


def test_empty_vectors_give_empty_matrices():
    assert fsl.toeplitz(np.ones(0)).shape == (0, 0)
    assert fsl.toeplitz(np.ones(2), np.ones(0)).shape == (2, 0)
    assert fsl.hankel(np.ones((3, 0))).shape == (3, 0, 0)
    assert fsl.circulant(np.ones(0)).shape == (0, 0)
    assert fsl.fiedler_companion(np.ones(1)).shape == (0, 0)


def test_toeplitz_gradient_counts_each_entry():
    """Linear: the gradient of the sum is how often each entry appears, and r[0] (never
    read) gets zero."""
    c, r = RNG.standard_normal(4), RNG.standard_normal(3)
    grad_c, grad_r = ft.grad(lambda c, r: fnp.sum(fsl.toeplitz(c, r)), argnums=(0, 1))(c, r)
    np.testing.assert_array_equal(grad_c, [3, 3, 2, 1])
    np.testing.assert_array_equal(grad_r, [0, 2, 1])
    grad_h = ft.grad(lambda c, r: fnp.sum(fsl.hankel(c, r)), argnums=1)(c, r)
    np.testing.assert_array_equal(grad_h, [0, 2, 1])


def test_companion_gradient_is_the_quotients():
    a = np.array([2.0, 3.0, -4.0])
    grad = ft.grad(lambda a: fsl.companion(a)[0, 1])(a)    # -a[2] / a[0]
    np.testing.assert_allclose(grad, [a[2] / a[0] ** 2, 0.0, -1 / a[0]])


def test_array_constructors_under_jit_and_vmap():
    c, r = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 5))
    for f in (fsl.toeplitz, fsl.hankel, fsl.leslie):
        args = (c, r[:, :3]) if f is fsl.leslie else (c, r)
        eager = f(*args)
        np.testing.assert_array_equal(ft.jit(f)(*args), eager)
        np.testing.assert_array_equal(ft.vmap(f)(*args), eager)
    for f in (fsl.circulant, fsl.companion, fsl.fiedler, fsl.fiedler_companion):
        np.testing.assert_array_equal(ft.jit(f)(c), f(c))
        np.testing.assert_array_equal(ft.vmap(f)(c), f(c))
    conv = ft.jit(fsl.convolution_matrix, static_argnums=(1, 2))
    np.testing.assert_array_equal(conv(c, 3, "valid"), fsl.convolution_matrix(c, 3, "valid"))
    np.testing.assert_array_equal(ft.vmap(lambda a: fsl.convolution_matrix(a, 2))(c),
                                  fsl.convolution_matrix(c, 2))


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("complex_", [False, True])
def test_polar_factors(side, shape, complex_):
    a = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if complex_ else 0)
    u, p = fsl.polar(a, side)
    np.testing.assert_allclose(u @ p if side == "right" else p @ u, a, atol=1e-12)
    np.testing.assert_allclose(p, np.swapaxes(p, -1, -2).conj(), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(p) > -1e-12)
    m, n = shape[-2:]
    gram = np.swapaxes(u, -1, -2).conj() @ u if m >= n else u @ np.swapaxes(u, -1, -2).conj()
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(min(m, n)), gram.shape), atol=1e-12)
    for k in np.ndindex(shape[:-2]):
        want_u, want_p = sl.polar(a[k], side)
        np.testing.assert_allclose(u[k], want_u, atol=1e-12)
        np.testing.assert_allclose(p[k], want_p, atol=1e-12)


def test_polar_methods_agree_and_the_iterations_keywords_are_accepted():
    a = _matrix(3)
    u, p = fsl.polar(a)
    u_svd, p_svd = fsl.polar(a, method="svd", eps=1e-3, max_iterations=2)
    np.testing.assert_array_equal(u, u_svd)
    np.testing.assert_array_equal(p, p_svd)


def _central_gradient(f, a, h=1e-6):
    """The gradient of the real function f by central differences (Wirtinger's convention
    for complex a: d/d re + i d/d im, conjugated as functrans's grad gives it)."""
    grad = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        for step in (1, 1j) if np.iscomplexobj(a) else (1,):
            d = np.zeros_like(a)
            d[i] = h * step
            grad[i] += step * (f(a + d) - f(a - d)) / (2 * h)
    return np.conj(grad)


def _repeated_singular_values(shape, complex_):
    """2 times a matrix with orthonormal columns (or rows): every singular value is 2."""
    k = max(shape)
    z = RNG.standard_normal((k, k)) + (1j * RNG.standard_normal((k, k)) if complex_ else 0)
    return 2.0 * np.linalg.qr(z)[0][:shape[0], :shape[1]]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("repeated", [False, True], ids=["distinct", "repeated"])
@pytest.mark.parametrize("factor", [0, 1], ids=["u", "p"])
def test_polar_gradient_matches_central_differences(side, shape, complex_, repeated, factor):
    # u = a (aᴴa)^(-1/2) and p are smooth wherever a has full rank, also where singular values
    # repeat (2 * an orthogonal matrix), where the SVD's own rule divides by sᵢ² - sⱼ² = 0
    if repeated:
        a = _repeated_singular_values(shape, complex_)
    else:
        a = RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if complex_ else 0)
    w = RNG.standard_normal(sl.polar(a, side)[factor].shape)
    grad = ft.grad(lambda a: fnp.real(fnp.sum(fsl.polar(a, side)[factor] * w)))(a)
    numeric = _central_gradient(lambda a: np.real(np.sum(sl.polar(a, side)[factor] * w)), a)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_polar_jvp_at_repeated_singular_values_is_a_tangent_of_the_factors():
    # along any direction, du keeps u's columns orthonormal (uᴴdu skew) and dp Hermitian
    a, da = 2.0 * np.eye(3), RNG.standard_normal((3, 3))
    (u, p), (du, dp) = ft.jvp(fsl.polar, (a,), (da,))
    np.testing.assert_allclose(u.T @ du, -(u.T @ du).T, atol=1e-12)
    np.testing.assert_allclose(dp, dp.T, atol=1e-12)
    np.testing.assert_allclose(du @ p + u @ dp, da, atol=1e-12)     # d(u p) = da


# -- numpy.linalg additions ----------------------------------------------------------------


def test_multi_dot_multiplies_in_the_cheapest_order():
    a, b, c = np.ones((10, 100)), np.ones((100, 5)), np.ones((5, 50))
    jaxpr = ft.make_jaxpr(lambda a, b, c: fnp.linalg.multi_dot([a, b, c]))(a, b, c)
    products = [e.outvars[0].aval.shape for e in jaxpr.jaxpr.eqns
                if e.primitive.name == "dot_general"]
    assert products == [(10, 5), (10, 50)]     # (a b) c: 7,500 multiplications, not 75,000
    jaxpr = ft.make_jaxpr(lambda a, b, c: fnp.linalg.multi_dot([a, b, c]))(c.T, b.T, a.T)
    products = [e.outvars[0].aval.shape for e in jaxpr.jaxpr.eqns
                if e.primitive.name == "dot_general"]
    assert products == [(5, 10), (50, 10)]     # a (b c)


def test_matrix_power_keeps_integers_and_matches_numpy():
    a = np.array([[1, 2], [3, 4]])
    for n in (0, 1, 2, 5, 12):
        got = fnp.linalg.matrix_power(a, n)
        np.testing.assert_array_equal(got, np.linalg.matrix_power(a, n))
        assert got.dtype == np.int64
    np.testing.assert_allclose(fnp.linalg.matrix_power(a, -3), np.linalg.matrix_power(a, -3))


def test_vector_norm_of_a_scalar_and_of_all_axes():
    x = RNG.standard_normal((2, 3))
    assert float(fnp.linalg.vector_norm(np.float64(-2.0))) == 2.0
    np.testing.assert_allclose(fnp.linalg.vector_norm(x, axis=(1, 0)), np.linalg.norm(x))


@pytest.mark.parametrize("call,error,match", [
    (lambda: fnp.linalg.matrix_power(np.eye(2), 1.5), TypeError, "matrix_power: the exponent"),
    (lambda: fnp.linalg.matrix_power(np.ones((2, 3)), 2), np.linalg.LinAlgError, "square"),
    (lambda: fnp.linalg.multi_dot([np.eye(2)]), ValueError, "at least two"),
    (lambda: fnp.linalg.multi_dot([np.eye(2), np.ones((3, 3))]), ValueError, "not aligned"),
    (lambda: fnp.linalg.multi_dot([np.eye(2), np.ones((2, 2, 2)), np.eye(2)]), ValueError,
     "must be 2-D"),
    (lambda: fnp.linalg.cross(np.ones(2), np.ones(3)), ValueError, "cross: x1 must have 3"),
    (lambda: fnp.linalg.outer(np.ones((2, 2)), np.ones(2)), ValueError, "outer: x1"),
    (lambda: fnp.linalg.tensorinv(np.ones((2, 3)), 1), np.linalg.LinAlgError, "tensorinv"),
    (lambda: fnp.linalg.tensorsolve(np.ones((2, 3)), np.ones(2)), np.linalg.LinAlgError,
     "tensorsolve"),
    (lambda: fnp.linalg.matrix_transpose(np.ones(3)), ValueError, "matrix_transpose"),
    (lambda: fsl.solve_triangular(np.eye(2), np.ones(2), trans=3), ValueError,
     "solve_triangular: trans"),
    (lambda: fsl.solve_triangular(np.eye(2), np.ones(3)), ValueError, "solve_triangular: a"),
    (lambda: fsl.cho_solve(np.eye(2), np.ones(2)), TypeError, "cho_solve: the first"),
    (lambda: fsl.lu_solve(np.eye(2), np.ones(2)), TypeError, "lu_solve: the first"),
    (lambda: fsl.lu(np.ones((2, 3))), NotImplementedError, "lu: only square"),
    (lambda: fsl.solve(np.eye(2), np.ones(2), assume_a="banded"), ValueError, "assume_a"),
    (lambda: fsl.eigh(np.eye(2), np.eye(2)), NotImplementedError, "generalized"),
    (lambda: fsl.qr(np.eye(2), pivoting=True), NotImplementedError, "pivoting"),
    (lambda: fsl.qr(np.eye(2), mode="raw"), ValueError, "qr: mode"),
    (lambda: fsl.expm(np.ones((2, 3))), ValueError, "expm: A must be a square"),
    (lambda: fsl.expm_frechet(np.eye(2), np.eye(3)), ValueError, "expm_frechet: E"),
    (lambda: fsl.block_diag(np.ones((1, 1, 1))), ValueError, "block_diag: block 0"),
    (lambda: fsl.toeplitz(np.ones((2, 3)), np.ones((3, 3))), ValueError,
     r"toeplitz: the leading \(batch\) axes of c \(2, 3\), r \(3, 3\)"),
    (lambda: fsl.hankel(3.0), ValueError, r"hankel: c must have at least one axis.*\(\)"),
    (lambda: fsl.hankel(np.ones(2), 1.0), ValueError, "hankel: r must have at least one"),
    (lambda: fsl.leslie(np.ones(1), np.ones(0)), ValueError,
     r"leslie: f must have at least 2 entries.*\(1,\)"),
    (lambda: fsl.leslie(np.ones(3), np.ones(3)), ValueError,
     r"leslie: s must have one entry fewer.*\(3,\)"),
    (lambda: fsl.companion(np.ones(1)), ValueError, r"companion: a must have at least 2.*\(1,\)"),
    (lambda: fsl.fiedler_companion(np.ones((2, 0))), ValueError,
     r"fiedler_companion: a must have at least 1 entry.*\(2, 0\)"),
    (lambda: fsl.convolution_matrix(np.ones(3), 0), ValueError,
     "convolution_matrix: n must be at least 1, got 0"),
    (lambda: fsl.convolution_matrix(np.ones(3), 2, "circular"), ValueError,
     "convolution_matrix: mode must be one of"),
    (lambda: fsl.convolution_matrix(np.ones(0), 2), ValueError,
     r"convolution_matrix: a must have at least 1 entry.*\(0,\)"),
    (lambda: fsl.convolution_matrix(2.0, 2), ValueError, "convolution_matrix: a must have at"),
    (lambda: fsl.hadamard(6), ValueError, "hadamard: n must be a power of two.*got 6"),
    (lambda: fsl.hadamard(0), ValueError, "hadamard: n must be at least 1, got 0"),
    (lambda: fsl.helmert(0), ValueError, "helmert: n must be at least 1, got 0"),
    (lambda: fsl.hilbert(-1), ValueError, "hilbert: n must be at least 0, got -1"),
    (lambda: fsl.invhilbert(2.5), TypeError, "invhilbert: n must be a static Python integer"),
    (lambda: ft.jit(fsl.hilbert)(3), TypeError, "hilbert: n must be a static.*static_argnums"),
    (lambda: fsl.pascal(3, "diagonal"), ValueError, "pascal: kind must be None or one of"),
    (lambda: fsl.invpascal(3, "diagonal"), ValueError, "invpascal: kind must be"),
    (lambda: fsl.dft(3, "N"), ValueError, "dft: scale must be one of"),
    (lambda: fsl.dft(3, dtype=np.float64), ValueError, "dft: dtype must be a complex dtype"),
    (lambda: fsl.polar(np.ones(3)), ValueError, r"polar: a must be a matrix.*\(3,\)"),
    (lambda: fsl.polar(np.eye(2), "up"), ValueError, "polar: side must be 'right' or 'left'"),
    (lambda: fsl.polar(np.eye(2), method="newton"), ValueError, "polar: method must be one"),
])
def test_errors_name_the_function_and_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_namespace_is_exactly_its_public_api():
    assert dir(fsl) == sorted(fsl.__all__)
    for name in fsl.__all__:
        fn = getattr(fsl, name)
        assert fn.__name__ == name and fn.__module__ == "functrans.scipy.linalg"


def test_works_without_scipy():
    """Nothing here needs SciPy's kernels: with SciPy unimportable, the module imports and
    computes."""
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import numpy as np, functrans as ft, functrans.scipy.linalg as fsl\n"
            "a = np.array([[4.0, 2.0], [2.0, 3.0]])\n"
            "print(float(ft.grad(lambda a: fsl.expm(a)[0, 0] + fsl.cho_solve("
            "fsl.cho_factor(a), np.ones(2))[0])(a).sum()))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    assert np.isfinite(float(result.stdout))


def test_lax_expm_is_a_primitive_in_the_jaxpr():
    jaxpr = ft.make_jaxpr(ft.grad(lambda a: fnp.sum(fsl.expm(a))))(_matrix(2))
    names = {e.primitive.name for e in jaxpr.jaxpr.eqns}
    assert "expm_frechet" in names, names


# -- optional: JAX's jax.scipy.linalg as a second reference (skipped without JAX) -----------


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def test_signatures_are_jaxs():
    _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    for name in fsl.__all__:
        ours, theirs = (inspect.signature(getattr(m, name)).parameters for m in (fsl, jsl))
        assert list(ours) == list(theirs), name
        for p in ours:
            assert ours[p].default == theirs[p].default, (name, p)


JAX_GRADIENTS = {  # name -> (f(module, a, b), make the inputs)
    "expm": (lambda m, a, b: (m.expm(a) * b).sum(), lambda: (_matrix(3), _matrix(3))),
    "cho_solve": (lambda m, a, b: m.cho_solve(m.cho_factor(a), b).sum(),
                  lambda: (_spd(3), _matrix(3))),
    "lu_solve_trans1": (lambda m, a, b: m.lu_solve(m.lu_factor(a), b, trans=1).sum(),
                        lambda: (_matrix(3), _matrix(3))),
    "solve_triangular_C": (lambda m, a, b: m.solve_triangular(a, b, trans="C").sum(),
                           lambda: (_matrix(3) + 4 * np.eye(3), _matrix(3))),
    "solve_pos": (lambda m, a, b: m.solve(a, b, assume_a="pos").sum(),
                  lambda: (_spd(3), _matrix(3))),
    "eigh": (lambda m, a, b: (m.eigh(a, eigvals_only=True) * b[0]).sum(),
             lambda: (_spd(3), _matrix(3))),
    "cholesky": (lambda m, a, b: (m.cholesky(a) * b).sum(), lambda: (_spd(3), _matrix(3))),
}


JAX_CONSTRUCTIONS = {  # name -> calls (JAX 0.10.2 batches hankel; SciPy 1.17 ravels)
    "toeplitz": [(np.array([1, 2, 3]),), (np.array([1.0, 2 - 1j]),),
                 (RNG.standard_normal((2, 3)), RNG.standard_normal((4, 1, 2)))],
    "hankel": [(np.array([1, 2, 3]),), (RNG.standard_normal((2, 3)), RNG.standard_normal(4))],
    "circulant": [(np.array([1, 2, 3]),), (RNG.standard_normal((2, 4)),)],
    "companion": [(np.array([1, 2, 3]),), (RNG.standard_normal((2, 4)) + 3,)],
    "fiedler_companion": [(np.array([1, 2, 3, 4, 5, 6]),), (RNG.standard_normal((2, 5)) + 3,),
                          (np.array([2.0]),)],
    "fiedler": [(np.array([1, 4, 12]),), (RNG.standard_normal((2, 4)),)],
    "leslie": [(np.array([1, 2, 3]), np.array([4, 5])),
               (RNG.standard_normal((2, 3)), RNG.standard_normal(2))],
    "convolution_matrix": [(np.array([1, 2, 3]), n, mode) for n in (2, 5)
                           for mode in ("full", "same", "valid")],
    "hadamard": [(8,), (4, np.float32)],
    "helmert": [(5,), (5, True)],
    "hilbert": [(4,)],
    "invhilbert": [(6,)],
    "pascal": [(6,), (6, "lower"), (6, "upper")],
    "invpascal": [(6,), (6, "lower"), (6, "upper")],
    "dft": [(6,), (6, "sqrtn"), (6, "n")],
}


@pytest.mark.parametrize("name", JAX_CONSTRUCTIONS)
def test_constructions_are_jaxs(name):
    _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    for args in JAX_CONSTRUCTIONS[name]:
        ours, theirs = getattr(fsl, name)(*args), np.asarray(getattr(jsl, name)(*args))
        # JAX's pascal is float32 even with x64, from float32 log-gamma functions (ours is
        # float64 and exact, as its other float constructors)
        if name != "pascal":
            assert ours.dtype == theirs.dtype, (name, args, ours.dtype, theirs.dtype)
        np.testing.assert_allclose(ours, theirs, rtol=1e-5 if name == "pascal" else 1e-12,
                                   atol=1e-12, err_msg=f"{name}{args}")


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar_and_its_gradient_are_jaxs(side):
    jax = _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    a, w, v = _matrix(3), _matrix(3), _matrix(3)
    for ours, theirs in zip(fsl.polar(a, side), jsl.polar(a, side, method="svd")):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)

    def f(m, a):
        u, p = m.polar(a, side) if m is fsl else m.polar(a, side, method="svd")
        return (u * w).sum() + (p * v).sum()
    np.testing.assert_allclose(ft.grad(lambda a: f(fsl, a))(a),
                               jax.grad(lambda a: f(jsl, a))(a), rtol=1e-8, atol=1e-10)


JAX_CONSTRUCTION_GRADIENTS = {  # name -> (f(module, x, y), inputs)
    "toeplitz": (lambda m, x, y: m.toeplitz(x, y[:3]), (4, 4)),
    "hankel": (lambda m, x, y: m.hankel(x, y), (3, 4)),
    "circulant": (lambda m, x, y: m.circulant(x) * y[0], (4, 1)),
    "companion": (lambda m, x, y: m.companion(x) * y[0], (4, 1)),
    "fiedler_companion": (lambda m, x, y: m.fiedler_companion(x) * y[0], (6, 1)),
    "fiedler": (lambda m, x, y: m.fiedler(x) * y[0], (4, 1)),
    "leslie": (lambda m, x, y: m.leslie(x, y), (4, 3)),
    "convolution_matrix": (lambda m, x, y: m.convolution_matrix(x, 4, "same") * y[0], (3, 1)),
}


@pytest.mark.parametrize("name", JAX_CONSTRUCTION_GRADIENTS)
def test_construction_gradients_are_jaxs(name):
    jax = _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    f, (n, k) = JAX_CONSTRUCTION_GRADIENTS[name]
    x, y = RNG.standard_normal(n) + 2, RNG.standard_normal(k)
    weights = RNG.standard_normal(np.shape(f(fsl, x, y)))

    def loss(m):
        return lambda x, y: (f(m, x, y) * weights).sum()
    ours = ft.grad(loss(fsl), argnums=(0, 1))(x, y)
    theirs = jax.grad(loss(jsl), argnums=(0, 1))(x, y)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-10, atol=1e-12)


ONE_TRIANGLE = {"cho_solve", "solve_pos", "cholesky"}


@pytest.mark.parametrize("name", JAX_GRADIENTS)
def test_gradients_are_jaxs(name):
    jax = _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    f, make = JAX_GRADIENTS[name]
    a, b = make()
    ours = list(ft.grad(lambda a, b: f(fsl, a, b), argnums=(0, 1))(a, b))
    theirs = [np.asarray(t) for t in jax.grad(lambda a, b: f(jsl, a, b), argnums=(0, 1))(a, b)]
    if name in ONE_TRIANGLE:
        # Ours is the derivative of what is computed (the unread triangle gets zero); JAX's
        # rule assumes a symmetric perturbation and spreads the gradient over both
        # triangles.  Along symmetric perturbations, what both are for, they agree.
        ours[0], theirs[0] = ours[0] + ours[0].T, theirs[0] + theirs[0].T
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-11)


# -- Schur and Hessenberg forms and what is built on them ------------------------------------


def _random(shape, dtype=np.float64):
    x = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(dtype)


def _adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _central_difference(f, x, direction, h=1e-6):
    return (np.asarray(f(x + h * direction)) - np.asarray(f(x - h * direction))) / (2 * h)


DECOMPOSITION_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", DECOMPOSITION_DTYPES)
@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_is_a_unitary_similarity_to_a_quasi_triangle(dtype, output):
    a = _random((3, 5, 5), dtype)
    t, z = fsl.schur(a, output)
    kind = "c" if output == "complex" or np.dtype(dtype).kind == "c" else "f"
    want = np.result_type(dtype, np.complex64) if kind == "c" else np.dtype(dtype)
    assert t.dtype == z.dtype == want
    tol = 1e-4 if np.finfo(want).bits <= 64 and want != np.complex128 else 1e-12
    np.testing.assert_allclose(z @ t @ _adjoint(z), a, atol=tol * 10)
    np.testing.assert_allclose(_adjoint(z) @ z, np.broadcast_to(np.eye(5), a.shape), atol=tol)
    # quasi-triangular: nothing below the subdiagonal, and for the complex form nothing
    # below the diagonal
    assert np.all(np.tril(t, -2 if kind == "f" else -1) == 0)
    for k in range(3):
        want_t, want_z = sl.schur(a[k], output)
        np.testing.assert_array_equal(t[k], want_t)
        np.testing.assert_array_equal(z[k], want_z)


def test_schur_and_hessenberg_refuse_integers_as_jax():
    with pytest.raises(TypeError, match="schur: a must be a float or complex array, got int64"):
        fsl.schur(np.eye(2, dtype=int))
    t, z = fsl.schur(np.array([[1, 2], [-2, 1]]), "complex")   # converted first, as JAX
    assert t.dtype == np.complex128
    with pytest.raises(TypeError, match="hessenberg: a must be a float or complex"):
        fsl.hessenberg(np.eye(3, dtype=int))
    with pytest.raises(TypeError, match="funm: a must be a float or complex"):
        fsl.funm(np.eye(3, dtype=int), fnp.exp)


@pytest.mark.parametrize("dtype", DECOMPOSITION_DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_hessenberg_is_lapacks_form(n, dtype):
    a = _random((2, n, n), dtype)
    h, q = fsl.hessenberg(a, calc_q=True)
    assert h.dtype == q.dtype == dtype and h.shape == q.shape == a.shape
    tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(q @ h @ _adjoint(q), a, atol=tol * 10)
    assert np.all(np.tril(h, -2) == 0)
    if n:
        np.testing.assert_array_equal(q[..., :, 0], np.eye(n)[:, 0] + 0 * q[..., :, 0])
        np.testing.assert_array_equal(np.imag(np.diagonal(h, -1, -2, -1)), 0)
    if n > 2 or np.dtype(dtype).kind == "f":   # SciPy returns a itself for n <= 2
        for k in range(2):
            want_h, want_q = sl.hessenberg(a[k], calc_q=True)
            np.testing.assert_allclose(h[k], want_h, rtol=tol, atol=tol)
            np.testing.assert_allclose(q[k], want_q, rtol=tol, atol=tol)
    np.testing.assert_array_equal(fsl.hessenberg(a), h)


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_hessenberg_derivative_matches_central_differences(n, complex_):
    dtype = np.complex128 if complex_ else np.float64
    a, e = _random((n, n), dtype), _random((n, n), dtype)
    (h, q), (dh, dq) = ft.jvp(lambda a: fsl.hessenberg(a, calc_q=True), (a,), (e,))
    # against SciPy's (LAPACK's) own forms where SciPy computes them (n > 2)
    reference = (lambda m: sl.hessenberg(m, calc_q=True)) if n > 2 else (
        lambda m: fsl.hessenberg(m, calc_q=True))
    for got, k in ((dh, 0), (dq, 1)):
        numeric = _central_difference(lambda m: reference(m)[k], a, e)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-7)
    # reverse mode pairs with it: <ct, J e> = <Jᵀ ct, e>
    ct = _random((n, n), dtype)
    (grad,) = ft.vjp(lambda a: fsl.hessenberg(a), a)[1](ct)
    np.testing.assert_allclose(np.real(np.sum(grad * e)), np.real(np.sum(ct * dh)), rtol=1e-10)


def test_rsf2csf_and_its_gradient_are_jaxs():
    jax = _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    a = np.array([[1.0, 2.0, 0.5, 0.0], [-3.0, 1.0, 1.0, 2.0], [0.0, 0.0, 2.0, 4.0],
                  [0.0, 0.0, -1.0, 2.5]])
    t, z = sl.schur(a)
    assert np.count_nonzero(np.diagonal(t, -1)) == 2   # two complex pairs
    for ours, theirs in zip(fsl.rsf2csf(t, z), jsl.rsf2csf(t, z)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)
    w = _random((4, 4), np.complex128)

    def f(m, np_):
        return lambda t, z: sum(np_.real(np_.sum(x * w)) for x in m.rsf2csf(t, z))
    ours = ft.grad(f(fsl, fnp), argnums=(0, 1))(t, z)
    theirs = jax.grad(f(jsl, jax.numpy), argnums=(0, 1))(t, z)
    for o, th in zip(ours, theirs):
        np.testing.assert_allclose(o, th, rtol=1e-10, atol=1e-12)


def test_funm_is_scipys_complex_result_and_its_error_estimate():
    a = _random((4, 4))
    f, err = fsl.funm(a, fnp.sin, disp=False)
    want_f, want_err = sl.funm(a, np.sin, disp=False)
    assert f.dtype == np.complex128 and err.dtype == np.float64 and err.shape == ()
    np.testing.assert_allclose(f, want_f, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(err, want_err, rtol=1e-10)
    # equal eigenvalues are not divided by (identity, a diagonal with a repeated entry)
    np.testing.assert_allclose(fsl.funm(np.eye(3), fnp.exp), np.e * np.eye(3), rtol=1e-15)
    d = np.diag([1.0, 1.0, 2.0])
    np.testing.assert_allclose(fsl.funm(d, fnp.exp), np.diag(np.exp([1.0, 1.0, 2.0])),
                               rtol=1e-15)
    batch = _random((3, 3, 3), np.complex64)
    got = fsl.funm(batch, fnp.exp)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.stack([sl.expm(m) for m in batch]), rtol=1e-4,
                               atol=1e-5)


def test_sqrtm_is_the_principal_root_as_jax():
    a = _random((4, 4)) + 4 * np.eye(4)
    x = fsl.sqrtm(a)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(x @ x, a, atol=1e-12)
    np.testing.assert_allclose(x, sl.sqrtm(a.astype(complex)), rtol=1e-11, atol=1e-12)
    assert fsl.sqrtm(a.astype(np.float32)).dtype == np.complex64
    assert fsl.sqrtm(np.array([[4, 0], [0, 9]])).dtype == np.complex128
    np.testing.assert_allclose(fsl.sqrtm(np.diag([-1.0, -4.0])), np.diag([1j, 2j]))
    np.testing.assert_array_equal(fsl.sqrtm(np.zeros((2, 2))), np.zeros((2, 2)))
    batch = np.stack([a, a.T + np.eye(4)])
    np.testing.assert_allclose(fsl.sqrtm(batch)[1], fsl.sqrtm(batch[1]), rtol=1e-13)


@pytest.mark.parametrize("complex_", [False, True])
def test_sqrtm_derivatives_match_central_differences(complex_):
    dtype = np.complex128 if complex_ else np.float64
    a = _random((3, 3), dtype) + 4 * np.eye(3)
    e, w = _random((3, 3), dtype), _random((3, 3), np.complex128)

    def root(m):
        return sl.sqrtm(np.asarray(m, dtype=complex))
    _, tangent = ft.jvp(fsl.sqrtm, (a,), (e,))
    np.testing.assert_allclose(tangent, _central_difference(root, a, e), rtol=1e-7, atol=1e-8)
    # second order: forward over reverse, against differences of the first derivative
    grad = ft.grad(lambda m: fnp.real(fnp.sum(fsl.sqrtm(m) * w)))
    _, second = ft.jvp(grad, (a,), (e,))
    np.testing.assert_allclose(second, _central_difference(grad, a, e, 1e-5), rtol=1e-6,
                               atol=1e-7)


def test_solve_sylvester_values_and_jaxs_nan_rule():
    a, b = _random((2, 4, 4)) + 3 * np.eye(4), _random((3, 3)) + 3 * np.eye(3)
    c = _random((2, 4, 3))
    x = fsl.solve_sylvester(a, b, c)
    np.testing.assert_allclose(a @ x + x @ b, c, atol=1e-12)
    np.testing.assert_allclose(x[1], sl.solve_sylvester(a[1], b, c[1]), rtol=1e-12)
    np.testing.assert_array_equal(fsl.solve_sylvester(a, b, c, method="eigen"), x)
    # an eigenvalue sum within tol of zero: NaN (that member only), as JAX
    singular = np.stack([np.eye(2), 2 * np.eye(2)])
    got = fsl.solve_sylvester(singular, -np.eye(2), np.ones((2, 2, 2)))
    assert np.all(np.isnan(got[0])) and np.allclose(got[1], np.ones((2, 2)))
    near = fsl.solve_sylvester(np.eye(2), (-1 + 1e-9) * np.eye(2), np.ones((2, 2)))
    assert np.all(np.isnan(near))
    off = fsl.solve_sylvester(np.eye(2), (-1 + 1e-9) * np.eye(2), np.ones((2, 2)), tol=0)
    np.testing.assert_allclose(off, 1e9 * np.ones((2, 2)), rtol=1e-6)   # 1 / (1 - 1 + 1e-9)
    assert fsl.solve_sylvester(np.eye(2, dtype=int), np.eye(2, dtype=int),
                               np.ones((2, 2), int)).dtype == np.float64


@pytest.mark.parametrize("complex_", [False, True])
def test_solve_sylvester_gradients_in_all_three_match_central_differences(complex_):
    dtype = np.complex128 if complex_ else np.float64
    a, b = _random((3, 3), dtype) + 3 * np.eye(3), _random((2, 2), dtype) + 3 * np.eye(2)
    c, w = _random((3, 2), dtype), _random((3, 2), dtype)

    def loss(a, b, c):
        return np.real(np.sum(sl.solve_sylvester(a, b, c) * w))
    grads = ft.grad(lambda a, b, c: fnp.real(fnp.sum(fsl.solve_sylvester(a, b, c) * w)),
                    argnums=(0, 1, 2))(a, b, c)
    for k, (x, g) in enumerate(zip((a, b, c), grads)):
        direction = _random(x.shape, dtype)

        def along(m, k=k):
            args = [a, b, c]
            args[k] = m
            return loss(*args)
        numeric = _central_difference(along, x, direction)
        # <g, direction> is the real pairing of the linear transpose: Re sum(g * d)
        np.testing.assert_allclose(np.real(np.sum(g * direction)), numeric, rtol=1e-7)
    # the transpose in c is the solve with aᵀ, bᵀ (no conjugation)
    (ct,) = ft.vjp(lambda c: fsl.solve_sylvester(a, b, c), c)[1](w)
    np.testing.assert_allclose(ct, sl.solve_sylvester(a.T, b.T, w), rtol=1e-12)


def test_eigh_tridiagonal_values_vectors_and_jaxs_rules():
    d, e = _random(6), _random(5)
    w, v = fsl.eigh_tridiagonal(d, e)
    want_w, want_v = sl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, want_w, rtol=1e-12, atol=1e-13)
    dense = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    np.testing.assert_allclose(dense @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-12)
    picked = fsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4))
    np.testing.assert_allclose(picked, want_w[2:5], rtol=1e-12)
    w3, v3 = fsl.eigh_tridiagonal(d, e, select="i", select_range=(0, 1), tol=1e-3,
                                  key=object())
    assert v3.shape == (6, 2)
    # complex: e above, conj(e) below, d's real part
    dc, ec = d + 1j * _random(6), _random(5, np.complex64).astype(np.complex128)
    wc, vc = fsl.eigh_tridiagonal(dc, ec)
    dense = np.diag(d) + np.diag(ec, 1) + np.diag(ec.conj(), -1)
    assert wc.dtype == np.float64 and vc.dtype == np.complex128
    np.testing.assert_allclose(dense @ vc, vc * wc, atol=1e-12)
    # float32 stays float32; batches broadcast
    assert fsl.eigh_tridiagonal(d.astype(np.float32), e.astype(np.float32),
                                eigvals_only=True).dtype == np.float32
    batched = fsl.eigh_tridiagonal(np.stack([d, 2 * d]), e, eigvals_only=True)
    np.testing.assert_allclose(batched[1], sl.eigh_tridiagonal(2 * d, e)[0], rtol=1e-12)


def test_eigh_tridiagonal_gradients_match_central_differences():
    d, e = _random(5), _random(4)
    dd, de = _random(5), _random(4)
    _, (dw, dv) = ft.jvp(fsl.eigh_tridiagonal, (d, e), (dd, de))
    numeric_w = (sl.eigh_tridiagonal(d + 1e-6 * dd, e + 1e-6 * de)[0]
                 - sl.eigh_tridiagonal(d - 1e-6 * dd, e - 1e-6 * de)[0]) / 2e-6
    np.testing.assert_allclose(dw, numeric_w, rtol=1e-7, atol=1e-8)
    # |v|² is free of each column's sign
    _, dv2 = ft.jvp(lambda d, e: fsl.eigh_tridiagonal(d, e)[1] ** 2, (d, e), (dd, de))
    numeric_v2 = (sl.eigh_tridiagonal(d + 1e-6 * dd, e + 1e-6 * de)[1] ** 2
                  - sl.eigh_tridiagonal(d - 1e-6 * dd, e - 1e-6 * de)[1] ** 2) / 2e-6
    np.testing.assert_allclose(dv2, numeric_v2, rtol=1e-6, atol=1e-8)
    g = ft.grad(lambda d, e: fsl.eigh_tridiagonal(d, e, eigvals_only=True)[0],
                argnums=(0, 1))(d, e)
    v0 = sl.eigh_tridiagonal(d, e)[1][:, 0]
    np.testing.assert_allclose(g[0], v0 ** 2, rtol=1e-10)        # dλ/dd_i = v_i²
    np.testing.assert_allclose(g[1], 2 * v0[:-1] * v0[1:], rtol=1e-10)


def test_qr_multiply_is_scipys_and_differentiable():
    a, c = _random((5, 3)), _random((2, 5))
    for got, want in zip(fsl.qr_multiply(a, c), sl.qr_multiply(a, c)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    left = fsl.qr_multiply(a, _random(3), "left")[0]
    assert left.shape == (5,)
    ac = _random((4, 4), np.complex128)
    cc = _random((4, 2), np.complex128)
    got = fsl.qr_multiply(ac, cc, "left", conjugate=True)[0]
    np.testing.assert_allclose(got, np.conj(np.linalg.qr(ac)[0]) @ cc, rtol=1e-12)
    # (Qᵀ b, R) solve least squares: the gradient of the solution is lstsq's
    b = _random(5)

    def lstsq(a):
        qtb, r = fsl.qr_multiply(a, b)
        return fsl.solve_triangular(r, qtb).sum()
    grad = ft.grad(lstsq)(a)
    numeric = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[i] = 1e-6
        numeric[i] = (np.linalg.lstsq(a + step, b)[0].sum()
                      - np.linalg.lstsq(a - step, b)[0].sum()) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)
    batch = fsl.qr_multiply(np.stack([a, 2 * a]), c)[0]
    np.testing.assert_allclose(batch[1], sl.qr_multiply(2 * a, c)[0], rtol=1e-12)


@pytest.mark.parametrize("name,call", [
    ("schur", lambda a: fsl.schur(a)[0]),
    ("funm", lambda a: fsl.funm(a, fnp.exp)),
])
def test_schur_and_funm_refuse_derivatives_by_name(name, call):
    a = _random((3, 3))
    for transform in (lambda f: ft.grad(lambda a: fnp.real(fnp.sum(f(a))))(a),
                      lambda f: ft.jvp(f, (a,), (a,))):
        with pytest.raises(NotImplementedError, match=f"functrans.scipy.linalg.{name}: "):
            transform(call)
    # without a tangent, nothing is refused
    np.testing.assert_allclose(ft.jit(call)(a), call(a))


@pytest.mark.parametrize("name,call", [
    ("schur", lambda x: fsl.schur(x)),
    ("hessenberg", lambda x: fsl.hessenberg(x)),
    ("sqrtm", lambda x: fsl.sqrtm(x)),
    ("schur", lambda x: fsl.funm(x, fnp.exp)),
    ("solve_sylvester", lambda x: fsl.solve_sylvester(x, x, x)),
])
def test_device_arrays_are_refused_not_copied(name, call):
    """cupyx.scipy.linalg has no Schur, Hessenberg or Sylvester driver: the stand-in's
    arrays (as CuPy's) get an error naming the function, and nothing is copied."""
    import cupy_standin as standin
    x = standin.asarray(np.eye(3))
    with standin.transfers() as counts:
        with pytest.raises(NotImplementedError, match=(
                rf"functrans.scipy.linalg.{name if name != 'schur' else '(schur|funm)'}: "
                r"standin.scipy.linalg has no \w+ kernel for cupy_standin arrays")):
            call(x)
    assert counts.d2h == 0


def test_decompositions_without_scipy_say_what_they_need():
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import numpy as np, functrans.scipy.linalg as fsl\n"
            "print(fsl.eigh_tridiagonal(np.ones(3), np.ones(2), eigvals_only=True).shape,\n"
            "      fsl.qr_multiply(np.eye(3), np.ones(3))[0].shape)\n"
            "try:\n    fsl.schur(np.eye(2))\nexcept ImportError as e:\n    print(e)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={"PYTHONPATH": ROOT})
    assert result.returncode == 0, result.stderr
    assert "(3,) (3,)" in result.stdout
    assert "functrans.scipy.linalg.schur needs SciPy's schur" in result.stdout


@pytest.mark.parametrize("call,error,match", [
    (lambda: fsl.schur(np.eye(2), "imaginary"), ValueError, "schur: output must be"),
    (lambda: fsl.schur(np.ones((2, 3))), ValueError, r"schur: a must be a square.*\(2, 3\)"),
    (lambda: fsl.hessenberg(np.ones(3)), ValueError, "hessenberg: a must be a square"),
    (lambda: fsl.rsf2csf(np.eye(3), np.eye(2)), ValueError, "rsf2csf: T .* and Z .* one order"),
    (lambda: fsl.rsf2csf(np.ones((2, 3)), np.eye(3)), ValueError, "rsf2csf: T must be a square"),
    (lambda: fsl.funm(np.ones((2, 3)), fnp.exp), ValueError, "funm: A must be a square"),
    (lambda: fsl.sqrtm(np.eye(2), blocksize=2), NotImplementedError, "sqrtm: blocksize > 1"),
    (lambda: fsl.sqrtm(np.ones(3)), ValueError, "sqrtm: A must be a square"),
    (lambda: fsl.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 2))), ValueError,
     r"solve_sylvester: C has shape \(3, 2\), so A must be"),
    (lambda: fsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="bartels"),
     ValueError, "solve_sylvester: method must be 'schur' or 'eigen'"),
    (lambda: ft.jit(lambda t: fsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), tol=t))(
        1.0), TypeError, "solve_sylvester: tol must be a static number"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2, np.float32)), TypeError,
     "eigh_tridiagonal: d and e must have the same dtype"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3, int), np.ones(2, int)), TypeError,
     "eigh_tridiagonal: d and e must be float32, float64, complex64 or complex128"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(3)), ValueError,
     r"eigh_tridiagonal: d has 3 entries .* so e must have 2"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2), select="v"), NotImplementedError,
     "eigh_tridiagonal: select='v'"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2), select="x"), ValueError,
     "eigh_tridiagonal: select must be"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2), select="i"), ValueError,
     "select_range must be given"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2), select="i", select_range=(2, 1)),
     ValueError, r"select_range \(2, 1\) is empty"),
    (lambda: fsl.eigh_tridiagonal(np.ones(3), np.ones(2), select="i", select_range=(0, 3)),
     ValueError, r"select_range \(0, 3\) must be within"),
    (lambda: fsl.qr_multiply(np.eye(3), np.ones(3), "middle"), ValueError,
     "qr_multiply: mode must be 'right' or 'left'"),
    (lambda: fsl.qr_multiply(np.eye(3), np.ones(3), pivoting=True), NotImplementedError,
     "qr_multiply: pivoting=True"),
    (lambda: fsl.qr_multiply(np.ones((4, 3)), np.ones((2, 3))), ValueError,
     r"qr_multiply: a has shape \(4, 3\), so Q has 4 rows"),
    (lambda: fsl.qr_multiply(np.ones((4, 3)), np.ones((4, 2)), "left"), ValueError,
     r"qr_multiply: a has shape \(4, 3\), so Q has 3 columns"),
])
def test_decomposition_errors_name_the_function_and_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


JAX_DECOMPOSITIONS = {  # name -> (ours and JAX's call, inputs): values, JAX 0.10.2
    "schur": (lambda m, a: m.schur(a), lambda: (_random((4, 4)),)),
    "schur_complex": (lambda m, a: m.schur(a, "complex"), lambda: (_random((4, 4)),)),
    "hessenberg": (lambda m, a: m.hessenberg(a, calc_q=True), lambda: (_random((5, 5)),)),
    "hessenberg_2x2_complex": (lambda m, a: m.hessenberg(a, calc_q=True),
                               lambda: (_random((2, 2), np.complex128),)),
    "sqrtm": (lambda m, a: m.sqrtm(a), lambda: (_random((4, 4)) + 4 * np.eye(4),)),
    "sqrtm_negative_eigenvalues": (lambda m, a: m.sqrtm(a), lambda: (np.diag([-1.0, 4.0]),)),
    "funm": (lambda m, a: m.funm(a, np.sin if m is sl else (
        fnp.sin if m is fsl else __import__("jax").numpy.sin)), lambda: (_random((4, 4)),)),
    "solve_sylvester": (lambda m, a, b, c: m.solve_sylvester(a, b, c),
                        lambda: (_random((3, 3)), _random((2, 2)), _random((3, 2)))),
    "solve_sylvester_singular": (lambda m, a, b, c: m.solve_sylvester(a, b, c),
                                 lambda: (np.eye(2), -np.eye(2), np.ones((2, 2)))),
    "eigh_tridiagonal_eigvals": (lambda m, d, e: m.eigh_tridiagonal(d, e, eigvals_only=True),
                                 lambda: (_random(6), _random(5))),
    "eigh_tridiagonal_complex_select": (
        lambda m, d, e: m.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                           select_range=(1, 3)),
        lambda: (_random(5, np.complex128), _random(4, np.complex128))),
    "qr_multiply_left_wide": (lambda m, a, c: m.qr_multiply(a, c, "left"),
                              lambda: (_random((3, 5)), _random((3, 2)))),
    "qr_multiply_right_vector": (lambda m, a, c: m.qr_multiply(a, c),
                                 lambda: (_random((5, 3)), _random(5))),
}


@pytest.mark.parametrize("name", JAX_DECOMPOSITIONS)
def test_decompositions_are_jaxs(name):
    _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    call, make = JAX_DECOMPOSITIONS[name]
    args = make()
    ours, theirs = call(fsl, *args), call(jsl, *args)
    ours, theirs = (tuple(x) if isinstance(x, (tuple, list)) else (x,) for x in (ours, theirs))
    assert len(ours) == len(theirs), name
    for o, t in zip(ours, theirs):
        t = np.asarray(t)
        assert o.dtype == t.dtype and o.shape == t.shape, (name, o.dtype, t.dtype)
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12, err_msg=name)


def test_eigh_tridiagonal_vectors_are_jaxs_up_to_sign():
    _jax()
    jsl = pytest.importorskip("jax.scipy.linalg")
    d, e = _random(6), _random(5)
    (w, v), (jw, jv) = fsl.eigh_tridiagonal(d, e), jsl.eigh_tridiagonal(d, e)
    np.testing.assert_allclose(w, jw, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(np.abs(v), np.abs(np.asarray(jv)), atol=1e-8)
