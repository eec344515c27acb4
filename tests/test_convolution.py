"""``lax.conv_general_dilated`` and its relatives against a slow reference written with
loops (and SciPy's correlate where it applies), over strides, paddings, dilations, feature
and batch groups, 1 to 3 spatial axes and every form of ``dimension_numbers``; the exact
transposes (``<ct, J t> == <J^T ct, t>`` to rounding); JAX's helpers; the errors; and a
small CNN trained with ``functrans.grad`` against a hand-written NumPy backward pass.

The sweep (derivatives to second order, vmap of each operand, jit, float32, the CuPy
stand-in) is tests/cases_convolution.py; SciPy's convolutions are tested in
tests/test_scipy_signal.py."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.signal

import functrans as ft
import functrans.numpy as fnp
from functrans import lax


def reference_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, dn, groups=1,
                   batch_groups=1):
    """The definition, one output element at a time."""
    lp, rp, op = dn
    x, w = np.transpose(lhs, lp), np.transpose(rhs, rp)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    dtype = np.result_type(x, w)
    dilated = tuple(0 if n == 0 else (n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dilation))
    xd = np.zeros((N, C) + dilated, dtype)
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dilation)] = x
    for j, (lo, hi) in enumerate(padding):  # pad by the positive parts, then crop
        axis = 2 + j
        widths = [(0, 0)] * xd.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths)
        n = xd.shape[axis]
        xd = np.take(xd, np.arange(max(0, -lo), max(max(0, -lo), n - max(0, -hi))), axis=axis)
    wd = np.zeros((O, I) + tuple((k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dilation)),
                  dtype)
    wd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in rhs_dilation)] = w
    out_sizes = tuple(max(0, (p - k) // s + 1) if p >= k else 0
                      for p, k, s in zip(xd.shape[2:], wd.shape[2:], strides))
    per_group = O // (groups * batch_groups)
    nb = N // batch_groups
    out = np.zeros((nb, O) + out_sizes, dtype)
    for o in range(O):
        g = o // per_group
        for y in itertools.product(*map(range, out_sizes)):
            window = tuple(slice(yi * s, yi * s + k)
                           for yi, s, k in zip(y, strides, wd.shape[2:]))
            if batch_groups > 1:
                patch = xd[(slice(g * nb, (g + 1) * nb), slice(None)) + window]
            else:
                patch = xd[(slice(None), slice(g * I, (g + 1) * I)) + window]
            out[(slice(None), o) + y] = np.sum(patch * wd[o][None],
                                               axis=tuple(range(1, patch.ndim)))
    return np.transpose(out, [op.index(a) for a in range(len(op))])


# (lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
#  feature groups, batch groups)
CONFIGS = [
    ((2, 3, 7), (4, 3, 3), (1,), [(0, 0)], (1,), (1,), None, 1, 1),
    ((2, 3, 7), (4, 3, 3), (2,), [(1, 2)], (2,), (2,), None, 1, 1),
    ((2, 3, 7), (4, 3, 3), (3,), [(-1, 2)], (1,), (2,), None, 1, 1),
    ((1, 2, 5), (2, 2, 4), (1,), [(-3, -1)], (3,), (1,), None, 1, 1),
    ((1, 1, 3), (1, 1, 5), (1,), [(0, 0)], (1,), (1,), None, 1, 1),  # empty output
    ((2, 4, 7, 6), (6, 2, 3, 2), (2, 1), [(1, -1), (2, 0)], (1, 2), (2, 1), None, 2, 1),
    ((4, 3, 7, 6), (6, 3, 3, 2), (2, 1), [(1, -1), (2, 0)], (1, 2), (2, 1), None, 1, 2),
    ((2, 7, 6, 4), (3, 2, 2, 6), (2, 1), [(1, -1), (2, 0)], (1, 2), (2, 1),
     ("NHWC", "HWIO", "NHWC"), 2, 1),
    ((4, 7, 6, 3), (2, 3, 3, 6), (2, 1), [(1, -1), (2, 0)], (1, 2), (2, 1),
     ("NWHC", "WHIO", "CNHW"), 1, 2),
    ((3, 6, 4, 5), (3, 3, 4, 2), (1, 2), [(0, 1), (2, 1)], (1, 1), (1, 1),
     lax.ConvDimensionNumbers((0, 2, 1, 3), (2, 3, 0, 1), (3, 1, 0, 2)), 2, 1),
    ((1, 6, 5, 5), (6, 1, 3, 3), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), None, 6, 1),
    # a dilated input with unit strides is computed phase by phase
    ((2, 4, 3, 4), (6, 2, 3, 2), (1, 1), [(2, 1), (-1, 2)], (2, 3), (2, 1), None, 2, 1),
    ((4, 2, 3, 3), (4, 2, 2, 3), (1, 1), [(1, 1), (0, -1)], (3, 2), (1, 2), None, 1, 2),
    ((2, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 2, 1), [(0, 1), (1, 1), (-1, 0)], (2, 1, 1),
     (1, 1, 2), None, 1, 1),
    ((2, 4, 3, 4, 4), (2, 1, 2, 2, 4), (2, 1, 1), [(1, 0), (0, 0), (1, 1)], (1, 1, 1),
     (1, 2, 1), ("NDHWC", "DHWIO", "NCDHW"), 2, 1),
]


def _args(config, dtype, rng):
    lhs_shape, rhs_shape = config[:2]
    draw = (lambda s: rng.standard_normal(s) + 1j * rng.standard_normal(s)
            if np.dtype(dtype).kind == "c" else rng.standard_normal(s))
    return draw(lhs_shape).astype(dtype), draw(rhs_shape).astype(dtype)


def _conv(config):
    _, _, strides, padding, ld, rd, dn, groups, batch_groups = config
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ld, rd, dn, groups,
                                                 batch_groups)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_matches_the_definition(config, dtype):
    rng = np.random.default_rng(0)
    x, w = _args(config, dtype, rng)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, config[6])
    want = reference_conv(x, w, config[2], config[3], config[4], config[5], dn, *config[7:])
    got = _conv(config)(x, w)
    assert got.shape == want.shape and got.dtype == np.dtype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(ft.jit(_conv(config))(x, w), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_transposes_are_exact(config):
    """The convolution is linear in each operand: its VJP must satisfy <ct, conv(t, w)> =
    <vjp_lhs(ct), t> and <ct, conv(x, t)> = <vjp_rhs(ct), t> to rounding, eagerly and
    under jit; the same for vmap of the VJP against a loop."""
    rng = np.random.default_rng(1)
    f = _conv(config)
    x, w = _args(config, np.float64, rng)
    out, pullback = ft.vjp(f, x, w)
    ct = rng.standard_normal(out.shape)
    gx, gw = pullback(ct)
    tx, tw = _args(config, np.float64, rng)
    np.testing.assert_allclose(np.vdot(ct, f(tx, w)), np.vdot(gx, tx), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(np.vdot(ct, f(x, tw)), np.vdot(gw, tw), rtol=1e-11, atol=1e-11)
    grads = ft.jit(ft.grad(lambda x, w: fnp.vdot(ct, f(x, w)), argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(grads[0], gx, atol=1e-12)
    np.testing.assert_allclose(grads[1], gw, atol=1e-12)


def test_random_configurations():
    """Random shapes, strides, pads (negative ones too), dilations and groups, 1 to 3
    spatial axes, some empty: values and both transposes."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        ns = int(rng.integers(1, 4))
        groups, batch_groups = [(1, 1), (2, 1), (1, 2)][trial % 3]
        n = batch_groups * int(rng.integers(1, 3))
        i = int(rng.integers(1, 3))
        o = groups * batch_groups * int(rng.integers(1, 3))
        spatial = tuple(int(v) for v in rng.integers(0 if trial % 7 == 0 else 1, 6, ns))
        kernel = tuple(int(v) for v in rng.integers(1, 4, ns))
        ld = tuple(int(v) for v in rng.integers(1, 4, ns))
        rd = tuple(int(v) for v in rng.integers(1, 3, ns))
        strides = tuple(int(v) for v in rng.integers(1, 3, ns)) if trial % 2 else (1,) * ns
        pads = [(int(rng.integers(-2, 4)), int(rng.integers(-2, 4))) for _ in range(ns)]
        x = rng.standard_normal((n, groups * i) + spatial)
        w = rng.standard_normal((o, i) + kernel)
        dn = lax.conv_dimension_numbers(x.shape, w.shape, None)
        f = lambda x, w: lax.conv_general_dilated(x, w, strides, pads, ld, rd, None,  # noqa
                                                  groups, batch_groups)
        want = reference_conv(x, w, strides, pads, ld, rd, dn, groups, batch_groups)
        what = f"trial {trial}: {x.shape} {w.shape} {strides} {pads} {ld} {rd}"
        assert f(x, w).shape == want.shape, what
        np.testing.assert_allclose(f(x, w), want, atol=1e-12, err_msg=what)
        out, pullback = ft.vjp(f, x, w)
        ct = rng.standard_normal(out.shape)
        gx, gw = pullback(ct)
        tx, tw = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
        np.testing.assert_allclose(np.vdot(ct, f(tx, w)), np.vdot(gx, tx), atol=1e-10,
                                   err_msg=what)
        np.testing.assert_allclose(np.vdot(ct, f(x, tw)), np.vdot(gw, tw), atol=1e-10,
                                   err_msg=what)


