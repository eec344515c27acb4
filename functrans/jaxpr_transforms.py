"""Jaxpr-level machinery for the higher-order primitives (control flow, custom rules,
checkpoint): tracing user functions to jaxprs, and the jaxpr-to-jaxpr transforms, all cached.

It sits above the interpreters and the array primitive families, whose transforms and
primitives (for zeros and moving batch axes) it combines, and below the higher-order
primitives that use it, so ``functrans/interpreters/`` imports nothing from
``functrans/primitives/``.

Types of the transforms (``closed`` is a ``ClosedJaxpr``)::

    trace_function     : (f, argument types)          -> jaxpr of f (constants as arguments)
    jvp_jaxpr          : (closed, which inputs have tangents)
                         -> jaxpr (primals, tangents -> outputs, output tangents)
    partial_eval_jaxpr : (closed, which inputs are unknown)
                         -> known jaxpr (known inputs -> known outputs, residuals)
                          + unknown jaxpr (residuals, unknown inputs -> unknown outputs)
    linearize_jaxpr    : jvp_jaxpr, then partial_eval_jaxpr with the tangents unknown:
                         the primal part emits residuals, the tangent part is linear
    transpose_jaxpr    : (closed linear in some inputs) -> jaxpr (other inputs, output
                         cotangents -> cotangents of the linear inputs)
    batch_jaxpr        : (closed, batch axes of the inputs) -> jaxpr on batched values

Each transform is memoised on the identity of its jaxpr (held weakly) and its flags, so a
loop body or a branch is transformed once however often the primitive runs; ``cache_info``
counts hits and misses.  ``trace_function`` caches by function identity and argument types,
as JAX does; see its docstring for when a cached trace is not reused.
"""
from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from collections import Counter, OrderedDict
from typing import Any, Callable, Sequence


from functrans import core
from functrans.core import (ClosedJaxpr, Jaxpr, ShapedArray, Tracer, eval_jaxpr, get_aval,
                            tangent_aval)
from functrans.interpreters import ad, batching
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters import partial_eval
from functrans.interpreters.partial_eval import (dead_code_elimination, linear_staging_rules,
                                                 trace_to_jaxpr)
from functrans.interpreters.transpose import UndefinedPrimal, backward_pass
from functrans.primitives.shape import bdim_to_front
from functrans.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = [
    "trace_function", "register_trace_context", "closure_convert", "jvp_jaxpr", "partial_eval_jaxpr", "linearize_jaxpr",
    "transpose_jaxpr", "batch_jaxpr", "memoize_on_jaxpr", "cache_info", "clear_caches",
]

# ------------------------------------------------------------------------------------------
# Caches
# ------------------------------------------------------------------------------------------

_lock = threading.Lock()
_hits: Counter = Counter()
_misses: Counter = Counter()
_clearers: list[Callable[[], None]] = []


def cache_info() -> dict[str, tuple[int, int]]:
    """``{name: (hits, misses)}`` of every cached transform since the last
    ``clear_caches``: a miss traced or transformed, a hit reused the result."""
    with _lock:
        return {name: (_hits[name], _misses[name]) for name in sorted(set(_hits) | set(_misses))}


def clear_caches() -> None:
    """Forget every cached trace and transformed jaxpr, and reset the counters."""
    with _lock:
        for clear in _clearers:
            clear()
        _hits.clear()
        _misses.clear()


def _freeze(x):
    """A hashable version of a flag argument (lists become tuples)."""
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    return x


def _fresh(result):
    """A copy of a cached result whose lists the caller may change."""
    if isinstance(result, tuple):
        return tuple(list(r) if isinstance(r, list) else r for r in result)
    return list(result) if isinstance(result, list) else result


