"""``functrans.debug`` inside control flow, custom rules and checkpoint, under every
transform: the callbacks run when the values exist (at run time under ``jit``), once per
loop iteration, in JAX's order, and no pass drops or merges them (``Primitive.effectful``).
The expected lines are what JAX prints for the same programs (float64)."""
from __future__ import annotations

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import core, lax
from functrans.interpreters import codegen, partial_eval
from functrans.primitives.callbacks import debug_callback_p


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


def _scan(x):
    def body(c, y):
        ft.debug.print("c={} y={}", c, y)
        return c * y + 1.0, c
    return lax.scan(body, 1.0, x)[0]


def _fori(x):
    def body(i, c):
        ft.debug.print("i={} c={}", i, c)
        return c * x
    return lax.fori_loop(0, 3, body, x)


def _cond(x):
    return lax.cond(x > 0, lambda x: (ft.debug.print("pos {}", x), x * x)[1],
                    lambda x: (ft.debug.print("neg {}", x), -x)[1], x)


def _while(x):
    def body(c):
        ft.debug.print("c={}", c)
        return c + 1
    return lax.while_loop(lambda c: c < 3, body, x)


A = np.arange(1.0, 4.0)
SCAN = ["c=1.0 y=1.0", "c=2.0 y=2.0", "c=5.0 y=3.0"]
FORI = ["i=0 c=2.0", "i=1 c=4.0", "i=2 c=8.0"]


@pytest.mark.parametrize("name,run", [
    ("eager", lambda: _scan(A)), ("jit", lambda: ft.jit(_scan)(A)),
    ("grad", lambda: ft.grad(_scan)(A)), ("jit(grad)", lambda: ft.jit(ft.grad(_scan))(A)),
    ("grad(jit)", lambda: ft.grad(ft.jit(_scan))(A)),
    ("jvp", lambda: ft.jvp(_scan, (A,), (A,))), ("hessian", lambda: ft.hessian(_scan)(A)),
    ("jacfwd", lambda: ft.jacfwd(_scan)(A)), ("jacrev", lambda: ft.jacrev(_scan)(A)),
    ("linearize", lambda: ft.linearize(_scan, A)[0]),
    ("vjp", lambda: ft.vjp(_scan, A)[1](1.0)),
])
def test_scan_body_prints_once_per_iteration(capsys, name, run):
    for _ in range(3):  # repeated gradients: the planner's cached paths run effects once too
        run()
        assert _lines(capsys) == SCAN, name


def test_scan_under_vmap_prints_each_member_per_iteration(capsys):
    xs = np.stack([A, A + 1.0])
    want = ["c=1.0 y=1.0", "c=1.0 y=2.0", "c=2.0 y=2.0", "c=3.0 y=3.0", "c=5.0 y=3.0",
            "c=10.0 y=4.0"]
    ft.vmap(_scan)(xs)
    assert _lines(capsys) == want
    ft.jit(ft.vmap(_scan))(xs)
    assert _lines(capsys) == want


@pytest.mark.parametrize("name,run", [
    ("eager", lambda: _fori(2.0)), ("jit", lambda: ft.jit(_fori)(2.0)),
    ("grad", lambda: ft.grad(_fori)(2.0)), ("jit(grad)", lambda: ft.jit(ft.grad(_fori))(2.0)),
])
def test_fori_loop_body_prints_once_per_iteration(capsys, name, run):
    for _ in range(2):
        run()
        assert _lines(capsys) == FORI, name


def test_jitted_while_loop_prints_at_run_time_on_every_iteration(capsys):
    f = ft.jit(_while)
    f.lower(0)
    assert _lines(capsys) == []  # tracing and compiling print nothing
    f(0)
    assert _lines(capsys) == ["c=0", "c=1", "c=2"]
    f(1)
    assert _lines(capsys) == ["c=1", "c=2"]
    # batched: the body runs for every member until all are done (JAX's order)
    ft.jit(ft.vmap(_while))(np.arange(2))
    assert _lines(capsys) == ["c=0", "c=1", "c=1", "c=2", "c=2", "c=3"]


