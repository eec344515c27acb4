"""lax.custom_linear_solve and lax.custom_root (functrans/primitives/linear_solve.py): values
against NumPy, derivatives against those of a direct solve and against finite differences,
that the solvers' iterations are never differentiated, every transform (vmap against a loop,
jit against eager, second order), and the errors.  The registry sweep of both primitives is
tests/cases_linear_solve.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import reverse_mode
import functrans.numpy as fnp
from functrans import lax
from cases_linear_solve import PRIMITIVE_CASES
from sweep import assert_close, case_rng, check_grads

RNG = np.random.default_rng(0)
A_GENERAL = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
_Q = RNG.standard_normal((4, 4))
A_SPD = _Q @ _Q.T + 4 * np.eye(4)
B = RNG.standard_normal(4)


def _jacobi(matvec, b, diagonal, steps=200):
    """``matvec(x) = b`` by Jacobi iterations in a while_loop (not reverse-differentiable:
    the implicit rule is the only way to a gradient)."""
    def body(state):
        x, k = state
        return x + (b - matvec(x)) / diagonal, k + 1
    return lax.while_loop(lambda s: s[1] < steps, body, (fnp.zeros_like(b), 0))[0]


def solve_iteratively(a, b):
    """``a⁻¹ b`` for a diagonally dominant ``a``, by Jacobi iterations."""
    diagonal = fnp.diagonal(a)
    return lax.custom_linear_solve(
        lambda x: a @ x, b, lambda matvec, r: _jacobi(matvec, r, diagonal),
        lambda vecmat, r: _jacobi(vecmat, r, diagonal))


def solve_directly(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b,
                                   lambda matvec, r: fnp.linalg.solve(a, r),
                                   lambda vecmat, r: fnp.linalg.solve(a.T, r))


def loss(solver):
    return lambda a, b: fnp.sum(fnp.sin(solver(a, b)))


def reference_loss(a, b):
    return fnp.sum(fnp.sin(fnp.linalg.solve(a, b)))


# -- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c for c in PRIMITIVE_CASES if c.reference is not None],
                         ids=lambda c: c.name)
def test_sweep_cases_agree_with_numpy(case):
    args = case.draw(case_rng(case, "reference"))
    assert_close(case(*args), case.reference(*args), 1e-10, 1e-10, case.name)


def test_value_is_the_solvers():
    # custom_linear_solve returns what solve returns, even if it does not solve the system
    x = lax.custom_linear_solve(lambda v: A_GENERAL @ v, B, lambda matvec, r: 2 * r)
    np.testing.assert_array_equal(x, 2 * B)


def test_pytree_right_hand_side_and_solution():
    b = {"a": B[:2], "b": (B[2:],)}

    def matvec(t):
        v = fnp.concatenate([t["a"], t["b"][0]])
        w = A_GENERAL @ v
        return {"a": w[:2], "b": (w[2:],)}

    def solve(matvec, t):
        w = fnp.linalg.solve(A_GENERAL, fnp.concatenate([t["a"], t["b"][0]]))
        return {"a": w[:2], "b": (w[2:],)}

    x = lax.custom_linear_solve(matvec, b, solve)
    want = np.linalg.solve(A_GENERAL, B)
    np.testing.assert_allclose(np.concatenate([x["a"], x["b"][0]]), want, rtol=1e-12)


# -- derivatives ---------------------------------------------------------------------------


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_gradients_equal_those_of_a_direct_solve(argnums):
    for solver in (solve_directly, solve_iteratively):
        got = ft.grad(loss(solver), argnums)(A_GENERAL, B)
        want = ft.grad(reference_loss, argnums)(A_GENERAL, B)
        assert_close(got, want, 1e-10, 1e-10, f"{solver.__name__} {argnums}")


def test_forward_mode_equals_that_of_a_direct_solve():
    ta, tb = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
    for solver in (solve_directly, solve_iteratively):
        _, got = ft.jvp(solver, (A_GENERAL, B), (ta, tb))
        _, want = ft.jvp(fnp.linalg.solve, (A_GENERAL, B), (ta, tb))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_iterative_solve_is_differentiated_against_finite_differences():
    check_grads(solve_iteratively, [A_GENERAL, B], 2, np.random.default_rng(1), rtol=1e-6,
                atol=1e-6)


def test_the_iterations_are_not_differentiated():
    """Reverse mode would refuse the while_loop; the gradient's jaxpr holds the primal
    solve and one transposed solve, no differentiated loop."""
    jaxpr = ft.make_jaxpr(ft.grad(loss(solve_iteratively), (0, 1)))(A_GENERAL, B)
    names = [e.primitive.name for e in jaxpr.eqns]
    assert names.count("custom_linear_solve") == 2, names
    assert "while" not in names


def test_second_order_equals_that_of_a_direct_solve():
    for solver in (solve_directly, solve_iteratively):
        got = ft.hessian(loss(solver), (0, 1))(A_GENERAL, B)
        want = ft.hessian(reference_loss, (0, 1))(A_GENERAL, B)
        assert_close(got, want, 1e-9, 1e-9, solver.__name__)
    got = ft.jacfwd(ft.grad(loss(solve_iteratively), 1), 0)(A_GENERAL, B)
    want = ft.jacfwd(ft.grad(reference_loss, 1), 0)(A_GENERAL, B)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_symmetric_uses_solve_for_the_transposed_system():
    def solve(matvec, r):
        return fnp.linalg.solve(A_SPD, r)

    def f(b):
        return fnp.sum(fnp.sin(lax.custom_linear_solve(lambda x: A_SPD @ x, b, solve,
                                                       symmetric=True)))
    np.testing.assert_allclose(ft.grad(f)(B), ft.grad(lambda b: fnp.sum(fnp.sin(
        fnp.linalg.solve(A_SPD, b))))(B), rtol=1e-12)


def test_complex_systems():
    a = A_GENERAL + 1j * RNG.standard_normal((4, 4))
    b = B + 1j * RNG.standard_normal(4)
    ta = RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4))
    tb = RNG.standard_normal(4) - 1j * RNG.standard_normal(4)
    np.testing.assert_allclose(solve_directly(a, b), np.linalg.solve(a, b), rtol=1e-12)
    _, got = ft.jvp(solve_directly, (a, b), (ta, tb))
    _, want = ft.jvp(fnp.linalg.solve, (a, b), (ta, tb))
    np.testing.assert_allclose(got, want, rtol=1e-10)

    def real_loss(solver):
        return lambda a, b: fnp.sum(fnp.abs(solver(a, b)) ** 2)
    got = ft.grad(real_loss(solve_directly), (0, 1))(a, b)
    want = ft.grad(real_loss(fnp.linalg.solve), (0, 1))(a, b)
    assert_close(got, want, 1e-10, 1e-10, "complex gradients")


def test_without_transpose_solve_forward_mode_works_and_reverse_mode_says_what_to_pass():
    def f(b):
        return lax.custom_linear_solve(lambda x: A_GENERAL @ x, b,
                                       lambda matvec, r: fnp.linalg.solve(A_GENERAL, r))
    _, t = ft.jvp(f, (B,), (B,))
    np.testing.assert_allclose(t, np.linalg.solve(A_GENERAL, B), rtol=1e-12)
    with pytest.raises(TypeError, match="custom_linear_solve.*transpose_solve"):
        ft.grad(lambda b: fnp.sum(f(b)))(B)


def test_aux_has_no_derivative():
    def f(b):
        x, aux = lax.custom_linear_solve(
            lambda v: A_GENERAL @ v, b,
            lambda matvec, r: (fnp.linalg.solve(A_GENERAL, r), fnp.sum(r ** 2)),
            lambda vecmat, r: (fnp.linalg.solve(A_GENERAL.T, r), fnp.sum(r ** 2)),
            has_aux=True)
        return x, aux
    (x, aux), (tx, taux) = ft.jvp(f, (B,), (B,))
    assert float(aux) == pytest.approx(float(np.sum(B ** 2)))
    assert float(taux) == 0.0
    np.testing.assert_allclose(tx, x, rtol=1e-12)  # linear in b
    g = ft.grad(lambda b: fnp.sum(f(b)[0]))(B)
    np.testing.assert_allclose(g, np.linalg.solve(A_GENERAL.T, np.ones(4)), rtol=1e-12)


# -- transforms ----------------------------------------------------------------------------


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0), (2, 1)])
def test_vmap_matches_a_loop(in_axes):
    batch = 3
    a = np.stack([A_GENERAL + i * np.eye(4) for i in range(batch)])
    b = np.stack([B * (i + 1) for i in range(batch)])
    args = [a if ax is not None else A_GENERAL for ax in in_axes[:1]] + [
        b if in_axes[1] is not None else B]
    moved = [np.moveaxis(x, 0, ax) if ax not in (None, 0) else x
             for x, ax in zip(args, in_axes)]
    for solver in (solve_directly, solve_iteratively):
        got = ft.vmap(solver, in_axes)(*moved)
        want = np.stack([np.linalg.solve(args[0][i] if in_axes[0] is not None else args[0],
                                         args[1][i] if in_axes[1] is not None else args[1])
                         for i in range(batch)])
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_per_example_gradients_match_a_loop():
    a = np.stack([A_GENERAL + i * np.eye(4) for i in range(3)])
    got = ft.vmap(ft.grad(loss(solve_iteratively), (0, 1)), (0, None))(a, B)
    for i in range(3):
        want = ft.grad(reference_loss, (0, 1))(a[i], B)
        assert_close((got[0][i], got[1][i]), want, 1e-10, 1e-10, f"member {i}")


def test_jit_equals_eager():
    for solver in (solve_directly, solve_iteratively):
        np.testing.assert_allclose(ft.jit(solver)(A_GENERAL, B), solver(A_GENERAL, B),
                                   rtol=1e-13)
        g = ft.grad(loss(solver), (0, 1))
        assert_close(ft.jit(g)(A_GENERAL, B), g(A_GENERAL, B), 1e-12, 1e-12, "jit of grad")


def test_jaxprs_type_check():
    for fun in (solve_iteratively, ft.grad(loss(solve_iteratively), (0, 1)),
                lambda a, b: ft.jvp(solve_iteratively, (a, b), (a, b))):
        closed = ft.make_jaxpr(fun)(A_GENERAL, B)
        ft.check_jaxpr(closed.jaxpr)


# -- custom_root ---------------------------------------------------------------------------


def _newton(f, x0):
    return lax.fori_loop(0, 30, lambda i, x: x - f(x) / ft.grad(f)(x), x0)


def cube_root(y):
    return lax.custom_root(lambda x: x ** 3 - y, 1.0, _newton, lambda g, r: r / g(1.0))


def test_custom_root_value_and_derivatives():
    y = 5.0
    assert float(cube_root(y)) == pytest.approx(y ** (1 / 3), rel=1e-13)
    assert float(ft.grad(cube_root)(y)) == pytest.approx(y ** (-2 / 3) / 3, rel=1e-12)
    assert float(ft.grad(ft.grad(cube_root))(y)) == pytest.approx(
        -2 / 9 * y ** (-5 / 3), rel=1e-10)
    assert float(ft.jvp(cube_root, (y,), (2.0,))[1]) == pytest.approx(
        2 * y ** (-2 / 3) / 3, rel=1e-12)


def test_custom_root_under_vmap_and_jit():
    ys = np.array([1.0, 8.0, 27.0])
    np.testing.assert_allclose(ft.vmap(cube_root)(ys), [1.0, 2.0, 3.0], rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(ft.grad(cube_root))(ys), ys ** (-2 / 3) / 3,
                               rtol=1e-12)
    assert float(ft.jit(ft.grad(cube_root))(8.0)) == pytest.approx(1 / 12, rel=1e-12)


def test_custom_root_with_a_while_loop_solver():
    """Bisection until the bracket is tiny: a while_loop that reverse mode could not go
    through; the implicit rule differentiates the root regardless."""
    def bisect(f, x0):
        def body(state):
            lo, hi = state
            mid = (lo + hi) / 2
            below = f(mid) < 0
            return fnp.where(below, mid, lo), fnp.where(below, hi, mid)
        lo, hi = lax.while_loop(lambda s: s[1] - s[0] > 1e-13, body, (x0 - 10.0, x0 + 10.0))
        return (lo + hi) / 2

    def root(y):  # of x + sin(x) = y, increasing in x
        return lax.custom_root(lambda x: x + fnp.sin(x) - y, 0.0, bisect,
                               lambda g, r: r / g(1.0))
    x = float(root(2.0))
    assert x + np.sin(x) == pytest.approx(2.0, abs=1e-12)
    assert float(ft.grad(root)(2.0)) == pytest.approx(1 / (1 + np.cos(x)), rel=1e-10)
    assert float(ft.grad(ft.grad(root))(2.0)) == pytest.approx(
        np.sin(x) / (1 + np.cos(x)) ** 3, rel=1e-8)


def test_custom_root_initial_guess_has_no_derivative():
    def f(x0):
        return lax.custom_root(lambda x: x ** 2 - 2.0, x0, _newton, lambda g, r: r / g(1.0))
    assert float(ft.grad(f)(1.5)) == 0.0


def test_custom_root_has_aux():
    def solve(f, x0):
        x = _newton(f, x0)
        return x, f(x)

    def f(y):
        return lax.custom_root(lambda x: x ** 2 - y, 1.0, solve, lambda g, r: r / g(1.0),
                               has_aux=True)
    x, residual = f(2.0)
    assert float(x) == pytest.approx(np.sqrt(2.0), rel=1e-14)
    assert abs(float(residual)) < 1e-14
    assert float(ft.grad(lambda y: f(y)[0])(2.0)) == pytest.approx(0.5 / np.sqrt(2.0))


# -- errors --------------------------------------------------------------------------------

_MATVEC = lambda x: A_GENERAL @ x  # noqa: E731
_SOLVE = lambda matvec, r: r  # noqa: E731


@pytest.mark.parametrize("call,error,match", [
    (lambda: lax.custom_linear_solve(lambda x: (A_GENERAL @ x)[:2], B, _SOLVE),
     ValueError, r"custom_linear_solve: matvec must return .* b \(f64\[4\]\), got \(f64\[2\]\)"),
    (lambda: lax.custom_linear_solve(_MATVEC, B, lambda matvec, r: r[:3]),
     ValueError, r"custom_linear_solve: solve must return .* b \(f64\[4\]\), got \(f64\[3\]\)"),
    (lambda: lax.custom_linear_solve(_MATVEC, B, lambda matvec, r: (r, r)),
     TypeError, "custom_linear_solve: solve must return the structure of its argument"),
    (lambda: lax.custom_linear_solve(_MATVEC, B, _SOLVE, has_aux=True),
     TypeError, r"custom_linear_solve: with has_aux=True, solve must return a pair"),
    (lambda: lax.custom_linear_solve(_MATVEC, B, _SOLVE, lambda vecmat, r: r[:1]),
     ValueError, r"custom_linear_solve: transpose_solve must return .* got \(f64\[1\]\)"),
    (lambda: lax.custom_linear_solve(_MATVEC, np.arange(4), _SOLVE),
     TypeError, r"custom_linear_solve: b must hold floating-point .* i64\[4\]"),
    (lambda: lax.custom_linear_solve(_MATVEC, "b", _SOLVE),
     TypeError, "custom_linear_solve: b must be a pytree of arrays"),
    (lambda: lax.custom_linear_solve(lambda x: A_GENERAL @ x ** 2, B, _SOLVE, _SOLVE),
     TypeError, "custom_linear_solve: matvec must be linear"),
    (lambda: lax.custom_root(lambda x: x[:2], B, lambda f, x: x, lambda g, y: y),
     ValueError, r"custom_root: f must return .* initial_guess \(f64\[4\]\), got \(f64\[2\]\)"),
    (lambda: lax.custom_root(lambda x: x, B, lambda f, x: x[:1], lambda g, y: y),
     ValueError, r"custom_root: solve must return .* got \(f64\[1\]\)"),
    (lambda: lax.custom_root(lambda x: x, B, lambda f, x: x, lambda g, y: y[:1]),
     ValueError, r"custom_root: tangent_solve must return .* got \(f64\[1\]\)"),
    (lambda: lax.custom_root(lambda x: x, np.arange(3), lambda f, x: x, lambda g, y: y),
     TypeError, r"custom_root: initial_guess must hold floating-point"),
])
def test_bad_arguments_are_reported(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- eager gradients from a tape (functrans/interpreters/tape.py) ----------------------------


def _matvec_general(x):
    return A_GENERAL @ x


def _solve_general(matvec, r):
    return fnp.linalg.solve(A_GENERAL, r)


def _transpose_solve_general(vecmat, r):
    return fnp.linalg.solve(A_GENERAL.T, r)


def test_repeated_gradients_are_recorded_when_the_functions_repeat(monkeypatch):
    """Functions that close over no traced value trace to the same jaxprs every call, so a
    tape records the call and its compiled gradient serves the later ones; closing over the
    differentiated value, the call is linearized every time (the tape refuses it)."""
    monkeypatch.setattr(ft.config, "reverse_mode", "auto")

    def fixed(b):
        return fnp.sum(fnp.sin(lax.custom_linear_solve(
            _matvec_general, b, _solve_general, _transpose_solve_general)))

    def closing(a):
        return fnp.sum(fnp.sin(solve_directly(a, B)))

    want_b = ft.grad(lambda b: reference_loss(A_GENERAL, b))(B)
    want_a = ft.grad(lambda a: reference_loss(a, B))(A_GENERAL)
    for _ in range(4):
        np.testing.assert_allclose(ft.grad(fixed)(B), want_b, rtol=1e-12)
        np.testing.assert_allclose(ft.grad(closing)(A_GENERAL), want_a, rtol=1e-12)
    assert reverse_mode._functions[fixed.__code__] == 0  # recorded, its structure seen before
    assert reverse_mode._functions[closing.__code__] == "never"
