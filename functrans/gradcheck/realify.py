"""Realification: complex values as pairs of real coordinates (the real parts, then the
imaginary parts), random directions over those coordinates, and symbolic zeros.

Random directions are drawn on the device of the values they go with; only ``realify``
and ``pairing``, which produce host numbers for comparisons and reports, copy to the host,
explicitly, with ``backend.to_host``.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from functrans import backend, core
from functrans.core import get_aval
from functrans.interpreters import ad
from functrans.primitives.conversion import zeros_like

__all__ = ["is_complex", "real_size", "realify", "coordinate_label", "pairing", "l1_norm",
           "from_real_coordinates", "placement", "random_direction", "random_like",
           "symbolic_zero", "materialize", "lazy_direction", "lazy_pairing", "lazy_l1_norm"]


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def real_size(aval) -> int:
    return aval.size * (2 if is_complex(aval.dtype) else 1)


def realify(x, batch_dims: int = 0) -> np.ndarray:
    """Flatten ``x`` (after ``batch_dims`` leading axes) into float64 real coordinates: the
    real parts, then (for complex values) the imaginary parts."""
    x = backend.to_host(x)
    flat = x.reshape(x.shape[:batch_dims] + (-1,))
    if is_complex(flat.dtype):
        return np.concatenate([flat.real, flat.imag], axis=-1).astype(np.float64)
    # float64 values come back as a view (no caller writes into the result)
    return flat.astype(np.float64, copy=False)


def coordinate_label(shape: tuple, is_complex: bool, j: int) -> str:
    size = math.prod(shape)
    part = ""
    if is_complex:
        part = ".real" if j < size else ".imag"
        j %= size
    if not shape:
        return part
    index = tuple(int(i) for i in np.unravel_index(j, shape))
    return f"[{', '.join(map(str, index))}]{part}"


def pairing(a: Sequence, b: Sequence) -> float:
    """The real inner product Σ Re(conj(a)·b) of two lists of arrays."""
    total = 0.0
    for x, y in zip(a, b):
        x, y = backend.to_host(x).ravel(), backend.to_host(y).ravel()
        if is_complex(x.dtype) or is_complex(y.dtype):
            total += float(np.vdot(x.astype(np.complex128), y.astype(np.complex128)).real)
        else:
            total += float(np.dot(x.astype(np.float64, copy=False),
                                  y.astype(np.float64, copy=False)))
    return total


def l1_norm(xs: Sequence) -> float:
    return float(sum(np.sum(np.abs(realify(x))) for x in xs))


def from_real_coordinates(realified, like):
    """Inverse of realify for one array: real coordinates (on the device of ``like``) back
    to ``like``'s dtype and shape."""
    aval = get_aval(like)
    if is_complex(aval.dtype):
        n = aval.size
        values = realified[:n] + 1j * realified[n:]
    else:
        values = realified
    return backend.asarray(values.reshape(aval.shape).astype(aval.dtype), like=like)


def placement(values: Sequence):
    """The first device array among ``values``, or None when all live on the host: the
    ``like=`` argument for the arrays a check makes for them."""
    return next((v for v in values if backend.is_device_array(v)), None)


def random_direction(rng, values: Sequence) -> list:
    """A random unit vector over all real coordinates of ``values`` in which no coordinate
    is tiny (each |component| is at least about 0.1/sqrt(N)), so no entry goes unseen.
    ``rng`` (from ``backend.default_rng``) draws it on the device of ``values``."""
    sizes = [real_size(get_aval(v)) for v in values]
    total = max(1, sum(sizes))
    r = rng.standard_normal(total, dtype=np.float64)
    xp = backend.array_module(r)
    # Fast mode draws two directions per check and each small operation shows: the norm is
    # linalg.norm's sqrt(r·r) without its argument handling, and the floor is applied by
    # whole-array operations rather than boolean indexing (the same bits either way).
    norm = math.sqrt(float(r.dot(r)))
    r /= norm if norm > 0 else 1.0
    floor = 0.1 / math.sqrt(total)
    small = xp.abs(r) < floor
    if small.any():
        r = xp.where(small, xp.copysign(floor, r), r)
        r /= math.sqrt(float(r.dot(r)))
    out, offset = [], 0
    for v, n in zip(values, sizes):
        out.append(from_real_coordinates(r[offset:offset + n], v))
        offset += n
    return out


