"""functrans.testing: the JAX, Chainer and MXNet conventions, assert_allclose, pytest helpers."""
from __future__ import annotations

import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax, testing
from functrans.core import abstract_eval_rules, impl_rules
from functrans.interpreters import ad, batching
from functrans.testing import (assert_allclose, check_backward, check_double_backward,
                               check_grads, check_jvp, check_numeric_gradient,
                               check_symbolic_backward, check_vjp, make_rng, numerical_grad,
                               numerical_jvp, parametrize_dtypes_shapes, random_array, seed_for)
from rule_sandbox import Sandbox

# A tanh whose derivative is 5% too large, to see each checker fail (registered only while
# this module runs).
sandbox = Sandbox()
install_rules = sandbox.fixture()
tanh_wrong_p = sandbox.primitive("test_testing_tanh_5pct")


@sandbox.rules
def _register():
    impl_rules[tanh_wrong_p] = np.tanh
    abstract_eval_rules[tanh_wrong_p] = lambda aval: aval
    ad.defjvp(tanh_wrong_p, lambda g, ans, x: lax.mul(g, lax.mul(1.05, lax.sub(1.0, lax.mul(
        lax.tanh(x), lax.tanh(x))))))
    batching.defvectorized(tanh_wrong_p)


def wrong_tanh(x):
    return tanh_wrong_p.bind(x)


X = np.array([[0.5, -1.0, 0.3], [2.0, 0.1, -0.4]])

# ------------------------------------------------------------------------------------------
# assert_allclose
# ------------------------------------------------------------------------------------------


def test_assert_allclose_passes_within_tolerance():
    assert_allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]), rtol=1e-6)
    assert_allclose(1.0, np.ones(3), atol=0)  # broadcasting
    assert_allclose({"a": np.ones(2)}, {"a": np.ones(2)})
    assert_allclose(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))


def test_assert_allclose_names_the_worst_violation():
    actual = np.zeros((3, 4))
    desired = np.zeros((3, 4))
    actual[2, 1], actual[0, 3] = 0.5, 0.01
    with pytest.raises(AssertionError) as info:
        assert_allclose(actual, desired, atol=1e-3, rtol=0, err_msg="gradient of w")
    message = str(info.value)
    assert message.startswith("gradient of w")
    assert "mismatched elements: 2 / 12" in message
    assert "worst violation at index (2, 1): actual 0.5, desired 0" in message
    assert "tolerance 0.001 (ratio 500)" in message


def test_assert_allclose_shapes_nans_complex_and_trees():
    with pytest.raises(AssertionError, match="shapes differ"):
        assert_allclose(np.ones(2), np.ones(3))
    with pytest.raises(AssertionError, match="worst violation at index \\(0,\\)"):
        assert_allclose(np.array([np.nan]), np.array([1.0]))
    with pytest.raises(AssertionError):
        assert_allclose(np.array([np.nan]), np.array([np.nan]), equal_nan=False)
    with pytest.raises(AssertionError, match="1\\+1j"):
        assert_allclose(np.array([1 + 1j]), np.array([1 - 1j]))
    with pytest.raises(AssertionError, match="structures"):
        assert_allclose((np.ones(1),), [np.ones(1)])
    with pytest.raises(AssertionError, match="leaf \\[1\\]"):
        assert_allclose((np.ones(1), np.ones(1)), (np.ones(1), np.zeros(1)))


# ------------------------------------------------------------------------------------------
# JAX: check_grads, check_jvp, check_vjp, numerical_jvp
# ------------------------------------------------------------------------------------------


def test_numerical_jvp():
    out = numerical_jvp(lambda x, y: (x * y, fnp.sin(x)), (np.array([1.0, 2.0]), 3.0),
                        (np.array([1.0, 0.0]), 0.0))
    np.testing.assert_allclose(out[0], [3.0, 0.0], rtol=1e-8)
    np.testing.assert_allclose(out[1], [np.cos(1.0), 0.0], rtol=1e-7)
    assert numerical_jvp(fnp.sin, (np.float32(1.0),), (np.float32(1.0),)).dtype == np.float32


