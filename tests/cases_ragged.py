"""Sweep cases of ``lax.ragged_dot`` and ``lax.ragged_dot_general`` (functrans/lax_ragged.py):
groups of rows (one empty, the last rows in none) each multiplying their own kernel, and a
contracted ragged axis.  The group sizes are fixed integers (made on the operands' device,
as a program's would be); the sweep differentiates and vmaps ``lhs`` and ``rhs``.
"""
from __future__ import annotations

import numpy as np

from functrans import lax
from sweep import A, Case

_FREE = lax.RaggedDotDimensionNumbers((([2], [2]), ([0], [1])), [1], [0])  # batch axis 0
_CONTRACTED = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])


def _sizes(like):
    """Groups of 0, 2 and 4 rows (the 7th row in none)."""
    return lax.mul(lax.iota(np.int64, 3, like=like), 2)


PRIMITIVE_CASES = [
    Case("ragged_dot", lambda x, w: lax.ragged_dot(x, w, _sizes(x)), [A(7, 2), A(3, 2, 4)]),
    Case("ragged_dot_general_batched",
         lambda x, w: lax.ragged_dot_general(x, w, _sizes(x), _FREE),
         [A(2, 7, 3), A(3, 2, 3, 2)]),
    Case("ragged_dot_general_contracted",
         lambda x, w: lax.ragged_dot_general(x, w, _sizes(x), _CONTRACTED), [A(2, 7), A(7, 3)]),
]
