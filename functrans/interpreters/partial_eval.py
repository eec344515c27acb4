"""Jaxpr tracing: record the primitives applied to abstract values as a jaxpr.

A ``JaxprTrace`` owns a builder that appends one equation per primitive bound to its
tracers, so equations are always in a valid (topological) order and building a jaxpr needs
no graph walk.  Values from outside the trace (arrays, tracers of enclosing transforms)
become constvars; scalars become literals.

Installed as the *dynamic* trace (``make_jaxpr``), it also stages operations on constants.
Installed as an ordinary trace under a JVP (``linearize``), it records exactly the
operations that touch tangents: everything else is evaluated right away by the traces
below, which is partial evaluation with the known values as residuals.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from functrans import core
from functrans.array_types import Array, WeakArray
from functrans.backend import is_array, memory_owner
from functrans.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray,
                            Trace, Tracer, Var, abstract_eval_rules, get_aval)


class JaxprTracer(Tracer):
    # Not named `var`: that would hide the array method `x.var()`.
    __slots__ = ("aval", "binder")

    def __init__(self, trace: JaxprTrace, aval: ShapedArray, binder: Var):
        self._trace = trace
        self.aval = aval  # type: ignore[misc]  # a slot replaces Tracer's abstract property
        self.binder = binder


def _is_literal(x) -> bool:
    return core.is_python_scalar(x) or isinstance(x, np.generic) or (
        type(x) is np.ndarray and x.ndim == 0)


#: primitive -> rule(trace, args, params) used instead of recording the equation when a
#: JaxprTrace stages a *linear* jaxpr (linearize): for primitives that cannot be transposed
#: (e.g. while_loop), the rule raises an error explaining what to use instead; a call
#: primitive (jit) splits itself into a part it computes now and a linear part it stages
#: (``trace.stage``).  Called with ``trace=None`` and the equation's variables as ``args``
#: when a staged jaxpr is checked for linearity (``partial_eval_jaxpr(linear=True)``).
linear_staging_rules: dict[Primitive, Callable] = {}


class JaxprTrace(Trace):
    __slots__ = ("eqns", "invars", "constvar_of", "constvars", "consts", "linear", "produced",
                 "originals")
    transforms = "make_jaxpr, eval_shape, linearize, vjp, grad, lax control flow"

    def __init__(self, level: int, linear: bool = False, produced: dict | None = None):
        super().__init__(level)
        self.linear = linear  # staging the tangent computation of linearize
        # For vjp and linearize, whose linear jaxpr outlives the call: the arrays computed
        # during the call (RecordingEvalTrace.produced).  Other mutable arrays captured as
        # constants belong to the caller, who may change them later: they are copied.
        self.produced = produced
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvar_of: dict[int, Var] = {}  # id(const) -> its constvar
        self.constvars: list[Var] = []
        self.consts: list = []  # keeps the constants alive, so their ids stay unique
        self.originals: list = []  # likewise for constants that were copied

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, aval, var)

    def atom(self, x):
        """The jaxpr atom standing for a value: a var, a constvar or a literal."""
        if type(x) is JaxprTracer and x._trace is self:
            return x.binder
        if type(x) is WeakArray and x.ndim == 0:  # the Python scalar it stands for
            x = x.item()
        if (type(x) is not np.ndarray or x.ndim == 0) and _is_literal(x):
            if self.produced is not None and type(x) is np.ndarray:
                x = x.copy()  # a 0-d array is mutable too
            return Literal(x, get_aval(x))
        var = self.constvar_of.get(id(x))
        if var is None:
            var = self.constvar_of[id(x)] = Var(get_aval(x))
            self.constvars.append(var)
            if self.produced is not None and _callers_mutable_array(x, self.produced):
                self.originals.append(x)
                x = x.copy()
            self.consts.append(x)
        return var

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        if self.linear and prim in linear_staging_rules:
            return linear_staging_rules[prim](self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim: Primitive, args: Sequence, params: dict):
        """Record ``prim`` applied to ``args`` as an equation; its results are tracers."""
        invars = [x.binder if type(x) is JaxprTracer and x._trace is self else self.atom(x)
                  for x in args]
        try:
            rule = abstract_eval_rules[prim]
        except KeyError:
            rule = prim.abstract_eval  # raises the usual error
        out = rule(*[a.aval for a in invars], **params)
        if not prim.multiple_results:  # the common case, without the lists
            var = Var(out)
            self.eqns.append(JaxprEqn(prim, invars, params, [var]))
            return JaxprTracer(self, out, var)
        outs = [JaxprTracer(self, aval, Var(aval)) for aval in out]
        self.eqns.append(JaxprEqn(prim, invars, params, [t.binder for t in outs]))
        return outs

    def to_jaxpr(self, outs: Sequence) -> tuple[Jaxpr, list]:
        """The jaxpr from this trace's arguments to ``outs``, with dead equations removed."""
        outvars = [self.atom(x) for x in outs]
        eqns, used = _live_equations(self.eqns, outvars)
        kept = [(v, c) for v, c in zip(self.constvars, self.consts) if v in used]
        return Jaxpr([v for v, _ in kept], self.invars, eqns, outvars), [c for _, c in kept]