def memoize_on_jaxpr(fn: Callable, name: str | None = None) -> Callable:
    """Memoise ``fn(closed, *flags)`` on the identity of ``closed`` (held weakly: the entry
    dies with the jaxpr) and the values of the flags (lists are compared as tuples).
    Results are shared between callers, so they must never be mutated (lists in a result
    tuple are copied for each caller)."""
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
    name = name or fn.__name__
    _clearers.append(cache.clear)

    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def memoized(closed, *args, **kwargs):
        bound = signature.bind(closed, *args, **kwargs)
        bound.apply_defaults()
        key = _freeze(tuple(bound.arguments.values())[1:])
        with _lock:
            entries = cache.get(closed)
            if entries is not None and key in entries:
                _hits[name] += 1
                return _fresh(entries[key])
        result = fn(*bound.args, **bound.kwargs)
        with _lock:
            _misses[name] += 1
            cache.setdefault(closed, {})[key] = result
        return _fresh(result)

    return memoized


#: ``partial_eval.closure_convert``, memoised: the same jaxpr gives the same converted jaxpr,
#: so the caches of the transforms applied to it next keep hitting.
closure_convert = memoize_on_jaxpr(partial_eval.closure_convert)

# ------------------------------------------------------------------------------------------
# Tracing user functions, cached
# ------------------------------------------------------------------------------------------

#: Functions giving what else a trace depends on at the time it is made (e.g. the tags
#: that ``intermediate_grads`` instruments); their values are part of every trace's key.
_trace_contexts: list[Callable[[], Any]] = []


def register_trace_context(provider: Callable[[], Any]) -> None:
    """Make ``provider()`` (hashable) part of the key of every cached trace: a module whose
    state changes what tracing a function records registers it here."""
    _trace_contexts.append(provider)


#: function -> LRU of its traces: key -> (jaxpr, consts, out_tree, guard)
_traces: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_clearers.append(_traces.clear)
_TRACES_PER_FUNCTION = 16


#: code object -> the names its code (nested code included) may read as globals
_code_names: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _names_read(code: types.CodeType) -> tuple:
    names = _code_names.get(code)
    if names is None:
        found: set[str] = set()
        stack = [code]
        while stack:
            c = stack.pop()
            found.update(c.co_names)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        names = _code_names[code] = tuple(sorted(found))
    return names


