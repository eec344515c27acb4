"""Weakly typed arrays outside transforms (``WeakArray``): arrays made from Python scalars
alone take the dtype of the arrays they meet, as JAX's do, and as the same values do
under ``jit`` and ``vmap`` (where abstract evaluation has always typed them weakly).

The expected dtypes are JAX's (with 64-bit types enabled, functrans's default); where JAX
is installed, ``test_dtypes_agree_with_jax`` checks the table against it.
"""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans.array_types import WeakArray

X32 = np.linspace(0.5, 1.5, 3).astype(np.float32)
MASK = np.array([True, False, True])
I8 = np.arange(3, dtype=np.int8)

#: name -> (function of a numpy-like namespace, JAX's result dtype)
CASES = {
    "where(m, 1., 2.) * x32": (lambda np_: np_.where(MASK, 1.0, 2.0) * X32, np.float32),
    "x32 + where(m, 0., -inf)": (lambda np_: X32 + np_.where(MASK, 0.0, -np.inf), np.float32),
    "asarray(1.) * x32": (lambda np_: np_.asarray(1.0) * X32, np.float32),
    "array(1.) * x32": (lambda np_: np_.array(1.0) * X32, np.float32),
    "full(3, 1.) * x32": (lambda np_: np_.full(3, 1.0) * X32, np.float32),
    "sin(asarray(2.)) * x32": (lambda np_: np_.sin(np_.asarray(2.0)) * X32, np.float32),
    "broadcast_to(1., 3) * x32": (lambda np_: np_.broadcast_to(1.0, (3,)) * X32, np.float32),
    "stack([1., 2.]) * x32[:2]": (lambda np_: np_.stack([1.0, 2.0]) * X32[:2], np.float32),
    "asarray(2) * x32": (lambda np_: np_.asarray(2) * X32, np.float32),
    "i8 + asarray(2)": (lambda np_: I8 + np_.asarray(2), np.int8),
    "where(m, 1, 2) + i8": (lambda np_: np_.where(MASK, 1, 2) + I8, np.int8),
    "asarray(1.)[None] * x32": (lambda np_: np_.asarray(1.0)[None] * X32, np.float32),
    "asarray(1.).reshape(1) * x32": (lambda np_: np_.asarray(1.0).reshape(1) * X32,
                                     np.float32),
    "maximum(where(m, 1., 2.), x32)": (lambda np_: np_.maximum(np_.where(MASK, 1.0, 2.0), X32),
                                       np.float32),
    "x32 @ full((3, 2), 0.5)": (lambda np_: X32 @ np_.full((3, 2), 0.5), np.float32),
    "concatenate([full(2, 1.), x32])": (lambda np_: np_.concatenate([np_.full(2, 1.0), X32]),
                                        np.float32),
    "x32 < where(m, 1., 2.)": (lambda np_: X32 < np_.where(MASK, 1.0, 2.0), np.bool_),
    "where(m, x32, full(3, 0.))": (lambda np_: np_.where(MASK, X32, np_.full(3, 0.0)),
                                   np.float32),
    "full(3, 1.) * 2.": (lambda np_: np_.full(3, 1.0) * 2.0, np.float64),
    "zeros(3) * x32": (lambda np_: np_.zeros(3) * X32, np.float64),
    "array([1., 2., 3.]) * x32": (lambda np_: np_.array([1.0, 2.0, 3.0]) * X32, np.float64),
    "asarray(1., float64) * x32": (lambda np_: np_.asarray(1.0, np.float64) * X32, np.float64),
    "full(3, 1.).astype(float64) * x32": (
        lambda np_: np_.full(3, 1.0).astype(np.float64) * X32, np.float64),
    "full(3, True) & m": (lambda np_: np_.full(3, True) & MASK, np.bool_),
}


@pytest.mark.parametrize("name", CASES)
def test_arrays_of_python_scalars_take_the_dtype_of_the_arrays_they_meet(name):
    fun, expected = CASES[name]
    assert fun(fnp).dtype == expected


@pytest.mark.parametrize("name", CASES)
def test_dtypes_agree_with_jax(name):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    fun, expected = CASES[name]
    assert fun(jax.numpy).dtype == expected


@pytest.mark.parametrize("name", [
    "where(m, 1., 2.) * x32", "x32 + where(m, 0., -inf)", "full(3, 1.) * x32",
    "asarray(1.) * x32", "x32 @ full((3, 2), 0.5)", "where(m, 1, 2) + i8"])
