"""Rematerialization: ``checkpoint`` (alias ``remat``) recomputes a block's intermediates in
the backward pass instead of storing them.

The block is staged as a ``checkpoint`` equation.  Its JVP rule evaluates the block for the
primal outputs and emits a second ``checkpoint`` equation holding the block's JVP jaxpr,
taking only the block's *inputs* (and tangents): under ``linearize`` that equation is what
gets stored, so the residuals are the inputs, not the intermediates.  Its transpose runs
``backward_pass`` on the JVP jaxpr, which first recomputes the primal part, then transposes.

A ``policy(prim, *avals, **params) -> bool`` may name intermediates worth saving anyway
(e.g. ``checkpoint_policies.dots_saveable``): they are computed with the primal outputs and
passed to the tangent equation instead of being recomputed.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

from functrans.core import (ClosedJaxpr, Jaxpr, Primitive, Tracer, abstract_eval_rules,
                            get_aval, impl_rules)
from functrans.interpreters import ad, batching, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.eval import eval_jaxpr
from functrans.interpreters.partial_eval import (closure_convert, dead_code_elimination,
                                                 trace_to_jaxpr)
from functrans.interpreters.transpose import backward_pass, is_undefined_primal
from functrans.primitives.shape import shape_of
from functrans.tree_util import tree_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies"]

checkpoint_p = Primitive("checkpoint", multiple_results=True)


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


def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | Sequence[int] = ()) -> Callable:
    """Make ``fun`` recompute its intermediates during the backward pass instead of storing
    them: less memory for a second evaluation of ``fun``.  Gradients are unchanged.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> f = ft.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(ft.grad(f)(1.0)), 6)
    0.360039
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    policy = checkpoint_policies.nothing_saveable if policy is None else policy

    @functools.wraps(fun)
    def checkpointed(*args):
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_flatten(dyn)
        if not any(isinstance(x, Tracer) for x in leaves):
            return fun(*args)
        found = {}

        def flat(*xs):
            it = iter(tree_unflatten(in_tree, xs))
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            out_leaves, found["tree"] = tree_flatten(fun(*full))
            return out_leaves

        closed, _ = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
        jaxpr, consts = closure_convert(closed)
        outs = checkpoint_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=prevent_cse,
                                 policy=policy)
        return tree_unflatten(found["tree"], outs)

    return checkpointed


remat = checkpoint


def _checkpoint_impl(*args, jaxpr, prevent_cse, policy):
    return eval_jaxpr(jaxpr.jaxpr, [], *args)


def _split_saved(jvp_jaxpr: Jaxpr, n_primal: int, policy
                 ) -> tuple[Jaxpr, Jaxpr, list, list[int]]:
    """Split the JVP jaxpr into (a) a primal jaxpr computing the intermediates ``policy``
    saves and (b) the tangent jaxpr taking them as extra inputs after the primals it uses
    (their indices are returned: a primal input it does not use is not kept alive)."""
    tangent_dependent = {id(v) for v in jvp_jaxpr.invars[n_primal:]}
    saved, primal_eqns = [], []
    for eqn in jvp_jaxpr.eqns:
        if any(id(x) in tangent_dependent for x in eqn.invars):
            tangent_dependent.update(id(v) for v in eqn.outvars)
            continue
        primal_eqns.append(eqn)
        if policy(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params):
            saved.extend(eqn.outvars)
    saved_ids = {id(v) for v in saved}
    remaining = [e for e in jvp_jaxpr.eqns if not any(id(v) in saved_ids for v in e.outvars)]
    tangent_eqns = dead_code_elimination(remaining, jvp_jaxpr.outvars)
    used = {id(x) for e in tangent_eqns for x in e.invars} | {id(x) for x in jvp_jaxpr.outvars}
    saved = [v for v in saved if id(v) in used]
    kept = [i for i, v in enumerate(jvp_jaxpr.invars[:n_primal]) if id(v) in used]
    primal = Jaxpr([], jvp_jaxpr.invars[:n_primal],
                   dead_code_elimination(primal_eqns, saved), saved)
    tangent = Jaxpr([], [jvp_jaxpr.invars[i] for i in kept] + saved
                    + jvp_jaxpr.invars[n_primal:], tangent_eqns, jvp_jaxpr.outvars)
    return primal, tangent, saved, kept


def _checkpoint_jvp(primals, tangents, *, jaxpr, prevent_cse, policy):
    has_t = [type(t) is not Zero for t in tangents]
    outs = checkpoint_p.bind(*primals, jaxpr=jaxpr, prevent_cse=prevent_cse, policy=policy)
    if not any(has_t):
        return outs, [Zero.from_value(o) for o in outs]
    jvp_closed, out_has = ad.jvp_jaxpr(jaxpr, has_t)
    jvp_j, jvp_consts = closure_convert(jvp_closed)
    n_out = len(outs)
    # Keep only the tangent outputs: the primal ones were computed above.
    tangent_only = Jaxpr([], jvp_j.jaxpr.invars, jvp_j.jaxpr.eqns, jvp_j.jaxpr.outvars[n_out:])
    n_primal = len(jvp_consts) + len(primals)
    primal_part, tangent_part, saved, kept = _split_saved(tangent_only, n_primal, policy)
    primal_args = list(jvp_consts) + list(primals)
    saved_values = eval_jaxpr(primal_part, [], *primal_args) if saved else []
    live = [t for t in tangents if type(t) is not Zero]
    # Under linearize the operands of this equation are the residuals: only what it uses.
    t_outs = iter(checkpoint_p.bind(*[primal_args[i] for i in kept], *saved_values, *live,
                                    jaxpr=ClosedJaxpr(tangent_part, []),
                                    prevent_cse=prevent_cse, policy=policy))
    return outs, [next(t_outs) if h else Zero.from_value(o) for h, o in zip(out_has, outs)]


def _checkpoint_transpose(cts, *args, jaxpr, prevent_cse, policy):
    # The known inputs recompute the primal intermediates, then the rest is transposed.
    cts_in = backward_pass(jaxpr.jaxpr, [], args, cts)
    return [ct if is_undefined_primal(x) else None for ct, x in zip(cts_in, args)]


def _checkpoint_batch(vals, dims, *, jaxpr, prevent_cse, policy):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    batched, _ = batching.batch_jaxpr(jaxpr, size, dims)
    batched, consts = closure_convert(batched)
    outs = checkpoint_p.bind(*consts, *vals, jaxpr=batched, prevent_cse=prevent_cse,
                             policy=policy)
    return outs, [0] * len(outs)


impl_rules[checkpoint_p] = _checkpoint_impl
abstract_eval_rules[checkpoint_p] = lambda *avals, jaxpr, prevent_cse, policy: list(
    jaxpr.out_avals)
ad.jvp_rules[checkpoint_p] = _checkpoint_jvp
transpose.deflinear(checkpoint_p, _checkpoint_transpose)
batching.batching_rules[checkpoint_p] = _checkpoint_batch

