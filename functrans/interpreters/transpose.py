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

import collections
import threading
from typing import Callable, Sequence

import numpy as np

from functrans import backend, core
from functrans.core import Array, Jaxpr, Literal, Primitive, ShapedArray, Tracer, Var, get_aval
from functrans.interpreters import ad, codegen, partial_eval
from functrans.interpreters.codegen import literal_key, params_key
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


def _accumulate(ct_env: dict, wrapped: set, var, ct) -> None:
    """Add the cotangent ``ct`` to ``var``'s.  Cotangents are kept as plain ndarrays;
    ``wrapped`` remembers the variables whose cotangent was an ``Array`` (see below)."""
    if ct is None or type(ct) is Zero:
        return
    _check_cotangent(var, ct)
    previous = ct_env.get(var)
    if previous is not None:
        ct = add_tangents(previous, ct)
    if type(ct) is Array:
        ct = ct.view(np.ndarray)
        wrapped.add(var)
    elif wrapped:
        wrapped.discard(var)
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
    # Outside transforms every operation hands out an `Array`, which the next one views
    # back as a plain ndarray: cotangents are kept plain in between, and the variables
    # whose cotangent was an `Array` are remembered so that the results keep their type.
    wrapped: set = set()
    for v, ct in zip(jaxpr.outvars, cts_out):
        if v in linear:
            _accumulate(ct_env, wrapped, v, ct)

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
                    if t is Array:
                        ct_in = ct_in.view(np.ndarray)
                        wrapped.add(x)
                    elif wrapped:
                        wrapped.discard(x)
                    ct_env[x] = ct_in
                    continue
            _accumulate(ct_env, wrapped, x, ct_in)

    return [(ct_env[v].view(Array) if v in wrapped else ct_env[v]) if v in ct_env else
            Zero(core.tangent_aval(v.aval)) if v in linear else None for v in jaxpr.invars]


def vjp_flat(fun: Callable, primals: Sequence, snapshot: bool = False, compiled: bool = False
             ) -> tuple[list, Callable]:
    """Reverse mode on flat lists: the outputs, and a pullback from output cotangents
    (``Zero`` allowed) to input cotangents (``Zero`` where zero).  ``snapshot``: the
    pullback outlives the call (see ``linearize_flat``); ``compiled``: see
    ``linear_pullback``."""
    primals_out, jaxpr, consts, out_tangents = linearize_flat(fun, primals, snapshot=snapshot)
    return primals_out, linear_pullback(jaxpr, consts, out_tangents, compiled)


def check_transposable(jaxpr: Jaxpr) -> None:
    """Refuse, with its explanation, a linear jaxpr holding an ``untransposable``
    primitive."""
    if untransposable:
        for eqn in jaxpr.eqns:
            why = untransposable.get(eqn.primitive)
            if why is not None:
                raise TypeError(why)


def linear_pullback(jaxpr: Jaxpr, consts: Sequence, out_tangents: Sequence,
                    compiled: bool = False) -> Callable:
    """The transpose of a linearization from ``linearize_flat``: a function from one
    cotangent per output (``Zero`` allowed) to one per input (``Zero`` where zero).

    ``compiled``: on concrete values, run the transposition as generated code cached by the
    jaxpr's structure (``compiled_backward``) once that structure has been seen before, as
    ``grad`` and ``vjp`` do; gradcheck leaves it off, so that its re-runs execute every
    transpose rule again."""
    check_transposable(jaxpr)
    undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]

    def pullback(cts: Sequence) -> list:
        assert len(cts) == len(out_tangents)
        live_cts = [ct for ct, t in zip(cts, out_tangents) if t is None]
        if compiled:
            out = compiled_backward(jaxpr, consts, live_cts)
            if out is not None:
                return out
        return backward_pass(jaxpr, consts, undefined, live_cts)

    return pullback


# ------------------------------------------------------------------------------------------
# Compiled transposition, cached by structure
# ------------------------------------------------------------------------------------------
#
# `grad(f)(x)` called again and again (a training loop without jit) linearizes f anew each
# time, but the linear jaxpr usually has the same structure every time: the same primitives,
# parameters, wiring, literals and types; only the residuals differ.  Its transposition
# depends on nothing else, so it is traced once to a jaxpr (residuals and cotangents as
# arguments) and compiled to straight-line code (`codegen`), which runs several times
# faster than interpreting the transpose rules.  The structure is compared in full: a key
# records every equation, so two jaxprs share compiled code only if interpreting either
# would run the same operations.  Only primitives whose rules are the library's own are
# compiled: a user's primitive or `custom_vjp` backward (user code that may print, count or
# draw random numbers) keeps running as written.

