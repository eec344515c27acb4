"""Windowed reductions, ``lax.reduce``, ``lax.map`` and ``lax.associative_scan``
(functrans/primitives/windows.py) against slow references written as loops over every
output position and window tap, with ties routed by hand; the sweep (derivatives to second
order in both modes, vmap against a loop, jit, float32, the device stand-in) is
tests/cases_windows.py."""
from __future__ import annotations


import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.primitives import windows

# -- the slow references -------------------------------------------------------------------


def _taps(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """For each output position, the operand index each window tap reads (None for padding
    and holes), taps in row-major order."""
    out_shape = lax.reduce_window_shape_tuple(shape, window_dimensions, window_strides,
                                              padding, base_dilation, window_dilation)
    for o in np.ndindex(*out_shape):
        taps = []
        for k in np.ndindex(*window_dimensions):
            index = []
            for oi, ki, s, d, (lo, _), bd, n in zip(o, k, window_strides, window_dilation,
                                                   padding, base_dilation, shape):
                p = oi * s + ki * d - lo  # position in the base-dilated operand
                index.append(p // bd if 0 <= p and p % bd == 0 and p // bd < n else None)
            taps.append(None if None in index else tuple(index))
        yield o, taps
    return out_shape


def _config(x, config):
    wd, ws, padding, bd, wdil = config
    n = x.ndim
    bd = bd or (1,) * n
    wdil = wdil or (1,) * n
    if isinstance(padding, str):
        padding = lax.padtype_to_pads(x.shape, [(w - 1) * d + 1 for w, d in zip(wd, wdil)],
                                      ws, padding)
    return wd, ws, tuple(padding), bd, wdil


def reference_reduce_window(x, init, op, config):
    wd, ws, padding, bd, wdil = _config(x, config)
    out_shape = lax.reduce_window_shape_tuple(x.shape, wd, ws, padding, bd, wdil)
    out = np.full(out_shape, init, dtype=x.dtype)
    for o, taps in _taps(x.shape, wd, ws, padding, bd, wdil):
        acc = init
        for t in taps:
            acc = op(acc, init if t is None else x[t])
        out[o] = acc
    return out


def reference_max_pool_grad(x, ct, config, select="max"):
    """Each cotangent added at its window's first maximal tap (padding and holes -inf;
    NaN maximal), as JAX's select_and_scatter_add."""
    wd, ws, padding, bd, wdil = _config(x, config)
    worst = -np.inf if select == "max" else np.inf
    grad = np.zeros_like(x)
    for o, taps in _taps(x.shape, wd, ws, padding, bd, wdil):
        values = np.array([worst if t is None else x[t] for t in taps])
        best = int(np.argmax(values) if select == "max" else np.argmin(values))
        if taps[best] is not None:
            grad[taps[best]] += ct[o]
    return grad


CONFIGS = [  # window_dimensions, window_strides, padding, base_dilation, window_dilation
    ((2,), (1,), "VALID", None, None),
    ((3,), (2,), "SAME", None, None),
    ((2,), (3,), ((2, 1),), None, None),
    ((3,), (1,), ((1, 2),), (2,), None),
    ((2,), (1,), "SAME", None, (3,)),
    ((4,), (2,), ((3, 3),), (2,), (2,)),
    ((2, 2), (2, 2), "VALID", None, None),
    ((3, 2), (1, 2), "SAME", None, None),
    ((2, 3), (2, 1), ((1, 0), (2, 2)), (1, 2), (2, 1)),
    ((1, 3), (1, 1), "SAME_LOWER", None, (1, 2)),
    ((2, 2, 2), (1, 2, 1), "SAME", None, None),
    ((2, 1, 3), (2, 1, 2), ((0, 1), (1, 1), (2, 0)), (1, 1, 2), (1, 1, 1)),
    ((1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None),  # NHWC pooling
    ((3,), (3,), ((2, 2),), None, None),  # windows tiling the padded operand
    ((2, 3), (2, 3), ((1, 0), (2, 2)), None, None),
    ((7,), (1,), "VALID", None, None),  # windows larger than the operand: empty
    ((5,), (1,), ((6, 6),), None, None),  # windows wholly in the padding
    # negative padding crops the (base-dilated) operand, as in JAX
    ((2,), (1,), ((-1, 0),), None, None),
    ((3,), (2,), ((-2, 1),), (2,), None),
    ((2,), (1,), ((1, -3),), (3,), (2,)),
    ((2, 2), (1, 2), ((-1, -1), (2, -2)), (2, 1), None),
    ((2, 3), (1, 1), ((-3, 0), (-1, -4)), None, (1, 2)),
    ((1,), (1,), ((-6, 2),), None, None),  # all of the operand cropped: only padding
    ((1, 2, 2), (1, 1, 2), ((0, -1), (-2, 1), (1, -1)), (1, 2, 1), None),
]
SHAPES = {1: (6,), 2: (5, 6), 3: (3, 4, 5), 4: (2, 4, 4, 3)}
IDS = [f"{i}-{'x'.join(map(str, c[0]))}" for i, c in enumerate(CONFIGS)]


def _draw(config, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    shape = SHAPES[len(config[0])]
    if ties:
        return rng.integers(-1, 2, shape).astype(np.float64)
    return rng.standard_normal(shape)


def _apply(x, init, op, config):
    wd, ws, padding, bd, wdil = config
    return lax.reduce_window(x, init, op, wd, ws, padding, bd, wdil)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@pytest.mark.parametrize("op,init,ref", [
    (lax.add, 0.0, np.add), (lax.max, -np.inf, np.maximum), (lax.min, np.inf, np.minimum),
    (lax.mul, 1.0, np.multiply), (lax.add, 0.5, np.add)], ids=["sum", "max", "min", "prod",
                                                               "sum_from_half"])
def test_values_against_the_loop(config, op, init, ref):
    x = _draw(config)
    got = _apply(x, init, op, config)
    np.testing.assert_allclose(got, reference_reduce_window(x, init, ref, config),
                               rtol=1e-13, atol=1e-13)
    assert got.dtype == x.dtype


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_monoids_become_their_primitives(config):
    x = _draw(config)
    for op, init, name in [(lax.add, 0.0, "reduce_window_sum"),
                           (lax.max, -np.inf, "reduce_window_max"),
                           (lax.min, np.inf, "reduce_window_min")]:
        names = [e.primitive.name for e in ft.make_jaxpr(
            lambda x: _apply(x, init, op, config))(x).eqns]
        assert names == [name] or names == ["slice", name] and _crops(config)
    names = [e.primitive.name for e in ft.make_jaxpr(
        lambda x: _apply(x, 2.0, lax.add, config))(x).eqns]
    # not the identity: the general primitive (after a slice, for negative padding)
    assert names == ["reduce_window"] or names == ["slice", "reduce_window"] and _crops(config)


def _crops(config) -> bool:
    return not isinstance(config[2], str) and any(v < 0 for pair in config[2] for v in pair)


@pytest.mark.filterwarnings("ignore:invalid value")  # -inf + inf in the loss's sum
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@pytest.mark.parametrize("select", ["max", "min"])
def test_pooling_gradient_goes_to_the_first_extremum(config, select):
    x = _draw(config, seed=1, ties=True)  # -1, 0, 1: ties in most windows
    op, init = (lax.max, -np.inf) if select == "max" else (lax.min, np.inf)
    out = _apply(x, init, op, config)
    ct = np.random.default_rng(2).standard_normal(out.shape)
    grad = ft.grad(lambda x: fnp.sum(_apply(x, init, op, config) * ct))(x)
    np.testing.assert_allclose(grad, reference_max_pool_grad(x, ct, config, select),
                               rtol=1e-13, atol=1e-13)
    # forward mode picks the same element: <ct, J t> == <J^T ct, t>
    t = np.random.default_rng(3).standard_normal(x.shape)
    _, jt = ft.jvp(lambda x: _apply(x, init, op, config), (x,), (t,))
    np.testing.assert_allclose(np.sum(ct * jt), np.sum(grad * t), rtol=1e-12, atol=1e-12)


def test_ties_by_hand():
    # 2x2 windows, stride 1: every window of the plateau holds four equal maxima
    x = np.array([[1., 1., 0.],
                  [1., 1., 0.],
                  [0., 2., 2.]])
    g = ft.grad(lambda x: fnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1),
                                                    "VALID")))(x)
    # windows at (0,0) and (0,1) pick their top-left 1; (1,0) and (1,1) the first 2
    np.testing.assert_array_equal(g, [[1., 1., 0.],
                                      [0., 0., 0.],
                                      [0., 2., 0.]])
    # padding counts as -inf before real -inf values: the first window selects padding
    y = np.array([[-np.inf, -np.inf, 1.]])
    g = ft.grad(lambda y: fnp.sum(lax.reduce_window(y, -np.inf, lax.max, (1, 2), (1, 1),
                                                    ((0, 0), (1, 0)))))(y)
    np.testing.assert_array_equal(g, [[1., 0., 1.]])  # JAX's answer


def test_nan_is_selected_first():
    x = np.array([1., np.nan, 3., 2.])
    out = lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID")
    np.testing.assert_array_equal(out, [np.nan, np.nan, 3.])
    g = ft.grad(lambda x: fnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2,), (1,),
                                                    "VALID")))(x)
    np.testing.assert_array_equal(g, [0., 2., 1., 0.])


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_sum_transpose_is_the_adjoint(config):
    x = _draw(config)
    f = lambda x: _apply(x, 0.0, lax.add, config)  # noqa: E731
    out = f(x)
    rng = np.random.default_rng(4)
    ct, t = rng.standard_normal(out.shape), rng.standard_normal(x.shape)
    (g,) = ft.vjp(f, x)[1](ct)
    np.testing.assert_allclose(np.sum(g * t), np.sum(ct * f(t)), rtol=1e-12, atol=1e-12)
    # the transpose of the transpose is the function again
    back = ft.linear_transpose(lambda c: ft.vjp(f, x)[1](c)[0], ct)
    np.testing.assert_allclose(back(t)[0], f(t), rtol=1e-12, atol=1e-12)


