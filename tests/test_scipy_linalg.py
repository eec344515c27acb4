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
