"""``functrans.scipy.sparse.linalg``: the Krylov solvers ``cg``, ``gmres`` and ``bicgstab``
with JAX's signatures.

``A`` (and the preconditioner ``M``) is a square matrix, an object with ``@``, or a
function computing ``A x``; ``b`` and ``x0`` may be any pytrees of arrays of the same
structure.  The iterations are ``lax.while_loop``s, so the solvers run under ``jit`` and
``vmap``, and they are wrapped in ``lax.custom_linear_solve``: derivatives with respect to
``b`` and to whatever ``A`` holds or closes over come from one more solve (of the
transposed system in reverse mode), never from the iterations.  They are as accurate as
that solve's convergence.

Tolerances follow SciPy's current (non-legacy) rule: the iteration stops once
``norm(residual) <= max(tol * norm(b), atol)``.

>>> import numpy as np, functrans as ft
>>> from functrans.scipy.sparse.linalg import cg
>>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
>>> x, info = cg(a, np.array([1.0, 2.0]), tol=1e-12)
>>> np.allclose(x, np.linalg.solve(a, [1.0, 2.0])), info
(True, None)
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

import functrans.numpy as fnp
import functrans.scipy.linalg as fsl
from functrans import lax
from functrans.api import eval_shape
from functrans.core import get_aval
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["bicgstab", "cg", "gmres"]


def __dir__() -> list:
    return sorted(__all__)


# -- pytree arithmetic ---------------------------------------------------------------------


def _add(x, y):
    return tree_map(operator.add, x, y)


def _sub(x, y):
    return tree_map(operator.sub, x, y)


def _scale(a, x):
    return tree_map(lambda leaf: a.astype(leaf.dtype) * leaf if hasattr(a, "astype")
                    else a * leaf, x)


def _select(pred, x, y):
    return tree_map(lambda u, v: fnp.where(pred, u, v), x, y)


def _vdot(x, y):
    """``xᴴ y`` summed over the leaves."""
    return sum(fnp.vdot(u, v) for u, v in zip(tree_leaves(x), tree_leaves(y)))


def _vdot_real(x, y):
    """The real part of ``xᴴ y`` (what ``rᴴ M r`` is for Hermitian ``M``)."""
    return sum(fnp.real(fnp.vdot(u, v)) for u, v in zip(tree_leaves(x), tree_leaves(y)))


def _dtype(tree) -> np.dtype:
    return np.result_type(*[get_aval(x).dtype for x in tree_leaves(tree)])


def _safe(pred, denominator):
    """``denominator`` where ``pred`` is False, else one (so a division never warns)."""
    return fnp.where(pred, fnp.ones_like(denominator), denominator)


# -- arguments -----------------------------------------------------------------------------


def _operator(api: str, name: str, a) -> Callable:
    """``A`` as a function ``x -> A x``."""
    if callable(a):
        return a
    if hasattr(a, "__matmul__") or isinstance(a, (list, tuple)):
        if isinstance(a, (list, tuple)):
            a = fnp.asarray(a)
        shape = tuple(getattr(a, "shape", ()))
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"{api}: the linear operator {name} must be a square matrix or a "
                             f"function, got an array of shape {shape}")
        return lambda x: fnp.matmul(a, x)
    raise TypeError(f"{api}: the linear operator {name} must be a matrix or a function, got "
                    f"{type(a).__name__}")


def _shapes(tree) -> list:
    return [get_aval(x).shape for x in tree_leaves(tree)]


def _arguments(api: str, A, b, x0, M):
    """The operator, right-hand side (inexact leaves), start and preconditioner."""
    leaves, tree = tree_flatten(b)
    if not leaves:
        raise ValueError(f"{api}: b must hold at least one array")
    leaves = [fnp.asarray(x) for x in leaves]
    dtype = np.result_type(*[get_aval(x).dtype for x in leaves])
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    leaves = [x.astype(dtype) if get_aval(x).dtype != dtype else x for x in leaves]
    b = tree_unflatten(tree, leaves)
    if x0 is None:
        x0 = tree_map(fnp.zeros_like, b)
    else:
        x0_leaves, x0_tree = tree_flatten(x0)
        if x0_tree != tree:
            raise ValueError(f"{api}: x0 and b must have the same tree structure, got "
                             f"{x0_tree} and {tree}")
        x0 = tree_unflatten(tree, [fnp.asarray(x).astype(dtype) for x in x0_leaves])
        if _shapes(x0) != _shapes(b):
            raise ValueError(f"{api}: the arrays of x0 and b must have the same shapes, got "
                             f"{_shapes(x0)} and {_shapes(b)}")
    A = _operator(api, "A", A)
    M = (lambda x: x) if M is None else _operator(api, "M", M)
    size = sum(int(np.prod(s)) for s in _shapes(b))
    return A, b, x0, M, size


def _check_operator_output(api: str, A, b, name: str = "A") -> None:
    """A clear error when ``A(x)`` is not shaped like ``b`` (custom_linear_solve's own
    message would name ``matvec``); checked on abstract values, nothing is computed."""
    b_tree = tree_flatten(b)[1]
    try:
        out = eval_shape(A, b)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{api}: {name} cannot be applied to b of structure {b_tree} and shapes "
                         f"{_shapes(b)}: {error}") from None
    out_leaves, out_tree = tree_flatten(out)
    out_shapes = [tuple(x.shape) for x in out_leaves]
    if out_tree != b_tree or out_shapes != _shapes(b):
        raise ValueError(f"{api}: {name} must map b to a value of b's structure and shapes "
                         f"{b_tree} {_shapes(b)}, got {out_tree} {out_shapes}")


def _scaled(iterate: Callable, x0, tol, atol) -> Callable:
    """``iterate(operator, rhs, start, tol, atol)`` as a ``solve(operator, rhs)`` for
    ``custom_linear_solve``.  Right-hand sides can be tiny (a cotangent: their squared norm,
    which the stopping test reads, underflowing) or huge, so the system is solved scaled by
    the largest magnitude in ``rhs`` (``x0`` and ``atol`` scaled with it)."""
    def solve(operator, rhs):
        largest = fnp.max(fnp.stack([fnp.max(fnp.abs(leaf)) for leaf in tree_leaves(rhs)]))
        ok = fnp.isfinite(largest) & (largest > 0)
        safe = _safe(~ok, largest)
        scale = fnp.where(ok & fnp.isfinite(1 / safe), 1 / safe, fnp.ones_like(safe))
        x = iterate(operator, _scale(scale, rhs), _scale(scale, x0), tol, atol * scale)
        return _scale(1 / scale, x)
    return solve


# -- conjugate gradients -------------------------------------------------------------------


def _cg_iterations(A, M, maxiter: int, b, x0, tol, atol):
    threshold = fnp.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r = _sub(b, A(x0))
    z = M(r)
    dtype = _dtype(z)
    gamma = _vdot_real(r, z).astype(dtype)

    def go_on(state):
        _, r, _, _, k = state
        return (_vdot_real(r, r) > threshold) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, gamma, p, k = state
        ap = A(p)
        pap = _vdot_real(p, ap).astype(dtype)
        # in exact arithmetic both are positive for SPD A and M; rounding can make them 0
        broken = (fnp.real(pap) <= 0) | (fnp.real(gamma) <= 0)
        alpha = gamma / _safe(broken, pap)
        x_new = _add(x, _scale(alpha, p))
        r_new = _sub(r, _scale(alpha, ap))
        z = M(r_new)
        gamma_new = _vdot_real(r_new, z).astype(dtype)
        p_new = _add(z, _scale(gamma_new / _safe(broken, gamma), p))
        return (_select(broken, x, x_new), _select(broken, r, r_new),
                fnp.where(broken, gamma, gamma_new), _select(broken, p, p_new),
                fnp.where(broken, -1, k + 1))

    return lax.while_loop(go_on, step, (x0, r, gamma, z, 0))[0]


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None,
       M=None) -> tuple[Any, None]:
    """Solve ``A x = b`` for Hermitian positive definite ``A`` by (preconditioned)
    conjugate gradients.  Returns ``(x, info)`` with ``info`` None, as in JAX.

    ``maxiter`` defaults to ten times the size of ``b``; ``M`` approximates ``A⁻¹``.
    Derivatives solve again with ``cg`` (the system is symmetric for real dtypes).

    >>> import numpy as np, functrans as ft
    >>> from functrans.scipy.sparse.linalg import cg
    >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
    >>> grad_b = ft.grad(lambda b: cg(a, b, tol=1e-12)[0].sum())(np.ones(2))
    >>> np.allclose(grad_b, np.linalg.solve(a, np.ones(2)))
    True
    """
    A, b, x0, M, size = _arguments("cg", A, b, x0, M)
    _check_operator_output("cg", A, b)
    _check_operator_output("cg", M, b, "M")
    maxiter = 10 * size if maxiter is None else maxiter

    def iterate(matvec, rhs, start, tol_, atol_):
        return _cg_iterations(matvec, M, maxiter, rhs, start, tol_, atol_)

    real = all(get_aval(x).dtype.kind != "c" for x in tree_leaves(b))
    solve = _scaled(iterate, x0, tol, atol)
    x = lax.custom_linear_solve(A, b, solve, transpose_solve=solve, symmetric=real)
    return x, None


# -- BiCGSTAB ------------------------------------------------------------------------------


def _bicgstab_iterations(A, M, maxiter: int, b, x0, tol, atol):
    threshold = fnp.maximum(tol ** 2 * _vdot_real(b, b), atol ** 2)
    r = _sub(b, A(x0))
    dtype = _dtype(r)
    one = fnp.ones_like(fnp.real(_vdot(r, r))).astype(dtype)
    zeros = tree_map(fnp.zeros_like, r)

    def go_on(state):
        r, k = state[1], state[-1]
        return (_vdot_real(r, r) > threshold) & (k < maxiter) & (k >= 0)

    def step(state):
        x, r, r_hat, rho, alpha, omega, p, v, k = state
        rho_new = _vdot(r_hat, r)
        beta = (rho_new / _safe(rho == 0, rho)) * (alpha / _safe(omega == 0, omega))
        p = _add(r, _scale(beta, _sub(p, _scale(omega, v))))
        p_hat = M(p)
        v = A(p_hat)
        r_hat_v = _vdot(r_hat, v)
        alpha = rho_new / _safe(r_hat_v == 0, r_hat_v)
        s = _sub(r, _scale(alpha, v))
        half_done = _vdot_real(s, s) <= threshold  # s is small enough: skip the second half
        s_hat = M(s)
        t = A(s_hat)
        tt = _vdot(t, t)
        omega = _vdot(t, s) / _safe(tt == 0, tt)
        x_half = _add(x, _scale(alpha, p_hat))
        x = _select(half_done, x_half, _add(x_half, _scale(omega, s_hat)))
        r = _select(half_done, s, _sub(s, _scale(omega, t)))
        broken = (rho_new == 0) | (r_hat_v == 0) | ((omega == 0) & ~half_done)
        return (x, r, r_hat, rho_new, alpha, omega, p, v, fnp.where(broken, -1, k + 1))

    init = (x0, r, r, one, one, one, zeros, zeros, 0)
    return lax.while_loop(go_on, step, init)[0]


def bicgstab(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M=None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a general square ``A`` by the stabilised biconjugate gradient
    method.  Returns ``(x, info)`` with ``info`` None, as in JAX.

    >>> import numpy as np
    >>> from functrans.scipy.sparse.linalg import bicgstab
    >>> a = np.array([[3.0, 2.0], [-1.0, 2.0]])
    >>> x, _ = bicgstab(a, np.array([1.0, 1.0]), tol=1e-12)
    >>> np.allclose(x, np.linalg.solve(a, [1.0, 1.0]))
    True
    """
    A, b, x0, M, size = _arguments("bicgstab", A, b, x0, M)
    _check_operator_output("bicgstab", A, b)
    _check_operator_output("bicgstab", M, b, "M")
    maxiter = 10 * size if maxiter is None else maxiter

    def iterate(matvec, rhs, start, tol_, atol_):
        return _bicgstab_iterations(matvec, M, maxiter, rhs, start, tol_, atol_)

    solve = _scaled(iterate, x0, tol, atol)
    x = lax.custom_linear_solve(A, b, solve, transpose_solve=solve)
    return x, None


