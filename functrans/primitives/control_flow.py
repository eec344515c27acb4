"""Control flow: cond / switch, while_loop, fori_loop and scan.

Each is a higher-order primitive holding jaxprs (closed, their constants passed as leading
operands).  Differentiation never unrolls a loop:

* the JVP of ``cond`` and ``scan`` is split (``jaxpr_transforms.linearize_jaxpr``) into a primal part that
  also emits residuals and a tangent part linear in the tangents, so reverse mode only
  needs the transpose of the linear part: ``cond`` of transposed branches, and a ``scan``
  run backwards over the transposed body;
* ``while_loop`` has a forward-mode rule (the tangents ride along in the carry); reverse mode
  raises an error that says to use ``scan`` / ``fori_loop`` with static bounds instead.

Batching a ``cond`` whose predicate is batched computes every branch and selects per batch
member; a ``while_loop`` with a batched predicate runs until every member is done, freezing
the members that finished.

On dask arrays (``control_flow_dask``) ``scan`` runs one task per chunk of rows, ``cond``
with a lazy index selects between all its branches, and ``while_loop`` persists its carry
and computes its predicate once per iteration.
"""
from __future__ import annotations

import builtins
import functools
from typing import Callable, Sequence

import numpy as np

from functrans import core
from functrans.core import (ClosedJaxpr, Jaxpr, Primitive, ShapedArray, Tracer, Var,
                            abstract_eval_rules, get_aval, impl_rules)
from functrans import jaxpr_transforms
from functrans.backend import array_module
from functrans.core import eval_jaxpr
from functrans.interpreters import ad, batching, codegen, partial_eval, transpose
from functrans.primitives import control_flow_dask
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.partial_eval import trace_to_jaxpr
from functrans.interpreters.transpose import is_undefined_primal
from functrans.jaxpr_transforms import closure_convert, memoize_on_jaxpr, trace_function
from functrans.primitives.conversion import convert_element_type
from functrans.primitives.elementwise import add, eq, gt, lt, max, min, ne, select
from functrans.primitives.shape import bdim_to_front, moveaxis, reduce_sum, reshape, shape_of
from functrans.tree_util import tree_flatten, tree_structure, tree_unflatten

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's: other families, numpy, scipy)
__all__ = ["cond", "fori_loop", "scan", "switch", "while_loop"]

# ------------------------------------------------------------------------------------------
# Tracing user functions into jaxprs
# ------------------------------------------------------------------------------------------


def _instantiate_cts(cts, avals, witness):
    """Cotangents with symbolic zeros made concrete, on the device of ``witness``."""
    return [ad.zeros(core.tangent_aval(a), witness) if type(ct) is Zero else ct
            for ct, a in zip(cts, avals)]


