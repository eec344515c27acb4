"""``functrans.scipy.signal``: signal processing, as ``jax.scipy.signal``, differentiable:
the convolutions ``convolve``, ``correlate``, ``convolve2d``, ``correlate2d`` and
``fftconvolve``, and spectral analysis (``stft``, ``istft``, ``welch``, ``csd``,
``detrend``, in ``_spectral``, built on ``functrans.numpy.fft``).

The direct methods are one ``lax.conv_general_dilated`` each (the arrays as one batch
member with one feature, the kernel reversed for a convolution), so they differentiate,
batch and compile as that primitive does; ``fftconvolve`` (and ``method="fft"``) multiplies
real or complex FFTs.  Modes follow SciPy: "full" keeps every overlap, "same" the part of
it centred on ``in1``'s shape, "valid" the positions where one array covers the other
entirely (the inputs are swapped when ``in2`` is the larger one, as SciPy does).
"""
from __future__ import annotations

import numpy as np

import functrans.numpy as fnp
from functrans import core, lax
from functrans.core import get_aval
from functrans.scipy._spectral import csd, detrend, istft, stft, welch

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "csd",
           "detrend", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def _operands(name: str, in1, in2, ndim: int | None = None):
    in1, in2 = fnp.asarray(in1), fnp.asarray(in2)
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    if len(s1) != len(s2):
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions, got "
                         f"shapes {s1} and {s2}")
    if ndim is not None and len(s1) != ndim:
        raise ValueError(f"{name}: in1 and in2 must be {ndim}-D arrays, got shapes {s1} and "
                         f"{s2}")
    if 0 in s1 or 0 in s2:
        raise ValueError(f"{name}: in1 and in2 must not be empty, got shapes {s1} and {s2}")
    dtype, weak = core.result_type(get_aval(in1), get_aval(in2))
    if dtype == np.bool_:
        dtype = np.dtype(np.int64)
    in1, in2 = (x if get_aval(x).dtype == dtype else lax.convert_element_type(x, dtype, weak)
                for x in (in1, in2))
    return in1, in2


def _check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def _swap_for_valid(name: str, mode: str, s1, s2) -> bool:
    """SciPy's rule: in "valid" mode one input must be at least as large as the other
    along every axis; the inputs swap when it is ``in2``."""
    if mode != "valid":
        return False
    if all(a >= b for a, b in zip(s1, s2)):
        return False
    if all(b >= a for a, b in zip(s1, s2)):
        return True
    raise ValueError(f"{name}: in 'valid' mode one input must be at least as large as the "
                     f"other in every dimension, got shapes {s1} and {s2}")


def _direct(name: str, in1, in2, mode: str, late: bool = False):
    """The convolution of two N-d arrays by one ``conv_general_dilated`` (a correlation
    with the reversed kernel); ``late``: "same" keeps ``full[k // 2:][:n]`` instead, as
    SciPy's ``correlate2d`` does."""
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    in2 = lax.rev(in2, tuple(range(len(s2))))
    pads = []
    for n, k in zip(s1, s2):
        if mode == "full":
            pads.append((k - 1, k - 1))
        elif mode == "same":  # SciPy keeps full[(k - 1) // 2:][:n]
            start = k // 2 if late else (k - 1) // 2
            pads.append((k - 1 - start, start))
        else:
            pads.append((0, 0))
    lhs = fnp.reshape(in1, (1, 1) + s1)
    rhs = fnp.reshape(in2, (1, 1) + s2)
    out = lax.conv_general_dilated(lhs, rhs, (1,) * len(s1), pads)
    return fnp.reshape(out, get_aval(out).shape[2:])


def _convolve(name: str, in1, in2, mode: str, method: str, correlation: bool,
              late: bool = False):
    _check_mode(name, mode)
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")
    in1, in2 = _operands(name, in1, in2)
    if correlation:  # a convolution with the reversed conjugate of in2, in every mode
        if get_aval(in2).dtype.kind == "c":
            in2 = lax.conj(in2)
        in2 = lax.rev(in2, tuple(range(fnp.ndim(in2))))
    if _swap_for_valid(name, mode, get_aval(in1).shape, get_aval(in2).shape):
        in1, in2 = in2, in1
    if method == "fft":
        return fftconvolve(in1, in2, mode)
    return _direct(name, in1, in2, mode, late)


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-d convolution of ``in1`` and ``in2`` (arrays of equal rank), as
    ``scipy.signal.convolve``: ``out[y] = sum_k in1[y - k] in2[k]`` over the positions kept
    by ``mode`` ("full", "same" or "valid").  ``method`` "auto" and "direct" compute it as
    one ``lax.conv_general_dilated``, "fft" with ``fftconvolve``; ``precision`` is accepted
    for JAX's sake.

    >>> import numpy as np
    >>> from functrans.scipy import signal
    >>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    >>> signal.convolve(np.ones((3, 3)), np.ones((2, 2)), mode="valid")
    array([[4., 4.],
           [4., 4.]])
    """
    return _convolve("convolve", in1, in2, mode, method, correlation=False)


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """The N-d cross-correlation of ``in1`` and ``in2``, as ``scipy.signal.correlate``:
    ``out[k] = sum_n in1[n + k] conj(in2[n])`` (positions counted as SciPy does for each
    ``mode``).

    >>> import numpy as np
    >>> from functrans.scipy import signal
    >>> signal.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    return _convolve("correlate", in1, in2, mode, method, correlation=True)