# -- GMRES ---------------------------------------------------------------------------------
#
# GMRES works on one flat vector: the pytree's leaves raveled and concatenated, so that the
# Krylov basis is one matrix V (n x (restart + 1)), filled column by column.


def _raveler(tree):
    """``(ravel, unravel)`` between pytrees shaped like ``tree`` and flat vectors."""
    leaves, structure = tree_flatten(tree)
    shapes = [get_aval(x).shape for x in leaves]
    dtypes = [get_aval(x).dtype for x in leaves]
    sizes = [int(np.prod(s)) for s in shapes]
    offsets = np.cumsum([0] + sizes)

    def ravel(t):
        parts = [fnp.ravel(x) for x in tree_leaves(t)]
        return parts[0] if len(parts) == 1 else fnp.concatenate(parts)

    def unravel(v):
        parts = [fnp.reshape(v[offsets[i]:offsets[i + 1]], shape).astype(dtype)
                 for i, (shape, dtype) in enumerate(zip(shapes, dtypes))]
        return tree_unflatten(structure, parts)
    return ravel, unravel


def _norm(v):
    return fnp.sqrt(fnp.real(fnp.vdot(v, v)))


def _normalized(v, floor=None):
    """``(v / |v|, |v|)``, or zeros and 0 where ``|v|`` is at most ``floor`` (default: the
    dtype's epsilon)."""
    norm = _norm(v)
    if floor is None:
        floor = float(np.finfo(get_aval(norm).dtype).eps)
    small = norm <= floor
    unit = fnp.where(small, fnp.zeros_like(v), v / _safe(small, norm).astype(v.dtype))
    return unit, fnp.where(small, fnp.zeros_like(norm), norm)


