"""Eager reverse mode from a tape: record the forward pass, run compiled gradient code.

Type of the transforms here::

    record_flat : (f, primals) -> (f(primals), tape)    a tape: a jaxpr and its variables' values
    vjp_flat    : (f, primals) -> (f(primals), pullback)     transpose.vjp_flat, via a tape

``grad(f)(x)`` linearizes ``f``: every operation runs its JVP rule, whose tangent equations
are staged, three interpreter layers per operation.  Called again and again on the same
function (a training loop without jit), ``grad`` records the forward pass instead: each
operation is evaluated and appended to a tape, a jaxpr whose variables all have known
values, one layer per operation as in HIPS autograd.  The gradient of a tape depends only
on its structure (primitives, parameters, wiring, literals and types, keyed as by
``transpose.compiled_backward``), so from a structure's second sighting it is traced once
(the tape linearized and transposed, the recorded values standing for its intermediates)
and compiled to straight-line code (``codegen``); later calls run that code on the recorded
values.  A tape not (yet) compiled is differentiated by linearizing it, which evaluates it
again.

When: ``grad`` (``api.value_and_grad``) records a call when the same function (its code
object) was differentiated before, outside other transforms or directly under a ``vmap``
(per-example gradients: the tape's values are that vmap's tracers, its compiled gradient
is batched), on host arrays; not once its
tapes kept changing structure (``MAX_NEW_STRUCTURES`` in a row), grew past ``MAX_BYTES`` of
recorded values (which stay alive until the gradient is computed, where linearize keeps
only residuals), or met user code.

What the function sees is what it sees under ``linearize``: tracers with concrete values
(Python control flow works), and plain values for results that carry no derivative
(integer and boolean results, ``stop_gradient`` and other zero-derivative operations).
Operations whose rules are user code (a user's ``custom_jvp``/``custom_vjp`` function, a
user's primitive) must run those rules on every call, as ``linearize`` does: recording
stops there (``NotRecordable``), the call is differentiated the usual way from the start
(so the function's Python before that point runs twice, this once), and the function is
not recorded again.
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Sequence

import numpy as np

from functrans import config, core
from functrans.core import (Array, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Primitive, Trace,
                            SCALAR_AVALS, Tracer, Var, abstract_eval_rules, eval_jaxpr,
                            get_aval)
from functrans.interpreters import ad, batching, codegen, partial_eval, transpose
from functrans.interpreters.partial_eval import JaxprTracer
from functrans.interpreters.transpose import HOST_TYPES, NUMPY_SCALARS

#: recorded values (bytes) past which a function is no longer recorded
MAX_BYTES = 1 << 20
#: new tape structures in a row after which a function is no longer recorded
MAX_NEW_STRUCTURES = 3
#: functions (code objects) remembered, and tape structures (least recently used first out)
FUNCTION_CACHE_SIZE = 1024
GRADIENT_CACHE_SIZE = 256


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


#: primitives whose rules are user code.  custom_jvp_call is not among them: a custom_jvp
#: function is refused where it is called (``current_tape().refuse``) unless its rules are
#: the library's own, which are recorded like any operation.
_USER_CODE = frozenset({"custom_lin", "custom_vjp_call"})
_REFUSE, _RECORD, _CONSTANT = 0, 1, 2
#: primitive -> (its JVP rule, what recording does with it: _REFUSE it, _RECORD it, or
#: evaluate it as a _CONSTANT, a zero-derivative operation as under linearize)
_kinds: dict[Primitive, tuple] = {}


def _kind(prim: Primitive) -> int:
    jvp = ad.jvp_rules.get(prim)
    rules = [jvp, core.impl_rules.get(prim), abstract_eval_rules.get(prim)]
    if prim.name in _USER_CODE or not all(
            rule is not None and getattr(rule, "__module__", "").startswith("functrans.")
            for rule in rules):
        kind = _REFUSE
    else:
        kind = _CONSTANT if getattr(jvp, "zero_derivative", False) else _RECORD
    _kinds[prim] = (jvp, kind)
    return kind


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
        var = Var(value.aval if isinstance(value, Tracer) else get_aval(value))
        self.invars.append(var)
        self.inputs.append(value)
        # As under linearize, an integer argument has no tangent: it stays a plain value.
        return TapeTracer(self, value, var) if var.aval.dtype.kind in "fc" else value

    def atom(self, x):
        """The jaxpr atom of a value from outside the tape: a literal or a constvar."""
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
        known = _kinds.get(prim)
        kind = known[1] if known is not None and known[0] is ad.jvp_rules.get(prim) else (
            _kind(prim))
        if self.refused or not kind:
            self.refuse(self.refused or f"primitive '{prim.name}'")
        values, atoms = [], []
        for x in args:
            if type(x) is TapeTracer and x._trace is self:
                values.append(x.value)
                atoms.append(x.var)
            else:
                atoms.append(self.atom(x))
                values.append(x.view(np.ndarray) if type(x) is Array else x)
        if self.batched:
            out = prim.bind(*values, **params)
        else:
            try:  # core.EvalTrace.process_primitive, for what a tape meets
                out = core.impl_rules[prim](*values, **params)
            except Exception as error:
                core.explain_failure(prim, values, params, error)
                raise
        if kind is _CONSTANT:  # to what follows, as under linearize
            return out
        if (type(out) is np.ndarray or type(out) in NUMPY_SCALARS) and (
                "weak_type" not in params):
            # An operation on a tracer (never weakly typed here) has the type of its
            # result; tests check this against abstract evaluation (test_tape.py).
            if out.dtype.kind not in "fc":
                return out
            var = Var(get_aval(out))
            self.nbytes += out.nbytes
        else:
            aval = abstract_eval_rules[prim](*[a.aval for a in atoms], **params)
            if prim.multiple_results:
                outvars = [Var(a) for a in aval]
                self.eqns.append(JaxprEqn(prim, atoms, params, outvars))
                self.values.extend(out)
                self.nbytes += sum(_nbytes(o) for o in out)
                return [TapeTracer(self, o, v) if v.aval.dtype.kind in "fc" else o
                        for o, v in zip(out, outvars)]
            if aval.dtype.kind not in "fc":
                return out
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

    __slots__ = ("jaxpr", "consts", "inputs", "values", "nbytes")

    def __init__(self, jaxpr: Jaxpr, consts: list, inputs: list, values: list, nbytes: int):
        self.jaxpr, self.consts, self.inputs, self.values = jaxpr, consts, inputs, values
        self.nbytes = nbytes


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
                    trace.inputs, trace.values, trace.nbytes)
        del ins, outs, trace  # only leaked tracers may keep the trace alive (core.new_trace)
    return values, tape


# ------------------------------------------------------------------------------------------
# When to record
# ------------------------------------------------------------------------------------------

_SEEN, _NEVER = "seen", "never"
#: code object -> _SEEN, _NEVER, or the number of new structures in a row (an int)
_functions: collections.OrderedDict = collections.OrderedDict()
_lock = threading.Lock()


def _state(key, new=None):
    """The state of function ``key``, after setting it to ``new`` (if given)."""
    with _lock:
        if new is not None:
            _functions[key] = new
            _functions.move_to_end(key)
            if len(_functions) > FUNCTION_CACHE_SIZE:
                _functions.popitem(last=False)
            return new
        return _functions.get(key)


def vjp_flat(fun: Callable, primals: Sequence, key) -> tuple[list, Callable]:
    """``transpose.vjp_flat(fun, primals, compiled=True)`` for ``grad``: through a tape when
    the function identified by ``key`` (its code object) was differentiated before."""
    if key is None or not config.eager_tape:
        return transpose.vjp_flat(fun, primals, compiled=True)
    state = _functions.get(key)
    batched = _recordable(primals)
    if state is None or state is _NEVER or batched is None:
        if state is None:
            _state(key, _SEEN)
        return transpose.vjp_flat(fun, primals, compiled=True)
    try:
        outs, tape = record_flat(fun, primals, batched)
    except NotRecordable:
        _state(key, _NEVER)
        return transpose.vjp_flat(fun, primals, compiled=True)
    if tape.nbytes > MAX_BYTES:
        _state(key, _NEVER)

    def pullback(cts: Sequence) -> list:
        out = compiled_gradient(tape, cts)
        if out is None:
            state = _state(key)
            if state is not _NEVER:  # one more new structure in a row
                misses = (state if type(state) is int else 0) + 1
                _state(key, _NEVER if misses >= MAX_NEW_STRUCTURES else misses)
            return _linearized_pullback(tape)(cts)
        state = _functions.get(key)
        if state != 0 and state is not _NEVER:  # compiled: no new structure in a row
            _state(key, 0)
        return out

    return outs, pullback


def _recordable(primals: Sequence) -> bool | None:
    """Whether ``grad`` at arguments ``primals`` is recorded, and batched: False outside
    transforms on host values, True directly under a vmap (of an unnamed axis) on its
    tracers of host values or host values; None otherwise (linearize then)."""
    if type(core.dynamic_trace()) is not core.EvalTrace:
        return None
    stack = core.trace_stack()
    if len(stack) == 1:
        return False if all(type(p) in HOST_TYPES for p in primals) else None
    if len(stack) != 2 or type(stack[1]) is not batching.BatchTrace or (
            stack[1].axis_name is not None):
        return None
    for p in primals:
        if type(p) is batching.BatchTracer:
            if type(p.val) is not np.ndarray:
                return None
        elif type(p) not in HOST_TYPES:
            return None
    return True


def _linearized_pullback(tape: Tape) -> Callable:
    """The pullback of a tape by linearizing it (which evaluates it again)."""
    jaxpr, consts = tape.jaxpr, tape.consts
    return transpose.vjp_flat(lambda *xs: eval_jaxpr(jaxpr, consts, *xs), tape.inputs,
                              compiled=True)[1]


# ------------------------------------------------------------------------------------------
# Compiled gradients, cached by the tape's structure
# ------------------------------------------------------------------------------------------

_gradients: collections.OrderedDict = collections.OrderedDict()


def _host_value(x):
    """``x`` as generated code takes it (a plain ndarray), or None if it is not a host
    value."""
    t = type(x)
    if t is np.ndarray:
        return x
    if t is Array:
        return x.view(np.ndarray)
    if isinstance(x, np.generic):
        return np.asarray(x)
    return None


def compiled_gradient(tape: Tape, cts: Sequence) -> list | None:
    """The cotangents of the tape's arguments for output cotangents ``cts`` (``Zero``
    allowed), by the compiled code of the tape's structure; None when that is not (yet)
    compiled or cannot be: linearize the tape then."""
    args = []
    dims: list = []  # the batch axis of each argument (None: not batched), under vmap
    vmap = None
    for group in (tape.consts, tape.inputs, tape.values):
        for x in group:
            if type(x) is not np.ndarray:
                if type(x) is batching.BatchTracer:  # of the one vmap below (_recordable)
                    vmap = x._trace
                    dims.append(x.batch_dim)
                    x = x.val
                    if type(x) is not np.ndarray:
                        return None
                    args.append(x)
                    continue
                x = _host_value(x)
                if x is None:
                    return None
            dims.append(None)
            args.append(x)
    live: list = []
    ct_key: list = []
    for i, ct in enumerate(cts):
        t = type(ct)
        if t is ad.Zero:
            ct_key.append(None)
            continue
        if t not in HOST_TYPES:  # Python scalars are weakly typed: interpret them
            return None
        live.append(i)
        args.append(_host_value(ct))
        # a NumPy scalar's type is its dtype
        ct_key.append(t if t in NUMPY_SCALARS else (t, ct.shape, ct.dtype))
    structure = transpose.structure_key(tape.jaxpr, vetted=True)
    if structure is None:
        return None
    size = None if vmap is None else vmap.axis_size
    key = (structure, tuple(ct_key)) if vmap is None else (
        structure, tuple(ct_key), size, tuple(dims))
    entry = transpose.sighted(_gradients, _lock, GRADIENT_CACHE_SIZE, key,
                              lambda: _compile_gradient(tape.jaxpr, cts, live, size, dims))
    if entry is None:
        return None
    compiled, consts, positions, out_dims = entry
    results = compiled.fn(*consts, *args)
    invars = tape.jaxpr.invars
    out: list = [None] * len(invars)
    if vmap is None:
        for i, value in zip(positions, results):
            out[i] = core.user_result(value)
    else:
        for i, value, d in zip(positions, results, out_dims):
            out[i] = value if d is None else batching.BatchTracer(vmap, value, d)
    for i, v in enumerate(invars):
        if out[i] is None:
            out[i] = ad.Zero(core.tangent_aval(v.aval))
    return out


def _compile_gradient(jaxpr: Jaxpr, cts: Sequence, live: list, size: int | None,
                      dims: list):
    """Trace the gradient of a tape, as a function of (constants, arguments, results of
    every equation, live cotangents) with the results standing for the intermediates,
    batch it (``size`` not None: its arguments batched along ``dims``, the cotangents not),
    and compile it: (compiled function, its leading constants, positions of its results,
    their batch axes)."""
    closed, positions = trace_gradient(jaxpr, cts, live)
    out_dims: list = [None] * len(positions)
    if size is not None:
        closed, out_dims = batching.batch_closed_jaxpr(closed, size, dims + [None] * len(live))
    closed, consts = partial_eval.closure_convert(closed)
    return codegen.compile_jaxpr(closed, name="tape_gradient"), consts, positions, out_dims


def trace_gradient(jaxpr: Jaxpr, cts: Sequence, live: list) -> tuple[ClosedJaxpr, list]:
    """The gradient of ``jaxpr`` traced to a closed jaxpr taking (constants, arguments,
    results of every equation, live cotangents) and giving the non-zero cotangents of the
    arguments, whose positions are the second result.

    The tape is linearized on abstract values; each equation's primal result is then
    replaced by the recorded one, so that what the JVP rules compute from it (residuals)
    reads the recorded value, and the primal computation itself is dead code."""
    results = [v for eqn in jaxpr.eqns for v in eqn.outvars]
    nc, nx, ne = len(jaxpr.constvars), len(jaxpr.invars), len(results)
    positions: list = []
    aliases: dict = {}  # a traced primal result -> the argument holding the recorded one

    def gradient(*args):
        outer = core.dynamic_trace()
        consts, xs = args[:nc], args[nc:nc + nx]
        recorded = dict(zip(results, args[nc + nx:nc + nx + ne]))
        given = list(cts)
        for i, ct in zip(live, args[nc + nx + ne:]):
            given[i] = ct

        def replay(*primals):
            env: dict = dict(zip(jaxpr.constvars, consts))
            env.update(zip(jaxpr.invars, primals))

            def read(x):
                return x.val if type(x) is Literal else env[x]

            for eqn in jaxpr.eqns:
                outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
                for out, v in zip(outs if eqn.primitive.multiple_results else [outs],
                                  eqn.outvars):
                    value = recorded[v]
                    if type(out) is ad.JVPTracer:
                        computed = out.primal
                        env[v] = ad.JVPTracer(out._trace, value, out.tangent)
                    else:
                        computed = out
                        env[v] = value
                    if type(computed) is JaxprTracer and computed._trace is outer:
                        aliases[computed.binder] = value.binder
            return [read(x) for x in jaxpr.outvars]

        _, pullback = transpose.vjp_flat(replay, list(xs))
        outs = pullback(given)
        positions[:] = [i for i, o in enumerate(outs) if o is not None and type(o) is not ad.Zero]
        return [outs[i] for i in positions]

    avals = ([v.aval for v in jaxpr.constvars] + [v.aval for v in jaxpr.invars]
             + [v.aval for v in results] + [get_aval(cts[i]) for i in live])
    closed, _ = partial_eval.trace_to_jaxpr(gradient, avals)
    traced = closed.jaxpr
    rename = aliases.get
    eqns = [JaxprEqn(e.primitive, [rename(x, x) for x in e.invars], e.params, e.outvars)
            for e in traced.eqns]
    renamed = Jaxpr(traced.constvars, traced.invars, eqns, [rename(x, x) for x in traced.outvars])
    return ClosedJaxpr(renamed, closed.consts), positions
