"""``functrans.scipy.signal``'s convolutions against SciPy's over shapes (1-D to 3-D, either
input the larger, even and odd kernels), modes, methods and dtypes, and their errors.  The
sweep (derivatives, vmap, float32, the CuPy stand-in) is in tests/cases_convolution.py."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.signal

import functrans as ft
import functrans.numpy as fnp
from functrans.scipy import signal

SHAPES = [((7,), (3,)), ((3,), (7,)), ((6,), (4,)), ((5,), (5,)), ((5, 6), (2, 3)),
          ((2, 3), (5, 6)), ((4, 5, 3), (2, 2, 3))]


def _draw(rng, shape, complex_: bool):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_matches_scipy(shapes, mode, complex_):
    rng = np.random.default_rng(0)
    a, b = _draw(rng, shapes[0], complex_), _draw(rng, shapes[1], complex_)
    for name, method in itertools.product(("convolve", "correlate"), ("auto", "direct", "fft")):
        got = getattr(signal, name)(a, b, mode, method=method)
        want = getattr(scipy.signal, name)(a, b, mode, method=method)
        assert got.shape == want.shape, (name, method)
        np.testing.assert_allclose(got, want, atol=1e-10, err_msg=f"{name} {method}")
    if len(shapes[0]) == 2:
        for name in ("convolve2d", "correlate2d"):
            np.testing.assert_allclose(getattr(signal, name)(a, b, mode),
                                       getattr(scipy.signal, name)(a, b, mode), atol=1e-10,
                                       err_msg=name)
    np.testing.assert_allclose(signal.fftconvolve(a, b, mode),
                               scipy.signal.fftconvolve(a, b, mode), atol=1e-10)


@pytest.mark.parametrize("axes", [1, [-1], (0,), None])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes(axes, mode):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 8)), rng.standard_normal((1, 3))
    if axes == (0,):
        a, b = a.T, b.T
    if axes is None and mode == "valid":
        b = b[:1]
    np.testing.assert_allclose(signal.fftconvolve(a, b, mode, axes=axes),
                               scipy.signal.fftconvolve(a, b, mode, axes=axes), atol=1e-10)


def test_integers_stay_integers_in_direct_mode():
    a, b = np.arange(5), np.array([1, -1, 2])
    got = signal.convolve(a, b)
    np.testing.assert_array_equal(got, scipy.signal.convolve(a, b))
    assert got.dtype == scipy.signal.convolve(a, b).dtype
    assert signal.fftconvolve(a, b).dtype == np.float64


def test_gradients_are_convolutions():
    """d/da sum(w * convolve(a, b)) = correlate(w, b, "valid")."""
    rng = np.random.default_rng(2)
    a, b, w = rng.standard_normal(6), rng.standard_normal(3), rng.standard_normal(8)
    grad = ft.grad(lambda a: fnp.sum(w * signal.convolve(a, b)))(a)
    np.testing.assert_allclose(grad, scipy.signal.correlate(w, b, "valid"), atol=1e-12)
    grad = ft.jit(ft.grad(lambda a: fnp.sum(w * signal.fftconvolve(a, b))))(a)
    np.testing.assert_allclose(grad, scipy.signal.correlate(w, b, "valid"), atol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda: signal.convolve(np.ones(3), np.ones(2), mode="circular"), ValueError,
     r"convolve: mode must be 'full', 'same' or 'valid', got 'circular'"),
    (lambda: signal.correlate(np.ones(3), np.ones(2), method="overlap"), ValueError,
     r"correlate: method must be 'auto', 'direct' or 'fft', got 'overlap'"),
    (lambda: signal.convolve(np.ones(3), np.ones((2, 2))), ValueError,
     r"convolve: in1 and in2 must have the same number of dimensions, got shapes \(3,\) "
     r"and \(2, 2\)"),
    (lambda: signal.convolve(np.ones((3, 2)), np.ones((2, 3)), mode="valid"), ValueError,
     r"convolve: in 'valid' mode one input must be at least as large as the other in every "
     r"dimension, got shapes \(3, 2\) and \(2, 3\)"),
    (lambda: signal.convolve(np.ones(0), np.ones(2)), ValueError,
     r"convolve: in1 and in2 must not be empty"),
    (lambda: signal.convolve2d(np.ones(3), np.ones(2)), ValueError,
     r"convolve2d: in1 and in2 must be 2-D arrays, got shapes \(3,\) and \(2,\)"),
    (lambda: signal.correlate2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap"),
     NotImplementedError, r"correlate2d: only boundary='fill' with fillvalue=0"),
    (lambda: signal.fftconvolve(np.ones((3, 2)), np.ones((2, 3)), axes=0), ValueError,
     r"fftconvolve: in1 and in2 must have equal or broadcastable sizes along the axes not "
     r"convolved, got shapes \(3, 2\) and \(2, 3\)"),
    (lambda: signal.fftconvolve(np.ones(3), np.ones(2), axes=1), ValueError,
     r"fftconvolve: axis 1 is out of bounds for arrays of 1 dimensions"),
])
def test_bad_input_raises_a_named_error(call, error, match):
    with pytest.raises(error, match=match):
        call()
