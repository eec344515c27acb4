"""functrans/primitives/fft.py and functrans.numpy.fft: the real-FFT transposes against
dense matrices written out by hand (even and odd lengths), the pairing
``<ct, F x> == <F^T ct, x>``, NumPy's defaults and errors, and the frequency helpers.
The sweep (values, both modes to second order, vmap, float32, device) is tests/cases_fft.py.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import cupy_standin as standin
import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from sweep import case_rng


def _rng(*key) -> np.random.Generator:
    return case_rng(repr(key))


def _complex(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _pairing(a, b) -> float:
    """``Re(sum(a * b))``: the pairing transposes respect (no conjugation, as in JAX)."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _transpose(fun, x, ct):
    return ft.linear_transpose(fun, x)(ct)[0]


# ------------------------------------------------------------------------------------------
# Dense matrices by hand: the DFT written out, with the real-FFT bin weights
# ------------------------------------------------------------------------------------------


def _rfft_matrix(n: int) -> np.ndarray:
    """Rows k = 0 .. n//2 of the DFT: ``y[k] = sum_j exp(-2 pi i j k / n) x[j]``."""
    k, j = np.arange(n // 2 + 1)[:, None], np.arange(n)[None, :]
    return np.exp(-2j * np.pi * j * k / n)


def _irfft_matrix(n: int) -> np.ndarray:
    """``y = Re(B c)``: bin k stands for bins k and n - k of the full spectrum (weight 2),
    except bin 0 and, for even n, bin n/2 (weight 1)."""
    m = n // 2 + 1
    weights = np.full(m, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    j, k = np.arange(n)[:, None], np.arange(m)[None, :]
    return weights * np.exp(2j * np.pi * j * k / n) / n


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8])
def test_rfft_and_its_transpose_are_the_dense_matrix_and_its_transpose(n):
    rng = _rng("rfft", n)
    x, ct = rng.standard_normal((2, n)), _complex(rng, (2, n // 2 + 1))
    matrix = _rfft_matrix(n)
    f = lambda v: lax.fft(v, "RFFT", (n,))  # noqa: E731
    np.testing.assert_allclose(f(x), x @ matrix.T, rtol=1e-12, atol=1e-12)
    # Real input: the cotangent is the real part of M^T ct.
    back = _transpose(f, x, ct)
    np.testing.assert_allclose(back, np.real(ct @ matrix), rtol=1e-12, atol=1e-12)
    assert back.dtype == np.float64
    assert np.isclose(_pairing(ct, f(x)), _pairing(back, x), rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8])
def test_irfft_and_its_transpose_are_the_dense_matrix_and_its_transpose(n):
    rng = _rng("irfft", n)
    c, ct = _complex(rng, (2, n // 2 + 1)), rng.standard_normal((2, n))
    matrix = _irfft_matrix(n)
    f = lambda v: lax.fft(v, "IRFFT", (n,))  # noqa: E731
    np.testing.assert_allclose(f(c), np.real(c @ matrix.T), rtol=1e-12, atol=1e-12)
    back = _transpose(f, c, ct)
    np.testing.assert_allclose(back, ct @ matrix, rtol=1e-12, atol=1e-12)
    assert back.dtype == np.complex128
    assert np.isclose(_pairing(ct, f(c)), _pairing(back, c), rtol=1e-12)


@pytest.mark.parametrize("fft_type,lengths", [
    ("FFT", (3, 4)), ("IFFT", (5,)), ("RFFT", (3, 4)), ("RFFT", (2, 5)), ("IRFFT", (3, 4)),
    ("IRFFT", (4, 3)), ("RFFT", (2, 3, 5)), ("IRFFT", (2, 2, 6))])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transpose_pairs_with_the_transform(fft_type, lengths, dtype):
    """``<ct, F x> == <F^T ct, x>`` for n-D transforms of every type and precision."""
    rng = _rng(fft_type, lengths, dtype)
    complex_dtype = np.complex64 if dtype == np.float32 else np.complex128
    in_shape = lengths[:-1] + (lengths[-1] // 2 + 1,) if fft_type == "IRFFT" else lengths
    x = (rng.standard_normal((2,) + in_shape).astype(dtype) if fft_type == "RFFT"
         else _complex(rng, (2,) + in_shape).astype(complex_dtype))
    f = lambda v: lax.fft(v, fft_type, lengths)  # noqa: E731
    y = f(x)
    ct = (_complex(rng, y.shape) if y.dtype.kind == "c" else
          rng.standard_normal(y.shape)).astype(y.dtype)
    back = _transpose(f, x, ct)
    assert back.dtype == x.dtype and back.shape == x.shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(_pairing(back, x), _pairing(ct, y), rtol=tol)


@pytest.mark.parametrize("n", [4, 5])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_numpy_rfft_irfft_gradients_match_the_dense_matrices(n, norm):
    rng = _rng("grads", n, norm)
    x, w = rng.standard_normal(n), _complex(rng, n // 2 + 1)
    scale = {None: 1.0, "ortho": 1 / np.sqrt(n), "forward": 1 / n}[norm]
    # d/dx Re(sum(w * rfft(x))) = Re(w @ M) * scale
    g = ft.grad(lambda v: fnp.sum(fnp.real(w * fnp.fft.rfft(v, norm=norm))))(x)
    np.testing.assert_allclose(g, np.real(w @ _rfft_matrix(n)) * scale, rtol=1e-12)
    # d/dc sum(r * irfft(c)), r real: the cotangent B^T r, times the norm's inverse scale.
    r = rng.standard_normal(n)
    inverse_scale = {None: 1.0, "ortho": np.sqrt(n), "forward": float(n)}[norm]
    g = ft.grad(lambda c: fnp.sum(r * fnp.fft.irfft(c, n=n, norm=norm)))(w)
    np.testing.assert_allclose(g, (r @ _irfft_matrix(n)) * inverse_scale, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# The primitive: jaxprs, batching and errors
# ------------------------------------------------------------------------------------------


def test_one_fft_equation_per_transform():
    x = np.ones((3, 4))
    jaxpr = str(ft.make_jaxpr(lambda x: fnp.fft.rfft2(x, norm="ortho"))(x))
    assert jaxpr.count("fft[") == 1 and "fft_type=FftType.RFFT" in jaxpr, jaxpr
    grad_jaxpr = str(ft.make_jaxpr(ft.grad(lambda x: fnp.sum(fnp.fft.rfft(x).real)))(x))
    assert "fft_type=FftType.IRFFT" in grad_jaxpr, grad_jaxpr


def test_fft_type_accepts_enum_names_and_values():
    x = _complex(_rng("types"), (4,))
    want = np.fft.ifft(x)
    for fft_type in (lax.FftType.IFFT, "IFFT", "ifft", 1):
        np.testing.assert_allclose(lax.fft(x, fft_type, (4,)), want, rtol=1e-12)


def test_vmap_over_a_trailing_axis_moves_it_out_of_the_transform():
    x = _rng("vmap").standard_normal((4, 6, 3))
    out = ft.vmap(lambda v: lax.fft(v, "RFFT", (4, 6)), in_axes=2, out_axes=2)(x)
    np.testing.assert_allclose(out, np.fft.rfftn(x, axes=(0, 1)), rtol=1e-12, atol=1e-12)


def test_fft_errors_teach():
    with pytest.raises(ValueError, match="fft_type must be one of"):
        lax.fft(np.ones(4, complex), "DCT", (4,))
    with pytest.raises(TypeError, match="RFFT takes a float32 or float64 operand"):
        lax.fft(np.ones(4, complex), "RFFT", (4,))
    with pytest.raises(TypeError, match="FFT takes a complex64 or complex128 operand"):
        lax.fft(np.ones(4), "FFT", (4,))
    with pytest.raises(ValueError, match=r"IRFFT with fft_lengths \(4,\) needs trailing axes "
                                         r"\(3,\)"):
        lax.fft(np.ones(4, complex), "IRFFT", (4,))
    with pytest.raises(ValueError, match="need an operand of rank >= 2"):
        lax.fft(np.ones(4, complex), "FFT", (2, 2))
    for lengths in ((0,), ()):
        with pytest.raises(ValueError, match="fft_lengths must be one or more positive"):
            lax.fft(np.ones(4, complex), "FFT", lengths)


# ------------------------------------------------------------------------------------------
# functrans.numpy.fft: NumPy's defaults and errors
# ------------------------------------------------------------------------------------------


def test_fftn_with_s_and_no_axes_uses_the_last_axes_as_numpy():
    x = _rng("fftn_s").standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates s alone
        want = np.fft.fftn(x, s=(5, 2))
        want_r = np.fft.irfftn(x, s=(2, 5))
    np.testing.assert_allclose(fnp.fft.fftn(x, s=(5, 2)), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fnp.fft.irfftn(x, s=(2, 5)), want_r, rtol=1e-12, atol=1e-12)


def test_integer_input_is_transformed_in_double_precision():
    x = np.arange(5)
    for name in ("fft", "rfft", "irfft", "hfft", "ihfft"):
        got, want = getattr(fnp.fft, name)(x), getattr(np.fft, name)(x)
        assert got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_hfft_and_ihfft_invert_each_other():
    x = _rng("hfft").standard_normal(7)
    for norm in (None, "ortho", "forward"):
        np.testing.assert_allclose(fnp.fft.hfft(fnp.fft.ihfft(x, norm=norm), 7, norm=norm), x,
                                   rtol=1e-12, atol=1e-12)


def test_numpy_fft_errors_teach():
    with pytest.raises(TypeError, match="rfft: the input must be real"):
        fnp.fft.rfft(np.ones(4, complex))
    with pytest.raises(ValueError, match="norm must be one of"):
        fnp.fft.fft(np.ones(4), norm="unitary")
    with pytest.raises(ValueError, match="norm must be one of"):
        fnp.fft.hfft(np.ones(4), norm="unitary")
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\)"):
        fnp.fft.fft(np.ones(4), n=0)
    with pytest.raises(ValueError, match=r"invalid number of data points \(0\).*pass n"):
        fnp.fft.irfft(np.ones(1))
    with pytest.raises(ValueError, match="repeat an axis"):
        fnp.fft.fftn(np.ones((2, 2)), axes=(0, 0))
    with pytest.raises(ValueError, match="same length"):
        fnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1))
    with pytest.raises(ValueError, match="out of bounds|axis"):
        fnp.fft.fft(np.ones(4), axis=1)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies_match_numpy(n, d):
    np.testing.assert_allclose(fnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), rtol=1e-15)
    np.testing.assert_allclose(fnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), rtol=1e-15)
    assert fnp.fft.fftfreq(n, d, dtype=np.float32).dtype == np.float32


def test_frequencies_with_traced_spacing_and_on_a_device():
    g = ft.grad(lambda d: fnp.sum(fnp.fft.fftfreq(4, d) ** 2))(0.5)
    # sum(k^2) / (4 d)^2 with k = 0, 1, -2, -1: derivative -2 * 6 / (16 d^3)
    np.testing.assert_allclose(g, -2 * 6 / (16 * 0.5 ** 3), rtol=1e-12)
    like = standin.asarray(np.ones(1))
    with standin.transfers() as t:
        out = fnp.fft.rfftfreq(6, like=like)
    assert isinstance(out, standin.ndarray) and t.h2d == 0
    np.testing.assert_allclose(standin.asnumpy(out), np.fft.rfftfreq(6))
    with pytest.raises(ValueError, match="n must be a positive int"):
        fnp.fft.fftfreq(0)


@pytest.mark.parametrize("shape", [(5,), (4, 3), (2, 3, 5)])
def test_shifts_match_numpy_and_invert_each_other(shape):
    x = np.arange(int(np.prod(shape))).reshape(shape)
    np.testing.assert_array_equal(fnp.fft.fftshift(x), np.fft.fftshift(x))
    np.testing.assert_array_equal(fnp.fft.ifftshift(x), np.fft.ifftshift(x))
    np.testing.assert_array_equal(fnp.fft.ifftshift(fnp.fft.fftshift(x, axes=0), axes=0), x)


# ------------------------------------------------------------------------------------------
# convolve and correlate (functrans.numpy)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_match_numpy_for_every_pair_of_lengths(name, mode):
    rng = _rng(name, mode)
    for n in range(1, 8):
        for m in range(1, 8):
            a, v = _complex(rng, n), _complex(rng, m)
            want = getattr(np, name)(a, v, mode)
            got = getattr(fnp, name)(a, v, mode)
            assert got.shape == want.shape, (n, m)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str((n, m)))


