"""Discrete Fourier transforms: one primitive ``fft`` over the trailing axes, as ``lax.fft``.

``fft_type`` picks the transform over the last ``len(fft_lengths)`` axes; every leading
axis is a batch of independent transforms.  All four are unnormalised in the forward
direction and divide by ``N = prod(fft_lengths)`` in the inverse one (NumPy's "backward"):

* ``FFT``:   complex -> complex, same shape.
* ``IFFT``:  its inverse.
* ``RFFT``:  real -> complex; the last axis ``n`` becomes ``n // 2 + 1`` (the other half of
  the spectrum is the conjugate of this one, so it is left out).
* ``IRFFT``: complex -> real; the last axis ``n // 2 + 1`` becomes ``n``.

Every transform is linear, so its JVP is itself on the tangent.  Transposes pair values
through ``Re(sum(ct * y))`` (no conjugation), JAX's convention:

* The DFT matrix is symmetric, so ``FFT`` and ``IFFT`` are their own transposes.
* ``IRFFT`` reads each kept bin ``k`` of its input as the pair ``k`` and ``n - k`` of the
  full spectrum, so bins other than 0 (and ``n / 2`` for even ``n``) count twice; its
  transpose is ``conj(rfft(ct)) * a / N`` with ``a`` = 2 there and 1 at those bins.
* ``RFFT`` keeps bins ``0 .. n // 2`` of the full transform; its transpose
  ``Re(fft(zero-padded ct))`` is ``N * irfft(conj(ct) / a)``: dividing by ``a`` undoes the
  doubling ``irfft`` applies.
"""
from __future__ import annotations

import enum
from typing import Sequence

import numpy as np

from functrans import backend
from functrans.core import Primitive, ShapedArray, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import batching, transpose
from functrans.primitives.elementwise import conj, mul
from functrans.primitives.shape import moveaxis

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["fft", "FftType"]


class FftType(enum.IntEnum):
    """The transform ``lax.fft`` computes (see the module docstring)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __repr__(self):  # as jaxprs print the parameter
        return f"FftType.{self.name}"


fft_p = Primitive("fft", origin="library")


def _fft_type(fft_type) -> FftType:
    try:
        if isinstance(fft_type, str):
            return FftType[fft_type.upper()]
        if isinstance(fft_type, (int, np.integer)) and not isinstance(fft_type, bool):
            return FftType(int(fft_type))
    except (KeyError, ValueError):
        pass
    raise ValueError(f"fft: fft_type must be one of {[t.name for t in FftType]} (a FftType "
                     f"or its name), got {fft_type!r}")


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64 if dtype in (np.float32, np.complex64) else np.complex128)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32 if dtype in (np.float32, np.complex64) else np.float64)


def _fft_abstract_eval(aval: ShapedArray, *, fft_type, fft_lengths):
    rank, lengths = len(fft_lengths), tuple(fft_lengths)
    if aval.ndim < rank:
        raise ValueError(f"fft: {rank} fft_lengths {lengths} need an operand of rank >= "
                         f"{rank}, got shape {aval.shape}")
    real_input = fft_type is FftType.RFFT
    if real_input and aval.dtype not in (np.float32, np.float64):
        raise TypeError(f"fft: RFFT takes a float32 or float64 operand, got {aval.dtype}; "
                        "take the real part first, or use FFT for complex input")
    if not real_input and aval.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"fft: {fft_type.name} takes a complex64 or complex128 operand, got "
                        f"{aval.dtype}; convert it with convert_element_type first")
    lead, trailing = aval.shape[:aval.ndim - rank], aval.shape[aval.ndim - rank:]
    expected = lengths
    if fft_type is FftType.IRFFT:
        expected = lengths[:-1] + (lengths[-1] // 2 + 1,)
    if trailing != expected:
        raise ValueError(f"fft: {fft_type.name} with fft_lengths {lengths} needs trailing "
                         f"axes {expected}, got an operand of shape {aval.shape}; slice or "
                         "pad the operand first")
    out = lengths
    if fft_type is FftType.RFFT:
        out = lengths[:-1] + (lengths[-1] // 2 + 1,)
    dtype = _real_dtype(aval.dtype) if fft_type is FftType.IRFFT else _complex_dtype(aval.dtype)
    return ShapedArray(lead + out, dtype)


def _fft_impl(x, *, fft_type, fft_lengths):
    xp = backend.array_module(x)
    rank = len(fft_lengths)
    axes = tuple(range(x.ndim - rank, x.ndim))
    if fft_type is FftType.FFT:
        out = xp.fft.fftn(x, axes=axes)
    elif fft_type is FftType.IFFT:
        out = xp.fft.ifftn(x, axes=axes)
    elif fft_type is FftType.RFFT:
        out = xp.fft.rfftn(x, axes=axes)
    else:
        out = xp.fft.irfftn(x, s=tuple(fft_lengths), axes=axes)
    # NumPy 2 keeps single precision; older array libraries may widen it.
    dtype = _real_dtype(x.dtype) if fft_type is FftType.IRFFT else _complex_dtype(x.dtype)
    return out.astype(dtype, copy=False)


def _bin_weights(fft_lengths, like, dtype):
    """``a`` of the module docstring along the last axis: 2 for the bins that stand for a
    conjugate pair, 1 for bin 0 and (even lengths) bin ``n / 2``."""
    n = fft_lengths[-1]
    weights = backend.full((n // 2 + 1,), 2, dtype, like=like)
    weights[0] = 1
    if n % 2 == 0:
        weights[-1] = 1
    return weights


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type in (FftType.FFT, FftType.IFFT):
        return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]
    size = int(np.prod(fft_lengths))
    dtype = get_aval(ct).dtype
    weights = _bin_weights(fft_lengths, ct, _real_dtype(dtype))
    if fft_type is FftType.RFFT:
        return [fft_p.bind(mul(conj(ct), size / weights), fft_type=FftType.IRFFT,
                           fft_lengths=fft_lengths)]
    spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    return [mul(conj(spectrum), weights / size)]


impl_rules[fft_p] = _fft_impl
abstract_eval_rules[fft_p] = _fft_abstract_eval
transpose.deflinear(fft_p, _fft_transpose)
batching.defleading_dims(fft_p, moveaxis)


def fft(x, fft_type: FftType | str, fft_lengths: int | Sequence[int]):
    """The discrete Fourier transform ``fft_type`` (``FftType`` or its name) over the last
    ``len(fft_lengths)`` axes of ``x``; see the module docstring for shapes and dtypes.

    >>> import numpy as np
    >>> from functrans.primitives.fft import fft
    >>> fft(np.array([1.0, 2.0, 3.0, 4.0]), "RFFT", (4,))
    array([10.+0.j, -2.+2.j, -2.+0.j])
    >>> fft(np.array([10.0, -2 + 2j, -2.0]), "IRFFT", (4,))
    array([1., 2., 3., 4.])
    """
    fft_type = _fft_type(fft_type)
    if isinstance(fft_lengths, (int, np.integer)):
        fft_lengths = (fft_lengths,)
    lengths = tuple(int(n) for n in fft_lengths)
    if not lengths or any(n < 1 for n in lengths):
        raise ValueError(f"fft: fft_lengths must be one or more positive lengths, got "
                         f"{tuple(fft_lengths)}")
    _fft_abstract_eval(get_aval(x), fft_type=fft_type, fft_lengths=lengths)  # eager: checks
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=lengths)
