"""Transposition of linear jaxprs, and reverse mode built from it.

Type of the transforms here::

    backward_pass : (linear jaxpr, residuals, cotangents of outputs) -> cotangents of inputs
    vjp           : (f, primals) -> (f(primals), ct ↦ ctᵀ·∂f(primals))   = linearize, then transpose

A linear primitive has a transpose rule ``rule(ct, *args, **params) -> [ct_arg, ...]`` in
which every linear argument is an ``UndefinedPrimal`` (its value is unknown; only its type
is) and the other arguments are concrete residuals.  A rule returns ``None`` or a ``Zero``
for arguments that get no cotangent.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from functrans import core
from functrans.array_types import Array
from functrans.core import Jaxpr, Literal, Primitive, ShapedArray, get_aval
from functrans.interpreters import ad
from functrans.interpreters.ad import Zero, add_tangents, linearize_flat

#: primitive -> rule(ct, *args, **params) -> list of cotangents, one per argument
transpose_rules: dict[Primitive, Callable] = {}


class UndefinedPrimal:
    """Marks the linear argument of a primitive being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


#: primitive -> why a linear jaxpr holding it cannot be transposed (a loop staged whole by
#: linearize, say): reverse mode refuses it with that explanation, before any work
untransposable: dict[Primitive, str] = {}


def deftranspose(prim: Primitive, rule: Callable) -> None:
    """Register ``rule(ct, *args, **params)`` as the transpose rule of ``prim`` (its JVP is
    registered separately)."""
    transpose_rules[prim] = rule


def deflinear(prim: Primitive, rule: Callable) -> None:
    """Register both rules of a primitive linear in all its arguments: the JVP (the
    primitive applied to the tangents) and ``rule`` as its transpose."""
    ad.deflinear_jvp(prim)
    transpose_rules[prim] = rule


def _check_cotangent(var, ct) -> None:
    expected = var.aval
    t = type(ct)
    if t is np.ndarray or t is Array or t in NUMPY_SCALARS:  # common cases, without an aval
        if ct.shape == expected.shape and ct.dtype == expected.dtype:
            return
    aval = get_aval(ct)
    assert aval.shape == expected.shape and aval.dtype == core.tangent_dtype(expected.dtype), (
        f"transpose produced a cotangent of type {aval.str_short()} for a value of type "
        f"{expected.str_short()}")


#: NumPy scalar types whose values are cotangents often (grad's seed is one)
NUMPY_SCALARS = frozenset({np.float64, np.float32, np.float16, np.complex128, np.complex64})


def _accumulate(ct_env: dict, var, ct) -> None:
    """Add the cotangent ``ct`` to ``var``'s."""
    if ct is None or type(ct) is Zero:
        return
    _check_cotangent(var, ct)
    previous = ct_env.get(var)
    if previous is not None:
        ct = add_tangents(previous, ct)
    ct_env[var] = ct


def backward_pass(jaxpr: Jaxpr, consts: Sequence, args: Sequence, cts_out: Sequence) -> list:
    """Transpose ``jaxpr`` with respect to its arguments marked ``UndefinedPrimal``.

    Equations whose inputs are all known are evaluated forward first; the others (those that
    depend on a linear input) are transposed in reverse order.  Returns one cotangent per
    jaxpr argument (``Zero`` where nothing flowed back).
    """
    assert len(args) == len(jaxpr.invars) and len(cts_out) == len(jaxpr.outvars)
    for ct in cts_out:
        if ct is not None and type(ct) is not Zero:
            break
    else:  # nothing flows back
        return [Zero(core.tangent_aval(v.aval)) if type(x) is UndefinedPrimal else None
                for v, x in zip(jaxpr.invars, args)]
    env = dict(zip(jaxpr.constvars, consts)) if jaxpr.constvars else {}
    linear = set()
    for v, x in zip(jaxpr.invars, args):
        if type(x) is UndefinedPrimal:
            linear.add(v)
        else:
            env[v] = x

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if not linear.isdisjoint(eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            outs = eqn.primitive.bind(*[x.val if type(x) is Literal else env[x]
                                        for x in eqn.invars], **eqn.params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))

    ct_env: dict = {}
    for v, ct in zip(jaxpr.outvars, cts_out):
        if v in linear:
            _accumulate(ct_env, v, ct)

    for eqn in reversed(linear_eqns):
        prim = eqn.primitive
        if prim.multiple_results:
            cts = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(ct is None for ct in cts):
                continue
            ct = [Zero(core.tangent_aval(v.aval)) if c is None else c
                  for v, c in zip(eqn.outvars, cts)]
        else:
            ct = ct_env.pop(eqn.outvars[0], None)
            if ct is None:
                continue
        invars = eqn.invars
        invals = [UndefinedPrimal(x.aval) if x in linear else
                  x.val if type(x) is Literal else env[x] for x in invars]
        try:
            rule = transpose_rules[prim]
        except KeyError:
            if prim in untransposable:
                raise TypeError(untransposable[prim]) from None
            raise NotImplementedError(f"Transpose rule for '{prim.name}' not implemented") from None
        cts_in = rule(ct, *invals, **eqn.params)
        assert len(cts_in) == len(invars), f"transpose of {prim}: wrong number of results"
        for x, ct_in, val in zip(invars, cts_in, invals):
            if ct_in is None or type(val) is not UndefinedPrimal:
                continue
            # _accumulate, inline for the common case: a first, plain cotangent
            t = type(ct_in)
            if (t is np.ndarray or t is Array) and x not in ct_env:
                aval = x.aval
                if ct_in.shape == aval.shape and ct_in.dtype == aval.dtype:
                    ct_env[x] = ct_in
                    continue
            _accumulate(ct_env, x, ct_in)

    return [ct_env[v] if v in ct_env else Zero(core.tangent_aval(v.aval)) if v in linear
            else None for v in jaxpr.invars]


def vjp_flat(fun: Callable, primals: Sequence, snapshot: bool = False
             ) -> tuple[list, Callable]:
    """Reverse mode on flat lists, by linearizing and interpreting the transpose rules: the
    outputs, and a pullback from output cotangents (``Zero`` allowed) to input cotangents
    (``Zero`` where zero).  ``snapshot``: the pullback outlives the call (see
    ``linearize_flat``).  The public transforms go through ``functrans.reverse_mode``,
    which may choose faster plans."""
    primals_out, jaxpr, consts, out_tangents = linearize_flat(fun, primals, snapshot=snapshot)
    return primals_out, linear_pullback(jaxpr, consts, out_tangents)


def check_transposable(jaxpr: Jaxpr) -> None:
    """Refuse, with its explanation, a linear jaxpr holding an ``untransposable``
    primitive."""
    if untransposable:
        for eqn in jaxpr.eqns:
            why = untransposable.get(eqn.primitive)
            if why is not None:
                raise TypeError(why)


def linear_pullback(jaxpr: Jaxpr, consts: Sequence, out_tangents: Sequence) -> Callable:
    """The transpose of a linearization from ``linearize_flat``: a function from one
    cotangent per output (``Zero`` allowed) to one per input (``Zero`` where zero), that
    interprets the transpose rules on every call."""
    check_transposable(jaxpr)
    undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]

    def pullback(cts: Sequence) -> list:
        assert len(cts) == len(out_tangents)
        live_cts = [ct for ct, t in zip(cts, out_tangents) if t is None]
        return backward_pass(jaxpr, consts, undefined, live_cts)

    return pullback
