"""User-defined derivative rules: ``custom_jvp`` and ``custom_vjp``.

A decorated function called on tracers is traced to a jaxpr and bound as a primitive that
carries the user's rule:

* ``custom_jvp_call``: its JVP rule calls the user's ``jvp(primals, tangents)``; reverse mode
  transposes whatever linear operations that rule applied to the tangents.
* ``custom_vjp_call``: its JVP rule runs ``fwd`` and emits ``custom_lin``, a linear primitive
  that cannot be evaluated (forward mode of a custom_vjp function is an error, as in JAX)
  but whose transpose rule calls ``bwd(residuals, cotangents)``.

Under ``vmap`` the function and its rules are batched by running them under the batching
interpreter.  Called on concrete values (no transform), the function just runs.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from functrans import array_types, core
from functrans.api_util import argnums_with_names
from functrans.core import Primitive, Tracer, abstract_eval_rules, get_aval, impl_rules
from functrans.interpreters import ad, batching, codegen, tape, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.core import eval_jaxpr
from functrans import jaxpr_transforms
from functrans.jaxpr_transforms import closure_convert, trace_function
from functrans.primitives.conversion import zeros_like
from functrans.primitives.elementwise import add
from functrans.primitives.shape import bdim_to_front, shape_of
from functrans.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "library_custom_jvp", "SymbolicZero", "CustomVJPPrimal",
           "custom_jvp_call_p", "custom_vjp_call_p", "linear_call", "linear_call_p"]


class SymbolicZero:
    """A zero tangent or cotangent that holds no array, only its type: what custom rules
    defined with ``symbolic_zeros=True`` receive for the arguments that are not perturbed
    (a ``custom_jvp`` rule's tangents) or the outputs whose cotangent is zero (a
    ``custom_vjp`` ``bwd``'s).  Rules may also return one.  It has its abstract value's
    ``shape`` and ``dtype`` (``aval``), and no arithmetic: test for it with
    ``isinstance``.

    >>> import numpy as np
    >>> z = SymbolicZero.from_primal_value(np.ones((2, 3), np.float32))
    >>> z, z.shape, z.dtype
    (SymbolicZero, (2, 3), dtype('float32'))
    """

    __slots__ = ("aval",)

    def __init__(self, aval: core.ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return "SymbolicZero"

    def __getattr__(self, name):
        if name == "aval":  # not set yet (while unpickling, say)
            raise AttributeError(name)
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(f"SymbolicZero has no attribute {name!r}") from None

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.aval.shape, dtype=np.int64))

    @staticmethod
    def from_primal_value(val: Any) -> SymbolicZero:
        """The symbolic zero tangent of ``val`` (of ``val``'s tangent type: ``float0`` for
        integers and booleans).

        >>> SymbolicZero.from_primal_value(3).dtype
        dtype([('float0', 'V')])
        """
        return SymbolicZero(core.tangent_aval(get_aval(val)))


class CustomVJPPrimal:
    """An argument of a ``custom_vjp`` ``fwd`` rule defined with ``symbolic_zeros=True``:
    its ``value`` and whether it is ``perturbed`` (differentiated: False when its cotangent
    is not asked for, so ``bwd`` may return None for it).

    >>> CustomVJPPrimal(2.0, True)
    CustomVJPPrimal(value=2.0, perturbed=True)
    """

    __slots__ = ("value", "perturbed")

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value, self.perturbed = value, perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed!r})"

    def __eq__(self, other):
        return (type(other) is CustomVJPPrimal and self.value is other.value
                and self.perturbed == other.perturbed)

    __hash__ = None  # type: ignore[assignment]  # mutable, as JAX's dataclass


def _to_symbolic(t):
    return SymbolicZero(t.aval) if type(t) is Zero else t


def _unbatched(aval: core.ShapedArray) -> core.ShapedArray:
    return aval.update(shape=aval.shape[1:])


def _batch_keeping_zeros(fun: Callable, size: int, values: Sequence):
    """``batching.batch_flat`` of ``fun`` (a flat list in, out) on ``values`` batched along
    axis 0, where symbolic ``Zero`` values (of batched types) stay symbolic: ``fun`` gets
    them as ``Zero``s of one member's type."""
    zero = [type(v) is Zero for v in values]
    live = [v for v, z in zip(values, zero) if not z]

    def flat(*xs):
        it = iter(xs)
        return fun([Zero(_unbatched(v.aval)) if z else next(it) for v, z in zip(values, zero)])
    outs, dims = batching.batch_flat(flat, size, live, [0] * len(live))
    return [bdim_to_front(o, d, size) for o, d in zip(outs, dims)]


class _Rule:
    """A flat-list wrapper of a user rule, printed by name in jaxprs.  Rules with the same
    ``key`` (not None) behave the same and compare equal, so that equations of repeated
    calls have equal parameters (``interpreters/tape.py`` keys tapes by them)."""

    __slots__ = ("fun", "name", "key")

    def __init__(self, fun: Callable, name: str, key: tuple | None = None):
        self.fun = fun
        self.name = name
        self.key = key

    def __call__(self, *args):
        return self.fun(*args)

    def __eq__(self, other):
        if self.key is None:
            return self is other
        return type(other) is _Rule and self.key == other.key

    def __hash__(self):
        return id(self) if self.key is None else hash(self.key)

    def __repr__(self):
        return self.name


def _fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return args
    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


def _nondiff_positions(kind: str, fun, nums: Sequence[int], names: Sequence[str]) -> tuple:
    """``nondiff_argnums`` with the positions of the parameters ``nondiff_argnames`` names
    (calls are resolved to positional arguments before they are split)."""
    return argnums_with_names(fun, nums, names, kind, "nondiff_argnames")


def _split_static(args, nondiff_argnums):
    static = {i: args[i] for i in nondiff_argnums}
    dyn = tuple(a for i, a in enumerate(args) if i not in static)
    return static, dyn


def _merge(static: dict, dyn: Sequence) -> list:
    out, it = [], iter(dyn)
    for i in range(len(static) + len(dyn)):
        out.append(static[i] if i in static else next(it))
    return out


_NOT_RUN = object()


def _run_directly(fun, args, leaves):
    """``fun(*args)`` when no transform can see the call (no tracer among the arguments and
    no staging transform), else ``_NOT_RUN``.  Inside a transform the function runs on
    constants only if its result holds no tracer: one that closes over a tracer is staged
    instead, so that differentiating it through the closure is reported."""
    if any(isinstance(x, Tracer) for x in leaves):
        return _NOT_RUN
    if len(core.trace_stack()) == 1:
        return fun(*args)
    if not isinstance(core.dynamic_trace(), core.EvalTrace):
        return _NOT_RUN
    out = fun(*args)
    if any(isinstance(x, Tracer) for x in tree_flatten(out)[0]):
        return _NOT_RUN
    return out


def _staged_call(rule_holder, args, kwargs):
    """The common start of a custom_jvp / custom_vjp call: ``(result,)`` when the function
    just runs, else ``(name, static, dyn, leaves, in_tree, jaxpr, consts, out_tree)``."""
    fun = rule_holder.fun
    args = _resolve_args(fun, args, kwargs)
    static, dyn = _split_static(args, rule_holder.nondiff_argnums)
    leaves, in_tree = tree_flatten(dyn)
    recording = tape.current_tape()
    if recording is not None and rule_holder.origin != "library" and any(
            isinstance(x, Tracer) for x in leaves):
        # a user's rules must run on every call: such a function is not recorded
        recording.refuse(f"{type(rule_holder).__name__} function '{_fun_name(fun)}'")
    out = _run_directly(fun, args, leaves)
    if out is not _NOT_RUN:
        return (out,)
    name = _fun_name(fun)
    jaxpr, consts, out_tree = _trace_call(fun, static, in_tree, leaves, name)
    return name, static, dyn, leaves, in_tree, jaxpr, consts, out_tree


def _trace_call(fun, static, in_tree, leaves, name):
    def with_static(*dyn):
        return fun(*_merge(static, dyn))

    return trace_function(with_static, in_tree, [get_aval(x) for x in leaves], name, key=fun,
                          static=tuple((i, type(v), v) for i, v in sorted(static.items())),
                          check_output=False)


def _check_matching(kind: str, name: str, got, want, what: str) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        ga, wa = get_aval(g), core.tangent_aval(get_aval(w))
        if ga.shape != wa.shape or (ga.dtype != wa.dtype and not ga.weak_type):
            raise TypeError(f"{kind} rule of '{name}' returned a {what} {i} of type "
                            f"{ga.str_short()}, but the corresponding value has type "
                            f"{get_aval(w).str_short()} (expected {wa.str_short()})")


# ------------------------------------------------------------------------------------------
# custom_jvp
# ------------------------------------------------------------------------------------------

# The library's primitive, whose JVP rule calls the function in its ``jvp`` parameter: a
# tape refuses a user's custom_jvp function where it is called (``_staged_call``), and a
# compiled transposition runs no JVP rule.
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True, origin="library")


