"""Reliability: leaked tracers and the leak checker, concretization errors, a clean state
after any exception, nothing lost to NumPy's mutability, threads, deep programs, memory."""
from __future__ import annotations

import gc
import operator
import threading
import time
import tracemalloc

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import core, lax
from functrans.core import trace_stack
from functrans.interpreters import ad, batching, transpose
from functrans.core import EvalTrace
from sweep import transforms


def assert_clean():
    """The interpreter state is as it was before any transform ran, and it works."""
    assert len(trace_stack()) == 1, trace_stack()
    assert core._state.dynamic is trace_stack()[0]
    assert not ft.config.check_tracer_leaks
    assert ft.grad(lambda x: x ** 3)(2.0) == 12.0
    assert len(trace_stack()) == 1


@pytest.fixture(autouse=True)
def clean_after_each_test():
    yield
    assert_clean()


V3 = np.array([0.5, -1.0, 2.0])

# Each runs a function of one float64 scalar (or of each member of a batch) under a transform.
TRANSFORMS = transforms("grad", "jvp", "vjp", "linearize", "vmap", "make_jaxpr", "eval_shape",
                        "jacfwd", "jacrev", "hessian", "grad_of_vmap")
# The tracer a leaky function of TRANSFORMS[name] stores, and the trace it belongs to.
LEAKED_TYPES = {
    "grad": ("JVPTracer", "JVPTrace"), "jvp": ("JVPTracer", "JVPTrace"),
    "vjp": ("JVPTracer", "JVPTrace"), "linearize": ("JVPTracer", "JVPTrace"),
    "vmap": ("BatchTracer", "BatchTrace"), "make_jaxpr": ("JaxprTracer", "JaxprTrace"),
    "eval_shape": ("JaxprTracer", "JaxprTrace"), "jacfwd": ("JVPTracer", "JVPTrace"),
    "jacrev": ("JVPTracer", "JVPTrace"), "hessian": ("JVPTracer", "JVPTrace"),
    "grad_of_vmap": ("BatchTracer", "BatchTrace"),
}


def leaky(stash: list):
    def f(x):
        stash.append(x)
        return x * x
    return f


# ------------------------------------------------------------------------------------------
# Leaked tracers: using one raises UnexpectedTracerError, even to read its value
# ------------------------------------------------------------------------------------------

CONCRETIZATIONS = {
    "float": float, "int": int, "bool": bool, "complex": complex, "index": operator.index,
    "if": lambda t: 1 if t else 0, "range": lambda t: range(t),
    "list_index": lambda t: [1, 2, 3][t], "np.asarray": np.asarray,
}


@pytest.mark.parametrize("conversion", list(CONCRETIZATIONS))
@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_concrete_value_of_a_leaked_tracer_raises(transform, conversion):
    stash = []
    TRANSFORMS[transform](leaky(stash), 2.0)
    tracer = stash[-1]
    assert isinstance(tracer, core.Tracer)
    with pytest.raises(ft.UnexpectedTracerError, match="leaked") as info:
        CONCRETIZATIONS[conversion](tracer)
    assert "f64[]" in str(info.value)


def test_tracer_of_another_thread_is_a_leak_there():
    """A tracer handed to another thread, while its transform is still running, is unknown
    to that thread's interpreter stack."""
    handed_over, done, seen = threading.Event(), threading.Event(), {}
    box = []

    def f(x):
        box.append(x)
        handed_over.set()
        assert done.wait(10)
        return x * x

    def other_thread():
        assert handed_over.wait(10)
        for name, use in [("multiply", lambda t: t * 2.0), ("float", float)]:
            try:
                use(box[0])
            except ft.UnexpectedTracerError:
                seen[name] = True
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert ft.grad(f)(3.0) == 6.0  # the owner's transform is not disturbed
    thread.join()
    assert seen == {"multiply": True, "float": True}


# ------------------------------------------------------------------------------------------
# The leak checker
# ------------------------------------------------------------------------------------------

class Holder:
    pass


def leak_into(where: str):
    """A function of x that stores a tracer somewhere outside itself, and that somewhere."""
    holder = Holder()
    cell = [None]
    store = {"list": [], "dict": {}, "attribute": holder, "closure": cell}

    def f(x):
        y = fnp.sin(x)
        if where == "list":
            store["list"].append(y)
        elif where == "dict":
            store["dict"]["y"] = y
        elif where == "attribute":
            holder.y = y
        else:
            def later():
                return y
            cell[0] = later
        return x * x

    return f, store


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_leak_checker_names_the_transform_and_the_tracer(transform):
    f, _ = leak_into("list")
    with pytest.raises(ft.UnexpectedTracerError) as info:
        with ft.checking_leaks():
            TRANSFORMS[transform](f, 2.0)
    tracer_type, trace_type = LEAKED_TYPES[transform]
    message = str(info.value)
    for fragment in ["Leaked 1 tracer", trace_type, f"{tracer_type}<f64[]>", "list",
                     "return it instead"]:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("where", ["list", "dict", "attribute", "closure"])
