"""lax.ragged_dot and lax.ragged_dot_general: against loops over the groups (always), and
against JAX 0.10.2 where it is installed (CI does not install it), values and gradients in
lhs and rhs; and their errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans
from functrans import lax

from sweep import needs_jax, optional_jax

jax = optional_jax()
jlax = jax.lax if jax is not None else None

RNG = np.random.default_rng(2)
SIZES = np.array([2, 0, 4, 1])  # an empty group; the last row in no group


def test_ragged_dot_matches_a_loop():
    lhs, rhs = RNG.standard_normal((8, 3)), RNG.standard_normal((4, 3, 5))
    expected = np.zeros((8, 5))
    row = 0
    for j, n in enumerate(SIZES):
        expected[row:row + n] = lhs[row:row + n] @ rhs[j]
        row += n
    np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, SIZES), expected, rtol=1e-13)
    # d sum(out * w) / d rhs[j] = lhs[group j].T @ w[group j]
    w = RNG.standard_normal((8, 5))
    grad = functrans.grad(lambda r: (lax.ragged_dot(lhs, r, SIZES) * w).sum())(rhs)
    np.testing.assert_allclose(grad[2], lhs[2:6].T @ w[2:6], rtol=1e-13)
    np.testing.assert_array_equal(grad[1], 0.0)


def test_contracted_ragged_axis_matches_a_loop():
    lhs, rhs = RNG.standard_normal((2, 8)), RNG.standard_normal((8, 3))
    numbers = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    out = lax.ragged_dot_general(lhs, rhs, SIZES, numbers)
    ends = np.cumsum(SIZES)
    expected = np.stack([lhs[:, e - n:e] @ rhs[e - n:e] for n, e in zip(SIZES, ends)])
    np.testing.assert_allclose(out, expected, rtol=1e-13)


CONFIGS = [  # (lhs shape, rhs shape, dimension numbers)
    ((8, 3), (4, 3, 5), ((([1], [1]), ([], [])), [0], [0])),
    ((2, 8, 3), (2, 4, 3, 5), ((([2], [2]), ([0], [0])), [1], [1])),
    ((3, 8), (5, 3, 4), ((([0], [1]), ([], [])), [1], [2])),
    ((2, 8), (8, 3), ((([1], [0]), ([], [])), [1], [])),
    ((2, 3, 8), (2, 8, 4), ((([2], [1]), ([0], [0])), [2], [])),
]


@needs_jax
@pytest.mark.parametrize("lhs_shape, rhs_shape, numbers", CONFIGS,
                         ids=[str(i) for i in range(len(CONFIGS))])
def test_matches_jax(lhs_shape, rhs_shape, numbers):
    lhs, rhs = RNG.standard_normal(lhs_shape), RNG.standard_normal(rhs_shape)
    ours, theirs = lax.RaggedDotDimensionNumbers(*numbers), jlax.RaggedDotDimensionNumbers(
        *numbers)
    if not numbers[2]:  # a contracted ragged axis: JAX has no derivatives of it (the sweep
        # and test_contracted_ragged_axis_matches_a_loop check ours)
        np.testing.assert_allclose(lax.ragged_dot_general(lhs, rhs, SIZES, ours),
                                   jlax.ragged_dot_general(lhs, rhs, SIZES, theirs),
                                   rtol=1e-12, atol=1e-14)
        return
    expected, expected_vjp = jax.vjp(
        lambda a, b: jlax.ragged_dot_general(a, b, SIZES, theirs), lhs, rhs)
    got, got_vjp = functrans.vjp(lambda a, b: lax.ragged_dot_general(a, b, SIZES, ours),
                                 lhs, rhs)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    w = RNG.standard_normal(expected.shape)
    for g, e in zip(got_vjp(w), expected_vjp(w)):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    if numbers[0] == (([1], [1]), ([], [])):
        np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, SIZES),
                                   jlax.ragged_dot(lhs, rhs, SIZES), rtol=1e-12)


def test_precision_types_are_accepted():
    lhs, rhs = RNG.standard_normal((8, 3)), RNG.standard_normal((4, 3, 5))
    expected = lax.ragged_dot(lhs, rhs, SIZES)
    for precision in (lax.DotAlgorithmPreset.F64_F64_F64, lax.Precision.HIGHEST,
                      lax.DotAlgorithm(np.float64, np.float64, np.float64)):
        np.testing.assert_array_equal(lax.ragged_dot(lhs, rhs, SIZES, precision=precision),
                                      expected)
        np.testing.assert_array_equal(lax.dot_general(lhs, lhs, (([1], [1]), ([], [])),
                                                      precision=precision), lhs @ lhs.T)


def test_errors_name_the_function_and_argument():
    lhs, rhs = np.ones((8, 3)), np.ones((4, 3, 5))
    with pytest.raises(TypeError, match="ragged_dot: group_sizes must be integers"):
        lax.ragged_dot(lhs, rhs, SIZES.astype(float))
    with pytest.raises(ValueError, match="ragged_dot: rhs group axis 0 has 4 kernels but "
                                         "group_sizes .* has 3 groups"):
        lax.ragged_dot(lhs, rhs, SIZES[:3])
    with pytest.raises(ValueError, match=r"ragged_dot: lhs must be \(m, k\)"):
        lax.ragged_dot(np.ones(3), rhs, SIZES)
    with pytest.raises(NotImplementedError, match="ragged_dot: group_offset"):
        lax.ragged_dot(lhs, rhs, SIZES, group_offset=np.array([1]))
    batch = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    with pytest.raises(NotImplementedError, match="ragged_dot_general: a ragged batch axis"):
        lax.ragged_dot_general(np.ones((4, 2, 3)), np.ones((4, 3, 2)), SIZES, batch)