@pytest.mark.parametrize("config", CONFIGS[:12:3], ids=range(4))
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_vmap_matches_a_loop(config, in_axes):
    rng = np.random.default_rng(2)
    f = _conv(config)
    x, w = _args(config, np.float64, rng)
    xs = np.stack([x, 2 * x + 1], in_axes[0]) if in_axes[0] is not None else x
    ws = np.stack([w, w - 1], in_axes[1]) if in_axes[1] is not None else w
    got = ft.vmap(f, in_axes=in_axes)(xs, ws)
    pick = lambda a, axis, i: a if axis is None else np.take(a, i, axis)  # noqa: E731
    want = np.stack([f(pick(xs, in_axes[0], i), pick(ws, in_axes[1], i)) for i in range(2)])
    np.testing.assert_allclose(got, want, atol=1e-12)
    # and the per-example gradients
    g = ft.vmap(ft.grad(lambda x, w: fnp.sum(f(x, w) ** 2), argnums=(0, 1)),
                in_axes=in_axes)(xs, ws)
    for i in range(2):
        gi = ft.grad(lambda x, w: fnp.sum(f(x, w) ** 2), argnums=(0, 1))(
            pick(xs, in_axes[0], i), pick(ws, in_axes[1], i))
        np.testing.assert_allclose(g[0][i], gi[0], atol=1e-10)
        np.testing.assert_allclose(g[1][i], gi[1], atol=1e-10)


