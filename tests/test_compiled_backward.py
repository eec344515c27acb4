"""``grad`` and ``vjp`` run the transposition of a linearization they have seen before as
compiled code (``reverse_mode.compiled_backward``): a cache keyed by everything the
transposition depends on (tests/test_reverse_mode.py runs the sweep through it), and
user code (``custom_vjp`` backward functions, a user's primitives) still run as written."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.array_types import Array
from functrans.core import abstract_eval_rules, impl_rules
from functrans import reverse_mode
from functrans.interpreters import transpose
from rule_sandbox import Sandbox
from test_jit import BINARY, SPECIAL, UNARY, assert_same_bits

sandbox = Sandbox()
install_rules = sandbox.fixture()


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    # grad linearizes every call here, and compiles on a structure's second sighting
    monkeypatch.setattr(ft.config, "reverse_mode", "compiled")
    monkeypatch.setattr(reverse_mode, "FORCED_COMPILE_AFTER", 2)
    reverse_mode.clear_caches()
    yield
    reverse_mode.clear_caches()


def _compiled_entries() -> int:
    return sum(type(e) is tuple for e in reverse_mode._backward_cache.values())


def _chain(x, scale=0.9):
    for _ in range(5):
        x = fnp.tanh(fnp.sin(x)) * scale + 0.1
    return fnp.sum(x)


def test_grad_compiles_its_backward_pass_on_the_second_sighting():
    x = np.linspace(-1, 1, 7)
    g = ft.grad(_chain)
    first = g(x)
    assert _compiled_entries() == 0
    second, third = g(x), g(x + 1.0)  # other values, the same structure
    assert _compiled_entries() == 1
    np.testing.assert_array_equal(second, first)
    interpreted = ft.grad(lambda x: _chain(x) + 0.0 * x[0])(x + 1.0)  # another structure
    np.testing.assert_allclose(third, interpreted, rtol=1e-14, atol=1e-15)
    assert type(third) is type(first) is Array  # results have `.at`, as before


@pytest.mark.parametrize("other", [
    lambda x: _chain(x, 0.8),  # another literal
    lambda x: _chain(x[:6]),  # another shape
    lambda x: _chain(x.astype(np.float32)),  # another dtype
    lambda x: _chain(x) + fnp.sum(x[::2]),  # more equations
])
def test_structures_that_differ_anywhere_do_not_share_code(other):
    x = np.linspace(-1, 1, 7)
    want = ft.grad(other)(x)  # interpreted: the first sighting
    base = ft.grad(_chain)
    for _ in range(3):
        base(x)  # compiled for its own structure
    for _ in range(3):  # interpreted, then compiled for this structure
        np.testing.assert_array_equal(ft.grad(other)(x), want)
    assert _compiled_entries() == 2


def test_literal_sign_of_zero_is_part_of_the_structure():
    x = np.array([1.0, 2.0])
    for scale in (0.0, -0.0, 0.0, -0.0, 0.0, -0.0):
        g = ft.grad(lambda x: fnp.sum(x * scale))(x)
        assert np.signbit(g).all() == (np.copysign(1.0, scale) < 0)


def test_custom_vjp_backward_runs_every_time():
    calls = []

    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    def bwd(cos_x, g):
        calls.append(1)
        return (g * cos_x,)
    f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), bwd)
    g = ft.grad(lambda x: fnp.sum(f(x) * 2.0))
    for _ in range(4):
        np.testing.assert_allclose(g(np.array([0.3, 0.5])), 2 * np.cos([0.3, 0.5]))
    assert len(calls) == 4
    assert _compiled_entries() == 0


_calls: list = []
twice_p = sandbox.primitive("test_compiled_backward_twice")


def _twice_transpose(ct, x):
    _calls.append(1)
    return [lax.mul(ct, 2.0)]


@sandbox.rules
def _register():
    impl_rules[twice_p] = lambda x: 2 * x
    abstract_eval_rules[twice_p] = lambda aval: aval
    transpose.deflinear(twice_p, _twice_transpose)


def test_a_users_primitive_keeps_running_its_rules():
    _calls.clear()
    g = ft.grad(lambda x: fnp.sum(twice_p.bind(x) * x))
    for _ in range(3):
        np.testing.assert_allclose(g(np.array([1.0, 2.0])), [4.0, 8.0])
    assert len(_calls) == 3 and _compiled_entries() == 0


def test_tracers_and_staging_are_interpreted():
    x = np.linspace(-1, 1, 5)
    g = ft.grad(_chain)
    want = [g(x) for _ in range(3)][-1]
    # under vmap and jvp the residuals are tracers: the rules are interpreted on them
    np.testing.assert_allclose(ft.vmap(g)(np.stack([x, x])), np.stack([want, want]),
                               rtol=1e-13)
    # make_jaxpr stages the backward pass of a constant's gradient, not its values
    jaxpr = ft.make_jaxpr(lambda: g(x))()
    assert len(jaxpr.eqns) > 10


def test_failure_to_compile_falls_back_to_interpreting(monkeypatch):
    def broken(*args):
        raise RuntimeError("not traceable")
    monkeypatch.setattr(reverse_mode, "_compile_backward", broken)
    x = np.linspace(-1, 1, 5)
    g = ft.grad(_chain)
    results = [g(x) for _ in range(3)]
    np.testing.assert_array_equal(results[2], results[0])
    assert reverse_mode.FAILED in reverse_mode._backward_cache.values()


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(reverse_mode, "BACKWARD_CACHE_SIZE", 4)
    x = np.array([1.0, 2.0])
    for k in range(10):
        ft.grad(lambda x: fnp.sum(x * float(k)))(x)
    assert len(reverse_mode._backward_cache) == 4


def test_python_scalars_in_and_out():
    g = ft.grad(lambda x: fnp.sin(x) * x)
    results = [g(0.5) for _ in range(3)]
    assert all(type(r) is float for r in results)
    assert results[2] == results[0] == np.cos(0.5) * 0.5 + np.sin(0.5)
    # A Python scalar cotangent is weakly typed: interpreted, so its dtypes are NumPy's.
    x, y = np.ones(3), np.arange(3, dtype=np.float32)
    _, pullback = ft.vjp(lambda x, y: fnp.sum(x * y), x, y)
    for _ in range(3):
        gx, gy = pullback(1.5)
        assert gx.dtype == np.float64 and gy.dtype == np.float32
    assert _compiled_entries() == 0
    _, pullback = ft.vjp(lambda x, y: fnp.sum(x * y), x, y)
    for _ in range(3):  # a NumPy scalar is not: compiled
        gx, gy = pullback(np.float64(1.5))
        assert gx.dtype == np.float64 and gy.dtype == np.float32
        np.testing.assert_array_equal(gy, 1.5 * x)
    assert _compiled_entries() == 1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", [n for n in UNARY + BINARY
                                  if n not in ("sign", "floor", "ceil", "round")])
def test_special_values_compiled_as_interpreted(name):
    f = getattr(lax, name)
    if name in UNARY:
        args = (SPECIAL,)
        g = ft.grad(lambda x: fnp.sum(f(x)), argnums=(0,))
    else:
        args = tuple(v.ravel() for v in np.meshgrid(SPECIAL, SPECIAL))
        g = ft.grad(lambda x, y: fnp.sum(f(x, y)), argnums=(0, 1))
    interpreted = g(*args)
    for _ in range(2):
        for got, want in zip(g(*args), interpreted):
            assert_same_bits(got, want, name)
    assert _compiled_entries() == 1
