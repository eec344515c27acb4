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
