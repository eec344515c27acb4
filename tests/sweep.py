"""The test suite's one sweep harness: case tables, inputs, numerical derivatives, vmap
against a loop, and the table of transforms.

A test module that sweeps functions is a table of ``Case`` entries plus thin parametrized
tests calling the checks below::

    CASES = [Case("sin", lax.sin, [A(3, 4)]), Case("log", lax.log, [A(3, 4, kind="pos")])]

    @pytest.mark.parametrize("case", CASES, ids=ids(CASES))
    def test_derivatives(case):
        check_case_grads(case)

Derivatives are compared against a fourth-order central difference
``(-f(x+2h) + 8 f(x+h) - 8 f(x-h) + f(x-2h)) / 12h`` whose error is O(h⁴): with h = 1e-3 in
float64 it agrees with exact derivatives of smooth functions to about 1e-9.  Second order
recurses on the derivative functions themselves (forward-over-forward, reverse-over-forward,
forward-over-reverse, reverse-over-reverse).

Two more kinds of case share the registry: ``CreationCase`` (functions with nothing to
differentiate or batch, checked for value and dtype against NumPy, under ``jit`` and with
``like=``) and ``TreeCase`` (``functrans.tree`` used on traced pytrees, against the same
computation written out by hand), collected from the ``CREATION_CASES`` and ``TREE_CASES``
of tests/cases_*.py by tests/test_creation.py and tests/test_tree_cases.py.

Every generated input array goes through an ``ArrayHook``'s ``put`` and every result through
its ``to_host`` before NumPy compares it, so the same sweep runs unchanged on a device
library (or a stand-in whose arrays refuse implicit conversion to NumPy).
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import pathlib
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

import functrans as ft
import functrans.numpy as fnp
from functrans import lax
from functrans.tree_util import tree_flatten, tree_leaves, tree_map

__all__ = [
    "ArrayHook", "NUMPY", "Arg", "A", "Case", "ids", "case_rng", "draw", "random_like",
    "numerical_jvp", "vdot", "assert_close", "check_jvp", "check_vjp", "check_grads",
    "differentiable_part", "check_case_grads", "in_axes_choices", "check_vmap_matches_loop",
    "check_vmap_of_derivatives", "check_jaxprs", "F64", "F32", "I64", "C128", "C64",
    "Transform", "TRANSFORMS", "transforms", "CreationCase", "creation_case",
    "check_creation_value", "check_creation_jit", "assert_same_array", "same_answer",
    "TreeCase", "tree_case", "check_tree_case",
]

F64, F32, I64 = np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64)
C128, C64 = np.dtype(np.complex128), np.dtype(np.complex64)

STEP = 1e-3
RTOL = ATOL = 1e-7
BATCH = 3

# ------------------------------------------------------------------------------------------
# The array library hook
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArrayHook:
    """Where the sweep's arrays live: ``put`` moves each generated input there, ``xp`` is
    the module that stacks them, ``to_host`` brings a result back for NumPy to compare."""
    put: Callable = lambda x: x
    xp: Any = np
    to_host: Callable = np.asarray

    def host_tree(self, tree):
        return tree_map(self.to_host, tree)


NUMPY = ArrayHook()

# ------------------------------------------------------------------------------------------
# Cases and their inputs
# ------------------------------------------------------------------------------------------

# The domains an argument is drawn from.  Float kinds are drawn in the requested dtype
# (float, complex or, for integer dtypes, small integers); the others keep their own.
KINDS = {
    "real": "standard normal",
    "pos": "|normal| + 0.5",
    "unit": "0.8 tanh(normal), inside (-1, 1)",
    "away0": "normal pushed 0.5 away from zero",
    "spread": "distinct values evenly spaced over [-2, 2): no near-ties",
    "quarter": "n/2 + 1/4: a quarter away from the jumps of floor, ceil and round",
    "grid": "-1, 0 or 1: ties and zeros",
    "zeros": "normal with exact zeros at a fifth of the places",
    "nonfinite": "normal with some nan, inf and -inf",
    "f64": "standard normal, always float64",
    "int": "small int64 integers, whatever the dtype",
    "bool": "booleans",
    "pyfloat": "a Python float in (0.5, 1.5), never batched or differentiated",
}


@dataclass(frozen=True)
class Arg:
    """One argument of a case: its shape and the domain (``KINDS``) it is drawn from."""
    shape: tuple
    kind: str = "real"

    def __post_init__(self):
        assert self.kind in KINDS, f"unknown argument kind {self.kind!r}; one of {list(KINDS)}"

    def draw_host(self, rng, dtype=F64):
        dtype = np.dtype(dtype)
        if self.kind == "pyfloat":
            return float(rng.uniform(0.5, 1.5))
        if self.kind == "bool":
            return rng.random(self.shape) > 0.5
        if self.kind == "int" or (dtype.kind in "iu" and self.kind != "f64"):
            low, high = {"pos": (1, 5), "unit": (-1, 2)}.get(self.kind, (-3, 4))
            x = rng.integers(low, high, self.shape)
            return np.where(x == 0, 1, x) if self.kind == "away0" else x
        x = rng.standard_normal(self.shape)
        if dtype.kind == "c" and self.kind != "f64":
            x = x + 1j * rng.standard_normal(self.shape)
        size = int(np.prod(self.shape))
        if self.kind == "spread":
            x = (rng.permutation(size).reshape(self.shape) - size / 2) * (4 / max(size, 1))
        elif self.kind == "pos":
            x = np.abs(x) + 0.5
        elif self.kind == "unit":
            x = np.tanh(x) * 0.8
        elif self.kind == "away0":
            x = x * (1 + 0.5 / np.abs(x))
        elif self.kind == "quarter":
            x = np.floor(2 * x.real) / 2 + 0.25
        elif self.kind == "grid":
            x = rng.integers(-1, 2, self.shape) + 0.0 * x
        elif self.kind == "zeros" and size:
            x.reshape(-1)[rng.choice(size, max(1, size // 5), replace=False)] = 0
        elif self.kind == "nonfinite":
            x.flat[::3], x.flat[1::4], x.flat[2::5] = np.nan, np.inf, -np.inf
        return np.asarray(x).astype(F64 if self.kind == "f64" else dtype)

    def draw(self, rng, dtype=F64, hook: ArrayHook = NUMPY):
        x = self.draw_host(rng, dtype)
        return x if self.kind == "pyfloat" else hook.put(x)

    @property
    def batchable(self) -> bool:
        return self.kind != "pyfloat"

    @property
    def differentiable(self) -> bool:
        return self.kind not in ("int", "bool", "pyfloat")


def A(*shape, kind: str = "real") -> Arg:
    return Arg(tuple(shape), kind)


@dataclass
class Case:
    """One function to sweep.

    ``fun(*args, **static)`` is checked; ``reference(*args, **static)``, where given, is
    the NumPy function it must agree with.  ``args`` are ``Arg`` specs; the differentiable
    ones (floats, by kind) are the primals of the derivative checks.  ``order`` is the
    highest derivative order checked numerically (0: none, e.g. a derivative that is zero
    by definition); ``linear`` cases are also checked to be their own JVP.  ``tol`` is the
    numerical-derivative tolerance (rtol and atol), looser where a float32 cast rounds."""
    name: str
    fun: Callable
    args: list
    differentiable: bool = True
    order: int = 2
    dtypes: tuple = (F64, F32)
    tol: float = RTOL
    static: dict = field(default_factory=dict)
    reference: Callable | None = None
    linear: bool = False

    def __call__(self, *args):
        return self.fun(*args, **self.static)

    def draw(self, rng, dtype=F64, hook: ArrayHook = NUMPY) -> list:
        return [a.draw(rng, dtype, hook) for a in self.args]


def numpy_case(name, fun, *args, dtypes=(F64, F32, I64), diff=True, tol=1e-7, reference=None
               ) -> Case:
    """A case of a NumPy-named function: ``fun(m, *arrays)`` runs with ``m`` =
    ``functrans.numpy``, and with ``m`` = ``numpy`` for the reference it must agree with."""
    return Case(name, functools.partial(fun, fnp), list(args), differentiable=diff,
                dtypes=dtypes, tol=tol, reference=reference or _numpy_reference(fun))


def _numpy_reference(fun):
    """``fun(numpy, ...)``, skipping the test where this NumPy lacks the function (the
    oldest NumPy pyproject allows has fewer than functrans.numpy: np.unstack came in 2.1)."""
    def reference(*args, **kwargs):
        try:
            return fun(np, *args, **kwargs)
        except AttributeError as error:
            if "module 'numpy" in str(error) and "has no attribute" in str(error):
                pytest.skip(f"NumPy {np.__version__}: {error}")
            raise
    return reference


def custom_jvp_with_rule(fun: Callable, derivative: Callable, scale: float = 1.0,
                         offset: float = 0.0):
    """``fun`` as a ``custom_jvp`` function whose rule is ``scale * derivative(x) * t +
    offset``: the right rule (scale 1, offset 0), or one deliberately wrong by a known
    amount, for testing the gradient checkers."""
    @ft.custom_jvp
    def f(x):
        return fun(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return fun(x), scale * derivative(x) * t + offset
    return f


def discovered_cases(table: str) -> list:
    """The cases in the list ``table`` (``PRIMITIVE_CASES`` or ``NUMPY_CASES``) of every
    ``tests/cases_*.py`` module.  A family of primitives or functions adds its sweep there;
    tests/test_primitives.py and tests/test_numpy.py run every check on them."""
    cases = []
    for path in sorted(pathlib.Path(__file__).parent.glob("cases_*.py")):
        cases += getattr(importlib.import_module(path.stem), table, [])
    return cases


def ids(cases) -> list[str]:
    return [c.name for c in cases]


def case_rng(case: Case | str, salt: Any = 0) -> np.random.Generator:
    """A generator seeded by the case's name: the same inputs in every process (crc32, as
    string hashes change from process to process)."""
    name = case if isinstance(case, str) else case.name
    return np.random.default_rng(zlib.crc32(f"{name}/{salt}".encode()))


def draw(rng, shape, dtype=F64, kind="real", hook: ArrayHook = NUMPY):
    """One array of ``shape`` from the domain ``kind``."""
    return Arg(tuple(shape), kind).draw(rng, dtype, hook)


def random_like(rng, tree, hook: ArrayHook = NUMPY):
    """Standard normal leaves (complex where the leaf is) of the leaves' shapes and dtypes."""
    def one(x):
        x = hook.to_host(x)
        if x.dtype.kind == "c":
            y = rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)
        else:
            y = rng.standard_normal(x.shape)
        return hook.put(np.asarray(y).astype(x.dtype))
    return tree_map(one, tree)