def test_leak_checker_finds_every_kind_of_holder(where):
    f, _ = leak_into(where)
    with pytest.raises(ft.UnexpectedTracerError, match="Leaked 1 tracer of JVPTrace"):
        with ft.checking_leaks():
            ft.grad(f)(1.0)


def test_leak_checker_config_flag(monkeypatch):
    f, store = leak_into("list")
    assert ft.grad(f)(1.0) == 2.0  # off by default: the leak goes unnoticed until used
    monkeypatch.setattr(ft.config, "check_tracer_leaks", True)
    with pytest.raises(ft.UnexpectedTracerError, match="JVPTrace"):
        ft.grad(f)(1.0)
    monkeypatch.setattr(ft.config, "check_tracer_leaks", False)
    with pytest.raises(ft.UnexpectedTracerError, match="leaked"):
        store["list"][0] + 1.0


def test_checking_leaks_is_restored_after_an_error():
    with pytest.raises(ZeroDivisionError):
        with ft.checking_leaks():
            assert ft.config.check_tracer_leaks
            1 / 0
    assert not ft.config.check_tracer_leaks
    with ft.checking_leaks():
        with ft.checking_leaks():
            pass
        assert ft.config.check_tracer_leaks


def test_leak_checker_does_not_hide_the_original_error():
    f, _ = leak_into("list")

    def fails(x):
        f(x)
        raise KeyError("the user's error")

    with ft.checking_leaks(), pytest.raises(KeyError, match="the user's error"):
        ft.grad(fails)(1.0)


def test_tracers_in_garbage_cycles_are_not_leaks():
    def f(x):
        cycle = [fnp.sin(x)]
        cycle.append(cycle)  # unreachable once f returns, but only the gc can free it
        return x * x

    gc.disable()
    try:
        with ft.checking_leaks():
            assert ft.grad(f)(3.0) == 6.0
    finally:
        gc.enable()


@ft.custom_jvp
def _softplus(x):
    return fnp.log(1.0 + fnp.exp(x))


_softplus.defjvps(lambda t, ans, x: t / (1.0 + fnp.exp(-x)))


@ft.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (fnp.clip(g, -1.0, 1.0),))


def _scan_sum(x):
    return lax.scan(lambda c, xi: (c + fnp.sin(xi * c), c), x[0], x)[0]


CLEAN_PROGRAMS = {
    "nested_grad": lambda: ft.grad(lambda x: x * ft.grad(lambda y: x * y ** 3)(x))(1.5),
    "vmap_of_grad": lambda: ft.vmap(ft.grad(lambda x: fnp.sin(x) * x))(V3),
    "grad_of_vmap": lambda: ft.grad(lambda x: fnp.sum(ft.vmap(fnp.tanh)(x)))(V3),
    "hessian": lambda: ft.hessian(lambda x: fnp.sum(fnp.sin(x) ** 2))(V3),
    "jacrev": lambda: ft.jacrev(lambda x: fnp.sin(x) * x[0])(V3),
    "make_jaxpr_of_grad": lambda: ft.make_jaxpr(ft.grad(lambda x: fnp.sum(x ** 3)))(V3).eqns,
    "vjp_and_pullback": lambda: ft.vjp(fnp.exp, V3)[1](V3),
    "linearize_and_apply": lambda: ft.linearize(fnp.tanh, V3)[1](V3),
    "cond": lambda: ft.grad(lambda x: lax.cond(x > 0, fnp.sin, fnp.cos, x))(0.3),
    "scan": lambda: ft.vmap(ft.grad(_scan_sum))(np.ones((2, 3))),
    "while_loop_jvp": lambda: ft.jvp(
        lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x), (1.0,), (1.0,)),
    "fori_loop_grad": lambda: ft.grad(
        lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0),
    "custom_jvp": lambda: ft.vmap(ft.grad(_softplus))(V3),
    "custom_vjp": lambda: ft.grad(lambda x: 5.0 * _clip_gradient(x))(2.0),
    "checkpoint": lambda: ft.grad(ft.checkpoint(lambda x: fnp.sin(fnp.sin(x))))(0.5),
}
@pytest.mark.parametrize("name", list(CLEAN_PROGRAMS))
def test_leak_checker_accepts_programs_without_leaks(name, monkeypatch):
    program = CLEAN_PROGRAMS[name]
    expected = program()
    slow_checks = []
    original = core.check_no_leaks
    monkeypatch.setattr(core, "check_no_leaks", lambda t: (slow_checks.append(t), original(t)))
    with ft.checking_leaks():
        result = program()
    if name != "make_jaxpr_of_grad":
        ft.tree_util.tree_map(np.testing.assert_allclose, result, expected)
    # Every trace died as its transform ended: the expensive search never ran.
    assert not slow_checks, slow_checks


