"""Reverse mode's front door: every gradient, pullback and reverse Jacobian asks one planner
which way to compute it.

Type::

    planned_vjp : (f, primals) -> (f(primals), pullback)    pullback : cts -> cts of the primals

``grad``, ``value_and_grad``, ``vjp``, ``jacrev`` and ``gradcheck`` call ``planned_vjp``; it
chooses a *plan* (``choose_plan``) and runs it.  The plans give the same derivatives
(tests/test_reverse_mode.py runs the registry sweep through each); they differ in speed:

``"linearize"``
    Linearize ``f`` (``ad.linearize_flat``: every operation's JVP rule runs and its tangent
    equations are staged) and interpret the transpose rules on the linear jaxpr
    (``transpose.backward_pass``).  Every rule runs as written on every call.
``"compiled"``
    Linearize, then run the transposition as generated code (``codegen``) cached by the
    linear jaxpr's structure (``structure_key``): a training loop without ``jit``
    linearizes to the same structure every call, and only the residuals differ.
``"tape"``
    Record the forward pass (``tape.record_flat``: one interpreter layer per operation, as
    in HIPS autograd) and run the tape's gradient as generated code cached by the tape's
    structure; directly under a ``vmap`` (per-example gradients) the compiled gradient is
    batched (``"batched tape"``).  A tape not compiled yet is linearized
    (``"tape, linearized"``), which evaluates it again.

``config.reverse_mode`` decides: ``"auto"`` (the default) lets the planner choose by what
it has seen; ``"linearize"``, ``"compiled"`` and ``"tape"`` force a plan from the first
call (compiling at once), falling back where the plan cannot run (a tape needs host
values, outside transforms or directly under one ``vmap``, and primitives whose rules are
the library's own; compiled code needs concrete values): ``Pullback.plan`` always says what
ran.  What ``"auto"`` chooses:

* ``grad`` of a function (identified by its code object) seen for the first time:
  ``"compiled"``; compiled code runs once the structure was seen ``COMPILE_AFTER`` times,
  before that the transposition is interpreted (``"linearize"``);
* ``grad`` of a function seen before: ``"tape"`` while it can be recorded; not once its
  tapes kept changing structure (``MAX_NEW_STRUCTURES`` in a row), grew past
  ``MAX_BYTES`` of recorded values (which stay alive until the gradient is computed, where
  a linearization keeps only residuals), or met user code (``tape.NotRecordable``: the
  call is differentiated the usual way from the start, so the function's Python before
  that point runs twice, this once);
* ``vjp`` (whose pullback outlives the call and must not keep the caller's arrays) and
  ``jacrev``: ``"compiled"``.

While ``config.debug_nans`` or ``config.debug_infs`` is on, every call is linearized and
its transposition interpreted (``"linearize"``), and so is a pullback made before the
switch was turned on: each operation of the backward pass is then bound and checked.

Only primitives whose rules are the library's own (``Primitive.origin``) are compiled or
recorded: a user's primitive or custom rule (code that may print, count or draw random
numbers) runs as written on every call.
"""
from __future__ import annotations

import collections
import threading
from typing import Callable, Sequence

import numpy as np

from functrans import backend, config, core
from functrans.array_types import Array
from functrans.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Tracer, Var, eval_jaxpr, get_aval)
from functrans.interpreters import ad, batching, codegen, partial_eval, tape, transpose
from functrans.interpreters.codegen import literal_key, params_key
from functrans.interpreters.partial_eval import JaxprTracer
from functrans.interpreters.transpose import UndefinedPrimal, backward_pass

__all__ = ["PLANS", "MODES", "Pullback", "planned_vjp", "linear_pullback", "choose_plan", "last_plan",
           "structure_key",
           "compiled_backward", "compiled_gradient", "trace_gradient", "clear_caches"]

#: the values of ``config.reverse_mode``
MODES = ("auto", "linearize", "compiled", "tape")
#: what ``Pullback.plan`` may say ran
PLANS = ("linearize", "compiled", "tape", "tape, linearized", "batched tape",
         "batched tape, linearized")

