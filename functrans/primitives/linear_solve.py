"""Implicitly differentiated solvers: ``custom_linear_solve`` and ``custom_root``.

Both are higher-order primitives whose params hold closed jaxprs (their constants passed as
leading operands, as in ``control_flow``), so every transform sees what the user's
functions close over.  Their derivatives come from the equation the solution satisfies,
never from the iterations of the solver, which may be a ``while_loop`` that reverse mode
could not go through:

* ``custom_linear_solve``: ``A x = b`` gives ``dx = A⁻¹ (db - dA x)``, itself a linear
  solve of the same system, so its transpose is a solve of the transposed system
  (``transpose_solve`` with the transposed ``matvec``, ``vecmat``);
* ``custom_root``: ``f(θ, x*) = 0`` gives ``dx* = -(∂ₓf)⁻¹ ∂_θf dθ``, computed by the
  user's ``tangent_solve`` on the linearization of ``f`` at the root.

Types::

    custom_linear_solve : (matvec: x -> A x, b, solve: (matvec, b) -> x) -> x
    custom_root         : (f: x -> residual, x0, solve: (f, x0) -> x*,
                           tangent_solve: (g: linear map, y) -> z with g(z) = y) -> x*
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, NamedTuple

from functrans.core import (ClosedJaxpr, Primitive, Tracer, abstract_eval_rules, eval_jaxpr,
                            get_aval, impl_rules)
from functrans import jaxpr_transforms
from functrans.interpreters import ad, batching, codegen, tape, transpose
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.transpose import is_undefined_primal
from functrans.jaxpr_transforms import trace_function
from functrans.primitives.elementwise import neg, sub
from functrans.primitives.shape import bdim_to_front, shape_of
from functrans.tree_util import tree_flatten, tree_structure, tree_unflatten

#: what functrans.lax re-exports from this family (other names without an underscore
#: are the package's)
__all__ = ["custom_linear_solve", "custom_root"]


def _types(avals) -> str:
    return "(" + ", ".join(a.str_short() for a in avals) + ")"


def _same_type(a, b) -> bool:
    return a.shape == b.shape and (a.dtype == b.dtype or a.weak_type or b.weak_type)


def _split_aux(api: str, role: str, out_tree, has_aux: bool, want_tree):
    """The number of leaves of ``role``'s main output, after checking its structure: that
    of ``want_tree``, or ``(that, aux)`` with ``has_aux``."""
    if not has_aux:
        if out_tree != want_tree:
            raise TypeError(f"{api}: {role} must return the structure of its argument "
                            f"{want_tree}, got {out_tree}")
        return out_tree.num_leaves
    out = tree_unflatten(out_tree, list(range(out_tree.num_leaves)))
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{api}: with has_aux=True, {role} must return a pair (solution, "
                        f"aux), got the structure {out_tree}")
    main_tree = tree_structure(out[0])
    if main_tree != want_tree:
        raise TypeError(f"{api}: {role} must return a solution of the structure of its "
                        f"argument {want_tree}, got {main_tree}")
    return main_tree.num_leaves


def _check_types(api: str, role: str, got, want, what: str) -> None:
    # a ValueError, as JAX's for outputs of the wrong shapes
    if len(got) != len(want) or not all(_same_type(g, w) for g, w in zip(got, want)):
        raise ValueError(f"{api}: {role} must return arrays of the shapes and dtypes of "
                        f"{what} {_types(want)}, got {_types(got)}")


def _jaxpr_fun(closed: ClosedJaxpr, consts, tree) -> Callable:
    """A Python function of one pytree of structure ``tree`` evaluating ``closed`` with
    ``consts`` as its leading operands (its result rebuilt as ``tree``)."""
    def fun(x):
        leaves, got = tree_flatten(x)
        if got != tree:
            raise TypeError(f"expected an argument of structure {tree}, got {got}")
        return tree_unflatten(tree, eval_jaxpr(closed.jaxpr, closed.consts, *consts, *leaves))
    return fun


def _refuse_recording(api: str, consts) -> None:
    """Functions that close over traced values are traced anew on every call, into new
    jaxprs, and a tape (interpreters/tape.py) keys its compiled gradients by the identity
    of the jaxprs in parameters: its structure would never repeat.  Such a call is not
    recorded; it is differentiated by linearizing, as without a tape."""
    recording = tape.current_tape()
    if recording is not None and any(isinstance(c, Tracer) for c in consts):
        recording.refuse(f"{api} of functions closing over traced values")


#: vecmat jaxpr -> {(tree, ids of its constants): (the constants, its Python function)}, so
#: that a transpose_solve given the same vecmat finds its cached trace again
_vecmat_functions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_VECMATS_PER_JAXPR = 4


def _vecmat_fun(vecmat: ClosedJaxpr, consts: list, tree) -> Callable:
    """``_jaxpr_fun(vecmat, consts, tree)``, the same function object for the same jaxpr,
    structure and constants (traced values excepted: they never repeat)."""
    if any(isinstance(c, Tracer) for c in consts):
        return _jaxpr_fun(vecmat, consts, tree)
    known = _vecmat_functions.setdefault(vecmat, {})
    key = (tree, tuple(map(id, consts)))
    entry = known.get(key)
    if entry is None or any(a is not b for a, b in zip(entry[0], consts)):
        entry = known[key] = (tuple(consts), _jaxpr_fun(vecmat, consts, tree))
        while len(known) > _VECMATS_PER_JAXPR:
            del known[next(iter(known))]
    return entry[1]


# ------------------------------------------------------------------------------------------
# custom_linear_solve
# ------------------------------------------------------------------------------------------


class _Solves(NamedTuple):
    """One value per function of a linear solve, in the order of the operands."""
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self) -> "_Solves":
        return _Solves(self.vecmat, self.matvec, self.transpose_solve, self.solve)


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True, origin="library")


def custom_linear_solve(matvec: Callable, b, solve: Callable,
                        transpose_solve: Callable | None = None, symmetric: bool = False,
                        has_aux: bool = False):
    """``solve(matvec, b)``, differentiated as the solution of ``matvec(x) == b``.

    ``matvec`` is a linear function of one pytree shaped like ``b`` (it may close over
    arrays that are differentiated); ``solve(matvec, b)`` returns ``x`` with
    ``matvec(x) == b`` (not checked), and need not be differentiable.  Derivatives use the
    implicit rule: the tangent ``dx`` solves ``A dx = db - dA x`` (another call of
    ``solve``); reverse mode solves the transposed system with
    ``transpose_solve(vecmat, ct)``, where ``vecmat`` is ``matvec``'s transpose, computed
    automatically; with ``symmetric=True`` ``solve`` serves as ``transpose_solve`` and
    ``vecmat`` is ``matvec``.  With ``has_aux``, ``solve`` and ``transpose_solve`` return
    ``(x, aux)``; ``aux`` has no derivative.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> from functrans import lax
    >>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> def x(a, b):
    ...     return lax.custom_linear_solve(lambda v: a @ v, b,
    ...                                    lambda mv, r: fnp.linalg.solve(a, r),
    ...                                    symmetric=True)
    ...
    >>> np.allclose(x(a, np.ones(2)), np.linalg.solve(a, np.ones(2)))
    True
    >>> g = ft.grad(lambda b: x(a, b).sum())(np.ones(2))
    >>> np.allclose(g, np.linalg.solve(a.T, np.ones(2)))
    True
    """
    api = "custom_linear_solve"
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_flat, tree = tree_flatten(b)
    for i, leaf in enumerate(b_flat):
        try:
            aval = get_aval(leaf)
        except TypeError:
            raise TypeError(f"{api}: b must be a pytree of arrays, got the leaf {i} of type "
                            f"{type(leaf).__name__}") from None
        if aval.dtype.kind not in "fc":
            raise TypeError(f"{api}: b must hold floating-point or complex arrays, got the "
                            f"leaf {i} of type {aval.str_short()}")
    b_avals = [get_aval(x) for x in b_flat]
    args_tree = tree_structure((b,))

    matvec_jaxpr, matvec_consts, out_tree = trace_function(matvec, args_tree, b_avals,
                                                           f"{api}/matvec", key=matvec)
    _split_aux(api, "matvec", out_tree, False, tree)
    _check_types(api, "matvec", matvec_jaxpr.out_avals, b_avals, "b")

    def traced_solve(role, fun, operator):
        jaxpr, consts, out_tree = trace_function(
            lambda r: fun(operator, r), args_tree, b_avals,
            f"{api}/{role}{'/aux' if has_aux else ''}")
        n = _split_aux(api, role, out_tree, has_aux, tree)
        _check_types(api, role, jaxpr.out_avals[:n], b_avals, "b")
        return jaxpr, consts, out_tree

    solve_jaxpr, solve_consts, solve_tree = traced_solve("solve", solve, matvec)
    if transpose_solve is None:
        vecmat_jaxpr = tr_solve_jaxpr = None
        vecmat_consts, tr_solve_consts = [], []
    else:
        if symmetric:
            vecmat_jaxpr, vecmat_consts = matvec_jaxpr, matvec_consts
        else:
            n_c = len(matvec_consts)
            try:
                vecmat_jaxpr = jaxpr_transforms.transpose_jaxpr(
                    matvec_jaxpr, [False] * n_c + [True] * len(b_flat))
            except (TypeError, NotImplementedError, KeyError) as error:
                raise TypeError(f"{api}: matvec must be linear in its argument, to be "
                                f"transposed for transpose_solve ({error})") from None
            vecmat_consts = matvec_consts
        if symmetric and transpose_solve is solve:
            tr_solve_jaxpr, tr_solve_consts, tr_tree = solve_jaxpr, solve_consts, solve_tree
        else:
            vecmat = _vecmat_fun(vecmat_jaxpr, vecmat_consts, tree)
            tr_solve_jaxpr, tr_solve_consts, tr_tree = traced_solve(
                "transpose_solve", transpose_solve, vecmat)
        if tr_tree != solve_tree:
            raise TypeError(f"{api}: transpose_solve must return the structure of solve's "
                            f"result {solve_tree}, got {tr_tree}")
    consts = _Solves(matvec_consts, vecmat_consts, solve_consts, tr_solve_consts)
    _refuse_recording(api, [c for cs in consts for c in cs])
    outs = linear_solve_p.bind(
        *[c for cs in consts for c in cs], *b_flat,
        const_lengths=_Solves(*map(len, consts)),
        jaxprs=_Solves(matvec_jaxpr, vecmat_jaxpr, solve_jaxpr, tr_solve_jaxpr))
    return tree_unflatten(solve_tree, outs)


def _split_operands(args, const_lengths):
    """``(constant lists, the rest)``, the constants grouped by the counts in
    ``const_lengths`` (a ``_Solves`` or ``_Roots``) into a tuple of the same type."""
    parts, start = [], 0
    for n in const_lengths:
        parts.append(list(args[start:start + n]))
        start += n
    return type(const_lengths)(*parts), list(args[start:])


def _linear_solve_impl(*args, const_lengths, jaxprs):
    consts, b = _split_operands(args, const_lengths)
    return eval_jaxpr(jaxprs.solve.jaxpr, jaxprs.solve.consts, *consts.solve, *b)


def _compiled(ctx, closed: ClosedJaxpr, name: str) -> Callable:
    """The solver's jaxpr compiled by ``jit``'s code generator, its constants bound."""
    converted, consts = jaxpr_transforms.closure_convert(closed)
    fn = codegen.compile_jaxpr(converted, ctx.library, name, owned_outputs=False).fn
    return functools.partial(fn, *consts) if consts else fn


def _linear_solve_lowering(ctx, *args, const_lengths, jaxprs):
    fn = _compiled(ctx, jaxprs.solve, "linear_solve")
    start = const_lengths.matvec + const_lengths.vecmat
    operands = list(args[start:start + const_lengths.solve]) + list(args[sum(const_lengths):])
    return f"{ctx.bind(fn, 'linear_solve')}({', '.join(operands)})"


def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
    b = avals[sum(const_lengths):]
    takes = jaxprs.matvec.in_avals[const_lengths.matvec:]
    if len(b) != len(takes) or not all(_same_type(a, w) for a, w in zip(b, takes)):
        raise TypeError(f"custom_linear_solve: b has types {_types(b)}, but matvec takes "
                        f"{_types(takes)}")
    return list(jaxprs.solve.out_avals)


def _matvec_tangent(matvec: ClosedJaxpr, consts, consts_dot, x):
    """``dA x``: the tangent of ``matvec(consts, x)`` along the constants' tangents."""
    has = [type(t) is not Zero for t in consts_dot] + [False] * len(x)
    jvp, _ = jaxpr_transforms.jvp_jaxpr(matvec, has, True)
    outs = eval_jaxpr(jvp.jaxpr, jvp.consts, *consts, *x,
                      *[t for t in consts_dot if type(t) is not Zero])
    return outs[len(x):]


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    # A x = b  =>  dA x + A dx = db  =>  dx = A⁻¹ (db - dA x)
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    consts, b = _split_operands(primals, const_lengths)
    consts_dot, b_dot = _split_operands(tangents, const_lengths)
    n = len(b)
    x, aux = outs[:n], outs[n:]
    matvec_live = any(type(t) is not Zero for t in consts_dot.matvec)
    if not matvec_live and all(type(t) is Zero for t in b_dot):
        return outs, [Zero.from_value(o) for o in outs]
    if matvec_live:
        da_x = _matvec_tangent(jaxprs.matvec, consts.matvec, consts_dot.matvec, x)
        rhs = [neg(d) if type(t) is Zero else sub(t, d) for t, d in zip(b_dot, da_x)]
    else:
        rhs = [ad.instantiate(t, v) for t, v in zip(b_dot, b)]
    x_dot = linear_solve_p.bind(*[c for cs in consts for c in cs], *rhs,
                                const_lengths=const_lengths, jaxprs=jaxprs)
    return outs, list(x_dot[:n]) + [Zero.from_value(a) for a in aux]


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("custom_linear_solve: reverse-mode differentiation (grad, vjp, "
                        "jacrev) needs transpose_solve, the solver of the transposed system; "
                        "pass transpose_solve=..., or symmetric=True if matvec is symmetric")
    consts, b = _split_operands(args, const_lengths)
    if any(is_undefined_primal(c) for cs in consts for c in cs):
        raise TypeError("custom_linear_solve is linear only in b: its transpose cannot give "
                        "cotangents of what matvec and the solvers close over")
    n = len(b)
    cts = list(cts[:n])
    if all(type(ct) is Zero for ct in cts):
        return [None] * sum(const_lengths) + [Zero(ct.aval) for ct in cts]
    witness = ad.device_witness([*cts, *args])
    cts = [ad.zeros(ct.aval, witness) if type(ct) is Zero else ct for ct in cts]
    flipped = consts.transpose()
    cts_b = linear_solve_p.bind(*[c for cs in flipped for c in cs], *cts,
                                const_lengths=const_lengths.transpose(),
                                jaxprs=jaxprs.transpose())
    return [None] * sum(const_lengths) + list(cts_b[:n])