@pytest.mark.parametrize("order", [1, 2, 3])
def test_check_grads_passes(order):
    check_grads(lambda x, y: fnp.tanh(x) * fnp.exp(y), (X, X.T.copy().reshape(2, 3)), order)


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ["fwd", "rev"]])
def test_check_grads_fails_on_a_wrong_rule(modes):
    with pytest.raises(ft.GradcheckError) as info:
        check_grads(wrong_tanh, (X,), 1, modes=modes)
    assert "seed 0" in str(info.value)


def test_check_grads_complex_and_float32():
    z = np.array([0.5 + 1.0j, -0.3 + 0.2j])
    check_grads(lambda z: fnp.exp(z) * fnp.conj(z), (z,), 2)
    check_grads(lambda x: fnp.sin(x) ** 2, (X.astype(np.float32),), 2)


def test_check_grads_integer_arguments_and_pytrees():
    check_grads(lambda x, n: x ** n, (np.array([0.5, 1.5]), 3), 3)
    check_grads(lambda p: fnp.sum(fnp.tanh(p["w"]) * p["b"]),
                ({"w": X, "b": np.array([0.5, -0.5, 1.0])},), 2)


def test_check_grads_rejects_unknown_modes():
    with pytest.raises(ValueError):
        check_grads(fnp.sin, (X,), 1, modes=("sideways",))


def test_check_jvp_and_check_vjp_with_custom_functions():
    check_jvp(fnp.sin, functools.partial(ft.jvp, fnp.sin), (X,))
    check_vjp(fnp.sin, functools.partial(ft.vjp, fnp.sin), (X,))

    def f_jvp_wrong(primals, tangents):
        out, t = ft.jvp(fnp.sin, primals, tangents)
        return out, t * 1.01

    with pytest.raises(ft.GradcheckError, match="tangent output"):
        check_jvp(fnp.sin, f_jvp_wrong, (X,))

    def f_vjp_wrong(x):
        out, pullback = ft.vjp(fnp.sin, x)
        return out, lambda ct: tuple(g * -1 for g in pullback(ct))

    with pytest.raises(ft.GradcheckError, match="vjp check"):
        check_vjp(fnp.sin, f_vjp_wrong, (X,))


# ------------------------------------------------------------------------------------------
# Chainer: check_backward, check_double_backward, numerical_grad
# ------------------------------------------------------------------------------------------


def test_check_backward_forms():
    check_backward(fnp.tanh, X, np.ones_like(X))                        # one input
    check_backward(lambda x, y: x * y, (X, X + 1), np.ones_like(X))     # a tuple of inputs
    check_backward(lambda x: fnp.sum(x ** 2), X, None)                  # a loss: y_grad=None
    check_backward(lambda x: (fnp.sin(x), x ** 2), X, (np.ones_like(X), None))  # 2 outputs
    w, b = np.eye(3) * 0.5, np.array([0.1, 0.2, 0.3])
    check_backward(lambda x, w, b: fnp.tanh(x @ w + b), X, np.ones((2, 3)), params=(w, b))
    check_backward(lambda x, n: x ** n, (X, 3), np.ones_like(X))        # int input skipped
    # A flagged input must receive no gradient (Chainer's rule): y is detached here.
    check_backward(lambda x, y: x * lax.stop_gradient(y), (X, X), np.ones_like(X),
                   no_grads=[False, True])
    check_backward(fnp.sin, X.astype(np.float32), np.ones_like(X, np.float32), dtype=np.float64,
                   atol=1e-4, rtol=1e-3)


def test_check_backward_errors():
    with pytest.raises(ValueError, match="scalar output"):
        check_backward(fnp.sin, X, None)
    with pytest.raises(ValueError, match="y_grad has 1 entries for 2 outputs"):
        check_backward(lambda x: (x, x), X, (np.ones_like(X),))
    with pytest.raises(ValueError, match="no_grads"):
        check_backward(fnp.sin, X, np.ones_like(X), no_grads=[False, False])
    with pytest.raises(TypeError, match="no_grads"):
        check_backward(lambda x, n: x * n, (X, 3), np.ones_like(X), no_grads=[False, False])


def test_check_backward_fails_on_a_wrong_rule_and_localizes():
    with pytest.raises(ft.GradcheckError) as info:
        check_backward(wrong_tanh, X, np.ones_like(X))
    message = str(info.value)
    assert "check_backward" in message and "input 0" in message and "worst at" in message


