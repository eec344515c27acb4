"""functrans.jaxpr_transforms: cached tracing of control-flow bodies, memoised jaxpr
transforms, the partial evaluator behind cond/scan/checkpoint, and the layering rule that
keeps the interpreters free of the primitive families."""
from __future__ import annotations

import ast
import gc
import pathlib
import weakref

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import core, jaxpr_transforms, lax

PACKAGE = pathlib.Path(ft.__file__).parent


def _misses():
    return {name: misses for name, (_, misses) in jaxpr_transforms.cache_info().items()}


def _body(c, x):
    return c * fnp.sin(x) + x, c * x


def _branch_true(x):
    return fnp.sin(x) * x


def _branch_false(x):
    return fnp.cos(x) - x


def _fori_body(i, x):
    return x * 0.9 + fnp.sin(x)


@ft.custom_jvp
def _softplus(x):
    return fnp.log1p(fnp.exp(x))


_softplus.defjvps(lambda t, ans, x: t / (1.0 + fnp.exp(-x)))


@ft.checkpoint
def _block(x):
    return fnp.sin(fnp.sin(x)) * x


def _program(x):
    carry, ys = lax.scan(_body, x[0], x)
    y = lax.cond(carry > 0.0, _branch_true, _branch_false, carry)
    z = lax.fori_loop(0, 3, _fori_body, y)
    return fnp.sum(ys) + z + fnp.sum(_softplus(x)) + fnp.sum(_block(x))


TRANSFORMS = {
    "eval": (lambda f: f, False),
    "grad": (ft.grad, False),
    "jacfwd": (ft.jacfwd, False),
    "hessian": (ft.hessian, False),
    "vmap_grad": (lambda f: ft.vmap(ft.grad(f)), True),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_second_call_traces_and_transforms_nothing(name):
    """Control-flow bodies are traced once per function and argument types, and the jaxpr
    transforms applied to them are memoised: once reverse mode's plan is settled, a
    repeated call misses no cache (also when the test runs alone)."""
    transform, batched = TRANSFORMS[name]
    x = np.array([0.3, -0.2, 0.5])
    arg = np.stack([x, 2 * x]) if batched else x
    fun = transform(_program)
    # reverse mode's "auto" planner records a tape the second time it differentiates a
    # function (which traces once more); from then on its plan, and the caches, are fixed
    first = fun(arg)
    fun(arg)
    before = _misses()
    second = fun(arg)
    after = _misses()
    assert after == before, {k: after[k] - before.get(k, 0) for k in after
                             if after[k] != before.get(k, 0)}
    np.testing.assert_array_equal(first, second)
    assert before.get("trace_function", 0) > 0


def test_cache_counts_hits():
    jaxpr_transforms.clear_caches()
    x = np.array([0.1, 0.2])
    ft.grad(_program)(x)
    hits_before = jaxpr_transforms.cache_info()["trace_function"][0]
    ft.grad(_program)(x)
    info = jaxpr_transforms.cache_info()
    assert info["trace_function"][0] > hits_before
    assert sum(hits for name, (hits, _) in info.items() if name != "trace_function") > 0


def test_new_argument_types_trace_again():
    before = _misses().get("trace_function", 0)
    lax.scan(_body, np.float32(0.5), np.ones(3, np.float32))
    lax.scan(_body, np.float32(0.5), np.ones(3, np.float32))
    middle = _misses()["trace_function"]
    lax.scan(_body, 0.5, np.ones(4))  # other dtypes: another trace
    assert middle - before <= 1
    assert _misses()["trace_function"] == middle + 1


SCALE = np.array([2.0])


def _reads_global(c, x):
    return c + SCALE * x, None


def test_reassigned_global_is_seen():
    """A cached trace is not reused when a global the body reads is another object now."""
    global SCALE
    xs = np.ones((3, 1))
    assert lax.scan(_reads_global, np.zeros(1), xs)[0][0] == 6.0
    old = SCALE
    try:
        SCALE = np.array([10.0])
        assert lax.scan(_reads_global, np.zeros(1), xs)[0][0] == 30.0
    finally:
        SCALE = old


def test_closure_cells_are_part_of_the_key():
    def make(scale):
        def body(c, x):
            return c + scale * x, None
        return body

    body = make(2.0)
    xs = np.ones(3)
    assert lax.scan(body, 0.0, xs)[0] == 6.0
    # Same function object, other cell content (nonlocal rebinding).
    body.__closure__[0].cell_contents = 5.0
    assert lax.scan(body, 0.0, xs)[0] == 15.0


def test_closures_over_tracers_are_not_kept():
    """A body closing over a traced value is traced per call and keeps no tracer alive."""
    def f(a, x):
        def body(c, xi):
            return c + a * xi, None
        return lax.scan(body, 0.0, x)[0]

    x = np.arange(3.0)
    with ft.checking_leaks():
        for a in (1.0, 2.0, 3.0):
            assert ft.grad(f)(a, x) == pytest.approx(3.0)
            assert f(a, x) == pytest.approx(3.0 * a)


def test_memo_entries_die_with_their_jaxpr():
    closed = ft.make_jaxpr(lambda x: fnp.sin(x) * x)(1.0)
    jaxpr_transforms.jvp_jaxpr(closed, [True])
    ref = weakref.ref(closed)
    del closed
    gc.collect()
    assert ref() is None


def test_partial_eval_recomputes_what_the_policy_does_not_save():
    closed = ft.make_jaxpr(lambda x, t: fnp.sin(fnp.cos(x)) * t)(1.0, 1.0)
    save_all = jaxpr_transforms.partial_eval_jaxpr(closed, [False, True])
    known, unknown, out_unknowns, num_res = save_all
    assert out_unknowns == [True]
    assert [e.primitive.name for e in unknown.jaxpr.eqns] == ["mul"]
    known2, unknown2, _, num_res2 = jaxpr_transforms.partial_eval_jaxpr(
        closed, [False, True], None, lambda prim, *avals, **params: False)
    assert [e.primitive.name for e in unknown2.jaxpr.eqns] == ["cos", "sin", "mul"]
    assert num_res2 == 1  # only x itself crosses
    for j in (known, unknown, known2, unknown2):
        core.check_jaxpr(j.jaxpr)
    for k, u, n in ((known, unknown, num_res), (known2, unknown2, num_res2)):
        res = core.eval_jaxpr(k.jaxpr, k.consts, 0.7)
        assert core.eval_jaxpr(u.jaxpr, [], *res[-n:], 2.0)[0] == pytest.approx(
            np.sin(np.cos(0.7)) * 2.0)


def test_linearize_jaxpr_tangent_part_is_linear():
    closed = ft.make_jaxpr(lambda x, y: fnp.sin(x) * y + x)(0.4, 1.5)
    primal, tangent, out_has, num_res = jaxpr_transforms.linearize_jaxpr(closed, [True, True])
    outs = core.eval_jaxpr(primal.jaxpr, primal.consts, 0.4, 1.5)
    value, res = outs[0], outs[1:]
    assert value == pytest.approx(np.sin(0.4) * 1.5 + 0.4)
    ts = core.eval_jaxpr(tangent.jaxpr, tangent.consts, *res, 1.0, 0.0)
    assert ts[0] == pytest.approx(np.cos(0.4) * 1.5 + 1.0)
    linear_prims = {"mul", "add_any", "add", "neg", "convert_element_type"}
    assert {e.primitive.name for e in tangent.jaxpr.eqns} <= linear_prims


def test_linearize_jaxpr_refuses_while_loops():
    closed = ft.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2.0, x))(
        1.0)
    with pytest.raises(TypeError, match="while_loop"):
        jaxpr_transforms.linearize_jaxpr(closed, [True])


