"""Control flow (cond, switch, while_loop, fori_loop, scan): values, forward and reverse
derivatives to second order, and vmap, each against an unrolled Python reference (a
Python ``if`` / ``for`` / ``while`` over functrans.numpy ops on concrete values); jaxprs
type-check (nested ones too) and evaluate to the function; errors teach."""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import functrans as ft
import functrans.lax as lax
import functrans.numpy as fnp
from functrans.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from sweep import assert_close, check_grads, check_jvp, random_like

TOL = 1e-10
BATCH = 4

# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------


def assert_trees_close(actual, expected, tol=TOL, what=""):
    assert_close(actual, expected, rtol=tol, atol=tol, what=what)


def check_jaxpr_deep(jaxpr: ft.Jaxpr) -> None:
    """Type-check a jaxpr and every jaxpr nested in its equations' parameters."""
    ft.check_jaxpr(jaxpr)
    for eqn in jaxpr.eqns:
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ft.ClosedJaxpr):
                    check_jaxpr_deep(sub.jaxpr)
                elif isinstance(sub, ft.Jaxpr):
                    check_jaxpr_deep(sub)


def primitive_names(jaxpr: ft.Jaxpr) -> set:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                if isinstance(sub, ft.ClosedJaxpr):
                    names |= primitive_names(sub.jaxpr)
    return names


def check_staged(fun, *args, expect=()):
    """make_jaxpr(fun) type-checks, holds the expected primitives, and evaluates to fun."""
    closed = ft.make_jaxpr(fun)(*args)
    check_jaxpr_deep(closed.jaxpr)
    assert set(expect) <= primitive_names(closed.jaxpr), str(closed)
    got = ft.eval_jaxpr(closed.jaxpr, closed.consts, *tree_leaves(args))
    assert_trees_close(got, tree_leaves(fun(*args)), what="eval_jaxpr(make_jaxpr(f)) vs f")
    return closed


def stack_trees(trees, axis=0):
    return tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs], axis=axis), *trees)


def sum_outputs(out, weights):
    """A scalar loss: sum of output leaves times fixed weights."""
    return sum(fnp.sum(o * w) for o, w in zip(tree_leaves(out), tree_leaves(weights)))


# Unrolled references --------------------------------------------------------------------


def scan_ref(f, init, xs, length=None, reverse=False):
    """``lax.scan`` as a Python loop."""
    leaves, tree = tree_flatten(xs)
    n = length if length is not None else np.shape(leaves[0])[0]
    carry, ys = init, []
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        carry, y = f(carry, tree_unflatten(tree, [x[i] for x in leaves]))
        ys.append(y)
    if reverse:
        ys.reverse()
    return carry, tree_map(lambda *y: fnp.stack(list(y)), *ys)


def while_ref(cond_fun, body_fun, val):
    while cond_fun(val):
        val = body_fun(val)
    return val


def fori_ref(lower, upper, body_fun, val):
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


# ------------------------------------------------------------------------------------------
# The cases: a control-flow function, its unrolled reference and argument samples
# ------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    fun: Callable  # uses lax control flow
    ref: Callable  # the same computation with Python control flow on concrete values
    samples: list  # BATCH argument lists; vmap stacks them
    diff: tuple  # positions of the differentiable arguments
    in_axes: list = field(default_factory=list)  # vmap in_axes combinations to test
    reverse: bool = True  # reverse-mode differentiable (False: forward mode only)

    @property
    def id(self):
        return self.name


def _rng(name: str, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(f"{name}/{salt}".encode()))


def _normal(rng, *shape, scale=1.0):
    return rng.standard_normal(shape) * scale


# cond with pytree operands and outputs, predicate computed inside -------------------------


def _pytree_true(x, y):
    return {"s": fnp.sin(x) * y["a"], "t": y["b"] * x}, fnp.sum(x * x)


def _pytree_false(x, y):
    return {"s": fnp.cos(y["a"]) + x, "t": fnp.exp(x) * 0.5}, y["b"] ** 2


def _cond_pytree(p, x, y):
    return lax.cond(p > 0, _pytree_true, _pytree_false, x, y)


def _cond_pytree_ref(p, x, y):
    return _pytree_true(x, y) if p > 0 else _pytree_false(x, y)


def _cond_pytree_samples():
    rng = _rng("cond_pytree")
    return [[np.float64(p), _normal(rng, 3), {"a": _normal(rng, 3), "b": _normal(rng)}]
            for p in (1.3, -0.7, 0.2, -2.0)]


# cond with closed-over constants: a NumPy array and a differentiated / batched argument -----

_C = np.array([0.5, -1.5, 2.0])


def _closure_branches(w):
    def true_fun(x):
        return x * w + _C

    def false_fun(x):
        return fnp.sin(w) * _C - x * x

    return true_fun, false_fun


def _cond_closure(p, x, w):
    return lax.cond(p, *_closure_branches(w), x)


def _cond_closure_ref(p, x, w):
    true_fun, false_fun = _closure_branches(w)
    return true_fun(x) if p else false_fun(x)


def _cond_closure_samples():
    rng = _rng("cond_closure")
    return [[np.bool_(p), _normal(rng, 3), _normal(rng)] for p in (True, False, False, True)]


# cond whose branch ignores its operand and returns only a closed-over value ---------------


def _cond_const_branch(p, x, w):
    return lax.cond(p, lambda x: fnp.tanh(x) + w, lambda x: w * 2.0 + 0 * _C, x)


def _cond_const_branch_ref(p, x, w):
    return fnp.tanh(x) + w if p else w * 2.0 + 0 * _C


# switch with 3 branches, dict operands, out-of-range indices --------------------------------


