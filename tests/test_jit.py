"""``jit``: the same results as eager evaluation on every case of the sweep (values,
derivatives through ``jit`` and ``jit`` of derivatives, batching), the call primitive's
rules, the cache, static arguments, aliasing and mutation semantics, and the errors."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.tree_util import tree_leaves, tree_map
from sweep import case_rng, random_like
from test_standin import SWEEP, SWEEP_IDS

# ------------------------------------------------------------------------------------------
# jit agrees with eager evaluation on the whole sweep
# ------------------------------------------------------------------------------------------


def _assert_same(got, want, what, rtol=1e-12, atol=1e-13):
    got_leaves, want_leaves = tree_leaves(got), tree_leaves(want)
    assert len(got_leaves) == len(want_leaves), what
    for g, w in zip(got_leaves, want_leaves):
        assert np.shape(g) == np.shape(w), f"{what}: shape {np.shape(g)} != {np.shape(w)}"
        assert np.asarray(g).dtype == np.asarray(w).dtype, (
            f"{what}: dtype {np.asarray(g).dtype} != {np.asarray(w).dtype}")
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol,
                                   err_msg=what, equal_nan=True)


def _run_or_concretization(fn, *args):
    """``fn(*args)``, or None where the function needs concrete values (as under JAX's
    jit: data-dependent shapes, Python control flow on values)."""
    try:
        return fn(*args)
    except ft.ConcretizationTypeError:
        return None


@pytest.mark.parametrize("case", SWEEP, ids=SWEEP_IDS)
def test_jit_matches_eager(case):
    args = case.draw(case_rng(case.id, "jit"))
    want = case.fun(*args)
    got = _run_or_concretization(ft.jit(case.fun), *args)
    if got is not None:
        _assert_same(got, want, case.id)


SWEEP_DIFF = [c for c in SWEEP if c.differentiable and any(c.diff)]


def _split(case, args):
    idx = [i for i, d in enumerate(case.diff) if d]

    def f(*dyn):
        full = list(args)
        for i, v in zip(idx, dyn):
            full[i] = v
        return case.fun(*full)
    return f, [args[i] for i in idx]


@pytest.mark.parametrize("case", SWEEP_DIFF, ids=[c.id for c in SWEEP_DIFF])
def test_derivatives_through_and_under_jit(case):
    rng = case_rng(case.id, "jit-derivatives")
    args = case.draw(rng)
    f, primals = _split(case, args)
    tangents = random_like(rng, primals)
    out, pullback = ft.vjp(f, *primals)
    cts = random_like(rng, out)
    want_jvp, want_vjp = ft.jvp(f, primals, tangents), pullback(cts)

    jitted = ft.jit(f)
    for what, fn in [
            ("jvp(jit(f))", lambda p, t: ft.jvp(jitted, p, t)),
            ("jit(jvp(f))", ft.jit(lambda p, t: ft.jvp(f, p, t)))]:
        got = _run_or_concretization(fn, primals, tangents)
        if got is not None:
            _assert_same(got, want_jvp, f"{case.id}: {what}", rtol=1e-11, atol=1e-12)
    for what, fn in [
            ("vjp(jit(f))", lambda p, c: ft.vjp(jitted, *p)[1](c)),
            ("jit(vjp(f))", ft.jit(lambda p, c: ft.vjp(f, *p)[1](c)))]:
        got = _run_or_concretization(fn, primals, cts)
        if got is not None:
            _assert_same(got, want_vjp, f"{case.id}: {what}", rtol=1e-11, atol=1e-12)


SWEEP_BATCH = [c for c in SWEEP if any(c.batch)]


@pytest.mark.parametrize("case", SWEEP_BATCH, ids=[c.id for c in SWEEP_BATCH])
def test_vmap_of_jit_and_jit_of_vmap(case):
    rng = case_rng(case.id, "jit-vmap")
    members = [case.draw(rng) for _ in range(2)]
    in_axes = [0 if b else None for b in case.batch]
    batched = [np.stack([m[i] for m in members]) if b else members[0][i]
               for i, b in enumerate(case.batch)]
    for i, b in enumerate(case.batch):
        if not b:
            for m in members:
                m[i] = members[0][i]
    want = _run_or_concretization(ft.vmap(case.fun, in_axes=in_axes), *batched)
    if want is None:
        return
    for what, fn in [("vmap(jit(f))", ft.vmap(ft.jit(case.fun), in_axes=in_axes)),
                     ("jit(vmap(f))", ft.jit(ft.vmap(case.fun, in_axes=in_axes)))]:
        got = _run_or_concretization(fn, *batched)
        if got is not None:
            _assert_same(got, want, f"{case.id}: {what}", rtol=1e-11, atol=1e-12)


# ------------------------------------------------------------------------------------------
# Composition with transforms and control flow
# ------------------------------------------------------------------------------------------


def loss(params, x):
    h = fnp.tanh(x @ params["w"] + params["b"])
    return fnp.mean(h ** 2), h


def _params(rng):
    return {"w": rng.standard_normal((4, 3)), "b": rng.standard_normal(3)}


def test_pytrees_and_has_aux_through_jit():
    rng = np.random.default_rng(0)
    params, x = _params(rng), rng.standard_normal((5, 4))
    want = ft.grad(loss, has_aux=True)(params, x)
    for fn in [ft.jit(ft.grad(loss, has_aux=True)), ft.grad(ft.jit(loss), has_aux=True)]:
        _assert_same(fn(params, x), want, "grad with aux")


@pytest.mark.parametrize("order", ["jit(hessian)", "hessian(jit)", "jacfwd(jit)",
                                   "jacrev(jit)", "jit(jit)"])
def test_higher_order_and_nested(order):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(4)

    def f(x):
        return fnp.sum(fnp.sin(x) * fnp.exp(x[::-1]))

    want = {"jit(hessian)": ft.hessian(f), "hessian(jit)": ft.hessian(f),
            "jacfwd(jit)": ft.jacfwd(ft.grad(f)), "jacrev(jit)": ft.jacrev(ft.grad(f)),
            "jit(jit)": ft.grad(f)}[order](x)
    got = {"jit(hessian)": ft.jit(ft.hessian(f)), "hessian(jit)": ft.hessian(ft.jit(f)),
           "jacfwd(jit)": ft.jacfwd(ft.grad(ft.jit(f))),
           "jacrev(jit)": ft.jacrev(ft.jit(ft.grad(f))),
           "jit(jit)": ft.jit(ft.grad(ft.jit(f)))}[order](x)
    _assert_same(got, want, order, rtol=1e-11)


def test_jit_inside_scan_cond_and_while_bodies():
    inner = ft.jit(lambda c, x: (c * fnp.cos(x) + x, c * x))

    def f(x):
        c, ys = lax.scan(inner, 1.0, x)
        c = lax.cond(c > 0, ft.jit(lambda c: c * 2.0), lambda c: c - 1.0, c)
        d = lax.fori_loop(0, 3, ft.jit(lambda i, c: c * 0.5 + i), c)
        return d + fnp.sum(ys)

    def eager(x):
        c, ys = lax.scan(lambda c, x: (c * fnp.cos(x) + x, c * x), 1.0, x)
        c = lax.cond(c > 0, lambda c: c * 2.0, lambda c: c - 1.0, c)
        d = lax.fori_loop(0, 3, lambda i, c: c * 0.5 + i, c)
        return d + fnp.sum(ys)

    x = np.array([0.1, 0.7, -0.3])
    _assert_same(f(x), eager(x), "value")
    _assert_same(ft.grad(f)(x), ft.grad(eager)(x), "grad", rtol=1e-11)
    _assert_same(ft.jit(ft.grad(f))(x), ft.grad(eager)(x), "jit(grad)", rtol=1e-11)
    _assert_same(ft.vmap(f)(np.stack([x, 2 * x])), ft.vmap(eager)(np.stack([x, 2 * x])),
                 "vmap", rtol=1e-11)


def test_make_jaxpr_shows_the_call():
    f = ft.jit(lambda x: fnp.sin(x) * 2.0)
    text = str(ft.make_jaxpr(lambda x: f(x) + 1.0)(np.ones(3)))
    assert "jit[" in text and "sin" in text and "name='<lambda>'" in text


def test_reverse_mode_of_a_while_loop_under_jit_explains():
    f = ft.jit(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x))
    assert float(ft.jvp(f, (1.5,), (1.0,))[1]) == 8.0  # forward mode works
    with pytest.raises(TypeError, match="Reverse-mode differentiation .* while_loop"):
        ft.grad(f)(1.5)


def test_jit_in_custom_jvp_and_checkpoint():
    @ft.custom_jvp
    def g(x):
        return fnp.sin(x)

    g.defjvp(lambda p, t: (fnp.sin(p[0]), 2.0 * t[0]))
    f = ft.jit(lambda x: ft.checkpoint(lambda y: g(y) * y)(x))
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(f(x), np.sin(x) * x)
    np.testing.assert_allclose(ft.grad(lambda x: fnp.sum(f(x)))(x), 2.0 * x + np.sin(x))
    np.testing.assert_allclose(ft.jit(ft.grad(lambda x: fnp.sum(f(x))))(x), 2.0 * x + np.sin(x))


# ------------------------------------------------------------------------------------------
# The cache and static arguments
# ------------------------------------------------------------------------------------------


def test_traces_once_per_signature():
    traced = []

    @ft.jit
    def f(x, y):
        traced.append(1)
        return x * y

    a = np.ones(3)
    f(a, a)
    f(a + 1, a)
    assert len(traced) == 1 and f.cache_info().size == 1
    f(np.ones(4), np.ones(4))  # another shape
    f(a.astype(np.float32), a)  # another dtype
    f(a, 2.0)  # a Python scalar: weakly typed
    f(a, np.float64(2.0))  # a NumPy scalar: strongly typed, another signature
    assert len(traced) == 5 and f._cache_size() == 5
    assert f.cache_info().hits >= 1
    f.clear_cache()
    f(a, a)
    assert len(traced) == 5 or len(traced) == 6  # the trace itself may still be cached
    assert f.cache_info().size == 1


def test_one_array_signatures_alternate():
    # one array argument: the last call's signature is tried first, then the cache
    f = ft.jit(lambda x: x * 2.0)
    a, b, c = np.ones(3), np.ones(4), np.ones(3, np.float32)
    for x in (a, b, a, c, a, b.view(ft.Array), c):
        out = f(x)
        assert out.shape == x.shape and out.dtype == x.dtype
        np.testing.assert_array_equal(out, np.asarray(x) * 2.0)
    assert f.cache_info().size == 3
    f.clear_cache()
    assert f.cache_info().size == 0
    np.testing.assert_array_equal(f(c), c * 2)
    assert f.cache_info().size == 1  # compiled again, not the last call's entry


def test_static_arguments():
    @ft.jit(static_argnums=1, static_argnames="mode")
    def f(x, n, mode="sum"):
        y = x
        for _ in range(n):  # Python control flow on a static value
            y = fnp.sin(y)
        return fnp.sum(y) if mode == "sum" else y

    x = np.array([0.5, 1.0])
    np.testing.assert_allclose(f(x, 2), np.sum(np.sin(np.sin(x))))
    np.testing.assert_allclose(f(x, 1, mode="all"), np.sin(x))
    assert f.cache_info().size == 2
    with pytest.raises(ValueError, match="static argument 1 has unhashable type list"):
        f(x, [1])
    g = ft.jit(lambda x, n: x * n, static_argnames="n")  # by name: also by position
    assert float(g(np.float64(2.0), n=3)) == 6.0 and float(g(np.float64(2.0), 3)) == 6.0


def test_keyword_arguments_are_dynamic():
    f = ft.jit(lambda x, *, scale: x * scale)
    np.testing.assert_allclose(f(np.ones(2), scale=np.array([2.0, 3.0])), [2.0, 3.0])
    np.testing.assert_allclose(f(np.ones(2), scale=np.array([4.0, 5.0])), [4.0, 5.0])
    assert f.cache_info().size == 1


def test_methods_and_decorator_forms():
    class Model:
        def __init__(self, w):
            self.w = w

        @ft.jit
        def apply(self, x):
            return x @ self.w

    with pytest.raises(TypeError, match="jit.*not an array"):
        Model(np.eye(2)).apply(np.ones(2))  # self is an argument: not an array
    apply = ft.jit(lambda x, m: x @ m.w, static_argnums=1)
    with pytest.raises(ValueError, match="unhashable"):
        apply(np.ones(2), type("M", (), {"w": np.eye(2), "__hash__": None})())


def test_python_control_flow_on_traced_values_points_to_lax():
    f = ft.jit(lambda x: x if x > 0 else -x)
    with pytest.raises(ft.ConcretizationTypeError, match="lax.cond"):
        f(1.0)


def test_thread_safe_cache():
    f = ft.jit(lambda x: fnp.tanh(x) * 2.0)
    errors = []

    def work(n):
        try:
            for k in range(20):
                x = np.full(n, 0.1 * k)
                np.testing.assert_allclose(f(x), np.tanh(x) * 2.0)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in (2, 3, 2, 3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and f.cache_info().size == 3


# ------------------------------------------------------------------------------------------
# Aliasing and mutation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [lambda x: x, lambda x: x.reshape(-1), lambda x: x.T,
                                lambda x: x[0], lambda x: fnp.broadcast_to(x, (2, 2, 2)),
                                lambda x: (x, x * 1.0, x + 0.0)])
def test_results_never_alias_arguments(fn):
    x = np.arange(4.0).reshape(2, 2)
    out = ft.jit(fn)(x)
    before = [np.array(o) for o in tree_leaves(out)]
    x[...] = -7.0  # the caller changes its argument afterwards
    for o, b in zip(tree_leaves(out), before):
        np.testing.assert_array_equal(o, b)


def test_jit_never_writes_into_arguments():
    x = np.arange(3.0)
    keep = x.copy()
    f = ft.jit(lambda x: ft.grad(lambda y: fnp.sum(fnp.sin(y) * y))(x) + x)
    f(x)
    np.testing.assert_array_equal(x, keep)


def test_closed_over_arrays_are_read_at_each_call():
    w = np.array([1.0, 2.0])
    f = ft.jit(lambda x: x * w)
    np.testing.assert_allclose(f(np.ones(2)), [1.0, 2.0])
    w[0] = 10.0  # mutated in place: jit reads the same array again, as eager code does
    np.testing.assert_allclose(f(np.ones(2)), [10.0, 2.0])


def test_generated_source_is_printable():
    f = ft.jit(ft.grad(lambda x: fnp.sum(fnp.tanh(x) ** 2)))
    with ft.config.fusion_set(False):  # the NumPy code (tests/test_fusion.py: fused loops)
        source = f.lower(np.ones(3)).as_text()
    assert source.startswith("def ") and "xp.tanh(" in source and "return" in source
    compiled = f.lower(np.ones(3)).compile()
    np.testing.assert_allclose(compiled(np.ones(3)), f(np.ones(3)))


def test_lower_accepts_abstract_arguments():
    f = ft.jit(lambda x: fnp.sum(x * 2.0))
    lowered = f.lower(ft.ShapeDtypeStruct((3,), np.float32))
    assert "f32[3]" in str(lowered.jaxpr)


def test_non_array_arguments_are_refused_with_the_fix():
    with pytest.raises(TypeError, match="static_argnums"):
        ft.jit(lambda x, s: x)(np.ones(2), "text")
    with pytest.raises(TypeError, match="jit: expected a function"):
        ft.jit(3)


def test_rules_of_the_call_primitive_directly():
    f = ft.jit(lambda x, y: (fnp.sin(x) * y, x))
    x, y = np.array([0.2, 0.4]), np.array([1.5, -0.5])
    (o1, o2), (t1, t2) = ft.jvp(f, (x, y), (np.ones(2), np.zeros(2)))
    np.testing.assert_allclose(t1, np.cos(x) * y)
    np.testing.assert_allclose(t2, np.ones(2))
    ct = ft.vjp(f, x, y)[1]((np.ones(2), np.ones(2)))
    np.testing.assert_allclose(ct[0], np.cos(x) * y + 1)
    np.testing.assert_allclose(ct[1], np.sin(x))
    batched = ft.vmap(f, in_axes=(0, None))(np.stack([x, 2 * x]), y)
    np.testing.assert_allclose(batched[0], np.sin(np.stack([x, 2 * x])) * y)
    assert tree_map(np.shape, batched) == ((2, 2), (2, 2))


# ------------------------------------------------------------------------------------------
# The code generator's passes, seen in the generated source
# ------------------------------------------------------------------------------------------


def _source(f, *args):
    with ft.config.fusion_set(False):  # the passes, in the NumPy code they write
        return ft.jit(f).lower(*args).as_text()


def test_scalar_seeds_and_broadcasts_are_folded_away():
    # grad's seed (a broadcast 1.0) times 0.9 becomes the scalar 0.9: no array of ones.
    source = _source(ft.grad(lambda x: fnp.sum(fnp.sin(x) * 0.9)), np.ones(4))
    assert "broadcast" not in source and source.count(" = ") == 2, source  # cos, one product


def test_common_subexpressions_in_either_operand_order():
    source = _source(lambda x, y: fnp.sin(x * y) + fnp.cos(y * x), np.ones(3), np.ones(3))
    assert source.count("*") == 1, source


def test_negations_are_absorbed_exactly():
    f = lambda x, y: x + (-(y * 2.0)) * x  # noqa: E731
    source = _source(f, np.ones(3), np.ones(3))
    assert "negative" not in source and " - " in source, source
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.5, -2.0, 0.25])
    np.testing.assert_array_equal(ft.jit(f)(x, y), f(x, y))  # bit for bit


def test_large_dead_buffers_are_reused_small_ones_and_live_ones_not():
    big, small = np.ones((100, 100)), np.ones(4)
    assert "out=" in _source(lambda x: fnp.tanh(x * 2.0) + 1.0, big)
    assert "out=" not in _source(lambda x: fnp.tanh(x * 2.0) + 1.0, small)
    # y is used again after tanh: its buffer must not be overwritten
    f = lambda x: (lambda y: fnp.tanh(y) + y)(x * 2.0)  # noqa: E731
    np.testing.assert_allclose(ft.jit(f)(big), np.tanh(2 * big) + 2 * big)
    # an argument's buffer is never written
    x = np.full((100, 100), 0.5)
    ft.jit(lambda x: fnp.tanh(x) + 1.0)(x)
    np.testing.assert_array_equal(x, 0.5)


def test_loop_bodies_are_compiled_once():
    from functrans import lax
    f = ft.jit(lambda x: lax.fori_loop(0, 5, lambda i, c: fnp.sin(c) + x, x))
    source = f.lower(np.ones(2)).as_text()
    assert "_scan" in source, source  # the loop calls a compiled body, not the interpreter
    np.testing.assert_allclose(f(np.ones(2)), lax.fori_loop(0, 5, lambda i, c: np.sin(c) + 1.0,
                                                           np.ones(2)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
def test_python_scalars_become_typed_constants_with_the_same_results(dtype):
    # NumPy converts a Python scalar to the array's type on every call; jit converts it
    # once (a 0-d array of that type), with bit-for-bit the same results and dtypes.
    x = np.arange(1, 7).astype(dtype)
    f = lambda x: (x * 0.1 + 2, x > 3, fnp.where(x.real > 2, 0.5, x), 1 - x)  # noqa: E731
    source = _source(f, x)
    assert "0.1" not in source and "_0p1" in source, source  # e.g. _f32_0p1: float32 0.1
    for got, want in zip(ft.jit(f)(x), f(x)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_dead_buffers_take_results_in_place_and_arguments_never_do():
    x = np.linspace(0.0, 1.0, 100)
    keep = x.copy()
    f = lambda x: (x * 2.0 + 1.0) * (x - 3.0) + x  # noqa: E731
    source = _source(f, x)
    assert "+=" in source or "*=" in source, source
    np.testing.assert_array_equal(ft.jit(f)(x), f(x))
    np.testing.assert_array_equal(x, keep)
    # a dead buffer on the right of a subtraction cannot be written with "-="
    g = lambda x: 1.0 - (x * 2.0)  # noqa: E731
    assert "-=" not in _source(g, x)
    np.testing.assert_array_equal(ft.jit(g)(x), g(x))


def test_reshapes_use_the_array_method():
    source = _source(lambda x: fnp.expand_dims(x.reshape(2, 2), 0).squeeze(0) * 2.0,
                     np.ones(4))
    assert "xp.reshape" not in source and "xp.squeeze" not in source, source
    assert ".reshape(" in source, source


@pytest.mark.parametrize("arg", [2, 2.5, True, 1 + 2j])
def test_python_scalar_arguments_pass_through_array_methods(arg):
    # a 0-d argument may arrive as a Python scalar, which has no .reshape or .sum
    for f in [lambda i: fnp.asarray([i, i]), lambda i: fnp.reshape(i, (1, 1)),
              lambda i: fnp.sum(i), lambda i: fnp.transpose(i),
              lambda i: lax.convert_element_type(i, np.complex128)]:
        got, want = np.asarray(ft.jit(f)(arg)), np.asarray(f(arg))
        assert got.dtype == want.dtype and np.array_equal(got, want)
    # and as an unbatched argument of a jitted function under vmap
    got = ft.vmap(ft.jit(lambda i, x: fnp.asarray([i, i]) * x), in_axes=(None, 0))(arg,
                                                                                np.ones(3))
    assert np.array_equal(got, np.ones((3, 1)) * np.asarray([arg, arg]))


def test_pytree_arguments_take_the_fast_path_and_structures_stay_apart():
    f = ft.jit(lambda p, x: p["w"] @ x + p["b"][0] * p["b"][1])
    p = {"w": np.eye(2), "b": [np.ones(2), np.full(2, 3.0)]}
    np.testing.assert_allclose(f(p, np.ones(2)), [4.0, 4.0])
    for _ in range(3):
        np.testing.assert_allclose(f(p, np.arange(2.0)), [3.0, 4.0])
    assert f._cache_size() == 1 and f.cache_info().hits == 3
    # another structure (a tuple for the list, an extra key) is another signature
    np.testing.assert_allclose(f({"w": np.eye(2), "b": (np.ones(2), np.ones(2))},
                                 np.ones(2)), [2.0, 2.0])
    g = ft.jit(lambda p, x: p["w"] @ x)
    g({"w": np.eye(2), "v": None}, np.ones(2))  # None: not a quick structure, still cached
    g({"w": np.eye(2), "v": None}, np.ones(2))
    assert g._cache_size() == 1 and g.cache_info().hits == 1


@pytest.mark.parametrize("n", [10, 100])
def test_a_buffer_with_a_live_view_is_never_written(n):
    # y's last use is y * 3.0, but its reshape v is read after: writing y * 3.0 into y's
    # buffer would change v (a silent wrong answer the buffer reuse once gave).
    def f(x):
        y = x * 2.0
        v, t = y.reshape(-1), y.T
        z = y * 3.0
        return z.reshape(-1) + v + t.reshape(-1)
    x = np.arange(float(n * n)).reshape(n, n)
    np.testing.assert_array_equal(ft.jit(f)(x), f(x))


@pytest.mark.parametrize("f", [
    lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - 0.0, lambda x: x + -0.0,
    lambda x: x - -0.0, lambda x: x + 0, lambda x: x * 1.0, lambda x: x * -0.0,
    lambda x: x * 0.0, lambda x: (x * 2.0) * -0.0])
def test_signed_zeros_as_numpy(f):
    # x + 0.0 is not x where x is -0.0; 0.0 and -0.0 are distinct constants.
    x = np.array([-0.0, 0.0, 1.0])
    for _ in range(2):
        got = ft.jit(f)(x)
        np.testing.assert_array_equal(got, f(x))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(f(x)))


#: the values where rewrites and constants could go wrong silently: signed zeros,
#: infinities, NaN, subnormals, huge values
SPECIAL = np.array([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1e300,
                    -1e300, 0.5, -2.5, 3.0])
UNARY = [n for n in ("neg", "exp", "log", "sin", "cos", "tan", "tanh", "sinh", "cosh", "sqrt",
                     "log1p", "expm1", "atan", "asin", "acos", "abs", "sign", "floor", "ceil",
                     "round", "logistic", "exp2", "cbrt", "rsqrt", "square", "reciprocal",
                     "asinh", "acosh", "atanh", "erf", "erfc", "lgamma", "digamma", "erf_inv")
         if hasattr(lax, n)]
BINARY = [n for n in ("add", "sub", "mul", "div", "max", "min", "pow", "atan2", "rem",
                      "nextafter") if hasattr(lax, n)]


def assert_same_bits(got, want, what=""):
    """Equal dtype and shape, NaN in the same places, equal values with equal signs
    elsewhere (so -0.0 is not 0.0)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, what
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{what}: NaN positions")
    np.testing.assert_array_equal(got[~nan], want[~nan], err_msg=what)
    np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]),
                                  err_msg=f"{what}: signs")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_special_values_as_eager(name):
    f = getattr(lax, name)
    if name in UNARY:
        assert_same_bits(ft.jit(f)(SPECIAL), f(SPECIAL), name)
        return
    x, y = (v.ravel() for v in np.meshgrid(SPECIAL, SPECIAL))
    assert_same_bits(ft.jit(f)(x, y), f(x, y), name)
    for s in (0.0, -0.0, 1.0, 2.0, np.inf):  # Python scalars become typed constants
        for g in (lambda x: f(x, s), lambda x: f(s, x)):
            assert_same_bits(ft.jit(g)(SPECIAL), g(SPECIAL), f"{name} with {s}")