# ------------------------------------------------------------------------------------------
# Numerical derivatives
# ------------------------------------------------------------------------------------------


def _axpy(a, x, y):
    # y + a x, in y's dtype, without leaving the arrays' library.
    return tree_map(lambda xi, yi: yi + (a * xi).astype(yi.dtype) if hasattr(yi, "dtype")
                    else yi + a * xi, x, y)


def vdot(xs, ys, hook: ArrayHook = NUMPY) -> float:
    """``Re(sum(x * y))`` over two pytrees of equal structure: the pairing that transposes
    respect (no conjugation, as in JAX), so ``<ct, J t> == <vjp(ct), t>`` for complex
    outputs too."""
    return float(sum(np.real(np.sum(hook.to_host(a) * hook.to_host(b)))
                     for a, b in zip(tree_leaves(xs), tree_leaves(ys))))


def numerical_jvp(f, primals, tangents, step=STEP):
    """Fourth-order central difference of ``f`` at ``primals`` along ``tangents``."""
    def at(scale):
        return f(*_axpy(scale * step, tangents, primals))
    plus2, plus1, minus1, minus2 = at(2.0), at(1.0), at(-1.0), at(-2.0)
    return tree_map(lambda a, b, c, d: (-a + 8 * b - 8 * c + d) / (12 * step),
                    plus2, plus1, minus1, minus2)


