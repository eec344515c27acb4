"""Reverse mode's one front door (``functrans.reverse_mode``): every plan gives the gradient
linearizing gives, on every differentiable case of the registry sweep; ``grad`` called
again and again gives the same answer whichever plan each call takes; the forced plans
run as they say; and the layering that keeps the reverse-mode core free of the code
generator."""
from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import reverse_mode
from functrans.core import abstract_eval_rules
from functrans.interpreters import tape
from functrans.tree_util import tree_leaves
from sweep import case_rng
from test_jit import SWEEP_DIFF, _split

PACKAGE = pathlib.Path(ft.__file__).parent


@pytest.fixture(autouse=True)
def fresh_caches():
    reverse_mode.clear_caches()
    yield
    reverse_mode.clear_caches()


def scalar_loss(case, rng):
    """A real scalar function of the case's differentiable arguments (their float ones):
    a random weighting of its inexact outputs; the arguments; whether it has any."""
    f, primals = _split(case, case.draw(rng))
    floats = [i for i, p in enumerate(primals) if np.asarray(p).dtype.kind in "fc"]
    outs = [o for o in tree_leaves(f(*primals)) if np.asarray(o).dtype.kind in "fc"]
    weights = [rng.normal(size=np.shape(o)) for o in outs]

    def loss(*xs):
        full = list(primals)
        for i, x in zip(floats, xs):
            full[i] = x
        outs = [o for o in tree_leaves(f(*full)) if fnp.asarray(o).dtype.kind in "fc"]
        return sum(fnp.sum(fnp.real(o) * w) for o, w in zip(outs, weights))

    return loss, [primals[i] for i in floats], bool(outs)


def _assert_equal(got, want, what, exact: bool):
    got, want = tree_leaves(got), tree_leaves(want)
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert type(g) is type(w), f"{what}: {type(g)} != {type(w)}"
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, what
        if exact:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=what)
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-13,
                                       err_msg=what, equal_nan=True)


def _recordable(loss, primals) -> bool:
    try:
        tape.record_flat(lambda *xs: [loss(*xs)], primals)
    except tape.NotRecordable:
        return False
    return True


@pytest.mark.parametrize("plan", ["compiled", "tape", "batched tape"])
@pytest.mark.parametrize("case", SWEEP_DIFF, ids=[c.id for c in SWEEP_DIFF])
def test_every_plan_gives_linearizes_gradient(case, plan):
    loss, primals, has_outputs = scalar_loss(case, case_rng(case.id, "plans"))
    if not (primals and has_outputs):
        pytest.skip("no inexact argument or output")
    argnums = tuple(range(len(primals)))
    g = ft.grad(loss, argnums)
    args = primals
    if plan == "batched tape":
        g, args = ft.vmap(g), [np.stack([p, p]) for p in primals]
    with ft.config.reverse_mode_set("linearize"):
        want = g(*args)
        assert reverse_mode.last_plan() == "linearize"
    with ft.config.reverse_mode_set(plan.split()[-1]):
        got = g(*args)
        ran = reverse_mode.last_plan()
        _assert_equal(got, want, case.id, exact=False)
        _assert_equal(g(*args), got, case.id, exact=True)  # compiled code, run again
    if plan == "compiled":
        assert ran in ("compiled", "linearize"), ran  # interpreted: a parameter unhashable
    elif _recordable(loss, primals):
        assert ran == plan, (case.id, ran)
        _, recorded = tape.record_flat(lambda *xs: [loss(*xs)], primals)
        for eqn in recorded.jaxpr.eqns:  # the types taken from results are abstract eval's
            want_avals = abstract_eval_rules[eqn.primitive](
                *[v.aval for v in eqn.invars], **eqn.params)
            got_avals = [v.aval for v in eqn.outvars]
            assert got_avals == (list(want_avals) if eqn.primitive.multiple_results
                                 else [want_avals]), (case.id, eqn.primitive)
    else:  # a user's rule (a custom_jvp of the sweep's): the tape refuses it
        assert ran in ("compiled", "linearize"), ran


def _chain(x, scale=0.9):
    for _ in range(5):
        x = fnp.tanh(fnp.sin(x)) * scale + 0.1
    return fnp.sum(x)


def test_calls_one_to_ten_give_identical_gradients():
    """Calls 1, 2, 3 and 10 of grad on one function take different plans (a linearization,
    a tape linearized, the tape's compiled gradient); the arithmetic is the same, so the
    bits are."""
    x = np.linspace(-1, 1, 7)
    g = ft.grad(_chain)
    plans, results = [], []
    for _ in range(10):
        results.append(g(x))
        plans.append(reverse_mode.last_plan())
    assert plans[:3] == ["linearize", "tape, linearized", "tape"] and set(plans[3:]) == {"tape"}
    for r in results[1:]:
        _assert_equal(r, results[0], "grad on call k", exact=True)
    with ft.config.reverse_mode_set("linearize"):
        _assert_equal(g(x), results[0], "linearize", exact=True)


