"""``functrans.custom_derivatives``: user-defined derivatives, as JAX's
``jax.custom_derivatives`` module offers them (``custom_jvp``, ``custom_vjp``,
``custom_gradient``, ``closure_convert``; for rules defined with ``symbolic_zeros=True``,
``SymbolicZero``, ``CustomVJPPrimal``, ``custom_vjp_primal_tree_values`` and
``zero_from_primal``; ``linear_call``, a linear function with its own transpose; the
primitives ``custom_jvp_call_p`` and ``custom_vjp_call_p``).

>>> import functrans as ft
>>> from functrans.custom_derivatives import custom_gradient
>>> @custom_gradient
... def clipped_square(x):
...     return x * x, lambda g: (g * 0.5,)
...
>>> ft.grad(clipped_square)(3.0)
0.5
"""
from __future__ import annotations

from typing import Any, Callable

from functrans.core import Tracer, eval_jaxpr, get_aval, is_inexact, tangent_aval
from functrans.interpreters import ad
from functrans.interpreters.ad import Zero
from functrans.jaxpr_transforms import trace_function
from functrans.primitives.custom_derivatives import (CustomVJPPrimal, SymbolicZero, custom_jvp,
                                                     custom_jvp_call_p, custom_vjp,
                                                     custom_vjp_call_p, linear_call)
