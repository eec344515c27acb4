"""JAX's options: ``functrans.config.update`` and ``config.jax_<name>``, the top-level
switches (``ft.debug_nans(True)``, ``ft.enable_x64``, ...), ``debug_nans``/``debug_infs``
eagerly, under ``jit``, in gradients (every reverse-mode plan), on device arrays, and what
they leave behind when off; ``log_compiles``; and ``functrans.errors``."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import config, core, lax, reverse_mode
from functrans.array_types import Array
from functrans.primitives.jit import Jitted

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's on 0/0, log(0)


@pytest.fixture(autouse=True)
def _switches_restored():
    yield
    for name in ("jax_debug_nans", "jax_debug_infs", "jax_log_compiles", "jax_disable_jit",
                 "jax_check_tracer_leaks"):
        config.update(name, False)


# ------------------------------------------------------------------------------------------
# config.update and config.jax_<name>
# ------------------------------------------------------------------------------------------


def test_enable_x64_true_is_accepted_false_explains():
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64 is True
    with pytest.raises(NotImplementedError, match=r"jax_enable_x64=False .*float32"):
        config.update("jax_enable_x64", False)
    with pytest.raises(NotImplementedError, match="jax_enable_x64"):
        with ft.enable_x64(False):
            pass
    with ft.enable_x64(True):
        assert fnp.asarray(1.5).dtype == np.float64


def test_unknown_options_raise_attribute_error_as_in_jax():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.update("jax_no_such", True)
    with pytest.raises(AttributeError, match="jax_no_such"):
        config.jax_no_such  # noqa: B018
    with pytest.raises(AttributeError):
        config.no_such  # noqa: B018


def test_switches_map_onto_functrans_own():
    calls = []
    f = ft.jit(lambda x: calls.append(1) or x + 1.0)
    config.update("jax_disable_jit", True)
    assert config.jit_disabled and config.jax_disable_jit
    f(1.0)
    f(1.0)
    assert len(calls) == 2  # ran eagerly each time
    config.update("jax_disable_jit", False)
    assert not config.jit_disabled
    config.update("jax_check_tracer_leaks", True)
    assert config.check_tracer_leaks
    leaked = []
    with pytest.raises(ft.errors.UnexpectedTracerError):
        ft.grad(lambda x: leaked.append(x) or x * x)(1.0)


@pytest.mark.parametrize("name, good, bad, error", [
    ("jax_platforms", "cpu", "cuda", NotImplementedError),
    ("jax_platform_name", "cpu", "gpu", NotImplementedError),
    ("jax_default_prng_impl", "threefry2x32", "rbg", NotImplementedError),
    ("jax_default_prng_impl", "threefry2x32", "no_such_prng", ValueError),
    ("jax_numpy_rank_promotion", "allow", "raise", NotImplementedError),
    ("jax_numpy_rank_promotion", "allow", "warn", NotImplementedError),
    ("jax_numpy_rank_promotion", "allow", "sometimes", ValueError),
    ("jax_numpy_dtype_promotion", "standard", "strict", NotImplementedError),
    ("jax_threefry_partitionable", True, False, NotImplementedError),
    ("jax_debug_nans", False, "maybe", ValueError),
])
def test_values_functrans_cannot_honour_are_refused_naming_option_and_value(name, good, bad,
                                                                            error):
    config.update(name, good)
    with pytest.raises(error, match=f"{name}.*{bad!r}|{name}={bad}"):
        config.update(name, bad)


def test_hints_are_accepted_and_read_back():
    for name, value in [("jax_traceback_filtering", "off"),
                        ("jax_default_matmul_precision", "highest"),
                        ("jax_compilation_cache_dir", "/tmp/functrans-cache-test")]:
        before = getattr(config, name)
        config.update(name, value)
        assert getattr(config, name) == value
        assert ft.jit(lambda x: x @ x)(np.eye(2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
        config.update(name, before)


def test_values_and_defaults_agree_with_jax_in_x64_mode():
    jax = pytest.importorskip("jax")
    values = config.values
    assert values == config.option_values()
    for name in ("jax_debug_nans", "jax_debug_infs", "jax_log_compiles", "jax_disable_jit",
                 "jax_check_tracer_leaks", "jax_default_prng_impl", "jax_numpy_rank_promotion",
                 "jax_threefry_partitionable", "jax_traceback_filtering"):
        assert values[name] == jax.config.values[name], name
    assert values["jax_numpy_dtype_promotion"] == "standard"
    assert values["jax_enable_x64"] is True


def test_top_level_switches_behave_as_jax_states():
    assert ft.debug_nans.value is False
    with ft.debug_nans():  # no value: on, as jax.debug_nans() is
        assert ft.debug_nans.value is True and config.jax_debug_nans
        with ft.debug_nans(False):
            assert not config.debug_nans
        assert config.debug_nans
    assert ft.debug_nans.value is False
    with ft.check_tracer_leaks(True):
        assert config.check_tracer_leaks
    assert not config.check_tracer_leaks
    with ft.numpy_rank_promotion("allow"), ft.numpy_dtype_promotion("standard"), \
            ft.default_prng_impl("threefry2x32"):
        assert ft.numpy_rank_promotion.value == "allow"
    with pytest.raises(TypeError, match="numpy_rank_promotion"):
        ft.numpy_rank_promotion()
    with pytest.raises(NotImplementedError, match="strict"):
        with ft.numpy_dtype_promotion("strict"):
            pass
    assert ft.numpy_dtype_promotion.value == "standard"


# ------------------------------------------------------------------------------------------
# debug_nans and debug_infs
# ------------------------------------------------------------------------------------------


def test_eager_operations_that_make_nans_are_named():
    with ft.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            lax.log(np.array([1.0, -1.0]))
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in div"):
            lax.div(np.zeros(2), np.zeros(2))
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
            lax.log(-1.0)  # Python scalars
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
            fnp.log(fnp.full(2, -0.5))  # weakly typed arrays
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
            ft.vmap(fnp.log)(np.array([1.0, -1.0]))
        # NumPy's operators on the arrays functrans hands out
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in divide"):
            fnp.zeros(2) / fnp.zeros(2)
        # a NaN passed on from an operand is not the operation's doing; integers unchecked
        assert np.isnan(lax.sin(np.array([np.nan, 1.0]))[0])
        assert np.isnan((fnp.asarray([np.nan]) + 1.0)[0])
        assert (fnp.arange(3) // 1).tolist() == [0, 1, 2]
        # finite values are untouched
        np.testing.assert_allclose(ft.grad(fnp.sin)(0.5), np.cos(0.5), rtol=1e-15)
        assert (fnp.ones(2) / 2.0).tolist() == [0.5, 0.5]
        assert type(fnp.ones(2) / 2.0) is Array


def test_infinities_are_checked_only_by_debug_infs():
    with ft.debug_nans(True):
        assert lax.div(1.0, np.zeros(1))[0] == np.inf
    with ft.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            lax.div(1.0, np.zeros(1))
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in divide"):
            1.0 / fnp.zeros(2)
        assert lax.add(np.array([np.inf]), 1.0)[0] == np.inf  # passed on
        assert np.isnan(lax.sub(np.array([np.inf]), np.inf)[0])  # a NaN: debug_nans's


def test_jit_reruns_op_by_op_to_name_the_operation_and_the_function():
    def normalise(x):
        return fnp.sin(fnp.log(x)) * 2.0

    f = ft.jit(normalise)
    f(np.array([1.0, 2.0]))  # compiled before the switch
    with ft.debug_nans(True):
        with pytest.raises(FloatingPointError,
                           match=r"encountered in log.*in jit\(normalise\)"):
            f(np.array([-1.0, 2.0]))
        assert np.isnan(f(np.array([np.nan, 2.0]))[0])  # the argument's NaN
        np.testing.assert_allclose(f(np.array([1.0, 2.0])), 2.0 * np.sin(np.log([1.0, 2.0])))
    assert np.isnan(f(np.array([-1.0, 2.0]))[0])  # off again


@pytest.mark.parametrize("mode", ["auto", "linearize", "compiled", "tape"])
def test_backward_pass_nans_and_infs_are_caught_on_every_plan(mode):
    def sqrt_sum(x):
        return fnp.sum(fnp.sqrt(x))

    with config.reverse_mode_set(mode):
        for _ in range(3):  # warm calls too: "auto" would tape and compile them
            np.testing.assert_allclose(ft.grad(sqrt_sum)(np.array([1.0, 4.0])), [0.5, 0.25])
            with ft.debug_infs(True):
                with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
                    ft.grad(sqrt_sum)(np.array([0.0, 4.0]))
            with ft.debug_nans(True):
                with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in mul"):
                    ft.grad(lambda x: fnp.sum(0.0 * fnp.log(x)))(np.array([0.0, 1.0]))
        assert ft.grad(sqrt_sum)(np.array([0.0, 4.0]))[0] == np.inf  # off: no check


def test_gradients_of_and_through_jit_name_the_function():
    def zero_log(x):
        return 0.0 * fnp.log(x)

    with ft.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"in mul.*in jit\(zero_log\)"):
            ft.grad(ft.jit(zero_log))(0.0)
        with pytest.raises(FloatingPointError, match=r"in mul.*in jit\(grad_zero_log\)"):
            grad_zero_log = ft.grad(zero_log)
            grad_zero_log.__name__ = "grad_zero_log"
            ft.jit(grad_zero_log)(0.0)


def test_switching_off_restores_the_plain_paths():
    plain_eval = core.EvalTrace.process_primitive
    plain_call = Jitted.__call__
    with ft.debug_nans(True):
        assert core.EvalTrace.process_primitive is not plain_eval
        assert Jitted.__call__ is not plain_call
        assert "__array_ufunc__" in Array.__dict__
        with ft.debug_infs(True):
            pass
        assert core.EvalTrace.process_primitive is not plain_eval  # debug_nans still on
    assert core.EvalTrace.process_primitive is plain_eval
    assert Jitted.__call__ is plain_call
    assert "__array_ufunc__" not in Array.__dict__


def test_device_arrays_are_checked_on_device_one_scalar_back():
    import cupy_standin as standin
    x = standin.asarray(np.array([1.0, 2.0]))
    with ft.debug_nans(True):
        with standin.transfers() as t:
            y = lax.log(x)
        assert type(y) is not np.ndarray and t.d2h == 1
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
            lax.log(-x)


# ------------------------------------------------------------------------------------------
# log_compiles
# ------------------------------------------------------------------------------------------


def test_log_compiles_logs_each_signature_once(caplog):
    def scaled(x):
        return x * 3.0

    f = ft.jit(scaled)
    with caplog.at_level(logging.WARNING, logger="functrans"), ft.log_compiles(True):
        f(np.ones(2))
        f(np.ones(2))
        f(np.ones(3, np.float32))
    messages = [r.getMessage() for r in caplog.records if r.name == "functrans"]
    assert messages == ["functrans.jit: compiling jit(scaled) for arguments (f64[2])",
                        "functrans.jit: compiling jit(scaled) for arguments (f32[3])"]
    caplog.clear()
    ft.jit(scaled)(np.ones(4))
    assert not caplog.records


# ------------------------------------------------------------------------------------------
# functrans.errors
# ------------------------------------------------------------------------------------------


def test_errors_are_the_classes_functrans_raises():
    errors = ft.errors
    assert errors.ConcretizationTypeError is ft.ConcretizationTypeError is \
        core.ConcretizationTypeError
    assert issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
    assert issubclass(errors.NonConcreteBooleanIndexError, IndexError)
    with pytest.raises(errors.TracerBoolConversionError, match="truth value of a tracer"):
        ft.jit(lambda x: 1.0 if x > 0 else -1.0)(2.0)
    with pytest.raises(errors.TracerIntegerConversionError, match="int"):
        ft.jit(lambda x: fnp.zeros(int(x)))(2.0)
    with pytest.raises(errors.TracerIntegerConversionError, match="index"):
        ft.jit(lambda i: [1.0, 2.0][i])(1)
    with pytest.raises(errors.NonConcreteBooleanIndexError, match="boolean mask"):
        ft.jit(lambda x: x[x > 0])(np.arange(3.0))
    with pytest.raises(TypeError, match="boolean mask"):  # as before
        ft.jit(lambda x: x[x > 0])(np.arange(3.0))
    with pytest.raises(errors.TracerArrayConversionError):
        ft.jit(lambda x: np.asarray(x))(np.arange(3.0))
    with pytest.raises(errors.ConcretizationTypeError, match="vmap"):  # the batched message
        ft.vmap(lambda x: 1.0 if x > 0 else 0.0)(np.arange(3.0))
    # under grad the primal is concrete: Python control flow works
    assert ft.grad(lambda x: x * x if x > 0 else -x)(2.0) == 4.0
    leaked = []
    ft.grad(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(errors.UnexpectedTracerError):
        fnp.sin(leaked[0])


def test_errors_names_are_jax_names():
    jax = pytest.importorskip("jax")
    for name in ft.errors.__all__:
        assert hasattr(jax.errors, name), name
        ours, theirs = getattr(ft.errors, name), getattr(jax.errors, name)
        for base in (TypeError, IndexError, RuntimeError):
            if issubclass(theirs, base) and base is not RuntimeError:
                assert issubclass(ours, base), (name, base)


def test_pullbacks_made_before_the_switch_and_gradcheck_are_checked():
    def sqrt_sum(x):
        return fnp.sum(fnp.sqrt(x))

    x, one = np.array([0.0, 4.0]), np.array(1.0)
    with config.reverse_mode_set("tape"):
        ft.grad(sqrt_sum)(np.array([1.0, 4.0]))  # compiled code made for the structure
        _, recorded = reverse_mode.planned_vjp(lambda x: [sqrt_sum(x)], [x], key=sqrt_sum)
        _, compiled = reverse_mode.planned_vjp(lambda x: [sqrt_sum(x)], [x], snapshot=True)
        assert (recorded.plan, compiled.plan) == ("tape", "compiled")
        assert recorded([one])[0][0] == compiled([one])[0][0] == np.inf
        assert (recorded.plan, compiled.plan) == ("tape", "compiled")  # compiled code ran
        with ft.debug_infs(True):
            for pullback in (recorded, compiled):
                with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
                    pullback([one])
    with ft.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            ft.gradcheck(fnp.sqrt, modes=("rev",))(x)