def test_leak_checker_costs_nothing_when_off(monkeypatch):
    calls = []
    monkeypatch.setattr(core.gc, "collect", lambda *a: calls.append("collect") or 0)
    monkeypatch.setattr(core, "check_no_leaks", lambda t: calls.append("check"))
    f, _ = leak_into("list")
    for program in [lambda: ft.grad(f)(1.0), lambda: ft.vmap(f)(V3),
                    lambda: ft.make_jaxpr(f)(1.0), lambda: ft.hessian(f)(1.0)]:
        program()
    assert calls == []


# ------------------------------------------------------------------------------------------
# Concretization: abstract or batched values cannot steer Python; concrete ones can
# ------------------------------------------------------------------------------------------

ABSTRACT = transforms("make_jaxpr", "eval_shape", "vmap", "make_jaxpr_of_grad", "cond_branch")
# fun, the operation the error names, and fun's first and second derivatives at 2.5
PYTHON_USES = {
    "if": (lambda x: x if x > 1.0 else -x, "truth value", 1.0, 0.0),
    "while": (lambda x: _halve_until_small(x), "truth value", 0.25, 0.0),
    "int": (lambda x: x * int(x), "int()", 2.0, 0.0),
    "float": (lambda x: x * float(x), "float()", None, None),  # refused under every transform
    "index": (lambda x: x * [1.0, 2.0, 3.0][x.astype(np.int64)], "index", 3.0, 0.0),
    "range": (lambda x: sum(x for _ in range(x.astype(np.int64))), "index", 2.0, 0.0),
}


def _halve_until_small(x):
    while x > 1.0:
        x = x / 2.0
    return x


@pytest.mark.parametrize("use", list(PYTHON_USES))
@pytest.mark.parametrize("transform", list(ABSTRACT))
def test_python_control_flow_on_abstract_values_raises(transform, use):
    fun, operation, _, _ = PYTHON_USES[use]
    with pytest.raises(ft.ConcretizationTypeError) as info:
        ABSTRACT[transform](fun, 1.5)
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    for fragment in [operation, "lax.cond", "lax.while_loop"]:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if transform == "vmap":
        assert "vmap" in message and "2" in message  # the batch size


CONCRETE = transforms("grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "grad_of_grad")


@pytest.mark.parametrize("use", list(PYTHON_USES))
@pytest.mark.parametrize("transform", list(CONCRETE))
def test_python_control_flow_on_concrete_values_works(transform, use):
    fun, _, first, second = PYTHON_USES[use]
    if use == "float":  # float() would drop the derivative: refused even when concrete
        with pytest.raises(ft.ConcretizationTypeError, match="drop its derivative"):
            CONCRETE[transform](fun, 2.5)
        return
    expected = second if CONCRETE[transform].order == 2 else first
    np.testing.assert_allclose(CONCRETE[transform](fun, 2.5), expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# After any exception the interpreter state is clean
# ------------------------------------------------------------------------------------------


class UserError(Exception):
    pass


def raising(exc_type):
    def fail(*_):
        raise exc_type("raised inside a transform")
    return fail


@ft.custom_jvp
def _bad_jvp_rule(x):
    return fnp.sin(x)


_bad_jvp_rule.defjvp(lambda primals, tangents: raising(UserError)())


@ft.custom_vjp
def _bad_bwd(x):
    return fnp.sin(x)


_bad_bwd.defvjp(lambda x: (fnp.sin(x), x), lambda res, g: raising(UserError)())

FAILURE_POINTS = {
    # every transform of the table, and compositions of them with control flow
    **{name: (lambda fail, t=t: t(fail, 1.0)) for name, t in TRANSFORMS.items()},
    **{name: (lambda fail, t=t: t(fail, 1.0)) for name, t in transforms(
        "value_and_grad", "grad_of_grad", "vmap_of_grad", "make_jaxpr_of_grad").items()},
    "value_and_grad_of_vmap": lambda fail: ft.value_and_grad(
        lambda x: fnp.sum(ft.vmap(fail)(x)))(V3),
    "deeply_nested": lambda fail: ft.grad(lambda x: fnp.sum(ft.vmap(ft.grad(
        lambda y: ft.make_jaxpr(fail)(y) and y))(x)))(V3),
    "scan_body": lambda fail: ft.grad(lambda x: lax.scan(
        lambda c, xi: (fail(c), xi), x, np.ones(2))[0])(1.0),
    "cond_branch": lambda fail: ft.vmap(lambda x: lax.cond(x > 0, fail, fnp.sin, x))(V3),
    "custom_jvp_rule": lambda fail: ft.grad(_bad_jvp_rule)(1.0),
    "custom_vjp_bwd_in_pullback": lambda fail: ft.vjp(_bad_bwd, 1.0)[1](1.0),
    "custom_vjp_bwd_in_grad_of_grad": lambda fail: ft.grad(ft.grad(_bad_bwd))(1.0),
}


@pytest.mark.parametrize("where,exc_type", [
    (where, exc_type) for where in FAILURE_POINTS
    for exc_type in ([UserError] if where.startswith("custom") else  # their rules raise it
                     [UserError, KeyboardInterrupt, ft.ConcretizationTypeError])])
def test_state_is_clean_after_an_exception(where, exc_type):
    with pytest.raises(exc_type):
        FAILURE_POINTS[where](raising(exc_type))
    assert_clean()
    # and the same transform works right after
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(fnp.sin(x)))(V3), np.cos(V3))