def _callers_mutable_array(x, produced: dict) -> bool:
    """Whether ``x`` is an array whose memory the caller can change: its owner is
    writeable (views of it may be read-only) and was not computed during this call."""
    if type(x) is not np.ndarray and type(x) is not Array:  # (an Array: a NumPy view)
        return is_array(x)  # CuPy: mutable; its arrays are not recorded as produced
    root = memory_owner(x)
    if type(root) is np.ndarray and not root.flags.writeable:
        return False
    ref = produced.get(id(root))
    return ref is None or ref() is not root


def unshare_outputs(consts: list, outputs: Sequence) -> list:
    """``consts``, with a copy of each array sharing memory with an output: outputs are
    handed to the caller, who may change them."""
    roots = {id(memory_owner(o)) for o in outputs if is_array(o)}
    if not roots:
        return consts
    return [c.copy() if is_array(c) and id(memory_owner(c)) in roots else c for c in consts]


def dead_code_elimination(eqns: list[JaxprEqn], outvars: list) -> list[JaxprEqn]:
    """The equations needed to compute ``outvars`` or having effects
    (``core.eqn_has_effects``), in order."""
    return _live_equations(eqns, outvars)[0]


def _live_equations(eqns: list[JaxprEqn], outvars: list) -> tuple[list[JaxprEqn], set]:
    """The equations needed to compute ``outvars`` or having effects, in order, and the
    atoms they read (``outvars`` included)."""
    # Vars and Literals hash by identity, so they are their own keys.
    live = set(outvars)
    kept = []
    for eqn in reversed(eqns):
        outs = eqn.outvars
        if ((outs[0] in live) if len(outs) == 1 else not live.isdisjoint(outs)) or (
                core.eqn_has_effects(eqn)):
            kept.append(eqn)
            live.update(eqn.invars)
    kept.reverse()
    return kept, live


def trace_to_jaxpr(flat_fun: Callable, in_avals: Sequence[ShapedArray]
                   ) -> tuple[ClosedJaxpr, list[ShapedArray]]:
    """Trace ``flat_fun`` (a function of a flat list of arrays, returning a flat list) on
    abstract values and return its closed jaxpr.  Operations on constants are staged too."""
    with core.new_trace(JaxprTrace, dynamic=True) as trace:
        args = [trace.new_arg(aval) for aval in in_avals]
        outs = flat_fun(*args)
        jaxpr, consts = trace.to_jaxpr(outs)
        del args, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return ClosedJaxpr(jaxpr, consts), jaxpr.out_avals


def closure_convert(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Turn a closed jaxpr's constants into leading arguments: ``(jaxpr, consts)`` with
    ``jaxpr`` taking ``consts + args``.  Higher-order primitives pass constants (which may
    be tracers of enclosing transforms) as ordinary operands this way."""
    jaxpr = closed.jaxpr
    return (ClosedJaxpr(Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.eqns, jaxpr.outvars), []),
            list(closed.consts))