class custom_jvp:
    """A function with a user-defined JVP rule, used by every transform at any order.

    Use it as a decorator, then give the rule with :meth:`defjvp` (one rule for all
    arguments) or :meth:`defjvps` (one rule per argument).  Reverse mode, ``vmap`` and
    ``jit`` derive their behaviour from the JVP rule, so one rule serves every transform.

    Parameters
    ----------
    fun : callable
        The function itself, whose value is used as the primal output when no transform
        is active (and whose name and docstring the object takes).
    nondiff_argnums : sequence of int, optional
        Positions of arguments that are not differentiated (Python values such as flags,
        sizes or functions, or arrays treated as constants).  The rule receives them first,
        unchanged, before ``primals`` and ``tangents``; they are not part of those tuples.

    Examples
    --------
    >>> import functrans as ft, functrans.numpy as fnp
    >>> @ft.custom_jvp
    ... def log1pexp(x):
    ...     return fnp.log(1.0 + fnp.exp(x))
    ...
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + fnp.exp(x)))
    ...
    >>> float(ft.grad(log1pexp)(100.0))
    1.0
    """

    #: whose code the function and its rules are (``Primitive.origin``): a user's rules
    #: run as written on every call, so reverse mode does not record them on a tape
    origin = "user"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions("custom_jvp", fun, nondiff_argnums,
                                                  nondiff_argnames)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)``.

        Returns ``jvp`` unchanged, so it can be used as a decorator (``@f.defjvp``).

        Parameters
        ----------
        jvp : callable
            The rule.  It receives the non-differentiated arguments (``nondiff_argnums``)
            first, then ``primals``, a tuple of the differentiated arguments, and
            ``tangents``, a tuple of their tangents (same structures, shapes and dtypes).
            It returns ``(out, tangent_out)``: the function's value and its directional
            derivative, ``tangent_out`` with ``out``'s structure.  The rule must be
            linear in ``tangents`` and may itself use any functrans operation (it is
            differentiated again for higher orders).
        symbolic_zeros : bool, optional
            If True, the tangent of an argument that is not perturbed (not differentiated
            by the enclosing transform) is a :class:`SymbolicZero` instead of an array of
            zeros, so the rule can skip its work, and the rule may return a
            ``SymbolicZero`` as an output tangent.  Under ``vmap`` of the rule's transform
            the zero tangents stay symbolic too.

        Examples
        --------
        >>> import functrans as ft, functrans.numpy as fnp
        >>> @ft.custom_jvp
        ... def f(x, y):
        ...     return x * y
        ...
        >>> @f.defjvp
        ... def f_jvp(primals, tangents):
        ...     (x, y), (tx, ty) = primals, tangents
        ...     return f(x, y), tx * y + x * ty
        ...
        >>> ft.grad(f, argnums=(0, 1))(2.0, 3.0)
        (3.0, 2.0)
        """
        self.jvp, self.symbolic_zeros = jvp, bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set one rule per argument, ``jvp_i(t_i, out, *primals) -> tangent contribution``
        (``None``: zero); the contributions are summed.

        Parameters
        ----------
        *jvps : callable or None
            One entry per differentiated argument, in order.  Entry ``i`` receives that
            argument's tangent ``t_i``, the primal output ``out`` and all differentiated
            arguments, and returns its contribution to the output tangent (linear in
            ``t_i``, with ``out``'s structure); None means the output does not depend on
            that argument.

        Examples
        --------
        >>> import functrans as ft, functrans.numpy as fnp
        >>> @ft.custom_jvp
        ... def f(x, y):
        ...     return fnp.sin(x) * y
        ...
        >>> f.defjvps(lambda tx, out, x, y: fnp.cos(x) * y * tx,
        ...           lambda ty, out, x, y: fnp.sin(x) * ty)
        >>> float(ft.grad(f, argnums=1)(0.0, 2.0))
        0.0
        """
        def jvp(*args):
            *static, primals, tangents = args
            out = self(*static, *primals)
            total = None
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                term = rule(t, out, *primals)
                total = term if total is None else _tree_add(total, term)
            if total is None:
                total = tree_map(zeros_like, out)
            return out, total
        self.defjvp(jvp)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"custom_jvp function '{name}' has no JVP rule: define one "
                                 f"with @{name}.defjvp or .defjvps before calling it")
        concrete = self._jvp_of_concrete(args, kwargs)
        if concrete is not _NOT_RUN:
            return concrete
        staged = _staged_call(self, args, kwargs)
        if len(staged) == 1:
            return staged[0]
        name, static, dyn, leaves, in_tree, jaxpr, consts, out_tree = staged
        user_jvp, nondiff = self.jvp, [static[i] for i in sorted(static)]
        users, symbolic = self.origin != "library", self.symbolic_zeros

        def flat_jvp(primals, tangents):  # tangents: arrays and symbolic Zeros
            tangents = [_to_symbolic(t) if symbolic else ad.instantiate(t, p)
                        for t, p in zip(tangents, primals)]
            if users:  # the user's arrays, with `.at`, as in their own calls
                primals = array_types.hand_out(list(primals))
                tangents = array_types.hand_out(list(tangents))
            p = tree_unflatten(in_tree, primals)
            t = tree_unflatten(in_tree, tangents)
            if users:
                with core.running_user_code():
                    pair = user_jvp(*nondiff, tuple(p), tuple(t))
            else:
                pair = user_jvp(*nondiff, tuple(p), tuple(t))
            out, t_out = _jvp_pair(name, pair)
            out_leaves, tree = tree_flatten(out)
            t_leaves, t_tree = tree_flatten(t_out)
            if tree == out_tree == t_tree:
                t_leaves = _instantiate_symbolic(t_leaves, out_leaves)
            if tree != out_tree or t_tree != out_tree:
                raise TypeError(f"custom_jvp rule of '{name}' must return (primal_out, "
                                f"tangent_out) with the function's output structure "
                                f"{out_tree}; got {tree} and {t_tree}")
            for i, (o, aval) in enumerate(zip(out_leaves, jaxpr.out_avals)):
                if get_aval(o).shape != aval.shape:
                    raise TypeError(f"custom_jvp rule of '{name}' returned a primal output {i} "
                                    f"of shape {get_aval(o).shape}, but the function returns "
                                    f"shape {aval.shape}")
            _check_matching("custom_jvp", name, t_leaves, out_leaves, "tangent")
            return out_leaves, t_leaves

        # The traced jaxpr is cached by the function, its static arguments and the types
        # of the others (trace_function): the same jaxpr and rule make the same flat_jvp.
        rule = _Rule(flat_jvp, f"{name}_jvp", key=("custom_jvp", user_jvp, symbolic, jaxpr))
        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr, jvp=rule,
                                      num_consts=len(consts))
        return tree_unflatten(out_tree, outs)

    def _jvp_of_concrete(self, args, kwargs):
        """Under jvp/grad with concrete primals, run the rule on them directly, as JAX does,
        so Python control flow on values works in the function and the rule; else
        ``_NOT_RUN`` (the call is traced to a jaxpr and staged)."""
        args = _resolve_args(self.fun, args, kwargs)
        static, dyn = _split_static(args, self.nondiff_argnums)
        leaves, in_tree = tree_flatten(dyn)
        if not any(isinstance(x, Tracer) for x in leaves):
            return _NOT_RUN
        trace = core.find_top_trace(leaves)
        if not isinstance(trace, ad.JVPTrace) or not all(map(_concrete_primal, leaves)):
            return _NOT_RUN
        name = _fun_name(self.fun)
        primals, tangents = zip(*[trace.unpack(x) for x in leaves])
        tangents = [_to_symbolic(t) if self.symbolic_zeros else ad.instantiate(t, p)
                    for t, p in zip(tangents, primals)]
        if self.origin != "library":  # the user's arrays, with `.at`, as in their own calls
            primals = array_types.hand_out(list(primals))
            tangents = array_types.hand_out(tangents)
        out, t_out = _jvp_pair(name, self.jvp(*[static[i] for i in sorted(static)],
                                               tuple(tree_unflatten(in_tree, primals)),
                                               tuple(tree_unflatten(in_tree, tangents))))
        out_leaves, out_tree = tree_flatten(out)
        t_leaves, t_tree = tree_flatten(t_out)
        if t_tree != out_tree:
            raise TypeError(f"custom_jvp rule of '{name}' must return (primal_out, "
                            f"tangent_out) of the same structure; got {out_tree} and {t_tree}")
        t_leaves = _instantiate_symbolic(t_leaves, out_leaves)
        for x in out_leaves + t_leaves:
            if isinstance(x, Tracer) and x._trace is trace:
                raise _closed_over_error("custom_jvp")
        for i, (o, t) in enumerate(zip(out_leaves, t_leaves)):
            oa, ta = get_aval(o), get_aval(t)
            if oa.shape != ta.shape:
                raise TypeError(f"custom_jvp rule of '{name}' returned a tangent {i} of type "
                                f"{ta.str_short()} for a primal output of type "
                                f"{oa.str_short()} (primal shape {oa.shape}, tangent shape "
                                f"{ta.shape}); they must have the same shape")
        _check_matching("custom_jvp", name, t_leaves, out_leaves, "tangent")
        outs = [trace.pack(p, t) for p, t in zip(out_leaves, t_leaves)]
        return tree_unflatten(out_tree, outs if trace.counter.internal
                              else core.handed_to_caller(outs))


