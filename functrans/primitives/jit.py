"""``jit``: trace a function once per signature and run it as generated straight-line code.

``jit(f)(*args)`` traces ``f`` to a jaxpr on the first call with arguments of a given
signature (the pytree structure, the shapes, dtypes and weak types of the leaves, the
values of static arguments, and the array library), compiles the jaxpr to a Python
function (``interpreters/codegen.py``) and caches both; later calls with the same signature
run the compiled function directly.

Under a transform, ``jit`` binds the call primitive ``jit``, whose rules keep the body
compiled:

* JVP: the body's JVP jaxpr (``jaxpr_transforms.jvp_jaxpr``), split into a ``jit`` computing
  the outputs and residuals from the primals and a ``jit`` computing the output tangents
  from the residuals and the tangents (so that ``linearize`` stages only the second, and
  partial evaluation of a jaxpr containing the call keeps them apart);
* partial evaluation (``linearize``) of a call with known and unknown operands: a ``jit``
  of the part computable now, run at once, and a ``jit`` of the linear part, staged;
* transpose: the linear body's transpose (``transpose_jaxpr``) in one ``jit`` call;
* batching: the batched body (``batch_jaxpr``) in one ``jit`` call.

Each derived jaxpr is cached on the body's identity, so ``grad(jit(f))`` compiles its
forward and backward parts once.  ``make_jaxpr`` shows the call as a ``jit`` equation.
"""
from __future__ import annotations

import functools
import inspect
import logging
import threading
import weakref
from typing import Any, Callable, Generic, NamedTuple, Sequence, TypeVar, cast, overload

import numpy as np
from typing_extensions import ParamSpec

from functrans import backend, config, jaxpr_transforms
from functrans.array_types import Array, strip_weak, user_result, weak_result
from functrans.core import (ClosedJaxpr, Primitive, ShapedArray, Tracer, abstract_eval_rules,
                            eval_jaxpr, get_aval, impl_rules)
from functrans.interpreters import ad, batching, codegen, partial_eval, transpose
from functrans.interpreters.checking import locate_nonfinite_rules, nonfinite_kind
from functrans.interpreters.ad import Zero
from functrans.interpreters.batching import not_mapped
from functrans.interpreters.partial_eval import JaxprTracer
from functrans.interpreters.transpose import is_undefined_primal
from functrans.jaxpr_transforms import closure_convert, trace_function
from functrans.primitives.callbacks import collecting_effects, keep_effects
from functrans.primitives.shape import shape_of
from functrans.tree_util import (register_pytree_node, tree_flatten, tree_leaves,
                                 tree_unflatten)

__all__ = ["jit", "jit_p", "Jitted", "Lowered", "clear_all_caches"]

jit_p = Primitive("jit", multiple_results=True, origin="library")


# ------------------------------------------------------------------------------------------
# The call primitive and its rules
# ------------------------------------------------------------------------------------------


def _jit_impl(*args, jaxpr, name):
    library = backend.library_of(*args)
    compiled = codegen.compile_jaxpr(jaxpr, library, name)
    return list(compiled.fn(*backend.coerce(library.xp, *args)))


