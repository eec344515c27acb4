"""``grad`` of a function differentiated before records the forward pass on a tape and runs
compiled gradient code cached by the tape's structure (``interpreters/tape.py``,
``reverse_mode.py``): what the function sees inside, when recording stops, and that user
rules still run on every call.  tests/test_reverse_mode.py runs the sweep through it."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.array_types import Array
from functrans.core import Tracer, Var, abstract_eval_rules, impl_rules
from functrans import reverse_mode
from functrans.interpreters import ad, tape, transpose
from rule_sandbox import Sandbox
from test_compiled_backward import _chain

sandbox = Sandbox()
install_rules = sandbox.fixture()


@pytest.fixture(autouse=True)
def fresh_tape(monkeypatch):
    monkeypatch.setattr(ft.config, "reverse_mode", "auto")
    reverse_mode._functions.clear()
    reverse_mode._gradients.clear()
    yield
    reverse_mode._functions.clear()
    reverse_mode._gradients.clear()


def _compiled() -> int:
    return sum(type(e) is tuple for e in reverse_mode._gradients.values())


def _linearized(fun, *args, **kwargs):
    """``fun(*args)`` with recording off: what grad gives by linearizing."""
    ft.config.reverse_mode = "linearize"
    try:
        return fun(*args, **kwargs)
    finally:
        ft.config.reverse_mode = "auto"


def test_second_call_records_and_third_runs_compiled_code():
    x = np.linspace(-1, 1, 7)
    g = ft.grad(_chain)
    first = g(x)
    assert reverse_mode._functions[_chain.__code__] == "seen" and not reverse_mode._gradients
    second = g(x)  # recorded; the structure is new: the tape is linearized
    assert reverse_mode._functions[_chain.__code__] == 1 and _compiled() == 0
    third = g(x + 0.5)  # the same structure: compiled
    assert reverse_mode._functions[_chain.__code__] == 0 and _compiled() == 1
    np.testing.assert_array_equal(second, first)
    np.testing.assert_allclose(third, _linearized(g, x + 0.5), rtol=1e-14)
    assert type(third) is type(first) is Array  # results have `.at`, as before


def test_results_have_one_type_however_computed():
    for f, x in [(lambda x: x, np.float64(2.0)), (lambda x: fnp.sum(x), np.array(2.0)),
                 (lambda x: fnp.sum(x * 2.0), np.arange(3.0))]:
        types = {type(ft.grad(f)(x)) for _ in range(4)}  # linearized, tape, compiled
        assert types == {Array}, types  # 0-d gradients too, as JAX's are 0-d arrays


def test_what_the_function_sees():
    seen = {}

    def f(x):
        seen["x"] = type(x)
        seen["argmax"] = type(fnp.argmax(x))  # integer: carries no derivative
        seen["floor"] = type(fnp.floor(x))  # zero derivative
        seen["stopped"] = type(lax.stop_gradient(x))
        y = fnp.sin(x)
        with pytest.raises(ft.ConcretizationTypeError):
            float(y[0])  # would drop the derivative, as under linearize
        if fnp.sum(y) > 0:  # Python control flow on values
            return fnp.sum(y * y)
        return fnp.sum(y)

    x = np.array([0.5, 1.0])
    for _ in range(3):
        np.testing.assert_allclose(ft.grad(f)(x), 2 * np.sin(x) * np.cos(x), rtol=1e-14)
    assert seen["x"] is tape.TapeTracer and issubclass(seen["x"], Tracer)
    # values that carry no derivative leave the tape as the user's arrays, with `.at`
    assert seen["argmax"] is seen["floor"] is seen["stopped"] is Array
    np.testing.assert_allclose(ft.grad(f)(-x), np.cos(-x), rtol=1e-14)  # the other branch


def test_values_closed_over_are_arguments_not_constants():
    w = np.array([1.0, 2.0])
    g = ft.grad(lambda x: fnp.sum(fnp.sin(x) * w))
    x = np.array([0.3, 0.4])
    for _ in range(3):
        g(x)
    w[:] = [3.0, -1.0]  # the caller changes it: the compiled gradient reads the new values
    np.testing.assert_allclose(g(x), np.cos(x) * w, rtol=1e-14)
    assert _compiled() == 1


def test_aux_argnums_and_float32():
    def f(x, y):
        return fnp.sum(x * fnp.exp(y)), {"mean": fnp.mean(x)}

    x = np.arange(3, dtype=np.float32)
    y = np.linspace(0, 1, 3).astype(np.float32)
    g = ft.grad(f, argnums=(0, 1), has_aux=True)
    want = _linearized(g, x, y)
    for _ in range(3):
        (gx, gy), aux = g(x, y)
        assert gx.dtype == gy.dtype == np.float32
        np.testing.assert_array_equal(gx, want[0][0])
        np.testing.assert_array_equal(gy, want[0][1])
        assert aux["mean"] == want[1]["mean"]
    assert _compiled() == 1


def test_nested_transforms_inside_a_tape():
    def f(x):
        inner = ft.grad(lambda y: fnp.sum(fnp.sin(y) * x))(x)  # grad inside grad
        batched = ft.vmap(lambda r: fnp.dot(r, x))(fnp.outer(x, x))
        jitted = ft.jit(lambda y: fnp.tanh(y) * 2.0)(x)
        looped = lax.fori_loop(0, 3, lambda i, c: c * fnp.cos(c), x)
        return fnp.sum(inner * x) + fnp.sum(batched) + fnp.sum(jitted * looped)

    x = np.array([0.2, -0.7, 1.1])
    want = _linearized(ft.grad(f), x)
    for _ in range(3):
        np.testing.assert_allclose(ft.grad(f)(x), want, rtol=1e-13)
    assert _compiled() == 1


def test_a_users_custom_rules_run_on_every_call():
    calls = []

    @ft.custom_jvp
    def cube(x):
        return x ** 3

    @cube.defjvp
    def cube_jvp(primals, tangents):
        calls.append(1)
        (x,), (t,) = primals, tangents
        return cube(x), 3 * x ** 2 * t

    before = []

    def f(x):
        before.append(1)  # runs again the one time recording is refused
        try:
            y = cube(x)
        except Exception:  # noqa: BLE001  # must not swallow the refusal
            y = x
        return fnp.sum(y)

    x = np.array([1.0, 2.0])
    for _ in range(4):
        np.testing.assert_allclose(ft.grad(f)(x), 3 * x ** 2)
    assert len(calls) == 4 and len(before) == 5
    assert reverse_mode._functions[f.__code__] == "never"


def test_the_librarys_custom_jvp_functions_are_recorded():
    f = lambda x: fnp.sum(ft.nn.relu(x) * fnp.sin(x))  # noqa: E731  # relu is a custom_jvp
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    for _ in range(3):
        np.testing.assert_allclose(ft.grad(f)(x), _linearized(ft.grad(f), x), rtol=1e-14)
    _, recorded = tape.record_flat(lambda x: [f(x)], [x])
    assert "custom_jvp_call" in [e.primitive.name for e in recorded.jaxpr.eqns]
    assert reverse_mode._functions[f.__code__] == 0 and _compiled() == 1


_double_p = sandbox.primitive("test_tape_double")


@sandbox.rules
def _register():
    impl_rules[_double_p] = lambda x: 2 * x
    abstract_eval_rules[_double_p] = lambda aval: aval
    transpose.deflinear(_double_p, lambda ct, x: [lax.mul(ct, 2.0)])


def test_a_users_primitive_is_not_recorded():
    f = lambda x: fnp.sum(_double_p.bind(x) * x)  # noqa: E731
    x = np.array([1.0, 2.0])
    for _ in range(3):
        np.testing.assert_allclose(ft.grad(f)(x), 4 * x)
    assert reverse_mode._functions[f.__code__] == "never" and not reverse_mode._gradients


def test_changing_structures_stop_recording():
    def f(x, n):
        for _ in range(n):
            x = fnp.sin(x)
        return fnp.sum(x)

    x = np.array([0.1, 0.2])
    g = ft.grad(f)
    for n in range(1, 7):  # a new structure every call
        np.testing.assert_allclose(g(x, n), _linearized(g, x, n), rtol=1e-14)
    assert reverse_mode._functions[f.__code__] == "never" and _compiled() == 0


def test_large_recordings_stop_recording(monkeypatch):
    monkeypatch.setattr(reverse_mode, "MAX_BYTES", 1000)
    f = lambda x: fnp.sum(fnp.sin(x) ** 2)  # noqa: E731
    x = np.linspace(0, 1, 100)  # 800 bytes per recorded value
    for _ in range(3):
        np.testing.assert_allclose(ft.grad(f)(x), np.sin(2 * x), rtol=1e-14)
    assert reverse_mode._functions[f.__code__] == "never"


def test_errors_leave_a_clean_state():
    def f(x):
        y = fnp.sin(x)
        if y[0] > 0.5:
            raise ValueError("too large")
        return fnp.sum(y)

    g = ft.grad(f)
    x = np.array([0.1, 0.2])
    g(x)
    with pytest.raises(ValueError, match="too large"):
        g(x + 1.0)  # raised while recording
    assert len(ft.core.trace_stack()) == 1
    np.testing.assert_allclose(g(x), np.cos(x), rtol=1e-14)


def test_reverse_mode_errors_are_the_same():
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: c * 2.0, x)[1]  # noqa: E731
    x = np.array([1.0, 2.0])
    for _ in range(3):
        with pytest.raises(TypeError, match="while_loop"):
            ft.grad(f)(x)


def test_leaks_are_found():
    leaked = []
    f = lambda x: leaked.append(x) or fnp.sum(x * x)  # noqa: E731
    x = np.array([1.0])
    ft.grad(f)(x)
    with ft.checking_leaks(), pytest.raises(ft.core.UnexpectedTracerError, match="TapeTrace"):
        ft.grad(f)(x)


def test_per_example_gradients_on_a_tape():
    w = np.array([0.5, -1.0, 2.0])
    xs = np.linspace(-1, 1, 12).reshape(4, 3)
    f = lambda w, x: fnp.logaddexp(0.0, fnp.dot(x, w)) * fnp.sum(x)  # noqa: E731
    g = ft.vmap(ft.grad(f), in_axes=(None, 0))
    want = np.stack([_linearized(ft.grad(f), w, x) for x in xs])
    for _ in range(3):
        np.testing.assert_allclose(g(w, xs), want, rtol=1e-14)
    assert reverse_mode._functions[f.__code__] == 0 and _compiled() == 1
    # another batch size or batch axis is another structure
    np.testing.assert_allclose(g(w, xs[:3]), want[:3], rtol=1e-14)
    h = ft.vmap(ft.grad(f), in_axes=(None, 1))
    for _ in range(2):
        np.testing.assert_allclose(h(w, xs.T), want, rtol=1e-14)


def test_switched_off_and_other_inputs_are_linearized(monkeypatch):
    x = np.array([0.1, 0.2])
    g = ft.grad(_chain)
    g(1.0)
    for _ in range(3):
        g(1.0)  # Python scalars: weakly typed, linearized
    for _ in range(3):  # under jvp, or a vmap of a named axis: linearized
        ft.jvp(g, (x,), (x,))
        ft.vmap(g, axis_name="i")(np.stack([x, x]))
    assert not reverse_mode._gradients
    monkeypatch.setattr(ft.config, "reverse_mode", "compiled")
    for _ in range(3):
        g(x)
    assert not reverse_mode._gradients


def test_threads_share_the_caches():
    x = np.linspace(-1, 1, 9)
    want = _linearized(ft.grad(_chain), x)
    results, errors = [], []

    def run():
        try:
            for _ in range(20):
                results.append(ft.grad(_chain)(x))
        except BaseException as e:  # reported in the main thread
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(results) == 80
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-14)
    assert _compiled() == 1


def test_the_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(reverse_mode, "GRADIENT_CACHE_SIZE", 3)
    monkeypatch.setattr(reverse_mode, "FUNCTION_CACHE_SIZE", 2)
    x = np.array([1.0, 2.0])
    for k in range(6):
        f = eval(f"lambda x: fnp.sum(fnp.sin(x) * {k}.5)", {"fnp": fnp})  # a new code object
        for _ in range(3):
            np.testing.assert_allclose(ft.grad(f)(x), np.cos(x) * (k + 0.5), rtol=1e-14)
    assert len(reverse_mode._gradients) <= 3 and len(reverse_mode._functions) <= 2


def test_tape_variables():
    _, recorded = tape.record_flat(lambda x: [fnp.sum(fnp.sin(x) * 2.0)], [np.ones(3)])
    jaxpr = recorded.jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["sin", "mul", "reduce_sum"]
    assert all(type(v) is Var for e in jaxpr.eqns for v in e.outvars)
    assert len(recorded.values) == 3 and not recorded.consts
    np.testing.assert_array_equal(recorded.values[0], np.sin(np.ones(3)))
    assert ad.Zero not in map(type, recorded.values)