def _concrete_primal(x) -> bool:
    """Whether ``x`` has a concrete value under the JVP tracers around it."""
    while isinstance(x, ad.JVPTracer):
        x = x.primal
    return not isinstance(x, Tracer)


def _jvp_pair(name: str, result) -> tuple:
    """The (primal_out, tangent_out) pair a custom_jvp rule returned, or a TypeError."""
    if not (type(result) in (tuple, list) and len(result) == 2):
        got = (f"a {type(result).__name__} of length {len(result)}"
               if type(result) in (tuple, list) else f"a {type(result).__name__}")
        raise TypeError(f"custom_jvp rule of '{name}' must return a pair (primal_out, "
                        f"tangent_out), got {got}")
    return result


def _instantiate_symbolic(tangents: list, primals: list) -> list:
    """Output tangents with each ``SymbolicZero`` made an array of zeros (on the device of
    the primal output it belongs to)."""
    return [ad.instantiate(Zero(t.aval), p) if type(t) is SymbolicZero else t
            for t, p in zip(tangents, primals)]


def _tree_add(a, b):
    return tree_map(add, a, b)


def _closed_over_error(kind: str) -> TypeError:
    return TypeError(f"A {kind} function closes over a value that is being differentiated; its "
                     "rule cannot see that dependence. Pass the value as an explicit argument.")


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error("custom_jvp")
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    return jvp(list(args), list(arg_tangents))  # the rule instantiates what it needs