def _owner_and_guard(fun) -> tuple:
    """The object a trace of ``fun`` is cached under, and what the trace silently depends
    on besides the arguments (compared by identity when the cache is read).

    A Python function is cached under its code object, so a ``lambda`` written inline
    (a new function object on every call) finds its trace again when it closes over the
    same objects; the guard holds its closure cells, the globals its code reads, its
    defaults and its globals dictionary.  The guard is None if it holds a tracer: the trace
    belongs to one call of an enclosing transform and is not kept."""
    fn, values = fun, []
    if isinstance(fun, types.MethodType):
        fn, values = fun.__func__, [fun.__self__]
    if not isinstance(fn, types.FunctionType):
        return fun, ()
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # an empty cell
            values.append(_EMPTY)
    globs = fn.__globals__
    values += [globs.get(n, _EMPTY) for n in _names_read(fn.__code__)]
    values += [globs, *(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]
    if any(isinstance(v, Tracer) for v in values):
        return fn.__code__, None
    return fn.__code__, tuple(values)


_EMPTY = object()


def _same_guard(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


def trace_function(fun: Callable, in_tree: PyTreeDef, in_avals: Sequence[ShapedArray],
                   name: str, *, key: Any = None, static: tuple = (),
                   check_output: bool = True) -> tuple[ClosedJaxpr, list, PyTreeDef]:
    """Trace ``fun`` (called as ``fun(*tree_unflatten(in_tree, args))`` on values of
    ``in_avals``) to a jaxpr taking its constants as leading arguments.  Returns
    ``(jaxpr, consts, out_tree)``.

    Traces are cached by ``key`` (default: ``fun``; a Python function by its code), the
    argument structure and types, and the identity of the objects ``key`` depends on
    silently (closure cells, referenced globals, defaults), as JAX caches the bodies of its
    control flow.  A trace
    whose constants include tracers of an enclosing transform is never reused.  Like JAX,
    a function that reads mutable state through an attribute or a container it closes over
    (``self.w``, ``params["w"]`` replaced by another array) gets the state seen by its
    first trace: pass such values as arguments.  ``static`` holds the other values the
    trace depends on (static arguments); unhashable ones turn caching off for the call.
    """
    owner, guard = _owner_and_guard(fun if key is None else key)
    cache_key = (in_tree, tuple(in_avals), name, static,
                 tuple(provider() for provider in _trace_contexts))
    if guard is not None:
        try:
            with _lock:
                entries = _traces.get(owner)
                entry = entries.get(cache_key) if entries is not None else None
                if entry is not None and _same_guard(entry[3], guard):
                    entries.move_to_end(cache_key)  # type: ignore[union-attr]  # not None
                    _hits["trace_function"] += 1
                    return entry[0], list(entry[1]), entry[2]
        except TypeError:  # an unhashable or non-weakly-referenceable key
            guard = None
    found = {}

    def flat_fun(*leaves):
        out = fun(*tree_unflatten(in_tree, leaves))
        out_leaves, found["tree"] = tree_flatten(out)
        if check_output:
            for x in out_leaves:
                try:
                    get_aval(x)
                except TypeError:
                    raise TypeError(f"{name}: the function returned {x!r} of type "
                                    f"{type(x).__name__}, which is not an array") from None
        return out_leaves

    closed, _ = trace_to_jaxpr(flat_fun, in_avals)
    jaxpr, consts = closure_convert(closed)
    result = (jaxpr, consts, found["tree"])
    with _lock:
        _misses["trace_function"] += 1
        if guard is not None and not any(isinstance(c, Tracer) for c in consts):
            try:
                entries = _traces.setdefault(owner, OrderedDict())
            except TypeError:
                return result[0], list(result[1]), result[2]
            entries[cache_key] = (jaxpr, tuple(consts), found["tree"], guard)
            while len(entries) > _TRACES_PER_FUNCTION:
                entries.popitem(last=False)
    return result[0], list(result[1]), result[2]


# ------------------------------------------------------------------------------------------
# Jaxpr-to-jaxpr transforms, memoised
# ------------------------------------------------------------------------------------------


def _as_list(flag, n: int) -> list:
    return [flag] * n if isinstance(flag, bool) else list(flag)


@memoize_on_jaxpr
def jvp_jaxpr(closed: ClosedJaxpr, has_tangent: Sequence[bool],
              instantiate: Sequence[bool] | bool = False) -> tuple[ClosedJaxpr, list[bool]]:
    """The JVP of a jaxpr as a jaxpr: ``primals + live tangents -> outputs + live output
    tangents``; returns ``(jaxpr, out_has_tangent)``.  Outputs in ``instantiate`` always
    get a tangent (zeros where it is symbolically zero)."""
    n_in, n_out = len(closed.in_avals), len(closed.out_avals)
    instantiate = _as_list(instantiate, n_out)
    found = {}

    def fun(*args):
        primals, tangents = args[:n_in], iter(args[n_in:])
        full = [next(tangents) if live else Zero(tangent_aval(a))
                for live, a in zip(has_tangent, closed.in_avals)]
        outs, out_t = ad.jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                  primals, full)
        live = [type(t) is not Zero or inst for t, inst in zip(out_t, instantiate)]
        found["live"] = live
        return list(outs) + [ad.instantiate(t, p) for t, p, keep in zip(out_t, outs, live)
                             if keep]

    avals = list(closed.in_avals) + [tangent_aval(a) for a, live in
                                     zip(closed.in_avals, has_tangent) if live]
    jaxpr, _ = trace_to_jaxpr(fun, avals)
    return jaxpr, found["live"]


@memoize_on_jaxpr
def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: Sequence[bool],
                       out_unknowns_wanted: Sequence[bool] | None = None,
                       policy: Callable | None = None, linear: bool = False):
    """Split ``closed`` into what can be computed from its known inputs and the rest.

    An equation is unknown if it reads an unknown value.  Returns ``(known, unknown,
    out_unknowns, num_res)``:

    * ``known``: a closed jaxpr ``known inputs -> known outputs + residuals``;
    * ``unknown``: a closed jaxpr ``residuals + unknown inputs -> unknown outputs``;
    * ``out_unknowns[i]``: whether output ``i`` comes from ``unknown`` (outputs marked in
      ``out_unknowns_wanted`` always do, a known value being passed through as a residual).

    ``policy(prim, *avals, **params) -> bool`` says which known results may be residuals
    (default: all); a known equation whose result is needed but not saveable is recomputed
    in ``unknown`` from saveable values instead (``checkpoint``).  With ``linear``, the
    unknown part is a linear jaxpr, and primitives that cannot be in one
    (``linear_staging_rules``, e.g. ``while_loop``) raise their explanation.
    """
    jaxpr = closed.jaxpr
    n_out = len(jaxpr.outvars)
    wanted = [False] * n_out if out_unknowns_wanted is None else list(out_unknowns_wanted)
    unknown_ids = {id(v) for v, u in zip(jaxpr.invars, unknowns) if u}
    unknown_eqns, known_eqns = [], []
    for eqn in jaxpr.eqns:
        if any(id(x) in unknown_ids for x in eqn.invars):
            if linear and eqn.primitive in linear_staging_rules:
                linear_staging_rules[eqn.primitive](None, eqn.invars, eqn.params)
            unknown_eqns.append(eqn)
            unknown_ids.update(id(v) for v in eqn.outvars)
        else:
            known_eqns.append(eqn)
    out_unknowns = [id(v) in unknown_ids or w for v, w in zip(jaxpr.outvars, wanted)]

    # Known equations the unknown side needs but may not keep are recomputed there.
    saveable = {}
    effects_again = []  # as JAX's checkpoint: unsaved effects happen again when recomputing
    for eqn in known_eqns:
        ok = policy is None or policy(eqn.primitive, *[x.aval for x in eqn.invars],
                                      **eqn.params)
        if not ok and core.eqn_has_effects(eqn):
            effects_again.append(eqn)
        for v in eqn.outvars:
            saveable[id(v)] = ok
    producer = {id(v): eqn for eqn in known_eqns for v in eqn.outvars}
    needed = [x for eqn in unknown_eqns for x in eqn.invars] + [
        v for v, u in zip(jaxpr.outvars, out_unknowns) if u]
    recomputed: dict[int, Any] = {id(e): e for e in effects_again}  # id -> known equation
    needed += [x for e in effects_again for x in e.invars]   # recomputed on the unknown side
    residual_ids, seen = set(), set()
    while needed:
        x = needed.pop()
        if id(x) in seen or id(x) in unknown_ids or isinstance(x, core.Literal):
            continue
        seen.add(id(x))
        eqn = producer.get(id(x))
        if eqn is not None and not saveable[id(x)]:
            if id(eqn) not in recomputed:
                recomputed[id(eqn)] = eqn
                needed.extend(eqn.invars)
        else:
            residual_ids.add(id(x))
    residuals = [v for v in list(jaxpr.constvars) + list(jaxpr.invars) if id(v) in residual_ids]
    residuals += [v for e in known_eqns for v in e.outvars if id(v) in residual_ids]

    known_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if not u] + residuals
    known = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, unknowns) if not u],
                  dead_code_elimination(known_eqns, known_outs), known_outs)
    if recomputed:  # in program order, interleaved with the unknown equations
        recomputed.update((id(e), e) for e in unknown_eqns)
        unknown_body = [e for e in jaxpr.eqns if id(e) in recomputed]
    else:
        unknown_body = unknown_eqns
    unknown_outs = [v for v, u in zip(jaxpr.outvars, out_unknowns) if u]
    unknown = Jaxpr([], residuals + [v for v, u in zip(jaxpr.invars, unknowns) if u],
                    dead_code_elimination(unknown_body, unknown_outs), unknown_outs)
    return (ClosedJaxpr(known, closed.consts), ClosedJaxpr(unknown, []), out_unknowns,
            len(residuals))


