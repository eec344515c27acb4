"""Spectral analysis for ``functrans.scipy.signal``: ``detrend``, ``stft``, ``istft``,
``csd`` and ``welch``, with ``jax.scipy.signal``'s signatures, built on
``functrans.numpy.fft`` (so derivatives, ``vmap``, ``jit`` and CuPy arrays apply).

Segments are cut without a gather: the signal is reshaped into blocks of one hop each, and
a segment is ``ceil(nperseg / hop)`` consecutive blocks; overlap-add is the same in
reverse.  So a transform costs a few reshapes and slices, whatever the signal's length.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Callable

import numpy as np

import functrans.numpy as fnp
from functrans import backend, lax
from functrans.core import Tracer, get_aval
from functrans.scipy._util import inexact, inexact_all

__all__ = ["detrend", "stft", "istft", "csd", "welch"]


def _shape(x) -> tuple:
    return get_aval(x).shape


def _real_dtype(x) -> np.dtype:
    return np.finfo(get_aval(x).dtype).dtype


def _like(x):
    """``x`` as a ``like=`` argument for constants: its device when it is concrete."""
    return None if isinstance(x, Tracer) else x


def _canonical_axis(axis, ndim: int, name: str, what: str = "axis") -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: {what} {axis} is out of bounds for an array of "
                         f"{ndim} dimensions")
    return axis % ndim


# ------------------------------------------------------------------------------------------
# detrend
# ------------------------------------------------------------------------------------------


def _line_residual(y):
    """``y`` minus its least-squares straight line, along the last axis."""
    n = _shape(y)[-1]
    if n < 3:  # a line through one or two points fits them exactly
        return y - y
    t = lax.iota(_real_dtype(y), n, like=y) - (n - 1) / 2
    centred = y - fnp.mean(y, axis=-1, keepdims=True)
    slope = fnp.sum(centred * t, axis=-1, keepdims=True) / float(np.sum(
        (np.arange(n) - (n - 1) / 2) ** 2))
    return centred - slope * t


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """``data`` less its trend along ``axis``, as ``scipy.signal.detrend``: the mean
    (``type="constant"``) or the least-squares line (``"linear"``), fitted separately
    between the breakpoints ``bp`` (indices along ``axis``).  ``overwrite_data`` is not
    supported, as in JAX.

    >>> import numpy as np, functrans.scipy.signal as signal
    >>> data = np.array([1.0, 4.0, 8.0, 8.0, 9.0])
    >>> np.round(signal.detrend(data), 6) + 0.0  # the line 2 + 2 t removed
    array([-1.,  0.,  2.,  0., -1.])
    >>> signal.detrend(data, type="constant")
    array([-5., -2.,  2.,  2.,  3.])
    """
    if overwrite_data is not None:
        raise NotImplementedError("detrend: overwrite_data is not supported")
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}")
    data = inexact(data)
    shape = _shape(data)
    axis = _canonical_axis(axis, len(shape), "detrend")
    if type in ("constant", "c"):
        return data - fnp.mean(data, axis=axis, keepdims=True)
    n = shape[axis]
    breaks = np.unique(np.concatenate([[0], np.atleast_1d(np.asarray(bp, dtype=np.int64)),
                                       [n]]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}] (the length of data "
                         f"along axis {axis}), got bp={bp!r}")
    moved = fnp.moveaxis(data, axis, -1)
    pieces = [_line_residual(moved[..., int(a):int(b)]) for a, b in zip(breaks[:-1],
                                                                         breaks[1:])]
    out = pieces[0] if len(pieces) == 1 else fnp.concatenate(pieces, axis=-1)
    return fnp.moveaxis(out, -1, axis)


# ------------------------------------------------------------------------------------------
# Segments, windows and extensions
# ------------------------------------------------------------------------------------------


def _segments(x, nperseg: int, hop: int):
    """The segments ``x[..., i*hop : i*hop + nperseg]`` of the last axis, stacked:
    ``(..., nseg, nperseg)``."""
    length = _shape(x)[-1]
    nseg = (length - nperseg) // hop + 1
    blocks_per_segment = -(-nperseg // hop)
    nblocks = nseg + blocks_per_segment - 1
    needed = nblocks * hop
    if needed > length:
        x = fnp.pad(x, [(0, 0)] * (len(_shape(x)) - 1) + [(0, needed - length)])
    blocks = fnp.reshape(x[..., :needed], _shape(x)[:-1] + (nblocks, hop))
    if blocks_per_segment == 1:
        return blocks[..., :nseg, :nperseg]
    joined = fnp.concatenate([blocks[..., j:j + nseg, :] for j in range(blocks_per_segment)],
                             axis=-1)
    return joined[..., :nperseg]


def _overlap_add(frames, hop: int):
    """The sum of the segments ``frames`` (``(..., nseg, nperseg)``) placed ``hop`` apart:
    ``(..., (nseg - 1) * hop + nperseg)``; the transpose of ``_segments``."""
    *batch, nseg, nperseg = _shape(frames)
    blocks_per_segment = -(-nperseg // hop)
    width = blocks_per_segment * hop
    frames = fnp.pad(frames, [(0, 0)] * (len(batch) + 1) + [(0, width - nperseg)])
    blocks = fnp.reshape(frames, tuple(batch) + (nseg, blocks_per_segment, hop))
    nblocks = nseg + blocks_per_segment - 1
    total = None
    for j in range(blocks_per_segment):
        placed = fnp.pad(blocks[..., j, :], [(0, 0)] * len(batch)
                         + [(j, nblocks - nseg - j), (0, 0)])
        total = placed if total is None else total + placed
    flat = fnp.reshape(total, tuple(batch) + (nblocks * hop,))
    return flat[..., :(nseg - 1) * hop + nperseg]


def _hann(n: int, like, dtype):
    """The periodic Hann window, ``sin(pi k / n)**2``, computed on ``like``'s device."""
    if n == 1:
        return fnp.ones((1,), dtype) + lax.zeros_like(lax.iota(dtype, 1, like=like))
    k = lax.iota(dtype, n, like=like)
    return fnp.sin(k * (np.pi / n)) ** 2


