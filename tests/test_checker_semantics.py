"""The seed checkers give their originals' verdicts: one test per
behaviour that used to differ, each built so that it failed before the fix."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.testing import (check_backward, check_double_backward, check_jvp,
                               check_numeric_gradient, check_vjp, numerical_grad)
from sweep import custom_jvp_with_rule

# ------------------------------------------------------------------------------------------
# MXNet: check_numeric_gradient
# ------------------------------------------------------------------------------------------


def test_mxnet_numeric_eps_is_the_full_width():
    # d(x³)/dx at 0 is 0; a central difference of half-width h gives h²·(projection).
    # numeric_eps=0.2 means x ± 0.1 (h² = 0.01, under atol 0.02); x ± 0.2 would give 0.04.
    check_numeric_gradient(lambda x: x ** 3, [np.zeros(3)], numeric_eps=0.2, rtol=0.0,
                           atol=0.02, dtype=np.float64)
    with pytest.raises(ft.GradcheckError, match="x ± 0.1"):
        check_numeric_gradient(lambda x: x ** 3, [np.zeros(3)], numeric_eps=0.2, rtol=0.0,
                               atol=0.005, dtype=np.float64)


def test_mxnet_nan_never_equals_nan_unless_asked():
    location = [np.array([-1.0, -4.0])]  # NaN on both sides
    with np.errstate(invalid="ignore"):
        with pytest.raises(ft.GradcheckError, match="gradient of 'x'"):
            check_numeric_gradient(fnp.sqrt, location, dtype=np.float64)
        check_numeric_gradient(fnp.sqrt, location, dtype=np.float64, equal_nan=True)


def test_mxnet_tolerances_and_steps_by_dtype_dict():
    x = [np.array([0.3, 0.7])]
    # A dict by dtype picks the entry of the location's dtype, as MXNet's get_tolerance.
    check_numeric_gradient(fnp.tanh, x, numeric_eps={np.float64: 1e-6},
                           rtol={np.float64: 1e-6}, atol={np.float64: 1e-9}, dtype=np.float64)
    with pytest.raises(ft.GradcheckError):  # x ± 0.25 is far too coarse for 1e-9
        check_numeric_gradient(fnp.tanh, x, numeric_eps={np.float64: 0.5},
                               rtol={np.float64: 0.0}, atol={np.float64: 1e-9},
                               dtype=np.float64)
    with pytest.raises(ValueError, match="too small"):
        check_numeric_gradient(fnp.tanh, x, numeric_eps=1e-6)  # float32


def test_mxnet_grad_nodes_dict_of_grad_req():
    def f(x, w):
        return wrong_tanh(x) * w

    location = {"x": np.array([0.3, 0.7]), "w": np.array([1.0, 2.0])}
    check_numeric_gradient(f, location, grad_nodes={"x": "null", "w": "write"},
                           dtype=np.float64)
    with pytest.raises(ft.GradcheckError, match="gradient of 'x'"):
        check_numeric_gradient(f, location, grad_nodes={"x": "add", "w": "null"},
                               dtype=np.float64)
    with pytest.raises(ValueError, match="grad_req"):
        check_numeric_gradient(f, location, grad_nodes={"x": "sum"}, dtype=np.float64)


wrong_tanh = custom_jvp_with_rule(fnp.tanh, lambda x: 1 - fnp.tanh(x) ** 2, scale=1.05)


# ------------------------------------------------------------------------------------------
# PyTorch: gradcheck
# ------------------------------------------------------------------------------------------


def _custom_sin(bwd):
    @ft.custom_vjp
    def f(x):
        return fnp.sin(x)

    def fwd(x):
        return fnp.sin(x), fnp.cos(x)

    f.defvjp(fwd, bwd)
    return f


@pytest.mark.parametrize("fast_mode", [False, True])
def test_torch_backward_must_be_multiplied_by_grad_output(fast_mode):
    # Adding 1e-9 is far below the tolerance, so only the zero-grad_output check sees it.
    shifted = _custom_sin(lambda cos_x, g: (g * cos_x + 1e-9,))
    result = ft.gradcheck(shifted, modes="rev", fast_mode=fast_mode, raise_exception=False)(
        np.array([0.3, 0.5]))
    assert [c.kind for c in result.failures] == ["zero_grad_output"]
    assert "backward not multiplied by grad_output" in result.failures[0].message
    # It runs whatever check_undefined_grad says, as in PyTorch.
    with pytest.raises(ft.GradcheckError, match="zero grad output"):
        ft.gradcheck(shifted, modes="rev", check_undefined_grad=False)(np.array([0.3, 0.5]))
    assert ft.gradcheck(_custom_sin(lambda cos_x, g: (g * cos_x,)), modes="rev",
                        fast_mode=fast_mode)(np.array([0.3, 0.5]))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_zero_cotangent_and_rerun_checks_share_one_backward_pass(fast_mode):
    # The backward runs for the directional/Jacobian check, then once more with -v for
    # both the zero-cotangent and the nondeterminism check (fast mode: two runs in all).
    calls = []

    def bwd(cos_x, g):
        calls.append(1)
        return (g * cos_x,)
    result = ft.gradcheck(_custom_sin(bwd), modes="rev", fast_mode=True)(np.array([0.3, 0.5]))
    assert {c.kind for c in result.checks} >= {"zero_grad_output", "nondeterminism"}
    assert len(calls) == 2
    # A deterministic backward that is zero at zero but not odd in its cotangent is not
    # linear: neither PyTorch check sees it, the shared re-run does.
    curved = _custom_sin(lambda cos_x, g: (g * cos_x + 1e-9 * g * g,))
    result = ft.gradcheck(curved, modes="rev", fast_mode=fast_mode, raise_exception=False)(
        np.array([0.3, 0.5]))
    assert [c.kind for c in result.failures] == ["linearity"]
    assert "not linear in its cotangent" in result.failures[0].message
    assert {c.kind for c in result.checks if c.passed} >= {"zero_grad_output", "nondeterminism"}


def test_torch_full_mode_pullback_that_cannot_be_vmapped_goes_row_by_row():
    numpy_bwd = _custom_sin(lambda cos_x, g: (np.asarray(g) * np.asarray(cos_x),))
    x = np.array([0.3, 0.5, -1.0])
    result = ft.gradcheck(numpy_bwd, modes="rev")(x)
    assert any("one row at a time" in note for note in result.notes)
    wrong = _custom_sin(lambda cos_x, g: (1.01 * np.asarray(g) * np.asarray(cos_x),))
    with pytest.raises(ft.GradcheckError, match="Jacobian"):
        ft.gradcheck(wrong, modes="rev")(x)


# ------------------------------------------------------------------------------------------
# Chainer: check_backward, check_double_backward, numerical_grad
# ------------------------------------------------------------------------------------------


def test_chainer_y_grad_none_only_for_shape_empty():
    check_backward(lambda x: fnp.sum(x ** 2), np.array([0.5, 1.0]), None)
    with pytest.raises(ValueError, match=r"shape \(\)"):  # size 1 is not enough
        check_backward(lambda x: fnp.sum(x ** 2, keepdims=True), np.array([0.5, 1.0]), None)


def test_chainer_flagged_input_must_receive_no_gradient():
    x = np.array([0.5, -1.0])
    with pytest.raises(ft.GradcheckError, match=r"input\(s\) \[1\] are flagged in no_grads"):
        check_backward(lambda x, y: x * y, (x, x + 1), np.ones(2), no_grads=[False, True])
    check_backward(lambda x, y: x * lax.stop_gradient(y), (x, x + 1), np.ones(2),
                   no_grads=[False, True])
    # An output whose y_grad is None does not count.
    check_backward(lambda x, y: (x * 2.0, y * x), (x, x + 1), (np.ones(2), None),
                   no_grads=[False, True])


def test_chainer_double_backward_no_grads_covers_x_data_and_y_grad():
    x, gy, ggx = np.array([0.3, -0.7]), np.ones(2), np.array([1.0, 0.5])
    check_double_backward(lambda x: x ** 3, x, gy, ggx, no_grads=[False, False])
    with pytest.raises(ValueError, match="one flag per entry of x_data"):
        check_double_backward(lambda x: x ** 3, x, gy, ggx, no_grads=[False])
    # The first-order gradient 3x²·gy depends on gy: flagging gy is an error, as in Chainer.
    with pytest.raises(ft.GradcheckError, match="flagged in no_grads"):
        check_double_backward(lambda x: x ** 3, x, gy, ggx, no_grads=[False, True])
    # Flagging x does not remove its first-order gradient (x_grad_grad keeps its entry).
    with pytest.raises(ft.GradcheckError, match="flagged in no_grads"):
        check_double_backward(lambda x: x ** 3, x, gy, ggx, no_grads=[True, False])
    check_double_backward(lambda x: x * 2.0, x, gy, ggx, no_grads=[True, False])


def test_chainer_numerical_grad_detect_returns_the_five_point_estimate():
    x = np.array([1.0, -2.0])
    (central,) = numerical_grad(lambda x: x ** 3, (x,), (np.ones(2),), eps=0.1)
    np.testing.assert_allclose(central, 3 * x ** 2 + 0.01, rtol=1e-12)  # error eps²
    (five,) = numerical_grad(lambda x: x ** 3, (x,), (np.ones(2),), eps=0.1,
                             detect_nondifferentiable=True)
    np.testing.assert_allclose(five, 3 * x ** 2, rtol=1e-12)  # exact for a cubic


def test_chainer_check_backward_detect_compares_with_the_five_point_estimate():
    x = np.array([1.5])  # one input: the direction is ±1, the central error eps² = 0.0025
    with pytest.raises(ft.GradcheckError):
        check_backward(lambda x: x ** 3, x, np.ones(1), eps=0.05)
    check_backward(lambda x: x ** 3, x, np.ones(1), eps=0.05, detect_nondifferentiable=True)


# ------------------------------------------------------------------------------------------
# JAX: check_jvp, check_vjp, check_grads
# ------------------------------------------------------------------------------------------


def _offset_sin(offset):
    return custom_jvp_with_rule(fnp.sin, fnp.cos, offset=offset)


def test_jax_tolerance_is_scaled_by_the_leaf_size():
    # Each tangent element is off by 5e-5: above float64's 1e-5 for one element, within
    # the 1e-5·size JAX allows a leaf of 10 elements.
    f = _offset_sin(5e-5)
    x10 = np.linspace(-1.0, 1.0, 10)
    check_jvp(f, functools.partial(ft.jvp, f), (x10,))
    with pytest.raises(ft.GradcheckError, match="tangent output"):
        check_jvp(f, functools.partial(ft.jvp, f), (x10[:1],))


def test_jax_tolerance_dicts_and_zero_rtol():
    f = _offset_sin(5e-5)
    x = np.array([0.4])
    check_jvp(f, functools.partial(ft.jvp, f), (x,), atol={np.float64: 1e-4})
    with pytest.raises(ft.GradcheckError):
        check_jvp(f, functools.partial(ft.jvp, f), (x,), atol={np.float32: 1e-4})
    # rtol=0 is NumPy's default rtol (1e-7), not zero: a 1e-9 relative error passes.
    g = _offset_sin(0.0)
    check_jvp(g, functools.partial(ft.jvp, g), (x,), atol=0.0, rtol=0.0)


def test_jax_check_vjp_compares_the_primal_output():
    def f(x):
        return fnp.sin(x)

    def f_vjp(x):
        out, pullback = ft.vjp(f, x)
        return out + 1.0, pullback

    with pytest.raises(ft.GradcheckError, match="primal output of f_vjp"):
        check_vjp(f, f_vjp, (np.array([0.1, 0.2]),))


def test_jax_check_jvp_requires_matching_dtypes():
    def f_jvp(primals, tangents):
        out, t = ft.jvp(fnp.sin, primals, tangents)
        return out, t.astype(np.float32)

    with pytest.raises(ft.GradcheckError, match="dtype float32"):
        check_jvp(fnp.sin, f_jvp, (np.array([0.1, 0.2]),))


def test_jax_directions_are_numpy_randomstate_draws():
    seen = []

    def f_jvp(primals, tangents):
        seen.append(tangents[0])
        return ft.jvp(fnp.sin, primals, tangents)

    check_jvp(fnp.sin, f_jvp, (np.zeros(3),), seed=0)
    np.testing.assert_array_equal(seen[0], np.random.RandomState(0).randn(3))