@memoize_on_jaxpr
def linearize_jaxpr(closed: ClosedJaxpr, has_tangent: Sequence[bool],
                    instantiate: Sequence[bool] | bool = False):
    """Split a jaxpr's JVP into a primal part and a linear tangent part: the one helper
    behind the reverse-mode rules of ``cond``, ``scan`` and ``checkpoint``.

    Returns ``(primal, tangent, out_has_tangent, num_residuals)``:

    * ``primal``: a closed jaxpr ``primals -> outputs + residuals``;
    * ``tangent``: a closed jaxpr ``residuals + tangents -> tangents of outputs``, linear in
      the tangents, taking one tangent per input with ``has_tangent`` and producing one per
      output with ``out_has_tangent`` (outputs in ``instantiate`` always get one).
    """
    n_in, n_out = len(closed.in_avals), len(closed.out_avals)
    jvp, out_has_tangent = jvp_jaxpr(closed, has_tangent, instantiate)
    n_t = sum(has_tangent)
    primal, tangent, out_unknowns, num_res = partial_eval_jaxpr(
        jvp, [False] * n_in + [True] * n_t, [False] * n_out + [True] * sum(out_has_tangent),
        None, True)
    if any(out_unknowns[:n_out]):
        raise AssertionError("linearize_jaxpr: a primal output depends on the tangents; a "
                             "JVP rule mixed tangents into its primal result")
    return primal, tangent, out_has_tangent, num_res


