"""Targeted tests of ``functrans.lax.linalg``'s functions beyond the decompositions of
tests/test_linalg.py: values (and derivatives where JAX has them) against JAX 0.10.2 and
SciPy's LAPACK wrappers, the packed layouts, the refusals and the errors.  The sweep
(derivatives in both modes, vmap, float32, devices) is in tests/cases_linalg.py."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import lax

RNG = np.random.default_rng(29)


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _draw(shape, complex_=False):
    x = RNG.standard_normal(shape)
    return x + 1j * RNG.standard_normal(shape) if complex_ else x


# -- tridiagonal_solve ---------------------------------------------------------------------


@pytest.mark.parametrize("batch, m, n, complex_", [((), 5, 2, False), ((3,), 4, 1, False),
                                                    ((2,), 6, 3, True), ((), 1, 1, False)])
def test_tridiagonal_solve_and_its_tangent_are_jaxs(batch, m, n, complex_):
    jax = _jax()
    # A small diagonal: the elimination pivots (swaps rows), as LAPACK's gtsv.
    dl, d, du = _draw(batch + (m,), complex_), 0.3 * _draw(batch + (m,), complex_), _draw(
        batch + (m,), complex_)
    b = _draw(batch + (m, n), complex_)
    tangents = tuple(_draw(x.shape, complex_) for x in (dl, d, du, b))
    mine = ft.jvp(lax.linalg.tridiagonal_solve, (dl, d, du, b), tangents)
    theirs = jax.jvp(jax.lax.linalg.tridiagonal_solve, (dl, d, du, b), tangents)
    np.testing.assert_allclose(mine[0], np.asarray(theirs[0]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mine[1], np.asarray(theirs[1]), rtol=1e-10, atol=1e-12)
    full = np.zeros(batch + (m, m), dl.dtype)
    for i in range(m):
        full[..., i, i] = d[..., i]
        if i:
            full[..., i, i - 1], full[..., i - 1, i] = dl[..., i], du[..., i - 1]
    np.testing.assert_allclose(full @ mine[0], b, atol=1e-10)


def test_tridiagonal_solve_gradient_in_all_four_is_jaxs():
    jax = _jax()
    args = (_draw(4), _draw(4) + 3, _draw(4), _draw((4, 2)))
    mine = ft.grad(lambda *a: ft.numpy.sum(lax.linalg.tridiagonal_solve(*a) ** 3),
                   argnums=(0, 1, 2, 3))(*args)
    theirs = jax.grad(lambda *a: (jax.lax.linalg.tridiagonal_solve(*a) ** 3).sum(),
                      argnums=(0, 1, 2, 3))(*args)
    for x, y in zip(mine, theirs):
        np.testing.assert_allclose(x, np.asarray(y), rtol=1e-10, atol=1e-12)
    # dl[0] and du[-1] are not read: their gradients are zero
    assert mine[0][0] == 0 and mine[2][-1] == 0


@pytest.mark.parametrize("perturb_singular", [False, True])
def test_tridiagonal_solve_of_singular_matrices_is_jaxs(perturb_singular):
    jax = _jax()
    dl, d, du = np.array([0.0, 1.0, 0.0]), np.zeros(3), np.array([1.0, 0.0, 0.0])
    b = np.arange(1.0, 4.0)[:, None]
    mine = lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular)
    theirs = jax.lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb_singular)
    np.testing.assert_allclose(mine, np.asarray(theirs), rtol=1e-12)
    assert np.isfinite(mine).all() == perturb_singular


def test_tridiagonal_solve_errors_name_the_argument():
    d = np.ones(3)
    with pytest.raises(ValueError, match=r"tridiagonal_solve: b must have shape \(\.\.\., m, n\)"):
        lax.linalg.tridiagonal_solve(d, d, d, np.ones(3))
    with pytest.raises(ValueError, match="dl, d and du must be vectors"):
        lax.linalg.tridiagonal_solve(np.ones(2), d, d, np.ones((3, 1)))
    with pytest.raises(TypeError, match="one dtype"):
        lax.linalg.tridiagonal_solve(d, d, d.astype(np.float32), np.ones((3, 1)))