def _switch_branches(w):
    return [
        lambda d: (d["u"] * w, fnp.sum(d["v"])),
        lambda d: (fnp.sin(d["u"]) + d["v"][0], fnp.sum(d["u"] * w)),
        lambda d: (fnp.exp(d["u"] * 0.3) * d["v"][1], w * w),
    ]


def _switch3(i, d, w):
    return lax.switch(i, _switch_branches(w), d)


def _switch3_ref(i, d, w):
    return _switch_branches(w)[min(max(int(i), 0), 2)](d)


def _switch3_samples():
    rng = _rng("switch3")
    return [[np.int64(i), {"u": _normal(rng, 2), "v": _normal(rng, 2)}, _normal(rng)]
            for i in (-3, 1, 2, 7)]


# scan: an RNN-like tanh recurrence closing over its weights ---------------------------------


def _rnn_step(W, U, b):
    def step(h, x):
        h = fnp.tanh(W @ h + U @ x + b)
        return h, fnp.sum(h * h)
    return step


def _scan_rnn(h0, xs, W, U, b):
    return lax.scan(_rnn_step(W, U, b), h0, xs)


def _scan_rnn_ref(h0, xs, W, U, b):
    """Hand-unrolled."""
    h, ys = h0, []
    for t in range(np.shape(xs)[0]):
        h = fnp.tanh(W @ h + U @ xs[t] + b)
        ys.append(fnp.sum(h * h))
    return h, fnp.stack(ys)


def _scan_rnn_samples():
    rng = _rng("scan_rnn")
    return [[_normal(rng, 3), _normal(rng, 4, 2), _normal(rng, 3, 3, scale=0.5),
             _normal(rng, 3, 2, scale=0.5), _normal(rng, 3, scale=0.1)] for _ in range(BATCH)]


# scan, reverse=True, with a pytree carry and several ys ------------------------------------


def _reverse_body(c, x):
    new = {"a": c["a"] * fnp.cos(x) + c["b"], "b": c["b"] * 0.9 + fnp.sum(x * c["a"])}
    return new, (c["a"] * x, c["b"] * c["b"])


def _scan_reverse(c0, xs):
    return lax.scan(_reverse_body, c0, xs, reverse=True)


def _scan_reverse_ref(c0, xs):
    c, ys = c0, []
    for t in reversed(range(np.shape(xs)[0])):
        c, y = _reverse_body(c, xs[t])
        ys.insert(0, y)
    return c, (fnp.stack([y[0] for y in ys]), fnp.stack([y[1] for y in ys]))


def _scan_reverse_samples():
    rng = _rng("scan_reverse")
    return [[{"a": _normal(rng, 2), "b": _normal(rng)}, _normal(rng, 5, 2, scale=0.5)]
            for _ in range(BATCH)]


# scan with xs=None and a length; a closed-over scalar ------------------------------------


def _no_xs_body(w):
    return lambda c, _: (c * w + fnp.sin(c), c * c)


def _scan_no_xs(x, w):
    return lax.scan(_no_xs_body(w), x, None, length=4)


def _scan_no_xs_ref(x, w):
    c, ys = x, []
    for _ in range(4):
        c, y = _no_xs_body(w)(c, None)
        ys.append(y)
    return c, fnp.stack(ys)


def _scan_no_xs_samples():
    rng = _rng("scan_no_xs")
    return [[_normal(rng, 2, scale=0.5), _normal(rng, scale=0.5)] for _ in range(BATCH)]


# scan with tuple carries, dict xs and dict ys -----------------------------------------------


def _pytree_body(w):
    def body(carry, x):
        h, s = carry
        h = fnp.sin(h * x["u"]) + w * x["v"]
        s = s + fnp.sum(h) * x["v"]
        return (h, s), {"hv": h * x["v"], "s": s, "first": h[0]}
    return body


def _scan_pytree(h, s, xs, w):
    return lax.scan(_pytree_body(w), (h, s), xs)


def _scan_pytree_ref(h, s, xs, w):
    return scan_ref(_pytree_body(w), (h, s), xs)


def _scan_pytree_samples():
    rng = _rng("scan_pytree")
    return [[_normal(rng, 3), _normal(rng), {"u": _normal(rng, 4, 3), "v": _normal(rng, 4)},
             _normal(rng, 3)] for _ in range(BATCH)]


# cond inside a scan body: the branch taken changes per iteration ----------------------------


def _piecewise_step(c, x):
    c = lax.cond(x > 0, lambda c: fnp.sin(c) * x, lambda c: c * 0.5 + x, c)
    return c, fnp.sum(c)


def _scan_cond(c0, xs):
    return lax.scan(_piecewise_step, c0, xs)


def _scan_cond_ref(c0, xs):
    c, ys = c0, []
    for t in range(np.shape(xs)[0]):
        x = xs[t]
        c = fnp.sin(c) * x if x > 0 else c * 0.5 + x
        ys.append(fnp.sum(c))
    return c, fnp.stack(ys)


def _scan_cond_samples():
    rng = _rng("scan_cond")
    return [[_normal(rng, 2), np.sign(_normal(rng, 5)) * (np.abs(_normal(rng, 5)) + 0.2)]
            for _ in range(BATCH)]


# fori_loop with concrete bounds (lowers to scan), tuple carry, closed-over weight ------------


def _fori_body(w):
    def body(i, c):
        x, y = c
        return x * fnp.cos(w) + 0.1 * i * y, fnp.tanh(y + w * i)
    return body


def _fori_concrete(x, y, w):
    return lax.fori_loop(1, 5, _fori_body(w), (x, y))


def _fori_concrete_ref(x, y, w):
    return fori_ref(1, 5, _fori_body(w), (x, y))


def _fori_concrete_samples():
    rng = _rng("fori_concrete")
    return [[_normal(rng, 2), _normal(rng, 2), _normal(rng)] for _ in range(BATCH)]


# nested: a fori_loop inside a scan body ----------------------------------------------------


