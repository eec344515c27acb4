"""Errors teach: each misuse raises a named exception whose message names the transform and
the offending shape, dtype or argument; and after any error the library works normally."""
from __future__ import annotations

import re

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.core import trace_stack
from sweep import transforms


def assert_library_healthy():
    assert len(trace_stack()) == 1, trace_stack()
    assert ft.grad(lambda x: x ** 3)(2.0) == 12.0
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.sin(x)))(np.zeros(2)), [1.0, 1.0])
    assert len(trace_stack()) == 1


@pytest.fixture(autouse=True)
def healthy_after_each_test():
    yield
    assert_library_healthy()


def raises(exc_type, thunk, *fragments):
    """Run ``thunk``, expecting ``exc_type`` with every fragment in the message."""
    with pytest.raises(exc_type) as info:
        thunk()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in message:\n{message}"
    assert_library_healthy()
    return info.value


V3 = np.array([1.0, 2.0, 3.0])
M23 = np.ones((2, 3))

# (exception type, thunk, fragments that the message must contain)
MISUSES = {
    # grad
    "grad_nonscalar_output": (
        TypeError, lambda: ft.grad(lambda x: x * 2.0)(V3), ["grad", "scalar", "(3,)"]),
    "grad_pytree_output": (
        TypeError, lambda: ft.grad(lambda x: (fnp.sum(x), fnp.sum(x)))(V3), ["grad", "scalar"]),
    "value_and_grad_nonscalar_output": (
        TypeError, lambda: ft.value_and_grad(lambda x: x)(M23), ["grad", "(2, 3)"]),
    "grad_int_output": (
        TypeError, lambda: ft.grad(lambda x: fnp.sum(x).astype(np.int32))(V3),
        ["grad", "int32"]),
    "grad_bool_output": (
        TypeError, lambda: ft.grad(lambda x: fnp.sum(x) > 0)(V3), ["grad", "bool"]),
    "grad_int_input": (
        TypeError, lambda: ft.grad(lambda x: x * 2.0)(3), ["grad", "int64", "allow_int"]),
    "grad_int_array_input": (
        TypeError, lambda: ft.grad(lambda x: fnp.sum(x * 2.0))(np.arange(3, dtype=np.int32)),
        ["grad", "int32", "allow_int"]),
    "grad_int_second_argnum": (
        TypeError, lambda: ft.grad(lambda x, n: x * n, argnums=(0, 1))(1.0, 2),
        ["grad", "int64", "allow_int"]),
    "grad_bool_input": (
        TypeError, lambda: ft.grad(lambda x: fnp.sum(x * 2.0))(np.array([True])),
        ["grad", "bool", "allow_int"]),
    "grad_string_argument": (
        TypeError, lambda: ft.grad(lambda x: 1.0)("abc"), ["grad", "str"]),
    "grad_string_output": (
        TypeError, lambda: ft.grad(lambda x: "abc")(1.0), ["grad", "str"]),
    # argnums
    "grad_argnums_too_large": (
        ValueError, lambda: ft.grad(lambda x: x, argnums=1)(1.0), ["grad", "argnums", "1"]),
    "grad_argnums_tuple_out_of_range": (
        ValueError, lambda: ft.grad(lambda x, y: x * y, argnums=(0, 2))(1.0, 2.0),
        ["grad", "argnums", "(0, 2)", "2 positional"]),
    "grad_argnums_too_negative": (
        ValueError, lambda: ft.grad(lambda x: x, argnums=-2)(1.0), ["grad", "argnums", "-2"]),
    "value_and_grad_argnums": (
        ValueError, lambda: ft.value_and_grad(lambda x: x, argnums=3)(1.0), ["grad", "argnums"]),
    "jacfwd_argnums": (
        ValueError, lambda: ft.jacfwd(lambda x: x, argnums=(0, 3))(V3),
        ["jacfwd", "argnums", "(0, 3)"]),
    "jacrev_argnums": (
        ValueError, lambda: ft.jacrev(lambda x: x, argnums=5)(V3), ["jacrev", "argnums", "5"]),
    "hessian_argnums": (
        ValueError, lambda: ft.hessian(lambda x: fnp.sum(x), argnums=1)(V3), ["argnums", "1"]),
    # jvp tangents
    "jvp_tangent_structure": (
        TypeError, lambda: ft.jvp(lambda x: x, (V3,), ((V3, V3),)), ["jvp", "structure"]),
    "jvp_tangent_dict_keys": (
        TypeError, lambda: ft.jvp(lambda d: d["a"], ({"a": V3},), ({"b": V3},)),
        ["jvp", "structure"]),
    "jvp_tangent_count": (
        TypeError, lambda: ft.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,)), ["jvp", "structure"]),
    "jvp_tangent_shape": (
        ValueError, lambda: ft.jvp(lambda x: x, (V3,), (np.ones(4),)),
        ["jvp", "shape", "(3,)", "(4,)"]),
    "jvp_tangent_dtype": (
        TypeError, lambda: ft.jvp(lambda x: x, (V3,), (V3.astype(np.float32),)),
        ["jvp", "float64", "float32"]),
    "jvp_int_tangent": (
        TypeError, lambda: ft.jvp(lambda x: x, (V3,), (np.arange(3),)),
        ["jvp", "float64", "int64"]),
    "jvp_not_tuples": (
        TypeError, lambda: ft.jvp(lambda x: x, V3, V3), ["jvp", "tuple"]),
    "linearize_tangent_shape": (
        ValueError, lambda: ft.linearize(fnp.sin, V3)[1](np.ones(2)),
        ["linearize", "(3,)", "(2,)"]),
    # vjp cotangents
    "vjp_cotangent_structure": (
        TypeError, lambda: ft.vjp(lambda x: (x, x), V3)[1](V3), ["vjp", "structure"]),
    "vjp_cotangent_shape": (
        ValueError, lambda: ft.vjp(fnp.sin, V3)[1](np.ones(4)), ["vjp", "(4,)", "(3,)"]),
    "vjp_cotangent_dtype": (
        TypeError, lambda: ft.vjp(fnp.sin, V3)[1](np.ones(3, np.float32)),
        ["vjp", "float32", "float64"]),
    # vmap
    "vmap_in_axes_out_of_range": (
        ValueError, lambda: ft.vmap(lambda x: x, in_axes=2)(M23),
        ["vmap", "in_axes", "2", "(2, 3)"]),
    "vmap_in_axes_negative_out_of_range": (
        ValueError, lambda: ft.vmap(lambda x: x, in_axes=-3)(M23),
        ["vmap", "in_axes", "-3", "(2, 3)"]),
    "vmap_in_axes_scalar_argument": (
        ValueError, lambda: ft.vmap(lambda x, y: x * y)(V3, 2.0), ["vmap", "in_axes", "()"]),
    "vmap_inconsistent_sizes": (
        ValueError, lambda: ft.vmap(lambda x, y: x + y)(M23, np.ones((4, 3))),
        ["vmap", "size", "(2, 3)", "(4, 3)"]),
    "vmap_inconsistent_sizes_other_axis": (
        ValueError, lambda: ft.vmap(lambda x, y: x, in_axes=(1, 0))(M23, M23),
        ["vmap", "size", "3", "2"]),
    "vmap_axis_size_disagrees": (
        ValueError, lambda: ft.vmap(lambda x: x, axis_size=5)(M23), ["vmap", "size", "5"]),
    "vmap_in_axes_wrong_length": (
        ValueError, lambda: ft.vmap(lambda x, y: x, in_axes=(0,))(V3, V3),
        ["vmap", "in_axes", "2"]),
    "vmap_in_axes_tree_mismatch": (
        ValueError, lambda: ft.vmap(lambda d: d["a"], in_axes=({"b": 0},))({"a": V3}),
        ["vmap", "in_axes"]),
    "vmap_in_axes_tuple_vs_list": (
        ValueError, lambda: ft.vmap(lambda p: p[0], in_axes=([0, 0],))((V3, V3)),
        ["vmap", "in_axes"]),
    "vmap_in_axes_bad_type": (
        TypeError, lambda: ft.vmap(lambda x: x, in_axes="0")(V3), ["vmap", "in_axes"]),
    "vmap_out_axes_none_for_batched_output": (
        ValueError, lambda: ft.vmap(lambda x: x * 2.0, out_axes=None)(V3),
        ["vmap", "out_axes", "None"]),
    "vmap_out_axes_out_of_range": (
        ValueError, lambda: ft.vmap(lambda x: x, out_axes=2)(V3), ["vmap", "out_axes", "2"]),
    "vmap_out_axes_tree_mismatch": (
        ValueError, lambda: ft.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(V3),
        ["vmap", "out_axes"]),
    "vmap_nothing_mapped": (
        ValueError, lambda: ft.vmap(lambda x: x, in_axes=None)(V3), ["vmap", "axis_size"]),
    "vmap_nothing_mapped_tuple": (
        ValueError, lambda: ft.vmap(lambda x, y: x, in_axes=(None, None))(V3, V3),
        ["vmap", "axis_size"]),
    # has_aux and outputs
    "grad_has_aux_not_pair": (
        TypeError, lambda: ft.grad(lambda x: x, has_aux=True)(1.0), ["grad", "has_aux"]),
    # shapes of array operations
    "matmul_contracting_sizes": (
        ValueError, lambda: fnp.matmul(M23, np.ones((2, 4))), ["matmul", "(2, 3)", "(2, 4)"]),
    "matmul_contracting_sizes_vector": (
        ValueError, lambda: ft.grad(lambda x: fnp.sum(fnp.matmul(M23, x)))(np.ones(4)),
        ["matmul", "(2, 3)", "(4,)"]),
    # linear_transpose
    "linear_transpose_cotangent_shape": (
        ValueError, lambda: ft.linear_transpose(lambda x: 2.0 * x, V3)(np.ones(2)),
        ["linear_transpose", "(2,)", "(3,)"]),
    "linear_transpose_int_input": (
        TypeError, lambda: ft.linear_transpose(lambda x: x, np.arange(3)),
        ["linear_transpose", "int64"]),
}


