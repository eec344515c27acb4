"""Sweep cases of the creation functions and shape queries of functrans.numpy that take an
array or scalar input: the ends of ``linspace``/``logspace``/``geomspace``, the fill value
of ``full``, the ``beta`` of ``kaiser``, bin edges, index helpers ``*_from`` an array, and
the queries (``ndim``, ``shape``, ``isscalar``, ...) whose Python answers steer a traced
computation.  tests/test_numpy.py checks them against NumPy (values, dtypes, derivatives in
both modes, vmap against a loop, float32), tests/test_standin.py on the CuPy stand-in and
tests/test_jit.py under ``jit``.

Creation functions with no array input (``eye``, ``arange``, windows, dtype functions,
``trim_zeros`` of a concrete array, ...) are the ``CREATION_CASES`` at the end, run by
tests/test_creation.py."""
from __future__ import annotations

import numpy as np

from sweep import C64, C128, F32, F64, I64, A, creation_case, numpy_case

ALL = (F64, F32, I64)
FLOATS = (F64, F32)
C = numpy_case
K = creation_case

# Where ``place`` writes: a fixed concrete mask, as the function requires.
_MASK = np.array([[True, False, True], [False, False, True]])


def _place_reference(x, v):
    # numpy.place writes into its argument and returns None; JAX's form returns the result.
    out = np.array(x, copy=True)
    np.place(out, _MASK, v)
    return out


def _empty_like_reference(x, **kw):
    # NumPy leaves the values unspecified; JAX (and functrans) fill with zeros.  Shape and
    # dtype are NumPy's.
    return np.zeros_like(np.empty_like(x, **kw))


def _scalar_if_0d(x):
    # jax.numpy.isscalar calls a 0-d array a scalar, numpy.isscalar does not.
    return x * (2 if np.ndim(x) == 0 else 3)


NUMPY_CASES = [
    # reductions under their NumPy aliases
    C("amax_axis0", lambda m, x: m.amax(x, axis=0), A(3, 4, kind="spread")),
    C("amin_keepdims", lambda m, x: m.amin(x, axis=(0, 2), keepdims=True),
      A(2, 3, 4, kind="spread")),
    # copies and promotion of scalars
    C("copy", lambda m, x: m.copy(x), A(3, 4)),
    C("atleast_1d_0d", lambda m, x: m.atleast_1d(x), A()),
    C("atleast_1d_several", lambda m, x, y: m.atleast_1d(x, y), A(), A(2, 3)),
    # ranges with traced (scalar) ends
    C("linspace", lambda m, a, b: m.linspace(a, b, 5), A(), A(), dtypes=FLOATS),
    C("linspace_open_retstep", lambda m, a, b: m.linspace(a, b, 4, endpoint=False,
                                                          retstep=True), A(), A(),
      dtypes=FLOATS),
    C("logspace", lambda m, a, b: m.logspace(a, b, 4), A(), A(), dtypes=FLOATS),
    C("logspace_base2", lambda m, a, b: m.logspace(a, b, 3, base=2.0), A(), A(),
      dtypes=FLOATS),
    C("geomspace", lambda m, a, b: m.geomspace(a, b, 4), A(kind="pos"), A(kind="pos"),
      dtypes=FLOATS),
    C("full_traced_fill", lambda m, v: m.full((2, 3), v), A()),
    C("full_int_shape_dtype", lambda m, v: m.full(3, v, dtype=np.float32), A(),
      dtypes=FLOATS, tol=1e-3),
    C("empty_like", lambda m, x: m.empty_like(x), A(3, 4),
      reference=_empty_like_reference),
    C("empty_like_dtype", lambda m, x: m.empty_like(x, dtype=np.float32), A(3, 4),
      reference=lambda x: _empty_like_reference(x, dtype=np.float32)),
    C("kaiser_beta", lambda m, b: m.kaiser(5, b), A(kind="pos"), dtypes=(F64,)),
    # JAX's functional place: a new array, values cycled into the concrete mask's places
    C("place", lambda m, x, v: m.place(x, _MASK, v, inplace=False), A(2, 3), A(2),
      reference=_place_reference),
    # histograms: edges follow the data's extremes (differentiable), counts are constants
    C("histogram_bin_edges", lambda m, x: m.histogram_bin_edges(x, 4), A(2, 5, kind="spread"),
      dtypes=FLOATS),
    C("histogramdd_edges", lambda m, x: m.histogramdd(x, (3, 2))[1], A(6, 2, kind="spread"),
      dtypes=FLOATS),
    # (counts take the weights' dtype, as in JAX; NumPy's are always float64)
    C("histogramdd_counts", lambda m, x, w: m.histogramdd(x, 3, weights=w)[0],
      A(6, 2, kind="spread"), A(6), dtypes=FLOATS,
      reference=lambda x, w: np.histogramdd(x, 3, weights=w)[0].astype(w.dtype)),
    # shape queries: Python answers that steer traced computations
    C("ndim", lambda m, x: x * m.ndim(x), A(2, 3)),
    C("shape", lambda m, x: m.reshape(x, m.shape(x)[::-1]), A(2, 3)),
    C("size", lambda m, x: x * m.size(x), A(2, 3)),
    C("isrealobj", lambda m, x: x * (2 if m.isrealobj(x) else 3), A(2, 3),
      dtypes=ALL + (C128, C64)),
    C("isscalar_0d", lambda m, x: x * (2 if m.isscalar(x) else 3), A(),
      reference=_scalar_if_0d),
    C("isscalar_1d", lambda m, x: x * (2 if m.isscalar(x) else 3), A(3),
      reference=_scalar_if_0d),
    C("iterable", lambda m, x, y: (x * (2 if m.iterable(x) else 3),
                                   y * (2 if m.iterable(y) else 3)), A(), A(3)),
    # index helpers computed from an array's shape, used to index it
    C("diag_indices_from", lambda m, x: x[m.diag_indices_from(x)], A(3, 3)),
    C("diag_indices_from_3d", lambda m, x: x[m.diag_indices_from(x)], A(2, 2, 2)),
    C("tril_indices_from", lambda m, x: x[m.tril_indices_from(x, k=-1)], A(3, 4)),
    C("triu_indices_from", lambda m, x: x[m.triu_indices_from(x, 1)], A(4, 3)),
]

CREATION_CASES: list = []