def _nested_step(c, x):
    c = lax.fori_loop(0, 2, lambda i, c: fnp.sin(c) * x + i, c)
    return c, c * x


def _scan_nested(c0, xs):
    return lax.scan(_nested_step, c0, xs)


def _scan_nested_ref(c0, xs):
    c, ys = c0, []
    for t in range(np.shape(xs)[0]):
        for i in range(2):
            c = fnp.sin(c) * xs[t] + i
        ys.append(c * xs[t])
    return c, fnp.stack(ys)


def _scan_nested_samples():
    rng = _rng("scan_nested")
    return [[_normal(rng, 2), _normal(rng, 3)] for _ in range(BATCH)]


# while_loop with an integer counter against a closed-over bound: batched bounds make the
# batch members stop at different iterations ---------------------------------------------


def _count_body(w):
    def body(c):
        i, d = c
        return i + 1, {"x": fnp.sin(d["x"]) * w + d["y"], "y": d["y"] * 0.9}
    return body


def _while_count(n, x, y, w):
    return lax.while_loop(lambda c: c[0] < n, _count_body(w), (0, {"x": x, "y": y}))[1]


def _while_count_ref(n, x, y, w):
    return while_ref(lambda c: c[0] < n, _count_body(w), (0, {"x": x, "y": y}))[1]


def _while_count_samples():
    rng = _rng("while_count")
    return [[np.int64(n), _normal(rng, 2), _normal(rng), _normal(rng)] for n in (3, 0, 5, 1)]


# while_loop whose predicate depends on a differentiated float carry -----------------------


def _grow_cond(c):
    return c[0] < 4.0


def _grow_body(c):
    x, s = c
    return x * 1.5 + 0.3, s * fnp.cos(x) + x


def _while_value(x, s):
    return lax.while_loop(_grow_cond, _grow_body, (x, s))


def _while_value_ref(x, s):
    return while_ref(_grow_cond, _grow_body, (x, s))


def _while_value_samples():
    rng = _rng("while_value")
    return [[np.float64(x), _normal(rng, 2)] for x in (0.1, 1.0, 2.5, 5.0)]


CASES = [
    Case("cond_pytree", _cond_pytree, _cond_pytree_ref, _cond_pytree_samples(), (1, 2),
         [(0, 0, 0), (0, None, None), (None, 0, 0), (None, None, 0)]),
    Case("cond_closure", _cond_closure, _cond_closure_ref, _cond_closure_samples(), (1, 2),
         [(0, 0, 0), (0, None, None), (None, None, 0), (None, 0, None)]),
    Case("cond_const_branch", _cond_const_branch, _cond_const_branch_ref,
         _cond_closure_samples(), (1, 2), [(0, 0, 0), (0, None, 0), (None, None, 0)]),
    Case("switch3", _switch3, _switch3_ref, _switch3_samples(), (1, 2),
         [(0, 0, 0), (0, None, None), (None, 0, 0), (None, None, 0)]),
    Case("scan_rnn", _scan_rnn, _scan_rnn_ref, _scan_rnn_samples(), (0, 1, 2, 3, 4),
         [(None, 0, None, None, None), (0, None, None, None, None),
          (None, None, 0, None, None), (0, 1, 0, 0, 0)]),
    Case("scan_reverse", _scan_reverse, _scan_reverse_ref, _scan_reverse_samples(), (0, 1),
         [(0, 0), (None, 0), (0, None), (None, 1)]),
    Case("scan_no_xs", _scan_no_xs, _scan_no_xs_ref, _scan_no_xs_samples(), (0, 1),
         [(0, 0), (0, None), (None, 0)]),
    Case("scan_pytree", _scan_pytree, _scan_pytree_ref, _scan_pytree_samples(), (0, 1, 2, 3),
         [(0, 0, 0, 0), (None, None, 0, None), (None, None, None, 0), (0, None, 1, None)]),
    Case("scan_cond", _scan_cond, _scan_cond_ref, _scan_cond_samples(), (0,),
         [(0, 0), (None, 0), (0, None)]),
    Case("scan_nested", _scan_nested, _scan_nested_ref, _scan_nested_samples(), (0, 1),
         [(0, 0), (None, 0)]),
    Case("fori_concrete", _fori_concrete, _fori_concrete_ref, _fori_concrete_samples(),
         (0, 1, 2), [(0, 0, 0), (None, None, 0), (0, None, None)]),
    Case("while_count", _while_count, _while_count_ref, _while_count_samples(), (1, 2, 3),
         [(0, 0, 0, 0), (0, None, None, None), (None, 0, 0, None), (None, None, None, 0)],
         reverse=False),
    Case("while_value", _while_value, _while_value_ref, _while_value_samples(), (0, 1),
         [(0, 0), (0, None), (None, 0)], reverse=False),
]
REVERSE_CASES = [c for c in CASES if c.reverse]


def _diff_fun(fun, case: Case, args):
    """``fun`` as a function of the case's differentiable arguments only."""
    def f(*dyn):
        full = list(args)
        for i, x in zip(case.diff, dyn):
            full[i] = x
        return fun(*full)
    return f, [args[i] for i in case.diff]


def _members(case: Case, in_axes):
    """Batched arguments stacked from the samples, and each member's own arguments."""
    batched, per_member = [], [[] for _ in range(BATCH)]
    for i, axis in enumerate(in_axes):
        if axis is None:
            batched.append(case.samples[0][i])
            for member in per_member:
                member.append(case.samples[0][i])
        else:
            batched.append(stack_trees([s[i] for s in case.samples], axis))
            for member, s in zip(per_member, case.samples):
                member.append(s[i])
    return batched, per_member


