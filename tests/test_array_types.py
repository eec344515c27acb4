"""The arrays functrans hands out are immutable values of one type, as JAX's are: item
assignment refuses, in-place operators rebind, 0-d results are arrays, ``isinstance`` holds
for tracers, and the caller's NumPy arrays are never written into."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.array_types import WeakArray

#: in-place operator -> the operator it must behave as, with operands valid for both
IN_PLACE = [
    ("+=", operator.iadd, operator.add, [1.0, 2.0], [0.5, -1.0]),
    ("-=", operator.isub, operator.sub, [1.0, 2.0], [0.5, -1.0]),
    ("*=", operator.imul, operator.mul, [1.0, 2.0], [0.5, -1.0]),
    ("/=", operator.itruediv, operator.truediv, [1.0, 2.0], [0.5, -1.0]),
    ("//=", operator.ifloordiv, operator.floordiv, [7.0, -7.0], [2.0, np.inf]),
    ("%=", operator.imod, operator.mod, [7.0, -7.0], [2.0, 3.0]),
    ("**=", operator.ipow, operator.pow, [1.5, 2.0], [2.0, 0.5]),
    ("@=", operator.imatmul, operator.matmul, [[1.0, 2.0], [3.0, 4.0]], [[0.5], [2.0]]),
    ("&=", operator.iand, operator.and_, [6, 3], [3, 5]),
    ("|=", operator.ior, operator.or_, [6, 3], [3, 5]),
    ("^=", operator.ixor, operator.xor, [6, 3], [3, 5]),
    ("<<=", operator.ilshift, operator.lshift, [6, 3], [1, 2]),
    (">>=", operator.irshift, operator.rshift, [6, 3], [1, 2]),
]


@pytest.mark.parametrize("name, in_place, plain, a, b", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_operators_rebind_and_leave_the_array_alone(name, in_place, plain, a, b):
    x = fnp.asarray(a)
    kept = np.array(x)
    y = x
    y = in_place(y, fnp.asarray(b))  # what `y op= b` does
    assert y is not x and type(y) is ft.Array
    np.testing.assert_array_equal(x, kept)  # `b = a; b += 1` leaves `a` unchanged
    want = plain(np.asarray(a), np.asarray(b))
    if name == "//=":  # the standard's floor(x / y) with an infinite operand
        want = np.floor(np.asarray(a) / np.asarray(b))
    np.testing.assert_array_equal(y, want)
    assert y.dtype == want.dtype


def test_in_place_operators_broadcast_and_promote_as_jax():
    w = fnp.asarray(1.0)
    w *= fnp.array([0.5, 2.0])  # a 0-d array becomes a vector, as with JAX's arrays
    assert w.shape == (2,) and type(w) is ft.Array
    np.testing.assert_array_equal(w, [0.5, 2.0])
    i = fnp.arange(3)
    i /= 2
    assert i.dtype == np.float64
    np.testing.assert_array_equal(i, [0.0, 0.5, 1.0])
    j = fnp.arange(3)
    j += 1.5
    np.testing.assert_array_equal(j, [1.5, 2.5, 3.5])
    g = ft.grad(lambda p: fnp.sum(p * p))(np.ones(2))
    g -= np.array([[1.0], [2.0]])  # (2,) against (2, 1): a (2, 2) result
    assert g.shape == (2, 2)


def test_item_assignment_names_the_at_update():
    x = fnp.asarray([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match=r"immutable.*x\.at\[1\]\.set\(value\)"):
        x[1] = 5.0
    with pytest.raises(TypeError, match=r"x\.at\[1\]\.set"):
        ft.grad(lambda v: fnp.sum(v))(np.ones(3))[1] = 0.0
    np.testing.assert_array_equal(x.at[1].set(5.0), [1.0, 5.0, 3.0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_methods_that_write_in_place_refuse_and_sort_returns_a_new_array():
    x = fnp.asarray([3.0, 1.0, 2.0])
    for name, args in [("fill", (0.0,)), ("put", ([0], [1.0])), ("partition", (1,)),
                       ("resize", ((2,),))]:
        with pytest.raises(TypeError, match=f"immutable: x.{name}"):
            getattr(x, name)(*args)
    with pytest.raises(TypeError, match="inplace"):
        x.byteswap(inplace=True)
    s = x.sort()  # JAX's Array.sort: a sorted copy
    np.testing.assert_array_equal(s, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(x, [3.0, 1.0, 2.0])


def test_results_that_may_share_memory_with_the_caller_are_read_only():
    a = np.array([1.0, 2.0])
    b = fnp.asarray(a)  # a view of the caller's array: NumPy's out= cannot write through it
    assert not b.flags.writeable and np.shares_memory(a, b)
    with pytest.raises(ValueError, match="read-only"):
        np.add(b, 1.0, out=b)
    np.testing.assert_array_equal(a, [1.0, 2.0])
    for out in [ft.grad(lambda v: fnp.sum(v * v))(a), ft.vmap(lambda v: v)(a),
                ft.jit(lambda v: v * 2)(a), fnp.zeros(2), fnp.asarray(1.5)]:
        assert type(out) in (ft.Array, WeakArray) and not out.flags.writeable
    assert a.flags.writeable  # the caller's own array is untouched


@pytest.mark.parametrize("make", [
    lambda: fnp.asarray(1.5), lambda: fnp.sum(np.arange(3.0)), lambda: fnp.asarray([1.0])[0],
    lambda: fnp.sin(np.float64(1.0)), lambda: ft.grad(lambda x: x * x)(np.float64(3.0)),
    lambda: ft.grad(lambda x: x * x)(np.array(3.0)), lambda: fnp.asarray([1.0, 2.0]).sum(),
    lambda: ft.jit(lambda x: fnp.sum(x))(np.ones(3)), lambda: ft.vmap(fnp.sum)(np.ones((2, 3)))[0],
    lambda: fnp.argmax(np.array([1, 3, 2])), lambda: fnp.linalg.det(np.eye(2)),
    lambda: ft.value_and_grad(lambda x: fnp.sum(x))(np.ones(2))[0],
], ids=["asarray", "sum", "index", "sin_of_numpy_scalar", "grad_numpy_scalar", "grad_0d",
        "method", "jit", "vmap_index", "argmax", "det", "value_and_grad"])
def test_zero_dimensional_results_are_arrays(make):
    out = make()
    # (asarray(1.5) is weakly typed, as JAX's: a WeakArray, an Array subclass)
    assert type(out) in (ft.Array, WeakArray) and out.shape == (), type(out)


def test_operations_on_python_scalars_alone_stay_python_scalars():
    # a Python scalar keeps the weak type, so that float32 computations stay float32
    # (JAX returns a weakly typed 0-d array here)
    assert type(fnp.sin(2.0)) is float and type(ft.grad(lambda x: x * x)(2.0)) is float
    assert (fnp.sin(2.0) * np.ones(2, np.float32)).dtype == np.float32


def test_isinstance_holds_for_results_and_tracers_not_for_numpy_arrays():
    seen = []

    def f(x):
        seen.append(isinstance(x, ft.Array))
        return fnp.sum(x)
    x = np.ones(3)
    ft.grad(f)(x), ft.vmap(f)(np.ones((2, 3))), ft.jit(f)(x), ft.jvp(f, (x,), (x,))
    assert seen == [True, True, True, True]
    assert isinstance(fnp.asarray(x), ft.Array) and isinstance(fnp.asarray(1.0), ft.Array)
    assert not isinstance(x, ft.Array) and not isinstance(np.float64(1.0), ft.Array)
    assert not isinstance(1.0, ft.Array) and isinstance(fnp.asarray(x), np.ndarray)


def test_numpy_functions_on_arrays_give_numpy_results():
    z = fnp.asarray([3.0, 1.0, 2.0])
    assert type(np.sort(z)) is np.ndarray and type(np.concatenate([z, z])) is np.ndarray
    np.testing.assert_array_equal(np.linspace(z, 4.0, 2, axis=1)[:, 0], [3.0, 1.0, 2.0])
    r = np.sort(z)
    r[0] = 9.0  # NumPy's results are the caller's to change
    np.testing.assert_array_equal(z, [3.0, 1.0, 2.0])


def test_library_never_writes_into_the_callers_arrays():
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal(5), "m": rng.standard_normal((3, 3)),
              "i": np.array([0, 2, 4])}
    for v in inputs.values():
        v.flags.writeable = False  # any write into them raises
    x, m, i = inputs["x"], inputs["m"], inputs["i"]
    fnp.sort(x), fnp.cumsum(x), fnp.linalg.inv(m + 3 * np.eye(3)), fnp.asarray(x).at[i].add(1.0)
    lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
    ft.grad(lambda v: fnp.sum(fnp.sort(v) ** 2))(x)
    ft.vmap(lambda v: fnp.take(v, i))(np.stack([x, x]))
    ft.jit(lambda a, b: a.at[b].set(0.0))(x, i)
    fnp.pad(x, 2), fnp.where(x > 0, x, 0.0), fnp.clip(x, -0.5, 0.5)


def test_read_only_results_export_through_old_dlpack_as_copies():
    a = fnp.asarray(np.arange(3.0))  # read-only: DLPack before 1.0 cannot say so
    capsule = a.__dlpack__()  # NumPy alone refuses: "Cannot export readonly array"
    assert capsule is not None
    if np.lib.NumpyVersion(np.__version__) >= "2.1.0":  # NumPy 2.0 speaks DLPack < 1.0 only
        assert np.shares_memory(np.from_dlpack(a), a)  # DLPack 1.0 marks it read-only instead
    np.testing.assert_array_equal(np.from_dlpack(a), [0.0, 1.0, 2.0])


def at_update_of_constants(x):
    """JAX's idiom: arrays made inside the function, updated with ``.at``."""
    seen = []
    made = [fnp.zeros_like(x), fnp.ones_like(x) * 2.0, fnp.sin(np.ones(x.shape)),
            fnp.full_like(x, 3.0), fnp.floor(x),
            fnp.argmax(x) + fnp.zeros(x.shape, dtype=int)]
    for m in made:
        seen.append(type(m))
        with pytest.raises(TypeError, match="immutable"):
            m[0] = 1  # as in the user's own calls: values, not buffers
    total = 0.0
    for m in made:
        total = total + fnp.sum(m.at[0].set(x[1]) * x)
    return total, seen