def test_vmap_over_an_empty_batch():
    x, w = np.zeros((0, 1, 2, 5)), np.ones((3, 2, 2))
    out = ft.vmap(lambda x: lax.conv(x, w, (1,), "VALID"))(x)
    assert out.shape == (0, 1, 3, 4)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_one_channel_is_scipy_correlate(mode):
    rng = np.random.default_rng(3)
    x, k = rng.standard_normal((3, 9)), rng.standard_normal((2, 4))
    pads = {"full": [(3, 3)], "valid": [(0, 0)], "same": [(2, 1)]}[mode]
    got = lax.conv_general_dilated(x[:, None], k[:, None], (1,), pads)
    want = np.stack([[scipy.signal.correlate(xi, ki, mode) for ki in k] for xi in x])
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_string_padding_and_shape_helpers():
    x, w = np.ones((2, 3, 5, 6)), np.ones((4, 3, 3, 2))
    for padding in ("SAME", "SAME_LOWER", "VALID", "same"):
        out = lax.conv(x, w, (2, 1), padding) if padding != "SAME_LOWER" else (
            lax.conv_general_dilated(x, w, (2, 1), padding))
        assert out.shape == lax.conv_general_shape_tuple(x.shape, w.shape, (2, 1), padding,
                                                         ("NCHW", "OIHW", "NCHW"))
    assert lax.conv(x, w, (2, 1), "SAME").shape == (2, 4, 3, 6)
    assert lax.padtype_to_pads((5,), (3,), (2,), "SAME") == [(1, 1)]
    assert lax.padtype_to_pads((6,), (4,), (1,), "SAME_LOWER") == [(2, 1)]


