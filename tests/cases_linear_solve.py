"""Sweep cases of the implicitly differentiated solvers (functrans/primitives/linear_solve.py)
and of the Krylov solvers built on them (functrans.scipy.sparse.linalg): checked by
tests/test_primitives.py (both modes to second order against numerical derivatives, vmap
against a loop, vmap of the derivative rules, jaxprs, float32) and on the device stand-in.

Their derivatives come from the implicit rule, not from the solvers' iterations, so they
agree with the numerical ones only where the solvers are exact: direct solves here, and
Krylov solvers with a tolerance near float64's rounding.  Matrices are made well posed from
unconstrained draws, as in tests/cases_scipy_linalg.py.  ``reference`` is the same
computation by NumPy's direct solve.  (gmres's incremental method, slower to sweep, is
checked in tests/test_scipy_sparse.py.)"""
from __future__ import annotations

import numpy as np

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.scipy.sparse import linalg as fsl
from sweep import F64, A, Case


def _identity(m, x):
    """The identity shaped like the square ``x``, made from ``x`` (on its device)."""
    return m.tril(m.triu(m.ones_like(x)))


def _general(m, a):
    return a + 4 * _identity(m, a)


def _spd(m, a):
    return a @ m.swapaxes(a, -1, -2) + 3 * _identity(m, a)


def _direct(a, b, **kwargs):
    """``a⁻¹ b`` through custom_linear_solve with direct solvers."""
    return lax.custom_linear_solve(
        lambda x: a @ x, b, lambda matvec, r: fnp.linalg.solve(a, r),
        lambda vecmat, r: fnp.linalg.solve(fnp.swapaxes(a, -1, -2), r), **kwargs)


def _general_solve(a, b):
    return _direct(_general(fnp, a), b)


def _symmetric_solve(a, b):
    s = _spd(fnp, a)
    return lax.custom_linear_solve(lambda x: s @ x, b,
                                   lambda matvec, r: fnp.linalg.solve(s, r), symmetric=True)


def _nonlinear_in_a(a, b):
    """The matrix a non-linear function of the input, the right-hand side too: the chain
    rule through what matvec closes over."""
    m = _general(fnp, fnp.sin(a))
    return _direct(m, fnp.tanh(b)) * b


def _tree_solve(a, b, c):
    """A block-diagonal system on a pytree ``{"u": (3,), "v": (2, 2)}``."""
    a1 = _general(fnp, a)
    a2 = _general(fnp, c)

    def matvec(t):
        return {"u": a1 @ t["u"], "v": a2 @ t["v"]}

    def solve(matvec, t):
        return {"u": fnp.linalg.solve(a1, t["u"]), "v": fnp.linalg.solve(a2, t["v"])}

    def transpose_solve(vecmat, t):
        return {"u": fnp.linalg.solve(a1.T, t["u"]), "v": fnp.linalg.solve(a2.T, t["v"])}

    x = lax.custom_linear_solve(matvec, {"u": b[:3], "v": fnp.reshape(b[3:], (2, 2))},
                                solve, transpose_solve)
    return fnp.concatenate([x["u"], fnp.ravel(x["v"])])


def _aux_solve(a, b):
    """``has_aux``: the solvers also return a residual, which has no derivative."""
    g = _general(fnp, a)

    def solve(matvec, r):
        x = fnp.linalg.solve(g, r)
        return x, fnp.sum(fnp.abs(matvec(x) - r))

    def transpose_solve(vecmat, r):
        x = fnp.linalg.solve(g.T, r)
        return x, fnp.sum(fnp.abs(vecmat(x) - r))

    x, residual = lax.custom_linear_solve(lambda v: g @ v, b, solve, transpose_solve,
                                          has_aux=True)
    return x + lax.stop_gradient(residual)


def _matrix_rhs(a, b):
    """A right-hand side of several columns: matvec is a matrix product."""
    return _direct(_general(fnp, a), b)


