"""Sweep cases of the FFT family: ``lax.fft`` (every ``fft_type``, even and odd lengths, 1-D
and 2-D, with leading batch axes) and ``functrans.numpy.fft`` (every function with
``n``/``s``, ``axis``/``axes`` and each ``norm``), and ``functrans.numpy.convolve`` and
``correlate`` (every mode, either argument the longer, even and odd overlaps).

Complex operands of the lax cases are built from two real arguments with ``lax.complex``,
and complex results are returned as their real and imaginary parts side by side, so that the sweep's
real-valued numerical derivatives reach the complex transforms too.
"""
from __future__ import annotations

from functrans import lax
from sweep import C64, C128, F32, F64, I64, A, Case, numpy_case


def _parts(z):
    if z.dtype.kind != "c":
        return z
    return lax.concatenate([lax.real(z), lax.imag(z)], z.ndim - 1)


def _lax(fft_type: str, lengths: tuple, complex_input: bool):
    if complex_input:
        return lambda x, y: _parts(lax.fft(lax.complex(x, y), fft_type, lengths))
    return lambda x: _parts(lax.fft(x, fft_type, lengths))


def _case(name: str, fft_type: str, lengths: tuple, shape: tuple) -> Case:
    complex_input = fft_type != "RFFT"
    args = [A(*shape), A(*shape)] if complex_input else [A(*shape)]
    return Case(name, _lax(fft_type, lengths, complex_input), args, linear=True)


PRIMITIVE_CASES = [
    _case("fft_FFT_1d", "FFT", (5,), (3, 5)),
    _case("fft_FFT_2d", "FFT", (3, 4), (2, 3, 4)),
    _case("fft_IFFT_1d", "IFFT", (4,), (4,)),
    _case("fft_IFFT_2d", "IFFT", (2, 3), (3, 2, 3)),
    _case("fft_RFFT_even", "RFFT", (6,), (2, 6)),
    _case("fft_RFFT_odd", "RFFT", (5,), (2, 5)),
    _case("fft_RFFT_2d_even", "RFFT", (3, 4), (2, 3, 4)),
    _case("fft_RFFT_2d_odd", "RFFT", (2, 5), (2, 5)),
    _case("fft_IRFFT_even", "IRFFT", (6,), (2, 4)),
    _case("fft_IRFFT_odd", "IRFFT", (5,), (2, 3)),
    _case("fft_IRFFT_2d_even", "IRFFT", (3, 4), (2, 3, 3)),
    _case("fft_IRFFT_2d_odd", "IRFFT", (2, 3), (2, 2)),
    _case("fft_RFFT_length1", "RFFT", (1,), (3, 1)),
    _case("fft_IRFFT_length1", "IRFFT", (1,), (3, 1)),
]

COMPLEX = (F64, F32, C128, C64)
REAL = (F64, F32)  # NumPy refuses complex input to rfft and its relatives


def _c(name, fun, *args, dtypes=COMPLEX):
    return numpy_case(f"fft.{name}", fun, *args, dtypes=dtypes)


