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


@pytest.mark.parametrize("batch, m, n, complex_", [((3,), 5, 2, False), ((2,), 6, 3, True),
                                                    ((), 1, 1, False)])
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


# -- the packed Householder forms: tridiagonal, hessenberg ------------------------------------


def _lapack(name, *arrays):
    from scipy.linalg.lapack import get_lapack_funcs
    return get_lapack_funcs((name,), arrays)[0]


@pytest.mark.parametrize("n, complex_", [(1, False), (2, True), (4, False), (5, True)])
def test_tridiagonal_and_hessenberg_are_lapacks_and_jaxs(n, complex_):
    jax = _jax()
    a = _draw((2, n, n), complex_)
    h = a + np.conj(np.swapaxes(a, -1, -2))
    for lower in (True, False):
        mine = lax.linalg.tridiagonal(h, lower=lower)
        theirs = jax.lax.linalg.tridiagonal(h, lower=lower)
        for x, y in zip(mine, theirs):
            assert x.shape == y.shape and x.dtype == y.dtype
            np.testing.assert_allclose(x, np.asarray(y), rtol=1e-12, atol=1e-13)
        if n > 1:
            arr, d, e, taus, _ = _lapack("hetrd" if complex_ else "sytrd", h[1])(
                h[1], lower=int(lower))
            for x, y in zip(mine, (arr, d, e, taus)):
                np.testing.assert_array_equal(x[1], y)
    mine = lax.linalg.hessenberg(a)
    theirs = jax.lax.linalg.hessenberg(a)
    for x, y in zip(mine, theirs):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, np.asarray(y), rtol=1e-12, atol=1e-13)
    if n > 1:
        packed, taus, _ = _lapack("gehrd", a[0])(a[0])
        np.testing.assert_array_equal(mine[0][0], packed)
        np.testing.assert_array_equal(mine[1][0], taus)


def test_packed_forms_batch_jit_and_refuse_derivatives():
    a = _draw((3, 4, 4))
    h = a + np.swapaxes(a, -1, -2)
    for fun, x in ((lambda m: lax.linalg.tridiagonal(m)[1], h),
                   (lambda m: lax.linalg.hessenberg(m)[0], a),
                   (lambda m: lax.linalg.schur(m)[0], a)):
        np.testing.assert_array_equal(ft.vmap(fun)(x), fun(x))
        np.testing.assert_array_equal(ft.jit(fun)(x), fun(x))
    for fun, x, name in ((lax.linalg.tridiagonal, h, "functrans.lax.linalg.tridiagonal"),
                         (lax.linalg.hessenberg, a, "functrans.lax.linalg.hessenberg"),
                         (lax.linalg.schur, a, "functrans.lax.linalg.schur")):
        with pytest.raises(NotImplementedError, match=name):
            ft.jvp(fun, (x,), (np.ones_like(x),))
        with pytest.raises(NotImplementedError, match=name):
            ft.grad(lambda m: fun(m)[0].sum())(x)


def test_schur_is_jaxs_and_refuses_sorting():
    jax = _jax()
    a = _draw((4, 4))
    for vectors in (True, False):
        mine = lax.linalg.schur(a, compute_schur_vectors=vectors)
        theirs = jax.lax.linalg.schur(a, compute_schur_vectors=vectors)
        assert len(mine) == len(theirs)
        for x, y in zip(mine, theirs):
            np.testing.assert_allclose(x, np.asarray(y), atol=1e-12)
    with pytest.raises(NotImplementedError, match="schur: sort_eig_vals"):
        lax.linalg.schur(a, sort_eig_vals=True)


# -- householder_product and ormqr ---------------------------------------------------------


@pytest.mark.parametrize("m, n, k, complex_", [(5, 3, 3, False), (4, 4, 2, True)])
def test_householder_product_and_ormqr_are_lapacks_and_jaxs(m, n, k, complex_):
    jax = _jax()
    packed, taus = _lapack("geqrf", _draw((m, n), complex_))(_draw((m, n), complex_))[:2]
    taus = taus[:k]
    q = lax.linalg.householder_product(packed, taus)
    orgqr = _lapack("ungqr" if complex_ else "orgqr", packed)
    np.testing.assert_allclose(q, orgqr(packed, taus)[0], atol=1e-13)
    np.testing.assert_allclose(q, np.asarray(jax.lax.linalg.householder_product(packed, taus)),
                               atol=1e-13)
    ormqr = _lapack("unmqr" if complex_ else "ormqr", packed)
    for left in (True, False):
        for transpose in (False, True):
            c = _draw((m, 2) if left else (2, m), complex_)
            mine = lax.linalg.ormqr(packed, taus, c, left=left, transpose=transpose)
            trans = ("C" if complex_ else "T") if transpose else "N"
            # SciPy's wrapper wants as many reflectors (columns) as factors
            lapack = ormqr("L" if left else "R", trans, packed[:, :k].copy(), taus, c,
                           lwork=64)[0]
            np.testing.assert_allclose(mine, lapack, atol=1e-13)
            np.testing.assert_allclose(mine, np.asarray(jax.lax.linalg.ormqr(
                packed, taus, c, left=left, transpose=transpose)), atol=1e-13)