@pytest.mark.parametrize("name", list(MISUSES))
def test_misuse_raises_a_clear_error(name):
    exc_type, thunk, fragments = MISUSES[name]
    raises(exc_type, thunk, *fragments)


def test_error_inside_nested_transforms_restores_the_stack():
    def bad(x):
        if len(trace_stack()) > 3:
            raise ZeroDivisionError("from user code")
        return fnp.sin(x)

    def nested(x):
        return fnp.sum(ft.vmap(ft.grad(lambda y: bad(y) * fnp.sum(x)))(x))

    raises(ZeroDivisionError, lambda: ft.grad(nested)(V3), "from user code")
    raises(ZeroDivisionError, lambda: ft.make_jaxpr(ft.jacfwd(nested))(V3), "from user code")


# ------------------------------------------------------------------------------------------
# Python control flow on traced values
# ------------------------------------------------------------------------------------------


def branchy(x):
    if x > 0:
        return x ** 2
    return -x ** 3


def loopy(x):
    # Newton's iteration for sqrt(2) with the iteration count chosen by the value of x.
    y = x
    while y * y > 2.0 + 1e-12:
        y = 0.5 * (y + 2.0 / y)
    return y * x


def indexy(x):
    return x * fnp.asarray([2.0, 3.0])[int(x)] + int(x > 0)