TRANSFORMED = {
    "grad": lambda f, x: ft.grad(lambda x: f(x)[0])(x),
    "value_and_grad": lambda f, x: ft.value_and_grad(lambda x: f(x)[0])(x)[1],
    "jvp": lambda f, x: ft.jvp(lambda x: f(x)[0], (x,), (np.ones_like(x),))[1],
    "vmap": lambda f, x: ft.vmap(lambda x: f(x)[0])(np.stack([x, x + 1.0])),
    "jacrev": lambda f, x: ft.jacrev(lambda x: f(x)[0])(x),
    "hessian": lambda f, x: ft.hessian(lambda x: f(x)[0])(x),
    "linearize": lambda f, x: ft.linearize(lambda x: f(x)[0], x)[1](np.ones_like(x)),
}


@pytest.mark.parametrize("name", TRANSFORMED)
def test_arrays_made_under_a_transform_are_the_users_arrays(name):
    """Inside grad, vmap and the others, what the function makes from constants (zeros
    like an argument, operations on constants, values that carry no derivative) is an
    Array as in its own calls: ``.at`` works, item assignment refuses; the derivatives
    are those of the same function without them."""
    x = np.array([0.3, -0.7, 1.1])
    seen = []

    def f(x):
        total, types = at_update_of_constants(x)
        seen.extend(types)
        return total, types

    got = TRANSFORMED[name](f, x)
    constants, values = seen[:4], seen[4:6]  # (vmap batches the last two: tracers)
    assert constants and all(t is ft.Array for t in constants), seen
    assert all(t is ft.Array or issubclass(t, ft.core.Tracer) for t in values), seen
    h = 1e-6  # the same derivative by central differences of the eager function
    if name in ("grad", "value_and_grad", "jacrev"):
        want = [(f(x + h * e)[0] - f(x - h * e)[0]) / (2 * h) for e in np.eye(3)]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