def assert_close(actual, expected, rtol=RTOL, atol=ATOL, what="", hook: ArrayHook = NUMPY):
    """Pytrees of equal structure whose leaves have equal shapes and close values (float0
    leaves must both be float0)."""
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    assert a_tree == e_tree, f"{what}: structures differ: {a_tree} vs {e_tree}"
    for a, e in zip(a_leaves, e_leaves):
        a, e = hook.to_host(a), hook.to_host(e)
        assert a.shape == e.shape, f"{what}: shapes differ: {a.shape} vs {e.shape}"
        if ft.float0 in (a.dtype, e.dtype):
            assert a.dtype == e.dtype, f"{what}: dtypes differ: {a.dtype} vs {e.dtype}"
            continue
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def check_jvp(f, primals, rng, rtol=RTOL, atol=ATOL, hook: ArrayHook = NUMPY):
    """Forward mode against the central difference along a random tangent."""
    tangents = random_like(rng, primals, hook)
    _, analytic = ft.jvp(f, primals, tangents)
    numeric = numerical_jvp(f, primals, tangents)
    assert_close(analytic, numeric, rtol, atol, "jvp vs central difference", hook)


def check_vjp(f, primals, rng, rtol=RTOL, atol=ATOL, hook: ArrayHook = NUMPY):
    """<ct, J t> computed numerically must equal <vjp(ct), t>; against forward mode the
    same identity holds to rounding."""
    tangents = random_like(rng, primals, hook)
    out, f_vjp = ft.vjp(f, *primals)
    cts = random_like(rng, out, hook)
    cts_in = f_vjp(cts)
    lhs = vdot(cts, numerical_jvp(f, primals, tangents), hook)
    rhs = vdot(cts_in, tangents, hook)
    np.testing.assert_allclose(rhs, lhs, rtol=rtol, atol=atol,
                               err_msg="<vjp(ct), t> vs <ct, numerical J t>")
    _, jt = ft.jvp(f, primals, tangents)
    exact = max(1e-11, rtol * 1e-4)
    np.testing.assert_allclose(rhs, vdot(cts, jt, hook), rtol=exact, atol=exact,
                               err_msg="<vjp(ct), t> vs <ct, jvp(t)>")