def test_check_backward_detect_nondifferentiable():
    with pytest.raises(ft.NondifferentiableError, match="x\\[1\\]|args\\[0\\]\\[1\\]"):
        check_backward(lambda x: fnp.maximum(x, 0.0), np.array([0.5, 0.0]), np.ones(2),
                       detect_nondifferentiable=True)
    check_backward(lambda x: fnp.maximum(x, 0.0), np.array([0.5, -0.5]), np.ones(2),
                   detect_nondifferentiable=True)


def test_chainer_checks_with_complex_values():
    z = np.array([0.5 + 1.0j, -0.3 + 0.2j])
    gy = np.array([1.0 - 2.0j, 0.5 + 0.5j])
    check_backward(lambda z: fnp.exp(z) * fnp.conj(z), z, gy)
    check_backward(lambda z: fnp.abs(z) ** 2, z, np.array([1.0, 2.0]))
    (g,) = numerical_grad(lambda z: fnp.exp(z) * z, (z,), (gy,))
    np.testing.assert_allclose(g, ft.vjp(lambda z: fnp.exp(z) * z, z)[1](gy)[0], rtol=1e-6)


def test_check_double_backward():
    check_double_backward(lambda x: x ** 3, np.array([0.3, -0.7]), np.ones(2),
                          np.array([1.0, 0.5]))
    check_double_backward(lambda x: fnp.sum(fnp.tanh(x) ** 2), X, None, np.ones_like(X))
    w = np.eye(3) * 0.5
    check_double_backward(lambda x, w: fnp.tanh(x @ w), X, np.ones((2, 3)), np.ones_like(X),
                          params=(w,), params_grad_grad=(np.ones_like(w),))
    with pytest.raises(ValueError, match="x_grad_grad"):
        check_double_backward(lambda x: x ** 3, X, np.ones_like(X), ())


def test_numerical_grad():
    grads = numerical_grad(lambda x, y: (x * y, fnp.sin(x)), (X, 2.0 * X),
                           (np.ones_like(X), None))
    np.testing.assert_allclose(grads[0], 2.0 * X, rtol=1e-6)
    np.testing.assert_allclose(grads[1], X, rtol=1e-6)
    # Complex inputs follow the library's convention: d|z|²  ->  2 conj(z).
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    (g,) = numerical_grad(lambda z: fnp.abs(z) ** 2, (z,), (np.ones(2),))
    np.testing.assert_allclose(g, 2 * np.conj(z), rtol=1e-6)
    # float32 inputs: computed in float32, returned in float32.
    (g32,) = numerical_grad(lambda x: x ** 2, (X.astype(np.float32),), (np.ones_like(X),))
    assert g32.dtype == np.float32
    with pytest.raises(ft.NondifferentiableError):
        numerical_grad(fnp.abs, (np.array([0.0, 1.0]),), (np.ones(2),),
                       detect_nondifferentiable=True)


# ------------------------------------------------------------------------------------------
# MXNet: check_symbolic_backward, check_numeric_gradient
# ------------------------------------------------------------------------------------------

LHS, RHS = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0], [7.0, 8.0]])


def elemwise_mul(lhs, rhs):
    return lhs * rhs


def test_check_symbolic_backward_list_and_dict():
    ones = np.ones((2, 2))
    grads = check_symbolic_backward(elemwise_mul, [LHS, RHS], [ones], [RHS, LHS])
    assert sorted(grads) == ["lhs", "rhs"] and grads["lhs"].dtype == np.float32
    check_symbolic_backward(elemwise_mul, {"rhs": RHS, "lhs": LHS}, ones,
                            {"lhs": RHS, "rhs": LHS}, dtype=np.float64)
    with pytest.raises(ValueError, match="missing \\['rhs'\\], unexpected \\['y'\\]"):
        check_symbolic_backward(elemwise_mul, {"lhs": LHS, "y": RHS}, ones, [RHS, LHS])


