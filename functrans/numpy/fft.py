"""``functrans.numpy.fft``: NumPy's discrete Fourier transforms, differentiable and batched.

Every transform is one ``lax.fft`` over the transformed axes (moved to the end and back),
after the input is cropped or zero-padded to the lengths ``n``/``s``; ``norm`` scales the
result.  Derivatives are those of a linear map in both modes, at every order.

>>> import numpy as np, functrans as ft, functrans.numpy as fnp
>>> fnp.fft.rfft(np.array([1.0, 2.0, 3.0, 4.0]))
array([10.+0.j, -2.+2.j, -2.+0.j])
>>> ft.grad(lambda x: fnp.fft.rfft(x)[1].real)(np.zeros(4))
array([ 1.,  0., -1.,  0.])

Differences from NumPy: no ``out=`` argument, and ``fftn``-style functions refuse an axis
listed twice (NumPy transforms it twice).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from functrans import backend, lax
from functrans.core import get_aval
from functrans.numpy._devices import device_context, like_for_device
from functrans.numpy._elementwise import true_divide
from functrans.numpy._shape import roll
from functrans.numpy._util import arg, promote_inexact
from functrans.primitives.shape import normalize_axis

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "hfft", "ihfft", "fftshift", "ifftshift", "fftfreq", "rfftfreq"]


def __dir__() -> list:
    return sorted(__all__)


_NORMS = ("backward", "ortho", "forward")


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)


def _scale(x, name: str, norm, size: int, inverse: bool):
    """``x`` scaled for ``norm``, given that ``lax.fft`` divides by ``size`` when inverse."""
    if norm is None:
        norm = "backward"
    if norm not in _NORMS:
        raise ValueError(f"{name}: norm must be one of {_NORMS} or None, got {norm!r}")
    factor = {("backward", False): 1.0, ("backward", True): 1.0,
              ("ortho", False): 1 / np.sqrt(size), ("ortho", True): np.sqrt(size),
              ("forward", False): 1 / size, ("forward", True): float(size)}[norm, inverse]
    return x if factor == 1.0 else lax.mul(x, float(factor))


def _swap_direction(name: str, norm):
    # hfft is irfft of the conjugate scaled as a forward transform; ihfft the other way.
    if norm is not None and norm not in _NORMS:
        raise ValueError(f"{name}: norm must be one of {_NORMS} or None, got {norm!r}")
    return {None: "forward", "backward": "forward", "ortho": "ortho",
            "forward": "backward"}[norm]


def _axes_and_lengths(name: str, shape: tuple, s, axes, one_axis: bool):
    """Normalized ``axes`` and the lengths ``s`` (None where not given), NumPy's rules:
    without ``axes``, the last ``len(s)`` axes, or every axis."""
    ndim = len(shape)
    if axes is None:
        axes = range(ndim - len(s), ndim) if s is not None else range(ndim)
    axes = tuple(normalize_axis(int(a), ndim, "axis" if one_axis else "axes") for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} repeat an axis; transform it once (functrans "
                         "does not support repeated axes)")
    if s is None:
        return axes, None
    s = tuple(int(n) for n in s)
    if len(s) != len(axes):
        raise ValueError(f"{name}: s {s} and axes {axes} must have the same length")
    for n in s:
        if n < 1:
            raise ValueError(f"{name}: invalid number of data points ({n}); "
                             f"{'n' if one_axis else 's'} must be positive")
    return axes, s


def _to_end(x, axes: tuple):
    ndim = len(get_aval(x).shape)
    perm = [i for i in range(ndim) if i not in axes] + list(axes)
    return lax.transpose(x, perm), perm


def _from_end(x, perm: list):
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return lax.transpose(x, inverse)


def _resize_trailing(x, lengths: tuple):
    """The trailing axes of ``x`` cropped or zero-padded to ``lengths``."""
    aval = get_aval(x)
    shape, lead = aval.shape, aval.ndim - len(lengths)
    limits = list(shape)
    config = [(0, 0, 0)] * aval.ndim
    for i, n in enumerate(lengths):
        limits[lead + i] = min(n, shape[lead + i])
        config[lead + i] = (0, max(0, n - shape[lead + i]), 0)
    if tuple(limits) != shape:
        x = lax.slice(x, (0,) * aval.ndim, limits)
    if any(c != (0, 0, 0) for c in config):
        x = lax.pad(x, aval.dtype.type(0), config)
    return x


def _operand(name: str, a, real: bool):
    x = promote_inexact(arg(a))
    dtype = get_aval(x).dtype
    if real:
        if dtype.kind == "c":
            raise TypeError(f"{name}: the input must be real, got {dtype}; take .real first, "
                            "or use the complex transform")
        return x
    target = _complex_dtype(dtype)
    return x if dtype == target else lax.convert_element_type(x, target)


def _c2c(name: str, a, s, axes, norm, inverse: bool, one_axis: bool = False):
    x = _operand(name, a, real=False)
    axes, s = _axes_and_lengths(name, get_aval(x).shape, s, axes, one_axis)
    x, perm = _to_end(x, axes)
    shape = get_aval(x).shape
    lengths = s if s is not None else shape[len(shape) - len(axes):]
    x = _resize_trailing(x, lengths)
    out = lax.fft(x, lax.FftType.IFFT if inverse else lax.FftType.FFT, lengths)
    return _from_end(_scale(out, name, norm, int(np.prod(lengths)), inverse), perm)


def _r2c(name: str, a, s, axes, norm, one_axis: bool = False):
    x = _operand(name, a, real=True)
    axes, s = _axes_and_lengths(name, get_aval(x).shape, s, axes, one_axis)
    x, perm = _to_end(x, axes)
    shape = get_aval(x).shape
    lengths = s if s is not None else shape[len(shape) - len(axes):]
    x = _resize_trailing(x, lengths)
    out = lax.fft(x, lax.FftType.RFFT, lengths)
    return _from_end(_scale(out, name, norm, int(np.prod(lengths)), False), perm)


def _c2r(name: str, a, s, axes, norm, one_axis: bool = False):
    x = _operand(name, a, real=False)
    axes, s = _axes_and_lengths(name, get_aval(x).shape, s, axes, one_axis)
    x, perm = _to_end(x, axes)
    shape = get_aval(x).shape
    if s is None:
        s = shape[len(shape) - len(axes):-1] + (2 * (shape[-1] - 1),)
        if s[-1] < 1:
            raise ValueError(f"{name}: invalid number of data points ({s[-1]}): an input of "
                             f"{shape[-1]} bin(s) along the last axis; pass "
                             f"{'n' if one_axis else 's'} explicitly")
    x = _resize_trailing(x, s[:-1] + (s[-1] // 2 + 1,))
    out = lax.fft(x, lax.FftType.IRFFT, s)
    return _from_end(_scale(out, name, norm, int(np.prod(s)), True), perm)


def _one(n) -> tuple | None:
    return None if n is None else (n,)


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The 1-D discrete Fourier transform along ``axis``, of the input cropped or
    zero-padded to ``n`` points.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.fft(np.array([1.0, 0.0, -1.0, 0.0]))
    array([0.+0.j, 2.+0.j, 0.+0.j, 2.+0.j])
    """
    return _c2c("fft", a, _one(n), (axis,), norm, inverse=False, one_axis=True)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``fft`` along ``axis`` (divided by ``n`` unless ``norm`` says not).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.ifft(np.array([0.0, 2.0, 0.0, 2.0]))
    array([ 1.+0.j,  0.+0.j, -1.+0.j,  0.+0.j])
    """
    return _c2c("ifft", a, _one(n), (axis,), norm, inverse=True, one_axis=True)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The transform of real input along ``axis``: the ``n // 2 + 1`` non-negative
    frequency terms.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.rfft(np.array([1.0, 1.0, 1.0]), n=4)
    array([3.+0.j, 0.-1.j, 1.+0.j])
    """
    return _r2c("rfft", a, _one(n), (axis,), norm, one_axis=True)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``rfft``: ``n`` real points (``2 * (m - 1)`` for ``m`` input bins by
    default) from the non-negative frequency terms along ``axis``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.irfft(np.array([3.0, -1j, 1.0]))
    array([1., 1., 1., 0.])
    """
    return _c2r("irfft", a, _one(n), (axis,), norm, one_axis=True)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The transform of a signal with Hermitian symmetry given by its first half: ``n``
    real values (``2 * (m - 1)`` by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.hfft(np.array([1.0, 2.0, 3.0]))
    array([ 8., -2.,  0., -2.])
    """
    return _c2r("hfft", lax.conj(_operand("hfft", a, real=False)), _one(n), (axis,),
                _swap_direction("hfft", norm), one_axis=True)


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``hfft``: the first ``n // 2 + 1`` terms of the Hermitian-symmetric
    spectrum of real input.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.ihfft(np.array([8.0, -2.0, 0.0, -2.0]))
    array([1.-0.j, 2.-0.j, 3.-0.j])
    """
    return lax.conj(_r2c("ihfft", a, _one(n), (axis,), _swap_direction("ihfft", norm),
                         one_axis=True))


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """The n-D discrete Fourier transform over ``axes`` (the last ``len(s)`` axes if only
    ``s`` is given, every axis if neither), of the input cropped or zero-padded to ``s``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.fftn(np.ones((2, 2)))
    array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]])
    """
    return _c2c("fftn", a, s, axes, norm, inverse=False)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of ``fftn``.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.ifftn(np.array([[4.0, 0.0], [0.0, 0.0]])).real
    array([[1., 1.],
           [1., 1.]])
    """
    return _c2c("ifftn", a, s, axes, norm, inverse=True)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The n-D transform of real input: real-to-complex along the last of ``axes`` (which
    keeps ``s[-1] // 2 + 1`` terms), complex along the others.

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.rfftn(np.ones((2, 4))).shape
    (2, 3)
    """
    return _r2c("rfftn", a, s, axes, norm)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
    """The inverse of ``rfftn``; the last of ``axes`` gets ``s[-1]`` points
    (``2 * (m - 1)`` by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.irfftn(fnp.fft.rfftn(np.eye(2, 4)))
    array([[1., 0., 0., 0.],
           [0., 1., 0., 0.]])
    """
    return _c2r("irfftn", a, s, axes, norm)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
    """``fftn`` over two axes (the last two by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.fft2(np.ones((2, 3)))[0, 0]
    array(6.+0.j)
    """
    return _c2c("fft2", a, s, axes, norm, inverse=False)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """``ifftn`` over two axes (the last two by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.ifft2(np.ones((2, 3)))[0, 0]
    array(1.+0.j)
    """
    return _c2c("ifft2", a, s, axes, norm, inverse=True)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
    """``rfftn`` over two axes (the last two by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.rfft2(np.ones((2, 5))).shape
    (2, 3)
    """
    return _r2c("rfft2", a, s, axes, norm)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
    """``irfftn`` over two axes (the last two by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.irfft2(np.ones((2, 3)), s=(2, 5)).shape
    (2, 5)
    """
    return _c2r("irfft2", a, s, axes, norm)


def _shift_axes(x, axes) -> tuple:
    ndim = len(get_aval(x).shape)
    if axes is None:
        return tuple(range(ndim))
    return (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)


def fftshift(x, axes: int | Sequence[int] | None = None):
    """Rolls the zero-frequency term to the centre of ``axes`` (all axes by default).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.fftshift(np.array([0, 1, 2, -2, -1]))
    array([-2, -1,  0,  1,  2])
    """
    x = arg(x)
    axes = _shift_axes(x, axes)
    shape = get_aval(x).shape
    return roll(x, tuple(shape[a] // 2 for a in axes), axes) if axes else x


def ifftshift(x, axes: int | Sequence[int] | None = None):
    """The inverse of ``fftshift`` (they differ for odd lengths).

    >>> import numpy as np, functrans.numpy as fnp
    >>> fnp.fft.ifftshift(np.array([-2, -1, 0, 1, 2]))
    array([ 0,  1,  2, -2, -1])
    """
    x = arg(x)
    axes = _shift_axes(x, axes)
    shape = get_aval(x).shape
    return roll(x, tuple(-(shape[a] // 2) for a in axes), axes) if axes else x


def _window_length(name: str, n) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"{name}: n must be a positive int (the window length), got {n!r}")
    return int(n)


def _frequencies(n: int, d, count: int, wrap: int, dtype, like):
    xp = backend.array_module(like)
    k = xp.arange(count)
    if wrap:
        k = xp.where(k < wrap, k, k - n)
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    out = true_divide(k.astype(dtype), d * n)
    return lax.convert_element_type(out, dtype) if get_aval(out).dtype != dtype else out


def fftfreq(n: int, d=1.0, *, dtype=None, like=None, device=None):
    """The sample frequencies of ``fft`` for ``n`` points spaced ``d`` apart: ``k / (n d)``
    for ``k`` = 0, 1, ..., then the negative ones.  On the device of ``like`` (or
    ``device``) if given.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.fftfreq(5, d=0.5)
    array([ 0. ,  0.4,  0.8, -0.8, -0.4])
    """
    n = _window_length("fftfreq", n)
    like = like_for_device("fftfreq", device, like)
    with device_context(device):
        return _frequencies(n, d, n, (n + 1) // 2, dtype, like)


def rfftfreq(n: int, d=1.0, *, dtype=None, like=None, device=None):
    """The sample frequencies of ``rfft`` for ``n`` points spaced ``d`` apart: ``k / (n d)``
    for ``k`` = 0 ... ``n // 2``.

    >>> import functrans.numpy as fnp
    >>> fnp.fft.rfftfreq(4)
    array([0.  , 0.25, 0.5 ])
    """
    n = _window_length("rfftfreq", n)
    like = like_for_device("rfftfreq", device, like)
    with device_context(device):
        return _frequencies(n, d, n // 2 + 1, 0, dtype, like)
