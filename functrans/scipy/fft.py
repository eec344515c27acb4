"""``functrans.scipy.fft``: discrete cosine transforms, as ``jax.scipy.fft`` (``dct``,
``idct``, ``dctn``, ``idctn``), built on ``functrans.numpy.fft`` so that every transform
(derivatives of any order, ``vmap``, ``jit``, CuPy arrays) applies.

All four of SciPy's types are implemented (JAX has type 2 only), with the normalisations
``None``/``"backward"`` and ``"ortho"``; results match ``scipy.fft``.  Complex input is
transformed in its real and imaginary parts.

>>> import numpy as np, functrans.scipy.fft as ffft
>>> x = np.array([1.0, 2.0, 0.0, -1.0])
>>> np.allclose(ffft.idct(ffft.dct(x)), x)
True
"""
from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

import functrans.numpy as fnp
from functrans import lax
from functrans.core import get_aval
from functrans.scipy._util import inexact

__all__ = ["dct", "idct", "dctn", "idctn"]

_NORMS = (None, "backward", "ortho")


def _check(name: str, type: int, norm) -> None:
    if type not in (1, 2, 3, 4):
        raise ValueError(f"functrans.scipy.fft.{name}: type must be 1, 2, 3 or 4, got {type!r}")
    if norm not in _NORMS:
        raise ValueError(f"functrans.scipy.fft.{name}: norm={norm!r} is not implemented; use "
                         f"None, 'backward' or 'ortho'")