def test_preferred_element_type_and_precision():
    x, w = np.ones((1, 2, 4), np.float32), np.ones((1, 2, 2), np.float32)
    out = lax.conv(x, w, (1,), "VALID", precision="highest", preferred_element_type=np.float64)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, np.full((1, 1, 3), 4.0))
    xi = np.arange(8, dtype=np.int32).reshape(1, 2, 4)
    out = lax.conv(xi, np.ones((1, 2, 2), np.int32), (1,), "VALID")
    np.testing.assert_array_equal(out, [[[10, 14, 18]]])
    jaxpr = ft.make_jaxpr(lambda x: lax.conv(x, w, (1,), "VALID", precision="highest"))(x)
    assert jaxpr.jaxpr.eqns[0].params["precision"] == "highest"


def test_mixed_dtypes_promote():
    out = lax.conv(np.ones((1, 1, 3), np.float32), np.ones((1, 1, 2)), (1,), "VALID")
    assert out.dtype == np.float64


def test_conv_transpose_is_the_gradient_of_conv():
    """With transpose_kernel, conv_transpose of y is the lhs-gradient of conv at ct=y."""
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 6, 6, 3)), rng.standard_normal((3, 3, 3, 4))
    dn = ("NHWC", "HWIO", "NHWC")
    f = lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn)  # noqa
    y = f(x)
    ct = rng.standard_normal(y.shape)
    (want,) = ft.vjp(f, x)[1](ct)
    got = lax.conv_transpose(ct, w, (2, 2), "SAME", dimension_numbers=dn,
                             transpose_kernel=True)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_agrees_with_jax_where_available():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(5)
    for config in CONFIGS:
        x, w = _args(config, np.float64, rng)
        _, _, strides, padding, ld, rd, dn, groups, batch_groups = config
        if isinstance(dn, lax.ConvDimensionNumbers):
            dn = jax.lax.ConvDimensionNumbers(*dn)
        want = jax.lax.conv_general_dilated(x, w, strides, padding, ld, rd, dn, groups,
                                            batch_groups)
        np.testing.assert_allclose(_conv(config)(x, w), np.asarray(want), atol=1e-12)
    x, w = rng.standard_normal((2, 5, 6, 3)), rng.standard_normal((3, 2, 3, 3))
    for padding, tk, consistent in (("SAME", False, False), ("VALID", True, False),
                                    ([(1, 2), (0, 1)], False, False),
                                    ([(1, 2), (0, 1)], True, True)):
        want = jax.lax.conv_transpose(x, w, (2, 3), padding, transpose_kernel=tk,
                                      use_consistent_padding=consistent)
        got = lax.conv_transpose(x, w, (2, 3), padding, transpose_kernel=tk,
                                 use_consistent_padding=consistent)
        np.testing.assert_allclose(got, np.asarray(want), atol=1e-12)
    for dn in (("NHWC", "HWIO", "NHWC"), ("NCWH", "OIHW", "NHWC"), ("WNCH", "HOWI", "CHNW")):
        shape_l = tuple({"N": 2, "C": 3, "H": 5, "W": 6}[c] for c in dn[0])
        shape_r = tuple({"O": 4, "I": 3, "H": 2, "W": 3}[c] for c in dn[1])
        assert (tuple(lax.conv_dimension_numbers(shape_l, shape_r, dn))
                == tuple(jax.lax.conv_dimension_numbers(shape_l, shape_r, dn)))
        assert (lax.conv_general_shape_tuple(shape_l, shape_r, (2, 1), "SAME", dn)
                == tuple(jax.lax.conv_general_shape_tuple(shape_l, shape_r, (2, 1), "SAME", dn)))