def test_cond_prints_the_branch_taken(capsys):
    _cond(2.0)
    ft.jit(_cond)(-2.0)
    ft.grad(_cond)(-2.0)
    ft.jit(ft.grad(_cond))(2.0)
    assert _lines(capsys) == ["pos 2.0", "neg -2.0", "neg -2.0", "pos 2.0"]
    ft.vmap(_cond)(np.array([1.0, -1.0]))  # both branches run on every member, as in JAX
    assert _lines(capsys) == ["neg 1.0", "neg -1.0", "pos 1.0", "pos -1.0"]
    branches = [lambda x: (ft.debug.print("b0 {}", x), x)[1],
                lambda x: (ft.debug.print("b1 {}", x), x * 2.0)[1]]
    ft.jit(ft.grad(lambda x: lax.switch(1, branches, x)))(3.0)
    assert _lines(capsys) == ["b1 3.0"]


def test_unused_results_and_identical_calls_are_kept(capsys):
    # the callback's value is never used: dead-code elimination keeps it anyway
    ft.jit(lambda x: (ft.debug.print("dead {}", x * 2.0), x)[1])(1.0)
    # two identical calls in a loop body: common-subexpression elimination keeps both
    ft.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: (ft.debug.print("p {}", c),
                                                       ft.debug.print("p {}", c), c)[2], x))(1.0)
    assert _lines(capsys) == ["dead 2.0"] + ["p 1.0"] * 4


def test_checkpoint_runs_effects_again_when_recomputing(capsys):
    # as JAX: the forward pass, then the recomputation in the backward pass
    f = ft.checkpoint(lambda x: (ft.debug.print("ck {}", x), fnp.sum(fnp.sin(x)))[1])
    ft.grad(f)(A)
    ft.jit(ft.grad(f))(A)
    assert _lines(capsys) == ["ck [1. 2. 3.]"] * 4
    step = ft.checkpoint(lambda c, y: (ft.debug.print("r {}", c), (c * y, c))[1])
    ft.grad(lambda x: lax.scan(step, 1.0, x)[0])(A)
    assert _lines(capsys) == ["r 1.0", "r 1.0", "r 2.0", "r 2.0", "r 1.0", "r 1.0"]


def test_custom_rules_print(capsys):
    @ft.custom_jvp
    def f(x):
        ft.debug.print("f {}", x)
        return fnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), fnp.cos(p[0]) * t[0]))

    @ft.custom_vjp
    def g(x):
        ft.debug.print("g {}", x)
        return fnp.sin(x)

    def g_fwd(x):
        ft.debug.print("fwd {}", x)
        return fnp.sin(x), x

    def g_bwd(r, ct):
        ft.debug.print("bwd {}", ct)
        return (fnp.cos(r) * ct,)
    g.defvjp(g_fwd, g_bwd)
    ft.grad(f)(1.0)
    ft.jit(ft.grad(f))(1.0)
    g(1.0)
    ft.grad(g)(1.0)
    ft.jit(ft.grad(g))(1.0)
    assert _lines(capsys) == ["f 1.0", "f 1.0", "g 1.0", "fwd 1.0", "bwd 1.0", "fwd 1.0",
                              "bwd 1.0"]


def test_effects_are_visible_to_the_passes():
    assert debug_callback_p.effectful
    jaxpr = ft.make_jaxpr(lambda x: lax.scan(lambda c, y: (ft.debug.print("{}", y), (c, y))[1],
                                             x, np.ones(2)))(1.0).jaxpr
    scan_eqn, = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    assert core.eqn_has_effects(scan_eqn) and core.has_effects(jaxpr)
    # the scan's results are unused: every dead-code elimination keeps it
    assert partial_eval.dead_code_elimination(jaxpr.eqns, []) == [scan_eqn]
    _, eqns, _ = codegen.optimize_jaxpr(core.Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.eqns, []))
    assert [e.primitive.name for e in eqns] == ["scan"]
    assert not core.has_effects(ft.make_jaxpr(fnp.sin)(1.0).jaxpr)


