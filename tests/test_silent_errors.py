"""No silent wrong answers (issue 11): concretization of traced values, NumPy on tracers,
bad inputs, deep pytrees, pickling, and custom_jvp rules with Python control flow."""
from __future__ import annotations

import math

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.core import ConcretizationTypeError, TracerArrayConversionError

# ------------------------------------------------------------------------------------------
# 1. Never drop a derivative silently
# ------------------------------------------------------------------------------------------

TRANSFORMS = {
    "grad": lambda f: ft.grad(f)(3.0),
    "jvp": lambda f: ft.jvp(f, (3.0,), (1.0,)),
    "vjp": lambda f: ft.vjp(f, 3.0),
    "vmap": lambda f: ft.vmap(f)(np.array([3.0, 4.0])),
}

SCALAR_CONVERSIONS = {
    "float": lambda x: float(x) ** 2 + x,
    "complex": lambda x: complex(x).real + x,
    "item": lambda x: x.item() + x,
    "tolist": lambda x: x.tolist() + x,
    "math.exp": lambda x: math.exp(x) + x,
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("conversion", sorted(SCALAR_CONVERSIONS))
def test_scalar_conversion_of_a_tracer_raises(transform, conversion):
    with pytest.raises(ConcretizationTypeError, match="drop its derivative") as info:
        TRANSFORMS[transform](SCALAR_CONVERSIONS[conversion])
    assert "functrans.numpy" in str(info.value)
    # and the next call works
    assert ft.grad(lambda x: x * x)(3.0) == 6.0


def test_float_under_grad_no_longer_gives_a_wrong_derivative():
    # Before: grad(lambda x: float(x) ** 2 + x)(3.0) returned 1.0; the derivative is 7.0.
    with pytest.raises(ConcretizationTypeError, match=r"float\(\)"):
        ft.grad(lambda x: float(x) ** 2 + x)(3.0)
    # The suggested fix gives a constant on purpose.
    assert ft.grad(lambda x: float(lax.stop_gradient(x)) ** 2 + x)(3.0) == 1.0


@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp"])
def test_bool_int_and_index_of_a_concrete_primal_still_work(transform):
    def f(x):
        n = int(x)  # piecewise constant: allowed when the primal is concrete
        y = x * n if x > 0 else -x
        return y + fnp.asarray([1.0, 2.0, 3.0, 4.0])[n]
    out = TRANSFORMS[transform](f)
    if transform == "grad":
        assert out == 3.0


def test_bool_under_vmap_still_refused():
    with pytest.raises(ConcretizationTypeError, match="batched"):
        ft.vmap(lambda x: x if x > 0 else -x)(np.array([1.0, -1.0]))


def test_storing_a_tracer_into_a_numpy_array_raises():
    def f(x):
        buf = np.zeros(2)
        buf[0] = x[0]  # NumPy calls float(); the derivative would be lost
        return fnp.sum(x) + buf[0]
    with pytest.raises(ValueError) as info:
        ft.grad(f)(np.array([1.0, 2.0]))
    assert isinstance(info.value.__cause__, ConcretizationTypeError)

    def g(x):
        buf = np.zeros(2)
        buf[:] = x
        return fnp.sum(x) + fnp.sum(buf)
    with pytest.raises(TracerArrayConversionError, match="functrans.numpy.asarray"):
        ft.grad(g)(np.array([1.0, 2.0]))


def test_np_asarray_of_a_tracer_raises():
    with pytest.raises(TracerArrayConversionError, match="functrans.numpy.asarray"):
        ft.grad(lambda x: np.asarray(x) + x)(1.0)


def test_numpy_functions_with_a_counterpart_dispatch():
    # Documented in docs/sharp_bits.md: NumPy functions that functrans.numpy defines run it.
    assert ft.grad(lambda x: np.sin(x))(1.0) == pytest.approx(math.cos(1.0))
    assert np.allclose(ft.grad(lambda x: np.sum(np.exp(x)))(np.zeros(2)), 1.0)
    out = ft.vmap(lambda x: np.dot(x, x))(np.ones((3, 2)))
    assert np.allclose(out, 2.0)


@pytest.mark.parametrize("call, advice", [
    (lambda x: np.unique(x), "functrans.numpy has no unique"),
    (lambda x: np.add.reduce(x), "functrans.numpy has no add.reduce"),
    (lambda x: np.sin(x, out=np.empty(2)), "use functrans.numpy.sin"),
    (lambda x: np.linalg.qr(x.reshape(1, 2)), "numpy.linalg.qr"),
])
def test_numpy_functions_without_counterpart_fail_the_same_way(call, advice):
    with pytest.raises(TracerArrayConversionError, match="cannot be applied to a functrans "
                       "tracer") as info:
        ft.grad(lambda x: fnp.sum(call(x)))(np.ones(2))
    assert advice in str(info.value)


def test_item_assignment_on_a_tracer_points_to_the_functional_update():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match="dynamic_update_slice"):
        ft.grad(lambda x: fnp.sum(f(x)))(np.ones(2))
    with pytest.raises(TypeError, match="item assignment"):
        ft.vmap(f)(np.ones((2, 2)))