def test_scalars_and_empty_operands():
    assert lax.reduce_window(np.array(3.), 0., lax.add, (), (), "VALID").shape == ()
    assert ft.grad(lambda x: lax.reduce_window(x, -np.inf, lax.max, (), (), "VALID"))(3.) == 1.
    empty = np.zeros((0, 3))
    assert lax.reduce_window(empty, 0., lax.add, (1, 2), (1, 1), "VALID").shape == (0, 2)
    np.testing.assert_array_equal(  # windows wholly in the padding hold the initial value
        lax.reduce_window(empty, 0., lax.add, (1, 2), (1, 1), ((1, 0), (0, 0))), [[0., 0.]])
    for op, init in [(lax.add, 0.), (lax.max, -np.inf)]:
        g = ft.grad(lambda x: fnp.sum(lax.reduce_window(x, init, op, (1, 2), (1, 1),
                                                        ((1, 0), (0, 0)))))(empty)
        assert g.shape == (0, 3)


def test_integer_and_boolean_operands():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(
        lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "VALID"),
        reference_reduce_window(x, 0, np.add, ((2, 2), (1, 1), "VALID", None, None)))
    top = lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 2), "SAME")
    assert top.dtype == np.int32
    b = np.array([True, False, False, True])
    np.testing.assert_array_equal(lax.reduce_window(b, False, lax.bitwise_or, (2,), (1,),
                                                    "VALID"), [True, False, True])


