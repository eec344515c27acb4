"""Sweep cases of argument forms: ``pad`` in every mode, ``repeat`` with one count per
element (concrete, and traced with ``total_repeat_length``), ``diff`` with ``prepend`` and
``append``, ``linspace``/``logspace``/``geomspace`` with array ends, and ``lax.reshape``
with ``dimensions``.  tests/test_numpy.py and tests/test_primitives.py check them against
NumPy (values, dtypes, derivatives in both modes and to second order, vmap against a
loop), tests/test_jit.py under ``jit`` and tests/test_standin.py on the CuPy stand-in."""
from __future__ import annotations

import numpy as np

from functrans import lax
from sweep import F32, F64, I64, A, Case, numpy_case

ALL = (F64, F32, I64)
FLOATS = (F64, F32)
C = numpy_case


def _pad_case(name, width, mode, arg=A(3, 4), dtypes=ALL, **kwargs):
    return C(f"pad_{name}", lambda m, x: m.pad(x, width, mode, **kwargs), arg, dtypes=dtypes)


def _double_ends(vector, width, axis, kwargs):
    """A padding function in JAX's form: returns the padded vector (NumPy's writes it)."""
    return vector.at[:width[0]].set(vector[width[0]] * 2.0).at[
        vector.shape[0] - width[1]:].set(vector[vector.shape[0] - width[1] - 1] * 3.0)


def _double_ends_in_place(vector, width, axis, kwargs):
    vector[:width[0]] = vector[width[0]] * 2.0
    vector[vector.shape[0] - width[1]:] = vector[vector.shape[0] - width[1] - 1] * 3.0


def _repeat_cut_or_filled(x, counts, axis, total):
    """``jax.numpy.repeat`` with ``total_repeat_length``: cut, or filled with the last
    element along the axis."""
    out = np.repeat(x, counts, axis=axis)
    n = out.shape[axis]
    if n >= total:
        return np.take(out, np.arange(total), axis=axis)
    fill = np.take(x, [-1] * (total - n), axis=axis)
    return np.concatenate([out, fill], axis=axis)


NUMPY_CASES = [
    # pad: every mode of numpy.pad
    _pad_case("edge", ((2, 1), (0, 3)), "edge"),
    _pad_case("wrap_wider_than_axis", ((4, 7), (1, 9)), "wrap"),
    _pad_case("reflect", ((2, 1), (3, 2)), "reflect"),
    _pad_case("reflect_wide_odd", ((4, 7), (1, 9)), "reflect", reflect_type="odd",
              dtypes=FLOATS),
    _pad_case("symmetric_wide", ((4, 7), (1, 9)), "symmetric"),
    _pad_case("symmetric_odd", (2, 5), "symmetric", reflect_type="odd", dtypes=FLOATS),
    _pad_case("reflect_singleton_axis", ((0, 0), (2, 2)), "reflect", arg=A(3, 1)),
    _pad_case("linear_ramp", ((2, 3), (1, 2)), "linear_ramp", end_values=((5, -1), (2, 3))),
    _pad_case("maximum", ((2, 1), (1, 2)), "maximum", arg=A(3, 4, kind="spread")),
    _pad_case("minimum_stat_length", 2, "minimum", arg=A(3, 4, kind="spread"),
              stat_length=2),
    _pad_case("mean_stat_lengths", ((2, 1), (1, 2)), "mean", stat_length=((1, 3), (2, 2))),
    _pad_case("median", ((2, 1), (1, 2)), "median", arg=A(3, 4, kind="spread"),
              stat_length=3),
    _pad_case("median_even_length", (1, 2), "median", arg=A(3, 4, kind="spread")),
    _pad_case("constant_pairs", ((1, 2), (2, 1)), "constant",
              constant_values=((1, 2), (3, 4))),
    C("pad_traced_constant_pairs", lambda m, x, v: m.pad(x, ((1, 2), (0, 1)), constant_values=v),
      A(2, 3), A(2, 2), dtypes=FLOATS),
    C("pad_function", lambda m, x: m.pad(
        x, ((1, 2), (2, 0)), _double_ends_in_place if m is np else _double_ends), A(3, 4),
      dtypes=FLOATS),
    # repeat: one count per element
    C("repeat_counts_axis0", lambda m, x: m.repeat(x, np.array([2, 0, 1]), axis=0), A(3, 4)),
    C("repeat_counts_flat", lambda m, x: m.repeat(x, np.arange(6) % 3), A(2, 3)),
    C("repeat_one_count_in_an_array", lambda m, x: m.repeat(x, np.array([2]), axis=1),
      A(2, 3)),
    C("repeat_counts_total_length",
      lambda m, x, k: m.repeat(x, m.abs(k), axis=1, total_repeat_length=7),
      A(2, 4), A(4, kind="int"),
      reference=lambda x, k: _repeat_cut_or_filled(x, np.abs(k), 1, 7)),
    # diff: prepend and append
    C("diff_prepend_append", lambda m, x, p, q: m.diff(x, prepend=p, append=q), A(3, 4),
      A(3, 1), A()),
    C("diff_axis0_n2_prepend", lambda m, x, p: m.diff(x, n=2, axis=0, prepend=p), A(3, 4),
      A(1, 4)),
    # a Python scalar is weakly typed, as in JAX: float32 stays float32 (NumPy's diff
    # would promote it to float64 through np.asanyarray)
    C("diff_append_scalar_host", lambda m, x: m.diff(x, append=2.5), A(2, 3),
      dtypes=FLOATS, reference=lambda x: np.diff(x, append=np.asarray(2.5, x.dtype))),
    # ranges with array ends
    C("linspace_array_ends", lambda m, a, b: m.linspace(a, b, 5), A(3), A(2, 1),
      dtypes=FLOATS),
    C("linspace_array_open_axis_retstep",
      lambda m, a, b: m.linspace(a, b, 4, endpoint=False, axis=-1, retstep=True), A(3),
      A(3), dtypes=FLOATS),
    C("linspace_array_int_dtype", lambda m, a, b: m.linspace(a, b, 4, dtype=np.int64, axis=1),
      A(2), A(2), dtypes=FLOATS, diff=False),
    C("logspace_array_ends", lambda m, a, b: m.logspace(a, b, 4, axis=1), A(3, kind="unit"),
      A(3, kind="unit"), dtypes=FLOATS),
    C("logspace_array_base", lambda m, a, b, base: m.logspace(a, b, 3, base=base),
      A(3, kind="unit"), A(kind="unit"), A(3, kind="pos"), dtypes=FLOATS),
    C("geomspace_array_ends", lambda m, a, b: m.geomspace(a, b, 4, axis=2),
      A(2, 3, kind="pos"), A(3, kind="pos"), dtypes=FLOATS),
]

PRIMITIVE_CASES = [
    Case("reshape_dimensions", lambda x: lax.reshape(x, (4, 6), dimensions=(2, 0, 1)),
         [A(2, 3, 4)], reference=lambda x: np.transpose(x, (2, 0, 1)).reshape(4, 6),
         linear=True),
]