# ------------------------------------------------------------------------------------------
# 3. Deep pytrees and serialization
# ------------------------------------------------------------------------------------------

DEPTH = 3000


def _deep(leaf, depth: int = DEPTH):
    """``leaf`` inside ``depth`` levels of tuples, lists and dicts."""
    tree = leaf
    for i in range(depth):
        tree = [tree] if i % 3 else ({"a": tree} if i % 2 else (tree,))
    return tree


def _bottom(tree):
    while isinstance(tree, (list, tuple, dict)):
        tree = tree["a"] if isinstance(tree, dict) else tree[0]
    return tree


def test_deep_pytrees_flatten_unflatten_compare_and_print():
    from functrans.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten
    leaves, treedef = tree_flatten(_deep(2.0))
    assert leaves == [2.0] and treedef.num_nodes == DEPTH + 1
    assert treedef == tree_structure(_deep(1.0))
    assert hash(treedef) == hash(tree_structure(_deep(1.0)))
    assert treedef != tree_structure(_deep(1.0, DEPTH - 1))
    assert _bottom(tree_unflatten(treedef, [3.0])) == 3.0
    assert _bottom(tree_map(lambda a, b: a + b, _deep(1.0), _deep(2.0))) == 3.0
    assert repr(treedef).count("[") == DEPTH // 3 * 2


def test_deep_pytrees_pass_through_every_transform():
    def f(tree):
        return _bottom(tree) ** 2
    tree, ones = _deep(2.0), _deep(1.0)
    assert _bottom(ft.grad(f)(tree)) == 4.0
    assert ft.value_and_grad(f)(tree)[0] == 4.0
    assert ft.jvp(f, (tree,), (ones,)) == (4.0, 4.0)
    assert _bottom(ft.vjp(lambda t: t, tree)[1](ones)[0]) == 1.0
    assert ft.linearize(f, tree)[1](ones) == 4.0
    assert np.array_equal(_bottom(ft.vmap(lambda t: t)(_deep(np.ones(2)))), np.ones(2))
    assert _bottom(ft.jacfwd(f)(tree)) == 4.0
    assert _bottom(ft.jacrev(f)(tree)) == 4.0
    assert _bottom(_bottom(ft.hessian(f)(tree))) == 2.0
    assert len(ft.make_jaxpr(f)(tree).eqns) == 1
    assert _bottom(ft.eval_shape(lambda t: t, tree)).shape == ()


def _program(x, y):
    z = lax.cond(fnp.sum(x) > 0, fnp.sin, fnp.cos, x)
    c, ys = lax.scan(lambda c, a: (c + a, c * a), 0.0, z)
    w = lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0, y)
    return fnp.sum(ys) + c + w + fnp.sum(x * np.arange(3.0))


@pytest.mark.parametrize("transform", ["none", "grad", "vmap"])
@pytest.mark.parametrize("copy_kind", ["pickle", "deepcopy"])
def test_jaxprs_survive_pickle_and_deepcopy(transform, copy_kind):
    import copy
    import pickle
    fun = {"none": _program, "grad": ft.grad(_program),
           "vmap": ft.vmap(_program, (0, None))}[transform]
    args = (np.ones((2, 3)) if transform == "vmap" else np.ones(3), 1.5)
    closed = ft.make_jaxpr(fun)(*args)
    copied = (pickle.loads(pickle.dumps(closed)) if copy_kind == "pickle"
              else copy.deepcopy(closed))
    assert copied.jaxpr is not closed.jaxpr
    assert {e.primitive for e in copied.eqns} == {e.primitive for e in closed.eqns}
    ft.check_jaxpr(copied.jaxpr)
    assert str(copied) == str(closed)
    want = ft.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    got = ft.eval_jaxpr(copied.jaxpr, copied.consts, *args)
    assert all(np.allclose(a, b) for a, b in zip(got, want))
    # The copy differentiates too: its primitives carry their rules.
    g = ft.grad(lambda x: fnp.sum(ft.eval_jaxpr(copied.jaxpr, copied.consts, x, 1.5)[0]))
    if transform == "none":
        assert np.allclose(g(args[0]), ft.grad(_program)(*args))


def test_tracers_refuse_pickling_and_deepcopy_works():
    import copy
    import pickle

    def f(x):
        with pytest.raises(TypeError, match="Cannot pickle a tracer"):
            pickle.dumps(x)
        params = copy.deepcopy({"scale": x, "n": [x, 2]})
        assert params["scale"] is x and params["n"][0] is x
        return params["scale"] * params["n"][0]
    assert ft.grad(f)(3.0) == 6.0
    assert np.allclose(ft.vmap(f)(np.arange(3.0)), np.arange(3.0) ** 2)
    assert ft.grad(lambda x: x * 2.0)(1.0) == 2.0
