"""Sweep cases of the gather family (functrans/primitives/gather.py) and of the NumPy
functions built on it: integer-array indexing, take and take_along_axis.

Integer arguments are drawn from -3..3, so positions repeat (scatter-add accumulates) and
some fall outside the axis (clamped by the primitives); vmap batches them too, which sweeps
the batching rules with batched operands, batched indices and both.
"""
from __future__ import annotations

from functrans import lax
from sweep import A, Case, numpy_case

PRIMITIVE_CASES = [
    Case("gather_rows", lambda x, i: lax.gather(x, i), [A(5, 3), A(4, 1, kind="int")],
         linear=True),
    Case("gather_elements", lambda x, i: lax.gather(x, i), [A(4, 5), A(2, 3, 2, kind="int")],
         linear=True),
    Case("gather_no_position", lambda x, i: lax.gather(x, i), [A(2, 3), A(2, 0, kind="int")],
         linear=True),
    Case("gather_repeated_rows", lambda x, i: lax.gather(x, i), [A(3, 2), A(8, 1, kind="int")],
         linear=True),
    Case("scatter_add_rows", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(5, 3), A(6, 1, kind="int"), A(6, 3)], linear=True),
    Case("scatter_add_elements", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(4, 5), A(3, 2, kind="int"), A(3)], linear=True),
    Case("scatter_add_repeated_rows", lambda x, i, u: lax.scatter_add(x, i, u),
         [A(3, 2), A(8, 1, kind="int"), A(8, 2)], linear=True),
    Case("iota", lambda x: x * lax.iota(x.dtype, 4, like=x), [A(3, 4)], linear=True),
]

# NumPy-level: the indices are drawn arguments, so vmap also batches them (traced indices).
# `x[i]` itself is swept in tests/test_gather.py: with `x` unbatched and `i` batched, `x`
# would be a plain NumPy array indexed by a tracer, which NumPy refuses (issue 12, later).
NUMPY_CASES = [
    numpy_case("take_axis0", lambda m, x, i: m.take(x, i, axis=0), A(5, 3), A(4, kind="int")),
    numpy_case("take_axis1_2d_indices", lambda m, x, i: m.take(x, i, axis=1), A(2, 4),
               A(2, 3, kind="int")),
    numpy_case("take_flat", lambda m, x, i: m.take(x, i), A(2, 3), A(2, 2, kind="int")),
    numpy_case("take_scalar_index", lambda m, x, i: m.take(x, i, axis=0), A(4, 3),
               A(kind="int")),
    numpy_case("take_clip", lambda m, x, i: m.take(x, i, axis=0, mode="clip"), A(2, 3),
               A(5, kind="int")),
    numpy_case("take_along_axis1", lambda m, x, i: m.take_along_axis(x, i, axis=1), A(3, 5),
               A(3, 2, kind="int")),
    numpy_case("take_along_axis0_broadcast", lambda m, x, i: m.take_along_axis(x, i, axis=0),
               A(4, 3), A(6, 1, kind="int")),
    numpy_case("take_along_axis_none", lambda m, x, i: m.take_along_axis(x, i, axis=None),
               A(2, 3), A(4, kind="int")),
]

# The other scatters, and the modes: with indices drawn from -3..3 some positions fall out
# of bounds, so "drop" and "fill" are exercised under every transform.
PRIMITIVE_CASES += [
    Case("gather_fill", lambda x, i: lax.gather(x, i, mode="fill", fill_value=0.5),
         [A(3, 2), A(5, 1, kind="int")]),
    Case("scatter_add_drop", lambda x, i, u: lax.scatter_add(x, i, u, mode="drop"),
         [A(3, 2), A(6, 1, kind="int"), A(6, 2)], linear=True),
    Case("scatter_rows", lambda x, i, u: lax.scatter(x, i, u),
         [A(4, 2), A(5, 1, kind="int"), A(5, 2)], linear=True),
    Case("scatter_elements_drop", lambda x, i, u: lax.scatter(x, i, u, mode="drop"),
         [A(3, 3), A(4, 2, kind="int"), A(4)], linear=True),
    Case("scatter_mul_rows", lambda x, i, u: lax.scatter_mul(x, i, u),
         [A(3, 2), A(4, 1, kind="int"), A(4, 2)]),
    Case("scatter_mul_drop", lambda x, i, u: lax.scatter_mul(x, i, u, mode="drop"),
         [A(4), A(5, 1, kind="int"), A(5)]),
    Case("scatter_min_rows", lambda x, i, u: lax.scatter_min(x, i, u),
         [A(3, 2), A(4, 1, kind="int"), A(4, 2)]),
    Case("scatter_max_drop", lambda x, i, u: lax.scatter_max(x, i, u, mode="drop"),
         [A(4), A(5, 1, kind="int"), A(5)]),
]