NUMPY_CASES = [
    _c("fft", lambda m, x: m.fft.fft(x), A(3, 5)),
    _c("fft_n_pad_axis0", lambda m, x: m.fft.fft(x, n=6, axis=0), A(4, 3)),
    _c("fft_n_crop_ortho", lambda m, x: m.fft.fft(x, n=3, norm="ortho"), A(2, 5)),
    _c("ifft", lambda m, x: m.fft.ifft(x), A(2, 6)),
    _c("ifft_forward_axis0", lambda m, x: m.fft.ifft(x, axis=0, norm="forward"), A(5, 2)),
    _c("rfft", lambda m, x: m.fft.rfft(x), A(3, 6), dtypes=REAL),
    _c("rfft_odd_n_forward", lambda m, x: m.fft.rfft(x, n=7, norm="forward"), A(2, 5),
       dtypes=REAL),
    _c("rfft_axis0_ortho", lambda m, x: m.fft.rfft(x, axis=0, norm="ortho"), A(5, 3),
       dtypes=REAL),
    _c("irfft", lambda m, x: m.fft.irfft(x), A(2, 4)),
    _c("irfft_odd_n", lambda m, x: m.fft.irfft(x, n=5), A(3, 3)),
    _c("irfft_n_pad_ortho", lambda m, x: m.fft.irfft(x, n=9, norm="ortho"), A(3)),
    _c("irfft_axis0_forward", lambda m, x: m.fft.irfft(x, axis=0, norm="forward"), A(4, 2)),
    _c("hfft", lambda m, x: m.fft.hfft(x), A(2, 4)),
    _c("hfft_odd_n_ortho", lambda m, x: m.fft.hfft(x, n=7, norm="ortho"), A(4)),
    _c("hfft_forward", lambda m, x: m.fft.hfft(x, norm="forward"), A(3)),
    _c("ihfft", lambda m, x: m.fft.ihfft(x), A(2, 5), dtypes=REAL),
    _c("ihfft_n_backward_axis0", lambda m, x: m.fft.ihfft(x, n=4, axis=0, norm="backward"),
       A(6, 2), dtypes=REAL),
    _c("fft2", lambda m, x: m.fft.fft2(x), A(2, 3, 4)),
    _c("fft2_s_axes_ortho", lambda m, x: m.fft.fft2(x, s=(3, 2), axes=(0, 2), norm="ortho"),
       A(2, 3, 4)),
    _c("ifft2", lambda m, x: m.fft.ifft2(x), A(3, 4)),
    _c("rfft2", lambda m, x: m.fft.rfft2(x), A(2, 3, 5), dtypes=REAL),
    _c("rfft2_axes_swapped", lambda m, x: m.fft.rfft2(x, axes=(1, 0)), A(4, 3), dtypes=REAL),
    _c("irfft2", lambda m, x: m.fft.irfft2(x), A(3, 3)),
    _c("irfft2_s_forward", lambda m, x: m.fft.irfft2(x, s=(2, 5), norm="forward"), A(2, 3, 3)),
    _c("fftn", lambda m, x: m.fft.fftn(x), A(2, 3, 4)),
    _c("fftn_s", lambda m, x: m.fft.fftn(x, s=(2, 5), axes=(1, 2)), A(3, 3, 4)),
    _c("ifftn_axes", lambda m, x: m.fft.ifftn(x, axes=(0, 2), norm="ortho"), A(3, 2, 4)),
    _c("rfftn", lambda m, x: m.fft.rfftn(x), A(2, 3, 4), dtypes=REAL),
    _c("rfftn_s_axes", lambda m, x: m.fft.rfftn(x, s=(4, 3), axes=(2, 0)), A(3, 2, 4),
       dtypes=REAL),
    _c("irfftn", lambda m, x: m.fft.irfftn(x), A(2, 3, 3)),
    _c("irfftn_s_axes", lambda m, x: m.fft.irfftn(x, s=(3, 5), axes=(0, 1), norm="ortho"),
       A(2, 3, 2)),
    _c("fftshift", lambda m, x: m.fft.fftshift(x), A(3, 4)),
    _c("fftshift_axis", lambda m, x: m.fft.fftshift(x, axes=1), A(3, 5)),
    _c("ifftshift", lambda m, x: m.fft.ifftshift(x), A(5, 3)),
    _c("ifftshift_axes", lambda m, x: m.fft.ifftshift(x, axes=(0,)), A(5, 3)),
]

WITH_INT = (F64, F32, I64, C128, C64)
NUMPY_CASES += [
    numpy_case(f"{fn}_{mode}_{n}_{m}",
               lambda m_, a, v, fn=fn, mode=mode: getattr(m_, fn)(a, v, mode),
               A(n), A(m), dtypes=WITH_INT)
    for fn in ("convolve", "correlate")
    for mode in ("full", "same", "valid")
    for n, m in ((5, 3), (2, 4), (4, 4), (1, 3))
]