def test_state_is_clean_after_an_exception_under_the_leak_checker():
    with pytest.raises(UserError), ft.checking_leaks():
        ft.vmap(ft.grad(raising(UserError)))(V3)
    assert_clean()
    f, _ = leak_into("list")
    with pytest.raises(ft.UnexpectedTracerError), ft.checking_leaks():
        ft.grad(lambda x: fnp.sum(ft.vmap(f)(x)))(V3)
    assert_clean()


def test_missing_rules_name_the_primitive_and_the_transform():
    """A primitive with an impl but no JVP / batching / transpose rule."""
    prim = core.Primitive("reliability_test_no_rules")
    core.impl_rules[prim] = lambda x: np.cos(x)
    core.abstract_eval_rules[prim] = lambda aval: aval
    try:
        assert prim.bind(0.0) == 1.0
        for run, message in [
                (lambda: ft.grad(prim.bind)(0.5),
                 "Differentiation rule for 'reliability_test_no_rules' not implemented"),
                (lambda: ft.jvp(prim.bind, (0.5,), (1.0,)), "Differentiation rule"),
                (lambda: ft.vmap(prim.bind)(V3),
                 "Batching rule for 'reliability_test_no_rules' not implemented")]:
            with pytest.raises(NotImplementedError, match=message):
                run()
            assert_clean()
        # Linear in its argument as far as the JVP says, but it has no transpose rule.
        ad.deflinear_jvp(prim)
        np.testing.assert_allclose(ft.jvp(prim.bind, (0.5,), (1.0,))[1], np.cos(1.0))
        with pytest.raises(NotImplementedError,
                           match="Transpose rule for 'reliability_test_no_rules'"):
            ft.grad(prim.bind)(0.5)
    finally:
        for table in (core.impl_rules, core.abstract_eval_rules, ad.jvp_rules,
                      batching.batching_rules, transpose.transpose_rules):
            table.pop(prim, None)


# ------------------------------------------------------------------------------------------
# Nothing lost: results of vjp and linearize do not change when the caller mutates arrays
# ------------------------------------------------------------------------------------------

def _random(*shape):
    return np.random.default_rng(1).normal(size=shape)  # the same values on every call


def _pullback_and_jvp(f, x, forward=True):
    """The results of vjp and linearize at x, as functions to call later."""
    _, f_vjp = ft.vjp(f, x)
    _, f_jvp = ft.linearize(f, x)
    ct = np.linspace(1.0, 2.0, np.size(f(x))).reshape(np.shape(f(x)))
    t = np.linspace(-1.0, 1.0, np.size(x)).reshape(np.shape(x))
    return lambda: (f_vjp(ct)[0], f_jvp(t) if forward else None)


# name -> (make(): (f, x, mutate)): f closes over caller arrays that mutate() changes
def _closure_matrix():
    w = _random(3, 3)
    return (lambda x: fnp.tanh(w @ x) * x), V3.copy(), lambda: w.__setitem__(..., 0.0)


def _input_array():
    x = V3.copy()
    return (lambda x: fnp.sin(x) * x), x, lambda: x.__setitem__(..., 7.0)


def _global_array():
    global GLOBAL_WEIGHTS
    GLOBAL_WEIGHTS = _random(3)
    return (lambda x: fnp.sum(GLOBAL_WEIGHTS * x ** 2)), V3.copy(), lambda: GLOBAL_WEIGHTS.fill(9.0)


def _attribute():
    model = Holder()
    model.scale = _random(3)

    def f(x):
        return fnp.exp(model.scale * x)
    return f, V3.copy(), lambda: model.scale.__imul__(-3.0)


def _view_of_a_caller_array():
    big = _random(3, 6)
    w = big[:, ::2]  # a view: mutating `big` changes it
    return (lambda x: fnp.sin(w.T @ x)), V3.copy(), lambda: big.fill(0.5)


