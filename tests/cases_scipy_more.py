"""Sweep cases of ``functrans.scipy``'s ``fft`` (discrete cosine transforms), ``ndimage``,
``interpolate``, ``integrate``, ``cluster.vq`` and ``signal`` (spectral analysis), each
against the SciPy function it follows: checked by tests/test_numpy.py (values in float64
and float32, through a type-checked jaxpr, both modes to second order, vmap against a
loop).

Where JAX's conventions differ from SciPy's defaults the reference is given SciPy's name for
JAX's behaviour (``map_coordinates``' ``constant`` and ``wrap`` are SciPy's
``grid-constant`` and ``grid-wrap``).  Complex results are returned as their real and
imaginary parts side by side, so that real-valued numerical derivatives reach them.
Coordinates are drawn a quarter (or more) away from the kinks and jumps of interpolation;
query points of ``RegularGridInterpolator`` and the periodograms averaged by a median are
unconstrained draws, whose kinks the fixed seeds keep away from.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.cluster.vq as scipy_vq
import scipy.fft as scipy_fft
import scipy.integrate as scipy_integrate
import scipy.interpolate as scipy_interpolate
import scipy.ndimage as scipy_ndimage
import scipy.signal as scipy_signal

import functrans.scipy.cluster.vq as fvq
import functrans.scipy.fft as ffft
import functrans.scipy.integrate as fintegrate
import functrans.scipy.interpolate as finterpolate
import functrans.scipy.ndimage as fndimage
import functrans.scipy.signal as fsignal
from sweep import F32, F64, A, numpy_case

REAL = (F64, F32)


def _case(name, ours, theirs, *args, dtypes=REAL, diff=True, tol=1e-7):
    """``ours(m, *xs)`` (``m`` is functrans.numpy; ``ours`` builds its inputs with it)
    against ``theirs(*xs)`` on NumPy arrays."""
    return numpy_case(f"scipy.{name}", ours, *args, dtypes=dtypes, diff=diff, tol=tol,
                      reference=theirs)


def _parts(m, z):
    return m.concatenate([m.real(z), m.imag(z)], axis=-1)


# -- fft ------------------------------------------------------------------------------------

def _dct_cases():
    cases = []
    for type in (1, 2, 3, 4):
        for norm in (None, "ortho"):
            for name, ours, theirs in (("dct", ffft.dct, scipy_fft.dct),
                                       ("idct", ffft.idct, scipy_fft.idct)):
                cases.append(_case(
                    f"fft.{name}_type{type}_{norm}",
                    lambda m, x, f=ours, t=type, n=norm: f(x, type=t, norm=n),
                    lambda x, f=theirs, t=type, n=norm: f(x, type=t, norm=n), A(2, 5)))
    cases += [
        _case("fft.dct_n_pad_axis0", lambda m, x: ffft.dct(x, n=6, axis=0),
              lambda x: scipy_fft.dct(x, n=6, axis=0), A(4, 3)),
        _case("fft.dct_n_crop_even", lambda m, x: ffft.dct(x, n=4, norm="ortho"),
              lambda x: scipy_fft.dct(x, n=4, norm="ortho"), A(2, 7)),
        _case("fft.idct_n_pad_odd", lambda m, x: ffft.idct(x, n=7),
              lambda x: scipy_fft.idct(x, n=7), A(2, 4)),
        _case("fft.dctn", lambda m, x: ffft.dctn(x), lambda x: scipy_fft.dctn(x), A(3, 4)),
        _case("fft.dctn_s_axes_ortho",
              lambda m, x: ffft.dctn(x, s=[5, 3], axes=[0, 2], norm="ortho"),
              lambda x: scipy_fft.dctn(x, s=[5, 3], axes=[0, 2], norm="ortho"), A(4, 2, 3)),
        _case("fft.idctn_type3", lambda m, x: ffft.idctn(x, type=3),
              lambda x: scipy_fft.idctn(x, type=3), A(3, 4)),
        _case("fft.idctn_s_ortho", lambda m, x: ffft.idctn(x, s=[3, 5], norm="ortho"),
              lambda x: scipy_fft.idctn(x, s=[3, 5], norm="ortho"), A(2, 4, 4)),
    ]
    return cases


# -- ndimage --------------------------------------------------------------------------------

_SCIPY_MODE = {"constant": "grid-constant", "nearest": "nearest", "wrap": "grid-wrap",
               "mirror": "mirror", "reflect": "reflect"}


def _coordinates(c):
    """Quarter-offset draws moved to cover the grid and beyond, a tenth further: never
    near an integer, where linear interpolation has its kinks."""
    return [c[0] + 1.1, c[1] + 1.6]


def _nearest_coordinates(c):
    """Quarter-offset draws moved to cover the grid and beyond: never near a rounding tie."""
    return [c[0] + 1.0, c[1] + 1.5]


def _map_coordinates_cases():
    cases = []
    for mode, scipy_mode in _SCIPY_MODE.items():
        cases.append(_case(
            f"ndimage.map_coordinates_order1_{mode}",
            lambda m, x, c, md=mode: fndimage.map_coordinates(
                x, _coordinates(c), 1, mode=md, cval=0.5),
            lambda x, c, md=scipy_mode: scipy_ndimage.map_coordinates(
                x, np.stack(_coordinates(c)), order=1, mode=md, cval=0.5),
            A(4, 5), A(2, 7, kind="quarter")))
        cases.append(_case(
            f"ndimage.map_coordinates_order0_{mode}",
            lambda m, x, c, md=mode: fndimage.map_coordinates(
                x, _nearest_coordinates(c), 0, mode=md, cval=0.5),
            lambda x, c, md=scipy_mode: scipy_ndimage.map_coordinates(
                x, np.stack(_nearest_coordinates(c)), order=0, mode=md, cval=0.5),
            A(4, 5), A(2, 7, kind="quarter")))
    cases.append(_case(
        "ndimage.map_coordinates_3d_linear",
        lambda m, x, c: fndimage.map_coordinates(x, c * 1.5 + 0.1, 1, mode="nearest"),
        lambda x, c: scipy_ndimage.map_coordinates(x, c * 1.5 + 0.1, order=1, mode="nearest"),
        A(3, 2, 4), A(3, 2, 3, kind="quarter")))
    return cases


# -- interpolate ----------------------------------------------------------------------------

_GRID = (np.array([-1.0, -0.2, 0.5, 1.5]), np.array([-2.0, -1.0, 0.0, 0.3, 2.0]))


def _query(c):
    """Points mostly inside the grid, some beyond it."""
    return c * 1.2


def _interpolate_case(method, fill, trailing=()):
    name = f"interpolate.RegularGridInterpolator_{method}_fill{fill}" + (
        "_trailing" if trailing else "")
    return _case(
        name,
        lambda m, v, q: finterpolate.RegularGridInterpolator(
            _GRID, v, method=method, fill_value=fill)(_query(q)),
        lambda v, q: scipy_interpolate.RegularGridInterpolator(
            _GRID, v, method=method, bounds_error=False, fill_value=fill)(_query(q)),
        A(4, 5, *trailing), A(6, 2))


# -- signal ---------------------------------------------------------------------------------

def _quiet(f):
    """``f`` with SciPy's warnings (e.g. about segment lengths) silenced."""
    def quiet(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(*args)
    return quiet


_STFT = [dict(nperseg=8), dict(nperseg=7, noverlap=2, boundary="even", nfft=9),
         dict(nperseg=6, noverlap=4, boundary="odd", padded=False, detrend="linear"),
         dict(nperseg=5, boundary=None, return_onesided=False, window="hamming"),
         dict(nperseg=6, boundary="constant", detrend="constant", axis=0)]
_WELCH = [dict(nperseg=8), dict(nperseg=7, noverlap=2, average="median"),
          dict(nperseg=8, noverlap=5, scaling="spectrum", detrend="linear"),
          dict(nperseg=6, nfft=9, detrend=False, return_onesided=False),
          dict(nperseg=5, window=("tukey", 0.3), axis=0)]


def _shape(kw, length: int) -> tuple:
    """Two signals of ``length`` along the case's axis (an odd number of segments for a
    median, whose kinks are then further apart)."""
    if kw.get("average") == "median":
        length += 2
    return (length, 2) if kw.get("axis") == 0 else (2, length)


def _signal_cases():
    cases = []
    for i, kw in enumerate(_STFT):
        cases.append(_case(
            f"signal.stft_{i}", lambda m, x, kw=kw: _parts(m, fsignal.stft(x, **kw)[2]),
            _quiet(lambda x, kw=kw: _parts(np, scipy_signal.stft(x, **kw)[2])),
            A(*_shape(kw, 21))))
    for i, kw in enumerate(_WELCH):
        cases.append(_case(f"signal.welch_{i}", lambda m, x, kw=kw: fsignal.welch(x, **kw)[1],
                           _quiet(lambda x, kw=kw: scipy_signal.welch(x, **kw)[1]),
                           A(*_shape(kw, 25))))
        cases.append(_case(
            f"signal.csd_{i}", lambda m, x, y, kw=kw: _parts(m, fsignal.csd(x, y, **kw)[1]),
            _quiet(lambda x, y, kw=kw: _parts(np, scipy_signal.csd(x, y, **kw)[1])),
            A(*_shape(kw, 25)), A(*_shape(kw, 25))))
    for i, kw in enumerate([dict(nperseg=8), dict(nperseg=7, noverlap=3, nfft=9),
                            dict(nperseg=6, window="hamming")]):
        def ours(m, x, y, kw=kw):
            return fsignal.istft(x + 1j * y, **kw)[1]

        def theirs(x, y, kw=kw):
            return scipy_signal.istft(x + 1j * y, **kw)[1].astype(x.dtype)
        nfreq = kw.get("nfft", kw["nperseg"]) // 2 + 1
        cases.append(_case(f"signal.istft_{i}", ours, _quiet(theirs), A(2, nfreq, 6),
                           A(2, nfreq, 6)))
    cases.append(_case(
        "signal.istft_of_stft_twosided_time_axis0",
        lambda m, x: _parts(m, fsignal.istft(m.moveaxis(fsignal.stft(
            x, nperseg=6, return_onesided=False)[2], -1, 0), input_onesided=False,
            time_axis=0, freq_axis=-1)[1]),
        _quiet(lambda x: _parts(np, scipy_signal.istft(np.moveaxis(scipy_signal.stft(
            x, nperseg=6, return_onesided=False)[2], -1, 0), input_onesided=False,
            time_axis=0, freq_axis=-1)[1])), A(3, 17)))
    for i, kw in enumerate([dict(), dict(type="constant", axis=0),
                            dict(bp=[3, 7], axis=0), dict(bp=5)]):
        cases.append(_case(f"signal.detrend_{i}", lambda m, x, kw=kw: fsignal.detrend(x, **kw),
                           lambda x, kw=kw: scipy_signal.detrend(x, **kw),
                           A(*_shape(kw, 11))))
    return cases


NUMPY_CASES = [
    *_dct_cases(),
    *_map_coordinates_cases(),
    _interpolate_case("linear", None),
    _interpolate_case("linear", 0.5),
    _interpolate_case("nearest", 0.5),
    _interpolate_case("linear", None, trailing=(2,)),
    _case("integrate.trapezoid", lambda m, y: fintegrate.trapezoid(y),
          lambda y: scipy_integrate.trapezoid(y), A(3, 5)),
    _case("integrate.trapezoid_x", lambda m, y, x: fintegrate.trapezoid(y, x),
          lambda y, x: scipy_integrate.trapezoid(y, x), A(3, 5), A(5)),
    _case("integrate.trapezoid_dx_axis0", lambda m, y: fintegrate.trapezoid(y, dx=0.5, axis=0),
          lambda y: scipy_integrate.trapezoid(y, dx=0.5, axis=0), A(4, 3)),
    _case("cluster.vq.vq_dist", lambda m, o, c: fvq.vq(o, c)[1],
          lambda o, c: scipy_vq.vq(o, c)[1], A(5, 3), A(4, 3)),
    _case("cluster.vq.vq_code", lambda m, o, c: fvq.vq(o, c)[0],
          lambda o, c: scipy_vq.vq(o, c)[0].astype(np.int64), A(5, 3), A(4, 3), diff=False),
    _case("cluster.vq.vq_1d", lambda m, o, c: fvq.vq(o, c)[1],
          lambda o, c: scipy_vq.vq(o, c)[1], A(6), A(3)),
    *_signal_cases(),
]