def _resize_last(x, n: int | None, name: str):
    """``x`` zero-padded or cut to length ``n`` along its last axis."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"functrans.scipy.fft.{name}: n must be positive, got {n}")
    length = get_aval(x).shape[-1]
    if n < length:
        return x[..., :n]
    if n > length:
        return fnp.pad(x, [(0, 0)] * (get_aval(x).ndim - 1) + [(0, n - length)])
    return x


def _angles(x, count: int, numerator_offset: float, denominator: float):
    """``pi * (k + numerator_offset) / denominator`` for ``k = 0 .. count - 1``, in ``x``'s
    real dtype and on its device."""
    k = lax.iota(get_aval(x).dtype, count, like=x)
    return (k + numerator_offset) * (np.pi / denominator)


def _scale_first(x, first, rest):
    """``x`` times ``first`` at index 0 of its last axis and times ``rest`` elsewhere."""
    return fnp.concatenate([x[..., :1] * first, x[..., 1:] * rest], axis=-1)


def _dct2(x):
    """Unnormalised DCT-II along the last axis: ``2 sum_n x_n cos(pi k (2n + 1) / 2N)``.

    The samples are reordered (even positions, then odd ones reversed) so that the sum is
    the real part of a twiddled FFT of length N."""
    n = get_aval(x).shape[-1]
    v = fnp.concatenate([x[..., ::2], fnp.flip(x[..., 1::2], -1)], axis=-1)
    spectrum = fnp.fft.fft(v)
    theta = _angles(x, n, 0.0, 2 * n)
    return 2 * (fnp.real(spectrum) * fnp.cos(theta) + fnp.imag(spectrum) * fnp.sin(theta))


def _idct2(y):
    """The inverse of ``_dct2`` (a DCT-III divided by 2N): rebuild the FFT of the reordered
    samples from ``y_k`` and ``y_(N-k)``, invert it, and undo the reordering."""
    n = get_aval(y).shape[-1]
    mirrored = fnp.concatenate([fnp.zeros_like(y[..., :1]), fnp.flip(y[..., 1:], -1)], -1)
    theta = _angles(y, n, 0.0, 2 * n)
    c, s = fnp.cos(theta), fnp.sin(theta)
    spectrum = lax.complex((y * c + mirrored * s) / 2, (y * s - mirrored * c) / 2)
    v = fnp.real(fnp.fft.ifft(spectrum))
    half = (n + 1) // 2
    evens, odds = v[..., :half], fnp.flip(v[..., half:], -1)
    pairs = fnp.stack([evens[..., :n // 2], odds], axis=-1)
    out = fnp.reshape(pairs, get_aval(pairs).shape[:-2] + (2 * (n // 2),))
    return fnp.concatenate([out, evens[..., n // 2:]], axis=-1) if n % 2 else out


def _dct1(x):
    """Unnormalised DCT-I: the real FFT of the even extension of length 2(N - 1)."""
    n = get_aval(x).shape[-1]
    if n < 2:
        raise ValueError(f"functrans.scipy.fft.dct: type 1 needs at least 2 points along the "
                         f"axis, got {n}")
    extended = fnp.concatenate([x, fnp.flip(x[..., 1:-1], -1)], axis=-1)
    return fnp.real(fnp.fft.rfft(extended))


def _dct4(x):
    """Unnormalised DCT-IV, ``2 sum_n x_n cos(pi (2n + 1)(2k + 1) / 4N)``, as a twiddled
    FFT of length 2N of the twiddled samples."""
    n = get_aval(x).shape[-1]
    before = _angles(x, n, 0.0, 2 * n)
    twisted = lax.complex(x * fnp.cos(before), -x * fnp.sin(before))
    spectrum = fnp.fft.fft(twisted, n=2 * n)[..., :n]
    after = _angles(x, n, 0.5, 2 * n)
    return 2 * (fnp.real(spectrum) * fnp.cos(after) + fnp.imag(spectrum) * fnp.sin(after))


def _dct_last(x, type: int, ortho: bool):
    n = get_aval(x).shape[-1]
    if type == 1:
        if not ortho:
            return _dct1(x)
        r2 = math.sqrt(2.0)
        edges = fnp.concatenate([x[..., :1] * r2, x[..., 1:-1], x[..., -1:] * r2], -1)
        y = _dct1(edges) / math.sqrt(2.0 * (n - 1))
        return fnp.concatenate([y[..., :1] / r2, y[..., 1:-1], y[..., -1:] / r2], -1)
    if type == 2:
        y = _dct2(x)
        return _scale_first(y, 1 / math.sqrt(4 * n), 1 / math.sqrt(2 * n)) if ortho else y
    if type == 3:  # 2N times the inverse of type 2 (the inverse itself when orthonormal)
        if ortho:
            return _idct2(_scale_first(x, math.sqrt(4 * n), math.sqrt(2 * n)))
        return _idct2(x) * (2 * n)
    y = _dct4(x)
    return y / math.sqrt(2 * n) if ortho else y


def _idct_last(x, type: int, ortho: bool):
    n = get_aval(x).shape[-1]
    if ortho:  # the orthonormal transforms' inverses: type 2 and 3 swap, 1 and 4 are their own
        return _dct_last(x, {1: 1, 2: 3, 3: 2, 4: 4}[type], True)
    if type == 1:
        return _dct_last(x, 1, False) / (2 * (n - 1))
    if type == 2:
        return _idct2(x)
    if type == 3:
        return _dct2(x) / (2 * n)
    return _dct4(x) / (2 * n)


def _along(transform, x, type: int, n, axis: int, norm, name: str):
    _check(name, type, norm)
    x = inexact(x)
    aval = get_aval(x)
    if aval.ndim == 0:
        raise ValueError(f"functrans.scipy.fft.{name}: x must have at least one dimension, "
                         f"got shape ()")
    if not -aval.ndim <= axis < aval.ndim:
        raise ValueError(f"functrans.scipy.fft.{name}: axis {axis} is out of bounds for x of "
                         f"shape {aval.shape}")
    if aval.dtype.kind == "c":
        return lax.complex(_along(transform, fnp.real(x), type, n, axis, norm, name),
                           _along(transform, fnp.imag(x), type, n, axis, norm, name))
    moved = fnp.moveaxis(x, axis, -1)
    out = transform(_resize_last(moved, n, name), type, norm == "ortho")
    return fnp.moveaxis(out, -1, axis)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The discrete cosine transform of ``x`` along ``axis``, as ``scipy.fft.dct``: of
    ``type`` 1, 2 (the default), 3 or 4, after zero-padding or cutting ``x`` to length
    ``n``, unnormalised (``norm`` None or ``"backward"``) or orthonormal (``"ortho"``).
    Type 2 is ``y_k = 2 sum_n x_n cos(pi k (2n + 1) / 2N)``.  JAX implements type 2 only.

    >>> import numpy as np, functrans.scipy.fft as ffft
    >>> ffft.dct(np.array([1.0, 1.0, 1.0]))  # a constant is all frequency zero
    array([6., 0., 0.])
    >>> np.round(ffft.dct(np.array([1.0, 2.0, 3.0]), norm="ortho"), 6) + 0.0
    array([ 3.464102, -1.414214,  0.      ])
    """
    return _along(_dct_last, x, type, n, axis, norm, "dct")


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``dct(x, type, n, axis, norm)``, as ``scipy.fft.idct``: for type 2 it
    is the type-3 transform divided by ``2N`` (unnormalised) or the orthonormal type 3.

    >>> import numpy as np, functrans.scipy.fft as ffft
    >>> ffft.idct(np.array([6.0, 0.0, 0.0]))
    array([1., 1., 1.])
    """
    return _along(_idct_last, x, type, n, axis, norm, "idct")


def _axes_and_lengths(x, s, axes, name: str):
    ndim = get_aval(x).ndim
    if s is not None:
        s = [operator.index(s)] if np.ndim(s) == 0 else [operator.index(v) for v in s]
        if len(s) > ndim:
            raise ValueError(f"functrans.scipy.fft.{name}: s must have at most x.ndim ({ndim}) "
                             f"entries, got {len(s)}")
    if axes is None:
        axes = list(range(ndim - len(s), ndim)) if s is not None else list(range(ndim))
    else:
        axes = [operator.index(axes)] if np.ndim(axes) == 0 else [operator.index(a)
                                                                 for a in axes]
    if s is not None and len(s) != len(axes):
        raise ValueError(f"functrans.scipy.fft.{name}: s and axes must have the same length, "
                         f"got {len(s)} and {len(axes)}")
    return axes, (s if s is not None else [None] * len(axes))


def dctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
    """The multidimensional discrete cosine transform: ``dct`` along each of ``axes`` (the
    last ``len(s)`` axes if only ``s`` is given, all axes if neither), after zero-padding
    or cutting to the lengths ``s``.  As ``scipy.fft.dctn``.

    >>> import numpy as np, functrans.scipy.fft as ffft
    >>> ffft.dctn(np.ones((2, 2)))
    array([[16.,  0.],
           [ 0.,  0.]])
    """
    x = inexact(x)
    for axis, n in zip(*_axes_and_lengths(x, s, axes, "dctn")):
        x = _along(_dct_last, x, type, n, axis, norm, "dctn")
    return x


def idctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of ``dctn``: ``idct`` along each of ``axes``, as ``scipy.fft.idctn``.

    >>> import numpy as np, functrans.scipy.fft as ffft
    >>> ffft.idctn(np.array([[16.0, 0.0], [0.0, 0.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    x = inexact(x)
    for axis, n in zip(*_axes_and_lengths(x, s, axes, "idctn")):
        x = _along(_idct_last, x, type, n, axis, norm, "idctn")
    return x