def check_grads(f, primals, order: int, rng, rtol=RTOL, atol=ATOL, hook: ArrayHook = NUMPY):
    """Forward and reverse mode up to ``order`` against numerical differences."""
    check_jvp(f, primals, rng, rtol, atol, hook)
    check_vjp(f, primals, rng, rtol, atol, hook)
    if order > 1:
        tangents = random_like(rng, primals, hook)

        def f_jvp(*p):
            return ft.jvp(f, p, tangents)[1]
        check_grads(f_jvp, primals, order - 1, rng, rtol * 10, atol * 10, hook)

        cts = random_like(rng, f(*primals), hook)

        def f_vjp(*p):
            return ft.vjp(f, *p)[1](cts)
        check_grads(f_vjp, primals, order - 1, rng, rtol * 10, atol * 10, hook)


def differentiable_part(case: Case, args):
    """The case as a function of its differentiable arguments only, and those arguments."""
    diff = [i for i, a in enumerate(case.args) if a.differentiable]

    def f(*dyn):
        full = list(args)
        for i, x in zip(diff, dyn):
            full[i] = x
        return case(*full)
    return f, [args[i] for i in diff]


def check_case_grads(case: Case, salt: Any = 1, hook: ArrayHook = NUMPY):
    """A case's derivatives up to its order in float64, both modes; a linear case is also
    its own JVP, and its transpose pairs exactly with it."""
    rng = case_rng(case, salt)
    f, primals = differentiable_part(case, case.draw(rng, F64, hook))
    check_grads(f, primals, case.order, rng, rtol=case.tol, atol=case.tol, hook=hook)
    if case.linear:
        tangents = random_like(rng, primals, hook)
        assert_close(ft.jvp(f, primals, tangents)[1], f(*tangents), 1e-12, 1e-12,
                     "a linear function is its own JVP", hook)