def test_average_pool_is_a_sum_divided_by_the_window_size():
    x = np.arange(16.).reshape(1, 4, 4, 1)
    avg = lax.reduce_window(x, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    np.testing.assert_array_equal(avg[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    g = ft.grad(lambda x: fnp.sum(lax.reduce_window(x, 0., lax.add, (1, 2, 2, 1),
                                                    (1, 2, 2, 1), "VALID") / 4))(x)
    np.testing.assert_array_equal(g, np.full(x.shape, 0.25))


def test_pytree_operands_reduce_together():
    # the maximum of each window together with its position: a (value, index) monoid
    x = np.array([3., 1., 4., 4., 5., 9., 2., 6.])

    def argmax_pair(a, b):
        take_a = a[0] >= b[0]
        return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
    values, where = lax.reduce_window((x, np.arange(8.)), (-np.inf, -1.), argmax_pair,
                                      (3,), (2,), "VALID")
    np.testing.assert_array_equal(values, [4., 5., 9.])
    np.testing.assert_array_equal(where, [2., 4., 5.])
    g = ft.grad(lambda x: fnp.sum(lax.reduce_window(
        (x, np.arange(8.)), (-np.inf, -1.), argmax_pair, (3,), (2,), "VALID")[0]))(x)
    np.testing.assert_array_equal(g, [0., 0., 1., 0., 1., 1., 0., 0.])


def test_general_computation_differentiates_through_its_own_jvp():
    x = np.random.default_rng(5).standard_normal((4, 5))

    def logsumexp_pool(x):
        return lax.reduce_window(x, -np.inf, lambda a, b: fnp.logaddexp(a, b), (2, 2),
                                 (1, 2), "SAME")
    want = reference_reduce_window(x, -np.inf, np.logaddexp, ((2, 2), (1, 2), "SAME", None,
                                                              None))
    np.testing.assert_allclose(logsumexp_pool(x), want, rtol=1e-13)
    ft.testing.check_grads(logsumexp_pool, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(ft.jit(logsumexp_pool)(x), want, rtol=1e-13)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(ft.vmap(logsumexp_pool)(batch),
                               np.stack([logsumexp_pool(x), logsumexp_pool(2 * x)]),
                               rtol=1e-13)


def test_computations_closing_over_arrays():
    x = np.arange(5.)
    for scale in (np.array(2.), np.array([2.])[0]):
        def weighted(x, scale=scale):
            return lax.reduce_window(x, 0., lambda a, b: a + scale * b, (2,), (1,), "VALID")
        np.testing.assert_array_equal(weighted(x), [2., 6., 10., 14.])
    # closing over a traced value: the fold in primitives carries it along
    g = ft.grad(lambda s: fnp.sum(lax.reduce_window(x, 0., lambda a, b: a + s * b, (2,), (1,),
                                                    "VALID")))(2.)
    assert g == 16.


def test_traced_init_value_under_jit_and_vmap():
    x = np.arange(6.)
    f = ft.jit(lambda x, init: lax.reduce_window(x, init, lax.add, (2,), (2,), "VALID"))
    np.testing.assert_array_equal(f(x, 0.0), [1., 5., 9.])
    np.testing.assert_array_equal(f(x, 1.0), [2., 6., 10.])
    inits = np.array([0., 1.])
    got = ft.vmap(lambda i: lax.reduce_window(x, i, lax.add, (2,), (2,), ((1, 0),)))(inits)
    # each window starts from init, and the padding holds it too
    np.testing.assert_array_equal(got, [[0., 3., 7.], [2., 4., 8.]])
    assert ft.grad(lambda i: fnp.sum(lax.reduce_window(x, i, lax.add, (2,), (2,),
                                                       ((1, 1),))))(0.5) == 6.0


def test_shape_tuple_and_padtype():
    assert lax.reduce_window_shape_tuple((10,), (3,), (2,), ((0, 0),)) == (4,)
    assert lax.reduce_window_shape_tuple((4,), (2,), (1,), ((0, 0),), (3,), (2,)) == (8,)
    assert lax.padtype_to_pads((7,), (4,), (3,), "SAME") == [(1, 2)]
    assert lax.padtype_to_pads((7,), (4,), (3,), "same_lower") == [(2, 1)]
    assert lax.padtype_to_pads((7, 2), (4, 2), (3, 1), "VALID") == [(0, 0), (0, 0)]


@pytest.mark.parametrize("call,error,match", [
    (lambda x: lax.reduce_window(x, 0., lax.add, (2,), (1, 1), "VALID"), TypeError,
     r"reduce_window: window_dimensions \(2,\) has 1 entries for an operand of shape \(3, 4\)"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1,), "VALID"), TypeError,
     r"reduce_window: window_strides \(1,\) has 1 entries for an operand of shape \(3, 4\)"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 0), (1, 1), "VALID"), ValueError,
     r"window_dimensions \(2, 0\) must be at least 1"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "FULL"), ValueError,
     r"reduce_window: unknown padding 'FULL' for an operand of shape \(3, 4\)"),
    (lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2, 1), (1, 1, 1), "VALID"),
     TypeError, r"reduce_window: window_dimensions \(2, 2, 1\) has 3 entries for an operand "
     r"of shape \(3, 4\) \(rank 2\)"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "VALID", None, (1, 1, 1)),
     TypeError, r"window_dilation \(1, 1, 1\) has 3 entries for an operand of shape \(3, 4\)"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), ((1, 1),)), TypeError,
     r"padding \(\(1, 1\),\) has 1 pairs for an operand of shape \(3, 4\)"),
    (lambda x: windows.reduce_window_sum_p.bind(
        x, window_dimensions=(2, 2), window_strides=(1, 1), padding=((-1, 0), (0, 0)),
        base_dilation=(1, 1), window_dilation=(1, 1)),
     ValueError, "reduce_window_sum: the primitive takes padding of at least 0"),
    (lambda x: windows.select_and_scatter_add(x, x, "max", (1, 1), (1, 1), ((-1, 1), (0, 0))),
     ValueError, "select_and_scatter_add: negative padding"),
    (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "VALID", (1,)), TypeError,
     r"base_dilation \(1,\) has 1 entries"),
    (lambda x: lax.reduce_window(x, np.zeros(2), lax.add, (2, 2), (1, 1), "VALID"),
     TypeError, r"init_values must be scalars, got one of shape \(2,\)"),
    (lambda x: lax.reduce_window(x, np.float32(0), lax.mul, (2, 2), (1, 1), "VALID"),
     TypeError, "init value of dtype float32 for an operand of dtype float64"),
    (lambda x: lax.reduce_window(x.astype(int), -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
     TypeError, "reduce_window: the init value -inf is not a value of the operand's dtype"),
    (lambda x: lax.reduce_window((x, x), (0.,), lax.add, (2, 2), (1, 1), "VALID"),
     ValueError, "same tree structure"),
    (lambda x: lax.reduce_window(x + 1j, -np.inf, lax.max, (2, 2), (1, 1), "VALID"),
     TypeError, "reduce_window_max is not defined for complex"),
    (lambda x: lax.reduce(x, 0., lax.add, (2,)), ValueError, "reduce: dimension 2 is out"),
    (lambda x: lax.reduce(x, 0., lax.add, (1, -1)), ValueError, "reduce: repeated dimension"),
    (lambda x: lax.map(lambda r: r, x, batch_size=0), ValueError, "map: batch_size"),
    (lambda x: lax.associative_scan(lax.add, (x, x[:2])), ValueError,
     "associative_scan: every leaf"),
])
def test_errors_name_the_function_argument_and_shapes(call, error, match):
    with pytest.raises(error, match=match):
        call(np.ones((3, 4)))