#: a structure is compiled when seen this many times under "auto" (once is not a pattern),
#: and under a forced plan ("compiled", "tape": at once)
COMPILE_AFTER = 2
FORCED_COMPILE_AFTER = 1
#: distinct linear-jaxpr structures, tape structures and functions remembered (least
#: recently used first out)
BACKWARD_CACHE_SIZE = 256
GRADIENT_CACHE_SIZE = 256
FUNCTION_CACHE_SIZE = 1024
#: recorded values (bytes) past which "auto" no longer records a function
MAX_BYTES = 1 << 20
#: new tape structures in a row after which "auto" no longer records a function
MAX_NEW_STRUCTURES = 3

FAILED = "failed"  # a cache entry: tracing or compiling this structure did not work

_lock = threading.Lock()
#: structure of a linear jaxpr (+ cotangent types, library) -> sightings or compiled code
_backward_cache: collections.OrderedDict = collections.OrderedDict()
#: structure of a tape (+ cotangent types, batching) -> sightings or compiled code
_gradients: collections.OrderedDict = collections.OrderedDict()
_SEEN, _NEVER = "seen", "never"
#: code object -> _SEEN, _NEVER, or the number of new tape structures in a row (an int)
_functions: collections.OrderedDict = collections.OrderedDict()


def clear_caches() -> None:
    """Forget every structure, compiled gradient and function the planner has seen."""
    with _lock:
        _backward_cache.clear()
        _gradients.clear()
        _functions.clear()


# ------------------------------------------------------------------------------------------
# The front door
# ------------------------------------------------------------------------------------------


class _Recent(threading.local):
    plan: str | None = None


_recent = _Recent()


def last_plan() -> str | None:
    """The plan (``PLANS``) of the last pullback this thread ran, for reports and tests:
    ``grad`` then ``last_plan()`` says how that gradient was computed."""
    return _recent.plan


class Pullback:
    """A pullback from output cotangents (``Zero`` allowed) to input cotangents (``Zero``
    where zero); ``plan`` names the plan that computed its last result (``PLANS``)."""

    __slots__ = ("_run", "plan")

    def __init__(self, run: Callable, plan: str):
        self._run = run
        self.plan = plan

    def __call__(self, cts: Sequence) -> list:
        with core.computing_internally():  # the caller hands the results out
            out = self._run(self, cts)
        _recent.plan = self.plan
        return out


def choose_plan(primals: Sequence, key=None, snapshot: bool = False) -> str:
    """The plan ``planned_vjp`` starts with for a call at ``primals`` (``key``: what identifies the
    function across calls, for ``grad``; ``snapshot``: the pullback outlives the call):
    ``"linearize"``, ``"compiled"`` or ``"tape"`` (the module docstring says when)."""
    return _choose(primals, key, snapshot)[0]


def _choose(primals: Sequence, key, snapshot: bool) -> tuple[str, bool]:
    """``choose_plan``, and for a tape whether it is batched (recorded above a vmap)."""
    mode = config.reverse_mode
    if config.debug_nans or config.debug_infs:
        return "linearize", False  # every operation bound, so each is checked
    if mode == "auto":
        if key is None or snapshot:
            return "compiled", False
        state = _functions.get(key)
        if state is None:
            _set_state(key, _SEEN)
            return "compiled", False
        if state is _NEVER:
            return "compiled", False
    elif mode == "linearize":
        return "linearize", False
    elif mode not in MODES:
        raise ValueError(f"functrans.config.reverse_mode must be one of {MODES}, got "
                         f"{mode!r}")
    elif snapshot or mode == "compiled":
        return "compiled", False
    batched = None if _any_lazy(primals) else _recordable(primals)
    return ("compiled", False) if batched is None else ("tape", batched)


def _any_lazy(*groups: Sequence) -> bool:
    """Whether a value is a lazy library's array (dask): compiled code is not run on those,
    as the core-axes table (``primitives/chunked.py``) must see each primitive's call; the
    interpreted transpose builds the same graph."""
    for group in groups:
        for x in group:
            if type(x) is not np.ndarray and backend.is_lazy(x):
                return True
    return False