def _jit_jvp(primals, tangents, *, jaxpr, name):
    has_tangent = [type(t) is not Zero for t in tangents]
    if not any(has_tangent):
        outs = jit_p.bind(*primals, jaxpr=jaxpr, name=name)
        keep_effects(outs)
        return outs, [Zero.from_value(o) for o in outs]
    # Two calls, as linearize needs them: one computing the outputs and the residuals from
    # the primals, one computing the output tangents from the residuals and the tangents.
    # Inside a jaxpr (a scan body, say) partial evaluation then keeps them apart.
    jvp, out_has_tangent = jaxpr_transforms.jvp_jaxpr(jaxpr, has_tangent)
    n_out = len(jaxpr.out_avals)
    known, unknown, out_unknowns, _ = jaxpr_transforms.partial_eval_jaxpr(
        jvp, [False] * len(primals) + [True] * sum(has_tangent),
        [False] * n_out + [True] * sum(out_has_tangent))
    live = [t for t in tangents if type(t) is not Zero]
    if any(out_unknowns[:n_out]):
        # A primitive computing primals and tangents together (while_loop's JVP): one call,
        # which forward mode runs and reverse mode refuses (see _jit_linear_staging).
        jvp, consts = closure_convert(jvp)
        outs = jit_p.bind(*consts, *primals, *live, jaxpr=jvp, name=f"jvp({name})")
        keep_effects(outs)
        primal_outs, out_tangents = outs[:n_out], iter(outs[n_out:])
        return primal_outs, [next(out_tangents) if has else Zero.from_value(o)
                             for has, o in zip(out_has_tangent, primal_outs)]
    known, consts = closure_convert(known)
    outs = jit_p.bind(*consts, *primals, jaxpr=known, name=name)
    keep_effects(outs)
    primal_outs, residuals = outs[:n_out], outs[n_out:]
    out_tangents = iter(jit_p.bind(*residuals, *live, jaxpr=unknown, name=f"jvp({name})"))
    return primal_outs, [next(out_tangents) if has else Zero.from_value(o)
                         for has, o in zip(out_has_tangent, primal_outs)]


def _jit_linear_staging(trace, args, params):
    """Partial evaluation of a call: compute what the known operands give now, stage the
    rest (a linear jaxpr of the residuals and the unknown operands)."""
    jaxpr, name = params["jaxpr"], params["name"]
    if trace is None:  # an enclosing linear jaxpr is being checked: check the body too
        jaxpr_transforms.partial_eval_jaxpr(jaxpr, [True] * len(args), None, None, True)
        return None
    unknowns = [type(x) is JaxprTracer and x._trace is trace for x in args]
    if all(unknowns):
        return trace.stage(jit_p, args, params)
    known, unknown, out_unknowns, _ = jaxpr_transforms.partial_eval_jaxpr(
        jaxpr, unknowns, None, None, True)
    known, known_consts = closure_convert(known)
    known_outs = jit_p.bind(*known_consts, *[x for x, u in zip(args, unknowns) if not u],
                            jaxpr=known, name=name)
    keep_effects(known_outs)
    n_known = out_unknowns.count(False)
    residuals = known_outs[n_known:]
    staged = iter(trace.stage(jit_p, [*residuals, *[x for x, u in zip(args, unknowns) if u]],
                              dict(jaxpr=unknown, name=name)))
    known_iter = iter(known_outs[:n_known])
    return [next(staged) if u else next(known_iter) for u in out_unknowns]


def _jit_transpose(cts, *args, jaxpr, name):
    is_linear = [is_undefined_primal(x) for x in args]
    transposed, consts = closure_convert(jaxpr_transforms.transpose_jaxpr(jaxpr, is_linear))
    known = [x for x in args if not is_undefined_primal(x)]
    witness = ad.device_witness([*cts, *known])
    cts = [ad.zeros(ct.aval, witness) if type(ct) is Zero else ct for ct in cts]
    outs = iter(jit_p.bind(*consts, *known, *cts, jaxpr=transposed,
                           name=f"transpose({name})"))
    return [next(outs) if lin else None for lin in is_linear]