@memoize_on_jaxpr
def transpose_jaxpr(closed: ClosedJaxpr, is_linear: Sequence[bool]) -> ClosedJaxpr:
    """The transpose of a jaxpr linear in the inputs marked ``is_linear``: a closed jaxpr
    ``(non-linear inputs, output cotangents) -> cotangents of the linear inputs`` (zeros
    where none flow back)."""
    in_avals = closed.in_avals
    known_avals = [a for a, lin in zip(in_avals, is_linear) if not lin]
    ct_avals = [tangent_aval(a) for a in closed.out_avals]

    def transposed(*args):
        known, cts = iter(args[:len(known_avals)]), args[len(known_avals):]
        full = [UndefinedPrimal(a) if lin else next(known) for a, lin in zip(in_avals, is_linear)]
        cts_in = backward_pass(closed.jaxpr, closed.consts, full, cts)
        witness = ad.device_witness([*cts, *args])
        return [ad.zeros(tangent_aval(aval), witness) if type(ct) is Zero else ct
                for ct, aval, lin in zip(cts_in, in_avals, is_linear) if lin]

    jaxpr, _ = trace_to_jaxpr(transposed, known_avals + ct_avals)
    return jaxpr


@memoize_on_jaxpr
def batch_jaxpr(closed: ClosedJaxpr, axis_size: int, in_dims: Sequence,
                instantiate: bool = True) -> tuple[ClosedJaxpr, list]:
    """A closed jaxpr computing ``closed`` for every batch member, inputs batched along
    ``in_dims`` (``not_mapped`` allowed).  Returns ``(jaxpr, out_dims)``: outputs are
    batched along axis 0, or ``not_mapped`` where unbatched and ``instantiate`` is False."""
    def to_front(outs, dims):
        return ([x if d is not_mapped and not instantiate else bdim_to_front(x, d, axis_size)
                 for x, d in zip(outs, dims)],
                [0 if instantiate or d is not not_mapped else not_mapped for d in dims])

    return batching.batch_closed_jaxpr(closed, axis_size, in_dims, to_front)
