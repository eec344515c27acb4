"""``functrans.image`` and what the sweep (tests/cases_scipy_more.py, against SciPy) cannot
express for ``functrans.scipy``'s ``fft``, ``ndimage``, ``interpolate``, ``cluster.vq`` and
``signal``: ``image.resize``'s properties and derivatives, the interpolator as a pytree
through ``jit``/``vmap``/``grad``, ``jit`` against eager, arrays staying on their device,
and the argument errors.  Where JAX is installed, ``image`` is compared with ``jax.image``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.ndimage as scipy_ndimage
import scipy.signal as scipy_signal

import functrans as ft
import functrans.image as image
import functrans.numpy as fnp
import functrans.scipy.cluster.vq as fvq
import functrans.scipy.fft as ffft
import functrans.scipy.interpolate as finterpolate
import functrans.scipy.ndimage as fndimage
import functrans.scipy.signal as fsignal
from sweep import A, Case, case_rng, check_case_grads, check_vmap_matches_loop, ids

METHODS = ["linear", "cubic", "lanczos3", "lanczos5", "area", "cubic-pytorch"]


def _rng(seed=0):
    return np.random.default_rng(seed)


# -- image.resize: properties -----------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS + ["nearest"])
def test_resize_to_the_same_shape_is_the_identity(method):
    x = _rng().normal(size=(4, 5, 2))
    np.testing.assert_allclose(image.resize(x, x.shape, method), x, rtol=0, atol=1e-14)


@pytest.mark.parametrize("method", METHODS + ["nearest"])
@pytest.mark.parametrize("antialias", [True, False])
def test_resampling_a_constant_image_gives_the_constant(method, antialias):
    for shape in [(3, 4), (11, 2), (16, 9)]:
        out = image.resize(np.full((8, 6), 2.5), shape, method, antialias=antialias)
        np.testing.assert_allclose(out, np.full(shape, 2.5), rtol=1e-13)


def test_linear_upsampling_matches_scipy_zoom_with_half_pixel_centres():
    x = _rng().normal(size=(5, 6))
    want = scipy_ndimage.zoom(x, 2, order=1, mode="nearest", grid_mode=True)
    np.testing.assert_allclose(image.resize(x, (10, 12), "bilinear"), want, atol=1e-13)


def test_linear_downsampling_by_two_with_antialias_is_a_triangle_filter():
    # output pixel j sits at input position 2j + 0.5: weights 1/8, 3/8, 3/8, 1/8 over
    # input pixels 2j - 1 .. 2j + 2, renormalised where they fall off the edge
    x = _rng().normal(size=8)
    w = np.array([1, 3, 3, 1]) / 8.0
    want = []
    for j in range(4):
        idx = np.arange(2 * j - 1, 2 * j + 3)
        keep = (idx >= 0) & (idx < 8)
        want.append(np.sum(w[keep] * x[idx[keep]]) / np.sum(w[keep]))
    np.testing.assert_allclose(image.resize(x, (4,), "linear"), want, atol=1e-14)
    np.testing.assert_allclose(image.resize(x, (4,), "linear", antialias=False),
                               (x[0::2] + x[1::2]) / 2, atol=1e-14)


def test_area_downsampling_averages_blocks():
    x = _rng().normal(size=(6, 4))
    want = x.reshape(3, 2, 2, 2).mean(axis=(1, 3))
    np.testing.assert_allclose(image.resize(x, (3, 2), "area"), want, atol=1e-14)


def test_nearest_keeps_the_dtype_and_picks_pixels():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = image.resize(x, (6, 2), "nearest")
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, x[[0, 0, 1, 1, 2, 2]][:, [1, 3]])  # centres 1, 3


def test_resize_promotes_integers_and_keeps_float32():
    assert image.resize(np.ones((2, 2), np.int32), (3, 3), "linear").dtype == np.float64
    assert image.resize(np.ones((2, 2), np.float32), (3, 3), "cubic").dtype == np.float32


@pytest.mark.parametrize("method", METHODS + ["nearest"])
def test_resize_matches_jax(method):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = _rng().normal(size=(5, 6, 2))
    for antialias in (True, False):
        for shape in [(10, 3, 2), (3, 13, 2), (1, 1, 2)]:
            want = np.asarray(jax.image.resize(x, shape, method, antialias=antialias))
            np.testing.assert_allclose(image.resize(x, shape, method, antialias=antialias),
                                       want, atol=1e-12, err_msg=f"{method} {shape}")


@pytest.mark.parametrize("method", METHODS)
def test_scale_and_translate_and_its_derivatives_match_jax(method):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = _rng().normal(size=(5, 6))
    scale, translation = np.array([1.3, 0.7]), np.array([0.4, -0.6])
    for antialias in (True, False):
        def ours(s, t):
            return image.scale_and_translate(x, (7, 4), (0, 1), s, t, method, antialias)

        @jax.jit
        def theirs(s, t):
            return jax.image.scale_and_translate(x, (7, 4), (0, 1), s, t, method, antialias)
        np.testing.assert_allclose(ours(scale, translation),
                                   np.asarray(theirs(scale, translation)), atol=1e-12)
        got = ft.grad(lambda s, t: fnp.sum(ours(s, t)), argnums=(0, 1))(scale, translation)
        want = jax.jit(jax.grad(lambda s, t: theirs(s, t).sum(), argnums=(0, 1)))(
            scale, translation)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), atol=1e-11)


def test_scale_and_translate_with_unit_scale_shifts_and_zeroes_what_leaves():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    out = image.scale_and_translate(x, (4,), (0,), np.array([1.0]), np.array([2.0]), "linear")
    np.testing.assert_allclose(out, [0.0, 0.0, 1.0, 2.0])


# -- image: transforms through the sweep's checks ----------------------------------------------

IMAGE_CASES = [
    Case(f"resize_{method}_{shape}", lambda x, m=method, s=shape: image.resize(x, s, m),
         [A(4, 5)])
    for method in METHODS for shape in [(7, 3), (2, 9)]
] + [
    Case("resize_nearest", lambda x: image.resize(x, (7, 3), "nearest"), [A(4, 5)]),
    Case("resize_linear_no_antialias",
         lambda x: image.resize(x, (2, 3), "linear", antialias=False), [A(4, 5)]),
    Case("resize_batch_axis_kept", lambda x: image.resize(x, (3, 4, 6), "cubic"), [A(3, 2, 5)]),
    Case("scale_and_translate_linear",
         lambda x, s, t: image.scale_and_translate(x, (5, 4), (0, 1), 1.2 + 0.1 * s, t,
                                                   "linear"), [A(4, 3), A(2), A(2)]),
    Case("scale_and_translate_lanczos3_one_axis",
         lambda x, s, t: image.scale_and_translate(x, (4, 6), (1,), 0.6 + 0.05 * s, t,
                                                   "lanczos3"), [A(4, 5), A(1), A(1)]),
]


@pytest.mark.parametrize("case", IMAGE_CASES, ids=ids(IMAGE_CASES))
def test_image_derivatives_numerically(case):
    check_case_grads(case, salt=1)


@pytest.mark.parametrize("case", IMAGE_CASES, ids=ids(IMAGE_CASES))
def test_image_vmap_matches_loop(case):
    check_vmap_matches_loop(case, case_rng(case, 3))


@pytest.mark.parametrize("case", IMAGE_CASES, ids=ids(IMAGE_CASES))
def test_image_jit_matches_eager(case):
    args = case.draw(case_rng(case, 4))
    np.testing.assert_allclose(ft.jit(case)(*args), case(*args), rtol=1e-13, atol=1e-13)


def test_image_errors():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match=r"resize: shape must have one entry per dimension"):
        image.resize(x, (2,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method 'bogus'"):
        image.resize(x, (2, 2), "bogus")
    with pytest.raises(ValueError, match="scale_and_translate: nearest"):
        image.scale_and_translate(x, (2, 2), (0,), [1.0], [0.0], "nearest")
    with pytest.raises(ValueError, match=r"scale_and_translate: scale must have one entry"):
        image.scale_and_translate(x, (2, 2), (0, 1), [1.0], [0.0, 0.0], "linear")
    assert image.ResizeMethod.from_string("trilinear") is image.ResizeMethod.LINEAR


# -- interpolate: the interpolator as a pytree ---------------------------------------------------

GRID = (np.array([0.0, 0.5, 2.0, 3.0]), np.array([-1.0, 0.0, 1.5]))


def test_interpolator_passes_through_jit_vmap_and_grad_as_a_pytree():
    rng = _rng()
    values = rng.normal(size=(4, 3))
    points = np.stack([rng.uniform(0, 3, 5), rng.uniform(-1, 1.5, 5)], -1)
    f = finterpolate.RegularGridInterpolator(GRID, values)
    np.testing.assert_allclose(ft.jit(lambda f, p: f(p))(f, points), f(points), atol=1e-14)
    leaves, tree = ft.tree_util.tree_flatten(f)
    assert len(leaves) == 4  # two grid arrays, the values, the fill value
    rebuilt = ft.tree_util.tree_unflatten(tree, leaves)
    assert rebuilt.method == "linear" and rebuilt(points).shape == (5,)
    stacked = np.stack([values, 2 * values])
    batched = ft.vmap(lambda v: finterpolate.RegularGridInterpolator(GRID, v)(points))(stacked)
    np.testing.assert_allclose(batched, [f(points), 2 * f(points)], atol=1e-14)
    grads = ft.grad(lambda f: fnp.sum(f(points)))(f)
    # linear interpolation is linear in the values: the gradient is the weight of each node
    assert grads.values.shape == (4, 3)
    np.testing.assert_allclose(np.sum(grads.values), 5.0, atol=1e-13)


def test_interpolator_fill_value_and_coordinate_tuples():
    values = np.arange(12.0).reshape(4, 3)
    f = finterpolate.RegularGridInterpolator(GRID, values)
    out = f(np.array([[4.0, 0.0], [1.0, 0.0]]))
    assert np.isnan(out[0]) and np.isfinite(out[1])
    xs, ys = np.array([0.25, 2.5]), np.array([0.5, -0.5])
    np.testing.assert_allclose(f((xs, ys)), f(np.stack([xs, ys], -1)))
    np.testing.assert_allclose(f(np.stack([xs, ys], -1), method="nearest"),
                               finterpolate.RegularGridInterpolator(
                                   GRID, values, method="nearest")(np.stack([xs, ys], -1)))


def test_interpolator_errors():
    values = np.zeros((4, 3))
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        finterpolate.RegularGridInterpolator(GRID, values, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error=True is not supported"):
        finterpolate.RegularGridInterpolator(GRID, values, bounds_error=True)
    with pytest.raises(ValueError, match=r"points\[1\] must be 1-D of length values.shape"):
        finterpolate.RegularGridInterpolator((GRID[0], np.zeros(4)), values)
    with pytest.raises(ValueError, match="the requested points have dimension 3"):
        finterpolate.RegularGridInterpolator(GRID, values)(np.zeros((2, 3)))


# -- ndimage, fft, cluster.vq -------------------------------------------------------------------


def test_map_coordinates_of_integers_rounds_and_keeps_the_dtype():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    out = fndimage.map_coordinates(x, [np.array([0.5, 1.2]), np.array([1.5, 2.2])], order=1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [4, 7])  # 3.5 and 7.0, halves away from zero


def test_map_coordinates_rounds_halves_away_from_zero():
    x = np.arange(5.0)
    np.testing.assert_array_equal(
        fndimage.map_coordinates(x, [np.array([0.5, 1.5, 2.5])], order=0), [1.0, 2.0, 3.0])


def test_map_coordinates_errors():
    x = np.zeros((3, 4))
    with pytest.raises(ValueError, match=r"input.ndim = 2 arrays .* got 1"):
        fndimage.map_coordinates(x, [np.zeros(2)], order=1)
    with pytest.raises(NotImplementedError, match="map_coordinates: order must be 0"):
        fndimage.map_coordinates(x, [np.zeros(2)] * 2, order=3)
    with pytest.raises(NotImplementedError, match="mode 'grid-wrap' is not supported"):
        fndimage.map_coordinates(x, [np.zeros(2)] * 2, order=1, mode="grid-wrap")


def test_dct_of_complex_input_transforms_both_parts():
    import scipy.fft as scipy_fft
    z = _rng().normal(size=(2, 5)) + 1j * _rng(1).normal(size=(2, 5))
    for type in (1, 2, 3, 4):
        np.testing.assert_allclose(ffft.dct(z, type=type), scipy_fft.dct(z, type=type),
                                   atol=1e-12)
        np.testing.assert_allclose(ffft.idctn(z, type=type, norm="ortho"),
                                   scipy_fft.idctn(z, type=type, norm="ortho"), atol=1e-12)


def test_dct_errors():
    x = np.zeros((2, 3))
    with pytest.raises(ValueError, match="dct: type must be 1, 2, 3 or 4"):
        ffft.dct(x, type=5)
    with pytest.raises(ValueError, match="dct: norm='forward' is not implemented"):
        ffft.dct(x, norm="forward")
    with pytest.raises(ValueError, match="dctn: s must have at most x.ndim"):
        ffft.dctn(x, s=[1, 2, 3])
    with pytest.raises(ValueError, match="type 1 needs at least 2 points"):
        ffft.dct(np.zeros(1), type=1)


def test_vq_errors():
    with pytest.raises(ValueError, match=r"vq: obs and code_book must have the same rank"):
        fvq.vq(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="same number of features"):
        fvq.vq(np.zeros((3, 2)), np.zeros((2, 3)))


# -- signal ------------------------------------------------------------------------------------


def test_stft_then_istft_reconstructs_the_signal():
    x = _rng().normal(size=(3, 40))
    for kw in [dict(nperseg=8), dict(nperseg=9, noverlap=5), dict(nperseg=8, nfft=12)]:
        _, _, z = fsignal.stft(x, **kw)
        t, back = fsignal.istft(z, **kw)
        np.testing.assert_allclose(back[:, :40], x, atol=1e-12)
        assert t.shape == back.shape[-1:]


def test_spectral_functions_under_jit_match_eager():
    x = _rng().normal(size=(2, 30))
    for f in [lambda x: fsignal.stft(x, nperseg=8)[2],
              lambda x: fsignal.istft(fsignal.stft(x, nperseg=8)[2], nperseg=8)[1],
              lambda x: fsignal.welch(x, nperseg=8, average="median")[1],
              lambda x: fsignal.csd(x, x[::-1], nperseg=8)[1],
              lambda x: fsignal.detrend(x, bp=[7, 20])]:
        np.testing.assert_allclose(ft.jit(f)(x), f(x), atol=1e-13)


def test_welch_of_a_sine_peaks_at_its_frequency_and_matches_scipy():
    fs = 64.0
    t = np.arange(256) / fs
    x = np.sin(2 * np.pi * 8.0 * t)
    f, p = fsignal.welch(x, fs=fs, nperseg=64)
    assert f[np.argmax(p)] == 8.0
    np.testing.assert_allclose(p, scipy_signal.welch(x, fs=fs, nperseg=64)[1], atol=1e-13)


def test_signal_errors_and_warnings():
    x = np.zeros(16)
    with pytest.raises(ValueError, match=r"stft: noverlap = 8 must be in \[0, nperseg = 8\)"):
        fsignal.stft(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft = 4 must be greater than or equal to nperseg"):
        fsignal.welch(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="stft: unknown boundary option 'wrap'"):
        fsignal.stft(x, nperseg=8, boundary="wrap")
    with pytest.raises(ValueError, match="csd: average must be 'mean' or 'median'"):
        fsignal.csd(x, x, nperseg=8, average="max")
    with pytest.raises(ValueError, match="detrend: type must be 'linear' or 'constant'"):
        fsignal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match=r"istft: Zxx must be at least 2-D"):
        fsignal.istft(np.zeros(5))
    with pytest.warns(UserWarning, match="nperseg = 32 is greater than the input length"):
        fsignal.stft(x, nperseg=32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fsignal.stft(x, nperseg=8)


# -- device arrays: no transfers -------------------------------------------------------------

DEVICE_FUNCTIONS = {
    "dct": lambda x, c: ffft.dct(x, type=3, norm="ortho"),
    "dctn": lambda x, c: ffft.dctn(x, s=[5, 22]),
    "map_coordinates": lambda x, c: fndimage.map_coordinates(x, [c[0], c[1]], 1,
                                                             mode="reflect"),
    "map_coordinates_constant": lambda x, c: fndimage.map_coordinates(x, [c[0], c[1]], 0),
    "resize": lambda x, c: image.resize(x, (7, 9), "lanczos3"),
    "resize_nearest": lambda x, c: image.resize(x, (7, 9), "nearest"),
    "stft": lambda x, c: fsignal.stft(x, nperseg=8),
    "istft": lambda x, c: fsignal.istft(fsignal.stft(x, nperseg=8)[2], nperseg=8)[1],
    "welch": lambda x, c: fsignal.welch(x, nperseg=8, average="median"),
    "detrend": lambda x, c: fsignal.detrend(x, bp=[5]),
    "vq": lambda x, c: fvq.vq(x, x[:2]),
    "interpolate": lambda x, c: finterpolate.RegularGridInterpolator(
        (c[0, :4], c[1, :4]), x[:4, :4], fill_value=None)(c.T),
    "grad_resize": lambda x, c: ft.grad(lambda x: fnp.sum(image.resize(x, (7, 9), "cubic")))(x),
}


@pytest.mark.parametrize("name", DEVICE_FUNCTIONS)
def test_device_arrays_stay_on_the_device(device, name):
    rng = _rng()
    x = rng.normal(size=(4, 20))
    c = np.sort(rng.uniform(-1, 5, size=(2, 6)), axis=-1)
    fun = DEVICE_FUNCTIONS[name]
    args = device.put((x, c))
    with device.transfers() as counts:
        got = fun(*args)
    if counts is not None:
        assert counts.h2d == 0, counts.h2d_log
        assert counts.d2h == 0, counts.d2h_log
    want = fun(x, c)
    for g, w in zip(ft.tree_util.tree_leaves(got), ft.tree_util.tree_leaves(want)):
        g = device.get(g)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), atol=1e-12)


# -- JAX's own functions, where JAX is installed ---------------------------------------------

JAX_PAIRS = {
    "welch_default_nperseg": ("signal", lambda m, x, y: m.welch(x)),
    "csd_of_x_with_itself": ("signal", lambda m, x, y: m.csd(x, x, nperseg=8)),
    "csd_median": ("signal", lambda m, x, y: m.csd(x, y, nperseg=8, average="median")),
    "stft": ("signal", lambda m, x, y: m.stft(x, nperseg=8, boundary="even")),
    "istft": ("signal", lambda m, x, y: m.istft(m.stft(x, nperseg=8)[2], nperseg=8)[1]),
    "detrend": ("signal", lambda m, x, y: m.detrend(x, bp=[5, 20])),
    "dct": ("fft", lambda m, x, y: m.dct(x, n=30, norm="ortho")),
    "idctn": ("fft", lambda m, x, y: m.idctn(x, s=[3, 20])),
    "map_coordinates": ("ndimage", lambda m, x, y: [
        m.map_coordinates(x, [y[0, :8] + 0.5, y[1, :8] * 20], order, mode=mode, cval=0.3)
        for order in (0, 1) for mode in ("constant", "nearest", "wrap", "mirror", "reflect")]),
    "RegularGridInterpolator": ("interpolate", lambda m, x, y: [
        m.RegularGridInterpolator((np.arange(2.0), np.arange(40.0)), x, method=method,
                                  fill_value=fill)(np.stack([y[0] * 0.6, y[1] * 25], -1))
        for method in ("linear", "nearest") for fill in (None, np.nan)]),
    "vq": ("cluster.vq", lambda m, x, y: m.vq(x.T[:5], x.T[5:9])),
    "trapezoid": ("integrate", lambda m, x, y: m.trapezoid(x, dx=0.3)),
}


@pytest.mark.parametrize("name", JAX_PAIRS)
def test_matches_jax_scipy(name):
    """Where JAX's semantics are its own (``csd(x, x)`` complex, ``welch``'s default
    ``nperseg``, the ``map_coordinates`` modes), the values, shapes and dtypes are JAX's."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import importlib
    module, fun = JAX_PAIRS[name]
    ours = importlib.import_module(f"functrans.scipy.{module}")
    theirs = importlib.import_module(f"jax.scipy.{module}")
    rng = _rng()
    x, y = rng.normal(size=(2, 40)), rng.normal(size=(2, 40))
    got = ft.tree_util.tree_leaves(fun(ours, x, y))
    want = jax.tree_util.tree_leaves(fun(theirs, x, y))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, atol=1e-12, rtol=1e-12)