def _jit_batch(vals, dims, *, jaxpr, name):
    size = next(shape_of(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)
    batched, out_dims = jaxpr_transforms.batch_jaxpr(jaxpr, size, list(dims), False)
    batched, consts = closure_convert(batched)
    outs = jit_p.bind(*consts, *vals, jaxpr=batched, name=f"vmap({name})")
    keep_effects(outs)
    return outs, out_dims


def _jit_locate_nonfinite(args, *, jaxpr, name):
    # debug_nans found a NaN among the results: run the body op by op, each one checked
    eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


impl_rules[jit_p] = _jit_impl
abstract_eval_rules[jit_p] = lambda *avals, jaxpr, name: list(jaxpr.out_avals)
ad.jvp_rules[jit_p] = _jit_jvp
partial_eval.linear_staging_rules[jit_p] = _jit_linear_staging
transpose.deftranspose(jit_p, _jit_transpose)
batching.batching_rules[jit_p] = _jit_batch
codegen.deflowering(jit_p, inline=lambda jaxpr, name: jaxpr)
locate_nonfinite_rules[jit_p] = _jit_locate_nonfinite


# ------------------------------------------------------------------------------------------
# The user-facing function
# ------------------------------------------------------------------------------------------


class CacheInfo(NamedTuple):
    """What a jitted function's cache holds: ``size`` compiled signatures, after ``hits``
    calls that found theirs and ``misses`` that traced and compiled."""
    size: int
    hits: int
    misses: int


_ndarray = np.ndarray


def _single(out):
    """A jitted function's one result as functrans hands it out (an ``Array`` view of a
    NumPy result; ``user_result`` for the rest)."""
    if type(out) is _ndarray:
        return out.view(Array)
    return out if type(out) is Array else user_result(out)


class _Entry:
    __slots__ = ("fn", "consts", "call", "out_tree", "single", "jaxpr", "compiled", "weak")

    def __init__(self, compiled, consts, out_tree, jaxpr):
        self.compiled = compiled
        self.fn = compiled.fn
        self.consts = tuple(consts)
        # the compiled function with its constants bound: the fast path makes one call
        self.call = functools.partial(self.fn, *self.consts) if self.consts else self.fn
        self.out_tree = out_tree
        self.jaxpr = jaxpr
        # the positions of weakly typed results (handed out as WeakArray, as eagerly)
        self.weak = frozenset(i for i, v in enumerate(getattr(jaxpr, "jaxpr", jaxpr).outvars)
                              if v.aval.weak_type)
        # the function returns one array (and not a weakly typed one: unflatten marks it)
        self.single = out_tree.node_type is None and not self.weak

    def unflatten(self, outs):
        if self.weak:
            outs = [weak_result(o) if i in self.weak else o for i, o in enumerate(outs)]
        return _without_effects(tree_unflatten(self.out_tree, outs))


class Lowered:
    """A jitted function traced and compiled for one signature: ``as_text()`` is the
    generated Python source, ``jaxpr`` the traced program, ``compile()`` the callable."""

    def __init__(self, entry: _Entry, in_tree):
        self._entry = entry
        self._in_tree = in_tree

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._entry.jaxpr

    def as_text(self) -> str:
        return self._entry.compiled.source

    def compile_stats(self) -> dict:
        """What compiling this signature cost, when ``jit`` first compiled it (in this
        process): ``seconds`` writing the code (wall clock), ``kernel_seconds`` of them
        spent on fused loops, and how many loops came from the disk cache
        (``kernels_loaded``) or were compiled by numba (``kernels_compiled``).

        >>> import numpy as np, functrans as ft
        >>> stats = ft.jit(lambda x: x * 2.0).lower(np.ones(3)).compile_stats()
        >>> sorted(stats)
        ['kernel_seconds', 'kernels_compiled', 'kernels_loaded', 'seconds']
        """
        compiled = self._entry.compiled
        return {"seconds": compiled.compile_seconds, "kernel_seconds": compiled.kernel_seconds,
                "kernels_loaded": compiled.kernels_loaded,
                "kernels_compiled": compiled.kernels_compiled}

    def compile(self) -> Callable:
        entry = self._entry

        def compiled(*args, **kwargs):
            leaves, tree = tree_flatten((args, kwargs))
            if tree != self._in_tree:
                raise TypeError(f"compiled function called with arguments of structure "
                                f"{tree}, but it was compiled for {self._in_tree}")
            return entry.unflatten(entry.fn(*entry.consts, *leaves))
        return compiled


def _hashable_static(name: str, where: str, value):
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"{name}: static argument {where} has unhashable type "
                         f"{type(value).__name__}; static arguments key the cache, so they "
                         "must be hashable (use a tuple instead of a list, or pass arrays as "
                         "ordinary arguments)") from None
    return value


def _check_leaf(name: str, x) -> None:
    if isinstance(x, Tracer) or backend.is_array(x) or type(x) in (bool, int, float, complex):
        return
    if isinstance(x, np.generic):
        return
    raise TypeError(f"{name}: argument leaf {x!r} of type {type(x).__name__} is not an "
                    "array; pass NumPy or CuPy arrays, Python scalars, or pytrees of them, "
                    "and mark other arguments static (static_argnums / static_argnames)")


