"""functrans.gradcheck: the transform, its options, the result object and the report."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.core import abstract_eval_rules, impl_rules
from functrans.gradcheck.realify import random_direction
from functrans.interpreters import ad, batching, transpose
from rule_sandbox import Sandbox

# ------------------------------------------------------------------------------------------
# Helpers: small test-only primitives (registered only while this module runs)
# ------------------------------------------------------------------------------------------

sandbox = Sandbox()
install_rules = sandbox.fixture()


def _primitive(name, impl, jvp_derivative, batch=True):
    prim = sandbox.primitive(name)

    @sandbox.rules
    def register():
        impl_rules[prim] = impl
        abstract_eval_rules[prim] = lambda aval: aval
        ad.defjvp(prim, lambda g, ans, x: jvp_derivative(g, x))
        if batch:
            batching.defvectorized(prim)
    return prim


def _linear(name, impl, transpose_rule):
    prim = sandbox.primitive(name)

    @sandbox.rules
    def register():
        impl_rules[prim] = impl
        abstract_eval_rules[prim] = lambda aval: aval
        ad.deflinear_jvp(prim)
        transpose.deftranspose(prim, transpose_rule)
        batching.defvectorized(prim)
    return prim


# A correct sin without a batching rule: f cannot be vmapped, but it can be differentiated.
sin_unbatchable_p = _primitive("test_sin_no_batching", np.sin,
                               lambda g, x: lax.mul(g, lax.cos(x)), batch=False)
# A correct square whose JVP returns float32 tangents for float64 inputs (a dtype bug).
square_f32_tangent_p = _primitive(
    "test_square_float32_tangent", np.square,
    lambda g, x: lax.convert_element_type(lax.mul(g, lax.mul(2.0, x)), np.float32))
# Derivatives 10% and 2% too large.
exp_wrong_scale_p = _primitive("test_exp_wrong_scale", np.exp,
                               lambda g, x: lax.mul(g, lax.mul(1.1, lax.exp(x))))
exp_scaled_report_p = _primitive("test_exp_scaled_report", np.exp,
                                 lambda g, x: lax.mul(g, lax.mul(1.02, lax.exp(x))))
# A linear primitive whose transpose adds a tiny random amount: a nondeterministic backward.
_jitter = np.random.default_rng(123)
jitter_p = _linear("test_identity_jittery_transpose", lambda x: x,
                   lambda ct, x: [lax.mul(ct, 1.0 + float(_jitter.normal() * 1e-13))])
# conj whose transpose forgets to conjugate.
conj_wrong_p = _linear("test_conj_missing_transpose_conj", np.conj, lambda ct, z: [ct])
# 2x whose transpose is affine (adds 1): wrong for zero cotangents.
affine_p = _linear("test_affine_transpose", lambda x: 2.0 * x,
                   lambda ct, x: [lax.add(lax.mul(ct, 2.0), 1.0)])


def counting(fun):
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        return fun(*args, **kwargs)
    wrapper.calls = 0
    wrapper.__name__ = fun.__name__
    return wrapper


# ------------------------------------------------------------------------------------------
# Basics and options
# ------------------------------------------------------------------------------------------


def test_passing_result_is_truthy_and_holds_errors():
    result = ft.gradcheck(lambda x, y: fnp.sin(x) * y)(np.array([0.1, 0.2]), np.array([1.0, 2.0]))
    assert result and result.ok and not result.failures
    assert set(result.errors) == {(m, "f", "out", n) for m in ("fwd", "rev") for n in "xy"}
    assert all(e < 1e-8 for e in result.errors.values())
    assert result.max_ratio < 1
    assert "passed" in result.report() and "seed 0" in result.report()
    assert "passed" in repr(result)


def test_exports():
    assert {"gradcheck", "GradcheckError", "NondifferentiableError", "testing"} <= set(
        ft.__all__)
    assert issubclass(ft.GradcheckError, AssertionError)
    assert issubclass(ft.NondifferentiableError, ft.GradcheckError)
    import functrans.testing
    assert functrans.testing is ft.testing


@pytest.mark.parametrize("modes", [("fwd",), ("rev",), ("fwd", "rev"), "rev"])
def test_modes(modes):
    result = ft.gradcheck(fnp.tanh, modes=modes)(np.array([0.3, -0.2]))
    expected = {modes} if isinstance(modes, str) else set(modes)
    assert {c.mode for c in result.checks if c.kind == "jacobian"} == expected


@pytest.mark.parametrize("bad", [dict(modes=("up",)), dict(modes=()), dict(order=0),
                                 dict(order=1.5)])
def test_invalid_options(bad):
    with pytest.raises(ValueError):
        ft.gradcheck(fnp.sin, **bad)


def test_order_2_checks_every_mode_combination():
    result = ft.gradcheck(lambda x: fnp.sin(x) * x, order=2)(np.array([0.3, 0.8]))
    pairs = {(c.mode, c.function) for c in result.checks if c.kind == "jacobian"}
    assert pairs == {(m, f) for m in ("fwd", "rev") for f in ("f", "jvp(f)", "vjp(f)")}
    assert {c.order for c in result.checks} == {1, 2}


def test_order_2_with_one_mode():
    result = ft.gradcheck(lambda x: fnp.exp(x) * x, order=2, modes=("rev",))(np.array([0.3]))
    assert {(c.mode, c.function) for c in result.checks if c.kind == "jacobian"} == {
        ("rev", "f"), ("rev", "vjp(f)")}


def test_raise_exception_false_returns_a_falsy_result():
    result = ft.gradcheck(fnp.sin, atol=1e-30, rtol=1e-30, eps=1e-2,
                          raise_exception=False)(np.array([0.5, 1.0]))
    assert not result
    assert result.failures and all(c.kind == "jacobian" for c in result.failures)
    assert "failed" in result.report()


def test_eps_is_used():
    # With a huge step the central difference of sin is visibly off; with the default it is not.
    x = np.array([0.5, 1.0])
    assert ft.gradcheck(fnp.sin)(x)
    assert not ft.gradcheck(fnp.sin, eps=0.5, raise_exception=False)(x)


def test_atol_rtol_are_used():
    f = counting(lambda x: fnp.sin(x))
    loose = ft.gradcheck(f, eps=1e-2, atol=1e-3, rtol=1e-3)(np.array([0.5]))
    assert loose
    assert not ft.gradcheck(f, eps=1e-2, atol=1e-9, rtol=1e-9,
                            raise_exception=False)(np.array([0.5]))


# ------------------------------------------------------------------------------------------
# Full mode: vmap, chunks, every element
# ------------------------------------------------------------------------------------------


def test_full_mode_evaluates_f_through_vmap_not_a_loop():
    f = counting(lambda x: fnp.tanh(x) * fnp.sum(x))
    x = np.linspace(-1, 1, 60)
    result = ft.gradcheck(f, modes=("rev",))(x)
    assert result
    # 2n = 120 perturbed points, but only a handful of Python calls of f (one vmapped
    # evaluation, one linearization, two plain calls for the vmap sanity check, ...).
    assert f.calls <= 8


def test_chunks_give_the_same_jacobian():
    x = np.linspace(-1, 1, 7)
    f = lambda x: fnp.sin(x) * fnp.sum(x ** 2)  # noqa: E731
    whole = ft.gradcheck(f)(x)
    chunked = ft.gradcheck(f, chunk_size=3)(x)
    for a, b in zip(whole.checks, chunked.checks):
        if a.kind == "jacobian":
            np.testing.assert_allclose(a.numeric, b.numeric, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(a.analytic, b.analytic, rtol=1e-12, atol=1e-12)


def test_every_element_is_compared():
    x, w = np.ones((2, 3)), np.ones((3, 4))
    result = ft.gradcheck(lambda x, w: x @ w)(x, w)
    sizes = {(c.mode, c.input): c.num_compared for c in result.checks if c.kind == "jacobian"}
    assert sizes == {(m, "x"): 8 * 6 for m in ("fwd", "rev")} | {(m, "w"): 8 * 12
                                                                 for m in ("fwd", "rev")}


def test_function_that_cannot_be_vmapped_falls_back_to_a_loop():
    result = ft.gradcheck(lambda x: sin_unbatchable_p.bind(x) * 2.0, modes=("fwd",))(
        np.array([0.1, 0.2]))
    assert result
    assert any("could not be vmapped" in n for n in result.notes)


# ------------------------------------------------------------------------------------------
# Fast mode
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("modes, calls", [
    # one linearization serves both modes (J·u evaluates it, vᵀJ transposes it), then
    # f(x + h u) and f(x - h u); the nondeterminism check reruns the pullback, not f
    (("fwd", "rev"), 3),
    (("rev",), 3),
    # jvp, the two perturbed calls, and jvp again for the nondeterminism check
    (("fwd",), 4),
])
def test_fast_mode_uses_a_few_evaluations(modes, calls):
    f = counting(lambda x: fnp.tanh(x) * fnp.sum(x))
    result = ft.gradcheck(f, fast_mode=True, modes=modes)(np.linspace(-1, 1, 500))
    assert result
    assert f.calls == calls
    assert {c.mode for c in result.checks if c.kind == "directional"} == set(modes)


def test_fast_mode_forward_check_sees_a_wrong_jvp_rule_through_the_linearization():
    # With both modes, J·u comes from the linearization: a JVP rule 10% off must still fail
    # the forward check, and the reverse check (the transpose of the same rule) too.
    result = ft.gradcheck(lambda x: exp_wrong_scale_p.bind(x), fast_mode=True,
                          raise_exception=False)(np.linspace(-1, 1, 50))
    failed = {c.mode for c in result.failures if c.kind == "directional"}
    assert failed == {"fwd", "rev"}


def test_fast_mode_failure_reruns_full_mode_to_name_entries():
    with pytest.raises(ft.GradcheckError) as info:
        ft.gradcheck(lambda x: exp_wrong_scale_p.bind(x), fast_mode=True)(
            np.array([0.1, 0.2, 0.3]))
    report = str(info.value)
    assert "vᵀJu" in report and "Full mode (every entry) agrees" in report
    assert "x[2]" in report


# ------------------------------------------------------------------------------------------
# Inputs: pytrees, scalars, integers, keyword arguments, argnums
# ------------------------------------------------------------------------------------------


def test_pytree_inputs_and_outputs_are_named():
    params = {"w": np.ones((2, 2)) * 0.3, "b": np.array([0.1, -0.1])}

    def model(params, x):
        h = fnp.tanh(x @ params["w"] + params["b"])
        return {"loss": fnp.sum(h ** 2), "hidden": h}

    result = ft.gradcheck(model)(params, np.array([1.0, 2.0]))
    names = {(c.output, c.input) for c in result.checks if c.kind == "jacobian"}
    assert names == {(o, i) for o in ("out['hidden']", "out['loss']")
                     for i in ("params['b']", "params['w']", "x")}


def test_integer_and_bool_inputs_and_outputs_are_skipped():
    def f(x, n, mask):
        return fnp.where(mask, x ** n, -x), fnp.argmax(x)

    result = ft.gradcheck(f)(np.array([0.5, 1.5]), 3, np.array([True, False]))
    assert result
    assert {c.input for c in result.checks if c.kind == "jacobian"} == {"x"}
    notes = " ".join(result.notes)
    assert "input n" in notes and "input mask" in notes and "output out[1]" in notes


def test_python_scalars_keyword_arguments_and_argnums():
    f = lambda x, y, scale=1.0: fnp.sin(x) * y * scale  # noqa: E731
    assert ft.gradcheck(f)(0.5, 2.0, scale=3.0)
    result = ft.gradcheck(f, argnums=1)(0.5, np.array([2.0, 1.0]))
    assert {c.input for c in result.checks if c.kind == "jacobian"} == {"y"}


def test_no_floating_input_is_an_error():
    with pytest.raises(ValueError, match="no floating-point"):
        ft.gradcheck(lambda n: n * 2.0)(3)


# ------------------------------------------------------------------------------------------
# Complex numbers: the library's (JAX's) convention
# ------------------------------------------------------------------------------------------


def test_library_convention_gradient_of_abs_squared_is_two_conj_z():
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j])
    (g,) = ft.vjp(lambda z: fnp.sum(fnp.abs(z) ** 2), z)[1](1.0)
    np.testing.assert_allclose(g, 2 * np.conj(z))
    # The same as ∂f/∂x − i ∂f/∂y from finite differences:
    h = 1e-6
    f = lambda z: np.sum(np.abs(z) ** 2)  # noqa: E731
    dx = np.array([(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(2)])
    dy = np.array([(f(z + 1j * h * e) - f(z - 1j * h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(g, dx - 1j * dy, rtol=1e-8)


@pytest.mark.parametrize("fun", [
    lambda z: z * z,                                  # holomorphic
    lambda z: fnp.conj(z) * z,                       # real values, complex dtype
    lambda z: fnp.abs(z) ** 2,                       # complex -> real
    lambda z: fnp.exp(z) * fnp.conj(z) + z ** 3,     # neither
    lambda z: fnp.real(z) * fnp.imag(z),
], ids=["holomorphic", "zbar_z", "abs2", "mixed", "re_im"])
def test_complex_functions_pass(fun):
    rng = np.random.default_rng(0)
    z = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    assert ft.gradcheck(fun, order=2)(z)
    assert ft.gradcheck(fun, order=2, fast_mode=True)(z)


def test_real_to_complex_and_mixed_inputs():
    x = np.array([0.3, -0.7])
    z = np.array([0.2 + 0.1j, 1.0 - 0.5j])
    assert ft.gradcheck(lambda x, z: fnp.exp(1j * x) * z)(x, z)


def test_complex_report_names_real_and_imaginary_parts():
    with pytest.raises(ft.GradcheckError) as info:
        ft.gradcheck(lambda z: conj_wrong_p.bind(z))(np.array([1.0 + 1.0j, 2.0 - 1.0j]))
    report = str(info.value)
    assert ".imag" in report and "reverse mode" in report


# ------------------------------------------------------------------------------------------
# Precision
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.complex64])
def test_low_precision_inputs_pass_with_default_tolerances(dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.2, 1.0, (3, 2)).astype(dtype)
    f = (lambda x: fnp.tanh(x) * x) if np.dtype(dtype).kind == "f" else (lambda x: x * x)
    assert ft.gradcheck(f)(x)
    assert ft.gradcheck(f, fast_mode=True)(x)


def test_low_precision_failure_is_reported_as_precision_only():
    x = np.linspace(0.1, 1.0, 4).astype(np.float32)
    with pytest.raises(ft.GradcheckError) as info:
        ft.gradcheck(lambda x: fnp.sum(fnp.exp(10 * x)), atol=1e-7, rtol=1e-7)(x)
    assert "only a precision issue" in str(info.value).lower()
    assert all(c.precision_only for c in info.value.result.failures)


def test_numeric_side_dtype_option():
    x = np.array([0.3, 0.6], np.float32)
    result = ft.gradcheck(fnp.sin, dtype=np.float32, eps=1e-2, atol=1e-2, rtol=1e-2)(x)
    assert result


# ------------------------------------------------------------------------------------------
# Non-differentiable points
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("fun,x,bad_index", [
    (lambda x: fnp.maximum(x, 0.0), np.array([0.5, 0.0, -0.3]), "x[1]"),
    (lambda x: fnp.max(x) * 1.0, np.array([0.2, 0.7, 0.7]), "x[1]"),
    (lambda x: fnp.abs(x - 0.25), np.array([0.25, 1.0]), "x[0]"),
], ids=["relu_at_0", "max_tie", "abs_kink"])
def test_nondifferentiable_points_are_named(fun, x, bad_index, fast_mode):
    with pytest.raises(ft.NondifferentiableError) as info:
        ft.gradcheck(fun, detect_nondifferentiable=True, fast_mode=fast_mode)(x)
    message = str(info.value)
    assert "not differentiable" in message and bad_index in message


def test_smooth_points_raise_no_nondifferentiable_error():
    x = np.array([0.5, 1.5, -0.3])
    assert ft.gradcheck(lambda x: fnp.maximum(x, 0.0) + fnp.abs(x), order=2,
                        detect_nondifferentiable=True)(x)


def test_nondifferentiable_result_without_raising():
    result = ft.gradcheck(fnp.abs, detect_nondifferentiable=True, raise_exception=False)(
        np.array([0.0]))
    assert not result and result.failures[0].kind == "nondifferentiable"


# ------------------------------------------------------------------------------------------
# Batched, undefined, dtype and nondeterminism checks
# ------------------------------------------------------------------------------------------


def test_batched_checks_pass_on_correct_functions():
    result = ft.gradcheck(lambda x, y: fnp.sin(x) @ y, check_batched_grad=True,
                          check_batched_forward_grad=True)(np.ones((2, 3)), np.ones((3, 2)))
    kinds = {c.kind for c in result.checks}
    assert {"batched_grad", "batched_forward_grad", "undefined_grad"} <= kinds


def test_undefined_grad_catches_an_affine_transpose():
    result = ft.gradcheck(lambda x: (fnp.sin(x), affine_p.bind(x)), raise_exception=False)(
        np.array([0.2, 0.4]))
    failed = {c.kind for c in result.failures}
    assert "undefined_grad" in failed


def test_grad_dtypes():
    f = lambda x: square_f32_tangent_p.bind(x)  # noqa: E731
    x = np.array([0.5, 1.5])
    assert ft.gradcheck(f, modes=("fwd",), atol=1e-5, rtol=1e-5)(x)
    result = ft.gradcheck(f, modes=("fwd",), check_grad_dtypes=True, raise_exception=False)(x)
    (failure,) = result.failures
    assert failure.kind == "grad_dtypes" and "f32" in failure.message


def test_nondeterministic_backward():
    f = lambda x: jitter_p.bind(x) * x  # noqa: E731
    x = np.array([0.5, 1.5])
    result = ft.gradcheck(f, modes=("rev",), raise_exception=False)(x)
    assert [c.kind for c in result.failures] == ["nondeterminism"]
    assert ft.gradcheck(f, modes=("rev",), nondet_tol=1e-9)(x)


# ------------------------------------------------------------------------------------------
# Report, seed, heatmap
# ------------------------------------------------------------------------------------------


def test_report_contents():
    def model(x, w):
        return exp_scaled_report_p.bind(x) * w

    with pytest.raises(ft.GradcheckError) as info:
        ft.gradcheck(model, seed=7, modes=("rev",))(np.array([0.1, 0.2]), np.array([1.0, 3.0]))
    report = str(info.value)
    for expected in ["Jacobian of out w.r.t. x", "output index", "input index", "numeric",
                     "analytic", "tolerance", "ratio", "numeric Jacobian", "analytic Jacobian",
                     "seed=7", "--functrans-seed", "passed: rev model d out/d w"]:
        assert expected in report
    assert report.splitlines()[0].startswith("gradcheck of model failed")
    worst = info.value.result.failures[0].worst[0]
    assert worst.input_index == "[1]" and worst.ratio > 1


def test_seed_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("FUNCTRANS_TEST_SEED", "1234")
    assert ft.gradcheck(fnp.sin, fast_mode=True)(np.array([0.5])).seed == 1234
    monkeypatch.setenv("FUNCTRANS_TEST_SEED", "random")
    assert isinstance(ft.gradcheck(fnp.sin, fast_mode=True)(np.array([0.5])).seed, int)
    assert ft.gradcheck(fnp.sin, seed=5)(np.array([0.5])).seed == 5


def test_same_seed_same_directions():
    f = lambda x: fnp.sin(x) * fnp.sum(x)  # noqa: E731
    x = np.linspace(0, 1, 5)
    a = ft.gradcheck(f, fast_mode=True, seed=3)(x)
    b = ft.gradcheck(f, fast_mode=True, seed=3)(x)
    assert [c.worst[0].numeric for c in a.checks if c.kind == "directional"] == [
        c.worst[0].numeric for c in b.checks if c.kind == "directional"]


@pytest.mark.parametrize("sizes", [(1000,), (3, 7), (1,)])
def test_random_direction_is_the_floored_unit_draw(sizes):
    # Fast mode draws u and v with whole-array operations; a seed must still give the
    # directions the element-by-element description gives (reports stay reproducible).
    values = [np.zeros(n) for n in sizes] + [np.zeros(2, np.complex128)]
    got = np.concatenate([np.concatenate([d.real, d.imag]) if d.dtype.kind == "c" else d
                          for d in random_direction(np.random.default_rng(4), values)])
    r = np.random.default_rng(4).standard_normal(got.size)
    r /= np.linalg.norm(r)
    floor = 0.1 / np.sqrt(r.size)
    if (np.abs(r) < floor).any():
        r[np.abs(r) < floor] = np.copysign(floor, r[np.abs(r) < floor])
        r /= np.linalg.norm(r)
    assert np.array_equal(got, r)
    assert np.isclose(np.linalg.norm(got), 1.0) and np.abs(got).min() > 0.99 * floor


def test_save_heatmap(tmp_path):
    pytest.importorskip("matplotlib")
    result = ft.gradcheck(lambda x, y: exp_scaled_report_p.bind(x) * y, raise_exception=False)(
        np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]))
    path = tmp_path / "errors.png"
    result.save_heatmap(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_heatmap_without_matplotlib_or_blocks(tmp_path, monkeypatch):
    result = ft.gradcheck(fnp.sin, fast_mode=True)(np.array([0.5]))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install matplotlib"):
            result.save_heatmap(tmp_path / "x.png")
    else:  # fast mode has no Jacobian blocks: its directional errors are drawn as bars
        result.save_heatmap(tmp_path / "x.png")
        assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_gradcheck_keeps_the_function_name():
    def my_loss(x):
        return fnp.sum(x ** 2)
    checker = ft.gradcheck(my_loss)
    assert checker.__name__ == "my_loss"
    assert "my_loss" in repr(checker(np.ones(2)))


# ------------------------------------------------------------------------------------------
# The comparison of full mode: in place, with a partial selection of the worst entries
# ------------------------------------------------------------------------------------------

_checks = __import__("sys").modules["functrans.gradcheck.checks"]


@pytest.mark.parametrize("size", [3, 40, 5000, 100_000])
def test_largest_is_a_descending_sort_with_ties_in_index_order(size):
    rng = np.random.default_rng(size)
    values = rng.integers(0, 7, size).astype(float)  # many ties
    values[rng.integers(0, size, 2)] = np.inf
    expected = sorted(range(size), key=lambda k: (-values[k], k))[:5]
    assert list(_checks.largest(values, min(5, size))) == expected
    spread = rng.standard_normal((size // 10 + 1, 10))
    order = np.argsort(-spread.reshape(-1), kind="stable")[:5]
    assert list(_checks.largest(spread, 5)) == list(order)


def test_block_comparison_follows_compare():
    rng = np.random.default_rng(1)
    numeric = rng.standard_normal((30, 40))
    analytic = numeric + 1e-5 * rng.standard_normal((30, 40))
    noise = np.abs(1e-9 * rng.standard_normal((30, 40)))
    special = [analytic.copy() for _ in range(3)]
    special[1][2, 3], special[1][4, 5] = np.nan, np.inf  # NaN errors: compare's rules
    special[2][0, 0] = numeric[0, 0]
    for a_block, a_tol in zip(special, (1e-5, 1e-5, 0.0)):  # a zero tolerance last
        tol, ratio, max_error, failed, top = _checks.block_comparison(
            numeric, a_block, noise, a_tol, 1e-5)
        expected_tol = a_tol + 1e-5 * np.abs(numeric) + noise
        diff, expected = _checks.compare(numeric, a_block, expected_tol)
        np.testing.assert_array_equal(tol, expected_tol)
        np.testing.assert_array_equal(ratio, expected)
        assert max_error == diff.max() and failed == np.count_nonzero(expected > 1)
        assert ratio.reshape(-1)[top[0]] == np.nanmax(expected) or np.isnan(expected).any()


_RULE_SCALE = np.array([1.0, 1.0, 1.0, 1.3, 1.2, 1.0, 1.1])
tanh_scaled_rule_p = _primitive("test_tanh_scaled_rule", np.tanh,
                                lambda g, x: g * _RULE_SCALE * (1 - lax.tanh(x) ** 2))


def test_full_mode_names_the_worst_entries_largest_first():
    wrong = tanh_scaled_rule_p
    w = np.random.default_rng(0).standard_normal((7, 7))
    result = ft.gradcheck(lambda x: wrong.bind(x @ w), modes="rev",
                          raise_exception=False)(np.linspace(-0.5, 0.5, 7))
    check = result.checks[0]
    assert not check.passed
    ratios = [e.ratio for e in check.worst]
    assert ratios == sorted(ratios, reverse=True) and len(ratios) == 5
    assert check.worst[0].output_index == "[3]"  # the 30% error in output 3
    assert check.num_failed == 3 * 7  # every entry of outputs 3, 4 and 6