def _arnoldi_step(k, A, M, V):
    """Column ``k + 1`` of the Krylov basis from column ``k``: ``M A V[:, k]`` made
    orthogonal to the earlier columns by Gram-Schmidt, twice (once is not enough in
    floating point).  Returns ``(V, h, breakdown)``: ``h`` is the new column of the
    Hessenberg matrix, of length ``restart + 1``."""
    w = M(A(V[:, k]))
    w_norm = _norm(w)
    h = fnp.conj(V.T) @ w
    w = w - V @ h
    correction = fnp.conj(V.T) @ w
    w = w - V @ correction
    h = h + correction
    eps = float(np.finfo(get_aval(w_norm).dtype).eps)
    unit, norm = _normalized(w, eps * w_norm)
    V = V.at[:, k + 1].set(unit)
    h = h.at[k + 1].set(norm.astype(h.dtype))
    return V, h, norm == 0


def _givens(a, b):
    """``(c, s)``, ``c`` real, with ``[[c, s], [-conj(s), c]] @ [a, b] = [r, 0]``."""
    abs_a, abs_b = fnp.abs(a), fnp.abs(b)
    norm = fnp.sqrt(abs_a ** 2 + abs_b ** 2)
    a_zero = abs_a == 0
    phase = fnp.where(a_zero, fnp.ones_like(a), a / _safe(a_zero, abs_a).astype(a.dtype))
    safe_norm = _safe(norm == 0, norm)
    c = fnp.where(a_zero, fnp.zeros_like(abs_a), abs_a / safe_norm)
    s = fnp.where(a_zero, fnp.ones_like(a), phase * fnp.conj(b) / safe_norm.astype(a.dtype))
    return c.astype(a.dtype), s


