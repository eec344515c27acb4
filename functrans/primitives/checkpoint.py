"""Rematerialization: ``checkpoint`` (alias ``remat``) recomputes a block's intermediates in
the backward pass instead of storing them.

The block is staged as a ``checkpoint`` equation.  Its JVP rule evaluates the block for the
primal outputs and emits a second ``checkpoint`` equation holding the block's JVP jaxpr,
taking only the block's *inputs* (and tangents): under ``linearize`` that equation is what
gets stored, so the residuals are the inputs, not the intermediates.  Its transpose runs
``backward_pass`` on the JVP jaxpr, which first recomputes the primal part, then transposes.

A ``policy(prim, *avals, **params) -> bool`` may name intermediates worth saving anyway
(e.g. ``checkpoint_policies.dots_saveable``): they are computed with the primal outputs and
passed to the tangent equation instead of being recomputed.  ``checkpoint_name(x, name)``
tags a value (an identity ``name`` equation) so that the name-based policies
(``save_only_these_names``, ``save_anything_except_these_names``) can pick it.
"""
from __future__ import annotations

import functools
import inspect
from typing import Callable, Sequence

from functrans.core import (Primitive, Tracer, abstract_eval_rules,
                            get_aval, impl_rules)
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans import jaxpr_transforms
from functrans.api_util import argnums_with_names
from functrans.core import ClosedJaxpr, Jaxpr, eval_jaxpr
from functrans.interpreters.partial_eval import dead_code_elimination

from functrans.jaxpr_transforms import closure_convert, trace_function
from functrans.interpreters.transpose import backward_pass, is_undefined_primal
from functrans.primitives.shape import shape_of
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name"]

checkpoint_p = Primitive("checkpoint", multiple_results=True, origin="library")
name_p = Primitive("name", origin="library")


def checkpoint_name(x, name: str):
    """``x`` unchanged, tagged with ``name`` for the checkpoint policies
    ``save_only_these_names`` and ``save_anything_except_these_names``.  Everywhere else
    (evaluation, derivatives, vmap) it is the identity.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> policy = ft.checkpoint_policies.save_only_these_names("hidden")
    >>> f = ft.checkpoint(lambda x: fnp.sin(checkpoint_name(x * x, "hidden")), policy=policy)
    >>> round(float(ft.grad(f)(1.0)), 6)  # 2 x cos(x**2)
    1.080605
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a str, got {name!r} of type "
                        f"{type(name).__name__}")
    return name_p.bind(x, name=name)


def _name_jvp(primals, tangents, *, name):
    # Only the primal is tagged: policies decide which primal values a block keeps.
    return name_p.bind(primals[0], name=name), tangents[0]


impl_rules[name_p] = lambda x, *, name: x
abstract_eval_rules[name_p] = lambda x, *, name: x
ad.jvp_rules[name_p] = _name_jvp
transpose.deftranspose(name_p, lambda ct, x, *, name: [ct])
batching.batching_rules[name_p] = lambda vals, dims, *, name: (
    name_p.bind(vals[0], name=name), dims[0])


def _names(caller: str, names: tuple) -> frozenset:
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"checkpoint_policies.{caller}: names must be str (the names given "
                            f"to checkpoint_name), got {n!r} of type {type(n).__name__}")
    return frozenset(names)


class checkpoint_policies:
    """Policies saying which intermediates a checkpointed block may keep."""

    @staticmethod
    def nothing_saveable(prim, *avals, **params) -> bool:
        """Recompute everything (the default)."""
        return False

    @staticmethod
    def everything_saveable(prim, *avals, **params) -> bool:
        """Save everything: no recomputation (as without checkpoint)."""
        return True

    @staticmethod
    def dots_saveable(prim, *avals, **params) -> bool:
        """Save the results of matrix products; recompute the cheap elementwise work."""
        return prim.name == "dot_general"

    @staticmethod
    def dots_with_no_batch_dims_saveable(prim, *avals, **params) -> bool:
        """Save the results of matrix products without batch dimensions (plain matmuls,
        not batched ones such as attention scores); recompute everything else."""
        return prim.name == "dot_general" and params["dimension_numbers"][1] == ((), ())

    @staticmethod
    def save_only_these_names(*names: str) -> Callable:
        """A policy saving exactly the values tagged by ``checkpoint_name`` with one of
        ``names``; everything else is recomputed."""
        wanted = _names("save_only_these_names", names)

        def policy(prim, *avals, **params) -> bool:
            return prim is name_p and params["name"] in wanted
        return policy

    @staticmethod
    def save_anything_except_these_names(*names: str) -> Callable:
        """A policy saving every intermediate except the values tagged by
        ``checkpoint_name`` with one of ``names`` (and what only they feed)."""
        unwanted = _names("save_anything_except_these_names", names)

        def policy(prim, *avals, **params) -> bool:
            return not (prim is name_p and params["name"] in unwanted)
        return policy

    @staticmethod
    def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
        """A policy saving what either policy saves."""
        def policy(prim, *avals, **params) -> bool:
            return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)
        return policy


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = (),
               static_argnames: str | Sequence[str] = ()) -> Callable:
    """Make ``fun`` recompute its intermediates during the backward pass instead of storing
    them: less memory for a second evaluation of ``fun``.  Gradients are unchanged.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> f = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(ft.grad(f)(1.0)), 6)
    0.360039

    ``prevent_cse`` is accepted for compatibility with JAX: functrans never merges common
    subexpressions across a checkpoint, so there is nothing to prevent.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if static_argnames:
        static = argnums_with_names(fun, static, static_argnames, "checkpoint",
                                    "static_argnames")
    policy = checkpoint_policies.nothing_saveable if policy is None else policy

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        if kwargs:  # as positional arguments, so that static ones are found by position
            bound = inspect.signature(fun).bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
            if bound.kwargs:
                raise TypeError(f"checkpoint: keyword-only arguments {sorted(bound.kwargs)} "
                                "are not supported; pass them positionally or close over "
                                "them")
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_flatten(dyn)
        if not any(isinstance(x, Tracer) for x in leaves):
            return fun(*args)

        def with_static(*dyn_args):
            it = iter(dyn_args)
            return fun(*[a if i in static else next(it) for i, a in enumerate(args)])

        static_key = tuple((i, type(args[i]), args[i]) for i in sorted(static) if i < len(args))
        jaxpr, consts, out_tree = trace_function(
            with_static, in_tree, [get_aval(x) for x in leaves], "checkpoint", key=fun,
            static=static_key, check_output=False)
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=prevent_cse,
                                 policy=policy)
        return tree_unflatten(out_tree, outs)

    return checkpointed