#: distinct structures remembered (least recently used first out)
BACKWARD_CACHE_SIZE = 256
#: a structure is compiled when seen this many times (once is not a pattern)
COMPILE_AFTER = 2

_backward_cache: collections.OrderedDict = collections.OrderedDict()
_backward_lock = threading.Lock()
FAILED = "failed"  # a cache entry: tracing or compiling this structure did not work
#: primitive -> whether its rules are all the library's (see _library_rules)
_library_primitive: dict[Primitive, bool] = {}
#: primitives whose rules run user code
USER_CODE = frozenset({"custom_lin", "custom_vjp_call", "custom_jvp_call"})


def _library_rules(prim: Primitive) -> bool:
    known = _library_primitive.get(prim)
    if known is None:
        rules = [transpose_rules.get(prim), core.impl_rules.get(prim)]
        known = prim.name not in USER_CODE and all(
            rule is None or getattr(rule, "__module__", "").startswith("functrans.")
            for rule in rules) and any(rule is not None for rule in rules)
        _library_primitive[prim] = known
    return known


def _aval_key(x) -> tuple:
    aval = x.aval if type(x) is Var or type(x) is Zero else get_aval(x)
    return (aval.shape, aval.dtype, aval.weak_type)


def structure_key(jaxpr: Jaxpr, vetted: bool = False) -> tuple | None:
    """Everything the transposition of ``jaxpr`` depends on besides the values of its
    constants and cotangents, as a hashable tuple; None if a primitive runs user code
    (unless ``vetted``: the caller checked its primitives) or a parameter is unhashable.
    Each equation adds its primitive, its parameters (if any, as a tuple of pairs), its
    operands (a variable's number, or a literal's key, a tuple) and None; its results are
    numbered in order."""
    number: dict = {v: i for i, v in enumerate(jaxpr.constvars + jaxpr.invars)}
    parts: list = [tuple([_aval_key(v) for v in jaxpr.constvars]),
                   tuple([_aval_key(v) for v in jaxpr.invars])]
    append = parts.append
    library = _library_primitive
    get = number.get
    n = len(number)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if not (vetted or library.get(prim) or _library_rules(prim)):
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


#: types of concrete host cotangents taken as they are (a Python scalar is weakly typed:
#: the generated code, which takes arrays, would compute with it in another dtype than
#: NumPy computes with the scalar itself, so those are interpreted)
HOST_TYPES = NUMPY_SCALARS | {np.ndarray, Array}


def compiled_backward(jaxpr: Jaxpr, consts: Sequence, cts: Sequence) -> list | None:
    """``backward_pass`` of a linearization (every argument undefined) run as compiled
    code when its structure was seen before; None when it is not (yet) compiled, or the
    values are not concrete, or the structure cannot be compiled: interpret it then."""
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
        if ct is None or t is Zero:
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
    entry = sighted(_backward_cache, _backward_lock, BACKWARD_CACHE_SIZE, key,
                    lambda: _compile_backward(jaxpr, consts, cts, live, library))
    if entry is None:
        return None
    compiled, positions = entry
    values = compiled.fn(*(args if host else backend.coerce(library.xp, *args)))
    invars = jaxpr.invars
    out: list = [None] * len(invars)
    top = len(core.trace_stack()) == 1  # outside transforms results are handed out as such
    for i, value in zip(positions, values):
        out[i] = core.user_result(value) if top else value
    for i, v in enumerate(invars):
        if out[i] is None:
            out[i] = Zero(core.tangent_aval(v.aval))
    return out


_NUMPY = backend.library_of()


def sighted(cache: collections.OrderedDict, lock, size: int, key, compile: Callable):
    """Count a sighting of ``key`` in ``cache`` (an LRU of at most ``size`` keys): its
    compiled entry, made by ``compile()`` on the ``COMPILE_AFTER``-th sighting; None before
    that, or when compiling failed (``FAILED``: anything not traceable is interpreted)."""
    with lock:
        entry = cache.get(key, 0)
        if type(entry) is int:
            entry += 1
            cache[key] = entry
            if len(cache) > size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
    if type(entry) is int:
        if entry < COMPILE_AFTER:
            return None
        try:
            entry = compile()
        except Exception:  # noqa: BLE001
            entry = FAILED
        with lock:
            if key in cache:
                cache[key] = entry
    return None if entry is FAILED else entry


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
        positions[:] = [i for i, o in enumerate(outs) if o is not None and type(o) is not Zero]
        return [outs[i] for i in positions]

    avals = [get_aval(c) for c in consts] + [get_aval(cts[i]) for i in live]
    closed, _ = partial_eval.trace_to_jaxpr(transposed, avals)
    return codegen.compile_jaxpr(closed, library, "backward"), positions