# ------------------------------------------------------------------------------------------
# The sweep
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_value_matches_reference(case):
    for args in case.samples:
        assert_trees_close(case.fun(*args), case.ref(*args), what=case.name)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jvp_matches_reference(case):
    rng = _rng(case.name, 1)
    for args in case.samples:
        f, primals = _diff_fun(case.fun, case, args)
        f_ref, _ = _diff_fun(case.ref, case, args)
        tangents = random_like(rng, primals)
        out, out_t = ft.jvp(f, primals, tangents)
        want, want_t = ft.jvp(f_ref, primals, tangents)
        assert_trees_close(out, want, what="primal out")
        assert_trees_close(out_t, want_t, what="tangent out")


@pytest.mark.parametrize("case", REVERSE_CASES, ids=lambda c: c.id)
def test_vjp_and_grad_match_reference(case):
    rng = _rng(case.name, 2)
    for args in case.samples:
        f, primals = _diff_fun(case.fun, case, args)
        f_ref, _ = _diff_fun(case.ref, case, args)
        out, pullback = ft.vjp(f, *primals)
        want, pullback_ref = ft.vjp(f_ref, *primals)
        assert_trees_close(out, want, what="primal out")
        cts = random_like(rng, out)
        assert_trees_close(pullback(cts), pullback_ref(cts), what="vjp")
        nums = tuple(range(len(primals)))
        got = ft.grad(lambda *p: sum_outputs(f(*p), cts), argnums=nums)(*primals)
        assert_trees_close(got, pullback_ref(cts), what="grad")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_second_order_matches_reference(case):
    """jvp-of-jvp, and (reverse cases) jvp-of-vjp: Hessian-vector products."""
    rng = _rng(case.name, 3)
    args = case.samples[0]
    f, primals = _diff_fun(case.fun, case, args)
    f_ref, _ = _diff_fun(case.ref, case, args)
    t1, t2 = random_like(rng, primals), random_like(rng, primals)

    def fwd_fwd(fun):
        return ft.jvp(lambda *p: ft.jvp(fun, p, t1)[1], primals, t2)

    assert_trees_close(fwd_fwd(f), fwd_fwd(f_ref), what="jvp of jvp")
    if case.reverse:
        cts = random_like(rng, f(*primals))

        def fwd_rev(fun):
            return ft.jvp(lambda *p: ft.vjp(fun, *p)[1](cts), primals, t2)

        assert_trees_close(fwd_rev(f), fwd_rev(f_ref), what="jvp of vjp")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_derivatives_numerically(case):
    rng = _rng(case.name, 4)
    for args in case.samples[:2]:
        f, primals = _diff_fun(case.fun, case, args)
        if case.reverse:
            check_grads(f, primals, 2, rng)
        else:  # forward over forward
            check_jvp(f, primals, rng)
            tangents = random_like(rng, primals)
            check_jvp(lambda *p: ft.jvp(f, p, tangents)[1], primals, rng, 1e-6, 1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vmap_matches_loop(case):
    for in_axes in case.in_axes:
        batched, members = _members(case, in_axes)
        got = ft.vmap(case.fun, in_axes=in_axes)(*batched)
        want = stack_trees([case.ref(*m) for m in members])
        assert_trees_close(got, want, what=f"in_axes={in_axes}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_vmap_of_derivative_matches_loop(case):
    """Per-example gradients (reverse cases) or per-example JVPs (forward-only cases)."""
    rng = _rng(case.name, 5)
    in_axes = case.in_axes[0]
    batched, members = _members(case, in_axes)
    probe = _diff_fun(case.fun, case, case.samples[0])
    weights = random_like(rng, probe[0](*probe[1]))
    tangents = random_like(rng, probe[1])

    def derivative(fun):
        def d(*args):
            f, primals = _diff_fun(fun, case, args)
            if case.reverse:
                return ft.grad(lambda *p: sum_outputs(f(*p), weights),
                               argnums=tuple(range(len(primals))))(*primals)
            return ft.jvp(f, primals, tangents)
        return d

    got = ft.vmap(derivative(case.fun), in_axes=in_axes)(*batched)
    want = stack_trees([derivative(case.ref)(*m) for m in members])
    assert_trees_close(got, want)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_jaxprs_typecheck_and_evaluate(case):
    """The jaxprs of f, of its JVP and (reverse cases) of its VJP type-check and evaluate to
    the eager results."""
    rng = _rng(case.name, 6)
    args = case.samples[0]
    check_staged(case.fun, *args)
    f, primals = _diff_fun(case.fun, case, args)
    tangents = random_like(rng, primals)
    check_staged(lambda *p: ft.jvp(f, p, tangents), *primals)
    if case.reverse:
        cts = random_like(rng, f(*primals))
        check_staged(lambda *p: ft.vjp(f, *p)[1](cts), *primals)
        check_staged(ft.vmap(case.fun, in_axes=case.in_axes[0]),
                     *_members(case, case.in_axes[0])[0])


# ------------------------------------------------------------------------------------------
# cond / switch specifics
# ------------------------------------------------------------------------------------------


def test_cond_picks_the_branch_and_stages_both():
    f = lambda p, x: lax.cond(p, lambda x: x + 1.0, lambda x: x * 10.0, x)  # noqa: E731
    assert f(True, 2.0) == 3.0 and f(False, 2.0) == 20.0
    assert f(np.float64(0.5), 2.0) == 3.0 and f(0, 2.0) == 20.0  # nonzero numbers are true
    closed = check_staged(f, np.bool_(True), np.float64(2.0), expect={"cond"})
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "cond"]
    assert len(eqn.params["branches"]) == 2


@pytest.mark.parametrize("index, expected", [(-5, 0), (-1, 0), (0, 0), (1, 1), (2, 2),
                                             (3, 2), (100, 2)])
def test_switch_clamps_out_of_range_indices(index, expected):
    branches = [lambda x: x + 0.0, lambda x: x * 10.0, lambda x: -x]
    want = branches[expected](3.0)
    assert lax.switch(index, branches, 3.0) == want
    assert ft.grad(lambda x: lax.switch(index, branches, x))(3.0) == [1.0, 10.0, -1.0][expected]
    # A traced index is clamped at run time, in the staged and the batched version alike.
    closed = ft.make_jaxpr(lambda i, x: lax.switch(i, branches, x))(np.int64(0), 3.0)
    assert ft.eval_jaxpr(closed.jaxpr, closed.consts, np.int64(index), 3.0)[0] == want
    batched = ft.vmap(lambda i, x: lax.switch(i, branches, x))(
        np.array([index, 1, index]), np.array([3.0, 3.0, 4.0]))
    np.testing.assert_array_equal(batched, [want, 30.0, branches[expected](4.0)])


def test_grad_through_cond_of_closed_over_outer_tracer():
    x = np.array([1.0, -2.0, 3.0])

    def f(w, p):
        return fnp.sum(lax.cond(p, lambda x: x * w, lambda x: x + w * w, x))

    for p in (True, False):
        got = ft.grad(f)(1.5, p)
        want = ft.grad(lambda w: fnp.sum(x * w if p else x + w * w))(1.5)
        np.testing.assert_allclose(got, want, rtol=TOL)
    np.testing.assert_allclose(ft.grad(f)(1.5, True), np.sum(x), rtol=TOL)
    np.testing.assert_allclose(ft.grad(f)(1.5, False), 3 * 2 * 1.5, rtol=TOL)
    # The same closed-over value, batched by an outer vmap, with and without a batched
    # predicate; and a gradient of that.
    ws = np.array([0.5, -1.0, 2.0])
    ps = np.array([True, False, True])
    np.testing.assert_allclose(ft.vmap(f, in_axes=(0, None))(ws, True), np.sum(x) * ws, rtol=TOL)
    np.testing.assert_allclose(ft.vmap(f)(ws, ps), [f(w, p) for w, p in zip(ws, ps)], rtol=TOL)
    np.testing.assert_allclose(ft.vmap(ft.grad(f))(ws, ps),
                               [ft.grad(f)(w, p) for w, p in zip(ws, ps)], rtol=TOL)
    # The operands, the closed-over weight and the predicate all staged.
    check_staged(ft.grad(f), np.float64(1.5), np.bool_(True), expect={"cond"})
    # Second order through a closed-over tracer: d²/dw² of sum(x + w²) is 2 * len(x).
    np.testing.assert_allclose(ft.grad(ft.grad(f))(1.5, False), 6.0, rtol=TOL)
    np.testing.assert_allclose(ft.hessian(f)(1.5, True), 0.0, atol=TOL)


def test_cond_jvp_with_zero_tangent_in_one_branch():
    """One branch's output does not depend on the operand: its tangent is a symbolic zero
    in that branch only."""
    f = lambda p, x: lax.cond(p, lambda x: x * x, lambda x: fnp.ones_like(x), x)  # noqa: E731
    x = np.array([1.0, 2.0])
    assert_trees_close(ft.jvp(lambda x: f(True, x), (x,), (np.ones(2),))[1], 2 * x)
    assert_trees_close(ft.jvp(lambda x: f(False, x), (x,), (np.ones(2),))[1], np.zeros(2))
    assert_trees_close(ft.grad(lambda x: fnp.sum(f(False, x)))(x), np.zeros(2))
    assert_trees_close(ft.vmap(ft.grad(lambda p, x: fnp.sum(f(p, x)), argnums=1),
                               in_axes=(0, None))(
        np.array([True, False]), x), np.stack([2 * x, np.zeros(2)]))


@pytest.mark.parametrize("true_fun, false_fun, words", [
    (lambda x: x, lambda x: x.astype(np.float32), ["f64[3]", "f32[3]"]),
    (lambda x: x, lambda x: x[:2], ["f64[3]", "f64[2]"]),
    (lambda x: (x, x), lambda x: x, ["branch 0", "branch 1"]),
    (lambda x: {"a": x}, lambda x: {"b": x}, ["'a'", "'b'"]),
])
def test_cond_branch_type_mismatch_is_a_clear_type_error(true_fun, false_fun, words):
    with pytest.raises(TypeError) as info:
        lax.cond(True, true_fun, false_fun, np.ones(3))
    message = str(info.value)
    assert "branch" in message and "same" in message, message
    for word in words:
        assert word in message, message


def test_cond_branch_type_mismatch_names_both_types():
    with pytest.raises(TypeError) as info:
        lax.cond(True, lambda x: x, lambda x: x.astype(np.float32), np.ones(3))
    message = str(info.value)
    # The false branch is branch 0 (cond is switch on [false_fun, true_fun]).
    assert "f32[3]" in message and "f64[3]" in message, message


def test_cond_rejects_a_non_scalar_predicate():
    with pytest.raises(TypeError, match="scalar"):
        lax.cond(np.array([True, False]), lambda x: x, lambda x: x, 1.0)
    with pytest.raises(TypeError, match="integer"):
        lax.switch(1.5, [lambda x: x, lambda x: x], 1.0)


# ------------------------------------------------------------------------------------------
# while_loop specifics
# ------------------------------------------------------------------------------------------


def test_while_loop_forward_mode_matches_unrolled_loop():
    def f(x):
        return _while_value(x[0], x[1:])[1]

    def f_ref(x):
        return _while_value_ref(x[0], x[1:])[1]

    for x0 in (0.1, 1.0, 2.5):
        x = np.array([x0, 0.3, -0.4])
        assert_trees_close(ft.jacfwd(f)(x), ft.jacfwd(f_ref)(x))
        assert_trees_close(ft.jacfwd(ft.jacfwd(f))(x), ft.jacfwd(ft.jacfwd(f_ref))(x))
    # No iterations: the identity.
    x = np.array([5.0, 0.3, -0.4])
    assert_trees_close(ft.jacfwd(f)(x), np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))