def _read_only_view_of_a_writeable_array():
    b = _random(3)
    wide = np.broadcast_to(b, (2, 3))  # read-only, yet changes with b
    return (lambda x: fnp.sum(wide * x ** 2, axis=0)), V3.copy(), lambda: b.fill(4.0)


def _zero_dim_array():
    scale = np.array(1.5)  # staged as a literal
    return (lambda x: scale * x ** 2), V3.copy(), lambda: scale.fill(-2.0)


def _custom_vjp_residual():
    w = _random(3)

    @ft.custom_vjp
    def scale(x):
        return w * x
    scale.defvjp(lambda x: (w * x, w), lambda res, g: (res * g,))
    return (lambda x: scale(x) ** 2), V3.copy(), lambda: w.fill(0.0)


def _custom_jvp_closure():
    w = _random(3)

    @ft.custom_jvp
    def scale(x):
        return w * x
    scale.defjvp(lambda primals, tangents: (w * primals[0], w * tangents[0]))
    return (lambda x: fnp.sin(scale(x))), V3.copy(), lambda: w.fill(0.0)


def _scan_over_caller_array():
    xs = _random(4, 3)
    return (lambda x: lax.scan(lambda c, row: (c * row, c), x, xs)[0]), V3.copy(), \
        lambda: xs.fill(1.0)


MUTATIONS = {
    "closed_over_matrix": _closure_matrix,
    "input_array": _input_array,
    "global_array": _global_array,
    "attribute": _attribute,
    "view_of_a_caller_array": _view_of_a_caller_array,
    "read_only_view_of_a_writeable_array": _read_only_view_of_a_writeable_array,
    "zero_dim_array": _zero_dim_array,
    "custom_vjp_residual": _custom_vjp_residual,
    "custom_jvp_closure": _custom_jvp_closure,
    "scan_over_caller_array": _scan_over_caller_array,
}


@pytest.mark.parametrize("case", list(MUTATIONS))
def test_vjp_and_linearize_results_survive_mutation(case):
    forward = case != "custom_vjp_residual"  # it has no forward mode
    f, x, mutate = MUTATIONS[case]()
    f_again, x_again, _ = MUTATIONS[case]()  # a fresh, unmutated copy for the reference
    expected = _pullback_and_jvp(f_again, x_again, forward)()
    later = _pullback_and_jvp(f, x, forward)
    mutate()
    for got, want in zip(later(), expected):
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-13)


def test_vjp_and_linearize_use_the_values_an_array_had_when_it_was_used():
    w = _random(3)
    w0 = w.copy()

    def f(x):
        y = fnp.sin(w * x)
        w[...] = 0.0  # changed after its use: the derivative is that of the values used
        return y

    _, f_vjp = ft.vjp(f, V3)
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], np.cos(w0 * V3) * w0, rtol=1e-15)
    w[...] = w0
    _, f_jvp = ft.linearize(f, V3)
    np.testing.assert_allclose(f_jvp(np.ones(3)), np.cos(w0 * V3) * w0, rtol=1e-15)


def test_vjp_outputs_belong_to_the_caller():
    """Outputs (and aux data) that are also residuals can be changed in place."""
    x = V3.copy()
    y, f_vjp, aux = ft.vjp(lambda x: (fnp.exp(x), fnp.sin(x)), x, has_aux=True)
    y2, f_jvp = ft.linearize(lambda x: fnp.exp(fnp.reshape(x, (3, 1))), x)
    expected = (f_vjp(np.ones(3))[0], f_jvp(np.ones(3)))
    y *= 0.0
    aux *= 0.0
    y2 *= 0.0
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], expected[0], rtol=1e-15)
    np.testing.assert_allclose(f_jvp(np.ones(3)), expected[1], rtol=1e-15)


def _program(x, w, b):
    """Exercises broadcasting, padding, concatenation, slicing, dynamic_update_slice and
    cotangent accumulation (x and h are used many times)."""
    h = fnp.tanh(x @ w + b)
    padded = fnp.pad(h, ((1, 1), (0, 0)))
    stacked = fnp.concatenate([padded, h * h], axis=0)
    s = stacked[1:3] + stacked[-2:] + h[0]
    u = lax.dynamic_update_slice(h, s[:1], (0, 0))
    return (fnp.sum(u * x[:, :1]) + fnp.sum(fnp.broadcast_to(b, (4, 3)) * h)
            + fnp.sum(x * x) + fnp.sum(fnp.where(h > 0, h, 0.1 * h)))


