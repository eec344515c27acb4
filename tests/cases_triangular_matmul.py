"""Sweep cases of ``triangular_matmul`` (functrans/primitives/decompositions.py), the
product with one triangle of a matrix that ``cholesky``'s derivative uses: checked by
tests/test_primitives.py (derivatives in both modes to second order, vmap, float32)."""
from __future__ import annotations

import numpy as np

from functrans import lax
from functrans.primitives.decompositions import triangular_matmul
from sweep import A, Case


def _product(**params):
    return lambda a, b: triangular_matmul(a, b, **params)


def _cplx(x, y):
    return lax.complex(x, y)


def _parts(z):
    return lax.concatenate([lax.real(z), lax.imag(z)], len(np.shape(z)) - 1)


PRIMITIVE_CASES = [
    Case("triangular_matmul_left_lower", _product(left_side=True, lower=True),
         [A(3, 3), A(3, 2)]),
    Case("triangular_matmul_right_upper_transpose",
         _product(left_side=False, lower=False, transpose_a=True), [A(3, 3), A(2, 3)]),
    Case("triangular_matmul_batched", _product(left_side=True, lower=False),
         [A(2, 3, 3), A(2, 3, 4)]),
    Case("triangular_matmul_complex_conjugate_only",
         lambda a, c, b, d: _parts(triangular_matmul(_cplx(a, c), _cplx(b, d),
                                                     left_side=False, conjugate_a=True)),
         [A(3, 3), A(3, 3), A(2, 3), A(2, 3)]),
    Case("triangular_matmul_complex_adjoint",
         lambda a, c, b, d: _parts(triangular_matmul(_cplx(a, c), _cplx(b, d),
                                                     transpose_a=True, conjugate_a=True)),
         [A(3, 3), A(3, 3), A(3, 2), A(3, 2)]),
]