def test_broadcasts_of_both_operands_keep_the_result_shape():
    # each broadcast alone is one NumPy's broadcasting makes unnecessary, not both
    a, b = np.arange(3.0), np.arange(3.0, 6.0)
    f = ft.jit(lambda a, b: lax.broadcast_in_dim(a, (2, 3), (1,))
               * lax.broadcast_in_dim(b, (2, 3), (1,)))
    assert f(a, b).shape == (2, 3)
    np.testing.assert_array_equal(f(a, b), np.broadcast_to(a * b, (2, 3)))


@pytest.mark.parametrize("fusion", [False, True], ids=["unfused", "fused"])
def test_weakly_typed_values_computed_inside_keep_the_jaxprs_dtype(fusion, monkeypatch):
    # i / 10 of an integer argument is a weakly typed float64 that the generated code holds
    # as a NumPy value; NumPy would promote float32 arrays to float64 by it, where the jaxpr,
    # eager functrans (which keeps Python scalars) and JAX give float32
    monkeypatch.setattr(ft.config, "fusion", fusion)
    m = np.linspace(0.5, 1.5, 4096).astype(np.float32)
    programs = [lambda i, m: m * (i / 10),
                lambda i, m: m / (1 - fnp.asarray(0.9, np.float32) ** (i + 1)),
                lambda i, m: fnp.where(m > i / 4, m, i / 10),
                lambda i, m: fnp.sum(fnp.exp(m * (i / 10)) + m ** (i + 1)),
                ft.grad(lambda m, i: fnp.sum(fnp.sin(m * (i / 10))))]
    for k, f in enumerate(programs):
        args = (m, 3) if k == 4 else (3, m)
        want = f(*args)
        got = ft.jit(f)(*args)
        assert want.dtype == np.float32, k
        assert got.dtype == want.dtype, k
        np.testing.assert_allclose(got, want, rtol=2e-6, err_msg=str(k))