def test_while_loop_jvp_of_closed_over_weight():
    def f(w):
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w), (0, 1.0))[1]

    out, t = ft.jvp(f, (1.5,), (1.0,))
    np.testing.assert_allclose([out, t], [1.5 ** 3, 3 * 1.5 ** 2], rtol=TOL)
    np.testing.assert_allclose(ft.jacfwd(ft.jacfwd(f))(1.5), 6 * 1.5, rtol=TOL)


def test_linearize_of_a_while_loop_stages_the_whole_loop():
    # as JAX: the primal outputs now, the tangents from the staged loop (which recomputes
    # the primal part); reverse mode still refuses it
    def f(x, w):
        return fnp.sum(lax.while_loop(lambda c: c[0] < 3,
                                      lambda c: (c[0] + 1, fnp.sin(c[1]) * w), (0, x))[1])

    x, w = np.array([0.5, 1.0]), 1.3
    y, f_jvp = ft.linearize(f, x, w)
    np.testing.assert_allclose(y, f(x, w), rtol=TOL)
    for t in [(np.ones(2), 0.0), (np.array([0.3, -2.0]), 1.0), (x, -0.5)]:
        np.testing.assert_allclose(f_jvp(*t), ft.jvp(f, (x, w), t)[1], rtol=TOL)
    ys, f_jvp = ft.linearize(ft.vmap(f, in_axes=(0, None)), np.stack([x, 2 * x]), w)
    np.testing.assert_allclose(f_jvp(np.ones((2, 2)), 0.0),
                               [ft.jvp(f, (v, w), (np.ones(2), 0.0))[1] for v in (x, 2 * x)],
                               rtol=TOL)
    _, f_vjp = ft.linearize(f, x, w)
    with pytest.raises(TypeError, match="Inside jit, linearize does not support it"):
        ft.linearize(ft.jit(f), x, w)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jacrev"])
