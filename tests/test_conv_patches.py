"""conv_general_dilated_patches, conv_general_dilated_local, conv_shape_tuple and
conv_general_permutations: against loops (always) and against JAX 0.10.2 where it is
installed (CI does not install it): values, and the derivatives of the first two
(w.r.t. the input, and the unshared kernel) on several layouts, strides, paddings and
dilations.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans
from functrans import lax

from sweep import needs_jax, optional_jax

jax = optional_jax()
jlax = jax.lax if jax is not None else None

RNG = np.random.default_rng(1)

# (lhs shape, filter shape, strides, padding, lhs_dilation, rhs_dilation, dimension numbers)
SETTINGS = [
    ((2, 3, 7), (3,), (1,), "VALID", None, None, None),
    ((2, 3, 6, 5), (2, 3), (2, 1), "SAME", None, (1, 2), None),
    ((1, 5, 6, 2), (3, 2), (1, 2), [(1, 0), (2, 1)], (2, 1), None, ("NHWC", "HWIO", "NHWC")),
    ((2, 4, 5, 3), (2, 2), (1, 1), "SAME_LOWER", None, None, ("NHWC", "WHIO", "NCHW")),
    ((3, 2, 4, 2), (1, 2), (1, 1), "VALID", None, (1, 2), ("CNWH", "IOHW", "WHNC")),
]


@needs_jax
@pytest.mark.parametrize("setting", SETTINGS, ids=[str(i) for i in range(len(SETTINGS))])
def test_patches_match_jax(setting):
    shape, filt, strides, padding, lhs_dil, rhs_dil, dn = setting
    x = RNG.standard_normal(shape)

    def patches(lib):
        return lambda x: lib.conv_general_dilated_patches(x, filt, strides, padding, lhs_dil,
                                                          rhs_dil, dn)
    expected, expected_vjp = jax.vjp(patches(jlax), x)  # one JAX call for both
    got, got_vjp = functrans.vjp(patches(lax), x)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    w = RNG.standard_normal(expected.shape)
    np.testing.assert_allclose(got_vjp(w)[0], expected_vjp(w)[0], rtol=1e-12)


@needs_jax
@pytest.mark.parametrize("setting", SETTINGS, ids=[str(i) for i in range(len(SETTINGS))])
def test_local_matches_jax(setting):
    shape, filt, strides, padding, lhs_dil, rhs_dil, dn = setting
    x = RNG.standard_normal(shape)
    patches = jlax.conv_general_dilated_patches(x, filt, strides, padding, lhs_dil, rhs_dil,
                                                dn)
    lhs_spec, rhs_spec, out_spec = jlax.conv_dimension_numbers(x.shape, (1, 1) + filt, dn)
    rhs_shape = [0] * len(shape)
    rhs_shape[rhs_spec[0]] = 3
    rhs_shape[rhs_spec[1]] = patches.shape[out_spec[1]]
    for o, r in zip(out_spec[2:], rhs_spec[2:]):
        rhs_shape[r] = patches.shape[o]
    rhs = RNG.standard_normal(rhs_shape)
    args = (strides, padding, filt, lhs_dil, rhs_dil, dn)
    expected, expected_vjp = jax.vjp(lambda x, r: jlax.conv_general_dilated_local(x, r, *args),
                                     x, rhs)
    got, got_vjp = functrans.vjp(lambda x, r: lax.conv_general_dilated_local(x, r, *args),
                                 x, rhs)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    w = RNG.standard_normal(expected.shape)
    for g, e in zip(got_vjp(w), expected_vjp(w)):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_patches_and_local_match_loops():
    x = RNG.standard_normal((2, 3, 7))
    patches = lax.conv_general_dilated_patches(x, (3,), (2,), "VALID")
    expected = np.empty((2, 9, 3))
    for n, c, k, y in np.ndindex(2, 3, 3, 3):
        expected[n, c * 3 + k, y] = x[n, c, 2 * y + k]
    np.testing.assert_array_equal(patches, expected)
    w = RNG.standard_normal((4, 9, 3))  # (O, C * K, output positions)
    out = lax.conv_general_dilated_local(x, w, (2,), "VALID", (3,))
    np.testing.assert_allclose(out, np.einsum("nfy,ofy->noy", expected, w), rtol=1e-13)
    # the derivative w.r.t. x: every input element gets the weights of the windows it is in
    grad = functrans.grad(lambda x: lax.conv_general_dilated_local(x, w, (2,), "VALID",
                                                                  (3,)).sum())(x)
    expected_grad = np.zeros_like(x)
    for n, c, k, y in np.ndindex(2, 3, 3, 3):
        expected_grad[n, c, 2 * y + k] += w[:, c * 3 + k, y].sum()
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-13)


def test_shape_helpers_fail_clearly():
    with pytest.raises(TypeError, match=r"conv_general_permutations: dimension_numbers\[1\]"):
        lax.conv_general_permutations(("NHWC", "HWOO", "NHWC"))
    with pytest.raises(ValueError, match="conv_shape_tuple: batch_group_count=4"):
        lax.conv_shape_tuple((6, 2, 9), (4, 2, 2), (1,), "VALID", 4)
    with pytest.raises(ValueError, match="conv_general_dilated_local: rhs must have shape"):
        lax.conv_general_dilated_local(np.ones((1, 1, 5)), np.ones((1, 2, 3)), (1,), "VALID",
                                       (2,))
    assert lax.conv_shape_tuple((6, 2, 9, 9), (4, 2, 2, 3), (1, 2), "VALID", 3) == (2, 4, 8, 4)


@needs_jax
def test_shape_helpers_match_jax():
    for args in [((8, 3, 32, 32), (16, 3, 3, 3), (2, 2), "SAME"),
                 ((8, 3, 10), (4, 3, 3), (3,), [(1, 2)]),
                 ((6, 2, 9, 9), (4, 2, 2, 3), (1, 2), "VALID", 3)]:
        assert lax.conv_shape_tuple(*args) == jlax.conv_shape_tuple(*args)
    for dn in [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"), ("NHWC", "WHIO", "NCHW"),
               ("CNWH", "IOHW", "WHNC")]:
        assert lax.conv_general_permutations(dn) == jlax.conv_general_permutations(dn)
