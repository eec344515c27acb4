"""Targeted tests of functrans/numpy/_index_tricks.py: the forms without ``size=`` on
concrete values against NumPy, the error that asks for ``size=`` under every transform,
``fill_value``'s semantics, the index builders and index expressions against NumPy, and
the argument errors.  The sweep (tests/cases_index_tricks.py) checks values, derivatives
and vmap of the traced forms."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import ConcretizationTypeError

RNG = np.random.default_rng(0)
X = RNG.integers(-1, 2, (3, 4)) * RNG.standard_normal((3, 4))  # exact zeros at a third


def _same(got, want):
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


# -- concrete values, no size ----------------------------------------------------------------

@pytest.mark.parametrize("name,call", [
    ("nonzero", lambda m: m.nonzero(X)),
    ("nonzero_bool", lambda m: m.nonzero(X > 0)),
    ("nonzero_empty", lambda m: m.nonzero(np.zeros((2, 0)))),
    ("where", lambda m: m.where(X)),
    ("argwhere", lambda m: m.argwhere(X)),
    ("argwhere_0d_true", lambda m: m.argwhere(np.float64(3.0))),
    ("argwhere_0d_false", lambda m: m.argwhere(np.float64(0.0))),
    ("flatnonzero", lambda m: m.flatnonzero(X)),
    ("compress_flat", lambda m: m.compress([True, False, True], X)),
    ("compress_axis0", lambda m: m.compress(np.array([0, 1, 1]), X, axis=0)),
    ("compress_short_condition", lambda m: m.compress([False, True], X, axis=-1)),
    ("extract", lambda m: m.extract(X > 0, X)),
    ("count_nonzero", lambda m: np.asarray(m.count_nonzero(X))),
    ("count_nonzero_axis", lambda m: m.count_nonzero(X, axis=1)),
    ("count_nonzero_keepdims", lambda m: m.count_nonzero(X, axis=0, keepdims=True)),
])
def test_concrete_values_match_numpy(name, call):
    _same(call(fnp), call(np))


def test_concrete_condition_needs_no_size_even_for_a_traced_array():
    c = np.array([True, False, True, True])
    x = RNG.standard_normal(4)
    np.testing.assert_allclose(ft.grad(lambda v: (fnp.compress(c, v) ** 2).sum())(x),
                               2 * x * c)
    got = ft.vmap(lambda v: fnp.extract(c, v))(np.stack([x, 2 * x]))
    np.testing.assert_allclose(got, np.stack([x[c], 2 * x[c]]))


# -- size= is required under a transform -----------------------------------------------------

TRANSFORMS = {
    "vmap": lambda f, x: ft.vmap(f)(np.stack([x, x])),
    "make_jaxpr": lambda f, x: ft.make_jaxpr(f)(x),
    "vmap_of_grad": lambda f, x: ft.vmap(ft.grad(lambda v: fnp.sum(v[f(v)[0]])))(
        np.stack([x, x])),
}
NEEDS_SIZE = {
    "nonzero": lambda v: fnp.nonzero(v),
    "where": lambda v: fnp.where(v),
    "argwhere": lambda v: fnp.argwhere(v),
    "flatnonzero": lambda v: fnp.flatnonzero(v),
    "compress": lambda v: fnp.compress(v[0], v),
    "extract": lambda v: fnp.extract(v, v),
}


def test_under_differentiation_alone_the_positions_are_concrete():
    """As in JAX without jit: grad knows the primal values, and positions have no
    derivative, so no size= is needed."""
    x = np.array([0.0, 2.0, -1.0, 0.0])
    g = ft.grad(lambda v: fnp.sum(v[fnp.nonzero(v)] ** 2))(x)
    np.testing.assert_array_equal(g, [0.0, 4.0, -2.0, 0.0])
    g = ft.grad(lambda v: fnp.sum(fnp.extract(v, v) ** 3))(x)
    np.testing.assert_array_equal(g, [0.0, 12.0, 3.0, 0.0])


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", NEEDS_SIZE)
def test_without_size_a_transform_raises_asking_for_size(name, transform):
    expected = "nonzero" if name == "where" else name
    with pytest.raises(ConcretizationTypeError, match=rf"{expected}: .*pass a static size="):
        TRANSFORMS[transform](NEEDS_SIZE[name], RNG.standard_normal((3, 4)))


def test_numpy_functions_dispatch_to_ours_on_tracers():
    x = RNG.standard_normal((2, 3))
    got = ft.vmap(lambda v: np.count_nonzero(v > 0, axis=0))(np.stack([x, -x]))
    _same(got, np.stack([np.count_nonzero(x > 0, axis=0), np.count_nonzero(-x > 0, axis=0)]))
    with pytest.raises(ConcretizationTypeError, match="size="):
        ft.vmap(np.nonzero)(x)
    got = ft.vmap(lambda v: np.select([v > 0], [v], -1.0))(x)
    np.testing.assert_allclose(got, np.where(x > 0, x, -1.0))


# -- size= and fill_value --------------------------------------------------------------------

def test_size_truncates_and_fills_with_zero_by_default():
    x = np.array([[0, 3, 0], [4, 5, 0]])
    _same(fnp.nonzero(x, size=2), (np.array([0, 1]), np.array([1, 0])))
    _same(fnp.nonzero(x, size=5), (np.array([0, 1, 1, 0, 0]), np.array([1, 0, 1, 0, 0])))
    _same(fnp.nonzero(x, size=0), (np.zeros(0, np.int64),) * 2)
    _same(fnp.nonzero(np.zeros((2, 0)), size=2, fill_value=-1), (np.array([-1, -1]),) * 2)


def test_fill_value_per_axis_and_traced():
    x = np.array([[0, 3], [0, 0]])
    _same(fnp.argwhere(x, size=3, fill_value=(7, -8)), np.array([[0, 1], [7, -8], [7, -8]]))
    got = ft.vmap(lambda f: fnp.flatnonzero(x, size=2, fill_value=f))(np.array([5, 6]))
    _same(got, np.array([[1, 5], [1, 6]]))
    with pytest.raises(ValueError, match="nonzero: fill_value must be a scalar or have one"):
        fnp.nonzero(x, size=3, fill_value=(1, 2, 3))


def test_compress_fill_value_is_differentiable_and_keeps_the_dtype():
    c, x = np.array([True, False, False]), np.float32([1.5, 2.5, 3.5])
    out = fnp.compress(c, x, size=3, fill_value=9)
    _same(out, np.float32([1.5, 9, 9]))
    g = ft.grad(lambda f: fnp.sum(fnp.compress(c, x, size=3, fill_value=f)))(2.0)
    assert g == 2.0


def test_gather_at_filled_positions_reads_the_fill_index():
    """Filled slots are positions too: x[nonzero(.., size=)] reads x[fill_value] there,
    and the gradient flows to that element (as in JAX)."""
    x = np.array([0.0, 2.0, 0.0, 3.0])
    g = ft.grad(lambda v: fnp.sum(v[fnp.nonzero(v, size=4, fill_value=2)]))(x)
    np.testing.assert_array_equal(g, [0.0, 1.0, 2.0, 1.0])


def test_vmap_of_nonzero_with_size_has_a_count_per_member():
    x = np.array([[1, 0, 2], [0, 0, 0], [3, 4, 5]])
    got = ft.vmap(lambda r: fnp.nonzero(r, size=3, fill_value=-1)[0])(x)
    _same(got, np.array([[0, 2, -1], [-1, -1, -1], [0, 1, 2]]))
    got = ft.vmap(lambda r: fnp.nonzero(r, size=2)[0], in_axes=1)(x)
    _same(got, np.array([[0, 2], [2, 0], [0, 2]]))


# -- select, choose, piecewise ---------------------------------------------------------------

def test_select_first_true_condition_wins_and_gradients_follow():
    x = np.array([-2.0, 0.5, 3.0])
    f = lambda v: fnp.select([v > 0, v > 1], [2 * v, 10 * v], default=v ** 2)  # noqa: E731
    np.testing.assert_allclose(f(x), [4.0, 1.0, 6.0])
    np.testing.assert_allclose(ft.grad(lambda v: fnp.sum(f(v)))(x), [-4.0, 2.0, 2.0])


def test_choose_modes_match_numpy():
    a = np.array([[0, 2, -1], [3, 1, 5]])
    choices = [np.arange(3.0), 10 + np.arange(3.0), 20 + np.arange(3.0)]
    for mode in ("wrap", "clip"):
        _same(fnp.choose(a, choices, mode=mode), np.choose(a, choices, mode=mode))
    ok = np.array([0, 2, 1])
    _same(fnp.choose(ok, choices), np.choose(ok, choices))
    _same(fnp.choose(ok, np.stack(choices)), np.choose(ok, np.stack(choices)))


def test_piecewise_later_conditions_win_and_otherwise_fills_the_rest():
    x = np.arange(-2.0, 3.0)
    got = fnp.piecewise(x, [x < 1, x < 0], [lambda v: v * 10, -1.0, 7.0])
    want = np.piecewise(x, [x < 1, x < 0], [lambda v: v * 10, -1.0, 7.0])
    _same(got, want)
    _same(fnp.piecewise(x, x > 0, [1.0]), np.piecewise(x, x > 0, [1.0]))
    stacked = np.stack([x < 0, x > 1])
    _same(fnp.piecewise(x, stacked, [-1.0, 1.0]), np.piecewise(x, stacked, [-1.0, 1.0]))
    i = np.arange(4)
    _same(fnp.piecewise(i, [i > 1], [lambda v: v * 1.5]), np.piecewise(i, [i > 1],
                                                                           [lambda v: v * 1.5]))


# -- index builders and expressions against NumPy --------------------------------------------

@pytest.mark.parametrize("name,call", [
    ("tril_indices", lambda m: m.tril_indices(4)),
    ("tril_indices_k_m", lambda m: m.tril_indices(3, -1, 5)),
    ("triu_indices", lambda m: m.triu_indices(4, 1)),
    ("triu_indices_m", lambda m: m.triu_indices(3, 0, 2)),
    ("tril_indices_from", lambda m: m.tril_indices_from(np.ones((3, 5)), 1)),
    ("triu_indices_from", lambda m: m.triu_indices_from(np.ones((4, 2)), -1)),
    ("diag_indices", lambda m: m.diag_indices(3, 3)),
    ("diag_indices_from", lambda m: m.diag_indices_from(np.ones((2, 2, 2)))),
    ("mask_indices", lambda m: m.mask_indices(3, m.triu, 1)),
    ("indices", lambda m: m.indices((2, 3, 1))),
    ("indices_dtype", lambda m: m.indices((2, 2), dtype=np.int32)),
    ("indices_sparse", lambda m: m.indices((2, 3), sparse=True)),
    ("ix_", lambda m: m.ix_([0, 2], np.array([1, 0, 1]), [3])),
    ("ix_bool", lambda m: m.ix_([True, False, True], [2, 1])),
    ("unravel_index", lambda m: m.unravel_index(np.array([0, 7, 11]), (3, 4))),
    ("unravel_index_scalar", lambda m: m.unravel_index(5, (2, 3))),
    ("ravel_multi_index", lambda m: m.ravel_multi_index(([0, 2], [3, 1]), (3, 4))),
    ("ravel_multi_index_F", lambda m: m.ravel_multi_index(([0, 2], [3, 1]), (3, 4), order="F")),
    ("ravel_multi_index_modes", lambda m: m.ravel_multi_index(
        ([-1, 5], [3, 9]), (3, 4), mode=("wrap", "clip"))),
    ("mgrid_int", lambda m: m.mgrid[0:3, 1:5:2]),
    ("mgrid_float", lambda m: m.mgrid[0:1:0.25, -1:1:3j]),
    ("mgrid_1d", lambda m: m.mgrid[-1:1:5j]),
    ("ogrid", lambda m: m.ogrid[0:3, 0:1:4j]),
    ("r_", lambda m: m.r_[np.array([1, 2]), 3, 0:4:2, [5.5]]),
    ("r_complex_slice", lambda m: m.r_[0:1:3j, 7]),
    ("r_directive_axis_ndmin", lambda m: m.r_["1,2", np.ones(3), np.zeros(3)]),
    ("r_directive_trans1d", lambda m: m.r_["0,3,1", np.arange(3.0), np.arange(3.0)]),
    ("r_directive_2d", lambda m: m.r_["-1", np.ones((2, 2)), np.zeros((2, 1))]),
    ("c_", lambda m: m.c_[np.array([1, 2, 3]), np.array([4, 5, 6]), 0:3]),
    ("c_2d", lambda m: m.c_[np.ones((2, 2)), [[7], [8]]]),
])
def test_index_builders_match_numpy(name, call):
    _same(call(fnp), call(np))


def test_index_expressions_are_numpy_s():
    assert fnp.s_[1:3, ..., None] == np.s_[1:3, ..., None]
    assert fnp.s_[2] == np.s_[2]
    assert fnp.index_exp[2] == np.index_exp[2] == (2,)
    assert fnp.index_exp[::2, 1] == np.index_exp[::2, 1]


def test_gathers_at_builder_indices_differentiate_and_batch():
    x = RNG.standard_normal((3, 3))
    g = ft.grad(lambda v: fnp.sum(v[fnp.triu_indices(3, 1)] ** 2))(x)
    np.testing.assert_allclose(g, 2 * np.triu(x, 1))
    xs = RNG.standard_normal((2, 3, 3))
    got = ft.vmap(lambda v: v[fnp.diag_indices_from(v)])(xs)
    np.testing.assert_allclose(got, np.stack([np.diag(m) for m in xs]))
    got = ft.vmap(lambda v: fnp.sum(v * fnp.mgrid[0:3, 0:3][0]))(xs)
    np.testing.assert_allclose(got, (xs * np.mgrid[0:3, 0:3][0]).sum((1, 2)))


def test_traced_index_arithmetic_clamps_out_of_range_as_jax():
    i = np.array([-1, 12, 13, -20])
    got = ft.vmap(lambda k: fnp.stack(fnp.unravel_index(k, (3, 4))))(i)
    _same(got, np.array([[2, 3], [2, 3], [2, 3], [0, 0]]))
    big = np.array([2**40 + 3, 2**40 - 1])  # the float quotient is corrected to exact
    got = ft.vmap(lambda k: fnp.stack(fnp.unravel_index(k, (2**21, 2**21 + 1))))(big)
    _same(got, np.stack(np.unravel_index(big, (2**21, 2**21 + 1)), 1))


# -- argument errors -------------------------------------------------------------------------

@pytest.mark.parametrize("call,error,match", [
    (lambda: fnp.nonzero(np.float64(1.0)), ValueError, "nonzero: a 0-d array"),
    (lambda: fnp.nonzero(X, size=-1), ValueError, "nonzero: size must be non-negative"),
    (lambda: fnp.nonzero(X, size=2.5), TypeError, "nonzero: size must be an integer"),
    (lambda: fnp.where(X, 1.0), TypeError, "where: pass both x and y, or neither"),
    (lambda: fnp.compress(np.ones((2, 2), bool), X), ValueError, "compress: condition must be 1"),
    (lambda: fnp.compress(np.ones(5, bool), X, axis=1), ValueError, "condition has 5 entries"),
    (lambda: fnp.select([X > 0], [X, X]), ValueError, "select: condlist has 1 entries but"),
    (lambda: fnp.select([X], [X]), TypeError, r"select: condlist\[0\] must be boolean"),
    (lambda: fnp.select([], []), ValueError, "select: condlist and choicelist must not be"),
    (lambda: fnp.choose(np.array([0, 2]), [X[0, :2], X[1, :2]]), ValueError,
     "choose: entries of a must be in 0 .. 1"),
    (lambda: fnp.choose(np.array([0.5]), [X]), TypeError, "choose: a must be an integer"),
    (lambda: fnp.choose(np.array([0]), [X], mode="bad"), ValueError, "choose: mode must be"),
    (lambda: ft.vmap(lambda a: fnp.choose(a, [X[0], X[1]]))(np.zeros((2, 4), int)),
     ConcretizationTypeError, "choose: mode='raise' needs"),
    (lambda: ft.vmap(lambda a: fnp.ravel_multi_index((a, a), (4, 4)))(np.zeros((2, 3), int)),
     ConcretizationTypeError, r"ravel_multi_index: mode='raise' .*multi_index\[0\]"),
    (lambda: fnp.ravel_multi_index(([1],), (2, 2)), ValueError, "1 coordinate arrays for 2"),
    (lambda: fnp.ravel_multi_index(([1], [1]), (2, 2), order="K"), ValueError, "order must"),
    (lambda: fnp.unravel_index(np.array([1.5]), (2, 2)), TypeError, "indices must be integ"),
    (lambda: fnp.piecewise(X, [X > 0], []), ValueError, "piecewise: funclist has 0 entries"),
    (lambda: fnp.diag_indices_from(np.ones((2, 3))), ValueError, "all of one size"),
    (lambda: fnp.tril_indices_from(np.ones(3)), ValueError, "tril_indices_from: arr must be 2"),
    (lambda: fnp.ix_(np.ones((2, 2), int)), ValueError, "ix_: argument 0 must be 1-D"),
    (lambda: fnp.ix_([0.5]), ValueError, "ix_: argument 0 must be integer or boolean"),
    (lambda: fnp.mgrid[0:], ValueError, "mgrid: a slice needs a stop"),
    (lambda: fnp.ogrid[1, 2], TypeError, "ogrid: index with slices"),
    (lambda: fnp.r_["r", [1]], ValueError, "r_: the directive 'r' is not supported"),
    (lambda: fnp.r_[[1], "0"], ValueError, "r_: a string is only allowed first"),
])
def test_bad_arguments_are_reported(call, error, match):
    with pytest.raises(error, match=match):
        call()


# -- bincount and histograms -----------------------------------------------------------------

SAMPLE = RNG.standard_normal(25)
POINTS = RNG.standard_normal((30, 3))
WEIGHTS = RNG.standard_normal(30)


@pytest.mark.parametrize("kwargs", [
    {}, {"bins": 4}, {"bins": [-1.0, 0.0, 0.5, 2.0]}, {"bins": 3, "range": (-1.0, 1.0)},
    {"weights": WEIGHTS[:25]}, {"weights": WEIGHTS[:25].astype(np.float32)},
    {"density": True}, {"weights": WEIGHTS[:25], "density": True}, {"bins": "auto"},
], ids=str)
def test_histogram_matches_numpy(kwargs):
    for got, want in zip(fnp.histogram(SAMPLE, **kwargs), np.histogram(SAMPLE, **kwargs)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(fnp.histogram_bin_edges(SAMPLE, kwargs.get("bins", 10)),
                               np.histogram_bin_edges(SAMPLE, kwargs.get("bins", 10)))


@pytest.mark.parametrize("kwargs", [
    {}, {"bins": 3}, {"bins": (2, 3, 4)}, {"weights": WEIGHTS}, {"density": True},
    {"range": [(-1.0, 1.0), None, (0.0, 2.0)], "bins": 3},
    {"bins": [np.array([-3.0, 0.0, 3.0]), 2, np.array([-1.0, 1.0])]},
], ids=str)
def test_histogramdd_and_histogram2d_match_numpy(kwargs):
    got, want = fnp.histogramdd(POINTS, **kwargs), np.histogramdd(POINTS, **kwargs)
    assert got[0].dtype == want[0].dtype
    np.testing.assert_allclose(got[0], want[0])
    for g, w in zip(got[1], want[1]):
        np.testing.assert_allclose(g, w)
    got = fnp.histogram2d(POINTS[:, 0], POINTS[:, 1], bins=(3, 5), weights=WEIGHTS)
    want = np.histogram2d(POINTS[:, 0], POINTS[:, 1], bins=(3, 5), weights=WEIGHTS)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_histogram_weights_differentiate_and_batch():
    def f(w):
        return fnp.histogram(SAMPLE, bins=4, weights=w, density=True)[0]
    w = np.abs(WEIGHTS[:25]) + 0.5
    ft.testing.check_grads(f, (w,), order=2)
    got = ft.vmap(f)(np.stack([w, 2 * w + 1]))
    want = np.stack([np.histogram(SAMPLE, bins=4, weights=v, density=True)[0]
                     for v in (w, 2 * w + 1)])
    np.testing.assert_allclose(got, want)
    counts = ft.grad(lambda v: fnp.sum(fnp.histogramdd(POINTS, 2, weights=v)[0][0]))(WEIGHTS)
    first = np.histogramdd(POINTS, 2)[0]
    assert counts.shape == (30,) and counts.sum() == first[0].sum()


def test_bincount_concrete_matches_numpy_and_length_follows_jax():
    x = np.array([0, 1, 1, 5])
    _same(fnp.bincount(x), np.bincount(x))
    _same(fnp.bincount(x, minlength=8), np.bincount(x, minlength=8))
    _same(fnp.bincount(x, np.float32([1, 2, 3, 4])), np.float32([1, 5, 0, 0, 0, 4]))
    _same(fnp.bincount(np.array([], int)), np.bincount(np.array([], int)))
    _same(fnp.bincount(np.array([-2, 1, 7]), length=3), np.array([1, 1, 0]))
    got = ft.vmap(lambda v: fnp.bincount(v, length=4))(np.array([[0, 1, 1], [3, 3, 9]]))
    _same(got, np.array([[1, 2, 0, 0], [0, 0, 0, 2]]))


@pytest.mark.parametrize("call,error,match", [
    (lambda: ft.vmap(fnp.bincount)(np.zeros((2, 3), int)), ConcretizationTypeError,
     "bincount: .*pass a static length="),
    (lambda: fnp.bincount(np.array([1, -1])), ValueError, "bincount: x must not be negative"),
    (lambda: fnp.bincount(np.array([1.5])), TypeError, "bincount: x must be a 1-D array"),
    (lambda: fnp.bincount(np.array([1]), np.ones(2)), ValueError, "bincount: weights of shape"),
    (lambda: ft.vmap(lambda v: fnp.histogram(v, "auto"))(np.ones((2, 3))),
     ConcretizationTypeError, "histogram_bin_edges: the values of a traced"),
    (lambda: fnp.histogram(np.ones(3), bins=[1.0, 0.0]), ValueError, "increase monotonically"),
    (lambda: fnp.histogram(np.ones(3), bins=0), ValueError, "bins must be positive"),
    (lambda: fnp.histogram(np.ones(3), range=(1.0, 0.0)), ValueError, "low <= high"),
    (lambda: fnp.histogramdd(np.ones((3, 2)), bins=[2]), ValueError, "bins has 1 entries"),
    (lambda: fnp.histogramdd(np.ones((3, 2, 1))), ValueError, "sample must be"),
])
def test_bincount_and_histogram_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_histograms_of_traced_values_batch():
    xs = RNG.standard_normal((3, 20))
    got = ft.vmap(lambda v: fnp.histogram(v, 4, weights=v ** 2, density=True))(xs)
    for k, v in enumerate(xs):
        want = np.histogram(v, 4, weights=v ** 2, density=True)
        np.testing.assert_allclose(got[0][k], want[0])
        np.testing.assert_allclose(got[1][k], want[1])
    pts = RNG.standard_normal((3, 15, 2))
    got = ft.vmap(lambda p: fnp.histogramdd(p, (2, 3), density=True)[0])(pts)
    want = np.stack([np.histogramdd(p, (2, 3), density=True)[0] for p in pts])
    np.testing.assert_allclose(got, want)


def test_evenly_spaced_bin_edges_are_traced_and_differentiate():
    x = RNG.standard_normal(7)
    got = ft.vmap(lambda v: fnp.histogram_bin_edges(v, 3))(np.stack([x, 2 * x, 0 * x]))
    want = np.stack([np.histogram_bin_edges(v, 3) for v in (x, 2 * x, 0 * x)])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    ft.testing.check_grads(lambda v: fnp.histogram_bin_edges(v, 4), (x,), order=2)
    ft.testing.check_grads(lambda v: fnp.histogram(v, 4)[1], (x,), order=1)
    _same(fnp.histogram_bin_edges(np.float32([1, 2]), 2),
          np.histogram_bin_edges(np.float32([1, 2]), 2))
    _same(fnp.histogram_bin_edges(np.array([3, 3]), 2, range=(0, 1)),
          np.histogram_bin_edges(np.array([3, 3]), 2, range=(0, 1)))
    with pytest.raises(ValueError, match="range of the values is not finite"):
        fnp.histogram_bin_edges(np.array([1.0, np.nan]))


def test_histogram_range_may_be_traced():
    a = np.array([0.1, 0.4, 0.6, 0.9, 1.5])

    def edges(r):
        return fnp.histogram(a, bins=2, range=(0., r))[1]
    np.testing.assert_array_equal(ft.jacfwd(edges)(1.0), [0., 0.5, 1.])  # linspace(0, r, 3)
    assert ft.grad(lambda r: fnp.sum(edges(r)))(1.0) == 1.5
    counts, got_edges = ft.jit(lambda r: fnp.histogram(a, bins=2, range=(0., r)))(1.0)
    _same(counts, np.histogram(a, bins=2, range=(0., 1.))[0])
    np.testing.assert_array_equal(got_edges, [0., 0.5, 1.])
    got = ft.vmap(lambda r: fnp.histogram(a, bins=2, range=(0., r))[0])(np.array([1., 2.]))
    np.testing.assert_array_equal(got, [[2, 2], [4, 1]])
    # density: counts / (total width) = 2 / r over [0, r], in the bins: d/dr = -2 / r**2
    density = ft.grad(lambda r: fnp.sum(fnp.histogram(a, 2, (0., r), density=True)[0]))
    np.testing.assert_allclose(density(1.0), -2.0)
    # a traced array of both ends, and histogramdd's per-axis ranges
    got = ft.vmap(lambda r: fnp.histogram(a, bins=2, range=r)[0])(np.array([[0., 1.], [0., 2.]]))
    np.testing.assert_array_equal(got, [[2, 2], [4, 1]])
    pts = np.stack([a, a[::-1]], 1)
    got = ft.jit(lambda r: fnp.histogramdd(pts, 2, [(0., r), None])[0])(1.0)
    np.testing.assert_array_equal(got, np.histogramdd(pts, 2, [(0., 1.), None])[0])
    # concrete ends (under grad too) are still checked; named estimators need values
    with pytest.raises(ValueError, match="low <= high"):
        ft.grad(lambda r: fnp.sum(fnp.histogram(a, bins=2, range=(1., r))[1]))(0.)
    with pytest.raises(ConcretizationTypeError, match="bins='auto' .*needs the values of range"):
        ft.jit(lambda r: fnp.histogram(a, bins="auto", range=(0., r)))(1.)
    with pytest.raises(ValueError, match="range must be a pair"):
        fnp.histogram(a, bins=2, range=np.zeros(3))


def test_ravel_multi_index_dtype():
    coords = (np.array([0, 2, 1]), np.array([3, 1, 0]))
    want = np.ravel_multi_index(coords, (3, 4))
    for dtype in ("int8", np.int32, np.uint16):
        got = fnp.ravel_multi_index(coords, (3, 4), dtype=dtype)
        _same(got, want.astype(dtype))
        traced = ft.jit(lambda i, j: fnp.ravel_multi_index((i, j), (3, 4), mode="clip",
                                                           dtype=dtype))(*coords)
        _same(traced, want.astype(dtype))
    _same(fnp.ravel_multi_index(coords, (3, 4), dtype=None), want)
    with pytest.raises(ValueError, match="dtype must be an integer type"):
        fnp.ravel_multi_index(coords, (3, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="int8 cannot hold the flat indices"):
        fnp.ravel_multi_index(coords, (30, 40), dtype=np.int8)


def test_compress_takes_out_none_as_jax():
    _same(fnp.compress([True, False, True], X, axis=1, out=None),
          np.compress([True, False, True], X, axis=1))
    with pytest.raises(NotImplementedError, match="compress: out= is not supported"):
        fnp.compress([True], X, out=np.zeros(1))


# -- JAX's semantics where NumPy has none (size=, length=, traced modes); skips without JAX --

JAX_CHECKS = {
    "nonzero_size": lambda m: m.nonzero(X, size=5, fill_value=-1),
    "nonzero_fill_per_axis": lambda m: m.nonzero(X, size=11, fill_value=(1, 2)),
    "argwhere_size": lambda m: m.argwhere(X, size=7, fill_value=3),
    "flatnonzero_size": lambda m: m.flatnonzero(X, size=3),
    "where_size": lambda m: m.where(X, size=2),
    "compress_size": lambda m: m.compress(X[0] != 0, X, axis=1, size=4, fill_value=9.0),
    "extract_size": lambda m: m.extract(X > 0, X, size=6, fill_value=-2.0),
    "bincount_length": lambda m: m.bincount(np.array([-2, 0, 3, 7, 3]), length=5),
    "bincount_weights_length": lambda m: m.bincount(np.array([0, 3, 3]), np.ones(3), length=2),
}


@pytest.fixture
def jnp():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return pytest.importorskip("jax.numpy")


def _same_as_jax(ours, theirs):
    got, want = ft.tree_util.tree_leaves(ours), [np.asarray(w) for w in (
        theirs if isinstance(theirs, (tuple, list)) else [theirs])]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("name", JAX_CHECKS)
def test_size_and_length_follow_jax(name, jnp):
    call = JAX_CHECKS[name]
    _same_as_jax(call(fnp), call(jnp))


def test_traced_unravel_index_and_modes_follow_jax(jnp):
    jax = pytest.importorskip("jax")
    i = np.array([-1, 12, 13, 5, -20])
    _same_as_jax(ft.vmap(lambda k: fnp.stack(fnp.unravel_index(k, (3, 4))))(i),
                 jax.vmap(lambda k: jnp.stack(jnp.unravel_index(k, (3, 4))))(i))
    a = np.array([0, 5, -1, 2])
    choices = [np.arange(4.0), np.ones(4), -np.arange(4.0)]
    for mode in ("wrap", "clip"):
        _same_as_jax(fnp.choose(a, choices, mode=mode), jnp.choose(a, choices, mode=mode))
        _same_as_jax(fnp.ravel_multi_index((a, a[::-1]), (3, 4), mode=mode),
                     jnp.ravel_multi_index((a, a[::-1]), (3, 4), mode=mode))


@pytest.mark.parametrize("size", [0, 3, 7, 20])
def test_traced_and_concrete_paths_of_size_agree(size):
    """Concrete inputs use the library's nonzero, traced ones the running count."""
    x = RNG.integers(-1, 2, (2, 3, 2))
    c = RNG.random(5) > 0.5
    v = RNG.standard_normal(5)
    for f in (lambda a: fnp.stack(fnp.nonzero(a, size=size, fill_value=(-1, -2, -3))),
              lambda a: fnp.argwhere(a, size=size, fill_value=4),
              lambda a: fnp.flatnonzero(a, size=size)):
        _same(ft.vmap(f)(x[None])[0], f(x))
    _same(ft.vmap(lambda k: fnp.compress(k, v, size=size, fill_value=0.5))(c[None])[0],
          fnp.compress(c, v, size=size, fill_value=0.5))