def test_eager_jit_vmap_and_grad_agree_on_the_dtype_and_values(name):
    fun, expected = CASES[name]

    def f(scale):  # the case, scaled by a traced value of its own dtype
        return fun(fnp) * scale
    one = np.ones((), expected)
    eager = f(one)
    assert eager.dtype == expected
    for transformed in (ft.jit(f), lambda s: ft.vmap(f)(s[None])[0]):
        out = transformed(one)
        assert out.dtype == expected
        np.testing.assert_array_equal(out, eager)
    if expected == np.float32:
        value, g = ft.value_and_grad(lambda s: fnp.sum(f(s)))(one)
        assert value.dtype == g.dtype == np.float32
        assert value == pytest.approx(float(np.sum(eager)), rel=1e-6)


def test_weak_arrays_are_marked_and_become_strong_when_converted():
    w = fnp.where(MASK, 1.0, 2.0)
    assert type(w) is WeakArray and w.weak_type and isinstance(w, ft.Array)
    assert w.dtype == np.float64
    assert not fnp.asarray(X32).weak_type and not fnp.zeros(3).weak_type
    strong = w.astype(np.float64)
    assert not strong.weak_type and (strong * X32).dtype == np.float64
    assert not fnp.asarray(w, np.float64).weak_type
    assert type(np.asarray(w)) is np.ndarray  # NumPy's own arrays are plain
    assert type(w[0]) is WeakArray and w[0].weak_type  # one element: a weak 0-d array
    assert (-w).weak_type and (w + 1).weak_type and (2.0 * w).weak_type
    assert fnp.sum(w).weak_type and w.reshape(3, 1).weak_type
    assert not (w < 1.5).weak_type  # booleans are never weak
    assert not fnp.full(3, True).weak_type


def test_weak_arrays_are_immutable_values():
    w = fnp.full(3, 1.0)
    with pytest.raises(TypeError, match="immutable"):
        w[0] = 2.0
    with pytest.raises(ValueError):
        np.asarray(w).__setitem__(0, 2.0)  # read-only memory too
    w2 = w.at[0].set(5.0)
    assert w2.weak_type and float(w2[0]) == 5.0 and float(w[0]) == 1.0


def test_numpy_ufuncs_on_weak_arrays_promote_weakly():
    w = fnp.full(3, 2.0)
    assert np.multiply(X32, w).dtype == np.float32
    assert np.sin(w).weak_type
    # with keywords NumPy computes, on the plain array
    out = np.empty(3)
    np.multiply(w, 3.0, out=out)
    np.testing.assert_array_equal(out, [6.0, 6.0, 6.0])


def test_python_scalars_alone_still_give_python_scalars():
    assert type(fnp.sin(2.0)) is float
    assert type(lax.add(2, 3)) is int
    assert type(ft.grad(lambda x: x * x)(2.0)) is float


def test_gradients_with_respect_to_weak_arrays_are_weak():
    w = fnp.asarray(2.0)
    g = ft.grad(lambda a: a * a)(w)
    assert type(g) is WeakArray and float(g) == 4.0
    g32 = ft.grad(lambda a: fnp.sum(a * X32))(w)  # the product is float32, the input weak
    assert g32.weak_type and float(g32) == pytest.approx(float(np.sum(X32)))
    y, t = ft.jvp(lambda a: fnp.sin(a) * X32, (w,), (fnp.asarray(1.0),))
    assert y.dtype == t.dtype == np.float32
    np.testing.assert_allclose(t, np.cos(2.0) * X32, rtol=1e-6)


def test_jit_keys_weak_and_strong_arguments_apart_and_returns_weak_results():
    f = ft.jit(lambda a, b: a * b)
    assert f(fnp.asarray(2.0), X32).dtype == np.float32
    assert f(np.asarray(2.0), X32).dtype == np.float64  # a NumPy array is strong
    assert f(fnp.asarray(2.0), X32).dtype == np.float32  # from the cache
    assert f._cache_size() == 2
    out = ft.jit(lambda m: fnp.where(m, 1.0, 2.0))(MASK)
    assert type(out) is WeakArray
    assert (out * X32).dtype == np.float32
    assert not ft.jit(lambda x: x * 2.0)(X32).weak_type


