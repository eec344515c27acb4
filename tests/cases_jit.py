"""Sweep cases of the ``jit`` call primitive: a jitted body under every check of the sweep
(derivatives of both modes to second order, vmap against a loop, float32), so the call's
JVP, partial-evaluation, transpose and batching rules meet the numerical derivatives.
tests/test_jit.py runs the whole sweep under ``jit`` besides."""
from __future__ import annotations

import functrans as ft
import functrans.numpy as fnp
from sweep import A, Case


@ft.jit
def _elementwise(x, y):
    return fnp.sin(x) * y + fnp.tanh(y) ** 2


@ft.jit
def _contraction(x, y):
    return fnp.tanh(x @ y).T * 0.5


@ft.jit
def _two_results(x):
    return fnp.exp(x) + 1.0, fnp.sum(x * x, axis=0)


PRIMITIVE_CASES = [
    Case("jit_elementwise", _elementwise, [A(3, 4), A(3, 4)]),
    Case("jit_contraction", _contraction, [A(3, 4), A(4, 2)]),
    Case("jit_nested_with_two_results",
         lambda x: (lambda a, b: a * fnp.cos(b))(*_two_results(x)), [A(2, 3)]),
    Case("jit_of_jit", ft.jit(lambda x, y: _elementwise(x, y) / 2.0 + x), [A(4), A(4)]),
]