def test_check_symbolic_backward_grad_req():
    ones = np.ones((2, 2))
    buffers = {"lhs": np.full((2, 2), 10.0), "rhs": np.full((2, 2), -1.0)}
    out = check_symbolic_backward(elemwise_mul, [LHS, RHS], [ones], [RHS, LHS],
                                  grad_req={"lhs": "add", "rhs": "null"},
                                  grad_buffers=buffers, dtype=np.float64)
    np.testing.assert_array_equal(buffers["lhs"], 10.0 + RHS)  # accumulated in place
    np.testing.assert_array_equal(buffers["rhs"], -1.0)        # untouched
    assert out["lhs"] is buffers["lhs"]
    # "add" with random buffers compares the increment; "write" overwrites.
    check_symbolic_backward(elemwise_mul, [LHS, RHS], [ones], [RHS, LHS], grad_req="add")
    check_symbolic_backward(elemwise_mul, [LHS, RHS], [ones], [RHS, None],
                            grad_req=["write", "null"])
    with pytest.raises(ValueError, match="grad_req"):
        check_symbolic_backward(elemwise_mul, [LHS, RHS], [ones], [RHS, LHS], grad_req="sum")


def test_check_symbolic_backward_fails_on_wrong_expected():
    with pytest.raises(ft.GradcheckError, match="gradient of 'rhs'"):
        check_symbolic_backward(elemwise_mul, [LHS, RHS], [np.ones((2, 2))], [RHS, RHS])


def test_check_numeric_gradient():
    def dense(x, w, b):
        return fnp.tanh(x @ w + b)

    location = {"x": X * 0.5, "w": np.eye(3) * 0.7, "b": np.array([0.1, 0.0, -0.1])}
    check_numeric_gradient(dense, location)                       # float32, MXNet's defaults
    check_numeric_gradient(dense, location, dtype=np.float64)
    check_numeric_gradient(dense, list(location.values()), grad_nodes=["w"])
    with pytest.raises(ft.GradcheckError, match="gradient of 'x'"):
        check_numeric_gradient(lambda x: wrong_tanh(x), [X], dtype=np.float64)
    with pytest.raises(ValueError, match="grad_nodes"):
        check_numeric_gradient(dense, location, grad_nodes=["v"])


# ------------------------------------------------------------------------------------------
# pytest helpers
# ------------------------------------------------------------------------------------------


def test_seeds_are_reproducible_and_settable(monkeypatch):
    monkeypatch.delenv("FUNCTRANS_TEST_SEED", raising=False)
    assert seed_for("a") == seed_for("a") != seed_for("b")
    rng, seed = make_rng("a")
    assert seed == seed_for("a")
    np.testing.assert_array_equal(rng.standard_normal(3),
                                  np.random.default_rng(seed).standard_normal(3))
    monkeypatch.setenv("FUNCTRANS_TEST_SEED", "42")  # the session seed: keys still differ
    assert seed_for("a") == seed_for("a", session_seed=42) != seed_for("b")
    assert seed_for("a") != seed_for("a", session_seed=0)


@parametrize_dtypes_shapes(dtypes=(np.float32, np.complex128), shapes=((), (2, 3)))
def test_parametrize_dtypes_shapes(dtype, shape):
    x = random_array(np.random.default_rng(0), shape, dtype)
    assert x.dtype == dtype and x.shape == shape


def test_parametrize_ids():
    mark = parametrize_dtypes_shapes((np.float64,), ((), (4, 1)))
    assert mark.kwargs["ids"] == ["float64-scalar", "float64-4x1"]


def test_random_array_kinds():
    rng = np.random.default_rng(0)
    assert random_array(rng, (3,), np.bool_).dtype == np.bool_
    assert random_array(rng, (3,), np.int32).dtype == np.int32


def test_rng_fixture_prints_its_seed_on_failure(tmp_path):
    test_file = tmp_path / "test_uses_rng.py"
    test_file.write_text(textwrap.dedent("""
        from functrans.testing import rng  # noqa: F401

        def test_fails(rng):
            assert rng.standard_normal() > 100

        def test_passes(rng):
            assert rng.standard_normal() < 100
    """))
    env = dict(os.environ, FUNCTRANS_TEST_SEED="77")
    # Without the plugin (tests/test_pytest_plugin.py covers the plugin's report).
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:functrans", str(test_file)], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert "1 failed, 1 passed" in done.stdout
    assert "seed 77: rerun with FUNCTRANS_TEST_SEED=77" in done.stdout
    assert done.stdout.count("seed 77") == 1  # printed for the failure only


def test_importing_functrans_does_not_import_pytest():
    code = "import sys, functrans; print('pytest' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr


def test_module_getattr():
    with pytest.raises(AttributeError):
        testing.no_such_helper  # noqa: B018