def test_selection_primitives_check_their_shapes():
    with pytest.raises(TypeError, match=r"select_and_gather_add: tangents of shape \(3,\) for "
                                        r"an operand of shape \(4,\)"):
        windows.select_and_gather_add(np.ones(3), np.ones(4), "max", (2,), (1,), "VALID")
    with pytest.raises(TypeError, match=r"select_and_scatter_add: source \(cotangents\) of "
                                        r"shape \(2,\) .* expected \(3,\)"):
        ft.make_jaxpr(lambda c, x: windows.select_and_scatter_add(c, x, "min", (2,), (1,),
                                                                  "VALID"))(
            np.ones(2), np.ones(4))


# -- lax.reduce ----------------------------------------------------------------------------


def _matmul2(a, b):
    """2x2 matrix products, the matrices given by their four entries."""
    (a00, a01, a10, a11), (b00, b01, b10, b11) = a, b
    return (a00 * b00 + a01 * b10, a00 * b01 + a01 * b11,
            a10 * b00 + a11 * b10, a10 * b01 + a11 * b11)


def _entries(m):
    return tuple(m[..., i, j] for i in range(2) for j in range(2))


@pytest.mark.parametrize("op,init,np_op", [
    (lax.add, 0., np.sum), (lax.mul, 1., np.prod), (lax.max, -np.inf, np.max),
    (lax.min, np.inf, np.min)])