def test_householder_errors_name_the_argument():
    with pytest.raises(ValueError, match="householder_product: taus must have shape"):
        lax.linalg.householder_product(np.ones((3, 2)), np.ones(3))
    with pytest.raises(ValueError, match="at least as many rows"):
        lax.linalg.householder_product(np.ones((2, 3)), np.ones(1))
    with pytest.raises(ValueError, match=r"ormqr: c must have shape \(\.\.\., r, m\)"):
        lax.linalg.ormqr(np.ones((3, 2)), np.ones(2), np.ones((3, 2)), left=False)


# -- cholesky_update, symmetric_product, qdwh, lu_pivots_to_permutation ---------------------


def test_cholesky_update_and_symmetric_product_are_jaxs():
    jax = _jax()
    x = _draw((4, 4))
    r = np.linalg.cholesky(x @ x.T + np.eye(4)).T
    for w in (_draw(4), np.array([0.0, 0.0, 1.0, -2.0])):
        mine = lax.linalg.cholesky_update(r, w)
        np.testing.assert_allclose(mine, np.asarray(jax.lax.linalg.cholesky_update(r, w)),
                                   atol=1e-13)
        np.testing.assert_allclose(mine.T @ mine, r.T @ r + np.outer(w, w), atol=1e-12)
    a, c = _draw((3, 5)), _draw((3, 3))
    for symmetrize in (False, True):
        mine = lax.linalg.symmetric_product(a, c, alpha=0.5, beta=2.0,
                                            symmetrize_output=symmetrize)
        theirs = jax.lax.linalg.symmetric_product(a, c, alpha=0.5, beta=2.0,
                                                  symmetrize_output=symmetrize)
        np.testing.assert_allclose(mine, np.asarray(theirs), atol=1e-13)
    with pytest.raises(TypeError, match="symmetric_product: a_matrix must be a real"):
        lax.linalg.symmetric_product(a + 0j, c + 0j)
    with pytest.raises(ValueError, match="cholesky_update: w_vector must have shape"):
        lax.linalg.cholesky_update(r, np.ones(3))


@pytest.mark.parametrize("complex_", [False, True])
def test_qdwh_is_jaxs(complex_):
    jax = _jax()
    x = _draw((5, 3), complex_)
    mine = lax.linalg.qdwh(x)
    theirs = jax.lax.linalg.qdwh(x)
    for a, b in zip(mine, theirs):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    for a, b in zip(mine[:2], theirs[:2]):
        np.testing.assert_allclose(a, np.asarray(b), atol=1e-10)
    assert int(mine[2]) == 0 and bool(mine[3])
    with pytest.raises(ValueError, match="m >= n"):
        lax.linalg.qdwh(x.T)
    with pytest.raises(NotImplementedError, match="dynamic_shape"):
        lax.linalg.qdwh(x, dynamic_shape=(4, 3))


def test_lu_pivots_to_permutation_is_jaxs_and_lus():
    jax = _jax()
    pivots = np.array([[2, 2, 3], [0, 3, 2], [1, 1, 2]], np.int32)
    mine = lax.linalg.lu_pivots_to_permutation(pivots, 5)
    np.testing.assert_array_equal(mine, jax.lax.linalg.lu_pivots_to_permutation(pivots, 5))
    assert mine.dtype == np.int32
    np.testing.assert_array_equal(ft.vmap(lambda p: lax.linalg.lu_pivots_to_permutation(
        p, 5))(pivots), mine)
    np.testing.assert_array_equal(ft.jit(lambda p: lax.linalg.lu_pivots_to_permutation(
        p, 5))(pivots), mine)
    _, lu_pivots, permutation = lax.linalg.lu(_draw((2, 4, 4)))
    np.testing.assert_array_equal(lax.linalg.lu_pivots_to_permutation(lu_pivots, 4),
                                  permutation)
    with pytest.raises(ValueError, match="k <= permutation_size"):
        lax.linalg.lu_pivots_to_permutation(pivots, 2)


def test_algorithm_enums_are_jaxs():
    jax = _jax()
    for name in ("EigImplementation", "EighImplementation", "SvdAlgorithm"):
        mine, theirs = getattr(lax.linalg, name), getattr(jax.lax.linalg, name)
        assert [(m.name, m.value) for m in mine] == [(m.name, m.value) for m in theirs]
    x = _draw((3, 3))
    s = x + x.T
    np.testing.assert_allclose(
        lax.linalg.eigh(s, implementation=lax.linalg.EighImplementation.JACOBI)[1],
        np.linalg.eigvalsh(s), atol=1e-12)
    np.testing.assert_allclose(
        lax.linalg.svd(x, compute_uv=False, algorithm=lax.linalg.SvdAlgorithm.POLAR),
        np.linalg.svd(x, compute_uv=False), atol=1e-12)


@pytest.mark.parametrize("name", ["tridiagonal", "hessenberg"])
def test_packed_forms_refuse_device_arrays_without_copying(name):
    """CuPy has no sytrd or gehrd: the stand-in's arrays get an error naming the function,
    and nothing is copied to the host."""
    import cupy_standin as standin
    x = standin.asarray(np.eye(3))
    with standin.transfers() as counts:
        with pytest.raises(NotImplementedError,
                           match=rf"functrans.lax.linalg.{name}: cupy_standin has no LAPACK"):
            getattr(lax.linalg, name)(x)
    assert counts.d2h == 0