def _custom_jvp_call_batch(vals, dims, *, call_jaxpr, jvp, num_consts):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    batched, new_consts = closure_convert(jaxpr_transforms.batch_jaxpr(call_jaxpr, size,
                                                               [0] * len(vals))[0])
    n = len(vals) - num_consts

    def batched_jvp(primals, tangents):
        def flat(xs):
            outs, t_outs = jvp(list(xs[:n]), list(xs[n:]))
            return list(outs) + list(t_outs)
        outs = _batch_keeping_zeros(flat, size, list(primals) + list(tangents))
        half = len(outs) // 2
        return outs[:half], outs[half:]

    outs = custom_jvp_call_p.bind(*new_consts, *vals, call_jaxpr=batched,
                                  jvp=_Rule(batched_jvp, f"batched_{jvp!r}"),
                                  num_consts=len(new_consts) + num_consts)
    return outs, [0] * len(outs)


impl_rules[custom_jvp_call_p] = lambda *args, call_jaxpr, jvp, num_consts: eval_jaxpr(
    call_jaxpr.jaxpr, [], *args)
abstract_eval_rules[custom_jvp_call_p] = lambda *avals, call_jaxpr, jvp, num_consts: list(
    call_jaxpr.out_avals)
ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch
# jit evaluates it as its function's jaxpr (the rule only matters to differentiation, which
# happened before the program was staged): inlined, its equations fuse with their neighbours
codegen.deflowering(custom_jvp_call_p, inline=lambda call_jaxpr, jvp, num_consts: call_jaxpr)