def _linear_solve_batch(vals, dims, *, const_lengths, jaxprs):
    # b and x are batched throughout (b broadcast if it was not), so that the four
    # jaxprs agree on which of their arguments and results carry the batch axis.
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    consts, b = _split_operands(vals, const_lengths)
    consts_dims, b_dims = _split_operands(dims, const_lengths)
    b = [bdim_to_front(x, d, size) for x, d in zip(b, b_dims)]
    new_consts, new_jaxprs, new_lengths = _batch_functions(
        jaxprs, consts, consts_dims, [len(b)] * len(jaxprs), size)
    outs = linear_solve_p.bind(*new_consts, *b, const_lengths=_Solves(*new_lengths),
                               jaxprs=_Solves(*new_jaxprs))
    return outs, [0] * len(outs)


def _batch_functions(jaxprs, consts, consts_dims, num_args, size: int):
    """Each closed jaxpr (None: absent) batched over its constants (along ``consts_dims``)
    and its ``num_args`` arguments (all at axis 0): the constants moved to axis 0, flat,
    the batched jaxprs, and how many constants each takes."""
    new_consts: list = []
    new_jaxprs: list = []
    new_lengths: list = []
    for closed, cs, ds, n in zip(jaxprs, consts, consts_dims, num_args):
        if closed is None:
            new_jaxprs.append(None)
            new_lengths.append(0)
            continue
        cs = [c if d is not_mapped else bdim_to_front(c, d, size) for c, d in zip(cs, ds)]
        in_dims = [not_mapped if d is not_mapped else 0 for d in ds] + [0] * n
        batched, _ = jaxpr_transforms.batch_jaxpr(closed, size, in_dims)
        new_jaxprs.append(batched)
        new_consts += cs
        new_lengths.append(len(cs))
    return new_consts, new_jaxprs, new_lengths


