"""functrans.scipy.sparse.linalg: cg, bicgstab and gmres against scipy.sparse.linalg and
NumPy's direct solve, their derivatives (implicit, through custom_linear_solve) against
those of np.linalg.solve, pytrees, preconditioners, vmap against a loop, jit against eager,
and the errors.  The sweep cases (both modes to second order) are in
tests/cases_linear_solve.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.scipy as fscipy
import functrans.scipy.sparse
import functrans.scipy.sparse.linalg as fsl

sl = pytest.importorskip("scipy.sparse.linalg")

N = 8
RNG = np.random.default_rng(2)
_Q = RNG.standard_normal((N, N))
SPD = _Q @ _Q.T + N * np.eye(N)
GENERAL = RNG.standard_normal((N, N)) + 2 * N * np.eye(N)
B = RNG.standard_normal(N)
TOL = 1e-12

SOLVERS = {
    "cg": (fsl.cg, sl.cg, SPD),
    "bicgstab": (fsl.bicgstab, sl.bicgstab, GENERAL),
    "gmres_batched": (lambda *a, **k: fsl.gmres(*a, solve_method="batched", **k), sl.gmres,
                      GENERAL),
    "gmres_incremental": (lambda *a, **k: fsl.gmres(*a, solve_method="incremental", **k),
                          sl.gmres, GENERAL),
}
NAMES = list(SOLVERS)


def _scipy_tolerance_keyword():
    import inspect
    return "rtol" if "rtol" in inspect.signature(sl.cg).parameters else "tol"


def test_modules_import_as_in_jax():
    assert functrans.scipy.sparse.linalg is fsl is fscipy.sparse.linalg
    assert set(fsl.__all__) == {"cg", "bicgstab", "gmres"}


@pytest.mark.parametrize("name", NAMES)
def test_values_match_scipy_and_numpy(name):
    ours, theirs, a = SOLVERS[name]
    x, _ = ours(a, B, tol=TOL)
    want, info = theirs(a, B, atol=0.0, **{_scipy_tolerance_keyword(): TOL})
    assert info == 0
    np.testing.assert_allclose(x, want, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", NAMES)
def test_operator_as_a_function_and_start(name):
    ours, _, a = SOLVERS[name]
    x0 = np.linalg.solve(a, B) + 1e-3
    x, _ = ours(lambda v: a @ v, B, x0=x0, tol=TOL)
    np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-10, atol=1e-11)


def test_info_values_follow_jax():
    assert fsl.cg(SPD, B)[1] is None
    assert fsl.bicgstab(GENERAL, B)[1] is None
    assert int(fsl.gmres(GENERAL, B)[1]) == 0


@pytest.mark.parametrize("name", NAMES)
def test_maxiter_stops_early(name):
    ours, _, a = SOLVERS[name]
    x, _ = ours(a, B, tol=TOL, maxiter=1, **({"restart": 1} if "gmres" in name else {}))
    assert np.linalg.norm(a @ x - B) > 1e-6  # one step is not enough


@pytest.mark.parametrize("name", NAMES)
def test_preconditioner(name):
    ours, _, a = SOLVERS[name]
    jacobi = 1 / np.diag(a)
    for m in (np.diag(jacobi), lambda v: jacobi * v):
        x, _ = ours(a, B, tol=TOL, M=m)
        np.testing.assert_allclose(x, np.linalg.solve(a, B), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", NAMES)
def test_pytrees(name):
    ours, _, a = SOLVERS[name]
    b = {"u": B[:3], "v": B[3:].reshape(1, 5)}

    def matvec(t):
        w = a @ fnp.concatenate([t["u"], fnp.ravel(t["v"])])
        return {"u": w[:3], "v": fnp.reshape(w[3:], (1, 5))}
    x, _ = ours(matvec, b, tol=TOL)
    np.testing.assert_allclose(np.concatenate([x["u"], np.ravel(x["v"])]),
                               np.linalg.solve(a, B), rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("name", NAMES)
def test_complex_systems(name):
    ours, _, a = SOLVERS[name]
    shift = 1j * np.diag(RNG.standard_normal(N)) if name != "cg" else 0
    hermitian = SPD + 1j * (np.triu(_Q, 1) - np.triu(_Q, 1).T) if name == "cg" else a + shift
    b = B + 1j * RNG.standard_normal(N)
    x, _ = ours(hermitian, b, tol=TOL)
    np.testing.assert_allclose(x, np.linalg.solve(hermitian, b), rtol=1e-9, atol=1e-10)


def _loss(solver):
    return lambda a, b: fnp.sum(fnp.sin(solver(a, b, tol=TOL)[0]))


def _reference_loss(a, b):
    return fnp.sum(fnp.sin(fnp.linalg.solve(a, b)))


@pytest.mark.parametrize("name", NAMES)
def test_gradients_equal_those_of_a_direct_solve(name):
    ours, _, a = SOLVERS[name]
    got = ft.grad(_loss(ours), (0, 1))(a, B)
    want = ft.grad(_reference_loss, (0, 1))(a, B)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-8, atol=1e-10)
    t_a, t_b = RNG.standard_normal((N, N)), RNG.standard_normal(N)
    _, got_t = ft.jvp(lambda a, b: ours(a, b, tol=TOL)[0], (a, B), (t_a, t_b))
    _, want_t = ft.jvp(fnp.linalg.solve, (a, B), (t_a, t_b))
    np.testing.assert_allclose(got_t, want_t, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_tiny_right_hand_sides_and_cotangents_are_solved_to_relative_accuracy(name):
    """The stopping test reads squared norms, which underflow for 1e-200: the solvers scale
    the right-hand side first.  The transposed solve takes its tolerance from the cotangent,
    not from b (a cotangent far smaller than b would otherwise stop it at once)."""
    ours, _, a = SOLVERS[name]
    x, _ = ours(a, 1e-200 * B, tol=TOL)
    np.testing.assert_allclose(x, 1e-200 * np.linalg.solve(a, B), rtol=1e-9)
    for scale in (1e-200, 1e-8):
        g = ft.grad(lambda b: scale * fnp.sum(ours(a, b, tol=1e-6)[0]))(B)
        np.testing.assert_allclose(g, scale * np.linalg.solve(a.T, np.ones(N)), rtol=1e-4)


def test_second_order():
    got = ft.hessian(_loss(fsl.cg), 1)(SPD, B)
    want = ft.hessian(_reference_loss, 1)(SPD, B)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_a_loop(name):
    ours, _, a = SOLVERS[name]
    bs = RNG.standard_normal((3, N))
    mats = np.stack([a + i * np.eye(N) for i in range(3)])
    got = ft.vmap(lambda a, b: ours(a, b, tol=TOL)[0])(mats, bs)
    want = np.stack([ours(mats[i], bs[i], tol=TOL)[0] for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(got, np.linalg.solve(mats, bs[..., None])[..., 0], rtol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_jit_equals_eager(name):
    ours, _, a = SOLVERS[name]
    f = lambda a, b: ours(a, b, tol=TOL)[0]  # noqa: E731
    np.testing.assert_allclose(ft.jit(f)(a, B), f(a, B), rtol=1e-13, atol=1e-14)
    g = ft.grad(_loss(ours), (0, 1))
    for got, want in zip(ft.jit(g)(a, B), g(a, B)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("call,error,match", [
    (lambda: fsl.cg(np.ones((2, 3)), np.ones(2)), ValueError,
     r"cg: the linear operator A must be a square matrix .* shape \(2, 3\)"),
    (lambda: fsl.bicgstab(SPD, np.ones(3)), ValueError,
     r"bicgstab: A cannot be applied to b .* shapes \[\(3,\)\]"),
    (lambda: fsl.gmres(lambda v: v[:2], np.ones(3)), ValueError,
     r"gmres: A must map b to a value of b's structure and shapes"),
    (lambda: fsl.cg(SPD, B, x0=np.ones(3)), ValueError,
     r"cg: the arrays of x0 and b must have the same shapes, got \[\(3,\)\] and \[\(8,\)\]"),
    (lambda: fsl.cg(SPD, B, x0=(B,)), ValueError, "cg: x0 and b must have the same tree"),
    (lambda: fsl.gmres(GENERAL, B, solve_method="qr"), ValueError,
     "gmres: solve_method must be 'incremental' or 'batched', got 'qr'"),
    (lambda: fsl.cg("A", B), TypeError, "cg: the linear operator A must be a matrix or a "
                                        "function, got str"),
    (lambda: fsl.bicgstab(SPD, B, M=np.ones((2, 2))), ValueError,
     r"bicgstab: M cannot be applied to b .* shapes \[\(8,\)\]"),
    (lambda: fsl.cg(SPD, B, M=lambda v: v[:2]), ValueError,
     r"cg: M must map b to a value of b's structure and shapes"),
])
def test_bad_arguments_are_reported(call, error, match):
    with pytest.raises(error, match=match):
        call()