class library_custom_jvp(custom_jvp):
    """A ``custom_jvp`` function of the library's own (``nn.relu``, ``scipy.special.xlogy``):
    its function and rule are pure library code, so reverse mode may record it on a tape
    and compile its derivative."""

    origin = "library"


# ------------------------------------------------------------------------------------------
# custom_vjp
# ------------------------------------------------------------------------------------------

custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True, origin="user")
custom_lin_p = Primitive("custom_lin", multiple_results=True, origin="user")


class custom_vjp:
    """A function with a user-defined reverse-mode rule ``fwd`` / ``bwd``.

    Use it as a decorator, then give the rule with :meth:`defvjp`:
    ``fwd(*args) -> (out, residuals)`` (residuals: any pytree);
    ``bwd(*nondiff_args, residuals, out_cotangent) -> tuple of input cotangents`` (one per
    differentiable argument; ``None`` for a zero cotangent).  Forward mode (jvp) of such a
    function is an error (``gradcheck`` then checks reverse mode only and says so).

    Parameters
    ----------
    fun : callable
        The function itself, evaluated when no reverse-mode transform is active (and whose
        name and docstring the object takes).
    nondiff_argnums : sequence of int, optional
        Positions of arguments that are not differentiated (Python values, functions or
        constant arrays).  ``bwd`` receives them first and returns no cotangent for them.

    Examples
    --------
    >>> import functrans as ft, functrans.numpy as fnp
    >>> @ft.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    ...
    >>> clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (fnp.clip(g, -1.0, 1.0),))
    >>> float(ft.grad(lambda x: 5.0 * clip_gradient(x))(2.0))
    1.0
    """

    origin = "user"  # as custom_jvp's

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
                 nondiff_argnames: Sequence[str] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions("custom_vjp", fun, nondiff_argnums,
                                                  nondiff_argnames)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
               optimize_remat: bool = False) -> None:
        """Set the reverse-mode rule: ``fwd`` computes the output and what ``bwd`` needs,
        ``bwd`` pulls an output cotangent back to the inputs.

        Parameters
        ----------
        fwd : callable
            Called with the function's arguments (all of them, as the function is);
            returns ``(out, residuals)``: the output and any pytree of values ``bwd``
            needs (inputs, intermediates; None when nothing).
        bwd : callable
            Called as ``bwd(*nondiff_args, residuals, out_cotangent)`` (``out_cotangent``
            with ``out``'s structure); returns a tuple with one cotangent per
            differentiated argument, each with that argument's structure, shapes and dtypes
            (None or a :class:`SymbolicZero` for a zero cotangent).
        symbolic_zeros : bool, optional
            If True, ``fwd`` receives each array argument as a :class:`CustomVJPPrimal`
            (its ``value``, and ``perturbed``: whether it is differentiated; the
            non-differentiated arguments of ``nondiff_argnums`` come as they are), and
            ``bwd`` receives a :class:`SymbolicZero` for each output whose cotangent is
            zero (an output the differentiated result does not use).
        optimize_remat : bool, optional
            JAX's option to keep ``fwd`` out of rematerialized (``checkpoint``) code; it
            changes no value, and functrans accepts and ignores it.

        Examples
        --------
        >>> import functrans as ft, functrans.numpy as fnp
        >>> @ft.custom_vjp
        ... def f(x):
        ...     return fnp.sin(x)
        ...
        >>> def f_fwd(x):
        ...     return fnp.sin(x), fnp.cos(x)   # the residual: cos(x)
        ...
        >>> def f_bwd(cos_x, g):
        ...     return (cos_x * g,)
        ...
        >>> f.defvjp(f_fwd, f_bwd)
        >>> float(ft.grad(f)(0.0))
        1.0
        """
        del optimize_remat
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, bool(symbolic_zeros)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.fwd is None:
            raise AttributeError(f"custom_vjp function '{name}' has no rule: define one with "
                                 f"{name}.defvjp(fwd, bwd) before calling it")
        staged = _staged_call(self, args, kwargs)
        if len(staged) == 1:
            return staged[0]
        name, static, dyn, leaves, in_tree, jaxpr, consts, out_tree = staged
        user_fwd, user_bwd, symbolic = self.fwd, self.bwd, self.symbolic_zeros
        nondiff = [static[i] for i in sorted(static)]
        in_avals = [get_aval(x) for x in leaves]
        # Only types and structures of the arguments: bwd must not keep their tracers alive.
        arg_trees = [tree_flatten(arg)[1] for arg in dyn]
        res_tree: dict[str, Any] = {}

        def flat_fwd(perturbed, *xs):  # perturbed: per leaf of xs, whether it has a tangent
            if symbolic:
                xs = [CustomVJPPrimal(x, p) for x, p in zip(xs, perturbed)]
            result = user_fwd(*_merge(static, tree_unflatten(in_tree, xs)))
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(f"custom_vjp fwd of '{name}' must return a pair "
                                "(output, residuals)")
            out, res = result
            out_leaves, tree = tree_flatten(out)
            if tree != out_tree:
                raise TypeError(f"custom_vjp fwd of '{name}' returned an output of structure "
                                f"{tree}, but the function returns {out_tree}")
            res_leaves, res_tree["tree"] = tree_flatten(res)
            return out_leaves, res_leaves

        def flat_bwd(res, cts):  # cts: arrays and symbolic Zeros
            witness = ad.device_witness([*cts, *res])
            cts = [(SymbolicZero(c.aval) if symbolic else ad.zeros(c.aval, witness))
                   if type(c) is Zero else c for c in cts]
            cts = array_types.hand_out(cts)  # the user's arrays, as in their own calls
            cts_in = user_bwd(*nondiff, tree_unflatten(res_tree["tree"], res),
                              tree_unflatten(out_tree, cts))
            if not isinstance(cts_in, (tuple, list)) or len(cts_in) != len(arg_trees):
                raise TypeError(f"custom_vjp bwd of '{name}' must return a tuple with one "
                                f"cotangent per differentiable argument ({len(arg_trees)}), got "
                                f"{type(cts_in).__name__}"
                                + (f" of length {len(cts_in)}" if isinstance(
                                    cts_in, (tuple, list)) else ""))
            flat, avals = [], iter(in_avals)
            for arg_tree, ct in zip(arg_trees, cts_in):
                arg_avals = [next(avals) for _ in range(arg_tree.num_leaves)]
                if ct is None or type(ct) is SymbolicZero and arg_tree.num_leaves == 1:
                    flat.extend(Zero(core.tangent_aval(a)) for a in arg_avals)
                    continue
                ct_leaves, ct_tree = tree_flatten(
                    ct, is_leaf=lambda x: x is None or type(x) is SymbolicZero)
                if ct_tree != arg_tree:
                    raise TypeError(f"custom_vjp bwd of '{name}' returned a cotangent of "
                                    f"structure {ct_tree} for an argument of structure "
                                    f"{arg_tree}")
                flat.extend(Zero(core.tangent_aval(a)) if c is None or type(c) is SymbolicZero
                            else c for a, c in zip(arg_avals, ct_leaves))
            for i, (c, aval) in enumerate(zip(flat, in_avals)):
                if type(c) is Zero:
                    continue
                ca = get_aval(c)
                want = core.tangent_aval(aval)
                if ca.shape != want.shape or (ca.dtype != want.dtype and not ca.weak_type):
                    raise TypeError(f"custom_vjp bwd of '{name}' returned a cotangent of type "
                                    f"{ca.str_short()} for input leaf {i} of type "
                                    f"{aval.str_short()} (expected {want.str_short()})")
            return flat

        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=jaxpr,
                                      fwd=_Rule(flat_fwd, f"{name}_fwd"),
                                      bwd=_Rule(flat_bwd, f"{name}_bwd"),
                                      num_consts=len(consts))
        return tree_unflatten(out_tree, outs)


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error("custom_vjp")
    args, arg_tangents = primals[num_consts:], tangents[num_consts:]
    outs, res = fwd(tuple(type(t) is not Zero for t in arg_tangents), *args)
    out_avals = tuple(core.tangent_aval(get_aval(o)) for o in outs)
    live = [ad.instantiate(t, a) for t, a in zip(arg_tangents, args)]
    t_outs = custom_lin_p.bind(*res, *live, num_res=len(res), bwd=bwd, out_avals=out_avals)
    return outs, t_outs