# -- debug.breakpoint ------------------------------------------------------------------------


class _Commands:
    """A debugger's input that gives the same commands at every breakpoint: ``commands``
    then ``c``."""

    def __init__(self, *commands: str):
        self.commands, self.queue = list(commands) + ["c"], []

    def readline(self) -> str:
        if not self.queue:
            self.queue = list(self.commands)
        return self.queue.pop(0) + "\n"






@pytest.mark.parametrize("transform", ["eager", "jit", "grad", "vmap"])
def test_breakpoint_shows_the_values_where_the_program_has_tracers(transform):
    x = np.array([0.5, 1.0])
    wrap = {"eager": lambda f: f, "jit": ft.jit,
            "grad": lambda f: ft.grad(lambda x: fnp.sum(f(x))),
            "vmap": ft.vmap}[transform]
    import io
    out = io.StringIO()

    def f(x):
        y = fnp.sin(x)
        ft.debug.breakpoint(stdin=_Commands("p x", "p y"), stdout=out)
        return y

    wrap(f)(x)
    if transform == "jit":
        wrap(f)(x + 1.0)                     # compiled code stops again, with new values
    text = out.getvalue()
    members = [x[:1] * 0 + v for v in x] if transform == "vmap" else [x]
    if transform == "jit":
        members.append(x + 1.0)
    shown = [line for line in text.splitlines() if not line.startswith("(fdb)")
             and not line.startswith("Entering")]
    want = []
    for m in members:
        m = m[0] if transform == "vmap" else m
        want += [repr(np.asarray(m)), repr(np.asarray(np.sin(m)))]
    assert shown == want, text
    assert text.count("Entering the debugger") == len(members)


def test_breakpoint_moves_between_frames_and_lists_them():
    import io
    out = io.StringIO()

    def inner(z):
        w = z * 3.0
        ft.debug.breakpoint(stdin=_Commands("p w", "d", "u", "p v", "w", "d", "p nope"), stdout=out)
        return w

    def outer(v):
        return inner(v + 1.0)

    ft.jit(outer)(np.float64(1.0))
    text = out.getvalue()
    assert "array(6.)" in text and "array(1.)" in text        # w in inner, v in outer
    assert "inner()" in text and "outer()" in text
    assert "*** at the innermost frame" in text
    assert "NameError: name 'nope' is not defined" in text


def test_breakpoint_frames_are_the_users_unless_asked():
    import io
    seen = {}

    def probe(**kwargs):
        out = io.StringIO()
        ft.jit(lambda x: ft.debug.breakpoint(stdin=_Commands("w"), stdout=out, **kwargs)
               or x)(np.ones(2))
        return [line for line in out.getvalue().splitlines() if "(" in line and ")" in line
                and not line.startswith(("(fdb)", "Entering"))]

    seen["user"], seen["all"], seen["one"] = probe(), probe(filter_frames=False), probe(
        num_frames=1)
    assert not any("functrans" + __import__("os").sep in line for line in seen["user"])
    assert any("functrans" + __import__("os").sep in line for line in seen["all"])
    assert len(seen["one"]) == 1 and len(seen["user"]) > 1


def test_breakpoint_quit_ends_the_program_and_bad_arguments_are_named():
    import io
    with pytest.raises(SystemExit):
        ft.jit(lambda x: ft.debug.breakpoint(stdin=_Commands("q"), stdout=io.StringIO())
               or x)(np.ones(2))
    with pytest.raises(ValueError, match="debug.breakpoint: backend"):
        ft.debug.breakpoint(backend="web")
    with pytest.raises(TypeError, match="debug.breakpoint: unexpected keyword"):
        ft.debug.breakpoint(colour="red")
    with pytest.raises(ValueError, match="num_frames"):
        ft.debug.breakpoint(num_frames=0)