def _every_transform(x, w, b, ct, tx):
    """Runs many transforms of _program on the caller's arrays; returns every result."""
    f = _program
    out = [ft.grad(f, argnums=(0, 1, 2))(x, w, b)]
    y, f_vjp = ft.vjp(lambda x, w: fnp.tanh(x @ w + b), x, w)
    out += [y, f_vjp(ct)]
    out += list(ft.jvp(lambda x: f(x, w, b), (x,), (tx,)))
    y, f_jvp = ft.linearize(lambda x: f(x, w, b), x)
    out += [y, f_jvp(tx)]
    out.append(ft.vmap(f, in_axes=(0, None, None))(np.stack([x, x]), w, b))
    out.append(ft.jacfwd(f, argnums=2)(x, w, b))
    out.append(ft.jacrev(f, argnums=1)(x, w, b))
    out.append(ft.hessian(f, argnums=2)(x, w, b))
    closed = ft.make_jaxpr(f)(x, w, b)
    out.append(ft.eval_jaxpr(closed.jaxpr, closed.consts, x, w, b))
    out.append(ft.linear_transpose(lambda x: x @ w, x)(ct))
    return out


def _caller_arrays():
    rng = np.random.default_rng(3)
    return [rng.normal(size=(4, 5)), rng.normal(size=(5, 3)), rng.normal(size=3),
            rng.normal(size=(4, 3)), rng.normal(size=(4, 5))]


def test_functrans_never_writes_into_caller_arrays():
    arrays = _caller_arrays()
    copies = [a.copy() for a in arrays]
    results = _every_transform(*arrays)
    for a, c in zip(arrays, copies):
        np.testing.assert_array_equal(a, c)
    # Read-only arrays work too: any attempt to write into them would raise.
    read_only = _caller_arrays()
    for a in read_only:
        a.setflags(write=False)
    again = _every_transform(*read_only)
    ft.tree_util.tree_map(np.testing.assert_array_equal, again, results)


# ------------------------------------------------------------------------------------------
# Threads: concurrent transforms give the serial results
# ------------------------------------------------------------------------------------------

NUM_THREADS = 8


def _thread_work(i: int) -> list:
    """Many transforms of a function depending on i, including an escaping vjp and
    linearize whose caller then mutates its arrays."""
    w = np.linspace(-1.0, 1.0, 9).reshape(3, 3) + 0.1 * i
    x = np.linspace(0.5, 1.5, 3) - 0.05 * i

    def f(x):
        return fnp.sum(fnp.tanh(w @ x) * fnp.sin(x)) * (i + 1)

    y, f_vjp = ft.vjp(lambda x: fnp.tanh(w @ x), x)
    _, f_jvp = ft.linearize(lambda x: fnp.sin(w @ x), x)
    w_saved = w.copy()
    w[...] = 0.0  # does not change f_vjp or f_jvp
    pulled, pushed = f_vjp(np.ones(3)), f_jvp(np.ones(3))
    w[...] = w_saved
    closed = ft.make_jaxpr(ft.grad(f))(x)
    return [
        ft.grad(f)(x), ft.jvp(f, (x,), (np.ones(3),)), y, pulled, pushed,
        ft.vmap(ft.grad(f))(np.stack([x, x + 1.0])), ft.jacrev(lambda x: fnp.sin(w @ x))(x),
        ft.hessian(f)(x), ft.eval_jaxpr(closed.jaxpr, closed.consts, x),
        ft.grad(lambda x: lax.scan(lambda c, r: (c * fnp.cos(r), c), x, x * w)[0].sum())(x),
        ft.vmap(ft.grad(_softplus))(x + i),
        ft.grad(lambda s: s * ft.grad(lambda y: s * y ** 3)(1.0 + i))(0.5),
    ]


def _run_in_threads(work, num_threads=NUM_THREADS, rounds=3):
    barrier = threading.Barrier(num_threads)
    results, errors = [None] * num_threads, []

    def run(i):
        try:
            barrier.wait(timeout=30)
            for _ in range(rounds):  # several rounds, so the transforms overlap in time
                results[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(num_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    if errors:
        raise errors[0]
    return results


def test_transforms_in_threads_match_serial_results():
    serial = [_thread_work(i) for i in range(NUM_THREADS)]
    concurrent = _run_in_threads(_thread_work)
    for got, want in zip(concurrent, serial):
        ft.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-14),
                              got, want)


def test_leak_checker_in_threads():
    def work(i):
        with_leak, _ = leak_into("list")
        try:
            ft.grad(with_leak)(1.0 + i)
        except ft.UnexpectedTracerError:
            leak_reported = True
        else:
            leak_reported = False
        return leak_reported, _thread_work(i)[0]

    with ft.checking_leaks():
        results = _run_in_threads(work, rounds=2)
    assert all(reported for reported, _ in results)