remat = checkpoint


def _checkpoint_impl(*args, jaxpr, prevent_cse, policy):
    return eval_jaxpr(jaxpr.jaxpr, [], *args)


def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, policy):
    has_t = [type(t) is not Zero for t in tangents]
    if not any(has_t):
        outs = checkpoint_p.bind(*primals, jaxpr=jaxpr, prevent_cse=prevent_cse, policy=policy)
        return outs, [Zero.from_value(o) for o in outs]
    # The JVP split into a primal block emitting the residuals the policy lets it save (and
    # the inputs the tangent block needs) and a tangent block that recomputes the rest.
    n_out = len(jaxpr.out_avals)
    jvp, out_has = jaxpr_transforms.jvp_jaxpr(jaxpr, has_t)
    known, unknown, out_unknowns, _ = jaxpr_transforms.partial_eval_jaxpr(
        jvp, [False] * len(primals) + [True] * sum(has_t),
        [False] * n_out + [True] * sum(out_has), policy)
    live = [t for t in tangents if type(t) is not Zero]
    if any(out_unknowns[:n_out]):
        # An equation inside computes primal outputs together with tangents (while_loop's
        # JVP is one loop over both, as its trip count needs the primals), so the JVP does
        # not split: the primals are computed on their own, and the tangents by the whole
        # JVP, which recomputes the primals it needs.
        outs = checkpoint_p.bind(*primals, jaxpr=jaxpr, prevent_cse=prevent_cse,
                                 policy=policy)
        tangent_part, tangent_consts = closure_convert(_outputs_from(jvp, n_out))
        t_outs = iter(checkpoint_p.bind(*tangent_consts, *primals, *live, jaxpr=tangent_part,
                                        prevent_cse=prevent_cse, policy=policy))
        return outs, [next(t_outs) if h else Zero.from_value(o) for h, o in zip(out_has, outs)]
    known, known_consts = closure_convert(known)
    outs = checkpoint_p.bind(*known_consts, *primals, jaxpr=known, prevent_cse=prevent_cse,
                             policy=policy)
    outs, residuals = outs[:n_out], outs[n_out:]
    t_outs = iter(checkpoint_p.bind(*residuals, *live, jaxpr=unknown, prevent_cse=prevent_cse,
                                    policy=policy))
    return outs, [next(t_outs) if h else Zero.from_value(o) for h, o in zip(out_has, outs)]


def _outputs_from(closed, start: int):
    """``closed`` returning only its outputs from position ``start`` on."""
    jaxpr = closed.jaxpr
    outvars = jaxpr.outvars[start:]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars,
                             dead_code_elimination(jaxpr.eqns, outvars), outvars), closed.consts)


def _checkpoint_transpose(cts, *args, jaxpr, prevent_cse, policy):
    # The known inputs recompute the primal intermediates, then the rest is transposed.
    cts_in = backward_pass(jaxpr.jaxpr, [], args, cts)
    return [ct if is_undefined_primal(x) else None for ct, x in zip(cts_in, args)]


def _checkpoint_batch(vals, dims, *, jaxpr, prevent_cse, policy):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    batched, _ = jaxpr_transforms.batch_jaxpr(jaxpr, size, dims)
    batched, consts = closure_convert(batched)
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=batched, prevent_cse=prevent_cse,
                             policy=policy)
    return outs, [0] * len(outs)


impl_rules[checkpoint_p] = _checkpoint_impl
abstract_eval_rules[checkpoint_p] = lambda *avals, jaxpr, prevent_cse, policy: list(
    jaxpr.out_avals)
ad.jvp_rules[checkpoint_p] = _checkpoint_jvp
transpose.deftranspose(checkpoint_p, _checkpoint_transpose)
batching.batching_rules[checkpoint_p] = _checkpoint_batch