def _check_boundary(name: str, boundary: str, fillvalue) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is "
                                  f"supported (as in JAX), got boundary={boundary!r}, "
                                  f"fillvalue={fillvalue!r}")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """The 2-D convolution, as ``scipy.signal.convolve2d`` with zero fill (the only
    boundary JAX offers too).

    >>> import numpy as np
    >>> from functrans.scipy import signal
    >>> signal.convolve2d(np.eye(3), np.array([[1.0, -1.0]]), mode="same")
    array([[ 1., -1.,  0.],
           [ 0.,  1., -1.],
           [ 0.,  0.,  1.]])
    """
    _check_boundary("convolve2d", boundary, fillvalue)
    _operands("convolve2d", in1, in2, ndim=2)
    return _convolve("convolve2d", in1, in2, mode, "direct", correlation=False)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """The 2-D cross-correlation, as ``scipy.signal.correlate2d`` with zero fill.

    >>> import numpy as np
    >>> from functrans.scipy import signal
    >>> signal.correlate2d(np.eye(3), np.array([[1.0, -1.0]]), mode="valid")
    array([[ 1.,  0.],
           [-1.,  1.],
           [ 0., -1.]])
    """
    _check_boundary("correlate2d", boundary, fillvalue)
    a, b = _operands("correlate2d", in1, in2, ndim=2)
    out = _convolve("correlate2d", a, b, mode, "direct", correlation=True, late=True)
    if (get_aval(out).dtype.kind == "c"
            and _swap_for_valid("correlate2d", mode, get_aval(a).shape, get_aval(b).shape)):
        out = lax.conj(out)  # SciPy reverses the swapped correlation without conjugating
    return out


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """The convolution of ``in1`` and ``in2`` by FFTs, as ``scipy.signal.fftconvolve``:
    along ``axes`` (all by default) the arrays are convolved, along the others they
    broadcast.  Real inputs use real FFTs.

    >>> import numpy as np
    >>> from functrans.scipy import signal
    >>> np.round(signal.fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5])), 12)
    array([1. , 2.5, 4. , 1.5])
    >>> signal.fftconvolve(np.ones((2, 4)), np.ones((1, 2)), mode="valid", axes=1).shape
    (2, 3)
    """
    name = "fftconvolve"
    _check_mode(name, mode)
    in1, in2 = _operands(name, in1, in2)
    dtype = get_aval(in1).dtype
    if not core.is_inexact(dtype):
        in1, in2 = (lax.convert_element_type(x, np.float64) for x in (in1, in2))
    s1, s2 = get_aval(in1).shape, get_aval(in2).shape
    nd = len(s1)
    if axes is None:
        axes = tuple(range(nd))
    else:
        axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
        axes = tuple(sorted({int(a) % nd if -nd <= int(a) < nd else _bad_axis(a, nd)
                             for a in axes}))
    for d in range(nd):
        if d not in axes and s1[d] != s2[d] and 1 not in (s1[d], s2[d]):
            raise ValueError(f"{name}: in1 and in2 must have equal or broadcastable sizes "
                             f"along the axes not convolved, got shapes {s1} and {s2}")
    if not axes:
        return in1 * in2
    if _swap_for_valid(name, mode, [s1[a] for a in axes], [s2[a] for a in axes]):
        in1, in2, s1, s2 = in2, in1, s2, s1
    lengths = [s1[a] + s2[a] - 1 for a in axes]
    if get_aval(in1).dtype.kind == "c":
        spectrum = (fnp.fft.fftn(in1, lengths, axes) * fnp.fft.fftn(in2, lengths, axes))
        full = fnp.fft.ifftn(spectrum, lengths, axes)
    else:
        spectrum = (fnp.fft.rfftn(in1, lengths, axes) * fnp.fft.rfftn(in2, lengths, axes))
        full = fnp.fft.irfftn(spectrum, lengths, axes)
    if mode == "full":
        return full
    starts = [0] * nd
    limits = list(get_aval(full).shape)
    for a, n in zip(axes, lengths):
        size = s1[a] if mode == "same" else s1[a] - s2[a] + 1
        starts[a] = (n - size) // 2
        limits[a] = starts[a] + size
    return lax.slice(full, starts, limits)


def _bad_axis(axis, nd):
    raise ValueError(f"fftconvolve: axis {axis} is out of bounds for arrays of {nd} "
                     "dimensions")