def _named_window(window, n: int, like, dtype, name: str):
    if isinstance(window, str) and window in ("hann", "hanning"):
        return _hann(n, like, dtype)
    try:
        from scipy.signal import get_window
    except ImportError as error:  # pragma: no cover - SciPy is a test dependency
        raise ImportError(f"{name}: window={window!r} needs SciPy's get_window (pip install "
                          f"scipy), or pass the window as an array") from error
    values = get_window(window, n)
    return backend.asarray(values, dtype, like=_like(like))


def _window_and_length(window, nperseg, length: int, x, dtype, name: str):
    """The window array and the segment length, as SciPy's ``_triage_segments``."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else operator.index(nperseg)
        if n > length:
            warnings.warn(f"{name}: nperseg = {n} is greater than the input length = "
                          f"{length}, using nperseg = {length}", stacklevel=3)
            n = length
        if n < 1:
            raise ValueError(f"{name}: nperseg must be a positive integer, got {n}")
        return _named_window(window, n, x, dtype, name), n
    win = fnp.asarray(window)
    if get_aval(win).dtype.kind != "c":  # a complex window makes complex segments
        win = fnp.asarray(win, dtype)
    if len(_shape(win)) != 1:
        raise ValueError(f"{name}: window must be 1-D, got shape {_shape(win)}")
    n = _shape(win)[0] if nperseg is None else operator.index(nperseg)
    if length < _shape(win)[0]:
        raise ValueError(f"{name}: the window (length {_shape(win)[0]}) is longer than the "
                         f"input signal (length {length})")
    if n != _shape(win)[0]:
        raise ValueError(f"{name}: nperseg = {n} differs from the length of the window, "
                         f"{_shape(win)[0]}")
    return win, n


def _extend(x, n: int, boundary, name: str):
    """``x`` extended by ``n`` points at each end of its last axis."""
    if boundary is None or n < 1:
        return x
    first, last = x[..., :1], x[..., -1:]
    if boundary == "zeros":
        return fnp.pad(x, [(0, 0)] * (len(_shape(x)) - 1) + [(n, n)])
    if boundary == "constant":
        return fnp.concatenate([fnp.repeat(first, n, axis=-1), x,
                                fnp.repeat(last, n, axis=-1)], axis=-1)
    if n > _shape(x)[-1] - 1:
        raise ValueError(f"{name}: the {boundary} extension by {n} points needs at least "
                         f"{n + 1} points along the axis, got {_shape(x)[-1]}")
    left = fnp.flip(x[..., 1:n + 1], -1)
    right = fnp.flip(x[..., -n - 1:-1], -1)
    if boundary == "even":
        return fnp.concatenate([left, x, right], axis=-1)
    return fnp.concatenate([2 * first - left, x, 2 * last - right], axis=-1)  # "odd"


_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _detrend_function(detrend_type, axis: int, ndim: int) -> Callable:
    if callable(detrend_type):
        if axis == ndim - 1:
            return detrend_type
        # the user's function sees segments along the original axis, as in SciPy
        return lambda d: fnp.moveaxis(detrend_type(fnp.moveaxis(d, -1, axis)), axis, -1)
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"unsupported detrend {detrend_type!r}: use False, 'constant', "
                     f"'linear' or a function")


def _spectrum(x, win, detrend_function, nperseg: int, hop: int, nfft: int, onesided: bool):
    """The windowed FFT of every segment: ``(..., nseg, nfreq)``."""
    segments = detrend_function(_segments(x, nperseg, hop))
    if get_aval(win).dtype.kind == "c" and get_aval(segments).dtype.kind != "c":
        segments = lax.complex(segments, fnp.zeros_like(segments))
    segments = win * segments
    if onesided:
        return fnp.fft.rfft(fnp.real(segments), n=nfft)
    return fnp.fft.fft(segments, n=nfft)


def _onesided_doubling(result, nfft: int):
    """``result`` with every frequency but zero (and Nyquist, for even ``nfft``) doubled."""
    nfreq = _shape(result)[-1]
    k = lax.iota(np.int64, nfreq, like=result)
    last = nfreq if nfft % 2 else nfreq - 1
    factor = fnp.where((k > 0) & (k < last), 2.0, 1.0)
    return result * fnp.asarray(factor, _real_dtype(result))


def _spectral_helper(name, x, y, fs, window, nperseg, noverlap, nfft, detrend_type,
                     return_onesided, scaling, axis, mode, boundary=None, padded=False):
    """Frequencies, segment times and the per-segment spectra (``mode="stft"``) or
    (cross) periodograms (``mode="psd"``), as SciPy's private helper of the same name;
    ``y`` None means the auto-spectrum of ``x``."""
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{name}: unknown boundary option {boundary!r}; use one of "
                         f"{list(_BOUNDARIES)}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{name}: unknown scaling {scaling!r}; use 'density' or 'spectrum'")
    if y is None:
        x = inexact(x)
    else:
        x, y = inexact_all(x, y)
        if len(_shape(x)) != len(_shape(y)):
            raise ValueError(f"{name}: x and y must have the same number of dimensions, got "
                             f"shapes {_shape(x)} and {_shape(y)}")
    ndim = len(_shape(x))
    axis = _canonical_axis(axis, ndim, name)
    dtype = get_aval(x).dtype
    complex_dtype = np.result_type(dtype, np.complex64)
    real_dtype = np.finfo(complex_dtype).dtype
    x = fnp.moveaxis(x, axis, -1)
    if y is not None:
        y = fnp.moveaxis(y, axis, -1)
        lx, ly = _shape(x)[-1], _shape(y)[-1]
        if lx < ly:
            x = fnp.pad(x, [(0, 0)] * (ndim - 1) + [(0, ly - lx)])
        elif ly < lx:
            y = fnp.pad(y, [(0, 0)] * (ndim - 1) + [(0, lx - ly)])
        try:
            np.broadcast_shapes(_shape(x)[:-1], _shape(y)[:-1])
        except ValueError:
            raise ValueError(f"{name}: x and y cannot be broadcast together (shapes "
                             f"{_shape(x)} and {_shape(y)} with the axis moved last)") from None
    length = _shape(x)[-1]
    if length == 0:
        raise ValueError(f"{name}: the input is empty along axis {axis}")
    win, nperseg = _window_and_length(window, nperseg, length, x, real_dtype, name)
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    nfft = nperseg if nfft is None else operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"{name}: nfft = {nfft} must be greater than or equal to "
                         f"nperseg = {nperseg}")
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"{name}: noverlap = {noverlap} must be in [0, nperseg = {nperseg})")
    hop = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary, name)
        if y is not None:
            y = _extend(y, nperseg // 2, boundary, name)
    if padded:
        extra = (-(_shape(x)[-1] - nperseg) % hop) % nperseg
        if extra:
            x = fnp.pad(x, [(0, 0)] * (ndim - 1) + [(0, extra)])
            if y is not None:
                y = fnp.pad(y, [(0, 0)] * (ndim - 1) + [(0, extra)])
    if _shape(x)[-1] < nperseg:
        raise ValueError(f"{name}: the input (length {_shape(x)[-1]} after extension) is "
                         f"shorter than nperseg = {nperseg}")
    detrend_function = _detrend_function(detrend_type, axis, ndim)
    if scaling == "density":
        scale = 1.0 / (fs * fnp.sum(win * win))
    else:
        scale = 1.0 / fnp.sum(win) ** 2
    if mode == "stft":
        scale = fnp.sqrt(scale)
    onesided = bool(return_onesided)
    if onesided and (get_aval(x).dtype.kind == "c"
                     or (y is not None and get_aval(y).dtype.kind == "c")):
        warnings.warn(f"{name}: the input is complex; returning a two-sided spectrum "
                      f"(return_onesided=False)", stacklevel=3)
        onesided = False
    like = _like(x)
    if onesided:
        freqs = fnp.fft.rfftfreq(nfft, 1.0, dtype=real_dtype, like=like) * fs
    else:
        freqs = fnp.fft.fftfreq(nfft, 1.0, dtype=real_dtype, like=like) * fs
    result = _spectrum(x, win, detrend_function, nperseg, hop, nfft, onesided)
    if y is not None:
        result = fnp.conj(result) * _spectrum(y, win, detrend_function, nperseg, hop, nfft,
                                              onesided)
    elif mode == "psd":
        result = fnp.conj(result) * result
    result = result * fnp.asarray(scale, real_dtype)
    if onesided and mode == "psd":
        result = _onesided_doubling(result, nfft)
    # segment centres, made on the device: nperseg / 2 + hop k (less the extension)
    count = len(range(0, _shape(x)[-1] - nperseg + 1, hop))
    first = 0.0 if boundary is not None else nperseg / 2
    time = (lax.iota(real_dtype, count, like=x) * hop + first) / fs
    result = fnp.asarray(result, complex_dtype)
    if y is None and mode != "stft":
        result = fnp.real(result)
    return (fnp.asarray(freqs, real_dtype), fnp.asarray(time, real_dtype),
            fnp.moveaxis(result, -1, axis))


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend=False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):
    """The short-time Fourier transform of ``x`` along ``axis``, as ``scipy.signal.stft``:
    ``(f, t, Zxx)`` with the frequencies, the segment times and the spectra of the windowed
    segments (frequencies at ``axis``, segments last; ``'spectrum'`` scaling, so a sine of
    amplitude ``a`` shows as ``a / 2``).

    ``window`` is a name (``"hann"``, the default, is computed here; other names need
    SciPy's ``get_window``), a ``(name, parameter)`` tuple or an array; ``nperseg``
    (default 256, at most the signal's length) is the segment length, ``noverlap``
    (default ``nperseg // 2``) the overlap, ``nfft`` the FFT length.  ``detrend`` is False,
    ``"constant"``, ``"linear"`` or a function of a segment.  ``boundary`` extends the
    signal by ``nperseg // 2`` points at each end (``"zeros"``, ``"even"``, ``"odd"``,
    ``"constant"`` or None) and ``padded`` zero-pads its end to a whole number of hops.

    >>> import numpy as np, functrans.scipy.signal as signal
    >>> f, t, Z = signal.stft(np.ones(8), nperseg=4)
    >>> Z.shape, t
    ((3, 5), array([0., 2., 4., 6., 8.]))
    >>> np.abs(Z[0])  # frequency zero: the windowed mean (the ends are zero-extended)
    array([0.75, 1.  , 1.  , 1.  , 0.25])
    """
    return _spectral_helper("stft", x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, "spectrum", axis, "stft", boundary, padded)


def csd(x, y, fs=1.0, window="hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend="constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean"):
    """The cross power spectral density of ``x`` and ``y`` by Welch's method, as
    ``scipy.signal.csd``: ``(f, Pxy)``, the average (``average="mean"`` or ``"median"``)
    over segments of ``conj(X) Y``, scaled as a density (``scaling="density"``, per unit of
    ``fs``) or a power spectrum (``"spectrum"``).  ``nperseg`` defaults to the signal's
    length here (JAX's default; SciPy's is 256); the other arguments are ``stft``'s.
    ``y=None`` gives the (real) power spectral density of ``x``, as ``welch``; otherwise the
    result is complex, as JAX's.

    >>> import numpy as np, functrans.scipy.signal as signal
    >>> x = np.array([1.0, 2.0, 0.0, -1.0, 3.0, 1.0, 0.0, 2.0])
    >>> f, p = signal.csd(x, x, nperseg=4)
    >>> p.dtype, np.allclose(p.real, signal.welch(x, nperseg=4)[1])
    (dtype('complex128'), True)
    """
    if average not in ("mean", "median"):
        raise ValueError(f"csd: average must be 'mean' or 'median', got {average!r}")
    freqs, _, pxy = _spectral_helper("csd", x, y, fs, window, nperseg, noverlap, nfft,
                                     detrend, return_onesided, scaling, axis, "psd")
    if y is not None and get_aval(pxy).dtype.kind != "c":
        pxy = lax.complex(pxy, fnp.zeros_like(pxy))
    shape = _shape(pxy)
    if len(shape) >= 2 and math.prod(shape) > 0:
        if shape[-1] > 1:
            if average == "median":
                nseg = shape[-1]
                bias = 1.0 + sum(1.0 / (k + 1) - 1.0 / k for k in range(2, nseg, 2))
                if get_aval(pxy).dtype.kind == "c":
                    pxy = lax.complex(fnp.median(fnp.real(pxy), axis=-1),
                                      fnp.median(fnp.imag(pxy), axis=-1))
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / bias
            else:
                pxy = fnp.mean(pxy, axis=-1)
        else:
            pxy = fnp.reshape(pxy, shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend="constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean"):
    """The power spectral density of ``x`` by Welch's method (the average of the modified
    periodograms of overlapping windowed segments), as ``scipy.signal.welch``: ``(f, Pxx)``.
    The arguments are ``csd``'s; ``nperseg`` defaults to the signal's length, as in JAX.

    >>> import numpy as np, functrans.scipy.signal as signal
    >>> f, p = signal.welch(np.array([1.0, -1.0] * 8), nperseg=8, window="boxcar")
    >>> float(f[np.argmax(p)])  # all the power at the Nyquist frequency
    0.5
    """
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling, axis, average)
    return freqs, fnp.real(pxx)


def istft(Zxx, fs=1.0, window="hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2):
    """The inverse short-time Fourier transform, as ``scipy.signal.istft``: ``(t, x)`` from
    the spectra ``Zxx`` of ``stft`` (with the same ``window``, ``nperseg``, ``noverlap``,
    ``nfft``), by weighted overlap-add.  ``nperseg`` defaults to ``2 (nfreq - 1)`` for
    one-sided input (``nfreq`` two-sided), ``noverlap`` to ``nperseg // 2``; ``boundary``
    removes the ``nperseg // 2`` points that ``stft``'s extension added at each end.  ``t``
    has one time per output sample along the time axis (SciPy and JAX count the first axis
    of ``x`` instead, which differs for batched input).

    >>> import numpy as np, functrans.scipy.signal as signal
    >>> x = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0])
    >>> _, _, Z = signal.stft(x, nperseg=4)
    >>> t, back = signal.istft(Z, nperseg=4)
    >>> np.round(back, 6) + 0.0
    array([1., 2., 3., 2., 1., 0., 1., 2.])
    """
    Zxx = inexact(Zxx)
    shape = _shape(Zxx)
    if len(shape) < 2:
        raise ValueError(f"istft: Zxx must be at least 2-D, got shape {shape}")
    freq_axis = _canonical_axis(freq_axis, len(shape), "istft", "freq_axis")
    time_axis = _canonical_axis(time_axis, len(shape), "istft", "time_axis")
    if freq_axis == time_axis:
        raise ValueError(f"istft: time_axis and freq_axis must differ, both are {time_axis}")
    if get_aval(Zxx).dtype.kind != "c":
        Zxx = lax.complex(Zxx, fnp.zeros_like(Zxx))
    nfreq = shape[freq_axis]
    default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = default if nperseg is None else operator.index(nperseg)
    if nperseg < 1:
        raise ValueError(f"istft: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft = default + 1 if input_onesided and nperseg == default + 1 else default
    else:
        nfft = operator.index(nfft)
    if nfft < nperseg:
        raise ValueError(f"istft: the FFT length nfft = {nfft} must be at least nperseg = "
                         f"{nperseg}")
    noverlap = nperseg // 2 if noverlap is None else operator.index(noverlap)
    if not 0 <= noverlap < nperseg:
        raise ValueError(f"istft: noverlap = {noverlap} must be in [0, nperseg = {nperseg})")
    hop = nperseg - noverlap
    others = [a for a in range(len(shape)) if a not in (time_axis, freq_axis)]
    Zxx = fnp.transpose(Zxx, others + [time_axis, freq_axis])  # (..., time, freq)
    if input_onesided:
        segments = fnp.fft.irfft(Zxx, n=nfft, axis=-1)[..., :nperseg]
    else:
        segments = fnp.fft.ifft(Zxx, n=nfft, axis=-1)[..., :nperseg]
    real_dtype = _real_dtype(segments)
    if isinstance(window, (str, tuple)):
        win = _named_window(window, nperseg, segments, real_dtype, "istft")
    else:
        win = fnp.asarray(window)
        if _shape(win) != (nperseg,):
            raise ValueError(f"istft: window must be 1-D of length nperseg = {nperseg}, got "
                             f"shape {_shape(win)}")
        win = fnp.asarray(win, real_dtype if get_aval(win).dtype.kind != "c"
                          else get_aval(segments).dtype)
    segments = segments * fnp.sum(win)  # undoes stft's 'spectrum' scaling
    nseg = _shape(segments)[-2]
    x = _overlap_add(segments * win, hop)
    norm = _overlap_add(fnp.broadcast_to(win * win, (nseg, nperseg)), hop)
    if boundary:
        cut = nperseg // 2
        x = x[..., cut:_shape(x)[-1] - cut]
        norm = norm[..., cut:_shape(norm)[-1] - cut]
    x = x / fnp.where(norm > 1e-10, norm, fnp.ones_like(norm))
    time_position = len(_shape(x)) - 1
    if len(_shape(x)) > 1 and time_axis != len(shape) - 1:
        time_position = time_axis - 1 if freq_axis < time_axis else time_axis
        x = fnp.moveaxis(x, -1, time_position)
    time = backend.arange(_shape(x)[time_position], dtype=_real_dtype(x), like=_like(x))
    return fnp.asarray(time) / fs, x