def _newton_sqrt(y):
    """Square roots by Newton's method (a fixed number of steps), differentiated by the
    implicit function theorem."""
    def newton(f, x0):
        return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2 * x), x0)
    return lax.custom_root(lambda x: x * x - y, fnp.ones_like(y), newton,
                           lambda g, r: r / g(fnp.ones_like(y)))


def _vector_root(a, b):
    """The root of ``f(x) = A x + x³/10 - b``: Newton's method with the Jacobian from
    jacfwd, and a dense tangent solve on the Jacobian of the linear map."""
    m = _general(fnp, a)

    def f(x):
        return m @ x + x ** 3 / 10 - b

    def newton(f, x0):
        return lax.fori_loop(0, 25, lambda i, x: x - fnp.linalg.solve(ft.jacfwd(f)(x), f(x)),
                             x0)

    def tangent_solve(g, r):
        return fnp.linalg.solve(ft.jacfwd(g)(r), r)

    return lax.custom_root(f, fnp.zeros_like(b), newton, tangent_solve)


def _root_reference(a, b):
    """The same root by NumPy's Newton iterations (the reference)."""
    m = a + 4 * np.eye(a.shape[-1])
    x = np.zeros_like(b)
    for _ in range(25):
        x = x - np.linalg.solve(m + np.diag(3 * x ** 2 / 10), m @ x + x ** 3 / 10 - b)
    return x


TOL = 1e-13


def _cg(a, b):
    return fsl.cg(_spd(fnp, a), b, tol=TOL)[0]


def _cg_preconditioned(a, b):
    s = _spd(fnp, a)
    inverse_diagonal = 1 / fnp.diagonal(s)
    return fsl.cg(lambda x: s @ x, b, tol=TOL, M=lambda x: inverse_diagonal * x)[0]


def _bicgstab(a, b):
    return fsl.bicgstab(_general(fnp, a), b, tol=TOL)[0]


def _gmres(a, b):
    return fsl.gmres(_general(fnp, a), b, tol=TOL, restart=2)[0]


def _solve_reference(prep):
    return lambda a, b: np.linalg.solve(prep(np, a), b)


PRIMITIVE_CASES = [
    Case("custom_linear_solve", _general_solve, [A(3, 3), A(3)],
         reference=_solve_reference(_general)),
    Case("custom_linear_solve_symmetric", _symmetric_solve, [A(3, 3), A(3)],
         reference=_solve_reference(_spd)),
    Case("custom_linear_solve_nonlinear_operator", _nonlinear_in_a, [A(3, 3), A(3)],
         reference=lambda a, b: np.linalg.solve(_general(np, np.sin(a)), np.tanh(b)) * b),
    Case("custom_linear_solve_pytree", _tree_solve, [A(3, 3), A(7), A(2, 2)], dtypes=(F64,)),
    Case("custom_linear_solve_has_aux", _aux_solve, [A(3, 3), A(3)],
         reference=_solve_reference(_general)),
    Case("custom_linear_solve_matrix_rhs", _matrix_rhs, [A(3, 3), A(3, 2)],
         reference=_solve_reference(_general)),
    Case("custom_root_scalar", _newton_sqrt, [A(3, kind="pos")], reference=np.sqrt),
    Case("custom_root_vector", _vector_root, [A(3, 3), A(3)], dtypes=(F64,),
         reference=_root_reference),
    Case("sparse.linalg.cg", _cg, [A(3, 3), A(3)], dtypes=(F64,), tol=1e-6,
         reference=_solve_reference(_spd)),
    Case("sparse.linalg.cg_preconditioned", _cg_preconditioned, [A(3, 3), A(3)],
         dtypes=(F64,), tol=1e-6, reference=_solve_reference(_spd)),
    Case("sparse.linalg.bicgstab", _bicgstab, [A(3, 3), A(3)], dtypes=(F64,), tol=1e-6,
         reference=_solve_reference(_general)),
    Case("sparse.linalg.gmres", _gmres, [A(3, 3), A(3)], dtypes=(F64,), tol=1e-6,
         reference=_solve_reference(_general)),
]