def planned_vjp(fun: Callable, primals: Sequence, key=None, snapshot: bool = False
        ) -> tuple[list, Pullback]:
    """Reverse mode on flat lists, by the plan ``choose_plan`` picks: the outputs of
    ``fun`` (flat list in, flat list out) at ``primals`` and their ``Pullback``."""
    plan, batched = _choose(primals, key, snapshot)
    auto = config.reverse_mode == "auto"
    threshold = COMPILE_AFTER if auto else FORCED_COMPILE_AFTER
    if plan == "tape":
        try:
            outs, recorded = tape.record_flat(fun, primals, batched)
        except tape.NotRecordable:
            if key is not None:
                _set_state(key, _NEVER)
            plan = "compiled"
        else:
            if key is not None and auto and recorded.nbytes > MAX_BYTES:
                _set_state(key, _NEVER)
            return outs, Pullback(_tape_pullback(recorded, key if auto else None, threshold),
                                  "tape")
    primals_out, jaxpr, consts, out_tangents = ad.linearize_flat(fun, primals,
                                                                 snapshot=snapshot)
    return primals_out, Pullback(_linear_pullback(jaxpr, consts, out_tangents,
                                                  threshold if plan == "compiled" else 0), plan)


def linear_pullback(jaxpr: Jaxpr, consts: Sequence, out_tangents: Sequence,
                    plan: str = "compiled") -> Pullback:
    """The pullback of a linearization from ``ad.linearize_flat`` by ``plan``:
    ``"linearize"`` (interpreted) or ``"compiled"`` (compiled at the first sighting of its
    structure), for a caller that linearized already (``gradcheck``)."""
    assert plan in ("linearize", "compiled"), plan
    threshold = FORCED_COMPILE_AFTER if plan == "compiled" else 0
    return Pullback(_linear_pullback(jaxpr, consts, out_tangents, threshold), plan)


def _linear_pullback(jaxpr: Jaxpr, consts: Sequence, out_tangents: Sequence, threshold: int):
    """The pullback of a linearization: compiled from the ``threshold``-th sighting of its
    structure (0: always interpreted)."""
    transpose.check_transposable(jaxpr)
    undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]

    def run(pullback: Pullback, cts: Sequence) -> list:
        assert len(cts) == len(out_tangents)
        live_cts = [ct for ct, t in zip(cts, out_tangents) if t is None]
        if threshold and not (config.debug_nans or config.debug_infs) and not _any_lazy(
                consts, live_cts):  # (checking: every transpose rule's operation bound)
            out = compiled_backward(jaxpr, consts, live_cts, threshold)
            if out is not None:
                pullback.plan = "compiled"
                return out
        pullback.plan = "linearize"
        if _any_lazy(consts):  # dask: broadcast cotangents meet the residuals' chunks
            with backend.chunk_hints(consts):
                return backward_pass(jaxpr, consts, undefined, live_cts)
        return backward_pass(jaxpr, consts, undefined, live_cts)

    return run


def _tape_pullback(recorded: tape.Tape, key, threshold: int) -> Callable:
    """The pullback of a tape: its compiled gradient from the ``threshold``-th sighting of
    its structure, else the tape linearized.  ``key``: the function whose recording policy
    the outcome updates (None: none, under a forced plan)."""
    def run(pullback: Pullback, cts: Sequence) -> list:
        batched = "batched tape" if recorded.batched else "tape"
        if config.debug_nans or config.debug_infs:  # recorded before the switch was on
            pullback.plan = batched + ", linearized"
            return _linearized_tape_pullback(recorded, 0)(cts)
        out = compiled_gradient(recorded, cts, threshold)
        if out is None:
            if key is not None:
                state = _functions.get(key)
                if state is not _NEVER:  # one more new structure in a row
                    misses = (state if type(state) is int else 0) + 1
                    _set_state(key, _NEVER if misses >= MAX_NEW_STRUCTURES else misses)
            pullback.plan = batched + ", linearized"
            return _linearized_tape_pullback(recorded, threshold)(cts)
        if key is not None:
            state = _functions.get(key)
            if state != 0 and state is not _NEVER:  # compiled: no new structure in a row
                _set_state(key, 0)
        pullback.plan = batched
        return out

    return run


def _set_state(key, new):
    with _lock:
        _functions[key] = new
        _functions.move_to_end(key)
        if len(_functions) > FUNCTION_CACHE_SIZE:
            _functions.popitem(last=False)