def _types_str(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _same_types(avals_a, avals_b) -> bool:
    return len(avals_a) == len(avals_b) and all(
        a.shape == b.shape and a.dtype == b.dtype for a, b in zip(avals_a, avals_b))


def _is_concrete(x) -> bool:
    return not isinstance(x, Tracer)


# ------------------------------------------------------------------------------------------
# cond / switch
# ------------------------------------------------------------------------------------------

cond_p = Primitive("cond", multiple_results=True, origin="library")


def _memoize_branches(fn: Callable) -> Callable:
    """Memoise ``fn(branches, *flags)`` on the identity of the branches (the first held
    weakly, as ``memoize_on_jaxpr`` does), so a cond's rules build their jaxprs once."""
    memo = memoize_on_jaxpr(lambda first, rest, *flags: fn((first,) + rest, *flags),
                            name=fn.__name__)
    return lambda branches, *flags: memo(branches[0], tuple(branches[1:]), *flags)


@_memoize_branches
def _join_converted(jaxprs: tuple, n_consts: tuple) -> list[ClosedJaxpr]:
    """Branches taking their own constants first (``n_consts[i]`` of them) made to take one
    common operand list: every branch takes all branches' constants and ignores the
    others'."""
    joined = []
    for i, closed in enumerate(jaxprs):
        j = closed.jaxpr
        before = [Var(v.aval) for k in range(i) for v in jaxprs[k].jaxpr.invars[:n_consts[k]]]
        after = [Var(v.aval) for k in range(i + 1, len(jaxprs))
                 for v in jaxprs[k].jaxpr.invars[:n_consts[k]]]
        n = n_consts[i]
        invars = before + j.invars[:n] + after + j.invars[n:]
        joined.append(ClosedJaxpr(Jaxpr([], invars, j.eqns, j.outvars), []))
    return joined


def _join_branches(branches: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list]:
    """Give branches (with their own constants) one common operand list.  Returns
    ``(branches, consts)``: the constants of all branches, to pass before the operands."""
    converted = [closure_convert(b) for b in branches]
    joined = _join_converted(tuple(j for j, _ in converted),
                             tuple(len(consts) for _, consts in converted))
    return joined, [c for _, consts in converted for c in consts]


#: ``operand=`` of ``cond`` and ``switch`` not given (None is an operand like any other).
_NO_OPERAND = object()


def _operands(name: str, operands: tuple, operand) -> tuple:
    """JAX's older calling form: one ``operand=`` keyword instead of positional operands."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(f"{name}: give the operands positionally or one operand= keyword, "
                        f"not both (got {len(operands)} positional operands and operand=)")
    return (operand,)


def switch(index, branches: Sequence[Callable], *operands, operand=_NO_OPERAND):
    """Apply ``branches[index](*operands)``; ``index`` is clamped to the valid range.

    Every branch is traced; all must return the same structure, shapes and dtypes.

    >>> import functrans.lax as lax
    >>> lax.switch(1, [lambda x: x + 1.0, lambda x: x * 10.0], 2.0)
    20.0
    """
    operands = _operands("switch", operands, operand)
    branches = list(branches)
    if not branches:
        raise ValueError("switch: need at least one branch")
    index_aval = get_aval(index)
    if index_aval.shape != () or index_aval.dtype.kind not in "iub":
        raise TypeError(f"switch: the index must be an integer scalar, got "
                        f"{index_aval.str_short()}")
    ops_flat, ops_tree = tree_flatten(operands)
    avals = [get_aval(x) for x in ops_flat]
    traced = [trace_function(b, ops_tree, avals, "switch/cond") for b in branches]
    out_tree, out_avals = traced[0][2], traced[0][0].out_avals
    for i, (jaxpr, _, tree) in enumerate(traced[1:], 1):
        if tree != out_tree or not _same_types(jaxpr.out_avals, out_avals):
            raise TypeError(
                "cond/switch branches must return the same structure and types: branch 0 "
                f"returns {out_tree} {_types_str(out_avals)}, branch {i} returns {tree} "
                f"{_types_str(jaxpr.out_avals)}")
    joined = _join_converted(tuple(j for j, _, _ in traced),
                             tuple(len(consts) for _, consts, _ in traced))
    consts = [c for _, cs, _ in traced for c in cs]
    if len(branches) == 1:
        outs = eval_jaxpr(joined[0].jaxpr, [], *consts, *ops_flat)
    else:
        index = convert_element_type(index, np.int64) if index_aval.dtype != np.int64 else index
        outs = cond_p.bind(index, *consts, *ops_flat, branches=tuple(joined))
    return tree_unflatten(out_tree, outs)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged so that it
    works on traced predicates (under make_jaxpr, or batched under vmap).

    >>> import functrans as ft, functrans.lax as lax
    >>> f = lambda x: lax.cond(x > 0, lambda x: x * x, lambda x: -x, x)
    >>> f(3.0), ft.grad(f)(3.0), ft.grad(f)(-3.0)
    (9.0, 6.0, -1.0)
    """
    aval = get_aval(pred)
    if aval.shape != ():
        raise TypeError(f"cond: the predicate must be a scalar, got {aval.str_short()}; for "
                        "elementwise choice use functrans.numpy.where")
    if aval.dtype.kind == "c":
        raise TypeError("cond: the predicate must be boolean or a real number, got complex")
    operands = _operands("cond", operands, operand)
    index = convert_element_type(pred if aval.dtype == np.bool_ else ne(pred, 0), np.int64)
    return switch(index, [false_fun, true_fun], *operands)


def _cond_impl(index, *ops, branches):
    if control_flow_dask.is_lazy(index):
        return control_flow_dask.lazy_cond(
            [functools.partial(eval_jaxpr, b.jaxpr, []) for b in branches], index, ops)
    i = int(np.clip(int(index), 0, len(branches) - 1))
    return eval_jaxpr(branches[i].jaxpr, [], *ops)


def _run_cond(branch_fns, index, *ops):
    if control_flow_dask.is_lazy(index):
        return control_flow_dask.lazy_cond(branch_fns, index, ops)
    return branch_fns[int(np.clip(int(index), 0, len(branch_fns) - 1))](*ops)


def _cond_lowering(ctx, index, *ops, branches):
    fns = tuple(_body(ctx, b, "cond_branch") for b in branches)
    return f"{ctx.bind(functools.partial(_run_cond, fns), 'cond')}({', '.join([index, *ops])})"


def _body(ctx, closed, name: str):
    """The compiled function of a control-flow body (outputs may alias its inputs)."""
    return codegen.compile_jaxpr(closed, ctx.library, name, owned_outputs=False).fn


def _cond_abstract_eval(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"cond: index must be an integer scalar, got {index.str_short()}")
    for b in branches:
        if not _same_types(b.in_avals, ops):
            raise TypeError(f"cond: branch takes {_types_str(b.in_avals)}, operands are "
                            f"{_types_str(ops)}")
    return branches[0].out_avals


@_memoize_branches
def _cond_jvp_branches(branches: tuple, has_t: tuple):
    """The branches of a cond's JVP: primal branches that also emit residuals (each branch
    fills its own residual slots, zeros in the others'), and tangent branches linear in the
    tangents.  Returns ``(primal_branches, primal_consts, tangent_branches, tangent_consts,
    out_has_tangent)``."""
    n_out = len(branches[0].out_avals)
    out_has_t = [False] * n_out
    for b in branches:
        live = jaxpr_transforms.linearize_jaxpr(b, has_t)[2]
        out_has_t = [x or y for x, y in zip(out_has_t, live)]
    lins = [jaxpr_transforms.linearize_jaxpr(b, has_t, out_has_t) for b in branches]
    res_avals = [p.out_avals[n_out:] for p, _, _, _ in lins]
    op_avals = branches[0].in_avals

    def primal_branch(i):
        def fun(*args):
            outs = eval_jaxpr(lins[i][0].jaxpr, lins[i][0].consts, *args)
            res = []
            for j, avals in enumerate(res_avals):
                res += list(outs[n_out:]) if j == i else [
                    ad.zeros(a, ad.device_witness(args)) for a in avals]
            return list(outs[:n_out]) + res
        return trace_to_jaxpr(fun, op_avals)[0]

    n_res = sum(len(a) for a in res_avals)
    t_avals = [a for avals in res_avals for a in avals] + [
        core.tangent_aval(a) for a, live in zip(op_avals, has_t) if live]

    def tangent_branch(i):
        offset = sum(len(a) for a in res_avals[:i])

        def fun(*args):
            own = args[offset:offset + len(res_avals[i])]
            return eval_jaxpr(lins[i][1].jaxpr, lins[i][1].consts, *own, *args[n_res:])
        return trace_to_jaxpr(fun, t_avals)[0]

    primal, p_consts = _join_branches([primal_branch(i) for i in range(len(branches))])
    tangent, t_consts = _join_branches([tangent_branch(i) for i in range(len(branches))])
    return tuple(primal), p_consts, tuple(tangent), t_consts, out_has_t


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    op_tangents = tangents[1:]
    has_t = [type(t) is not Zero for t in op_tangents]
    if not any(has_t):
        outs = cond_p.bind(*primals, branches=branches)
        return outs, [Zero.from_value(o) for o in outs]
    primal, p_consts, tangent, t_consts, out_has_t = _cond_jvp_branches(branches, has_t)
    n_out = len(out_has_t)
    outs = cond_p.bind(index, *p_consts, *ops, branches=primal)
    primal_outs, residuals = outs[:n_out], outs[n_out:]
    live_tangents = [t for t in op_tangents if type(t) is not Zero]
    t_outs = iter(cond_p.bind(index, *t_consts, *residuals, *live_tangents, branches=tangent))
    return primal_outs, [next(t_outs) if live else Zero.from_value(o)
                         for live, o in zip(out_has_t, primal_outs)]


@_memoize_branches
def _cond_transpose_branches(branches: tuple, is_linear: tuple):
    transposed, consts = _join_branches([jaxpr_transforms.transpose_jaxpr(b, is_linear)
                                         for b in branches])
    return tuple(transposed), consts


def _cond_transpose(cts, index, *ops, branches):
    assert not is_undefined_primal(index), "cond: the index cannot be linear"
    is_linear = [is_undefined_primal(x) for x in ops]
    cts = _instantiate_cts(cts, branches[0].out_avals, ad.device_witness([*cts, *ops]))
    transposed, consts = _cond_transpose_branches(branches, is_linear)
    known = [x for x, lin in zip(ops, is_linear) if not lin]
    cts_in = iter(cond_p.bind(index, *consts, *known, *cts, branches=transposed))
    return [None] + [next(cts_in) if lin else None for lin in is_linear]


@_memoize_branches
def _cond_batch_branches(branches: tuple, size: int, op_dims: tuple):
    batched, consts = _join_branches([jaxpr_transforms.batch_jaxpr(b, size, op_dims)[0]
                                      for b in branches])
    return tuple(batched), consts


def _cond_batch(vals, dims, *, branches):
    index, ops = vals[0], vals[1:]
    index_dim, op_dims = dims[0], dims[1:]
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    n_out = len(branches[0].out_avals)
    if index_dim is not_mapped:
        batched, consts = _cond_batch_branches(branches, size, op_dims)
        return cond_p.bind(index, *consts, *ops, branches=batched), [0] * n_out
    # A batched predicate: run every branch on the whole batch, then select per member.
    ops = [bdim_to_front(x, d, size) for x, d in zip(ops, op_dims)]
    index = max(min(moveaxis(index, index_dim, 0), len(branches) - 1), 0)
    results = None
    for i, b in enumerate(branches):
        bj, _ = jaxpr_transforms.batch_jaxpr(b, size, [0] * len(ops))
        outs = eval_jaxpr(bj.jaxpr, bj.consts, *ops)
        if results is None:
            results = list(outs)
            continue
        chosen = eq(index, i)
        results = [select(reshape(chosen, (size,) + (1,) * (len(shape_of(o)) - 1)), o, r)
                   for o, r in zip(outs, results)]
    return results, [0] * n_out


impl_rules[cond_p] = _cond_impl
codegen.deflowering(cond_p, _cond_lowering, fresh=False)
abstract_eval_rules[cond_p] = _cond_abstract_eval
ad.jvp_rules[cond_p] = _cond_jvp
transpose.deftranspose(cond_p, _cond_transpose)
batching.batching_rules[cond_p] = _cond_batch

# ------------------------------------------------------------------------------------------
# while_loop
# ------------------------------------------------------------------------------------------

while_p = Primitive("while", multiple_results=True, origin="library")


def _as_args_tree(tree):
    """The structure of ``(carry,)`` for a carry of structure ``tree``."""
    return tree_flatten((tree_unflatten(tree, [0] * tree.num_leaves),))[1]


def _trace_loop_body(body_fun, tree, init_flat, name: str, key=None):
    """Trace a loop body whose output must match its carry; weakly typed initial values
    (Python scalars) are promoted to the body's output dtypes, as in JAX."""
    avals = [get_aval(x) for x in init_flat]
    for _ in range(2):
        jaxpr, consts, out_tree = trace_function(body_fun, _as_args_tree(tree), avals, name,
                                                 key=key)
        out_avals = jaxpr.out_avals
        if out_tree == tree and _same_types(out_avals, avals):
            return jaxpr, consts, init_flat
        if out_tree != tree or len(out_avals) != len(avals):
            break
        promotable = all(a.shape == b.shape and (a.dtype == b.dtype or a.weak_type)
                         for a, b in zip(avals, out_avals))
        if not promotable:
            break
        init_flat = [convert_element_type(x, b.dtype) if a.dtype != b.dtype else x
                     for x, a, b in zip(init_flat, avals, out_avals)]
        avals = [get_aval(x) for x in init_flat]
    raise TypeError(f"{name}: the body must return a carry of the same structure and types as "
                    f"its input: input {tree} {_types_str(avals)}, output {out_tree} "
                    f"{_types_str(out_avals)}")


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """``while cond_fun(val): val = body_fun(val)``, staged.  Differentiable in forward mode
    (jvp, jacfwd); reverse mode needs a static trip count: use ``scan`` or ``fori_loop``.

    >>> import functrans.lax as lax
    >>> lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, 1.0))
    (5, 32.0)
    """
    return _while_loop(cond_fun, body_fun, init_val, body_fun, "while_loop")


def _while_loop(cond_fun: Callable, body_fun: Callable, init_val, body_key, name: str):
    """``while_loop``, with the body's trace cached under ``body_key`` and ``name`` (which
    must tell apart the different bodies cached under one key)."""
    init_flat, tree = tree_flatten(init_val)
    body_jaxpr, body_consts, init_flat = _trace_loop_body(body_fun, tree, init_flat, name,
                                                          body_key)
    avals = [get_aval(x) for x in init_flat]
    cond_jaxpr, cond_consts, _ = trace_function(cond_fun, _as_args_tree(tree), avals,
                                                "while_loop")
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:
        raise TypeError(f"while_loop: cond_fun must return a boolean scalar, got "
                        f"{_types_str(pred)}")
    outs = while_p.bind(*cond_consts, *body_consts, *init_flat, cond_jaxpr=cond_jaxpr,
                        body_jaxpr=body_jaxpr, cond_nconsts=len(cond_consts),
                        body_nconsts=len(body_consts))
    return tree_unflatten(tree, outs)


def _while_split(args, cond_nconsts, body_nconsts):
    return (args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts],
            args[cond_nconsts + body_nconsts:])