@pytest.mark.parametrize("dims", [(0,), (1, 2), (0, 2), ()])
def test_reduce_monoids_against_numpy(op, init, np_op, dims):
    x = np.random.default_rng(6).standard_normal((3, 4, 5))
    np.testing.assert_allclose(lax.reduce(x, init, op, dims), np_op(x, axis=dims),
                               rtol=1e-13)


def test_reduce_recognises_the_monoids_and_keeps_others_general():
    x = np.ones((3, 4))
    for op, init, name in [(lax.add, 0., "reduce_sum"), (lax.mul, 1., "reduce_prod"),
                           (lax.max, -np.inf, "reduce_max"), (lax.min, np.inf, "reduce_min")]:
        eqns = ft.make_jaxpr(lambda x: lax.reduce(x, init, op, (1,)))(x).eqns
        assert [e.primitive.name for e in eqns] == [name]
    b = np.array([[True, False], [False, False]])
    np.testing.assert_array_equal(lax.reduce(b, False, lax.bitwise_or, (1,)), [True, False])
    np.testing.assert_array_equal(lax.reduce(b, True, lax.bitwise_and, (0,)), [False, False])
    # a non-identity init is applied once, as a general computation
    np.testing.assert_array_equal(lax.reduce(x, 1., lax.add, (1,)), [5., 5., 5.])
    # empty reductions give the initial value
    np.testing.assert_array_equal(lax.reduce(np.ones((2, 0)), -np.inf, lax.max, (1,)),
                                  [-np.inf, -np.inf])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 11])