#: every jitted function alive, so that ``clear_all_caches`` reaches their caches
_all_jitted: weakref.WeakSet = weakref.WeakSet()


def clear_all_caches() -> None:
    """Forget the compiled signatures of every jitted function."""
    for jitted in list(_all_jitted):
        jitted.clear_cache()


P = ParamSpec("P")
R = TypeVar("R")


class Jitted(Generic[P, R]):
    """``fun`` compiled per argument signature; see ``jit``.  Typed as ``fun`` is: same
    parameters, same result."""

    def __init__(self, fun: Callable[P, R], static_argnums: tuple, static_argnames: tuple):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = static_argnums
        self._static_argnames = static_argnames
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._simple = not static_argnums and not static_argnames
        self._cache: dict = {}
        self._fast: dict = {}  # plain array arguments: (shape, dtype, ...) -> entry
        self._last: tuple = ((), None, None)  # one array's (shape, dtype, entry), last hit
        self._fast_trees: dict = {}  # pytrees of arrays: (in_tree, (shape, dtype, ...))
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        _all_jitted.add(self)

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __repr__(self):
        return f"<jitted function {self._name}>"

    # -- calling ---------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # The fast path, for NumPy arrays compiled before (one dict look-up keyed by the
        # shapes and dtypes; no typing.cast or helper calls: each costs a tenth of what
        # NumPy's own call of a one-operation function does).
        if self._simple and not kwargs and not config.jit_disabled:
            if len(args) == 1:  # the common case, without building a list
                a = args[0]
                t = type(a)
                if t is _ndarray or t is Array:
                    # the signature of the last call first (no hashing: a dtype is
                    # compared by identity, NumPy's builtin dtypes being singletons)
                    last = self._last
                    if a.dtype is last[1] and a.shape == last[0]:  # type: ignore
                        entry = last[2]
                    else:
                        entry = self._fast.get((a.shape, a.dtype))  # type: ignore
                        if entry is not None:
                            self._last = (a.shape, a.dtype, entry)  # type: ignore
                    if entry is not None:
                        self._hits += 1
                        if t is Array:  # NumPy's subclass handling would slow every op
                            a = a.view(_ndarray)  # type: ignore[attr-defined]
                        outs = entry.call(a)
                        if entry.single:
                            out = outs[0]
                            if type(out) is _ndarray:
                                return out.view(Array)  # type: ignore[return-value]
                            return _single(out)
                        return entry.unflatten(user_result(outs))
            else:
                signature: list = []
                plain = True
                for a in args:
                    t = type(a)
                    if t is not _ndarray:
                        if t is not Array:
                            break
                        plain = False
                    signature.append(a.shape)  # type: ignore[attr-defined]
                    signature.append(a.dtype)  # type: ignore[attr-defined]
                else:
                    entry = self._fast.get(tuple(signature))
                    if entry is not None:
                        self._hits += 1
                        operands: Any = args
                        if not plain:
                            operands = [a.view(_ndarray) for a in args]  # type: ignore
                        outs = entry.call(*operands)
                        return cast(R, _single(outs[0]) if entry.single
                                    else entry.unflatten(user_result(outs)))
        if config.jit_disabled:  # functrans.disable_jit(): run the function eagerly
            return self._fun(*args, **kwargs)
        return self._call(args, kwargs)

    def _checked_call(self, *args, **kwargs):
        # Jitted.__call__ while debug_nans or debug_infs is on: the compiled function's
        # results are checked, and one that holds a NaN (an infinity) its arguments did
        # not hold is found again by running the function op by op (each operation
        # checked by core's checking EvalTrace), as if jit were removed.
        out = _unchecked_call(self, *args, **kwargs)
        if config.jit_disabled:
            return out  # ran eagerly: each operation was checked
        nans, infs = config.debug_nans, config.debug_infs
        kind = nonfinite_kind(tree_leaves(out), nans, infs)
        if kind is None or nonfinite_kind(tree_leaves((args, kwargs)), kind == "nan",
                                          kind == "inf"):
            return out
        config.jit_disabled = True
        try:
            self._fun(*args, **kwargs)
        except FloatingPointError as error:
            raise FloatingPointError(f"{error}, in jit({self._name}) (found by running it "
                                     "operation by operation, as under disable_jit)"
                                     ) from None
        finally:
            config.jit_disabled = False
        switch = "debug_nans" if kind == "nan" else "debug_infs"
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in jit({self._name}); run operation by "
            "operation (as under disable_jit), it made none (the compiled code computed "
            f"differently). functrans.config.{switch} is on.")

    def _split(self, args: tuple, kwargs: dict):
        """(the dynamic arguments as a pytree, a function of them, the static key)."""
        name = f"jit({self._name})"
        nargs = len(args)
        static_nums = set()
        for i in self._static_argnums:
            if -nargs <= i < nargs:  # a static parameter left to its default is skipped
                static_nums.add(i % nargs)
        static_key = tuple((i, _hashable_static(name, f"{i}", args[i]))
                           for i in sorted(static_nums))
        static_kw = {k: _hashable_static(name, repr(k), v) for k, v in kwargs.items()
                     if k in self._static_argnames}
        static_key += tuple(sorted(static_kw.items()))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_kw}
        fun = self._fun

        def dynamic_fun(dyn_args, dyn_kwargs):
            it = iter(dyn_args)
            full = [a if i in static_nums else next(it) for i, a in enumerate(args)]
            return fun(*full, **dyn_kwargs, **static_kw)

        return (dyn_args, dyn_kwargs), dynamic_fun, static_key

    def _call(self, args: tuple, kwargs: dict):
        if self._simple:  # lists, tuples and dicts of NumPy arrays, compiled before
            leaves: list = []
            structure = _quick_structure((args, kwargs), leaves)
            entry = None if structure is None else self._fast_trees.get(
                (structure, _array_signature(leaves)))
            if entry is not None:
                self._hits += 1
                leaves = [x.view(np.ndarray) if type(x) is Array else x for x in leaves]
                outs = user_result(entry.fn(*entry.consts, *leaves))
                return outs[0] if entry.single else entry.unflatten(outs)
        dyn, dynamic_fun, static_key = self._split(args, kwargs)
        leaves, in_tree = tree_flatten(dyn)
        name = f"jit({self._name})"
        for x in leaves:
            _check_leaf(name, x)
        avals = [get_aval(x) for x in leaves]
        if any(isinstance(x, Tracer) for x in leaves):
            return self._bind(dynamic_fun, in_tree, avals, static_key, leaves)
        library = backend.library_of(*leaves)
        key = (in_tree, tuple(avals), static_key, library)
        entry = self._cache.get(key)
        if entry is None:
            if config.log_compiles:
                _log.warning("functrans.jit: compiling jit(%s) for arguments (%s)", self._name,
                             ", ".join(a.str_short() for a in avals))
            consts: Sequence[Any]  # a list from the trace, a tuple once on the device
            jaxpr, consts, out_tree = self._trace(dynamic_fun, in_tree, avals, static_key)
            if any(isinstance(c, Tracer) for c in consts):  # closes over a transform's value
                outs = jit_p.bind(*consts, *leaves, jaxpr=jaxpr, name=self._name)
                keep_effects(outs)
                return _without_effects(tree_unflatten(out_tree, outs))
            consts = _move_constants(library, consts)
            entry = _Entry(codegen.compile_jaxpr(jaxpr, library, self._name), consts,
                           out_tree, jaxpr)
            with self._lock:
                self._misses += 1
                self._cache[key] = entry
                signature = _array_signature(leaves)
                if self._simple and library is backend.library_of() and signature:
                    structure = _quick_structure((args, kwargs), [])
                    if structure is not None:
                        self._fast_trees[(structure, signature)] = entry
                    if in_tree == tree_flatten((tuple(leaves), {}))[1]:
                        self._fast[signature] = entry
        else:
            self._hits += 1
        leaves = [x.view(np.ndarray) if type(x) is Array else strip_weak(x) for x in leaves]
        outs = user_result(entry.fn(*entry.consts, *leaves))
        return outs[0] if entry.single else entry.unflatten(outs)

    def _trace(self, dynamic_fun, in_tree, avals, static_key):
        """The function's jaxpr for these argument types (cached by trace_function, keyed
        by the user's function): ``(jaxpr, consts, out_tree)``."""
        return trace_function(_with_effects(dynamic_fun), in_tree, avals, "jit",
                              key=self._fun, static=static_key)

    def _bind(self, dynamic_fun, in_tree, avals, static_key, leaves):
        jaxpr, consts, out_tree = self._trace(dynamic_fun, in_tree, avals, static_key)
        outs = jit_p.bind(*consts, *leaves, jaxpr=jaxpr, name=self._name)
        keep_effects(outs)
        return _without_effects(tree_unflatten(out_tree, outs))

    # -- inspection ------------------------------------------------------------------------

    def lower(self, *args, **kwargs) -> Lowered:
        """Trace and compile for these arguments (abstract values are fine:
        ``ShapeDtypeStruct``); ``.as_text()`` shows the generated code."""
        dyn, dynamic_fun, static_key = self._split(args, kwargs)
        leaves, in_tree = tree_flatten(dyn)
        avals = [get_aval(x) if not hasattr(x, "shape") or backend.is_array(x)
                 or isinstance(x, Tracer) else _aval_of_struct(x) for x in leaves]
        jaxpr, consts, out_tree = self._trace(dynamic_fun, in_tree, avals, static_key)
        library = backend.library_of(*leaves)
        entry = _Entry(codegen.compile_jaxpr(jaxpr, library, self._name), consts, out_tree,
                       jaxpr)
        return Lowered(entry, in_tree)

    def cache_info(self) -> CacheInfo:
        """How many signatures are compiled, and the calls that hit or missed."""
        return CacheInfo(len(self._cache), self._hits, self._misses)

    def _cache_size(self) -> int:  # JAX's name, used in tests written for JAX
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget every compiled signature (the next call traces again)."""
        with self._lock:
            self._cache.clear()
            self._fast.clear()
            self._last = ((), None, None)
            self._fast_trees.clear()
            self._hits = self._misses = 0


_log = logging.getLogger("functrans")
_unchecked_call = Jitted.__call__


def _install_checks() -> None:
    """Check ``jit``'s results while ``debug_nans`` or ``debug_infs`` is on (the plain
    ``__call__`` otherwise: its fast path gains nothing)."""
    checking = config.debug_nans or config.debug_infs
    Jitted.__call__ = (  # type: ignore[method-assign]
        Jitted._checked_call if checking else _unchecked_call)


config.on_change("debug_nans", _install_checks)
config.on_change("debug_infs", _install_checks)


class _WithEffects:
    """A traced function's result with the effect tokens its trace collected (the callbacks
    of ``functrans.debug``), which become extra outputs of the jaxpr so that the equations
    making them are kept; the caller gets ``out`` alone."""

    __slots__ = ("out", "tokens")

    def __init__(self, out, tokens):
        self.out, self.tokens = out, tokens


register_pytree_node(_WithEffects, lambda w: ((w.out, list(w.tokens)), None),
                     lambda _, children: _WithEffects(*children))


def _with_effects(fun: Callable) -> Callable:
    """``fun``, returning ``_WithEffects`` when effects were collected while it ran."""
    def traced(*args, **kwargs):
        with collecting_effects() as tokens:
            out = fun(*args, **kwargs)
        return _WithEffects(out, tokens) if tokens else out
    return traced


def _without_effects(result):
    return result.out if type(result) is _WithEffects else result


def _quick_structure(tree, leaves: list, depth: int = 0):
    """A hashable key of the structure of ``tree`` if it is made of tuples, lists and dicts
    (string keys) of NumPy arrays only, appending the arrays to ``leaves`` in
    ``tree_flatten``'s order; else None.  Three times faster than ``tree_flatten`` for the
    common argument pytrees, which is what the dispatch of a call costs."""
    t = type(tree)
    if t is np.ndarray or t is Array:
        leaves.append(tree)
        return 0
    if depth > 8:
        return None
    if t is tuple or t is list:
        keys = [_quick_structure(x, leaves, depth + 1) for x in tree]
        return None if None in keys else (t, *keys)
    if t is dict:
        names = sorted(tree) if all(type(k) is str for k in tree) else None
        if names is None:
            return None
        keys = [_quick_structure(tree[k], leaves, depth + 1) for k in names]
        return None if None in keys else (dict, *names, *keys)
    return None


def _array_signature(leaves) -> tuple | None:
    """``(shape, dtype, shape, dtype, ...)`` of leaves that are all NumPy arrays (``Array``
    included), else None: the key of the fast paths."""
    signature: list = []
    for x in leaves:
        t = type(x)
        if t is not np.ndarray and t is not Array:
            return None
        signature.append(x.shape)
        signature.append(x.dtype)
    return tuple(signature)


def _move_constants(library, consts) -> tuple:
    """The trace's constants on the device of the arguments: host arrays the function
    closes over are copied there once, when the signature is compiled (the one transfer
    jit makes; without jit, each operation on them would copy them again)."""
    consts = [c.view(np.ndarray) if type(c) is Array else strip_weak(c) for c in consts]
    return backend.coerce(library.xp, *consts)


def _aval_of_struct(x) -> ShapedArray:
    return ShapedArray(tuple(x.shape), np.dtype(x.dtype), getattr(x, "weak_type", False))


def _argnames_to_nums(fun: Callable, static_argnums: tuple, static_argnames: tuple):
    """JAX's convention: a static parameter named by position is static by name too, and
    the other way round."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return static_argnums, static_argnames
    positional = [p.name for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums = set(static_argnums)
    names = set(static_argnames)
    for i in static_argnums:
        if -len(positional) <= i < len(positional):
            names.add(positional[i])
    for n in static_argnames:
        if n in positional:
            nums.add(positional.index(n))
    return tuple(sorted(nums)), tuple(sorted(names))


@overload
def jit(fun: Callable[P, R], *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, donate_argnums: Any = None,
        donate_argnames: Any = None, keep_unused: bool = False,
        inline: bool = False) -> Jitted[P, R]: ...
@overload
def jit(fun: None = None, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, donate_argnums: Any = None,
        donate_argnames: Any = None, keep_unused: bool = False, inline: bool = False
        ) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...
def jit(fun: Callable[P, R] | None = None, *,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, donate_argnums: Any = None,
        donate_argnames: Any = None, keep_unused: bool = False, inline: bool = False) -> Any:
    """Compile ``fun``: trace it once per argument signature to a jaxpr and run the jaxpr as
    generated straight-line NumPy/CuPy code.

    >>> import numpy as np, functrans as ft, functrans.numpy as fnp
    >>> f = ft.jit(lambda x: fnp.sum(fnp.tanh(x) ** 2))
    >>> round(float(f(np.array([0.0, 1.0]))), 6)
    0.580026
    >>> ft.grad(f)(np.array([0.0, 1.0]))
    array([0.        , 0.63970001])

    Static arguments (``static_argnums``, ``static_argnames``) are Python values the trace
    depends on (they must be hashable); every other argument is a pytree of arrays. Also
    usable as a decorator, with or without arguments (``@jit``, ``@jit(static_argnums=1)``).
    ``donate_argnums``, ``donate_argnames``, ``inline`` and ``keep_unused`` are accepted
    for compatibility with JAX: functrans never reuses an argument's memory, always inlines
    nested jit calls into the generated code, and drops unused arguments.

    ``f.lower(*args).as_text()`` is the generated source; ``f.cache_info()`` counts the
    compiled signatures; ``f.clear_cache()`` empties the cache.  See docs/jit.md for what is
    traced when (closed-over values are read once, at trace time).
    """
    static_argnums = () if static_argnums is None else static_argnums
    static_argnames = () if static_argnames is None else static_argnames
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if fun is None:
        return functools.partial(jit, static_argnums=nums, static_argnames=names,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 inline=inline, keep_unused=keep_unused)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {fun!r} of type {type(fun).__name__}")
    nums, names = _argnames_to_nums(fun, nums, names)
    return Jitted(fun, nums, names)
