"""The API aliases JAX programs use: ``functrans.jacobian``, ``functrans.test_util``,
``functrans.ad_checkpoint`` and the checkpoint policies that read ``checkpoint_name`` tags
(what a policy saves is read off the residuals ``linearize`` keeps)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
import functrans.test_util as test_util
from functrans.ad_checkpoint import checkpoint, checkpoint_name, checkpoint_policies
from functrans.core import ShapedArray
from functrans.interpreters.ad import linearize_flat
from functrans.primitives.checkpoint import name_p
from functrans.primitives.elementwise import sin_p
from sweep import assert_close

policies = checkpoint_policies


def test_jacobian_is_jacrev():
    assert ft.jacobian is ft.jacrev
    x = np.array([0.3, -0.7])
    assert_close(ft.jacobian(lambda x: fnp.sin(x) * x[0])(x), ft.jacfwd(
        lambda x: fnp.sin(x) * x[0])(x))


def test_test_util_check_grads():
    assert test_util.check_grads is ft.testing.check_grads
    test_util.check_grads(lambda x: fnp.exp(x) * x, (np.array([0.2, 0.4]),), order=2)
    with pytest.raises(AssertionError):
        test_util.check_grads(_wrong_derivative, (np.array([0.2, 0.4]),), order=1)


@ft.custom_jvp
def _wrong_derivative(x):
    return fnp.sin(x)


_wrong_derivative.defjvp(lambda primals, tangents: (fnp.sin(primals[0]), 2.0 * tangents[0]))


def test_checkpoint_name_is_the_identity_everywhere():
    x = np.array([0.5, 1.5])
    f = lambda x: fnp.sum(fnp.sin(checkpoint_name(x * x, "sq")))  # noqa: E731
    assert_close(f(x), np.sum(np.sin(x * x)))
    assert_close(ft.grad(f)(x), 2 * x * np.cos(x * x))
    assert_close(ft.vmap(lambda r: checkpoint_name(r, "r") * 2)(x), 2 * x)
    assert_close(ft.jvp(lambda x: checkpoint_name(x, "t"), (x,), (np.ones(2),))[1], np.ones(2))
    # Linear: transposable (linear_transpose) and staged as one `name` equation.
    transpose = ft.linear_transpose(lambda t: checkpoint_name(3.0 * t, "t"), x)
    assert_close(transpose(np.ones(2))[0], np.full(2, 3.0))
    jaxpr = ft.make_jaxpr(lambda x: checkpoint_name(x, "tag"))(x)
    assert [e.primitive.name for e in jaxpr.eqns] == ["name"]
    assert jaxpr.eqns[0].params["name"] == "tag"
    with pytest.raises(TypeError, match="checkpoint_name: name must be a str"):
        checkpoint_name(x, 3)
    with pytest.raises(TypeError, match="save_only_these_names: names must be str"):
        policies.save_only_these_names(1)


def _residuals(f, x) -> list:
    return [np.asarray(c) for c in linearize_flat(lambda x: [f(x)], [x])[2]]


def _holds(residuals, value) -> bool:
    return any(r.shape == value.shape and np.allclose(r, value, rtol=0, atol=1e-15)
               for r in residuals)


RNG = np.random.default_rng(11)
W, B, X = RNG.standard_normal((5, 4)), RNG.standard_normal(4), RNG.standard_normal((3, 5))
PRODUCT, ACTIVATION = X @ W, np.tanh(X @ W + B)


def _layer(x):
    product = checkpoint_name(fnp.dot(x, W), "product")
    activation = checkpoint_name(fnp.tanh(product + B), "activation")
    return fnp.sum(fnp.sin(activation))


@pytest.mark.parametrize("names, saved, recomputed", [
    (("product",), [PRODUCT], [X, ACTIVATION]),
    # sin's derivative reads the tagged activation; tanh's reads tanh's own (untagged)
    # output, which is recomputed from the input.
    (("activation",), [ACTIVATION, X], [PRODUCT]),
    (("product", "activation"), [PRODUCT, ACTIVATION], [X]),
    # No tagged value has these names: the block keeps its input and recomputes all.
    (("other",), [X], [PRODUCT, ACTIVATION]),
])
def test_save_only_these_names_saves_exactly_the_named_values(names, saved, recomputed):
    f = checkpoint(_layer, policy=policies.save_only_these_names(*names))
    res = _residuals(f, X)
    assert all(_holds(res, v) for v in saved)
    assert not any(_holds(res, v) for v in recomputed)
    assert_close(ft.grad(f)(X), ft.grad(_layer)(X))


def test_save_anything_except_these_names():
    aval = ShapedArray((3,), np.dtype("float64"))
    policy = policies.save_anything_except_these_names("activation", "other")
    assert not policy(name_p, aval, name="activation") and policy(name_p, aval, name="kept")
    assert policy(sin_p, aval)
    # Excluding the names changes nothing else: the derived values are still kept, so
    # the input is not needed, and the derivatives are unchanged at every order.
    f = checkpoint(_layer, policy=policy)
    res = _residuals(f, X)
    assert not _holds(res, X)
    assert sum(r.nbytes for r in res) == sum(r.nbytes for r in _residuals(
        checkpoint(_layer, policy=policies.everything_saveable), X))
    assert_close(ft.grad(f)(X), ft.grad(_layer)(X))
    assert_close(ft.hessian(lambda x: f(x))(X[0]), ft.hessian(_layer)(X[0]))


def test_save_from_both_policies():
    both = policies.save_from_both_policies(policies.save_only_these_names("product"),
                                            policies.save_only_these_names("activation"))
    res = _residuals(checkpoint(_layer, policy=both), X)
    assert _holds(res, ACTIVATION) and not _holds(res, X)


def test_dots_with_no_batch_dims_saveable():
    stack = RNG.standard_normal((2, 3, 3))
    batched_product = np.einsum("bij,bjk->bik", stack, stack)
    plain_product = stack[0] @ W[:3]

    def f(s):
        batched = fnp.einsum("bij,bjk->bik", s, s)  # dot_general with a batch dimension
        plain = fnp.dot(s[0], W[:3])
        return fnp.sum(fnp.sin(batched)) + fnp.sum(fnp.sin(plain))

    policy = policies.dots_with_no_batch_dims_saveable
    res = _residuals(checkpoint(f, policy=policy), stack)
    assert _holds(res, plain_product) and not _holds(res, batched_product)
    dots = _residuals(checkpoint(f, policy=policies.dots_saveable), stack)
    assert _holds(dots, plain_product) and _holds(dots, batched_product)
    assert_close(ft.grad(checkpoint(f, policy=policy))(stack), ft.grad(f)(stack))
