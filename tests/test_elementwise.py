"""The documented edge choices of the elementwise math and statistics (docs/numpy.md), each
checked against a symmetric difference or NumPy; the integer functions' missing derivative;
the errors.  The sweeps themselves are in tests/cases_elementwise.py."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax

H = 1e-4


def symmetric_difference(f, x, h=H):
    """``(f(x + h) - f(x - h)) / 2h``: the symmetric derivative, defined at kinks too."""
    return (float(f(x + h)) - float(f(x - h))) / (2 * h)


def second_difference(f, x, h=1e-3):
    return (float(f(x + h)) - 2 * float(f(x)) + float(f(x - h))) / h ** 2


def d(f):
    return ft.grad(f)


# -- hypot ---------------------------------------------------------------------------------


@pytest.mark.parametrize("a", [1.0, -0.5, 1e-3, 2e3])
def test_hypot_is_right_to_second_order_where_the_magnitudes_tie(a):
    def r(x, y):
        return fnp.hypot(x, y)
    hess = ft.hessian(lambda v: r(v[0], v[1]))(np.array([a, a]))
    rad = math.hypot(a, a)
    want = np.array([[a * a, -a * a], [-a * a, a * a]]) / rad ** 3
    np.testing.assert_allclose(hess, want, rtol=1e-10)
    np.testing.assert_allclose(ft.grad(r)(a, a), a / rad, rtol=1e-12)
    if abs(a) == 1.0:  # a symmetric difference of the derivative agrees
        assert d(d(lambda x: r(x, a)))(a) == pytest.approx(
            second_difference(lambda x: r(x, a), a), rel=1e-5)


def test_hypot_at_the_origin_has_a_finite_subgradient():
    for f in (ft.grad(fnp.hypot, argnums=(0, 1)),
              lambda x, y: ft.jvp(fnp.hypot, (x, y), (1.0, 1.0))[1]):
        out = np.asarray(f(0.0, 0.0), dtype=float)
        assert np.all(out == 0), out
    # Away from the origin, on an axis: the derivative along the other axis is 0.
    assert ft.grad(fnp.hypot, argnums=(0, 1))(0.0, -2.0) == (0.0, -1.0)


def test_hypot_neither_overflows_nor_underflows_and_takes_infinities():
    x = np.array([3e300, 3e-300, np.inf, np.nan, 0.0])
    y = np.array([4e300, 4e-300, np.nan, np.inf, 0.0])
    np.testing.assert_allclose(fnp.hypot(x, y), np.hypot(x, y), rtol=1e-15)


# -- abs, power, sinc ------------------------------------------------------------------------


def test_abs_has_the_symmetric_subgradient_zero_at_zero():
    assert d(fnp.abs)(0.0) == 0.0 == symmetric_difference(fnp.abs, 0.0)
    assert d(d(fnp.abs))(0.0) == 0.0
    assert d(fnp.abs)(-2.0) == -1.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fused", [False, True], ids=["eager", "jit"])
def test_logistic_is_relatively_accurate_in_both_tails(dtype, fused):
    # 1 / (1 + exp(-x)) in exact arithmetic is exp(x) / (1 + exp(x)); for x < 0 Python's
    # floats give it to an ulp or two, where 0.5 (1 + tanh(x / 2)) cancels (0 at x = -40)
    xs = np.array([-700.0, -100.0, -40.0, -20.0, -5.0, -1e-300, 0.0, 3.0, 20.0, 40.0, 700.0])
    want = np.array([math.exp(x) / (1 + math.exp(x)) if x < 0 else 1 / (1 + math.exp(-x))
                     for x in xs]).astype(dtype)
    f = ft.jit(lax.logistic) if fused else lax.logistic
    got = f(xs.astype(dtype))
    assert got.dtype == dtype
    tiny = np.finfo(dtype).tiny
    np.testing.assert_allclose(got[want > tiny], want[want > tiny], rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_array_equal(f(np.array([np.nan, -np.inf, np.inf], dtype)), [np.nan, 0, 1])
    # the derivative exp(-|x|) / (1 + exp(-|x|))², not ans (1 - ans), which is 0 for x > 37
    dfdx = (ft.jit(ft.grad(lax.logistic)) if fused else ft.grad(lax.logistic))
    for x in (-40.0, 40.0, -3.0, 3.0):
        e = math.exp(-abs(x))
        assert dfdx(x) == pytest.approx(e / (1 + e) ** 2, rel=1e-15)


def test_logaddexp_ties_get_half_each_infinite_ties_without_a_warning():
    # logistic(x - y) would compute inf - inf for two equal infinities: NumPy warns (a
    # test run with -W error fails); the rule takes the difference of zeros there.
    grad2 = ft.grad(lambda a, b: fnp.logaddexp(a, b), (0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tie in (-np.inf, np.inf, 1.5):
            assert grad2(tie, tie) == (0.5, 0.5)
        assert grad2(np.inf, -np.inf) == (1.0, 0.0)
        batched = ft.vmap(ft.grad(fnp.logaddexp))(np.array([-np.inf, 0.0]),
                                                   np.array([-np.inf, 1.0]))
    np.testing.assert_allclose(batched, [0.5, 1 / (1 + np.e)], rtol=1e-15)
    # second order at a finite tie is the logistic's slope, 1/4 (the guard does not cut it)
    assert ft.grad(ft.grad(fnp.logaddexp), 1)(0.5, 0.5) == -0.25


@pytest.mark.parametrize("f", [lambda x: x ** 0.0, lambda x: fnp.power(x, 0.0),
                               lambda x: lax.pow(x, 0.0),
                               lambda x: fnp.power(x, fnp.zeros_like(x))],
                         ids=["operator", "power", "lax.pow", "array_exponent"])
def test_power_zero_is_constant_even_at_zero(f):
    for x in (0.0, -1.5, 2.0):
        assert float(d(f)(x)) == 0.0
        assert float(d(d(f))(x)) == 0.0
    out, tangent = ft.jvp(f, (0.0,), (1.0,))
    assert float(out) == 1.0 and float(tangent) == 0.0


def test_sinc_at_zero_matches_the_symmetric_differences():
    assert float(d(fnp.sinc)(0.0)) == 0.0 == symmetric_difference(fnp.sinc, 0.0)
    assert float(d(d(fnp.sinc))(0.0)) == pytest.approx(-math.pi ** 2 / 3, rel=1e-14)
    assert second_difference(fnp.sinc, 0.0) == pytest.approx(-math.pi ** 2 / 3, rel=1e-5)
    # No nan leaks from the branch not taken, in reverse mode either.
    g = ft.grad(lambda x: fnp.sinc(x).sum())(np.array([0.0, 0.5, 1.0]))
    assert np.all(np.isfinite(g))


# -- nan and infinities ---------------------------------------------------------------------


def test_nan_to_num_passes_gradients_only_where_finite():
    x = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    g = ft.grad(lambda x: fnp.sum(fnp.nan_to_num(x) * 3.0))(x)
    np.testing.assert_array_equal(g, [3.0, 0.0, 0.0, 0.0, 3.0])
    _, t = ft.jvp(fnp.nan_to_num, (x,), (np.ones(5),))
    np.testing.assert_array_equal(t, [1.0, 0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_and_fmin_pick_the_non_nan_and_its_derivative(name):
    f = getattr(fnp, name)
    assert ft.grad(f, argnums=(0, 1))(1.0, math.nan) == (1.0, 0.0)
    assert ft.grad(f, argnums=(0, 1))(math.nan, 1.0) == (0.0, 1.0)
    assert ft.grad(f, argnums=(0, 1))(2.0, 2.0) == (0.5, 0.5)  # ties as maximum's
    assert math.isnan(float(f(math.nan, math.nan)))


# -- piecewise functions ----------------------------------------------------------------------


def test_copysign_derivatives():
    assert ft.grad(fnp.copysign, argnums=(0, 1))(2.0, -1.0) == (-1.0, 0.0)
    assert ft.grad(fnp.copysign, argnums=(0, 1))(-2.0, -0.0) == (1.0, 0.0)
    assert float(fnp.copysign(1.0, -0.0)) == -1.0


def test_heaviside_derivative_goes_to_x2_only_at_zero():
    grad = ft.grad(fnp.heaviside, argnums=(0, 1))
    assert grad(0.0, 0.3) == (0.0, 1.0)
    assert grad(-1.0, 0.3) == (0.0, 0.0) == grad(2.0, 0.3)


@pytest.mark.parametrize("name", ["floor_divide", "trunc", "rint", "fix"])
def test_piecewise_constant_functions_have_zero_derivative(name):
    f = getattr(fnp, name)
    args = (3.7, 2.0) if name == "floor_divide" else (3.7,)
    grads = ft.grad(f, argnums=tuple(range(len(args))))(*args)
    assert all(float(g) == 0.0 for g in grads)


@pytest.mark.parametrize("x,y", [(-7.5, 2.0), (7.5, 2.0), (7.5, -2.0), (-7.5, -2.0)])
def test_mod_and_fmod_derivatives(x, y):
    assert ft.grad(fnp.mod, argnums=(0, 1))(x, y) == (1.0, -math.floor(x / y))
    assert ft.grad(fnp.fmod, argnums=(0, 1))(x, y) == (1.0, -math.trunc(x / y))
    assert ft.grad(fnp.mod, argnums=1)(x, y) == pytest.approx(
        symmetric_difference(lambda t: fnp.mod(x, t), y), rel=1e-6)


def test_floor_divide_and_mod_agree_with_python_and_numpy():
    x = np.array([7.0, -7.0, 7.0, -7.0, 1.0, 0.0, -0.0, 5.0])
    y = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 3.0, 3.0, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for ours, theirs in zip(fnp.divmod(x, y), np.divmod(x, y)):
            np.testing.assert_array_equal(ours, theirs)
            np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))
    i, j = np.array([7, -7, 7, -7, 5]), np.array([2, 2, -2, -2, 0])
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(fnp.floor_divide(i, j), np.floor_divide(i, j))
        np.testing.assert_array_equal(fnp.mod(i, j), np.mod(i, j))


def test_frexp_and_ldexp_are_exact_including_subnormals():
    x = np.array([5e-324, -3.5, 1e308, 0.0, np.inf])
    m, e = fnp.frexp(x)
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(e, want_e)
    np.testing.assert_array_equal(fnp.ldexp(m, e), x)
    assert ft.grad(lambda x: fnp.frexp(x)[0])(3.0) == 0.25
    assert ft.grad(lambda x: fnp.ldexp(x, 3))(3.0) == 8.0


def test_spacing_and_nextafter():
    x = np.array([1.0, -1.0, 0.0, 1e300], np.float32)
    np.testing.assert_array_equal(fnp.spacing(x), np.spacing(x))
    assert fnp.spacing(x).dtype == np.float32
    assert ft.grad(fnp.nextafter, argnums=(0, 1))(1.0, 2.0) == (1.0, 0.0)
    assert ft.grad(fnp.spacing)(1.0) == 0.0


# -- integers: exact values, no derivative path ---------------------------------------------


def test_integer_functions_refuse_gradients_as_jax_does():
    for f in (lambda i: fnp.gcd(i, 4), lambda i: fnp.bitwise_and(i, 3),
              lambda i: fnp.left_shift(i, 1), lambda i: fnp.bitwise_count(i)):
        with pytest.raises(TypeError, match="grad requires real- or complex-valued"):
            ft.grad(f)(np.int64(6))
    # Used inside a float computation, they are constants.
    x = np.array([1.5, 2.5])
    g = ft.grad(lambda x: fnp.sum(fnp.gcd(fnp.astype(x * 4, np.int64), 4) * x))(x)
    np.testing.assert_array_equal(g, np.gcd((x * 4).astype(np.int64), 4))


def test_integer_bit_operations_at_the_edges_of_the_width():
    i = np.array([-128, -1, 0, 1, 127], np.int8)
    np.testing.assert_array_equal(fnp.bitwise_count(i), np.bitwise_count(i))
    np.testing.assert_array_equal(lax.population_count(i), [1, 8, 0, 1, 7])
    np.testing.assert_array_equal(lax.clz(i), [0, 0, 8, 7, 1])
    np.testing.assert_array_equal(lax.shift_right_logical(i, np.int8(1)), [64, 127, 0, 0, 63])
    np.testing.assert_array_equal(fnp.left_shift(np.array([1]), 70), [0])
    np.testing.assert_array_equal(fnp.right_shift(np.array([-8]), 70), [-1])
    np.testing.assert_array_equal(lax.div(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])),
                                  [3, -3, -3, 3])  # integer division rounds towards zero


@pytest.mark.parametrize("call,match", [
    (lambda: fnp.bitwise_and(1.5, 2), "bitwise_and: needs integer"),
    (lambda: fnp.left_shift(np.array([True]), 1), "left_shift: needs integer"),
    (lambda: fnp.gcd(np.ones(2), 2), "gcd: needs integer"),
    (lambda: fnp.ldexp(1.0, 2.0), "ldexp: the exponent x2 must be an integer"),
    (lambda: fnp.hypot(1j, 1.0), "hypot: complex operands"),
    (lambda: fnp.fmod(1j, 1.0), "fmod: complex operands"),
    (lambda: fnp.cbrt(1j), "cbrt: complex input"),
    (lambda: lax.rem(np.ones(2) * 1j, 1.0), "rem requires real"),
])
def test_errors_name_the_function_and_the_argument(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_comparisons_of_python_scalars_give_bool_arrays_that_invert_logically():
    # a Python bool's ~ is integer inversion (~True == -2, truthy): `where(~isnan(x), ...)`
    # would pick the wrong branch for a Python float x, as it does not in JAX
    nan = float("nan")
    for result in (fnp.isnan(nan), fnp.isfinite(1.0), fnp.less(1, 2), fnp.equal(2.0, 2.0),
                   fnp.logical_not(False), lax.ne(nan, nan)):
        assert result.dtype == np.bool_ and result.shape == () and bool(result)
        assert bool(~result) is False
    assert float(fnp.where(~fnp.isnan(nan), 1.0, 2.0)) == 2.0
    assert type(fnp.sin(2.0)) is float            # weakly typed results stay Python scalars


def test_predicates():
    x = np.array([1.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(fnp.isinf(x), np.isinf(x))
    np.testing.assert_array_equal(fnp.isposinf(x), np.isposinf(x))
    np.testing.assert_array_equal(fnp.isneginf(x), np.isneginf(x))
    assert fnp.isscalar(1.0) and fnp.isscalar(np.float32(1)) and fnp.isscalar(np.array(2.0))
    assert not fnp.isscalar([1.0]) and not fnp.isscalar(np.ones(2))
    assert fnp.isrealobj(x) is True and fnp.isrealobj(x * 1j) is False
    assert bool(fnp.allclose(x, x, equal_nan=True)) and not bool(fnp.allclose(x, x))
    assert not bool(fnp.array_equal(np.ones(2), np.ones(3)))
    assert bool(fnp.array_equiv(np.ones((2, 3)), 1.0))
    assert not bool(fnp.array_equiv(np.ones((2, 3)), np.ones(2)))
    seen = []
    ft.vmap(lambda v: seen.append(fnp.isscalar(v)) or v)(np.ones(3))
    assert seen == [True]  # a traced 0-d value is a scalar


# -- statistics ---------------------------------------------------------------------------


def test_nan_reductions_have_zero_gradient_at_nan():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, np.nan, np.nan]])
    for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin"):
        f = getattr(fnp, name)
        g = ft.grad(lambda x: fnp.nansum(f(x, axis=1)))(x)
        assert np.all(np.isfinite(g)), name
        assert np.all(g[np.isnan(x)] == 0), name
        assert np.all(g[1] == 0), name


def test_all_nan_slices_follow_numpy_and_nanarg_returns_minus_one():
    x = np.full((2, 3), np.nan)
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanmin", "nanmax"):
            np.testing.assert_array_equal(getattr(fnp, name)(x, axis=1),
                                          getattr(np, name)(x, axis=1), err_msg=name)
    np.testing.assert_array_equal(fnp.nanargmax(x, axis=1), [-1, -1])
    assert int(fnp.nanargmin(x)) == -1


def test_var_and_std_take_correction_or_ddof_but_not_both():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(fnp.var(x, axis=1, correction=1), np.var(x, axis=1, ddof=1))
    np.testing.assert_allclose(fnp.std(x, correction=1), np.std(x, correction=1))
    np.testing.assert_allclose(fnp.nanvar(x, correction=1), np.nanvar(x, ddof=1))
    with pytest.raises(ValueError, match="var: give ddof or correction, not both"):
        fnp.var(x, ddof=1, correction=1)


def test_cumulative_sum_needs_an_axis_for_more_than_one_axis():
    with pytest.raises(ValueError, match="cumulative_sum: axis must be given"):
        fnp.cumulative_sum(np.ones((2, 2)))
    with pytest.raises(ValueError, match="cumulative_prod: the input must have at least one"):
        fnp.cumulative_prod(1.0)


def test_average_and_cov_check_their_weights():
    with pytest.raises(TypeError, match="average: weights of shape"):
        fnp.average(np.ones((2, 3)), weights=np.ones(3))
    with pytest.raises(ValueError, match="average: 2 weights for an axis of length 3"):
        fnp.average(np.ones((2, 3)), axis=1, weights=np.ones(2))
    with pytest.raises(TypeError, match="cov: fweights must be integers"):
        fnp.cov(np.ones((2, 3)), fweights=np.ones(3))
    with pytest.raises(ValueError, match="cov: aweights must be 1-D"):
        fnp.cov(np.ones((2, 3)), aweights=np.ones(2))


def test_corrcoef_gradient_is_finite_and_matches_numerical():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6))

    def f(x):
        return fnp.corrcoef(x)[0, 1]
    g = ft.grad(f)(x)
    t = rng.standard_normal(x.shape)
    numerical = (float(f(x + H * t)) - float(f(x - H * t))) / (2 * H)
    assert float(np.sum(g * t)) == pytest.approx(numerical, rel=1e-6)


# -- operators of tracers ---------------------------------------------------------------------


def test_remainder_and_bit_operators_of_tracers_match_numpy():
    x, y = np.array([-7.5, 7.5, 3.0]), np.array([2.0, -2.0, 0.5])
    i, j = np.array([-7, 12, 5]), np.array([2, 3, 1])

    def ops(x, y, i, j):
        return [x % y, x // y, 2.0 % x, 7 // i, i % j, i // j, *divmod(x, y), *divmod(7, i),
                i & j, 3 | i, i ^ j, ~i, i << j, 1 << j, i >> j, (i > 0) ^ (j > 1), ~(i > 0),
                np.bitwise_and(i, j), np.invert(i), np.mod(x, y)]

    want = ops(x, y, i, j)
    got = ft.vmap(ops)(x[None], y[None], i[None], j[None])  # every operand a tracer
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g[0], w)
    with pytest.raises(TypeError, match="bitwise_and: needs integer"):
        ft.vmap(lambda x: x & 1)(x)
    assert ft.grad(lambda x: fnp.sum(x % 2.0 + x // 2.0))(x).tolist() == [1.0, 1.0, 1.0]


def test_i0_and_its_derivative_match_scipy_across_the_series_and_expansion_ranges():
    special = pytest.importorskip("scipy.special")
    x = np.array([0.0, 1e-3, 0.5, -2.0, 10.0, 29.9, 30.0, 30.1, 100.0, -700.0])
    np.testing.assert_allclose(fnp.i0(x), special.i0(x), rtol=1e-14)
    g = ft.vmap(ft.grad(fnp.i0))(x)
    np.testing.assert_allclose(g, special.i1(x), rtol=2e-15, atol=0)
    # I1' = I0 - I1 / x, with the limit 1/2 at 0.
    h = ft.vmap(ft.grad(ft.grad(fnp.i0)))(x[:5])
    want = special.i0(x[:5]) - np.divide(special.i1(x[:5]), x[:5], where=x[:5] != 0,
                                         out=np.full(5, 0.5))
    np.testing.assert_allclose(h, want, rtol=1e-12)
    assert fnp.i0(np.float32(1.0)).dtype == np.float32


def test_a_value_times_itself_has_one_tangent_term_with_the_same_bits():
    # x * x: the tangent is (x + x) * t, not t * x + x * t (a pass fewer in the pullback,
    # a task per chunk fewer on dask); doubling is exact, so the bits are the same.
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=50), rng.normal(size=50)
    jaxpr = ft.make_jaxpr(lambda x, t: ft.jvp(lambda x: x * x, (x,), (t,)))(x, t)
    assert [e.primitive.name for e in jaxpr.eqns].count("mul") == 2  # the value, the tangent
    _, tangent = ft.jvp(lambda x: x * x, (x,), (t,))
    np.testing.assert_array_equal(tangent, t * x + x * t)
    np.testing.assert_array_equal(ft.grad(lambda x: fnp.sum(x * x))(x), x + x)
    assert ft.hessian(lambda x: x * x)(1.5) == 2.0
    np.testing.assert_array_equal(ft.vmap(ft.grad(lambda x: x * x))(x), x + x)
