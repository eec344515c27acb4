"""gradcheck and check_grads on functions without a forward-mode rule (custom_vjp): the
default modes check reverse mode and say that forward mode was skipped; named modes
raise an error naming the function."""
from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans.gradcheck.checks import forward_refusal
from functrans.testing import ForwardModeSkipped, check_grads


@ft.custom_vjp
def smooth_sin(x):
    return fnp.sin(x)


smooth_sin.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda cos_x, g: (g * cos_x,))


@ft.custom_vjp
def wrong_sin(x):
    return fnp.sin(x)


# the backward rule is 10% too large
wrong_sin.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda cos_x, g: (1.1 * g * cos_x,))


def model(x, w):
    return fnp.sum(smooth_sin(x * w))


def wrong_model(x, w):
    return fnp.sum(wrong_sin(x * w))


X, W = np.array([0.1, 0.2, -0.4]), np.array([1.0, 2.0, 0.5])


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("order", [1, 2])
def test_default_modes_check_reverse_mode_of_a_custom_vjp_model(fast_mode, order):
    result = ft.gradcheck(model, fast_mode=fast_mode, order=order)(X, W)
    assert result
    [skipped] = result.skipped
    assert (skipped.mode, skipped.function, skipped.order) == ("fwd", "model", 1)
    assert "custom_vjp" in skipped.message
    derivative = [c for c in result.checks if c.kind in ("jacobian", "directional")]
    assert {c.mode for c in derivative if c.function == "model"} == {"rev"}
    if order == 2:  # forward over reverse works: the backward rule is ordinary code
        assert {c.mode for c in derivative if c.function == "vjp(model)"} == {"fwd", "rev"}
    report = result.report()
    assert "modes rev (fwd skipped)" in report.splitlines()[0]
    assert "forward mode (jvp) of model (order 1) skipped: it uses a custom_vjp" in report


def test_a_wrong_custom_rule_fails_with_a_readable_report():
    with pytest.raises(ft.GradcheckError) as info:
        ft.gradcheck(wrong_model)(X, W)
    report = str(info.value)
    assert report.startswith("gradcheck of wrong_model failed")
    assert "reverse mode (vjp) Jacobian of out w.r.t. x" in report
    assert "forward mode (jvp) of wrong_model (order 1) skipped" in report
    assert "Traceback" not in report
    assert not info.value.result.ok and info.value.result.skipped


def test_a_wrong_custom_rule_reports_without_a_traceback_from_the_command_line(tmp_path):
    script = tmp_path / "check.py"
    script.write_text(
        "import numpy as np, functrans as ft, functrans.numpy as fnp\n"
        "@ft.custom_vjp\n"
        "def f(x):\n    return fnp.sin(x)\n"
        "f.defvjp(lambda x: (fnp.sin(x), fnp.cos(x)), lambda c, g: (2 * g * c,))\n"
        "r = ft.gradcheck(lambda x: fnp.sum(f(x)), raise_exception=False)(np.ones(2))\n"
        "print(r.report())\n")
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "gradcheck of f failed" in done.stdout and "fwd skipped" in done.stdout


@pytest.mark.parametrize("modes", ["fwd", ("fwd", "rev")])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_named_forward_mode_raises_an_error_naming_the_function(modes, fast_mode):
    with pytest.raises(TypeError, match="gradcheck of model: model cannot be checked in "
                                        r"forward mode \(jvp\): it uses a custom_vjp") as info:
        ft.gradcheck(model, modes=modes, fast_mode=fast_mode)(X, W)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_reverse_mode_only_needs_no_skip():
    result = ft.gradcheck(model, modes="rev")(X, W)
    assert result and not result.skipped
    assert "auto_modes" not in result.report()


def test_functions_with_forward_rules_skip_nothing():
    result = ft.gradcheck(lambda x: fnp.sin(x) * x)(X)
    assert not result.skipped
    assert {c.mode for c in result.checks if c.kind == "jacobian"} == {"fwd", "rev"}


def test_forward_refusal_tells_refusals_from_bugs():
    assert "custom_vjp" in forward_refusal(TypeError(
        "Forward-mode differentiation (jvp, ...) of a custom_vjp function is not supported"))
    assert forward_refusal(TypeError("unsupported operand type(s)")) is None
    assert forward_refusal(ValueError("Differentiation rule for 'p' not implemented")) is None


def test_check_grads_skips_forward_mode_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_grads(model, (X, W), order=2)
    [warning] = [w for w in caught if issubclass(w.category, ForwardModeSkipped)]
    assert "check_grads of model: forward mode skipped (JVP of order 1" in str(warning.message)
    assert warning.filename == __file__


def test_check_grads_still_finds_a_wrong_custom_rule():
    with pytest.warns(ForwardModeSkipped), pytest.raises(ft.GradcheckError):
        check_grads(wrong_model, (X, W), order=1)


def test_check_grads_with_named_forward_mode_raises():
    with pytest.raises(TypeError, match="check_grads of model: model cannot be checked in "
                                        "forward mode"):
        check_grads(model, (X, W), order=1, modes=("fwd",))
