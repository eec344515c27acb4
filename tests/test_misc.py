"""Targeted tests of the session-4 additions to functrans.numpy that the sweep
(tests/cases_misc.py) cannot express: every einsum form against numpy.einsum, creation
functions that make constants (windows, tri, logspace), the dtype queries on tracers,
functions whose output shape depends on values, documented choices, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core import ConcretizationTypeError
from sweep import check_grads

RNG = np.random.default_rng(7)


def _r(*shape):
    return RNG.standard_normal(shape)


# ------------------------------------------------------------------------------------------
# einsum
# ------------------------------------------------------------------------------------------

EINSUM_FORMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),                        # implicit output
    ("ji,jk", [(3, 2), (3, 4)]),                        # implicit output, sorted labels
    ("ii", [(3, 3)]),                                   # trace
    ("ii->i", [(3, 3)]),                                # diagonal
    ("iij->ji", [(2, 2, 3)]),
    ("ijj,kjj->ik", [(2, 3, 3), (4, 3, 3)]),            # diagonals in both operands
    ("i,i", [(3,), (3,)]),
    ("i,i->i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("...", [(2, 3)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),        # broadcast batch
    ("...ij,...jk->...ik", [(5, 1, 2, 3), (4, 3, 2)]),  # broadcast of size-1 axes
    ("...i,i...", [(2, 3), (3, 2)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 2, 1)]),
    ("i...->...", [(2, 3, 4)]),
    ("bii,bi->b", [(2, 3, 3), (2, 3)]),
    ("i,i", [(1,), (3,)]),                              # a size-1 axis broadcasts
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("a b , b c -> a c", [(2, 3), (3, 4)]),             # spaces are ignored
]


@pytest.mark.parametrize("optimize", ["auto", False, True, "greedy", "optimal"])
@pytest.mark.parametrize("spec,shapes", EINSUM_FORMS, ids=[f[0] for f in EINSUM_FORMS])
def test_einsum_matches_numpy(spec, shapes, optimize):
    operands = [_r(*s) for s in shapes]
    np.testing.assert_allclose(fnp.einsum(spec, *operands, optimize=optimize),
                               np.einsum(spec, *operands), rtol=1e-12, atol=1e-12)


def test_einsum_sublist_forms_match_numpy():
    a, b, v = _r(2, 3), _r(3, 4), _r(3)
    for args in [(a, [0, 1], b, [1, 2], [0, 2]), (a, [0, 1], b, [1, 2]),
                 (a, [Ellipsis, 1], v, [1]), (a, [0, 0 + 1], [1, 0]),
                 (a, [Ellipsis, 1], v, [1], [Ellipsis])]:
        np.testing.assert_allclose(fnp.einsum(*args), np.einsum(*args), rtol=1e-12)


def test_einsum_explicit_path_and_keywords():
    a, b, c = _r(2, 3), _r(3, 4), _r(4, 5)
    path = fnp.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    assert path == np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    want = np.einsum("ij,jk,kl->il", a, b, c)
    np.testing.assert_allclose(fnp.einsum("ij,jk,kl->il", a, b, c, optimize=path), want)
    out = fnp.einsum("ij,jk,kl->il", a.astype(np.float32), b, c, precision="highest",
                     preferred_element_type=np.float32)
    assert out.dtype == np.float32


def test_einsum_path_reads_only_shapes_of_tracers():
    a, b = _r(2, 3), _r(3, 4)
    paths = []
    ft.grad(lambda x: (paths.append(fnp.einsum_path("ij,jk", x, b)[0]), fnp.sum(x))[1])(a)
    assert paths == [np.einsum_path("ij,jk", a, b)[0]]


@pytest.mark.parametrize("spec,shapes", [("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
                                         ("iij,jk", [(2, 2, 3), (3, 2)]),
                                         ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 2)])])
def test_einsum_derivatives_to_second_order(spec, shapes):
    operands = [_r(*s) for s in shapes]
    check_grads(lambda *xs: fnp.einsum(spec, *xs), operands, 2, RNG)


def test_einsum_batches_under_vmap():
    a, b = _r(4, 2, 2, 3), _r(3)
    got = ft.vmap(lambda x: fnp.einsum("ii...,...->...i", x, b))(a)
    np.testing.assert_allclose(got, np.stack([np.einsum("ii...,...->...i", x, b) for x in a]))


@pytest.mark.parametrize("call,match", [
    (lambda: fnp.einsum("ii->ii", np.ones((2, 2))), "output subscript 'i' appears more"),
    (lambda: fnp.einsum("ij->k", np.ones((2, 2))), "'k' does not occur in the inputs"),
    (lambda: fnp.einsum("ij,jk", np.ones((2, 3)), np.ones((4, 2))), "sizes 3 and 4"),
    (lambda: fnp.einsum("i->", np.ones((2, 2))), "do not match an operand of shape"),
    (lambda: fnp.einsum("i$", np.ones(2)), "invalid subscript character"),
    (lambda: fnp.einsum("ij,jk", np.ones((2, 2))), "2 operand subscripts for 1 operands"),
    (lambda: fnp.einsum("ii", np.ones((2, 3))), "subscript 'i' label axes of sizes 2 and 3"),
    (lambda: fnp.einsum(np.ones(2), [0.5]), "sublist subscripts must be integers"),
    (lambda: fnp.einsum("i", np.ones(2), optimize="fast"), "optimize must be"),
])
def test_einsum_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="NumPy before 2.2 has no matvec/vecmat")
def test_vecdot_conjugates_the_first_and_matvec_vecmat_match_numpy():
    z, w, m = _r(3) + 1j * _r(3), _r(2, 3) + 1j * _r(2, 3), _r(4, 3, 2)
    np.testing.assert_allclose(fnp.vecdot(z, w), np.vecdot(z, w))
    np.testing.assert_allclose(fnp.vecmat(z, m), np.vecmat(z, m))
    x = _r(4, 3, 2)
    np.testing.assert_allclose(fnp.matvec(m, x[:, 0]), np.matvec(m, x[:, 0]))
    np.testing.assert_allclose(fnp.matvec(m.swapaxes(-1, -2), x[..., 0]),
                               np.matvec(m.swapaxes(-1, -2), x[..., 0]))
    with pytest.raises(ValueError, match="vecdot: axis 2 is out of range"):
        fnp.vecdot(np.ones(3), np.ones((2, 3)), axis=2)
    with pytest.raises(ValueError, match="matvec: x1 needs at least 2 axes"):
        fnp.matvec(np.ones(3), np.ones(3))


# ------------------------------------------------------------------------------------------
# Creation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("m", [0, 1, 6])
def test_windows_match_numpy(name, m):
    np.testing.assert_allclose(getattr(fnp, name)(m), getattr(np, name)(m))


def test_kaiser_matches_numpy_and_differentiates_in_beta():
    np.testing.assert_allclose(fnp.kaiser(7, 4.5), np.kaiser(7, 4.5))
    traced = ft.vmap(lambda b: fnp.kaiser(6, b))(np.array([0.5, 8.0, 14.0]))
    np.testing.assert_allclose(traced, np.stack([np.kaiser(6, b) for b in (0.5, 8.0, 14.0)]),
                               rtol=1e-12)
    check_grads(lambda b: fnp.kaiser(5, b), [np.float64(3.0)], 2, RNG)


def test_tri_diagflat_meshgrid_fromfunction_match_numpy():
    np.testing.assert_array_equal(fnp.tri(3, 4, -1), np.tri(3, 4, -1))
    assert fnp.tri(2).dtype == np.float64 and fnp.tri(2, dtype=int).dtype == np.int64
    np.testing.assert_array_equal(fnp.diagflat([[1, 2], [3, 4]], 1),
                                  np.diagflat([[1, 2], [3, 4]], 1))
    x, y, z = np.arange(2.0), np.arange(3.0), np.arange(4.0)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            for got, want in zip(fnp.meshgrid(x, y, z, indexing=indexing, sparse=sparse),
                                 np.meshgrid(x, y, z, indexing=indexing, sparse=sparse)):
                np.testing.assert_array_equal(got, want)
    assert isinstance(fnp.meshgrid(x, y), tuple)  # the array API standard's type
    np.testing.assert_array_equal(fnp.fromfunction(lambda i, j, k=1: i * 10 + j + k, (2, 3), k=5),
                                  np.fromfunction(lambda i, j, k=1: i * 10 + j + k, (2, 3), k=5))
    with pytest.raises(ValueError, match="indexing must be 'xy' or 'ij'"):
        fnp.meshgrid(x, indexing="yx")


def test_logspace_geomspace_match_numpy_and_differentiate_traced_ends():
    np.testing.assert_allclose(fnp.logspace(0.0, 3.0, 4, base=2.0), np.logspace(0, 3, 4, base=2))
    np.testing.assert_allclose(fnp.geomspace(-1.0, -1000.0, 4), np.geomspace(-1, -1000, 4))
    np.testing.assert_allclose(ft.vmap(lambda s: fnp.logspace(s, 2.0, 5, endpoint=False))(
        np.array([0.0, 1.0])), [np.logspace(s, 2.0, 5, endpoint=False) for s in (0.0, 1.0)])
    np.testing.assert_allclose(ft.vmap(lambda s: fnp.geomspace(s, 8.0, 4))(np.array([1.0, 2.0])),
                               [np.geomspace(s, 8.0, 4) for s in (1.0, 2.0)])
    check_grads(lambda s, e, b: fnp.logspace(s, e, 4, base=b), [0.5, 1.5, 3.0], 2, RNG)
    check_grads(lambda s, e: fnp.geomspace(s, e, 4), [0.5, 4.0], 2, RNG)


def test_empty_like_and_copy():
    x = np.arange(3.0)
    np.testing.assert_array_equal(fnp.empty_like(x), np.zeros(3))
    assert fnp.empty_like(x, dtype=np.int32, shape=(2, 2)).dtype == np.int32
    y = fnp.copy(x)
    y[0] = 7.0
    assert x[0] == 0.0
    assert ft.grad(lambda t: fnp.copy(t) * 2.0)(1.0) == 2.0


# ------------------------------------------------------------------------------------------
# Dtypes
# ------------------------------------------------------------------------------------------


def test_dtype_queries_accept_tracers():
    def f(x):
        assert fnp.result_type(x, np.float32) == np.float64
        assert np.result_type(x) == np.float64  # NumPy's own dispatches here
        assert fnp.result_type(x * 1, 1.0) == np.float64
        assert fnp.can_cast(x, np.float32, "same_kind") and not fnp.can_cast(x, np.int32)
        assert np.can_cast(x, np.complex128)
        assert fnp.iterable(x) == (x.ndim > 0)
        return fnp.sum(x)
    ft.grad(f)(np.ones(2))
    ft.grad(f)(np.float64(1.0))

    def f32(x):  # a weakly typed tracer (from a Python scalar) does not upcast float32
        assert fnp.result_type(x, np.float32) == np.float32
        return x
    ft.jvp(f32, (1.0,), (1.0,))


def test_dtype_names_and_helpers():
    assert fnp.bool is np.bool_ and fnp.single is np.float32 and fnp.double is np.float64
    assert fnp.float_ is np.float64 and fnp.complex_ is np.complex128
    assert fnp.int_ is np.int64 and fnp.uint is np.uint64 and fnp.uint16 is np.uint16
    assert fnp.issubdtype(fnp.float32, fnp.floating)
    assert fnp.issubdtype(fnp.int8, fnp.signedinteger)
    assert not fnp.issubdtype(fnp.uint8, fnp.signedinteger)
    assert fnp.issubdtype(fnp.complex64, fnp.complexfloating)
    assert fnp.issubdtype(fnp.float16, fnp.inexact) and fnp.issubdtype(fnp.int32, fnp.number)
    assert fnp.promote_types("int8", "uint8") == np.int16
    assert fnp.broadcast_shapes((2, 1), (3,), ()) == (2, 3)
    assert fnp.isdtype(fnp.float32, ("real floating", "complex floating"))
    assert not fnp.isdtype(np.int8, "unsigned integer")
    assert fnp.iterable([1]) and not fnp.iterable(1)


# ------------------------------------------------------------------------------------------
# Shape functions: value-dependent shapes, documented choices, errors
# ------------------------------------------------------------------------------------------


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.2.0",
                    reason="NumPy's trim_zeros takes axis= from 2.2")
def test_trim_zeros_needs_concrete_values():
    x = np.array([[0, 0, 0], [0, 3, 0], [0, 0, 4]])
    np.testing.assert_array_equal(fnp.trim_zeros(x), np.trim_zeros(x))
    np.testing.assert_array_equal(fnp.trim_zeros(x, "b", axis=0), np.trim_zeros(x, "b", axis=0))
    np.testing.assert_array_equal(fnp.trim_zeros(np.zeros(3)), np.trim_zeros(np.zeros(3)))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros: the output shape depends"):
        ft.grad(lambda v: fnp.sum(fnp.trim_zeros(v)))(np.ones(3))
    with pytest.raises(ValueError, match="trim must be made of 'f' and 'b'"):
        fnp.trim_zeros(x, "x")


@pytest.mark.parametrize("call,want", [
    (lambda m, x: m.insert(x, 2, 9.0), None),
    (lambda m, x: m.insert(x, slice(1, 3), [7.0, 8.0], axis=1), None),
    (lambda m, x: m.insert(x, [1, 1], [[7.0], [8.0]], axis=0), None),
    (lambda m, x: m.delete(x, [0, -1], axis=1), None),
    (lambda m, x: m.delete(x, np.array([True, False, True]), axis=0), None),
    (lambda m, x: m.delete(x, 4), None),
    (lambda m, x: m.resize(x, 11), None),
    (lambda m, x: m.resize(x, (2, 0)), None),
    (lambda m, x: m.block([[x], [x]]), None),
    (lambda m, x: m.block([1.0, x[0]]), None),
    (lambda m, x: m.array_split(x, 2, axis=1), None),
    (lambda m, x: m.array_split(x, [1, 5], axis=0), None),
    (lambda m, x: m.rot90(x, -1, axes=(1, 0)), None),
    (lambda m, x: m.rollaxis(x, 0, 2), None),
    (lambda m, x: m.kron(x, 2.0), None),
    (lambda m, x: m.atleast_3d(x[0, 0]), None),
    (lambda m, x: m.append(x, x[:1].astype(np.int32), axis=0), None),
])
def test_shape_functions_match_numpy(call, want):
    x = np.arange(12.0).reshape(3, 4)
    got, want = call(fnp, x), call(np, x)
    for g, w in zip(got if isinstance(got, (list, tuple)) else [got],
                    want if isinstance(want, (list, tuple)) else [want]):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("call,error,match", [
    (lambda: ft.grad(lambda i: fnp.sum(fnp.delete(np.ones(3), i)))(1.0), NotImplementedError,
     "delete: the positions `obj` must be static"),
    (lambda: fnp.vsplit(np.ones(3), 3), ValueError, "vsplit: needs an array of at least two"),
    (lambda: fnp.dsplit(np.ones((2, 2)), 2), ValueError, "dsplit: needs an array of at least"),
    (lambda: fnp.hsplit(np.float64(1.0), 1), ValueError, "hsplit: needs an array"),
    (lambda: fnp.fliplr(np.ones(3)), ValueError, "fliplr: needs an array of at least two"),
    (lambda: fnp.rot90(np.ones((2, 2)), axes=(0, 0)), ValueError, "rot90: the two axes"),
    (lambda: fnp.rollaxis(np.ones((2, 2)), 0, 5), ValueError, "rollaxis: start must be in"),
    (lambda: fnp.matrix_transpose(np.ones(2)), ValueError, "matrix_transpose: needs"),
    (lambda: fnp.block([[np.ones(2)], np.ones(2)]), ValueError, "nested to different depths"),
    (lambda: fnp.block(([np.ones(2)],)), TypeError, "must be lists, not tuples"),
    (lambda: fnp.array_split(np.ones(3), 0), ValueError, "sections must be positive"),
    (lambda: fnp.resize(np.ones(3), -1), ValueError, "new_shape must be non-negative"),
    (lambda: fnp.unstack(np.float64(1.0)), ValueError, "unstack: needs an array"),
])
def test_shape_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ------------------------------------------------------------------------------------------
# Polynomials and sampled calculus
# ------------------------------------------------------------------------------------------


def test_polynomial_choices_follow_jax():
    q, r = fnp.polydiv(np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 1.0]))
    np.testing.assert_allclose(q, [0.5, 0.75, 1.125])
    np.testing.assert_allclose(r, [0.0, 0.0, 0.0, 2.875])  # u's length, as in JAX
    q, r = fnp.polydiv(np.array([0.0, 1.0, 2.0]), np.array([0.0, 1.0]),
                       trim_leading_zeros=True)
    np.testing.assert_allclose(q, [1.0, 2.0])
    np.testing.assert_allclose(fnp.polymul(np.array([0.0, 1.0]), np.array([1.0, 1.0])),
                               [0.0, 1.0, 1.0])
    np.testing.assert_allclose(fnp.polymul(np.array([0.0, 1.0]), np.array([1.0, 1.0]),
                                           trim_leading_zeros=True), [1.0, 1.0])
    with pytest.raises(ConcretizationTypeError, match="polymul: trim_leading_zeros=True"):
        ft.grad(lambda p: fnp.sum(fnp.polymul(p, p, trim_leading_zeros=True)))(np.ones(2))
    assert fnp.polyder(np.array([5.0])).shape == (0,)
    np.testing.assert_allclose(fnp.polyval(np.array([]), np.array([1.0, 2.0])), [0.0, 0.0])
    assert fnp.vander(np.array([1.0, 2.0]), 0).shape == (2, 0)
    # d/dx x ** 0 is zero, also at x = 0.
    np.testing.assert_allclose(ft.jacfwd(lambda x: fnp.vander(x, 2))(np.zeros(2))[:, 1],
                               np.zeros((2, 2)))


def test_polynomial_errors():
    with pytest.raises(ValueError, match="poly: expected a 1-D array of roots or a square"):
        fnp.poly(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"polyfit: the number of data points \(3\) must "
                                         r"exceed the order \(3\)"):
        fnp.polyfit(np.arange(3.0), np.arange(3.0), 2, cov=True)
    with pytest.raises(ValueError, match="3 points cannot determine a polynomial of degree 3"):
        fnp.polyfit(np.arange(3.0), np.arange(3.0), 3)
    with pytest.raises(ValueError, match="polyint: k must be a scalar or have m = 2"):
        fnp.polyint(np.ones(2), 2, k=[1.0, 2.0, 3.0])


def test_polyfit_weighted_and_differentiable():
    x, y, w = np.linspace(-1, 1, 7), _r(7, 2), np.linspace(0.5, 2.0, 7)
    np.testing.assert_allclose(fnp.polyfit(x, y, 2, w=w), np.polyfit(x, y, 2, w=w))
    check_grads(lambda x, y, w: fnp.polyfit(x, y, 2, w=w), [x, y[:, 0], w], 1, RNG)


def test_interp_edges_period_and_derivatives():
    xp, fp = np.array([0.0, 1.0, 3.0]), np.array([2.0, -1.0, 5.0])
    x = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(fnp.interp(x, xp, fp), np.interp(x, xp, fp))
    np.testing.assert_allclose(fnp.interp(x, xp, fp, 7.0, -7.0), np.interp(x, xp, fp, 7.0, -7.0))
    np.testing.assert_allclose(fnp.interp(2.0, np.array([1.0]), np.array([4.0])), 4.0)
    xp_periodic = np.array([170.0, 10.0, -170.0, 90.0])
    x = np.linspace(-400, 400, 17)
    np.testing.assert_allclose(fnp.interp(x, xp_periodic, fp[[0, 1, 2, 0]], period=360.0),
                               np.interp(x, xp_periodic, fp[[0, 1, 2, 0]], period=360.0))
    # The slope of the segment; at a knot, of the segment to its right.
    assert ft.grad(lambda t: fnp.interp(t, xp, fp))(0.5) == -3.0
    assert ft.grad(lambda t: fnp.interp(t, xp, fp))(1.0) == 3.0
    assert ft.grad(lambda t: fnp.interp(t, xp, fp))(-5.0) == 0.0
    check_grads(lambda t, f: fnp.interp(t, xp, f), [np.array([0.3, 2.2]), fp], 2, RNG)
    with pytest.raises(ValueError, match="xp and fp must be non-empty and of the same length"):
        fnp.interp(1.0, xp, fp[:2])


def test_gradient_spacing_forms_and_errors():
    f = _r(5, 4)
    for args, kwargs in [((), {}), ((2.0,), {}), ((0.5, 2.0), {}),
                         ((np.array([0.0, 1.0, 3.0, 4.0, 7.0]), 1.0), {"edge_order": 2}),
                         ((), {"axis": -1}), ((3.0,), {"axis": (1, 0)})]:
        got, want = fnp.gradient(f, *args, **kwargs), np.gradient(f, *args, **kwargs)
        for g, w in zip(got if isinstance(got, list) else [got],
                        want if isinstance(want, tuple) else [want]):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    assert isinstance(fnp.gradient(f), list)
    assert fnp.gradient(np.arange(4)).dtype == np.float64
    with pytest.raises(ValueError, match="edge_order must be 1 or 2"):
        fnp.gradient(f, edge_order=3)
    with pytest.raises(ValueError, match="edge_order=2 needs at least 3"):
        fnp.gradient(np.ones(2), edge_order=2)
    with pytest.raises(TypeError, match="one spacing per axis"):
        fnp.gradient(f, 1.0, 2.0, 3.0)
    with pytest.raises(ValueError, match="a 1-D array of 5 values"):
        fnp.gradient(f, np.ones(3), 1.0)


def test_unwrap_keeps_the_derivative_of_p():
    p = np.array([0.0, 3.0, 6.2, -0.1, 2.9])
    np.testing.assert_allclose(fnp.unwrap(p), np.unwrap(p))
    np.testing.assert_allclose(fnp.unwrap(p, discont=4.0, period=5.0),
                               np.unwrap(p, discont=4.0, period=5.0))
    np.testing.assert_allclose(ft.jacrev(fnp.unwrap)(p), np.eye(5))


# ------------------------------------------------------------------------------------------
# vectorize, apply_along_axis, apply_over_axes
# ------------------------------------------------------------------------------------------


def test_vectorize_matches_numpy_vectorize():
    def f(a, b):
        return a * b + fnp.sin(a)
    x, y = _r(3, 1), _r(4)
    np.testing.assert_allclose(fnp.vectorize(f)(x, y),
                               np.vectorize(lambda a, b: a * b + np.sin(a))(x, y))
    mv = fnp.vectorize(fnp.dot, signature="(m,n),(n)->(m)")
    a, v = _r(5, 2, 3), _r(4, 1, 3)
    np.testing.assert_allclose(mv(a, v), np.vectorize(np.dot, signature="(m,n),(n)->(m)")(a, v))
    total_and_double = fnp.vectorize(lambda v: (fnp.sum(v), v * 2), signature="(n)->(),(n)")
    s, d = total_and_double(a)
    np.testing.assert_allclose(s, a.sum(-1))
    np.testing.assert_allclose(d, 2 * a)
    power = fnp.vectorize(lambda x, p, *, scale: scale * x ** p, excluded={1, "scale"})
    np.testing.assert_allclose(power(x, 3, scale=2.0), 2.0 * x ** 3)
    assert fnp.vectorize(f).__name__ == "f"


def test_vectorize_errors():
    mv = fnp.vectorize(fnp.dot, signature="(m,n),(n)->(m)")
    with pytest.raises(ValueError, match="core dimension 'n' has inconsistent sizes 3 and 4"):
        mv(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match="needs at least 2 axes for its core dimensions"):
        mv(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="is not of the form"):
        fnp.vectorize(fnp.dot, signature="(n)->")
    with pytest.raises(ValueError, match="loop shapes .* do not broadcast"):
        fnp.vectorize(fnp.add)(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="promises 2 outputs, pyfunc returned one"):
        fnp.vectorize(fnp.sum, signature="(n)->(),()")(np.ones(3))
    with pytest.raises(TypeError, match="has 1 inputs, but 2 arguments are broadcast"):
        fnp.vectorize(fnp.add, signature="()->()")(1.0, 2.0)


def test_apply_along_and_over_axes_match_numpy():
    a = _r(2, 3, 4)
    for axis in range(3):
        np.testing.assert_allclose(
            fnp.apply_along_axis(lambda v: fnp.outer(v, v[:2]), axis, a),
            np.apply_along_axis(lambda v: np.outer(v, v[:2]), axis, a))
        np.testing.assert_allclose(fnp.apply_along_axis(fnp.max, axis, a),
                                   np.apply_along_axis(np.max, axis, a))
    np.testing.assert_allclose(
        fnp.apply_along_axis(lambda v, k, scale=1.0: v[k] * scale, 1, a, 2, scale=3.0),
        np.apply_along_axis(lambda v, k, scale=1.0: v[k] * scale, 1, a, 2, scale=3.0))
    np.testing.assert_allclose(fnp.apply_over_axes(fnp.mean, a, (0, 2)),
                               np.apply_over_axes(np.mean, a, (0, 2)))
    np.testing.assert_allclose(fnp.apply_over_axes(lambda x, ax: fnp.cumsum(x, ax), a, 1),
                               np.apply_over_axes(lambda x, ax: np.cumsum(x, ax), a, 1))
    with pytest.raises(ValueError, match="apply_over_axes: func must keep the number of axes"):
        fnp.apply_over_axes(lambda x, ax: fnp.sum(x), a, [0])
    check_grads(lambda x: fnp.apply_along_axis(lambda v: fnp.cumsum(v) * v[0], 2, x), [a], 2,
                RNG)