impl_rules[linear_solve_p] = _linear_solve_impl
codegen.deflowering(linear_solve_p, _linear_solve_lowering, fresh=False)
abstract_eval_rules[linear_solve_p] = _linear_solve_abstract_eval
ad.jvp_rules[linear_solve_p] = _linear_solve_jvp
transpose.deftranspose(linear_solve_p, _linear_solve_transpose)
batching.batching_rules[linear_solve_p] = _linear_solve_batch


# ------------------------------------------------------------------------------------------
# custom_root
# ------------------------------------------------------------------------------------------

root_p = Primitive("custom_root", multiple_results=True, origin="library")


class _Roots(NamedTuple):
    """One value per function of a root finding, in the order of the operands."""
    f: Any
    solve: Any
    linearize_and_solve: Any


def custom_root(f: Callable, initial_guess, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """``solve(f, initial_guess)``, a root of ``f``, differentiated by the implicit function
    theorem rather than through the iterations of ``solve``.

    ``f`` maps a pytree shaped like ``initial_guess`` to one of the same shape (it may
    close over differentiated arrays, the parameters ``θ`` of ``f(θ, x) = 0``).
    At the root ``x*``, ``dx* = -(∂ₓf)⁻¹ (∂_θf dθ)``, computed as
    ``-tangent_solve(g, ∂_θf dθ)``, where ``g`` is the linear map ``t ↦ ∂ₓf(x*) t`` and
    ``tangent_solve(g, y)`` returns ``z`` with ``g(z) == y`` (for a scalar, ``y / g(1.0)``;
    in general a linear solve such as ``custom_linear_solve``).  ``solve`` need not be
    differentiable; ``tangent_solve`` is differentiated for higher orders.  With
    ``has_aux``, ``solve`` returns ``(root, aux)``; ``aux`` has no derivative.

    >>> import functrans as ft, functrans.numpy as fnp
    >>> from functrans import lax
    >>> def newton(f, x0):
    ...     step = lambda x: x - f(x) / ft.grad(f)(x)
    ...     return lax.fori_loop(0, 20, lambda i, x: step(x), x0)
    ...
    >>> def sqrt(y):
    ...     return lax.custom_root(lambda x: x * x - y, 1.0, newton,
    ...                            lambda g, r: r / g(1.0))
    ...
    >>> round(float(sqrt(2.0)), 12), round(float(ft.grad(sqrt)(2.0)), 12)
    (1.414213562373, 0.353553390593)
    """
    api = "custom_root"
    x_flat, tree = tree_flatten(initial_guess)
    for i, leaf in enumerate(x_flat):
        try:
            aval = get_aval(leaf)
        except TypeError:
            raise TypeError(f"{api}: initial_guess must be a pytree of arrays, got the leaf "
                            f"{i} of type {type(leaf).__name__}") from None
        if aval.dtype.kind not in "fc":
            raise TypeError(f"{api}: initial_guess must hold floating-point or complex "
                            f"arrays, got the leaf {i} of type {aval.str_short()}")
    x_avals = [get_aval(x) for x in x_flat]
    args_tree = tree_structure((initial_guess,))
    n = len(x_flat)

    f_jaxpr, f_consts, out_tree = trace_function(f, args_tree, x_avals, f"{api}/f", key=f)
    _split_aux(api, "f", out_tree, False, tree)
    _check_types(api, "f", f_jaxpr.out_avals, x_avals, "initial_guess")

    solve_jaxpr, solve_consts, solve_tree = trace_function(
        lambda x0: solve(f, x0), args_tree, x_avals,
        f"{api}/solve{'/aux' if has_aux else ''}")
    _split_aux(api, "solve", solve_tree, has_aux, tree)
    _check_types(api, "solve", solve_jaxpr.out_avals[:n], x_avals, "initial_guess")

    jvp_f, _ = jaxpr_transforms.jvp_jaxpr(f_jaxpr, [False] * len(f_consts) + [True] * n, True)

    def linearize_and_solve(x, rhs):
        x_leaves = tree_flatten(x)[0]

        def g(t):
            t_leaves, t_tree = tree_flatten(t)
            if t_tree != tree:
                raise TypeError(f"{api}: the linear map given to tangent_solve takes the "
                                f"structure {tree}, got {t_tree}")
            outs = eval_jaxpr(jvp_f.jaxpr, jvp_f.consts, *f_consts, *x_leaves, *t_leaves)
            return tree_unflatten(tree, outs[n:])
        return tangent_solve(g, rhs)

    ls_jaxpr, ls_consts, ls_tree = trace_function(
        linearize_and_solve, tree_structure((initial_guess, initial_guess)),
        x_avals + x_avals, f"{api}/tangent_solve")
    _split_aux(api, "tangent_solve", ls_tree, False, tree)
    _check_types(api, "tangent_solve", ls_jaxpr.out_avals, x_avals, "initial_guess")

    consts = _Roots(f_consts, solve_consts, ls_consts)
    _refuse_recording(api, [c for cs in consts for c in cs])
    outs = root_p.bind(*[c for cs in consts for c in cs], *x_flat,
                       const_lengths=_Roots(*map(len, consts)),
                       jaxprs=_Roots(f_jaxpr, solve_jaxpr, ls_jaxpr))
    return tree_unflatten(solve_tree, outs)


def _root_impl(*args, const_lengths, jaxprs):
    consts, x0 = _split_operands(args, const_lengths)
    return eval_jaxpr(jaxprs.solve.jaxpr, jaxprs.solve.consts, *consts.solve, *x0)


def _root_lowering(ctx, *args, const_lengths, jaxprs):
    fn = _compiled(ctx, jaxprs.solve, "root")
    start = const_lengths.f
    operands = list(args[start:start + const_lengths.solve]) + list(args[sum(const_lengths):])
    return f"{ctx.bind(fn, 'root')}({', '.join(operands)})"


def _root_abstract_eval(*avals, const_lengths, jaxprs):
    return list(jaxprs.solve.out_avals)


def _root_jvp(primals, tangents, *, const_lengths, jaxprs):
    # f(θ, x*(θ)) = 0  =>  ∂_θf dθ + ∂ₓf dx* = 0  =>  dx* = -(∂ₓf)⁻¹ ∂_θf dθ
    outs = root_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    consts, x0 = _split_operands(primals, const_lengths)
    consts_dot, _ = _split_operands(tangents, const_lengths)
    n = len(x0)
    x = outs[:n]
    if all(type(t) is Zero for t in consts_dot.f):
        return outs, [Zero.from_value(o) for o in outs]
    rhs = _matvec_tangent(jaxprs.f, consts.f, consts_dot.f, x)
    ls = jaxprs.linearize_and_solve
    z = eval_jaxpr(ls.jaxpr, ls.consts, *consts.linearize_and_solve, *x, *rhs)
    return outs, [neg(v) for v in z] + [Zero.from_value(a) for a in outs[n:]]


def _root_batch(vals, dims, *, const_lengths, jaxprs):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    consts, x0 = _split_operands(vals, const_lengths)
    consts_dims, x0_dims = _split_operands(dims, const_lengths)
    x0 = [bdim_to_front(x, d, size) for x, d in zip(x0, x0_dims)]
    new_consts, new_jaxprs, new_lengths = _batch_functions(
        jaxprs, consts, consts_dims, [n * len(x0) for n in (1, 1, 2)], size)
    outs = root_p.bind(*new_consts, *x0, const_lengths=_Roots(*new_lengths),
                       jaxprs=_Roots(*new_jaxprs))
    return outs, [0] * len(outs)


impl_rules[root_p] = _root_impl
codegen.deflowering(root_p, _root_lowering, fresh=False)
abstract_eval_rules[root_p] = _root_abstract_eval
ad.jvp_rules[root_p] = _root_jvp
batching.batching_rules[root_p] = _root_batch
