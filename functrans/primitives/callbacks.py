"""Calls back into Python at run time: ``pure_callback`` and the debugging callback behind
``functrans.debug.print`` and ``functrans.debug.callback``.

Two primitives, each with every rule:

* ``pure_callback`` (results of declared types, computed by a Python function of the
  operands' values): evaluation calls the function; abstract evaluation gives the declared
  types; under ``vmap`` the ``vmap_method`` says how (a loop over the batch, or one call with
  the batch as a leading axis); differentiation is refused, as in JAX (give the function a
  ``custom_jvp`` or ``custom_vjp`` rule instead).  The code ``jit`` writes calls the impl,
  hence the function, on each run.
* ``io_callback`` (results of declared types, computed by a Python function called for
  its effect as well): as ``pure_callback``, but ``effectful`` (below): no call is skipped
  or merged with another; under ``vmap`` it is called once per batch member (an
  ``ordered`` one refuses, as in JAX); differentiation is refused.
* ``debug_callback`` (a function called for its effect, printing): evaluation calls it; its
  JVP rule calls it on the primal values only; under ``vmap`` it is called once per batch
  member, in order, as JAX does.

**Effects.**  ``debug_callback_p`` is ``effectful`` (``core.Primitive``): every pass that
drops or merges equations keeps it, and the equations of control flow, ``jit`` calls and
custom rules whose jaxprs contain it, so it runs inside loop bodies and branches, on every
iteration, and each time compiled code runs.  It also returns a *token* (a 0-d array of
``token_dtype``): ``jit`` traces its function inside ``collecting_effects()`` and returns
the tokens collected there as extra outputs of its jaxpr (then drops them from what the
caller gets), and ``keep_effects`` hands the tokens that a nested ``jit`` call returns to
the enclosing trace; under ``vmap`` each member's call reads the previous call's token,
which fixes their order.  ``make_jaxpr`` shows the equation; ``eval_shape`` runs nothing.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from functrans import array_types, backend, core
from functrans.core import (Primitive, ShapedArray, Tracer, abstract_eval_rules, get_aval,
                            impl_rules)
from functrans.interpreters import ad, batching
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.primitives.shape import broadcast, expand_dims, moveaxis, reshape, shape_of
from functrans.primitives.slicing import concatenate, slice as slice_

__all__ = ["pure_callback_p", "debug_callback_p", "io_callback_p", "pure_callback",
           "debug_callback", "io_callback",
           "token_dtype", "collecting_effects", "keep_effects",
           "VMAP_METHODS"]

#: the dtype of effect tokens: a 0-byte structured type, distinct from every array dtype
token_dtype = np.dtype([("effect", np.void, 0)])
_TOKEN_AVAL = ShapedArray((), token_dtype)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class _Callback:
    """A user function behind a callback primitive, printed by name in jaxprs and compared
    by identity."""

    __slots__ = ("fun", "name")

    def __init__(self, fun: Callable, name: str):
        self.fun, self.name = fun, name

    def __call__(self, *args):
        return self.fun(*args)

    def __repr__(self):
        return self.name


def _member(x, i: int):
    """Batch member ``i`` of ``x`` (batch axis first)."""
    shape = shape_of(x)
    return reshape(slice_(x, (i,) + (0,) * (len(shape) - 1), (i + 1,) + tuple(shape[1:])),
                   tuple(shape[1:]))


def _stack(members: list, aval: ShapedArray, like):
    """The arrays ``members`` (each of type ``aval``) stacked along a new leading axis."""
    if not members:
        return backend.zeros((0,) + aval.shape, aval.dtype, like=like)
    return concatenate([expand_dims(m, (0,)) for m in members], 0)


# ------------------------------------------------------------------------------------------
# Effects: tokens that keep a debug_callback equation alive in jaxprs
# ------------------------------------------------------------------------------------------


class _Sink:
    """The effect tokens collected for a staging trace (``jit``'s)."""
    __slots__ = ("trace", "tokens")

    def __init__(self, trace, tokens: list):
        self.trace, self.tokens = trace, tokens


_local = threading.local()


def _sinks() -> list:
    sinks = getattr(_local, "sinks", None)
    if sinks is None:
        sinks = _local.sinks = []
    return sinks


@contextmanager
def collecting_effects() -> Iterator[list]:
    """Inside a staging trace's function (``jit``'s): collect the effect tokens made for the
    trace running it; the list given is filled as the function runs, and its tokens must
    become outputs of the traced program."""
    sink = _Sink(core.dynamic_trace(), [])
    sinks = _sinks()
    sinks.append(sink)
    try:
        yield sink.tokens  # type: ignore[misc, unused-ignore]  # a list here (mypy versions differ)
    finally:
        sinks.remove(sink)


def keep_effects(values: Sequence) -> None:
    """Hand the effect tokens among ``values`` (tracers of ``token_dtype``) to the
    collector of their trace, if one collects for it."""
    sinks = _sinks()
    if not sinks:
        return
    for v in values:
        if isinstance(v, Tracer) and v.aval.dtype == token_dtype:
            for sink in reversed(sinks):
                if sink.trace is v._trace:
                    if not any(t is v for t in sink.tokens):
                        sink.tokens.append(v)
                    break


# ------------------------------------------------------------------------------------------
# debug_callback
# ------------------------------------------------------------------------------------------

# The library's: its rules are pure, and its impl calls the callback on every run, also
# in compiled code (a tape evaluates it as a zero-derivative operation on every call).
debug_callback_p = Primitive("debug_callback", multiple_results=True, origin="library")
debug_callback_p.effectful = True


def _debug_callback_impl(*args, callback):
    values = [a for a in args if getattr(a, "dtype", None) != token_dtype]  # see the batcher
    callback(*array_types.user_result(values))
    return [np.zeros((), token_dtype)]


def _emit(args: Sequence, callback: _Callback) -> Any:
    token, = debug_callback_p.bind(*args, callback=callback)
    keep_effects([token])
    return token


def _debug_callback_jvp(primals, tangents, *, callback):
    token = _emit(primals, callback)  # the primal values only, as JAX prints under grad
    return [token], [Zero(core.tangent_aval(_TOKEN_AVAL))]


# Like ad.defjvp_zero's rules: the gradient tape evaluates the call where it is met (as
# linearize does) instead of recording it, so it runs once per call.
_debug_callback_jvp.zero_derivative = True  # type: ignore[attr-defined]

def _debug_callback_batch(vals, dims, *, callback):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    token = None
    for i in range(size):  # one call per batch member, in order
        # Each call reads the previous call's token: the last token, the one returned,
        # depends on every call, so a jaxpr keeps them all (in this order).
        previous = [] if token is None else [token]
        token = _emit(previous + [v if d is not_mapped else _member(v, i)
                                  for v, d in zip(vals, dims)], callback)
    if token is None:
        token = np.zeros((), token_dtype)
    return [token], [not_mapped]


impl_rules[debug_callback_p] = _debug_callback_impl
abstract_eval_rules[debug_callback_p] = lambda *avals, callback: [_TOKEN_AVAL]
ad.jvp_rules[debug_callback_p] = _debug_callback_jvp
batching.batching_rules[debug_callback_p] = _debug_callback_batch


def _is_traced_value(x) -> bool:
    """Whether ``x`` goes through the primitive (arrays and tracers) rather than being
    kept as a constant of the callback (Python values, strings, None)."""
    return isinstance(x, (Tracer, np.ndarray, np.generic)) or backend.is_device_array(x)


def debug_callback(callback: Callable[..., None], args: Sequence, static: Sequence,
                   is_traced: Sequence[bool], name: str) -> None:
    """Call ``callback(*values)`` at run time, where ``values`` merges the traced values
    ``args`` (where ``is_traced``) with the constants ``static``, under every transform.
    The user-facing wrappers (``functrans.debug``) split pytrees with ``split_values``."""
    def run(*arrays):
        it_arrays, it_static = iter(arrays), iter(static)
        callback(*[next(it_arrays) if t else next(it_static) for t in is_traced])

    _emit(list(args), _Callback(run, name))


def split_values(leaves: Sequence) -> tuple[list, list, list]:
    """``(traced values, constants, is_traced flags)`` of pytree leaves."""
    flags = [_is_traced_value(x) for x in leaves]
    return ([x for x, t in zip(leaves, flags) if t], [x for x, t in zip(leaves, flags) if not t],
            flags)


# ------------------------------------------------------------------------------------------
# pure_callback
# ------------------------------------------------------------------------------------------

# A user's function with no derivative: reverse mode refuses it before any work.
pure_callback_p = Primitive("pure_callback", multiple_results=True, origin="user")


def _call_checked(kind: str, args, callback, result_avals) -> list:
    """``callback(*args)``, its results checked against the declared ``result_avals`` and
    placed where the arguments are."""
    results = callback(*array_types.user_result(list(args)))
    if len(results) != len(result_avals):
        raise TypeError(f"{kind}: the callback returned {len(results)} arrays, but "
                        f"result_shape_dtypes declares {len(result_avals)}")
    xp = backend.array_module(*args)
    out = []
    for i, (r, aval) in enumerate(zip(results, result_avals)):
        r = xp.asarray(r)  # the callback may compute on the host; results go back
        if tuple(r.shape) != aval.shape or r.dtype != aval.dtype:
            raise TypeError(f"{kind}: result {i} of the callback has shape "
                            f"{tuple(r.shape)} and dtype {r.dtype}, but result_shape_dtypes "
                            f"declares shape {aval.shape} and dtype {aval.dtype}")
        out.append(r)
    return out


def _pure_callback_impl(*args, callback, result_avals, vmap_method):
    return _call_checked("pure_callback", args, callback, result_avals)


def _pure_callback_jvp(primals, tangents, **params):
    if any(type(t) is not Zero for t in tangents):
        raise ValueError("pure_callback does not support differentiation (JVP, grad, vjp): "
                         "functrans cannot see inside the Python function it calls. Give "
                         "the function a rule with functrans.custom_jvp or custom_vjp, "
                         "or stop the gradient of its inputs (lax.stop_gradient)")
    outs = pure_callback_p.bind(*primals, **params)
    return outs, [Zero.from_value(o) for o in outs]


def _pure_callback_batch(vals, dims, *, callback, result_avals, vmap_method):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    batched_avals = tuple(a.update(shape=(size,) + a.shape) for a in result_avals)
    params = dict(callback=callback, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        per_member = [pure_callback_p.bind(*[v if d is not_mapped else _member(v, i)
                                             for v, d in zip(vals, dims)],
                                           result_avals=result_avals, **params)
                      for i in range(size)]
        like = next(v for v, d in zip(vals, dims) if d is not not_mapped)
        outs = [_stack([m[k] for m in per_member], aval, like)
                for k, aval in enumerate(result_avals)]
    elif vmap_method in ("expand_dims", "broadcast_all"):
        lead = size if vmap_method == "broadcast_all" else 1
        vals = [broadcast(v, (lead,)) if d is not_mapped else v for v, d in zip(vals, dims)]
        outs = pure_callback_p.bind(*vals, result_avals=batched_avals, **params)
    elif vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*vals, result_avals=batched_avals, **params)
    else:
        raise NotImplementedError(
            "vmap of pure_callback needs a vmap_method: 'sequential' or "
            "'sequential_unrolled' (one call per batch member), 'expand_dims' (one call, "
            "unbatched arguments with a leading axis of size 1), 'broadcast_all' (one call, "
            "every argument with the batch as leading axis) or 'legacy_vectorized'; got "
            f"vmap_method={vmap_method!r}")
    return list(outs), [0] * len(outs)


impl_rules[pure_callback_p] = _pure_callback_impl
abstract_eval_rules[pure_callback_p] = lambda *avals, callback, result_avals, vmap_method: list(
    result_avals)
ad.jvp_rules[pure_callback_p] = _pure_callback_jvp
batching.batching_rules[pure_callback_p] = _pure_callback_batch


def pure_callback(callback: Callable, result_avals: Sequence[ShapedArray], args: Sequence,
                  vmap_method: str | None, name: str) -> list:
    """Bind ``pure_callback_p``: ``callback(*args)`` (flat lists in and out) gives arrays
    of ``result_avals``.  The user-facing ``functrans.pure_callback`` handles pytrees."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method must be one of {list(VMAP_METHODS)}, "
                         f"got {vmap_method!r}")
    return pure_callback_p.bind(*args, callback=_Callback(callback, name),
                                result_avals=tuple(result_avals), vmap_method=vmap_method)


# ------------------------------------------------------------------------------------------
# io_callback
# ------------------------------------------------------------------------------------------

# A user's function called for its effect: kept by every pass, never differentiated.  The
# equation holds its results, so it needs no token: ``effectful`` keeps it alive in jaxprs.
io_callback_p = Primitive("io_callback", multiple_results=True, origin="user")
io_callback_p.effectful = True


def _io_callback_impl(*args, callback, result_avals, ordered):
    return _call_checked("io_callback", args, callback, result_avals)


def _io_callback_jvp(primals, tangents, **params):
    if any(type(t) is not Zero for t in tangents):
        raise ValueError("io_callback does not support differentiation (JVP, grad, vjp), "
                         "as in JAX: functrans cannot see inside the Python function it calls. "
                         "Stop the gradient of its inputs (lax.stop_gradient), or wrap the "
                         "call in a function with a custom_jvp or custom_vjp rule")
    outs = io_callback_p.bind(*primals, **params)
    return outs, [Zero.from_value(o) for o in outs]


def _io_callback_batch(vals, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("vmap of an ordered io_callback is not supported (as in JAX): the "
                         "order of the batch members' calls would not be a program order. "
                         "Pass ordered=False, or loop over the batch (lax.map)")
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    vals = [v if d is not_mapped else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    per_member = [io_callback_p.bind(*[v if d is not_mapped else _member(v, i)
                                       for v, d in zip(vals, dims)],
                                     callback=callback, result_avals=result_avals,
                                     ordered=ordered)
                  for i in range(size)]  # one call per batch member, in order
    like = next(v for v, d in zip(vals, dims) if d is not not_mapped)
    outs = [_stack([m[k] for m in per_member], aval, like)
            for k, aval in enumerate(result_avals)]
    return outs, [0] * len(outs)


impl_rules[io_callback_p] = _io_callback_impl
abstract_eval_rules[io_callback_p] = lambda *avals, callback, result_avals, ordered: list(
    result_avals)
ad.jvp_rules[io_callback_p] = _io_callback_jvp
batching.batching_rules[io_callback_p] = _io_callback_batch


def io_callback(callback: Callable, result_avals: Sequence[ShapedArray], args: Sequence,
                ordered: bool, name: str) -> list:
    """Bind ``io_callback_p``: ``callback(*args)`` (flat lists in and out) gives arrays of
    ``result_avals``.  The user-facing ``functrans.experimental.io_callback`` handles
    pytrees."""
    return io_callback_p.bind(*args, callback=_Callback(callback, name),
                              result_avals=tuple(result_avals), ordered=bool(ordered))