def test_reduce_with_a_non_commutative_monoid(n):
    m = np.random.default_rng(n).standard_normal((n, 3, 2, 2))
    eye = (1., 0., 0., 1.)
    got = np.stack(lax.reduce(_entries(m), eye, _matmul2, (0,)), -1).reshape(3, 2, 2)
    want = np.stack([np.linalg.multi_dot(list(m[:, j])) if n > 1 else m[0, j]
                     for j in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_reduce_under_grad_vmap_jit():
    x = np.random.default_rng(7).standard_normal((4, 6))

    def sum_of_squares(x):  # a general computation: sum of squares, order-preserving
        return lax.reduce(x, 0., lambda a, b: a + b * b, (1,)) if False else lax.reduce(
            x * x, 0.5, lambda a, b: a + b, (1,))
    np.testing.assert_allclose(sum_of_squares(x), np.sum(x * x, 1) + 0.5, rtol=1e-13)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(sum_of_squares(x)))(x), 2 * x,
                               rtol=1e-13)
    np.testing.assert_allclose(ft.jit(sum_of_squares)(x), sum_of_squares(x), rtol=1e-13)
    np.testing.assert_allclose(ft.vmap(sum_of_squares)(np.stack([x, -x])),
                               np.stack([sum_of_squares(x)] * 2), rtol=1e-13)

    def prod_general(x):
        return lax.reduce(x, 1., lambda a, b: a * b * 1.0 + 0.0 * a, (0,))
    ft.testing.check_grads(prod_general, (x[:, :3],), order=2, modes=("fwd", "rev"))


def test_reduce_with_traced_initial_values():
    x = np.arange(6.).reshape(2, 3)
    f = lambda init: lax.reduce(x, init, lax.add, (1,))  # noqa: E731
    np.testing.assert_array_equal(ft.jit(f)(0.), [3., 12.])
    np.testing.assert_array_equal(ft.vmap(f)(np.array([0., 1.])), [[3., 12.], [4., 13.]])
    assert ft.grad(lambda i: fnp.sum(f(i)))(0.5) == 2.


# -- lax.map -------------------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 5, 7])
def test_map_matches_a_loop(batch_size):
    xs = np.random.default_rng(8).standard_normal((5, 3))
    ws = np.arange(5.)

    def f(args):
        row, w = args
        return {"s": fnp.sum(fnp.sin(row)) * w, "v": row * w}
    got = lax.map(f, (xs, ws), batch_size=batch_size)
    np.testing.assert_allclose(got["s"], np.sin(xs).sum(1) * ws, rtol=1e-13)
    np.testing.assert_allclose(got["v"], xs * ws[:, None], rtol=1e-13)
    g = ft.grad(lambda xs: fnp.sum(lax.map(f, (xs, ws), batch_size=batch_size)["s"]))(xs)
    np.testing.assert_allclose(g, np.cos(xs) * ws[:, None], rtol=1e-13)
    np.testing.assert_allclose(
        ft.jit(lambda xs: lax.map(f, (xs, ws), batch_size=batch_size)["s"])(xs), got["s"],
        rtol=1e-13)
    batched = ft.vmap(lambda xs: lax.map(f, (xs, ws), batch_size=batch_size)["s"])(
        np.stack([xs, 2 * xs]))
    np.testing.assert_allclose(batched[1], np.sin(2 * xs).sum(1) * ws, rtol=1e-13)


def test_map_with_batches_is_a_scan_of_vmaps():
    xs = np.arange(10.)
    names = [e.primitive.name for e in ft.make_jaxpr(
        lambda xs: lax.map(fnp.sin, xs, batch_size=4))(xs).eqns]
    assert names.count("scan") == 1 and "concatenate" in names