# Transforms under which f sees abstract or batched values.
ABSTRACT = transforms("make_jaxpr", "eval_shape", "make_jaxpr_of_grad", "vmap", "vmap_of_grad",
                      "grad_of_vmap")


@pytest.mark.parametrize("fun", [branchy, loopy, indexy])
@pytest.mark.parametrize("make", list(ABSTRACT))
def test_control_flow_on_abstract_or_batched_values_raises(fun, make):
    err = raises(ft.ConcretizationTypeError, lambda: ABSTRACT[make](fun, 1.5))
    assert isinstance(err, TypeError)


def test_concretization_messages_name_the_value_and_the_transform():
    err = raises(ft.ConcretizationTypeError, lambda: ft.make_jaxpr(branchy)(1.5))
    assert "f64[]" in str(err) or "bool[]" in str(err)
    assert re.search(r"jaxpr|trac", str(err), re.IGNORECASE)
    err = raises(ft.ConcretizationTypeError, lambda: ft.vmap(branchy)(V3))
    assert "vmap" in str(err)
    assert "3" in str(err)  # the batch size
    err = raises(ft.ConcretizationTypeError, lambda: ft.make_jaxpr(indexy)(np.float32(1.5)))
    assert "f32[]" in str(err)


CONCRETE = transforms("grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev",
                      "grad_of_grad")