def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return _run_while(lambda *a: eval_jaxpr(cond_jaxpr.jaxpr, [], *a),
                      lambda *a: eval_jaxpr(body_jaxpr.jaxpr, [], *a),
                      cond_nconsts, body_nconsts, *args)


def _run_while(cond_fn, body_fn, cond_nconsts, body_nconsts, *args):
    cconsts, bconsts, carry = _while_split(args, cond_nconsts, body_nconsts)
    if control_flow_dask.any_lazy(args):
        return control_flow_dask.host_driven_while(cond_fn, body_fn, cconsts, bconsts, carry)
    while bool(cond_fn(*cconsts, *carry)[0]):
        carry = body_fn(*bconsts, *carry)
    return list(carry)


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    run = functools.partial(_run_while, _body(ctx, cond_jaxpr, "while_cond"),
                            _body(ctx, body_jaxpr, "while_body"), cond_nconsts, body_nconsts)
    return f"{ctx.bind(run, 'while')}({', '.join(args)})"


def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    return list(avals[cond_nconsts + body_nconsts:])


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts, bconsts, carry = _while_split(primals, cond_nconsts, body_nconsts)
    _, bconsts_t, carry_t = _while_split(tangents, cond_nconsts, body_nconsts)
    bconsts_has = [type(t) is not Zero for t in bconsts_t]
    carry_has = [type(t) is not Zero for t in carry_t]
    while True:  # the carry tangents that can become non-zero: a fixpoint
        _, out_has = jaxpr_transforms.jvp_jaxpr(body_jaxpr, bconsts_has + carry_has)
        new = [a or b for a, b in zip(carry_has, out_has)]
        if new == carry_has:
            break
        carry_has = new
    if not any(bconsts_has) and not any(carry_has):
        outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                            cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
        return outs, [Zero.from_value(o) for o in outs]
    body_jvp, _ = jaxpr_transforms.jvp_jaxpr(body_jaxpr, bconsts_has + carry_has, instantiate=carry_has)
    n_b, n_c = len(bconsts), len(carry)
    n_bt = sum(bconsts_has)

    # body_jvp takes (bconsts, carry, bconsts_t, carry_t); the loop wants (consts, carry).
    def body(*args):
        bc, bct, c, ct = args[:n_b], args[n_b:n_b + n_bt], args[n_b + n_bt:n_b + n_bt + n_c], \
            args[n_b + n_bt + n_c:]
        outs = eval_jaxpr(body_jvp.jaxpr, body_jvp.consts, *bc, *c, *bct, *ct)
        return list(outs[:n_c]) + list(outs[n_c:])

    def cond(*args):
        return eval_jaxpr(cond_jaxpr.jaxpr, [], *args[:cond_nconsts + n_c])

    live_bt = [t for t in bconsts_t if type(t) is not Zero]
    live_ct = [ad.instantiate(t, p) for t, p, h in zip(carry_t, carry, carry_has) if h]
    carry_avals = [get_aval(x) for x in carry]
    body_avals = ([get_aval(x) for x in bconsts] + [get_aval(t) for t in live_bt] + carry_avals
                  + [get_aval(t) for t in live_ct])
    body_closed, body_consts = closure_convert(trace_to_jaxpr(body, body_avals)[0])
    cond_avals = ([get_aval(x) for x in cconsts] + carry_avals + [get_aval(t) for t in live_ct])
    cond_closed, cond_consts = closure_convert(trace_to_jaxpr(cond, cond_avals)[0])
    outs = while_p.bind(*cond_consts, *cconsts, *body_consts, *bconsts, *live_bt, *carry,
                        *live_ct, cond_jaxpr=cond_closed, body_jaxpr=body_closed,
                        cond_nconsts=len(cond_consts) + len(cconsts),
                        body_nconsts=len(body_consts) + n_b + n_bt)
    primal_outs, t_outs = outs[:n_c], iter(outs[n_c:])
    return primal_outs, [next(t_outs) if h else Zero.from_value(p)
                         for h, p in zip(carry_has, primal_outs)]