def test_weak_constants_inside_jit_and_make_jaxpr():
    def f(x):
        return x * fnp.asarray(3.0) + fnp.full(3, 0.5)
    assert ft.jit(f)(X32).dtype == np.float32
    np.testing.assert_allclose(ft.jit(f)(X32), X32 * 3 + 0.5, rtol=1e-6)
    jaxpr = ft.make_jaxpr(f)(X32)
    assert "3.0" in str(jaxpr)  # the weak scalar is a literal, as a Python scalar is
    assert jaxpr.out_avals[0].dtype == np.float32


def test_integer_arrays_with_python_integers_stay_strong():
    i = fnp.arange(3)
    assert not fnp.multiply(i, 2).weak_type and fnp.multiply(i, 2).dtype == np.int64
    assert (fnp.asarray(np.arange(3, dtype=np.int32)) + 1).dtype == np.int32


def test_bad_input_to_a_weak_array_names_the_function():
    w = fnp.full(3, 1.0)
    with pytest.raises((TypeError, ValueError), match="add|broadcast|shape"):
        w + fnp.ones(4)


def test_like_functions_and_lax_full_keep_the_weak_type():
    w = fnp.full(3, 2.0)
    for out in (fnp.zeros_like(w), fnp.ones_like(w), fnp.full_like(w, 0.5), lax.full((3,), 1.0),
                fnp.asarray(w), fnp.array(w)):
        assert out.weak_type, out
        assert (out * X32).dtype == np.float32
    for out in (fnp.ones_like(w, dtype=np.float64), lax.full((3,), 1.0, np.float64),
                fnp.full_like(X32, 1.0)):
        assert not out.weak_type, out


@pytest.mark.parametrize("strong, weak, dtype", [
    (np.int32, 2.0, np.float64),  # JAX: a weak float; here strong, as NumPy's operators give
    (np.bool_, 2, np.int64),
    (np.int8, 2, np.int8),
    (np.float32, 2.0, np.float32),
    (np.float32, 2j, np.complex64),
    (np.complex64, 2.0, np.complex64),
])
def test_a_strong_array_makes_the_result_strong_eagerly_and_traced(strong, weak, dtype):
    from functrans import dtypes
    x = np.ones(2, strong)
    assert dtypes.result_type(x, weak, return_weak_type_flag=True) == (dtype, False)
    traced = ft.make_jaxpr(lambda x: lax.add(x, weak))(x)
    assert traced.out_avals[0].dtype == dtype and not traced.out_avals[0].weak_type
    for eager in (lax.add(x, weak), fnp.asarray(x) + weak):
        assert eager.dtype == dtype and not getattr(eager, "weak_type", False)


def _ufunc_cases():
    from functrans.numpy._array_methods import UFUNCS
    cases = []
    for ufunc, fn in sorted(UFUNCS.items(), key=lambda item: item[0].__name__):
        if ufunc.nin in (1, 2) and ufunc.nout == 1:
            cases.append(pytest.param(fn, ufunc.nin, id=ufunc.__name__))
    return cases


@pytest.mark.parametrize("fn, nin", _ufunc_cases())
@pytest.mark.parametrize("weak_value", [0.75, 3], ids=["float", "int"])
def test_eager_types_are_the_traced_types(fn, nin, weak_value):
    # Every ufunc of functrans.numpy on a weakly typed array (alone, and beside float32
    # and int8 arrays): the eager result has the dtype and weak type of the traced one.
    w = fnp.full(3, weak_value)
    others = [np.linspace(0.25, 0.75, 3).astype(np.float32), np.array([1, 2, 3], np.int8)]
    operand_lists = [[w]] if nin == 1 else [[w, w]] + [[w, o] for o in others] + [
        [o, w] for o in others]
    for operands in operand_lists:
        try:
            traced = ft.eval_shape(fn, *operands)
        except (TypeError, ValueError, NotImplementedError):
            continue  # not defined for these dtypes (bitwise ops of floats, ...)
        with np.errstate(all="ignore"):
            eager = fn(*operands)
        for e, t in zip(eager if isinstance(eager, tuple) else [eager],
                        traced if isinstance(traced, tuple) else [traced]):
            assert e.dtype == t.dtype, (operands, e.dtype, t.dtype)
            assert getattr(e, "weak_type", False) == t.weak_type, (operands, type(e), t)
