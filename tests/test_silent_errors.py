"""No silent wrong answers: concretization of traced values, NumPy on tracers,
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
    with pytest.raises(ConcretizationTypeError) as info:
        TRANSFORMS[transform](SCALAR_CONVERSIONS[conversion])
    if transform == "vmap":  # the usual error for a batched value, naming the batch size
        assert "2 different values" in str(info.value)
    else:
        assert "drop its derivative" in str(info.value)
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
    (lambda x: np.real_if_close(x), "functrans.numpy has no real_if_close"),
    (lambda x: np.add.reduce(x), "functrans.numpy has no add.reduce"),
    (lambda x: np.sin(x, out=np.empty(2)), "use functrans.numpy.sin"),
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


# ------------------------------------------------------------------------------------------
# 2. Bad input gets a clear named error, and the next call works
# ------------------------------------------------------------------------------------------


def _next_call_works():
    assert ft.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0) == (3.0, 2.0)
    assert np.array_equal(ft.vmap(lambda x: 2.0 * x)(np.ones(2)), [2.0, 2.0])


@pytest.mark.parametrize("argnums", [(0, 0), (1, -1), (-2, 0)])
@pytest.mark.parametrize("transform", [ft.grad, ft.value_and_grad, ft.jacfwd, ft.jacrev])
def test_duplicated_argnums_are_refused(transform, argnums):
    # Before: grad(f, argnums=(0, 0)) returned a zero gradient for the first entry.
    with pytest.raises(ValueError, match=r"argnums .* more than once"):
        transform(lambda x, y: x * y, argnums=argnums)(2.0, 3.0)
    _next_call_works()


@pytest.mark.parametrize("axis_size", [2.5, "2", -1, True, np.float64(2.0)])
def test_vmap_axis_size_must_be_a_non_negative_int(axis_size):
    # Before: axis_size=2.5 silently made 2 batch members.
    with pytest.raises(TypeError, match="vmap: axis_size must be a non-negative int"):
        ft.vmap(lambda x: x, in_axes=None, axis_size=axis_size)(1.0)
    assert ft.vmap(lambda x: x, in_axes=None, axis_size=np.int64(3))(1.0).shape == (3,)
    _next_call_works()


BAD_DTYPE_CALLS = {
    "grad": lambda a: ft.grad(lambda x: x)(a),
    "jvp": lambda a: ft.jvp(lambda x: x, (a,), (a,)),
    "vjp": lambda a: ft.vjp(lambda x: x, a),
    "linearize": lambda a: ft.linearize(lambda x: x, a),
    "vmap": lambda a: ft.vmap(lambda x: x)(a),
    "jacfwd": lambda a: ft.jacfwd(lambda x: x)(a),
    "make_jaxpr": lambda a: ft.make_jaxpr(lambda x: x)(a),
    "eval_shape": lambda a: ft.eval_shape(lambda x: x, a),
    "eval_shape_of_struct": lambda a: ft.eval_shape(
        lambda x: x, ft.ShapeDtypeStruct(a.shape, a.dtype)),
}


@pytest.mark.parametrize("dtype", [object, str, bytes])
@pytest.mark.parametrize("call", sorted(BAD_DTYPE_CALLS))
def test_object_string_and_bytes_arrays_are_refused(call, dtype):
    # Before: vmap, make_jaxpr and eval_shape accepted them.
    name = call.split("_of_")[0]
    with pytest.raises(TypeError, match=rf"{name}: .* has dtype .*numeric or boolean"):
        BAD_DTYPE_CALLS[call](np.array([1, 2], dtype=dtype))
    _next_call_works()


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
@pytest.mark.parametrize("transform", ["grad", "vmap", "jvp", "make_jaxpr"])
def test_matrix_and_masked_inputs_are_refused(transform):
    calls = {
        "grad": lambda a: ft.grad(lambda x: fnp.sum(x * x))(a),
        "vmap": lambda a: ft.vmap(lambda x: 2.0 * x)(a),
        "jvp": lambda a: ft.jvp(lambda x: 2.0 * x, (a,), (np.ones_like(np.asarray(a)),)),
        "make_jaxpr": lambda a: ft.make_jaxpr(lambda x: 2.0 * x)(a),
    }
    # Before: vmap over a matrix gave a (1, 2) matrix for (2,) rows; grad dropped the mask.
    with pytest.raises(TypeError, match=r"numpy\.matrix .*np\.asarray"):
        calls[transform](np.matrix([[1.0, 2.0]]))
    with pytest.raises(TypeError, match=r"masked array .*mask"):
        calls[transform](np.ma.masked_array([1.0, 2.0], mask=[0, 1]))
    _next_call_works()


class _Duck:
    shape = (2,)
    dtype = np.dtype(np.float64)


@pytest.mark.parametrize("value, match", [
    (ft.ShapeDtypeStruct((2,), np.float64), "ShapeDtypeStruct.*eval_shape"),
    (_Duck(), "_Duck is not an array"),
])
@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp", "linearize", "vmap"])
def test_shape_structs_and_duck_types_are_refused(transform, value, match):
    calls = {
        "grad": lambda a: ft.grad(lambda x: fnp.sum(x))(a),
        "jvp": lambda a: ft.jvp(lambda x: x, (a,), (np.ones(2),)),
        "vjp": lambda a: ft.vjp(lambda x: x, a),
        "linearize": lambda a: ft.linearize(lambda x: x, a),
        "vmap": lambda a: ft.vmap(lambda x: x)(a),
    }
    # Before: jvp/vjp/linearize returned the ShapeDtypeStruct as the "value".
    with pytest.raises(TypeError, match=rf"{transform}: .*{match}"):
        calls[transform](value)
    _next_call_works()


def test_eval_jaxpr_and_closed_jaxpr_name_the_counts():
    closed = ft.make_jaxpr(lambda x: x * np.arange(2.0))(np.ones(2))
    with pytest.raises(TypeError, match="takes 1 constants and 1 arguments, got 0 constants"):
        ft.eval_jaxpr(closed.jaxpr, [], np.ones(2))
    with pytest.raises(TypeError, match="got 1 constants and 0 arguments"):
        ft.eval_jaxpr(closed.jaxpr, closed.consts)
    with pytest.raises(TypeError, match="1 constvars but 0 constants"):
        ft.ClosedJaxpr(closed.jaxpr, [])
    assert np.array_equal(ft.eval_jaxpr(closed.jaxpr, closed.consts, np.ones(2))[0], [0, 1])


def test_linear_transpose_checks_cotangent_dtype_and_shape():
    f_t = ft.linear_transpose(lambda x: 2.0 * x, np.zeros(2))
    # Before: an AssertionError from inside the transpose rules.
    with pytest.raises(TypeError, match="cotangent leaf 0 has dtype float32.*float64"):
        f_t(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="cotangent leaf 0 has dtype int64"):
        f_t(np.ones(2, np.int64))
    with pytest.raises(ValueError, match=r"shape \(3,\), expected \(2,\)"):
        f_t(np.ones(3))
    assert np.array_equal(f_t(np.ones(2))[0], [2.0, 2.0])
    f_s = ft.linear_transpose(lambda x: 3.0 * x, np.float32(0.0))
    out = f_s(1.0)[0]  # a Python scalar cotangent takes the output's dtype
    assert out == 3.0 and out.dtype == np.float32


@pytest.mark.parametrize("rule, got", [
    (lambda p, t: p[0] * 2.0, r"got a \w+"),  # a float, or a tracer under make_jaxpr
    (lambda p, t: (p[0] * 2.0, t[0], t[0]), "got a tuple of length 3"),
    (lambda p, t: np.array([1.0, 2.0]), "got a ndarray"),
])
@pytest.mark.parametrize("transform", ["jvp", "grad", "make_jaxpr_of_grad"])
def test_custom_jvp_rule_must_return_a_pair(rule, got, transform):
    @ft.custom_jvp
    def double(x):
        return 2.0 * x
    double.defjvp(rule)
    call = {"jvp": lambda: ft.jvp(double, (1.0,), (1.0,)),
            "grad": lambda: ft.grad(double)(1.0),
            "make_jaxpr_of_grad": lambda: ft.make_jaxpr(ft.grad(double))(1.0)}[transform]
    # Before: a two-element array was unpacked as (primal, tangent), giving grad 0.0.
    with pytest.raises(TypeError, match=rf"'double' must return a pair .*{got}"):
        call()
    _next_call_works()


ZERO_BATCH = {
    "while_loop": lambda x: lax.while_loop(lambda v: fnp.sum(v) < 10.0, lambda v: v + 1.0, x),
    "fori_loop": lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2.0, x),
    "scan": lambda x: lax.scan(lambda c, a: (c + a, c * a), 0.0, x)[1],
    "cond": lambda x: lax.cond(fnp.sum(x) > 0, fnp.sin, fnp.cos, x),
}


@pytest.mark.parametrize("name", sorted(ZERO_BATCH))
def test_zero_size_batches_through_control_flow(name):
    fun = ZERO_BATCH[name]
    # Before: while_loop under vmap failed with "reduce_max: reduction over an axis of size 0".
    out = ft.vmap(fun)(np.zeros((0, 3)))
    assert out.shape == (0, 3)
    _, t = ft.jvp(ft.vmap(fun), (np.zeros((0, 3)),), (np.zeros((0, 3)),))
    assert t.shape == (0, 3)
    if name != "while_loop":  # while_loop has no reverse mode, as in JAX
        g = ft.grad(lambda x: fnp.sum(ft.vmap(fun)(x)))(np.zeros((0, 3)))
        assert g.shape == (0, 3)
    assert ft.vmap(fun)(np.zeros((2, 3))).shape == (2, 3)


# ------------------------------------------------------------------------------------------
# 4. custom_jvp with Python control flow on concrete values
# ------------------------------------------------------------------------------------------


@ft.custom_jvp
def _relu(x):
    if x > 0:  # Python control flow on the value, as JAX allows under jvp/grad
        return x
    return 0.0 * x


@_relu.defjvp
def _relu_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    if x > 0:
        return _relu(x), dx
    return _relu(x), 0.0 * dx


CUSTOM_CONCRETE = {
    "grad": lambda f, x: ft.grad(f)(x),
    "value_and_grad": lambda f, x: ft.value_and_grad(f)(x)[1],
    "jvp": lambda f, x: ft.jvp(f, (x,), (1.0,))[1],
    "vjp": lambda f, x: ft.vjp(f, x)[1](1.0)[0],
    "linearize": lambda f, x: ft.linearize(f, x)[1](1.0),
    "jacfwd": lambda f, x: ft.jacfwd(f)(x),
    "jacrev": lambda f, x: ft.jacrev(f)(x),
}


@pytest.mark.parametrize("x, slope", [(2.0, 1.0), (-2.0, 0.0)])
@pytest.mark.parametrize("transform", sorted(CUSTOM_CONCRETE))
def test_custom_jvp_runs_on_concrete_values(transform, x, slope):
    # Before: the function was traced abstractly first, so `if x > 0` raised.
    assert CUSTOM_CONCRETE[transform](_relu, x) == slope
    assert CUSTOM_CONCRETE[transform](lambda y: _relu(y) * y, x) == 2.0 * slope * x


def test_custom_jvp_on_concrete_values_at_higher_order():
    assert ft.grad(ft.grad(lambda y: _relu(y) * y))(2.0) == 2.0
    assert ft.grad(ft.grad(lambda y: _relu(y) * y))(-2.0) == 0.0


def test_custom_jvp_still_staged_when_abstract():
    with pytest.raises(ConcretizationTypeError):
        ft.make_jaxpr(ft.grad(_relu))(2.0)
    with pytest.raises(ConcretizationTypeError):
        ft.vmap(ft.grad(_relu))(np.array([1.0, -1.0]))

    @ft.custom_jvp
    def smooth(x):
        return fnp.sin(x)
    smooth.defjvp(lambda p, t: (smooth(p[0]), fnp.cos(p[0]) * t[0]))
    assert "custom_jvp_call" in str(ft.make_jaxpr(smooth)(1.0))
    assert "cos" in str(ft.make_jaxpr(ft.grad(smooth))(1.0))
    assert np.allclose(ft.vmap(ft.grad(smooth))(np.array([0.0, 1.0])), np.cos([0.0, 1.0]))


def test_custom_jvp_closing_over_a_differentiated_value_is_still_an_error():
    def f(y):
        @ft.custom_jvp
        def h(x):
            return x * y
        h.defjvp(lambda p, t: (h(p[0]), t[0] * y))
        return h(y)
    with pytest.raises(TypeError, match="closes over a value that is being differentiated"):
        ft.grad(f)(2.0)