def derivative(fun, x, order=1):
    """Closed-form derivatives of branchy/loopy/indexy."""
    if fun is branchy:
        return [2 * x, 2.0][order - 1] if x > 0 else [-3 * x ** 2, -6 * x][order - 1]
    if fun is loopy:
        # y(x) is x's Newton iterate: piecewise a function of x we can differentiate by
        # finite differences (the branch structure is locally constant).
        h = 1e-6
        if order == 1:
            return (loopy(x + h) - loopy(x - h)) / (2 * h)
        return (loopy(x + h) - 2 * loopy(x) + loopy(x - h)) / h ** 2
    return [3.0 if x > 0 else 2.0, 0.0][order - 1]  # indexy: x · c + const, c constant


@pytest.mark.parametrize("name", list(CONCRETE))
@pytest.mark.parametrize("x", [1.5, -0.75])
def test_control_flow_works_under_differentiation_of_concrete_values(name, x):
    make = CONCRETE[name]
    for fun in (branchy, indexy):
        np.testing.assert_allclose(make(fun, x), derivative(fun, x, make.order), rtol=1e-10,
                                   err_msg=f"{name} of {fun.__name__}")
    if make.order == 1:
        np.testing.assert_allclose(make(loopy, x), derivative(loopy, x), rtol=1e-6)


# ------------------------------------------------------------------------------------------
# Leaked tracers
# ------------------------------------------------------------------------------------------


LEAKERS = transforms("grad", "jvp", "vjp", "linearize", "vmap", "make_jaxpr", "grad_of_grad")

USES = {
    "multiply": lambda t: t * 2.0,
    "numpy_function": lambda t: fnp.sin(t),
    "inside_new_grad": lambda t: ft.grad(lambda y: y * t)(1.0),
    "inside_new_vmap": lambda t: ft.vmap(lambda y: y + t)(V3),
    "inside_new_jaxpr": lambda t: ft.make_jaxpr(lambda y: y + t)(1.0),
}


@pytest.mark.parametrize("use", list(USES))
@pytest.mark.parametrize("transform", list(LEAKERS))
def test_leaked_tracer_raises_unexpected_tracer_error(transform, use):
    stash = []

    def leaky(x):
        stash.append(x)  # a tracer stored outside the function: a leak
        return x * x

    LEAKERS[transform](leaky, 2.0)
    assert stash and isinstance(stash[-1], ft.core.Tracer)
    err = raises(ft.UnexpectedTracerError, lambda: USES[use](stash[-1]))
    assert "f64[]" in str(err)
    assert "leak" in str(err).lower()


LEAKED = None


def test_tracer_stored_in_a_global_during_grad():
    def f(x):
        global LEAKED
        LEAKED = x
        return x * x

    assert ft.grad(f)(3.0) == 6.0
    raises(ft.UnexpectedTracerError, lambda: LEAKED + 1.0, "f64[]", "JVPTrace")
    raises(ft.UnexpectedTracerError, lambda: ft.grad(lambda y: y * LEAKED)(1.0), "f64[]")


def test_leaked_tracer_from_a_failed_call():
    stash = []

    def leaky_then_fails(x):
        stash.append(fnp.sin(x))
        raise KeyError("user error")

    raises(KeyError, lambda: ft.grad(leaky_then_fails)(np.ones(2)))
    raises(ft.UnexpectedTracerError, lambda: stash[0] + 1.0, "f64[2]")


# ------------------------------------------------------------------------------------------
# Tracers cannot become NumPy arrays
# ------------------------------------------------------------------------------------------


CONVERSIONS = {
    "asarray": np.asarray,
    "array": np.array,
    "asarray_float32": lambda t: np.asarray(t, dtype=np.float32),
}

TRANSFORMS = transforms("grad", "jvp", "vjp", "vmap", "make_jaxpr", "eval_shape")


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("conversion", list(CONVERSIONS))
def test_numpy_conversion_of_tracer_raises(transform, conversion):
    def f(x):
        return CONVERSIONS[conversion](x) * 2.0
    err = raises(ft.TracerArrayConversionError, lambda: TRANSFORMS[transform](f, V3), "f64[3]",
                 "functrans.numpy")
    assert isinstance(err, TypeError)