@pytest.mark.parametrize("call, match", [
    (lambda: lax.conv(np.ones((1, 2, 5)), np.ones((1, 3, 2)), (1,), "VALID"),
     r"conv_general_dilated: the lhs feature size .* \(2 // 1\) must equal the rhs input "
     r"feature size 3 \(lhs shape \(1, 2, 5\), rhs shape \(1, 3, 2\)\)"),
    (lambda: lax.conv(np.ones((1, 2, 5)), np.ones((1, 2, 2, 2)), (1,), "VALID"),
     r"conv_general_dilated: lhs and rhs must have the same number of axes, got shapes "
     r"\(1, 2, 5\) and \(1, 2, 2, 2\)"),
    (lambda: lax.conv(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1, 1), "VALID"),
     r"conv_general_dilated: window_strides must have one entry per spatial axis \(1\), got "
     r"\(1, 1\) \(lhs shape \(1, 2, 5\), rhs shape \(1, 2, 2\)\)"),
    (lambda: lax.conv_general_dilated(np.ones((2, 3, 8, 8)), np.ones((4, 3, 3, 3)), (1, 1),
                                      "same_upper"),
     r"conv_general_dilated: unknown padding 'same_upper' for lhs of shape \(2, 3, 8, 8\) "
     r"and rhs of shape \(4, 3, 3, 3\); expected one of 'SAME', 'SAME_LOWER', 'VALID'"),
    (lambda: lax.conv_transpose(np.ones((1, 5, 2)), np.ones((2, 2, 3)), (1,), "SAME_LOWER"),
     r"conv_transpose: unknown padding 'SAME_LOWER' for lhs of shape \(1, 5, 2\) and rhs of "
     r"shape \(2, 2, 3\); expected one of 'SAME', 'VALID'"),
    (lambda: lax.conv_general_shape_tuple((1, 2, 5), (1, 2, 2), (1,), "FULL", None),
     r"conv_general_shape_tuple: unknown padding 'FULL' for lhs of shape \(1, 2, 5\)"),
    (lambda: lax.conv_general_dilated(np.ones((2, 3, 8, 8)), np.ones((4, 3, 3, 3)), (1, 1),
                                      "VALID", rhs_dilation=(1,)),
     r"conv_general_dilated: rhs_dilation must have one entry per spatial axis \(2\), got "
     r"\(1,\) \(lhs shape \(2, 3, 8, 8\), rhs shape \(4, 3, 3, 3\)\)"),
    (lambda: lax.conv(np.ones((2, 3, 8, 8)), np.ones((4, 5, 3, 3)), (1, 1), "SAME"),
     r"conv_general_dilated: the lhs feature size divided by feature_group_count \(3 // 1\) "
     r"must equal the rhs input feature size 5 \(lhs shape \(2, 3, 8, 8\), rhs shape "
     r"\(4, 5, 3, 3\)\)"),
    (lambda: lax.conv(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (0,), "VALID"),
     r"conv_general_dilated: window_strides must be positive"),
    (lambda: lax.conv(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "FULL"),
     r"conv_general_dilated: unknown padding 'FULL' for lhs of shape \(1, 2, 5\)"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), [(1,)]),
     r"conv_general_dilated: padding must be .* \(low, high\) integer pairs"),
    (lambda: lax.conv_general_dilated(np.ones((1, 4, 5)), np.ones((3, 2, 2)), (1,), "VALID",
                                      feature_group_count=2),
     r"rhs output feature size 3 \(rhs shape \(3, 2, 2\)\) must be a multiple of "
     r"feature_group_count=2"),
    (lambda: lax.conv_general_dilated(np.ones((3, 2, 5)), np.ones((2, 2, 2)), (1,), "VALID",
                                      batch_group_count=2),
     r"batch_group_count=2 must divide the lhs batch size 3 \(lhs shape \(3, 2, 5\)\)"),
    (lambda: lax.conv_general_dilated(np.ones((4, 4, 5)), np.ones((4, 2, 2)), (1,), "VALID",
                                      feature_group_count=2, batch_group_count=2),
     r"at most one of feature_group_count \(2\) and batch_group_count \(2\) may exceed 1"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "SAME",
                                      lhs_dilation=(2,)),
     r"string padding \('SAME'\) is not defined with lhs_dilation"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "VALID",
                                      dimension_numbers=("NCH", "OIW", "NCH")),
     r"name different spatial axes"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "VALID",
                                      dimension_numbers=("NCHW", "OIHW", "NCHW")),
     r"must be strings of length 3"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "VALID",
                                      dimension_numbers="NCH"),
     r"dimension_numbers must be None, a tuple of three strings or a ConvDimensionNumbers"),
    (lambda: lax.conv_general_dilated(np.ones((1, 2, 5)), np.ones((1, 2, 2)), (1,), "VALID",
                                      dimension_numbers=lax.ConvDimensionNumbers(
                                          (0, 1, 1), (0, 1, 2), (0, 1, 2))),
     r"dimension_numbers.lhs_spec \(0, 1, 1\) is not a permutation"),
    (lambda: lax.conv(np.ones((1, 2, 5), bool), np.ones((1, 2, 2), bool), (1,), "VALID"),
     r"conv_general_dilated: operands must be numbers"),
    (lambda: lax.conv(np.ones(5), np.ones(2), (), "VALID"),
     r"conv_general_dilated: lhs and rhs need at least 2 axes"),
])
def test_bad_input_raises_a_named_error(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()


# -- a small CNN, end to end ---------------------------------------------------------------

def _im2col(x, k):
    """(N, C, H, W) -> (N, C*k*k, Ho*Wo) for a k x k "VALID" convolution with stride 1."""
    n, c, h, w = x.shape
    ho, wo = h - k + 1, w - k + 1
    cols = np.empty((n, c, k, k, ho, wo))
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = x[:, :, i:i + ho, j:j + wo]
    return cols.reshape(n, c * k * k, ho * wo)


def _col2im(cols, shape, k):
    n, c, h, w = shape
    ho, wo = h - k + 1, w - k + 1
    cols = cols.reshape(n, c, k, k, ho, wo)
    x = np.zeros(shape)
    for i in range(k):
        for j in range(k):
            x[:, :, i:i + ho, j:j + wo] += cols[:, :, i, j]
    return x


def _numpy_loss_and_grads(params, x, labels):
    """Forward and backward by hand: conv-relu, conv-relu (im2col and one product per
    layer), 2x2 max pool (the gradient to each window's first maximal element, as
    ``reduce_window`` routes it), dense, softmax cross-entropy."""
    w1, b1, w2, b2, dense, bias = params
    k = w1.shape[2]
    n = x.shape[0]
    c1 = _im2col(x, k)
    z1 = np.einsum("ok,nkp->nop", w1.reshape(w1.shape[0], -1), c1) + b1[:, None]
    h1_shape = (n, w1.shape[0], x.shape[2] - k + 1, x.shape[3] - k + 1)
    a1 = np.maximum(z1, 0).reshape(h1_shape)
    c2 = _im2col(a1, k)
    z2 = np.einsum("ok,nkp->nop", w2.reshape(w2.shape[0], -1), c2) + b2[:, None]
    h2_shape = (n, w2.shape[0], h1_shape[2] - k + 1, h1_shape[3] - k + 1)
    a2 = np.maximum(z2, 0).reshape(h2_shape)
    _, c, h, w = h2_shape
    # windows as a last axis of 4 taps, in row-major window order
    taps = a2.reshape(n, c, h // 2, 2, w // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        n, c, h // 2, w // 2, 4)
    first = taps.argmax(axis=-1)  # the first maximal tap
    pooled = np.take_along_axis(taps, first[..., None], -1)[..., 0]
    flat = pooled.reshape(n, -1)
    logits = flat @ dense + bias
    logits = logits - logits.max(axis=1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    loss = -np.mean(logp[np.arange(n), labels])
    dlogits = np.exp(logp)
    dlogits[np.arange(n), labels] -= 1
    dlogits /= n
    ddense, dbias = flat.T @ dlogits, dlogits.sum(axis=0)
    dpooled = (dlogits @ dense.T).reshape(pooled.shape)
    dtaps = np.zeros_like(taps)
    np.put_along_axis(dtaps, first[..., None], dpooled[..., None], -1)
    da2 = dtaps.reshape(n, c, h // 2, w // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        h2_shape)
    dz2 = (da2 * (a2 > 0)).reshape(n, c, -1)
    dw2 = np.einsum("nop,nkp->ok", dz2, c2).reshape(w2.shape)
    db2 = dz2.sum(axis=(0, 2))
    da1 = _col2im(np.einsum("ok,nop->nkp", w2.reshape(w2.shape[0], -1), dz2), h1_shape, k)
    dz1 = (da1 * (a1 > 0)).reshape(n, w1.shape[0], -1)
    dw1 = np.einsum("nop,nkp->ok", dz1, c1).reshape(w1.shape)
    db1 = dz1.sum(axis=(0, 2))
    return loss, (dw1, db1, dw2, db2, ddense, dbias)


def _functrans_loss(params, x, labels):
    w1, b1, w2, b2, dense, bias = params
    dn = ("NCHW", "OIHW", "NCHW")
    a1 = ft.nn.relu(lax.conv_general_dilated(x, w1, (1, 1), "VALID", dimension_numbers=dn)
                    + b1[:, None, None])
    a2 = ft.nn.relu(lax.conv_general_dilated(a1, w2, (1, 1), "VALID", dimension_numbers=dn)
                    + b2[:, None, None])
    pooled = lax.reduce_window(a2, -fnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    logits = fnp.reshape(pooled, (x.shape[0], -1)) @ dense + bias
    logp = ft.nn.log_softmax(logits, axis=1)
    return -fnp.mean(logp[np.arange(x.shape[0]), labels])


def test_a_small_cnn_trains_like_hand_written_numpy():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 2, 8, 8))
    labels = rng.integers(0, 3, 4)
    params = (rng.standard_normal((3, 2, 3, 3)) * 0.5, rng.standard_normal(3) * 0.1,
              rng.standard_normal((4, 3, 3, 3)) * 0.5, rng.standard_normal(4) * 0.1,
              rng.standard_normal((4 * 2 * 2, 3)) * 0.5, np.zeros(3))
    ours, jitted_ours, theirs = params, params, params
    value_and_grad = ft.value_and_grad(_functrans_loss)
    jitted = ft.jit(value_and_grad)
    losses = []
    for _ in range(5):  # SGD steps, each side on its own parameters
        loss, grads = value_and_grad(ours, x, labels)
        jloss, jgrads = jitted(jitted_ours, x, labels)
        want_loss, want_grads = _numpy_loss_and_grads(theirs, x, labels)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(jloss, want_loss, rtol=1e-10, atol=1e-10)
        for g, jg, wg in zip(grads, jgrads, want_grads):
            assert g.shape == wg.shape
            np.testing.assert_allclose(g, wg, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(jg, wg, rtol=1e-10, atol=1e-10)
        ours = tuple(p - 0.1 * g for p, g in zip(ours, grads))
        jitted_ours = tuple(p - 0.1 * g for p, g in zip(jitted_ours, jgrads))
        theirs = tuple(p - 0.1 * g for p, g in zip(theirs, want_grads))
        losses.append(want_loss)
    assert losses[-1] < losses[0]  # it trains