_WHILE_REVERSE = (
    "Reverse-mode differentiation (grad, vjp, jacrev) of lax.while_loop is not supported: "
    "its trip count is only known at run time, so the values the backward pass needs cannot "
    "be stored ahead of time. Use lax.scan, or lax.fori_loop with concrete Python-int bounds "
    "(which lowers to scan), for reverse mode; forward mode (jvp, jacfwd, linearize) "
    "supports while_loop.")


def _while_linear_staging(trace, args, params):
    """Linearizing a while_loop, whose JVP is one loop over primals and tangents together:
    the primal outputs are computed now (by the loop with zero tangents), and the whole
    loop is staged for the tangent outputs, recomputing its primal part (as JAX does).  The
    staged loop cannot be transposed: reverse mode refuses it (``transpose.untransposable``).
    Inside a jaxpr being split (``trace`` None: a jit's body) the loop is refused."""
    if trace is None:
        raise TypeError(_WHILE_REVERSE + " Inside jit, linearize does not support it either "
                        "(a jit's body is split into known and linear parts as a whole): "
                        "use jvp there, or linearize outside the jit.")
    cn, bn = params["cond_nconsts"], params["body_nconsts"]
    unknown = [type(x) is partial_eval.JaxprTracer and x._trace is trace for x in args]
    body_unknown, carry_unknown = unknown[cn:cn + bn], unknown[cn + bn:]
    while True:  # the carries that come to depend on unknown values: a fixpoint
        out_unknown = jaxpr_transforms.partial_eval_jaxpr(params["body_jaxpr"],
                                                          body_unknown + carry_unknown)[2]
        new = [a or b for a, b in zip(carry_unknown, out_unknown)]
        if new == carry_unknown:
            break
        carry_unknown = new
    if any(unknown[:cn]) or any(jaxpr_transforms.partial_eval_jaxpr(
            params["cond_jaxpr"], unknown[:cn] + carry_unknown)[2]):
        raise TypeError(_WHILE_REVERSE)  # the trip count would depend on the tangents
    witness = ad.device_witness([x for x, u in zip(args, unknown) if not u])
    known = while_p.bind(*[ad.zeros(x.aval, witness) if u else x
                           for x, u in zip(args, unknown)], **params)
    staged = trace.stage(while_p, args, params)
    return [s if u else k for s, k, u in zip(staged, known, carry_unknown)]