def _custom_vjp_call_batch(vals, dims, *, call_jaxpr, fwd, bwd, num_consts):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    batched, new_consts = closure_convert(jaxpr_transforms.batch_jaxpr(call_jaxpr, size,
                                                               [0] * len(vals))[0])
    n_args = len(vals) - num_consts

    def batched_fwd(perturbed, *xs):
        found = {}

        def flat(*a):
            outs, res = fwd(perturbed, *a)
            found["n_out"] = len(outs)
            return list(outs) + list(res)
        outs, out_dims = batching.batch_flat(flat, size, list(xs), [0] * n_args)
        outs = [bdim_to_front(o, d, size) for o, d in zip(outs, out_dims)]
        return outs[:found["n_out"]], outs[found["n_out"]:]

    outs = custom_vjp_call_p.bind(*new_consts, *vals, call_jaxpr=batched,
                                  fwd=_Rule(batched_fwd, f"batched_{fwd!r}"),
                                  bwd=_batched_bwd(bwd, size),
                                  num_consts=len(new_consts) + num_consts)
    return outs, [0] * len(outs)


def _batched_bwd(bwd: _Rule, size: int) -> _Rule:
    """``bwd`` applied to residuals and cotangents batched along axis 0."""
    def batched(res, cts):
        found = {}

        def flat(a):
            outs = bwd(list(a[:len(res)]), list(a[len(res):]))
            found["zero"] = [type(o) is Zero for o in outs]
            found["avals"] = [o.aval if type(o) is Zero else None for o in outs]
            return [o for o in outs if type(o) is not Zero]
        it = iter(_batch_keeping_zeros(flat, size, list(res) + list(cts)))
        return [Zero(core.ShapedArray((size,) + a.shape, a.dtype)) if z else next(it)
                for z, a in zip(found["zero"], found["avals"])]
    return _Rule(batched, f"batched_{bwd!r}")