def test_while_loop_reverse_mode_raises_and_points_to_scan(transform):
    def f(x):
        return fnp.sum(lax.while_loop(lambda c: c[0] < 3,
                                      lambda c: (c[0] + 1, fnp.sin(c[1])), (0, x))[1])

    x = np.array([0.5, 1.0])
    with pytest.raises(TypeError) as info:
        if transform == "grad":
            ft.grad(f)(x)
        elif transform == "vjp":
            ft.vjp(f, x)
        else:
            ft.jacrev(f)(x)
    message = str(info.value)
    assert "while_loop" in message and "scan" in message and "fori_loop" in message, message


def test_while_loop_with_batched_predicate_freezes_finished_members():
    def f(n, x):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))

    ns = np.array([0, 3, 1, 5])
    xs = np.array([1.0, 1.0, -1.0, 0.5])
    count, val = ft.vmap(f)(ns, xs)
    np.testing.assert_array_equal(count, ns)
    np.testing.assert_array_equal(val, xs * 2.0 ** ns)
    # Only the predicate is batched: the carry becomes batched.
    count, val = ft.vmap(f, in_axes=(0, None))(ns, 1.0)
    np.testing.assert_array_equal(val, 2.0 ** ns)
    # Its JVP too.
    _, t = ft.vmap(lambda n, x: ft.jvp(lambda x: f(n, x)[1], (x,), (1.0,)))(ns, xs)
    np.testing.assert_array_equal(t, 2.0 ** ns)


def test_while_loop_promotes_weak_python_scalars_in_the_carry():
    out = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + np.float32(1)), (0, 0))
    assert np.asarray(out[1]).dtype == np.float32 and out[1] == 3.0


# ------------------------------------------------------------------------------------------
# fori_loop specifics
# ------------------------------------------------------------------------------------------


def test_fori_loop_with_concrete_bounds_is_a_scan_and_reverse_differentiable():
    body = lambda i, x: fnp.sin(x) * i + x  # noqa: E731
    closed = check_staged(lambda x: lax.fori_loop(0, 4, body, x), np.array([0.3, -1.2]))
    names = primitive_names(closed.jaxpr)
    assert "scan" in names and "while" not in names, str(closed)
    x = np.array([0.3, -1.2])
    got = ft.grad(lambda x: fnp.sum(lax.fori_loop(0, 4, body, x)))(x)
    want = ft.grad(lambda x: fnp.sum(fori_ref(0, 4, body, x)))(x)
    assert_trees_close(got, want)
    # Empty and inverted ranges do nothing.
    assert_trees_close(lax.fori_loop(3, 3, body, x), x)
    assert_trees_close(lax.fori_loop(5, 2, body, x), x)
    assert_trees_close(ft.grad(lambda x: fnp.sum(lax.fori_loop(5, 2, body, x)))(x), np.ones(2))
    # NumPy integer bounds are concrete too.
    assert_trees_close(lax.fori_loop(np.int64(1), np.int32(3), body, x), fori_ref(1, 3, body, x))


def test_fori_loop_with_traced_bounds_under_make_jaxpr():
    body = lambda i, c: (c[0] + i, c[1] * 1.5)  # noqa: E731

    def f(lo, hi, x):
        return lax.fori_loop(lo, hi, body, (np.int64(0), x))

    closed = check_staged(f, np.int64(1), np.int64(4), np.float64(2.0), expect={"while"})
    for lo, hi in [(1, 4), (0, 0), (3, 1), (-2, 2)]:
        got = ft.eval_jaxpr(closed.jaxpr, closed.consts, np.int64(lo), np.int64(hi), 2.0)
        want = fori_ref(lo, hi, body, (0, 2.0))
        assert_trees_close(got, list(want), what=f"range({lo}, {hi})")
    # Forward mode through the traced-bound loop.
    closed = check_staged(lambda hi, x: ft.jvp(lambda x: f(0, hi, x)[1], (x,), (1.0,)),
                          np.int64(3), np.float64(2.0))
    assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, np.int64(3), 2.0),
                       [2.0 * 1.5 ** 3, 1.5 ** 3])