# ------------------------------------------------------------------------------------------
# vmap against a Python loop
# ------------------------------------------------------------------------------------------


def in_axes_choices(case: Case) -> list[tuple]:
    """Every argument batched along its first axis, then along its last; and each argument
    in turn left unbatched while the others are batched along axis 0 and along a
    non-leading axis (1, or 0 for scalars).  Python floats are never batched."""
    def each(axis_of):
        return tuple(axis_of(a) if a.batchable else None for a in case.args)
    choices = [each(lambda a: 0), each(lambda a: -1)]
    if len(case.args) > 1:
        for i in range(len(case.args)):
            for axis in (0, 1):
                choices.append(tuple(
                    None if j == i or not a.batchable else (axis if a.shape else 0)
                    for j, a in enumerate(case.args)))
    unique = []
    for c in choices:
        if c not in unique and any(a is not None for a in c):
            unique.append(c)
    return unique


def check_vmap_matches_loop(case: Case, rng, dtype=F64, in_axes=None, compare=None,
                            hook: ArrayHook = NUMPY):
    """``vmap(case)`` over BATCH drawn members equals stacking ``case`` of each member, for
    each ``in_axes`` (default: ``in_axes_choices``).  ``compare(got, want, what)`` compares
    host arrays (default: close to 1e-13 with equal dtypes)."""
    compare = compare or _compare_exactly
    for axes in (in_axes_choices(case) if in_axes is None else in_axes):
        draws = [case.draw(rng, dtype, hook) for _ in range(BATCH)]
        members = [[draws[0][i] if ax is None else d[i] for i, ax in enumerate(axes)]
                   for d in draws]
        batched = [draws[0][i] if ax is None else hook.xp.stack([m[i] for m in members], ax)
                   for i, ax in enumerate(axes)]
        got = tree_leaves(ft.vmap(case, in_axes=axes)(*batched))
        loop = [tree_leaves(case(*m)) for m in members]
        assert len(got) == len(loop[0]), f"{case.name}: {len(got)} outputs, not {len(loop[0])}"
        for k, g in enumerate(got):
            want = np.stack([hook.to_host(out[k]) for out in loop])
            compare(hook.to_host(g), want, f"{case.name} in_axes={axes}")


def _compare_exactly(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=what)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, the loop gives {want.dtype}"


def check_vmap_of_derivatives(f, primals, rng, in_axis: int = 0, hook: ArrayHook = NUMPY):
    """The batching rules of JVPs and transposes: vmap over per-member tangents, over
    per-member cotangents, and per-example gradients of the summed output (batched primals
    along ``in_axis``) each equal a loop."""
    xp = hook.xp
    out = f(*primals)
    # Each argument's batch axis: in_axis where it has that many axes, else its last.
    axes = tuple(in_axis if in_axis < 0 else min(in_axis, np.ndim(p)) for p in primals)
    members_t = [random_like(rng, list(primals), hook) for _ in range(BATCH)]
    tangents = [xp.stack([m[i] for m in members_t], axes[i]) for i in range(len(primals))]
    got_t = ft.vmap(lambda *t: ft.jvp(f, primals, t)[1], in_axes=axes)(*tangents)
    want_t = np.stack([hook.to_host(ft.jvp(f, primals, m)[1]) for m in members_t])
    np.testing.assert_allclose(hook.to_host(got_t), want_t, rtol=1e-12, atol=1e-12,
                               err_msg="vmap of jvp")

    _, pullback = ft.vjp(f, *primals)
    members_c = [random_like(rng, out, hook) for _ in range(BATCH)]
    # The cotangents' batch axis: in_axis where the outputs have that many axes.
    ct_axis = in_axis if in_axis < 0 else min([in_axis] + [np.ndim(o) for o in
                                                           tree_leaves(out)])
    stacked = tree_map(lambda *m: xp.stack(m, ct_axis), *members_c)
    got_c = ft.vmap(pullback, in_axes=ct_axis)(stacked)
    for b in range(BATCH):
        for g, w in zip(got_c, pullback(members_c[b])):
            np.testing.assert_allclose(hook.to_host(g)[b], hook.to_host(w), rtol=1e-12,
                                       atol=1e-12, err_msg="vmap of vjp")

    def loss(*p):
        y = f(*p)
        return fnp.sum(y)

    nums = tuple(range(len(primals)))
    members_p = [[p + 0.01 * b for p in primals] for b in range(BATCH)]
    batched = [xp.stack([m[i] for m in members_p], axes[i]) for i in nums]
    got_g = ft.vmap(ft.grad(loss, argnums=nums), in_axes=axes)(*batched)
    for b in range(BATCH):
        want_g = ft.grad(loss, argnums=nums)(*members_p[b])
        for g, w in zip(got_g, want_g):
            np.testing.assert_allclose(hook.to_host(g)[b], hook.to_host(w), rtol=1e-12,
                                       atol=1e-12, err_msg="vmap of grad")


