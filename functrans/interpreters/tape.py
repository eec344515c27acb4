"""Recording the forward pass on a tape: one interpreter layer per operation.

Type of the transform here::

    record_flat : (f, primals) -> (f(primals), tape)    a tape: a jaxpr and its variables' values

``linearize`` runs three interpreter layers per operation (the JVP rule, staging its
tangent equations, evaluation).  A ``TapeTrace`` evaluates each operation and appends it
to a jaxpr whose variables all have known values, one layer per operation as in HIPS
autograd.  The gradient of a tape depends only on its structure, so
``functrans.reverse_mode`` (the planner, which decides when to record) compiles it once
per structure and runs it on the recorded values.

What the function sees is what it sees under ``linearize``: tracers with concrete values
(Python control flow works), and plain values for results that carry no derivative
(integer and boolean results, ``stop_gradient`` and other zero-derivative operations,
``Primitive.zero_derivative``).  Operations whose rules are a user's code
(``Primitive.origin``: a user's ``custom_jvp``/``custom_vjp`` function, a user's primitive)
must run those rules on every call, as ``linearize`` does: recording stops there
(``NotRecordable``) and the planner differentiates the call the usual way.  So it does
before an operation with effects (``core.Primitive.effectful``: ``debug.print``, a loop
whose body prints), which must run exactly once per call.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from functrans import core
from functrans.array_types import WEAK_ARRAY_TYPES, Array, WeakArray
from functrans.core import (Jaxpr, JaxprEqn, Literal, Primitive, Trace, SCALAR_AVALS, Tracer, Var, abstract_eval_rules, get_aval)
from functrans.interpreters import batching, partial_eval
from functrans.interpreters.transpose import NUMPY_SCALARS


class NotRecordable(BaseException):
    """Recording met user code: differentiate this call the usual way.  A BaseException,
    so that a transformed function's own ``except Exception`` does not swallow it."""


class TapeTracer(Tracer):
    __slots__ = ("value", "var")

    def __init__(self, trace: TapeTrace, value, var: Var):
        self._trace = trace
        self.value = value
        self.var = var

    @property
    def aval(self):
        return self.var.aval

    def device_witness(self):
        value = self.value
        return value.device_witness() if isinstance(value, Tracer) else value

    def to_concrete_value(self, context: str):
        # Concrete outside transforms; above a vmap, the vmap's tracer says why it is not.
        value = self.value
        return value.to_concrete_value(context) if isinstance(value, Tracer) else value


_REFUSE, _RECORD, _CONSTANT = 0, 1, 2


def _kind(prim: Primitive) -> int:
    """What recording does with ``prim``: _REFUSE it (its rules are a user's code), _RECORD
    it, or evaluate it as a _CONSTANT (a zero-derivative operation, as under linearize)."""
    if prim.origin != "library":
        return _REFUSE
    return _CONSTANT if prim.zero_derivative else _RECORD