# -- layering ------------------------------------------------------------------------------


def _imports(path: pathlib.Path) -> list[tuple[str, bool]]:
    """``(module, at_top_level)`` for every import in a source file."""
    tree = ast.parse(path.read_text())
    top = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            found += [(n, id(node) in top) for n in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, id(node) in top) for a in node.names]
    return found


@pytest.mark.parametrize("path", sorted(
    [PACKAGE / "core.py", PACKAGE / "backend.py", PACKAGE / "config.py", PACKAGE / "array_types.py",
     *(PACKAGE / "interpreters").glob("*.py")]), ids=lambda p: p.name)
def test_lower_layers_import_nothing_above_them(path):
    forbidden = ("functrans.primitives", "functrans.jaxpr_transforms", "functrans.api",
                 "functrans.numpy", "functrans.lax", "functrans.gradcheck", "functrans.testing")
    bad = [m for m, _ in _imports(path) if m.startswith(forbidden)]
    assert not bad, f"{path.name} imports {bad}"


def test_no_function_local_imports_of_functrans():
    """Imports of functrans modules sit at the top of each module: none exists only to
    dodge an import cycle."""
    local = [(p.relative_to(PACKAGE).as_posix(), m) for p in sorted(PACKAGE.rglob("*.py"))
             for m, top in _imports(p) if not top and m.startswith("functrans")]
    assert not local, local


def test_inline_lambdas_find_their_trace_again():
    """A lambda written inside the function is a new object on every call; it is cached
    under its code, so calling the function again traces nothing."""
    def f(x):
        c, ys = lax.scan(lambda c, v: (c * 0.9 + fnp.sin(v), c * v), 0.0, x)
        return c + fnp.sum(ys)

    x = np.array([0.1, 0.2, 0.3])
    g = ft.grad(f)
    g(x)
    before = _misses()
    np.testing.assert_allclose(g(x), g(x))
    assert _misses() == before


def test_inline_lambdas_closing_over_other_values_trace_again():
    def f(x, scale):
        return lax.scan(lambda c, v: (c + scale * v, None), 0.0, x)[0]

    x = np.ones(3)
    assert f(x, 2.0) == 6.0
    assert f(x, 5.0) == 15.0  # another object in the closure cell: not the cached trace


def test_tags_in_a_cached_body_are_seen_by_intermediate_grads():
    def body(c, _):
        return 1.5 * ft.tag(fnp.sin(c), "s"), None

    def f(x):
        return fnp.sum(lax.scan(body, x, None, length=2)[0])

    x = np.array([0.3, 0.7])
    f(x)  # cached without a tag context
    _, inter = ft.intermediate_grads(f)(x)
    assert np.all(inter["s"] != 0)