def random_like(rng, values: Sequence) -> list:
    """Standard-normal arrays (complex where complex) shaped like ``values``, drawn by
    ``rng`` (from ``backend.default_rng``) on their device."""
    return [from_real_coordinates(rng.standard_normal(real_size(get_aval(v)), dtype=np.float64),
                                  v) for v in values]


def symbolic_zero(value):
    return ad.Zero(core.tangent_aval(get_aval(value)))


def materialize(values: Sequence, likes: Sequence) -> list:
    """Symbolic Zero tangents/cotangents as zeros of their primal's type."""
    return [zeros_like(like) if type(v) is ad.Zero else v for v, like in zip(values, likes)]


# ------------------------------------------------------------------------------------------
# Lazy (dask) values: directions drawn chunk by chunk, pairings left uncomputed
# ------------------------------------------------------------------------------------------

def lazy_direction(seed_source, values: Sequence) -> list:
    """``random_direction`` for dask values, without computing anything: each value's
    components are drawn in that value's chunks, on their library, normalised and floored
    lazily (every |component| at least about 0.1/sqrt(N)).  ``seed_source``: a
    ``backend.LazyGenerator`` (``backend.default_rng``'s for dask values), a NumPy
    generator or a seed."""
    import dask.array as da
    rng = seed_source
    if not isinstance(rng, backend.LazyGenerator):
        seed = (int(rng.integers(0, 2**62)) if isinstance(rng, np.random.Generator) else rng)
        rng = backend.LazyGenerator(seed, next((v._meta for v in values
                                                if backend.is_lazy(v)), None))
    draws = []
    for v in values:
        aval = get_aval(v)
        chunks = getattr(v, "chunks", "auto")
        parts = [rng.standard_normal(aval.shape, chunks=chunks)
                 for _ in range(2 if is_complex(aval.dtype) else 1)]
        draws.append(parts)
    total = max(1, sum(real_size(get_aval(v)) for v in values))
    floor = 0.1 / math.sqrt(total)

    def normalised(draws):
        norm = da.sqrt(sum(da.sum(p * p) for parts in draws for p in parts))
        norm = da.where(norm > 0, norm, 1.0)
        return [[p / norm for p in parts] for parts in draws]

    draws = normalised(draws)
    draws = normalised([[da.where(abs(p) < floor, da.copysign(floor, p), p) for p in parts]
                        for parts in draws])
    out = []
    for v, parts in zip(values, draws):
        dtype = get_aval(v).dtype
        value = parts[0] + 1j * parts[1] if len(parts) == 2 else parts[0]
        out.append(value.astype(dtype))
    return out


def _lazy_total(terms: list):
    """The sum of the 0-d dask arrays ``terms`` (0.0 for none): started from the first term,
    not from a zero of dask's, whose NumPy chunk CuPy chunks could not be added to."""
    import dask.array as da
    return sum(terms[1:], terms[0]) if terms else da.zeros((), dtype=np.float64)


def lazy_pairing(a: Sequence, b: Sequence):
    """``pairing`` of dask (or mixed) arrays as an uncomputed float64 scalar."""
    import dask.array as da
    terms = []
    for x, y in zip(a, b):
        x, y = da.asarray(x), da.asarray(y)
        if is_complex(x.dtype) or is_complex(y.dtype):
            terms.append(da.sum((da.conj(x.astype(np.complex128))
                                 * y.astype(np.complex128)).real))
        else:
            terms.append(da.sum(x.astype(np.float64) * y.astype(np.float64)))
    return _lazy_total(terms)


def lazy_l1_norm(xs: Sequence):
    """``l1_norm`` of dask (or mixed) arrays as an uncomputed float64 scalar."""
    import dask.array as da
    terms = []
    for x in xs:
        x = da.asarray(x)
        if is_complex(x.dtype):
            terms += [da.sum(abs(x.real)), da.sum(abs(x.imag))]
        else:
            terms.append(da.sum(abs(x.astype(np.float64))))
    return _lazy_total(terms)