# ------------------------------------------------------------------------------------------
# Jaxprs
# ------------------------------------------------------------------------------------------


def check_jaxprs(f, primals, rng, tol=1e-13, hook: ArrayHook = NUMPY):
    """The jaxprs of ``f``, of its JVP and of its VJP (cotangent of ones) type-check and
    evaluate to the eager results."""
    tangents = random_like(rng, list(primals), hook)

    def jvp_fun(*p):
        return ft.jvp(f, p, tangents)

    def vjp_fun(*p):
        out, pullback = ft.vjp(f, *p)
        return pullback(tree_map(fnp.ones_like, out))

    for fun in (f, jvp_fun, vjp_fun):
        closed = ft.make_jaxpr(fun)(*primals)
        ft.check_jaxpr(closed.jaxpr)
        got = ft.eval_jaxpr(closed.jaxpr, closed.consts, *primals)
        assert_close(list(got), tree_leaves(fun(*primals)), tol, tol,
                     f"eval_jaxpr(make_jaxpr({fun.__name__}))", hook)


# ------------------------------------------------------------------------------------------
# The transforms: one table for every test that loops over them
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Transform:
    """A transform applied to a function ``f`` at a float64 point ``x`` (a scalar or an
    array): ``run(f, x)`` returns the derivative of ``f`` at ``x`` of the given ``order``
    (1 or 2; of ``sum(f)`` where a scalar is needed, along ones where a direction is), or
    for ``order == 0`` what the transform returns (the batching ones map ``f`` over the
    batch ``[x, x + 1]``, the staging ones give ``f`` abstract values)."""
    name: str
    run: Callable
    order: int

    def __call__(self, f, x):
        return self.run(f, x)


def _batch(x):
    return np.stack([np.asarray(x, dtype=F64), np.asarray(x, dtype=F64) + 1.0])


def _summed(f):
    return lambda v: fnp.sum(f(v))


def _ones(x):
    return np.ones_like(np.asarray(x, dtype=F64))[()]