class TapeTrace(Trace):
    __slots__ = ("eqns", "invars", "inputs", "constvar_of", "constvars", "consts",
                 "values", "nbytes", "refused", "batched")
    transforms = "grad"

    def __init__(self, level: int, batched: bool = False):
        super().__init__(level)
        # above a vmap (per-example gradients): values are that vmap's tracers (or
        # constants), evaluated by binding to it
        self.batched = batched
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.inputs: list = []  # the values of invars
        self.constvar_of: dict[int, Var] = {}  # id(const) -> its constvar
        self.constvars: list[Var] = []
        self.consts: list = []  # the values of constvars (kept alive: ids stay unique)
        self.values: list = []  # the values of the equations' results, in order
        self.nbytes = 0
        self.refused: str | None = None

    def refuse(self, what: str):
        """Stop recording: ``what`` runs user code."""
        self.refused = what
        raise NotRecordable(what)

    def new_arg(self, value):
        if type(value) is Array:  # impls compute on plain ndarrays (core.EvalTrace)
            value = value.view(np.ndarray)
        elif type(value) in WEAK_ARRAY_TYPES:  # the tape's tracers are strongly typed
            self.refuse("a weakly typed argument")
        var = Var(value.aval if isinstance(value, Tracer) else get_aval(value))
        self.invars.append(var)
        self.inputs.append(value)
        # As under linearize, an integer argument has no tangent: it stays a plain value.
        return TapeTracer(self, value, var) if var.aval.dtype.kind in "fc" else value

    def atom(self, x):
        """The jaxpr atom of a value from outside the tape: a literal or a constvar."""
        if type(x) is WeakArray and x.ndim == 0:  # the Python scalar it stands for
            x = x.item()
        aval = SCALAR_AVALS.get(type(x))
        if aval is not None:
            return Literal(x, aval)
        if type(x) is not np.ndarray or x.ndim == 0:
            if partial_eval._is_literal(x):
                return Literal(x, get_aval(x))
        var = self.constvar_of.get(id(x))
        if var is None:
            var = self.constvar_of[id(x)] = Var(get_aval(x))
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim: Primitive, args: Sequence, params: dict):
        kind = _kind(prim)
        if self.refused or not kind:
            self.refuse(self.refused or f"primitive '{prim.name}'")
        if params and core.binding_has_effects(prim, params) or prim.effectful:
            # Before the effect happens: the call is differentiated the usual way, which
            # runs each effect once (a tape is evaluated again when linearized, and its
            # compiled gradient would run a loop body again).
            self.refuse(f"the effects of primitive '{prim.name}'")
        values, atoms = [], []
        weak = scalars = False
        for x in args:
            if type(x) is TapeTracer and x._trace is self:
                values.append(x.value)
                atoms.append(x.var)
            else:
                atoms.append(self.atom(x))
                t = type(x)
                if t is float or t is int or t is complex:
                    scalars = True
                elif t in WEAK_ARRAY_TYPES:
                    weak = True
                values.append(x.view(np.ndarray) if t is Array else x)
        if self.batched:
            out = prim.bind(*values, **params)
        elif weak or scalars and not core.numpy_promotes_weakly(prim, values):
            # the types abstract evaluation gives (core.EvalTrace's way)
            out = core.evaluate_weak(prim, core.impl_rules[prim], values, params, False)
        else:
            try:  # core.EvalTrace.process_primitive, for what a tape meets
                out = core.impl_rules[prim](*values, **params)
            except Exception as error:
                core.explain_failure(prim, values, params, error)
                raise
        if kind is _CONSTANT:  # to what follows, as under linearize
            return out if self.counter.internal else core.handed_to_caller(out)
        if (type(out) is np.ndarray or type(out) in NUMPY_SCALARS) and (
                "weak_type" not in params):
            # An operation on a tracer (never weakly typed here) has the type of its
            # result; tests check this against abstract evaluation (test_tape.py).
            if out.dtype.kind not in "fc":
                return out if self.counter.internal else core.handed_to_caller(out)
            var = Var(get_aval(out))
            self.nbytes += out.nbytes
        else:
            aval = abstract_eval_rules[prim](*[a.aval for a in atoms], **params)
            if prim.multiple_results:
                outvars = [Var(a) for a in aval]
                self.eqns.append(JaxprEqn(prim, atoms, params, outvars))
                self.values.extend(out)
                self.nbytes += sum(_nbytes(o) for o in out)
                outs = [TapeTracer(self, o, v) if v.aval.dtype.kind in "fc" else o
                        for o, v in zip(out, outvars)]
                return outs if self.counter.internal else core.handed_to_caller(outs)
            if aval.dtype.kind not in "fc":
                return out if self.counter.internal else core.handed_to_caller(out)
            var = Var(aval)
            self.nbytes += _nbytes(out)
        self.eqns.append(JaxprEqn(prim, atoms, params, [var]))
        self.values.append(out)
        return TapeTracer(self, out, var)


def _nbytes(x) -> int:
    return getattr(x.val if type(x) is batching.BatchTracer else x, "nbytes", 8)


def current_tape() -> TapeTrace | None:
    """The tape recording this call, if one is."""
    for trace in core.trace_stack():
        if type(trace) is TapeTrace:
            return trace
    return None


class Tape:
    """A recorded call: the jaxpr and the values of its constants, arguments and results."""

    __slots__ = ("jaxpr", "consts", "inputs", "values", "nbytes", "batched")

    def __init__(self, jaxpr: Jaxpr, consts: list, inputs: list, values: list, nbytes: int,
                 batched: bool):
        self.jaxpr, self.consts, self.inputs, self.values = jaxpr, consts, inputs, values
        self.nbytes, self.batched = nbytes, batched


def record_flat(fun: Callable, primals: Sequence, batched: bool = False
                ) -> tuple[list, Tape]:
    """Run ``fun`` (flat list in, flat list out) on ``primals`` and record it: the output
    values and the tape.  Raises ``NotRecordable`` when it meets user code.  ``batched``:
    the values are tracers of the vmap below (``TapeTrace.batched``)."""
    with core.new_trace(TapeTrace, batched) as trace:
        ins = [trace.new_arg(p) for p in primals]
        outs = fun(*ins)
        if trace.refused:  # the function caught NotRecordable and went on
            raise NotRecordable(trace.refused)
        outvars = [x.var if type(x) is TapeTracer and x._trace is trace else trace.atom(x)
                   for x in outs]
        values = [x.value if type(x) is TapeTracer and x._trace is trace else x for x in outs]
        tape = Tape(Jaxpr(trace.constvars, trace.invars, trace.eqns, outvars), trace.consts,
                    trace.inputs, trace.values, trace.nbytes, batched)
        del ins, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return values, tape