# -- lax.associative_scan ------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_against_numpy(n, reverse):
    x = np.random.default_rng(n).standard_normal((3, n, 2))
    flip = (lambda a: np.flip(a, 1)) if reverse else (lambda a: a)
    np.testing.assert_allclose(lax.associative_scan(lax.add, x, reverse, axis=1),
                               flip(np.cumsum(flip(x), 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lax.associative_scan(lax.mul, x, reverse, axis=-2),
                               flip(np.cumprod(flip(x), 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(lax.associative_scan(lax.max, x, reverse, axis=1),
                                  flip(np.maximum.accumulate(flip(x), 1)))


@pytest.mark.parametrize("n", [1, 2, 5, 6, 9])
def test_associative_scan_of_matrix_products(n):
    m = np.random.default_rng(10 + n).standard_normal((n, 2, 2))
    got = np.stack(lax.associative_scan(_matmul2, _entries(m)), -1).reshape(n, 2, 2)
    want = np.stack([np.linalg.multi_dot(list(m[:i + 1])) if i else m[0] for i in range(n)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # and with matmul on whole slices
    got = lax.associative_scan(fnp.matmul, m)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_associative_scan_under_grad_vmap_jit():
    x = np.random.default_rng(11).standard_normal(7)
    f = lambda x: lax.associative_scan(lax.mul, x)  # noqa: E731
    ft.testing.check_grads(f, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(ft.jacrev(f)(x), ft.jacrev(lambda x: lax.cumprod(x))(x),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ft.jit(f)(x), np.cumprod(x), rtol=1e-12)
    xs = np.stack([x, x + 1, x - 1])
    np.testing.assert_allclose(ft.vmap(f)(xs), np.cumprod(xs, 1), rtol=1e-12)
    np.testing.assert_allclose(ft.vmap(f, in_axes=1, out_axes=1)(xs.T), np.cumprod(xs, 1).T,
                               rtol=1e-12)


# -- JAX itself, where installed -----------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS[:13], ids=IDS[:13])
def test_against_jax_where_installed(config):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = _draw(config, seed=1, ties=True)
    wd, ws, padding, bd, wdil = config
    if wdil is not None and any(d > 1 for d in wdil):
        pytest.skip("JAX has no reverse mode for max-pools with window dilation")

    def f(lib, x):
        return lib.reduce_window(x, -np.inf, lib.max, wd, ws, padding, bd, wdil)
    out = f(lax, x)
    ct = np.random.default_rng(2).standard_normal(out.shape)
    np.testing.assert_array_equal(out, np.asarray(f(jax.lax, x)))
    np.testing.assert_allclose(  # the same selection; sums may round in another order
        ft.grad(lambda x: fnp.sum(f(lax, x) * ct))(x),
        np.asarray(jax.grad(lambda x: (f(jax.lax, x) * ct).sum())(x)), rtol=1e-14,
        atol=1e-14)
    for op, init in [(lax.add, 0.), (lax.mul, 1.)]:
        jop = jax.lax.add if op is lax.add else jax.lax.mul
        np.testing.assert_allclose(
            lax.reduce_window(x, init, op, wd, ws, padding, bd, wdil),
            np.asarray(jax.lax.reduce_window(x, init, jop, wd, ws, padding, bd, wdil)),
            rtol=1e-13)


@pytest.mark.parametrize("select", ["max", "min"])
def test_gradients_at_ties_equal_jaxs_where_installed(select):
    """Random tie-heavy configurations (values -1, 0, 1): JAX's reverse mode, exactly."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(12)
    init = -np.inf if select == "max" else np.inf
    for _ in range(25):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 6, nd))
        params = (tuple(int(n) for n in rng.integers(1, 4, nd)),
                  tuple(int(n) for n in rng.integers(1, 3, nd)),
                  tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(nd)),
                  tuple(int(n) for n in rng.integers(1, 3, nd)))
        x = rng.integers(-1, 2, shape).astype(float)

        def f(lib, x):
            return lib.reduce_window(x, init, getattr(lib, select), *params)
        out = f(lax, x)
        ct = rng.standard_normal(out.shape)
        np.testing.assert_array_equal(out, np.asarray(f(jax.lax, x)))
        np.testing.assert_allclose(
            ft.grad(lambda x: fnp.sum(f(lax, x) * ct))(x),
            np.asarray(jax.grad(lambda x: (f(jax.lax, x) * ct).sum())(x)), rtol=1e-14,
            atol=1e-14, err_msg=str((shape, params)))


def test_the_module_lists_its_functions():
    for name in ("reduce_window", "reduce", "map", "associative_scan",
                 "reduce_window_shape_tuple", "padtype_to_pads"):
        assert getattr(lax, name) is getattr(windows, name)