def _rotate(v, i, c, s):
    """``v`` with the rotation ``(c, s)`` applied to its entries ``i`` and ``i + 1``."""
    vi, vj = v[i], v[i + 1]
    return v.at[i].set(c * vi + s * vj).at[i + 1].set(-fnp.conj(s) * vi + c * vj)


def _gmres_cycle_incremental(A, M, b, x, unit_r, r_norm, ptol, restart: int):
    """One restart: the Hessenberg matrix is reduced to triangular form by Givens
    rotations as it grows, which gives the residual norm at every step, so the cycle
    stops as soon as it is below ``ptol``."""
    dtype = get_aval(b).dtype
    V = fnp.zeros((b.shape[0], restart + 1), dtype, like=b).at[:, 0].set(unit_r)
    # the identity leaves R invertible when the cycle stops early
    R = fnp.eye(restart + 1, restart, dtype=dtype, like=b)
    rotations = fnp.zeros((restart, 2), dtype, like=b)
    g = fnp.zeros((restart + 1,), dtype, like=b).at[0].set(r_norm.astype(dtype))

    def go_on(state):
        k, err = state[0], state[1]
        return (k < restart) & (err > ptol)

    def step(state):
        k, _, V, R, g, rotations = state
        V, h, _ = _arnoldi_step(k, A, M, V)
        h = lax.fori_loop(0, k, lambda i, h: _rotate(h, i, rotations[i, 0], rotations[i, 1]),
                          h)
        c, s = _givens(h[k], h[k + 1])
        h = _rotate(h, k, c, s)
        rotations = rotations.at[k, 0].set(c).at[k, 1].set(s)
        R = R.at[:, k].set(h)
        g = _rotate(g, k, c, s)
        return k + 1, fnp.abs(g[k + 1]), V, R, g, rotations

    state = (0, r_norm, V, R, g, rotations)
    _, _, V, R, g, _ = lax.while_loop(go_on, step, state)
    y = fsl.solve_triangular(R[:restart, :], g[:restart], lower=False)
    return x + V[:, :restart] @ y