def test_pullback_made_in_one_thread_runs_in_another():
    made = {}
    thread = threading.Thread(target=lambda: made.update(vjp=ft.vjp(fnp.sin, V3)))
    thread.start()
    thread.join()
    y, f_vjp = made["vjp"]
    np.testing.assert_allclose(f_vjp(np.ones(3))[0], np.cos(V3))


# ------------------------------------------------------------------------------------------
# Deep programs: 100,000 equations, no recursion, work linear in the length
# ------------------------------------------------------------------------------------------

DEEP_STEPS = 50_000  # two equations each: a 100,000-equation program
RATE = 1.0000001


def chain(x, steps=DEEP_STEPS):
    for _ in range(steps):
        x = x * RATE + 0.0
    return x


def chain_sum(x, steps=DEEP_STEPS):
    return fnp.sum(chain(x, steps))


X2 = np.array([1.0, -2.0])
SCALE = RATE ** DEEP_STEPS

DEEP = {
    "grad": (lambda: ft.grad(chain_sum)(X2), lambda g: np.testing.assert_allclose(
        g, [SCALE, SCALE], rtol=1e-9)),
    "jvp": (lambda: ft.jvp(chain, (X2,), (np.ones(2),))[1], lambda t: np.testing.assert_allclose(
        t, [SCALE, SCALE], rtol=1e-9)),
    "vjp": (lambda: ft.vjp(chain, X2)[1](np.ones(2))[0], lambda g: np.testing.assert_allclose(
        g, [SCALE, SCALE], rtol=1e-9)),
    "vmap": (lambda: ft.vmap(chain)(np.stack([X2, X2])), lambda y: np.testing.assert_allclose(
        y, [X2 * SCALE] * 2, rtol=1e-9)),
    "jacfwd": (lambda: ft.jacfwd(chain)(X2), lambda j: np.testing.assert_allclose(
        j, np.eye(2) * SCALE, rtol=1e-9)),
    "make_jaxpr": (lambda: ft.make_jaxpr(chain)(X2), lambda closed: (
        ft.check_jaxpr(closed.jaxpr), _assert_equal(len(closed.eqns), 2 * DEEP_STEPS),
        np.testing.assert_allclose(ft.eval_jaxpr(closed.jaxpr, closed.consts, X2)[0],
                                   X2 * SCALE, rtol=1e-9))),
}


def _assert_equal(a, b):
    assert a == b, (a, b)


@pytest.mark.parametrize("transform", list(DEEP))
def test_deep_program(transform):
    run, check = DEEP[transform]
    result = run()
    check(result)
    del result  # freeing a deep structure must not recurse either
    gc.collect()


def _count_evaluations(fun, monkeypatch) -> int:
    """How many primitives ``fun()`` evaluates."""
    count = [0]
    original = EvalTrace.process_primitive

    def counting(self, prim, args, params):
        count[0] += 1
        return original(self, prim, args, params)

    monkeypatch.setattr(EvalTrace, "process_primitive", counting)
    fun()
    monkeypatch.setattr(EvalTrace, "process_primitive", original)
    return count[0]


def _third_call(g, *args):
    """``g(*args)`` after two calls: what grad does from a tape's compiled gradient."""
    g(*args)
    g(*args)
    return lambda: g(*args)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev", "hessian", "vmap_of_grad",
                                       "grad_from_a_tape", "vmap_of_grad_from_a_tape"])
def test_work_is_linear_in_program_length(transform, monkeypatch):
    # linearizing every call, except where the tape is the point
    monkeypatch.setattr(ft.config, "reverse_mode",
                        "auto" if transform.endswith("tape") else "compiled")
    runs = {
        "grad_from_a_tape": lambda n: _third_call(ft.grad(lambda x: chain_sum(x, n)), X2),
        "vmap_of_grad_from_a_tape": lambda n: _third_call(
            ft.vmap(ft.grad(lambda x: chain_sum(x, n))), np.stack([X2])),
        "grad": lambda n: ft.grad(lambda x: chain_sum(x, n))(X2),
        "vjp": lambda n: ft.vjp(lambda x: chain(x, n), X2)[1](np.ones(2)),
        "jacrev": lambda n: ft.jacrev(lambda x: chain(x, n))(X2),
        "hessian": lambda n: ft.hessian(lambda x: chain_sum(fnp.sin(x), n))(X2),
        "vmap_of_grad": lambda n: ft.vmap(ft.grad(lambda x: chain_sum(x, n)))(np.stack([X2])),
    }
    if transform.endswith("tape"):
        counts = [_count_evaluations(runs[transform](n), monkeypatch) for n in (100, 200, 400)]
    else:
        counts = [_count_evaluations(lambda: runs[transform](n), monkeypatch)
                  for n in (100, 200, 400)]
    assert counts[2] - counts[1] == 2 * (counts[1] - counts[0]), counts
    # the linear (tangent) program of linearize, and the reverse-mode program, likewise
    sizes = [len(ft.make_jaxpr(ft.grad(lambda x: chain_sum(x, n)))(X2).eqns)
             for n in (100, 200, 400)]
    assert sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0]), sizes