def _forward_mode_error(name: str = ""):
    which = f"custom_vjp function '{name}'" if name else "custom_vjp function"
    return TypeError("Forward-mode differentiation (jvp, jacfwd, linearize's jvp function) of a "
                     f"{which} is not supported: it only defines a reverse-mode "
                     "rule. Use reverse mode (grad, vjp, jacrev), or define the function with "
                     "custom_jvp, whose rule serves both modes.")


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals):
    res = args[:num_res]
    with core.running_user_code():  # the user's arrays, with `.at`, as in their own calls
        out = bwd(array_types.hand_out(list(res)), list(cts))  # bwd hands out the cotangents
    return [None] * num_res + list(out)


def _custom_lin_batch(vals, dims, *, num_res, bwd, out_avals):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    avals = tuple(core.ShapedArray((size,) + a.shape, a.dtype, a.weak_type) for a in out_avals)
    outs = custom_lin_p.bind(*vals, num_res=num_res, bwd=_batched_bwd(bwd, size),
                             out_avals=avals)
    return outs, [0] * len(outs)


def _raise_forward_mode(*args, bwd, **params):
    name = bwd.name  # "<function>_bwd", prefixed by "batched_" once per vmap
    while name.startswith("batched_"):
        name = name[len("batched_"):]
    raise _forward_mode_error(name.removesuffix("_bwd"))


impl_rules[custom_vjp_call_p] = lambda *args, call_jaxpr, fwd, bwd, num_consts: eval_jaxpr(
    call_jaxpr.jaxpr, [], *args)
abstract_eval_rules[custom_vjp_call_p] = lambda *avals, call_jaxpr, fwd, bwd, num_consts: list(
    call_jaxpr.out_avals)
ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
batching.batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch

impl_rules[custom_lin_p] = _raise_forward_mode
abstract_eval_rules[custom_lin_p] = lambda *avals, num_res, bwd, out_avals: list(out_avals)
ad.jvp_rules[custom_lin_p] = _raise_forward_mode
transpose.deftranspose(custom_lin_p, _custom_lin_transpose)
batching.batching_rules[custom_lin_p] = _custom_lin_batch


# ------------------------------------------------------------------------------------------
# linear_call
# ------------------------------------------------------------------------------------------

# ``linear_call(*consts, *residuals, *linear, callee, transpose, num_consts, num_res)``:
# ``callee`` computes the result from all the arguments, linearly in ``linear``; ``transpose``
# takes the same constants and residuals and the result's cotangents, and gives the
# cotangents of ``linear``.  Transposing swaps the two jaxprs.
linear_call_p = Primitive("linear_call", multiple_results=True, origin="user")


def _linear_call_impl(*args, callee, transpose, num_consts, num_res):
    return eval_jaxpr(callee.jaxpr, [], *args)


def _linear_call_jvp(primals, tangents, *, callee, transpose, num_consts, num_res):
    fixed = num_consts + num_res
    if any(type(t) is not Zero for t in tangents[:fixed]):
        raise TypeError("linear_call: its residual_args (and the values its functions close "
                        "over) must not be differentiated: the call is linear in linear_args "
                        "only. Pass differentiated values among linear_args, or stop their "
                        "gradient (lax.stop_gradient)")
    params = dict(callee=callee, transpose=transpose, num_consts=num_consts, num_res=num_res)
    outs = linear_call_p.bind(*primals, **params)
    lin_tangents = tangents[fixed:]
    if all(type(t) is Zero for t in lin_tangents):
        return outs, [Zero.from_value(o) for o in outs]
    live = [ad.instantiate(t, p) for t, p in zip(lin_tangents, primals[fixed:])]
    return outs, linear_call_p.bind(*primals[:fixed], *live, **params)


def _linear_call_transpose(cts, *args, callee, transpose, num_consts, num_res):
    fixed = num_consts + num_res
    witness = ad.device_witness([*cts, *args[:fixed]])
    cts = [ad.zeros(ct.aval, witness) if type(ct) is Zero else ct for ct in cts]
    outs = linear_call_p.bind(*args[:fixed], *cts, callee=transpose, transpose=callee,
                              num_consts=num_consts, num_res=num_res)
    return [None] * fixed + list(outs)


