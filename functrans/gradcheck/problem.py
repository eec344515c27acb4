"""The problem gradcheck checks: a function of the flat floating-point input leaves
returning its flat floating-point outputs, with names for reports.  Integer and boolean
inputs are held fixed and such outputs dropped."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from functrans import backend, config, core, reverse_mode
from functrans.api_util import argnums_tuple, partial_over, positional_names
from functrans.core import get_aval
from functrans.gradcheck.options import LOW_PRECISION, default_tolerance, numeric_dtype
from functrans.gradcheck.realify import materialize, placement, random_like, real_size
from functrans.interpreters import ad, transpose
from functrans.primitives.conversion import convert_element_type
from functrans.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["Problem", "tree_paths", "arg_names", "function_name", "as_array", "is_checkable",
           "make_problem"]


class Problem:
    """``fun(*leaves) -> [outputs]``, with names for reports.  Every leaf and output is
    inexact; the other inputs are closed over and the other outputs dropped."""

    notes: Callable[[], list[str]]  # set by make_problem

    def __init__(self, fun: Callable, leaves: list, in_names: list,
                 out_names: list | Callable, label: str, reverse_plan: str = "warm"):
        self.fun = fun
        #: the reverse-mode plan checked (functrans.reverse_mode): "warm" is the one grad
        #: takes on a warm call (see ``plan``), else "linearize", "compiled" or "tape"
        self.reverse_plan = reverse_plan
        self.leaves = leaves
        self.in_names = in_names
        self._out_names = out_names
        self.label = label
        self.in_avals = [get_aval(x) for x in leaves]
        self.in_sizes = [real_size(a) for a in self.in_avals]
        self.like = placement(leaves)
        self._outs: list | None = None
        self._pullback: Callable | None = None
        self._symbolic_pullback: reverse_mode.Pullback | None = None
        self._linearization: tuple | None = None
        self.directional_cache: dict = {}

    # The outputs come from whichever evaluation runs first (fast mode counts evaluations).
    @property
    def outs(self) -> list:
        if self._outs is None:
            self._set_outs(self.fun(*self.leaves))
        return self._outs

    def _set_outs(self, outs: list) -> None:
        if self._outs is None:
            self._outs = [backend.asarray(y, like=self.like) if isinstance(y, np.generic)
                          else y for y in outs]
            self._out_avals = [get_aval(y) for y in self._outs]

    @property
    def out_avals(self) -> list:
        self.outs  # noqa: B018
        return self._out_avals

    @property
    def out_sizes(self) -> list:
        return [real_size(a) for a in self.out_avals]

    @property
    def out_names(self) -> list:
        self.outs  # noqa: B018  (the names are known once the function has run)
        return self._out_names() if callable(self._out_names) else self._out_names

    def linearization(self) -> tuple[Any, list, list]:
        """``(jaxpr, residuals, out_tangents)`` from ``linearize_flat`` of ``fun`` at
        ``leaves``: computed once, shared by all checks of both modes."""
        if self._linearization is None:
            outs, jaxpr, consts, out_tangents = ad.linearize_flat(self.fun, self.leaves)
            self._set_outs(outs)
            self._linearization = (jaxpr, consts, out_tangents)
        return self._linearization

    def pullback(self) -> Callable:
        """The pullback of ``fun`` at ``leaves`` (the transpose of the linearization); it
        accepts symbolic Zero cotangents and returns materialized cotangents."""
        if self._pullback is None:
            pullback = self.symbolic_pullback()
            self._pullback = lambda cts: materialize(pullback(list(cts)), self.leaves)
        return self._pullback

    def symbolic_pullback(self) -> Callable:
        """Like :meth:`pullback`, but a cotangent nothing flowed back to stays a symbolic
        Zero (of the input's tangent type).  Computed by the reverse-mode plan ``plan()``
        names, so the check covers the code the user's calls run."""
        if self._symbolic_pullback is None:
            plan = self.plan()
            if plan in ("linearize", "compiled"):  # the linearization both modes share
                self._symbolic_pullback = reverse_mode.linear_pullback(*self.linearization(),
                                                                       plan)
            else:
                with config.reverse_mode_set(plan):
                    outs, pullback = reverse_mode.planned_vjp(self.fun, self.leaves)
                self._set_outs(outs)
                self._symbolic_pullback = pullback
        return self._symbolic_pullback

    def plan(self) -> str:
        """The plan reverse mode is checked through: ``reverse_plan``, where "warm" means
        the one ``grad`` takes on a warm call (a function called before): recorded on a
        tape for a scalar function, else linearized and transposed by compiled code (what
        ``vjp`` and ``jacrev`` run).  Either falls back as ``grad`` would (no tape for a
        user's rules or device arrays)."""
        if self.reverse_plan != "warm":
            return self.reverse_plan
        avals = self.out_avals
        return "tape" if len(avals) == 1 and avals[0].shape == () else "compiled"

    def compiled_rows(self) -> bool:
        """Whether the pullback runs compiled code, which it does on concrete cotangents
        only: the reverse Jacobian's rows are then pulled back one by one, not under vmap."""
        plan = self.plan()
        if plan == "compiled":
            return reverse_mode.structure_key(self.linearization()[0]) is not None
        return plan == "tape"

    def plan_ran(self) -> str | None:
        """The plan the pullback last ran (``reverse_mode.PLANS``), None before it ran."""
        pullback = self._symbolic_pullback
        if pullback is None:
            return None
        return pullback.plan

    def reached_inputs(self) -> list[bool]:
        """For each input, whether a cotangent of the outputs reaches it at all: its
        gradient is not a symbolic zero (Chainer's "the gradient is not None")."""
        ones = [backend.ones(get_aval(y).shape, get_aval(y).dtype, like=y) for y in self.outs]
        grads = self.symbolic_pullback()(ones)
        return [type(g) is not ad.Zero for g in grads]

    def push_linearized(self, tangents: Sequence) -> list:
        """``J·tangents`` from the linearization: forward mode without a second evaluation
        of ``fun`` when reverse mode has linearized it already."""
        outs_t = ad.eval_linearized(*self.linearization(), tangents)
        return materialize(outs_t, self.outs)

    def push(self, tangents: Sequence) -> list:
        """``jvp`` of ``fun`` at ``leaves`` (tangents may be symbolic Zeros)."""
        outs_p, outs_t = ad.jvp_flat(self.fun, self.leaves, list(tangents))
        if self._outs is None and not any(isinstance(y, core.Tracer) for y in outs_p):
            self._set_outs(outs_p)
        return materialize(outs_t, outs_p)

    @property
    def low_precision(self) -> bool:
        return any(a.dtype in LOW_PRECISION for a in self.in_avals + self.out_avals)

    def cast(self, override) -> list:
        """The inputs in the dtype the numerical side is computed in."""
        return [x.astype(numeric_dtype(a.dtype, override)) if hasattr(x, "astype") else
                backend.asarray(x, numeric_dtype(a.dtype, override), like=self.like)
                for x, a in zip(self.leaves, self.in_avals)]

    def promoted(self) -> Problem:
        """The same function at the same point with every input promoted to 64 bits."""
        return Problem(self.fun, self.cast(None), self.in_names, self._out_names, self.label,
                       self.reverse_plan)

    def block_tolerance(self, k: int, i: int, atol, rtol) -> tuple[float, float]:
        default = max(default_tolerance(self.out_avals[k].dtype),
                      default_tolerance(self.in_avals[i].dtype))
        return (default if atol is None else atol), (default if rtol is None else rtol)

    def derivative(self, mode: str, rng) -> Problem:
        """The problem of checking ``jvp(f)`` (mode fwd: a function of the primals and a
        tangent) or ``vjp(f)`` (mode rev: of the primals and a cotangent)."""
        n = len(self.leaves)
        outs = self.outs
        out_names = self.out_names
        if mode == "fwd":
            extra = random_like(rng, self.leaves)

            def jvp_fun(*args):
                xs, ts = args[:n], args[n:]
                ts = [convert_element_type(t, get_aval(x).dtype) for t, x in zip(ts, xs)]
                outs_p, outs_t = ad.jvp_flat(self.fun, xs, ts)
                return materialize(outs_t, outs_p)

            return Problem(jvp_fun, self.leaves + extra,
                           self.in_names + [f"tangent of {n_}" for n_ in self.in_names],
                           [f"tangent of {n_}" for n_ in out_names],
                           f"jvp({self.label})")
        extra = random_like(rng, outs)

        def vjp_fun(*args):
            xs, cs = args[:n], args[n:]
            outs_p, pullback = transpose.vjp_flat(self.fun, xs)
            cs = [convert_element_type(c, get_aval(o).dtype) for c, o in zip(cs, outs_p)]
            return materialize(pullback(cs), xs)

        return Problem(vjp_fun, self.leaves + extra,
                       self.in_names + [f"cotangent of {n_}" for n_ in out_names],
                       [f"cotangent of {n_}" for n_ in self.in_names],
                       f"vjp({self.label})")


def tree_paths(treedef: PyTreeDef) -> list[str]:
    """Python-like access paths (``[0]``, ``['w']``, ``.field``) of a pytree's leaves."""
    if treedef.node_type is None:
        return [""]
    children = treedef.children
    node_type, data = treedef.node_type, treedef.node_data
    if issubclass(node_type, dict) and isinstance(data, tuple) and len(data) == len(children):
        keys = [f"[{k!r}]" for k in data]
    elif hasattr(node_type, "_fields"):
        keys = [f".{name}" for name in node_type._fields]
    else:
        keys = [f"[{i}]" for i in range(len(children))]
    return [key + path for key, child in zip(keys, children) for path in tree_paths(child)]


def arg_names(fun: Callable, nargs: int) -> list[str]:
    positional = positional_names(fun)
    return [positional[i] if i < len(positional) else f"args[{i}]" for i in range(nargs)]


def function_name(fun: Callable) -> str:
    name = getattr(fun, "__name__", None) or type(fun).__name__
    return "f" if name == "<lambda>" else name


def as_array(x, like=None):
    """Python scalars become 0-d arrays (on the device of ``like``) so that they can be
    perturbed and batched."""
    if core.is_python_scalar(x) and not isinstance(x, (bool, int)):
        return backend.asarray(x, like=like)
    return x


def is_checkable(x) -> bool:
    try:
        return core.is_inexact(get_aval(x).dtype)
    except TypeError:
        return False


def make_problem(fun: Callable, args: tuple, kwargs: dict, argnums=None,
                 label: str | None = None) -> Problem:
    """``fun`` at ``args`` as a :class:`Problem` (``problem.notes()`` says what was
    skipped); the function is not called until a check needs a value."""
    label = label or function_name(fun)
    args = tuple(args)
    nums = set(range(len(args)) if argnums is None else
               argnums_tuple(argnums, len(args), f"gradcheck of {label}"))
    leaves, treedef = tree_flatten(args)
    like = placement(leaves)
    names = arg_names(fun, len(args))
    try:
        paths = tree_paths(treedef)
    except Exception:  # an exotic registered node: fall back to leaf numbers
        paths = [f"[leaf {i}]" for i in range(len(leaves))]
    arg_of_leaf = []
    for a, sub in enumerate(treedef.children):
        arg_of_leaf += [a] * sub.num_leaves
    leaf_names = [names[a] + p[len(f"[{a}]"):] for a, p in zip(arg_of_leaf, paths)]
    leaves = [as_array(x, like) for x in leaves]
    checked, notes = [], []
    for j, x in enumerate(leaves):
        if arg_of_leaf[j] not in nums:
            continue
        if is_checkable(x):
            checked.append(j)
        else:
            kind = getattr(x, "dtype", type(x).__name__)
            notes.append(f"input {leaf_names[j]} ({getattr(kind, 'name', kind)}) is not "
                         "floating-point: not checked")
    if not checked:
        raise ValueError(f"gradcheck of {label}: no floating-point (or complex) input to check;"
                         " integer and boolean inputs are skipped")
    info = {}

    def of_leaves(*all_leaves):
        return fun(*tree_unflatten(treedef, all_leaves), **kwargs)

    of_checked = partial_over(of_leaves, leaves, checked)

    def flat_fun(*xs):
        out = of_checked(*xs)
        out_leaves, out_tree = tree_flatten(out)
        if "keep" not in info:
            info["keep"] = [k for k, y in enumerate(out_leaves) if is_checkable(y)]
            info["tree"] = out_tree
            info["n"] = len(out_leaves)
        if not info["keep"]:
            raise ValueError(f"gradcheck of {label}: the function has no floating-point (or "
                             "complex) output to differentiate")
        return [as_array(out_leaves[k], like) for k in info["keep"]]

    def out_names():
        names = ["out" + p for p in tree_paths(info["tree"])]
        return [names[k] for k in info["keep"]]

    def out_notes():
        names = ["out" + p for p in tree_paths(info["tree"])]
        return [f"output {names[k]} is not floating-point: not checked"
                for k in range(info["n"]) if k not in info["keep"]]

    xs = [leaves[j] for j in checked]
    problem = Problem(flat_fun, xs, [leaf_names[j] for j in checked], out_names, label)

    def plan_notes():
        ran = problem.plan_ran()
        return [] if ran is None else [f"reverse mode checked through the '{ran}' plan "
                                       f"(asked: '{problem.reverse_plan}')"]

    problem.notes = lambda: notes + out_notes() + plan_notes()
    return problem
