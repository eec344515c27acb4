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


def _zeros_reference(make):
    # numpy.empty leaves the values unspecified; JAX (and functrans) fill with zeros.
    return lambda: np.zeros_like(make(np))


def _trimmed():
    return np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.0]])


def _trim_reference(axes):
    """NumPy >= 2.2's ``trim_zeros`` of ``_trimmed()`` along ``axes``, written out (older
    NumPy trims 1-D arrays only)."""
    def reference():
        a = _trimmed()
        keep = []
        for axis in range(a.ndim):
            if axis not in axes:
                keep.append(slice(None))
                continue
            nonzero = np.flatnonzero(np.any(a != 0, axis=tuple(
                d for d in range(a.ndim) if d != axis)))
            keep.append(slice(nonzero[0], nonzero[-1] + 1))
        return a[tuple(keep)]
    return reference


CREATION_CASES = [
    # the array API's exchange (a traced value has no memory to share: no jit)
    K("from_dlpack", lambda m, x: m.from_dlpack(x), A(2, 3), jit=False),
    # from shapes; `like=` a device array builds the result there
    K("arange_stop", lambda m, **kw: m.arange(5, **kw), like=True),
    K("arange_step", lambda m, **kw: m.arange(1, 8, 3, **kw), like=True),
    K("arange_float32", lambda m, **kw: m.arange(0.0, 1.0, 0.25, dtype=np.float32, **kw),
      like=True),
    K("arange_negative_step", lambda m: m.arange(2.0, -1.0, -0.5)),
    K("linspace_python_ends", lambda m, **kw: m.linspace(0.0, 2.0, 5, **kw), like=True),
    K("eye_rect_k", lambda m, **kw: m.eye(3, 4, k=1, **kw), like=True),
    K("eye_float32_below", lambda m, **kw: m.eye(3, k=-2, dtype=np.float32, **kw),
      like=True),
    K("identity_int", lambda m, **kw: m.identity(3, dtype=int, **kw), like=True),
    K("zeros_float32", lambda m, **kw: m.zeros((2, 3), np.float32, **kw), like=True),
    K("zeros_int_size", lambda m, **kw: m.zeros(4, dtype=np.int32, **kw), like=True),
    K("ones_complex", lambda m, **kw: m.ones((2,), dtype=np.complex64, **kw), like=True),
    K("ones_default", lambda m, **kw: m.ones((1, 2, 1), **kw), like=True),
    K("empty", lambda m, **kw: m.empty((2, 3), **kw), like=True,
      reference=_zeros_reference(lambda m: m.empty((2, 3)))),
    K("empty_bool", lambda m: m.empty(3, dtype=bool),
      reference=_zeros_reference(lambda m: m.empty(3, dtype=bool))),
    K("full_python_fill", lambda m, **kw: m.full((2, 2), 1.5, **kw), like=True),
    K("full_complex", lambda m, **kw: m.full(3, 2, dtype=np.complex128, **kw), like=True),
    K("tri_rect_int", lambda m, **kw: m.tri(3, 4, -1, dtype=int, **kw), like=True),
    K("tri_default", lambda m, **kw: m.tri(3, **kw), like=True),
    # index grids and index helpers
    K("indices", lambda m: m.indices((2, 3))),
    K("indices_sparse_int32", lambda m: m.indices((2, 1, 3), dtype=np.int32, sparse=True)),
    K("diag_indices", lambda m: m.diag_indices(3)),
    K("diag_indices_3d", lambda m: m.diag_indices(2, 3)),
    K("tril_indices", lambda m: m.tril_indices(4, -1)),
    K("tril_indices_rect", lambda m: m.tril_indices(3, 1, 5)),
    K("triu_indices", lambda m: m.triu_indices(3)),
    K("triu_indices_rect", lambda m: m.triu_indices(4, 1, 2)),
    # (under jit the mask function's result is traced: only a static size= works there)
    K("mask_indices_triu", lambda m: m.mask_indices(3, m.triu, 1), jit=False),
    K("mask_indices_tril", lambda m: m.mask_indices(4, m.tril), jit=False),
    K("mask_indices_size", lambda m: m.mask_indices(3, m.triu, 1, size=3),
      reference=lambda: np.mask_indices(3, np.triu, 1)),
    # windows
    K("bartlett", lambda m: m.bartlett(5)),
    K("bartlett_1", lambda m: m.bartlett(1)),
    K("blackman", lambda m: m.blackman(6)),
    K("hamming", lambda m: m.hamming(4)),
    K("hanning", lambda m: m.hanning(7)),
    K("hanning_0", lambda m: m.hanning(0)),
    K("kaiser_python_beta", lambda m: m.kaiser(6, 3.5)),
    # from Python objects
    K("fromfunction_int", lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3),
                                                   dtype=int)),
    K("fromfunction_float", lambda m: m.fromfunction(lambda i: i / 2, (4,))),
    K("frombuffer", lambda m: m.frombuffer(np.arange(3.0).tobytes())),
    K("frombuffer_offset_count", lambda m: m.frombuffer(b"\x01\x02\x03\x04\x05",
                                                        dtype=np.uint8, count=3, offset=1)),
    K("fromiter", lambda m: m.fromiter((i * i for i in range(4)), dtype=float)),
    K("fromiter_count", lambda m: m.fromiter(iter([3, 1, 2, 7]), dtype=np.int32, count=3)),
    K("fromstring", lambda m: m.fromstring("1 2 3", dtype=int, sep=" ")),
    K("fromstring_comma", lambda m: m.fromstring("1.5, -2, 3e1", sep=",")),
    # a concrete array's bounding box (the output shape depends on the values)
    K("trim_zeros_1d", lambda m: m.trim_zeros(np.array([0.0, 0.0, 1.0, 0.0, 2.0, 0.0]))),
    K("trim_zeros_back", lambda m: m.trim_zeros(np.array([0, 3, 0, 0]), trim="b")),
    K("trim_zeros_2d", lambda m: m.trim_zeros(_trimmed()), reference=_trim_reference((0, 1))),
    K("trim_zeros_axis", lambda m: m.trim_zeros(_trimmed(), axis=1),
      reference=_trim_reference((1,))),
    # FFT sample frequencies
    K("fftfreq", lambda m, **kw: m.fft.fftfreq(8, 0.1, **kw), like=True),
    K("fftfreq_odd", lambda m, **kw: m.fft.fftfreq(5, **kw), like=True),
    K("rfftfreq", lambda m, **kw: m.fft.rfftfreq(7, d=2.0, **kw), like=True),
    K("rfftfreq_even", lambda m, **kw: m.fft.rfftfreq(6, **kw), like=True),
    # dtype and shape queries, on arrays and (under jit) on tracers
    K("result_type_arrays", lambda m, x, i: m.result_type(x, i, 1.0), A(3), A(2, kind="int")),
    K("result_type_float32_weak", lambda m, x: m.result_type(x.astype(np.float32), 2.0, 3),
      A(3)),
    K("result_type_dtypes", lambda m: m.result_type(np.int8, np.uint8, "f2")),
    K("promote_types", lambda m: m.promote_types(np.int32, np.float32)),
    K("promote_types_names", lambda m: m.promote_types("f2", "i1")),
    K("can_cast_array", lambda m, x: (m.can_cast(x, np.float32),
                                      m.can_cast(x, np.float32, "same_kind")), A(3)),
    K("can_cast_dtypes", lambda m: (m.can_cast(np.int8, np.int64),
                                    m.can_cast(np.float64, np.int64, "unsafe"),
                                    m.can_cast(np.complex64, np.float64))),
    K("broadcast_shapes", lambda m: m.broadcast_shapes((3, 1), (4,), ())),
    K("broadcast_shapes_of_arrays", lambda m, x, y: m.broadcast_shapes(x.shape, y.shape),
      A(2, 1, 4), A(3, 1)),
    K("isdtype", lambda m: (m.isdtype(np.float32, "real floating"),
                            m.isdtype(np.int8, ("bool", "unsigned integer")),
                            m.isdtype(np.complex64, "numeric"))),
    K("isdtype_of_array", lambda m, x: m.isdtype(x.dtype, "real floating"), A(3)),
    K("einsum_path", lambda m, a, b, c: m.einsum_path("ij,jk,kl->il", a, b, c,
                                                      optimize="greedy"),
      A(2, 3), A(3, 4), A(4, 5)),
    K("einsum_path_optimal", lambda m, a, b: m.einsum_path("ij,jk", a, b, optimize="optimal"),
      A(5, 2), A(2, 6)),
]