def test_changing_structures_give_the_gradients_of_each():
    """A function whose structure changes from call to call (a Python loop count, a shape)
    gets each structure's own gradient, whichever plan each call takes."""
    def f(x, n):
        for _ in range(n):
            x = fnp.sin(x) * 1.1
        return fnp.sum(x ** 2)

    g = ft.grad(f)
    calls = [(np.linspace(0, 1, 4 + k % 3), 1 + k % 4) for k in range(12)]
    with ft.config.reverse_mode_set("linearize"):
        want = [g(x, n) for x, n in calls]
    for _ in range(2):
        for (x, n), w in zip(calls, want):
            np.testing.assert_allclose(g(x, n), w, rtol=1e-12, atol=1e-15)


def test_forced_plans_and_what_auto_chooses():
    x = np.linspace(-1, 1, 5)
    f = ft.grad(_chain)
    for mode, first in [("linearize", "linearize"), ("compiled", "compiled"), ("tape", "tape")]:
        reverse_mode.clear_caches()
        with ft.config.reverse_mode_set(mode):
            f(x)
            assert reverse_mode.last_plan() == first, mode
    # vjp's pullback outlives the call: compiled, never a tape that keeps the arguments
    with ft.config.reverse_mode_set("tape"):
        ft.vjp(_chain, x)[1](1.0)
        assert reverse_mode.last_plan() in ("compiled", "linearize")
    with ft.config.reverse_mode_set("tape"):  # inside another transform: no tape
        ft.jvp(f, (x,), (x,))
    with pytest.raises(ValueError, match="reverse_mode"):
        with ft.config.reverse_mode_set("fast"):
            pass
    ft.config.reverse_mode = "fast"
    try:
        with pytest.raises(ValueError, match="reverse_mode must be one of"):
            ft.grad(_chain)(x)
    finally:
        ft.config.reverse_mode = "auto"


def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def test_no_interpreter_but_codegen_imports_the_code_generator():
    users = [p.name for p in sorted((PACKAGE / "interpreters").glob("*.py"))
             if "functrans.interpreters.codegen" in _imports(p) and p.name != "codegen.py"]
    assert users == []


def test_the_import_graph_has_no_cycles():
    """Modules of the package import each other at the top only, along arrows that never
    come back (a depth-first search finds no back edge)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)
        graph[name] = targets
    # a package's __init__ importing its own submodules is not a cycle of interest
    state: dict = {}
    cycles = []

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == "open":
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert not cycles, cycles


def test_gradcheck_checks_the_plan_a_warm_grad_runs(monkeypatch):
    """A wrong lowering (cos written as sin) breaks only the compiled code: linearizing
    still gives the right gradient.  gradcheck's default checks what a warm grad runs, so
    it catches it, and its notes name the plan."""
    def loss(x):
        return fnp.sum(fnp.sin(x) * x)

    x = np.linspace(-1.0, 1.0, 5)
    ok = ft.gradcheck(loss)(x)
    assert "reverse mode checked through the 'tape' plan (asked: 'warm')" in ok.notes
    vector = ft.gradcheck(lambda x: fnp.sin(x) * x)(x)
    assert any("'compiled' plan" in n for n in vector.notes)

    from functrans.primitives.elementwise import cos_p
    monkeypatch.setattr(cos_p.lowering, "rule", lambda ctx, x: f"{ctx.xp}.sin({x})")
    monkeypatch.setattr(cos_p.lowering, "ufunc", "sin")
    monkeypatch.setattr(cos_p.lowering, "kernel", None)  # not fused: the rule above runs
    reverse_mode.clear_caches()
    assert ft.gradcheck(loss, modes="rev", reverse_plan="linearize")(x)
    with pytest.raises(ft.GradcheckError, match="'tape' plan"):
        ft.gradcheck(loss, modes="rev")(x)
    # compiled transposition computes the linear part only: break a linear primitive
    from functrans.interpreters.ad import add_any_p
    monkeypatch.setattr(add_any_p.lowering, "rule", lambda ctx, x, y: f"({x} - {y})")
    monkeypatch.setattr(add_any_p.lowering, "augmented", "-=")
    monkeypatch.setattr(add_any_p.lowering, "ufunc", "subtract")
    monkeypatch.setattr(add_any_p.lowering, "kernel", None)
    reverse_mode.clear_caches()
    assert ft.gradcheck(lambda x: fnp.sin(x) * x, modes="rev", reverse_plan="linearize")(x)
    with pytest.raises(ft.GradcheckError, match="'compiled' plan"):
        ft.gradcheck(lambda x: fnp.sin(x) * x, modes="rev")(x)
    with pytest.raises(ValueError, match="reverse_plan"):
        ft.gradcheck(loss, reverse_plan="fast")