def _batch_jaxpr_as(closed, size: int, in_dims, out_batched):
    """``jaxpr_transforms.batch_jaxpr`` with exactly the outputs marked in ``out_batched`` batched
    (along axis 0); the others must come out unbatched."""
    batched, out_dims = jaxpr_transforms.batch_jaxpr(closed, size, in_dims, instantiate=False)
    assert all(want or d is not_mapped for d, want in zip(out_dims, out_batched))
    if all((d is not not_mapped) == want for d, want in zip(out_dims, out_batched)):
        return batched

    def fun(*args):
        outs = eval_jaxpr(batched.jaxpr, batched.consts, *args)
        return [bdim_to_front(x, not_mapped, size) if want and d is not_mapped else x
                for x, d, want in zip(outs, out_dims, out_batched)]
    return trace_to_jaxpr(fun, batched.in_avals)[0]


def _while_batch(vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    cconsts, bconsts, carry = _while_split(vals, cond_nconsts, body_nconsts)
    cdims, bdims, carry_dims = _while_split(dims, cond_nconsts, body_nconsts)
    n_c = len(carry)

    def as_dims(batched):
        return [0 if b else not_mapped for b in batched]

    # A carry is batched if it enters batched or the body makes it so (a fixpoint); the
    # others stay unbatched, as jacfwd needs of the primal part of a JVP'd loop.
    carry_bat = [d is not not_mapped for d in carry_dims]
    while True:
        _, out_dims = jaxpr_transforms.batch_jaxpr(body_jaxpr, size, list(bdims) + as_dims(carry_bat),
                                           instantiate=False)
        new = [b or d is not not_mapped for b, d in zip(carry_bat, out_dims)]
        if new == carry_bat:
            break
        carry_bat = new
    _, (pred_dim,) = jaxpr_transforms.batch_jaxpr(cond_jaxpr, size, list(cdims) + as_dims(carry_bat),
                                          instantiate=False)
    if pred_dim is not not_mapped:
        carry_bat = [True] * n_c  # members that finish keep their own carry
    carry = [bdim_to_front(x, d, size) if b else x
             for x, d, b in zip(carry, carry_dims, carry_bat)]
    body_b = _batch_jaxpr_as(body_jaxpr, size, list(bdims) + as_dims(carry_bat), carry_bat)
    cond_b, _ = jaxpr_transforms.batch_jaxpr(cond_jaxpr, size, list(cdims) + as_dims(carry_bat),
                                     instantiate=False)
    body_b, body_consts = closure_convert(body_b)
    cond_b, cond_consts = closure_convert(cond_b)
    if pred_dim is not_mapped:
        outs = while_p.bind(*cond_consts, *cconsts, *body_consts, *bconsts, *carry,
                            cond_jaxpr=cond_b, body_jaxpr=body_b,
                            cond_nconsts=len(cond_consts) + len(cconsts),
                            body_nconsts=len(body_consts) + len(bconsts))
        return outs, as_dims(carry_bat)
    # Batched predicate: loop while any member continues; finished members keep their carry.
    n_cc = len(cond_consts) + len(cconsts)
    n_bc = len(body_consts) + len(bconsts)

    def any_pred(*args):
        (pred,) = eval_jaxpr(cond_b.jaxpr, [], *args)
        # A count, not a max: with no batch members (axis size 0) no loop runs.
        return [gt(reduce_sum(convert_element_type(pred, np.int64), (0,)), 0)]

    def body(*args):
        cc, bc, c = args[:n_cc], args[n_cc:n_cc + n_bc], args[n_cc + n_bc:]
        (pred,) = eval_jaxpr(cond_b.jaxpr, [], *cc, *c)
        new = eval_jaxpr(body_b.jaxpr, [], *bc, *c)
        return [select(reshape(pred, (size,) + (1,) * (len(shape_of(x)) - 1)), x, old)
                for x, old in zip(new, c)]

    cc_avals = [get_aval(x) for x in (*cond_consts, *cconsts)]
    bc_avals = [get_aval(x) for x in (*body_consts, *bconsts)]
    carry_avals = [get_aval(x) for x in carry]
    new_cond, k1 = closure_convert(trace_to_jaxpr(any_pred, cc_avals + carry_avals)[0])
    new_body, k2 = closure_convert(trace_to_jaxpr(body, cc_avals + bc_avals + carry_avals)[0])
    outs = while_p.bind(*k1, *cond_consts, *cconsts, *k2, *cond_consts, *cconsts, *body_consts,
                        *bconsts, *carry, cond_jaxpr=new_cond, body_jaxpr=new_body,
                        cond_nconsts=len(k1) + n_cc, body_nconsts=len(k2) + n_cc + n_bc)
    return outs, [0] * n_c


impl_rules[while_p] = _while_impl
codegen.deflowering(while_p, _while_lowering, fresh=False)
abstract_eval_rules[while_p] = _while_abstract_eval
ad.jvp_rules[while_p] = _while_jvp
partial_eval.linear_staging_rules[while_p] = _while_linear_staging
transpose.untransposable[while_p] = _WHILE_REVERSE
batching.batching_rules[while_p] = _while_batch

# ------------------------------------------------------------------------------------------
# scan
# ------------------------------------------------------------------------------------------

scan_p = Primitive("scan", multiple_results=True, origin="library")


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int = 1):
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns the final
    carry and the stacked ``y``s.  Differentiable in both modes and at any order, batchable.

    >>> import numpy as np, functrans.lax as lax
    >>> total, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, np.array([1.0, 2.0, 3.0]))
    >>> float(total), ys
    (6.0, array([0., 2., 9.]))

    ``unroll`` is accepted for compatibility with JAX and ignored: there is no compiler to
    unroll for, each iteration is one evaluation of the body's jaxpr.
    """
    return _scan(f, init, xs, length, reverse, unroll, key=f, name="scan")


def _scan(f: Callable, init, xs, length, reverse: bool, unroll: int, *, key, name: str):
    """``scan``, with the body's trace cached under ``key`` (``fori_loop`` passes its own
    body, since the function it scans is made afresh on every call)."""
    xs_flat, xs_tree = tree_flatten(xs)
    lengths = {shape_of(x)[0] for x in xs_flat if shape_of(x)}
    if any(not shape_of(x) for x in xs_flat):
        raise ValueError("scan: every leaf of xs must have a leading axis to scan over")
    if length is not None:
        length = int(length)
        if lengths - {length}:
            raise ValueError(f"scan: length={length} but xs have leading sizes {sorted(lengths)}")
    elif len(lengths) > 1:
        raise ValueError(f"scan: xs leaves have different leading sizes {sorted(lengths)}")
    elif not lengths:
        raise ValueError("scan: length must be given when xs is None or empty")
    else:
        (length,) = lengths
    init_flat, init_tree = tree_flatten(init)
    x_avals = [ShapedArray(shape_of(x)[1:], get_aval(x).dtype, get_aval(x).weak_type)
               for x in xs_flat]
    n_carry = len(init_flat)
    args_tree = tree_flatten((tree_unflatten(init_tree, [0] * n_carry),
                              tree_unflatten(xs_tree, [0] * len(xs_flat))))[1]

    def body(carry, x):
        out = f(carry, x)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("scan: f must return a pair (carry, y)")
        if tree_structure(out[0]) != init_tree:
            raise TypeError(f"scan: f must return a carry of the same structure as init: "
                            f"{init_tree} in, {tree_structure(out[0])} out")
        return out

    avals = [get_aval(x) for x in init_flat] + x_avals
    for _ in range(2):
        jaxpr, consts, out_tree = trace_function(body, args_tree, avals, name, key=key)
        out_carry = jaxpr.out_avals[:n_carry]
        if _same_types(out_carry, avals[:n_carry]):
            break
        if not all(a.shape == b.shape and (a.dtype == b.dtype or a.weak_type)
                   for a, b in zip(avals[:n_carry], out_carry)):
            raise TypeError(f"scan: f must return a carry of the same types as init: "
                            f"{_types_str(avals[:n_carry])} in, {_types_str(out_carry)} out")
        init_flat = [convert_element_type(x, b.dtype) if a.dtype != b.dtype else x
                     for x, a, b in zip(init_flat, avals, out_carry)]
        avals = [get_aval(x) for x in init_flat] + x_avals
    else:
        raise TypeError(f"scan: f must return a carry of the same types as init: "
                        f"{_types_str(avals[:n_carry])} in, {_types_str(out_carry)} out")
    y_tree = out_tree.children[1]
    outs = scan_p.bind(*consts, *init_flat, *xs_flat, jaxpr=jaxpr, num_consts=len(consts),
                       num_carry=n_carry, length=length, reverse=bool(reverse),
                       unroll=int(unroll))
    return (tree_unflatten(init_tree, outs[:n_carry]),
            tree_unflatten(y_tree, outs[n_carry:]))


def _scan_split(args, num_consts, num_carry):
    return args[:num_consts], args[num_consts:num_consts + num_carry], args[num_consts + num_carry:]


def _scan_impl(*args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    return _run_scan_on(jaxpr, lambda *a: eval_jaxpr(jaxpr.jaxpr, [], *a),
                        jaxpr.out_avals[num_carry:], num_consts, num_carry, length, reverse,
                        *args)


def _scan_lowering(ctx, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    run = functools.partial(_run_scan_on, jaxpr, _body(ctx, jaxpr, "scan_body"),
                            jaxpr.out_avals[num_carry:], num_consts, num_carry, length, reverse)
    return f"{ctx.bind(run, 'scan')}({', '.join(args)})"


def _run_scan_on(jaxpr, body_fn, y_avals, num_consts, num_carry, length, reverse, *args):
    """The scan of ``jaxpr``: over dask operands one task per chunk of rows
    (``control_flow_dask.chunked_scan``), else ``body_fn`` row by row."""
    if length and control_flow_dask.any_lazy(args):
        return control_flow_dask.chunked_scan(_run_scan, jaxpr, num_consts, num_carry, length,
                                              reverse, args)
    return _run_scan(body_fn, y_avals, num_consts, num_carry, length, reverse, *args)


def _run_scan(body_fn, y_avals, num_consts, num_carry, length, reverse, *args):
    consts, carry, xs = _scan_split(args, num_consts, num_carry)
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = body_fn(*consts, *carry, *[x[i] for x in xs])
        carry, y = outs[:num_carry], outs[num_carry:]
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = []
    for k, aval in enumerate(y_avals):
        if ys:
            column = [y[k] for y in ys]
            xp = array_module(*column)
            stacked.append(xp.stack([xp.asarray(c, dtype=aval.dtype) for c in column]))
        else:
            stacked.append(ad.zeros(aval.update(shape=(0,) + aval.shape, weak_type=False),
                                    ad.device_witness(args)))
    return list(carry) + stacked


def _scan_abstract_eval(*avals, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, carry, xs = _scan_split(avals, num_consts, num_carry)
    body_in = jaxpr.in_avals
    x_avals = [ShapedArray(a.shape[1:], a.dtype, a.weak_type) for a in xs]
    if not _same_types(body_in, list(consts) + list(carry) + x_avals):
        raise TypeError(f"scan: body takes {_types_str(body_in)}, operands give "
                        f"{_types_str(list(consts) + list(carry) + x_avals)}")
    if any(a.shape[:1] != (length,) for a in xs):
        raise TypeError(f"scan: xs must have leading size {length}")
    outs = jaxpr.out_avals
    return list(outs[:num_carry]) + [ShapedArray((length,) + a.shape, a.dtype, a.weak_type)
                                     for a in outs[num_carry:]]


@memoize_on_jaxpr
def _scan_jvp_jaxprs(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, consts_has: tuple,
                     carry_has: Sequence[bool], xs_has: tuple):
    """The two scans of a scan's JVP, built once per body and tangent pattern: a primal scan
    whose extra ys are the residuals that change per iteration, and a tangent scan linear
    in the tangents.  Returns None if no tangent can be non-zero, else ``(carry_has,
    out_has, primal_jaxpr, primal_consts, invariant, tangent_jaxpr, tangent_consts)``;
    ``invariant[k]`` is the index among the primal scan's constants of residual ``k`` when it
    is a loop constant (it is then not stacked), else None."""
    n_ys = len(jaxpr.out_avals) - num_carry
    carry_has = list(carry_has)
    while True:  # which carry tangents can become non-zero: a fixpoint
        _, out_has = jaxpr_transforms.jvp_jaxpr(jaxpr, list(consts_has) + carry_has + list(xs_has))
        new = [a or b for a, b in zip(carry_has, out_has[:num_carry])]
        if new == carry_has:
            break
        carry_has = new
    has_t = list(consts_has) + carry_has + list(xs_has)
    if not any(has_t):
        return None
    primal, tangent, out_has, num_res = jaxpr_transforms.linearize_jaxpr(
        jaxpr, has_t, carry_has + [False] * n_ys)

    # Primal scan: residuals come out as extra ys, except those that are loop constants.
    pjaxpr, pconsts = closure_convert(primal)
    pj = pjaxpr.jaxpr
    n_pc = len(pconsts) + num_consts
    const_vars = {id(v): k for k, v in enumerate(pj.invars[:n_pc])}
    res_vars = pj.outvars[num_carry + n_ys:]
    invariant = [const_vars.get(id(v)) for v in res_vars]
    primal_jaxpr = ClosedJaxpr(Jaxpr([], pj.invars, pj.eqns, pj.outvars[:num_carry + n_ys] + [
        v for v, k in zip(res_vars, invariant) if k is None]), [])

    # Tangent scan over (invariant residuals, const tangents | carry tangents | per-iteration
    # residuals, xs tangents), linear in the tangents.
    tjaxpr, tconsts = closure_convert(tangent)
    tj = tjaxpr.jaxpr
    n_tc = len(tconsts)
    res_in, t_in = tj.invars[n_tc:n_tc + num_res], tj.invars[n_tc + num_res:]
    n_ct, n_cr = sum(consts_has), sum(carry_has)
    invars = (tj.invars[:n_tc] + [v for v, k in zip(res_in, invariant) if k is not None]
              + t_in[:n_ct] + t_in[n_ct:n_ct + n_cr]
              + [v for v, k in zip(res_in, invariant) if k is None] + t_in[n_ct + n_cr:])
    tangent_jaxpr = ClosedJaxpr(Jaxpr([], invars, tj.eqns, tj.outvars), [])
    return carry_has, out_has, primal_jaxpr, pconsts, invariant, tangent_jaxpr, tconsts


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, carry, xs = _scan_split(primals, num_consts, num_carry)
    consts_t, carry_t, xs_t = _scan_split(tangents, num_consts, num_carry)
    n_ys = len(jaxpr.out_avals) - num_carry
    built = _scan_jvp_jaxprs(jaxpr, num_consts, num_carry,
                             [type(t) is not Zero for t in consts_t],
                             [type(t) is not Zero for t in carry_t],
                             [type(t) is not Zero for t in xs_t])
    if built is None:
        outs = scan_p.bind(*primals, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry,
                           length=length, reverse=reverse, unroll=unroll)
        return outs, [Zero.from_value(o) for o in outs]
    carry_has, out_has, primal_jaxpr, pconsts, invariant, tangent_jaxpr, tconsts = built
    outs = scan_p.bind(*pconsts, *consts, *carry, *xs, jaxpr=primal_jaxpr,
                       num_consts=len(pconsts) + num_consts, num_carry=num_carry,
                       length=length, reverse=reverse, unroll=unroll)
    carry_out, ys, stacked_res = outs[:num_carry], outs[num_carry:num_carry + n_ys], iter(
        outs[num_carry + n_ys:])
    all_consts = list(pconsts) + list(consts)
    inv_values = [all_consts[k] for k in invariant if k is not None]
    live_consts_t = [t for t in consts_t if type(t) is not Zero]
    live_carry_t = [ad.instantiate(t, p) for t, p, h in zip(carry_t, carry, carry_has) if h]
    live_xs_t = [t for t in xs_t if type(t) is not Zero]
    variant_res = [next(stacked_res) for k in invariant if k is None]
    t_outs = scan_p.bind(*tconsts, *inv_values, *live_consts_t, *live_carry_t, *variant_res,
                         *live_xs_t, jaxpr=tangent_jaxpr,
                         num_consts=len(tconsts) + len(inv_values) + len(live_consts_t),
                         num_carry=len(live_carry_t), length=length, reverse=reverse,
                         unroll=unroll)
    t_iter = iter(t_outs)
    tangents_out = [next(t_iter) if h else Zero.from_value(p)
                    for h, p in zip(out_has[:num_carry], carry_out)]
    tangents_out += [next(t_iter) if h else Zero.from_value(y)
                     for h, y in zip(out_has[num_carry:], ys)]
    return list(carry_out) + list(ys), tangents_out


@memoize_on_jaxpr
def _scan_transpose_jaxpr(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                          consts_lin: tuple, xs_lin: tuple):
    """The body of a transposed scan, built once per body and linearity pattern.  It runs
    backwards over (transposed body constants, known constants | accumulated cotangents
    of linear constants, carry cotangents | known xs, cotangents of ys).  Returns
    ``(body, body_consts, linear_const_avals)``."""
    body_t = jaxpr_transforms.transpose_jaxpr(
        jaxpr, list(consts_lin) + [True] * num_carry + list(xs_lin))
    bj, bconsts = closure_convert(body_t)
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    known_const_avals = [a for a, lin in zip(in_avals[:num_consts], consts_lin) if not lin]
    lin_const_avals = [core.tangent_aval(a) for a, lin in zip(in_avals[:num_consts], consts_lin)
                       if lin]
    x_avals = [a.strip_weak_type() for a, lin in zip(in_avals[num_consts + num_carry:], xs_lin)
               if not lin]
    n_bc, n_kc, n_acc, n_kx = len(bconsts), len(known_const_avals), len(lin_const_avals), \
        len(x_avals)
    n_lin_x = sum(xs_lin)

    def body(*a):
        bc, kc = a[:n_bc], a[n_bc:n_bc + n_kc]
        acc = a[n_bc + n_kc:n_bc + n_kc + n_acc]
        ctc = a[n_bc + n_kc + n_acc:n_bc + n_kc + n_acc + num_carry]
        rest = a[n_bc + n_kc + n_acc + num_carry:]
        kx, cty = rest[:n_kx], rest[n_kx:]
        outs = eval_jaxpr(bj.jaxpr, [], *bc, *kc, *kx, *ctc, *cty)
        ct_c, ct_carry_in, ct_x = outs[:n_acc], outs[n_acc:n_acc + num_carry], outs[
            n_acc + num_carry:]
        assert len(ct_x) == n_lin_x
        return [add(a_, c) for a_, c in zip(acc, ct_c)] + list(ct_carry_in) + list(ct_x)

    avals = ([get_aval(c) for c in bconsts] + known_const_avals + lin_const_avals
             + [core.tangent_aval(a) for a in out_avals[:num_carry]] + x_avals
             + [core.tangent_aval(a) for a in out_avals[num_carry:]])
    closed, k = closure_convert(trace_to_jaxpr(body, avals)[0])
    return closed, list(k) + list(bconsts), lin_const_avals


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll):
    consts, carry, xs = _scan_split(args, num_consts, num_carry)
    consts_lin = [is_undefined_primal(x) for x in consts]
    xs_lin = [is_undefined_primal(x) for x in xs]
    # The carry is linear (a known carry is an instantiated zero tangent: its cotangent is
    # computed like the others' and dropped).
    witness = ad.device_witness([*cts, *args])
    cts = _instantiate_cts(cts, _scan_abstract_eval(
        *[x.aval if is_undefined_primal(x) else get_aval(x) for x in args], jaxpr=jaxpr,
        num_consts=num_consts, num_carry=num_carry, length=length, reverse=reverse,
        unroll=unroll), witness)
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    body, body_consts, lin_const_avals = _scan_transpose_jaxpr(jaxpr, num_consts, num_carry,
                                                               consts_lin, xs_lin)
    known_consts = [x for x, lin in zip(consts, consts_lin) if not lin]
    known_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    n_acc = len(lin_const_avals)
    acc0 = [ad.zeros(a, witness) for a in lin_const_avals]
    outs = scan_p.bind(*body_consts, *known_consts, *acc0, *ct_carry, *known_xs, *ct_ys,
                       jaxpr=body, num_consts=len(body_consts) + len(known_consts),
                       num_carry=n_acc + num_carry, length=length, reverse=not reverse,
                       unroll=unroll)
    ct_consts = iter(outs[:n_acc])
    ct_init = outs[n_acc:n_acc + num_carry]
    ct_xs = iter(outs[n_acc + num_carry:])
    return ([next(ct_consts) if lin else None for lin in consts_lin]
            + [ct if is_undefined_primal(x) else None for ct, x in zip(ct_init, carry)]
            + [next(ct_xs) if lin else None for lin in xs_lin])


def _scan_batch(vals, dims, *, jaxpr, num_consts, num_carry, length, reverse, unroll):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    consts, carry, xs = _scan_split(vals, num_consts, num_carry)
    cdims, _, xdims = _scan_split(dims, num_consts, num_carry)
    carry = [bdim_to_front(x, d, size) for x, d in zip(carry, dims[num_consts:])]
    # Put each batched x's batch axis at 1, so that every slice x[i] is batched at 0.
    xs = [x if d is not_mapped else moveaxis(x, d, 1) for x, d in zip(xs, xdims)]
    body_dims = list(cdims) + [0] * num_carry + [not_mapped if d is not_mapped else 0
                                                 for d in xdims]
    body, _ = jaxpr_transforms.batch_jaxpr(jaxpr, size, body_dims)
    body, k = closure_convert(body)
    outs = scan_p.bind(*k, *consts, *carry, *xs, jaxpr=body, num_consts=len(k) + num_consts,
                       num_carry=num_carry, length=length, reverse=reverse, unroll=unroll)
    return outs, [0] * num_carry + [1] * (len(outs) - num_carry)


impl_rules[scan_p] = _scan_impl
codegen.deflowering(scan_p, _scan_lowering, fresh=False)
abstract_eval_rules[scan_p] = _scan_abstract_eval
ad.jvp_rules[scan_p] = _scan_jvp
transpose.deftranspose(scan_p, _scan_transpose)
batching.batching_rules[scan_p] = _scan_batch

# ------------------------------------------------------------------------------------------
# fori_loop
# ------------------------------------------------------------------------------------------


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """``for i in range(lower, upper): val = body_fun(i, val)``.  With concrete bounds it
    lowers to ``scan`` (reverse-differentiable); with traced bounds to ``while_loop``.

    >>> import functrans.lax as lax
    >>> float(lax.fori_loop(0, 4, lambda i, x: x + i, 0.0))
    6.0
    """
    if _is_concrete(lower) and _is_concrete(upper):
        lo, hi = int(lower), int(upper)

        def step(carry, _):
            i, val = carry
            return (add(i, 1), body_fun(i, val)), None

        (_, out), _ = _scan(step, (np.int64(lo), init_val), None, builtins.max(hi - lo, 0),
                            False, 1 if unroll is None else unroll, key=body_fun,
                            name="fori_loop")
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("fori_loop: unroll= needs loop bounds known at trace time (Python "
                         f"or concrete integers), got lower={lower!r}, upper={upper!r}")

    def body(carry):
        i, hi, val = carry
        return add(i, 1), hi, body_fun(i, val)

    _, _, out = _while_loop(_fori_cond, body, (convert_element_type(lower, np.int64),
                                               convert_element_type(upper, np.int64), init_val),
                            body_fun, "fori_loop")
    return out


def _fori_cond(carry):
    return lt(carry[0], carry[1])
