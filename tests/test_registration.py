"""The registration helpers every primitive family plugs into: ``transpose.deflinear``
(JVP and transpose of a linear primitive), ``transpose.deftranspose`` (the transpose only),
``batching.defleading_dims`` (leading axes as batch members) and the factories'
``abstract_eval`` override."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
from functrans import lax
from functrans.core import ShapedArray, abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching, transpose
from functrans.primitives import elementwise
from functrans.primitives.shape import moveaxis
from rule_sandbox import Sandbox
from sweep import assert_close, check_grads

sandbox = Sandbox()
install_rules = sandbox.fixture()

# A linear primitive of two operands: 2x - y (the generic linear JVP instantiates zeros).
twice_minus_p = sandbox.primitive("test_twice_minus")
# Reverse of the last axis, registered with its transpose only; its JVP separately.
flip_p = sandbox.primitive("test_flip_last")
# The Gram matrix A Aᵀ of the trailing two axes, batched over leading axes.
gram_p = sandbox.primitive("test_gram")


def _gram_impl(a):
    return a @ np.swapaxes(a, -1, -2)


def _gram_abstract_eval(aval):
    if aval.ndim < 2:
        raise ValueError(f"test_gram: needs a matrix, got {aval.shape}")
    return ShapedArray(aval.shape[:-1] + aval.shape[-2:-1], aval.dtype)


def _gram_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    out = gram_p.bind(a)
    if type(t) is ad.Zero:
        return out, ad.Zero.from_value(out)
    cross = lax.dot_general(t, a, (((a.ndim - 1,), (a.ndim - 1,)),
                                   (tuple(range(a.ndim - 2)), tuple(range(a.ndim - 2)))))
    return out, lax.add(cross, moveaxis(cross, a.ndim - 1, a.ndim - 2))


@sandbox.rules
def _register():
    impl_rules[twice_minus_p] = lambda x, y: 2 * x - y
    abstract_eval_rules[twice_minus_p] = lambda x, y: x
    transpose.deflinear(twice_minus_p, lambda ct, x, y: [lax.mul(ct, 2.0), lax.neg(ct)])
    batching.defvectorized(twice_minus_p)  # only used with equal batch axes here

    impl_rules[flip_p] = lambda x: x[..., ::-1]
    abstract_eval_rules[flip_p] = lambda x: x
    ad.defjvp(flip_p, lambda g, ans, x: flip_p.bind(g))
    transpose.deftranspose(flip_p, lambda ct, x: [flip_p.bind(ct)])
    batching.batching_rules[flip_p] = lambda vals, dims: (flip_p.bind(
        moveaxis(vals[0], dims[0], 0)), 0)

    impl_rules[gram_p] = _gram_impl
    abstract_eval_rules[gram_p] = _gram_abstract_eval
    ad.jvp_rules[gram_p] = _gram_jvp
    batching.defleading_dims(gram_p, moveaxis)


def test_deflinear_registers_jvp_and_transpose():
    x, y = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    out, t = ft.jvp(lambda x, y: twice_minus_p.bind(x, y), (x, y), (np.ones(2), np.zeros(2)))
    assert_close(out, 2 * x - y)
    assert_close(t, 2 * np.ones(2))
    # Only one operand differentiated: the other's zero tangent is instantiated.
    _, t = ft.jvp(lambda y: twice_minus_p.bind(x, y), (y,), (np.ones(2),))
    assert_close(t, -np.ones(2))
    gx, gy = ft.grad(lambda x, y: twice_minus_p.bind(x, y).sum(), argnums=(0, 1))(x, y)
    assert_close(gx, 2 * np.ones(2))
    assert_close(gy, -np.ones(2))
    assert ad.jvp_rules[twice_minus_p] is not None
    assert transpose.transpose_rules[twice_minus_p] is not None


def test_deftranspose_leaves_the_jvp_alone():
    rule = ad.jvp_rules[flip_p]
    transpose.deftranspose(flip_p, transpose.transpose_rules[flip_p])
    assert ad.jvp_rules[flip_p] is rule
    x = np.arange(3.0)
    w = np.array([1.0, 10.0, 100.0])
    check_grads(lambda x: (flip_p.bind(x) * w).sum(), [x], 2, np.random.default_rng(0))


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_defleading_dims_batches_like_a_loop(in_axis):
    rng = np.random.default_rng(in_axis)
    a = rng.standard_normal((4, 3, 2, 5))  # batch of 3 leading members of (2, 5) matrices
    batched = np.moveaxis(a, 1, in_axis)
    got = ft.vmap(gram_p.bind, in_axes=in_axis)(batched)
    want = np.stack([_gram_impl(a[:, i]) for i in range(3)])
    assert_close(got, want)
    check_grads(lambda a: ft.vmap(gram_p.bind, in_axes=in_axis)(a).sum(), [batched], 1, rng)


def test_factory_abstract_eval_override():
    prim = elementwise.binary("test_first_shape", lambda x, y: x, None,
                              abstract_eval=lambda x, y: x)
    try:
        assert prim.abstract_eval(ShapedArray((2,), np.float32),
                                  ShapedArray((3, 2), np.float64)) == ShapedArray(
            (2,), np.float32)
    finally:
        for table in (impl_rules, abstract_eval_rules, ad.jvp_rules, batching.batching_rules):
            table.pop(prim, None)