@pytest.mark.parametrize("mode", ["compiled", "auto"])
def test_time_is_linear_in_program_length(mode, monkeypatch):
    """Catches quadratic bookkeeping that counting primitives cannot see; the bound is loose
    (a quadratic algorithm gives 16).  Linearizing every call, and from a tape (the best of
    four calls is one that runs the tape's compiled gradient)."""
    monkeypatch.setattr(ft.config, "reverse_mode", mode)

    def best_time(steps):
        grad = ft.grad(lambda x: chain_sum(x, steps))
        times = []
        gc.collect()
        gc.disable()  # Python's collector walks every live object: superlinear in itself
        try:
            for _ in range(4):
                start = time.perf_counter()
                grad(X2)
                times.append(time.perf_counter() - start)
        finally:
            gc.enable()
        return min(times)

    best_time(100)  # warm up
    assert best_time(16_000) / best_time(4_000) < 8.0


# ------------------------------------------------------------------------------------------
# Memory: nothing accumulates across calls; residuals die with their pullback
# ------------------------------------------------------------------------------------------

W1, W2 = _random(8, 16) / 4, _random(16, 1) / 4
XS = _random(32, 8)


def mlp_loss(params, x):
    w1, w2 = params
    return fnp.mean(fnp.tanh(x @ w1) @ w2 ** 2)


MEMORY_PROGRAMS = {
    "grad": lambda: ft.grad(mlp_loss)((W1, W2), XS),
    "value_and_grad": lambda: ft.value_and_grad(mlp_loss)((W1, W2), XS),
    "vjp": lambda: ft.vjp(mlp_loss, (W1, W2), XS)[1](1.0),
    "jvp": lambda: ft.jvp(mlp_loss, ((W1, W2), XS), ((W1, W2), XS)),
    "linearize": lambda: ft.linearize(mlp_loss, (W1, W2), XS)[1]((W1, W2), XS),
    "vmap": lambda: ft.vmap(mlp_loss, in_axes=(None, 0))((W1, W2), XS[:, None]),
    "make_jaxpr": lambda: ft.make_jaxpr(mlp_loss)((W1, W2), XS),
    "jacfwd": lambda: ft.jacfwd(lambda x: fnp.tanh(x @ W1))(XS[0]),
    "jacrev": lambda: ft.jacrev(lambda x: fnp.tanh(x @ W1))(XS[0]),
    "hessian": lambda: ft.hessian(lambda x: fnp.sum(fnp.tanh(x @ W1)))(XS[0]),
}


def test_transforms_create_no_reference_cycles():
    """Everything a transform allocates is freed by reference counting as soon as it is
    unused, without waiting for the cycle collector."""
    for program in MEMORY_PROGRAMS.values():
        program()  # warm up caches
    gc.collect()
    gc.disable()
    try:
        found = {}
        for name, program in MEMORY_PROGRAMS.items():
            program()
            found[name] = gc.collect()
    finally:
        gc.enable()
    assert all(n == 0 for n in found.values()), found


def _traced_memory_growth(program, calls: int) -> int:
    """Bytes still allocated after the second half of ``calls`` calls, beyond the first."""
    tracemalloc.start()
    try:
        for _ in range(calls // 2):
            program()
        gc.collect()
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(calls // 2):
            program()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["grad", "vjp", "vmap", "hessian"])
def test_memory_does_not_grow_over_many_calls(name):
    calls = 1000 if name == "grad" else 400
    growth = _traced_memory_growth(MEMORY_PROGRAMS[name], calls)
    # A few kB come and go with Python's free lists; one leaked object per call is more.
    assert growth < 10_000, f"{growth} bytes more after {calls // 2} further calls"


def test_residuals_are_released_with_the_pullback():
    x = np.linspace(0.0, 1.0, 250_000)  # 2 MB per array

    def f(x):
        return fnp.sum(fnp.sin(fnp.exp(x) * x))  # several 2 MB residuals

    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        g = ft.grad(f)(x)
        after_grad = tracemalloc.get_traced_memory()[0]
        _, f_vjp = ft.vjp(f, x)
        holding = tracemalloc.get_traced_memory()[0]
        f_vjp(1.0)
        del f_vjp
        released = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    size = x.nbytes
    assert after_grad - baseline < 1.5 * size  # only the gradient stays
    assert holding - after_grad > 2 * size  # the pullback holds the residuals...
    assert released - after_grad < 0.5 * size  # ...and they die with it
    np.testing.assert_allclose(g, np.cos(np.exp(x) * x) * np.exp(x) * (x + 1.0))