def test_fori_loop_with_batched_bounds_matches_loop():
    def body(i, x):
        return fnp.sin(x) + i * 0.5

    def f(lo, hi, x):
        return lax.fori_loop(lo, hi, body, x)

    los, his = np.array([0, 2, 1, 0]), np.array([3, 5, 1, 0])
    xs = np.array([0.1, 0.2, 0.3, 0.4])
    want = [fori_ref(int(lo), int(hi), body, x) for lo, hi, x in zip(los, his, xs)]
    assert_trees_close(ft.vmap(f)(los, his, xs), np.array(want))
    assert_trees_close(ft.vmap(f, in_axes=(None, 0, None))(0, his, 0.7),
                       np.array([fori_ref(0, int(hi), body, 0.7) for hi in his]))
    # Per-member forward derivatives with per-member trip counts.
    got = ft.vmap(lambda lo, hi, x: ft.jvp(lambda x: f(lo, hi, x), (x,), (1.0,))[1])(los, his, xs)
    want = [ft.jvp(lambda x: fori_ref(int(lo), int(hi), body, x), (x,), (1.0,))[1]
            for lo, hi, x in zip(los, his, xs)]
    assert_trees_close(got, np.array(want))


# ------------------------------------------------------------------------------------------
# scan specifics
# ------------------------------------------------------------------------------------------


def _rnn_loss(h0, xs, W, U, b):
    h, ys = _scan_rnn(h0, xs, W, U, b)
    return fnp.sum(h) + fnp.sum(ys * np.arange(1.0, np.shape(xs)[0] + 1))


def _rnn_loss_ref(h0, xs, W, U, b):
    h, ys = _scan_rnn_ref(h0, xs, W, U, b)
    return fnp.sum(h) + fnp.sum(ys * np.arange(1.0, np.shape(xs)[0] + 1))


def test_rnn_gradient_wrt_init_xs_and_closed_over_weights_matches_unrolled_loop():
    args = _scan_rnn_samples()[0]
    nums = (0, 1, 2, 3, 4)
    got = ft.grad(_rnn_loss, argnums=nums)(*args)
    want = ft.grad(_rnn_loss_ref, argnums=nums)(*args)
    assert_trees_close(got, want)
    for g, a in zip(got, args):
        assert np.shape(g) == np.shape(a)
    # Directly in NumPy, too: backpropagation through time by hand.
    h0, xs, W, U, b = args
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + U @ x + b))
    weights = np.arange(1.0, len(xs) + 1)
    gW, gU, gb, gxs = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b), np.zeros_like(xs)
    dh = np.ones(3) + 2 * weights[-1] * hs[-1]
    for t in range(len(xs) - 1, -1, -1):
        da = dh * (1 - hs[t + 1] ** 2)
        gW += np.outer(da, hs[t])
        gU += np.outer(da, xs[t])
        gb += da
        gxs[t] = U.T @ da
        dh = W.T @ da + (2 * weights[t - 1] * hs[t] if t > 0 else 0.0)
    assert_trees_close(got, (dh, gxs, gW, gU, gb))


def test_hessian_through_scan_matches_unrolled_loop():
    h0, xs, W, U, b = _scan_rnn_samples()[1]
    got = ft.hessian(lambda W: _rnn_loss(h0, xs, W, U, b))(W)
    want = ft.hessian(lambda W: _rnn_loss_ref(h0, xs, W, U, b))(W)
    assert np.shape(got) == (3, 3, 3, 3)
    assert_trees_close(got, want)
    # jacfwd-of-jacrev and jacrev-of-jacrev agree with it.
    f = lambda h0: _rnn_loss(h0, xs, W, U, b)  # noqa: E731
    f_ref = lambda h0: _rnn_loss_ref(h0, xs, W, U, b)  # noqa: E731
    assert_trees_close(ft.jacrev(ft.jacrev(f))(h0), ft.hessian(f_ref)(h0))


def test_per_example_gradients_vmap_of_grad_through_scan():
    samples = _scan_rnn_samples()
    h0, _, W, U, b = samples[0]
    xs_batch = np.stack([s[1] for s in samples])
    got = ft.vmap(ft.grad(_rnn_loss, argnums=(2, 3)), in_axes=(None, 0, None, None, None))(
        h0, xs_batch, W, U, b)
    for k in range(BATCH):
        want = ft.grad(_rnn_loss_ref, argnums=(2, 3))(h0, xs_batch[k], W, U, b)
        assert_trees_close((got[0][k], got[1][k]), want)


def test_grad_of_vmap_of_scan():
    samples = _scan_rnn_samples()
    h0, _, W, U, b = samples[0]
    xs_batch = np.stack([s[1] for s in samples])

    def batch_loss(W, U):
        return fnp.sum(ft.vmap(_rnn_loss, in_axes=(None, 0, None, None, None))(
            h0, xs_batch, W, U, b) ** 2)

    def batch_loss_ref(W, U):
        return sum(_rnn_loss_ref(h0, xs, W, U, b) ** 2 for xs in xs_batch)

    assert_trees_close(ft.grad(batch_loss, argnums=(0, 1))(W, U),
                       ft.grad(batch_loss_ref, argnums=(0, 1))(W, U))
    check_staged(ft.grad(batch_loss), W, U, expect={"scan"})


def test_scan_reverse_is_the_flipped_forward_scan():
    c0, xs = _scan_reverse_samples()[0]
    fwd_c, fwd_ys = lax.scan(_reverse_body, c0, xs[::-1])
    rev_c, rev_ys = lax.scan(_reverse_body, c0, xs, reverse=True)
    assert_trees_close(rev_c, fwd_c)
    assert_trees_close(rev_ys, tree_map(lambda y: y[::-1], fwd_ys))