def _gmres_cycle_batched(A, M, b, x, unit_r, r_norm, ptol, restart: int):
    """One restart: build the whole Krylov basis (stopping only at a breakdown), then
    solve the small least-squares problem ``min |H y - r_norm e1|`` at once."""
    dtype = get_aval(b).dtype
    V = fnp.zeros((b.shape[0], restart + 1), dtype, like=b).at[:, 0].set(unit_r)
    # the identity keeps the normal equations invertible after a breakdown
    H = fnp.eye(restart + 1, restart, dtype=dtype, like=b)

    def go_on(state):
        k, broken = state[0], state[1]
        return (k < restart) & ~broken

    def step(state):
        k, _, V, H = state
        V, h, broken = _arnoldi_step(k, A, M, V)
        return k + 1, broken, V, H.at[:, k].set(h)

    _, _, V, H = lax.while_loop(go_on, step, (0, False, V, H))
    rhs = fnp.zeros((restart + 1,), dtype, like=b).at[0].set(r_norm.astype(dtype))
    h_adjoint = fnp.conj(H.T)
    y = fnp.linalg.solve(h_adjoint @ H, h_adjoint @ rhs)
    return x + V[:, :restart] @ y


def _gmres_iterations(cycle, A, M, b, x0, atol, ptol, restart: int, maxiter: int):
    unit_r, r_norm = _normalized(M(b - A(x0)))

    def go_on(state):
        _, k, _, r_norm = state
        return (k < maxiter) & (r_norm > atol)

    def step(state):
        x, k, unit_r, r_norm = state
        x = cycle(A, M, b, x, unit_r, r_norm, ptol, restart)
        unit_r, r_norm = _normalized(M(b - A(x)))
        return x, k + 1, unit_r, r_norm

    return lax.while_loop(go_on, step, (x0, 0, unit_r, r_norm))[0]


def gmres(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, restart: int = 20,
          maxiter: int | None = None, M=None, solve_method: str = "batched"):
    """Solve ``A x = b`` for a general square ``A`` by restarted GMRES.  Returns
    ``(x, info)``: ``info`` is 0, or -1 if ``x`` holds NaN, as in JAX.

    Each of at most ``maxiter`` cycles (default: ten times the size of ``b``) builds a
    Krylov space of dimension ``restart`` (at most the size of ``b``) and projects the
    solution on it.  ``solve_method="incremental"`` reduces the Hessenberg matrix by Givens
    rotations as it grows and stops a cycle as soon as the residual is small enough;
    ``"batched"`` (the default) builds the whole space, then solves one least-squares
    problem.  The preconditioner ``M`` is applied on the left, also when solving the
    transposed system for reverse mode.

    >>> import numpy as np
    >>> from functrans.scipy.sparse.linalg import gmres
    >>> a = np.array([[3.0, 2.0, 0.0], [-1.0, 2.0, 1.0], [0.0, 1.0, 4.0]])
    >>> x, info = gmres(a, np.ones(3), tol=1e-12, solve_method="incremental")
    >>> np.allclose(x, np.linalg.solve(a, np.ones(3))), int(info)
    (True, 0)
    """
    cycles = {"batched": _gmres_cycle_batched, "incremental": _gmres_cycle_incremental}
    if solve_method not in cycles:
        raise ValueError(f"gmres: solve_method must be 'incremental' or 'batched', got "
                         f"{solve_method!r}")
    A, b, x0, M, size = _arguments("gmres", A, b, x0, M)
    _check_operator_output("gmres", A, b)
    _check_operator_output("gmres", M, b, "M")
    maxiter = 10 * size if maxiter is None else maxiter
    restart = min(int(restart), size)
    if restart < 1:
        raise ValueError(f"gmres: restart must be at least 1, got {restart}")
    ravel, unravel = _raveler(b)
    cycle = cycles[solve_method]

    def iterate(matvec, rhs, start, tol, atol):
        # the tolerances come from the right-hand side being solved for (a cotangent, in
        # reverse mode), not from b
        rhs_norm = fnp.sqrt(_vdot_real(rhs, rhs))
        atol = fnp.maximum(tol * rhs_norm, atol)
        m_rhs = M(rhs)
        ptol = fnp.sqrt(_vdot_real(m_rhs, m_rhs)) * fnp.minimum(
            1.0, atol / _safe(rhs_norm == 0, rhs_norm))

        def flat(f):
            return lambda v: ravel(f(unravel(v)))
        x = _gmres_iterations(cycle, flat(matvec), flat(M), ravel(rhs), ravel(start), atol,
                              ptol, restart, maxiter)
        return unravel(x)

    solve = _scaled(iterate, x0, tol, atol)
    x = lax.custom_linear_solve(A, b, solve, transpose_solve=solve)
    x_norm = fnp.sqrt(_vdot_real(x, x))
    info = fnp.where(fnp.isnan(x_norm), -1, 0)
    return x, info