from functrans.tree_util import (register_pytree_node, tree_flatten, tree_map, tree_unflatten,
                                 treedef_is_leaf)

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_vjp", "SymbolicZero",
           "CustomVJPPrimal", "custom_vjp_primal_tree_values", "zero_from_primal",
           "custom_jvp_call_p", "custom_vjp_call_p", "linear_call"]


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """The zero tangent of each leaf of the pytree ``val``: a :class:`SymbolicZero` if
    ``symbolic_zeros``, else an array of zeros of the leaf's tangent type (``float0`` for
    integers and booleans), where the leaf is.

    >>> import numpy as np, functrans as ft
    >>> from functrans.custom_derivatives import zero_from_primal
    >>> zeros = zero_from_primal({"w": np.ones(2), "n": 3})
    >>> zeros["w"], zeros["n"].dtype == ft.float0
    (array([0., 0.]), True)
    >>> zero_from_primal(np.ones(2), symbolic_zeros=True)
    SymbolicZero
    """
    def zero(x):
        aval = tangent_aval(get_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else ad.zeros(aval, x)
    return tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The pytree of a ``custom_vjp`` ``fwd`` rule's argument (defined with
    ``symbolic_zeros=True``) with each :class:`CustomVJPPrimal` leaf replaced by its
    ``value``: the argument as the function itself receives it.

    >>> from functrans.custom_derivatives import CustomVJPPrimal, custom_vjp_primal_tree_values
    >>> custom_vjp_primal_tree_values({"a": CustomVJPPrimal(1.0, True)})
    {'a': 1.0}
    """
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"custom_vjp_primal_tree_values: expected a pytree of "
                            f"CustomVJPPrimal leaves (a symbolic_zeros fwd rule's arguments), "
                            f"got a leaf of type {type(leaf).__name__}")
        return leaf.value
    return tree_map(value, tree, is_leaf=lambda x: type(x) is CustomVJPPrimal)


def closure_convert(fun: Callable, *example_args: Any) -> tuple[Callable, list]:
    """``fun`` with the values it closes over that an enclosing transform differentiates
    (inexact tracers) made explicit: returns ``(converted, consts)``, where
    ``converted(*args, *consts)`` computes ``fun(*args)``.  Traced once, on the types of
    ``example_args``.  Used to pass closures to ``custom_vjp`` functions, whose arguments
    must carry every differentiated value.

    >>> import numpy as np, functrans as ft
    >>> def outer(w):
    ...     converted, consts = ft.closure_convert(lambda x: x * w, 1.0)
    ...     return converted(2.0, *consts), len(consts)
    ...
    >>> outer(3.0)
    (6.0, 0)
    >>> ft.grad(lambda w: outer(w)[0])(3.0)
    2.0
    """
    leaves, in_tree = tree_flatten(example_args)
    jaxpr, consts, out_tree = trace_function(fun, in_tree, [get_aval(x) for x in leaves],
                                             "closure_convert")
    hoisted = [isinstance(c, Tracer) and is_inexact(get_aval(c).dtype) for c in consts]
    kept = [None if h else c for c, h in zip(consts, hoisted)]
    n_hoisted = sum(hoisted)

    def converted(*args_and_consts):
        n_args = len(args_and_consts) - n_hoisted
        args, extra = args_and_consts[:n_args], iter(args_and_consts[n_args:])
        arg_leaves, tree = tree_flatten(args)
        if tree != in_tree:
            raise TypeError(f"closure_convert: the converted function was traced for "
                            f"arguments of structure {in_tree}, got {tree}")
        all_consts = [next(extra) if h else c for c, h in zip(kept, hoisted)]
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *all_consts, *arg_leaves)
        return tree_unflatten(out_tree, outs)

    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, [c for c, h in zip(consts, hoisted) if h]


class _GradientRule:
    """The residuals of ``custom_gradient``: the arrays its rule closes over (the pytree's
    leaves) and the rule traced to a jaxpr (static, in the tree structure)."""

    def __init__(self, consts, jaxpr, ct_tree, out_tree):
        self.consts, self.jaxpr, self.ct_tree, self.out_tree = consts, jaxpr, ct_tree, out_tree


register_pytree_node(_GradientRule,
                     lambda r: (list(r.consts), (r.jaxpr, r.ct_tree, r.out_tree)),
                     lambda aux, consts: _GradientRule(list(consts), *aux))


def custom_gradient(fun: Callable) -> Callable:
    """A function with its gradient given by ``fun`` itself: ``fun(*args)`` returns
    ``(value, vjp)``, where ``vjp(cotangent_of_value)`` returns the cotangents of the
    arguments (a tuple, one per argument; a single value for one argument).  Reverse mode
    only, as ``custom_vjp``.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> @ft.custom_gradient
    ... def log1pexp(x):
    ...     e = fnp.exp(x)
    ...     return fnp.log1p(e), lambda g: (g * (1.0 - 1.0 / (1.0 + e)),)
    ...
    >>> round(float(ft.grad(log1pexp)(100.0)), 6)
    1.0
    """
    name = getattr(fun, "__name__", "custom_gradient")

    def value_only(*args):
        return _value_and_rule(name, fun(*args))[0]

    value_only.__name__ = name
    wrapped = custom_vjp(value_only)

    def fwd(*args):
        value, rule = _value_and_rule(name, fun(*args))
        out_leaves, out_tree = tree_flatten(value)
        ct_avals = [tangent_aval(get_aval(x)) for x in out_leaves]
        jaxpr, consts, ct_tree = trace_function(
            lambda ct: rule(ct), tree_flatten((value,))[1], ct_avals,
            f"custom_gradient({name})", key=None)
        return value, _GradientRule(consts, jaxpr, ct_tree, out_tree)

    def bwd(res: _GradientRule, ct):
        ct_leaves, _ = tree_flatten(ct)
        outs = eval_jaxpr(res.jaxpr.jaxpr, res.jaxpr.consts, *res.consts, *ct_leaves)
        cts = tree_unflatten(res.ct_tree, outs)
        return (cts,) if treedef_is_leaf(res.ct_tree) else tuple(cts)

    wrapped.defvjp(fwd, bwd)
    return wrapped


def _value_and_rule(name: str, result):
    if not (isinstance(result, tuple) and len(result) == 2 and callable(result[1])):
        raise TypeError(f"custom_gradient: '{name}' must return a pair (value, vjp) with "
                        f"vjp a function of the value's cotangent, got {type(result).__name__}")
    return result


def __dir__() -> list[str]:
    return sorted(__all__)