def test_convolve_is_one_contraction_whatever_the_lengths():
    def count(n, m):
        jaxpr = ft.make_jaxpr(lambda a, v: fnp.convolve(a, v, "same"))(np.ones(n), np.ones(m))
        return len(jaxpr.jaxpr.eqns), str(jaxpr).count("dot_general")
    assert count(3, 2) == count(50, 40) == count(2, 60)
    assert count(50, 40)[1] == 1


def test_convolve_gradient_is_the_correlation_of_the_cotangent():
    rng = _rng("convolve grad")
    a, v, ct = rng.standard_normal(6), rng.standard_normal(3), rng.standard_normal(8)
    ga, gv = ft.grad(lambda a, v: fnp.sum(ct * fnp.convolve(a, v)), argnums=(0, 1))(a, v)
    np.testing.assert_allclose(ga, np.correlate(ct, v, "valid"), rtol=1e-12)
    np.testing.assert_allclose(gv, np.correlate(ct, a, "valid"), rtol=1e-12)


def test_convolve_errors_teach():
    with pytest.raises(ValueError, match="convolve: v must be a non-empty 1-D array"):
        fnp.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="correlate: a must be a non-empty 1-D array"):
        fnp.correlate(np.ones(0), np.ones(2))
    with pytest.raises(ValueError, match="mode must be 'full', 'same' or 'valid'"):
        fnp.convolve(np.ones(3), np.ones(2), mode="circular")