#: types of concrete host cotangents taken as they are (a Python scalar is weakly typed:
#: the generated code, which takes arrays, would compute with it in another dtype than
#: NumPy computes with the scalar itself, so those are interpreted)
HOST_TYPES = transpose.NUMPY_SCALARS | {np.ndarray, Array}


def _recordable(primals: Sequence) -> bool | None:
    """Whether a call at ``primals`` can be recorded, and batched: False outside
    transforms on host values, True directly under a vmap (of an unnamed axis) on its
    tracers of host values or host values; None otherwise."""
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


def _linearized_tape_pullback(recorded: tape.Tape, threshold: int) -> Callable:
    """The pullback of a tape by linearizing it (which evaluates it again)."""
    jaxpr, consts = recorded.jaxpr, recorded.consts
    _, lin_jaxpr, lin_consts, out_tangents = ad.linearize_flat(
        lambda *xs: eval_jaxpr(jaxpr, consts, *xs), recorded.inputs)
    return Pullback(_linear_pullback(lin_jaxpr, lin_consts, out_tangents, threshold), "")


def _sighted(cache: collections.OrderedDict, size: int, key, compile: Callable,
             threshold: int):
    """Count a sighting of ``key`` in ``cache`` (an LRU of at most ``size`` keys): its
    compiled entry, made by ``compile()`` on the ``threshold``-th sighting; None before
    that, or when compiling failed (``FAILED``: anything not traceable is interpreted)."""
    with _lock:
        entry = cache.get(key, 0)
        if type(entry) is int:
            entry += 1
            cache[key] = entry
            if len(cache) > size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
    if type(entry) is int:
        if entry < threshold:
            return None
        try:
            entry = compile()
        except Exception:  # noqa: BLE001
            entry = FAILED
        with _lock:
            if key in cache:
                cache[key] = entry
    return None if entry is FAILED else entry


# ------------------------------------------------------------------------------------------
# Compiled transposition, cached by structure
# ------------------------------------------------------------------------------------------
#
# The structure is compared in full: a key records every equation, so two jaxprs share
# compiled code only if interpreting either would run the same operations.


def _aval_key(x) -> tuple:
    aval = x.aval if type(x) is Var or type(x) is ad.Zero else get_aval(x)
    return (aval.shape, aval.dtype, aval.weak_type)


def structure_key(jaxpr: Jaxpr) -> tuple | None:
    """Everything the transposition of ``jaxpr`` depends on besides the values of its
    constants and cotangents, as a hashable tuple; None if a primitive's rules are a
    user's (``Primitive.origin``) or a parameter is unhashable.  Each equation adds its
    primitive, its parameters (if any, as a tuple of pairs), its operands (a variable's
    number, or a literal's key, a tuple) and None; its results are numbered in order."""
    number: dict = {v: i for i, v in enumerate(jaxpr.constvars + jaxpr.invars)}
    parts: list = [tuple([_aval_key(v) for v in jaxpr.constvars]),
                   tuple([_aval_key(v) for v in jaxpr.invars])]
    append = parts.append
    get = number.get
    n = len(number)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if prim.origin != "library":
            return None
        append(prim)
        params = eqn.params
        if params:
            frozen = params_key(params)
            if frozen is None:
                return None
            append(frozen)
        for v in eqn.invars:
            i = get(v)  # None for a literal
            append(literal_key(v) if i is None else i)
        append(None)
        for v in eqn.outvars:
            number[v] = n
            n += 1
    append(tuple([number[v] if type(v) is Var else literal_key(v) for v in jaxpr.outvars]))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def compiled_backward(jaxpr: Jaxpr, consts: Sequence, cts: Sequence,
                      threshold: int = COMPILE_AFTER) -> list | None:
    """``backward_pass`` of a linearization (every argument undefined) run as compiled
    code from the ``threshold``-th sighting of its structure; None when it is not (yet)
    compiled, or the values are not concrete, or the structure cannot be compiled:
    interpret it then."""
    if type(core.dynamic_trace()) is not core.EvalTrace:
        return None  # make_jaxpr stages operations on constants: nothing to run now
    host = True
    args = []
    for c in consts:
        t = type(c)
        if t is np.ndarray:
            args.append(c)
        elif t is Array:
            args.append(c.view(np.ndarray))
        elif isinstance(c, Tracer) or not backend.is_array(c):
            return None
        else:
            host = False
            args.append(c)
    live = []
    ct_key: list = []
    for i, ct in enumerate(cts):
        t = type(ct)
        if ct is None or t is ad.Zero:
            ct_key.append(None if ct is None else _aval_key(ct))
            continue
        if t not in HOST_TYPES:
            if isinstance(ct, Tracer) or not (backend.is_array(ct) or isinstance(ct, np.generic)):
                return None
            host = host and not backend.is_device_array(ct)
        live.append(i)
        # generated code takes plain arrays (it calls their methods), not scalars
        args.append(ct if t is np.ndarray else ct.view(np.ndarray) if t is Array else
                    ct if backend.is_array(ct) else np.asarray(ct))
        ct_key.append((t,) + _aval_key(ct))
    structure = structure_key(jaxpr)
    if structure is None:
        return None
    library = _NUMPY if host else backend.library_of(*args)
    key = (structure, tuple(ct_key), library)
    entry = _sighted(_backward_cache, BACKWARD_CACHE_SIZE, key,
                     lambda: _compile_backward(jaxpr, consts, cts, live, library), threshold)
    if entry is None:
        return None
    compiled, positions = entry
    values = compiled.fn(*(args if host else backend.coerce(library.xp, *args)))
    invars = jaxpr.invars
    out: list = [None] * len(invars)
    for i, value in zip(positions, values):
        out[i] = value
    for i, v in enumerate(invars):
        if out[i] is None:
            out[i] = ad.Zero(core.tangent_aval(v.aval))
    return out