def test_scan_with_no_ys_and_length_one():
    total, ys = lax.scan(lambda c, x: (c + x, None), 0.0, np.arange(4.0))
    assert total == 6.0 and ys is None
    c, ys = lax.scan(lambda c, x: (c * x, c), 2.0, np.array([3.0]))
    assert c == 6.0 and np.shape(ys) == (1,)
    assert ft.grad(lambda x: lax.scan(lambda c, x: (c * x, None), 1.0, x)[0])(
        np.array([2.0, 3.0, 4.0])).tolist() == [12.0, 8.0, 6.0]


def test_scan_gradient_wrt_xs_only_and_init_only():
    xs = np.array([0.5, -1.0, 2.0])
    f = lambda c, xs: lax.scan(lambda c, x: (fnp.sin(c) * x, c * x), c, xs)  # noqa: E731
    f_ref = lambda c, xs: scan_ref(lambda c, x: (fnp.sin(c) * x, c * x), c, xs)  # noqa: E731
    loss = lambda fun: lambda c, xs: fun(c, xs)[0] + fnp.sum(fun(c, xs)[1])  # noqa: E731
    for argnums in (0, 1, (0, 1)):
        assert_trees_close(ft.grad(loss(f), argnums=argnums)(0.7, xs),
                           ft.grad(loss(f_ref), argnums=argnums)(0.7, xs))


def test_scan_promotes_a_weak_python_scalar_init():
    c, _ = lax.scan(lambda c, x: (c + x, None), 0, np.arange(3.0, dtype=np.float32))
    assert np.asarray(c).dtype == np.float32 and c == 3.0


def test_scan_errors():
    with pytest.raises(ValueError, match="length"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(ValueError, match="leading"):
        lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4)))
    with pytest.raises(TypeError, match="pair"):
        lax.scan(lambda c, x: c, 0.0, np.ones(3))
    with pytest.raises(TypeError, match="carry"):
        lax.scan(lambda c, x: (c[0], x), (0.0, 1.0), np.ones(3))


# ------------------------------------------------------------------------------------------
# Staging: make_jaxpr of each primitive and of gradients through them
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, fun, args, expect", [
    ("cond", _cond_pytree, _cond_pytree_samples()[1], {"cond"}),
    ("switch", _switch3, _switch3_samples()[0], {"cond"}),
    ("while", _while_count, _while_count_samples()[0], {"while"}),
    ("fori_concrete", _fori_concrete, _fori_concrete_samples()[0], {"scan"}),
    ("scan", _scan_pytree, _scan_pytree_samples()[0], {"scan"}),
    ("scan_reverse", _scan_reverse, _scan_reverse_samples()[0], {"scan"}),
])
def test_make_jaxpr_of_each_primitive(name, fun, args, expect):
    check_staged(fun, *args, expect=expect)


def test_jaxprs_of_grad_through_cond_and_scan_typecheck():
    x = np.array([0.3, -0.2, 1.1])
    closed = check_staged(ft.grad(lambda p, x: fnp.sum(_cond_closure(p, x, 1.3)), argnums=1),
                          np.bool_(False), x, expect={"cond"})
    assert "cond" in primitive_names(closed.jaxpr)
    for p in (True, False):
        got = ft.eval_jaxpr(closed.jaxpr, closed.consts, np.bool_(p), x)[0]
        want = ft.grad(lambda x: fnp.sum(_cond_closure_ref(p, x, 1.3)))(x)
        assert_trees_close(got, want)
    args = _scan_rnn_samples()[0]
    closed = check_staged(ft.grad(_rnn_loss, argnums=(0, 1, 2, 3, 4)), *args, expect={"scan"})
    assert_trees_close(ft.eval_jaxpr(closed.jaxpr, closed.consts, *args),
                       list(ft.grad(_rnn_loss_ref, argnums=(0, 1, 2, 3, 4))(*args)))
    # The hessian's jaxpr too.
    check_staged(ft.hessian(lambda W: _rnn_loss(args[0], args[1], W, args[3], args[4])),
                 args[2], expect={"scan"})


# ------------------------------------------------------------------------------------------
# Python control flow on concrete values
# ------------------------------------------------------------------------------------------


def _python_if(x):
    if x > 0:
        return x * x
    return -x


def _python_while(x):
    while x < 10.0:
        x = x * 2.0
    return x


def test_python_control_flow_works_under_grad_and_jvp():
    assert ft.grad(_python_if)(3.0) == 6.0 and ft.grad(_python_if)(-3.0) == -1.0
    assert ft.jvp(_python_if, (3.0,), (1.0,)) == (9.0, 6.0)
    assert ft.grad(_python_while)(3.0) == 4.0 and ft.jvp(_python_while, (3.0,), (1.0,))[1] == 4.0
    assert ft.grad(ft.grad(_python_if))(3.0) == 2.0


@pytest.mark.parametrize("fun, pointer", [(_python_if, "lax.cond"),
                                          (_python_while, "lax.while_loop")])
def test_python_control_flow_on_tracers_points_to_lax(fun, pointer):
    with pytest.raises(ft.ConcretizationTypeError) as info:
        ft.make_jaxpr(fun)(3.0)
    assert pointer in str(info.value), str(info.value)
    with pytest.raises(ft.ConcretizationTypeError) as info:
        ft.vmap(fun)(np.array([3.0, -1.0]))
    assert pointer in str(info.value), str(info.value)
    # The lax versions stage.
    check_staged(lambda x: lax.cond(x > 0, lambda x: x * x, lambda x: -x, x), 3.0)
    check_staged(lambda x: lax.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, x), 3.0)