TRANSFORMS = {t.name: t for t in [
    Transform("grad", lambda f, x: ft.grad(_summed(f))(x), 1),
    Transform("value_and_grad", lambda f, x: ft.value_and_grad(_summed(f))(x)[1], 1),
    Transform("jvp", lambda f, x: ft.jvp(f, (x,), (_ones(x),))[1], 1),
    Transform("vjp", lambda f, x: (lambda out, pullback: pullback(
        tree_map(fnp.ones_like, out))[0])(*ft.vjp(f, x)), 1),
    Transform("linearize", lambda f, x: ft.linearize(f, x)[1](_ones(x)), 1),
    Transform("jacfwd", lambda f, x: ft.jacfwd(f)(x), 1),
    Transform("jacrev", lambda f, x: ft.jacrev(f)(x), 1),
    Transform("hessian", lambda f, x: ft.hessian(_summed(f))(x), 2),
    Transform("grad_of_grad", lambda f, x: ft.grad(_summed(ft.grad(_summed(f))))(x), 2),
    Transform("vmap", lambda f, x: ft.vmap(f)(_batch(x)), 0),
    Transform("vmap_of_grad", lambda f, x: ft.vmap(ft.grad(_summed(f)))(_batch(x)), 0),
    Transform("grad_of_vmap", lambda f, x: ft.grad(_summed(ft.vmap(f)))(_batch(x)), 0),
    Transform("make_jaxpr", lambda f, x: ft.make_jaxpr(f)(x), 0),
    Transform("make_jaxpr_of_grad", lambda f, x: ft.make_jaxpr(ft.grad(_summed(f)))(x), 0),
    Transform("eval_shape", lambda f, x: ft.eval_shape(f, x), 0),
    Transform("cond_branch", lambda f, x: lax.cond(True, f, f, x), 0),
]}


def transforms(*names: str) -> dict[str, Transform]:
    """The named rows of TRANSFORMS, in the order given."""
    missing = [n for n in names if n not in TRANSFORMS]
    assert not missing, f"not in sweep.TRANSFORMS: {missing}"
    return {n: TRANSFORMS[n] for n in names}


# ------------------------------------------------------------------------------------------
# Creation cases: functions with no differentiable input
# ------------------------------------------------------------------------------------------


@dataclass
class CreationCase:
    """A function with nothing to differentiate or batch: creation from shapes and Python
    values (``eye``, ``arange``, windows, ``fftfreq``, ``fromiter``, ...), index helpers
    and dtype queries.  ``fun(m, *args)`` runs with ``m`` = ``functrans.numpy`` and, for
    the reference, with ``m`` = ``numpy`` (``reference(*args)`` where NumPy's answer is
    not functrans's documented one).  ``args`` are ``Arg`` specs read for their shapes and
    dtypes only (dtype queries on arrays, and on tracers under ``jit``).  ``like``: the
    function takes ``like=``, and ``fun(m, *args, like=array)`` must build its result on
    that array's device.  ``jit``: the call also runs under ``jit`` (its array arguments
    traced) and must give the eager answer."""
    name: str
    fun: Callable
    args: list
    reference: Callable
    like: bool = False
    jit: bool = True

    def __call__(self, *args, **kwargs):
        return self.fun(fnp, *args, **kwargs)

    def draw(self, rng, dtype=F64, hook: ArrayHook = NUMPY) -> list:
        return [a.draw(rng, dtype, hook) for a in self.args]

    @property
    def dtypes(self) -> tuple:
        return (F64,)


def creation_case(name, fun, *args, like=False, jit=True, reference=None) -> CreationCase:
    """A case of a creation or dtype function of NumPy's name: ``fun(m, *arrays)``; see
    ``CreationCase``."""
    return CreationCase(name, fun, list(args), reference or _numpy_reference(fun), like, jit)


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, ft.core.Tracer)) or hasattr(x, "__array_namespace__")


def assert_same_array(got, want, what="", single_tol: float = 1e-6) -> None:
    """Equal dtypes, shapes and values: floats to 1e-12 in double precision and
    ``single_tol`` in single, integers and booleans exactly."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, NumPy gives {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, NumPy gives {want.shape}"
    if want.dtype.kind in "fc":
        single = want.dtype.itemsize <= 4 * (1 + (want.dtype.kind == "c"))
        tol = single_tol if single else 1e-12
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def same_answer(got, want, what="", hook: ArrayHook = NUMPY):
    """``got`` is ``want``: arrays of equal dtype, shape and values (floats to 1e-12 in
    float64, 1e-6 in float32, the rest exactly), sequences of such answers element by
    element, anything else (dtypes, shapes, booleans, strings) equal and of the same kind
    (``bool`` and ``numpy.bool_`` count as one)."""
    if _is_array(got) or _is_array(want):
        assert _is_array(got), f"{what}: {type(got).__name__}, NumPy gives an array"
        assert_same_array(hook.to_host(got), want, what)
    elif isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), (
            f"{what}: {got!r}, NumPy gives {want!r}")
        for i, (g, w) in enumerate(zip(got, want)):
            same_answer(g, w, f"{what}[{i}]", hook)
    else:
        kinds = [bool if isinstance(v, (bool, np.bool_)) else type(v) for v in (got, want)]
        assert got == want and (kinds[0] is kinds[1] or np.dtype in kinds
                                or isinstance(want, type)), (
            f"{what}: {got!r} ({type(got).__name__}), NumPy gives {want!r} "
            f"({type(want).__name__})")


def check_creation_value(case: CreationCase, dtype=F64):
    """The answer on concrete inputs equals the reference's."""
    args = case.draw(case_rng(case), dtype)
    same_answer(case(*args), case.reference(*args), case.name)