_NUMPY = backend.library_of()


def _compile_backward(jaxpr: Jaxpr, consts: Sequence, cts: Sequence, live: list, library):
    """Trace the transposition of ``jaxpr`` with constants and live cotangents as
    arguments, and compile it: (compiled function, positions of its non-zero results)."""
    undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
    positions: list = []
    num_consts = len(consts)

    def transposed(*args):
        given = list(cts)
        for i, ct in zip(live, args[num_consts:]):
            given[i] = ct
        outs = backward_pass(jaxpr, args[:num_consts], undefined, given)
        positions[:] = [i for i, o in enumerate(outs) if o is not None and type(o) is not ad.Zero]
        return [outs[i] for i in positions]

    avals = [get_aval(c) for c in consts] + [get_aval(cts[i]) for i in live]
    closed, _ = partial_eval.trace_to_jaxpr(transposed, avals)
    return codegen.compile_jaxpr(closed, library, "backward"), positions


# ------------------------------------------------------------------------------------------
# Compiled gradients of tapes, cached by the tape's structure
# ------------------------------------------------------------------------------------------


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


def compiled_gradient(recorded: tape.Tape, cts: Sequence,
                      threshold: int = COMPILE_AFTER) -> list | None:
    """The cotangents of the tape's arguments for output cotangents ``cts`` (``Zero``
    allowed), by the compiled code of the tape's structure (from its ``threshold``-th
    sighting); None when that is not (yet) compiled or cannot be: linearize the tape
    then."""
    args = []
    dims: list = []  # the batch axis of each argument (None: not batched), under vmap
    vmap = None
    for group in (recorded.consts, recorded.inputs, recorded.values):
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
        ct_key.append(t if t in transpose.NUMPY_SCALARS else (t, ct.shape, ct.dtype))
    structure = structure_key(recorded.jaxpr)
    if structure is None:
        return None
    size = None if vmap is None else vmap.axis_size
    key = (structure, tuple(ct_key)) if vmap is None else (
        structure, tuple(ct_key), size, tuple(dims))
    entry = _sighted(_gradients, GRADIENT_CACHE_SIZE, key,
                     lambda: _compile_gradient(recorded.jaxpr, cts, live, size, dims),
                     threshold)
    if entry is None:
        return None
    compiled, consts, positions, out_dims = entry
    results = compiled.fn(*consts, *args)
    invars = recorded.jaxpr.invars
    out: list = [None] * len(invars)
    if vmap is None:
        for i, value in zip(positions, results):
            out[i] = value
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
