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