def _linear_call_batch(vals, dims, *, callee, transpose, num_consts, num_res):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [bdim_to_front(v, d, size) for v, d in zip(vals, dims)]
    fixed = num_consts + num_res
    batched_callee, callee_consts = closure_convert(
        jaxpr_transforms.batch_jaxpr(callee, size, [0] * len(vals))[0])
    n_cts = len(transpose.jaxpr.invars) - fixed
    batched_transpose, transpose_consts = closure_convert(
        jaxpr_transforms.batch_jaxpr(transpose, size, [0] * (fixed + n_cts))[0])
    if callee_consts or transpose_consts:  # both jaxprs must take the same constants
        raise NotImplementedError("vmap of linear_call: batching its functions produced "
                                  "constants; call it on arrays rather than closing over them")
    outs = linear_call_p.bind(*vals, callee=batched_callee, transpose=batched_transpose,
                              num_consts=num_consts, num_res=num_res)
    return outs, [0] * len(outs)


impl_rules[linear_call_p] = _linear_call_impl
abstract_eval_rules[linear_call_p] = lambda *avals, callee, transpose, num_consts, num_res: list(
    callee.out_avals)
ad.jvp_rules[linear_call_p] = _linear_call_jvp
transpose.deftranspose(linear_call_p, _linear_call_transpose)
batching.batching_rules[linear_call_p] = _linear_call_batch
codegen.deflowering(linear_call_p,
                    inline=lambda callee, transpose, num_consts, num_res: callee)


def linear_call(fun: Callable, fun_transpose: Callable, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, a function linear in ``linear_args``, whose
    transpose is ``fun_transpose(residual_args, cotangents_of_the_result)`` (returning
    cotangents with ``linear_args``' structure): ``grad``, ``vjp`` and
    ``linear_transpose`` use it instead of transposing ``fun``'s operations.  ``jvp``
    applies ``fun`` to the tangents of ``linear_args``; differentiating ``residual_args``
    raises.  Both functions are traced once per call (on the arguments' types).

    >>> import functrans as ft
    >>> from functrans.custom_derivatives import linear_call
    >>> def divide(x, y):
    ...     return linear_call(lambda r, x: x / r, lambda r, ct: ct / r, y, x)
    ...
    >>> ft.grad(divide)(1.0, 4.0)
    0.25
    """
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    in_tree = tree_flatten((residual_args, linear_args))[1]
    name = _fun_name(fun)
    callee, callee_consts, out_tree = trace_function(
        lambda r, x: fun(r, x), in_tree, [get_aval(x) for x in res_leaves + lin_leaves],
        f"linear_call({name})", key=None)
    out_avals = [core.tangent_aval(a) for a in callee.out_avals]
    ct_tree = tree_flatten((residual_args, tree_unflatten(out_tree, out_avals)))[1]
    transpose_, transpose_consts, lin_out_tree = trace_function(
        lambda r, ct: fun_transpose(r, ct), ct_tree,
        [get_aval(x) for x in res_leaves] + out_avals, f"linear_call({name}) transpose",
        key=None)
    if lin_out_tree != lin_tree:
        raise TypeError(f"linear_call: fun_transpose must return cotangents with the structure "
                        f"of linear_args, {lin_tree}; got {lin_out_tree}")
    for i, (got, x) in enumerate(zip(transpose_.out_avals, lin_leaves)):
        want = core.tangent_aval(get_aval(x))
        if got.shape != want.shape or got.dtype != want.dtype and not got.weak_type:
            raise TypeError(f"linear_call: fun_transpose returned a cotangent of type "
                            f"{got.str_short()} for linear argument leaf {i} of type "
                            f"{get_aval(x).str_short()} (expected {want.str_short()})")
    n_cc, n_tc = len(callee_consts), len(transpose_consts)
    # Both jaxprs take every constant (each ignores the other's), then the residuals.
    all_avals = [get_aval(c) for c in callee_consts + transpose_consts]
    res_avals = [get_aval(x) for x in res_leaves]
    lin_avals = [get_aval(x) for x in lin_leaves]
    callee_full = _taking_all_constants(callee, n_cc, n_tc, all_avals, res_avals + lin_avals,
                                        first=True)
    transpose_full = _taking_all_constants(transpose_, n_cc, n_tc, all_avals,
                                           res_avals + out_avals, first=False)
    outs = linear_call_p.bind(*callee_consts, *transpose_consts, *res_leaves, *lin_leaves,
                              callee=callee_full, transpose=transpose_full,
                              num_consts=n_cc + n_tc, num_res=len(res_leaves))
    return tree_unflatten(out_tree, outs)


def _taking_all_constants(closed, n_cc: int, n_tc: int, const_avals, arg_avals, first: bool):
    """``closed`` (taking its own constants, then its arguments) as a jaxpr taking the
    constants of both functions of a ``linear_call`` (the callee's first), then its
    arguments."""
    def run(*xs):
        consts, args = xs[:n_cc + n_tc], xs[n_cc + n_tc:]
        own = consts[:n_cc] if first else consts[n_cc:]
        return eval_jaxpr(closed.jaxpr, [], *own, *args)
    avals = list(const_avals) + list(arg_avals)
    jaxpr, consts, _ = trace_function(run, tree_flatten(tuple(range(len(avals))))[1], avals,
                                      "linear_call", key=None)
    assert not consts
    return jaxpr