def check_creation_jit(case: CreationCase, dtype=F64):
    """Under ``jit`` (array arguments traced) the answer is the eager one: arrays come out
    of the compiled call, static answers (dtypes, booleans, paths) are read while tracing."""
    args = case.draw(case_rng(case), dtype)
    want = case(*args)
    seen: list = []

    def traced(*a):
        out = case(*a)
        if all(_is_array(x) for x in tree_leaves(out)):
            return out
        seen.append(out)
        return ()
    got = ft.jit(traced)(*args)
    same_answer(seen[0] if seen else got, want, f"{case.name} under jit")


# ------------------------------------------------------------------------------------------
# Tree cases: functions of pytrees
# ------------------------------------------------------------------------------------------


@dataclass
class TreeCase:
    """A function of a pytree that uses ``functrans.tree``: ``fun(tree)`` must equal
    ``reference(tree)``, the same result written out by hand for the fixed structure of
    ``make(rng)`` (a pytree of float64 arrays).  The checks (``check_tree_case``) run it on
    concrete leaves, under ``jit``, differentiated in both modes to second order against
    central differences and against the reference's own derivatives, and under ``vmap``
    against a loop."""
    name: str
    fun: Callable
    make: Callable
    reference: Callable

    def __call__(self, tree):
        return self.fun(tree)


def tree_case(name, fun, make, reference) -> TreeCase:
    return TreeCase(name, fun, make, reference)


def check_tree_case(case: TreeCase, what: str = "all"):
    """``what``: 'values' (concrete and under ``jit``), 'grads' (numerical, both modes, to
    second order; ``grad`` of the summed output equals the reference's) or 'vmap'."""
    rng = case_rng(case)
    t = case.make(rng)
    if what in ("all", "values"):
        want = case.reference(t)
        assert_close(case(t), want, 1e-13, 1e-13, f"{case.name}: value")
        assert_close(ft.jit(case.fun)(t), want, 1e-13, 1e-13, f"{case.name}: jit")
    if what in ("all", "grads"):
        check_grads(case.fun, [t], 2, rng)

        def summed(f):
            return lambda tree: sum(fnp.sum(x) for x in tree_leaves(f(tree)))
        assert_close(ft.grad(summed(case.fun))(t), ft.grad(summed(case.reference))(t),
                     1e-12, 1e-12, f"{case.name}: grad against the reference's")
        assert_close(ft.jit(ft.grad(summed(case.fun)))(t), ft.grad(summed(case.reference))(t),
                     1e-12, 1e-12, f"{case.name}: jit of grad")
    if what in ("all", "vmap"):
        members = [case.make(rng) for _ in range(BATCH)]
        batched = tree_map(lambda *xs: np.stack(xs), *members)
        got = ft.vmap(case.fun)(batched)
        want = tree_map(lambda *xs: np.stack(xs), *[case(m) for m in members])
        assert_close(got, want, 1e-13, 1e-13, f"{case.name}: vmap against a loop")


def optional_jax():
    """JAX with 64-bit mode on, for tests that compare with it, or None when JAX is not
    installed (CI has none; those tests skip with ``needs_jax``)."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


#: marks a test that compares with JAX
needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                               reason="JAX is not installed")
